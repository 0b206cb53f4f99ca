/*
 * coll_reduce_scatter.c — MPI_Reduce_scatter, MPI_Reduce_scatter_block and
 * their nonblocking forms, plus the recursive-halving / recursive-doubling
 * building blocks that Reduce and Allreduce use for large data.
 *
 * Intracommunicator, 3 to 8 ranks and up to 4 KiB, every rank of the job on
 * shared memory: every block straight to its rank, one round (rs_linear).
 * Else, commutative operation: the ranks above the largest
 * power of two (pof2) are folded in (even rank 2i hands its vector to
 * 2i+1), the pof2 participants reduce-scatter by recursive halving — each
 * step exchanges half of the current window with the partner and reduces
 * the half it keeps — and 2i+1 hands rank 2i its block at the end.
 * Non-commutative operation: an ordered reduction to rank 0, then a
 * binomial scatter of the blocks. Intercommunicator: each group reduces its
 * own vector to its rank 0, the two leaders swap results, and each leader
 * scatters the other group's result in its group.
 */
#include "coll_algo.h"

int pm_alg_rs_halving(struct pm_cx *cx, const void *src, void *res, void *tmp,
                      const MPI_Count *cnts, const MPI_Count *disps, MPI_Datatype dt, MPI_Op op,
                      int newrank, int pof2, int rem)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    int lo = 0; /* my window: segments [lo, lo + 2m) */
    if (pof2 == 1 && src != res) {
        MPI_Count total = pm_seg_span(cnts, disps, 0, pof2);
        pm_cx_copy(cx, src, total, dt, res, total, dt);
    }
    for (int m = pof2 >> 1; m > 0; m >>= 1) {
        int q = newrank ^ m, peer = pm_part_rank(q, rem);
        int keep = newrank < q ? lo : lo + m, give = newrank < q ? lo + m : lo;
        MPI_Count kc = pm_seg_span(cnts, disps, keep, m), gc = pm_seg_span(cnts, disps, give, m);
        void *kres = pm_at(res, (MPI_Aint)disps[keep] * ext);
        /* From a separate source (first step), the partner's half lands
         * in res and the source's is combined into it: no copy of the
         * vector into res, no scratch (the op commutes). */
        const void *kin = pm_at(src, (MPI_Aint)disps[keep] * ext);
        void *kto = src != res ? kres : pm_at(tmp, (MPI_Aint)disps[keep] * ext);
        if (kc)
            pm_cx_recv(cx, kto, kc, dt, peer);
        if (gc)
            pm_cx_send(cx, pm_at(src, (MPI_Aint)disps[give] * ext), gc, dt, peer);
        pm_cx_fence(cx);
        if (kc)
            pm_cx_reduce(cx, src != res ? kin : kto, kres, kc, dt, op);
        src = res;
        lo = keep;
    }
    return cx->err;
}

int pm_alg_ag_doubling(struct pm_cx *cx, void *res, const MPI_Count *cnts,
                       const MPI_Count *disps, MPI_Datatype dt, int newrank, int pof2, int rem)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    for (int m = 1; m < pof2; m <<= 1) {
        int q = newrank ^ m, peer = pm_part_rank(q, rem);
        int mine = newrank & ~(m - 1), theirs = q & ~(m - 1);
        MPI_Count rc = pm_seg_span(cnts, disps, theirs, m), sc = pm_seg_span(cnts, disps, mine, m);
        if (rc)
            pm_cx_recv(cx, pm_at(res, (MPI_Aint)disps[theirs] * ext), rc, dt, peer);
        if (sc)
            pm_cx_send(cx, pm_at(res, (MPI_Aint)disps[mine] * ext), sc, dt, peer);
        pm_cx_fence(cx);
    }
    return cx->err;
}

/* Elements of the blocks of ranks [first, first + n) (clipped to size). */
static MPI_Count block_span(const MPI_Count *cnts, const MPI_Count *disps, int first, int n,
                            int size)
{
    if (first + n > size)
        n = size - first;
    return pm_seg_span(cnts, disps, first, n);
}

