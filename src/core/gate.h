/*
 * gate.h — a gate is everything about one peer: its rail, the window of
 * chunks to send, packet slots, and on the receive side its posted
 * receives and unexpected messages (gate.c: scheduling).
 */
#ifndef PROUST_CORE_GATE_H
#define PROUST_CORE_GATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/lock.h"
#include "core/chunk.h"
#include "core/wire.h"
#include "drivers/driver.h"
#include "proust.h"
#include "progress/progress.h"
#include "strategy/strategy.h"

struct proust_session;
struct proust_request;
struct proust__match_stripe;
struct proust__inmsg;
struct proust__stashed;
struct proust__unexp_index;
struct proust__posted_index;
struct proust__offer_in;

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
    /* set under the gate lock; cleared by send_done, which a driver may
     * call from poll without that lock (ofi): released after chunks */
    _Atomic bool busy;
    struct proust__pkt_hdr hdr;
    struct proust__chunk *chunks; /* chunks carried, to credit on send_done */
    struct proust__gate *gate;
    struct iovec iov[1 + 3 * PROUST__MAX_PACKET_CHUNKS];
};

#define PROUST__GATE_EXTRA_MAX 3

struct proust__gate {
    proust__lock_t lock; /* send side: window, send_seq, packet slots, rail send */
    int peer;
    proust__rail_t *rail;
    /* with a strategy that splits rendezvous data (split_balance): the
     * other rails that reach the peer, which carry shares of its puts */
    proust__rail_t *extra[PROUST__GATE_EXTRA_MAX];
    unsigned nextra;
    size_t rdv_threshold; /* messages of this size and above use rendezvous */
    struct proust__packet_budget budget; /* what one packet may carry */
    unsigned packet_chunks; /* small chunks that fill a packet */
    struct proust__window win;
    uint32_t send_seq;
    /* two: one on the wire, one prepared ahead; made at the first send
     * (free_slot: a peer never sent to costs no slots, 2 KiB each) */
    struct proust__packet_slot *slots;
    /* the last chunk posted under a strategy that defers bursts: which
     * thread posted it, in which of its progress epochs (coalesce) */
    const void *burst_owner;
    unsigned burst_epoch;
    uint64_t burst_ns; /* when that thread last posted here */
    unsigned send_ticks; /* packets sent: one in 32 small ones is timed */
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

/* Is a packet of the gate still on its way? (g->lock held) */
static inline bool proust__gate_slots_busy(const struct proust__gate *g)
{
    return g->slots && (atomic_load_explicit(&g->slots[0].busy, memory_order_acquire) ||
                        atomic_load_explicit(&g->slots[1].busy, memory_order_acquire));
}

/* ---- bursts (coalesce) --------------------------------------------------- */
/* This thread's progress passes (wait.c): what a thread posts to a peer
 * between two of them is one burst. */
extern _Thread_local unsigned proust__progress_epoch;
/* The peer (of that session) whose gate this thread's burst last held a
 * chunk back in: its next progress pass sends it first (wait.c). */
extern _Thread_local const void *proust__burst_session;
extern _Thread_local int proust__burst_peer;

/* Under the gate lock, for each chunk posted: may it leave at once under
 * `st`? Not with a strategy that gathers, nor, with one that defers
 * bursts, when the same thread posted to this peer less than one of the
 * rail's packet times ago with no progress pass of its own since (an
 * application posting back to back; the rest of its burst follows). A
 * progress thread (a callback that posts) never defers: it may sleep next. */
static inline bool proust__gate_post_at_once(struct proust__gate *g,
                                             const struct proust__strategy_ops *st)
{
    if (!st->flush_on_submit)
        return false;
    if (!st->defer_bursts || proust__in_progress_thread)
        return true;
    uint64_t now = proust__now_ns();
    bool burst = g->burst_owner == (const void *)&proust__progress_epoch &&
                 g->burst_epoch == proust__progress_epoch &&
                 now - g->burst_ns < atomic_load_explicit(&g->rail->packet_ns,
                                                          memory_order_relaxed);
    g->burst_owner = &proust__progress_epoch;
    g->burst_epoch = proust__progress_epoch;
    g->burst_ns = now;
    return !burst;
}

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

#endif
