/*
 * coll_gather.c — MPI_Gather, MPI_Gatherv and their nonblocking forms.
 *
 * Every algorithm is written once against a collective context
 * (coll_algo.h): blocking calls run its steps at once, nonblocking ones
 * return the request of its schedule. Gather of small blocks walks a
 * binomial tree: an inner node packs its own block and its children's
 * subtrees (bytes, in rank order relative to the root) into scratch and
 * forwards them; the root receives every child subtree straight into the
 * receive buffer unless the subtree's ranks wrap past the end (non-zero root),
 * in which case it lands in scratch and is copied out in two pieces. Large
 * blocks go linearly, every receive posted at once. Gatherv is linear.
 * Intercommunicators: each process of the non-root group sends to the root.
 */
#include <stdint.h>

#include "coll_algo.h"

struct gather {
    const char *fname;
    MPI_Comm comm;
    struct pm_comm *c;
    const void *sbuf;
    MPI_Count scount;
    MPI_Datatype stype;
    void *rbuf;
    MPI_Count rcount;         /* Gather */
    struct pm_counts rcounts; /* Gatherv */
    struct pm_displs displs;
    MPI_Datatype rtype;
    int root;
    bool v;
    struct pm_own_block own; /* the root's own block (filled by the check) */
};

/* Root: block of rank i of the receive buffer. */
static void *gather_block(const struct gather *g, int i)
{
    MPI_Aint ext = pm_type_get(g->rtype)->extent;
    if (g->v)
        return pm_at(g->rbuf, pm_dsp(g->displs, i) * ext);
    return pm_at(g->rbuf, (MPI_Aint)i * g->rcount * ext);
}

