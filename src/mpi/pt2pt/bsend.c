/*
 * bsend.c — buffered mode's calls: MPI_Bsend, MPI_Ibsend, and attaching,
 * detaching and flushing the buffers they use (MPI-4.1 §3.6): the process's
 * (MPI_Buffer_*), a communicator's (MPI_Comm_*_buffer); a session's are in
 * session.c. The buffers themselves are in bsend_buffer.c.
 */
#include <stdio.h>

#include "comm.h"
#include "p2p.h"

int pm_bbuf_attach_call(struct pm_bbuf *b, void *buffer, MPI_Count size, char *why)
{
    bool automatic = buffer == MPI_BUFFER_AUTOMATIC;
    if (!automatic && size < 0) {
        snprintf(why, PM_WHY_LEN, "negative size %lld", (long long)size);
        return MPI_ERR_ARG;
    }
    if (!automatic && !buffer && size > 0) {
        snprintf(why, PM_WHY_LEN, "NULL buffer of %lld bytes", (long long)size);
        return MPI_ERR_BUFFER;
    }
    if (!b) {
        snprintf(why, PM_WHY_LEN, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    if (pm_bbuf_attach(b, buffer, automatic ? 0 : (size_t)size) != MPI_SUCCESS) {
        snprintf(why, PM_WHY_LEN, "a buffer is already attached; detach it first");
        return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int pm_bbuf_detach_call(struct pm_bbuf *b, void *buffer_addr, bool has_size, size_t *size,
                        char *why)
{
    if (!buffer_addr || !has_size) {
        snprintf(why, PM_WHY_LEN, "%s is NULL", buffer_addr ? "size" : "buffer_addr");
        return MPI_ERR_ARG;
    }
    void *base = NULL;
    if (pm_bbuf_detach(b, &base, size) != MPI_SUCCESS) {
        snprintf(why, PM_WHY_LEN, "another thread is detaching the buffer");
        return MPI_ERR_BUFFER;
    }
    *(void **)buffer_addr = base;
    return MPI_SUCCESS;
}

int pm_bbuf_iflush_call(struct pm_bbuf *b, struct pm_comm *c, MPI_Request *request, char *why)
{
    if (!request) {
        snprintf(why, PM_WHY_LEN, "request is NULL");
        return MPI_ERR_ARG;
    }
    *request = MPI_REQUEST_NULL;
    if (pm_bbuf_iflush(b, c, request) != MPI_SUCCESS) {
        snprintf(why, PM_WHY_LEN, "out of memory");
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* Raise what a pm_bbuf_*_call refused on `comm`. */
#define RAISE(comm, fn, rc, why)                                                            \
    ((rc) == MPI_SUCCESS ? MPI_SUCCESS : pm_error(comm, rc, "%s: %s", fn, why))

static int attach(struct pm_bbuf *b, MPI_Comm comm, const char *fn, void *buffer,
                  MPI_Count size)
{
    char why[PM_WHY_LEN];
    int rc = pm_bbuf_attach_call(b, buffer, size, why);
    return RAISE(comm, fn, rc, why);
}

/* Detach into the caller's int or MPI_Count size (one of them not NULL:
 * the other's binding). */
static int detach(struct pm_bbuf *b, MPI_Comm comm, const char *fn, void *buffer_addr,
                  int *size, MPI_Count *size_c)
{
    char why[PM_WHY_LEN];
    size_t n = 0;
    int rc = pm_bbuf_detach_call(b, buffer_addr, size || size_c, &n, why);
    if (rc != MPI_SUCCESS)
        return RAISE(comm, fn, rc, why);
    if (size) /* attached with a _c call: maybe too big for an int */
        *size = pm_int_or_undefined((MPI_Count)n);
    else
        *size_c = (MPI_Count)n;
    return MPI_SUCCESS;
}

static int iflush(struct pm_bbuf *b, struct pm_comm *c, const char *fn, MPI_Request *request)
{
    char why[PM_WHY_LEN];
    int rc = pm_bbuf_iflush_call(b, c, request, why);
    return RAISE(c->handle, fn, rc, why);
}

/* ---- The process's buffer ------------------------------------------------ */
int PMPI_Buffer_attach(void *buffer, int size)
{
    PM_CHECK_INIT("MPI_Buffer_attach");
    return attach(&pm_bbuf_process, MPI_COMM_WORLD, "MPI_Buffer_attach", buffer, size);
}
PM_WEAK(Buffer_attach)

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    PM_CHECK_INIT("MPI_Buffer_attach_c");
    return attach(&pm_bbuf_process, MPI_COMM_WORLD, "MPI_Buffer_attach_c", buffer, size);
}
PM_WEAK(Buffer_attach_c)

/* `buffer_addr` is really a void ** (the standard's C binding says void *). */
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    PM_CHECK_INIT("MPI_Buffer_detach");
    return detach(&pm_bbuf_process, MPI_COMM_WORLD, "MPI_Buffer_detach", buffer_addr, size, NULL);
}
PM_WEAK(Buffer_detach)

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    PM_CHECK_INIT("MPI_Buffer_detach_c");
    return detach(&pm_bbuf_process, MPI_COMM_WORLD, "MPI_Buffer_detach_c", buffer_addr, NULL, size);
}
PM_WEAK(Buffer_detach_c)

int PMPI_Buffer_flush(void)
{
    PM_CHECK_INIT("MPI_Buffer_flush");
    pm_bbuf_flush(&pm_bbuf_process);
    return MPI_SUCCESS;
}
PM_WEAK(Buffer_flush)

int PMPI_Buffer_iflush(MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Buffer_iflush");
    return iflush(&pm_bbuf_process, pm_comm_world, "MPI_Buffer_iflush", request);
}
PM_WEAK(Buffer_iflush)

/* ---- A communicator's buffer ------------------------------------------- */
#define GET_COMM(var, h, fn)                                                                \
    PM_CHECK_INIT(fn);                                                                      \
    struct pm_comm *var = pm_comm_get(h);                                                  \
    if (!var)                                                                               \
    return pm_comm_invalid(h, fn)

int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    GET_COMM(c, comm, "MPI_Comm_attach_buffer");
    return attach(pm_bbuf_get(&c->bbuf), comm, "MPI_Comm_attach_buffer", buffer, size);
}
PM_WEAK(Comm_attach_buffer)

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    GET_COMM(c, comm, "MPI_Comm_attach_buffer_c");
    return attach(pm_bbuf_get(&c->bbuf), comm, "MPI_Comm_attach_buffer_c", buffer, size);
}
PM_WEAK(Comm_attach_buffer_c)

int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    GET_COMM(c, comm, "MPI_Comm_detach_buffer");
    return detach(atomic_load(&c->bbuf), comm, "MPI_Comm_detach_buffer", buffer_addr, size, NULL);
}
PM_WEAK(Comm_detach_buffer)

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    GET_COMM(c, comm, "MPI_Comm_detach_buffer_c");
    return detach(atomic_load(&c->bbuf), comm, "MPI_Comm_detach_buffer_c", buffer_addr, NULL, size);
}
PM_WEAK(Comm_detach_buffer_c)

