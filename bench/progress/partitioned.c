/*
 * partitioned.c — what partitioned communication (MPI-4.0 §4) buys a
 * producer that fills a buffer piece by piece: the receiver sees the first
 * pieces while the sender still computes the others (issue 4; the MPI
 * needs MPI_Psend_init: MPICH 4, Proust MPI; Open MPI 4.1 has none and does
 * not build it). Any MPI with partitioned communication.
 *
 *   mpicc -std=c11 -O2 -pthread -o partitioned bench/progress/partitioned.c
 *   mpiexec -n 2 ./partitioned [-m min] [-M max] [-x step] [-P parts] [-F factors]
 *                              [-T threads] [-i iters]
 *
 * Rank 1 sends `size` bytes to rank 0 in P partitions of size / P bytes.
 * Producing a partition is compute(c) (pg_work: a fixed amount of
 * arithmetic, calibrated before MPI_Init to take c us on an idle core).
 * Rank 1's T threads (-T, 1) produce partitions p = id, id + T, ... One
 * timed round (rank 0's clock, from the end of a 0-byte sync round trip):
 *
 *   bulk         rank 1: the T threads compute every partition, then one
 *                MPI_Send(size)                   rank 0: MPI_Recv(size)
 *   partitioned  rank 1: MPI_Start; each thread: compute(c), MPI_Pready(p)
 *                for each of its partitions; MPI_Wait
 *                rank 0: MPI_Start, MPI_Parrived on partition 0, 1, ... in
 *                order until each has arrived (a consumer taking them as
 *                they come), MPI_Wait
 *
 * The requests (MPI_Psend_init / MPI_Precv_init, tag 31) are made once per
 * (size, P) and started every round. Per size: t_comm = median bulk time
 * with no compute. Per (size, P, factor f): c = f * t_comm / P, so that the
 * whole computation takes about f * t_comm; `iters` rounds of each kind,
 * interleaved (bulk, partitioned, bulk, ...), after iters / 10 (>= 2)
 * untimed ones; medians of
 *
 *   t_bulk     bulk round
 *   t_first    partitioned round until MPI_Parrived says partition 0 is in
 *   t_last     partitioned round until MPI_Wait returns
 *   t_compute  rank 1's computation alone (the compute of a bulk round,
 *              timed there: CPU taken by the MPI shows in it)
 *
 *   overlap % = (t_comm + t_compute - t_last) / min(t_comm, t_compute) * 100
 *
 * 100 = the transfer was entirely hidden behind the producer's computation,
 * 0 = none of it was (bulk's case by construction), < 0 = slower than
 * computing then sending; nan at f = 0, where t_last / t_bulk is the cost
 * of cutting the message in P. The first round of each point checks the
 * data (a pattern per point) and aborts on a mismatch.
 *
 * Defaults: sizes 64K .. 4M x4, P = 1,4,16,64, factors 0,1, T = 1,
 * 30 iterations. T > 1 needs MPI_THREAD_MULTIPLE (otherwise "# SKIPPED").
 *
 * Output (rank 0): '#' lines, then one line per point:
 *   partitioned <size> <P> <T> <factor> <t_cpu> <t_comm> <t_compute> <t_bulk> <t_first>
 *               <t_last> <overlap%>
 * times in us; t_cpu = the computation asked for per thread (P / T * c,
 * idle-core calibration).
 */
#include "pg_common.h"

#include <pthread.h>
#include <unistd.h>

enum { PT_TAG_BULK = 30, PT_TAG_PART = 31, PT_TAG_RESULT = 32, PT_MAXL = 32 };

struct pt_opts {
    size_t min, max, step;
    long parts[PT_MAXL];
    int nparts;
    double factors[PT_MAXL];
    int nfactors;
    long threads[PT_MAXL];
    int nthreads;
    long iters;
};

/* ---- rank 1's producer threads ------------------------------------------ */
/* Thread 0 is the main thread; threads 1..T-1 wait at `start` for a round,
 * run it, and meet thread 0 again at `end`. */
struct pt_pool {
    int n;                    /* T */
    pthread_t th[PT_MAXL];
    pthread_barrier_t start, end;
    /* the round: */
    int quit;
    MPI_Request req;          /* partitioned send, or MPI_REQUEST_NULL for bulk */
    int parts;
    uint64_t work;            /* per partition */
};

struct pt_worker {
    struct pt_pool *pool;
    int id;
};

