/*
 * io_bench.c — MPI-IO benchmarks, written once against MPI so that the same
 * source runs on Proust MPI, MPICH and Open MPI (bench/io/run.sh).
 *
 *   io_bench [-t coll3d,pwrite,strided,strided1,shared|all] [-s SIZE]
 *            [-d DIR] [-r REPS] [-n N] [-R BYTES] [-k K] [-b BYTES]
 *
 * coll3d   a 3-D array of doubles (SIZE bytes in all, -s, K/M/G binary
 *          suffixes, default 64M) block-distributed over the ranks
 *          (MPI_Dims_create over 3 dims; each rank's file view is an
 *          MPI_Type_create_subarray, noncontiguous), written with
 *          MPI_File_write_all + MPI_File_sync, then read with
 *          MPI_File_read_all through a second open, and checked element
 *          by element.
 * pwrite   the baseline: rank 0 alone writes the same SIZE bytes with one
 *          pwrite() + fsync(), then reads them with one pread(); the other
 *          ranks wait off the CPU (MPI_Ibarrier polled every 1 ms).
 * strided  independent strided writes, the data-sieving case: each rank
 *          writes N records (-n, 65536) of R bytes (-R, 64) at record
 *          rank, rank + P, rank + 2P, ... (file view: MPI_Type_vector of N
 *          blocks of R bytes, stride P*R) with ONE MPI_File_write of N*R
 *          bytes (individual file pointer), + MPI_File_sync; then reads
 *          them back the same way and checks them.
 * strided1 the same records and view, one MPI_File_write (MPI_File_read)
 *          call per record: the small-request rate.
 * shared   shared file pointer appends: each rank does K (-k, 2000)
 *          MPI_File_write_shared of a B-byte record (-b, 32) + one
 *          MPI_File_sync; rank 0 then checks that the file holds P*K*B
 *          bytes and every (rank, sequence) record exactly once, each
 *          rank's records in its order.
 *
 * Files go to DIR (-d; default $TMPDIR, else /tmp), one per measurement,
 * and are removed (MPI_MODE_DELETE_ON_CLOSE or MPI_File_delete; a file
 * left behind is reported and unlinked). Open and close are not timed;
 * each timed phase starts after an MPI_Barrier and its time is the
 * slowest rank's (MPI_MAX). MB = 10^6 bytes. Reads follow the writes
 * directly, so they come from the page cache where the file system has
 * one. Every measurement is repeated -r times (3), tests interleaved, one
 * line per repetition on rank 0:
 *
 *   io:coll3d size=<bytes> np=<P> rep=<i> write_MBps=<x> read_MBps=<y> write_s=<s> read_s=<s>
 *   io:pwrite size=<bytes> np=<P> rep=<i> write_MBps=<x> read_MBps=<y> write_s=<s> read_s=<s>
 *   io:strided size=<P*N*R> np=<P> rep=<i> rec=<R> n=<N> calls=<per rank> write_MBps=<x>
 *       read_MBps=<y> write_recps=<records/s> read_recps=<records/s>
 *   io:shared size=<P*K*B> np=<P> rep=<i> rec=<B> k=<K> appends_ps=<x> write_s=<s>
 *
 * A failed check prints "io_bench: VERIFY FAILED ..." and the program
 * exits 1 after the remaining ranks agree; an MPI error aborts (exit 3).
 */
#define _XOPEN_SOURCE 700
#include <mpi.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int g_rank, g_np;
static long long g_jobid;
static const char *g_dir;

#define CK(call)                                                                                   \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != MPI_SUCCESS)                                                                    \
            fail_mpi(rc_, #call, __LINE__);                                                        \
    } while (0)

static void fail_mpi(int rc, const char *what, int line)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(rc, s, &n);
    fprintf(stderr, "io_bench: rank %d: %s failed (line %d): %s\n", g_rank, what, line, s);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void die(const char *msg)
{
    if (g_rank == 0)
        fprintf(stderr, "io_bench: %s\n", msg);
    MPI_Finalize();
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "io_bench: rank %d: out of memory (%zu bytes)\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static uint64_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v;
}

