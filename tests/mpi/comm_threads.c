/*
 * comm_threads.c — communicator construction from several threads at once
 * (MPI_THREAD_MULTIPLE): 4 threads, each on its own communicator, loop over
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_create_group and MPI_Comm_dup of
 * MPI_COMM_SELF, checking each new communicator with a ring exchange. The
 * processes interleave the threads' context agreements differently, which
 * is what the agreement must survive. Then two patterns where an agreement
 * that kept the id mask to itself while waiting would deadlock: one
 * process constructing on two communicators one after the other while the
 * others do both at once, and MPICH's comm_dup_deadlock (a local dup of
 * MPI_COMM_SELF under a lock, while the other thread of the process waits
 * in a dup for a peer that wants that lock).
 */
#include <pthread.h>
#include <unistd.h>

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

/* ---- Orders that differ between processes ---------------------------------- */
static MPI_Comm pair[2];
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static void *dup_one(void *arg)
{
    int i = (int)(intptr_t)arg;
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(pair[i], &d));
    ring(d, 500 + i);
    MPI_CHECK(MPI_Comm_free(&d));
    return NULL;
}

static void *dup_self_then(void *arg)
{
    int i = (int)(intptr_t)arg;
    MPI_Comm self, d;
    if (i == wrank % 2)
        usleep(200 * 1000);
    pthread_mutex_lock(&self_lock);
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &self));
    pthread_mutex_unlock(&self_lock);
    MPI_CHECK(MPI_Comm_free(&self));
    MPI_CHECK(MPI_Comm_dup(pair[i], &d));
    ring(d, 600 + i);
    MPI_CHECK(MPI_Comm_free(&d));
    return NULL;
}

static void test_orders(void)
{
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &pair[0]));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &pair[1]));
    pthread_t th[2];
    if (wrank == 0) {
        /* Sequentially, in the opposite order of the others' second thread. */
        usleep(100 * 1000);
        dup_one((void *)(intptr_t)1);
        dup_one((void *)(intptr_t)0);
    } else {
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&th[i], NULL, dup_one, (void *)(intptr_t)i) == 0, "thread");
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
    }
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, dup_self_then, (void *)(intptr_t)i) == 0, "thread");
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    MPI_CHECK(MPI_Comm_free(&pair[0]));
    MPI_CHECK(MPI_Comm_free(&pair[1]));
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
    test_orders();
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
