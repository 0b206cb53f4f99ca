/*
 * coll_allreduce.c — MPI_Allreduce and MPI_Iallreduce.
 *
 * Intracommunicator. The ranks above the largest power of two (pof2) are
 * folded in first: even rank 2i (i < rem) hands its vector to 2i+1, which
 * combines "2i op 2i+1" and stands for both; at the end 2i+1 hands the
 * result back. 3 to 8 ranks and a few hundred bytes, every rank of the job
 * on shared memory: every vector to every rank in one round instead
 * (allreduce_linear; allreduce_small_linear on the blocking fast path).
 * Among the pof2 participants (whose order follows the ranks'):
 *  - small data or non-commutative operation: recursive doubling — at step
 *    2^k exchange the whole vector with participant p ^ 2^k and combine,
 *    the lower participant's data first;
 *  - large data, commutative operation (Rabenseifner): reduce-scatter by
 *    recursive halving, then allgather by recursive doubling.
 * The result is built in recvbuf. The blocking call runs the steps directly
 * (coll_algo.h: no allocation on the small path), the nonblocking one as a
 * schedule.
 * Intercommunicator: each group reduces to its rank 0, the leaders swap
 * their results, and each broadcasts the other group's in its group.
 */
#include <string.h>

#include "coll_algo.h"

static int allreduce_doubling(struct pm_cx *cx, void *rbuf, void *tmp, MPI_Count count,
                              MPI_Datatype dt, MPI_Op op, bool commute, int rank, int newrank,
                              int pof2, int rem)
{
    for (int m = 1; m < pof2; m <<= 1) {
        int peer = pm_part_rank(newrank ^ m, rem);
        pm_cx_recv(cx, tmp, count, dt, peer);
        pm_cx_send(cx, rbuf, count, dt, peer);
        pm_cx_fence(cx);
        if (commute || peer < rank) {
            pm_cx_reduce(cx, tmp, rbuf, count, dt, op); /* theirs op mine */
        } else {
            pm_cx_reduce(cx, rbuf, tmp, count, dt, op); /* mine op theirs */
            pm_cx_copy(cx, tmp, count, dt, rbuf, count, dt);
        }
    }
    return cx->err;
}

/* 3 to PM_COLL_ONE_ROUND_RANKS ranks, where every rank of the job reaches
 * every other through shared memory: every vector to every rank in one
 * round, folded in rank order (v0 op (v1 op ... vn-1)), as the blocking
 * fast path does (allreduce_small_linear) — for the nonblocking call, any
 * type and operation, and the sizes that are not powers of two (the fold-in
 * of the ranks above pof2 costs two more rounds). 8 ranks on 2 cores,
 * Iallreduce 4-512 B: 20-21.5 -> 16.3-18.9 us (Open MPI 21.9-27.3), 1 KiB
 * alike; 3 ranks, Allreduce 4 B - 1 KiB 4.1-4.7 -> 2.8-3.2 (Open MPI
 * 3.8-7.4): medians of 5. */
/* (one bound for every size of communicator: ranks whose counts disagree,
 * an erroneous program, should not run different algorithms for it) */
#define ALLREDUCE_SCHED_LINEAR_MAX 1024
static int allreduce_linear(struct pm_cx *cx, const void *in, void *rbuf, MPI_Count count,
                            MPI_Datatype dt, MPI_Op op, int rank, int size)
{
    MPI_Aint ext = pm_type_get(dt)->extent;
    void *slots = pm_cx_tmp(cx, count * size, dt);
    if (!slots)
        return cx->err;
    for (int k = 1; k < size; k++) {
        int from = (rank - k + size) % size;
        pm_cx_recv(cx, pm_at(slots, (MPI_Aint)(from * count) * ext), count, dt, from);
    }
    for (int k = 1; k < size; k++)
        pm_cx_send(cx, in, count, dt, (rank + k) % size);
    pm_cx_copy(cx, in, count, dt, pm_at(slots, (MPI_Aint)(rank * count) * ext), count, dt);
    pm_cx_fence(cx); /* (the sends from `in` are done: rbuf may be `in`) */
    return pm_alg_fold_slots(cx, slots, size, count, dt, op, rbuf);
}

