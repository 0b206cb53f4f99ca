/*
 * comm_threads.c — communicator construction from several threads at once
 * (MPI_THREAD_MULTIPLE): 4 threads, each on its own communicator, loop over
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create_group and MPI_Comm_dup of
 * MPI_COMM_SELF, checking each new communicator with a ring exchange. The
 * processes interleave the threads' context agreements differently, which
 * is what the agreement must survive.
 */
#include <pthread.h>

#include "mpitest.h"

enum { NTHREADS = 4, ITERS = 15 };
static int wrank, wsize;
static MPI_Comm base[NTHREADS];

static void ring(MPI_Comm c, int salt)
{
    int r, n, in = -1;
    MPI_CHECK(MPI_Comm_rank(c, &r));
    MPI_CHECK(MPI_Comm_size(c, &n));
    int out = r * 1000 + salt;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 2, &in, 1, MPI_INT, (r + n - 1) % n, 2,
                           c, MPI_STATUS_IGNORE));
    CHECK(in == ((r + n - 1) % n) * 1000 + salt, "ring: got %d (salt %d)", in, salt);
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(base[t], &world));
    for (int i = 0; i < ITERS; i++) {
        int salt = t * 100 + i;
        MPI_Comm d, s, g, self;
        MPI_CHECK(MPI_Comm_dup(base[t], &d));
        ring(d, salt);
        MPI_CHECK(MPI_Comm_split(d, wrank % 2, -wrank, &s));
        ring(s, salt + 1);
        MPI_CHECK(MPI_Comm_create_group(base[t], world, t, &g));
        ring(g, salt + 2);
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self));
        ring(self, salt + 3);
        MPI_CHECK(MPI_Comm_free(&self));
        MPI_CHECK(MPI_Comm_free(&g));
        MPI_CHECK(MPI_Comm_free(&s));
        MPI_CHECK(MPI_Comm_free(&d));
    }
    MPI_CHECK(MPI_Group_free(&world));
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    for (int t = 0; t < NTHREADS; t++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &base[t]));
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++)
        MPI_CHECK(MPI_Comm_free(&base[t]));
    /* The context ids all came back: many more still fit. */
    MPI_Comm c[100];
    for (int i = 0; i < 100; i++)
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
    ring(c[99], 7);
    for (int i = 0; i < 100; i++)
        MPI_CHECK(MPI_Comm_free(&c[i]));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
