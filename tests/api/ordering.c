/*
 * ordering — the non-overtaking rule and matching by tag.
 *
 *  A. 1000 messages with one tag, sizes mixing eager and rendezvous (and
 *     some synchronous sends, and some proust_try_send, which sends at once
 *     or not at all and never a rendezvous), both directions at once: the i-th receive
 *     gets the i-th message (each receive buffer has exactly the expected
 *     size and the data pattern is per message, so any overtaking shows as
 *     a size, truncation or data mismatch). Half the receives are posted
 *     before the sends, half after.
 *  B. 64 messages with distinct tags, received in the opposite order of
 *     sending with blocking receives (matching by tag).
 *  C. 300 messages with scattered tags, received with any-tag receives
 *     (PROUST_TAG_MASK_ANY; every other one also PROUST_ANY_SOURCE): they
 *     must come in send order with the right status.tag.
 *
 *  D. 10 000 small messages (0-300 bytes, one tag) sent at once to a
 *     receiver that posts nothing for a second, then receives them one by
 *     one with exactly-sized buffers: nothing lost, order kept, whatever
 *     the rail does when its receive buffers or credits run out.
 *
 * One process: rank 0 plays both sides. Two processes: A and B go both
 * ways, C goes from rank 0 to rank 1. One case a run: `api_ordering <case>`
 * (test_cases.h; --list, --help): same_tag (A), tags_reversed (B),
 * any_tag (C), flood (D, both ways with two processes).
 */
#include "test_util.h"
#include "test_cases.h"

#define NA 1000
#define NB 64
#define NC 300
#define TAG_A 0x00A0000000000077ull
#define TAG_B 0x00B0000000000000ull
#define TAG_GO 0x0C0000000000600Dull
#define ND 10000
#define TAG_D 0x00D0000000000000ull

static size_t size_a(int i)
{
    switch (i % 8) {
    case 3:
        return 9000 + (size_t)i;        /* rendezvous on self, eager elsewhere */
    case 5:
        return 33000 + (size_t)i * 3;   /* eager, half a packet on shm and tcp */
    case 7:
        return 70000 + (size_t)i;       /* rendezvous on every rail */
    default:
        return (size_t)(i * 13) % 300;  /* eager, 0 included */
    }
}

static size_t size_c(int i)
{
    return i % 10 == 9 ? 66000 + (size_t)i : (size_t)(i * 7) % 200;
}

static proust_tag_t tag_c(int i)
{
    return tu_mix((uint64_t)i + 77) & 0x0FFFFFFFFFFFFFFFull;
}

static uint64_t seed(int phase, int sender, int i)
{
    return ((uint64_t)phase << 56) ^ ((uint64_t)sender << 40) ^ (uint64_t)i;
}

