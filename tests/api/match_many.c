/*
 * match_many — thousands of receives posted for one peer, with tags and
 * masks of every kind: each message goes to the earliest posted receive
 * that accepts it (and a receive posted late takes the earliest message
 * that arrived), however long the queues. A gate's posted receives and
 * its unexpected messages are indexed by tag once a scan runs long
 * (core/posted_queue.c, core/unexp_queue.c); this is the test that the
 * indexes keep the order of a plain scan.
 *
 * Receives (N of them, in posting order) draw a mask: the index's likely
 * key (every bit but a "source" byte, as MPI's context + tag), the full
 * mask, an any-tag-in-context mask, a low-byte-only mask, or none at all;
 * some are PROUST_ANY_SOURCE. Tags come from a small space, so many
 * receives accept the same messages. Both sides build the same lists from
 * one seed; the sender draws each message's tag from a receive not taken
 * yet (so one always accepts it), and both simulate the matching rule
 * with a plain scan to know which message each receive must get. Every
 * message carries its own size (0 B to rendezvous sizes) and data, and
 * every receive buffer has exactly the expected message's size.
 *
 *  A. posted: the receiver posts every receive, plus decoys (any-tag,
 *     any-source, posted between them) that it cancels, then lets the
 *     sender go: every message finds its receives posted.
 *  B. unexpected: the sender sends everything first; then the receiver
 *     posts the receives in order (every other one with proust_irecv_inline:
 *     a message wholly here completes in the call, and most must). A receive that the simulation finds no
 *     message for is not posted; any-tag receives then drain the messages
 *     left, which must come in sending order.
 *
 * One process: rank 0 plays both sides. Two: rank 0 sends, rank 1 receives
 * (B runs again the other way, so statuses name a source other than 0).
 *
 * One case a run: `api_match_many <case>` (test_cases.h; --list, --help):
 * posted (A), unexpected (B).
 */
#include <stdbool.h>

#include "test_util.h"
#include "test_cases.h"

#define N 3000
#define TAG_GO 0x0C0000000000600Dull
#define SRC_BYTE 0x0000000000FF0000ull       /* bits the "MPI" mask ignores */
#define SPACE 0x0D00000000000000ull          /* the test's tags' prefix */
#define M_KEY (~SRC_BYTE)                    /* most receives: context + tag */
#define M_CTX (~(SRC_BYTE | 0xFFull))        /* any tag in the context */
#define M_LOW 0xFFull                        /* the tag byte only */
#define RAND_BITS 0x0000000300FF00FFull      /* what tags vary: context, source, tag bytes */

struct recv_spec {
    proust_tag_t tag, mask;
    int any_source;
};

static struct recv_spec spec[N];
static proust_tag_t msg_tag[N];
static int expect_msg[N]; /* receive i gets message expect_msg[i] (-1: none) */

static uint64_t rng;
static uint64_t next_rand(void)
{
    rng = tu_mix(rng + 0x9E3779B97F4A7C15ull);
    return rng;
}

static size_t msg_size(int m)
{
    if (m % 97 == 13)
        return 70000 + (size_t)m; /* rendezvous on every rail */
    if (m % 11 == 3)
        return 9000 + (size_t)m;  /* rendezvous on self */
    return (size_t)(m * 7) % 41;  /* small, 0 included */
}

static uint64_t msg_seed(char phase, int m)
{
    return ((uint64_t)phase << 48) ^ (uint64_t)m ^ 0x4D41544348ull;
}

static bool accepts(const struct recv_spec *r, proust_tag_t tag)
{
    return ((tag ^ r->tag) & r->mask) == 0;
}

/* The receives and the messages' tags, the same on both sides. */
static void build(uint64_t seed)
{
    rng = seed;
    for (int i = 0; i < N; i++) {
        proust_tag_t tag = SPACE | (next_rand() & RAND_BITS);
        unsigned k = (unsigned)(next_rand() % 100);
        proust_tag_t mask = k < 55 ? M_KEY : k < 75 ? PROUST_TAG_MASK_FULL
                            : k < 85 ? M_CTX : k < 95 ? M_LOW : PROUST_TAG_MASK_ANY;
        spec[i] = (struct recv_spec){tag, mask, next_rand() % 20 == 0};
    }
    /* untaken receives, for drawing a message's tag from one of them */
    static int untaken[N], pos[N];
    static bool taken[N];
    for (int i = 0; i < N; i++) {
        untaken[i] = pos[i] = i;
        taken[i] = false;
    }
    int left = N;
    for (int m = 0; m < N; m++) {
        const struct recv_spec *r = &spec[untaken[next_rand() % (uint64_t)left]];
        proust_tag_t t = (r->tag & r->mask) | (next_rand() & RAND_BITS & ~r->mask);
        msg_tag[m] = t | (SPACE & ~r->mask);
        /* the matching rule, by a plain scan: earliest receive that accepts */
        int got = -1;
        for (int i = 0; i < N && got < 0; i++)
            if (!taken[i] && accepts(&spec[i], msg_tag[m]))
                got = i;
        if (got < 0)
            TU_FAIL("test generator: message %d accepted by no receive", m);
        taken[got] = true;
        expect_msg[got] = m;
        int p = pos[got], last = untaken[--left];
        untaken[p] = last;
        pos[last] = p;
    }
}

