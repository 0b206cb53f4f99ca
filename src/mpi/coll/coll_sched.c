/*
 * coll_sched.c — the collective schedule engine behind coll.h.
 *
 * A schedule is an array of steps cut into rounds by fences. Starting a
 * round runs its steps in order: local steps (reduce, copy) execute there
 * and then, sends and receives are posted as proust requests whose
 * completion callback (proust_request_monitor) counts the round down. The
 * thread whose callback ends a round starts the next one, so a nonblocking
 * collective advances whenever any thread drives the engine.
 *
 * Concurrency: `pending` counts the round's outstanding requests plus one
 * guard held while the round is being started, so exactly one thread sees
 * it reach zero and owns the next round; `refs` keeps the schedule alive for
 * its owner (request or blocking caller), the thread starting a round and
 * every request in flight; `lock` orders the bookkeeping that error
 * handling shares with the callbacks (which request is posted, which done).
 *
 * Failure: the first request that completes with an error that ends the
 * collective (a peer died: pm_coll_recv_outcome) ends it at once with that
 * error; the round's receives still posted are cancelled, and the memory
 * stays until every request in flight has called back. A mismatch (a piece
 * of another size, a local copy that does not fit, a sender that had
 * failed) is kept in `soft`: the schedule runs to its end, its later sends
 * carrying PM_COLL_FAILED_BIT, and completes with it.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coll_algo.h"

enum { ST_SEND, ST_RECV, ST_REDUCE, ST_COPY, ST_FENCE };

struct pm_step {
    unsigned char kind;
    bool done;                     /* request called back (under s->lock) */
    int peer;                      /* world rank */
    const void *src;               /* send buffer, reduce `in`, copy source */
    void *dst;                     /* receive buffer, reduce `inout`, copy target */
    MPI_Count count, count2;
    struct pm_datatype *t, *t2;    /* referenced while the schedule lives */
    MPI_Datatype dt;               /* reduce: the handle the operation gets */
    MPI_Op op;
    void *pack;                    /* noncontiguous send/recv: packed bytes */
    size_t bytes;
    proust_request_t *preq;        /* posted and not yet released */
    struct pm_sched *s;
};

struct scratch {
    struct scratch *next;
    size_t size;
    alignas(max_align_t) unsigned char data[];
};

/* Large scratch blocks of finished schedules, kept for the next ones: a
 * nonblocking reduction of 4 MiB otherwise faulted in fresh pages every
 * call (1024 of them) where the blocking call's arena (coll_cx.c) is
 * reused. At most SCRATCH_KEEP bytes are kept, in SCRATCH_SLOTS blocks. */
#define SCRATCH_SLOTS 8
#define SCRATCH_MIN ((size_t)64 << 10)  /* smaller ones come from malloc's bins */
#define SCRATCH_KEEP ((size_t)32 << 20)
static struct {
    atomic_flag lock;
    struct scratch *slot[SCRATCH_SLOTS];
    size_t bytes;
} kept = {.lock = ATOMIC_FLAG_INIT};

/* The smallest kept block of at least `bytes`, or NULL. */
static struct scratch *scratch_take(size_t bytes)
{
    if (bytes < SCRATCH_MIN)
        return NULL;
    pm_lock(&kept.lock);
    int best = -1;
    for (int i = 0; i < SCRATCH_SLOTS; i++)
        if (kept.slot[i] && kept.slot[i]->size >= bytes &&
            (best < 0 || kept.slot[i]->size < kept.slot[best]->size))
            best = i;
    struct scratch *b = NULL;
    if (best >= 0) {
        b = kept.slot[best];
        kept.slot[best] = NULL;
        kept.bytes -= b->size;
    }
    pm_unlock(&kept.lock);
    return b;
}

static void scratch_give(struct scratch *b)
{
    if (b->size >= SCRATCH_MIN) {
        pm_lock(&kept.lock);
        for (int i = 0; i < SCRATCH_SLOTS; i++)
            if (!kept.slot[i] && kept.bytes + b->size <= SCRATCH_KEEP) {
                kept.slot[i] = b;
                kept.bytes += b->size;
                b = NULL;
                break;
            }
        pm_unlock(&kept.lock);
    }
    free(b);
}

