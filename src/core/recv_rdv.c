/*
 * recv_rdv.c — the receiver's side of the rendezvous: answering an RTS
 * (CTS for puts, a get, or a PUSH asking the sender to write), gets queued
 * while polling and run after it (sharing the copies with the sender when
 * several wait), and the puts and DONEs that land the data.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/gate.h"
#include "core/match.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/rma.h"
#include "core/send.h"
#include "core/session.h"
#include "core/token.h"

/* A rendezvous segment whose data is pulled (or pushed) after the poll. */
struct proust__pending_get {
    struct proust__pending_get *next;
    int peer;
    struct proust_request *req;
    uint16_t seg;
    uint64_t sender_token;
    size_t accepted;
    uint32_t key_len;
    bool sender_waits; /* in a blocking send: idle until its data moves */
    uint8_t key[PROUST__MAX_KEY];
};

/* The segment's data is in place: the receive may complete. */
void proust__segment_landed(struct proust_session *s, int peer, struct proust_request *req)
{
    if (__builtin_expect(req->held_for != NULL, 0)) { /* an idle pull's */
        proust__recv_pull_landed(s, peer, req);
        return;
    }
    struct proust__gate *g = &s->gates[peer];
    proust__match_lock(g);
    if (--req->remote_owed == 0 && req->where == PROUST__IN_RECEIVING) {
        proust__dlist_remove(&g->receiving_head, &g->receiving_tail, req);
        req->where = PROUST__IN_NONE;
    }
    proust__match_unlock(g);
    proust__request_event_done(req);
}

void proust__send_cts(struct proust_session *s, int peer, struct proust_request *req, uint16_t seg,
                     uint64_t sender_token, size_t accepted)
{
    int failed = atomic_load(&s->gates[peer].failed);
    if (failed && accepted) { /* no data will come from a failed peer */
        proust__request_set_error(req, failed);
        proust__segment_landed(s, peer, req);
        return;
    }
    struct proust__cts_body cts = {.sender_token = sender_token, .accepted = accepted};
    if (accepted)
        cts.receiver_token = proust__token_alloc(s, req, seg);
    else if (req)
        proust__request_event_done(req); /* nothing to receive */
    proust__send_control(s, peer, PROUST__CH_CTS, 0, &cts, sizeof cts);
}

/* A large get cut into pieces that idle threads copy in parallel; the
 * thread that copies the last piece finishes the segment. */
struct split_get {
    struct proust_session *s;
    int peer;
    struct proust_request *req;
    uint8_t *dst;
    uint64_t sender_token;
    size_t piece, len;
    uint32_t key_len;
    uint8_t key[PROUST__MAX_KEY];
    _Atomic int left;  /* pieces not yet copied */
    _Atomic int error; /* first failure */
    struct split_piece {
        struct proust__job job;
        struct split_get *whole;
        uint64_t offset;
    } pieces[];
};

static void split_finish(struct split_get *sg)
{
    int err = atomic_load(&sg->error);
    if (err != PROUST_OK)
        proust__request_set_error(sg->req, err == PROUST_ERR_PEER_FAILED ? err : PROUST_ERR_CONN);
    proust__send_control(sg->s, sg->peer, PROUST__CH_FIN, sg->sender_token, NULL, 0);
    proust__segment_landed(sg->s, sg->peer, sg->req);
    free(sg);
}

static void split_piece_run(struct proust__job *job)
{
    struct split_piece *pc = (struct split_piece *)job;
    struct split_get *sg = pc->whole;
    proust__rail_t *rail = sg->s->gates[sg->peer].rail;
    size_t n = sg->len - pc->offset < sg->piece ? sg->len - pc->offset : sg->piece;
    int rc = rail->ops->get(rail, sg->peer, sg->key, sg->key_len, pc->offset, sg->dst + pc->offset,
                            n);
    if (rc != PROUST_OK) {
        int expected = PROUST_OK;
        atomic_compare_exchange_strong(&sg->error, &expected, rc);
    }
    if (atomic_fetch_sub_explicit(&sg->left, 1, memory_order_acq_rel) == 1)
        split_finish(sg);
}

/* Cut the get in pieces if it is large and helpers exist; false: do it
 * whole. The first piece is copied here, before anything is queued, so a
 * refused get still falls back to puts. */
