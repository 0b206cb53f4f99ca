/*
 * p2p_common.h — helpers of the point-to-point tests (tests/mpi/p2p_*.c):
 * a fast fill/verify for large buffers, and error-class checks.
 */
#ifndef PROUST_P2P_COMMON_H
#define PROUST_P2P_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpitest.h"

/* Word-at-a-time pattern (megabytes cost milliseconds, unlike mt_fill):
 * byte i of a message identified by `seed`, any alignment. */
static inline uint64_t p2p_word(uint64_t seed, size_t w)
{
    uint64_t x = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (w + 1) * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 29);
}
static inline void p2p_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = (unsigned char *)buf;
    size_t w = 0;
    for (; (w + 1) * 8 <= n; w++) {
        uint64_t v = p2p_word(seed, w);
        memcpy(p + w * 8, &v, 8);
    }
    if (n > w * 8) {
        uint64_t v = p2p_word(seed, w);
        memcpy(p + w * 8, &v, n - w * 8);
    }
}
/* Index of the first wrong byte, or -1. */
static inline long p2p_check(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t w = 0; w * 8 < n; w++) {
        uint64_t v = p2p_word(seed, w);
        size_t k = n - w * 8 < 8 ? n - w * 8 : 8;
        if (memcmp(p + w * 8, &v, k) != 0) {
            const unsigned char *e = (const unsigned char *)&v;
            for (size_t i = 0; i < k; i++)
                if (p[w * 8 + i] != e[i])
                    return (long)(w * 8 + i);
        }
    }
    return -1;
}

/* The error class of an MPI return code. */
static inline int p2p_class(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

/* Check the envelope and byte count of a receive status. */
#define CHECK_STATUS(st, src, tg, bytes)                                           \
    do {                                                                           \
        int p2p_n_ = -1;                                                           \
        MPI_CHECK(MPI_Get_count(&(st), MPI_BYTE, &p2p_n_));                        \
        CHECK((st).MPI_SOURCE == (src) && (st).MPI_TAG == (tg) && p2p_n_ == (int)(bytes), \
              "status source %d tag %d count %d, expected %d %d %d", (st).MPI_SOURCE, \
              (st).MPI_TAG, p2p_n_, (int)(src), (int)(tg), (int)(bytes));         \
    } while (0)

#endif /* PROUST_P2P_COMMON_H */