int pm_alg_scatterv0(struct pm_cx *cx, const void *buf, const MPI_Count *cnts,
                     const MPI_Count *disps, MPI_Datatype dt, void *rbuf, int rank, int size)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    const void *src = buf; /* holds the blocks of my subtree, at their displacements */
    int mask = 1;
    while (mask < size && !(rank & mask))
        mask <<= 1;
    if (rank) {
        int parent = rank - mask;
        if (mask == 1 || rank + 1 == size) { /* a leaf: my block only */
            if (cnts[rank])
                pm_cx_recv(cx, rbuf, cnts[rank], dt, parent);
            return cx->err;
        }
        MPI_Count n = block_span(cnts, disps, rank, mask, size);
        void *sub = pm_cx_tmp(cx, n, dt);
        if (!sub)
            return cx->err;
        if (n)
            pm_cx_recv(cx, sub, n, dt, parent);
        pm_cx_fence(cx);
        src = pm_at(sub, -(MPI_Aint)disps[rank] * ext);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = rank + mask;
        if (child >= size)
            continue;
        MPI_Count n = child + 1 == size || mask == 1 ? cnts[child]
                                                     : block_span(cnts, disps, child, mask, size);
        if (n)
            pm_cx_send(cx, pm_at(src, (MPI_Aint)disps[child] * ext), n, dt, child);
    }
    return pm_cx_copy(cx, pm_at(src, (MPI_Aint)disps[rank] * ext), cnts[rank], dt, rbuf,
                      cnts[rank], dt);
}

int pm_alg_fold_slots(struct pm_cx *cx, void *slots, int n, MPI_Count count, MPI_Datatype dt,
                      MPI_Op op, void *rbuf)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    void *acc = pm_at(slots, (MPI_Aint)((n - 1) * count) * ext);
    for (int r = n - 2; r >= 0; r--)
        pm_cx_reduce(cx, pm_at(slots, (MPI_Aint)(r * count) * ext), acc, count, dt, op);
    return pm_cx_copy(cx, acc, count, dt, rbuf, count, dt);
}

/* Up to PM_COLL_ONE_ROUND_RANKS ranks and RS_LINEAR_MAX bytes of vector,
 * where every rank reaches every other through shared memory
 * (pm_coll_shm_only): each
 * rank sends every other its block in one round and folds the blocks it
 * gets in rank order (v0 op (v1 op ... vn-1)), so a non-commutative
 * operation takes it too. The halving waits for a partner at each of its
 * log2 n rounds, each a turn at a cpu on a crowded node. 8 ranks on 2
 * cores, Reduce_scatter_block 32 B - 4 KiB: 18.4-20.6 -> 11.9-14.3 us,
 * Ireduce_scatter_block 21.1-22.7 -> 16.3-21.9 (Open MPI 15.5-27.5 /
 * 17.2-32.8); 8 KiB and up the halving is ahead again (medians of 5-7). */
#define RS_LINEAR_MAX 4096

static int rs_linear(struct pm_cx *cx, const void *in, void *rbuf, const MPI_Count *cnts,
                     const MPI_Count *disps, MPI_Datatype dt, MPI_Op op, int rank, int size)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    MPI_Count mine = cnts[rank];
    /* a slot per rank for my block; the fold ends in the last one */
    void *slots = mine ? pm_cx_tmp(cx, mine * size, dt) : NULL;
    if (mine && !slots)
        return cx->err;
    for (int k = 1; k < size && mine; k++) {
        int from = (rank - k + size) % size;
        pm_cx_recv(cx, pm_at(slots, (MPI_Aint)(from * mine) * ext), mine, dt, from);
    }
    for (int k = 1; k < size; k++) {
        int to = (rank + k) % size;
        if (cnts[to])
            pm_cx_send(cx, pm_at(in, (MPI_Aint)disps[to] * ext), cnts[to], dt, to);
    }
    if (!mine)
        return cx->err;
    pm_cx_copy(cx, pm_at(in, (MPI_Aint)disps[rank] * ext), mine, dt,
               pm_at(slots, (MPI_Aint)(rank * mine) * ext), mine, dt);
    pm_cx_fence(cx); /* (the sends from `in` are done: rbuf may be `in`) */
    return pm_alg_fold_slots(cx, slots, size, mine, dt, op, rbuf);
}

