/*
 * boot.c — pick the launcher from the environment: proustrun's embedded
 * protocol when PROUST_BOOT_FD is set, else a one-process job.
 */
#include "boot/boot.h"

#include <stdlib.h>
#include <string.h>

#include "boot/wire.h"
#include "common/log.h"
#include "proust.h"

int proust__boot_open(proust__boot_t *boot)
{
    if (!boot)
        return PROUST_ERR_INVALID;
    const struct proust__boot_ops *ops;
    if (proust__boot_embedded.detect()) {
        ops = &proust__boot_embedded;
    } else {
        ops = &proust__boot_singleton;
        const char *size = getenv(PROUST_ENV_SIZE);
        if (size && strcmp(size, "1") != 0)
            PROUST_WARN("%s=%s is set but %s is not: running as a single process "
                        "(start the job with proustrun)",
                        PROUST_ENV_SIZE, size, PROUST_ENV_BOOT_FD);
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
