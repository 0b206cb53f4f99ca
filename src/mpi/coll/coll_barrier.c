/*
 * coll_barrier.c — MPI_Barrier and MPI_Ibarrier.
 *
 * Intracommunicator, up to PM_COLL_ONE_ROUND_RANKS in a job whose ranks
 * all reach each other through shared memory (pm_coll_shm_only): one
 * round, a zero-byte message from every rank to every other (each rank waits for its turn at
 * a cpu once, not at each of log2(n) rounds: 8 ranks on 2 cores 19.1 ->
 * 13.5 us, Ibarrier 21.4 -> 18.0, Open MPI 14.9 / 18.3; 4 ranks 4.3 ->
 * 3.2, Open MPI 3.7; medians of 5).
 * Larger: log2(n) rounds of zero-byte messages. A power of two
 * pairs rank with rank ^ 2^k in round k (recursive doubling): the pairs of
 * the small allreduces and allgathers and of MPI_Init's agreement, so a
 * node's shm rings (made per pair that talks) serve them all: 128 ranks,
 * 7 rings a rank for a hello world instead of 10. Other sizes:
 * dissemination (round k: to rank + 2^k, from rank - 2^k; ceil(log2 n)
 * rounds). The blocking call runs it directly (coll_algo.h), the
 * nonblocking one as a schedule.
 * Intercommunicator: a barrier in each local group, the two leaders (local
 * rank 0) exchange a message, then each leader releases its group with a
 * zero-byte broadcast — nobody leaves before every process of the other
 * group has entered.
 */
#include "coll_algo.h"

int pm_alg_barrier(struct pm_cx *cx, int rank, int size)
{
    if (size <= PM_COLL_ONE_ROUND_RANKS && pm_coll_shm_only) {
        for (int k = 1; k < size; k++)
            pm_cx_recv(cx, NULL, 0, MPI_BYTE, (rank - k + size) % size);
        for (int k = 1; k < size; k++)
            pm_cx_send(cx, NULL, 0, MPI_BYTE, (rank + k) % size);
        pm_cx_fence(cx);
        return cx->err;
    }
    bool pof2 = (size & (size - 1)) == 0;
    for (int k = 1; k < size; k <<= 1) {
        pm_cx_recv(cx, NULL, 0, MPI_BYTE, pof2 ? rank ^ k : (rank - k + size) % size);
        pm_cx_send(cx, NULL, 0, MPI_BYTE, pof2 ? rank ^ k : (rank + k) % size);
        pm_cx_fence(cx);
    }
    return cx->err;
}

static int barrier_build(struct pm_cx *cx)
{
    struct pm_comm *c = cx->c;
    if (!c->is_inter)
        return pm_alg_barrier(cx, c->rank, c->size);
    cx->local = true;
    pm_alg_barrier(cx, c->rank, c->size);
    cx->local = false;
    if (c->rank == 0) {
        pm_cx_recv(cx, NULL, 0, MPI_BYTE, 0);
        pm_cx_send(cx, NULL, 0, MPI_BYTE, 0);
        pm_cx_fence(cx);
    }
    cx->local = true;
    pm_alg_bcast(cx, NULL, 0, MPI_BYTE, 0, c->rank, c->size);
    cx->local = false;
    return cx->err;
}

int PMPI_Barrier(MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Barrier");
    struct pm_comm *c;
    int rc = pm_coll_check_comm("MPI_Barrier", comm, &c);
    if (rc)
        return rc;
    if (!c->is_inter && c->size == 1)
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    barrier_build(&cx);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "MPI_Barrier: communication failed on rank %d", c->rank);
    return MPI_SUCCESS;
}
PM_WEAK(Barrier)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Ibarrier");
    struct pm_comm *c;
    int rc = pm_coll_check_comm("MPI_Ibarrier", comm, &c);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request("MPI_Ibarrier", c, request)))
        return rc;
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "MPI_Ibarrier: out of memory");
    barrier_build(&cx);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "MPI_Ibarrier: cannot start the operation");
    return MPI_SUCCESS;
}
PM_WEAK(Ibarrier)
