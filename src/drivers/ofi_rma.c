/*
 * ofi_rma.c — one-sided access on the ofi rail: memory a process
 * registers for its peers (mem_register), and writes and reads into a
 * peer's registered memory (rma) that complete without the peer's engine:
 * the provider moves the bytes (a NIC, or libfabric's own progress on
 * tcp, which runs whenever the peer polls the rail).
 *
 * A write asks for FI_DELIVERY_COMPLETE: its completion means the bytes
 * are in the peer's memory, visible there, which is what a flush of an MPI
 * window promises. A provider that refuses the flag gets plain
 * completions (reliable endpoints: the peer has the bytes).
 *
 * Each transfer is a heap op in its peer's flight list while the provider
 * holds it: a peer that fails has its transfers answered at once by
 * disconnect; their completions, if they come, only free them. Transfers
 * the provider had no room for wait in rma_waiting until poll posts them.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_rma.h>

#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

/* Memory registered until mem_release: MPI windows, MPI_Alloc_mem. A
 * pull or an exposure that uses it holds a reference, so that a release
 * while a peer may still read it closes the registration only after. */
struct ofi_region {
    struct ofi_region *next;
    uintptr_t base;
    size_t len;
    struct fid_mr *mr;
    _Atomic int refs; /* the owner's (until mem_release) and the users' */
};

struct ofi_region *proust__ofi_region_find_locked(struct ofi_rail *o, const void *buf,
                                                  size_t len, uint64_t *rkey, uint64_t *raddr)
{
    uintptr_t a = (uintptr_t)buf;
    bool virt = (o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    struct ofi_region *r = o->regions;
    while (r && !(a >= r->base && len <= r->len && a - r->base <= r->len - len))
        r = r->next;
    if (r) {
        atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
        *rkey = fi_mr_key(r->mr);
        *raddr = virt ? (uint64_t)a : (uint64_t)(a - r->base);
    }
    atomic_fetch_add_explicit(r ? &o->reg_hits : &o->reg_misses, 1, memory_order_relaxed);
    return r;
}

struct ofi_region *proust__ofi_region_find(struct ofi_rail *o, const void *buf, size_t len,
                                           uint64_t *rkey, uint64_t *raddr)
{
    proust__lock(&o->expose_lock);
    struct ofi_region *r = proust__ofi_region_find_locked(o, buf, len, rkey, raddr);
    proust__unlock(&o->expose_lock);
    return r;
}

void proust__ofi_region_put(struct ofi_rail *o, struct ofi_region *r)
{
    if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1)
        return;
    proust__ofi_close_mr(o, r->mr);
    free(r);
}

void proust__ofi_registrations(proust__rail_t *rail, uint64_t *hits, uint64_t *misses)
{
    struct ofi_rail *o = rail->priv;
    *hits = atomic_load_explicit(&o->reg_hits, memory_order_relaxed);
    *misses = atomic_load_explicit(&o->reg_misses, memory_order_relaxed);
}

int proust__ofi_mem_register(proust__rail_t *rail, void *buf, size_t len, void **handle,
                             void *key, size_t cap)
{
    struct ofi_rail *o = rail->priv;
    if (!o->rma_ok)
        return PROUST_ERR_NOT_SUPPORTED;
    if (cap < sizeof(struct ofi_get_key) || len == 0)
        return PROUST_ERR_INVALID;
    struct ofi_region *r = calloc(1, sizeof *r);
    if (!r)
        return PROUST_ERR_NOMEM;
    int rc = proust__ofi_register(o, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, &r->mr);
    if (rc != PROUST_OK) {
        free(r);
        return rc;
    }
    bool virt = (o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
    struct ofi_get_key k = {.raddr = virt ? (uint64_t)(uintptr_t)buf : 0,
                            .rkey = fi_mr_key(r->mr),
                            .len = len};
    memcpy(key, &k, sizeof k);
    r->base = (uintptr_t)buf;
    r->len = len;
    atomic_init(&r->refs, 1);
    proust__lock(&o->expose_lock);
    r->next = o->regions;
    o->regions = r;
    proust__unlock(&o->expose_lock);
    *handle = r;
    return (int)sizeof k;
}

void proust__ofi_mem_release(proust__rail_t *rail, void *handle)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_region *r = handle;
    proust__lock(&o->expose_lock);
    struct ofi_region **at = &o->regions;
    while (*at && *at != r)
        at = &(*at)->next;
    if (*at)
        *at = r->next;
    proust__unlock(&o->expose_lock);
    proust__ofi_region_put(o, r); /* the owner's reference: closed once no read uses it */
}

