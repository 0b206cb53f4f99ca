/*
 * shm.c — the shared-memory rail between processes of one machine.
 *
 * Each process owns a POSIX shared-memory segment that its local peers map
 * when they first need to: its header (doorbell state), one ready word per
 * local peer, the claim words, then a slot for the ring from each local
 * peer. The slots are a sparse file's holes until used: the sender gives
 * a ring its first pages on its first message to that peer, sets its
 * ready word and bumps the receiver's count of announced rings, and the
 * receiver adopts the ring at its next poll, in memory it already maps.
 * So a node's shared memory grows with the pairs that talk (a hello
 * world's barrier partners), not with the square of its ranks, and a
 * first contact costs no file, mapping or descriptor beyond the peer's
 * segment.
 * Packets and put fragments are copied into the ring by the sender and out
 * of it by the receiver. Large rendezvous transfers can instead be pulled by the
 * receiver in one copy with process_vm_readv (get); where the system
 * refuses that call (ptrace restrictions, seccomp) the engine falls back to
 * puts through the ring. Peers on this machine are those whose published
 * host identity (boot id + host name) equals ours.
 *
 * A peer that writes into the ring of a process one of whose threads
 * sleeps rings its doorbell (shm_bell.c). A sender whose ring is full asks
 * for space (want_space in the ring's control line); the receiver rings it
 * when it frees some while the sender sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/host.h"
#include "common/log.h"
#include "drivers/driver.h"
#include "drivers/shm_claim.h"
#include "drivers/shm_ring.h"
#include "drivers/shm_state.h"
#include "proust.h"

#define SHM_MAX_PACKET ((size_t)(64u << 10) + 256u)
/* Nodes of up to this many ranks map every peer's segment at init (and so
 * can unlink the names at once); larger ones on first need (shm_connect). */
#define SHM_MAP_ALL_MAX 16

/* A process's segment: header page, one ready word per local peer (a ring
 * from it exists), the claim words, then one ring slot per local peer. */
static size_t ready_bytes(int nlocal)
{
    return ((size_t)nlocal * sizeof(uint32_t) + 63) & ~(size_t)63;
}

#define SEG_PAGE ((size_t)4096)

static size_t round_page(size_t n)
{
    return (n + SEG_PAGE - 1) & ~(SEG_PAGE - 1);
}

/* The part before the rings. */
static size_t head_bytes(int nlocal)
{
    return round_page(SEG_PAGE + ready_bytes(nlocal) + PROUST__SHM_CLAIMS * sizeof(uint64_t));
}

/* A ring's slot: its control line, then its bytes. */
static size_t slot_bytes(size_t ring_size)
{
    return round_page(sizeof(struct proust__shm_ring_ctl) + ring_size);
}

static size_t seg_bytes(int nlocal, size_t ring_size)
{
    return head_bytes(nlocal) + (size_t)nlocal * slot_bytes(ring_size);
}

/* The ring from the peer of local index `from`, in a segment. */
static struct proust__shm_ring_ctl *ring_slot(void *seg, int nlocal, size_t ring_size, int from)
{
    return (struct proust__shm_ring_ctl *)((uint8_t *)seg + head_bytes(nlocal) +
                                           (size_t)from * slot_bytes(ring_size));
}

static _Atomic uint32_t *ready_words(void *seg)
{
    return (_Atomic uint32_t *)((uint8_t *)seg + SEG_PAGE);
}

static _Atomic uint64_t *claim_words(void *seg, int nlocal)
{
    return (_Atomic uint64_t *)((uint8_t *)seg + SEG_PAGE + ready_bytes(nlocal));
}

/* A ring's control line and first pages, when made (both sides): a ring
 * page left to the first send that reaches it costs that send a page
 * fault (zeroing, and the host backing the page), each an order of
 * magnitude slower than the message (docs/PERFORMANCE.md, "Figures behind
 * the code"). The first PROUST__SHM_POPULATE_FIRST bytes hold the short
 * messages of a start-up's collectives; the producer gives the next ones
 * their pages when a record first goes past them (shm_ring.c), the
 * consumer its page-table entries when it reads past them. */
static int prefault_ring(struct proust__shm_ring_ctl *ring, size_t ring_size)
{
    size_t data = ring_size < PROUST__SHM_POPULATE_FIRST ? ring_size : PROUST__SHM_POPULATE_FIRST;
    return proust__shm_prefault(ring, sizeof(struct proust__shm_ring_ctl) + data);
}

/* Our segment's header, ready words and claim words (not the rings). */
static int prefault_segment(struct shm_state *st)
{
    return proust__shm_prefault(st->seg, st->head_len);
}