struct pm_sched {
    struct pm_comm *c;
    uint64_t stag, rtag;
    struct pm_step *steps;
    int nsteps, cap;
    int cur;                       /* first step of the next round */
    int round_begin, round_end;    /* steps of the round in flight */
    struct scratch *scratch;
    _Atomic int pending;
    _Atomic int refs;
    _Atomic int err;
    _Atomic int soft;              /* first mismatch: reported at the end */
    _Atomic int finished;
    atomic_flag lock;
    struct pm_request *req;        /* nonblocking: completes with the schedule */
    _Atomic int done;              /* blocking: set when finished */
    pm_sleeper_t sleeper;          /* the blocking caller sleeping on done */
    int result;
};

/* Finished schedules kept, with their step arrays, for the next ones: a
 * small nonblocking collective otherwise spent a quarter of its
 * instructions in malloc, calloc, realloc and free (2 ranks, Ialltoall of
 * 8 B: 6 000 a call). At most SCHED_KEEP, of at most SCHED_KEEP_STEPS. */
#define SCHED_KEEP 4
#define SCHED_KEEP_STEPS 64
static struct {
    atomic_flag lock;
    struct pm_sched *slot[SCHED_KEEP];
    int n;
} sched_pool = {.lock = ATOMIC_FLAG_INIT};

/* A cleared schedule, its step array kept; NULL without memory. */
static struct pm_sched *sched_take(void)
{
    struct pm_sched *s = NULL;
    pm_lock(&sched_pool.lock);
    if (sched_pool.n > 0)
        s = sched_pool.slot[--sched_pool.n];
    pm_unlock(&sched_pool.lock);
    if (!s)
        return calloc(1, sizeof *s);
    struct pm_step *steps = s->steps;
    int cap = s->cap;
    memset(s, 0, sizeof *s);
    s->steps = steps;
    s->cap = cap;
    return s;
}

static void sched_keep(struct pm_sched *s)
{
    if (s->cap <= SCHED_KEEP_STEPS) {
        pm_lock(&sched_pool.lock);
        bool taken = sched_pool.n < SCHED_KEEP;
        if (taken)
            sched_pool.slot[sched_pool.n++] = s;
        pm_unlock(&sched_pool.lock);
        if (taken)
            return;
    }
    free(s->steps);
    free(s);
}

/* ---- Building ------------------------------------------------------------ */

_Thread_local int64_t pm_coll_forced_seq = -1;

struct pm_sched *pm_sched_create(struct pm_comm *c)
{
    /* Every rank takes the sequence number, even if the allocation fails,
     * so that later collectives still agree. */
    uint32_t seq;
    if (pm_coll_forced_seq >= 0) {
        seq = (uint32_t)pm_coll_forced_seq & (uint32_t)PM_COLL_SEQ_MASK;
        pm_coll_forced_seq = -1;
    } else {
        seq = pm_coll_next_seq(c);
    }
    struct pm_sched *s = sched_take();
    if (!s)
        return NULL;
    s->c = c;
    pm_comm_retain(c);
    s->stag = c->tag_coll | c->tag_src | seq;
    s->rtag = c->tag_coll | seq;
    atomic_init(&s->refs, 1);
    atomic_flag_clear(&s->lock);
    return s;
}

static void sched_free(struct pm_sched *s)
{
    for (int i = 0; i < s->nsteps; i++) {
        struct pm_step *st = &s->steps[i];
        if (st->t)
            pm_type_release(st->t);
        if (st->t2)
            pm_type_release(st->t2);
        if (st->kind == ST_REDUCE)
            pm_op_release(st->op);
    }
    while (s->scratch) {
        struct scratch *b = s->scratch;
        s->scratch = b->next;
        scratch_give(b);
    }
    pm_comm_release(s->c);
    sched_keep(s);
}

static void sched_release(struct pm_sched *s)
{
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
        sched_free(s);
}

void pm_sched_discard(struct pm_sched *s)
{
    if (s)
        sched_release(s);
}

