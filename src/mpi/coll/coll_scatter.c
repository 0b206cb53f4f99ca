/*
 * coll_scatter.c — MPI_Scatter, MPI_Scatterv and their nonblocking forms.
 *
 * Every call builds a schedule (coll.h): the blocking calls run it, the
 * nonblocking ones return its request. Scatter of small blocks walks a
 * binomial tree: the root sends each child its whole subtree straight from
 * the send buffer (through scratch when the subtree's ranks wrap past the
 * end, non-zero root); an inner node receives its subtree as bytes into
 * scratch, keeps its own block and forwards the rest. Large blocks go
 * linearly, every send posted at once. Scatterv is linear.
 * Intercommunicators: the root sends to each process of the other group.
 */
#include <stdint.h>

#include "coll.h"

/* Binomial tree while a block is at most this many bytes. */
#define SCATTER_TREE_MAX_BLOCK 8192

struct scatter {
    const char *fname;
    MPI_Comm comm;
    struct pm_comm *c;
    const void *sbuf;
    MPI_Count scount;         /* Scatter */
    struct pm_counts scounts; /* Scatterv */
    struct pm_displs displs;
    MPI_Datatype stype;
    void *rbuf;
    MPI_Count rcount;
    MPI_Datatype rtype;
    int root;
    bool v;
    struct pm_own_block own; /* the root's own block (filled by the check) */
};

/* Root: block for rank i in the send buffer. */
static const void *scatter_block(const struct scatter *g, int i)
{
    MPI_Aint ext = pm_type_get(g->stype)->extent;
    if (g->v)
        return pm_at(g->sbuf, pm_dsp(g->displs, i) * ext);
    return pm_at(g->sbuf, (MPI_Aint)i * g->scount * ext);
}

