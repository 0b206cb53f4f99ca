/*
 * pack.c — messages made of several segments (send side: pack, receive
 * side: unpack). A pack is an ordinary request with nseg segments; each
 * segment travels as its own chunk so strategies can reorder (URGENT) or
 * merge (REORDER) them, and large segments take the rendezvous path alone.
 */
#include <stdlib.h>
#include <string.h>

#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"

struct proust_pack {
    struct proust_session *s;
    bool receive;
    int peer;
    proust_tag_t tag, mask;
    uint16_t nseg;
    struct iovec seg[PROUST_PACK_MAX_SEGMENTS];
    unsigned hints[PROUST_PACK_MAX_SEGMENTS];
};

static int pack_new(proust_session_t *s, bool receive, int peer, proust_tag_t tag,
                    proust_tag_t mask, proust_pack_t **out)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!out)
        return PROUST_ERR_INVALID;
    if ((!receive || peer != PROUST_ANY_SOURCE) && (peer < 0 || peer >= s->size))
        return PROUST_ERR_RANK;
    struct proust_pack *p = calloc(1, sizeof *p);
    if (!p)
        return PROUST_ERR_NOMEM;
    p->s = s;
    p->receive = receive;
    p->peer = peer;
    p->tag = tag;
    p->mask = mask;
    *out = p;
    return PROUST_OK;
}

int proust_pack_begin(proust_session_t *s, int dest, proust_tag_t tag, proust_pack_t **pack)
{
    return pack_new(s, false, dest, tag, PROUST_TAG_MASK_FULL, pack);
}

int proust_unpack_begin(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                        proust_pack_t **pack)
{
    return pack_new(s, true, source, tag, mask, pack);
}

static int add_segment(struct proust_pack *p, bool receive, const void *buf, size_t len,
                       unsigned hints)
{
    if (!p || p->receive != receive || (!buf && len))
        return PROUST_ERR_INVALID;
    if (hints & ~(PROUST_PACK_URGENT | PROUST_PACK_REORDER))
        return PROUST_ERR_INVALID;
    if (p->nseg >= PROUST_PACK_MAX_SEGMENTS)
        return PROUST_ERR_INVALID;
    p->seg[p->nseg].iov_base = (void *)buf;
    p->seg[p->nseg].iov_len = len;
    p->hints[p->nseg] = hints;
    p->nseg++;
    return PROUST_OK;
}

int proust_pack_add(proust_pack_t *pack, const void *buf, size_t len, unsigned hints)
{
    return add_segment(pack, false, buf, len, hints);
}

int proust_unpack_add(proust_pack_t *pack, void *buf, size_t len)
{
    return add_segment(pack, true, buf, len, 0);
}

int proust_pack_abort(proust_pack_t *pack)
{
    if (!pack)
        return PROUST_ERR_INVALID;
    free(pack);
    return PROUST_OK;
}

/* Turn a pack into a request whose segments are the pack's. */
static struct proust_request *pack_request(struct proust_pack *p, int kind)
{
    struct proust_request *req = proust__request_alloc(p->s, kind);
    if (!req)
        return NULL;
    req->peer = p->peer;
    req->tag = p->tag;
    req->mask = p->mask;
    req->nseg = p->nseg;
    if (p->nseg == 1) {
        req->seg0 = p->seg[0];
        req->segs = &req->seg0;
    } else {
        req->segs = malloc(p->nseg * sizeof *req->segs);
        if (kind == PROUST__REQ_SEND)
            req->chunks = calloc(p->nseg, sizeof *req->chunks);
        else
            req->seg_left = calloc(p->nseg, sizeof *req->seg_left);
        if (!req->segs || (kind == PROUST__REQ_SEND ? !req->chunks : !req->seg_left)) {
            free(req->segs);
            free(req->chunks);
            if (req->seg_left && req->seg_left != &req->seg0_left)
                free((void *)req->seg_left);
            req->segs = &req->seg0;
            req->chunks = NULL;
            req->seg_left = &req->seg0_left;
            proust__request_release(req);
            return NULL;
        }
        memcpy(req->segs, p->seg, p->nseg * sizeof *req->segs);
    }
    req->total = 0;
    for (uint16_t i = 0; i < p->nseg; i++)
        req->total += p->seg[i].iov_len;
    return req;
}

int proust_pack_end(proust_pack_t *pack, proust_request_t **reqp)
{
    if (!pack || pack->receive || !reqp)
        return PROUST_ERR_INVALID;
    if (pack->nseg == 0)
        return PROUST_ERR_INVALID; /* a pack carries at least one segment */
    struct proust_request *req = pack_request(pack, PROUST__REQ_SEND);
    if (!req)
        return PROUST_ERR_NOMEM;
    proust__send_post(pack->s, req, false, pack->hints);
    free(pack);
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}

int proust_unpack_end(proust_pack_t *pack, proust_request_t **reqp)
{
    if (!pack || !pack->receive || !reqp)
        return PROUST_ERR_INVALID;
    if (pack->nseg == 0)
        return PROUST_ERR_INVALID;
    struct proust_request *req = pack_request(pack, PROUST__REQ_RECV);
    if (!req)
        return PROUST_ERR_NOMEM;
    struct proust_session *s = pack->s;
    free(pack);
    proust__recv_post(s, req, PROUST__POST_NONBLOCKING);
    *reqp = req;
    proust__run_deferred();
    return PROUST_OK;
}
