/*
 * dist_graph.c — distributed graph topologies (MPI-3.0 §7.5.4):
 * MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create,
 * MPI_Dist_graph_neighbors(_count); and the copy of any topology when a
 * communicator is duplicated.
 *
 * Each process keeps only its own adjacency: in-neighbours (sources) and
 * out-neighbours (destinations), with weights when the graph is weighted.
 * The adjacent form keeps the lists in the order given, which the
 * neighbourhood collectives follow (coll_neighbor.c). The general form
 * sends every edge to both of its ends (one all-to-all of counts, one of
 * (peer, weight) pairs); each end lists its edges by the rank that named
 * them, then in the order that rank gave. `reorder` is accepted and
 * ignored: rank i of the new communicator is rank i of the old one.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static int unweighted_marker, weights_empty_marker;
int *const MPI_UNWEIGHTED = &unweighted_marker;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_marker;

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

/* An adjacency with room for the given degrees; NULL when out of memory. */
static struct pm_dist_graph *dgraph_alloc(int indegree, int outdegree, bool weighted)
{
    struct pm_dist_graph *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    size_t in = (size_t)(indegree > 0 ? indegree : 1), out = (size_t)(outdegree > 0 ? outdegree : 1);
    t->sources = malloc(in * sizeof(int));
    t->sourceweights = malloc(in * sizeof(int));
    t->destinations = malloc(out * sizeof(int));
    t->destweights = malloc(out * sizeof(int));
    if (!t->sources || !t->sourceweights || !t->destinations || !t->destweights) {
        pm_dist_graph_free(t);
        return NULL;
    }
    return t;
}

void pm_dist_graph_free(struct pm_dist_graph *t)
{
    if (!t)
        return;
    free(t->sources);
    free(t->sourceweights);
    free(t->destinations);
    free(t->destweights);
    free(t);
}

static struct pm_dist_graph *dgraph_copy(const struct pm_dist_graph *t)
{
    struct pm_dist_graph *n = dgraph_alloc(t->indegree, t->outdegree, t->weighted);
    if (!n)
        return NULL;
    memcpy(n->sources, t->sources, (size_t)t->indegree * sizeof(int));
    memcpy(n->sourceweights, t->sourceweights, (size_t)t->indegree * sizeof(int));
    memcpy(n->destinations, t->destinations, (size_t)t->outdegree * sizeof(int));
    memcpy(n->destweights, t->destweights, (size_t)t->outdegree * sizeof(int));
    return n;
}

bool pm_topo_copy(struct pm_comm *nc, const struct pm_comm *c)
{
    return !((c->cart && !(nc->cart = pm_cart_copy(c->cart))) ||
             (c->graph && !(nc->graph = pm_graph_copy(c->graph))) ||
             (c->dgraph && !(nc->dgraph = dgraph_copy(c->dgraph))));
}

/* Ranks all in [0, size); MPI_SUCCESS or the raised error. */
static int check_ranks(MPI_Comm comm, const char *fn, const char *what, const int *r, int n,
                       int size)
{
    if (n > 0 && !r)
        return pm_error(comm, MPI_ERR_ARG, "%s: %s is NULL", fn, what);
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= size)
            return pm_error(comm, MPI_ERR_RANK, "%s: %s[%d] = %d is not a rank (0..%d)", fn,
                            what, i, r[i], size - 1);
    return MPI_SUCCESS;
}

static int check_weights(MPI_Comm comm, const char *fn, const char *what, const int *w, int n)
{
    if (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) {
        if (w == MPI_WEIGHTS_EMPTY && n > 0)
            return pm_error(comm, MPI_ERR_ARG, "%s: %s is MPI_WEIGHTS_EMPTY for %d edges", fn,
                            what, n);
        return MPI_SUCCESS;
    }
    if (!w && n > 0)
        return pm_error(comm, MPI_ERR_ARG, "%s: %s is NULL (MPI_UNWEIGHTED is not)", fn, what);
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return pm_error(comm, MPI_ERR_ARG, "%s: %s[%d] = %d is negative", fn, what, i, w[i]);
    return MPI_SUCCESS;
}

/* The communicator of the new topology: a copy of c's group that gets t
 * (taken over, freed on failure). */
static int attach(MPI_Comm comm_old, struct pm_comm *c, struct pm_dist_graph *t,
                  MPI_Comm *out, const char *fn)
{
    struct pm_comm *nc;
    int rc = pm_comm_create_first(c, c->size, &nc);
    if (rc) {
        pm_dist_graph_free(t);
        return pm_comm_fail(comm_old, rc, fn);
    }
    nc->dgraph = t;
    *out = nc->handle;
    return MPI_SUCCESS;
}

