/*
 * offer.c — receiver offers: the receiver of a large nonblocking receive
 * tells the sender where the data goes, so a sender waiting in its send
 * (or posting it later) writes the message straight into the receive
 * buffer while the receiver computes. Without it the message waits for the
 * receiver's next call into the library to answer the RTS.
 *
 * Matching stays the receiver's: an offer names the receiver's next
 * expected sequence number, and is made only when the receive is the first
 * one posted for that source and no ANY_SOURCE receive is posted, so the
 * receive will match the first message numbered from there on whose tag it
 * accepts. The sender uses the offer for exactly that message, if it is a
 * one-segment rendezvous whose RTS waits for its answer: among the last
 * PROUST__SENT_HISTORY messages it sent, or the next one it sends with an
 * accepted tag. Anything else is declined (OFFER_NO).
 *
 * Who moves the data is decided by the buffer's claim word (the rail's
 * expose_once / withdraw): the sender claims it before it writes; the
 * receiver takes it back when the RTS matches, or on cancel. The receiver
 * that takes it back answers the RTS (get or CTS) at once, or cancels at
 * once: it never waits for a sender that computes or sits in finalize. The
 * one that loses waits only for a write under way, announced by DONE
 * (which may overtake the RTS: control chunks go first in a packet, so it
 * is remembered). A write that fails after its claim is announced by
 * OFFER_NO: the receiver answers the RTS then.
 *
 * A sender that waits for a message from the receiver itself declines (it
 * is in an exchange, see proust__offer_worth_using), as does one whose sends
 * to other peers wait too (a fan-out: the receivers pull side by side), and
 * says so in its OFFER_NO; the receiver then posts its next receives from that peer
 * without offering, 4 of them after the first such answer, twice as many
 * after each next one up to OFFER_PAUSE_MAX, and offers again after the
 * pause: a halo loop costs one offer in that many rounds instead of an
 * OFFER, an OFFER_NO and an exposure every round (which cost an exchange
 * a fifth of its bandwidth; docs/PERFORMANCE.md, "Figures behind the code"),
 * and a peer that turns into a one-way
 * sender gets offers again within that many receives. An offer used
 * (DONE) ends the pauses.
 *
 * Locks: the receiver's offer state is under its gate's match stripe; the
 * sender's pending offer under the gate lock. Writes run with no lock.
 */
#include <stdlib.h>
#include <string.h>

#include "core/gate.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"
#include "core/token.h"

#define OFFER_PAUSE_FIRST 4u
#define OFFER_PAUSE_MAX 64u /* receives; see the comment above */

/* ---- receiver side ------------------------------------------------------ */

bool proust__offer_prepare(struct proust_session *s, struct proust_request *req,
                           struct proust__offer_msg *msg)
{
    if (!s->offer_bytes || req->peer == PROUST_ANY_SOURCE || req->peer == s->rank ||
        req->nseg != 1 || req->total < s->offer_bytes)
        return false;
    struct proust__gate *g = &s->gates[req->peer];
    proust__rail_t *rail = g->rail;
    /* first in its queue, and no ANY_SOURCE receive: it takes the next
     * message its tag accepts (zero any_posted is final under the stripe) */
    if (!rail || !rail->ops->write || !rail->ops->expose_once || !rail->ops->withdraw ||
        g->posted_head != req || atomic_load_explicit(&s->any_posted, memory_order_relaxed))
        return false;
    if (g->offer_skip) { /* the peer declined for an exchange: pause */
        g->offer_skip--;
        return false;
    }
    struct proust__offer *o = calloc(1, sizeof *o);
    if (!o)
        return false;
    int klen = rail->ops->expose_once(rail, req->seg0.iov_base, req->seg0.iov_len, msg->key,
                                      sizeof msg->key);
    if (klen <= 0) {
        free(o);
        return false;
    }
    o->own_key_len = (uint32_t)klen;
    memcpy(o->own_key, msg->key, (size_t)klen);
    o->token = proust__token_alloc(s, req, 0);
    if (!o->token) {
        rail->ops->withdraw(rail, o->own_key, o->own_key_len, 1);
        free(o);
        return false;
    }
    req->offer = o;
    msg->token = o->token;
    msg->seq = g->recv_seq;
    msg->tag = req->tag;
    msg->body = (struct proust__offer_body){.mask = req->mask, .cap = req->seg0.iov_len,
                                            .key_len = (uint32_t)klen};
    return true;
}

