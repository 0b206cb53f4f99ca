/*
 * rma_data.c — data integrity of MPI_Put and MPI_Get (MPI-3.1 11.3).
 *
 * Fence epochs: every rank puts into its right neighbour and gets from its
 * left one, MPI_BYTE, 0 B to 4 MiB at odd offsets on both sides, checked
 * byte by byte with guard bytes around (nothing written outside the target
 * range, nothing past the end of the origin buffer of a get). The same runs
 * on the three flavors that take no shared memory: MPI_Win_create on user
 * memory, MPI_Win_allocate, MPI_Win_create_dynamic with two attached regions
 * (target_disp is the address from MPI_Get_address, exchanged by
 * MPI_Allgather). Derived datatypes on either side (MPI_Type_vector, a
 * resized type with count > 1) with disp_unit = sizeof(int). Request-based
 * operations (MPI_Rput / MPI_Rget) inside a lock_all epoch, all in flight at
 * once, completed by MPI_Waitall and MPI_Test loops: a completed Rget has its
 * data, a completed Rput's buffer may be overwritten at once.
 *
 * --expect-nic (windows across hosts, or over PROUST_RAILS=self,ofi): the
 * puts and gets must have gone as one-sided transfers (proust_rma_counts),
 * not as messages the target applies.
 */
#include "rma_util.h"

#include "proust.h"

#define MAXN ((size_t)4 << 20)
#define SLACK ((size_t)128)
#define AREA (MAXN + SLACK) /* [0, AREA): puts land; [AREA, 2 AREA): gets read */
#define GUARD 16
#define PUT_GUARD 0xA5
#define GET_GUARD 0x5A

static int code(int r, int i) { return r * 100000 + i + 1; }
static const size_t sizes[] = {0,    1,    7,    64,   1000, 4095, 8192, 8193, (size_t)65536 + 13,
                               ((size_t)1 << 20) + 5, MAXN};
enum { NSIZES = sizeof sizes / sizeof sizes[0] };

static int rank, size, right, left;
static unsigned char *src, *dst; /* origin buffers, MAXN + SLACK each */

static uint64_t seed(int r, int k, int what, int flavor)
{
    return ((uint64_t)r << 32) ^ ((uint64_t)k << 16) ^ ((uint64_t)what << 8) ^ (uint64_t)flavor;
}

static size_t put_off(int k) { return (size_t)(k * 13 % 61); }
static size_t get_off(int k) { return (size_t)((k * 7 + 3) % 59); }

/* First byte in [p, p + n) that is not `v`, or -1. */
static long first_not(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != v)
            return (long)i;
    return -1;
}

/* A window seen through its target displacements: the put and get areas of
 * rank r start at disp[r][0] and disp[r][1] (in bytes, disp_unit 1). */
struct target {
    MPI_Win win;
    unsigned char *put_area, *get_area; /* local */
    MPI_Aint (*disp)[2];
    const char *what;
    int flavor;
};

