/*
 * engine.h — the engine's internal objects, shared by the files of core/.
 *
 * Locking rules (see docs/ARCHITECTURE.md):
 *   rail poll_lock  <  gate->lock  <  match stripes (in index order)
 *                   <  session->any_lock  <  token lock
 * A thread may take a lock to the right of one it holds, never to the left:
 * the receive path decides under its gate's match stripe and sends its
 * answers (CTS, ACK, FIN) after releasing it. No lock is held while a user
 * callback runs.
 */
#ifndef PROUST_ENGINE_H
#define PROUST_ENGINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "boot/boot.h"
#include "common/lock.h"
#include "common/log.h"
#include "core/wire.h"
#include "drivers/driver.h"
#include "progress/progress.h"
#include "proust.h"
#include "strategy/strategy.h"
#include "topology/placement.h"

#define PROUST__MAX_RAILS 4

struct proust__gate;
struct proust__pending_get;

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
    req->next = NULL;
    req->prev = *tail;
    if (*tail)
        (*tail)->next = req;
    else
        *head = req;
    *tail = req;
}

static inline void proust__dlist_remove(struct proust_request **head,
                                        struct proust_request **tail, struct proust_request *req)
{
    if (req->prev)
        req->prev->next = req->next;
    else
        *head = req->next;
    if (req->next)
        req->next->prev = req->prev;
    else
        *tail = req->prev;
    req->next = req->prev = NULL;
}

/* ---- tokens: name a request (and segment) across the wire ---------------- */
int proust__tokens_init(struct proust_session *s);
uint64_t proust__token_alloc(struct proust_session *s, struct proust_request *req, uint16_t seg);
/* The request a token names, or NULL if stale/unknown (never crashes). */
struct proust_request *proust__token_lookup(struct proust_session *s, uint64_t token,
                                            uint16_t *seg);
void proust__token_release(struct proust_session *s, uint64_t token);
void proust__tokens_destroy(struct proust_session *s);

/* ---- incoming messages: unexpected, or matched but incomplete ------------- */
/* PULLING: an idle pull asked the sender to put the data into our own
 * buffer (unexp_pull.c); not counted in nseg_seen until it lands */
enum { PROUST__SEG_NONE = 0, PROUST__SEG_EAGER, PROUST__SEG_RTS, PROUST__SEG_DONE,
       PROUST__SEG_PULLING };

struct proust__inseg {
    uint8_t state;
    bool pulled; /* EAGER data an idle pull fetched (unexp_pull.c): counts in
                    the session's idle_pulled until released */
    size_t len;  /* segment size as sent */
    void *data;  /* EAGER: private copy of the bytes */
    uint64_t sender_token;
    uint32_t key_len;
    uint8_t key[PROUST__MAX_KEY];
};

struct proust__inmsg {
    struct proust__inmsg *next;
    /* while unexpected (unexp_queue.c): the list's back link, and the
     * links of its bucket in the gate's index */
    struct proust__inmsg *prev, *hnext, *hprev;
    int source;
    uint32_t seq;
    uint16_t nseg;
    uint16_t nseg_seen;
    uint8_t flags;          /* PROUST__CF_SYNC from the first chunk */
    uint64_t sync_token;    /* sender token for the ACK */
    proust_tag_t tag;
    size_t size;            /* whole message size */
    uint64_t arrival;       /* arrival order, for any-source fairness */
    struct proust_request *req; /* NULL while unexpected */
    uint32_t inline_cap;    /* bytes of eager data that fit after seg[] */
    bool cached;            /* a PROUST__INMSG_BLOCK block: back to the cache */
    /* the sender asked to cancel it while an idle pull fetched its data:
     * answered when the data is here (recv_path.c, cancel.c) */
    bool cancel_pending;
    uint64_t cancel_token;
    struct proust__inseg seg[];
};
/* Unexpected small messages are the common case of a receiver that runs
 * behind (a broadcast root, a burst of sends): their descriptor and bytes
 * share one block of this size, recycled through a cache per match stripe.
 * Each stripe keeps its share of PROUST__INMSG_CACHE_BYTES (at least 64
 * blocks), and may keep as much again borrowed from the session, counted
 * with atomics only there: the bursts come from one or a few peers, so one
 * stripe needs the whole budget (8192 unexpected messages from one peer
 * with 2 stripes: half of them went to malloc and back every time, 79 ns a
 * message instead of 55 at 1024, bench/match). A burst of a thousand
 * unexpected messages freed to malloc had glibc trim the heap and fault it
 * in again next time (a fifth of the receiver's time at 1024 messages);
 * 4 MiB hold a burst of 8192. */
