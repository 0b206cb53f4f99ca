/*
 * pmi2.c — PMI-2's own messages (PROUST_BOOT=pmi2), for Slurm's srun
 * --mpi=pmi2 and Hydra: after a PMI-1 init line asking for version 2, each
 * message is its length in 6 characters, then "cmd=...;key=value;" words
 * (pmi_wire.c parses them). The store, its key layout and the local ranks
 * are pmi1.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "boot/pmi_client.h"
#include "common/log.h"
#include "proust.h"

/* PMI-2: a message is its length in 6 characters ("%-6d"), then its text. */
int proust__pmi2_send(struct pmi1 *p, const char *fmt, ...)
{
    char msg[PROUST__PMI_LINE_MAX + 8];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + 6, sizeof msg - 6, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof msg - 6 || n > 999999)
        return PROUST_ERR_INVALID;
    char head[8];
    snprintf(head, sizeof head, "%-6d", n);
    memcpy(msg, head, 6);
    for (int off = 0; off < n + 6;) {
        ssize_t w = write(p->fd, msg + off, (size_t)(n + 6 - off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            PROUST_ERROR("PMI-2 launcher: cannot send to it (%s)", strerror(errno));
            return PROUST_ERR_CONN;
        }
        off += (int)w;
    }
    return PROUST_OK;
}

static int read_exact(struct pmi1 *p, char *out, size_t n, const char *cmd)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(p->fd, out + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            PROUST_ERROR("PMI-2 launcher closed the connection before answering cmd=%s%s%s",
                         cmd, r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
            return PROUST_ERR_CONN;
        }
        got += (size_t)r;
    }
    return PROUST_OK;
}

/* The next PMI-2 message, which must be the command `cmd`. */
int proust__pmi2_read(struct pmi1 *p, const char *cmd, struct proust__pmi_msg *msg)
{
    char head[7], text[PROUST__PMI_LINE_MAX + 1];
    int rc = read_exact(p, head, 6, cmd);
    if (rc != PROUST_OK)
        return rc;
    head[6] = '\0';
    char *end;
    long n = strtol(head, &end, 10);
    while (*end == ' ')
        end++;
    if (end == head || *end || n < 0 || n > PROUST__PMI_LINE_MAX) {
        PROUST_ERROR("PMI-2 launcher answered garbage to cmd=%s: a length of '%.6s'", cmd, head);
        return PROUST_ERR_PROTO;
    }
    if ((rc = read_exact(p, text, (size_t)n, cmd)) != PROUST_OK)
        return rc;
    const char *why = NULL;
    if (proust__pmi2_parse(text, (size_t)n, msg, &why) != PROUST_OK) {
        PROUST_ERROR("PMI-2 launcher answered garbage to cmd=%s: %s", cmd, why);
        return PROUST_ERR_PROTO;
    }
    if (!proust__pmi_is(msg, cmd)) {
        PROUST_ERROR("PMI-2 launcher answered cmd=%s where cmd=%s was due", msg->value[0], cmd);
        return PROUST_ERR_PROTO;
    }
    return PROUST_OK;
}

/* PMI-2 (Slurm's mpi/pmi2, Hydra): a PMI-1 init line asking for version 2,
 * then PMI-2 messages: fullinit (rank, size), job-getid (the store). */
int proust__pmi2_start(proust__boot_t *boot, struct pmi1 *p)
{
    struct proust__pmi_msg msg;
    int rc;
    if ((rc = proust__pmi_send_line(p, "cmd=init pmi_version=2 pmi_subversion=0")) != PROUST_OK ||
        (rc = proust__pmi_read_reply(p, "response_to_init", &msg)) != PROUST_OK ||
        (rc = proust__pmi_reply_rc(&msg, "init", false)) != PROUST_OK)
        return rc;
    const char *ver = proust__pmi_get(&msg, "pmi_version");
    if (!ver || strcmp(ver, "2") != 0) {
        PROUST_ERROR("PMI-2: the launcher speaks PMI version %s, not 2 (PROUST_BOOT=pmi1?)",
                     ver ? ver : "?");
        return PROUST_ERR_PROTO;
    }
    size_t rank = 0, size = 0;
    /* the job's id, from the launcher's environment (Slurm: PMI_JOBID),
     * names the job in fullinit */
    const char *jid = getenv("PMI_JOBID");
    if (jid && (strchr(jid, ';') || strlen(jid) > 200))
        jid = NULL;
    if ((rc = jid ? proust__pmi2_send(p, "cmd=fullinit;pmijobid=%s;pmirank=%d;threaded=FALSE;", jid,
                          boot->rank)
                  : proust__pmi2_send(p, "cmd=fullinit;pmirank=%d;threaded=FALSE;", boot->rank)) != PROUST_OK ||
        (rc = proust__pmi2_read(p, "fullinit-response", &msg)) != PROUST_OK ||
        (rc = proust__pmi_reply_rc(&msg, "fullinit", false)) != PROUST_OK ||
        (rc = proust__pmi_expect_count(&msg, "size", &size)) != PROUST_OK)
        return rc;
    const char *r = proust__pmi_get(&msg, "rank");
    char *end;
    rank = r ? (size_t)strtoul(r, &end, 10) : size;
    if (!r || *end || rank >= size || (int)rank != boot->rank || (int)size != boot->size) {
        PROUST_ERROR("PMI-2 launcher: fullinit gave rank %s of %zu, PMI_RANK/PMI_SIZE say %d "
                     "of %d", r ? r : "?", size, boot->rank, boot->size);
        return PROUST_ERR_PROTO;
    }
    if ((rc = proust__pmi2_send(p, "cmd=job-getid;")) != PROUST_OK ||
        (rc = proust__pmi2_read(p, "job-getid-response", &msg)) != PROUST_OK ||
        (rc = proust__pmi_reply_rc(&msg, "job-getid", false)) != PROUST_OK)
        return rc;
    const char *job = proust__pmi_get(&msg, "jobid");
    if (!job || !*job || strlen(job) >= sizeof p->kvsname || strchr(job, ';')) {
        PROUST_ERROR("PMI-2 launcher: job-getid without a valid jobid");
        return PROUST_ERR_PROTO;
    }
    strcpy(p->kvsname, job);
    p->keylen_max = 64; /* PMI2_MAX_KEYLEN, PMI2_MAX_VALLEN */
    p->vallen_max = 1024;
    proust__pmi_name_job(boot, job);
    return proust__pmi_find_local(boot);
}

