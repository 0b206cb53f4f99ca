/*
 * pmix.c — processes started by a PMIx server: Open MPI's mpirun (Debian's
 * Open MPI 4.1 runs one on Debian's libpmix), PRRTE, and Slurm's
 * `srun --mpi=pmix`. The client library (libpmix-dev) does the talking.
 *
 * Rank, size and which ranks share our host come from the server (job size,
 * local rank and local size); a put is a byte object in our scope, a fence
 * commits and exchanges them (PMIX_COLLECT_DATA), and a get after it finds
 * the value locally (PMIX_OPTIONAL: an absent key is an answer, not a
 * wait). The server's notices that a process aborted, ended or lost its
 * connection feed the same failure queue proustrun's notices do.
 */
#include <pmix.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "common/log.h"
#include "proust.h"

#define FAILED_MAX 1024

struct pmixb {
    pmix_proc_t me, all;
    size_t handler;
    bool handler_set;
    pthread_mutex_t lock; /* the failure queue: written by PMIx's thread */
    int failed[FAILED_MAX];
    unsigned nfailed, next;
};

static struct pmixb *the_boot; /* the event handler's way back (one per process) */

static int get_number(const pmix_proc_t *who, const char *key, long *out)
{
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(who, key, NULL, 0, &v);
    if (rc != PMIX_SUCCESS || !v) {
        PROUST_ERROR("PMIx server gives no %s (%s)", key, PMIx_Error_string(rc));
        return PROUST_ERR_BOOT;
    }
    int status = PROUST_OK;
    switch (v->type) {
    case PMIX_UINT32: *out = (long)v->data.uint32; break;
    case PMIX_UINT16: *out = (long)v->data.uint16; break;
    case PMIX_INT: *out = (long)v->data.integer; break;
    case PMIX_PROC_RANK: *out = (long)v->data.rank; break;
    default:
        PROUST_ERROR("PMIx server gives %s as a value of type %d", key, (int)v->type);
        status = PROUST_ERR_BOOT;
    }
    PMIX_VALUE_RELEASE(v);
    return status;
}

/* PMIx's thread: a process of our job aborted, ended or was lost. */
static void on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                     pmix_info_t info[], size_t ninfo, pmix_info_t *results, size_t nresults,
                     pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id;
    (void)results;
    (void)nresults;
    struct pmixb *b = the_boot;
    const pmix_proc_t *who = source;
    for (size_t i = 0; i < ninfo; i++) /* the process affected, where named */
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) &&
            info[i].value.type == PMIX_PROC)
            who = info[i].value.data.proc;
    if (b && who && PMIX_CHECK_NSPACE(who->nspace, b->me.nspace) &&
        who->rank != b->me.rank && who->rank < (pmix_rank_t)1 << 30) {
        PROUST_DEBUG("PMIx: rank %u failed (%s)", who->rank, PMIx_Error_string(status));
        pthread_mutex_lock(&b->lock);
        if (b->nfailed < FAILED_MAX)
            b->failed[b->nfailed++] = (int)who->rank;
        pthread_mutex_unlock(&b->lock);
    }
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void pmix_finalize(proust__boot_t *boot);

static int pmix_detect(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

static int pmix_init(proust__boot_t *boot)
{
    struct pmixb *b = calloc(1, sizeof *b);
    if (!b)
        return PROUST_ERR_NOMEM;
    pthread_mutex_init(&b->lock, NULL);
    pmix_status_t rc = PMIx_Init(&b->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        PROUST_ERROR("PMIx_Init failed: %s (is the PMIx server of the launcher there?)",
                     PMIx_Error_string(rc));
        free(b);
        return PROUST_ERR_BOOT;
    }
    boot->priv = b;
    the_boot = b;
    PMIX_LOAD_PROCID(&b->all, b->me.nspace, PMIX_RANK_WILDCARD);
    long size, local_rank, local_size;
    pmix_proc_t me_only;
    PMIX_LOAD_PROCID(&me_only, b->me.nspace, b->me.rank);
    if (get_number(&b->all, PMIX_JOB_SIZE, &size) != PROUST_OK ||
        get_number(&me_only, PMIX_LOCAL_RANK, &local_rank) != PROUST_OK ||
        get_number(&b->all, PMIX_LOCAL_SIZE, &local_size) != PROUST_OK) {
        pmix_finalize(boot);
        return PROUST_ERR_BOOT;
    }
    if (size < 1 || b->me.rank >= (pmix_rank_t)size || local_rank < 0 || local_size < 1 ||
        local_rank >= local_size) {
        PROUST_ERROR("PMIx server gives rank %u of %ld, local %ld of %ld: not a job", b->me.rank,
                     size, local_rank, local_size);
        pmix_finalize(boot);
        return PROUST_ERR_BOOT;
    }
    boot->rank = (int)b->me.rank;
    boot->size = (int)size;
    boot->local_rank = (int)local_rank;
    boot->local_size = (int)local_size;
    size_t n = strnlen(b->me.nspace, sizeof b->me.nspace);
    if (n > sizeof boot->jobid - 6)
        n = sizeof boot->jobid - 6;
    memcpy(boot->jobid, "pmix-", 5);
    memcpy(boot->jobid + 5, b->me.nspace, n);
    boot->jobid[5 + n] = '\0';
    for (char *c = boot->jobid; *c; c++) /* the job's name for shm segments */
        if (*c == '/' || *c == ' ')
            *c = '_';
    pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED,
                             PMIX_ERR_LOST_CONNECTION, PMIX_PROC_TERMINATED};
    rc = PMIx_Register_event_handler(codes, sizeof codes / sizeof codes[0], NULL, 0, on_event,
                                     NULL, NULL);
    if (rc >= 0) {
        b->handler = (size_t)rc;
        b->handler_set = true;
    } else {
        PROUST_DEBUG("PMIx: no failure notices (%s)", PMIx_Error_string(rc));
    }
    return PROUST_OK;
}