#define PROUST__INMSG_BLOCK 512
#define PROUST__INMSG_CACHE_BYTES ((size_t)4 << 20)

/* Chunks that arrived ahead of their turn (seq > expected). */
struct proust__stashed {
    struct proust__stashed *next;
    struct proust__chunk_hdr hdr;
    uint8_t body[];
};

/* ---- gates: everything about one peer ------------------------------------- */
#define PROUST__MAX_PACKET_CHUNKS 42
#define PROUST__SENT_HISTORY 8 /* messages a sender remembers for offers */

/* Remember a message just numbered (gate lock held). */
#define PROUST__NOTE_SENT(g, sq, tg, tok)                                                    \
    do {                                                                                     \
        struct proust__sent *e_ = &(g)->sent[(sq) % PROUST__SENT_HISTORY];                   \
        e_->seq = (sq);                                                                      \
        e_->tag = (tg);                                                                      \
        e_->rts_token = (tok);                                                               \
    } while (0)

struct proust__packet_slot {
    bool busy;
    struct proust__pkt_hdr hdr;
    struct proust__chunk *chunks; /* chunks carried, to credit on send_done */
    struct proust__gate *gate;
    struct iovec iov[1 + 3 * PROUST__MAX_PACKET_CHUNKS];
};

/* Receive-side matching is locked per stripe of gates (gate i belongs to
 * stripe i % nstripes, PROUST_MATCH_STRIPES): threads receiving from
 * different peers, and the poller matching one peer's packets while another
 * thread posts for a second peer, do not meet. What spans peers
 * (ANY_SOURCE receives, probes of any source) takes every stripe, in index
 * order, so the count stays bounded. */
#define PROUST__UNEXP_CLASSES 8 /* unexp_pool.c: 1 KiB .. 128 KiB */
struct proust__match_stripe {
    _Alignas(64) proust__lock_t lock;
    struct proust__inmsg *inmsg_cache; /* free descriptor blocks */
    unsigned inmsg_cached, inmsg_cache_max; /* beyond max: borrowed (below) */
    _Atomic unsigned *inmsg_borrowed;       /* the session's count of those */
    _Atomic size_t *idle_pulled;            /* the session's pulled bytes (unexp_pull.c) */
    /* buffers for unexpected eager bytes (unexp_pool.c) */
    struct proust__pool_link *pool[PROUST__UNEXP_CLASSES];
    size_t pool_bytes, pool_budget;
};

struct proust__gate {
    proust__lock_t lock; /* send side: window, send_seq, packet slots, rail send */
    int peer;
    proust__rail_t *rail;
    size_t rdv_threshold; /* messages of this size and above use rendezvous */
    struct proust__packet_budget budget; /* what one packet may carry */
    unsigned packet_chunks; /* small chunks that fill a packet */
    struct proust__window win;
    uint32_t send_seq;
    struct proust__packet_slot slots[2]; /* one on the wire, one prepared ahead */
    _Atomic int failed; /* 0 or the PROUST_ERR_* that broke the gate */
    /* receive side, under ms->lock (the gate's match stripe) */
    struct proust__match_stripe *ms;
    uint32_t recv_seq;
    struct proust__stashed *stash;
    struct proust__inmsg *active; /* matched messages still receiving segments */
    struct proust__inmsg *unexp_head, *unexp_tail;
    size_t nunexp;
    struct proust__unexp_index *uidx; /* once a scan ran long (unexp_queue.c) */
    struct proust_request *posted_head, *posted_tail;
    size_t nposted;
    struct proust__posted_index *pidx; /* once a scan ran long (posted_queue.c) */
    /* offers this peer declined for an exchange (offer.c): receives left
     * to post without offering, and the next such pause */
    uint16_t offer_skip, offer_backoff;
    _Atomic int pending_work; /* window or driver queue non-empty */
    /* sends waiting for the peer (CTS, FIN, ACK), under gate->lock */
    struct proust_request *waiting_head, *waiting_tail;
    /* matched receives waiting for data (puts), under ms->lock */
    struct proust_request *receiving_head, *receiving_tail;
    /* offers (offer.c), under gate->lock: the last messages sent (tag,
     * and the token of a one-segment RTS), and an offer from the peer not
     * used yet */
    struct proust__sent {
        uint32_t seq;
        proust_tag_t tag;
        uint64_t rts_token; /* 0: not a one-segment rendezvous */
    } sent[PROUST__SENT_HISTORY];
    struct proust__offer_in *offer_in;
    /* sends whose cancellation awaits this peer's answer (cancel.c), under
     * gate->lock */
    struct proust_request *cancels;
};

