/*
 * rma_sync.c — synchronisation of one-sided communication: fence, passive
 * target (lock, unlock, flush), post/start/complete/wait, Win_sync.
 *
 * Completion at the target never needs a message per operation:
 *  - fence: every rank counts the operations it issued to each rank in the
 *    epoch; a reduce-scatter gives each target the number it must have
 *    applied, and targets count what they applied by epoch (the epoch
 *    number rides in every header, so operations of the next epoch, which a
 *    faster rank may already send, are counted apart);
 *  - unlock, flush and complete are control messages behind the
 *    operations, and a port applies its origin's messages in order, so the
 *    ack of an unlock or flush means every operation before it was applied;
 *    a complete counted at the target tells MPI_Win_wait the same.
 */
#include <stdlib.h>

#include "comm.h"
#include "p2p.h"
#include "win.h"

#define GET_WIN(w, win, fn) \
    PM_CHECK_INIT(fn);      \
    PM_GET_WIN(w, win, fn)

static bool passive_open(const struct pm_win *w)
{
    if (w->lock_all)
        return true;
    for (int r = 0; r < w->size; r++)
        if (w->locked[r])
            return true;
    return false;
}

/* ---- Fence ------------------------------------------------------------------- */

int PMPI_Win_fence(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_fence";
    GET_WIN(w, win, fn);
    if (assert & ~(MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED))
        return pm_win_error(win, MPI_ERR_ASSERT, "%s: invalid assertion %#x", fn,
                            (unsigned)assert);
    if (passive_open(w) || w->access.ranks || w->exposure.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC,
                            "%s: a lock or post/start epoch is open on the window", fn);
    pm_rma_wait_local(w, -1);
    if (w->direct) {
        /* every operation was done by its origin: the stores before the
         * fence are seen after it by everyone, nothing to count */
        atomic_thread_fence(memory_order_seq_cst);
        int rc = PMPI_Barrier(w->comm->handle);
        atomic_thread_fence(memory_order_seq_cst);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: the barrier failed", fn);
        w->epoch++;
        w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
        return MPI_SUCCESS;
    }
    uint64_t *counts = malloc((size_t)w->size * sizeof *counts);
    if (!counts)
        return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int r = 0; r < w->size; r++)
        counts[r] = atomic_exchange(&w->sent[r], 0);
    uint64_t expected = 0;
    int rc = PMPI_Reduce_scatter_block(counts, &expected, 1, MPI_UINT64_T, MPI_SUM,
                                       w->comm->handle);
    free(counts);
    if (rc != MPI_SUCCESS)
        return pm_win_error(win, rc, "%s: the epoch's exchange of counts failed", fn);
    uint32_t e = w->epoch++;
    unsigned idle = 0;
    while (atomic_load_explicit(&w->applied[e & 1], memory_order_acquire) < expected) {
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
    }
    atomic_fetch_sub(&w->applied[e & 1], expected);
    /* One-sided transfers of the next epoch start as soon as their origin
     * leaves the fence: it must not leave before every target has applied
     * the messages of this one, which they could overwrite */
    if (w->nic && !(assert & MPI_MODE_NOSUCCEED)) {
        rc = PMPI_Barrier(w->comm->handle);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: the barrier failed", fn);
    }
    for (int r = 0; r < w->size; r++)
        atomic_store(&w->unflushed[r], 0);
    w->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}
PM_WEAK(Win_fence)

/* ---- Passive target ---------------------------------------------------------- */

static int check_rank(MPI_Win win, const struct pm_win *w, int rank, const char *fn)
{
    if (rank < 0 || rank >= w->size)
        return pm_win_error(win, MPI_ERR_RANK, "%s: invalid rank %d (window of %d)", fn, rank,
                            w->size);
    return MPI_SUCCESS;
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock";
    GET_WIN(w, win, fn);
    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED)
        return pm_win_error(win, MPI_ERR_LOCKTYPE, "%s: invalid lock type %d", fn, lock_type);
    if (assert & ~MPI_MODE_NOCHECK)
        return pm_win_error(win, MPI_ERR_ASSERT, "%s: invalid assertion %#x", fn,
                            (unsigned)assert);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_rank(win, w, rank, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (w->locked[rank] || w->lock_all)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: rank %d is already locked", fn, rank);
    if (w->access.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC,
                            "%s: an access epoch of MPI_Win_start is open on the window", fn);
    /* a fence that opened an epoch no operation used: the lock ends it, as
     * in MPICH (operations after the unlock need a new fence) */
    w->fence_open = false;
    bool nocheck = assert & MPI_MODE_NOCHECK;
    if (!nocheck && w->shm_locks) {
        rc = pm_rma_direct_lock(w, rank, lock_type);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: rank %d's lock cannot be had: a process of "
                                "the window failed", fn, rank);
    } else if (!nocheck && w->nic_locks) {
        rc = pm_rma_nic_lock(w, rank, lock_type);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: rank %d's lock word cannot be reached", fn, rank);
    } else if (!nocheck) {
        rc = pm_rma_control(w, rank, PM_RMA_LOCK, 0, lock_type, true);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: rank %d did not grant the lock", fn, rank);
    }
    w->locked[rank] = lock_type;
    w->lock_nocheck[rank] = nocheck;
    atomic_store(&w->unflushed[rank], 0);
    return MPI_SUCCESS;
}
PM_WEAK(Win_lock)

