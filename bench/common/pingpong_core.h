/*
 * pingpong_core.h — the ping-pong benchmark loops, written once and compiled
 * against either the native Proust API (bench/native/pingpong.c) or MPI
 * (bench/mpi/pingpong.c), so that both measure exactly the same thing.
 *
 * The including file defines, before including this header:
 *   bk_req_t                        request handle type
 *   BK_IMPL                         implementation name ("proust", "mpi")
 *   int  bk_rank, bk_size           set by bk_init
 *   void bk_init(int *argc, char ***argv)
 *   void bk_finalize(void)
 *   void bk_describe(FILE *f)       '#' lines naming library, rail, ...
 *   void bk_send(const void *buf, size_t len, int peer, int tag)   blocking
 *   void bk_recv(void *buf, size_t len, int peer, int tag)         blocking
 *   void bk_isend(const void *buf, size_t len, int peer, int tag, bk_req_t *r)
 *   void bk_irecv(void *buf, size_t len, int peer, int tag, bk_req_t *r)
 *   void bk_waitall(size_t n, bk_req_t *reqs)
 *   int  bk_test(bk_req_t *r)       1 when complete (the request is freed)
 * Every bk_* call aborts the job on error, so the loops check nothing.
 * Before each measurement ranks 0 and 1 synchronise with a 0-byte exchange
 * (bench_sync.h), so ranks beyond 1 take no part at all.
 *
 * Measurements (ranks 0 and 1; any further rank idles):
 *   lat   half round trip: rank 0 sends `size` bytes with a blocking send,
 *         rank 1 receives and sends them back; latency = loop time / (2 n),
 *         in microseconds.
 *   testlat the same exchange completed by polling, as a task runtime does
 *         between tasks: each side posts its receive, sends with a
 *         nonblocking send, and calls Test on each until both complete
 *         (rank 1 sends once its receive completed). Not part of "all".
 *   bw    rank 0 streams windows of `window` nonblocking sends of `size`
 *         bytes (all from one buffer); rank 1 pre-posts the matching
 *         receives (all into one buffer, as osu_bw does), waits, then sends a
 *         4-byte ack; rank 0 waits for the ack before the next window.
 *         bandwidth = size * window * n / loop time, in MB/s (10^6 bytes/s).
 *   bibw  both ranks post `window` receives then `window` sends per
 *         iteration and wait for all of them; bandwidth counts both
 *         directions: 2 * size * window * n / loop time, in MB/s.
 * The window shrinks for large messages so that one window's bytes stay
 * under the cap (-c, default 64 MiB): window_eff = min(window, max(1,
 * cap / size)). Size 0 is measured for lat only.
 *
 * Output (rank 0, stdout): '#' lines are for humans; every other line is one
 * measurement "pingpong <test> <size-bytes> <value>", value in us (lat) or
 * MB/s (bw, bibw). With -r R each size is measured R times, one line each.
 */
#ifndef PROUST_BENCH_PINGPONG_CORE_H
#define PROUST_BENCH_PINGPONG_CORE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "bench_sync.h"

enum { PP_LAT = 1u, PP_BW = 2u, PP_BIBW = 4u, PP_TESTLAT = 8u };
enum { PP_TAG_LAT = 11, PP_TAG_BW = 12, PP_TAG_ACK = 13 };

struct pp_opts {
    unsigned tests;
    size_t min, max;  /* message sizes; 0 is measured when min == 0 */
    double iscale;    /* multiplies every iteration count */
    long reps;        /* measurements per size */
    long window;      /* nonblocking sends in flight (bw, bibw) */
    size_t cap;       /* max bytes of one window of receive buffers */
};

