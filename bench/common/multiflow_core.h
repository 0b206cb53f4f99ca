/*
 * multiflow_core.h — the seed experiment "k parallel ping-pongs of n small
 * messages each", written once for the native (bench/native/multiflow.c)
 * and the MPI (bench/mpi/multiflow.c) front ends. The front end defines the
 * bk_* interface described in pingpong_core.h before including this file.
 *
 * Ranks 0 and 1 (any further rank idles). There are k flows, flow f using
 * tag MF_TAG_FLOW0 + f. One round:
 *   1. rank 0 posts the k*n receives for rank 1's answer, then posts n
 *      nonblocking sends of s bytes on each flow, interleaved
 *      (message 0 of flows 0..k-1, then message 1 of flows 0..k-1, ...),
 *      each from its own buffer, and waits for all 2*k*n requests;
 *   2. rank 1 had already posted the k*n matching receives (before the
 *      round, each into its own buffer); it waits for them, posts the
 *      receives of the next round, then answers with the same pattern
 *      (n sends of s bytes per flow, interleaved) and waits for its sends.
 * So every message finds its receive already posted, and one round carries
 * 2*k*n messages, k*n in each direction.
 *
 *   time per message = (time of R timed rounds on rank 0) / (R * 2 * k * n)
 *
 * printed in nanoseconds. It is the inverse of the message rate this
 * ping-pong pattern sustains: latency of one round trip is amortised over
 * the k*n messages sent each way, so a strategy that aggregates the small
 * messages of one direction into fewer packets lowers it.
 *
 * Output (rank 0, stdout): '#' lines for humans, then one line per
 * repetition: "multiflow k=<k> n=<n> s=<s> <ns per message>".
 */
#ifndef PROUST_BENCH_MULTIFLOW_CORE_H
#define PROUST_BENCH_MULTIFLOW_CORE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_sync.h"

enum { MF_TAG_FLOW0 = 100 };

struct mf_opts {
    long k;      /* flows */
    long n;      /* messages per flow and direction per round */
    size_t s;    /* message size in bytes */
    long iters;  /* timed rounds */
    long warmup; /* untimed rounds before them; -1 = iters / 10 */
    long reps;   /* measurements, one output line each */
};

static void mf_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-k flows] [-n msgs] [-s size] [-i rounds] [-W warmup] [-r reps]\n"
            "  -k  parallel flows, each with its own tag (default 2)\n"
            "  -n  messages per flow and direction in one round (default 32)\n"
            "  -s  message size in bytes, K/M suffixes allowed (default 8)\n"
            "  -i  timed rounds (default 5000)\n"
            "  -W  untimed warm-up rounds (default rounds / 10)\n"
            "  -r  measurements, one output line each (default 1)\n",
            prog);
}

static int mf_parse(int argc, char **argv, struct mf_opts *o)
{
    o->k = 2;
    o->n = 32;
    o->s = 8;
    o->iters = 5000;
    o->warmup = -1;
    o->reps = 1;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "k:n:s:i:W:r:h")) != -1) {
        switch (c) {
        case 'k': if (bench_parse_int(optarg, 1, 1 << 16, &o->k)) return -1; break;
        case 'n': if (bench_parse_int(optarg, 1, 1 << 20, &o->n)) return -1; break;
        case 's': if (bench_parse_size(optarg, &o->s) || o->s > ((size_t)1 << 30)) return -1; break;
        case 'i': if (bench_parse_int(optarg, 1, 1L << 40, &o->iters)) return -1; break;
        case 'W': if (bench_parse_int(optarg, 0, 1L << 40, &o->warmup)) return -1; break;
        case 'r': if (bench_parse_int(optarg, 1, 1000000, &o->reps)) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->k * o->n > (1L << 22))
        return -1;
    if (o->warmup < 0)
        o->warmup = o->iters / 10 < 1 ? 1 : o->iters / 10;
    return 0;
}

