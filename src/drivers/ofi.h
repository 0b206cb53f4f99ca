/*
 * ofi.h — the ofi rail's private state, shared by its files: ofi.c (the
 * provider, the endpoint, addresses), ofi_io.c (packets, puts, polling),
 * ofi_pull.c (large puts the receiver reads from the sender's memory),
 * ofi_get.c (large blocking sends the receiver reads as it matches them),
 * ofi_rma.c (one-sided writes and reads into memory peers registered),
 * ofi_ring.c (seed 003's slot rings: small messages by one remote write)
 * and ofi_wire.c (the header every message carries, checked on arrival).
 *
 * One reliable-datagram (FI_EP_RDM) endpoint per process on the provider
 * PROUST_OFI_PROVIDER names (or the best one present), one completion
 * queue, one address vector filled on first use of a peer. Every message
 * is one send: a 32-byte header (sender's rank, kind, sequence number,
 * put token and offset) then the payload; receives land in buffers posted
 * ahead, and need no FI_SOURCE. A provider may complete a large message
 * after a small one sent later (tcp;ofi_rxm's rendezvous), so messages
 * carry a sequence number per pair and the receiver delivers them in
 * order, holding early ones (the engine relies on order: a DONE after the
 * put it follows).
 */
#ifndef PROUST_DRIVERS_OFI_H
#define PROUST_DRIVERS_OFI_H

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/lock.h"
#include "drivers/driver.h"
#include "proust.h"

#define OFI_BUF_SIZE (64u * 1024u + 256u) /* one message: headers and 64 KiB */
#define OFI_RECV_BUFS 64           /* receives posted ahead */
#define OFI_SEND_SLAB 64           /* send buffers are added this many at a time */
#define OFI_MAX_IOV 128            /* the engine's packets: gathered into one buffer */
/* eager up to what one message holds: a 64 KiB message in one provider
 * message took 14 us, by rendezvous 27 (PERFORMANCE "The ofi rail reads") */
#define OFI_RDV_THRESHOLD OFI_BUF_SIZE
#define OFI_READ_MIN (256u * 1024u)       /* puts the receiver reads (measured: PERFORMANCE) */
#define OFI_PULL_FRAGMENT (512u * 1024u) /* the engine's puts, when read */
#define OFI_GET_GIVE_UP_S 30 /* a get() whose peer (polling, its caller waits) never answers */
#define OFI_GET_CHECK_NS (200ull * 1000000ull) /* a get() waiting asks for peer checks this often */
#define OFI_LATENCY_US 15.0 /* profile until calibration measures it */
#define OFI_BANDWIDTH_GBS 1.0

/* ---- libfabric (ofi_lib.c) ------------------------------------------------------ */
/* Its exported functions, loaded when the rail first opens: linking it
 * would cost every process ~0.2 s at start (its providers' libraries),
 * whether it uses the rail or not. The rest of its API is inline. */
