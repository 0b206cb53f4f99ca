/*
 * dist_graph.c — distributed graph topologies: MPI_Dist_graph_create_adjacent
 * (a ring, weighted and not; three neighbours each way in a given order),
 * the general MPI_Dist_graph_create with the edges given by rank 0 alone, by
 * their sources, or spread over the ranks, on a graph with a repeated edge,
 * a self loop and an isolated rank; the queries (Topo_test,
 * Dist_graph_neighbors_count, Dist_graph_neighbors), MPI_WEIGHTS_EMPTY,
 * MPI_COMM_SELF, a dup keeping the topology, and the error classes.
 *
 * Built with -DMPICH402_KNOWN_GAPS, the program leaves out the checks that
 * MPICH 4.0.2 (the reference it was validated with) does not pass: it does
 * not check neighbour ranks (create_adjacent succeeds, create asserts).
 */
#include <stdbool.h>

#include "mpitest.h"

#define MAXE 64 /* edges of the test graph, and neighbours of one rank */

#ifdef MPICH402_KNOWN_GAPS
static const bool known_gaps = true;
#else
static const bool known_gaps = false;
#endif

static int wrank, wsize;

typedef struct {
    int nb, w;
} pair_t;

typedef struct {
    int s, d, w;
} edge_t;

static int pair_cmp(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->nb != y->nb)
        return x->nb < y->nb ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

/* Topo_test, the degrees and the weighted flag of g. */
static void check_counts(MPI_Comm g, int indeg, int outdeg, bool weighted, const char *what)
{
    int status = -1, i = -1, o = -1, w = -1;
    MPI_CHECK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test %d", what, status);
    MPI_CHECK(MPI_Dist_graph_neighbors_count(g, &i, &o, &w));
    CHECK(i == indeg && o == outdeg && !w == !weighted,
          "%s: neighbors_count (%d, %d, %d), expected (%d, %d, %d)", what, i, o, w, indeg, outdeg,
          (int)weighted);
}

/* Neighbours and weights of g (degrees from neighbors_count), as pairs. */
static void get_pairs(MPI_Comm g, int *indeg, pair_t *in, int *outdeg, pair_t *out)
{
    int w, src[MAXE + 1], sw[MAXE + 1], dst[MAXE + 1], dw[MAXE + 1];
    MPI_CHECK(MPI_Dist_graph_neighbors_count(g, indeg, outdeg, &w));
    CHECK(*indeg <= MAXE && *outdeg <= MAXE, "degrees (%d, %d)", *indeg, *outdeg);
    for (int k = 0; k <= MAXE; k++)
        src[k] = sw[k] = dst[k] = dw[k] = -77;
    MPI_CHECK(MPI_Dist_graph_neighbors(g, *indeg, src, w ? sw : MPI_UNWEIGHTED, *outdeg, dst,
                                       w ? dw : MPI_UNWEIGHTED));
    for (int k = 0; k < *indeg; k++)
        in[k] = (pair_t){src[k], w ? sw[k] : 0};
    for (int k = 0; k < *outdeg; k++)
        out[k] = (pair_t){dst[k], w ? dw[k] : 0};
    CHECK(src[*indeg] == -77 && dst[*outdeg] == -77, "Dist_graph_neighbors wrote past maxdegree");
}

static void check_pairs(const pair_t *got, const pair_t *want, int n, const char *what)
{
    for (int k = 0; k < n; k++)
        CHECK(got[k].nb == want[k].nb && got[k].w == want[k].w,
              "%s: neighbour %d is (%d, weight %d), expected (%d, weight %d)", what, k, got[k].nb,
              got[k].w, want[k].nb, want[k].w);
}

/* create_adjacent on a ring, in = left, out = right: the queries give the
 * lists back, with the weights when there are some; rank and size are kept
 * (no reorder), and Comm_free clears the handle. */
