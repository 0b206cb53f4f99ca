/*
 * coll_allgather.c — MPI_Allgather, MPI_Allgatherv and their nonblocking
 * forms.
 *
 * Every algorithm is written once against a collective context
 * (coll_algo.h): blocking calls run its steps at once, nonblocking ones
 * return the request of its schedule. Local copies run when their round
 * starts, in order, so a copy may feed a send of its own round. Algorithms
 * (total = bytes of the whole result, the same on every rank):
 *  - linear: up to 8 ranks and 16 KiB in all (Allgather: in a job whose
 *    ranks all reach each other through shared memory), every block to
 *    every other rank in one round, received in place;
 *  - recursive doubling: Allgather, power-of-two ranks, total <= 512 KiB;
 *    log2(n) exchanges of aligned block ranges, straight in the receive
 *    buffer;
 *  - Bruck: otherwise for total <= 80 KiB (Allgatherv too): ceil(log2(n))
 *    exchanges of a packed scratch buffer holding the blocks in order of
 *    rank relative to the caller, then copied out;
 *  - ring: large totals; n-1 steps, each passing one block to the right.
 * The first exchange sends the own block from the send buffer and copies it
 * into place while the exchange runs.
 * Intercommunicators: each process exchanges its block with every process of
 * the other group, steps paired so both sides agree, at most
 * ALLGATHER_INTER_BATCH steps in flight.
 */
#include <stdint.h>

#include "coll_algo.h"

#define ALLGATHER_RD_MAX (512 * 1024)
#define ALLGATHER_BRUCK_MAX (80 * 1024)
#define ALLGATHER_INTER_BATCH 32

struct allgather {
    const char *fname;
    MPI_Comm comm;
    struct pm_comm *c;
    const void *sbuf;
    MPI_Count scount;
    MPI_Datatype stype;
    void *rbuf;
    MPI_Count rcount;         /* Allgather */
    struct pm_counts rcounts; /* Allgatherv */
    struct pm_displs displs;
    MPI_Datatype rtype;
    bool v;
    MPI_Aint rext;           /* filled by the check */
    MPI_Count rsize;
    struct pm_own_block own;
};

static MPI_Count count_of(const struct allgather *g, int i)
{
    return g->v ? pm_cnt(g->rcounts, i) : g->rcount;
}

/* Block of rank i in the receive buffer. */
static void *block_of(const struct allgather *g, int i)
{
    if (g->v)
        return pm_at(g->rbuf, pm_dsp(g->displs, i) * g->rext);
    return pm_at(g->rbuf, (MPI_Aint)i * g->rcount * g->rext);
}