static int shm_open_rail(proust__rail_t *rail)
{
    struct shm_state *st = calloc(1, sizeof *st);
    if (!st)
        return PROUST_ERR_NOMEM;
    rail->priv = st;
    st->bell_fd = -1;
    st->rank = rail->boot->rank;
    st->size = rail->boot->size;
    if (proust__config_size(PROUST_CFG_SHM_RING_SIZE, &st->ring_size) != PROUST_OK)
        return PROUST_ERR_INVALID;
    if (st->ring_size == 0) {
        /* A sender that fills a ring waits for its receiver to be scheduled,
         * which costs most on a crowded node: few peers get deep rings. */
        int local = rail->boot->local_size;
        st->ring_size = local <= 8 ? (1u << 20) : local <= 32 ? (512u << 10) : (256u << 10);
    }
    if (st->ring_size < 16384 || (st->ring_size & (st->ring_size - 1))) {
        PROUST_ERROR("PROUST_SHM_RING_SIZE must be a power of two, at least 16K");
        return PROUST_ERR_INVALID;
    }
    size_t get_threshold = 0;
    if (proust__config_size(PROUST_CFG_SHM_GET_THRESHOLD, &get_threshold) != PROUST_OK)
        return PROUST_ERR_INVALID;
    long check_ms = 200;
    proust__config_long(PROUST_CFG_PEER_CHECK_MS, &check_ms);
    st->check_ms = check_ms > 0 ? check_ms : 200;
    /* the first check one period from now: a job starting up waits in
     * its first collective while the last ranks are still launched */
    atomic_init(&st->last_check_ns, proust__shm_now_ns());

    char id[HOST_ID_LEN];
    proust__host_identity(id, sizeof id);
    int rc = rail->boot->ops->put(rail->boot, "shm.host", id, strlen(id) + 1);
    st->pid = getpid(); /* the keys of our exposures name it */
    int32_t pid = (int32_t)st->pid; /* peers watch it before they map us */
    if (rc == PROUST_OK)
        rc = rail->boot->ops->put(rail->boot, "shm.pid", &pid, sizeof pid);
    if (rc != PROUST_OK)
        return rc;
    size_t max_payload = proust__shm_max_payload(st->ring_size);
    /* 64 KiB of data and their headers (a favourite size of benchmarks,
     * which a 64 KiB packet left to the rendezvous) */
    size_t max_packet = max_payload < SHM_MAX_PACKET ? max_payload : SHM_MAX_PACKET;
    rail->caps = (struct proust__rail_caps){
        .max_iov = MAX_QUEUED_IOV,
        .max_packet = max_packet,
        /* eager up to what one packet holds (the gate takes the headers
         * off): measured at 32 KiB, two copies through the ring beat the
         * rendezvous round trip and its process_vm_readv in latency and
         * bandwidth (docs/PERFORMANCE.md, "Figures behind the code") */
        .rdv_threshold = max_packet,
        /* measured: a single copy by process_vm_readv beats the ring's two
         * copies for every rendezvous (docs/PERFORMANCE.md) */
        .get_threshold = get_threshold ? get_threshold : max_packet / 2,
        .put_fragment = max_payload < (64u << 10) ? max_payload : (64u << 10),
        /* measured: sharing the copies between both cores pays from 1 MiB
         * (below, the extra PUSH/DONE exchange costs more than it saves) */
        .write_threshold = 1u << 20,
        /* measured: when both sides wait, the ring's two copies (one on
         * each core, pipelined) beat the kernel's one at every size
         * (ping-pong 128 KiB - 4 MiB: 1.5-2.1x; docs/PERFORMANCE.md) */
        .stream_max = SIZE_MAX,
        .latency_us = 0.1,
        .bandwidth_gbs = 15.0,
        .flags = PROUST__RAIL_CAN_GET,
    };
    return PROUST_OK;
}

static int map_peer(struct shm_state *st, int rank, struct shm_peer *p, const char *jobid)
{
    char name[96];
    snprintf(name, sizeof name, "/proust-%s-%d", jobid, rank);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        PROUST_ERROR("shm: cannot open rank %d's segment %s: %s", rank, name, strerror(errno));
        return PROUST_ERR_SYS;
    }
    size_t len = st->seg_len;
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        PROUST_ERROR("shm: cannot map rank %d's segment: %s", rank, strerror(errno));
        return PROUST_ERR_SYS;
    }
    struct seg_header *h = map;
    if (h->magic != SEG_MAGIC || h->nrings != (uint32_t)st->nlocal ||
        h->ring_size != st->ring_size) {
        PROUST_ERROR("shm: rank %d's segment has another layout (different PROUST_SHM_RING_SIZE?)",
                     rank);
        munmap(map, len);
        return PROUST_ERR_INVALID;
    }
    p->map = map;
    p->map_len = len;
    /* a small node unlinks the doorbells' names after init: connect now */
    if (st->nlocal <= SHM_MAP_ALL_MAX)
        proust__shm_bell_open(st, p);
    return PROUST_OK;
}

