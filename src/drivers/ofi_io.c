/*
 * ofi_io.c — the ofi rail's data path: packets and puts out, messages in.
 *
 * Out: a packet is gathered into a send buffer of ours and posted (one
 * up to the provider's inject size with FI_INJECT); a put, where the
 * provider takes two pieces and needs no local registration, goes straight
 * from the caller's memory. Every one is done for the engine (send_done)
 * with its completion: with manual progress (tcp) a posted message has
 * not left before, and a process that stopped polling (a finalize fence)
 * would keep it. A message the
 * provider has no room for (-FI_EAGAIN) waits in the peer's queue, in
 * order; the engine sees the peer busy and sends nothing more until flush
 * has posted it.
 *
 * In: buffers posted ahead take the messages; poll checks each
 * (ofi_wire.c), hands a packet to the engine or copies a put where the
 * engine says, and posts the buffer again.
 *
 * Threads: send, put, flush and disconnect for one peer hold its gate
 * lock; the send buffers' free list has a lock of its own; poll runs on
 * one thread at a time; every libfabric call of the data path holds
 * fi_lock (ofi.h says why).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_rma.h>

#include "common/log.h"

#include "drivers/ofi.h"
#include "proust.h"

#define CQ_BATCH 16

/* ---- registration (FI_MR_LOCAL providers: verbs, efa) ----------------------- */
/* Register buf for `access` (a peer reads it: FI_REMOTE_READ; or our own
 * sends and receives where FI_MR_LOCAL wants them registered); takes
 * fi_lock. */
