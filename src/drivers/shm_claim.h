/*
 * shm_claim.h — claim words: one-shot exposures of receive buffers that a
 * peer may write into at most once, and that their owner can take back.
 *
 * A receiver that offers a buffer to a sender (core/offer.c) must be able
 * to stop waiting for that sender: to pull the data itself when the sender
 * is busy computing, or to cancel the receive while the sender sits in
 * finalize. The claim word decides who goes first, without a message: it
 * lives in the receiver's segment (which every local peer maps), holds a
 * generation and a state, and both sides change it with one
 * compare-and-swap:
 *   sender, before it writes:            gen|OFFERED -> gen|WRITING
 *   receiver, to take the buffer back:   gen|OFFERED -> gen|FREE
 * The loser backs off (the sender answers the RTS the usual way; the
 * receiver waits for the write, which is under way, to be announced). The
 * generation, carried in the key, makes a stale key from an earlier
 * exposure of the same slot fail its swap.
 */
#ifndef PROUST_SHM_CLAIM_H
#define PROUST_SHM_CLAIM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/lock.h"

#define PROUST__SHM_CLAIMS 1024u /* one-shot exposures alive at once, per process */

enum { SHM_CLAIM_FREE = 0, SHM_CLAIM_OFFERED = 1, SHM_CLAIM_WRITING = 2 };

/* The owner's view of the claim words in its own segment. */
struct proust__shm_claims {
    _Atomic uint64_t *words; /* PROUST__SHM_CLAIMS words, zero when created */
    proust__lock_t lock;     /* the free list */
    uint32_t nfree;
    uint16_t free[PROUST__SHM_CLAIMS];
};

static inline uint64_t proust__shm_claim_word(uint64_t gen, unsigned state)
{
    return gen << 2 | state;
}

void proust__shm_claims_init(struct proust__shm_claims *c, void *words);
/* A new exposure: slot and generation for the key; false if all are used. */
bool proust__shm_claim_new(struct proust__shm_claims *c, uint32_t *slot, uint64_t *gen);
/* Owner: end an exposure. Returns true if no peer had claimed it (none ever
 * will), false if a peer is writing (or wrote): with `force`, ended anyway
 * (the peer's DONE came, or the peer is gone). A word that is no longer
 * this exposure's counts as not claimed. */
bool proust__shm_claim_withdraw(struct proust__shm_claims *c, uint32_t slot, uint64_t gen,
                                bool force);
/* Peer: claim the exposure for its one write, in the owner's mapped words;
 * false if the owner took it back (or the key is stale or malformed). */
bool proust__shm_claim_take(_Atomic uint64_t *owner_words, uint32_t slot, uint64_t gen);

#endif