/* The peer's segment and doorbell, on first need (a message to it,
 * its ring to map, an offer of its to claim): a process of a full node
 * talks to a few of its peers, and mapping all of them at init cost each
 * process a dozen system calls per peer. */
static int peer_ready(struct shm_state *st, int rank, struct shm_peer *p)
{
    if (atomic_load_explicit(&p->mapped, memory_order_acquire))
        return PROUST_OK;
    pthread_mutex_lock(&p->out_lock);
    int rc = PROUST_OK;
    if (!atomic_load_explicit(&p->mapped, memory_order_relaxed) &&
        (rc = map_peer(st, rank, p, st->jobid)) == PROUST_OK)
        atomic_store_explicit(&p->mapped, 1, memory_order_release);
    pthread_mutex_unlock(&p->out_lock);
    return rc;
}

/* The ring we write to `peer`, on our first message to it: its slot in
 * the peer's segment gets its first pages now (so that a full /dev/shm is
 * an error here, not a SIGBUS later), then it is announced there. Under
 * the peer's out_lock: senders of several threads make it once. */
static int make_out_ring(struct shm_state *st, int peer, struct shm_peer *p)
{
    int rc = peer_ready(st, peer, p);
    if (rc != PROUST_OK)
        return rc;
    pthread_mutex_lock(&p->out_lock);
    if (atomic_load_explicit(&p->out_ready, memory_order_acquire))
        goto out;
    struct proust__shm_ring_ctl *ring = ring_slot(p->map, st->nlocal, st->ring_size, st->my_index);
    if (prefault_ring(ring, st->ring_size) != PROUST_OK) {
        PROUST_ERROR("shm: no memory for the ring to rank %d (/dev/shm full, or a memory limit? "
                     "PROUST_SHM_RING_SIZE sets the ring size): its pages cannot be given memory",
                     peer);
        rc = PROUST_ERR_NOMEM;
        goto out;
    }
    p->out.ctl = ring;
    p->out.data = (uint8_t *)ring + sizeof *ring;
    p->out.size = st->ring_size;
    p->out.head = p->out.tail_cache = 0;
    p->out.populated = st->ring_size <= PROUST__SHM_POPULATE_FIRST ? SIZE_MAX
                                                                   : PROUST__SHM_POPULATE_FIRST;
    atomic_store_explicit(&p->out_ready, 1, memory_order_release);
    /* announce it: the peer adopts it at its next poll (a record we write
     * next wakes it if it sleeps) */
    atomic_store_explicit(&ready_words(p->map)[st->my_index], 1, memory_order_release);
    atomic_fetch_add_explicit(&((struct seg_header *)p->map)->announced, 1,
                              memory_order_seq_cst);
out:
    pthread_mutex_unlock(&p->out_lock);
    return rc;
}

/* The ring `rank` (local index `from`) announced to us, in our segment. */
static void adopt_in_ring(struct shm_state *st, int rank, int from, struct shm_peer *p)
{
    struct proust__shm_ring_ctl *ring = ring_slot(st->seg, st->nlocal, st->ring_size, from);
    /* our page-table entries too, now: the pages exist (its maker gave
     * them), but each one we first touch while reading would still fault
     * (8 ranks, 1 B all-to-all: 360 us a call until every ring had been
     * walked once, 12 after) */
    (void)prefault_ring(ring, st->ring_size);
    p->in.ctl = ring;
    p->in.data = (uint8_t *)ring + sizeof *ring;
    p->in.size = st->ring_size;
    p->in.pos = p->in.published = 0;
    p->in.mapped = st->ring_size <= PROUST__SHM_POPULATE_FIRST ? SIZE_MAX
                                                               : PROUST__SHM_POPULATE_FIRST;
    st->in_ranks[st->nin++] = rank;
}

/* Adopt the rings announced to us since the last look (poll: one thread
 * at a time). */
static void adopt_rings(struct shm_state *st)
{
    struct seg_header *h = st->seg;
    uint32_t announced = atomic_load_explicit(&h->announced, memory_order_acquire);
    if (announced == st->seen_announced)
        return;
    st->seen_announced = announced;
    _Atomic uint32_t *ready = ready_words(st->seg);
    for (int i = 0; i < st->nlocal; i++) {
        int r = st->local_ranks[i];
        struct shm_peer *p = &st->peers[r];
        if (!p->in.ctl && atomic_load_explicit(&ready[i], memory_order_acquire))
            adopt_in_ring(st, r, i, p);
    }
}

