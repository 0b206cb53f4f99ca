/*
 * ofi.h — the ofi rail's private state, shared by its files: ofi.c (the
 * provider, the endpoint, addresses), ofi_io.c (packets, puts, polling) and
 * ofi_wire.c (the header every message carries, checked on arrival).
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

#define OFI_BUF_SIZE (64u * 1024u) /* one message: header and payload */
#define OFI_RECV_BUFS 64           /* receives posted ahead */
#define OFI_SEND_SLAB 64           /* send buffers are added this many at a time */
#define OFI_MAX_IOV 128            /* the engine's packets: gathered into one buffer */
#define OFI_RDV_THRESHOLD (32u * 1024u)
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
enum { OFI_MSG_PACKET = 1, OFI_MSG_PUT = 2 };
struct ofi_hdr {
    uint32_t src;  /* sender's rank */
    uint16_t kind; /* OFI_MSG_* */
    uint16_t magic;
    uint32_t seq; /* per (sender, receiver): delivery order */
    uint32_t pad;
    uint64_t token;  /* put: the receiver's token */
    uint64_t offset; /* put: where in the destination */
};
#define OFI_MAGIC 0x0f1au
/* A message as it arrived, checked: kind, sender, payload. */
struct ofi_msg {
    int kind;
    int src;
    uint32_t seq;
    uint64_t token, offset;
    const uint8_t *payload;
    size_t len;
};
/* Check a message of `len` bytes from the wire (any bytes: a provider
 * delivers whatever a peer sent); PROUST_OK and *out, or PROUST_ERR_PROTO
 * with *why set. */
int proust__ofi_parse(const void *buf, size_t len, int nranks, struct ofi_msg *out,
                      const char **why);

/* ---- state ------------------------------------------------------------------- */
enum { OFI_OP_RECV = 1, OFI_OP_SEND = 2, OFI_OP_SEND_ZC = 3 };

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
};

/* A message that came ahead of its turn, kept until it comes. */
struct ofi_early {
    struct ofi_early *next;
    uint32_t seq;
    size_t len;
    uint8_t bytes[];
};

struct ofi_peer {
    fi_addr_t addr;         /* FI_ADDR_NOTAVAIL until first used */
    uint32_t send_seq;      /* next to send (gate lock) */
    uint32_t recv_seq;      /* next to deliver (poll) */
    struct ofi_early *early; /* by seq (poll) */
    _Atomic int failed;     /* 0 or the PROUST_ERR_* it failed with */
    bool reachable;         /* same provider and fabric as ours */
    struct ofi_op *q_head, *q_tail; /* posted when the provider had room (gate lock) */
    struct ofi_op *flight;          /* posted, not completed (flight_lock) */
};

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

/* ofi.c: the providers present (for proust-info): one line each, the one
 * PROUST_OFI_PROVIDER picks marked; returns the bytes written. */
size_t proust__ofi_describe(char *out, size_t cap);

#endif
