/*
 * bench_util.h — small helpers shared by every Proust benchmark (native and
 * MPI front ends): a monotonic clock, page-aligned touched buffers, size
 * parsing ("64K", "16M") and fatal errors. Header-only, C11 + POSIX.
 */
#ifndef PROUST_BENCH_UTIL_H
#define PROUST_BENCH_UTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Nanoseconds from CLOCK_MONOTONIC. */
static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* A page-aligned buffer of `len` bytes (at least one page), every page
 * written once so that first-touch page faults stay out of the timings. */
static inline unsigned char *bench_alloc(size_t len, unsigned char fill)
{
    size_t n = len < 4096 ? 4096 : (len + 4095) / 4096 * 4096;
    void *p = NULL;
    if (posix_memalign(&p, 4096, n) != 0)
        bench_die("cannot allocate %zu bytes", n);
    memset(p, fill, n);
    return p;
}

/* Parse "123", "64K", "16M", "1G" (powers of 1024). Returns 0 on success. */
static inline int bench_parse_size(const char *s, size_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || s[0] == '-')
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end != '\0')
        return -1;
    *out = (size_t)v;
    return 0;
}

/* Parse a positive integer option; returns 0 on success. */
static inline int bench_parse_int(const char *s, long min, long max, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

#endif /* PROUST_BENCH_UTIL_H */
