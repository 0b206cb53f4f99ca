/*
 * io.h — what the files of MPI-IO (src/mpi/io, MPI-4.1 chapter 14) share.
 *
 * A file handle is a struct pm_file in its own handle table (kind
 * PROUST_MPI_KIND_FILE). Every rank holds the file open with its own POSIX
 * descriptor; the ranks coordinate through a private duplicate of the
 * communicator given to MPI_File_open (errors there return, they are raised
 * on the file). Layout of the folder, one job per file:
 *
 *   file_open.c        open, close, delete, amode, group, handle conversions
 *   file_size.c        set_size, get_size, preallocate, sync, atomicity
 *   file_hints.c       info hints (ROMIO's names) and MPI_File_{set,get}_info
 *   file_errhandler.c  file error handlers; pm_file_error
 *   file_view.c        views: set/get_view, the view's map from data to file
 *                      offsets (struct pm_view_iter), extents, byte offsets
 *   file_datarep.c     data representations: native, internal, external32,
 *                      MPI_Register_datarep
 *   file_access.c      independent reads and writes of one rank: contiguous,
 *                      strided (data sieving), locking
 *   file_rw.c          explicit-offset and individual-pointer calls, seek
 *   file_shared.c      the shared file pointer and the ordered calls
 *   file_coll.c        collective reads and writes: two-phase I/O
 *   file_async.c       nonblocking and split-collective calls: each file's
 *                      worker thread, real requests
 */
#ifndef PROUST_MPI_IO_H
#define PROUST_MPI_IO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mpi_impl.h"

extern struct pm_table pm_file_table;

/* Hints (file_hints.c): ROMIO's names, so scripts and libraries that tune
 * ROMIO tune Proust too. */
enum pm_hint_switch { PM_HINT_AUTOMATIC = 0, PM_HINT_ENABLE = 1, PM_HINT_DISABLE = 2 };
struct pm_file_hints {
    MPI_Offset cb_buffer_size;     /* bytes an aggregator handles per round */
    int cb_nodes;                  /* aggregators (0: by the data's size) */
    bool cb_auto;                  /* neither cb_nodes nor cb_config_list given:
                                    * each call picks its aggregators by size */
    int cb_read, cb_write;         /* romio_cb_read / romio_cb_write */
    int ds_read, ds_write;         /* romio_ds_read / romio_ds_write (data sieving) */
    MPI_Offset ind_rd_buffer_size; /* data sieving buffers */
    MPI_Offset ind_wr_buffer_size;
    int striping_factor;           /* passed on where the file system takes them */
    MPI_Offset striping_unit;
    char cb_config_list[256];
};

/* A data representation (file_datarep.c). */
struct pm_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    int kind; /* PM_REP_* */
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra_state;
};
enum { PM_REP_NATIVE, PM_REP_INTERNAL, PM_REP_EXTERNAL32, PM_REP_USER };

/* A view (file_view.c). Data of the view are the filetype's bytes, tiled
 * from disp every extent; positions in that stream are "view bytes". */
struct pm_view {
    MPI_Offset disp;
    struct pm_datatype *etype, *filetype; /* references held */
    MPI_Datatype etype_h, filetype_h;     /* for MPI_File_get_view */
    const struct pm_datarep *rep;
    MPI_Offset esize;                     /* bytes of one etype in memory */
    /* In the file, data may take another size than in memory (a
     * representation whose elements are wider or narrower): rnum / rden
     * file bytes per memory byte, 1 / 1 but for those. Every size below
     * is the file's. */
    MPI_Offset rnum, rden;
    MPI_Offset fesize;                    /* bytes of one etype in the file */
    MPI_Offset tsize, textent;            /* filetype size and extent */
    struct pm_block *blocks;              /* the filetype's blocks in the file */
    size_t nblocks;
    MPI_Offset *cum;                      /* cum[i]: data bytes before block i */
    bool contiguous;                      /* filetype is one block of its extent */
    bool ordered;                         /* a tile's data in increasing file
                                             order, no overlap */
    bool tiles_ordered;                   /* and from tile to tile (else: no
                                             sieving, no two-phase I/O over
                                             several tiles) */
};

