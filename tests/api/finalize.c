/*
 * finalize — "proust_finalize: complete outstanding sends, then release
 * everything; requests still pending are canceled" (2 processes).
 *
 * Rank 0 posts sends it never waits for — an eager one, a rendezvous one
 * (300 000 B and 4 MiB), a pack, some freed with proust_request_free, some
 * simply left — and calls proust_finalize at once. Rank 1 posts its
 * receives only 200 ms later (so the rendezvous sends still need rank 0 to
 * answer after it entered finalize), checks every byte, leaves one receive
 * that nothing matches, and finalizes. Both finalize calls must return
 * PROUST_OK within the watchdog (20 s), and every message must arrive.
 */
#include "test_util.h"

#define NBIG 300000
#define NHUGE (4u << 20)

int main(void)
{
    proust_session_t *s = tu_init(20);
    EXPECT(tu_size == 2, "run with 2 processes");
    static uint8_t small[100], seg0[16], seg1[50000];
    uint8_t *big = malloc(NBIG), *huge = malloc(NHUGE);
    EXPECT(big && huge, "out of memory");
    tu_barrier(s);
    if (tu_rank == 0) {
        TU_PHASE("rank 0 posting sends it does not wait for");
        tu_fill(small, sizeof small, 1);
        tu_fill(big, NBIG, 2);
        tu_fill(huge, NHUGE, 3);
        tu_fill(seg0, sizeof seg0, 4);
        tu_fill(seg1, sizeof seg1, 5);
        proust_request_t *r[4];
        CHECK(proust_isend(s, small, sizeof small, 1, 1, &r[0]));
        CHECK(proust_isend(s, big, NBIG, 1, 2, &r[1]));
        CHECK(proust_isend(s, huge, NHUGE, 1, 3, &r[2]));
        proust_pack_t *p;
        CHECK(proust_pack_begin(s, 1, 4, &p));
        CHECK(proust_pack_add(p, seg0, sizeof seg0, PROUST_PACK_URGENT));
        CHECK(proust_pack_add(p, seg1, sizeof seg1, 0));
        CHECK(proust_pack_end(p, &r[3]));
        CHECK(proust_request_free(&r[1]));
        CHECK(proust_request_free(&r[3]));
        /* r[0] and r[2] are left as they are */
        double t0 = tu_now();
        TU_PHASE("rank 0 in proust_finalize with sends outstanding");
        CHECK(proust_finalize(s));
        printf("rank 0: proust_finalize returned after %.3f s\n", tu_now() - t0);
    } else {
        TU_PHASE("rank 1 receiving after a delay");
        tu_sleep_ms(200);
        uint8_t *buf = malloc(NHUGE);
        static uint8_t b0[16], b1[50000];
        proust_status_t st;
        CHECK(proust_recv(s, buf, NHUGE, 0, 3, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 3, NHUGE, NHUGE, PROUST_OK);
        EXPECT_PATTERN(buf, NHUGE, 3, "4 MiB send left unwaited before finalize");
        CHECK(proust_recv(s, buf, NBIG, 0, 2, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 2, NBIG, NBIG, PROUST_OK);
        EXPECT_PATTERN(buf, NBIG, 2, "freed rendezvous send");
        CHECK(proust_recv(s, buf, sizeof small, 0, 1, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 1, sizeof small, sizeof small, PROUST_OK);
        EXPECT_PATTERN(buf, sizeof small, 1, "eager send left unwaited");
        proust_pack_t *p;
        proust_request_t *r;
        CHECK(proust_unpack_begin(s, 0, 4, PROUST_TAG_MASK_FULL, &p));
        CHECK(proust_unpack_add(p, b0, sizeof b0));
        CHECK(proust_unpack_add(p, b1, sizeof b1));
        CHECK(proust_unpack_end(p, &r));
        CHECK(proust_wait(&r, &st));
        EXPECT_PATTERN(b0, sizeof b0, 4, "freed pack, segment 0");
        EXPECT_PATTERN(b1, sizeof b1, 5, "freed pack, segment 1");
        /* receives nothing will match: finalize cancels them. The large
         * one, first for its source, is offered to rank 0 on shm (which
         * never uses it): finalize takes the offer back before the rails
         * close */
        size_t nlarge = 1 << 20;
        uint8_t *large = malloc(nlarge);
        proust_request_t *never_large;
        CHECK(proust_irecv(s, large, nlarge, 0, 98, PROUST_TAG_MASK_FULL, &never_large));
        proust_request_t *never;
        CHECK(proust_irecv(s, buf, 10, 0, 99, PROUST_TAG_MASK_FULL, &never));
        free(buf);
        TU_PHASE("rank 1 in proust_finalize with receives posted");
        CHECK(proust_finalize(s));
        free(large);
        printf("rank 1: every message sent before rank 0's finalize arrived intact\n");
    }
    free(big);
    free(huge);
    alarm(0);
    return 0;
}
