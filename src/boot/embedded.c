/*
 * embedded.c — the bootstrap of a process started by proustrun: rank and
 * size from the environment, key-value exchange and fence over the socket
 * named by PROUST_BOOT_FD (protocol in boot/wire.h).
 *
 * Threads. `req` serialises request/reply exchanges and guards the receive
 * buffer (only its holder reads the socket); `wlock` makes each record one
 * uninterrupted write (abort takes only this one, so it never waits behind
 * a fence); `qlock` guards the queue of failure notices. A FAILED record that
 * arrives while a thread waits for a reply is queued, and so is one that
 * proust__boot_poll_failed_rank reads with a non-blocking receive.
 *
 * A lost connection (launcher gone, malformed record) makes every later call
 * return PROUST_ERR_BOOT; nothing waits on a dead socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "boot/wire.h"
#include "common/log.h"
#include "proust.h"

#define HDR_LEN sizeof(struct proust__wire_hdr)

struct embedded {
    pthread_mutex_t req;
    pthread_mutex_t wlock;
    pthread_mutex_t qlock;
    atomic_int broken;
    /* Bytes received and not yet consumed (under req). */
    unsigned char *rbuf;
    size_t rlen, rcap;
    /* Ring of dead ranks not yet returned by poll_failed (under qlock). */
    int *failq;
    size_t qhead, qcount, qcap;
};

/* ---- helpers --------------------------------------------------------------- */

static int parse_int_env(const char *name, int *out, int required)
{
    const char *v = getenv(name);
    if (!v) {
        if (required)
            PROUST_ERROR("%s is not set (start the job with proustrun)", name);
        return required ? PROUST_ERR_BOOT : PROUST_ERR_INVALID;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno != 0 || x < 0 || x > INT_MAX) {
        PROUST_ERROR("%s=%s is not a non-negative integer", name, v);
        return PROUST_ERR_BOOT;
    }
    *out = (int)x;
    return PROUST_OK;
}

static int set_broken(struct embedded *e, const char *why)
{
    if (atomic_exchange(&e->broken, 1) == 0)
        PROUST_ERROR("lost the connection to proustrun: %s", why);
    return PROUST_ERR_BOOT;
}

static void enqueue_failure(struct embedded *e, int rank)
{
    pthread_mutex_lock(&e->qlock);
    if (e->qcount == e->qcap) {
        size_t ncap = e->qcap ? e->qcap * 2 : 16;
        int *nq = malloc(ncap * sizeof *nq);
        if (!nq) {
            pthread_mutex_unlock(&e->qlock);
            PROUST_ERROR("out of memory: dropping the failure notice of rank %d", rank);
            return;
        }
        for (size_t i = 0; i < e->qcount; i++)
            nq[i] = e->failq[(e->qhead + i) % e->qcap];
        free(e->failq);
        e->failq = nq;
        e->qcap = ncap;
        e->qhead = 0;
    }
    e->failq[(e->qhead + e->qcount) % e->qcap] = rank;
    e->qcount++;
    pthread_mutex_unlock(&e->qlock);
}

/* Write one record: header then up to two payload pieces. */
static int send_record(proust__boot_t *boot, uint16_t type, int32_t rank, int32_t arg,
                       const void *p1, size_t l1, const void *p2, size_t l2)
{
    struct embedded *e = boot->priv;
    if (atomic_load(&e->broken))
        return PROUST_ERR_BOOT;
    struct proust__wire_hdr h = {.len = (uint32_t)(l1 + l2), .type = type,
                                 .magic = PROUST_WIRE_MAGIC, .rank = rank, .arg = arg};
    struct iovec iov[3] = {{&h, HDR_LEN}, {(void *)p1, l1}, {(void *)p2, l2}};
    struct iovec *v = iov;
    int cnt = 3;
    int rc = PROUST_OK;
    pthread_mutex_lock(&e->wlock);
    while (cnt > 0) {
        if (v->iov_len == 0) {
            v++, cnt--;
            continue;
        }
        struct msghdr m = {.msg_iov = v, .msg_iovlen = (size_t)cnt};
        ssize_t n = sendmsg(boot->fd, &m, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd p = {.fd = boot->fd, .events = POLLOUT};
                poll(&p, 1, -1);
                continue;
            }
            rc = set_broken(e, strerror(errno));
            break;
        }
        size_t done = (size_t)n;
        while (cnt > 0 && done >= v->iov_len) {
            done -= v->iov_len;
            v++, cnt--;
        }
        if (cnt > 0) {
            v->iov_base = (char *)v->iov_base + done;
            v->iov_len -= done;
        }
    }
    pthread_mutex_unlock(&e->wlock);
    return rc;
}

