/*
 * match.c — posted receives and unexpected messages, and their locks.
 *
 * Receives posted for a given source wait in that source's gate (in posting
 * order, indexed by tag once a scan runs long: posted_queue.c); receives
 * for ANY_SOURCE wait in one session queue. Each receive carries its posting
 * order, so an incoming message takes the earliest matching receive of the
 * two queues, as MPI requires. Unexpected messages wait in their gate in
 * arrival order (indexed by tag likewise: unexp_queue.c).
 *
 * A gate's receive state is locked by its match stripe (gate i: stripe
 * i % nstripes). An ANY_SOURCE receive is matched against every gate's
 * unexpected messages and queued in one atomic step, so posting one takes
 * every stripe; an arrival only ever holds its own gate's stripe, and
 * any_lock while it looks at the ANY_SOURCE queue (two arrivals on
 * different stripes may take from it at once).
 */
#include <stdlib.h>

#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/request.h"
#include "core/session.h"

int proust__match_init(struct proust_session *s)
{
    /* asked for (PROUST_MATCH_STRIPES, read_config), one per peer at most */
    if (s->nstripes <= 0 || s->nstripes > s->size)
        s->nstripes = s->size;
    s->stripes = aligned_alloc(_Alignof(struct proust__match_stripe),
                               (size_t)s->nstripes * sizeof *s->stripes);
    if (!s->stripes)
        return PROUST_ERR_NOMEM;
    for (int i = 0; i < s->nstripes; i++) {
        proust__lock_init(&s->stripes[i].lock);
        s->stripes[i].inmsg_cache = NULL;
        s->stripes[i].inmsg_cached = 0;
        size_t share = PROUST__INMSG_CACHE_BYTES / PROUST__INMSG_BLOCK / (size_t)s->nstripes;
        s->stripes[i].inmsg_cache_max = share > 64 ? (unsigned)share : 64;
        s->stripes[i].inmsg_borrowed = &s->inmsg_borrowed;
        s->stripes[i].idle_pulled = &s->idle_pulled;
        proust__unexp_pool_init(&s->stripes[i], s->nstripes);
    }
    for (int r = 0; r < s->size; r++)
        s->gates[r].ms = &s->stripes[r % s->nstripes];
    proust__lock_init(&s->any_lock);
    return PROUST_OK;
}

void proust__match_destroy(struct proust_session *s)
{
    if (!s->stripes)
        return;
    for (int i = 0; i < s->nstripes; i++) {
        while (s->stripes[i].inmsg_cache) {
            struct proust__inmsg *m = s->stripes[i].inmsg_cache;
            s->stripes[i].inmsg_cache = m->next;
            free(m);
        }
        proust__unexp_pool_drain(&s->stripes[i]);
    }
    for (int r = 0; r < s->size; r++) {
        proust__gate_posted_free(&s->gates[r]);
        proust__gate_unexp_free(&s->gates[r]);
    }
    free(s->stripes);
    s->stripes = NULL;
}

void proust__match_lock_all(struct proust_session *s)
{
    for (int i = 0; i < s->nstripes; i++)
        proust__lock(&s->stripes[i].lock);
}

void proust__match_unlock_all(struct proust_session *s)
{
    for (int i = s->nstripes - 1; i >= 0; i--)
        proust__unlock(&s->stripes[i].lock);
}

void proust__match_lock_source(struct proust_session *s, int source)
{
    if (source == PROUST_ANY_SOURCE)
        proust__match_lock_all(s);
    else
        proust__match_lock(&s->gates[source]);
}

void proust__match_unlock_source(struct proust_session *s, int source)
{
    if (source == PROUST_ANY_SOURCE)
        proust__match_unlock_all(s);
    else
        proust__match_unlock(&s->gates[source]);
}

struct proust__inmsg *proust__inmsg_block_get(struct proust__gate *g)
{
    struct proust__match_stripe *ms = g->ms;
    struct proust__inmsg *m = ms->inmsg_cache;
    if (m) {
        ms->inmsg_cache = m->next;
        if (ms->inmsg_cached-- > ms->inmsg_cache_max) /* a borrowed one */
            atomic_fetch_sub_explicit(ms->inmsg_borrowed, 1, memory_order_relaxed);
        return m;
    }
    return malloc(PROUST__INMSG_BLOCK);
}

void proust__inmsg_block_put(struct proust__gate *g, struct proust__inmsg *m)
{
    struct proust__match_stripe *ms = g->ms;
    if (ms->inmsg_cached >= ms->inmsg_cache_max &&
        atomic_fetch_add_explicit(ms->inmsg_borrowed, 1, memory_order_relaxed) >=
            PROUST__INMSG_CACHE_BYTES / PROUST__INMSG_BLOCK) {
        atomic_fetch_sub_explicit(ms->inmsg_borrowed, 1, memory_order_relaxed);
        free(m);
        return;
    }
    m->next = ms->inmsg_cache;
    ms->inmsg_cache = m;
    ms->inmsg_cached++;
}