static struct pm_step *step_add(struct pm_sched *s, int kind)
{
    if (s->nsteps == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        struct pm_step *n = realloc(s->steps, (size_t)cap * sizeof *n);
        if (!n)
            return NULL;
        s->steps = n;
        s->cap = cap;
    }
    struct pm_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (unsigned char)kind;
    st->s = s;
    return st;
}

bool pm_sched_empty(const struct pm_sched *s)
{
    return s->nsteps == 0;
}

void *pm_sched_scratch(struct pm_sched *s, size_t bytes)
{
    struct scratch *b = scratch_take(bytes);
    if (!b && (b = malloc(sizeof *b + (bytes ? bytes : 1))))
        b->size = bytes ? bytes : 1;
    if (!b)
        return NULL;
    b->next = s->scratch;
    s->scratch = b;
    return b->data;
}

static int type_ref(MPI_Datatype dt, MPI_Count count, struct pm_datatype **out)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    struct pm_datatype *t = pm_type_get(dt);
    if (!t)
        return MPI_ERR_TYPE;
    pm_type_retain(t);
    *out = t;
    return MPI_SUCCESS;
}

static int add_comm(struct pm_sched *s, int kind, bool local, const void *buf, MPI_Count count,
                    MPI_Datatype dt, int peer)
{
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    const struct pm_group *g = local ? s->c->local : s->c->remote;
    if (peer < 0 || peer >= g->size)
        return MPI_ERR_RANK;
    struct pm_datatype *t;
    int rc = type_ref(dt, count, &t);
    if (rc)
        return rc;
    struct pm_step *st = step_add(s, kind);
    if (!st) {
        pm_type_release(t);
        return MPI_ERR_NO_MEM;
    }
    st->t = t;
    st->peer = g->world[peer];
    st->count = count;
    st->bytes = (size_t)count * (size_t)t->size;
    if (kind == ST_SEND)
        st->src = buf;
    else
        st->dst = (void *)(uintptr_t)buf;
    if (!t->contiguous && st->bytes) {
        st->pack = pm_sched_scratch(s, st->bytes);
        if (!st->pack)
            return MPI_ERR_NO_MEM; /* the step stays, harmless: never started */
    }
    return MPI_SUCCESS;
}

int pm_sched_send(struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt, int peer)
{
    return add_comm(s, ST_SEND, false, buf, count, dt, peer);
}

int pm_sched_recv(struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer)
{
    return add_comm(s, ST_RECV, false, buf, count, dt, peer);
}

int pm_sched_send_local(struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt,
                        int peer)
{
    return add_comm(s, ST_SEND, true, buf, count, dt, peer);
}

int pm_sched_recv_local(struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer)
{
    return add_comm(s, ST_RECV, true, buf, count, dt, peer);
}

int pm_sched_reduce(struct pm_sched *s, const void *in, void *inout, MPI_Count count,
                    MPI_Datatype dt, MPI_Op op)
{
    if (!pm_op_get(op))
        return MPI_ERR_OP;
    struct pm_datatype *t;
    int rc = type_ref(dt, count, &t);
    if (rc)
        return rc;
    struct pm_step *st = step_add(s, ST_REDUCE);
    if (!st) {
        pm_type_release(t);
        return MPI_ERR_NO_MEM;
    }
    pm_op_retain(op);
    st->t = t;
    st->dt = dt;
    st->op = op;
    st->src = in;
    st->dst = inout;
    st->count = count;
    return MPI_SUCCESS;
}

int pm_sched_copy(struct pm_sched *s, const void *src, MPI_Count scount, MPI_Datatype stype,
                  void *dst, MPI_Count rcount, MPI_Datatype rtype)
{
    struct pm_datatype *t, *t2;
    int rc = type_ref(stype, scount, &t);
    if (rc)
        return rc;
    rc = type_ref(rtype, rcount, &t2);
    if (rc) {
        pm_type_release(t);
        return rc;
    }
    /* a copy that does not fit fails when it runs (pm_coll_copy), as a
     * mismatch: the other ranks' steps still get their messages */
    struct pm_step *st = step_add(s, ST_COPY);
    if (!st) {
        pm_type_release(t);
        pm_type_release(t2);
        return MPI_ERR_NO_MEM;
    }
    st->t = t;
    st->t2 = t2;
    st->src = src;
    st->dst = dst;
    st->count = scount;
    st->count2 = rcount;
    return MPI_SUCCESS;
}

