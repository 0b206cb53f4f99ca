/*
 * shm_ring.h — a single-producer single-consumer ring of variable-size
 * records in shared memory, one per (sender, receiver) pair, living in the
 * receiver's segment (receive buffers near the receiving core; shm.c).
 *
 * Positions are byte counters that only grow. A record starts on a 64-byte
 * line with a stamp equal to its position + 1, written last (release): the
 * consumer knows a record is complete when the stamp at its position is the
 * one it expects, so it touches a single cache line per small message and
 * no shared index. Stale stamps from earlier laps never match; the consumer
 * clears the line starts inside long records so payload bytes can never be
 * mistaken for a stamp. The consumer publishes how far it has read (tail),
 * which the producer reads only when its cached view says the ring is full.
 */
#ifndef PROUST_SHM_RING_H
#define PROUST_SHM_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "proust.h"

#define PROUST__SHM_LINE 64u

enum { SHM_REC_PACKET = 1, SHM_REC_PUT = 2, SHM_REC_WRAP = 3 };

struct proust__shm_rec {
    _Atomic uint64_t stamp;
    uint32_t len;  /* payload bytes after the header */
    uint16_t kind;
    uint16_t hdr_len; /* header bytes (16, or 32 for PUT) */
    uint64_t token;   /* PUT only */
    uint64_t offset;  /* PUT only */
};
#define PROUST__SHM_REC_HDR 16u
#define PROUST__SHM_PUT_HDR 32u

/* Shared part: the consumer's published tail on its own line. */
struct proust__shm_ring_ctl {
    _Alignas(64) _Atomic uint64_t tail;
    _Atomic uint32_t want_space; /* the producer queued data: ring it on room */
    char pad[52];
};

/* Producer's private view. */
struct proust__shm_producer {
    uint8_t *data; /* ring bytes (mapped from the receiver's segment) */
    struct proust__shm_ring_ctl *ctl;
    size_t size;
    uint64_t head;        /* next position to write */
    uint64_t tail_cache;  /* last tail read from ctl */
    uint64_t hot_check;   /* head at which to look again whether it may rewind */
    size_t populated;     /* data bytes with pages (SIZE_MAX: all of them) */
    /* the consumer sent us something since our last record (set by our
     * poll): the pattern is a ping-pong, not a stream */
    _Atomic bool answered;
};

/* Consumer's private view. */
struct proust__shm_consumer {
    uint8_t *data;
    struct proust__shm_ring_ctl *ctl;
    size_t size;
    uint64_t pos;       /* next position to read */
    uint64_t published; /* last tail stored in ctl */
    size_t mapped;      /* data bytes with our page-table entries (SIZE_MAX: all) */
};

/* Largest payload a record may carry for a ring of `size` bytes. */
static inline size_t proust__shm_max_payload(size_t size)
{
    return size / 2 - PROUST__SHM_PUT_HDR - PROUST__SHM_LINE;
}

/* Write one record made of iov; PROUST_ERR_BUSY if there is no room now. */
static inline size_t proust__shm_round_line(size_t n)
{
    return (n + PROUST__SHM_LINE - 1) & ~(size_t)(PROUST__SHM_LINE - 1);
}

static inline int proust__shm_has_room(struct proust__shm_producer *p, size_t need)
{
    if (p->size - (p->head - p->tail_cache) >= need)
        return 1;
    p->tail_cache = atomic_load_explicit(&p->ctl->tail, memory_order_acquire);
    return p->size - (p->head - p->tail_cache) >= need;
}

/* Rings get their first PROUST__SHM_POPULATE_FIRST bytes of pages when
 * made (shm.c, prefault_ring: a start-up's short collectives stay within
 * them), the next when a record first goes past them: up to
 * PROUST__SHM_POPULATE_NEXT (every ping-pong rewinds within it), then the
 * rest, once a backlog needs it (below). Each page at first contact is a
 * fault of both processes. */
#define PROUST__SHM_POPULATE_FIRST ((size_t)4 << 10)
#define PROUST__SHM_POPULATE_NEXT ((size_t)64 << 10)

/* A record that would need the next stage of pages while the consumer has
 * read everything starts the ring again instead, within the pages it has
 * (from the second stage on): a ring grows only when a backlog needs it,
 * and its lines stay in the caches. An all-to-all of 16 KiB blocks, 8
 * ranks on 2 cores, had each ring walk its 1 MiB, 250 pages of both
 * processes to fault in: its first 64 iterations took 37-42 ms, now 10-17
 * (Open MPI's 0.2-0.4 ms an iteration from the first). One-way streams
 * are as fast (2 ranks, 1-64 KiB: the same medians). */
static inline bool proust__shm_rewind_to_stay(struct proust__shm_producer *p)
{
    if (p->populated < PROUST__SHM_POPULATE_NEXT)
        return false; /* the first stage is too short to cycle in */
    p->tail_cache = atomic_load_explicit(&p->ctl->tail, memory_order_acquire);
    return p->tail_cache == p->head;
}

/* In a ping-pong, a ring its consumer has emptied starts again at its
 * beginning (a WRAP record to the end), whose lines are still in both
 * cores' caches: the messages otherwise walk the whole ring, every line
 * cold (2 ranks, 1-4 KiB round trips 1.3-1.7 x those with the ring
 * rewound). Not in a stream: there the consumer still reads the lines the
 * producer would write again (2 ranks, 8-16 KiB messages one way: 1.3-1.6
 * x slower rewound). So only when the consumer answered since our last
 * record, only between PROUST__SHM_HOT and twice that into the ring (a
 * window of a stream has gone further), and only once in every
 * PROUST__SHM_HOT written, as the tail is a line of the other core. */
