/*
 * send_path.c — from a send request to chunks in the window, and the
 * sender's side of the rendezvous.
 *
 * Each segment becomes one chunk: DATA (eager: the bytes travel in the
 * packet) below the rail's rendezvous threshold, RTS above it. An RTS is
 * answered by a CTS (the sender then put()s the bytes straight into the
 * receive buffer) or, where the rail lets the receiver pull the data with
 * get(), by a FIN once it has.
 *
 * A send request completes when its `pending` events are all done: one per
 * chunk leaving the process, one per rendezvous transfer, one for the ACK of
 * a synchronous eager send.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/chunk.h"
#include "core/gate.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"
#include "core/token.h"
#include "proust.h"

static void fill_envelope(struct proust__chunk *c, const struct proust_request *req,
                          uint16_t seg, uint32_t seq)
{
    c->hdr = (struct proust__chunk_hdr){
        .seg = seg,
        .nseg = req->nseg,
        .seq = seq,
        .tag = req->tag,
        .total = req->total,
    };
    c->next = NULL;
    c->owned = false;
}

/* The header of a one-segment eager message (the two fast paths). */
static inline struct proust__chunk_hdr plain_data_hdr(uint32_t seq, size_t len, proust_tag_t tag)
{
    return (struct proust__chunk_hdr){.type = PROUST__CH_DATA, .nseg = 1, .seq = seq,
                                      .len = (uint32_t)len, .tag = tag, .total = len};
}

/* Build the chunk of segment `seg`; returns the events it adds. */
static int build_segment(struct proust_session *s, struct proust__gate *g,
                         struct proust_request *req, struct proust__chunk *c, uint16_t seg,
                         bool sync, bool sync_tail, size_t threshold)
{
    const struct iovec *data = &req->segs[seg];
    c->req = req;
    c->nbody = 0;
    if (data->iov_len < threshold) {
        c->hdr.type = PROUST__CH_DATA;
        if (sync_tail) {
            struct proust__data_tail tail = {
                .sender_token = proust__token_alloc(s, req, seg),
            };
            memcpy(c->storage, &tail, sizeof tail);
            c->hdr.flags |= PROUST__CF_SYNC;
            c->body[c->nbody].iov_base = c->storage;
            c->body[c->nbody++].iov_len = sizeof tail;
            req->remote_owed++;
        }
        c->body[c->nbody++] = *data;
        c->hdr.len = (uint32_t)(data->iov_len + (sync_tail ? sizeof(struct proust__data_tail) : 0));
        return sync_tail ? 2 : 1; /* sent (+ ACK) */
    }
    proust__rail_t *rail = g->rail;
    struct proust__rts_body rb = {
        .sender_token = proust__token_alloc(s, req, seg),
        .seg_size = data->iov_len,
        .key_len = 0,
    };
    if ((rail->caps.flags & PROUST__RAIL_CAN_GET) && data->iov_len >= rail->caps.get_threshold &&
        (seg < 64 || !rail->ops->unexpose) &&
        (req->waited || !(rail->caps.flags & PROUST__RAIL_GET_WHILE_WAITED) ||
         proust__get_async_ok(rail, data->iov_len))) {
        int klen = rail->ops->expose(rail, data->iov_base, data->iov_len,
                                     c->storage + sizeof rb, PROUST__MAX_KEY);
        if (klen > 0) {
            rb.key_len = (uint32_t)klen;
            if (rail->ops->unexpose) /* released when the send completes */
                atomic_fetch_or_explicit(&req->exposed, 1ull << seg, memory_order_relaxed);
        }
    }
    memcpy(c->storage, &rb, sizeof rb);
    c->hdr.type = PROUST__CH_RTS;
    if (req->waited)
        c->hdr.flags |= PROUST__CF_WAITS;
    if (sync) /* its FIN must mean that a receive matched */
        c->hdr.flags |= PROUST__CF_RDV_SYNC;
    c->body[0].iov_base = c->storage;
    c->body[0].iov_len = sizeof rb + rb.key_len;
    c->nbody = 1;
    c->hdr.len = (uint32_t)(sizeof rb + rb.key_len);
    req->remote_owed++;
    return 2; /* RTS sent + data transferred */
}

/* What a pending offer from the peer asks of a new send (offer.c). */
struct offer_todo {
    int what; /* 1: use it, -1: decline it, 0: nothing */
    uint64_t rts_token;
    struct proust__offer_in *o;
};

