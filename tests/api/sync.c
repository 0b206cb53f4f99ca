/*
 * sync — synchronous sends, probe, cancel and the event interfaces
 * (2 processes). One case a run: `api_sync <case>` (test_cases.h; --list,
 * --help); the cases below name the parts they run.
 *
 *  ssend:   rank 1 posts its receive 200 ms late: proust_ssend (eager and
 *           rendezvous sizes) must take >= 150 ms, a plain send of a small
 *           message must not; (issend) proust_test on an issend stays 0
 *           meanwhile.
 *  probe:   probe/iprobe report source, tag and size (eager, rendezvous,
 *           0 bytes) before the receive, do not consume the message, honour
 *           ANY_SOURCE and masks, and see nothing once it is received.
 *  cancel:  a posted unmatched receive (named source and ANY_SOURCE) is
 *           canceled: wait returns PROUST_ERR_CANCELED; a later message with
 *           that tag goes to the next receive; (cancel_matched)
 *           canceling a matched receive gives PROUST_ERR_BUSY, and a
 *           matched send is not cancelled: both complete normally (cancel.c
 *           tests unmatched sends).
 *  request_monitor_{before,after,posts,free}: the callback runs exactly
 *           once, with the request's status, installed before completion,
 *           after completion (runs at once in the calling thread), before
 *           request_free; a callback may post new requests; a second
 *           callback is refused.
 *  session_monitor: PROUST_EVENT_UNEXPECTED reports the envelope (source,
 *           tag, size) of unexpected messages only, and nothing once
 *           removed.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"
#include "test_cases.h"

static proust_session_t *S;

/* ---------------------------------------------------------------- ssend */
static void ssend_case(const char *what, size_t len, int sync, int expect_slow, proust_tag_t tag)
{
    TU_PHASE(what);
    uint8_t *buf = malloc(len ? len : 1);
    tu_fill(buf, len, tag);
    tu_barrier(S);
    if (tu_rank == 0) {
        double t0 = tu_now();
        if (sync)
            CHECK(proust_ssend(S, buf, len, 1, tag));
        else
            CHECK(proust_send(S, buf, len, 1, tag));
        double dt = tu_now() - t0;
        printf("%s: %.3f s\n", what, dt);
        if (expect_slow)
            EXPECT(dt >= 0.15, "%s of %zu bytes completed after %.3f s, before the receive "
                   "was posted (posted 0.2 s late)", sync ? "ssend" : "send", len, dt);
        else
            EXPECT(dt < 0.15, "send of %zu bytes took %.3f s: it waited for the receive", len,
                   dt);
    } else {
        tu_sleep_ms(200);
        proust_status_t st;
        CHECK(proust_recv(S, buf, len, 0, tag, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, tag, len, len, PROUST_OK);
        EXPECT_PATTERN(buf, len, tag, "%s", what);
    }
    free(buf);
}

static void test_ssend(void)
{
    ssend_case("ssend 100 B", 100, 1, 1, 0x5501);
    ssend_case("send 100 B", 100, 0, 0, 0x5502);
    ssend_case("ssend 0 B", 0, 1, 1, 0x5503);
    ssend_case("ssend 300000 B", 300000, 1, 1, 0x5504);
}

static void test_issend(void)
{
    TU_PHASE("issend + test");
    /* rank 1 leaves the barrier after rank 0 entered it and posts its
     * receive 0.2 s later: a completion seen before entered + 0.2 s came
     * before the receive, however late either rank was scheduled */
    double entered = tu_now();
    tu_barrier(S);
    int v = 17;
    if (tu_rank == 0) {
        proust_request_t *r;
        double t0 = tu_now();
        CHECK(proust_issend(S, &v, sizeof v, 1, 0x5505, &r));
        while (r && tu_now() - t0 < 0.1) {
            int flag = 0;
            CHECK(proust_test(&r, &flag, NULL));
            double seen = tu_now() - entered;
            EXPECT(!flag || seen >= 0.2,
                   "issend completed %.3f s after the barrier began, before the receive was "
                   "posted", seen);
        }
        CHECK(proust_wait(&r, NULL));
    } else {
        tu_sleep_ms(200);
        int w = 0;
        CHECK(proust_recv(S, &w, sizeof w, 0, 0x5505, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(w == 17, "got %d", w);
    }
}

/* ---------------------------------------------------------------- probe */
static void test_probe(void)
{
    TU_PHASE("probe");
    const size_t n1 = 12345, n2 = 300000;
    tu_barrier(S);
    if (tu_rank == 0) {
        uint8_t *a = malloc(n1), *b = malloc(n2);
        tu_fill(a, n1, 77);
        tu_fill(b, n2, 78);
        proust_request_t *r[3];
        CHECK(proust_isend(S, a, n1, 1, 77, &r[0]));
        CHECK(proust_isend(S, b, n2, 1, 78, &r[1]));
        CHECK(proust_isend(S, NULL, 0, 1, 79, &r[2]));
        CHECK(proust_waitall(3, r, NULL));
        free(a);
        free(b);
    } else {
        proust_status_t st;
        memset(&st, 0xEE, sizeof st);
        CHECK(proust_probe(S, 0, 77, PROUST_TAG_MASK_FULL, &st));
        EXPECT(st.source == 0 && st.tag == 77 && st.size == n1,
               "probe(0, 77): source %d tag %" PRIu64 " size %zu", st.source, (uint64_t)st.tag,
               st.size);
        memset(&st, 0xEE, sizeof st);
        CHECK(proust_probe(S, 0, 77, PROUST_TAG_MASK_FULL, &st));
        EXPECT(st.source == 0 && st.tag == 77 && st.size == n1, "second probe differs");
        int flag = 0;
        double deadline = tu_now() + 10;
        while (!flag) {
            CHECK(proust_iprobe(S, PROUST_ANY_SOURCE, 78, PROUST_TAG_MASK_FULL, &flag, &st));
            EXPECT(tu_now() < deadline, "iprobe never saw the rendezvous message");
        }
        EXPECT(st.source == 0 && st.tag == 78 && st.size == n2,
               "iprobe(ANY, 78): source %d tag %" PRIu64 " size %zu", st.source,
               (uint64_t)st.tag, st.size);
        CHECK(proust_probe(S, PROUST_ANY_SOURCE, 79, PROUST_TAG_MASK_FULL, &st));
        EXPECT(st.source == 0 && st.tag == 79 && st.size == 0, "probe(79): size %zu", st.size);
        /* any tag: the earliest message */
        CHECK(proust_probe(S, PROUST_ANY_SOURCE, 0, PROUST_TAG_MASK_ANY, &st));
        EXPECT(st.tag == 77, "probe(any tag) gave tag %" PRIu64 ", expected 77 (sent first)",
               (uint64_t)st.tag);
        /* mask: tags 78 = 0b1001110 and 79 = 0b1001111 share all but bit 0 */
        CHECK(proust_probe(S, 0, 79, ~(proust_tag_t)1, &st));
        EXPECT(st.tag == 78, "probe(79, mask ~1) gave tag %" PRIu64 ", expected 78",
               (uint64_t)st.tag);
        flag = 1;
        CHECK(proust_iprobe(S, 0, 80, PROUST_TAG_MASK_FULL, &flag, &st));
        EXPECT(flag == 0, "iprobe found a message with tag 80 that was never sent");
        CHECK_RC(proust_iprobe(S, 5, 77, PROUST_TAG_MASK_FULL, &flag, &st), PROUST_ERR_RANK);
        CHECK_RC(proust_iprobe(S, 0, 77, PROUST_TAG_MASK_FULL, NULL, &st), PROUST_ERR_INVALID);

        uint8_t *buf = malloc(n2);
        CHECK(proust_recv(S, buf, n2, 0, 78, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 78, n2, n2, PROUST_OK);
        EXPECT_PATTERN(buf, n2, 78, "probed rendezvous message");
        CHECK(proust_recv(S, NULL, 0, 0, 79, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 79, 0, 0, PROUST_OK);
        CHECK(proust_recv(S, buf, n2, 0, 77, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, 77, n1, n1, PROUST_OK);
        EXPECT_PATTERN(buf, n1, 77, "probed eager message");
        for (proust_tag_t t = 77; t <= 79; t++) {
            CHECK(proust_iprobe(S, PROUST_ANY_SOURCE, t, PROUST_TAG_MASK_FULL, &flag, &st));
            EXPECT(flag == 0, "iprobe still sees tag %" PRIu64 " after it was received",
                   (uint64_t)t);
        }
        free(buf);
    }
}

/* ---------------------------------------------------------------- callbacks */
struct cb_state {
    _Atomic int calls;
    pthread_t thread;
    proust_status_t st;
    proust_request_t *req;
};

static void on_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    struct cb_state *c = arg;
    c->st = *st;
    c->req = req;
    c->thread = pthread_self();
    atomic_fetch_add(&c->calls, 1);
}

static int done_flag_set(struct cb_state *c, double timeout)
{
    double deadline = tu_now() + timeout;
    while (atomic_load(&c->calls) == 0 && tu_now() < deadline)
        CHECK(proust_progress(S));
    return atomic_load(&c->calls);
}

/* ---------------------------------------------------------------- cancel */
static void test_cancel(void)
{
    TU_PHASE("cancel");
    tu_barrier(S);
    if (tu_rank == 1) {
        int v = -1;
        proust_request_t *r;
        proust_status_t st;
        CHECK(proust_irecv(S, &v, sizeof v, 0, 999, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_cancel(r));
        memset(&st, 0, sizeof st);
        CHECK_RC(proust_wait(&r, &st), PROUST_ERR_CANCELED);
        EXPECT(r == NULL, "wait on a canceled receive left the handle");
        EXPECT(st.error == PROUST_ERR_CANCELED, "status.error %s, expected PROUST_ERR_CANCELED",
               proust_error_name(st.error));
        EXPECT(st.count == 0, "canceled receive has count %zu", st.count);

        CHECK(proust_irecv(S, &v, sizeof v, PROUST_ANY_SOURCE, 998, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_cancel(r));
        int flag = 0;
        CHECK_RC(proust_test(&r, &flag, &st), PROUST_ERR_CANCELED);
        EXPECT(flag == 1 && st.error == PROUST_ERR_CANCELED,
               "test of a canceled receive: flag %d error %s", flag, proust_error_name(st.error));
        CHECK_RC(proust_cancel(NULL), PROUST_ERR_INVALID);
    }
    tu_barrier(S);
    /* the tags of the canceled receives still work */
    if (tu_rank == 0) {
        int a = 1, b = 2;
        CHECK(proust_send(S, &a, sizeof a, 1, 999));
        CHECK(proust_send(S, &b, sizeof b, 1, 998));
    } else {
        int v = 0;
        CHECK(proust_recv(S, &v, sizeof v, 0, 999, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(v == 1, "tag 999 after cancel: got %d", v);
        CHECK(proust_recv(S, &v, sizeof v, PROUST_ANY_SOURCE, 998, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(v == 2, "tag 998 after cancel: got %d", v);
    }
}

static void test_cancel_matched(void)
{
    TU_PHASE("cancel of matched sends and receives");
    tu_barrier(S);
    const size_t big = 300000;
    uint8_t *buf = malloc(big);
    int small = 5, got = 0;
    proust_request_t *rq[2];
    if (tu_rank == 1) { /* posted first: the sends are matched on arrival */
        CHECK(proust_irecv(S, buf, big, 0, 996, PROUST_TAG_MASK_FULL, &rq[0]));
        CHECK(proust_irecv(S, &got, sizeof got, 0, 995, PROUST_TAG_MASK_FULL, &rq[1]));
    }
    tu_barrier(S);
    if (tu_rank == 0) {
        tu_fill(buf, big, 996);
        CHECK(proust_isend(S, buf, big, 1, 996, &rq[0]));
        CHECK(proust_isend(S, &small, sizeof small, 1, 995, &rq[1]));
        CHECK(proust_cancel(rq[0])); /* asked: the receiver says no */
        CHECK(proust_cancel(rq[1]));
        proust_status_t st[2];
        CHECK(proust_waitall(2, rq, st));
        EXPECT(st[0].error == PROUST_OK && st[1].error == PROUST_OK,
               "matched sends asked to cancel completed with %s / %s",
               proust_error_name(st[0].error), proust_error_name(st[1].error));
    } else {
        proust_status_t st[2];
        CHECK(proust_waitall(2, rq, st));
        EXPECT_STATUS(st[0], 0, 996, big, big, PROUST_OK);
        EXPECT_PATTERN(buf, big, 996, "send that refused cancel");
        EXPECT(got == 5, "got %d", got);
    }
    free(buf);
    /* a matched (completed, not yet waited) receive cannot be canceled */
    tu_barrier(S);
    if (tu_rank == 0) {
        int v = 994;
        CHECK(proust_send(S, &v, sizeof v, 1, 994));
    } else {
        int v = 0;
        struct cb_state c = {0};
        proust_request_t *r;
        CHECK(proust_irecv(S, &v, sizeof v, 0, 994, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &c));
        EXPECT(done_flag_set(&c, 10) == 1, "receive of tag 994 never completed");
        CHECK_RC(proust_cancel(r), PROUST_ERR_BUSY);
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        EXPECT_STATUS(st, 0, 994, sizeof v, sizeof v, PROUST_OK);
        EXPECT(v == 994, "got %d", v);
    }
}

/* ---------------------------------------------------------------- request monitor */
static proust_request_t *reply_req;
static int reply_val = 505;
static _Atomic int reply_rc = 1;

static void post_reply(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    (void)st;
    (void)arg;
    /* callbacks run with no library lock held: posting is allowed */
    atomic_store(&reply_rc, proust_isend(S, &reply_val, sizeof reply_val, 0, 505, &reply_req));
}

static void test_request_monitor_before(void)
{
    TU_PHASE("request_monitor before completion");
    CHECK_RC(proust_request_monitor(NULL, on_done, NULL), PROUST_ERR_INVALID);
    tu_barrier(S);
    if (tu_rank == 0) {
        int v = 501;
        tu_barrier(S);
        CHECK(proust_send(S, &v, sizeof v, 1, 501));
    } else {
        int v = 0;
        struct cb_state c = {0};
        proust_request_t *r;
        CHECK(proust_irecv(S, &v, sizeof v, 0, 501, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &c));
        CHECK_RC(proust_request_monitor(r, on_done, &c), PROUST_ERR_INVALID);
        EXPECT(atomic_load(&c.calls) == 0, "callback ran before the message was sent");
        tu_barrier(S);
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        EXPECT(atomic_load(&c.calls) == 1, "callback ran %d times, expected once",
               atomic_load(&c.calls));
        EXPECT_STATUS(c.st, 0, 501, sizeof v, sizeof v, PROUST_OK);
        EXPECT(v == 501, "got %d", v);
    }
}

static void test_request_monitor_after(void)
{
    TU_PHASE("request_monitor after completion");
    tu_barrier(S);
    if (tu_rank == 0) {
        int v = 502;
        CHECK(proust_send(S, &v, sizeof v, 1, 502));
    } else {
        int v = 0, flag = 0;
        CHECK(proust_probe(S, 0, 502, PROUST_TAG_MASK_FULL, NULL));
        (void)flag;
        struct cb_state c = {0};
        proust_request_t *r;
        /* an eager unexpected message: the receive completes when posted */
        CHECK(proust_irecv(S, &v, sizeof v, 0, 502, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &c));
        EXPECT(atomic_load(&c.calls) == 1,
               "callback installed on a completed request ran %d times before monitor "
               "returned, expected at once",
               atomic_load(&c.calls));
        EXPECT(pthread_equal(c.thread, pthread_self()), "callback ran on another thread");
        EXPECT(c.req == r, "callback got request %p, expected %p", (void *)c.req, (void *)r);
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        EXPECT(atomic_load(&c.calls) == 1, "callback ran %d times", atomic_load(&c.calls));
        EXPECT_STATUS(c.st, 0, 502, sizeof v, sizeof v, PROUST_OK);
        EXPECT(v == 502, "got %d", v);
    }
}

static void test_request_monitor_posts(void)
{
    TU_PHASE("request_monitor: callback posts a send");
    tu_barrier(S);
    if (tu_rank == 0) {
        int v = 504, w = 0;
        CHECK(proust_send(S, &v, sizeof v, 1, 504));
        CHECK(proust_recv(S, &w, sizeof w, 1, 505, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(w == 505, "reply posted from a callback: got %d", w);
    } else {
        int v = 0;
        proust_request_t *r;
        CHECK(proust_irecv(S, &v, sizeof v, 0, 504, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, post_reply, NULL));
        CHECK(proust_wait(&r, NULL));
        CHECK_RC(atomic_load(&reply_rc), PROUST_OK);
        CHECK(proust_wait(&reply_req, NULL));
    }
}

static void test_request_monitor_free(void)
{
    TU_PHASE("request_monitor then request_free");
    tu_barrier(S);
    if (tu_rank == 0) {
        uint8_t *buf = malloc(100000);
        tu_fill(buf, 100000, 506);
        tu_barrier(S);
        CHECK(proust_send(S, buf, 100000, 1, 506));
        free(buf);
    } else {
        uint8_t *buf = malloc(100000);
        struct cb_state c = {0};
        proust_request_t *r;
        CHECK(proust_irecv(S, buf, 100000, 0, 506, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &c));
        CHECK(proust_request_free(&r));
        EXPECT(r == NULL, "request_free left the handle");
        tu_barrier(S);
        EXPECT(done_flag_set(&c, 10) == 1, "freed request's callback never ran");
        for (int k = 0; k < 1000; k++)
            CHECK(proust_progress(S));
        EXPECT(atomic_load(&c.calls) == 1, "callback ran %d times", atomic_load(&c.calls));
        EXPECT_STATUS(c.st, 0, 506, 100000, 100000, PROUST_OK);
        EXPECT_PATTERN(buf, 100000, 506, "freed receive");
        free(buf);
    }
}

/* ---------------------------------------------------------------- session monitor */
struct ev_state {
    _Atomic int count;
    unsigned event;
    proust_status_t env;
};

static void on_event(proust_session_t *s, unsigned event, const proust_status_t *env, void *arg)
{
    struct ev_state *e = arg;
    EXPECT(s == S, "session monitor got session %p, expected %p", (void *)s, (void *)S);
    if (env->tag >= TU_TAG_RESERVED)
        return; /* the barrier's own messages */
    e->event = event;
    e->env = *env;
    atomic_fetch_add(&e->count, 1);
}

static void test_session_monitor(void)
{
    TU_PHASE("session_monitor");
    static struct ev_state ev;
    const proust_tag_t t1 = 0xABCDEF, t2 = 0xABCDF0, t3 = 0xABCDF1, t4 = 0xABCDF2;
    const size_t big = 300000;
    uint8_t *buf = malloc(big);
    if (tu_rank == 1) {
        CHECK_RC(proust_session_monitor(S, 0x80u, on_event, &ev), PROUST_ERR_INVALID);
        CHECK(proust_session_monitor(S, PROUST_EVENT_UNEXPECTED, on_event, &ev));
    }
    tu_barrier(S);
    /* 1: an unexpected eager message */
    if (tu_rank == 0) {
        tu_fill(buf, 4321, t1);
        CHECK(proust_send(S, buf, 4321, 1, t1));
    } else {
        double deadline = tu_now() + 10;
        while (atomic_load(&ev.count) == 0 && tu_now() < deadline)
            CHECK(proust_progress(S));
        EXPECT(atomic_load(&ev.count) == 1, "%d UNEXPECTED events for one unexpected message",
               atomic_load(&ev.count));
        EXPECT(ev.event == PROUST_EVENT_UNEXPECTED, "event 0x%x", ev.event);
        EXPECT(ev.env.source == 0 && ev.env.tag == t1 && ev.env.size == 4321,
               "envelope: source %d tag 0x%" PRIx64 " size %zu, expected 0 0x%" PRIx64 " 4321",
               ev.env.source, (uint64_t)ev.env.tag, ev.env.size, (uint64_t)t1);
        proust_status_t st;
        CHECK(proust_recv(S, buf, big, 0, t1, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, t1, 4321, 4321, PROUST_OK);
        EXPECT_PATTERN(buf, 4321, t1, "message announced by the monitor");
    }
    /* 2: an expected message: no event */
    proust_request_t *r = NULL;
    if (tu_rank == 1)
        CHECK(proust_irecv(S, buf, big, 0, t2, PROUST_TAG_MASK_FULL, &r));
    tu_barrier(S);
    if (tu_rank == 0) {
        CHECK(proust_send(S, buf, 1000, 1, t2));
    } else {
        CHECK(proust_wait(&r, NULL));
        for (int k = 0; k < 100; k++)
            CHECK(proust_progress(S));
        EXPECT(atomic_load(&ev.count) == 1, "a message with a posted receive raised an event "
               "(count %d, last tag 0x%" PRIx64 ")", atomic_load(&ev.count),
               (uint64_t)ev.env.tag);
    }
    /* 3: an unexpected rendezvous message */
    tu_barrier(S);
    if (tu_rank == 0) {
        tu_fill(buf, big, t3);
        CHECK(proust_send(S, buf, big, 1, t3));
    } else {
        double deadline = tu_now() + 10;
        while (atomic_load(&ev.count) == 1 && tu_now() < deadline)
            CHECK(proust_progress(S));
        EXPECT(atomic_load(&ev.count) == 2, "events: %d, expected 2", atomic_load(&ev.count));
        EXPECT(ev.env.source == 0 && ev.env.tag == t3 && ev.env.size == big,
               "envelope: source %d tag 0x%" PRIx64 " size %zu, expected 0 0x%" PRIx64 " %zu",
               ev.env.source, (uint64_t)ev.env.tag, ev.env.size, (uint64_t)t3, big);
        memset(buf, 0, big);
        CHECK(proust_recv(S, buf, big, 0, t3, PROUST_TAG_MASK_FULL, NULL));
        EXPECT_PATTERN(buf, big, t3, "rendezvous message announced by the monitor");
        CHECK(proust_session_monitor(S, PROUST_EVENT_UNEXPECTED, NULL, NULL));
    }
    /* 4: monitor removed: no event */
    tu_barrier(S);
    if (tu_rank == 0) {
        CHECK(proust_send(S, buf, 10, 1, t4));
    } else {
        CHECK(proust_probe(S, 0, t4, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(atomic_load(&ev.count) == 2, "removed monitor still called (count %d)",
               atomic_load(&ev.count));
        CHECK(proust_recv(S, buf, big, 0, t4, PROUST_TAG_MASK_FULL, NULL));
    }
    free(buf);
}

static const struct tu_case cases[] = {
    {"ssend", test_ssend, "ssend waits for the receive (eager, rendezvous, 0 B); send does not"},
    {"issend", test_issend, "an issend tests incomplete until its receive is posted"},
    {"probe", test_probe, "probe/iprobe see envelopes without consuming; wildcards, masks"},
    {"cancel", test_cancel, "unmatched receives cancel; their tags still match afterwards"},
    {"cancel_matched", test_cancel_matched, "matched sends and receives are not cancelled"},
    {"request_monitor_before", test_request_monitor_before,
     "a monitor set before completion runs once with the status; a second is refused"},
    {"request_monitor_after", test_request_monitor_after,
     "a monitor set on a complete request runs at once in the calling thread"},
    {"request_monitor_posts", test_request_monitor_posts, "a monitor callback may post a send"},
    {"request_monitor_free", test_request_monitor_free,
     "a monitored request freed before completion still calls back"},
    {"session_monitor", test_session_monitor, "PROUST_EVENT_UNEXPECTED: unexpected messages only"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size == 2, "run with 2 processes, got %d", tu_size);
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("sync %s: ok\n", c->name);
    return 0;
}