int proust__ofi_register(struct ofi_rail *o, void *buf, size_t len, uint64_t access,
                         struct fid_mr **mr)
{
    static _Atomic uint64_t next_key = 1; /* keys must differ unless the provider picks */
    *mr = NULL;
    proust__lock(&o->fi_lock);
    int rc = fi_mr_reg(o->domain, buf, len, access, 0, atomic_fetch_add(&next_key, 1), 0, mr,
                       NULL);
    if (rc == 0 && (o->info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(*mr, &o->ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(*mr);
    }
    if (rc && *mr)
        (void)fi_close(&(*mr)->fid);
    proust__unlock(&o->fi_lock);
    if (rc) {
        PROUST_WARN("ofi: cannot register %zu bytes: %s", len, proust__ofi.strerror(-rc));
        *mr = NULL;
        return PROUST_ERR_SYS;
    }
    return PROUST_OK;
}

void proust__ofi_close_mr(struct ofi_rail *o, struct fid_mr *mr)
{
    if (!mr)
        return;
    proust__lock(&o->fi_lock);
    (void)fi_close(&mr->fid);
    proust__unlock(&o->fi_lock);
}

static int register_buf(struct ofi_rail *o, void *buf, size_t len, struct fid_mr **mr)
{
    *mr = NULL;
    /* (the source of slot-ring writes too, where the rail writes) */
    uint64_t access = FI_SEND | FI_RECV | (o->rma_ok ? FI_WRITE : 0);
    return o->mr_local ? proust__ofi_register(o, buf, len, access, mr) : PROUST_OK;
}

/* ---- receives ---------------------------------------------------------------- */
static int post_receive(struct ofi_rail *o, struct ofi_op *op)
{
    proust__lock(&o->fi_lock);
    int rc = (int)fi_recv(o->ep, op->buf, OFI_BUF_SIZE, op->desc, FI_ADDR_UNSPEC, &op->fctx);
    proust__unlock(&o->fi_lock);
    return rc;
}

int proust__ofi_post_receives(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    size_t bytes = (size_t)OFI_RECV_BUFS * OFI_BUF_SIZE;
    if (posix_memalign((void **)&o->recv_mem, 4096, bytes) != 0)
        return PROUST_ERR_NOMEM;
    rail->up.place_memory(rail->up.engine, rail->index, o->recv_mem, bytes);
    int rc = register_buf(o, o->recv_mem, bytes, &o->recv_mr);
    if (rc != PROUST_OK)
        return rc;
    for (int i = 0; i < OFI_RECV_BUFS; i++) {
        struct ofi_op *op = &o->recv_ops[i];
        op->kind = OFI_OP_RECV;
        op->buf = o->recv_mem + (size_t)i * OFI_BUF_SIZE;
        op->desc = o->recv_mr ? fi_mr_desc(o->recv_mr) : NULL;
        int prc = post_receive(o, op);
        if (prc) {
            PROUST_WARN("ofi: cannot post a receive: %s", proust__ofi.strerror(-prc));
            return PROUST_ERR_SYS;
        }
    }
    return PROUST_OK;
}

/* ---- send buffers -------------------------------------------------------------- */
struct ofi_op *proust__ofi_take_buffer(struct ofi_rail *o)
{
    proust__lock(&o->send_lock);
    struct ofi_op *op = o->send_free;
    if (!op) {
        struct ofi_slab *s = calloc(1, sizeof *s);
        if (s && posix_memalign((void **)&s->mem, 4096, (size_t)OFI_SEND_SLAB * OFI_BUF_SIZE)) {
            free(s);
            s = NULL;
        }
        if (s && register_buf(o, s->mem, (size_t)OFI_SEND_SLAB * OFI_BUF_SIZE, &s->mr) !=
                     PROUST_OK) {
            free(s->mem);
            free(s);
            s = NULL;
        }
        if (s) {
            for (int i = 0; i < OFI_SEND_SLAB; i++) {
                struct ofi_op *b = &s->ops[i];
                b->kind = OFI_OP_SEND;
                b->buf = s->mem + (size_t)i * OFI_BUF_SIZE;
                b->desc = s->mr ? fi_mr_desc(s->mr) : NULL;
                b->next = o->send_free;
                o->send_free = b;
            }
            s->next = o->slabs;
            o->slabs = s;
            op = o->send_free;
        }
    }
    if (op)
        o->send_free = op->next;
    proust__unlock(&o->send_lock);
    if (op) {
        op->next = NULL;
        op->engine_ctx = NULL;
        op->group = NULL;
        op->posted = op->in_flight = false;
        op->slot_write = false;
    }
    return op;
}

void proust__ofi_give_back(struct ofi_rail *o, struct ofi_op *op)
{
    if (op->kind == OFI_OP_SEND_ZC) {
        free(op);
        return;
    }
    proust__lock(&o->send_lock);
    op->next = o->send_free;
    o->send_free = op;
    proust__unlock(&o->send_lock);
}

void proust__ofi_free_sends(struct ofi_rail *o)
{
    while (o->slabs) {
        struct ofi_slab *s = o->slabs;
        o->slabs = s->next;
        if (s->mr)
            (void)fi_close(&s->mr->fid);
        free(s->mem);
        free(s);
    }
    o->send_free = NULL;
}

/* ---- sending ------------------------------------------------------------------- */
/* The peer's address, inserted into the address vector on first use. */
int proust__ofi_peer_addr(struct ofi_rail *o, int peer, fi_addr_t *out)
{
    struct ofi_peer *p = &o->peers[peer];
    fi_addr_t a = atomic_load_explicit(&p->addr, memory_order_acquire);
    if (a == FI_ADDR_NOTAVAIL) {
        /* once, under fi_lock: a get() or a one-sided transfer (no gate
         * lock) may ask at the same time as a send */
        int n = 1;
        proust__lock(&o->fi_lock);
        a = atomic_load_explicit(&p->addr, memory_order_relaxed);
        if (a == FI_ADDR_NOTAVAIL) {
            n = fi_av_insert(o->av, o->cards + (size_t)peer * o->addrlen, 1, &a, 0, NULL);
            if (n == 1)
                atomic_store_explicit(&p->addr, a, memory_order_release);
        }
        proust__unlock(&o->fi_lock);
        if (n != 1) {
            PROUST_WARN("ofi: rank %d's address is not usable here", peer);
            return PROUST_ERR_CONN;
        }
    }
    *out = a;
    return PROUST_OK;
}

/* Post one queued or new message: 0 posted, -FI_EAGAIN no room, else an
 * error (a negative fi code). A small one the provider copies at once
 * (FI_INJECT) but still reports, like every other: with manual progress
 * (tcp) a message has left only when its completion says so. */
int proust__ofi_post(struct ofi_rail *o, struct ofi_op *op, fi_addr_t to)
{
    int rc;
    proust__lock(&o->fi_lock);
    if (op->kind == OFI_OP_SEND_ZC) {
        struct iovec iov[2] = {{&op->hdr, sizeof op->hdr}, {(void *)op->zc_buf, op->len}};
        rc = (int)fi_sendv(o->ep, iov, NULL, 2, to, &op->fctx);
    } else if (op->slot_write && o->ring_cq_data) { /* the peer's slot ring (ofi_ring.c) */
        rc = (int)fi_writedata(o->ep, op->buf, op->len, op->desc, 0, to, op->raddr, op->rkey,
                               &op->fctx);
    } else if (op->slot_write) {
        rc = (int)fi_write(o->ep, op->buf, op->len, op->desc, to, op->raddr, op->rkey,
                           &op->fctx);
    } else if (op->len <= o->inject_max) {
        struct iovec iov = {op->buf, op->len};
        struct fi_msg msg = {.msg_iov = &iov, .desc = &op->desc, .iov_count = 1,
                             .addr = to, .context = &op->fctx};
        rc = (int)fi_sendmsg(o->ep, &msg, FI_INJECT | FI_COMPLETION);
    } else {
        rc = (int)fi_send(o->ep, op->buf, op->len, op->desc, to, &op->fctx);
    }
    proust__unlock(&o->fi_lock);
    return rc;
}

/* Take op out of its peer's flight list (flight_lock held). */
static void unlink_flight(struct ofi_rail *o, struct ofi_op *op)
{
    struct ofi_peer *p = &o->peers[op->peer];
    if (op->fl_prev)
        op->fl_prev->fl_next = op->fl_next;
    else
        p->flight = op->fl_next;
    if (op->fl_next)
        op->fl_next->fl_prev = op->fl_prev;
    op->fl_next = op->fl_prev = NULL;
    op->in_flight = false;
}

void proust__ofi_flight_add(struct ofi_rail *o, struct ofi_op *op)
{
    struct ofi_peer *p = &o->peers[op->peer];
    proust__lock(&o->flight_lock);
    op->fl_prev = NULL;
    op->fl_next = p->flight;
    if (p->flight)
        p->flight->fl_prev = op;
    p->flight = op;
    op->in_flight = op->posted = true;
    proust__unlock(&o->flight_lock);
}

bool proust__ofi_flight_take(struct ofi_rail *o, struct ofi_op *op)
{
    proust__lock(&o->flight_lock);
    bool was = op->in_flight;
    if (was)
        unlink_flight(o, op);
    proust__unlock(&o->flight_lock);
    return was;
}

bool proust__ofi_flight_has(struct ofi_rail *o, struct ofi_op *op)
{
    proust__lock(&o->flight_lock);
    bool is = op->in_flight;
    proust__unlock(&o->flight_lock);
    return is;
}

/* post(), with op in its peer's flight list while the provider holds it:
 * a peer that fails has its sends completed at once (disconnect), their
 * completions, if they ever come, then only give the buffers back. */
static int post_tracked(struct ofi_rail *o, struct ofi_op *op, fi_addr_t to)
{
    proust__ofi_flight_add(o, op);
    int prc = proust__ofi_post(o, op, to);
    if (prc != 0) { /* not the provider's: back to how it was */
        proust__lock(&o->flight_lock);
        if (op->in_flight)
            unlink_flight(o, op);
        op->posted = false;
        proust__unlock(&o->flight_lock);
    }
    return prc;
}

static void enqueue(struct ofi_peer *p, struct ofi_op *op)
{
    op->next = NULL;
    if (p->q_tail)
        p->q_tail->next = op;
    else
        p->q_head = op;
    p->q_tail = op;
}

/* Post op now, or queue it behind what waits: PROUST__INPROGRESS (its
 * completion, or the failure of the peer, calls send_done with
 * op->engine_ctx), or an error (op given back). */
int proust__ofi_submit(struct ofi_rail *o, int peer, struct ofi_op *op)
{
    struct ofi_peer *p = &o->peers[peer];
    fi_addr_t to;
    int rc = proust__ofi_peer_addr(o, peer, &to);
    if (rc != PROUST_OK)
        goto refused;
    op->peer = peer;
    if (!p->q_head) {
        /* nobody waits for a message the engine is done with: no flight
         * list for it (a disconnect has nothing to answer) */
        int prc = op->engine_ctx || op->group ? post_tracked(o, op, to)
                                              : proust__ofi_post(o, op, to);
        if (prc == 0)
            return PROUST__INPROGRESS;
        if (prc != -FI_EAGAIN) {
            PROUST_WARN("ofi: send to rank %d: %s", peer, proust__ofi.strerror(-prc));
            rc = PROUST_ERR_CONN;
            goto refused;
        }
    }
    enqueue(p, op);
    return PROUST__INPROGRESS;

refused:
    /* its sequence number is spent: the peer would wait for it forever, so
     * every later send to it fails at once instead */
    proust__ofi_give_back(o, op);
    int expected = 0;
    atomic_compare_exchange_strong(&p->failed, &expected, rc);
    return rc;
}

/* The next message to `peer` (gate lock held: numbered in sending order). */
void proust__ofi_fill_hdr(struct ofi_hdr *h, struct ofi_rail *o, int peer, int kind,
                          uint64_t token, uint64_t offset)
{
    struct ofi_peer *p = &o->peers[peer];
    /* the slots of the peer's writes into our ring we took: its credit */
    uint32_t credit = atomic_load_explicit(&p->in_consumed, memory_order_relaxed);
    if (credit)
        atomic_store_explicit(&p->in_told, credit, memory_order_relaxed);
    *h = (struct ofi_hdr){.src = (uint32_t)o->rank, .kind = (uint16_t)kind, .magic = OFI_MAGIC,
                          .seq = p->send_seq++, .credit = credit, .token = token,
                          .offset = offset};
}

int proust__ofi_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt,
                     void *ctx)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[peer];
    int failed = atomic_load_explicit(&p->failed, memory_order_acquire);
    if (failed)
        return failed;
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total > rail->caps.max_packet)
        return PROUST_ERR_INVALID;
    if (o->ring_on) /* (before the message: whether it was queued is told by q_tail) */
        proust__ofi_ring_count(rail, peer);
    struct ofi_op *op = proust__ofi_take_buffer(o);
    if (!op)
        return PROUST_ERR_NOMEM;
    struct ofi_hdr h;
    proust__ofi_fill_hdr(&h, o, peer, OFI_MSG_PACKET, 0, 0);
    memcpy(op->buf, &h, sizeof h);
    size_t at = sizeof h;
    for (int i = 0; i < iovcnt; i++) {
        proust_copy(op->buf + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    op->len = at;
    if (o->ring_on)
        proust__ofi_ring_take(o, peer, op); /* a slot write, where a ring has room */
    /* done for the engine once copied and handed over: its packet slot
     * comes back at once, so that more than two packets can be on their
     * way (the completion only gives our buffer back). What the provider
     * still holds moves while someone polls: finalize drains and polls
     * through its fence (PROUST__RAIL_POLL_TO_MOVE). */
    op->engine_ctx = NULL;
    int rc = proust__ofi_submit(o, peer, op);
    if (rc != PROUST__INPROGRESS)
        return rc;
    if (p->q_tail != op) /* posted (the pointer only compared: it may be back already) */
        return PROUST_OK;
    op->engine_ctx = ctx; /* queued: the engine waits for flush to post it */
    return PROUST__INPROGRESS;
}

/* One put message (the caller's bytes as they are where the provider
 * takes two pieces, else copied): submit's answer. */
static int put_message(struct ofi_rail *o, int peer, uint64_t token, uint64_t offset,
                       const void *buf, size_t len, void *ctx, struct ofi_put_group *group)
{
    struct ofi_op *op;
    if (o->zc_puts) {
        if (!(op = calloc(1, sizeof *op)))
            return PROUST_ERR_NOMEM;
        op->kind = OFI_OP_SEND_ZC;
        proust__ofi_fill_hdr(&op->hdr, o, peer, OFI_MSG_PUT, token, offset);
        op->zc_buf = buf;
        op->len = len;
    } else {
        if (!(op = proust__ofi_take_buffer(o)))
            return PROUST_ERR_NOMEM;
        struct ofi_hdr h;
        proust__ofi_fill_hdr(&h, o, peer, OFI_MSG_PUT, token, offset);
        memcpy(op->buf, &h, sizeof h);
        proust_copy(op->buf + sizeof h, buf, len);
        op->len = sizeof h + len;
    }
    op->engine_ctx = ctx; /* the caller's bytes (zero-copy): in use until the completion */
    op->group = group;
    return proust__ofi_submit(o, peer, op);
}

/* A piece of a group is over: the engine hears with the last one. */
static void group_done(proust__rail_t *rail, struct ofi_put_group *g, int status, int pieces)
{
    if (status != PROUST_OK) {
        int expected = PROUST_OK;
        atomic_compare_exchange_strong(&g->status, &expected, status);
    }
    if (atomic_fetch_sub_explicit(&g->left, pieces, memory_order_acq_rel) != pieces)
        return;
    rail->up.send_done(rail->up.engine, g->ctx, atomic_load(&g->status));
    free(g);
}

int proust__ofi_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                    const void *buf, size_t len, void *ctx)
{
    struct ofi_rail *o = rail->priv;
    int failed = atomic_load_explicit(&o->peers[peer].failed, memory_order_acquire);
    if (failed)
        return failed;
    if (len > rail->caps.put_fragment)
        return PROUST_ERR_INVALID;
    if (o->pull_min && len >= o->pull_min)
        return proust__ofi_pull_put(rail, peer, token, offset, buf, len, ctx);
    size_t room = OFI_BUF_SIZE - sizeof(struct ofi_hdr);
    if (len <= room)
        return put_message(o, peer, token, offset, buf, len, ctx, NULL);
    /* below the read threshold but more than a message: several messages,
     * the engine told once */
    int pieces = (int)((len + room - 1) / room);
    struct ofi_put_group *g = malloc(sizeof *g);
    if (!g)
        return PROUST_ERR_NOMEM;
    atomic_init(&g->left, pieces + 1); /* + 1: ours, until every piece is out */
    atomic_init(&g->status, PROUST_OK);
    g->ctx = ctx;
    const uint8_t *bytes = buf;
    for (int i = 0; i < pieces; i++) {
        size_t at = (size_t)i * room, n = len - at < room ? len - at : room;
        int rc = put_message(o, peer, token, offset + at, bytes + at, n, NULL, g);
        if (rc == PROUST__INPROGRESS)
            continue;
        if (i == 0) { /* nothing left: the caller hears it now */
            free(g);
            return rc;
        }
        group_done(rail, g, rc, pieces - i); /* those never sent */
        break;
    }
    group_done(rail, g, PROUST_OK, 1);
    return PROUST__INPROGRESS;
}

