/*
 * graph_topo.c — graph topologies: MPI_Graph_create on a ring with chords
 * over all ranks and on fewer nodes than ranks (the others get
 * MPI_COMM_NULL), the queries (Topo_test, Graphdims_get, Graph_get,
 * Graph_neighbors(_count), Graph_map), a dup keeping the graph, messages
 * along every edge, and the errors (bad edges, a rank outside the graph,
 * a communicator without a graph).
 */
#include <stdbool.h>

#include "mpitest.h"

static int wrank, wsize;

/* A ring, plus a chord to rank + n/2 when n is even (so that the graph is
 * symmetric), without self loops or repeats: index/edges. */
static int build_graph(int n, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < n; i++) {
        int cand[3] = {(i + 1) % n, (i - 1 + n) % n, (i + n / 2) % n};
        for (int k = 0; k < (n % 2 ? 2 : 3); k++) {
            bool dup = cand[k] == i;
            for (int j = (i ? index[i - 1] : 0); j < e && !dup; j++)
                dup = edges[j] == cand[k];
            if (!dup)
                edges[e++] = cand[k];
        }
        index[i] = e;
    }
    return e;
}

static void check_graph_comm(MPI_Comm g, int n, const int *index, const int *edges, int nedges)
{
    int status = -1, nn = -1, ne = -1, r;
    MPI_CHECK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH, "Topo_test: %d", status);
    MPI_CHECK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == n && ne == nedges, "Graphdims_get: %d nodes, %d edges", nn, ne);
    int gi[64], ge[192];
    MPI_CHECK(MPI_Graph_get(g, n, nedges, gi, ge));
    CHECK(!memcmp(gi, index, (size_t)n * sizeof *gi), "Graph_get: index differs");
    CHECK(!memcmp(ge, edges, (size_t)nedges * sizeof *ge), "Graph_get: edges differ");
    MPI_CHECK(MPI_Comm_rank(g, &r));
    int cnt = -1, nb[3];
    MPI_CHECK(MPI_Graph_neighbors_count(g, r, &cnt));
    int first = r ? index[r - 1] : 0;
    CHECK(cnt == index[r] - first, "neighbors_count of %d: %d", r, cnt);
    MPI_CHECK(MPI_Graph_neighbors(g, r, 3, nb));
    for (int k = 0; k < cnt; k++)
        CHECK(nb[k] == edges[first + k], "neighbor %d of %d: %d", k, r, nb[k]);
    /* a message along each edge, both ways (the graph is symmetric) */
    MPI_Request rq[6];
    int out[3], in[3];
    for (int k = 0; k < cnt; k++) {
        out[k] = 1000 * r + nb[k];
        MPI_CHECK(MPI_Irecv(&in[k], 1, MPI_INT, nb[k], 9, g, &rq[k]));
        MPI_CHECK(MPI_Isend(&out[k], 1, MPI_INT, nb[k], 9, g, &rq[cnt + k]));
    }
    MPI_CHECK(MPI_Waitall(2 * cnt, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < cnt; k++)
        CHECK(in[k] == 1000 * nb[k] + r, "from neighbor %d: %d", nb[k], in[k]);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 64, "at most 64 ranks");
    int index[64], edges[192];

    /* all ranks */
    int ne = build_graph(wsize, index, edges);
    MPI_Comm g, gd;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, wsize, index, edges, 1, &g));
    CHECK(g != MPI_COMM_NULL, "every rank is a node");
    check_graph_comm(g, wsize, index, edges, ne);
    MPI_CHECK(MPI_Comm_dup(g, &gd));
    check_graph_comm(gd, wsize, index, edges, ne);
    int newrank = -2;
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, wsize, index, edges, &newrank));
    CHECK(newrank == wrank, "Graph_map: %d", newrank);

    /* errors, returned */
    MPI_CHECK(MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cnt, cls, rc = MPI_Graph_neighbors_count(g, wsize, &cnt);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "neighbors_count of rank %d: class %d", wsize, cls);
    int bad_edges[1] = {wsize};
    int one_index[1] = {1};
    MPI_Comm none = MPI_COMM_NULL;
    rc = MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, bad_edges, 0, &none);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG && none == MPI_COMM_NULL, "edge to node %d: class %d", wsize, cls);
    rc = MPI_Graphdims_get(MPI_COMM_WORLD, &cnt, &cnt);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TOPOLOGY, "Graphdims_get without a graph: class %d", cls);
    int status = -1;
    MPI_CHECK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "Topo_test of COMM_WORLD: %d", status);

    /* fewer nodes than ranks: a pair (or one node) */
    int m = wsize >= 2 ? 2 : 1;
    int pi[2] = {m - 1, 2 * (m - 1)}, pe[2] = {1, 0};
    MPI_Comm p;
    MPI_CHECK(MPI_Graph_create(MPI_COMM_WORLD, m, pi, pe, 0, &p));
    if (wrank < m) {
        CHECK(p != MPI_COMM_NULL, "node %d got MPI_COMM_NULL", wrank);
        check_graph_comm(p, m, pi, pe, pi[m - 1]);
        MPI_CHECK(MPI_Comm_free(&p));
    } else {
        CHECK(p == MPI_COMM_NULL, "rank %d is not a node but got a communicator", wrank);
    }
    MPI_CHECK(MPI_Graph_map(MPI_COMM_WORLD, m, pi, pe, &newrank));
    CHECK(newrank == (wrank < m ? wrank : MPI_UNDEFINED), "Graph_map with %d nodes: %d", m,
          newrank);

    MPI_CHECK(MPI_Comm_free(&gd));
    MPI_CHECK(MPI_Comm_free(&g));
    MPI_CHECK(MPI_Finalize());
    if (wrank == 0)
        printf("graph_topo: %d ranks: OK\n", wsize);
    return 0;
}
