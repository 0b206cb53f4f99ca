/*
 * ofi_atomic.c — atomic operations on a peer's registered memory on the
 * ofi rail (fi_atomic, fi_fetch_atomic, fi_compare_atomic): what the
 * provider can do is read once from fi_*atomicvalid at open; an atomic is
 * then an RMA op of ofi_rma.c (flight list, waiting for room, failure)
 * that carries its operands.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>

#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

/* An atomic: the RMA op ofi_rma.c tracks, and what only atomics have. */
struct ofi_atomic {
    struct ofi_op op; /* first: ofi_rma.c's op is this */
    int fop;          /* enum fi_op */
    int ftype;        /* enum fi_datatype */
    size_t count;
    const void *compare;
    void *result;
    struct fid_mr *mr_res, *mr_cmp; /* FI_MR_LOCAL */
    void *desc_res, *desc_cmp;
};

static const enum fi_op fi_ops[PROUST_ATOMIC_OPS] = {
    [PROUST_ATOMIC_SUM] = FI_SUM,     [PROUST_ATOMIC_PROD] = FI_PROD,
    [PROUST_ATOMIC_MIN] = FI_MIN,     [PROUST_ATOMIC_MAX] = FI_MAX,
    [PROUST_ATOMIC_BAND] = FI_BAND,   [PROUST_ATOMIC_BOR] = FI_BOR,
    [PROUST_ATOMIC_BXOR] = FI_BXOR,   [PROUST_ATOMIC_LAND] = FI_LAND,
    [PROUST_ATOMIC_LOR] = FI_LOR,     [PROUST_ATOMIC_LXOR] = FI_LXOR,
    [PROUST_ATOMIC_WRITE] = FI_ATOMIC_WRITE, [PROUST_ATOMIC_READ] = FI_ATOMIC_READ,
    [PROUST_ATOMIC_CSWAP] = FI_CSWAP,
};

static const enum fi_datatype fi_types[PROUST_ATOMIC_TYPES] = {
    [PROUST_ATOMIC_INT8] = FI_INT8,     [PROUST_ATOMIC_UINT8] = FI_UINT8,
    [PROUST_ATOMIC_INT16] = FI_INT16,   [PROUST_ATOMIC_UINT16] = FI_UINT16,
    [PROUST_ATOMIC_INT32] = FI_INT32,   [PROUST_ATOMIC_UINT32] = FI_UINT32,
    [PROUST_ATOMIC_INT64] = FI_INT64,   [PROUST_ATOMIC_UINT64] = FI_UINT64,
    [PROUST_ATOMIC_FLOAT] = FI_FLOAT,   [PROUST_ATOMIC_DOUBLE] = FI_DOUBLE,
};

/* Which call an (op, fetching) pair is: 0 fi_atomic, 1 fi_fetch_atomic,
 * 2 fi_compare_atomic. */
static int variant(int op, int fetching)
{
    if (op == PROUST_ATOMIC_CSWAP)
        return 2;
    return op == PROUST_ATOMIC_READ || fetching ? 1 : 0;
}

void proust__ofi_atomic_probe(struct ofi_rail *o)
{
    memset(o->atomic_max, 0, sizeof o->atomic_max);
    o->atomic_ok = false;
    if (!o->rma_ok || !(o->info->caps & FI_ATOMIC))
        return;
    for (int op = 0; op < PROUST_ATOMIC_OPS; op++)
        for (int t = 0; t < PROUST_ATOMIC_TYPES; t++)
            for (int v = 0; v < 3; v++) {
                size_t n = 0;
                int rc;
                if (v == 2)
                    rc = op == PROUST_ATOMIC_CSWAP
                             ? fi_compare_atomicvalid(o->ep, fi_types[t], fi_ops[op], &n)
                             : -FI_EOPNOTSUPP;
                else if (v == 1)
                    rc = op == PROUST_ATOMIC_CSWAP
                             ? -FI_EOPNOTSUPP
                             : fi_fetch_atomicvalid(o->ep, fi_types[t], fi_ops[op], &n);
                else
                    rc = op == PROUST_ATOMIC_CSWAP || op == PROUST_ATOMIC_READ
                             ? -FI_EOPNOTSUPP
                             : fi_atomicvalid(o->ep, fi_types[t], fi_ops[op], &n);
                if (rc == 0 && n > 0) {
                    o->atomic_max[v][op][t] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
                    o->atomic_ok = true;
                }
            }
    const uint64_t all = FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR |
                         FI_ORDER_ATOMIC_WAW;
    o->atomic_ordered = (o->info->tx_attr->msg_order & all) == all;
}

size_t proust__ofi_atomic_max(proust__rail_t *rail, int op, int type, int fetching)
{
    struct ofi_rail *o = rail->priv;
    if (!o->atomic_ok || op < 0 || op >= PROUST_ATOMIC_OPS || type < 0 ||
        type >= PROUST_ATOMIC_TYPES)
        return 0;
    return o->atomic_max[variant(op, fetching)][op][type];
}

