/*
 * coll_latency.c — latency of MPI collectives on MPI_COMM_WORLD, every rank
 * taking part: MPI_Barrier, MPI_Bcast (root 0, MPI_BYTE), MPI_Allreduce
 * (MPI_DOUBLE, MPI_SUM) and MPI_Alltoall (MPI_BYTE; size = bytes per pair of
 * ranks, as osu_alltoall counts it). Builds with any MPI's compiler wrapper.
 *
 *   mpicc -O2 -o coll_latency bench/mpi/coll_latency.c
 *   mpiexec -n 8 ./coll_latency [-t barrier,bcast,allreduce,alltoall|all]
 *                               [-m min] [-M max] [-f factor] [-i scale] [-r reps]
 *
 * One point (collective, size): the result is checked once against a
 * reference (untimed, so a broken collective cannot post a fast time), then
 * iters/10 warm-up calls, then `reps` timed loops of `iters` calls, each
 * loop started by an MPI_Barrier. A loop's value is the slowest rank's mean
 * time per call (the collective is done when its last rank is); the point's
 * value is the median of the loops, in microseconds. Iterations: 1000 up
 * to 1 KiB, then 1 MiB / size (at least 10), times -i.
 *
 * Output (rank 0): '#' lines for humans, then one line per point,
 *   coll:np=<ranks> <collective> <size-bytes> <us>
 * in the "<test> <metric> <size> <value>" format of the other benchmarks
 * (the barrier's size is 0).
 */
#include "bk_mpi.h"

#include <stdint.h>
#include <unistd.h>

#include "../common/bench_util.h"

enum { CL_BARRIER = 1u, CL_BCAST = 2u, CL_ALLREDUCE = 4u, CL_ALLTOALL = 8u };
#define CL_ALL (CL_BARRIER | CL_BCAST | CL_ALLREDUCE | CL_ALLTOALL)

static const struct {
    unsigned bit;
    const char *name;
} cl_colls[] = {{CL_BARRIER, "barrier"},
                {CL_BCAST, "bcast"},
                {CL_ALLREDUCE, "allreduce"},
                {CL_ALLTOALL, "alltoall"}};
#define CL_NCOLLS (sizeof cl_colls / sizeof cl_colls[0])

struct cl_opts {
    unsigned colls;
    size_t min, max; /* bytes */
    long factor;     /* sizes: min, min*factor, ..., then max */
    double iscale;
    long reps;
};

static void cl_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-t barrier,bcast,allreduce,alltoall|all] [-m min] [-M max]\n"
            "          [-f factor] [-i scale] [-r reps]\n"
            "  -t  collective(s), comma-separated (default all)\n"
            "  -m  smallest size in bytes, K/M suffixes allowed (default 8)\n"
            "  -M  largest size (default 1M)\n"
            "  -f  size factor: min, min*f, min*f^2, ..., and max (default 4)\n"
            "  -i  iteration scale factor, e.g. 0.01 for a quick run (default 1)\n"
            "  -r  timed loops per point; the median is printed (default 5)\n",
            prog);
}

static int cl_parse(int argc, char **argv, struct cl_opts *o)
{
    o->colls = CL_ALL;
    o->min = 8;
    o->max = (size_t)1 << 20;
    o->factor = 4;
    o->iscale = 1.0;
    o->reps = 5;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "t:m:M:f:i:r:h")) != -1) {
        switch (c) {
        case 't': {
            o->colls = 0;
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", optarg);
            for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ",")) {
                unsigned bit = strcmp(tok, "all") == 0 ? CL_ALL : 0;
                for (size_t i = 0; i < CL_NCOLLS; i++)
                    if (strcmp(tok, cl_colls[i].name) == 0)
                        bit = cl_colls[i].bit;
                if (!bit)
                    return -1;
                o->colls |= bit;
            }
            if (o->colls == 0)
                return -1;
            break;
        }
        case 'm': if (bench_parse_size(optarg, &o->min) || o->min == 0) return -1; break;
        case 'M': if (bench_parse_size(optarg, &o->max)) return -1; break;
        case 'f': if (bench_parse_int(optarg, 2, 1024, &o->factor)) return -1; break;
        case 'i': {
            char *end = NULL;
            o->iscale = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->iscale > 0.0) || o->iscale > 1e6)
                return -1;
            break;
        }
        case 'r': if (bench_parse_int(optarg, 1, 100000, &o->reps)) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    /* max bounds every buffer (alltoall: max * ranks) and int counts */
    if (optind != argc || o->min > o->max || o->max > ((size_t)1 << 28))
        return -1;
    return 0;
}

static long cl_iters(size_t size, double scale)
{
    /* Loops of a few ms at least: shorter ones measure the machine's
     * hiccups more than the collective. */
    double base = size <= 1024 ? 20000.0 : (double)(1u << 24) / (double)size;
    if (base < 10.0)
        base = 10.0;
    double v = base * scale;
    return v < 2.0 ? 2 : (long)v;
}