/* Arguments in the standard's order; MPI_SUCCESS or the raised error. */
static int gather_check(struct gather *g, MPI_Request *request, bool nonblocking)
{
    const char *fn = g->fname;
    int rc = pm_coll_check_comm(fn, g->comm, &g->c);
    if (rc)
        return rc;
    struct pm_comm *c = g->c;
    rc = pm_coll_check_root(fn, c, g->root);
    if (rc)
        return rc;
    bool at_root, sends;
    if (c->is_inter) {
        at_root = g->root == MPI_ROOT;
        sends = g->root >= 0;
    } else {
        at_root = g->root == c->rank;
        sends = !(at_root && g->sbuf == MPI_IN_PLACE);
    }
    if (g->sbuf == MPI_IN_PLACE && !at_root && g->root != MPI_PROC_NULL)
        return pm_error(g->comm, MPI_ERR_BUFFER,
                        "%s: sendbuf is MPI_IN_PLACE on rank %d, which is not the root%s", fn,
                        c->rank, c->is_inter ? " (not allowed on an intercommunicator)" : "");
    if (sends) {
        rc = pm_coll_check_buf(fn, c, g->scount, g->stype);
        if (rc)
            return rc;
    }
    if (at_root) {
        if (g->rbuf == MPI_IN_PLACE)
            return pm_error(g->comm, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE at the root", fn);
        int n = c->remote->size;
        if (g->v) {
            if (pm_counts_null(g->rcounts) || pm_displs_null(g->displs))
                return pm_error(g->comm, MPI_ERR_ARG,
                                "%s: recvcounts or displs is NULL at the root", fn);
            rc = pm_coll_check_counts(fn, c, "recvcounts", g->rcounts, n, g->rtype, NULL);
        } else {
            rc = pm_coll_check_buf(fn, c, g->rcount, g->rtype);
        }
        if (rc)
            return rc;
        /* The root's own block is a local copy: check it here. */
        if (!c->is_inter && g->sbuf != MPI_IN_PLACE) {
            MPI_Count have = g->scount * pm_type_get(g->stype)->size;
            if (g->sbuf && g->rbuf && have > 0 &&
                (g->sbuf == g->rbuf || g->sbuf == gather_block(g, c->rank)))
                return pm_error(g->comm, MPI_ERR_BUFFER,
                                "%s: sendbuf is recvbuf or the root's block of it at the root "
                                "(use MPI_IN_PLACE)", fn);
            MPI_Count room =
                (g->v ? pm_cnt(g->rcounts, c->rank) : g->rcount) * pm_type_get(g->rtype)->size;
            pm_own_block_check(&g->own, have, room);
        }
    }
    if (nonblocking && !request)
        return pm_error(g->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    return MPI_SUCCESS;
}

static void gather_root_own(struct pm_cx *cx, const struct gather *g)
{
    int me = g->c->rank;
    if (g->sbuf != MPI_IN_PLACE)
        pm_cx_copy(cx, g->sbuf, g->scount, g->stype, gather_block(g, me),
                   g->v ? pm_cnt(g->rcounts, me) : g->rcount, g->rtype);
}

/* Linear: every block straight to/from the root, all posted at once. */
static void gather_linear(struct pm_cx *cx, const struct gather *g)
{
    struct pm_comm *c = g->c;
    bool inter = c->is_inter;
    bool at_root = inter ? g->root == MPI_ROOT : g->root == c->rank;
    if (inter && g->root == MPI_PROC_NULL)
        return;
    /* An empty block is no message: both sides know it from their own
     * counts (as Open MPI does; a mismatch then waits instead of failing). */
    if (!at_root) {
        if (pm_coll_bytes(g->scount, g->stype))
            pm_cx_send(cx, g->sbuf, g->scount, g->stype, g->root);
        return;
    }
    for (int i = 0; i < c->remote->size && !cx->stop; i++) {
        MPI_Count cnt = g->v ? pm_cnt(g->rcounts, i) : g->rcount;
        if ((!inter && i == c->rank) || !pm_coll_bytes(cnt, g->rtype))
            continue;
        pm_cx_room(cx);
        pm_cx_recv(cx, gather_block(g, i), cnt, g->rtype, i);
    }
    if (!inter)
        gather_root_own(cx, g);
}

/* Binomial tree over ranks relative to the root (intracommunicator). */
static void gather_tree(struct pm_cx *cx, const struct gather *g, size_t block)
{
    struct pm_comm *c = g->c;
    int n = c->size, root = g->root;
    int vr = (c->rank - root + n) % n;
    if (vr == 0) {
        /* Children vr + mask own subtrees of min(mask, n - child) ranks;
         * the subtrees cover relative ranks 1..n-1 in order, so at most one
         * of them wraps past rank n-1: it lands in scratch. */
        void *wrap = NULL;
        int wrap_first = 0, wrap_k = 0;
        for (int mask = 1; mask < n && !cx->stop; mask <<= 1) {
            int k = mask < n - mask ? mask : n - mask;
            int first = (mask + root) % n;
            if (first + k <= n) {
                pm_cx_recv(cx, gather_block(g, first), (MPI_Count)k * g->rcount, g->rtype, first);
                continue;
            }
            if (wrap) {
                pm_cx_fail(cx, MPI_ERR_INTERN);
                return;
            }
            wrap = pm_cx_scratch(cx, (size_t)k * block);
            if (!wrap)
                return;
            wrap_first = first;
            wrap_k = k;
            pm_cx_recv(cx, wrap, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, first);
        }
        gather_root_own(cx, g);
        if (!wrap)
            return;
        pm_cx_fence(cx);
        int tail = n - wrap_first; /* ranks first..n-1, then 0.. */
        pm_cx_copy(cx, wrap, (MPI_Count)tail * (MPI_Count)block, MPI_BYTE,
                   gather_block(g, wrap_first), (MPI_Count)tail * g->rcount, g->rtype);
        pm_cx_copy(cx, pm_at(wrap, (MPI_Aint)tail * (MPI_Aint)block),
                   (MPI_Count)(wrap_k - tail) * (MPI_Count)block, MPI_BYTE, gather_block(g, 0),
                   (MPI_Count)(wrap_k - tail) * g->rcount, g->rtype);
        return;
    }
    int low = vr & -vr;
    int parent = (vr - low + root) % n;
    int k = low < n - vr ? low : n - vr; /* ranks in my subtree */
    if (k == 1) { /* leaf */
        pm_cx_send(cx, g->sbuf, g->scount, g->stype, parent);
        return;
    }
    char *tmp = pm_cx_scratch(cx, (size_t)k * block);
    if (!tmp)
        return;
    pm_cx_copy(cx, g->sbuf, g->scount, g->stype, tmp, (MPI_Count)block, MPI_BYTE);
    for (int mask = 1; mask < low && vr + mask < n && !cx->stop; mask <<= 1) {
        int child = vr + mask;
        int ck = mask < n - child ? mask : n - child;
        pm_cx_recv(cx, tmp + (size_t)mask * block, (MPI_Count)ck * (MPI_Count)block, MPI_BYTE,
                   (child + root) % n);
    }
    pm_cx_fence(cx);
    pm_cx_send(cx, tmp, (MPI_Count)k * (MPI_Count)block, MPI_BYTE, parent);
}

static void gather_build(struct pm_cx *cx, const struct gather *g)
{
    struct pm_comm *c = g->c;
    if (c->is_inter || g->v) {
        gather_linear(cx, g);
        return;
    }
    if (c->size == 1) {
        gather_root_own(cx, g);
        return;
    }
    bool at_root = g->root == c->rank;
    MPI_Count block = at_root ? g->rcount * pm_type_get(g->rtype)->size
                              : g->scount * pm_type_get(g->stype)->size;
    if (block <= PM_GATHER_TREE_MAX_BLOCK)
        gather_tree(cx, g, (size_t)block);
    else
        gather_linear(cx, g);
}

static int gather_do(struct gather *g, MPI_Request *request, bool nonblocking)
{
    int rc = gather_check(g, request, nonblocking);
    if (rc)
        return rc;
    /* MPI_Gather with empty blocks: the root's recvcount and every rank's
     * sendcount must say so alike (Gatherv's counts only the root has) */
    bool root = g->c->rank == g->root;
    if (!g->v && !g->c->is_inter &&
        (g->sbuf == MPI_IN_PLACE || pm_coll_bytes(g->scount, g->stype) == 0) &&
        (!root || pm_coll_bytes(g->rcount, g->rtype) == 0))
        return pm_coll_nothing(request, nonblocking);
    /* MPI_Gatherv with nothing to or from this rank: the others may still
     * send to the root; no schedule, no message */
    if (g->v && !g->c->is_inter &&
        pm_coll_rank_empty_v(g->sbuf, g->scount, g->stype, root, g->rcounts, g->rtype,
                             g->c->size)) {
        pm_coll_skip_seq(g->c);
        return pm_coll_nothing(request, nonblocking);
    }
    struct pm_cx cx;
    if (pm_cx_begin(&cx, g->c, nonblocking))
        return pm_error(g->comm, MPI_ERR_NO_MEM, "%s: out of memory", g->fname);
    pm_cx_note(&cx, g->own.err);
    gather_build(&cx, g);
    return pm_coll_cx_go(&cx, &g->own, g->comm, g->fname, g->c->rank, request);
}

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_GATHER_API(SUF, CT, DT)                                                                \
    int PMPI_Gather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,                \
                         void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,            \
                         MPI_Comm comm)                                                           \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Gather" #SUF);                                                         \
        struct pm_comm *zc;                                                                       \
        if (pm_coll_zero_rooted(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, \
                                comm, &zc))                                                       \
            return MPI_SUCCESS;                                                                   \
        int fast = pm_gather_fast("MPI_Gather" #SUF, sendbuf, sendcount, sendtype, recvbuf,       \
                                  recvcount, recvtype, root, comm);                               \
        if (PM_LIKELY(fast >= 0))                                                                 \
            return fast;                                                                          \
        struct gather g = {"MPI_Gather" #SUF, comm, NULL, sendbuf, sendcount, sendtype, recvbuf,  \
                           recvcount, PM_NO_COUNTS, PM_NO_DISPLS, recvtype, root, false,          \
                           {0, 0, 0}};                                                            \
        return gather_do(&g, NULL, false);                                                        \
    }                                                                                             \
    PM_WEAK(Gather##SUF)                                                                          \
                                                                                                  \
    int PMPI_Igather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,               \
                          void *recvbuf, CT recvcount, MPI_Datatype recvtype, int root,           \
                          MPI_Comm comm, MPI_Request *request)                                    \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Igather" #SUF);                                                        \
        struct pm_comm *zc; /* empty blocks: a finished request */                                \
        if (request && pm_coll_zero_rooted(sendbuf, sendcount, sendtype, recvbuf, recvcount,      \
                                           recvtype, root, comm, &zc))                            \
            return pm_coll_nothing(request, true);                                                \
        struct gather g = {"MPI_Igather" #SUF, comm, NULL, sendbuf, sendcount, sendtype,          \
                           recvbuf, recvcount, PM_NO_COUNTS, PM_NO_DISPLS, recvtype, root,        \
                           false, {0, 0, 0}};                                                     \
        return gather_do(&g, request, true);                                                      \
    }                                                                                             \
    PM_WEAK(Igather##SUF)                                                                         \
                                                                                                  \
    int PMPI_Gatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,               \
                          void *recvbuf, const CT recvcounts[], const DT displs[],                \
                          MPI_Datatype recvtype, int root, MPI_Comm comm)                         \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Gatherv" #SUF);                                                        \
        if (pm_coll_zero_rooted_v(sendbuf, sendcount, sendtype, recvbuf, PM_COUNTS(recvcounts),   \
                                  PM_DISPLS(displs), recvtype, root, comm))                       \
            return MPI_SUCCESS;                                                                   \
        struct gather g = {"MPI_Gatherv" #SUF, comm, NULL, sendbuf, sendcount, sendtype,          \
                           recvbuf, 0, PM_COUNTS(recvcounts), PM_DISPLS(displs), recvtype, root,  \
                           true, {0, 0, 0}};                                                      \
        return gather_do(&g, NULL, false);                                                        \
    }                                                                                             \
    PM_WEAK(Gatherv##SUF)                                                                         \
                                                                                                  \
    int PMPI_Igatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,              \
                           void *recvbuf, const CT recvcounts[], const DT displs[],               \
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)  \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Igatherv" #SUF);                                                       \
        struct gather g = {"MPI_Igatherv" #SUF, comm, NULL, sendbuf, sendcount, sendtype,         \
                           recvbuf, 0, PM_COUNTS(recvcounts), PM_DISPLS(displs), recvtype, root,  \
                           true, {0, 0, 0}};                                                      \
        return gather_do(&g, request, true);                                                      \
    }                                                                                             \
    PM_WEAK(Igatherv##SUF)

PM_GATHER_API(, int, int)
PM_GATHER_API(_c, MPI_Count, MPI_Aint)
