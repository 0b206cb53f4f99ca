/*
 * inmsg.h — incoming messages: unexpected, or matched and still receiving
 * segments; chunks that arrived ahead of their turn.
 */
#ifndef PROUST_CORE_INMSG_H
#define PROUST_CORE_INMSG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"
#include "proust.h"

struct proust_request;

/* ---- incoming messages: unexpected, or matched but incomplete ------------- */
/* PULLING: an idle pull asked the sender to put the data into our own
 * buffer (unexp_pull.c); not counted in nseg_seen until it lands */
enum { PROUST__SEG_NONE = 0, PROUST__SEG_EAGER, PROUST__SEG_RTS, PROUST__SEG_DONE,
       PROUST__SEG_PULLING };

struct proust__inseg {
    uint8_t state;
    bool pulled; /* EAGER data an idle pull fetched (unexp_pull.c): counts in
                    the session's idle_pulled until released */
    size_t len;  /* segment size as sent */
    void *data;  /* EAGER: private copy of the bytes */
    uint64_t sender_token;
    uint32_t key_len;
    uint8_t key[PROUST__MAX_KEY];
};

struct proust__inmsg {
    struct proust__inmsg *next;
    /* while unexpected (unexp_queue.c): the list's back link, and the
     * links of its bucket in the gate's index */
    struct proust__inmsg *prev, *hnext, *hprev;
    int source;
    uint32_t seq;
    uint16_t nseg;
    uint16_t nseg_seen;
    uint8_t flags;          /* PROUST__CF_SYNC from the first chunk */
    uint64_t sync_token;    /* sender token for the ACK */
    proust_tag_t tag;
    size_t size;            /* whole message size */
    uint64_t arrival;       /* arrival order, for any-source fairness */
    struct proust_request *req; /* NULL while unexpected */
    uint32_t inline_cap;    /* bytes of eager data that fit after seg[] */
    bool cached;            /* a PROUST__INMSG_BLOCK block: back to the cache */
    /* the sender asked to cancel it while an idle pull fetched its data:
     * answered when the data is here (recv_path.c, cancel.c) */
    bool cancel_pending;
    uint64_t cancel_token;
    struct proust__inseg seg[];
};
/* Unexpected small messages are the common case of a receiver that runs
 * behind (a broadcast root, a burst of sends): their descriptor and bytes
 * share one block of this size, recycled through a cache per match stripe.
 * Each stripe keeps its share of PROUST__INMSG_CACHE_BYTES (at least 64
 * blocks), and may keep as much again borrowed from the session, counted
 * with atomics only there: the bursts come from one or a few peers, so one
 * stripe needs the whole budget (with a stripe's share alone, half of a
 * large burst went to malloc and back). A burst of a thousand unexpected
 * messages freed to malloc had glibc trim the heap and fault it in again
 * next time (docs/PERFORMANCE.md, "Figures behind the code"); 4 MiB hold a burst of 8192. */
#define PROUST__INMSG_BLOCK 512
#define PROUST__INMSG_CACHE_BYTES ((size_t)4 << 20)

/* Chunks that arrived ahead of their turn (seq > expected). */
struct proust__stashed {
    struct proust__stashed *next;
    struct proust__chunk_hdr hdr;
    uint8_t body[];
};

#endif
