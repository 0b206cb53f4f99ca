/*
 * rma — one-sided access (proust_mem_*, proust_rma_*), one case a run:
 *   data:   every rank registers a guarded area and gives its key to the
 *           others; it writes into its right neighbour's area and reads
 *           from its left one's, 0 B - 16 MiB at odd offsets on both sides,
 *           then 64 writes and 64 reads in flight at once. A completed
 *           write is visible at the target: the writer tells it by a
 *           message and the target checks its memory at once (no barrier).
 *           Every byte checked, nothing written outside the range.
 *   errors: keys that are garbage, cut short or do not hold the range, bad
 *           ranks and arguments: each an error code, nothing moved.
 *   none:   a session whose rails cannot (shm, tcp): registration and
 *           transfers say PROUST_ERR_NOT_SUPPORTED.
 *   target_dies (2 processes): rank 1 registers its area, gives its key
 *           and kills itself 50 ms after rank 0 starts writing and reading
 *           16 MiB at a time into it; rank 0's transfers must fail with
 *           PROUST_ERR_PEER_FAILED (or CONN) within 5 s of the death, new
 *           ones at once, and rank 0 finalizes. It prints "survivor got
 *           <error> after X s" and "survivor exiting cleanly" (proustrun
 *           exits non-zero: a rank died).
 */
#include <signal.h>
#include <stdbool.h>
#include "test_cases.h"
#include "test_util.h"

#define AREA ((size_t)(16u << 20) + 256)
#define TAG_KEY 0x100
#define TAG_SEEN 0x200

static const size_t sizes[] = {0, 1, 7, 64, 4095, 65536 + 13, (1u << 20) + 5, 16u << 20};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static proust_session_t *s;
static uint8_t keys[64][PROUST_MEM_KEY_MAX]; /* every rank's key */
static size_t key_lens[64];

static void wait_ok(proust_request_t *req, const char *what)
{
    proust_status_t st;
    CHECK(proust_wait(&req, &st));
    EXPECT(st.error == PROUST_OK, "%s: status %s", what, proust_error_name(st.error));
}

/* Register `area` and swap keys with every rank. */
static proust_mem_t *share(struct tu_buf *area)
{
    proust_mem_t *mem;
    CHECK(proust_mem_register(s, area->p, area->len, &mem));
    uint8_t mine[PROUST_MEM_KEY_MAX];
    size_t len;
    CHECK(proust_mem_key(mem, mine, sizeof mine, &len));
    EXPECT(len > 0 && len <= PROUST_MEM_KEY_MAX, "key of %zu bytes", len);
    for (int r = 0; r < tu_size; r++) {
        proust_request_t *rq;
        CHECK(proust_isend(s, mine, len, r, TAG_KEY, &rq));
        proust_status_t st;
        CHECK(proust_recv(s, keys[r], PROUST_MEM_KEY_MAX, r, TAG_KEY, PROUST_TAG_MASK_FULL, &st));
        key_lens[r] = st.size;
        CHECK(proust_wait(&rq, NULL));
    }
    return mem;
}

static size_t off(int k) { return (size_t)(k * 13 % 61) + 1; }

