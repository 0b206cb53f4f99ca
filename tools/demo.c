/*
 * proust-demo — what `make run` shows: a ping-pong between ranks 0 and 1
 * (latency and bandwidth with checksums) and a multi-flow exchange, over
 * whatever rails PROUST_RAILS selects.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proust.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint64_t checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#define CHECK(call)                                                                            \
    do {                                                                                       \
        int rc_ = (call);                                                                      \
        if (rc_ != PROUST_OK) {                                                                \
            fprintf(stderr, "%s failed: %s\n", #call, proust_strerror(rc_));                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

int main(void)
{
    proust_session_t *s;
    CHECK(proust_init(&s));
    int rank = proust_rank(s), size = proust_size(s);
    if (size < 2) {
        if (rank == 0)
            printf("proust-demo needs 2 processes: proustrun -n 2 proust-demo\n");
        proust_finalize(s);
        return 1;
    }
    const char *rail;
    CHECK(proust_peer_rail(s, rank ^ 1, &rail));
    if (rank == 0)
        printf("Proust %s demo: %d processes, rail to the peer: %s, strategy: %s\n",
               PROUST_VERSION_STRING, size, rail, proust_strategy_name(s));
    if (rank > 1) {
        CHECK(proust_finalize(s));
        return 0;
    }
    int peer = rank ^ 1;
    size_t max = 4u << 20;
    uint8_t *buf = malloc(max);
    if (rank == 0)
        printf("\n%10s %12s %12s  %s\n", "bytes", "latency us", "MB/s", "checksum");
    for (size_t len = 1; len <= max; len *= 16) {
        int iters = len < 65536 ? 2000 : 50;
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(i * 7 + len);
        uint64_t want = checksum(buf, len);
        double t0 = now_us();
        for (int it = 0; it < iters; it++) {
            if (rank == 0) {
                CHECK(proust_send(s, buf, len, peer, len));
                CHECK(proust_recv(s, buf, len, peer, len, PROUST_TAG_MASK_FULL, NULL));
            } else {
                CHECK(proust_recv(s, buf, len, peer, len, PROUST_TAG_MASK_FULL, NULL));
                CHECK(proust_send(s, buf, len, peer, len));
            }
        }
        double half = (now_us() - t0) / iters / 2;
        if (rank == 0)
            printf("%10zu %12.2f %12.1f  %s\n", len, half, len / half,
                   checksum(buf, len) == want ? "ok" : "MISMATCH");
    }

    /* multi-flow: 2 flows x 32 small messages each way per round */
    enum { FLOWS = 2, N = 32, ROUNDS = 2000 };
    uint64_t msgs[FLOWS * N];
    proust_request_t *reqs[FLOWS * N];
    double t0 = now_us();
    for (int round = 0; round < ROUNDS; round++) {
        for (int turn = 0; turn < 2; turn++) {
            int sending = (turn == 0) == (rank == 0);
            for (int f = 0; f < FLOWS; f++)
                for (int i = 0; i < N; i++) {
                    int k = f * N + i;
                    msgs[k] = (uint64_t)round * 1000 + (uint64_t)k;
                    if (sending)
                        CHECK(proust_isend(s, &msgs[k], 8, peer, 100 + f, &reqs[k]));
                    else
                        CHECK(proust_irecv(s, &msgs[k], 8, peer, 100 + f, PROUST_TAG_MASK_FULL,
                                           &reqs[k]));
                }
            CHECK(proust_waitall(FLOWS * N, reqs, NULL));
            if (!sending)
                for (int k = 0; k < FLOWS * N; k++)
                    if (msgs[k] != (uint64_t)round * 1000 + (uint64_t)k) {
                        fprintf(stderr, "multiflow: message %d out of order\n", k);
                        return 1;
                    }
        }
    }
    double per = (now_us() - t0) * 1000.0 / (ROUNDS * 2.0 * FLOWS * N);
    if (rank == 0)
        printf("\nmultiflow: %d flows x %d messages of 8 B: %.1f ns per message, in order\n",
               FLOWS, N, per);
    free(buf);
    CHECK(proust_finalize(s));
    return 0;
}