/* One fence epoch per size: put to the right, get from the left. */
static void fence_sweep(const struct target *t)
{
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOPRECEDE, t->win));
    for (int k = 0; k < NSIZES; k++) {
        size_t n = sizes[k], po = put_off(k), go = get_off(k), so = (size_t)(1 + k % 3);
        /* Local stores between the fences: guards and the data read by the
         * right neighbour's get. */
        memset(t->put_area, PUT_GUARD, po + n + GUARD);
        mt_fill(t->get_area + go, n, seed(rank, k, 'g', t->flavor));
        mt_fill(src + so, n, seed(rank, k, 'p', t->flavor));
        memset(dst + so, GET_GUARD, n + GUARD);
        MPI_CHECK(MPI_Win_fence(0, t->win));
        MPI_CHECK(MPI_Put(src + so, (int)n, MPI_BYTE, right, MPI_Aint_add(t->disp[right][0],
                                                                          (MPI_Aint)po),
                          (int)n, MPI_BYTE, t->win));
        MPI_CHECK(MPI_Get(dst + so, (int)n, MPI_BYTE, left, MPI_Aint_add(t->disp[left][1],
                                                                         (MPI_Aint)go),
                          (int)n, MPI_BYTE, t->win));
        MPI_CHECK(MPI_Win_fence(0, t->win));
        long bad = mt_verify(t->put_area + po, n, seed(left, k, 'p', t->flavor));
        CHECK(bad < 0, "%s: put of %zu B at offset %zu from rank %d: byte %ld wrong", t->what, n,
              po, left, bad);
        bad = first_not(t->put_area, po, PUT_GUARD);
        CHECK(bad < 0, "%s: put of %zu B wrote byte %ld before its target offset %zu", t->what, n,
              bad, po);
        bad = first_not(t->put_area + po + n, GUARD, PUT_GUARD);
        CHECK(bad < 0, "%s: put of %zu B wrote %ld B past its end", t->what, n, bad + 1);
        bad = mt_verify(dst + so, n, seed(left, k, 'g', t->flavor));
        CHECK(bad < 0, "%s: get of %zu B at offset %zu from rank %d: byte %ld wrong", t->what, n,
              go, left, bad);
        bad = first_not(dst + so + n, GUARD, GET_GUARD);
        CHECK(bad < 0, "%s: get of %zu B wrote %ld B past the origin buffer", t->what, n, bad + 1);
    }
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, t->win));
}

static MPI_Aint (*same_disps(MPI_Aint put, MPI_Aint get))[2]
{
    MPI_Aint(*d)[2] = malloc(sizeof *d * (size_t)size);
    CHECK(d != NULL, "malloc");
    for (int r = 0; r < size; r++) {
        d[r][0] = put;
        d[r][1] = get;
    }
    return d;
}

static void test_create(void)
{
    unsigned char *mem = malloc(2 * AREA);
    CHECK(mem != NULL, "malloc");
    struct target t = {.put_area = mem, .get_area = mem + AREA, .what = "MPI_Win_create",
                       .flavor = 1, .disp = same_disps(0, (MPI_Aint)AREA)};
    MPI_CHECK(MPI_Win_create(mem, (MPI_Aint)(2 * AREA), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &t.win));
    fence_sweep(&t);
    MPI_CHECK(MPI_Win_free(&t.win));
    CHECK(t.win == MPI_WIN_NULL, "MPI_Win_free did not set MPI_WIN_NULL");
    free(t.disp);
    free(mem);
}

