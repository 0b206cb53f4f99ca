/*
 * p2p_threads.c — MPI_THREAD_MULTIPLE: four threads per rank exchange
 * messages around the ring at the same time, first each on its own
 * communicator (same tags everywhere: only the communicator separates the
 * traffic), then all on MPI_COMM_WORLD with one tag per thread (specific
 * source and ANY_SOURCE receives). Sizes mix eager and rendezvous; every
 * thread checks the envelope and contents of everything it receives.
 */
#include <pthread.h>
#include <stdbool.h>

#include "p2p_common.h"

#define NT 4
#define NMSG 80

static int rank, size, to, from;
static MPI_Comm comms[NT];
static bool shared_phase;

static int msg_size(int t, int i)
{
    return i % 16 == 15 ? 100000 + t : (i * 37 + t * 11) % 2000;
}

static uint64_t seed_of(int src, int t, int i)
{
    return (uint64_t)src << 40 | (uint64_t)t << 32 | (uint64_t)i | (shared_phase ? 1ull << 60 : 0);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Comm comm = shared_phase ? MPI_COMM_WORLD : comms[t];
    int tag = shared_phase ? t : 0;
    unsigned char *out = malloc(100000 + NT), *in = malloc(100000 + NT);
    CHECK(out && in, "out of memory");
    for (int i = 0; i < NMSG; i++) {
        int n = msg_size(t, i);
        p2p_fill(out, (size_t)n, seed_of(rank, t, i));
        memset(in, 0, (size_t)n);
        MPI_Status st;
        int src = shared_phase && i % 2 ? MPI_ANY_SOURCE : from;
        switch (i % 3) {
        case 0: {
            MPI_Request rq[2];
            MPI_Status sts[2];
            MPI_CHECK(MPI_Irecv(in, n, MPI_BYTE, src, tag, comm, &rq[0]));
            MPI_CHECK(MPI_Isend(out, n, MPI_BYTE, to, tag, comm, &rq[1]));
            MPI_CHECK(MPI_Waitall(2, rq, sts));
            st = sts[0];
            break;
        }
        case 1:
            MPI_CHECK(MPI_Sendrecv(out, n, MPI_BYTE, to, tag, in, n, MPI_BYTE, src, tag, comm,
                                   &st));
            break;
        default: {
            MPI_Request rq;
            MPI_CHECK(MPI_Irecv(in, n, MPI_BYTE, src, tag, comm, &rq));
            MPI_CHECK(MPI_Send(out, n, MPI_BYTE, to, tag, comm));
            MPI_CHECK(MPI_Wait(&rq, &st));
            break;
        }
        }
        CHECK_STATUS(st, from, tag, n);
        long bad = p2p_check(in, (size_t)n, seed_of(from, t, i));
        CHECK(bad < 0, "thread %d (%s) message %d of %d bytes: byte %ld wrong", t,
              shared_phase ? "shared communicator" : "own communicator", i, n, bad);
    }
    free(out);
    free(in);
    return NULL;
}

static void run_phase(bool shared)
{
    shared_phase = shared;
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    int claimed = -1;
    MPI_CHECK(MPI_Query_thread(&claimed));
    CHECK(claimed == MPI_THREAD_MULTIPLE, "MPI_Query_thread: %d", claimed);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    for (int t = 0; t < NT; t++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    run_phase(false);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    run_phase(true);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int t = 0; t < NT; t++)
        MPI_CHECK(MPI_Comm_free(&comms[t]));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_threads: %d ranks x %d threads: OK\n", size, NT);
    return 0;
}