int proust__ofi_busy(proust__rail_t *rail, int peer)
{
    struct ofi_rail *o = rail->priv;
    return o->peers[peer].q_head != NULL;
}

/* An operation is over: the buffer back, the engine told if it waits
 * (unless a disconnect told it already). */
static void finish_send(proust__rail_t *rail, struct ofi_op *op, int status)
{
    struct ofi_rail *o = rail->priv;
    void *ctx = op->engine_ctx;
    struct ofi_put_group *group = op->group;
    if (op->posted) {
        proust__lock(&o->flight_lock);
        if (op->in_flight) {
            unlink_flight(o, op);
        } else { /* orphaned by a disconnect, which answered for it */
            ctx = NULL;
            group = NULL;
        }
        proust__unlock(&o->flight_lock);
    }
    proust__ofi_give_back(o, op);
    if (ctx)
        rail->up.send_done(rail->up.engine, ctx, status);
    if (group)
        group_done(rail, group, status, 1);
}

int proust__ofi_flush(proust__rail_t *rail, int peer)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[peer];
    int moved = 0;
    while (p->q_head) {
        struct ofi_op *op = p->q_head, *next = op->next; /* once posted, op is the poller's */
        int prc = post_tracked(o, op, atomic_load_explicit(&p->addr, memory_order_relaxed));
        if (prc == -FI_EAGAIN)
            break;
        p->q_head = next;
        if (!p->q_head)
            p->q_tail = NULL;
        moved++;
        if (prc != 0) {
            PROUST_WARN("ofi: send to rank %d: %s", peer, proust__ofi.strerror(-prc));
            finish_send(rail, op, PROUST_ERR_CONN);
        }
        /* posted: its completion gives the buffer back (and tells the
         * engine, which waits for it since it was queued) */
    }
    return moved;
}

