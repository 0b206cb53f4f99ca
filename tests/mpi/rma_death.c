/*
 * rma_death.c — a process dies (SIGKILL, by itself) while it holds the
 * exclusive lock of a window in shared memory (MPI_Win_allocate within a
 * host: the lock is a word in the segment that nobody will release). The
 * survivor's MPI_Win_lock must end with an error (the peer's failure,
 * class MPI_ERR_OTHER) within seconds, never hang; so must a lock_all.
 *
 * 2 ranks; the survivor prints "survivor 0: lock failed after X s" and,
 * after MPI_Finalize, "survivor 0 exiting cleanly"; run under proustrun
 * --grace 10 (proustrun exits non-zero: a rank died).
 */
#include <signal.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 processes, not %d", size);
    MPI_Win win;
    int *mem;
    MPI_CHECK(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_CHECK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rank == 1) {
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* rank 0 goes on: we hold it */
        raise(SIGKILL);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = MPI_Wtime();
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    CHECK(mt_peer_failed(rc), "MPI_Win_lock of a lock held by a dead process returned %d", rc);
    rc = MPI_Win_lock_all(0, win);
    CHECK(mt_peer_failed(rc), "MPI_Win_lock_all with a dead holder returned %d", rc);
    printf("survivor 0: lock failed after %.2f s\n", MPI_Wtime() - t0);
    fflush(stdout);
    MPI_Finalize();
    printf("survivor 0 exiting cleanly\n");
    return 0;
}
