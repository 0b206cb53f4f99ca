/*
 * test_util.h — helpers shared by the API behaviour tests (the .c files of tests/api):
 * failure macros that name the file, line, call and status, deterministic
 * data patterns with checksums, guarded (and deliberately unaligned)
 * buffers, a barrier built on point-to-point messages, a clock, and a
 * watchdog that reports which phase a stuck test was in.
 *
 * Header-only (static functions): a test is one .c file, or several that
 * share its state (TU_SHARED_STATE below).
 */
#ifndef PROUST_TEST_UTIL_H
#define PROUST_TEST_UTIL_H

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proust.h"

/* ---- identity and failure reporting ------------------------------------- */
/* A program of several .c files defines TU_SHARED_STATE before including
 * this header, in every file, so that they share one rank, size, phase and
 * barrier count; the file with main() also defines TU_STATE_HERE, which
 * holds the definitions. */
#ifdef TU_SHARED_STATE
extern int tu_rank, tu_size;
extern const char *volatile tu_phase;
extern unsigned long tu_barrier_count;
#ifdef TU_STATE_HERE
int tu_rank = -1, tu_size = 0;
const char *volatile tu_phase = "start";
unsigned long tu_barrier_count;
#endif
#else
static int tu_rank = -1, tu_size = 0;
static const char *volatile tu_phase = "start";
static unsigned long tu_barrier_count;
#endif

#define TU_PHASE(name) (tu_phase = (name))

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4), noreturn, unused))
#endif
static void tu_fail_at(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] FAIL %s:%d (phase %s): %s\n", tu_rank, file, line,
            (const char *)tu_phase, msg);
    fflush(stderr);
    fflush(stdout);
    exit(1);
}

#define TU_FAIL(...) tu_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* The call must return PROUST_OK. */
#define CHECK(call)                                                                              \
    do {                                                                                         \
        int tu_rc_ = (call);                                                                     \
        if (tu_rc_ != PROUST_OK)                                                                 \
            TU_FAIL("%s returned %s (%d: %s), expected PROUST_OK", #call,                       \
                    proust_error_name(tu_rc_), tu_rc_, proust_strerror(tu_rc_));                 \
    } while (0)

/* The call must return exactly `want`. */
#define CHECK_RC(call, want)                                                                     \
    do {                                                                                         \
        int tu_rc_ = (call);                                                                     \
        int tu_want_ = (want);                                                                   \
        if (tu_rc_ != tu_want_)                                                                  \
            TU_FAIL("%s returned %s (%d), expected %s (%d)", #call, proust_error_name(tu_rc_),   \
                    tu_rc_, proust_error_name(tu_want_), tu_want_);                              \
    } while (0)