/* Walks the file segments of a range of view bytes. */
struct pm_view_iter {
    const struct pm_view *v;
    MPI_Offset tile;   /* filetype instance */
    size_t block;      /* block within it */
    MPI_Offset inside; /* bytes of that block already passed */
    MPI_Offset left;   /* view bytes still to walk */
};

struct pm_shared_fp; /* file_shared.c */
struct pm_file_async; /* file_async.c */

/* Scratch buffers of collective I/O, kept with the file between calls:
 * the file's collectives never run at once (its worker runs them in order,
 * a blocking one drains the worker first), and a buffer reused is one the
 * kernel need not fault in and clear again (file_scratch.c). */
enum { PM_SCRATCH_WIN, PM_SCRATCH_SEND, PM_SCRATCH_RECV, PM_SCRATCH_DATA, PM_SCRATCH_N };
struct pm_scratch {
    void *p;
    size_t n;
};

struct pm_file {
    int handle;
    MPI_Comm comm;       /* private duplicate (errors return) */
    int rank, size;
    int fd;
    int amode;
    char *path;
    MPI_Errhandler errhandler;
    bool atomic;
    struct pm_file_hints hints;
    MPI_Info info;       /* the hints as given and used (MPI_File_get_info) */
    int *aggs, naggs;    /* collective buffering: the aggregators' ranks */
    int nhosts;          /* hosts the ranks are on */
    struct pm_view view;
    pthread_mutex_t lock;      /* file pointer, view changes against workers */
    MPI_Offset fp;             /* individual file pointer, in etypes */
    struct pm_shared_fp *sfp;
    struct pm_file_async *async;
    bool split_active;         /* a split collective has begun and not ended */
    MPI_Request split_req;
    struct pm_scratch scratch[PM_SCRATCH_N];
};

/* The file of a handle, or NULL. */
static inline struct pm_file *pm_file_get(MPI_File h)
{
    return (struct pm_file *)pm_table_get(&pm_file_table, h);
}

/* ---- Errors (file_errhandler.c) ------------------------------------------ */
/* Raise `code` through f's handler (f NULL: MPI_FILE_NULL's, the handler of
 * opens and deletes); returns code. */
int pm_file_error(struct pm_file *f, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Set in a file's I/O thread: pm_file_error returns the code only (the
 * request of the operation carries it to the application). */
extern _Thread_local bool pm_io_quiet;
/* MPI_FILE_NULL's handler (retained for the caller's file). */
MPI_Errhandler pm_file_default_errhandler(void);
/* The MPI error class of an errno from open/read/write/... */
int pm_file_errno_class(int err);

/* Look a handle up or raise MPI_ERR_FILE on MPI_FILE_NULL's handler. */
#define PM_FILE_GET(var, h, fname)                                                       \
    struct pm_file *var = pm_file_get(h);                                                \
    if (!var)                                                                            \
    return pm_file_error(NULL, MPI_ERR_FILE, "%s: invalid file handle %#x", fname,       \
                         (unsigned)(h))

/* ---- Hints (file_hints.c) ------------------------------------------------- */
void pm_hints_default(struct pm_file_hints *h, int nhosts);
/* Take the hints of `info` (MPI_INFO_NULL: none) into f; keeps f->info up to
 * date. Unknown keys are kept for get_info, as the standard allows. At open
 * (no aggregators chosen yet) those of ROMIO_HINTS's file come first. */
int pm_hints_apply(struct pm_file *f, MPI_Info info, const char *fname);
int pm_hints_apply_given(struct pm_file *f, MPI_Info info, const char *fname);

/* ---- Views (file_view.c) --------------------------------------------------- */
/* The default view: displacement 0, etype = filetype = MPI_BYTE, native. */
void pm_view_default(struct pm_view *v);
void pm_view_free(struct pm_view *v);
void pm_view_iter_start(struct pm_view_iter *it, const struct pm_view *v, MPI_Offset pos,
                        MPI_Offset len);
