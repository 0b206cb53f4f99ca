/* Strategies: default sends one chunk per packet; aggreg merges pending
 * chunks of any tag into one packet up to the budget, urgent ones first,
 * and never loses or duplicates a chunk. */
#include <string.h>

#include "strategy/strategy.h"
#include "unit.h"

static struct proust__chunk chunks[200];

static void fill(struct proust__window *w, unsigned n, size_t body, unsigned urgent_every)
{
    memset(w, 0, sizeof *w);
    for (unsigned i = 0; i < n; i++) {
        struct proust__chunk *c = &chunks[i];
        memset(c, 0, sizeof *c);
        c->hdr.len = (uint32_t)body;
        c->hdr.tag = i % 3; /* several tags: aggreg merges across tags */
        c->hdr.seq = i;
        c->urgent = urgent_every && (i % urgent_every) == urgent_every - 1;
        if (w->tail)
            w->tail->next = c;
        else
            w->head = c;
        w->tail = c;
        w->count++;
        w->urgent += c->urgent;
    }
}

/* Drain the window, count packets; check each chunk leaves exactly once. */
static unsigned drain(const struct proust__strategy_ops *s, struct proust__window *w,
                      const struct proust__packet_budget *b, unsigned total)
{
    unsigned seen[200] = {0}, packets = 0;
    while (w->head) {
        unsigned n;
        struct proust__chunk *c = s->next_packet(w, b, &n);
        EXPECT_TRUE(c != NULL);
        EXPECT_TRUE(n >= 1 && n <= b->max_chunks);
        size_t bytes = 0;
        unsigned k = 0;
        for (; c; c = c->next, k++) {
            seen[c->hdr.seq]++;
            bytes += proust__chunk_wire_size(c);
        }
        EXPECT_EQ(k, n);
        EXPECT_TRUE(n == 1 || bytes <= b->max_bytes);
        packets++;
    }
    EXPECT_EQ(w->count, 0);
    EXPECT_TRUE(w->tail == NULL);
    for (unsigned i = 0; i < total; i++)
        EXPECT_EQ(seen[i], 1);
    return packets;
}

int main(void)
{
    struct proust__window w;
    struct proust__packet_budget big = {.max_bytes = 65536 - 8, .max_chunks = 40};
    EXPECT_TRUE(proust__strategy_find("default") == &proust__strategy_default);
    EXPECT_TRUE(proust__strategy_find("aggreg") == &proust__strategy_aggreg);
    EXPECT_TRUE(proust__strategy_find("nonsense") == NULL);

    /* 32 small chunks (2 flows' worth): 32 packets vs 1 */
    fill(&w, 32, 8, 0);
    EXPECT_EQ(drain(&proust__strategy_default, &w, &big, 32), 32);
    fill(&w, 32, 8, 0);
    EXPECT_EQ(drain(&proust__strategy_aggreg, &w, &big, 32), 1);

    /* limited by iovec entries: 100 chunks, 40 per packet */
    fill(&w, 100, 8, 0);
    EXPECT_EQ(drain(&proust__strategy_aggreg, &w, &big, 100), 3);

    /* limited by bytes: 10 chunks of 20 000 B, 3 fit in 64 KiB */
    fill(&w, 10, 20000, 0);
    EXPECT_EQ(drain(&proust__strategy_aggreg, &w, &big, 10), 4);

    /* urgent chunks leave first, in order, and then the rest in order */
    fill(&w, 12, 8, 4);
    unsigned n;
    struct proust__chunk *c = proust__strategy_aggreg.next_packet(&w, &big, &n);
    EXPECT_EQ(n, 12);
    unsigned expect[12] = {3, 7, 11, 0, 1, 2, 4, 5, 6, 8, 9, 10};
    for (unsigned i = 0; i < 12; i++, c = c->next)
        EXPECT_EQ(c->hdr.seq, expect[i]);
    EXPECT_EQ(w.urgent, 0);
    printf("strategy: ok\n");
    return 0;
}
