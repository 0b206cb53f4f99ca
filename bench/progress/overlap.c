/*
 * overlap.c — how much communication a process overlaps with its own
 * computation (issue 4, benchmarks 1 and 2; seed 001). Any MPI.
 *
 *   mpicc -std=c11 -O2 -o overlap bench/progress/overlap.c
 *   mpiexec -n 2 ./overlap [-t MODES] [-m min] [-M max] [-x step] [-F factors]
 *                          [-C size] [-a min] [-A max] [-w us] [-i iters] [-S]
 *
 * One timed operation (rank 0's clock, ranks synchronised before each one
 * by a 0-byte round trip or, where every rank takes part, a barrier; the
 * sync is not timed):
 *
 *   isend       rank 0: MPI_Isend(size) ; compute(t) ; MPI_Wait    rank 1: MPI_Recv
 *   irecv       rank 0: MPI_Irecv(size) ; compute(t) ; MPI_Wait    rank 1: MPI_Send
 *   both        every rank: MPI_Irecv + MPI_Isend(size) from/to its partner
 *               (rank ^ 1), compute(t), MPI_Waitall
 *   iallreduce  every rank: MPI_Iallreduce(size / 8 doubles, MPI_SUM),
 *               compute(t), MPI_Wait
 *   ibcast      every rank: MPI_Ibcast(size / 8 doubles, root 0), compute(t),
 *               MPI_Wait
 *   seq         as isend with a fixed compute(-w us, 20) and small sizes
 *               (-a 1 .. -A 32K, x2): the time of the sequence
 *
 * compute(t) is a fixed amount of arithmetic (pg_work), calibrated once
 * before MPI_Init to take t us on an idle core; it never watches the
 * clock, so CPU time taken from it by a progress thread or by the library
 * makes it longer and lowers the overlap.
 *
 * Per mode and size: t_comm = median time of the operation without
 * compute; then for each factor f: t = f * t_comm (rank 0's, broadcast),
 * and `iters` times, interleaved, compute(t) alone (t_compute) and the
 * operation with compute(t) (t_total), medians. Then
 *
 *   overlap % = (t_comm + t_compute - t_total) / min(t_comm, t_compute) * 100
 *
 * 100 = the communication was entirely hidden behind the computation,
 * 0 = none of it was; negative = the two together took longer than one
 * after the other (the library slowed the computation down). nan at f = 0.
 * Factors: isend, irecv: 0,0.25,0.5,1,1.5,2; both, iallreduce, ibcast: 1,2
 * (-F sets them for all but seq). Sizes: 64K .. 4M, x4 (-m, -M, -x);
 * collectives: 1M (-C).
 *
 * Output (rank 0): '#' lines, then one line per point:
 *   overlap <mode> <size> <factor> <t_cpu> <t_comm> <t_compute> <t_total> <overlap%>
 * times in us; t_cpu = the compute asked for (t, idle-core calibration),
 * t_compute = what it took alone inside the MPI job; factor is "-" for seq.
 */
#include "pg_common.h"

#include <errno.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { OV_ISEND, OV_IRECV, OV_BOTH, OV_IALLREDUCE, OV_IBCAST, OV_SEQ, OV_NMODES };
static const char *ov_names[OV_NMODES] = {"isend", "irecv", "both", "iallreduce", "ibcast", "seq"};
enum { OV_TAG = 11, OV_MAXF = 32 };

struct ov_opts {
    unsigned modes; /* bit per OV_* */
    size_t min, max, step;
    double factors[OV_MAXF];
    int nfactors; /* 0 = per-mode defaults */
    size_t coll;
    size_t seq_min, seq_max;
    double seq_us;
    long iters;
};

static unsigned char *ov_sbuf, *ov_rbuf;
static int ov_sleeps; /* -S */

/* compute(t): the arithmetic, or with -S a sleep of the same length (timer
 * slack 1 ns), which leaves every core free: what background progress
 * does for a process that computes on a machine with a core to spare,
 * seen on one without. A diagnostic, not one of the measurements. */
