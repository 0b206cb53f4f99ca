/*
 * file_access.c — one rank's reads and writes through its view (MPI-4.1
 * 14.4): what every independent call ends in, and what collective I/O's
 * aggregators use for their file domains.
 *
 * Contiguous views are one pread/pwrite. Noncontiguous ones walk the view's
 * segments; small segments close together are moved with data sieving
 * (ROMIO's method): a read reads the whole window that holds them (up to
 * ind_rd_buffer_size) and picks them out; a write locks the window
 * (fcntl), reads it, puts the segments in and writes it back, so the bytes
 * between the segments — another rank's data, perhaps being written now —
 * stay as they are. Atomic mode (MPI_File_set_atomicity) locks each
 * access's whole range. A read stops at the end of the file: the count in
 * the status says how much came, and nothing past it is touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

#define PM_IO_CHUNK ((size_t)1 << 30) /* largest single pread/pwrite */
#define PM_SIEVE_SEGS 8192            /* segments held for one sieving window */
#define PM_STAGE_MAX ((MPI_Offset)16 << 20) /* packing buffer of noncontiguous memory */

ssize_t pm_pread_full(int fd, void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < PM_IO_CHUNK ? len - done : PM_IO_CHUNK;
        ssize_t r = pread(fd, (char *)buf + done, n, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break; /* end of file */
        done += (size_t)r;
    }
    return (ssize_t)done;
}

