/*
 * coll_scatter.c — MPI_Scatter, MPI_Scatterv and their nonblocking forms.
 *
 * Every algorithm is written once against a collective context
 * (coll_algo.h): blocking calls run its steps at once, nonblocking ones
 * return the request of its schedule. Scatter of small blocks walks a
 * binomial tree: the root sends each child its whole subtree straight from
 * the send buffer (through scratch when the subtree's ranks wrap past the
 * end, non-zero root); an inner node receives its subtree as bytes into
 * scratch, keeps its own block and forwards the rest. Large blocks go
 * linearly, every send posted at once. Scatterv is linear.
 * Intercommunicators: the root sends to each process of the other group.
 */
#include <stdint.h>

#include "coll_algo.h"

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

static void scatter_root_own(struct pm_cx *cx, const struct scatter *g)
{
    int me = g->c->rank;
    if (g->rbuf != MPI_IN_PLACE)
        pm_cx_copy(cx, scatter_block(g, me), g->v ? pm_cnt(g->scounts, me) : g->scount,
                   g->stype, g->rbuf, g->rcount, g->rtype);
}

/* Linear: every block straight from the root, all posted at once. */
static void scatter_linear(struct pm_cx *cx, const struct scatter *g)
{
    struct pm_comm *c = g->c;
    bool inter = c->is_inter;
    bool at_root = inter ? g->root == MPI_ROOT : g->root == c->rank;
    if (inter && g->root == MPI_PROC_NULL)
        return;
    /* An empty block is no message (as in gather_linear). */
    if (!at_root) {
        if (pm_coll_bytes(g->rcount, g->rtype))
            pm_cx_recv(cx, g->rbuf, g->rcount, g->rtype, g->root);
        return;
    }
    for (int i = 0; i < c->remote->size && !cx->stop; i++) {
        MPI_Count cnt = g->v ? pm_cnt(g->scounts, i) : g->scount;
        if ((!inter && i == c->rank) || !pm_coll_bytes(cnt, g->stype))
            continue;
        pm_cx_room(cx);
        pm_cx_send(cx, scatter_block(g, i), cnt, g->stype, i);
    }
    if (!inter)
        scatter_root_own(cx, g);
}

/* Binomial tree over ranks relative to the root (intracommunicator). */
static void scatter_tree(struct pm_cx *cx, const struct scatter *g, size_t block)
{
    struct pm_comm *c = g->c;
    int n = c->size, root = g->root;
    int vr = (c->rank - root + n) % n;
    if (vr == 0) {
        /* Child `mask` gets relative ranks mask..mask+k-1. The subtrees cover
         * 1..n-1 in order, so at most one wraps past rank n-1: that one is
         * copied into scratch (copies run as their round starts, before the
         * sends after them). */
        char *tmp = NULL;
        int wrap_mask = 0;
        for (int mask = 1; mask < n; mask <<= 1) {
            int k = mask < n - mask ? mask : n - mask;
            int first = (mask + root) % n;
            if (first + k <= n)
                continue;
            tmp = pm_cx_scratch(cx, (size_t)k * block);
            if (!tmp)
                return;
            wrap_mask = mask;
            int tail = n - first;
            pm_cx_copy(cx, scatter_block(g, first), (MPI_Count)tail * g->scount, g->stype, tmp,
                       (MPI_Count)tail * (MPI_Count)block, MPI_BYTE);
            pm_cx_copy(cx, scatter_block(g, 0), (MPI_Count)(k - tail) * g->scount, g->stype,
                       tmp + (size_t)tail * block, (MPI_Count)(k - tail) * (MPI_Count)block,
                       MPI_BYTE);
            break;
        }
        /* Largest subtree first: it has the longest way to go. */
        int top = 1;
        while (top * 2 < n)
            top *= 2;
        for (int mask = top; mask >= 1 && !cx->stop; mask >>= 1) {
            int k = mask < n - mask ? mask : n - mask;
            int first = (mask + root) % n;
            if (mask == wrap_mask)
                pm_cx_send(cx, tmp, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, first);
            else
                pm_cx_send(cx, scatter_block(g, first), (MPI_Count)k * g->scount, g->stype,
                           first);
        }
        scatter_root_own(cx, g);
        return;
    }
    int low = vr & -vr;
    int parent = (vr - low + root) % n;
    int k = low < n - vr ? low : n - vr; /* ranks in my subtree */
    if (k == 1) { /* leaf */
        pm_cx_recv(cx, g->rbuf, g->rcount, g->rtype, parent);
        return;
    }
    char *tmp = pm_cx_scratch(cx, (size_t)k * block);
    if (!tmp)
        return;
    pm_cx_recv(cx, tmp, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, parent);
    pm_cx_fence(cx);
    for (int mask = low >> 1; mask >= 1 && !cx->stop; mask >>= 1) {
        int child = vr + mask;
        if (child >= n)
            continue;
        int ck = mask < n - child ? mask : n - child;
        pm_cx_send(cx, tmp + (size_t)mask * block, (MPI_Count)ck * (MPI_Count)block, MPI_BYTE,
                   (child + root) % n);
    }
    pm_cx_copy(cx, tmp, (MPI_Count)block, MPI_BYTE, g->rbuf, g->rcount, g->rtype);
}