static void pp_usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [-t lat|bw|bibw|testlat|all] [-m min] [-M max] [-i scale] [-r reps]\n"
            "          [-w window] [-c cap]\n"
            "  -t  test(s) to run, comma-separated (default all = lat,bw,bibw)\n"
            "  -m  smallest size in bytes, K/M suffixes allowed (default 0)\n"
            "  -M  largest size (default 16M); sizes are 0 then powers of two\n"
            "  -i  iteration scale factor, e.g. 0.1 for a quick run (default 1)\n"
            "  -r  measurements per size, one output line each (default 1)\n"
            "  -w  bw/bibw window: nonblocking messages in flight (default 64)\n"
            "  -c  cap on one window of receive buffers (default 64M)\n",
            prog);
}

static int pp_parse(int argc, char **argv, struct pp_opts *o)
{
    o->tests = PP_LAT | PP_BW | PP_BIBW;
    o->min = 0;
    o->max = (size_t)16 << 20;
    o->iscale = 1.0;
    o->reps = 1;
    o->window = 64;
    o->cap = (size_t)64 << 20;
    int c;
    opterr = 0;
    while ((c = getopt(argc, argv, "t:m:M:i:r:w:c:h")) != -1) {
        switch (c) {
        case 't': {
            o->tests = 0;
            char tmp[64];
            snprintf(tmp, sizeof tmp, "%s", optarg);
            for (char *tok = strtok(tmp, ","); tok; tok = strtok(NULL, ",")) {
                if (strcmp(tok, "lat") == 0) o->tests |= PP_LAT;
                else if (strcmp(tok, "bw") == 0) o->tests |= PP_BW;
                else if (strcmp(tok, "bibw") == 0) o->tests |= PP_BIBW;
                else if (strcmp(tok, "testlat") == 0) o->tests |= PP_TESTLAT;
                else if (strcmp(tok, "all") == 0) o->tests |= PP_LAT | PP_BW | PP_BIBW;
                else return -1;
            }
            if (o->tests == 0) return -1;
            break;
        }
        case 'm': if (bench_parse_size(optarg, &o->min)) return -1; break;
        case 'M': if (bench_parse_size(optarg, &o->max)) return -1; break;
        case 'i': {
            char *end = NULL;
            o->iscale = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->iscale > 0.0) || o->iscale > 1e6)
                return -1;
            break;
        }
        case 'r': if (bench_parse_int(optarg, 1, 1000000, &o->reps)) return -1; break;
        case 'w': if (bench_parse_int(optarg, 1, 1 << 20, &o->window)) return -1; break;
        case 'c': if (bench_parse_size(optarg, &o->cap) || o->cap == 0) return -1; break;
        case 'h': return 1;
        default: return -1;
        }
    }
    if (optind != argc || o->min > o->max || o->max > ((size_t)1 << 40))
        return -1;
    return 0;
}

/* Next size: 0 -> 1 -> 2 -> 4 ...; a non-power-of-two min doubles too. */
static size_t pp_next_size(size_t s) { return s == 0 ? 1 : s * 2; }

static long pp_scaled(double base, double scale, long floor_)
{
    double v = base * scale;
    return v < (double)floor_ ? floor_ : (long)v;
}

/* Round trips for one latency measurement: 10000 up to 8 KiB, then fewer
 * so that each measurement moves about the same number of bytes. */
static long pp_lat_iters(size_t size, double scale)
{
    double base = size <= 8192 ? 10000.0 : 10000.0 * 8192.0 / (double)size;
    if (base < 50.0) base = 50.0;
    return pp_scaled(base, scale, 2);
}

/* Windows for one bandwidth measurement: about 256 MiB per measurement,
 * between 10 and 1000 windows. */
static long pp_bw_iters(size_t size, long window, double scale)
{
    double base = (double)(256u << 20) / ((double)size * (double)window);
    if (base > 1000.0) base = 1000.0;
    if (base < 10.0) base = 10.0;
    return pp_scaled(base, scale, 2);
}

static long pp_warmup(long n) { return n / 10 < 1 ? 1 : n / 10; }

static long pp_window(const struct pp_opts *o, size_t size)
{
    size_t w = size == 0 ? (size_t)o->window : o->cap / size;
    if (w < 1) w = 1;
    if (w > (size_t)o->window) w = (size_t)o->window;
    return (long)w;
}