static void phase_a(proust_session_t *s, int peer)
{
    TU_PHASE("A: same tag, 1000 messages");
    uint8_t **sbuf = calloc(NA, sizeof *sbuf), **rbuf = calloc(NA, sizeof *rbuf);
    proust_request_t **sreq = calloc(NA, sizeof *sreq), **rreq = calloc(NA, sizeof *rreq);
    proust_status_t *st = calloc(NA, sizeof *st);
    EXPECT(sbuf && rbuf && sreq && rreq && st, "out of memory");
    for (int i = 0; i < NA; i++) {
        size_t n = size_a(i);
        sbuf[i] = malloc(n ? n : 1);
        rbuf[i] = malloc(n ? n : 1);
        EXPECT(sbuf[i] && rbuf[i], "out of memory");
        tu_fill(sbuf[i], n, seed(1, tu_rank, i));
        memset(rbuf[i], 0, n);
    }
    for (int i = 0; i < NA / 2; i++)
        CHECK(proust_irecv(s, rbuf[i], size_a(i), peer, TAG_A, PROUST_TAG_MASK_FULL, &rreq[i]));
    tu_barrier(s);
    for (int i = 0; i < NA; i++) {
        if (i % 7 == 2) {
            CHECK(proust_issend(s, sbuf[i], size_a(i), peer, TAG_A, &sreq[i]));
        } else if (i % 7 == 4) {
            /* sent now (nothing to wait for) or not at all: post it then */
            int rc = proust_try_send(s, sbuf[i], size_a(i), peer, TAG_A);
            EXPECT(rc == PROUST_OK || rc == PROUST_ERR_BUSY, "try_send of message %d: %s", i,
                   proust_error_name(rc));
            EXPECT(rc == PROUST_ERR_BUSY || size_a(i) < 66000,
                   "try_send of message %d (%zu bytes, rendezvous on every rail) sent it at once",
                   i, size_a(i));
            sreq[i] = NULL;
            if (rc == PROUST_ERR_BUSY)
                CHECK(proust_isend(s, sbuf[i], size_a(i), peer, TAG_A, &sreq[i]));
        } else {
            CHECK(proust_isend(s, sbuf[i], size_a(i), peer, TAG_A, &sreq[i]));
        }
    }
    tu_sleep_ms(30);
    for (int k = 0; k < 50; k++)
        CHECK(proust_progress(s));
    for (int i = NA / 2; i < NA; i++)
        CHECK(proust_irecv(s, rbuf[i], size_a(i), peer, TAG_A, PROUST_TAG_MASK_FULL, &rreq[i]));
    int rc = proust_waitall(NA, rreq, st);
    for (int i = 0; i < NA; i++) {
        size_t n = size_a(i);
        if (st[i].error != PROUST_OK || st[i].size != n) {
            /* name the message that came instead, if the size tells */
            int who = -1;
            for (int j = 0; j < NA && who < 0; j++)
                if (size_a(j) == st[i].size && j != i)
                    who = j;
            TU_FAIL("receive %d: expected message %d (%zu bytes, OK), got %zu bytes (%s)%s%s",
                    i, i, n, st[i].size, proust_error_name(st[i].error),
                    who >= 0 ? " — looks like message " : "", who >= 0 ? tu_fmt("%d", who) : "");
        }
        EXPECT_STATUS(st[i], peer, TAG_A, n, n, PROUST_OK);
        EXPECT_PATTERN(rbuf[i], n, seed(1, peer, i), "receive %d of %d (%zu bytes)", i, NA, n);
    }
    EXPECT(rc == PROUST_OK, "waitall of the receives returned %s", proust_error_name(rc));
    CHECK(proust_waitall(NA, sreq, NULL));
    for (int i = 0; i < NA; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    free(sbuf);
    free(rbuf);
    free(sreq);
    free(rreq);
    free(st);
}

static void phase_b(proust_session_t *s, int peer)
{
    TU_PHASE("B: distinct tags, received in reverse");
    static uint8_t *sbuf[NB];
    proust_request_t *sreq[NB];
    size_t maxn = 70000 + NB;
    uint8_t *rbuf = malloc(maxn);
    EXPECT(rbuf != NULL, "out of memory");
    tu_barrier(s);
    for (int i = 0; i < NB; i++) {
        size_t n = size_a(i);
        sbuf[i] = malloc(n ? n : 1);
        tu_fill(sbuf[i], n, seed(2, tu_rank, i));
        CHECK(proust_isend(s, sbuf[i], n, peer, TAG_B + (proust_tag_t)i, &sreq[i]));
    }
    for (int i = NB - 1; i >= 0; i--) {
        size_t n = size_a(i);
        proust_status_t st;
        CHECK(proust_recv(s, rbuf, maxn, peer, TAG_B + (proust_tag_t)i, PROUST_TAG_MASK_FULL,
                          &st));
        EXPECT_STATUS(st, peer, TAG_B + (proust_tag_t)i, n, n, PROUST_OK);
        EXPECT_PATTERN(rbuf, n, seed(2, peer, i), "tag %d received in reverse order", i);
    }
    CHECK(proust_waitall(NB, sreq, NULL));
    for (int i = 0; i < NB; i++)
        free(sbuf[i]);
    free(rbuf);
}

static void phase_c(proust_session_t *s)
{
    TU_PHASE("C: any-tag receives");
    int sender = 0, receiver = tu_size == 1 ? 0 : 1;
    tu_barrier(s);
    static uint8_t *sbuf[NC], *rbuf[NC];
    static proust_request_t *sreq[NC], *rreq[NC];
    static proust_status_t st[NC];
    size_t cap = 66000 + NC;
    if (tu_rank == receiver) {
        for (int i = 0; i < NC; i++) {
            rbuf[i] = malloc(cap);
            EXPECT(rbuf[i] != NULL, "out of memory");
        }
        for (int i = 0; i < NC / 2; i++)
            CHECK(proust_irecv(s, rbuf[i], cap, i % 2 ? sender : PROUST_ANY_SOURCE, 0,
                               PROUST_TAG_MASK_ANY, &rreq[i]));
        if (receiver != sender) /* the any-tag receives are not from rank 1 */
            CHECK(proust_send(s, NULL, 0, sender, TAG_GO));
    }
    if (tu_rank == sender) {
        if (receiver != sender)
            CHECK(proust_recv(s, NULL, 0, receiver, TAG_GO, PROUST_TAG_MASK_FULL, NULL));
        for (int i = 0; i < NC; i++) {
            size_t n = size_c(i);
            sbuf[i] = malloc(n ? n : 1);
            tu_fill(sbuf[i], n, seed(3, sender, i));
            CHECK(proust_isend(s, sbuf[i], n, receiver, tag_c(i), &sreq[i]));
        }
    }
    if (tu_rank == receiver) {
        tu_sleep_ms(20);
        for (int k = 0; k < 50; k++)
            CHECK(proust_progress(s));
        for (int i = NC / 2; i < NC; i++)
            CHECK(proust_irecv(s, rbuf[i], cap, i % 2 ? sender : PROUST_ANY_SOURCE, 0,
                               PROUST_TAG_MASK_ANY, &rreq[i]));
        int rc = proust_waitall(NC, rreq, st);
        for (int i = 0; i < NC; i++) {
            size_t n = size_c(i);
            if (st[i].tag != tag_c(i)) {
                int who = -1;
                for (int j = 0; j < NC && who < 0; j++)
                    if (tag_c(j) == st[i].tag)
                        who = j;
                TU_FAIL("any-tag receive %d got the message sent %d-th (tag 0x%" PRIx64
                        "), expected tag 0x%" PRIx64,
                        i, who, (uint64_t)st[i].tag, (uint64_t)tag_c(i));
            }
            EXPECT_STATUS(st[i], sender, tag_c(i), n, n, PROUST_OK);
            EXPECT_PATTERN(rbuf[i], n, seed(3, sender, i), "any-tag receive %d", i);
            free(rbuf[i]);
        }
        EXPECT(rc == PROUST_OK, "waitall returned %s", proust_error_name(rc));
    }
    if (tu_rank == sender) {
        CHECK(proust_waitall(NC, sreq, NULL));
        for (int i = 0; i < NC; i++)
            free(sbuf[i]);
    }
}

static size_t size_d(int i)
{
    return i % 100 == 0 ? 0 : 1 + ((size_t)i * 37) % 300;
}

static void phase_d(proust_session_t *s, int peer)
{
    TU_PHASE("D: 10000 small messages to a receiver that waits a second");
    size_t total = 0;
    for (int i = 0; i < ND; i++)
        total += size_d(i);
    uint8_t *out = malloc(total), *in = malloc(300);
    proust_request_t **sreq = calloc(ND, sizeof *sreq);
    EXPECT(out && in && sreq, "out of memory");
    tu_barrier(s);
    size_t at = 0;
    for (int i = 0; i < ND; i++) {
        tu_fill(out + at, size_d(i), seed(4, tu_rank, i));
        CHECK(proust_isend(s, out + at, size_d(i), peer, TAG_D, &sreq[i]));
        at += size_d(i);
    }
    tu_sleep_ms(1000); /* nothing posted here meanwhile */
    for (int i = 0; i < ND; i++) {
        size_t n = size_d(i);
        proust_status_t st;
        memset(in, 0, 300);
        int rc = proust_recv(s, in, n, peer, TAG_D, PROUST_TAG_MASK_FULL, &st);
        EXPECT(rc == PROUST_OK, "receive %d of %d: %s", i, ND, proust_error_name(rc));
        EXPECT_STATUS(st, peer, TAG_D, n, n, PROUST_OK);
        EXPECT_PATTERN(in, n, seed(4, peer, i), "message %d of %d (%zu bytes)", i, ND, n);
    }
    CHECK(proust_waitall(ND, sreq, NULL));
    free(out);
    free(in);
    free(sreq);
}

/* ---------------------------------------------------------------- cases */
static proust_session_t *S;
static int peer_rank;

static void test_same_tag(void)
{
    double t0 = tu_now();
    phase_a(S, peer_rank);
    if (tu_rank == 0)
        printf("ordering A: %d same-tag messages in order (%.2f s)\n", NA, tu_now() - t0);
}

static void test_tags_reversed(void)
{
    phase_b(S, peer_rank);
    if (tu_rank == 0)
        printf("ordering B: %d tags matched in reverse order\n", NB);
}

static void test_any_tag(void)
{
    phase_c(S);
    if (tu_rank == 0)
        printf("ordering C: %d any-tag receives in send order\n", NC);
}

static void test_flood(void)
{
    double t0 = tu_now();
    phase_d(S, peer_rank);
    if (tu_rank == 0)
        printf("ordering D: %d small messages, receiver a second late, all in order (%.2f s)\n",
               ND, tu_now() - t0);
}

static const struct tu_case cases[] = {
    {"same_tag", test_same_tag,
     "1000 same-tag messages (eager, rendezvous, ssend, try_send) are not overtaken"},
    {"tags_reversed", test_tags_reversed, "64 distinct tags received in reverse order match"},
    {"any_tag", test_any_tag, "300 scattered tags through any-tag receives come in send order"},
    {"flood", test_flood,
     "10000 small messages to a receiver that posts nothing for a second: none lost, in order"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    peer_rank = tu_size == 1 ? 0 : 1 - tu_rank;
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("ordering %s: ok\n", c->name);
    return 0;
}
