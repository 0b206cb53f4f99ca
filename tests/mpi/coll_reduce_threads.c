/*
 * coll_reduce_threads.c — MPI_THREAD_MULTIPLE: several threads of every process
 * run reduction-family collectives at the same time, each on its own
 * duplicate of MPI_COMM_WORLD (blocking ones on the direct path, nonblocking
 * ones as schedules whose callbacks run on whichever thread drives the
 * engine), and a nonblocking collective started by one thread is completed
 * by another.
 */
#include <pthread.h>

#include "coll_reduce_util.h"

enum { THREADS = 3, ITERS = 20, SMALL = 13, LARGE = 30000 };

static int rank, size;
static MPI_Comm comms[THREADS + 1];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    MPI_Comm c = comms[id];
    int *s = malloc(sizeof(int) * LARGE * 8), *r = malloc(sizeof(int) * LARGE * 8);
    for (int it = 0; it < ITERS; it++) {
        int t = id * 100 + it;
        long n = it % 3 == 2 ? LARGE : SMALL;
        for (long i = 0; i < n * size; i++)
            s[i] = ca_val(t, rank, i);
        MPI_Request req;
        if (it % 2)
            MPI_CHECK(MPI_Allreduce(s, r, (int)n, MPI_INT, MPI_SUM, c));
        else {
            MPI_CHECK(MPI_Iallreduce(s, r, (int)n, MPI_INT, MPI_SUM, c, &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        for (long i = 0; i < n; i++)
            CHECK(r[i] == ca_sum(t, 0, size - 1, i), "thread %d it %d allreduce [%ld] = %d", id,
                  it, i, r[i]);
        int root = it % size;
        for (long i = 0; i < n; i++)
            r[i] = rank == root ? ca_val(t, 1, i) : -1;
        if (it % 2)
            MPI_CHECK(MPI_Ibcast(r, (int)n, MPI_INT, root, c, &req));
        else
            MPI_CHECK(MPI_Bcast(r, (int)n, MPI_INT, root, c));
        if (it % 2)
            ca_poll(&req);
        for (long i = 0; i < n; i++)
            CHECK(r[i] == ca_val(t, 1, i), "thread %d it %d bcast [%ld] = %d", id, it, i, r[i]);
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, (int)n, MPI_INT, MPI_SUM, c));
        for (long i = 0; i < n; i++)
            CHECK(r[i] == ca_sum(t, 0, size - 1, n * rank + i), "thread %d rsb [%ld]", id, i);
        MPI_CHECK(MPI_Iscan(s, r, SMALL, MPI_INT, MPI_SUM, c, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (long i = 0; i < SMALL; i++)
            CHECK(r[i] == ca_sum(t, 0, rank, i), "thread %d iscan [%ld]", id, i);
        MPI_CHECK(MPI_Barrier(c));
    }
    free(s);
    free(r);
    return NULL;
}

/* One thread starts, another completes. */
static MPI_Request handoff = MPI_REQUEST_NULL;
static int hs[LARGE], hr[LARGE];
static pthread_mutex_t hm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hc = PTHREAD_COND_INITIALIZER;

static void *completer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&hm);
    while (handoff == MPI_REQUEST_NULL)
        pthread_cond_wait(&hc, &hm);
    MPI_Request req = handoff;
    pthread_mutex_unlock(&hm);
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 8, "at most 8 ranks");
    for (int i = 0; i <= THREADS; i++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);

    pthread_t ct;
    pthread_create(&ct, NULL, completer, NULL);
    for (int i = 0; i < LARGE; i++)
        hs[i] = ca_val(77, rank, i);
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(hs, hr, LARGE, MPI_INT, MPI_SUM, comms[THREADS], &req));
    pthread_mutex_lock(&hm);
    handoff = req;
    pthread_cond_signal(&hc);
    pthread_mutex_unlock(&hm);
    pthread_join(ct, NULL);
    for (int i = 0; i < LARGE; i++)
        CHECK(hr[i] == ca_sum(77, 0, size - 1, i), "handoff allreduce [%d] = %d", i, hr[i]);

    for (int i = 0; i <= THREADS; i++)
        MPI_CHECK(MPI_Comm_free(&comms[i]));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_reduce_threads: %d ranks x %d threads OK\n", size, THREADS);
    MPI_Finalize();
    return 0;
}
