/*
 * singleton.c — a one-process job (no launcher): rank 0 of 1, an in-memory
 * key-value store, fence is a no-op, abort exits the process.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "proust.h"

struct kv_entry {
    struct kv_entry *next;
    char *key;
    size_t len;
    unsigned char value[];
};

struct singleton {
    pthread_mutex_t lock;
    struct kv_entry *head;
};

static int singleton_detect(void)
{
    return 1;
}

static int singleton_init(proust__boot_t *boot)
{
    struct singleton *s = calloc(1, sizeof *s);
    if (!s)
        return PROUST_ERR_NOMEM;
    pthread_mutex_init(&s->lock, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    boot->rank = 0;
    boot->size = 1;
    boot->local_rank = 0;
    boot->local_size = 1;
    boot->fd = -1;
    snprintf(boot->jobid, sizeof boot->jobid, "%ld-s%llx", (long)getpid(),
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    boot->priv = s;
    return PROUST_OK;
}

static struct kv_entry *find(struct singleton *s, const char *key)
{
    for (struct kv_entry *e = s->head; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int singleton_put(proust__boot_t *boot, const char *key, const void *value, size_t len)
{
    struct singleton *s = boot->priv;
    if (!s || !key || !*key || (len && !value))
        return PROUST_ERR_INVALID;
    struct kv_entry *e = malloc(sizeof *e + len);
    if (!e)
        return PROUST_ERR_NOMEM;
    e->key = strdup(key);
    if (!e->key) {
        free(e);
        return PROUST_ERR_NOMEM;
    }
    e->len = len;
    if (len)
        memcpy(e->value, value, len);
    pthread_mutex_lock(&s->lock);
    /* Replace an earlier value under the same key. */
    for (struct kv_entry **pp = &s->head; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->key, key) == 0) {
            struct kv_entry *old = *pp;
            *pp = old->next;
            free(old->key);
            free(old);
            break;
        }
    }
    e->next = s->head;
    s->head = e;
    pthread_mutex_unlock(&s->lock);
    return PROUST_OK;
}

static int singleton_get(proust__boot_t *boot, int rank, const char *key, void *value,
                         size_t *len)
{
    struct singleton *s = boot->priv;
    if (!s || !key || !len)
        return PROUST_ERR_INVALID;
    if (rank != 0)
        return PROUST_ERR_RANK;
    int rc = PROUST_OK;
    pthread_mutex_lock(&s->lock);
    struct kv_entry *e = find(s, key);
    if (!e) {
        rc = PROUST_ERR_INVALID;
    } else if (e->len > *len) {
        *len = e->len;
        rc = PROUST_ERR_NOMEM;
    } else {
        if (e->len)
            memcpy(value, e->value, e->len);
        *len = e->len;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int singleton_fence(proust__boot_t *boot)
{
    return boot->priv ? PROUST_OK : PROUST_ERR_STATE;
}

static void singleton_abort(proust__boot_t *boot, int code, const char *why)
{
    (void)boot;
    fprintf(stderr, "proust: abort (code %d): %s\n", code, why ? why : "(no reason given)");
    fflush(stderr);
    _exit(code);
}

static void singleton_finalize(proust__boot_t *boot)
{
    struct singleton *s = boot->priv;
    if (!s)
        return;
    while (s->head) {
        struct kv_entry *e = s->head;
        s->head = e->next;
        free(e->key);
        free(e);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
    boot->priv = NULL;
}

static int singleton_poll_failed(proust__boot_t *boot)
{
    (void)boot;
    return -1;
}

const struct proust__boot_ops proust__boot_singleton = {
    .name = "singleton",
    .detect = singleton_detect,
    .init = singleton_init,
    .put = singleton_put,
    .get = singleton_get,
    .fence = singleton_fence,
    .abort = singleton_abort,
    .finalize = singleton_finalize,
    .poll_failed = singleton_poll_failed,
};
