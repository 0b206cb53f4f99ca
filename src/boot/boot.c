/*
 * boot.c — pick the launcher from the environment (PROUST_BOOT overrides):
 * proustrun's embedded protocol when PROUST_BOOT_FD is set, else PMIx when
 * PMIX_NAMESPACE and PMIX_RANK are, else PMI-1 when PMI_FD or PMI_PORT is,
 * else a one-process job.
 */
#include "boot/boot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "boot/wire.h"
#include "common/config.h"
#include "common/log.h"
#include "proust.h"

static const struct proust__boot_ops *const all_boots[] = {
    &proust__boot_embedded, &proust__boot_pmix, &proust__boot_pmi1, &proust__boot_pmi2,
    &proust__boot_singleton};

const struct proust__boot_ops *proust__boot_choose(const char **why)
{
    const char *want = proust__config_str(PROUST_CFG_BOOT);
    if (want && *want && strcmp(want, "auto") != 0) {
        for (size_t i = 0; i < sizeof all_boots / sizeof all_boots[0]; i++)
            if (strcmp(all_boots[i]->name, want) == 0) {
                *why = "PROUST_BOOT names it";
                return all_boots[i];
            }
        *why = "PROUST_BOOT names no bootstrap (auto, embedded, pmix, pmi1, pmi2, singleton)";
        return NULL;
    }
    if (proust__boot_embedded.detect()) {
        *why = "PROUST_BOOT_FD is set: started by proustrun";
        return &proust__boot_embedded;
    }
    if (proust__boot_pmix.detect()) {
        *why = "PMIX_NAMESPACE and PMIX_RANK are set: a PMIx server (Open MPI's mpirun, srun "
               "--mpi=pmix)";
        return &proust__boot_pmix;
    }
    if (proust__boot_pmi1.detect()) {
        *why = "PMI_FD or PMI_PORT is set: a PMI-1 launcher (Hydra, srun --mpi=pmi2)";
        return &proust__boot_pmi1;
    }
    *why = "no launcher in the environment: a one-process job";
    return &proust__boot_singleton;
}

int proust__boot_open(proust__boot_t *boot)
{
    if (!boot)
        return PROUST_ERR_INVALID;
    const char *why;
    const struct proust__boot_ops *ops = proust__boot_choose(&why);
    if (!ops) {
        PROUST_ERROR("PROUST_BOOT=%s: %s", proust__config_str(PROUST_CFG_BOOT), why);
        return PROUST_ERR_INVALID;
    }
    if (ops == &proust__boot_singleton) {
        const char *size = getenv(PROUST_ENV_SIZE);
        if (size && strcmp(size, "1") != 0)
            PROUST_WARN("%s=%s is set but %s is not: running as a single process "
                        "(start the job with proustrun)",
                        PROUST_ENV_SIZE, size, PROUST_ENV_BOOT_FD);
    } else if (!ops->detect()) {
        PROUST_ERROR("PROUST_BOOT=%s, but this process was not started that way", ops->name);
        return PROUST_ERR_INVALID;
    }
    memset(boot, 0, sizeof *boot);
    boot->ops = ops;
    boot->fd = -1;
    int rc = ops->init(boot);
    if (rc != PROUST_OK) {
        PROUST_ERROR("bootstrap '%s' failed: %s", ops->name, proust_strerror(rc));
        boot->ops = NULL;
        return rc;
    }
    proust__log_rank = boot->rank;
    PROUST_DEBUG("bootstrap '%s': rank %d of %d, job %s", ops->name, boot->rank, boot->size,
                 boot->jobid);
    return PROUST_OK;
}

void proust__boot_close(proust__boot_t *boot)
{
    if (!boot || !boot->ops)
        return;
    boot->ops->finalize(boot);
    boot->ops = NULL;
    boot->priv = NULL;
    boot->fd = -1;
}

int proust__boot_poll_failed_rank(proust__boot_t *boot)
{
    if (!boot || !boot->ops || !boot->ops->poll_failed)
        return -1;
    return boot->ops->poll_failed(boot);
}

/* ---- every rank's value -------------------------------------------------- */

void proust__boot_values_free(struct proust__boot_values *v)
{
    if (!v)
        return;
    free(v->buf);
    free(v->off);
    free(v->len);
    *v = (struct proust__boot_values){0};
}

/* Rank by rank, for launchers without get_all (PMI's gets are the
 * launcher's own, often local: PMIx serves them from shared memory). */
static int get_each(proust__boot_t *boot, const char *key, size_t max_len,
                    struct proust__boot_values *v)
{
    int n = boot->size;
    v->buf = malloc((size_t)n * (max_len ? max_len : 1));
    if (!v->buf)
        return PROUST_ERR_NOMEM;
    for (int r = 0; r < n; r++) {
        size_t len = max_len;
        v->off[r] = (size_t)r * max_len;
        int rc = boot->ops->get(boot, r, key, v->buf + v->off[r], &len);
        if (rc == PROUST_ERR_INVALID) {
            v->len[r] = SIZE_MAX;
            continue;
        }
        if (rc != PROUST_OK)
            return rc;
        v->len[r] = len;
    }
    return PROUST_OK;
}

int proust__boot_get_all(proust__boot_t *boot, const char *key, size_t max_len,
                         struct proust__boot_values *out)
{
    *out = (struct proust__boot_values){0};
    int n = boot->size;
    out->off = calloc((size_t)n, sizeof *out->off);
    out->len = calloc((size_t)n, sizeof *out->len);
    if (!out->off || !out->len) {
        proust__boot_values_free(out);
        return PROUST_ERR_NOMEM;
    }
    out->n = n;
    int rc = PROUST_ERR_NOT_SUPPORTED;
    if (boot->ops->get_all)
        rc = boot->ops->get_all(boot, key, out);
    if (rc == PROUST_ERR_NOMEM || rc == PROUST_ERR_NOT_SUPPORTED) {
        free(out->buf);
        out->buf = NULL;
        rc = get_each(boot, key, max_len, out);
    }
    if (rc != PROUST_OK)
        proust__boot_values_free(out);
    return rc;
}

int proust__boot_value(const struct proust__boot_values *v, int rank, void *value, size_t *len)
{
    if (rank < 0 || rank >= v->n)
        return PROUST_ERR_RANK;
    if (v->len[rank] == SIZE_MAX)
        return PROUST_ERR_INVALID;
    if (v->len[rank] > *len) {
        *len = v->len[rank];
        return PROUST_ERR_NOMEM;
    }
    memcpy(value, v->buf + v->off[rank], v->len[rank]);
    *len = v->len[rank];
    return PROUST_OK;
}
