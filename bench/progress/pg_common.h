/*
 * pg_common.h — helpers shared by the progress-engine benchmarks
 * (the C files of bench/progress/, MPI only, any MPI's compiler wrapper):
 *
 *  - a fixed amount of arithmetic work, calibrated once at start (before
 *    MPI_Init, on a core nobody else uses yet) to take a given number of
 *    microseconds. It never looks at the clock while it runs: a thread
 *    that steals the core (a progress thread, a spinning waiter) makes it
 *    longer, which is what these benchmarks measure;
 *  - MPI_Init_thread with a check of the level provided;
 *  - a 0-byte round trip between ranks 0 and 1 (the timing sync, as
 *    bench/common/bench_sync.h does it);
 *  - medians, comma lists of numbers.
 *
 * Header-only, C11 + POSIX. Every function is static inline so that a
 * program that does not use one does not warn.
 */
#ifndef PROUST_BENCH_PG_COMMON_H
#define PROUST_BENCH_PG_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT, pthread_barrier */
#endif

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "../common/bench_util.h"

static int pg_rank, pg_size;

/* ---- calibrated work -------------------------------------------------- */

/* What the work leaves behind, so that the compiler cannot drop it (one
 * per thread: compute threads run pg_work at the same time). */
static _Thread_local volatile uint64_t pg_sink;
/* Iterations of pg_work per microsecond on an idle core (pg_calibrate). */
static double pg_iters_per_us;

/* `n` steps of a 64-bit linear congruential generator with an xor-shift:
 * one multiply, one add, one shift and one xor per step, every step
 * depending on the previous one (no vectorisation, no closed form). */
static inline void pg_work(uint64_t n)
{
    uint64_t x = pg_sink | 1u;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        x ^= x >> 29;
    }
    pg_sink = x;
}

/* Calibrate pg_work: ~30 ms of warm-up (clock ramp), then the fastest of
 * 9 timed runs of 2^18 steps. Call it before MPI_Init (no progress thread
 * yet) so that the rate is an idle core's. */
static inline void pg_calibrate(void)
{
    const uint64_t n = (uint64_t)1 << 18;
    uint64_t t_end = bench_now_ns() + 30000000u;
    while (bench_now_ns() < t_end)
        pg_work(n / 4);
    uint64_t best = UINT64_MAX;
    for (int k = 0; k < 9; k++) {
        uint64_t t0 = bench_now_ns();
        pg_work(n);
        uint64_t dt = bench_now_ns() - t0;
        if (dt > 0 && dt < best)
            best = dt;
    }
    pg_iters_per_us = (double)n * 1e3 / (double)(best ? best : 1);
}

/* The amount of work that takes `us` microseconds on an idle core. */
static inline uint64_t pg_work_for_us(double us)
{
    double n = us * pg_iters_per_us;
    return n <= 0.0 ? 0 : (uint64_t)(n + 0.5);
}

/* ---- MPI ------------------------------------------------------------------ */

static inline const char *pg_level_name(int level)
{
    return level == MPI_THREAD_SINGLE ? "single"
           : level == MPI_THREAD_FUNNELED ? "funneled"
           : level == MPI_THREAD_SERIALIZED ? "serialized"
           : level == MPI_THREAD_MULTIPLE ? "multiple"
                                          : "unknown";
}

/* MPI_Init_thread(required); returns the lowest level provided over all
 * ranks (so that every rank takes the same decision). */
