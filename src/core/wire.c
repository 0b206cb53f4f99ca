#include "core/wire.h"

#include <string.h>

#include "proust.h"

int proust__wire_open(struct proust__wire_reader *r, const void *data, size_t len,
                      const char **why)
{
    struct proust__pkt_hdr ph;
    if (len < sizeof ph) {
        *why = "packet shorter than its header";
        return PROUST_ERR_PROTO;
    }
    memcpy(&ph, data, sizeof ph);
    if (ph.magic != PROUST__PKT_MAGIC) {
        *why = "bad packet magic";
        return PROUST_ERR_PROTO;
    }
    if (ph.len != len) {
        *why = "packet length field disagrees with the bytes received";
        return PROUST_ERR_PROTO;
    }
    r->cur = (const uint8_t *)data + sizeof ph;
    r->end = (const uint8_t *)data + len;
    r->remaining = ph.nchunks;
    return PROUST_OK;
}

static int body_fits(const struct proust__chunk_hdr *h, const char **why)
{
    switch (h->type) {
    case PROUST__CH_DATA:
        if ((h->flags & PROUST__CF_SYNC) && h->len < sizeof(struct proust__data_tail)) {
            *why = "sync DATA chunk too short";
            return 0;
        }
        size_t tail = (h->flags & PROUST__CF_SYNC) ? sizeof(struct proust__data_tail) : 0;
        if (h->len > h->total + tail) {
            *why = "DATA chunk longer than its message";
            return 0;
        }
        break;
    case PROUST__CH_RTS:
        if (h->len < sizeof(struct proust__rts_body)) {
            *why = "RTS chunk too short";
            return 0;
        }
        break;
    case PROUST__CH_CTS:
        if (h->len != sizeof(struct proust__cts_body)) {
            *why = "CTS chunk has the wrong length";
            return 0;
        }
        return 1;
    case PROUST__CH_PUSH: {
        if (h->len < sizeof(struct proust__push_body)) {
            *why = "PUSH chunk too short";
            return 0;
        }
        return 1; /* key length checked by proust__wire_next */
    }
    case PROUST__CH_OFFER:
        if (h->len < sizeof(struct proust__offer_body)) {
            *why = "OFFER chunk too short";
            return 0;
        }
        return 1; /* key length checked by proust__wire_next */
    case PROUST__CH_FIN:
    case PROUST__CH_ACK:
    case PROUST__CH_DONE:
    case PROUST__CH_OFFER_NO:
    case PROUST__CH_REVOKE:
    case PROUST__CH_CANCEL:
    case PROUST__CH_CANCEL_ANS:
        if (h->len != 0) {
            *why = "control chunk has a body";
            return 0;
        }
        return 1;
    default:
        *why = "unknown chunk type";
        return 0;
    }
    if (h->nseg == 0 || h->seg >= h->nseg || h->nseg > 64) {
        *why = "segment index out of range";
        return 0;
    }
    return 1;
}

int proust__wire_next(struct proust__wire_reader *r, struct proust__wire_chunk *out,
                      const char **why)
{
    if (r->remaining == 0) {
        if (r->cur != r->end) {
            *why = "trailing bytes after the last chunk";
            return PROUST_ERR_PROTO;
        }
        return 0;
    }
    if ((size_t)(r->end - r->cur) < sizeof out->hdr) {
        *why = "chunk header past the end of the packet";
        return PROUST_ERR_PROTO;
    }
    memcpy(&out->hdr, r->cur, sizeof out->hdr);
    r->cur += sizeof out->hdr;
    if (out->hdr.len > (size_t)(r->end - r->cur)) {
        *why = "chunk body past the end of the packet";
        return PROUST_ERR_PROTO;
    }
    if (!body_fits(&out->hdr, why))
        return PROUST_ERR_PROTO;
    if (out->hdr.type == PROUST__CH_RTS) {
        struct proust__rts_body rb;
        memcpy(&rb, r->cur, sizeof rb);
        if (rb.key_len > PROUST__MAX_KEY || sizeof rb + rb.key_len != out->hdr.len) {
            *why = "RTS key length out of range";
            return PROUST_ERR_PROTO;
        }
        if (rb.seg_size > out->hdr.total) {
            *why = "RTS segment larger than its message";
            return PROUST_ERR_PROTO;
        }
    }
    if (out->hdr.type == PROUST__CH_PUSH) {
        struct proust__push_body pb;
        memcpy(&pb, r->cur, sizeof pb);
        if (pb.key_len > PROUST__MAX_KEY || sizeof pb + pb.key_len != out->hdr.len) {
            *why = "PUSH key length out of range";
            return PROUST_ERR_PROTO;
        }
    }
    if (out->hdr.type == PROUST__CH_OFFER) {
        struct proust__offer_body ob;
        memcpy(&ob, r->cur, sizeof ob);
        if (ob.key_len == 0 || ob.key_len > PROUST__MAX_KEY ||
            sizeof ob + ob.key_len != out->hdr.len) {
            *why = "OFFER key length out of range";
            return PROUST_ERR_PROTO;
        }
    }
    out->body = r->cur;
    /* headers are read with memcpy, so bodies need no padding */
    r->cur += out->hdr.len;
    r->remaining--;
    return 1;
}