int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    GET_COMM(c, comm, "MPI_Comm_flush_buffer");
    pm_bbuf_flush(atomic_load(&c->bbuf));
    return MPI_SUCCESS;
}
PM_WEAK(Comm_flush_buffer)

int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    GET_COMM(c, comm, "MPI_Comm_iflush_buffer");
    return iflush(atomic_load(&c->bbuf), c, "MPI_Comm_iflush_buffer", request);
}
PM_WEAK(Comm_iflush_buffer)

/* ---- Buffered sends ------------------------------------------------------ */
static int bsend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype datatype,
                 int dest, int tag, MPI_Comm comm, MPI_Request *request, bool nonblocking)
{
    struct pm_comm *c = pm_comm_get(comm);
    struct pm_datatype *t = NULL;
    int rc = pm_check_send(fn, comm, c, count, datatype, dest, tag, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!nonblocking)
        return pm_bsend_start(fn, comm, c, buf, count, t, dest, tag, NULL);
    if (!request)
        return pm_error(comm, MPI_ERR_ARG, "%s: request is NULL", fn);
    struct pm_request *r = NULL;
    rc = pm_bsend_start(fn, comm, c, buf, count, t, dest, tag, &r);
    if (rc != MPI_SUCCESS)
        return rc;
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Bsend");
    return bsend("MPI_Bsend", buf, count, datatype, dest, tag, comm, NULL, false);
}
PM_WEAK(Bsend)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    PM_CHECK_INIT("MPI_Bsend_c");
    return bsend("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, NULL, false);
}
PM_WEAK(Bsend_c)

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Ibsend");
    return bsend("MPI_Ibsend", buf, count, datatype, dest, tag, comm, request, true);
}
PM_WEAK(Ibsend)

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request *request)
{
    PM_CHECK_INIT("MPI_Ibsend_c");
    return bsend("MPI_Ibsend_c", buf, count, datatype, dest, tag, comm, request, true);
}
PM_WEAK(Ibsend_c)
