/*
 * part.c — partitioned communication (MPI-4.0 §4): MPI_Psend_init,
 * MPI_Precv_init, MPI_Pready, MPI_Pready_range, MPI_Pready_list,
 * MPI_Parrived. Start, wait, test and free go through persistent.c.
 *
 * A partitioned send travels as messages: one per partition (runs of
 * neighbouring partitions when there are more than PART_MAX_MSGS, 4096). A message
 * leaves from the thread whose MPI_Pready completes it, so the first
 * partitions are on the wire while the application still fills the last.
 * The receive posts one engine receive per message straight into the user's
 * buffer (into a packed copy for noncontiguous types, unpacked partition by
 * partition), at MPI_Start; the engine moves them whenever it progresses --
 * on the progress thread, when there is one, while the application
 * computes. Completion callbacks mark each message arrived and count the
 * round down; the last completes the round's request (PM_REQ_ASYNC), which
 * persistent.c holds as the active operation.
 *
 * Matching follows the init calls' order per (communicator, peer, tag), as
 * the standard asks: Psend_init sends a setup message on the side channel of
 * the communicator's point-to-point space (PM_SIDE_BIT, the user's tag) and
 * Precv_init posts its receive, so the engine's ordered matching pairs them.
 * The setup tells the receiver the sender's message layout and the channel
 * number that tags the data messages (side channel of the collective space:
 * channel << PART_MSG_BITS | message).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"

/* At most 4096 messages a round (more partitions go by runs of
 * neighbours), so that the data tag keeps 16 bits for channels: 65536
 * partitioned sends may be alive in a process. */
#define PART_MSG_BITS 12
#define PART_MAX_MSGS (1u << PART_MSG_BITS)
#define PART_CHANNELS (1u << (PM_TAG_BITS - PART_MSG_BITS))
#define PART_MAGIC 0x50617274u /* "Part" */

/* What Psend_init tells the matching receive. */
struct part_setup {
    uint32_t magic;
    uint32_t channel;      /* tags the data messages */
    uint32_t nmsg;         /* messages per round */
    uint32_t unused;
    uint64_t total;        /* bytes of one round */
    uint64_t msg_bytes;    /* bytes of every message but the last */
};

/* The argument of a data message's completion callback. */
struct part_msg {
    struct pm_part *p;
    uint32_t index;
};

enum { SETUP_WAIT = -1 }; /* setup_state: waiting, else an MPI error class */

struct pm_part {
    _Atomic int refs;            /* the request, and each engine operation in flight */
    bool send;
    struct pm_comm *c;           /* reference held */
    char *buf;
    int partitions;
    MPI_Count count;             /* elements per partition */
    struct pm_datatype *t;       /* reference held */
    int peer, tag;               /* as given; peer may be MPI_PROC_NULL */
    size_t part_bytes, total;    /* packed bytes of a partition, of a round */
    char *packed;                /* noncontiguous types: the round packed, else NULL */
    /* The message layout: chosen by the sender, learnt from the setup by the
     * receiver. */
    uint32_t channel, nmsg, parts_per_msg;
    bool has_channel;            /* send: `channel` is ours until the end */
    size_t msg_bytes;
    struct part_msg *msgs;       /* nmsg callback arguments */
    struct part_setup setup;     /* sent, or received into */
    /* The round in progress. */
    _Atomic int active;          /* started and not yet completed */
    struct pm_request *round;    /* its request */
    _Atomic int pending;         /* messages of the round not yet complete */
    _Atomic int round_err;       /* first error of the round */
    _Atomic unsigned char *ready;    /* send: partition marked ready */
    _Atomic uint32_t *msg_ready;     /* send: partitions ready in each message */
    _Atomic unsigned char *arrived;  /* receive: message landed (or failed) */
    _Atomic unsigned char *unpacked; /* receive, noncontiguous: 0, 1 unpacking, 2 done */
    /* Receive: the setup, and the posting of a round's receives, which
     * either Start or the setup's arrival does, whichever comes last. */
    pthread_mutex_t lock;
    int setup_state;             /* SETUP_WAIT, MPI_SUCCESS or the error class */
    int mismatch;                /* the sender's total is not ours: the error class */
    _Atomic int posted;          /* this round's receives are posted */
};

