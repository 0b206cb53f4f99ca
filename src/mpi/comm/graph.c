/*
 * graph.c — graph topologies (MPI-1): MPI_Graph_create/get/map,
 * MPI_Graphdims_get, MPI_Graph_neighbors(_count).
 *
 * The graph is kept as given (index[] and edges[], the standard's
 * compressed adjacency lists). `reorder` is accepted and ignored: node i
 * is rank i of the old communicator, and ranks from nnodes on get
 * MPI_COMM_NULL, as with a Cartesian grid smaller than the communicator.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

/* The graph topology of comm, or raise MPI_ERR_TOPOLOGY. */
#define GET_GRAPH(var, c, comm, fname)                                                   \
    struct pm_graph *var = (c)->graph;                                                   \
    if (!var)                                                                            \
    return pm_error(comm, MPI_ERR_TOPOLOGY, "%s: the communicator has no graph topology", \
                    fname)

struct pm_graph *pm_graph_new(int nnodes, const int *index, const int *edges)
{
    struct pm_graph *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->nnodes = nnodes;
    t->index = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof *t->index);
    t->edges = malloc((size_t)(nedges > 0 ? nedges : 1) * sizeof *t->edges);
    if (!t->index || !t->edges) {
        pm_graph_free(t);
        return NULL;
    }
    if (nnodes > 0)
        memcpy(t->index, index, (size_t)nnodes * sizeof *index);
    if (nedges > 0)
        memcpy(t->edges, edges, (size_t)nedges * sizeof *edges);
    return t;
}

struct pm_graph *pm_graph_copy(const struct pm_graph *t)
{
    return pm_graph_new(t->nnodes, t->index, t->edges);
}

void pm_graph_free(struct pm_graph *t)
{
    if (!t)
        return;
    free(t->index);
    free(t->edges);
    free(t);
}

static int graph_nedges(const struct pm_graph *t)
{
    return t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
}

/* Check nnodes, index and edges of Graph_create and Graph_map. */
static int check_graph(MPI_Comm comm, int size, int nnodes, const int index[], const int edges[],
                       const char *fn)
{
    if (nnodes < 0 || nnodes > size)
        return pm_error(comm, MPI_ERR_ARG,
                        "%s: nnodes = %d is not between 0 and the communicator's size (%d)", fn,
                        nnodes, size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    if (!index)
        return pm_error(comm, MPI_ERR_ARG, "%s: index is NULL", fn);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return pm_error(comm, MPI_ERR_ARG,
                            "%s: index[%d] = %d is below the previous entry (or negative)", fn, i,
                            index[i]);
    int nedges = index[nnodes - 1];
    if (nedges > 0 && !edges)
        return pm_error(comm, MPI_ERR_ARG, "%s: edges is NULL", fn);
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return pm_error(comm, MPI_ERR_ARG, "%s: edges[%d] = %d is not a node (0..%d)", fn, e,
                            edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    (void)reorder;
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm_old, fn);
    if (comm_graph)
        *comm_graph = MPI_COMM_NULL;
    if (c->is_inter)
        return pm_error(comm_old, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!comm_graph)
        return pm_error(comm_old, MPI_ERR_ARG, "%s: comm_graph is NULL", fn);
    int rc = check_graph(comm_old, c->size, nnodes, index, edges, fn);
    if (rc)
        return rc;
    /* The first nnodes ranks, in order, are the nodes (collective even
     * when nnodes is 0: everyone gets MPI_COMM_NULL). */
    struct pm_comm *nc;
    rc = pm_comm_create_first(c, nnodes, &nc);
    if (rc)
        return pm_comm_fail(comm_old, rc, fn);
    if (nc) {
        nc->graph = pm_graph_new(nnodes, index, edges);
        if (!nc->graph) {
            pm_comm_discard(nc);
            return pm_error(comm_old, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        }
        *comm_graph = nc->handle;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Graph_create)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_GRAPH(t, c, comm, fn);
    if (!nnodes || !nedges)
        return pm_error(comm, MPI_ERR_ARG, "%s: NULL argument", fn);
    *nnodes = t->nnodes;
    *nedges = graph_nedges(t);
    return MPI_SUCCESS;
}
PM_WEAK(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_GRAPH(t, c, comm, fn);
    if (maxindex < 0 || maxedges < 0)
        return pm_error(comm, MPI_ERR_ARG, "%s: maxindex %d or maxedges %d is negative", fn,
                        maxindex, maxedges);
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int nedges = graph_nedges(t);
    int ne = maxedges < nedges ? maxedges : nedges;
    if ((ni > 0 && !index) || (ne > 0 && !edges))
        return pm_error(comm, MPI_ERR_ARG, "%s: index or edges is NULL", fn);
    if (ni > 0)
        memcpy(index, t->index, (size_t)ni * sizeof *index);
    if (ne > 0)
        memcpy(edges, t->edges, (size_t)ne * sizeof *edges);
    return MPI_SUCCESS;
}
PM_WEAK(Graph_get)

/* Neighbors of `rank`: edges[first .. first + *n). */
static int neighbors_of(MPI_Comm comm, const struct pm_graph *t, int rank, int *first, int *n,
                        const char *fn)
{
    if (rank < 0 || rank >= t->nnodes)
        return pm_error(comm, MPI_ERR_RANK, "%s: rank %d is not a node of the graph (0..%d)", fn,
                        rank, t->nnodes - 1);
    *first = rank ? t->index[rank - 1] : 0;
    *n = t->index[rank] - *first;
    return MPI_SUCCESS;
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_GRAPH(t, c, comm, fn);
    if (!nneighbors)
        return pm_error(comm, MPI_ERR_ARG, "%s: nneighbors is NULL", fn);
    int first = 0;
    return neighbors_of(comm, t, rank, &first, nneighbors, fn);
}
PM_WEAK(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_GRAPH(t, c, comm, fn);
    int first = 0, n = 0;
    int rc = neighbors_of(comm, t, rank, &first, &n, fn);
    if (rc)
        return rc;
    if (maxneighbors < 0)
        return pm_error(comm, MPI_ERR_ARG, "%s: maxneighbors = %d is negative", fn,
                        maxneighbors);
    if (n > maxneighbors)
        n = maxneighbors;
    if (n > 0 && !neighbors)
        return pm_error(comm, MPI_ERR_ARG, "%s: neighbors is NULL", fn);
    if (n > 0)
        memcpy(neighbors, t->edges + first, (size_t)n * sizeof *neighbors);
    return MPI_SUCCESS;
}
PM_WEAK(Graph_neighbors)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (c->is_inter)
        return pm_error(comm, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!newrank)
        return pm_error(comm, MPI_ERR_ARG, "%s: newrank is NULL", fn);
    int rc = check_graph(comm, c->size, nnodes, index, edges, fn);
    if (rc)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED; /* as Graph_create lays it out */
    return MPI_SUCCESS;
}
PM_WEAK(Graph_map)
