/*
 * coll_neighbor.c — neighbourhood collectives (MPI-3.0 §7.6):
 * MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w) and their
 * nonblocking forms, on Cartesian, graph and distributed graph topologies.
 *
 * A call is one schedule (coll.h) of a receive from every in-neighbour and
 * a send to every out-neighbour, all in flight at once; MPI_PROC_NULL
 * neighbours (edges of a non-periodic grid) are skipped and their receive
 * blocks left untouched. Messages carry the call's collective sequence
 * number, and messages between one pair of processes match in the order
 * posted, which gives the pairing of a multigraph's repeated edges.
 *
 * Cartesian neighbours are, for each dimension d, the source then the
 * destination of MPI_Cart_shift(d, 1). When both are one process (a
 * periodic dimension of size 1 or 2), the block sent towards the
 * destination must land in the receiver's "source" block: the sends of a
 * dimension are therefore posted destination first, the receives source
 * first, so that FIFO matching pairs them that way.
 */
#include <stdlib.h>

#include "coll.h"
#include "comm.h"

enum { NB_ALLGATHER, NB_ALLGATHERV, NB_ALLTOALL, NB_ALLTOALLV, NB_ALLTOALLW };

struct nbr_args {
    const char *fn;
    MPI_Comm comm;
    bool nonblocking;
    int kind;
    const void *sbuf;
    MPI_Count scount;
    struct pm_counts scounts;
    struct pm_displs sdispls; /* elements (v), bytes (w) */
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    MPI_Count rcount;
    struct pm_counts rcounts;
    struct pm_displs rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
};

/* The neighbours of this process in its communicator's topology. */
struct nbrs {
    int nin, nout;
    const int *in, *out;
    bool cart;  /* send order: destination before source in each dimension */
    int *owned; /* storage of in/out when computed here (Cartesian) */
};

bool pm_topo_degrees(const struct pm_comm *c, int *nin, int *nout)
{
    if (c->cart) {
        *nin = *nout = 2 * c->cart->ndims;
    } else if (c->graph) {
        const struct pm_graph *g = c->graph;
        *nin = *nout = g->index[c->rank] - (c->rank ? g->index[c->rank - 1] : 0);
    } else if (c->dgraph) {
        *nin = c->dgraph->indegree;
        *nout = c->dgraph->outdegree;
    } else {
        *nin = *nout = 0;
        return false;
    }
    return true;
}

