/*
 * request.c — MPI requests: completion (the Wait/Test family), freeing,
 * cancelling, status queries and generalized requests.
 *
 * A request in flight on the engine (send, receive) completes through
 * proust_wait/proust_test; the others (collective schedules, generalized and
 * already-complete requests) through their `done` flag, which whoever drives
 * the engine sets. Persistent requests are handled by persistent.c.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_impl.h"
#include "p2p.h"
#include "request.h"

/* Released requests stay with the thread that released them, handle and
 * all, so that a nonblocking call costs no malloc and no table update
 * (MPI_Isend/MPI_Wait windows of osu_bw-like loops). Up to 1024 a thread:
 * with 128, a program that keeps 1024 receives posted paid a malloc, a
 * free and two table updates for most of them (docs/PERFORMANCE.md,
 * "Figures behind the code"). */
#define PM_REQ_CACHE_MAX 1024
static _Thread_local struct pm_request *req_cache;
static _Thread_local int req_cached;
static _Thread_local bool req_cache_armed; /* the thread-exit drain is set */
static pthread_key_t req_cache_key;
static pthread_once_t req_cache_once = PTHREAD_ONCE_INIT;

/* Beyond a thread's cache, released requests go to a pool of the process,
 * PM_REQ_BATCH at a time (one lock a batch), and are never given back to
 * malloc, as MPICH keeps its request objects: a program that keeps 8192
 * receives posted paid a malloc, a free and two table updates for seven
 * in eight of them (bench/match: a sixth of the receiver's time). */
#define PM_REQ_BATCH 256
static pthread_mutex_t req_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pm_request *req_pool;

/* Move `n` requests (all: n < 0) of this thread's cache to the pool. */
static void req_cache_spill(int n)
{
    if (!req_cache || n == 0)
        return;
    struct pm_request *first = req_cache, *last = req_cache;
    int moved = 1;
    while (last->cache_next && (n < 0 || moved < n)) {
        last = last->cache_next;
        moved++;
    }
    req_cache = last->cache_next;
    req_cached -= moved;
    pthread_mutex_lock(&req_pool_lock);
    last->cache_next = req_pool;
    __atomic_store_n(&req_pool, first, __ATOMIC_RELAXED); /* read unlocked as a hint */
    pthread_mutex_unlock(&req_pool_lock);
}

/* Take a batch from the pool into this thread's empty cache. */
static void req_cache_refill(void)
{
    pthread_mutex_lock(&req_pool_lock);
    struct pm_request *first = req_pool, *last = req_pool;
    int moved = first ? 1 : 0;
    while (last && last->cache_next && moved < PM_REQ_BATCH) {
        last = last->cache_next;
        moved++;
    }
    if (last) {
        __atomic_store_n(&req_pool, last->cache_next, __ATOMIC_RELAXED);
        last->cache_next = NULL;
    }
    pthread_mutex_unlock(&req_pool_lock);
    req_cache = first;
    req_cached = moved;
}

/* A thread that ends gives its cached requests to the pool. */
static void req_cache_drain(void *unused)
{
    (void)unused;
    req_cache_spill(-1);
    req_cached = 0;
    req_cache_armed = false; /* a later release (another destructor) arms it again */
}

static void req_cache_key_init(void)
{
    pthread_key_create(&req_cache_key, req_cache_drain);
}

/* An MPI_Isend whose eager message left inside the call (proust_try_send)
 * has nothing to wait for: it gets this request, as MPICH gives its
 * lightweight one, instead of an MPI request and an engine request of its
 * own; so does a nonblocking collective that moves nothing
 * (pm_coll_nothing). Nothing writes to it after init: lookups read it, retiring it only
 * clears the caller's handle. The standard leaves a send's status undefined
 * but for MPI_ERROR and the cancelled flag, both clear here. */
struct pm_request pm_req_sent = {
    .handle = PM_REQ_SENT_HANDLE,
    .kind = PM_REQ_DONE,
    .done = 1,
    .status = {.MPI_SOURCE = MPI_ANY_SOURCE, .MPI_TAG = MPI_ANY_TAG, .MPI_ERROR = MPI_SUCCESS},
};

void pm_requests_init(void)
{
    pm_table_set(&pm_request_table, PM_REQ_SENT_HANDLE & PROUST_MPI_INDEX_MASK, &pm_req_sent);
}