int pm_sched_fence(struct pm_sched *s)
{
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == ST_FENCE)
        return MPI_SUCCESS;
    return step_add(s, ST_FENCE) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* ---- Local steps (also used by the direct mode) ------------------------------ */

int pm_coll_copy(const void *src, MPI_Count scount, const struct pm_datatype *st, void *dst,
                 MPI_Count rcount, const struct pm_datatype *rt)
{
    size_t bytes = (size_t)scount * (size_t)st->size;
    if (bytes > (size_t)rcount * (size_t)rt->size)
        return MPI_ERR_TRUNCATE;
    if (!bytes)
        return MPI_SUCCESS;
    if (st->contiguous && rt->contiguous) {
        void *d = pm_at(dst, rt->true_lb);
        const void *sp = pm_at(src, st->true_lb);
        if ((const char *)d + bytes <= (const char *)sp || (const char *)sp + bytes <= (const char *)d)
            proust_copy(d, sp, bytes);
        else if (d != sp)
            memmove(d, sp, bytes);
    } else if (rt->contiguous) {
        pm_type_pack(src, scount, st, 0, pm_at(dst, rt->true_lb), bytes);
    } else if (st->contiguous) {
        pm_type_unpack(pm_at(src, st->true_lb), bytes, dst, rcount, rt, 0);
    } else {
        /* both noncontiguous: stream through a bounce buffer */
        unsigned char bounce[8192];
        size_t off = 0;
        while (off < bytes) {
            size_t n = pm_type_pack(src, scount, st, off, bounce, sizeof bounce);
            if (!n)
                return MPI_ERR_INTERN;
            pm_type_unpack(bounce, n, dst, rcount, rt, off);
            off += n;
        }
    }
    return MPI_SUCCESS;
}

int pm_coll_reduce(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype dt,
                   const struct pm_datatype *t)
{
    if (count <= 0)
        return MPI_SUCCESS;
    struct pm_op *o = pm_op_get(op);
    if (t->predefined || (o && pm_op_is_user(o)) || pm_type_get(dt) == t)
        return pm_op_apply(op, in, inout, count, dt);
    /* The application freed the derived type while the collective ran: the
     * handle is gone, so reduce its elements as the predefined type they all
     * are (packed arrays of it, when packing keeps its C layout). */
    int b = t->basic;
    if (b <= 0 || b >= PROUST_MPI_NUM_PREDEFINED_TYPES ||
        pm_type_predef[b].size != pm_type_predef[b].extent)
        return MPI_ERR_TYPE;
    size_t bytes = (size_t)count * (size_t)t->size;
    unsigned char *a = malloc(bytes * 2);
    if (!a)
        return MPI_ERR_NO_MEM;
    pm_type_pack(in, count, t, 0, a, bytes);
    pm_type_pack(inout, count, t, 0, a + bytes, bytes);
    int rc = pm_op_apply(op, a, a + bytes, count * t->nelements, PROUST_MPI_TYPE(b));
    if (rc == MPI_SUCCESS)
        pm_type_unpack(a + bytes, bytes, inout, count, t, 0);
    free(a);
    return rc;
}

/* ---- Running ----------------------------------------------------------------- */

static void sched_advance(struct pm_sched *s);

/* End the collective (first call wins): complete its request or wake the
 * blocking caller. The schedule may be freed by its owner right after. */
static void sched_finish(struct pm_sched *s, int err)
{
    if (atomic_exchange_explicit(&s->finished, 1, memory_order_acq_rel))
        return;
    if (s->req) {
        struct pm_request *r = s->req;
        pm_status_empty(&r->status);
        pm_request_set_done(r, err);
    } else {
        s->result = err;
        pm_flag_set(&s->done, &s->sleeper, 1);
    }
}