/* ---- the session ---------------------------------------------------------- */
struct proust__rail_slot {
    proust__rail_t rail;
    struct proust_ptask task; /* the rail as a polling task (its poll flag) */
    int ngates; /* peers it carries; a rail that carries none is not polled */
};

struct proust__token_table; /* token.c */

struct proust_session {
    int rank, size;
    proust__boot_t boot;
    struct proust__rail_slot rails[PROUST__MAX_RAILS];
    int nrails;
    struct proust__gate *gates;
    const struct proust__strategy_ops *strategy;
    size_t rdv_threshold_override; /* 0 = each rail's own */
    struct proust__match_stripe *stripes;
    int nstripes; /* PROUST_MATCH_STRIPES, then at most one per rank */
    /* ANY_SOURCE posted receives: under any_lock; added only with every
     * stripe held too, so an arrival holding its gate's stripe that finds
     * any_posted == 0 knows none can appear before it is done */
    proust__lock_t any_lock;
    struct proust_request *any_head, *any_tail;
    _Atomic unsigned any_posted;
    _Atomic uint64_t post_counter;    /* posting order across queues */
    _Atomic uint64_t arrival_counter; /* arrival order across gates */
    _Atomic unsigned unexpected_count; /* exact under every stripe */
    struct proust__token_table *tokens;
    pthread_mutex_t monitor_lock;
    proust_event_cb_t event_cb;
    void *event_arg;
    unsigned event_mask;
    _Atomic int monitor_wants_unexpected; /* cheap check on the receive path */
    _Atomic int active; /* set between init and finalize */
    _Atomic int gates_pending; /* some gate has work queued */
    _Atomic unsigned inmsg_borrowed; /* descriptor blocks cached beyond stripe shares */
    _Atomic int sends_waiting; /* sends in some gate's waiting list */
    /* unexpected rendezvous messages an idle process may pull in
     * (unexp_pull.c): a hint that some arrived since the last pull, the
     * bytes pulled and not yet received, and PROUST_IDLE_PULL_BYTES */
    _Atomic unsigned unexp_rts;
    _Atomic size_t idle_pulled;
    size_t idle_pull_budget;
    /* rendezvous gets decided while polling, run after the poll (recv_path.c) */
    proust__lock_t gets_lock;
    struct proust__pending_get *_Atomic gets_head; /* peeked without the lock */
    struct proust__pending_get *gets_tail;
    /* offers to use, run after the poll (offer.c), under gets_lock */
    struct proust__pending_use *_Atomic uses_head;
    struct proust__pending_use *uses_tail;
    long peer_check_ms;
    bool oversubscribed; /* more processes on this host than usable cores */
    int usable_cores;    /* cores the process could use at init, before placement */
    /* request memory (request.c) */
    proust__lock_t req_lock;
    struct proust__req_block *req_blocks;
    struct proust_request *req_free;
    uint64_t gen; /* tells thread caches of different sessions apart */
    struct proust__progress prog; /* progress engine (progress/) */
    /* placement (core/place.c): the topology (h NULL if not loaded) and
     * what was decided at init; `placed` once decided */
    struct proust__topo topo;
    struct proust__placement place;
    bool placed;
    hwloc_cpuset_t place_restore; /* the binding to give back at finalize */
    size_t offer_bytes; /* PROUST_OFFER_BYTES: offer receives this large (0: never) */
    _Atomic int offers_writing; /* offers a peer claimed and writes now: waits spin */
    int place_threads; /* progress threads to start (an XML machine's
                          decision is described, not applied) */
    double place_ms;   /* what deciding and applying cost init */
};

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

