/*
 * rma_acc.c — atomic operations (MPI-3.1 11.3.4, 11.7.1): MPI_Accumulate,
 * MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap and their
 * request-based forms.
 *
 * Every rank adds into rank 0 under MPI_Win_lock(MPI_LOCK_SHARED) many
 * times (MPI_INT, MPI_DOUBLE, MPI_LONG_LONG with values above 2^32): the
 * totals are exact. MPI_MAX / MPI_MIN and MPI_MAXLOC / MPI_MINLOC on
 * MPI_DOUBLE_INT (ties give the lower index) from every rank into every
 * rank in a fence epoch, and a sum through a vector target datatype.
 * MPI_REPLACE from all ranks onto one location (each element is one
 * origin's) and onto each rank's own slot (exact). MPI_Fetch_and_op as a
 * shared counter: the values fetched over all ranks are exactly
 * 0 .. size*N-1, and MPI_REPLACE as an atomic swap chain. MPI_Compare_and_swap
 * as a spin lock around a Get / increment / Put of a plain int: the final
 * value is exact. MPI_Get_accumulate with MPI_SUM (per element, the fetched
 * values are exactly the partial sums) and MPI_NO_OP as an atomic read of a
 * 64-bit value being incremented in both halves at once (never torn). A
 * fetch_and_op counter in memory attached to a dynamic window.
 * Ordering: from one origin to one location, REPLACE, SUM then a NO_OP read,
 * repeated without flushes, reads exactly the sequential result (default
 * accumulate_ordering rar,raw,war,waw), also through MPI_Raccumulate and
 * MPI_Rget_accumulate; a chain of Fetch_and_op without flush fetches 0,1,2...
 * --expect-nic (windows across hosts, or over PROUST_RAILS=self,ofi with
 * PROUST_RMA_NIC=on): the accumulates of integers and doubles must have
 * gone as the NIC's atomics (proust_rma_counts), not as messages.
 */
#include <stddef.h>
#include <string.h>

#include "proust.h"
#include "rma_util.h"

enum { NI = 8, ITER = 100, NFAO = 60, NCAS = 20, NGA = 15, NTEAR = 40, NORD = 30 };

struct dint {
    double v;
    int i;
};

/* Each rank's window. */
struct slots {
    int isum[NI];
    double dsum[NI];
    long long lsum[NI];
    int imax[NI], imin[NI];
    double dmax[NI];
    int rep_all[NI];
    int rep_own[64];
    struct dint maxloc, minloc;
    int vec[16];
    int counter;
    long long swap;
    int lockword, data;
    int gacc[3];
    long long tear;
    int ord[64];
    int ord_req[64];
    int fao_chain[64];
};
#define OFF(f) ((MPI_Aint)offsetof(struct slots, f))
#define OFFI(f, i) (OFF(f) + (MPI_Aint)(i) * (MPI_Aint)sizeof(((struct slots *)0)->f[0]))

static int rank, size;
static MPI_Win win;
static struct slots *me;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static int vmax(int r, int j) { return (r * 7 + j * 3) % 11 - 5; }

