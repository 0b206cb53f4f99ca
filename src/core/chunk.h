/*
 * chunk.h — what core queues to send: chunks (a header and a body of iovec
 * entries pointing at user data) in a per-peer window, which a strategy
 * (strategy/strategy.h) turns into packets.
 */
#ifndef PROUST_CORE_CHUNK_H
#define PROUST_CORE_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/uio.h>

#include "core/wire.h"

struct proust_request;

/* A queued piece of outgoing work: one chunk header plus its body. */
struct proust__chunk {
    struct proust__chunk *next;
    struct proust__chunk_hdr hdr;
    struct iovec body[2]; /* e.g. RTS body + key, or data tail + data */
    int nbody;
    struct proust_request *req; /* send request to credit when sent, or NULL */
    bool urgent;                /* strategies may send urgent chunks first */
    bool owned;                 /* allocated for control; freed once sent */
    uint8_t storage[sizeof(struct proust__rts_body) + PROUST__MAX_KEY];
};

struct proust__window {
    struct proust__chunk *head, *tail;
    unsigned count;
    unsigned urgent; /* urgent chunks in the window */
};

/* Bytes a chunk occupies in a packet. */
static inline size_t proust__chunk_wire_size(const struct proust__chunk *c)
{
    return sizeof(struct proust__chunk_hdr) + c->hdr.len;
}


#endif
