/*
 * pt2pt.c — point-to-point sends and receives.
 *
 * A contiguous datatype goes straight to the engine: the blocking calls are
 * one proust_send/proust_recv after a handful of checks, with no request and
 * no allocation. A noncontiguous one is packed into a temporary buffer
 * (sends) or received into one and unpacked at completion (receives).
 */
#include <stdlib.h>
#include <string.h>

#include "request.h"

/* ---- Argument checks ------------------------------------------------------ */
int pm_check_count(const char *fname, MPI_Comm comm, MPI_Count count,
                   const struct pm_datatype *t)
{
    if (count < 0)
        return pm_error(comm, MPI_ERR_COUNT, "%s: negative count %lld", fname, (long long)count);
    size_t bytes;
    if (__builtin_mul_overflow((size_t)count, (size_t)t->size, &bytes) || bytes > PTRDIFF_MAX)
        return pm_error(comm, MPI_ERR_COUNT,
                        "%s: %lld elements of %lld bytes exceed the address space", fname,
                        (long long)count, (long long)t->size);
    return MPI_SUCCESS;
}

static int check_common(const char *fname, MPI_Comm comm, struct pm_comm *c, MPI_Count count,
                        MPI_Datatype dt, struct pm_datatype **t)
{
    if (!c)
        return pm_error(comm, MPI_ERR_COMM, "%s: invalid communicator %#x", fname, (unsigned)comm);
    if (count < 0)
        return pm_error(comm, MPI_ERR_COUNT, "%s: negative count %lld", fname, (long long)count);
    if (count == 0 && dt == MPI_DATATYPE_NULL) { /* an empty message, as MPICH accepts */
        *t = pm_type_get(MPI_BYTE);
        return MPI_SUCCESS;
    }
    int rc = pm_type_check(dt, t);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "%s: invalid or uncommitted datatype %#x", fname, (unsigned)dt);
    return pm_check_count(fname, comm, count, *t);
}

int pm_check_send(const char *fname, MPI_Comm comm, struct pm_comm *c, MPI_Count count,
                  MPI_Datatype dt, int dest, int tag, struct pm_datatype **t)
{
    int rc = check_common(fname, comm, c, count, dt, t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (tag < 0 || tag > PM_TAG_UB)
        return pm_error(comm, MPI_ERR_TAG, "%s: tag %d outside 0..%d", fname, tag, PM_TAG_UB);
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= c->remote->size))
        return pm_error(comm, MPI_ERR_RANK, "%s: destination rank %d outside 0..%d", fname, dest,
                        c->remote->size - 1);
    return MPI_SUCCESS;
}

int pm_check_recv(const char *fname, MPI_Comm comm, struct pm_comm *c, MPI_Count count,
                  MPI_Datatype dt, int source, int tag, struct pm_datatype **t)
{
    int rc = check_common(fname, comm, c, count, dt, t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (tag != MPI_ANY_TAG && (tag < 0 || tag > PM_TAG_UB))
        return pm_error(comm, MPI_ERR_TAG, "%s: tag %d outside 0..%d and not MPI_ANY_TAG", fname,
                        tag, PM_TAG_UB);
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
        (source < 0 || source >= c->remote->size))
        return pm_error(comm, MPI_ERR_RANK, "%s: source rank %d outside 0..%d", fname, source,
                        c->remote->size - 1);
    return MPI_SUCCESS;
}

