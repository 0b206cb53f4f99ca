/*
 * pack — multi-segment messages (1 or 2 processes). One case a run:
 * `api_pack <case>` (test_cases.h; --list, --help).
 *
 *  segments         packs of 1..5 segments (and 64, the maximum), small and
 *                   large segments mixed, some URGENT / REORDER hints,
 *                   received by an unpack with the same segments into
 *                   unaligned guarded buffers; every segment checked on its
 *                   own, status.size/count = total; posted first and
 *                   unexpected (iprobe sees the whole pack's size first);
 *                   the direction alternates between the two ranks.
 *  truncation       a segment-count mismatch (more or fewer unpack
 *                   segments) and a segment too small for its data (eager
 *                   and rendezvous) complete the unpack with
 *                   PROUST_ERR_TRUNCATE: status.size = bytes sent,
 *                   status.count = bytes placed, the placed bytes correct,
 *                   nothing written past a buffer, the sender completes,
 *                   and traffic afterwards is unaffected.
 *  urgent_overtake  an URGENT rendezvous segment of a pack posted right
 *                   after a plain message (and after a rendezvous one):
 *                   with aggreg the urgent chunk overtakes the earlier
 *                   message on the wire and waits in the receiver's stash;
 *                   both must still arrive intact and in order.
 *  api_errors       pack with zero segments -> PROUST_ERR_INVALID (then
 *                   pack_abort), unknown hint bits, a 65th segment,
 *                   pack_add on an unpack and the reverse, a bad rank.
 */
#include "test_util.h"
#include "test_cases.h"

struct seg {
    size_t len;
    unsigned hints;
};

#define U PROUST_PACK_URGENT
#define R PROUST_PACK_REORDER
#define MAXSEG PROUST_PACK_MAX_SEGMENTS

static proust_session_t *S;
static int case_no;

static uint64_t seed(int c, int seg)
{
    return 0x5ac0000000000000ull ^ ((uint64_t)c << 16) ^ (uint64_t)seg;
}

static proust_tag_t tag_of(int c)
{
    return 0x9A00000000000000ull | (proust_tag_t)c;
}

static size_t total_of(const struct seg *sg, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += sg[i].len;
    return t;
}

/*
 * One pack from `sender` to `receiver`: the sender packs snd[0..ns), the
 * receiver unpacks into buffers of rcv[0..nr) (lengths). want_err: the
 * unpack's expected status; expected count computed from the segments.
 */