void proust__offer_send(struct proust_session *s, int peer, const struct proust__offer_msg *msg)
{
    uint8_t body[sizeof msg->body + PROUST__MAX_KEY];
    memcpy(body, &msg->body, sizeof msg->body);
    memcpy(body + sizeof msg->body, msg->key, msg->body.key_len);
    if (proust__send_control_ext(s, peer, PROUST__CH_OFFER, 0, msg->token, msg->seq, msg->tag, body,
                                 sizeof msg->body + msg->body.key_len) != PROUST_OK)
        /* never sent: as if the sender had declined it */
        proust__recv_on_offer_no(s, peer, msg->token, false);
}

/* Take the buffer back from the sender: 1 if it had not claimed it (it
 * never will now), 0 if it is writing; with `force`, taken back anyway
 * (its write was announced, or it is gone). */
static int offer_withdraw(struct proust_session *s, struct proust_request *req,
                          struct proust__offer *o, int force)
{
    if (!o->own_key_len)
        return 1;
    proust__rail_t *rail = s->gates[req->peer].rail;
    int won = rail->ops->withdraw(rail, o->own_key, o->own_key_len, force);
    if (won != 0 || force)
        o->own_key_len = 0;
    return won < 0 ? 1 : won; /* no claim to take: nobody can write */
}

void proust__offer_drop(struct proust_session *s, struct proust_request *req)
{
    struct proust__offer *o = req->offer;
    if (!o)
        return;
    req->offer = NULL;
    if (o->held)
        atomic_fetch_sub_explicit(&s->offers_writing, 1, memory_order_relaxed);
    offer_withdraw(s, req, o, 1);
    proust__token_release(s, o->token);
    free(o);
}

bool proust__offer_hold(struct proust_session *s, struct proust_request *req, int act,
                        uint64_t sender_token, size_t accepted, const uint8_t *key,
                        uint32_t key_len, bool *landed)
{
    struct proust__offer *o = req->offer;
    *landed = false;
    if (!o)
        return false;
    if (o->done_early) { /* the sender wrote it already */
        *landed = true;
        return true;
    }
    if (offer_withdraw(s, req, o, 0)) {
        /* the sender had not started (it computes, or has not seen the
         * offer yet): answer the RTS now; its later claim fails */
        proust__offer_drop(s, req);
        return false;
    }
    o->held = true; /* it is writing: DONE (or OFFER_NO) comes */
    atomic_fetch_add_explicit(&s->offers_writing, 1, memory_order_relaxed);
    o->act = (uint8_t)act;
    o->sender_token = sender_token;
    o->accepted = accepted;
    o->key_len = key_len;
    if (key_len)
        memcpy(o->key, key, key_len);
    return true;
}

/* The offer `token` names, if `req` (found by the token, maybe reused since)
 * still carries it; stripe held. */
static struct proust__offer *offer_named(struct proust_request *req, int peer, uint64_t token)
{
    if (req->kind != PROUST__REQ_RECV || req->peer != peer || !req->offer ||
        req->offer->token != token)
        return NULL;
    return req->offer;
}