static int allgather_check(struct allgather *g, MPI_Request *request, bool nonblocking)
{
    const char *fn = g->fname;
    int rc = pm_coll_check_comm(fn, g->comm, &g->c);
    if (rc)
        return rc;
    struct pm_comm *c = g->c;
    if (g->sbuf == MPI_IN_PLACE) {
        if (c->is_inter)
            return pm_error(g->comm, MPI_ERR_BUFFER,
                            "%s: MPI_IN_PLACE is not allowed on an intercommunicator", fn);
    } else {
        rc = pm_coll_check_buf(fn, c, g->scount, g->stype);
        if (rc)
            return rc;
    }
    if (g->rbuf == MPI_IN_PLACE)
        return pm_error(g->comm, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    int n = c->remote->size;
    if (g->v) {
        if (pm_counts_null(g->rcounts) || pm_displs_null(g->displs))
            return pm_error(g->comm, MPI_ERR_ARG, "%s: recvcounts or displs is NULL", fn);
        rc = pm_coll_check_counts(fn, c, "recvcounts", g->rcounts, n, g->rtype, NULL);
    } else {
        rc = pm_coll_check_buf(fn, c, g->rcount, g->rtype);
    }
    if (rc)
        return rc;
    g->rext = pm_type_get(g->rtype)->extent;
    g->rsize = pm_type_get(g->rtype)->size;
    if (!c->is_inter && g->sbuf != MPI_IN_PLACE) {
        MPI_Count have = g->scount * pm_type_get(g->stype)->size;
        MPI_Count room = (g->v ? pm_cnt(g->rcounts, c->rank) : g->rcount) * g->rsize;
        /* sendbuf at the start of recvbuf, or at this rank's own block */
        if (g->sbuf && g->rbuf && have > 0 &&
            (g->sbuf == g->rbuf || g->sbuf == block_of(g, c->rank)))
            return pm_error(g->comm, MPI_ERR_BUFFER,
                            "%s: sendbuf is recvbuf or its block for rank %d (use MPI_IN_PLACE)",
                            fn, c->rank);
        pm_own_block_check(&g->own, have, room);
    }
    if (nonblocking && !request)
        return pm_error(g->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    return MPI_SUCCESS;
}

static void own_copy(struct pm_cx *cx, const struct allgather *g)
{
    int me = g->c->rank;
    if (g->sbuf != MPI_IN_PLACE)
        pm_cx_copy(cx, g->sbuf, g->scount, g->stype, block_of(g, me), count_of(g, me), g->rtype);
}

/* Power-of-two ranks: at step `mask` each rank holds the aligned range of
 * `mask` blocks containing its own and swaps it with rank ^ mask. The first
 * step sends the own block from the send buffer, and copies it into place
 * while the exchange runs. */
static void allgather_rd(struct pm_cx *cx, const struct allgather *g)
{
    int n = g->c->size, me = g->c->rank;
    for (int mask = 1; mask < n && !cx->stop; mask <<= 1) {
        if (mask > 1)
            pm_cx_fence(cx);
        int peer = me ^ mask;
        int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        MPI_Count cnt = (MPI_Count)mask * g->rcount;
        pm_cx_recv(cx, block_of(g, theirs), cnt, g->rtype, peer);
        if (mask == 1 && g->sbuf != MPI_IN_PLACE) {
            pm_cx_send(cx, g->sbuf, g->scount, g->stype, peer);
            own_copy(cx, g);
        } else {
            pm_cx_send(cx, block_of(g, mine), cnt, g->rtype, peer);
        }
    }
}

/* Ring: step i passes block me - i to the right and takes me - i - 1 from
 * the left. */
static void allgather_ring(struct pm_cx *cx, const struct allgather *g)
{
    int n = g->c->size, me = g->c->rank;
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int i = 0; i < n - 1 && !cx->stop; i++) {
        int out = (me - i + n) % n, in = (me - i - 1 + n) % n;
        if (i)
            pm_cx_fence(cx);
        pm_cx_recv(cx, block_of(g, in), count_of(g, in), g->rtype, left);
        if (i == 0 && g->sbuf != MPI_IN_PLACE) {
            /* the own block leaves from the send buffer and is copied
             * into place while the exchange runs (copying it first put
             * a block's copy before every byte of the exchange) */
            pm_cx_send(cx, g->sbuf, g->scount, g->stype, right);
            own_copy(cx, g);
        } else {
            pm_cx_send(cx, block_of(g, out), count_of(g, out), g->rtype, right);
        }
    }
}

/* Bruck: scratch holds the blocks of ranks me, me+1, ... (mod n) packed;
 * off[j] is where the j-th starts. Step k sends the first min(k, n-k)
 * blocks to me - k and receives as many from me + k behind the k held. */
static void allgather_bruck(struct pm_cx *cx, const struct allgather *g)
{
    int n = g->c->size, me = g->c->rank;
    size_t *off = pm_cx_scratch(cx, ((size_t)n + 1) * sizeof *off);
    if (!off)
        return;
    off[0] = 0;
    for (int j = 0; j < n; j++)
        off[j + 1] = off[j] + (size_t)(count_of(g, (me + j) % n) * g->rsize);
    char *tmp = pm_cx_scratch(cx, off[n]);
    if (!tmp)
        return;
    if (g->sbuf == MPI_IN_PLACE)
        pm_cx_copy(cx, block_of(g, me), count_of(g, me), g->rtype, tmp, (MPI_Count)off[1],
                   MPI_BYTE);
    else
        pm_cx_copy(cx, g->sbuf, g->scount, g->stype, tmp, (MPI_Count)off[1], MPI_BYTE);
    own_copy(cx, g);
    for (int k = 1; k < n && !cx->stop; k <<= 1) {
        int cnt = k < n - k ? k : n - k;
        if (k > 1)
            pm_cx_fence(cx);
        pm_cx_recv(cx, tmp + off[k], (MPI_Count)(off[k + cnt] - off[k]), MPI_BYTE,
                   (me + k) % n);
        pm_cx_send(cx, tmp, (MPI_Count)off[cnt], MPI_BYTE, (me - k + n) % n);
    }
    pm_cx_fence(cx);
    if (!g->v) {
        /* Ranks me+1..n-1 then 0..me-1 are each one run of the buffer. */
        int tail = n - 1 - me;
        pm_cx_copy(cx, tmp + off[1], (MPI_Count)(off[1 + tail] - off[1]), MPI_BYTE,
                   block_of(g, me + 1), (MPI_Count)tail * g->rcount, g->rtype);
        pm_cx_copy(cx, tmp + off[1 + tail], (MPI_Count)(off[n] - off[1 + tail]), MPI_BYTE,
                   block_of(g, 0), (MPI_Count)me * g->rcount, g->rtype);
        return;
    }
    for (int j = 1; j < n && !cx->stop; j++) {
        int i = (me + j) % n;
        pm_cx_copy(cx, tmp + off[j], (MPI_Count)(off[j + 1] - off[j]), MPI_BYTE, block_of(g, i),
                   count_of(g, i), g->rtype);
    }
}

/* Intercommunicator: at step i send to (me + i) and receive from (me - i)
 * modulo the larger group's size, skipping ranks the other group lacks; the
 * peer meets us at the same step. */
static void allgather_inter(struct pm_cx *cx, const struct allgather *g)
{
    struct pm_comm *c = g->c;
    int me = c->rank, nr = c->remote->size;
    int mx = c->size > nr ? c->size : nr;
    for (int i = 0; i < mx && !cx->stop; i++) {
        if (i && i % ALLGATHER_INTER_BATCH == 0)
            pm_cx_fence(cx);
        int dst = (me + i) % mx, src = (me - i + mx) % mx;
        if (src < nr)
            pm_cx_recv(cx, block_of(g, src), count_of(g, src), g->rtype, src);
        if (dst < nr)
            pm_cx_send(cx, g->sbuf, g->scount, g->stype, dst);
    }
}

/* Our block to rank `to`: from the send buffer, or from its place. */
static void send_own(struct pm_cx *cx, const struct allgather *g, int to)
{
    int me = g->c->rank;
    if (g->sbuf == MPI_IN_PLACE)
        pm_cx_send(cx, block_of(g, me), count_of(g, me), g->rtype, to);
    else
        pm_cx_send(cx, g->sbuf, g->scount, g->stype, to);
}

/* Two ranks, v form or not: one exchange, the peer's block straight into
 * its place, ours from the send buffer (the messages of every algorithm
 * for two); a small own block is copied first (done while a schedule is
 * built), a large one while the exchange runs. */
static void allgather_two(struct pm_cx *cx, const struct allgather *g)
{
    int peer = 1 - g->c->rank;
    bool copy_first = g->sbuf != MPI_IN_PLACE &&
                      pm_coll_bytes(g->scount, g->stype) <= PM_CX_EAGER_COPY;
    if (copy_first)
        own_copy(cx, g);
    pm_cx_recv(cx, block_of(g, peer), count_of(g, peer), g->rtype, peer);
    send_own(cx, g, peer);
    if (!copy_first)
        own_copy(cx, g);
}

/* Few ranks and little data: every rank's block goes to every other in
 * one round, received in place. Bruck chains log2 n rounds through a
 * scratch buffer and copies each block out of it (Allgatherv, 4 ranks,
 * 8 B blocks: 1.2-1.3 x Open MPI, which sends this way); recursive
 * doubling waits for a partner at each of its log2 n rounds, each a turn
 * at a cpu on a crowded node (Allgather, 8 ranks on 2 cores, 1-256 B
 * blocks: 19.6-23 -> 13.3-14.5 us, Open MPI 17-23; Iallgather 18-20 ->
 * 15-16, Open MPI 14.3-15.7; 4 ranks: 4.5-6.0 -> 3.7-5.7, Open MPI
 * 5.3-9.1; medians of 5). */
#define ALLGATHER_LINEAR_MAX (16 * 1024)

static void allgather_linear(struct pm_cx *cx, const struct allgather *g)
{
    int n = g->c->size, me = g->c->rank;
    own_copy(cx, g); /* (nothing in place) */
    for (int k = 1; k < n && !cx->stop; k++) {
        int from = (me - k + n) % n;
        pm_cx_recv(cx, block_of(g, from), count_of(g, from), g->rtype, from);
    }
    for (int k = 1; k < n && !cx->stop; k++)
        send_own(cx, g, (me + k) % n);
}

static void allgather_build(struct pm_cx *cx, const struct allgather *g)
{
    struct pm_comm *c = g->c;
    int n = c->size;
    if (c->is_inter) {
        allgather_inter(cx, g);
        return;
    }
    if (n == 1) {
        own_copy(cx, g);
        return;
    }
    if (n == 2) {
        allgather_two(cx, g);
        return;
    }
    MPI_Count total = 0;
    for (int i = 0; i < n; i++)
        total += count_of(g, i) * g->rsize;
    if (n <= PM_COLL_ONE_ROUND_RANKS && total <= ALLGATHER_LINEAR_MAX &&
        (g->v || pm_coll_shm_only))
        allgather_linear(cx, g);
    else if (!g->v && (n & (n - 1)) == 0 && total <= ALLGATHER_RD_MAX)
        allgather_rd(cx, g);
    else if (total <= ALLGATHER_BRUCK_MAX)
        allgather_bruck(cx, g);
    else
        allgather_ring(cx, g);
}

/* No block has a byte: the receive counts every rank has alike say so. */
static bool allgather_empty(const struct allgather *g)
{
    if (g->c->is_inter ||
        (g->sbuf != MPI_IN_PLACE && pm_coll_bytes(g->scount, g->stype) != 0))
        return false;
    if (pm_type_get(g->rtype)->size == 0)
        return true;
    for (int i = 0; i < g->c->size; i++)
        if (count_of(g, i) != 0)
            return false;
    return true;
}

static int allgather_do(struct allgather *g, MPI_Request *request, bool nonblocking)
{
    int rc = allgather_check(g, request, nonblocking);
    if (rc)
        return rc;
    if (allgather_empty(g))
        return pm_coll_nothing(request, nonblocking);
    struct pm_cx cx;
    if (pm_cx_begin(&cx, g->c, nonblocking))
        return pm_error(g->comm, MPI_ERR_NO_MEM, "%s: out of memory", g->fname);
    pm_cx_note(&cx, g->own.err);
    allgather_build(&cx, g);
    return pm_coll_cx_go(&cx, &g->own, g->comm, g->fname, g->c->rank, request);
}

/* Two ranks: blocks of predefined types straight on the engine, without
 * the collective context's bookkeeping (MPI.md, "Engine fast paths").
 * Whatever the algorithm, two ranks exchange one message each way, the
 * own block (recursive doubling's one round, Bruck's one step, the ring's
 * one step: same tags, same bytes, a zero-byte message for an empty block
 * of Allgatherv), so a rank whose datatype takes the general path still
 * matches. The own block is copied while the exchange runs. The
 * allgather*_pair functions return -1 when the call does not qualify, else
 * an MPI code. */
#define ALLGATHER_PAIR_MAX (ALLGATHER_RD_MAX / 2)

/* `mine` (bytes) goes to the peer, whose `theirs` bytes land at `in`;
 * `own` (NULL in place) receives a copy of mine. */
static int pair_exchange(struct pm_comm *c, const void *mine, size_t bytes, void *in,
                         size_t theirs, void *own)
{
    int peer = 1 - c->rank;
    uint32_t seq = pm_coll_next_seq(c);
    proust_request_t *reqs[2] = {NULL, NULL};
    int rc = proust_irecv(pm_session, in, theirs, pm_comm_peer(c, peer), c->tag_coll | seq,
                          PM_COLL_RECV_MASK, &reqs[0]);
    if (rc == PROUST_OK)
        rc = proust_isend(pm_session, mine, bytes, pm_comm_peer(c, peer),
                          c->tag_coll | c->tag_src | seq, &reqs[1]);
    if (own)
        proust_copy(own, mine, bytes);
    bool posted = reqs[0] != NULL;
    if (rc != PROUST_OK && posted)
        proust_cancel(reqs[0]);
    proust_status_t st[2] = {{0}, {0}};
    proust_waitall(2, reqs, st); /* (sets the requests to NULL; NULL ones are done) */
    int err = pm_error_from_proust(rc);
    if (!err)
        err = pm_error_from_proust(st[1].error); /* the send */
    if (!err && posted) {
        bool stop;
        err = pm_coll_recv_outcome(st[0].error, &st[0], theirs, &stop);
    }
    return err;
}

/* The two-rank intracommunicator, or NULL. */
static struct pm_comm *pair_comm(MPI_Comm comm, const void *rbuf)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    if (!c || c->is_inter || c->size != 2 || !rbuf || rbuf == MPI_IN_PLACE)
        return NULL;
    return c;
}

