#include "drivers/shm_ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/log.h"
#include "proust.h"

/* Rings larger than this get the rest of their pages as they are used. */
#define POPULATE_MAX ((size_t)4 << 20)

/* Where the stage of pages that covers `end` ends, from `done`: the
 * ping-pong zone (PROUST__SHM_POPULATE_NEXT), then twice as much each time
 * (4 MiB at most; beyond, pages come as they are touched). Doubling rather
 * than the whole ring at once: 64 KiB records need 128 KiB, which their
 * ring then cycles in while its consumer keeps up (ring_write); 8 ranks,
 * the first 4 all-to-alls of 64 KiB blocks took 39 ms giving every ring
 * its 1 MiB (Open MPI: 3.6 ms). */
static size_t stage_after(size_t done, size_t end, size_t size)
{
    size_t upto = PROUST__SHM_POPULATE_NEXT;
    while (upto < end || upto <= done)
        upto *= 2;
    if (upto > POPULATE_MAX)
        upto = POPULATE_MAX;
    return upto < size ? upto : size;
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
        size_t end = off + hdr + r->len;
        if (__builtin_expect(end > c->mapped, 0) && c->mapped != SIZE_MAX)
            proust__shm_ring_map_more(c, end);
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
    /* about to read past the lines we map: the next stage's entries in one
     * call rather than a fault a page (the producer wrote there, so it
     * gave them pages already) */
    size_t next = (size_t)(c->pos & (c->size - 1)) + PROUST__SHM_LINE;
    if (__builtin_expect(next > c->mapped, 0) && c->mapped != SIZE_MAX)
        proust__shm_ring_map_more(c, next);
}

void proust__shm_ring_map_more(struct proust__shm_consumer *c, size_t end)
{
    size_t upto = stage_after(c->mapped, end, c->size);
    (void)proust__shm_prefault(c->data + c->mapped, upto - c->mapped);
    c->mapped = upto >= c->size || upto >= POPULATE_MAX ? SIZE_MAX : upto;
}

int proust__shm_prefault(void *addr, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
    len += (uintptr_t)addr - start;
#ifdef MADV_POPULATE_WRITE
    if (madvise((void *)start, len, MADV_POPULATE_WRITE) == 0)
        return PROUST_OK;
    if (errno == ENOMEM || errno == EFAULT)
        return PROUST_ERR_NOMEM;
    if (errno != EINVAL)
        return PROUST_OK; /* interrupted: the pages come at first use */
#endif
    /* kernels before 5.14: one read per page */
    for (size_t off = 0; off < len; off += page)
        (void)*(volatile const uint8_t *)(start + off);
    return PROUST_OK;
}

int proust__shm_ring_populate(struct proust__shm_producer *p, size_t end)
{
    size_t upto = stage_after(p->populated, end, p->size);
    if (proust__shm_prefault(p->data + p->populated, upto - p->populated) != PROUST_OK) {
        PROUST_ERROR("shm: no memory for the next %zu bytes of a %zu-byte ring (/dev/shm full, "
                     "or a memory limit? PROUST_SHM_RING_SIZE sets the ring size)",
                     upto - p->populated, p->size);
        return PROUST_ERR_NOMEM;
    }
    p->populated = upto >= p->size || upto >= POPULATE_MAX ? SIZE_MAX : upto;
    return PROUST_OK;
}
