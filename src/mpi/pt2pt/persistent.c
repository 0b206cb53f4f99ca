/*
 * persistent.c — persistent requests: MPI_Send_init, Bsend_init, Ssend_init,
 * Rsend_init, Recv_init, MPI_Start, MPI_Startall.
 *
 * A PM_REQ_PERSISTENT request keeps the arguments of its operation. Start
 * runs the operation as an inner request (a send or receive built like
 * pt2pt.c's, or a buffered send); request.c waits for the persistent
 * request through pm_persistent_poll, and completing it
 * (pm_persistent_complete) releases the inner request and makes the
 * persistent one inactive again, its handle intact. An inactive request is
 * complete with an empty status. Persistent collectives (OP_COLL) keep their
 * arguments in coll_persistent.c, which starts them; partitioned sends and
 * receives (OP_PART) theirs in part.c.
 */
#include <stdlib.h>

#include "p2p.h"

enum { OP_SEND, OP_SSEND, OP_RSEND, OP_BSEND, OP_RECV, OP_COLL, OP_PART };

struct pm_persistent {
    int op;                  /* OP_* */
    void *buf;
    MPI_Count count;
    struct pm_datatype *t;   /* reference held: the user may free the type */
    int peer, tag;
    struct pm_pcoll *coll;   /* OP_COLL: its arguments */
    struct pm_part *part;    /* OP_PART: the partitioned operation */
    struct pm_request *active; /* the started operation, NULL when inactive */
};

static int make(const char *fname, int op, void *buf, MPI_Count count, MPI_Datatype dt, int peer,
                int tag, MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t = NULL;
    int rc = op == OP_RECV ? pm_check_recv(fname, comm, c, count, dt, peer, tag, &t)
                           : pm_check_send(fname, comm, c, count, dt, peer, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fname);
    struct pm_persistent *p = calloc(1, sizeof *p);
    if (!p)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    struct pm_request *r = pm_request_new(PM_REQ_PERSISTENT, c);
    if (!r) {
        free(p);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory for the request", fname);
    }
    p->op = op;
    p->buf = buf;
    p->count = count;
    p->t = t;
    pm_type_retain(t);
    p->peer = peer;
    p->tag = tag;
    r->persist = p;
    pm_status_empty(&r->status);
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The init calls, with int counts and their MPI-4 large-count twins. */
#define PM_INIT_API(name, op, cbuf)                                                          \
    int PMPI_##name(cbuf void *buf, int count, MPI_Datatype datatype, int peer, int tag,    \
                    MPI_Comm comm, MPI_Request *request)                                    \
    {                                                                                       \
        PM_CHECK_INIT("MPI_" #name);                                                        \
        return make("MPI_" #name, op, (void *)buf, count, datatype, peer, tag, comm,        \
                    request);                                                               \
    }                                                                                       \
    PM_WEAK(name)                                                                           \
    int PMPI_##name##_c(cbuf void *buf, MPI_Count count, MPI_Datatype datatype, int peer,   \
                        int tag, MPI_Comm comm, MPI_Request *request)                       \
    {                                                                                       \
        PM_CHECK_INIT("MPI_" #name "_c");                                                   \
        return make("MPI_" #name "_c", op, (void *)buf, count, datatype, peer, tag, comm,   \
                    request);                                                               \
    }                                                                                       \
    PM_WEAK(name##_c)

PM_INIT_API(Send_init, OP_SEND, const)
PM_INIT_API(Bsend_init, OP_BSEND, const)
PM_INIT_API(Ssend_init, OP_SSEND, const)
PM_INIT_API(Rsend_init, OP_RSEND, const)
PM_INIT_API(Recv_init, OP_RECV, )

/* A persistent request for an operation kept elsewhere (OP_COLL, OP_PART). */
static int make_held(struct pm_comm *c, int op, struct pm_pcoll *pc, struct pm_part *part,
                     MPI_Request *request)
{
    struct pm_persistent *p = calloc(1, sizeof *p);
    struct pm_request *r = p ? pm_request_new(PM_REQ_PERSISTENT, c) : NULL;
    if (!r) {
        free(p);
        return MPI_ERR_NO_MEM;
    }
    p->op = op;
    p->coll = pc;
    p->part = part;
    r->persist = p;
    pm_status_empty(&r->status);
    *request = r->handle;
    return MPI_SUCCESS;
}

int pm_persistent_coll(struct pm_comm *c, struct pm_pcoll *pc, MPI_Request *request)
{
    return make_held(c, OP_COLL, pc, NULL, request);
}

int pm_persistent_new_part(struct pm_comm *c, struct pm_part *part, MPI_Request *request)
{
    return make_held(c, OP_PART, NULL, part, request);
}

struct pm_part *pm_persistent_part(struct pm_request *r)
{
    return r->kind == PM_REQ_PERSISTENT && r->persist ? r->persist->part : NULL;
}

/* The persistent request behind a handle, or raise MPI_ERR_REQUEST. */
static int check_startable(const char *fname, MPI_Request h, struct pm_request **out)
{
    struct pm_request *r = pm_request_get(h);
    if (!r)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid request %#x%s", fname,
                        (unsigned)h, h == MPI_REQUEST_NULL ? " (MPI_REQUEST_NULL)" : "");
    if (r->kind != PM_REQ_PERSISTENT || !r->persist)
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "%s: request %#x is not a persistent request", fname, (unsigned)h);
    if (r->persist->active)
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "%s: persistent request %#x is already active", fname, (unsigned)h);
    *out = r;
    return MPI_SUCCESS;
}

