/*
 * ofi_ring.c — seed 003's slot rings on the ofi rail: small messages to
 * the peers a process talks to most go by one remote write into a ring of
 * registered slots at the receiver, which finds them by looking at its
 * memory, instead of a send matched against a posted receive buffer.
 *
 * After PROUST_OFI_RING_AFTER messages to a peer, the sender asks it for a
 * ring (RING_REQ, in the sequence). The receiver grants one while it holds
 * fewer than PROUST_OFI_RING_PEERS (RING_GRANT: address, key, slots, slot
 * size; 0 slots: no), so memory stays bounded at any job size. The
 * sender then writes each message that fits a slot, with the rail's usual
 * header and sequence number, into the next slot, stamped at both ends
 * (struct ofi_slot_head): the receiver takes a slot when both stamps are
 * the one it expects, delivers it like any message (the sequence number
 * puts it in order with the messages that went the other way), and zeroes
 * it. Each write carries remote CQ data where the provider has it: the
 * completion it makes at the receiver (no context, FI_REMOTE_WRITE) only
 * wakes a receiver asleep on its queue and counts as an event. Credits:
 * every message the receiver sends back carries how many
 * slots it consumed (the header's credit); when none flows it sends a
 * CREDIT message once half the ring is consumed. A sender without credit,
 * or with a message that does not fit, sends a message: it never waits,
 * never overwrites.
 *
 * Threads: the sender's side is under the peer's gate lock, but the
 * grant and the credits come from poll (ring_state is published with
 * release after the ring's fields; ring_consumed is atomic); the
 * receiver's rings are poll's alone.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_rma.h>

#include "common/config.h"
#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

struct ofi_ring_in {
    int peer;
    uint8_t *mem;
    struct fid_mr *mr;
    uint32_t slots, slot;
    uint64_t next; /* the next write to take (its slot: next % slots) */
};

int proust__ofi_ring_config(struct ofi_rail *o)
{
    const char *v = proust__config_str(PROUST_CFG_OFI_RING);
    int sw = proust_config_switch(v);
    bool hardware = o->info->domain_attr->data_progress == FI_PROGRESS_AUTO;
    size_t slot = 0;
    long after = 0, peers = 0, slots = 0;
    if ((sw < 0 && strcmp(v, "auto") != 0) ||
        proust__config_long(PROUST_CFG_OFI_RING_AFTER, &after) != PROUST_OK || after < 0 ||
        proust__config_long(PROUST_CFG_OFI_RING_PEERS, &peers) != PROUST_OK || peers < 0 ||
        proust__config_long(PROUST_CFG_OFI_RING_SLOTS, &slots) != PROUST_OK || slots < 2 ||
        slots > 4096 || proust__config_size(PROUST_CFG_OFI_RING_SLOT, &slot) != PROUST_OK ||
        slot < OFI_SLOT_MIN || slot > OFI_BUF_SIZE - OFI_BUF_SIZE % 8) {
        PROUST_ERROR("PROUST_OFI_RING* : a value out of range (ring: on, off or auto; after, "
                     "peers >= 0; 2 <= slots <= 4096; %u <= slot <= %u bytes)",
                     OFI_SLOT_MIN, OFI_BUF_SIZE - OFI_BUF_SIZE % 8);
        return PROUST_ERR_INVALID;
    }
    o->ring_after = (uint32_t)after;
    o->ring_peers = (uint32_t)peers;
    o->ring_slots = (uint32_t)slots;
    o->ring_slot = (uint32_t)(slot & ~(size_t)7);
    /* a write with remote CQ data makes a completion at the receiver, so
     * that one asleep on its queue's wait fd wakes for the message */
    o->ring_cq_data = o->info->domain_attr->cq_data_size >= 4;
    if (!o->rma_ok) {
        o->ring_on = false;
        o->ring_why = "the provider cannot write remote memory with 8-byte keys";
    } else if (sw == 0) {
        o->ring_on = false;
        o->ring_why = "PROUST_OFI_RING=off";
    } else if (sw == 1) {
        o->ring_on = true;
        o->ring_why = "PROUST_OFI_RING=on";
    } else {
        /* a software provider writes remote memory by messages of its own
         * that the receiver's progress applies: slower than our messages
         * (PERFORMANCE, "Slot rings") */
        /* and where a write wakes a sleeping receiver (remote CQ data) */
        o->ring_on = hardware && o->ring_cq_data;
        o->ring_why = !hardware ? "auto: the provider writes remote memory in software"
                      : o->ring_cq_data ? "auto: the NIC writes remote memory"
                                        : "auto: writes carry no remote CQ data to wake a receiver";
    }
    return PROUST_OK;
}

