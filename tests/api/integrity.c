/*
 * integrity — every message size from 0 to 4 MiB (16 MiB with --big) goes
 * both ways between two ranks (or from rank 0 to itself when run alone),
 * from and into unaligned buffers, with the receive posted before the
 * message arrives and after it (the unexpected path: the message is sent
 * first and the receiver waits until iprobe sees it before posting), and,
 * with two processes, in a ping-pong of blocking calls (both sides wait:
 * shm streams rendezvous through the ring instead of a get).
 * Every byte is checked against a seeded pattern (checksums printed on a
 * mismatch), guard bytes around the receive buffer must stay intact, the
 * send buffer must be unchanged, and the statuses must be exact.
 *
 * Options: --big (add 16 MiB), --max=BYTES (skip larger sizes).
 * Run under the rails/strategies/thresholds of tests/api.cmake.
 */
#include "test_util.h"

static const size_t sizes[] = {
    0,      1,      2,      3,      7,       8,       63,      64,
    65,     1000,   4095,   4096,   4097,    32767,   32768,   65535,
    65536,  65537,  65735,   65736,   65737,   65792,   65793,   (1u << 20) - 1,
    (1u << 20) + 3, 4u << 20, 16u << 20, /* (shm: eager up to 65735, packets of 65792) */
};
#define NSIZES (sizeof sizes / sizeof sizes[0])
static const size_t offsets[] = {0, 1, 3, 7};

/* blocking: a ping-pong of proust_send / proust_recv (two processes), where
 * both sides wait: shm streams rendezvous through the ring then */
enum { MODE_POSTED = 0, MODE_UNEXPECTED = 1, MODE_BLOCKING = 2, NMODES };
static const char *const mode_name[] = {"posted", "unexpected", "blocking"};

static uint64_t seed_of(int sender, size_t k, int mode)
{
    return 0x1234567800000000ull ^ ((uint64_t)sender << 40) ^ ((uint64_t)k << 8) ^
           (uint64_t)mode;
}

