/*
 * bsend_buffer.c — the buffers of buffered mode and the buffered send.
 *
 * A buffered send copies (packs) the message into a buffer and sends it
 * from there with a plain engine send, so it completes locally at once.
 * MPI-4.1 §3.6 gives three scopes of buffer: a communicator's, a session's
 * (its communicators use it), the process's (MPI_Buffer_attach); a send uses
 * the first of them that is attached. A user buffer takes each message's
 * packed size plus MPI_BSEND_OVERHEAD (the accounting the standard tells
 * users to size buffers with), first fit; the bookkeeping lives outside it,
 * so its alignment does not matter. MPI_BUFFER_AUTOMATIC: each message gets
 * its own allocation, freed when it has left.
 *
 * Space is given back by the engine's completion callback when the send
 * has left. Every message has a number; a flush waits until no message
 * numbered up to the last one placed before it remains, so messages placed
 * later by other threads do not hold it up. A communicator's message holds
 * a reference on the communicator, so its buffer outlives it.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p2p.h"

/* One message in a buffer: [off, off + span) of a user buffer, or its own
 * allocation (automatic: the data follows this header). */
struct bseg {
    size_t off, span;
    uint64_t seq;             /* placed seq-th in its buffer */
    struct bseg *prev, *next;
    struct pm_bbuf *owner;
    struct pm_comm *hold;     /* a communicator's buffer: reference held */
};
#define SEG_HEADER ((sizeof(struct bseg) + 15) & ~(size_t)15)

/* An MPI_*_iflush request waiting for messages up to `upto` to leave. */
struct bflush {
    uint64_t upto;
    struct pm_request *req;
    struct bflush *next;
};

struct pm_bbuf {
    pthread_mutex_t lock;
    char *base;               /* user buffer, or MPI_BUFFER_AUTOMATIC */
    size_t size, used;
    bool attached, detaching;
    uint64_t placed;          /* messages ever placed */
    struct bseg *head;        /* messages not yet sent; user buffer: by offset */
    struct bflush *flushes;
};

struct pm_bbuf pm_bbuf_process = {.lock = PTHREAD_MUTEX_INITIALIZER};

void pm_p2p_backoff(unsigned *idle)
{
    unsigned n = ++*idle;
    if (n < 64)
        return; /* messages usually arrive within a few polls */
    if (n < 4096) {
        sched_yield(); /* the peer we wait for may need this core */
        return;
    }
    struct timespec nap = {0, 50000};
    nanosleep(&nap, NULL);
}

struct pm_bbuf *pm_bbuf_get(struct pm_bbuf *_Atomic *slot)
{
    struct pm_bbuf *b = atomic_load_explicit(slot, memory_order_acquire);
    if (b)
        return b;
    struct pm_bbuf *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return NULL;
    pthread_mutex_init(&fresh->lock, NULL);
    if (atomic_compare_exchange_strong(slot, &b, fresh))
        return fresh;
    pthread_mutex_destroy(&fresh->lock); /* another thread made it first */
    free(fresh);
    return b;
}

