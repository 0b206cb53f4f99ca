/*
 * unexp_pull.c — an idle process takes in the rendezvous messages that
 * wait unexpected, so that their senders complete.
 *
 * A rendezvous send completes when its receiver has the data, and the
 * receiver pulls it once a receive matches. Ranks that Isend large
 * messages, receive them with ANY_SOURCE and then Waitall their sends can
 * end a round with two ranks each in Waitall while the other's message
 * waits unexpected at both (a receive took a later round's message from a
 * third rank instead): neither send completes, and neither rank posts the
 * receive that would complete it (issue 38: 8 ranks x 4 threads). MPI
 * calls such a program unsafe, as it relies on buffering; Open MPI hangs
 * on it too, but MPICH buffers unexpected messages of any size and runs it.
 *
 * So when a process is idle -- a wait that spun its window and is about to
 * sleep, or a test loop that found nothing -- it pulls every unexpected
 * rendezvous segment it can (the rail reads the sender's memory: shm,
 * self) into a buffer of its own, up to PROUST_IDLE_PULL_BYTES in all,
 * marks the segment eager and sends the sender its FIN: the receive that
 * comes later copies it like an eager message. An idle core has nothing
 * better to do; the cost is that later memcpy. Synchronous sends are left
 * alone (their completion must mean that a receive matched), and so are
 * rails that cannot read the peer (tcp answers an RTS with puts into a
 * matched receive).
 *
 * The copy runs under the gate's match stripe, which keeps the message
 * where it is in the matching order; it is bounded by one message, and
 * only an idle process pays for it.
 */
#include "core/engine.h"

#define FINS_MAX 32 /* FINs collected under one stripe, sent after it */

/* Pull m's readable rendezvous segments (g's stripe held); their senders'
 * tokens go to fins. False when the budget, memory or fins ran out. */
static bool pull_message(struct proust_session *s, struct proust__gate *g,
                         struct proust__inmsg *m, uint64_t *fins, unsigned *nfin)
{
    for (uint16_t i = 0; i < m->nseg; i++) {
        struct proust__inseg *sg = &m->seg[i];
        if (sg->state != PROUST__SEG_RTS || sg->key_len == 0)
            continue;
        if (*nfin == FINS_MAX)
            return false;
        size_t used = atomic_load_explicit(&s->idle_pulled, memory_order_relaxed);
        if (used >= s->idle_pull_budget || sg->len > s->idle_pull_budget - used)
            return false;
        void *buf = proust__unexp_buf_get(g->ms, sg->len);
        if (!buf)
            return false;
        if (g->rail->ops->get(g->rail, g->peer, sg->key, sg->key_len, 0, buf, sg->len) !=
            PROUST_OK) {
            /* the sender is gone or its buffer unreadable: the receive's own
             * get will say so when one matches */
            proust__unexp_buf_put(g->ms, buf, sg->len);
            continue;
        }
        atomic_fetch_add_explicit(&s->idle_pulled, sg->len, memory_order_relaxed);
        sg->data = buf;
        sg->pulled = true;
        sg->state = PROUST__SEG_EAGER;
        fins[(*nfin)++] = sg->sender_token;
    }
    return true;
}

int proust__idle_pull(struct proust_session *s)
{
    if (!s->idle_pull_budget ||
        !atomic_exchange_explicit(&s->unexp_rts, 0, memory_order_acquire))
        return 0;
    int pulled = 0;
    bool left = false; /* something stays to pull when the budget frees up */
    PROUST__COARSE_ENTER(&s->prog); /* a progress pass, for the coarse mode */
    for (int r = 0; r < s->size; r++) {
        struct proust__gate *g = &s->gates[r];
        if (!g->rail || !g->rail->ops->get ||
            atomic_load_explicit(&g->failed, memory_order_acquire))
            continue;
        uint64_t fins[FINS_MAX];
        unsigned nfin = 0;
        proust__match_lock(g);
        for (struct proust__inmsg *m = g->unexp_head; m && !left; m = m->next)
            if (!(m->flags & PROUST__CF_RDV_SYNC))
                left = !pull_message(s, g, m, fins, &nfin);
        proust__match_unlock(g);
        for (unsigned i = 0; i < nfin; i++)
            proust__send_control(s, r, PROUST__CH_FIN, fins[i], NULL, 0);
        pulled += (int)nfin;
        if (left)
            break;
    }
    PROUST__COARSE_LEAVE(&s->prog);
    if (left)
        atomic_fetch_add_explicit(&s->unexp_rts, 1, memory_order_relaxed);
    return pulled;
}