static inline int pg_init(int *argc, char ***argv, int required)
{
    int provided = MPI_THREAD_SINGLE, lowest = MPI_THREAD_SINGLE;
    MPI_Init_thread(argc, argv, required, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &pg_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &pg_size);
    MPI_Allreduce(&provided, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return lowest;
}

/* '#' lines: library, thread level, calibration, progress-related
 * environment (so that a raw output says what it ran with). */
static inline void pg_describe(FILE *f, const char *bench, int required, int provided)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (len < 0) len = 0;
    if (len >= (int)sizeof lib) len = (int)sizeof lib - 1;
    lib[len] = '\0';
    char *nl = strchr(lib, '\n');
    if (nl) *nl = '\0';
    fprintf(f, "# Proust benchmark suite: %s (progress)\n", bench);
    fprintf(f, "# library: %s\n", lib);
    fprintf(f, "# ranks=%d thread level: required %s, provided %s\n", pg_size,
            pg_level_name(required), pg_level_name(provided));
    fprintf(f, "# work calibration (rank 0, before MPI_Init): %.1f iterations/us\n",
            pg_iters_per_us);
    static const char *vars[] = {"PROUST_PROGRESS", "PROUST_PROGRESS_THREADS", "PROUST_LOCKING",
                                 "PROUST_SPIN_US", "PROUST_RAILS", "MPICH_ASYNC_PROGRESS",
                                 "MPIR_CVAR_ASYNC_PROGRESS", "OMPI_MCA_mpi_yield_when_idle"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v)
            fprintf(f, "# env %s=%s\n", vars[i], v);
    }
}

/* Skip (exit 0) when the job does not have `need`: rank 0 says why, on
 * stdout (into the raw output) and stderr. */
static inline void pg_require_level(int provided, int need, const char *bench)
{
    if (provided >= need)
        return;
    if (pg_rank == 0) {
        printf("# SKIPPED: %s needs MPI_THREAD_%s, this MPI provided MPI_THREAD_%s\n", bench,
               need == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "FUNNELED",
               provided == MPI_THREAD_SINGLE ? "SINGLE"
               : provided == MPI_THREAD_FUNNELED ? "FUNNELED"
                                                 : "SERIALIZED");
        fflush(stdout);
        fprintf(stderr, "%s: skipped: MPI_THREAD_%s not provided (got %s)\n", bench,
                need == MPI_THREAD_MULTIPLE ? "MULTIPLE" : "FUNNELED", pg_level_name(provided));
    }
    MPI_Finalize();
    exit(0);
}

enum { PG_TAG_SYNC = 7 };

/* 0-byte round trip between ranks 0 and 1 (others: nothing). */
static inline void pg_sync01(void)
{
    char d = 0;
    if (pg_rank == 0) {
        MPI_Send(&d, 0, MPI_BYTE, 1, PG_TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(&d, 0, MPI_BYTE, 1, PG_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (pg_rank == 1) {
        MPI_Recv(&d, 0, MPI_BYTE, 0, PG_TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&d, 0, MPI_BYTE, 0, PG_TAG_SYNC, MPI_COMM_WORLD);
    }
}

static inline void pg_need_two(const char *bench)
{
    if (pg_size >= 2)
        return;
    if (pg_rank == 0)
        fprintf(stderr, "%s: needs at least 2 ranks\n", bench);
    MPI_Finalize();
    exit(2);
}

/* ---- numbers ---------------------------------------------------------- */

static inline int pg_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double pg_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, pg_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* "0,0.25,1" -> out[], at most max values, each in [lo, hi]; returns the
 * count, or -1. */
static inline int pg_parse_dlist(const char *s, double lo, double hi, double *out, int max)
{
    char tmp[256];
    if (strlen(s) >= sizeof tmp)
        return -1;
    snprintf(tmp, sizeof tmp, "%s", s);
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end = NULL;
        double v = strtod(tok, &end);
        if (end == tok || *end != '\0' || !(v >= lo && v <= hi) || n == max)
            return -1;
        out[n++] = v;
    }
    return n > 0 ? n : -1;
}

/* "0,1,2,4" -> out[], integers in [lo, hi]; returns the count, or -1. */
static inline int pg_parse_llist(const char *s, long lo, long hi, long *out, int max)
{
    double d[64];
    int n = pg_parse_dlist(s, (double)lo, (double)hi, d, max < 64 ? max : 64);
    for (int i = 0; i < n; i++) {
        if (d[i] != (double)(long)d[i])
            return -1;
        out[i] = (long)d[i];
    }
    return n;
}

/* Positive real option ("0.5"); returns 0 on success. */
static inline int pg_parse_pos(const char *s, double max, double *out)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v > 0.0) || v > max)
        return -1;
    *out = v;
    return 0;
}

#endif /* PROUST_BENCH_PG_COMMON_H */