static void test_adjacent_ring(bool weighted)
{
    int left = (wrank + wsize - 1) % wsize, right = (wrank + 1) % wsize;
    int inw = 10 * left + 3, outw = 10 * wrank + 3, r, n;
    MPI_Comm g = MPI_COMM_NULL;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left,
                                             weighted ? &inw : MPI_UNWEIGHTED, 1, &right,
                                             weighted ? &outw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                             &g));
    CHECK(g != MPI_COMM_NULL, "create_adjacent gave MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_rank(g, &r));
    MPI_CHECK(MPI_Comm_size(g, &n));
    CHECK(r == wrank && n == wsize, "rank %d size %d", r, n);
    check_counts(g, 1, 1, weighted, "ring");
    int indeg, outdeg;
    pair_t in[MAXE], out[MAXE];
    get_pairs(g, &indeg, in, &outdeg, out);
    check_pairs(in, &(pair_t){left, weighted ? inw : 0}, 1, "ring, in");
    check_pairs(out, &(pair_t){right, weighted ? outw : 0}, 1, "ring, out");
    MPI_CHECK(MPI_Comm_free(&g));
    CHECK(g == MPI_COMM_NULL, "Comm_free left the handle");
}

/* create_adjacent with three neighbours each way listed out of order (with
 * repeats and self loops when there are few ranks): Dist_graph_neighbors
 * gives them back in the order given, with their weights. The graph has
 * the edges r -> r + k, k = 1, 2, 3, weighted 100 r + k. Returns it. */
static MPI_Comm make_adjacent_order(pair_t *in, pair_t *out)
{
    static const int ks[3] = {2, 3, 1}, kd[3] = {3, 1, 2};
    int src[3], sw[3], dst[3], dw[3];
    for (int i = 0; i < 3; i++) {
        src[i] = (wrank - ks[i] % wsize + wsize) % wsize;
        sw[i] = 100 * src[i] + ks[i];
        dst[i] = (wrank + kd[i]) % wsize;
        dw[i] = 100 * wrank + kd[i];
        in[i] = (pair_t){src[i], sw[i]};
        out[i] = (pair_t){dst[i], dw[i]};
    }
    MPI_Comm g;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, sw, 3, dst, dw,
                                             MPI_INFO_NULL, 0, &g));
    return g;
}

static void test_adjacent_order(void)
{
    pair_t win[3], wout[3], in[MAXE], out[MAXE];
    int indeg, outdeg;
    MPI_Comm g = make_adjacent_order(win, wout);
    check_counts(g, 3, 3, true, "adjacent, 3 each way");
    get_pairs(g, &indeg, in, &outdeg, out);
    check_pairs(in, win, 3, "adjacent, in, in order");
    check_pairs(out, wout, 3, "adjacent, out, in order");
    MPI_CHECK(MPI_Comm_free(&g));
}

/* The test graph on n nodes: a ring and chords of length 2 over the first m
 * nodes, the edge 0 -> 1 twice more (once with the same weight, once with
 * another), a self loop on node m - 1, and node n - 1 isolated when n >= 4
 * (then m = n - 1, else m = n). */
static int test_edges(int n, edge_t *e)
{
    int m = n >= 4 ? n - 1 : n, k = 0;
    for (int i = 0; i < m; i++) {
        e[k++] = (edge_t){i, (i + 1) % m, 10 * i + 1};
        e[k++] = (edge_t){i, (i + 2) % m, 10 * i + 2};
    }
    e[k++] = (edge_t){0, 1 % m, 1};
    e[k++] = (edge_t){0, 1 % m, 5};
    e[k++] = (edge_t){m - 1, m - 1, 99};
    return k;
}

enum { BY_ROOT, BY_SOURCE, SPREAD };
static const char *mode_name[] = {"edges from rank 0", "edges from their sources",
                                  "edges spread over the ranks"};

