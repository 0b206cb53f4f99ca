/*
 * rma_ops.c — the origin side of one-sided operations: MPI_Put, MPI_Get,
 * the accumulates, fetch-and-op, compare-and-swap and their request-based
 * forms.
 *
 * Counts are MPI_Count inside (the _c twins pass theirs through).
 *
 * An operation is one header message — carrying the target layout and the
 * data when they fit in PM_RMA_HDR_MAX — or a header and one data message
 * (sent straight from the user's buffer when it is contiguous and the
 * target is too: a large put then costs one copy, the engine's). Replies
 * (get data, fetched values) are received by a receive posted before the
 * header leaves, straight into the user's buffer when it is contiguous.
 * Each operation counts in w->pending[target] until its sends are done and
 * its reply has landed (local completion, what flush_local and the
 * request-based forms wait for).
 *
 * A put or get to a rank whose window memory is registered for one-sided
 * access (win.c, across hosts on the ofi rail) is instead one remote write
 * or read per block of the target layout: the target's MPI does nothing,
 * and the transfer is done at the target when it is done here.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "op.h"
#include "p2p.h"
#include "request.h"
#include "rma_op.h"
#include "win.h"

static void op_finish(struct rma_op *o)
{
    struct pm_win *w = o->w;
    if (o->unpack_at_end && o->err == MPI_SUCCESS)
        pm_type_unpack(o->rtmp, o->rlen, o->ubuf, o->ucount, o->utype, 0);
    free(o->send_tmp);
    free(o->rtmp);
    if (o->utype)
        pm_type_release(o->utype);
    struct pm_request *r = o->mreq;
    int err = o->err;
    int target = o->target;
    free(o);
    if (err != MPI_SUCCESS && !r) { /* before `pending` drops: a flush then sees it */
        int none = MPI_SUCCESS;
        atomic_compare_exchange_strong(&w->op_error, &none, err);
    }
    atomic_fetch_sub_explicit(&w->pending[target], 1, memory_order_release);
    if (r) {
        if (err != MPI_SUCCESS)
            r->status.MPI_ERROR = err;
        /* bit 1: MPI_Request_free came first, the request is ours to free */
        if (pm_flag_set(&r->done, &r->sleeper, 1) & 2)
            pm_request_free(r);
    }
}

void pm_rma_op_part_done(struct rma_op *o)
{
    if (atomic_fetch_sub_explicit(&o->parts, 1, memory_order_acq_rel) == 1)
        op_finish(o);
}

void pm_rma_send_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct rma_op *o = arg;
    if (st->error != PROUST_OK)
        o->err = pm_error_from_proust(st->error);
    pm_rma_op_part_done(o);
}

static void reply_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct rma_op *o = arg;
    if (st->error != PROUST_OK && st->error != PROUST_ERR_TRUNCATE)
        o->err = pm_error_from_proust(st->error);
    else if (st->size != o->rlen)
        o->err = MPI_ERR_RMA_RANGE; /* the target refused it (short reply) */
    else if (o->rtmp)
        pm_type_unpack(o->rtmp, o->rlen, o->ubuf, o->ucount, o->utype, 0);
    pm_rma_op_part_done(o);
}

/* Track an engine request of `o` (one part). */
void pm_rma_track(struct rma_op *o, proust_request_t *req, proust_request_cb_t cb)
{
    if (proust_request_monitor(req, cb, o) != PROUST_OK) {
        proust_status_t st;
        proust_wait(&req, &st);
        cb(NULL, &st, o);
        return;
    }
    proust_request_free(&req);
}

/* ---- Layout of the target data -------------------------------------------- */

/* Blocks of `count` instances of `t` relative to the target displacement,
 * merged where adjacent; NULL and *n 0 for a contiguous type. */
static int64_t *target_layout(const struct pm_datatype *t, MPI_Count count, uint64_t *n,
                              int64_t *lo, int64_t *hi)
{
    *n = 0;
    if (t->contiguous || count == 0 || t->size == 0) {
        *lo = t->true_lb;
        *hi = t->true_lb + (int64_t)(count * t->size);
        return NULL;
    }
    size_t cap = (size_t)count * t->nblocks;
    int64_t *lay = malloc(cap * 2 * sizeof *lay);
    if (!lay)
        return NULL;
    size_t k = 0;
    int64_t l = INT64_MAX, h = INT64_MIN;
    for (MPI_Count i = 0; i < count; i++)
        for (size_t j = 0; j < t->nblocks; j++) {
            int64_t off = (int64_t)i * t->extent + t->blocks[j].disp, len = t->blocks[j].len;
            if (!len)
                continue;
            if (off < l)
                l = off;
            if (off + len > h)
                h = off + len;
            if (k && lay[2 * (k - 1)] + lay[2 * (k - 1) + 1] == off)
                lay[2 * (k - 1) + 1] += len;
            else
                lay[2 * k] = off, lay[2 * k + 1] = len, k++;
        }
    *n = k;
    *lo = k ? l : 0;
    *hi = k ? h : 0;
    return lay;
}