/* Post the k*n receives (or sends) of one direction, interleaving flows. */
static void mf_post(int recv, const struct mf_opts *o, unsigned char *buf, int peer,
                    bk_req_t *reqs)
{
    size_t idx = 0;
    for (long m = 0; m < o->n; m++) {
        for (long f = 0; f < o->k; f++, idx++) {
            unsigned char *p = buf + idx * o->s;
            if (recv)
                bk_irecv(p, o->s, peer, MF_TAG_FLOW0 + (int)f, &reqs[idx]);
            else
                bk_isend(p, o->s, peer, MF_TAG_FLOW0 + (int)f, &reqs[idx]);
        }
    }
}

/* One measurement; returns ns per message on rank 0, 0 elsewhere. */
static double mf_measure(const struct mf_opts *o, unsigned char *sbuf, unsigned char *rbuf,
                         bk_req_t *reqs)
{
    size_t total = (size_t)(o->k * o->n);
    long rounds = o->warmup + o->iters;
    uint64_t t0 = 0;
    if (bk_rank == 0) {
        bk_sync();
        for (long r = 0; r < rounds; r++) {
            if (r == o->warmup) t0 = bench_now_ns();
            mf_post(1, o, rbuf, 1, reqs);
            mf_post(0, o, sbuf, 1, reqs + total);
            bk_waitall(2 * total, reqs);
        }
        uint64_t t1 = bench_now_ns();
        return (double)(t1 - t0) / ((double)o->iters * 2.0 * (double)total);
    }
    /* rank 1: the first round's receives are posted before the sync */
    mf_post(1, o, rbuf, 0, reqs);
    bk_sync();
    for (long r = 0; r < rounds; r++) {
        bk_waitall(total, reqs);
        if (r + 1 < rounds)
            mf_post(1, o, rbuf, 0, reqs);
        mf_post(0, o, sbuf, 0, reqs + total);
        bk_waitall(total, reqs + total);
    }
    return 0.0;
}

static int multiflow_main(int argc, char **argv)
{
    bk_init(&argc, &argv);
    struct mf_opts o;
    int prc = mf_parse(argc, argv, &o);
    if (prc != 0) {
        if (bk_rank == 0) mf_usage(prc > 0 ? stdout : stderr, argv[0]);
        bk_finalize();
        return prc > 0 ? 0 : 2;
    }
    if (bk_size < 2) {
        if (bk_rank == 0) fprintf(stderr, "multiflow: needs 2 ranks (got %d)\n", bk_size);
        bk_finalize();
        return 2;
    }
    if (bk_rank == 0) {
        printf("# Proust benchmark suite: multiflow (%s)\n", BK_IMPL);
        bk_describe(stdout);
        printf("# ranks=%d k=%ld n=%ld s=%zu rounds=%ld warmup=%ld reps=%ld\n", bk_size, o.k,
               o.n, o.s, o.iters, o.warmup, o.reps);
        printf("# value: ns per message = round time / (2*k*n)\n");
        fflush(stdout);
    }
    if (bk_rank >= 2) {
        bk_finalize();
        return 0;
    }

    size_t total = (size_t)(o.k * o.n);
    unsigned char *sbuf = bench_alloc(total * o.s, (unsigned char)('a' + bk_rank));
    unsigned char *rbuf = bench_alloc(total * o.s, 0);
    bk_req_t *reqs = calloc(2 * total, sizeof *reqs);
    if (!reqs) bench_die("out of memory");

    for (long r = 0; r < o.reps; r++) {
        double v = mf_measure(&o, sbuf, rbuf, reqs);
        if (bk_rank == 0) {
            printf("multiflow k=%ld n=%ld s=%zu %.1f\n", o.k, o.n, o.s, v);
            fflush(stdout);
        }
    }

    bk_sync();
    free(reqs);
    free(rbuf);
    free(sbuf);
    bk_finalize();
    return 0;
}

#endif /* PROUST_BENCH_MULTIFLOW_CORE_H */