/* Engine source, tag and mask of a receive. */
static inline void recv_match(const struct pm_comm *c, int source, int tag, int *psrc,
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

void pm_status_from_proust(MPI_Status *st, const proust_status_t *ps)
{
    st->MPI_SOURCE = pm_tag_source(ps->tag);
    st->MPI_TAG = pm_tag_tag(ps->tag);
    st->proust_bytes = (MPI_Count)ps->count;
    st->proust_cancelled = ps->error == PROUST_ERR_CANCELED;
    if (ps->error != PROUST_OK && ps->error != PROUST_ERR_CANCELED)
        st->MPI_ERROR = pm_error_from_proust(ps->error);
}

static void status_proc_null(MPI_Status *st)
{
    if (st) {
        st->MPI_SOURCE = MPI_PROC_NULL;
        st->MPI_TAG = MPI_ANY_TAG;
        st->proust_bytes = 0;
        st->proust_cancelled = 0;
    }
}

/* Error of a completed receive, raised on `comm`. */
static int recv_error(const char *fname, MPI_Comm comm, int rc, const proust_status_t *ps)
{
    if (rc == PROUST_ERR_TRUNCATE)
        return pm_error(comm, MPI_ERR_TRUNCATE,
                        "%s: message of %zu bytes from rank %d truncated to the %zu bytes of the "
                        "receive buffer",
                        fname, ps->size, pm_tag_source(ps->tag), ps->count);
    return pm_error(comm, pm_error_from_proust(rc), "%s: %s", fname, proust_strerror(rc));
}

/* Status and result of a finished blocking receive. */
static __attribute__((noinline)) int recv_done(const char *fname, int rc,
                                               const proust_status_t *ps, MPI_Comm comm,
                                               MPI_Status *status)
{
    if (rc == PROUST_OK) {
        if (status)
            pm_status_ok(status, NULL, true, ps);
        return MPI_SUCCESS;
    }
    if (status) {
        pm_status_from_proust(status, ps);
        status->MPI_ERROR = pm_error_from_proust(rc);
    }
    return recv_error(fname, comm, rc, ps);
}

/* ---- Sends ----------------------------------------------------------------- */
void *pm_pack_copy(const void *buf, MPI_Count count, const struct pm_datatype *t,
                   size_t *bytes)
{
    *bytes = (size_t)count * (size_t)t->size;
    void *tmp = malloc(*bytes ? *bytes : 1);
    if (tmp)
        pm_type_pack(buf, count, t, 0, tmp, *bytes);
    return tmp;
}

/* The communicator of a handle; MPI_COMM_WORLD without a table lookup. */
static inline struct pm_comm *comm_of(MPI_Comm comm)
{
    return PM_LIKELY(comm == MPI_COMM_WORLD) ? pm_comm_world : pm_comm_get(comm);
}

/* Everything but the fast path of a blocking send: argument errors,
 * MPI_PROC_NULL, noncontiguous types (packed first), engine errors. */
static __attribute__((noinline, cold)) int send_error(const char *fname, MPI_Comm comm,
                                                      int dest, int rc)
{
    return pm_error(comm, pm_error_from_proust(rc), "%s to rank %d: %s", fname, dest,
                    proust_strerror(rc));
}

static __attribute__((noinline)) int send_slow(const char *fname, const void *buf,
                                               MPI_Count count,
                                               MPI_Datatype dt, int dest, int tag,
                                               MPI_Comm comm, bool sync)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_send(fname, comm, c, count, dt, dest, tag, &t);
    if (rc != MPI_SUCCESS || dest == MPI_PROC_NULL)
        return rc;
    size_t len = (size_t)count * (size_t)t->size;
    void *tmp = NULL;
    const void *p = (const char *)buf + t->true_lb;
    if (!t->contiguous) {
        tmp = pm_pack_copy(buf, count, t, &len);
        if (!tmp)
            return pm_error(comm, MPI_ERR_NO_MEM, "%s: no memory to pack %zu bytes", fname, len);
        p = tmp;
    }
    proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
    rc = sync ? proust_ssend(pm_session, p, len, pm_comm_peer(c, dest), ptag)
              : proust_send(pm_session, p, len, pm_comm_peer(c, dest), ptag);
    free(tmp);
    return rc == PROUST_OK ? MPI_SUCCESS : send_error(fname, comm, dest, rc);
}

/* Fast path: a predefined contiguous type and valid arguments go straight
 * to the engine; anything else, including an engine error, takes send_slow
 * (which re-checks and reports). */