/* ---- Checks ----------------------------------------------------------------- */

static bool in_epoch(const struct pm_win *w, int target)
{
    if (w->fence_open || w->lock_all || w->locked[target])
        return true;
    for (int i = 0; i < w->access.n; i++)
        if (w->access.ranks[i] == target)
            return true;
    return false;
}

static int check_type(MPI_Win win, const char *fn, const char *what, MPI_Datatype dt,
                      MPI_Count count, struct pm_datatype **out)
{
    if (count < 0)
        return pm_win_error(win, MPI_ERR_COUNT, "%s: negative %s count %lld", fn, what,
                            (long long)count);
    if (pm_type_check(dt, out) != MPI_SUCCESS)
        return pm_win_error(win, MPI_ERR_TYPE, "%s: invalid or uncommitted %s datatype %#x", fn,
                            what, (unsigned)dt);
    /* (a _c count: its bytes may not fit the address space; raised on the
     * window's communicator, which holds the window's handler) */
    if (!pm_count_fast(count))
        return pm_check_count(fn, pm_win_get(win)->comm->handle, count, *out);
    return MPI_SUCCESS;
}

/* The operation of an accumulate, and the element type every one of its
 * datatypes must be made of (not checked when it moves no byte: MPICH
 * accepts any types then, and zero-size types have no element type). */
static int check_acc(MPI_Win win, const struct rma_args *a, bool moves_bytes)
{
    int basic = a->ttype->basic;
    if (a->op != MPI_REPLACE && a->op != MPI_NO_OP) {
        struct pm_op *o = pm_op_get(a->op);
        if (!o)
            return pm_win_error(win, MPI_ERR_OP, "%s: invalid operation %#x", a->fn,
                                (unsigned)a->op);
        if (pm_op_is_user(o))
            return pm_win_error(win, MPI_ERR_OP,
                                "%s: user-defined operations are not allowed in accumulates "
                                "(MPI-3.1 §11.3.4)", a->fn);
    } else if (a->op == MPI_NO_OP && a->kind == PM_RMA_ACC) {
        return pm_win_error(win, MPI_ERR_OP,
                            "%s: MPI_NO_OP is for MPI_Get_accumulate and MPI_Fetch_and_op "
                            "only (MPI-3.1 §11.3.4)", a->fn);
    } else if (!pm_op_get(a->op)) {
        return pm_win_error(win, MPI_ERR_OP, "%s: invalid operation %#x", a->fn,
                            (unsigned)a->op);
    }
    if (!moves_bytes)
        return MPI_SUCCESS;
    if (basic <= 0 || (a->otype && a->ocount && a->op != MPI_NO_OP && a->otype->basic != basic) ||
        (a->rtype && a->rcount && a->rtype->basic != basic))
        return pm_win_error(win, MPI_ERR_TYPE,
                            "%s: the datatypes must all be made of one same predefined type",
                            a->fn);
    if (a->op != MPI_REPLACE && a->op != MPI_NO_OP &&
        !pm_op_predef_applies(a->op, PROUST_MPI_TYPE(basic)))
        return pm_win_error(win, MPI_ERR_OP, "%s: operation %#x does not apply to %s", a->fn,
                            (unsigned)a->op, pm_type_predef[basic].name);
    return MPI_SUCCESS;
}

/* ---- Issuing ------------------------------------------------------------------ */

bool pm_rma_contiguous(const struct pm_datatype *t)
{
    return t->contiguous || t->size == 0;
}

/* A window in shared memory: the operation is done here and now, on the
 * target's memory (rma_target.c applies it as the target would), so it
 * completes at once, locally and remotely. Takes `lay` over. */