static int find_local_peers(proust__rail_t *rail, struct shm_state *st)
{
    char mine[HOST_ID_LEN], theirs[HOST_ID_LEN];
    proust__host_identity(mine, sizeof mine);
    st->peers = calloc((size_t)st->size, sizeof *st->peers);
    st->local_ranks = calloc((size_t)st->size, sizeof *st->local_ranks);
    st->in_ranks = calloc((size_t)st->size, sizeof *st->in_ranks);
    if (!st->peers || !st->local_ranks || !st->in_ranks)
        return PROUST_ERR_NOMEM;
    struct proust__boot_values hosts, pids; /* one request a key, not one per rank */
    int grc = proust__boot_get_all(rail->boot, "shm.host", sizeof theirs, &hosts);
    if (grc != PROUST_OK)
        return grc;
    grc = proust__boot_get_all(rail->boot, "shm.pid", sizeof(int32_t), &pids);
    if (grc != PROUST_OK) {
        proust__boot_values_free(&hosts);
        return grc;
    }
    for (int r = 0; r < st->size; r++) {
        size_t len = sizeof theirs;
        st->peers[r].local_index = -1;
        st->peers[r].pidfd = -1;
        atomic_init(&st->peers[r].bell_fd, BELL_LATER);
        int rc = proust__boot_value(&hosts, r, theirs, &len);
        if (rc != PROUST_OK)
            continue; /* that rank has no shm rail */
        theirs[sizeof theirs - 1] = '\0';
        int32_t pid = 0;
        size_t plen = sizeof pid;
        if (strcmp(mine, theirs) == 0 && proust__boot_value(&pids, r, &pid, &plen) == PROUST_OK &&
            plen == sizeof pid && pid > 0) {
            st->peers[r].pid = (pid_t)pid;
            pthread_mutex_init(&st->peers[r].out_lock, NULL);
            st->peers[r].local_index = st->nlocal;
            st->local_ranks[st->nlocal++] = r;
        }
    }
    proust__boot_values_free(&hosts);
    proust__boot_values_free(&pids);
    return PROUST_OK;
}

