/*
 * ofi_pull.c — large puts on the ofi rail: the receiver reads them.
 *
 * Seed 003's zero-copy rendezvous, in the form where the request carries
 * the sender's key: the sender registers the bytes of a put for remote
 * reading and sends a PULL message (in the peer's sequence, like a put
 * message: what the engine sends after it comes after it) that describes
 * them; the receiver asks the engine where they go (put_target) and reads
 * them there with one fi_read, then tells the engine (put_done) and the
 * sender (a PULL_ACK, outside the sequence). Only then does the sender's
 * engine hear that the put is done, so its memory stays registered and
 * untouched while the read may run. No copy on either side: the provider
 * moves the bytes from the sender's memory into the receiver's.
 *
 * Registration is per put, through fi_mr_reg: providers that pin memory
 * (verbs, efa) register through libfabric's own cache, whose memory
 * monitors drop a registration when its pages are unmapped; tcp registers
 * nothing but a key. A buffer freed and reused is registered anew.
 *
 * Threads: pull_put runs under the peer's gate lock; the peer's list of
 * unacknowledged pulls is under flight_lock (an ACK is read by whichever
 * thread polls); reads and ACKs the provider had no room for wait in
 * lists of poll's own (one poller at a time).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include <rdma/fi_rma.h>

#include "drivers/ofi.h"
#include "proust.h"

static void unlink_pull(struct ofi_peer *p, struct ofi_pull *pl)
{
    if (pl->prev)
        pl->prev->next = pl->next;
    else
        p->pulls = pl->next;
    if (pl->next)
        pl->next->prev = pl->prev;
    pl->next = pl->prev = NULL;
}

/* What a pull holds of a registration: its own, or a region's reference. */
static void release_pull_mr(struct ofi_rail *o, struct ofi_pull *pl)
{
    proust__ofi_close_mr(o, pl->mr);
    proust__ofi_region_put(o, pl->region);
    pl->mr = NULL;
    pl->region = NULL;
}

/* ---- the sender ---------------------------------------------------------------- */
int proust__ofi_pull_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                         const void *buf, size_t len, void *ctx)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[peer];
    struct ofi_pull *pl = calloc(1, sizeof *pl);
    if (!pl)
        return PROUST_ERR_NOMEM;
    bool virt = (o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    uint64_t rkey, raddr;
    pl->region = proust__ofi_region_find(o, buf, len, &rkey, &raddr);
    if (!pl->region) { /* else: registered already */
        int rc = proust__ofi_register(o, (void *)buf, len, FI_REMOTE_READ, &pl->mr);
        if (rc != PROUST_OK) {
            free(pl);
            return rc;
        }
        rkey = fi_mr_key(pl->mr);
        raddr = virt ? (uint64_t)(uintptr_t)buf : 0;
    }
    struct ofi_op *op = proust__ofi_take_buffer(o);
    if (!op) {
        release_pull_mr(o, pl);
        free(pl);
        return PROUST_ERR_NOMEM;
    }
    pl->cookie = atomic_fetch_add_explicit(&o->next_cookie, 1, memory_order_relaxed);
    pl->engine_ctx = ctx;
    struct ofi_pull_desc d = {.raddr = raddr, .rkey = rkey, .len = len, .cookie = pl->cookie};
    struct ofi_hdr h;
    proust__ofi_fill_hdr(&h, o, peer, OFI_MSG_PULL, token, offset);
    memcpy(op->buf, &h, sizeof h);
    memcpy(op->buf + sizeof h, &d, sizeof d);
    op->len = sizeof h + sizeof d;
    op->engine_ctx = NULL; /* the message leaving is not the put done: its ACK is */
    /* listed first: the ACK can come (to another thread's poll) before
     * submit returns */
    proust__lock(&o->flight_lock);
    pl->next = p->pulls;
    if (p->pulls)
        p->pulls->prev = pl;
    p->pulls = pl;
    proust__unlock(&o->flight_lock);
    int rc = proust__ofi_submit(o, peer, op);
    if (rc == PROUST__INPROGRESS) {
        atomic_fetch_add_explicit(&o->pulls_sent, 1, memory_order_relaxed);
        return PROUST__INPROGRESS;
    }
    /* refused (the peer is failing): nobody will read it */
    proust__lock(&o->flight_lock);
    unlink_pull(p, pl);
    proust__unlock(&o->flight_lock);
    release_pull_mr(o, pl);
    free(pl);
    return rc;
}