static void init_window(void)
{
    rma_local_begin(win, rank);
    memset(me, 0, sizeof *me);
    for (int j = 0; j < NI; j++) {
        me->imax[j] = -1000;
        me->imin[j] = 1000;
        me->dmax[j] = -1e300;
    }
    me->maxloc = (struct dint){-1e300, 1 << 30};
    me->minloc = (struct dint){1e300, 1 << 30};
    me->swap = -1;
    rma_local_end(win, rank);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Sums of three types from every rank into rank 0, a shared lock each time. */
static void test_sum_shared_lock(void)
{
    for (int it = 0; it < ITER; it++) {
        int iv[NI];
        double dv[NI];
        long long lv[NI];
        for (int j = 0; j < NI; j++) {
            iv[j] = rank + it + j;
            dv[j] = 0.5 * (rank + 1) + j;
            lv[j] = (1LL << 33) + (long long)rank * it + j;
        }
        MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MPI_CHECK(MPI_Accumulate(iv, NI, MPI_INT, 0, OFF(isum), NI, MPI_INT, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(dv, NI, MPI_DOUBLE, 0, OFF(dsum), NI, MPI_DOUBLE, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(lv, NI, MPI_LONG_LONG, 0, OFF(lsum), NI, MPI_LONG_LONG, MPI_SUM,
                                 win));
        MPI_CHECK(MPI_Win_unlock(0, win));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank != 0)
        return;
    rma_local_begin(win, 0);
    for (int j = 0; j < NI; j++) {
        long long wi = 0, wl = 0;
        double wd = 0;
        for (int r = 0; r < size; r++)
            for (int it = 0; it < ITER; it++) {
                wi += r + it + j;
                wd += 0.5 * (r + 1) + j;
                wl += (1LL << 33) + (long long)r * it + j;
            }
        CHECK(me->isum[j] == wi, "MPI_INT sum %d: %d, want %lld", j, me->isum[j], wi);
        CHECK(me->dsum[j] == wd, "MPI_DOUBLE sum %d: %.17g, want %.17g", j, me->dsum[j], wd);
        CHECK(me->lsum[j] == wl, "MPI_LONG_LONG sum %d: %lld, want %lld", j, me->lsum[j], wl);
    }
    rma_local_end(win, 0);
}

/* MAX, MIN, MAXLOC, MINLOC, a vector target type and REPLACE in fences. */
static void test_fence_ops(void)
{
    int mx[NI], vals[6];
    double dx[NI];
    for (int j = 0; j < NI; j++) {
        mx[j] = vmax(rank, j);
        dx[j] = vmax(rank, j) * 0.25;
    }
    for (int e = 0; e < 6; e++)
        vals[e] = (rank + 1) * (e + 1);
    struct dint ml = {rank % 2 ? 5.0 : 3.0, rank}, nl = {rank >= 1 ? -4.0 : 1.0, rank};
    int own = rank * 3 + 1;
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec)); /* ints 0 1, 4 5, 8 9 */
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < size; t++) {
        MPI_CHECK(MPI_Accumulate(mx, NI, MPI_INT, t, OFF(imax), NI, MPI_INT, MPI_MAX, win));
        MPI_CHECK(MPI_Accumulate(mx, NI, MPI_INT, t, OFF(imin), NI, MPI_INT, MPI_MIN, win));
        MPI_CHECK(MPI_Accumulate(dx, NI, MPI_DOUBLE, t, OFF(dmax), NI, MPI_DOUBLE, MPI_MAX, win));
        MPI_CHECK(MPI_Accumulate(&ml, 1, MPI_DOUBLE_INT, t, OFF(maxloc), 1, MPI_DOUBLE_INT,
                                 MPI_MAXLOC, win));
        MPI_CHECK(MPI_Accumulate(&nl, 1, MPI_DOUBLE_INT, t, OFF(minloc), 1, MPI_DOUBLE_INT,
                                 MPI_MINLOC, win));
        MPI_CHECK(MPI_Accumulate(vals, 6, MPI_INT, t, OFF(vec), 1, vec, MPI_SUM, win));
        MPI_CHECK(MPI_Accumulate(&own, 1, MPI_INT, t, OFFI(rep_own, rank % 64), 1, MPI_INT,
                                 MPI_REPLACE, win));
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MPI_CHECK(MPI_Type_free(&vec));
    for (int j = 0; j < NI; j++) {
        int wmax = -1000, wmin = 1000;
        for (int r = 0; r < size; r++) {
            wmax = vmax(r, j) > wmax ? vmax(r, j) : wmax;
            wmin = vmax(r, j) < wmin ? vmax(r, j) : wmin;
        }
        CHECK(me->imax[j] == wmax && me->imin[j] == wmin, "MPI_MAX/MPI_MIN %d: %d %d, want %d %d",
              j, me->imax[j], me->imin[j], wmax, wmin);
        CHECK(me->dmax[j] == wmax * 0.25, "MPI_MAX of doubles %d: %g, want %g", j, me->dmax[j],
              wmax * 0.25);
    }
    struct dint wml = size > 1 ? (struct dint){5.0, 1} : (struct dint){3.0, 0};
    struct dint wnl = size > 1 ? (struct dint){-4.0, 1} : (struct dint){1.0, 0};
    CHECK(me->maxloc.v == wml.v && me->maxloc.i == wml.i, "MPI_MAXLOC: (%g, %d), want (%g, %d)",
          me->maxloc.v, me->maxloc.i, wml.v, wml.i);
    CHECK(me->minloc.v == wnl.v && me->minloc.i == wnl.i, "MPI_MINLOC: (%g, %d), want (%g, %d)",
          me->minloc.v, me->minloc.i, wnl.v, wnl.i);
    int tri = size * (size + 1) / 2;
    for (int i = 0; i < 16; i++) {
        int e = i < 12 && i % 4 < 2 ? (i / 4) * 2 + i % 4 : -1;
        int want = e < 0 ? 0 : tri * (e + 1);
        CHECK(me->vec[i] == want, "sum through a vector target type: int %d is %d, want %d", i,
              me->vec[i], want);
    }
    for (int r = 0; r < size && r < 64; r++)
        CHECK(me->rep_own[r] == r * 3 + 1, "MPI_REPLACE of rank %d: %d", r, me->rep_own[r]);
}

/* REPLACE from everyone onto the same elements at rank 0: element-wise
 * atomic, so each element is one origin's value. */
static void test_replace_race(void)
{
    int v[NI];
    for (int j = 0; j < NI; j++)
        v[j] = rank + 1;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < 20; it++) {
        MPI_CHECK(MPI_Accumulate(v, NI, MPI_INT, 0, OFF(rep_all), NI, MPI_INT, MPI_REPLACE, win));
        MPI_CHECK(MPI_Win_flush(0, win));
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int got[NI];
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT, got, NI, MPI_INT, 0, OFF(rep_all), NI, MPI_INT,
                                 MPI_NO_OP, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    for (int j = 0; j < NI; j++)
        CHECK(got[j] >= 1 && got[j] <= size, "concurrent MPI_REPLACE left %d in element %d",
              got[j], j);
}

/* Fetch_and_op: a counter and a swap chain at rank 0. */
static void test_fetch_and_op(void)
{
    int one = 1, got[NFAO], final = -1;
    long long mine = ((long long)rank + 1) << 40, old = 0;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < NFAO; i++) {
        MPI_CHECK(MPI_Fetch_and_op(&one, &got[i], MPI_INT, 0, OFF(counter), MPI_SUM, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(i == 0 || got[i] > got[i - 1], "fetched %d after %d", got[i], got[i - 1]);
    }
    MPI_CHECK(MPI_Fetch_and_op(&mine, &old, MPI_LONG_LONG, 0, OFF(swap), MPI_REPLACE, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    long long last = 0;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_CHECK(MPI_Fetch_and_op(NULL, &final, MPI_INT, 0, OFF(counter), MPI_NO_OP, win));
    MPI_CHECK(MPI_Fetch_and_op(NULL, &last, MPI_LONG_LONG, 0, OFF(swap), MPI_NO_OP, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    CHECK(final == size * NFAO, "counter after %d increments: %d", size * NFAO, final);

    int *all = rank == 0 ? malloc(sizeof(int) * (size_t)size * NFAO) : NULL;
    long long *olds = rank == 0 ? malloc(sizeof(long long) * (size_t)(size + 1)) : NULL;
    MPI_CHECK(MPI_Gather(got, NFAO, MPI_INT, all, NFAO, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Gather(&old, 1, MPI_LONG_LONG, olds, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return;
    qsort(all, (size_t)size * NFAO, sizeof(int), cmp_int);
    for (int k = 0; k < size * NFAO; k++)
        CHECK(all[k] == k, "shared counter: fetched values sorted, #%d is %d (lost or repeated)", k,
              all[k]);
    /* Swaps: the fetched values and the final one are the initial -1 and
     * each rank's value, each exactly once. */
    olds[size] = last;
    qsort(olds, (size_t)size + 1, sizeof(long long), cmp_ll);
    CHECK(olds[0] == -1, "swap chain: the initial value -1 was never fetched (lowest %lld)",
          olds[0]);
    for (int r = 0; r < size; r++)
        CHECK(olds[r + 1] == ((long long)r + 1) << 40, "swap chain: value %d is %llx", r + 1,
              (unsigned long long)olds[r + 1]);
    free(all);
    free(olds);
}

/* A spin lock made of Compare_and_swap around a non-atomic increment. */
static void test_cas_lock(void)
{
    int id = rank + 1, zero = 0, got;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < NCAS; it++) {
        do {
            MPI_CHECK(MPI_Compare_and_swap(&id, &zero, &got, MPI_INT, 0, OFF(lockword), win));
            MPI_CHECK(MPI_Win_flush(0, win));
            CHECK(got != id, "compare_and_swap: the lock is mine already");
        } while (got != 0);
        int v = -1;
        MPI_CHECK(MPI_Get(&v, 1, MPI_INT, 0, OFF(data), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        v++;
        MPI_CHECK(MPI_Put(&v, 1, MPI_INT, 0, OFF(data), 1, MPI_INT, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        MPI_CHECK(MPI_Compare_and_swap(&zero, &id, &got, MPI_INT, 0, OFF(lockword), win));
        MPI_CHECK(MPI_Win_flush(0, win));
        CHECK(got == id, "releasing the spin lock: it held %d, not my %d", got, id);
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int v = -1;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_CHECK(MPI_Get(&v, 1, MPI_INT, 0, OFF(data), 1, MPI_INT, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    CHECK(v == size * NCAS, "increments under the CAS lock: %d, want %d", v, size * NCAS);
}

/* Get_accumulate: SUM with fetch (element j adds j + 1), NO_OP reads of a
 * 64-bit value incremented by 2^32 + 1 (both halves equal, always). */
static void test_get_accumulate(void)
{
    int add[3] = {1, 2, 3}, res[NGA][3];
    const long long step = (1LL << 32) + 1;
    MPI_CHECK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < NGA; i++) {
        MPI_CHECK(MPI_Get_accumulate(add, 3, MPI_INT, res[i], 3, MPI_INT, 0, OFF(gacc), 3, MPI_INT,
                                     MPI_SUM, win));
        MPI_CHECK(MPI_Win_flush(0, win));
    }
    long long seen = 0;
    for (int i = 0; i < NTEAR; i++) {
        long long r = -1;
        MPI_CHECK(MPI_Accumulate(&step, 1, MPI_LONG_LONG, 0, OFF(tear), 1, MPI_LONG_LONG, MPI_SUM,
                                 win));
        MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &r, 1, MPI_LONG_LONG, 0, OFF(tear), 1,
                                     MPI_LONG_LONG, MPI_NO_OP, win));
        MPI_CHECK(MPI_Win_flush(0, win));
        unsigned long long u = (unsigned long long)r;
        CHECK((u >> 32) == (u & 0xffffffffu), "atomic read of a 64-bit value: torn %llx", u);
        CHECK(r >= seen + step && (long long)(u >> 32) <= (long long)size * NTEAR,
              "atomic read after my own %d adds: %llx (saw %llx before)", i + 1, u,
              (unsigned long long)seen);
        seen = r;
    }
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    long long fin = 0;
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_LONG_LONG, &fin, 1, MPI_LONG_LONG, 0, OFF(tear), 1,
                                 MPI_LONG_LONG, MPI_NO_OP, win));
    MPI_CHECK(MPI_Win_unlock(0, win));
    CHECK(fin == (long long)size * NTEAR * step, "64-bit sum: %llx", (unsigned long long)fin);

    int *all = rank == 0 ? malloc(sizeof res * (size_t)size) : NULL;
    MPI_CHECK(MPI_Gather(res, NGA * 3, MPI_INT, all, NGA * 3, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank != 0)
        return;
    int n = size * NGA, *col = malloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < 3; j++) {
        for (int k = 0; k < n; k++)
            col[k] = all[k * 3 + j];
        qsort(col, (size_t)n, sizeof(int), cmp_int);
        for (int k = 0; k < n; k++)
            CHECK(col[k] == k * (j + 1), "get_accumulate element %d: fetched #%d is %d, want %d", j,
                  k, col[k], k * (j + 1));
    }
    free(col);
    free(all);
}

/* A counter in memory attached to a dynamic window at rank 0. */
static void test_dynamic_counter(void)
{
    MPI_Win dw;
    long long *cell = malloc(sizeof *cell), one = 1, prev = -1;
    CHECK(cell != NULL, "malloc");
    *cell = 0;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dw));
    MPI_CHECK(MPI_Win_attach(dw, cell, sizeof *cell));
    MPI_Aint at;
    MPI_CHECK(MPI_Get_address(cell, &at));
    MPI_CHECK(MPI_Bcast(&at, 1, MPI_AINT, 0, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_lock_all(0, dw));
    for (int i = 0; i < NGA; i++) {
        long long got = -1;
        MPI_CHECK(MPI_Fetch_and_op(&one, &got, MPI_LONG_LONG, 0, at, MPI_SUM, dw));
        MPI_CHECK(MPI_Win_flush(0, dw));
        CHECK(got > prev && got < (long long)size * NGA,
              "dynamic window counter: fetched %lld after %lld", got, prev);
        prev = got;
    }
    MPI_CHECK(MPI_Win_unlock_all(dw));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        rma_local_begin(dw, 0);
        CHECK(*cell == (long long)size * NGA, "dynamic window counter: %lld, want %d", *cell,
              size * NGA);
        rma_local_end(dw, 0);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_detach(dw, cell));
    MPI_CHECK(MPI_Win_free(&dw));
    free(cell);
}

/* One origin, one location, no flush in between: operations apply in order. */
static void test_ordering(void)
{
    int t = rma_right(rank, size), slot = rank % 64;
    int x[NORD], y[NORD], r1[NORD], r2[NORD], chain[NORD], one = 1;
    MPI_Request q[3 * NORD];
    for (int i = 0; i < NORD; i++) {
        x[i] = 1000 * (i + 1) + rank;
        y[i] = i + 7;
        r1[i] = r2[i] = -1;
    }
    MPI_CHECK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    for (int i = 0; i < NORD; i++) {
        MPI_CHECK(MPI_Accumulate(&x[i], 1, MPI_INT, t, OFFI(ord, slot), 1, MPI_INT, MPI_REPLACE,
                                 win));
        MPI_CHECK(MPI_Accumulate(&y[i], 1, MPI_INT, t, OFFI(ord, slot), 1, MPI_INT, MPI_SUM, win));
        MPI_CHECK(MPI_Get_accumulate(NULL, 0, MPI_INT, &r1[i], 1, MPI_INT, t, OFFI(ord, slot), 1,
                                     MPI_INT, MPI_NO_OP, win));
        MPI_CHECK(MPI_Raccumulate(&x[i], 1, MPI_INT, t, OFFI(ord_req, slot), 1, MPI_INT,
                                  MPI_REPLACE, win, &q[3 * i]));
        MPI_CHECK(MPI_Raccumulate(&y[i], 1, MPI_INT, t, OFFI(ord_req, slot), 1, MPI_INT, MPI_SUM,
                                  win, &q[3 * i + 1]));
        MPI_CHECK(MPI_Rget_accumulate(&one, 1, MPI_INT, &r2[i], 1, MPI_INT, t, OFFI(ord_req, slot),
                                      1,
                                      MPI_INT, MPI_SUM, win, &q[3 * i + 2]));
        MPI_CHECK(MPI_Fetch_and_op(&one, &chain[i], MPI_INT, t, OFFI(fao_chain, slot), MPI_SUM,
                                   win));
    }
    MPI_CHECK(MPI_Waitall(3 * NORD, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NORD; i++) /* an Rget_accumulate's result is there once it completes */
        CHECK(r2[i] == x[i] + y[i], "Rget_accumulate after REPLACE %d, SUM %d: %d", x[i], y[i],
              r2[i]);
    MPI_CHECK(MPI_Win_unlock(t, win));
    for (int i = 0; i < NORD; i++) {
        CHECK(r1[i] == x[i] + y[i], "read after REPLACE %d then SUM %d: %d (reordered)", x[i], y[i],
              r1[i]);
        CHECK(chain[i] == i, "fetch_and_op chain without flush: #%d fetched %d", i, chain[i]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    int l = rma_left(rank, size);
    rma_local_begin(win, rank);
    if (size <= 64) {
        CHECK(me->ord[l] == x[NORD - 1] - rank + l + y[NORD - 1], "final ordered value %d",
              me->ord[l]);
        CHECK(me->ord_req[l] == x[NORD - 1] - rank + l + y[NORD - 1] + 1, "final value %d",
              me->ord_req[l]);
        CHECK(me->fao_chain[l] == NORD, "fetch_and_op chain total %d", me->fao_chain[l]);
    }
    rma_local_end(win, rank);
}

int main(int argc, char **argv)
{
    rma_watchdog("rma_acc", 80);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)sizeof(struct slots), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                               &me, &win));
    init_window();
    /* A barrier after each test: nobody starts the next kind of epoch while
     * another still checks its window. */
    void (*tests[])(void) = {test_sum_shared_lock, test_fence_ops,      test_replace_race,
                             test_fetch_and_op,    test_cas_lock,       test_get_accumulate,
                             test_dynamic_counter, test_ordering};
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        tests[i]();
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    }
    if (argc > 1 && strcmp(argv[1], "--expect-nic") == 0) {
        proust_rma_counts_t n;
        proust_rma_counts(&n);
        CHECK(n.atomics >= (unsigned long long)ITER, "atomics: %llu",
              (unsigned long long)n.atomics);
    }
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
