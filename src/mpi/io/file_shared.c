/*
 * file_shared.c — the shared file pointer (MPI-4.1 14.4.4): read/write_shared,
 * seek_shared, get_position_shared, and the ordered collective calls.
 *
 * Where the file's ranks share a host, the pointer is one 64-bit counter
 * in shared memory (an MPI_Win_allocate_shared window of rank 0) moved with
 * an atomic add: no process has to answer for it, so a rank busy computing
 * never delays another's append. Across hosts it is 8 bytes of a hidden
 * file beside the data file (".<name>.shfp.<id>", removed at close), read
 * and written under an fcntl lock: the file system the data already
 * shares serialises it, as ROMIO does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

struct pm_shared_fp {
    MPI_Win win;              /* one host: the window holding the counter */
    _Atomic int64_t *counter; /* its address in this process */
    int fd;                   /* across hosts: the pointer's file */
    char *path;
};

int pm_shared_open(struct pm_file *f)
{
    struct pm_shared_fp *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_ERR_NO_MEM;
    s->win = MPI_WIN_NULL;
    s->fd = -1;
    f->sfp = s;
    if (f->nhosts <= 1) {
        void *base = NULL;
        MPI_Aint size = f->rank == 0 ? (MPI_Aint)sizeof(int64_t) : 0;
        int rc = PMPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, f->comm, &base, &s->win);
        if (rc != MPI_SUCCESS)
            return rc;
        MPI_Aint qsize;
        int unit;
        rc = PMPI_Win_shared_query(s->win, 0, &qsize, &unit, &base);
        if (rc != MPI_SUCCESS)
            return rc;
        s->counter = base;
        if (f->rank == 0)
            atomic_store(s->counter, 0);
        return PMPI_Barrier(f->comm);
    }
    /* a name every rank agrees on: rank 0's */
    static _Atomic unsigned opened;
    char name[64] = "";
    if (f->rank == 0)
        snprintf(name, sizeof name, "%x.%x", (unsigned)getpid(), atomic_fetch_add(&opened, 1));
    PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, f->comm);
    const char *slash = strrchr(f->path, '/');
    size_t dirlen = slash ? (size_t)(slash - f->path + 1) : 0;
    size_t len = strlen(f->path) + 80;
    s->path = malloc(len);
    if (!s->path)
        return MPI_ERR_NO_MEM;
    snprintf(s->path, len, "%.*s.%s.shfp.%s", (int)dirlen, f->path, f->path + dirlen, name);
    int err = 0;
    if (f->rank == 0) {
        s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        int64_t zero = 0;
        if (s->fd < 0 || pm_pwrite_full(s->fd, &zero, sizeof zero, 0) != sizeof zero)
            err = errno ? errno : EIO;
    }
    PMPI_Bcast(&err, 1, MPI_INT, 0, f->comm);
    if (!err && f->rank != 0) {
        s->fd = open(s->path, O_RDWR | O_CLOEXEC);
        if (s->fd < 0)
            err = errno;
    }
    PMPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MAX, f->comm);
    return err ? pm_file_errno_class(err) : MPI_SUCCESS;
}

void pm_shared_close(struct pm_file *f)
{
    struct pm_shared_fp *s = f->sfp;
    if (!s)
        return;
    if (s->win != MPI_WIN_NULL)
        PMPI_Win_free(&s->win);
    if (s->fd >= 0) {
        close(s->fd);
        if (f->rank == 0)
            unlink(s->path);
    }
    free(s->path);
    free(s);
    f->sfp = NULL;
}

/* Across hosts: the counter under a lock; `add` true adds v, else sets. */
static int file_counter(struct pm_file *f, bool add, MPI_Offset v, MPI_Offset *old)
{
    struct pm_shared_fp *s = f->sfp;
    struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(s->fd, F_SETLKW, &l) != 0)
        if (errno != EINTR)
            return MPI_ERR_IO;
    int64_t cur = 0;
    int rc = MPI_SUCCESS;
    if (pm_pread_full(s->fd, &cur, sizeof cur, 0) != sizeof cur)
        rc = MPI_ERR_IO;
    int64_t next = add ? cur + v : v;
    if (rc == MPI_SUCCESS && next != cur &&
        pm_pwrite_full(s->fd, &next, sizeof next, 0) != sizeof next)
        rc = MPI_ERR_IO;
    l.l_type = F_UNLCK;
    (void)fcntl(s->fd, F_SETLK, &l);
    if (old)
        *old = cur;
    return rc;
}

int pm_shared_fetch_add(struct pm_file *f, MPI_Offset delta, MPI_Offset *old)
{
    if (f->sfp->counter) {
        *old = atomic_fetch_add(f->sfp->counter, delta);
        return MPI_SUCCESS;
    }
    return file_counter(f, true, delta, old);
}

int pm_shared_set(struct pm_file *f, MPI_Offset value)
{
    if (f->sfp->counter) {
        atomic_store(f->sfp->counter, value);
        return MPI_SUCCESS;
    }
    return file_counter(f, false, value, NULL);
}

int pm_shared_get(struct pm_file *f, MPI_Offset *value)
{
    if (f->sfp->counter) {
        *value = atomic_load(f->sfp->counter);
        return MPI_SUCCESS;
    }
    return file_counter(f, true, 0, value);
}

