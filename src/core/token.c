/*
 * token.c — tokens name requests across the wire (rendezvous CTS, puts,
 * FIN, ACK). A token is (generation << 32 | slot): a stale or forged token
 * finds a generation mismatch and is refused, never dereferenced.
 * Slots live in fixed blocks that are never moved, so lookups from a driver
 * upcall take no lock.
 */
#include <stdlib.h>

#include "core/request.h"
#include "core/session.h"
#include "core/token.h"

#define BLOCK_SLOTS 1024u
#define MAX_BLOCKS 1024u

struct token_slot {
    _Atomic uint32_t gen; /* odd: in use */
    uint16_t seg;
    struct proust_request *_Atomic req;
    uint32_t next_free;
};

struct proust__token_table {
    proust__lock_t lock;
    struct token_slot *_Atomic blocks[MAX_BLOCKS];
    _Atomic uint32_t nslots;
    uint32_t free_head; /* slot index + 1, 0 = none */
};

static struct token_slot *slot_at(struct proust__token_table *t, uint32_t idx)
{
    uint32_t b = idx / BLOCK_SLOTS;
    if (b >= MAX_BLOCKS)
        return NULL;
    struct token_slot *blk = atomic_load_explicit(&t->blocks[b], memory_order_acquire);
    return blk ? &blk[idx % BLOCK_SLOTS] : NULL;
}

int proust__tokens_init(struct proust_session *s)
{
    struct proust__token_table *t = calloc(1, sizeof *t);
    if (!t)
        return PROUST_ERR_NOMEM;
    proust__lock_init(&t->lock);
    s->tokens = t;
    return PROUST_OK;
}

uint64_t proust__token_alloc(struct proust_session *s, struct proust_request *req, uint16_t seg)
{
    struct proust__token_table *t = s->tokens; /* made in proust_init */
    proust__lock(&t->lock);
    uint32_t idx;
    if (t->free_head) {
        idx = t->free_head - 1;
        t->free_head = slot_at(t, idx)->next_free;
    } else {
        idx = t->nslots;
        uint32_t b = idx / BLOCK_SLOTS;
        if (b >= MAX_BLOCKS) {
            proust__unlock(&t->lock);
            return 0;
        }
        if (!atomic_load(&t->blocks[b])) {
            struct token_slot *blk = calloc(BLOCK_SLOTS, sizeof *blk);
            if (!blk) {
                proust__unlock(&t->lock);
                return 0;
            }
            atomic_store_explicit(&t->blocks[b], blk, memory_order_release);
        }
        t->nslots++;
    }
    struct token_slot *sl = slot_at(t, idx);
    sl->seg = seg;
    atomic_store_explicit(&sl->req, req, memory_order_relaxed);
    uint32_t gen = atomic_load_explicit(&sl->gen, memory_order_relaxed) + 1; /* now odd */
    atomic_store_explicit(&sl->gen, gen, memory_order_release);
    proust__unlock(&t->lock);
    return ((uint64_t)gen << 32) | idx;
}

struct proust_request *proust__token_lookup(struct proust_session *s, uint64_t token,
                                            uint16_t *seg)
{
    struct proust__token_table *t = s->tokens; /* made in proust_init */
    uint32_t gen = (uint32_t)(token >> 32), idx = (uint32_t)token;
    if (!t || !(gen & 1u))
        return NULL;
    struct token_slot *sl;
    if (idx >= atomic_load_explicit(&t->nslots, memory_order_acquire) || !(sl = slot_at(t, idx)))
        return NULL;
    if (atomic_load_explicit(&sl->gen, memory_order_acquire) != gen)
        return NULL;
    struct proust_request *req = atomic_load_explicit(&sl->req, memory_order_relaxed);
    if (seg)
        *seg = sl->seg;
    /* re-check: the slot was not recycled while we read it */
    if (atomic_load_explicit(&sl->gen, memory_order_acquire) != gen)
        return NULL;
    return req;
}

void proust__token_release(struct proust_session *s, uint64_t token)
{
    struct proust__token_table *t = s->tokens; /* made in proust_init */
    uint32_t gen = (uint32_t)(token >> 32), idx = (uint32_t)token;
    if (!t)
        return;
    proust__lock(&t->lock);
    struct token_slot *sl = slot_at(t, idx);
    if (sl && idx < t->nslots && atomic_load(&sl->gen) == gen && (gen & 1u)) {
        atomic_store_explicit(&sl->gen, gen + 1, memory_order_release); /* even: free */
        atomic_store_explicit(&sl->req, NULL, memory_order_relaxed);
        sl->next_free = t->free_head;
        t->free_head = idx + 1;
    }
    proust__unlock(&t->lock);
}

void proust__tokens_destroy(struct proust_session *s)
{
    struct proust__token_table *t = s->tokens;
    if (!t)
        return;
    for (uint32_t b = 0; b < MAX_BLOCKS; b++)
        free(atomic_load(&t->blocks[b]));
    free(t);
    s->tokens = NULL;
}
