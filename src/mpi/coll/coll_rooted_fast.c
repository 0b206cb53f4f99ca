/*
 * coll_rooted_fast.c — blocking MPI_Scatter(v) and MPI_Gather straight on
 * the engine where a rank's part is one message (MPI.md, "Engine fast
 * paths"): a leaf of the binomial tree (or any non-root rank when blocks go
 * linearly, as Scatterv's always do) receives or sends its own block from
 * or to its parent, and the
 * root of two ranks sends or receives the other rank's block and copies
 * its own. Same peer, tag, sequence number and bytes as the general
 * algorithms (coll_scatter.c, coll_gather.c), so a rank whose datatype
 * takes the general path still matches; only predefined contiguous types
 * qualify, and anything the general path would report goes there.
 */
#include <stdint.h>

#include "coll_algo.h"

/* The intracommunicator of at least two ranks, or NULL. */
static struct pm_comm *rooted_comm(MPI_Comm comm, int root)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    if (!c || c->is_inter || c->size < 2 || root < 0 || root >= c->size)
        return NULL;
    return c;
}

/* Bytes of `count` elements of a predefined contiguous type; 0 when the
 * buffer does not qualify (no elements, a derived type, no buffer). */
static size_t fast_bytes(const void *buf, MPI_Count count, MPI_Datatype dt)
{
    int64_t size = pm_type_fast_size(dt);
    if (!buf || buf == MPI_IN_PLACE || size <= 0 || count <= 0 ||
        (uint64_t)count > SIZE_MAX / (uint64_t)size)
        return 0;
    return (size_t)count * (size_t)size;
}

/* A non-root rank's one peer for a block of `bytes`: its tree parent, or
 * the root when blocks go linearly; -1 when it is an inner tree node. */
static int one_peer(const struct pm_comm *c, int root, size_t bytes, size_t tree_max)
{
    int n = c->size, vr = (c->rank - root + n) % n;
    if (bytes > tree_max)
        return root;
    int low = vr & -vr;
    int k = low < n - vr ? low : n - vr; /* ranks in my subtree */
    return k == 1 ? (vr - low + root) % n : -1;
}

static int recv_one(struct pm_comm *c, void *buf, size_t bytes, int from)
{
    uint32_t seq = pm_coll_next_seq(c);
    proust_status_t ps;
    int rc = proust_recv(pm_session, buf, bytes, pm_comm_peer(c, from), c->tag_coll | seq,
                         PM_COLL_RECV_MASK, &ps);
    bool stop;
    return pm_coll_recv_outcome(rc, &ps, bytes, &stop);
}

/* Send `bytes` to `to` and copy `own_bytes` from `own_from` to `own_to`
 * (NULL: none) while it goes. */
static int send_one(struct pm_comm *c, const void *buf, size_t bytes, int to, void *own_to,
                    const void *own_from, size_t own_bytes)
{
    uint32_t seq = pm_coll_next_seq(c);
    proust_tag_t tag = c->tag_coll | c->tag_src | seq;
    int peer = pm_comm_peer(c, to);
    if (bytes <= PM_CX_BLOCKING_SEND) { /* eager: leaves at once */
        int rc = proust_send(pm_session, buf, bytes, peer, tag);
        if (own_to)
            proust_copy(own_to, own_from, own_bytes);
        return pm_error_from_proust(rc);
    }
    proust_request_t *req = NULL;
    int rc = proust_isend(pm_session, buf, bytes, peer, tag, &req);
    if (own_to)
        proust_copy(own_to, own_from, own_bytes);
    if (rc != PROUST_OK)
        return pm_error_from_proust(rc);
    proust_status_t st = {0};
    rc = proust_wait(&req, &st);
    return pm_error_from_proust(rc != PROUST_OK ? rc : st.error);
}

/* An MPI code, raised on the communicator when it is an error. */
static int outcome(int rc, const char *fn, MPI_Comm comm, const struct pm_comm *c, int root,
                   size_t bytes)
{
    if (PM_LIKELY(rc == MPI_SUCCESS))
        return MPI_SUCCESS;
    return pm_error(comm, rc, "%s: communication failed on rank %d (root %d, %zu bytes a block)",
                    fn, c->rank, root, bytes);
}

int pm_scatter_fast(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    struct pm_comm *c = rooted_comm(comm, root);
    if (!c)
        return -1;
    if (c->rank != root) {
        size_t bytes = fast_bytes(rbuf, rcount, rtype);
        int from = bytes ? one_peer(c, root, bytes, PM_SCATTER_TREE_MAX_BLOCK) : -1;
        return from < 0 ? -1 : outcome(recv_one(c, rbuf, bytes, from), fn, comm, c, root, bytes);
    }
    size_t bs = fast_bytes(sbuf, scount, stype);
    if (c->size != 2 || !bs)
        return -1;
    size_t room = rbuf == MPI_IN_PLACE ? 0 : fast_bytes(rbuf, rcount, rtype);
    void *own_to = rbuf == MPI_IN_PLACE ? NULL : rbuf;
    const char *own_from = (const char *)sbuf + (size_t)root * bs;
    /* (an own block whose size differs from the others', or a receive
     * buffer that is the send buffer or the root's block of it: the
     * general path reports it) */
    if (own_to && (room != bs || own_to == sbuf || own_to == own_from))
        return -1;
    return outcome(send_one(c, (const char *)sbuf + (size_t)(1 - root) * bs, bs, 1 - root,
                            own_to, own_from, bs),
                   fn, comm, c, root, bs);
}

int pm_scatterv_fast(const char *fn, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                     MPI_Comm comm)
{
    struct pm_comm *c = rooted_comm(comm, root);
    if (!c || c->rank == root)
        return -1;
    size_t bytes = fast_bytes(rbuf, rcount, rtype);
    if (!bytes) /* (nothing to receive: the general path skips the call) */
        return -1;
    return outcome(recv_one(c, rbuf, bytes, root), fn, comm, c, root, bytes);
}

int pm_gather_fast(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    struct pm_comm *c = rooted_comm(comm, root);
    if (!c)
        return -1;
    if (c->rank != root) {
        size_t bytes = fast_bytes(sbuf, scount, stype);
        int to = bytes ? one_peer(c, root, bytes, PM_GATHER_TREE_MAX_BLOCK) : -1;
        return to < 0 ? -1
                      : outcome(send_one(c, sbuf, bytes, to, NULL, NULL, 0), fn, comm, c, root,
                                bytes);
    }
    size_t bs = fast_bytes(rbuf, rcount, rtype);
    if (c->size != 2 || !bs)
        return -1;
    char *own_to = (char *)rbuf + (size_t)root * bs;
    size_t mine = sbuf == MPI_IN_PLACE ? 0 : fast_bytes(sbuf, scount, stype);
    /* (an own block whose size differs from the others', or a send buffer
     * that is the receive buffer or the root's block of it: the general
     * path reports it) */
    if (sbuf != MPI_IN_PLACE && (mine != bs || sbuf == rbuf || sbuf == own_to))
        return -1;
    if (sbuf != MPI_IN_PLACE)
        proust_copy(own_to, sbuf, mine); /* (small: before the wait) */
    return outcome(recv_one(c, (char *)rbuf + (size_t)(1 - root) * bs, bs, 1 - root), fn, comm,
                   c, root, bs);
}
