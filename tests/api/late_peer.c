/*
 * late_peer — peers first contacted late in the run (shm rings made on
 * first use, drivers/shm.c), with data checked byte for byte (2-16
 * processes).
 *
 *  1. neighbours: each rank sends 1 KiB to the next and receives from the
 *     previous: only those rings exist afterwards;
 *  2. asleep: rank 0 blocks receiving from the last rank, which it never
 *     heard from (2 ranks: its neighbour) and which sends only 200 ms
 *     later: the ring announced to a sleeping process must wake it;
 *  3. everyone: every rank sends to every other one at once, sizes 0 B to
 *     1 MiB + 3 by pair, odd offsets, and 16 MiB from rank 1 to rank 0;
 *  4. again: the same with other sizes, over the rings made in 3.
 */
#include "test_util.h"

#define BIG ((size_t)16 << 20)

static size_t pair_size(int from, int to, int round)
{
    static const size_t sizes[] = {0, 1, 63, 4095, 65537, (1u << 20) + 3};
    if (from == 1 && to == 0 && round == 0)
        return BIG;
    return sizes[(size_t)(from * 7 + to * 3 + round) % (sizeof sizes / sizeof sizes[0])];
}

static uint64_t seed_of(int from, int to, int round)
{
    return ((uint64_t)round << 40) | ((uint64_t)from << 20) | (uint64_t)to;
}

static void everyone(proust_session_t *s, int round)
{
    int n = tu_size, me = tu_rank;
    proust_request_t **reqs = calloc((size_t)(2 * n), sizeof *reqs);
    struct tu_buf *in = calloc((size_t)n, sizeof *in), *out = calloc((size_t)n, sizeof *out);
    EXPECT(reqs && in && out, "out of memory");
    int k = 0;
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        size_t rlen = pair_size(p, me, round), slen = pair_size(me, p, round);
        in[p] = tu_buf_alloc(rlen, (size_t)(p % 7));
        out[p] = tu_buf_alloc(slen, (size_t)((p + 3) % 7));
        tu_fill(out[p].p, slen, seed_of(me, p, round));
        CHECK(proust_irecv(s, in[p].p, rlen, p, (proust_tag_t)(100 + round), PROUST_TAG_MASK_FULL,
                           &reqs[k++]));
    }
    for (int p = 0; p < n; p++)
        if (p != me)
            CHECK(proust_isend(s, out[p].p, pair_size(me, p, round), p,
                               (proust_tag_t)(100 + round), &reqs[k++]));
    proust_status_t *st = calloc((size_t)k, sizeof *st);
    EXPECT(st, "out of memory");
    CHECK(proust_waitall((size_t)k, reqs, st));
    for (int p = 0, i = 0; p < n; p++) {
        if (p == me)
            continue;
        size_t rlen = pair_size(p, me, round);
        EXPECT(st[i].count == rlen, "round %d: %zu bytes from rank %d, expected %zu", round,
               st[i].count, p, rlen);
        long bad = tu_first_diff(in[p].p, rlen, seed_of(p, me, round));
        EXPECT(bad < 0, "round %d: byte %ld from rank %d differs", round, bad, p);
        EXPECT_GUARDS(in[p], "round %d, from rank %d", round, p);
        i++;
    }
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        tu_buf_free(&in[p]);
        tu_buf_free(&out[p]);
    }
    free(st);
    free(reqs);
    free(in);
    free(out);
}

int main(void)
{
    proust_session_t *s = tu_init(240);
    int n = tu_size, me = tu_rank;
    EXPECT(n >= 2, "2 processes at least");
    TU_PHASE("neighbours");
    char a[4096], b[4096];
    tu_fill(a, 1024, (uint64_t)me);
    proust_request_t *r[2];
    CHECK(proust_irecv(s, b, 1024, (me + n - 1) % n, 1, PROUST_TAG_MASK_FULL, &r[0]));
    CHECK(proust_isend(s, a, 1024, (me + 1) % n, 1, &r[1]));
    CHECK(proust_waitall(2, r, NULL));
    EXPECT(tu_first_diff(b, 1024, (uint64_t)((me + n - 1) % n)) < 0,
           "message from the previous rank damaged");

    TU_PHASE("asleep");
    int last = n - 1;
    if (me == 0) {
        proust_status_t st;
        double t0 = tu_now();
        CHECK(proust_recv(s, b, sizeof b, last, 2, PROUST_TAG_MASK_FULL, &st));
        EXPECT(st.count == 4000 && tu_first_diff(b, 4000, 77) < 0, "late message damaged");
        EXPECT(tu_now() - t0 < 10, "the late message took %.1f s to wake rank 0",
               tu_now() - t0);
    } else if (me == last) {
        tu_sleep_ms(200);
        tu_fill(a, 4000, 77);
        CHECK(proust_send(s, a, 4000, 0, 2));
    }

    TU_PHASE("everyone");
    everyone(s, 0);
    TU_PHASE("again");
    everyone(s, 1);
    tu_finalize(s);
    return 0;
}
