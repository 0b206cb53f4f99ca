/*
 * cancel — cancelling sends (1 or 2 processes: rank 0 sends to the last
 * rank, itself when alone). One case a run: `api_cancel <case>`
 * (test_cases.h; --list, --help).
 *
 *  unmatched: an isend or issend of 0 B .. 4 MiB that nobody received is
 *           cancelled: its wait returns PROUST_ERR_CANCELED with count 0,
 *           a second cancel is refused, and the receiver never sees the
 *           message: a later one with the same tag is the one received,
 *           and nothing else is left to probe.
 *  middle:  of three messages with one tag, the second is cancelled: the
 *           receiver gets the first and the third, in order.
 *  matched: a send whose receive was posted first is not cancelled: it
 *           completes normally and the data arrives.
 *  pack:    a three-segment pack (eager and rendezvous segments) is
 *           cancelled whole.
 *  monitor: a callback installed before the cancel runs once, after the
 *           answer, with the cancelled status.
 *  freed:   a send cancelled then released without a wait leaves nothing
 *           at the receiver.
 */
#include <stdatomic.h>
#include <stdbool.h>

#include "test_util.h"
#include "test_cases.h"

static proust_session_t *S;
static int sender, receiver;

static bool is_sender(void)
{
    return tu_rank == sender;
}

static bool is_receiver(void)
{
    return tu_rank == receiver;
}

/* Nothing with this tag is left at the receiver. */
static void expect_nothing_left(proust_tag_t tag, const char *what)
{
    int flag = 1;
    proust_status_t st;
    CHECK(proust_iprobe(S, sender, tag, PROUST_TAG_MASK_FULL, &flag, &st));
    EXPECT(!flag, "%s: a message of %zu bytes with tag %llu is still there", what, st.size,
           (unsigned long long)tag);
}

static void expect_cancelled(proust_request_t **r, const char *what)
{
    proust_status_t st;
    int rc = proust_wait(r, &st);
    EXPECT(rc == PROUST_ERR_CANCELED && st.error == PROUST_ERR_CANCELED && st.count == 0,
           "%s: wait returned %s, status error %s count %zu; expected cancelled", what,
           proust_error_name(rc), proust_error_name(st.error), st.count);
}

