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
 * sleep, or a test loop that found nothing -- it takes in every unexpected
 * rendezvous segment, up to PROUST_IDLE_PULL_BYTES in all, into a buffer
 * of its own: where the rail reads the sender's memory (shm, self) it
 * copies the data at once, marks the segment eager and sends the sender
 * its FIN; elsewhere (tcp, or ofi over tcp when the sender does not wait
 * in a blocking send) it answers the RTS with a CTS naming a receive
 * of its own (a "holder"), the segment is PULLING until the puts land
 * (recv_path.c: then eager, or handed to a receive that matched it
 * meanwhile). A receive that comes later copies it like an eager message.
 * An idle core has nothing better to do; the cost is that later memcpy.
 * Synchronous sends are left alone: their completion must mean that a
 * receive matched.
 *
 * The copy runs under the gate's match stripe, which keeps the message
 * where it is in the matching order; it is bounded by one message, and
 * only an idle process pays for it. An arrival that leaves such a message
 * wakes a sleeping waiter of the process: the thread that polled it in
 * may be busy, and the idle one must pull.
 */
#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"

#define ANSWERS_MAX 32 /* answers collected under one stripe, sent after it */

/* What a pulled segment's sender is told: FIN (we have read it), or a CTS
 * naming our holder (put it there). */
struct answer {
    uint64_t sender_token;
    struct proust_request *holder; /* NULL: FIN */
    size_t len;
};

/* A receive of our own for segment i of m, into buf (g's stripe held). */
static struct proust_request *holder_new(struct proust_session *s, struct proust__gate *g,
                                         struct proust__inmsg *m, uint16_t i, void *buf,
                                         size_t len)
{
    struct proust_request *h = proust__request_alloc(s, PROUST__REQ_RECV);
    if (!h)
        return NULL;
    proust__recv_fill(h, buf, len, g->peer, 0, 0);
    h->status.source = g->peer; /* the puts' check */
    h->remote_owed = 1;
    atomic_store_explicit(&h->seg0_left, len, memory_order_relaxed); /* the puts count down */
    atomic_store_explicit(&h->pending, 1, memory_order_relaxed);
    h->held_for = m;
    h->held_seg = i;
    return h;
}

/* May m's segments be read at once? Over a rail whose peer serves reads
 * only while it polls (libfabric over tcp), only a sender waiting in a
 * blocking send does: one that computes would keep us in get(), under the
 * stripe, until it polls again (or for the rail's give-up time). */
static bool read_now(const proust__rail_t *rail, const struct proust__inmsg *m)
{
    return !(rail->caps.flags & PROUST__RAIL_GET_WHILE_WAITED) || (m->flags & PROUST__CF_WAITS);
}

/* Pull m's rendezvous segments (g's stripe held): read those the rail can
 * read now, ask for the others; the answers go to ans. False when the
 * budget, memory or ans ran out. */
static bool pull_message(struct proust_session *s, struct proust__gate *g,
                         struct proust__inmsg *m, struct answer *ans, unsigned *nans)
{
    for (uint16_t i = 0; i < m->nseg; i++) {
        struct proust__inseg *sg = &m->seg[i];
        if (sg->state != PROUST__SEG_RTS)
            continue;
        if (*nans == ANSWERS_MAX)
            return false;
        size_t used = atomic_load_explicit(&s->idle_pulled, memory_order_relaxed);
        if (used >= s->idle_pull_budget || sg->len > s->idle_pull_budget - used)
            return false;
        void *buf = proust__unexp_buf_get(g->ms, sg->len);
        if (!buf)
            return false;
        struct answer *a = &ans[*nans];
        *a = (struct answer){.sender_token = sg->sender_token, .len = sg->len};
        if (sg->key_len && read_now(g->rail, m)) {
            if (g->rail->ops->get(g->rail, g->peer, sg->key, sg->key_len, 0, buf, sg->len) !=
                PROUST_OK) {
                /* the sender is gone or its buffer unreadable: the receive's
                 * own get will say so when one matches */
                proust__unexp_buf_put(g->ms, buf, sg->len);
                continue;
            }
            sg->state = PROUST__SEG_EAGER;
        } else { /* no get (tcp), or not now: the sender puts it into our buffer */
            if (!(a->holder = holder_new(s, g, m, i, buf, sg->len))) {
                proust__unexp_buf_put(g->ms, buf, sg->len);
                return false;
            }
            sg->state = PROUST__SEG_PULLING;
            m->nseg_seen--; /* whole again when it lands */
        }
        atomic_fetch_add_explicit(&s->idle_pulled, sg->len, memory_order_relaxed);
        sg->data = buf;
        sg->pulled = true;
        (*nans)++;
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
        if (!g->rail || atomic_load_explicit(&g->failed, memory_order_acquire))
            continue;
        struct answer ans[ANSWERS_MAX];
        unsigned nans = 0;
        proust__match_lock(g);
        for (struct proust__inmsg *m = g->unexp_head; m && !left; m = m->next)
            if (!(m->flags & PROUST__CF_RDV_SYNC))
                left = !pull_message(s, g, m, ans, &nans);
        proust__match_unlock(g);
        for (unsigned i = 0; i < nans; i++) {
            if (ans[i].holder)
                proust__send_cts(s, r, ans[i].holder, 0, ans[i].sender_token, ans[i].len);
            else
                proust__send_control(s, r, PROUST__CH_FIN, ans[i].sender_token, NULL, 0);
        }
        pulled += (int)nans;
        if (left)
            break;
    }
    PROUST__COARSE_LEAVE(&s->prog);
    if (left)
        atomic_fetch_add_explicit(&s->unexp_rts, 1, memory_order_relaxed);
    return pulled;
}