static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Number of failed checks over all ranks (every rank gets it). */
static long long all_errors(long long e)
{
    long long s;
    MPI_Allreduce(&e, &s, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

static void file_path(char *buf, size_t n, const char *test, int rep)
{
    snprintf(buf, n, "%s/io_bench.%lld.%s.%d", g_dir, g_jobid, test, rep);
}

/* After a close with MPI_MODE_DELETE_ON_CLOSE or an MPI_File_delete: the
 * file must be gone; say so and remove it if not. */
static void check_gone(const char *path)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0 && access(path, F_OK) == 0) {
        printf("# warning: %s still exists after its deletion by MPI; unlinked\n", path);
        unlink(path);
    }
}

/* ---------- coll3d ---------- */

/* Split n into 3 factors as equal as possible (greedy on the prime
 * factors, largest first, each to the smallest dimension), non-increasing. */
static void grid_shape(uint64_t n, uint64_t g[3])
{
    uint64_t f[64];
    int nf = 0;
    for (uint64_t p = 2; p * p <= n; p++)
        while (n % p == 0) {
            f[nf++] = p;
            n /= p;
        }
    if (n > 1)
        f[nf++] = n;
    g[0] = g[1] = g[2] = 1;
    for (int i = nf - 1; i >= 0; i--) {
        int s = 0;
        for (int d = 1; d < 3; d++)
            if (g[d] < g[s])
                s = d;
        g[s] *= f[i];
    }
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (g[j] > g[i]) {
                uint64_t t = g[i];
                g[i] = g[j];
                g[j] = t;
            }
}

static double coll_value(uint64_t gidx, int rep)
{
    return (double)gidx + (double)(rep + 1) * 1099511627776.0; /* + (rep+1) * 2^40: exact */
}

