/*
 * wire.h — what the engine puts in a packet.
 *
 * A packet is a packet header followed by chunks; a chunk is a 32-byte
 * header followed by its body (eager data, or the rendezvous description).
 * Every message, plain or pack, is nseg segments; each segment travels as
 * one chunk (DATA: the bytes; RTS: a request to send them by rendezvous).
 * Every chunk repeats the envelope (seq, tag, nseg, total) so the receiver
 * can match a message whatever chunk of it arrives first.
 *
 * Control chunks (CTS, FIN, ACK) carry no envelope; they name requests by
 * token. Fields are in host byte order (homogeneous clusters only).
 * Everything a peer sends is validated by proust__wire_next() before use.
 */
#ifndef PROUST_WIRE_H
#define PROUST_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PROUST__PKT_MAGIC 0x5072u /* "Pr" */

enum proust__chunk_type {
    PROUST__CH_DATA = 1, /* eager segment: body = the bytes */
    PROUST__CH_RTS = 2,  /* rendezvous request: body = struct proust__rts_body + key */
    PROUST__CH_CTS = 3,  /* receiver ready: body = struct proust__cts_body */
    PROUST__CH_FIN = 4,  /* receiver pulled the data with get(): body = sender token */
    PROUST__CH_ACK = 5,  /* synchronous send matched: body = sender token */
    PROUST__CH_PUSH = 6, /* receiver ready, write straight into my memory:
                            body = struct proust__push_body + key */
    PROUST__CH_DONE = 7, /* sender wrote a pushed segment: total = receiver token */
    PROUST__CH_OFFER = 8, /* a receive was posted, write the message it will match
                             straight into it: total = receiver token, tag, seq = the
                             receiver's next expected sequence number, body = struct
                             proust__offer_body + key; answered by DONE or OFFER_NO */
    PROUST__CH_OFFER_NO = 9, /* the offer was not used: total = receiver token,
                                flags: PROUST__CF_EXCHANGE */
    PROUST__CH_REVOKE = 10,  /* the offered receive is being cancelled: total = token */
    PROUST__CH_CANCEL = 11,  /* drop my message `seq` (tag) if it is still unexpected:
                                total = sender token, answered by CANCEL_ANS */
    PROUST__CH_CANCEL_ANS = 12, /* total = that token; flags: PROUST__CF_CANCELLED
                                   if the message was dropped */
    PROUST__CH_TYPE_MAX = 12,
};

/* chunk flags */
#define PROUST__CF_SYNC 0x1u /* sender wants an ACK when matched (DATA) */
#define PROUST__CF_EXCHANGE 0x2u /* OFFER_NO: declined because the sender waits for a \
                                    message from the receiver itself (offer.c) */
#define PROUST__CF_WAITS 0x4u /* RTS: the sender waits in a blocking send, ready to \
                                 stream the data itself (recv_path.c) */
#define PROUST__CF_CANCELLED 0x8u /* CANCEL_ANS: the message was dropped unreceived */
#define PROUST__CF_RDV_SYNC 0x10u /* RTS of a synchronous send: its FIN must mean that a \
                                     receive matched (no idle pull, unexp_pull.c) */

struct proust__pkt_hdr {
    uint16_t magic;
    uint16_t nchunks;
    uint32_t len; /* bytes of the whole packet, header included */
};

struct proust__chunk_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t seg;  /* segment index */
    uint16_t nseg; /* segments in the message */
    uint16_t reserved;
    uint32_t seq;  /* per-gate message sequence number */
    uint32_t len;  /* body bytes following this header */
    uint64_t tag;
    uint64_t total; /* DATA/RTS: size of the whole message (all segments);
                       control chunks: the token they name */
};

struct proust__rts_body {
    uint64_t sender_token; /* names the send for CTS/FIN */
    uint64_t seg_size;     /* bytes of this segment */
    uint32_t key_len;      /* bytes of get() key that follow, 0 if none */
    uint32_t reserved;
};

struct proust__cts_body {
    uint64_t sender_token;
    uint64_t receiver_token; /* put() destination */
    uint64_t accepted;       /* bytes the receiver takes (<= segment size) */
};

struct proust__push_body {
    uint64_t sender_token;
    uint64_t receiver_token; /* named by DONE, or by puts if the write fails */
    uint64_t accepted;
    uint32_t key_len; /* describes the receive buffer for write() */
    uint32_t reserved;
};

struct proust__offer_body {
    uint64_t mask;    /* the receive's tag mask */
    uint64_t cap;     /* bytes the buffer holds */
    uint32_t key_len; /* describes the receive buffer for write() */
    uint32_t reserved;
};

struct proust__data_tail {
    uint64_t sender_token; /* SYNC DATA only: token for the ACK */
    uint64_t reserved;
};

#define PROUST__MAX_KEY 64

_Static_assert(sizeof(struct proust__chunk_hdr) == 32, "chunk header is 32 bytes");
_Static_assert(sizeof(struct proust__pkt_hdr) == 8, "packet header is 8 bytes");

/* A parsed chunk: header plus a pointer to its body inside the packet. */
struct proust__wire_chunk {
    struct proust__chunk_hdr hdr;
    const uint8_t *body;
};

/* Iterate over a received packet. */
struct proust__wire_reader {
    const uint8_t *cur;
    const uint8_t *end;
    unsigned remaining;
};

/* Validate the packet header; PROUST_ERR_PROTO with *why set if malformed. */
int proust__wire_open(struct proust__wire_reader *r, const void *data, size_t len,
                      const char **why);
/* Next chunk: 1 and *out filled, 0 at the end, PROUST_ERR_PROTO if malformed
 * (bad type, body past the packet end, segment index out of range, ...). */
int proust__wire_next(struct proust__wire_reader *r, struct proust__wire_chunk *out,
                      const char **why);

/* The common packet read without the reader (on the latency path): one
 * DATA chunk, not SYNC, of a one-segment message, whose body ends the
 * packet -- what proust__wire_open + proust__wire_next accept for that
 * shape. Anything else, malformed or not, answers false: the reader then
 * validates it and says what is wrong. */
static inline bool proust__wire_single_data(const void *data, size_t len,
                                            struct proust__wire_chunk *out)
{
    struct proust__pkt_hdr ph;
    if (len < sizeof ph + sizeof out->hdr)
        return false;
    memcpy(&ph, data, sizeof ph);
    memcpy(&out->hdr, (const uint8_t *)data + sizeof ph, sizeof out->hdr);
    const struct proust__chunk_hdr *h = &out->hdr;
    if (ph.magic != PROUST__PKT_MAGIC || ph.nchunks != 1 || ph.len != len ||
        h->type != PROUST__CH_DATA || (h->flags & PROUST__CF_SYNC) || h->nseg != 1 ||
        h->seg != 0 || h->len != len - sizeof ph - sizeof out->hdr || h->len > h->total)
        return false;
    out->body = (const uint8_t *)data + sizeof ph + sizeof out->hdr;
    return true;
}

#endif
