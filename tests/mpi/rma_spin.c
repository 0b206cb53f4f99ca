/*
 * rma_spin.c — a process that waits by reading its own window.
 *
 * The hand-over of an MCS lock (mpi4py.util.sync.Mutex): each rank in turn
 * waits, inside a lock_all epoch, until the previous one sets a flag in
 * its window with MPI_Accumulate(REPLACE), reading the flag straight from
 * memory between calls to MPI_Win_sync (or MPI_Win_flush on itself). The
 * accumulate is applied by the target's library, so those calls must move
 * incoming messages: with no progress thread (the jobs run with
 * PROUST_PROGRESS=block) nothing else would, and the ring would stop at
 * the first hand-over (the test then fails on its 20 s deadline).
 */
#include <stdatomic.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int *flag;
    MPI_Win win;
    MPI_CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &flag,
                               &win));
    *flag = 0;
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 1; round <= 20; round++) {
        for (int use_flush = 0; use_flush < 2; use_flush++) {
            int value = 2 * round + use_flush;
            MPI_CHECK(MPI_Win_lock_all(0, win));
            if (rank != 0) { /* wait for the previous rank's hand-over */
                double until = MPI_Wtime() + 20;
                for (;;) {
                    if (use_flush)
                        MPI_CHECK(MPI_Win_flush(rank, win));
                    else
                        MPI_CHECK(MPI_Win_sync(win));
                    /* (values only grow: the previous rank may already
                     * have handed the next one over) */
                    if (atomic_load((_Atomic int *)flag) >= value)
                        break;
                    CHECK(MPI_Wtime() < until, "round %d (%s): the flag is %d, not yet %d", round,
                          use_flush ? "Win_flush" : "Win_sync", *flag, value);
                }
            }
            if (rank + 1 < size) {
                MPI_CHECK(MPI_Accumulate(&value, 1, MPI_INT, rank + 1, 0, 1, MPI_INT,
                                         MPI_REPLACE, win));
                MPI_CHECK(MPI_Win_flush(rank + 1, win));
            }
            MPI_CHECK(MPI_Win_unlock_all(win));
        }
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("rma_spin: %d ranks: OK\n", size);
    return 0;
}
