/*
 * rdv_window — a window of large rendezvous messages in flight between two
 * processes at once (the pattern of a bandwidth test): on shm the receiver
 * then shares the copies with the sender (every other segment is written by
 * the sender, PUSH/DONE) while it pulls the others. Every byte is checked,
 * with the receives posted first and posted after the messages arrived,
 * and with mixed sizes so pushed and pulled segments interleave.
 */
#include "test_util.h"

#define NMSG 8

static const size_t sizes[NMSG] = {(1u << 20) + 3, 2u << 20, (1u << 20) + 4095, 3u << 20,
                                   1u << 20,       600000,  (2u << 20) - 1,    (1u << 20) + 1};

static void exchange(proust_session_t *s, int sender, int late, uint64_t seed)
{
    proust_request_t *r[NMSG];
    uint8_t *buf[NMSG];
    for (int i = 0; i < NMSG; i++) {
        buf[i] = malloc(sizes[i]);
        EXPECT(buf[i], "out of memory");
    }
    if (tu_rank == sender) {
        for (int i = 0; i < NMSG; i++) {
            tu_fill(buf[i], sizes[i], seed + (uint64_t)i);
            CHECK(proust_isend(s, buf[i], sizes[i], 1 - sender, 500 + (uint64_t)i, &r[i]));
        }
        CHECK(proust_waitall(NMSG, r, NULL));
    } else {
        if (late)
            tu_sleep_ms(100); /* the RTS are all waiting when the receives come */
        for (int i = 0; i < NMSG; i++) {
            memset(buf[i], 0, sizes[i]);
            CHECK(proust_irecv(s, buf[i], sizes[i], sender, 500 + (uint64_t)i,
                               PROUST_TAG_MASK_FULL, &r[i]));
        }
        proust_status_t st[NMSG];
        CHECK(proust_waitall(NMSG, r, st));
        for (int i = 0; i < NMSG; i++) {
            EXPECT_STATUS(st[i], sender, 500 + (uint64_t)i, sizes[i], sizes[i], PROUST_OK);
            EXPECT_PATTERN(buf[i], sizes[i], seed + (uint64_t)i, "message %d (%zu B), late=%d", i,
                           sizes[i], late);
        }
    }
    for (int i = 0; i < NMSG; i++)
        free(buf[i]);
    tu_barrier(s);
}

int main(void)
{
    proust_session_t *s = tu_init(60);
    EXPECT(tu_size == 2, "run with 2 processes");
    for (int round = 0; round < 3; round++) {
        TU_PHASE("receives posted first");
        exchange(s, round & 1, 0, 100 + (uint64_t)round * 10);
        TU_PHASE("receives posted late");
        exchange(s, (round + 1) & 1, 1, 200 + (uint64_t)round * 10);
    }
    if (tu_rank == 0)
        printf("rdv_window: %d large messages in flight, both ways, intact\n", NMSG);
    tu_finalize(s);
    return 0;
}