static bool split_get(struct proust_session *s, int peer, struct proust_request *req,
                      uint16_t seg, uint64_t sender_token, size_t accepted, const uint8_t *key,
                      uint32_t key_len)
{
    size_t piece = s->prog.offload_piece;
    if (!s->prog.nqueues || accepted < 2 * piece)
        return false;
    size_t n = (accepted + piece - 1) / piece;
    struct split_get *sg = malloc(sizeof *sg + n * sizeof sg->pieces[0]);
    if (!sg)
        return false;
    proust__rail_t *rail = s->gates[peer].rail;
    uint8_t *dst = req->segs[seg].iov_base;
    if (rail->ops->get(rail, peer, key, key_len, 0, dst, piece) != PROUST_OK) {
        free(sg); /* refused or failed: the whole path says what to do */
        return false;
    }
    *sg = (struct split_get){.s = s, .peer = peer, .req = req, .dst = dst,
                             .sender_token = sender_token, .piece = piece, .len = accepted,
                             .key_len = key_len};
    memcpy(sg->key, key, key_len);
    atomic_init(&sg->left, (int)(n - 1));
    atomic_init(&sg->error, PROUST_OK);
    for (size_t i = 1; i < n; i++) {
        sg->pieces[i].job = (struct proust__job){.run = split_piece_run,
                                                 .next = i + 1 < n ? &sg->pieces[i + 1].job
                                                                   : NULL};
        sg->pieces[i].whole = sg;
        sg->pieces[i].offset = (uint64_t)i * piece;
    }
    proust__offload_submit(&s->prog, &sg->pieces[1].job, &sg->pieces[n - 1].job, (int)(n - 1));
    /* and copy too: the queue gives us what the helpers have not taken */
    proust__offload_run(&s->prog);
    return true;
}

/* KiB of asynchronous gets in flight at most (one larger goes alone),
 * those beyond by puts (CTS), as before. tcp;ofi_rxm, a window of 64
 * sends: no bound put 128 reads of 512 KiB in rxm's hands at 1 MiB and ran
 * at 0.6-0.7 of the puts; 4 MiB held 256 KiB at 6.8-7.0 GB/s, 8 MiB gave
 * 7.2-7.3 there and 9.0-9.5 from 512 KiB up, 16 MiB was erratic above. */
#define ASYNC_GET_KB 8192

/* A get the rail does asynchronously, as a one-sided read of the
 * sender's exposed memory (rma(), answered by proust__on_rma_done): the
 * receiver goes on while the bytes come, so a sender that computes after
 * its Isend stalls nobody, and nonblocking sends may expose their bytes
 * too (send_path.c). */
struct async_get {
    struct proust_session *s;
    int peer;
    struct proust_request *req;
    uint64_t sender_token;
    size_t len;
    _Atomic size_t left; /* reads not answered, +1 while posting */
    _Atomic int status;  /* the first failure */
};

void proust__get_done(struct async_get *ag, int status)
{
    int ok = PROUST_OK;
    if (status != PROUST_OK)
        atomic_compare_exchange_strong(&ag->status, &ok, status);
    if (atomic_fetch_sub(&ag->left, 1) != 1)
        return;
    atomic_fetch_sub(&ag->s->gets_async, (int)(ag->len >> 10));
    /* A failed sender: proust__gate_fail fails the receive (still in the
     * gate's receiving list: it has not landed), and answers our reads
     * from inside, gate locked, where neither a FIN nor the match lock
     * may be taken. */
    if (atomic_load_explicit(&ag->s->gates[ag->peer].failed, memory_order_acquire)) {
        free(ag);
        return;
    }
    status = atomic_load(&ag->status);
    if (status != PROUST_OK)
        proust__request_set_error(ag->req,
                                  status == PROUST_ERR_PEER_FAILED ? status : PROUST_ERR_CONN);
    proust__send_control(ag->s, ag->peer, PROUST__CH_FIN, ag->sender_token, NULL, 0);
    proust__segment_landed(ag->s, ag->peer, ag->req);
    free(ag);
}

bool proust__get_async_ok(const proust__rail_t *rail, size_t len)
{
    return rail->ops->rma && (rail->caps.flags & PROUST__RAIL_CAN_RMA) &&
           (!rail->caps.rma_max || len <= rail->caps.rma_max);
}

/* Start the get as reads of at most the rail's put fragment each, all in
 * flight (ofi over tcp: 1 MiB read whole ran at 0.6 of 512 KiB pieces);
 * false when the rail refused the first at once (the caller then gets it
 * the synchronous way, which says what to do). */
