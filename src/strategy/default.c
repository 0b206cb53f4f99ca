/* default: one chunk per packet, in window order, sent as soon as the rail
 * is idle. The lowest latency for a lone message. */
#include "strategy/strategy.h"

struct proust__chunk *proust__one_chunk_per_packet(struct proust__window *w,
                                                   const struct proust__packet_budget *budget,
                                                   unsigned *n)
{
    (void)budget;
    struct proust__chunk *c = w->head;
    if (!c) {
        *n = 0;
        return NULL;
    }
    proust__window_unlink(w, NULL, c);
    *n = 1;
    return c;
}

const struct proust__strategy_ops proust__strategy_default = {
    .name = "default",
    .description = "one chunk per packet, sent as soon as the rail is idle",
    .flush_on_submit = true,
    .next_packet = proust__one_chunk_per_packet,
};
