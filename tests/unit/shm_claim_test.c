/* Claim words: exactly one of owner and peer wins each exposure, a stale
 * or malformed key never wins, the table runs out cleanly and a slot is
 * never handed out twice (a withdraw after the peer's write, repeated, or
 * of another generation, does not put it back twice). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "drivers/shm_claim.h"
#include "unit.h"

static _Atomic uint64_t words[PROUST__SHM_CLAIMS];
static struct proust__shm_claims table;

#define ROUNDS 20000
static _Atomic uint32_t race_slot;
static _Atomic uint64_t race_gen; /* 0: nothing exposed */
static _Atomic int peer_wins, peer_done;
static _Atomic uint64_t peer_seen; /* the last generation the peer tried */

/* The peer: claims whatever exposure is published, once per generation. */
static void *peer_main(void *arg)
{
    (void)arg;
    uint64_t last = 0;
    while (!atomic_load(&peer_done)) {
        uint64_t g = atomic_load(&race_gen);
        if (!g || g == last) {
            sched_yield(); /* both threads may share one core */
            continue;
        }
        last = g;
        if (proust__shm_claim_take(words, atomic_load(&race_slot), g))
            atomic_fetch_add(&peer_wins, 1);
        atomic_store(&peer_seen, g);
    }
    return NULL;
}

int main(void)
{
    proust__shm_claims_init(&table, words);
    uint32_t slot, slot2;
    uint64_t gen, gen2;

    /* owner first: the peer's claim fails, even after the slot is reused */
    EXPECT_TRUE(proust__shm_claim_new(&table, &slot, &gen));
    EXPECT_TRUE(proust__shm_claim_withdraw(&table, slot, gen, false));
    EXPECT_TRUE(!proust__shm_claim_take(words, slot, gen));
    EXPECT_TRUE(proust__shm_claim_new(&table, &slot2, &gen2));
    EXPECT_EQ(slot2, slot); /* last freed, first reused */
    EXPECT_TRUE(gen2 > gen);
    EXPECT_TRUE(!proust__shm_claim_take(words, slot, gen)); /* stale key */
    /* peer first: the owner's withdraw fails until forced, and only once */
    EXPECT_TRUE(proust__shm_claim_take(words, slot2, gen2));
    EXPECT_TRUE(!proust__shm_claim_take(words, slot2, gen2)); /* once */
    uint32_t before = table.nfree;
    EXPECT_TRUE(!proust__shm_claim_withdraw(&table, slot2, gen2, false));
    EXPECT_EQ(table.nfree, before); /* lost: the slot stays the writer's */
    EXPECT_TRUE(!proust__shm_claim_withdraw(&table, slot2, gen2, true));
    EXPECT_EQ(table.nfree, before + 1);
    /* again, or with another generation: not this exposure's word any
     * more; nothing claimed it for that key, nothing put back */
    EXPECT_TRUE(proust__shm_claim_withdraw(&table, slot2, gen2, true));
    EXPECT_TRUE(proust__shm_claim_withdraw(&table, slot2, gen2 + 7, false));
    EXPECT_EQ(table.nfree, before + 1);

    /* malformed keys from a peer */
    EXPECT_TRUE(!proust__shm_claim_take(words, PROUST__SHM_CLAIMS, 1));
    EXPECT_TRUE(!proust__shm_claim_take(words, 0xffffffffu, 1));
    EXPECT_TRUE(!proust__shm_claim_take(words, 0, 0));
    EXPECT_TRUE(!proust__shm_claim_take(words, 0, 1ull << 62));
    EXPECT_TRUE(!proust__shm_claim_withdraw(&table, PROUST__SHM_CLAIMS, 1, true));

    /* the table runs out, then every slot comes back once */
    static uint32_t slots[PROUST__SHM_CLAIMS];
    static uint64_t gens[PROUST__SHM_CLAIMS];
    static uint8_t seen[PROUST__SHM_CLAIMS];
    for (uint32_t i = 0; i < PROUST__SHM_CLAIMS; i++) {
        EXPECT_TRUE(proust__shm_claim_new(&table, &slots[i], &gens[i]));
        EXPECT_TRUE(slots[i] < PROUST__SHM_CLAIMS);
        EXPECT_EQ(seen[slots[i]]++, 0);
    }
    EXPECT_TRUE(!proust__shm_claim_new(&table, &slot, &gen));
    for (uint32_t i = 0; i < PROUST__SHM_CLAIMS; i++) {
        if (i % 2)
            EXPECT_TRUE(proust__shm_claim_take(words, slots[i], gens[i]));
        EXPECT_EQ(proust__shm_claim_withdraw(&table, slots[i], gens[i], true), !(i % 2));
    }
    EXPECT_EQ(table.nfree, PROUST__SHM_CLAIMS);

    /* owner and peer race for each exposure: exactly one wins */
    pthread_t th;
    EXPECT_EQ(pthread_create(&th, NULL, peer_main, NULL), 0);
    int owner_wins = 0;
    for (int r = 0; r < ROUNDS; r++) {
        EXPECT_TRUE(proust__shm_claim_new(&table, &slot, &gen));
        int before_wins = atomic_load(&peer_wins);
        atomic_store(&race_slot, slot);
        atomic_store(&race_gen, gen);
        if (r % 3 == 0) /* the peer goes first */
            while (atomic_load(&peer_seen) != gen)
                sched_yield();
        else /* a race: the peer, polling on another core, may get in */
            for (volatile int spin = 0; spin < (r % 7) * 60; spin++)
                ;
        bool won = proust__shm_claim_withdraw(&table, slot, gen, false);
        if (won) {
            owner_wins++;
        } else {
            /* the peer won: wait until it counted, then end the exposure */
            while (atomic_load(&peer_wins) == before_wins)
                sched_yield();
            EXPECT_TRUE(!proust__shm_claim_withdraw(&table, slot, gen, true));
        }
        atomic_store(&race_gen, 0);
    }
    atomic_store(&peer_done, 1);
    pthread_join(th, NULL);
    EXPECT_EQ(owner_wins + atomic_load(&peer_wins), ROUNDS);
    EXPECT_TRUE(atomic_load(&peer_wins) >= ROUNDS / 3); /* every round it went first */
    EXPECT_TRUE(owner_wins > 0);
    EXPECT_EQ(table.nfree, PROUST__SHM_CLAIMS);
    printf("shm claims: owner %d, peer %d of %d races\n", owner_wins, atomic_load(&peer_wins),
           ROUNDS);
    return 0;
}
