/*
 * rma_nic.c — one-sided operations to a rank whose window memory is
 * registered for one-sided access (win.c; across hosts, on the ofi rail):
 * a put or get is one remote write or read per block of the target
 * layout, an accumulate one atomic per block. The target's MPI does
 * nothing: the operation is done at the target when it is done here, and
 * counts only in w->pending until then.
 *
 * Accumulates are atomic with each other only if one agent applies them
 * all. So a window takes the NIC's atomics for an element type only where
 * every rank can reach every rank of the window (itself included) through
 * the same atomic rail and the provider does every operation MPI defines
 * on that type (win.c agrees on that at creation: w->nic_acc_types); all
 * accumulates of that type then go by the NIC, from every origin, and
 * those of other types stay messages that the target applies.
 */
#include <stdlib.h>
#include <string.h>

#include "op.h"
#include "rma_op.h"

/* PROUST_RMA_NIC=auto where the provider moves the bytes in software
 * (tcp;ofi_rxm): one-sided from here to there, messages elsewhere
 * (PERFORMANCE, "MPI one-sided across hosts": a small get by fi_read took
 * 25 us against 13 by messages, 2 MiB 460 against 276; 128-512 KiB
 * 0.62-0.93 of the messages' time). */
#define PM_NIC_POLLED_MIN ((uint64_t)64 << 10)
#define PM_NIC_POLLED_MAX ((uint64_t)1 << 20)

bool pm_rma_nic_pays(const struct pm_win *w, int target, uint64_t tbytes)
{
    if (!tbytes || !w->nic_key_len[target])
        return false;
    return w->nic_mode == 1 || w->nic_how[target] == PROUST_RMA_BY_NIC ||
           (tbytes >= PM_NIC_POLLED_MIN && tbytes <= PM_NIC_POLLED_MAX);
}

/* The MPI request of a request-based operation `o`, or NULL (out of
 * memory: `o` is then finished, counted and gone). */
static struct pm_request *nic_request(struct pm_win *w, struct rma_op *o,
                                      const struct rma_args *a)
{
    struct pm_request *r = pm_request_new(PM_REQ_ASYNC, w->comm);
    if (!r) {
        o->err = MPI_ERR_NO_MEM;
        atomic_fetch_add_explicit(&w->pending[a->target], 1, memory_order_relaxed);
        pm_rma_op_part_done(o);
        return NULL;
    }
    o->mreq = r;
    return r;
}

static int nic_fail(MPI_Win win, const struct rma_args *a, int64_t *lay)
{
    free(lay);
    return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
}

/* A put or get to a rank with a key (see the top): one remote write or
 * read per block of the target layout, from or into the user's buffer
 * when it is contiguous (a put's data packed otherwise; a get's landing in
 * a temporary unpacked when every block is in). Takes `lay` over. */
