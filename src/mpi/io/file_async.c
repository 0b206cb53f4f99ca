/*
 * file_async.c — nonblocking data access (MPI_File_i*, MPI-4.1 14.4.2-14.4.5)
 * and the split collectives (_begin / _end, 14.4.5).
 *
 * Each file gets a worker thread at its first nonblocking call. The calls
 * queue their operation (the offset is fixed at the call, as the standard
 * says the pointers move then) and return a real request; the worker does
 * the I/O — pread/pwrite, or a whole collective on the file's private
 * communicator — and completes the request, so the application computes
 * while the data moves, without calling MPI. One worker per file, first in
 * first out: collectives start in the order the ranks called them, which
 * keeps them matched. A blocking collective, a view change or a close
 * waits for the queue to empty first (pm_file_drain).
 *
 * Errors of a queued operation are not raised in the worker: they come
 * back in the request's status and from the call that completes it.
 */
#include <stdlib.h>
#include <string.h>

#include "io.h"

struct io_op {
    struct io_op *next;
    enum pm_io_op op;
    bool write;
    MPI_Offset offset;
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    struct pm_datatype *type;
    struct pm_request *req;
    const char *fname;
};

struct pm_file_async {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    struct io_op *head, *tail;
    bool running; /* the worker holds an operation */
    bool stop;
};

static void *worker(void *arg)
{
    struct pm_file *f = arg;
    struct pm_file_async *a = f->async;
    pm_io_quiet = true;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->head && !a->stop)
            pthread_cond_wait(&a->work, &a->mu);
        if (!a->head)
            break;
        struct io_op *o = a->head;
        a->head = o->next;
        if (!a->head)
            a->tail = NULL;
        a->running = true;
        pthread_mutex_unlock(&a->mu);

        MPI_Status st;
        pm_status_empty(&st);
        int rc;
        if (o->op == PM_IO_AT)
            rc = pm_file_rw(f, o->write, o->offset, o->buf, o->count, o->dt, &st, o->fname);
        else if (o->op == PM_IO_AT_ALL)
            rc = pm_file_rw_all(f, o->write, o->offset, o->buf, o->count, o->dt, &st, o->fname);
        else
            rc = pm_file_rw_ordered(f, o->write, o->buf, o->count, o->dt, &st, o->fname);
        struct pm_request *r = o->req;
        r->status = st;
        r->status.MPI_ERROR = rc;
        pm_type_release(o->type);
        free(o);
        /* MPI_Request_free may have come first (bit 1): then it is ours */
        if (pm_flag_set(&r->done, &r->sleeper, 1) & 2)
            pm_request_free(r);

        pthread_mutex_lock(&a->mu);
        a->running = false;
        if (!a->head)
            pthread_cond_broadcast(&a->idle);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static int async_init(struct pm_file *f)
{
    struct pm_file_async *a = calloc(1, sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->work, NULL);
    pthread_cond_init(&a->idle, NULL);
    f->async = a;
    if (pthread_create(&a->thread, NULL, worker, f) != 0) {
        f->async = NULL;
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->work);
        pthread_cond_destroy(&a->idle);
        free(a);
        return MPI_ERR_OTHER;
    }
    return MPI_SUCCESS;
}

void pm_file_drain(struct pm_file *f)
{
    struct pm_file_async *a = f->async;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    while (a->head || a->running)
        pthread_cond_wait(&a->idle, &a->mu);
    pthread_mutex_unlock(&a->mu);
}

void pm_file_async_free(struct pm_file *f)
{
    struct pm_file_async *a = f->async;
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = true;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->work);
    pthread_cond_destroy(&a->idle);
    free(a);
    f->async = NULL;
}

