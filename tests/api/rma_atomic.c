/*
 * rma_atomic — atomics on a peer's registered memory (proust_rma_atomic),
 * one case a run:
 *   count:  every rank, rank 0 itself included, adds 1 to rank 0's 64-bit
 *           counter 300 times with a fetching add, two in flight: the
 *           values fetched, gathered at rank 0, must be exactly 0 .. N*300-1
 *           (each update saw every earlier one: atomic), and the counter
 *           N*300. Meanwhile each also adds (rank + 1) to a second counter
 *           without fetching, and increments a 32-bit word of the last rank
 *           by compare-and-swap loops: both sums exact.
 *   ops:    each rank applies every operation the rail offers, on every
 *           type, to 9 elements of its right neighbour (3000 elements for
 *           the 32-bit sum: in pieces where the rail takes fewer), fetching
 *           where it can; the old values and the new ones are checked
 *           against the same operation done here.
 *   errors: misaligned and out-of-range offsets, missing buffers, bad
 *           operations, types and ranks: each an error code, nothing done.
 *   none:   rails without atomics (shm, tcp): atomic_max says 0 and
 *           proust_rma_atomic PROUST_ERR_NOT_SUPPORTED.
 */
#include <stdbool.h>
#include "test_cases.h"
#include "test_util.h"

#define TAG_KEY 0x100
#define TAG_FETCHED 0x300
#define ROUNDS 300
#define AREA 65536

static proust_session_t *s;
static uint8_t keys[64][PROUST_MEM_KEY_MAX];
static size_t key_lens[64];

static void wait_ok(proust_request_t *req, const char *what)
{
    proust_status_t st;
    CHECK(proust_wait(&req, &st));
    EXPECT(st.error == PROUST_OK, "%s: status %s", what, proust_error_name(st.error));
}

