/*
 * rma_target.c — the target side of one-sided communication.
 *
 * A window keeps one receive posted per origin (a *port*). When a header
 * arrives, the receive's completion callback applies the operation — a
 * put's copy, an accumulate under the window's accumulate lock, a get's
 * reply, a lock grant — and posts the next receive; an operation whose
 * data did not fit in the header first receives the data message (a put
 * to contiguous memory lands in the window directly). So per origin the
 * operations are applied one at a time, in the order they were issued.
 *
 * Callbacks run in whatever thread drives the engine. A receive whose
 * message is already there completes at once inside the posting call; the
 * callback then only queues its port on a per-thread list, which the
 * outermost callback drains: a long queue of waiting messages never nests.
 *
 * Every header is checked before it is used (sizes, ranges, types): a
 * malformed or out-of-range operation is dropped, counted, and reported in
 * the next ack to its origin; a get still gets an (empty) reply.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "op.h"
#include "p2p.h"
#include "win.h"

struct pm_rma_waiter {
    struct pm_rma_waiter *next;
    int origin, type; /* type: enum pm_rma_lock_wire */
    uint32_t id;
};

enum { STAGE_HDR, STAGE_DATA };

struct pm_rma_port {
    struct pm_win *w;
    int origin;              /* rank in the window */
    int world;               /* its world rank */
    int stage;
    size_t got;              /* bytes received by the last receive */
    int rc;                  /* its status */
    char *buf;               /* header message, PM_RMA_HDR_MAX bytes */
    char *data;              /* STAGE_DATA: temporary buffer, or NULL (direct) */
    size_t data_len;
    int errors;              /* operations dropped since the last ack */
    struct pm_rma_port *next_ready;
};

/* ---- Sending replies ---------------------------------------------------- */

static proust_tag_t resp_tag(const struct pm_win *w, uint32_t id)
{
    return w->comm->tag_pt2pt | w->comm->tag_src | PM_RMA_TAG_RESP | (id & PM_RMA_ID_MASK);
}

static void free_buffer_cb(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    (void)st;
    free(arg);
}

/* Send `len` bytes to `world` as reply `id`; `owned` is freed once sent
 * (NULL: buf stays valid on its own, window memory or static). */
static void reply(struct pm_win *w, int world, uint32_t id, const void *buf, size_t len,
                  void *owned)
{
    proust_tag_t tag = resp_tag(w, id);
    if (proust_try_send(pm_session, buf, len, world, tag) == PROUST_OK) {
        free(owned);
        return;
    }
    proust_request_t *req = NULL;
    int rc = proust_isend(pm_session, buf, len, world, tag, &req);
    if (rc != PROUST_OK) {
        fprintf(stderr, "[proust mpi, rank %d] RMA: reply to rank %d lost: %s\n", pm_world_rank,
                world, proust_strerror(rc));
        free(owned);
        return;
    }
    if (owned && proust_request_monitor(req, free_buffer_cb, owned) != PROUST_OK) {
        proust_wait(&req, NULL);
        free(owned);
        return;
    }
    proust_request_free(&req);
}

/* An ack carries the number of operations dropped since the last one (no
 * bytes when none). */
static void ack(struct pm_rma_port *p, uint32_t id)
{
    int32_t *e = NULL;
    if (p->errors) {
        e = malloc(sizeof *e);
        if (e)
            *e = p->errors;
        p->errors = 0;
    }
    reply(p->w, p->world, id, e, e ? sizeof *e : 0, e);
}

/* ---- Locks ---------------------------------------------------------------- */

/* Lock types: enum pm_rma_lock_wire (exclusive or shared). */
static bool lock_type_valid(int type)
{
    return type == PM_RMA_LOCK_WIRE_EXCLUSIVE || type == PM_RMA_LOCK_WIRE_SHARED;
}

static bool grantable(const struct pm_win *w, int type)
{
    return type == PM_RMA_LOCK_WIRE_EXCLUSIVE ? !w->lock_excl && !w->lock_shared
                                              : !w->lock_excl;
}

static void take(struct pm_win *w, int type)
{
    if (type == PM_RMA_LOCK_WIRE_EXCLUSIVE)
        w->lock_excl = 1;
    else
        w->lock_shared++;
}