int proust__ofi_atomic_post(struct ofi_rail *o, struct ofi_op *op)
{
    struct ofi_atomic *a = (struct ofi_atomic *)op;
    struct fi_ioc ioc = {op->buf, a->count};
    struct fi_ioc res = {a->result, a->count};
    struct fi_ioc cmp = {(void *)a->compare, a->count};
    struct fi_rma_ioc r = {.addr = op->raddr, .count = a->count, .key = op->rkey};
    struct fi_msg_atomic m = {
        .msg_iov = &ioc,
        .desc = &op->desc,
        .iov_count = 1,
        .addr = atomic_load_explicit(&o->peers[op->peer].addr, memory_order_relaxed),
        .rma_iov = &r,
        .rma_iov_count = 1,
        .datatype = (enum fi_datatype)a->ftype,
        .op = (enum fi_op)a->fop,
        .context = &op->fctx,
    };
    if (a->fop == FI_ATOMIC_READ) { /* no operand: some providers want none */
        m.msg_iov = NULL;
        m.desc = NULL;
        m.iov_count = 0;
    }
    proust__lock(&o->fi_lock);
    int rc;
    if (a->fop == FI_CSWAP)
        rc = (int)fi_compare_atomicmsg(o->ep, &m, &cmp, &a->desc_cmp, 1, &res, &a->desc_res, 1,
                                       FI_COMPLETION);
    else if (a->result)
        rc = (int)fi_fetch_atomicmsg(o->ep, &m, &res, &a->desc_res, 1, FI_COMPLETION);
    else {
        rc = (int)fi_atomicmsg(o->ep, &m, o->write_flags);
        if (rc == -FI_EBADFLAGS && (o->write_flags & FI_DELIVERY_COMPLETE)) {
            PROUST_INFO("ofi: the provider refuses FI_DELIVERY_COMPLETE: remote writes and "
                        "atomics complete when the target acknowledges them");
            o->write_flags = FI_COMPLETION;
            rc = (int)fi_atomicmsg(o->ep, &m, o->write_flags);
        }
    }
    proust__unlock(&o->fi_lock);
    return rc;
}

void proust__ofi_atomic_release(struct ofi_rail *o, struct ofi_op *op)
{
    struct ofi_atomic *a = (struct ofi_atomic *)op;
    proust__ofi_close_mr(o, a->mr_res);
    proust__ofi_close_mr(o, a->mr_cmp);
    proust__ofi_close_mr(o, op->mr);
    free(a);
}

/* FI_MR_LOCAL: register a buffer the provider reads or writes. */
static int local_mr(struct ofi_rail *o, const void *buf, size_t len, uint64_t access,
                    struct fid_mr **mr, void **desc)
{
    if (!o->mr_local || !buf)
        return PROUST_OK;
    int rc = proust__ofi_register(o, (void *)buf, len, access, mr);
    if (rc == PROUST_OK)
        *desc = fi_mr_desc(*mr);
    return rc;
}

int proust__ofi_atomic(proust__rail_t *rail, int peer, int op, int type, const void *operand,
                       const void *compare, void *result, size_t count, const void *key,
                       size_t key_len, uint64_t offset, void *ctx)
{
    struct ofi_rail *o = rail->priv;
    size_t max = proust__ofi_atomic_max(rail, op, type, result != NULL);
    if (!max || count > max)
        return PROUST_ERR_NOT_SUPPORTED; /* (callers split: proust_rma_atomic) */
    size_t len = count * proust__atomic_type_bytes(type);
    struct ofi_get_key k;
    fi_addr_t to;
    int crc = proust__ofi_remote_check(o, peer, key, key_len, offset, len, &k, &to);
    if (crc != PROUST_OK)
        return crc == OFI_NOTHING_TO_MOVE ? PROUST_OK : crc;
    if ((k.raddr + offset) % proust__atomic_type_bytes(type))
        return PROUST_ERR_PROTO; /* a NIC updates aligned elements only */
    struct ofi_atomic *a = calloc(1, sizeof *a);
    if (!a)
        return PROUST_ERR_NOMEM;
    struct ofi_op *fo = &a->op;
    fo->kind = OFI_OP_RMA;
    fo->atomic = true;
    fo->peer = peer;
    fo->engine_ctx = ctx;
    fo->rma_write = op != PROUST_ATOMIC_READ;
    fo->buf = (uint8_t *)operand;
    fo->len = len;
    fo->raddr = k.raddr + offset;
    fo->rkey = k.rkey;
    a->fop = fi_ops[op];
    a->ftype = fi_types[type];
    a->count = count;
    a->compare = compare;
    a->result = result;
    int rc = local_mr(o, op == PROUST_ATOMIC_READ ? NULL : operand, len, FI_WRITE, &fo->mr,
                      &fo->desc);
    if (rc == PROUST_OK)
        rc = local_mr(o, result, len, FI_READ, &a->mr_res, &a->desc_res);
    if (rc == PROUST_OK && op == PROUST_ATOMIC_CSWAP)
        rc = local_mr(o, compare, len, FI_WRITE, &a->mr_cmp, &a->desc_cmp);
    if (rc != PROUST_OK) {
        proust__ofi_atomic_release(o, fo);
        return rc;
    }
    return proust__ofi_rma_start(rail, fo);
}
