/*
 * io_basic.c — MPI-IO basics (MPI-4.1 §14.2, §14.4): opening, closing,
 * deleting and sizing files, and data access at explicit offsets and with
 * the individual file pointer under the default view.
 *
 * Checks:
 *  - every meaningful access mode: CREATE|WRONLY, RDONLY, RDWR (MPI_File_get_amode
 *    returns what was given), CREATE|EXCL on an existing file fails with
 *    MPI_ERR_FILE_EXISTS and on a new one succeeds, DELETE_ON_CLOSE removes
 *    the file at close, APPEND starts the individual and the shared file
 *    pointers at the end of file, UNIQUE_OPEN is accepted, SEQUENTIAL with
 *    shared-pointer access only;
 *  - MPI_File_close (the handle becomes MPI_FILE_NULL), MPI_File_delete;
 *  - MPI_File_set_size (grow, shrink; MPI_File_get_size agrees, the data
 *    below the new size is kept), MPI_File_preallocate (the size grows to n,
 *    never shrinks), MPI_File_sync (sync-barrier-sync makes one rank's
 *    writes visible to the others);
 *  - MPI_File_get_group (MPI_IDENT to the communicator's group),
 *    MPI_File_get_info/set_info (a new info object each time, freed by the
 *    caller; the info given at open may be freed at once);
 *  - MPI_File_write_at/read_at with 0 B, 1 B, odd sizes (7, 4097, 1 MiB+3)
 *    and a large piece (16 MiB per rank in all at 1-2 ranks, 6 MiB at 3-4,
 *    2 MiB beyond), from and into unaligned buffers (buf+1) with guard bytes
 *    around, MPI_BYTE and MPI_INT, the status (MPI_Get_count,
 *    MPI_Get_elements); every rank also reads its neighbour's region;
 *  - MPI_File_write/read with the individual pointer, MPI_File_seek with
 *    MPI_SEEK_SET/CUR/END, MPI_File_get_position, MPI_File_get_byte_offset;
 *  - reading past the end of file: a short count, the bytes beyond left
 *    alone; at or beyond the end: count 0;
 *  - MPI_File_read_at_c/write_at_c and MPI_File_get_type_extent_c (MPI-4
 *    large counts), MPI_File_get_type_extent (native: the type's extent),
 *    MPI_File_c2f/MPI_File_f2c round trip.
 *
 * Contents are the pattern of (writer rank, step, file offset) (io_util.h);
 * a failure names the first wrong file offset.
 */
#include "io_util.h"

#define GUARD 0xEE

static MPI_File open_file(const char *name, int amode, MPI_Comm comm, MPI_Info info)
{
    char p[2048];
    MPI_File fh = MPI_FILE_NULL;
    IO_CALL(MPI_File_open(comm, io_path(p, sizeof p, name), amode, info, &fh));
    IO_CHECK(fh != MPI_FILE_NULL, "MPI_File_open(%s) gave MPI_FILE_NULL", name);
    return fh;
}

static void close_file(MPI_File *fh)
{
    IO_CALL(MPI_File_close(fh));
    IO_CHECK(*fh == MPI_FILE_NULL, "MPI_File_close did not set the handle to MPI_FILE_NULL");
}

/* Close, then wait for every rank's close: what they wrote is then
 * visible to an open that follows. */
static void close_sync(MPI_File *fh)
{
    close_file(fh);
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
}

/* sync-barrier-sync: writes of every rank visible to every rank */
static void sync_all(MPI_File fh)
{
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
}

static void expect_amode(MPI_File fh, int want, const char *what)
{
    int got = -1;
    IO_CALL(MPI_File_get_amode(fh, &got));
    IO_CHECK(got == want, "%s: MPI_File_get_amode 0x%x, expected 0x%x", what, got, want);
}

static void expect_size(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset got = -1;
    IO_CALL(MPI_File_get_size(fh, &got));
    IO_CHECK(got == want, "%s: MPI_File_get_size %lld, expected %lld", what, (long long)got,
             (long long)want);
}

/* Write n pattern bytes (seed, off) at off; check the status. */
static void write_pattern_at(MPI_File fh, MPI_Offset off, size_t n, uint64_t seed)
{
    unsigned char *b = io_malloc(n + 1);
    io_fill(b + 1, n, seed, (uint64_t)off);
    MPI_Status st;
    IO_CALL(MPI_File_write_at(fh, off, b + 1, (int)n, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)n, (int)n, "write_at");
    free(b);
}

/* Read n bytes at off and check them against the pattern (seed, off). */
static void read_check_at(MPI_File fh, MPI_Offset off, size_t n, uint64_t seed, const char *what)
{
    unsigned char *b = io_malloc(n + 9);
    memset(b, GUARD, n + 9);
    MPI_Status st;
    IO_CALL(MPI_File_read_at(fh, off, b + 1, (int)n, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)n, (int)n, what);
    IO_VERIFY(b + 1, n, seed, off, "%s", what);
    IO_GUARD(b, 1, GUARD, "%s: byte before the buffer", what);
    IO_GUARD(b + 1 + n, 8, GUARD, "%s: bytes after the buffer", what);
    free(b);
}