/* PMI-2's kvs-fence makes puts visible, but is not a barrier everywhere:
 * Hydra answers it at once and holds back a kvs-get until its key exists
 * (Slurm's waits for every rank). So each rank also puts an arrival key;
 * rank 0 reads them all (a read waits for its key, or finds it after the
 * fence), then puts a departure key that the others read after a second
 * fence: a barrier under both. */
int proust__pmi2_barrier(proust__boot_t *boot, struct pmi1 *p)
{
    char k[64], v[PROUST__PMI_LINE_MAX];
    unsigned e = p->fences++;
    snprintf(k, sizeof k, "fence.%u.%d", e, boot->rank);
    int rc = proust__pmi_kvs_put(p, k, "-");
    if (rc == PROUST_OK)
        rc = proust__pmi_launcher_fence(p);
    for (int r = 1; boot->rank == 0 && r < boot->size && rc == PROUST_OK; r++) {
        snprintf(k, sizeof k, "fence.%u.%d", e, r);
        rc = proust__pmi_kvs_get(p, k, v, sizeof v);
    }
    snprintf(k, sizeof k, "fence.%u.done", e);
    if (rc == PROUST_OK && boot->rank == 0)
        rc = proust__pmi_kvs_put(p, k, "-");
    if (rc == PROUST_OK)
        rc = proust__pmi_launcher_fence(p);
    if (rc == PROUST_OK && boot->rank != 0)
        rc = proust__pmi_kvs_get(p, k, v, sizeof v);
    if (rc == PROUST_ERR_INVALID)
        PROUST_ERROR("PMI-2 launcher: a fence key went missing (%s)", k);
    return rc == PROUST_ERR_INVALID ? PROUST_ERR_PROTO : rc;
}

/* The launcher's PMI_process_mapping: a value of its store (PMI-1), a job
 * attribute (PMI-2); PROUST_ERR_INVALID if it gives none. */
int proust__pmi_job_mapping(struct pmi1 *p, char *out, size_t cap)
{
    if (!p->v2)
        return proust__pmi_kvs_get(p, "PMI_process_mapping", out, cap);
    struct proust__pmi_msg msg;
    int rc = proust__pmi2_send(p, "cmd=info-getjobattr;key=PMI_process_mapping;");
    if (rc == PROUST_OK)
        rc = proust__pmi2_read(p, "info-getjobattr-response", &msg);
    if (rc != PROUST_OK)
        return rc;
    const char *found = proust__pmi_get(&msg, "found"), *v = proust__pmi_get(&msg, "value");
    if (proust__pmi_reply_rc(&msg, "a job attribute", true) != PROUST_OK || !found ||
        strcasecmp(found, "TRUE") != 0 || !v || strlen(v) >= cap)
        return PROUST_ERR_INVALID;
    strcpy(out, v);
    return PROUST_OK;
}

/* PMI-2: chosen with PROUST_BOOT=pmi2 (Slurm's srun --mpi=pmi2 and Hydra
 * answer PMI-1 too, which auto picks); the same store and local ranks. */
static int pmi2_init(proust__boot_t *boot)
{
    return proust__pmi_init(boot, 1);
}

static int pmi2_detect(void)
{
    return getenv("PMI_FD") != NULL;
}

const struct proust__boot_ops proust__boot_pmi2 = {
    .name = "pmi2",
    .detect = pmi2_detect,
    .init = pmi2_init,
    .put = proust__pmi_put,
    .get = proust__pmi_get_value,
    .fence = proust__pmi_fence,
    .abort = proust__pmi_abort,
    .finalize = proust__pmi_finalize,
    .poll_failed = NULL,
};
