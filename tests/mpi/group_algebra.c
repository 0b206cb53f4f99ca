/*
 * group_algebra.c — MPI_Group_* against a reference computed here: random
 * subsets and permutations of the world group through incl/excl/range_incl/
 * range_excl, then union/intersection/difference/compare/translate_ranks;
 * and the error classes of bad arguments under MPI_ERRORS_RETURN.
 */
#include <stdbool.h>

#include "mpitest.h"

static int wsize;
static unsigned long long rng = 88172645463325252ull;

static int rnd(int n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (int)(rng % (unsigned long long)n);
}

/* World ranks of the members of g, in group order; returns the size. */
static int members(MPI_Group g, int *out)
{
    MPI_Group world;
    int n;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MPI_CHECK(MPI_Group_size(g, &n));
    int *idx = malloc((size_t)(n + 1) * sizeof *idx);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    MPI_CHECK(MPI_Group_translate_ranks(g, n, idx, world, out));
    free(idx);
    MPI_CHECK(MPI_Group_free(&world));
    return n;
}

static void expect(MPI_Group g, const int *ref, int n, const char *what)
{
    int got[64];
    int m = members(g, got);
    CHECK(m == n, "%s: size %d, expected %d", what, m, n);
    for (int i = 0; i < n; i++)
        CHECK(got[i] == ref[i], "%s: member %d is world rank %d, expected %d", what, i, got[i],
              ref[i]);
    int me, myref = MPI_UNDEFINED, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < n; i++)
        if (ref[i] == me)
            myref = i;
    MPI_CHECK(MPI_Group_rank(g, &rank));
    CHECK(rank == myref, "%s: Group_rank %d, expected %d", what, rank, myref);
}

static bool in(const int *a, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (a[i] == x)
            return true;
    return false;
}

/* A random list of k distinct world ranks (random order). */
static int random_subset(int *a)
{
    int k = rnd(wsize + 1), n = 0;
    while (n < k) {
        int x = rnd(wsize);
        if (!in(a, n, x))
            a[n++] = x;
    }
    return k;
}

static void test_random_algebra(MPI_Group world)
{
    for (int iter = 0; iter < 300; iter++) {
        int a[64], b[64], ref[128], n = 0;
        int na = random_subset(a), nb = random_subset(b);
        MPI_Group ga, gb, gr;
        MPI_CHECK(MPI_Group_incl(world, na, a, &ga));
        expect(ga, a, na, "incl");
        MPI_CHECK(MPI_Group_incl(world, nb, b, &gb));

        MPI_CHECK(MPI_Group_union(ga, gb, &gr));
        for (int i = 0; i < na; i++)
            ref[n++] = a[i];
        for (int i = 0; i < nb; i++)
            if (!in(a, na, b[i]))
                ref[n++] = b[i];
        expect(gr, ref, n, "union");
        MPI_CHECK(MPI_Group_free(&gr));
        CHECK(gr == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");

        n = 0;
        MPI_CHECK(MPI_Group_intersection(ga, gb, &gr));
        for (int i = 0; i < na; i++)
            if (in(b, nb, a[i]))
                ref[n++] = a[i];
        expect(gr, ref, n, "intersection");
        if (n == 0)
            CHECK(gr == MPI_GROUP_EMPTY, "empty intersection is not MPI_GROUP_EMPTY");
        MPI_CHECK(MPI_Group_free(&gr));

        n = 0;
        MPI_CHECK(MPI_Group_difference(ga, gb, &gr));
        for (int i = 0; i < na; i++)
            if (!in(b, nb, a[i]))
                ref[n++] = a[i];
        expect(gr, ref, n, "difference");
        MPI_CHECK(MPI_Group_free(&gr));

        /* excl of a random set of positions of ga keeps ga's order. */
        int ex[64], nex = 0, keep[64], nk = 0;
        for (int i = 0; i < na; i++) {
            if (rnd(2))
                ex[nex++] = i;
            else
                keep[nk++] = a[i];
        }
        MPI_CHECK(MPI_Group_excl(ga, nex, ex, &gr));
        expect(gr, keep, nk, "excl");
        MPI_CHECK(MPI_Group_free(&gr));

        /* compare: same set in another order is SIMILAR. */
        int res;
        MPI_CHECK(MPI_Group_compare(ga, ga, &res));
        CHECK(res == MPI_IDENT, "compare with itself: %d", res);
        int perm[64];
        for (int i = 0; i < na; i++)
            perm[i] = a[na - 1 - i];
        MPI_Group gp;
        MPI_CHECK(MPI_Group_incl(world, na, perm, &gp));
        MPI_CHECK(MPI_Group_compare(ga, gp, &res));
        CHECK(res == (na <= 1 ? MPI_IDENT : MPI_SIMILAR), "compare reversed (n=%d): %d", na,
              res);
        MPI_CHECK(MPI_Group_free(&gp));
        bool same = na == nb;
        for (int i = 0; same && i < na; i++)
            same = a[i] == b[i];
        bool sameset = na == nb;
        for (int i = 0; sameset && i < na; i++)
            sameset = in(b, nb, a[i]);
        MPI_CHECK(MPI_Group_compare(ga, gb, &res));
        CHECK(res == (same ? MPI_IDENT : sameset ? MPI_SIMILAR : MPI_UNEQUAL),
              "compare a/b: %d", res);

        /* translate ga -> gb with MPI_PROC_NULL in the list. */
        int r1[65], r2[65];
        for (int i = 0; i < na; i++)
            r1[i] = i;
        r1[na] = MPI_PROC_NULL;
        MPI_CHECK(MPI_Group_translate_ranks(ga, na + 1, r1, gb, r2));
        for (int i = 0; i < na; i++) {
            int want = MPI_UNDEFINED;
            for (int j = 0; j < nb; j++)
                if (b[j] == a[i])
                    want = j;
            CHECK(r2[i] == want, "translate %d: %d, expected %d", i, r2[i], want);
        }
        CHECK(r2[na] == MPI_PROC_NULL, "translate of MPI_PROC_NULL: %d", r2[na]);
        MPI_CHECK(MPI_Group_free(&ga));
        MPI_CHECK(MPI_Group_free(&gb));
    }
}

/* Reference expansion of (first, last, stride) triples. */
static int expand(int ranges[][3], int n, int *out)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int r = ranges[i][0]; ranges[i][2] > 0 ? r <= ranges[i][1] : r >= ranges[i][1];
             r += ranges[i][2])
            out[m++] = r;
    return m;
}

