/*
 * oob.c — exchanges through the launcher ("out of band"): an allgather of
 * a few bytes a rank, made of the launcher's key-value store (put, fence,
 * one get of every rank's value). Where the launcher answers that get in
 * one exchange (proustrun), this costs a rank two round trips with the
 * launcher, asleep in between, whatever the size of the job; the same
 * agreement by messages costs log2(size) rounds, each a first contact
 * with a new partner and a wait for that partner's turn at a cpu (128
 * ranks on 2 cores: 0.45 ms of cpu a rank in MPI_Init; docs/PERFORMANCE.md,
 * "Start-up, ninth session").
 */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "core/session.h"
#include "proust.h"

#define OOB_MAX_LEN 1024

int proust_oob_allgather(proust_session_t *s, const void *mine, size_t len, void *all)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!mine || !all || len == 0 || len > OOB_MAX_LEN)
        return PROUST_ERR_INVALID;
    if (s->size == 1) {
        memmove(all, mine, len);
        return PROUST_OK;
    }
    if (!s->boot.ops->get_all)
        return PROUST_ERR_NOT_SUPPORTED;
    char key[32];
    snprintf(key, sizeof key, "oob.%u", s->oob_calls++);
    int rc = s->boot.ops->put(&s->boot, key, mine, len);
    if (rc == PROUST_OK)
        rc = s->boot.ops->fence(&s->boot);
    struct proust__boot_values v;
    if (rc == PROUST_OK)
        rc = proust__boot_get_all(&s->boot, key, len, &v);
    if (rc != PROUST_OK) {
        PROUST_ERROR("exchange through the launcher (%s): %s", key, proust_strerror(rc));
        return rc;
    }
    for (int r = 0; r < s->size && rc == PROUST_OK; r++) {
        size_t got = len;
        rc = proust__boot_value(&v, r, (char *)all + (size_t)r * len, &got);
        if (rc == PROUST_OK && got != len)
            rc = PROUST_ERR_NOMEM;
        if (rc != PROUST_OK) {
            PROUST_ERROR("exchange through the launcher (%s): rank %d gave %s, not %zu bytes",
                         key, r, rc == PROUST_ERR_INVALID ? "nothing" : "another length", len);
            rc = PROUST_ERR_PROTO;
        }
    }
    proust__boot_values_free(&v);
    return rc;
}