static int issue_direct(MPI_Win win, struct pm_win *w, const struct rma_args *a,
                        MPI_Request *request, int64_t *lay, uint64_t nb, uint64_t at,
                        uint64_t tbytes, uint64_t dbytes)
{
    struct pm_rma_hdr h = {
        .kind = (uint8_t)a->kind,
        .op = (uint8_t)(a->op ? PM_OPI(a->op) : 0),
        .basic = (uint16_t)(a->kind >= PM_RMA_ACC ? a->ttype->basic : 0),
        .disp = at,
        .nblocks = nb,
        .bytes = tbytes,
    };
    const char *in = NULL;
    char *in_tmp = NULL, *out = NULL, *out_tmp = NULL;
    size_t rlen = 0;
    if (dbytes) { /* the origin's bytes, packed unless they lie in one block */
        if (pm_rma_contiguous(a->otype) && a->kind != PM_RMA_CAS) {
            in = (const char *)a->obuf + a->otype->true_lb;
        } else if ((in_tmp = malloc((size_t)dbytes)) != NULL) {
            pm_type_pack(a->obuf, a->ocount, a->otype, 0, in_tmp, (size_t)tbytes);
            if (a->kind == PM_RMA_CAS)
                pm_type_pack(a->cbuf, a->ocount, a->otype, 0, in_tmp + tbytes, (size_t)tbytes);
            in = in_tmp;
        }
    }
    if (pm_rma_fetches(a->kind)) { /* the reply lands in place when it can */
        rlen = a->kind == PM_RMA_CAS ? (size_t)a->ttype->size : (size_t)tbytes;
        if (pm_rma_contiguous(a->rtype))
            out = (char *)a->rbuf + a->rtype->true_lb;
        else
            out = out_tmp = malloc(rlen ? rlen : 1);
    }
    int rc = (dbytes && !in) || (rlen && !out) ? MPI_ERR_NO_MEM
                                               : pm_rma_apply_direct(w, a->target, &h, lay, in,
                                                                     out);
    if (rc == MPI_SUCCESS && out_tmp)
        pm_type_unpack(out_tmp, rlen, a->rbuf, a->rcount, a->rtype, 0);
    free(in_tmp);
    free(out_tmp);
    free(lay);
    if (rc != MPI_SUCCESS)
        return pm_win_error(win, rc, "%s: on rank %d's memory: %s", a->fn, a->target,
                            rc == MPI_ERR_NO_MEM ? "out of memory"
                            : rc == MPI_ERR_OP   ? "the operation does not apply to the type"
                                                 : "a process of the window failed");
    return pm_rma_nothing_to_do(win, w, a->fn, request);
}

/* The end of issuing `o`: the error of what was posted noted, the MPI
 * request handed out, our hold on `o` dropped (which may finish it and
 * free it); raises what failed ("<fn>: <what> rank <t> failed: ..."). */
int pm_rma_issue_end(MPI_Win win, struct rma_op *o, struct pm_request *r, MPI_Request *request,
                     int prc, const struct rma_args *a, const char *what)
{
    if (prc != PROUST_OK)
        o->err = pm_error_from_proust(prc);
    int err = o->err;
    if (request)
        *request = r->handle;
    pm_rma_op_part_done(o); /* may finish it (and free o) */
    if (prc != PROUST_OK)
        return pm_win_error(win, err, "%s: %s rank %d failed: %s", a->fn, what, a->target,
                            proust_strerror(prc));
    return MPI_SUCCESS;
}