static proust_mem_t *share(void *area, size_t len)
{
    proust_mem_t *mem;
    CHECK(proust_mem_register(s, area, len, &mem));
    uint8_t mine[PROUST_MEM_KEY_MAX];
    size_t kl;
    CHECK(proust_mem_key(mem, mine, sizeof mine, &kl));
    for (int r = 0; r < tu_size; r++) {
        proust_request_t *rq;
        CHECK(proust_isend(s, mine, kl, r, TAG_KEY, &rq));
        proust_status_t st;
        CHECK(proust_recv(s, keys[r], PROUST_MEM_KEY_MAX, r, TAG_KEY, PROUST_TAG_MASK_FULL, &st));
        key_lens[r] = st.size;
        CHECK(proust_wait(&rq, NULL));
    }
    return mem;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Area layout: [0] fetched counter, [8] plain counter, [16] CAS word. */
static void count(void)
{
    EXPECT(tu_size <= 64, "at most 64 ranks");
    uint64_t *area = aligned_alloc(64, AREA);
    memset(area, 0, AREA);
    proust_mem_t *mem = share(area, AREA);
    for (int r = 0; r < tu_size; r++)
        EXPECT(proust_rma_atomic_max(s, r, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, 1) > 0,
               "no fetching 64-bit sum to rank %d (itself included)", r);
    tu_barrier(s);
    int last = tu_size - 1;
    uint64_t one = 1, mine = (uint64_t)tu_rank + 1;
    uint64_t *fetched = calloc(ROUNDS, sizeof *fetched);
    TU_PHASE("fetching adds, plain adds, compare-and-swap loops");
    for (int i = 0; i < ROUNDS; i += 2) {
        proust_request_t *rq[3];
        CHECK(proust_rma_atomic(s, 0, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, &one, NULL,
                                &fetched[i], 1, keys[0], key_lens[0], 0, &rq[0]));
        CHECK(proust_rma_atomic(s, 0, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, &one, NULL,
                                &fetched[i + 1], 1, keys[0], key_lens[0], 0, &rq[1]));
        CHECK(proust_rma_atomic(s, 0, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, &mine, NULL,
                                NULL, 1, keys[0], key_lens[0], 8, &rq[2]));
        for (int k = 0; k < 3; k++)
            wait_ok(rq[k], "an add");
        /* one increment of the last rank's word by compare-and-swap */
        uint32_t seen = 0, want, old;
        proust_request_t *r;
        CHECK(proust_rma_atomic(s, last, PROUST_ATOMIC_READ, PROUST_ATOMIC_UINT32, NULL, NULL,
                                &seen, 1, keys[last], key_lens[last], 16, &r));
        wait_ok(r, "a read");
        for (int tries = 0;; tries++) {
            EXPECT(tries < 100000, "compare-and-swap never won");
            want = seen + 1;
            CHECK(proust_rma_atomic(s, last, PROUST_ATOMIC_CSWAP, PROUST_ATOMIC_UINT32, &want,
                                    &seen, &old, 1, keys[last], key_lens[last], 16, &r));
            wait_ok(r, "a compare-and-swap");
            if (old == seen)
                break;
            seen = old;
        }
    }
    tu_barrier(s);
    uint64_t total = (uint64_t)tu_size * ROUNDS;
    if (tu_rank == 0) {
        uint64_t *all = malloc(total * sizeof *all);
        memcpy(all, fetched, ROUNDS * sizeof *all);
        for (int r = 1; r < tu_size; r++)
            CHECK(proust_recv(s, all + (size_t)r * ROUNDS, ROUNDS * sizeof *all, r, TAG_FETCHED,
                              PROUST_TAG_MASK_FULL, NULL));
        qsort(all, total, sizeof *all, cmp_u64);
        for (uint64_t i = 0; i < total; i++)
            EXPECT(all[i] == i, "fetched values: %" PRIu64 " where %" PRIu64 " was due", all[i],
                   i);
        EXPECT(area[0] == total, "counter %" PRIu64 ", expected %" PRIu64, area[0], total);
        uint64_t sum = (uint64_t)tu_size * (uint64_t)(tu_size + 1) / 2 * (ROUNDS / 2);
        EXPECT(area[1] == sum, "plain adds: %" PRIu64 ", expected %" PRIu64, area[1], sum);
        free(all);
    } else {
        CHECK(proust_send(s, fetched, ROUNDS * sizeof *fetched, 0, TAG_FETCHED));
    }
    if (tu_rank == last) {
        uint32_t w;
        memcpy(&w, (char *)area + 16, 4);
        EXPECT(w == (uint32_t)(tu_size * (ROUNDS / 2)), "CAS word %u, expected %d", w,
               tu_size * (ROUNDS / 2));
    }
    proust_rma_counts_t c;
    proust_rma_counts(&c);
    EXPECT(c.atomics >= (uint64_t)ROUNDS / 2 * 5, "atomics counted: %" PRIu64, c.atomics);
    tu_barrier(s);
    CHECK(proust_mem_release(mem));
    free(fetched);
    free(area);
    printf("rank %d: atomic counts ok\n", tu_rank);
}

/* ---- every operation on every type, checked against the same done here ---- */

static const size_t type_size[PROUST_ATOMIC_TYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
static const char *const op_names[PROUST_ATOMIC_OPS] = {
    "SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR", "WRITE", "READ",
    "CSWAP"};

/* Element i as a double (floats) or its integer bits (widened). */
static double get_f(int t, const void *p, size_t i)
{
    return t == PROUST_ATOMIC_FLOAT ? ((const float *)p)[i] : ((const double *)p)[i];
}

static int64_t get_i(int t, const void *p, size_t i)
{
    switch (t) {
    case PROUST_ATOMIC_INT8: return ((const int8_t *)p)[i];
    case PROUST_ATOMIC_UINT8: return ((const uint8_t *)p)[i];
    case PROUST_ATOMIC_INT16: return ((const int16_t *)p)[i];
    case PROUST_ATOMIC_UINT16: return ((const uint16_t *)p)[i];
    case PROUST_ATOMIC_INT32: return ((const int32_t *)p)[i];
    case PROUST_ATOMIC_UINT32: return ((const uint32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}

static bool is_float(int t)
{
    return t == PROUST_ATOMIC_FLOAT || t == PROUST_ATOMIC_DOUBLE;
}

static bool is_signed(int t)
{
    return t == PROUST_ATOMIC_INT8 || t == PROUST_ATOMIC_INT16 || t == PROUST_ATOMIC_INT32 ||
           t == PROUST_ATOMIC_INT64;
}

static void put_i(int t, void *p, size_t i, int64_t v)
{
    switch (t) {
    case PROUST_ATOMIC_INT8: case PROUST_ATOMIC_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case PROUST_ATOMIC_INT16: case PROUST_ATOMIC_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case PROUST_ATOMIC_INT32: case PROUST_ATOMIC_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = (uint64_t)v; break;
    }
}

static void put_f(int t, void *p, size_t i, double v)
{
    if (t == PROUST_ATOMIC_FLOAT)
        ((float *)p)[i] = (float)v;
    else
        ((double *)p)[i] = v;
}

/* Values that exercise signs, zeros and bits (small: products stay exact). */
static void fill(int t, void *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = (int64_t)((i * 7 + (size_t)seed * 3) % 11) - 4; /* -4 .. 6 */
        if (is_float(t))
            put_f(t, p, i, (double)v * 0.5);
        else
            put_i(t, p, i, is_signed(t) ? v : v + 4);
    }
}

/* new = op(old, operand) as the NIC must compute it. */
static void expect(int op, int t, const void *old, const void *opd, const void *cmp, void *out,
                   size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (is_float(t)) {
            double a = get_f(t, old, i), b = opd ? get_f(t, opd, i) : 0, r = a;
            switch (op) {
            case PROUST_ATOMIC_SUM: r = a + b; break;
            case PROUST_ATOMIC_PROD: r = a * b; break;
            case PROUST_ATOMIC_MIN: r = a < b ? a : b; break;
            case PROUST_ATOMIC_MAX: r = a > b ? a : b; break;
            case PROUST_ATOMIC_LAND: r = a != 0 && b != 0; break;
            case PROUST_ATOMIC_LOR: r = a != 0 || b != 0; break;
            case PROUST_ATOMIC_LXOR: r = (a != 0) != (b != 0); break;
            case PROUST_ATOMIC_WRITE: r = b; break;
            case PROUST_ATOMIC_CSWAP: r = a == get_f(t, cmp, i) ? b : a; break;
            default: break;
            }
            put_f(t, out, i, r);
            continue;
        }
        int64_t a = get_i(t, old, i), b = opd ? get_i(t, opd, i) : 0, r = a;
        switch (op) {
        case PROUST_ATOMIC_SUM: r = a + b; break;
        case PROUST_ATOMIC_PROD: r = a * b; break;
        case PROUST_ATOMIC_MIN: r = a < b ? a : b; break;
        case PROUST_ATOMIC_MAX: r = a > b ? a : b; break;
        case PROUST_ATOMIC_BAND: r = a & b; break;
        case PROUST_ATOMIC_BOR: r = a | b; break;
        case PROUST_ATOMIC_BXOR: r = a ^ b; break;
        case PROUST_ATOMIC_LAND: r = a && b; break;
        case PROUST_ATOMIC_LOR: r = a || b; break;
        case PROUST_ATOMIC_LXOR: r = !a != !b; break;
        case PROUST_ATOMIC_WRITE: r = b; break;
        case PROUST_ATOMIC_CSWAP: r = a == get_i(t, cmp, i) ? b : a; break;
        default: break;
        }
        put_i(t, out, i, r);
    }
}

#define NEL 9
#define BIG 3000

static void ops(void)
{
    int right = (tu_rank + 1) % tu_size, left = (tu_rank + tu_size - 1) % tu_size;
    uint8_t *area = aligned_alloc(64, AREA);
    memset(area, 0, AREA);
    proust_mem_t *mem = share(area, AREA);
    int done = 0;
    for (int op = 0; op < PROUST_ATOMIC_OPS; op++)
        for (int t = 0; t < PROUST_ATOMIC_TYPES; t++)
            for (int fetching = 0; fetching < 2; fetching++) {
                /* the same on every rank: the same provider */
                int max = proust_rma_atomic_max(s, right, op, t, fetching);
                EXPECT(max >= 0, "atomic_max: %s", proust_error_name(max));
                if (!max || (fetching == 0 && (op == PROUST_ATOMIC_READ ||
                                               op == PROUST_ATOMIC_CSWAP)))
                    continue;
                bool big = op == PROUST_ATOMIC_SUM && t == PROUST_ATOMIC_UINT32;
                size_t n = big ? BIG : NEL, bytes = n * type_size[t];
                size_t at = 64 + (size_t)((op * 3 + t) % 5) * 8; /* aligned, varied */
                uint8_t opd[BIG * 8], cmp[BIG * 8], res[BIG * 8], want_new[BIG * 8];
                uint8_t before[BIG * 8];
                fill(t, area + at, n, op + t); /* my area: my left neighbour's target */
                memcpy(before, area + at, bytes);
                fill(t, opd, n, op * 5 + t + 1);
                fill(t, cmp, n, op + t); /* equal to the target's: swaps */
                for (size_t i = 1; i < n; i += 3) /* ... but not everywhere */
                    cmp[i * type_size[t]] ^= 1;
                memset(res, 0xee, bytes);
                tu_barrier(s);
                bool fetch = fetching || op == PROUST_ATOMIC_READ || op == PROUST_ATOMIC_CSWAP;
                proust_request_t *rq;
                CHECK(proust_rma_atomic(s, right, op, t,
                                        op == PROUST_ATOMIC_READ ? NULL : opd,
                                        op == PROUST_ATOMIC_CSWAP ? cmp : NULL,
                                        fetch ? res : NULL, n, keys[right], key_lens[right], at,
                                        &rq));
                wait_ok(rq, tu_fmt("%s on type %d", op_names[op], t));
                /* what the right neighbour held: the same fill as mine */
                uint8_t theirs[BIG * 8];
                fill(t, theirs, n, op + t);
                if (fetch)
                    EXPECT(memcmp(res, theirs, bytes) == 0, "%s type %d: old values fetched",
                           op_names[op], t);
                tu_barrier(s); /* my left neighbour's operation on my area is done */
                uint8_t lopd[BIG * 8], lcmp[BIG * 8];
                fill(t, lopd, n, op * 5 + t + 1);
                fill(t, lcmp, n, op + t);
                for (size_t i = 1; i < n; i += 3)
                    lcmp[i * type_size[t]] ^= 1;
                expect(op, t, before, op == PROUST_ATOMIC_READ ? NULL : lopd, lcmp, want_new, n);
                EXPECT(memcmp(area + at, want_new, bytes) == 0,
                       "%s on type %d (fetching %d) by rank %d: wrong values here",
                       op_names[op], t, fetching, left);
                EXPECT(area[at - 1] == 0 && area[at + bytes] == 0,
                       "%s on type %d wrote outside its elements", op_names[op], t);
                memset(area + at, 0, bytes);
                done++;
            }
    EXPECT(done >= 20, "only %d operation and type pairs offered", done);
    tu_barrier(s);
    CHECK(proust_mem_release(mem));
    free(area);
    printf("rank %d: %d atomic operations checked\n", tu_rank, done);
}

static void errors(void)
{
    int peer = (tu_rank + 1) % tu_size;
    uint64_t *area = aligned_alloc(64, 4096);
    memset(area, 0x11, 4096);
    proust_mem_t *mem = share(area, 4096);
    const uint8_t *key = keys[peer];
    size_t kl = key_lens[peer];
    uint64_t v = 5, r = 0;
    proust_request_t *rq = NULL;
    int S = PROUST_ATOMIC_SUM, U64 = PROUST_ATOMIC_UINT64;
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, &v, NULL, NULL, 1, key, kl, 3, &rq),
             PROUST_ERR_INVALID); /* misaligned */
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, &v, NULL, NULL, 1, key, kl, 4096, &rq),
             PROUST_ERR_INVALID); /* past the end */
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, &v, NULL, NULL, 2, key, kl, 4088, &rq),
             PROUST_ERR_INVALID); /* its second element past the end */
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, NULL, NULL, NULL, 1, key, kl, 0, &rq),
             PROUST_ERR_INVALID); /* no operand */
    CHECK_RC(proust_rma_atomic(s, peer, PROUST_ATOMIC_READ, U64, NULL, NULL, NULL, 1, key, kl, 0,
                               &rq),
             PROUST_ERR_INVALID); /* a read without a result */
    CHECK_RC(proust_rma_atomic(s, peer, PROUST_ATOMIC_CSWAP, U64, &v, NULL, &r, 1, key, kl, 0,
                               &rq),
             PROUST_ERR_INVALID); /* no compare */
    CHECK_RC(proust_rma_atomic(s, peer, PROUST_ATOMIC_OPS, U64, &v, NULL, NULL, 1, key, kl, 0,
                               &rq),
             PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_atomic(s, peer, S, -1, &v, NULL, NULL, 1, key, kl, 0, &rq),
             PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_atomic(s, tu_size, S, U64, &v, NULL, NULL, 1, key, kl, 0, &rq),
             PROUST_ERR_RANK);
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, &v, NULL, NULL, 1, key, kl - 1, 0, &rq),
             PROUST_ERR_INVALID); /* a key cut short */
    CHECK_RC(proust_rma_atomic(s, peer, S, U64, &v, NULL, NULL, 1, key, kl, 0, NULL),
             PROUST_ERR_INVALID);
    CHECK_RC(proust_rma_atomic_max(s, tu_size, S, U64, 0), PROUST_ERR_RANK);
    CHECK_RC(proust_rma_atomic_max(s, peer, S, PROUST_ATOMIC_TYPES, 0), PROUST_ERR_INVALID);
    /* the last element is in range */
    CHECK(proust_rma_atomic(s, peer, S, U64, &v, NULL, &r, 1, key, kl, 4088, &rq));
    wait_ok(rq, "an add to the last element");
    EXPECT(r == 0x1111111111111111ull, "fetched %#" PRIx64, r);
    tu_barrier(s);
    for (int i = 0; i < 511; i++)
        EXPECT(area[i] == 0x1111111111111111ull, "element %d changed", i);
    EXPECT(area[511] == 0x1111111111111111ull + 5, "last element %#" PRIx64, area[511]);
    tu_barrier(s);
    CHECK(proust_mem_release(mem));
    free(area);
    printf("rank %d: atomic errors ok\n", tu_rank);
}

static void none(void)
{
    uint8_t key[16] = {0};
    uint64_t v = 1;
    proust_request_t *rq;
    for (int r = 0; r < tu_size; r++) {
        EXPECT(proust_rma_atomic_max(s, r, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, 0) == 0,
               "rank %d: atomics offered", r);
        CHECK_RC(proust_rma_atomic(s, r, PROUST_ATOMIC_SUM, PROUST_ATOMIC_UINT64, &v, NULL, NULL,
                                   1, key, sizeof key, 0, &rq),
                 PROUST_ERR_NOT_SUPPORTED);
    }
    printf("rank %d: atomic none ok\n", tu_rank);
}

static const struct tu_case cases[] = {
    {"count", count, "fetching adds, plain adds and CAS loops from every rank: exact, each seen once"},
    {"ops", ops, "every operation on every type the rail offers, old and new values checked"},
    {"errors", errors, "misaligned, out of range, missing buffers, bad arguments: error codes"},
    {"none", none, "rails without atomics: atomic_max 0, PROUST_ERR_NOT_SUPPORTED"},
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
