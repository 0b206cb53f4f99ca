/*
 * file_size.c — the size of a file, preallocation, sync and the atomicity
 * mode (MPI-4.1 14.2.4-14.2.6, 14.6.1). set_size, preallocate and sync are
 * collective: rank 0 changes the file, everybody returns its outcome.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* Rank 0's errno reaches every rank; returns it. */
static int agree(struct pm_file *f, int err)
{
    PMPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    return err;
}

/* What set_size and preallocate check, and the wait for the writes
 * before them. */
static int resize_begin(struct pm_file *f, MPI_Offset size, const char *fn)
{
    if (size < 0)
        return pm_file_error(f, MPI_ERR_ARG, "%s: negative size %lld", fn, (long long)size);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return pm_file_error(f, MPI_ERR_UNSUPPORTED_OPERATION,
                             "%s: %s was opened MPI_MODE_SEQUENTIAL", fn, f->path);
    if (f->amode & MPI_MODE_RDONLY)
        return pm_file_error(f, MPI_ERR_READ_ONLY, "%s: %s was opened MPI_MODE_RDONLY", fn,
                             f->path);
    pm_file_drain(f);
    PMPI_Barrier(f->comm); /* the writes before it come first */
    return MPI_SUCCESS;
}

/* Rank 0's errno is every rank's outcome. */
static int resize_end(struct pm_file *f, int err, MPI_Offset size, const char *fn)
{
    err = agree(f, err);
    if (err)
        return pm_file_error(f, pm_file_errno_class(err), "%s(%s, %lld): %s", fn, f->path,
                             (long long)size, strerror(err));
    return MPI_SUCCESS;
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    static const char fn[] = "MPI_File_set_size";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    int rc = resize_begin(f, size, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int err = 0;
    if (f->rank == 0 && ftruncate(f->fd, (off_t)size) != 0)
        err = errno;
    return resize_end(f, err, size, fn);
}
PM_WEAK(File_set_size)

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    static const char fn[] = "MPI_File_preallocate";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    int rc = resize_begin(f, size, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    int err = 0;
    struct stat sb;
    if (f->rank == 0 && size > 0 && fstat(f->fd, &sb) == 0 && sb.st_size < size) {
        /* blocks reserved where the file system can; the size at least */
        err = posix_fallocate(f->fd, 0, (off_t)size);
        if (err == EOPNOTSUPP || err == EINVAL)
            err = ftruncate(f->fd, (off_t)size) == 0 ? 0 : errno;
    }
    return resize_end(f, err, size, fn);
}
PM_WEAK(File_preallocate)

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!size)
        return pm_file_error(f, MPI_ERR_ARG, "%s: size is NULL", fn);
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return pm_file_error(f, pm_file_errno_class(errno), "%s(%s): %s", fn, f->path,
                             strerror(errno));
    *size = (MPI_Offset)sb.st_size;
    return MPI_SUCCESS;
}
PM_WEAK(File_get_size)

int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: a split collective is active", fn);
    pm_file_drain(f);
    int err = 0;
    if (!(f->amode & MPI_MODE_RDONLY) && fsync(f->fd) != 0)
        err = errno;
    int any = err;
    PMPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, f->comm);
    if (err || any)
        return pm_file_error(f, MPI_ERR_IO, "%s(%s): %s", fn, f->path,
                             strerror(err ? err : any));
    return MPI_SUCCESS;
}
PM_WEAK(File_sync)

int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    int v[2] = {flag ? 1 : 0, flag ? -1 : 0};
    PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, f->comm);
    if (v[0] != -v[1])
        return pm_file_error(f, MPI_ERR_NOT_SAME, "%s: the ranks passed different flags", fn);
    pm_file_drain(f);
    f->atomic = flag != 0;
    return MPI_SUCCESS;
}
PM_WEAK(File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!flag)
        return pm_file_error(f, MPI_ERR_ARG, "%s: flag is NULL", fn);
    *flag = f->atomic;
    return MPI_SUCCESS;
}
PM_WEAK(File_get_atomicity)