static int test_coll3d(uint64_t bytes, int rep, int quiet)
{
    uint64_t n = bytes / 8, g[3];
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(g_np, 3, dims);
    grid_shape(n, g);
    int gsz[3], lsz[3], lst[3], coord[3];
    coord[0] = g_rank / (dims[1] * dims[2]);
    coord[1] = (g_rank / dims[2]) % dims[1];
    coord[2] = g_rank % dims[2];
    for (int d = 0; d < 3; d++) {
        if (g[d] < (uint64_t)dims[d] || g[d] > INT_MAX)
            die("coll3d: size does not split over the ranks (too small or too large)");
        gsz[d] = (int)g[d];
        int q = gsz[d] / dims[d], r = gsz[d] % dims[d];
        lsz[d] = q + (coord[d] < r);
        lst[d] = coord[d] * q + (coord[d] < r ? coord[d] : r);
    }
    uint64_t cnt64 = (uint64_t)lsz[0] * lsz[1] * lsz[2];
    if (cnt64 > INT_MAX)
        die("coll3d: a rank's block is over INT_MAX doubles");
    int cnt = (int)cnt64;
    if (g_rank == 0 && !quiet)
        printf("# coll3d: %llu bytes, array %dx%dx%d doubles over %dx%dx%d ranks, "
               "contiguous runs of %d B in the file\n",
               (unsigned long long)(n * 8), gsz[0], gsz[1], gsz[2], dims[0], dims[1], dims[2],
               (dims[2] > 1 ? lsz[2] : dims[1] > 1 ? lsz[1] * gsz[2] : lsz[0] * gsz[1] * gsz[2]) * 8);
    MPI_Datatype sub;
    CK(MPI_Type_create_subarray(3, gsz, lsz, lst, MPI_ORDER_C, MPI_DOUBLE, &sub));
    CK(MPI_Type_commit(&sub));
    double *buf = xmalloc(cnt64 * sizeof(double));
    size_t k = 0;
    for (int i = 0; i < lsz[0]; i++)
        for (int j = 0; j < lsz[1]; j++) {
            uint64_t row = ((uint64_t)(lst[0] + i) * gsz[1] + (lst[1] + j)) * gsz[2] + lst[2];
            for (int l = 0; l < lsz[2]; l++)
                buf[k++] = coll_value(row + l, rep);
        }
    char path[4096];
    file_path(path, sizeof path, "coll3d", rep);
    MPI_File fh;
    MPI_Status st;
    int got;
    long long err = 0;

    CK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CK(MPI_File_set_view(fh, 0, MPI_DOUBLE, sub, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CK(MPI_File_write_all(fh, buf, cnt, MPI_DOUBLE, &st));
    CK(MPI_File_sync(fh));
    double tw = slowest(MPI_Wtime() - t0);
    CK(MPI_Get_count(&st, MPI_DOUBLE, &got));
    if (got != cnt) {
        fprintf(stderr, "io_bench: rank %d: coll3d write_all wrote %d of %d doubles\n", g_rank, got, cnt);
        err++;
    }
    MPI_Offset fsize;
    CK(MPI_File_get_size(fh, &fsize));
    if ((uint64_t)fsize != n * 8 && g_rank == 0) {
        fprintf(stderr, "io_bench: coll3d file size %lld, expected %llu\n", (long long)fsize,
                (unsigned long long)(n * 8));
        err++;
    }
    CK(MPI_File_close(&fh));

    memset(buf, 0xff, cnt64 * sizeof(double)); /* NaN: nothing left from the write */
    CK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    CK(MPI_File_set_view(fh, 0, MPI_DOUBLE, sub, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    CK(MPI_File_read_all(fh, buf, cnt, MPI_DOUBLE, &st));
    double tr = slowest(MPI_Wtime() - t0);
    CK(MPI_Get_count(&st, MPI_DOUBLE, &got));
    if (got != cnt) {
        fprintf(stderr, "io_bench: rank %d: coll3d read_all read %d of %d doubles\n", g_rank, got, cnt);
        err++;
    }
    CK(MPI_File_close(&fh));
    check_gone(path);

    long long bad = 0;
    k = 0;
    for (int i = 0; i < lsz[0]; i++)
        for (int j = 0; j < lsz[1]; j++) {
            uint64_t row = ((uint64_t)(lst[0] + i) * gsz[1] + (lst[1] + j)) * gsz[2] + lst[2];
            for (int l = 0; l < lsz[2]; l++, k++)
                if (buf[k] != coll_value(row + l, rep) && bad++ == 0)
                    fprintf(stderr,
                            "io_bench: rank %d: coll3d element (%d,%d,%d) = %.17g, expected %.17g\n",
                            g_rank, lst[0] + i, lst[1] + j, lst[2] + l, buf[k],
                            coll_value(row + l, rep));
        }
    if (bad)
        fprintf(stderr, "io_bench: rank %d: coll3d %lld of %d doubles wrong\n", g_rank, bad, cnt);
    err = all_errors(err + bad);
    if (g_rank == 0 && !err)
        printf("io:coll3d size=%llu np=%d rep=%d write_MBps=%.1f read_MBps=%.1f write_s=%.6f "
               "read_s=%.6f\n",
               (unsigned long long)(n * 8), g_np, rep + 1, n * 8 / tw / 1e6, n * 8 / tr / 1e6, tw, tr);
    MPI_Type_free(&sub);
    free(buf);
    return err ? 1 : 0;
}

/* ---------- pwrite baseline ---------- */

/* Wait for rank 0 without spinning on a core (rank 0 works meanwhile). */
static void idle_barrier(void)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (g_rank == 0) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    struct timespec ms = {0, 1000000};
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        nanosleep(&ms, NULL);
    }
}

static int test_pwrite(uint64_t bytes, int rep)
{
    uint64_t n = bytes / 8;
    double tw = 0, tr = 0;
    long long err = 0;
    char path[4096];
    file_path(path, sizeof path, "pwrite", rep);
    MPI_Barrier(MPI_COMM_WORLD);
    if (g_rank == 0) {
        double *buf = xmalloc(n * sizeof(double));
        for (uint64_t i = 0; i < n; i++)
            buf[i] = coll_value(i, rep);
        size_t total = n * sizeof(double);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0) {
            fprintf(stderr, "io_bench: open %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        int calls = 0;
        double t0 = MPI_Wtime();
        for (size_t done = 0; done < total; calls++) { /* one call below 2 GiB */
            ssize_t w = pwrite(fd, (char *)buf + done, total - done, (off_t)done);
            if (w <= 0) {
                fprintf(stderr, "io_bench: pwrite %s: %s\n", path, strerror(errno));
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            done += (size_t)w;
        }
        if (fsync(fd) != 0) {
            fprintf(stderr, "io_bench: fsync %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        tw = MPI_Wtime() - t0;
        close(fd);
        if (calls > 1)
            printf("# pwrite: %d calls (a call writes at most 2 GiB)\n", calls);
        memset(buf, 0xff, total);
        fd = open(path, O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "io_bench: open %s: %s\n", path, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        t0 = MPI_Wtime();
        for (size_t done = 0; done < total;) {
            ssize_t r = pread(fd, (char *)buf + done, total - done, (off_t)done);
            if (r <= 0) {
                fprintf(stderr, "io_bench: pread %s: %s\n", path, r ? strerror(errno) : "short file");
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
            done += (size_t)r;
        }
        tr = MPI_Wtime() - t0;
        close(fd);
        unlink(path);
        for (uint64_t i = 0; i < n; i++)
            if (buf[i] != coll_value(i, rep) && err++ == 0)
                fprintf(stderr, "io_bench: pwrite element %llu = %.17g, expected %.17g\n",
                        (unsigned long long)i, buf[i], coll_value(i, rep));
        free(buf);
    }
    idle_barrier();
    err = all_errors(err);
    if (g_rank == 0 && !err)
        printf("io:pwrite size=%llu np=%d rep=%d write_MBps=%.1f read_MBps=%.1f write_s=%.6f "
               "read_s=%.6f\n",
               (unsigned long long)(n * 8), g_np, rep + 1, n * 8 / tw / 1e6, n * 8 / tr / 1e6, tw, tr);
    return err ? 1 : 0;
}

/* ---------- strided ---------- */

static unsigned char rec_byte(int rank, uint64_t i, int j, int rep)
{
    uint64_t h = ((uint64_t)rank << 40) ^ (i << 8) ^ (uint64_t)rep ^ 0x9e3779b97f4a7c15ULL;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 29;
    return (unsigned char)((h >> (8 * (j % 8))) + (unsigned)(j / 8));
}

static int test_strided(int nrec, int rsz, int one_call, int rep)
{
    const char *name = one_call ? "strided" : "strided1";
    uint64_t mine = (uint64_t)nrec * rsz, total = mine * g_np;
    if (one_call && mine > INT_MAX)
        die("strided: N*R over INT_MAX bytes");
    unsigned char *buf = xmalloc(mine);
    for (int i = 0; i < nrec; i++)
        for (int j = 0; j < rsz; j++)
            buf[(size_t)i * rsz + j] = rec_byte(g_rank, (uint64_t)i, j, rep);
    MPI_Datatype ft;
    CK(MPI_Type_vector(nrec, rsz, g_np * rsz, MPI_BYTE, &ft));
    CK(MPI_Type_commit(&ft));
    char path[4096];
    file_path(path, sizeof path, name, rep);
    MPI_Offset disp = (MPI_Offset)g_rank * rsz;
    MPI_File fh;
    MPI_Status st;
    long long err = 0;
    int got;

    CK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (one_call) {
        CK(MPI_File_write(fh, buf, (int)mine, MPI_BYTE, &st));
        CK(MPI_Get_count(&st, MPI_BYTE, &got));
        if (got != (int)mine && err++ == 0)
            fprintf(stderr, "io_bench: rank %d: strided write wrote %d of %llu bytes\n", g_rank,
                    got, (unsigned long long)mine);
    } else {
        for (int i = 0; i < nrec; i++)
            CK(MPI_File_write(fh, buf + (size_t)i * rsz, rsz, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CK(MPI_File_sync(fh));
    double tw = slowest(MPI_Wtime() - t0);
    MPI_Offset fsize;
    CK(MPI_File_get_size(fh, &fsize));
    /* the last record of the last rank ends the file */
    if ((uint64_t)fsize != total && g_rank == 0 && err++ == 0)
        fprintf(stderr, "io_bench: %s file size %lld, expected %llu\n", name, (long long)fsize,
                (unsigned long long)total);
    CK(MPI_File_close(&fh));

    memset(buf, 0, mine);
    CK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    CK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (one_call) {
        CK(MPI_File_read(fh, buf, (int)mine, MPI_BYTE, &st));
        CK(MPI_Get_count(&st, MPI_BYTE, &got));
        if (got != (int)mine && err++ == 0)
            fprintf(stderr, "io_bench: rank %d: strided read got %d of %llu bytes\n", g_rank, got,
                    (unsigned long long)mine);
    } else {
        for (int i = 0; i < nrec; i++)
            CK(MPI_File_read(fh, buf + (size_t)i * rsz, rsz, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    double tr = slowest(MPI_Wtime() - t0);
    CK(MPI_File_close(&fh));
    check_gone(path);
    long long bad = 0;
    for (int i = 0; i < nrec; i++)
        for (int j = 0; j < rsz; j++)
            if (buf[(size_t)i * rsz + j] != rec_byte(g_rank, (uint64_t)i, j, rep) && bad++ == 0)
                fprintf(stderr, "io_bench: rank %d: %s record %d byte %d = 0x%02x, expected 0x%02x\n",
                        g_rank, name, i, j, buf[(size_t)i * rsz + j],
                        rec_byte(g_rank, (uint64_t)i, j, rep));
    if (bad)
        fprintf(stderr, "io_bench: rank %d: %s %lld of %llu bytes wrong\n", g_rank, name, bad,
                (unsigned long long)mine);
    err = all_errors(err + bad);
    if (g_rank == 0 && !err) {
        double recs = (double)nrec * g_np;
        printf("io:%s size=%llu np=%d rep=%d rec=%d n=%d calls=%d write_MBps=%.2f read_MBps=%.2f "
               "write_recps=%.0f read_recps=%.0f\n",
               name, (unsigned long long)total, g_np, rep + 1, rsz, nrec, one_call ? 1 : nrec,
               total / tw / 1e6, total / tr / 1e6, recs / tw, recs / tr);
    }
    MPI_Type_free(&ft);
    free(buf);
    return err ? 1 : 0;
}

/* ---------- shared ---------- */

static void shared_record(unsigned char *r, int bsz, uint32_t rank, uint32_t seq, int rep)
{
    memcpy(r, &rank, 4);
    memcpy(r + 4, &seq, 4);
    for (int j = 8; j < bsz; j++)
        r[j] = (unsigned char)(rank * 31u + seq * 7u + (unsigned)j + (unsigned)rep);
}

static int test_shared(int k, int bsz, int rep)
{
    uint64_t total = (uint64_t)g_np * k * bsz;
    if (total > INT_MAX)
        die("shared: P*K*B over INT_MAX bytes");
    unsigned char *rec = xmalloc((size_t)bsz);
    char path[4096];
    file_path(path, sizeof path, "shared", rep);
    MPI_File fh;
    long long err = 0;

    CK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < k; i++) {
        shared_record(rec, bsz, (uint32_t)g_rank, (uint32_t)i, rep);
        CK(MPI_File_write_shared(fh, rec, bsz, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    CK(MPI_File_sync(fh));
    double tw = slowest(MPI_Wtime() - t0);
    CK(MPI_File_close(&fh));
    free(rec);

    if (g_rank == 0) {
        /* after the close (Open MPI's sharedfp "individual" merges there) */
        CK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Offset fsize;
        CK(MPI_File_get_size(fh, &fsize));
        if ((uint64_t)fsize != total) {
            fprintf(stderr, "io_bench: shared file size %lld, expected %llu (P*K*B)\n",
                    (long long)fsize, (unsigned long long)total);
            err++;
        }
        unsigned char *all = xmalloc(total), *want = xmalloc((size_t)bsz);
        unsigned char *seen = xmalloc((size_t)g_np * k);
        memset(seen, 0, (size_t)g_np * k);
        int64_t *last = xmalloc(sizeof(int64_t) * g_np);
        for (int r = 0; r < g_np; r++)
            last[r] = -1;
        MPI_Status st;
        int got = 0;
        memset(all, 0, total);
        CK(MPI_File_read_at(fh, 0, all, (int)total, MPI_BYTE, &st));
        CK(MPI_Get_count(&st, MPI_BYTE, &got));
        CK(MPI_File_close(&fh));
        for (uint64_t off = 0; off + (uint64_t)bsz <= (uint64_t)got; off += bsz) {
            uint32_t r, s;
            memcpy(&r, all + off, 4);
            memcpy(&s, all + off + 4, 4);
            const char *why = NULL;
            if (r >= (uint32_t)g_np || s >= (uint32_t)k)
                why = "not a record";
            else if (seen[(size_t)r * k + s]++)
                why = "appears twice";
            else if ((int64_t)s <= last[r])
                why = "out of its rank's order";
            else {
                last[r] = s;
                shared_record(want, bsz, r, s, rep);
                if (memcmp(want, all + off, (size_t)bsz))
                    why = "has wrong contents";
            }
            if (why && err++ < 5)
                fprintf(stderr, "io_bench: shared record at offset %llu (rank %u, seq %u) %s\n",
                        (unsigned long long)off, r, s, why);
        }
        long long missing = 0;
        for (size_t i = 0; i < (size_t)g_np * k; i++)
            missing += !seen[i];
        if (missing) {
            fprintf(stderr, "io_bench: shared: %lld of %llu records missing\n", missing,
                    (unsigned long long)g_np * k);
            err++;
        }
        free(all);
        free(want);
        free(seen);
        free(last);
        CK(MPI_File_delete(path, MPI_INFO_NULL));
    }
    check_gone(path);
    err = all_errors(err);
    if (g_rank == 0 && !err)
        printf("io:shared size=%llu np=%d rep=%d rec=%d k=%d appends_ps=%.0f write_s=%.6f\n",
               (unsigned long long)total, g_np, rep + 1, bsz, k, (double)g_np * k / tw, tw);
    return err ? 1 : 0;
}

/* ---------- main ---------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_np);
    const char *tests = "coll3d,pwrite,strided,strided1,shared";
    uint64_t size = 64ull << 20;
    int reps = 3, nrec = 65536, rsz = 64, kapp = 2000, bsz = 32;
    g_dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v || a[0] != '-' || strlen(a) != 2 || !strchr("tsdrnRkb", a[1])) {
            if (g_rank == 0)
                fprintf(stderr, "usage: io_bench [-t coll3d,pwrite,strided,strided1,shared|all] "
                                "[-s SIZE] [-d DIR] [-r REPS] [-n N] [-R BYTES] [-k K] [-b BYTES]\n");
            MPI_Finalize();
            return 2;
        }
        i++;
        switch (a[1]) {
        case 't': tests = strcmp(v, "all") ? v : tests; break;
        case 's': size = parse_size(v); break;
        case 'd': g_dir = v; break;
        case 'r': reps = atoi(v); break;
        case 'n': nrec = atoi(v); break;
        case 'R': rsz = atoi(v); break;
        case 'k': kapp = atoi(v); break;
        case 'b': bsz = atoi(v); break;
        }
    }
    if (size < 8 || reps < 1 || nrec < 1 || rsz < 1 || kapp < 1 || bsz < 8)
        die("bad option value (size >= 8 B, -b >= 8, the others >= 1)");
    /* the default for files is MPI_ERRORS_RETURN: every call is checked (CK) */
    long long id = (long long)getpid() * 1000 + (long long)(time(NULL) % 1000);
    MPI_Bcast(&id, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    g_jobid = id;
    if (g_rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = 0;
        printf("# io_bench: %s\n# np=%d dir=%s reps=%d tests=%s size=%llu strided: n=%d rec=%d "
               "shared: k=%d rec=%d\n",
               lib, g_np, g_dir, reps, tests, (unsigned long long)size, nrec, rsz, kapp, bsz);
        fflush(stdout);
    }
    int fail = 0;
    for (int rep = 0; rep < reps && !fail; rep++) {
        char list[256];
        snprintf(list, sizeof list, "%s", tests);
        for (char *t = strtok(list, ","); t && !fail; t = strtok(NULL, ",")) {
            if (!strcmp(t, "coll3d"))
                fail = test_coll3d(size, rep, rep > 0);
            else if (!strcmp(t, "pwrite"))
                fail = test_pwrite(size, rep);
            else if (!strcmp(t, "strided"))
                fail = test_strided(nrec, rsz, 1, rep);
            else if (!strcmp(t, "strided1"))
                fail = test_strided(nrec, rsz, 0, rep);
            else if (!strcmp(t, "shared"))
                fail = test_shared(kapp, bsz, rep);
            else
                die("unknown test (coll3d, pwrite, strided, strided1, shared, all)");
            if (fail && g_rank == 0)
                fprintf(stderr, "io_bench: VERIFY FAILED: %s rep %d (details above)\n", t, rep + 1);
            if (g_rank == 0)
                fflush(stdout);
        }
    }
    MPI_Finalize();
    return fail ? 1 : 0;
}