/* ---- Channel numbers: round robin, so that a number is reused as late as
 * possible (a late message of a freed channel then finds no new one). */
static pthread_mutex_t channel_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t channel_used[PART_CHANNELS / 64];
static uint32_t channel_next;

static bool channel_take(uint32_t *out)
{
    bool ok = false;
    pthread_mutex_lock(&channel_lock);
    for (uint32_t i = 0; i < PART_CHANNELS && !ok; i++) {
        uint32_t ch = (channel_next + i) % PART_CHANNELS;
        if (!(channel_used[ch / 64] & ((uint64_t)1 << (ch % 64)))) {
            channel_used[ch / 64] |= (uint64_t)1 << (ch % 64);
            channel_next = ch + 1;
            *out = ch;
            ok = true;
        }
    }
    pthread_mutex_unlock(&channel_lock);
    return ok;
}

static void channel_give(uint32_t ch)
{
    pthread_mutex_lock(&channel_lock);
    channel_used[ch / 64] &= ~((uint64_t)1 << (ch % 64));
    pthread_mutex_unlock(&channel_lock);
}

/* ---- Lifetime ------------------------------------------------------------ */
static void part_retain(struct pm_part *p)
{
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
}

static void part_release(struct pm_part *p)
{
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (p->has_channel)
        channel_give(p->channel);
    pthread_mutex_destroy(&p->lock);
    pm_type_release(p->t);
    pm_comm_release(p->c);
    free(p->packed);
    free(p->msgs);
    free((void *)p->ready);
    free((void *)p->msg_ready);
    free((void *)p->arrived);
    free((void *)p->unpacked);
    free(p);
}

void pm_part_free(struct pm_part *p)
{
    if (p)
        part_release(p);
}

/* Watch an engine operation: `cb` runs once it completes, holding a
 * reference on p. A request the engine cannot watch is waited for here. */
static void watch(struct pm_part *p, proust_request_t *preq, proust_request_cb_t cb, void *arg)
{
    part_retain(p);
    if (proust_request_monitor(preq, cb, arg) != PROUST_OK) {
        proust_status_t st;
        st.error = proust_wait(&preq, &st);
        cb(NULL, &st, arg);
        return;
    }
    proust_request_free(&preq);
}

/* The callback arguments of p's nmsg messages; false when out of memory. */
static bool msgs_make(struct pm_part *p)
{
    if (!(p->msgs = calloc(p->nmsg, sizeof *p->msgs)))
        return false;
    for (uint32_t m = 0; m < p->nmsg; m++)
        p->msgs[m] = (struct part_msg){.p = p, .index = m};
    return true;
}

/* Record the first error of the round. */
static void round_fail(struct pm_part *p, int err)
{
    int expected = MPI_SUCCESS;
    atomic_compare_exchange_strong(&p->round_err, &expected, err);
}

/* ---- Receive side: unpacking a noncontiguous partition ------------------- */
static void unpack_partition(struct pm_part *p, int i)
{
    unsigned char expected = 0;
    if (atomic_compare_exchange_strong(&p->unpacked[i], &expected, 1)) {
        MPI_Aint stride = (MPI_Aint)p->count * p->t->extent;
        pm_type_unpack(p->packed + (size_t)i * p->part_bytes, p->part_bytes,
                       p->buf + (MPI_Aint)i * stride, p->count, p->t, 0);
        atomic_store_explicit(&p->unpacked[i], 2, memory_order_release);
        return;
    }
    while (atomic_load_explicit(&p->unpacked[i], memory_order_acquire) != 2)
        sched_yield(); /* another thread is unpacking it */
}

/* The messages that carry receive partition i: [*lo, *hi]. Empty
 * partitions still wait for the sender's (empty) messages, shared out in
 * proportion: a partition has not arrived before the sender readied it. */
