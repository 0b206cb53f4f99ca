/*
 * coll_persistent.c — persistent collectives (MPI-4.0 §6.13):
 * MPI_Barrier_init, MPI_Bcast_init, ..., MPI_Neighbor_alltoallw_init.
 *
 * The init call is collective like the operation (every rank calls the
 * inits in the same order): it reserves one number of the communicator's
 * collective sequence, keeps the arguments and returns an inactive
 * persistent request (persistent.c). Each MPI_Start runs the nonblocking
 * collective with those arguments under the reserved number
 * (pm_coll_forced_seq), so the messages of every start carry the same tag
 * on every rank whatever else was started in between, as MPICH does; a
 * start cannot overlap the previous one (it must have completed), and
 * per-peer ordering keeps successive starts apart. The argument checks are
 * the nonblocking call's, at each start.
 *
 * Derived datatypes are duplicated at init (a private handle), so the user
 * may free theirs while the request lives, as with any pending operation.
 * Count and displacement arrays are copied at init too (where they are
 * significant): mpi4py, for one, passes arrays it frees when the init
 * returns (its large-count fallbacks convert them into temporaries). The
 * copies are wide (MPI_Count counts, MPI_Aint displacements) whichever
 * form the init took, so every start runs the operation's _c form.
 */
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm.h"

enum pc_kind {
    PC_BARRIER, PC_BCAST, PC_GATHER, PC_GATHERV, PC_SCATTER, PC_SCATTERV, PC_ALLGATHER,
    PC_ALLGATHERV, PC_ALLTOALL, PC_ALLTOALLV, PC_ALLTOALLW, PC_REDUCE, PC_ALLREDUCE,
    PC_REDUCE_SCATTER, PC_REDUCE_SCATTER_BLOCK, PC_SCAN, PC_EXSCAN, PC_NB_ALLGATHER,
    PC_NB_ALLGATHERV, PC_NB_ALLTOALL, PC_NB_ALLTOALLV, PC_NB_ALLTOALLW
};

struct pm_pcoll {
    enum pc_kind kind;
    const char *fname;
    MPI_Comm comm;
    uint32_t seq;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    int root;
    /* the caller's arrays until make(), then our wide copies (NULL where
     * not significant) */
    struct pm_counts scounts, rcounts;
    struct pm_displs sdispls, rdispls;
    MPI_Datatype stype, rtype;
    MPI_Datatype *stypes, *rtypes;          /* alltoallw: our duplicates */
    int ntypes_s, ntypes_r;                 /* ... how many */
    MPI_Op op;
    void *arrays;                           /* our copies of the count arrays */
};

