/*
 * reactivity.c — 8-byte ping-pong latency while the receiving process is
 * busy computing (issue 4, benchmark 3; seeds 001 / 004). Any MPI.
 *
 *   mpicc -std=c11 -O2 -pthread -o reactivity bench/progress/reactivity.c
 *   mpiexec -n 2 ./reactivity [-K list] [-s size] [-T seconds] [-n iters]
 *
 * For each K (-K, default 0,1,2,4,8): rank 1 starts K compute threads per
 * core it may run on (cores = CPU_COUNT of sched_getaffinity on rank 1;
 * threads = K x cores); they only do arithmetic (pg_work), never call
 * MPI, and stop on a flag after the K. Then rank 0 and rank 1's main
 * thread ping-pong `size` bytes (-s, 8) with MPI_Send / MPI_Recv: untimed
 * warm-up (a tenth of the budget), then timed round trips until -n
 * (1000000) are done or -T seconds (1.0) have passed, whichever comes first
 * (rank 0 decides, and tells rank 1 in the message itself, so a slow K
 * costs at most about -T). Spinning MPIs may see milliseconds per round
 * trip here: the ping-pong thread competes with the compute threads for
 * the cores. -n is large so that each K runs its whole budget: at HZ=250
 * a single stalled round trip costs 4 ms, 40 % of the mean of a 10 ms run.
 *
 * Thread level: MPI_THREAD_FUNNELED (only the main thread calls MPI).
 *
 * Output (rank 0): '#' lines, then one line per K:
 *   reactivity <K> <threads> <lat_mean> <lat_median> <round_trips>
 * lat_mean = loop time / (2 x round trips) in us (as bench/mpi/pingpong's
 * lat); lat_median = median round trip / 2, in us. Then a comment line:
 *   # stalls <K> <round trips over 1 ms> <their share of the loop, %> <max us>
 */
#include "pg_common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

enum { RE_TAG = 21, RE_MAXK = 16, RE_GO = 1, RE_STOP = 2 };

struct re_opts {
    long ks[RE_MAXK];
    int nk;
    size_t size;
    double budget; /* seconds per K */
    long iters;    /* at most this many timed round trips per K */
};

static atomic_int re_stop;
static atomic_int re_started;

static void *re_spin(void *arg)
{
    (void)arg;
    atomic_fetch_add(&re_started, 1);
    while (!atomic_load_explicit(&re_stop, memory_order_relaxed))
        pg_work(4096);
    return NULL;
}

static void re_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-K list] [-s size] [-T seconds] [-n iters]\n"
            "  -K  compute threads per core on rank 1, comma list (0,1,2,4,8)\n"
            "  -s  message size in bytes, >= 1 (8)\n"
            "  -T  time budget per K in seconds (1.0)\n"
            "  -n  at most this many timed round trips per K (1000000)\n",
            prog);
}

static int re_parse(int argc, char **argv, struct re_opts *o)
{
    static const long def[] = {0, 1, 2, 4, 8};
    o->nk = (int)(sizeof def / sizeof def[0]);
    memcpy(o->ks, def, sizeof def);
    o->size = 8;
    o->budget = 1.0;
    o->iters = 1000000;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "K:s:T:n:h")) != -1) {
        switch (c) {
        case 'K':
            o->nk = pg_parse_llist(optarg, 0, 256, o->ks, RE_MAXK);
            if (o->nk < 0) return -1;
            break;
        case 's': if (bench_parse_size(optarg, &o->size) || o->size == 0) return -1; break;
        case 'T': if (pg_parse_pos(optarg, 3600.0, &o->budget)) return -1; break;
        case 'n': if (bench_parse_int(optarg, 1, 100000000, &o->iters)) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->size > ((size_t)1 << 26))
        return -1;
    return 0;
}

/* Ping-pongs until `max` round trips or `budget_ns`; rank 0 stores each
 * round trip (ns) in rt[] and returns the count; *loop_ns = the loop's
 * time. Rank 1 echoes until the message says stop. */