static int shm_connect(proust__rail_t *rail)
{
    struct shm_state *st = rail->priv;
    int rc = find_local_peers(rail, st);
    if (rc != PROUST_OK)
        return rc;
    snprintf(st->seg_name, sizeof st->seg_name, "/proust-%s-%d", rail->boot->jobid, st->rank);
    st->head_len = head_bytes(st->nlocal);
    st->seg_len = seg_bytes(st->nlocal, st->ring_size);
    snprintf(st->jobid, sizeof st->jobid, "%s", rail->boot->jobid);
    for (int i = 0; i < st->nlocal; i++)
        if (st->local_ranks[i] == st->rank)
            st->my_index = i;
    int fd = shm_open(st->seg_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) { /* left by a killed job with our id */
        shm_unlink(st->seg_name);
        fd = shm_open(st->seg_name, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0) {
        PROUST_ERROR("shm: cannot create %s: %s", st->seg_name, strerror(errno));
        return PROUST_ERR_SYS;
    }
    if (ftruncate(fd, (off_t)st->seg_len) != 0) {
        PROUST_ERROR("shm: cannot size %s to %zu bytes: %s", st->seg_name, st->seg_len,
                     strerror(errno));
        close(fd);
        shm_unlink(st->seg_name);
        return PROUST_ERR_SYS;
    }
    st->seg = mmap(NULL, st->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (st->seg == MAP_FAILED) {
        st->seg = NULL;
        shm_unlink(st->seg_name);
        return PROUST_ERR_SYS;
    }
    /* our segment holds what peers write to us (ready words, claims):
     * its pages go where placement puts this rail's receive buffers */
    if (rail->up.place_memory)
        rail->up.place_memory(rail->up.engine, rail->index, st->seg, st->seg_len);
    if (prefault_segment(st) != PROUST_OK) { /* placed; before the peers map it */
        PROUST_ERROR("shm: no memory for the %zu bytes of %s (/dev/shm full, or a memory "
                     "limit? PROUST_SHM_RING_SIZE sets the ring size): %s",
                     st->seg_len, st->seg_name, strerror(errno));
        munmap(st->seg, st->seg_len);
        st->seg = NULL;
        shm_unlink(st->seg_name);
        return PROUST_ERR_NOMEM;
    }
    proust__shm_claims_init(&st->claims, claim_words(st->seg, st->nlocal));
    struct seg_header *h = st->seg;
    h->nrings = (uint32_t)st->nlocal;
    h->ring_size = st->ring_size;
    h->owner_pid = getpid();
    atomic_thread_fence(memory_order_release);
    h->magic = SEG_MAGIC;
    proust__shm_bell_path(st->bell_path, sizeof st->bell_path, rail->boot->jobid, st->rank);
    unlink(st->bell_path); /* left by a crashed job with our id */
    st->bell_fd = proust__shm_bell_socket(st->bell_path, true);
    if (st->bell_fd < 0) {
        PROUST_INFO("shm: no doorbell (%s): blocked threads poll shm every ms", strerror(errno));
        st->bell_path[0] = '\0';
    }

    /* A small node maps every peer now and unlinks the names once all have
     * (a killed job leaves nothing in /dev/shm); a larger one maps a peer
     * when it first needs to, the names staying until close (the engine's
     * fence after every rail has connected comes before the first
     * message). */
    if (st->nlocal > SHM_MAP_ALL_MAX)
        return PROUST_OK;
    rc = rail->boot->ops->fence(rail->boot); /* every segment exists */
    for (int i = 0; rc == PROUST_OK && i < st->nlocal; i++) {
        int r = st->local_ranks[i];
        rc = peer_ready(st, r, &st->peers[r]);
    }
    int rc2 = rail->boot->ops->fence(rail->boot); /* every peer mapped ours */
    shm_unlink(st->seg_name);
    st->seg_name[0] = '\0';
    if (st->bell_path[0]) {
        unlink(st->bell_path);
        st->bell_path[0] = '\0';
    }
    return rc != PROUST_OK ? rc : rc2;
}

static int shm_reaches(proust__rail_t *rail, int peer)
{
    struct shm_state *st = rail->priv;
    return st->peers && peer >= 0 && peer < st->size && st->peers[peer].local_index >= 0;
}

static int queue_op(struct shm_peer *p, uint16_t kind, uint64_t token, uint64_t offset,
                    const struct iovec *iov, int iovcnt, size_t len, void *ctx)
{
    if (iovcnt > MAX_QUEUED_IOV)
        return PROUST_ERR_INVALID;
    struct queued_op *op = malloc(sizeof *op);
    if (!op)
        return PROUST_ERR_NOMEM;
    op->next = NULL;
    op->kind = kind;
    op->urgent = (uint16_t)proust__packet_urgent;
    op->token = token;
    op->offset = offset;
    op->len = len;
    op->ctx = ctx;
    op->iovcnt = iovcnt;
    memcpy(op->iov, iov, (size_t)iovcnt * sizeof *iov);
    if (p->q_tail)
        p->q_tail->next = op;
    else
        p->q_head = op;
    p->q_tail = op;
    /* the receiver rings us when it frees room while we sleep */
    atomic_store_explicit(&p->out.ctl->want_space, 1, memory_order_seq_cst);
    return PROUST__INPROGRESS;
}

static inline int write_or_queue(proust__rail_t *rail, int peer, uint16_t kind, uint64_t token,
                          uint64_t offset, const struct iovec *iov, int iovcnt, void *ctx)
{
    struct shm_state *st = rail->priv;
    struct shm_peer *p = &st->peers[peer];
    if (atomic_load_explicit(&p->dead, memory_order_relaxed))
        return PROUST_ERR_PEER_FAILED;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > proust__shm_max_payload(st->ring_size))
        return PROUST_ERR_INVALID;
    if (__builtin_expect(!atomic_load_explicit(&p->out_ready, memory_order_acquire), 0)) {
        int rc = make_out_ring(st, peer, p);
        if (rc != PROUST_OK)
            return rc;
    }
    if (!p->q_head) {
        int rc = proust__shm_ring_write(&p->out, kind, token, offset, iov, iovcnt, len);
        if (rc == PROUST_OK)
            proust__shm_wake_peer(st, p, proust__packet_urgent);
        if (rc != PROUST_ERR_BUSY)
            return rc;
    }
    return queue_op(p, kind, token, offset, iov, iovcnt, len, ctx);
}

static int shm_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt, void *ctx)
{
    return write_or_queue(rail, peer, SHM_REC_PACKET, 0, 0, iov, iovcnt, ctx);
}

static int shm_try_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    struct shm_state *st = rail->priv;
    struct shm_peer *p = &st->peers[peer];
    if (atomic_load_explicit(&p->dead, memory_order_relaxed))
        return PROUST_ERR_PEER_FAILED;
    if (p->q_head || !atomic_load_explicit(&p->out_ready, memory_order_acquire))
        return PROUST_ERR_BUSY; /* order: queued packets go first; the first
                                   message makes the ring (write_or_queue) */
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > proust__shm_max_payload(st->ring_size))
        return PROUST_ERR_BUSY;
    int rc = proust__shm_ring_write(&p->out, SHM_REC_PACKET, 0, 0, iov, iovcnt, len);
    if (rc == PROUST_OK)
        proust__shm_wake_peer(st, p, 0); /* eager data only */
    return rc;
}