/* Our own handle for a derived type (a duplicate), the predefined as is. */
static int keep_type(MPI_Datatype in, MPI_Datatype *out)
{
    struct pm_datatype *t = pm_type_get(in);
    if (!t || t->predefined) {
        *out = in; /* invalid ones are reported at start by the operation */
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(in, out);
}

static void drop_type(MPI_Datatype *t)
{
    struct pm_datatype *o = pm_type_get(*t);
    if (o && !o->predefined)
        PMPI_Type_free(t);
}

static int keep_types(const MPI_Datatype *in, int n, MPI_Datatype **out)
{
    if (!in || n <= 0) {
        *out = NULL;
        return MPI_SUCCESS;
    }
    MPI_Datatype *a = calloc((size_t)n, sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++) {
        int rc = keep_type(in[i], &a[i]);
        if (rc != MPI_SUCCESS) {
            for (int j = 0; j < i; j++)
                drop_type(&a[j]);
            free(a);
            return rc;
        }
    }
    *out = a;
    return MPI_SUCCESS;
}

void pm_pcoll_free(struct pm_pcoll *pc)
{
    if (!pc)
        return;
    drop_type(&pc->stype);
    drop_type(&pc->rtype);
    for (int i = 0; pc->stypes && i < pc->ntypes_s; i++)
        drop_type(&pc->stypes[i]);
    for (int i = 0; pc->rtypes && i < pc->ntypes_r; i++)
        drop_type(&pc->rtypes[i]);
    free(pc->stypes);
    free(pc->rtypes);
    free(pc->arrays);
    free(pc);
}

/* Wide copies of n counts and n displacements (NULL where the caller
 * passed none), taken from *at, which advances. */
static struct pm_counts take_counts(struct pm_counts in, int n, char **at)
{
    if (pm_counts_null(in) || n <= 0)
        return PM_NO_COUNTS;
    MPI_Count *copy = (MPI_Count *)*at;
    for (int i = 0; i < n; i++)
        copy[i] = pm_cnt(in, i);
    *at += (size_t)n * sizeof *copy;
    return PM_COUNTS((const MPI_Count *)copy);
}

static struct pm_displs take_displs(struct pm_displs in, int n, char **at)
{
    if (pm_displs_null(in) || n <= 0)
        return PM_NO_DISPLS;
    MPI_Aint *copy = (MPI_Aint *)*at;
    for (int i = 0; i < n; i++)
        copy[i] = pm_dsp(in, i);
    *at += (size_t)n * sizeof *copy;
    return PM_DISPLS((const MPI_Aint *)copy);
}

/* Replace the count and displacement arrays by our wide copies: ns and nr
 * elements on the send and receive sides (0 where not significant). */
static int keep_arrays(struct pm_pcoll *pc, int ns, int nr)
{
    ns = ns > 0 ? ns : 0;
    nr = nr > 0 ? nr : 0;
    _Static_assert(sizeof(MPI_Count) == sizeof(MPI_Aint), "one alignment for both");
    size_t bytes = (size_t)(ns + nr) * (sizeof(MPI_Count) + sizeof(MPI_Aint));
    char *at = bytes ? malloc(bytes) : NULL;
    if (bytes && !at)
        return MPI_ERR_NO_MEM;
    pc->arrays = at;
    pc->scounts = take_counts(pc->scounts, ns, &at);
    pc->sdispls = take_displs(pc->sdispls, ns, &at);
    pc->rcounts = take_counts(pc->rcounts, nr, &at);
    pc->rdispls = take_displs(pc->rdispls, nr, &at);
    return MPI_SUCCESS;
}

/* How many elements the arrays (counts, displacements, alltoallw types) of
 * pc's operation have here, on the send and the receive side. */
static void array_lengths(const struct pm_pcoll *pc, const struct pm_comm *c, int *ns, int *nr)
{
    int n = c->is_inter ? c->remote->size : c->size, nin, nout;
    bool root = c->is_inter ? pc->root == MPI_ROOT : pc->root == c->rank;
    pm_topo_degrees(c, &nin, &nout);
    *ns = *nr = 0;
    switch (pc->kind) {
    case PC_GATHERV: *nr = root ? n : 0; break;
    case PC_SCATTERV: *ns = root ? n : 0; break;
    case PC_ALLGATHERV: *nr = n; break;
    case PC_ALLTOALLV:
    case PC_ALLTOALLW:
        *ns = pc->sbuf == MPI_IN_PLACE ? 0 : n;
        *nr = n;
        break;
    case PC_REDUCE_SCATTER: *nr = c->size; break;
    case PC_NB_ALLGATHERV: *nr = nin; break;
    case PC_NB_ALLTOALLV:
    case PC_NB_ALLTOALLW:
        *ns = nout;
        *nr = nin;
        break;
    default: break;
    }
}

/* Run the nonblocking operation under the reserved sequence number. */
int pm_pcoll_start(struct pm_pcoll *pc, MPI_Request *inner)
{
    const struct pm_pcoll *a = pc;
    pm_coll_forced_seq = pc->seq;
    int rc;
    switch (a->kind) {
    case PC_BARRIER: rc = PMPI_Ibarrier(a->comm, inner); break;
    case PC_BCAST: rc = PMPI_Ibcast_c(a->rbuf, a->rcount, a->rtype, a->root, a->comm, inner); break;
    case PC_GATHER:
        rc = PMPI_Igather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                            a->comm, inner);
        break;
    case PC_GATHERV:
        rc = PMPI_Igatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts.c, a->rdispls.a,
                             a->rtype, a->root, a->comm, inner);
        break;
    case PC_SCATTER:
        rc = PMPI_Iscatter_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                             a->comm, inner);
        break;
    case PC_SCATTERV:
        rc = PMPI_Iscatterv_c(a->sbuf, a->scounts.c, a->sdispls.a, a->stype, a->rbuf, a->rcount,
                              a->rtype, a->root, a->comm, inner);
        break;
    case PC_ALLGATHER:
        rc = PMPI_Iallgather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm,
                               inner);
        break;
    case PC_ALLGATHERV:
        rc = PMPI_Iallgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts.c, a->rdispls.a,
                                a->rtype, a->comm, inner);
        break;
    case PC_ALLTOALL:
        rc = PMPI_Ialltoall_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm,
                              inner);
        break;
    case PC_ALLTOALLV:
        rc = PMPI_Ialltoallv_c(a->sbuf, a->scounts.c, a->sdispls.a, a->stype, a->rbuf, a->rcounts.c,
                               a->rdispls.a, a->rtype, a->comm, inner);
        break;
    case PC_ALLTOALLW:
        rc = PMPI_Ialltoallw_c(a->sbuf, a->scounts.c, a->sdispls.a, a->stypes, a->rbuf,
                               a->rcounts.c, a->rdispls.a, a->rtypes, a->comm, inner);
        break;
    case PC_REDUCE:
        rc = PMPI_Ireduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm, inner);
        break;
    case PC_ALLREDUCE:
        rc = PMPI_Iallreduce_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, inner);
        break;
    case PC_REDUCE_SCATTER:
        rc =
            PMPI_Ireduce_scatter_c(a->sbuf, a->rbuf, a->rcounts.c, a->rtype, a->op, a->comm, inner);
        break;
    case PC_REDUCE_SCATTER_BLOCK:
        rc = PMPI_Ireduce_scatter_block_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm,
                                          inner);
        break;
    case PC_SCAN:
        rc = PMPI_Iscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, inner);
        break;
    case PC_EXSCAN:
        rc = PMPI_Iexscan_c(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm, inner);
        break;
    case PC_NB_ALLGATHER:
        rc = PMPI_Ineighbor_allgather_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
                                        a->comm, inner);
        break;
    case PC_NB_ALLGATHERV:
        rc = PMPI_Ineighbor_allgatherv_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts.c,
                                         a->rdispls.a, a->rtype, a->comm, inner);
        break;
    case PC_NB_ALLTOALL:
        rc = PMPI_Ineighbor_alltoall_c(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype,
                                       a->comm, inner);
        break;
    case PC_NB_ALLTOALLV:
        rc = PMPI_Ineighbor_alltoallv_c(a->sbuf, a->scounts.c, a->sdispls.a, a->stype, a->rbuf,
                                        a->rcounts.c, a->rdispls.a, a->rtype, a->comm, inner);
        break;
    case PC_NB_ALLTOALLW:
        rc = PMPI_Ineighbor_alltoallw_c(a->sbuf, a->scounts.c, a->sdispls.a, a->stypes, a->rbuf,
                                        a->rcounts.c, a->rdispls.a, a->rtypes, a->comm, inner);
        break;
    default: rc = MPI_ERR_INTERN; break;
    }
    pm_coll_forced_seq = -1; /* (an operation that made no schedule left it set) */
    return rc;
}