/* What both constructors check first: the old communicator, the hints,
 * where the new one goes. */
static int common_checks(MPI_Comm comm_old, struct pm_comm *c, MPI_Info info, MPI_Comm *out,
                         const char *fn)
{
    if (out)
        *out = MPI_COMM_NULL;
    if (c->is_inter)
        return pm_error(comm_old, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!out)
        return pm_error(comm_old, MPI_ERR_ARG, "%s: comm_dist_graph is NULL", fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm_old, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    return MPI_SUCCESS;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    (void)reorder;
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm_old, fn);
    int rc = common_checks(comm_old, c, info, comm_dist_graph, fn);
    if (rc)
        return rc;
    if (indegree < 0 || outdegree < 0)
        return pm_error(comm_old, MPI_ERR_ARG, "%s: negative degree (in %d, out %d)", fn,
                        indegree, outdegree);
    if ((rc = check_ranks(comm_old, fn, "sources", sources, indegree, c->size)) ||
        (rc = check_ranks(comm_old, fn, "destinations", destinations, outdegree, c->size)) ||
        (rc = check_weights(comm_old, fn, "sourceweights", sourceweights, indegree)) ||
        (rc = check_weights(comm_old, fn, "destweights", destweights, outdegree)))
        return rc;
    bool weighted = sourceweights != MPI_UNWEIGHTED;
    struct pm_dist_graph *t = dgraph_alloc(indegree, outdegree, weighted);
    if (!t)
        return pm_error(comm_old, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < indegree; i++) {
        t->sources[i] = sources[i];
        t->sourceweights[i] = weighted ? sourceweights[i] : 1;
    }
    bool dweighted = destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < outdegree; i++) {
        t->destinations[i] = destinations[i];
        t->destweights[i] = dweighted ? destweights[i] : 1;
    }
    return attach(comm_old, c, t, comm_dist_graph, fn);
}
PM_WEAK(Dist_graph_create_adjacent)

/* An edge as sent to one of its ends: the other end, its weight, and
 * whether the receiver is its source (1) or its destination (0). */
enum { E_PEER, E_WEIGHT, E_OUT, E_INTS };

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    (void)reorder;
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm_old, fn);
    int rc = common_checks(comm_old, c, info, comm_dist_graph, fn);
    if (rc)
        return rc;
    if (n < 0)
        return pm_error(comm_old, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    if (n > 0 && (!degrees || !sources))
        return pm_error(comm_old, MPI_ERR_ARG, "%s: sources or degrees is NULL", fn);
    long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return pm_error(comm_old, MPI_ERR_ARG, "%s: degrees[%d] = %d is negative", fn, i,
                            degrees[i]);
        nedges += degrees[i];
    }
    if (nedges > (1L << 28))
        return pm_error(comm_old, MPI_ERR_ARG, "%s: %ld edges given by one process", fn, nedges);
    if ((rc = check_ranks(comm_old, fn, "sources", sources, n, c->size)) ||
        (rc = check_ranks(comm_old, fn, "destinations", destinations, (int)nedges, c->size)) ||
        (rc = check_weights(comm_old, fn, "weights", weights, (int)nedges)))
        return rc;

    /* Every edge to both ends; then whether any process gave weights. */
    int size = c->size;
    int *scounts = calloc((size_t)size, sizeof(int)), *rcounts = calloc((size_t)size, sizeof(int));
    int *sdispls = calloc((size_t)size, sizeof(int)), *rdispls = calloc((size_t)size, sizeof(int));
    int *fill = calloc((size_t)size, sizeof(int));
    int *sbuf = malloc((size_t)(2 * nedges * E_INTS + 1) * sizeof(int)), *rbuf = NULL;
    struct pm_dist_graph *t = NULL;
    rc = MPI_ERR_NO_MEM;
    if (!scounts || !rcounts || !sdispls || !rdispls || !fill || !sbuf)
        goto out;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scounts[sources[i]] += E_INTS;
            scounts[destinations[e]] += E_INTS;
        }
    for (int p = 1; p < size; p++)
        sdispls[p] = sdispls[p - 1] + scounts[p - 1];
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e];
            int w = weights != MPI_UNWEIGHTED && weights != MPI_WEIGHTS_EMPTY ? weights[e] : 1;
            int *to_s = sbuf + sdispls[s] + fill[s];
            fill[s] += E_INTS;
            to_s[E_PEER] = d, to_s[E_WEIGHT] = w, to_s[E_OUT] = 1;
            int *to_d = sbuf + sdispls[d] + fill[d];
            fill[d] += E_INTS;
            to_d[E_PEER] = s, to_d[E_WEIGHT] = w, to_d[E_OUT] = 0;
        }
    int weighted = weights != MPI_UNWEIGHTED, any_weighted = 0;
    if ((rc = PMPI_Alltoall(scounts, 1, MPI_INT, rcounts, 1, MPI_INT, comm_old)) ||
        (rc = PMPI_Allreduce(&weighted, &any_weighted, 1, MPI_INT, MPI_LOR, comm_old)))
        goto out;
    long total = 0;
    for (int p = 0; p < size; p++) {
        rdispls[p] = (int)total;
        total += rcounts[p];
    }
    rc = MPI_ERR_NO_MEM;
    if (total > (long)(1 << 30) || !(rbuf = malloc((size_t)(total + 1) * sizeof(int))))
        goto out;
    if ((rc = PMPI_Alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                             comm_old)))
        goto out;
    int in = 0, outd = 0;
    for (long i = 0; i < total; i += E_INTS)
        rbuf[i + E_OUT] ? outd++ : in++;
    rc = MPI_ERR_NO_MEM;
    if (!(t = dgraph_alloc(in, outd, any_weighted)))
        goto out;
    in = outd = 0;
    for (long i = 0; i < total; i += E_INTS) {
        if (rbuf[i + E_OUT]) {
            t->destinations[outd] = rbuf[i + E_PEER];
            t->destweights[outd++] = rbuf[i + E_WEIGHT];
        } else {
            t->sources[in] = rbuf[i + E_PEER];
            t->sourceweights[in++] = rbuf[i + E_WEIGHT];
        }
    }
    rc = MPI_SUCCESS;
