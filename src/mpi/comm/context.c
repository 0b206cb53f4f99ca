/*
 * context.c — context ids and the small collective steps that communicator
 * construction needs (allreduce-AND, allgather, broadcast), written straight
 * on the engine so that they depend on nothing else in the library.
 *
 * Context agreement. Each process keeps a bitmask of its free ids (15 bits:
 * context << 1 must fit the 16-bit context field; 0 and 1 are WORLD and
 * SELF). A round: every participant contributes its free mask, the ANDed
 * result names the candidate id(s), each participant tries to hold them
 * locally, and a second AND confirms that all could; otherwise the holds
 * are given back and another round starts. Threads of one process may
 * agree on different communicators at the same time; an id held by one is
 * simply not free for the others, and nothing is kept exclusive while
 * waiting for other processes, so an agreement never waits for another one
 * (an owner-of-the-mask scheme deadlocks when a process that holds the mask
 * waits for a process busy with another agreement). Two agreements can pick
 * the same candidate and both fail; retries therefore pick among the common
 * ids by a hash of the agreement's key and round, so they soon diverge.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define CTX_MAX 32768 /* ids 0..32767 */
#define CTX_WORDS (CTX_MAX / 64)
#define V_SETTLED CTX_WORDS /* AND of "no id held by a round in progress" */
#define V_WORDS (CTX_WORDS + 1)

static uint64_t ctx_free[CTX_WORDS]; /* bit set = id free here */
static bool ctx_ready;
static int ctx_held;                 /* ids held by rounds in progress */
static pthread_mutex_t ctx_mutex = PTHREAD_MUTEX_INITIALIZER;

/* ---- Point-to-point on the engine ----------------------------------------- */

static const uint64_t match_mask = PM_CTX_MASK | PM_TAG_MASK;

static int xsend(const struct pm_xg *x, const void *buf, size_t len, int to)
{
    int rc = proust_send(pm_session, buf, len, x->world[to],
                         x->tag | ((uint64_t)x->rank << PM_TAG_BITS));
    return rc == PROUST_OK ? MPI_SUCCESS : pm_error_from_proust(rc);
}

static int xrecv(const struct pm_xg *x, void *buf, size_t len, int from)
{
    proust_status_t st;
    int rc = proust_recv(pm_session, buf, len, x->world[from], x->tag, match_mask, &st);
    if (rc != PROUST_OK)
        return pm_error_from_proust(rc);
    return st.count == len ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int pm_sendrecv_world(const void *sbuf, size_t slen, int dest, uint64_t stag, void *rbuf,
                      size_t rlen, int src, uint64_t rtag)
{
    proust_request_t *rr = NULL, *sr = NULL;
    proust_status_t st;
    int rc = proust_irecv(pm_session, rbuf, rlen, src, rtag, match_mask, &rr);
    if (rc != PROUST_OK)
        return pm_error_from_proust(rc);
    rc = proust_isend(pm_session, sbuf, slen, dest, stag, &sr);
    if (rc != PROUST_OK) {
        proust_cancel(rr);
        proust_wait(&rr, NULL);
        return pm_error_from_proust(rc);
    }
    int rs = proust_wait(&sr, NULL);
    int rv = proust_wait(&rr, &st);
    if (rs != PROUST_OK)
        return pm_error_from_proust(rs);
    if (rv != PROUST_OK)
        return pm_error_from_proust(rv);
    return st.count == rlen ? MPI_SUCCESS : MPI_ERR_INTERN;
}

static int xsendrecv(const struct pm_xg *x, const void *sbuf, void *rbuf, size_t len, int peer)
{
    return pm_sendrecv_world(sbuf, len, x->world[peer],
                             x->tag | ((uint64_t)x->rank << PM_TAG_BITS), rbuf, len,
                             x->world[peer], x->tag);
}

/* ---- Collective steps ------------------------------------------------------ */

void pm_xg_of_comm(struct pm_xg *x, struct pm_comm *c)
{
    uint32_t seq = pm_coll_next_seq(c);
    x->world = c->local->world;
    x->size = c->size;
    x->rank = c->rank;
    x->tag = c->tag_coll | seq;
}

/* Recursive doubling; with a size that is not a power of two the first
 * 2*rem ranks pair up first (even ones hand their words to the odd ones and
 * get the result back at the end). */
int pm_xg_allreduce_band(const struct pm_xg *x, uint64_t *v, size_t n)
{
    int size = x->size, r = x->rank;
    if (size <= 1)
        return MPI_SUCCESS;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int p2 = 1;
    while (p2 * 2 <= size)
        p2 *= 2;
    int rem = size - p2, newr, rc = MPI_SUCCESS;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = xsend(x, v, n * sizeof *v, r + 1);
            newr = -1;
        } else {
            rc = xrecv(x, tmp, n * sizeof *tmp, r - 1);
            for (size_t i = 0; i < n; i++)
                v[i] &= tmp[i];
            newr = r / 2;
        }
    } else {
        newr = r - rem;
    }
    for (int mask = 1; !rc && newr >= 0 && mask < p2; mask <<= 1) {
        int pn = newr ^ mask;
        int peer = pn < rem ? pn * 2 + 1 : pn + rem;
        rc = xsendrecv(x, v, tmp, n * sizeof *v, peer);
        for (size_t i = 0; !rc && i < n; i++)
            v[i] &= tmp[i];
    }
    if (!rc && r < 2 * rem)
        rc = r % 2 == 0 ? xrecv(x, v, n * sizeof *v, r + 1) : xsend(x, v, n * sizeof *v, r - 1);
    free(tmp);
    return rc;
}