/* Queued messages to a peer that is gone: each fails (gate lock held). */
void proust__ofi_disconnect(proust__rail_t *rail, int peer, int status)
{
    struct ofi_rail *o = rail->priv;
    if (!o || !o->peers || peer < 0 || peer >= o->size)
        return;
    struct ofi_peer *p = &o->peers[peer];
    int expected = 0;
    atomic_compare_exchange_strong(&p->failed, &expected, status);
    struct ofi_op *q = p->q_head;
    p->q_head = p->q_tail = NULL;
    while (q) {
        struct ofi_op *next = q->next;
        finish_send(rail, q, status);
        q = next;
    }
    /* what the provider holds may never complete (a dead peer's connection
     * can take minutes to fail): the engine hears now; the completions
     * that come later only give the buffers back. (A put from the
     * caller's memory may then still be read by the provider.) */
    for (;;) {
        void *ctx = NULL;
        struct ofi_put_group *group = NULL;
        bool rma = false;
        proust__lock(&o->flight_lock);
        struct ofi_op *op = p->flight;
        if (op) {
            unlink_flight(o, op);
            ctx = op->engine_ctx;
            group = op->group;
            rma = op->kind == OFI_OP_RMA;
        }
        proust__unlock(&o->flight_lock);
        if (!op)
            break;
        if (rma)
            rail->up.rma_done(rail->up.engine, ctx, status);
        else if (ctx)
            rail->up.send_done(rail->up.engine, ctx, status);
        if (group)
            group_done(rail, group, status, 1);
    }
    proust__ofi_pull_disconnect(rail, peer, status);
}

