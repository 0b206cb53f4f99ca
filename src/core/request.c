/*
 * request.c — allocation and completion of requests.
 *
 * Completion may happen on any thread, often inside a driver upcall with
 * engine locks held. Completing only sets the DONE flag; what must not run
 * under a lock (user callbacks, releasing a request the user freed) is
 * queued on a per-thread list and run by proust__run_deferred() when the
 * public call returns.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/cancel.h"
#include "core/gate.h"
#include "core/offer.h"
#include "core/request.h"
#include "core/session.h"
#include "core/wait.h"

/*
 * Request memory belongs to the session: requests are carved from blocks
 * the session frees at finalize (so requests the user never waited for are
 * reclaimed too). Each thread keeps a small cache of free requests (no lock,
 * no malloc on the fast path), refilled from and spilled to the session's
 * free list in batches. A cache is tagged with the session's generation: a
 * cache left over from a finalized session is dropped, never dereferenced.
 */
#define REQ_BLOCK 64
#define REQ_CACHE_MAX 512
#define REQ_BATCH 32

struct proust__req_block {
    struct proust__req_block *next;
    struct proust_request reqs[REQ_BLOCK];
};

static _Atomic uint64_t session_generations;
static _Thread_local struct proust_request *req_cache;
static _Thread_local unsigned req_cache_len;
static _Thread_local uint64_t req_cache_gen;
_Thread_local struct proust_request *proust__deferred_head;

struct proust__event {
    struct proust__event *next;
    struct proust_session *s;
    unsigned event;
    proust_status_t envelope;
};
_Thread_local struct proust__event *proust__deferred_events;
static _Thread_local struct proust__event *events_tail;

void proust__defer_event(struct proust_session *s, unsigned event,
                         const proust_status_t *envelope)
{
    struct proust__event *e = malloc(sizeof *e);
    if (!e) {
        PROUST_WARN("out of memory: a session event is lost");
        return;
    }
    *e = (struct proust__event){.s = s, .event = event, .envelope = *envelope};
    if (proust__deferred_events)
        events_tail->next = e;
    else
        proust__deferred_events = e;
    events_tail = e;
}

static void run_events(void)
{
    while (proust__deferred_events) {
        struct proust__event *e = proust__deferred_events;
        proust__deferred_events = e->next;
        struct proust_session *s = e->s;
        pthread_mutex_lock(&s->monitor_lock);
        proust_event_cb_t cb = s->event_cb;
        void *arg = s->event_arg;
        bool want = s->event_mask & e->event;
        pthread_mutex_unlock(&s->monitor_lock);
        if (cb && want)
            cb(s, e->event, &e->envelope, arg);
        free(e);
    }
}

void proust__requests_init(struct proust_session *s)
{
    proust__lock_init(&s->req_lock);
    s->req_blocks = NULL;
    s->req_free = NULL;
    s->gen = atomic_fetch_add(&session_generations, 1) + 1;
}

void proust__requests_destroy(struct proust_session *s)
{
    while (s->req_blocks) {
        struct proust__req_block *b = s->req_blocks;
        s->req_blocks = b->next;
        for (int i = 0; i < REQ_BLOCK; i++) {
            struct proust_request *req = &b->reqs[i];
            if (!req->in_use)
                continue;
            /* a request the user never waited for: its extras too */
            if (req->segs != &req->seg0)
                free(req->segs);
            free(req->chunks);
            if (req->seg_left != &req->seg0_left)
                free((void *)req->seg_left);
        }
        free(b);
    }
    s->req_free = NULL;
    if (req_cache_gen == s->gen) {
        req_cache = NULL;
        req_cache_len = 0;
    }
}

static inline void cache_check(struct proust_session *s)
{
    if (__builtin_expect(req_cache_gen != s->gen, 0)) {
        req_cache = NULL; /* belonged to a finalized session: memory gone */
        req_cache_len = 0;
        req_cache_gen = s->gen;
    }
}