/* The first error ends the collective: record it, cancel the receives of
 * the round still posted (in batches, outside the lock: cancelling runs
 * callbacks), and complete the request. The round cannot end meanwhile:
 * the caller is a callback that has not counted itself down yet, or the
 * thread starting the round, which holds the guard. */
static void fail(struct pm_sched *s, int err, struct pm_step *self)
{
    int none = 0;
    pm_lock(&s->lock);
    bool first = atomic_compare_exchange_strong(&s->err, &none, err);
    int begin = s->round_begin, end = s->round_end < s->nsteps ? s->round_end : s->nsteps;
    pm_unlock(&s->lock);
    for (int i = begin; first && i < end; i += 64) {
        proust_request_t *cancel[64];
        int n = 0;
        pm_lock(&s->lock);
        for (int j = i; j < end && j < i + 64; j++) {
            struct pm_step *st = &s->steps[j];
            if (st != self && st->kind == ST_RECV && st->preq && !st->done)
                cancel[n++] = st->preq;
        }
        pm_unlock(&s->lock);
        for (int k = 0; k < n; k++)
            proust_cancel(cancel[k]);
    }
    sched_finish(s, err);
}

/* Keep the first mismatch (see "Failure" above). */
static void note_soft(struct pm_sched *s, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&s->soft, &none, err);
}

void pm_sched_note(struct pm_sched *s, int err)
{
    if (err)
        note_soft(s, err);
}

static void step_done(proust_request_t *preq, const proust_status_t *ps, void *arg)
{
    (void)preq;
    struct pm_step *st = arg;
    struct pm_sched *s = st->s;
    int e = ps->error;
    if (e == PROUST_OK && st->kind == ST_RECV && st->pack)
        pm_type_unpack(st->pack, ps->count, st->dst, st->count, st->t, 0);
    int err = (e == PROUST_OK || e == PROUST_ERR_CANCELED) ? MPI_SUCCESS : pm_error_from_proust(e);
    if (st->kind == ST_RECV && e != PROUST_ERR_CANCELED) {
        bool stop;
        err = pm_coll_recv_outcome(e, ps, st->bytes, &stop);
        if (err && !stop) {
            note_soft(s, err);
            err = MPI_SUCCESS;
        }
    }
    if (err == MPI_SUCCESS && e == PROUST_ERR_CANCELED && !atomic_load(&s->err))
        err = MPI_ERR_INTERN; /* cancelled although nothing failed */
    pm_lock(&s->lock);
    st->done = true;
    pm_unlock(&s->lock);
    if (err)
        fail(s, err, st);
    if (atomic_fetch_sub_explicit(&s->pending, 1, memory_order_acq_rel) == 1)
        sched_advance(s);
    sched_release(s);
}

/* Post a send or receive step; the round counted it in pending and refs
 * already (sched_advance). */
static void start_comm(struct pm_sched *s, struct pm_step *st)
{
    proust_request_t *preq = NULL;
    int rc;
    if (st->kind == ST_SEND) {
        const void *buf = pm_at(st->src, st->t->true_lb);
        if (st->pack) {
            pm_type_pack(st->src, st->count, st->t, 0, st->pack, st->bytes);
            buf = st->pack;
        }
        proust_tag_t tag = s->stag | (atomic_load_explicit(&s->soft, memory_order_relaxed)
                                          ? PM_COLL_FAILED_BIT : 0);
        rc = proust_isend(pm_session, buf, st->bytes, st->peer, tag, &preq);
    } else {
        void *buf = st->pack ? st->pack : pm_at(st->dst, st->t->true_lb);
        rc = proust_irecv(pm_session, buf, st->bytes, st->peer, s->rtag, PM_COLL_RECV_MASK,
                          &preq);
    }
    if (rc == PROUST_OK) {
        rc = proust_request_monitor(preq, step_done, st);
        if (rc != PROUST_OK) { /* cannot happen: a fresh request */
            proust_wait(&preq, NULL);
            preq = NULL;
        }
    }
    if (rc != PROUST_OK) {
        fail(s, pm_error_from_proust(rc), st);
        atomic_fetch_sub_explicit(&s->pending, 1, memory_order_relaxed); /* guard still held */
        atomic_fetch_sub_explicit(&s->refs, 1, memory_order_relaxed);
        return;
    }
    pm_lock(&s->lock);
    st->preq = preq;
    bool cancel = st->kind == ST_RECV && !st->done && atomic_load(&s->err);
    pm_unlock(&s->lock);
    if (cancel)
        proust_cancel(preq);
}