void pm_bbuf_free(struct pm_bbuf *b)
{
    if (!b)
        return;
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* The lowest number still in the buffer (UINT64_MAX: none). Locked. */
static uint64_t oldest(const struct pm_bbuf *b)
{
    uint64_t low = UINT64_MAX;
    for (const struct bseg *s = b->head; s; s = s->next)
        if (s->seq < low)
            low = s->seq;
    return low;
}

static void link_before(struct pm_bbuf *b, struct bseg *s, struct bseg *prev, struct bseg *it)
{
    s->prev = prev;
    s->next = it;
    if (prev)
        prev->next = s;
    else
        b->head = s;
    if (it)
        it->prev = s;
}

/* Room for `span` bytes in a user buffer, first fit; false when none.
 * Locked. */
static bool reserve(struct pm_bbuf *b, struct bseg *s, size_t span)
{
    size_t pos = 0;
    struct bseg *prev = NULL, *it = b->head;
    for (; it; prev = it, it = it->next) {
        if (it->off - pos >= span)
            break;
        pos = it->off + it->span;
    }
    if (!it && (pos > b->size || b->size - pos < span))
        return false;
    s->off = pos;
    s->span = span;
    link_before(b, s, prev, it);
    b->used += span;
    return true;
}

/* A flush request's condition holds: complete it (whoever of this and
 * MPI_Request_free comes last frees it, as for every PM_REQ_ASYNC). */
static void flush_done(struct pm_request *r)
{
    if (pm_flag_set(&r->done, &r->sleeper, 1) & 2)
        pm_request_free(r);
}

static void release(struct bseg *s)
{
    struct pm_bbuf *b = s->owner;
    struct bflush *ready = NULL;
    pthread_mutex_lock(&b->lock);
    if (s->prev)
        s->prev->next = s->next;
    else
        b->head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    if (b->base != MPI_BUFFER_AUTOMATIC)
        b->used -= s->span;
    if (b->flushes) {
        uint64_t low = oldest(b);
        for (struct bflush **p = &b->flushes; *p;) {
            struct bflush *f = *p;
            if (f->upto < low) {
                *p = f->next;
                f->next = ready;
                ready = f;
            } else {
                p = &f->next;
            }
        }
    }
    pthread_mutex_unlock(&b->lock);
    while (ready) {
        struct bflush *f = ready;
        ready = f->next;
        flush_done(f->req);
        free(f);
    }
    if (s->hold)
        pm_comm_release(s->hold);
    free(s);
}

/* The engine's completion callback of a buffered message: its space is
 * free again. A send that failed (dead peer) has nobody left to tell. */
static void bsend_done(proust_request_t *req, const proust_status_t *status, void *arg)
{
    (void)req;
    (void)status;
    release((struct bseg *)arg);
}

enum place { PLACED, NOT_ATTACHED, NO_ROOM };

/* Place a message of `bytes` in b: *s (allocated here) and where its data
 * goes. */
static enum place place(struct pm_bbuf *b, size_t bytes, struct bseg **out, char **data,
                        bool *busy)
{
    pthread_mutex_lock(&b->lock);
    if (!b->attached || b->detaching) {
        pthread_mutex_unlock(&b->lock);
        return NOT_ATTACHED;
    }
    bool automatic = b->base == MPI_BUFFER_AUTOMATIC;
    struct bseg *s = malloc(automatic ? SEG_HEADER + bytes : sizeof *s);
    if (!s) {
        pthread_mutex_unlock(&b->lock);
        *busy = false;
        return NO_ROOM;
    }
    if (automatic) {
        s->off = 0;
        s->span = bytes;
        link_before(b, s, NULL, b->head);
        *data = (char *)s + SEG_HEADER;
    } else if (reserve(b, s, bytes + MPI_BSEND_OVERHEAD)) {
        *data = b->base + s->off;
    } else {
        *busy = b->head != NULL;
        pthread_mutex_unlock(&b->lock);
        free(s);
        return NO_ROOM;
    }
    s->seq = ++b->placed;
    s->owner = b;
    s->hold = NULL;
    pthread_mutex_unlock(&b->lock);
    *out = s;
    return PLACED;
}

static int done_request(struct pm_comm *c, MPI_Comm comm, const char *fname,
                        struct pm_request **out)
{
    struct pm_request *r = pm_request_new(PM_REQ_DONE, c);
    if (!r)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory for the request", fname);
    pm_status_empty(&r->status);
    pm_request_set_done(r, MPI_SUCCESS);
    *out = r;
    return MPI_SUCCESS;
}

/* Where a buffered send on c goes: its communicator's buffer, else its
 * session's, else the process's -- the first attached. */
static int place_for(const char *fname, MPI_Comm comm, struct pm_comm *c, size_t bytes,
                     struct bseg **s, char **data)
{
    struct pm_bbuf *scopes[3] = {atomic_load_explicit(&c->bbuf, memory_order_acquire),
                                 c->session ? pm_session_bbuf(c->session) : NULL,
                                 &pm_bbuf_process};
    for (int i = 0; i < 3; i++) {
        struct pm_bbuf *b = scopes[i];
        if (!b)
            continue;
        for (int tries = 0;; tries++) {
            bool busy = false;
            enum place p = place(b, bytes, s, data, &busy);
            if (p == PLACED) {
                if (i == 0) {
                    pm_comm_retain(c);
                    (*s)->hold = c;
                }
                return MPI_SUCCESS;
            }
            if (p == NOT_ATTACHED)
                break;
            /* Sends that already left free their space from the engine's
             * progress: give them a few chances before refusing. */
            if (!busy || tries >= 64) {
                pthread_mutex_lock(&b->lock);
                size_t size = b->size, used = b->used;
                pthread_mutex_unlock(&b->lock);
                return pm_error(comm, MPI_ERR_BUFFER,
                                "%s: the attached %s buffer (%zu bytes, %zu in use by pending "
                                "buffered sends) has no room for a message of %zu bytes + "
                                "MPI_BSEND_OVERHEAD (%d)",
                                fname, i == 0 ? "communicator" : i == 1 ? "session" : "process",
                                size, used, bytes, MPI_BSEND_OVERHEAD);
            }
            proust_progress(pm_session);
        }
    }
    return pm_error(comm, MPI_ERR_BUFFER,
                    "%s: no buffer attached (MPI_Buffer_attach, MPI_Comm_attach_buffer or "
                    "MPI_Session_attach_buffer) for a buffered send of %zu bytes",
                    fname, bytes);
}

int pm_bsend_start(const char *fname, MPI_Comm comm, struct pm_comm *c, const void *buf,
                   MPI_Count count, struct pm_datatype *t, int dest, int tag,
                   struct pm_request **out)
{
    if (dest == MPI_PROC_NULL)
        return out ? done_request(c, comm, fname, out) : MPI_SUCCESS;
    size_t bytes = (size_t)count * (size_t)t->size;
    struct bseg *s = NULL;
    char *data = NULL;
    int rc = place_for(fname, comm, c, bytes, &s, &data);
    if (rc != MPI_SUCCESS)
        return rc;
    if (bytes) {
        if (t->contiguous)
            proust_copy(data, (const char *)buf + t->true_lb, bytes);
        else
            pm_type_pack(buf, count, t, 0, data, bytes);
    }
    proust_request_t *preq = NULL;
    proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
    int prc = proust_isend(pm_session, data, bytes, pm_comm_peer(c, dest), ptag, &preq);
    if (prc != PROUST_OK) {
        release(s);
        return pm_error(comm, pm_error_from_proust(prc), "%s: sending %zu bytes to rank %d: %s",
                        fname, bytes, dest, proust_strerror(prc));
    }
    /* The callback gives the space back (at once if the send is done). */
    if (proust_request_monitor(preq, bsend_done, s) != PROUST_OK) {
        proust_wait(&preq, NULL);
        release(s);
    } else {
        proust_request_free(&preq);
    }
    return out ? done_request(c, comm, fname, out) : MPI_SUCCESS;
}

int pm_bbuf_attach(struct pm_bbuf *b, void *buffer, size_t size)
{
    pthread_mutex_lock(&b->lock);
    if (b->attached || b->detaching) {
        pthread_mutex_unlock(&b->lock);
        return MPI_ERR_BUFFER;
    }
    b->base = buffer;
    b->size = buffer == MPI_BUFFER_AUTOMATIC ? 0 : size;
    b->used = 0;
    b->attached = true;
    pthread_mutex_unlock(&b->lock);
    return MPI_SUCCESS;
}

/* Wait until no message numbered up to `upto` is in b. */
static void wait_sent(struct pm_bbuf *b, uint64_t upto)
{
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&b->lock);
        bool gone = oldest(b) > upto;
        pthread_mutex_unlock(&b->lock);
        if (gone)
            return;
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
    }
}

