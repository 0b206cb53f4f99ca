/*
 * rma_atomic.c — atomic operations on a peer's registered memory for the
 * native API (proust_rma_atomic) and MPI's accumulates across hosts.
 *
 * Atomics are atomic only with each other when one agent applies them all:
 * the target's NIC (or its provider). So every atomic to a peer goes
 * through one rail, the first of PROUST_RAILS that does atomics and
 * reaches the peer (itself included), even where another rail carries the
 * peer's messages (shm on the same host, self): a process on the target's
 * host and a process across the network then update its memory through
 * the same NIC.
 */
#include <stdlib.h>
#include <string.h>

#include "core/gate.h"
#include "core/request.h"
#include "core/rma.h"
#include "core/session.h"
#include "proust.h"

static _Atomic uint64_t n_atomics;

uint64_t proust__rma_atomics_started(void)
{
    return atomic_load_explicit(&n_atomics, memory_order_relaxed);
}

/* The rail atomics to `peer` go through (see the top), or NULL. It must
 * carry some peer's traffic: a rail that carries none is never polled
 * (one host, shm between all), and its completions would never be read. */
static proust__rail_t *atomic_rail(proust_session_t *s, int peer)
{
    for (int i = 0; i < s->nrails; i++) {
        proust__rail_t *r = &s->rails[i].rail;
        if ((r->caps.flags & PROUST__RAIL_CAN_ATOMIC) && r->ops->atomic && r->ops->atomic_max &&
            r->ops->reaches(r, peer))
            return s->rails[i].ngates > 0 ? r : NULL;
    }
    return NULL;
}

static bool valid_op(int op, int type)
{
    return op >= 0 && op < PROUST_ATOMIC_OPS && type >= 0 && type < PROUST_ATOMIC_TYPES;
}

int proust_rma_atomic_max(proust_session_t *s, int peer, int op, int type, int fetching)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    if (!valid_op(op, type))
        return PROUST_ERR_INVALID;
    proust__rail_t *rail = atomic_rail(s, peer);
    if (!rail)
        return 0;
    size_t n = rail->ops->atomic_max(rail, op, type, fetching != 0);
    return n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
}

int proust_rma_atomic_ordered(proust_session_t *s, int peer)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    proust__rail_t *rail = atomic_rail(s, peer);
    return rail && (rail->caps.flags & PROUST__RAIL_ATOMIC_ORDERED) ? 1 : 0;
}

/* Pieces of at most `max` elements, answered through one split. */
static int split(proust__rail_t *rail, int peer, int op, int type, const char *operand,
                 const char *compare, char *result, size_t count, size_t max,
                 const uint8_t *part, size_t part_len, uint64_t offset, proust_request_t *req)
{
    struct rma_split *sp = malloc(sizeof *sp);
    if (!sp)
        return PROUST_ERR_NOMEM;
    sp->req = req;
    atomic_init(&sp->left, 1);
    atomic_init(&sp->status, PROUST_OK);
    void *ctx = (void *)((uintptr_t)sp | PROUST__RMA_CTX_SPLIT);
    size_t esz = proust__atomic_type_bytes(type);
    int rc = PROUST_OK;
    for (size_t at = 0; at < count && rc == PROUST_OK; at += max) {
        size_t n = count - at < max ? count - at : max;
        size_t b = at * esz;
        atomic_fetch_add(&sp->left, 1);
        rc = rail->ops->atomic(rail, peer, op, type, operand ? operand + b : NULL,
                               compare ? compare + b : NULL, result ? result + b : NULL, n,
                               part, part_len, offset + b, ctx);
        if (rc == PROUST__INPROGRESS)
            rc = PROUST_OK;
        else
            proust__rma_split_answer(sp, rc); /* refused: no upcall comes for it */
    }
    proust__rma_split_answer(sp, rc);
    return PROUST__INPROGRESS;
}

int proust_rma_atomic(proust_session_t *s, int peer, int op, int type, const void *operand,
                      const void *compare, void *result, size_t count, const void *key,
                      size_t key_len, uint64_t offset, proust_request_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!out || !valid_op(op, type) || !key || key_len > PROUST_MEM_KEY_MAX)
        return PROUST_ERR_INVALID;
    if (count && ((op != PROUST_ATOMIC_READ && !operand) ||
                  ((op == PROUST_ATOMIC_READ || op == PROUST_ATOMIC_CSWAP) && !result) ||
                  (op == PROUST_ATOMIC_CSWAP && !compare)))
        return PROUST_ERR_INVALID;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    int failed = atomic_load_explicit(&s->gates[peer].failed, memory_order_acquire);
    if (failed)
        return failed;
    proust__rail_t *rail = atomic_rail(s, peer);
    size_t max = rail ? rail->ops->atomic_max(rail, op, type, result != NULL) : 0;
    if (!max)
        return PROUST_ERR_NOT_SUPPORTED;
    size_t part_len;
    const uint8_t *part = proust__rma_section(rail, key, key_len, &part_len);
    if (!part)
        return PROUST_ERR_INVALID;
    proust_request_t *req;
    int rc = proust_request_create(s, NULL, NULL, &req);
    if (rc != PROUST_OK)
        return rc;
    req->peer = peer;
    if (count == 0)
        rc = PROUST_OK;
    else if (count > max)
        rc = split(rail, peer, op, type, operand, compare, result, count, max, part, part_len,
                   offset, req);
    else
        rc = rail->ops->atomic(rail, peer, op, type, operand, compare, result, count, part,
                               part_len, offset, req);
    if (rc == PROUST__INPROGRESS || rc == PROUST_OK)
        atomic_fetch_add_explicit(&n_atomics, 1, memory_order_relaxed);
    return proust__rma_posted(req, rc, out);
}