static long re_pingpong(unsigned char *buf, size_t size, long max, uint64_t budget_ns,
                        double *rt, uint64_t *loop_ns)
{
    int cnt = (int)size;
    long n = 0;
    if (pg_rank == 0) {
        uint64_t t0 = bench_now_ns(), t = t0;
        for (;;) {
            buf[0] = (n + 1 >= max || t - t0 >= budget_ns) ? RE_STOP : RE_GO;
            MPI_Send(buf, cnt, MPI_BYTE, 1, RE_TAG, MPI_COMM_WORLD);
            MPI_Recv(buf, cnt, MPI_BYTE, 1, RE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            uint64_t t1 = bench_now_ns();
            if (rt)
                rt[n] = (double)(t1 - t);
            t = t1;
            n++;
            if (buf[0] == RE_STOP)
                break;
        }
        *loop_ns = t - t0;
    } else if (pg_rank == 1) {
        do {
            MPI_Recv(buf, cnt, MPI_BYTE, 0, RE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, cnt, MPI_BYTE, 0, RE_TAG, MPI_COMM_WORLD);
            n++;
        } while (buf[0] != RE_STOP);
    }
    return n;
}

/* Round trips over 1 ms (a tick-long wait for a cpu, or worse): how
 * many, their share of the loop time, and the worst. */
static void re_print_stalls(long k, const double *rt, long n)
{
    double total = 0, stalled = 0, worst = 0;
    long count = 0;
    for (long i = 0; i < n; i++) {
        total += rt[i];
        if (rt[i] > worst)
            worst = rt[i];
        if (rt[i] > 1e6) {
            stalled += rt[i];
            count++;
        }
    }
    printf("# stalls %ld %ld %.1f %.0f\n", k, count, total > 0 ? 100.0 * stalled / total : 0.0,
           worst / 1e3);
}

int main(int argc, char **argv)
{
    pg_calibrate();
    int provided = pg_init(&argc, &argv, MPI_THREAD_FUNNELED);
    struct re_opts o;
    int prc = re_parse(argc, argv, &o);
    if (prc != 0) {
        if (pg_rank == 0)
            re_usage(prc > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return prc > 0 ? 0 : 2;
    }
    pg_need_two("reactivity");
    pg_require_level(provided, MPI_THREAD_FUNNELED, "reactivity");

    int cores = 0;
    if (pg_rank == 1) {
        cpu_set_t set;
        CPU_ZERO(&set);
        cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
        if (cores <= 0) {
            long n = sysconf(_SC_NPROCESSORS_ONLN);
            cores = n > 0 ? (int)n : 1;
        }
    }
    MPI_Bcast(&cores, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (pg_rank == 0) {
        pg_describe(stdout, "reactivity", MPI_THREAD_FUNNELED, provided);
        printf("# rank 1 may run on %d core(s); compute threads = K x %d\n", cores, cores);
        printf("# size=%zu budget=%gs per K, at most %ld round trips\n", o.size, o.budget,
               o.iters);
        printf("# lat_mean = loop time / (2 x round trips), lat_median = median round trip / 2 "
               "(us)\n");
        printf("# test K threads lat_mean lat_median round_trips\n");
        fflush(stdout);
    }

    unsigned char *buf = bench_alloc(o.size, 0);
    double *rt = pg_rank == 0 ? calloc((size_t)o.iters, sizeof *rt) : NULL;
    if (pg_rank == 0 && !rt)
        bench_die("out of memory");
    long max_threads = 0;
    for (int k = 0; k < o.nk; k++)
        if (o.ks[k] * cores > max_threads)
            max_threads = o.ks[k] * cores;
    pthread_t *th = calloc((size_t)max_threads + 1, sizeof *th);
    if (!th)
        bench_die("out of memory");

    for (int k = 0; k < o.nk; k++) {
        long nth = o.ks[k] * cores;
        if (pg_rank == 1) {
            atomic_store(&re_stop, 0);
            atomic_store(&re_started, 0);
            for (long i = 0; i < nth; i++)
                if (pthread_create(&th[i], NULL, re_spin, NULL) != 0)
                    bench_die("pthread_create failed (thread %ld of %ld)", i, nth);
            while (atomic_load(&re_started) < nth)
                sched_yield();
        }
        pg_sync01();
        uint64_t loop = 0;
        double b = o.budget * 1e9;
        long warm_n = o.iters / 10 < 1 ? 1 : o.iters / 10;
        re_pingpong(buf, o.size, warm_n, (uint64_t)(b / 10.0), NULL, &loop);
        long n = re_pingpong(buf, o.size, o.iters, (uint64_t)b, rt, &loop);
        if (pg_rank == 1) {
            atomic_store(&re_stop, 1);
            for (long i = 0; i < nth; i++)
                pthread_join(th[i], NULL);
        }
        if (pg_rank == 0) {
            double mean = (double)loop / 1e3 / (2.0 * (double)n);
            double med = pg_median(rt, (size_t)n) / 1e3 / 2.0;
            printf("reactivity %ld %ld %.3f %.3f %ld\n", o.ks[k], nth, mean, med, n);
            re_print_stalls(o.ks[k], rt, n);
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    free(th);
    free(rt);
    free(buf);
    MPI_Finalize();
    return 0;
}
