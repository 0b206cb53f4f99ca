/*
 * tcp.c — the tcp rail: TCP/IPv4 sockets, one connection per peer pair.
 * Wire format: tcp.h; receive path (frame parser): tcp_recv.c; connection
 * set-up: tcp_conn.c.
 *
 * Sending: send() and put() write one frame with a single sendmsg (frame
 * header + the caller's iovec, no copy). What the socket does not take is
 * queued per peer — the iovec array and header are copied, never the data,
 * which the engine keeps valid until send_done — and flush() continues it,
 * gathering several queued frames per sendmsg. Frames to one peer leave in
 * the order send/put were called.
 *
 * Receiving: poll() asks the epoll set which connections are readable, reads
 * each into a staging buffer with one large recv and delivers every complete
 * PACKET frame from it; a PUT payload goes straight into the engine's
 * destination (put_target) with readv, together with whatever follows it.
 *
 * Threads: the engine serialises send/put/flush/busy per peer; poll runs on
 * one thread at a time and may run alongside them. Receive state belongs to
 * the polling thread; the send queue to the peer's sender, with a small lock
 * only so that the polling thread can take over the queue of a peer whose
 * connection broke. A connection's state is an atomic (TCP_LIVE or the error
 * that stopped it), and the peer_failed upcall is made once, from poll.
 * No driver lock is held during an upcall.
 *
 * Failures: end of stream, a socket error or a malformed frame drop the
 * connection: queued sends complete with PROUST_ERR_CONN (send_done), the
 * engine hears peer_failed (PROUST_ERR_CONN, or PROUST_ERR_PROTO for a bad
 * frame), and later send/put to that peer return PROUST_ERR_CONN. A send
 * error seen by the sender shuts the socket down, so the poller sees the end
 * of stream and reports it. The end of stream after a peer's BYE (its rail
 * closed normally) is not reported.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/host.h"
#include "common/log.h"
#include "drivers/tcp.h"
#include "proust.h"

#define TCP_POLL_EVENTS 64
#define TCP_FLUSH_IOV 256
#define TCP_CLOSE_WAIT_S 1.0
#define TCP_EV_SEND (1ull << 32) /* epoll tag: the self connection's sending end */
#define TCP_ACCEPT_EVERY 64      /* direct polling: look for connections this often */

/* A frame waiting to be (fully) written. */
struct tcp_sreq {
    struct tcp_sreq *next;
    void *ctx;
    int notify; /* call send_done when it completes (0: internal frame) */
    int cnt;    /* iovec entries */
    int idx;    /* first entry not fully written */
    union {
        struct tcp_frame pkt;
        struct tcp_put_frame put;
        unsigned char raw[sizeof(struct tcp_put_frame)];
    } hdr;
    struct iovec iov[];
};

static const char tcp_zeros[TCP_ALIGN];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int t_lazy(proust__rail_t *rail)
{
    return ((struct tcp_rail *)rail->priv)->lazy;
}

/* Can a frame for c be sent or queued? (up, or to be dialled on demand) */
static int linkable(proust__rail_t *rail, const struct tcp_conn *c)
{
    return atomic_load_explicit(&c->link, memory_order_acquire) == TCP_CONN_UP ||
           (t_lazy(rail) && c->dialable);
}

static struct tcp_conn *conn_of(struct tcp_rail *t, int peer)
{
    if (!t || !t->conns || peer < 0 || peer >= t->size)
        return NULL;
    return &t->conns[peer];
}

/* Consume up to n written bytes from s; returns how many it took. */
static size_t sreq_advance(struct tcp_sreq *s, size_t n)
{
    size_t used = 0;
    while (s->idx < s->cnt) {
        struct iovec *v = &s->iov[s->idx];
        if (v->iov_len > n - used) {
            size_t k = n - used;
            v->iov_base = (char *)v->iov_base + k;
            v->iov_len -= k;
            used += k;
            break;
        }
        used += v->iov_len;
        s->idx++;
    }
    return used;
}

/* Advance a plain iovec array by n bytes. */
static void iov_advance(struct iovec **v, int *nv, size_t n)
{
    while (*nv > 0 && n >= (*v)->iov_len) {
        n -= (*v)->iov_len;
        (*v)++;
        (*nv)--;
    }
    if (*nv > 0 && n) {
        (*v)->iov_base = (char *)(*v)->iov_base + n;
        (*v)->iov_len -= n;
    }
}