static void scatter_build(struct pm_cx *cx, const struct scatter *g)
{
    struct pm_comm *c = g->c;
    if (c->is_inter || g->v) {
        scatter_linear(cx, g);
        return;
    }
    if (c->size == 1) {
        scatter_root_own(cx, g);
        return;
    }
    bool at_root = g->root == c->rank;
    MPI_Count block = at_root ? g->scount * pm_type_get(g->stype)->size
                              : g->rcount * pm_type_get(g->rtype)->size;
    if (block <= PM_SCATTER_TREE_MAX_BLOCK)
        scatter_tree(cx, g, (size_t)block);
    else
        scatter_linear(cx, g);
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
        return pm_coll_nothing(request, nonblocking);
    /* MPI_Scatterv with nothing to or from this rank (as MPI_Gatherv) */
    if (g->v && !g->c->is_inter &&
        pm_coll_rank_empty_v(g->rbuf, g->rcount, g->rtype, root, g->scounts, g->stype,
                             g->c->size)) {
        pm_coll_skip_seq(g->c);
        return pm_coll_nothing(request, nonblocking);
    }
    struct pm_cx cx;
    if (pm_cx_begin(&cx, g->c, nonblocking))
        return pm_error(g->comm, MPI_ERR_NO_MEM, "%s: out of memory", g->fname);
    pm_cx_note(&cx, g->own.err);
    scatter_build(&cx, g);
    return pm_coll_cx_go(&cx, &g->own, g->comm, g->fname, g->c->rank, request);
}

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_SCATTER_API(SUF, CT, DT)                                                               \
    int PMPI_Scatter##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,               \
                          void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,           \
                          MPI_Comm comm)                                                          \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Scatter" #SUF);                                                        \
        struct pm_comm *zc;                                                                       \
        if (pm_coll_zero_rooted(recvbuf, recvcount, recvtype, sendbuf, sendcount, sendtype, root, \
                                comm, &zc))                                                       \
            return MPI_SUCCESS;                                                                   \
        int fast = pm_scatter_fast("MPI_Scatter" #SUF, sendbuf, sendcount, sendtype, recvbuf,     \
                                   recvcount, recvtype, root, comm);                              \
        if (PM_LIKELY(fast >= 0))                                                                 \
            return fast;                                                                          \
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
        struct pm_comm *zc; /* empty blocks: a finished request */                                \
        if (request && pm_coll_zero_rooted(recvbuf, recvcount, recvtype, sendbuf, sendcount,      \
                                           sendtype, root, comm, &zc))                            \
            return pm_coll_nothing(request, true);                                                \
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
        if (pm_coll_zero_rooted_v(recvbuf, recvcount, recvtype, sendbuf, PM_COUNTS(sendcounts),   \
                                  PM_DISPLS(displs), sendtype, root, comm))                       \
            return MPI_SUCCESS;                                                                   \
        int fast = pm_scatterv_fast("MPI_Scatterv" #SUF, recvbuf, recvcount, recvtype, root,      \
                                    comm);                                                        \
        if (PM_LIKELY(fast >= 0))                                                                 \
            return fast;                                                                          \
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