/* The send side: the own block's bytes from sbuf must be `bs`; NULL when
 * the call does not qualify (sbuf is the receive buffer or its own block:
 * the general path reports that). */
static const void *pair_mine(const void *sbuf, MPI_Count scount, MPI_Datatype stype, size_t bs,
                             const char *rbuf, const char *own_block)
{
    if (sbuf == MPI_IN_PLACE)
        return own_block;
    int64_t ss = pm_type_fast_size(stype);
    if (!sbuf || ss <= 0 || scount < 0 || (size_t)scount * (size_t)ss != bs || sbuf == rbuf ||
        sbuf == own_block)
        return NULL;
    return sbuf;
}

static int allgather_pair(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    struct pm_comm *c = pair_comm(comm, rbuf);
    int64_t rs = pm_type_fast_size(rtype);
    if (!c || rs <= 0 || rcount <= 0 || rcount > ALLGATHER_PAIR_MAX ||
        (size_t)rcount * (size_t)rs > ALLGATHER_PAIR_MAX)
        return -1;
    size_t bs = (size_t)rcount * (size_t)rs;
    int me = c->rank;
    char *out = rbuf;
    if (sbuf != MPI_IN_PLACE && (const char *)sbuf >= out && (const char *)sbuf < out + 2 * bs)
        return -1;
    const void *mine = pair_mine(sbuf, scount, stype, bs, out, out + (size_t)me * bs);
    if (!mine)
        return -1;
    return pair_exchange(c, mine, bs, out + (size_t)(1 - me) * bs, bs,
                         sbuf == MPI_IN_PLACE ? NULL : out + (size_t)me * bs);
}