static int rs_intra(struct pm_cx *cx, const void *sbuf, void *rbuf, const MPI_Count *cnts,
                    const MPI_Count *disps, MPI_Count total, MPI_Datatype dt, MPI_Op op)
{
    int rank = cx->c->rank, size = cx->c->size;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Aint ext = pm_type_get(dt)->extent;
    if (size == 1)
        return in == rbuf ? cx->err : pm_cx_copy(cx, in, cnts[0], dt, rbuf, cnts[0], dt);
    if (size > 2 && size <= PM_COLL_ONE_ROUND_RANKS && pm_coll_shm_only &&
        total <= RS_LINEAR_MAX && total * pm_type_get(dt)->size <= RS_LINEAR_MAX)
        return rs_linear(cx, in, rbuf, cnts, disps, dt, op, rank, size);
    if (!pm_op_commutative(op)) {
        void *red = NULL;
        if (rank == 0 && !(red = pm_cx_tmp(cx, total, dt)))
            return cx->err;
        pm_alg_reduce(cx, in, red, total, dt, op, 0, rank, size);
        pm_cx_fence(cx);
        return pm_alg_scatterv0(cx, red, cnts, disps, dt, rbuf, rank, size);
    }
    if (size == 2 && sbuf != MPI_IN_PLACE) {
        /* The halving's one exchange, straight from the send buffer and
         * into the receive buffer: no copy of the vector, no scratch (4
         * MiB: 1.4 ms -> see PERFORMANCE; MPICH 0.35). Same messages as
         * the halving, which a rank in place takes. */
        int peer = 1 - rank;
        if (cnts[rank]) /* (the halving skips empty halves alike) */
            pm_cx_recv(cx, rbuf, cnts[rank], dt, peer);
        if (cnts[peer])
            pm_cx_send(cx, pm_at(in, (MPI_Aint)disps[peer] * ext), cnts[peer], dt, peer);
        pm_cx_fence(cx);
        return pm_cx_reduce(cx, pm_at(in, (MPI_Aint)disps[rank] * ext), rbuf, cnts[rank], dt, op);
    }
    int pof2 = pm_pof2_floor(size), rem = size - pof2;
    if (rank < 2 * rem && rank % 2 == 0) {
        pm_cx_send(cx, in, total, dt, rank + 1);
        pm_cx_fence(cx);
        return pm_cx_recv(cx, rbuf, cnts[rank], dt, rank + 1);
    }
    void *res = pm_cx_tmp(cx, total, dt), *tmp = pm_cx_tmp(cx, total, dt);
    MPI_Count *nc = pm_cx_scratch(cx, 2 * (size_t)pof2 * sizeof *nc);
    if (!res || !tmp || !nc)
        return cx->err;
    MPI_Count *nd = nc + pof2;
    for (int i = 0; i < pof2; i++) {
        nc[i] = i < rem ? cnts[2 * i] + cnts[2 * i + 1] : cnts[i + rem];
        nd[i] = i < rem ? disps[2 * i] : disps[i + rem];
    }
    int newrank = rank - rem;
    const void *src = in; /* the halving copies what it keeps */
    if (rank < 2 * rem) {
        pm_cx_copy(cx, in, total, dt, res, total, dt);
        pm_cx_recv(cx, tmp, total, dt, rank - 1);
        pm_cx_fence(cx);
        pm_cx_reduce(cx, tmp, res, total, dt, op);
        newrank = rank / 2;
        src = res;
    }
    pm_alg_rs_halving(cx, src, res, tmp, nc, nd, dt, op, newrank, pof2, rem);
    pm_cx_copy(cx, pm_at(res, (MPI_Aint)disps[rank] * ext), cnts[rank], dt, rbuf, cnts[rank], dt);
    if (rank < 2 * rem)
        pm_cx_send(cx, pm_at(res, (MPI_Aint)disps[rank - 1] * ext), cnts[rank - 1], dt, rank - 1);
    return cx->err;
}

