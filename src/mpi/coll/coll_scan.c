/*
 * coll_scan.c — MPI_Scan, MPI_Exscan and their nonblocking forms
 * (intracommunicators only, MPI-3.1 §5.11).
 *
 * Chain, up to SCAN_CHAIN_MAX ranks: rank r receives the reduction of
 * ranks 0..r-1 from r - 1, combines its own behind it and passes it on.
 * n - 1 hops, but a rank waits only for the one before it, so scans in a
 * row pipeline; on a crowded node each round of recursive doubling waits
 * for partners the scheduler keeps off the cores (8 ranks on 2 cores, 8 B:
 * 20 us a scan, Open MPI's chain 0.5).
 *
 * Recursive doubling, more ranks: `partial` holds the reduction of a block of
 * consecutive ranks around mine. At step 2^k it is swapped with the partner
 * rank ^ 2^k, whose block is adjacent: from a lower partner the incoming
 * block goes in front of both `partial` and the result ("theirs op mine"),
 * from a higher one only behind `partial` ("mine op theirs"), so the order
 * of combination is the rank order and non-commutative operations are
 * right. Exscan's result starts as the first lower block received (rank 0
 * receives none: its recvbuf is left alone, as the standard says).
 */
#include "coll_algo.h"

#define SCAN_CHAIN_MAX 8

/* The chain (above). Exscan in place: recvbuf holds this rank's input,
 * which the incoming prefix overwrites: it is copied aside first. */
static int scan_chain(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                      MPI_Datatype dt, MPI_Op op, bool ex)
{
    int rank = cx->c->rank, size = cx->c->size;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (rank == 0) {
        pm_cx_send(cx, in, count, dt, 1);
        if (!ex && in != rbuf)
            pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
        return cx->err;
    }
    bool last = rank == size - 1;
    if (!ex) { /* rbuf = prefix op mine */
        /* commutative, separate buffers: the prefix straight into rbuf,
         * mine combined into it (no copy, no scratch) */
        bool direct = in != rbuf && pm_op_commutative(op);
        void *tmp = direct ? NULL : pm_cx_tmp(cx, count, dt);
        if (!direct && !tmp)
            return cx->err;
        if (!direct && in != rbuf)
            pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
        pm_cx_recv(cx, direct ? rbuf : tmp, count, dt, rank - 1);
        pm_cx_fence(cx);
        pm_cx_reduce(cx, direct ? in : tmp, rbuf, count, dt, op);
        if (!last)
            pm_cx_send(cx, rbuf, count, dt, rank + 1);
        return cx->err;
    }
    void *tmp = pm_cx_tmp(cx, count, dt);
    if (!tmp)
        return cx->err;
    /* rbuf = prefix; the next rank gets prefix op mine */
    if (!last)
        pm_cx_copy(cx, in, count, dt, tmp, count, dt);
    pm_cx_recv(cx, rbuf, count, dt, rank - 1);
    pm_cx_fence(cx);
    if (!last) {
        pm_cx_reduce(cx, rbuf, tmp, count, dt, op);
        pm_cx_send(cx, tmp, count, dt, rank + 1);
    }
    return cx->err;
}

static int scan_build(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                      MPI_Datatype dt, MPI_Op op, bool ex)
{
    int rank = cx->c->rank, size = cx->c->size;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (size == 1)
        return ex || in == rbuf ? cx->err : pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
    if (size <= SCAN_CHAIN_MAX)
        return scan_chain(cx, sbuf, rbuf, count, dt, op, ex);
    bool commute = pm_op_commutative(op);
    void *partial = pm_cx_tmp(cx, count, dt), *other = pm_cx_tmp(cx, count, dt);
    if (!partial || !other)
        return cx->err;
    pm_cx_copy(cx, in, count, dt, partial, count, dt);
    if (!ex && in != rbuf)
        pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
    bool have = false; /* Exscan: recvbuf holds something */
    for (int m = 1; m < size; m <<= 1) {
        int peer = rank ^ m;
        if (peer >= size)
            continue;
        pm_cx_recv(cx, other, count, dt, peer);
        pm_cx_send(cx, partial, count, dt, peer);
        pm_cx_fence(cx);
        if (peer < rank) {
            if (ex && !have)
                pm_cx_copy(cx, other, count, dt, rbuf, count, dt);
            else
                pm_cx_reduce(cx, other, rbuf, count, dt, op);
            have = true;
            pm_cx_reduce(cx, other, partial, count, dt, op);
        } else if (commute) {
            pm_cx_reduce(cx, other, partial, count, dt, op);
        } else {
            pm_cx_reduce(cx, partial, other, count, dt, op); /* other = partial op other */
            void *t = partial;
            partial = other;
            other = t;
        }
    }
    return cx->err;
}