static bool get_async(struct proust_session *s, int peer, struct proust_request *req,
                      uint16_t seg, uint64_t sender_token, size_t accepted, const uint8_t *key,
                      uint32_t key_len)
{
    proust__rail_t *rail = s->gates[peer].rail;
    int busy = atomic_load(&s->gets_async);
    if (busy > 0 && busy + (int)(accepted >> 10) > ASYNC_GET_KB)
        return false;
    struct async_get *ag = malloc(sizeof *ag);
    if (!ag)
        return false;
    *ag = (struct async_get){.s = s, .peer = peer, .req = req, .sender_token = sender_token,
                             .len = accepted};
    atomic_fetch_add(&s->gets_async, (int)(accepted >> 10));
    atomic_init(&ag->left, 1);
    atomic_init(&ag->status, PROUST_OK);
    void *ctx = (void *)((uintptr_t)ag | PROUST__RMA_CTX_GET);
    size_t piece = rail->caps.put_fragment ? rail->caps.put_fragment : accepted;
    uint8_t *dst = req->segs[seg].iov_base;
    for (size_t at = 0; at < accepted; at += piece) {
        size_t n = accepted - at < piece ? accepted - at : piece;
        atomic_fetch_add(&ag->left, 1);
        int rc = rail->ops->rma(rail, peer, 0, dst + at, n, key, key_len, at, ctx);
        if (rc == PROUST__INPROGRESS)
            continue;
        if (at == 0 && rc != PROUST_OK) { /* nothing posted: the caller decides */
            atomic_fetch_sub(&s->gets_async, (int)(accepted >> 10));
            free(ag);
            return false;
        }
        proust__get_done(ag, rc); /* no upcall comes for this one */
        if (rc != PROUST_OK)
            break;
    }
    proust__get_done(ag, PROUST_OK); /* the posting's count: done if all are in */
    return true;
}

/* Pull the segment from the sender's memory, or ask for puts if refused. */
void proust__do_get(struct proust_session *s, int peer, struct proust_request *req, uint16_t seg,
                   uint64_t sender_token, size_t accepted, const uint8_t *key, uint32_t key_len)
{
    proust__rail_t *rail = s->gates[peer].rail;
    if (proust__get_async_ok(rail, accepted)) {
        if (get_async(s, peer, req, seg, sender_token, accepted, key, key_len))
            return;
        if (atomic_load(&s->gets_async) > 0) { /* enough in flight: the sender puts it */
            proust__send_cts(s, peer, req, seg, sender_token, accepted);
            return;
        }
    }
    if (split_get(s, peer, req, seg, sender_token, accepted, key, key_len))
        return;
    int rc = rail->ops->get(rail, peer, key, key_len, 0, req->segs[seg].iov_base, accepted);
    if (rc == PROUST_OK) {
        proust__send_control(s, peer, PROUST__CH_FIN, sender_token, NULL, 0);
        proust__segment_landed(s, peer, req);
        return;
    }
    if (rc == PROUST_ERR_NOT_SUPPORTED) {
        PROUST_DEBUG("get from rank %d refused: falling back to put", peer);
        proust__send_cts(s, peer, req, seg, sender_token, accepted);
        return;
    }
    /* the sender is gone, or its buffer unreadable: the receive fails; a
     * live sender is released by the FIN */
    proust__request_set_error(req, rc == PROUST_ERR_PEER_FAILED ? rc : PROUST_ERR_CONN);
    proust__send_control(s, peer, PROUST__CH_FIN, sender_token, NULL, 0);
    proust__segment_landed(s, peer, req);
}

/* Ask the sender to write the segment into our buffer itself (it copies
 * while we copy another one, or while we compute). */
static void do_push(struct proust_session *s, int peer, struct proust__pending_get *pg)
{
    proust__rail_t *rail = s->gates[peer].rail;
    uint8_t body[sizeof(struct proust__push_body) + PROUST__MAX_KEY];
    struct proust__push_body pb = {.sender_token = pg->sender_token, .accepted = pg->accepted};
    int klen = rail->ops->expose(rail, pg->req->segs[pg->seg].iov_base, pg->accepted,
                                 body + sizeof pb, PROUST__MAX_KEY);
    if (klen <= 0) {
        proust__do_get(s, peer, pg->req, pg->seg, pg->sender_token, pg->accepted, pg->key,
                       pg->key_len);
        return;
    }
    pb.key_len = (uint32_t)klen;
    pb.receiver_token = proust__token_alloc(s, pg->req, pg->seg);
    memcpy(body, &pb, sizeof pb);
    proust__send_control(s, peer, PROUST__CH_PUSH, 0, body, sizeof pb + (size_t)klen);
}

/* Does `peer` have sends of ours to take (it pulls them, or waits to be
 * told they arrived)? Then its core is busy with our traffic: asking it to
 * write its own as well only shares a copy that both cores already make
 * (exchange, bibw: 15-40 % slower at 1-4 MiB). */
static bool peer_busy_with_ours(struct proust_session *s, int peer)
{
    struct proust__gate *g = &s->gates[peer];
    proust__lock(&g->lock);
    bool busy = g->waiting_head != NULL;
    proust__unlock(&g->lock);
    return busy;
}