static void partition_messages(const struct pm_part *p, int i, uint32_t *lo, uint32_t *hi)
{
    if (p->part_bytes == 0) {
        *lo = (uint32_t)((uint64_t)i * p->nmsg / (uint64_t)p->partitions);
        *hi = (uint32_t)(((uint64_t)i + 1) * p->nmsg / (uint64_t)p->partitions);
        *hi = *hi > *lo ? *hi - 1 : *lo;
        return;
    }
    if (p->msg_bytes == 0) { /* the sender sends no bytes (sizes do not match) */
        *lo = 0;
        *hi = p->nmsg - 1;
        return;
    }
    size_t first = (size_t)i * p->part_bytes, last = first + p->part_bytes - 1;
    /* (clamped: when the sizes do not match, ours may reach past the sender's) */
    *lo = (uint32_t)(first / p->msg_bytes < p->nmsg ? first / p->msg_bytes : p->nmsg - 1);
    *hi = (uint32_t)(last / p->msg_bytes < p->nmsg ? last / p->msg_bytes : p->nmsg - 1);
}

/* ---- Rounds ------------------------------------------------------------- */
/* The last message of the round completed: unpack what Parrived has not,
 * then complete the round's request (after which p may be started again). */
static void round_finish(struct pm_part *p)
{
    struct pm_request *r = p->round;
    int err = atomic_load(&p->round_err);
    if (err != MPI_SUCCESS)
        r->status.MPI_ERROR = err;
    else if (!p->send && p->packed)
        for (int i = 0; i < p->partitions; i++)
            unpack_partition(p, i);
    /* bit 1: MPI_Request_free came first, the request is ours to free */
    if (pm_flag_set(&r->done, &r->sleeper, 1) & 2)
        pm_request_free(r);
}

static void message_done(struct pm_part *p)
{
    if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1)
        round_finish(p);
}

/* A data message was sent, or received (marked arrived, failed or not). */
static void message_over(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct part_msg *m = arg;
    struct pm_part *p = m->p;
    if (st->error != PROUST_OK)
        round_fail(p, pm_error_from_proust(st->error));
    if (!p->send)
        atomic_store_explicit(&p->arrived[m->index], 1, memory_order_release);
    message_done(p);
    part_release(p);
}

static proust_tag_t data_tag(const struct pm_part *p, uint32_t msg, bool sending)
{
    return p->c->tag_coll | PM_SIDE_BIT | (sending ? p->c->tag_src : 0) |
           ((proust_tag_t)p->channel << PART_MSG_BITS) | msg;
}

/* Bytes and packed-stream offset of message m. */
static size_t message_span(const struct pm_part *p, uint32_t m, size_t *off)
{
    *off = (size_t)m * p->msg_bytes;
    size_t left = p->total - *off;
    return left < p->msg_bytes ? left : p->msg_bytes;
}

/* Post the round's receives (lock held, setup known). When the sizes do
 * not match, the messages are still received, into nothing: the sender's
 * round completes and nothing stays behind in the engine. */
static void post_receives(struct pm_part *p)
{
    int src = pm_comm_peer(p->c, p->peer);
    if (p->mismatch != MPI_SUCCESS)
        round_fail(p, p->mismatch);
    for (uint32_t m = 0; m < p->nmsg; m++) {
        size_t off, len = message_span(p, m, &off);
        char *dst = p->packed ? p->packed + off : p->buf + p->t->true_lb + off;
        if (p->mismatch != MPI_SUCCESS)
            len = 0;
        proust_request_t *preq;
        int prc = proust_irecv(pm_session, dst, len, src, data_tag(p, m, false),
                               PM_CTX_MASK | PM_TAG_MASK, &preq);
        if (prc != PROUST_OK) {
            round_fail(p, pm_error_from_proust(prc));
            atomic_store_explicit(&p->arrived[m], 1, memory_order_release);
            message_done(p);
            continue;
        }
        watch(p, preq, message_over, &p->msgs[m]);
    }
    atomic_store_explicit(&p->posted, 1, memory_order_release);
}

