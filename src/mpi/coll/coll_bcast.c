/*
 * coll_bcast.c — MPI_Bcast and MPI_Ibcast.
 *
 * Intracommunicator, by message size:
 *  - below PM_BCAST_LARGE (or two ranks, or a node of the job swamped:
 *    coll_policy.c): binomial tree over ranks relative to the root; an
 *    inner node forwards to its largest subtree first;
 *  - from PM_BCAST_LARGE up on a crowded node (contiguous data): the same
 *    tree in PM_BCAST_SEGMENT pieces, an inner node passing piece k on
 *    while it receives piece k + 1;
 *  - from PM_BCAST_LARGE up otherwise (van de Geijn): the root's bytes
 *    are cut into n chunks and scattered down the binomial tree (each node
 *    receives the chunks of its subtree), then a ring allgather circulates
 *    the chunks (n - 1 rounds, the root receives nothing). Noncontiguous
 *    data is packed at the root and unpacked at the others.
 * Intercommunicator: the root (MPI_ROOT) sends to rank 0 of the remote
 * group, which broadcasts in its group.
 */
#include "coll_algo.h"

static int bcast_binomial(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt,
                          int root, int rank, int size)
{
    int vr = (rank - root + size) % size;
    int mask = 1;
    for (; mask < size; mask <<= 1) {
        if (vr & mask) {
            pm_cx_recv(cx, buf, count, dt, (rank - mask + size) % size);
            pm_cx_fence(cx);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < size)
            pm_cx_send(cx, buf, count, dt, (rank + mask) % size);
    return cx->err;
}

/* The binomial tree in segments of `seg` bytes of b: the parent's piece
 * k + 1 is received while piece k goes on to the children. */
static int bcast_binomial_segments(struct pm_cx *cx, unsigned char *b, size_t bytes,
                                   size_t seg, int root, int rank, int size)
{
    int vr = (rank - root + size) % size;
    int mask = 1;
    while (mask < size && !(vr & mask))
        mask <<= 1;
    int parent = vr ? (rank - mask + size) % size : -1;
    size_t nseg = (bytes + seg - 1) / seg;
    if (parent >= 0) {
        pm_cx_recv(cx, b, (MPI_Count)(bytes < seg ? bytes : seg), MPI_BYTE, parent);
        pm_cx_fence(cx);
    }
    for (size_t k = 0; k < nseg && !cx->stop; k++) {
        size_t lo = k * seg, len = bytes - lo < seg ? bytes - lo : seg;
        for (int m = mask >> 1; m > 0; m >>= 1)
            if (vr + m < size)
                pm_cx_send(cx, b + lo, (MPI_Count)len, MPI_BYTE, (rank + m) % size);
        if (parent >= 0 && k + 1 < nseg) {
            size_t next = lo + seg, nlen = bytes - next < seg ? bytes - next : seg;
            pm_cx_recv(cx, b + next, (MPI_Count)nlen, MPI_BYTE, parent);
        }
        pm_cx_fence(cx);
    }
    return cx->err;
}

/* Bytes [lo, lo + len) of chunks first..first+n-1 (chunk size cs). */
static void chunk_range(size_t bytes, size_t cs, int first, int n, size_t *lo, size_t *len)
{
    size_t a = (size_t)first * cs, b = a + (size_t)n * cs;
    if (a > bytes)
        a = bytes;
    if (b > bytes)
        b = bytes;
    *lo = a;
    *len = b - a;
}

static int bcast_scatter_ring(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt,
                              int root, int rank, int size, size_t bytes)
{
    const struct pm_datatype *t = pm_type_get(dt);
    unsigned char *b;
    if (t->contiguous) {
        b = pm_at(buf, t->true_lb);
    } else {
        b = pm_cx_scratch(cx, bytes);
        if (!b)
            return cx->err;
        if (rank == root)
            pm_cx_copy(cx, buf, count, dt, b, (MPI_Count)bytes, MPI_BYTE);
    }
    size_t cs = (bytes + (size_t)size - 1) / (size_t)size, lo, len;
    int vr = (rank - root + size) % size;
    /* scatter: receive my subtree's chunks, pass on my children's */
    int mask = 1;
    while (mask < size && !(vr & mask))
        mask <<= 1;
    if (vr) {
        chunk_range(bytes, cs, vr, mask, &lo, &len);
        if (len)
            pm_cx_recv(cx, b + lo, (MPI_Count)len, MPI_BYTE, (rank - mask + size) % size);
        pm_cx_fence(cx);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask >= size)
            continue;
        chunk_range(bytes, cs, vr + mask, mask, &lo, &len);
        if (len)
            pm_cx_send(cx, b + lo, (MPI_Count)len, MPI_BYTE, (rank + mask) % size);
    }
    pm_cx_fence(cx);
    /* ring allgather over relative ranks; the root already has everything */
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    for (int i = 0; i < size - 1; i++) {
        int si = (vr - i + size) % size, ri = (vr - i - 1 + size) % size;
        if (vr != 0) {
            chunk_range(bytes, cs, ri, 1, &lo, &len);
            if (len)
                pm_cx_recv(cx, b + lo, (MPI_Count)len, MPI_BYTE, left);
        }
        if (vr != size - 1) {
            chunk_range(bytes, cs, si, 1, &lo, &len);
            if (len)
                pm_cx_send(cx, b + lo, (MPI_Count)len, MPI_BYTE, right);
        }
        pm_cx_fence(cx);
    }
    if (!t->contiguous && rank != root)
        pm_cx_copy(cx, b, (MPI_Count)bytes, MPI_BYTE, buf, count, dt);
    return cx->err;
}

