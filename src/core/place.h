/*
 * place.h — placement at init (topology/placement.h decides, place.c
 * applies).
 */
#ifndef PROUST_CORE_PLACE_H
#define PROUST_CORE_PLACE_H

#include <stddef.h>

struct proust_session;

/* ---- placement (place.c) --------------------------------------------------- */
/* Decide and apply (process binding) after the rails opened, before they
 * connect. PROUST_ERR_INVALID for a bad PROUST_PLACEMENT* setting. */
int proust__place_init(struct proust_session *s);
void proust__place_destroy(struct proust_session *s);
/* The rails' place_memory upcall. */
void proust__place_memory(void *engine, int rail_index, void *addr, size_t len);

#endif
