/*
 * request_multi.c — completion of several requests at once: Waitall,
 * Testall, Waitany, Testany, Waitsome, Testsome, and their MPI-4.1 peeks
 * MPI_Request_get_status_any / _all / _some.
 *
 * Null entries and inactive persistent requests are skipped ("not
 * active"); a failed request makes the call return MPI_ERR_IN_STATUS with
 * each status' MPI_ERROR set, raised on the failed request's communicator.
 */
#include <sched.h>
#include <stdint.h>

#include "mpi_impl.h"
#include "request.h"

/* The communicator to raise a request's error on, kept alive past the
 * request (the application may have freed its handle already). */
static struct pm_comm *hold_comm(const struct pm_request *r)
{
    struct pm_comm *c = r->comm ? r->comm : pm_comm_world;
    pm_comm_retain(c);
    return c;
}

/* A completed request of a multi-request call leaves: its status (unless
 * NULL) with MPI_ERROR set, the first failure's communicator held in
 * *failed, the handle retired. */
static void collect(struct pm_request *r, MPI_Request *handle, MPI_Status *st,
                    struct pm_comm **failed)
{
    int flag;
    int err = pm_request_poll(r, &flag, NULL, false);
    if (st) {
        *st = r->status;
        st->MPI_ERROR = err;
    }
    if (err != MPI_SUCCESS && !*failed)
        *failed = hold_comm(r);
    int frc = pm_req_retire(r, handle); /* a generalized request's free function */
    if (err == MPI_SUCCESS && frc != MPI_SUCCESS) {
        if (st)
            st->MPI_ERROR = frc;
        if (!*failed) {
            *failed = pm_comm_world;
            pm_comm_retain(pm_comm_world);
        }
    }
}

/* A completed request's status into *st (unless NULL), MPI_ERROR set; its
 * error. The request stays (MPI-4.1 MPI_Request_get_status_*). */
static int peek_status(struct pm_request *r, MPI_Status *st)
{
    int f;
    int err = pm_request_poll(r, &f, NULL, false);
    pm_req_copy_status(st, r, true);
    if (st)
        st->MPI_ERROR = err;
    return err;
}

/* A completed request of a multi-request call: retired (collect) or only
 * read (peek_status); the first failure's communicator held in *failed. */
static void finish_entry(struct pm_request *r, MPI_Request *handle, MPI_Status *st,
                         struct pm_comm **failed, bool retire)
{
    if (retire)
        collect(r, handle, st, failed);
    else if (peek_status(r, st) != MPI_SUCCESS && !*failed)
        *failed = hold_comm(r);
}

/* Raise `code` on a held communicator and let it go. */
static int raise_held(struct pm_comm *c, int code, const char *fname, const char *what)
{
    int rc = pm_error(c->handle, code, "%s: %s", fname, what);
    pm_comm_release(c);
    return rc;
}

/* r, unless it is an inactive persistent request (nothing to wait for). */
static struct pm_request *if_active(struct pm_request *r)
{
    return r && r->kind == PM_REQ_PERSISTENT && !pm_persistent_active(r) ? NULL : r;
}

/* Is this entry something to wait for (not null, not an inactive persistent
 * request)? */
static struct pm_request *active_entry(MPI_Request h, int *rc, const char *fname)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    return if_active(pm_req_lookup(fname, h, rc));
}

/* Every handle valid (or null)? With `found`, the requests are kept there
 * (NULL for a null handle), so the caller need not look them up again. */
static int check_array_into(const char *fname, int count, const MPI_Request *reqs,
                            struct pm_request **found)
{
    if (count < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_COUNT, "%s: negative count %d", fname, count);
    if (count > 0 && !reqs)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: request array is NULL", fname);
    for (int i = 0; i < count; i++) {
        struct pm_request *r = NULL;
        if (reqs[i] != MPI_REQUEST_NULL && !(r = pm_request_get(reqs[i])))
            return pm_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "%s: invalid request handle %#x at %d",
                            fname, (unsigned)reqs[i], i);
        if (found)
            found[i] = r;
    }
    return MPI_SUCCESS;
}

