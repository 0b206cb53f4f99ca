/*
 * threads.c — concurrent ping-pongs between threads (issue 4, benchmark
 * 5): thread i of rank 0 with thread i of rank 1, tag i, MPI_Send /
 * MPI_Recv of `size` bytes (8). Any MPI with MPI_THREAD_MULTIPLE.
 *
 *   mpicc -std=c11 -O2 -pthread -o threads bench/progress/threads.c
 *   mpiexec -n 2 ./threads [-N list] [-s size] [-T seconds] [-n iters]
 *   mpiexec -n 9 ./threads -P [...]
 *
 * -P (peers): thread i of rank 0 ping-pongs with rank 1 + i % (size - 1)
 * instead of rank 1, one thread there per partner: threads of rank 0 then
 * match messages of different peers (what per-peer matching locks are
 * for; PROUST_MATCH_STRIPES=1 and PROUST_LOCKING=coarse for comparison).
 *
 * For each N (-N, default 1,2,4,8) both ranks start N threads. Each pair
 * does an untimed warm-up (a tenth of the budget), then all threads of a
 * rank meet at a barrier, thread 0 of each rank synchronises with the
 * other rank (0-byte round trip), a second barrier, and every pair
 * ping-pongs until -n (20000) round trips or -T seconds (1.0) have passed
 * (thread i of rank 0 decides and tells its partner in the message, as
 * reactivity.c does), so a slow configuration costs at most about -T.
 *
 * Per thread: latency = its loop time / (2 x its round trips), in us.
 * Aggregate message rate = all messages of all pairs (2 per round trip) /
 * (last thread's end - first thread's start), in messages/s.
 *
 * Needs MPI_THREAD_MULTIPLE: when an MPI does not provide it, rank 0 prints
 * "# SKIPPED: ..." and the program exits 0 without measuring.
 *
 * Output (rank 0): '#' lines, then one line per N:
 *   threads <N> <lat_median> <lat_min> <lat_max> <msg_rate> <round_trips>
 * (threads_peers with -P).
 * lat_* over the N threads of rank 0 (us); round_trips = sum over pairs.
 */
#include "pg_common.h"

#include <pthread.h>
#include <unistd.h>

enum { TH_TAG = 200, TH_TAG_SYNC = 199, TH_MAXN = 16, TH_GO = 1, TH_STOP = 2 };

struct th_opts {
    long ns[TH_MAXN];
    int nn;
    size_t size;
    double budget;
    long iters;
    int peers; /* -P */
};

struct th_arg {
    int id;
    int other; /* the rank it ping-pongs with */
    int first; /* the rank's first thread: it synchronises the ranks */
    const struct th_opts *o;
    pthread_barrier_t *bar;
    uint64_t start, end; /* ns */
    long n;              /* timed round trips */
};

static void th_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-N list] [-s size] [-T seconds] [-n iters]\n"
            "  -N  threads per rank, comma list (1,2,4,8)\n"
            "  -s  message size in bytes, >= 1 (8)\n"
            "  -T  time budget per N in seconds (1.0)\n"
            "  -n  at most this many timed round trips per thread (20000)\n"
            "  -P  thread i of rank 0 with rank 1 + i %% (size - 1), not all with rank 1\n",
            prog);
}