/* ---- placement (place.c) --------------------------------------------------- */
/* Decide and apply (process binding) after the rails opened, before they
 * connect. PROUST_ERR_INVALID for a bad PROUST_PLACEMENT* setting. */
int proust__place_init(struct proust_session *s);
void proust__place_destroy(struct proust_session *s);
/* The rails' place_memory upcall. */
void proust__place_memory(void *engine, int rail_index, void *addr, size_t len);

/* ---- matching (match.c) ---------------------------------------------------- */
int proust__match_init(struct proust_session *s);  /* after gates_init */
void proust__match_destroy(struct proust_session *s);
static inline void proust__match_lock(struct proust__gate *g)
{
    proust__lock(&g->ms->lock);
}
static inline void proust__match_unlock(struct proust__gate *g)
{
    proust__unlock(&g->ms->lock);
}
/* Every stripe, in index order (ANY_SOURCE posts and probes, failures). */
void proust__match_lock_all(struct proust_session *s);
void proust__match_unlock_all(struct proust_session *s);
/* What matching against `source` needs: its gate's stripe, or every one
 * for PROUST_ANY_SOURCE. */
void proust__match_lock_source(struct proust_session *s, int source);
void proust__match_unlock_source(struct proust_session *s, int source);
/* Queue a posted receive: its gate's stripe held, or every stripe for
 * ANY_SOURCE (any_lock is taken here). */
void proust__posted_append(struct proust_session *s, struct proust_request *req);
/* Remove a posted receive (same locks as posting it). */
void proust__posted_remove(struct proust_session *s, struct proust_request *req);
/* The earliest posted receive matching (source, tag), removed from its
 * queue; source's stripe held. */
struct proust_request *proust__posted_take(struct proust_session *s, int source,
                                           proust_tag_t tag);
/* A gate's own posted queue (posted_queue.c), its stripe held: in posting
 * order, indexed by tag once a scan of it runs long. */
void proust__gate_posted_add(struct proust__gate *g, struct proust_request *req);
void proust__gate_posted_del(struct proust__gate *g, struct proust_request *req);
/* The earliest receive of g's queue accepting `tag` (left queued), or NULL. */
struct proust_request *proust__gate_posted_find(struct proust__gate *g, proust_tag_t tag);
void proust__gate_posted_free(struct proust__gate *g); /* the index, at teardown */
/* A gate's own unexpected messages (unexp_queue.c), its stripe held: in
 * arrival order, indexed by tag once a scan of it runs long. */
void proust__gate_unexp_add(struct proust__gate *g, struct proust__inmsg *m);
void proust__gate_unexp_del(struct proust__gate *g, struct proust__inmsg *m);
/* The earliest message of g's queue accepted by (tag, mask), or NULL. */
struct proust__inmsg *proust__gate_unexp_find(struct proust__gate *g, proust_tag_t tag,
                                              proust_tag_t mask);
void proust__gate_unexp_free(struct proust__gate *g); /* the index, at teardown */
/* The earliest unexpected message matching (source, tag, mask), removed if
 * `take`; held: what proust__match_lock_source(source) takes. */
struct proust__inmsg *proust__unexpected_find(struct proust_session *s, int source,
                                              proust_tag_t tag, proust_tag_t mask, bool take);
/* Its source's stripe held. */
void proust__unexpected_append(struct proust_session *s, struct proust__inmsg *m);
/* Take the unexpected message `seq` (with that tag) of gate g out of
 * matching if all of it has arrived; NULL otherwise (g's stripe held). */