static int scan_check(const char *fn, MPI_Comm comm, struct pm_comm **cp, const void *sbuf,
                      void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    int rc = pm_coll_check_comm(fn, comm, cp);
    if (rc)
        return rc;
    struct pm_comm *c = *cp;
    if (c->is_inter)
        return pm_error(comm, MPI_ERR_COMM, "%s: not defined on an intercommunicator", fn);
    if ((rc = pm_coll_check_buf(fn, c, count, dt)))
        return rc;
    if ((rc = pm_coll_check_op(fn, c, op, dt)))
        return rc;
    return pm_coll_check_reduce_bufs(fn, c, sbuf, count, rbuf, count, dt, true, true);
}

static int scan_blocking(const char *fn, const void *sbuf, void *rbuf, MPI_Count count,
                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm, bool ex)
{
    struct pm_comm *c;
    int rc = scan_check(fn, comm, &c, sbuf, rbuf, count, dt, op);
    if (rc)
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    scan_build(&cx, sbuf, rbuf, count, dt, op, ex);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: failed on rank %d (count %lld)", fn, c->rank, count);
    return MPI_SUCCESS;
}

static int scan_nonblocking(const char *fn, const void *sbuf, void *rbuf, MPI_Count count,
                            MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *request,
                            bool ex)
{
    struct pm_comm *c;
    int rc = scan_check(fn, comm, &c, sbuf, rbuf, count, dt, op);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request(fn, c, request)))
        return rc;
    if (count == 0) /* as the blocking call */
        return pm_coll_nothing(request, true);
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (count)
        scan_build(&cx, sbuf, rbuf, count, dt, op, ex);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: cannot start the operation", fn);
    return MPI_SUCCESS;
}

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_SCAN_API(SUF, CT)                                                                      \
    int PMPI_Scan##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,       \
                       MPI_Op op, MPI_Comm comm)                                                  \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Scan" #SUF);                                                           \
        return scan_blocking("MPI_Scan" #SUF, sendbuf, recvbuf, count, datatype, op, comm,        \
                             false);                                                              \
    }                                                                                             \
    PM_WEAK(Scan##SUF)                                                                            \
                                                                                                  \
    int PMPI_Exscan##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,     \
                         MPI_Op op, MPI_Comm comm)                                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Exscan" #SUF);                                                         \
        return scan_blocking("MPI_Exscan" #SUF, sendbuf, recvbuf, count, datatype, op, comm,      \
                             true);                                                               \
    }                                                                                             \
    PM_WEAK(Exscan##SUF)                                                                          \
                                                                                                  \
    int PMPI_Iscan##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,      \
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)                           \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iscan" #SUF);                                                          \
        return scan_nonblocking("MPI_Iscan" #SUF, sendbuf, recvbuf, count, datatype, op, comm,    \
                                request, false);                                                  \
    }                                                                                             \
    PM_WEAK(Iscan##SUF)                                                                           \
                                                                                                  \
    int PMPI_Iexscan##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,    \
                          MPI_Op op, MPI_Comm comm, MPI_Request *request)                         \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iexscan" #SUF);                                                        \
        return scan_nonblocking("MPI_Iexscan" #SUF, sendbuf, recvbuf, count, datatype, op, comm,  \
                                request, true);                                                   \
    }                                                                                             \
    PM_WEAK(Iexscan##SUF)

PM_SCAN_API(, int)
PM_SCAN_API(_c, MPI_Count)
