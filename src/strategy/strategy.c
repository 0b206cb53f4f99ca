#include "strategy/strategy.h"

#include <string.h>

/* "auto" stands for the per-peer choice of proust__strategy_for_cost; the
 * engine never packs with it (core/gate.h: proust__gate_strategy). */
const struct proust__strategy_ops proust__strategy_auto = {
    .name = "auto",
    .description = "per rail, from the measured cost of a small packet: coalesce where it "
                   "is a system call (tcp), default where it is cheap (shm)",
    .flush_on_submit = true,
    .next_packet = proust__one_chunk_per_packet,
};

const struct proust__strategy_ops *const proust__strategies[] = {
    &proust__strategy_auto,
    &proust__strategy_default,
    &proust__strategy_aggreg,
    &proust__strategy_coalesce,
    &proust__strategy_split_balance,
    NULL,
};

const struct proust__strategy_ops *proust__strategy_find(const char *name)
{
    for (int i = 0; proust__strategies[i]; i++)
        if (strcmp(proust__strategies[i]->name, name) == 0)
            return proust__strategies[i];
    return NULL;
}

const struct proust__strategy_ops *proust__strategy_for_cost(unsigned packet_ns,
                                                             unsigned coalesce_ns)
{
    return packet_ns >= coalesce_ns ? &proust__strategy_coalesce : &proust__strategy_default;
}

unsigned proust__packet_ns_prior(double latency_us)
{
    double ns = latency_us * 1000.0;
    return ns <= 0 ? 0 : ns >= 1e9 ? 1000000000u : (unsigned)ns;
}

void proust__packet_ns_sample(_Atomic unsigned *cost, unsigned long long ns)
{
    /* What a packet costs is its usual time, not the send that a
     * preemption or a page fault stretched: the estimate falls halfway to
     * a faster sample, and rises a sixteenth of the way toward a slower
     * one, itself capped (shm's 30 ns stay under 1 us through a dozen
     * preempted sends in a row). Racy read-modify-write: concurrent
     * samples may lose one, harmless. */
    unsigned long long old = atomic_load_explicit(cost, memory_order_relaxed);
    unsigned long long cap = 4 * old + 1000;
    unsigned long long now = ns > cap ? cap : ns;
    unsigned long long v = now < old ? (old + now) / 2 : old + (now - old) / 16;
    atomic_store_explicit(cost, (unsigned)(v > 1000000000ull ? 1000000000ull : v),
                          memory_order_relaxed);
}

void proust__window_unlink(struct proust__window *w, struct proust__chunk *prev,
                           struct proust__chunk *c)
{
    if (prev)
        prev->next = c->next;
    else
        w->head = c->next;
    if (w->tail == c)
        w->tail = prev;
    w->count--;
    if (c->urgent)
        w->urgent--;
    c->next = NULL;
}
