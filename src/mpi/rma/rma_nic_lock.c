/*
 * rma_nic_lock.c — passive-target locks by the NIC's atomics: a window
 * whose accumulates go by the NIC (rma_nic.c) also takes its locks on a
 * lock word each rank registers beside its window, with compare-and-swap
 * and fetch-and-add, so that MPI_Win_lock and MPI_Win_unlock need nothing
 * of the target's CPU (a message-granted lock waits for the target's
 * progress).
 *
 * The word: bit 62 held by the exclusive holder, the low bits count the
 * shared holders. An exclusive lock swaps 0 for the bit; a shared one adds
 * 1 and, finding the bit, takes its 1 back and tries again later. Every
 * rank locks every rank (itself included) through the same atomic rail,
 * so all updates of a word are atomic with each other.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"
#include "win.h"

#define LOCK_EXCL ((uint64_t)1 << 62)

int pm_rma_nic_lock_setup(struct pm_win *w, uint8_t *key, uint64_t *key_len)
{
    *key_len = 0;
    w->nic_lock_word = aligned_alloc(64, 64);
    if (!w->nic_lock_word)
        return MPI_ERR_NO_MEM;
    memset(w->nic_lock_word, 0, 64);
    size_t len = 0;
    if (proust_mem_register(pm_session, w->nic_lock_word, 64, &w->nic_lock_mem) != PROUST_OK)
        return MPI_SUCCESS; /* no key: the window's locks stay messages */
    if (proust_mem_key(w->nic_lock_mem, key, PROUST_MEM_KEY_MAX, &len) == PROUST_OK)
        *key_len = len;
    return MPI_SUCCESS;
}

void pm_rma_nic_lock_free(struct pm_win *w)
{
    if (w->nic_lock_mem) /* before the word goes */
        proust_mem_release(w->nic_lock_mem);
    w->nic_lock_mem = NULL;
    free(w->nic_lock_word);
    w->nic_lock_word = NULL;
    free(w->nic_lock_keys);
    w->nic_lock_keys = NULL;
}

/* One atomic on `target`'s lock word, waited for: the word's old value. */
static int word_op(struct pm_win *w, int target, int op, uint64_t operand, uint64_t compare,
                   uint64_t *old)
{
    proust_request_t *rq;
    int world = pm_comm_peer(w->comm, target);
    const struct pm_nic_lock_key *k = &w->nic_lock_keys[target];
    int rc = proust_rma_atomic(pm_session, world, op, PROUST_ATOMIC_UINT64, &operand,
                               op == PROUST_ATOMIC_CSWAP ? &compare : NULL, old, 1, k->key,
                               k->len, 0, &rq);
    if (rc != PROUST_OK)
        return pm_error_from_proust(rc);
    proust_status_t st;
    proust_wait(&rq, &st);
    return st.error == PROUST_OK ? MPI_SUCCESS : pm_error_from_proust(st.error);
}

int pm_rma_nic_lock(struct pm_win *w, int target, int type)
{
    unsigned idle = 0;
    for (;;) {
        uint64_t old = 0;
        int rc = type == MPI_LOCK_EXCLUSIVE
                     ? word_op(w, target, PROUST_ATOMIC_CSWAP, LOCK_EXCL, 0, &old)
                     : word_op(w, target, PROUST_ATOMIC_SUM, 1, 0, &old);
        if (rc != MPI_SUCCESS)
            return rc;
        if (type == MPI_LOCK_EXCLUSIVE ? old == 0 : !(old & LOCK_EXCL))
            return MPI_SUCCESS;
        if (type == MPI_LOCK_SHARED &&
            (rc = word_op(w, target, PROUST_ATOMIC_SUM, (uint64_t)-1, 0, &old)) != MPI_SUCCESS)
            return rc;
        /* held: let the holder's traffic through before the next try */
        proust_progress(pm_session);
        pm_p2p_backoff(&idle);
        if (idle > 64)
            sched_yield();
    }
}

int pm_rma_nic_unlock(struct pm_win *w, int target, int type)
{
    uint64_t old;
    return word_op(w, target, PROUST_ATOMIC_SUM,
                   type == MPI_LOCK_EXCLUSIVE ? (uint64_t)0 - LOCK_EXCL : (uint64_t)-1, 0, &old);
}