/* ---- receiving ------------------------------------------------------------------- */
static void hand_over(proust__rail_t *rail, const struct ofi_msg *m)
{
    if (m->kind == OFI_MSG_PACKET) {
        rail->up.packet(rail->up.engine, m->src, m->payload, m->len);
        return;
    }
    if (m->kind == OFI_MSG_PULL) {
        proust__ofi_on_pull(rail, m);
        return;
    }
    if (m->kind == OFI_MSG_RING_REQ) {
        proust__ofi_on_ring_req(rail, m);
        return;
    }
    void *dst = rail->up.put_target(rail->up.engine, m->src, m->token, m->offset, m->len);
    if (!dst)
        return; /* a token the engine does not know: dropped */
    proust_copy(dst, m->payload, m->len);
    rail->up.put_done(rail->up.engine, m->src, m->token, m->offset, m->len);
}

/* Keep a message that came before its turn (in seq order). */
static void keep_early(struct ofi_peer *p, const struct ofi_msg *m, const uint8_t *buf,
                       size_t len)
{
    struct ofi_early *e = malloc(sizeof *e + len);
    if (!e) {
        PROUST_ERROR("ofi: no memory to hold a message from rank %d that came early", m->src);
        return;
    }
    e->seq = m->seq;
    e->len = len;
    memcpy(e->bytes, buf, len);
    struct ofi_early **at = &p->early;
    while (*at && (int32_t)((*at)->seq - e->seq) < 0)
        at = &(*at)->next;
    e->next = *at;
    *at = e;
}

