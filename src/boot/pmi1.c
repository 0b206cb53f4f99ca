/*
 * pmi1.c — the PMI-1 "simple" wire protocol: processes started by MPICH's
 * Hydra (mpiexec.mpich) or by Slurm's mpi/pmi2 plugin, which speaks it too;
 * and, with PROUST_BOOT=pmi2, PMI-2's own messages to the same launchers
 * (send2/read2, start2, pmi2_barrier), on the same store and local ranks.
 *
 * The launcher hands each process a connected socket (PMI_FD, with
 * PMI_RANK and PMI_SIZE) or an address to connect to (PMI_PORT, PMI_ID),
 * and answers one request at a time (pmi_wire.h). Its key-value store is
 * one per job, holds short printable strings (Hydra: keys of 64, values of
 * 1024 bytes) and makes puts visible after a barrier. So a rank's value for
 * key K lives under "K.<rank>", hex-encoded, cut into "K.<rank>.<i>" parts
 * ("*<parts>" under the key itself) when it is longer than a value may be.
 * Which ranks share a host comes from the launcher's PMI_process_mapping,
 * or, where it gives none, from the host names the ranks publish.
 *
 * Every reply is checked (pmi_wire.c); a launcher that answers garbage, an
 * error code or nothing (it closed the socket) makes the call fail with a
 * message that says so, and a process never hangs on a closed socket.
 */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "boot/pmi_client.h"
#include "boot/pmi_wire.h"
#include "common/log.h"
#include "proust.h"


static int env_int(const char *name, int *out)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return PROUST_ERR_INVALID;
    long x = strtol(v, &end, 10);
    if (*end || x < 0 || x > 1 << 30)
        return PROUST_ERR_INVALID;
    *out = (int)x;
    return PROUST_OK;
}

int proust__pmi_send_line(struct pmi1 *p, const char *fmt, ...)
{
    char line[PROUST__PMI_LINE_MAX + 2];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line - 1)
        return PROUST_ERR_INVALID;
    line[n++] = '\n';
    for (int off = 0; off < n;) {
        ssize_t w = send(p->fd, line + off, (size_t)(n - off), MSG_NOSIGNAL);
        if (w < 0 && errno == ENOTSOCK)
            w = write(p->fd, line + off, (size_t)(n - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            PROUST_ERROR("PMI-1 launcher: cannot send to it (%s)", strerror(errno));
            return PROUST_ERR_CONN;
        }
        off += (int)w;
    }
    return PROUST_OK;
}

/* The next reply, which must be the command `cmd` (its rc= is the caller's
 * to read: reply_rc). */
