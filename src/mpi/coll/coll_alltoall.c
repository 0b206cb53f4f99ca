/*
 * coll_alltoall.c — MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw and their
 * nonblocking forms.
 *
 * Every algorithm is written once against a collective context
 * (coll_algo.h): blocking calls run its steps at once, nonblocking ones
 * return the request of its schedule. The three functions differ only in
 * where block i lives, so one descriptor (struct a2a) answers "block i to
 * send / to receive" and the algorithms are written once:
 *  - Bruck (Alltoall, blocks <= 256 bytes, >= 8 ranks): ceil(log2(n))
 *    exchanges of packed blocks instead of n-1 messages;
 *  - pairwise: rounds of a symmetric pairing (rank xor t for a power of two,
 *    a round-robin tournament otherwise), A2A_BATCH rounds in flight between
 *    fences. Symmetric pairs make MPI_IN_PLACE simple: the block for a peer
 *    is copied aside, then sent while the peer's block lands in its place.
 * Intercommunicators: rounds (me + t, me - t) modulo the larger group, which
 * the peer meets at the same round.
 */
#include <stdint.h>
#include <stdlib.h>

#include <string.h>

#include "coll_algo.h"

#define A2A_BRUCK_MAX_BLOCK 256
#define A2A_BRUCK_MIN_RANKS 16 /* below, all pairs at once beat log(n) rounds (8 ranks on 2 cores: 70 vs 11-15 us) */
#define A2A_BATCH 32        /* rounds in flight, blocks up to A2A_BATCH_BIG */
#define A2A_BATCH_BIG 32768
#define A2A_BATCH_LARGE 4   /* rounds in flight for larger blocks */
/* From these blocks up on a crowded node, A2A_BATCH again: each fence
 * waits for partners the scheduler keeps off the cpus (8 ranks on 2
 * cores, 1-4 MiB blocks: 7-20 % faster; 256-512 KiB either way). */
#define A2A_CROWDED_ALL ((size_t)1 << 20)

enum { A2A, A2AV, A2AW };

struct a2a {
    const char *fname;
    MPI_Comm comm;
    struct pm_comm *c;
    int kind;
    const void *sbuf;
    MPI_Count scount;
    struct pm_counts scounts;
    struct pm_displs sdispls;
    MPI_Datatype stype;
    const MPI_Datatype *stypes;
    void *rbuf;
    MPI_Count rcount;
    struct pm_counts rcounts;
    struct pm_displs rdispls;
    MPI_Datatype rtype;
    const MPI_Datatype *rtypes;
    struct pm_own_block own; /* filled by the check */
};

struct blk {
    void *buf;
    MPI_Count count;
    MPI_Datatype type;
};

static struct blk side_blk(int kind, const void *buf, MPI_Count count, struct pm_counts counts,
                           struct pm_displs displs, MPI_Datatype type,
                           const MPI_Datatype *types, int i)
{
    struct blk b;
    switch (kind) {
    case A2A:
        b.buf = pm_at(buf, (MPI_Aint)i * count * pm_type_get(type)->extent);
        b.count = count;
        b.type = type;
        break;
    case A2AV:
        b.buf = pm_at(buf, pm_dsp(displs, i) * pm_type_get(type)->extent);
        b.count = pm_cnt(counts, i);
        b.type = type;
        break;
    default: /* byte displacements; the type of an empty block is not looked at */
        b.buf = pm_at(buf, pm_dsp(displs, i));
        b.count = pm_cnt(counts, i);
        b.type = b.count ? types[i] : MPI_BYTE;
        break;
    }
    return b;
}

static struct blk recv_blk(const struct a2a *a, int i)
{
    return side_blk(a->kind, a->rbuf, a->rcount, a->rcounts, a->rdispls, a->rtype, a->rtypes, i);
}

/* With MPI_IN_PLACE the data to send is taken from the receive buffer. */
static struct blk send_blk(const struct a2a *a, int i)
{
    if (a->sbuf == MPI_IN_PLACE)
        return recv_blk(a, i);
    return side_blk(a->kind, a->sbuf, a->scount, a->scounts, a->sdispls, a->stype, a->stypes, i);
}

static size_t blk_bytes(struct blk b)
{
    return (size_t)pm_coll_bytes(b.count, b.type);
}