out:
    free(scounts), free(rcounts), free(sdispls), free(rdispls), free(fill), free(sbuf), free(rbuf);
    if (rc == MPI_ERR_NO_MEM)
        return pm_error(comm_old, rc, "%s: out of memory", fn);
    if (rc)
        return pm_comm_fail(comm_old, rc, fn);
    return attach(comm_old, c, t, comm_dist_graph, fn);
}
PM_WEAK(Dist_graph_create)

/* The distributed graph of comm, or raise MPI_ERR_TOPOLOGY. */
#define GET_DGRAPH(var, c, comm, fname)                                                    \
    struct pm_dist_graph *var = (c)->dgraph;                                               \
    if (!var)                                                                              \
    return pm_error(comm, MPI_ERR_TOPOLOGY,                                                \
                    "%s: the communicator has no distributed graph topology", fname)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_DGRAPH(t, c, comm, fn);
    if (!indegree || !outdegree || !weighted)
        return pm_error(comm, MPI_ERR_ARG, "%s: indegree, outdegree or weighted is NULL", fn);
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
PM_WEAK(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    GET_DGRAPH(t, c, comm, fn);
    if (maxindegree < t->indegree || maxoutdegree < t->outdegree)
        return pm_error(comm, MPI_ERR_ARG,
                        "%s: room for %d in- and %d out-neighbours, %d and %d needed", fn,
                        maxindegree, maxoutdegree, t->indegree, t->outdegree);
    if ((t->indegree && !sources) || (t->outdegree && !destinations))
        return pm_error(comm, MPI_ERR_ARG, "%s: sources or destinations is NULL", fn);
    /* weights only for a weighted graph, and where the caller gave room */
    bool sw = t->weighted && sourceweights && sourceweights != MPI_UNWEIGHTED &&
              sourceweights != MPI_WEIGHTS_EMPTY;
    bool dw = t->weighted && destweights && destweights != MPI_UNWEIGHTED &&
              destweights != MPI_WEIGHTS_EMPTY;
    for (int i = 0; i < t->indegree; i++) {
        sources[i] = t->sources[i];
        if (sw)
            sourceweights[i] = t->sourceweights[i];
    }
    for (int i = 0; i < t->outdegree; i++) {
        destinations[i] = t->destinations[i];
        if (dw)
            destweights[i] = t->destweights[i];
    }
    return MPI_SUCCESS;
}
PM_WEAK(Dist_graph_neighbors)