/* End the passive epoch to `rank`: local completion, then the unlock (or a
 * flush, for a lock never taken) and its ack. */
static int release(struct pm_win *w, int rank, int type, bool nocheck)
{
    pm_rma_wait_local(w, rank);
    int unflushed = atomic_exchange(&w->unflushed[rank], 0);
    if (w->shm_locks || w->nic_locks) {
        /* lock words: the operations must be done at the target before
         * the word goes (those of a direct window are, and the NIC's once
         * complete here; messages without a reply need the flush's round
         * trip) */
        int rc = MPI_SUCCESS;
        if (!w->direct && unflushed)
            rc = pm_rma_control(w, rank, PM_RMA_FLUSH, 0, 0, true);
        atomic_thread_fence(memory_order_seq_cst);
        if (!nocheck && w->shm_locks)
            pm_rma_direct_unlock(w, rank, type);
        else if (!nocheck) {
            int urc = pm_rma_nic_unlock(w, rank, type);
            if (rc == MPI_SUCCESS)
                rc = urc;
        }
        return rc;
    }
    return pm_rma_control(w, rank, PM_RMA_UNLOCK, nocheck ? PM_RMA_F_NOCHECK : 0, type, true);
}

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock";
    GET_WIN(w, win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_rank(win, w, rank, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!w->locked[rank])
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: rank %d is not locked", fn, rank);
    rc = release(w, rank, w->locked[rank], w->lock_nocheck[rank]);
    w->locked[rank] = 0;
    int late = atomic_exchange(&w->op_error, MPI_SUCCESS);
    if (rc == MPI_SUCCESS && late != MPI_SUCCESS)
        rc = late;
    if (rc != MPI_SUCCESS)
        return pm_win_error(win, rc, "%s: operations to rank %d failed at the target", fn,
                            rank);
    return MPI_SUCCESS;
}
PM_WEAK(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_lock_all";
    GET_WIN(w, win, fn);
    if (assert & ~MPI_MODE_NOCHECK)
        return pm_win_error(win, MPI_ERR_ASSERT, "%s: invalid assertion %#x", fn,
                            (unsigned)assert);
    if (passive_open(w))
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: a lock is already held", fn);
    if (w->access.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC,
                            "%s: an access epoch of MPI_Win_start is open on the window", fn);
    w->fence_open = false; /* as in MPI_Win_lock */
    bool nocheck = assert & MPI_MODE_NOCHECK;
    for (int r = 0; r < w->size && !nocheck && w->shm_locks; r++) {
        int rc = pm_rma_direct_lock(w, r, MPI_LOCK_SHARED);
        if (rc != MPI_SUCCESS) {
            for (int i = 0; i < r; i++)
                pm_rma_direct_unlock(w, i, MPI_LOCK_SHARED);
            return pm_win_error(win, rc, "%s: rank %d's lock cannot be had: a process of "
                                "the window failed", fn, r);
        }
    }
    for (int r = 0; r < w->size && !nocheck && !w->shm_locks; r++) {
        int rc = w->nic_locks ? pm_rma_nic_lock(w, r, MPI_LOCK_SHARED)
                              : pm_rma_control(w, r, PM_RMA_LOCK, 0, MPI_LOCK_SHARED, true);
        if (rc != MPI_SUCCESS) {
            for (int i = 0; i < r; i++)
                release(w, i, MPI_LOCK_SHARED, false);
            return pm_win_error(win, rc, "%s: rank %d did not grant the lock", fn, r);
        }
    }
    for (int r = 0; r < w->size; r++)
        atomic_store(&w->unflushed[r], 0);
    w->lock_all = true;
    w->lock_all_nocheck = nocheck;
    return MPI_SUCCESS;
}
PM_WEAK(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_unlock_all";
    GET_WIN(w, win, fn);
    if (!w->lock_all)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: MPI_Win_lock_all was not called", fn);
    int err = MPI_SUCCESS, bad = -1;
    for (int r = 0; r < w->size; r++) {
        int rc = release(w, r, MPI_LOCK_SHARED, w->lock_all_nocheck);
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc, bad = r;
    }
    w->lock_all = false;
    if (err != MPI_SUCCESS)
        return pm_win_error(win, err, "%s: operations to rank %d failed at the target", fn, bad);
    return MPI_SUCCESS;
}
PM_WEAK(Win_unlock_all)

