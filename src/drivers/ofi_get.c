/*
 * ofi_get.c — rendezvous by get on the ofi rail: the sender's RTS carries
 * a key to its memory, and the receiver reads the message with fi_read as
 * soon as it matches it: RTS and one read, where the put path (ofi_pull.c)
 * costs RTS, CTS, PULL and the read.
 *
 * expose() registers the send's bytes for remote reading; several sends of
 * the same bytes share one registration, counted, and the engine's
 * unexpose() at each send's completion releases it with the last one.
 * get() is synchronous, as the engine wants it: it posts the read and
 * polls the completion queue until the read is done, keeping what else it
 * reads there for poll (the stash), which alone delivers messages; a read
 * whose completion poll reads instead is marked done there.
 *
 * Threads: exposures are under expose_lock; the stash under stash_lock;
 * every libfabric call under fi_lock; several threads may get at once
 * (the engine splits a large get among idle threads).
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fi_rma.h>

#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

struct ofi_exposure {
    struct ofi_exposure *next;
    const void *buf;
    size_t len;
    int refs;
    struct fid_mr *mr;         /* registered for it, or */
    struct ofi_region *region; /* inside memory registered already */
    uint64_t rkey, raddr;
};

/* ---- the sender: exposures ------------------------------------------------------ */
int proust__ofi_expose(proust__rail_t *rail, const void *buf, size_t len, void *key, size_t cap)
{
    struct ofi_rail *o = rail->priv;
    if (cap < sizeof(struct ofi_get_key))
        return PROUST_ERR_INVALID;
    proust__lock(&o->expose_lock);
    struct ofi_exposure *e = o->exposures;
    while (e && (e->buf != buf || e->len != len))
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof *e);
        int rc = PROUST_ERR_NOMEM;
        if (e) {
            e->region = proust__ofi_region_find_locked(o, buf, len, &e->rkey, &e->raddr);
            rc = e->region ? PROUST_OK
                           : proust__ofi_register(o, (void *)buf, len, FI_REMOTE_READ, &e->mr);
        }
        if (rc != PROUST_OK) {
            proust__unlock(&o->expose_lock);
            free(e);
            return rc; /* the engine sends no key: the receiver answers with a CTS */
        }
        if (e->mr) {
            bool virt = (o->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
            e->rkey = fi_mr_key(e->mr);
            e->raddr = virt ? (uint64_t)(uintptr_t)buf : 0;
        }
        e->buf = buf;
        e->len = len;
        e->next = o->exposures;
        o->exposures = e;
    }
    e->refs++;
    struct ofi_get_key k = {.raddr = e->raddr, .rkey = e->rkey, .len = len};
    proust__unlock(&o->expose_lock);
    memcpy(key, &k, sizeof k);
    return (int)sizeof k;
}

void proust__ofi_unexpose(proust__rail_t *rail, const void *buf, size_t len)
{
    struct ofi_rail *o = rail->priv;
    proust__lock(&o->expose_lock);
    struct ofi_exposure **at = &o->exposures;
    while (*at && ((*at)->buf != buf || (*at)->len != len))
        at = &(*at)->next;
    struct ofi_exposure *e = *at;
    if (e && --e->refs == 0)
        *at = e->next;
    else
        e = NULL;
    proust__unlock(&o->expose_lock);
    if (!e)
        return;
    proust__ofi_close_mr(o, e->mr);
    proust__ofi_region_put(o, e->region);
    free(e);
}

