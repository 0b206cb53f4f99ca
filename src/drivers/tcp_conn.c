/*
 * tcp_conn.c — tcp rail set-up: the address to listen on, the listening
 * socket, and the all-to-all connection handshake (see tcp.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/host.h"
#include "common/log.h"
#include "drivers/tcp.h"
#include "proust.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void proust__tcp_tune_socket(int fd)
{
    int one = 1;
    /* Best effort: a failure only costs latency. */
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* measured on loopback: fixed 4 MiB buffers beat autotuning for
     * 256 KiB - 512 KiB messages (docs/PERFORMANCE.md) */
    int bytes = 4 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

/* ---- Listening socket (addresses: tcp_addr.c) ------------------------------ */

int proust__tcp_listen(struct tcp_rail *t)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    bool any;
    int rc = proust__tcp_bind_addr(&sa.sin_addr, &any, t->ifname, sizeof t->ifname);
    if (rc != PROUST_OK)
        return rc;
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, host, sizeof host);

    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        PROUST_ERROR("tcp: socket: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    t->listen_fd = fd;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        PROUST_ERROR("tcp: cannot bind to %s: %s (set PROUST_TCP_ADDR to a local IPv4 address)",
                     host, strerror(errno));
        return PROUST_ERR_SYS;
    }
    if (listen(fd, SOMAXCONN) != 0) {
        PROUST_ERROR("tcp: listen on %s: %s", host, strerror(errno));
        return PROUST_ERR_SYS;
    }
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) {
        PROUST_ERROR("tcp: getsockname: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    proust__tcp_describe(t->addr, sizeof t->addr, any, sa.sin_addr, ntohs(sa.sin_port));
    PROUST_DEBUG("tcp: listening, published %s", t->addr);
    return PROUST_OK;
}

/* ---- Handshake ------------------------------------------------------------ */

void proust__tcp_hello_make(const struct tcp_rail *t, const proust__boot_t *boot,
                            struct tcp_hello *h)
{
    memset(h, 0, sizeof *h);
    h->magic = TCP_HELLO_MAGIC;
    h->version = TCP_HELLO_VERSION;
    h->rank = t->rank;
    h->size = t->size;
    memcpy(h->jobid, boot->jobid, sizeof h->jobid);
    h->jobid[sizeof h->jobid - 1] = '\0';
    memcpy(h->secret, t->secret, sizeof h->secret);
}

/* Check a peer's hello; writes the reason into why on failure. */
int proust__tcp_hello_check(const struct tcp_rail *t, const proust__boot_t *boot,
                            const struct tcp_hello *h, char *why, size_t whylen)
{
    if (h->magic != TCP_HELLO_MAGIC) {
        if (h->magic == __builtin_bswap64(TCP_HELLO_MAGIC))
            snprintf(why, whylen, "peer has the other byte order (heterogeneous clusters "
                                  "are not supported)");
        else
            snprintf(why, whylen, "bad hello magic 0x%016llx (not a Proust tcp peer)",
                     (unsigned long long)h->magic);
        return -1;
    }
    if (h->version != TCP_HELLO_VERSION) {
        snprintf(why, whylen, "protocol version %u, expected %u", h->version, TCP_HELLO_VERSION);
        return -1;
    }
    char job[sizeof h->jobid];
    memcpy(job, h->jobid, sizeof job);
    job[sizeof job - 1] = '\0';
    char mine[sizeof boot->jobid];
    memcpy(mine, boot->jobid, sizeof mine);
    mine[sizeof mine - 1] = '\0';
    if (strcmp(job, mine) != 0) {
        snprintf(why, whylen, "job id \"%s\" is not ours (\"%s\")", job, mine);
        return -1;
    }
    if (h->size != t->size || h->rank < 0 || h->rank >= t->size) {
        snprintf(why, whylen, "rank %d of %d does not fit a job of %d", (int)h->rank,
                 (int)h->size, t->size);
        return -1;
    }
    unsigned diff = 0; /* compared in full: no early exit to time */
    for (size_t i = 0; i < sizeof h->secret; i++)
        diff |= h->secret[i] ^ t->secret[i];
    if (diff) {
        snprintf(why, whylen, "rank %d does not know the job's secret (not started by this "
                              "job's launcher)", (int)h->rank);
        return -1;
    }
    return 0;
}

void proust__tcp_hs_close(struct tcp_hs *h)
{
    if (h->fd >= 0)
        close(h->fd);
    h->fd = -1;
}

/* Connector: this attempt failed; try again later. */
void proust__tcp_hs_retry(struct tcp_hs *h, double now, int err)
{
    if (err) {
        h->last_err = err;
        h->why[0] = '\0';
    }
    proust__tcp_hs_close(h);
    h->phase = HS_WAIT;
    h->retry_at = now + h->backoff;
    h->backoff = h->backoff * 2 > 0.25 ? 0.25 : h->backoff * 2;
}

/* Connector: start (or restart) a non-blocking connect. */
void proust__tcp_hs_dial(struct tcp_hs *h, double now)
{
    h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (h->fd < 0) {
        h->last_err = errno;
        h->why[0] = '\0';
        h->phase = HS_WAIT;
        h->retry_at = now + h->backoff;
        return;
    }
    proust__tcp_tune_socket(h->fd);
    h->out_done = h->in_done = 0;
    h->out_ready = 1;
    if (connect(h->fd, (struct sockaddr *)&h->sa, sizeof h->sa) == 0)
        h->phase = HS_XCHG;
    else if (errno == EINPROGRESS || errno == EINTR)
        h->phase = HS_CONNECTING;
    else
        proust__tcp_hs_retry(h, now, errno);
}

/* Move hello bytes. The connector writes its hello then reads the answer;
 * the acceptor reads first, and writes once the caller validated the hello
 * and set out_ready. Only the hello is read: what follows it is frame data.
 * Returns 1 when the peer's hello is complete and ours (if due) is written,
 * 0 to wait, -1 on error (errno set; 0 for end of stream). */
int proust__tcp_hs_io(struct tcp_hs *h)
{
    for (;;) {
        int can_write = h->out_ready && h->out_done < sizeof h->out &&
                        (h->connector || h->in_done == sizeof h->in);
        int can_read = h->in_done < sizeof h->in && (!h->connector || h->out_done == sizeof h->out);
        if (can_write) {
            ssize_t n = send(h->fd, (char *)&h->out + h->out_done, sizeof h->out - h->out_done,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    return 0;
                return -1;
            }
            h->out_done += (size_t)n;
            continue;
        }
        if (can_read) {
            ssize_t n = recv(h->fd, (char *)&h->in + h->in_done, sizeof h->in - h->in_done,
                             MSG_DONTWAIT);
            if (n == 0) {
                errno = 0;
                return -1;
            }
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                    return 0;
                return -1;
            }
            h->in_done += (size_t)n;
            continue;
        }
        return h->in_done == sizeof h->in && (!h->out_ready || h->out_done == sizeof h->out);
    }
}

