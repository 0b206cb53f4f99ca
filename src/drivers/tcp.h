/*
 * tcp.h — private to the tcp rail: tcp.c (operations, send path, failures,
 * close), tcp_recv.c (receive path: frame parser) and tcp_conn.c (address
 * choice, listening socket and the all-to-all connection handshake).
 *
 * One TCP connection per peer pair, opened on demand (tcp_lazy.c,
 * PROUST_TCP_CONNECT=lazy, the default): by whichever side first has a
 * message for the other; when both dial at once, the lower rank's dial
 * wins (the higher rank accepts it and drops its own). Every process
 * listens for the whole job. With PROUST_TCP_CONNECT=eager, rank i
 * connects to every rank j >= i at init and accepts from every rank below
 * it (tcp_conn.c). The connection to itself is a socketpair (lazy) or a
 * real loopback connection (eager) whose two ends are used one per
 * direction (one end sends, the other receives).
 *
 * Handshake (both directions, once per connection): the connecting side
 * sends a struct tcp_hello, the accepting side checks it (magic, version,
 * job size, job id, the job's secret, rank) and answers with its own, which
 * the connecting side checks in turn. Only then is the connection used.
 * The secret (16 random bytes) is rank 0's, published through the launcher
 * ("tcp.secret"): a process that did not get it from the job's launcher
 * cannot pose as a rank. A refused hello is answered with our hello with
 * the secret zeroed, so that a Proust process of another job learns why.
 *
 * Frames (after the handshake), all in HOST BYTE ORDER: peers must share the
 * byte order (heterogeneous-endianness clusters are not supported; a peer
 * with the other order is recognised by the hello magic and refused).
 *
 *   every frame   struct tcp_frame (8 bytes): len, magic, kind, flags = 0
 *   PACKET        header, then len payload bytes
 *   PUT           struct tcp_put_frame (24 bytes: header + token + offset),
 *                 then len payload bytes, received straight into the
 *                 destination the receiving engine names (put_target)
 *   BYE           header with len 0: the sender is closing the rail
 *                 normally; the end of stream that follows is not a failure
 *
 * Each frame is followed by 0..7 zero bytes so that the next one starts at a
 * multiple of 8 in the stream; the receiver keeps that alignment in its
 * staging buffer, so a packet's data is always 8-byte aligned when delivered.
 * A frame with a wrong magic, non-zero flags, an unknown kind or a length
 * above the limits (max_packet for PACKET, put_fragment for PUT) is a
 * protocol error: the connection is dropped and reported with
 * PROUST_ERR_PROTO.
 */
#ifndef PROUST_DRIVERS_TCP_H
#define PROUST_DRIVERS_TCP_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/driver.h"

/* ---- Wire format ---------------------------------------------------------- */
#define TCP_FRAME_MAGIC 0x7054u /* "Tp" */
enum { TCP_FRAME_PACKET = 1, TCP_FRAME_PUT = 2, TCP_FRAME_BYE = 3 };

struct tcp_frame {
    uint32_t len;   /* payload bytes, padding not counted */
    uint16_t magic; /* TCP_FRAME_MAGIC */
    uint8_t kind;   /* TCP_FRAME_* */
    uint8_t flags;  /* 0 */
};

struct tcp_put_frame {
    struct tcp_frame h;
    uint64_t token;
    uint64_t offset;
};

_Static_assert(sizeof(struct tcp_frame) == 8, "tcp frame header is 8 bytes");
_Static_assert(sizeof(struct tcp_put_frame) == 24, "tcp put header is 24 bytes");

#define TCP_ALIGN 8u
/* Zero bytes after a payload of `len` bytes. */
static inline size_t tcp_pad(size_t len)
{
    return (TCP_ALIGN - (len & (TCP_ALIGN - 1))) & (TCP_ALIGN - 1);
}

#define TCP_HELLO_MAGIC 0x5052555354544350ull /* "PRUSTTCP" as a big-endian number */
#define TCP_HELLO_VERSION 2u
#define TCP_SECRET_LEN 16

struct tcp_hello {
    uint64_t magic;
    uint32_t version;
    int32_t rank; /* sender's rank */
    int32_t size; /* job size */
    uint32_t reserved;
    char jobid[64];
    unsigned char secret[TCP_SECRET_LEN]; /* the job's (zero in a refusal) */
};

/* ---- Limits and profile --------------------------------------------------- */
#define TCP_MAX_IOV 128 /* the engine packs up to (max_iov - 1) / 3 chunks per packet */
#define TCP_MAX_PACKET (128u * 1024u)
/* eager up to what one packet holds (the gate takes the headers off): a
 * 64 KiB message, a favourite size of benchmarks, went by rendezvous, its
 * round trip before the data (2 ranks, 64 KiB: latency 61 -> 39 us,
 * exchange 72 -> 50, Open MPI 63 / 85; docs/PERFORMANCE.md, issue 43) */
