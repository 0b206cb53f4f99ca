/*
 * coll_cx.c — the collective context of coll_algo.h: an algorithm's steps
 * go into a schedule (nonblocking calls) or execute at once (direct mode,
 * blocking calls).
 *
 * Direct mode keeps latency low: small sends use the engine's blocking send
 * (no request at all on the shared-memory fast path), receives are posted
 * before the next step and waited for at the next fence (a lone receive
 * before a fence is the engine's blocking receive), and scratch comes from a
 * per-thread arena that grows to the largest need seen (up to ARENA_MAX), so
 * a repeated collective allocates nothing.
 */
#include <pthread.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coll_algo.h"

#define ARENA_MAX ((size_t)16 << 20) /* largest arena a thread keeps between calls */
#define ALIGN 64

static _Thread_local unsigned char *tls_arena;
static _Thread_local size_t tls_cap;
static _Thread_local bool tls_busy;
static pthread_key_t arena_key;
static pthread_once_t arena_once = PTHREAD_ONCE_INIT;
static bool arena_key_ok;

/* Free a thread's arena when the thread exits. */
static void arena_destroy(void *p)
{
    free(p);
}

static void arena_key_init(void)
{
    arena_key_ok = pthread_key_create(&arena_key, arena_destroy) == 0;
}

struct pm_cx_mem {
    struct pm_cx_mem *next;
    alignas(max_align_t) unsigned char data[];
};

/* ---- Modes ------------------------------------------------------------------ */

void pm_cx_direct(struct pm_cx *cx, struct pm_comm *c)
{
    uint32_t seq = pm_coll_next_seq(c);
    cx->c = c;
    cx->s = NULL;
    cx->local = false;
    cx->err = MPI_SUCCESS;
    cx->stop = false;
    cx->stag = c->tag_coll | c->tag_src | seq;
    cx->rtag = c->tag_coll | seq;
    cx->nreq = 0;
    cx->deferred = false;
    cx->arena_held = false;
    cx->arena_used = cx->arena_want = 0;
    cx->mem = NULL;
}