static void run_case(proust_session_t *s, const char *what, const struct seg *snd, int ns,
                     const size_t *rcv, int nr, int want_err, int unexpected)
{
    int c = case_no++;
    int sender = tu_size == 1 ? 0 : c % 2, receiver = tu_size == 1 ? 0 : 1 - sender;
    char phase[160];
    snprintf(phase, sizeof phase, "case %d: %s (%s)", c, what,
             unexpected ? "unexpected" : "posted");
    TU_PHASE(phase);
    proust_tag_t tag = tag_of(c);
    size_t total = total_of(snd, ns);
    static const size_t offs[] = {0, 1, 3, 7};

    struct tu_buf sb[MAXSEG], rb[MAXSEG];
    proust_request_t *sreq = NULL, *rreq = NULL;
    /* posted: receiver posts, barrier, sender sends; unexpected: sender
     * sends, the receiver waits until iprobe sees the pack, then posts */
    for (int step = 0; step < 2; step++) {
        int sending = (step == 0) == (unexpected != 0);
        if (sending && tu_rank == sender) {
            proust_pack_t *p = NULL;
            for (int i = 0; i < ns; i++) {
                sb[i] = tu_buf_alloc(snd[i].len, offs[(i + 1) % 4]);
                tu_fill(sb[i].p, snd[i].len, seed(c, i));
            }
            CHECK(proust_pack_begin(s, receiver, tag, &p));
            for (int i = 0; i < ns; i++)
                CHECK(proust_pack_add(p, sb[i].p, snd[i].len, snd[i].hints));
            CHECK(proust_pack_end(p, &sreq));
        }
        if (!sending && tu_rank == receiver) {
            for (int i = 0; i < nr; i++) {
                rb[i] = tu_buf_alloc(rcv[i], offs[i % 4]);
                memset(rb[i].p, 0, rcv[i]);
            }
            if (unexpected) {
                int flag = 0;
                proust_status_t pst;
                double deadline = tu_now() + 20;
                while (!flag) {
                    CHECK(proust_iprobe(s, sender, tag, PROUST_TAG_MASK_FULL, &flag, &pst));
                    EXPECT(tu_now() < deadline, "iprobe never saw the pack");
                }
                EXPECT(pst.source == sender && pst.tag == tag && pst.size == total,
                       "iprobe of a pack: expected source %d size %zu, got source %d size %zu",
                       sender, total, pst.source, pst.size);
            }
            proust_pack_t *p = NULL;
            /* unexpected cases also try ANY_SOURCE and a mask on the low bits */
            if (unexpected)
                CHECK(proust_unpack_begin(s, PROUST_ANY_SOURCE, tag & 0xFFFF, 0xFFFF, &p));
            else
                CHECK(proust_unpack_begin(s, sender, tag, PROUST_TAG_MASK_FULL, &p));
            for (int i = 0; i < nr; i++)
                CHECK(proust_unpack_add(p, rb[i].p, rcv[i]));
            CHECK(proust_unpack_end(p, &rreq));
        }
        if (step == 0 && !unexpected)
            tu_barrier(s);
    }

    if (tu_rank == receiver) {
        proust_status_t st;
        int rc = proust_wait(&rreq, &st);
        /* bytes placed: segment i gets min(sent, buffer) when counts agree */
        size_t count = 0;
        if (ns == nr)
            for (int i = 0; i < ns; i++)
                count += snd[i].len < rcv[i] ? snd[i].len : rcv[i];
        EXPECT(rc == want_err, "unpack wait returned %s, expected %s", proust_error_name(rc),
               proust_error_name(want_err));
        EXPECT(st.source == sender && st.tag == tag && st.size == total && st.error == want_err,
               "unpack status: expected source %d tag 0x%" PRIx64 " size %zu error %s, got "
               "source %d tag 0x%" PRIx64 " size %zu error %s",
               sender, (uint64_t)tag, total, proust_error_name(want_err), st.source,
               (uint64_t)st.tag, st.size, proust_error_name(st.error));
        if (ns == nr) {
            EXPECT(st.count == count, "status.count %zu, expected %zu bytes placed", st.count,
                   count);
            for (int i = 0; i < ns; i++) {
                size_t n = snd[i].len < rcv[i] ? snd[i].len : rcv[i];
                EXPECT_PATTERN(rb[i].p, n, seed(c, i), "segment %d of %d (%zu bytes)", i, ns,
                               snd[i].len);
                for (size_t k = n; k < rcv[i]; k++)
                    EXPECT(rb[i].p[k] == 0, "segment %d: byte %zu past the data changed", i, k);
            }
        } else {
            EXPECT(st.count <= total, "status.count %zu > size %zu", st.count, total);
        }
        for (int i = 0; i < nr; i++) {
            EXPECT_GUARDS(rb[i], "unpack segment %d", i);
            tu_buf_free(&rb[i]);
        }
    }
    if (tu_rank == sender) {
        proust_status_t st;
        int rc = proust_wait(&sreq, &st);
        EXPECT(rc == PROUST_OK && st.error == PROUST_OK && st.source == receiver,
               "pack send completed with %s (status error %s, destination %d)",
               proust_error_name(rc), proust_error_name(st.error), st.source);
        for (int i = 0; i < ns; i++) {
            EXPECT(tu_first_diff(sb[i].p, snd[i].len, seed(c, i)) < 0,
                   "pack segment %d modified by the send", i);
            tu_buf_free(&sb[i]);
        }
    }
    /* traffic after the case still flows (a truncated pack must not leave
     * state behind) */
    int peer = tu_size == 1 ? 0 : 1 - tu_rank;
    uint32_t out = 0xC0FFEE00u + (uint32_t)c, in = 0;
    proust_request_t *r2[2];
    proust_tag_t ftag = 0x7F00000000000000ull | ((proust_tag_t)c << 16) | 0xFFFF;
    CHECK(proust_irecv(s, &in, sizeof in, peer, ftag, PROUST_TAG_MASK_FULL, &r2[0]));
    CHECK(proust_isend(s, &out, sizeof out, peer, ftag, &r2[1]));
    CHECK(proust_waitall(2, r2, NULL));
    EXPECT(in == 0xC0FFEE00u + (uint32_t)c, "follow-up message: got 0x%x", in);
}

static void both(proust_session_t *s, const char *what, const struct seg *snd, int ns,
                 const size_t *rcv, int nr, int want_err)
{
    run_case(s, what, snd, ns, rcv, nr, want_err, 0);
    run_case(s, what, snd, ns, rcv, nr, want_err, 1);
}

static void same(proust_session_t *s, const char *what, const struct seg *snd, int ns)
{
    size_t rcv[MAXSEG];
    for (int i = 0; i < ns; i++)
        rcv[i] = snd[i].len;
    both(s, what, snd, ns, rcv, ns, PROUST_OK);
}

/* A plain message then a pack whose URGENT segment is a rendezvous one, sent
 * back to back with the receives posted first. */
