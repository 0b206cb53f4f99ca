/*
 * request.c — MPI requests: completion (the Wait/Test family), freeing,
 * cancelling, status queries and generalized requests.
 *
 * A request in flight on the engine (send, receive) completes through
 * proust_wait/proust_test; the others (collective schedules, generalized and
 * already-complete requests) through their `done` flag, which whoever drives
 * the engine sets. Persistent requests are handled by persistent.c.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_impl.h"
#include "p2p.h"

struct pm_request *pm_request_new(enum pm_req_kind kind, struct pm_comm *c)
{
    struct pm_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->kind = kind;
    r->comm = c;
    pm_status_empty(&r->status);
    r->handle = pm_table_add(&pm_request_table, r);
    if (!r->handle) {
        free(r);
        return NULL;
    }
    if (c)
        pm_comm_retain(c);
    return r;
}

void pm_request_free(struct pm_request *r)
{
    pm_table_remove(&pm_request_table, r->handle);
    if (r->preq)
        proust_request_free(&r->preq);
    free(r->tmp);
    if (r->type)
        pm_type_release(r->type);
    if (r->coll && r->coll_free)
        r->coll_free(r->coll);
    if (r->comm)
        pm_comm_release(r->comm);
    free(r);
}

void pm_request_set_done(struct pm_request *r, int err)
{
    if (err != MPI_SUCCESS)
        r->status.MPI_ERROR = err;
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

void pm_wait_flag(_Atomic int *done)
{
    unsigned idle = 0;
    while (!atomic_load_explicit(done, memory_order_acquire)) {
        proust_progress(pm_session);
        if (++idle > 256) {
            /* Let the peers of an oversubscribed machine run. */
            sched_yield();
            if (idle > 100000) {
                struct timespec ts = {0, 50000};
                nanosleep(&ts, NULL);
            }
        }
    }
}

/* An engine request completed with proust status `ps`: record it. */
static void finish_engine(struct pm_request *r, int rc, const proust_status_t *ps)
{
    if (r->kind == PM_REQ_RECV) {
        pm_status_from_proust(&r->status, ps);
        if (r->tmp && (rc == PROUST_OK || rc == PROUST_ERR_TRUNCATE))
            pm_type_unpack(r->tmp, ps->count, r->user_buf, r->count, r->type, 0);
    } else {
        r->status.proust_bytes = (MPI_Count)ps->size;
        r->status.proust_cancelled = ps->error == PROUST_ERR_CANCELED;
    }
    if (rc != PROUST_OK && rc != PROUST_ERR_CANCELED)
        r->status.MPI_ERROR = pm_error_from_proust(rc);
    atomic_store_explicit(&r->done, 1, memory_order_release);
}

/* Generalized request: ask the application for the status. */
static int greq_query(struct pm_request *r)
{
    if (r->gq) {
        int rc = r->gq(r->gextra, &r->status);
        if (rc != MPI_SUCCESS)
            r->status.MPI_ERROR = rc;
        r->gq = NULL; /* once */
    }
    return r->status.MPI_ERROR;
}

int pm_request_poll(struct pm_request *r, int *flag, MPI_Status *st, bool progress)
{
    switch (r->kind) {
    case PM_REQ_SEND:
    case PM_REQ_RECV:
        if (r->preq) {
            proust_status_t ps;
            int f = 0;
            int rc = proust_test(&r->preq, &f, &ps);
            if (!f) {
                *flag = 0;
                return MPI_SUCCESS;
            }
            finish_engine(r, rc, &ps);
        }
        break;
    case PM_REQ_PERSISTENT:
        return pm_persistent_poll(r, flag, st, progress);
    case PM_REQ_COLL:
    case PM_REQ_GREQ:
    case PM_REQ_DONE:
        if (!(atomic_load_explicit(&r->done, memory_order_acquire) & 1)) {
            if (progress)
                proust_progress(pm_session);
            if (!(atomic_load_explicit(&r->done, memory_order_acquire) & 1)) {
                *flag = 0;
                return MPI_SUCCESS;
            }
        }
        if (r->kind == PM_REQ_GREQ)
            greq_query(r);
        break;
    }
    *flag = 1;
    if (st)
        *st = r->status;
    return r->status.MPI_ERROR;
}

