/*
 * session.h — the session: one per process, holding the launcher's handle,
 * the rails, the gates, matching, requests, progress and placement.
 *
 * Core's headers are one per object (request.h, gate.h, match.h, ...);
 * the lock order for all of them is stated here, once:
 *   rail poll_lock  <  gate->lock  <  match stripes (in index order)
 *                   <  session->any_lock  <  token lock
 * A thread may take a lock to the right of one it holds, never to the left:
 * the receive path decides under its gate's match stripe and sends its
 * answers (CTS, ACK, FIN) after releasing it. No lock is held while a user
 * callback runs.
 */
#ifndef PROUST_CORE_SESSION_H
#define PROUST_CORE_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "common/lock.h"
#include "drivers/driver.h"
#include "progress/progress.h"
#include "proust.h"
#include "strategy/strategy.h"
#include "topology/placement.h"

#define PROUST__MAX_RAILS 4

struct proust__gate;
struct proust__match_stripe;
struct proust_request;
struct proust__pending_get;
struct proust__pending_use;
struct proust__req_block;
struct proust__strategy_ops;
struct proust__event;

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
    const struct proust__strategy_ops *strategy; /* PROUST_STRATEGY; auto: per gate */
    unsigned coalesce_ns; /* PROUST_COALESCE_NS: auto's threshold */
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
    unsigned oob_calls; /* proust_oob_allgather: names each call's key */
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
    _Atomic int gets_async; /* bytes of asynchronous gets in flight (recv_rdv.c) */
    proust__lock_t gets_lock;
    struct proust__pending_get *_Atomic gets_head; /* peeked without the lock */
    struct proust__pending_get *gets_tail;
    /* offers to use, run after the poll (offer.c), under gets_lock */
    struct proust__pending_use *_Atomic uses_head;
    struct proust__pending_use *uses_tail;
    long peer_check_ms;
    bool oversubscribed; /* more processes on this host than usable cores */
    int usable_cores;    /* cores the process could use at init, before placement */
    int node_cpus;       /* cores the job's ranks share on this host (PROUST_NODE_CPUS) */
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

/* The strategy a gate packs with now: PROUST_STRATEGY, or under auto the
 * one its rail's measured packet cost calls for (strategy/strategy.h). */
static inline const struct proust__strategy_ops *proust__gate_strategy(
    const struct proust_session *s, const proust__rail_t *rail)
{
    if (s->strategy != &proust__strategy_auto)
        return s->strategy;
    return proust__strategy_for_cost(atomic_load_explicit(&rail->packet_ns, memory_order_relaxed),
                                     s->coalesce_ns);
}

#endif