struct ofi_lib {
    int (*getinfo)(uint32_t version, const char *node, const char *service, uint64_t flags,
                   const struct fi_info *hints, struct fi_info **info);
    void (*freeinfo)(struct fi_info *info);
    struct fi_info *(*dupinfo)(const struct fi_info *info);
    int (*fabric)(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
    const char *(*strerror)(int errnum);
};
extern struct ofi_lib proust__ofi;
/* PROUST_OK, or PROUST_ERR_NOT_SUPPORTED (said why, once). */
int proust__ofi_load(void);

/* ---- the header (ofi_wire.c) ------------------------------------------------ */
/* PACKET: an engine packet. PUT: put bytes inline. PULL: a put the
 * receiver reads (fi_read) from the sender's registered memory, described
 * by a struct ofi_pull_desc. PULL_ACK: the read is over (struct
 * ofi_pull_ack), outside the sequence: nothing waits behind it. */
/* RING_REQ: give me a slot ring (in the sequence). RING_GRANT: here it is
 * (struct ofi_ring_grant; 0 slots: no), and CREDIT: nothing but the
 * header's credit, both outside the sequence (ofi_ring.c). */
enum {
    OFI_MSG_PACKET = 1,
    OFI_MSG_PUT = 2,
    OFI_MSG_PULL = 3,
    OFI_MSG_PULL_ACK = 4,
    OFI_MSG_RING_REQ = 5,
    OFI_MSG_RING_GRANT = 6,
    OFI_MSG_CREDIT = 7,
};
struct ofi_hdr {
    uint32_t src;  /* sender's rank */
    uint16_t kind; /* OFI_MSG_* */
    uint16_t magic;
    uint32_t seq; /* per (sender, receiver): delivery order */
    /* slot rings: how many of the receiver's slot writes into the
     * sender's ring the sender has consumed (wrapping; 0 without a ring) */
    uint32_t credit;
    uint64_t token;  /* put: the receiver's token */
    uint64_t offset; /* put: where in the destination */
};
#define OFI_MAGIC 0x0f1au
struct ofi_pull_desc {
    uint64_t raddr;  /* where the bytes are, as the sender's key names them */
    uint64_t rkey;   /* the sender's registration key */
    uint64_t len;    /* bytes to read */
    uint64_t cookie; /* the sender's name for this put, sent back */
};
struct ofi_pull_ack {
    uint64_t cookie;
    int32_t status; /* 0: read (or dropped: a token the engine did not know) */
    uint32_t pad;
};
struct ofi_ring_grant {
    uint64_t raddr; /* the ring's address as the key names it */
    uint64_t rkey;
    uint32_t slots;     /* 0: refused (the receiver holds its most rings) */
    uint32_t slot_size; /* bytes of a slot */
};
/* A slot: this head, the message, padding to 8 bytes, then the stamp
 * again (and 4 zero bytes). The stamp of the n-th write into a ring
 * (from 0) is ofi_slot_stamp(n): the receiver takes a slot when both
 * stamps are the one it expects, then zeroes what it read. */
struct ofi_slot_head {
    uint32_t len; /* message bytes */
    uint32_t stamp;
};
#define OFI_SLOT_BYTES(len) (2 * sizeof(struct ofi_slot_head) + (((len) + 7) & ~(size_t)7))
#define OFI_SLOT_MIN 256
static inline uint32_t ofi_slot_stamp(uint64_t n)
{
    return (uint32_t)(n % 0xFFFFFFFFull) + 1; /* never 0: a zeroed slot is empty */
}

/* A message as it arrived, checked: kind, sender, payload. */
struct ofi_msg {
    int kind;
    int src;
    uint32_t seq;
    uint32_t credit;
    uint64_t token, offset;
    const uint8_t *payload;
    size_t len;
    struct ofi_pull_desc pull; /* PULL */
    struct ofi_pull_ack ack;   /* PULL_ACK */
    struct ofi_ring_grant grant; /* RING_GRANT */
};
/* Check a message of `len` bytes from the wire (any bytes: a provider
 * delivers whatever a peer sent); PROUST_OK and *out, or PROUST_ERR_PROTO
 * with *why set. */
int proust__ofi_parse(const void *buf, size_t len, int nranks, struct ofi_msg *out,
                      const char **why);

/* ---- state ------------------------------------------------------------------- */
/* READ: a pull's read (ofi_pull.c); READ_SYNC: a get()'s (ofi_get.c) */
/* RMA: a one-sided write or read for the engine (ofi_rma.c) */
enum {
    OFI_OP_RECV = 1,
    OFI_OP_SEND = 2,
    OFI_OP_SEND_ZC = 3,
    OFI_OP_READ = 4,
    OFI_OP_READ_SYNC = 5,
    OFI_OP_RMA = 6
};

/* One operation the provider holds: its context comes first (FI_CONTEXT). */
struct ofi_op {
    struct fi_context fctx;
    uint8_t kind;
    int peer;
    void *engine_ctx; /* a send the engine waits for (send_done), or NULL */
    struct ofi_op *next;
    /* posted and not completed: in its peer's flight list (flight_lock) */
    struct ofi_op *fl_next, *fl_prev;
    bool posted;    /* handed to the provider (its completion will come) */
    bool in_flight; /* posted, and the engine not yet told (flight_lock) */
    size_t len;
    uint8_t *buf; /* RECV, SEND: OFI_BUF_SIZE bytes; SEND_ZC: NULL */
    void *desc;   /* its registration (FI_MR_LOCAL) */
    /* SEND_ZC: the header and the caller's bytes, sent as two pieces */
    struct ofi_hdr hdr;
    const void *zc_buf;
    /* READ: the put being read (hdr.token, hdr.offset, len into buf) from
     * the sender's pull, and the local registration of buf (FI_MR_LOCAL) */
    struct ofi_pull_desc pull;
    struct fid_mr *mr;
    struct ofi_put_group *group; /* a piece of a put sent as several messages */
    _Atomic int sync_state; /* READ_SYNC: 0 on its way, 1 done, -1 - err failed */
    /* RMA: write or read, where in the peer (address as its key names it,
     * key), and the next one waiting for room (rma_lock) */
    bool rma_write;
    bool atomic; /* an atomic: the op of a struct ofi_atomic (ofi_atomic.c) */
    uint64_t raddr, rkey;
    struct ofi_op *rma_next;
    bool slot_write; /* SEND: a message written into the peer's slot ring */
};

/* The key to a peer's registered memory: what a get() reads with (the
 * sender's expose(), ofi_get.c) and what rma() writes or reads through
 * (the peer's mem_register, ofi_rma.c). raddr: the memory's address as
 * the key names it (0: offsets). */
struct ofi_get_key {
    uint64_t raddr, rkey, len;
};

/* A completion a get() read from the queue, kept for poll. */
struct ofi_stashed {
    struct ofi_stashed *next;
    struct ofi_op *op;
    size_t len;
    int err; /* 0, or the positive fi error of a failure */
};

/* A put larger than a message and below the read threshold goes as
 * several messages; the engine hears once, when the last is done. */
struct ofi_put_group {
    _Atomic int left;   /* pieces not done */
    _Atomic int status; /* the first error, or PROUST_OK */
    void *ctx;
};

/* A put the receiver reads from our memory (ofi_pull.c): registered until
 * its PULL_ACK comes back; then the engine hears (send_done). */
struct ofi_pull {
    struct ofi_pull *next, *prev; /* its peer's list (flight_lock) */
    uint64_t cookie;
    void *engine_ctx;
    struct fid_mr *mr;         /* registered for it, or */
    struct ofi_region *region; /* inside memory registered already */
};

/* A message that came ahead of its turn, kept until it comes. */
struct ofi_early {
    struct ofi_early *next;
    uint32_t seq;
    size_t len;
    uint8_t bytes[];
};

struct ofi_peer {
    _Atomic fi_addr_t addr; /* FI_ADDR_NOTAVAIL until first used (proust__ofi_peer_addr) */
    uint32_t send_seq;      /* next to send (gate lock) */
    uint32_t recv_seq;      /* next to deliver (poll) */
    struct ofi_early *early; /* by seq (poll) */
    _Atomic int failed;     /* 0 or the PROUST_ERR_* it failed with */
    bool reachable;         /* same provider and fabric as ours */
    struct ofi_op *q_head, *q_tail; /* posted when the provider had room (gate lock) */
    struct ofi_op *flight;          /* posted, not completed (flight_lock) */
    struct ofi_pull *pulls;         /* our puts it reads, unacknowledged (flight_lock) */
    /* slot rings (ofi_ring.c). The one this peer granted us: its state
     * (OFI_RING_*; READY published after the fields below), where, and the
     * writes made (gate lock) and consumed (the peer's word, highest seen) */
    _Atomic int ring_state;
    uint32_t msgs_sent; /* gate lock: messages before we ask */
    uint64_t ring_raddr, ring_rkey;
    uint32_t ring_slots, ring_slot;
    _Atomic uint64_t ring_written; /* (written under the gate lock, read by poll) */
    _Atomic uint32_t ring_consumed;
    /* the one we granted it (poll's), what of it we consumed, and the
     * last count this peer was told (headers and CREDIT messages) */
    struct ofi_ring_in *ring_in;
    _Atomic uint32_t in_consumed, in_told;
};
enum { OFI_RING_NONE = 0, OFI_RING_ASKED, OFI_RING_READY, OFI_RING_DENIED };

/* A slab of send buffers and its registration. */
struct ofi_slab {
    struct ofi_slab *next;
    struct fid_mr *mr;
    struct ofi_op ops[OFI_SEND_SLAB];
    uint8_t *mem;
};

struct ofi_rail {
    int rank, size;
    struct fi_info *info; /* the provider chosen */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    /* blocking waits: an epoll set of the completion queue's wait fd and
     * an eventfd of ours (arm rings it when the provider says it is not
     * safe to sleep); -1 where the provider has no wait fd */
    int epfd, kickfd;
    bool mr_local;     /* FI_MR_LOCAL: our buffers are registered */
    size_t inject_max; /* messages up to this go by fi_inject */
    bool zc_puts;      /* puts go straight from the caller's memory */
    /* puts of pull_min bytes and more are read by the receiver (the
     * provider has RMA and keys of 8 bytes at most); 0: never */
    size_t pull_min;
    bool rma_ok; /* FI_RMA with keys of 8 bytes at most: one-sided access */
    /* one-sided transfers the provider had no room for (ofi_rma.c), posted
     * by poll; writes ask for FI_DELIVERY_COMPLETE unless refused once */
    proust__lock_t rma_lock;
    struct ofi_op *rma_waiting, *rma_waiting_tail;
    _Atomic bool rma_any_waiting;
    uint64_t write_flags;
    _Atomic uint64_t rma_writes, rma_reads, rma_atomics;
    /* atomics (ofi_atomic.c): elements one call carries, by call (atomic,
     * fetch, compare), operation and type (0: the provider cannot), read
     * at open; whether they apply in the order posted */
    bool atomic_ok, atomic_ordered;
    uint32_t atomic_max[3][PROUST_ATOMIC_OPS][PROUST_ATOMIC_TYPES];
    /* slot rings (ofi_ring.c): whether to ask for them, and their shape;
     * the rings granted (poll's), and what went through them */
    bool ring_on;
    bool ring_cq_data; /* slot writes carry remote CQ data: a completion wakes the receiver */
    const char *ring_why;
    uint32_t ring_after, ring_peers, ring_slots, ring_slot;
    struct ofi_ring_in **rings_in;
    uint32_t nrings_in;
    uint8_t *ring_scratch; /* poll's: a slot's message, copied out to deliver */
    bool ring_noticed;     /* poll's: a write's notice came since the rings were read */
    uint32_t ring_polls;   /* poll's */
    _Atomic uint64_t ring_msgs_out, ring_msgs_in, ring_notices;
    _Atomic uint64_t next_cookie;
    /* poll's own: reads and acknowledgements the provider had no room for */
    struct ofi_op *reads_waiting, *acks_waiting;
    _Atomic uint64_t pulls_sent, pulls_read, gets_done;
    /* memory registered until the user releases it (mem_register: MPI
     * windows, MPI_Alloc_mem): puts and sends from inside it use it
     * instead of registering again (ofi_rma.c; under expose_lock) */
    struct ofi_region *regions;
    _Atomic uint64_t reg_hits, reg_misses;
    /* gets (ofi_get.c): what expose() registered, and what a get() read
     * from the completion queue for poll */
    proust__lock_t expose_lock;
    struct ofi_exposure *exposures;
    proust__lock_t stash_lock;
    struct ofi_stashed *stash_head, *stash_tail;
    _Atomic bool stash_nonempty;
    /* reads given up on (their peer never answered): a completion may
     * still name them, so they live until the endpoint is closed */
    struct ofi_op *abandoned;
    /* receives posted ahead, and their registration */
    struct ofi_op recv_ops[OFI_RECV_BUFS];
    uint8_t *recv_mem;
    struct fid_mr *recv_mr;
    struct ofi_op *repost; /* receives the provider had no room to repost */
    /* send buffers: a free list over slabs, added as needed */
    proust__lock_t send_lock;
    struct ofi_op *send_free;
    struct ofi_slab *slabs;
    /* every libfabric call of the data path (posts, completion reads,
     * address inserts, trywait): tcp;ofi_rxm lost messages, completing
     * receives with nothing, when a sender and the poller called in at
     * once, its FI_THREAD_SAFE domain notwithstanding */
    proust__lock_t fi_lock;
    proust__lock_t flight_lock; /* the peers' flight lists */
    struct ofi_peer *peers;
    uint8_t *cards; /* peers' addresses, addrlen bytes each */
    size_t addrlen;
    _Atomic int warned; /* a malformed or stale message was reported once */
    _Atomic int recv_failed_warned; /* a failed receive was reported once */
    char device[64];
    char why[160]; /* why this provider */
};

/* ofi_io.c: the data path (ops of proust__rail_ofi) */
int proust__ofi_post_receives(proust__rail_t *rail);
void proust__ofi_free_sends(struct ofi_rail *o);
int proust__ofi_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt,
                     void *ctx);
