/*
 * match.c — posted receives and unexpected messages.
 *
 * Receives posted for a given source wait in that source's gate; receives
 * for ANY_SOURCE wait in one session queue. Each receive carries its posting
 * order, so an incoming message takes the earliest matching receive of the
 * two queues, as MPI requires. Unexpected messages wait in their gate in
 * arrival order. Everything here runs under session->match_lock.
 */
#include "core/engine.h"

void proust__posted_append(struct proust_session *s, struct proust_request *req)
{
    req->post_order = s->post_counter++;
    if (req->peer == PROUST_ANY_SOURCE) {
        proust__dlist_append(&s->any_head, &s->any_tail, req);
    } else {
        struct proust__gate *g = &s->gates[req->peer];
        proust__dlist_append(&g->posted_head, &g->posted_tail, req);
    }
}

void proust__posted_remove(struct proust_session *s, struct proust_request *req)
{
    if (req->peer == PROUST_ANY_SOURCE) {
        proust__dlist_remove(&s->any_head, &s->any_tail, req);
    } else {
        struct proust__gate *g = &s->gates[req->peer];
        proust__dlist_remove(&g->posted_head, &g->posted_tail, req);
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
    struct proust_request *mine = first_match(g->posted_head, tag);
    struct proust_request *any = s->any_head ? first_match(s->any_head, tag) : NULL;
    if (any && (!mine || any->post_order < mine->post_order)) {
        proust__dlist_remove(&s->any_head, &s->any_tail, any);
        any->where = PROUST__IN_NONE;
        return any;
    }
    if (mine) {
        proust__dlist_remove(&g->posted_head, &g->posted_tail, mine);
        mine->where = PROUST__IN_NONE;
    }
    return mine;
}

static struct proust__inmsg *gate_find(struct proust__gate *g, proust_tag_t tag,
                                       proust_tag_t mask, struct proust__inmsg **prevp)
{
    struct proust__inmsg *prev = NULL;
    for (struct proust__inmsg *m = g->unexp_head; m; prev = m, m = m->next) {
        if (proust__tag_match(m->tag, tag, mask)) {
            *prevp = prev;
            return m;
        }
    }
    return NULL;
}

struct proust__inmsg *proust__unexpected_find(struct proust_session *s, int source,
                                              proust_tag_t tag, proust_tag_t mask, bool take)
{
    if (s->unexpected_count == 0)
        return NULL;
    struct proust__gate *best_g = NULL;
    struct proust__inmsg *best = NULL, *best_prev = NULL;
    int lo = source == PROUST_ANY_SOURCE ? 0 : source;
    int hi = source == PROUST_ANY_SOURCE ? s->size - 1 : source;
    for (int r = lo; r <= hi; r++) {
        struct proust__gate *g = &s->gates[r];
        if (!g->unexp_head)
            continue;
        struct proust__inmsg *prev, *m = gate_find(g, tag, mask, &prev);
        if (m && (!best || m->arrival < best->arrival)) {
            best = m;
            best_prev = prev;
            best_g = g;
        }
    }
    if (best && take) {
        if (best_prev)
            best_prev->next = best->next;
        else
            best_g->unexp_head = best->next;
        if (best_g->unexp_tail == best)
            best_g->unexp_tail = best_prev;
        best->next = NULL;
        s->unexpected_count--;
    }
    return best;
}

void proust__unexpected_append(struct proust_session *s, struct proust__inmsg *m)
{
    struct proust__gate *g = &s->gates[m->source];
    m->arrival = s->arrival_counter++;
    m->next = NULL;
    if (g->unexp_tail)
        g->unexp_tail->next = m;
    else
        g->unexp_head = m;
    g->unexp_tail = m;
    s->unexpected_count++;
    proust__wake_check(s); /* a thread may sleep in proust_probe */
}