int pm_cx_sched(struct pm_cx *cx, struct pm_comm *c)
{
    cx->c = c;
    cx->local = false;
    cx->err = MPI_SUCCESS;
    cx->stop = false;
    cx->nreq = 0;
    cx->deferred = false;
    cx->arena_held = false;
    cx->mem = NULL;
    cx->s = pm_sched_create(c);
    return cx->s ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

int pm_cx_start(struct pm_cx *cx, MPI_Request *request)
{
    if (cx->err) {
        pm_sched_discard(cx->s);
        return cx->err;
    }
    return pm_sched_start(cx->s, request);
}

/* A failure that ends the collective (coll_algo.h, "Errors"). */
static inline int set_err(struct pm_cx *cx, int rc)
{
    if (rc) {
        if (!cx->err)
            cx->err = rc;
        cx->stop = true;
    }
    return cx->err;
}

int pm_cx_fail(struct pm_cx *cx, int err)
{
    return set_err(cx, err);
}

int pm_cx_begin(struct pm_cx *cx, struct pm_comm *c, bool nonblocking)
{
    if (nonblocking)
        return pm_cx_sched(cx, c);
    pm_cx_direct(cx, c);
    return MPI_SUCCESS;
}

void pm_cx_note(struct pm_cx *cx, int err)
{
    if (!err)
        return;
    if (cx->s)
        pm_sched_note(cx->s, err); /* cx->err would discard the schedule */
    else if (!cx->err)
        cx->err = err;
}

/* A failure the collective goes on after, unless `stop`. */
static inline void note_err(struct pm_cx *cx, int rc, bool stop)
{
    if (stop)
        set_err(cx, rc);
    else if (rc && !cx->err)
        cx->err = rc;
}

/* A local copy that does not fit is the caller's counts disagreeing: the
 * collective goes on without it. */
static inline int local_err(struct pm_cx *cx, int rc)
{
    note_err(cx, rc, rc != MPI_ERR_TRUNCATE);
    return cx->stop ? cx->err : MPI_SUCCESS;
}

/* Direct mode defers posting a receive until the next step: if that is a
 * fence with nothing else outstanding, the engine's blocking receive does
 * it without a request (the common "receive, then forward" of trees). */
static void post_deferred(struct pm_cx *cx)
{
    if (!cx->deferred)
        return;
    cx->deferred = false;
    struct pm_cx_req *r = &cx->req[cx->nreq];
    int rc = proust_irecv(pm_session, r->buf, r->bytes, r->world, cx->rtag, PM_COLL_RECV_MASK,
                          &r->preq);
    if (rc == PROUST_OK)
        cx->nreq++;
    else
        set_err(cx, pm_error_from_proust(rc));
}

static void recv_now(struct pm_cx *cx)
{
    cx->deferred = false;
    struct pm_cx_req *r = &cx->req[cx->nreq];
    proust_status_t ps;
    int rc = proust_recv(pm_session, r->buf, r->bytes, r->world, cx->rtag, PM_COLL_RECV_MASK,
                         &ps);
    if (rc == PROUST_OK && r->unpack_to)
        pm_type_unpack(r->packed, ps.count, r->unpack_to, r->count, r->t, 0);
    bool stop;
    int err = pm_coll_recv_outcome(rc, &ps, r->bytes, &stop);
    if (PM_UNLIKELY(err))
        note_err(cx, err, stop);
}

/* Complete every outstanding request of the direct mode; once something
 * ended the collective, the receives still posted are cancelled rather than
 * waited for. */
static void wait_all(struct pm_cx *cx)
{
    if (cx->deferred) {
        if (cx->stop)
            cx->deferred = false;
        else if (cx->nreq == 0) {
            recv_now(cx);
            return;
        } else
            post_deferred(cx);
    }
    bool cancelled = false;
    for (int i = 0; i < cx->nreq; i++) {
        if (cx->stop && !cancelled) {
            for (int j = i; j < cx->nreq; j++)
                if (cx->req[j].recv)
                    proust_cancel(cx->req[j].preq);
            cancelled = true;
        }
        struct pm_cx_req *r = &cx->req[i];
        proust_status_t ps;
        int rc = proust_wait(&r->preq, &ps);
        if (rc == PROUST_OK && r->unpack_to)
            pm_type_unpack(r->packed, ps.count, r->unpack_to, r->count, r->t, 0);
        if (r->recv) {
            bool stop;
            int err = pm_coll_recv_outcome(rc, &ps, r->bytes, &stop);
            if (PM_UNLIKELY(err))
                note_err(cx, err, stop);
        } else if (rc != PROUST_OK && rc != PROUST_ERR_CANCELED) {
            set_err(cx, pm_error_from_proust(rc));
        }
    }
    cx->nreq = 0;
}

int pm_cx_finish(struct pm_cx *cx, MPI_Request *request)
{
    return cx->s ? pm_cx_start(cx, request) : pm_cx_end(cx);
}

void pm_cx_room(struct pm_cx *cx)
{
    if (!cx->s && cx->nreq + (cx->deferred ? 1 : 0) >= PM_CX_MAXREQ)
        wait_all(cx);
}

int pm_cx_end(struct pm_cx *cx)
{
    wait_all(cx);
    while (cx->mem) {
        struct pm_cx_mem *m = cx->mem;
        cx->mem = m->next;
        free(m);
    }
    if (cx->arena_held) {
        /* Grow the arena so that the next call of this size fits. */
        if (cx->arena_want > tls_cap && cx->arena_want <= ARENA_MAX) {
            unsigned char *n = malloc(cx->arena_want);
            if (n) {
                free(tls_arena);
                tls_arena = n;
                tls_cap = cx->arena_want;
                pthread_once(&arena_once, arena_key_init);
                if (arena_key_ok)
                    pthread_setspecific(arena_key, n);
            }
        }
        tls_busy = false;
        cx->arena_held = false;
    }
    return cx->err;
}

/* ---- Scratch ------------------------------------------------------------------ */

void *pm_cx_scratch(struct pm_cx *cx, size_t bytes)
{
    if (cx->stop)
        return NULL;
    if (cx->s) {
        void *p = pm_sched_scratch(cx->s, bytes);
        if (!p)
            set_err(cx, MPI_ERR_NO_MEM);
        return p;
    }
    size_t need = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (!need)
        need = ALIGN;
    if (!cx->arena_held && !tls_busy) {
        tls_busy = true; /* nested use (a user op calling MPI) takes the heap */
        cx->arena_held = true;
        cx->arena_used = 0;
    }
    if (cx->arena_held) {
        cx->arena_want += need;
        if (cx->arena_used + need <= tls_cap) {
            void *p = tls_arena + cx->arena_used;
            cx->arena_used += need;
            return p;
        }
    }
    struct pm_cx_mem *m = malloc(sizeof *m + need);
    if (!m) {
        set_err(cx, MPI_ERR_NO_MEM);
        return NULL;
    }
    m->next = cx->mem;
    cx->mem = m;
    return m->data;
}

void *pm_cx_tmp(struct pm_cx *cx, MPI_Count count, MPI_Datatype dt)
{
    const struct pm_datatype *t = pm_type_get(dt);
    if (!t) {
        set_err(cx, MPI_ERR_TYPE);
        return NULL;
    }
    if (count <= 0)
        return pm_cx_scratch(cx, 1);
    MPI_Aint ext = t->extent, aext = ext < 0 ? -ext : ext;
    size_t span = (size_t)t->true_extent + (size_t)(count - 1) * (size_t)aext;
    void *raw = pm_cx_scratch(cx, span);
    if (!raw)
        return NULL;
    /* lowest byte of the data: true_lb of the first (or, extent < 0, last)
     * instance */
    MPI_Aint low = t->true_lb + (ext < 0 ? (MPI_Aint)(count - 1) * ext : 0);
    return pm_at(raw, -low);
}

/* ---- Steps --------------------------------------------------------------------- */

int pm_cx_send(struct pm_cx *cx, const void *buf, MPI_Count count, MPI_Datatype dt, int peer)
{
    if (cx->stop)
        return cx->err;
    if (cx->s)
        return set_err(cx, cx->local ? pm_sched_send_local(cx->s, buf, count, dt, peer)
                                     : pm_sched_send(cx->s, buf, count, dt, peer));
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    post_deferred(cx);
    if (cx->stop)
        return cx->err;
    const struct pm_datatype *t = pm_type_get(dt);
    size_t bytes = (size_t)count * (size_t)t->size;
    const void *p = pm_at(buf, t->true_lb);
    if (!t->contiguous && bytes) {
        void *pk = pm_cx_scratch(cx, bytes);
        if (!pk)
            return cx->err;
        pm_type_pack(buf, count, t, 0, pk, bytes);
        p = pk;
    }
    int world = pm_cx_world(cx, peer);
    proust_tag_t tag = cx->stag | (cx->err ? PM_COLL_FAILED_BIT : 0);
    int rc;
    if (bytes <= PM_CX_BLOCKING_SEND) {
        rc = proust_send(pm_session, p, bytes, world, tag);
    } else {
        if (cx->nreq == PM_CX_MAXREQ)
            return set_err(cx, MPI_ERR_INTERN);
        struct pm_cx_req *r = &cx->req[cx->nreq];
        r->recv = false;
        r->unpack_to = NULL;
        rc = proust_isend(pm_session, p, bytes, world, tag, &r->preq);
        if (rc == PROUST_OK)
            cx->nreq++;
    }
    return rc == PROUST_OK ? MPI_SUCCESS : set_err(cx, pm_error_from_proust(rc));
}

int pm_cx_recv(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt, int peer)
{
    if (cx->stop)
        return cx->err;
    if (cx->s)
        return set_err(cx, cx->local ? pm_sched_recv_local(cx->s, buf, count, dt, peer)
                                     : pm_sched_recv(cx->s, buf, count, dt, peer));
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    post_deferred(cx);
    if (cx->stop)
        return cx->err;
    if (cx->nreq == PM_CX_MAXREQ)
        return set_err(cx, MPI_ERR_INTERN);
    const struct pm_datatype *t = pm_type_get(dt);
    size_t bytes = (size_t)count * (size_t)t->size;
    struct pm_cx_req *r = &cx->req[cx->nreq];
    void *p = pm_at(buf, t->true_lb);
    r->recv = true;
    r->unpack_to = NULL;
    if (!t->contiguous && bytes) {
        p = pm_cx_scratch(cx, bytes);
        if (!p)
            return cx->err;
        r->unpack_to = buf;
        r->count = count;
        r->t = t;
        r->packed = p;
    }
    r->buf = p;
    r->bytes = bytes;
    r->world = pm_cx_world(cx, peer);
    cx->deferred = true; /* posted by the next step, or received by the fence */
    return MPI_SUCCESS;
}

int pm_cx_reduce(struct pm_cx *cx, const void *in, void *inout, MPI_Count count,
                 MPI_Datatype dt, MPI_Op op)
{
    if (cx->stop)
        return cx->err;
    if (cx->s)
        return set_err(cx, pm_sched_reduce(cx->s, in, inout, count, dt, op));
    return set_err(cx, pm_coll_reduce(op, in, inout, count, dt, pm_type_get(dt)));
}

int pm_cx_copy(struct pm_cx *cx, const void *src, MPI_Count scount, MPI_Datatype stype,
               void *dst, MPI_Count rcount, MPI_Datatype rtype)
{
    if (cx->stop)
        return cx->err;
    if (cx->s) {
        const struct pm_datatype *st = pm_type_get(stype), *rt = pm_type_get(rtype);
        /* the schedule's first step, and small: done now, as its start
         * would do first (nothing precedes it, nothing runs meanwhile) */
        if (pm_sched_empty(cx->s) && st && rt && st->contiguous && rt->contiguous &&
            scount >= 0 && rcount >= 0 && (size_t)scount * st->size <= PM_CX_EAGER_COPY) {
            int rc = pm_coll_copy(src, scount, st, dst, rcount, rt);
            if (rc == MPI_ERR_TRUNCATE) { /* a mismatch, as when the step runs */
                pm_sched_note(cx->s, rc);
                return cx->err;
            }
            return set_err(cx, rc);
        }
        return set_err(cx, pm_sched_copy(cx->s, src, scount, stype, dst, rcount, rtype));
    }
    const struct pm_datatype *st = pm_type_get(stype);
    /* A large copy (a root's own block) overlaps the receive before it. */
    if (cx->deferred && (size_t)scount * (size_t)st->size > PM_CX_BLOCKING_SEND)
        post_deferred(cx);
    return local_err(cx, pm_coll_copy(src, scount, st, dst, rcount, pm_type_get(rtype)));
}

int pm_cx_fence(struct pm_cx *cx)
{
    if (cx->s) {
        if (cx->err)
            return cx->err;
        return set_err(cx, pm_sched_fence(cx->s));
    }
    wait_all(cx);
    return cx->err;
}