static void check_receive(char phase, const char *what, int i, int m,
                          const proust_status_t *st, const uint8_t *buf, int sender)
{
    size_t n = msg_size(m);
    if (st->tag != msg_tag[m] || st->size != n) {
        int who = -1;
        for (int j = 0; j < N && who < 0; j++)
            if (msg_tag[j] == st->tag && msg_size(j) == st->size)
                who = j;
        TU_FAIL("%s receive %d (mask 0x%016" PRIx64 "%s): expected message %d (tag 0x%016" PRIx64
                ", %zu B), got tag 0x%016" PRIx64 ", %zu B (%s)%s%s",
                what, i, (uint64_t)spec[i].mask, spec[i].any_source ? ", any source" : "", m,
                (uint64_t)msg_tag[m], n, (uint64_t)st->tag, st->size,
                proust_error_name(st->error), who >= 0 ? ", looks like message " : "",
                who >= 0 ? tu_fmt("%d", who) : "");
    }
    EXPECT_STATUS(*st, sender, msg_tag[m], n, n, PROUST_OK);
    EXPECT_PATTERN(buf, n, msg_seed(phase, m), "%s receive %d (message %d)", what, i, m);
}

static void send_all(proust_session_t *s, int receiver, char phase, uint8_t **sbuf,
                     proust_request_t **sreq)
{
    for (int m = 0; m < N; m++) {
        size_t n = msg_size(m);
        sbuf[m] = malloc(n ? n : 1);
        EXPECT(sbuf[m] != NULL, "out of memory");
        tu_fill(sbuf[m], n, msg_seed(phase, m));
        CHECK(proust_isend(s, sbuf[m], n, receiver, msg_tag[m], &sreq[m]));
    }
}

static void sends_done(uint8_t **sbuf, proust_request_t **sreq)
{
    CHECK(proust_waitall(N, sreq, NULL));
    for (int m = 0; m < N; m++)
        free(sbuf[m]);
}

static void phase_posted(proust_session_t *s, int sender, int receiver)
{
    TU_PHASE("A: posted receives");
    build(0xA11CE);
    static uint8_t *rbuf[N], *sbuf[N];
    static proust_request_t *rreq[N], *sreq[N], *decoy[N / 5 + 1];
    static proust_status_t st[N];
    if (tu_rank == receiver) {
        int nd = 0;
        uint8_t scratch[8];
        for (int i = 0; i < N; i++) {
            if (i % 10 == 5) /* a decoy that would take anything: cancelled below */
                CHECK(proust_irecv(s, scratch, sizeof scratch, PROUST_ANY_SOURCE, 0,
                                   PROUST_TAG_MASK_ANY, &decoy[nd++]));
            if (i % 10 == 7)
                CHECK(proust_irecv(s, scratch, sizeof scratch, sender, SPACE,
                                   PROUST_TAG_MASK_ANY, &decoy[nd++]));
            size_t n = msg_size(expect_msg[i]);
            rbuf[i] = malloc(n ? n : 1);
            EXPECT(rbuf[i] != NULL, "out of memory");
            CHECK(proust_irecv(s, rbuf[i], n, spec[i].any_source ? PROUST_ANY_SOURCE : sender,
                               spec[i].tag, spec[i].mask, &rreq[i]));
        }
        for (int d = 0; d < nd; d++) {
            CHECK(proust_cancel(decoy[d]));
            proust_status_t ds;
            CHECK_RC(proust_wait(&decoy[d], &ds), PROUST_ERR_CANCELED);
        }
        if (receiver != sender)
            CHECK(proust_send(s, NULL, 0, sender, TAG_GO));
    }
    if (tu_rank == sender) {
        if (receiver != sender)
            CHECK(proust_recv(s, NULL, 0, receiver, TAG_GO, PROUST_TAG_MASK_FULL, NULL));
        send_all(s, receiver, 'A', sbuf, sreq);
    }
    if (tu_rank == receiver) {
        int rc = proust_waitall(N, rreq, st);
        for (int i = 0; i < N; i++) {
            check_receive('A', "posted", i, expect_msg[i], &st[i], rbuf[i], sender);
            free(rbuf[i]);
        }
        EXPECT(rc == PROUST_OK, "waitall of the receives returned %s", proust_error_name(rc));
    }
    if (tu_rank == sender)
        sends_done(sbuf, sreq);
}

