/*
 * shm_claim.c — claim words of one-shot exposures (see shm_claim.h).
 */
#include "drivers/shm_claim.h"

void proust__shm_claims_init(struct proust__shm_claims *c, void *words)
{
    c->words = words;
    proust__lock_init(&c->lock);
    c->nfree = PROUST__SHM_CLAIMS;
    for (uint32_t i = 0; i < PROUST__SHM_CLAIMS; i++)
        c->free[i] = (uint16_t)(PROUST__SHM_CLAIMS - 1 - i);
}

bool proust__shm_claim_new(struct proust__shm_claims *c, uint32_t *slot, uint64_t *gen)
{
    proust__lock(&c->lock);
    if (!c->nfree) {
        proust__unlock(&c->lock);
        return false;
    }
    uint32_t i = c->free[--c->nfree];
    proust__unlock(&c->lock);
    /* a free slot is ours alone: no peer can move it from FREE */
    uint64_t g = (atomic_load_explicit(&c->words[i], memory_order_relaxed) >> 2) + 1;
    /* release: the peer that reads the key (sent after this) sees OFFERED */
    atomic_store_explicit(&c->words[i], proust__shm_claim_word(g, SHM_CLAIM_OFFERED),
                          memory_order_release);
    *slot = i;
    *gen = g;
    return true;
}

static void put_free(struct proust__shm_claims *c, uint32_t slot)
{
    proust__lock(&c->lock);
    c->free[c->nfree++] = (uint16_t)slot;
    proust__unlock(&c->lock);
}

bool proust__shm_claim_withdraw(struct proust__shm_claims *c, uint32_t slot, uint64_t gen,
                                bool force)
{
    if (slot >= PROUST__SHM_CLAIMS)
        return false;
    uint64_t offered = proust__shm_claim_word(gen, SHM_CLAIM_OFFERED);
    uint64_t freed = proust__shm_claim_word(gen, SHM_CLAIM_FREE);
    /* acq_rel: when we lose, the peer's write that follows its claim is
     * announced by DONE, which orders the data itself */
    uint64_t seen = offered;
    if (atomic_compare_exchange_strong_explicit(&c->words[slot], &seen, freed,
                                                memory_order_acq_rel, memory_order_acquire)) {
        put_free(c, slot);
        return true;
    }
    if (seen != proust__shm_claim_word(gen, SHM_CLAIM_WRITING))
        /* not this exposure's word any more (free, or of another
         * generation: only a peer scribbling on our segment does that):
         * nobody can claim it for this key, and the slot is not ours to
         * put back (never twice) */
        return true;
    if (force) { /* the write was announced, or its writer is gone */
        atomic_store_explicit(&c->words[slot], freed, memory_order_release);
        put_free(c, slot);
    }
    return false;
}

bool proust__shm_claim_take(_Atomic uint64_t *owner_words, uint32_t slot, uint64_t gen)
{
    if (slot >= PROUST__SHM_CLAIMS || gen == 0 || gen >> 62)
        return false; /* a key we did not get from this owner's claim_new */
    uint64_t offered = proust__shm_claim_word(gen, SHM_CLAIM_OFFERED);
    return atomic_compare_exchange_strong_explicit(
        &owner_words[slot], &offered, proust__shm_claim_word(gen, SHM_CLAIM_WRITING),
        memory_order_acq_rel, memory_order_relaxed);
}
