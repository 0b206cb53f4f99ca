/*
 * io_util.h — helpers shared by the MPI-IO conformance tests (io_*.c).
 *
 * io_init() starts MPI, sets MPI_ERRORS_RETURN on MPI_COMM_WORLD (so that a
 * failing call reaches the checks below, which clean up) and makes a fresh
 * directory for the run: rank 0 creates it with mkdtemp under $TMPDIR (or
 * /tmp) and broadcasts its name. io_finish() removes it and finalizes.
 *
 * IO_CHECK(cond, ...) and IO_CALL(call) report rank, file and line (and the
 * MPI error string and class of a failed call), remove the run's directory
 * and call MPI_Abort, so no file is left behind by a failing test (an exit
 * from inside the library and the usual fatal signals remove it too).
 *
 * File contents are a deterministic pattern of (seed, file offset): a seed
 * names who wrote a region and in which step, so the verifier knows every
 * byte's expected value wherever it came from (io_byte, io_fill, IO_VERIFY,
 * which names the first wrong offset, the expected and the read byte).
 *
 * IO_ROMIO is 1 when built against ROMIO (MPICH) rather than Proust; a few
 * checks use it to tolerate known ROMIO deviations (each says which).
 */
#ifndef PROUST_IO_UTIL_H
#define PROUST_IO_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "mpitest.h"

#if defined(ROMIO_VERSION) && !defined(PROUST_MPI)
#define IO_ROMIO 1
#else
#define IO_ROMIO 0
#endif

static char io_dir[1024];
static int io_have_dir;
static int io_rank = -1, io_size = 0;
static const char *io_prog = "io test";

/* Remove every entry of the run's directory, then the directory. */
static inline void io_remove_dir(void)
{
    if (!io_have_dir)
        return;
    io_have_dir = 0;
    DIR *d = opendir(io_dir);
    if (d) {
        struct dirent *e;
        char p[2048];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", io_dir, e->d_name);
            if (unlink(p) != 0 && errno == EISDIR)
                rmdir(p);
        }
        closedir(d);
    }
    rmdir(io_dir);
}

static inline void io_fail(void)
{
    fflush(stderr);
    io_remove_dir();
    MPI_Abort(MPI_COMM_WORLD, 1);
    _exit(1);
}

/* A signal (a crash, or the harness stopping a test that hangs): remove
 * the directory, then die of the signal. */
static void io_on_signal(int sig)
{
    io_remove_dir();
    signal(sig, SIG_DFL);
    raise(sig);
}

static inline const char *io_class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE";
    case MPI_ERR_CONVERSION: return "MPI_ERR_CONVERSION";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_DUP_DATAREP: return "MPI_ERR_DUP_DATAREP";
    case MPI_ERR_FILE: return "MPI_ERR_FILE";
    case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS";
    case MPI_ERR_FILE_IN_USE: return "MPI_ERR_FILE_IN_USE";
    case MPI_ERR_INFO: return "MPI_ERR_INFO";
    case MPI_ERR_IO: return "MPI_ERR_IO";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_QUOTA: return "MPI_ERR_QUOTA";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "MPI_ERR_UNSUPPORTED_DATAREP";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION";
    default: return "another class";
    }
}

/* The class of an error code (MPI_SUCCESS for MPI_SUCCESS). */
static inline int io_class(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS && MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = -1;
    return cls;
}

/* "code N, class NAME (C): message" for a report. */
static inline const char *io_describe(int rc)
{
    static char out[MPI_MAX_ERROR_STRING + 128];
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = io_class(rc);
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "(no error string)");
    snprintf(out, sizeof out, "code %d, class %s (%d): %s", rc, io_class_name(cls), cls, msg);
    return out;
}

#define IO_CHECK(cond, ...)                                                        \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", io_rank,        \
                    __FILE__, __LINE__, #cond);                                    \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            io_fail();                                                             \
        }                                                                          \
    } while (0)