/* A message was just numbered (gate lock held): remember a one-segment
 * RTS, and see whether the peer's pending offer names this message. */
static inline void offer_note(struct proust__gate *g, struct proust_request *req, uint32_t seq,
                              const struct proust__chunk *c, struct offer_todo *todo)
{
    uint64_t rts_token = 0;
    if (req->nseg == 1 && c->hdr.type == PROUST__CH_RTS) {
        struct proust__rts_body rb;
        memcpy(&rb, c->storage, sizeof rb);
        rts_token = rb.sender_token;
    }
    PROUST__NOTE_SENT(g, seq, req->tag, rts_token);
    if (__builtin_expect(g->offer_in != NULL, 0)) {
        todo->what = proust__offer_check_send(g, req, seq, rts_token, &todo->o);
        todo->rts_token = rts_token;
    }
}

static int send_post(struct proust_session *s, struct proust_request *req, bool sync,
                     const unsigned *hints, struct offer_todo *todo)
{
    struct proust__gate *g = &s->gates[req->peer];
    int failed = atomic_load_explicit(&g->failed, memory_order_acquire);
    req->status.source = req->peer;
    req->status.tag = req->tag;
    req->status.size = req->total;
    req->status.count = req->total;
    if (failed) {
        req->status.error = failed;
        proust__request_complete(req);
        return PROUST_OK;
    }
    size_t threshold = g->rdv_threshold;
    struct proust__chunk *first, *last;
    int events;
    if (req->nseg == 1) {
        /* a plain message: one chunk, no ordering to work out */
        first = last = &req->chunk0;
        bool eager = req->seg0.iov_len < threshold;
        proust__lock(&g->lock);
        if (eager && !sync) {
            /* the common case, kept short: one DATA chunk */
            first->hdr = plain_data_hdr(g->send_seq++, req->seg0.iov_len, req->tag);
            first->next = NULL;
            first->owned = false;
            first->req = req;
            first->body[0] = req->seg0;
            first->nbody = 1;
            events = 1;
            PROUST__NOTE_SENT(g, first->hdr.seq, req->tag, 0);
            if (__builtin_expect(g->offer_in != NULL, 0))
                offer_note(g, req, first->hdr.seq, first, todo);
        } else {
            fill_envelope(first, req, 0, g->send_seq++);
            events = build_segment(s, g, req, first, 0, sync, sync && eager, threshold);
            offer_note(g, req, first->hdr.seq, first, todo);
        }
        first->urgent = false;
    } else {
        bool any_rdv = false;
        for (uint16_t i = 0; i < req->nseg; i++)
            any_rdv |= req->segs[i].iov_len >= threshold;
        struct proust__chunk *chunks = req->chunks;
        events = 0;
        proust__lock(&g->lock);
        uint32_t seq = g->send_seq++;
        for (uint16_t i = 0; i < req->nseg; i++) {
            struct proust__chunk *c = &chunks[i];
            fill_envelope(c, req, i, seq);
            events += build_segment(s, g, req, c, i, sync, sync && !any_rdv && i == 0, threshold);
            c->urgent = hints && (hints[i] & PROUST_PACK_URGENT);
        }
        offer_note(g, req, seq, &chunks[0], todo);
        /* urgent segments of a pack go first, the rest keep their order */
        first = last = NULL;
        for (int pass = 0; pass < 2; pass++) {
            for (uint16_t i = 0; i < req->nseg; i++) {
                struct proust__chunk *c = &chunks[i];
                if (c->urgent != (pass == 0))
                    continue;
                if (last)
                    last->next = c;
                else
                    first = c;
                last = c;
            }
        }
    }
    if (__builtin_expect(atomic_load_explicit(&g->failed, memory_order_acquire) != 0, 0)) {
        /* the peer failed since the check above: gate_fail has already
         * drained this gate, so nothing would ever complete the send */
        int now_failed = atomic_load(&g->failed);
        proust__unlock(&g->lock);
        req->remote_owed = 0;
        req->status.error = now_failed;
        proust__request_complete(req);
        return PROUST_OK;
    }
    atomic_store_explicit(&req->pending, events, memory_order_relaxed);
    if (req->remote_owed) {
        req->where = PROUST__IN_WAITING;
        proust__dlist_append(&g->waiting_head, &g->waiting_tail, req);
        atomic_fetch_add_explicit(&s->sends_waiting, 1, memory_order_relaxed);
    }
    struct proust__packet_slot *slot;
    const struct proust__strategy_ops *st = proust__gate_strategy(s, g->rail);
    /* (a blocking send leaves at once: its thread waits for it next, so
     * nothing of its own could join it in the window) */
    bool at_once = req->waited || proust__gate_post_at_once(g, st);
    if (req->nseg == 1 && at_once && (slot = proust__gate_idle_slot(g))) {
        /* fast path: nothing queued, rail idle — no window, no strategy */
        int rc = proust__gate_send_packet(g, slot, first, 1);
        if (st->defer_bursts) /* a burst's gaps count from the end of a send */
            g->burst_ns = proust__now_ns();
        if (rc == PROUST_OK && events == 1) {
            /* the request never left this thread: complete it without a
             * locked instruction */
            proust__unlock(&g->lock);
            atomic_store_explicit(&req->pending, 0, memory_order_relaxed);
            atomic_store_explicit(&req->flags, PROUST__RF_DONE, memory_order_release);
            return PROUST_OK;
        }
        if (rc == PROUST__INPROGRESS) {
            proust__gate_mark_pending(s, g); /* progress must flush the driver */
        } else {
            if (rc != PROUST_OK)
                proust__request_set_error(req, rc);
            proust__request_event_done(req);
        }
        proust__unlock(&g->lock);
        return PROUST_OK;
    }
    /* the first chunk a burst holds back: a progress thread sends it if the
     * application does not come back first */
    bool held_first = !at_once && st->defer_bursts && !g->win.head;
    if (!at_once && st->defer_bursts) {
        proust__burst_session = s;
        proust__burst_peer = (int)(g - s->gates);
    }
    proust__window_push(g, first, last, req->nseg);
    if (at_once || (st->flush_when_full && g->win.count >= g->packet_chunks))
        proust__gate_schedule(s, g);
    else
        proust__gate_mark_pending(s, g);
    proust__unlock(&g->lock);
    if (held_first)
        proust__threads_wake(&s->prog);
    return PROUST_OK;
}

