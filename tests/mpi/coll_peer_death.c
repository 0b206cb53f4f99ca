/*
 * coll_peer_death.c — a process dies (SIGKILL, by itself) while the others are
 * in collectives with it: every collective that communicates with it must
 * end with an error (PROUST_MPI_ERR_PEER_FAILED or _CONN, class
 * MPI_ERR_OTHER) within seconds, blocking (direct path) or nonblocking
 * (schedule), never hang.
 *
 * --mode=pair (2 ranks): rank 1 dies; rank 0 runs Iallreduce (started
 *     before the death, completed by the failure), Allreduce, Reduce, Bcast of 1 MiB (rendezvous),
 *     Ireduce_scatter_block, Iscan and Barrier.
 * --mode=barrier (3 ranks): rank 2 dies; ranks 0 and 1 both hear from it
 *     within a dissemination barrier (blocking, then nonblocking).
 * Each survivor prints "survivor <rank>: all failed after X s" then
 * "survivor <rank> exiting cleanly" after MPI_Finalize; run under
 * proustrun --grace 10 (proustrun exits non-zero: a rank died).
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "coll_reduce_util.h"

#define BIG (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pair = argc > 1 && strcmp(argv[1], "--mode=pair") == 0;
    CHECK(size == (pair ? 2 : 3), "wrong number of ranks");
    int victim = size - 1;
    static int a[BIG / 4], b[BIG / 4];
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* everyone is up */
    MPI_Request req;
    if (rank == victim) { /* the others post their first collective meanwhile */
        usleep(100 * 1000);
        raise(SIGKILL);
    }
    double t0 = MPI_Wtime();
    char report[512] = "";
    int ok = 1, rc;
#define EXPECT_FAIL(name, call)                                                            \
    do {                                                                                   \
        rc = (call);                                                                       \
        ok &= mt_peer_failed(rc);                                                          \
        snprintf(report + strlen(report), sizeof report - strlen(report), " %s=%d", name,   \
                 rc);                                                                      \
    } while (0)
    if (pair) {
        rc = MPI_Iallreduce(a, b, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        EXPECT_FAIL("Iallreduce", rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE));
        EXPECT_FAIL("Allreduce", MPI_Allreduce(a, b, 1000, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        EXPECT_FAIL("Reduce", MPI_Reduce(a, b, 10, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
        EXPECT_FAIL("Bcast", MPI_Bcast(a, BIG / 4, MPI_INT, 0, MPI_COMM_WORLD));
        rc = MPI_Ireduce_scatter_block(a, b, 5000, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        EXPECT_FAIL("Ireduce_scatter_block", rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE));
        rc = MPI_Iscan(a, b, 10, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        EXPECT_FAIL("Iscan", rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE));
        EXPECT_FAIL("Barrier", MPI_Barrier(MPI_COMM_WORLD));
    } else {
        EXPECT_FAIL("Barrier", MPI_Barrier(MPI_COMM_WORLD));
        rc = MPI_Ibarrier(MPI_COMM_WORLD, &req);
        EXPECT_FAIL("Ibarrier", rc ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    double dt = MPI_Wtime() - t0;
    printf("survivor %d:%s\n", rank, report);
    if (ok && dt < 10.0)
        printf("survivor %d: all failed after %.2f s\n", rank, dt);
    else
        printf("[rank %d] FAIL: not every collective failed (or too slowly: %.2f s)\n", rank, dt);
    fflush(stdout);
    MPI_Finalize();
    printf("survivor %d exiting cleanly\n", rank);
    return 0;
}