int pm_file_start(struct pm_file *f, enum pm_io_op op, bool write, MPI_Offset offset, void *buf,
                  MPI_Count count, MPI_Datatype dt, MPI_Request *request, const char *fname)
{
    if (!f->async && async_init(f) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: cannot start the file's I/O thread", fname);
    struct io_op *o = calloc(1, sizeof *o);
    struct pm_request *r = o ? pm_request_new(PM_REQ_ASYNC, pm_comm_get(f->comm)) : NULL;
    if (!r) {
        free(o);
        return pm_file_error(f, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    }
    pm_status_empty(&r->status);
    *o = (struct io_op){.op = op, .write = write, .offset = offset, .buf = buf, .count = count,
                        .dt = dt, .type = pm_type_get(dt), .req = r, .fname = fname};
    pm_type_retain(o->type);
    *request = r->handle;
    struct pm_file_async *a = f->async;
    pthread_mutex_lock(&a->mu);
    if (a->tail)
        a->tail->next = o;
    else
        a->head = o;
    a->tail = o;
    pthread_cond_signal(&a->work);
    pthread_mutex_unlock(&a->mu);
    return MPI_SUCCESS;
}

/* The nonblocking calls: checks as the blocking ones, offsets fixed now. */
static int start(MPI_File fh, bool write, enum pm_io_where w, bool all, MPI_Offset offset,
                 void *buf,
                 MPI_Count count, MPI_Datatype dt, MPI_Request *request, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!request)
        return pm_file_error(f, MPI_ERR_ARG, "%s: request is NULL", fn);
    int rc = pm_file_access_start(f, write, w, &offset, buf, count, dt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return pm_file_start(f, all ? PM_IO_AT_ALL : PM_IO_AT, write, offset, buf, count, dt,
                         request, fn);
}

#define PM_NB(NAME, WRITE, WHERE, ALL, CONST, OFFARG, OFFVAL)                                   \
    int PMPI_File_##NAME(MPI_File fh, OFFARG CONST void *buf, int count, MPI_Datatype datatype,  \
                         MPI_Request *request)                                                 \
    {                                                                                          \
        return start(fh, WRITE, WHERE, ALL, OFFVAL, (void *)buf, count, datatype, request,     \
                     "MPI_File_" #NAME);                                                       \
    }                                                                                          \
    PM_WEAK(File_##NAME)                                                                       \
    int PMPI_File_##NAME##_c(MPI_File fh, OFFARG CONST void *buf, MPI_Count count,             \
                             MPI_Datatype datatype, MPI_Request *request)                      \
    {                                                                                          \
        return start(fh, WRITE, WHERE, ALL, OFFVAL, (void *)buf, count, datatype, request,     \
                     "MPI_File_" #NAME "_c");                                                  \
    }                                                                                          \
    PM_WEAK(File_##NAME##_c)

#define NOARG
#define OFF_ARG MPI_Offset offset,
#define NOCONST

PM_NB(iread_at, false, PM_AT, false, NOCONST, OFF_ARG, offset)
PM_NB(iwrite_at, true, PM_AT, false, const, OFF_ARG, offset)
PM_NB(iread, false, PM_PTR, false, NOCONST, NOARG, 0)
PM_NB(iwrite, true, PM_PTR, false, const, NOARG, 0)
PM_NB(iread_shared, false, PM_SHARED, false, NOCONST, NOARG, 0)
PM_NB(iwrite_shared, true, PM_SHARED, false, const, NOARG, 0)
PM_NB(iread_at_all, false, PM_AT, true, NOCONST, OFF_ARG, offset)
PM_NB(iwrite_at_all, true, PM_AT, true, const, OFF_ARG, offset)
PM_NB(iread_all, false, PM_PTR, true, NOCONST, NOARG, 0)
PM_NB(iwrite_all, true, PM_PTR, true, const, NOARG, 0)

/* ---- Split collectives: a nonblocking collective and its wait ---------- */

static int split_begin(MPI_File fh, bool write, enum pm_io_where w, MPI_Offset offset, void *buf,
                       MPI_Count count, MPI_Datatype dt, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: a split collective is already active on "
                             "this file", fn);
    int rc = pm_file_access_start(f, write, w, &offset, buf, count, dt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = pm_file_start(f, w == PM_ORDERED ? PM_IO_ORDERED : PM_IO_AT_ALL, write, offset, buf,
                       count, dt, &f->split_req, fn);
    if (rc == MPI_SUCCESS)
        f->split_active = true;
    return rc;
}

static int split_end(MPI_File fh, MPI_Status *status, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: no split collective is active on this "
                             "file", fn);
    f->split_active = false;
    MPI_Status st;
    int rc = PMPI_Wait(&f->split_req, &st); /* the request's error, if any */
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s(%s): the collective failed", fn, f->path);
    return MPI_SUCCESS;
}

#define PM_SPLIT(NAME, WRITE, WHERE, CONST, OFFARG, OFFVAL)                                     \
    int PMPI_File_##NAME##_begin(MPI_File fh, OFFARG CONST void *buf, int count,               \
                                 MPI_Datatype datatype)                                        \
    {                                                                                          \
        return split_begin(fh, WRITE, WHERE, OFFVAL, (void *)buf, count, datatype,             \
                           "MPI_File_" #NAME "_begin");                                        \
    }                                                                                          \
    PM_WEAK(File_##NAME##_begin)                                                               \
    int PMPI_File_##NAME##_begin_c(MPI_File fh, OFFARG CONST void *buf, MPI_Count count,       \
                                   MPI_Datatype datatype)                                      \
    {                                                                                          \
        return split_begin(fh, WRITE, WHERE, OFFVAL, (void *)buf, count, datatype,             \
                           "MPI_File_" #NAME "_begin_c");                                      \
    }                                                                                          \
    PM_WEAK(File_##NAME##_begin_c)                                                             \
    int PMPI_File_##NAME##_end(MPI_File fh, CONST void *buf, MPI_Status *status)               \
    {                                                                                          \
        (void)buf; /* the buffer of the _begin call */                                         \
        return split_end(fh, status, "MPI_File_" #NAME "_end");                                \
    }                                                                                          \
    PM_WEAK(File_##NAME##_end)

PM_SPLIT(read_all, false, PM_PTR, NOCONST, NOARG, 0)
PM_SPLIT(write_all, true, PM_PTR, const, NOARG, 0)
PM_SPLIT(read_at_all, false, PM_AT, NOCONST, OFF_ARG, offset)
PM_SPLIT(write_at_all, true, PM_AT, const, OFF_ARG, offset)
PM_SPLIT(read_ordered, false, PM_ORDERED, NOCONST, NOARG, 0)
PM_SPLIT(write_ordered, true, PM_ORDERED, const, NOARG, 0)
