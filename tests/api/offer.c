/*
 * offer — receiver offers (a large nonblocking receive tells its sender
 * where the data goes; the sender writes it). Run with 2 processes and
 * PROUST_OFFER_BYTES small enough for the sizes below. One case a run:
 * `api_offer [--pull] <case>` (test_cases.h; --list, --help).
 *
 *  A. recv_posted_first: receive posted long before the send (the send
 *     uses the offer): sizes around the rendezvous threshold, odd sizes and
 *     offsets.
 *  B. recv_while_rts_waits: send posted first, receive posted while its
 *     RTS waits unread (the offer arrives at a sender that waits for its
 *     answer).
 *  C. eager_first_same_tag: an eager message and then a large one with the
 *     same tag: the offered receive must take the eager one, the next the
 *     large one.
 *  D. truncation: a message larger than the offered buffer.
 *  E. other_tags_between: non-matching tags in between (the offer waits
 *     for its message).
 *  F. cancel_offered: cancel an offered receive nobody sends to:
 *     cancelled; then a message with that tag goes to the next receive.
 *  G. cancel_racing_send: cancel racing a matching send: either cancelled
 *     (the message then reaches a second receive) or received whole —
 *     never both, never lost.
 *  H. both_directions: both directions at once, many rounds (Isend + Irecv
 *     on each side).
 *  I. computing_sender: the receiver never waits for a sender that
 *     computes: Isend, then 1.5 s without a library call, against Irecv +
 *     Wait; with --pull (a rail where the receiver can pull a rendezvous:
 *     shm get) the Wait takes the offer back and pulls the data in well
 *     under that.
 *  J. cancel_no_wait: cancel never waits for the peer: an offered receive
 *     cancelled while its sender computes 1.5 s (or sits in finalize)
 *     returns at once.
 *  K. no_copy_in_call: a nonblocking receive (irecv, imrecv) that finds its
 *     rendezvous already there leaves the copy to the next progress call:
 *     the buffer is untouched when the call returns (without a thread that
 *     could run it meanwhile), and Test loops alone complete it with the
 *     data.
 *  L. offers_come_back: after an exchange (both sides Irecv + Isend: each
 *     declines the other's offers and the receivers pause them), a one-way
 *     sender gets offers again: its blocking send completes while the
 *     receiver sleeps in the last rounds of 80 (the pause is 64 receives at
 *     most).
 */
#include "test_util.h"
#include "test_cases.h"

#define TAG 0x0A000000000000ull
#define MAXN (3u << 20)

static proust_session_t *S;
static int peer;

static void phase_a(void)
{
    TU_PHASE("A: receive posted first");
    static const size_t sizes[] = {1, 4095, 65536, 131071, 262147, 1 << 20, (1 << 20) + 13};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        proust_tag_t tag = TAG | k;
        if (tu_rank == 0) {
            struct tu_buf b = tu_buf_alloc(n, k % 8);
            proust_request_t *r;
            CHECK(proust_irecv(S, b.p, n, peer, tag, PROUST_TAG_MASK_FULL, &r));
            tu_barrier(S); /* the sender sends only now */
            proust_status_t st;
            CHECK(proust_wait(&r, &st));
            EXPECT_STATUS(st, peer, tag, n, n, PROUST_OK);
            EXPECT_PATTERN(b.p, n, 100 + k, "size %zu", n);
            EXPECT_GUARDS(b, "size %zu", n);
            tu_buf_free(&b);
        } else {
            uint8_t *p = malloc(n + 3);
            tu_fill(p + 3, n, 100 + k);
            tu_barrier(S);
            tu_sleep_ms(k == 3 ? 20 : 0); /* the offer is there before the send */
            CHECK(proust_send(S, p + 3, n, peer, tag));
            free(p);
        }
    }
}

static void phase_b(void)
{
    TU_PHASE("B: send first, receive posted while its RTS waits");
    size_t n = (1 << 20) + 7;
    if (tu_rank == 1) {
        uint8_t *p = malloc(n);
        tu_fill(p, n, 200);
        tu_barrier(S);
        CHECK(proust_send(S, p, n, peer, TAG | 0x100));
        free(p);
    } else {
        uint8_t *p = malloc(n);
        tu_barrier(S);
        tu_sleep_ms(30); /* the RTS is in our queue, unread */
        proust_request_t *r;
        CHECK(proust_irecv(S, p, n, peer, TAG | 0x100, PROUST_TAG_MASK_FULL, &r));
        tu_sleep_ms(30); /* not polling: only the sender can move the data */
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        EXPECT_STATUS(st, peer, TAG | 0x100, n, n, PROUST_OK);
        EXPECT_PATTERN(p, n, 200, "B");
        free(p);
    }
}

