/*
 * boot.h — how a process learns its rank and size and exchanges addresses
 * with the others (the "bootstrap"). The engine sees only this interface;
 * each launcher (proustrun's embedded protocol, a one-process singleton, and
 * later PMIx/PMI) is one file exporting one const ops structure.
 */
#ifndef PROUST_BOOT_H
#define PROUST_BOOT_H

#include <stddef.h>

typedef struct proust__boot proust__boot_t;

/* Every rank's value under one key (proust__boot_get_all). */
struct proust__boot_values {
    unsigned char *buf; /* rank r's value: buf + off[r], len[r] bytes */
    size_t *off;
    size_t *len; /* SIZE_MAX: rank r put none */
    int n;
};

struct proust__boot_ops {
    const char *name;
    /* Is this launcher present in the environment? */
    int (*detect)(void);
    /* Connect; fill rank and size. */
    int (*init)(proust__boot_t *boot);
    /* Publish a value under key for this rank (visible after the next fence). */
    int (*put)(proust__boot_t *boot, const char *key, const void *value, size_t len);
    /* Fetch the value `rank` published under key; *len in: capacity, out: size.
     * PROUST_ERR_INVALID if absent, PROUST_ERR_NOMEM if the buffer is too small. */
    int (*get)(proust__boot_t *boot, int rank, const char *key, void *value, size_t *len);
    /* Optional: every rank's value under key in one exchange with the
     * launcher (proust__boot_get_all); PROUST_ERR_NOMEM or
     * PROUST_ERR_NOT_SUPPORTED: ask rank by rank. */
    int (*get_all)(proust__boot_t *boot, const char *key, struct proust__boot_values *out);
    /* Barrier over all ranks that also makes every earlier put visible. */
    int (*fence)(proust__boot_t *boot);
    /* Ask the launcher to stop the whole job with this exit code. */
    void (*abort)(proust__boot_t *boot, int code, const char *why);
    void (*finalize)(proust__boot_t *boot);
    /* Non-blocking: a rank the launcher reported dead, or -1. May be NULL
     * (a launcher without failure notices). Thread-safe. */
    int (*poll_failed)(proust__boot_t *boot);
};

struct proust__boot {
    const struct proust__boot_ops *ops;
    int rank;
    int size;
    int local_rank;   /* rank among processes on this host */
    int local_size;
    char jobid[64];   /* unique per job on this host (names shm segments) */
    int fd;           /* connection to the launcher, -1 if none */
    /* Launcher-private state (failure-notice queue, key-value store...).
     * Failure notices are read with proust__boot_poll_failed_rank. */
    void *priv;
};

/* Every rank's value under `key` (each at most max_len bytes when asked
 * rank by rank): in one exchange where the launcher can, else one get per
 * rank. PROUST_OK (free with proust__boot_values_free) or an error. */
int proust__boot_get_all(proust__boot_t *boot, const char *key, size_t max_len,
                         struct proust__boot_values *out);
/* Rank r's value, as ops->get gives it: *len in: capacity, out: size;
 * PROUST_ERR_INVALID (none), PROUST_ERR_NOMEM (too small). */
int proust__boot_value(const struct proust__boot_values *v, int rank, void *value, size_t *len);
void proust__boot_values_free(struct proust__boot_values *v);

/* Pick the launcher from the environment and initialise it. */
int proust__boot_open(proust__boot_t *boot);
void proust__boot_close(proust__boot_t *boot);
/* Non-blocking check for failure notices from the launcher: returns a rank
 * that the launcher saw die, or -1. */
int proust__boot_poll_failed_rank(proust__boot_t *boot);

extern const struct proust__boot_ops proust__boot_embedded;
extern const struct proust__boot_ops proust__boot_singleton;
extern const struct proust__boot_ops proust__boot_pmi1;
extern const struct proust__boot_ops proust__boot_pmi2;
extern const struct proust__boot_ops proust__boot_pmix;
/* The bootstrap PROUST_BOOT and the environment choose, and why (for
 * proust-info); NULL (and why says so) if PROUST_BOOT names none. */
const struct proust__boot_ops *proust__boot_choose(const char **why);

#endif