/* Arguments in the standard's order; MPI_SUCCESS or the raised error. */
static int scatter_check(struct scatter *g, MPI_Request *request, bool nonblocking)
{
    const char *fn = g->fname;
    int rc = pm_coll_check_comm(fn, g->comm, &g->c);
    if (rc)
        return rc;
    struct pm_comm *c = g->c;
    rc = pm_coll_check_root(fn, c, g->root);
    if (rc)
        return rc;
    bool at_root, receives;
    if (c->is_inter) {
        at_root = g->root == MPI_ROOT;
        receives = g->root >= 0;
    } else {
        at_root = g->root == c->rank;
        receives = !(at_root && g->rbuf == MPI_IN_PLACE);
    }
    if (at_root) {
        if (g->sbuf == MPI_IN_PLACE)
            return pm_error(g->comm, MPI_ERR_BUFFER, "%s: sendbuf is MPI_IN_PLACE at the root", fn);
        int n = c->remote->size;
        if (g->v) {
            if (pm_counts_null(g->scounts) || pm_displs_null(g->displs))
                return pm_error(g->comm, MPI_ERR_ARG,
                                "%s: sendcounts or displs is NULL at the root", fn);
            rc = pm_coll_check_counts(fn, c, "sendcounts", g->scounts, n, g->stype, NULL);
        } else {
            rc = pm_coll_check_buf(fn, c, g->scount, g->stype);
        }
        if (rc)
            return rc;
    }
    if (g->rbuf == MPI_IN_PLACE && !at_root && g->root != MPI_PROC_NULL)
        return pm_error(g->comm, MPI_ERR_BUFFER,
                        "%s: recvbuf is MPI_IN_PLACE on rank %d, which is not the root%s", fn,
                        c->rank, c->is_inter ? " (not allowed on an intercommunicator)" : "");
    if (receives) {
        rc = pm_coll_check_buf(fn, c, g->rcount, g->rtype);
        if (rc)
            return rc;
    }
    /* The root's own block is a local copy: check it here. */
    if (at_root && !c->is_inter && g->rbuf != MPI_IN_PLACE) {
        MPI_Count have =
            (g->v ? pm_cnt(g->scounts, c->rank) : g->scount) * pm_type_get(g->stype)->size;
        MPI_Count room = g->rcount * pm_type_get(g->rtype)->size;
        if (g->rbuf && g->sbuf && room > 0 &&
            (g->rbuf == g->sbuf || g->rbuf == scatter_block(g, c->rank)))
            return pm_error(g->comm, MPI_ERR_BUFFER,
                            "%s: recvbuf is sendbuf or the root's block of it at the root (use "
                            "MPI_IN_PLACE)", fn);
        pm_own_block_check(&g->own, have, room);
    }
    if (nonblocking && !request)
        return pm_error(g->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    return MPI_SUCCESS;
}

static int scatter_root_own(struct pm_sched *s, const struct scatter *g)
{
    int me = g->c->rank;
    if (g->rbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    return pm_sched_copy(s, scatter_block(g, me), g->v ? pm_cnt(g->scounts, me) : g->scount,
                         g->stype, g->rbuf, g->rcount, g->rtype);
}

/* Linear: every block straight from the root, all posted at once. */
static int scatter_linear(struct pm_sched *s, const struct scatter *g)
{
    struct pm_comm *c = g->c;
    int rc = MPI_SUCCESS;
    bool inter = c->is_inter;
    bool at_root = inter ? g->root == MPI_ROOT : g->root == c->rank;
    if (inter && g->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (!at_root)
        return pm_sched_recv(s, g->rbuf, g->rcount, g->rtype, g->root);
    for (int i = 0; i < c->remote->size && !rc; i++) {
        if (!inter && i == c->rank)
            continue;
        rc = pm_sched_send(s, scatter_block(g, i), g->v ? pm_cnt(g->scounts, i) : g->scount,
                           g->stype, i);
    }
    if (!rc && !inter)
        rc = scatter_root_own(s, g);
    return rc;
}

/* Binomial tree over ranks relative to the root (intracommunicator). */
static int scatter_tree(struct pm_sched *s, const struct scatter *g, size_t block)
{
    struct pm_comm *c = g->c;
    int n = c->size, root = g->root;
    int vr = (c->rank - root + n) % n;
    int rc = MPI_SUCCESS;
    if (vr == 0) {
        /* Child `mask` gets relative ranks mask..mask+k-1. The subtrees cover
         * 1..n-1 in order, so at most one wraps past rank n-1: that one is
         * copied into scratch (copies run as their round starts, before the
         * sends after them). */
        char *tmp = NULL;
        int wrap_mask = 0;
        for (int mask = 1; mask < n && !rc; mask <<= 1) {
            int k = mask < n - mask ? mask : n - mask;
            int first = (mask + root) % n;
            if (first + k <= n)
                continue;
            tmp = pm_sched_scratch_any(s, (size_t)k * block);
            if (!tmp)
                return MPI_ERR_NO_MEM;
            wrap_mask = mask;
            int tail = n - first;
            rc = pm_sched_copy(s, scatter_block(g, first), (MPI_Count)tail * g->scount, g->stype,
                               tmp, (MPI_Count)tail * (MPI_Count)block, MPI_BYTE);
            if (!rc)
                rc = pm_sched_copy(s, scatter_block(g, 0), (MPI_Count)(k - tail) * g->scount,
                                   g->stype, tmp + (size_t)tail * block,
                                   (MPI_Count)(k - tail) * (MPI_Count)block, MPI_BYTE);
            break;
        }
        /* Largest subtree first: it has the longest way to go. */
        int top = 1;
        while (top * 2 < n)
            top *= 2;
        for (int mask = top; mask >= 1 && !rc; mask >>= 1) {
            int k = mask < n - mask ? mask : n - mask;
            int first = (mask + root) % n;
            if (mask == wrap_mask)
                rc = pm_sched_send(s, tmp, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, first);
            else
                rc = pm_sched_send(s, scatter_block(g, first), (MPI_Count)k * g->scount, g->stype,
                                   first);
        }
        if (!rc)
            rc = scatter_root_own(s, g);
        return rc;
    }
    int low = vr & -vr;
    int parent = (vr - low + root) % n;
    int k = low < n - vr ? low : n - vr; /* ranks in my subtree */
    if (k == 1) /* leaf */
        return pm_sched_recv(s, g->rbuf, g->rcount, g->rtype, parent);
    char *tmp = pm_sched_scratch_any(s, (size_t)k * block);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    rc = pm_sched_recv(s, tmp, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, parent);
    if (!rc)
        rc = pm_sched_fence(s);
    for (int mask = low >> 1; mask >= 1 && !rc; mask >>= 1) {
        int child = vr + mask;
        if (child >= n)
            continue;
        int ck = mask < n - child ? mask : n - child;
        rc = pm_sched_send(s, tmp + (size_t)mask * block, (MPI_Count)ck * (MPI_Count)block,
                           MPI_BYTE, (child + root) % n);
    }
    if (!rc)
        rc = pm_sched_copy(s, tmp, (MPI_Count)block, MPI_BYTE, g->rbuf, g->rcount, g->rtype);
    return rc;
}

static int scatter_build(struct pm_sched *s, const struct scatter *g)
{
    struct pm_comm *c = g->c;
    if (c->is_inter || g->v)
        return scatter_linear(s, g);
    if (c->size == 1)
        return scatter_root_own(s, g);
    bool at_root = g->root == c->rank;
    MPI_Count block = at_root ? g->scount * pm_type_get(g->stype)->size
                              : g->rcount * pm_type_get(g->rtype)->size;
    if (block <= SCATTER_TREE_MAX_BLOCK)
        return scatter_tree(s, g, (size_t)block);
    return scatter_linear(s, g);
}

static int scatter_do(struct scatter *g, MPI_Request *request, bool nonblocking)
{
    int rc = scatter_check(g, request, nonblocking);
    if (rc)
        return rc;
    /* MPI_Scatter with empty blocks (as MPI_Gather) */
    bool root = g->c->rank == g->root;
    if (!g->v && !g->c->is_inter &&
        (g->rbuf == MPI_IN_PLACE || pm_coll_bytes(g->rcount, g->rtype) == 0) &&
        (!root || pm_coll_bytes(g->scount, g->stype) == 0))
        return pm_coll_nothing(g->c, g->comm, g->fname, request, nonblocking);
    struct pm_sched *s = pm_sched_create(g->c);
    if (!s)
        return pm_error(g->comm, MPI_ERR_NO_MEM, "%s: out of memory", g->fname);
    rc = scatter_build(s, g);
    if (rc) {
        pm_sched_discard(s);
        return pm_error(g->comm, rc, "%s: cannot build the schedule", g->fname);
    }
    return pm_coll_sched_go(s, &g->own, g->comm, g->fname, g->c->rank, request, nonblocking);
}

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_SCATTER_API(SUF, CT, DT)                                                               \
    int PMPI_Scatter##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,               \
                          void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,           \
                          MPI_Comm comm)                                                          \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Scatter" #SUF);                                                        \
        struct scatter g = {"MPI_Scatter" #SUF, comm, NULL, sendbuf, sendcount, PM_NO_COUNTS,     \
                            PM_NO_DISPLS, sendtype, recvbuf, recvcount, recvtype, root, false,    \
                            {0, 0, 0}};                                                           \
        return scatter_do(&g, NULL, false);                                                       \
    }                                                                                             \
    PM_WEAK(Scatter##SUF)                                                                         \
                                                                                                  \
    int PMPI_Iscatter##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,              \
                           void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,          \
                           MPI_Comm comm, MPI_Request *request)                                   \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iscatter" #SUF);                                                       \
        struct scatter g = {"MPI_Iscatter" #SUF, comm, NULL, sendbuf, sendcount, PM_NO_COUNTS,    \
                            PM_NO_DISPLS, sendtype, recvbuf, recvcount, recvtype, root, false,    \
                            {0, 0, 0}};                                                           \
        return scatter_do(&g, request, true);                                                     \
    }                                                                                             \
    PM_WEAK(Iscatter##SUF)                                                                        \
                                                                                                  \
    int PMPI_Scatterv##SUF(const void *sendbuf, const CT sendcounts[], const DT displs[],         \
                           MPI_Datatype sendtype, void *recvbuf, CT recvcount,                    \
                           MPI_Datatype recvtype, int root, MPI_Comm comm)                        \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Scatterv" #SUF);                                                       \
        struct scatter g = {"MPI_Scatterv" #SUF, comm, NULL, sendbuf, 0, PM_COUNTS(sendcounts),   \
                            PM_DISPLS(displs), sendtype, recvbuf, recvcount, recvtype, root,      \
                            true, {0, 0, 0}};                                                     \
        return scatter_do(&g, NULL, false);                                                       \
    }                                                                                             \
    PM_WEAK(Scatterv##SUF)                                                                        \
                                                                                                  \
    int PMPI_Iscatterv##SUF(const void *sendbuf, const CT sendcounts[], const DT displs[],        \
                            MPI_Datatype sendtype, void *recvbuf, CT recvcount,                   \
                            MPI_Datatype recvtype, int root, MPI_Comm comm,                       \
                            MPI_Request *request)                                                 \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iscatterv" #SUF);                                                      \
        struct scatter g = {"MPI_Iscatterv" #SUF, comm, NULL, sendbuf, 0, PM_COUNTS(sendcounts),  \
                            PM_DISPLS(displs), sendtype, recvbuf, recvcount, recvtype, root,      \
                            true, {0, 0, 0}};                                                     \
        return scatter_do(&g, request, true);                                                     \
    }                                                                                             \
    PM_WEAK(Iscatterv##SUF)

PM_SCATTER_API(, int, int)
PM_SCATTER_API(_c, MPI_Count, MPI_Aint)
