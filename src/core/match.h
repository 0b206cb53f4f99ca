/*
 * match.h — receive-side matching: stripes of gates under one lock each,
 * posted receives and unexpected messages per gate, ANY_SOURCE across them
 * (match.c, posted_queue.c, unexp_queue.c, unexp_pool.c).
 */
#ifndef PROUST_CORE_MATCH_H
#define PROUST_CORE_MATCH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/lock.h"
#include "core/gate.h"
#include "proust.h"

struct proust_session;
struct proust_request;
struct proust__inmsg;
struct proust__pool_link;

/* Receive-side matching is locked per stripe of gates (gate i belongs to
 * stripe i % nstripes, PROUST_MATCH_STRIPES): threads receiving from
 * different peers, and the poller matching one peer's packets while another
 * thread posts for a second peer, do not meet. What spans peers
 * (ANY_SOURCE receives, probes of any source) takes every stripe, in index
 * order, so the count stays bounded. */
#define PROUST__UNEXP_CLASSES 8 /* unexp_pool.c: 1 KiB .. 128 KiB */
struct proust__match_stripe {
    _Alignas(64) proust__lock_t lock;
    struct proust__inmsg *inmsg_cache; /* free descriptor blocks */
    unsigned inmsg_cached, inmsg_cache_max; /* beyond max: borrowed (below) */
    _Atomic unsigned *inmsg_borrowed;       /* the session's count of those */
    _Atomic size_t *idle_pulled;            /* the session's pulled bytes (unexp_pull.c) */
    /* buffers for unexpected eager bytes (unexp_pool.c) */
    struct proust__pool_link *pool[PROUST__UNEXP_CLASSES];
    size_t pool_bytes, pool_budget;
};

/* ---- matching (match.c) ---------------------------------------------------- */
int proust__match_init(struct proust_session *s);  /* after gates_init */
void proust__match_destroy(struct proust_session *s);
static inline void proust__match_lock(struct proust__gate *g)
{
    proust__lock(&g->ms->lock);
}
static inline void proust__match_unlock(struct proust__gate *g)
{
    proust__unlock(&g->ms->lock);
}
/* Every stripe, in index order (ANY_SOURCE posts and probes, failures). */
void proust__match_lock_all(struct proust_session *s);
void proust__match_unlock_all(struct proust_session *s);
/* What matching against `source` needs: its gate's stripe, or every one
 * for PROUST_ANY_SOURCE. */
void proust__match_lock_source(struct proust_session *s, int source);
void proust__match_unlock_source(struct proust_session *s, int source);
/* Queue a posted receive: its gate's stripe held, or every stripe for
 * ANY_SOURCE (any_lock is taken here). */
void proust__posted_append(struct proust_session *s, struct proust_request *req);
/* Remove a posted receive (same locks as posting it). */
void proust__posted_remove(struct proust_session *s, struct proust_request *req);
/* The earliest posted receive matching (source, tag), removed from its
 * queue; source's stripe held. */
struct proust_request *proust__posted_take(struct proust_session *s, int source,
                                           proust_tag_t tag);
/* A gate's own posted queue (posted_queue.c), its stripe held: in posting
 * order, indexed by tag once a scan of it runs long. */
void proust__gate_posted_add(struct proust__gate *g, struct proust_request *req);
void proust__gate_posted_del(struct proust__gate *g, struct proust_request *req);
/* The earliest receive of g's queue accepting `tag` (left queued), or NULL. */
struct proust_request *proust__gate_posted_find(struct proust__gate *g, proust_tag_t tag);
void proust__gate_posted_free(struct proust__gate *g); /* the index, at teardown */
/* A gate's own unexpected messages (unexp_queue.c), its stripe held: in
 * arrival order, indexed by tag once a scan of it runs long. */
void proust__gate_unexp_add(struct proust__gate *g, struct proust__inmsg *m);
void proust__gate_unexp_del(struct proust__gate *g, struct proust__inmsg *m);
/* The earliest message of g's queue accepted by (tag, mask), or NULL. */
struct proust__inmsg *proust__gate_unexp_find(struct proust__gate *g, proust_tag_t tag,
                                              proust_tag_t mask);
void proust__gate_unexp_free(struct proust__gate *g); /* the index, at teardown */
/* The earliest unexpected message matching (source, tag, mask), removed if
 * `take`; held: what proust__match_lock_source(source) takes. */
struct proust__inmsg *proust__unexpected_find(struct proust_session *s, int source,
                                              proust_tag_t tag, proust_tag_t mask, bool take);
/* Its source's stripe held. */
void proust__unexpected_append(struct proust_session *s, struct proust__inmsg *m);
/* Take the unexpected message `seq` (with that tag) of gate g out of
 * matching if all of it has arrived; NULL otherwise (g's stripe held). */
struct proust__inmsg *proust__unexpected_take_seq(struct proust_session *s,
                                                  struct proust__gate *g, uint32_t seq,
                                                  proust_tag_t tag);
/* A descriptor block from / back to a gate's stripe cache (stripe held). */
struct proust__inmsg *proust__inmsg_block_get(struct proust__gate *g);
void proust__inmsg_block_put(struct proust__gate *g, struct proust__inmsg *m);
/* unexp_pool.c: buffers for unexpected eager bytes, per stripe (its lock
 * held); put with the length given to get; ms NULL: just free */
void proust__unexp_pool_init(struct proust__match_stripe *ms, int nstripes);
void *proust__unexp_buf_get(struct proust__match_stripe *ms, size_t len);
void proust__unexp_buf_put(struct proust__match_stripe *ms, void *buf, size_t len);
void proust__unexp_pool_drain(struct proust__match_stripe *ms);
static inline bool proust__tag_match(proust_tag_t msg, proust_tag_t want, proust_tag_t mask)
{
    return ((msg ^ want) & mask) == 0;
}

#endif
