/*
 * wildcard — PROUST_ANY_SOURCE and tag masks (run with 3 or more processes).
 * One case a run: `api_wildcard <case>` (test_cases.h; --list, --help):
 * any_source (A), tag_masks_unexpected and tag_masks_posted (B),
 * posting_order (C).
 *
 *  A. Ranks 1..N-1 each send M messages to rank 0 (sizes mixing eager and
 *     rendezvous); rank 0 receives them all with ANY_SOURCE / any-tag
 *     receives, half posted before the sends, half after. Each payload
 *     names its sender and index: status.source and status.tag must agree
 *     with it, each sender's messages must come in its send order, every
 *     message exactly once, data intact.
 *  B. Tag masks: each sender sends a decoy (low 16 bits 0x9999) then two
 *     messages with low 16 bits 0x1234 and different high bits. Rank 0
 *     matches on the low 16 bits only, then on the high 32 bits with
 *     ANY_SOURCE, then takes the decoy with an any-tag receive; status.tag
 *     must carry the full 64-bit tag. Done once with the messages already
 *     there (unexpected) and once with the receives posted first.
 *  C. Posting order decides between an ANY_SOURCE receive and a receive
 *     naming the source: the earliest posted matching receive wins.
 */
#include "test_util.h"
#include "test_cases.h"

#define M 40
#define TAG_A 0x100
#define TAG_GO 0x0600D00000000000ull
#define TAG_DONE 0x0D0E000000000000ull
#define TAG_C 0x0C00000000000001ull

struct hdr {
    int32_t sender;
    int32_t index;
    uint64_t tag;
};

static size_t size_a(int sender, int i)
{
    if (i % 9 == 4)
        return 70000 + (size_t)sender * 100 + (size_t)i;
    return sizeof(struct hdr) + (size_t)((i * 31 + sender * 7) % 500);
}

static uint64_t seed(int phase, int sender, int i)
{
    return ((uint64_t)phase << 56) ^ ((uint64_t)sender << 32) ^ (uint64_t)i;
}

static void go(proust_session_t *s)
{
    /* rank 0 tells the others to start sending (rank 0 may have wildcard
     * receives posted, so no barrier here) */
    if (tu_rank == 0) {
        for (int r = 1; r < tu_size; r++)
            CHECK(proust_send(s, NULL, 0, r, TAG_GO));
    } else {
        CHECK(proust_recv(s, NULL, 0, 0, TAG_GO, PROUST_TAG_MASK_FULL, NULL));
    }
}

static void make_msg(uint8_t *buf, size_t n, int sender, int i, uint64_t tag, int phase)
{
    tu_fill(buf + sizeof(struct hdr), n - sizeof(struct hdr), seed(phase, sender, i));
    struct hdr h = {sender, i, tag};
    memcpy(buf, &h, sizeof h);
}

