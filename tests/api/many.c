/*
 * many — lots of outstanding requests and the completion calls.
 *
 *  A. 10 000 receives posted (one tag each), then 10 000 sends in a
 *     scrambled tag order (a few of rendezvous size), both directions at
 *     once; proust_waitall; every status and payload checked.
 *  B. 1 000 receives and 1 000 sends in one array completed with a
 *     proust_testsome loop: every index reported exactly once, statuses in
 *     the slots testsome says, handles set to NULL.
 *  C. The same with a proust_waitany loop (NULL entries are skipped;
 *     all-NULL gives PROUST_ERR_INVALID).
 *  D. proust_test on a request that cannot be complete gives flag 0 and
 *     keeps the handle; waitall with NULL entries.
 *
 * One case a run: `api_many <case>` (test_cases.h; --list, --help):
 * outstanding (A), testsome (B), waitany (C), test_and_null (D).
 */
#include "test_util.h"
#include "test_cases.h"

#define NA 10000
#define NB 1000
#define NC 500

static size_t msg_size(int i)
{
    return i % 1000 == 999 ? 50000 + (size_t)i : 8 + (size_t)(i % 57);
}

static uint64_t seed(int phase, int sender, int i)
{
    return ((uint64_t)phase << 56) ^ ((uint64_t)sender << 32) ^ (uint64_t)i;
}

/* buffers of a phase: recv i then send i */
struct set {
    int n;
    uint8_t **rbuf, **sbuf;
    proust_request_t **reqs; /* [0, n) receives, [n, 2n) sends */
    proust_status_t *st;
};

static struct set set_new(int n)
{
    struct set x;
    x.n = n;
    x.rbuf = calloc((size_t)n, sizeof *x.rbuf);
    x.sbuf = calloc((size_t)n, sizeof *x.sbuf);
    x.reqs = calloc(2 * (size_t)n, sizeof *x.reqs);
    x.st = calloc(2 * (size_t)n, sizeof *x.st);
    EXPECT(x.rbuf && x.sbuf && x.reqs && x.st, "out of memory");
    for (int i = 0; i < n; i++) {
        size_t sz = msg_size(i);
        x.rbuf[i] = malloc(sz);
        x.sbuf[i] = malloc(sz);
        EXPECT(x.rbuf[i] && x.sbuf[i], "out of memory");
        memset(x.rbuf[i], 0, sz);
    }
    return x;
}

static void set_free(struct set *x)
{
    for (int i = 0; i < x->n; i++) {
        free(x->rbuf[i]);
        free(x->sbuf[i]);
    }
    free(x->rbuf);
    free(x->sbuf);
    free(x->reqs);
    free(x->st);
}

static void post_recvs(proust_session_t *s, struct set *x, int peer, proust_tag_t base)
{
    for (int i = 0; i < x->n; i++)
        CHECK(proust_irecv(s, x->rbuf[i], msg_size(i), peer, base + (proust_tag_t)i,
                           PROUST_TAG_MASK_FULL, &x->reqs[i]));
}

/* sends in a scrambled order: 7919 is prime to n for the n used here */
static void post_sends(proust_session_t *s, struct set *x, int peer, proust_tag_t base,
                       int phase)
{
    for (int j = 0; j < x->n; j++) {
        int i = (int)(((long)j * 7919) % x->n);
        tu_fill(x->sbuf[i], msg_size(i), seed(phase, tu_rank, i));
        CHECK(proust_isend(s, x->sbuf[i], msg_size(i), peer, base + (proust_tag_t)i,
                           &x->reqs[x->n + i]));
    }
}

static void check_recv(const struct set *x, int i, const proust_status_t *st, int peer,
                       proust_tag_t base, int phase)
{
    size_t sz = msg_size(i);
    EXPECT_STATUS(*st, peer, base + (proust_tag_t)i, sz, sz, PROUST_OK);
    EXPECT_PATTERN(x->rbuf[i], sz, seed(phase, peer, i), "message %d (tag %d)", i, i);
}

static void check_send(int i, const proust_status_t *st, int peer, int n)
{
    EXPECT(st->error == PROUST_OK && st->source == peer,
           "send %d: status error %s destination %d, expected OK and %d", i - n,
           proust_error_name(st->error), st->source, peer);
}

static void phase_a(proust_session_t *s, int peer)
{
    TU_PHASE("A: 10000 outstanding receives, waitall");
    const proust_tag_t base = 0xA0000;
    struct set x = set_new(NA);
    post_recvs(s, &x, peer, base);
    tu_barrier(s);
    post_sends(s, &x, peer, base, 1);
    int rc = proust_waitall(2 * NA, x.reqs, x.st);
    EXPECT(rc == PROUST_OK, "waitall of %d requests returned %s", 2 * NA, proust_error_name(rc));
    for (int i = 0; i < 2 * NA; i++)
        EXPECT(x.reqs[i] == NULL, "waitall left handle %d set", i);
    for (int i = 0; i < NA; i++)
        check_recv(&x, i, &x.st[i], peer, base, 1);
    for (int i = NA; i < 2 * NA; i++)
        check_send(i, &x.st[i], peer, NA);
    set_free(&x);
}

