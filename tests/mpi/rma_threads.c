/*
 * rma_threads.c — one-sided operations from several threads of each process
 * on one window (MPI_THREAD_MULTIPLE, MPI-3.1 12.4): 4 threads per rank in
 * one MPI_Win_lock_all epoch, each doing MPI_Accumulate / MPI_Raccumulate
 * (MPI_SUM, MPI_LONG_LONG) to every rank with MPI_Win_flush now and then,
 * MPI_Fetch_and_op increments of a counter at rank 0 (flushed each time:
 * every thread's fetched values increase, and over all threads and ranks
 * they are exactly 0 .. total-1), and a compare-and-swap increment loop on
 * a second counter. The totals at the end are exact.
 */
#include <pthread.h>
#include <stddef.h>

#include "rma_util.h"

enum { NT = 4, NACC = 150, NFAO = 40, NCAS = 15 };

struct slots {
    long long sum[NT];
    long long counter;
    int cas_counter;
};
#define OFF(f) ((MPI_Aint)offsetof(struct slots, f))

static int rank, size;
static MPI_Win win;
static struct slots *me;
static long long fetched[NT][NFAO];

static long long acc_value(int r, int t, int i)
{
    return (long long)(r * NT + t + 1) * (i + 1) + (1LL << 34);
}
static int acc_target(int r, int t, int i) { return (r + i + t) % size; }

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    long long vals[NACC], one = 1;
    for (int i = 0; i < NACC; i++) {
        int target = acc_target(rank, t, i);
        MPI_Aint disp = OFF(sum) + t * (MPI_Aint)sizeof(long long);
        vals[i] = acc_value(rank, t, i);
        if (i % 2) {
            MPI_Request q;
            MPI_CHECK(MPI_Raccumulate(&vals[i], 1, MPI_LONG_LONG, target, disp, 1, MPI_LONG_LONG,
                                      MPI_SUM, win, &q));
            MPI_CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Accumulate(&vals[i], 1, MPI_LONG_LONG, target, disp, 1, MPI_LONG_LONG,
                                     MPI_SUM, win));
        }
        if (i % 16 == 15)
            MPI_CHECK(MPI_Win_flush(target, win));
    }
    for (int i = 0; i < NFAO; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &fetched[t][i], MPI_LONG_LONG, 0, OFF(counter), MPI_SUM,
                                   win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(i == 0 || fetched[t][i] > fetched[t][i - 1], "thread %d: fetched %lld after %lld", t,
              fetched[t][i], fetched[t][i - 1]);
    }
    for (int i = 0; i < NCAS; i++) {
        int seen = 0, want, got;
        MPI_CHECK(MPI_Fetch_and_op(NULL, &seen, MPI_INT, 0, OFF(cas_counter), MPI_NO_OP, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        for (;;) {
            want = seen + 1;
            MPI_CHECK(MPI_Compare_and_swap(&want, &seen, &got, MPI_INT, 0, OFF(cas_counter), win));
            MPI_CHECK(MPI_Win_flush(0, win));
            if (got == seen)
                break;
            CHECK(got > seen, "thread %d: the CAS counter went back from %d to %d", t, seen, got);
            seen = got;
        }
    }
    return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    rma_watchdog("rma_threads", 80);
    int provided = -1;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)sizeof(struct slots), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &me, &win));
    rma_local_begin(win, rank);
    memset(me, 0, sizeof *me);
    rma_local_end(win, rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_CHECK(MPI_Win_lock_all(0, win));
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    MPI_CHECK(MPI_Win_flush_all(win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    rma_local_begin(win, rank);
    for (int t = 0; t < NT; t++) {
        long long want = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < NACC; i++)
                if (acc_target(r, t, i) == rank)
                    want += acc_value(r, t, i);
        CHECK(me->sum[t] == want, "sum of thread %d's accumulates: %lld, want %lld", t, me->sum[t],
              want);
    }
    if (rank == 0) {
        CHECK(me->counter == (long long)size * NT * NFAO, "fetch_and_op counter %lld, want %d",
              me->counter, size * NT * NFAO);
        CHECK(me->cas_counter == size * NT * NCAS, "compare_and_swap counter %d, want %d",
              me->cas_counter, size * NT * NCAS);
    }
    rma_local_end(win, rank);

    long long *all = rank == 0 ? malloc(sizeof fetched * (size_t)size) : NULL;
    MPI_CHECK(MPI_Gather(fetched, NT * NFAO, MPI_LONG_LONG, all, NT * NFAO, MPI_LONG_LONG, 0,
                         MPI_COMM_WORLD));
    if (rank == 0) {
        long long n = (long long)size * NT * NFAO;
        qsort(all, (size_t)n, sizeof(long long), cmp_ll);
        for (long long k = 0; k < n; k++)
            CHECK(all[k] == k, "fetched values sorted: #%lld is %lld (lost or repeated)", k,
                  all[k]);
        free(all);
    }
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
