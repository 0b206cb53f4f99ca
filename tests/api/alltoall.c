/*
 * alltoall — every rank sends a message of each size to every rank (itself
 * included) and receives one from each, with the receives posted first and
 * then with the sends first (unexpected path); every payload checked
 * against its (source, destination, size, round) pattern and status.
 *
 * Options: --sizes=a,b,c (bytes, default 0,1,100,5000,40000,70000,300000),
 *          --rounds=N (default 2).
 */
#include "test_util.h"

static uint64_t seed(int src, int dst, size_t size, int round)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ ((uint64_t)round << 24) ^
           (uint64_t)size;
}

int main(int argc, char **argv)
{
    proust_session_t *s = tu_init(60);
    const char *list = tu_arg(argc, argv, "--sizes", "0,1,100,5000,40000,70000,300000");
    int rounds = atoi(tu_arg(argc, argv, "--rounds", "2"));
    size_t sizes[32];
    int nsizes = 0;
    for (const char *p = list; *p && nsizes < 32;) {
        char *end;
        sizes[nsizes++] = (size_t)strtoull(p, &end, 0);
        p = *end == ',' ? end + 1 : end;
        if (end == p && *p)
            TU_FAIL("bad --sizes list '%s'", list);
    }
    int n = tu_size;
    if (tu_rank == 0) {
        printf("alltoall: %d processes, %d sizes, %d rounds, strategy %s, rails:", n, nsizes,
               rounds, proust_strategy_name(s));
        for (int r = 0; r < n; r++) {
            const char *name;
            CHECK(proust_peer_rail(s, r, &name));
            printf(" %d:%s", r, name);
        }
        printf("\n");
    }
    uint8_t **sbuf = calloc((size_t)n, sizeof *sbuf), **rbuf = calloc((size_t)n, sizeof *rbuf);
    proust_request_t **reqs = calloc(2 * (size_t)n, sizeof *reqs);
    proust_status_t *st = calloc(2 * (size_t)n, sizeof *st);
    EXPECT(sbuf && rbuf && reqs && st, "out of memory");
    double t0 = tu_now();
    for (int round = 0; round < rounds; round++) {
        for (int k = 0; k < nsizes; k++) {
            size_t len = sizes[k];
            for (int unexpected = 0; unexpected < 2; unexpected++) {
                char phase[80];
                snprintf(phase, sizeof phase, "round %d size %zu %s", round, len,
                         unexpected ? "sends first" : "receives first");
                TU_PHASE(phase);
                proust_tag_t tag = ((proust_tag_t)round << 32) | ((proust_tag_t)k << 1) |
                                   (proust_tag_t)unexpected;
                for (int r = 0; r < n; r++) {
                    sbuf[r] = malloc(len ? len : 1);
                    rbuf[r] = malloc(len ? len : 1);
                    EXPECT(sbuf[r] && rbuf[r], "out of memory");
                    tu_fill(sbuf[r], len, seed(tu_rank, r, len, round));
                    memset(rbuf[r], 0, len);
                }
                if (!unexpected) {
                    for (int r = 0; r < n; r++)
                        CHECK(proust_irecv(s, rbuf[r], len, r, tag, PROUST_TAG_MASK_FULL,
                                           &reqs[r]));
                    tu_barrier(s);
                }
                /* start with the next rank so that not everyone hits rank 0 first */
                for (int j = 0; j < n; j++) {
                    int r = (tu_rank + 1 + j) % n;
                    CHECK(proust_isend(s, sbuf[r], len, r, tag, &reqs[n + r]));
                }
                if (unexpected) {
                    tu_sleep_ms(10);
                    for (int j = 0; j < n; j++) {
                        int r = (tu_rank + n - 1 - j) % n;
                        CHECK(proust_irecv(s, rbuf[r], len, r, tag, PROUST_TAG_MASK_FULL,
                                           &reqs[r]));
                    }
                }
                int rc = proust_waitall(2 * (size_t)n, reqs, st);
                for (int r = 0; r < n; r++) {
                    EXPECT_STATUS(st[r], r, tag, len, len, PROUST_OK);
                    EXPECT_PATTERN(rbuf[r], len, seed(r, tu_rank, len, round),
                                   "%zu bytes from rank %d, round %d, %s", len, r, round,
                                   unexpected ? "sends first" : "receives first");
                    EXPECT(st[n + r].error == PROUST_OK && st[n + r].source == r,
                           "send to %d: %s destination %d", r, proust_error_name(st[n + r].error),
                           st[n + r].source);
                }
                EXPECT(rc == PROUST_OK, "waitall returned %s", proust_error_name(rc));
                for (int r = 0; r < n; r++) {
                    free(sbuf[r]);
                    free(rbuf[r]);
                }
            }
        }
    }
    TU_PHASE("final barrier");
    tu_barrier(s);
    if (tu_rank == 0)
        printf("alltoall: all %d x %d exchanges ok (%.2f s)\n", n, n, tu_now() - t0);
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(st);
    tu_finalize(s);
    return 0;
}
