/*
 * kvs.c — the launcher side of the boot protocol (src/boot/wire.h): a
 * key-value store indexed by (rank, key), the fence, failure notices and
 * abort requests. Sockets are non-blocking; replies wait in a per-rank
 * queue when a rank does not read them at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/wire.h"
#include "proust.h"
#include "proustrun.h"

#define HDR_LEN sizeof(struct proust__wire_hdr)

struct kv_entry {
    struct kv_entry *next;
    uint64_t hash;
    int rank;
    uint32_t klen, vlen;
    char data[]; /* key, then value */
};

/* A get-all reply, built once for every rank that asks (each asks after
 * the same fence): building it costs a lookup a rank, so building it for
 * each asker made a start-up's get-alls quadratic in the ranks. */
#define KV_REPLIES 8
struct kv_reply {
    char key[PROUST_WIRE_MAX_KEY];
    size_t klen;
    unsigned char *buf; /* NULL: unused slot */
    size_t len;
};

struct pr_kvs {
    struct kv_entry **buckets;
    size_t nbuckets, count;
    int fence_dirty; /* someone entered a fence or left: check it */
    struct kv_reply replies[KV_REPLIES]; /* any put makes them stale */
    unsigned next_reply;                 /* the slot to reuse next */
};

static uint64_t kv_hash(int rank, const char *key, size_t klen)
{
    uint64_t h = 1469598103934665603ull;
    unsigned char rb[sizeof rank];
    memcpy(rb, &rank, sizeof rank);
    for (size_t i = 0; i < sizeof rb; i++)
        h = (h ^ rb[i]) * 1099511628211ull;
    for (size_t i = 0; i < klen; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
    return h;
}

int pr_kvs_create(struct pr_job *job)
{
    struct pr_kvs *k = calloc(1, sizeof *k);
    if (!k)
        return -1;
    k->nbuckets = 1024;
    k->buckets = calloc(k->nbuckets, sizeof *k->buckets);
    if (!k->buckets) {
        free(k);
        return -1;
    }
    job->kvs = k;
    return 0;
}

static void replies_forget(struct pr_kvs *k)
{
    for (int i = 0; i < KV_REPLIES; i++) {
        free(k->replies[i].buf);
        k->replies[i].buf = NULL;
    }
}

void pr_kvs_destroy(struct pr_job *job)
{
    struct pr_kvs *k = job->kvs;
    if (!k)
        return;
    replies_forget(k);
    for (size_t b = 0; b < k->nbuckets; b++) {
        struct kv_entry *e = k->buckets[b];
        while (e) {
            struct kv_entry *next = e->next;
            free(e);
            e = next;
        }
    }
    free(k->buckets);
    free(k);
    job->kvs = NULL;
}

static struct kv_entry **kv_find(struct pr_kvs *k, uint64_t h, int rank, const char *key,
                                 size_t klen)
{
    struct kv_entry **pp = &k->buckets[h & (k->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next) {
        struct kv_entry *e = *pp;
        if (e->hash == h && e->rank == rank && e->klen == klen && memcmp(e->data, key, klen) == 0)
            return pp;
    }
    return pp;
}

static void kv_grow(struct pr_kvs *k)
{
    size_t nb = k->nbuckets * 2;
    struct kv_entry **nbk = calloc(nb, sizeof *nbk);
    if (!nbk)
        return; /* longer chains, still correct */
    for (size_t b = 0; b < k->nbuckets; b++) {
        struct kv_entry *e = k->buckets[b];
        while (e) {
            struct kv_entry *next = e->next;
            e->next = nbk[e->hash & (nb - 1)];
            nbk[e->hash & (nb - 1)] = e;
            e = next;
        }
    }
    free(k->buckets);
    k->buckets = nbk;
    k->nbuckets = nb;
}

static int kv_put(struct pr_kvs *k, int rank, const char *key, size_t klen, const char *value,
                  size_t vlen)
{
    uint64_t h = kv_hash(rank, key, klen);
    struct kv_entry *e = malloc(sizeof *e + klen + vlen);
    if (!e)
        return -1;
    replies_forget(k);
    e->hash = h;
    e->rank = rank;
    e->klen = (uint32_t)klen;
    e->vlen = (uint32_t)vlen;
    memcpy(e->data, key, klen);
    if (vlen)
        memcpy(e->data + klen, value, vlen);
    struct kv_entry **pp = kv_find(k, h, rank, key, klen);
    if (*pp) { /* replace */
        e->next = (*pp)->next;
        free(*pp);
        *pp = e;
        return 0;
    }
    e->next = NULL;
    *pp = e;
    if (++k->count > 2 * k->nbuckets)
        kv_grow(k);
    return 0;
}

/* ---- sending ------------------------------------------------------------- */

void pr_boot_disconnect(struct pr_job *job, struct pr_rank *r)
{
    if (r->boot_fd < 0)
        return;
    close(r->boot_fd);
    r->boot_fd = -1;
    pr_buf_free(&r->in);
    pr_buf_free(&r->out);
    job->kvs->fence_dirty = 1;
}

void pr_boot_writable(struct pr_job *job, struct pr_rank *r)
{
    if (r->boot_fd >= 0 && pr_buf_send(r->boot_fd, &r->out) < 0)
        pr_boot_disconnect(job, r); /* the rank is gone or closed its end */
}

static void send_record(struct pr_job *job, struct pr_rank *r, uint16_t type, int32_t rank,
                        int32_t arg, const void *payload, size_t len)
{
    if (r->boot_fd < 0)
        return;
    struct proust__wire_hdr h = {.len = (uint32_t)len, .type = type,
                                 .magic = PROUST_WIRE_MAGIC, .rank = rank, .arg = arg};
    pr_buf_append(&r->out, &h, HDR_LEN);
    if (len)
        pr_buf_append(&r->out, payload, len);
    pr_boot_writable(job, r);
}

void pr_boot_notify_failure(struct pr_job *job, int dead, int status)
{
    char text[160], how[128];
    pr_describe_status(status, how, sizeof how);
    int len = snprintf(text, sizeof text, "rank %d died (%s)", dead, how);
    int32_t arg = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
    for (int i = 0; i < job->opt.nprocs; i++)
        if (i != dead)
            send_record(job, &job->ranks[i], PROUST_WIRE_FAILED, dead, arg, text, (size_t)len);
}

void pr_boot_fence_dirty(struct pr_job *job)
{
    job->kvs->fence_dirty = 1;
}

void pr_boot_attach(struct pr_job *job, struct pr_rank *r, int fd, const void *early,
                    size_t len)
{
    r->boot_fd = fd;
    r->booted = 1;
    if (len)
        pr_buf_append(&r->in, early, len);
    job->kvs->fence_dirty = 1;
}

/* ---- fence ----------------------------------------------------------------- */

static void fence_check(struct pr_job *job)
{
    int entered = 0, gone = 0, n = job->opt.nprocs;
    for (int i = 0; i < n; i++) {
        const struct pr_rank *r = &job->ranks[i];
        if (r->in_fence)
            entered++;
        else if (r->boot_fd < 0 && (r->booted || !r->alive)) /* not one still to connect */
            gone++;
    }
    if (entered == 0 || (entered < n && gone == 0))
        return;
    /* Complete (everyone is in) or impossible (someone left without entering). */
    int32_t status = entered == n ? PROUST_OK : PROUST_ERR_PEER_FAILED;
    for (int i = 0; i < n; i++) {
        struct pr_rank *r = &job->ranks[i];
        if (r->in_fence) {
            r->in_fence = 0;
            send_record(job, r, PROUST_WIRE_FENCE_DONE, r->rank, status, NULL, 0);
        }
    }
}

int pr_boot_service(struct pr_job *job)
{
    while (job->kvs->fence_dirty) {
        job->kvs->fence_dirty = 0;
        fence_check(job);
    }
    return 0;
}

/* ---- receiving ------------------------------------------------------------- */

static void protocol_error(struct pr_job *job, struct pr_rank *r, const char *what)
{
    pr_err("rank %d sent a malformed boot record (%s); closing its connection", r->rank, what);
    pr_boot_disconnect(job, r);
}

static struct kv_reply *reply_find(struct pr_kvs *k, const char *key, size_t klen)
{
    for (int i = 0; i < KV_REPLIES; i++)
        if (k->replies[i].buf && k->replies[i].klen == klen && !memcmp(k->replies[i].key, key, klen))
            return &k->replies[i];
    return NULL;
}

/* Every rank's value under key, as the reply carries them; NULL when too
 * many bytes for a record, or out of memory. */
static struct kv_reply *reply_build(struct pr_job *job, const char *key, size_t klen)
{
    struct pr_kvs *k = job->kvs;
    int n = job->opt.nprocs;
    size_t total = 0;
    for (int q = 0; q < n; q++) {
        struct kv_entry *e = *kv_find(k, kv_hash(q, key, klen), q, key, klen);
        total += sizeof(int32_t) + (e ? e->vlen : 0);
    }
    unsigned char *buf = total <= PROUST_WIRE_MAX_PAYLOAD ? malloc(total ? total : 1) : NULL;
    if (!buf)
        return NULL;
    size_t pos = 0;
    for (int q = 0; q < n; q++) {
        struct kv_entry *e = *kv_find(k, kv_hash(q, key, klen), q, key, klen);
        int32_t len = e ? (int32_t)e->vlen : -1;
        memcpy(buf + pos, &len, sizeof len);
        pos += sizeof len;
        if (e) {
            memcpy(buf + pos, e->data + e->klen, e->vlen);
            pos += e->vlen;
        }
    }
    struct kv_reply *r = &k->replies[k->next_reply++ % KV_REPLIES];
    free(r->buf);
    memcpy(r->key, key, klen);
    r->klen = klen;
    r->buf = buf;
    r->len = total;
    return r;
}

/* Every rank's value under a key, in rank order: int32 length (-1: none)
 * then the bytes (wire.h, GET_ALL_REPLY); too many bytes for a record:
 * PROUST_ERR_NOMEM, and the process asks rank by rank. */
static void get_all(struct pr_job *job, struct pr_rank *r, const char *key, size_t klen)
{
    struct kv_reply *reply = reply_find(job->kvs, key, klen);
    if (!reply)
        reply = reply_build(job, key, klen);
    if (!reply) {
        send_record(job, r, PROUST_WIRE_GET_ALL_REPLY, job->opt.nprocs, PROUST_ERR_NOMEM, NULL, 0);
        return;
    }
    send_record(job, r, PROUST_WIRE_GET_ALL_REPLY, job->opt.nprocs, PROUST_OK, reply->buf,
                reply->len);
}

/* Handle one whole record; the rank may be disconnected on return. */
static void handle_record(struct pr_job *job, struct pr_rank *r,
                          const struct proust__wire_hdr *h, const char *p)
{
    switch (h->type) {
    case PROUST_WIRE_PUT:
        if (h->arg < 1 || h->arg > PROUST_WIRE_MAX_KEY || (uint32_t)h->arg > h->len) {
            protocol_error(job, r, "bad key length");
            return;
        }
        if (kv_put(job->kvs, r->rank, p, (size_t)h->arg, p + h->arg, h->len - (uint32_t)h->arg)) {
            pr_err("out of memory storing a value of rank %d", r->rank);
            exit(1);
        }
        return;
    case PROUST_WIRE_GET: {
        if (h->len < 1 || h->len > PROUST_WIRE_MAX_KEY) {
            protocol_error(job, r, "bad key length");
            return;
        }
        struct kv_entry *e = NULL;
        if (h->rank >= 0 && h->rank < job->opt.nprocs)
            e = *kv_find(job->kvs, kv_hash(h->rank, p, h->len), h->rank, p, h->len);
        if (e)
            send_record(job, r, PROUST_WIRE_GET_REPLY, h->rank, PROUST_OK, e->data + e->klen,
                        e->vlen);
        else
            send_record(job, r, PROUST_WIRE_GET_REPLY, h->rank, PROUST_ERR_INVALID, NULL, 0);
        return;
    }
    case PROUST_WIRE_GET_ALL:
        if (h->len < 1 || h->len > PROUST_WIRE_MAX_KEY) {
            protocol_error(job, r, "bad key length");
            return;
        }
        get_all(job, r, p, h->len);
        return;
    case PROUST_WIRE_FENCE:
        if (r->in_fence) {
            protocol_error(job, r, "fence while already in a fence");
            return;
        }
        r->in_fence = 1;
        job->kvs->fence_dirty = 1;
        return;
    case PROUST_WIRE_ABORT:
        pr_handle_abort(job, r, h->arg, p, h->len);
        return;
    default:
        protocol_error(job, r, "unknown record type");
        return;
    }
}

/* Handle every whole record received so far. */
static void process_records(struct pr_job *job, struct pr_rank *r)
{
    while (r->boot_fd >= 0 && !job->aborting && r->in.len - r->in.off >= HDR_LEN) {
        struct proust__wire_hdr h;
        memcpy(&h, r->in.data + r->in.off, HDR_LEN);
        if (h.magic != PROUST_WIRE_MAGIC || h.len > PROUST_WIRE_MAX_PAYLOAD) {
            protocol_error(job, r, "bad header");
            return;
        }
        if (r->in.len - r->in.off < HDR_LEN + h.len)
            break;
        handle_record(job, r, &h, r->in.data + r->in.off + HDR_LEN);
        if (r->boot_fd >= 0)
            pr_buf_consume(&r->in, HDR_LEN + h.len);
    }
}

void pr_boot_readable(struct pr_job *job, struct pr_rank *r)
{
    char chunk[65536];
    process_records(job, r); /* what came with an adopted connection */
    while (r->boot_fd >= 0 && !job->aborting) {
        ssize_t n = recv(r->boot_fd, chunk, sizeof chunk, MSG_DONTWAIT);
        if (n > 0) {
            pr_buf_append(&r->in, chunk, (size_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else { /* end of file or error: the rank finalized or died */
            pr_boot_disconnect(job, r);
            return;
        }
        process_records(job, r);
    }
}
