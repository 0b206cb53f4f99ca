/*
 * waiters.c — what threads blocked in MPI_Recv cost the computation of
 * their own process (issue 4, benchmark 4; seed 004, table 2). Any MPI
 * with MPI_THREAD_MULTIPLE.
 *
 *   mpicc -std=c11 -O2 -pthread -o waiters bench/progress/waiters.c
 *   mpiexec -n 2 ./waiters [-N list] [-w ms] [-r reps] [-s ms]
 *
 * For each N (-N, default 0,1,2,4,8) and each of -r (10) repetitions:
 * rank 1 starts N threads, thread i blocking in MPI_Recv(8 bytes, from
 * rank 0, tag 100 + i); once they all are about to call it, and -s ms
 * (20) later (so that they are past any initial polling and in their
 * steady waiting state), rank 1's main thread runs a fixed amount of
 * arithmetic calibrated (before MPI_Init, idle core) to take -w ms (50)
 * and times it. Then it tells rank 0 (a 0-byte message), rank 0 sends the
 * N messages, the threads return and are joined. Rank 0 meanwhile waits
 * in MPI_Recv on its own core.
 *
 * Threads that sleep while they wait leave the computation alone: its
 * time stays that of N = 0 (ratio ~1.0). Threads that spin take CPU from
 * it: with more threads than free cores the ratio grows with N.
 *
 * Needs MPI_THREAD_MULTIPLE: when an MPI does not provide it, rank 0 prints
 * "# SKIPPED: ..." and the program exits 0 without measuring.
 *
 * Output (rank 0): '#' lines, then one line per N:
 *   waiters <N> <t_median> <t_min> <t_max> <ratio> <reps>
 * times of the computation in ms; ratio = t_median / t_median(N = 0) of
 * this run (nan when N = 0 was not measured).
 */
#include "pg_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

enum { WA_TAG_RES = 98, WA_TAG_DONE = 99, WA_TAG = 100, WA_MAXN = 16 };

struct wa_opts {
    long ns[WA_MAXN];
    int nn;
    double work_ms, settle_ms;
    long reps;
};

static atomic_int wa_ready;

static void *wa_waiter(void *arg)
{
    int tag = WA_TAG + (int)(intptr_t)arg;
    char buf[8];
    atomic_fetch_add(&wa_ready, 1);
    MPI_Recv(buf, (int)sizeof buf, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

static void wa_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-N list] [-w ms] [-r reps] [-s ms]\n"
            "  -N  numbers of waiting threads on rank 1, comma list (0,1,2,4,8)\n"
            "  -w  computation of rank 1's main thread, ms on an idle core (50)\n"
            "  -r  repetitions per N; the median is printed (10)\n"
            "  -s  settling time between the waiters' MPI_Recv and the computation, ms (20)\n",
            prog);
}

static int wa_parse(int argc, char **argv, struct wa_opts *o)
{
    static const long def[] = {0, 1, 2, 4, 8};
    o->nn = (int)(sizeof def / sizeof def[0]);
    memcpy(o->ns, def, sizeof def);
    o->work_ms = 50.0;
    o->settle_ms = 20.0;
    o->reps = 10;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "N:w:r:s:h")) != -1) {
        switch (c) {
        case 'N':
            o->nn = pg_parse_llist(optarg, 0, 1000, o->ns, WA_MAXN);
            if (o->nn < 0) return -1;
            break;
        case 'w': if (pg_parse_pos(optarg, 1e6, &o->work_ms)) return -1; break;
        case 's':
            if (strcmp(optarg, "0") == 0) o->settle_ms = 0.0;
            else if (pg_parse_pos(optarg, 1e6, &o->settle_ms)) return -1;
            break;
        case 'r': if (bench_parse_int(optarg, 1, 1000000, &o->reps)) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    return optind != argc ? -1 : 0;
}

static void wa_sleep_ms(double ms)
{
    if (ms <= 0.0)
        return;
    long long ns = (long long)(ms * 1e6);
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* One repetition on rank 1: the computation's time in ms. */
static double wa_rank1(long n, uint64_t work, double settle_ms, pthread_t *th)
{
    atomic_store(&wa_ready, 0);
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, wa_waiter, (void *)(intptr_t)i) != 0)
            bench_die("pthread_create failed (thread %ld of %ld)", i, n);
    while (atomic_load(&wa_ready) < n)
        sched_yield();
    wa_sleep_ms(settle_ms);
    uint64_t t0 = bench_now_ns();
    pg_work(work);
    double ms = (double)(bench_now_ns() - t0) / 1e6;
    char d = 0;
    MPI_Send(&d, 0, MPI_BYTE, 0, WA_TAG_DONE, MPI_COMM_WORLD);
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    return ms;
}

static void wa_rank0(long n)
{
    char d = 0, buf[8] = {0};
    MPI_Recv(&d, 0, MPI_BYTE, 1, WA_TAG_DONE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long i = 0; i < n; i++)
        MPI_Send(buf, (int)sizeof buf, MPI_BYTE, 1, WA_TAG + (int)i, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    pg_calibrate();
    int provided = pg_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    struct wa_opts o;
    int prc = wa_parse(argc, argv, &o);
    if (prc != 0) {
        if (pg_rank == 0)
            wa_usage(prc > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return prc > 0 ? 0 : 2;
    }
    pg_need_two("waiters");
    if (pg_rank == 0) {
        pg_describe(stdout, "waiters", MPI_THREAD_MULTIPLE, provided);
        fflush(stdout);
    }
    pg_require_level(provided, MPI_THREAD_MULTIPLE, "waiters");
    if (pg_rank == 0) {
        printf("# rank 1: N threads in MPI_Recv while its main thread computes %g ms "
               "(idle-core calibration); settle %g ms; %ld reps\n",
               o.work_ms, o.settle_ms, o.reps);
        printf("# test N t_median_ms t_min_ms t_max_ms ratio_to_N0 reps\n");
        fflush(stdout);
    }

    long max_n = 0;
    for (int k = 0; k < o.nn; k++)
        if (o.ns[k] > max_n)
            max_n = o.ns[k];
    pthread_t *th = calloc((size_t)max_n + 1, sizeof *th);
    double *t = calloc((size_t)o.reps, sizeof *t);
    if (!th || !t)
        bench_die("out of memory");
    uint64_t work = pg_work_for_us(o.work_ms * 1e3);
    double base = NAN;

    for (int k = 0; k < o.nn; k++) {
        long n = o.ns[k];
        MPI_Barrier(MPI_COMM_WORLD);
        for (long r = 0; r < o.reps; r++) {
            if (pg_rank == 1)
                t[r] = wa_rank1(n, work, o.settle_ms, th);
            else if (pg_rank == 0)
                wa_rank0(n);
        }
        double res[3] = {0, 0, 0}; /* median, min, max: rank 1 -> rank 0 */
        if (pg_rank == 1) {
            res[0] = pg_median(t, (size_t)o.reps); /* sorts t */
            res[1] = t[0];
            res[2] = t[o.reps - 1];
            MPI_Send(res, 3, MPI_DOUBLE, 0, WA_TAG_RES, MPI_COMM_WORLD);
        } else if (pg_rank == 0) {
            MPI_Recv(res, 3, MPI_DOUBLE, 1, WA_TAG_RES, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (n == 0)
                base = res[0];
            double ratio = base > 0.0 ? res[0] / base : NAN;
            printf("waiters %ld %.3f %.3f %.3f %.3f %ld\n", n, res[0], res[1], res[2], ratio,
                   o.reps);
            fflush(stdout);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    free(t);
    free(th);
    MPI_Finalize();
    return 0;
}