/* A condition with a message (printf format: say expected vs got). */
#define EXPECT(cond, ...)                                                                        \
    do {                                                                                         \
        if (!(cond))                                                                             \
            TU_FAIL("expectation `%s` failed: %s", #cond, tu_fmt(__VA_ARGS__));                 \
    } while (0)

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), unused))
#endif
static const char *tu_fmt(const char *fmt, ...)
{
    static _Thread_local char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

/* Compare a status field by field. */
#define EXPECT_STATUS(st, src, tg, sz, cnt, err)                                                 \
    do {                                                                                         \
        const proust_status_t *tu_st_ = &(st);                                                   \
        if (tu_st_->source != (src) || tu_st_->tag != (proust_tag_t)(tg) ||                      \
            tu_st_->size != (size_t)(sz) || tu_st_->count != (size_t)(cnt) ||                    \
            tu_st_->error != (err))                                                              \
            TU_FAIL("status mismatch: expected source %d tag 0x%" PRIx64                         \
                    " size %zu count %zu error %s; got source %d tag 0x%" PRIx64                 \
                    " size %zu count %zu error %s",                                              \
                    (int)(src), (uint64_t)(tg), (size_t)(sz), (size_t)(cnt),                     \
                    proust_error_name(err), tu_st_->source, (uint64_t)tu_st_->tag,               \
                    tu_st_->size, tu_st_->count, proust_error_name(tu_st_->error));              \
    } while (0)

/* ---- time ---------------------------------------------------------------- */
static inline double tu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void tu_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* ---- watchdog ------------------------------------------------------------- */
static inline void tu_watchdog_fire(int sig)
{
    (void)sig;
    char buf[256];
    const char *ph = tu_phase;
    int n = snprintf(buf, sizeof buf, "[rank %d] FAIL watchdog: test stuck in phase %s\n",
                     tu_rank, ph ? ph : "?");
    if (n > 0) {
        ssize_t w = write(2, buf, (size_t)n);
        (void)w;
    }
    _exit(3);
}

/* Fail (exit 3) after `seconds`; TU_TIMEOUT in the environment overrides. */
static inline void tu_watchdog(unsigned seconds)
{
    const char *env = getenv("TU_TIMEOUT");
    if (env && atoi(env) > 0)
        seconds = (unsigned)atoi(env);
    signal(SIGALRM, tu_watchdog_fire);
    alarm(seconds);
}

/* ---- init ------------------------------------------------------------------ */
static inline proust_session_t *tu_init(unsigned watchdog_s)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    tu_watchdog(watchdog_s);
    proust_session_t *s = NULL;
    TU_PHASE("proust_init");
    CHECK(proust_init(&s));
    tu_rank = proust_rank(s);
    tu_size = proust_size(s);
    EXPECT(tu_rank >= 0 && tu_rank < tu_size, "rank %d size %d", tu_rank, tu_size);
    TU_PHASE("after init");
    return s;
}

/* ---- data patterns ------------------------------------------------------------ */
static inline uint64_t tu_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Byte i of the pattern `seed`: depends on both, so a shifted, truncated
 * or swapped buffer is detected. */
static inline uint8_t tu_byte(uint64_t seed, size_t i)
{
    uint64_t w = tu_mix(seed ^ ((uint64_t)(i >> 3) * 0x100000001b3ull));
    return (uint8_t)(w >> ((i & 7) * 8));
}

static inline void tu_fill(void *buf, size_t len, uint64_t seed)
{
    uint8_t *p = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = tu_mix(seed ^ ((uint64_t)(i >> 3) * 0x100000001b3ull));
        memcpy(p + i, &w, 8);
    }
    for (; i < len; i++)
        p[i] = tu_byte(seed, i);
}

/* FNV-1a over the bytes. */
static inline uint64_t tu_checksum(const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Checksum of the pattern without materialising it. */
static inline uint64_t tu_pattern_checksum(size_t len, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ tu_byte(seed, i)) * 1099511628211ull;
    return h;
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long tu_first_diff(const void *buf, size_t len, uint64_t seed)
{
    const uint8_t *p = buf;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = tu_mix(seed ^ ((uint64_t)(i >> 3) * 0x100000001b3ull));
        if (memcmp(p + i, &w, 8) != 0)
            break;
    }
    for (; i < len; i++)
        if (p[i] != tu_byte(seed, i))
            return (long)i;
    return -1;
}

/* Fail unless buf holds the pattern; prints the checksums and the first
 * differing byte. */
#define EXPECT_PATTERN(buf, len, seed, ...)                                                      \
    do {                                                                                         \
        const void *tu_b_ = (buf);                                                               \
        size_t tu_l_ = (len);                                                                    \
        uint64_t tu_s_ = (seed);                                                                 \
        long tu_d_ = tu_first_diff(tu_b_, tu_l_, tu_s_);                                         \
        if (tu_d_ >= 0)                                                                          \
            TU_FAIL("data mismatch (%s): %zu bytes, checksum expected %016" PRIx64             \
                    " got %016" PRIx64 "; first difference at byte %ld: expected 0x%02x "      \
                    "got 0x%02x",                                                                \
                    tu_fmt(__VA_ARGS__), tu_l_, tu_pattern_checksum(tu_l_, tu_s_),               \
                    tu_checksum(tu_b_, tu_l_), tu_d_, tu_byte(tu_s_, (size_t)tu_d_),              \
                    ((const uint8_t *)tu_b_)[tu_d_]);                                            \
    } while (0)