/* Read what the socket has. blocking: wait for at least one byte.
 * Returns bytes read (0: nothing available), or PROUST_ERR_BOOT. Under req. */
static long fill(proust__boot_t *boot, int blocking)
{
    struct embedded *e = boot->priv;
    if (e->rcap - e->rlen < 4096) {
        size_t ncap = e->rcap ? e->rcap * 2 : 8192;
        unsigned char *nb = realloc(e->rbuf, ncap);
        if (!nb)
            return set_broken(e, "out of memory");
        e->rbuf = nb;
        e->rcap = ncap;
    }
    for (;;) {
        if (blocking) {
            struct pollfd p = {.fd = boot->fd, .events = POLLIN};
            int pr = poll(&p, 1, -1);
            if (pr < 0 && errno != EINTR)
                return set_broken(e, strerror(errno));
            if (pr <= 0)
                continue;
        }
        ssize_t n = recv(boot->fd, e->rbuf + e->rlen, e->rcap - e->rlen, MSG_DONTWAIT);
        if (n > 0) {
            e->rlen += (size_t)n;
            return (long)n;
        }
        if (n == 0)
            return set_broken(e, "the launcher closed it");
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!blocking)
                return 0;
            continue;
        }
        return set_broken(e, strerror(errno));
    }
}

/* A whole record at the start of rbuf? 1 yes (*h, *payload set), 0 not yet,
 * PROUST_ERR_BOOT malformed. Under req. */
static int peek_record(proust__boot_t *boot, struct proust__wire_hdr *h,
                       const unsigned char **payload)
{
    struct embedded *e = boot->priv;
    if (e->rlen < HDR_LEN)
        return 0;
    memcpy(h, e->rbuf, HDR_LEN);
    if (h->magic != PROUST_WIRE_MAGIC || h->len > PROUST_WIRE_MAX_PAYLOAD)
        return set_broken(e, "malformed record (is PROUST_BOOT_FD really from proustrun?)");
    if (e->rlen < HDR_LEN + h->len) {
        if (e->rcap < HDR_LEN + h->len + 4096) {
            unsigned char *nb = realloc(e->rbuf, HDR_LEN + h->len + 4096);
            if (!nb)
                return set_broken(e, "out of memory");
            e->rbuf = nb;
            e->rcap = HDR_LEN + h->len + 4096;
        }
        return 0;
    }
    *payload = e->rbuf + HDR_LEN;
    return 1;
}

static void consume(struct embedded *e, const struct proust__wire_hdr *h)
{
    size_t n = HDR_LEN + h->len;
    memmove(e->rbuf, e->rbuf + n, e->rlen - n);
    e->rlen -= n;
}

static void note_failure(struct embedded *e, const struct proust__wire_hdr *h,
                         const unsigned char *payload)
{
    PROUST_INFO("launcher reports: %.*s", (int)h->len, (const char *)payload);
    enqueue_failure(e, h->rank);
}

/* Wait for the reply of type `want`, queueing failure notices met on the way.
 * The caller consumes the record. Under req. */
static int wait_reply(proust__boot_t *boot, uint16_t want, struct proust__wire_hdr *h,
                      const unsigned char **payload)
{
    struct embedded *e = boot->priv;
    for (;;) {
        if (atomic_load(&e->broken))
            return PROUST_ERR_BOOT;
        int r = peek_record(boot, h, payload);
        if (r < 0)
            return r;
        if (r == 1) {
            if (h->type == PROUST_WIRE_FAILED) {
                note_failure(e, h, *payload);
                consume(e, h);
                continue;
            }
            if (h->type == want)
                return PROUST_OK;
            return set_broken(e, "unexpected record type");
        }
        long n = fill(boot, 1);
        if (n < 0)
            return (int)n;
    }
}

/* ---- ops ------------------------------------------------------------------- */

static int embedded_detect(void)
{
    return getenv(PROUST_ENV_BOOT_FD) != NULL;
}

