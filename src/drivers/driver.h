/*
 * driver.h — the contract between the engine and a rail driver.
 *
 * A driver moves bytes between this process and its peers; it knows nothing
 * of tags, matching or requests. It offers two kinds of transfer:
 *   - packets: an iovec sent as one unit, delivered whole to the peer's
 *     engine through upcalls->packet (order preserved per peer);
 *   - puts: bulk data written into a destination the *receiving* engine
 *     names for a (token, offset) pair (upcalls->put_target), without an
 *     intermediate copy where the transport allows; and, where the rail can,
 *     gets: the receiver pulls from memory the sender exposed.
 * Each driver exports one const struct proust__rail_ops, from drivers/<name>.c
 * (a large one spreads its work over drivers/<name>_*.c: shm, tcp).
 *
 * Threading contract (the engine guarantees it, drivers rely on it):
 *   - send / put / flush / busy for one peer are serialised by the engine
 *     (the gate lock of that peer is held); calls for different peers may
 *     run concurrently.
 *   - poll runs on one thread at a time per rail, possibly concurrently with
 *     send/put/flush on any peer.
 *   - Upcalls made from poll may call send/put/flush (the engine takes the
 *     gate lock first). Upcalls made from send/put/flush must not re-enter
 *     the driver for the same peer (the engine only completes requests there).
 */
#ifndef PROUST_DRIVER_H
#define PROUST_DRIVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "boot/boot.h"
#include "proust.h"

/* Returned by send/put when the operation will complete later through
 * upcalls->send_done(ctx). PROUST_OK means it completed already (ctx is not
 * reported). Negative values are PROUST_ERR_* codes. */
#define PROUST__INPROGRESS 1

/* Capability flags */
#define PROUST__RAIL_CAN_GET 0x1u   /* get(): receiver pulls exposed memory */
#define PROUST__RAIL_HAS_FD 0x2u    /* fd(): readable when poll has work */
#define PROUST__RAIL_ZCOPY_PUT 0x4u /* put() lands in place without a bounce copy */
/* What the rail accepted (its send_done said so) still moves only while
 * someone polls it (libfabric providers with manual progress: tcp): a
 * process must keep polling until its peers have it (finalize's fence). */
#define PROUST__RAIL_POLL_TO_MOVE 0x8u
/* A get() is served only while the peer polls (libfabric over tcp reads
 * through the target's own progress): only a send whose caller waits in
 * it (a blocking send, polling) exposes its bytes; the others go by puts,
 * so that no receiver waits in get() on a peer that computes. */
#define PROUST__RAIL_GET_WHILE_WAITED 0x10u
/* One-sided access to memory a peer registered (mem_register, rma): the
 * native proust_rma_* calls and MPI windows across hosts use it. */
#define PROUST__RAIL_CAN_RMA 0x20u
/* Atomic operations on a peer's registered memory (atomic_max, atomic),
 * done by the target's NIC or provider: atomic with each other only.
 * ATOMIC_ORDERED: two atomics from here to one peer apply in the order
 * posted (reads and writes alike), which MPI's accumulate ordering needs. */
#define PROUST__RAIL_CAN_ATOMIC 0x40u
#define PROUST__RAIL_ATOMIC_ORDERED 0x80u

