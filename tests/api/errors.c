/*
 * errors — error reporting of the API (1 or 2 processes). One case a run:
 * `api_errors <case>` (test_cases.h; --list, --help).
 *
 *  before_init      before proust_init every call returns PROUST_ERR_STATE
 *                   and leaves its output parameters alone (then the
 *                   program initialises as usual).
 *  status_texts     proust_strerror / proust_error_name give distinct
 *                   non-empty texts for every code, and something
 *                   printable for unknown codes (before init).
 *  init_bad_setting proust_init with a bad PROUST_STRATEGY /
 *                   PROUST_RDV_THRESHOLD / PROUST_PEER_CHECK_MS returns
 *                   PROUST_ERR_INVALID (no crash, no exit) and leaves the
 *                   session pointer alone; a later proust_init with a good
 *                   environment works.
 *  double_init      a second proust_init returns PROUST_ERR_STATE, the
 *                   first session still works.
 *  bad_arguments    bad ranks give PROUST_ERR_RANK, NULL handles
 *                   PROUST_ERR_INVALID, and failed calls leave their output
 *                   parameters untouched.
 *  truncation       a receive buffer too small (eager and rendezvous sizes,
 *                   posted and unexpected, and a 0-byte buffer) completes
 *                   with PROUST_ERR_TRUNCATE, status.size = size sent,
 *                   status.count = buffer size, the bytes that fit are
 *                   right, nothing is written past the buffer, the sender
 *                   completes normally and traffic goes on.
 *  init_fails       proust_init must return an error (the test's
 *                   environment makes it impossible, e.g.
 *                   PROUST_RAILS=bogus); exit 0 if it does, 1 if it
 *                   succeeds. The library exiting the process instead is a
 *                   failure too (its exit status is not 0).
 */
#include <limits.h>

#include "test_util.h"
#include "test_cases.h"

static proust_session_t *S;
static int peer_rank;