/* Refill the thread cache from the session (lock held briefly). */
static int cache_refill(struct proust_session *s)
{
    proust__lock(&s->req_lock);
    if (!s->req_free) {
        struct proust__req_block *b = malloc(sizeof *b);
        if (!b) {
            proust__unlock(&s->req_lock);
            return PROUST_ERR_NOMEM;
        }
        b->next = s->req_blocks;
        s->req_blocks = b;
        for (int i = 0; i < REQ_BLOCK; i++) {
            b->reqs[i].in_use = false;
            b->reqs[i].next = s->req_free;
            s->req_free = &b->reqs[i];
        }
    }
    for (int i = 0; i < REQ_BATCH && s->req_free; i++) {
        struct proust_request *req = s->req_free;
        s->req_free = req->next;
        req->next = req_cache;
        req_cache = req;
        req_cache_len++;
    }
    proust__unlock(&s->req_lock);
    return PROUST_OK;
}

/* Give a batch back to the session so other threads can use it. */
static void cache_spill(struct proust_session *s)
{
    proust__lock(&s->req_lock);
    while (req_cache_len > REQ_CACHE_MAX / 2) {
        struct proust_request *req = req_cache;
        req_cache = req->next;
        req_cache_len--;
        req->next = s->req_free;
        s->req_free = req;
    }
    proust__unlock(&s->req_lock);
}

struct proust_request *proust__request_alloc(struct proust_session *s, int kind)
{
    cache_check(s);
    if (!req_cache && cache_refill(s) != PROUST_OK)
        return NULL;
    struct proust_request *req = req_cache;
    req_cache = req->next;
    req_cache_len--;
    proust__request_init(req, s, kind);
    req->in_use = true;
    return req;
}

int proust__request_reserve(struct proust_session *s)
{
    cache_check(s);
    return req_cache || cache_refill(s) == PROUST_OK ? PROUST_OK : PROUST_ERR_NOMEM;
}

void proust__request_release(struct proust_request *req)
{
    struct proust_session *s = req->session;
    if (__builtin_expect(req->offer != NULL, 0)) /* its sender failed mid-offer */
        proust__offer_drop(s, req);
    if (__builtin_expect(req->segs != &req->seg0, 0)) { /* a pack's arrays */
        free(req->segs);
        free(req->chunks);
        if (req->seg_left != &req->seg0_left)
            free((void *)req->seg_left);
    }
    req->in_use = false;
    cache_check(s);
    req->next = req_cache;
    req_cache = req;
    if (++req_cache_len > REQ_CACHE_MAX)
        cache_spill(s);
}

void proust__request_set_error(struct proust_request *req, int err)
{
    int expected = PROUST_OK;
    atomic_compare_exchange_strong(&req->error, &expected, err);
}

/* A send's segments that its rail exposed for gets: released before the
 * request is done (after it, the request may be gone). */
static void unexpose_segments(struct proust_request *req)
{
    uint64_t mask = atomic_exchange_explicit(&req->exposed, 0, memory_order_acq_rel);
    if (!mask) /* or another completion took them */
        return;
    proust__rail_t *rail = req->session->gates[req->peer].rail;
    for (unsigned i = 0; mask && i < 64 && i < req->nseg; i++, mask >>= 1)
        if (mask & 1u)
            rail->ops->unexpose(rail, req->segs[i].iov_base, req->segs[i].iov_len);
}

void proust__request_complete(struct proust_request *req)
{
    if (__builtin_expect(atomic_load_explicit(&req->exposed, memory_order_relaxed) != 0, 0))
        unexpose_segments(req);
    /* read before DONE: a waiter may return and drop a request on its
     * stack as soon as it sees the flag */
    struct proust_session *s = req->session;
    int err = atomic_load_explicit(&req->error, memory_order_relaxed);
    if (err != PROUST_OK && req->status.error == PROUST_OK)
        req->status.error = err;
    /* the helper's count first (a waiter that sees DONE must not find it
     * still counted); whoever clears the flag uncounts it */
    if (__builtin_expect(atomic_load_explicit(&req->flags, memory_order_relaxed) &
                             PROUST__RF_HELPED, 0))
        proust__request_unhelp(req);
    unsigned prev = atomic_fetch_or_explicit(&req->flags, PROUST__RF_DONE, memory_order_seq_cst);
    if (prev & PROUST__RF_DONE)
        return; /* completed already (a failure forced it): never twice */
    if (__builtin_expect(prev & PROUST__RF_HELPED, 0)) /* engaged meanwhile */
        proust__request_unhelp(req);
    if (__builtin_expect(prev & PROUST__RF_CANCELING, 0)) {
        proust__cancel_completed(req, prev); /* not finished before the answer */
        return;
    }
    if (prev & (PROUST__RF_CB | PROUST__RF_FREED)) {
        req->deferred_next = proust__deferred_head;
        proust__deferred_head = req;
    }
    proust__wake_check(&s->prog);
}