/* Fail a receive round before anything was posted (lock held). */
static void fail_round(struct pm_part *p, int err)
{
    round_fail(p, err);
    atomic_store(&p->pending, 1);
    message_done(p);
}

/* Is the setup sound? MPI_SUCCESS or the error class. */
static int check_setup(const struct pm_part *p, const proust_status_t *st)
{
    const struct part_setup *s = &p->setup;
    if (st->error != PROUST_OK)
        return pm_error_from_proust(st->error);
    if (st->count != sizeof *s || s->magic != PART_MAGIC || s->channel >= PART_CHANNELS ||
        s->nmsg == 0 || s->nmsg > PART_MAX_MSGS)
        return MPI_ERR_INTERN; /* not a setup message: refuse it */
    if (s->total > 0 && (s->msg_bytes == 0 || (s->total - 1) / s->msg_bytes + 1 != s->nmsg))
        return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

static void setup_arrived(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct pm_part *p = arg;
    pthread_mutex_lock(&p->lock);
    int rc = check_setup(p, st);
    if (rc == MPI_SUCCESS) {
        p->channel = p->setup.channel;
        p->nmsg = p->setup.nmsg;
        p->msg_bytes = p->setup.msg_bytes;
        if (p->setup.total != p->total)
            p->mismatch = p->setup.total > p->total ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
        p->arrived = calloc(p->nmsg, sizeof *p->arrived);
        if (!msgs_make(p) || !p->arrived)
            rc = MPI_ERR_NO_MEM;
    }
    p->setup_state = rc;
    if (atomic_load(&p->active) && !atomic_load(&p->posted)) {
        if (rc == MPI_SUCCESS) {
            atomic_store(&p->pending, (int)p->nmsg);
            post_receives(p);
        } else {
            fail_round(p, rc);
        }
    }
    pthread_mutex_unlock(&p->lock);
    part_release(p);
}

static void setup_sent(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    (void)st; /* a send that failed fails the data messages behind it too */
    part_release(arg);
}

int pm_part_start(struct pm_part *p, struct pm_request **out)
{
    struct pm_request *r = pm_request_new(PM_REQ_ASYNC, p->c);
    if (!r)
        return MPI_ERR_NO_MEM;
    r->status.MPI_SOURCE = p->peer;
    r->status.MPI_TAG = p->tag;
    r->status.MPI_ERROR = MPI_SUCCESS;
    r->status.proust_bytes = p->send ? 0 : (MPI_Count)p->total;
    r->status.proust_cancelled = 0;
    p->round = r;
    atomic_store(&p->round_err, MPI_SUCCESS);
    *out = r;
    if (p->send) {
        for (int i = 0; i < p->partitions; i++)
            atomic_store_explicit(&p->ready[i], 0, memory_order_relaxed);
        for (uint32_t m = 0; m < p->nmsg; m++)
            atomic_store_explicit(&p->msg_ready[m], 0, memory_order_relaxed);
        atomic_store(&p->pending, (int)p->nmsg);
    }
    if (p->peer == MPI_PROC_NULL) {
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.proust_bytes = 0;
        atomic_store(&p->active, 1);
        pm_request_set_done(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if (p->send) {
        atomic_store(&p->active, 1);
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&p->lock);
    if (p->unpacked)
        for (int i = 0; i < p->partitions; i++)
            atomic_store_explicit(&p->unpacked[i], 0, memory_order_relaxed);
    for (uint32_t m = 0; p->arrived && m < p->nmsg; m++)
        atomic_store_explicit(&p->arrived[m], 0, memory_order_relaxed);
    atomic_store(&p->posted, 0);
    atomic_store(&p->active, 1);
    if (p->setup_state == MPI_SUCCESS) {
        atomic_store(&p->pending, (int)p->nmsg);
        post_receives(p);
    } else if (p->setup_state != SETUP_WAIT) {
        fail_round(p, p->setup_state);
    } /* else the setup's arrival posts them */
    pthread_mutex_unlock(&p->lock);
    return MPI_SUCCESS;
}

void pm_part_complete(struct pm_part *p)
{
    atomic_store(&p->active, 0);
}

/* ---- Init ---------------------------------------------------------------- */
static int make(const char *fn, bool send, const void *buf, int partitions, MPI_Count count,
                MPI_Datatype dt, int peer, int tag, MPI_Comm comm, MPI_Info info,
                MPI_Request *request)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t = NULL;
    if (!send && c && peer == MPI_ANY_SOURCE)
        return pm_error(comm, MPI_ERR_RANK, "%s: MPI_ANY_SOURCE is not allowed in a "
                        "partitioned receive (MPI-4.0 §4.2.2)", fn);
    if (!send && c && tag == MPI_ANY_TAG)
        return pm_error(comm, MPI_ERR_TAG, "%s: MPI_ANY_TAG is not allowed in a partitioned "
                        "receive (MPI-4.0 §4.2.2)", fn);
    int rc = send ? pm_check_send(fn, comm, c, count, dt, peer, tag, &t)
                  : pm_check_recv(fn, comm, c, count, dt, peer, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (partitions < 1)
        return pm_error(comm, MPI_ERR_ARG, "%s: %d partitions (at least 1)", fn, partitions);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    MPI_Count unit = t->extent > t->size ? t->extent : t->size;
    if (count > 0 && unit > 0 && (MPI_Count)partitions > PTRDIFF_MAX / count / unit)
        return pm_error(comm, MPI_ERR_COUNT, "%s: %d partitions of %lld elements overflow the "
                        "address space", fn, partitions, (long long)count);
    struct pm_part *p = calloc(1, sizeof *p);
    if (!p)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    atomic_init(&p->refs, 1);
    p->send = send;
    p->c = c;
    pm_comm_retain(c);
    p->buf = (char *)buf;
    p->partitions = partitions;
    p->count = count;
    p->t = t;
    pm_type_retain(t);
    p->peer = peer;
    p->tag = tag;
    p->part_bytes = (size_t)count * (size_t)t->size;
    p->total = p->part_bytes * (size_t)partitions;
    pthread_mutex_init(&p->lock, NULL);
    p->setup_state = SETUP_WAIT;
    bool ok = true;
    if (!t->contiguous && p->total > 0) {
        ok = (p->packed = malloc(p->total)) != NULL;
        if (ok && !send)
            ok = (p->unpacked = calloc((size_t)partitions, sizeof *p->unpacked)) != NULL;
    }
    if (ok && send) {
        p->nmsg = (uint32_t)(partitions < (int)PART_MAX_MSGS ? partitions : (int)PART_MAX_MSGS);
        p->parts_per_msg = (uint32_t)((partitions + p->nmsg - 1) / p->nmsg);
        p->nmsg = (uint32_t)((partitions + p->parts_per_msg - 1) / p->parts_per_msg);
        p->msg_bytes = p->parts_per_msg * p->part_bytes;
        p->ready = calloc((size_t)partitions, sizeof *p->ready);
        p->msg_ready = calloc(p->nmsg, sizeof *p->msg_ready);
        ok = p->ready && p->msg_ready && msgs_make(p);
    }
    if (!ok) {
        part_release(p);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory for %d partitions", fn,
                        partitions);
    }
    if (send && peer != MPI_PROC_NULL && !(p->has_channel = channel_take(&p->channel))) {
        part_release(p);
        return pm_error(comm, MPI_ERR_OTHER, "%s: %u partitioned sends are alive already, the "
                        "most one process may hold", fn, PART_CHANNELS);
    }
    rc = pm_persistent_new_part(c, p, request);
    if (rc != MPI_SUCCESS) {
        part_release(p);
        return pm_error(comm, rc, "%s: out of memory for the request", fn);
    }
    if (peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    /* The setup message: its matching pairs this init with the peer's. */
    proust_tag_t stag = c->tag_pt2pt | PM_SIDE_BIT | (proust_tag_t)tag;
    proust_request_t *preq;
    int prc;
    if (send) {
        p->setup = (struct part_setup){.magic = PART_MAGIC, .channel = p->channel,
                                       .nmsg = p->nmsg, .total = p->total,
                                       .msg_bytes = p->msg_bytes};
        prc = proust_isend(pm_session, &p->setup, sizeof p->setup, pm_comm_peer(c, peer),
                           stag | c->tag_src, &preq);
        if (prc == PROUST_OK)
            watch(p, preq, setup_sent, p);
    } else {
        prc = proust_irecv(pm_session, &p->setup, sizeof p->setup, pm_comm_peer(c, peer), stag,
                           PM_CTX_MASK | PM_TAG_MASK, &preq);
        if (prc == PROUST_OK)
            watch(p, preq, setup_arrived, p);
    }
    if (prc != PROUST_OK) {
        int err = pm_error_from_proust(prc);
        p->setup_state = err; /* every round fails with it */
        return pm_error(comm, err, "%s: the %s of the setup %s rank %d failed", fn,
                        send ? "send" : "receive", send ? "to" : "from", peer);
    }
    return MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Psend_init");
    return make("MPI_Psend_init", true, buf, partitions, count, datatype, dest, tag, comm, info,
                request);
}
PM_WEAK(Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Precv_init");
    return make("MPI_Precv_init", false, buf, partitions, count, datatype, source, tag, comm,
                info, request);
}
PM_WEAK(Precv_init)

/* ---- Pready ------------------------------------------------------------- */
/* The active partitioned send behind a handle, or raise. */
static int get_send(const char *fn, MPI_Request h, struct pm_part **out)
{
    struct pm_request *r = pm_request_get(h);
    struct pm_part *p = r ? pm_persistent_part(r) : NULL;
    if (!p || !p->send)
        return pm_error(r ? r->comm->handle : MPI_COMM_WORLD, MPI_ERR_REQUEST,
                        "%s: request %#x is not a partitioned send", fn, (unsigned)h);
    if (!atomic_load_explicit(&p->active, memory_order_acquire))
        return pm_error(p->c->handle, MPI_ERR_REQUEST,
                        "%s: the partitioned send %#x is not started", fn, (unsigned)h);
    *out = p;
    return MPI_SUCCESS;
}

static int check_partition(const char *fn, const struct pm_part *p, int i)
{
    if (i < 0 || i >= p->partitions)
        return pm_error(p->c->handle, MPI_ERR_ARG, "%s: partition %d outside 0..%d", fn, i,
                        p->partitions - 1);
    return MPI_SUCCESS;
}

/* Send message m, whose partitions are all ready. */
static void send_message(struct pm_part *p, uint32_t m)
{
    size_t off, len = message_span(p, m, &off);
    const char *data = p->buf + p->t->true_lb + off;
    if (p->packed) {
        MPI_Aint stride = (MPI_Aint)p->count * p->t->extent;
        int first = (int)(m * p->parts_per_msg);
        for (size_t done = 0; done < len; done += p->part_bytes, first++)
            pm_type_pack(p->buf + (MPI_Aint)first * stride, p->count, p->t, 0,
                         p->packed + off + done, p->part_bytes);
        data = p->packed + off;
    }
    proust_request_t *preq;
    int prc = proust_isend(pm_session, data, len, pm_comm_peer(p->c, p->peer),
                           data_tag(p, m, true), &preq);
    if (prc != PROUST_OK) {
        round_fail(p, pm_error_from_proust(prc));
        message_done(p);
        return;
    }
    watch(p, preq, message_over, &p->msgs[m]);
}

static int mark_ready(const char *fn, struct pm_part *p, int i)
{
    if (atomic_exchange_explicit(&p->ready[i], 1, memory_order_relaxed))
        return pm_error(p->c->handle, MPI_ERR_ARG,
                        "%s: partition %d is marked ready already in this round", fn, i);
    if (p->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    uint32_t m = (uint32_t)i / p->parts_per_msg;
    uint32_t first = m * p->parts_per_msg, n = p->parts_per_msg;
    if (first + n > (uint32_t)p->partitions)
        n = (uint32_t)p->partitions - first;
    /* acq_rel: the thread that completes the message sees every partition
     * its other threads wrote */
    if (atomic_fetch_add_explicit(&p->msg_ready[m], 1, memory_order_acq_rel) + 1 == n)
        send_message(p, m);
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    PM_CHECK_INIT("MPI_Pready");
    struct pm_part *p;
    int rc = get_send("MPI_Pready", request, &p);
    if (rc == MPI_SUCCESS)
        rc = check_partition("MPI_Pready", p, partition);
    return rc == MPI_SUCCESS ? mark_ready("MPI_Pready", p, partition) : rc;
}
PM_WEAK(Pready)

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    PM_CHECK_INIT("MPI_Pready_range");
    struct pm_part *p;
    int rc = get_send("MPI_Pready_range", request, &p);
    if (rc == MPI_SUCCESS)
        rc = check_partition("MPI_Pready_range", p, partition_low);
    if (rc == MPI_SUCCESS)
        rc = check_partition("MPI_Pready_range", p, partition_high);
    if (rc == MPI_SUCCESS && partition_low > partition_high)
        rc = pm_error(p->c->handle, MPI_ERR_ARG, "MPI_Pready_range: low partition %d above "
                      "high partition %d", partition_low, partition_high);
    for (int i = partition_low; rc == MPI_SUCCESS && i <= partition_high; i++)
        rc = mark_ready("MPI_Pready_range", p, i);
    return rc;
}
PM_WEAK(Pready_range)

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    PM_CHECK_INIT("MPI_Pready_list");
    struct pm_part *p;
    int rc = get_send("MPI_Pready_list", request, &p);
    if (rc != MPI_SUCCESS)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return pm_error(p->c->handle, MPI_ERR_ARG, "MPI_Pready_list: %s", length < 0 ?
                        "negative length" : "array_of_partitions is NULL");
    /* every index checked before any is marked: a bad one marks none */
    for (int k = 0; rc == MPI_SUCCESS && k < length; k++)
        rc = check_partition("MPI_Pready_list", p, array_of_partitions[k]);
    for (int k = 0; rc == MPI_SUCCESS && k < length; k++)
        rc = mark_ready("MPI_Pready_list", p, array_of_partitions[k]);
    return rc;
}
PM_WEAK(Pready_list)

/* ---- Parrived ------------------------------------------------------------ */
/* Have all the messages of receive partition i landed? */
static bool partition_arrived(struct pm_part *p, int i)
{
    if (!atomic_load_explicit(&p->posted, memory_order_acquire))
        return false;
    uint32_t lo, hi;
    partition_messages(p, i, &lo, &hi);
    for (uint32_t m = lo; m <= hi; m++)
        if (!atomic_load_explicit(&p->arrived[m], memory_order_acquire))
            return false;
    return true;
}

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    PM_CHECK_INIT("MPI_Parrived");
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Parrived: flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct pm_request *r = pm_request_get(request);
    struct pm_part *p = r ? pm_persistent_part(r) : NULL;
    if (!p || p->send)
        return pm_error(r ? r->comm->handle : MPI_COMM_WORLD, MPI_ERR_REQUEST,
                        "MPI_Parrived: request %#x is not a partitioned receive",
                        (unsigned)request);
    int rc = check_partition("MPI_Parrived", p, partition);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!atomic_load_explicit(&p->active, memory_order_acquire) || p->peer == MPI_PROC_NULL) {
        *flag = 1; /* inactive: nothing pending */
        return MPI_SUCCESS;
    }
    bool got = partition_arrived(p, partition);
    if (!got) {
        proust_progress(pm_session);
        got = partition_arrived(p, partition);
    }
    /* a failed round says so at once (its receives may never be posted):
     * no loop on Parrived waits for it forever */
    int err = atomic_load(&p->round_err);
    *flag = got || err != MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        return pm_error(p->c->handle, err, "MPI_Parrived: the partitioned receive from rank %d "
                        "failed", p->peer);
    if (!got)
        return MPI_SUCCESS;
    if (p->packed)
        unpack_partition(p, partition);
    return MPI_SUCCESS;
}
PM_WEAK(Parrived)
