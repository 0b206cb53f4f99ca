/*
 * gate.c — one gate per peer: the window of chunks waiting to be sent, and
 * the scheduler that turns it into packets when the rail goes idle.
 *
 * "Idle" means: the driver has nothing queued for this peer and one of the
 * two packet slots is free (one packet on the wire, at most one prepared
 * ahead). While the rail is busy the window fills, which is what gives a
 * strategy something to optimise.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "core/cancel.h"
#include "core/chunk.h"
#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"

int proust__gates_init(struct proust_session *s)
{
    s->gates = calloc((size_t)s->size, sizeof *s->gates);
    if (!s->gates)
        return PROUST_ERR_NOMEM;
    for (int i = 0; i < s->size; i++) {
        struct proust__gate *g = &s->gates[i];
        proust__lock_init(&g->lock);
        g->peer = i;
    }
    int rc = proust__match_init(s);
    if (rc != PROUST_OK) {
        free(s->gates);
        s->gates = NULL;
    }
    return rc;
}

void proust__gates_destroy(struct proust_session *s)
{
    if (!s->gates)
        return;
    for (int i = 0; i < s->size; i++) {
        struct proust__gate *g = &s->gates[i];
        for (struct proust__chunk *c = g->win.head, *n; c; c = n) {
            n = c->next;
            if (c->owned)
                free(c);
        }
        free(g->offer_in);
        free(g->slots);
    }
    proust__match_destroy(s);
    free(s->gates);
    s->gates = NULL;
}

size_t proust__eager_room(const struct proust__rail_caps *caps)
{
    /* an eager chunk (header + sync tail + data) must fit one packet */
    return caps->max_packet - sizeof(struct proust__pkt_hdr) - sizeof(struct proust__chunk_hdr) -
           sizeof(struct proust__data_tail);
}

void proust__gate_set_rail(struct proust_session *s, struct proust__gate *g,
                           proust__rail_t *rail)
{
    const struct proust__rail_caps *caps = &rail->caps;
    size_t t = s->rdv_threshold_override ? s->rdv_threshold_override : caps->rdv_threshold;
    size_t room = proust__eager_room(caps);
    g->rail = rail;
    g->rdv_threshold = t < room ? t : room;
    g->budget.max_bytes = caps->max_packet - sizeof(struct proust__pkt_hdr);
    /* each chunk takes up to 3 iovec entries (header, tail, data), plus one
     * for the packet header; the slot's iovec array bounds it too */
    unsigned by_iov = (unsigned)((caps->max_iov - 1) / 3);
    g->budget.max_chunks = by_iov < PROUST__MAX_PACKET_CHUNKS ? by_iov : PROUST__MAX_PACKET_CHUNKS;
    g->packet_chunks = g->budget.max_chunks;
}

void proust__window_push(struct proust__gate *g, struct proust__chunk *first,
                         struct proust__chunk *last, unsigned n)
{
    last->next = NULL;
    if (g->win.tail)
        g->win.tail->next = first;
    else
        g->win.head = first;
    g->win.tail = last;
    g->win.count += n;
    for (struct proust__chunk *c = first; c; c = c->next)
        if (c->urgent)
            g->win.urgent++;
}

/* Chunks of a packet left the process (or failed): credit their requests. */
static void credit_chunks(struct proust__chunk *c, int status)
{
    while (c) {
        /* read everything first: once its request completes, a chunk embedded
         * in it (chunk0) may be reused by the next send at once */
        struct proust__chunk *next = c->next;
        bool owned = c->owned;
        if (c->req) {
            if (status != PROUST_OK)
                proust__request_set_error(c->req, status);
            proust__request_event_done(c->req);
        }
        if (owned)
            free(c);
        c = next;
    }
}

void proust__gate_mark_pending(struct proust_session *s, struct proust__gate *g)
{
    if (atomic_load_explicit(&g->pending_work, memory_order_relaxed))
        return; /* already marked: no locked instruction */
    if (!atomic_exchange_explicit(&g->pending_work, 1, memory_order_acq_rel))
        atomic_fetch_add_explicit(&s->gates_pending, 1, memory_order_acq_rel);
}

static void clear_pending(struct proust_session *s, struct proust__gate *g)
{
    if (atomic_exchange_explicit(&g->pending_work, 0, memory_order_acq_rel))
        atomic_fetch_sub_explicit(&s->gates_pending, 1, memory_order_acq_rel);
}

/* The gate's slots at its first send (g->lock held); without memory the
 * gate fails, and what waits for it with it. */
static struct proust__packet_slot *slots_make(struct proust__gate *g)
{
    struct proust__packet_slot *slots = calloc(2, sizeof *slots);
    if (!slots) {
        int none = 0;
        atomic_compare_exchange_strong(&g->failed, &none, PROUST_ERR_NOMEM);
        PROUST_ERROR("no memory for the packet slots of the gate to rank %d", g->peer);
        return NULL;
    }
    slots[0].gate = slots[1].gate = g;
    g->slots = slots;
    return slots;
}

