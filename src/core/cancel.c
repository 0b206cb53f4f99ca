/*
 * cancel.c — cancelling a send.
 *
 * A send leaves at once (eager) or announces itself (RTS), so cancelling
 * it is a question for the receiver: the sender queues a CANCEL chunk
 * naming the message (its sequence number and tag) behind the message's own
 * chunks, and the receiver drops the message if it is still unexpected
 * there, whole, and answers CANCEL_ANS (CF_CANCELLED if it dropped it).
 * A message already matched, probed away (improbe) or not all arrived is
 * left alone: the cancellation fails and the send completes normally, as
 * MPI allows.
 *
 * The request is not finished before the answer, whether the send itself
 * completed before (an eager message) or after (a rendezvous the receiver
 * now never answers): RF_CANCELING keeps waiters out. The answer sets
 * RF_ANSWERED, completion sets RF_DONE; whichever of the two comes second
 * finishes the request (cancel_finish), so neither waits for the other.
 * A peer that fails answers nothing: gate_fail answers for it ("not
 * cancelled"), so no wait hangs.
 */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "core/cancel.h"
#include "core/chunk.h"
#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"
#include "core/token.h"

/* The token segment that names a cancellation (never a real segment). */
#define SEG_CANCEL 0xFFFFu

/* The message's sequence number: every chunk of it carries the same. */
static uint32_t message_seq(const struct proust_request *req)
{
    return req->nseg == 1 ? req->chunk0.hdr.seq : req->chunks[0].hdr.seq;
}

/* Both the answer and the completion are in: fix the status, let waiters
 * see the request finished, and run what completion held back. */
static void cancel_finish(struct proust_request *req)
{
    struct proust_session *s = req->session; /* read first: a waiter may
                                                release it once finished */
    if (req->cancel_won) {
        req->status.error = PROUST_ERR_CANCELED;
        req->status.count = 0;
    }
    unsigned prev = atomic_fetch_and_explicit(&req->flags, ~PROUST__RF_CANCELING,
                                              memory_order_seq_cst);
    if (prev & (PROUST__RF_CB | PROUST__RF_FREED)) {
        req->deferred_next = proust__deferred_head;
        proust__deferred_head = req;
    }
    proust__wake_check(&s->prog);
}

void proust__cancel_completed(struct proust_request *req, unsigned prev_flags)
{
    if (prev_flags & PROUST__RF_ANSWERED)
        cancel_finish(req);
}

/* Record the receiver's answer; finish the request if it is complete. */
static void cancel_answered(struct proust_request *req, bool cancelled)
{
    req->cancel_won = cancelled;
    unsigned prev = atomic_fetch_or_explicit(&req->flags, PROUST__RF_ANSWERED,
                                             memory_order_acq_rel);
    if (prev & PROUST__RF_DONE)
        cancel_finish(req);
}

/* Unlink req from the gate's cancellations (gate lock held); false if it
 * is not there. */
static bool cancels_remove(struct proust__gate *g, struct proust_request *req)
{
    for (struct proust_request **pp = &g->cancels; *pp; pp = &(*pp)->cancel_next) {
        if (*pp == req) {
            *pp = req->cancel_next;
            req->cancel_next = NULL;
            return true;
        }
    }
    return false;
}

int proust__cancel_send(struct proust_session *s, struct proust_request *req)
{
    struct proust__gate *g = &s->gates[req->peer];
    uint64_t token = proust__token_alloc(s, req, SEG_CANCEL);
    if (!token)
        return PROUST_ERR_NOMEM;
    /* behind the message's own chunks, never ahead: not urgent */
    struct proust__chunk *c =
        proust__control_chunk_new(PROUST__CH_CANCEL, 0, token, 0, req->tag, NULL, 0, false);
    if (!c) {
        proust__token_release(s, token);
        return PROUST_ERR_NOMEM;
    }
    /* Refused: a request released or asked already, and one that completed
     * with an error (nothing left to cancel) or whose callback has run
     * (it saw the request finished). */
    unsigned f = atomic_load_explicit(&req->flags, memory_order_acquire);
    do {
        if ((f & (PROUST__RF_FREED | PROUST__RF_CANCELING | PROUST__RF_ANSWERED)) ||
            ((f & PROUST__RF_DONE) && ((f & PROUST__RF_CB) || req->status.error != PROUST_OK))) {
            proust__token_release(s, token);
            free(c);
            return PROUST_ERR_BUSY;
        }
    } while (!atomic_compare_exchange_weak_explicit(&req->flags, &f, f | PROUST__RF_CANCELING,
                                                    memory_order_acq_rel,
                                                    memory_order_acquire));
    c->hdr.seq = message_seq(req); /* numbered: a send that was not failed */
    proust__lock(&g->lock);
    if (atomic_load_explicit(&g->failed, memory_order_acquire)) {
        /* gate_fail has answered the others already */
        proust__unlock(&g->lock);
        proust__token_release(s, token);
        free(c);
        cancel_answered(req, false);
        return PROUST_OK;
    }
    req->cancel_token = token;
    req->cancel_won = false;
    req->cancel_next = g->cancels;
    g->cancels = req;
    proust__window_push(g, c, c, 1);
    proust__gate_schedule(s, g);
    proust__unlock(&g->lock);
    proust__threads_kick(&s->prog); /* the answer must be read while we compute */
    return PROUST_OK;
}