/* Watch (or stop watching) for the socket becoming writable while frames
 * wait, so that a blocked waiter on fd() wakes up to flush. Send lock held. */
static void out_arm(struct tcp_rail *t, struct tcp_conn *c, int on)
{
    if (c->out_armed == on || t->epfd < 0 || c->send_fd < 0)
        return; /* not connected yet: the connection's install arms it */
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    if (c->send_fd == c->recv_fd) {
        ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
        ev.data.u64 = (uint64_t)c->peer;
        (void)epoll_ctl(t->epfd, EPOLL_CTL_MOD, c->recv_fd, &ev);
    } else {
        ev.events = EPOLLOUT;
        ev.data.u64 = (uint64_t)c->peer | TCP_EV_SEND;
        (void)epoll_ctl(t->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c->send_fd, &ev);
    }
    c->out_armed = on;
}

/* Take the whole queue (send lock held). */
static struct tcp_sreq *detach_queue_locked(struct tcp_rail *t, struct tcp_conn *c)
{
    struct tcp_sreq *q = c->qhead;
    c->qhead = c->qtail = NULL;
    atomic_store_explicit(&c->queued, 0, memory_order_release);
    out_arm(t, c, 0);
    return q;
}

/* Complete (when notify is set) and free a list of frames; no lock held. */
static void complete_list(proust__rail_t *rail, struct tcp_sreq *s, int status, int notify)
{
    while (s) {
        struct tcp_sreq *next = s->next;
        if (notify && s->notify)
            rail->up.send_done(rail->up.engine, s->ctx, status);
        free(s);
        s = next;
    }
}

/* The sender saw the connection break (send lock held): remember why and
 * shut the socket down, which the poller sees as the end of stream. */
static void send_fail_locked(struct tcp_conn *c, int err)
{
    atomic_store_explicit(&c->send_errno, err, memory_order_relaxed);
    int expected = TCP_LIVE;
    atomic_compare_exchange_strong(&c->state, &expected, PROUST_ERR_CONN);
    (void)shutdown(c->send_fd, SHUT_RDWR);
}

/* Poller side: drop the connection, fail its queue, tell the engine once.
 * quiet: the peer closed normally (BYE), nothing to report. */
void proust__tcp_conn_fail(proust__rail_t *rail, struct tcp_conn *c, int status, int quiet,
                           const char *why)
{
    struct tcp_rail *t = rail->priv;
    int expected = TCP_LIVE;
    atomic_compare_exchange_strong(&c->state, &expected, status);
    c->rx.dead = 1;
    if (t->epfd >= 0) {
        (void)epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->recv_fd, NULL);
        if (c->send_fd != c->recv_fd)
            (void)epoll_ctl(t->epfd, EPOLL_CTL_DEL, c->send_fd, NULL);
    }
    (void)shutdown(c->recv_fd, SHUT_RDWR);
    if (c->send_fd != c->recv_fd)
        (void)shutdown(c->send_fd, SHUT_RDWR);
    proust__tcp_rx_free(c->rx.buf, c->rx.cap);
    c->rx.buf = NULL;
    c->rx.cap = c->rx.start = c->rx.end = 0;

    pthread_mutex_lock(&c->send_lock);
    struct tcp_sreq *q = detach_queue_locked(t, c);
    pthread_mutex_unlock(&c->send_lock);
    complete_list(rail, q, PROUST_ERR_CONN, 1);

    if (quiet) {
        PROUST_DEBUG("tcp: rank %d closed its connection", c->peer);
        return;
    }
    if (atomic_exchange(&c->reported, 1))
        return;
    if (status == PROUST_ERR_PROTO)
        PROUST_ERROR("%s", why);
    else
        PROUST_INFO("%s", why);
    rail->up.peer_failed(rail->up.engine, c->peer, status, why);
}

/* Engine side (gate lock held): the peer is known to be gone. Shut the
 * sockets (the poller cleans up when it sees the end of stream) and fail
 * the queue now; the engine needs no second report. */
