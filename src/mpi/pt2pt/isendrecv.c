/*
 * isendrecv.c — MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0 §3.10).
 *
 * Both halves are ordinary MPI_Irecv / MPI_Isend requests (so they match
 * any send or receive of the peers); the request returned is a third one
 * (PM_REQ_ASYNC) that completes when both have, from the engine's
 * completion callbacks, with the receive's status. No thread has to sit in
 * MPI_Wait for it to progress. The replace form sends a packed copy of the
 * buffer, so the receive may land in it at once.
 */
#include <limits.h>
#include <stdlib.h>

#include "request.h"

struct isendrecv {
    struct pm_request *req;       /* what the application holds */
    struct pm_request *recv, *send;
    void *copy;                   /* replace: the data sent */
    _Atomic int parts;            /* halves in flight, + 1 while starting */
};

static void finish(struct isendrecv *x)
{
    struct pm_request *r = x->req;
    r->status = x->recv->status;
    if (r->status.MPI_ERROR == MPI_SUCCESS)
        r->status.MPI_ERROR = x->send->status.MPI_ERROR;
    pm_request_free(x->recv);
    pm_request_free(x->send);
    free(x->copy);
    free(x);
    /* bit 1: MPI_Request_free came first, the request is ours to free */
    if (pm_flag_set(&r->done, &r->sleeper, 1) & 2)
        pm_request_free(r);
}

static void part_done(struct isendrecv *x)
{
    if (atomic_fetch_sub_explicit(&x->parts, 1, memory_order_acq_rel) == 1)
        finish(x);
}

/* The engine finished one half: its status (and the unpacking of a
 * noncontiguous receive) as MPI_Wait would record them. */
static void recv_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct isendrecv *x = arg;
    pm_req_finish_engine(x->recv, st->error, st);
    part_done(x);
}

static void send_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct isendrecv *x = arg;
    pm_req_finish_engine(x->send, st->error, st);
    part_done(x);
}

/* Watch one half: its completion (now or later) counts one part down. */
static void watch(struct isendrecv *x, struct pm_request *h, proust_request_cb_t cb)
{
    if (!h->preq) { /* MPI_PROC_NULL: complete already */
        part_done(x);
        return;
    }
    proust_request_t *preq = h->preq;
    h->preq = NULL;
    if (proust_request_monitor(preq, cb, x) != PROUST_OK) {
        proust_status_t st;
        st.error = proust_wait(&preq, &st);
        cb(NULL, &st, x);
        return;
    }
    proust_request_free(&preq);
}

/* Start both halves of a checked call; the send is of (sbuf, scount,
 * stype), or of `copy` (packed bytes, taken over) when not NULL. */
static int start(const char *fn, MPI_Comm comm, struct pm_comm *c, const void *sbuf,
                 MPI_Count scount, MPI_Datatype stype, void *copy, int dest, int sendtag,
                 void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int source, int recvtag,
                 MPI_Request *request)
{
    struct isendrecv *x = calloc(1, sizeof *x);
    struct pm_request *r = x ? pm_request_new(PM_REQ_ASYNC, c) : NULL;
    if (!r) {
        free(x);
        free(copy);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    x->req = r;
    x->copy = copy;
    int rc = pm_irecv(rbuf, rcount, rtype, source, recvtag, c, &x->recv);
    if (rc != MPI_SUCCESS) {
        pm_request_free(r);
        free(copy);
        free(x);
        return pm_error(comm, rc, "%s: receive from rank %d failed", fn, source);
    }
    rc = copy ? pm_isend(copy, scount, MPI_BYTE, dest, sendtag, c, 0, &x->send)
              : pm_isend(sbuf, scount, stype, dest, sendtag, c, 0, &x->send);
    if (rc != MPI_SUCCESS) {
        MPI_Request h = x->recv->handle;
        PMPI_Cancel(&h);
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        pm_request_free(r);
        free(copy);
        free(x);
        return pm_error(comm, rc, "%s: send to rank %d failed", fn, dest);
    }
    atomic_init(&x->parts, 3);
    *request = r->handle;
    watch(x, x->recv, recv_done);
    watch(x, x->send, send_done);
    part_done(x); /* may finish it */
    return MPI_SUCCESS;
}

static int isendrecv(const char *fn, const void *sendbuf, MPI_Count sendcount,
                     MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                     MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *st, *rt;
    int rc = pm_check_send(fn, comm, c, sendcount, sendtype, dest, sendtag, &st);
    if (rc == MPI_SUCCESS)
        rc = pm_check_recv(fn, comm, c, recvcount, recvtype, source, recvtag, &rt);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    return start(fn, comm, c, sendbuf, sendcount, sendtype, NULL, dest, sendtag, recvbuf,
                 recvcount, recvtype, source, recvtag, request);
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                   int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                   int recvtag, MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Isendrecv");
    return isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request);
}
PM_WEAK(Isendrecv)

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Isendrecv_c");
    return isendrecv("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                     recvcount, recvtype, source, recvtag, comm, request);
}
PM_WEAK(Isendrecv_c)

static int isendrecv_replace(const char *fn, void *buf, MPI_Count count, MPI_Datatype datatype,
                             int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_send(fn, comm, c, count, datatype, dest, sendtag, &t);
    if (rc == MPI_SUCCESS)
        rc = pm_check_recv(fn, comm, c, count, datatype, source, recvtag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    size_t bytes;
    void *copy = pm_pack_copy(buf, count, t, &bytes);
    if (!copy)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", fn, bytes);
    return start(fn, comm, c, NULL, (MPI_Count)bytes, MPI_BYTE, copy, dest, sendtag, buf, count,
                 datatype, source, recvtag, request);
}

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Isendrecv_replace");
    return isendrecv_replace("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag,
                             source, recvtag, comm, request);
}
PM_WEAK(Isendrecv_replace)

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Isendrecv_replace_c");
    return isendrecv_replace("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag,
                             source, recvtag, comm, request);
}
PM_WEAK(Isendrecv_replace_c)