/* ---- the sender ---------------------------------------------------------------- */
void proust__ofi_ring_take(struct ofi_rail *o, int peer, struct ofi_op *op)
{
    struct ofi_peer *p = &o->peers[peer];
    if (atomic_load_explicit(&p->ring_state, memory_order_acquire) != OFI_RING_READY)
        return;
    size_t bytes = OFI_SLOT_BYTES(op->len);
    uint32_t consumed = atomic_load_explicit(&p->ring_consumed, memory_order_acquire);
    uint64_t n = atomic_load_explicit(&p->ring_written, memory_order_relaxed);
    if (bytes > p->ring_slot || bytes > OFI_BUF_SIZE || (uint32_t)n - consumed >= p->ring_slots)
        return; /* does not fit, or no credit: a message */
    atomic_store_explicit(&p->ring_written, n + 1, memory_order_relaxed);
    struct ofi_slot_head head = {.len = (uint32_t)op->len, .stamp = ofi_slot_stamp(n)};
    struct ofi_slot_head tail = {.len = head.stamp, .stamp = 0};
    memmove(op->buf + sizeof head, op->buf, op->len);
    memcpy(op->buf, &head, sizeof head);
    size_t end = bytes - sizeof tail;
    memset(op->buf + sizeof head + op->len, 0, end - sizeof head - op->len);
    memcpy(op->buf + end, &tail, sizeof tail);
    op->len = bytes;
    op->slot_write = true;
    op->raddr = p->ring_raddr + (n % p->ring_slots) * p->ring_slot;
    op->rkey = p->ring_rkey;
    atomic_fetch_add_explicit(&o->ring_msgs_out, 1, memory_order_relaxed);
}

void proust__ofi_ring_count(proust__rail_t *rail, int peer)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[peer];
    if (!o->ring_on || peer == o->rank ||
        atomic_load_explicit(&p->ring_state, memory_order_relaxed) != OFI_RING_NONE ||
        p->msgs_sent++ < o->ring_after)
        return;
    struct ofi_op *op = proust__ofi_take_buffer(o);
    if (!op)
        return; /* asked again at the next message */
    struct ofi_hdr h;
    proust__ofi_fill_hdr(&h, o, peer, OFI_MSG_RING_REQ, 0, 0);
    memcpy(op->buf, &h, sizeof h);
    op->len = sizeof h;
    atomic_store_explicit(&p->ring_state, OFI_RING_ASKED, memory_order_relaxed);
    (void)proust__ofi_submit(o, peer, op); /* refused: the peer has failed */
}

void proust__ofi_on_ring_grant(proust__rail_t *rail, const struct ofi_msg *m)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[m->src];
    if (atomic_load_explicit(&p->ring_state, memory_order_acquire) != OFI_RING_ASKED) {
        PROUST_DEBUG("ofi: rank %d granted a slot ring we did not ask for", m->src);
        return;
    }
    if (m->grant.slots == 0) {
        atomic_store_explicit(&p->ring_state, OFI_RING_DENIED, memory_order_release);
        return;
    }
    p->ring_raddr = m->grant.raddr;
    p->ring_rkey = m->grant.rkey;
    p->ring_slots = m->grant.slots;
    p->ring_slot = m->grant.slot_size;
    PROUST_DEBUG("ofi: rank %d granted a slot ring of %u slots of %u B", m->src, p->ring_slots,
                 p->ring_slot);
    atomic_store_explicit(&p->ring_state, OFI_RING_READY, memory_order_release);
}

