/*
 * recv.h — the receive path (recv_path.c, recv_rdv.c, unexp_pull.c): packets
 * in, matching, the receiver's side of the rendezvous, idle pulls.
 */
#ifndef PROUST_CORE_RECV_H
#define PROUST_CORE_RECV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/inmsg.h"
#include "core/session.h"
#include "core/wire.h"
#include "proust.h"

struct proust_request;

/* ---- receive path (recv_path.c) ------------------------------------------- */
void proust__on_packet(void *engine, int peer, const void *data, size_t len);
void *proust__on_put_target(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
void proust__on_put_done(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
void proust__on_peer_failed(void *engine, int peer, int status, const char *why);
/* How a receive is posted (proust__recv_post). */
enum {
    /* a nonblocking call: a rendezvous it matches at once is copied by the
     * next progress pass, not inside the call (its caller's own sends must
     * leave first: two ranks exchanging 4 MiB each copied one after the
     * other when each Irecv pulled its peer's message before its Isend) */
    PROUST__POST_NONBLOCKING = 1u,
    PROUST__POST_MAY_OFFER = 2u, /* may be offered to its sender (offer.c) */
};
/* A receive was just posted: match it against unexpected messages (takes the
 * match locks). how: PROUST__POST_* flags. */
int proust__recv_post(struct proust_session *s, struct proust_request *req, unsigned how);
/* The same for a one-segment receive `tmp` on the caller's stack that may
 * finish in the call: NULL when a message that had wholly arrived eager
 * completed tmp; else the request from the thread's cache (reserved with
 * proust__request_reserve) that the receive goes on with. */
struct proust_request *proust__recv_post_inline(struct proust_session *s,
                                                struct proust_request *tmp, unsigned how);
/* Receive a message taken out of matching by proust_improbe (nonblocking:
 * a rendezvous is copied by the next progress pass). */
int proust__recv_post_message(struct proust_session *s, struct proust_request *req,
                              struct proust__inmsg *m);
/* Receiver side of the rendezvous (recv_rdv.c), no lock held. */
void proust__segment_landed(struct proust_session *s, int peer, struct proust_request *req);
void proust__send_cts(struct proust_session *s, int peer, struct proust_request *req,
                      uint16_t seg, uint64_t sender_token, size_t accepted);
/* Does the rail do a get of len bytes asynchronously (a one-sided read
 * answered by rma_done)? */
bool proust__get_async_ok(const proust__rail_t *rail, size_t len);
/* An asynchronous get is over (proust__on_rma_done, ctx tagged
 * PROUST__RMA_CTX_GET): FIN to the sender, the segment landed. */
struct async_get;
void proust__get_done(struct async_get *ag, int status);
void proust__do_get(struct proust_session *s, int peer, struct proust_request *req, uint16_t seg,
                    uint64_t sender_token, size_t accepted, const uint8_t *key, uint32_t key_len);
void proust__queue_get(struct proust_session *s, int peer, struct proust_request *req,
                       uint16_t seg, uint64_t sender_token, size_t accepted, const uint8_t *key,
                       uint32_t key_len, bool sender_waits);
void proust__recv_on_done(struct proust_session *s, int peer, uint64_t token);
/* Carry out the gets that polling queued (sharing the copies with the
 * senders when several are waiting); call with no lock held. */
void proust__gets_run(struct proust_session *s);
/* Drop the queued gets from `peer` (it failed); returns none of them. */
void proust__gets_forget(struct proust_session *s, int peer);
/* An idle process pulls the rendezvous messages waiting unexpected into
 * its own memory and releases their senders (unexp_pull.c); returns the
 * segments pulled. Call with no lock held, only when idle. */
int proust__idle_pull(struct proust_session *s);
/* The data an idle pull asked for (`holder`) landed, or failed: the segment
 * becomes eager, or goes to the receive that matched it meanwhile
 * (recv_path.c); releases holder. No lock held. */
void proust__recv_pull_landed(struct proust_session *s, int peer, struct proust_request *holder);
static inline bool proust__idle_pull_wanted(struct proust_session *s)
{
    return atomic_load_explicit(&s->unexp_rts, memory_order_relaxed) != 0;
}
/* Free an incoming message and the eager data it kept. */
void proust__inmsg_free(struct proust__inmsg *m);
/* Does an idle pull still wait for data of one of m's segments? */
static inline bool proust__inmsg_pulling(const struct proust__inmsg *m)
{
    for (uint16_t i = 0; i < m->nseg; i++)
        if (m->seg[i].state == PROUST__SEG_PULLING)
            return true;
    return false;
}
/* The same for a message of a live gate, its stripe held (descriptor and
 * buffers go back to the stripe's caches). */
void proust__inmsg_release(struct proust_session *s, struct proust__inmsg *m);
/* Free the stash, unexpected messages and active messages of every gate. */
void proust__recv_cleanup(struct proust_session *s);

#endif