const char *proust__tcp_hs_why(const struct tcp_hs *h, char *buf, size_t len)
{
    if (h->why[0])
        return h->why;
    if (h->last_err)
        return strerror(h->last_err);
    snprintf(buf, len, "no answer");
    return buf;
}

static int resolve_each(struct tcp_rail *t, const struct proust__boot_values *addrs,
                        const struct proust__boot_values *hosts, const char *mine,
                        struct sockaddr_in *where);

int proust__tcp_resolve(struct tcp_rail *t, proust__boot_t *boot, struct sockaddr_in *where)
{
    /* Everyone's address (also kept for messages about ranks we accept):
     * loopback for a peer on this host, else one on our network */
    char mine[PROUST__HOST_ID_LEN];
    proust__host_identity(mine, sizeof mine);
    size_t slen = sizeof t->secret;
    int src = boot->ops->get(boot, 0, "tcp.secret", t->secret, &slen);
    if (src != PROUST_OK || slen != sizeof t->secret) {
        PROUST_ERROR("tcp: rank 0 published no job secret (%s)",
                     src != PROUST_OK ? proust_strerror(src) : "wrong length");
        return PROUST_ERR_CONN;
    }
    /* one request a key, not one per rank */
    struct proust__boot_values addrs, hosts;
    int arc = proust__boot_get_all(boot, "tcp.addr", sizeof t->addr - 1, &addrs);
    if (arc != PROUST_OK)
        return arc;
    arc = proust__boot_get_all(boot, "tcp.host", PROUST__HOST_ID_LEN - 1, &hosts);
    if (arc != PROUST_OK) {
        proust__boot_values_free(&addrs);
        return arc;
    }
    int rc = resolve_each(t, &addrs, &hosts, mine, where);
    proust__boot_values_free(&addrs);
    proust__boot_values_free(&hosts);
    return rc;
}