int proust__send_post(struct proust_session *s, struct proust_request *req, bool sync,
                      const unsigned *hints)
{
    struct offer_todo todo = {0};
    PROUST__COARSE_ENTER(&s->prog);
    int rc = send_post(s, req, sync, hints, &todo);
    PROUST__COARSE_LEAVE(&s->prog);
    if (__builtin_expect(todo.what != 0, 0)) {
        /* after the message: the receiver matches it first */
        if (todo.what < 0)
            proust__offer_decline(s, req->peer, todo.o, false);
        else if (proust__offer_worth_using(s, req->peer))
            proust__offer_queue_use(s, req->peer, todo.rts_token, todo.o);
        else
            proust__offer_decline(s, req->peer, todo.o, true);
        free(todo.o);
    }
    /* A rendezvous on a rail where the sender must push the data (no get:
     * tcp) needs us to act on the peer's answer while we may be computing:
     * the progress thread must not nap through it. (On shm the receiver
     * pulls: waking our thread would only take a core from someone.) */
    if (req->total >= PROUST__KICK_BYTES &&
        !(s->gates[req->peer].rail->caps.flags & PROUST__RAIL_CAN_GET))
        proust__threads_kick(&s->prog);
    return rc;
}

int proust__send_eager_now(struct proust_session *s, struct proust__gate *g, const void *buf,
                           size_t len, proust_tag_t tag)
{
    PROUST__COARSE_ENTER(&s->prog);
    proust__lock(&g->lock);
    int failed = atomic_load_explicit(&g->failed, memory_order_acquire);
    if (failed) {
        proust__unlock(&g->lock);
        PROUST__COARSE_LEAVE(&s->prog);
        return failed;
    }
    if (g->win.head || proust__gate_slots_busy(g) || g->offer_in) {
        /* keep the order: queued chunks go first; a pending offer must see
         * every message (the request path does) */
        proust__unlock(&g->lock);
        PROUST__COARSE_LEAVE(&s->prog);
        return PROUST_ERR_BUSY;
    }
    struct {
        struct proust__pkt_hdr pkt;
        struct proust__chunk_hdr chunk;
    } h = {
        .pkt = {.magic = PROUST__PKT_MAGIC, .nchunks = 1,
                .len = (uint32_t)(sizeof h.pkt + sizeof h.chunk + len)},
        .chunk = plain_data_hdr(g->send_seq, len, tag),
    };
    _Static_assert(sizeof h == sizeof(struct proust__pkt_hdr) + sizeof(struct proust__chunk_hdr),
                   "headers are contiguous");
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)buf, len}};
    int rc = g->rail->ops->try_send(g->rail, g->peer, iov, len ? 2 : 1);
    if (rc == PROUST_OK) { /* the number is spent only if the packet left */
        PROUST__NOTE_SENT(g, g->send_seq, tag, 0);
        g->send_seq++;
    }
    proust__unlock(&g->lock);
    PROUST__COARSE_LEAVE(&s->prog);
    return rc;
}

