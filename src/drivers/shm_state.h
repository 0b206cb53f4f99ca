/*
 * shm_state.h — the shm rail's private state, shared by its files: the
 * segment header every local peer maps, one peer as seen from here, and
 * the rail itself. shm.c moves the data; shm_bell.c holds the doorbells
 * and the presence line (which cpu our waiting threads poll on).
 */
#ifndef PROUST_SHM_STATE_H
#define PROUST_SHM_STATE_H

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
    pid_t pid;
    int pidfd;
    void *map; /* peer's segment */
    size_t map_len;
    struct proust__shm_producer out; /* my ring in the peer's segment */
    struct proust__shm_consumer in;  /* the peer's ring in my segment */
    struct queued_op *q_head, *q_tail;
    _Atomic int dead;
    int bell_fd; /* write end of the peer's doorbell, or -1 */
    _Atomic uint64_t rang_ns; /* when we last rang it */
};

struct shm_state {
    int rank, size;
    size_t ring_size;
    char seg_name[96];
    void *seg; /* my segment */
    size_t seg_len;
    int nlocal;
    int *local_ranks; /* local index -> rank */
    struct shm_peer *peers;
    unsigned poll_counter;
    _Atomic uint64_t last_check_ns; /* polls and waits both check */
    long check_ms;
    int get_refused;
    int bell_fd;          /* my doorbell (bound datagram socket), or -1 */
    char bell_path[128];  /* until every peer opened it */
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

/* After writing into p's ring: wake p if one of its threads sleeps. The
 * fence orders our record before the check (Dekker with arm). */
static inline void proust__shm_wake_peer(struct shm_peer *p, int urgent)
{
    atomic_thread_fence(memory_order_seq_cst);
    const struct seg_header *h = p->map;
    uint32_t level = atomic_load_explicit(&h->sleeping, memory_order_relaxed);
    if (__builtin_expect(level != 0, 0) && (level == PROUST__ARM_ALL || urgent) &&
        p->bell_fd >= 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        atomic_store_explicit(&p->rang_ns,
                              (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec,
                              memory_order_relaxed);
        proust__shm_ring_bell(p->bell_fd);
    }
}

#endif