static void data(void)
{
    EXPECT(tu_size <= 64, "at most 64 ranks");
    int right = (tu_rank + 1) % tu_size, left = (tu_rank + tu_size - 1) % tu_size;
    struct tu_buf area = tu_buf_alloc(AREA, 3);
    memset(area.p, 0, area.len);
    proust_mem_t *mem = share(&area);
    for (int r = 0; r < tu_size; r++) /* (a process reaches itself by its self rail: not so) */
        EXPECT(r == tu_rank ? proust_rma_reaches(s, r) == 0
                            : proust_rma_reaches(s, r) == PROUST_RMA_BY_NIC ||
                                  proust_rma_reaches(s, r) == PROUST_RMA_BY_POLLING,
               "rank %d: reachable one-sided %d", r, proust_rma_reaches(s, r));
    struct tu_buf src = tu_buf_alloc(AREA, 7);

    TU_PHASE("writes");
    for (int k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], at = off(k);
        tu_fill(src.p + at, n, (uint64_t)tu_rank * 1000 + (uint64_t)k);
        proust_request_t *rq;
        CHECK(proust_rma_write(s, right, src.p + at, n, keys[right], key_lens[right], at, &rq));
        wait_ok(rq, tu_fmt("write of %zu bytes", n));
        /* done means there: the target looks as soon as it hears */
        CHECK(proust_send(s, &k, sizeof k, right, TAG_SEEN));
        int got;
        CHECK(proust_recv(s, &got, sizeof got, left, TAG_SEEN, PROUST_TAG_MASK_FULL, NULL));
        EXPECT(got == k, "notice %d, expected %d", got, k);
        EXPECT_PATTERN(area.p + at, n, (uint64_t)left * 1000 + (uint64_t)k,
                       "%zu bytes written by rank %d", n, left);
        if (at > 0)
            EXPECT(area.p[at - 1] == 0 || k > 0, "byte before the write changed");
        EXPECT_GUARDS(area, "area after a write of %zu bytes", n);
        tu_barrier(s);
    }

    TU_PHASE("reads");
    for (int k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], at = off(k + 5);
        tu_fill(area.p + at, n, (uint64_t)tu_rank * 7000 + (uint64_t)k);
        tu_barrier(s);
        struct tu_buf dst = tu_buf_alloc(n, (size_t)k % 8);
        proust_request_t *rq;
        CHECK(proust_rma_read(s, left, dst.p, n, keys[left], key_lens[left], at, &rq));
        wait_ok(rq, tu_fmt("read of %zu bytes", n));
        EXPECT_PATTERN(dst.p, n, (uint64_t)left * 7000 + (uint64_t)k,
                       "%zu bytes read from rank %d", n, left);
        EXPECT_GUARDS(dst, "read of %zu bytes", n);
        tu_buf_free(&dst);
        tu_barrier(s);
    }

    TU_PHASE("in flight");
    enum { MANY = 64, PIECE = 4096 + 3 };
    proust_request_t *rqs[2 * MANY];
    tu_fill(src.p, (size_t)MANY * PIECE, (uint64_t)tu_rank + 99);
    tu_fill(area.p + (size_t)MANY * PIECE, (size_t)MANY * PIECE, (uint64_t)tu_rank + 77);
    tu_barrier(s);
    struct tu_buf dst = tu_buf_alloc((size_t)MANY * PIECE, 5);
    for (int i = 0; i < MANY; i++) {
        size_t at = (size_t)i * PIECE;
        CHECK(proust_rma_write(s, right, src.p + at, PIECE, keys[right], key_lens[right], at,
                               &rqs[i]));
        CHECK(proust_rma_read(s, left, dst.p + at, PIECE, keys[left], key_lens[left],
                              (size_t)MANY * PIECE + at, &rqs[MANY + i]));
    }
    for (int i = 0; i < 2 * MANY; i++)
        wait_ok(rqs[i], "a transfer in flight");
    EXPECT_PATTERN(dst.p, (size_t)MANY * PIECE, (uint64_t)left + 77, "reads in flight");
    tu_barrier(s);
    EXPECT_PATTERN(area.p, (size_t)MANY * PIECE, (uint64_t)left + 99, "writes in flight");
    EXPECT_GUARDS(area, "area after writes in flight");
    tu_buf_free(&dst);
    tu_barrier(s); /* nobody reaches the area once it is released */
    CHECK(proust_mem_release(mem));
    tu_buf_free(&src);
    tu_buf_free(&area);
    printf("rank %d: rma data ok\n", tu_rank);
}

