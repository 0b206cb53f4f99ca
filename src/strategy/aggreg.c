/* aggreg: merge pending chunks bound to the same peer, whatever their tag,
 * into one packet up to the rail's eager budget. Urgent chunks go first.
 * Chunks wait in the window until the next progress call, so a burst of
 * small sends posted back to back leaves as one packet. */
#include "strategy/strategy.h"

/* Move every chunk that fits, urgent ones first, keeping window order
 * otherwise; stop at the first normal chunk that does not fit so small
 * chunks never overtake a large one indefinitely. */
struct proust__chunk *proust__merged_packet(struct proust__window *w,
                                            const struct proust__packet_budget *budget,
                                            unsigned *n)
{
    struct proust__chunk *first = NULL, *last = NULL;
    size_t bytes = 0;
    unsigned count = 0;

    for (int pass = (w->urgent ? 0 : 1); pass < 2; pass++) {
        struct proust__chunk *prev = NULL, *c = w->head;
        while (c && count < budget->max_chunks) {
            struct proust__chunk *next = c->next;
            bool wanted = pass == 1 || c->urgent;
            size_t sz = proust__chunk_wire_size(c);
            if (wanted && count > 0 && bytes + sz > budget->max_bytes) {
                if (pass == 1)
                    break;
                prev = c;
                c = next;
                continue;
            }
            if (wanted) {
                proust__window_unlink(w, prev, c);
                if (last)
                    last->next = c;
                else
                    first = c;
                last = c;
                bytes += sz;
                count++;
            } else {
                prev = c;
            }
            c = next;
        }
    }
    *n = count;
    return first;
}

const struct proust__strategy_ops proust__strategy_aggreg = {
    .name = "aggreg",
    .description = "merge pending small chunks to the same peer into one packet",
    .flush_on_submit = false,
    .flush_when_full = true,
    .next_packet = proust__merged_packet,
};