int pm_rma_issue_nic(MPI_Win win, struct pm_win *w, const struct rma_args *a,
                     MPI_Request *request, int64_t *lay, uint64_t nb, uint64_t at, uint64_t tbytes)
{
    bool put = a->kind == PM_RMA_PUT;
    struct pm_datatype *lt = put ? a->otype : a->rtype;
    struct rma_op *o = calloc(1, sizeof *o);
    if (!o)
        return nic_fail(win, a, lay);
    o->w = w;
    o->target = a->target;
    atomic_init(&o->parts, 1); /* ours until everything is posted */
    char *local = (char *)(put ? a->obuf : a->rbuf) + lt->true_lb;
    if (!pm_rma_contiguous(lt)) {
        void *tmp = malloc((size_t)tbytes);
        if (!tmp) {
            free(o);
            return nic_fail(win, a, lay);
        }
        if (put) {
            pm_type_pack(a->obuf, a->ocount, a->otype, 0, tmp, (size_t)tbytes);
            o->send_tmp = tmp;
        } else {
            o->rtmp = tmp;
            o->rlen = (size_t)tbytes;
            o->ubuf = a->rbuf;
            o->ucount = a->rcount;
            o->utype = a->rtype;
            pm_type_retain(a->rtype);
            o->unpack_at_end = true;
        }
        local = tmp;
    }
    struct pm_request *r = NULL;
    if (request && !(r = nic_request(w, o, a)))
        return nic_fail(win, a, lay);
    atomic_fetch_add_explicit(&w->pending[a->target], 1, memory_order_relaxed);
    int world = pm_comm_peer(w->comm, a->target);
    const uint8_t *key = w->nic_keys[a->target];
    size_t key_len = w->nic_key_len[a->target];
    int prc = PROUST_OK;
    uint64_t done = 0;
    for (uint64_t i = 0; i < (nb ? nb : 1) && prc == PROUST_OK; i++) {
        uint64_t off = nb ? (uint64_t)lay[2 * i] : 0;
        uint64_t len = nb ? (uint64_t)lay[2 * i + 1] : tbytes;
        proust_request_t *rq = NULL;
        prc = put ? proust_rma_write(pm_session, world, local + done, (size_t)len, key, key_len,
                                     at + off, &rq)
                  : proust_rma_read(pm_session, world, local + done, (size_t)len, key, key_len,
                                    at + off, &rq);
        if (prc == PROUST_OK) {
            atomic_fetch_add(&o->parts, 1);
            pm_rma_track(o, rq, pm_rma_send_done);
        }
        done += len;
    }
    free(lay);
    return pm_rma_issue_end(win, o, r, request, prc, a, "one-sided transfer with");
}

/* ---- Accumulates by the NIC's atomics ------------------------------------------ */

/* The atomic type of predefined type index `basic`, or -1 (messages). */
int pm_rma_nic_type(int basic)
{
    if (basic <= 0 || basic >= PROUST_MPI_NUM_PREDEFINED_TYPES)
        return -1;
    unsigned cls = pm_op_types[basic].cls;
    MPI_Aint size = pm_type_predef[basic].size;
    MPI_Datatype t = PROUST_MPI_TYPE(basic);
    if (cls & PM_TC_FLOAT)
        return size == 4 ? PROUST_ATOMIC_FLOAT : size == 8 ? PROUST_ATOMIC_DOUBLE : -1;
    if (cls == PM_TC_BYTE)
        return PROUST_ATOMIC_UINT8;
    if (!(cls & (PM_TC_CINT | PM_TC_FINT)))
        return -1; /* logical, complex, pairs, characters: messages */
    bool is_unsigned = t == MPI_UNSIGNED_CHAR || t == MPI_UNSIGNED_SHORT || t == MPI_UNSIGNED ||
                       t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
                       t == MPI_UINT8_T || t == MPI_UINT16_T || t == MPI_UINT32_T ||
                       t == MPI_UINT64_T || (t == MPI_CHAR && (char)-1 > 0);
    switch (size) {
    case 1: return is_unsigned ? PROUST_ATOMIC_UINT8 : PROUST_ATOMIC_INT8;
    case 2: return is_unsigned ? PROUST_ATOMIC_UINT16 : PROUST_ATOMIC_INT16;
    case 4: return is_unsigned ? PROUST_ATOMIC_UINT32 : PROUST_ATOMIC_INT32;
    case 8: return is_unsigned ? PROUST_ATOMIC_UINT64 : PROUST_ATOMIC_INT64;
    default: return -1;
    }
}

/* Can the rail to `peer` do, on predefined type `basic`, every operation
 * MPI allows on it (the fetching forms too)? */