static void overtake_case(proust_session_t *s, size_t first_len)
{
    int c = case_no++;
    int sender = tu_size == 1 ? 0 : c % 2, receiver = tu_size == 1 ? 0 : 1 - sender;
    char phase[96];
    snprintf(phase, sizeof phase, "case %d: urgent segment after a %zu-byte message", c,
             first_len);
    TU_PHASE(phase);
    const size_t l0 = 16, l1 = 100000;
    proust_tag_t tag = tag_of(c);
    uint8_t *a = malloc(first_len), *p0 = malloc(l0), *p1 = malloc(l1);
    EXPECT(a && p0 && p1, "out of memory");
    proust_request_t *r[4] = {NULL, NULL, NULL, NULL};
    if (tu_rank == receiver) {
        memset(a, 0, first_len);
        memset(p0, 0, l0);
        memset(p1, 0, l1);
        CHECK(proust_irecv(s, a, first_len, sender, tag, PROUST_TAG_MASK_FULL, &r[0]));
        proust_pack_t *p;
        CHECK(proust_unpack_begin(s, sender, tag, PROUST_TAG_MASK_FULL, &p));
        CHECK(proust_unpack_add(p, p0, l0));
        CHECK(proust_unpack_add(p, p1, l1));
        CHECK(proust_unpack_end(p, &r[1]));
    }
    tu_barrier(s);
    uint8_t *sa = NULL, *s0 = NULL, *s1 = NULL;
    if (tu_rank == sender) {
        sa = malloc(first_len);
        s0 = malloc(l0);
        s1 = malloc(l1);
        EXPECT(sa && s0 && s1, "out of memory");
        tu_fill(sa, first_len, seed(c, 100));
        tu_fill(s0, l0, seed(c, 0));
        tu_fill(s1, l1, seed(c, 1));
        CHECK(proust_isend(s, sa, first_len, receiver, tag, &r[2]));
        proust_pack_t *p;
        CHECK(proust_pack_begin(s, receiver, tag, &p));
        CHECK(proust_pack_add(p, s0, l0, 0));
        CHECK(proust_pack_add(p, s1, l1, PROUST_PACK_URGENT));
        CHECK(proust_pack_end(p, &r[3]));
    }
    proust_status_t st[4];
    CHECK(proust_waitall(4, r, st));
    if (tu_rank == receiver) {
        EXPECT_STATUS(st[0], sender, tag, first_len, first_len, PROUST_OK);
        EXPECT_STATUS(st[1], sender, tag, l0 + l1, l0 + l1, PROUST_OK);
        EXPECT_PATTERN(a, first_len, seed(c, 100), "message sent before the pack");
        EXPECT_PATTERN(p0, l0, seed(c, 0), "pack segment 0");
        EXPECT_PATTERN(p1, l1, seed(c, 1), "urgent rendezvous segment 1");
    }
    free(a);
    free(p0);
    free(p1);
    free(sa);
    free(s0);
    free(s1);
    tu_barrier(s);
}