/* Hand op to the provider: 0, -FI_EAGAIN (no room now), or an error. */
static int post(struct ofi_rail *o, struct ofi_op *op)
{
    if (op->atomic)
        return proust__ofi_atomic_post(o, op);
    struct iovec iov = {op->buf, op->len};
    struct fi_rma_iov r = {.addr = op->raddr, .len = op->len, .key = op->rkey};
    struct fi_msg_rma m = {.msg_iov = &iov,
                           .desc = &op->desc,
                           .iov_count = 1,
                           .addr = atomic_load_explicit(&o->peers[op->peer].addr,
                                                        memory_order_relaxed),
                           .rma_iov = &r,
                           .rma_iov_count = 1,
                           .context = &op->fctx};
    proust__lock(&o->fi_lock);
    int rc;
    if (!op->rma_write) {
        rc = (int)fi_readmsg(o->ep, &m, FI_COMPLETION);
    } else {
        rc = (int)fi_writemsg(o->ep, &m, o->write_flags);
        if (rc == -FI_EBADFLAGS && (o->write_flags & FI_DELIVERY_COMPLETE)) {
            /* the provider's default, transmit complete: on the reliable
             * hardware that refuses the flag (verbs), the target's NIC has
             * acknowledged the bytes placed; said once */
            PROUST_INFO("ofi: the provider refuses FI_DELIVERY_COMPLETE: remote writes complete "
                        "when the target acknowledges them");
            o->write_flags = FI_COMPLETION;
            rc = (int)fi_writemsg(o->ep, &m, o->write_flags);
        }
    }
    proust__unlock(&o->fi_lock);
    return rc;
}

static void release(struct ofi_rail *o, struct ofi_op *op)
{
    if (op->atomic) {
        proust__ofi_atomic_release(o, op);
        return;
    }
    proust__ofi_close_mr(o, op->mr);
    free(op);
}

const char *proust__ofi_rma_what(const struct ofi_op *op)
{
    return op->atomic ? "atomic" : op->rma_write ? "write" : "read";
}

void proust__ofi_rma_done(proust__rail_t *rail, struct ofi_op *op, int status)
{
    struct ofi_rail *o = rail->priv;
    void *ctx = op->engine_ctx;
    bool answer = proust__ofi_flight_take(o, op); /* else a disconnect answered */
    if (status == PROUST_OK)
        atomic_fetch_add_explicit(op->atomic      ? &o->rma_atomics
                                  : op->rma_write ? &o->rma_writes
                                                  : &o->rma_reads,
                                  1, memory_order_relaxed);
    release(o, op);
    if (answer)
        rail->up.rma_done(rail->up.engine, ctx, status);
}

int proust__ofi_rma(proust__rail_t *rail, int peer, int write, void *local, size_t len,
                    const void *key, size_t key_len, uint64_t offset, void *ctx)
{
    struct ofi_rail *o = rail->priv;
    if (!o->rma_ok)
        return PROUST_ERR_NOT_SUPPORTED;
    struct ofi_get_key k;
    fi_addr_t to;
    if (len > o->info->ep_attr->max_msg_size)
        return PROUST_ERR_INVALID; /* (callers split: proust_rma_write's doc) */
    int crc = proust__ofi_remote_check(o, peer, key, key_len, offset, len, &k, &to);
    if (crc != PROUST_OK)
        return crc == OFI_NOTHING_TO_MOVE ? PROUST_OK : crc;
    struct ofi_op *op = calloc(1, sizeof *op);
    if (!op)
        return PROUST_ERR_NOMEM;
    op->kind = OFI_OP_RMA;
    op->peer = peer;
    op->engine_ctx = ctx;
    op->rma_write = write != 0;
    op->buf = local;
    op->len = len;
    op->raddr = k.raddr + offset;
    op->rkey = k.rkey;
    if (o->mr_local) {
        int rc = proust__ofi_register(o, local, len, write ? FI_WRITE : FI_READ, &op->mr);
        if (rc != PROUST_OK) {
            free(op);
            return rc;
        }
        op->desc = fi_mr_desc(op->mr);
    }
    return proust__ofi_rma_start(rail, op);
}