int proust__ofi_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                    const void *buf, size_t len, void *ctx);
int proust__ofi_busy(proust__rail_t *rail, int peer);
int proust__ofi_flush(proust__rail_t *rail, int peer);
int proust__ofi_poll(proust__rail_t *rail);
void proust__ofi_disconnect(proust__rail_t *rail, int peer, int status);

/* ofi_io.c, for ofi_pull.c: send buffers, message headers, posting */
struct ofi_op *proust__ofi_take_buffer(struct ofi_rail *o);
void proust__ofi_give_back(struct ofi_rail *o, struct ofi_op *op);
void proust__ofi_fill_hdr(struct ofi_hdr *h, struct ofi_rail *o, int peer, int kind,
                          uint64_t token, uint64_t offset);
int proust__ofi_submit(struct ofi_rail *o, int peer, struct ofi_op *op);
int proust__ofi_post(struct ofi_rail *o, struct ofi_op *op, fi_addr_t to);
int proust__ofi_peer_addr(struct ofi_rail *o, int peer, fi_addr_t *out);
/* op in its peer's flight list (a disconnect answers for what is there);
 * take: out of it, true if it was there (nobody answered for it yet) */
void proust__ofi_flight_add(struct ofi_rail *o, struct ofi_op *op);
bool proust__ofi_flight_take(struct ofi_rail *o, struct ofi_op *op);
bool proust__ofi_flight_has(struct ofi_rail *o, struct ofi_op *op);
int proust__ofi_register(struct ofi_rail *o, void *buf, size_t len, uint64_t access,
                         struct fid_mr **mr);
