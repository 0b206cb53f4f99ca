#include "drivers/shm_ring.h"

#include <string.h>

#include "proust.h"

static inline size_t round_line(size_t n)
{
    return (n + PROUST__SHM_LINE - 1) & ~(size_t)(PROUST__SHM_LINE - 1);
}

static inline int has_room(struct proust__shm_producer *p, size_t need)
{
    if (p->size - (p->head - p->tail_cache) >= need)
        return 1;
    p->tail_cache = atomic_load_explicit(&p->ctl->tail, memory_order_acquire);
    return p->size - (p->head - p->tail_cache) >= need;
}

int proust__shm_ring_write(struct proust__shm_producer *p, uint16_t kind, uint64_t token,
                           uint64_t offset, const struct iovec *iov, int iovcnt, size_t len)
{
    size_t hdr = kind == SHM_REC_PUT ? PROUST__SHM_PUT_HDR : PROUST__SHM_REC_HDR;
    size_t rec = round_line(hdr + len);
    size_t off = (size_t)(p->head & (p->size - 1)); /* size is a power of two */
    size_t to_end = p->size - off;
    /* a record never straddles the end: pad to the end with a WRAP record */
    size_t need = rec <= to_end ? rec : to_end + rec;
    if (!has_room(p, need))
        return PROUST_ERR_BUSY;
    if (rec > to_end) {
        struct proust__shm_rec *w = (struct proust__shm_rec *)(p->data + off);
        w->len = (uint32_t)(to_end - PROUST__SHM_REC_HDR);
        w->kind = SHM_REC_WRAP;
        w->hdr_len = PROUST__SHM_REC_HDR;
        atomic_store_explicit(&w->stamp, p->head + 1, memory_order_release);
        p->head += to_end;
        off = 0;
    }
    struct proust__shm_rec *r = (struct proust__shm_rec *)(p->data + off);
    uint8_t *dst = (uint8_t *)r + hdr;
    for (int i = 0; i < iovcnt; i++) {
        /* packet and chunk headers have fixed sizes: let those copies be
         * plain moves instead of calls */
        switch (iov[i].iov_len) {
        case 8: memcpy(dst, iov[i].iov_base, 8); break;
        case 32: memcpy(dst, iov[i].iov_base, 32); break;
        default: memcpy(dst, iov[i].iov_base, iov[i].iov_len); break;
        }
        dst += iov[i].iov_len;
    }
    r->len = (uint32_t)len;
    r->kind = kind;
    r->hdr_len = (uint16_t)hdr;
    if (kind == SHM_REC_PUT) {
        r->token = token;
        r->offset = offset;
    }
    atomic_store_explicit(&r->stamp, p->head + 1, memory_order_release);
    p->head += rec;
    return PROUST_OK;
}

const struct proust__shm_rec *proust__shm_ring_peek_slow(struct proust__shm_consumer *c,
                                                         const char **err)
{
    for (;;) {
        size_t off = (size_t)(c->pos & (c->size - 1));
        const struct proust__shm_rec *r = (const struct proust__shm_rec *)(c->data + off);
        if (atomic_load_explicit(&((struct proust__shm_rec *)r)->stamp, memory_order_acquire) !=
            c->pos + 1)
            return NULL;
        size_t to_end = c->size - off;
        if (r->kind == SHM_REC_WRAP) {
            c->pos += to_end;
            continue;
        }
        size_t hdr = r->kind == SHM_REC_PUT ? PROUST__SHM_PUT_HDR : PROUST__SHM_REC_HDR;
        if ((r->kind != SHM_REC_PACKET && r->kind != SHM_REC_PUT) || r->hdr_len != hdr ||
            (size_t)r->len > to_end - hdr) {
            *err = "malformed shared-memory record";
            return NULL;
        }
        return r;
    }
}

void proust__shm_ring_consume(struct proust__shm_consumer *c, const struct proust__shm_rec *r)
{
    size_t rec = round_line(r->hdr_len + r->len);
    /* clear line starts inside the record: its payload must never look like
     * a stamp when a later record starts there */
    uint8_t *base = (uint8_t *)r;
    for (size_t l = PROUST__SHM_LINE; l < rec; l += PROUST__SHM_LINE)
        atomic_store_explicit((_Atomic uint64_t *)(base + l), 0, memory_order_relaxed);
    c->pos += rec;
}