/* ---------------------------------------------------------------- unmatched */
static void unmatched_case(size_t len, int sync, proust_tag_t tag)
{
    static char what[64]; /* static: tu_phase still points to it after the return */
    snprintf(what, sizeof what, "unmatched %s of %zu B", sync ? "issend" : "isend", len);
    TU_PHASE(what);
    uint8_t *cancelled = malloc(len ? len : 1), *kept = malloc(len ? len : 1);
    tu_fill(cancelled, len, tag);
    tu_fill(kept, len, tag + 1);
    proust_request_t *later = NULL;
    if (is_sender()) {
        proust_request_t *r;
        if (sync)
            CHECK(proust_issend(S, cancelled, len, receiver, tag, &r));
        else
            CHECK(proust_isend(S, cancelled, len, receiver, tag, &r));
        CHECK(proust_cancel(r));
        CHECK_RC(proust_cancel(r), PROUST_ERR_BUSY); /* asked already */
        expect_cancelled(&r, what);
        EXPECT(r == NULL, "%s: wait left the handle", what);
        CHECK(proust_isend(S, kept, len, receiver, tag, &later));
    }
    tu_barrier(S);
    if (is_receiver()) {
        uint8_t *in = malloc(len ? len : 1);
        proust_status_t st;
        CHECK(proust_recv(S, in, len, sender, tag, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, sender, tag, len, len, PROUST_OK);
        EXPECT_PATTERN(in, len, tag + 1, "%s: the message received", what);
        expect_nothing_left(tag, what);
        free(in);
    }
    if (later)
        CHECK(proust_wait(&later, NULL));
    free(cancelled);
    free(kept);
}

/* ---------------------------------------------------------------- middle */
static void middle_case(size_t len, proust_tag_t tag)
{
    static char what[64];
    snprintf(what, sizeof what, "middle of three, %zu B", len);
    TU_PHASE(what);
    uint8_t *buf[3];
    for (int i = 0; i < 3; i++) {
        buf[i] = malloc(len);
        tu_fill(buf[i], len, tag + (uint64_t)i);
    }
    proust_request_t *r[3] = {NULL, NULL, NULL};
    if (is_sender()) {
        for (int i = 0; i < 3; i++)
            CHECK(proust_isend(S, buf[i], len, receiver, tag, &r[i]));
        CHECK(proust_cancel(r[1]));
        expect_cancelled(&r[1], what);
    }
    tu_barrier(S);
    if (is_receiver()) {
        uint8_t *in = malloc(len);
        for (int i = 0; i < 3; i += 2) {
            CHECK(proust_recv(S, in, len, sender, tag, PROUST_TAG_MASK_FULL, NULL));
            EXPECT_PATTERN(in, len, tag + (uint64_t)i, "%s: message %d", what, i);
        }
        expect_nothing_left(tag, what);
        free(in);
    }
    if (is_sender()) {
        proust_status_t st[2];
        proust_request_t *rest[2] = {r[0], r[2]};
        CHECK(proust_waitall(2, rest, st));
        EXPECT(st[0].error == PROUST_OK && st[1].error == PROUST_OK,
               "%s: the other two sends completed with %s / %s", what,
               proust_error_name(st[0].error), proust_error_name(st[1].error));
    }
    for (int i = 0; i < 3; i++)
        free(buf[i]);
}

/* ---------------------------------------------------------------- matched */
static void matched_case(size_t len, proust_tag_t tag)
{
    static char what[64];
    snprintf(what, sizeof what, "matched send of %zu B", len);
    TU_PHASE(what);
    uint8_t *out = malloc(len), *in = malloc(len);
    tu_fill(out, len, tag);
    proust_request_t *rr = NULL;
    if (is_receiver())
        CHECK(proust_irecv(S, in, len, sender, tag, PROUST_TAG_MASK_FULL, &rr));
    tu_barrier(S);
    if (is_sender()) {
        proust_request_t *r;
        proust_status_t st;
        CHECK(proust_isend(S, out, len, receiver, tag, &r));
        CHECK(proust_cancel(r)); /* asked; the receiver has it already */
        CHECK(proust_wait(&r, &st));
        EXPECT(st.error == PROUST_OK, "%s: completed with %s, expected not cancelled", what,
               proust_error_name(st.error));
    }
    if (rr) {
        proust_status_t st;
        CHECK(proust_wait(&rr, &st));
        EXPECT_STATUS(st, sender, tag, len, len, PROUST_OK);
        EXPECT_PATTERN(in, len, tag, "%s", what);
    }
    tu_barrier(S);
    free(out);
    free(in);
}

/* ---------------------------------------------------------------- pack */
static void pack_case(proust_tag_t tag)
{
    TU_PHASE("pack");
    static const size_t seg[3] = {100, 300000, 7};
    uint8_t *b[3], *in[3];
    for (int i = 0; i < 3; i++) {
        b[i] = malloc(seg[i]);
        in[i] = malloc(seg[i]);
    }
    proust_request_t *later = NULL;
    if (is_sender()) {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 3; i++)
                tu_fill(b[i], seg[i], tag + (uint64_t)(round * 3 + i));
            proust_pack_t *p;
            proust_request_t *r;
            CHECK(proust_pack_begin(S, receiver, tag, &p));
            for (int i = 0; i < 3; i++)
                CHECK(proust_pack_add(p, b[i], seg[i], 0));
            CHECK(proust_pack_end(p, &r));
            if (round == 1) {
                later = r;
                break;
            }
            CHECK(proust_cancel(r));
            expect_cancelled(&r, "pack"); /* its buffers are ours again */
        }
    }
    tu_barrier(S);
    if (is_receiver()) {
        proust_pack_t *p;
        proust_request_t *r;
        CHECK(proust_unpack_begin(S, sender, tag, PROUST_TAG_MASK_FULL, &p));
        for (int i = 0; i < 3; i++)
            CHECK(proust_unpack_add(p, in[i], seg[i]));
        CHECK(proust_unpack_end(p, &r));
        CHECK(proust_wait(&r, NULL));
        for (int i = 0; i < 3; i++)
            EXPECT_PATTERN(in[i], seg[i], tag + 3 + (uint64_t)i, "pack: segment %d", i);
        expect_nothing_left(tag, "pack");
    }
    if (later)
        CHECK(proust_wait(&later, NULL));
    for (int i = 0; i < 3; i++) {
        free(b[i]);
        free(in[i]);
    }
}

