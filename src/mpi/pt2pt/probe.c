/*
 * probe.c — MPI_Probe, MPI_Iprobe, and matched probes: MPI_Mprobe,
 * MPI_Improbe, MPI_Mrecv, MPI_Imrecv.
 *
 * Probes match like receives (context and tag under the mask of
 * mpi_impl.h). A matched probe takes the message out of matching in the
 * engine (proust_improbe) and wraps it in an MPI_Message handle
 * (pm_message_table) that one MPI_Mrecv/Imrecv consumes. MPI_PROC_NULL
 * probes find an empty message at once; their MPI_Message is
 * MPI_MESSAGE_NO_PROC.
 */
#include <stdlib.h>

#include "p2p.h"

struct pm_message {
    int handle;
    struct pm_comm *comm;   /* reference held until received */
    proust_message_t *msg;
};

static int check_probe(const char *fname, MPI_Comm comm, struct pm_comm *c, int source, int tag)
{
    if (!c)
        return pm_error(comm, MPI_ERR_COMM, "%s: invalid communicator %#x", fname,
                        (unsigned)comm);
    if (source != MPI_ANY_SOURCE && source != MPI_PROC_NULL &&
        (source < 0 || source >= c->remote->size))
        return pm_error(comm, MPI_ERR_RANK, "%s: source rank %d outside 0..%d", fname, source,
                        c->remote->size - 1);
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > PM_TAG_UB))
        return pm_error(comm, MPI_ERR_TAG, "%s: tag %d outside 0..%d and not MPI_ANY_TAG",
                        fname, tag, PM_TAG_UB);
    return MPI_SUCCESS;
}

/* Engine source, tag and mask matching (source, tag) on c. */
static void match_args(const struct pm_comm *c, int source, int tag, int *psrc,
                       proust_tag_t *ptag, proust_tag_t *pmask)
{
    *psrc = source == MPI_ANY_SOURCE ? PROUST_ANY_SOURCE : pm_comm_peer(c, source);
    if (tag == MPI_ANY_TAG) {
        *ptag = c->tag_pt2pt;
        *pmask = PM_CTX_MASK;
    } else {
        *ptag = c->tag_pt2pt | (proust_tag_t)tag;
        *pmask = PM_CTX_MASK | PM_TAG_MASK;
    }
}

/* The envelope of a message found by a probe. MPI_ERROR is left as it
 * is: only the multiple-completion calls set it (MPI-3.1 §3.2.5). */
static void status_probed(MPI_Status *st, const proust_status_t *ps)
{
    if (st) {
        st->MPI_SOURCE = pm_tag_source(ps->tag);
        st->MPI_TAG = pm_tag_tag(ps->tag);
        st->proust_cancelled = 0;
        st->proust_bytes = (MPI_Count)ps->size;
    }
}

static void status_proc_null(MPI_Status *st)
{
    if (st) {
        st->MPI_SOURCE = MPI_PROC_NULL;
        st->MPI_TAG = MPI_ANY_TAG;
        st->proust_cancelled = 0;
        st->proust_bytes = 0;
    }
}