static int shm_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                   const void *buf, size_t len, void *ctx)
{
    struct iovec iov = {(void *)buf, len};
    return write_or_queue(rail, peer, SHM_REC_PUT, token, offset, &iov, 1, ctx);
}

static int shm_flush(proust__rail_t *rail, int peer)
{
    struct shm_state *st = rail->priv;
    struct shm_peer *p = &st->peers[peer];
    bool wrote = false, asked = false;
    int urgent = 0, moved = 0;
    while (p->q_head) {
        struct queued_op *op = p->q_head;
        int rc = atomic_load(&p->dead) ? PROUST_ERR_PEER_FAILED
                                       : proust__shm_ring_write(&p->out, op->kind, op->token,
                                                                op->offset, op->iov, op->iovcnt,
                                                                op->len);
        if (rc == PROUST_ERR_BUSY && !asked) {
            /* Ask for room again (the receiver clears the request each
             * time it frees some), then look once more: either that look
             * sees the room or the receiver sees the request and rings us
             * if we sleep (Dekker on want_space and the ring's tail). */
            asked = true;
            atomic_store_explicit(&p->out.ctl->want_space, 1, memory_order_seq_cst);
            atomic_thread_fence(memory_order_seq_cst);
            continue;
        }
        if (rc == PROUST_ERR_BUSY)
            break;
        wrote |= rc == PROUST_OK;
        urgent |= op->urgent;
        moved++;
        p->q_head = op->next;
        if (!p->q_head)
            p->q_tail = NULL;
        rail->up.send_done(rail->up.engine, op->ctx, rc);
        free(op);
    }
    if (wrote)
        proust__shm_wake_peer(st, p, urgent);
    return moved;
}

static void shm_disconnect(proust__rail_t *rail, int peer, int status)
{
    struct shm_state *st = rail->priv;
    if (!st || !st->peers || peer < 0 || peer >= st->size)
        return;
    struct shm_peer *p = &st->peers[peer];
    atomic_store(&p->dead, 1);
    while (p->q_head) {
        struct queued_op *op = p->q_head;
        p->q_head = op->next;
        if (!p->q_head)
            p->q_tail = NULL;
        rail->up.send_done(rail->up.engine, op->ctx, status);
        free(op);
    }
}

static int shm_busy(proust__rail_t *rail, int peer)
{
    struct shm_state *st = rail->priv;
    return st->peers[peer].q_head != NULL;
}

struct shm_key {
    int32_t pid;
    uint32_t claim; /* one-shot exposure: claim slot + 1; 0: none */
    uint64_t addr;
    uint64_t len;
    uint64_t gen; /* the claim word's generation */
};

static int shm_expose(proust__rail_t *rail, const void *buf, size_t len, void *key, size_t cap)
{
    struct shm_state *st = rail->priv;
    struct shm_key k = {.pid = st->pid, .addr = (uintptr_t)buf, .len = len};
    if (cap < sizeof k)
        return PROUST_ERR_INVALID;
    memcpy(key, &k, sizeof k);
    return (int)sizeof k;
}

/* A buffer one peer may write into once (an offer), until we withdraw it. */
static int shm_expose_once(proust__rail_t *rail, const void *buf, size_t len, void *key,
                           size_t cap)
{
    struct shm_state *st = rail->priv;
    struct shm_key k = {.pid = st->pid, .addr = (uintptr_t)buf, .len = len};
    if (cap < sizeof k)
        return PROUST_ERR_INVALID;
    if (st->get_refused) /* peers cannot write into us either */
        return PROUST_ERR_NOT_SUPPORTED;
    uint32_t slot;
    if (!proust__shm_claim_new(&st->claims, &slot, &k.gen))
        return PROUST_ERR_NOMEM;
    k.claim = slot + 1;
    memcpy(key, &k, sizeof k);
    return (int)sizeof k;
}

static int shm_withdraw(proust__rail_t *rail, const void *key, size_t key_len, int force)
{
    struct shm_state *st = rail->priv;
    struct shm_key k;
    if (!st || key_len != sizeof k)
        return PROUST_ERR_INVALID;
    memcpy(&k, key, sizeof k);
    if (!k.claim || k.pid != st->pid)
        return PROUST_ERR_INVALID;
    return proust__shm_claim_withdraw(&st->claims, k.claim - 1, k.gen, force != 0) ? 1 : 0;
}