static int allreduce_intra(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                           MPI_Datatype dt, MPI_Op op, int rank, int size)
{
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (size == 1)
        return in == rbuf ? cx->err : pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
    if (size > 2 && size <= PM_COLL_ONE_ROUND_RANKS && pm_coll_shm_only &&
        count <= ALLREDUCE_SCHED_LINEAR_MAX &&
        count * pm_type_get(dt)->size <= ALLREDUCE_SCHED_LINEAR_MAX)
        return allreduce_linear(cx, in, rbuf, count, dt, op, rank, size);
    int pof2 = pm_pof2_floor(size), rem = size - pof2;
    if (rank < 2 * rem && rank % 2 == 0) { /* folded in: hand over, get the result */
        pm_cx_send(cx, in, count, dt, rank + 1);
        pm_cx_fence(cx);
        return pm_cx_recv(cx, rbuf, count, dt, rank + 1);
    }
    void *tmp = pm_cx_tmp(cx, count, dt);
    if (!tmp)
        return cx->err;
    bool folded = rank < 2 * rem; /* the partner's vector comes in first */
    size_t bytes = (size_t)count * (size_t)pm_type_get(dt)->size;
    bool commute = pm_op_commutative(op);
    bool rabenseifner = commute && bytes >= PM_ALLREDUCE_LARGE && count >= pof2;
    /* Rabenseifner's halving copies only the half it keeps, during its
     * first exchange */
    const void *src = rbuf;
    if (in != rbuf && rabenseifner && !folded)
        src = in;
    else if (in != rbuf)
        pm_cx_copy(cx, in, count, dt, rbuf, count, dt);
    int newrank = rank - rem;
    if (folded) {
        pm_cx_recv(cx, tmp, count, dt, rank - 1);
        pm_cx_fence(cx);
        pm_cx_reduce(cx, tmp, rbuf, count, dt, op); /* rank-1 op rank */
        newrank = rank / 2;
    }
    if (rabenseifner) {
        MPI_Count *cnts = pm_cx_scratch(cx, 2 * (size_t)pof2 * sizeof *cnts);
        if (!cnts)
            return cx->err;
        MPI_Count *disps = cnts + pof2;
        for (int i = 0; i < pof2; i++) {
            cnts[i] = count / pof2 + (i < count % pof2);
            disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
        }
        pm_alg_rs_halving(cx, src, rbuf, tmp, cnts, disps, dt, op, newrank, pof2, rem);
        pm_alg_ag_doubling(cx, rbuf, cnts, disps, dt, newrank, pof2, rem);
    } else {
        allreduce_doubling(cx, rbuf, tmp, count, dt, op, commute, rank, newrank, pof2, rem);
    }
    if (rank < 2 * rem)
        pm_cx_send(cx, rbuf, count, dt, rank - 1);
    return cx->err;
}

static int allreduce_build(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                           MPI_Datatype dt, MPI_Op op)
{
    struct pm_comm *c = cx->c;
    if (!c->is_inter)
        return allreduce_intra(cx, sbuf, rbuf, count, dt, op, c->rank, c->size);
    void *mine = NULL;
    if (c->rank == 0 && !(mine = pm_cx_tmp(cx, count, dt)))
        return cx->err;
    cx->local = true;
    pm_alg_reduce(cx, sbuf, mine, count, dt, op, 0, c->rank, c->size);
    cx->local = false;
    if (c->rank == 0) {
        pm_cx_fence(cx);
        pm_cx_recv(cx, rbuf, count, dt, 0);
        pm_cx_send(cx, mine, count, dt, 0);
        pm_cx_fence(cx);
    }
    cx->local = true;
    pm_alg_bcast(cx, rbuf, count, dt, 0, c->rank, c->size);
    cx->local = false;
    return cx->err;
}

static int allreduce_check(const char *fn, MPI_Comm comm, struct pm_comm **cp, const void *sbuf,
                           void *rbuf, MPI_Count count, MPI_Datatype dt, MPI_Op op)
{
    int rc = pm_coll_check_comm(fn, comm, cp);
    if (rc)
        return rc;
    struct pm_comm *c = *cp;
    if ((rc = pm_coll_check_buf(fn, c, count, dt)))
        return rc;
    if ((rc = pm_coll_check_op(fn, c, op, dt)))
        return rc;
    return pm_coll_check_reduce_bufs(fn, c, sbuf, count, rbuf, count, dt, !c->is_inter, true);
}