struct proust__inmsg *proust__unexpected_take_seq(struct proust_session *s,
                                                  struct proust__gate *g, uint32_t seq,
                                                  proust_tag_t tag);
/* A descriptor block from / back to a gate's stripe cache (stripe held). */
struct proust__inmsg *proust__inmsg_block_get(struct proust__gate *g);
void proust__inmsg_block_put(struct proust__gate *g, struct proust__inmsg *m);
/* unexp_pool.c: buffers for unexpected eager bytes, per stripe (its lock
 * held); put with the length given to get; ms NULL: just free */
void proust__unexp_pool_init(struct proust__match_stripe *ms, int nstripes);
void *proust__unexp_buf_get(struct proust__match_stripe *ms, size_t len);
void proust__unexp_buf_put(struct proust__match_stripe *ms, void *buf, size_t len);
void proust__unexp_pool_drain(struct proust__match_stripe *ms);
static inline bool proust__tag_match(proust_tag_t msg, proust_tag_t want, proust_tag_t mask)
{
    return ((msg ^ want) & mask) == 0;
}

/* ---- receiver offers (offer.c) ---------------------------------------------- */
/* A nonblocking receive for one source, large enough, posted when nothing
 * else could match that source's next messages, is offered to the sender:
 * it writes the message straight into the buffer (shm: process_vm_writev)
 * while the receiver computes, instead of waiting for the receiver to
 * answer its RTS. The sender uses the offer only for the message the
 * receive will match. The buffer is exposed once, behind a claim the
 * sender takes before writing and the receiver can take back first
 * (rail expose_once / withdraw): a receiver that matches the RTS, or
 * cancels, before the sender started never waits for it. */
enum { PROUST__OFFER_ACT_GET = 1, PROUST__OFFER_ACT_CTS = 2 };
struct proust__offer {
    uint64_t token;   /* receiver token the sender names */
    bool held;        /* an RTS matched: its answer waits for the sender's */
    bool done_early;  /* DONE came before the RTS that matches */
    uint8_t act;      /* held answer: ACT_GET or ACT_CTS (recv_path.c) */
    uint64_t sender_token;
    size_t accepted;
    uint32_t key_len; /* the held RTS's key (ACT_GET) */
    uint8_t key[PROUST__MAX_KEY];
    uint32_t own_key_len; /* the receive buffer's one-shot key; 0: withdrawn */
    uint8_t own_key[PROUST__MAX_KEY];
};
struct proust__offer_in {
    uint32_t seq;
    proust_tag_t tag, mask;
    uint64_t cap, token;
    uint32_t key_len;
    uint8_t key[PROUST__MAX_KEY];
};
/* The OFFER chunk a receiver sends, built under the stripe. */
struct proust__offer_msg {
    uint64_t token;
    uint32_t seq;
    proust_tag_t tag;
    struct proust__offer_body body;
    uint8_t key[PROUST__MAX_KEY];
};
/* Receiver: decide to offer `req`, just queued in its gate (stripe held);
 * true: send *msg with proust__offer_send once the stripe is released. */
bool proust__offer_prepare(struct proust_session *s, struct proust_request *req,
                           struct proust__offer_msg *msg);
void proust__offer_send(struct proust_session *s, int peer, const struct proust__offer_msg *msg);
/* Receiver: the RTS of seg 0 matched an offered receive (stripe held):
 * true if its answer is held because the sender is writing (or the data is
 * already there: *landed); false: the offer was taken back, answer now. */
bool proust__offer_hold(struct proust_session *s, struct proust_request *req, int act,
                        uint64_t sender_token, size_t accepted, const uint8_t *key,
                        uint32_t key_len, bool *landed);
/* Receiver: the sender's DONE for an offer (no lock held); false if the
 * token names no offer. */
bool proust__offer_on_done(struct proust_session *s, int peer, uint64_t token);
/* Forget a receive's offer (stripe held, or the request is no one else's):
 * token released, memory freed; a late answer then names nothing. */
void proust__offer_drop(struct proust_session *s, struct proust_request *req);
/* Receiver: take an offered receive back for proust_cancel (stripe held):
 * true if the sender had not started writing (offer dropped; send a
 * REVOKE with *token so it forgets it), false if it is writing (the
 * receive will complete with its data). */
