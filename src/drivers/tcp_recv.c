/*
 * tcp_recv.c — the tcp rail's receive path: reading a readable connection
 * and parsing its frames (format in tcp.h). Runs on the polling thread only;
 * nothing here trusts the bytes: every header is checked before its length
 * is used, the staging buffer never grows past TCP_RX_LIMIT, and a bad frame
 * drops the connection with PROUST_ERR_PROTO.
 *
 * Staging buffer invariant: buf[start] is at stream offset cons, and
 * start == cons (mod 8). Frames start at multiples of 8 in the stream, so
 * every frame header — and a packet's data after it — is 8-byte aligned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/log.h"
#include "drivers/tcp.h"
#include "proust.h"

/* Drop the connection for a bad frame. */
static void proto_fail(proust__rail_t *rail, struct tcp_conn *c, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, "malformed frame from rank %d (%s): %s", c->peer, c->addr, what);
    proust__tcp_conn_fail(rail, c, PROUST_ERR_PROTO, 0, why);
}

/* Deliver every complete frame in the staging buffer. Returns 0, or -1 when
 * the connection was dropped. */
static int rx_parse(proust__rail_t *rail, struct tcp_conn *c, int *events)
{
    struct tcp_rx *rx = &c->rx;
    char what[160];
    for (;;) {
        size_t avail = rx->end - rx->start;
        if (rx->bye) { /* nothing may follow BYE; ignore it */
            rx->cons += avail;
            rx->start = rx->end;
            break;
        }
        if (rx->in_body) {
            size_t k = avail < rx->body_left ? avail : rx->body_left;
            if (k) {
                if (rx->dst) {
                    proust_copy(rx->dst, rx->buf + rx->start, k);
                    rx->dst += k;
                }
                rx->start += k;
                rx->cons += k;
                rx->body_left -= k;
                avail -= k;
            }
            if (rx->body_left)
                break;
            rx->in_body = 0;
            rx->dst = NULL;
            rx->skip = tcp_pad(rx->body_len);
            if (rx->put_ok) {
                rx->put_ok = 0;
                rail->up.put_done(rail->up.engine, c->peer, rx->token, rx->offset, rx->body_len);
                (*events)++;
            }
        }
        if (rx->skip) {
            size_t k = avail < rx->skip ? avail : rx->skip;
            rx->start += k;
            rx->cons += k;
            rx->skip -= k;
            avail -= k;
            if (rx->skip)
                break;
        }
        rx->need = sizeof(struct tcp_frame);
        if (avail < sizeof(struct tcp_frame))
            break;
        struct tcp_frame h;
        memcpy(&h, rx->buf + rx->start, sizeof h);
        if (h.magic != TCP_FRAME_MAGIC || h.flags != 0) {
            snprintf(what, sizeof what,
                     "bad frame header (magic 0x%04x, flags 0x%02x) at stream offset %llu",
                     h.magic, h.flags, (unsigned long long)rx->cons);
            proto_fail(rail, c, what);
            return -1;
        }
        if (h.kind == TCP_FRAME_PACKET) {
            if (h.len > TCP_MAX_PACKET) {
                snprintf(what, sizeof what, "packet of %u bytes exceeds the %u-byte limit",
                         h.len, TCP_MAX_PACKET);
                proto_fail(rail, c, what);
                return -1;
            }
            size_t total = sizeof h + h.len + tcp_pad(h.len);
            if (avail < total) {
                rx->need = total;
                break;
            }
            /* The data is 8-byte aligned: start == cons == 0 (mod 8). */
            rail->up.packet(rail->up.engine, c->peer, rx->buf + rx->start + sizeof h, h.len);
            rx->start += total;
            rx->cons += total;
            (*events)++;
        } else if (h.kind == TCP_FRAME_PUT) {
            if (h.len > TCP_PUT_FRAGMENT) {
                snprintf(what, sizeof what, "put of %u bytes exceeds the %u-byte fragment limit",
                         h.len, TCP_PUT_FRAGMENT);
                proto_fail(rail, c, what);
                return -1;
            }
            struct tcp_put_frame p;
            if (avail < sizeof p) {
                rx->need = sizeof p;
                break;
            }
            memcpy(&p, rx->buf + rx->start, sizeof p);
            rx->start += sizeof p;
            rx->cons += sizeof p;
            rx->in_body = 1;
            rx->need = sizeof(struct tcp_frame);
            rx->body_left = rx->body_len = h.len;
            rx->token = p.token;
            rx->offset = p.offset;
            rx->dst = rail->up.put_target(rail->up.engine, c->peer, p.token, p.offset, h.len);
            rx->put_ok = rx->dst != NULL;
            if (!rx->dst)
                PROUST_DEBUG("tcp: dropping a put of %u bytes from rank %d (unknown token %llu)",
                             h.len, c->peer, (unsigned long long)p.token);
        } else if (h.kind == TCP_FRAME_BYE) {
            if (h.len != 0) {
                snprintf(what, sizeof what, "BYE frame with %u bytes of payload", h.len);
                proto_fail(rail, c, what);
                return -1;
            }
            rx->start += sizeof h;
            rx->cons += sizeof h;
            rx->bye = 1;
        } else {
            snprintf(what, sizeof what, "unknown frame kind %u", h.kind);
            proto_fail(rail, c, what);
            return -1;
        }
    }
    if (rx->start == rx->end)
        rx->start = rx->end = (size_t)(rx->cons & (TCP_ALIGN - 1));
    return 0;
}