static void tcp_disconnect(proust__rail_t *rail, int peer, int status)
{
    struct tcp_rail *t = rail->priv;
    if (!t || peer < 0 || peer >= t->size)
        return;
    struct tcp_conn *c = &t->conns[peer];
    int expected = TCP_LIVE;
    atomic_compare_exchange_strong(&c->state, &expected, status);
    atomic_store(&c->reported, 1);
    pthread_mutex_lock(&c->send_lock); /* the fds are set under it (install) */
    if (c->send_fd >= 0)
        (void)shutdown(c->send_fd, SHUT_RDWR);
    if (c->recv_fd >= 0 && c->recv_fd != c->send_fd)
        (void)shutdown(c->recv_fd, SHUT_RDWR);
    struct tcp_sreq *q = detach_queue_locked(t, c);
    pthread_mutex_unlock(&c->send_lock);
    complete_list(rail, q, status, 1);
}

/* ---- Sending ---------------------------------------------------------------- */

/* Write one frame: hdr (hlen bytes), iov[0..iovcnt) (len bytes), padding. */
static int submit(proust__rail_t *rail, struct tcp_conn *c, const void *hdr, size_t hlen,
                  const struct iovec *iov, int iovcnt, size_t len, void *ctx)
{
    struct tcp_rail *t = rail->priv;
    struct iovec v[TCP_MAX_IOV + 2];
    int nv = 0;
    v[nv].iov_base = (void *)hdr;
    v[nv++].iov_len = hlen;
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len)
            v[nv++] = iov[i];
    size_t pad = tcp_pad(len);
    if (pad) {
        v[nv].iov_base = (void *)tcp_zeros;
        v[nv++].iov_len = pad;
    }
    const size_t total = hlen + len + pad;
    struct iovec *cur = v;
    int ncur = nv;
    size_t done = 0;

    pthread_mutex_lock(&c->send_lock);
    if (atomic_load_explicit(&c->state, memory_order_acquire) != TCP_LIVE) {
        pthread_mutex_unlock(&c->send_lock);
        return PROUST_ERR_CONN;
    }
    int connected = c->send_fd >= 0; /* else queued until the connection is up */
    if (!c->qhead && connected) {
        while (done < total) {
            struct msghdr m;
            memset(&m, 0, sizeof m);
            m.msg_iov = cur;
            m.msg_iovlen = (size_t)ncur;
            ssize_t n = sendmsg(c->send_fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    break;
                PROUST_DEBUG("tcp: send to rank %d: %s", c->peer, strerror(errno));
                send_fail_locked(c, errno);
                pthread_mutex_unlock(&c->send_lock);
                return PROUST_ERR_CONN;
            }
            done += (size_t)n;
            iov_advance(&cur, &ncur, (size_t)n);
        }
        if (done == total) {
            pthread_mutex_unlock(&c->send_lock);
            return PROUST_OK;
        }
    }

    /* Queue the rest: copy the iovec array and the header, not the data. */
    struct tcp_sreq *s = malloc(sizeof *s + (size_t)ncur * sizeof(struct iovec));
    if (!s) {
        if (done) {
            /* Half a frame is on the wire: the stream cannot go on. */
            PROUST_ERROR("tcp: out of memory queueing a frame to rank %d", c->peer);
            send_fail_locked(c, ENOMEM);
        }
        pthread_mutex_unlock(&c->send_lock);
        return PROUST_ERR_NOMEM;
    }
    s->next = NULL;
    s->ctx = ctx;
    s->notify = 1;
    s->cnt = ncur;
    s->idx = 0;
    memcpy(s->hdr.raw, hdr, hlen);
    for (int i = 0; i < ncur; i++) {
        s->iov[i] = cur[i];
        const char *b = cur[i].iov_base;
        if (b >= (const char *)hdr && b < (const char *)hdr + hlen)
            s->iov[i].iov_base = s->hdr.raw + (b - (const char *)hdr);
    }
    if (c->qtail)
        c->qtail->next = s;
    else
        c->qhead = s;
    c->qtail = s;
    atomic_store_explicit(&c->queued, 1, memory_order_release);
    out_arm(t, c, 1);
    pthread_mutex_unlock(&c->send_lock);
    if (!connected)
        proust__tcp_lazy_want(rail, c);
    return PROUST__INPROGRESS;
}

static int tcp_send(proust__rail_t *rail, int peer, const struct iovec *iov, int iovcnt,
                    void *ctx)
{
    struct tcp_conn *c = conn_of(rail->priv, peer);
    if (!c)
        return PROUST_ERR_RANK;
    if (iovcnt < 0 || iovcnt > TCP_MAX_IOV || (iovcnt && !iov))
        return PROUST_ERR_INVALID;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
        if (len > TCP_MAX_PACKET)
            return PROUST_ERR_INVALID;
    }
    if (!linkable(rail, c))
        return PROUST_ERR_CONN;
    struct tcp_frame h = {.len = (uint32_t)len, .magic = TCP_FRAME_MAGIC,
                          .kind = TCP_FRAME_PACKET, .flags = 0};
    return submit(rail, c, &h, sizeof h, iov, iovcnt, len, ctx);
}