bool proust__offer_withdraw(struct proust_session *s, struct proust_request *req,
                            uint64_t *token);
/* Receiver: OFFER_NO from peer (no lock held). */
void proust__recv_on_offer_no(struct proust_session *s, int peer, uint64_t token, bool exchange);
/* Sender: OFFER / REVOKE from peer (no lock held). */
void proust__send_on_offer(struct proust_session *s, int peer, const struct proust__chunk_hdr *h,
                           const uint8_t *body);
void proust__send_on_revoke(struct proust_session *s, int peer, uint64_t token);
/* Sender: a message was just numbered (gate lock held): does a pending
 * offer name it? Returns 1: use it (call proust__offer_use after the
 * lock), -1: decline it (call proust__offer_decline), 0: nothing to do. */
int proust__offer_check_send(struct proust__gate *g, struct proust_request *req, uint32_t seq,
                             uint64_t rts_token, struct proust__offer_in **taken);
void proust__offer_use(struct proust_session *s, int peer, uint64_t sender_token,
                       struct proust__offer_in *o);
/* The same, done by the next progress pass: the send call or the poll that
 * decided it does not copy a large message inline (a sender posting a
 * window of sends gets its RTSs out first). */
void proust__offer_queue_use(struct proust_session *s, int peer, uint64_t sender_token,
                             const struct proust__offer_in *o);
int proust__offer_uses_run(struct proust_session *s);
/* Drop the queued uses for `peer` (it failed), or all (peer < 0). */
void proust__offer_uses_forget(struct proust_session *s, int peer);
/* `exchange`: declined because we wait for a message from that peer
 * (proust__offer_worth_using said no): it pauses its offers to us. */
void proust__offer_decline(struct proust_session *s, int peer, struct proust__offer_in *o,
                           bool exchange);
/* Sender: should a matching offer from `peer` be written into? (not while
 * we have a receive posted from it) */
bool proust__offer_worth_using(struct proust_session *s, int peer);

