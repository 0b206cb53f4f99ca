/*
 * unexp_pool.c — buffers for the bytes of unexpected eager messages.
 *
 * A sender that runs ahead of its receiver (a broadcast root, a burst of
 * sends) has its eager messages copied out of the ring into private
 * buffers until the receives are posted, then copied again and released.
 * From malloc, each 16-64 KiB buffer came from the top of glibc's heap and
 * went back to it, and glibc returned the pages to the kernel whenever the
 * top grew past its trim threshold: every message then paid a page fault
 * per 4 KiB (a broadcast six times slower; docs/PERFORMANCE.md, "Figures behind
 * the code"). So the buffers are kept here, per match
 * stripe (its lock held), in power-of-two classes from 1 KiB to 128 KiB,
 * reused last-in first-out (the warmest first), up to a byte budget per
 * stripe. Larger segments, and whatever exceeds the budget, go to malloc
 * and free as before. A pooled buffer is a plain malloc block of its
 * class's size, so free() is always a correct way to drop one.
 */
#include <stdlib.h>

#include "core/match.h"

#define POOL_MIN_SHIFT 10 /* 1 KiB */
#define POOL_MAX_SHIFT (POOL_MIN_SHIFT + PROUST__UNEXP_CLASSES - 1) /* 128 KiB */
#define POOL_SESSION_BYTES (16u << 20) /* shared out between the stripes */
#define POOL_STRIPE_MIN_BYTES (1u << 20)

struct proust__pool_link {
    struct proust__pool_link *next;
};

/* The class of a segment of len bytes, or -1 when it is too large. */
static int class_of(size_t len)
{
    if (len > ((size_t)1 << POOL_MAX_SHIFT))
        return -1;
    int shift = POOL_MIN_SHIFT;
    while (((size_t)1 << shift) < len)
        shift++;
    return shift - POOL_MIN_SHIFT;
}

void proust__unexp_pool_init(struct proust__match_stripe *ms, int nstripes)
{
    size_t share = POOL_SESSION_BYTES / (size_t)(nstripes > 0 ? nstripes : 1);
    ms->pool_budget = share < POOL_STRIPE_MIN_BYTES ? POOL_STRIPE_MIN_BYTES : share;
    ms->pool_bytes = 0;
    for (int c = 0; c < PROUST__UNEXP_CLASSES; c++)
        ms->pool[c] = NULL;
}

void *proust__unexp_buf_get(struct proust__match_stripe *ms, size_t len)
{
    int c = class_of(len);
    if (c < 0)
        return malloc(len ? len : 1);
    struct proust__pool_link *b = ms->pool[c];
    if (b) {
        ms->pool[c] = b->next;
        ms->pool_bytes -= (size_t)1 << (c + POOL_MIN_SHIFT);
        return b;
    }
    return malloc((size_t)1 << (c + POOL_MIN_SHIFT));
}

void proust__unexp_buf_put(struct proust__match_stripe *ms, void *buf, size_t len)
{
    int c = class_of(len);
    size_t size = c < 0 ? 0 : (size_t)1 << (c + POOL_MIN_SHIFT);
    if (c < 0 || !ms || ms->pool_bytes + size > ms->pool_budget) {
        free(buf);
        return;
    }
    struct proust__pool_link *b = buf;
    b->next = ms->pool[c];
    ms->pool[c] = b;
    ms->pool_bytes += size;
}

void proust__unexp_pool_drain(struct proust__match_stripe *ms)
{
    for (int c = 0; c < PROUST__UNEXP_CLASSES; c++) {
        while (ms->pool[c]) {
            struct proust__pool_link *b = ms->pool[c];
            ms->pool[c] = b->next;
            free(b);
        }
    }
    ms->pool_bytes = 0;
}
