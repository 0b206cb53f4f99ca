/*
 * request.h — requests (sends, receives, user requests of sources): their
 * fields, flags, life cycle and completion (request.c), and the request
 * lists that queue them.
 */
#ifndef PROUST_CORE_REQUEST_H
#define PROUST_CORE_REQUEST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/list.h"
#include "core/chunk.h"
#include "progress/progress.h"
#include "proust.h"

struct proust_session;
struct proust__offer;
struct proust__inmsg;
struct proust__event;

/* ---- requests ------------------------------------------------------------ */
enum proust__req_kind { PROUST__REQ_SEND = 1, PROUST__REQ_RECV = 2, PROUST__REQ_USER = 3 };

/* request->where */
enum { PROUST__IN_NONE = 0, PROUST__IN_POSTED, PROUST__IN_WAITING, PROUST__IN_RECEIVING };

/* request->flags bits (atomic) */
#define PROUST__RF_DONE 0x1u  /* completed, status final */
#define PROUST__RF_CB 0x2u    /* a callback is installed */
#define PROUST__RF_FREED 0x4u /* the user released it without waiting */
#define PROUST__RF_CB_DONE 0x8u /* the callback has returned */
#define PROUST__RF_HELPED 0x10u /* counted in prog.helped until it completes */
#define PROUST__RF_CANCELING 0x20u /* a send asked its receiver to drop the message:
                                      not finished before the answer (cancel.c) */
#define PROUST__RF_ANSWERED 0x40u /* that answer came (set once, never cleared) */

/* Finished from the user's point of view: complete, its cancellation (if
 * any) answered, and its callback (if any) has returned, so the request
 * may be released. */
static inline bool proust__request_finished(unsigned flags)
{
    return (flags & PROUST__RF_DONE) && !(flags & PROUST__RF_CANCELING) &&
           (!(flags & PROUST__RF_CB) || (flags & PROUST__RF_CB_DONE));
}

struct proust_request {
    _Atomic unsigned flags;
    uint8_t kind;
    uint8_t where;     /* which list holds it: PROUST__IN_* */
    bool in_use;       /* allocated (not in a free list) */
    bool waited;       /* posted by a blocking call, which waits for it at once */
    struct proust_session *session;
    int peer;          /* destination, or requested source (may be ANY) */
    proust_tag_t tag;
    proust_tag_t mask;
    uint16_t nseg;
    /* Send: segments to send. Receive: buffers. seg0 avoids an allocation
     * for plain messages. */
    struct iovec *segs;
    struct iovec seg0;
    size_t total;
    /* Events still needed before completion (segments sent, puts done, ACK
     * received...). Decremented atomically; the one reaching 0 completes. */
    _Atomic int pending;
    _Atomic int error; /* first error seen */
    int remote_owed;   /* sends: answers still owed by the peer (gate lock) */
    /* sends: segments the rail exposed for the receiver's gets (bit i:
     * segment i; only the first 64 are exposed), unexposed at completion */
    _Atomic uint64_t exposed;
    proust_status_t status;
    uint64_t post_order;  /* receives: order of posting, for wildcard matching */
    struct proust_request *next, *prev; /* posted queue links */
    /* receives in a gate's posted index (posted_queue.c): bucket or wild
     * list links, and the order of posting there */
    struct proust_request *hnext, *hprev;
    uint64_t gate_order;
    /* receives: bytes still expected per rendezvous segment */
    _Atomic size_t seg0_left;
    _Atomic size_t *seg_left;
    struct proust__chunk chunk0;        /* the chunk of a plain send */
    struct proust__chunk *chunks;       /* packs: one per segment */
    proust_request_cb_t cb;
    void *cb_arg;
    struct proust_request *deferred_next;
    /* user requests (proust_request_create): their source, their link in
     * its pending list (progress/ptask.c), and data */
    struct proust_ptask *ptask;
    struct proust__pending pending_on;
    void *user_data;
    /* receives: the offer made to the sender (offer.c), under the gate's
     * stripe; NULL for almost all */
    struct proust__offer *offer;
    /* sends being cancelled (cancel.c): the gate's list of them (gate
     * lock), and the receiver's answer (written before RF_ANSWERED) */
    struct proust_request *cancel_next;
    uint64_t cancel_token;
    bool cancel_won;
    /* a receive of our own that takes in an unexpected rendezvous segment
     * from a rail without gets (unexp_pull.c): that message and segment */
    struct proust__inmsg *held_for;
    uint16_t held_seg;
};