static int embedded_init(proust__boot_t *boot)
{
    int rank, size, fd;
    if (parse_int_env(PROUST_ENV_RANK, &rank, 1) != PROUST_OK ||
        parse_int_env(PROUST_ENV_SIZE, &size, 1) != PROUST_OK ||
        parse_int_env(PROUST_ENV_BOOT_FD, &fd, 1) != PROUST_OK)
        return PROUST_ERR_BOOT;
    if (size < 1 || rank >= size) {
        PROUST_ERROR("%s=%d is not below %s=%d", PROUST_ENV_RANK, rank, PROUST_ENV_SIZE, size);
        return PROUST_ERR_BOOT;
    }
    int lrank = rank, lsize = size;
    int rc = parse_int_env(PROUST_ENV_LOCAL_RANK, &lrank, 0);
    if (rc == PROUST_ERR_BOOT)
        return rc;
    rc = parse_int_env(PROUST_ENV_LOCAL_SIZE, &lsize, 0);
    if (rc == PROUST_ERR_BOOT)
        return rc;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        PROUST_ERROR("%s=%d is not an open socket (was this process started by proustrun?)",
                     PROUST_ENV_BOOT_FD, fd);
        return PROUST_ERR_BOOT;
    }
    /* Processes this one starts must not hold the launcher connection. */
    int fl = fcntl(fd, F_GETFD);
    if (fl >= 0)
        fcntl(fd, F_SETFD, fl | FD_CLOEXEC);

    struct embedded *e = calloc(1, sizeof *e);
    if (!e)
        return PROUST_ERR_NOMEM;
    pthread_mutex_init(&e->req, NULL);
    pthread_mutex_init(&e->wlock, NULL);
    pthread_mutex_init(&e->qlock, NULL);
    atomic_init(&e->broken, 0);

    boot->rank = rank;
    boot->size = size;
    boot->local_rank = lrank;
    boot->local_size = lsize;
    boot->fd = fd;
    const char *job = getenv(PROUST_ENV_JOBID);
    if (job && *job) {
        snprintf(boot->jobid, sizeof boot->jobid, "%s", job);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(boot->jobid, sizeof boot->jobid, "%ld-e%llx", (long)getppid(),
                 (unsigned long long)ts.tv_sec);
    }
    boot->priv = e;
    return PROUST_OK;
}

static int embedded_put(proust__boot_t *boot, const char *key, const void *value, size_t len)
{
    if (!boot->priv || !key)
        return PROUST_ERR_INVALID;
    size_t klen = strlen(key);
    if (klen == 0 || klen > PROUST_WIRE_MAX_KEY || (len && !value) ||
        len > PROUST_WIRE_MAX_PAYLOAD - klen)
        return PROUST_ERR_INVALID;
    return send_record(boot, PROUST_WIRE_PUT, boot->rank, (int32_t)klen, key, klen, value, len);
}

static int embedded_get(proust__boot_t *boot, int rank, const char *key, void *value,
                        size_t *len)
{
    struct embedded *e = boot->priv;
    if (!e || !key || !len)
        return PROUST_ERR_INVALID;
    size_t klen = strlen(key);
    if (klen == 0 || klen > PROUST_WIRE_MAX_KEY)
        return PROUST_ERR_INVALID;
    if (rank < 0 || rank >= boot->size)
        return PROUST_ERR_RANK;
    pthread_mutex_lock(&e->req);
    int rc = send_record(boot, PROUST_WIRE_GET, rank, 0, key, klen, NULL, 0);
    struct proust__wire_hdr h;
    const unsigned char *payload = NULL;
    if (rc == PROUST_OK)
        rc = wait_reply(boot, PROUST_WIRE_GET_REPLY, &h, &payload);
    if (rc == PROUST_OK) {
        if (h.arg != PROUST_OK) {
            rc = h.arg == PROUST_ERR_INVALID ? PROUST_ERR_INVALID : PROUST_ERR_BOOT;
        } else if (h.len > *len) {
            *len = h.len;
            rc = PROUST_ERR_NOMEM;
        } else {
            if (h.len)
                memcpy(value, payload, h.len);
            *len = h.len;
        }
        consume(e, &h);
    }
    pthread_mutex_unlock(&e->req);
    return rc;
}

static int embedded_get_all(proust__boot_t *boot, const char *key,
                            struct proust__boot_values *out)
{
    struct embedded *e = boot->priv;
    if (!e || !key)
        return PROUST_ERR_INVALID;
    size_t klen = strlen(key);
    if (klen == 0 || klen > PROUST_WIRE_MAX_KEY)
        return PROUST_ERR_INVALID;
    pthread_mutex_lock(&e->req);
    int rc = send_record(boot, PROUST_WIRE_GET_ALL, boot->rank, 0, key, klen, NULL, 0);
    struct proust__wire_hdr h;
    const unsigned char *payload = NULL;
    if (rc == PROUST_OK)
        rc = wait_reply(boot, PROUST_WIRE_GET_ALL_REPLY, &h, &payload);
    if (rc == PROUST_OK) {
        int32_t *vlen = malloc((size_t)boot->size * sizeof *vlen);
        if (h.arg != PROUST_OK) {
            rc = h.arg == PROUST_ERR_NOMEM ? PROUST_ERR_NOMEM : PROUST_ERR_BOOT;
        } else if (!vlen) {
            rc = PROUST_ERR_NOMEM;
        } else if (h.rank != boot->size ||
                   proust__wire_all_parse(payload, h.len, boot->size, out->off, vlen) != 0) {
            rc = set_broken(e, "malformed GET_ALL_REPLY");
        } else if (!(out->buf = malloc(h.len ? h.len : 1))) {
            rc = PROUST_ERR_NOMEM;
        } else {
            memcpy(out->buf, payload, h.len);
            for (int r = 0; r < boot->size; r++)
                out->len[r] = vlen[r] < 0 ? SIZE_MAX : (size_t)vlen[r];
        }
        free(vlen);
        consume(e, &h);
    }
    pthread_mutex_unlock(&e->req);
    return rc;
}