#define TCP_RDV_THRESHOLD TCP_MAX_PACKET
#define TCP_PUT_FRAGMENT (1024u * 1024u)
#define TCP_LATENCY_US 20.0
#define TCP_BANDWIDTH_GBS 1.2

/* ---- State ---------------------------------------------------------------- */
struct tcp_sreq; /* a queued outbound frame (tcp.c) */

/* Receive state of one connection: touched by the polling thread only. */
struct tcp_rx {
    char *buf;       /* staging buffer */
    size_t cap;      /* its size */
    size_t start;    /* buffered, unparsed bytes are buf[start, end) */
    size_t end;
    uint64_t cons;   /* stream offset of buf[start]; start == cons (mod 8) */
    size_t need;     /* bytes from start the next frame needs */
    int in_body;     /* inside a PUT payload */
    char *dst;       /* where it goes (NULL: discard) */
    int put_ok;      /* put_target gave a destination: call put_done */
    size_t body_left;
    uint32_t body_len;
    uint64_t token, offset;
    size_t skip;     /* padding still to skip */
    int bye;         /* peer said BYE: its end of stream is normal */
    int dead;        /* connection dropped: read nothing more */
};

enum { TCP_LIVE = 0 };
enum { TCP_CONN_NONE = 0, TCP_CONN_PENDING = 1, TCP_CONN_UP = 2 };

struct tcp_conn {
    int peer;
    int send_fd; /* same socket as recv_fd, except for the self connection */
    int recv_fd;
    char addr[64]; /* the peer's address we dial, "a.b.c.d:port", for messages */
    int dialable;  /* it published an address we can reach */
    /* On demand (tcp_lazy.c): TCP_CONN_NONE, _PENDING (a dial or an
     * accepted hello in flight) or _UP (send_fd/recv_fd set). */
    atomic_int link;

    /* TCP_LIVE, or the PROUST_ERR_* status that stopped the connection. */
    atomic_int state;
    atomic_int send_errno; /* errno of a failed send, for the report */
    atomic_int reported;   /* peer_failed upcall done */

    /* Send side: serialised by the engine per peer; the lock only guards
     * against the polling thread detaching the queue of a failed peer. */
    pthread_mutex_t send_lock;
    struct tcp_sreq *qhead, *qtail;
    atomic_int queued; /* qhead != NULL, readable without the lock */
    int out_armed;     /* EPOLLOUT registered while the queue is non-empty */

    struct tcp_rx rx;
};

struct tcp_rail {
    int rank, size;
    int listen_fd;
    int epfd;
    char addr[512]; /* what this process published (tcp_addr.c) */
    char ifname[64]; /* the interface that owns it ("" if none found) */
    struct tcp_conn *conns; /* size entries */
    int nlocks;             /* conns whose send_lock was initialised */
    int connected;          /* handshake completed */
    long timeout_s;
    atomic_int polling;     /* a poll is in progress (no re-entry) */
    unsigned char secret[TCP_SECRET_LEN]; /* the job's, from rank 0 */

    /* on demand (tcp_lazy.c) */
    int lazy;
    proust__boot_t *boot;
    struct sockaddr_in *where;   /* each peer's address to dial */
    pthread_mutex_t hs_lock;     /* guards hs[] and each handshake */
    int hs_lock_ok;
    struct tcp_hs **hs;          /* handshakes in flight, dials and accepts */
    int nhs, hscap;
    atomic_int hs_active;        /* nhs > 0, read without the lock */
    unsigned polls;              /* direct polling: accept every so often */
    atomic_int opened, accepted; /* connections this process dialled / accepted */
    atomic_int nup;              /* connections up, ours to ourselves included */
};

/* A connection being set up: the hello exchange (tcp_conn.c, tcp_lazy.c). */
enum { HS_WAIT, HS_CONNECTING, HS_XCHG, HS_DONE };
struct tcp_hs {
    int fd;
    int peer;      /* connector: the rank dialled; acceptor: -1 until its hello */
    int connector; /* 1: we dialled; 0: we accepted */
    int phase;
    double retry_at, backoff;
    double first_try;         /* lazy: when this peer was first dialled */
    int last_err;             /* errno of the last attempt, or 0 */
    char why[256];            /* the last handshake problem, or "" */
    struct sockaddr_in sa;    /* connector: where to */
    struct tcp_hello out, in; /* ours, theirs */
    size_t out_done, in_done;
    int out_ready; /* `out` is to be written */
    int slot;      /* lazy: index in tcp_rail.hs, the epoll tag */
    int watched;   /* lazy: fd in the epoll set */
    int refused;   /* lazy: connections refused in a row */
};