int main(int argc, char **argv)
{
    proust_session_t *s = tu_init(60);
    int big = tu_has_arg(argc, argv, "--big");
    size_t max = (size_t)strtoull(tu_arg(argc, argv, "--max", "0"), NULL, 0);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    int peer = tu_size == 1 ? 0 : 1 - tu_rank;
    const char *rail = NULL;
    CHECK(proust_peer_rail(s, peer, &rail));
    if (tu_rank == 0)
        printf("integrity: %d process(es), rail to peer %d: %s, strategy %s\n", tu_size, peer,
               rail, proust_strategy_name(s));

    double t0 = tu_now();
    for (size_t k = 0; k < NSIZES; k++) {
        size_t len = sizes[k];
        if (len == (16u << 20) && !big)
            continue;
        if (max && len > max)
            continue;
        for (int mode = 0; mode < NMODES; mode++) {
            if (mode == MODE_BLOCKING && tu_size == 1)
                continue; /* a blocking rendezvous to oneself cannot complete */
            char phase[96];
            snprintf(phase, sizeof phase, "size %zu %s", len, mode_name[mode]);
            TU_PHASE(phase);
            size_t soff = offsets[(k + (size_t)mode) % 4];
            size_t roff = offsets[(k + (size_t)mode + 1) % 4];
            /* posted receives get a larger buffer than the message: the
             * bytes past the message must stay untouched */
            size_t extra = mode != MODE_UNEXPECTED ? (k % 3) * 17 : 0;
            proust_tag_t tag = ((proust_tag_t)k << 8) | (proust_tag_t)mode;
            uint64_t sseed = seed_of(tu_rank, k, mode), rseed = seed_of(peer, k, mode);

            struct tu_buf sb = tu_buf_alloc(len, soff);
            struct tu_buf rb = tu_buf_alloc(len + extra, roff);
            tu_fill(sb.p, len, sseed);
            uint64_t sum_before = tu_checksum(sb.p, len);
            memset(rb.p, 0x5A, len + extra);
            /* size 0 also tries NULL buffers, which the API allows */
            void *sp = (len == 0 && mode == MODE_POSTED) ? NULL : sb.p;
            void *rp = (len == 0 && mode == MODE_POSTED) ? NULL : rb.p;
            size_t rcap = rp ? len + extra : 0;

            proust_request_t *reqs[2] = {NULL, NULL};
            proust_status_t st[2];
            if (mode == MODE_POSTED) {
                CHECK(proust_irecv(s, rp, rcap, peer, tag, PROUST_TAG_MASK_FULL, &reqs[0]));
                tu_barrier(s); /* both receives are posted before anything is sent */
                CHECK(proust_isend(s, sp, len, peer, tag, &reqs[1]));
            } else if (mode == MODE_BLOCKING) {
                if (tu_rank == 0) {
                    CHECK(proust_send(s, sp, len, peer, tag));
                    CHECK(proust_recv(s, rp, rcap, peer, tag, PROUST_TAG_MASK_FULL, &st[0]));
                } else {
                    CHECK(proust_recv(s, rp, rcap, peer, tag, PROUST_TAG_MASK_FULL, &st[0]));
                    CHECK(proust_send(s, sp, len, peer, tag));
                }
                st[1] = (proust_status_t){.source = peer, .tag = tag, .error = PROUST_OK};
            } else {
                CHECK(proust_isend(s, sp, len, peer, tag, &reqs[1]));
                tu_sleep_ms(50);
                /* wait until the message is known here, so the receive
                 * really finds it in the unexpected queue */
                int flag = 0;
                proust_status_t pst;
                double deadline = tu_now() + 20.0;
                while (!flag) {
                    CHECK(proust_iprobe(s, peer, tag, PROUST_TAG_MASK_FULL, &flag, &pst));
                    EXPECT(tu_now() < deadline, "iprobe never saw the %zu-byte message", len);
                }
                EXPECT(pst.source == peer && pst.tag == tag && pst.size == len,
                       "iprobe: expected source %d tag 0x%" PRIx64 " size %zu, got source %d "
                       "tag 0x%" PRIx64 " size %zu",
                       peer, (uint64_t)tag, len, pst.source, (uint64_t)pst.tag, pst.size);
                CHECK(proust_irecv(s, rp, rcap, peer, tag, PROUST_TAG_MASK_FULL, &reqs[0]));
            }
            int rc = mode == MODE_BLOCKING ? PROUST_OK : proust_waitall(2, reqs, st);
            EXPECT(rc == PROUST_OK, "waitall returned %s (recv %s, send %s)",
                   proust_error_name(rc), proust_error_name(st[0].error),
                   proust_error_name(st[1].error));
            EXPECT(reqs[0] == NULL && reqs[1] == NULL, "waitall left a request handle set");
            EXPECT_STATUS(st[0], peer, tag, len, len, PROUST_OK);
            EXPECT(st[1].source == peer && st[1].tag == tag && st[1].error == PROUST_OK,
                   "send status: expected destination %d tag 0x%" PRIx64
                   " OK, got %d 0x%" PRIx64 " %s",
                   peer, (uint64_t)tag, st[1].source, (uint64_t)st[1].tag,
                   proust_error_name(st[1].error));
            EXPECT_PATTERN(rb.p, len, rseed, "size %zu %s, recv offset %zu, send offset %zu",
                           len, mode_name[mode], roff, soff);
            for (size_t i = 0; i < extra; i++)
                EXPECT(rb.p[len + i] == 0x5A,
                       "byte %zu past the %zu-byte message in a %zu-byte buffer changed to 0x%02x",
                       i, len, len + extra, rb.p[len + i]);
            EXPECT_GUARDS(rb, "receive of %zu bytes %s", len, mode_name[mode]);
            EXPECT_GUARDS(sb, "send of %zu bytes %s", len, mode_name[mode]);
            uint64_t sum_after = tu_checksum(sb.p, len);
            EXPECT(sum_after == sum_before,
                   "send buffer of %zu bytes modified: checksum %016" PRIx64 " -> %016" PRIx64,
                   len, sum_before, sum_after);
            tu_buf_free(&sb);
            tu_buf_free(&rb);
        }
    }
    TU_PHASE("final barrier");
    tu_barrier(s);
    if (tu_rank == 0)
        printf("integrity: all sizes ok in every mode (%.2f s)\n", tu_now() - t0);
    tu_finalize(s);
    return 0;
}