/* One copy between this process and a peer's exposed memory, in either
 * direction (process_vm_readv / process_vm_writev). */
static int cross_copy(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                      uint64_t offset, void *local_buf, size_t len, bool to_peer)
{
    struct shm_state *st = rail->priv;
    struct shm_key k;
    if (st->get_refused)
        return PROUST_ERR_NOT_SUPPORTED;
    if (key_len != sizeof k)
        return PROUST_ERR_INVALID;
    memcpy(&k, key, sizeof k);
    if (k.pid != st->peers[peer].pid || offset > k.len || len > k.len - offset)
        return PROUST_ERR_INVALID;
    /* a one-shot exposure: ours to write only if the owner did not take
     * it back first */
    if (k.claim && to_peer && peer_ready(st, peer, &st->peers[peer]) != PROUST_OK)
        return PROUST_ERR_PEER_FAILED;
    if (k.claim && (!to_peer || !proust__shm_claim_take(claim_words(st->peers[peer].map,
                                                                    st->nlocal),
                                                        k.claim - 1, k.gen)))
        return PROUST_ERR_CANCELED;
    size_t done = 0;
    int err = proust__shm_cross_copy(k.pid, local_buf, k.addr + offset, len, to_peer, &done);
    if (!err)
        return PROUST_OK;
    if (err == EPERM || err == ENOSYS || err == EACCES) {
        st->get_refused = 1;
        PROUST_INFO("shm: cross-process copy refused (%s); using the ring", strerror(err));
        return done ? PROUST_ERR_SYS : PROUST_ERR_NOT_SUPPORTED;
    }
    return err == ESRCH ? PROUST_ERR_PEER_FAILED : PROUST_ERR_SYS;
}

static int shm_get(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                   uint64_t offset, void *dst, size_t len)
{
    return cross_copy(rail, peer, key, key_len, offset, dst, len, false);
}

static int shm_write(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                     uint64_t offset, const void *src, size_t len)
{
    return cross_copy(rail, peer, key, key_len, offset, (void *)src, len, true);
}

/* Is the peer's process still there? (pidfd becomes readable at exit;
 * opened at the first check: check_peers runs in one thread at a time) */
static int peer_alive(struct shm_peer *p)
{
    if (p->pidfd == -1)
        p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    if (p->pidfd < 0)
        p->pidfd = -2; /* not supported here: kill(pid, 0) from now on */
    if (p->pidfd >= 0) {
        struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
        return poll(&pfd, 1, 0) == 0;
    }
    return kill(p->pid, 0) == 0 || errno != ESRCH;
}

/* Peers looked at per check, in turn: a node of many ranks costs each
 * check a bounded number of descriptors and polls (every rank checking
 * every other one is quadratic in the ranks of a node), and a dead peer is
 * still found within nlocal / CHECK_BATCH periods. */
#define CHECK_BATCH 16

static void check_peers(proust__rail_t *rail, struct shm_state *st)
{
    uint64_t now = proust__shm_now_ns();
    uint64_t last = atomic_load_explicit(&st->last_check_ns, memory_order_relaxed);
    if (now - last < (uint64_t)st->check_ms * 1000000ull ||
        !atomic_compare_exchange_strong(&st->last_check_ns, &last, now))
        return; /* checked lately, or another thread checks now */
    int batch = st->nlocal < CHECK_BATCH ? st->nlocal : CHECK_BATCH;
    for (int k = 0; k < batch; k++) {
        unsigned i = atomic_fetch_add_explicit(&st->check_next, 1, memory_order_relaxed);
        int r = st->local_ranks[i % (unsigned)st->nlocal];
        struct shm_peer *p = &st->peers[r];
        if (r == st->rank || atomic_load(&p->dead) || peer_alive(p))
            continue;
        atomic_store(&p->dead, 1);
        char why[96];
        snprintf(why, sizeof why, "rank %d (pid %d) exited", r, (int)p->pid);
        rail->up.peer_failed(rail->up.engine, r, PROUST_ERR_PEER_FAILED, why);
    }
}

/* Bytes a record's payload may span before the end of the ring. */
static size_t rec_room(const struct proust__shm_consumer *c, const struct proust__shm_rec *rec,
                       uint16_t kind)
{
    size_t off = (size_t)((const uint8_t *)rec - c->data);
    return c->size - off - (kind == SHM_REC_PUT ? PROUST__SHM_PUT_HDR : PROUST__SHM_REC_HDR);
}