#define TCP_RX_INITIAL (32u * 1024u)
#define TCP_RX_LIMIT (TCP_MAX_PACKET + 64u) /* largest frame + header + padding + slack */
#define TCP_READS_PER_POLL 4                /* recv calls per connection per poll */
/* Up to this many ranks, poll by recv, not epoll: one peer, one recv a
 * poll, where epoll_wait + recv is two system calls. With two peers or
 * more an empty poll costs a recv each against one epoll_wait (4 ranks, 2
 * per core, 8 B round trip / 2: 43-48 us by recv, 20 by epoll). */
#define TCP_DIRECT_POLL_MAX 2

/* tcp.c */
/* Drop a connection (polling thread): fail its queued sends with
 * PROUST_ERR_CONN and, unless quiet (the peer closed after BYE), report
 * peer_failed(status, why) once. */
void proust__tcp_conn_fail(proust__rail_t *rail, struct tcp_conn *c, int status, int quiet,
                           const char *why);

/* A receive staging buffer of `cap` bytes (its own pages, placed where the
 * rail's receive buffers belong); NULL: out of memory. */
char *proust__tcp_rx_alloc(proust__rail_t *rail, size_t cap);
void proust__tcp_rx_free(char *buf, size_t cap);

/* tcp_recv.c */
/* Read what a readable connection has and deliver its complete frames;
 * returns the number of events (packets, finished puts, a dropped link). */
int proust__tcp_conn_read(proust__rail_t *rail, struct tcp_conn *c);

/* tcp_conn.c */
/* Choose the address, create the non-blocking listening socket, fill t->addr. */
/* Addresses (tcp_addr.c): where to listen (every address unless
 * PROUST_TCP_ADDR names one) and the NIC of the first usable interface;
 * what to publish ("*a,b:port", or "a:port"); and which of a peer's
 * published addresses to dial (PROUST_ERR_CONN: none from here). */
int proust__tcp_bind_addr(struct in_addr *out, bool *any, char *ifname, size_t iflen);
void proust__tcp_describe(char *out, size_t len, bool any, struct in_addr bound, unsigned port);
int proust__tcp_choose(const char *published, bool same_host, struct sockaddr_in *sa,
                       char *shown, size_t shownlen);
int proust__tcp_listen(struct tcp_rail *t);
/* Every peer's address to dial (where[], conns[].addr, .dialable) and the
 * job's secret; PROUST_ERR_CONN (logged) when a peer we must reach
 * published nothing reachable. */
int proust__tcp_resolve(struct tcp_rail *t, proust__boot_t *boot, struct sockaddr_in *where);
/* Connect to every peer (all-to-all handshake) within t->timeout_s; fills
 * conns[].send_fd / recv_fd. PROUST_ERR_CONN (logged) on failure. */
int proust__tcp_handshake(struct tcp_rail *t, proust__boot_t *boot);
/* The hello exchange, shared by both ways of connecting. */
void proust__tcp_hello_make(const struct tcp_rail *t, const proust__boot_t *boot,
                            struct tcp_hello *h);
int proust__tcp_hello_check(const struct tcp_rail *t, const proust__boot_t *boot,
                            const struct tcp_hello *h, char *why, size_t whylen);
void proust__tcp_hs_close(struct tcp_hs *h);
void proust__tcp_hs_retry(struct tcp_hs *h, double now, int err);
void proust__tcp_hs_dial(struct tcp_hs *h, double now);
int proust__tcp_hs_io(struct tcp_hs *h);
const char *proust__tcp_hs_why(const struct tcp_hs *h, char *buf, size_t len);

/* tcp_lazy.c: connections on demand */
#define TCP_EV_LISTEN (1ull << 33) /* epoll tag: the listening socket */
#define TCP_EV_HS (1ull << 34)     /* epoll tag: a handshake, | its slot */
/* After the fence: addresses, the self socketpair, the listening socket
 * in the epoll set. */
int proust__tcp_lazy_start(proust__rail_t *rail);
/* A frame was queued for a peer not connected: dial it unless a dial or
 * an accepted hello from it is in flight. No send lock held. */
void proust__tcp_lazy_want(proust__rail_t *rail, struct tcp_conn *c);
/* Accept, move hellos, retry dials, install finished connections (the
 * polling thread); returns connections installed or failed. */
int proust__tcp_lazy_progress(proust__rail_t *rail);
/* A new data socket for c (polling thread): receive state, epoll; what
 * was queued leaves with the engine's next flush. */
void proust__tcp_install(proust__rail_t *rail, struct tcp_conn *c, int send_fd, int recv_fd);
void proust__tcp_lazy_close(struct tcp_rail *t);
/* Set the usual options on an established data socket. */
void proust__tcp_tune_socket(int fd);

/* For tests: the socket this process sends to `peer` on (raw frames). */
int proust__tcp_debug_send_fd(proust__rail_t *rail, int peer);

#endif