/* Which rank passes edge k to Dist_graph_create in a mode. */
static int giver(int mode, int k, const edge_t *e)
{
    return mode == BY_ROOT ? 0 : mode == BY_SOURCE ? e[k].s : (3 * k + 1) % wsize;
}

/* Dist_graph_create of the test graph, each rank passing the edges that
 * `mode` gives it, grouped by source (a source at most once per rank; a
 * source of degree 0 is passed too when its giver is rank 0 or the source
 * itself). A rank without edges passes MPI_WEIGHTS_EMPTY when weighted. */
static MPI_Comm create_general(int mode, bool weighted, const edge_t *e, int ne)
{
    int n = 0, sources[MAXE], degrees[MAXE], dests[MAXE], weights[MAXE], nd = 0;
    for (int s = 0; s < wsize; s++) {
        int deg = 0;
        for (int k = 0; k < ne; k++)
            if (e[k].s == s && giver(mode, k, e) == wrank) {
                dests[nd] = e[k].d;
                weights[nd++] = e[k].w;
                deg++;
            }
        bool mine = mode == BY_ROOT ? wrank == 0 : mode == BY_SOURCE ? wrank == s : false;
        if (deg || mine) {
            sources[n] = s;
            degrees[n++] = deg;
        }
    }
    MPI_Comm g;
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests,
                                    !weighted ? MPI_UNWEIGHTED
                                    : nd     ? weights
                                             : MPI_WEIGHTS_EMPTY,
                                    MPI_INFO_NULL, 0, &g));
    return g;
}

/* The sorted in and out pairs of rank r in the test graph. */
static void expected_pairs(const edge_t *e, int ne, int r, bool weighted, int *indeg, pair_t *in,
                           int *outdeg, pair_t *out)
{
    *indeg = *outdeg = 0;
    for (int k = 0; k < ne; k++) {
        if (e[k].d == r)
            in[(*indeg)++] = (pair_t){e[k].s, weighted ? e[k].w : 0};
        if (e[k].s == r)
            out[(*outdeg)++] = (pair_t){e[k].d, weighted ? e[k].w : 0};
    }
    qsort(in, (size_t)*indeg, sizeof *in, pair_cmp);
    qsort(out, (size_t)*outdeg, sizeof *out, pair_cmp);
}

/* g has this rank's neighbours in the test graph, in any order. */
static void check_general(MPI_Comm g, const edge_t *e, int ne, bool weighted, const char *what)
{
    int wi, wo, gi, go;
    pair_t win[MAXE], wout[MAXE], in[MAXE], out[MAXE];
    expected_pairs(e, ne, wrank, weighted, &wi, win, &wo, wout);
    check_counts(g, wi, wo, weighted, what);
    get_pairs(g, &gi, in, &go, out);
    qsort(in, (size_t)gi, sizeof *in, pair_cmp);
    qsort(out, (size_t)go, sizeof *out, pair_cmp);
    check_pairs(in, win, wi, what);
    check_pairs(out, wout, wo, what);
}

/* Dist_graph_create, every way of giving the edges, weighted or not: each
 * rank's in and out neighbours are the multisets of its edges (with the
 * repeated edge twice, the self loop once each way), with their weights. */
static void test_general(void)
{
    edge_t e[MAXE];
    int ne = test_edges(wsize, e);
    for (int mode = BY_ROOT; mode <= SPREAD; mode++)
        for (int weighted = 1; weighted >= 0; weighted--) {
            char what[96];
            snprintf(what, sizeof what, "create, %s, %sweighted", mode_name[mode],
                     weighted ? "" : "un");
            MPI_Comm g = create_general(mode, weighted, e, ne);
            check_general(g, e, ne, weighted, what);
            MPI_CHECK(MPI_Comm_free(&g));
        }
}

/* Ranks without edges: all isolated (weighted with MPI_WEIGHTS_EMPTY, and
 * unweighted), and even ranks with a self loop while odd ones are isolated. */