static int shm_poll(proust__rail_t *rail)
{
    struct shm_state *st = rail->priv;
    int events = 0;
    adopt_rings(st);
    for (int i = 0; i < st->nin; i++) {
        int r = st->in_ranks[i];
        struct shm_peer *p = &st->peers[r];
        const char *err = NULL;
        const struct proust__shm_rec *rec;
        int batch = 0;
        while (batch < 64 && (rec = proust__shm_ring_peek(&p->in, &err))) {
            /* read each header field once: the peer could rewrite shared
             * memory between a check and a use */
            uint32_t len = rec->len;
            uint16_t kind = rec->kind;
            size_t hdr = kind == SHM_REC_PUT ? PROUST__SHM_PUT_HDR : PROUST__SHM_REC_HDR;
            const uint8_t *payload = (const uint8_t *)rec + hdr;
            if (batch == 0 && !atomic_load_explicit(&p->out.answered, memory_order_relaxed))
                atomic_store_explicit(&p->out.answered, true, memory_order_relaxed);
            if ((kind != SHM_REC_PACKET && kind != SHM_REC_PUT) ||
                len > rec_room(&p->in, rec, kind)) {
                err = "shared-memory record changed under the receiver";
                break;
            }
            if (kind == SHM_REC_PACKET) {
                rail->up.packet(rail->up.engine, r, payload, len);
            } else {
                uint64_t token = rec->token, offset = rec->offset;
                void *dst = rail->up.put_target(rail->up.engine, r, token, offset, len);
                if (dst) {
                    proust_copy(dst, payload, len);
                    rail->up.put_done(rail->up.engine, r, token, offset, len);
                }
            }
            proust__shm_ring_consume(&p->in, rec);
            batch++;
        }
        if (batch) {
            proust__shm_ring_publish(&p->in);
            events += batch;
            /* a sender waiting for room that sleeps: ring it */
            atomic_thread_fence(memory_order_seq_cst);
            if (atomic_load_explicit(&p->in.ctl->want_space, memory_order_relaxed) &&
                atomic_exchange(&p->in.ctl->want_space, 0) && r != st->rank &&
                peer_ready(st, r, p) == PROUST_OK) /* (its doorbell: in its segment) */
                proust__shm_wake_peer(st, p, 1); /* it waits to send: always worth a wake-up */
        }
        if (err && !atomic_exchange(&p->dead, 1))
            rail->up.peer_failed(rail->up.engine, r, PROUST_ERR_PROTO, err);
    }
    if (events == 0 && (++st->poll_counter & 1023u) == 0)
        check_peers(rail, st);
    return events;
}

/* A wait that saw nothing move: a poll that sleeps between passes may
 * not reach the every-1024-polls check above for minutes. */
static void shm_check(proust__rail_t *rail)
{
    struct shm_state *st = rail->priv;
    if (st && st->peers)
        check_peers(rail, st);
}

static void shm_close(proust__rail_t *rail)
{
    struct shm_state *st = rail->priv;
    if (!st)
        return;
    if (st->peers) {
        for (int r = 0; r < st->size; r++) {
            struct shm_peer *p = &st->peers[r];
            while (p->q_head) {
                struct queued_op *op = p->q_head;
                p->q_head = op->next;
                rail->up.send_done(rail->up.engine, op->ctx, PROUST_ERR_CANCELED);
                free(op);
            }
            if (p->map)
                munmap(p->map, p->map_len);
            if (p->local_index >= 0)
                pthread_mutex_destroy(&p->out_lock);
            if (p->pidfd >= 0)
                close(p->pidfd);
            if (atomic_load(&p->bell_fd) >= 0)
                close(atomic_load(&p->bell_fd));
        }
    }
    if (st->seg_name[0])
        shm_unlink(st->seg_name);
    if (st->bell_path[0])
        unlink(st->bell_path);
    if (st->bell_fd >= 0)
        close(st->bell_fd);
    if (st->seg)
        munmap(st->seg, st->seg_len);
    free(st->peers);
    free(st->local_ranks);
    free(st->in_ranks);
    free(st);
    rail->priv = NULL;
}

const struct proust__rail_ops proust__rail_shm = {
    .name = "shm",
    .description = "shared-memory rings between processes of one machine; "
                   "process_vm_readv for large messages",
    .open = shm_open_rail,
    .connect = shm_connect,
    .reaches = shm_reaches,
    .send = shm_send,
    .try_send = shm_try_send,
    .put = shm_put,
    .expose = shm_expose,
    .expose_once = shm_expose_once,
    .withdraw = shm_withdraw,
    .get = shm_get,
    .write = shm_write,
    .busy = shm_busy,
    .flush = shm_flush,
    .poll = shm_poll,
    .fd = proust__shm_fd,
    .arm = proust__shm_arm,
    .presence = proust__shm_presence,
    .behind = proust__shm_behind,
    .disconnect = shm_disconnect,
    .check = shm_check,
    .close = shm_close,
};