/* Posting order only has to tell a gate's receives from ANY_SOURCE ones
 * (a gate's own queue is in order): ANY_SOURCE receives advance the counter,
 * others read it. A receive for source g and an ANY_SOURCE one with the
 * same number: the former was posted first, the ANY_SOURCE one advanced
 * the counter past every earlier one. Either poster holds g's stripe. */
void proust__posted_append(struct proust_session *s, struct proust_request *req)
{
    if (req->peer == PROUST_ANY_SOURCE) {
        req->post_order = atomic_fetch_add_explicit(&s->post_counter, 1, memory_order_relaxed);
        proust__lock(&s->any_lock);
        proust__dlist_append(&s->any_head, &s->any_tail, req);
        atomic_fetch_add_explicit(&s->any_posted, 1, memory_order_relaxed);
        proust__unlock(&s->any_lock);
    } else {
        struct proust__gate *g = &s->gates[req->peer];
        req->post_order = atomic_load_explicit(&s->post_counter, memory_order_relaxed);
        proust__gate_posted_add(g, req);
    }
}

void proust__posted_remove(struct proust_session *s, struct proust_request *req)
{
    if (req->peer == PROUST_ANY_SOURCE) {
        proust__lock(&s->any_lock);
        proust__dlist_remove(&s->any_head, &s->any_tail, req);
        atomic_fetch_sub_explicit(&s->any_posted, 1, memory_order_relaxed);
        proust__unlock(&s->any_lock);
    } else {
        proust__gate_posted_del(&s->gates[req->peer], req);
    }
}

static struct proust_request *first_match(struct proust_request *r, proust_tag_t tag)
{
    for (; r; r = r->next)
        if (proust__tag_match(tag, r->tag, r->mask))
            return r;
    return NULL;
}

struct proust_request *proust__posted_take(struct proust_session *s, int source,
                                           proust_tag_t tag)
{
    struct proust__gate *g = &s->gates[source];
    struct proust_request *mine = proust__gate_posted_find(g, tag);
    /* zero is final while we hold our stripe: posting an ANY_SOURCE
     * receive needs it */
    if (atomic_load_explicit(&s->any_posted, memory_order_relaxed)) {
        proust__lock(&s->any_lock);
        struct proust_request *any = first_match(s->any_head, tag);
        if (any && (!mine || any->post_order < mine->post_order)) {
            proust__dlist_remove(&s->any_head, &s->any_tail, any);
            atomic_fetch_sub_explicit(&s->any_posted, 1, memory_order_relaxed);
            any->where = PROUST__IN_NONE;
            proust__unlock(&s->any_lock);
            return any;
        }
        proust__unlock(&s->any_lock);
    }
    if (mine) {
        proust__gate_posted_del(g, mine);
        mine->where = PROUST__IN_NONE;
    }
    return mine;
}

/* Take m out of g's unexpected queue. */
static void unexpected_unlink(struct proust_session *s, struct proust__gate *g,
                              struct proust__inmsg *m)
{
    proust__gate_unexp_del(g, m);
    atomic_fetch_sub_explicit(&s->unexpected_count, 1, memory_order_relaxed);
}

struct proust__inmsg *proust__unexpected_find(struct proust_session *s, int source,
                                              proust_tag_t tag, proust_tag_t mask, bool take)
{
    struct proust__gate *best_g = NULL;
    struct proust__inmsg *best = NULL;
    int lo = source, hi = source;
    if (source == PROUST_ANY_SOURCE) {
        /* exact: every stripe is held */
        if (atomic_load_explicit(&s->unexpected_count, memory_order_relaxed) == 0)
            return NULL;
        lo = 0;
        hi = s->size - 1;
    }
    for (int r = lo; r <= hi; r++) {
        struct proust__gate *g = &s->gates[r];
        if (!g->unexp_head)
            continue;
        struct proust__inmsg *m = proust__gate_unexp_find(g, tag, mask);
        if (m && (!best || m->arrival < best->arrival)) {
            best = m;
            best_g = g;
        }
    }
    if (best && take)
        unexpected_unlink(s, best_g, best);
    return best;
}

struct proust__inmsg *proust__unexpected_take_seq(struct proust_session *s,
                                                  struct proust__gate *g, uint32_t seq,
                                                  proust_tag_t tag)
{
    for (struct proust__inmsg *m = g->unexp_head; m; m = m->next) {
        if (m->seq != seq)
            continue;
        if (m->tag != tag || m->nseg_seen != m->nseg)
            return NULL;
        unexpected_unlink(s, g, m);
        return m;
    }
    return NULL;
}

void proust__unexpected_append(struct proust_session *s, struct proust__inmsg *m)
{
    m->arrival = atomic_fetch_add_explicit(&s->arrival_counter, 1, memory_order_relaxed);
    proust__gate_unexp_add(&s->gates[m->source], m);
    atomic_fetch_add_explicit(&s->unexpected_count, 1, memory_order_relaxed);
    proust__wake_check(&s->prog); /* a thread may sleep in proust_probe */
}