static int allgatherv_pair(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           struct pm_counts counts, struct pm_displs displs, MPI_Datatype rtype,
                           MPI_Comm comm)
{
    struct pm_comm *c = pair_comm(comm, rbuf);
    int64_t rs = pm_type_fast_size(rtype);
    if (!c || rs <= 0 || pm_counts_null(counts) || pm_displs_null(displs))
        return -1;
    int me = c->rank, peer = 1 - me;
    MPI_Count km = pm_cnt(counts, me), kp = pm_cnt(counts, peer);
    if (km < 0 || kp < 0 || (km == 0 && kp == 0) || km > ALLGATHER_PAIR_MAX / rs ||
        kp > ALLGATHER_PAIR_MAX / rs || pm_dsp(displs, me) < 0 || pm_dsp(displs, peer) < 0)
        return -1;
    char *out = rbuf;
    char *own = out + pm_dsp(displs, me) * (MPI_Aint)rs;
    size_t bs = (size_t)km * (size_t)rs;
    const void *mine = pair_mine(sbuf, scount, stype, bs, out, own);
    if (!mine)
        return -1;
    return pair_exchange(c, mine, bs, out + pm_dsp(displs, peer) * (MPI_Aint)rs,
                         (size_t)kp * (size_t)rs, sbuf == MPI_IN_PLACE ? NULL : own);
}

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_ALLGATHER_API(SUF, CT, DT)                                                             \
    int PMPI_Allgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,             \
                            void *recvbuf, CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)    \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Allgather" #SUF);                                                      \
        struct pm_comm *zc;                                                                       \
        if (pm_coll_zero_all(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,    \
                             &zc))                                                                \
            return MPI_SUCCESS;                                                                   \
        int fast = allgather_pair(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,     \
                                  comm);                                                          \
        if (PM_LIKELY(fast == MPI_SUCCESS))                                                       \
            return MPI_SUCCESS;                                                                   \
        if (fast > 0)                                                                             \
            return pm_error(comm, fast, "%s: communication failed (%lld elements a block)",       \
                            "MPI_Allgather" #SUF, (long long)recvcount);                          \
        struct allgather g = {"MPI_Allgather" #SUF, comm, NULL, sendbuf, sendcount, sendtype,     \
                              recvbuf, recvcount, PM_NO_COUNTS, PM_NO_DISPLS, recvtype, false,    \
                              0, 0, {0, 0, 0}};                                                   \
        return allgather_do(&g, NULL, false);                                                     \
    }                                                                                             \
    PM_WEAK(Allgather##SUF)                                                                       \
                                                                                                  \
    int PMPI_Iallgather##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,            \
                             void *recvbuf, CT recvcount, MPI_Datatype recvtype, MPI_Comm comm,   \
                             MPI_Request *request)                                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iallgather" #SUF);                                                     \
        struct pm_comm *zc; /* empty blocks: a finished request */                                \
        if (request && pm_coll_zero_all(sendbuf, sendcount, sendtype, recvbuf, recvcount,         \
                                        recvtype, comm, &zc))                                     \
            return pm_coll_nothing(request, true);                                                \
        struct allgather g = {"MPI_Iallgather" #SUF, comm, NULL, sendbuf, sendcount, sendtype,    \
                              recvbuf, recvcount, PM_NO_COUNTS, PM_NO_DISPLS, recvtype, false,    \
                              0, 0, {0, 0, 0}};                                                   \
        return allgather_do(&g, request, true);                                                   \
    }                                                                                             \
    PM_WEAK(Iallgather##SUF)                                                                      \
                                                                                                  \
    int PMPI_Allgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,            \
                             void *recvbuf, const CT recvcounts[], const DT displs[],             \
                             MPI_Datatype recvtype, MPI_Comm comm)                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Allgatherv" #SUF);                                                     \
        if (pm_coll_zero_allv(sendbuf, sendcount, sendtype, recvbuf, PM_COUNTS(recvcounts),       \
                              PM_DISPLS(displs), recvtype, comm))                                 \
            return MPI_SUCCESS;                                                                   \
        int fast = allgatherv_pair(sendbuf, sendcount, sendtype, recvbuf, PM_COUNTS(recvcounts),  \
                                   PM_DISPLS(displs), recvtype, comm);                            \
        if (PM_LIKELY(fast == MPI_SUCCESS))                                                       \
            return MPI_SUCCESS;                                                                   \
        if (fast > 0)                                                                             \
            return pm_error(comm, fast, "%s: communication failed", "MPI_Allgatherv" #SUF);      \
        struct allgather g = {"MPI_Allgatherv" #SUF, comm, NULL, sendbuf, sendcount, sendtype,    \
                              recvbuf, 0, PM_COUNTS(recvcounts), PM_DISPLS(displs), recvtype,     \
                              true, 0, 0, {0, 0, 0}};                                             \
        return allgather_do(&g, NULL, false);                                                     \
    }                                                                                             \
    PM_WEAK(Allgatherv##SUF)                                                                      \
                                                                                                  \
    int PMPI_Iallgatherv##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,           \
                              void *recvbuf, const CT recvcounts[], const DT displs[],            \
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)         \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Iallgatherv" #SUF);                                                    \
        struct allgather g = {"MPI_Iallgatherv" #SUF, comm, NULL, sendbuf, sendcount, sendtype,   \
                              recvbuf, 0, PM_COUNTS(recvcounts), PM_DISPLS(displs), recvtype,     \
                              true, 0, 0, {0, 0, 0}};                                             \
        return allgather_do(&g, request, true);                                                   \
    }                                                                                             \
    PM_WEAK(Iallgatherv##SUF)

PM_ALLGATHER_API(, int, int)
PM_ALLGATHER_API(_c, MPI_Count, MPI_Aint)