static int check_array(const char *fname, int count, const MPI_Request *reqs)
{
    return check_array_into(fname, count, reqs, NULL);
}

/* MPI_Waitall keeps the requests of arrays up to this size on its stack
 * (osu_bw's window is 64). */
#define WAITALL_KEEP 128

int PMPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Waitall");
    struct pm_request *kept[WAITALL_KEEP];
    struct pm_request **found = count <= WAITALL_KEEP ? kept : NULL;
    int rc = check_array_into("MPI_Waitall", count, reqs, found);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Everything is posted already, so waiting in order costs nothing: the
     * engine progresses all of them while we wait for the first. */
    struct pm_comm *failed_comm = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        if (reqs[i] == PM_REQ_SENT_HANDLE) { /* left at once, nothing to wait for */
            if (st)
                *st = pm_req_sent.status;
            reqs[i] = MPI_REQUEST_NULL;
            continue;
        }
        struct pm_request *r;
        if (found && found[i] && __atomic_load_n(&found[i]->kind, __ATOMIC_ACQUIRE) != PM_REQ_FREE)
            r = if_active(found[i]);
        else /* null, or released meanwhile (a callback): the lookup says which */
            r = active_entry(reqs[i], &rc, "MPI_Waitall");
        if (!r) {
            pm_status_empty(st);
            continue;
        }
        /* Plain contiguous send or receive: one engine wait, then gone. */
        if (PM_LIKELY(r->kind <= PM_REQ_RECV && r->preq && !r->tmp)) {
            proust_status_t ps;
            int prc = proust_wait(&r->preq, &ps);
            if (PM_LIKELY(prc == PROUST_OK)) {
                if (st) {
                    pm_status_ok(st, r, r->kind == PM_REQ_RECV, &ps);
                    st->MPI_ERROR = MPI_SUCCESS;
                }
                pm_request_free(r);
                reqs[i] = MPI_REQUEST_NULL;
                continue;
            }
            pm_req_finish_engine(r, prc, &ps); /* failed or cancelled: below */
        }
        pm_req_wait_one(r);
        collect(r, &reqs[i], st, &failed_comm);
    }
    if (failed_comm)
        return raise_held(failed_comm, MPI_ERR_IN_STATUS, "MPI_Waitall", "a request failed");
    return MPI_SUCCESS;
}
PM_WEAK(Waitall)

/* Every entry of an all-complete array: the null and inactive ones get an
 * empty status, the others are retired (or only read); MPI_ERR_IN_STATUS
 * when one failed. */
static int finish_all(int count, MPI_Request reqs[], MPI_Status statuses[], const char *fname,
                      bool retire)
{
    int rc;
    struct pm_comm *failed = NULL;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = statuses ? &statuses[i] : NULL;
        struct pm_request *r = active_entry(reqs[i], &rc, fname);
        if (!r)
            pm_status_empty(st);
        else
            finish_entry(r, &reqs[i], st, &failed, retire);
    }
    return failed ? raise_held(failed, MPI_ERR_IN_STATUS, fname, "a request failed")
                  : MPI_SUCCESS;
}

/* Has every active entry completed? (Nothing is retired.) */
static bool all_complete(int count, const MPI_Request reqs[], const char *fname)
{
    int rc;
    for (int i = 0; i < count; i++) {
        struct pm_request *r = active_entry(reqs[i], &rc, fname);
        int f = 1;
        if (r)
            pm_request_poll(r, &f, NULL, false);
        if (!f)
            return false;
    }
    return true;
}

int PMPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
    PM_CHECK_INIT("MPI_Testall");
    int rc = check_array("MPI_Testall", count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Testall: flag is NULL");
    proust_progress(pm_session);
    if (!(*flag = all_complete(count, reqs, "MPI_Testall")))
        return MPI_SUCCESS;
    /* All complete: finish them (MPI: only when all are). */
    return finish_all(count, reqs, statuses, "MPI_Testall", true);
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
    pm_req_copy_status(status, r, err != MPI_SUCCESS);
    if (err == MPI_SUCCESS) {
        int frc = pm_req_retire(r, &reqs[i]);
        if (frc == MPI_SUCCESS)
            return MPI_SUCCESS;
        return pm_error(MPI_COMM_WORLD, frc, "%s: the generalized request's free function failed",
                        fname);
    }
    struct pm_comm *c = hold_comm(r);
    pm_req_retire(r, &reqs[i]);
    return raise_held(c, err, fname, "a request failed");
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

/* Complete (retire, or only read) every finished active request: their
 * count (MPI_UNDEFINED when none is active). */
static int some(int count, MPI_Request reqs[], int *outcount, int indices[],
                MPI_Status statuses[], const char *fname, bool retire, int *rc_out)
{
    int rc, active = 0, n = 0;
    struct pm_comm *fcomm = NULL;
    for (int i = 0; i < count; i++) {
        struct pm_request *r = active_entry(reqs[i], &rc, fname);
        if (!r)
            continue;
        active++;
        int f;
        pm_request_poll(r, &f, NULL, false);
        if (!f)
            continue;
        if (indices)
            indices[n] = i;
        finish_entry(r, &reqs[i], statuses ? &statuses[n] : NULL, &fcomm, retire);
        n++;
    }
    *rc_out = MPI_SUCCESS;
    if (!active) {
        *outcount = MPI_UNDEFINED;
        return MPI_UNDEFINED;
    }
    *outcount = n;
    if (fcomm)
        *rc_out = raise_held(fcomm, MPI_ERR_IN_STATUS, fname, "a request failed");
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
        int n = some(incount, reqs, outcount, indices, statuses, "MPI_Waitsome", true, &rc);
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
    some(incount, reqs, outcount, indices, statuses, "MPI_Testsome", true, &rc);
    return rc;
}
PM_WEAK(Testsome)

/* ---- MPI-4.1: the status of several requests, none freed ----------------
 * MPI_Request_get_status_any / _all / _some answer as Testany / Testall /
 * Testsome do but leave every request as it is (a later wait or test frees
 * it), as MPI_Request_get_status does for one. */

int PMPI_Request_get_status_any(int count, const MPI_Request reqs[], int *index, int *flag,
                                MPI_Status *status)
{
    static const char fn[] = "MPI_Request_get_status_any";
    PM_CHECK_INIT(fn);
    int rc = check_array(fn, count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!index || !flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL argument", fn);
    proust_progress(pm_session);
    int i = sweep_any(count, (MPI_Request *)(uintptr_t)reqs, fn); /* reads only */
    *index = i < 0 ? MPI_UNDEFINED : i;
    *flag = i != -1;
    if (i == MPI_UNDEFINED)
        pm_status_empty(status);
    if (i < 0)
        return MPI_SUCCESS;
    struct pm_request *r = active_entry(reqs[i], &rc, fn);
    int err = peek_status(r, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : raise_held(hold_comm(r), err, fn, "the completed request failed");
}
PM_WEAK(Request_get_status_any)

int PMPI_Request_get_status_all(int count, const MPI_Request reqs[], int *flag,
                                MPI_Status statuses[])
{
    static const char fn[] = "MPI_Request_get_status_all";
    PM_CHECK_INIT(fn);
    int rc = check_array(fn, count, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: flag is NULL", fn);
    proust_progress(pm_session);
    if (!(*flag = all_complete(count, reqs, fn)))
        return MPI_SUCCESS;
    return finish_all(count, (MPI_Request *)(uintptr_t)reqs, statuses, fn, false); /* reads only */
}
PM_WEAK(Request_get_status_all)

int PMPI_Request_get_status_some(int incount, const MPI_Request reqs[], int *outcount,
                                 int indices[], MPI_Status statuses[])
{
    static const char fn[] = "MPI_Request_get_status_some";
    PM_CHECK_INIT(fn);
    int rc = check_array(fn, incount, reqs);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL argument", fn);
    proust_progress(pm_session);
    some(incount, (MPI_Request *)(uintptr_t)reqs, outcount, indices, statuses, fn, false,
         &rc); /* reads only */
    return rc;
}
PM_WEAK(Request_get_status_some)