static void phase_unexpected(proust_session_t *s, int sender, int receiver)
{
    TU_PHASE("B: unexpected messages");
    build(0xB0B);
    /* receive i, posted in order, takes the earliest message left that it
     * accepts; none: it is not posted */
    static bool used[N];
    static int got[N];
    for (int m = 0; m < N; m++)
        used[m] = false;
    for (int i = 0; i < N; i++) {
        got[i] = -1;
        for (int m = 0; m < N && got[i] < 0; m++)
            if (!used[m] && accepts(&spec[i], msg_tag[m]))
                got[i] = m;
        if (got[i] >= 0)
            used[got[i]] = true;
    }
    static uint8_t *rbuf[N], *sbuf[N];
    static proust_request_t *rreq[N], *sreq[N];
    static proust_status_t st[N];
    if (tu_rank == sender) {
        send_all(s, receiver, 'B', sbuf, sreq);
        CHECK(proust_send(s, NULL, 0, receiver, TAG_GO));
    }
    if (tu_rank == receiver) {
        /* sent after every message: they all arrived (to ourselves too; a
         * fixed number of progress calls was not enough when a progress
         * thread held the poll flag on a loaded machine) */
        CHECK(proust_recv(s, NULL, 0, sender, TAG_GO, PROUST_TAG_MASK_FULL, NULL));
        int n = 0, matched = 0, inline_done = 0;
        static int which[N]; /* message of each posted receive, in order */
        static bool now[N];  /* completed inside proust_irecv_inline */
        static proust_status_t now_st[N];
        for (int i = 0; i < N; i++) {
            if (got[i] < 0)
                continue;
            size_t len = msg_size(got[i]);
            rbuf[n] = malloc(len ? len : 1);
            EXPECT(rbuf[n] != NULL, "out of memory");
            which[n] = got[i];
            spec[n] = spec[i]; /* receive n of the waitall is receive i (n <= i) */
            int src = spec[n].any_source ? PROUST_ANY_SOURCE : sender;
            if (n % 2) {
                CHECK(proust_irecv(s, rbuf[n], len, src, spec[n].tag, spec[n].mask, &rreq[n]));
            } else {
                /* a message wholly here completes in the call */
                CHECK(proust_irecv_inline(s, rbuf[n], len, src, spec[n].tag, spec[n].mask,
                                          &rreq[n], &now_st[n]));
                now[n] = rreq[n] == NULL;
                inline_done += now[n];
            }
            n++;
        }
        matched = n;
        /* the rest, with any-tag receives: in sending order */
        for (int m = 0; m < N; m++) {
            if (used[m])
                continue;
            size_t len = msg_size(m);
            rbuf[n] = malloc(len ? len : 1);
            EXPECT(rbuf[n] != NULL, "out of memory");
            which[n] = m;
            spec[n] = (struct recv_spec){0, PROUST_TAG_MASK_ANY, 0};
            CHECK(proust_irecv(s, rbuf[n], len, sender, 0, PROUST_TAG_MASK_ANY, &rreq[n]));
            n++;
        }
        EXPECT(n == N, "%d receives for %d messages", n, N);
        int rc = proust_waitall(N, rreq, st);
        for (int k = 0; k < N; k++) {
            if (now[k])
                st[k] = now_st[k];
            check_receive('B', k < matched ? "unexpected" : "unexpected (drained)", k, which[k],
                          &st[k], rbuf[k], sender);
            free(rbuf[k]);
        }
        EXPECT(rc == PROUST_OK, "waitall of the receives returned %s", proust_error_name(rc));
        /* every other small message was here: most of those complete inline */
        EXPECT(inline_done > matched / 4, "only %d of %d receives completed inline",
               inline_done, matched / 2);
        printf("match_many B: %d receives matched unexpected messages (%d inline), %d "
               "drained\n", matched, inline_done, N - matched);
    }
    if (tu_rank == sender)
        sends_done(sbuf, sreq);
}

/* ---------------------------------------------------------------- cases */
static proust_session_t *S;
static int snd_rank, rcv_rank;

static void test_posted(void)
{
    double t0 = tu_now();
    phase_posted(S, snd_rank, rcv_rank);
    tu_barrier(S);
    if (tu_rank == 0)
        printf("match_many A: %d posted receives, each took the right message (%.2f s)\n", N,
               tu_now() - t0);
}

static void test_unexpected(void)
{
    double t0 = tu_now();
    phase_unexpected(S, snd_rank, rcv_rank);
    tu_barrier(S);
    if (tu_size == 2) { /* the other way: a source that is not 0 in every status */
        phase_unexpected(S, rcv_rank, snd_rank);
        tu_barrier(S);
    }
    if (tu_rank == 0)
        printf("match_many B: done (%.2f s)\n", tu_now() - t0);
}

static const struct tu_case cases[] = {
    {"posted", test_posted, "3000 posted receives, mixed masks: each gets the earliest match"},
    {"unexpected", test_unexpected,
     "3000 unexpected messages: each receive takes the earliest it accepts"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(120);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    snd_rank = 0;
    rcv_rank = tu_size == 1 ? 0 : 1;
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("match_many %s: ok\n", c->name);
    return 0;
}