/* ---- access modes ------------------------------------------------------ */

#define BLK 4099

static void amodes(void)
{
    char p[2048];
    MPI_File fh;
    int next = (io_rank + 1) % io_size;

    /* CREATE|WRONLY: every rank writes its block. */
    fh = open_file("amode.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, MPI_MODE_CREATE | MPI_MODE_WRONLY, "CREATE|WRONLY");
    write_pattern_at(fh, (MPI_Offset)io_rank * BLK, BLK, io_seed(io_rank, 1));
    close_sync(&fh);

    /* RDONLY: every rank reads its neighbour's block. */
    fh = open_file("amode.dat", MPI_MODE_RDONLY, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, MPI_MODE_RDONLY, "RDONLY");
    expect_size(fh, (MPI_Offset)io_size * BLK, "RDONLY");
    read_check_at(fh, (MPI_Offset)next * BLK, BLK, io_seed(next, 1), "RDONLY, neighbour's block");
    close_sync(&fh);

    /* RDWR: overwrite the second half of one's block, read the neighbour's
     * after sync-barrier-sync. */
    fh = open_file("amode.dat", MPI_MODE_RDWR, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, MPI_MODE_RDWR, "RDWR");
    write_pattern_at(fh, (MPI_Offset)io_rank * BLK + BLK / 2, BLK - BLK / 2, io_seed(io_rank, 2));
    read_check_at(fh, (MPI_Offset)io_rank * BLK, BLK / 2, io_seed(io_rank, 1),
                  "RDWR, own first half");
    sync_all(fh);
    read_check_at(fh, (MPI_Offset)next * BLK, BLK / 2, io_seed(next, 1),
                  "RDWR, neighbour's first half");
    read_check_at(fh, (MPI_Offset)next * BLK + BLK / 2, BLK - BLK / 2, io_seed(next, 2),
                  "RDWR, neighbour's rewritten half");
    close_sync(&fh);

    /* CREATE|EXCL on an existing file: MPI_ERR_FILE_EXISTS, file untouched. */
    fh = MPI_FILE_NULL;
    IO_EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, "amode.dat"),
                                  MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                                  MPI_INFO_NULL, &fh),
                    MPI_ERR_FILE_EXISTS);
    fh = open_file("amode.dat", MPI_MODE_RDONLY, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_size(fh, (MPI_Offset)io_size * BLK, "after the failed EXCL open");
    read_check_at(fh, (MPI_Offset)io_rank * BLK, BLK / 2, io_seed(io_rank, 1),
                  "after the failed EXCL open");
    close_file(&fh);
    /* CREATE|EXCL on a new file succeeds. */
    fh = open_file("excl_new.dat", MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                   MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, "CREATE|EXCL|RDWR");
    expect_size(fh, 0, "new EXCL file");
    close_file(&fh);

    /* MPI_File_delete: the file is gone. */
    io_path(p, sizeof p, "excl_new.dat");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    if (io_rank == 0)
        IO_CALL(MPI_File_delete(p, MPI_INFO_NULL));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CHECK(!io_exists(p), "%s exists after MPI_File_delete", p);
    IO_EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                    MPI_ERR_NO_SUCH_FILE);

    /* DELETE_ON_CLOSE: usable while open, gone after the close. */
    int amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE;
    fh = open_file("doc.dat", amode, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, amode, "DELETE_ON_CLOSE");
    write_pattern_at(fh, (MPI_Offset)io_rank * 100, 100, io_seed(io_rank, 3));
    sync_all(fh);
    read_check_at(fh, (MPI_Offset)next * 100, 100, io_seed(next, 3), "DELETE_ON_CLOSE file");
    IO_CHECK(io_exists(io_path(p, sizeof p, "doc.dat")), "DELETE_ON_CLOSE file gone before close");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the close */
    close_file(&fh);
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CHECK(!io_exists(p), "%s still exists after closing a DELETE_ON_CLOSE file", p);
    IO_EXPECT_CLASS(MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                    MPI_ERR_NO_SUCH_FILE);

    /* APPEND: both pointers start at the end of file. */
    const MPI_Offset S = 1003;
    if (io_rank == 0) {
        MPI_File f0 = open_file("append.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_COMM_SELF,
                                MPI_INFO_NULL);
        write_pattern_at(f0, 0, (size_t)S, io_seed(0, 4));
        close_file(&f0);
    }
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    fh = open_file("append.dat", MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, MPI_MODE_RDWR | MPI_MODE_APPEND, "RDWR|APPEND");
    MPI_Offset pos = -1, sh = -1, byte = -1;
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == S, "APPEND: individual pointer at %lld, expected the end %lld",
             (long long)pos, (long long)S);
    IO_CALL(MPI_File_get_byte_offset(fh, pos, &byte));
    IO_CHECK(byte == S, "APPEND: byte offset %lld, expected %lld", (long long)byte, (long long)S);
    IO_CALL(MPI_File_get_position_shared(fh, &sh));
    IO_CHECK(sh == S, "APPEND: shared pointer at %lld, expected the end %lld", (long long)sh,
             (long long)S);
    /* every rank has looked before anyone moves the shared pointer */
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    /* write_ordered from the shared pointer: records after the old end */
    const int M = 77;
    unsigned char rec[77];
    io_fill(rec, M, io_seed(io_rank, 5), (uint64_t)(S + (MPI_Offset)io_rank * M));
    MPI_Status st;
    IO_CALL(MPI_File_write_ordered(fh, rec, M, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, M, M, "APPEND write_ordered");
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == S, "APPEND: a shared-pointer write moved the individual pointer to %lld",
             (long long)pos);
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank's part of write_ordered done */
    IO_CALL(MPI_File_get_position_shared(fh, &sh));
    IO_CHECK(sh == S + (MPI_Offset)io_size * M, "APPEND: shared pointer %lld after write_ordered, "
             "expected %lld", (long long)sh, (long long)(S + (MPI_Offset)io_size * M));
    sync_all(fh);
    expect_size(fh, S + (MPI_Offset)io_size * M, "APPEND after write_ordered");
    read_check_at(fh, 0, (size_t)S, io_seed(0, 4), "APPEND: the old contents");
    for (int r = 0; r < io_size; r++)
        read_check_at(fh, S + (MPI_Offset)r * M, (size_t)M, io_seed(r, 5), "APPEND: the records");
    close_file(&fh);

    /* UNIQUE_OPEN: accepted, works. */
    amode = MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN;
    fh = open_file("unique.dat", amode, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, amode, "UNIQUE_OPEN");
    write_pattern_at(fh, (MPI_Offset)io_rank * 333, 333, io_seed(io_rank, 6));
    sync_all(fh);
    read_check_at(fh, (MPI_Offset)next * 333, 333, io_seed(next, 6), "UNIQUE_OPEN");
    close_file(&fh);

    /* SEQUENTIAL: shared-pointer access only. Ordered records of 100+37r
     * bytes, then one 64-byte record per rank with write_shared. */
    amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL;
    fh = open_file("seq.dat", amode, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_amode(fh, amode, "SEQUENTIAL");
    int len = 100 + 37 * io_rank;
    MPI_Offset before = 0, total = 0;
    for (int r = 0; r < io_size; r++) {
        if (r < io_rank)
            before += 100 + 37 * r;
        total += 100 + 37 * r;
    }
    unsigned char *b = io_malloc((size_t)len);
    io_fill(b, (size_t)len, io_seed(io_rank, 7), (uint64_t)before);
    IO_CALL(MPI_File_write_ordered(fh, b, len, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, len, len, "SEQUENTIAL write_ordered");
    unsigned char r64[64];
    io_fill(r64, 64, io_seed(io_rank, 8), 0);
    memcpy(r64, &io_rank, sizeof(int));
    IO_CALL(MPI_File_write_shared(fh, r64, 64, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 64, 64, "SEQUENTIAL write_shared");
    close_sync(&fh);

    fh = open_file("seq.dat", MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL, MPI_COMM_WORLD, MPI_INFO_NULL);
    expect_size(fh, total + 64 * (MPI_Offset)io_size, "SEQUENTIAL file");
    memset(b, 0, (size_t)len);
    IO_CALL(MPI_File_read_ordered(fh, b, len, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, len, len, "SEQUENTIAL read_ordered");
    IO_VERIFY(b, (size_t)len, io_seed(io_rank, 7), before, "SEQUENTIAL read_ordered");
    free(b);
    memset(r64, 0, 64);
    IO_CALL(MPI_File_read_shared(fh, r64, 64, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 64, 64, "SEQUENTIAL read_shared");
    int writer = -1;
    memcpy(&writer, r64, sizeof(int));
    IO_CHECK(writer >= 0 && writer < io_size, "SEQUENTIAL read_shared: record of rank %d", writer);
    IO_VERIFY(r64 + sizeof(int), 64 - sizeof(int), io_seed(writer, 8), sizeof(int),
              "SEQUENTIAL read_shared: record of rank %d", writer);
    int *writers = io_malloc(sizeof(int) * (size_t)io_size);
    IO_CALL(MPI_Allgather(&writer, 1, MPI_INT, writers, 1, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < io_size; r++) {
        int seen = 0;
        for (int q = 0; q < io_size; q++)
            seen += writers[q] == r;
        IO_CHECK(seen == 1, "SEQUENTIAL: the record of rank %d was read %d times", r, seen);
    }
    free(writers);
    close_file(&fh);
}

/* ---- sizes ------------------------------------------------------------- */

static void sizes(void)
{
    MPI_File fh = open_file("size.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD,
                            MPI_INFO_NULL);
    const MPI_Offset T = 100 * (MPI_Offset)io_size;
    expect_size(fh, 0, "new file");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the writes */
    write_pattern_at(fh, (MPI_Offset)io_rank * 100, 100, io_seed(io_rank, 10));
    sync_all(fh);
    expect_size(fh, T, "after the writes");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the size changes */

    /* grow */
    IO_CALL(MPI_File_set_size(fh, T + 5000));
    expect_size(fh, T + 5000, "set_size grow");
    int next = (io_rank + 1) % io_size;
    read_check_at(fh, (MPI_Offset)next * 100, 100, io_seed(next, 10), "after set_size grow");

    /* shrink: data below the new size kept, reads stop there */
    const MPI_Offset half = T / 2 + 1;
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has read before the cut */
    IO_CALL(MPI_File_set_size(fh, half));
    expect_size(fh, half, "set_size shrink");
    unsigned char *b = io_malloc((size_t)T + 16);
    memset(b, GUARD, (size_t)T + 16);
    MPI_Status st;
    IO_CALL(MPI_File_read_at(fh, 0, b, (int)T, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)half, (int)half, "read after set_size shrink");
    for (MPI_Offset o = 0; o < half; o += 100) {
        int w = (int)(o / 100);
        MPI_Offset n = o + 100 <= half ? 100 : half - o;
        IO_VERIFY(b + o, (size_t)n, io_seed(w, 10), o, "after set_size shrink");
    }
    IO_GUARD(b + half, (size_t)(T + 16 - half), GUARD, "read beyond the shrunk size");
    free(b);
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank looked before the size changes */

    /* preallocate: the size grows to n; a smaller n changes nothing */
    IO_CALL(MPI_File_preallocate(fh, 4 * T + 7));
    expect_size(fh, 4 * T + 7, "preallocate grow");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_preallocate(fh, 10));
    expect_size(fh, 4 * T + 7, "preallocate smaller than the size");
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_preallocate(fh, 0));
    expect_size(fh, 4 * T + 7, "preallocate 0");
    for (MPI_Offset o = 0; o < half; o += 100) {
        MPI_Offset n = o + 100 <= half ? 100 : half - o;
        read_check_at(fh, o, (size_t)n, io_seed((int)(o / 100), 10), "after preallocate");
    }
    /* set_size to 0 empties the file */
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_set_size(fh, 0));
    expect_size(fh, 0, "set_size 0");
    close_file(&fh);
}

/* ---- handles: group, info, Fortran handles, type extents ---------------- */

static void expect_type_extent(MPI_File fh, MPI_Datatype t, const char *what)
{
    MPI_Aint lb = 0, ext = -1, got = -1;
    IO_CALL(MPI_Type_get_extent(t, &lb, &ext));
    IO_CALL(MPI_File_get_type_extent(fh, t, &got));
    IO_CHECK(got == ext, "MPI_File_get_type_extent(%s) = %ld under \"native\", expected the "
             "extent %ld", what, (long)got, (long)ext);
#if MPI_VERSION >= 4
    MPI_Count gotc = -1;
    IO_CALL(MPI_File_get_type_extent_c(fh, t, &gotc));
    IO_CHECK(gotc == (MPI_Count)ext, "MPI_File_get_type_extent_c(%s) = %lld, expected %ld",
             what, (long long)gotc, (long)ext);
#endif
}

static void handles(void)
{
    MPI_Info info = io_info("access_style", "read_mostly", "cb_buffer_size", "65536", NULL);
    MPI_File fh = open_file("handles.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD, info);
    io_info_free(&info); /* the file does not depend on it */

    /* group */
    MPI_Group fg = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int cmp = -1;
    IO_CALL(MPI_File_get_group(fh, &fg));
    IO_CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    IO_CALL(MPI_Group_compare(fg, wg, &cmp));
    IO_CHECK(cmp == MPI_IDENT, "MPI_File_get_group: compare with MPI_COMM_WORLD's group gives %d",
             cmp);
    IO_CALL(MPI_Group_free(&fg));
    IO_CALL(MPI_Group_free(&wg));

    /* info: a new object per call, each freed by the caller */
    MPI_Info i1 = MPI_INFO_NULL, i2 = MPI_INFO_NULL;
    IO_CALL(MPI_File_get_info(fh, &i1));
    IO_CALL(MPI_File_get_info(fh, &i2));
    IO_CHECK(i1 != MPI_INFO_NULL && i2 != MPI_INFO_NULL, "MPI_File_get_info gave MPI_INFO_NULL");
    IO_CHECK(i1 != i2, "two MPI_File_get_info calls gave the same handle (must be new objects)");
    int n1 = -1, n2 = -1;
    IO_CALL(MPI_Info_get_nkeys(i1, &n1));
    IO_CALL(MPI_Info_get_nkeys(i2, &n2));
    IO_CHECK(n1 == n2 && n1 >= 0, "get_info: %d keys, then %d", n1, n2);
    for (int k = 0; k < n1; k++) {
        char key[MPI_MAX_INFO_KEY + 1], v1[MPI_MAX_INFO_VAL + 1], v2[MPI_MAX_INFO_VAL + 1];
        int len1 = (int)sizeof v1, len2 = (int)sizeof v2, f1 = 0, f2 = 0;
        IO_CALL(MPI_Info_get_nthkey(i1, k, key));
#if MPI_VERSION >= 4
        IO_CALL(MPI_Info_get_string(i1, key, &len1, v1, &f1));
        IO_CALL(MPI_Info_get_string(i2, key, &len2, v2, &f2));
#else /* MPI_Info_get_string is MPI-4.0 */
        IO_CALL(MPI_Info_get(i1, key, len1 - 1, v1, &f1));
        IO_CALL(MPI_Info_get(i2, key, len2 - 1, v2, &f2));
#endif
        IO_CHECK(f1 && f2 && !strcmp(v1, v2), "get_info: key %s: \"%s\" then \"%s\"", key, v1, v2);
    }
    /* modifying one returned object does not change the other */
    IO_CALL(MPI_Info_set(i1, "proust_io_test_key", "1"));
    int n2b = -1;
    IO_CALL(MPI_Info_get_nkeys(i2, &n2b));
    IO_CHECK(n2b == n2, "setting a key in one get_info result changed the other (%d -> %d keys)",
             n2, n2b);
    IO_CALL(MPI_Info_free(&i1));
    IO_CALL(MPI_Info_free(&i2));
    IO_CHECK(i1 == MPI_INFO_NULL && i2 == MPI_INFO_NULL, "MPI_Info_free did not null the handles");
    MPI_Info i3 = io_info("access_style", "write_once,random", NULL);
    IO_CALL(MPI_File_set_info(fh, i3));
    io_info_free(&i3);
    IO_CALL(MPI_File_get_info(fh, &i1));
    IO_CHECK(i1 != MPI_INFO_NULL, "MPI_File_get_info after set_info gave MPI_INFO_NULL");
    IO_CALL(MPI_Info_free(&i1));

    /* the file still works, through a handle converted to Fortran and back */
    MPI_Fint f = MPI_File_c2f(fh);
    MPI_File fh2 = MPI_File_f2c(f);
    IO_CHECK(fh2 == fh, "MPI_File_f2c(MPI_File_c2f(fh)) is not fh");
    IO_CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL,
             "MPI_FILE_NULL does not survive c2f/f2c");
    write_pattern_at(fh2, (MPI_Offset)io_rank * 41, 41, io_seed(io_rank, 11));
    sync_all(fh);
    int next = (io_rank + 1) % io_size;
    read_check_at(fh2, (MPI_Offset)next * 41, 41, io_seed(next, 11), "through f2c(c2f(fh))");

    /* native type extents */
    expect_type_extent(fh, MPI_INT, "MPI_INT");
    expect_type_extent(fh, MPI_DOUBLE, "MPI_DOUBLE");
    expect_type_extent(fh, MPI_CHAR, "MPI_CHAR");
    MPI_Datatype vec, res, st;
    IO_CALL(MPI_Type_vector(3, 2, 5, MPI_INT, &vec));
    IO_CALL(MPI_Type_create_resized(MPI_INT, -4, 16, &res));
    int bl[2] = {1, 1};
    MPI_Aint dis[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_CHAR, MPI_DOUBLE};
    IO_CALL(MPI_Type_create_struct(2, bl, dis, ty, &st));
    IO_CALL(MPI_Type_commit(&vec));
    IO_CALL(MPI_Type_commit(&res));
    IO_CALL(MPI_Type_commit(&st));
    expect_type_extent(fh, vec, "vector(3,2,5,MPI_INT)");
    expect_type_extent(fh, res, "MPI_INT resized to lb -4, extent 16");
    expect_type_extent(fh, st, "struct {char; double at 8}");
    IO_CALL(MPI_Type_free(&vec));
    IO_CALL(MPI_Type_free(&res));
    IO_CALL(MPI_Type_free(&st));
    close_file(&fh);

    /* a file of MPI_COMM_SELF: its group is the one of COMM_SELF */
    char name[64];
    snprintf(name, sizeof name, "self_%d.dat", io_rank);
    fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                   MPI_COMM_SELF, MPI_INFO_NULL);
    IO_CALL(MPI_File_get_group(fh, &fg));
    IO_CALL(MPI_Comm_group(MPI_COMM_SELF, &wg));
    IO_CALL(MPI_Group_compare(fg, wg, &cmp));
    IO_CHECK(cmp == MPI_IDENT, "COMM_SELF file: group compare gives %d", cmp);
    IO_CALL(MPI_Group_free(&fg));
    IO_CALL(MPI_Group_free(&wg));
    close_file(&fh);
}

/* ---- explicit offsets: sizes, alignment, status -------------------------- */

static size_t budget(void)
{
    return io_size <= 2 ? (size_t)16 << 20 : io_size <= 4 ? (size_t)6 << 20 : (size_t)2 << 20;
}

static void explicit_offsets(void)
{
    static const size_t fixed[] = {0, 1, 2, 3, 7, 8, 511, 4096, 4097, 65535, (1u << 20) + 3};
    enum { NFIXED = sizeof fixed / sizeof fixed[0], NP = NFIXED + 1 };
    size_t sz[NP], sum = 0;
    for (int i = 0; i < NFIXED; i++) {
        sz[i] = fixed[i];
        sum += fixed[i] + 3;
    }
    const size_t B = budget();
    sz[NFIXED] = (B - sum - 3) & ~(size_t)3; /* the big piece, whole ints */
    const MPI_Offset REG = (MPI_Offset)B + 4096;
    const MPI_Offset base = (MPI_Offset)io_rank * REG;
    MPI_Offset off[NP], cur = 1; /* odd offsets */
    for (int i = 0; i < NP; i++) {
        off[i] = base + cur;
        cur += (MPI_Offset)sz[i] + 3;
    }
    const MPI_Offset end = cur - 3; /* end of the last piece, relative to base */

    MPI_File fh = open_file("data.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD,
                            MPI_INFO_NULL);
    size_t maxsz = sz[NFIXED] > fixed[NFIXED - 1] ? sz[NFIXED] : fixed[NFIXED - 1];
    unsigned char *w = io_malloc(maxsz + 1), *r = io_malloc(maxsz + 9);
    MPI_Status st;
    char what[128];
    for (int i = 0; i < NP; i++) {
        uint64_t seed = io_seed(io_rank, 20 + i);
        io_fill(w + 1, sz[i], seed, (uint64_t)off[i]);
        if (i == NFIXED) { /* as ints */
            int n = (int)(sz[i] / sizeof(int));
            IO_CALL(MPI_File_write_at(fh, off[i], w + 1, n, MPI_INT, &st));
            IO_STATUS(&st, MPI_INT, n, n, "write_at of the big piece as MPI_INT");
        } else {
            IO_CALL(MPI_File_write_at(fh, off[i], w + 1, (int)sz[i], MPI_BYTE, &st));
            snprintf(what, sizeof what, "write_at of %zu bytes at %lld", sz[i], (long long)off[i]);
            IO_STATUS(&st, MPI_BYTE, (int)sz[i], (int)sz[i], what);
        }
    }
    /* read back one's own pieces */
    for (int i = 0; i < NP; i++) {
        memset(r, GUARD, sz[i] + 9);
        if (i == NFIXED) {
            int n = (int)(sz[i] / sizeof(int));
            IO_CALL(MPI_File_read_at(fh, off[i], r + 1, n, MPI_INT, &st));
            IO_STATUS(&st, MPI_INT, n, n, "read_at of the big piece as MPI_INT");
        } else {
            IO_CALL(MPI_File_read_at(fh, off[i], r + 1, (int)sz[i], MPI_BYTE, &st));
            snprintf(what, sizeof what, "read_at of %zu bytes at %lld", sz[i], (long long)off[i]);
            IO_STATUS(&st, MPI_BYTE, (int)sz[i], (int)sz[i], what);
        }
        snprintf(what, sizeof what, "own piece %d (%zu bytes at %lld)", i, sz[i], (long long)off[i]);
        IO_VERIFY(r + 1, sz[i], io_seed(io_rank, 20 + i), off[i], "%s", what);
        IO_GUARD(r, 1, GUARD, "%s: byte before", what);
        IO_GUARD(r + 1 + sz[i], 8, GUARD, "%s: bytes after", what);
    }
    /* every rank's pieces are visible to the next one */
    sync_all(fh);
    expect_size(fh, (MPI_Offset)(io_size - 1) * REG + end, "after the writes at explicit offsets");
    int next = (io_rank + 1) % io_size;
    for (int i = 0; i < NP; i++) {
        MPI_Offset o = off[i] - base + (MPI_Offset)next * REG;
        snprintf(what, sizeof what, "rank %d's piece %d (%zu bytes at %lld)", next, i, sz[i],
                 (long long)o);
        read_check_at(fh, o, sz[i], io_seed(next, 20 + i), what);
    }
    free(w);
    free(r);
    close_file(&fh);
}

/* ---- the individual file pointer ---------------------------------------- */

static void individual_pointer(void)
{
    MPI_File fh = open_file("ptr.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD,
                            MPI_INFO_NULL);
    const MPI_Offset REG = 65536, base = (MPI_Offset)io_rank * REG;
    const uint64_t seed = io_seed(io_rank, 40);
    static const int sz[] = {7, 4097, 1, 0, 33333};
    MPI_Offset pos = -1, byte = -1, cum = 0;
    MPI_Status st;
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == 0, "new file: individual pointer at %lld", (long long)pos);
    IO_CALL(MPI_File_seek(fh, base, MPI_SEEK_SET));
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == base, "after seek SET %lld: position %lld", (long long)base, (long long)pos);
    unsigned char *b = io_malloc(65536);
    for (int i = 0; i < 5; i++) {
        io_fill(b + 1, (size_t)sz[i], seed, (uint64_t)(base + cum));
        IO_CALL(MPI_File_write(fh, b + 1, sz[i], MPI_BYTE, &st));
        IO_STATUS(&st, MPI_BYTE, sz[i], sz[i], "MPI_File_write");
        cum += sz[i];
        IO_CALL(MPI_File_get_position(fh, &pos));
        IO_CHECK(pos == base + cum, "after writing %d bytes: position %lld, expected %lld", sz[i],
                 (long long)pos, (long long)(base + cum));
        IO_CALL(MPI_File_get_byte_offset(fh, pos, &byte));
        IO_CHECK(byte == pos, "default view: byte offset of %lld is %lld", (long long)pos,
                 (long long)byte);
    }
    /* back to the start, relative */
    IO_CALL(MPI_File_seek(fh, -cum, MPI_SEEK_CUR));
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == base, "after seek CUR -%lld: position %lld, expected %lld", (long long)cum,
             (long long)pos, (long long)base);
    memset(b, GUARD, (size_t)cum + 9);
    IO_CALL(MPI_File_read(fh, b + 1, (int)cum, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)cum, (int)cum, "MPI_File_read of everything written");
    IO_VERIFY(b + 1, (size_t)cum, seed, base, "read with the individual pointer");
    IO_GUARD(b + 1 + cum, 8, GUARD, "after MPI_File_read");
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == base + cum, "after the read: position %lld, expected %lld", (long long)pos,
             (long long)(base + cum));
    /* SET then CUR forwards and backwards */
    IO_CALL(MPI_File_seek(fh, base + 7, MPI_SEEK_SET));
    IO_CALL(MPI_File_read(fh, b, 4097, MPI_BYTE, &st));
    IO_VERIFY(b, 4097, seed, base + 7, "read after seek SET");
    IO_CALL(MPI_File_seek(fh, -4100, MPI_SEEK_CUR));
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == base + 4, "seek CUR -4100: position %lld, expected %lld", (long long)pos,
             (long long)(base + 4));
    IO_CALL(MPI_File_seek(fh, 3, MPI_SEEK_CUR));
    IO_CALL(MPI_File_read(fh, b, 10, MPI_BYTE, &st));
    IO_VERIFY(b, 10, seed, base + 7, "read after seek CUR +3");

    /* SEEK_END, once every rank has written */
    sync_all(fh);
    const MPI_Offset S = (MPI_Offset)(io_size - 1) * REG + cum;
    expect_size(fh, S, "after the pointer writes");
    IO_CALL(MPI_File_seek(fh, -10, MPI_SEEK_END));
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == S - 10, "seek END -10: position %lld, expected %lld", (long long)pos,
             (long long)(S - 10));
    IO_CALL(MPI_File_read(fh, b, 10, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 10, 10, "read of the last 10 bytes");
    IO_VERIFY(b, 10, io_seed(io_size - 1, 40), S - 10, "the last 10 bytes (last rank's)");
    IO_CALL(MPI_File_seek(fh, 0, MPI_SEEK_END));
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == S, "seek END 0: position %lld, expected %lld", (long long)pos, (long long)S);
    IO_CALL(MPI_File_read(fh, b, 10, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 0, 0, "read at the end of file");
    free(b);
    close_file(&fh);
}