struct pm_request *pm_request_new(enum pm_req_kind kind, struct pm_comm *c)
{
    if (PM_UNLIKELY(!req_cache) && __atomic_load_n(&req_pool, __ATOMIC_RELAXED))
        req_cache_refill();
    struct pm_request *r = req_cache;
    int handle = 0;
    if (r) {
        req_cache = r->cache_next;
        req_cached--;
        handle = r->handle;
    } else if (!(r = malloc(sizeof *r))) {
        return NULL;
    }
    /* Every field, one store each: a whole-object clear compiles to `rep
     * stos`, whose start-up cost was a tenth of an MPI_Isend's time on
     * this VM's cpu (docs/PERFORMANCE.md, "Figures behind the code").
     * The kind last (release), as a lookup of a recycled
     * handle reads it. A field added to struct pm_request is reset here. */
    r->kind = PM_REQ_FREE;
    r->comm = c;
    r->preq = NULL;
    atomic_store_explicit(&r->done, 0, memory_order_relaxed);
    atomic_store_explicit(&r->sleeper, NULL, memory_order_relaxed);
    pm_status_empty(&r->status);
    r->tmp = NULL;
    r->user_buf = NULL;
    r->count = 0;
    r->type = NULL;
    r->persist = NULL;
    r->coll = NULL;
    r->coll_free = NULL;
    r->gq = NULL;
    r->gf = NULL;
    r->gc = NULL;
    r->gextra = NULL;
    r->cache_next = NULL;
    if (handle) {
        r->handle = handle; /* still mapped to r in the table */
    } else if (!(r->handle = pm_table_add(&pm_request_table, r))) {
        free(r);
        return NULL;
    }
    if (c)
        pm_comm_retain(c);
    __atomic_store_n(&r->kind, kind, __ATOMIC_RELEASE);
    return r;
}

void pm_request_free(struct pm_request *r)
{
    if (r == &pm_req_sent)
        return;
    if (r->preq)
        proust_request_free(&r->preq);
    if (r->tmp)
        free(r->tmp);
    if (r->type)
        pm_type_release(r->type);
    if (r->coll && r->coll_free)
        r->coll_free(r->coll);
    if (r->comm)
        pm_comm_release(r->comm);
    if (r->handle) {
        if (PM_UNLIKELY(!req_cache_armed)) { /* the thread-exit drain, once a thread */
            pthread_once(&req_cache_once, req_cache_key_init);
            pthread_setspecific(req_cache_key, (void *)1);
            req_cache_armed = true;
        }
        if (req_cached >= PM_REQ_CACHE_MAX)
            req_cache_spill(PM_REQ_BATCH);
        /* The handle stays mapped; lookups refuse PM_REQ_FREE. */
        __atomic_store_n(&r->kind, PM_REQ_FREE, __ATOMIC_RELEASE);
        r->cache_next = req_cache;
        req_cache = r;
        req_cached++;
        return;
    }
    free(r); /* MPI_Request_free took its handle (PM_REQ_ASYNC) */
}

void pm_request_set_done(struct pm_request *r, int err)
{
    if (err != MPI_SUCCESS)
        r->status.MPI_ERROR = err;
    pm_flag_set(&r->done, &r->sleeper, 1);
}

#define SLEEPER_SETTING ((proust_request_t *)(uintptr_t)1)

int pm_flag_set(_Atomic int *done, pm_sleeper_t *sleeper, int value)
{
    /* take the parked request first: after `done` is set the object
     * holding both may be gone */
    proust_request_t *u = atomic_exchange(sleeper, SLEEPER_SETTING);
    int prev = atomic_fetch_or(done, value);
    if (u && u != SLEEPER_SETTING)
        proust_request_complete(u, PROUST_OK);
    return prev;
}

#define WAIT_POLLS 256 /* engine passes before parking (the engine's spin
                          window then applies inside proust_wait) */

void pm_wait_flag(_Atomic int *done, pm_sleeper_t *sleeper)
{
    unsigned idle = 0;
    while (!atomic_load_explicit(done, memory_order_acquire)) {
        proust_progress(pm_session);
        if (++idle < WAIT_POLLS)
            continue;
        idle = 0;
        proust_request_t *u = NULL;
        proust_request_t *expected = NULL;
        if (proust_request_create(pm_session, NULL, NULL, &u) != PROUST_OK) {
            sched_yield();
            continue;
        }
        if (!atomic_compare_exchange_strong(sleeper, &expected, u)) {
            /* being set right now */
            proust_request_complete(u, PROUST_OK);
            proust_wait(&u, NULL);
            continue;
        }
        expected = u;
        if (atomic_load(done) && atomic_compare_exchange_strong(sleeper, &expected, NULL)) {
            proust_request_complete(u, PROUST_OK); /* took it back */
        }
        /* else the setter completes it (or has) */
        proust_wait(&u, NULL);
    }
}