static bool every_op(int peer, int basic)
{
    int t = pm_rma_nic_type(basic);
    if (t < 0)
        return false;
    static const int arith[] = {PROUST_ATOMIC_SUM, PROUST_ATOMIC_PROD, PROUST_ATOMIC_MIN,
                                PROUST_ATOMIC_MAX, PROUST_ATOMIC_BAND, PROUST_ATOMIC_BOR,
                                PROUST_ATOMIC_BXOR, PROUST_ATOMIC_LAND, PROUST_ATOMIC_LOR,
                                PROUST_ATOMIC_LXOR};
    unsigned cls = pm_op_types[basic].cls;
    size_t narith = cls & PM_TC_FLOAT ? 4 : cls == PM_TC_BYTE ? 0 : 10;
    for (size_t i = 0; i < narith; i++)
        if (proust_rma_atomic_max(pm_session, peer, arith[i], t, 0) <= 0 ||
            proust_rma_atomic_max(pm_session, peer, arith[i], t, 1) <= 0)
            return false;
    if (proust_rma_atomic_max(pm_session, peer, PROUST_ATOMIC_WRITE, t, 0) <= 0 ||
        proust_rma_atomic_max(pm_session, peer, PROUST_ATOMIC_WRITE, t, 1) <= 0 ||
        proust_rma_atomic_max(pm_session, peer, PROUST_ATOMIC_READ, t, 1) <= 0)
        return false;
    return (cls & PM_TC_FLOAT) || proust_rma_atomic_max(pm_session, peer, PROUST_ATOMIC_CSWAP, t, 1) > 0;
}

uint64_t pm_rma_nic_acc_offer(const struct pm_win *w)
{
    /* auto: only where the NIC applies them whatever the target does */
    for (int r = 0; r < w->size; r++) {
        int peer = pm_comm_peer(w->comm, r);
        if (proust_rma_atomic_max(pm_session, peer, PROUST_ATOMIC_SUM, PROUST_ATOMIC_INT64, 1) <=
            0)
            return 0;
        if (w->nic_mode != 1 && r != w->rank &&
            proust_rma_reaches(pm_session, peer) != PROUST_RMA_BY_NIC)
            return 0;
    }
    /* the provider's table is the same for every peer: asked of ourselves */
    int me = pm_comm_peer(w->comm, w->rank);
    uint64_t mask = 0;
    for (int b = 1; b < PROUST_MPI_NUM_PREDEFINED_TYPES && b < 64; b++)
        if (every_op(me, b))
            mask |= (uint64_t)1 << b;
    return mask;
}

bool pm_rma_nic_atomic(const struct pm_win *w, const struct rma_args *a, const int64_t *lay,
                       uint64_t nb, uint64_t at)
{
    int basic = a->ttype->basic;
    if (basic <= 0 || basic >= 64 || !(w->nic_acc_types >> basic & 1) ||
        (a->kind == PM_RMA_ACC && a->op == MPI_NO_OP))
        return false;
    /* a NIC updates aligned elements: others (a window at an odd address,
     * a packed struct) stay messages, every access to them alike */
    uint64_t esz = (uint64_t)pm_type_predef[basic].size, base = w->nic_base_low[a->target];
    for (uint64_t i = 0; i < (nb ? nb : 1); i++)
        if ((base + at + (nb ? (uint64_t)lay[2 * i] : 0)) % esz)
            return false;
    return true;
}

static int atomic_op(const struct rma_args *a)
{
    if (a->kind == PM_RMA_CAS)
        return PROUST_ATOMIC_CSWAP;
    if (a->op == MPI_REPLACE)
        return PROUST_ATOMIC_WRITE;
    if (a->op == MPI_NO_OP)
        return PROUST_ATOMIC_READ;
    static const struct {
        MPI_Op op;
        int atomic;
    } map[] = {{MPI_SUM, PROUST_ATOMIC_SUM},   {MPI_PROD, PROUST_ATOMIC_PROD},
               {MPI_MIN, PROUST_ATOMIC_MIN},   {MPI_MAX, PROUST_ATOMIC_MAX},
               {MPI_BAND, PROUST_ATOMIC_BAND}, {MPI_BOR, PROUST_ATOMIC_BOR},
               {MPI_BXOR, PROUST_ATOMIC_BXOR}, {MPI_LAND, PROUST_ATOMIC_LAND},
               {MPI_LOR, PROUST_ATOMIC_LOR},   {MPI_LXOR, PROUST_ATOMIC_LXOR}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].op == a->op)
            return map[i].atomic;
    return -1;
}