static void start_local(struct pm_sched *s, struct pm_step *st)
{
    int rc;
    if (st->kind == ST_REDUCE)
        rc = pm_coll_reduce(st->op, st->src, st->dst, st->count, st->dt, st->t);
    else
        rc = pm_coll_copy(st->src, st->count, st->t, st->dst, st->count2, st->t2);
    if (rc == MPI_ERR_TRUNCATE && st->kind == ST_COPY)
        note_soft(s, rc);
    else if (rc)
        fail(s, rc, st);
}

/* Release the engine requests of the round that just ended (every callback
 * has run its course: no one else touches them now). */
static void release_round(struct pm_sched *s)
{
    for (int i = s->round_begin; i < s->round_end; i++) {
        struct pm_step *st = &s->steps[i];
        if (st->preq)
            proust_request_free(&st->preq);
    }
}

/* The previous round is complete and the caller holds a reference: run
 * rounds until one has to wait for the network, or the schedule ends. */
static void sched_advance(struct pm_sched *s)
{
    for (;;) {
        release_round(s);
        int err = atomic_load(&s->err);
        if (err || s->cur >= s->nsteps) {
            sched_finish(s, err ? err : atomic_load(&s->soft));
            return;
        }
        /* the round's sends and receives, counted at once (one atomic for
         * all, not one each) plus the guard; a step not posted uncounts */
        int i = s->cur, comms = 0;
        for (int j = i; j < s->nsteps && s->steps[j].kind != ST_FENCE; j++)
            comms += s->steps[j].kind == ST_SEND || s->steps[j].kind == ST_RECV;
        atomic_store_explicit(&s->pending, 1 + comms, memory_order_relaxed);
        if (comms)
            atomic_fetch_add_explicit(&s->refs, comms, memory_order_relaxed);
        pm_lock(&s->lock);
        s->round_begin = i;
        s->round_end = s->nsteps; /* bounds the cancel scan while starting */
        pm_unlock(&s->lock);
        for (; i < s->nsteps && s->steps[i].kind != ST_FENCE; i++) {
            if (atomic_load_explicit(&s->err, memory_order_relaxed))
                break;
            struct pm_step *st = &s->steps[i];
            if (st->kind == ST_SEND || st->kind == ST_RECV) {
                start_comm(s, st);
                comms--;
            } else {
                start_local(s, st);
            }
        }
        pm_lock(&s->lock);
        s->round_end = i;
        pm_unlock(&s->lock);
        if (comms) { /* an error stopped the round: the steps never posted */
            atomic_fetch_sub_explicit(&s->pending, comms, memory_order_relaxed);
            atomic_fetch_sub_explicit(&s->refs, comms, memory_order_relaxed);
        }
        s->cur = i < s->nsteps ? i + 1 : i;
        if (atomic_fetch_sub_explicit(&s->pending, 1, memory_order_acq_rel) != 1)
            return;
    }
}

static void sched_coll_free(void *coll)
{
    sched_release((struct pm_sched *)coll);
}

int pm_sched_start(struct pm_sched *s, MPI_Request *request)
{
    struct pm_request *r = pm_request_new(PM_REQ_COLL, s->c);
    if (!r) {
        pm_sched_discard(s);
        return MPI_ERR_NO_MEM;
    }
    r->coll = s; /* the request owns the creation reference */
    r->coll_free = sched_coll_free;
    s->req = r;
    *request = r->handle;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    sched_advance(s);
    sched_release(s);
    return MPI_SUCCESS;
}

int pm_sched_run(struct pm_sched *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    sched_advance(s);
    sched_release(s);
    pm_wait_flag(&s->done, &s->sleeper);
    int err = s->result;
    sched_release(s);
    return err;
}
