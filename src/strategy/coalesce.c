/* coalesce: a lone chunk leaves at once, as with default; the chunks an
 * application posts back to back to one peer (no progress pass of the
 * posting thread in between) wait in the window and leave merged, as with
 * aggreg, at its next progress pass or as soon as they fill a packet. For
 * rails where each packet costs a system call (tcp): a burst of 64 small
 * sends becomes two packets, a ping-pong keeps its latency. */
#include "strategy/strategy.h"

const struct proust__strategy_ops proust__strategy_coalesce = {
    .name = "coalesce",
    .description = "a lone chunk at once; a burst of posts to a peer merged into packets",
    .flush_on_submit = true,
    .flush_when_full = true,
    .defer_bursts = true,
    .next_packet = proust__merged_packet,
};
