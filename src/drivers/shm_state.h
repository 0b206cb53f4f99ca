/*
 * shm_state.h — the shm rail's private state, shared by its files: the
 * segment header every local peer maps, one peer as seen from here, and
 * the rail itself. shm.c moves the data; shm_bell.c holds the doorbells
 * and the presence line (which cpu our waiting threads poll on).
 */
#ifndef PROUST_SHM_STATE_H
#define PROUST_SHM_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "drivers/driver.h"
#include "drivers/shm_claim.h"
#include "drivers/shm_ring.h"

#define SEG_MAGIC 0x50524f5553545348ull /* "PROUSTSH" */
#define HOST_ID_LEN 128
#define MAX_QUEUED_IOV 128

struct seg_header {
    uint64_t magic;
    uint32_t nrings;
    uint32_t pad;
    uint64_t ring_size;
    int32_t owner_pid;
    /* rings made for the owner so far: a sender bumps it after setting its
     * ready word (shm.c, make_out_ring); the owner adopts what is new */
    _Alignas(64) _Atomic uint32_t announced;
    /* a thread of the owner blocks: ring its doorbell after writing */
    _Alignas(64) _Atomic uint32_t sleeping;
    /* where and when a waiting thread of the owner last polled (cpu + 1,
     * CLOCK_MONOTONIC ns): a line of its own, written while it waits, read
     * by peers deciding whether it queues behind them */
    _Alignas(64) _Atomic uint32_t seen_cpu;
    _Atomic uint64_t seen_ns;
};

/* An operation waiting for room in a peer's ring. */
struct queued_op {
    struct queued_op *next;
    uint16_t kind;
    uint16_t urgent; /* proust__packet_urgent when queued */
    uint64_t token, offset;
    size_t len;
    void *ctx;
    int iovcnt;
    struct iovec iov[MAX_QUEUED_IOV];
};

struct shm_peer {
    int local_index; /* -1: not on this machine */
    pid_t pid;  /* from the launcher's store (shm.pid) */
    int pidfd;  /* -1: not opened yet (check_peers opens it); -2: refused here */
    /* the peer's segment (header, ready words, claim words, the rings to
     * it): mapped on first need (shm.c, peer_ready), under out_lock */
    _Atomic int mapped;
    void *map;
    size_t map_len;
    /* the ring I write to the peer, in its segment: given its first pages
     * on first use (out_ready, under out_lock) and announced there */
    _Atomic int out_ready;
    pthread_mutex_t out_lock;
    struct proust__shm_producer out;
    /* the ring the peer writes to me, in my segment, once announced */
    struct proust__shm_consumer in;
    struct queued_op *q_head, *q_tail;
    _Atomic int dead;
    /* write end of the peer's doorbell: BELL_LATER until the first wake-up
     * needs it (nodes of more than SHM_MAP_ALL_MAX ranks), BELL_NONE if
     * it cannot be had */
    _Atomic int bell_fd;
    _Atomic uint64_t rang_ns; /* when we last rang it */
};

struct shm_state {
    int rank, size;
    int my_index; /* local index of this process */
    char jobid[64];
    size_t ring_size;
    uint32_t seen_announced; /* rings announced to me and mapped (poll) */
    char seg_name[96]; /* until closed: peers map it when they first need it */
    void *seg; /* my segment: header, ready and claim words, then the rings to me */
    size_t seg_len;   /* all of it (the rings' pages come as they are used) */
    size_t head_len;  /* the part before the rings, given its pages at once */
    pid_t pid; /* ours (exposure keys carry it: no system call a send) */
    int nlocal;
    int *local_ranks; /* local index -> rank */
    /* the peers whose rings to us are mapped, in the order they came: a
     * poll looks at those only (a hello world of 128 ranks hears from 7) */
    int *in_ranks;
    int nin;
    struct shm_peer *peers;
    unsigned poll_counter;
    _Atomic uint64_t last_check_ns; /* polls and waits both check */
    long check_ms;
    _Atomic unsigned check_next; /* the next local index check_peers looks at */
    int get_refused;
    int bell_fd;          /* my doorbell (bound datagram socket), or -1 */
    char bell_path[128];  /* until closed: peers open it when they first need it */
    struct proust__shm_claims claims; /* one-shot exposures (offers) in my segment */
};

/* ---- doorbells and presence (shm_bell.c) ---------------------------------- */
/* Path of rank's doorbell socket. */
void proust__shm_bell_path(char *out, size_t len, const char *jobid, int rank);
/* A datagram socket bound to (listen) or connected to `path`, or -1. */
int proust__shm_bell_socket(const char *path, bool listen);
int proust__shm_fd(proust__rail_t *rail);
void proust__shm_arm(proust__rail_t *rail, int level);
void proust__shm_presence(proust__rail_t *rail, unsigned cpu, uint64_t now_ns);
int proust__shm_behind(proust__rail_t *rail, int peer, unsigned cpu, uint64_t since_ns);
/* shm_cross.c: len bytes between local and a peer's address (its write
 * when to_peer); 0 or an errno, *copied what was done before it */
int proust__shm_cross_copy(pid_t pid, void *local, uint64_t remote, size_t len, bool to_peer,
                           size_t *copied);

static inline void proust__shm_ring_bell(int fd)
{
    char b = 1;
    /* EAGAIN: rung already, bytes are pending; ECONNREFUSED: it died */
    (void)!send(fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* CLOCK_MONOTONIC in ns (the doorbell's and the peer checks' clock). */
static inline uint64_t proust__shm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

enum { BELL_LATER = -1, BELL_NONE = -2 };
/* The peer's doorbell, opened on its first wake-up (shm_bell.c). */
int proust__shm_bell_open(struct shm_state *st, struct shm_peer *p);

/* After writing into p's ring: wake p if one of its threads sleeps. The
 * fence orders our record before the check (Dekker with arm). */
static inline void proust__shm_wake_peer(struct shm_state *st, struct shm_peer *p, int urgent)
{
    atomic_thread_fence(memory_order_seq_cst);
    const struct seg_header *h = p->map;
    if (__builtin_expect(!h, 0))
        return; /* not mapped: we never wrote to it */
    uint32_t level = atomic_load_explicit(&h->sleeping, memory_order_relaxed);
    if (__builtin_expect(level != 0, 0) && (level == PROUST__ARM_ALL || urgent)) {
        int fd = atomic_load_explicit(&p->bell_fd, memory_order_acquire);
        if (fd == BELL_LATER)
            fd = proust__shm_bell_open(st, p);
        if (fd >= 0) {
            atomic_store_explicit(&p->rang_ns, proust__shm_now_ns(), memory_order_relaxed);
            proust__shm_ring_bell(fd);
        }
    }
}

#endif
