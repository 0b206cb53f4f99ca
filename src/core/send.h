/*
 * send.h — the send path (send_path.c): requests into chunks, control
 * chunks, the sender's side of the rendezvous.
 */
#ifndef PROUST_CORE_SEND_H
#define PROUST_CORE_SEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/chunk.h"
#include "core/wire.h"
#include "proust.h"

struct proust_session;
struct proust_request;
struct proust__gate;

/* ---- send path (send_path.c) ---------------------------------------------- */
int proust__send_post(struct proust_session *s, struct proust_request *req, bool sync,
                      const unsigned *hints);
/* A blocking send of an eager message with no request: the packet leaves
 * now through the rail's try_send, or PROUST_ERR_BUSY (nothing was done). */
int proust__send_eager_now(struct proust_session *s, struct proust__gate *g, const void *buf,
                           size_t len, proust_tag_t tag);
/* Queue a control chunk (CTS/FIN/ACK) to peer; takes the gate lock. */
int proust__send_control(struct proust_session *s, int peer, uint8_t type, uint64_t token,
                         const void *body, size_t body_len);
/* A control chunk, owned (freed once sent), not yet queued; NULL: no
 * memory. `urgent`: strategies may send it ahead of queued chunks. */
struct proust__chunk *proust__control_chunk_new(uint8_t type, uint8_t flags, uint64_t token,
                                                uint32_t seq, proust_tag_t tag, const void *body,
                                                size_t body_len, bool urgent);
/* The same with the header's flags, seq and tag set (OFFER, OFFER_NO). */
int proust__send_control_ext(struct proust_session *s, int peer, uint8_t type, uint8_t flags,
                             uint64_t token, uint32_t seq, proust_tag_t tag, const void *body,
                             size_t body_len);
void proust__on_send_done(void *engine, void *ctx, int status);
/* Sender side of a CTS: start the puts. */
void proust__send_on_cts(struct proust_session *s, int peer, const struct proust__cts_body *cts);
/* Sender side of a PUSH: write the data into the receiver's memory. */
void proust__send_on_push(struct proust_session *s, int peer, const struct proust__push_body *pb,
                          const uint8_t *key);
/* Find the send a CTS/PUSH (or a used offer) names and mark the answer
 * received (gate lock held); NULL if the token names no send of this peer
 * waiting for it. */
struct proust_request *proust__answered_send(struct proust_session *s, struct proust__gate *g,
                                             uint64_t sender_token, uint64_t accepted,
                                             uint16_t *seg);
/* FIN or ACK for a send request. */
void proust__send_on_ack(struct proust_session *s, int peer, uint64_t token);

#endif