int proust__ofi_rma_start(proust__rail_t *rail, struct ofi_op *op)
{
    struct ofi_rail *o = rail->priv;
    proust__ofi_flight_add(o, op);
    int rc = post(o, op);
    if (rc == 0)
        return PROUST__INPROGRESS;
    if (rc == -FI_EAGAIN) { /* poll posts it when completions make room, in order */
        proust__lock(&o->rma_lock);
        op->rma_next = NULL;
        if (o->rma_waiting_tail)
            o->rma_waiting_tail->rma_next = op;
        else
            o->rma_waiting = op;
        o->rma_waiting_tail = op;
        atomic_store_explicit(&o->rma_any_waiting, true, memory_order_relaxed);
        proust__unlock(&o->rma_lock);
        return PROUST__INPROGRESS;
    }
    PROUST_WARN("ofi: %s of %zu bytes at rank %d: %s", proust__ofi_rma_what(op), op->len,
                op->peer, proust__ofi.strerror(-rc));
    bool ours = proust__ofi_flight_take(o, op);
    release(o, op);
    /* a disconnect took it first: it answered the engine already */
    return ours ? PROUST_ERR_CONN : PROUST__INPROGRESS;
}

int proust__ofi_rma_retry(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    /* (one added as this looks is seen by the next poll) */
    if (!atomic_load_explicit(&o->rma_any_waiting, memory_order_relaxed))
        return 0;
    proust__lock(&o->rma_lock);
    struct ofi_op *op = o->rma_waiting;
    o->rma_waiting = o->rma_waiting_tail = NULL;
    atomic_store_explicit(&o->rma_any_waiting, false, memory_order_relaxed);
    proust__unlock(&o->rma_lock);
    int posted = 0;
    struct ofi_op *left = NULL, *left_tail = NULL; /* still without room, in order */
    while (op) {
        struct ofi_op *next = op->rma_next;
        op->rma_next = NULL;
        int rc = -FI_EAGAIN;
        if (!proust__ofi_flight_has(o, op)) { /* its peer failed: answered already */
            release(o, op);
            op = next;
            continue;
        }
        if (!left) /* behind one without room: keep the order */
            rc = post(o, op);
        if (rc == 0) {
            posted++;
        } else if (rc == -FI_EAGAIN) {
            if (left_tail)
                left_tail->rma_next = op;
            else
                left = op;
            left_tail = op;
        } else {
            PROUST_WARN("ofi: %s of %zu bytes at rank %d: %s", proust__ofi_rma_what(op),
                        op->len, op->peer, proust__ofi.strerror(-rc));
            proust__ofi_rma_done(rail, op, PROUST_ERR_CONN);
        }
        op = next;
    }
    if (left) { /* in front of those that came meanwhile */
        proust__lock(&o->rma_lock);
        left_tail->rma_next = o->rma_waiting;
        if (!o->rma_waiting)
            o->rma_waiting_tail = left_tail;
        o->rma_waiting = left;
        atomic_store_explicit(&o->rma_any_waiting, true, memory_order_relaxed);
        proust__unlock(&o->rma_lock);
    }
    return posted;
}

void proust__ofi_rma_close(struct ofi_rail *o)
{
    while (o->regions) { /* (released by nobody: the process ends) */
        struct ofi_region *r = o->regions;
        o->regions = r->next;
        (void)fi_close(&r->mr->fid);
        free(r);
    }
    while (o->rma_waiting) {
        struct ofi_op *op = o->rma_waiting;
        o->rma_waiting = op->rma_next;
        release(o, op);
    }
}