/* One side's counts and types (the standard's order: send side, then
 * receive side); MPI_SUCCESS or the raised error. */
static int check_side(const struct a2a *a, bool send)
{
    const char *fn = a->fname, *sr = send ? "send" : "recv";
    struct pm_comm *c = a->c;
    MPI_Count count = send ? a->scount : a->rcount;
    struct pm_counts counts = send ? a->scounts : a->rcounts;
    struct pm_displs displs = send ? a->sdispls : a->rdispls;
    MPI_Datatype type = send ? a->stype : a->rtype;
    const MPI_Datatype *types = send ? a->stypes : a->rtypes;
    if (a->kind == A2A)
        return pm_coll_check_buf(fn, c, count, type);
    if (pm_counts_null(counts) || pm_displs_null(displs) || (a->kind == A2AW && !types))
        return pm_error(a->comm, MPI_ERR_ARG, "%s: %scounts, %sdispls%s is NULL", fn, sr, sr,
                        a->kind == A2AW ? (send ? " or sendtypes" : " or recvtypes") : "");
    return pm_coll_check_counts(fn, c, send ? "sendcounts" : "recvcounts", counts,
                                c->remote->size, type, a->kind == A2AW ? types : NULL);
}

static int a2a_check(struct a2a *a, MPI_Request *request, bool nonblocking)
{
    const char *fn = a->fname;
    int rc = pm_coll_check_comm(fn, a->comm, &a->c);
    if (rc)
        return rc;
    struct pm_comm *c = a->c;
    if (a->sbuf == MPI_IN_PLACE) {
        if (c->is_inter)
            return pm_error(a->comm, MPI_ERR_BUFFER,
                            "%s: MPI_IN_PLACE is not allowed on an intercommunicator", fn);
    } else {
        rc = check_side(a, true);
        if (rc)
            return rc;
    }
    if (a->rbuf == MPI_IN_PLACE)
        return pm_error(a->comm, MPI_ERR_BUFFER, "%s: recvbuf is MPI_IN_PLACE", fn);
    rc = check_side(a, false);
    if (rc)
        return rc;
    if (a->sbuf == a->rbuf && a->sbuf) {
        size_t total = 0;
        for (int i = 0; i < c->remote->size; i++)
            total += blk_bytes(send_blk(a, i));
        if (total)
            return pm_error(a->comm, MPI_ERR_BUFFER,
                            "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)", fn);
    }
    if (!c->is_inter && a->sbuf != MPI_IN_PLACE) {
        pm_own_block_check(&a->own, (MPI_Count)blk_bytes(send_blk(a, c->rank)),
                           (MPI_Count)blk_bytes(recv_blk(a, c->rank)));
    }
    if (nonblocking && !request)
        return pm_error(a->comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    return MPI_SUCCESS;
}

static void own_copy(struct pm_cx *cx, const struct a2a *a)
{
    if (a->sbuf == MPI_IN_PLACE)
        return;
    struct blk sb = send_blk(a, a->c->rank), rb = recv_blk(a, a->c->rank);
    pm_cx_copy(cx, sb.buf, sb.count, sb.type, rb.buf, rb.count, rb.type);
}

/* ---- Pairwise ------------------------------------------------------------ */

/* Rounds of a pairing of n ranks in which every pair meets once, and the
 * partner of `me` in round t (me itself: idle this round). */
static int pair_rounds(int n)
{
    if ((n & (n - 1)) == 0)
        return n - 1;
    return n % 2 ? n : n - 1;
}

static int pair_partner(int me, int t, int n)
{
    if ((n & (n - 1)) == 0)
        return me ^ (t + 1);
    if (n % 2) /* round t pairs a with b when a + b = t (mod n) */
        return ((t - me) % n + n) % n;
    int m = n - 1; /* odd: the idle rank of the m-rank tournament meets n-1 */
    if (me == m)
        return (int)((long long)t * (n / 2) % m); /* p + p = t (mod m) */
    int p = ((t - me) % m + m) % m;
    return p == me ? m : p;
}

static void a2a_pairwise(struct pm_cx *cx, const struct a2a *a)
{
    struct pm_comm *c = a->c;
    int n = c->size, me = c->rank;
    int rounds = pair_rounds(n);
    size_t mine = 0;
    for (int i = 0; i < n; i++)
        mine += blk_bytes(recv_blk(a, i));
    size_t block = mine / (size_t)n;
    int batch = block <= A2A_BATCH_BIG || (block >= A2A_CROWDED_ALL && pm_coll_crowded)
                    ? A2A_BATCH
                    : A2A_BATCH_LARGE;
    /* In place: each batch copies its peers' blocks aside first; one scratch
     * buffer, as large as the largest batch, serves every batch. */
    char *aside = NULL;
    if (a->sbuf == MPI_IN_PLACE) {
        size_t most = 0;
        for (int t0 = 0; t0 < rounds; t0 += batch) {
            size_t sum = 0;
            for (int t = t0; t < t0 + batch && t < rounds; t++) {
                int p = pair_partner(me, t, n);
                if (p != me)
                    sum += blk_bytes(recv_blk(a, p));
            }
            most = sum > most ? sum : most;
        }
        aside = pm_cx_scratch(cx, most);
        if (!aside)
            return;
    }
    /* one batch with a small own block: copied first (a schedule does it
     * as it is built, cheaper than a step); a large one overlaps the
     * messages, after them */
    bool copy_first = rounds <= batch && !aside &&
                      blk_bytes(send_blk(a, me)) <= PM_CX_EAGER_COPY;
    if (copy_first)
        own_copy(cx, a);
    for (int t0 = 0; t0 < rounds && !cx->stop; t0 += batch) {
        int t1 = t0 + batch < rounds ? t0 + batch : rounds;
        if (t0 == batch)
            own_copy(cx, a); /* while the first batch's messages travel */
        if (t0)
            pm_cx_fence(cx);
        size_t pos = 0;
        for (int t = t0; t < t1 && !cx->stop; t++) {
            int p = pair_partner(me, t, n);
            if (p == me)
                continue;
            struct blk rb = recv_blk(a, p);
            /* An empty block is no message: both sides know it from
             * their own counts (as Open MPI does). */
            if (aside && !blk_bytes(rb))
                continue;
            if (aside) {
                /* The copy runs as the round starts: before the receive
                 * that overwrites the block is even posted. */
                size_t bytes = blk_bytes(rb);
                pm_cx_copy(cx, rb.buf, rb.count, rb.type, aside + pos, (MPI_Count)bytes,
                           MPI_BYTE);
                pm_cx_recv(cx, rb.buf, rb.count, rb.type, p);
                pm_cx_send(cx, aside + pos, (MPI_Count)bytes, MPI_BYTE, p);
                pos += bytes;
            } else {
                struct blk sb = send_blk(a, p);
                if (blk_bytes(rb))
                    pm_cx_recv(cx, rb.buf, rb.count, rb.type, p);
                if (blk_bytes(sb))
                    pm_cx_send(cx, sb.buf, sb.count, sb.type, p);
            }
        }
    }
    if (rounds <= batch && !copy_first)
        own_copy(cx, a);
}

/* ---- Bruck (Alltoall, small blocks) --------------------------------------- */

/* Copy the blocks j of tmp with bit k of j set (runs [j, j + k) for j = k,
 * 3k, ...) to consecutive bytes of buf (pack) or back (unpack); *bytes
 * gets the length. */
static size_t bruck_runs(struct pm_cx *cx, char *tmp, char *buf, int k, int n, size_t bs,
                         bool pack)
{
    size_t pos = 0;
    for (int j = k; j < n; j += 2 * k) {
        size_t len = (size_t)(j + k <= n ? k : n - j) * bs;
        char *t = tmp + (size_t)j * bs;
        pm_cx_copy(cx, pack ? t : buf + pos, (MPI_Count)len, MPI_BYTE, pack ? buf + pos : t,
                   (MPI_Count)len, MPI_BYTE);
        pos += len;
    }
    return pos;
}

/* tmp[j] starts as my block for me + j. Round k moves every tmp[j] with bit
 * k of j set to rank me + k (same index), so tmp[j] ends holding the block
 * from me - j. Blocks are `bs` bytes. Copies run in order as their round
 * starts, so each round unpacks the previous exchange, packs the next and
 * sends it. */
static void a2a_bruck(struct pm_cx *cx, const struct a2a *a, size_t bs)
{
    struct pm_comm *c = a->c;
    int n = c->size, me = c->rank;
    char *tmp = pm_cx_scratch(cx, (size_t)n * bs);
    char *out = pm_cx_scratch(cx, (size_t)(n / 2 + 1) * bs);
    char *in = pm_cx_scratch(cx, (size_t)(n / 2 + 1) * bs);
    if (!tmp || !out || !in)
        return;
    struct blk first = send_blk(a, me), zero = send_blk(a, 0);
    pm_cx_copy(cx, first.buf, (MPI_Count)(n - me) * first.count, first.type, tmp,
               (MPI_Count)(n - me) * (MPI_Count)bs, MPI_BYTE);
    pm_cx_copy(cx, zero.buf, (MPI_Count)me * zero.count, zero.type, tmp + (size_t)(n - me) * bs,
               (MPI_Count)me * (MPI_Count)bs, MPI_BYTE);
    for (int k = 1; !cx->stop; k <<= 1) {
        if (k > 1) {
            pm_cx_fence(cx);
            bruck_runs(cx, tmp, in, k >> 1, n, bs, false);
        }
        if (k >= n)
            break;
        size_t bytes = bruck_runs(cx, tmp, out, k, n, bs, true);
        pm_cx_recv(cx, in, (MPI_Count)bytes, MPI_BYTE, (me - k + n) % n);
        pm_cx_send(cx, out, (MPI_Count)bytes, MPI_BYTE, (me + k) % n);
    }
    /* In the round of the last unpack: block from me - j is tmp[j]. */
    for (int j = 0; j < n && !cx->stop; j++) {
        struct blk b = recv_blk(a, (me - j + n) % n);
        pm_cx_copy(cx, tmp + (size_t)j * bs, (MPI_Count)bs, MPI_BYTE, b.buf, b.count, b.type);
    }
}

/* ---- Intercommunicators ------------------------------------------------- */

static void a2a_inter(struct pm_cx *cx, const struct a2a *a)
{
    struct pm_comm *c = a->c;
    int me = c->rank, nr = c->remote->size;
    int mx = c->size > nr ? c->size : nr;
    for (int t = 0; t < mx && !cx->stop; t++) {
        if (t && t % A2A_BATCH == 0)
            pm_cx_fence(cx);
        int dst = (me + t) % mx, src = (me - t + mx) % mx;
        if (src < nr) {
            struct blk rb = recv_blk(a, src);
            pm_cx_recv(cx, rb.buf, rb.count, rb.type, src);
        }
        if (dst < nr) {
            struct blk sb = send_blk(a, dst);
            pm_cx_send(cx, sb.buf, sb.count, sb.type, dst);
        }
    }
}

static void a2a_build(struct pm_cx *cx, const struct a2a *a)
{
    struct pm_comm *c = a->c;
    if (c->is_inter) {
        a2a_inter(cx, a);
        return;
    }
    if (c->size == 1) {
        own_copy(cx, a);
        return;
    }
    if (a->kind == A2A && c->size >= A2A_BRUCK_MIN_RANKS) {
        size_t bs = (size_t)(a->rcount * pm_type_get(a->rtype)->size);
        if (bs <= A2A_BRUCK_MAX_BLOCK) {
            a2a_bruck(cx, a, bs);
            return;
        }
    }
    a2a_pairwise(cx, a);
}

/* Every block this rank sends or receives is empty. */
static bool a2a_rank_empty(const struct a2a *a)
{
    for (int i = 0; i < a->c->size; i++)
        if (blk_bytes(recv_blk(a, i)) ||
            (a->sbuf != MPI_IN_PLACE && blk_bytes(send_blk(a, i))))
            return false;
    return true;
}

static int a2a_do(struct a2a *a, MPI_Request *request, bool nonblocking)
{
    int rc = a2a_check(a, request, nonblocking);
    if (rc)
        return rc;
    /* all blocks empty: every rank's counts say so alike (MPI_Alltoall) */
    if (a->kind == A2A && !a->c->is_inter && pm_coll_bytes(a->rcount, a->rtype) == 0 &&
        (a->sbuf == MPI_IN_PLACE || pm_coll_bytes(a->scount, a->stype) == 0))
        return pm_coll_nothing(request, nonblocking);
    /* Alltoallv/w with nothing to or from this rank: the others may still
     * exchange; no schedule, no message */
    if (a->kind != A2A && !a->c->is_inter && a2a_rank_empty(a)) {
        pm_coll_skip_seq(a->c);
        return pm_coll_nothing(request, nonblocking);
    }
    struct pm_cx cx;
    if (pm_cx_begin(&cx, a->c, nonblocking))
        return pm_error(a->comm, MPI_ERR_NO_MEM, "%s: out of memory", a->fname);
    pm_cx_note(&cx, a->own.err);
    a2a_build(&cx, a);
    return pm_coll_cx_go(&cx, &a->own, a->comm, a->fname, a->c->rank, request);
}

/* ---- Entry points ---------------------------------------------------------- */

/* Latency path: below the Bruck range (fewer than A2A_BRUCK_MIN_RANKS), up
 * to 4 KiB blocks of predefined contiguous types, not in place: the
 * pairwise exchange's messages (one each way per pair, same tags; none for
 * an empty block of a v form, as there) straight on the engine, no
 * schedule. The a2a_small* functions return -1 when the call does not
 * qualify (the general path then checks and runs it), else an MPI code. */
#define A2A_SMALL_MAX_BLOCK 4096

/* Where block i lies and its bytes, for Alltoall (count) or Alltoallv
 * (counts, displacements in elements of the contiguous type). */
struct a2a_side {
    const char *buf;
    size_t esize;
    MPI_Count count;
    struct pm_counts counts;
    struct pm_displs displs;
};

static inline size_t side_bytes(const struct a2a_side *d, int i)
{
    return (size_t)(pm_counts_null(d->counts) ? d->count : pm_cnt(d->counts, i)) * d->esize;
}

static inline const char *side_at(const struct a2a_side *d, int i)
{
    if (pm_counts_null(d->counts))
        return d->buf + (size_t)i * (size_t)d->count * d->esize;
    return d->buf + pm_dsp(d->displs, i) * (MPI_Aint)d->esize;
}

static int a2a_small_run(struct pm_comm *c, const struct a2a_side *snd,
                         const struct a2a_side *rcv)
{
    int n = c->size, me = c->rank;
    uint32_t seq = pm_coll_next_seq(c);
    proust_request_t *reqs[A2A_BRUCK_MIN_RANKS] = {NULL};
    size_t want[A2A_BRUCK_MIN_RANKS] = {0};
    int rc = PROUST_OK;
    for (int k = 1; k < n && rc == PROUST_OK; k++) {
        int p = (me - k + n) % n;
        if ((want[k] = side_bytes(rcv, p)))
            rc = proust_irecv(pm_session, (char *)side_at(rcv, p), want[k], pm_comm_peer(c, p),
                              c->tag_coll | seq, PM_COLL_RECV_MASK, &reqs[k]);
    }
    proust_copy((char *)side_at(rcv, me), side_at(snd, me), side_bytes(snd, me));
    for (int k = 1; k < n && rc == PROUST_OK; k++) {
        int p = (me + k) % n;
        size_t bytes = side_bytes(snd, p);
        if (bytes)
            rc = proust_send(pm_session, side_at(snd, p), bytes, pm_comm_peer(c, p),
                             c->tag_coll | c->tag_src | seq);
    }
    if (rc != PROUST_OK)
        for (int k = 1; k < n; k++)
            if (reqs[k])
                proust_cancel(reqs[k]);
    proust_status_t st[A2A_BRUCK_MIN_RANKS] = {{0}};
    proust_waitall((size_t)(n - 1), reqs + 1, st + 1); /* (NULL ones are done) */
    int err = pm_error_from_proust(rc); /* a failed send; else the first receive's */
    for (int k = 1; k < n && !err; k++) {
        bool stop;
        if (want[k])
            err = pm_coll_recv_outcome(st[k].error, &st[k], want[k], &stop);
    }
    return err;
}

/* The communicator when the latency path may serve it, else NULL. */
static struct pm_comm *a2a_small_comm(MPI_Comm comm, const void *sbuf, const void *rbuf)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    if (!c || c->is_inter || c->size < 2 || c->size >= A2A_BRUCK_MIN_RANKS || !sbuf || !rbuf ||
        sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE || sbuf == rbuf)
        return NULL;
    return c;
}