/* Produce thread `id`'s partitions (and mark them ready in a partitioned round). */
static void pt_produce(struct pt_pool *pool, int id)
{
    for (int p = id; p < pool->parts; p += pool->n) {
        pg_work(pool->work);
        if (pool->req != MPI_REQUEST_NULL)
            MPI_Pready(p, pool->req);
    }
}

static void *pt_worker_main(void *arg)
{
    struct pt_worker *w = arg;
    struct pt_pool *pool = w->pool;
    for (;;) {
        pthread_barrier_wait(&pool->start);
        if (pool->quit)
            return NULL;
        pt_produce(pool, w->id);
        pthread_barrier_wait(&pool->end);
    }
}

static struct pt_worker pt_workers[PT_MAXL];

static void pt_pool_start(struct pt_pool *pool, int n)
{
    pool->n = n;
    pool->quit = 0;
    if (n == 1)
        return;
    pthread_barrier_init(&pool->start, NULL, (unsigned)n);
    pthread_barrier_init(&pool->end, NULL, (unsigned)n);
    for (int i = 1; i < n; i++) {
        pt_workers[i] = (struct pt_worker){pool, i};
        if (pthread_create(&pool->th[i], NULL, pt_worker_main, &pt_workers[i]) != 0)
            bench_die("pthread_create failed (thread %d of %d)", i, n);
    }
}

static void pt_pool_stop(struct pt_pool *pool)
{
    if (pool->n == 1)
        return;
    pool->quit = 1;
    pthread_barrier_wait(&pool->start);
    for (int i = 1; i < pool->n; i++)
        pthread_join(pool->th[i], NULL);
    pthread_barrier_destroy(&pool->start);
    pthread_barrier_destroy(&pool->end);
}

/* One round's production by all T threads (the caller is thread 0). */
static void pt_pool_round(struct pt_pool *pool, MPI_Request req, int parts, uint64_t work)
{
    pool->req = req;
    pool->parts = parts;
    pool->work = work;
    if (pool->n > 1)
        pthread_barrier_wait(&pool->start);
    pt_produce(pool, 0);
    if (pool->n > 1)
        pthread_barrier_wait(&pool->end);
}

/* ---- options -------------------------------------------------------------- */

static void pt_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-m min] [-M max] [-x step] [-P parts] [-F factors] [-T threads]\n"
            "          [-i iters]\n"
            "  -m, -M, -x  message sizes: min (64K), max (4M), factor (4)\n"
            "  -P  partitions, comma list (1,4,16,64); a size not a multiple is skipped\n"
            "  -F  total computation as multiples of t_comm, comma list (0,1)\n"
            "  -T  producer threads on rank 1, comma list (1)\n"
            "  -i  timed rounds per point and kind, medians (30)\n",
            prog);
}

static int pt_parse(int argc, char **argv, struct pt_opts *o)
{
    *o = (struct pt_opts){.min = (size_t)64 << 10, .max = (size_t)4 << 20, .step = 4,
                          .parts = {1, 4, 16, 64}, .nparts = 4, .factors = {0, 1},
                          .nfactors = 2, .threads = {1}, .nthreads = 1, .iters = 30};
    long l;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "m:M:x:P:F:T:i:h")) != -1) {
        switch (c) {
        case 'm': if (bench_parse_size(optarg, &o->min)) return -1; break;
        case 'M': if (bench_parse_size(optarg, &o->max)) return -1; break;
        case 'x':
            if (bench_parse_int(optarg, 2, 1024, &l)) return -1;
            o->step = (size_t)l;
            break;
        case 'P':
            o->nparts = pg_parse_llist(optarg, 1, 1 << 20, o->parts, PT_MAXL);
            if (o->nparts < 0) return -1;
            break;
        case 'F':
            o->nfactors = pg_parse_dlist(optarg, 0.0, 100.0, o->factors, PT_MAXL);
            if (o->nfactors < 0) return -1;
            break;
        case 'T':
            o->nthreads = pg_parse_llist(optarg, 1, PT_MAXL, o->threads, PT_MAXL);
            if (o->nthreads < 0) return -1;
            break;
        case 'i': if (bench_parse_int(optarg, 1, 1000000, &o->iters)) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->min == 0 || o->min > o->max || o->max > ((size_t)1 << 30))
        return -1;
    return 0;
}

/* ---- one round -------------------------------------------------------------- */

static unsigned char *pt_buf;

struct pt_times {
    double first, last; /* us, rank 0 */
    double compute;     /* us, rank 1 */
};

