/*
 * ofi_wire.c — the header of the ofi rail's messages, checked before any
 * of it is used: a provider hands over whatever bytes a peer (or a
 * stranger reaching the endpoint) sent.
 */
#include <string.h>

#include "drivers/ofi.h"
#include "proust.h"

int proust__ofi_parse(const void *buf, size_t len, int nranks, struct ofi_msg *out,
                      const char **why)
{
    struct ofi_hdr h;
    if (len < sizeof h) {
        *why = "a message shorter than its header";
        return PROUST_ERR_PROTO;
    }
    memcpy(&h, buf, sizeof h);
    if (h.magic != OFI_MAGIC) {
        *why = "a message without the rail's mark";
        return PROUST_ERR_PROTO;
    }
    if (h.src >= (uint32_t)nranks) {
        *why = "a message from a rank the job does not have";
        return PROUST_ERR_PROTO;
    }
    if (h.kind < OFI_MSG_PACKET || h.kind > OFI_MSG_CREDIT) {
        *why = "a message of an unknown kind";
        return PROUST_ERR_PROTO;
    }
    size_t body = len - sizeof h;
    const uint8_t *payload = (const uint8_t *)buf + sizeof h;
    if (h.kind == OFI_MSG_PUT && h.offset > UINT64_MAX - body) {
        *why = "a put past the end of the address space";
        return PROUST_ERR_PROTO;
    }
    if (h.kind == OFI_MSG_PULL) {
        if (body != sizeof out->pull) {
            *why = "a pull of the wrong size";
            return PROUST_ERR_PROTO;
        }
        memcpy(&out->pull, payload, sizeof out->pull);
        if (out->pull.len == 0 ||
            h.offset > UINT64_MAX - out->pull.len ||
            out->pull.raddr > UINT64_MAX - out->pull.len) {
            *why = "a pull of no bytes, or past the end of the address space";
            return PROUST_ERR_PROTO;
        }
    }
    if (h.kind == OFI_MSG_PULL_ACK) {
        if (body != sizeof out->ack) {
            *why = "a pull acknowledgement of the wrong size";
            return PROUST_ERR_PROTO;
        }
        memcpy(&out->ack, payload, sizeof out->ack);
    }
    if (h.kind == OFI_MSG_RING_GRANT) {
        if (body != sizeof out->grant) {
            *why = "a slot ring grant of the wrong size";
            return PROUST_ERR_PROTO;
        }
        memcpy(&out->grant, payload, sizeof out->grant);
        const struct ofi_ring_grant *g = &out->grant;
        if (g->slots && (g->slot_size < OFI_SLOT_MIN || g->slot_size % 8 ||
                         g->slot_size > OFI_BUF_SIZE ||
                         g->slots > (1u << 20) ||
                         g->raddr > UINT64_MAX - (uint64_t)g->slots * g->slot_size)) {
            *why = "a slot ring grant of impossible slots";
            return PROUST_ERR_PROTO;
        }
    }
    if ((h.kind == OFI_MSG_RING_REQ || h.kind == OFI_MSG_CREDIT) && body != 0) {
        *why = "a ring request or credit with a payload";
        return PROUST_ERR_PROTO;
    }
    out->kind = h.kind;
    out->credit = h.credit;
    out->src = (int)h.src;
    out->seq = h.seq;
    out->token = h.token;
    out->offset = h.offset;
    out->payload = payload;
    out->len = body;
    return PROUST_OK;
}