static void test_isolated(void)
{
    int none[1] = {-1}, self = wrank, w = 7, indeg, outdeg;
    pair_t in[MAXE], out[MAXE];
    MPI_Comm g;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_WEIGHTS_EMPTY, 0, none,
                                             MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    check_counts(g, 0, 0, true, "isolated, MPI_WEIGHTS_EMPTY");
    get_pairs(g, &indeg, in, &outdeg, out);
    MPI_CHECK(MPI_Comm_free(&g));
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, none, MPI_UNWEIGHTED, 0, none,
                                             MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    check_counts(g, 0, 0, false, "isolated, unweighted");
    MPI_CHECK(MPI_Comm_free(&g));
    bool loop = wrank % 2 == 0;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, loop, &self,
                                             loop ? &w : MPI_WEIGHTS_EMPTY, loop, &self,
                                             loop ? &w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    check_counts(g, loop, loop, true, "self loops on even ranks");
    get_pairs(g, &indeg, in, &outdeg, out);
    if (loop) {
        check_pairs(in, &(pair_t){wrank, 7}, 1, "self loop, in");
        check_pairs(out, &(pair_t){wrank, 7}, 1, "self loop, out");
    }
    MPI_CHECK(MPI_Comm_free(&g));
    /* The general form, every rank isolated; rank 0 names itself with
     * degree 0. */
    int zero = 0, src0 = 0;
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, wrank == 0, &src0, &zero, none,
                                    MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
    check_counts(g, 0, 0, true, "create, no edges");
    MPI_CHECK(MPI_Comm_free(&g));
}

/* MPI_COMM_SELF: create_adjacent with the self loop twice (the weights in
 * different orders each way, kept as given), and the general form. */
static void test_self(void)
{
    int zz[2] = {0, 0}, sw[2] = {5, 4}, dw[2] = {4, 5}, indeg, outdeg;
    pair_t in[MAXE], out[MAXE];
    MPI_Comm g;
    MPI_CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_SELF, 2, zz, sw, 2, zz, dw, MPI_INFO_NULL,
                                             1, &g));
    int n, r;
    MPI_CHECK(MPI_Comm_size(g, &n));
    MPI_CHECK(MPI_Comm_rank(g, &r));
    CHECK(n == 1 && r == 0, "on MPI_COMM_SELF: size %d rank %d", n, r);
    check_counts(g, 2, 2, true, "self, adjacent");
    get_pairs(g, &indeg, in, &outdeg, out);
    check_pairs(in, (pair_t[]){{0, 5}, {0, 4}}, 2, "self, adjacent, in");
    check_pairs(out, (pair_t[]){{0, 4}, {0, 5}}, 2, "self, adjacent, out");
    MPI_CHECK(MPI_Comm_free(&g));
    int one = 1, w = 8;
    MPI_CHECK(MPI_Dist_graph_create(MPI_COMM_SELF, 1, zz, &one, zz, &w, MPI_INFO_NULL, 0, &g));
    check_counts(g, 1, 1, true, "self, create");
    get_pairs(g, &indeg, in, &outdeg, out);
    check_pairs(in, &(pair_t){0, 8}, 1, "self, create, in");
    check_pairs(out, &(pair_t){0, 8}, 1, "self, create, out");
    MPI_CHECK(MPI_Comm_free(&g));
}

/* A dup keeps the topology: the adjacent graph with its order, the general
 * one with its neighbour multisets; the dup still works once the original
 * is freed. */
