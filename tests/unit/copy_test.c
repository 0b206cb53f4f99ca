/* proust_copy (proust.h) and the shm rail's cross-process copy
 * (drivers/shm_cross.c): every byte lands, nothing outside the destination
 * changes, for sizes around the vector loop's limits and every offset of
 * destination and source within a cache line (the loop and the bounce
 * buffer serve the offsets 1-31; the others stay with memcpy and the plain
 * system call). The cross copy runs against this process's own memory. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "proust.h"
#include "drivers/shm_state.h"
#include "unit.h"

#define GUARD 96
#define MAXLEN ((size_t)(5u << 20) + 777) /* beyond the loop's 4 MiB and the bounce piece */

static unsigned char *src_area, *dst_area;

static void fill(unsigned char *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* dst_area: guard bytes of 0xA5 around [doff, doff + n) */
static void check(const unsigned char *src, size_t soff, size_t doff, size_t n, const char *what)
{
    for (size_t i = 0; i < doff; i++)
        if (dst_area[i] != 0xA5) {
            fprintf(stderr, "%s: n=%zu soff=%zu doff=%zu: byte %zu before the destination changed\n",
                    what, n, soff, doff, doff - i);
            exit(1);
        }
    if (memcmp(dst_area + doff, src + soff, n) != 0) {
        size_t i = 0;
        while (dst_area[doff + i] == src[soff + i])
            i++;
        fprintf(stderr, "%s: n=%zu soff=%zu doff=%zu: byte %zu differs\n", what, n, soff, doff, i);
        exit(1);
    }
    for (size_t i = 0; i < GUARD; i++)
        if (dst_area[doff + n + i] != 0xA5) {
            fprintf(stderr, "%s: n=%zu soff=%zu doff=%zu: byte %zu after the destination changed\n",
                    what, n, soff, doff, i);
            exit(1);
        }
}

/* 0-16: the inline moves of small payloads; then the loop's limits */
static const size_t sizes[] = {0,      1,      2,      3,      4,     5,     7,       8,
                               9,      15,     16,     17,     31,    32,    33,      2047,
                               2048,   2049,   2080,   4095,   4097,  9999,  65536,   65599,
                               131071, 131072, 131073, 262145, (size_t)4 << 20,
                               ((size_t)4 << 20) + 1,  MAXLEN};

static void copy_case(size_t n, size_t soff, size_t doff, int round)
{
    memset(dst_area, 0xA5, doff + n + GUARD);
    proust_copy(dst_area + doff, src_area + soff, n);
    check(src_area, soff, doff, n, round ? "proust_copy (again)" : "proust_copy");
}

static void test_copy(void)
{
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t doff = 0; doff < 64; doff += n > (1u << 20) ? 7 : 1)
            for (size_t soff = 0; soff < 64; soff += n > 70000 ? 13 : 3)
                copy_case(n, soff, doff, 0);
    }
    /* the classification itself: 1..31 bytes past the source modulo 64 */
    unsigned char *a = src_area;
    EXPECT_TRUE(!proust_copy_offset_slow(a + 64, a));
    EXPECT_TRUE(proust_copy_offset_slow(a + 1, a));
    EXPECT_TRUE(proust_copy_offset_slow(a + 16, a));
    EXPECT_TRUE(proust_copy_offset_slow(a + 95, a));
    EXPECT_TRUE(!proust_copy_offset_slow(a + 32, a));
    EXPECT_TRUE(!proust_copy_offset_slow(a, a + 16));
}

static int test_cross(void)
{
    pid_t me = getpid();
    static const size_t cross_sizes[] = {1, 4095, 4096, 100000, 131072, 131073, 300001,
                                         (size_t)1 << 20, MAXLEN};
    for (size_t k = 0; k < sizeof cross_sizes / sizeof cross_sizes[0]; k++) {
        size_t n = cross_sizes[k];
        for (size_t doff = 0; doff < 64; doff += 5)
            for (size_t soff = 0; soff < 64; soff += n > 200000 ? 29 : 11) {
                size_t copied = 99;
                /* a get: the peer's memory is the source */
                memset(dst_area, 0xA5, doff + n + GUARD);
                int err = proust__shm_cross_copy(me, dst_area + doff,
                                                 (uint64_t)(uintptr_t)(src_area + soff), n, false,
                                                 &copied);
                if (err == EPERM || err == ENOSYS || err == EACCES) {
                    fprintf(stderr, "process_vm_readv refused here (%s): cross copy not tested\n",
                            strerror(err));
                    return 77;
                }
                EXPECT_EQ(err, 0);
                EXPECT_EQ(copied, n);
                check(src_area, soff, doff, n, "cross copy (get)");
                /* a write: the peer's memory is the destination */
                memset(dst_area, 0xA5, doff + n + GUARD);
                err = proust__shm_cross_copy(me, src_area + soff,
                                             (uint64_t)(uintptr_t)(dst_area + doff), n, true,
                                             &copied);
                EXPECT_EQ(err, 0);
                EXPECT_EQ(copied, n);
                check(src_area, soff, doff, n, "cross copy (write)");
            }
    }
    /* a peer address that is not mapped: an error, not a crash */
    size_t copied = 0;
    int err = proust__shm_cross_copy(me, dst_area, 8, 8192, false, &copied);
    EXPECT_TRUE(err != 0);
    return 0;
}

int main(void)
{
    /* (C11: the size a multiple of the alignment) */
    size_t area = (MAXLEN + 4096 + GUARD + 4095) & ~(size_t)4095;
    src_area = aligned_alloc(4096, area);
    dst_area = aligned_alloc(4096, area);
    EXPECT_TRUE(src_area && dst_area);
    fill(src_area, MAXLEN + 4096, 7);
    test_copy();
    int rc = test_cross();
    free(src_area);
    free(dst_area);
    if (rc == 0)
        printf("copy: all sizes and offsets intact\n");
    return rc;
}