/* Block until `r` completes. */
static void wait_one(struct pm_request *r)
{
    if ((r->kind == PM_REQ_SEND || r->kind == PM_REQ_RECV) && r->preq) {
        proust_status_t ps;
        int rc = proust_wait(&r->preq, &ps);
        finish_engine(r, rc, &ps);
        return;
    }
    if (r->kind == PM_REQ_PERSISTENT) {
        int flag = 0;
        unsigned idle = 0;
        while (pm_persistent_poll(r, &flag, NULL, true), !flag)
            if (++idle > 256)
                sched_yield();
        return;
    }
    pm_wait_flag(&r->done);
}

/* A completed request leaves: persistent ones become inactive, the others
 * are freed and the handle set to MPI_REQUEST_NULL. */
static void retire(struct pm_request *r, MPI_Request *handle)
{
    if (r->kind == PM_REQ_PERSISTENT) {
        pm_persistent_complete(r);
        return;
    }
    if (r->kind == PM_REQ_GREQ && r->gf) {
        r->gf(r->gextra);
        r->gf = NULL;
    }
    pm_request_free(r);
    *handle = MPI_REQUEST_NULL;
}

static inline void copy_status(MPI_Status *dst, const struct pm_request *r, bool with_error)
{
    if (!dst)
        return;
    int keep = dst->MPI_ERROR;
    *dst = r->status;
    if (!with_error)
        dst->MPI_ERROR = keep;
}

/* Raise a request's error on its communicator. */
static int raise_request_error(const char *fname, struct pm_request *r, int err)
{
    MPI_Comm comm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
    return pm_error(comm, err, "%s: request failed", fname);
}

static struct pm_request *lookup(const char *fname, MPI_Request h, int *rc)
{
    struct pm_request *r = pm_request_get(h);
    if (!r)
        *rc = pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid request handle %#x", fname,
                       (unsigned)h);
    return r;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Wait");
    if (!request)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Wait: request pointer is NULL");
    if (*request == MPI_REQUEST_NULL) {
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = lookup("MPI_Wait", *request, &rc);
    if (!r)
        return rc;
    /* Fast path: a plain contiguous send or receive. */
    if (PM_LIKELY(r->kind <= PM_REQ_RECV && r->preq && !r->tmp)) {
        proust_status_t ps;
        int prc = proust_wait(&r->preq, &ps);
        if (PM_LIKELY(prc == PROUST_OK)) {
            if (status) {
                if (r->kind == PM_REQ_RECV) {
                    status->MPI_SOURCE = pm_tag_source(ps.tag);
                    status->MPI_TAG = pm_tag_tag(ps.tag);
                    status->proust_bytes = (MPI_Count)ps.count;
                } else {
                    status->MPI_SOURCE = r->status.MPI_SOURCE;
                    status->MPI_TAG = r->status.MPI_TAG;
                    status->proust_bytes = (MPI_Count)ps.size;
                }
                status->proust_cancelled = 0;
            }
            pm_request_free(r);
            *request = MPI_REQUEST_NULL;
            return MPI_SUCCESS;
        }
        finish_engine(r, prc, &ps);
    } else {
        wait_one(r);
    }
    int flag;
    rc = pm_request_poll(r, &flag, NULL, false);
    copy_status(status, r, rc != MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        rc = raise_request_error("MPI_Wait", r, rc);
    retire(r, request);
    return rc;
}
PM_WEAK(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test: NULL argument");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = lookup("MPI_Test", *request, &rc);
    if (!r)
        return rc;
    rc = pm_request_poll(r, flag, NULL, true);
    if (!*flag)
        return MPI_SUCCESS;
    copy_status(status, r, rc != MPI_SUCCESS);
    if (rc != MPI_SUCCESS)
        rc = raise_request_error("MPI_Test", r, rc);
    retire(r, request);
    return rc;
}
PM_WEAK(Test)

/* Is this entry something to wait for (not null, not an inactive persistent
 * request)? */
static struct pm_request *active_entry(MPI_Request h, int *rc, const char *fname)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    struct pm_request *r = lookup(fname, h, rc);
    if (r && r->kind == PM_REQ_PERSISTENT && !pm_persistent_active(r))
        return NULL;
    return r;
}