void proust__request_fail(struct proust_request *req, int status)
{
    proust__request_set_error(req, status);
    atomic_store_explicit(&req->pending, 0, memory_order_relaxed);
    proust__request_complete(req);
}

void proust__request_event_done(struct proust_request *req)
{
    /* pending == 1: ours is the only event left, so no other thread can
     * touch the counter; skip the locked decrement */
    if (atomic_load_explicit(&req->pending, memory_order_acquire) == 1 ||
        atomic_fetch_sub_explicit(&req->pending, 1, memory_order_acq_rel) == 1) {
        atomic_store_explicit(&req->pending, 0, memory_order_relaxed);
        proust__request_complete(req);
    }
}

void proust__run_deferred_slow(void)
{
    run_events();
    while (proust__deferred_head) {
        struct proust_request *req = proust__deferred_head;
        proust__deferred_head = req->deferred_next;
        unsigned flags = atomic_load_explicit(&req->flags, memory_order_acquire);
        if (flags & PROUST__RF_CB) {
            struct proust_session *s = req->session;
            req->cb(req, &req->status, req->cb_arg);
            atomic_fetch_sub_explicit(&s->prog.monitored, 1, memory_order_relaxed);
            flags = atomic_fetch_or_explicit(&req->flags, PROUST__RF_CB_DONE,
                                             memory_order_seq_cst);
            proust__wake_check(&s->prog); /* finished only now */
        }
        /* whoever sets the last of FREED / finished releases it */
        if (flags & PROUST__RF_FREED)
            proust__request_release(req);
    }
}

int proust_request_monitor(proust_request_t *req, proust_request_cb_t cb, void *arg)
{
    if (!req || !cb)
        return PROUST_ERR_INVALID;
    unsigned flags = atomic_load(&req->flags);
    if (flags & (PROUST__RF_CB | PROUST__RF_FREED))
        return PROUST_ERR_INVALID; /* one callback per request */
    req->cb = cb;
    req->cb_arg = arg;
    /* counted before the flag: a completion right after it runs the
     * callback and uncounts it (proust__run_deferred_slow) */
    proust__monitored_begins(&req->session->prog);
    unsigned prev = atomic_fetch_or_explicit(&req->flags, PROUST__RF_CB, memory_order_acq_rel);
    if ((prev & (PROUST__RF_HELPED | PROUST__RF_DONE)) == PROUST__RF_HELPED)
        proust__helper_monitored(&req->session->prog);
    if ((prev & PROUST__RF_DONE) && !(prev & PROUST__RF_CANCELING)) {
        atomic_fetch_sub_explicit(&req->session->prog.monitored, 1, memory_order_relaxed);
        cb(req, &req->status, arg); /* completed before we got here */
        /* the callback may have freed it: then the last flag releases it */
        unsigned f = atomic_fetch_or_explicit(&req->flags, PROUST__RF_CB_DONE,
                                              memory_order_acq_rel);
        if (f & PROUST__RF_FREED)
            proust__request_release(req);
    }
    return PROUST_OK;
}

int proust_request_free(proust_request_t **reqp)
{
    if (!reqp)
        return PROUST_ERR_INVALID;
    struct proust_request *req = *reqp;
    if (!req)
        return PROUST_OK;
    *reqp = NULL;
    unsigned prev = atomic_fetch_or_explicit(&req->flags, PROUST__RF_FREED, memory_order_acq_rel);
    if (proust__request_finished(prev))
        proust__request_release(req);
    return PROUST_OK;
}
