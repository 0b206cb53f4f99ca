/* The buffers of unexpected eager bytes (core/unexp_pool.c): a buffer
 * holds what it was asked for, comes back warm (last in, first out) for a
 * length of its class, never for a larger one, and the pool keeps no more
 * than its budget. Run under ASan, an undersized buffer fails the writes. */
#include <stdint.h>
#include <string.h>

#include "core/match.h"
#include "unit.h"

/* fill all of buf, as the receive path's copy does */
static void fill(void *buf, size_t len, int v)
{
    if (len)
        memset(buf, v, len);
}

int main(void)
{
    struct proust__match_stripe ms;
    memset(&ms, 0, sizeof ms);
    proust__unexp_pool_init(&ms, 2);
    size_t budget = ms.pool_budget;
    EXPECT_TRUE(budget >= ((size_t)1 << 20));
    EXPECT_EQ(ms.pool_bytes, 0);

    /* every length from 0 to 128 KiB + 1 gets a buffer that holds it */
    static const size_t lens[] = {0, 1, 600, 1023, 1024, 1025, 4096, 8191, 16384, 32768,
                                  65535, 65536, 65537, 65735, 131071, 131072, 131073, 300000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        void *b = proust__unexp_buf_get(&ms, lens[i]);
        EXPECT_TRUE(b != NULL);
        fill(b, lens[i], (int)i);
        proust__unexp_buf_put(&ms, b, lens[i]);
    }
    /* kept: each class up to 128 KiB once; larger ones were freed */
    EXPECT_TRUE(ms.pool_bytes > 0 && ms.pool_bytes <= budget);

    /* reuse: the same class gives back the buffer just returned */
    void *a = proust__unexp_buf_get(&ms, 20000);
    fill(a, 20000, 7);
    proust__unexp_buf_put(&ms, a, 20000);
    void *b = proust__unexp_buf_get(&ms, 32768); /* same class (32 KiB) */
    EXPECT_TRUE(a == b);
    fill(b, 32768, 8);
    /* a larger class never gets it */
    void *c = proust__unexp_buf_get(&ms, 32769);
    EXPECT_TRUE(c != b);
    fill(c, 32769, 9);
    proust__unexp_buf_put(&ms, b, 32768);
    proust__unexp_buf_put(&ms, c, 32769);

    /* the budget holds: far more buffers returned than it allows */
    enum { MANY = 200 };
    static void *bufs[MANY];
    for (int i = 0; i < MANY; i++) {
        bufs[i] = proust__unexp_buf_get(&ms, 65536);
        EXPECT_TRUE(bufs[i] != NULL);
        fill(bufs[i], 65536, i);
    }
    for (int i = 0; i < MANY; i++)
        proust__unexp_buf_put(&ms, bufs[i], 65536);
    EXPECT_TRUE(ms.pool_bytes <= budget);
    EXPECT_TRUE(ms.pool_bytes + 65536 > budget); /* filled up to it */

    /* a NULL stripe (teardown) frees */
    proust__unexp_buf_put(NULL, proust__unexp_buf_get(&ms, 1000), 1000);

    proust__unexp_pool_drain(&ms);
    EXPECT_EQ(ms.pool_bytes, 0);
    for (int k = 0; k < PROUST__UNEXP_CLASSES; k++)
        EXPECT_TRUE(ms.pool[k] == NULL);
    /* the budget is shared out: more stripes, less each, never below 1 MiB */
    proust__unexp_pool_init(&ms, 4096);
    EXPECT_EQ(ms.pool_budget, (size_t)1 << 20);
    proust__unexp_pool_init(&ms, 1);
    EXPECT_TRUE(ms.pool_budget >= budget);
    printf("unexp pool: budget %zu bytes per stripe of 2\n", budget);
    return 0;
}
