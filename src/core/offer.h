/*
 * offer.h — receiver offers (offer.c): a large nonblocking receive offered
 * to its sender, which writes the message straight into it.
 */
#ifndef PROUST_CORE_OFFER_H
#define PROUST_CORE_OFFER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"
#include "proust.h"

struct proust_session;
struct proust_request;
struct proust__gate;

/* ---- receiver offers (offer.c) ---------------------------------------------- */
/* A nonblocking receive for one source, large enough, posted when nothing
 * else could match that source's next messages, is offered to the sender:
 * it writes the message straight into the buffer (shm: process_vm_writev)
 * while the receiver computes, instead of waiting for the receiver to
 * answer its RTS. The sender uses the offer only for the message the
 * receive will match. The buffer is exposed once, behind a claim the
 * sender takes before writing and the receiver can take back first
 * (rail expose_once / withdraw): a receiver that matches the RTS, or
 * cancels, before the sender started never waits for it. */
enum { PROUST__OFFER_ACT_GET = 1, PROUST__OFFER_ACT_CTS = 2 };
struct proust__offer {
    uint64_t token;   /* receiver token the sender names */
    bool held;        /* an RTS matched: its answer waits for the sender's */
    bool done_early;  /* DONE came before the RTS that matches */
    uint8_t act;      /* held answer: ACT_GET or ACT_CTS (recv_path.c) */
    uint64_t sender_token;
    size_t accepted;
    uint32_t key_len; /* the held RTS's key (ACT_GET) */
    uint8_t key[PROUST__MAX_KEY];
    uint32_t own_key_len; /* the receive buffer's one-shot key; 0: withdrawn */
    uint8_t own_key[PROUST__MAX_KEY];
};
struct proust__offer_in {
    uint32_t seq;
    proust_tag_t tag, mask;
    uint64_t cap, token;
    uint32_t key_len;
    uint8_t key[PROUST__MAX_KEY];
};
/* The OFFER chunk a receiver sends, built under the stripe. */
struct proust__offer_msg {
    uint64_t token;
    uint32_t seq;
    proust_tag_t tag;
    struct proust__offer_body body;
    uint8_t key[PROUST__MAX_KEY];
};
/* Receiver: decide to offer `req`, just queued in its gate (stripe held);
 * true: send *msg with proust__offer_send once the stripe is released. */
bool proust__offer_prepare(struct proust_session *s, struct proust_request *req,
                           struct proust__offer_msg *msg);
void proust__offer_send(struct proust_session *s, int peer, const struct proust__offer_msg *msg);
/* Receiver: the RTS of seg 0 matched an offered receive (stripe held):
 * true if its answer is held because the sender is writing (or the data is
 * already there: *landed); false: the offer was taken back, answer now. */
bool proust__offer_hold(struct proust_session *s, struct proust_request *req, int act,
                        uint64_t sender_token, size_t accepted, const uint8_t *key,
                        uint32_t key_len, bool *landed);
/* Receiver: the sender's DONE for an offer (no lock held); false if the
 * token names no offer. */
bool proust__offer_on_done(struct proust_session *s, int peer, uint64_t token);
/* Forget a receive's offer (stripe held, or the request is no one else's):
 * token released, memory freed; a late answer then names nothing. */
void proust__offer_drop(struct proust_session *s, struct proust_request *req);
/* Receiver: take an offered receive back for proust_cancel (stripe held):
 * true if the sender had not started writing (offer dropped; send a
 * REVOKE with *token so it forgets it), false if it is writing (the
 * receive will complete with its data). */
bool proust__offer_withdraw(struct proust_session *s, struct proust_request *req,
                            uint64_t *token);
/* Receiver: OFFER_NO from peer (no lock held). */
void proust__recv_on_offer_no(struct proust_session *s, int peer, uint64_t token, bool exchange);
/* Sender: OFFER / REVOKE from peer (no lock held). */
void proust__send_on_offer(struct proust_session *s, int peer, const struct proust__chunk_hdr *h,
                           const uint8_t *body);
void proust__send_on_revoke(struct proust_session *s, int peer, uint64_t token);
/* Sender: a message was just numbered (gate lock held): does a pending
 * offer name it? Returns 1: use it (call proust__offer_use after the
 * lock), -1: decline it (call proust__offer_decline), 0: nothing to do. */
int proust__offer_check_send(struct proust__gate *g, struct proust_request *req, uint32_t seq,
                             uint64_t rts_token, struct proust__offer_in **taken);
void proust__offer_use(struct proust_session *s, int peer, uint64_t sender_token,
                       struct proust__offer_in *o);
/* The same, done by the next progress pass: the send call or the poll that
 * decided it does not copy a large message inline (a sender posting a
 * window of sends gets its RTSs out first). */
void proust__offer_queue_use(struct proust_session *s, int peer, uint64_t sender_token,
                             const struct proust__offer_in *o);
int proust__offer_uses_run(struct proust_session *s);
/* Drop the queued uses for `peer` (it failed), or all (peer < 0). */
void proust__offer_uses_forget(struct proust_session *s, int peer);
/* `exchange`: declined because we wait for a message from that peer, or
 * our sends to other peers wait too (proust__offer_worth_using said no):
 * it pauses its offers to us. */
void proust__offer_decline(struct proust_session *s, int peer, struct proust__offer_in *o,
                           bool exchange);
/* Sender: should a matching offer from `peer` be written into? (not while
 * we have a receive posted from it, nor while sends of ours to other peers
 * wait for their answers) */
bool proust__offer_worth_using(struct proust_session *s, int peer);

#endif