/* ---- receive path (recv_path.c) ------------------------------------------- */
void proust__on_packet(void *engine, int peer, const void *data, size_t len);
void *proust__on_put_target(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
void proust__on_put_done(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
void proust__on_peer_failed(void *engine, int peer, int status, const char *why);
/* How a receive is posted (proust__recv_post). */
enum {
    /* a nonblocking call: a rendezvous it matches at once is copied by the
     * next progress pass, not inside the call (its caller's own sends must
     * leave first: two ranks exchanging 4 MiB each copied one after the
     * other when each Irecv pulled its peer's message before its Isend) */
    PROUST__POST_NONBLOCKING = 1u,
    PROUST__POST_MAY_OFFER = 2u, /* may be offered to its sender (offer.c) */
};
/* A receive was just posted: match it against unexpected messages (takes the
 * match locks). how: PROUST__POST_* flags. */
int proust__recv_post(struct proust_session *s, struct proust_request *req, unsigned how);
/* The same for a one-segment receive `tmp` on the caller's stack that may
 * finish in the call: NULL when a message that had wholly arrived eager
 * completed tmp; else the request from the thread's cache (reserved with
 * proust__request_reserve) that the receive goes on with. */
struct proust_request *proust__recv_post_inline(struct proust_session *s,
                                                struct proust_request *tmp, unsigned how);
/* Receive a message taken out of matching by proust_improbe (nonblocking:
 * a rendezvous is copied by the next progress pass). */
int proust__recv_post_message(struct proust_session *s, struct proust_request *req,
                              struct proust__inmsg *m);
/* Receiver side of the rendezvous (recv_rdv.c), no lock held. */
void proust__segment_landed(struct proust_session *s, int peer, struct proust_request *req);
void proust__send_cts(struct proust_session *s, int peer, struct proust_request *req,
                      uint16_t seg, uint64_t sender_token, size_t accepted);
void proust__do_get(struct proust_session *s, int peer, struct proust_request *req, uint16_t seg,
                    uint64_t sender_token, size_t accepted, const uint8_t *key, uint32_t key_len);
void proust__queue_get(struct proust_session *s, int peer, struct proust_request *req,
                       uint16_t seg, uint64_t sender_token, size_t accepted, const uint8_t *key,
                       uint32_t key_len, bool sender_waits);
void proust__recv_on_done(struct proust_session *s, int peer, uint64_t token);
/* Carry out the gets that polling queued (sharing the copies with the
 * senders when several are waiting); call with no lock held. */
void proust__gets_run(struct proust_session *s);
/* Drop the queued gets from `peer` (it failed); returns none of them. */
void proust__gets_forget(struct proust_session *s, int peer);
/* An idle process pulls the rendezvous messages waiting unexpected into
 * its own memory and releases their senders (unexp_pull.c); returns the
 * segments pulled. Call with no lock held, only when idle. */
int proust__idle_pull(struct proust_session *s);
/* The data an idle pull asked for (`holder`) landed, or failed: the segment
 * becomes eager, or goes to the receive that matched it meanwhile
 * (recv_path.c); releases holder. No lock held. */
void proust__recv_pull_landed(struct proust_session *s, int peer, struct proust_request *holder);
static inline bool proust__idle_pull_wanted(struct proust_session *s)
{
    return atomic_load_explicit(&s->unexp_rts, memory_order_relaxed) != 0;
}
/* Free an incoming message and the eager data it kept. */
void proust__inmsg_free(struct proust__inmsg *m);
/* Does an idle pull still wait for data of one of m's segments? */
static inline bool proust__inmsg_pulling(const struct proust__inmsg *m)
{
    for (uint16_t i = 0; i < m->nseg; i++)
        if (m->seg[i].state == PROUST__SEG_PULLING)
            return true;
    return false;
}
/* The same for a message of a live gate, its stripe held (descriptor and
 * buffers go back to the stripe's caches). */
void proust__inmsg_release(struct proust_session *s, struct proust__inmsg *m);
/* Free the stash, unexpected messages and active messages of every gate. */
void proust__recv_cleanup(struct proust_session *s);

/* ---- send path (send_path.c) ---------------------------------------------- */
int proust__send_post(struct proust_session *s, struct proust_request *req, bool sync,
                      const unsigned *hints);
/* A blocking send of an eager message with no request: the packet leaves
 * now through the rail's try_send, or PROUST_ERR_BUSY (nothing was done). */
int proust__send_eager_now(struct proust_session *s, struct proust__gate *g, const void *buf,
                           size_t len, proust_tag_t tag);
/* Queue a control chunk (CTS/FIN/ACK) to peer; takes the gate lock. */
int proust__send_control(struct proust_session *s, int peer, uint8_t type, uint64_t token,
                         const void *body, size_t body_len);
/* A control chunk, owned (freed once sent), not yet queued; NULL: no
 * memory. `urgent`: strategies may send it ahead of queued chunks. */
struct proust__chunk *proust__control_chunk_new(uint8_t type, uint8_t flags, uint64_t token,
                                                uint32_t seq, proust_tag_t tag, const void *body,
                                                size_t body_len, bool urgent);
/* The same with the header's flags, seq and tag set (OFFER, OFFER_NO). */
int proust__send_control_ext(struct proust_session *s, int peer, uint8_t type, uint8_t flags,
                             uint64_t token, uint32_t seq, proust_tag_t tag, const void *body,
                             size_t body_len);
void proust__on_send_done(void *engine, void *ctx, int status);
/* Sender side of a CTS: start the puts. */
void proust__send_on_cts(struct proust_session *s, int peer, const struct proust__cts_body *cts);
/* Sender side of a PUSH: write the data into the receiver's memory. */
void proust__send_on_push(struct proust_session *s, int peer, const struct proust__push_body *pb,
                          const uint8_t *key);
/* Find the send a CTS/PUSH (or a used offer) names and mark the answer
 * received (gate lock held); NULL if the token names no send of this peer
 * waiting for it. */
struct proust_request *proust__answered_send(struct proust_session *s, struct proust__gate *g,
                                             uint64_t sender_token, uint64_t accepted,
                                             uint16_t *seg);
/* FIN or ACK for a send request. */
void proust__send_on_ack(struct proust_session *s, int peer, uint64_t token);

/* ---- send cancellation (cancel.c) ---------------------------------------- */
/* A send is cancelled by asking its receiver to drop the message while it
 * is still unexpected there (CANCEL, answered by CANCEL_ANS); the request
 * is not finished before the answer. proust_cancel of a send. */
int proust__cancel_send(struct proust_session *s, struct proust_request *req);
/* Receiver: CANCEL from peer (no lock held). */
void proust__recv_on_cancel(struct proust_session *s, int peer, const struct proust__chunk_hdr *h);
/* Sender: CANCEL_ANS from peer (no lock held). */
void proust__send_on_cancel_answer(struct proust_session *s, int peer, uint64_t token,
                                   bool cancelled);
/* request_complete found RF_CANCELING set: finish the request if the answer
 * came already (else the answer will). */
void proust__cancel_completed(struct proust_request *req, unsigned prev_flags);
/* The peer failed: its answers will not come (gate lock held). */
void proust__cancels_fail(struct proust_session *s, struct proust__gate *g);

/* ---- gates and scheduling (gate.c) ----------------------------------------- */
int proust__gates_init(struct proust_session *s);
void proust__gates_destroy(struct proust_session *s);
/* Append chunks to the window (gate lock held). */
void proust__window_push(struct proust__gate *g, struct proust__chunk *first,
                         struct proust__chunk *last, unsigned n);
/* Send chunks [first..] as one packet through a free slot (gate lock held);
 * returns the driver's answer (PROUST_OK: sent, the caller credits;
 * PROUST__INPROGRESS: send_done will). */
int proust__gate_send_packet(struct proust__gate *g, struct proust__packet_slot *slot,
                             struct proust__chunk *first, unsigned n);
/* A free slot if the window is empty and the rail idle, else NULL: a new
 * chunk may then bypass the window (gate lock held). */
struct proust__packet_slot *proust__gate_idle_slot(struct proust__gate *g);
/* Progress must come back to this gate (window or driver queue not empty). */
void proust__gate_mark_pending(struct proust_session *s, struct proust__gate *g);
/* Pack and send packets while the rail is idle (gate lock held). Returns
 * how much moved (driver queue flushed, packets sent, a failed gate
 * emptied): 0 when the rail had no room, which a waiter counts as idle. */
int proust__gate_schedule(struct proust_session *s, struct proust__gate *g);
/* Fail everything queued or in flight on a gate (no lock held). */
void proust__gate_fail(struct proust_session *s, struct proust__gate *g, int status,
                       const char *why);
/* Largest eager message a packet of `caps` holds, headers taken off: the
 * rendezvous threshold never exceeds it. */
size_t proust__eager_room(const struct proust__rail_caps *caps);
/* Compute g->rdv_threshold from the rail and PROUST_RDV_THRESHOLD. */
void proust__gate_set_rail(struct proust_session *s, struct proust__gate *g,
                           proust__rail_t *rail);

/* ---- progress (wait.c) ------------------------------------------------------ */
/* What the progress engine calls in core (its upcalls: a pass, deferred
 * work, peer checks, idle work). */
extern const struct proust__progress_upcalls proust__core_upcalls;
/* Make progress until req is finished (does not release it). */
void proust__wait_request(struct proust_request *req);
/* One pass over rails and pending gates; returns events seen. */
int proust__progress(struct proust_session *s);
/* Ask the launcher and the rails whether peers died. */
void proust__check_peers(struct proust_session *s);

/* ---- the rendezvous helper's requests (helped.c) ---------------------------- */
/* Does the helper serve transfers with this peer (a rail without gets)? */
bool proust__helper_serves_peer(const struct proust_session *s, int peer);
/* A nonblocking post of req by an application thread: the helper counts
 * and advances it if it serves it. */
void proust__request_helped(struct proust_session *s, struct proust_request *req);
/* Clear req's helped flag; whoever clears it uncounts it (a completion,
 * or a post that found the request done already). */
void proust__request_unhelp(struct proust_request *req);

#endif
