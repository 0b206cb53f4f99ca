/* GET_ALL_REPLY (boot/wire.h, proust__wire_all_parse): proustrun's answer
 * with every rank's value under a key is accepted exactly when its bytes
 * make n entries, each inside the payload; truncations, lengths past the
 * end, trailing bytes, negative lengths and random bytes are refused
 * without reading out of bounds (run under ASan in CI). And
 * proust__boot_value gives a rank's value as a get would. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "boot/wire.h"
#include "proust.h"
#include "unit.h"

/* n entries: rank r has a value of (r * 5) % 11 bytes, rank 2 none. */
static size_t build(unsigned char *out, int n)
{
    size_t pos = 0;
    for (int r = 0; r < n; r++) {
        int32_t len = r == 2 ? -1 : (r * 5) % 11;
        memcpy(out + pos, &len, sizeof len);
        pos += sizeof len;
        for (int32_t i = 0; i < len; i++)
            out[pos++] = (unsigned char)(r * 31 + i);
    }
    return pos;
}

int main(void)
{
    enum { N = 9 };
    static unsigned char good[1024], bad[1024];
    size_t off[N], len = build(good, N);
    int32_t vlen[N];
    EXPECT_EQ(proust__wire_all_parse(good, len, N, off, vlen), 0);
    EXPECT_EQ(vlen[2], -1);
    EXPECT_EQ(vlen[3], 4);
    EXPECT_EQ(good[off[3]], 3 * 31);

    /* through the values a caller reads */
    struct proust__boot_values v = {.buf = good, .n = N};
    size_t offs[N], lens[N];
    for (int r = 0; r < N; r++) {
        offs[r] = off[r];
        lens[r] = vlen[r] < 0 ? SIZE_MAX : (size_t)vlen[r];
    }
    v.off = offs;
    v.len = lens;
    unsigned char val[16];
    size_t cap = sizeof val;
    EXPECT_EQ(proust__boot_value(&v, 4, val, &cap), PROUST_OK);
    EXPECT_EQ(cap, 9);
    EXPECT_EQ(val[8], 4 * 31 + 8);
    cap = sizeof val;
    EXPECT_EQ(proust__boot_value(&v, 2, val, &cap), PROUST_ERR_INVALID);
    cap = 3;
    EXPECT_EQ(proust__boot_value(&v, 4, val, &cap), PROUST_ERR_NOMEM);
    EXPECT_EQ(cap, 9);
    cap = sizeof val;
    EXPECT_EQ(proust__boot_value(&v, N, val, &cap), PROUST_ERR_RANK);

    /* every truncation, and a byte too many, are refused */
    for (size_t cut = 0; cut < len; cut++)
        EXPECT_EQ(proust__wire_all_parse(good, cut, N, off, vlen), -1);
    memcpy(bad, good, len);
    bad[len] = 0;
    EXPECT_EQ(proust__wire_all_parse(bad, len + 1, N, off, vlen), -1);
    /* a length past the end, or below -1 */
    int32_t huge = 1 << 30, neg = -2;
    memcpy(bad, good, len);
    memcpy(bad, &huge, sizeof huge);
    EXPECT_EQ(proust__wire_all_parse(bad, len, N, off, vlen), -1);
    memcpy(bad, &neg, sizeof neg);
    EXPECT_EQ(proust__wire_all_parse(bad, len, N, off, vlen), -1);
    /* more or fewer ranks than the payload holds */
    EXPECT_EQ(proust__wire_all_parse(good, len, N - 1, off, vlen), -1);
    EXPECT_EQ(proust__wire_all_parse(good, len, N + 1, off, vlen), -1);

    /* random bytes and random lengths: accepted only when consistent */
    srand(43);
    for (int round = 0; round < 200000; round++) {
        size_t blen = (size_t)rand() % 96;
        for (size_t i = 0; i < blen; i++)
            bad[i] = (unsigned char)rand();
        if (round % 3 == 0) /* small plausible lengths */
            for (size_t i = 0; i + 4 <= blen; i += 4 + (size_t)(rand() % 4)) {
                int32_t l = rand() % 6 - 1;
                memcpy(bad + i, &l, sizeof l);
            }
        int n = 1 + rand() % 8;
        if (proust__wire_all_parse(bad, blen, n, off, vlen) == 0)
            for (int r = 0; r < n; r++)
                EXPECT_TRUE(vlen[r] == -1 ||
                            (off[r] <= blen && (size_t)vlen[r] <= blen - off[r]));
    }
    printf("boot_all: GET_ALL_REPLY parser OK\n");
    return 0;
}