static int check_array(const char *fname, int count, const MPI_Request *reqs)
{
    if (count < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s: negative count %d", fname, count);
    if (count > 0 && !reqs)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request array is NULL", fname);
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !pm_request_get(reqs[i]))
            return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid request handle %#x at %d",
                            fname, (unsigned)reqs[i], i);
    return MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Waitall");
    int rc = check_array("MPI_Waitall", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Everything is posted already, so waiting in order costs nothing: the
     * engine progresses all of them while we wait for the first. */
    bool failed = false;
    struct pm_comm *failed_comm = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        struct pm_request *r = active_entry(reqs[i], &rc, "MPI_Waitall");
        if (!r) {
            pm_status_empty(st);
            continue;
        }
        wait_one(r);
        int flag;
        int err = pm_request_poll(r, &flag, NULL, false);
        if (st) {
            *st = r->status;
            st->MPI_ERROR = err;
        }
        if (err != MPI_SUCCESS && !failed) {
            failed = true;
            failed_comm = r->comm ? r->comm : pm_comm_world;
            pm_comm_retain(failed_comm); /* outlives the request */
        }
        retire(r, &reqs[i]);
    }
    if (failed) {
        rc = pm_error(failed_comm->handle, MPI_ERR_IN_STATUS, "MPI_Waitall: a request failed");
        pm_comm_release(failed_comm);
        return rc;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Waitall)

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Testall");
    int rc = check_array("MPI_Testall", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall: flag is NULL");
    proust_progress(pm_session);
    for (int i = 0; i < count; i++) {
        struct pm_request *r = active_entry(reqs[i], &rc, "MPI_Testall");
        int f = 1;
        if (r)
            pm_request_poll(r, &f, NULL, false);
        if (!f) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    /* All complete: finish them (MPI: only when all are). */
    *flag = 1;
    bool failed = false;
    MPI_Comm fcomm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        struct pm_request *r = active_entry(reqs[i], &rc, "MPI_Testall");
        if (!r) {
            pm_status_empty(st);
            continue;
        }
        int f;
        int err = pm_request_poll(r, &f, NULL, false);
        if (st) {
            *st = r->status;
            st->MPI_ERROR = err;
        }
        if (err != MPI_SUCCESS && !failed) {
            failed = true;
            fcomm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
        }
        retire(r, &reqs[i]);
    }
    if (failed)
        return pm_error(fcomm, MPI_ERR_IN_STATUS, "MPI_Testall: a request failed");
    return MPI_SUCCESS;
}
PM_WEAK(Testall)

/* One sweep of Testany: the index of a completed active request, -1 if none
 * is complete, MPI_UNDEFINED if none is active. */