/* A request completed at creation (the peer is MPI_PROC_NULL). */
static struct pm_request *proc_null_request(struct pm_comm *c)
{
    struct pm_request *r = pm_request_new(PM_REQ_DONE, c);
    if (r) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        r->status.proust_bytes = 0;
        pm_request_set_done(r, MPI_SUCCESS);
    }
    return r;
}

/* Start the send or receive as pt2pt.c's pm_isend/pm_irecv would, but from
 * the datatype we hold a reference on: the user may have freed its handle
 * since Send_init. The request fields follow pt2pt.c (tmp, user_buf, count,
 * type), which request.c completes. */
static int start_send(struct pm_persistent *p, struct pm_comm *c, struct pm_request **out)
{
    if (p->peer == MPI_PROC_NULL)
        return (*out = proc_null_request(c)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    struct pm_datatype *t = p->t;
    struct pm_request *r = pm_request_new(PM_REQ_SEND, c);
    if (!r)
        return MPI_ERR_NO_MEM;
    size_t len = (size_t)p->count * (size_t)t->size;
    const void *data;
    if (t->contiguous) {
        data = (const char *)p->buf + t->true_lb;
    } else {
        /* the buffer is read at each start */
        r->tmp = malloc(len ? len : 1);
        if (!r->tmp) {
            pm_request_free(r);
            return MPI_ERR_NO_MEM;
        }
        pm_type_pack(p->buf, p->count, t, 0, r->tmp, len);
        data = r->tmp;
    }
    proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)p->tag;
    int dest = pm_comm_peer(c, p->peer);
    int prc = p->op == OP_SSEND ? proust_issend(pm_session, data, len, dest, ptag, &r->preq)
                                : proust_isend(pm_session, data, len, dest, ptag, &r->preq);
    if (prc != PROUST_OK) {
        pm_request_free(r);
        return pm_error_from_proust(prc);
    }
    r->status.MPI_SOURCE = p->peer;
    r->status.MPI_TAG = p->tag;
    *out = r;
    return MPI_SUCCESS;
}

static int start_recv(struct pm_persistent *p, struct pm_comm *c, struct pm_request **out)
{
    if (p->peer == MPI_PROC_NULL)
        return (*out = proc_null_request(c)) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    struct pm_datatype *t = p->t;
    struct pm_request *r = pm_request_new(PM_REQ_RECV, c);
    if (!r)
        return MPI_ERR_NO_MEM;
    size_t len = (size_t)p->count * (size_t)t->size;
    void *data;
    if (t->contiguous) {
        data = (char *)p->buf + t->true_lb;
    } else {
        r->tmp = malloc(len ? len : 1);
        if (!r->tmp) {
            pm_request_free(r);
            return MPI_ERR_NO_MEM;
        }
        r->user_buf = p->buf;
        r->count = p->count;
        r->type = t;
        pm_type_retain(t);
        data = r->tmp;
    }
    int src = p->peer == MPI_ANY_SOURCE ? PROUST_ANY_SOURCE : pm_comm_peer(c, p->peer);
    proust_tag_t ptag = c->tag_pt2pt, mask = PM_CTX_MASK;
    if (p->tag != MPI_ANY_TAG) {
        ptag |= (proust_tag_t)p->tag;
        mask |= PM_TAG_MASK;
    }
    int prc = proust_irecv(pm_session, data, len, src, ptag, mask, &r->preq);
    if (prc != PROUST_OK) {
        pm_request_free(r);
        return pm_error_from_proust(prc);
    }
    *out = r;
    return MPI_SUCCESS;
}