/* Release the tokens a send gave its receiver (RTS, or sync DATA): nobody
 * will name them now. Stale ones are ignored by the table. */
static void release_segment_tokens(struct proust_session *s, struct proust_request *req)
{
    for (uint16_t i = 0; i < req->nseg; i++) {
        const struct proust__chunk *c = req->nseg == 1 ? &req->chunk0 : &req->chunks[i];
        uint64_t token = 0;
        if (c->hdr.type == PROUST__CH_RTS) {
            struct proust__rts_body rb;
            memcpy(&rb, c->storage, sizeof rb);
            token = rb.sender_token;
        } else if (c->hdr.type == PROUST__CH_DATA && (c->hdr.flags & PROUST__CF_SYNC)) {
            struct proust__data_tail t;
            memcpy(&t, c->storage, sizeof t);
            token = t.sender_token;
        }
        if (token)
            proust__token_release(s, token);
    }
}

void proust__send_on_cancel_answer(struct proust_session *s, int peer, uint64_t token,
                                   bool cancelled)
{
    struct proust__gate *g = &s->gates[peer];
    uint16_t seg;
    proust__lock(&g->lock);
    struct proust_request *req = proust__token_lookup(s, token, &seg);
    if (!req || seg != SEG_CANCEL || req->kind != PROUST__REQ_SEND || req->peer != peer ||
        !cancels_remove(g, req)) {
        proust__unlock(&g->lock);
        PROUST_WARN("rank %d answered an unknown cancellation; ignored", peer);
        return;
    }
    proust__token_release(s, token);
    int owed = 0;
    if (cancelled && req->where == PROUST__IN_WAITING) {
        /* the CTS, FIN or ACK it waited for will not come */
        proust__dlist_remove(&g->waiting_head, &g->waiting_tail, req);
        req->where = PROUST__IN_NONE;
        atomic_fetch_sub_explicit(&s->sends_waiting, 1, memory_order_relaxed);
        release_segment_tokens(s, req);
        owed = req->remote_owed;
        req->remote_owed = 0;
    }
    proust__unlock(&g->lock);
    cancel_answered(req, cancelled);
    while (owed-- > 0)
        proust__request_event_done(req);
}

void proust__cancels_fail(struct proust_session *s, struct proust__gate *g)
{
    struct proust_request *req;
    while ((req = g->cancels)) {
        g->cancels = req->cancel_next;
        req->cancel_next = NULL;
        proust__token_release(s, req->cancel_token);
        cancel_answered(req, false);
    }
}

void proust__recv_on_cancel(struct proust_session *s, int peer, const struct proust__chunk_hdr *h)
{
    struct proust__gate *g = &s->gates[peer];
    proust__match_lock(g);
    struct proust__inmsg *m = proust__unexpected_take_seq(s, g, h->seq, h->tag);
    if (m) {
        proust__inmsg_release(s, m); /* its eager bytes; an RTS's stay with the sender */
    } else {
        /* an idle pull is fetching it: answer once the data is here */
        for (struct proust__inmsg *u = g->unexp_head; u; u = u->next)
            if (u->seq == h->seq && u->tag == h->tag && proust__inmsg_pulling(u)) {
                u->cancel_pending = true;
                u->cancel_token = h->total;
                proust__match_unlock(g);
                return;
            }
    }
    proust__match_unlock(g);
    proust__send_control_ext(s, peer, PROUST__CH_CANCEL_ANS, m ? PROUST__CF_CANCELLED : 0,
                             h->total, 0, 0, NULL, 0);
}