/* Make room to receive: the next frame must fit whole, and a recv should
 * have a good amount of free space. Returns 0 or -1 (out of memory). */
static int rx_room(proust__rail_t *rail, struct tcp_rx *rx)
{
    const size_t o = (size_t)(rx->cons & (TCP_ALIGN - 1));
    const size_t avail = rx->end - rx->start;
    size_t need = rx->need > avail ? rx->need : avail;
    if (need < sizeof(struct tcp_frame))
        need = sizeof(struct tcp_frame);
    if (o + need + 1 > rx->cap) {
        size_t ncap = rx->cap * 2;
        if (ncap < o + need + 1)
            ncap = o + need + 1;
        if (ncap > TCP_RX_LIMIT)
            ncap = TCP_RX_LIMIT;
        if (ncap < o + need + 1)
            return -1; /* cannot happen: frames are validated against the limit */
        char *nb = proust__tcp_rx_alloc(rail, ncap);
        if (!nb)
            return -1;
        /* the buffered bytes only, at the same offset modulo TCP_ALIGN */
        proust_copy(nb + o, rx->buf + rx->start, avail);
        proust__tcp_rx_free(rx->buf, rx->cap);
        rx->buf = nb;
        rx->cap = ncap;
        rx->start = o;
        rx->end = o + avail;
    }
    if (rx->start > o && (rx->start + need >= rx->cap || rx->cap - rx->end < rx->cap / 2)) {
        memmove(rx->buf + o, rx->buf + rx->start, avail);
        rx->start = o;
        rx->end = o + avail;
    }
    return 0;
}

/* Read and deliver what a readable connection has. Returns events. */
int proust__tcp_conn_read(proust__rail_t *rail, struct tcp_conn *c)
{
    struct tcp_rx *rx = &c->rx;
    int events = 0, drained = 0;
    for (int reads = 0;; reads++) {
        if (rx_parse(rail, c, &events) < 0)
            return events + 1;
        if (drained || reads == TCP_READS_PER_POLL)
            break;
        ssize_t n;
        size_t asked;
        if (rx->in_body && rx->dst && rx->body_left) {
            /* The buffer is empty: the payload goes in place, what follows
             * it into the buffer (aligned as its stream offset). */
            size_t o = (size_t)((rx->cons + rx->body_left) & (TCP_ALIGN - 1));
            struct iovec v[2] = {{rx->dst, rx->body_left}, {rx->buf + o, rx->cap - o}};
            asked = rx->body_left + (rx->cap - o);
            n = readv(c->recv_fd, v, 2);
            if (n > 0) {
                size_t k = (size_t)n < rx->body_left ? (size_t)n : rx->body_left;
                rx->dst += k;
                rx->body_left -= k;
                rx->cons += k;
                if ((size_t)n > k) {
                    rx->start = o;
                    rx->end = o + ((size_t)n - k);
                } else {
                    rx->start = rx->end = (size_t)(rx->cons & (TCP_ALIGN - 1));
                }
            }
        } else {
            if (rx_room(rail, rx) < 0) {
                char why[200];
                snprintf(why, sizeof why, "connection to rank %d (%s) dropped: out of memory",
                         c->peer, c->addr);
                proust__tcp_conn_fail(rail, c, PROUST_ERR_CONN, 0, why);
                return events + 1;
            }
            asked = rx->cap - rx->end;
            n = recv(c->recv_fd, rx->buf + rx->end, asked, MSG_DONTWAIT);
            if (n > 0)
                rx->end += (size_t)n;
        }
        if (n > 0) {
            if ((size_t)n < asked)
                drained = 1; /* the socket is empty: no recv just to hear EAGAIN */
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        /* End of stream or error. */
        int err = n < 0 ? errno : 0;
        if (rx->bye) {
            proust__tcp_conn_fail(rail, c, PROUST_ERR_CONN, 1, NULL);
            return events + 1;
        }
        char why[256];
        int serr = atomic_load_explicit(&c->send_errno, memory_order_relaxed);
        if (atomic_load_explicit(&c->state, memory_order_acquire) != TCP_LIVE && serr)
            snprintf(why, sizeof why, "connection to rank %d (%s) lost: send failed: %s",
                     c->peer, c->addr, strerror(serr));
        else if (err)
            snprintf(why, sizeof why, "connection to rank %d (%s) lost: %s", c->peer, c->addr,
                     strerror(err));
        else
            snprintf(why, sizeof why, "connection to rank %d (%s) closed by the peer%s",
                     c->peer, c->addr,
                     rx->in_body || rx->end > rx->start ? " in the middle of a frame"
                                                        : " (did it exit?)");
        proust__tcp_conn_fail(rail, c, PROUST_ERR_CONN, 0, why);
        return events + 1;
    }
    return events;
}