ssize_t pm_pwrite_full(int fd, const void *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < PM_IO_CHUNK ? len - done : PM_IO_CHUNK;
        ssize_t r = pwrite(fd, (const char *)buf + done, n, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -ENOSPC;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

static int lock_cmd(bool wait)
{
#ifdef F_OFD_SETLKW
    return wait ? F_OFD_SETLKW : F_OFD_SETLK;
#else
    return wait ? F_SETLKW : F_SETLK;
#endif
}

int pm_file_lock(struct pm_file *f, bool write, MPI_Offset off, MPI_Offset len)
{
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = write ? F_WRLCK : F_RDLCK;
    l.l_whence = SEEK_SET;
    l.l_start = off;
    l.l_len = len;
    /* a read-only descriptor cannot take a write lock, nor a write-only
     * one a read lock: the lock then only orders what it can */
    if ((f->amode & MPI_MODE_RDONLY) && write)
        l.l_type = F_RDLCK;
    for (;;) {
        if (fcntl(f->fd, lock_cmd(true), &l) == 0)
            return 0;
        if (errno == EINTR)
            continue;
#ifdef F_OFD_SETLKW
        if (errno == EINVAL && fcntl(f->fd, F_SETLKW, &l) == 0)
            return 0; /* no open-file-description locks here */
#endif
        return -errno;
    }
}

void pm_file_unlock(struct pm_file *f, MPI_Offset off, MPI_Offset len)
{
    struct flock l;
    memset(&l, 0, sizeof l);
    l.l_type = F_UNLCK;
    l.l_whence = SEEK_SET;
    l.l_start = off;
    l.l_len = len;
    if (fcntl(f->fd, lock_cmd(false), &l) != 0)
        (void)fcntl(f->fd, F_SETLK, &l);
}

struct seg {
    MPI_Offset off, len, data; /* file offset, bytes, offset in the data */
};

/* Sieve one window of segments (all inside [s[0].off, s[n-1].off+len)).
 * Reads: *done is the data bytes delivered up to the first one the file
 * did not have; *eof set then. */
static int sieve(struct pm_file *f, bool write, char *data, const struct seg *s, int n,
                 char *win, MPI_Offset *done, bool *eof, char *why, size_t whylen)
{
    MPI_Offset lo = s[0].off, hi = s[n - 1].off + s[n - 1].len;
    if (write && pm_file_lock(f, true, lo, hi - lo) < 0) {
        snprintf(why, whylen, "cannot lock bytes %lld-%lld of %s for a sieving write: %s",
                 (long long)lo, (long long)hi, f->path, strerror(errno));
        return MPI_ERR_IO;
    }
    ssize_t got = pm_pread_full(f->fd, win, (size_t)(hi - lo), lo);
    if (got < 0 && write && got == -EBADF) {
        /* a write-only descriptor cannot sieve: segment by segment */
        for (int i = 0; i < n; i++) {
            ssize_t w = pm_pwrite_full(f->fd, data + s[i].data, (size_t)s[i].len, s[i].off);
            if (w < 0) {
                pm_file_unlock(f, lo, hi - lo);
                snprintf(why, whylen, "write to %s at %lld: %s", f->path, (long long)s[i].off,
                         strerror((int)-w));
                return pm_file_errno_class((int)-w);
            }
        }
        pm_file_unlock(f, lo, hi - lo);
        *done += s[n - 1].data + s[n - 1].len - s[0].data;
        return MPI_SUCCESS;
    }
    if (got < 0) {
        if (write)
            pm_file_unlock(f, lo, hi - lo);
        snprintf(why, whylen, "read of %s at %lld: %s", f->path, (long long)lo,
                 strerror((int)-got));
        return pm_file_errno_class((int)-got);
    }
    if (!write) {
        for (int i = 0; i < n; i++) {
            MPI_Offset rel = s[i].off - lo, have = got - rel;
            if (have <= 0) {
                *eof = true;
                return MPI_SUCCESS;
            }
            MPI_Offset k = have < s[i].len ? have : s[i].len;
            memcpy(data + s[i].data, win + rel, (size_t)k);
            *done += k;
            if (k < s[i].len) {
                *eof = true;
                return MPI_SUCCESS;
            }
        }
        return MPI_SUCCESS;
    }
    if (got < hi - lo)
        memset(win + got, 0, (size_t)(hi - lo - got)); /* past the end: a hole */
    for (int i = 0; i < n; i++)
        memcpy(win + (s[i].off - lo), data + s[i].data, (size_t)s[i].len);
    ssize_t w = pm_pwrite_full(f->fd, win, (size_t)(hi - lo), lo);
    pm_file_unlock(f, lo, hi - lo);
    if (w < 0) {
        snprintf(why, whylen, "write to %s at %lld: %s", f->path, (long long)lo,
                 strerror((int)-w));
        return pm_file_errno_class((int)-w);
    }
    *done += s[n - 1].data + s[n - 1].len - s[0].data;
    return MPI_SUCCESS;
}

/* One segment moved directly. */
static int direct(struct pm_file *f, bool write, char *data, const struct seg *s,
                  MPI_Offset *done, bool *eof, char *why, size_t whylen)
{
    ssize_t r = write ? pm_pwrite_full(f->fd, data + s->data, (size_t)s->len, s->off)
                      : pm_pread_full(f->fd, data + s->data, (size_t)s->len, s->off);
    if (r < 0) {
        snprintf(why, whylen, "%s %s at %lld (%lld bytes): %s", write ? "write to" : "read of",
                 f->path, (long long)s->off, (long long)s->len, strerror((int)-r));
        return pm_file_errno_class((int)-r);
    }
    *done += r;
    if (r < s->len)
        *eof = true;
    return MPI_SUCCESS;
}

int pm_access_contig(struct pm_file *f, bool write, MPI_Offset pos, void *data,
                     MPI_Offset bytes, MPI_Offset *done, char *why, size_t whylen)
{
    *done = 0;
    if (bytes <= 0)
        return MPI_SUCCESS;
    const struct pm_view *v = &f->view;
    bool sieving = pm_view_in_order(v, pos, bytes) &&
                   (write ? f->hints.ds_write != PM_HINT_DISABLE
                          : f->hints.ds_read != PM_HINT_DISABLE);
    MPI_Offset bufsize = write ? f->hints.ind_wr_buffer_size : f->hints.ind_rd_buffer_size;
    MPI_Offset lock_lo = 0, lock_len = 0;
    if (f->atomic) {
        /* the whole range at once: nobody sees half of this access */
        if (pm_view_in_order(v, pos, bytes)) {
            lock_lo = pm_view_file_offset(v, pos);
            lock_len = pm_view_file_offset(v, pos + bytes - 1) + 1 - lock_lo;
        } /* else the whole file (length 0: to its end, however it grows) */
        if (pm_file_lock(f, write, lock_lo, lock_len) < 0) {
            snprintf(why, whylen, "cannot lock %s for an atomic access: %s", f->path,
                     strerror(errno));
            return MPI_ERR_IO;
        }
        sieving = false; /* the range is locked already */
    }
    struct pm_view_iter it;
    pm_view_iter_start(&it, v, pos, bytes);
    struct seg *segs = NULL;
    char *win = NULL;
    int n = 0, rc = MPI_SUCCESS;
    bool eof = false;
    MPI_Offset data_at = 0, off, len;
    bool more = pm_view_iter_next(&it, &off, &len);
    while (rc == MPI_SUCCESS && !eof && (more || n > 0)) {
        /* a segment too large to sieve, or no sieving: straight through */
        if (more && n == 0 && (!sieving || len * 2 >= bufsize)) {
            struct seg s = {off, len, data_at};
            rc = direct(f, write, data, &s, done, &eof, why, whylen);
            data_at += len;
            more = pm_view_iter_next(&it, &off, &len);
            continue;
        }
        if (!segs) {
            segs = malloc(PM_SIEVE_SEGS * sizeof *segs);
            win = malloc((size_t)bufsize);
            if (!segs || !win) {
                rc = MPI_ERR_NO_MEM;
                snprintf(why, whylen, "out of memory for data sieving");
                break;
            }
        }
        /* gather the segments that fit the window */
        if (more && n < PM_SIEVE_SEGS && len * 2 < bufsize &&
            (n == 0 || off + len - segs[0].off <= bufsize)) {
            segs[n++] = (struct seg){off, len, data_at};
            data_at += len;
            more = pm_view_iter_next(&it, &off, &len);
            continue;
        }
        if (n == 1) /* one segment alone: no window needed */
            rc = direct(f, write, data, &segs[0], done, &eof, why, whylen);
        else
            rc = sieve(f, write, data, segs, n, win, done, &eof, why, whylen);
        n = 0;
    }
    free(segs);
    free(win);
    if (f->atomic)
        pm_file_unlock(f, lock_lo, lock_len);
    return rc;
}

void pm_file_status(MPI_Status *st, MPI_Offset bytes)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    pm_status_empty(st);
    st->proust_bytes = bytes;
}

int pm_file_check_access(struct pm_file *f, bool write, MPI_Count count, MPI_Datatype dt,
                         const void *buf, const char *fname)
{
    if (write && (f->amode & MPI_MODE_RDONLY))
        return pm_file_error(f, MPI_ERR_READ_ONLY, "%s: %s was opened MPI_MODE_RDONLY", fname,
                             f->path);
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return pm_file_error(f, MPI_ERR_ACCESS, "%s: %s was opened MPI_MODE_WRONLY", fname,
                             f->path);
    if (count < 0)
        return pm_file_error(f, MPI_ERR_COUNT, "%s: negative count %lld", fname,
                             (long long)count);
    struct pm_datatype *t;
    if (pm_type_check(dt, &t) != MPI_SUCCESS)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: invalid or uncommitted datatype %#x", fname,
                             (unsigned)dt);
    if (count > 0 && t->size > 0 && !buf)
        return pm_file_error(f, MPI_ERR_BUFFER, "%s: buf is NULL", fname);
    if ((count * t->size) % f->view.esize)
        return pm_file_error(f, MPI_ERR_TYPE, "%s: %lld bytes of data are not a whole number "
                             "of etypes (%lld bytes)", fname, (long long)(count * t->size),
                             (long long)f->view.esize);
    return MPI_SUCCESS;
}