#define PROUST__SHM_HOT ((size_t)16 << 10)

/* And a ring that has grown starts again at its beginning whenever its
 * consumer has emptied it and a record would go PROUST__SHM_POPULATE_NEXT
 * or more into it (a look at the tail once in every PROUST__SHM_HOT
 * written): the stages a backlog once needed are not walked by every
 * later message, their lines cold. 8 ranks on 2 cores, the sweep's loops:
 * all-to-alls of 32 KiB blocks after some of 64 KiB 187 -> 100 us (Open
 * MPI 150), `exchange` 32 KiB 49 -> 31; one-way streams alike (2 ranks,
 * 256 KiB - 4 MiB, medians of 9). */
static inline bool proust__shm_rewind(struct proust__shm_producer *p, size_t off, size_t rec)
{
    /* (rec <= off: the record fits before the lines the WRAP pads) */
    if (__builtin_expect(off + rec + PROUST__SHM_LINE > p->populated, 0) && rec <= off)
        return proust__shm_rewind_to_stay(p);
    if (off >= PROUST__SHM_POPULATE_NEXT && rec <= off && p->head >= p->hot_check) {
        p->hot_check = p->head + PROUST__SHM_HOT;
        p->tail_cache = atomic_load_explicit(&p->ctl->tail, memory_order_acquire);
        return p->tail_cache == p->head;
    }
    if (off < PROUST__SHM_HOT || off >= 2 * PROUST__SHM_HOT || rec > off ||
        p->head < p->hot_check || p->size < 4 * PROUST__SHM_HOT ||
        !atomic_load_explicit(&p->answered, memory_order_relaxed))
        return false;
    p->hot_check = p->head + PROUST__SHM_HOT;
    p->tail_cache = atomic_load_explicit(&p->ctl->tail, memory_order_acquire);
    return p->tail_cache == p->head;
}

/* Pages for [addr, addr + len) now: PROUST_OK, or PROUST_ERR_NOMEM when
 * the memory is not there (/dev/shm full, a memory limit), where touching
 * them would be a SIGBUS. */
int proust__shm_prefault(void *addr, size_t len);
/* Pages up to `end` data bytes at least (ring_write's slow path). */
int proust__shm_ring_populate(struct proust__shm_producer *p, size_t end);

/* Inline: on the send fast path the kind is a constant, so the header size
 * and the PUT branch fold away. */
static inline __attribute__((always_inline)) int
proust__shm_ring_write(struct proust__shm_producer *p, uint16_t kind, uint64_t token,
                       uint64_t offset, const struct iovec *iov, int iovcnt, size_t len)
{
    size_t hdr = kind == SHM_REC_PUT ? PROUST__SHM_PUT_HDR : PROUST__SHM_REC_HDR;
    size_t rec = proust__shm_round_line(hdr + len);
    size_t off = (size_t)(p->head & (p->size - 1)); /* size is a power of two */
    size_t to_end = p->size - off;
    /* a record never straddles the end: pad to the end with a WRAP record */
    bool wrap = rec > to_end || proust__shm_rewind(p, off, rec);
    if (atomic_load_explicit(&p->answered, memory_order_relaxed))
        atomic_store_explicit(&p->answered, false, memory_order_relaxed);
    size_t need = wrap ? to_end + rec : rec;
    if (!proust__shm_has_room(p, need))
        return PROUST_ERR_BUSY;
    /* the furthest line written (and the next stamp the consumer reads) */
    size_t end = (wrap ? (rec > off ? rec : off) : off + rec) + PROUST__SHM_LINE;
    if (__builtin_expect(end > p->populated, 0) && proust__shm_ring_populate(p, end) != PROUST_OK)
        return PROUST_ERR_NOMEM;
    if (wrap) {
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
         * plain moves instead of calls (40: both headers of a packet of
         * one message, as proust__send_eager_now writes them) */
        switch (iov[i].iov_len) {
        case 8: memcpy(dst, iov[i].iov_base, 8); break;
        case 32: memcpy(dst, iov[i].iov_base, 32); break;
        case 40: memcpy(dst, iov[i].iov_base, 40); break;
        default: proust_copy(dst, iov[i].iov_base, iov[i].iov_len); break;
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


/* The next complete record, or NULL; *err set to a why-string and NULL
 * returned if the record is malformed. The empty case, polled in a loop,
 * is inline: one load and a compare. Ring sizes are powers of two. */
const struct proust__shm_rec *proust__shm_ring_peek_slow(struct proust__shm_consumer *c,
                                                         const char **err);
static inline const struct proust__shm_rec *proust__shm_ring_peek(struct proust__shm_consumer *c,
                                                                  const char **err)
{
    struct proust__shm_rec *r = (struct proust__shm_rec *)(c->data + (c->pos & (c->size - 1)));
    if (atomic_load_explicit(&r->stamp, memory_order_acquire) != c->pos + 1)
        return NULL;
    return proust__shm_ring_peek_slow(c, err);
}
/* Our page-table entries for the ring's lines up to `end` (consumer). */
void proust__shm_ring_map_more(struct proust__shm_consumer *c, size_t end);
/* Release the record returned by peek. */
void proust__shm_ring_consume(struct proust__shm_consumer *c, const struct proust__shm_rec *r);
/* Publish the tail so the producer sees the space (after a batch). */
static inline void proust__shm_ring_publish(struct proust__shm_consumer *c)
{
    if (c->published != c->pos) {
        atomic_store_explicit(&c->ctl->tail, c->pos, memory_order_release);
        c->published = c->pos;
    }
}

#endif
