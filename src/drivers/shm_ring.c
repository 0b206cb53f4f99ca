#include "drivers/shm_ring.h"

#include <string.h>

#include "proust.h"

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
    size_t rec = proust__shm_round_line((size_t)r->hdr_len + r->len);
    /* the peer could have rewritten the header since peek checked it:
     * never clear or skip past the end of the ring */
    size_t to_end = c->size - (size_t)(c->pos & (c->size - 1));
    if (rec > to_end)
        rec = to_end;
    /* clear line starts inside the record: its payload must never look like
     * a stamp when a later record starts there */
    uint8_t *base = (uint8_t *)r;
    for (size_t l = PROUST__SHM_LINE; l < rec; l += PROUST__SHM_LINE)
        atomic_store_explicit((_Atomic uint64_t *)(base + l), 0, memory_order_relaxed);
    c->pos += rec;
}