void proust__gets_run(struct proust_session *s)
{
    proust__lock(&s->gets_lock);
    struct proust__pending_get *list = s->gets_head;
    s->gets_head = s->gets_tail = NULL;
    proust__unlock(&s->gets_lock);
    if (!list)
        return;
    /* Several segments waiting from one peer: every other one is pushed by
     * the sender (which is waiting for them anyway) while we pull the rest,
     * so both cores copy -- unless that peer has our sends to pull too. A
     * lone segment is pulled: that needs nothing from a sender that may be
     * computing. */
    for (struct proust__pending_get *pg = list; pg; pg = pg->next) {
        unsigned before = 0, total = 0;
        for (struct proust__pending_get *q = list; q; q = q->next) {
            if (q->peer != pg->peer)
                continue;
            total++;
            if (q == pg)
                before = total - 1;
        }
        const proust__rail_t *rail = s->gates[pg->peer].rail;
        bool can_push = rail->ops->write && rail->caps.write_threshold &&
                        pg->accepted >= rail->caps.write_threshold;
        /* A background progress thread runs while the application computes:
         * a sender blocked in its send is better placed to copy (its core
         * waits anyway). One that computes after Isend is not: asking it
         * costs a PUSH and its progress thread's wake-up before anything
         * moves, so we pull on our own core. */
        bool background = proust__in_progress_thread && rail->ops->write &&
                          pg->sender_waits &&
                          pg->accepted >= PROUST__PUSH_FROM_BACKGROUND &&
                          !atomic_load_explicit(&s->prog.app_polling, memory_order_relaxed);
        if (background ||
            (can_push && total >= 2 && (before & 1u) && !peer_busy_with_ours(s, pg->peer))) {
            do_push(s, pg->peer, pg);
            pg->accepted = 0; /* handled */
            pg->req = NULL;
        }
    }
    while (list) {
        struct proust__pending_get *pg = list;
        list = pg->next;
        if (pg->req)
            proust__do_get(s, pg->peer, pg->req, pg->seg, pg->sender_token, pg->accepted, pg->key,
                   pg->key_len);
        free(pg);
    }
}

void proust__gets_forget(struct proust_session *s, int peer)
{
    proust__lock(&s->gets_lock);
    struct proust__pending_get *list = s->gets_head, *keep = NULL, *last = NULL;
    while (list) {
        struct proust__pending_get *pg = list;
        list = pg->next;
        pg->next = NULL;
        if (pg->peer == peer) {
            free(pg);
            continue;
        }
        if (last)
            last->next = pg;
        else
            keep = pg;
        last = pg;
    }
    s->gets_head = keep;
    s->gets_tail = last;
    proust__unlock(&s->gets_lock);
}

void proust__queue_get(struct proust_session *s, int peer, struct proust_request *req,
                       uint16_t seg, uint64_t sender_token, size_t accepted, const uint8_t *key,
                       uint32_t key_len, bool sender_waits)
{
    struct proust__pending_get *pg = malloc(sizeof *pg);
    if (!pg) { /* no memory to defer: copy now */
        proust__do_get(s, peer, req, seg, sender_token, accepted, key, key_len);
        return;
    }
    *pg = (struct proust__pending_get){.peer = peer, .req = req, .seg = seg,
                                       .sender_token = sender_token,
                                       .accepted = accepted, .key_len = key_len,
                                       .sender_waits = sender_waits};
    memcpy(pg->key, key, key_len);
    proust__lock(&s->gets_lock);
    if (s->gets_tail)
        s->gets_tail->next = pg;
    else
        s->gets_head = pg;
    s->gets_tail = pg;
    proust__unlock(&s->gets_lock);
}

/* The sender wrote a pushed segment into our buffer. */
void proust__recv_on_done(struct proust_session *s, int peer, uint64_t token)
{
    uint16_t seg;
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req || req->kind != PROUST__REQ_RECV || req->status.source != peer ||
        seg >= req->nseg) {
        PROUST_WARN("rank %d reported a write for an unknown receive; ignored", peer);
        return;
    }
    proust__token_release(s, token);
    proust__segment_landed(s, peer, req);
}

void *proust__on_put_target(void *engine, int peer, uint64_t token, uint64_t offset, size_t len)
{
    struct proust_session *s = engine;
    uint16_t seg;
    if (atomic_load_explicit(&s->gates[peer].failed, memory_order_acquire))
        return NULL;
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req || req->kind != PROUST__REQ_RECV || req->status.source != peer ||
        seg >= req->nseg || offset > req->segs[seg].iov_len ||
        len > req->segs[seg].iov_len - offset)
        return NULL;
    return (uint8_t *)req->segs[seg].iov_base + offset;
}

void proust__on_put_done(void *engine, int peer, uint64_t token, uint64_t offset, size_t len)
{
    (void)offset;
    struct proust_session *s = engine;
    if (len == 0)
        return;
    uint16_t seg;
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req || req->kind != PROUST__REQ_RECV || seg >= req->nseg)
        return;
    size_t left = atomic_fetch_sub(&req->seg_left[seg], len) - len;
    if (left != 0)
        return;
    proust__token_release(s, token);
    proust__segment_landed(s, peer, req);
}