/* Rput / Rget of several sizes at once in a lock_all epoch. */
static void request_based(const struct target *t)
{
    static const int ks[] = {1, 2, 5, 7, 8, 9};
    enum { NK = sizeof ks / sizeof ks[0] };
    size_t po[NK], go[NK], so[NK], at_p = 3, at_g = 5, at_s = 0;
    MPI_Request puts[NK], gets[NK];
    for (int i = 0; i < NK; i++) { /* disjoint odd ranges, one per size */
        po[i] = at_p;
        go[i] = at_g;
        so[i] = at_s; /* origin ranges side by side */
        at_p += sizes[ks[i]] + 9;
        at_g += sizes[ks[i]] + 11;
        at_s += sizes[ks[i]];
    }
    CHECK(at_p < MAXN && at_g < MAXN && at_s < MAXN, "layout");
    MPI_CHECK(MPI_Win_lock_all(0, t->win));
    memset(t->put_area, PUT_GUARD, at_p);
    for (int i = 0; i < NK; i++)
        mt_fill(t->get_area + go[i], sizes[ks[i]], seed(rank, ks[i], 'G', t->flavor));
    MPI_CHECK(MPI_Win_sync(t->win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NK; i++) {
        int n = (int)sizes[ks[i]];
        mt_fill(src + so[i], (size_t)n, seed(rank, ks[i], 'P', t->flavor));
        MPI_CHECK(MPI_Rput(src + so[i], n, MPI_BYTE, right,
                           MPI_Aint_add(t->disp[right][0], (MPI_Aint)po[i]), n, MPI_BYTE, t->win,
                           &puts[i]));
        MPI_CHECK(MPI_Rget(dst + so[i], n, MPI_BYTE, left,
                           MPI_Aint_add(t->disp[left][1], (MPI_Aint)go[i]), n, MPI_BYTE, t->win,
                           &gets[i]));
    }
    /* The puts by MPI_Test loops, last first; a completed put's buffer is
     * the application's again: scribble on it before the flush. */
    for (int i = NK - 1; i >= 0; i--) {
        int flag = 0;
        while (!flag)
            MPI_CHECK(MPI_Test(&puts[i], &flag, MPI_STATUS_IGNORE));
        CHECK(puts[i] == MPI_REQUEST_NULL, "MPI_Test left the Rput request");
        memset(src + so[i], 0xEE, sizes[ks[i]]);
    }
    MPI_CHECK(MPI_Waitall(NK, gets, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NK; i++) {
        CHECK(gets[i] == MPI_REQUEST_NULL, "MPI_Waitall left an Rget request");
        long bad = mt_verify(dst + so[i], sizes[ks[i]], seed(left, ks[i], 'G', t->flavor));
        CHECK(bad < 0, "%s: Rget of %zu B from rank %d: byte %ld wrong after MPI_Waitall", t->what,
              sizes[ks[i]], left, bad);
    }
    MPI_CHECK(MPI_Win_flush_all(t->win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Win_sync(t->win));
    for (int i = 0; i < NK; i++) {
        long bad = mt_verify(t->put_area + po[i], sizes[ks[i]], seed(left, ks[i], 'P', t->flavor));
        CHECK(bad < 0, "%s: Rput of %zu B from rank %d: byte %ld wrong (buffer reused after the "
              "request completed?)", t->what, sizes[ks[i]], left, bad);
        size_t gap = i + 1 < NK ? po[i + 1] - po[i] - sizes[ks[i]] : 9;
        bad = first_not(t->put_area + po[i] + sizes[ks[i]], gap, PUT_GUARD);
        CHECK(bad < 0, "%s: Rput of %zu B wrote past its end", t->what, sizes[ks[i]]);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody reads my window any more */
    MPI_CHECK(MPI_Win_unlock_all(t->win));
}

static void test_allocate(void)
{
    unsigned char *mem = NULL;
    struct target t = {.what = "MPI_Win_allocate", .flavor = 2,
                       .disp = same_disps(0, (MPI_Aint)AREA)};
    MPI_CHECK(MPI_Win_allocate((MPI_Aint)(2 * AREA), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                               &t.win));
    CHECK(mem != NULL, "MPI_Win_allocate returned no memory");
    t.put_area = mem;
    t.get_area = mem + AREA;
    fence_sweep(&t);
    request_based(&t);
    MPI_CHECK(MPI_Win_free(&t.win));
    free(t.disp);
}

static void test_dynamic(void)
{
    struct target t = {.what = "MPI_Win_create_dynamic", .flavor = 3};
    t.put_area = malloc(AREA);
    t.get_area = malloc(AREA);
    t.disp = malloc(sizeof *t.disp * (size_t)size);
    CHECK(t.put_area && t.get_area && t.disp, "malloc");
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &t.win));
    MPI_CHECK(MPI_Win_attach(t.win, t.put_area, (MPI_Aint)AREA));
    MPI_CHECK(MPI_Win_attach(t.win, t.get_area, (MPI_Aint)AREA));
    MPI_Aint mine[2];
    MPI_CHECK(MPI_Get_address(t.put_area, &mine[0]));
    MPI_CHECK(MPI_Get_address(t.get_area, &mine[1]));
    MPI_CHECK(MPI_Allgather(mine, 2, MPI_AINT, t.disp, 2, MPI_AINT, MPI_COMM_WORLD));
    fence_sweep(&t);
    request_based(&t);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody accesses the regions any more */
    MPI_CHECK(MPI_Win_detach(t.win, t.get_area));
    MPI_CHECK(MPI_Win_detach(t.win, t.put_area));
    MPI_CHECK(MPI_Win_free(&t.win));
    free(t.put_area);
    free(t.get_area);
    free(t.disp);
}

/* An access across two adjacent regions of a dynamic window (one array
 * attached in two halves; MPICH accepts it), and operations moving no
 * byte, whose types need not agree (MPICH's badrma). */
enum { HALF = 3000 };
static void test_dynamic_span(void)
{
    int *mem = malloc(2 * HALF * sizeof(int)), *o = malloc(2 * HALF * sizeof(int));
    MPI_Aint *addr = malloc(sizeof *addr * (size_t)size);
    CHECK(mem && o && addr, "malloc");
    for (int i = 0; i < 2 * HALF; i++)
        mem[i] = -1, o[i] = code(rank, i);
    MPI_Win win;
    MPI_CHECK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_attach(win, mem, HALF * (MPI_Aint)sizeof(int)));
    MPI_CHECK(MPI_Win_attach(win, mem + HALF, HALF * (MPI_Aint)sizeof(int)));
    MPI_Aint mine;
    MPI_CHECK(MPI_Get_address(mem, &mine));
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD));
    MPI_Datatype empty;
    MPI_CHECK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_CHECK(MPI_Type_commit(&empty));
    MPI_CHECK(MPI_Win_lock_all(0, win));
    /* ints [100, 2 HALF - 100) of the target: both halves */
    MPI_Aint at = addr[right] + 100 * (MPI_Aint)sizeof(int);
    MPI_CHECK(MPI_Put(o + 100, 2 * HALF - 200, MPI_INT, right, at, 2 * HALF - 200, MPI_INT, win));
    MPI_CHECK(MPI_Accumulate(o, 0, MPI_DOUBLE, right, at, 0, MPI_INT, MPI_SUM, win));
    MPI_CHECK(MPI_Accumulate(o, 1, empty, right, at, 3, empty, MPI_SUM, win));
    MPI_CHECK(MPI_Get_accumulate(o, 0, MPI_INT, o + 1, 1, empty, right, at, 0, MPI_DOUBLE,
                                 MPI_SUM, win));
    MPI_CHECK(MPI_Win_flush(right, win));
    MPI_CHECK(MPI_Win_unlock_all(win));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < 2 * HALF; i++) {
        int want = i >= 100 && i < 2 * HALF - 100 ? code(left, i) : -1;
        CHECK(mem[i] == want, "put across two regions: int %d is %d, want %d", i, mem[i], want);
    }
    MPI_CHECK(MPI_Win_detach(win, mem + HALF));
    MPI_CHECK(MPI_Win_detach(win, mem));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Type_free(&empty));
    free(mem);
    free(o);
    free(addr);
}