/* Doubly-linked request lists (posted queues, waiting sends, receiving). */
static inline void proust__dlist_append(struct proust_request **head, struct proust_request **tail,
                                        struct proust_request *req)
{
    PROUST__LIST_APPEND(*head, *tail, req);
}

static inline void proust__dlist_remove(struct proust_request **head,
                                        struct proust_request **tail, struct proust_request *req)
{
    PROUST__LIST_REMOVE(*head, *tail, req);
}

/* ---- request life cycle (request.c) --------------------------------------- */
/* Field by field, and only what the callers (pt2pt.c, pack.c) do not set
 * themselves: peer, tag, mask, nseg, segs/seg0, total. chunk0 is filled by
 * the send path when used. Also used for requests on a blocking call's
 * stack, which never escape the call. */
static inline void proust__request_init(struct proust_request *req, struct proust_session *s,
                                        int kind)
{
    atomic_init(&req->flags, 0);
    req->where = PROUST__IN_NONE;
    req->in_use = false;
    atomic_init(&req->pending, 0);
    atomic_init(&req->error, PROUST_OK);
    req->remote_owed = 0;
    atomic_init(&req->exposed, 0);
    req->status.source = -1;
    req->status.tag = 0;
    req->status.size = req->status.count = 0;
    req->status.error = PROUST_OK;
    req->next = req->prev = NULL;
    req->seg_left = &req->seg0_left;
    req->chunks = NULL;
    req->cb = NULL;
    req->deferred_next = NULL;
    req->offer = NULL;
    req->cancel_next = NULL;
    req->held_for = NULL;
    req->waited = false;
    req->kind = (uint8_t)kind;
    req->session = s;
}
void proust__requests_init(struct proust_session *s);
/* Free every request of the session, waited for or not. */
void proust__requests_destroy(struct proust_session *s);
struct proust_request *proust__request_alloc(struct proust_session *s, int kind);
/* Make sure the thread's cache holds a request, so that the next
 * proust__request_alloc takes no lock (PROUST_ERR_NOMEM). */
int proust__request_reserve(struct proust_session *s);
/* A one-segment receive's fields (after proust__request_init). */
static inline void proust__recv_fill(struct proust_request *req, void *buf, size_t len,
                                     int source, proust_tag_t tag, proust_tag_t mask)
{
    req->peer = source;
    req->tag = tag;
    req->mask = mask;
    req->nseg = 1;
    req->seg0.iov_base = buf;
    req->seg0.iov_len = len;
    req->segs = &req->seg0;
    req->total = len;
}
void proust__request_release(struct proust_request *req);
/* Record an error (the first one wins). */
void proust__request_set_error(struct proust_request *req, int err);
/* Account one event; completes the request when none remain. */
void proust__request_event_done(struct proust_request *req);
/* Complete now with `status`, whatever events were still outstanding
 * (the peer they waited for failed). */
void proust__request_fail(struct proust_request *req, int status);
/* Complete now (status already filled). */
void proust__request_complete(struct proust_request *req);
/* Run callbacks and deferred frees queued by this thread; call with no lock.
 * Inline: on the fast path there is nothing queued. */
extern _Thread_local struct proust_request *proust__deferred_head;
extern _Thread_local struct proust__event *proust__deferred_events;
void proust__run_deferred_slow(void);
static inline void proust__run_deferred(void)
{
    if (__builtin_expect(proust__deferred_head != NULL || proust__deferred_events != NULL, 0))
        proust__run_deferred_slow();
}
/* Queue a session event for the monitor; delivered by proust__run_deferred,
 * with no lock (nor rail poll flag) held. */
void proust__defer_event(struct proust_session *s, unsigned event,
                         const proust_status_t *envelope);

#endif