/* The receiver has read a pull of ours (or dropped it). */
void proust__ofi_on_pull_ack(proust__rail_t *rail, const struct ofi_msg *m)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[m->src];
    proust__lock(&o->flight_lock);
    struct ofi_pull *pl = p->pulls;
    while (pl && pl->cookie != m->ack.cookie)
        pl = pl->next;
    if (pl)
        unlink_pull(p, pl);
    proust__unlock(&o->flight_lock);
    if (!pl) { /* a disconnect answered for it already, or a stranger's */
        PROUST_DEBUG("ofi: rank %d acknowledged a pull we do not have", m->src);
        return;
    }
    release_pull_mr(o, pl);
    rail->up.send_done(rail->up.engine, pl->engine_ctx,
                       m->ack.status == 0 ? PROUST_OK : PROUST_ERR_CONN);
    free(pl);
}

/* The peer is gone: its unacknowledged pulls fail now (gate lock held). */
void proust__ofi_pull_disconnect(proust__rail_t *rail, int peer, int status)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[peer];
    for (;;) {
        proust__lock(&o->flight_lock);
        struct ofi_pull *pl = p->pulls;
        if (pl)
            unlink_pull(p, pl);
        proust__unlock(&o->flight_lock);
        if (!pl)
            return;
        release_pull_mr(o, pl);
        rail->up.send_done(rail->up.engine, pl->engine_ctx, status);
        free(pl);
    }
}

/* ---- the receiver --------------------------------------------------------------- */
/* 0 posted, -FI_EAGAIN no room, else a negative fi error. */
static int post_read(struct ofi_rail *o, struct ofi_op *op)
{
    fi_addr_t from;
    if (proust__ofi_peer_addr(o, op->peer, &from) != PROUST_OK)
        return -FI_EADDRNOTAVAIL;
    proust__lock(&o->fi_lock);
    int rc = (int)fi_read(o->ep, op->buf, op->len, op->desc, from, op->pull.raddr,
                          op->pull.rkey, &op->fctx);
    proust__unlock(&o->fi_lock);
    return rc;
}

/* 0 posted, -FI_EAGAIN no room, else a negative fi error. */
static int post_ack(struct ofi_rail *o, struct ofi_op *op)
{
    fi_addr_t to;
    if (proust__ofi_peer_addr(o, op->peer, &to) != PROUST_OK)
        return -FI_EADDRNOTAVAIL;
    return proust__ofi_post(o, op, to);
}

static void send_ack(struct ofi_rail *o, int peer, uint64_t cookie, int32_t status)
{
    struct ofi_op *op = proust__ofi_take_buffer(o);
    if (!op) {
        PROUST_ERROR("ofi: no memory to acknowledge a read to rank %d", peer);
        return;
    }
    /* outside the sequence: built here, not by fill_hdr (whose counter
     * belongs to the gate lock) */
    struct ofi_hdr h = {.src = (uint32_t)o->rank, .kind = OFI_MSG_PULL_ACK, .magic = OFI_MAGIC};
    struct ofi_pull_ack a = {.cookie = cookie, .status = status};
    memcpy(op->buf, &h, sizeof h);
    memcpy(op->buf + sizeof h, &a, sizeof a);
    op->len = sizeof h + sizeof a;
    op->peer = peer;
    proust__ofi_post_unsequenced(o, op);
}

void proust__ofi_post_unsequenced(struct ofi_rail *o, struct ofi_op *op)
{
    int rc = post_ack(o, op);
    if (rc == -FI_EAGAIN) {
        op->next = o->acks_waiting;
        o->acks_waiting = op;
    } else if (rc != 0) {
        proust__ofi_give_back(o, op); /* the peer is going: it will not wait for it */
    }
}

static void free_read(struct ofi_rail *o, struct ofi_op *op)
{
    proust__ofi_close_mr(o, op->mr);
    free(op);
}

