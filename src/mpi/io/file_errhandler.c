/*
 * file_errhandler.c — error handlers of files (MPI-4.1 14.7). A file's
 * handler is MPI_FILE_NULL's at the time of MPI_File_open; MPI_FILE_NULL's
 * is MPI_ERRORS_RETURN until the application changes it, as the standard
 * says: an I/O error is usually one a program can handle.
 */
#include <errno.h>
#include <stdio.h>

#include "io.h"

static MPI_Errhandler null_errhandler = MPI_ERRORS_RETURN;
_Thread_local bool pm_io_quiet;

MPI_Errhandler pm_file_default_errhandler(void)
{
    MPI_Errhandler h = __atomic_load_n(&null_errhandler, __ATOMIC_ACQUIRE);
    pm_errhandler_retain(h); /* the file's reference, released at close */
    return h;
}

int pm_file_error(struct pm_file *f, int code, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* the code carries the message: under MPI_ERRORS_RETURN (a file's
     * default) MPI_Error_string tells what failed and on which path */
    code = pm_error_detail(code, msg);
    if (pm_io_quiet) /* a file's I/O thread: the request carries the error */
        return code;
    MPI_Errhandler h = f ? __atomic_load_n(&f->errhandler, __ATOMIC_ACQUIRE)
                         : __atomic_load_n(&null_errhandler, __ATOMIC_ACQUIRE);
    return pm_error_handler(h, f ? f->handle : MPI_FILE_NULL, code, "%s", msg);
}

int pm_file_errno_class(int err)
{
    switch (err) {
    case ENOENT:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
        return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM:
        return MPI_ERR_ACCESS;
    case EEXIST:
        return MPI_ERR_FILE_EXISTS;
    case EROFS:
        return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG:
        return MPI_ERR_NO_SPACE;
    case EDQUOT:
        return MPI_ERR_QUOTA;
    case ETXTBSY:
    case EBUSY:
        return MPI_ERR_FILE_IN_USE;
    case EISDIR:
    case EINVAL:
        return MPI_ERR_BAD_FILE;
    case ENOMEM:
        return MPI_ERR_NO_MEM;
    default:
        return MPI_ERR_IO;
    }
}

int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_File_create_errhandler");
    return pm_errhandler_create((MPI_Comm_errhandler_function *)file_errhandler_fn,
                                PM_ERRH_FOR_FILE, errhandler, "MPI_File_create_errhandler");
}
PM_WEAK(File_create_errhandler)

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_File_set_errhandler";
    PM_CHECK_INIT(fn);
    MPI_Errhandler *slot = &null_errhandler;
    struct pm_file *f = NULL;
    if (file != MPI_FILE_NULL) {
        f = pm_file_get(file);
        if (!f)
            return pm_file_error(NULL, MPI_ERR_FILE, "%s: invalid file handle %#x", fn,
                                 (unsigned)file);
        slot = &f->errhandler;
    }
    if (!pm_errhandler_usable(errhandler, PM_ERRH_FOR_FILE))
        return pm_file_error(f, MPI_ERR_ARG, "%s: invalid error handler %#x for a file", fn,
                             (unsigned)errhandler);
    pm_errhandler_swap(slot, errhandler);
    return MPI_SUCCESS;
}
PM_WEAK(File_set_errhandler)

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_get_errhandler";
    PM_CHECK_INIT(fn);
    const MPI_Errhandler *slot = &null_errhandler;
    struct pm_file *f = NULL;
    if (file != MPI_FILE_NULL) {
        f = pm_file_get(file);
        if (!f)
            return pm_file_error(NULL, MPI_ERR_FILE, "%s: invalid file handle %#x", fn,
                                 (unsigned)file);
        slot = &f->errhandler;
    }
    if (!errhandler)
        return pm_file_error(f, MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    pm_errhandler_read(slot, errhandler);
    return MPI_SUCCESS;
}
PM_WEAK(File_get_errhandler)

int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char fn[] = "MPI_File_call_errhandler";
    PM_CHECK_INIT(fn);
    if (fh == MPI_FILE_NULL)
        return pm_errhandler_call_with(__atomic_load_n(&null_errhandler, __ATOMIC_ACQUIRE),
                                       MPI_FILE_NULL, errorcode, fn);
    PM_FILE_GET(f, fh, fn);
    return pm_errhandler_call_with(__atomic_load_n(&f->errhandler, __ATOMIC_ACQUIRE),
                                   f->handle, errorcode, fn);
}
PM_WEAK(File_call_errhandler)