/* Calls that synchronise with the window's memory also move what other
 * processes sent it: a process spinning on its own window (a lock flag that
 * a peer's accumulate will set, mpi4py.util.sync's Mutex) gets there only
 * through them when no progress thread runs. */
static void poke(const struct pm_win *w)
{
    /* A shared-memory window's operations need no target: one call in 64
     * is enough to keep other traffic moving under a process spinning on
     * its window (its peer may wait for a message of ours first). */
    static _Thread_local unsigned calls;
    if (!w->direct || ++calls % 64 == 0)
        proust_progress(pm_session);
}

static int flush_one(MPI_Win win, struct pm_win *w, int rank, const char *fn)
{
    if (w->direct) /* the loads and stores done: ordered before what follows */
        atomic_thread_fence(memory_order_seq_cst);
    pm_rma_wait_local(w, rank);
    int late = atomic_exchange(&w->op_error, MPI_SUCCESS);
    if (late != MPI_SUCCESS)
        return pm_win_error(win, late, "%s: an operation failed (the target refused it)", fn);
    if (atomic_exchange(&w->unflushed[rank], 0) == 0)
        return MPI_SUCCESS; /* nothing issued since the last flush: nothing to wait for */
    int rc = pm_rma_control(w, rank, PM_RMA_FLUSH, 0, 0, true);
    if (rc != MPI_SUCCESS)
        return pm_win_error(win, rc, "%s: operations to rank %d failed at the target", fn,
                            rank);
    return MPI_SUCCESS;
}

static int check_passive(MPI_Win win, const struct pm_win *w, int rank, const char *fn)
{
    int rc = check_rank(win, w, rank, fn);
    if (rc == MPI_SUCCESS && !w->lock_all && !w->locked[rank])
        rc = pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: rank %d is not locked", fn, rank);
    return rc;
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush";
    GET_WIN(w, win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_passive(win, w, rank, fn);
    poke(w);
    return rc != MPI_SUCCESS ? rc : flush_one(win, w, rank, fn);
}
PM_WEAK(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_all";
    GET_WIN(w, win, fn);
    if (!passive_open(w))
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: no lock is held", fn);
    poke(w);
    for (int r = 0; r < w->size; r++) {
        int rc = flush_one(win, w, r, fn);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Win_flush_all)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local";
    GET_WIN(w, win, fn);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_passive(win, w, rank, fn);
    poke(w);
    if (rc == MPI_SUCCESS)
        pm_rma_wait_local(w, rank);
    return rc;
}
PM_WEAK(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    static const char fn[] = "MPI_Win_flush_local_all";
    GET_WIN(w, win, fn);
    if (!passive_open(w))
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: no lock is held", fn);
    poke(w);
    pm_rma_wait_local(w, -1);
    return MPI_SUCCESS;
}
PM_WEAK(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    static const char fn[] = "MPI_Win_sync";
    GET_WIN(w, win, fn);
    poke(w);
    /* one memory: a full barrier orders this process's loads and stores
     * with those of the other processes and of our RMA callbacks */
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}
PM_WEAK(Win_sync)

/* ---- Post / start / complete / wait ---------------------------------------------- */

/* The window ranks of the members of `group`. */
static int to_window_ranks(MPI_Win win, const struct pm_win *w, MPI_Group group,
                           struct pm_win_group *out, const char *fn)
{
    struct pm_group *g = pm_group_get(group);
    if (!g)
        return pm_win_error(win, MPI_ERR_GROUP, "%s: invalid group %#x", fn, (unsigned)group);
    out->n = g->size;
    out->ranks = malloc((size_t)(g->size ? g->size : 1) * sizeof *out->ranks);
    if (!out->ranks)
        return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < g->size; i++) {
        int r = 0;
        while (r < w->size && w->comm->local->world[r] != g->world[i])
            r++;
        if (r == w->size) {
            free(out->ranks);
            out->ranks = NULL;
            return pm_win_error(win, MPI_ERR_GROUP,
                                "%s: group member %d is not in the window", fn, i);
        }
        out->ranks[i] = r;
    }
    return MPI_SUCCESS;
}