static int sweep_any(int count, MPI_Request reqs[], const char *fname)
{
    int rc, active = 0;
    for (int i = 0; i < count; i++) {
        struct pm_request *r = active_entry(reqs[i], &rc, fname);
        if (!r)
            continue;
        active++;
        int f;
        pm_request_poll(r, &f, NULL, false);
        if (f)
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

static int finish_index(int i, MPI_Request reqs[], MPI_Status *status, const char *fname)
{
    int rc;
    struct pm_request *r = active_entry(reqs[i], &rc, fname);
    int f;
    int err = pm_request_poll(r, &f, NULL, false);
    copy_status(status, r, err != MPI_SUCCESS);
    MPI_Comm comm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
    retire(r, &reqs[i]);
    if (err != MPI_SUCCESS)
        return pm_error(comm, err, "%s: request %d failed", fname, i);
    return MPI_SUCCESS;
}

int PMPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Waitany");
    int rc = check_array("MPI_Waitany", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitany: index is NULL");
    unsigned idle = 0;
    for (;;) {
        int i = sweep_any(count, reqs, "MPI_Waitany");
        if (i == MPI_UNDEFINED) {
            *index = MPI_UNDEFINED;
            pm_status_empty(status);
            return MPI_SUCCESS;
        }
        if (i >= 0) {
            *index = i;
            return finish_index(i, reqs, status, "MPI_Waitany");
        }
        proust_progress(pm_session);
        if (++idle > 256)
            sched_yield();
    }
}
PM_WEAK(Waitany)

int PMPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Testany");
    int rc = check_array("MPI_Testany", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testany: NULL argument");
    proust_progress(pm_session);
    int i = sweep_any(count, reqs, "MPI_Testany");
    if (i == MPI_UNDEFINED) {
        *flag = 1;
        *index = MPI_UNDEFINED;
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    if (i < 0) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    return finish_index(i, reqs, status, "MPI_Testany");
}
PM_WEAK(Testany)

/* Complete every finished active request: their count (MPI_UNDEFINED when
 * none is active), -1 when none finished. */
static int some(int count, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[], const char *fname, int *rc_out)
{
    int rc, active = 0, n = 0;
    bool failed = false;
    MPI_Comm fcomm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        struct pm_request *r = active_entry(reqs[i], &rc, fname);
        if (!r)
            continue;
        active++;
        int f;
        int err = pm_request_poll(r, &f, NULL, false);
        if (!f)
            continue;
        if (indices)
            indices[n] = i;
        if (statuses) {
            statuses[n] = r->status;
            statuses[n].MPI_ERROR = err;
        }
        if (err != MPI_SUCCESS && !failed) {
            failed = true;
            fcomm = r->comm ? r->comm->handle : MPI_COMM_WORLD;
        }
        n++;
        retire(r, &reqs[i]);
    }
    *rc_out = MPI_SUCCESS;
    if (!active) {
        *outcount = MPI_UNDEFINED;
        return MPI_UNDEFINED;
    }
    *outcount = n;
    if (failed)
        *rc_out = pm_error(fcomm, MPI_ERR_IN_STATUS, "%s: a request failed", fname);
    return n;
}

int PMPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Waitsome");
    int rc = check_array("MPI_Waitsome", incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!outcount)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Waitsome: outcount is NULL");
    unsigned idle = 0;
    for (;;) {
        int n = some(incount, reqs, outcount, indices, statuses, "MPI_Waitsome", &rc);
        if (n != 0)
            return rc;
        proust_progress(pm_session);
        if (++idle > 256)
            sched_yield();
    }
}
PM_WEAK(Waitsome)

int PMPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Testsome");
    int rc = check_array("MPI_Testsome", incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!outcount)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testsome: outcount is NULL");
    proust_progress(pm_session);
    some(incount, reqs, outcount, indices, statuses, "MPI_Testsome", &rc);
    return rc;
}
PM_WEAK(Testsome)

/* Freed while in flight: the engine finishes it; a temporary buffer goes
 * (and a receive is unpacked) when it completes. */
static void release_when_done(proust_request_t *preq, const proust_status_t *ps, void *arg)
{
    struct pm_request *r = arg;
    if (r->kind == PM_REQ_RECV && r->tmp &&
        (ps->error == PROUST_OK || ps->error == PROUST_ERR_TRUNCATE))
        pm_type_unpack(r->tmp, ps->count, r->user_buf, r->count, r->type, 0);
    r->preq = NULL; /* released by the engine (proust_request_free) */
    pm_request_free(r);
}