int pm_bbuf_detach(struct pm_bbuf *b, void **buffer, size_t *size)
{
    *buffer = NULL;
    *size = 0;
    if (!b)
        return MPI_SUCCESS;
    pthread_mutex_lock(&b->lock);
    if (!b->attached) {
        pthread_mutex_unlock(&b->lock);
        return MPI_SUCCESS;
    }
    if (b->detaching) {
        pthread_mutex_unlock(&b->lock);
        return MPI_ERR_BUFFER;
    }
    b->detaching = true; /* new buffered sends pass it by from here on */
    uint64_t upto = b->placed;
    pthread_mutex_unlock(&b->lock);
    wait_sent(b, upto);
    pthread_mutex_lock(&b->lock);
    *buffer = b->base;
    *size = b->size;
    b->base = NULL;
    b->size = 0;
    b->attached = false;
    b->detaching = false;
    pthread_mutex_unlock(&b->lock);
    return MPI_SUCCESS;
}

void pm_bbuf_flush(struct pm_bbuf *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->lock);
    uint64_t upto = b->placed;
    pthread_mutex_unlock(&b->lock);
    wait_sent(b, upto);
}

int pm_bbuf_iflush(struct pm_bbuf *b, struct pm_comm *c, MPI_Request *request)
{
    struct pm_request *r = pm_request_new(PM_REQ_ASYNC, c);
    struct bflush *f = malloc(sizeof *f);
    if (!r || !f) {
        if (r)
            pm_request_free(r);
        free(f);
        return MPI_ERR_NO_MEM;
    }
    pm_status_empty(&r->status);
    *request = r->handle;
    bool waits = false;
    if (b) {
        pthread_mutex_lock(&b->lock);
        f->upto = b->placed;
        if (oldest(b) <= f->upto) {
            f->req = r;
            f->next = b->flushes;
            b->flushes = f;
            waits = true;
        }
        pthread_mutex_unlock(&b->lock);
    }
    if (!waits) {
        free(f);
        flush_done(r);
    }
    return MPI_SUCCESS;
}