static struct proust__packet_slot *free_slot(struct proust__gate *g)
{
    if (__builtin_expect(!g->slots, 0) && !slots_make(g))
        return NULL;
    for (int k = 0; k < 2; k++)
        if (!atomic_load_explicit(&g->slots[k].busy, memory_order_acquire))
            return &g->slots[k];
    return NULL;
}

_Thread_local int proust__packet_urgent;

/* Packets this small are timed for the rail's cost: what they take is the
 * rail's per-packet work, not copying. */
#define SMALL_PACKET 256

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int proust__gate_send_packet(struct proust__gate *g, struct proust__packet_slot *slot,
                             struct proust__chunk *first, unsigned n)
{
    int iovcnt = 1;
    size_t total = sizeof slot->hdr;
    for (struct proust__chunk *c = first; c; c = c->next) {
        slot->iov[iovcnt].iov_base = &c->hdr;
        slot->iov[iovcnt++].iov_len = sizeof c->hdr;
        for (int b = 0; b < c->nbody; b++)
            if (c->body[b].iov_len)
                slot->iov[iovcnt++] = c->body[b];
        total += proust__chunk_wire_size(c);
    }
    slot->hdr.magic = PROUST__PKT_MAGIC;
    slot->hdr.nchunks = (uint16_t)n;
    slot->hdr.len = (uint32_t)total;
    slot->iov[0].iov_base = &slot->hdr;
    slot->iov[0].iov_len = sizeof slot->hdr;
    slot->chunks = first;
    atomic_store_explicit(&slot->busy, true, memory_order_relaxed);
    int urgent = 0;
    for (struct proust__chunk *c = first; c; c = c->next)
        urgent |= c->hdr.type == PROUST__CH_RTS || c->hdr.type == PROUST__CH_CTS ||
                  c->hdr.type == PROUST__CH_PUSH || c->hdr.type == PROUST__CH_OFFER ||
                  c->hdr.type == PROUST__CH_OFFER_NO || c->hdr.type == PROUST__CH_CANCEL ||
                  c->hdr.type == PROUST__CH_CANCEL_ANS;
    proust__packet_urgent = urgent;
    /* one small packet in 32 is timed: the rail's measured cost (auto) */
    bool timed = total <= SMALL_PACKET && (++g->send_ticks & 31u) == 0;
    uint64_t t0 = timed ? now_ns() : 0;
    int rc = g->rail->ops->send(g->rail, g->peer, slot->iov, iovcnt, slot);
    if (timed)
        proust__packet_ns_sample(&g->rail->packet_ns, now_ns() - t0);
    proust__packet_urgent = 0;
    if (rc != PROUST__INPROGRESS) {
        slot->chunks = NULL;
        atomic_store_explicit(&slot->busy, false, memory_order_release);
    }
    return rc;
}

struct proust__packet_slot *proust__gate_idle_slot(struct proust__gate *g)
{
    if (g->win.head || g->rail->ops->busy(g->rail, g->peer))
        return NULL;
    return free_slot(g);
}

int proust__gate_schedule(struct proust_session *s, struct proust__gate *g)
{
    proust__rail_t *rail = g->rail;
    int failed = atomic_load_explicit(&g->failed, memory_order_acquire);
    if (failed) {
        struct proust__chunk *c = g->win.head;
        g->win.head = g->win.tail = NULL;
        g->win.count = g->win.urgent = 0;
        credit_chunks(c, failed);
        if (rail->ops->disconnect)
            rail->ops->disconnect(rail, g->peer, failed);
        for (unsigned i = 0; i < g->nextra; i++)
            if (g->extra[i]->ops->disconnect)
                g->extra[i]->ops->disconnect(g->extra[i], g->peer, failed);
        clear_pending(s, g);
        return 1;
    }
    int moved = 0;
    if (rail->ops->flush) {
        int f = rail->ops->flush(rail, g->peer);
        if (f > 0)
            moved += f;
    }
    bool extra_busy = false; /* shares of split puts queued on the other rails */
    for (unsigned i = 0; i < g->nextra; i++) {
        proust__rail_t *x = g->extra[i];
        int f = x->ops->flush ? x->ops->flush(x, g->peer) : 0;
        if (f > 0)
            moved += f;
        extra_busy |= x->ops->busy(x, g->peer) != 0;
    }

    while (g->win.head) {
        struct proust__packet_slot *slot = free_slot(g);
        if (!slot || rail->ops->busy(rail, g->peer))
            break;
        unsigned n;
        struct proust__chunk *first =
            proust__gate_strategy(s, rail)->next_packet(&g->win, &g->budget, &n);
        if (!first)
            break;
        int rc = proust__gate_send_packet(g, slot, first, n);
        moved++;
        if (rc == PROUST__INPROGRESS)
            continue; /* send_done frees the slot */
        credit_chunks(first, rc);
        if (rc != PROUST_OK) {
            PROUST_ERROR("send to rank %d failed: %s", g->peer, proust_strerror(rc));
            break;
        }
    }
    bool driver_busy = extra_busy || rail->ops->busy(rail, g->peer) ||
                       proust__gate_slots_busy(g);
    if (g->win.head || driver_busy)
        proust__gate_mark_pending(s, g);
    else
        clear_pending(s, g);
    return moved;
}