/* A message that cannot be delivered: said once a rail (a peer whose
 * connection breaks can leave the provider completing receives with
 * nothing, or with what a buffer held before), then only in debug logs. */
static void drop(struct ofi_rail *o, size_t len, const char *why)
{
    if (!atomic_exchange(&o->warned, 1))
        PROUST_WARN("ofi: dropped a message of %zu bytes: %s (further ones in debug logs)",
                    len, why);
    else
        PROUST_DEBUG("ofi: dropped a message of %zu bytes: %s", len, why);
}

/* Returns 1 when the message went to the engine (now or from the early
 * list), 0 when it was dropped or kept for later: only the first counts
 * as an event, so that a stream of bad completions leaves a waiter idle
 * (it then checks its peers). */
static int deliver(proust__rail_t *rail, const uint8_t *buf, size_t len)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_msg m;
    const char *why;
    if (proust__ofi_parse(buf, len, o->size, &m, &why) != PROUST_OK) {
        drop(o, len, why);
        return 0;
    }
    struct ofi_peer *p = &o->peers[m.src];
    if (atomic_load_explicit(&p->failed, memory_order_relaxed))
        return 0; /* the engine has given up on that peer */
    proust__ofi_ring_credit(o, &m);
    if (m.kind == OFI_MSG_PULL_ACK) { /* outside the sequence */
        proust__ofi_on_pull_ack(rail, &m);
        return 1;
    }
    if (m.kind == OFI_MSG_RING_GRANT) {
        proust__ofi_on_ring_grant(rail, &m);
        return 1;
    }
    if (m.kind == OFI_MSG_CREDIT)
        return 1;
    if (m.seq != p->recv_seq) {
        if ((int32_t)(m.seq - p->recv_seq) > 0)
            keep_early(p, &m, buf, len);
        else
            drop(o, len, "a message delivered already");
        return 0;
    }
    p->recv_seq++;
    hand_over(rail, &m);
    /* what waited for it */
    while (p->early && p->early->seq == p->recv_seq) {
        struct ofi_early *e = p->early;
        p->early = e->next;
        p->recv_seq++;
        if (proust__ofi_parse(e->bytes, e->len, o->size, &m, &why) == PROUST_OK)
            hand_over(rail, &m);
        free(e);
    }
    return 1;
}