static int cl_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cl_fail(const char *coll, size_t size, size_t at, const char *what)
{
    fprintf(stderr, "coll_latency: rank %d: wrong %s result at size %zu, element %zu: %s\n",
            bk_rank, coll, size, at, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static unsigned char cl_a2a_byte(int from, int to, size_t k)
{
    return (unsigned char)((size_t)from * 31u + (size_t)to * 7u + k);
}

static unsigned char cl_bcast_byte(size_t size, size_t k)
{
    return (unsigned char)(k * 13u + size);
}

/* Run the collective once on data with a known result and check it. */
static void cl_verify(unsigned coll, size_t size, unsigned char *sbuf, unsigned char *rbuf)
{
    int n = bk_size, me = bk_rank;
    switch (coll) {
    case CL_BARRIER:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case CL_BCAST:
        for (size_t k = 0; k < size; k++)
            sbuf[k] = me == 0 ? cl_bcast_byte(size, k) : 0;
        MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (size_t k = 0; k < size; k++)
            if (sbuf[k] != cl_bcast_byte(size, k))
                cl_fail("bcast", size, k, "byte differs from the root's");
        break;
    case CL_ALLREDUCE: {
        size_t count = size / sizeof(double);
        double *s = (double *)(void *)sbuf, *r = (double *)(void *)rbuf;
        for (size_t k = 0; k < count; k++) {
            s[k] = (double)me + (double)(k % 7);
            r[k] = -1.0;
        }
        MPI_Allreduce(s, r, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (size_t k = 0; k < count; k++) {
            double want = (double)n * (double)(n - 1) / 2.0 + (double)n * (double)(k % 7);
            if (r[k] != want)
                cl_fail("allreduce", size, k, "not the sum over the ranks");
        }
        break;
    }
    case CL_ALLTOALL:
        for (int j = 0; j < n; j++)
            for (size_t k = 0; k < size; k++) {
                sbuf[(size_t)j * size + k] = cl_a2a_byte(me, j, k);
                rbuf[(size_t)j * size + k] = 0;
            }
        MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        for (int j = 0; j < n; j++)
            for (size_t k = 0; k < size; k++)
                if (rbuf[(size_t)j * size + k] != cl_a2a_byte(j, me, k))
                    cl_fail("alltoall", size, (size_t)j * size + k, "not the block sent to me");
        break;
    }
}

/* `iters` calls of the collective. */
static void cl_loop(unsigned coll, size_t size, long iters, unsigned char *sbuf,
                    unsigned char *rbuf)
{
    int count = (int)size;
    switch (coll) {
    case CL_BARRIER:
        for (long i = 0; i < iters; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        break;
    case CL_BCAST:
        for (long i = 0; i < iters; i++)
            MPI_Bcast(sbuf, count, MPI_BYTE, 0, MPI_COMM_WORLD);
        break;
    case CL_ALLREDUCE:
        count = (int)(size / sizeof(double));
        for (long i = 0; i < iters; i++)
            MPI_Allreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CL_ALLTOALL:
        for (long i = 0; i < iters; i++)
            MPI_Alltoall(sbuf, count, MPI_BYTE, rbuf, count, MPI_BYTE, MPI_COMM_WORLD);
        break;
    }
}

/* One point: median over `reps` loops of the slowest rank's mean, in us
 * (rank 0; other ranks get 0). */
static double cl_point(unsigned coll, size_t size, const struct cl_opts *o, unsigned char *sbuf,
                       unsigned char *rbuf, double *loops)
{
    long iters = cl_iters(size, o->iscale);
    cl_verify(coll, size, sbuf, rbuf);
    cl_loop(coll, size, iters / 10 < 1 ? 1 : iters / 10, sbuf, rbuf);
    for (long r = 0; r < o->reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        uint64_t t0 = bench_now_ns();
        cl_loop(coll, size, iters, sbuf, rbuf);
        double mine = (double)(bench_now_ns() - t0) / 1e3 / (double)iters, slowest = 0.0;
        MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        loops[r] = slowest;
    }
    if (bk_rank != 0)
        return 0.0;
    qsort(loops, (size_t)o->reps, sizeof *loops, cl_cmp_double);
    size_t m = (size_t)o->reps / 2;
    return o->reps % 2 ? loops[m] : (loops[m - 1] + loops[m]) / 2.0;
}

static void cl_print(const char *coll, size_t size, double us)
{
    if (bk_rank == 0) {
        printf("coll:np=%d %s %zu %.3f\n", bk_size, coll, size, us);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    bk_init(&argc, &argv);
    struct cl_opts o;
    int prc = cl_parse(argc, argv, &o);
    if (prc != 0) {
        if (bk_rank == 0)
            cl_usage(prc > 0 ? stdout : stderr, argv[0]);
        bk_finalize();
        return prc > 0 ? 0 : 2;
    }
    if (bk_rank == 0) {
        printf("# Proust benchmark suite: coll_latency (%s)\n", BK_IMPL);
        bk_describe(stdout);
        printf("# ranks=%d sizes=%zu..%zu factor=%ld iscale=%g reps=%ld\n", bk_size, o.min,
               o.max, o.factor, o.iscale, o.reps);
        printf("# value: median over reps of the slowest rank's mean time per call, us\n");
        printf("# test collective size value\n");
        fflush(stdout);
    }

    size_t bytes = o.max * (size_t)bk_size; /* alltoall's buffers */
    unsigned char *sbuf = bench_alloc(bytes, 1);
    unsigned char *rbuf = bench_alloc(bytes, 0);
    double *loops = calloc((size_t)o.reps, sizeof *loops);
    if (!loops)
        bench_die("out of memory");

    for (size_t c = 0; c < CL_NCOLLS; c++) {
        unsigned coll = cl_colls[c].bit;
        if (!(o.colls & coll))
            continue;
        if (coll == CL_BARRIER) {
            cl_print("barrier", 0, cl_point(coll, 0, &o, sbuf, rbuf, loops));
            continue;
        }
        size_t size = o.min;
        for (;;) {
            /* allreduce: whole doubles only */
            size_t eff = coll == CL_ALLREDUCE ? size / sizeof(double) * sizeof(double) : size;
            if (eff > 0)
                cl_print(cl_colls[c].name, eff, cl_point(coll, eff, &o, sbuf, rbuf, loops));
            if (size == o.max)
                break;
            size = size > o.max / (size_t)o.factor ? o.max : size * (size_t)o.factor;
        }
    }

    free(loops);
    free(rbuf);
    free(sbuf);
    bk_finalize();
    return 0;
}