#define IO_CALL(call)                                                              \
    do {                                                                           \
        int io_rc_ = (call);                                                       \
        if (io_rc_ != MPI_SUCCESS) {                                               \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: %s\n", io_rank, __FILE__,  \
                    __LINE__, #call, io_describe(io_rc_));                         \
            io_fail();                                                             \
        }                                                                          \
    } while (0)

/* `call` must fail with error class `cls` (the object involved must have
 * MPI_ERRORS_RETURN). */
#define IO_EXPECT_CLASS(call, cls)                                                 \
    do {                                                                           \
        int io_rc_ = (call);                                                       \
        IO_CHECK(io_rc_ != MPI_SUCCESS && io_class(io_rc_) == (cls),               \
                 "expected class %s (%d), got %s", #cls, (cls),                    \
                 io_rc_ == MPI_SUCCESS ? "MPI_SUCCESS" : io_describe(io_rc_));     \
    } while (0)

/* `call` must fail (any class); evaluates to nothing, stores the class. */
#define IO_EXPECT_FAIL(call, cls_out)                                              \
    do {                                                                           \
        int io_rc_ = (call);                                                       \
        IO_CHECK(io_rc_ != MPI_SUCCESS, "expected an error, got MPI_SUCCESS");      \
        (cls_out) = io_class(io_rc_);                                              \
    } while (0)

/* A check that ROMIO is known to fail although the standard requires it:
 * strict elsewhere, a note on stderr under ROMIO. */
#define IO_CHECK_ROMIO_DEVIATES(cond, ...)                                         \
    do {                                                                           \
        if (!(cond)) {                                                             \
            if (IO_ROMIO) {                                                        \
                if (io_rank == 0) {                                                \
                    fprintf(stderr, "%s:%d: note: known ROMIO deviation, "         \
                            "tolerated: ", __FILE__, __LINE__);                    \
                    fprintf(stderr, __VA_ARGS__);                                  \
                    fprintf(stderr, "\n");                                         \
                }                                                                  \
            } else {                                                               \
                IO_CHECK(cond, __VA_ARGS__);                                       \
            }                                                                      \
        }                                                                          \
    } while (0)

static inline void io_init(int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Init failed\n");
        exit(1);
    }
    if (*argc > 0 && (*argv)[0]) {
        const char *slash = strrchr((*argv)[0], '/');
        io_prog = slash ? slash + 1 : (*argv)[0];
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &io_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &io_size);
    IO_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (io_rank == 0) {
        const char *base = getenv("TMPDIR");
        if (!base || !*base)
            base = "/tmp";
        snprintf(io_dir, sizeof io_dir, "%s/proust_io_XXXXXX", base);
        if (!mkdtemp(io_dir)) {
            fprintf(stderr, "[rank 0] mkdtemp(%s): %s\n", io_dir, strerror(errno));
            io_dir[0] = '\0';
        }
    }
    IO_CALL(MPI_Bcast(io_dir, (int)sizeof io_dir, MPI_CHAR, 0, MPI_COMM_WORLD));
    IO_CHECK(io_dir[0] != '\0', "no temporary directory");
    io_have_dir = 1;
    atexit(io_remove_dir); /* an exit on an error inside the library */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], io_on_signal);
}

/* Every rank has finished with the directory: remove it, finalize. */
static inline void io_finish(void)
{
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (io_rank == 0) {
        io_remove_dir();
        struct stat st;
        IO_CHECK(stat(io_dir, &st) != 0, "%s still there after cleanup", io_dir);
    }
    io_have_dir = 0;
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (io_rank == 0)
        printf("%s: all checks passed on %d rank(s)\n", io_prog, io_size);
    MPI_Finalize();
}

/* Path of a file of the run's directory (a static buffer per call site is
 * the caller's: pass one). */
static inline char *io_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", io_dir, name);
    return buf;
}

/* Does a path exist (as seen by this process)? */
static inline int io_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the pattern --------------------------------------------------------- */

static inline uint64_t io_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Byte at file offset `off` of data written under `seed`. */
static inline unsigned char io_byte(uint64_t seed, uint64_t off)
{
    uint64_t w = io_mix(io_mix(seed) ^ (off >> 3));
    return (unsigned char)(w >> ((off & 7) * 8));
}

static inline void io_fill(void *buf, size_t n, uint64_t seed, uint64_t off0)
{
    unsigned char *p = (unsigned char *)buf;
    size_t i = 0;
    while (i < n) {
        uint64_t off = off0 + i;
        uint64_t w = io_mix(io_mix(seed) ^ (off >> 3));
        for (unsigned k = (unsigned)(off & 7); k < 8 && i < n; k++, i++)
            p[i] = (unsigned char)(w >> (k * 8));
    }
}

/* Index of the first byte that differs from the pattern, or -1. */
static inline long io_first_bad(const void *buf, size_t n, uint64_t seed, uint64_t off0)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != io_byte(seed, off0 + i))
            return (long)i;
    return -1;
}

/* A seed naming the writer rank and the step. */
static inline uint64_t io_seed(int rank, int step)
{
    return ((uint64_t)(unsigned)step << 32) ^ (uint64_t)(unsigned)rank ^ 0x51ed2701ull;
}

/* buf[0..n) must hold the pattern (seed, off0...): the message names the
 * first wrong file offset. */