/* ---- reading past the end of file ---------------------------------------- */

static void past_eof(void)
{
    MPI_File fh = open_file("eof.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD,
                            MPI_INFO_NULL);
    const MPI_Offset E = 1000;
    const uint64_t seed = io_seed(0, 50);
    if (io_rank == 0)
        write_pattern_at(fh, 0, (size_t)E, seed);
    sync_all(fh);
    unsigned char b[200];
    MPI_Status st;

    memset(b, GUARD, sizeof b);
    IO_CALL(MPI_File_read_at(fh, E - 40, b, 100, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 40, 40, "read_at of 100 bytes 40 before the end");
    IO_VERIFY(b, 40, seed, E - 40, "short read");
    IO_GUARD(b + 40, sizeof b - 40, GUARD, "bytes beyond a short read");

    memset(b, GUARD, sizeof b);
    IO_CALL(MPI_File_read_at(fh, E - 40, b, 25, MPI_INT, &st));
    IO_STATUS(&st, MPI_INT, 10, 10, "read_at of 25 MPI_INT 40 bytes before the end");
    IO_VERIFY(b, 40, seed, E - 40, "short read of ints");
    IO_GUARD(b + 40, sizeof b - 40, GUARD, "bytes beyond a short read of ints");

    /* 10 ints of a 3-int type: not a whole number of types */
    MPI_Datatype t3;
    IO_CALL(MPI_Type_contiguous(3, MPI_INT, &t3));
    IO_CALL(MPI_Type_commit(&t3));
    memset(b, GUARD, sizeof b);
    IO_CALL(MPI_File_read_at(fh, E - 40, b, 5, t3, &st));
    IO_STATUS(&st, t3, MPI_UNDEFINED, 10, "read_at of 5 x contiguous(3, MPI_INT), 10 ints left");
    IO_VERIFY(b, 40, seed, E - 40, "short read of a derived type");
    IO_GUARD(b + 40, sizeof b - 40, GUARD, "bytes beyond a short read of a derived type");
    IO_CALL(MPI_Type_free(&t3));

    memset(b, GUARD, sizeof b);
    IO_CALL(MPI_File_read_at(fh, E, b, 10, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 0, 0, "read_at at the end of file");
    IO_CALL(MPI_File_read_at(fh, E + 100, b, 10, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 0, 0, "read_at beyond the end of file");
    IO_CALL(MPI_File_seek(fh, E - 4, MPI_SEEK_SET));
    IO_CALL(MPI_File_read(fh, b, 8, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 4, 4, "MPI_File_read of 8 bytes 4 before the end");
    IO_VERIFY(b, 4, seed, E - 4, "short MPI_File_read");
    IO_GUARD(b + 4, sizeof b - 4, GUARD, "bytes beyond a short MPI_File_read");
    expect_size(fh, E, "reads do not change the size");
    close_file(&fh);
}

/* ---- MPI-4 large-count variants ------------------------------------------ */

static void large_count(void)
{
#if MPI_VERSION >= 4
    const size_t n = ((size_t)3 << 20) + 5;
    const MPI_Offset off = (MPI_Offset)io_rank * (MPI_Offset)n;
    const uint64_t seed = io_seed(io_rank, 60);
    MPI_File fh = open_file("large.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD,
                            MPI_INFO_NULL);
    unsigned char *b = io_malloc(n + 9);
    io_fill(b, n, seed, (uint64_t)off);
    MPI_Status st;
    MPI_Count c = -1;
    IO_CALL(MPI_File_write_at_c(fh, off, b, (MPI_Count)n, MPI_BYTE, &st));
    IO_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
    IO_CHECK(c == (MPI_Count)n, "write_at_c: count %lld, expected %zu", (long long)c, n);
    memset(b, GUARD, n + 9);
    IO_CALL(MPI_File_read_at_c(fh, off, b, (MPI_Count)n, MPI_BYTE, &st));
    IO_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
    IO_CHECK(c == (MPI_Count)n, "read_at_c: count %lld, expected %zu", (long long)c, n);
    IO_VERIFY(b, n, seed, off, "read_at_c");
    IO_GUARD(b + n, 9, GUARD, "after read_at_c");
    /* short read with the large-count form: past the end of the last rank */
    sync_all(fh);
    MPI_Offset last = (MPI_Offset)(io_size - 1) * (MPI_Offset)n;
    IO_CALL(MPI_File_read_at_c(fh, last + (MPI_Offset)n - 3, b, (MPI_Count)100, MPI_BYTE, &st));
    IO_CALL(MPI_Get_count_c(&st, MPI_BYTE, &c));
    IO_CHECK(c == 3, "read_at_c 3 bytes before the end: count %lld", (long long)c);
    IO_VERIFY(b, 3, io_seed(io_size - 1, 60), last + (MPI_Offset)n - 3, "short read_at_c");
    free(b);
    close_file(&fh);
#else
    /* MPI_File_read_at_c & co. are MPI-4.0: not in this library's header */
    if (io_rank == 0)
        printf("note: MPI_VERSION < 4, large-count forms not checked\n");
#endif
}

/* The standard's file_perm hint: a created file gets those permissions
 * (less the umask). */
static void file_perm(void)
{
    mode_t old = umask(022);
    MPI_Info info;
    IO_CALL(MPI_Info_create(&info));
    IO_CALL(MPI_Info_set(info, "file_perm", "0640"));
    MPI_File fh = open_file("perm.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_COMM_WORLD, info);
    char p[2048];
    struct stat sb;
    IO_CHECK(stat(io_path(p, sizeof p, "perm.dat"), &sb) == 0, "stat(perm.dat)");
    if (IO_ROMIO && (sb.st_mode & 0777) != 0640) {
        if (io_rank == 0) /* ROMIO (MPICH 4.0) leaves the hint aside */
            fprintf(stderr, "note: known ROMIO deviation, tolerated: file_perm ignored\n");
    } else {
        IO_CHECK((sb.st_mode & 0777) == 0640, "file_perm 0640 gave mode %o",
                 sb.st_mode & 0777);
    }
    close_file(&fh);
    IO_CALL(MPI_Info_free(&info));
    umask(old);
}

int main(int argc, char **argv)
{
    io_init(&argc, &argv);
    file_perm();
    amodes();
    sizes();
    handles();
    explicit_offsets();
    individual_pointer();
    past_eof();
    large_count();
    io_finish();
    return 0;
}