bool proust__offer_on_done(struct proust_session *s, int peer, uint64_t token)
{
    uint16_t seg;
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req)
        return false;
    struct proust__gate *g = &s->gates[peer];
    proust__match_lock(g);
    struct proust__offer *o = offer_named(req, peer, token);
    if (!o) {
        proust__match_unlock(g);
        return false;
    }
    g->offer_backoff = 0; /* used: offers to that peer pay */
    if (!o->held) { /* overtook its RTS: land when the RTS matches */
        o->done_early = true;
        proust__match_unlock(g);
        return true;
    }
    proust__offer_drop(s, req);
    proust__match_unlock(g);
    proust__segment_landed(s, peer, req);
    return true;
}

void proust__recv_on_offer_no(struct proust_session *s, int peer, uint64_t token, bool exchange)
{
    struct proust__gate *g = &s->gates[peer];
    if (exchange) {
        proust__match_lock(g);
        unsigned pause = g->offer_backoff ? 2u * g->offer_backoff : OFFER_PAUSE_FIRST;
        g->offer_backoff = (uint16_t)(pause < OFFER_PAUSE_MAX ? pause : OFFER_PAUSE_MAX);
        g->offer_skip = g->offer_backoff;
        proust__match_unlock(g);
    }
    uint16_t seg;
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req)
        return; /* the receive was matched by a message sent before the offer */
    proust__match_lock(g);
    struct proust__offer *o = offer_named(req, peer, token);
    if (!o) {
        proust__match_unlock(g);
        return;
    }
    struct proust__offer held = *o;
    proust__offer_drop(s, req);
    proust__match_unlock(g);
    if (held.held && held.act == PROUST__OFFER_ACT_GET) {
        /* polling: copy after the pass, as run_actions does; never as a
         * PUSH (sender_waits false): the sender's write just failed */
        if (g->rail->ops->write)
            proust__queue_get(s, peer, req, 0, held.sender_token, held.accepted, held.key,
                              held.key_len, false);
        else
            proust__do_get(s, peer, req, 0, held.sender_token, held.accepted, held.key,
                           held.key_len);
    } else if (held.held) {
        proust__send_cts(s, peer, req, 0, held.sender_token, held.accepted);
    }
}

bool proust__offer_withdraw(struct proust_session *s, struct proust_request *req,
                            uint64_t *token)
{
    struct proust__offer *o = req->offer;
    if (!offer_withdraw(s, req, o, 0))
        return false;
    *token = o->token;
    proust__offer_drop(s, req);
    return true;
}

/* ---- sender side ------------------------------------------------------------ */

/* Sends of ours wait for the answers of peers other than g's: a fan-out
 * (the root of a scatter or a broadcast). Sends waiting are counted per
 * session; g's own are walked under its lock (a window of them at most). */
static bool fans_out(struct proust_session *s, struct proust__gate *g)
{
    int all = atomic_load_explicit(&s->sends_waiting, memory_order_relaxed), mine = 0;
    if (all <= 1)
        return false;
    proust__lock(&g->lock);
    for (struct proust_request *r = g->waiting_head; r && mine < all; r = r->next)
        mine++;
    proust__unlock(&g->lock);
    return mine < all;
}

/* Write into the peer's offered receive only when we do not wait for that
 * peer ourselves. A rank that has a receive posted from the peer is in an
 * exchange with it (Irecv + Isend + Waitall, a halo): both will be in the
 * library, where the receiver pulls at once; and whether an offer arrives
 * before the send or after its RTS is a coin toss there, so the copy into
 * one buffer went sometimes by our write, sometimes by the peer's read,
 * and its cache lines bounced between the two cores (an exchange a third
 * slower than with reads alone; docs/PERFORMANCE.md, "Figures behind the code"). A one-way sender
 * (a blocking send to a rank that computes) still writes.
 * Nor while our sends to other peers wait too: we would copy every block
 * of a fan-out ourselves, one after the other, where the receivers pull
 * theirs side by side (8 ranks on 2 cores, MPI_Iscatter of 128 KiB - 1 MiB
 * blocks: half the time, Open MPI's; docs/PERFORMANCE.md, issue 43). */