int pm_rma_issue_nic_atomic(MPI_Win win, struct pm_win *w, const struct rma_args *a,
                            MPI_Request *request, int64_t *lay, uint64_t nb, uint64_t at,
                            uint64_t tbytes)
{
    int op = atomic_op(a), type = pm_rma_nic_type(a->ttype->basic);
    size_t esz = (size_t)pm_type_predef[a->ttype->basic].size;
    bool fetch = pm_rma_fetches(a->kind);
    struct rma_op *o = calloc(1, sizeof *o);
    if (!o || op < 0 || type < 0) {
        free(o);
        return nic_fail(win, a, lay);
    }
    o->w = w;
    o->target = a->target;
    atomic_init(&o->parts, 1); /* ours until everything is posted */
    /* operands and compare values packed in one buffer unless they lie in
     * one block; results land in place or in a buffer unpacked at the end */
    const char *operand = NULL, *compare = NULL;
    char *result = NULL;
    if (op != PROUST_ATOMIC_READ) {
        if (pm_rma_contiguous(a->otype) && a->kind != PM_RMA_CAS) {
            operand = (const char *)a->obuf + a->otype->true_lb;
        } else {
            size_t n = (size_t)tbytes * (a->kind == PM_RMA_CAS ? 2 : 1);
            char *tmp = o->send_tmp = malloc(n);
            if (!tmp) {
                free(o);
                return nic_fail(win, a, lay);
            }
            pm_type_pack(a->obuf, a->ocount, a->otype, 0, tmp, (size_t)tbytes);
            if (a->kind == PM_RMA_CAS)
                pm_type_pack(a->cbuf, a->ocount, a->otype, 0, tmp + tbytes, (size_t)tbytes);
            operand = tmp;
            compare = a->kind == PM_RMA_CAS ? tmp + tbytes : NULL;
        }
    }
    if (fetch) {
        if (pm_rma_contiguous(a->rtype)) {
            result = (char *)a->rbuf + a->rtype->true_lb;
        } else if ((result = o->rtmp = malloc((size_t)tbytes)) != NULL) {
            o->rlen = (size_t)tbytes;
            o->ubuf = a->rbuf;
            o->ucount = a->rcount;
            o->utype = a->rtype;
            pm_type_retain(a->rtype);
            o->unpack_at_end = true;
        } else {
            free(o->send_tmp);
            free(o);
            return nic_fail(win, a, lay);
        }
    }
    struct pm_request *r = NULL;
    if (request && !(r = nic_request(w, o, a)))
        return nic_fail(win, a, lay);
    /* the provider does not keep atomics in order: this one waits for the
     * earlier ones to this rank (accumulate_ordering, unless "none") */
    if (w->nic_acc_wait)
        pm_rma_wait_local(w, a->target);
    atomic_fetch_add_explicit(&w->pending[a->target], 1, memory_order_relaxed);
    int world = pm_comm_peer(w->comm, a->target);
    const uint8_t *key = w->nic_keys[a->target];
    size_t key_len = w->nic_acc_key_len[a->target];
    int prc = PROUST_OK;
    uint64_t done = 0;
    for (uint64_t i = 0; i < (nb ? nb : 1) && prc == PROUST_OK; i++) {
        uint64_t off = nb ? (uint64_t)lay[2 * i] : 0;
        uint64_t len = nb ? (uint64_t)lay[2 * i + 1] : tbytes;
        proust_request_t *rq = NULL;
        prc = proust_rma_atomic(pm_session, world, op, type, operand ? operand + done : NULL,
                                compare ? compare + done : NULL, result ? result + done : NULL,
                                (size_t)(len / esz), key, key_len, at + off, &rq);
        if (prc == PROUST_OK) {
            atomic_fetch_add(&o->parts, 1);
            pm_rma_track(o, rq, pm_rma_send_done);
        }
        done += len;
    }
    free(lay);
    return pm_rma_issue_end(win, o, r, request, prc, a, "atomics at");
}
