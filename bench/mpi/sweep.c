/*
 * sweep.c — every point-to-point pattern and every collective over every
 * power-of-two size, as the OSU micro-benchmarks and the Intel MPI
 * Benchmarks measure them, in one program that builds with any MPI's
 * compiler wrapper (bench/sweep/run.sh runs it under Proust, MPICH and
 * Open MPI and reports the ratios).
 *
 *   mpicc -O2 -o sweep bench/mpi/sweep.c
 *   mpiexec -n 4 ./sweep [-p pattern,...|all|p2p|coll|icoll] [-m min] [-M max]
 *                        [-T ms] [-l]
 *
 * Point-to-point patterns run between ranks i and i + n/2 (every pair at
 * once, as osu_multi_lat and osu_mbw_mr do; 2 ranks: one pair):
 *   latency   ping-pong, half the round trip (osu_latency)
 *   bw        a window of 64 MPI_Isend, the peer's 64 MPI_Irecv, then a
 *             4-byte answer (osu_bw; at 8 B it is osu_mbw_mr's message rate)
 *   bibw      the same window both ways at once (osu_bibw)
 *   sendrecv  MPI_Sendrecv with the partner (IMB Sendrecv on 2 ranks)
 *   exchange  MPI_Isend/MPI_Irecv to and from both ring neighbours (IMB Exchange)
 * Collectives on MPI_COMM_WORLD (size = bytes per rank's block, per pair
 * for the all-to-alls, of the whole vector for reductions: MPI_FLOAT,
 * MPI_SUM, sizes under 4 bytes skipped), blocking and nonblocking (started
 * and waited for at once):
 *   barrier bcast reduce allreduce gather gatherv scatter scatterv allgather
 *   allgatherv alltoall alltoallv reduce_scatter reduce_scatter_block scan
 *   exscan, and the same with an i in front.
 *
 * One point (pattern, size): calls to warm up for a quarter of -T (200 at
 * most), timed to estimate one, agreed by every rank; then as many
 * iterations as fit in -T milliseconds (at least 3, at most 10000),
 * started by an MPI_Barrier. The
 * value is the mean over the ranks of each rank's time per iteration, in
 * microseconds (OSU's "average latency"); for bw and bibw the time per
 * message. Lower is better everywhere.
 *
 * Output (rank 0): '#' lines for humans, then one line per point,
 *   sweep:np=<ranks> <pattern> <size-bytes> <us>
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/bench_util.h"

#define WINDOW 64

enum kind { P2P, COLL, ICOLL };

struct ctx {
    int rank, size, partner; /* partner: -1 when this rank sits out (odd n) */
    size_t bytes;
    unsigned char *sbuf, *rbuf;
    int *counts, *displs;
    MPI_Request reqs[2 * WINDOW + 4];
    MPI_Status stats[2 * WINDOW + 4]; /* (MPICH's header makes gcc warn on
                                         MPI_STATUSES_IGNORE) */
};

typedef void (*op_fn)(struct ctx *x, MPI_Request *r);

/* ---- Point-to-point -------------------------------------------------------- */