void proust__ofi_ring_credit(struct ofi_rail *o, const struct ofi_msg *m)
{
    struct ofi_peer *p = &o->peers[m->src];
    /* more than we wrote: not the peer's word (a stranger's, or garbage),
     * which must never let us overwrite a slot it has not taken */
    uint32_t written = (uint32_t)atomic_load_explicit(&p->ring_written, memory_order_relaxed);
    if ((int32_t)(written - m->credit) < 0)
        return;
    uint32_t c = atomic_load_explicit(&p->ring_consumed, memory_order_relaxed);
    /* the highest count seen (messages may come out of order) */
    while ((int32_t)(m->credit - c) > 0 &&
           !atomic_compare_exchange_weak_explicit(&p->ring_consumed, &c, m->credit,
                                                  memory_order_release, memory_order_relaxed))
        ;
}

/* ---- the receiver --------------------------------------------------------------- */
static void send_unsequenced(struct ofi_rail *o, int peer, int kind, const void *body,
                             size_t len)
{
    struct ofi_op *op = proust__ofi_take_buffer(o);
    if (!op)
        return; /* (a refusal lost: the peer asked and keeps writing messages) */
    struct ofi_peer *p = &o->peers[peer];
    uint32_t told = atomic_load_explicit(&p->in_consumed, memory_order_relaxed);
    struct ofi_hdr h = {.src = (uint32_t)o->rank, .kind = (uint16_t)kind, .magic = OFI_MAGIC,
                        .credit = told};
    atomic_store_explicit(&p->in_told, told, memory_order_relaxed);
    memcpy(op->buf, &h, sizeof h);
    if (len)
        memcpy(op->buf + sizeof h, body, len);
    op->len = sizeof h + len;
    op->peer = peer;
    proust__ofi_post_unsequenced(o, op);
}

void proust__ofi_on_ring_req(proust__rail_t *rail, const struct ofi_msg *m)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[m->src];
    struct ofi_ring_grant g = {0};
    if (p->ring_in || !o->rma_ok || o->nrings_in >= o->ring_peers) {
        send_unsequenced(o, m->src, OFI_MSG_RING_GRANT, &g, sizeof g); /* no */
        return;
    }
    struct ofi_ring_in *r = calloc(1, sizeof *r);
    struct ofi_ring_in **list = realloc(o->rings_in, (o->nrings_in + 1) * sizeof *list);
    size_t bytes = (size_t)o->ring_slots * o->ring_slot;
    if (list)
        o->rings_in = list;
    if (!o->ring_scratch)
        o->ring_scratch = malloc(o->ring_slot);
    if (r && list && o->ring_scratch && posix_memalign((void **)&r->mem, 4096, bytes) == 0) {
        memset(r->mem, 0, bytes);
        if (proust__ofi_register(o, r->mem, bytes, FI_REMOTE_WRITE, &r->mr) == PROUST_OK) {
            r->peer = m->src;
            r->slots = o->ring_slots;
            r->slot = o->ring_slot;
            bool virt = (o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
            g = (struct ofi_ring_grant){.raddr = virt ? (uint64_t)(uintptr_t)r->mem : 0,
                                        .rkey = fi_mr_key(r->mr),
                                        .slots = r->slots,
                                        .slot_size = r->slot};
            p->ring_in = r;
            o->rings_in[o->nrings_in++] = r;
            r = NULL;
        }
    }
    if (r) {
        free(r->mem);
        free(r);
    }
    PROUST_DEBUG("ofi: rank %d asked for a slot ring: %u slots", m->src, g.slots);
    send_unsequenced(o, m->src, OFI_MSG_RING_GRANT, &g, sizeof g);
}

