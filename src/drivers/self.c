/*
 * self.c — the rail to one's own rank. Packets are copied into a queue and
 * delivered by the next poll (delivering inside send would re-enter the
 * engine while it holds the gate lock); puts and gets are plain memcpy.
 * Blocks of small packets are recycled: a message to oneself is a copy and
 * a lock, not a malloc and a free.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "drivers/driver.h"
#include "proust.h"

/* Packets up to this many bytes (headers included) go in recycled blocks
 * of this size; a few of them are kept. */
#define SELF_SMALL 512u
#define SELF_KEEP 256u

struct self_packet {
    struct self_packet *next;
    size_t len;
    uint8_t data[];
};

struct self_state {
    pthread_mutex_t lock;
    struct self_packet *head, *tail;
    struct self_packet *spare; /* recycled small blocks (under lock) */
    unsigned nspare;
    int rank;
    int bell;          /* eventfd: rung when a thread blocks (armed) */
    _Atomic int armed;
};

static int self_open(proust__rail_t *rail)
{
    struct self_state *st = calloc(1, sizeof *st);
    if (!st)
        return PROUST_ERR_NOMEM;
    pthread_mutex_init(&st->lock, NULL);
    st->rank = rail->boot->rank;
    st->bell = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    rail->priv = st;
    rail->caps = (struct proust__rail_caps){
        .max_iov = 128,
        .max_packet = 65536,
        .rdv_threshold = 8192,
        .get_threshold = 0,
        .put_fragment = 0,
        .latency_us = 0.05,
        .bandwidth_gbs = 20.0,
        .flags = PROUST__RAIL_CAN_GET | PROUST__RAIL_ZCOPY_PUT,
    };
    return PROUST_OK;
}

static int self_connect(proust__rail_t *rail)
{
    (void)rail;
    return PROUST_OK;
}

static int self_reaches(proust__rail_t *rail, int peer)
{
    return peer == ((struct self_state *)rail->priv)->rank;
}

static void fill(struct self_packet *p, const struct iovec *iov, int iovcnt, size_t len)
{
    p->next = NULL;
    p->len = len;
    uint8_t *dst = p->data;
    for (int i = 0; i < iovcnt; i++) {
        proust_copy(dst, iov[i].iov_base, iov[i].iov_len);
        dst += iov[i].iov_len;
    }
}

static int self_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt, void *ctx)
{
    (void)peer;
    (void)ctx;
    struct self_state *st = rail->priv;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    struct self_packet *p = NULL;
    if (len <= SELF_SMALL) {
        /* a spare block, filled under the lock it was taken with (a small
         * copy) so that the packet costs one lock */
        pthread_mutex_lock(&st->lock);
        p = st->spare;
        if (p) {
            st->spare = p->next;
            st->nspare--;
        } else {
            pthread_mutex_unlock(&st->lock);
        }
    }
    if (p) {
        fill(p, iov, iovcnt, len);
    } else { /* a new block, filled before taking the lock */
        p = malloc(sizeof *p + (len <= SELF_SMALL ? SELF_SMALL : len));
        if (!p)
            return PROUST_ERR_NOMEM;
        fill(p, iov, iovcnt, len);
        pthread_mutex_lock(&st->lock);
    }
    if (st->tail)
        st->tail->next = p;
    else /* atomic: poll peeks at head without the lock */
        __atomic_store_n(&st->head, p, __ATOMIC_RELEASE);
    st->tail = p;
    pthread_mutex_unlock(&st->lock);
    atomic_thread_fence(memory_order_seq_cst);
    /* ring as the level asks: a progress thread asleep alone (URGENT)
     * has nothing to do for an eager packet or an ACK, and waking it
     * only has it race the sender's own next test for the poll flag */
    int armed = atomic_load_explicit(&st->armed, memory_order_relaxed);
    if ((armed == PROUST__ARM_ALL || (armed == PROUST__ARM_URGENT && proust__packet_urgent)) &&
        st->bell >= 0) {
        uint64_t one = 1;
        (void)!write(st->bell, &one, sizeof one);
    }
    return PROUST_OK;
}

/* self_send copies at once: it never needs the iov afterwards. */
static int self_try_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    return self_send(rail, peer, iov, iovcnt, NULL);
}