static int probe_error(const char *fname, MPI_Comm comm, int source, int prc)
{
    return pm_error(comm, pm_error_from_proust(prc), "%s (source %d): %s", fname, source,
                    proust_strerror(prc));
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Iprobe");
    struct pm_comm *c = pm_comm_get(comm);
    int rc = check_probe("MPI_Iprobe", comm, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Iprobe: flag is NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    match_args(c, source, tag, &psrc, &ptag, &pmask);
    proust_status_t ps;
    int found = 0;
    int prc = proust_iprobe(pm_session, psrc, ptag, pmask, &found, &ps);
    if (prc != PROUST_OK)
        return probe_error("MPI_Iprobe", comm, source, prc);
    *flag = found;
    if (found)
        status_probed(status, &ps);
    return MPI_SUCCESS;
}
PM_WEAK(Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Probe");
    struct pm_comm *c = pm_comm_get(comm);
    int rc = check_probe("MPI_Probe", comm, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    match_args(c, source, tag, &psrc, &ptag, &pmask);
    proust_status_t ps;
    int prc = proust_probe(pm_session, psrc, ptag, pmask, &ps);
    if (prc != PROUST_OK)
        return probe_error("MPI_Probe", comm, source, prc);
    status_probed(status, &ps);
    return MPI_SUCCESS;
}
PM_WEAK(Probe)

/* One try of a matched probe: *message is set when *flag. */
static int improbe(const char *fname, int source, int tag, MPI_Comm comm, struct pm_comm *c,
                   int *flag, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    match_args(c, source, tag, &psrc, &ptag, &pmask);
    struct pm_message *m = malloc(sizeof *m);
    if (!m)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    proust_status_t ps;
    int found = 0;
    int prc = proust_improbe(pm_session, psrc, ptag, pmask, &found, &m->msg, &ps);
    if (prc != PROUST_OK) {
        free(m);
        return probe_error(fname, comm, source, prc);
    }
    if (!found) {
        free(m);
        *flag = 0;
        return MPI_SUCCESS;
    }
    m->comm = c;
    pm_comm_retain(c);
    m->handle = pm_table_add(&pm_message_table, m);
    if (!m->handle) {
        /* The message is out of matching already: receive and drop it
         * rather than lose the engine's record of it. */
        proust_request_t *req = NULL;
        if (proust_imrecv(pm_session, m->msg, NULL, 0, &req) == PROUST_OK)
            proust_wait(&req, NULL);
        pm_comm_release(c);
        free(m);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of message handles", fname);
    }
    *flag = 1;
    *message = m->handle;
    status_probed(status, &ps);
    return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Improbe");
    struct pm_comm *c = pm_comm_get(comm);
    int rc = check_probe("MPI_Improbe", comm, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Improbe: flag is NULL");
    if (!message)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Improbe: message is NULL");
    return improbe("MPI_Improbe", source, tag, comm, c, flag, message, status);
}
PM_WEAK(Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Mprobe");
    struct pm_comm *c = pm_comm_get(comm);
    int rc = check_probe("MPI_Mprobe", comm, c, source, tag);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!message)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Mprobe: message is NULL");
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    match_args(c, source, tag, &psrc, &ptag, &pmask);
    unsigned idle = 0;
    for (;;) {
        int flag = 0;
        rc = improbe("MPI_Mprobe", source, tag, comm, c, &flag, message, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        /* Wait in the engine (which also notices a failed source) until a
         * match is there, then try to take it: another thread may be
         * quicker, and then we wait again. */
        proust_status_t ps;
        int prc = proust_probe(pm_session, psrc, ptag, pmask, &ps);
        if (prc != PROUST_OK)
            return probe_error("MPI_Mprobe", comm, source, prc);
        pm_p2p_backoff(&idle); /* no-op unless we keep losing the race */
    }
}
PM_WEAK(Mprobe)

static int imrecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Message *message, MPI_Request *request)
{
    if (!message)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: message is NULL", fname);
    struct pm_message *m = NULL;
    if (*message != MPI_MESSAGE_NO_PROC) {
        m = pm_table_get(&pm_message_table, *message);
        if (!m)
            return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid message %#x%s",
                            fname, (unsigned)*message,
                            *message == MPI_MESSAGE_NULL ? " (MPI_MESSAGE_NULL)" : "");
    }
    MPI_Comm comm = m ? m->comm->handle : MPI_COMM_WORLD;
    if (count < 0)
        return pm_error(comm, MPI_ERR_COUNT, "%s: negative count %lld", fname, (long long)count);
    struct pm_datatype *t = NULL;
    int rc = pm_type_check(datatype, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "%s: invalid or uncommitted datatype %#x",
                        fname, (unsigned)datatype);
    rc = pm_check_count(fname, comm, count, t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fname);
    if (!m) { /* MPI_MESSAGE_NO_PROC */
        struct pm_request *r = pm_request_new(PM_REQ_DONE, pm_comm_self);
        if (!r)
            return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fname);
        status_proc_null(&r->status);
        pm_request_set_done(r, MPI_SUCCESS);
        *message = MPI_MESSAGE_NULL;
        *request = r->handle;
        return MPI_SUCCESS;
    }
    struct pm_comm *c = m->comm;
    struct pm_request *r = pm_request_new(PM_REQ_RECV, c);
    if (!r)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory for the request", fname);
    size_t len = (size_t)count * (size_t)t->size;
    void *p;
    if (t->contiguous) {
        p = (char *)buf + t->true_lb;
    } else {
        /* Lands in tmp, unpacked at completion (as pm_irecv does). */
        r->tmp = malloc(len ? len : 1);
        if (!r->tmp) {
            pm_request_free(r);
            return pm_error(comm, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", fname, len);
        }
        r->user_buf = buf;
        r->count = count;
        r->type = t;
        pm_type_retain(t);
        p = r->tmp;
    }
    int prc = proust_imrecv(pm_session, m->msg, p, len, &r->preq);
    if (prc != PROUST_OK) {
        pm_request_free(r);
        return pm_error(comm, pm_error_from_proust(prc), "%s: %s", fname,
                        proust_strerror(prc));
    }
    /* The message is consumed: its handle goes. */
    pm_table_remove(&pm_message_table, m->handle);
    *message = MPI_MESSAGE_NULL;
    *request = r->handle;
    pm_comm_release(c);
    free(m);
    return MPI_SUCCESS;
}

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Imrecv");
    return imrecv("MPI_Imrecv", buf, count, datatype, message, request);
}
PM_WEAK(Imrecv)

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Imrecv_c");
    return imrecv("MPI_Imrecv_c", buf, count, datatype, message, request);
}
PM_WEAK(Imrecv_c)

static int mrecv(const char *fname, void *buf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Message *message, MPI_Status *status)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = imrecv(fname, buf, count, datatype, message, &req);
    if (rc != MPI_SUCCESS)
        return rc;
    return PMPI_Wait(&req, status);
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Mrecv");
    return mrecv("MPI_Mrecv", buf, count, datatype, message, status);
}
PM_WEAK(Mrecv)

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Mrecv_c");
    return mrecv("MPI_Mrecv_c", buf, count, datatype, message, status);
}
PM_WEAK(Mrecv_c)