int proust__send_control(struct proust_session *s, int peer, uint8_t type, uint64_t token,
                         const void *body, size_t body_len)
{
    return proust__send_control_ext(s, peer, type, 0, token, 0, 0, body, body_len);
}

struct proust__chunk *proust__control_chunk_new(uint8_t type, uint8_t flags, uint64_t token,
                                                uint32_t seq, proust_tag_t tag, const void *body,
                                                size_t body_len, bool urgent)
{
    struct proust__chunk *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->owned = true;
    c->urgent = urgent;
    c->hdr.type = type;
    c->hdr.flags = flags;
    c->hdr.total = token;
    c->hdr.seq = seq;
    c->hdr.tag = tag;
    c->hdr.len = (uint32_t)body_len;
    if (body_len) {
        proust_copy(c->storage, body, body_len);
        c->body[0].iov_base = c->storage;
        c->body[0].iov_len = body_len;
        c->nbody = 1;
    }
    return c;
}

int proust__send_control_ext(struct proust_session *s, int peer, uint8_t type, uint8_t flags,
                             uint64_t token, uint32_t seq, proust_tag_t tag, const void *body,
                             size_t body_len)
{
    struct proust__gate *g = &s->gates[peer];
    struct proust__chunk *c =
        proust__control_chunk_new(type, flags, token, seq, tag, body, body_len, true);
    if (!c)
        return PROUST_ERR_NOMEM;
    proust__lock(&g->lock);
    proust__window_push(g, c, c, 1);
    /* answers are never held back: the peer is waiting for them */
    proust__gate_schedule(s, g);
    proust__unlock(&g->lock);
    return PROUST_OK;
}

/* The peer answered something this request waited for (gate lock held). */
static void owed_answered(struct proust_session *s, struct proust__gate *g,
                          struct proust_request *req)
{
    if (--req->remote_owed == 0 && req->where == PROUST__IN_WAITING) {
        proust__dlist_remove(&g->waiting_head, &g->waiting_tail, req);
        req->where = PROUST__IN_NONE;
        atomic_fetch_sub_explicit(&s->sends_waiting, 1, memory_order_relaxed);
    }
}

/* Find the send a CTS/PUSH names and mark the answer received (gate lock
 * held); NULL if the token names no send of this peer waiting for it. */
struct proust_request *proust__answered_send(struct proust_session *s, struct proust__gate *g,
                                             uint64_t sender_token, uint64_t accepted,
                                             uint16_t *seg)
{
    struct proust_request *req = proust__token_lookup(s, sender_token, seg);
    if (!req || req->kind != PROUST__REQ_SEND || req->peer != g->peer || *seg >= req->nseg ||
        req->where != PROUST__IN_WAITING || accepted > req->segs[*seg].iov_len)
        return NULL;
    proust__token_release(s, sender_token);
    owed_answered(s, g, req);
    return req;
}

/* Fragments of `len` bytes on `rail` (pieces of its put_fragment). */
static size_t fragments(const proust__rail_t *rail, size_t len)
{
    size_t frag = rail->caps.put_fragment ? rail->caps.put_fragment : len;
    return len ? (len + frag - 1) / frag : 0;
}

/* Put [off, off + len) of the segment on `rail`, one event per fragment
 * (booked by the caller). */
static void put_range(struct proust__gate *g, proust__rail_t *rail, struct proust_request *req,
                      const uint8_t *base, uint64_t receiver_token, size_t off, size_t len)
{
    size_t frag = rail->caps.put_fragment ? rail->caps.put_fragment : len;
    void *ctx = (void *)((uintptr_t)req | 1u);
    for (size_t end = off + len; off < end; off += frag) {
        size_t n = end - off < frag ? end - off : frag;
        int rc = rail->ops->put(rail, g->peer, receiver_token, off, base + off, n, ctx);
        if (rc == PROUST__INPROGRESS)
            continue;
        if (rc != PROUST_OK)
            proust__request_set_error(req, rc);
        proust__request_event_done(req);
    }
}