int pm_alg_bcast(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                 int rank, int size)
{
    if (size == 1)
        return cx->err;
    size_t bytes = (size_t)count * (size_t)pm_type_get(dt)->size;
    if (bytes >= PM_BCAST_LARGE && size > 2 && !pm_coll_crowded)
        return bcast_scatter_ring(cx, buf, count, dt, root, rank, size, bytes);
    const struct pm_datatype *t = pm_type_get(dt);
    if (bytes >= PM_BCAST_LARGE && size > 2 && !pm_coll_swamped && t->contiguous)
        return bcast_binomial_segments(cx, pm_at(buf, t->true_lb), bytes, PM_BCAST_SEGMENT,
                                       root, rank, size);
    return bcast_binomial(cx, buf, count, dt, root, rank, size);
}

static int bcast_build(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt, int root)
{
    struct pm_comm *c = cx->c;
    if (!c->is_inter)
        return pm_alg_bcast(cx, buf, count, dt, root, c->rank, c->size);
    if (root == MPI_PROC_NULL)
        return cx->err;
    if (root == MPI_ROOT)
        return pm_cx_send(cx, buf, count, dt, 0);
    if (c->rank == 0) {
        pm_cx_recv(cx, buf, count, dt, root);
        pm_cx_fence(cx);
    }
    cx->local = true;
    pm_alg_bcast(cx, buf, count, dt, 0, c->rank, c->size);
    cx->local = false;
    return cx->err;
}

/* Checks in the standard's order; *bytes is the message size. */
static int bcast_check(const char *fn, MPI_Comm comm, struct pm_comm **cp, void *buf,
                       MPI_Count count, MPI_Datatype dt, int root, size_t *bytes)
{
    int rc = pm_coll_check_comm(fn, comm, cp);
    if (rc)
        return rc;
    struct pm_comm *c = *cp;
    if ((rc = pm_coll_check_root(fn, c, root)))
        return rc;
    *bytes = 0;
    if (c->is_inter && root == MPI_PROC_NULL)
        return MPI_SUCCESS; /* only root is significant there */
    if ((rc = pm_coll_check_buf(fn, c, count, dt)))
        return rc;
    *bytes = (size_t)count * (size_t)pm_type_get(dt)->size;
    return pm_coll_check_data(fn, c, "buffer", buf, count, dt);
}

/* Latency path: up to PM_CX_BLOCKING_SEND bytes of a predefined contiguous
 * type on an intracommunicator: the binomial tree of bcast_binomial (same
 * peers, same order, same tag) straight on the engine's blocking calls.
 * Returns -1 when the call does not qualify, else an MPI code. */