static void repost(struct ofi_rail *o, struct ofi_op *op)
{
    if (post_receive(o, op) == 0)
        return;
    op->next = o->repost; /* no room now: at the next poll */
    o->repost = op;
}

/* An operation to `peer` failed with `err` (a positive fi error) the way a
 * broken connection fails it: the peer is gone for this rail, and the
 * engine hears it once. */
static void fail_peer(proust__rail_t *rail, int peer, int err)
{
    struct ofi_rail *o = rail->priv;
    int expected = 0;
    if (atomic_compare_exchange_strong(&o->peers[peer].failed, &expected,
                                       PROUST_ERR_PEER_FAILED)) {
        char why[160];
        snprintf(why, sizeof why, "ofi: rank %d cannot be reached: %s", peer,
                 proust__ofi.strerror(err));
        rail->up.peer_failed(rail->up.engine, peer, PROUST_ERR_PEER_FAILED, why);
    }
}

/* A failed operation (err: a positive fi error): a send's or a read's
 * peer is gone (or unreachable), or a receive broke. */
static void handle_error(proust__rail_t *rail, struct ofi_op *op, int err)
{
    struct ofi_rail *o = rail->priv;
    if (op->kind == OFI_OP_READ_SYNC) { /* a get() waits for it */
        atomic_store_explicit(&op->sync_state, -err - 1, memory_order_release);
        return;
    }
    if (op->kind == OFI_OP_READ) {
        proust__ofi_read_done(rail, op, PROUST_ERR_PEER_FAILED, err);
        return;
    }
    if (op->kind == OFI_OP_RMA) {
        /* refused by the peer's side (a key or range it does not have):
         * this transfer fails; anything else is its connection breaking,
         * as for a send */
        bool refused = err == FI_EACCES || err == FI_EINVAL || err == FI_EKEYREJECTED;
        int peer = op->peer;
        PROUST_WARN("ofi: %s of %zu bytes at rank %d failed: %s", proust__ofi_rma_what(op),
                    op->len, peer, proust__ofi.strerror(err));
        proust__ofi_rma_done(rail, op, refused ? PROUST_ERR_PROTO : PROUST_ERR_PEER_FAILED);
        if (!refused)
            fail_peer(rail, peer, err);
        return;
    }
    if (op->kind == OFI_OP_RECV) {
        /* a peer's connection broke under a message to us: one warning
         * (a dead peer can fail every receive it had filled); which peer
         * is not said, its sequence numbers keep later messages in order */
        if (err != FI_ECANCELED) {
            if (!atomic_exchange(&o->recv_failed_warned, 1))
                PROUST_WARN("ofi: a receive failed: %s (a peer's connection broke; further "
                            "failures are not reported)",
                            proust__ofi.strerror(err));
            repost(o, op);
        }
        return;
    }
    int peer = op->peer;
    finish_send(rail, op, PROUST_ERR_PEER_FAILED);
    fail_peer(rail, peer, err);
}