static void phase_c(void)
{
    TU_PHASE("C: an eager message first, same tag");
    size_t big = 600000, small = 100;
    proust_tag_t tag = TAG | 0x200;
    if (tu_rank == 0) {
        uint8_t *a = malloc(big), *b = malloc(big);
        proust_request_t *r[2];
        CHECK(proust_irecv(S, a, big, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
        CHECK(proust_irecv(S, b, big, peer, tag, PROUST_TAG_MASK_FULL, &r[1]));
        tu_barrier(S);
        proust_status_t st[2];
        CHECK(proust_waitall(2, r, st));
        EXPECT_STATUS(st[0], peer, tag, small, small, PROUST_OK);
        EXPECT_STATUS(st[1], peer, tag, big, big, PROUST_OK);
        EXPECT_PATTERN(a, small, 300, "first receive");
        EXPECT_PATTERN(b, big, 301, "second receive");
        free(a);
        free(b);
    } else {
        uint8_t *a = malloc(small), *b = malloc(big);
        tu_fill(a, small, 300);
        tu_fill(b, big, 301);
        tu_barrier(S);
        CHECK(proust_send(S, a, small, peer, tag));
        CHECK(proust_send(S, b, big, peer, tag));
        free(a);
        free(b);
    }
}

static void phase_d(void)
{
    TU_PHASE("D: truncation");
    size_t cap = 300000, n = 500000;
    if (tu_rank == 0) {
        struct tu_buf b = tu_buf_alloc(cap, 3);
        proust_request_t *r;
        CHECK(proust_irecv(S, b.p, cap, peer, TAG | 0x300, PROUST_TAG_MASK_FULL, &r));
        tu_barrier(S);
        proust_status_t st;
        CHECK_RC(proust_wait(&r, &st), PROUST_ERR_TRUNCATE);
        EXPECT_STATUS(st, peer, TAG | 0x300, n, cap, PROUST_ERR_TRUNCATE);
        EXPECT_PATTERN(b.p, cap, 400, "truncated");
        EXPECT_GUARDS(b, "truncated");
        tu_buf_free(&b);
    } else {
        uint8_t *p = malloc(n);
        tu_fill(p, n, 400);
        tu_barrier(S);
        CHECK(proust_ssend(S, p, n, peer, TAG | 0x300));
        free(p);
    }
}

static void phase_e(void)
{
    TU_PHASE("E: other tags in between");
    /* the offer reaches the sender during the barrier: the next sends, on
     * another tag, must leave it for the message it names */
    size_t n = 400000;
    if (tu_rank == 0) {
        uint8_t *p = malloc(n), *q = malloc(n);
        proust_request_t *r;
        CHECK(proust_irecv(S, p, n, peer, TAG | 0x401, ~(proust_tag_t)0xf0, &r)); /* mask */
        tu_barrier(S);
        proust_status_t st;
        for (int i = 0; i < 3; i++) {
            CHECK(proust_recv(S, q, n, peer, TAG | 0x402, PROUST_TAG_MASK_FULL, &st));
            EXPECT_PATTERN(q, st.count, 500 + (uint64_t)i, "other tag #%d", i);
        }
        CHECK(proust_wait(&r, &st));
        EXPECT_STATUS(st, peer, TAG | 0x4a1, n, n, PROUST_OK);
        EXPECT_PATTERN(p, n, 510, "masked receive");
        free(p);
        free(q);
    } else {
        uint8_t *p = malloc(n);
        tu_barrier(S);
        for (int i = 0; i < 3; i++) {
            size_t m = i == 1 ? 64 : n; /* first a rendezvous the offer must not take */
            tu_fill(p, m, 500 + (uint64_t)i);
            CHECK(proust_send(S, p, m, peer, TAG | 0x402));
        }
        tu_fill(p, n, 510);
        CHECK(proust_send(S, p, n, peer, TAG | 0x4a1));
        free(p);
    }
}

static void phase_f(void)
{
    TU_PHASE("F: cancel an offered receive");
    size_t n = 300000;
    uint8_t *p = malloc(n);
    if (tu_rank == 0) {
        proust_request_t *r;
        CHECK(proust_irecv(S, p, n, peer, TAG | 0x500, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_cancel(r));
        proust_status_t st;
        proust_wait(&r, &st);
        EXPECT(st.error == PROUST_ERR_CANCELED, "status %d", st.error);
        tu_barrier(S);
        CHECK(proust_recv(S, p, n, peer, TAG | 0x500, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, peer, TAG | 0x500, n, n, PROUST_OK);
        EXPECT_PATTERN(p, n, 600, "after cancel");
    } else {
        tu_barrier(S);
        tu_fill(p, n, 600);
        CHECK(proust_send(S, p, n, peer, TAG | 0x500));
    }
    free(p);
}

static void phase_g(void)
{
    TU_PHASE("G: cancel racing a matching send");
    size_t n = 200000;
    uint8_t *p = malloc(n), *q = malloc(n);
    for (int i = 0; i < 40; i++) {
        proust_tag_t tag = TAG | 0x600 | (uint64_t)i;
        if (tu_rank == 0) {
            proust_request_t *r;
            memset(p, 0, n);
            CHECK(proust_irecv(S, p, n, peer, tag, PROUST_TAG_MASK_FULL, &r));
            tu_barrier(S);
            if (i % 4)
                tu_sleep_ms(i % 3);
            int rc = proust_cancel(r);
            proust_status_t st;
            proust_wait(&r, &st);
            if (rc == PROUST_OK) {
                EXPECT(st.error == PROUST_ERR_CANCELED, "round %d: cancelled, status %d", i,
                       st.error);
                CHECK(proust_recv(S, q, n, peer, tag, PROUST_TAG_MASK_FULL, &st));
                EXPECT_PATTERN(q, n, 700 + (uint64_t)i, "round %d after cancel", i);
            } else {
                EXPECT(rc == PROUST_ERR_BUSY, "round %d: cancel %d", i, rc);
                EXPECT_STATUS(st, peer, tag, n, n, PROUST_OK);
                EXPECT_PATTERN(p, n, 700 + (uint64_t)i, "round %d received", i);
            }
        } else {
            tu_fill(p, n, 700 + (uint64_t)i);
            tu_barrier(S);
            CHECK(proust_send(S, p, n, peer, tag));
        }
        tu_barrier(S);
    }
    free(p);
    free(q);
}

static void phase_h(void)
{
    TU_PHASE("H: both directions, many rounds");
    uint8_t *sb = malloc(MAXN), *rb = malloc(MAXN);
    for (int i = 0; i < 60; i++) {
        size_t n = (size_t)(tu_mix((uint64_t)i) % MAXN);
        proust_tag_t tag = TAG | 0x700 | (uint64_t)(i % 5);
        proust_request_t *r[2];
        tu_fill(sb, n, 800 + (uint64_t)i * 2 + (uint64_t)tu_rank);
        CHECK(proust_irecv(S, rb, MAXN, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
        if (i % 3 == 0)
            tu_sleep_ms(1);
        CHECK(proust_isend(S, sb, n, peer, tag, &r[1]));
        proust_status_t st[2];
        CHECK(proust_waitall(2, r, st));
        EXPECT_STATUS(st[0], peer, tag, n, n, PROUST_OK);
        EXPECT_PATTERN(rb, n, 800 + (uint64_t)i * 2 + (uint64_t)peer, "round %d size %zu", i, n);
    }
    free(sb);
    free(rb);
}

#define BUSY_MS 1500 /* the peer computes this long without a library call */

static int can_pull;

static void phase_i(void)
{
    TU_PHASE("I: a computing sender never delays the receiver");
    size_t n = 1 << 20;
    uint8_t *p = malloc(n);
    proust_tag_t tag = TAG | 0x800;
    if (tu_rank == 0) {
        proust_request_t *r;
        memset(p, 0, n);
        CHECK(proust_irecv(S, p, n, peer, tag, PROUST_TAG_MASK_FULL, &r));
        tu_barrier(S);
        tu_sleep_ms(200); /* the RTS is here, the sender computes */
        double t0 = tu_now();
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        double dt = tu_now() - t0;
        EXPECT_STATUS(st, peer, tag, n, n, PROUST_OK);
        EXPECT_PATTERN(p, n, 900, "pulled while the sender computes");
        EXPECT(!can_pull || dt < 1.0,
               "the receive took %.3f s: it waited for a sender computing %d ms instead of "
               "taking its offer back", dt, BUSY_MS);
    } else {
        tu_fill(p, n, 900);
        tu_barrier(S);
        proust_request_t *r;
        CHECK(proust_isend(S, p, n, peer, tag, &r));
        tu_sleep_ms(BUSY_MS);
        CHECK(proust_wait(&r, NULL));
    }
    tu_barrier(S);
    free(p);
}

/* No thread of ours can answer a rendezvous behind the test's back (no
 * progress thread, no rendezvous helper), and the receiver can pull. */
static int quiet_receiver(void)
{
    proust_progress_info_t info;
    CHECK(proust_progress_info(S, &info));
    return can_pull && info.threads == 0 && !info.rdv_thread;
}

/* Receive with Test calls only; the data must be whole. */
static void test_until_done(proust_request_t *r, size_t n, proust_tag_t tag)
{
    proust_status_t st;
    int flag = 0;
    double t0 = tu_now();
    while (!flag && tu_now() - t0 < 20.0)
        CHECK(proust_test(&r, &flag, &st));
    EXPECT(flag, "a receive driven by proust_test alone never completed");
    if (flag)
        EXPECT_STATUS(st, peer, tag, n, n, PROUST_OK);
}

static void phase_k(void)
{
    TU_PHASE("K: a nonblocking receive does not copy inside the call");
    size_t n = (1u << 20) + 13;
    uint8_t *p = malloc(n);
    /* nobody else may run the queued copy between the call and our look */
    int quiet = quiet_receiver();
    for (int how = 0; how < 2; how++) {
        proust_tag_t tag = TAG | 0xB00 | (uint64_t)how;
        if (tu_rank == 1) {
            tu_fill(p, n, 1100 + (uint64_t)how);
            proust_request_t *r;
            CHECK(proust_isend(S, p, n, peer, tag, &r));
            CHECK(proust_wait(&r, NULL));
        } else {
            memset(p, 0, n);
            proust_status_t st;
            int flag = 0;
            double t0 = tu_now();
            proust_request_t *r = NULL;
            if (how == 0) { /* the RTS is seen (unexpected) before the receive */
                while (!flag && tu_now() - t0 < 20.0)
                    CHECK(proust_iprobe(S, peer, tag, PROUST_TAG_MASK_FULL, &flag, &st));
                EXPECT(flag, "the rendezvous never showed up");
                CHECK(proust_irecv(S, p, n, peer, tag, PROUST_TAG_MASK_FULL, &r));
            } else {
                proust_message_t *m = NULL;
                while (!flag && tu_now() - t0 < 20.0)
                    CHECK(proust_improbe(S, peer, tag, PROUST_TAG_MASK_FULL, &flag, &m, &st));
                EXPECT(flag, "the rendezvous never showed up");
                CHECK(proust_imrecv(S, m, p, n, &r));
            }
            if (quiet) {
                size_t touched = 0;
                for (size_t i = 0; i < n; i++)
                    touched += p[i] != 0;
                EXPECT(touched == 0, "%s copied %zu bytes before returning",
                       how ? "proust_imrecv" : "proust_irecv", touched);
            }
            test_until_done(r, n, tag);
            EXPECT_PATTERN(p, n, 1100 + (uint64_t)how, "%s then test", how ? "imrecv" : "irecv");
        }
        tu_barrier(S);
    }
    free(p);
}

static void phase_l(void)
{
    TU_PHASE("L: offers come back after an exchange");
    size_t n = 256u << 10; /* over PROUST_OFFER_BYTES in every configuration run */
    uint8_t *sb = malloc(n), *rb = malloc(n);
    const char *ob = getenv("PROUST_OFFER_BYTES");
    /* without offers, or with a thread that answers the RTS, every send is fast */
    int judged = quiet_receiver() && !(ob && !strcmp(ob, "0"));
    for (int i = 0; i < 40; i++) { /* the exchange */
        proust_tag_t tag = TAG | 0xC00;
        proust_request_t *r[2];
        tu_fill(sb, n, 1200 + (uint64_t)i * 2 + (uint64_t)tu_rank);
        CHECK(proust_irecv(S, rb, n, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
        CHECK(proust_isend(S, sb, n, peer, tag, &r[1]));
        proust_status_t st[2];
        CHECK(proust_waitall(2, r, st));
        EXPECT_STATUS(st[0], peer, tag, n, n, PROUST_OK);
        EXPECT_PATTERN(rb, n, 1200 + (uint64_t)i * 2 + (uint64_t)peer, "exchange round %d", i);
    }
    enum { ROUNDS = 80, LAST = 8, NAP_MS = 20 };
    int fast_last = 0;
    for (int i = 0; i < ROUNDS; i++) { /* one way: 1 sends, 0 receives and sleeps */
        proust_tag_t tag = TAG | 0xC01, go = TAG | 0xC02;
        char tok = 0;
        if (tu_rank == 0) {
            proust_request_t *r;
            CHECK(proust_irecv(S, rb, n, peer, tag, PROUST_TAG_MASK_FULL, &r));
            CHECK(proust_send(S, &tok, 1, peer, go)); /* after the offer */
            tu_sleep_ms(NAP_MS);
            proust_status_t st;
            CHECK(proust_wait(&r, &st));
            EXPECT_STATUS(st, peer, tag, n, n, PROUST_OK);
            EXPECT_PATTERN(rb, n, 1300 + (uint64_t)i, "one-way round %d", i);
        } else {
            tu_fill(sb, n, 1300 + (uint64_t)i);
            CHECK(proust_recv(S, &tok, 1, peer, go, PROUST_TAG_MASK_FULL, NULL));
            double t0 = tu_now();
            CHECK(proust_send(S, sb, n, peer, tag));
            if (i >= ROUNDS - LAST && tu_now() - t0 < NAP_MS / 2 * 1e-3)
                fast_last++;
        }
    }
    EXPECT(!judged || tu_rank == 0 || fast_last > LAST / 2,
           "only %d of the last %d blocking sends completed while the receiver slept: its "
           "offers did not come back after the exchange", fast_last, LAST);
    tu_barrier(S);
    free(sb);
    free(rb);
}

static void phase_j(void)
{
    TU_PHASE("J: cancel does not wait for the sender");
    size_t n = 1 << 20;
    uint8_t *p = malloc(n);
    if (tu_rank == 0) {
        proust_request_t *r;
        CHECK(proust_irecv(S, p, n, peer, TAG | 0x900, PROUST_TAG_MASK_FULL, &r));
        tu_barrier(S);
        double t0 = tu_now();
        CHECK(proust_cancel(r));
        proust_status_t st;
        proust_wait(&r, &st);
        double dt = tu_now() - t0;
        EXPECT(st.error == PROUST_ERR_CANCELED, "status %d", st.error);
        EXPECT(dt < 1.0, "cancel + wait took %.3f s: it waited for a sender computing %d ms",
               dt, BUSY_MS);
    } else {
        tu_barrier(S);
        tu_sleep_ms(BUSY_MS); /* the OFFER, then the REVOKE, sit unread */
    }
    tu_barrier(S);
    free(p);
}

static const struct tu_case cases[] = {
    {"recv_posted_first", phase_a, "A: the send writes into a receive posted long before"},
    {"recv_while_rts_waits", phase_b, "B: an offer reaches a sender waiting for its answer"},
    {"eager_first_same_tag", phase_c, "C: an eager message first takes the offered receive"},
    {"truncation", phase_d, "D: a message larger than the offered buffer truncates"},
    {"other_tags_between", phase_e, "E: messages of other tags leave the offer alone"},
    {"cancel_offered", phase_f, "F: an offered receive cancels; its tag still matches"},
    {"cancel_racing_send", phase_g, "G: cancel against a matching send: one or the other"},
    {"both_directions", phase_h, "H: Isend + Irecv on both sides, 60 rounds"},
    {"computing_sender", phase_i, "I: a computing sender never delays the receiver"},
    {"cancel_no_wait", phase_j, "J: cancel does not wait for a computing sender"},
    {"no_copy_in_call", phase_k, "K: irecv/imrecv of an arrived rendezvous copy later"},
    {"offers_come_back", phase_l, "L: offers resume for a one-way sender after an exchange"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    can_pull = tu_has_arg(argc, argv, "--pull");
    S = tu_init(120);
    EXPECT(tu_size == 2, "run with 2 processes");
    peer = 1 - tu_rank;
    c->run();
    tu_barrier(S);
    if (tu_rank == 0)
        printf("offer %s: ok\n", c->name);
    tu_finalize(S);
    return 0;
}