/* Next file segment: false when the range is done. */
bool pm_view_iter_next(struct pm_view_iter *it, MPI_Offset *off, MPI_Offset *len);
/* File bytes of `bytes` bytes of memory data. */
static inline MPI_Offset pm_view_fbytes(const struct pm_view *v, MPI_Offset bytes)
{
    return v->rnum == v->rden ? bytes : bytes / v->rden * v->rnum;
}
/* Memory bytes of `fbytes` bytes of file data (whole elements). */
static inline MPI_Offset pm_view_mbytes(const struct pm_view *v, MPI_Offset fbytes)
{
    return v->rnum == v->rden ? fbytes : fbytes / v->rnum * v->rden;
}
/* Are view bytes [pos, pos + bytes) in increasing file order, without
 * overlap? (what sieving and two-phase I/O need) */
bool pm_view_in_order(const struct pm_view *v, MPI_Offset pos, MPI_Offset bytes);
/* File offset of view byte `pos` (the start of the data at pos). */
MPI_Offset pm_view_file_offset(const struct pm_view *v, MPI_Offset pos);
/* View bytes before file offset `off` (the first datum at or after it). */
MPI_Offset pm_view_bytes_before(const struct pm_view *v, MPI_Offset off);

/* ---- Data representations (file_datarep.c) ------------------------------ */
const struct pm_datarep *pm_datarep_find(const char *name);
/* How `rep` lays type t out in a file: *num / *den file bytes per memory
 * byte (1 / 1: as memory). A representation that changes the elements'
 * size needs t made of one basic type. MPI_SUCCESS or an error class, with
 * a message in why. */
int pm_datarep_scale(const struct pm_datarep *rep, struct pm_datatype *t, MPI_Offset *num,
                     MPI_Offset *den, char *why, size_t whylen);
/* Convert `count` of `dt` from user memory to file bytes (contiguous, count
 * * size bytes) and back. position: elements already converted (user
 * callbacks get it). */
int pm_datarep_to_file(const struct pm_datarep *rep, const void *ubuf, MPI_Count count,
                       MPI_Datatype dt, void *fbuf, MPI_Offset position);
int pm_datarep_from_file(const struct pm_datarep *rep, void *ubuf, MPI_Count count,
                         MPI_Datatype dt, const void *fbuf, MPI_Offset position);

/* ---- Independent access (file_access.c) ----------------------------------- */
/* Move `bytes` view bytes starting at view byte `pos` between the file and
 * the contiguous buffer `data` (already in the file's representation).
 * *done = bytes moved (a read stops at the end of the file). Returns an MPI
 * error class (message through f's handler left to the caller in *why). */
int pm_access_contig(struct pm_file *f, bool write, MPI_Offset pos, void *data,
                     MPI_Offset bytes, MPI_Offset *done, char *why, size_t whylen);
/* The whole operation of one rank: (buf, count, dt) from/to the view at
 * etype offset `offset`, converting representations and packing
 * noncontiguous memory. status filled (may be MPI_STATUS_IGNORE). Raises
 * through f's handler under `fname`. */
int pm_file_rw(struct pm_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
               MPI_Datatype dt, MPI_Status *status, const char *fname);
/* Argument checks common to every data access call. */
int pm_file_check_access(struct pm_file *f, bool write, MPI_Count count, MPI_Datatype dt,
                         const void *buf, const char *fname);
/* Whole-range lock (atomic mode, sieving writes): fcntl byte-range locks. */
int pm_file_lock(struct pm_file *f, bool write, MPI_Offset off, MPI_Offset len);
void pm_file_unlock(struct pm_file *f, MPI_Offset off, MPI_Offset len);
/* pread/pwrite loops over short transfers and EINTR: bytes moved, or -errno. */
ssize_t pm_pread_full(int fd, void *buf, size_t len, off_t off);
ssize_t pm_pwrite_full(int fd, const void *buf, size_t len, off_t off);
/* Set a status for `bytes` bytes of dt moved. */
void pm_file_status(MPI_Status *st, MPI_Offset bytes);

