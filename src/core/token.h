/*
 * token.h — tokens name a request (and a segment) across the wire, with a
 * generation, so a stale or forged token is refused (token.c).
 */
#ifndef PROUST_CORE_TOKEN_H
#define PROUST_CORE_TOKEN_H

#include <stdint.h>

struct proust_session;
struct proust_request;

/* ---- tokens: name a request (and segment) across the wire ---------------- */
int proust__tokens_init(struct proust_session *s);
uint64_t proust__token_alloc(struct proust_session *s, struct proust_request *req, uint16_t seg);
/* The request a token names, or NULL if stale/unknown (never crashes). */
struct proust_request *proust__token_lookup(struct proust_session *s, uint64_t token,
                                            uint16_t *seg);
void proust__token_release(struct proust_session *s, uint64_t token);
void proust__tokens_destroy(struct proust_session *s);

#endif
