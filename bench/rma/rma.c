/*
 * rma.c — one-sided communication between ranks 0 and 1, the loops of
 * OSU's osu_put_latency / osu_get_latency / osu_put_bw / osu_acc_latency /
 * osu_fop_latency, written once against MPI so that the same source runs
 * on Proust MPI, MPICH and Open MPI (bench/rma/run.sh).
 *
 *   rma [-t put,get,putbw,acc,fop] [-s lock|flush|fence] [-w allocate|create]
 *       [-m MIN] [-M MAX] [-i ITERS]
 *
 * Rank 0 is the origin, rank 1 the target (passive: it waits in a barrier
 * for lock epochs, as OSU's do). Latency: microseconds per operation
 * including its synchronisation (lock/op/unlock; op then flush inside one
 * lock epoch, OSU's default for MPI-3 windows; or op then fence);
 * putbw: a window of 64 puts then a flush, in MB/s. The window is made by
 * MPI_Win_allocate (OSU's default) or MPI_Win_create on malloc'd memory
 * (-w create). One line per size:
 * "<test> <sync> <bytes> <value>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int iters_for(int bytes, int base)
{
    return bytes >= (1 << 20) ? base / 20 + 10 : bytes >= 65536 ? base / 4 + 10 : base;
}

/* One operation of `test` from rank 0 to rank 1. */
static void one_op(const char *test, MPI_Win win, char *src, char *dst, int bytes)
{
    static long long one = 1, res; /* live until the epoch ends */
    if (!strcmp(test, "put"))
        MPI_Put(src, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, win);
    else if (!strcmp(test, "get"))
        MPI_Get(dst, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, win);
    else if (!strcmp(test, "acc"))
        MPI_Accumulate(src, bytes / 4, MPI_INT, 1, 0, bytes / 4, MPI_INT, MPI_SUM, win);
    else
        MPI_Fetch_and_op(&one, &res, MPI_LONG_LONG, 1, 0, MPI_SUM, win);
}

enum sync { SYNC_LOCK, SYNC_FLUSH, SYNC_FENCE };

/* Time `iters` rounds of one operation with its synchronisation. */
static double run_lat(const char *test, enum sync sync, MPI_Win win, char *src, char *dst,
                      int bytes, int iters, int rank)
{
    double t0 = 0, total = 0;
    int lock = sync != SYNC_FENCE;
    if (sync == SYNC_FLUSH && rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = -iters / 10 - 1; i < iters; i++) {
        if (i == 0) {
            if (sync != SYNC_FLUSH)
                MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        if (sync == SYNC_FLUSH) {
            if (rank == 0) {
                one_op(test, win, src, dst, bytes);
                MPI_Win_flush(1, win);
            }
        } else if (lock) {
            if (rank == 0) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                one_op(test, win, src, dst, bytes);
                MPI_Win_unlock(1, win);
            }
        } else {
            if (rank == 0)
                one_op(test, win, src, dst, bytes);
            MPI_Win_fence(0, win);
        }
    }
    total = MPI_Wtime() - t0;
    if (sync == SYNC_FLUSH && rank == 0)
        MPI_Win_unlock(1, win);
    if (lock)
        MPI_Barrier(MPI_COMM_WORLD); /* the target served the epochs meanwhile */
    return total * 1e6 / iters;
}

static double run_putbw(MPI_Win win, char *src, int bytes, int iters, int rank)
{
    double t0 = 0;
    if (rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = -2; i < iters; i++) {
        if (i == 0)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int k = 0; k < WINDOW; k++)
                MPI_Put(src + (size_t)k * bytes, bytes, MPI_BYTE, 1, (MPI_Aint)k * bytes, bytes,
                        MPI_BYTE, win);
            MPI_Win_flush(1, win);
        }
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        MPI_Win_unlock(1, win);
    MPI_Barrier(MPI_COMM_WORLD);
    return (double)bytes * WINDOW * iters / t / 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *tests = "put,get,acc,fop,putbw", *sync = "lock", *how = "allocate";
    int min = 8, max = 1 << 20, iters = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-t")) tests = argv[i + 1];
        else if (!strcmp(argv[i], "-s")) sync = argv[i + 1];
        else if (!strcmp(argv[i], "-w")) how = argv[i + 1];
        else if (!strcmp(argv[i], "-m")) min = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-M")) max = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-i")) iters = atoi(argv[i + 1]);
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "rma: needs 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    size_t winbytes = (size_t)max * WINDOW;
    char *src = malloc(winbytes), *dst = malloc((size_t)max), *base;
    memset(src, 1, winbytes);
    MPI_Win win;
    char *user = NULL;
    if (!strcmp(how, "create")) {
        base = user = malloc(winbytes);
        MPI_Win_create(base, (MPI_Aint)winbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate((MPI_Aint)winbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    }
    memset(base, 0, winbytes);
    enum sync mode = !strcmp(sync, "fence") ? SYNC_FENCE
                     : !strcmp(sync, "flush") ? SYNC_FLUSH : SYNC_LOCK;
    int lock = mode != SYNC_FENCE;
    char list[256];
    snprintf(list, sizeof list, "%s", tests);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
        if (mode != SYNC_LOCK && !strcmp(t, "putbw"))
            continue;
        if (!lock)
            MPI_Win_fence(0, win);
        int lo = !strcmp(t, "fop") ? 8 : min, hi = !strcmp(t, "fop") ? 8 : max;
        for (int b = lo; b <= hi; b *= 4) {
            int bytes = !strcmp(t, "acc") && b < 4 ? 4 : b;
            double v = !strcmp(t, "putbw")
                           ? run_putbw(win, src, bytes, iters_for(bytes, iters) / 10 + 2, rank)
                           : run_lat(t, mode, win, src, dst, bytes, iters_for(bytes, iters),
                                     rank);
            if (rank == 0)
                printf("%s %s %d %.3f\n", t, sync, bytes, v);
        }
        if (!lock)
            MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    }
    MPI_Win_free(&win);
    free(user);
    free(src);
    free(dst);
    MPI_Finalize();
    return 0;
}