static int start(const char *fname, struct pm_request *r)
{
    struct pm_persistent *p = r->persist;
    struct pm_comm *c = r->comm;
    struct pm_request *inner = NULL;
    int rc;
    if (p->op == OP_COLL) { /* the nonblocking operation raises its own errors */
        MPI_Request h = MPI_REQUEST_NULL;
        rc = pm_pcoll_start(p->coll, &h);
        if (rc == MPI_SUCCESS && !(p->active = pm_request_get(h)))
            rc = pm_error(c->handle, MPI_ERR_INTERN, "%s: the collective gave no request", fname);
        return rc;
    }
    if (p->op == OP_PART) {
        rc = pm_part_start(p->part, &p->active);
        return rc == MPI_SUCCESS ? rc : pm_error(c->handle, rc, "%s: out of memory", fname);
    }
    if (p->op == OP_BSEND) /* raises its own errors */
        return pm_bsend_start(fname, c->handle, c, p->buf, p->count, p->t, p->peer, p->tag,
                              &p->active);
    rc = p->op == OP_RECV ? start_recv(p, c, &inner) : start_send(p, c, &inner);
    if (rc != MPI_SUCCESS)
        return pm_error(c->handle, rc, "%s: starting the %s of %lld elements %s rank %d failed",
                        fname, p->op == OP_RECV ? "receive" : "send", (long long)p->count,
                        p->op == OP_RECV ? "from" : "to", p->peer);
    p->active = inner;
    return MPI_SUCCESS;
}

int PMPI_Start(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Start");
    if (!request)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Start: request is NULL");
    struct pm_request *r;
    int rc = check_startable("MPI_Start", *request, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    return start("MPI_Start", r);
}
PM_WEAK(Start)

int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    PM_CHECK_INIT("MPI_Startall");
    if (count < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "MPI_Startall: negative count %d", count);
    if (count > 0 && !array_of_requests)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                        "MPI_Startall: array_of_requests is NULL with count %d", count);
    /* Check every request before starting any, so that a bad handle starts
     * nothing. (A handle given twice is found active the second time.) */
    struct pm_request *r;
    for (int i = 0; i < count; i++) {
        int rc = check_startable("MPI_Startall", array_of_requests[i], &r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int i = 0; i < count; i++) {
        int rc = check_startable("MPI_Startall", array_of_requests[i], &r);
        if (rc == MPI_SUCCESS)
            rc = start("MPI_Startall", r);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Startall)

int pm_persistent_poll(struct pm_request *r, int *flag, MPI_Status *st, bool progress)
{
    struct pm_persistent *p = r->persist;
    if (!p || !p->active) {
        *flag = 1;
        pm_status_empty(&r->status);
        pm_status_empty(st);
        return MPI_SUCCESS;
    }
    int rc = pm_request_poll(p->active, flag, &r->status, progress);
    if (*flag && st)
        *st = r->status; /* request.c reads r->status too */
    return rc;
}

bool pm_persistent_active(const struct pm_request *r)
{
    return r->persist && r->persist->active;
}

struct pm_request *pm_persistent_inner(const struct pm_request *r)
{
    return r->persist ? r->persist->active : NULL;
}

void pm_persistent_complete(struct pm_request *r)
{
    struct pm_persistent *p = r->persist;
    if (!p || !p->active)
        return;
    pm_request_free(p->active);
    p->active = NULL;
    if (p->part)
        pm_part_complete(p->part);
    pm_status_empty(&r->status); /* inactive: an empty status from now on */
}

int pm_persistent_cancel(struct pm_request *r)
{
    struct pm_persistent *p = r->persist;
    if (!p || !p->active)
        return MPI_SUCCESS;
    if (p->op == OP_PART) /* MPI-4.0 §4.2.2: erroneous */
        return pm_error(r->comm->handle, MPI_ERR_REQUEST, "MPI_Cancel: an active partitioned "
                        "request cannot be cancelled");
    MPI_Request h = p->active->handle;
    return PMPI_Cancel(&h);
}

/* MPI_Request_free: the persistent request and its handle go. */
void pm_persistent_free(struct pm_request *r)
{
    struct pm_persistent *p = r->persist;
    r->persist = NULL;
    if (p) {
        if (p->active) {
            int flag = 0;
            pm_request_poll(p->active, &flag, NULL, false);
            if (flag) {
                pm_request_free(p->active);
            } else {
                /* Freed while active: the operation finishes in the
                 * background, as for a nonpersistent request. */
                MPI_Request h = p->active->handle;
                PMPI_Request_free(&h);
            }
        }
        if (p->t)
            pm_type_release(p->t);
        pm_pcoll_free(p->coll);
        pm_part_free(p->part);
        free(p);
    }
    pm_request_free(r);
}