/* Take one of the notices counted in seen[r] (posts or completes), when
 * `block`, waiting for it; false if none (not blocking). */
static bool take_notice(struct pm_win *w, int *seen, int r, bool block)
{
    unsigned idle = 0;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        bool got = seen[r] > 0;
        if (got)
            seen[r]--;
        pthread_mutex_unlock(&w->lock);
        if (got || !block)
            return got;
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
    }
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_post";
    GET_WIN(w, win, fn);
    if (assert & ~(MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT))
        return pm_win_error(win, MPI_ERR_ASSERT, "%s: invalid assertion %#x", fn,
                            (unsigned)assert);
    if (w->exposure.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: an exposure epoch is already open", fn);
    int rc = to_window_ranks(win, w, group, &w->exposure, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < w->exposure.n; i++) {
        rc = pm_rma_control(w, w->exposure.ranks[i], PM_RMA_POST, 0, 0, false);
        if (rc != MPI_SUCCESS)
            return pm_win_error(win, rc, "%s: cannot notify rank %d", fn, w->exposure.ranks[i]);
    }
    return MPI_SUCCESS;
}
PM_WEAK(Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fn[] = "MPI_Win_start";
    GET_WIN(w, win, fn);
    if (assert & ~MPI_MODE_NOCHECK)
        return pm_win_error(win, MPI_ERR_ASSERT, "%s: invalid assertion %#x", fn,
                            (unsigned)assert);
    if (w->access.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: an access epoch is already open", fn);
    int rc = to_window_ranks(win, w, group, &w->access, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    /* every target must have posted (their posts may come in any order) */
    for (int i = 0; i < w->access.n; i++)
        take_notice(w, w->post_seen, w->access.ranks[i], true);
    return MPI_SUCCESS;
}
PM_WEAK(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    static const char fn[] = "MPI_Win_complete";
    GET_WIN(w, win, fn);
    if (!w->access.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: MPI_Win_start was not called", fn);
    int err = MPI_SUCCESS;
    for (int i = 0; i < w->access.n; i++) {
        int r = w->access.ranks[i];
        pm_rma_wait_local(w, r);
        int rc = pm_rma_control(w, r, PM_RMA_COMPLETE, 0, 0, false);
        if (rc != MPI_SUCCESS && err == MPI_SUCCESS)
            err = rc;
    }
    free(w->access.ranks);
    w->access.ranks = NULL;
    w->access.n = 0;
    if (err != MPI_SUCCESS)
        return pm_win_error(win, err, "%s: cannot notify a target", fn);
    return MPI_SUCCESS;
}
PM_WEAK(Win_complete)

static void exposure_end(struct pm_win *w)
{
    free(w->exposure.ranks);
    w->exposure.ranks = NULL;
    w->exposure.n = 0;
}

int PMPI_Win_wait(MPI_Win win)
{
    static const char fn[] = "MPI_Win_wait";
    GET_WIN(w, win, fn);
    if (!w->exposure.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: MPI_Win_post was not called", fn);
    for (int i = 0; i < w->exposure.n; i++)
        take_notice(w, w->complete_seen, w->exposure.ranks[i], true);
    exposure_end(w);
    return MPI_SUCCESS;
}
PM_WEAK(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char fn[] = "MPI_Win_test";
    GET_WIN(w, win, fn);
    if (!flag)
        return pm_win_error(win, MPI_ERR_ARG, "%s: flag is NULL", fn);
    if (!w->exposure.ranks)
        return pm_win_error(win, MPI_ERR_RMA_SYNC, "%s: MPI_Win_post was not called", fn);
    proust_progress(pm_session);
    /* all or nothing: look first, take only when every origin completed */
    pthread_mutex_lock(&w->lock);
    bool all = true;
    for (int i = 0; i < w->exposure.n && all; i++) {
        int r = w->exposure.ranks[i], need = 0;
        for (int j = 0; j < w->exposure.n; j++)
            need += w->exposure.ranks[j] == r;
        all = w->complete_seen[r] >= need;
    }
    if (all)
        for (int i = 0; i < w->exposure.n; i++)
            w->complete_seen[w->exposure.ranks[i]]--;
    pthread_mutex_unlock(&w->lock);
    *flag = all;
    if (all)
        exposure_end(w);
    return MPI_SUCCESS;
}
PM_WEAK(Win_test)