/* The common part of every init: check what can be checked now (the
 * communicator, the info, the request pointer), take the datatypes, reserve
 * the sequence number, make the persistent request. `pc` is consumed. */
static int make(struct pm_pcoll *pc, MPI_Info info, MPI_Request *request)
{
    const char *fn = pc->fname;
    MPI_Comm comm = pc->comm;
    struct pm_comm *c = pm_comm_get(comm);
    int rc = MPI_SUCCESS;
    if (!c)
        rc = pm_error(MPI_COMM_WORLD, MPI_ERR_COMM, "%s: invalid communicator %#x", fn,
                      (unsigned)pc->comm);
    else if (info != MPI_INFO_NULL && !pm_info_valid(info))
        rc = pm_error(pc->comm, MPI_ERR_INFO, "%s: invalid info %#x", fn, (unsigned)info);
    else if (!request)
        rc = pm_error(pc->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    if (rc != MPI_SUCCESS) {
        free(pc); /* (its type arrays are still the caller's) */
        return rc;
    }
    MPI_Datatype s = pc->stype, r = pc->rtype;
    MPI_Datatype *ss = pc->stypes, *rs = pc->rtypes;
    pc->stype = pc->rtype = MPI_DATATYPE_NULL;
    pc->stypes = pc->rtypes = NULL;
    int ns, nr;
    array_lengths(pc, c, &ns, &nr);
    if (!(rc = keep_arrays(pc, ns, nr)) && !(rc = keep_type(s, &pc->stype)) &&
        !(rc = keep_type(r, &pc->rtype)) && !(rc = keep_types(ss, ns, &pc->stypes)))
        rc = keep_types(rs, nr, &pc->rtypes);
    pc->ntypes_s = pc->stypes ? ns : 0;
    pc->ntypes_r = pc->rtypes ? nr : 0;
    if (rc != MPI_SUCCESS) {
        pm_pcoll_free(pc);
        return pm_error(comm, rc, "%s: cannot keep the arguments", fn);
    }
    /* every rank reserves its number, whatever happens next */
    pc->seq = pm_coll_next_seq(c);
    rc = pm_persistent_coll(c, pc, request);
    if (rc != MPI_SUCCESS) {
        pm_pcoll_free(pc);
        return pm_error(comm, rc, "%s: out of memory", fn);
    }
    return MPI_SUCCESS;
}

static struct pm_pcoll *new_pc(enum pc_kind kind, const char *fname, MPI_Comm comm)
{
    struct pm_pcoll *pc = calloc(1, sizeof *pc);
    if (pc) {
        pc->kind = kind;
        pc->fname = fname;
        pc->comm = comm;
        pc->stype = pc->rtype = MPI_DATATYPE_NULL;
        pc->op = MPI_OP_NULL;
    }
    return pc;
}

#define NEW(kind, name)                                                             \
    PM_CHECK_INIT(name);                                                            \
    struct pm_pcoll *pc = new_pc(kind, name, comm);                                 \
    if (!pc)                                                                        \
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", name)

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    NEW(PC_BARRIER, "MPI_Barrier_init");
    return make(pc, info, request);
}
PM_WEAK(Barrier_init)

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_PCOLL_API(SUF, CT, DT)                                                                 \
    int PMPI_Bcast_init##SUF(void *buffer, CT count, MPI_Datatype datatype, int root,             \
                             MPI_Comm comm, MPI_Info info, MPI_Request *request)                  \
    {                                                                                             \
        NEW(PC_BCAST, "MPI_Bcast_init" #SUF);                                                     \
        pc->rbuf = buffer, pc->rcount = count, pc->rtype = datatype, pc->root = root;             \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Bcast_init##SUF)                                                                      \
                                                                                                  \
    int PMPI_Gather_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,           \
                              void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,       \
                              MPI_Comm comm, MPI_Info info, MPI_Request *request)                 \
    {                                                                                             \
        NEW(PC_GATHER, "MPI_Gather_init" #SUF);                                                   \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype, pc->root = root;        \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Gather_init##SUF)                                                                     \
                                                                                                  \
    int PMPI_Gatherv_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,          \
                               void *recvbuf, const CT recvcounts[], const DT displs[],           \
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,     \
                               MPI_Request *request)                                              \
    {                                                                                             \
        NEW(PC_GATHERV, "MPI_Gatherv_init" #SUF);                                                 \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(displs), pc->rtype = recvtype;                                \
        pc->root = root;                                                                          \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Gatherv_init##SUF)                                                                    \
                                                                                                  \
    int PMPI_Scatter_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,          \
                               void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,      \
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)                \
    {                                                                                             \
        NEW(PC_SCATTER, "MPI_Scatter_init" #SUF);                                                 \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype, pc->root = root;        \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Scatter_init##SUF)                                                                    \
                                                                                                  \
    int PMPI_Scatterv_init##SUF(const void *sendbuf, const CT sendcounts[], const DT displs[],    \
                                MPI_Datatype sendtype, void *recvbuf, CT recvcount,               \
                                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,    \
                                MPI_Request *request)                                             \
    {                                                                                             \
        NEW(PC_SCATTERV, "MPI_Scatterv_init" #SUF);                                               \
        pc->sbuf = sendbuf, pc->scounts = PM_COUNTS(sendcounts),                                  \
            pc->sdispls = PM_DISPLS(displs), pc->stype = sendtype;                                \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype, pc->root = root;        \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Scatterv_init##SUF)                                                                   \
                                                                                                  \
    int PMPI_Allgather_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,        \
                                 void *recvbuf, CT recvcount, MPI_Datatype recvtype,              \
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)              \
    {                                                                                             \
        NEW(PC_ALLGATHER, "MPI_Allgather_init" #SUF);                                             \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype;                         \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Allgather_init##SUF)                                                                  \
                                                                                                  \
    int PMPI_Allgatherv_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,       \
                                  void *recvbuf, const CT recvcounts[], const DT displs[],        \
                                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,            \
                                  MPI_Request *request)                                           \
    {                                                                                             \
        NEW(PC_ALLGATHERV, "MPI_Allgatherv_init" #SUF);                                           \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(displs), pc->rtype = recvtype;                                \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Allgatherv_init##SUF)                                                                 \
                                                                                                  \
    int PMPI_Alltoall_init##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,         \
                                void *recvbuf, CT recvcount, MPI_Datatype recvtype,               \
                                MPI_Comm comm, MPI_Info info, MPI_Request *request)               \
    {                                                                                             \
        NEW(PC_ALLTOALL, "MPI_Alltoall_init" #SUF);                                               \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype;                         \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoall_init##SUF)                                                                   \
                                                                                                  \
    int PMPI_Alltoallv_init##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],  \
                                 MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],     \
                                 const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm,        \
                                 MPI_Info info, MPI_Request *request)                             \
    {                                                                                             \
        NEW(PC_ALLTOALLV, "MPI_Alltoallv_init" #SUF);                                             \
        pc->sbuf = sendbuf, pc->scounts = PM_COUNTS(sendcounts),                                  \
            pc->sdispls = PM_DISPLS(sdispls), pc->stype = sendtype;                               \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(rdispls), pc->rtype = recvtype;                               \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoallv_init##SUF)                                                                  \
                                                                                                  \
    int PMPI_Alltoallw_init##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],  \
                                 const MPI_Datatype sendtypes[], void *recvbuf,                   \
                                 const CT recvcounts[], const DT rdispls[],                       \
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,    \
                                 MPI_Request *request)                                            \
    {                                                                                             \
        NEW(PC_ALLTOALLW, "MPI_Alltoallw_init" #SUF);                                             \
        pc->sbuf = sendbuf, pc->scounts = PM_COUNTS(sendcounts),                                  \
            pc->sdispls = PM_DISPLS(sdispls);                                                     \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(rdispls);                                                     \
        pc->stypes = (MPI_Datatype *)(uintptr_t)sendtypes; /* make() copies them */               \
        pc->rtypes = (MPI_Datatype *)(uintptr_t)recvtypes;                                        \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoallw_init##SUF)                                                                  \
                                                                                                  \
    int PMPI_Reduce_init##SUF(const void *sendbuf, void *recvbuf, CT count,                       \
                              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,          \
                              MPI_Info info, MPI_Request *request)                                \
    {                                                                                             \
        NEW(PC_REDUCE, "MPI_Reduce_init" #SUF);                                                   \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcount = count, pc->rtype = datatype;         \
        pc->op = op, pc->root = root;                                                             \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Reduce_init##SUF)                                                                     \
                                                                                                  \
    int PMPI_Allreduce_init##SUF(const void *sendbuf, void *recvbuf, CT count,                    \
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,  \
                                 MPI_Request *request)                                            \
    {                                                                                             \
        NEW(PC_ALLREDUCE, "MPI_Allreduce_init" #SUF);                                             \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcount = count, pc->rtype = datatype;         \
        pc->op = op;                                                                              \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Allreduce_init##SUF)                                                                  \
                                                                                                  \
    int PMPI_Reduce_scatter_init##SUF(const void *sendbuf, void *recvbuf, const CT recvcounts[],  \
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,            \
                                      MPI_Info info, MPI_Request *request)                        \
    {                                                                                             \
        NEW(PC_REDUCE_SCATTER, "MPI_Reduce_scatter_init" #SUF);                                   \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),              \
            pc->rtype = datatype;                                                                 \
        pc->op = op;                                                                              \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Reduce_scatter_init##SUF)                                                             \
                                                                                                  \
    int PMPI_Reduce_scatter_block_init##SUF(const void *sendbuf, void *recvbuf, CT recvcount,     \
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,      \
                                            MPI_Info info, MPI_Request *request)                  \
    {                                                                                             \
        NEW(PC_REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block_init" #SUF);                       \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = datatype;     \
        pc->op = op;                                                                              \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Reduce_scatter_block_init##SUF)                                                       \
                                                                                                  \
    int PMPI_Scan_init##SUF(const void *sendbuf, void *recvbuf, CT count, MPI_Datatype datatype,  \
                            MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)        \
    {                                                                                             \
        NEW(PC_SCAN, "MPI_Scan_init" #SUF);                                                       \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcount = count, pc->rtype = datatype;         \
        pc->op = op;                                                                              \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Scan_init##SUF)                                                                       \
                                                                                                  \
    int PMPI_Exscan_init##SUF(const void *sendbuf, void *recvbuf, CT count,                       \
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,     \
                              MPI_Request *request)                                               \
    {                                                                                             \
        NEW(PC_EXSCAN, "MPI_Exscan_init" #SUF);                                                   \
        pc->sbuf = sendbuf, pc->rbuf = recvbuf, pc->rcount = count, pc->rtype = datatype;         \
        pc->op = op;                                                                              \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Exscan_init##SUF)                                                                     \
                                                                                                  \
    int PMPI_Neighbor_allgather_init##SUF(const void *sendbuf, CT sendcount,                      \
                                          MPI_Datatype sendtype, void *recvbuf, CT recvcount,     \
                                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,    \
                                          MPI_Request *request)                                   \
    {                                                                                             \
        NEW(PC_NB_ALLGATHER, "MPI_Neighbor_allgather_init" #SUF);                                 \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype;                         \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Neighbor_allgather_init##SUF)                                                         \
                                                                                                  \
    int PMPI_Neighbor_allgatherv_init##SUF(const void *sendbuf, CT sendcount,                     \
                                           MPI_Datatype sendtype, void *recvbuf,                  \
                                           const CT recvcounts[], const DT displs[],              \
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,   \
                                           MPI_Request *request)                                  \
    {                                                                                             \
        NEW(PC_NB_ALLGATHERV, "MPI_Neighbor_allgatherv_init" #SUF);                               \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(displs), pc->rtype = recvtype;                                \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Neighbor_allgatherv_init##SUF)                                                        \
                                                                                                  \
    int PMPI_Neighbor_alltoall_init##SUF(const void *sendbuf, CT sendcount,                       \
                                         MPI_Datatype sendtype, void *recvbuf, CT recvcount,      \
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,     \
                                         MPI_Request *request)                                    \
    {                                                                                             \
        NEW(PC_NB_ALLTOALL, "MPI_Neighbor_alltoall_init" #SUF);                                   \
        pc->sbuf = sendbuf, pc->scount = sendcount, pc->stype = sendtype;                         \
        pc->rbuf = recvbuf, pc->rcount = recvcount, pc->rtype = recvtype;                         \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Neighbor_alltoall_init##SUF)                                                          \
                                                                                                  \
    int PMPI_Neighbor_alltoallv_init##SUF(const void *sendbuf, const CT sendcounts[],             \
                                          const DT sdispls[], MPI_Datatype sendtype,              \
                                          void *recvbuf, const CT recvcounts[],                   \
                                          const DT rdispls[], MPI_Datatype recvtype,              \
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)     \
    {                                                                                             \
        NEW(PC_NB_ALLTOALLV, "MPI_Neighbor_alltoallv_init" #SUF);                                 \
        pc->sbuf = sendbuf, pc->scounts = PM_COUNTS(sendcounts),                                  \
            pc->sdispls = PM_DISPLS(sdispls), pc->stype = sendtype;                               \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(rdispls), pc->rtype = recvtype;                               \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Neighbor_alltoallv_init##SUF)                                                         \
                                                                                                  \
    int PMPI_Neighbor_alltoallw_init##SUF(const void *sendbuf, const CT sendcounts[],             \
                                          const MPI_Aint sdispls[],                               \
                                          const MPI_Datatype sendtypes[], void *recvbuf,          \
                                          const CT recvcounts[], const MPI_Aint rdispls[],        \
                                          const MPI_Datatype recvtypes[], MPI_Comm comm,          \
                                          MPI_Info info, MPI_Request *request)                    \
    {                                                                                             \
        NEW(PC_NB_ALLTOALLW, "MPI_Neighbor_alltoallw_init" #SUF);                                 \
        pc->sbuf = sendbuf, pc->scounts = PM_COUNTS(sendcounts),                                  \
            pc->sdispls = PM_DISPLS(sdispls);                                                     \
        pc->rbuf = recvbuf, pc->rcounts = PM_COUNTS(recvcounts),                                  \
            pc->rdispls = PM_DISPLS(rdispls);                                                     \
        pc->stypes = (MPI_Datatype *)(uintptr_t)sendtypes;                                        \
        pc->rtypes = (MPI_Datatype *)(uintptr_t)recvtypes;                                        \
        return make(pc, info, request);                                                           \
    }                                                                                             \
    PM_WEAK(Neighbor_alltoallw_init##SUF)

PM_PCOLL_API(, int, int)
PM_PCOLL_API(_c, MPI_Count, MPI_Aint)
