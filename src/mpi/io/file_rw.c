/*
 * file_rw.c — independent data access with explicit offsets and with the
 * individual file pointer, blocking (MPI-4.1 14.4.2, 14.4.3), and seek /
 * get_position. The int and large-count (_c) forms share one body.
 */
#include <sys/stat.h>

#include "io.h"

MPI_Offset pm_file_advance(struct pm_file *f, MPI_Count count, struct pm_datatype *t)
{
    pthread_mutex_lock(&f->lock);
    MPI_Offset at = f->fp;
    f->fp += count * t->size / f->view.esize;
    pthread_mutex_unlock(&f->lock);
    return at;
}

/* A read that stopped at the end of the file leaves the pointer after what
 * it read (unless another access of this rank moved it meanwhile). */
static void pointer_settle(struct pm_file *f, MPI_Offset at, MPI_Count count,
                           const struct pm_datatype *t, const MPI_Status *st)
{
    MPI_Offset wanted = count * t->size, got = st->proust_bytes;
    if (got >= wanted)
        return;
    pthread_mutex_lock(&f->lock);
    if (f->fp == at + wanted / f->view.esize)
        f->fp = at + got / f->view.esize;
    pthread_mutex_unlock(&f->lock);
}

/* Shared checks of the explicit-offset and individual-pointer calls. */
int pm_file_check_positioned(struct pm_file *f, bool explicit, MPI_Offset offset,
                             const char *fname)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return pm_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION,
                             "%s: %s was opened MPI_MODE_SEQUENTIAL: only shared file pointer "
                             "calls may access it", fname, f->path);
    if (explicit && offset < 0)
        return pm_file_error(f, MPI_ERR_ARG, "%s: negative offset %lld", fname,
                             (long long)offset);
    return MPI_SUCCESS;
}

int pm_file_access_start(struct pm_file *f, bool write, enum pm_io_where w, MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype dt, const char *fname)
{
    int rc = pm_file_check_access(f, write, count, dt, buf, fname);
    if (rc == MPI_SUCCESS && (w == PM_AT || w == PM_PTR))
        rc = pm_file_check_positioned(f, w == PM_AT, *offset, fname);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pm_datatype *t = pm_type_get(dt);
    if (w == PM_PTR)
        *offset = pm_file_advance(f, count, t);
    else if (w == PM_SHARED &&
             pm_shared_fetch_add(f, count * t->size / f->view.esize, offset) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_IO, "%s(%s): the shared file pointer cannot be moved",
                             fname, f->path);
    return MPI_SUCCESS;
}

static int independent(MPI_File fh, bool write, bool explicit, MPI_Offset offset, void *buf,
                       MPI_Count count, MPI_Datatype dt, MPI_Status *status, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    int rc = pm_file_access_start(f, write, explicit ? PM_AT : PM_PTR, &offset, buf, count, dt,
                                  fn);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Status tmp;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &tmp : status;
    rc = pm_file_rw(f, write, offset, buf, count, dt, st, fn);
    if (!explicit)
        pointer_settle(f, offset, count, pm_type_get(dt), st);
    return rc;
}

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count,
                      MPI_Datatype datatype, MPI_Status *status)
{
    return independent(fh, false, true, offset, buf, count, datatype, status, "MPI_File_read_at");
}
PM_WEAK(File_read_at)

int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return independent(fh, false, true, offset, buf, count, datatype, status,
                       "MPI_File_read_at_c");
}
PM_WEAK(File_read_at_c)

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return independent(fh, true, true, offset, (void *)buf, count, datatype, status,
                       "MPI_File_write_at");
}
PM_WEAK(File_write_at)

int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return independent(fh, true, true, offset, (void *)buf, count, datatype, status,
                       "MPI_File_write_at_c");
}
PM_WEAK(File_write_at_c)

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return independent(fh, false, false, 0, buf, count, datatype, status, "MPI_File_read");
}
PM_WEAK(File_read)

int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status)
{
    return independent(fh, false, false, 0, buf, count, datatype, status, "MPI_File_read_c");
}
PM_WEAK(File_read_c)

int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    return independent(fh, true, false, 0, (void *)buf, count, datatype, status,
                       "MPI_File_write");
}
PM_WEAK(File_write)

int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return independent(fh, true, false, 0, (void *)buf, count, datatype, status,
                       "MPI_File_write_c");
}
PM_WEAK(File_write_c)

/* The view's etypes before the end of the file. */
MPI_Offset pm_file_end_etypes(struct pm_file *f)
{
    struct stat sb;
    MPI_Offset size = fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : 0;
    return pm_view_bytes_before(&f->view, size) / f->view.fesize;
}

/* Where a seek of (offset, whence) lands, from pointer `cur`: -1 if it is
 * before the start or whence is unknown. */
MPI_Offset pm_file_seek_target(struct pm_file *f, MPI_Offset cur, MPI_Offset offset, int whence)
{
    MPI_Offset to;
    if (whence == MPI_SEEK_SET)
        to = offset;
    else if (whence == MPI_SEEK_CUR)
        to = cur + offset;
    else if (whence == MPI_SEEK_END)
        to = pm_file_end_etypes(f) + offset;
    else
        return -2;
    return to < 0 ? -1 : to;
}

int pm_file_seek_check(struct pm_file *f, MPI_Offset to, int whence, const char *fname)
{
    if (to == -2)
        return pm_file_error(f, MPI_ERR_ARG, "%s: invalid whence %d", fname, whence);
    if (to < 0)
        return pm_file_error(f, MPI_ERR_ARG, "%s: the position would be before the start of "
                             "the view", fname);
    return MPI_SUCCESS;
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    int rc = pm_file_check_positioned(f, false, 0, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&f->lock);
    MPI_Offset to = pm_file_seek_target(f, f->fp, offset, whence);
    if (to >= 0)
        f->fp = to;
    pthread_mutex_unlock(&f->lock);
    return pm_file_seek_check(f, to, whence, fn);
}
PM_WEAK(File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!offset)
        return pm_file_error(f, MPI_ERR_ARG, "%s: offset is NULL", fn);
    int rc = pm_file_check_positioned(f, false, 0, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&f->lock);
    *offset = f->fp;
    pthread_mutex_unlock(&f->lock);
    return MPI_SUCCESS;
}
PM_WEAK(File_get_position)
