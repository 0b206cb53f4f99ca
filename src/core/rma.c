/*
 * rma.c — one-sided access for the native API (proust_mem_*, proust_rma_*)
 * and for MPI windows across hosts: registration on the rails that can
 * serve remote access, keys peers exchange, and writes and reads that
 * complete as user requests when the rail says the bytes are there.
 *
 * A key is one section per rail that registered the memory: the rail's
 * name (8 bytes), the length of its part (4 bytes), then the part. A
 * process uses the section of the rail that carries its traffic to the
 * peer, so both ends speak through the same driver.
 */
#include <stdlib.h>
#include <string.h>

#include "core/gate.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/rma.h"
#include "core/session.h"
#include "proust.h"

#define RMA_NAME_LEN 8
#define RMA_SECTION_HDR (RMA_NAME_LEN + 4)

struct proust_mem {
    proust_session_t *s;
    int n;
    struct {
        proust__rail_t *rail;
        void *handle;
    } regs[PROUST__MAX_RAILS];
    size_t key_len;
    uint8_t key[PROUST_MEM_KEY_MAX];
};

/* proust_rma_counts: process-wide, as the statistic is */
static _Atomic uint64_t n_registrations, n_writes, n_reads, n_bytes_written, n_bytes_read;

/* The session whose rails proust_rma_counts asks (one per process). */
static proust_session_t *_Atomic counted_session;

void proust__rma_session(proust_session_t *s)
{
    atomic_store(&counted_session, s);
}

void proust_rma_counts(proust_rma_counts_t *out)
{
    if (!out)
        return;
    out->cache_hits = out->cache_misses = 0;
    proust_session_t *s = atomic_load(&counted_session);
    for (int i = 0; s && i < s->nrails; i++) {
        proust__rail_t *rail = &s->rails[i].rail;
        uint64_t h = 0, m = 0;
        if (rail->ops->registrations)
            rail->ops->registrations(rail, &h, &m);
        out->cache_hits += h;
        out->cache_misses += m;
    }
    out->registrations = atomic_load_explicit(&n_registrations, memory_order_relaxed);
    out->writes = atomic_load_explicit(&n_writes, memory_order_relaxed);
    out->reads = atomic_load_explicit(&n_reads, memory_order_relaxed);
    out->bytes_written = atomic_load_explicit(&n_bytes_written, memory_order_relaxed);
    out->bytes_read = atomic_load_explicit(&n_bytes_read, memory_order_relaxed);
    out->atomics = proust__rma_atomics_started();
}

bool proust__rail_can_rma(const proust__rail_t *rail)
{
    return rail && rail->ops->rma && rail->ops->mem_register &&
           (rail->caps.flags & PROUST__RAIL_CAN_RMA);
}

int proust_mem_register(proust_session_t *s, void *buf, size_t len, proust_mem_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!buf || len == 0 || !out)
        return PROUST_ERR_INVALID;
    struct proust_mem *m = calloc(1, sizeof *m);
    if (!m)
        return PROUST_ERR_NOMEM;
    m->s = s;
    int rc = PROUST_ERR_NOT_SUPPORTED;
    for (int i = 0; i < s->nrails; i++) {
        proust__rail_t *rail = &s->rails[i].rail;
        if (!proust__rail_can_rma(rail) || m->key_len + RMA_SECTION_HDR >= sizeof m->key)
            continue;
        uint8_t *sec = m->key + m->key_len;
        void *handle = NULL;
        int klen = rail->ops->mem_register(rail, buf, len, &handle, sec + RMA_SECTION_HDR,
                                           sizeof m->key - m->key_len - RMA_SECTION_HDR);
        if (klen < 0) {
            rc = klen;
            continue;
        }
        memset(sec, 0, RMA_NAME_LEN);
        strncpy((char *)sec, rail->ops->name, RMA_NAME_LEN);
        uint32_t l = (uint32_t)klen;
        memcpy(sec + RMA_NAME_LEN, &l, 4);
        m->key_len += RMA_SECTION_HDR + (size_t)klen;
        m->regs[m->n].rail = rail;
        m->regs[m->n].handle = handle;
        m->n++;
    }
    if (m->n == 0) {
        free(m);
        return rc;
    }
    atomic_fetch_add_explicit(&n_registrations, 1, memory_order_relaxed);
    *out = m;
    return PROUST_OK;
}

int proust_mem_key(const proust_mem_t *m, void *key, size_t cap, size_t *len)
{
    if (!m || !key || !len)
        return PROUST_ERR_INVALID;
    if (cap < m->key_len)
        return PROUST_ERR_TRUNCATE;
    memcpy(key, m->key, m->key_len);
    *len = m->key_len;
    return PROUST_OK;
}

int proust_mem_release(proust_mem_t *m)
{
    if (!m)
        return PROUST_ERR_INVALID;
    for (int i = 0; i < m->n; i++)
        if (m->regs[i].rail->ops->mem_release)
            m->regs[i].rail->ops->mem_release(m->regs[i].rail, m->regs[i].handle);
    free(m);
    return PROUST_OK;
}