static void ov_compute(uint64_t work)
{
    if (!ov_sleeps) {
        pg_work(work);
        return;
    }
    double ns = (double)work / pg_iters_per_us * 1e3;
    struct timespec ts = {(time_t)(ns / 1e9), (long)((uint64_t)ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ; /* a signal: sleep what is left */
}

static void ov_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-t MODES] [-m min] [-M max] [-x step] [-F factors] [-C size]\n"
            "          [-a min] [-A max] [-w us] [-i iters] [-S]\n"
            "  -t  isend,irecv,both,iallreduce,ibcast,seq or all (default all)\n"
            "  -m, -M, -x  sizes of isend/irecv/both: min (64K), max (4M), factor (4)\n"
            "  -F  compute times as multiples of t_comm, comma list\n"
            "      (default 0,0.25,0.5,1,1.5,2 for isend/irecv, 1,2 for the others)\n"
            "  -C  size of iallreduce / ibcast in bytes (1M)\n"
            "  -a, -A  sizes of seq: min (1), max (32K), x2\n"
            "  -w  compute of seq in us (20)\n"
            "  -i  timed iterations per point, medians (30); warm-up: iters/10, >= 2\n"
            "  -S  compute sleeps instead (cores left free: background progress alone)\n",
            prog);
}

static int ov_parse(int argc, char **argv, struct ov_opts *o)
{
    o->modes = (1u << OV_NMODES) - 1;
    o->min = (size_t)64 << 10;
    o->max = (size_t)4 << 20;
    o->step = 4;
    o->nfactors = 0;
    o->coll = (size_t)1 << 20;
    o->seq_min = 1;
    o->seq_max = (size_t)32 << 10;
    o->seq_us = 20.0;
    o->iters = 30;
    long l;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "t:m:M:x:F:C:a:A:w:i:Sh")) != -1) {
        switch (c) {
        case 't': {
            char tmp[128];
            snprintf(tmp, sizeof tmp, "%s", optarg);
            o->modes = 0;
            char *save = NULL;
            for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                unsigned bit = strcmp(tok, "all") == 0 ? (1u << OV_NMODES) - 1 : 0;
                for (int m = 0; m < OV_NMODES; m++)
                    if (strcmp(tok, ov_names[m]) == 0)
                        bit = 1u << m;
                if (!bit)
                    return -1;
                o->modes |= bit;
            }
            if (!o->modes)
                return -1;
            break;
        }
        case 'm': if (bench_parse_size(optarg, &o->min) || o->min == 0) return -1; break;
        case 'M': if (bench_parse_size(optarg, &o->max)) return -1; break;
        case 'x':
            if (bench_parse_int(optarg, 2, 1024, &l)) return -1;
            o->step = (size_t)l;
            break;
        case 'F':
            o->nfactors = pg_parse_dlist(optarg, 0.0, 1000.0, o->factors, OV_MAXF);
            if (o->nfactors < 0) return -1;
            break;
        case 'C': if (bench_parse_size(optarg, &o->coll) || o->coll < 8) return -1; break;
        case 'a': if (bench_parse_size(optarg, &o->seq_min) || o->seq_min == 0) return -1; break;
        case 'A': if (bench_parse_size(optarg, &o->seq_max)) return -1; break;
        case 'w': if (pg_parse_pos(optarg, 1e7, &o->seq_us)) return -1; break;
        case 'i': if (bench_parse_int(optarg, 1, 10000000, &o->iters)) return -1; break;
        case 'S': ov_sleeps = 1; (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->min > o->max || o->seq_min > o->seq_max ||
        o->max > (size_t)INT_MAX || o->seq_max > (size_t)INT_MAX ||
        o->coll / 8 > (size_t)INT_MAX)
        return -1;
    return 0;
}

/* The modes in which every rank takes part (barrier sync), else ranks 0
 * and 1 only (0-byte round trip). */
static int ov_all_ranks(int m)
{
    return m == OV_BOTH || m == OV_IALLREDUCE || m == OV_IBCAST;
}