static void lock_request(struct pm_rma_port *p, int type, uint32_t id)
{
    struct pm_win *w = p->w;
    pthread_mutex_lock(&w->lock);
    if (!w->lock_queue && grantable(w, type)) {
        take(w, type);
        pthread_mutex_unlock(&w->lock);
        ack(p, id);
        return;
    }
    struct pm_rma_waiter *q = malloc(sizeof *q);
    if (!q) {
        /* cannot queue: the origin learns it from the ack (and no lock) */
        pthread_mutex_unlock(&w->lock);
        p->errors++;
        ack(p, id);
        return;
    }
    *q = (struct pm_rma_waiter){NULL, p->origin, type, id};
    if (w->lock_queue_tail)
        w->lock_queue_tail->next = q;
    else
        w->lock_queue = q;
    w->lock_queue_tail = q;
    pthread_mutex_unlock(&w->lock);
}

static void lock_release(struct pm_win *w, int type)
{
    pthread_mutex_lock(&w->lock);
    if (type == PM_RMA_LOCK_WIRE_EXCLUSIVE)
        w->lock_excl = 0;
    else if (w->lock_shared > 0)
        w->lock_shared--;
    /* grant in arrival order while possible */
    struct pm_rma_waiter *granted = NULL, **tail = &granted;
    while (w->lock_queue && grantable(w, w->lock_queue->type)) {
        struct pm_rma_waiter *q = w->lock_queue;
        w->lock_queue = q->next;
        if (!w->lock_queue)
            w->lock_queue_tail = NULL;
        take(w, q->type);
        q->next = NULL;
        *tail = q;
        tail = &q->next;
    }
    pthread_mutex_unlock(&w->lock);
    while (granted) {
        struct pm_rma_waiter *q = granted;
        granted = q->next;
        reply(w, pm_comm_peer(w->comm, q->origin), q->id, NULL, 0, NULL);
        free(q);
    }
}

/* ---- Applying operations ------------------------------------------------- */

/* The window memory [disp + lo, disp + hi) as an address, or NULL when it
 * is outside the window (dynamic windows: outside every attached region). */
static char *target_range(struct pm_win *w, uint64_t disp, uint64_t lo, uint64_t hi)
{
    if (hi < lo || disp + hi < disp)
        return NULL;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        if (hi == lo)
            return (char *)(uintptr_t)disp;
        uintptr_t a = (uintptr_t)(disp + lo), b = (uintptr_t)(disp + hi);
        /* Covered by the attached regions, which may be adjacent (MPICH
         * accepts an access spanning two): regions never overlap, so each
         * step moves a to the end of the one region holding it. */
        bool moved = true;
        pthread_mutex_lock(&w->lock);
        while (a < b && moved) {
            moved = false;
            for (int i = 0; i < w->nregions; i++) {
                const struct pm_win_region *r = &w->regions[i];
                if (a >= r->base && a < r->base + r->size) {
                    a = r->base + r->size;
                    moved = true;
                    break;
                }
            }
        }
        pthread_mutex_unlock(&w->lock);
        return a >= b ? (char *)(uintptr_t)disp : NULL;
    }
    if (disp + hi > (uint64_t)w->win_size)
        return NULL;
    return (char *)w->base + disp;
}

/* Bounds of a layout; false when malformed (lengths not adding to bytes). */
static bool layout_bounds(const int64_t *lay, uint64_t n, uint64_t bytes, uint64_t *lo,
                          uint64_t *hi)
{
    if (n == 0) {
        *lo = 0;
        *hi = bytes;
        return true;
    }
    uint64_t sum = 0, l = UINT64_MAX, h = 0;
    for (uint64_t i = 0; i < n; i++) {
        int64_t off = lay[2 * i], len = lay[2 * i + 1];
        if (off < 0 || len < 0 || (uint64_t)off + (uint64_t)len < (uint64_t)off)
            return false;
        sum += (uint64_t)len;
        if ((uint64_t)off < l)
            l = (uint64_t)off;
        if ((uint64_t)off + (uint64_t)len > h)
            h = (uint64_t)off + (uint64_t)len;
    }
    *lo = sum ? l : 0;
    *hi = sum ? h : 0;
    return sum == bytes;
}

/* Copy between the packed stream and the target blocks. */
static void scatter(char *t, const int64_t *lay, uint64_t n, const char *in, size_t bytes)
{
    if (n == 0) {
        proust_copy(t, in, bytes);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        proust_copy(t + lay[2 * i], in, (size_t)lay[2 * i + 1]);
        in += lay[2 * i + 1];
    }
}

