/*
 * stash — chunks that overtake an earlier message wait in the stash and
 * are matched in order when it arrives. With aggreg, urgent segments of two
 * large packs (104 rendezvous chunks) leave before a small message posted
 * earlier; when the small message arrives every stashed chunk is matched at
 * once, more answers than one batch holds (a regression test: that used to
 * overflow the answer list). Data and order are checked.
 */
#include "test_util.h"

#define SEG 16384

int main(void)
{
    proust_session_t *s = tu_init(60);
    int me = tu_rank, peer = tu_size > 1 ? 1 - tu_rank : tu_rank;
    static uint8_t small_in[64], small_out[64];
    uint8_t *sa = malloc(40 * SEG), *ra = calloc(40, SEG);
    uint8_t *sb = malloc(64 * SEG), *rb = calloc(64, SEG);
    EXPECT(sa && ra && sb && rb, "out of memory");
    tu_fill(sa, 40 * SEG, 7);
    tu_fill(sb, 64 * SEG, 8);
    tu_fill(small_out, sizeof small_out, 9);
    proust_request_t *r[6];
    proust_pack_t *p;
    TU_PHASE("posting receives");
    CHECK(proust_irecv(s, small_in, sizeof small_in, peer, 1, PROUST_TAG_MASK_FULL, &r[0]));
    CHECK(proust_unpack_begin(s, peer, 2, PROUST_TAG_MASK_FULL, &p));
    for (int i = 0; i < 40; i++)
        CHECK(proust_unpack_add(p, ra + (size_t)i * SEG, SEG));
    CHECK(proust_unpack_end(p, &r[1]));
    CHECK(proust_unpack_begin(s, peer, 3, PROUST_TAG_MASK_FULL, &p));
    for (int i = 0; i < 64; i++)
        CHECK(proust_unpack_add(p, rb + (size_t)i * SEG, SEG));
    CHECK(proust_unpack_end(p, &r[2]));
    tu_barrier(s);
    TU_PHASE("sending a small message, then two urgent packs");
    CHECK(proust_isend(s, small_out, sizeof small_out, peer, 1, &r[3]));
    CHECK(proust_pack_begin(s, peer, 2, &p));
    for (int i = 0; i < 40; i++)
        CHECK(proust_pack_add(p, sa + (size_t)i * SEG, SEG, PROUST_PACK_URGENT));
    CHECK(proust_pack_end(p, &r[4]));
    CHECK(proust_pack_begin(s, peer, 3, &p));
    for (int i = 0; i < 64; i++)
        CHECK(proust_pack_add(p, sb + (size_t)i * SEG, SEG, PROUST_PACK_URGENT));
    CHECK(proust_pack_end(p, &r[5]));
    TU_PHASE("waiting for all");
    CHECK(proust_waitall(6, r, NULL));
    EXPECT_PATTERN(small_in, sizeof small_in, 9, "small message");
    EXPECT_PATTERN(ra, 40 * SEG, 7, "40-segment pack");
    EXPECT_PATTERN(rb, 64 * SEG, 8, "64-segment pack");
    (void)me;
    printf("stash: overtaking urgent segments matched in order, data intact\n");
    free(sa);
    free(ra);
    free(sb);
    free(rb);
    tu_finalize(s);
    return 0;
}