static int ov_partner(void)
{
    int p = pg_rank ^ 1;
    return p < pg_size ? p : -1;
}

static int ov_computes(int m)
{
    if (ov_all_ranks(m))
        return m != OV_BOTH || ov_partner() >= 0;
    return pg_rank == 0;
}

static void ov_sync(int m)
{
    if (ov_all_ranks(m))
        MPI_Barrier(MPI_COMM_WORLD);
    else
        pg_sync01();
}

/* One operation of mode m with `work` compute in between; returns the
 * time in us on rank 0 (0 elsewhere). */
static double ov_op(int m, size_t size, uint64_t work)
{
    MPI_Request r[2];
    int nr = 0, cnt = (int)size, peer = ov_partner();
    ov_sync(m);
    uint64_t t0 = bench_now_ns();
    switch (m) {
    case OV_ISEND:
    case OV_SEQ:
        if (pg_rank == 0)
            MPI_Isend(ov_sbuf, cnt, MPI_BYTE, 1, OV_TAG, MPI_COMM_WORLD, &r[nr++]);
        break;
    case OV_IRECV:
        if (pg_rank == 0)
            MPI_Irecv(ov_rbuf, cnt, MPI_BYTE, 1, OV_TAG, MPI_COMM_WORLD, &r[nr++]);
        break;
    case OV_BOTH:
        if (peer >= 0) {
            MPI_Irecv(ov_rbuf, cnt, MPI_BYTE, peer, OV_TAG, MPI_COMM_WORLD, &r[nr++]);
            MPI_Isend(ov_sbuf, cnt, MPI_BYTE, peer, OV_TAG, MPI_COMM_WORLD, &r[nr++]);
        }
        break;
    case OV_IALLREDUCE:
        MPI_Iallreduce(ov_sbuf, ov_rbuf, (int)(size / sizeof(double)), MPI_DOUBLE, MPI_SUM,
                       MPI_COMM_WORLD, &r[nr++]);
        break;
    case OV_IBCAST:
        MPI_Ibcast(ov_sbuf, (int)(size / sizeof(double)), MPI_DOUBLE, 0, MPI_COMM_WORLD,
                   &r[nr++]);
        break;
    }
    if (work && ov_computes(m))
        ov_compute(work);
    if (nr == 1)
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    else if (nr == 2) {
        MPI_Status st[2]; /* not MPI_STATUSES_IGNORE: GCC >= 11 warns on MPICH's */
        MPI_Waitall(2, r, st);
    }
    if (pg_rank == 1 && (m == OV_ISEND || m == OV_SEQ))
        MPI_Recv(ov_rbuf, cnt, MPI_BYTE, 0, OV_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (pg_rank == 1 && m == OV_IRECV)
        MPI_Send(ov_sbuf, cnt, MPI_BYTE, 0, OV_TAG, MPI_COMM_WORLD);
    return (double)(bench_now_ns() - t0) / 1e3;
}

/* The same compute without communication (same ranks computing). */
static double ov_alone(int m, uint64_t work)
{
    ov_sync(m);
    uint64_t t0 = bench_now_ns();
    if (work && ov_computes(m))
        ov_compute(work);
    return (double)(bench_now_ns() - t0) / 1e3;
}

/* One (mode, size): t_comm, then each compute time. */
static void ov_point_set(int m, size_t size, const double *factors, int nf, double fixed_us,
                         long iters, double *a, double *b)
{
    long warm = iters / 10 < 2 ? 2 : iters / 10;
    for (long j = 0; j < warm + iters; j++) {
        double t = ov_op(m, size, 0);
        if (j >= warm)
            a[j - warm] = t;
    }
    double t_comm = pg_median(a, (size_t)iters);
    MPI_Bcast(&t_comm, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int k = 0; k < (fixed_us > 0.0 ? 1 : nf); k++) {
        double t_cpu = fixed_us > 0.0 ? fixed_us : factors[k] * t_comm;
        uint64_t work = pg_work_for_us(t_cpu);
        for (long j = 0; j < warm + iters; j++) {
            double x = ov_alone(m, work);
            double y = ov_op(m, size, work);
            if (j >= warm) {
                a[j - warm] = x;
                b[j - warm] = y;
            }
        }
        if (pg_rank != 0)
            continue;
        double t_compute = pg_median(a, (size_t)iters);
        double t_total = pg_median(b, (size_t)iters);
        double lo = t_comm < t_compute ? t_comm : t_compute;
        char fs[32], ovs[32];
        if (fixed_us > 0.0)
            snprintf(fs, sizeof fs, "-");
        else
            snprintf(fs, sizeof fs, "%g", factors[k]);
        if (t_cpu > 0.0 && lo > 0.0)
            snprintf(ovs, sizeof ovs, "%.1f", (t_comm + t_compute - t_total) / lo * 100.0);
        else
            snprintf(ovs, sizeof ovs, "nan");
        printf("overlap %s %zu %s %.3f %.3f %.3f %.3f %s\n", ov_names[m], size, fs, t_cpu, t_comm,
               t_compute, t_total, ovs);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    pg_calibrate();
    int provided = pg_init(&argc, &argv, MPI_THREAD_SINGLE);
    struct ov_opts o;
    int prc = ov_parse(argc, argv, &o);
    if (prc != 0) {
        if (pg_rank == 0)
            ov_usage(prc > 0 ? stdout : stderr, argv[0]);
        MPI_Finalize();
        return prc > 0 ? 0 : 2;
    }
    pg_need_two("overlap");
    if (pg_rank == 0) {
        pg_describe(stdout, "overlap", MPI_THREAD_SINGLE, provided);
        printf("# sizes %zu..%zu x%zu, collectives %zu, seq %zu..%zu x2 with %g us, iters=%ld\n",
               o.min, o.max, o.step, o.coll, o.seq_min, o.seq_max, o.seq_us, o.iters);
        printf("# overlap%% = (t_comm + t_compute - t_total) / min(t_comm, t_compute) * 100\n");
        printf("# test mode size factor t_cpu t_comm t_compute t_total overlap\n");
        fflush(stdout);
    }

    size_t bytes = o.max;
    if (o.coll > bytes) bytes = o.coll;
    if (o.seq_max > bytes) bytes = o.seq_max;
    ov_sbuf = bench_alloc(bytes, 1);
    ov_rbuf = bench_alloc(bytes, 0);
    double *a = calloc((size_t)o.iters, sizeof *a), *b = calloc((size_t)o.iters, sizeof *b);
    if (!a || !b)
        bench_die("out of memory");
    static const double def_p2p[] = {0, 0.25, 0.5, 1, 1.5, 2}, def_other[] = {1, 2};

    for (int m = 0; m < OV_NMODES; m++) {
        if (!(o.modes & (1u << m)))
            continue;
        const double *f = o.factors;
        int nf = o.nfactors;
        if (nf == 0 && (m == OV_ISEND || m == OV_IRECV)) {
            f = def_p2p;
            nf = (int)(sizeof def_p2p / sizeof def_p2p[0]);
        } else if (nf == 0) {
            f = def_other;
            nf = (int)(sizeof def_other / sizeof def_other[0]);
        }
        if (m == OV_SEQ) {
            for (size_t s = o.seq_min;; s = s > o.seq_max / 2 ? o.seq_max : s * 2) {
                ov_point_set(m, s, f, nf, o.seq_us, o.iters, a, b);
                if (s == o.seq_max)
                    break;
            }
        } else if (m == OV_IALLREDUCE || m == OV_IBCAST) {
            ov_point_set(m, o.coll / 8 * 8, f, nf, 0.0, o.iters, a, b);
        } else {
            for (size_t s = o.min;; s = s > o.max / o.step ? o.max : s * o.step) {
                ov_point_set(m, s, f, nf, 0.0, o.iters, a, b);
                if (s == o.max)
                    break;
            }
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(a);
    free(b);
    free(ov_rbuf);
    free(ov_sbuf);
    MPI_Finalize();
    return 0;
}
