/*
 * coll_reduce.c — MPI_Reduce and MPI_Ireduce.
 *
 * Intracommunicator:
 *  - binomial tree: at step 2^k a rank whose bit k is set sends its partial
 *    result to the rank without that bit, which combines "mine op theirs"
 *    (its ranks come first). For a commutative operation the tree is taken
 *    over ranks relative to the root; otherwise over the ranks themselves,
 *    so every combination is in rank order, and rank 0 sends the result to
 *    the root. Partial results alternate between two buffers (no copies);
 *  - large data, commutative operation, 4 ranks or more (Rabenseifner):
 *    fold the ranks above the largest power of two in, reduce-scatter by
 *    recursive halving, then gather the reduced segments to the root along
 *    a binomial tree.
 * Intercommunicator: the non-root group reduces to its rank 0, which sends
 * the result to the root (MPI_ROOT).
 */
#include "coll_algo.h"

static int reduce_binomial(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                           MPI_Datatype dt, MPI_Op op, int root, int rank, int size,
                           bool commute)
{
    int lrank = commute ? (rank - root + size) % size : rank;
    int shift = commute ? root : 0; /* tree rank -> rank */
    const void *acc = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *bufs[2] = {NULL, NULL};
    if (rank == root && sbuf != MPI_IN_PLACE)
        bufs[0] = rbuf; /* receive straight into the result buffer when we can */
    for (int mask = 1; mask < size; mask <<= 1) {
        if (lrank & mask) {
            pm_cx_send(cx, acc, count, dt, ((lrank & ~mask) + shift) % size);
            break;
        }
        int src = lrank | mask;
        if (src >= size)
            continue;
        int k = acc == bufs[0] ? 1 : 0;
        if (!bufs[k] && !(bufs[k] = pm_cx_tmp(cx, count, dt)))
            return cx->err;
        pm_cx_recv(cx, bufs[k], count, dt, (src + shift) % size);
        pm_cx_fence(cx);
        pm_cx_reduce(cx, acc, bufs[k], count, dt, op); /* bufs[k] = mine op theirs */
        acc = bufs[k];
    }
    if (!commute && root != 0) {
        if (rank == 0) {
            pm_cx_send(cx, acc, count, dt, root);
        } else if (rank == root) {
            pm_cx_fence(cx); /* my own contribution left rbuf first */
            pm_cx_recv(cx, rbuf, count, dt, 0);
        }
    } else if (rank == root && acc != rbuf) {
        pm_cx_copy(cx, acc, count, dt, rbuf, count, dt);
    }
    return cx->err;
}

static int reduce_rabenseifner(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                               MPI_Datatype dt, MPI_Op op, int root, int rank, int size)
{
    int pof2 = pm_pof2_floor(size), rem = size - pof2;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    bool root_out = root < 2 * rem && root % 2 == 0; /* the root is folded in */
    int newroot = root < 2 * rem ? root / 2 : root - rem;
    if (rank < 2 * rem && rank % 2 == 0) {
        pm_cx_send(cx, in, count, dt, rank + 1);
        if (rank == root) {
            pm_cx_fence(cx);
            pm_cx_recv(cx, rbuf, count, dt, rank + 1);
        }
        return cx->err;
    }
    void *res = rank == root ? rbuf : pm_cx_tmp(cx, count, dt);
    void *tmp = pm_cx_tmp(cx, count, dt);
    MPI_Count *cnts = pm_cx_scratch(cx, 2 * (size_t)pof2 * sizeof *cnts);
    if (!res || !tmp || !cnts)
        return cx->err;
    MPI_Count *disps = cnts + pof2;
    for (int i = 0; i < pof2; i++) {
        cnts[i] = count / pof2 + (i < count % pof2);
        disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
    }
    int newrank;
    const void *src = in; /* the halving copies what it keeps */
    if (rank < 2 * rem) {
        if (res != in)
            pm_cx_copy(cx, in, count, dt, res, count, dt);
        pm_cx_recv(cx, tmp, count, dt, rank - 1);
        pm_cx_fence(cx);
        pm_cx_reduce(cx, tmp, res, count, dt, op);
        newrank = rank / 2;
        src = res;
    } else {
        newrank = rank - rem;
    }
    pm_alg_rs_halving(cx, src, res, tmp, cnts, disps, dt, op, newrank, pof2, rem);
    /* binomial gather of the segments toward newroot: at step m the
     * participant whose bit m differs from newroot's sends its window */
    MPI_Aint ext = pm_type_get(dt)->extent;
    for (int m = 1; m < pof2; m <<= 1) {
        int q = newrank ^ m;
        if ((newrank & m) != (newroot & m)) {
            int lo = newrank & ~(m - 1);
            pm_cx_send(cx, pm_at(res, (MPI_Aint)disps[lo] * ext),
                       pm_seg_span(cnts, disps, lo, m), dt, pm_part_rank(q, rem));
            return cx->err;
        }
        int qlo = q & ~(m - 1);
        pm_cx_recv(cx, pm_at(res, (MPI_Aint)disps[qlo] * ext),
                   pm_seg_span(cnts, disps, qlo, m), dt, pm_part_rank(q, rem));
        pm_cx_fence(cx);
    }
    if (root_out)
        pm_cx_send(cx, res, count, dt, root);
    return cx->err;
}