/* Latency path: a few hundred bytes of a predefined contiguous type, a
 * predefined commutative operation, a power-of-two intracommunicator.
 * Recursive doubling straight on the engine: no cx state, the partner's
 * vector lands on the stack. Returns -1 when the call does not qualify (the
 * general path then checks the arguments and runs), else an MPI code. */
#define ALLREDUCE_SMALL_MAX 512

/* 4 to PM_COLL_ONE_ROUND_RANKS ranks, ALLREDUCE_LINEAR_MAX bytes: every
 * rank's vector to every other in one round, combined in rank order (v0 op
 * (v1 op ... vn-1)), the same bits everywhere). Recursive doubling waits
 * for a partner at each of its log2 n rounds, each a turn at a cpu on a
 * crowded node (8 ranks on 2 cores, 4-256 B: 17.4-19.8 -> 15.0-16.9 us,
 * Open MPI 16.7-19.0; 4 ranks 3.4-6.7 -> 3.1-5.0, Open MPI 5.4-5.7;
 * medians of 5; 512 B 17.8 -> 16.2, 4 ranks 5.1 -> 4.4, medians of 7).
 * The whole fast path: with the general path's one-round form up to 1 KiB,
 * 3-8 ranks on shared memory have one bound (ALLREDUCE_SCHED_LINEAR_MAX)
 * for every call. `mine` is recvbuf, holding this rank's vector. */
#define ALLREDUCE_LINEAR_MAX ALLREDUCE_SMALL_MAX
static int allreduce_small_linear(struct pm_comm *c, void *mine, size_t bytes, MPI_Count count,
                                  MPI_Datatype dt, MPI_Op op, proust_tag_t stag,
                                  proust_tag_t rtag)
{
    _Alignas(64) unsigned char in[PM_COLL_ONE_ROUND_RANKS][ALLREDUCE_SMALL_MAX];
    proust_request_t *req[PM_COLL_ONE_ROUND_RANKS] = {0};
    proust_status_t st[PM_COLL_ONE_ROUND_RANKS];
    int n = c->size, me = c->rank, rc = PROUST_OK;
    for (int r = 0; r < n && rc == PROUST_OK; r++)
        if (r != me)
            rc = proust_irecv(pm_session, in[r], bytes, pm_comm_peer(c, r), rtag,
                              PM_COLL_RECV_MASK, &req[r]);
    for (int k = 1; k < n && rc == PROUST_OK; k++)
        rc = proust_send(pm_session, mine, bytes, pm_comm_peer(c, (me + k) % n), stag);
    if (rc != PROUST_OK) {
        /* no receive outlives the call: cancelled, or (matched already:
         * a message of at most 256 B that has arrived) completed */
        for (int r = 0; r < n; r++)
            if (req[r]) {
                (void)proust_cancel(req[r]);
                (void)proust_wait(&req[r], NULL);
            }
        return pm_error_from_proust(rc);
    }
    rc = proust_waitall((size_t)n, req, st);
    int err = MPI_SUCCESS;
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        bool stop;
        int e = pm_coll_recv_outcome(rc == PROUST_OK ? PROUST_OK : st[r].error, &st[r], bytes,
                                     &stop);
        if (PM_UNLIKELY(e)) {
            if (stop)
                return e;
            if (!err)
                err = e;
        }
    }
    if (err)
        return err;
    memcpy(in[me], mine, bytes);
    for (int r = n - 2; r >= 0; r--)
        pm_op_apply(op, in[r], in[n - 1], count, dt);
    memcpy(mine, in[n - 1], bytes);
    return MPI_SUCCESS;
}