static void p_latency(struct ctx *x, MPI_Request *r)
{
    (void)r;
    int n = (int)x->bytes;
    if (x->partner < 0)
        return;
    if (x->rank < x->partner) {
        MPI_Send(x->sbuf, n, MPI_BYTE, x->partner, 1, MPI_COMM_WORLD);
        MPI_Recv(x->rbuf, n, MPI_BYTE, x->partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(x->rbuf, n, MPI_BYTE, x->partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(x->sbuf, n, MPI_BYTE, x->partner, 1, MPI_COMM_WORLD);
    }
}

static void window(struct ctx *x, bool send, bool recv)
{
    int n = (int)x->bytes, k = 0;
    for (int i = 0; recv && i < WINDOW; i++)
        MPI_Irecv(x->rbuf, n, MPI_BYTE, x->partner, 2, MPI_COMM_WORLD, &x->reqs[k++]);
    for (int i = 0; send && i < WINDOW; i++)
        MPI_Isend(x->sbuf, n, MPI_BYTE, x->partner, 2, MPI_COMM_WORLD, &x->reqs[k++]);
    MPI_Waitall(k, x->reqs, x->stats);
}

static void p_bw(struct ctx *x, MPI_Request *r)
{
    (void)r;
    if (x->partner < 0)
        return;
    int ack = 0;
    if (x->rank < x->partner) {
        window(x, true, false);
        MPI_Recv(&ack, 1, MPI_INT, x->partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        window(x, false, true);
        MPI_Send(&ack, 1, MPI_INT, x->partner, 3, MPI_COMM_WORLD);
    }
}

static void p_bibw(struct ctx *x, MPI_Request *r)
{
    (void)r;
    if (x->partner >= 0)
        window(x, true, true);
}

static void p_sendrecv(struct ctx *x, MPI_Request *r)
{
    (void)r;
    if (x->partner < 0)
        return;
    int n = (int)x->bytes;
    MPI_Sendrecv(x->sbuf, n, MPI_BYTE, x->partner, 4, x->rbuf, n, MPI_BYTE, x->partner, 4,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void p_exchange(struct ctx *x, MPI_Request *r)
{
    (void)r;
    int n = (int)x->bytes;
    int right = (x->rank + 1) % x->size, left = (x->rank - 1 + x->size) % x->size;
    MPI_Irecv(x->rbuf, n, MPI_BYTE, left, 5, MPI_COMM_WORLD, &x->reqs[0]);
    MPI_Irecv(x->rbuf + n, n, MPI_BYTE, right, 5, MPI_COMM_WORLD, &x->reqs[1]);
    MPI_Isend(x->sbuf, n, MPI_BYTE, left, 5, MPI_COMM_WORLD, &x->reqs[2]);
    MPI_Isend(x->sbuf + n, n, MPI_BYTE, right, 5, MPI_COMM_WORLD, &x->reqs[3]);
    MPI_Waitall(4, x->reqs, x->stats);
}

/* ---- Collectives: each written once; `r` NULL means blocking ------------- */

#define FLOATS(x) ((int)((x)->bytes / sizeof(float)))
#define BLOCK(x) ((int)(x)->bytes)

static void c_barrier(struct ctx *x, MPI_Request *r)
{
    (void)x;
    r ? MPI_Ibarrier(MPI_COMM_WORLD, r) : MPI_Barrier(MPI_COMM_WORLD);
}

static void c_bcast(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Ibcast(x->sbuf, BLOCK(x), MPI_BYTE, 0, MPI_COMM_WORLD, r)
      : MPI_Bcast(x->sbuf, BLOCK(x), MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void c_reduce(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Ireduce(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD, r)
      : MPI_Reduce(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
}

static void c_allreduce(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iallreduce(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r)
      : MPI_Allreduce(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void c_gather(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Igather(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0, MPI_COMM_WORLD,
                    r)
      : MPI_Gather(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void c_gatherv(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Igatherv(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, x->counts, x->displs, MPI_BYTE, 0,
                     MPI_COMM_WORLD, r)
      : MPI_Gatherv(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, x->counts, x->displs, MPI_BYTE, 0,
                    MPI_COMM_WORLD);
}

static void c_scatter(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iscatter(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0,
                     MPI_COMM_WORLD, r)
      : MPI_Scatter(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0, MPI_COMM_WORLD);
}

static void c_scatterv(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iscatterv(x->sbuf, x->counts, x->displs, MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0,
                      MPI_COMM_WORLD, r)
      : MPI_Scatterv(x->sbuf, x->counts, x->displs, MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, 0,
                     MPI_COMM_WORLD);
}

static void c_allgather(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iallgather(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, MPI_COMM_WORLD,
                       r)
      : MPI_Allgather(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, MPI_COMM_WORLD);
}

static void c_allgatherv(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iallgatherv(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, x->counts, x->displs, MPI_BYTE,
                        MPI_COMM_WORLD, r)
      : MPI_Allgatherv(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, x->counts, x->displs, MPI_BYTE,
                       MPI_COMM_WORLD);
}

static void c_alltoall(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Ialltoall(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, MPI_COMM_WORLD,
                      r)
      : MPI_Alltoall(x->sbuf, BLOCK(x), MPI_BYTE, x->rbuf, BLOCK(x), MPI_BYTE, MPI_COMM_WORLD);
}

static void c_alltoallv(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Ialltoallv(x->sbuf, x->counts, x->displs, MPI_BYTE, x->rbuf, x->counts, x->displs,
                       MPI_BYTE, MPI_COMM_WORLD, r)
      : MPI_Alltoallv(x->sbuf, x->counts, x->displs, MPI_BYTE, x->rbuf, x->counts, x->displs,
                      MPI_BYTE, MPI_COMM_WORLD);
}

/* The vector's floats spread over the ranks (the first ones take the rest),
 * as osu_reduce_scatter does. */
static void c_reduce_scatter(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Ireduce_scatter(x->sbuf, x->rbuf, x->counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r)
      : MPI_Reduce_scatter(x->sbuf, x->rbuf, x->counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void c_reduce_scatter_block(struct ctx *x, MPI_Request *r)
{
    int per = FLOATS(x) / x->size;
    r ? MPI_Ireduce_scatter_block(x->sbuf, x->rbuf, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r)
      : MPI_Reduce_scatter_block(x->sbuf, x->rbuf, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void c_scan(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iscan(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r)
      : MPI_Scan(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

static void c_exscan(struct ctx *x, MPI_Request *r)
{
    r ? MPI_Iexscan(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, r)
      : MPI_Exscan(x->sbuf, x->rbuf, FLOATS(x), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* counts/displs of the v collectives and reduce_scatter for this size. */
enum layout { L_NONE, L_BLOCKS, L_FLOATS };

static const struct pattern {
    const char *name;
    op_fn fn;
    enum kind kind;
    enum layout layout;
    bool reduction;  /* sizes under 4 bytes skipped */
    bool sized;      /* false: barrier, one point of size 0 */
} patterns[] = {
    {"latency", p_latency, P2P, L_NONE, false, true},
    {"bw", p_bw, P2P, L_NONE, false, true},
    {"bibw", p_bibw, P2P, L_NONE, false, true},
    {"sendrecv", p_sendrecv, P2P, L_NONE, false, true},
    {"exchange", p_exchange, P2P, L_NONE, false, true},
    {"barrier", c_barrier, COLL, L_NONE, false, false},
    {"bcast", c_bcast, COLL, L_NONE, false, true},
    {"reduce", c_reduce, COLL, L_NONE, true, true},
    {"allreduce", c_allreduce, COLL, L_NONE, true, true},
    {"gather", c_gather, COLL, L_NONE, false, true},
    {"gatherv", c_gatherv, COLL, L_BLOCKS, false, true},
    {"scatter", c_scatter, COLL, L_NONE, false, true},
    {"scatterv", c_scatterv, COLL, L_BLOCKS, false, true},
    {"allgather", c_allgather, COLL, L_NONE, false, true},
    {"allgatherv", c_allgatherv, COLL, L_BLOCKS, false, true},
    {"alltoall", c_alltoall, COLL, L_NONE, false, true},
    {"alltoallv", c_alltoallv, COLL, L_BLOCKS, false, true},
    {"reduce_scatter", c_reduce_scatter, COLL, L_FLOATS, true, true},
    {"reduce_scatter_block", c_reduce_scatter_block, COLL, L_NONE, true, true},
    {"scan", c_scan, COLL, L_NONE, true, true},
    {"exscan", c_exscan, COLL, L_NONE, true, true},
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])

struct opts {
    bool on[2][NPATTERNS]; /* [nonblocking][pattern] */
    size_t min, max;
    double budget_ms;
};

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-p pattern,...] [-m min] [-M max] [-T ms] [-l]\n"
            "  -p  patterns, comma-separated: names from -l, or all, p2p, coll, icoll\n"
            "      (default all)\n"
            "  -m  smallest size in bytes, K/M suffixes allowed (default 0)\n"
            "  -M  largest size (default 4M); sizes are 0 and the powers of two\n"
            "  -T  time per point in milliseconds (default 20)\n"
            "  -l  list the patterns and exit\n",
            prog);
}

static bool select_word(struct opts *o, const char *w)
{
    bool any = false;
    for (size_t i = 0; i < NPATTERNS; i++) {
        const struct pattern *p = &patterns[i];
        bool all = !strcmp(w, "all");
        if (all || (!strcmp(w, "p2p") && p->kind == P2P) || (!strcmp(w, "coll") && p->kind != P2P) ||
            !strcmp(w, p->name)) {
            o->on[0][i] = any = true;
        }
        if (p->kind != P2P &&
            (all || !strcmp(w, "icoll") || (w[0] == 'i' && !strcmp(w + 1, p->name)))) {
            o->on[1][i] = any = true;
        }
    }
    return any;
}

static int parse(int argc, char **argv, struct opts *o, int rank)
{
    memset(o, 0, sizeof *o);
    o->max = (size_t)4 << 20;
    o->budget_ms = 20;
    bool chosen = false;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "p:m:M:T:lh")) != -1) {
        switch (c) {
        case 'p': {
            char *list = strdup(optarg), *save = NULL;
            for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
                if (!select_word(o, w)) {
                    if (rank == 0)
                        fprintf(stderr, "sweep: unknown pattern '%s' (-l lists them)\n", w);
                    free(list);
                    return 2;
                }
            }
            free(list);
            chosen = true;
            break;
        }
        case 'm':
        case 'M':
            if (bench_parse_size(optarg, c == 'm' ? &o->min : &o->max)) {
                if (rank == 0)
                    fprintf(stderr, "sweep: bad size '%s'\n", optarg);
                return 2;
            }
            break;
        case 'T':
            o->budget_ms = atof(optarg);
            if (o->budget_ms <= 0) {
                if (rank == 0)
                    fprintf(stderr, "sweep: -T wants a positive number of milliseconds\n");
                return 2;
            }
            break;
        case 'l':
            if (rank == 0)
                for (size_t i = 0; i < NPATTERNS; i++)
                    printf("%s%s%s\n", patterns[i].name, patterns[i].kind == P2P ? "" : " i",
                           patterns[i].kind == P2P ? "" : patterns[i].name);
            return 1;
        default:
            if (rank == 0)
                usage(c == 'h' ? stdout : stderr, argv[0]);
            return c == 'h' ? 1 : 2;
        }
    }
    if (!chosen)
        select_word(o, "all");
    return 0;
}

static void set_layout(struct ctx *x, enum layout l)
{
    for (int i = 0; i < x->size; i++) {
        if (l == L_BLOCKS) {
            x->counts[i] = (int)x->bytes;
            x->displs[i] = (int)(x->bytes * (size_t)i);
        } else if (l == L_FLOATS) {
            int n = (int)(x->bytes / sizeof(float)), per = n / x->size;
            x->counts[i] = per + (i < n % x->size ? 1 : 0);
        }
    }
}

static void run_once(const struct pattern *p, bool nb, struct ctx *x)
{
    if (!nb) {
        p->fn(x, NULL);
        return;
    }
    MPI_Request r;
    p->fn(x, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

/* Seconds of `iters` calls, on this rank. */
static double timed(const struct pattern *p, bool nb, struct ctx *x, long iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = bench_now_ns();
    for (long i = 0; i < iters; i++)
        run_once(p, nb, x);
    return (double)(bench_now_ns() - t0) * 1e-9;
}

static void point(const struct pattern *p, bool nb, struct ctx *x, double budget_ms)
{
    set_layout(x, p->layout);
    /* warm up (a quarter of the budget, 200 calls at most, as OSU warms up
     * small sizes: the first calls of a pattern make shm rings, and waiters
     * settle), and agree on the iterations from the slowest rank's
     * estimate (a call slower than the budget gets 3 timed iterations: an
     * oversubscribed peer can take a second a call) */
    double est = timed(p, nb, x, 1), most;
    MPI_Allreduce(&est, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long warm = most > 0 ? (long)(budget_ms * 1e-3 / 4 / most) : 200;
    warm = warm < 1 ? 1 : warm > 200 ? 200 : warm;
    est = timed(p, nb, x, warm) / (double)warm;
    MPI_Allreduce(&est, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    long iters = most > 0 ? (long)(budget_ms * 1e-3 / most) : 10000;
    iters = iters < 3 ? 3 : iters > 10000 ? 10000 : iters;
    double per = timed(p, nb, x, iters) / (double)iters, sum;
    if (p->kind == P2P && (p->fn == p_bw || p->fn == p_bibw))
        per /= WINDOW;
    MPI_Reduce(&per, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (x->rank == 0)
        printf("sweep:np=%d %s%s %zu %.4f\n", x->size, nb ? "i" : "", p->name, x->bytes,
               sum / x->size * 1e6);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct ctx x;
    memset(&x, 0, sizeof x);
    MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x.size);
    struct opts o;
    int rc = parse(argc, argv, &o, x.rank);
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : rc;
    }
    int half = x.size / 2;
    x.partner = x.size < 2 ? -1 : x.rank < half ? x.rank + half : x.rank - half;
    if (x.size % 2 && x.rank == x.size - 1)
        x.partner = -1;
    size_t per_rank = o.max * (size_t)(x.size < 2 ? 2 : x.size);
    x.sbuf = bench_alloc(per_rank, 1);
    x.rbuf = bench_alloc(per_rank, 0);
    x.counts = calloc((size_t)x.size, sizeof(int));
    x.displs = calloc((size_t)x.size, sizeof(int));
    if (!x.counts || !x.displs)
        bench_die("out of memory");
    if (x.rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = '\0';
        printf("# sweep: %d ranks, %s\n# %g ms a point; microseconds a call (bw, bibw: a "
               "message), mean over the ranks\n",
               x.size, lib, o.budget_ms);
        fflush(stdout);
    }
    /* Every pair talks once before the first point: connections, shared
     * memory rings and the like are made on first use by all three MPIs,
     * and would otherwise land in whichever point comes first. */
    for (int k = 0; k < 20; k++)
        MPI_Alltoall(x.sbuf, 1, MPI_BYTE, x.rbuf, 1, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int nb = 0; nb < 2; nb++)
        for (size_t i = 0; i < NPATTERNS; i++) {
            const struct pattern *p = &patterns[i];
            if (!o.on[nb][i])
                continue;
            if (!p->sized) {
                x.bytes = 0;
                point(p, nb, &x, o.budget_ms);
                continue;
            }
            for (size_t s = 0; s <= o.max; s = s ? s * 2 : 1) {
                if (s < o.min || (p->reduction && s < sizeof(float)))
                    continue;
                x.bytes = s;
                point(p, nb, &x, o.budget_ms);
            }
            if (x.rank == 0)
                fflush(stdout);
        }
    free(x.counts);
    free(x.displs);
    free(x.sbuf);
    free(x.rbuf);
    MPI_Finalize();
    return 0;
}