static uint32_t load_stamp(const uint8_t *at)
{
    uint32_t v;
    __atomic_load((const uint32_t *)(const void *)at, &v, __ATOMIC_ACQUIRE);
    return v;
}

/* Take what one ring holds, in order; returns the messages taken. Each
 * is copied out under fi_lock, then delivered: a software provider
 * (tcp) writes into the ring from whichever thread calls libfabric, under
 * that lock, so the copy sees a write whole or not at all; a NIC writes
 * whenever it likes, and the two stamps tell a write that has landed. */
static int drain_ring(proust__rail_t *rail, struct ofi_ring_in *r,
                      int (*deliver)(proust__rail_t *, const uint8_t *, size_t))
{
    struct ofi_rail *o = rail->priv;
    struct ofi_peer *p = &o->peers[r->peer];
    int taken = 0;
    for (;;) {
        uint8_t *slot = r->mem + (r->next % r->slots) * r->slot;
        uint32_t want = ofi_slot_stamp(r->next);
        struct ofi_slot_head head;
        proust__lock(&o->fi_lock);
        memcpy(&head, slot, sizeof head);
        size_t bytes = OFI_SLOT_BYTES((size_t)head.len);
        bool ready = head.stamp == want && head.len <= r->slot && bytes <= r->slot &&
                     load_stamp(slot + bytes - sizeof head) == want;
        if (ready) {
            memcpy(o->ring_scratch, slot + sizeof head, head.len);
            memset(slot, 0, bytes);
        }
        proust__unlock(&o->fi_lock);
        if (!ready) {
            if (head.stamp == want && (head.len > r->slot || bytes > r->slot)) {
                /* stamped, but no write of ours is that long */
                PROUST_WARN("ofi: rank %d's slot ring holds a message of %u bytes in slots of "
                            "%u: the rail stops reading it", r->peer, head.len, r->slot);
                r->next = UINT64_MAX;
            }
            break; /* (or still landing) */
        }
        r->next++;
        taken++;
        atomic_store_explicit(&p->in_consumed, (uint32_t)r->next, memory_order_relaxed);
        if (!atomic_load_explicit(&p->failed, memory_order_relaxed))
            deliver(rail, o->ring_scratch, head.len);
    }
    return taken;
}

int proust__ofi_ring_poll(proust__rail_t *rail,
                          int (*deliver)(proust__rail_t *, const uint8_t *, size_t))
{
    struct ofi_rail *o = rail->priv;
    int events = 0;
    for (uint32_t i = 0; i < o->nrings_in; i++) {
        struct ofi_ring_in *r = o->rings_in[i];
        if (r->next == UINT64_MAX)
            continue;
        int taken = drain_ring(rail, r, deliver);
        if (!taken)
            continue;
        events += taken;
        atomic_fetch_add_explicit(&o->ring_msgs_in, (uint64_t)taken, memory_order_relaxed);
        /* credits: they ride on what we send the peer; if half the ring
         * was taken since it last heard, tell it now */
        struct ofi_peer *p = &o->peers[r->peer];
        uint32_t told = atomic_load_explicit(&p->in_told, memory_order_relaxed);
        if ((uint32_t)r->next - told >= r->slots / 2)
            send_unsequenced(o, r->peer, OFI_MSG_CREDIT, NULL, 0);
    }
    return events;
}

void proust__ofi_ring_close(struct ofi_rail *o)
{
    for (uint32_t i = 0; i < o->nrings_in; i++) {
        struct ofi_ring_in *r = o->rings_in[i];
        if (r->mr)
            (void)fi_close(&r->mr->fid);
        free(r->mem);
        free(r);
    }
    free(o->rings_in);
    free(o->ring_scratch);
    o->ring_scratch = NULL;
    o->rings_in = NULL;
    o->nrings_in = 0;
}