/* A packet or put that a driver queued has left (or failed). Runs with the
 * gate lock held (from flush) or from poll. */
void proust__on_send_done(void *engine, void *ctx, int status)
{
    (void)engine;
    uintptr_t v = (uintptr_t)ctx;
    if (v & 1u) { /* a put fragment of a send request */
        struct proust_request *req = (struct proust_request *)(v & ~(uintptr_t)1u);
        if (status != PROUST_OK)
            proust__request_set_error(req, status);
        proust__request_event_done(req);
        return;
    }
    struct proust__packet_slot *slot = ctx;
    struct proust__chunk *chunks = slot->chunks;
    slot->chunks = NULL;
    atomic_store_explicit(&slot->busy, false, memory_order_release);
    credit_chunks(chunks, status);
}

void proust__gate_fail(struct proust_session *s, struct proust__gate *g, int status,
                       const char *why)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g->failed, &expected, status))
        return; /* already failed */
    PROUST_WARN("rank %d unreachable: %s", g->peer, why);

    /* sends: the window, and sends waiting for the peer's answer */
    proust__lock(&g->lock);
    struct proust__chunk *c = g->win.head;
    g->win.head = g->win.tail = NULL;
    g->win.count = g->win.urgent = 0;
    credit_chunks(c, status);
    free(g->offer_in); /* the peer's offer: nobody to write to */
    g->offer_in = NULL;
    /* the driver fails what it still holds for that peer (puts, packets) */
    if (g->rail && g->rail->ops->disconnect)
        g->rail->ops->disconnect(g->rail, g->peer, status);
    for (unsigned i = 0; i < g->nextra; i++)
        if (g->extra[i]->ops->disconnect)
            g->extra[i]->ops->disconnect(g->extra[i], g->peer, status);
    struct proust_request *w;
    while ((w = g->waiting_head)) {
        proust__dlist_remove(&g->waiting_head, &g->waiting_tail, w);
        w->where = PROUST__IN_NONE;
        atomic_fetch_sub_explicit(&s->sends_waiting, 1, memory_order_relaxed);
        proust__request_set_error(w, status);
        /* the answers the peer still owed will not come */
        int owed = w->remote_owed;
        w->remote_owed = 0;
        while (owed-- > 0)
            proust__request_event_done(w);
    }
    proust__cancels_fail(s, g); /* their answers will not come either */
    proust__unlock(&g->lock);

    /* gets queued for this peer will not run: their receives fail below */
    proust__gets_forget(s, g->peer);
    proust__offer_uses_forget(s, g->peer);
    /* receives posted for this peer, receives in progress from it, and
     * any-source receives (they may wait for this peer forever) */
    proust__match_lock(g);
    struct proust_request *r;
    while ((r = g->posted_head)) {
        proust__gate_posted_del(g, r);
        proust__offer_drop(s, r);
        r->where = PROUST__IN_NONE;
        r->status.error = status;
        r->status.source = g->peer;
        proust__request_complete(r);
    }
    while ((r = g->receiving_head)) {
        proust__dlist_remove(&g->receiving_head, &g->receiving_tail, r);
        proust__offer_drop(s, r);
        r->where = PROUST__IN_NONE;
        proust__request_fail(r, status);
    }
    /* packs bound to a receive but still missing segments from this peer */
    struct proust__inmsg *pulling = NULL; /* an idle pull's data may still land */
    while (g->active) {
        struct proust__inmsg *m = g->active;
        g->active = m->next;
        if (m->req)
            proust__request_fail(m->req, status);
        if (proust__inmsg_pulling(m)) {
            m->next = pulling; /* freed when it lands, or with the session */
            pulling = m;
        } else {
            proust__inmsg_free(m);
        }
    }
    g->active = pulling;
    proust__lock(&s->any_lock);
    while ((r = s->any_head)) {
        proust__dlist_remove(&s->any_head, &s->any_tail, r);
        atomic_fetch_sub_explicit(&s->any_posted, 1, memory_order_relaxed);
        r->where = PROUST__IN_NONE;
        r->status.error = status;
        r->status.source = g->peer;
        proust__request_complete(r);
    }
    proust__unlock(&s->any_lock);
    proust__match_unlock(g);
}