int proust_rma_reaches(proust_session_t *s, int peer)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    const proust__rail_t *rail = s->gates[peer].rail;
    if (!proust__rail_can_rma(rail))
        return 0;
    return rail->caps.flags & PROUST__RAIL_POLL_TO_MOVE ? PROUST_RMA_BY_POLLING
                                                        : PROUST_RMA_BY_NIC;
}

const uint8_t *proust__rma_section(const proust__rail_t *rail, const uint8_t *key,
                                  size_t key_len, size_t *part_len)
{
    size_t at = 0;
    while (key_len - at >= RMA_SECTION_HDR) {
        uint32_t l;
        memcpy(&l, key + at + RMA_NAME_LEN, 4);
        if (l > key_len - at - RMA_SECTION_HDR)
            return NULL;
        if (strncmp((const char *)key + at, rail->ops->name, RMA_NAME_LEN) == 0) {
            *part_len = l;
            return key + at + RMA_SECTION_HDR;
        }
        at += RMA_SECTION_HDR + l;
    }
    return NULL;
}

void proust__rma_split_answer(struct rma_split *sp, int status)
{
    int ok = PROUST_OK;
    if (status != PROUST_OK)
        atomic_compare_exchange_strong(&sp->status, &ok, status);
    if (atomic_fetch_sub(&sp->left, 1) == 1) {
        proust_request_complete(sp->req, atomic_load(&sp->status));
        free(sp);
    }
}

static int split(proust__rail_t *rail, int peer, int write, void *local, size_t len,
                 const uint8_t *part, size_t part_len, uint64_t offset, proust_request_t *req)
{
    struct rma_split *sp = malloc(sizeof *sp);
    if (!sp)
        return PROUST_ERR_NOMEM;
    sp->req = req;
    atomic_init(&sp->left, 1);
    atomic_init(&sp->status, PROUST_OK);
    void *ctx = (void *)((uintptr_t)sp | PROUST__RMA_CTX_SPLIT);
    size_t max = rail->caps.rma_max;
    int rc = PROUST_OK;
    for (size_t at = 0; at < len && rc == PROUST_OK; at += max) {
        size_t n = len - at < max ? len - at : max;
        atomic_fetch_add(&sp->left, 1);
        rc = rail->ops->rma(rail, peer, write, (char *)local + at, n, part, part_len,
                            offset + at, ctx);
        if (rc == PROUST__INPROGRESS)
            rc = PROUST_OK;
        else
            proust__rma_split_answer(sp, rc); /* done or refused: no upcall comes for it */
    }
    proust__rma_split_answer(sp, rc); /* the posting's own count: completes it if all are in */
    return PROUST__INPROGRESS;
}

static int transfer(proust_session_t *s, int peer, int write, void *local, size_t len,
                    const void *key, size_t key_len, uint64_t offset, proust_request_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!out || (!local && len) || !key || key_len > PROUST_MEM_KEY_MAX)
        return PROUST_ERR_INVALID;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    struct proust__gate *g = &s->gates[peer];
    int failed = atomic_load_explicit(&g->failed, memory_order_acquire);
    if (failed)
        return failed;
    proust__rail_t *rail = g->rail;
    if (!proust__rail_can_rma(rail))
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
    size_t max = rail->caps.rma_max;
    if (max && len > max)
        rc = split(rail, peer, write, local, len, part, part_len, offset, req);
    else
        rc = rail->ops->rma(rail, peer, write, local, len, part, part_len, offset, req);
    if (rc == PROUST__INPROGRESS || rc == PROUST_OK) {
        atomic_fetch_add_explicit(write ? &n_writes : &n_reads, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(write ? &n_bytes_written : &n_bytes_read, len,
                                  memory_order_relaxed);
    }
    return proust__rma_posted(req, rc, out);
}

int proust__rma_posted(proust_request_t *req, int rc, proust_request_t **out)
{
    if (rc == PROUST__INPROGRESS) {
        *out = req;
        return PROUST_OK;
    }
    if (rc == PROUST_OK) { /* nothing to move */
        req->status.size = 0;
        proust_request_complete(req, PROUST_OK);
        *out = req;
        return PROUST_OK;
    }
    proust_request_complete(req, rc);
    proust_request_free(&req);
    return rc == PROUST_ERR_PROTO ? PROUST_ERR_INVALID : rc;
}

int proust_rma_write(proust_session_t *s, int peer, const void *src, size_t len, const void *key,
                     size_t key_len, uint64_t offset, proust_request_t **req)
{
    return transfer(s, peer, 1, (void *)src, len, key, key_len, offset, req);
}

int proust_rma_read(proust_session_t *s, int peer, void *dst, size_t len, const void *key,
                    size_t key_len, uint64_t offset, proust_request_t **req)
{
    return transfer(s, peer, 0, dst, len, key, key_len, offset, req);
}

/* The rail's word that a transfer is over (rail upcall rma_done). */
void proust__on_rma_done(void *engine, void *ctx, int status)
{
    (void)engine;
    uintptr_t bits = (uintptr_t)ctx & 3u;
    void *p = (void *)((uintptr_t)ctx & ~(uintptr_t)3u);
    if (bits == PROUST__RMA_CTX_SPLIT)
        proust__rma_split_answer(p, status);
    else if (bits == PROUST__RMA_CTX_GET)
        proust__get_done(p, status);
    else
        proust_request_complete(ctx, status);
}