#define IO_VERIFY(buf, n, seed, off0, ...)                                         \
    do {                                                                           \
        long io_bad_ = io_first_bad((buf), (size_t)(n), (seed), (uint64_t)(off0)); \
        if (io_bad_ >= 0) {                                                        \
            fprintf(stderr, "[rank %d] %s:%d: data check failed: ", io_rank,       \
                    __FILE__, __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, ": first wrong byte at file offset %llu (index %ld of " \
                    "%zu): expected 0x%02x, got 0x%02x\n",                         \
                    (unsigned long long)((uint64_t)(off0) + (uint64_t)io_bad_),    \
                    io_bad_, (size_t)(n),                                          \
                    io_byte((seed), (uint64_t)(off0) + (uint64_t)io_bad_),         \
                    ((const unsigned char *)(buf))[io_bad_]);                      \
            io_fail();                                                             \
        }                                                                          \
    } while (0)

/* got[0..n) must equal want[0..n). */
#define IO_SAME(got, want, n, ...)                                                 \
    do {                                                                           \
        const unsigned char *io_g_ = (const unsigned char *)(got);                 \
        const unsigned char *io_w_ = (const unsigned char *)(want);                \
        for (size_t io_i_ = 0; io_i_ < (size_t)(n); io_i_++) {                     \
            if (io_g_[io_i_] != io_w_[io_i_]) {                                    \
                fprintf(stderr, "[rank %d] %s:%d: data check failed: ", io_rank,   \
                        __FILE__, __LINE__);                                       \
                fprintf(stderr, __VA_ARGS__);                                      \
                fprintf(stderr, ": first difference at byte %zu of %zu: expected " \
                        "0x%02x, got 0x%02x\n", io_i_, (size_t)(n), io_w_[io_i_],  \
                        io_g_[io_i_]);                                             \
                io_fail();                                                         \
            }                                                                      \
        }                                                                          \
    } while (0)

/* Bytes that must not have been touched. */
#define IO_GUARD(buf, n, val, ...)                                                 \
    do {                                                                           \
        const unsigned char *io_p_ = (const unsigned char *)(buf);                 \
        for (size_t io_i_ = 0; io_i_ < (size_t)(n); io_i_++) {                     \
            if (io_p_[io_i_] != (unsigned char)(val)) {                            \
                fprintf(stderr, "[rank %d] %s:%d: guard byte %zu overwritten "     \
                        "(0x%02x, expected 0x%02x): ", io_rank, __FILE__,          \
                        __LINE__, io_i_, io_p_[io_i_], (unsigned char)(val));      \
                fprintf(stderr, __VA_ARGS__);                                      \
                fprintf(stderr, "\n");                                             \
                io_fail();                                                         \
            }                                                                      \
        }                                                                          \
    } while (0)

static inline void *io_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    IO_CHECK(p != NULL, "out of memory (%zu bytes)", n);
    return p;
}

/* The status says `n` elements of `type` were transferred (MPI_Get_count)
 * and `elems` basic elements (MPI_Get_elements and MPI_Get_elements_x). */
static inline void io_status_at(const MPI_Status *st, MPI_Datatype type, int n, int elems,
                         const char *what, const char *file, int line)
{
    int c = -12345, e = -12345, rc;
    MPI_Count ex = -12345;
    if ((rc = MPI_Get_count(st, type, &c)) != MPI_SUCCESS ||
        (rc = MPI_Get_elements(st, type, &e)) != MPI_SUCCESS ||
        (rc = MPI_Get_elements_x(st, type, &ex)) != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d] %s:%d: %s: status query failed: %s\n", io_rank, file, line,
                what, io_describe(rc));
        io_fail();
    }
    if (c != n || e != elems || ex != (MPI_Count)elems) {
        fprintf(stderr, "[rank %d] %s:%d: %s: status says count %d, elements %d (_x %lld); "
                "expected count %d, elements %d\n", io_rank, file, line, what, c, e,
                (long long)ex, n, elems);
        io_fail();
    }
}
#define IO_STATUS(st, type, n, elems, what) \
    io_status_at((st), (type), (n), (elems), (what), __FILE__, __LINE__)

/* Info object with the pairs key, value, ..., NULL (MPI_INFO_NULL when the
 * first key is NULL). */
static inline MPI_Info io_info(const char *key, ...)
{
    if (!key)
        return MPI_INFO_NULL;
    MPI_Info info;
    IO_CALL(MPI_Info_create(&info));
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        IO_CALL(MPI_Info_set(info, k, v));
    }
    va_end(ap);
    return info;
}

static inline void io_info_free(MPI_Info *info)
{
    if (*info != MPI_INFO_NULL)
        IO_CALL(MPI_Info_free(info));
}

/* Collective: every rank's flag must be true; rank 0 names what failed. */
static inline void io_all_true(int ok, const char *what)
{
    int all = 0;
    IO_CALL(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    IO_CHECK(all, "%s: false on some rank", what);
}

#endif /* PROUST_IO_UTIL_H */
