/*
 * tcp_lazy.c — tcp connections on demand (PROUST_TCP_CONNECT=lazy, see
 * tcp.h). Nothing connects at init: a frame for a peer not connected is
 * queued (tcp.c, submit) and the peer dialled; the polling thread accepts
 * connections, moves hellos, retries refused dials and installs each
 * connection once its hellos are checked (proust__tcp_install). A job whose
 * ranks talk to a few neighbours opens a few connections per rank, not one
 * per pair, and a peer reached by shared memory is never dialled.
 *
 * Races. Both sides may dial at once; the lower rank's dial wins: a
 * process that has a dial in flight to a higher rank refuses that rank's
 * connection, and a higher rank that receives a lower rank's hello
 * accepts it and drops its own dial. A dial that is refused, or cannot
 * reach the peer yet, is tried again (10 ms, doubling to 250 ms) until the
 * peer connects or PROUST_TCP_CONNECT_TIMEOUT seconds have passed since the
 * first try; then the peer counts as failed (peer_failed, queued frames
 * fail), with the address and the last error in the message. A peer
 * listens from before it publishes its address until its rail closes, so
 * a dial refused TCP_REFUSED_GONE times in a row (about 70 ms) means the
 * peer has ended: it fails then, not after the timeout.
 *
 * Locks: hs_lock guards the handshake table and each handshake; a
 * connection's send lock is taken only without it (install, in tcp.c).
 * `link` (NONE, PENDING, UP) is what the send path reads without a lock.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "drivers/tcp.h"
#include "proust.h"

#define TCP_ACCEPTS_PER_POLL 64
#define TCP_REFUSED_GONE 4 /* refusals in a row (10+20+40 ms apart): the peer ended */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Watch a handshake's socket for what it waits for (hs_lock held). */
static void hs_watch(struct tcp_rail *t, struct tcp_hs *h)
{
    if (h->fd < 0) {
        h->watched = 0;
        return;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    int writing = h->phase == HS_CONNECTING ||
                  (h->out_ready && h->out_done < sizeof h->out &&
                   (h->connector || h->in_done == sizeof h->in));
    ev.events = writing ? EPOLLOUT : EPOLLIN;
    ev.data.u64 = TCP_EV_HS | (uint64_t)h->slot;
    if (epoll_ctl(t->epfd, h->watched ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, h->fd, &ev) == 0)
        h->watched = 1;
}

/* Leave the table (hs_lock held); the socket is closed unless kept. */
static void hs_drop(struct tcp_rail *t, struct tcp_hs *h, int keep_fd)
{
    if (h->fd >= 0 && h->watched)
        (void)epoll_ctl(t->epfd, EPOLL_CTL_DEL, h->fd, NULL);
    if (!keep_fd)
        proust__tcp_hs_close(h);
    int slot = h->slot;
    t->hs[slot] = t->hs[--t->nhs];
    t->hs[slot]->slot = slot;
    if (t->hs[slot]->watched && slot != t->nhs) /* its epoll tag names the slot */
        hs_watch(t, t->hs[slot]);
    atomic_store_explicit(&t->hs_active, t->nhs > 0, memory_order_relaxed);
    free(h);
}

static struct tcp_hs *hs_new(struct tcp_rail *t)
{
    if (t->nhs == t->hscap) {
        int ncap = t->hscap ? t->hscap * 2 : 16;
        struct tcp_hs **n = realloc(t->hs, (size_t)ncap * sizeof *n);
        if (!n)
            return NULL;
        t->hs = n;
        t->hscap = ncap;
    }
    struct tcp_hs *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->fd = -1;
    h->peer = -1;
    h->slot = t->nhs;
    t->hs[t->nhs++] = h;
    atomic_store_explicit(&t->hs_active, 1, memory_order_relaxed);
    return h;
}

static struct tcp_hs *dial_of(struct tcp_rail *t, int peer)
{
    for (int i = 0; i < t->nhs; i++)
        if (t->hs[i]->connector && t->hs[i]->peer == peer)
            return t->hs[i];
    return NULL;
}

int proust__tcp_lazy_start(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    t->boot = rail->boot;
    t->where = calloc((size_t)t->size, sizeof *t->where);
    if (!t->where)
        return PROUST_ERR_NOMEM;
    int rc = proust__tcp_resolve(t, rail->boot, t->where);
    if (rc != PROUST_OK)
        return rc;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        PROUST_ERROR("tcp: epoll_create1: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN;
    ev.data.u64 = TCP_EV_LISTEN;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->listen_fd, &ev) != 0) {
        PROUST_ERROR("tcp: epoll_ctl: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    /* To itself: a socketpair, one end per direction (no network). */
    struct tcp_conn *me = &t->conns[t->rank];
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) {
        PROUST_ERROR("tcp: socketpair: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    me->dialable = 1;
    atomic_store(&me->link, TCP_CONN_PENDING);
    proust__tcp_install(rail, me, sv[0], sv[1]);
    return atomic_load(&me->state) == TCP_LIVE ? PROUST_OK : PROUST_ERR_SYS;
}

/* Start (hs_lock held) a dial to c's peer. */
static void dial(struct tcp_rail *t, struct tcp_conn *c)
{
    struct tcp_hs *h = hs_new(t);
    if (!h) {
        atomic_store(&c->link, TCP_CONN_NONE); /* the next frame tries again */
        return;
    }
    h->peer = c->peer;
    h->connector = 1;
    h->backoff = 0.01;
    h->first_try = now_s();
    h->sa = t->where[c->peer];
    proust__tcp_hello_make(t, t->boot, &h->out);
    proust__tcp_hs_dial(h, h->first_try);
    hs_watch(t, h);
}

void proust__tcp_lazy_want(proust__rail_t *rail, struct tcp_conn *c)
{
    struct tcp_rail *t = rail->priv;
    if (atomic_load(&c->link) != TCP_CONN_NONE)
        return; /* a dial, or a hello from it, is in flight; or it is up */
    /* decided and started under the lock: an accepted hello from this
     * peer must find either our dial or none (tcp.h: races) */
    pthread_mutex_lock(&t->hs_lock);
    if (atomic_load(&c->link) == TCP_CONN_NONE) {
        atomic_store(&c->link, TCP_CONN_PENDING);
        dial(t, c);
    }
    pthread_mutex_unlock(&t->hs_lock);
}

/* An accepted connection for c went away before it was up (hs_lock
 * held): frames already queued would wait for nobody, so dial. */
static void accept_lost(struct tcp_rail *t, struct tcp_conn *c)
{
    atomic_store(&c->link, TCP_CONN_NONE);
    if (atomic_load(&c->queued) && atomic_load(&c->state) == TCP_LIVE) {
        atomic_store(&c->link, TCP_CONN_PENDING);
        dial(t, c);
    }
}

/* A connection whose hellos are done, to install once hs_lock is free. */
struct ready {
    struct tcp_conn *c;
    int fd;
};

/* An accepted connection's hello is in (hs_lock held): take it, or refuse
 * it. Returns 1 when its answer is due (then it is ours). */
static int accept_hello(struct tcp_rail *t, struct tcp_hs *h, int *refusals)
{
    char why[200] = "";
    int peer = h->in.rank;
    if (proust__tcp_hello_check(t, t->boot, &h->in, why, sizeof why) == 0) {
        struct tcp_conn *c = &t->conns[peer];
        struct tcp_hs *mine = dial_of(t, peer);
        int link = atomic_load(&c->link);
        if (peer == t->rank) {
            snprintf(why, sizeof why, "a connection claiming to be this rank (%d)", peer);
        } else if (link == TCP_CONN_UP || (mine && t->rank < peer) ||
                   (link == TCP_CONN_PENDING && !mine)) {
            /* both dialled: ours wins (or already won: their dial, which
             * they dropped when ours reached them, waited in our backlog) */
            PROUST_DEBUG("tcp: closing rank %d's connection: ours to it wins", peer);
            return -1;
        }
        if (!why[0]) {
            if (mine) /* both dialled: theirs wins, ours goes */
                hs_drop(t, mine, 0);
            atomic_store(&c->link, TCP_CONN_PENDING);
            h->peer = peer;
            proust__tcp_hello_make(t, t->boot, &h->out);
            h->out_ready = 1;
            return 1;
        }
    } else {
        /* not one of ours: our hello, without the secret, says why */
        proust__tcp_hello_make(t, t->boot, &h->out);
        memset(h->out.secret, 0, sizeof h->out.secret);
        (void)send(h->fd, &h->out, sizeof h->out, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if ((*refusals)++ < 3)
        PROUST_WARN("tcp: refusing a connection: %s", why);
    else
        PROUST_DEBUG("tcp: refusing a connection: %s", why);
    return -1;
}

/* The dial to c's peer gave up (hs_lock not held): the peer is failed. */
static void dial_failed(proust__rail_t *rail, struct tcp_conn *c, const char *why)
{
    struct tcp_rail *t = rail->priv;
    char text[512];
    snprintf(text, sizeof text, "tcp: cannot connect to rank %d at %s within %ld s: %s",
             c->peer, c->addr, t->timeout_s, why);
    proust__tcp_conn_fail(rail, c, PROUST_ERR_CONN, 0, text);
}

/* A dial that failed this time: out of the epoll set, tried again later. */
static void redial_later(struct tcp_rail *t, struct tcp_hs *h, double now, int err)
{
    (void)epoll_ctl(t->epfd, EPOLL_CTL_DEL, h->fd, NULL);
    h->watched = 0;
    proust__tcp_hs_retry(h, now, err);
}

/* Move one handshake (hs_lock held). Returns 1 when it is done (added to
 * ready, or failed into *gave_up), 0 otherwise. */
static int step(struct tcp_rail *t, struct tcp_hs *h, double now, struct ready *ready,
                int *nready, struct tcp_conn **gave_up, char *gave_why, int *refusals)
{
    if (h->connector && h->phase == HS_WAIT) {
        if (now - h->first_try >= (double)t->timeout_s) {
            char tmp[32];
            *gave_up = &t->conns[h->peer];
            snprintf(gave_why, 256, "%s", proust__tcp_hs_why(h, tmp, sizeof tmp));
            hs_drop(t, h, 0);
            return 1;
        }
        if (h->retry_at > now)
            return 0;
        proust__tcp_hs_dial(h, now);
        h->watched = 0; /* a new socket */
        hs_watch(t, h);
        return 0;
    }
    if (h->connector && atomic_load(&t->conns[h->peer].state) != TCP_LIVE) {
        hs_drop(t, h, 0); /* the peer failed meanwhile (tcp_disconnect) */
        return 1;
    }
    if (h->connector && h->phase == HS_CONNECTING) {
        struct pollfd p = {.fd = h->fd, .events = POLLOUT};
        if (poll(&p, 1, 0) == 0)
            return 0; /* still connecting */
        int err = 0;
        socklen_t el = sizeof err;
        if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
            err = errno;
        if (err) {
            redial_later(t, h, now, err);
            /* Every rank listens from before its address was published to
             * its end: refused again and again, it has ended. */
            if (err == ECONNREFUSED && ++h->refused >= TCP_REFUSED_GONE) {
                *gave_up = &t->conns[h->peer];
                snprintf(gave_why, 256, "refused %d times: the process has ended", h->refused);
                hs_drop(t, h, 0);
                return 1;
            }
            return 0;
        }
        h->refused = 0;
        h->phase = HS_XCHG;
    }
    if (h->phase != HS_XCHG)
        return 0;
    int r = proust__tcp_hs_io(h);
    if (r < 0) {
        if (h->connector) {
            int e = errno;
            if (!e)
                snprintf(h->why, sizeof h->why, "closed during the handshake");
            redial_later(t, h, now, e);
            return 0;
        }
    }
    if (r <= 0) {
        if (r == 0) {
            hs_watch(t, h);
            return 0;
        }
        if (h->peer >= 0) /* accepted and answered, then gone */
            accept_lost(t, &t->conns[h->peer]);
        hs_drop(t, h, 0);
        return 1;
    }
    if (h->connector) {
        char why[200] = "";
        if (proust__tcp_hello_check(t, t->boot, &h->in, why, sizeof why) == 0 &&
            h->in.rank != h->peer)
            snprintf(why, sizeof why, "the process at %s is rank %d, not %d",
                     t->conns[h->peer].addr, (int)h->in.rank, h->peer);
        if (why[0]) {
            snprintf(h->why, sizeof h->why, "handshake refused: %s", why);
            redial_later(t, h, now, 0);
            return 0;
        }
        ready[(*nready)++] = (struct ready){&t->conns[h->peer], h->fd};
        atomic_fetch_add(&t->opened, 1);
        hs_drop(t, h, 1);
        return 1;
    }
    if (h->peer < 0) { /* the acceptor has the hello: judge it, answer */
        if (accept_hello(t, h, refusals) < 0) {
            hs_drop(t, h, 0);
            return 1;
        }
        /* the answer goes now (or on the next pass, as for any handshake) */
        return step(t, h, now, ready, nready, gave_up, gave_why, refusals);
    }
    ready[(*nready)++] = (struct ready){&t->conns[h->peer], h->fd};
    atomic_fetch_add(&t->accepted, 1);
    hs_drop(t, h, 1);
    return 1;
}

int proust__tcp_lazy_progress(proust__rail_t *rail)
{
    struct tcp_rail *t = rail->priv;
    if (!t->lazy || t->epfd < 0)
        return 0;
    int events = 0, refusals = 0;
    for (;;) { /* rounds: each installs what finished without the lock */
        struct ready ready[16];
        int nready = 0;
        struct tcp_conn *gave_up = NULL;
        char gave_why[256] = "";
        pthread_mutex_lock(&t->hs_lock);
        for (int k = 0; t->listen_fd >= 0 && k < TCP_ACCEPTS_PER_POLL; k++) {
            int fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                break;
            struct tcp_hs *h = hs_new(t);
            if (!h) {
                close(fd);
                break;
            }
            proust__tcp_tune_socket(fd);
            h->fd = fd;
            h->phase = HS_XCHG;
            hs_watch(t, h);
        }
        double now = now_s();
        int more = 0;
        for (int i = 0; i < t->nhs && nready < 16 && !gave_up;) {
            struct tcp_hs *h = t->hs[i];
            if (step(t, h, now, ready, &nready, &gave_up, gave_why, &refusals) == 0)
                i++; /* else the slot now holds another handshake */
        }
        more = nready == 16 || gave_up;
        pthread_mutex_unlock(&t->hs_lock);
        for (int i = 0; i < nready; i++) {
            struct tcp_conn *c = ready[i].c;
            if (atomic_load(&c->state) != TCP_LIVE) { /* failed meanwhile */
                close(ready[i].fd);
                continue;
            }
            proust__tcp_install(rail, c, ready[i].fd, ready[i].fd);
            events++;
        }
        if (gave_up) {
            dial_failed(rail, gave_up, gave_why);
            events++;
        }
        if (!more)
            break;
    }
    return events;
}

void proust__tcp_lazy_close(struct tcp_rail *t)
{
    if (!t->hs_lock_ok)
        return;
    pthread_mutex_lock(&t->hs_lock);
    while (t->nhs > 0)
        hs_drop(t, t->hs[t->nhs - 1], 0);
    free(t->hs);
    t->hs = NULL;
    t->hscap = 0;
    pthread_mutex_unlock(&t->hs_lock);
    if (t->lazy)
        PROUST_DEBUG("tcp: %d connections dialled, %d accepted", atomic_load(&t->opened),
                     atomic_load(&t->accepted));
}
