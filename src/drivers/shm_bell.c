/*
 * shm_bell.c — the shm rail's doorbells, and where our waiting threads run.
 *
 * Doorbells: each process has a datagram socket bound next to its segment
 * (a file, so network namespaces do not matter; a datagram, so a dead
 * reader means an error, not SIGPIPE). While one of its threads blocks
 * (arm), the `sleeping` word of its segment header is set, and a peer that
 * writes into one of its rings sends it one byte (proust__shm_wake_peer),
 * which wakes the blocked thread's epoll.
 *
 * Presence: waiting threads publish the cpu they poll on and when, in a
 * line of the header of their own; a peer's waiter reads it to tell a
 * partner that runs elsewhere from one queued behind it on its own cpu
 * (progress/colocate.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/log.h"
#include "drivers/shm_state.h"

void proust__shm_bell_path(char *out, size_t len, const char *jobid, int rank)
{
    snprintf(out, len, "/dev/shm/proust-%s-%d.bell", jobid, rank);
}

int proust__shm_bell_socket(const char *path, bool listen)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(a.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc = listen ? bind(fd, (struct sockaddr *)&a, sizeof a)
                    : connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* A node of many ranks connects a peer's doorbell when it first has to
 * ring it: most peers it writes to never sleep while it does, and two
 * system calls and a socket per peer were a start-up cost per partner.
 * Threads racing here keep one descriptor. */
int proust__shm_bell_open(struct shm_state *st, struct shm_peer *p)
{
    int rank = (int)(p - st->peers);
    char path[128];
    proust__shm_bell_path(path, sizeof path, st->jobid, rank);
    int fd = proust__shm_bell_socket(path, false);
    if (fd < 0)
        PROUST_INFO("shm: no doorbell to rank %d (%s): its sleeping threads wake by timeout",
                    rank, strerror(errno));
    int want = fd >= 0 ? fd : BELL_NONE, expected = BELL_LATER;
    if (!atomic_compare_exchange_strong(&p->bell_fd, &expected, want)) {
        if (fd >= 0)
            close(fd);
        return expected; /* another thread's */
    }
    return want;
}

int proust__shm_fd(proust__rail_t *rail)
{
    struct shm_state *st = rail->priv;
    return st ? st->bell_fd : -1;
}

void proust__shm_arm(proust__rail_t *rail, int level)
{
    struct shm_state *st = rail->priv;
    if (!st || !st->seg)
        return;
    struct seg_header *h = st->seg;
    atomic_store_explicit(&h->sleeping, (uint32_t)level, memory_order_seq_cst);
    if (!level && st->bell_fd >= 0) {
        char b;
        while (recv(st->bell_fd, &b, 1, MSG_DONTWAIT) > 0)
            ;
    }
}

void proust__shm_presence(proust__rail_t *rail, unsigned cpu, uint64_t now_ns)
{
    struct shm_state *st = rail->priv;
    if (!st || !st->seg)
        return;
    struct seg_header *h = st->seg;
    atomic_store_explicit(&h->seen_cpu, cpu + 1, memory_order_relaxed);
    atomic_store_explicit(&h->seen_ns, now_ns, memory_order_relaxed);
}

/* (a torn pair, cpu from one sighting and time from another, only makes
 * one guess wrong: a waiter then spins or sleeps once too many) */
static bool peer_behind(struct shm_peer *p, unsigned cpu, uint64_t since_ns)
{
    /* a peer not mapped yet (shm.c, peer_ready: another thread may map it
     * now) is not one we wait behind */
    if (!atomic_load_explicit(&p->mapped, memory_order_acquire))
        return false;
    const struct seg_header *h = p->map;
    if (!h || atomic_load_explicit(&p->dead, memory_order_relaxed))
        return false;
    if (atomic_load_explicit(&h->seen_cpu, memory_order_relaxed) != cpu + 1)
        return false;
    uint64_t seen = atomic_load_explicit(&h->seen_ns, memory_order_relaxed);
    if (seen >= since_ns)
        return false; /* polled since: it runs */
    /* blocked, and nobody here rang it since: not runnable at all */
    if (atomic_load_explicit(&h->sleeping, memory_order_relaxed) &&
        atomic_load_explicit(&p->rang_ns, memory_order_relaxed) < seen)
        return false;
    return true;
}

int proust__shm_behind(proust__rail_t *rail, int peer, unsigned cpu, uint64_t since_ns)
{
    struct shm_state *st = rail->priv;
    if (!st || !st->peers)
        return 0; /* not connected */
    if (peer >= 0)
        return peer < st->size && peer != st->rank && st->peers[peer].local_index >= 0 &&
               peer_behind(&st->peers[peer], cpu, since_ns);
    for (int i = 0; i < st->nlocal; i++) {
        int r = st->local_ranks[i];
        if (r != st->rank && peer_behind(&st->peers[r], cpu, since_ns))
            return 1;
    }
    return 0;
}