static int a2a_small(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                     MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    struct pm_comm *c = a2a_small_comm(comm, sbuf, rbuf);
    int64_t ss = pm_type_fast_size(stype), rs = pm_type_fast_size(rtype);
    if (!c || ss <= 0 || rs <= 0 || scount <= 0 || rcount <= 0 ||
        scount > A2A_SMALL_MAX_BLOCK || rcount > A2A_SMALL_MAX_BLOCK)
        return -1;
    size_t bs = (size_t)scount * (size_t)ss;
    if (bs != (size_t)rcount * (size_t)rs || bs > A2A_SMALL_MAX_BLOCK)
        return -1;
    struct a2a_side snd = {sbuf, (size_t)ss, scount, PM_NO_COUNTS, PM_NO_DISPLS};
    struct a2a_side rcv = {rbuf, (size_t)rs, rcount, PM_NO_COUNTS, PM_NO_DISPLS};
    return a2a_small_run(c, &snd, &rcv);
}

/* Alltoallv: every count in 0..4 KiB of bytes, displacements not
 * negative, the own block the same size both ways. */
static bool v_small(struct pm_counts counts, struct pm_displs displs, int64_t esize, int n)
{
    if (esize <= 0 || pm_counts_null(counts) || pm_displs_null(displs))
        return false;
    for (int i = 0; i < n; i++) {
        MPI_Count k = pm_cnt(counts, i);
        if (k < 0 || k > A2A_SMALL_MAX_BLOCK / esize || pm_dsp(displs, i) < 0)
            return false;
    }
    return true;
}