/* proust__tcp_resolve with everyone's address and host in hand. */
static int resolve_each(struct tcp_rail *t, const struct proust__boot_values *addrs,
                        const struct proust__boot_values *hosts, const char *mine,
                        struct sockaddr_in *where)
{
    const int me = t->rank, n = t->size;
    for (int r = 0; r < n; r++) {
        char buf[sizeof t->addr], theirs[PROUST__HOST_ID_LEN];
        size_t len = sizeof buf - 1, hlen = sizeof theirs - 1;
        struct tcp_conn *c = &t->conns[r];
        snprintf(c->addr, sizeof c->addr, "?");
        int grc = proust__boot_value(addrs, r, buf, &len);
        if (grc == PROUST_OK)
            grc = proust__boot_value(hosts, r, theirs, &hlen);
        if (grc != PROUST_OK) {
            if (r >= me || t->lazy) {
                PROUST_ERROR("tcp: rank %d published no tcp address (%s)", r,
                             proust_strerror(grc));
                return PROUST_ERR_CONN;
            }
            continue;
        }
        buf[len < sizeof buf ? len : sizeof buf - 1] = '\0';
        theirs[hlen < sizeof theirs ? hlen : sizeof theirs - 1] = '\0';
        grc = proust__tcp_choose(buf, strcmp(theirs, mine) == 0, &where[r], c->addr,
                                 sizeof c->addr);
        if (grc != PROUST_OK) { /* for the messages: what it published, and where */
            const char *hn = strrchr(theirs, '/');
            snprintf(c->addr, sizeof c->addr, "%.38s on %.16s", buf, hn ? hn + 1 : theirs);
        }
        if (grc != PROUST_OK && (r >= me || t->lazy)) {
            PROUST_ERROR("tcp: rank %d (host id %s) published \"%s\": %s", r, theirs, buf,
                         grc == PROUST_ERR_CONN ? "no address another host can reach"
                                                : "not an address list");
            return PROUST_ERR_CONN;
        }
        c->dialable = grc == PROUST_OK;
    }
    return PROUST_OK;
}