static int tcp_put(proust__rail_t *rail, int peer, uint64_t token, uint64_t offset,
                   const void *buf, size_t len, void *ctx)
{
    struct tcp_conn *c = conn_of(rail->priv, peer);
    if (!c)
        return PROUST_ERR_RANK;
    if (len > TCP_PUT_FRAGMENT || (len && !buf))
        return PROUST_ERR_INVALID;
    if (!linkable(rail, c))
        return PROUST_ERR_CONN;
    struct tcp_put_frame h = {
        .h = {.len = (uint32_t)len, .magic = TCP_FRAME_MAGIC, .kind = TCP_FRAME_PUT, .flags = 0},
        .token = token,
        .offset = offset};
    struct iovec v = {.iov_base = (void *)buf, .iov_len = len};
    return submit(rail, c, &h, sizeof h, &v, 1, len, ctx);
}

static int tcp_busy(proust__rail_t *rail, int peer)
{
    struct tcp_conn *c = conn_of(rail->priv, peer);
    if (!c)
        return 0;
    return atomic_load_explicit(&c->queued, memory_order_acquire) &&
           atomic_load_explicit(&c->state, memory_order_relaxed) == TCP_LIVE;
}

/* Write queued frames (send lock held); finished ones are appended to
 * *done in order. Returns 0 (queue empty), 1 (socket full) or -errno. */
/* Write what is queued; 0: all of it, 1: the socket is full, or -errno.
 * Adds the bytes written to *sent when given. */
static int flush_locked(struct tcp_rail *t, struct tcp_conn *c, struct tcp_sreq **done,
                        size_t *sent)
{
    struct tcp_sreq **dtail = done;
    while (*dtail)
        dtail = &(*dtail)->next;
    struct iovec v[TCP_FLUSH_IOV];
    while (c->qhead) {
        int nv = 0;
        for (struct tcp_sreq *s = c->qhead; s && nv < TCP_FLUSH_IOV; s = s->next)
            for (int i = s->idx; i < s->cnt && nv < TCP_FLUSH_IOV; i++)
                v[nv++] = s->iov[i];
        struct msghdr m;
        memset(&m, 0, sizeof m);
        m.msg_iov = v;
        m.msg_iovlen = (size_t)nv;
        ssize_t n = sendmsg(c->send_fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 1;
            return -errno;
        }
        size_t left = (size_t)n;
        if (sent)
            *sent += left;
        while (c->qhead) {
            struct tcp_sreq *s = c->qhead;
            left -= sreq_advance(s, left);
            if (s->idx < s->cnt)
                break;
            c->qhead = s->next;
            s->next = NULL;
            *dtail = s;
            dtail = &s->next;
        }
    }
    c->qtail = NULL;
    atomic_store_explicit(&c->queued, 0, memory_order_release);
    out_arm(t, c, 0);
    return 0;
}

static int tcp_flush(proust__rail_t *rail, int peer)
{
    struct tcp_rail *t = rail->priv;
    struct tcp_conn *c = conn_of(t, peer);
    if (!c)
        return PROUST_ERR_RANK;
    /* on demand: moves once the connection is up (link: send_fd is set
     * under the send lock, then published by the release of link) */
    if (atomic_load_explicit(&c->link, memory_order_acquire) != TCP_CONN_UP)
        return atomic_load_explicit(&c->state, memory_order_relaxed) == TCP_LIVE && t->lazy
                   ? PROUST_OK
                   : PROUST_ERR_CONN;
    if (!atomic_load_explicit(&c->queued, memory_order_acquire))
        return atomic_load_explicit(&c->state, memory_order_relaxed) == TCP_LIVE
                   ? PROUST_OK
                   : PROUST_ERR_CONN;
    /* A full socket answers sendmsg with EAGAIN only after taking the
     * socket lock, which the kernel also needs to deliver the data we are
     * waiting to drain; poll() checks for room without it. */
    struct pollfd pfd = {.fd = c->send_fd, .events = POLLOUT};
    if (atomic_load_explicit(&c->state, memory_order_relaxed) == TCP_LIVE &&
        poll(&pfd, 1, 0) == 0)
        return PROUST_OK;
    struct tcp_sreq *done = NULL, *failed = NULL;
    size_t sent = 0;
    int rc = PROUST_OK;
    pthread_mutex_lock(&c->send_lock);
    if (atomic_load_explicit(&c->state, memory_order_acquire) != TCP_LIVE) {
        failed = detach_queue_locked(t, c);
        rc = PROUST_ERR_CONN;
    } else {
        int r = flush_locked(t, c, &done, &sent);
        if (r < 0) {
            PROUST_DEBUG("tcp: send to rank %d: %s", c->peer, strerror(-r));
            send_fail_locked(c, -r);
            failed = detach_queue_locked(t, c);
            rc = PROUST_ERR_CONN;
        }
    }
    pthread_mutex_unlock(&c->send_lock);
    complete_list(rail, done, PROUST_OK, 1);
    complete_list(rail, failed, PROUST_ERR_CONN, 1);
    return rc != PROUST_OK ? rc : sent > 0;
}