static void api_errors(proust_session_t *s)
{
    TU_PHASE("pack API errors");
    int peer = tu_size == 1 ? 0 : 1 - tu_rank;
    char b[8] = {0};
    proust_pack_t *p = NULL;
    proust_request_t *req = (proust_request_t *)0x1;

    CHECK(proust_pack_begin(s, peer, 1, &p));
    CHECK_RC(proust_pack_end(p, &req), PROUST_ERR_INVALID);
    EXPECT(req == (proust_request_t *)0x1, "pack_end with no segment wrote the request");
    CHECK(proust_pack_abort(p));

    CHECK(proust_unpack_begin(s, peer, 1, PROUST_TAG_MASK_FULL, &p));
    CHECK_RC(proust_unpack_end(p, &req), PROUST_ERR_INVALID);
    CHECK(proust_pack_abort(p));

    CHECK(proust_pack_begin(s, peer, 1, &p));
    CHECK_RC(proust_pack_add(p, b, sizeof b, 0x80u), PROUST_ERR_INVALID);
    CHECK_RC(proust_pack_add(p, NULL, 4, 0), PROUST_ERR_INVALID);
    CHECK_RC(proust_unpack_add(p, b, sizeof b), PROUST_ERR_INVALID);
    for (int i = 0; i < MAXSEG; i++)
        CHECK(proust_pack_add(p, b, 1, 0));
    CHECK_RC(proust_pack_add(p, b, 1, 0), PROUST_ERR_INVALID);
    CHECK(proust_pack_abort(p));

    CHECK(proust_unpack_begin(s, PROUST_ANY_SOURCE, 1, 0, &p));
    CHECK_RC(proust_pack_add(p, b, sizeof b, 0), PROUST_ERR_INVALID);
    CHECK_RC(proust_pack_end(p, &req), PROUST_ERR_INVALID);
    CHECK(proust_pack_abort(p));

    p = (proust_pack_t *)0x1;
    CHECK_RC(proust_pack_begin(s, tu_size, 1, &p), PROUST_ERR_RANK);
    CHECK_RC(proust_pack_begin(s, -5, 1, &p), PROUST_ERR_RANK);
    CHECK_RC(proust_pack_begin(s, PROUST_ANY_SOURCE, 1, &p), PROUST_ERR_RANK);
    CHECK_RC(proust_unpack_begin(s, tu_size, 1, 0, &p), PROUST_ERR_RANK);
    EXPECT(p == (proust_pack_t *)0x1, "a failed pack_begin wrote the pack handle");
    CHECK_RC(proust_pack_begin(s, peer, 1, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_pack_abort(NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_pack_add(NULL, b, 1, 0), PROUST_ERR_INVALID);
}

static void test_segments(void)
{
    const struct seg c1[] = {{100, 0}};
    const struct seg c2[] = {{200000, 0}};
    const struct seg c3[] = {{16, U}, {100000, 0}};
    const struct seg c4[] = {{8, 0}, {70000, R}, {3, 0}};
    const struct seg c5[] = {{32, U}, {1000, R}, {0, 0}, {300000, 0}, {5, U | R}};
    const struct seg c6[] = {{1, R}, {2, R}, {3, R}, {4, R}, {5, R}};
    const struct seg c7[] = {{40000, U}, {40000, 0}, {40000, U}, {7, U}};
    const struct seg c8[] = {{65537, 0}, {1, U}};
    same(S, "1 small segment", c1, 1);
    same(S, "1 large segment", c2, 1);
    same(S, "urgent header + large body", c3, 2);
    same(S, "small, large reorder, small", c4, 3);
    same(S, "5 mixed segments with a 0-byte one", c5, 5);
    same(S, "5 tiny reorder segments", c6, 5);
    same(S, "3 medium segments, 2 urgent, + urgent tail", c7, 4);
    same(S, "large then urgent byte", c8, 2);
    struct seg c64[MAXSEG];
    for (int i = 0; i < MAXSEG; i++) {
        c64[i].len = i % 16 == 5 ? 50000 + (size_t)i : (size_t)(i * 11) % 97;
        c64[i].hints = i % 3 == 0 ? R : (i % 7 == 0 ? U : 0);
    }
    same(S, "64 segments", c64, MAXSEG);
    if (tu_rank == 0)
        printf("pack: matching packs ok (%d cases)\n", case_no);
}

static void test_urgent_overtake(void)
{
    overtake_case(S, 100);
    overtake_case(S, 70000);
    if (tu_rank == 0)
        printf("pack: urgent segments after a message ok (%d cases)\n", case_no);
}

static void test_truncation(void)
{
    const struct seg t1[] = {{100, 0}, {50000, 0}};
    const size_t t1r[] = {60000};
    both(S, "2 segments into 1", t1, 2, t1r, 1, PROUST_ERR_TRUNCATE);
    const struct seg t2[] = {{100, 0}};
    const size_t t2r[] = {100, 100};
    both(S, "1 segment into 2", t2, 1, t2r, 2, PROUST_ERR_TRUNCATE);
    const struct seg t3[] = {{100, 0}, {50000, 0}, {10, 0}};
    const size_t t3r[] = {100, 40000, 10};
    both(S, "rendezvous segment too small", t3, 3, t3r, 3, PROUST_ERR_TRUNCATE);
    const struct seg t4[] = {{100, U}, {50, 0}};
    const size_t t4r[] = {60, 50};
    both(S, "eager segment too small", t4, 2, t4r, 2, PROUST_ERR_TRUNCATE);
    const struct seg t5[] = {{300000, 0}, {20, 0}};
    const size_t t5r[] = {300000, 0};
    both(S, "last segment gets a 0-byte buffer", t5, 2, t5r, 2, PROUST_ERR_TRUNCATE);
    const struct seg t6[] = {{10, 0}, {70000, 0}, {10, 0}};
    const size_t t6r[] = {10, 70000};
    both(S, "3 segments with a large one into 2", t6, 3, t6r, 2, PROUST_ERR_TRUNCATE);
    if (tu_rank == 0)
        printf("pack: truncation reported right\n");
}

static void test_api_errors(void)
{
    api_errors(S);
    if (tu_rank == 0)
        printf("pack: API errors reported right\n");
}

static const struct tu_case cases[] = {
    {"segments", test_segments, "packs of 1-5 and 64 segments with hints, posted and unexpected"},
    {"urgent_overtake", test_urgent_overtake, "an URGENT rendezvous segment after a message"},
    {"truncation", test_truncation, "segment-count and size mismatches: PROUST_ERR_TRUNCATE"},
    {"api_errors", test_api_errors, "invalid pack / unpack calls are refused"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    return 0;
}
