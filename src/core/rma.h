/*
 * rma.h — one-sided access (rma.c): what the session needs of it.
 */
#ifndef PROUST_CORE_RMA_H
#define PROUST_CORE_RMA_H

#include "proust.h"

/* A one-sided transfer of proust_rma_write/read is over (the rails'
 * upcall rma_done; ctx: the request, or a split of it). */
void proust__on_rma_done(void *engine, void *ctx, int status);
/* The session proust_rma_counts reads the rails of (NULL at finalize). */
void proust__rma_session(proust_session_t *s);

#endif
