/* split_balance (seed 000): packets as the default strategy; the data of a
 * large rendezvous split across the rails that reach its peer (ofi and
 * tcp, two NICs), each rail's share in proportion to its bandwidth, so
 * that they all finish together. The pieces land in place (puts to the
 * receiver's token and offset): nothing to reassemble. */
#include "strategy/strategy.h"

/* A rail carries no share below this: the overhead of a piece (its puts,
 * the rail's own rendezvous) would outweigh its time saved. */
#define SPLIT_MIN (512u * 1024u)
/* Shares are whole multiples of this (page-aligned pieces). */
#define SPLIT_ALIGN 4096u

static void split_by_bandwidth(const double *bandwidth_gbs, unsigned n, size_t len,
                               size_t *share)
{
    double total = 0;
    for (unsigned i = 0; i < n; i++)
        total += bandwidth_gbs[i] > 0 ? bandwidth_gbs[i] : 0;
    size_t given = 0;
    for (unsigned i = 1; i < n; i++) { /* the peer's own rail takes the rest */
        double part = total > 0 && bandwidth_gbs[i] > 0 ? bandwidth_gbs[i] / total : 0;
        size_t bytes = (size_t)((double)len * part) / SPLIT_ALIGN * SPLIT_ALIGN;
        share[i] = bytes >= SPLIT_MIN && len - given - bytes >= SPLIT_MIN ? bytes : 0;
        given += share[i];
    }
    share[0] = len - given;
}

const struct proust__strategy_ops proust__strategy_split_balance = {
    .name = "split_balance",
    .description = "as default; a large rendezvous split across every rail that reaches "
                   "the peer, in proportion to their bandwidth",
    .flush_on_submit = true,
    .next_packet = proust__one_chunk_per_packet,
    .split = split_by_bandwidth,
};