/* ---- A connection comes up (on demand: tcp_lazy.c) ---------------------------- */

void proust__tcp_install(proust__rail_t *rail, struct tcp_conn *c, int send_fd, int recv_fd)
{
    struct tcp_rail *t = rail->priv;
    c->rx.buf = proust__tcp_rx_alloc(rail, TCP_RX_INITIAL);
    if (!c->rx.buf) {
        close(send_fd);
        if (recv_fd != send_fd)
            close(recv_fd);
        proust__tcp_conn_fail(rail, c, PROUST_ERR_NOMEM, 0,
                              "tcp: out of memory for a connection's receive buffer");
        return;
    }
    c->rx.cap = TCP_RX_INITIAL;
    c->rx.need = sizeof(struct tcp_frame);
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = (uint64_t)c->peer;
    pthread_mutex_lock(&c->send_lock);
    c->recv_fd = recv_fd;
    c->send_fd = send_fd;
    int added = epoll_ctl(t->epfd, EPOLL_CTL_ADD, recv_fd, &ev) == 0;
    c->out_armed = 0;
    if (c->qhead)
        out_arm(t, c, 1);
    pthread_mutex_unlock(&c->send_lock);
    atomic_store_explicit(&c->link, TCP_CONN_UP, memory_order_release);
    atomic_fetch_add_explicit(&t->nup, 1, memory_order_relaxed);
    if (!added)
        proust__tcp_conn_fail(rail, c, PROUST_ERR_SYS, 0, "tcp: epoll_ctl failed");
    /* What waited for the connection goes with the engine's next flush of
     * this peer (busy() says so; EPOLLOUT wakes a sleeping waiter): flush
     * and send_done belong to the engine's own serialisation per peer. */
}

/* ---- Polling (the frame parser is in tcp_recv.c) ----------------------------- */