static void on_error(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    struct fi_cq_err_entry err = {0};
    proust__lock(&o->fi_lock);
    ssize_t got = fi_cq_readerr(o->cq, &err, 0);
    proust__unlock(&o->fi_lock);
    if (got == 1 && err.op_context)
        handle_error(rail, err.op_context, err.err ? err.err : FI_EIO);
}

/* One completion (err 0) or failure; returns the events it makes. */
static int handle(proust__rail_t *rail, struct ofi_op *op, size_t len, int err)
{
    struct ofi_rail *o = rail->priv;
    if (!op) { /* a peer's write into a slot ring (remote CQ data): poll reads the rings */
        atomic_fetch_add_explicit(&o->ring_notices, 1, memory_order_relaxed);
        o->ring_noticed = true;
        return 1;
    }
    if (err) {
        handle_error(rail, op, err);
        return 1;
    }
    switch (op->kind) {
    case OFI_OP_RECV: {
        int events = deliver(rail, op->buf, len);
        repost(o, op);
        return events;
    }
    case OFI_OP_READ:
        proust__ofi_read_done(rail, op, PROUST_OK, 0);
        return 1;
    case OFI_OP_READ_SYNC:
        atomic_store_explicit(&op->sync_state, 1, memory_order_release);
        return 1;
    case OFI_OP_RMA:
        proust__ofi_rma_done(rail, op, PROUST_OK);
        return 1;
    default:
        finish_send(rail, op, PROUST_OK);
        return 1;
    }
}

int proust__ofi_poll(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    int events = proust__ofi_pull_retry(rail) + proust__ofi_rma_retry(rail);
    while (o->repost) {
        struct ofi_op *op = o->repost;
        if (post_receive(o, op) != 0)
            break;
        o->repost = op->next;
    }
    for (;;) {
        /* what a get() read from the queue meanwhile comes first */
        events += proust__ofi_stashed(rail, handle);
        struct fi_cq_msg_entry c[CQ_BATCH];
        proust__lock(&o->fi_lock);
        ssize_t n = fi_cq_read(o->cq, c, CQ_BATCH);
        proust__unlock(&o->fi_lock);
        if (n == -FI_EAVAIL) {
            on_error(rail);
            events++;
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            events += handle(rail, c[i].op_context, c[i].len, 0);
        if (n < CQ_BATCH)
            break;
    }
    /* the rings: where writes say so by a notice, only when one came (and
     * every 256th poll all the same: a notice is no promise) */
    if (o->nrings_in && (!o->ring_cq_data || o->ring_noticed || ++o->ring_polls % 256 == 0)) {
        o->ring_noticed = false;
        events += proust__ofi_ring_poll(rail, deliver);
    }
    return events;
}