/* ---- the receiver: a synchronous read -------------------------------------------- */
int proust__ofi_remote_check(struct ofi_rail *o, int peer, const void *key, size_t key_len,
                             uint64_t offset, size_t len, struct ofi_get_key *k, fi_addr_t *to)
{
    if (key_len != sizeof *k)
        return PROUST_ERR_PROTO;
    memcpy(k, key, sizeof *k);
    if (offset > k->len || len > k->len - offset || k->raddr > UINT64_MAX - k->len)
        return PROUST_ERR_PROTO;
    int failed = atomic_load_explicit(&o->peers[peer].failed, memory_order_acquire);
    if (failed)
        return failed;
    if (len == 0)
        return OFI_NOTHING_TO_MOVE;
    if (proust__ofi_peer_addr(o, peer, to) != PROUST_OK)
        return PROUST_ERR_CONN;
    return PROUST_OK;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void stash(struct ofi_rail *o, struct ofi_op *op, size_t len, int err)
{
    struct ofi_stashed *st = malloc(sizeof *st);
    if (!st) { /* cannot happen in practice; a lost receive would hang a peer */
        PROUST_ERROR("ofi: no memory to keep a completion: the rail stops here");
        abort();
    }
    *st = (struct ofi_stashed){.op = op, .len = len, .err = err};
    proust__lock(&o->stash_lock);
    atomic_store_explicit(&o->stash_nonempty, true, memory_order_relaxed);
    if (o->stash_tail)
        o->stash_tail->next = st;
    else
        o->stash_head = st;
    o->stash_tail = st;
    proust__unlock(&o->stash_lock);
}

/* Read what the completion queue holds: our reads are marked done, the
 * rest kept for poll. */
static void drain_for_gets(struct ofi_rail *o)
{
    struct fi_cq_msg_entry c[16];
    proust__lock(&o->fi_lock);
    ssize_t n = fi_cq_read(o->cq, c, 16);
    struct fi_cq_err_entry err = {0};
    if (n == -FI_EAVAIL && fi_cq_readerr(o->cq, &err, 0) != 1)
        err.op_context = NULL;
    proust__unlock(&o->fi_lock);
    if (n == -FI_EAVAIL) {
        struct ofi_op *op = err.op_context;
        if (op && op->kind == OFI_OP_READ_SYNC)
            atomic_store_explicit(&op->sync_state, -err.err - 1, memory_order_release);
        else if (op)
            stash(o, op, 0, err.err ? err.err : FI_EIO);
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        struct ofi_op *op = c[i].op_context;
        if (op && op->kind == OFI_OP_READ_SYNC) /* (no op: a ring write's notice, poll's) */
            atomic_store_explicit(&op->sync_state, 1, memory_order_release);
        else
            stash(o, op, c[i].len, 0);
    }
}

int proust__ofi_get(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                    uint64_t offset, void *dst, size_t len)
{
    struct ofi_rail *o = rail->priv;
    struct ofi_get_key k;
    fi_addr_t from;
    int crc = proust__ofi_remote_check(o, peer, key, key_len, offset, len, &k, &from);
    if (crc != PROUST_OK)
        return crc == OFI_NOTHING_TO_MOVE ? PROUST_OK : crc;
    /* on the heap: a read given up on may still complete into it */
    struct ofi_op *op = calloc(1, sizeof *op);
    if (!op)
        return PROUST_ERR_NOMEM;
    op->kind = OFI_OP_READ_SYNC;
    op->peer = peer;
    atomic_init(&op->sync_state, 0);
    if (o->mr_local) {
        int rc = proust__ofi_register(o, dst, len, FI_READ, &op->mr);
        if (rc != PROUST_OK) {
            free(op);
            return PROUST_ERR_NOT_SUPPORTED; /* the engine asks for puts instead */
        }
        op->desc = fi_mr_desc(op->mr);
    }
    int rc;
    for (;;) {
        proust__lock(&o->fi_lock);
        rc = (int)fi_read(o->ep, dst, len, op->desc, from, k.raddr + offset, k.rkey, &op->fctx);
        proust__unlock(&o->fi_lock);
        if (rc != -FI_EAGAIN)
            break;
        drain_for_gets(o); /* room comes with completions */
    }
    /* the peer polls meanwhile (its caller waits for this send: GET_WHILE_WAITED);
     * a peer gone without a word (its host) is given up on after a while */
    int state = rc == 0 ? 0 : -1;
    uint64_t start = now_ns(), checked = start;
    uint64_t limit = (uint64_t)OFI_GET_GIVE_UP_S * 1000000000ull;
    for (unsigned spins = 1; state == 0; spins++) {
        drain_for_gets(o);
        state = atomic_load_explicit(&op->sync_state, memory_order_acquire);
        if (state != 0 || spins % 1024 != 0)
            continue;
        sched_yield();
        uint64_t now = now_ns();
        if (now - checked >= OFI_GET_CHECK_NS && rail->up.check_peers) {
            checked = now; /* the launcher may have said the peer died */
            rail->up.check_peers(rail->up.engine);
        }
        if (atomic_load_explicit(&o->peers[peer].failed, memory_order_acquire) ||
            now - start > limit)
            break;
    }
    if (state == 0) { /* given up: op and its registration stay, a completion may come */
        PROUST_WARN("ofi: rank %d did not answer a read of %zu bytes", peer, len);
        proust__lock(&o->stash_lock);
        op->next = o->abandoned;
        o->abandoned = op;
        proust__unlock(&o->stash_lock);
        return PROUST_ERR_PEER_FAILED;
    }
    proust__ofi_close_mr(o, op->mr);
    free(op);
    if (state == 1) {
        atomic_fetch_add_explicit(&o->gets_done, 1, memory_order_relaxed);
        return PROUST_OK;
    }
    PROUST_WARN("ofi: reading %zu bytes from rank %d failed: %s", len, peer,
                proust__ofi.strerror(rc ? -rc : -state - 1));
    return PROUST_ERR_PEER_FAILED;
}

int proust__ofi_stashed(proust__rail_t *rail,
                        int (*handle)(proust__rail_t *, struct ofi_op *, size_t, int))
{
    struct ofi_rail *o = rail->priv;
    if (!atomic_load_explicit(&o->stash_nonempty, memory_order_relaxed))
        return 0; /* (one kept as poll looks is seen by its next pass) */
    proust__lock(&o->stash_lock);
    struct ofi_stashed *st = o->stash_head;
    o->stash_head = o->stash_tail = NULL;
    atomic_store_explicit(&o->stash_nonempty, false, memory_order_relaxed);
    proust__unlock(&o->stash_lock);
    int events = 0;
    while (st) {
        struct ofi_stashed *next = st->next;
        events += handle(rail, st->op, st->len, st->err);
        free(st);
        st = next;
    }
    return events;
}

void proust__ofi_get_close(struct ofi_rail *o)
{
    while (o->exposures) {
        struct ofi_exposure *e = o->exposures;
        o->exposures = e->next;
        if (e->mr)
            (void)fi_close(&e->mr->fid);
        proust__ofi_region_put(o, e->region);
        free(e);
    }
    while (o->stash_head) {
        struct ofi_stashed *st = o->stash_head;
        o->stash_head = st->next;
        free(st);
    }
    while (o->abandoned) { /* the endpoint is closed: no completion names them now */
        struct ofi_op *op = o->abandoned;
        o->abandoned = op->next;
        proust__ofi_close_mr(o, op->mr);
        free(op);
    }
}
