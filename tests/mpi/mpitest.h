/*
 * mpitest.h — helpers shared by the MPI conformance tests.
 *
 * CHECK(cond, ...) fails the test with a message naming the rank, the file
 * and the line; MPI_CHECK(call) fails when an MPI call does not return
 * MPI_SUCCESS. A failing rank calls MPI_Abort, so the whole job stops with
 * a nonzero status instead of hanging.
 */
#ifndef PROUST_MPITEST_H
#define PROUST_MPITEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static inline int mt_rank(void)
{
    int r = -1, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

#ifdef __SANITIZE_ADDRESS__
/* LeakSanitizer: what libpmix (Open MPI's mpirun, srun --mpi=pmix) keeps
 * until exit is its own, not ours */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpmix.so\n";
}
#endif

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", mt_rank(),      \
                    __FILE__, __LINE__, #cond);                                    \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            fflush(stderr);                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define MPI_CHECK(call)                                                            \
    do {                                                                           \
        int mt_rc_ = (call);                                                       \
        if (mt_rc_ != MPI_SUCCESS) {                                               \
            char mt_msg_[MPI_MAX_ERROR_STRING];                                    \
            int mt_len_ = 0;                                                       \
            MPI_Error_string(mt_rc_, mt_msg_, &mt_len_);                           \
            CHECK(0, "%s returned %d (%s)", #call, mt_rc_, mt_msg_);               \
        }                                                                          \
    } while (0)

/* Check that `call` fails with error class `cls` (MPI_ERRORS_RETURN must be
 * in force on the communicator involved). */
#define EXPECT_CLASS(call, cls)                                                    \
    do {                                                                           \
        int mt_ec_rc_ = (call), mt_ec_cls_ = 0;                                    \
        if (mt_ec_rc_ != MPI_SUCCESS)                                              \
            MPI_Error_class(mt_ec_rc_, &mt_ec_cls_);                               \
        CHECK(mt_ec_rc_ != MPI_SUCCESS && mt_ec_cls_ == (cls),                     \
              "%s returned %d (class %d), expected class %s (%d)", #call, mt_ec_rc_, \
              mt_ec_cls_, #cls, (cls));                                            \
    } while (0)

/* Does every rank of MPI_COMM_WORLD have `bytes` of free memory? (the
 * tests that move more than INT_MAX bytes skip themselves where it is
 * short) */
static inline int mt_all_have_memory(double bytes)
{
    long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    int ok = pages > 0 && (double)pages * (double)psz > bytes, all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}

/* Deterministic byte pattern: byte i of a message identified by `seed`. */
static inline unsigned char mt_byte(uint64_t seed, size_t i)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + i * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 17));
}
static inline void mt_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        p[i] = mt_byte(seed, i);
}
/* Index of the first wrong byte, or -1. */
static inline long mt_verify(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != mt_byte(seed, i))
            return (long)i;
    return -1;
}

/* Did a call fail the way a dead peer makes it (class MPI_ERR_OTHER)? */
static inline int mt_peer_failed(int rc)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return rc != MPI_SUCCESS && cls == MPI_ERR_OTHER;
}

#endif /* PROUST_MPITEST_H */