static int issue(MPI_Win win, struct pm_win *w, const struct rma_args *a, MPI_Request *request)
{
    int world = pm_comm_peer(w->comm, a->target);
    uint64_t nb = 0;
    int64_t lo = 0, hi = 0;
    int64_t *lay = target_layout(a->ttype, a->tcount, &nb, &lo, &hi);
    if (!lay && nb)
        return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
    uint64_t tbytes = (uint64_t)(a->tcount * a->ttype->size);
    int64_t disp;
    bool wild = __builtin_mul_overflow((int64_t)a->disp, (int64_t)w->disp_units[a->target], &disp);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes && wild) {
        free(lay);
        return pm_win_error(win, MPI_ERR_RMA_RANGE,
                            "%s: displacement %td times rank %d's unit %td is past any window",
                            a->fn, a->disp, a->target, w->disp_units[a->target]);
    }
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC && tbytes &&
        (disp + lo < 0 || disp + hi > (int64_t)w->sizes[a->target])) {
        free(lay);
        return pm_win_error(win, MPI_ERR_RMA_RANGE,
                            "%s: bytes [%lld, %lld) are outside the %td-byte window of rank %d",
                            a->fn, (long long)(disp + lo), (long long)(disp + hi),
                            w->sizes[a->target], a->target);
    }
    /* offsets from the lowest byte touched: the target checks them as unsigned */
    for (uint64_t i = 0; i < nb; i++)
        lay[2 * i] -= lo;
    uint64_t dbytes = pm_rma_data_bytes(a->kind, a->op ? PM_OPI(a->op) : 0, tbytes);
    if (w->direct)
        return issue_direct(win, w, a, request, lay, nb, (uint64_t)(disp + lo), tbytes, dbytes);
    if ((a->kind == PM_RMA_PUT || a->kind == PM_RMA_GET) && pm_rma_nic_pays(w, a->target, tbytes) &&
        nb <= PM_NIC_MAX_BLOCKS)
        return pm_rma_issue_nic(win, w, a, request, lay, nb, (uint64_t)(disp + lo), tbytes);
    if (a->kind >= PM_RMA_ACC && w->nic_acc_types &&
        pm_rma_nic_atomic(w, a, lay, nb, (uint64_t)(disp + lo)))
        return pm_rma_issue_nic_atomic(win, w, a, request, lay, nb, (uint64_t)(disp + lo),
                                       tbytes);
    uint64_t lay_bytes = nb * 16;
    bool follow = sizeof(struct pm_rma_hdr) + lay_bytes + dbytes > PM_RMA_HDR_MAX;
    size_t msg_len = sizeof(struct pm_rma_hdr) + (follow ? 0 : lay_bytes + dbytes);
    struct rma_op *o = malloc(sizeof *o + msg_len);
    if (!o) {
        free(lay);
        return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
    }
    memset(o, 0, sizeof *o);
    o->w = w;
    o->target = a->target;
    atomic_init(&o->parts, 1); /* ours until everything is posted */
    struct pm_rma_hdr *h = (struct pm_rma_hdr *)o->msg;
    *h = (struct pm_rma_hdr){
        .kind = (uint8_t)a->kind,
        .flags = follow ? PM_RMA_F_FOLLOW : 0,
        .op = (uint8_t)(a->op ? PM_OPI(a->op) : 0),
        .basic = (uint16_t)(a->kind >= PM_RMA_ACC ? a->ttype->basic : 0),
        .id = atomic_fetch_add(&w->next_id, 1) & PM_RMA_ID_MASK,
        .epoch = w->epoch,
        .disp = (uint64_t)(disp + lo),
        .nblocks = nb,
        .bytes = tbytes,
    };
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        h->disp = (uint64_t)(a->disp + lo); /* an address, unit 1 */
    /* Where the data comes from: the user's buffer, or packed. */
    char *payload = follow ? NULL : o->msg + sizeof *h + lay_bytes;
    const void *direct = NULL;
    if (dbytes) {
        bool pack = !pm_rma_contiguous(a->otype) || !follow || nb || a->kind == PM_RMA_CAS;
        if (pack) {
            char *dst = payload;
            if (follow) {
                o->send_tmp = malloc((size_t)(lay_bytes + dbytes));
                if (!o->send_tmp) {
                    free(o);
                    free(lay);
                    return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
                }
                memcpy(o->send_tmp, lay, (size_t)lay_bytes);
                dst = (char *)o->send_tmp + lay_bytes;
            }
            pm_type_pack(a->obuf, a->ocount, a->otype, 0, dst, (size_t)tbytes);
            if (a->kind == PM_RMA_CAS)
                pm_type_pack(a->cbuf, a->ocount, a->otype, 0, dst + tbytes, (size_t)tbytes);
        } else {
            direct = (const char *)a->obuf + a->otype->true_lb;
        }
    } else if (follow && lay_bytes) {
        o->send_tmp = malloc((size_t)lay_bytes);
        if (!o->send_tmp) {
            free(o);
            free(lay);
            return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
        }
        memcpy(o->send_tmp, lay, (size_t)lay_bytes);
    }
    if (!follow && lay_bytes)
        memcpy(o->msg + sizeof *h, lay, (size_t)lay_bytes);
    free(lay);
    struct pm_request *r = NULL;
    if (request) {
        r = pm_request_new(PM_REQ_ASYNC, w->comm);
        if (!r) {
            free(o->send_tmp);
            free(o);
            return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
        }
        o->mreq = r;
    }
    atomic_fetch_add_explicit(&w->pending[a->target], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&w->sent[a->target], 1, memory_order_relaxed);
    int prc = PROUST_OK;
    /* The reply's receive first: it must be there before the target answers. */
    if (pm_rma_fetches(a->kind)) {
        o->rlen = a->kind == PM_RMA_CAS ? (size_t)a->ttype->size : (size_t)tbytes;
        void *land = (char *)a->rbuf + a->rtype->true_lb;
        if (!pm_rma_contiguous(a->rtype) && o->rlen) {
            o->rtmp = malloc(o->rlen);
            o->ubuf = a->rbuf;
            o->ucount = a->rcount;
            o->utype = a->rtype;
            pm_type_retain(a->rtype);
            land = o->rtmp;
            if (!o->rtmp)
                prc = PROUST_ERR_NOMEM;
        }
        proust_request_t *rq = NULL;
        proust_tag_t tag = w->comm->tag_pt2pt | ((proust_tag_t)a->target << PM_TAG_BITS) |
                           PM_RMA_TAG_RESP | h->id;
        if (prc == PROUST_OK)
            prc = proust_irecv(pm_session, land, o->rlen, world, tag, PROUST_TAG_MASK_FULL, &rq);
        if (prc == PROUST_OK) {
            atomic_fetch_add(&o->parts, 1);
            pm_rma_track(o, rq, reply_done);
        }
    }
    proust_tag_t base = w->comm->tag_pt2pt | w->comm->tag_src;
    if (prc == PROUST_OK &&
        proust_try_send(pm_session, o->msg, msg_len, world, base | PM_RMA_TAG_HDR) != PROUST_OK) {
        proust_request_t *sq = NULL;
        prc = proust_isend(pm_session, o->msg, msg_len, world, base | PM_RMA_TAG_HDR, &sq);
        if (prc == PROUST_OK) {
            atomic_fetch_add(&o->parts, 1);
            pm_rma_track(o, sq, pm_rma_send_done);
        }
    }
    if (prc == PROUST_OK && follow) {
        const void *src = direct ? direct : o->send_tmp;
        size_t len = direct ? (size_t)tbytes : (size_t)(lay_bytes + dbytes);
        proust_request_t *dq = NULL;
        prc = proust_isend(pm_session, src, len, world, base | PM_RMA_TAG_DATA, &dq);
        if (prc == PROUST_OK) {
            atomic_fetch_add(&o->parts, 1);
            pm_rma_track(o, dq, pm_rma_send_done);
        }
    }
    /* counted once its header is posted: a flush sent after this sees it.
     * An operation with a reply (get, the fetching accumulates) is done at
     * the target when its reply lands, which a flush waits for locally:
     * it needs no round trip of its own. */
    if (!pm_rma_fetches(a->kind))
        atomic_fetch_add_explicit(&w->unflushed[a->target], 1, memory_order_release);
    return pm_rma_issue_end(win, o, r, request, prc, a, "sending to");
}