/* A bulk round: rank 1 computes every partition, then sends. */
static struct pt_times pt_bulk(struct pt_pool *pool, size_t size, int parts, uint64_t work)
{
    struct pt_times t = {0, 0, 0};
    pg_sync01();
    if (pg_rank == 0) {
        uint64_t t0 = bench_now_ns();
        MPI_Recv(pt_buf, (int)size, MPI_BYTE, 1, PT_TAG_BULK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t.first = t.last = (double)(bench_now_ns() - t0) / 1e3;
    } else if (pg_rank == 1) {
        uint64_t t0 = bench_now_ns();
        pt_pool_round(pool, MPI_REQUEST_NULL, parts, work);
        t.compute = (double)(bench_now_ns() - t0) / 1e3;
        MPI_Send(pt_buf, (int)size, MPI_BYTE, 0, PT_TAG_BULK, MPI_COMM_WORLD);
    }
    return t;
}

/* A partitioned round on the started-again request `req`. */
static struct pt_times pt_part(struct pt_pool *pool, MPI_Request *req, int parts, uint64_t work)
{
    struct pt_times t = {0, 0, 0};
    pg_sync01();
    if (pg_rank == 0) {
        uint64_t t0 = bench_now_ns();
        MPI_Start(req);
        for (int p = 0; p < parts; p++) {
            int flag = 0;
            while (!flag)
                MPI_Parrived(*req, p, &flag);
            if (p == 0)
                t.first = (double)(bench_now_ns() - t0) / 1e3;
        }
        MPI_Wait(req, MPI_STATUS_IGNORE);
        t.last = (double)(bench_now_ns() - t0) / 1e3;
    } else if (pg_rank == 1) {
        MPI_Start(req);
        pt_pool_round(pool, *req, parts, work);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
    return t;
}

/* The pattern of a point: differs between points, so that a stale buffer
 * does not pass the check. */
static unsigned char pt_pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + seed * 17u + (i >> 12)) & 0xffu);
}

static void pt_fill(size_t size, unsigned seed)
{
    for (size_t i = 0; i < size; i++)
        pt_buf[i] = pg_rank == 1 ? pt_pattern(i, seed) : 0;
}

static void pt_check(size_t size, unsigned seed, const char *what, int parts)
{
    if (pg_rank != 0)
        return;
    for (size_t i = 0; i < size; i++)
        if (pt_buf[i] != pt_pattern(i, seed))
            bench_die("%s round of %zu bytes in %d partitions: byte %zu is %u, expected %u", what,
                      size, parts, i, pt_buf[i], pt_pattern(i, seed));
}

/* ---- one point ------------------------------------------------------------- */

struct pt_point {
    size_t size;
    int parts, threads;
    double factor, t_comm;
    unsigned seed;
};