static int a2av_small(const void *sbuf, struct pm_counts scounts, struct pm_displs sdispls,
                      MPI_Datatype stype, void *rbuf, struct pm_counts rcounts,
                      struct pm_displs rdispls, MPI_Datatype rtype, MPI_Comm comm)
{
    struct pm_comm *c = a2a_small_comm(comm, sbuf, rbuf);
    int64_t ss = pm_type_fast_size(stype), rs = pm_type_fast_size(rtype);
    if (!c || !v_small(scounts, sdispls, ss, c->size) || !v_small(rcounts, rdispls, rs, c->size))
        return -1;
    struct a2a_side snd = {sbuf, (size_t)ss, 0, scounts, sdispls};
    struct a2a_side rcv = {rbuf, (size_t)rs, 0, rcounts, rdispls};
    if (side_bytes(&snd, c->rank) != side_bytes(&rcv, c->rank))
        return -1;
    return a2a_small_run(c, &snd, &rcv);
}

/* Each entry point and its _c twin (MPI_Count counts, MPI_Aint displacements). */
#define PM_ALLTOALL_API(SUF, CT, DT)                                                              \
    int PMPI_Alltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,              \
                           void *recvbuf, CT recvcount, MPI_Datatype recvtype, MPI_Comm comm)     \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Alltoall" #SUF);                                                       \
        struct pm_comm *zc;                                                                       \
        if (pm_coll_zero_all(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,    \
                             &zc))                                                                \
            return MPI_SUCCESS;                                                                   \
        int fast = a2a_small(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);   \
        if (PM_LIKELY(fast == MPI_SUCCESS))                                                       \
            return MPI_SUCCESS;                                                                   \
        if (fast > 0)                                                                             \
            return pm_error(comm, fast, "%s: communication failed (%lld elements a block)",       \
                            "MPI_Alltoall" #SUF, (long long)sendcount);                           \
        struct a2a a = {.fname = "MPI_Alltoall" #SUF, .comm = comm, .kind = A2A,                  \
                        .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,                  \
                        .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};                 \
        return a2a_do(&a, NULL, false);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoall##SUF)                                                                        \
                                                                                                  \
    int PMPI_Ialltoall##SUF(const void *sendbuf, CT sendcount, MPI_Datatype sendtype,             \
                            void *recvbuf, CT recvcount, MPI_Datatype recvtype, MPI_Comm comm,    \
                            MPI_Request *request)                                                 \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ialltoall" #SUF);                                                      \
        struct pm_comm *zc; /* empty blocks: a finished request */                                \
        if (request && pm_coll_zero_all(sendbuf, sendcount, sendtype, recvbuf, recvcount,         \
                                        recvtype, comm, &zc))                                     \
            return pm_coll_nothing(request, true);                                                \
        struct a2a a = {.fname = "MPI_Ialltoall" #SUF, .comm = comm, .kind = A2A,                 \
                        .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,                  \
                        .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype};                 \
        return a2a_do(&a, request, true);                                                         \
    }                                                                                             \
    PM_WEAK(Ialltoall##SUF)                                                                       \
                                                                                                  \
    int PMPI_Alltoallv##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],       \
                            MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],          \
                            const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm)             \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Alltoallv" #SUF);                                                      \
        int fast = a2av_small(sendbuf, PM_COUNTS(sendcounts), PM_DISPLS(sdispls), sendtype,       \
                              recvbuf, PM_COUNTS(recvcounts), PM_DISPLS(rdispls), recvtype,      \
                              comm);                                                              \
        if (PM_LIKELY(fast == MPI_SUCCESS))                                                       \
            return MPI_SUCCESS;                                                                   \
        if (fast > 0)                                                                             \
            return pm_error(comm, fast, "%s: communication failed", "MPI_Alltoallv" #SUF);       \
        struct a2a a = {.fname = "MPI_Alltoallv" #SUF, .comm = comm, .kind = A2AV,                \
                        .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),                        \
                        .sdispls = PM_DISPLS(sdispls), .stype = sendtype, .rbuf = recvbuf,        \
                        .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls),          \
                        .rtype = recvtype};                                                       \
        return a2a_do(&a, NULL, false);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoallv##SUF)                                                                       \
                                                                                                  \
    int PMPI_Ialltoallv##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],      \
                             MPI_Datatype sendtype, void *recvbuf, const CT recvcounts[],         \
                             const DT rdispls[], MPI_Datatype recvtype, MPI_Comm comm,            \
                             MPI_Request *request)                                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ialltoallv" #SUF);                                                     \
        struct a2a a = {.fname = "MPI_Ialltoallv" #SUF, .comm = comm, .kind = A2AV,               \
                        .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),                        \
                        .sdispls = PM_DISPLS(sdispls), .stype = sendtype, .rbuf = recvbuf,        \
                        .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls),          \
                        .rtype = recvtype};                                                       \
        return a2a_do(&a, request, true);                                                         \
    }                                                                                             \
    PM_WEAK(Ialltoallv##SUF)                                                                      \
                                                                                                  \
    int PMPI_Alltoallw##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],       \
                            const MPI_Datatype sendtypes[], void *recvbuf,                        \
                            const CT recvcounts[], const DT rdispls[],                            \
                            const MPI_Datatype recvtypes[], MPI_Comm comm)                        \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Alltoallw" #SUF);                                                      \
        struct a2a a = {.fname = "MPI_Alltoallw" #SUF, .comm = comm, .kind = A2AW,                \
                        .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),                        \
                        .sdispls = PM_DISPLS(sdispls), .stypes = sendtypes, .rbuf = recvbuf,      \
                        .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls),          \
                        .rtypes = recvtypes};                                                     \
        return a2a_do(&a, NULL, false);                                                           \
    }                                                                                             \
    PM_WEAK(Alltoallw##SUF)                                                                       \
                                                                                                  \
    int PMPI_Ialltoallw##SUF(const void *sendbuf, const CT sendcounts[], const DT sdispls[],      \
                             const MPI_Datatype sendtypes[], void *recvbuf,                       \
                             const CT recvcounts[], const DT rdispls[],                           \
                             const MPI_Datatype recvtypes[], MPI_Comm comm,                       \
                             MPI_Request *request)                                                \
    {                                                                                             \
        PM_CHECK_INIT("MPI_Ialltoallw" #SUF);                                                     \
        struct a2a a = {.fname = "MPI_Ialltoallw" #SUF, .comm = comm, .kind = A2AW,               \
                        .sbuf = sendbuf, .scounts = PM_COUNTS(sendcounts),                        \
                        .sdispls = PM_DISPLS(sdispls), .stypes = sendtypes, .rbuf = recvbuf,      \
                        .rcounts = PM_COUNTS(recvcounts), .rdispls = PM_DISPLS(rdispls),          \
                        .rtypes = recvtypes};                                                     \
        return a2a_do(&a, request, true);                                                         \
    }                                                                                             \
    PM_WEAK(Ialltoallw##SUF)

PM_ALLTOALL_API(, int, int)
PM_ALLTOALL_API(_c, MPI_Count, MPI_Aint)