int pm_file_rw(struct pm_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
               MPI_Datatype dt, MPI_Status *status, const char *fname)
{
    struct pm_datatype *t = pm_type_get(dt);
    const struct pm_view *v = &f->view;
    const struct pm_datarep *rep = v->rep;
    /* positions and byte counts below are the file's */
    MPI_Offset pos = offset * v->fesize, moved = 0;
    char why[512] = "";
    int rc = MPI_SUCCESS;
    bool native = rep->kind == PM_REP_NATIVE || rep->kind == PM_REP_INTERNAL;
    if (native && t->contiguous) {
        rc = pm_access_contig(f, write, pos, (char *)buf + t->true_lb, count * t->size, &moved,
                              why, sizeof why);
    } else if (count > 0 && t->size > 0) {
        /* through a buffer: packed (native) or converted, whole instances
         * of dt at a time */
        MPI_Offset fper = pm_view_fbytes(v, t->size); /* file bytes of one instance */
        MPI_Count per = PM_STAGE_MAX / fper;
        if (per < 1)
            per = 1;
        if (per > count)
            per = count;
        char *stage = malloc((size_t)(per * fper));
        if (!stage) {
            pm_file_status(status, 0);
            return pm_file_error(f, MPI_ERR_NO_MEM, "%s: out of memory for %lld bytes", fname,
                                 (long long)(per * fper));
        }
        for (MPI_Count k = 0; k < count && rc == MPI_SUCCESS;) {
            MPI_Count c = count - k < per ? count - k : per;
            char *at = (char *)buf + k * t->extent;
            MPI_Offset bytes = c * fper, got = 0;
            if (write && pm_datarep_to_file(rep, at, c, dt, stage, k) != MPI_SUCCESS) {
                rc = MPI_ERR_CONVERSION;
                snprintf(why, sizeof why, "converting to data representation \"%s\" failed",
                         rep->name);
                break;
            }
            rc = pm_access_contig(f, write, pos + k * fper, stage, bytes, &got, why,
                                  sizeof why);
            if (!write && rc == MPI_SUCCESS) {
                if (native)
                    pm_type_unpack(stage, (size_t)got, at, c, t, 0);
                else if (got / fper > 0 &&
                         pm_datarep_from_file(rep, at, got / fper, dt, stage, k) != MPI_SUCCESS) {
                    rc = MPI_ERR_CONVERSION;
                    snprintf(why, sizeof why, "converting from data representation \"%s\" "
                             "failed", rep->name);
                }
            }
            moved += got;
            if (got < bytes)
                break; /* end of file */
            k += c;
        }
        free(stage);
    }
    pm_file_status(status, pm_view_mbytes(v, moved));
    if (rc != MPI_SUCCESS)
        return pm_file_error(f, rc, "%s: %s", fname, why);
    return MPI_SUCCESS;
}