static int allreduce_small(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    int64_t esize = pm_type_fast_size(dt);
    if (!c || c->is_inter || esize <= 0 || count <= 0 || count > ALLREDUCE_SMALL_MAX ||
        (c->size & (c->size - 1)) || (size_t)count * (size_t)esize > ALLREDUCE_SMALL_MAX ||
        sendbuf == recvbuf || !recvbuf || recvbuf == MPI_IN_PLACE || !pm_coll_op_predef(op, dt))
        return -1;
    size_t bytes = (size_t)count * (size_t)esize;
    uint32_t seq = pm_coll_next_seq(c);
    proust_tag_t stag = c->tag_coll | c->tag_src | seq, rtag = c->tag_coll | seq;
    if (sendbuf != MPI_IN_PLACE)
        memcpy(recvbuf, sendbuf, bytes);
    /* (two ranks: the one exchange below, a send then a receive, no request) */
    if (c->size > 2 && c->size <= PM_COLL_ONE_ROUND_RANKS && bytes <= ALLREDUCE_LINEAR_MAX &&
        pm_coll_shm_only)
        return allreduce_small_linear(c, recvbuf, bytes, count, dt, op, stag, rtag);
    _Alignas(64) unsigned char tmp[ALLREDUCE_SMALL_MAX];
    int err = MPI_SUCCESS;
    for (int m = 1; m < c->size; m <<= 1) {
        int peer = pm_comm_peer(c, c->rank ^ m);
        /* Eager sizes: the send completes at once (or, if the peer's ring is
         * full, while progressing everything), so send then receive. */
        int rc = proust_send(pm_session, recvbuf, bytes, peer,
                             stag | (err ? PM_COLL_FAILED_BIT : 0));
        if (rc != PROUST_OK)
            return pm_error_from_proust(rc);
        proust_status_t ps;
        rc = proust_recv(pm_session, tmp, bytes, peer, rtag, PM_COLL_RECV_MASK, &ps);
        bool stop;
        int e = pm_coll_recv_outcome(rc, &ps, bytes, &stop);
        if (PM_UNLIKELY(e)) {
            if (stop)
                return e;
            if (!err)
                err = e; /* counts differ: go on, so that no rank waits for this one */
            continue;
        }
        pm_op_apply(op, tmp, recvbuf, count, dt); /* commutative: same bits everywhere */
    }
    return err;
}

static int allreduce_blocking(const char *fn, const void *sendbuf, void *recvbuf,
                              MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int fast = allreduce_small(sendbuf, recvbuf, count, datatype, op, comm);
    if (PM_LIKELY(fast == MPI_SUCCESS))
        return MPI_SUCCESS;
    if (fast > 0)
        return pm_error(comm, fast, "%s: failed (count %lld)", fn, count);
    struct pm_comm *c;
    int rc = allreduce_check(fn, comm, &c, sendbuf, recvbuf, count, datatype, op);
    if (rc)
        return rc;
    if (count == 0)
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    allreduce_build(&cx, sendbuf, recvbuf, count, datatype, op);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: failed on rank %d (count %lld)", fn, c->rank, count);
    return MPI_SUCCESS;
}

static int allreduce_nonblocking(const char *fn, const void *sendbuf, void *recvbuf,
                                 MPI_Count count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c;
    int rc = allreduce_check(fn, comm, &c, sendbuf, recvbuf, count, datatype, op);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request(fn, c, request)))
        return rc;
    if (count == 0 && !c->is_inter) /* as the blocking call: nothing to agree on */
        return pm_coll_nothing(request, true);
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (count)
        allreduce_build(&cx, sendbuf, recvbuf, count, datatype, op);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: cannot start the operation", fn);
    return MPI_SUCCESS;
}

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_ALLREDUCE_API(SUF, CT)                                                                 \
    int PMPI_Allreduce##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,  \
                            MPI_Op op, MPI_Comm comm)                                             \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Allreduce" #SUF);                                                      \
        return allreduce_blocking("MPI_Allreduce" #SUF, sendbuf, recvbuf, count, datatype, op,    \
                                  comm);                                                          \
    }                                                                                             \
    PM_WEAK(Allreduce##SUF)                                                                       \
                                                                                                  \
    int PMPI_Iallreduce##SUF(const void *sendbuf, void *recvbuf, CT count,                        \
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,                     \
                             MPI_Request *request)                                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iallreduce" #SUF);                                                     \
        return allreduce_nonblocking("MPI_Iallreduce" #SUF, sendbuf, recvbuf, count, datatype,    \
                                     op, comm, request);                                          \
    }                                                                                             \
    PM_WEAK(Iallreduce##SUF)

PM_ALLREDUCE_API(, int)
PM_ALLREDUCE_API(_c, MPI_Count)
