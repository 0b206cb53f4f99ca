/*
 * strategy.h — what a strategy sees and does.
 *
 * When a rail goes idle for a peer, the engine asks the strategy for the
 * next packet: the strategy unlinks chunks from that peer's window (the
 * queue of chunks waiting to be sent) and returns them in packet order.
 * A strategy sees only the window and the budget derived from the rail's
 * capabilities (core/chunk.h: chunks are core's, a strategy reads their
 * headers and links); it never calls a driver. One file per strategy, each
 * exporting one const struct proust__strategy_ops.
 */
#ifndef PROUST_STRATEGY_H
#define PROUST_STRATEGY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "core/chunk.h"

/* Budget for one packet. */
struct proust__packet_budget {
    size_t max_bytes;    /* chunk headers + bodies */
    unsigned max_chunks; /* limited by the rail's iovec entries */
};

struct proust__strategy_ops {
    const char *name;
    const char *description;
    /* true: a new chunk is scheduled at once if the rail is idle (latency);
     * false: chunks wait for the next progress call so a burst of posts
     * can be merged (the window fills while the application posts). */
    bool flush_on_submit;
    /* With flush_on_submit false: pack anyway as soon as the window holds a
     * full packet's worth of chunks (waiting longer gains nothing), so the
     * receiver starts on the first packets while the application is still
     * posting. */
    bool flush_when_full;
    /* With flush_on_submit: a chunk posted by a thread that already sent
     * one to the same peer since its last progress pass (an application
     * posting back to back) waits in the window instead, to leave merged
     * with the rest of the burst (coalesce). */
    bool defer_bursts;
    /* Unlink the chunks of the next packet from the window; return the first
     * (linked through ->next, NULL-terminated) and their count in *n. Must
     * take at least one chunk when the window is not empty (the engine never
     * queues a chunk larger than the budget). */
    struct proust__chunk *(*next_packet)(struct proust__window *w,
                                         const struct proust__packet_budget *budget,
                                         unsigned *n);
    /* Optional: split a rendezvous segment of `len` bytes among the n rails
     * that reach its peer, the peer's own first (their profiles'
     * bandwidth_gbs): share[i] bytes go on rail i, summing to len. NULL:
     * everything on the peer's own rail. */
    void (*split)(const double *bandwidth_gbs, unsigned n, size_t len, size_t *share);
};

/* "auto" (the default): each peer's strategy follows the measured cost of
 * a small packet on its rail (proust__rail_t.packet_ns): coalesce where it
 * is at least `coalesce_ns` (a system call per packet, as on tcp), default
 * below (shm: merging would only add latency). */
const struct proust__strategy_ops *proust__strategy_for_cost(unsigned packet_ns,
                                                             unsigned coalesce_ns);
/* The cost a rail starts with before any measure: its profile's latency. */
unsigned proust__packet_ns_prior(double latency_us);
/* A measured send of a small packet that took `ns` (callers sample one
 * send in 32): the rail's cost follows fast sends, slow ones barely. */
void proust__packet_ns_sample(_Atomic unsigned *cost, unsigned long long ns);

/* Window helpers for strategies. */
void proust__window_unlink(struct proust__window *w, struct proust__chunk *prev,
                           struct proust__chunk *c);

/* Look a strategy up by name; NULL if unknown. */
const struct proust__strategy_ops *proust__strategy_find(const char *name);
/* All strategies, NULL-terminated (for proust-info). */
extern const struct proust__strategy_ops *const proust__strategies[];

extern const struct proust__strategy_ops proust__strategy_auto;
extern const struct proust__strategy_ops proust__strategy_default;
extern const struct proust__strategy_ops proust__strategy_aggreg;
extern const struct proust__strategy_ops proust__strategy_coalesce;
extern const struct proust__strategy_ops proust__strategy_split_balance;

/* The default's packing (default.c), which split_balance shares. */
struct proust__chunk *proust__one_chunk_per_packet(struct proust__window *w,
                                                   const struct proust__packet_budget *budget,
                                                   unsigned *n);
/* aggreg's packing (aggreg.c), which coalesce shares. */
struct proust__chunk *proust__merged_packet(struct proust__window *w,
                                            const struct proust__packet_budget *budget,
                                            unsigned *n);

#endif