static void phase_b(proust_session_t *s, int peer)
{
    TU_PHASE("B: testsome loop");
    const proust_tag_t base = 0xB0000;
    struct set x = set_new(NB);
    size_t *idx = calloc(2 * NB, sizeof *idx);
    proust_status_t *st = calloc(2 * NB, sizeof *st);
    char *seen = calloc(2 * NB, 1);
    EXPECT(idx && st && seen, "out of memory");
    post_recvs(s, &x, peer, base);
    tu_barrier(s);
    post_sends(s, &x, peer, base, 2);
    size_t done = 0, calls = 0;
    while (done < 2 * NB) {
        size_t out = 12345;
        int rc = proust_testsome(2 * NB, x.reqs, &out, idx, st);
        EXPECT(rc == PROUST_OK, "testsome returned %s", proust_error_name(rc));
        EXPECT(out <= 2 * NB - done, "testsome reported %zu completions, only %zu left", out,
               2 * NB - done);
        for (size_t k = 0; k < out; k++) {
            size_t i = idx[k];
            EXPECT(i < 2 * NB, "testsome index %zu out of range", i);
            EXPECT(!seen[i], "testsome reported request %zu twice", i);
            EXPECT(x.reqs[i] == NULL, "testsome left the handle of completed request %zu", i);
            seen[i] = 1;
            if (i < NB)
                check_recv(&x, (int)i, &st[k], peer, base, 2);
            else
                check_send((int)i, &st[k], peer, NB);
        }
        done += out;
        calls++;
    }
    /* nothing left: outcount 0 */
    size_t out = 99;
    CHECK(proust_testsome(2 * NB, x.reqs, &out, idx, st));
    EXPECT(out == 0, "testsome over completed (NULL) requests reported %zu", out);
    free(idx);
    free(st);
    free(seen);
    set_free(&x);
}

static void phase_c(proust_session_t *s, int peer)
{
    TU_PHASE("C: waitany loop");
    const proust_tag_t base = 0xC0000;
    struct set x = set_new(NC);
    char *seen = calloc(2 * NC, 1);
    EXPECT(seen != NULL, "out of memory");
    post_recvs(s, &x, peer, base);
    tu_barrier(s);
    post_sends(s, &x, peer, base, 3);
    for (int k = 0; k < 2 * NC; k++) {
        size_t i = 777777;
        proust_status_t st;
        int rc = proust_waitany(2 * NC, x.reqs, &i, &st);
        EXPECT(rc == PROUST_OK, "waitany returned %s", proust_error_name(rc));
        EXPECT(i < 2 * NC, "waitany index %zu out of range", i);
        EXPECT(!seen[i], "waitany returned request %zu twice", i);
        EXPECT(x.reqs[i] == NULL, "waitany left the handle of request %zu", i);
        seen[i] = 1;
        if (i < NC)
            check_recv(&x, (int)i, &st, peer, base, 3);
        else
            check_send((int)i, &st, peer, NC);
    }
    size_t i;
    CHECK_RC(proust_waitany(2 * NC, x.reqs, &i, NULL), PROUST_ERR_INVALID);
    free(seen);
    set_free(&x);
}

static void phase_d(proust_session_t *s, int peer)
{
    TU_PHASE("D: test, waitall with NULL entries");
    int v = 0;
    proust_request_t *r = NULL;
    /* nobody sends this tag until told */
    CHECK(proust_irecv(s, &v, sizeof v, peer, 0xD0001, PROUST_TAG_MASK_FULL, &r));
    for (int k = 0; k < 100; k++) {
        int flag = 7;
        CHECK(proust_test(&r, &flag, NULL));
        EXPECT(flag == 0, "test of an unmatched receive gave flag %d", flag);
        EXPECT(r != NULL, "test of an incomplete request cleared the handle");
    }
    tu_barrier(s);
    int w = 4242;
    proust_request_t *reqs[4] = {NULL, r, NULL, NULL};
    CHECK(proust_isend(s, &w, sizeof w, peer, 0xD0001, &reqs[2]));
    proust_status_t st[4];
    memset(st, 0xEE, sizeof st);
    CHECK(proust_waitall(4, reqs, st));
    EXPECT_STATUS(st[1], peer, 0xD0001, sizeof w, sizeof w, PROUST_OK);
    EXPECT(v == 4242, "received %d, expected 4242", v);
    /* test on a NULL handle: flag 1 at once */
    proust_request_t *none = NULL;
    int flag = 0;
    CHECK(proust_test(&none, &flag, NULL));
    EXPECT(flag == 1, "test of a NULL request gave flag %d", flag);
    CHECK(proust_wait(&none, NULL));
}

/* ---------------------------------------------------------------- cases */
static proust_session_t *S;
static int peer_rank;

static void test_outstanding(void)
{
    double t0 = tu_now();
    phase_a(S, peer_rank);
    if (tu_rank == 0)
        printf("many A: %d outstanding receives and sends each way (%.2f s)\n", NA,
               tu_now() - t0);
}

static void test_testsome(void)
{
    phase_b(S, peer_rank);
    if (tu_rank == 0)
        printf("many B: testsome loop over %d requests\n", 2 * NB);
}

static void test_waitany(void)
{
    phase_c(S, peer_rank);
    if (tu_rank == 0)
        printf("many C: waitany loop over %d requests\n", 2 * NC);
}

static void test_test_and_null(void)
{
    phase_d(S, peer_rank);
    if (tu_rank == 0)
        printf("many D: test and waitall with NULL entries\n");
}

static const struct tu_case cases[] = {
    {"outstanding", test_outstanding,
     "10 000 receives and sends outstanding each way, one waitall: all exact"},
    {"testsome", test_testsome, "a testsome loop reports each of 2000 requests once, in its slot"},
    {"waitany", test_waitany, "a waitany loop returns each of 1000 requests once; all-NULL refused"},
    {"test_and_null", test_test_and_null,
     "test of an incomplete request keeps it; NULL entries in test and waitall"},
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
        printf("many %s: ok\n", c->name);
    return 0;
}