/* For an operation with nothing to do: a request already complete. */
int pm_rma_nothing_to_do(MPI_Win win, struct pm_win *w, const char *fn, MPI_Request *request)
{
    if (request) {
        struct pm_request *r = pm_request_new(PM_REQ_DONE, w->comm);
        if (!r)
            return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        atomic_store(&r->done, 1);
        *request = r->handle;
    }
    return MPI_SUCCESS;
}

/* Where `tcount` elements of the predefined contiguous type `tdt` go on
 * a shared-memory window, in an open epoch and within the target's window
 * (*bytes: their size); NULL when anything else applies. */
static char *direct_target(struct pm_win *w, const struct rma_args *a, MPI_Datatype tdt,
                           MPI_Count tcount, uint64_t *bytes)
{
    int64_t tsz = pm_type_fast_size(tdt);
    uint64_t at;
    if (!w->direct || tsz <= 0 || tcount < 0 || a->target < 0 || a->target >= w->size ||
        a->disp < 0 || !in_epoch(w, a->target) ||
        __builtin_mul_overflow((uint64_t)tcount, (uint64_t)tsz, bytes) ||
        __builtin_mul_overflow((uint64_t)a->disp, (uint64_t)w->disp_units[a->target], &at) ||
        at + *bytes < at || at + *bytes > (uint64_t)w->sizes[a->target])
        return NULL;
    return pm_win_shm_addr(w, a->target, at);
}

/* A put or get of predefined contiguous types on a shared-memory window,
 * as direct_target takes it: one copy, none of the general path's checks
 * and layouts (osu_put_bw's loop is 64 of them per flush). False when
 * anything else applies: the general path decides. */
static bool direct_copy(struct pm_win *w, const struct rma_args *a, MPI_Datatype ldt,
                        MPI_Count lcount, MPI_Datatype tdt, MPI_Count tcount)
{
    int64_t lsz = pm_type_fast_size(ldt);
    uint64_t bytes, lbytes;
    char *t = direct_target(w, a, tdt, tcount, &bytes);
    if (!t || lsz <= 0 || lcount < 0 ||
        __builtin_mul_overflow((uint64_t)lcount, (uint64_t)lsz, &lbytes) || lbytes != bytes)
        return false;
    if (a->kind == PM_RMA_PUT)
        proust_copy(t, a->obuf, (size_t)bytes);
    else
        proust_copy(a->rbuf, t, (size_t)bytes);
    return true;
}

/* An accumulate or fetch-and-op of one predefined type on every side (and
 * a predefined operation that applies to it), as direct_target takes it:
 * under the target's lock word, the operation's kernel on the target's
 * memory (osu_acc_latency, osu_fop_latency). False otherwise. */
static bool direct_acc(struct pm_win *w, const struct rma_args *a, MPI_Datatype odt,
                       MPI_Count ocount, MPI_Datatype rdt, MPI_Count rcount, MPI_Datatype tdt,
                       MPI_Count tcount)
{
    bool fetch = a->kind == PM_RMA_GACC, noop = a->op == MPI_NO_OP;
    uint64_t bytes;
    char *t = direct_target(w, a, tdt, tcount, &bytes);
    if (!t || (noop ? !fetch : odt != tdt || ocount != tcount) ||
        (fetch && (rdt != tdt || rcount != tcount)) ||
        (a->op != MPI_REPLACE && !noop && !pm_op_predef_applies(a->op, tdt)) ||
        pm_rma_acc_lock(w, a->target) != MPI_SUCCESS)
        return false;
    if (fetch)
        memcpy(a->rbuf, t, (size_t)bytes);
    if (a->op == MPI_REPLACE)
        memcpy(t, a->obuf, (size_t)bytes);
    else if (!noop)
        pm_op_apply(a->op, a->obuf, t, tcount, tdt);
    pm_rma_acc_unlock(w, a->target);
    return true;
}

