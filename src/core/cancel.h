/*
 * cancel.h — cancelling a send (cancel.c).
 */
#ifndef PROUST_CORE_CANCEL_H
#define PROUST_CORE_CANCEL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"

struct proust_session;
struct proust_request;
struct proust__gate;

/* ---- send cancellation (cancel.c) ---------------------------------------- */
/* A send is cancelled by asking its receiver to drop the message while it
 * is still unexpected there (CANCEL, answered by CANCEL_ANS); the request
 * is not finished before the answer. proust_cancel of a send. */
int proust__cancel_send(struct proust_session *s, struct proust_request *req);
/* Receiver: CANCEL from peer (no lock held). */
void proust__recv_on_cancel(struct proust_session *s, int peer, const struct proust__chunk_hdr *h);
/* Sender: CANCEL_ANS from peer (no lock held). */
void proust__send_on_cancel_answer(struct proust_session *s, int peer, uint64_t token,
                                   bool cancelled);
/* request_complete found RF_CANCELING set: finish the request if the answer
 * came already (else the answer will). */
void proust__cancel_completed(struct proust_request *req, unsigned prev_flags);
/* The peer failed: its answers will not come (gate lock held). */
void proust__cancels_fail(struct proust_session *s, struct proust__gate *g);

#endif
