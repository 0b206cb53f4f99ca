/*
 * coll_check.c — argument checks shared by the collectives (coll.h and
 * coll_algo.h). Each check raises its error through pm_error (the
 * communicator's handler) and returns the class, or MPI_SUCCESS.
 */
#include "coll_algo.h"

int pm_coll_check_comm(const char *fname, MPI_Comm comm, struct pm_comm **c)
{
    struct pm_comm *p = pm_comm_get(comm);
    if (PM_UNLIKELY(!p)) {
        if (comm == MPI_COMM_NULL)
            return pm_error(MPI_COMM_NULL, MPI_ERR_COMM, "%s: the communicator is MPI_COMM_NULL",
                            fname);
        return pm_error(MPI_COMM_NULL, MPI_ERR_COMM, "%s: invalid communicator handle %#x", fname,
                        (unsigned)comm);
    }
    *c = p;
    return MPI_SUCCESS;
}

int pm_coll_check_root(const char *fname, struct pm_comm *c, int root)
{
    if (c->is_inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote->size))
            return MPI_SUCCESS;
        return pm_error(c->handle, MPI_ERR_ROOT,
                        "%s: root %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the "
                        "remote group (size %d)",
                        fname, root, c->remote->size);
    }
    if (PM_UNLIKELY(root < 0 || root >= c->size))
        return pm_error(c->handle, MPI_ERR_ROOT, "%s: root %d is not a rank of the communicator "
                        "(size %d)", fname, root, c->size);
    return MPI_SUCCESS;
}

int pm_coll_check_buf(const char *fname, struct pm_comm *c, MPI_Count count, MPI_Datatype dt)
{
    if (PM_UNLIKELY(count < 0))
        return pm_error(c->handle, MPI_ERR_COUNT, "%s: count %lld is negative", fname, count);
    struct pm_datatype *t;
    if (PM_UNLIKELY(pm_type_check(dt, &t) != MPI_SUCCESS)) {
        if (!t)
            return pm_error(c->handle, MPI_ERR_TYPE, "%s: invalid datatype handle %#x", fname,
                            (unsigned)dt);
        return pm_error(c->handle, MPI_ERR_TYPE, "%s: datatype %#x is not committed", fname,
                        (unsigned)dt);
    }
    /* (a _c count: its bytes may not fit the address space) */
    if (PM_UNLIKELY(!pm_count_fast(count)))
        return pm_check_count(fname, c->handle, count, t);
    return MPI_SUCCESS;
}

int pm_coll_check_counts(const char *fname, struct pm_comm *c, const char *what,
                         struct pm_counts v, int n, MPI_Datatype dt, const MPI_Datatype *types)
{
    for (int i = 0; i < n; i++) {
        MPI_Count ci = pm_cnt(v, i);
        if (PM_UNLIKELY(ci < 0))
            return pm_error(c->handle, MPI_ERR_COUNT, "%s: %s[%d] = %lld is negative", fname,
                            what, i, ci);
        int rc;
        if (types && ci > 0 && (rc = pm_coll_check_buf(fname, c, ci, types[i])))
            return rc;
    }
    if (types)
        return MPI_SUCCESS;
    int rc = pm_coll_check_buf(fname, c, 0, dt);
    if (rc)
        return rc;
    const struct pm_datatype *t = pm_type_get(dt);
    for (int i = 0; i < n; i++) { /* (a _c count: its bytes may not fit) */
        MPI_Count ci = pm_cnt(v, i);
        if (PM_UNLIKELY(!pm_count_fast(ci)) && (rc = pm_check_count(fname, c->handle, ci, t)))
            return rc;
    }
    return MPI_SUCCESS;
}

int pm_coll_check_op(const char *fname, struct pm_comm *c, MPI_Op op, MPI_Datatype dt)
{
    return pm_op_check(op, dt, c->handle, fname);
}

int pm_coll_check_data(const char *fname, struct pm_comm *c, const char *what, const void *buf,
                       MPI_Count count, MPI_Datatype dt)
{
    if (PM_UNLIKELY(buf == MPI_IN_PLACE))
        return pm_error(c->handle, MPI_ERR_BUFFER, "%s: %s is MPI_IN_PLACE, which is not "
                        "allowed here", fname, what);
    if (PM_UNLIKELY(!buf && count > 0)) {
        /* MPI_BOTTOM is fine with absolute displacements in the type */
        const struct pm_datatype *t = pm_type_get(dt);
        if (t && t->size > 0 && t->true_lb == 0)
            return pm_error(c->handle, MPI_ERR_BUFFER, "%s: %s is NULL with count %lld", fname,
                            what, count);
    }
    return MPI_SUCCESS;
}

int pm_coll_check_reduce_bufs(const char *fname, struct pm_comm *c, const void *sbuf,
                              MPI_Count scount, const void *rbuf, MPI_Count rcount,
                              MPI_Datatype dt, bool in_place_ok, bool need_rbuf)
{
    int rc;
    if (sbuf == MPI_IN_PLACE) {
        if (!in_place_ok)
            return pm_error(c->handle, MPI_ERR_BUFFER,
                            "%s: sendbuf is MPI_IN_PLACE, which is not allowed %s", fname,
                            c->is_inter ? "on an intercommunicator" : "on this rank");
    } else if ((rc = pm_coll_check_data(fname, c, "sendbuf", sbuf, scount, dt))) {
        return rc;
    }
    if (!need_rbuf)
        return MPI_SUCCESS;
    if ((rc = pm_coll_check_data(fname, c, "recvbuf", rbuf, rcount, dt)))
        return rc;
    if (PM_UNLIKELY(sbuf == rbuf && sbuf && scount > 0 && rcount > 0)) {
        const struct pm_datatype *t = pm_type_get(dt);
        if (t && t->size > 0)
            return pm_error(c->handle, MPI_ERR_BUFFER,
                            "%s: sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)",
                            fname);
    }
    return MPI_SUCCESS;
}

int pm_coll_check_request(const char *fname, struct pm_comm *c, MPI_Request *request)
{
    if (PM_UNLIKELY(!request))
        return pm_error(c->handle, MPI_ERR_ARG, "%s: request is NULL", fname);
    return MPI_SUCCESS;
}

int pm_coll_cx_go(struct pm_cx *cx, const struct pm_own_block *own, MPI_Comm comm,
                  const char *fname, int rank, MPI_Request *request)
{
    bool nonblocking = cx->s != NULL;
    int rc = pm_cx_finish(cx, request);
    if (rc && own->err)
        return pm_error(comm, rc, "%s: rank %d sends itself %lld bytes into a block of %lld "
                        "(the ranks' counts or types differ)", fname, rank, own->have,
                        own->room);
    if (rc)
        return pm_error(comm, rc, "%s: %s failed", fname,
                        nonblocking ? "starting the operation" : "the operation");
    return MPI_SUCCESS;
}

/* A collective that moves no byte anywhere returns at once (a nonblocking
 * one with a request already complete), as MPICH and Open MPI do: callers
 * decide so only from what every rank's arguments say alike (a count the
 * ranks must agree on, the counts of a v collective every rank has). */
int pm_coll_nothing(MPI_Request *request, bool nonblocking)
{
    /* the shared request complete from the start (an Isend that left at
     * once gets it too): its status is the empty one a collective's is */
    if (nonblocking)
        *request = PM_REQ_SENT_HANDLE;
    return MPI_SUCCESS;
}

MPI_Count pm_coll_bytes(MPI_Count count, MPI_Datatype type)
{
    return count * (MPI_Count)pm_type_get(type)->size;
}