static int tcp_poll(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    if (!t || t->epfd < 0)
        return 0;
    if (atomic_exchange_explicit(&t->polling, 1, memory_order_acquire))
        return 0; /* another poll is running (or we were re-entered from an upcall) */
    int events = 0;
    if (t->size <= TCP_DIRECT_POLL_MAX) {
        /* one connection: a recv costs less than epoll_wait + recv
         * (one system call less per message on the latency path); new
         * connections are looked for every TCP_ACCEPT_EVERY polls, and at
         * every poll while one is being set up */
        if (t->lazy && (atomic_load_explicit(&t->hs_active, memory_order_relaxed) ||
                        (atomic_load_explicit(&t->nup, memory_order_relaxed) < t->size &&
                         (t->polls++ % TCP_ACCEPT_EVERY) == 0)))
            events += proust__tcp_lazy_progress(rail); /* all up: nobody else may call */
        for (int r = 0; r < t->size; r++) {
            struct tcp_conn *c = &t->conns[r];
            if (c->recv_fd >= 0 && !c->rx.dead)
                events += proust__tcp_conn_read(rail, c);
        }
        atomic_store_explicit(&t->polling, 0, memory_order_release);
        return events;
    }
    struct epoll_event ev[TCP_POLL_EVENTS];
    int n = epoll_wait(t->epfd, ev, TCP_POLL_EVENTS, 0);
    int setup = t->lazy && atomic_load_explicit(&t->hs_active, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        uint64_t d = ev[i].data.u64;
        if (d & (TCP_EV_LISTEN | TCP_EV_HS)) {
            setup = 1;
            continue;
        }
        if ((d & TCP_EV_SEND) || !(ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            continue; /* only "writable": the sender's business */
        struct tcp_conn *c = conn_of(t, (int)(uint32_t)d);
        if (!c || c->rx.dead)
            continue;
        events += proust__tcp_conn_read(rail, c);
    }
    if (setup)
        events += proust__tcp_lazy_progress(rail);
    atomic_store_explicit(&t->polling, 0, memory_order_release);
    return events;
}

/* ---- Set-up and tear-down --------------------------------------------------- */

static int tcp_open(proust__rail_t *rail)
{
    proust__boot_t *boot = rail->boot;
    if (!boot || !boot->ops || boot->size <= 0 || boot->rank < 0 || boot->rank >= boot->size)
        return PROUST_ERR_INVALID;
    struct tcp_rail *t = calloc(1, sizeof *t);
    if (!t)
        return PROUST_ERR_NOMEM;
    rail->priv = t;
    t->rank = boot->rank;
    t->size = boot->size;
    t->listen_fd = -1;
    t->epfd = -1;
    atomic_init(&t->polling, 0);
    long to = 20;
    if (proust__config_long(PROUST_CFG_TCP_CONNECT_TIMEOUT, &to) != PROUST_OK || to <= 0) {
        if (to <= 0)
            PROUST_WARN("tcp: PROUST_TCP_CONNECT_TIMEOUT must be positive; using 20 s");
        to = 20;
    }
    t->timeout_s = to;
    const char *how = proust__config_str(PROUST_CFG_TCP_CONNECT);
    if (strcmp(how, "lazy") == 0) {
        t->lazy = 1;
    } else if (strcmp(how, "eager") != 0) {
        PROUST_ERROR("PROUST_TCP_CONNECT=%s: expected lazy or eager", how);
        return PROUST_ERR_INVALID;
    }
    if (pthread_mutex_init(&t->hs_lock, NULL) != 0)
        return PROUST_ERR_SYS;
    t->hs_lock_ok = 1;
    t->conns = calloc((size_t)t->size, sizeof *t->conns);
    if (!t->conns)
        return PROUST_ERR_NOMEM;
    for (int r = 0; r < t->size; r++) {
        struct tcp_conn *c = &t->conns[r];
        c->peer = r;
        c->send_fd = c->recv_fd = -1;
        atomic_init(&c->state, TCP_LIVE);
        atomic_init(&c->send_errno, 0);
        atomic_init(&c->reported, 0);
        atomic_init(&c->queued, 0);
        atomic_init(&c->link, TCP_CONN_NONE);
        if (pthread_mutex_init(&c->send_lock, NULL) != 0)
            return PROUST_ERR_SYS;
        t->nlocks++;
    }
    int rc = proust__tcp_listen(t);
    if (rc != PROUST_OK)
        return rc;
    char host[PROUST__HOST_ID_LEN];
    proust__host_identity(host, sizeof host); /* peers here dial loopback */
    rc = boot->ops->put(boot, "tcp.addr", t->addr, strlen(t->addr) + 1);
    if (rc == PROUST_OK)
        rc = boot->ops->put(boot, "tcp.host", host, strlen(host) + 1);
    if (rc == PROUST_OK && t->rank == 0) { /* the job's secret (tcp.h, handshake) */
        unsigned char secret[TCP_SECRET_LEN];
        if (getrandom(secret, sizeof secret, 0) != (ssize_t)sizeof secret) {
            PROUST_ERROR("tcp: no random bytes for the job's secret: %s", strerror(errno));
            return PROUST_ERR_SYS;
        }
        rc = boot->ops->put(boot, "tcp.secret", secret, sizeof secret);
    }
    if (rc != PROUST_OK) {
        PROUST_ERROR("tcp: cannot publish the address %s: %s", t->addr, proust_strerror(rc));
        return rc;
    }
    rail->caps = (struct proust__rail_caps){
        .max_iov = TCP_MAX_IOV,
        .max_packet = TCP_MAX_PACKET,
        .rdv_threshold = TCP_RDV_THRESHOLD,
        .get_threshold = 0,
        .put_fragment = TCP_PUT_FRAGMENT,
        .latency_us = TCP_LATENCY_US,
        .bandwidth_gbs = TCP_BANDWIDTH_GBS,
        .flags = PROUST__RAIL_HAS_FD | PROUST__RAIL_ZCOPY_PUT,
    };
    return PROUST_OK;
}

static int tcp_connect(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    if (!t || t->listen_fd < 0)
        return PROUST_ERR_STATE;
    if (t->lazy) {
        int lrc = proust__tcp_lazy_start(rail);
        if (lrc == PROUST_OK)
            t->connected = 1;
        return lrc;
    }
    int rc = proust__tcp_handshake(t, rail->boot);
    if (rc != PROUST_OK)
        return rc;
    close(t->listen_fd); /* everyone is connected: refuse latecomers */
    t->listen_fd = -1;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        PROUST_ERROR("tcp: epoll_create1: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    for (int r = 0; r < t->size; r++) {
        struct tcp_conn *c = &t->conns[r];
        c->rx.buf = proust__tcp_rx_alloc(rail, TCP_RX_INITIAL);
        if (!c->rx.buf)
            return PROUST_ERR_NOMEM;
        c->rx.cap = TCP_RX_INITIAL;
        c->rx.need = sizeof(struct tcp_frame);
        struct epoll_event ev;
        memset(&ev, 0, sizeof ev);
        ev.events = EPOLLIN;
        ev.data.u64 = (uint64_t)r;
        if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, c->recv_fd, &ev) != 0) {
            PROUST_ERROR("tcp: epoll_ctl: %s", strerror(errno));
            return PROUST_ERR_SYS;
        }
        atomic_store(&c->link, TCP_CONN_UP);
    }
    t->connected = 1;
    return PROUST_OK;
}