static int bcast_small(void *buf, MPI_Count count, MPI_Datatype dt, int root, MPI_Comm comm)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    int64_t esize = pm_type_fast_size(dt);
    if (!c || c->is_inter || esize <= 0 || count <= 0 || count > PM_CX_BLOCKING_SEND ||
        (unsigned)root >= (unsigned)c->size ||
        c->size == 1 || (size_t)count * (size_t)esize > PM_CX_BLOCKING_SEND || !buf ||
        buf == MPI_IN_PLACE)
        return -1;
    size_t bytes = (size_t)count * (size_t)esize;
    uint32_t seq = pm_coll_next_seq(c);
    int rank = c->rank, size = c->size;
    int vr = (rank - root + size) % size, mask = 1, rc = PROUST_OK, err = MPI_SUCCESS;
    for (; mask < size; mask <<= 1) {
        if (vr & mask) {
            proust_status_t ps;
            rc = proust_recv(pm_session, buf, bytes, pm_comm_peer(c, (rank - mask + size) % size),
                             c->tag_coll | seq, PM_COLL_RECV_MASK, &ps);
            bool stop;
            err = pm_coll_recv_outcome(rc, &ps, bytes, &stop);
            if (stop)
                return err;
            break; /* after a mismatch, forward all the same (coll.h) */
        }
    }
    proust_tag_t tag = c->tag_coll | c->tag_src | seq | (err ? PM_COLL_FAILED_BIT : 0);
    for (mask >>= 1, rc = PROUST_OK; mask > 0 && rc == PROUST_OK; mask >>= 1)
        if (vr + mask < size)
            rc = proust_send(pm_session, buf, bytes, pm_comm_peer(c, (rank + mask) % size), tag);
    return rc != PROUST_OK ? pm_error_from_proust(rc) : err;
}

static int bcast_blocking(const char *fn, void *buffer, MPI_Count count, MPI_Datatype datatype,
                          int root, MPI_Comm comm)
{
    struct pm_comm *zc;
    if (count == 0 && pm_coll_zero_ok(comm, datatype, &zc) && root >= 0 && root < zc->size)
        return MPI_SUCCESS;
    int fast = bcast_small(buffer, count, datatype, root, comm);
    if (PM_LIKELY(fast == MPI_SUCCESS))
        return MPI_SUCCESS;
    if (fast > 0)
        return pm_error(comm, fast, "%s: communication failed (root %d, count %lld)", fn, root,
                        count);
    struct pm_comm *c;
    size_t bytes;
    int rc = bcast_check(fn, comm, &c, buffer, count, datatype, root, &bytes);
    if (rc)
        return rc;
    /* the same on every rank of an intracommunicator (signatures match);
     * not across an intercommunicator, where MPI_PROC_NULL members pass
     * nothing while the root sends: all take part, to keep the sequence */
    if (!c->is_inter && (bytes == 0 || c->size == 1))
        return MPI_SUCCESS;
    struct pm_cx cx;
    pm_cx_direct(&cx, c);
    bcast_build(&cx, buffer, count, datatype, root);
    rc = pm_cx_end(&cx);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: communication failed on rank %d (root %d, %zu bytes)", fn,
                        c->rank, root, bytes);
    return MPI_SUCCESS;
}

static int bcast_nonblocking(const char *fn, void *buffer, MPI_Count count,
                             MPI_Datatype datatype, int root, MPI_Comm comm,
                             MPI_Request *request)
{
    struct pm_comm *c;
    if (count == 0 && request && pm_coll_zero_ok(comm, datatype, &c) && root >= 0 &&
        root < c->size) /* (as the blocking call) */
        return pm_coll_nothing(request, true);
    size_t bytes;
    int rc = bcast_check(fn, comm, &c, buffer, count, datatype, root, &bytes);
    if (rc)
        return rc;
    if ((rc = pm_coll_check_request(fn, c, request)))
        return rc;
    if (bytes == 0 && !c->is_inter) /* as the blocking call (0.09 -> 0.01 us) */
        return pm_coll_nothing(request, true);
    struct pm_cx cx;
    if (pm_cx_sched(&cx, c))
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    if (bytes)
        bcast_build(&cx, buffer, count, datatype, root);
    rc = pm_cx_start(&cx, request);
    if (PM_UNLIKELY(rc))
        return pm_error(comm, rc, "%s: cannot start the operation", fn);
    return MPI_SUCCESS;
}

/* Each entry point and its _c twin (MPI_Count counts). */
#define PM_BCAST_API(SUF, CT)                                                                     \
    int PMPI_Bcast##SUF(void *buffer, CT count, MPI_Datatype datatype, int root, MPI_Comm comm)   \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Bcast" #SUF);                                                          \
        return bcast_blocking("MPI_Bcast" #SUF, buffer, count, datatype, root, comm);             \
    }                                                                                             \
    PM_WEAK(Bcast##SUF)                                                                           \
                                                                                                  \
    int PMPI_Ibcast##SUF(void *buffer, CT count, MPI_Datatype datatype, int root, MPI_Comm comm,  \
                         MPI_Request *request)                                                    \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ibcast" #SUF);                                                         \
        return bcast_nonblocking("MPI_Ibcast" #SUF, buffer, count, datatype, root, comm,          \
                                 request);                                                        \
    }                                                                                             \
    PM_WEAK(Ibcast##SUF)

PM_BCAST_API(, int)
PM_BCAST_API(_c, MPI_Count)