void proust__ofi_close_mr(struct ofi_rail *o, struct fid_mr *mr); /* NULL: nothing */

/* ofi_pull.c: puts the receiver reads */
int proust__ofi_pull_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                         const void *buf, size_t len, void *ctx);
void proust__ofi_on_pull(proust__rail_t *rail, const struct ofi_msg *m);
void proust__ofi_on_pull_ack(proust__rail_t *rail, const struct ofi_msg *m);
void proust__ofi_read_done(proust__rail_t *rail, struct ofi_op *op, int status, int err);
int proust__ofi_pull_retry(proust__rail_t *rail);
void proust__ofi_pull_disconnect(proust__rail_t *rail, int peer, int status);
void proust__ofi_pull_close(struct ofi_rail *o);

/* ofi_get.c: rendezvous by get (the RTS carries the sender's key) */
/* Check `key` for [offset, offset + len) at `peer`, whose address it gives:
 * PROUST_OK, OFI_NOTHING_TO_MOVE (len 0), PROUST_ERR_PROTO (not a key of
 * ours, or too short), or the peer's failure (ofi_get.c). */
#define OFI_NOTHING_TO_MOVE 1
int proust__ofi_remote_check(struct ofi_rail *o, int peer, const void *key, size_t key_len,
                             uint64_t offset, size_t len, struct ofi_get_key *k, fi_addr_t *to);
