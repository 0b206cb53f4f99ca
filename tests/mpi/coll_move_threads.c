/*
 * coll_move_threads.c — data-movement collectives from several threads at once
 * (MPI_THREAD_MULTIPLE): each thread owns a duplicate of MPI_COMM_WORLD and
 * runs blocking and nonblocking gathers, scatters, allgathers and alltoalls
 * on it while the other threads do the same on theirs; every result is
 * checked against values computed from (thread, iteration, ranks).
 */
#include <pthread.h>

#include "mpitest.h"

enum { THREADS = 3, ITERS = 40, K = 9 };

static int rank, size;
static MPI_Comm comms[THREADS];

static int val(int th, int it, int from, int to, int i)
{
    return th * 10000000 + it * 100000 + from * 1000 + to * 10 + i;
}

static void *worker(void *arg)
{
    int th = (int)(intptr_t)arg;
    MPI_Comm comm = comms[th];
    int *s = malloc(sizeof(int) * K * (size_t)size), *r = malloc(sizeof(int) * K * (size_t)size);
    for (int it = 0; it < ITERS; it++) {
        int root = it % size;
        MPI_Request req;
        /* Alltoall, nonblocking on odd iterations. */
        for (int j = 0; j < K * size; j++)
            s[j] = val(th, it, rank, j / K, j % K);
        if (it % 2) {
            MPI_CHECK(MPI_Ialltoall(s, K, MPI_INT, r, K, MPI_INT, comm, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Alltoall(s, K, MPI_INT, r, K, MPI_INT, comm));
        }
        for (int j = 0; j < K * size; j++)
            CHECK(r[j] == val(th, it, j / K, rank, j % K), "thread %d alltoall [%d] = %d", th, j,
                  r[j]);
        /* Gather to a rotating root, then allgather. */
        for (int i = 0; i < K; i++)
            s[i] = val(th, it, rank, root, i);
        MPI_CHECK(MPI_Gather(s, K, MPI_INT, r, K, MPI_INT, root, comm));
        if (rank == root)
            for (int j = 0; j < K * size; j++)
                CHECK(r[j] == val(th, it, j / K, root, j % K), "thread %d gather [%d]", th, j);
        MPI_CHECK(MPI_Iallgather(s, K, MPI_INT, r, K, MPI_INT, comm, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int j = 0; j < K * size; j++)
            CHECK(r[j] == val(th, it, j / K, root, j % K), "thread %d allgather [%d]", th, j);
        /* Scatter from the root. */
        for (int j = 0; j < K * size; j++)
            s[j] = val(th, it, root, j / K, j % K + 1);
        MPI_CHECK(MPI_Scatter(s, K, MPI_INT, r, K, MPI_INT, root, comm));
        for (int i = 0; i < K; i++)
            CHECK(r[i] == val(th, it, root, rank, i + 1), "thread %d scatter [%d]", th, i);
    }
    free(s);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int t = 0; t < THREADS; t++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    pthread_t tid[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK(pthread_create(&tid[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(tid[t], NULL);
    for (int t = 0; t < THREADS; t++)
        MPI_CHECK(MPI_Comm_free(&comms[t]));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_move_threads: OK on %d ranks, %d threads\n", size, THREADS);
    MPI_Finalize();
    return 0;
}