/* Validate and issue `a`; MPI_PROC_NULL, and an operation moving no byte,
 * give a request already complete. */
static int rma_start(MPI_Win win, struct rma_args *a, MPI_Datatype odt, MPI_Count ocount,
                     MPI_Datatype rdt, MPI_Count rcount, MPI_Datatype tdt, MPI_Count tcount,
                     MPI_Request *request)
{
    PM_CHECK_INIT(a->fn);
    PM_GET_WIN(w, win, a->fn);
    if (!request && (a->kind == PM_RMA_PUT || a->kind == PM_RMA_GET) &&
        direct_copy(w, a, a->kind == PM_RMA_PUT ? odt : rdt,
                    a->kind == PM_RMA_PUT ? ocount : rcount, tdt, tcount))
        return MPI_SUCCESS;
    if (!request && (a->kind == PM_RMA_ACC || a->kind == PM_RMA_GACC) &&
        direct_acc(w, a, odt, ocount, rdt, rcount, tdt, tcount))
        return MPI_SUCCESS;
    if (request)
        *request = MPI_REQUEST_NULL;
    int rc;
    if (odt != MPI_DATATYPE_NULL || a->kind != PM_RMA_GACC) {
        if ((rc = check_type(win, a->fn, "origin", odt, ocount, &a->otype)) != MPI_SUCCESS)
            return rc;
    }
    if (rdt != MPI_DATATYPE_NULL &&
        (rc = check_type(win, a->fn, "result", rdt, rcount, &a->rtype)) != MPI_SUCCESS)
        return rc;
    if ((rc = check_type(win, a->fn, "target", tdt, tcount, &a->ttype)) != MPI_SUCCESS)
        return rc;
    a->ocount = ocount;
    a->rcount = rcount;
    a->tcount = tcount;
    if (a->target == MPI_PROC_NULL)
        return pm_rma_nothing_to_do(win, w, a->fn, request);
    if (a->target < 0 || a->target >= w->size)
        return pm_win_error(win, MPI_ERR_RANK, "%s: invalid target rank %d (window of %d)",
                            a->fn, a->target, w->size);
    if (!in_epoch(w, a->target))
        return pm_win_error(win, MPI_ERR_RMA_SYNC,
                            "%s: no access epoch to rank %d is open (fence, lock or start)",
                            a->fn, a->target);
    if (request && !w->lock_all && !w->locked[a->target])
        return pm_win_error(win, MPI_ERR_RMA_SYNC,
                            "%s: request-based operations need a passive target epoch (lock "
                            "or lock_all) on rank %d (MPI-3.1 §11.3.5)", a->fn, a->target);
    if (a->disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return pm_win_error(win, MPI_ERR_DISP, "%s: negative target displacement %td", a->fn,
                            a->disp);
    MPI_Count tbytes = tcount * a->ttype->size;
    const struct pm_datatype *data = a->kind == PM_RMA_GET ? a->rtype : a->otype;
    MPI_Count dcount = a->kind == PM_RMA_GET ? rcount : ocount;
    if (data && (a->kind != PM_RMA_GACC || a->op != MPI_NO_OP) &&
        dcount * data->size != tbytes)
        return pm_win_error(win, MPI_ERR_TYPE,
                            "%s: the origin holds %lld bytes but the target %lld", a->fn,
                            (long long)(dcount * data->size), (long long)tbytes);
    if (a->rtype && a->kind != PM_RMA_GET && rcount * a->rtype->size != tbytes)
        return pm_win_error(win, MPI_ERR_TYPE,
                            "%s: the result buffer holds %lld bytes but the target %lld", a->fn,
                            (long long)(rcount * a->rtype->size), (long long)tbytes);
    if (a->kind >= PM_RMA_ACC && (rc = check_acc(win, a, tbytes > 0)) != MPI_SUCCESS)
        return rc;
    if (tbytes == 0)
        return pm_rma_nothing_to_do(win, w, a->fn, request);
    if (a->kind == PM_RMA_GACC && a->op == MPI_NO_OP)
        a->otype = NULL;
    return issue(win, w, a, request);
}

/* ---- API ------------------------------------------------------------------------ */

static int rput(const char *fn, const void *origin_addr, MPI_Count origin_count,
                MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    struct rma_args a = {.fn = fn, .kind = PM_RMA_PUT, .obuf = origin_addr,
                         .target = target_rank, .disp = target_disp};
    return rma_start(win, &a, origin_datatype, origin_count, MPI_DATATYPE_NULL, 0,
                     target_datatype, target_count, request);
}

static int rget(const char *fn, void *origin_addr, MPI_Count origin_count,
                MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request)
{
    struct rma_args a = {.fn = fn, .kind = PM_RMA_GET, .rbuf = origin_addr,
                         .target = target_rank, .disp = target_disp};
    return rma_start(win, &a, origin_datatype, origin_count, origin_datatype, origin_count,
                     target_datatype, target_count, request);
}

static int raccumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                       MPI_Win win, MPI_Request *request)
{
    struct rma_args a = {.fn = fn, .kind = PM_RMA_ACC, .obuf = origin_addr,
                         .target = target_rank, .disp = target_disp, .op = op};
    return rma_start(win, &a, origin_datatype, origin_count, MPI_DATATYPE_NULL, 0,
                     target_datatype, target_count, request);
}