/* ---- Scratch buffers of collective access (file_scratch.c) --------------- */
/* A scratch buffer of n bytes (kept with f up to PM_SCRATCH_KEEP), its
 * release (frees one that was not kept), and the kept ones' end (close). */
void *pm_file_scratch(struct pm_file *f, int slot, size_t n);
void pm_file_scratch_release(struct pm_file *f, int slot, void *p);
void pm_file_scratch_free(struct pm_file *f);

/* ---- Collective access (file_coll.c) ----------------------------------------- */
int pm_file_rw_all(struct pm_file *f, bool write, MPI_Offset offset, void *buf, MPI_Count count,
                   MPI_Datatype dt, MPI_Status *status, const char *fname);

/* ---- Shared file pointer (file_shared.c) ----------------------------------- */
int pm_shared_open(struct pm_file *f);
void pm_shared_close(struct pm_file *f);
/* Atomically add `delta` etypes to the shared pointer; *old = its value before. */
int pm_shared_fetch_add(struct pm_file *f, MPI_Offset delta, MPI_Offset *old);
int pm_shared_set(struct pm_file *f, MPI_Offset value);
int pm_shared_get(struct pm_file *f, MPI_Offset *value);
int pm_file_rw_ordered(struct pm_file *f, bool write, void *buf, MPI_Count count,
                       MPI_Datatype dt, MPI_Status *status, const char *fname);

/* ---- Nonblocking (file_async.c) ----------------------------------------------- */
enum pm_io_op { PM_IO_AT, PM_IO_AT_ALL, PM_IO_ORDERED };
/* Start an operation on f's worker; *request a real request that completes
 * when the data has moved. */
int pm_file_start(struct pm_file *f, enum pm_io_op op, bool write, MPI_Offset offset,
                  void *buf, MPI_Count count, MPI_Datatype dt, MPI_Request *request,
                  const char *fname);
/* Wait for every operation started on f (close, view changes, blocking
 * collectives: one at a time on the private communicator). */
void pm_file_drain(struct pm_file *f);
void pm_file_async_free(struct pm_file *f);

/* ---- Positions (file_rw.c) ------------------------------------------------- */
/* Where a data access starts (MPI-4.1 14.4.1): an explicit offset, the
 * individual pointer, the shared pointer, or the shared pointer in rank
 * order (the ordered calls, which place the ranks collectively). */
enum pm_io_where { PM_AT, PM_PTR, PM_SHARED, PM_ORDERED };
/* The checks of every data access call, and where it starts: *offset in
 * etypes (an explicit one checked; a pointer moved past the access; left
 * alone for PM_ORDERED). Raises on f. */
int pm_file_access_start(struct pm_file *f, bool write, enum pm_io_where w, MPI_Offset *offset,
                         const void *buf, MPI_Count count, MPI_Datatype dt, const char *fname);
/* The individual pointer moved past `count` of t: returns where the access
 * starts (etypes). */
MPI_Offset pm_file_advance(struct pm_file *f, MPI_Count count, struct pm_datatype *t);
/* MPI_ERR_UNSUPPORTED_OPERATION on SEQUENTIAL files; a negative explicit
 * offset is MPI_ERR_ARG. Raised. */
int pm_file_check_positioned(struct pm_file *f, bool explicit, MPI_Offset offset,
                             const char *fname);
MPI_Offset pm_file_end_etypes(struct pm_file *f);
/* Target of a seek from `cur`: -1 before the start, -2 bad whence. */
MPI_Offset pm_file_seek_target(struct pm_file *f, MPI_Offset cur, MPI_Offset offset, int whence);
/* MPI_SUCCESS, or the error of a seek target of -1 / -2 (raised). */
int pm_file_seek_check(struct pm_file *f, MPI_Offset to, int whence, const char *fname);

#endif /* PROUST_MPI_IO_H */