int proust__ofi_expose(proust__rail_t *rail, const void *buf, size_t len, void *key, size_t cap);
void proust__ofi_unexpose(proust__rail_t *rail, const void *buf, size_t len);
int proust__ofi_get(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                    uint64_t offset, void *dst, size_t len);
/* poll: hand the completions gets kept to `handle`, oldest first; returns
 * the events it counted */
int proust__ofi_stashed(proust__rail_t *rail,
                        int (*handle)(proust__rail_t *, struct ofi_op *, size_t, int));
void proust__ofi_get_close(struct ofi_rail *o);

/* ofi_rma.c: one-sided access (ops of proust__rail_ofi) */
int proust__ofi_mem_register(proust__rail_t *rail, void *buf, size_t len, void **handle,
                             void *key, size_t cap);
void proust__ofi_mem_release(proust__rail_t *rail, void *handle);
int proust__ofi_rma(proust__rail_t *rail, int peer, int write, void *local, size_t len,
                    const void *key, size_t key_len, uint64_t offset, void *ctx);
/* Where [buf, buf + len) lies inside memory mem_register registered: the
 * region, referenced, with its key and the address a peer reads it at
 * (counted as a hit), else NULL (a miss: the caller registers it). */
struct ofi_region;
struct ofi_region *proust__ofi_region_find(struct ofi_rail *o, const void *buf, size_t len,
                                           uint64_t *rkey, uint64_t *raddr);