/* One latency measurement; returns microseconds (rank 0) or 0. */
static double pp_lat(size_t size, long n, unsigned char *sbuf, unsigned char *rbuf)
{
    long warm = pp_warmup(n);
    uint64_t t0 = 0;
    bk_sync();
    if (bk_rank == 0) {
        for (long i = 0; i < warm + n; i++) {
            if (i == warm) t0 = bench_now_ns();
            bk_send(sbuf, size, 1, PP_TAG_LAT);
            bk_recv(rbuf, size, 1, PP_TAG_LAT);
        }
        uint64_t t1 = bench_now_ns();
        return (double)(t1 - t0) / 1e3 / (2.0 * (double)n);
    }
    for (long i = 0; i < warm + n; i++) {
        bk_recv(rbuf, size, 0, PP_TAG_LAT);
        bk_send(sbuf, size, 0, PP_TAG_LAT);
    }
    return 0.0;
}

/* Calls Test on each request until all are complete. */
static void pp_test_until_done(size_t n, bk_req_t *reqs)
{
    for (size_t done = 0; done < n;) {
        done = 0;
        for (size_t i = 0; i < n; i++)
            done += (size_t)bk_test(&reqs[i]);
    }
}

/* One latency measurement completed with Test loops; microseconds (rank 0)
 * or 0. reqs holds 2 requests. */
static double pp_testlat(size_t size, long n, unsigned char *sbuf, unsigned char *rbuf,
                         bk_req_t *reqs)
{
    long warm = pp_warmup(n);
    uint64_t t0 = 0;
    bk_sync();
    for (long i = 0; i < warm + n; i++) {
        if (i == warm) t0 = bench_now_ns();
        bk_irecv(rbuf, size, 1 - bk_rank, PP_TAG_LAT, &reqs[0]);
        if (bk_rank == 1)
            pp_test_until_done(1, reqs);
        bk_isend(sbuf, size, 1 - bk_rank, PP_TAG_LAT, &reqs[1]);
        pp_test_until_done(bk_rank == 0 ? 2 : 1, bk_rank == 0 ? reqs : &reqs[1]);
    }
    uint64_t t1 = bench_now_ns();
    return bk_rank == 0 ? (double)(t1 - t0) / 1e3 / (2.0 * (double)n) : 0.0;
}

/* One unidirectional bandwidth measurement; returns MB/s (rank 0) or 0. */
static double pp_bw(size_t size, long w, long n, unsigned char *sbuf, unsigned char *rbuf,
                    bk_req_t *reqs)
{
    long warm = pp_warmup(n);
    uint64_t t0 = 0;
    unsigned char ack[4] = {0};
    bk_sync();
    if (bk_rank == 0) {
        for (long i = 0; i < warm + n; i++) {
            if (i == warm) t0 = bench_now_ns();
            for (long j = 0; j < w; j++)
                bk_isend(sbuf, size, 1, PP_TAG_BW, &reqs[j]);
            bk_waitall((size_t)w, reqs);
            bk_recv(ack, sizeof ack, 1, PP_TAG_ACK);
        }
        uint64_t t1 = bench_now_ns();
        return (double)size * (double)w * (double)n * 1e3 / (double)(t1 - t0);
    }
    for (long i = 0; i < warm + n; i++) {
        for (long j = 0; j < w; j++)
            bk_irecv(rbuf, size, 0, PP_TAG_BW, &reqs[j]);
        bk_waitall((size_t)w, reqs);
        bk_send(ack, sizeof ack, 0, PP_TAG_ACK);
    }
    return 0.0;
}