/* ---- guarded buffers --------------------------------------------------------- */
/* A buffer of `len` bytes at `offset` from a malloc'd base (offset 1, 3, 7
 * make it unaligned), with guard bytes before and after. */
#define TU_GUARD 64
#define TU_GUARD_BYTE 0xA5

struct tu_buf {
    uint8_t *base;
    uint8_t *p; /* the usable bytes */
    size_t len;
    size_t offset;
};

static inline struct tu_buf tu_buf_alloc(size_t len, size_t offset)
{
    struct tu_buf b;
    b.len = len;
    b.offset = offset;
    b.base = malloc(TU_GUARD + offset + len + TU_GUARD);
    if (!b.base)
        TU_FAIL("out of memory allocating %zu bytes", len);
    memset(b.base, TU_GUARD_BYTE, TU_GUARD + offset);
    memset(b.base + TU_GUARD + offset + len, TU_GUARD_BYTE, TU_GUARD);
    b.p = b.base + TU_GUARD + offset;
    return b;
}

static inline void tu_buf_free(struct tu_buf *b)
{
    free(b->base);
    b->base = b->p = NULL;
}

#define EXPECT_GUARDS(b, ...)                                                                    \
    do {                                                                                         \
        const struct tu_buf *tu_gb_ = &(b);                                                      \
        for (size_t tu_i_ = 0; tu_i_ < TU_GUARD + tu_gb_->offset; tu_i_++)                       \
            if (tu_gb_->base[tu_i_] != TU_GUARD_BYTE)                                            \
                TU_FAIL("write before the buffer (%s): byte -%zu is 0x%02x",                    \
                        tu_fmt(__VA_ARGS__), TU_GUARD + tu_gb_->offset - tu_i_,                 \
                        tu_gb_->base[tu_i_]);                                                    \
        for (size_t tu_i_ = 0; tu_i_ < TU_GUARD; tu_i_++)                                        \
            if (tu_gb_->p[tu_gb_->len + tu_i_] != TU_GUARD_BYTE)                                 \
                TU_FAIL("write past the buffer (%s): byte len+%zu is 0x%02x",                   \
                        tu_fmt(__VA_ARGS__), tu_i_, tu_gb_->p[tu_gb_->len + tu_i_]);             \
    } while (0)

/* ---- barrier over point-to-point messages -------------------------------------- */
/* Tags from TU_TAG_RESERVED up are the helpers'; tests stay below. Tests
 * that post any-tag receives must not have one pending across a barrier. */
#define TU_TAG_RESERVED 0xF000000000000000ull
#define TU_TAG_BARRIER 0xFB00000000000000ull

static inline void tu_barrier(proust_session_t *s)
{
    if (tu_size <= 1)
        return;
    const char *saved = tu_phase;
    TU_PHASE("barrier");
    proust_tag_t tag = TU_TAG_BARRIER | (tu_barrier_count++ & 0xffffffffull);
    char tok = 0;
    if (tu_rank == 0) {
        for (int r = 1; r < tu_size; r++)
            CHECK(proust_recv(s, &tok, 1, r, tag, PROUST_TAG_MASK_FULL, NULL));
        for (int r = 1; r < tu_size; r++)
            CHECK(proust_send(s, &tok, 1, r, tag));
    } else {
        CHECK(proust_send(s, &tok, 1, 0, tag));
        CHECK(proust_recv(s, &tok, 1, 0, tag, PROUST_TAG_MASK_FULL, NULL));
    }
    tu_phase = saved;
}

/* Argument helpers. */
static inline int tu_has_arg(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return 1;
    return 0;
}

/* Value of "--name=V", or def. */
static inline const char *tu_arg(int argc, char **argv, const char *name, const char *def)
{
    size_t n = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return argv[i] + n + 1;
    return def;
}

static inline void tu_finalize(proust_session_t *s)
{
    TU_PHASE("proust_finalize");
    CHECK(proust_finalize(s));
    alarm(0);
}

#endif