static void pt_run_point(struct pt_pool *pool, const struct pt_opts *o, MPI_Request *req,
                         const struct pt_point *pt)
{
    double c_us = pt->factor * pt->t_comm / pt->parts;
    uint64_t work = pg_work_for_us(c_us);
    long warm = o->iters / 10 < 2 ? 2 : o->iters / 10;
    size_t n = (size_t)o->iters;
    double *bulk = calloc(n, sizeof *bulk), *first = calloc(n, sizeof *first);
    double *last = calloc(n, sizeof *last), *comp = calloc(n, sizeof *comp);
    if (!bulk || !first || !last || !comp)
        bench_die("out of memory");

    /* checked rounds first (each kind, fresh data), then the warm-up */
    pt_fill(pt->size, pt->seed);
    pt_bulk(pool, pt->size, pt->parts, work);
    pt_check(pt->size, pt->seed, "bulk", pt->parts);
    pt_fill(pt->size, pt->seed + 1);
    pt_part(pool, req, pt->parts, work);
    pt_check(pt->size, pt->seed + 1, "partitioned", pt->parts);
    for (long k = 0; k < warm; k++) {
        pt_bulk(pool, pt->size, pt->parts, work);
        pt_part(pool, req, pt->parts, work);
    }
    for (size_t k = 0; k < n; k++) {
        struct pt_times b = pt_bulk(pool, pt->size, pt->parts, work);
        struct pt_times p = pt_part(pool, req, pt->parts, work);
        bulk[k] = b.last;
        comp[k] = b.compute;
        first[k] = p.first;
        last[k] = p.last;
    }
    double t_compute = 0.0;
    if (pg_rank == 1) {
        t_compute = pg_median(comp, n);
        MPI_Send(&t_compute, 1, MPI_DOUBLE, 0, PT_TAG_RESULT, MPI_COMM_WORLD);
    } else if (pg_rank == 0) {
        MPI_Recv(&t_compute, 1, MPI_DOUBLE, 1, PT_TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t_bulk = pg_median(bulk, n), t_first = pg_median(first, n);
        double t_last = pg_median(last, n);
        double lo = pt->t_comm < t_compute ? pt->t_comm : t_compute;
        double ov = pt->factor > 0.0 && lo > 0.0
                        ? (pt->t_comm + t_compute - t_last) / lo * 100.0
                        : NAN;
        double t_cpu = c_us * (double)((pt->parts + pt->threads - 1) / pt->threads);
        printf("partitioned %zu %d %d %g %.3f %.3f %.3f %.3f %.3f %.3f %.1f\n", pt->size,
               pt->parts, pt->threads, pt->factor, t_cpu, pt->t_comm, t_compute, t_bulk, t_first,
               t_last, ov);
        fflush(stdout);
    }
    free(bulk);
    free(first);
    free(last);
    free(comp);
}

/* Median bulk round without compute (rank 0's), known to every rank. */
static double pt_measure_comm(struct pt_pool *pool, const struct pt_opts *o, size_t size)
{
    size_t n = (size_t)o->iters;
    double *v = calloc(n, sizeof *v);
    if (!v)
        bench_die("out of memory");
    for (int k = 0; k < 2; k++)
        pt_bulk(pool, size, 1, 0);
    for (size_t k = 0; k < n; k++)
        v[k] = pt_bulk(pool, size, 1, 0).last;
    double t = pg_rank == 0 ? pg_median(v, n) : 0.0;
    free(v);
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    pg_calibrate();
    struct pt_opts o;
    int prc = pt_parse(argc, argv, &o);
    int required = MPI_THREAD_FUNNELED;
    for (int k = 0; prc == 0 && k < o.nthreads; k++)
        if (o.threads[k] > 1)
            required = MPI_THREAD_MULTIPLE;
    int provided = pg_init(&argc, &argv, required);
    if (prc != 0) {
        if (pg_rank == 0)
            pt_usage(prc > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return prc > 0 ? 0 : 2;
    }
    pg_need_two("partitioned");
    if (pg_rank == 0) {
        pg_describe(stdout, "partitioned", required, provided);
        fflush(stdout);
    }
    pg_require_level(provided, required, "partitioned");
    if (pg_rank == 0) {
        printf("# rank 1 sends size bytes to rank 0 in P partitions; bulk: compute all, "
               "MPI_Send; partitioned: MPI_Pready after each partition's compute, rank 0 polls "
               "MPI_Parrived in order; %ld rounds per point, medians\n", o.iters);
        printf("# test size P T factor t_cpu t_comm t_compute t_bulk t_first t_last overlap%%\n");
        fflush(stdout);
    }
    pt_buf = bench_alloc(o.max, 0);

    unsigned seed = 1;
    for (int ti = 0; ti < o.nthreads; ti++) {
        struct pt_pool pool;
        int threads = (int)o.threads[ti];
        pt_pool_start(&pool, pg_rank == 1 ? threads : 1);
        for (size_t size = o.min; size <= o.max; size *= o.step) {
            double t_comm = pt_measure_comm(&pool, &o, size);
            for (int pi = 0; pi < o.nparts; pi++) {
                int parts = (int)o.parts[pi];
                if (size % (size_t)parts != 0)
                    continue;
                MPI_Count count = (MPI_Count)(size / (size_t)parts);
                MPI_Request req = MPI_REQUEST_NULL;
                if (pg_rank == 0)
                    MPI_Precv_init(pt_buf, parts, count, MPI_BYTE, 1, PT_TAG_PART,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &req);
                else if (pg_rank == 1)
                    MPI_Psend_init(pt_buf, parts, count, MPI_BYTE, 0, PT_TAG_PART,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, &req);
                for (int fi = 0; fi < o.nfactors; fi++) {
                    struct pt_point pt = {size, parts, threads, o.factors[fi], t_comm, seed};
                    seed += 2;
                    pt_run_point(&pool, &o, &req, &pt);
                }
                if (req != MPI_REQUEST_NULL)
                    MPI_Request_free(&req);
            }
            if (size > o.max / o.step)
                break;
        }
        pt_pool_stop(&pool);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(pt_buf);
    MPI_Finalize();
    return 0;
}