bool proust__offer_worth_using(struct proust_session *s, int peer)
{
    if (atomic_load_explicit(&s->any_posted, memory_order_relaxed))
        return false;
    struct proust__gate *g = &s->gates[peer];
    if (fans_out(s, g))
        return false;
    proust__match_lock(g);
    bool expecting = g->posted_head != NULL;
    proust__match_unlock(g);
    return !expecting;
}

void proust__send_on_offer(struct proust_session *s, int peer, const struct proust__chunk_hdr *h,
                           const uint8_t *body)
{
    struct proust__gate *g = &s->gates[peer];
    struct proust__offer_body ob;
    memcpy(&ob, body, sizeof ob);
    /* re-read from shared memory: check again; no write, no offer */
    if (ob.key_len == 0 || ob.key_len > PROUST__MAX_KEY || sizeof ob + ob.key_len != h->len)
        return;
    if (!g->rail->ops->write) {
        proust__send_control(s, peer, PROUST__CH_OFFER_NO, h->total, NULL, 0);
        return;
    }
    bool worth = true;
    struct proust__offer_in o = {.seq = h->seq, .tag = h->tag, .mask = ob.mask, .cap = ob.cap,
                                 .token = h->total, .key_len = ob.key_len};
    memcpy(o.key, body + sizeof ob, ob.key_len); /* key_len checked by the wire reader */
    uint64_t use = 0;
    bool keep = false;
    proust__lock(&g->lock);
    /* the messages sent since the receive was posted, oldest first: the
     * first its tag accepts is the one it will match */
    uint32_t since = g->send_seq - o.seq;
    keep = since <= PROUST__SENT_HISTORY;
    for (uint32_t i = 0; keep && i < since; i++) {
        const struct proust__sent *e = &g->sent[(o.seq + i) % PROUST__SENT_HISTORY];
        if (e->seq != o.seq + i) {
            keep = false; /* not remembered: cannot tell */
        } else if (proust__tag_match(e->tag, o.tag, o.mask)) {
            use = e->rts_token; /* 0 (eager, pack): declined */
            keep = false;
        }
    }
    /* none matched: the next send decides */
    if (keep && !g->offer_in && o.cap && (g->offer_in = malloc(sizeof o)))
        *g->offer_in = o;
    else
        keep = false;
    proust__unlock(&g->lock);
    if (use && (worth = proust__offer_worth_using(s, peer)))
        proust__offer_queue_use(s, peer, use, &o);
    else if (!keep)
        proust__offer_decline(s, peer, &o, !worth);
}

void proust__send_on_revoke(struct proust_session *s, int peer, uint64_t token)
{
    struct proust__gate *g = &s->gates[peer];
    struct proust__offer_in *o = NULL;
    proust__lock(&g->lock);
    if (g->offer_in && g->offer_in->token == token) {
        o = g->offer_in;
        g->offer_in = NULL;
    }
    proust__unlock(&g->lock);
    free(o); /* not used; the receiver took its buffer back and waits for nothing */
}

int proust__offer_check_send(struct proust__gate *g, struct proust_request *req, uint32_t seq,
                             uint64_t rts_token, struct proust__offer_in **taken)
{
    struct proust__offer_in *o = g->offer_in;
    if (!proust__tag_match(req->tag, o->tag, o->mask) || (int32_t)(seq - o->seq) < 0)
        return 0;
    g->offer_in = NULL;
    *taken = o;
    return req->nseg == 1 && rts_token ? 1 : -1;
}

void proust__offer_decline(struct proust_session *s, int peer, struct proust__offer_in *o,
                           bool exchange)
{
    proust__send_control_ext(s, peer, PROUST__CH_OFFER_NO, exchange ? PROUST__CF_EXCHANGE : 0,
                             o->token, 0, 0, NULL, 0);
}