static int rget_accumulate(const char *fn, const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr,
                           MPI_Count result_count, MPI_Datatype result_datatype,
                           int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                           MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                           MPI_Request *request)
{
    struct rma_args a = {.fn = fn, .kind = PM_RMA_GACC, .obuf = origin_addr,
                         .rbuf = result_addr, .target = target_rank, .disp = target_disp,
                         .op = op};
    return rma_start(win, &a, op == MPI_NO_OP ? MPI_DATATYPE_NULL : origin_datatype,
                     origin_count, result_datatype, result_count, target_datatype,
                     target_count, request);
}

/* The request-based forms refuse a NULL request before anything else. */
#define PM_RMA_REQUEST(fn, win, request)                                                      \
    do {                                                                                      \
        if (!(request))                                                                       \
            return pm_win_error(win, MPI_ERR_ARG, "%s: request is NULL", fn);                 \
    } while (0)

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_RMA_API(SUF, CT)                                                                   \
    int PMPI_Put##SUF(const void *origin_addr, CT origin_count, MPI_Datatype origin_datatype, \
                      int target_rank, MPI_Aint target_disp, CT target_count,                 \
                      MPI_Datatype target_datatype, MPI_Win win)                              \
    {                                                                                         \
        return rput("MPI_Put" #SUF, origin_addr, origin_count, origin_datatype, target_rank,  \
                    target_disp, target_count, target_datatype, win, NULL);                   \
    }                                                                                         \
    PM_WEAK(Put##SUF)                                                                         \
                                                                                              \
    int PMPI_Rput##SUF(const void *origin_addr, CT origin_count,                              \
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,   \
                       CT target_count, MPI_Datatype target_datatype, MPI_Win win,            \
                       MPI_Request *request)                                                  \
    {                                                                                         \
        PM_RMA_REQUEST("MPI_Rput" #SUF, win, request);                                          \
        return rput("MPI_Rput" #SUF, origin_addr, origin_count, origin_datatype, target_rank, \
                    target_disp, target_count, target_datatype, win, request);                \
    }                                                                                         \
    PM_WEAK(Rput##SUF)                                                                        \
                                                                                              \
    int PMPI_Get##SUF(void *origin_addr, CT origin_count, MPI_Datatype origin_datatype,       \
                      int target_rank, MPI_Aint target_disp, CT target_count,                 \
                      MPI_Datatype target_datatype, MPI_Win win)                              \
    {                                                                                         \
        return rget("MPI_Get" #SUF, origin_addr, origin_count, origin_datatype, target_rank,  \
                    target_disp, target_count, target_datatype, win, NULL);                   \
    }                                                                                         \
    PM_WEAK(Get##SUF)                                                                         \
                                                                                              \
    int PMPI_Rget##SUF(void *origin_addr, CT origin_count, MPI_Datatype origin_datatype,      \
                       int target_rank, MPI_Aint target_disp, CT target_count,                \
                       MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)       \
    {                                                                                         \
        PM_RMA_REQUEST("MPI_Rget" #SUF, win, request);                                          \
        return rget("MPI_Rget" #SUF, origin_addr, origin_count, origin_datatype, target_rank, \
                    target_disp, target_count, target_datatype, win, request);                \
    }                                                                                         \
    PM_WEAK(Rget##SUF)                                                                        \
                                                                                              \
    int PMPI_Accumulate##SUF(const void *origin_addr, CT origin_count,                        \
                             MPI_Datatype origin_datatype, int target_rank,                   \
                             MPI_Aint target_disp, CT target_count,                           \
                             MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)            \
    {                                                                                         \
        return raccumulate("MPI_Accumulate" #SUF, origin_addr, origin_count, origin_datatype, \
                           target_rank, target_disp, target_count, target_datatype, op, win,  \
                           NULL);                                                             \
    }                                                                                         \
    PM_WEAK(Accumulate##SUF)                                                                  \
                                                                                              \
    int PMPI_Raccumulate##SUF(const void *origin_addr, CT origin_count,                       \
                              MPI_Datatype origin_datatype, int target_rank,                  \
                              MPI_Aint target_disp, CT target_count,                          \
                              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,           \
                              MPI_Request *request)                                           \
    {                                                                                         \
        PM_RMA_REQUEST("MPI_Raccumulate" #SUF, win, request);                                   \
        return raccumulate("MPI_Raccumulate" #SUF, origin_addr, origin_count,                 \
                           origin_datatype, target_rank, target_disp, target_count,           \
                           target_datatype, op, win, request);                                \
    }                                                                                         \
    PM_WEAK(Raccumulate##SUF)                                                                 \
                                                                                              \
    int PMPI_Get_accumulate##SUF(const void *origin_addr, CT origin_count,                    \
                                 MPI_Datatype origin_datatype, void *result_addr,             \
                                 CT result_count, MPI_Datatype result_datatype,               \
                                 int target_rank, MPI_Aint target_disp, CT target_count,      \
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)        \
    {                                                                                         \
        return rget_accumulate("MPI_Get_accumulate" #SUF, origin_addr, origin_count,          \
                               origin_datatype, result_addr, result_count, result_datatype,   \
                               target_rank, target_disp, target_count, target_datatype, op,   \
                               win, NULL);                                                    \
    }                                                                                         \
    PM_WEAK(Get_accumulate##SUF)                                                              \
                                                                                              \
    int PMPI_Rget_accumulate##SUF(const void *origin_addr, CT origin_count,                   \
                                  MPI_Datatype origin_datatype, void *result_addr,            \
                                  CT result_count, MPI_Datatype result_datatype,              \
                                  int target_rank, MPI_Aint target_disp, CT target_count,     \
                                  MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,       \
                                  MPI_Request *request)                                       \
    {                                                                                         \
        PM_RMA_REQUEST("MPI_Rget_accumulate" #SUF, win, request);                               \
        return rget_accumulate("MPI_Rget_accumulate" #SUF, origin_addr, origin_count,         \
                               origin_datatype, result_addr, result_count, result_datatype,   \
                               target_rank, target_disp, target_count, target_datatype, op,   \
                               win, request);                                                 \
    }                                                                                         \
    PM_WEAK(Rget_accumulate##SUF)

PM_RMA_API(, int)
PM_RMA_API(_c, MPI_Count)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    struct rma_args a = {.fn = "MPI_Fetch_and_op", .kind = PM_RMA_GACC, .obuf = origin_addr,
                         .rbuf = result_addr, .target = target_rank, .disp = target_disp,
                         .op = op};
    struct pm_datatype *t = pm_type_get(datatype);
    if (t && !t->predefined) /* one predefined element (MPI-3.1 §11.3.4) */
        return pm_win_error(win, MPI_ERR_TYPE, "MPI_Fetch_and_op: %s is not a predefined type",
                            t->name[0] ? t->name : "the datatype");
    return rma_start(win, &a, op == MPI_NO_OP ? MPI_DATATYPE_NULL : datatype, 1, datatype, 1,
                     datatype, 1, NULL);
}
PM_WEAK(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win)
{
    struct rma_args a = {.fn = "MPI_Compare_and_swap", .kind = PM_RMA_CAS, .obuf = origin_addr,
                         .cbuf = compare_addr, .rbuf = result_addr, .target = target_rank,
                         .disp = target_disp, .op = MPI_REPLACE};
    struct pm_datatype *t = pm_type_get(datatype);
    /* integer, logical or byte elements only (MPI-3.1 §11.3.4) */
    if (t && (!t->predefined || t->basic <= 0 ||
              !(pm_op_types[t->basic].cls & (PM_TC_CINT | PM_TC_FINT | PM_TC_LOGICAL | PM_TC_BYTE))))
        return pm_win_error(win, MPI_ERR_TYPE,
                            "MPI_Compare_and_swap: %s is not an integer, logical or byte type",
                            t->name);
    return rma_start(win, &a, datatype, 1, datatype, 1, datatype, 1, NULL);
}
PM_WEAK(Compare_and_swap)

void pm_rma_wait_local(struct pm_win *w, int target)
{
    int lo = target < 0 ? 0 : target, hi = target < 0 ? w->size : target + 1;
    for (int r = lo; r < hi; r++) {
        unsigned idle = 0;
        while (atomic_load_explicit(&w->pending[r], memory_order_acquire) > 0) {
            proust_progress(pm_session);
            pm_p2p_backoff(&idle);
        }
    }
}
