/*
 * rma.h — one-sided access (rma.c): what the session needs of it.
 */
#ifndef PROUST_CORE_RMA_H
#define PROUST_CORE_RMA_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/driver.h"
#include "proust.h"

/* A one-sided transfer of proust_rma_write/read is over (the rails'
 * upcall rma_done; ctx: the request, or a split of it). */
void proust__on_rma_done(void *engine, void *ctx, int status);
/* The session proust_rma_counts reads the rails of (NULL at finalize). */
void proust__rma_session(proust_session_t *s);

/* Does the rail offer one-sided access (CAN_RMA and its ops)? */
bool proust__rail_can_rma(const proust__rail_t *rail);
/* The part of `key` for `rail`, or NULL (a key made elsewhere, or garbage:
 * sections are checked against the bytes given). */
const uint8_t *proust__rma_section(const proust__rail_t *rail, const uint8_t *key,
                                  size_t key_len, size_t *part_len);

/* An operation larger than the rail takes at once goes in pieces: the
 * request completes with the last, with the first error. The rail's ctx
 * is the split, tagged by its low bit (proust__on_rma_done). */
/* The low bits of an rma_done ctx: a split (below), an engine get
 * (recv_rdv.c), else a user request. */
#define PROUST__RMA_CTX_SPLIT 1u
#define PROUST__RMA_CTX_GET 2u
struct rma_split {
    proust_request_t *req;
    _Atomic size_t left; /* pieces not answered, +1 while posting */
    _Atomic int status;
};
void proust__rma_split_answer(struct rma_split *sp, int status);

/* The end of a one-sided call that made `req` and handed it to a rail
 * (rc: PROUST__INPROGRESS, PROUST_OK for nothing to do, or an error, the
 * request then freed): what the call returns, *out set unless it fails. */
int proust__rma_posted(proust_request_t *req, int rc, proust_request_t **out);

/* proust_rma_atomic calls started (rma_atomic.c), for proust_rma_counts. */
uint64_t proust__rma_atomics_started(void);

#endif
