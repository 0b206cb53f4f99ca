/*
 * cluster_fail — a peer on another host goes away in the middle of large
 * transfers; the survivor's requests must end with an error within
 * seconds, never hang, and the launcher must end the job.
 *
 * usage: cluster_fail kill|exit|link
 *   2 ranks, rank 0 on one host and rank 1 on another. They exchange
 *   64 MiB messages (MPI_Sendrecv, checked) in a loop, with
 *   MPI_ERRORS_RETURN. After the first round both print "round 1 done".
 *   kill: rank 1 then SIGKILLs itself in the middle of its next receive
 *         (from a helper thread, 50 ms into it).
 *   exit: the same, but rank 1 exits with code 3 (_exit): launchers that
 *         end a job on a rank killed by a signal (srun) let the others go
 *         on after an exit code (srun --kill-on-bad-exit=0).
 *   link: the test script takes rank 1's host off the network.
 *   Rank 0 prints "survivor: <error class> after <s> s" once an exchange
 *   fails, and exits 0 if that took less than 10 s after the last round
 *   that completed (the failure is detected: PEER_FAILED through the
 *   launcher or the rail, not a hang), 1 otherwise.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "mpitest.h"

#define BIG (64u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int exit_mode;

static void *die_soon(void *arg)
{
    (void)arg;
    usleep(50 * 1000);
    if (exit_mode)
        _exit(3);
    raise(SIGKILL);
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    exit_mode = argc > 1 && strcmp(argv[1], "exit") == 0;
    int kill_mode = argc > 1 && (strcmp(argv[1], "kill") == 0 || exit_mode);
    CHECK(size == 2, "run with 2 ranks on 2 hosts");
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out && in, "out of memory");
    int peer = 1 - rank;
    double last_ok = now();
    for (int round = 1;; round++) {
        for (size_t i = 0; i < BIG; i++)
            out[i] = (unsigned char)(i * 7 + (size_t)round + (size_t)rank);
        if (rank == 1 && kill_mode && round == 2) {
            pthread_t t;
            pthread_create(&t, NULL, die_soon, NULL);
        }
        int rc = MPI_Sendrecv(out, (int)BIG, MPI_BYTE, peer, round, in, (int)BIG, MPI_BYTE, peer,
                              round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            int cls;
            MPI_Error_class(rc, &cls);
            double took = now() - last_ok;
            printf("survivor: error class %d after %.2f s\n", cls, took);
            fflush(stdout);
            return took < 10.0 ? 0 : 1; /* no MPI_Finalize: the peer is gone */
        }
        for (size_t i = 0; i < BIG; i++)
            CHECK(in[i] == (unsigned char)(i * 7 + (size_t)round + (size_t)peer),
                  "round %d byte %zu", round, i);
        if (round == 1) {
            printf("rank %d: round 1 done\n", rank);
            fflush(stdout);
        }
        last_ok = now();
        CHECK(round < 100000, "the peer never went away");
    }
}