/* the same, expose_lock held; and the reference a find took, given back */
struct ofi_region *proust__ofi_region_find_locked(struct ofi_rail *o, const void *buf,
                                                  size_t len, uint64_t *rkey, uint64_t *raddr);
void proust__ofi_region_put(struct ofi_rail *o, struct ofi_region *r); /* NULL: nothing */
void proust__ofi_registrations(proust__rail_t *rail, uint64_t *hits, uint64_t *misses);
/* Hand an RMA op (ofi_rma.c's transfers, ofi_atomic.c's atomics) to the
 * provider, tracked in its peer's flight list: PROUST__INPROGRESS, or an
 * error (the op released). */
int proust__ofi_rma_start(proust__rail_t *rail, struct ofi_op *op);
/* "write", "read" or "atomic", for messages */
const char *proust__ofi_rma_what(const struct ofi_op *op);

/* ofi_atomic.c: atomics (ops of proust__rail_ofi) */
/* At open, the endpoint made: what the provider can do (atomic_max). */
void proust__ofi_atomic_probe(struct ofi_rail *o);
size_t proust__ofi_atomic_max(proust__rail_t *rail, int op, int type, int fetching);
int proust__ofi_atomic(proust__rail_t *rail, int peer, int op, int type, const void *operand,
                       const void *compare, void *result, size_t count, const void *key,
                       size_t key_len, uint64_t offset, void *ctx);
/* ofi_rma.c's post and release of an atomic op */
int proust__ofi_atomic_post(struct ofi_rail *o, struct ofi_op *op);
void proust__ofi_atomic_release(struct ofi_rail *o, struct ofi_op *op);

/* poll: a transfer's completion or failure (err: positive fi error) */
void proust__ofi_rma_done(proust__rail_t *rail, struct ofi_op *op, int status);
/* poll: post what waited for room; returns the transfers posted */
int proust__ofi_rma_retry(proust__rail_t *rail);
void proust__ofi_rma_close(struct ofi_rail *o);

/* ofi_ring.c: slot rings */
/* Read PROUST_OFI_RING*; PROUST_ERR_INVALID for a bad value. */
int proust__ofi_ring_config(struct ofi_rail *o);
/* send (gate lock): a message built in op (op->len bytes at op->buf) goes
 * into the peer's ring when one is ready, fits and has room: op becomes
 * a slot write. */
void proust__ofi_ring_take(struct ofi_rail *o, int peer, struct ofi_op *op);
/* send (gate lock), before a message: count it, and ask the peer for a
 * ring once PROUST_OFI_RING_AFTER went before. */
void proust__ofi_ring_count(proust__rail_t *rail, int peer);
/* poll: a RING_REQ (in its turn), a RING_GRANT, and every message's credit */
void proust__ofi_on_ring_req(proust__rail_t *rail, const struct ofi_msg *m);
void proust__ofi_on_ring_grant(proust__rail_t *rail, const struct ofi_msg *m);
void proust__ofi_ring_credit(struct ofi_rail *o, const struct ofi_msg *m);
/* poll: deliver what the rings hold (through `deliver`), return credits;
 * returns the events */
int proust__ofi_ring_poll(proust__rail_t *rail,
                          int (*deliver)(proust__rail_t *, const uint8_t *, size_t));
void proust__ofi_ring_close(struct ofi_rail *o);
/* ofi_pull.c: post a message outside the sequence from poll (acks, ring
 * grants, credits): now, or when the provider has room */
void proust__ofi_post_unsequenced(struct ofi_rail *o, struct ofi_op *op);

/* ofi.c: the providers present (for proust-info): one line each, the one
 * PROUST_OFI_PROVIDER picks marked; returns the bytes written. */
size_t proust__ofi_describe(char *out, size_t cap);

#endif