static void test_ranges(MPI_Group world)
{
    for (int iter = 0; iter < 200; iter++) {
        /* Disjoint ranges: split 0..wsize-1 into consecutive chunks, each
         * walked forwards or backwards with a random stride. */
        int ranges[16][3], n = 0, pos = 0;
        while (pos < wsize && n < 16) {
            int len = 1 + rnd(wsize - pos), stride = 1 + rnd(3);
            int lo = pos, hi = pos + len - 1;
            if (rnd(2))
                ranges[n][0] = lo, ranges[n][1] = hi, ranges[n][2] = stride;
            else
                ranges[n][0] = hi, ranges[n][1] = lo, ranges[n][2] = -stride;
            n++;
            pos += len + rnd(2);
        }
        int ref[64], m = expand(ranges, n, ref);
        MPI_Group g;
        MPI_CHECK(MPI_Group_range_incl(world, n, ranges, &g));
        expect(g, ref, m, "range_incl");
        MPI_CHECK(MPI_Group_free(&g));
        int keep[64], k = 0;
        for (int r = 0; r < wsize; r++)
            if (!in(ref, m, r))
                keep[k++] = r;
        MPI_CHECK(MPI_Group_range_excl(world, n, ranges, &g));
        expect(g, keep, k, "range_excl");
        if (g != MPI_GROUP_EMPTY)
            MPI_CHECK(MPI_Group_free(&g));
    }
}

static void test_errors(MPI_Group world)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size, cls, rc, r2[2];
    MPI_Group g;
    rc = MPI_Group_size(MPI_GROUP_NULL, &size);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP, "Group_size(NULL): class %d", cls);
    int bad[2] = {0, wsize};
    rc = MPI_Group_incl(world, 2, bad, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "incl with rank %d: class %d", wsize, cls);
    int dup[2] = {0, 0};
    if (wsize >= 2) {
        rc = MPI_Group_incl(world, 2, dup, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK, "incl with a duplicate: class %d", cls);
        rc = MPI_Group_excl(world, 2, dup, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK, "excl with a duplicate: class %d", cls);
    }
    int neg[1] = {-1};
    rc = MPI_Group_excl(world, 1, neg, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "excl with -1: class %d", cls);
    int zero[1][3] = {{0, 0, 0}};
    rc = MPI_Group_range_incl(world, 1, zero, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "range with stride 0: class %d", cls);
    int out[1][3] = {{0, wsize, 1}};
    rc = MPI_Group_range_incl(world, 1, out, &g);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "range past the end: class %d", cls);
    if (wsize >= 2) {
        int twice[2][3] = {{0, 1, 1}, {1, 0, -1}};
        rc = MPI_Group_range_incl(world, 2, twice, &g);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_RANK, "ranges naming a rank twice: class %d", cls);
    }
    int r1[1] = {wsize};
    rc = MPI_Group_translate_ranks(world, 1, r1, world, r2);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "translate of an invalid rank: class %d", cls);
    MPI_Group freed;
    MPI_CHECK(MPI_Group_incl(world, 1, zero[0], &freed));
    MPI_Group copy = freed;
    MPI_CHECK(MPI_Group_free(&freed));
    rc = MPI_Group_size(copy, &size);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_GROUP, "use of a freed group: class %d", cls);
    /* Empty results and MPI_GROUP_EMPTY itself. */
    MPI_CHECK(MPI_Group_incl(world, 0, NULL, &g));
    MPI_CHECK(MPI_Group_size(g, &size));
    CHECK(size == 0, "incl of nothing: size %d", size);
    MPI_CHECK(MPI_Group_rank(g, &size));
    CHECK(size == MPI_UNDEFINED, "rank in the empty group: %d", size);
    MPI_CHECK(MPI_Group_free(&g));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(wsize <= 64, "at most 64 ranks");
    MPI_Group world;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int all[64];
    for (int i = 0; i < wsize; i++)
        all[i] = i;
    expect(world, all, wsize, "world group");
    rng += (unsigned long long)rank * 7919; /* local algebra: any sequence will do */
    test_random_algebra(world);
    test_ranges(world);
    test_errors(world);
    MPI_CHECK(MPI_Group_free(&world));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