static int get_neighbors(struct pm_comm *c, const char *fn, struct nbrs *n)
{
    *n = (struct nbrs){0};
    if (c->is_inter)
        return pm_error(c->handle, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    if (!pm_topo_degrees(c, &n->nin, &n->nout))
        return pm_error(c->handle, MPI_ERR_TOPOLOGY,
                        "%s: the communicator has no topology (Cartesian, graph or distributed "
                        "graph)", fn);
    if (c->cart) {
        int nd = c->cart->ndims;
        n->owned = malloc((size_t)(2 * nd + 1) * sizeof(int));
        if (!n->owned)
            return pm_error(c->handle, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        for (int d = 0; d < nd; d++) {
            int rc = PMPI_Cart_shift(c->handle, d, 1, &n->owned[2 * d], &n->owned[2 * d + 1]);
            if (rc) {
                free(n->owned);
                return rc;
            }
        }
        n->in = n->out = n->owned;
        n->cart = true;
    } else if (c->graph) {
        n->in = n->out = c->graph->edges + (c->rank ? c->graph->index[c->rank - 1] : 0);
    } else {
        n->in = c->dgraph->sources;
        n->out = c->dgraph->destinations;
    }
    return MPI_SUCCESS;
}

/* The out-neighbour slot sent i-th. */
static int send_slot(const struct nbrs *n, int i)
{
    return n->cart ? i ^ 1 : i;
}

struct blk {
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
};

static MPI_Aint extent(MPI_Datatype t)
{
    return pm_type_get(t)->extent;
}

static struct blk send_blk(const struct nbr_args *a, int k)
{
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLGATHERV:
        return (struct blk){(void *)a->sbuf, a->scount, a->stype};
    case NB_ALLTOALL:
        return (struct blk){pm_at(a->sbuf, (MPI_Aint)k * a->scount * extent(a->stype)), a->scount,
                            a->stype};
    case NB_ALLTOALLV:
        return (struct blk){pm_at(a->sbuf, pm_dsp(a->sdispls, k) * extent(a->stype)),
                            pm_cnt(a->scounts, k), a->stype};
    default: /* byte displacements; the type of an empty block is not looked at */
        return (struct blk){pm_at(a->sbuf, pm_dsp(a->sdispls, k)), pm_cnt(a->scounts, k),
                            pm_cnt(a->scounts, k) ? a->stypes[k] : MPI_BYTE};
    }
}

static struct blk recv_blk(const struct nbr_args *a, int k)
{
    switch (a->kind) {
    case NB_ALLGATHER:
    case NB_ALLTOALL:
        return (struct blk){pm_at(a->rbuf, (MPI_Aint)k * a->rcount * extent(a->rtype)), a->rcount,
                            a->rtype};
    case NB_ALLGATHERV:
    case NB_ALLTOALLV:
        return (struct blk){pm_at(a->rbuf, pm_dsp(a->rdispls, k) * extent(a->rtype)),
                            pm_cnt(a->rcounts, k), a->rtype};
    default:
        return (struct blk){pm_at(a->rbuf, pm_dsp(a->rdispls, k)), pm_cnt(a->rcounts, k),
                            pm_cnt(a->rcounts, k) ? a->rtypes[k] : MPI_BYTE};
    }
}

/* One side's counts, types and buffer over its n blocks. */
static int check_side(const struct nbr_args *a, struct pm_comm *c, bool send, int n)
{
    const char *fn = a->fn, *sr = send ? "send" : "recv";
    bool per_block = send ? a->kind >= NB_ALLTOALLV : a->kind != NB_ALLGATHER && a->kind != NB_ALLTOALL;
    const void *buf = send ? a->sbuf : a->rbuf;
    if (buf == MPI_IN_PLACE)
        return pm_error(c->handle, MPI_ERR_BUFFER,
                        "%s: MPI_IN_PLACE is not allowed in neighbourhood collectives", fn);
    if (!per_block)
        return pm_coll_check_buf(fn, c, send ? a->scount : a->rcount, send ? a->stype : a->rtype);
    struct pm_counts counts = send ? a->scounts : a->rcounts;
    struct pm_displs displs = send ? a->sdispls : a->rdispls;
    const MPI_Datatype *types = send ? a->stypes : a->rtypes;
    if (n > 0 && (pm_counts_null(counts) || pm_displs_null(displs) ||
                  (a->kind == NB_ALLTOALLW && !types)))
        return pm_error(c->handle, MPI_ERR_ARG, "%s: %scounts, the displacements%s is NULL", fn,
                        sr, a->kind == NB_ALLTOALLW ? " or the datatypes" : "");
    return pm_coll_check_counts(fn, c, send ? "sendcounts" : "recvcounts", counts, n,
                                send ? a->stype : a->rtype,
                                a->kind == NB_ALLTOALLW ? types : NULL);
}

static int nbr_do(struct nbr_args *a, MPI_Request *request)
{
    struct pm_comm *c;
    int rc = pm_coll_check_comm(a->fn, a->comm, &c);
    if (rc)
        return rc;
    if (request)
        *request = MPI_REQUEST_NULL;
    struct nbrs n;
    if ((rc = get_neighbors(c, a->fn, &n)))
        return rc;
    if ((rc = check_side(a, c, true, n.nout)) || (rc = check_side(a, c, false, n.nin)))
        goto out;
    if (a->nonblocking && !request) {
        rc = pm_error(c->handle, MPI_ERR_ARG, "%s: request is NULL", a->fn);
        goto out;
    }
    struct pm_sched *s = pm_sched_create(c);
    if (!s) {
        rc = pm_error(c->handle, MPI_ERR_NO_MEM, "%s: out of memory", a->fn);
        goto out;
    }
    for (int k = 0; k < n.nin && !rc; k++) {
        if (n.in[k] == MPI_PROC_NULL)
            continue;
        struct blk b = recv_blk(a, k);
        rc = pm_sched_recv(s, b.buf, b.count, b.type, n.in[k]);
    }
    for (int i = 0; i < n.nout && !rc; i++) {
        int k = send_slot(&n, i);
        if (n.out[k] == MPI_PROC_NULL)
            continue;
        struct blk b = send_blk(a, k);
        rc = pm_sched_send(s, b.buf, b.count, b.type, n.out[k]);
    }
    if (rc) {
        pm_sched_discard(s);
        rc = pm_error(c->handle, rc, "%s: cannot build the schedule", a->fn);
        goto out;
    }
    rc = a->nonblocking ? pm_sched_start(s, request) : pm_sched_run(s);
    if (rc)
        rc = pm_error(c->handle, rc, "%s: %s failed", a->fn,
                      a->nonblocking ? "starting the operation" : "the operation");
out:
    free(n.owned);
    return rc;
}

/* ---- Entry points ---------------------------------------------------------- */

/* The body of an entry point: its arguments into a struct nbr_args, for
 * nbr_do (req: NULL for the blocking forms, whose calls run to the end). */
#define NB_ENTRY(Name, fname, req, ...)                                           \
    {                                                                             \
        PM_CHECK_INIT(fname);                                                     \
        struct nbr_args a = {.fn = fname, .comm = comm, .nonblocking = fname[4] == 'I', \
                             __VA_ARGS__};                                        \
        return nbr_do(&a, req);                                                   \
    }                                                                             \
    PM_WEAK(Name)

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_NEIGHBOR_API(SUF, CT, DT)                                                              \
    int PMPI_Neighbor_allgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,    \
                                     void *recvbuf, CT recvcount, MPI_Datatype recvtype,          \
                                     MPI_Comm comm)                                               \
    NB_ENTRY(Neighbor_allgather##SUF, "MPI_Neighbor_allgather" #SUF, NULL, .kind = NB_ALLGATHER,  \
             .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,            \
             .rcount = recvcount, .rtype = recvtype)                                              \
                                                                                                  \
    int PMPI_Ineighbor_allgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,   \
                                      void *recvbuf, CT recvcount, MPI_Datatype recvtype,         \
                                      MPI_Comm comm, MPI_Request *request)                        \
    NB_ENTRY(Ineighbor_allgather##SUF, "MPI_Ineighbor_allgather" #SUF, request,                   \
             .kind = NB_ALLGATHER, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,       \
             .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype)                             \
                                                                                                  \
    int PMPI_Neighbor_allgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,   \
                                      void *recvbuf, const CT recvcounts[], const DT displs[],    \
                                      MPI_Datatype recvtype, MPI_Comm comm)                       \
    NB_ENTRY(Neighbor_allgatherv##SUF, "MPI_Neighbor_allgatherv" #SUF, NULL,                      \
             .kind = NB_ALLGATHERV, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,      \
             .rbuf = recvbuf, .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(displs),     \
             .rtype = recvtype)                                                                   \
                                                                                                  \
    int PMPI_Ineighbor_allgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,  \
                                       void *recvbuf, const CT recvcounts[], const DT displs[],   \
                                       MPI_Datatype recvtype, MPI_Comm comm,                      \
                                       MPI_Request *request)                                      \
    NB_ENTRY(Ineighbor_allgatherv##SUF, "MPI_Ineighbor_allgatherv" #SUF, request,                 \
             .kind = NB_ALLGATHERV, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,      \
             .rbuf = recvbuf, .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(displs),     \
             .rtype = recvtype)                                                                   \
                                                                                                  \
    int PMPI_Neighbor_alltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,     \
                                    void *recvbuf, CT recvcount, MPI_Datatype recvtype,           \
                                    MPI_Comm comm)                                                \
    NB_ENTRY(Neighbor_alltoall##SUF, "MPI_Neighbor_alltoall" #SUF, NULL, .kind = NB_ALLTOALL,     \
             .sbuf = sendbuf, .scount = sendcount, .stype = sendtype, .rbuf = recvbuf,            \
             .rcount = recvcount, .rtype = recvtype)                                              \
                                                                                                  \
    int PMPI_Ineighbor_alltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,    \
                                     void *recvbuf, CT recvcount, MPI_Datatype recvtype,          \
                                     MPI_Comm comm, MPI_Request *request)                         \
    NB_ENTRY(Ineighbor_alltoall##SUF, "MPI_Ineighbor_alltoall" #SUF, request,                     \
             .kind = NB_ALLTOALL, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,        \
             .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype)                             \
                                                                                                  \
    int PMPI_Neighbor_alltoallv##SUF(const void *sendbuf, const CT sendcounts[],                  \
                                     const DT sdispls[], MPI_Datatype sendtype, void *recvbuf,    \
                                     const CT recvcounts[], const DT rdispls[],                   \
                                     MPI_Datatype recvtype, MPI_Comm comm)                        \
    NB_ENTRY(Neighbor_alltoallv##SUF, "MPI_Neighbor_alltoallv" #SUF, NULL, .kind = NB_ALLTOALLV,  \
             .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts), .sdispls = PM_DISPLS(sdispls),    \
             .stype = sendtype, .rbuf = recvbuf, .rcounts = PM_COUNTS(recvcounts),                \
             .rdispls = PM_DISPLS(rdispls), .rtype = recvtype)                                    \
                                                                                                  \
    int PMPI_Ineighbor_alltoallv##SUF(const void *sendbuf, const CT sendcounts[],                 \
                                      const DT sdispls[], MPI_Datatype sendtype, void *recvbuf,   \
                                      const CT recvcounts[], const DT rdispls[],                  \
                                      MPI_Datatype recvtype, MPI_Comm comm,                       \
                                      MPI_Request *request)                                       \
    NB_ENTRY(Ineighbor_alltoallv##SUF, "MPI_Ineighbor_alltoallv" #SUF, request,                   \
             .kind = NB_ALLTOALLV, .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),             \
             .sdispls = PM_DISPLS(sdispls), .stype = sendtype, .rbuf = recvbuf,                   \
             .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls), .rtype = recvtype)  \
                                                                                                  \
    int PMPI_Neighbor_alltoallw##SUF(const void *sendbuf, const CT sendcounts[],                  \
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],    \
                                     void *recvbuf, const CT recvcounts[],                        \
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],    \
                                     MPI_Comm comm)                                               \
    NB_ENTRY(Neighbor_alltoallw##SUF, "MPI_Neighbor_alltoallw" #SUF, NULL, .kind = NB_ALLTOALLW,  \
             .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts), .sdispls = PM_DISPLS(sdispls),    \
             .stypes = sendtypes, .rbuf = recvbuf, .rcounts = PM_COUNTS(recvcounts),              \
             .rdispls = PM_DISPLS(rdispls), .rtypes = recvtypes)                                  \
                                                                                                  \
    int PMPI_Ineighbor_alltoallw##SUF(const void *sendbuf, const CT sendcounts[],                 \
                                      const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],   \
                                      void *recvbuf, const CT recvcounts[],                       \
                                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],   \
                                      MPI_Comm comm, MPI_Request *request)                        \
    NB_ENTRY(Ineighbor_alltoallw##SUF, "MPI_Ineighbor_alltoallw" #SUF, request,                   \
             .kind = NB_ALLTOALLW, .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),             \
             .sdispls = PM_DISPLS(sdispls), .stypes = sendtypes, .rbuf = recvbuf,                 \
             .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls),                     \
             .rtypes = recvtypes)

PM_NEIGHBOR_API(, int, int)
PM_NEIGHBOR_API(_c, MPI_Count, MPI_Aint)