int proust__pmi_read_reply(struct pmi1 *p, const char *cmd, struct proust__pmi_msg *msg)
{
    for (;;) {
        char *nl = memchr(p->in, '\n', p->inlen);
        if (nl) {
            size_t len = (size_t)(nl - p->in);
            const char *why = NULL;
            int rc = proust__pmi_parse(p->in, len, msg, &why);
            memmove(p->in, nl + 1, p->inlen - len - 1);
            p->inlen -= len + 1;
            if (rc != PROUST_OK) {
                PROUST_ERROR("PMI-1 launcher answered garbage to cmd=%s: %s", cmd, why);
                return rc;
            }
            if (!proust__pmi_is(msg, cmd)) {
                PROUST_ERROR("PMI-1 launcher answered cmd=%s where cmd=%s was due", msg->value[0],
                             cmd);
                return PROUST_ERR_PROTO;
            }
            return PROUST_OK;
        }
        if (p->inlen > PROUST__PMI_LINE_MAX) {
            PROUST_ERROR("PMI-1 launcher sent a line longer than %d bytes", PROUST__PMI_LINE_MAX);
            return PROUST_ERR_PROTO;
        }
        ssize_t r = read(p->fd, p->in + p->inlen, sizeof p->in - p->inlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            PROUST_ERROR("PMI-1 launcher closed the connection before answering cmd=%s%s%s",
                         cmd, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
            return PROUST_ERR_CONN;
        }
        p->inlen += (size_t)r;
    }
}

/* A reply's rc= (absent: 0) as a status, with the launcher's msg= logged. */
int proust__pmi_reply_rc(const struct proust__pmi_msg *msg, const char *what, bool quiet)
{
    const char *rc = proust__pmi_get(msg, "rc");
    if (!rc || strcmp(rc, "0") == 0)
        return PROUST_OK;
    if (!quiet) {
        const char *m = proust__pmi_get(msg, "msg");
        PROUST_ERROR("PMI launcher refused %s: rc=%s%s%s", what, rc, m ? " " : "", m ? m : "");
    }
    return PROUST_ERR_INVALID;
}

int proust__pmi_expect_count(const struct proust__pmi_msg *msg, const char *key, size_t *out)
{
    const char *v = proust__pmi_get(msg, key);
    char *end;
    long x = v ? strtol(v, &end, 10) : -1;
    if (!v || *end || x <= 0 || x > 1 << 20) {
        PROUST_ERROR("PMI-1 launcher: cmd=%s without a valid %s", msg->value[0], key);
        return PROUST_ERR_PROTO;
    }
    *out = (size_t)x;
    return PROUST_OK;
}

static int connect_port(struct pmi1 *p, proust__boot_t *boot)
{
    const char *port = getenv("PMI_PORT");
    char host[256];
    const char *colon = strrchr(port, ':');
    if (!colon || (size_t)(colon - port) >= sizeof host || colon == port) {
        PROUST_ERROR("PMI_PORT=%s is not host:port", port);
        return PROUST_ERR_INVALID;
    }
    memcpy(host, port, (size_t)(colon - port));
    host[colon - port] = '\0';
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0 || !ai) {
        PROUST_ERROR("PMI_PORT=%s: cannot resolve %s", port, host);
        return PROUST_ERR_CONN;
    }
    int rc = PROUST_ERR_CONN;
    for (struct addrinfo *a = ai; a && rc != PROUST_OK; a = a->ai_next) {
        p->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (p->fd >= 0 && connect(p->fd, a->ai_addr, a->ai_addrlen) == 0)
            rc = PROUST_OK;
        else if (p->fd >= 0) {
            close(p->fd);
            p->fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (rc != PROUST_OK) {
        PROUST_ERROR("PMI_PORT=%s: cannot connect (%s)", port, strerror(errno));
        return rc;
    }
    /* the launcher tells who we are */
    int id = 0;
    env_int("PMI_ID", &id);
    struct proust__pmi_msg msg;
    size_t size = 0, rank = 0;
    if ((rc = proust__pmi_send_line(p, "cmd=initack pmiid=%d", id)) != PROUST_OK ||
        (rc = proust__pmi_read_reply(p, "initack", &msg)) != PROUST_OK)
        return rc;
    for (int i = 0; i < 3; i++) {
        if ((rc = proust__pmi_read_reply(p, "set", &msg)) != PROUST_OK)
            return rc;
        const char *v;
        if ((v = proust__pmi_get(&msg, "size")))
            rc = proust__pmi_expect_count(&msg, "size", &size);
        else if ((v = proust__pmi_get(&msg, "rank")))
            rank = (size_t)strtol(v, NULL, 10) + 1; /* +1: 0 means unset */
        if (rc != PROUST_OK)
            return rc;
    }
    if (!size || !rank || rank > size) {
        PROUST_ERROR("PMI-1 launcher: initack without a valid rank and size");
        return PROUST_ERR_PROTO;
    }
    boot->size = (int)size;
    boot->rank = (int)rank - 1;
    return PROUST_OK;
}

/* "<key>.<rank>[.<part>]" under the launcher's key length. */
static int store_key(struct pmi1 *p, char *out, size_t cap, const char *key, int rank, int part)
{
    int n = part < 0 ? snprintf(out, cap, "%s.%d", key, rank)
                     : snprintf(out, cap, "%s.%d.%d", key, rank, part);
    if (n < 0 || (size_t)n >= cap || (size_t)n >= p->keylen_max) {
        PROUST_ERROR("PMI-1: key %s of rank %d is longer than the launcher keeps (%zu)", key,
                     rank, p->keylen_max);
        return PROUST_ERR_INVALID;
    }
    for (char *c = out; *c; c++)
        if (*c == ' ' || *c == '=')
            *c = '_';
    return PROUST_OK;
}

int proust__pmi_kvs_put(struct pmi1 *p, const char *key, const char *value)
{
    struct proust__pmi_msg msg;
    int rc;
    if (p->v2) {
        rc = proust__pmi2_send(p, "cmd=kvs-put;key=%s;value=%s;", key, value);
        if (rc == PROUST_OK)
            rc = proust__pmi2_read(p, "kvs-put-response", &msg);
        return rc == PROUST_OK ? proust__pmi_reply_rc(&msg, "a put", false) : rc;
    }
    rc = proust__pmi_send_line(p, "cmd=put kvsname=%s key=%s value=%s", p->kvsname, key, value);
    if (rc == PROUST_OK)
        rc = proust__pmi_read_reply(p, "put_result", &msg);
    return rc == PROUST_OK ? proust__pmi_reply_rc(&msg, "a put", false) : rc;
}

/* The value under key into out (capacity cap); PROUST_ERR_INVALID if
 * absent. */
int proust__pmi_kvs_get(struct pmi1 *p, const char *key, char *out, size_t cap)
{
    struct proust__pmi_msg msg;
    int rc;
    if (p->v2) {
        rc = proust__pmi2_send(p, "cmd=kvs-get;jobid=%s;srcid=-1;key=%s;", p->kvsname, key);
        if (rc == PROUST_OK)
            rc = proust__pmi2_read(p, "kvs-get-response", &msg);
    } else {
        rc = proust__pmi_send_line(p, "cmd=get kvsname=%s key=%s", p->kvsname, key);
        if (rc == PROUST_OK)
            rc = proust__pmi_read_reply(p, "get_result", &msg);
    }
    if (rc != PROUST_OK)
        return rc;
    if ((rc = proust__pmi_reply_rc(&msg, "a get", true)) != PROUST_OK)
        return rc;
    const char *found = proust__pmi_get(&msg, "found");
    if (p->v2 && (!found || strcasecmp(found, "TRUE") != 0))
        return PROUST_ERR_INVALID;
    const char *v = proust__pmi_get(&msg, "value");
    if (!v || strlen(v) >= cap) {
        PROUST_ERROR("PMI-1 launcher: get of %s answered %s", key, v ? "a value too long" :
                     "no value");
        return PROUST_ERR_PROTO;
    }
    strcpy(out, v);
    return PROUST_OK;
}

int proust__pmi_put(proust__boot_t *boot, const char *key, const void *value, size_t len)
{
    struct pmi1 *p = boot->priv;
    size_t part_hex = (p->vallen_max - 1) & ~(size_t)1; /* hex digits a value holds */
    char k[PROUST__PMI_LINE_MAX / 4], v[PROUST__PMI_LINE_MAX];
    if (len > (size_t)1 << 20)
        return PROUST_ERR_INVALID;
    char *hex = malloc(2 * len + 1);
    if (!hex)
        return PROUST_ERR_NOMEM;
    proust__pmi_hex_encode(value, len, hex);
    int rc;
    size_t total = 2 * len;
    if (total <= part_hex && total + 1 < sizeof v) {
        rc = store_key(p, k, sizeof k, key, boot->rank, -1);
        if (rc == PROUST_OK)
            rc = proust__pmi_kvs_put(p, k, total ? hex : "-"); /* an empty value is "-" */
    } else {
        size_t step = part_hex < sizeof v - 1 ? part_hex : (sizeof v - 2) & ~(size_t)1;
        int parts = (int)((total + step - 1) / step);
        rc = PROUST_OK;
        for (int i = 0; i < parts && rc == PROUST_OK; i++) {
            size_t off = (size_t)i * step, n = total - off < step ? total - off : step;
            memcpy(v, hex + off, n);
            v[n] = '\0';
            rc = store_key(p, k, sizeof k, key, boot->rank, i);
            if (rc == PROUST_OK)
                rc = proust__pmi_kvs_put(p, k, v);
        }
        if (rc == PROUST_OK)
            rc = store_key(p, k, sizeof k, key, boot->rank, -1);
        if (rc == PROUST_OK) {
            snprintf(v, sizeof v, "*%d", parts);
            rc = proust__pmi_kvs_put(p, k, v);
        }
    }
    free(hex);
    return rc;
}

int proust__pmi_get_value(proust__boot_t *boot, int rank, const char *key, void *value, size_t *len)
{
    struct pmi1 *p = boot->priv;
    char k[PROUST__PMI_LINE_MAX / 4], v[PROUST__PMI_LINE_MAX];
    if (rank < 0 || rank >= boot->size)
        return PROUST_ERR_INVALID;
    int rc = store_key(p, k, sizeof k, key, rank, -1);
    if (rc == PROUST_OK)
        rc = proust__pmi_kvs_get(p, k, v, sizeof v);
    if (rc != PROUST_OK)
        return rc;
    if (strcmp(v, "-") == 0) {
        *len = 0;
        return PROUST_OK;
    }
    if (v[0] != '*') {
        long n = proust__pmi_hex_decode(v, value, *len);
        if (n < 0)
            return strlen(v) / 2 > *len ? PROUST_ERR_NOMEM : PROUST_ERR_PROTO;
        *len = (size_t)n;
        return PROUST_OK;
    }
    char *end;
    long parts = strtol(v + 1, &end, 10);
    if (*end || parts <= 0 || parts > 4096)
        return PROUST_ERR_PROTO;
    size_t got = 0;
    for (long i = 0; i < parts; i++) {
        if ((rc = store_key(p, k, sizeof k, key, rank, (int)i)) != PROUST_OK ||
            (rc = proust__pmi_kvs_get(p, k, v, sizeof v)) != PROUST_OK)
            return rc == PROUST_ERR_INVALID ? PROUST_ERR_PROTO : rc; /* a part went missing */
        long n = proust__pmi_hex_decode(v, (char *)value + got, *len - got);
        if (n < 0)
            return strlen(v) / 2 > *len - got ? PROUST_ERR_NOMEM : PROUST_ERR_PROTO;
        got += (size_t)n;
    }
    *len = got;
    return PROUST_OK;
}

int proust__pmi_launcher_fence(struct pmi1 *p)
{
    struct proust__pmi_msg msg;
    int rc = p->v2 ? proust__pmi2_send(p, "cmd=kvs-fence;") : proust__pmi_send_line(p, "cmd=barrier_in");
    if (rc == PROUST_OK)
        rc = p->v2 ? proust__pmi2_read(p, "kvs-fence-response", &msg) : proust__pmi_read_reply(p, "barrier_out", &msg);
    return rc == PROUST_OK ? proust__pmi_reply_rc(&msg, "a barrier", false) : rc;
}

int proust__pmi_fence(proust__boot_t *boot)
{
    struct pmi1 *p = boot->priv;
    return p->v2 ? proust__pmi2_barrier(boot, p) : proust__pmi_launcher_fence(p);
}

/* Does rank r run on our host? From the host names every rank publishes
 * (for a launcher without PMI_process_mapping). */
static int same_host_by_name(proust__boot_t *boot, bool *same)
{
    char mine[256] = {0}, other[256];
    gethostname(mine, sizeof mine - 1);
    int rc = proust__pmi_put(boot, "boot.host", mine, strlen(mine));
    if (rc == PROUST_OK)
        rc = proust__pmi_fence(boot);
    for (int r = 0; r < boot->size && rc == PROUST_OK; r++) {
        size_t len = sizeof other - 1;
        if ((rc = proust__pmi_get_value(boot, r, "boot.host", other, &len)) == PROUST_OK) {
            other[len] = '\0';
            same[r] = strcmp(other, mine) == 0;
        }
    }
    return rc;
}

/* local_rank / local_size: from the launcher's mapping, else host names. */
int proust__pmi_find_local(proust__boot_t *boot)
{
    struct pmi1 *p = boot->priv;
    char v[PROUST__PMI_LINE_MAX];
    int *node = malloc((size_t)boot->size * sizeof *node);
    bool *same = malloc((size_t)boot->size * sizeof *same);
    int rc = node && same ? proust__pmi_job_mapping(p, v, sizeof v) : PROUST_ERR_NOMEM;
    if (rc == PROUST_OK && proust__pmi_parse_mapping(v, boot->size, node) != PROUST_OK) {
        PROUST_WARN("PMI-1 launcher's PMI_process_mapping '%.80s' is not one for %d ranks: "
                    "using host names", v, boot->size);
        rc = PROUST_ERR_INVALID;
    }
    if (rc == PROUST_OK)
        for (int r = 0; r < boot->size; r++)
            same[r] = node[r] == node[boot->rank];
    else if (rc == PROUST_ERR_INVALID) /* no mapping: host names */
        rc = same_host_by_name(boot, same);
    if (rc == PROUST_OK) {
        boot->local_rank = boot->local_size = 0;
        for (int r = 0; r < boot->size; r++) {
            boot->local_rank += same[r] && r < boot->rank;
            boot->local_size += same[r];
        }
        PROUST_DEBUG("PMI: local rank %d of %d on this host", boot->local_rank,
                     boot->local_size);
    }
    free(node);
    free(same);
    return rc;
}

static int pmi1_detect(void)
{
    return getenv("PMI_FD") != NULL || getenv("PMI_PORT") != NULL;
}

/* The job's name on this host (shm segments): "pmi-" + the store's name. */
void proust__pmi_name_job(proust__boot_t *boot, const char *kvs)
{
    size_t n = strlen(kvs) < sizeof boot->jobid - 5 ? strlen(kvs) : sizeof boot->jobid - 5;
    memcpy(boot->jobid, "pmi-", 4);
    memcpy(boot->jobid + 4, kvs, n);
    boot->jobid[4 + n] = '\0';
    for (char *c = boot->jobid; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              *c == '-' || *c == '_'))
            *c = '_';
}

static int pmi1_start(proust__boot_t *boot, int v2)
{
    struct pmi1 *p = calloc(1, sizeof *p);
    if (!p)
        return PROUST_ERR_NOMEM;
    p->fd = -1;
    p->v2 = v2;
    boot->priv = p;
    int rc, fd;
    if (env_int("PMI_FD", &fd) == PROUST_OK) {
        p->fd = fd;
        if (env_int("PMI_RANK", &boot->rank) != PROUST_OK ||
            env_int("PMI_SIZE", &boot->size) != PROUST_OK || boot->size < 1 ||
            boot->rank >= boot->size) {
            PROUST_ERROR("PMI_FD is set, but PMI_RANK and PMI_SIZE are not a rank and a size");
            return PROUST_ERR_INVALID;
        }
    } else if (getenv("PMI_PORT") && !p->v2) {
        if ((rc = connect_port(p, boot)) != PROUST_OK)
            return rc;
    } else {
        PROUST_ERROR("PMI-1: neither PMI_FD nor PMI_PORT is set");
        return PROUST_ERR_INVALID;
    }
    boot->fd = p->fd;
    struct proust__pmi_msg msg;
    if (p->v2)
        return proust__pmi2_start(boot, p);
    if ((rc = proust__pmi_send_line(p, "cmd=init pmi_version=1 pmi_subversion=1")) != PROUST_OK ||
        (rc = proust__pmi_read_reply(p, "response_to_init", &msg)) != PROUST_OK ||
        (rc = proust__pmi_reply_rc(&msg, "init", false)) != PROUST_OK)
        return rc;
    if ((rc = proust__pmi_send_line(p, "cmd=get_maxes")) != PROUST_OK ||
        (rc = proust__pmi_read_reply(p, "maxes", &msg)) != PROUST_OK ||
        (rc = proust__pmi_expect_count(&msg, "keylen_max", &p->keylen_max)) != PROUST_OK ||
        (rc = proust__pmi_expect_count(&msg, "vallen_max", &p->vallen_max)) != PROUST_OK)
        return rc;
    if (p->vallen_max < 16 || p->keylen_max < 16) {
        PROUST_ERROR("PMI-1 launcher keeps keys of %zu and values of %zu bytes: too short",
                     p->keylen_max, p->vallen_max);
        return PROUST_ERR_PROTO;
    }
    if ((rc = proust__pmi_send_line(p, "cmd=get_my_kvsname")) != PROUST_OK ||
        (rc = proust__pmi_read_reply(p, "my_kvsname", &msg)) != PROUST_OK)
        return rc;
    const char *kvs = proust__pmi_get(&msg, "kvsname");
    if (!kvs || !*kvs || strlen(kvs) >= sizeof p->kvsname) {
        PROUST_ERROR("PMI-1 launcher: my_kvsname without a valid kvsname");
        return PROUST_ERR_PROTO;
    }
    strcpy(p->kvsname, kvs);
    proust__pmi_name_job(boot, kvs);
    return proust__pmi_find_local(boot);
}

/* Hydra run with -disable-auto-cleanup keeps a job going when a process
 * fails and tells the others with SIGUSR1 (MPICH's failure notice), whose
 * default action would end them all. The failure itself reaches us
 * through the rails (a closed connection, a dead shm peer). */
static void on_failure_signal(int sig)
{
    (void)sig;
}

static void take_failure_signal(void)
{
    struct sigaction old;
    if (sigaction(SIGUSR1, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        old.sa_handler != SIG_DFL)
        return; /* the application's own, or ignored: leave it */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_failure_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
}

int proust__pmi_init(proust__boot_t *boot, int v2)
{
    int rc = pmi1_start(boot, v2);
    struct pmi1 *p = boot->priv;
    if (rc == PROUST_OK)
        take_failure_signal();
    if (rc != PROUST_OK && p) {
        if (p->fd >= 0)
            close(p->fd);
        free(p);
        boot->priv = NULL;
        boot->fd = -1;
    }
    return rc;
}

static int pmi1_init(proust__boot_t *boot)
{
    return proust__pmi_init(boot, 0);
}

void proust__pmi_abort(proust__boot_t *boot, int code, const char *why)
{
    struct pmi1 *p = boot->priv;
    PROUST_ERROR("aborting the job (code %d): %s", code, why ? why : "");
    char text[200] = "";
    for (size_t i = 0; why && why[i] && i < sizeof text - 1; i++) /* PMI-2: no ';' */
        text[i] = why[i] == ';' || why[i] < 0x20 ? ' ' : why[i];
    int sent = p && p->fd >= 0 &&
               (p->v2 ? proust__pmi2_send(p, "cmd=abort;isworld=TRUE;msg=%s;", text)
                      : proust__pmi_send_line(p, "cmd=abort exitcode=%d", code)) == PROUST_OK;
    if (sent) {
        /* the launcher kills the whole job; exit on our own if it does not */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
        for (int i = 0; i < 200; i++)
            nanosleep(&ts, NULL);
    }
    _exit(code ? code : 1);
}

void proust__pmi_finalize(proust__boot_t *boot)
{
    struct pmi1 *p = boot->priv;
    if (!p)
        return;
    struct proust__pmi_msg msg;
    if (p->v2 && p->fd >= 0 && proust__pmi2_send(p, "cmd=finalize;") == PROUST_OK)
        proust__pmi2_read(p, "finalize-response", &msg);
    else if (!p->v2 && p->fd >= 0 && proust__pmi_send_line(p, "cmd=finalize") == PROUST_OK)
        proust__pmi_read_reply(p, "finalize_ack", &msg);
    if (p->fd >= 0)
        close(p->fd);
    free(p);
    boot->priv = NULL;
}

const struct proust__boot_ops proust__boot_pmi1 = {
    .name = "pmi1",
    .detect = pmi1_detect,
    .init = pmi1_init,
    .put = proust__pmi_put,
    .get = proust__pmi_get_value,
    .fence = proust__pmi_fence,
    .abort = proust__pmi_abort,
    .finalize = proust__pmi_finalize,
    .poll_failed = NULL,
};