static int shared_rw(MPI_File fh, bool write, void *buf, MPI_Count count, MPI_Datatype dt,
                     MPI_Status *status, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    MPI_Offset at = 0;
    int rc = pm_file_access_start(f, write, PM_SHARED, &at, buf, count, dt, fn);
    return rc != MPI_SUCCESS ? rc : pm_file_rw(f, write, at, buf, count, dt, status, fn);
}

int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return shared_rw(fh, false, buf, count, datatype, status, "MPI_File_read_shared");
}
PM_WEAK(File_read_shared)

int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return shared_rw(fh, false, buf, count, datatype, status, "MPI_File_read_shared_c");
}
PM_WEAK(File_read_shared_c)

int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return shared_rw(fh, true, (void *)buf, count, datatype, status, "MPI_File_write_shared");
}
PM_WEAK(File_write_shared)

int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return shared_rw(fh, true, (void *)buf, count, datatype, status, "MPI_File_write_shared_c");
}
PM_WEAK(File_write_shared_c)

/* The ordered calls: rank order, from the shared pointer, collectively.
 * Rank 0 gathers the sizes, moves the pointer once, scatters the offsets. */
int pm_file_rw_ordered(struct pm_file *f, bool write, void *buf, MPI_Count count,
                       MPI_Datatype dt, MPI_Status *status, const char *fname)
{
    struct pm_datatype *t = pm_type_get(dt);
    MPI_Offset mine = count * t->size / f->view.esize, at = 0;
    MPI_Offset *all = NULL;
    int rc = MPI_SUCCESS;
    if (f->rank == 0 && !(all = malloc((size_t)f->size * sizeof *all)))
        rc = MPI_ERR_NO_MEM;
    PMPI_Bcast(&rc, 1, MPI_INT, 0, f->comm);
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s: out of memory", fname);
    PMPI_Gather(&mine, 1, MPI_OFFSET, all, 1, MPI_OFFSET, 0, f->comm);
    if (f->rank == 0) {
        MPI_Offset total = 0;
        for (int r = 0; r < f->size; r++) {
            MPI_Offset n = all[r];
            all[r] = total;
            total += n;
        }
        MPI_Offset base = 0;
        if (pm_shared_fetch_add(f, total, &base) != MPI_SUCCESS)
            rc = MPI_ERR_IO;
        for (int r = 0; r < f->size; r++)
            all[r] += base;
    }
    PMPI_Scatter(all, 1, MPI_OFFSET, &at, 1, MPI_OFFSET, 0, f->comm);
    PMPI_Bcast(&rc, 1, MPI_INT, 0, f->comm);
    free(all);
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s(%s): the shared file pointer cannot be moved", fname,
                             f->path);
    return pm_file_rw_all(f, write, at, buf, count, dt, status, fname);
}

static int ordered(MPI_File fh, bool write, void *buf, MPI_Count count, MPI_Datatype dt,
                   MPI_Status *status, const char *fn)
{
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    MPI_Offset unused = 0;
    int rc = pm_file_access_start(f, write, PM_ORDERED, &unused, buf, count, dt, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (f->split_active)
        return pm_file_error(f, MPI_ERR_OTHER, "%s: a split collective is active", fn);
    pm_file_drain(f);
    return pm_file_rw_ordered(f, write, buf, count, dt, status, fn);
}

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return ordered(fh, false, buf, count, datatype, status, "MPI_File_read_ordered");
}
PM_WEAK(File_read_ordered)

int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return ordered(fh, false, buf, count, datatype, status, "MPI_File_read_ordered_c");
}
PM_WEAK(File_read_ordered_c)

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return ordered(fh, true, (void *)buf, count, datatype, status, "MPI_File_write_ordered");
}
PM_WEAK(File_write_ordered)

int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Status *status)
{
    return ordered(fh, true, (void *)buf, count, datatype, status,
                   "MPI_File_write_ordered_c");
}
PM_WEAK(File_write_ordered_c)

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    /* every rank must pass the same arguments */
    MPI_Offset v[4] = {offset, -offset, whence, -whence};
    PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_OFFSET, MPI_MAX, f->comm);
    if (v[0] != -v[1] || v[2] != -v[3])
        return pm_file_error(f, MPI_ERR_NOT_SAME, "%s: the ranks passed different offsets or "
                             "whence", fn);
    pm_file_drain(f);
    PMPI_Barrier(f->comm); /* the shared accesses before it are done */
    MPI_Offset to = 0;
    if (f->rank == 0) {
        MPI_Offset cur = 0;
        pm_shared_get(f, &cur);
        to = pm_file_seek_target(f, cur, offset, whence);
        if (to >= 0)
            pm_shared_set(f, to);
    }
    PMPI_Bcast(&to, 1, MPI_OFFSET, 0, f->comm);
    return pm_file_seek_check(f, to, whence, fn);
}
PM_WEAK(File_seek_shared)

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!offset)
        return pm_file_error(f, MPI_ERR_ARG, "%s: offset is NULL", fn);
    if (pm_shared_get(f, offset) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_IO, "%s(%s): cannot read the shared file pointer", fn,
                             f->path);
    return MPI_SUCCESS;
}
PM_WEAK(File_get_position_shared)