static int rs_inter(struct pm_cx *cx, const void *sbuf, void *rbuf, const MPI_Count *cnts,
                    const MPI_Count *disps, MPI_Count total, MPI_Datatype dt, MPI_Op op)
{
    int rank = cx->c->rank, size = cx->c->size;
    void *red = NULL, *other = NULL;
    if (rank == 0 && (!(red = pm_cx_tmp(cx, total, dt)) || !(other = pm_cx_tmp(cx, total, dt))))
        return cx->err;
    cx->local = true;
    pm_alg_reduce(cx, sbuf, red, total, dt, op, 0, rank, size);
    cx->local = false;
    if (rank == 0) {
        pm_cx_fence(cx);
        pm_cx_recv(cx, other, total, dt, 0);
        pm_cx_send(cx, red, total, dt, 0);
    }
    pm_cx_fence(cx);
    cx->local = true;
    pm_alg_scatterv0(cx, other, cnts, disps, dt, rbuf, rank, size);
    cx->local = false;
    return cx->err;
}

/* recvcounts (or `block` for every rank when rcounts is NULL). */
static int rs_build(struct pm_cx *cx, const void *sbuf, void *rbuf, struct pm_counts rcounts,
                    MPI_Count block, MPI_Datatype dt, MPI_Op op)
{
    int n = cx->c->size;
    MPI_Count *cnts = pm_cx_scratch(cx, 2 * (size_t)n * sizeof *cnts);
    if (!cnts)
        return cx->err;
    MPI_Count *disps = cnts + n, total = 0;
    for (int i = 0; i < n; i++) {
        cnts[i] = pm_counts_null(rcounts) ? block : pm_cnt(rcounts, i);
        disps[i] = total;
        total += cnts[i];
    }
    if (!total)
        return cx->err;
    if (cx->c->is_inter)
        return rs_inter(cx, sbuf, rbuf, cnts, disps, total, dt, op);
    return rs_intra(cx, sbuf, rbuf, cnts, disps, total, dt, op);
}

/* Checks in the standard's order; *total is the vector length. */
static int rs_check(const char *fn, MPI_Comm comm, struct pm_comm **cp, const void *sbuf,
                    void *rbuf, bool v, struct pm_counts rcounts, MPI_Count block, MPI_Datatype dt,
                    MPI_Op op, MPI_Count *total)
{
    int rc = pm_coll_check_comm(fn, comm, cp);
    if (rc)
        return rc;
    struct pm_comm *c = *cp;
    MPI_Count sum = 0, mine;
    if (v && pm_counts_null(rcounts))
        return pm_error(comm, MPI_ERR_ARG, "%s: recvcounts is NULL", fn);
    if (v) {
        if ((rc = pm_coll_check_counts(fn, c, "recvcounts", rcounts, c->size, dt, NULL)))
            return rc;
        for (int i = 0; i < c->size; i++)
            if (__builtin_add_overflow(sum, pm_cnt(rcounts, i), &sum))
                return pm_error(comm, MPI_ERR_COUNT, "%s: the recvcounts add up past %lld", fn,
                                (long long)INT64_MAX);
        mine = pm_cnt(rcounts, c->rank);
    } else {
        if (block < 0)
            return pm_error(comm, MPI_ERR_COUNT, "%s: recvcount %lld is negative", fn, block);
        if (__builtin_mul_overflow(block, (MPI_Count)c->size, &sum))
            return pm_error(comm, MPI_ERR_COUNT, "%s: %d blocks of %lld elements overflow", fn,
                            c->size, block);
        mine = block;
    }
    if ((rc = pm_coll_check_buf(fn, c, sum, dt)))
        return rc;
    if ((rc = pm_coll_check_op(fn, c, op, dt)))
        return rc;
    bool in_place = sbuf == MPI_IN_PLACE && !c->is_inter;
    rc = pm_coll_check_reduce_bufs(fn, c, sbuf, sum, rbuf, in_place ? sum : mine, dt,
                                   !c->is_inter, true);
    *total = sum;
    return rc;
}