static int pmix_put(proust__boot_t *boot, const char *key, const void *value, size_t len)
{
    (void)boot;
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = (char *)value;
    v.data.bo.size = len;
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v); /* copies the bytes */
    if (rc != PMIX_SUCCESS) {
        PROUST_ERROR("PMIx_Put(%s) failed: %s", key, PMIx_Error_string(rc));
        return PROUST_ERR_BOOT;
    }
    return PROUST_OK;
}

static int pmix_get(proust__boot_t *boot, int rank, const char *key, void *value, size_t *len)
{
    struct pmixb *b = boot->priv;
    if (rank < 0 || rank >= boot->size)
        return PROUST_ERR_INVALID;
    pmix_proc_t who;
    PMIX_LOAD_PROCID(&who, b->me.nspace, (pmix_rank_t)rank);
    pmix_info_t info;
    bool yes = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &yes, PMIX_BOOL);
    pmix_value_t *v = NULL;
    pmix_status_t rc = PMIx_Get(&who, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_ERR_NOT_FOUND)
        return PROUST_ERR_INVALID;
    if (rc != PMIX_SUCCESS || !v) {
        PROUST_ERROR("PMIx_Get(%s of rank %d) failed: %s", key, rank, PMIx_Error_string(rc));
        return PROUST_ERR_BOOT;
    }
    int status = PROUST_OK;
    if (v->type != PMIX_BYTE_OBJECT) {
        PROUST_ERROR("PMIx: %s of rank %d is not bytes (type %d)", key, rank, (int)v->type);
        status = PROUST_ERR_BOOT;
    } else if (v->data.bo.size > *len) {
        status = PROUST_ERR_NOMEM;
    } else {
        if (v->data.bo.size)
            memcpy(value, v->data.bo.bytes, v->data.bo.size);
        *len = v->data.bo.size;
    }
    PMIX_VALUE_RELEASE(v);
    return status;
}

static int pmix_fence(proust__boot_t *boot)
{
    struct pmixb *b = boot->priv;
    pmix_status_t rc = PMIx_Commit();
    if (rc == PMIX_SUCCESS) {
        pmix_info_t info;
        bool yes = true;
        PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
        rc = PMIx_Fence(&b->all, 1, &info, 1);
        PMIX_INFO_DESTRUCT(&info);
    }
    if (rc != PMIX_SUCCESS) {
        PROUST_ERROR("PMIx fence failed: %s", PMIx_Error_string(rc));
        return rc == PMIX_ERR_PROC_ABORTED || rc == PMIX_ERR_LOST_CONNECTION
                   ? PROUST_ERR_PEER_FAILED
                   : PROUST_ERR_BOOT;
    }
    return PROUST_OK;
}

static void pmix_abort(proust__boot_t *boot, int code, const char *why)
{
    (void)boot;
    PROUST_ERROR("aborting the job (code %d): %s", code, why ? why : "");
    PMIx_Abort(code ? code : 1, why ? why : "abort", NULL, 0); /* the server ends the job */
    _exit(code ? code : 1);
}

static void pmix_finalize(proust__boot_t *boot)
{
    struct pmixb *b = boot->priv;
    if (!b)
        return;
    if (b->handler_set)
        PMIx_Deregister_event_handler(b->handler, NULL, NULL);
    PMIx_Finalize(NULL, 0);
    the_boot = NULL;
    pthread_mutex_destroy(&b->lock);
    free(b);
    boot->priv = NULL;
}

static int pmix_poll_failed(proust__boot_t *boot)
{
    struct pmixb *b = boot->priv;
    int rank = -1;
    if (!b)
        return -1;
    pthread_mutex_lock(&b->lock);
    if (b->next < b->nfailed)
        rank = b->failed[b->next++];
    pthread_mutex_unlock(&b->lock);
    return rank;
}

const struct proust__boot_ops proust__boot_pmix = {
    .name = "pmix",
    .detect = pmix_detect,
    .init = pmix_init,
    .put = pmix_put,
    .get = pmix_get,
    .fence = pmix_fence,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
    .poll_failed = pmix_poll_failed,
};