static int embedded_fence(proust__boot_t *boot)
{
    struct embedded *e = boot->priv;
    if (!e)
        return PROUST_ERR_STATE;
    pthread_mutex_lock(&e->req);
    int rc = send_record(boot, PROUST_WIRE_FENCE, boot->rank, 0, NULL, 0, NULL, 0);
    struct proust__wire_hdr h;
    const unsigned char *payload = NULL;
    if (rc == PROUST_OK)
        rc = wait_reply(boot, PROUST_WIRE_FENCE_DONE, &h, &payload);
    if (rc == PROUST_OK) {
        if (h.arg != PROUST_OK) {
            rc = h.arg == PROUST_ERR_PEER_FAILED ? PROUST_ERR_PEER_FAILED : PROUST_ERR_BOOT;
            PROUST_ERROR("fence failed: a rank exited or left before entering it");
        }
        consume(e, &h);
    }
    pthread_mutex_unlock(&e->req);
    return rc;
}

static void embedded_abort(proust__boot_t *boot, int code, const char *why)
{
    if (!why)
        why = "(no reason given)";
    int rc = boot->priv ? send_record(boot, PROUST_WIRE_ABORT, boot->rank, code, why,
                                      strlen(why), NULL, 0)
                        : PROUST_ERR_BOOT;
    if (rc == PROUST_OK) {
        /* The launcher kills the whole job; exit on our own if it does not. */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        for (int i = 0; i < 200; i++)
            nanosleep(&ts, NULL);
    }
    fprintf(stderr, "proust[%d]: abort (code %d): %s\n", boot->rank, code, why);
    fflush(stderr);
    _exit(code);
}

static void embedded_finalize(proust__boot_t *boot)
{
    struct embedded *e = boot->priv;
    if (boot->fd >= 0)
        close(boot->fd);
    boot->fd = -1;
    if (!e)
        return;
    pthread_mutex_destroy(&e->req);
    pthread_mutex_destroy(&e->wlock);
    pthread_mutex_destroy(&e->qlock);
    free(e->rbuf);
    free(e->failq);
    free(e);
    boot->priv = NULL;
}

static int embedded_poll_failed(proust__boot_t *boot)
{
    struct embedded *e = boot->priv;
    if (!e)
        return -1;
    /* If another thread holds req it is reading the socket and will queue
     * any notice it meets; do not wait for it. */
    if (pthread_mutex_trylock(&e->req) == 0) {
        while (!atomic_load(&e->broken)) {
            struct proust__wire_hdr h;
            const unsigned char *payload = NULL;
            int r = peek_record(boot, &h, &payload);
            if (r < 0)
                break;
            if (r == 1) {
                if (h.type != PROUST_WIRE_FAILED) {
                    set_broken(e, "unexpected record type");
                    break;
                }
                note_failure(e, &h, payload);
                consume(e, &h);
                continue;
            }
            if (fill(boot, 0) <= 0)
                break;
        }
        pthread_mutex_unlock(&e->req);
    }
    int rank = -1;
    pthread_mutex_lock(&e->qlock);
    if (e->qcount > 0) {
        rank = e->failq[e->qhead];
        e->qhead = (e->qhead + 1) % e->qcap;
        e->qcount--;
    }
    pthread_mutex_unlock(&e->qlock);
    return rank;
}

const struct proust__boot_ops proust__boot_embedded = {
    .name = "proustrun",
    .detect = embedded_detect,
    .init = embedded_init,
    .put = embedded_put,
    .get = embedded_get,
    .get_all = embedded_get_all,
    .fence = embedded_fence,
    .abort = embedded_abort,
    .finalize = embedded_finalize,
    .poll_failed = embedded_poll_failed,
};
