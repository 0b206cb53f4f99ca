/* The shared-memory ring: records of every size come out intact and in
 * order across many wraps, a full ring says busy instead of overwriting,
 * and payload bytes that look like a stamp are never taken for a record.
 * A large ring in a ping-pong (the consumer answers, empties the ring)
 * starts again at its beginning, records still intact; a ring whose
 * consumer keeps up without answering starts again within its first
 * stages, all its pages there or not; it grows once records wait, and
 * once they no longer wait, goes back to its first stages. */
#include <string.h>

#include "drivers/shm_ring.h"
#include "proust.h"
#include "unit.h"

#define RING (16 * 1024)

static _Alignas(64) uint8_t ring[RING];
static struct proust__shm_ring_ctl ctl;

#define BIG_RING (256 * 1024)
static _Alignas(64) uint8_t big_ring[BIG_RING];
static struct proust__shm_ring_ctl big_ctl;

/* Records of 1-6 KiB through the large ring, the consumer taking each one
 * before the next is written; `answer`: it answers each (a ping-pong).
 * Returns the furthest ring offset any record from the `count_from`th on
 * reached. */
static size_t ping_pong(bool answer, size_t populated, int backlog_from, int count_from)
{
    /* a new ring, zeroed as a new segment is (the last run's stamps would
     * be valid ones at the same positions) */
    memset(big_ring, 0, sizeof big_ring);
    memset(&big_ctl, 0, sizeof big_ctl);
    struct proust__shm_producer p = {
        .data = big_ring, .ctl = &big_ctl, .size = BIG_RING, .populated = populated};
    struct proust__shm_consumer c = {.data = big_ring, .ctl = &big_ctl, .size = BIG_RING};
    static uint8_t msg[8192];
    const char *err = NULL;
    size_t furthest = 0;
    uint64_t x = 777;
    for (int i = 0; i < 3000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = 1024 + (size_t)(x >> 33) % 5000;
        /* every word a stamp a later record at its line could carry */
        for (size_t k = 0; k + 8 <= len; k += 8) {
            uint64_t fake = p.head + BIG_RING + PROUST__SHM_REC_HDR + k + 1;
            memcpy(msg + k, &fake, 8);
        }
        msg[len - 1] = (uint8_t)i;
        if (answer)
            atomic_store(&p.answered, true);
        struct iovec iov = {msg, len};
        EXPECT_EQ(proust__shm_ring_write(&p, SHM_REC_PACKET, 0, 0, &iov, 1, len), PROUST_OK);
        if (i >= backlog_from && i < backlog_from + 40) {
            /* a backlog: a second record waits behind this one */
            EXPECT_EQ(proust__shm_ring_write(&p, SHM_REC_PACKET, 0, 0, &iov, 1, len), PROUST_OK);
            const struct proust__shm_rec *first = proust__shm_ring_peek(&c, &err);
            EXPECT_TRUE(first != NULL && first->len == len);
            size_t at = (size_t)((const uint8_t *)first - big_ring) + len;
            if (i >= count_from)
                furthest = at > furthest ? at : furthest;
            proust__shm_ring_consume(&c, first);
        }
        const struct proust__shm_rec *r = proust__shm_ring_peek(&c, &err);
        EXPECT_TRUE(r != NULL && r->kind == SHM_REC_PACKET && r->len == len);
        EXPECT_TRUE(memcmp((const uint8_t *)r + r->hdr_len, msg, len) == 0);
        size_t end = (size_t)((const uint8_t *)r - big_ring) + len;
        if (i >= count_from)
            furthest = end > furthest ? end : furthest;
        proust__shm_ring_consume(&c, r);
        EXPECT_TRUE(proust__shm_ring_peek(&c, &err) == NULL && err == NULL);
        proust__shm_ring_publish(&c);
    }
    return furthest;
}