static inline __attribute__((always_inline)) int
send_blocking(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
              int tag, MPI_Comm comm, bool sync)
{
    struct pm_comm *c = comm_of(comm);
    int64_t esize = pm_type_fast_size(dt);
    if (PM_LIKELY(c && esize >= 0 && pm_count_fast(count) && (unsigned)tag <= PM_TAG_UB &&
                  (unsigned)dest < (unsigned)c->remote->size)) {
        size_t len = (size_t)count * (size_t)esize;
        proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
        int peer = pm_comm_peer(c, dest);
        int rc = sync ? proust_ssend(pm_session, buf, len, peer, ptag)
                      : proust_send(pm_session, buf, len, peer, ptag);
        if (PM_LIKELY(rc == PROUST_OK))
            return MPI_SUCCESS;
        return send_error(fname, comm, dest, rc);
    }
    return send_slow(fname, buf, count, dt, dest, tag, comm, sync);
}

/* The blocking sends, with int counts and their MPI-4 large-count twins. */
#define PM_SEND_API(name, sync)                                                               \
    int PMPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, int tag,          \
                    MPI_Comm comm)                                                           \
    {                                                                                        \
        PM_CHECK_INIT("MPI_" #name);                                                         \
        return send_blocking("MPI_" #name, buf, count, dt, dest, tag, comm, sync);          \
    }                                                                                        \
    PM_WEAK(name)                                                                            \
    int PMPI_##name##_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, \
                        MPI_Comm comm)                                                       \
    {                                                                                        \
        PM_CHECK_INIT("MPI_" #name "_c");                                                    \
        return send_blocking("MPI_" #name "_c", buf, count, dt, dest, tag, comm, sync);     \
    }                                                                                        \
    PM_WEAK(name##_c)

PM_SEND_API(Send, false)
/* Ready mode: the standard lets it behave as a standard send. */
PM_SEND_API(Rsend, false)
PM_SEND_API(Ssend, true)

int pm_isend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
             struct pm_comm *c, int mode, struct pm_request **out)
{
    struct pm_datatype *t = pm_type_get(dt);
    struct pm_request *r = pm_request_new(PM_REQ_SEND, c);
    if (!r)
        return MPI_ERR_NO_MEM;
    if (dest == MPI_PROC_NULL) {
        r->kind = PM_REQ_DONE;
        status_proc_null(&r->status);
        atomic_store_explicit(&r->done, 1, memory_order_release);
        *out = r;
        return MPI_SUCCESS;
    }
    const void *p;
    size_t len = (size_t)count * (size_t)t->size;
    if (t->contiguous) {
        p = (const char *)buf + t->true_lb;
    } else {
        r->tmp = malloc(len ? len : 1);
        if (!r->tmp) {
            pm_request_free(r);
            return MPI_ERR_NO_MEM;
        }
        pm_type_pack(buf, count, t, 0, r->tmp, len);
        p = r->tmp;
    }
    proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
    int rc = mode == 'S' ? proust_issend(pm_session, p, len, pm_comm_peer(c, dest), ptag, &r->preq)
                         : proust_isend(pm_session, p, len, pm_comm_peer(c, dest), ptag, &r->preq);
    if (rc != PROUST_OK) {
        pm_request_free(r);
        return pm_error_from_proust(rc);
    }
    r->status.MPI_SOURCE = dest;
    r->status.MPI_TAG = tag;
    *out = r;
    return MPI_SUCCESS;
}

static int isend_api(const char *fname, const void *buf, MPI_Count count, MPI_Datatype dt,
                     int dest, int tag, MPI_Comm comm, int mode, MPI_Request *request)
{
    struct pm_comm *c = comm_of(comm);
    int64_t esize = pm_type_fast_size(dt);
    /* Fast path: what MPI_Send's takes, with a request. */
    if (PM_LIKELY(c && esize >= 0 && pm_count_fast(count) && (unsigned)tag <= PM_TAG_UB &&
                  (unsigned)dest < (unsigned)c->remote->size && request && mode != 'S')) {
        size_t len = (size_t)count * (size_t)esize;
        int peer = pm_comm_peer(c, dest);
        proust_tag_t ptag = c->tag_pt2pt | c->tag_src | (proust_tag_t)tag;
        /* An eager message that can leave now needs no request of its own;
         * anything else (busy, or an error the request will carry as
         * before) takes the request path. */
        if (PM_LIKELY(proust_try_send(pm_session, buf, len, peer, ptag) == PROUST_OK)) {
            *request = PM_REQ_SENT_HANDLE;
            return MPI_SUCCESS;
        }
        struct pm_request *r = pm_request_new(PM_REQ_SEND, c);
        if (PM_LIKELY(r != NULL)) {
            int rc = proust_isend(pm_session, buf, len, peer, ptag, &r->preq);
            if (PM_LIKELY(rc == PROUST_OK)) {
                r->status.MPI_SOURCE = dest;
                r->status.MPI_TAG = tag;
                *request = r->handle;
                return MPI_SUCCESS;
            }
            pm_request_free(r);
            return send_error(fname, comm, dest, rc);
        }
    }
    c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_send(fname, comm, c, count, dt, dest, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_REQUEST, "%s: request pointer is NULL", fname);
    struct pm_request *r;
    rc = pm_isend(buf, count, dt, dest, tag, c, mode, &r);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "%s to rank %d failed", fname, dest);
    *request = r->handle;
    return MPI_SUCCESS;
}

/* The nonblocking sends, int and large-count. */
#define PM_ISEND_API(name, mode)                                                              \
    int PMPI_##name(const void *buf, int count, MPI_Datatype dt, int dest, int tag,          \
                    MPI_Comm comm, MPI_Request *request)                                     \
    {                                                                                        \
        PM_CHECK_INIT("MPI_" #name);                                                         \
        return isend_api("MPI_" #name, buf, count, dt, dest, tag, comm, mode, request);     \
    }                                                                                        \
    PM_WEAK(name)                                                                            \
    int PMPI_##name##_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, \
                        MPI_Comm comm, MPI_Request *request)                                 \
    {                                                                                        \
        PM_CHECK_INIT("MPI_" #name "_c");                                                    \
        return isend_api("MPI_" #name "_c", buf, count, dt, dest, tag, comm, mode, request); \
    }                                                                                        \
    PM_WEAK(name##_c)

PM_ISEND_API(Isend, 0)
PM_ISEND_API(Irsend, 'R')
PM_ISEND_API(Issend, 'S')

/* ---- Receives -------------------------------------------------------------- */
/* Everything but the fast path of a blocking receive. */
static __attribute__((noinline)) int recv_slow(const char *fname, void *buf, MPI_Count count,
                                               MPI_Datatype dt, int source, int tag,
                                               MPI_Comm comm, MPI_Status *status)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_recv(fname, comm, c, count, dt, source, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (source == MPI_PROC_NULL) {
        status_proc_null(status);
        return MPI_SUCCESS;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    recv_match(c, source, tag, &psrc, &ptag, &pmask);
    size_t len = (size_t)count * (size_t)t->size;
    proust_status_t ps;
    if (t->contiguous) {
        rc = proust_recv(pm_session, (char *)buf + t->true_lb, len, psrc, ptag, pmask, &ps);
    } else {
        void *tmp = malloc(len ? len : 1);
        if (!tmp)
            return pm_error(comm, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", fname, len);
        rc = proust_recv(pm_session, tmp, len, psrc, ptag, pmask, &ps);
        if (rc == PROUST_OK || rc == PROUST_ERR_TRUNCATE)
            pm_type_unpack(tmp, ps.count, buf, count, t, 0);
        free(tmp);
        if (rc == PROUST_OK && pm_recv_partial(t, ps.count)) {
            if (status) {
                pm_status_ok(status, NULL, true, &ps);
                status->MPI_ERROR = MPI_ERR_TYPE;
            }
            return pm_error(comm, MPI_ERR_TYPE,
                            "%s: %zu bytes from rank %d end inside an element of the receive "
                            "type (do the send and receive type signatures differ?)",
                            fname, ps.count, pm_tag_source(ps.tag));
        }
    }
    return recv_done(fname, rc, &ps, comm, status);
}

/* Fast path: a predefined contiguous type and valid arguments go straight
 * to the engine; anything else takes recv_slow. */
static inline __attribute__((always_inline)) int
recv_blocking(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, int source,
              int tag, MPI_Comm comm, MPI_Status *status)
{
    struct pm_comm *c = comm_of(comm);
    int64_t esize = pm_type_fast_size(dt);
    if (PM_UNLIKELY(!c || esize < 0 || !pm_count_fast(count) ||
                    (tag != MPI_ANY_TAG && (unsigned)tag > PM_TAG_UB) ||
                    (source != MPI_ANY_SOURCE && (unsigned)source >= (unsigned)c->remote->size)))
        return recv_slow(fname, buf, count, dt, source, tag, comm, status);
    int psrc;
    proust_tag_t ptag, pmask;
    recv_match(c, source, tag, &psrc, &ptag, &pmask);
    proust_status_t ps;
    int rc = proust_recv(pm_session, buf, (size_t)count * (size_t)esize, psrc, ptag, pmask, &ps);
    if (PM_LIKELY(rc == PROUST_OK)) {
        if (status)
            pm_status_ok(status, NULL, true, &ps);
        return MPI_SUCCESS;
    }
    return recv_done(fname, rc, &ps, comm, status);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Recv");
    return recv_blocking("MPI_Recv", buf, count, dt, source, tag, comm, status);
}
PM_WEAK(Recv)

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Recv_c");
    return recv_blocking("MPI_Recv_c", buf, count, dt, source, tag, comm, status);
}
PM_WEAK(Recv_c)

int pm_irecv(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
             struct pm_comm *c, struct pm_request **out)
{
    struct pm_datatype *t = pm_type_get(dt);
    struct pm_request *r = pm_request_new(PM_REQ_RECV, c);
    if (!r)
        return MPI_ERR_NO_MEM;
    if (source == MPI_PROC_NULL) {
        r->kind = PM_REQ_DONE;
        status_proc_null(&r->status);
        atomic_store_explicit(&r->done, 1, memory_order_release);
        *out = r;
        return MPI_SUCCESS;
    }
    size_t len = (size_t)count * (size_t)t->size;
    void *p;
    if (t->contiguous) {
        p = (char *)buf + t->true_lb;
    } else {
        r->tmp = malloc(len ? len : 1);
        if (!r->tmp) {
            pm_request_free(r);
            return MPI_ERR_NO_MEM;
        }
        r->user_buf = buf;
        r->count = count;
        r->type = t;
        pm_type_retain(t);
        p = r->tmp;
    }
    int psrc;
    proust_tag_t ptag, pmask;
    recv_match(c, source, tag, &psrc, &ptag, &pmask);
    int rc = proust_irecv(pm_session, p, len, psrc, ptag, pmask, &r->preq);
    if (rc != PROUST_OK) {
        pm_request_free(r);
        return pm_error_from_proust(rc);
    }
    *out = r;
    return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int
irecv_api(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
          MPI_Comm comm, MPI_Request *request)
{
    struct pm_comm *c = comm_of(comm);
    int64_t esize = pm_type_fast_size(dt);
    if (PM_LIKELY(c && esize >= 0 && pm_count_fast(count) && request &&
                  (tag == MPI_ANY_TAG || (unsigned)tag <= PM_TAG_UB) &&
                  (source == MPI_ANY_SOURCE || (unsigned)source < (unsigned)c->remote->size))) {
        struct pm_request *r = pm_request_new(PM_REQ_RECV, c);
        if (PM_LIKELY(r != NULL)) {
            int psrc;
            proust_tag_t ptag, pmask;
            recv_match(c, source, tag, &psrc, &ptag, &pmask);
            /* a message already here completes the receive in the call,
             * without an engine request */
            proust_status_t ps;
            int rc = proust_irecv_inline(pm_session, buf, (size_t)count * (size_t)esize, psrc,
                                         ptag, pmask, &r->preq, &ps);
            if (PM_LIKELY(rc == PROUST_OK)) {
                if (!r->preq)
                    pm_req_finish_engine(r, ps.error, &ps);
                *request = r->handle;
                return MPI_SUCCESS;
            }
            pm_request_free(r);
            return pm_error(comm, pm_error_from_proust(rc), "%s from rank %d: %s", fname,
                            source, proust_strerror(rc));
        }
    }
    c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_recv(fname, comm, c, count, dt, source, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!request)
        return pm_error(comm, MPI_ERR_REQUEST, "%s: request pointer is NULL", fname);
    struct pm_request *r;
    rc = pm_irecv(buf, count, dt, source, tag, c, &r);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "%s from rank %d failed", fname, source);
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Irecv");
    return irecv_api("MPI_Irecv", buf, count, dt, source, tag, comm, request);
}
PM_WEAK(Irecv)

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Irecv_c");
    return irecv_api("MPI_Irecv_c", buf, count, dt, source, tag, comm, request);
}
PM_WEAK(Irecv_c)

/* ---- Combined ------------------------------------------------------------- */
static int sendrecv(const char *fname, const void *sendbuf, MPI_Count sendcount,
                    MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                    MPI_Comm comm, MPI_Status *status)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *st, *rt;
    int rc = pm_check_send(fname, comm, c, sendcount, sendtype, dest, sendtag, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = pm_check_recv(fname, comm, c, recvcount, recvtype, source, recvtag, &rt);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pm_request *r;
    rc = pm_irecv(recvbuf, recvcount, recvtype, source, recvtag, c, &r);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "%s: receive from rank %d failed", fname,
                        source);
    rc = send_blocking(fname, sendbuf, sendcount, sendtype, dest, sendtag, comm, false);
    MPI_Request h = r->handle;
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&h);
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        return rc;
    }
    return PMPI_Wait(&h, status);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                  int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source,
                  int recvtag, MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Sendrecv");
    return sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                    recvcount, recvtype, source, recvtag, comm, status);
}
PM_WEAK(Sendrecv)

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Sendrecv_c");
    return sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                    recvcount, recvtype, source, recvtag, comm, status);
}
PM_WEAK(Sendrecv_c)