/* Bytes of one element of proust_atomic_type_t `type` (a valid one). */
static inline size_t proust__atomic_type_bytes(int type)
{
    static const unsigned char bytes[PROUST_ATOMIC_TYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    return bytes[type];
}

struct proust__rail_caps {
    size_t max_iov;         /* iovec entries send() accepts */
    size_t max_packet;      /* bytes one packet may carry (>= eager limit) */
    size_t rdv_threshold;   /* messages of this size and above use rendezvous */
    size_t get_threshold;   /* rendezvous of this size and above use get() if CAN_GET */
    size_t put_fragment;    /* the engine splits puts into pieces of at most this */
    size_t write_threshold; /* with write(): when several rendezvous wait, the
                               receiver asks the sender to write those of at
                               least this size itself (both copy); 0 = never */
    size_t stream_max;      /* a rendezvous up to this size whose sender and
                               receiver both wait in blocking calls goes by puts
                               (CTS) even where get() is possible; 0 = never */
    size_t rma_max;         /* CAN_RMA: bytes one rma() moves at most (0: no limit) */
    double latency_us;      /* profile for strategies and placement */
    double bandwidth_gbs;
    unsigned flags;
};

/* Calls from the driver into the engine. */
struct proust__rail_upcalls {
    void *engine;
    /* A packet from `peer` arrived; `data` is valid during the call only. */
    void (*packet)(void *engine, int peer, const void *data, size_t len);
    /* Where do `len` bytes of put (token, offset) from `peer` go? NULL means
     * the engine does not know the token: the driver drops the bytes. */
    void *(*put_target)(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
    /* Those bytes are now in place. */
    void (*put_done)(void *engine, int peer, uint64_t token, uint64_t offset, size_t len);
    /* A send or put that returned PROUST__INPROGRESS finished (status is
     * PROUST_OK or the error that stopped it). */
    void (*send_done)(void *engine, void *ctx, int status);
    /* `peer` can no longer be reached (status: PROUST_ERR_CONN,
     * PROUST_ERR_PEER_FAILED, PROUST_ERR_PROTO); why: a readable reason.
     * Operations queued for that peer are completed with that status. */
    void (*peer_failed)(void *engine, int peer, int status, const char *why);
    /* Bind the pages of [addr, addr+len) where this rail's receive buffers
     * belong (placement: near its NIC, or the process's node). Call it on
     * fresh memory before touching it; whole pages only (they must not be
     * shared with other allocations). A no-op where nothing was decided. */
    void (*place_memory)(void *engine, int rail_index, void *addr, size_t len);
    /* A driver that waits for the network inside a call (a synchronous
     * get): have the engine look for dead peers now (the launcher's
     * notices, the rails' checks), as its waits do; a dead one gets
     * peer_failed, and disconnect. Call it with no driver lock held. */
    void (*check_peers)(void *engine);
    /* An rma() that returned PROUST__INPROGRESS is over (status PROUST_OK
     * or the error that stopped it); once per rma(). */
    void (*rma_done)(void *engine, void *ctx, int status);
};

typedef struct proust__rail {
    const struct proust__rail_ops *ops;
    struct proust__rail_caps caps;
    struct proust__rail_upcalls up;
    proust__boot_t *boot;
    int index;  /* position in the engine's rail table */
    void *priv; /* driver state */
    /* The engine's: what sending a small packet costs here, measured on
     * traffic (a sample of sends; starts at caps.latency_us), in ns. The
     * automatic strategy reads it (strategy/strategy.c). */
    _Atomic unsigned packet_ns;
} proust__rail_t;

struct proust__rail_ops {
    const char *name;
    const char *description;
    /* Create local resources and publish this process's address with
     * boot->ops->put (the engine fences afterwards). Fill rail->caps.
     * PROUST_ERR_NOT_SUPPORTED (after a warning that says why): the rail
     * cannot work here, and the engine goes on without it. */
    int (*open)(proust__rail_t *rail);
    /* Optional: the device this rail sends through, known after open: an
     * OS device name ("eth0", "mlx5_0") or a PCI address
     * ("pci=0000:81:00.0", from a provider's bus attributes); NULL: none
     * (shm, self). */
    const char *(*device)(proust__rail_t *rail);
    /* Optional, after open: what the rail chose here and why, for
     * proust-info (lines ending in '\n'); returns the bytes written. */
    size_t (*explain)(proust__rail_t *rail, char *out, size_t cap);
    /* After the fence: read peers' addresses, connect or map. */
    int (*connect)(proust__rail_t *rail);
    /* Can this rail carry traffic to `peer`? (called after connect) */
    int (*reaches)(proust__rail_t *rail, int peer);
    /* Send one packet made of iov[0..iovcnt). */
    int (*send)(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt, void *ctx);
    /* Optional: send one packet now or not at all: PROUST_OK when it is
     * already on its way (iov need not outlive the call), PROUST_ERR_BUSY
     * when it cannot go at once (nothing was queued), or an error. Lets a
     * blocking send skip the request machinery. */
    int (*try_send)(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt);
    /* Write buf[0..len) to the peer's (token, offset) destination. */
    int (*put)(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset, const void *buf,
               size_t len, void *ctx);
    /* Optional (CAN_GET): describe buf so a peer can get() from it; writes at
     * most `cap` bytes of key, returns its length or a negative error. */
    int (*expose)(proust__rail_t *rail, const void *buf, size_t len, void *key, size_t cap);
    /* Optional (CAN_GET): copy len bytes at `offset` of the peer's exposed
     * region into dst, synchronously. PROUST_ERR_NOT_SUPPORTED when the
     * system refuses: the engine then falls back to put. */
    int (*get)(proust__rail_t *rail, int peer, const void *key, size_t key_len, uint64_t offset,
               void *dst, size_t len);
    /* Optional (with CAN_GET): the engine is done with buf, which expose()
     * described for a send (the send completed: its receiver got it, took
     * it by puts, or failed); a rail that registered it for the peer's
     * reads releases it now. Every successful expose() of a send gets one. */
    void (*unexpose)(proust__rail_t *rail, const void *buf, size_t len);
    /* Optional (with CAN_GET): copy len bytes from src into the peer's
     * memory described by key (which the peer's expose() made), at offset,
     * synchronously. PROUST_ERR_NOT_SUPPORTED when the system refuses. */
    int (*write)(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                 uint64_t offset, const void *src, size_t len);
    /* Optional (with write): expose buf for one write() by one peer, guarded
     * by a claim the owner can take back (drivers/shm_claim.h); returns the
     * key length or a negative error. write() on such a key returns
     * PROUST_ERR_CANCELED, writing nothing, once the owner withdrew it. */
    int (*expose_once)(proust__rail_t *rail, const void *buf, size_t len, void *key,
                       size_t cap);
    /* Owner: end an expose_once exposure. 1: no peer claimed it (none ever
     * will); 0: a peer claimed it for its write (with `force` the exposure
     * ends anyway: the write was announced, or the peer is gone). */
    int (*withdraw)(proust__rail_t *rail, const void *key, size_t key_len, int force);
    /* Optional (CAN_RMA): register [buf, buf+len) for peers' reads and
     * writes until mem_release(*handle); writes at most `cap` bytes of key
     * (what a peer's rma() needs), returns its length or a negative error. */
    int (*mem_register)(proust__rail_t *rail, void *buf, size_t len, void **handle, void *key,
                        size_t cap);
    void (*mem_release)(proust__rail_t *rail, void *handle);
    /* Optional (CAN_RMA): write local[0..len) into the peer's memory that
     * `key` (the peer's mem_register) describes, at `offset` (write != 0),
     * or read from there into local. PROUST__INPROGRESS: up.rma_done(ctx)
     * comes once the bytes are in the peer's memory, visible to it (a
     * write) or here (a read), or the transfer failed (a peer that fails
     * gets its transfers failed at disconnect). Else a PROUST_ERR_* code:
     * nothing was done (a key that does not hold the range: PROUST_ERR_PROTO). */
    int (*rma)(proust__rail_t *rail, int peer, int write, void *local, size_t len,
               const void *key, size_t key_len, uint64_t offset, void *ctx);
    /* Optional (CAN_ATOMIC): elements of proust_atomic_type_t `type` one
     * atomic() of proust_atomic_op_t `op` carries at most (fetching: with
     * a result), 0 when the rail cannot do it. */
    size_t (*atomic_max)(proust__rail_t *rail, int op, int type, int fetching);
    /* Optional (CAN_ATOMIC): apply op to `count` elements at `offset` of
     * the peer's memory that `key` describes (result, compare: NULL or
     * count elements each); as rma(): PROUST__INPROGRESS then up.rma_done
     * once every element is updated there and result holds the old
     * values, or a PROUST_ERR_* code and nothing done. */
    int (*atomic)(proust__rail_t *rail, int peer, int op, int type, const void *operand,
                  const void *compare, void *result, size_t count, const void *key,
                  size_t key_len, uint64_t offset, void *ctx);
    /* Optional: registrations of memory for peers' reads made so far: those
     * served by memory registered already (mem_register), and those that
     * registered anew (proust_rma_counts reports the hit rate). */
    void (*registrations)(proust__rail_t *rail, uint64_t *hits, uint64_t *misses);
    /* Is there unsent data queued for peer? (the engine packs the next packet
     * only when the rail is idle for that peer) */
    int (*busy)(proust__rail_t *rail, int peer);
    /* Push queued outbound data for peer; may call send_done. Returns > 0
     * when queued data moved (into the transport, or failed), 0 when
     * nothing did (none queued, or no room yet: the driver then makes sure
     * a blocked waiter is woken when room comes), or a negative error.
     * The engine's waits count only real movement as progress: a sender
     * facing a full ring is idle, and yields or sleeps like any waiter. */
    int (*flush)(proust__rail_t *rail, int peer);
    /* Receive and deliver what has arrived; returns the number of events
     * (>= 0) so the engine can tell idle from busy. */
    int (*poll)(proust__rail_t *rail);
    /* Optional: a file descriptor that becomes readable when poll has work
     * (for blocking waits), or -1. */
    int (*fd)(proust__rail_t *rail);
    /* Optional: a thread is about to block on fd() (level > 0) or is back
     * (0). While armed, whoever sends to this process must make fd()
     * readable (a doorbell) — for every packet at PROUST__ARM_ALL (an
     * application thread sleeps), only for packets marked urgent at
     * PROUST__ARM_URGENT (only a progress thread sleeps, and no completion
     * runs a callback: it has nothing to do for an eager message or a FIN,
     * only for rendezvous handshakes, offers and cancellations).
     * Unarmed, nobody pays for it. Arming is sequentially consistent with
     * the sender's check, so a message written before the arm is seen by
     * the poll that follows it. */
    void (*arm)(proust__rail_t *rail, int level);
    /* Optional: a waiting thread of this process polls on `cpu` at `now_ns`
     * (CLOCK_MONOTONIC): publish it where local peers can read it. */
    void (*presence)(proust__rail_t *rail, unsigned cpu, uint64_t now_ns);
    /* Optional: is `peer` (any local peer when < 0) probably queued behind
     * the caller on `cpu`: last seen polling there before `since_ns`, not
     * since, and runnable (not blocked, or rung since)? 1 yes, 0 no. */
    int (*behind)(proust__rail_t *rail, int peer, unsigned cpu, uint64_t since_ns);
    /* Optional: the engine learned (from the launcher, or a protocol error)
     * that `peer` is gone: stop talking to it and complete its queued sends
     * and puts with send_done(ctx, status). Called with the gate lock held. */
    void (*disconnect)(proust__rail_t *rail, int peer, int status);
    /* Optional: look for peers that ended without a word (a wait that saw
     * nothing move for PROUST_PEER_CHECK_MS calls it, from any thread;
     * with no launcher failure notices, as under Hydra, this is how a dead
     * peer is found): peer_failed for each. */
    void (*check)(proust__rail_t *rail);
    void (*close)(proust__rail_t *rail);
};

#define PROUST__ARM_ALL 1
#define PROUST__ARM_URGENT 2
/* Set by the engine around send() of a packet that carries something the
 * peer must act on (RTS, CTS, PUSH, OFFER, OFFER_NO, CANCEL, CANCEL_ANS):
 * it rings a doorbell armed at ARM_URGENT too. */
extern _Thread_local int proust__packet_urgent;

extern const struct proust__rail_ops proust__rail_self;
extern const struct proust__rail_ops proust__rail_shm;
extern const struct proust__rail_ops proust__rail_tcp;
extern const struct proust__rail_ops proust__rail_ofi;

#endif