/* Own pages (a mapping, not the heap): binding them cannot move or
 * outlive anyone else's allocation. */
char *proust__tcp_rx_alloc(proust__rail_t *rail, size_t cap)
{
    void *b = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED)
        return NULL;
    if (rail->up.place_memory)
        rail->up.place_memory(rail->up.engine, rail->index, b, cap);
    return b;
}

void proust__tcp_rx_free(char *buf, size_t cap)
{
    if (buf)
        munmap(buf, cap);
}

static const char *tcp_device(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    return t && t->ifname[0] ? t->ifname : NULL;
}

static int tcp_reaches(proust__rail_t *rail, int peer)
{
    struct tcp_rail *t = rail->priv;
    struct tcp_conn *c = conn_of(t, peer);
    if (!c || !t->connected || atomic_load_explicit(&c->state, memory_order_relaxed) != TCP_LIVE)
        return 0;
    return t->lazy ? c->dialable || atomic_load(&c->link) == TCP_CONN_UP
                   : c->send_fd >= 0 && c->recv_fd >= 0;
}

static int tcp_fd(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    return t ? t->epfd : -1;
}

/* Before closing: send what is queued and a BYE, shut our side, and read
 * (discarding) until each peer's end of stream, for TCP_CLOSE_WAIT_S at
 * most — closing a socket with unread data would reset the connection and
 * could destroy the last frames we sent. Queued frames do not get send_done
 * here: the engine is shutting down. */