/* Bruck: in step k every process sends the blocks it has (its own and the
 * next ones, up to 2^k of them) to rank - 2^k and gets as many from
 * rank + 2^k; ceil(log2 n) steps. Each pair of processes meets once. */
int pm_xg_allgather(const struct pm_xg *x, const void *mine, void *all, size_t bytes)
{
    int n = x->size, r = x->rank, rc = MPI_SUCCESS;
    char *tmp = malloc((size_t)n * bytes + 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    memcpy(tmp, mine, bytes); /* tmp block i: rank (r + i) % n */
    int have = 1;
    for (int step = 1; step < n && !rc; step <<= 1) {
        int m = step < n - step ? step : n - step;
        rc = pm_sendrecv_world(tmp, (size_t)m * bytes, x->world[(r - step + n) % n],
                               x->tag | ((uint64_t)r << PM_TAG_BITS),
                               tmp + (size_t)have * bytes, (size_t)m * bytes,
                               x->world[(r + step) % n], x->tag);
        have += m;
    }
    for (int i = 0; !rc && i < n; i++)
        memcpy((char *)all + (size_t)((r + i) % n) * bytes, tmp + (size_t)i * bytes, bytes);
    free(tmp);
    return rc;
}

/* Binomial tree from root. */
int pm_xg_bcast(const struct pm_xg *x, void *buf, size_t bytes, int root)
{
    int n = x->size, vr = (x->rank - root + n) % n, mask = 1, rc = MPI_SUCCESS;
    while (mask < n) {
        if (vr & mask) {
            rc = xrecv(x, buf, bytes, (vr - mask + root) % n);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && !rc; mask >>= 1)
        if (vr + mask < n)
            rc = xsend(x, buf, bytes, (vr + mask + root) % n);
    return rc;
}

/* ---- Context ids --------------------------------------------------------------- */

static void ctx_init_locked(void)
{
    if (ctx_ready)
        return;
    memset(ctx_free, 0xff, sizeof ctx_free);
    ctx_free[0] &= ~(uint64_t)3; /* WORLD and SELF */
    ctx_ready = true;
}

void pm_context_free(uint16_t context)
{
    if (context < 2 || context >= CTX_MAX)
        return;
    pthread_mutex_lock(&ctx_mutex);
    ctx_free[context / 64] |= (uint64_t)1 << (context % 64);
    pthread_mutex_unlock(&ctx_mutex);
}

/* The n ids to try: the lowest common ones in round 0, then a window of
 * them placed by a hash of (key, round), the same at every participant. */
static bool pick_ids(const uint64_t *v, int n, uint64_t key, int round, uint16_t *ids)
{
    int count = 0;
    for (int w = 0; w < CTX_WORDS; w++)
        count += __builtin_popcountll(v[w]);
    if (count < n)
        return false;
    int skip = 0;
    if (round > 0) {
        uint64_t h = (key ^ (uint64_t)round * 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
        int span = count - n + 1 < 64 ? count - n + 1 : 64;
        skip = (int)((h >> 32) % (uint64_t)span);
    }
    int found = 0;
    for (int w = 0; w < CTX_WORDS && found < n; w++) {
        uint64_t bits = v[w];
        while (bits && found < n) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            if (skip > 0)
                skip--;
            else
                ids[found++] = (uint16_t)(w * 64 + b);
        }
    }
    return found == n;
}

/* AND `n` words over every participant (both groups when a->exchange), the
 * result at all of them. Word n is scratch for the leader's error. */
static int agree_and(const struct pm_agree *a, uint64_t *v, size_t n)
{
    struct pm_xg x = {.world = a->world, .size = a->size, .rank = a->rank};
    uint32_t seq = 0;
    if (a->seq_comm) {
        seq = pm_coll_next_seq(a->seq_comm);
        x.tag = a->ctx_field | seq;
    } else {
        x.tag = a->fixed_tag;
        seq = a->fixed_seq;
    }
    int rc = pm_xg_allreduce_band(&x, v, n);
    if (rc || !a->exchange)
        return rc;
    /* The leader ANDs in the other group's words and broadcasts the outcome
     * (its error too, so that nobody waits for a result that will not come). */
    v[n] = MPI_SUCCESS;
    if (a->rank == a->leader)
        v[n] = (uint64_t)a->exchange(a->arg, seq, v, n);
    rc = pm_xg_bcast(&x, v, (n + 1) * sizeof *v, a->leader);
    return rc ? rc : (int)v[n];
}

int pm_context_agree(const struct pm_agree *a, int n, uint16_t *ids)
{
    uint64_t *v = malloc((V_WORDS + 1) * sizeof *v);
    if (!v)
        return MPI_ERR_NO_MEM;
    int rc;
    for (int round = 0;; round++) {
        pthread_mutex_lock(&ctx_mutex);
        ctx_init_locked();
        memcpy(v, ctx_free, sizeof ctx_free);
        v[V_SETTLED] = ctx_held == 0;
        pthread_mutex_unlock(&ctx_mutex);
        rc = agree_and(a, v, V_WORDS);
        if (rc)
            break;
        if (!pick_ids(v, n, a->key, round, ids)) {
            if (v[V_SETTLED] & 1) {
                rc = MPI_ERR_OTHER; /* no id is free everywhere, and none will be */
                break;
            }
            sched_yield(); /* ids held by other rounds may come back */
            continue;
        }
        /* Hold the candidates here, then check that everybody could. */
        uint64_t ok[2];
        pthread_mutex_lock(&ctx_mutex);
        ok[0] = 1;
        for (int i = 0; i < n; i++)
            if (!(ctx_free[ids[i] / 64] & ((uint64_t)1 << (ids[i] % 64))))
                ok[0] = 0;
        if (ok[0]) {
            for (int i = 0; i < n; i++)
                ctx_free[ids[i] / 64] &= ~((uint64_t)1 << (ids[i] % 64));
            ctx_held += n;
        }
        pthread_mutex_unlock(&ctx_mutex);
        bool held = ok[0];
        rc = agree_and(a, ok, 1);
        pthread_mutex_lock(&ctx_mutex);
        if (held) {
            ctx_held -= n;
            if (rc || !(ok[0] & 1))
                for (int i = 0; i < n; i++)
                    ctx_free[ids[i] / 64] |= (uint64_t)1 << (ids[i] % 64);
        }
        pthread_mutex_unlock(&ctx_mutex);
        if (rc || (ok[0] & 1))
            break;
        sched_yield();
    }
    free(v);
    return rc;
}

/* Leader of one group of an intercommunicator: AND the other group's words
 * in, over the intercommunicator's collective context. */
static int inter_exchange(void *arg, uint32_t seq, uint64_t *v, size_t n)
{
    struct pm_comm *c = arg;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int peer = c->remote->world[0];
    int rc = pm_sendrecv_world(v, n * sizeof *v, peer, c->tag_coll | c->tag_src | seq, tmp,
                               n * sizeof *tmp, peer, c->tag_coll | seq);
    for (size_t i = 0; !rc && i < n; i++)
        v[i] &= tmp[i];
    free(tmp);
    return rc;
}

/* seq < 0: a sequence number of c per step; else every step on that one. */
static int alloc_on(struct pm_comm *c, int n, uint16_t *ids, int64_t seq)
{
    struct pm_agree a = {
        .seq_comm = seq < 0 ? c : NULL,
        .world = c->local->world,
        .size = c->size,
        .rank = c->rank,
        .key = seq < 0 ? PM_KEY_COMM(c->context) : PM_KEY_IDUP(c->context, (uint32_t)seq),
        .fixed_seq = seq < 0 ? 0 : (uint32_t)seq,
    };
    if (c->is_inter) {
        /* Local rounds on the local intracommunicator's context, numbered
         * by the intercommunicator's sequence, so that they cannot meet the
         * local traffic of an intercommunicator collective still running. */
        a.ctx_field = c->local_comm->tag_coll;
        a.exchange = inter_exchange;
        a.arg = c;
    } else {
        a.ctx_field = c->tag_coll;
    }
    a.fixed_tag = a.ctx_field | a.fixed_seq;
    return pm_context_agree(&a, n, ids);
}

int pm_context_alloc_n(struct pm_comm *c, int n, uint16_t *ids)
{
    return alloc_on(c, n, ids, -1);
}

int pm_context_alloc_at(struct pm_comm *c, int n, uint16_t *ids, uint32_t seq)
{
    return alloc_on(c, n, ids, seq);
}

int pm_context_alloc(struct pm_comm *c, uint16_t *context)
{
    return pm_context_alloc_n(c, 1, context);
}