/* ---- Derived datatypes, disp_unit = sizeof(int) -------------------------- */
enum { WN = 1024, VK = 10, VB = 3, VS = 7, RC = 4 };

static void test_derived(void)
{
    int *w = malloc(WN * sizeof(int)), *o = malloc(WN * sizeof(int));
    CHECK(w && o, "malloc");
    MPI_Win win;
    MPI_Datatype vec, pair, spaced;
    MPI_CHECK(MPI_Type_vector(VK, VB, VS, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    /* Elements 0 and 3 of each group of 5 ints; count RC of it. */
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &pair));
    MPI_CHECK(MPI_Type_create_resized(pair, 0, 5 * (MPI_Aint)sizeof(int), &spaced));
    MPI_CHECK(MPI_Type_commit(&spaced));
    MPI_CHECK(MPI_Type_free(&pair)); /* spaced keeps what it needs */
    for (int i = 0; i < WN; i++)
        w[i] = i >= 400 && i < 500 ? code(rank, i) : -1;
    MPI_CHECK(MPI_Win_create(w, WN * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                             MPI_COMM_WORLD, &win));
    MPI_CHECK(MPI_Win_fence(0, win));
    /* A: contiguous origin into a vector at the target, displacement 5. */
    for (int i = 0; i < VK * VB; i++)
        o[i] = code(rank, 1000 + i);
    MPI_CHECK(MPI_Put(o, VK * VB, MPI_INT, right, 5, 1, vec, win));
    /* B: a vector origin (o + 100) into a contiguous range at 200. */
    for (int i = 0; i < VK * VS; i++)
        o[100 + i] = code(rank, 2000 + i);
    MPI_CHECK(MPI_Put(o + 100, 1, vec, right, 200, VK * VB, MPI_INT, win));
    /* C: count RC of the resized type at 300, from 2 RC contiguous ints. */
    for (int i = 0; i < 2 * RC; i++)
        o[300 + i] = code(rank, 3000 + i);
    MPI_CHECK(MPI_Put(o + 300, 2 * RC, MPI_INT, right, 300, RC, spaced, win));
    /* D: a get of 30 contiguous ints at 400 into a vector origin at o + 500,
     * E: a get through the resized type at 450 into contiguous o + 700. */
    for (int i = 500; i < WN; i++)
        o[i] = -7;
    MPI_CHECK(MPI_Get(o + 500, 1, vec, left, 400, VK * VB, MPI_INT, win));
    MPI_CHECK(MPI_Get(o + 700, 2 * RC, MPI_INT, left, 450, RC, spaced, win));
    MPI_CHECK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    int want[WN];
    for (int i = 0; i < WN; i++)
        want[i] = i >= 400 && i < 500 ? code(rank, i) : -1;
    for (int i = 0; i < VK; i++)
        for (int j = 0; j < VB; j++) {
            want[5 + i * VS + j] = code(left, 1000 + i * VB + j);
            want[200 + i * VB + j] = code(left, 2000 + i * VS + j);
        }
    for (int c = 0; c < RC; c++) {
        want[300 + 5 * c] = code(left, 3000 + 2 * c);
        want[300 + 5 * c + 3] = code(left, 3000 + 2 * c + 1);
    }
    for (int i = 0; i < WN; i++)
        CHECK(w[i] == want[i], "derived put: window int %d is %d, want %d (from rank %d)", i, w[i],
              want[i], left);
    for (int i = 0; i < VK * VS; i++) {
        int in = i % VS < VB && i / VS < VK;
        int exp = in ? code(left, 400 + (i / VS) * VB + i % VS) : -7;
        CHECK(o[500 + i] == exp, "get into a vector origin: int %d is %d, want %d", i, o[500 + i],
              exp);
    }
    for (int c = 0; c < RC; c++)
        CHECK(o[700 + 2 * c] == code(left, 450 + 5 * c) && o[701 + 2 * c] == code(left,
                                                                                  453 + 5 * c),
              "get through a resized target type, element %d: %d %d", c, o[700 + 2 * c],
              o[701 + 2 * c]);
    CHECK(o[700 + 2 * RC] == -7, "get through a resized type wrote past its end");
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Type_free(&spaced));
    free(w);
    free(o);
}

int main(int argc, char **argv)
{
    rma_watchdog("rma_data", 80);
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    right = rma_right(rank, size);
    left = rma_left(rank, size);
    src = malloc(MAXN + SLACK);
    dst = malloc(MAXN + SLACK);
    CHECK(src && dst, "malloc");
    test_create();
    test_allocate();
    test_dynamic();
    test_dynamic_span();
    test_derived();
    if (argc > 1 && strcmp(argv[1], "--expect-nic") == 0) {
        proust_rma_counts_t n;
        proust_rma_counts(&n);
        CHECK(size == 1 || (n.writes > 0 && n.reads > 0 && n.registrations > 0),
              "one-sided: %llu writes, %llu reads, %llu registrations",
              (unsigned long long)n.writes, (unsigned long long)n.reads,
              (unsigned long long)n.registrations);
    }
    free(src);
    free(dst);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