int main(void)
{
    /* answered: back to the start once past PROUST__SHM_HOT; not: all of it */
    size_t far = ping_pong(true, SIZE_MAX, 1 << 30, 0);
    EXPECT_TRUE(far <= 2 * PROUST__SHM_HOT + 8192);
    /* not answered, every page there: back within the first stages */
    far = ping_pong(false, SIZE_MAX, 1 << 30, 0);
    EXPECT_TRUE(far <= PROUST__SHM_POPULATE_NEXT + 8192);
    /* pages in stages: within the second while the consumer keeps up... */
    far = ping_pong(false, 0, 1 << 30, 0);
    EXPECT_TRUE(far <= PROUST__SHM_POPULATE_NEXT);
    /* ... past it once records wait (40 of 1-6 KiB behind others) */
    far = ping_pong(false, 0, 1000, 0);
    EXPECT_TRUE(far > PROUST__SHM_POPULATE_NEXT + 8192);
    /* ... and back within them once the backlog is gone */
    far = ping_pong(false, 0, 1000, 1100);
    EXPECT_TRUE(far <= PROUST__SHM_POPULATE_NEXT + 8192);

    struct proust__shm_producer p = {.data = ring, .ctl = &ctl, .size = RING};
    struct proust__shm_consumer c = {.data = ring, .ctl = &ctl, .size = RING};
    static uint8_t msg[RING], got[RING];
    const char *err = NULL;
    EXPECT_TRUE(proust__shm_ring_peek(&c, &err) == NULL);
    uint64_t x = 12345;
    size_t maxp = proust__shm_max_payload(RING);
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t len = (size_t)(x >> 33) % (i % 10 == 0 ? maxp + 1 : 200);
        /* payload full of values that would be valid stamps of records
         * starting at the same place one lap later: where the record will
         * land (after a WRAP if it does not fit before the end) */
        size_t rec = proust__shm_round_line(PROUST__SHM_PUT_HDR + len);
        size_t off = (size_t)(p.head & (RING - 1));
        uint64_t at = (rec > RING - off ? p.head + (RING - off) : p.head) + PROUST__SHM_PUT_HDR;
        for (size_t k = 0; k + 8 <= len; k += 8) {
            uint64_t fake = at + k + RING + 1;
            memcpy(msg + k, &fake, 8);
        }
        for (size_t k = len & ~(size_t)7; k < len; k++)
            msg[k] = (uint8_t)(i + k);
        struct iovec iov[2] = {{msg, len / 2}, {msg + len / 2, len - len / 2}};
        int rc = proust__shm_ring_write(&p, SHM_REC_PUT, (uint64_t)i, len, iov, 2, len);
        if (rc == PROUST_ERR_BUSY) {
            /* drain, then it must fit */
            const struct proust__shm_rec *r;
            while ((r = proust__shm_ring_peek(&c, &err)))
                proust__shm_ring_consume(&c, r);
            proust__shm_ring_publish(&c);
            rc = proust__shm_ring_write(&p, SHM_REC_PUT, (uint64_t)i, len, iov, 2, len);
        }
        EXPECT_EQ(rc, PROUST_OK);
        /* read it back every other time (so the ring also holds several) */
        if (i % 2 == 0) {
            const struct proust__shm_rec *r;
            int last = -1;
            while ((r = proust__shm_ring_peek(&c, &err))) {
                EXPECT_EQ(r->kind, SHM_REC_PUT);
                EXPECT_TRUE((int)r->token > last);
                last = (int)r->token;
                if ((int)r->token == i) {
                    memcpy(got, (const uint8_t *)r + r->hdr_len, r->len);
                    EXPECT_EQ(r->len, len);
                    EXPECT_EQ(r->offset, len);
                    EXPECT_TRUE(memcmp(got, msg, len) == 0);
                }
                proust__shm_ring_consume(&c, r);
            }
            EXPECT_EQ(last, i);
            proust__shm_ring_publish(&c);
        }
        EXPECT_TRUE(err == NULL);
    }
    /* full ring: busy, nothing overwritten */
    struct iovec one = {msg, 1000};
    int n = 0;
    while (proust__shm_ring_write(&p, SHM_REC_PACKET, 0, 0, &one, 1, 1000) == PROUST_OK)
        n++;
    EXPECT_TRUE(n >= 10 && n <= RING / 1024);
    const struct proust__shm_rec *r;
    int m = 0;
    while ((r = proust__shm_ring_peek(&c, &err))) {
        if (r->kind == SHM_REC_PACKET)
            m++;
        proust__shm_ring_consume(&c, r);
    }
    EXPECT_EQ(m, n);
    printf("shm ring: ok\n");
    return 0;
}
