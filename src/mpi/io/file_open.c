/*
 * file_open.c — MPI_File_open, close and delete; the access mode, the group,
 * handle conversions (MPI-4.1 14.2).
 *
 * Opening is collective: rank 0 creates the file (so MPI_MODE_EXCL means
 * what it says once, not once per rank), then every rank opens it, and the
 * ranks agree on the outcome: if any rank failed, every rank closes what it
 * opened and returns the error, with the path and the reason in the
 * message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io.h"

/* ROMIO accepts "ufs:", "nfs:", "lustre:" ... before a path: the file
 * system type. Every one is POSIX here. */
static const char *strip_fs_prefix(const char *name)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "lustre:", "gpfs:", "pvfs2:",
                                           "xfs:", "panfs:", "testfs:", "daos:"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], n) == 0)
            return name + n;
    }
    return name;
}

static int check_amode(int amode, char *why, size_t len)
{
    int rw = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_WRONLY ? 1 : 0) +
             (amode & MPI_MODE_RDWR ? 1 : 0);
    const int known = MPI_MODE_CREATE | MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR |
                      MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN | MPI_MODE_EXCL |
                      MPI_MODE_APPEND | MPI_MODE_SEQUENTIAL;
    if (amode & ~known)
        snprintf(why, len, "unknown bits %#x in amode", amode & ~known);
    else if (rw != 1)
        snprintf(why, len, "amode %#x must have exactly one of MPI_MODE_RDONLY, "
                 "MPI_MODE_WRONLY and MPI_MODE_RDWR", amode);
    else if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        snprintf(why, len, "MPI_MODE_RDONLY with MPI_MODE_CREATE or MPI_MODE_EXCL");
    else if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        snprintf(why, len, "MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL");
    else
        return MPI_SUCCESS;
    return MPI_ERR_AMODE;
}

/* open(2) of one rank. WRONLY files are opened read-write where allowed:
 * data sieving reads before it writes. */
static int posix_open(const char *path, int amode, bool create, bool excl, mode_t perm,
                      int *err)
{
    int flags = O_CLOEXEC;
    if (create)
        flags |= O_CREAT;
    if (excl)
        flags |= O_EXCL;
    int fd;
    if (amode & MPI_MODE_RDONLY) {
        fd = open(path, flags | O_RDONLY, perm);
    } else if (amode & MPI_MODE_WRONLY) {
        fd = open(path, flags | O_RDWR, perm);
        if (fd < 0 && errno == EACCES)
            fd = open(path, flags | O_WRONLY, perm);
    } else {
        fd = open(path, flags | O_RDWR, perm);
    }
    *err = fd < 0 ? errno : 0;
    if (fd >= 0) {
        struct stat sb;
        if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            close(fd);
            *err = EISDIR;
            return -1;
        }
    }
    return fd;
}