static void phase_a(proust_session_t *s)
{
    TU_PHASE("A: any-source receives");
    int nsend = tu_size - 1, total = nsend * M;
    if (tu_rank == 0) {
        size_t cap = 70000 + (size_t)tu_size * 100 + M;
        uint8_t **rbuf = calloc((size_t)total, sizeof *rbuf);
        proust_request_t **rreq = calloc((size_t)total, sizeof *rreq);
        proust_status_t *st = calloc((size_t)total, sizeof *st);
        int *next = calloc((size_t)tu_size, sizeof *next);
        EXPECT(rbuf && rreq && st && next, "out of memory");
        for (int k = 0; k < total; k++) {
            rbuf[k] = malloc(cap);
            EXPECT(rbuf[k] != NULL, "out of memory");
        }
        for (int k = 0; k < total / 2; k++)
            CHECK(proust_irecv(s, rbuf[k], cap, PROUST_ANY_SOURCE, 0, PROUST_TAG_MASK_ANY,
                               &rreq[k]));
        go(s);
        tu_sleep_ms(20);
        for (int k = 0; k < 20; k++)
            CHECK(proust_progress(s));
        for (int k = total / 2; k < total; k++)
            CHECK(proust_irecv(s, rbuf[k], cap, PROUST_ANY_SOURCE, 0, PROUST_TAG_MASK_ANY,
                               &rreq[k]));
        int rc = proust_waitall((size_t)total, rreq, st);
        EXPECT(rc == PROUST_OK, "waitall returned %s", proust_error_name(rc));
        for (int k = 0; k < total; k++) {
            struct hdr h;
            EXPECT(st[k].error == PROUST_OK && st[k].size >= sizeof h,
                   "receive %d: error %s size %zu from rank %d tag %#llx", k,
                   proust_error_name(st[k].error), st[k].size, st[k].source,
                   (unsigned long long)st[k].tag);
            memcpy(&h, rbuf[k], sizeof h);
            EXPECT(h.sender >= 1 && h.sender < tu_size && h.index >= 0 && h.index < M,
                   "receive %d: garbage header (sender %d index %d)", k, h.sender, h.index);
            EXPECT(st[k].source == h.sender,
                   "receive %d: status.source %d but the message was sent by rank %d", k,
                   st[k].source, h.sender);
            EXPECT(st[k].tag == h.tag && h.tag == (uint64_t)(TAG_A + h.index),
                   "receive %d: status.tag 0x%" PRIx64 ", message says 0x%" PRIx64
                   " (index %d)",
                   k, (uint64_t)st[k].tag, h.tag, h.index);
            EXPECT(h.index == next[h.sender],
                   "receive %d: message %d of rank %d arrived where message %d was due "
                   "(overtaking or duplicate)",
                   k, h.index, h.sender, next[h.sender]);
            next[h.sender]++;
            size_t n = size_a(h.sender, h.index);
            EXPECT(st[k].size == n && st[k].count == n,
                   "receive %d (rank %d #%d): size %zu count %zu, expected %zu", k, h.sender,
                   h.index, st[k].size, st[k].count, n);
            EXPECT_PATTERN(rbuf[k] + sizeof h, n - sizeof h,
                           seed(1, h.sender, h.index), "rank %d message %d", h.sender,
                           h.index);
        }
        for (int r = 1; r < tu_size; r++)
            EXPECT(next[r] == M, "got %d messages from rank %d, expected %d", next[r], r, M);
        /* only now may the senders go on to the barrier: with background
         * progress a fast sender's barrier token would otherwise reach our
         * any-tag receives before a slow sender's last messages */
        for (int r = 1; r < tu_size; r++)
            CHECK(proust_send(s, NULL, 0, r, TAG_DONE));
        for (int k = 0; k < total; k++)
            free(rbuf[k]);
        free(rbuf);
        free(rreq);
        free(st);
        free(next);
    } else {
        uint8_t *sbuf[M];
        proust_request_t *sreq[M];
        go(s);
        for (int i = 0; i < M; i++) {
            size_t n = size_a(tu_rank, i);
            sbuf[i] = malloc(n);
            EXPECT(sbuf[i] != NULL, "out of memory");
            /* the pattern covers the bytes after the header */
            tu_fill(sbuf[i] + sizeof(struct hdr), n - sizeof(struct hdr), seed(1, tu_rank, i));
            struct hdr h = {tu_rank, i, (uint64_t)(TAG_A + i)};
            memcpy(sbuf[i], &h, sizeof h);
            CHECK(proust_isend(s, sbuf[i], n, 0, (proust_tag_t)(TAG_A + i), &sreq[i]));
        }
        CHECK(proust_waitall(M, sreq, NULL));
        for (int i = 0; i < M; i++)
            free(sbuf[i]);
        CHECK(proust_recv(s, NULL, 0, 0, TAG_DONE, PROUST_TAG_MASK_FULL, NULL));
    }
}

static proust_tag_t tag_b(int r, int which)
{
    static const uint64_t high[3] = {0xAAAA, 0xBBBB, 0xCCCC};
    static const uint64_t low[3] = {0x9999, 0x1234, 0x1234};
    return (high[which] << 48) | ((uint64_t)r << 32) | low[which];
}

