/*
 * comm_idup.c — MPI_Comm_idup and MPI_Comm_idup_with_info: a duplication
 * that does not wait for the other members.
 *
 * The call builds the new communicator at once (group, error handler,
 * topology, and the attributes, whose copy callbacks therefore run in the
 * caller's thread, as in MPICH) with every field but its context id. It
 * also takes its turn in the parent's collective sequence: the context
 * agreement (context.c: a few allreduce rounds over the parent) then runs
 * on that one sequence number's tag, so it cannot meet the parent's other
 * collectives, started before or after, whenever it runs. It runs on a
 * short-lived thread of its own, blocking in the engine like any waiter;
 * the thread sets the context, writes *newcomm and completes the request.
 * MPI_Finalize waits for those threads (the request completes just before
 * its thread ends).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "comm.h"

struct idup_job {
    struct pm_comm *parent; /* referenced until the job goes */
    struct pm_comm *nc;     /* the new communicator; its handle is shown at completion */
    uint32_t seq;           /* the parent's sequence number the agreement runs on */
    MPI_Comm *newcomm;      /* the caller's variable */
    struct pm_request *req;
    int rc;
};

static _Atomic int threads_running;

/* The request goes (MPI_Wait & co): a failed duplication is undone here, in
 * the user's thread, so that attribute delete callbacks run there too. */
static void job_free(void *arg)
{
    struct idup_job *j = arg;
    if (j->rc != MPI_SUCCESS)
        pm_comm_discard(j->nc);
    pm_comm_release(j->parent);
    free(j);
}

static void *agree_thread(void *arg)
{
    struct idup_job *j = arg;
    uint16_t ids[2] = {0, 0};
    int rc = pm_context_alloc_at(j->parent, j->nc->is_inter ? 2 : 1, ids, j->seq);
    if (rc == MPI_SUCCESS) {
        pm_comm_set_context(j->nc, ids[0]);
        if (j->nc->is_inter)
            pm_comm_set_context(j->nc->local_comm, ids[1]);
        *j->newcomm = j->nc->handle;
    }
    j->rc = rc;
    pm_status_empty(&j->req->status);
    pm_request_set_done(j->req, rc);
    atomic_fetch_sub_explicit(&threads_running, 1, memory_order_release);
    return NULL;
}

void pm_idup_quiesce(void)
{
    while (atomic_load_explicit(&threads_running, memory_order_acquire) > 0)
        sched_yield();
}

/* The new communicator without its context id (0 until the agreement). */
static int make_pending(struct pm_comm *c, struct pm_comm **out)
{
    static const uint16_t none[2] = {0, 0};
    struct pm_comm *nc =
        c->is_inter ? pm_intercomm_new(c->local, c->remote, none) : pm_comm_new(c->local, NULL, 0);
    if (!nc)
        return MPI_ERR_NO_MEM;
    pm_comm_inherit(nc, c);
    if (!pm_topo_copy(nc, c)) {
        pm_comm_discard(nc);
        return MPI_ERR_NO_MEM;
    }
    int rc = pm_attrs_copy_comm(c, nc);
    if (rc != MPI_SUCCESS) {
        pm_comm_discard(nc);
        return rc;
    }
    *out = nc;
    return MPI_SUCCESS;
}

static int comm_idup(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request,
                     const char *fn)
{
    PM_CHECK_INIT(fn);
    struct pm_comm *c = pm_comm_get(comm);
    if (!c)
        return pm_comm_invalid(comm, fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    if (!request)
        return pm_error(comm, MPI_ERR_REQUEST, "%s: request is NULL", fn);
    *newcomm = MPI_COMM_NULL;
    *request = MPI_REQUEST_NULL;
    /* Every member takes the number, even if what follows fails here, so
     * that later collectives on the parent still agree. */
    uint32_t seq =
        pm_coll_next_seq(c);

    struct idup_job *j = calloc(1, sizeof *j);
    if (!j)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    int rc = make_pending(c, &j->nc);
    if (rc != MPI_SUCCESS) {
        free(j);
        return rc == MPI_ERR_NO_MEM
                   ? pm_error(comm, rc, "%s: out of memory", fn)
                   : pm_error(comm, rc, "%s: an attribute copy callback failed (error %d)", fn,
                              rc);
    }
    j->req = pm_request_new(PM_REQ_COLL, c);
    if (!j->req) {
        pm_comm_discard(j->nc);
        free(j);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    pm_comm_retain(c);
    j->parent = c;
    j->seq = seq;
    j->newcomm = newcomm;
    j->rc = MPI_ERR_OTHER; /* until the thread says otherwise */
    j->req->coll = j;
    j->req->coll_free = job_free;
    MPI_Request h = j->req->handle; /* j may be gone once the thread runs */

    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add_explicit(&threads_running, 1, memory_order_relaxed);
    int err = pthread_create(&t, &attr, agree_thread, j);
    pthread_attr_destroy(&attr);
    if (err) {
        atomic_fetch_sub_explicit(&threads_running, 1, memory_order_relaxed);
        pm_request_free(j->req); /* job_free undoes the communicator */
        return pm_error(comm, MPI_ERR_OTHER, "%s: cannot start the agreement thread (errno %d)",
                        fn, err);
    }
    *request = h;
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return comm_idup(comm, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}
PM_WEAK(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    return comm_idup(comm, info, newcomm, request, "MPI_Comm_idup_with_info");
}
PM_WEAK(Comm_idup_with_info)