int PMPI_Request_free(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Request_free");
    if (!request || *request == MPI_REQUEST_NULL)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free: null request");
    int rc = MPI_SUCCESS;
    struct pm_request *r = lookup("MPI_Request_free", *request, &rc);
    if (!r)
        return rc;
    switch (r->kind) {
    case PM_REQ_COLL:
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "MPI_Request_free: a nonblocking collective request cannot be freed "
                        "(MPI-3.1 §5.12)");
    case PM_REQ_PERSISTENT:
        pm_persistent_free(r);
        break;
    case PM_REQ_SEND:
    case PM_REQ_RECV:
        if (r->preq) {
            pm_table_remove(&pm_request_table, r->handle);
            proust_request_t *preq = r->preq;
            proust_request_monitor(preq, release_when_done, r);
            proust_request_free(&preq);
            break;
        }
        pm_request_free(r);
        break;
    case PM_REQ_GREQ:
        /* The application may complete it later with the old handle value:
         * whoever of the two comes last releases it (bit 1: freed). */
        if (!(atomic_fetch_or(&r->done, 2) & 1))
            break;
        greq_query(r);
        retire(r, request);
        break;
    case PM_REQ_DONE:
        pm_request_free(r);
        break;
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Request_free)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Request_get_status");
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status: flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        pm_status_empty(status);
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    struct pm_request *r = lookup("MPI_Request_get_status", request, &rc);
    if (!r)
        return rc;
    rc = pm_request_poll(r, flag, NULL, true);
    if (*flag)
        copy_status(status, r, rc != MPI_SUCCESS);
    return MPI_SUCCESS;
}
PM_WEAK(Request_get_status)

int PMPI_Cancel(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Cancel");
    if (!request || *request == MPI_REQUEST_NULL)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel: null request");
    int rc = MPI_SUCCESS;
    struct pm_request *r = lookup("MPI_Cancel", *request, &rc);
    if (!r)
        return rc;
    switch (r->kind) {
    case PM_REQ_RECV:
        if (r->preq)
            proust_cancel(r->preq); /* PROUST_ERR_BUSY: already matched, completes normally */
        break;
    case PM_REQ_GREQ:
        if (r->gc)
            r->gc(r->gextra, atomic_load(&r->done) != 0);
        break;
    case PM_REQ_COLL:
        return pm_error(r->comm->handle, MPI_ERR_REQUEST,
                        "MPI_Cancel: nonblocking collectives cannot be cancelled");
    case PM_REQ_PERSISTENT:
        return pm_persistent_cancel(r);
    default:
        /* Sends leave at once in Proust (eager) or are matched already:
         * the cancellation does not succeed, which MPI allows. */
        break;
    }
    return MPI_SUCCESS;
}
PM_WEAK(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    PM_CHECK_INIT("MPI_Test_cancelled");
    if (!status || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test_cancelled: NULL argument");
    *flag = status->proust_cancelled != 0;
    return MPI_SUCCESS;
}
PM_WEAK(Test_cancelled)

/* ---- Generalized requests -------------------------------------------------- */
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Grequest_start");
    if (!request)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Grequest_start: request is NULL");
    struct pm_request *r = pm_request_new(PM_REQ_GREQ, NULL);
    if (!r)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Grequest_start: out of memory");
    r->gq = query_fn;
    r->gf = free_fn;
    r->gc = cancel_fn;
    r->gextra = extra_state;
    *request = r->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    PM_CHECK_INIT("MPI_Grequest_complete");
    struct pm_request *r = pm_request_get(request);
    if (!r || r->kind != PM_REQ_GREQ)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST,
                        "MPI_Grequest_complete: %#x is not a generalized request",
                        (unsigned)request);
    if (atomic_fetch_or_explicit(&r->done, 1, memory_order_acq_rel) & 2) {
        greq_query(r); /* freed already: nobody will wait for it */
        MPI_Request h = request;
        retire(r, &h);
    }
    return MPI_SUCCESS;
}
PM_WEAK(Grequest_complete)
