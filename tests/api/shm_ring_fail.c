/*
 * shm_ring_fail — a shared-memory ring that cannot be made is a clear
 * error, and what was made before still works (2 processes, shm).
 *
 * Run by tests/tools/small_dev_shm.sh in a mount namespace whose /dev/shm
 * holds the heads of the two processes' segments and the first pages of
 * one ring, not two. Rank 0 sends to rank 1 first (that ring gets its
 * pages: the message arrives intact); then rank 1's first send to rank 0
 * must fail with PROUST_ERR_NOMEM, at once, without a crash or a hang, and
 * a second try fails the same way. Rank 0 then sends again over the ring
 * that exists.
 *
 * With PROUST_TEST_RING_REST=1 (a 256 KiB ring and a /dev/shm that holds
 * its first 64 KiB, not the next stage; no second ring): rank 0 then
 * streams 8 KiB messages while rank 1 waits in the launcher (a ring whose
 * consumer keeps up starts again within its pages rather than grow) until
 * the ring needs its next stage of pages, which /dev/shm cannot give: that
 * send fails with PROUST_ERR_NOMEM (no SIGBUS), and the messages before it
 * and a short one after it arrive intact, in order. (PROUST_PROGRESS=block:
 * no progress thread takes the messages meanwhile.)
 */
#include <stdbool.h>

#include "test_util.h"

int main(void)
{
    proust_session_t *s = tu_init(60);
    EXPECT(tu_size == 2, "2 processes, please");
    const char *rail = NULL;
    CHECK(proust_peer_rail(s, 1 - tu_rank, &rail));
    EXPECT(strcmp(rail, "shm") == 0, "the peer is reached by %s, expected shm", rail);
    char msg[64];
    TU_PHASE("the first ring");
    if (tu_rank == 0) {
        tu_fill(msg, sizeof msg, 1);
        CHECK(proust_send(s, msg, sizeof msg, 1, 7));
    } else {
        proust_status_t st;
        CHECK(proust_recv(s, msg, sizeof msg, 0, 7, PROUST_TAG_MASK_FULL, &st));
        EXPECT(st.count == sizeof msg && tu_first_diff(msg, sizeof msg, 1) < 0,
               "message over the first ring damaged");
    }
    const char *rest = getenv("PROUST_TEST_RING_REST");
    bool rest_only = rest && strcmp(rest, "1") == 0;
    TU_PHASE("the ring that does not fit");
    if (tu_rank == 1 && !rest_only) {
        for (int attempt = 0; attempt < 2; attempt++) {
            double t0 = tu_now();
            int rc = proust_send(s, msg, sizeof msg, 0, 8);
            EXPECT(rc == PROUST_ERR_NOMEM, "send %d over a ring /dev/shm cannot hold returned %s, "
                   "expected PROUST_ERR_NOMEM", attempt, proust_error_name(rc));
            EXPECT(tu_now() - t0 < 5, "the failed send took %.1f s", tu_now() - t0);
        }
        printf("rank 1: a ring /dev/shm cannot hold: PROUST_ERR_NOMEM, as expected\n");
    }
    TU_PHASE("the first ring again");
    if (tu_rank == 0) {
        tu_fill(msg, sizeof msg, 2);
        CHECK(proust_send(s, msg, sizeof msg, 1, 9));
    } else {
        proust_status_t st;
        CHECK(proust_recv(s, msg, sizeof msg, 0, 9, PROUST_TAG_MASK_FULL, &st));
        EXPECT(tu_first_diff(msg, sizeof msg, 2) < 0, "second message damaged");
    }
    if (rest_only) {
        TU_PHASE("the rest of the first ring");
        enum { BIG = 8192, MAX_SENDS = 64, TAG_BIG = 100, TAG_END = 99 };
        static uint8_t big[BIG];
        /* rank 1 has taken the message above and polls no more until the
         * second exchange (its receive would take the stream's first
         * records too, and a ring emptied starts again within its pages) */
        char one = 1, both[2];
        CHECK(proust_oob_allgather(s, &one, 1, both));
        if (tu_rank == 0) {
            int sent = 0, rc = PROUST_OK;
            for (; sent < MAX_SENDS; sent++) {
                tu_fill(big, BIG, 1000 + (uint64_t)sent);
                rc = proust_send(s, big, BIG, 1, TAG_BIG);
                if (rc != PROUST_OK)
                    break;
            }
            EXPECT(rc == PROUST_ERR_NOMEM && sent >= 1,
                   "after %d sends of %d B, a send past the ring's first pages returned %s, "
                   "expected PROUST_ERR_NOMEM", sent, BIG, proust_error_name(rc));
            int again = proust_send(s, big, BIG, 1, TAG_BIG);
            EXPECT(again == PROUST_ERR_NOMEM, "the same send again returned %s",
                   proust_error_name(again));
            CHECK(proust_oob_allgather(s, &one, 1, both)); /* rank 1 may read now */
            CHECK(proust_send(s, &sent, sizeof sent, 1, TAG_END)); /* within the pages */
            printf("rank 0: %d sends of %d B, then PROUST_ERR_NOMEM, as expected\n", sent, BIG);
        } else {
            CHECK(proust_oob_allgather(s, &one, 1, both)); /* rank 0 filled the ring */
            for (int got = 0;; got++) {
                proust_status_t st;
                CHECK(proust_recv(s, big, BIG, 0, 0, PROUST_TAG_MASK_ANY, &st));
                if (st.tag == TAG_END) {
                    int sent = -1;
                    memcpy(&sent, big, sizeof sent);
                    EXPECT(st.count == sizeof sent && sent == got,
                           "rank 0 sent %d messages before its error, %d arrived", sent, got);
                    break;
                }
                EXPECT(st.count == BIG && tu_first_diff(big, BIG, 1000 + (uint64_t)got) < 0,
                       "message %d before the error damaged or out of order", got);
            }
        }
    }
    proust_finalize(s);
    return 0;
}