static void file_free(struct pm_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    pm_view_free(&f->view);
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    if (f->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&f->comm);
    if (f->errhandler != MPI_ERRHANDLER_NULL)
        pm_errhandler_release(f->errhandler);
    pthread_mutex_destroy(&f->lock);
    pm_file_scratch_free(f);
    free(f->aggs);
    free(f->path);
    free(f);
}

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    PM_CHECK_INIT(fn);
    struct pm_comm *c = pm_comm_get(comm);
    if (!c)
        return pm_file_error(NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fn,
                             (unsigned)comm);
    if (c->remote != c->local)
        return pm_file_error(NULL, MPI_ERR_COMM, "%s: an intercommunicator cannot open a file",
                             fn);
    if (!fh)
        return pm_file_error(NULL, MPI_ERR_ARG, "%s: fh is NULL", fn);
    *fh = MPI_FILE_NULL;
    if (!filename || !*filename)
        return pm_file_error(NULL, MPI_ERR_BAD_FILE, "%s: no file name", fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_file_error(NULL, MPI_ERR_INFO, "%s: invalid info %#x", fn, (unsigned)info);
    char why[512];
    int rc = check_amode(amode, why, sizeof why);
    if (rc != MPI_SUCCESS)
        return pm_file_error(NULL, rc, "%s(%s): %s", fn, filename, why);

    struct pm_file *f = calloc(1, sizeof *f);
    if (!f)
        return pm_file_error(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    f->fd = -1;
    f->comm = MPI_COMM_NULL;
    f->info = MPI_INFO_NULL;
    pthread_mutex_init(&f->lock, NULL);
    pm_view_default(&f->view);
    f->path = strdup(strip_fs_prefix(filename));
    rc = PMPI_Comm_dup(comm, &f->comm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(f->comm, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS || !f->path) {
        file_free(f);
        return pm_file_error(NULL, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM,
                             "%s(%s): cannot set up the file's communicator", fn, filename);
    }
    PMPI_Comm_rank(f->comm, &f->rank);
    PMPI_Comm_size(f->comm, &f->size);
    f->amode = amode;

    /* Every rank passed the same amode? (ROMIO checks it too) */
    int modes[2] = {amode, -amode}, agreed[2];
    rc = PMPI_Allreduce(modes, agreed, 2, MPI_INT, MPI_MAX, f->comm);
    if (rc == MPI_SUCCESS && (agreed[0] != amode || -agreed[1] != amode)) {
        file_free(f);
        return pm_file_error(NULL, MPI_ERR_NOT_SAME,
                             "%s(%s): the ranks passed different access modes", fn, filename);
    }

    /* Rank 0 creates (with the file_perm hint's permissions, the standard's
     * name), then everybody opens. */
    int err = 0, fd = -1;
    bool create = amode & MPI_MODE_CREATE;
    mode_t perm = 0666;
    char pv[32];
    int has = 0;
    if (info != MPI_INFO_NULL && PMPI_Info_get(info, "file_perm", sizeof pv - 1, pv, &has) ==
                                     MPI_SUCCESS && has) {
        char *end;
        long p = strtol(pv, &end, 8);
        if (*end || p < 0 || p > 07777) {
            file_free(f);
            return pm_file_error(NULL, MPI_ERR_INFO_VALUE, "%s(%s): file_perm \"%s\" is not "
                                 "an octal mode", fn, filename, pv);
        }
        perm = (mode_t)p;
    }
    if (f->rank == 0)
        fd = posix_open(f->path, amode, create, amode & MPI_MODE_EXCL, perm, &err);
    if (f->size > 1) {
        int e0 = err;
        PMPI_Bcast(&e0, 1, MPI_INT, 0, f->comm);
        if (f->rank != 0) {
            if (e0)
                err = e0;
            else
                fd = posix_open(f->path, amode, false, false, perm, &err);
        }
    }
    f->fd = fd;
    /* The ranks agree: the failure of the smallest failing rank is
     * everybody's. */
    int who = err ? f->rank : f->size;
    if (f->size > 1) {
        PMPI_Allreduce(MPI_IN_PLACE, &who, 1, MPI_INT, MPI_MIN, f->comm);
        if (who < f->size)
            PMPI_Bcast(&err, 1, MPI_INT, who, f->comm);
    }
    if (who < f->size) {
        int cls = pm_file_errno_class(err);
        file_free(f);
        return pm_file_error(NULL, cls, "%s: cannot open %s%s (rank %d): %s", fn, filename,
                             create ? " to create it" : "", who, strerror(err));
    }
    f->errhandler = pm_file_default_errhandler();
    rc = pm_hints_apply(f, info, fn);
    if (rc == MPI_SUCCESS)
        rc = pm_shared_open(f);
    if (rc != MPI_SUCCESS) {
        file_free(f);
        return pm_file_error(NULL, rc, "%s(%s): cannot set up the file", fn, filename);
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat sb;
        MPI_Offset end = fstat(f->fd, &sb) == 0 ? (MPI_Offset)sb.st_size : 0;
        /* every rank starts at the same end (rank 0's look) */
        PMPI_Bcast(&end, 1, MPI_OFFSET, 0, f->comm);
        f->fp = end;
        if (f->rank == 0)
            pm_shared_set(f, end);
        PMPI_Barrier(f->comm);
    }
    f->handle = pm_table_add(&pm_file_table, f);
    if (!f->handle) {
        pm_shared_close(f);
        file_free(f);
        return pm_file_error(NULL, MPI_ERR_NO_MEM, "%s: out of handles", fn);
    }
    *fh = f->handle;
    return MPI_SUCCESS;
}
PM_WEAK(File_open)

int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    PM_CHECK_INIT(fn);
    if (!fh)
        return pm_file_error(NULL, MPI_ERR_ARG, "%s: fh is NULL", fn);
    PM_FILE_GET(f, *fh, fn);
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s(%s): a split collective is still active",
                             fn, f->path);
    pm_file_drain(f);
    pm_file_async_free(f);
    int err = 0;
    if (close(f->fd) != 0)
        err = errno;
    f->fd = -1;
    /* everybody has closed before the file goes */
    PMPI_Barrier(f->comm);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->rank == 0)
        (void)unlink(f->path);
    pm_shared_close(f);
    PMPI_Barrier(f->comm);
    pm_table_remove(&pm_file_table, f->handle);
    *fh = MPI_FILE_NULL;
    file_free(f);
    if (err)
        return pm_file_error(NULL, pm_file_errno_class(err), "%s: %s", fn, strerror(err));
    return MPI_SUCCESS;
}
PM_WEAK(File_close)

int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    PM_CHECK_INIT(fn);
    if (!filename || !*filename)
        return pm_file_error(NULL, MPI_ERR_BAD_FILE, "%s: no file name", fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_file_error(NULL, MPI_ERR_INFO, "%s: invalid info %#x", fn, (unsigned)info);
    if (unlink(strip_fs_prefix(filename)) != 0) {
        int e = errno;
        return pm_file_error(NULL, pm_file_errno_class(e), "%s: cannot delete %s: %s", fn,
                             filename, strerror(e));
    }
    return MPI_SUCCESS;
}
PM_WEAK(File_delete)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!amode)
        return pm_file_error(f, MPI_ERR_ARG, "%s: amode is NULL", fn);
    *amode = f->amode;
    return MPI_SUCCESS;
}
PM_WEAK(File_get_amode)

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!group)
        return pm_file_error(f, MPI_ERR_ARG, "%s: group is NULL", fn);
    int rc = PMPI_Comm_group(f->comm, group);
    return rc == MPI_SUCCESS ? rc : pm_file_error(f, rc, "%s: cannot make the group", fn);
}
PM_WEAK(File_get_group)

MPI_Fint PMPI_File_c2f(MPI_File file)
{
    return (MPI_Fint)file;
}
PM_WEAK(File_c2f)

MPI_File PMPI_File_f2c(MPI_Fint file)
{
    return (MPI_File)file;
}
PM_WEAK(File_f2c)