static void gather(char *out, const char *t, const int64_t *lay, uint64_t n, size_t bytes)
{
    if (n == 0) {
        proust_copy(out, t, bytes);
        return;
    }
    for (uint64_t i = 0; i < n; i++) {
        proust_copy(out, t + lay[2 * i], (size_t)lay[2 * i + 1]);
        out += lay[2 * i + 1];
    }
}

/* Packed elements (data bytes only) <-> C layout (pair types have holes). */
static void expand(char *dst, const char *src, size_t n, const struct pm_op_type *ty)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned s = 0; s < ty->nsub; s++) {
            memcpy(dst + i * ty->size + ty->sub[s].disp, src, ty->sub[s].len);
            src += ty->sub[s].len;
        }
}

static void compress(char *dst, const char *src, size_t n, const struct pm_op_type *ty)
{
    for (size_t i = 0; i < n; i++)
        for (unsigned s = 0; s < ty->nsub; s++) {
            memcpy(dst, src + i * ty->size + ty->sub[s].disp, ty->sub[s].len);
            dst += ty->sub[s].len;
        }
}

/* target op= in, over the layout; `old` (optional) receives the packed
 * target data from before. Caller holds acc_lock. */
static int accumulate(char *t, const int64_t *lay, uint64_t n, const char *in, size_t bytes,
                      int opi, int basic, char *old)
{
    MPI_Op op = (MPI_Op)(PROUST_MPI_KIND_OP | opi);
    MPI_Datatype dt = PROUST_MPI_TYPE(basic);
    const struct pm_op_type *ty = &pm_op_types[basic];
    size_t ds = (size_t)ty->sub[0].len + (ty->nsub > 1 ? ty->sub[1].len : 0);
    if (old)
        gather(old, t, lay, n, bytes);
    if (op == MPI_NO_OP)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) {
        scatter(t, lay, n, in, bytes);
        return MPI_SUCCESS;
    }
    size_t count = bytes / ds;
    if (n == 0 && ds == ty->size)
        return pm_op_apply(op, in, t, (MPI_Count)count, dt);
    /* General shape: gather, work on whole elements, scatter back. */
    char *cur = malloc(bytes ? bytes : 1);
    char *a = ds == ty->size ? NULL : malloc(count * ty->size + 1);
    char *b = ds == ty->size ? NULL : malloc(count * ty->size + 1);
    if (!cur || (ds != ty->size && (!a || !b))) {
        free(cur);
        free(a);
        free(b);
        return MPI_ERR_NO_MEM;
    }
    gather(cur, t, lay, n, bytes);
    int rc;
    if (ds == ty->size) {
        rc = pm_op_apply(op, in, cur, (MPI_Count)count, dt);
    } else {
        expand(a, in, count, ty);
        expand(b, cur, count, ty);
        rc = pm_op_apply(op, a, b, (MPI_Count)count, dt);
        compress(cur, b, count, ty);
    }
    if (rc == MPI_SUCCESS)
        scatter(t, lay, n, cur, bytes);
    free(cur);
    free(a);
    free(b);
    return rc;
}

/* Is (op, basic) an accumulate this target can apply? */
static bool acc_valid(int opi, int basic)
{
    if (basic <= 0 || basic >= PROUST_MPI_NUM_PREDEFINED_TYPES || !pm_op_types[basic].size)
        return false;
    MPI_Op op = (MPI_Op)(PROUST_MPI_KIND_OP | opi);
    return op == MPI_REPLACE || op == MPI_NO_OP ||
           pm_op_predef_applies(op, PROUST_MPI_TYPE(basic));
}

/* A process of the window died: a lock word it held stays taken. Asked
 * now and then by a lock waiter (the engine learns of deaths as it
 * progresses): MPI_SUCCESS, or the error its peer's failure gives. */
static int window_alive(struct pm_win *w)
{
    for (int r = 0; r < w->size; r++) {
        int st = proust_peer_status(pm_session, pm_comm_peer(w->comm, r));
        if (st != PROUST_OK)
            return pm_error_from_proust(st);
    }
    return MPI_SUCCESS;
}