static void phase_b(proust_session_t *s, int posted_first)
{
    TU_PHASE(posted_first ? "B: tag masks, receives posted first" : "B: tag masks, unexpected");
    enum { N = 3 };
    size_t sz[N] = {100, 40000, 20};
    if (tu_rank == 0) {
        int nsend = tu_size - 1;
        uint8_t *rbuf[64][N];
        proust_request_t *rreq[64][N];
        proust_status_t st[64][N];
        EXPECT(nsend <= 64, "too many ranks");
        for (int r = 1; r < tu_size; r++)
            for (int w = 0; w < N; w++)
                rbuf[r - 1][w] = malloc(65536);
        if (!posted_first) {
            go(s);
            /* let every message arrive */
            for (int r = 1; r < tu_size; r++) {
                int flag = 0;
                double deadline = tu_now() + 20;
                while (!flag) {
                    CHECK(proust_iprobe(s, r, tag_b(r, 2), PROUST_TAG_MASK_FULL, &flag, NULL));
                    EXPECT(tu_now() < deadline, "the messages of rank %d never came", r);
                }
            }
        }
        for (int r = 1; r < tu_size; r++) {
            /* 1: low 16 bits only, from r: skips the decoy */
            CHECK(proust_irecv(s, rbuf[r - 1][1], 65536, r, 0x1234, 0xFFFF, &rreq[r - 1][1]));
            /* 2: high 32 bits (0xCCCC, r), any source */
            CHECK(proust_irecv(s, rbuf[r - 1][2], 65536, PROUST_ANY_SOURCE,
                               tag_b(r, 2) & 0xFFFFFFFF00000000ull, 0xFFFFFFFF00000000ull,
                               &rreq[r - 1][2]));
            /* 0: anything from r: what is left is the decoy */
            CHECK(proust_irecv(s, rbuf[r - 1][0], 65536, r, 0, PROUST_TAG_MASK_ANY,
                               &rreq[r - 1][0]));
        }
        if (posted_first)
            go(s);
        for (int r = 1; r < tu_size; r++) {
            for (int w = 0; w < N; w++) {
                CHECK(proust_wait(&rreq[r - 1][w], &st[r - 1][w]));
                EXPECT_STATUS(st[r - 1][w], r, tag_b(r, w), sz[w], sz[w], PROUST_OK);
                struct hdr h;
                memcpy(&h, rbuf[r - 1][w], sizeof h);
                EXPECT(h.sender == r && h.index == w,
                       "receive for message %d of rank %d got message %d of rank %d", w, r,
                       h.index, h.sender);
                EXPECT_PATTERN(rbuf[r - 1][w] + sizeof h, sz[w] - sizeof h, seed(2, r, w),
                               "masked message %d of rank %d", w, r);
                free(rbuf[r - 1][w]);
            }
        }
    } else {
        go(s);
        uint8_t *sbuf[N];
        proust_request_t *sreq[N];
        for (int w = 0; w < N; w++) {
            sbuf[w] = malloc(sz[w]);
            EXPECT(sbuf[w] != NULL, "out of memory");
            make_msg(sbuf[w], sz[w], tu_rank, w, tag_b(tu_rank, w), 2);
        }
        for (int w = 0; w < N; w++)
            CHECK(proust_isend(s, sbuf[w], sz[w], 0, tag_b(tu_rank, w), &sreq[w]));
        CHECK(proust_waitall(N, sreq, NULL));
        for (int w = 0; w < N; w++)
            free(sbuf[w]);
    }
    tu_barrier(s);
}

static void phase_c(proust_session_t *s)
{
    TU_PHASE("C: posting order between ANY_SOURCE and a named source");
    /* rank 1 sends 5 messages with one tag; rank 0 posted: ANY, src 1,
     * ANY, src 1, ANY — message k must land in receive k */
    enum { N = 5 };
    if (tu_rank == 0) {
        int32_t got[N];
        proust_request_t *rreq[N];
        proust_status_t st[N];
        for (int k = 0; k < N; k++) {
            got[k] = -1;
            CHECK(proust_irecv(s, &got[k], sizeof got[k], k % 2 ? 1 : PROUST_ANY_SOURCE, TAG_C,
                               PROUST_TAG_MASK_FULL, &rreq[k]));
        }
        go(s);
        CHECK(proust_waitall(N, rreq, st));
        for (int k = 0; k < N; k++) {
            EXPECT_STATUS(st[k], 1, TAG_C, sizeof(int32_t), sizeof(int32_t), PROUST_OK);
            EXPECT(got[k] == k, "receive %d (%s) got message %d", k,
                   k % 2 ? "source 1" : "ANY_SOURCE", got[k]);
        }
    } else {
        go(s);
        if (tu_rank == 1) {
            int32_t v[N];
            for (int k = 0; k < N; k++) {
                v[k] = k;
                CHECK(proust_send(s, &v[k], sizeof v[k], 0, TAG_C));
            }
        }
    }
    tu_barrier(s);
}

/* ---------------------------------------------------------------- cases */
static proust_session_t *S;

static void test_any_source(void)
{
    phase_a(S);
    tu_barrier(S);
    if (tu_rank == 0)
        printf("wildcard A: %d x %d any-source messages, sources, tags and order right\n",
               tu_size - 1, M);
}

static void test_tag_masks_unexpected(void)
{
    phase_b(S, 0);
    if (tu_rank == 0)
        printf("wildcard B: tag masks match on the masked bits only (unexpected)\n");
}

static void test_tag_masks_posted(void)
{
    phase_b(S, 1);
    if (tu_rank == 0)
        printf("wildcard B: tag masks match on the masked bits only (posted first)\n");
}

static void test_posting_order(void)
{
    phase_c(S);
    if (tu_rank == 0)
        printf("wildcard C: the earliest posted receive wins\n");
}

static const struct tu_case cases[] = {
    {"any_source", test_any_source,
     "ANY_SOURCE/any-tag receives: true source and tag, per-sender order, once each"},
    {"tag_masks_unexpected", test_tag_masks_unexpected,
     "masked receives of messages already there match on the masked bits only"},
    {"tag_masks_posted", test_tag_masks_posted,
     "masked receives posted first match on the masked bits only"},
    {"posting_order", test_posting_order,
     "ANY_SOURCE or a named source: the earliest posted matching receive wins"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size >= 2, "run with 2 or more processes, got %d", tu_size);
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("wildcard %s: ok\n", c->name);
    return 0;
}
