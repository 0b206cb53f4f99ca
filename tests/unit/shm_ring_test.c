/* The shared-memory ring: records of every size come out intact and in
 * order across many wraps, a full ring says busy instead of overwriting,
 * and payload bytes that look like a stamp are never taken for a record. */
#include <string.h>

#include "drivers/shm_ring.h"
#include "proust.h"
#include "unit.h"

#define RING (16 * 1024)

static _Alignas(64) uint8_t ring[RING];
static struct proust__shm_ring_ctl ctl;

int main(void)
{
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