static void errors(void)
{
    int peer = (tu_rank + 1) % tu_size;
    struct tu_buf area = tu_buf_alloc(4096, 1);
    memset(area.p, 0x11, area.len);
    CHECK_RC(proust_mem_register(s, NULL, 10, &(proust_mem_t *){NULL}), PROUST_ERR_INVALID);
    CHECK_RC(proust_mem_register(s, area.p, 0, &(proust_mem_t *){NULL}), PROUST_ERR_INVALID);
    proust_mem_t *mem = share(&area);
    uint8_t small[4];
    size_t len;
    CHECK_RC(proust_mem_key(mem, small, sizeof small, &len), PROUST_ERR_TRUNCATE);
    uint8_t buf[64] = {0};
    proust_request_t *rq = NULL;
    const uint8_t *key = keys[peer];
    size_t klen = key_lens[peer];
    /* past the end, and a length that wraps */
    CHECK_RC(proust_rma_write(s, peer, buf, 2, key, klen, 4095, &rq), PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_read(s, peer, buf, SIZE_MAX, key, klen, 1, &rq), PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_read(s, peer, buf, 1, key, klen, UINT64_MAX, &rq), PROUST_ERR_INVALID);
    /* cut short, too long, garbage */
    CHECK_RC(proust_rma_write(s, peer, buf, 1, key, klen - 1, 0, &rq), PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_write(s, peer, buf, 1, key, PROUST_MEM_KEY_MAX + 1, 0, &rq),
             PROUST_ERR_INVALID);
    uint8_t junk[PROUST_MEM_KEY_MAX];
    for (int t = 0; t < 200; t++) {
        tu_fill(junk, sizeof junk, (uint64_t)t);
        size_t jl = (size_t)t % (sizeof junk + 1);
        int rc = proust_rma_write(s, peer, buf, 1, junk, jl, 0, &rq);
        EXPECT(rc == PROUST_ERR_INVALID, "garbage key %d: %s", t, proust_error_name(rc));
    }
    /* arguments */
    CHECK_RC(proust_rma_write(s, tu_size, buf, 1, key, klen, 0, &rq), PROUST_ERR_RANK);
    CHECK_RC(proust_rma_write(s, -1, buf, 1, key, klen, 0, &rq), PROUST_ERR_RANK);
    CHECK_RC(proust_rma_write(s, peer, buf, 1, key, klen, 0, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_read(s, peer, NULL, 1, key, klen, 0, &rq), PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_reaches(s, tu_size), PROUST_ERR_RANK);
    /* the last byte is in range, and nothing else moved */
    buf[0] = 0x22;
    CHECK(proust_rma_write(s, peer, buf, 1, key, klen, 4095, &rq));
    wait_ok(rq, "write of the last byte");
    tu_barrier(s);
    for (size_t i = 0; i < 4095; i++)
        EXPECT(area.p[i] == 0x11, "byte %zu changed to 0x%02x", i, area.p[i]);
    EXPECT(area.p[4095] == 0x22, "last byte 0x%02x", area.p[4095]);
    EXPECT_GUARDS(area, "errors");
    tu_barrier(s);
    CHECK(proust_mem_release(mem));
    tu_buf_free(&area);
    printf("rank %d: rma errors ok\n", tu_rank);
}

static void none(void)
{
    uint8_t buf[16], key[16] = {0};
    proust_mem_t *mem = NULL;
    CHECK_RC(proust_mem_register(s, buf, sizeof buf, &mem), PROUST_ERR_NOT_SUPPORTED);
    proust_request_t *rq;
    for (int r = 0; r < tu_size; r++) {
        EXPECT(proust_rma_reaches(s, r) == 0, "rank %d reachable one-sided", r);
        CHECK_RC(proust_rma_write(s, r, buf, 1, key, sizeof key, 0, &rq),
                 PROUST_ERR_NOT_SUPPORTED);
    }
    printf("rank %d: rma none ok\n", tu_rank);
}

static bool is_failure(int rc)
{
    return rc == PROUST_ERR_PEER_FAILED || rc == PROUST_ERR_CONN;
}

static void target_dies(void)
{
    EXPECT(tu_size == 2, "run with 2 processes, got %d", tu_size);
    struct tu_buf area = tu_buf_alloc(AREA, 0);
    proust_mem_t *mem = share(&area);
    char go = 1;
    if (tu_rank == 1) {
        CHECK(proust_recv(s, &go, 1, 0, TAG_SEEN, PROUST_TAG_MASK_FULL, NULL));
        tu_sleep_ms(50);
        raise(SIGKILL);
    }
    uint8_t *buf = malloc(AREA);
    EXPECT(buf, "out of memory");
    memset(buf, 0x5c, AREA);
    CHECK(proust_send(s, &go, 1, 1, TAG_SEEN));
    double t0 = tu_now(), failed_at = 0;
    int rc = PROUST_OK;
    TU_PHASE("transfers until the target's death shows");
    for (int i = 0; rc == PROUST_OK; i++) {
        proust_request_t *rq;
        size_t n = 16u << 20;
        rc = i % 2 ? proust_rma_read(s, 1, buf, n, keys[1], key_lens[1], 0, &rq)
                   : proust_rma_write(s, 1, buf, n, keys[1], key_lens[1], 0, &rq);
        if (rc == PROUST_OK) { /* (wait returns the request's error) */
            proust_status_t st;
            rc = proust_wait(&rq, &st);
            EXPECT(rc == st.error, "wait said %s, the status %s", proust_error_name(rc),
                   proust_error_name(st.error));
        }
        EXPECT(rc == PROUST_OK || is_failure(rc), "transfer %d: %s", i, proust_error_name(rc));
        EXPECT(tu_now() - t0 < 60, "no failure after 60 s");
    }
    failed_at = tu_now() - t0;
    EXPECT(failed_at < 5 + 0.05 + 1, "the failure took %.2f s", failed_at);
    printf("survivor got %s after %.2f s\n", proust_error_name(rc), failed_at);
    proust_request_t *rq = NULL;
    rc = proust_rma_write(s, 1, buf, 1, keys[1], key_lens[1], 0, &rq);
    EXPECT(is_failure(rc), "a new transfer to the dead rank: %s", proust_error_name(rc));
    free(buf);
    CHECK(proust_mem_release(mem));
    tu_buf_free(&area);
    proust_finalize(s);
    printf("survivor exiting cleanly\n");
    exit(0);
}

static const struct tu_case cases[] = {
    {"data", data, "writes and reads 0 B - 16 MiB at odd offsets, 128 in flight, visible once done"},
    {"errors", errors, "garbage, short and out-of-range keys, bad ranks: error codes, nothing moved"},
    {"none", none, "rails without one-sided access: PROUST_ERR_NOT_SUPPORTED"},
    {"target_dies", target_dies, "the target dies amid 16 MiB transfers: they fail within 5 s"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    s = tu_init(120);
    TU_PHASE(c->name);
    c->run();
    tu_barrier(s);
    tu_finalize(s);
    return 0;
}