int pm_alg_reduce(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                  MPI_Datatype dt, MPI_Op op, int root, int rank, int size)
{
    if (size == 1) {
        if (sbuf != MPI_IN_PLACE)
            pm_cx_copy(cx, sbuf, count, dt, rbuf, count, dt);
        return cx->err;
    }
    bool commute = pm_op_commutative(op);
    size_t bytes = (size_t)count * (size_t)pm_type_get(dt)->size;
    /* Two participants gain nothing from halving: the exchange goes both
     * ways at once, then half comes back (256 KiB on 2 ranks: 32 us, the
     * binomial tree's one message and one reduce 20 us, Open MPI 21). */
    int pof2 = pm_pof2_floor(size);
    if (commute && bytes >= PM_REDUCE_LARGE && pof2 >= 4 && count >= pof2)
        return reduce_rabenseifner(cx, sbuf, rbuf, count, dt, op, root, rank, size);
    return reduce_binomial(cx, sbuf, rbuf, count, dt, op, root, rank, size, commute);
}

static int reduce_build(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                        MPI_Datatype dt, MPI_Op op, int root)
{
    struct pm_comm *c = cx->c;
    if (!c->is_inter)
        return pm_alg_reduce(cx, sbuf, rbuf, count, dt, op, root, c->rank, c->size);
    if (root == MPI_PROC_NULL)
        return cx->err;
    if (root == MPI_ROOT)
        return pm_cx_recv(cx, rbuf, count, dt, 0);
    void *tmp = NULL;
    if (c->rank == 0 && !(tmp = pm_cx_tmp(cx, count, dt)))
        return cx->err;
    cx->local = true;
    pm_alg_reduce(cx, sbuf, tmp, count, dt, op, 0, c->rank, c->size);
    cx->local = false;
    if (c->rank == 0) {
        pm_cx_fence(cx);
        pm_cx_send(cx, tmp, count, dt, root);
    }
    return cx->err;
}

static int reduce_check(const char *fn, MPI_Comm comm, struct pm_comm **cp, const void *sbuf,
                        void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op, int root)
{
    int rc = pm_coll_check_comm(fn, comm, cp);
    if (rc)
        return rc;
    struct pm_comm *c = *cp;
    if ((rc = pm_coll_check_root(fn, c, root)))
        return rc;
    if (c->is_inter && root == MPI_PROC_NULL)
        return MPI_SUCCESS; /* only root is significant there */
    if ((rc = pm_coll_check_buf(fn, c, count, dt)))
        return rc;
    if ((rc = pm_coll_check_op(fn, c, op, dt)))
        return rc;
    if (c->is_inter) {
        if (root == MPI_ROOT)
            return pm_coll_check_data(fn, c, "recvbuf", rbuf, count, dt);
        return pm_coll_check_reduce_bufs(fn, c, sbuf, count, rbuf, count, dt, false, false);
    }
    bool at_root = root == c->rank;
    return pm_coll_check_reduce_bufs(fn, c, sbuf, count, rbuf, count, dt, at_root, at_root);
}

static int reduce_blocking(const char *fn, const void *sendbuf, void *recvbuf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    struct pm_comm *c;
    int rc = reduce_check(fn, comm, &c, sendbuf, recvbuf, count, datatype, op, root);
    if (rc)
        return rc;
    if (count == 0 && !c->is_inter) /* intercommunicator: see MPI_Bcast */
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    reduce_build(&cx, sendbuf, recvbuf, count, datatype, op, root);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: failed on rank %d (root %d, count %lld)", fn, c->rank,
                        root, count);
    return MPI_SUCCESS;
}

static int reduce_nonblocking(const char *fn, const void *sendbuf, void *recvbuf,
                              MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                              MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c;
    int rc = reduce_check(fn, comm, &c, sendbuf, recvbuf, count, datatype, op, root);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request(fn, c, request)))
        return rc;
    if (count == 0 && !c->is_inter) /* as the blocking call */
        return pm_coll_nothing(request, true);
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (count)
        reduce_build(&cx, sendbuf, recvbuf, count, datatype, op, root);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: cannot start the operation", fn);
    return MPI_SUCCESS;
}

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_REDUCE_API(SUF, CT)                                                                    \
    int PMPI_Reduce##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,     \
                         MPI_Op op, int root, MPI_Comm comm)                                      \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Reduce" #SUF);                                                         \
        return reduce_blocking("MPI_Reduce" #SUF, sendbuf, recvbuf, count, datatype, op, root,    \
                               comm);                                                             \
    }                                                                                             \
    PM_WEAK(Reduce##SUF)                                                                          \
                                                                                                  \
    int PMPI_Ireduce##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,    \
                          MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)               \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ireduce" #SUF);                                                        \
        return reduce_nonblocking("MPI_Ireduce" #SUF, sendbuf, recvbuf, count, datatype, op,      \
                                  root, comm, request);                                           \
    }                                                                                             \
    PM_WEAK(Ireduce##SUF)

PM_REDUCE_API(, int)
PM_REDUCE_API(_c, MPI_Count)