/* A PULL, in its turn: read it where the engine wants it. */
void proust__ofi_on_pull(proust__rail_t *rail, const struct ofi_msg *m)
{
    struct ofi_rail *o = rail->priv;
    size_t len = (size_t)m->pull.len;
    void *dst = rail->up.put_target(rail->up.engine, m->src, m->token, m->offset, len);
    if (!dst) { /* a token the engine does not know: dropped, as a put message */
        send_ack(o, m->src, m->pull.cookie, 0);
        return;
    }
    struct ofi_op *op = calloc(1, sizeof *op);
    if (!op) {
        PROUST_ERROR("ofi: no memory to read %zu bytes from rank %d", len, m->src);
        send_ack(o, m->src, m->pull.cookie, PROUST_ERR_NOMEM);
        return;
    }
    op->kind = OFI_OP_READ;
    op->peer = m->src;
    op->buf = dst;
    op->len = len;
    op->hdr.token = m->token;
    op->hdr.offset = m->offset;
    op->pull = m->pull;
    if (o->mr_local) {
        int rc = proust__ofi_register(o, dst, len, FI_READ, &op->mr);
        if (rc != PROUST_OK) {
            send_ack(o, m->src, m->pull.cookie, rc);
            free(op);
            return;
        }
        op->desc = fi_mr_desc(op->mr);
    }
    int rc = post_read(o, op);
    if (rc == -FI_EAGAIN) {
        op->next = o->reads_waiting;
        o->reads_waiting = op;
    } else if (rc != 0) {
        proust__ofi_read_done(rail, op, PROUST_ERR_PEER_FAILED, -rc);
    }
}

/* A read is over (poll): the engine and the sender hear, or the peer failed. */
void proust__ofi_read_done(proust__rail_t *rail, struct ofi_op *op, int status, int err)
{
    struct ofi_rail *o = rail->priv;
    int peer = op->peer;
    if (status == PROUST_OK) {
        rail->up.put_done(rail->up.engine, peer, op->hdr.token, op->hdr.offset, op->len);
        atomic_fetch_add_explicit(&o->pulls_read, 1, memory_order_relaxed);
        uint64_t cookie = op->pull.cookie;
        free_read(o, op);
        send_ack(o, peer, cookie, 0);
        return;
    }
    free_read(o, op);
    int expected = 0;
    if (atomic_compare_exchange_strong(&o->peers[peer].failed, &expected, status)) {
        char why[160];
        snprintf(why, sizeof why, "ofi: reading from rank %d failed: %s", peer,
                 proust__ofi.strerror(err));
        rail->up.peer_failed(rail->up.engine, peer, status, why);
    }
}

/* Post what waited for room (poll); returns how many went. */
int proust__ofi_pull_retry(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    int moved = 0;
    while (o->acks_waiting) {
        struct ofi_op *op = o->acks_waiting;
        int rc = post_ack(o, op);
        if (rc == -FI_EAGAIN)
            break;
        o->acks_waiting = op->next;
        if (rc != 0)
            proust__ofi_give_back(o, op);
        moved++;
    }
    while (o->reads_waiting) {
        struct ofi_op *op = o->reads_waiting;
        int rc = post_read(o, op);
        if (rc == -FI_EAGAIN)
            break;
        o->reads_waiting = op->next;
        if (rc != 0)
            proust__ofi_read_done(rail, op, PROUST_ERR_PEER_FAILED, -rc);
        moved++;
    }
    return moved;
}

/* The rail closes: what is left is nobody's now. */
void proust__ofi_pull_close(struct ofi_rail *o)
{
    for (int r = 0; o->peers && r < o->size; r++) {
        while (o->peers[r].pulls) {
            struct ofi_pull *pl = o->peers[r].pulls;
            o->peers[r].pulls = pl->next;
            release_pull_mr(o, pl);
            free(pl);
        }
    }
    while (o->reads_waiting) {
        struct ofi_op *op = o->reads_waiting;
        o->reads_waiting = op->next;
        free_read(o, op);
    }
    while (o->acks_waiting) {
        struct ofi_op *op = o->acks_waiting;
        o->acks_waiting = op->next;
        proust__ofi_give_back(o, op);
    }
}
