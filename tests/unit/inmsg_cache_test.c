/* The descriptor blocks of unexpected small messages (core/match.c): a
 * stripe keeps its share of blocks and, beyond it, borrows from a budget
 * shared by the session (PROUST__INMSG_CACHE_BYTES), so that a burst from
 * one peer larger than a stripe's share comes back from the cache the
 * next time instead of from malloc; the borrowed count goes back down as
 * they are taken, and nothing is kept past the budget. */
#include <stdlib.h>
#include <string.h>

#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "unit.h"

#define BUDGET (PROUST__INMSG_CACHE_BYTES / PROUST__INMSG_BLOCK)
#define SHARE 4
#define BURST 40

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static struct proust__match_stripe ms;
    static struct proust__gate g;
    _Atomic unsigned borrowed = 0;
    ms.inmsg_cache_max = SHARE;
    ms.inmsg_borrowed = &borrowed;
    g.ms = &ms;

    /* a burst larger than the share: all from malloc, all kept */
    struct proust__inmsg *first[BURST], *again[BURST];
    for (int i = 0; i < BURST; i++) {
        first[i] = proust__inmsg_block_get(&g);
        EXPECT_TRUE(first[i] != NULL);
        memset(first[i], 0xa5, PROUST__INMSG_BLOCK); /* the whole block is ours */
    }
    for (int i = 0; i < BURST; i++)
        proust__inmsg_block_put(&g, first[i]);
    EXPECT_EQ(ms.inmsg_cached, BURST);
    EXPECT_EQ(atomic_load(&borrowed), BURST - SHARE);

    /* the next burst: the same blocks, none from malloc */
    for (int i = 0; i < BURST; i++)
        again[i] = proust__inmsg_block_get(&g);
    EXPECT_EQ(ms.inmsg_cached, 0);
    EXPECT_EQ(atomic_load(&borrowed), 0);
    qsort(first, BURST, sizeof first[0], cmp_ptr);
    qsort(again, BURST, sizeof again[0], cmp_ptr);
    EXPECT_TRUE(memcmp(first, again, sizeof first) == 0);

    /* the session's budget nearly spent by other stripes: the share is
     * kept, then only what the budget still allows; the rest is freed */
    atomic_store(&borrowed, BUDGET - 3);
    for (int i = 0; i < BURST; i++)
        proust__inmsg_block_put(&g, again[i]);
    EXPECT_EQ(ms.inmsg_cached, SHARE + 3);
    EXPECT_EQ(atomic_load(&borrowed), BUDGET);
    for (int i = 0; i < SHARE + 3; i++)
        free(proust__inmsg_block_get(&g));
    EXPECT_EQ(ms.inmsg_cached, 0);
    EXPECT_EQ(atomic_load(&borrowed), BUDGET - 3);
    EXPECT_TRUE(ms.inmsg_cache == NULL);
    printf("inmsg cache: ok\n");
    return 0;
}