/* Put `accepted` bytes of segment `seg` to the receiver's token, in
 * fragments, split across the peer's rails when the strategy says so
 * (gate lock held; releases it). */
static void put_segment(struct proust_session *s, struct proust__gate *g,
                        struct proust_request *req, uint16_t seg, uint64_t receiver_token,
                        size_t accepted)
{
    proust__rail_t *rails[1 + PROUST__GATE_EXTRA_MAX] = {g->rail};
    size_t share[1 + PROUST__GATE_EXTRA_MAX] = {accepted};
    unsigned n = 1;
    if (s->strategy->split && g->nextra) {
        double bw[1 + PROUST__GATE_EXTRA_MAX] = {g->rail->caps.bandwidth_gbs};
        for (unsigned i = 0; i < g->nextra; i++) {
            rails[n] = g->extra[i];
            bw[n++] = g->extra[i]->caps.bandwidth_gbs;
        }
        s->strategy->split(bw, n, accepted, share);
    }
    size_t nfrag = 0;
    for (unsigned i = 0; i < n; i++)
        nfrag += fragments(rails[i], share[i]);
    if (nfrag == 0) {
        proust__unlock(&g->lock);
        proust__request_event_done(req);
        return;
    }
    /* one event was booked for the transfer: book the other fragments */
    atomic_fetch_add_explicit(&req->pending, (int)nfrag - 1, memory_order_acq_rel);
    const uint8_t *base = req->segs[seg].iov_base;
    size_t off = 0;
    bool busy = false;
    for (unsigned i = 0; i < n; i++) {
        put_range(g, rails[i], req, base, receiver_token, off, share[i]);
        off += share[i];
        busy |= rails[i]->ops->busy(rails[i], g->peer) != 0;
    }
    proust__unlock(&g->lock);
    if (busy)
        proust__gate_mark_pending(s, g);
}

void proust__send_on_cts(struct proust_session *s, int peer, const struct proust__cts_body *cts)
{
    struct proust__gate *g = &s->gates[peer];
    uint16_t seg;
    proust__lock(&g->lock);
    struct proust_request *req = proust__answered_send(s, g, cts->sender_token, cts->accepted, &seg);
    if (!req) {
        proust__unlock(&g->lock);
        PROUST_WARN("rank %d sent a CTS for an unknown send; ignored", peer);
        return;
    }
    put_segment(s, g, req, seg, cts->receiver_token, cts->accepted);
}

void proust__send_on_push(struct proust_session *s, int peer, const struct proust__push_body *pb,
                          const uint8_t *key)
{
    struct proust__gate *g = &s->gates[peer];
    uint16_t seg;
    proust__lock(&g->lock);
    struct proust_request *req = proust__answered_send(s, g, pb->sender_token, pb->accepted, &seg);
    if (!req) {
        proust__unlock(&g->lock);
        PROUST_WARN("rank %d sent a PUSH for an unknown send; ignored", peer);
        return;
    }
    proust__rail_t *rail = g->rail;
    if (rail->ops->write && pb->accepted) {
        /* the copy runs without the gate lock: the request cannot complete
         * before this transfer's event is credited below */
        proust__unlock(&g->lock);
        int rc = rail->ops->write(rail, peer, key, pb->key_len, 0, req->segs[seg].iov_base,
                                  pb->accepted);
        if (rc == PROUST_OK) {
            proust__send_control(s, peer, PROUST__CH_DONE, pb->receiver_token, NULL, 0);
            proust__request_event_done(req);
            return;
        }
        PROUST_DEBUG("write to rank %d refused (%s): sending by puts", peer, proust_strerror(rc));
        proust__lock(&g->lock);
    }
    put_segment(s, g, req, seg, pb->receiver_token, pb->accepted);
}

void proust__send_on_ack(struct proust_session *s, int peer, uint64_t token)
{
    struct proust__gate *g = &s->gates[peer];
    uint16_t seg;
    proust__lock(&g->lock);
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req || req->kind != PROUST__REQ_SEND || req->peer != peer ||
        req->where != PROUST__IN_WAITING) {
        proust__unlock(&g->lock);
        PROUST_WARN("rank %d acknowledged an unknown send; ignored", peer);
        return;
    }
    proust__token_release(s, token);
    owed_answered(s, g, req);
    proust__unlock(&g->lock);
    proust__request_event_done(req);
}