static void graceful_close(struct tcp_rail *t)
{
    enum { WR_DONE = 1, RD_DONE = 2 };
    const int n = t->size;
    unsigned char *st = calloc((size_t)n, 1);
    struct pollfd *pfd = calloc((size_t)n * 2, sizeof *pfd);
    char *scratch = malloc(64 * 1024);
    if (!st || !pfd || !scratch)
        goto out;
    for (int r = 0; r < n; r++) {
        struct tcp_conn *c = &t->conns[r];
        if (c->send_fd < 0 || c->recv_fd < 0 ||
            atomic_load_explicit(&c->state, memory_order_acquire) != TCP_LIVE)
            continue;
        struct tcp_sreq *s = calloc(1, sizeof *s + sizeof(struct iovec));
        if (!s)
            continue;
        s->hdr.pkt = (struct tcp_frame){.len = 0, .magic = TCP_FRAME_MAGIC,
                                        .kind = TCP_FRAME_BYE, .flags = 0};
        s->cnt = 1;
        s->iov[0].iov_base = s->hdr.raw;
        s->iov[0].iov_len = sizeof(struct tcp_frame);
        pthread_mutex_lock(&c->send_lock);
        if (c->qtail)
            c->qtail->next = s;
        else
            c->qhead = s;
        c->qtail = s;
        atomic_store_explicit(&c->queued, 1, memory_order_release);
        pthread_mutex_unlock(&c->send_lock);
    }
    double deadline = now_s() + TCP_CLOSE_WAIT_S;
    for (;;) {
        int np = 0, pending = 0;
        for (int r = 0; r < n; r++) {
            struct tcp_conn *c = &t->conns[r];
            if (c->send_fd < 0 || c->recv_fd < 0)
                continue;
            int live = atomic_load_explicit(&c->state, memory_order_acquire) == TCP_LIVE;
            if (!(st[r] & WR_DONE)) {
                if (!live) {
                    st[r] |= WR_DONE;
                } else {
                    struct tcp_sreq *done = NULL;
                    pthread_mutex_lock(&c->send_lock);
                    int fr = flush_locked(t, c, &done, NULL);
                    pthread_mutex_unlock(&c->send_lock);
                    for (struct tcp_sreq *s = done, *next; s; s = next) {
                        next = s->next;
                        free(s);
                    }
                    if (fr == 0) {
                        (void)shutdown(c->send_fd, SHUT_WR);
                        st[r] |= WR_DONE;
                    } else if (fr < 0) {
                        st[r] |= WR_DONE;
                    } else {
                        pfd[np++] = (struct pollfd){.fd = c->send_fd, .events = POLLOUT};
                    }
                }
            }
            if (!(st[r] & RD_DONE)) {
                if (c->rx.dead) {
                    st[r] |= RD_DONE;
                } else {
                    for (int k = 0; k < 64; k++) {
                        ssize_t got = recv(c->recv_fd, scratch, 64 * 1024, MSG_DONTWAIT);
                        if (got > 0 || (got < 0 && errno == EINTR))
                            continue;
                        if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                            st[r] |= RD_DONE; /* end of stream or error */
                        break;
                    }
                    if (!(st[r] & RD_DONE))
                        pfd[np++] = (struct pollfd){.fd = c->recv_fd, .events = POLLIN};
                }
            }
            if (st[r] != (WR_DONE | RD_DONE))
                pending++;
        }
        if (!pending)
            break;
        double left = deadline - now_s();
        if (left <= 0) {
            PROUST_DEBUG("tcp: %d connections not closed cleanly within %.1f s", pending,
                         TCP_CLOSE_WAIT_S);
            break;
        }
        int ms = (int)(left * 1000.0) + 1;
        (void)poll(pfd, (nfds_t)np, ms > 50 ? 50 : ms);
    }
out:
    free(st);
    free(pfd);
    free(scratch);
}

static void tcp_close(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    if (!t)
        return;
    if (t->listen_fd >= 0) { /* no new connection while we close */
        close(t->listen_fd);
        t->listen_fd = -1;
    }
    proust__tcp_lazy_close(t);
    if (t->connected)
        graceful_close(t);
    if (t->conns) {
        for (int r = 0; r < t->size; r++) {
            struct tcp_conn *c = &t->conns[r];
            for (struct tcp_sreq *s = c->qhead, *next; s; s = next) {
                next = s->next;
                free(s);
            }
            if (c->send_fd >= 0)
                close(c->send_fd);
            if (c->recv_fd >= 0 && c->recv_fd != c->send_fd)
                close(c->recv_fd);
            proust__tcp_rx_free(c->rx.buf, c->rx.cap);
            if (r < t->nlocks)
                pthread_mutex_destroy(&c->send_lock);
        }
        free(t->conns);
    }
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->hs_lock_ok)
        pthread_mutex_destroy(&t->hs_lock);
    free(t->where);
    free(t);
    rail->priv = NULL;
}

int proust__tcp_debug_send_fd(proust__rail_t *rail, int peer)
{
    struct tcp_conn *c = conn_of(rail->priv, peer);
    return c ? c->send_fd : -1;
}

const struct proust__rail_ops proust__rail_tcp = {
    .name = "tcp",
    .description = "TCP/IPv4 sockets, one connection per peer (opened on demand: PROUST_TCP_CONNECT); puts land in place",
    .open = tcp_open,
    .connect = tcp_connect,
    .device = tcp_device,
    .reaches = tcp_reaches,
    .send = tcp_send,
    .put = tcp_put,
    .expose = NULL,
    .get = NULL,
    .busy = tcp_busy,
    .flush = tcp_flush,
    .poll = tcp_poll,
    .fd = tcp_fd,
    .disconnect = tcp_disconnect,
    .close = tcp_close,
};