/* ---------------------------------------------------------------- monitor */
struct cb_state {
    _Atomic int calls;
    int error;
};

static void on_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct cb_state *c = arg;
    c->error = st->error;
    atomic_fetch_add(&c->calls, 1);
}

static void monitor_case(size_t len, proust_tag_t tag)
{
    TU_PHASE("monitor");
    uint8_t *buf = malloc(len);
    tu_fill(buf, len, tag);
    if (is_sender()) {
        struct cb_state c = {0};
        proust_request_t *r;
        CHECK(proust_isend(S, buf, len, receiver, tag, &r));
        CHECK(proust_request_monitor(r, on_done, &c));
        CHECK(proust_cancel(r));
        double t0 = tu_now();
        while (atomic_load(&c.calls) == 0 && tu_now() - t0 < 20)
            CHECK(proust_progress(S));
        EXPECT(atomic_load(&c.calls) == 1 && c.error == PROUST_ERR_CANCELED,
               "callback ran %d times with %s; expected once, cancelled",
               atomic_load(&c.calls), proust_error_name(c.error));
        expect_cancelled(&r, "monitor");
        EXPECT(atomic_load(&c.calls) == 1, "callback ran %d times", atomic_load(&c.calls));
    }
    tu_barrier(S);
    if (is_receiver())
        expect_nothing_left(tag, "monitor");
    free(buf);
}

/* ---------------------------------------------------------------- freed */
static void freed_case(size_t len, proust_tag_t tag)
{
    TU_PHASE("freed");
    uint8_t *buf = malloc(len);
    tu_fill(buf, len, tag);
    if (is_sender()) {
        proust_request_t *r;
        CHECK(proust_isend(S, buf, len, receiver, tag, &r));
        CHECK(proust_cancel(r));
        CHECK(proust_request_free(&r));
    }
    /* the CANCEL travels before the barrier's message: the receiver has
     * dropped the message when its barrier ends, or drops it when the
     * data an idle pull was fetching meanwhile comes (the CANCEL waits for
     * it): gone within seconds, without any receive */
    tu_barrier(S);
    if (is_receiver()) {
        int flag = 1;
        proust_status_t st;
        for (double t0 = tu_now(); flag && tu_now() - t0 < 5.0;)
            CHECK(proust_iprobe(S, sender, tag, PROUST_TAG_MASK_FULL, &flag, &st));
        expect_nothing_left(tag, "freed");
    }
    tu_barrier(S); /* the sender's buffer is free once the answer came */
    free(buf);
}

/* ---------------------------------------------------------------- cases */
static void test_unmatched(void)
{
    static const size_t sizes[] = {0, 1, 100, 10000, 70001, 300000, 4u << 20};
    proust_tag_t tag = 1000;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int sync = 0; sync < 2; sync++, tag += 2)
            unmatched_case(sizes[i], sync, tag);
    if (tu_rank == 0)
        printf("cancel: unmatched sends of 0 B - 4 MiB cancelled\n");
}

static void test_middle(void)
{
    middle_case(8, 2000);
    middle_case(300000, 2010);
}

static void test_matched(void)
{
    matched_case(16, 3000);
    matched_case(300000, 3001);
}

static void test_pack(void)
{
    pack_case(4000);
}

static void test_monitor(void)
{
    monitor_case(300000, 5000);
}

static void test_freed(void)
{
    freed_case(300000, 6000);
    freed_case(64, 6001);
}

static const struct tu_case cases[] = {
    {"unmatched", test_unmatched, "unmatched isend/issend of 0 B - 4 MiB cancel; nothing arrives"},
    {"middle", test_middle, "the middle one of three sends cancelled: 1st and 3rd in order"},
    {"matched", test_matched, "a send whose receive was posted is not cancelled"},
    {"pack", test_pack, "a three-segment pack is cancelled whole"},
    {"monitor", test_monitor, "a monitor runs once, after the answer, with the cancelled status"},
    {"freed", test_freed, "a cancelled send freed without a wait leaves nothing behind"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(120);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    sender = 0;
    receiver = tu_size - 1;
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("cancel %s: ok\n", c->name);
    return 0;
}