static int rs_blocking(const char *fn, const void *sbuf, void *rbuf, bool v,
                       struct pm_counts rcounts, MPI_Count block, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm)
{
    struct pm_comm *c;
    MPI_Count total = 0;
    int rc = rs_check(fn, comm, &c, sbuf, rbuf, v, rcounts, block, dt, op, &total);
    if (rc)
        return rc;
    if (!total || (!c->is_inter && pm_type_get(dt)->size == 0)) /* no byte anywhere */
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    rs_build(&cx, sbuf, rbuf, rcounts, block, dt, op);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: failed on rank %d (%lld elements in all)", fn, c->rank,
                        total);
    return MPI_SUCCESS;
}

static int rs_nonblocking(const char *fn, const void *sbuf, void *rbuf, bool v,
                          struct pm_counts rcounts, MPI_Count block, MPI_Datatype dt, MPI_Op op,
                          MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c;
    MPI_Count total = 0;
    int rc = rs_check(fn, comm, &c, sbuf, rbuf, v, rcounts, block, dt, op, &total);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request(fn, c, request)))
        return rc;
    if ((!total || pm_type_get(dt)->size == 0) && !c->is_inter) /* as the blocking call */
        return pm_coll_nothing(request, true);
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    rs_build(&cx, sbuf, rbuf, rcounts, block, dt, op);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: cannot start the operation", fn);
    return MPI_SUCCESS;
}

/* Zero-byte fast path of MPI_Reduce_scatter_block (as pm_coll_zero_ok),
 * with a predefined operation defined on the type. */
static bool rs_zero_ok(MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    struct pm_comm *c;
    return pm_coll_zero_ok(comm, dt, &c) && pm_coll_op_predef(op, dt);
}

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_REDUCE_SCATTER_API(SUF, CT)                                                            \
    int PMPI_Reduce_scatter##SUF(const void *sendbuf, void *recvbuf, const CT recvcounts[],       \
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)                 \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Reduce_scatter" #SUF);                                                 \
        return rs_blocking("MPI_Reduce_scatter" #SUF, sendbuf, recvbuf, true,                     \
                           PM_COUNTS(recvcounts), 0, datatype, op, comm);                         \
    }                                                                                             \
    PM_WEAK(Reduce_scatter##SUF)                                                                  \
                                                                                                  \
    int PMPI_Ireduce_scatter##SUF(const void *sendbuf, void *recvbuf, const CT recvcounts[],      \
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,                \
                                  MPI_Request *request)                                           \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ireduce_scatter" #SUF);                                                \
        return rs_nonblocking("MPI_Ireduce_scatter" #SUF, sendbuf, recvbuf, true,                 \
                              PM_COUNTS(recvcounts), 0, datatype, op, comm, request);             \
    }                                                                                             \
    PM_WEAK(Ireduce_scatter##SUF)                                                                 \
                                                                                                  \
    int PMPI_Reduce_scatter_block##SUF(const void *sendbuf, void *recvbuf, CT recvcount,          \
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)           \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Reduce_scatter_block" #SUF);                                           \
        if (recvcount == 0 && rs_zero_ok(datatype, op, comm))                                     \
            return MPI_SUCCESS;                                                                   \
        return rs_blocking("MPI_Reduce_scatter_block" #SUF, sendbuf, recvbuf, false,              \
                           PM_NO_COUNTS, recvcount, datatype, op, comm);                          \
    }                                                                                             \
    PM_WEAK(Reduce_scatter_block##SUF)                                                            \
                                                                                                  \
    int PMPI_Ireduce_scatter_block##SUF(const void *sendbuf, void *recvbuf, CT recvcount,         \
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,          \
                                        MPI_Request *request)                                     \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ireduce_scatter_block" #SUF);                                          \
        if (request && recvcount == 0 && rs_zero_ok(datatype, op, comm))                          \
            return pm_coll_nothing(request, true);                                                \
        return rs_nonblocking("MPI_Ireduce_scatter_block" #SUF, sendbuf, recvbuf, false,          \
                              PM_NO_COUNTS, recvcount, datatype, op, comm, request);              \
    }                                                                                             \
    PM_WEAK(Ireduce_scatter_block##SUF)

PM_REDUCE_SCATTER_API(, int)
PM_REDUCE_SCATTER_API(_c, MPI_Count)