void proust__offer_use(struct proust_session *s, int peer, uint64_t sender_token,
                       struct proust__offer_in *o)
{
    struct proust__gate *g = &s->gates[peer];
    uint16_t seg;
    proust__lock(&g->lock);
    struct proust_request *req = proust__token_lookup(s, sender_token, &seg);
    bool ok = req && req->kind == PROUST__REQ_SEND && req->peer == peer && seg == 0 &&
              req->nseg == 1 && req->where == PROUST__IN_WAITING;
    size_t n = ok ? (req->segs[0].iov_len < o->cap ? req->segs[0].iov_len : o->cap) : 0;
    const void *data = ok ? req->segs[0].iov_base : NULL; /* req may be gone after the lock */
    proust__unlock(&g->lock);
    /* the send cannot complete meanwhile: the receiver answers its RTS
     * only after its claim, which fails once ours succeeded */
    int rc = n && g->rail->ops->write
                 ? g->rail->ops->write(g->rail, peer, o->key, o->key_len, 0, data, n)
                 : PROUST_ERR_NOT_SUPPORTED;
    if (rc == PROUST_ERR_CANCELED)
        return; /* the receiver took it back first and answers the RTS */
    if (rc != PROUST_OK) {
        proust__offer_decline(s, peer, o, false); /* the receiver answers the RTS instead */
        return;
    }
    proust__lock(&g->lock);
    req = proust__answered_send(s, g, sender_token, n, &seg);
    proust__unlock(&g->lock);
    proust__send_control(s, peer, PROUST__CH_DONE, o->token, NULL, 0);
    if (req)
        proust__request_event_done(req);
}

/* ---- uses waiting for the next progress pass -------------------------------- */

struct proust__pending_use {
    struct proust__pending_use *next;
    int peer;
    uint64_t sender_token;
    struct proust__offer_in o;
};

void proust__offer_queue_use(struct proust_session *s, int peer, uint64_t sender_token,
                             const struct proust__offer_in *o)
{
    struct proust__pending_use *u = malloc(sizeof *u);
    if (!u) { /* no memory to defer: write now */
        struct proust__offer_in copy = *o;
        proust__offer_use(s, peer, sender_token, &copy);
        return;
    }
    *u = (struct proust__pending_use){.peer = peer, .sender_token = sender_token, .o = *o};
    proust__lock(&s->gets_lock);
    if (s->uses_tail)
        s->uses_tail->next = u;
    else
        atomic_store_explicit(&s->uses_head, u, memory_order_relaxed);
    s->uses_tail = u;
    proust__unlock(&s->gets_lock);
    proust__threads_kick(&s->prog); /* a progress thread may do it while we compute */
}

int proust__offer_uses_run(struct proust_session *s)
{
    proust__lock(&s->gets_lock);
    struct proust__pending_use *u = atomic_load_explicit(&s->uses_head, memory_order_relaxed);
    atomic_store_explicit(&s->uses_head, NULL, memory_order_relaxed);
    s->uses_tail = NULL;
    proust__unlock(&s->gets_lock);
    int n = 0;
    while (u) {
        struct proust__pending_use *next = u->next;
        proust__offer_use(s, u->peer, u->sender_token, &u->o);
        free(u);
        u = next;
        n++;
    }
    return n;
}

void proust__offer_uses_forget(struct proust_session *s, int peer)
{
    proust__lock(&s->gets_lock);
    struct proust__pending_use *u = atomic_load_explicit(&s->uses_head, memory_order_relaxed);
    struct proust__pending_use *keep = NULL, *last = NULL;
    while (u) {
        struct proust__pending_use *next = u->next;
        if (peer < 0 || u->peer == peer) {
            free(u);
        } else {
            u->next = NULL;
            if (last)
                last->next = u;
            else
                keep = u;
            last = u;
        }
        u = next;
    }
    atomic_store_explicit(&s->uses_head, keep, memory_order_relaxed);
    s->uses_tail = last;
    proust__unlock(&s->gets_lock);
}
