/*
 * strategy_choice — PROUST_STRATEGY=auto picks each peer's strategy from
 * its rail's measured cost of a small packet (2 processes).
 *
 *   api_strategy_choice <expected strategy> [--measured]
 *
 * Rank 0 posts bursts of small nonblocking sends to rank 1 (sizes 0 to
 * 300 bytes, each checked byte for byte, in order) and waits for them, so
 * that the burst rule (coalesce merges them) and the measure both see
 * traffic; then a few large ones (rendezvous) interleaved with small ones.
 * Afterwards proust_peer_strategy must name <expected> on both ranks, and
 * with --measured the rail's cost must have moved off its profile's prior
 * (a measure was taken). Bad arguments to proust_peer_strategy fail.
 */
#include "test_util.h"

#define BURST 96
#define ROUNDS 40

static size_t size_of(int round, int i)
{
    return (size_t)((round * 131 + i * 37) % 301);
}

int main(int argc, char **argv)
{
    proust_session_t *s = tu_init(120);
    if (argc < 2 || tu_size != 2) {
        fprintf(stderr, "usage: api_strategy_choice <expected strategy> [--measured] "
                        "(2 processes)\n");
        return 2;
    }
    const char *want = argv[1];
    int peer = 1 - tu_rank;
    const char *name = NULL;
    unsigned prior = 0, cost = 0;
    CHECK(proust_peer_strategy(s, peer, &name, &prior));
    EXPECT(proust_peer_strategy(s, 2, &name, NULL) == PROUST_ERR_RANK, "rank 2 accepted");
    EXPECT(proust_peer_strategy(s, peer, NULL, NULL) == PROUST_ERR_INVALID, "NULL name accepted");

    static uint8_t bufs[BURST][301];
    proust_request_t *reqs[BURST];
    for (int round = 0; round < ROUNDS; round++) {
        TU_PHASE("burst");
        for (int i = 0; i < BURST; i++) {
            size_t len = size_of(round, i);
            uint64_t seed = (uint64_t)round << 16 | (uint64_t)i;
            if (tu_rank == 0) {
                tu_fill(bufs[i], len, seed);
                CHECK(proust_isend(s, bufs[i], len, peer, (proust_tag_t)i, &reqs[i]));
            } else {
                CHECK(proust_irecv(s, bufs[i], sizeof bufs[i], peer, (proust_tag_t)i,
                                   PROUST_TAG_MASK_FULL, &reqs[i]));
            }
        }
        proust_status_t st[BURST];
        CHECK(proust_waitall(BURST, reqs, st));
        if (tu_rank == 1)
            for (int i = 0; i < BURST; i++) {
                size_t len = size_of(round, i);
                uint64_t seed = (uint64_t)round << 16 | (uint64_t)i;
                EXPECT(st[i].count == len, "round %d message %d: %zu bytes, expected %zu", round,
                       i, st[i].count, len);
                long bad = tu_first_diff(bufs[i], len, seed);
                EXPECT(bad < 0, "round %d message %d: byte %ld differs", round, i, bad);
            }
    }

    TU_PHASE("large among small");
    size_t big = (size_t)3 << 20;
    uint8_t *large = malloc(big);
    EXPECT(large != NULL, "out of memory");
    for (int k = 0; k < 4; k++) {
        uint64_t seed = 0xb16000u + (uint64_t)k;
        if (tu_rank == 0) {
            tu_fill(bufs[0], 7, seed);
            tu_fill(large, big - (size_t)k, seed);
            CHECK(proust_isend(s, bufs[0], 7, peer, 1000, &reqs[0]));
            CHECK(proust_isend(s, large, big - (size_t)k, peer, 1001, &reqs[1]));
            CHECK(proust_isend(s, bufs[0], 7, peer, 1002, &reqs[2]));
            CHECK(proust_waitall(3, reqs, NULL));
        } else {
            static uint8_t a[7], b[7];
            CHECK(proust_irecv(s, a, 7, peer, 1000, PROUST_TAG_MASK_FULL, &reqs[0]));
            CHECK(proust_irecv(s, large, big, peer, 1001, PROUST_TAG_MASK_FULL, &reqs[1]));
            CHECK(proust_irecv(s, b, 7, peer, 1002, PROUST_TAG_MASK_FULL, &reqs[2]));
            proust_status_t st[3];
            CHECK(proust_waitall(3, reqs, st));
            EXPECT(st[1].count == big - (size_t)k, "large message %d: %zu bytes", k, st[1].count);
            EXPECT(tu_first_diff(a, 7, seed) < 0 && tu_first_diff(b, 7, seed) < 0,
                   "small message around large %d corrupted", k);
            EXPECT(tu_first_diff(large, big - (size_t)k, seed) < 0, "large message %d corrupted",
                   k);
        }
    }
    free(large);
    tu_barrier(s);

    TU_PHASE("choice");
    CHECK(proust_peer_strategy(s, peer, &name, &cost));
    printf("rank %d: strategy to rank %d: %s (PROUST_STRATEGY=%s), small packet %u ns "
           "(%u before)\n",
           tu_rank, peer, name, proust_strategy_name(s), cost, prior);
    EXPECT(strcmp(name, want) == 0, "strategy to rank %d is %s, expected %s", peer, name, want);
    if (tu_has_arg(argc, argv, "--measured") && tu_rank == 0)
        EXPECT(cost != prior, "the rail's packet cost is still its prior (%u ns): not measured",
               prior);
    tu_finalize(s);
    return 0;
}