static int sendrecv_replace(const char *fname, void *buf, MPI_Count count, MPI_Datatype dt,
                            int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Status *status)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t;
    int rc = pm_check_send(fname, comm, c, count, dt, dest, sendtag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = pm_check_recv(fname, comm, c, count, dt, source, recvtag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Send a packed copy so the receive may land in `buf` at once. */
    size_t len;
    void *tmp = pm_pack_copy(buf, count, t, &len);
    if (!tmp)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: no memory for %zu bytes", fname,
                        len);
    struct pm_request *r;
    rc = pm_irecv(buf, count, dt, source, recvtag, c, &r);
    if (rc != MPI_SUCCESS) {
        free(tmp);
        return pm_error(comm, rc, "%s: receive from rank %d failed", fname,
                        source);
    }
    if (dest != MPI_PROC_NULL) {
        rc = proust_send(pm_session, tmp, len, pm_comm_peer(c, dest),
                         c->tag_pt2pt | c->tag_src | (proust_tag_t)sendtag);
        rc = pm_error_from_proust(rc);
    }
    free(tmp);
    MPI_Request h = r->handle;
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&h);
        PMPI_Wait(&h, MPI_STATUS_IGNORE);
        return pm_error(comm, rc, "%s: send to rank %d failed", fname, dest);
    }
    return PMPI_Wait(&h, status);
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Sendrecv_replace");
    return sendrecv_replace("MPI_Sendrecv_replace", buf, count, dt, dest, sendtag, source,
                            recvtag, comm, status);
}
PM_WEAK(Sendrecv_replace)

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int sendtag,
                            int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    PM_CHECK_INIT("MPI_Sendrecv_replace_c");
    return sendrecv_replace("MPI_Sendrecv_replace_c", buf, count, dt, dest, sendtag, source,
                            recvtag, comm, status);
}
PM_WEAK(Sendrecv_replace_c)