static int self_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                    const void *buf, size_t len, void *ctx)
{
    (void)ctx;
    void *dst = rail->up.put_target(rail->up.engine, peer, token, offset, len);
    if (dst) {
        proust_copy(dst, buf, len);
        rail->up.put_done(rail->up.engine, peer, token, offset, len);
    }
    return PROUST_OK;
}

struct self_key {
    uint64_t addr, len;
};

static int self_expose(proust__rail_t *rail, const void *buf, size_t len, void *key, size_t cap)
{
    (void)rail;
    struct self_key k = {(uintptr_t)buf, len};
    if (cap < sizeof k)
        return PROUST_ERR_INVALID;
    memcpy(key, &k, sizeof k);
    return (int)sizeof k;
}

static int self_get(proust__rail_t *rail, int peer, const void *key, size_t key_len,
                    uint64_t offset, void *dst, size_t len)
{
    (void)rail;
    (void)peer;
    struct self_key k;
    if (key_len != sizeof k)
        return PROUST_ERR_INVALID;
    memcpy(&k, key, sizeof k);
    if (offset > k.len || len > k.len - offset)
        return PROUST_ERR_INVALID;
    proust_copy(dst, (const uint8_t *)(uintptr_t)k.addr + offset, len);
    return PROUST_OK;
}

static int self_busy(proust__rail_t *rail, int peer)
{
    (void)rail;
    (void)peer;
    return 0;
}

static int self_flush(proust__rail_t *rail, int peer)
{
    (void)rail;
    (void)peer;
    return PROUST_OK;
}

static int self_poll(proust__rail_t *rail)
{
    struct self_state *st = rail->priv;
    if (!__atomic_load_n(&st->head, __ATOMIC_RELAXED))
        return 0;
    pthread_mutex_lock(&st->lock);
    struct self_packet *p = st->head;
    __atomic_store_n(&st->head, NULL, __ATOMIC_RELAXED);
    st->tail = NULL;
    pthread_mutex_unlock(&st->lock);
    int n = 0;
    struct self_packet *keep = NULL, *keep_tail = NULL;
    unsigned nkeep = 0;
    while (p) {
        struct self_packet *next = p->next;
        rail->up.packet(rail->up.engine, st->rank, p->data, p->len);
        if (p->len <= SELF_SMALL && nkeep < SELF_KEEP) {
            p->next = keep;
            keep = p;
            if (!keep_tail)
                keep_tail = p;
            nkeep++;
        } else {
            free(p);
        }
        p = next;
        n++;
    }
    if (keep) {
        pthread_mutex_lock(&st->lock);
        if (st->nspare < SELF_KEEP) {
            keep_tail->next = st->spare;
            st->spare = keep;
            st->nspare += nkeep;
            keep = NULL;
        }
        pthread_mutex_unlock(&st->lock);
        while (keep) { /* enough spares already */
            struct self_packet *next = keep->next;
            free(keep);
            keep = next;
        }
    }
    return n;
}

static int self_fd(proust__rail_t *rail)
{
    return ((struct self_state *)rail->priv)->bell;
}

static void self_arm(proust__rail_t *rail, int level)
{
    struct self_state *st = rail->priv;
    atomic_store_explicit(&st->armed, level, memory_order_seq_cst);
    if (!level && st->bell >= 0) {
        uint64_t v;
        (void)!read(st->bell, &v, sizeof v);
    }
}

static void self_close(proust__rail_t *rail)
{
    struct self_state *st = rail->priv;
    if (!st)
        return;
    struct self_packet *lists[2] = {st->head, st->spare};
    for (int i = 0; i < 2; i++)
        while (lists[i]) {
            struct self_packet *p = lists[i];
            lists[i] = p->next;
            free(p);
        }
    pthread_mutex_destroy(&st->lock);
    if (st->bell >= 0)
        close(st->bell);
    free(st);
    rail->priv = NULL;
}

const struct proust__rail_ops proust__rail_self = {
    .name = "self",
    .description = "messages to one's own rank (memory copies)",
    .open = self_open,
    .connect = self_connect,
    .reaches = self_reaches,
    .send = self_send,
    .try_send = self_try_send,
    .put = self_put,
    .expose = self_expose,
    .get = self_get,
    .busy = self_busy,
    .flush = self_flush,
    .poll = self_poll,
    .fd = self_fd,
    .arm = self_arm,
    .close = self_close,
};
