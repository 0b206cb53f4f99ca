/*
 * posted_queue.c — a gate's posted receives: the queue in posting order,
 * and a hash index on it once a scan of it runs long.
 *
 * An incoming message takes the earliest posted receive whose tag and mask
 * accept its tag. A list in posting order answers that by a scan, which is
 * what a short queue wants (most hold one or two receives); but a program
 * that posts many receives and gets their messages in another order (the
 * messages of a partitioned round readied last to first, a halo of many
 * neighbours' tags) pays for the whole queue on every message: n^2/2
 * comparisons for n messages.
 *
 * So a scan that passes PIDX_SCAN receives before it finds one gives the
 * queue an index (queues whose messages match near the head never pay for
 * one: a window of receives of one tag, say). It picks a key mask K, the
 * most common mask of the receives queued then (for MPI: context and tag
 * bits). A receive whose mask covers K goes into the bucket of
 * hash(tag & K); any message it accepts has the same bits under K, hence
 * the same bucket. Receives with a wider wildcard (MPI_ANY_TAG) go to one
 * "wild" list. Buckets and the wild list keep posting order, so
 * the earliest receive accepting a message is the first match in its
 * bucket or the first in the wild list, whichever was posted first (each
 * indexed receive carries a number). The queue itself stays: offers look
 * at its head, failures and cleanup walk it.
 *
 * The index grows (doubling its buckets) as the queue does, and goes when
 * the queue empties; the next long scan builds one for what is posted
 * then. Keeping it costs every post and match a hash (measurable on
 * traffic whose scans stay short; docs/PERFORMANCE.md, "Figures behind the code"), and a
 * queue that needs one again pays the build with the scan that asked for
 * it. Everything here runs under the gate's match stripe.
 */
#include <stdlib.h>

#include "core/gate.h"
#include "core/match.h"
#include "core/request.h"

#define PIDX_SCAN 64      /* a scan this long gives the queue an index */
#define PIDX_BITS_MIN 6   /* 64 buckets at least */
#define PIDX_LOAD 2       /* grow past this many receives per bucket */

struct pchain {
    struct proust_request *head, *tail;
};

struct proust__posted_index {
    proust_tag_t key_mask;
    uint64_t next_order;
    unsigned bits;        /* 2^bits buckets */
    size_t hashed;        /* receives in the buckets */
    struct pchain wild;   /* receives whose mask does not cover key_mask */
    struct pchain bucket[];
};

static void chain_append(struct pchain *c, struct proust_request *r)
{
    r->hnext = NULL;
    r->hprev = c->tail;
    if (c->tail)
        c->tail->hnext = r;
    else
        c->head = r;
    c->tail = r;
}

static void chain_remove(struct pchain *c, struct proust_request *r)
{
    if (r->hprev)
        r->hprev->hnext = r->hnext;
    else
        c->head = r->hnext;
    if (r->hnext)
        r->hnext->hprev = r->hprev;
    else
        c->tail = r->hprev;
    r->hnext = r->hprev = NULL;
}

static bool covers_key(const struct proust__posted_index *x, proust_tag_t mask)
{
    return (mask & x->key_mask) == x->key_mask;
}

static struct pchain *bucket_of(struct proust__posted_index *x, proust_tag_t tag)
{
    uint64_t h = (uint64_t)(tag & x->key_mask) * 0x9E3779B97F4A7C15ull;
    return &x->bucket[h >> (64 - x->bits)];
}

static void index_add(struct proust__posted_index *x, struct proust_request *r)
{
    r->gate_order = x->next_order++;
    if (covers_key(x, r->mask)) {
        chain_append(bucket_of(x, r->tag), r);
        x->hashed++;
    } else {
        chain_append(&x->wild, r);
    }
}

static void index_del(struct proust__posted_index *x, struct proust_request *r)
{
    if (covers_key(x, r->mask)) {
        chain_remove(bucket_of(x, r->tag), r);
        x->hashed--;
    } else {
        chain_remove(&x->wild, r);
    }
}

/* The most common mask of g's queue (majority vote: exact when one mask
 * has more than half of the receives, some frequent one otherwise). */
static proust_tag_t common_mask(const struct proust__gate *g)
{
    proust_tag_t cand = PROUST_TAG_MASK_FULL;
    size_t votes = 0;
    for (const struct proust_request *r = g->posted_head; r; r = r->next) {
        if (votes == 0)
            cand = r->mask;
        votes += r->mask == cand ? 1 : (size_t)-1;
    }
    return cand;
}

/* (Re)build g's index with 2^bits buckets and key mask `key`, from the
 * queue in posting order; false without memory (the scan still works). */
static bool index_build(struct proust__gate *g, unsigned bits, proust_tag_t key)
{
    struct proust__posted_index *x =
        calloc(1, sizeof *x + ((size_t)1 << bits) * sizeof(struct pchain));
    if (!x)
        return false;
    x->key_mask = key;
    x->bits = bits;
    for (struct proust_request *r = g->posted_head; r; r = r->next)
        index_add(x, r);
    free(g->pidx);
    g->pidx = x;
    return true;
}

void proust__gate_posted_add(struct proust__gate *g, struct proust_request *req)
{
    proust__dlist_append(&g->posted_head, &g->posted_tail, req);
    g->nposted++;
    struct proust__posted_index *x = g->pidx;
    if (!x)
        return;
    index_add(x, req);
    if (x->hashed > ((size_t)PIDX_LOAD << x->bits) && x->bits < 24)
        (void)index_build(g, x->bits + 1, x->key_mask); /* keeps the old one if it fails */
}

void proust__gate_posted_del(struct proust__gate *g, struct proust_request *req)
{
    proust__dlist_remove(&g->posted_head, &g->posted_tail, req);
    g->nposted--;
    struct proust__posted_index *x = g->pidx;
    if (!x)
        return;
    index_del(x, req);
    if (g->nposted == 0) {
        free(x);
        g->pidx = NULL;
    }
}

struct proust_request *proust__gate_posted_find(struct proust__gate *g, proust_tag_t tag)
{
    struct proust__posted_index *x = g->pidx;
    if (!x) {
        size_t steps = 0;
        struct proust_request *r = g->posted_head;
        for (; r && !proust__tag_match(tag, r->tag, r->mask); r = r->next)
            steps++;
        if (steps >= PIDX_SCAN) {
            unsigned bits = PIDX_BITS_MIN;
            while (((size_t)PIDX_LOAD << bits) < g->nposted && bits < 24)
                bits++;
            (void)index_build(g, bits, common_mask(g));
        }
        return r;
    }
    struct proust_request *best = NULL;
    for (struct proust_request *r = bucket_of(x, tag)->head; r; r = r->hnext)
        if (proust__tag_match(tag, r->tag, r->mask)) {
            best = r;
            break;
        }
    for (struct proust_request *r = x->wild.head; r; r = r->hnext)
        if (proust__tag_match(tag, r->tag, r->mask)) {
            if (!best || r->gate_order < best->gate_order)
                best = r;
            break;
        }
    return best;
}

void proust__gate_posted_free(struct proust__gate *g)
{
    free(g->pidx);
    g->pidx = NULL;
}
