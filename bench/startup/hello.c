/*
 * hello.c — the start-up benchmark: what a job of N ranks costs before it
 * can communicate, on any MPI (MPICH, Open MPI, Proust MPI).
 *
 *   mpicc -O2 -o hello bench/startup/hello.c
 *   mpiexec -n 64 ./hello
 *
 * Every rank reads CLOCK_REALTIME at main() and after MPI_Init, then the
 * job does one MPI_Barrier and one 8-byte MPI_Allreduce (the first
 * communication: a library that connects on demand pays for it here, not
 * in MPI_Init). While every rank sits between two barriers, rank 0 reads
 * how much of /dev/shm is in use (statvfs: pages the job's shared
 * segments hold; run.sh subtracts what was in use before the launch).
 *
 * Output (rank 0), in the "<test> <metric> <size> <value>" format:
 *   startup:np=<N> init_max_s <N> <slowest rank's MPI_Init, s>
 *   startup:np=<N> first_comm_s <N> <barrier + allreduce after init, s>
 *   startup:np=<N> shm_used_mb <N> <MB of /dev/shm in use, job running>
 * The launcher's wall time (what a user waits) is measured by run.sh.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <sys/statvfs.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts); /* comparable across ranks of a host */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double shm_used_mb(void)
{
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) != 0) return -1.0;
    return (double)(sv.f_blocks - sv.f_bfree) * (double)sv.f_frsize / 1e6;
}

int main(int argc, char **argv)
{
    double t0 = now_s();
    MPI_Init(&argc, &argv);
    double init = now_s() - t0;

    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    double c0 = now_s();
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    double comm = now_s() - c0;

    double shm = rank == 0 ? shm_used_mb() : 0.0;
    MPI_Barrier(MPI_COMM_WORLD); /* nobody leaves while rank 0 reads /dev/shm */

    double init_max = 0, comm_max = 0;
    MPI_Reduce(&init, &init_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&comm, &comm_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (sum != size) {
            fprintf(stderr, "hello: allreduce gave %ld, expected %d\n", sum, size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("startup:np=%d init_max_s %d %.6f\n", size, size, init_max);
        printf("startup:np=%d first_comm_s %d %.6f\n", size, size, comm_max);
        printf("startup:np=%d shm_used_mb %d %.1f\n", size, size, shm);
    }
    MPI_Finalize();
    return 0;
}