/* An engine request completed with proust status `ps`: record it. */
void pm_req_finish_engine(struct pm_request *r, int rc, const proust_status_t *ps)
{
    if (r->kind == PM_REQ_RECV) {
        pm_status_from_proust(&r->status, ps);
        if (r->tmp && (rc == PROUST_OK || rc == PROUST_ERR_TRUNCATE))
            pm_type_unpack(r->tmp, ps->count, r->user_buf, r->count, r->type, 0);
        if (r->tmp && rc == PROUST_OK && pm_recv_partial(r->type, ps->count))
            r->status.MPI_ERROR = MPI_ERR_TYPE;
    } else {
        r->status.proust_cancelled = ps->error == PROUST_ERR_CANCELED;
        r->status.proust_bytes = r->status.proust_cancelled ? 0 : (MPI_Count)ps->size;
    }
    if (rc != PROUST_OK && rc != PROUST_ERR_CANCELED)
        r->status.MPI_ERROR = pm_error_from_proust(rc);
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

/* Generalized request: ask the application for the status. */
static int greq_query(struct pm_request *r)
{
    if (r->gq) {
        int rc = r->gq(r->gextra, &r->status);
        if (rc != MPI_SUCCESS)
            r->status.MPI_ERROR = rc;
        r->gq = NULL; /* once */
    }
    return r->status.MPI_ERROR;
}

int pm_request_poll(struct pm_request *r, int *flag, MPI_Status *st, bool progress)
{
    switch (r->kind) {
    case PM_REQ_SEND:
    case PM_REQ_RECV:
        if (r->preq) {
            proust_status_t ps;
            int f = 0;
            int rc = proust_test(&r->preq, &f, &ps);
            if (!f) {
                *flag = 0;
                return MPI_SUCCESS;
            }
            pm_req_finish_engine(r, rc, &ps);
        }
        break;
    case PM_REQ_PERSISTENT:
        return pm_persistent_poll(r, flag, st, progress);
    case PM_REQ_FREE: /* lookups refuse released requests */
        *flag = 1;
        return MPI_ERR_REQUEST;
    case PM_REQ_COLL:
    case PM_REQ_GREQ:
    case PM_REQ_ASYNC:
    case PM_REQ_DONE:
        if (!(atomic_load_explicit(&r->done, memory_order_acquire) & 1)) {
            if (progress)
                proust_progress(pm_session);
            if (!(atomic_load_explicit(&r->done, memory_order_acquire) & 1)) {
                *flag = 0;
                return MPI_SUCCESS;
            }
        }
        if (r->kind == PM_REQ_GREQ)
            greq_query(r);
        break;
    }
    *flag = 1;
    if (st)
        *st = r->status;
    return r->status.MPI_ERROR;
}

/* Block until `r` completes. */
void pm_req_wait_one(struct pm_request *r)
{
    if ((r->kind == PM_REQ_SEND || r->kind == PM_REQ_RECV) && r->preq) {
        proust_status_t ps;
        int rc = proust_wait(&r->preq, &ps);
        pm_req_finish_engine(r, rc, &ps);
        return;
    }
    if (r->kind == PM_REQ_PERSISTENT) {
        /* the operation running, waited for as such (an engine wait, or a
         * flag a thread may sleep on) */
        struct pm_request *inner = pm_persistent_inner(r);
        if (inner)
            pm_req_wait_one(inner);
        return;
    }
    pm_wait_flag(&r->done, &r->sleeper);
}

/* A completed request leaves: persistent ones become inactive, the others
 * are freed and the handle set to MPI_REQUEST_NULL. */
int pm_req_retire(struct pm_request *r, MPI_Request *handle)
{
    if (r->kind == PM_REQ_PERSISTENT) {
        pm_persistent_complete(r);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    if (r->kind == PM_REQ_GREQ && r->gf) {
        rc = r->gf(r->gextra);
        r->gf = NULL;
    }
    pm_request_free(r);
    *handle = MPI_REQUEST_NULL;
    return rc;
}

/* The completion call of a generalized request returns what its free
 * function returned (MPI 3.1 sec. 12.2), unless it failed already. */
static int free_fn_error(const char *fname, int rc, int free_rc)
{
    if (rc != MPI_SUCCESS || free_rc == MPI_SUCCESS)
        return rc;
    return pm_error(MPI_COMM_WORLD, free_rc, "%s: the generalized request's free function failed",
                    fname);
}

void pm_req_copy_status(MPI_Status *dst, const struct pm_request *r, bool with_error)
{
    if (!dst)
        return;
    int keep = dst->MPI_ERROR;
    *dst = r->status;
    if (!with_error)
        dst->MPI_ERROR = keep;
}

/* Raise a request's error on its communicator. */
static int raise_request_error(const char *fname, struct pm_request *r, int err)
{
    MPI_Comm comm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
    return pm_error(comm, err, "%s: request failed", fname);
}

struct pm_request *pm_req_lookup(const char *fname, MPI_Request h, int *rc)
{
    struct pm_request *r = pm_request_get(h);
    if (!r)
        *rc = pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid request handle %#x", fname,
                       (unsigned)h);
    return r;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Wait");
    if (!request)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Wait: request pointer is NULL");
    if (*request == MPI_REQUEST_NULL) {
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    if (*request == PM_REQ_SENT_HANDLE) {
        pm_req_copy_status(status, &pm_req_sent, false);
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = pm_req_lookup("MPI_Wait", *request, &rc);
    if (!r)
        return rc;
    /* Fast path: a plain contiguous send or receive. */
    if (PM_LIKELY(r->kind <= PM_REQ_RECV && r->preq && !r->tmp)) {
        proust_status_t ps;
        int prc = proust_wait(&r->preq, &ps);
        if (PM_LIKELY(prc == PROUST_OK)) {
            if (status)
                pm_status_ok(status, r, r->kind == PM_REQ_RECV, &ps);
            pm_request_free(r);
            *request = MPI_REQUEST_NULL;
            return MPI_SUCCESS;
        }
        pm_req_finish_engine(r, prc, &ps);
    } else if (PM_LIKELY(r->kind <= PM_REQ_RECV && !r->preq &&
                         atomic_load_explicit(&r->done, memory_order_acquire) &&
                         r->status.MPI_ERROR == MPI_SUCCESS)) {
        /* complete since the call that posted it (a receive whose message
         * was here): what the general path below would do, without it */
        pm_req_copy_status(status, r, false);
        pm_request_free(r);
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    } else {
        pm_req_wait_one(r);
    }
    int flag;
    rc = pm_request_poll(r, &flag, NULL, false);
    pm_req_copy_status(status, r, rc != MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        rc = raise_request_error("MPI_Wait", r, rc);
    return free_fn_error("MPI_Wait", rc, pm_req_retire(r, request));
}
PM_WEAK(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test: NULL argument");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = pm_req_lookup("MPI_Test", *request, &rc);
    if (!r)
        return rc;
    rc = pm_request_poll(r, flag, NULL, true);
    if (!*flag)
        return MPI_SUCCESS;
    pm_req_copy_status(status, r, rc != MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        rc = raise_request_error("MPI_Test", r, rc);
    return free_fn_error("MPI_Test", rc, pm_req_retire(r, request));
}
PM_WEAK(Test)


/* Freed while in flight: the engine finishes it; a temporary buffer goes
 * (and a receive is unpacked) when it completes. */
static void release_when_done(proust_request_t *preq, const proust_status_t *ps, void *arg)
{
    struct pm_request *r = arg;
    if (r->kind == PM_REQ_RECV && r->tmp &&
        (ps->error == PROUST_OK || ps->error == PROUST_ERR_TRUNCATE))
        pm_type_unpack(r->tmp, ps->count, r->user_buf, r->count, r->type, 0);
    r->preq = NULL; /* released by the engine (proust_request_free) */
    pm_request_free(r);
}

int PMPI_Request_free(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Request_free");
    if (!request || *request == MPI_REQUEST_NULL)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free: null request");
    int rc = MPI_SUCCESS;
    struct pm_request *r = pm_req_lookup("MPI_Request_free", *request, &rc);
    if (!r)
        return rc;
    switch (r->kind) {
    case PM_REQ_COLL:
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "MPI_Request_free: a nonblocking collective request cannot be freed "
                        "(MPI-3.1 §5.12)");
    case PM_REQ_PERSISTENT:
        pm_persistent_free(r);
        break;
    case PM_REQ_SEND:
    case PM_REQ_RECV:
        if (r->preq) {
            pm_table_remove(&pm_request_table, r->handle);
            r->handle = 0; /* invalid from now on; the object goes when done */
            proust_request_t *preq = r->preq;
            proust_request_monitor(preq, release_when_done, r);
            proust_request_free(&preq);
            break;
        }
        pm_request_free(r);
        break;
    case PM_REQ_GREQ:
        /* The application may complete it later with the old handle value:
         * whoever of the two comes last releases it (bit 1: freed). */
        if (!(atomic_fetch_or(&r->done, 2) & 1))
            break;
        greq_query(r);
        return free_fn_error("MPI_Request_free", MPI_SUCCESS, pm_req_retire(r, request));
    case PM_REQ_DONE:
        pm_request_free(r);
        break;
    case PM_REQ_ASYNC:
        /* still in flight: its completion frees it (bit 1: freed) */
        pm_table_remove(&pm_request_table, r->handle);
        r->handle = 0;
        if (atomic_fetch_or(&r->done, 2) & 1)
            pm_request_free(r);
        break;
    case PM_REQ_FREE: /* lookups refuse released requests */
        break;
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Request_free)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Request_get_status");
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status: flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = pm_req_lookup("MPI_Request_get_status", request, &rc);
    if (!r)
        return rc;
    rc = pm_request_poll(r, flag, NULL, true);
    if (*flag) {
        pm_req_copy_status(status, r, rc != MPI_SUCCESS);
        if (rc != MPI_SUCCESS)
            return raise_request_error("MPI_Request_get_status", r, rc);
    }
    return MPI_SUCCESS;
}
PM_WEAK(Request_get_status)

int PMPI_Cancel(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Cancel");
    if (!request || *request == MPI_REQUEST_NULL)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel: null request");
    int rc = MPI_SUCCESS;
    struct pm_request *r = pm_req_lookup("MPI_Cancel", *request, &rc);
    if (!r)
        return rc;
    switch (r->kind) {
    case PM_REQ_RECV:
    case PM_REQ_SEND:
        /* PROUST_ERR_BUSY: matched already, completes normally. A send asks
         * its receiver, whose answer the wait then sees. A send that has
         * completed and been retired by a test, or left at once without a
         * request of its own (PM_REQ_SENT_HANDLE, a PM_REQ_DONE), is not
         * cancelled, which the standard allows. */
        if (r->preq)
            proust_cancel(r->preq);
        break;
    case PM_REQ_GREQ:
        if (r->gc) {
            int crc = r->gc(r->gextra, (atomic_load(&r->done) & 1) != 0);
            if (crc != MPI_SUCCESS)
                return pm_error(MPI_COMM_WORLD, crc,
                                "MPI_Cancel: the generalized request's cancel function failed");
        }
        break;
    case PM_REQ_COLL:
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "MPI_Cancel: nonblocking collectives cannot be cancelled");
    case PM_REQ_PERSISTENT:
        return pm_persistent_cancel(r);
    default: /* complete already */
        break;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    PM_CHECK_INIT("MPI_Test_cancelled");
    if (!status || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled: NULL argument");
    *flag = status->proust_cancelled != 0;
    return MPI_SUCCESS;
}
PM_WEAK(Test_cancelled)

/* ---- Generalized requests -------------------------------------------------- */
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Grequest_start");
    if (!request)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Grequest_start: request is NULL");
    struct pm_request *r = pm_request_new(PM_REQ_GREQ, NULL);
    if (!r)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Grequest_start: out of memory");
    r->gq = query_fn;
    r->gf = free_fn;
    r->gc = cancel_fn;
    r->gextra = extra_state;
    *request = r->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    PM_CHECK_INIT("MPI_Grequest_complete");
    struct pm_request *r = pm_request_get(request);
    if (!r || r->kind != PM_REQ_GREQ)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                        "MPI_Grequest_complete: %#x is not a generalized request",
                        (unsigned)request);
    if (pm_flag_set(&r->done, &r->sleeper, 1) & 2) {
        greq_query(r); /* freed already: nobody will wait for it */
        MPI_Request h = request;
        (void)pm_req_retire(r, &h); /* freed: no call is left to report to */
    }
    return MPI_SUCCESS;
}
PM_WEAK(Grequest_complete)
