/*
 * unexp_queue.c — a gate's unexpected messages: a list in arrival order,
 * and a hash index on it once a scan of it runs long.
 *
 * A receive (or probe) takes the earliest unexpected message of its source
 * that its tag and mask accept. Scanning the list is right for the usual
 * handful of messages; a receiver that runs behind a sender of many tags
 * and then posts its receives in another order pays the whole queue per
 * receive (n^2/2 for n messages), as the posted side did before its index
 * (posted_queue.c, whose comment has the idea).
 *
 * Messages have no masks, so the key mask K comes from the receives: a
 * search that scans IDX_SCAN messages or more, by a receive that compares
 * some tag bits, builds the index with its mask (for MPI: context and
 * tag). A message goes into the bucket of hash(tag & K); a receive
 * whose mask covers K finds every message it accepts in the bucket of
 * hash(its tag & K), in arrival order, so the first match there is the
 * earliest. Receives with a wider wildcard scan the list. The index grows
 * with the queue and goes when the queue empties (the next burst picks its
 * own K). Everything here runs under the gate's match stripe.
 */
#include <stdlib.h>

#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"

#define IDX_SCAN 64     /* a scan this long gives the queue an index */
#define IDX_BITS_MIN 6  /* 64 buckets at least */
#define IDX_LOAD 2      /* grow past this many messages per bucket */

struct mchain {
    struct proust__inmsg *head, *tail;
};

struct proust__unexp_index {
    proust_tag_t key_mask;
    unsigned bits;
    size_t count;
    struct mchain bucket[];
};

static struct mchain *bucket_of(struct proust__unexp_index *x, proust_tag_t tag)
{
    uint64_t h = (uint64_t)(tag & x->key_mask) * 0x9E3779B97F4A7C15ull;
    return &x->bucket[h >> (64 - x->bits)];
}

static void index_add(struct proust__unexp_index *x, struct proust__inmsg *m)
{
    struct mchain *c = bucket_of(x, m->tag);
    m->hnext = NULL;
    m->hprev = c->tail;
    if (c->tail)
        c->tail->hnext = m;
    else
        c->head = m;
    c->tail = m;
    x->count++;
}

static void index_del(struct proust__unexp_index *x, struct proust__inmsg *m)
{
    struct mchain *c = bucket_of(x, m->tag);
    if (m->hprev)
        m->hprev->hnext = m->hnext;
    else
        c->head = m->hnext;
    if (m->hnext)
        m->hnext->hprev = m->hprev;
    else
        c->tail = m->hprev;
    m->hnext = m->hprev = NULL;
    x->count--;
}

/* (Re)build g's index from the queue, in arrival order; false without
 * memory (the scan still works). */
static bool index_build(struct proust__gate *g, unsigned bits, proust_tag_t key)
{
    struct proust__unexp_index *x =
        calloc(1, sizeof *x + ((size_t)1 << bits) * sizeof(struct mchain));
    if (!x)
        return false;
    x->key_mask = key;
    x->bits = bits;
    for (struct proust__inmsg *m = g->unexp_head; m; m = m->next)
        index_add(x, m);
    free(g->uidx);
    g->uidx = x;
    return true;
}

void proust__gate_unexp_add(struct proust__gate *g, struct proust__inmsg *m)
{
    m->next = NULL;
    m->prev = g->unexp_tail;
    if (g->unexp_tail)
        g->unexp_tail->next = m;
    else
        g->unexp_head = m;
    g->unexp_tail = m;
    g->nunexp++;
    struct proust__unexp_index *x = g->uidx;
    if (!x)
        return;
    index_add(x, m);
    if (x->count > ((size_t)IDX_LOAD << x->bits) && x->bits < 24)
        (void)index_build(g, x->bits + 1, x->key_mask); /* keeps the old one if it fails */
}

void proust__gate_unexp_del(struct proust__gate *g, struct proust__inmsg *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        g->unexp_head = m->next;
    if (m->next)
        m->next->prev = m->prev;
    else
        g->unexp_tail = m->prev;
    m->next = m->prev = NULL;
    g->nunexp--;
    struct proust__unexp_index *x = g->uidx;
    if (!x)
        return;
    index_del(x, m);
    if (g->nunexp == 0) {
        free(x);
        g->uidx = NULL;
    }
}

struct proust__inmsg *proust__gate_unexp_find(struct proust__gate *g, proust_tag_t tag,
                                              proust_tag_t mask)
{
    struct proust__unexp_index *x = g->uidx;
    if (x && (mask & x->key_mask) == x->key_mask) {
        for (struct proust__inmsg *m = bucket_of(x, tag)->head; m; m = m->hnext)
            if (proust__tag_match(m->tag, tag, mask))
                return m;
        return NULL;
    }
    size_t steps = 0;
    struct proust__inmsg *m = g->unexp_head;
    for (; m && !proust__tag_match(m->tag, tag, mask); m = m->next)
        steps++;
    if (!x && steps >= IDX_SCAN && mask != PROUST_TAG_MASK_ANY) {
        unsigned bits = IDX_BITS_MIN;
        while (((size_t)IDX_LOAD << bits) < g->nunexp && bits < 24)
            bits++;
        (void)index_build(g, bits, mask);
    }
    return m;
}

void proust__gate_unexp_free(struct proust__gate *g)
{
    free(g->uidx);
    g->uidx = NULL;
}