static void test_dup(void)
{
    pair_t win[3], wout[3], in[MAXE], out[MAXE];
    int indeg, outdeg;
    MPI_Comm g = make_adjacent_order(win, wout), d;
    MPI_CHECK(MPI_Comm_dup(g, &d));
    MPI_CHECK(MPI_Comm_free(&g));
    check_counts(d, 3, 3, true, "dup of adjacent");
    get_pairs(d, &indeg, in, &outdeg, out);
    check_pairs(in, win, 3, "dup of adjacent, in");
    check_pairs(out, wout, 3, "dup of adjacent, out");
    MPI_CHECK(MPI_Comm_free(&d));

    edge_t e[MAXE];
    int ne = test_edges(wsize, e);
    g = create_general(SPREAD, true, e, ne);
    MPI_CHECK(MPI_Comm_dup(g, &d));
    check_general(d, e, ne, true, "dup of create");
    MPI_CHECK(MPI_Comm_free(&g));
    check_general(d, e, ne, true, "dup of create, original freed");
    MPI_CHECK(MPI_Comm_free(&d));
}

/* Errors, returned: negative degrees or counts of sources (MPI_ERR_ARG),
 * queries on communicators without a distributed graph (MPI_ERR_TOPOLOGY),
 * MPI_COMM_NULL and intercommunicators (MPI_ERR_COMM). */
static void test_errors(void)
{
    int r0[1] = {0}, deg1[1] = {1}, a, b, c, v[4];
    MPI_Comm g = MPI_COMM_NULL;
    EXPECT_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, r0, MPI_UNWEIGHTED, 1, r0,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, r0, MPI_UNWEIGHTED, -1, r0,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, r0, deg1, r0, MPI_UNWEIGHTED,
                                       MPI_INFO_NULL, 0, &g),
                 MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &a, &b, &c), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 1, v, v + 1, 1, v + 2, v + 3),
                 MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_NULL, &a, &b, &c), MPI_ERR_COMM);

    int dims[1] = {wsize}, per[1] = {1};
    MPI_Comm cart;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, per, 0, &cart));
    MPI_CHECK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Dist_graph_neighbors_count(cart, &a, &b, &c), MPI_ERR_TOPOLOGY);
    MPI_CHECK(MPI_Comm_free(&cart));

    if (wsize >= 2) {
        MPI_Comm half, inter;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &half));
        MPI_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 7, &inter));
        MPI_CHECK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        EXPECT_CLASS(MPI_Dist_graph_create_adjacent(inter, 0, r0, MPI_UNWEIGHTED, 0, r0,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                     MPI_ERR_COMM);
        EXPECT_CLASS(MPI_Dist_graph_create(inter, 0, r0, deg1, r0, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                           0, &g),
                     MPI_ERR_COMM);
        MPI_CHECK(MPI_Comm_free(&inter));
        MPI_CHECK(MPI_Comm_free(&half));
    }
}

static void expect_rank_or_arg(int rc, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_RANK || cls == MPI_ERR_ARG),
          "%s: returned %d (class %d), expected MPI_ERR_RANK or MPI_ERR_ARG", what, rc, cls);
}

/* A neighbour that is not a rank of the communicator (every rank passes
 * one): MPI_ERR_RANK, or MPI_ERR_ARG. MPICH 4.0.2 checks neither form. */
static void test_bad_ranks(void)
{
    int bad[1] = {wsize}, r0[1] = {wrank}, deg1[1] = {1};
    MPI_Comm g = MPI_COMM_NULL;
    expect_rank_or_arg(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 1,
                                                      r0, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                       "create_adjacent, source out of range");
    expect_rank_or_arg(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, r0, MPI_UNWEIGHTED, 1,
                                                      bad, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g),
                       "create_adjacent, destination out of range");
    expect_rank_or_arg(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, bad, deg1, r0, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &g),
                       "create, source out of range");
    expect_rank_or_arg(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, r0, deg1, bad, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &g),
                       "create, destination out of range");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 16, "at most 16 ranks");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_adjacent_ring(true);
    test_adjacent_ring(false);
    test_adjacent_order();
    test_general();
    test_isolated();
    test_self();
    test_dup();
    test_errors();
    if (!known_gaps)
        test_bad_ranks();
    MPI_CHECK(MPI_Finalize());
    if (wrank == 0)
        printf("dist_graph: %d ranks OK\n", wsize);
    return 0;
}