int proust__tcp_handshake(struct tcp_rail *t, proust__boot_t *boot)
{
    const int me = t->rank, n = t->size;
    const int ndial = n - me;     /* ranks me..n-1 */
    const int naccept = me + 1;   /* ranks 0..me */
    int rc = PROUST_ERR_CONN;
    struct sockaddr_in *where = calloc((size_t)n, sizeof *where);
    if (!where)
        return PROUST_ERR_NOMEM;
    if ((rc = proust__tcp_resolve(t, boot, where)) != PROUST_OK) {
        free(where);
        return rc;
    }
    rc = PROUST_ERR_CONN;

    struct tcp_hs *dial = calloc((size_t)ndial, sizeof *dial);
    int acap = 16, nacc = 0;
    struct tcp_hs *acc = calloc((size_t)acap, sizeof *acc);
    struct pollfd *pfd = calloc((size_t)(ndial + acap + 1), sizeof *pfd);
    struct tcp_hs **pfh = calloc((size_t)(ndial + acap + 1), sizeof *pfh);
    if (!dial || !acc || !pfd || !pfh) {
        rc = PROUST_ERR_NOMEM;
        goto out;
    }

    double start = now_s();
    double deadline = start + (double)t->timeout_s;
    for (int i = 0; i < ndial; i++) {
        struct tcp_hs *h = &dial[i];
        h->fd = -1;
        h->peer = me + i;
        h->connector = 1;
        h->backoff = 0.01;
        proust__tcp_hello_make(t, boot, &h->out);
        h->sa = where[h->peer];
        proust__tcp_hs_dial(h, start);
    }

    int dialled = 0, accepted = 0, refusals = 0;
    while (dialled < ndial || accepted < naccept) {
        double now = now_s();
        if (now >= deadline)
            break;
        /* (Re)start connects that are due, and find the next due time. */
        double wake = deadline;
        for (int i = 0; i < ndial; i++) {
            struct tcp_hs *h = &dial[i];
            if (h->phase == HS_WAIT) {
                if (h->retry_at <= now)
                    proust__tcp_hs_dial(h, now);
                if (h->phase == HS_WAIT && h->retry_at < wake)
                    wake = h->retry_at;
            }
        }
        int np = 0;
        if (accepted < naccept) {
            pfd[np] = (struct pollfd){.fd = t->listen_fd, .events = POLLIN};
            pfh[np++] = NULL;
        }
        for (int i = 0; i < ndial; i++) {
            struct tcp_hs *h = &dial[i];
            if (h->phase == HS_CONNECTING || h->phase == HS_XCHG) {
                short ev = h->phase == HS_CONNECTING || h->out_done < sizeof h->out ? POLLOUT
                                                                                  : POLLIN;
                pfd[np] = (struct pollfd){.fd = h->fd, .events = ev};
                pfh[np++] = h;
            }
        }
        for (int i = 0; i < nacc; i++) {
            struct tcp_hs *h = &acc[i];
            if (h->fd >= 0 && h->phase == HS_XCHG) {
                short ev = h->in_done < sizeof h->in ? POLLIN : POLLOUT;
                pfd[np] = (struct pollfd){.fd = h->fd, .events = ev};
                pfh[np++] = h;
            }
        }
        int ms = (int)((wake - now) * 1000.0) + 1;
        if (ms > 100)
            ms = 100;
        int pr = poll(pfd, (nfds_t)np, ms);
        if (pr < 0 && errno != EINTR) {
            PROUST_ERROR("tcp: poll during connection set-up: %s", strerror(errno));
            rc = PROUST_ERR_SYS;
            goto out;
        }
        if (pr <= 0)
            continue;
        now = now_s();
        for (int k = 0; k < np; k++) {
            if (!pfd[k].revents)
                continue;
            struct tcp_hs *h = pfh[k];
            if (!h) {
                /* New connections: accept them all (each sends its hello).
                 * acc[] grows between rounds only (pfh points into it). */
                for (;;) {
                    int slot = -1;
                    for (int i = 0; i < nacc && slot < 0; i++)
                        if (acc[i].fd < 0 && acc[i].phase != HS_DONE)
                            slot = i;
                    if (slot < 0 && nacc == acap)
                        break; /* the rest wait in the backlog */
                    int fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0)
                        break;
                    if (slot < 0)
                        slot = nacc++;
                    struct tcp_hs *a = &acc[slot];
                    memset(a, 0, sizeof *a);
                    a->fd = fd;
                    a->peer = -1;
                    a->phase = HS_XCHG;
                    proust__tcp_tune_socket(fd);
                }
                continue;
            }
            if (h->connector && h->phase == HS_CONNECTING) {
                int err = 0;
                socklen_t el = sizeof err;
                if (getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0)
                    err = errno;
                if (err) {
                    proust__tcp_hs_retry(h, now, err);
                    continue;
                }
                h->phase = HS_XCHG;
            }
            if (h->phase != HS_XCHG)
                continue;
            int r = proust__tcp_hs_io(h);
            if (r < 0) {
                if (h->connector) {
                    if (!errno)
                        snprintf(h->why, sizeof h->why, "closed during the handshake");
                    proust__tcp_hs_retry(h, now, errno);
                } else {
                    proust__tcp_hs_close(h); /* a stranger or a failed peer: forget it */
                }
                continue;
            }
            if (r == 0)
                continue;
            /* The peer's hello is in (and, for the connector, ours is out). */
            char why[160];
            if (h->connector) {
                why[0] = '\0';
                if (proust__tcp_hello_check(t, boot, &h->in, why, sizeof why) == 0 && h->in.rank != h->peer)
                    snprintf(why, sizeof why, "the process at %s is rank %d, not %d",
                             t->conns[h->peer].addr, (int)h->in.rank, h->peer);
                if (why[0]) {
                    snprintf(h->why, sizeof h->why, "handshake refused: %s", why);
                    proust__tcp_hs_retry(h, now, 0);
                    continue;
                }
                struct tcp_conn *c = &t->conns[h->peer];
                c->send_fd = h->fd;
                if (h->peer != me)
                    c->recv_fd = h->fd;
                h->fd = -1;
                h->phase = HS_DONE;
                dialled++;
                continue;
            }
            /* Acceptor */
            if (h->peer < 0) {
                why[0] = '\0';
                if (proust__tcp_hello_check(t, boot, &h->in, why, sizeof why) != 0 || h->in.rank > me ||
                    t->conns[h->in.rank].recv_fd >= 0 ||
                    (h->in.rank != me && t->conns[h->in.rank].send_fd >= 0)) {
                    if (why[0]) {
                        /* Not one of ours: answer with our hello so that a
                         * Proust dialler can tell why it is refused; never
                         * with the secret. */
                        proust__tcp_hello_make(t, boot, &h->out);
                        memset(h->out.secret, 0, sizeof h->out.secret);
                        (void)send(h->fd, &h->out, sizeof h->out, MSG_NOSIGNAL | MSG_DONTWAIT);
                    } else {
                        snprintf(why, sizeof why, "unexpected connection from rank %d",
                                 (int)h->in.rank);
                    }
                    if (refusals++ < 3)
                        PROUST_WARN("tcp: refusing a connection: %s", why);
                    else
                        PROUST_DEBUG("tcp: refusing a connection: %s", why);
                    proust__tcp_hs_close(h);
                    continue;
                }
                /* Duplicate in-flight hellos from the same rank: first wins. */
                int dup = 0;
                for (int i = 0; i < nacc; i++)
                    if (&acc[i] != h && acc[i].fd >= 0 && acc[i].peer == h->in.rank)
                        dup = 1;
                if (dup) {
                    PROUST_WARN("tcp: refusing a second connection from rank %d",
                                (int)h->in.rank);
                    proust__tcp_hs_close(h);
                    continue;
                }
                h->peer = h->in.rank;
                proust__tcp_hello_make(t, boot, &h->out);
                h->out_ready = 1;
                r = proust__tcp_hs_io(h);
                if (r < 0) {
                    proust__tcp_hs_close(h);
                    continue;
                }
                if (r == 0 || h->out_done < sizeof h->out)
                    continue;
            }
            if (h->out_done < sizeof h->out)
                continue;
            struct tcp_conn *c = &t->conns[h->peer];
            c->recv_fd = h->fd;
            if (h->peer != me)
                c->send_fd = h->fd;
            h->fd = -1;
            h->phase = HS_DONE;
            accepted++;
        }
        /* Grow the acceptor table between rounds (never during one). */
        if (nacc == acap) {
            int ncap = acap * 2;
            struct tcp_hs *na = realloc(acc, (size_t)ncap * sizeof *na);
            struct pollfd *np2 = realloc(pfd, (size_t)(ndial + ncap + 1) * sizeof *np2);
            if (np2)
                pfd = np2;
            struct tcp_hs **nh = realloc(pfh, (size_t)(ndial + ncap + 1) * sizeof *nh);
            if (nh)
                pfh = nh;
            if (na)
                acc = na;
            if (na && np2 && nh)
                acap = ncap;
        }
    }

    if (dialled == ndial && accepted == naccept) {
        rc = PROUST_OK;
        PROUST_DEBUG("tcp: %d connections up in %.3f s", n, now_s() - start);
        goto out;
    }
    /* Timed out: say who is missing (a few lines at most). */
    int told = 0, missing = 0;
    for (int i = 0; i < ndial; i++) {
        struct tcp_hs *h = &dial[i];
        if (h->phase == HS_DONE)
            continue;
        missing++;
        if (told++ < 8) {
            char tmp[32];
            PROUST_ERROR("tcp: cannot connect to rank %d at %s within %ld s: %s", h->peer,
                         t->conns[h->peer].addr, t->timeout_s, proust__tcp_hs_why(h, tmp, sizeof tmp));
        }
    }
    for (int r = 0; r <= me; r++) {
        if (t->conns[r].recv_fd >= 0)
            continue;
        missing++;
        if (told++ < 8)
            PROUST_ERROR("tcp: rank %d (%s) did not connect to rank %d (%s) within %ld s", r,
                         t->conns[r].addr, me, t->addr, t->timeout_s);
    }
    if (told > 8)
        PROUST_ERROR("tcp: ... %d connections missing in all (PROUST_TCP_CONNECT_TIMEOUT=%ld)",
                     missing, t->timeout_s);
    rc = PROUST_ERR_CONN;

out:
    if (dial)
        for (int i = 0; i < ndial; i++)
            proust__tcp_hs_close(&dial[i]);
    if (acc)
        for (int i = 0; i < nacc; i++)
            proust__tcp_hs_close(&acc[i]);
    free(dial);
    free(acc);
    free(pfd);
    free(pfh);
    free(where);
    return rc;
}