int pm_rma_acc_lock(struct pm_win *w, int target)
{
    if (!w->shm_locks) {
        pm_lock(&w->acc_lock);
        return MPI_SUCCESS;
    }
    _Atomic int *word = &w->shm_locks[(size_t)target * PM_SHM_LOCK_STRIDE];
    for (unsigned spins = 0;; spins++) {
        int free_ = 0;
        if (atomic_compare_exchange_weak_explicit(word, &free_, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return MPI_SUCCESS;
        if (spins < 64)
            continue;
        sched_yield(); /* the holder may be waiting for this core */
        if (spins % 4096 == 0) {
            proust_progress(pm_session);
            int rc = window_alive(w);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    }
}

void pm_rma_acc_unlock(struct pm_win *w, int target)
{
    if (!w->shm_locks)
        pm_unlock(&w->acc_lock);
    else
        atomic_store_explicit(&w->shm_locks[(size_t)target * PM_SHM_LOCK_STRIDE], 0,
                              memory_order_release);
}

/* The passive-target lock of `target` in a direct window: the word after
 * its accumulate lock, PM_SHM_EXCL or the number of shared holders. A
 * waiter keeps the engine going: the holder may wait on a message from it. */
#define PM_SHM_EXCL (1 << 30)

int pm_rma_direct_lock(struct pm_win *w, int target, int type)
{
    _Atomic int *word = &w->shm_locks[(size_t)target * PM_SHM_LOCK_STRIDE + 1];
    unsigned idle = 0;
    for (unsigned tries = 1;; tries++) {
        int cur = atomic_load_explicit(word, memory_order_relaxed);
        int want = type == MPI_LOCK_EXCLUSIVE ? PM_SHM_EXCL : cur + 1;
        bool free_ = type == MPI_LOCK_EXCLUSIVE ? cur == 0 : !(cur & PM_SHM_EXCL);
        if (free_ && atomic_compare_exchange_weak_explicit(word, &cur, want, memory_order_acquire,
                                                           memory_order_relaxed))
            return MPI_SUCCESS;
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
        int rc = tries % 256 ? MPI_SUCCESS : window_alive(w);
        if (rc != MPI_SUCCESS)
            return rc;
    }
}

void pm_rma_direct_unlock(struct pm_win *w, int target, int type)
{
    _Atomic int *word = &w->shm_locks[(size_t)target * PM_SHM_LOCK_STRIDE + 1];
    if (type == MPI_LOCK_EXCLUSIVE)
        atomic_store_explicit(word, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(word, 1, memory_order_release);
}

int pm_rma_apply_direct(struct pm_win *w, int target, const struct pm_rma_hdr *h,
                        const int64_t *lay, const char *in, char *out)
{
    char *t = pm_win_shm_addr(w, target, h->disp);
    size_t bytes = (size_t)h->bytes;
    int rc = MPI_SUCCESS;
    switch (h->kind) {
    case PM_RMA_PUT:
        scatter(t, lay, h->nblocks, in, bytes);
        break;
    case PM_RMA_GET:
        gather(out, t, lay, h->nblocks, bytes);
        break;
    case PM_RMA_ACC:
    case PM_RMA_GACC:
        if (!acc_valid(h->op, h->basic))
            return MPI_ERR_OP;
        if ((rc = pm_rma_acc_lock(w, target)) != MPI_SUCCESS)
            return rc;
        rc = accumulate(t, lay, h->nblocks, in, bytes, h->op, h->basic,
                        h->kind == PM_RMA_GACC ? out : NULL);
        pm_rma_acc_unlock(w, target);
        break;
    case PM_RMA_CAS:
        if ((rc = pm_rma_acc_lock(w, target)) != MPI_SUCCESS)
            return rc;
        memcpy(out, t, bytes);
        if (!memcmp(out, in + bytes, bytes))
            memcpy(t, in, bytes);
        pm_rma_acc_unlock(w, target);
        break;
    }
    return rc;
}

/* A refused operation: counted for the next ack and as applied (a fence
 * waits for it), and a fetch gets an empty reply, its origin's error. */
static void drop(struct pm_rma_port *p, const struct pm_rma_hdr *h)
{
    p->errors++;
    if (pm_rma_fetches(h->kind))
        reply(p->w, p->world, h->id, NULL, 0, NULL);
    atomic_fetch_add(&p->w->applied[h->epoch & 1], 1);
}

/* Apply a data operation whose layout and data are at hand (lay/in point
 * into the header message or the data message; lay NULL if nblocks 0). */
static void apply(struct pm_rma_port *p, const struct pm_rma_hdr *h, const int64_t *lay,
                  const char *in, char *direct_done)
{
    struct pm_win *w = p->w;
    uint64_t lo, hi;
    char *t = NULL;
    bool ok = layout_bounds(lay, h->nblocks, h->bytes, &lo, &hi);
    if (ok)
        t = direct_done ? direct_done : target_range(w, h->disp, lo, hi);
    if (ok && t && (h->kind == PM_RMA_ACC || h->kind == PM_RMA_GACC || h->kind == PM_RMA_CAS)) {
        ok = acc_valid(h->kind == PM_RMA_CAS ? PM_OPI(MPI_REPLACE) : h->op, h->basic);
        if (ok) {
            const struct pm_op_type *ty = &pm_op_types[h->basic];
            size_t ds = (size_t)ty->sub[0].len + (ty->nsub > 1 ? ty->sub[1].len : 0);
            ok = h->bytes % ds == 0 && (h->kind != PM_RMA_CAS || (h->bytes == ty->size &&
                                                                 h->nblocks == 0));
        }
    }
    if (!ok || !t) {
        drop(p, h);
        return;
    }
    size_t bytes = (size_t)h->bytes;
    switch (h->kind) {
    case PM_RMA_PUT:
        if (!direct_done)
            scatter(t, lay, h->nblocks, in, bytes);
        break;
    case PM_RMA_GET:
        if (h->nblocks == 0) {
            reply(w, p->world, h->id, t, bytes, NULL); /* from the window itself */
        } else {
            char *out = malloc(bytes ? bytes : 1);
            if (out)
                gather(out, t, lay, h->nblocks, bytes);
            else
                p->errors++;
            reply(w, p->world, h->id, out, out ? bytes : 0, out);
        }
        break;
    case PM_RMA_ACC:
    case PM_RMA_GACC: {
        char *old = h->kind == PM_RMA_GACC ? malloc(bytes ? bytes : 1) : NULL;
        int rc = MPI_ERR_NO_MEM;
        if (h->kind == PM_RMA_ACC || old) {
            pm_rma_acc_lock(w, w->rank);
            rc = accumulate(t, lay, h->nblocks, in, bytes, h->op, h->basic, old);
            pm_rma_acc_unlock(w, w->rank);
        }
        if (rc != MPI_SUCCESS)
            p->errors++;
        if (h->kind == PM_RMA_GACC)
            reply(w, p->world, h->id, old, rc == MPI_SUCCESS ? bytes : 0, old);
        break;
    }
    case PM_RMA_CAS: {
        char *old = malloc(bytes);
        if (old) {
            pm_rma_acc_lock(w, w->rank);
            memcpy(old, t, bytes);
            if (!memcmp(old, in + bytes, bytes))
                memcpy(t, in, bytes);
            pm_rma_acc_unlock(w, w->rank);
        } else {
            p->errors++;
        }
        reply(w, p->world, h->id, old, old ? bytes : 0, old);
        break;
    }
    }
    atomic_fetch_add(&w->applied[h->epoch & 1], 1);
}

/* ---- Ports ---------------------------------------------------------------- */

static void port_cb(proust_request_t *req, const proust_status_t *st, void *arg);

static proust_tag_t port_tag(const struct pm_rma_port *p, unsigned kind)
{
    return p->w->comm->tag_pt2pt | ((proust_tag_t)p->origin << PM_TAG_BITS) | kind;
}

static void port_dead(struct pm_rma_port *p)
{
    free(p->data);
    p->data = NULL;
    atomic_fetch_sub(&p->w->ports_live, 1);
}

/* Post the port's next receive; its callback may run inside this call.
 * No lock may be held here: engine calls run pending callbacks. */
static void port_post(struct pm_rma_port *p, int stage, void *buf, size_t len)
{
    p->stage = stage;
    proust_request_t *req = NULL;
    int rc = proust_irecv(pm_session, buf, len, p->world,
                          port_tag(p, stage == STAGE_HDR ? PM_RMA_TAG_HDR : PM_RMA_TAG_DATA),
                          PROUST_TAG_MASK_FULL, &req);
    if (rc != PROUST_OK) {
        fprintf(stderr, "[proust mpi, rank %d] RMA: cannot receive from rank %d: %s\n",
                pm_world_rank, p->world, proust_strerror(rc));
        port_dead(p);
        return;
    }
    if (proust_request_monitor(req, port_cb, p) != PROUST_OK)
        port_dead(p); /* never: the request is fresh */
}

static void port_on_header(struct pm_rma_port *p)
{
    struct pm_win *w = p->w;
    const struct pm_rma_hdr *h = (const struct pm_rma_hdr *)p->buf;
    if (p->got < sizeof *h || h->kind == 0 || h->kind >= PM_RMA_KIND_MAX) {
        p->errors++;
        port_post(p, STAGE_HDR, p->buf, PM_RMA_HDR_MAX);
        return;
    }
    switch (h->kind) {
    case PM_RMA_LOCK:
        if (lock_type_valid(h->lock_type))
            lock_request(p, h->lock_type, h->id);
        else
            p->errors++, ack(p, h->id);
        break;
    case PM_RMA_UNLOCK:
        if (!(h->flags & PM_RMA_F_NOCHECK) && lock_type_valid(h->lock_type))
            lock_release(w, h->lock_type);
        ack(p, h->id);
        break;
    case PM_RMA_FLUSH:
        ack(p, h->id);
        break;
    case PM_RMA_CLOSE:
        port_dead(p); /* the origin freed the window: nothing follows */
        return;
    case PM_RMA_POST:
    case PM_RMA_COMPLETE:
        pthread_mutex_lock(&w->lock);
        (h->kind == PM_RMA_POST ? w->post_seen : w->complete_seen)[p->origin]++;
        pthread_mutex_unlock(&w->lock);
        break;
    default: {
        /* a data operation: header, layout, data — here or in the next message */
        uint64_t lay_bytes = h->nblocks * 16, dbytes = pm_rma_data_bytes(h->kind, h->op, h->bytes);
        if (h->nblocks > (UINT64_MAX / 16) || lay_bytes + dbytes < lay_bytes) {
            p->errors++;
            break;
        }
        if (h->flags & PM_RMA_F_FOLLOW) {
            size_t len = (size_t)(lay_bytes + dbytes);
            char *direct = NULL;
            if (h->kind == PM_RMA_PUT && h->nblocks == 0)
                direct = target_range(w, h->disp, 0, h->bytes);
            p->data = direct ? NULL : malloc(len ? len : 1);
            if (!direct && !p->data) {
                /* cannot take it in: truncate it away, the origin is told */
                p->errors++;
            }
            p->data_len = len;
            port_post(p, STAGE_DATA, direct ? direct : p->data, direct || p->data ? len : 0);
            return;
        }
        if (p->got != sizeof *h + lay_bytes + dbytes) {
            drop(p, h);
            break;
        }
        const int64_t *lay = (const int64_t *)(p->buf + sizeof *h);
        apply(p, h, h->nblocks ? lay : NULL, p->buf + sizeof *h + lay_bytes, NULL);
        break;
    }
    }
    port_post(p, STAGE_HDR, p->buf, PM_RMA_HDR_MAX);
}

static void port_on_data(struct pm_rma_port *p)
{
    const struct pm_rma_hdr *h = (const struct pm_rma_hdr *)p->buf;
    if (p->rc != PROUST_OK || p->got != p->data_len) {
        drop(p, h);
    } else if (!p->data) {
        /* a put received straight into the window */
        apply(p, h, NULL, NULL, target_range(p->w, h->disp, 0, h->bytes));
    } else {
        const int64_t *lay = (const int64_t *)p->data;
        apply(p, h, h->nblocks ? lay : NULL, p->data + h->nblocks * 16, NULL);
    }
    free(p->data);
    p->data = NULL;
    port_post(p, STAGE_HDR, p->buf, PM_RMA_HDR_MAX);
}

/* Ports whose receive completed inside a callback of this thread. */
static _Thread_local struct pm_rma_port *ready_head, *ready_tail;
static _Thread_local int in_port_cb;

static void port_handle(struct pm_rma_port *p)
{
    if (p->stage == STAGE_HDR)
        port_on_header(p);
    else
        port_on_data(p);
}

static void port_cb(proust_request_t *req, const proust_status_t *st, void *arg)
{
    struct pm_rma_port *p = arg;
    proust_request_free(&req); /* ours: released once this callback returns */
    p->got = st->count;
    p->rc = st->error;
    if (st->error != PROUST_OK && st->error != PROUST_ERR_TRUNCATE) {
        /* the origin died or its connection dropped: nothing more comes */
        fprintf(stderr, "[proust mpi, rank %d] RMA: window port of rank %d closed: %s\n",
                pm_world_rank, p->world, proust_strerror(st->error));
        port_dead(p);
        return;
    }
    p->next_ready = NULL;
    if (in_port_cb) {
        if (ready_tail)
            ready_tail->next_ready = p;
        else
            ready_head = p;
        ready_tail = p;
        return;
    }
    in_port_cb = 1;
    port_handle(p);
    while (ready_head) {
        struct pm_rma_port *q = ready_head;
        ready_head = q->next_ready;
        if (!ready_head)
            ready_tail = NULL;
        port_handle(q);
    }
    in_port_cb = 0;
}

int pm_rma_ports_open(struct pm_win *w)
{
    w->ports = calloc((size_t)w->size, sizeof *w->ports);
    if (!w->ports)
        return MPI_ERR_NO_MEM;
    for (int r = 0; r < w->size; r++) {
        struct pm_rma_port *p = &w->ports[r];
        p->w = w;
        p->origin = r;
        p->world = pm_comm_peer(w->comm, r);
        p->buf = aligned_alloc(16, PM_RMA_HDR_MAX);
        if (!p->buf) {
            for (int i = 0; i < r; i++)
                free(w->ports[i].buf);
            free(w->ports);
            w->ports = NULL;
            return MPI_ERR_NO_MEM;
        }
    }
    atomic_store(&w->ports_live, w->size);
    for (int r = 0; r < w->size; r++)
        port_post(&w->ports[r], STAGE_HDR, w->ports[r].buf, PM_RMA_HDR_MAX);
    return MPI_SUCCESS;
}

void pm_rma_ports_close(struct pm_win *w)
{
    if (!w->ports)
        return;
    /* A CLOSE to every rank, behind everything we sent it: each port ends
     * on its origin's CLOSE, so no message is left for a freed window. */
    for (int r = 0; r < w->size; r++)
        pm_rma_control(w, r, PM_RMA_CLOSE, 0, 0, false);
    unsigned idle = 0;
    while (atomic_load(&w->ports_live) > 0) {
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
    }
    for (int r = 0; r < w->size; r++)
        free(w->ports[r].buf);
    free(w->ports);
    w->ports = NULL;
    while (w->lock_queue) {
        struct pm_rma_waiter *q = w->lock_queue;
        w->lock_queue = q->next;
        free(q);
    }
}

/* ---- Control messages from the origin side ---------------------------------- */

static uint8_t lock_type_to_wire(int lock_type)
{
    switch (lock_type) {
    case MPI_LOCK_EXCLUSIVE:
        return PM_RMA_LOCK_WIRE_EXCLUSIVE;
    case MPI_LOCK_SHARED:
        return PM_RMA_LOCK_WIRE_SHARED;
    default:
        return PM_RMA_LOCK_WIRE_NONE;
    }
}

int pm_rma_control(struct pm_win *w, int target, int kind, int flags, int lock_type,
                   bool wait_ack)
{
    struct pm_rma_hdr h = {.kind = (uint8_t)kind, .flags = (uint8_t)flags,
                           .lock_type = lock_type_to_wire(lock_type), .epoch = w->epoch};
    h.id = atomic_fetch_add(&w->next_id, 1) & PM_RMA_ID_MASK;
    int world = pm_comm_peer(w->comm, target);
    proust_request_t *rreq = NULL;
    int32_t dropped = 0;
    int rc = PROUST_OK;
    if (wait_ack) {
        proust_tag_t tag = w->comm->tag_pt2pt | ((proust_tag_t)target << PM_TAG_BITS) |
                           PM_RMA_TAG_RESP | h.id;
        rc = proust_irecv(pm_session, &dropped, sizeof dropped, world, tag,
                          PROUST_TAG_MASK_FULL, &rreq);
    }
    if (rc == PROUST_OK)
        rc = proust_send(pm_session, &h, sizeof h, world,
                         w->comm->tag_pt2pt | w->comm->tag_src | PM_RMA_TAG_HDR);
    if (rc != PROUST_OK) {
        if (rreq) {
            proust_cancel(rreq);
            proust_wait(&rreq, NULL);
        }
        return pm_error_from_proust(rc);
    }
    if (!wait_ack)
        return MPI_SUCCESS;
    proust_status_t st;
    rc = proust_wait(&rreq, &st);
    if (rc != PROUST_OK)
        return pm_error_from_proust(rc);
    return st.count == sizeof dropped && dropped ? MPI_ERR_RMA_RANGE : MPI_SUCCESS;
}