/* One bidirectional bandwidth measurement; returns MB/s (rank 0) or 0. */
static double pp_bibw(size_t size, long w, long n, unsigned char *sbuf, unsigned char *rbuf,
                      bk_req_t *reqs)
{
    long warm = pp_warmup(n);
    int peer = 1 - bk_rank;
    uint64_t t0 = 0;
    bk_sync();
    for (long i = 0; i < warm + n; i++) {
        if (i == warm) t0 = bench_now_ns();
        for (long j = 0; j < w; j++)
            bk_irecv(rbuf, size, peer, PP_TAG_BW, &reqs[j]);
        for (long j = 0; j < w; j++)
            bk_isend(sbuf, size, peer, PP_TAG_BW, &reqs[w + j]);
        bk_waitall((size_t)(2 * w), reqs);
    }
    uint64_t t1 = bench_now_ns();
    return 2.0 * (double)size * (double)w * (double)n * 1e3 / (double)(t1 - t0);
}

static int pingpong_main(int argc, char **argv)
{
    bk_init(&argc, &argv);
    struct pp_opts o;
    int prc = pp_parse(argc, argv, &o);
    if (prc != 0) {
        if (bk_rank == 0) pp_usage(prc > 0 ? stdout : stderr, argv[0]);
        bk_finalize();
        return prc > 0 ? 0 : 2;
    }
    if (bk_size < 2) {
        if (bk_rank == 0) fprintf(stderr, "pingpong: needs 2 ranks (got %d)\n", bk_size);
        bk_finalize();
        return 2;
    }

    if (bk_rank == 0) {
        printf("# Proust benchmark suite: pingpong (%s)\n", BK_IMPL);
        bk_describe(stdout);
        printf("# ranks=%d sizes=%zu..%zu iscale=%g reps=%ld window=%ld cap=%zu\n", bk_size,
               o.min, o.max, o.iscale, o.reps, o.window, o.cap);
        printf("# lat, testlat: half round trip, us | bw, bibw: MB/s (1e6 B/s), bibw counts both ways\n");
        printf("# test metric size value\n");
        fflush(stdout);
    }
    if (bk_rank >= 2) { /* only ranks 0 and 1 take part */
        bk_finalize();
        return 0;
    }

    long wmax = pp_window(&o, 1);
    unsigned char *sbuf = bench_alloc(o.max, (unsigned char)('a' + bk_rank));
    unsigned char *rbuf = bench_alloc(o.max, 0);
    bk_req_t *reqs = calloc((size_t)(2 * wmax), sizeof *reqs);
    if (!reqs) bench_die("out of memory");

    static const struct { unsigned bit; const char *name; } tests[] = {
        {PP_LAT, "lat"}, {PP_BW, "bw"}, {PP_BIBW, "bibw"}, {PP_TESTLAT, "testlat"}};
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        if (!(o.tests & tests[t].bit)) continue;
        for (size_t size = o.min; size <= o.max; size = pp_next_size(size)) {
            if (size == 0 && !(tests[t].bit & (PP_LAT | PP_TESTLAT))) continue;
            long w = pp_window(&o, size);
            for (long r = 0; r < o.reps; r++) {
                double v;
                if (tests[t].bit == PP_LAT)
                    v = pp_lat(size, pp_lat_iters(size, o.iscale), sbuf, rbuf);
                else if (tests[t].bit == PP_TESTLAT)
                    v = pp_testlat(size, pp_lat_iters(size, o.iscale), sbuf, rbuf, reqs);
                else if (tests[t].bit == PP_BW)
                    v = pp_bw(size, w, pp_bw_iters(size, w, o.iscale), sbuf, rbuf, reqs);
                else
                    v = pp_bibw(size, w, pp_bw_iters(size, w, o.iscale), sbuf, rbuf, reqs);
                if (bk_rank == 0) {
                    printf("pingpong %s %zu %.3f\n", tests[t].name, size, v);
                    fflush(stdout);
                }
            }
        }
    }

    bk_sync();
    free(reqs);
    free(rbuf);
    free(sbuf);
    bk_finalize();
    return 0;
}

#endif /* PROUST_BENCH_PINGPONG_CORE_H */