static int th_parse(int argc, char **argv, struct th_opts *o)
{
    static const long def[] = {1, 2, 4, 8};
    o->nn = (int)(sizeof def / sizeof def[0]);
    memcpy(o->ns, def, sizeof def);
    o->size = 8;
    o->budget = 1.0;
    o->iters = 20000;
    int c;
    opterr = 0;
    o->peers = 0;
    while ((c = getopt(argc, argv, "N:s:T:n:Ph")) != -1) {
        switch (c) {
        case 'N':
            o->nn = pg_parse_llist(optarg, 1, 1000, o->ns, TH_MAXN);
            if (o->nn < 0) return -1;
            break;
        case 's': if (bench_parse_size(optarg, &o->size) || o->size == 0) return -1; break;
        case 'T': if (pg_parse_pos(optarg, 3600.0, &o->budget)) return -1; break;
        case 'n': if (bench_parse_int(optarg, 1, 100000000, &o->iters)) return -1; break;
        case 'P': o->peers = 1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->size > ((size_t)1 << 26))
        return -1;
    return 0;
}

/* Ping-pong of one pair until `max` round trips or `budget_ns` (rank 0
 * decides); returns the round trips done. */
static long th_pingpong(unsigned char *buf, int cnt, int other, int tag, long max,
                        uint64_t budget_ns)
{
    long n = 0;
    if (pg_rank == 0) {
        uint64_t t0 = bench_now_ns();
        for (;;) {
            buf[0] = (n + 1 >= max || bench_now_ns() - t0 >= budget_ns) ? TH_STOP : TH_GO;
            MPI_Send(buf, cnt, MPI_BYTE, other, tag, MPI_COMM_WORLD);
            MPI_Recv(buf, cnt, MPI_BYTE, other, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            n++;
            if (buf[0] == TH_STOP)
                break;
        }
    } else {
        do {
            MPI_Recv(buf, cnt, MPI_BYTE, other, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, cnt, MPI_BYTE, other, tag, MPI_COMM_WORLD);
            n++;
        } while (buf[0] != TH_STOP);
    }
    return n;
}

static void *th_main(void *p)
{
    struct th_arg *a = p;
    const struct th_opts *o = a->o;
    unsigned char *buf = bench_alloc(o->size, 0);
    int cnt = (int)o->size, tag = TH_TAG + a->id;
    double b = o->budget * 1e9;
    long warm = o->iters / 10 < 1 ? 1 : o->iters / 10;
    th_pingpong(buf, cnt, a->other, tag, warm, (uint64_t)(b / 10.0));
    pthread_barrier_wait(a->bar);
    if (a->first && o->peers)
        MPI_Barrier(MPI_COMM_WORLD); /* every rank, once: see main */
    else if (a->first)
        pg_sync01();
    pthread_barrier_wait(a->bar);
    a->start = bench_now_ns();
    a->n = th_pingpong(buf, cnt, a->other, tag, o->iters, (uint64_t)b);
    a->end = bench_now_ns();
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    pg_calibrate();
    int provided = pg_init(&argc, &argv, MPI_THREAD_MULTIPLE);
    struct th_opts o;
    int prc = th_parse(argc, argv, &o);
    if (prc != 0) {
        if (pg_rank == 0)
            th_usage(prc > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return prc > 0 ? 0 : 2;
    }
    pg_need_two("threads");
    if (pg_rank == 0) {
        pg_describe(stdout, "threads", MPI_THREAD_MULTIPLE, provided);
        fflush(stdout);
    }
    pg_require_level(provided, MPI_THREAD_MULTIPLE, "threads");
    if (pg_rank == 0) {
        if (o.peers)
            printf("# N threads on rank 0, thread i <-> rank 1 + i %% %d (tag %d + i), ",
                   pg_size - 1, TH_TAG);
        else
            printf("# N threads per rank, thread i of rank 0 <-> thread i of rank 1 (tag %d + i), ",
                   TH_TAG);
        printf("size=%zu, budget=%gs per N, at most %ld round trips per thread\n", o.size,
               o.budget, o.iters);
        printf("# latency per thread = loop / (2 x round trips), us; rate = messages/s, all "
               "threads\n");
        printf("# test N lat_median lat_min lat_max msg_rate round_trips\n");
        fflush(stdout);
    }

    long max_n = 0;
    for (int k = 0; k < o.nn; k++)
        if (o.ns[k] > max_n)
            max_n = o.ns[k];
    pthread_t *th = calloc((size_t)max_n, sizeof *th);
    struct th_arg *args = calloc((size_t)max_n, sizeof *args);
    double *lat = calloc((size_t)max_n, sizeof *lat);
    if (!th || !args || !lat)
        bench_die("out of memory");

    for (int k = 0; k < o.nn; k++) {
        long n = o.ns[k];
        MPI_Barrier(MPI_COMM_WORLD);
        /* this rank's threads: all N on rank 0, the partners elsewhere */
        long mine = 0;
        for (long i = 0; i < n; i++) {
            int partner = o.peers ? 1 + (int)(i % (pg_size - 1)) : 1;
            if (pg_rank != 0 && pg_rank != partner)
                continue;
            args[mine] = (struct th_arg){.id = (int)i, .o = &o, .first = mine == 0,
                                         .other = pg_rank == 0 ? partner : 0};
            mine++;
        }
        if (mine) {
            pthread_barrier_t bar;
            pthread_barrier_init(&bar, NULL, (unsigned)mine);
            for (long i = 0; i < mine; i++) {
                args[i].bar = &bar;
                if (pthread_create(&th[i], NULL, th_main, &args[i]) != 0)
                    bench_die("pthread_create failed (thread %ld of %ld)", i, mine);
            }
            for (long i = 0; i < mine; i++)
                pthread_join(th[i], NULL);
            pthread_barrier_destroy(&bar);
        } else if (o.peers) {
            MPI_Barrier(MPI_COMM_WORLD); /* the sync the threads of the others do */
        }
        if (pg_rank == 0) {
            uint64_t first = UINT64_MAX, last = 0;
            long total = 0;
            for (long i = 0; i < n; i++) {
                if (args[i].start < first) first = args[i].start;
                if (args[i].end > last) last = args[i].end;
                total += args[i].n;
                lat[i] = (double)(args[i].end - args[i].start) / 1e3 / (2.0 * (double)args[i].n);
            }
            double rate = last > first ? 2.0 * (double)total * 1e9 / (double)(last - first) : 0.0;
            double med = pg_median(lat, (size_t)n); /* sorts lat */
            printf("%s %ld %.3f %.3f %.3f %.0f %ld\n", o.peers ? "threads_peers" : "threads", n,
                   med, lat[0], lat[n - 1], rate, total);
            fflush(stdout);
        }
    }

    MPI_Barrier(MPI_COMM_WORLD);
    free(lat);
    free(args);
    free(th);
    MPI_Finalize();
    return 0;
}