static void before_init(void)
{
    TU_PHASE("calls before init");
    char b[4] = {0};
    proust_request_t *req = (proust_request_t *)0x1;
    proust_pack_t *pack = (proust_pack_t *)0x1;
    int flag = 0;
    CHECK_RC(proust_isend(NULL, b, 1, 0, 1, &req), PROUST_ERR_STATE);
    CHECK_RC(proust_issend(NULL, b, 1, 0, 1, &req), PROUST_ERR_STATE);
    CHECK_RC(proust_irecv(NULL, b, 1, 0, 1, PROUST_TAG_MASK_FULL, &req), PROUST_ERR_STATE);
    CHECK_RC(proust_send(NULL, b, 1, 0, 1), PROUST_ERR_STATE);
    CHECK_RC(proust_ssend(NULL, b, 1, 0, 1), PROUST_ERR_STATE);
    CHECK_RC(proust_recv(NULL, b, 1, 0, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_progress(NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_iprobe(NULL, 0, 1, PROUST_TAG_MASK_FULL, &flag, NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_probe(NULL, 0, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_session_monitor(NULL, PROUST_EVENT_UNEXPECTED, NULL, NULL),
             PROUST_ERR_STATE);
    CHECK_RC(proust_pack_begin(NULL, 0, 1, &pack), PROUST_ERR_STATE);
    CHECK_RC(proust_unpack_begin(NULL, 0, 1, 0, &pack), PROUST_ERR_STATE);
    CHECK_RC(proust_finalize(NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_rank(NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_size(NULL), PROUST_ERR_STATE);
    CHECK_RC(proust_node_oversubscribed(NULL), PROUST_ERR_STATE);
    int ranks = -7, cpus = -7;
    CHECK_RC(proust_node_load(NULL, &ranks, &cpus), PROUST_ERR_STATE);
    EXPECT(ranks == -7 && cpus == -7, "a failed proust_node_load wrote its results");
    EXPECT(req == (proust_request_t *)0x1, "a failed call wrote the request handle");
    EXPECT(pack == (proust_pack_t *)0x1, "a failed call wrote the pack handle");
    CHECK_RC(proust_init(NULL), PROUST_ERR_INVALID);
}

static void bad_config(const char *var, const char *value)
{
    char phase[128];
    snprintf(phase, sizeof phase, "init with %s=%s", var, value);
    TU_PHASE(phase);
    const char *old = getenv(var);
    char *saved = old ? strdup(old) : NULL;
    setenv(var, value, 1);
    proust_session_t *s = (proust_session_t *)0x1;
    int rc = proust_init(&s);
    EXPECT(rc != PROUST_OK, "proust_init with %s=%s succeeded", var, value);
    EXPECT(rc == PROUST_ERR_INVALID, "proust_init with %s=%s returned %s, expected "
           "PROUST_ERR_INVALID", var, value, proust_error_name(rc));
    EXPECT(s == (proust_session_t *)0x1, "failed proust_init wrote the session pointer");
    if (saved) {
        setenv(var, saved, 1);
        free(saved);
    } else {
        unsetenv(var);
    }
}

static void status_texts(void)
{
    TU_PHASE("strerror / error_name");
    static const int codes[] = {
#define X(name, value, text) PROUST_##name,
        PROUST_STATUS_LIST(X)
#undef X
    };
    static const char *const names[] = {
#define X(name, value, text) "PROUST_" #name,
        PROUST_STATUS_LIST(X)
#undef X
    };
    size_t n = sizeof codes / sizeof codes[0];
    EXPECT(n >= 18, "only %zu status codes", n);
    for (size_t i = 0; i < n; i++) {
        const char *t = proust_strerror(codes[i]), *nm = proust_error_name(codes[i]);
        EXPECT(t && *t, "proust_strerror(%d) is empty", codes[i]);
        EXPECT(nm && strcmp(nm, names[i]) == 0, "proust_error_name(%d) = \"%s\", expected \"%s\"",
               codes[i], nm ? nm : "(null)", names[i]);
        for (size_t j = 0; j < i; j++) {
            EXPECT(strcmp(t, proust_strerror(codes[j])) != 0,
                   "codes %d and %d have the same text \"%s\"", codes[i], codes[j], t);
            EXPECT(strcmp(nm, proust_error_name(codes[j])) != 0,
                   "codes %d and %d have the same name", codes[i], codes[j]);
        }
    }
    static const int unknown[] = {1, 42, -18, -999, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *t = proust_strerror(unknown[i]), *nm = proust_error_name(unknown[i]);
        EXPECT(t && *t && nm && *nm, "unknown code %d has no text", unknown[i]);
    }
}

static void bad_arguments(proust_session_t *s)
{
    TU_PHASE("bad ranks and NULL arguments");
    char b[8] = {0};
    int flag = 0;
    size_t idx = 0, out = 0;
    const char *rail = "unchanged";
    proust_request_t *req = (proust_request_t *)0x1;
    int bad[] = {-5, -2, tu_size, tu_size + 100, INT_MAX, INT_MIN};
    int ranks = 0, cpus = 0;
    CHECK_RC(proust_node_load(s, NULL, &cpus), PROUST_ERR_INVALID);
    CHECK_RC(proust_node_load(s, &ranks, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_node_load(s, &ranks, &cpus), PROUST_OK);
    /* every rank of these tests runs on this host; the cores are the
     * launcher's, at least one */
    EXPECT(ranks == tu_size && cpus >= 1, "proust_node_load: %d ranks, %d cpus (job of %d)",
           ranks, cpus, tu_size);
    EXPECT(proust_node_oversubscribed(s) == (ranks > cpus),
           "proust_node_oversubscribed disagrees with proust_node_load");
    /* the launcher's allgather: bad arguments refused, then every rank's
     * bytes in rank order, twice (each call its own key) */
    uint64_t mine[3], all[3 * 64];
    EXPECT(tu_size <= 64, "at most 64 ranks, please");
    CHECK_RC(proust_oob_allgather(NULL, mine, 8, all), PROUST_ERR_STATE);
    CHECK_RC(proust_oob_allgather(s, NULL, 8, all), PROUST_ERR_INVALID);
    CHECK_RC(proust_oob_allgather(s, mine, 8, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_oob_allgather(s, mine, 0, all), PROUST_ERR_INVALID);
    CHECK_RC(proust_oob_allgather(s, mine, 1025, all), PROUST_ERR_INVALID);
    for (uint64_t round = 0; round < 2; round++) {
        for (int k = 0; k < 3; k++)
            mine[k] = ((uint64_t)tu_rank << 32) | (round << 8) | (uint64_t)k;
        size_t len = round ? 3 * sizeof mine[0] : 5; /* and an odd length */
        memset(all, 0xEE, sizeof all);
        CHECK(proust_oob_allgather(s, mine, len, all));
        for (int r = 0; r < tu_size; r++) {
            uint64_t want[3];
            for (int k = 0; k < 3; k++)
                want[k] = ((uint64_t)r << 32) | (round << 8) | (uint64_t)k;
            EXPECT(memcmp((char *)all + (size_t)r * len, want, len) == 0,
                   "proust_oob_allgather round %d: rank %d's %zu bytes wrong", (int)round, r, len);
        }
        EXPECT(((unsigned char *)all)[(size_t)tu_size * len] == 0xEE,
               "proust_oob_allgather wrote past size x len bytes");
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = bad[i];
        CHECK_RC(proust_isend(s, b, 1, r, 1, &req), PROUST_ERR_RANK);
        CHECK_RC(proust_issend(s, b, 1, r, 1, &req), PROUST_ERR_RANK);
        CHECK_RC(proust_send(s, b, 1, r, 1), PROUST_ERR_RANK);
        CHECK_RC(proust_ssend(s, b, 1, r, 1), PROUST_ERR_RANK);
        CHECK_RC(proust_try_send(s, b, 1, r, 1), PROUST_ERR_RANK);
        CHECK_RC(proust_irecv(s, b, 1, r, 1, PROUST_TAG_MASK_FULL, &req), PROUST_ERR_RANK);
        CHECK_RC(proust_recv(s, b, 1, r, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_RANK);
        CHECK_RC(proust_iprobe(s, r, 1, PROUST_TAG_MASK_FULL, &flag, NULL), PROUST_ERR_RANK);
        CHECK_RC(proust_probe(s, r, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_RANK);
        CHECK_RC(proust_peer_rail(s, r, &rail), PROUST_ERR_RANK);
    }
    /* ANY_SOURCE is a receive-only wildcard */
    CHECK_RC(proust_isend(s, b, 1, PROUST_ANY_SOURCE, 1, &req), PROUST_ERR_RANK);
    EXPECT(req == (proust_request_t *)0x1, "a failed call wrote the request handle");
    EXPECT(strcmp(rail, "unchanged") == 0, "a failed peer_rail wrote the name");

    CHECK_RC(proust_isend(s, b, 1, 0, 1, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_issend(s, b, 1, 0, 1, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_irecv(s, b, 1, 0, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_isend(s, NULL, 4, 0, 1, &req), PROUST_ERR_INVALID);
    CHECK_RC(proust_irecv(s, NULL, 4, 0, 1, PROUST_TAG_MASK_FULL, &req), PROUST_ERR_INVALID);
    CHECK_RC(proust_send(s, NULL, 4, 0, 1), PROUST_ERR_INVALID);
    CHECK_RC(proust_try_send(s, NULL, 4, 0, 1), PROUST_ERR_INVALID);
    CHECK_RC(proust_try_send(NULL, b, 1, 0, 1), PROUST_ERR_STATE);
    CHECK_RC(proust_recv(s, NULL, 4, 0, 1, PROUST_TAG_MASK_FULL, NULL), PROUST_ERR_INVALID);
    EXPECT(req == (proust_request_t *)0x1, "a failed call wrote the request handle");
    CHECK_RC(proust_wait(NULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_test(NULL, &flag, NULL), PROUST_ERR_INVALID);
    proust_request_t *none = NULL;
    CHECK_RC(proust_test(&none, NULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_waitany(1, &none, NULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_waitany(1, &none, &idx, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_waitany(0, NULL, &idx, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_waitall(3, NULL, NULL), PROUST_ERR_INVALID);
    CHECK(proust_waitall(0, NULL, NULL));
    CHECK_RC(proust_testsome(1, &none, NULL, NULL, NULL), PROUST_ERR_INVALID);
    CHECK(proust_testsome(1, &none, &out, NULL, NULL));
    EXPECT(out == 0, "testsome over a NULL request: outcount %zu", out);
    CHECK_RC(proust_cancel(NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_request_free(NULL), PROUST_ERR_INVALID);
    CHECK(proust_request_free(&none));
    CHECK_RC(proust_peer_rail(s, 0, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_iprobe(s, 0, 1, PROUST_TAG_MASK_FULL, NULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_session_monitor(s, 0x100u, NULL, NULL), PROUST_ERR_INVALID);
}

static void truncation(proust_session_t *s, int peer)
{
    static const struct {
        size_t sent, cap;
    } cases[] = {{100, 50},         {1, 0},          {20000, 10000}, {50000, 40000},
                 {70000, 65536},    {200000, 100000}, {300000, 0},    {2u << 20, (1u << 20) + 1}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        for (int unexpected = 0; unexpected < 2; unexpected++) {
            size_t n = cases[k].sent, cap = cases[k].cap;
            char phase[96];
            snprintf(phase, sizeof phase, "truncation %zu into %zu (%s)", n, cap,
                     unexpected ? "unexpected" : "posted");
            TU_PHASE(phase);
            proust_tag_t tag = 0x7700 + k * 2 + (proust_tag_t)unexpected;
            struct tu_buf sb = tu_buf_alloc(n, 3), rb = tu_buf_alloc(cap, 1);
            tu_fill(sb.p, n, tag);
            memset(rb.p, 0, cap);
            void *rp = cap ? rb.p : NULL;
            proust_request_t *r[2] = {NULL, NULL};
            if (!unexpected) {
                CHECK(proust_irecv(s, rp, cap, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
                tu_barrier(s);
                CHECK(proust_isend(s, sb.p, n, peer, tag, &r[1]));
            } else {
                CHECK(proust_isend(s, sb.p, n, peer, tag, &r[1]));
                CHECK(proust_probe(s, peer, tag, PROUST_TAG_MASK_FULL, NULL));
                CHECK(proust_irecv(s, rp, cap, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
            }
            proust_status_t st[2];
            int rc = proust_waitall(2, r, st);
            EXPECT(rc == PROUST_ERR_TRUNCATE, "waitall returned %s, expected PROUST_ERR_TRUNCATE "
                   "(receive %s, send %s)", proust_error_name(rc), proust_error_name(st[0].error),
                   proust_error_name(st[1].error));
            EXPECT_STATUS(st[0], peer, tag, n, cap, PROUST_ERR_TRUNCATE);
            EXPECT(st[1].error == PROUST_OK,
                   "the send of a truncated message completed with %s",
                   proust_error_name(st[1].error));
            EXPECT_PATTERN(rb.p, cap, tag, "the %zu bytes that fit of a %zu-byte message", cap,
                           n);
            EXPECT_GUARDS(rb, "truncated receive of %zu into %zu", n, cap);
            tu_buf_free(&sb);
            tu_buf_free(&rb);
            /* the next message is fine */
            uint64_t x = tag, y = 0;
            CHECK(proust_irecv(s, &y, sizeof y, peer, tag | 0x10000, PROUST_TAG_MASK_FULL, &r[0]));
            CHECK(proust_isend(s, &x, sizeof x, peer, tag | 0x10000, &r[1]));
            CHECK(proust_waitall(2, r, NULL));
            EXPECT(y == tag, "message after a truncation: got 0x%" PRIx64, y);
        }
    }
}

/* ---------------------------------------------------------------- cases */
/* These three run before proust_init (main initialises afterwards). */
static void test_before_init(void)
{
    before_init();
}

static void test_status_texts(void)
{
    status_texts();
}

static void test_init_bad_setting(void)
{
    bad_config("PROUST_STRATEGY", "bogus");
    bad_config("PROUST_STRATEGY", "");
    bad_config("PROUST_RDV_THRESHOLD", "12Q");
    bad_config("PROUST_PEER_CHECK_MS", "0");
    /* main's proust_init, with the environment restored, must work */
}

static void test_double_init(void)
{
    TU_PHASE("double init");
    proust_session_t *s2 = (proust_session_t *)0x1;
    CHECK_RC(proust_init(&s2), PROUST_ERR_STATE);
    EXPECT(s2 == (proust_session_t *)0x1, "second proust_init wrote the session pointer");
    {
        /* the first session still works */
        int a = 7, b = 0;
        proust_request_t *r[2];
        CHECK(proust_irecv(S, &b, sizeof b, peer_rank, 3, PROUST_TAG_MASK_FULL, &r[0]));
        CHECK(proust_isend(S, &a, sizeof a, peer_rank, 3, &r[1]));
        CHECK(proust_waitall(2, r, NULL));
        EXPECT(b == 7, "got %d", b);
    }
}

static void test_bad_arguments(void)
{
    bad_arguments(S);
}

static void test_truncation(void)
{
    truncation(S, peer_rank);
}

/* No session: proust_init is expected to fail in this environment. */
static void test_init_fails(void)
{
    TU_PHASE("proust_init expected to fail");
    proust_session_t *s = (proust_session_t *)0x1;
    int rc = proust_init(&s);
    if (rc == PROUST_OK) {
        fprintf(stderr, "FAIL: proust_init succeeded (PROUST_RAILS=%s)\n",
                getenv("PROUST_RAILS") ? getenv("PROUST_RAILS") : "(unset)");
        proust_finalize(s);
        exit(1);
    }
    EXPECT(s == (proust_session_t *)0x1, "failed proust_init wrote the session pointer");
    printf("init failed as expected: %s (%s)\n", proust_error_name(rc), proust_strerror(rc));
}

static const struct tu_case cases[] = {
    {"before_init", test_before_init, "every call before proust_init returns PROUST_ERR_STATE"},
    {"status_texts", test_status_texts, "every status code has its own name and text"},
    {"init_bad_setting", test_init_bad_setting,
     "a bad PROUST_STRATEGY/RDV_THRESHOLD/PEER_CHECK_MS fails init; then init works"},
    {"double_init", test_double_init, "a second proust_init is refused; the first session works"},
    {"bad_arguments", test_bad_arguments, "bad ranks and NULL arguments are refused, outputs kept"},
    {"truncation", test_truncation, "a receive buffer too small: PROUST_ERR_TRUNCATE, exact status"},
    {"init_fails", test_init_fails, "proust_init returns an error where it cannot work"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    setvbuf(stdout, NULL, _IOLBF, 0);
    tu_watchdog(60);
    if (c->run == test_init_fails) {
        test_init_fails();
        return 0;
    }
    int before = c->run == test_before_init || c->run == test_status_texts ||
                 c->run == test_init_bad_setting;
    if (before)
        c->run();
    S = tu_init(60);
    peer_rank = tu_size == 1 ? 0 : 1 - tu_rank;
    EXPECT(tu_size <= 2, "run with 1 or 2 processes");
    if (!before)
        c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("errors %s: ok\n", c->name);
    return 0;
}
