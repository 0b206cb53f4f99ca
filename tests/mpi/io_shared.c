/*
 * io_shared.c — the shared file pointer (MPI-4.1 §14.4.4).
 *
 * Checks:
 *  - MPI_File_write_shared from every rank at once: each record names its
 *    writer, its sequence number and its length (which varies); the file
 *    then holds every record exactly once, whole, without overlap or gap,
 *    one rank's records in the order it wrote them, and the shared pointer
 *    and the size are the sum of the lengths;
 *  - MPI_File_read_shared by every rank until end of file over fixed-size
 *    records: each record read by exactly one rank, each rank's in
 *    increasing order, a count of 0 at the end;
 *  - MPI_File_seek_shared (SET, CUR, END) and MPI_File_get_position_shared,
 *    also in etype units under a view whose etype is a 64-byte record;
 *  - MPI_File_write_ordered/read_ordered: records in rank order (some ranks
 *    with count 0), each rank reading its own back, and the split forms
 *    MPI_File_write_ordered_begin/end and read_ordered_begin/end appending
 *    after them.
 */
#include "io_util.h"

#define MAGIC 0x50524f55u
#define K 20 /* records per rank for write_shared */
#define RSZ 64

typedef struct {
    uint32_t magic, rank, seq, len;
} hdr_t;

static MPI_File open_file(const char *name, int amode)
{
    char p[2048];
    MPI_File fh = MPI_FILE_NULL;
    IO_CALL(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, name), amode, MPI_INFO_NULL, &fh));
    return fh;
}

static MPI_Offset shared_pos(MPI_File fh)
{
    MPI_Offset p = -1;
    IO_CALL(MPI_File_get_position_shared(fh, &p));
    return p;
}

/* The shared pointer is `want` on every rank: a barrier before (every
 * rank's access done) and after (nobody moves it while others look). */
#define EXPECT_SHARED(fh, want, ...)                                               \
    do {                                                                           \
        IO_CALL(MPI_Barrier(MPI_COMM_WORLD));                                      \
        MPI_Offset es_got_ = shared_pos(fh), es_want_ = (want);                    \
        IO_CHECK(es_got_ == es_want_, "shared pointer %lld, expected %lld: %s",    \
                 (long long)es_got_, (long long)es_want_, __VA_ARGS__);            \
        IO_CALL(MPI_Barrier(MPI_COMM_WORLD));                                      \
    } while (0)

/* ---- write_shared ------------------------------------------------------ */

static uint32_t rec_len(int r, int j)
{
    return (uint32_t)(sizeof(hdr_t) + (size_t)((r * 7 + j * 13) % 50));
}

static void write_shared_records(void)
{
    MPI_File fh = open_file("records.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char buf[sizeof(hdr_t) + 64];
    MPI_Status st;
    for (int j = 0; j < K; j++) {
        hdr_t h = {MAGIC, (uint32_t)io_rank, (uint32_t)j, rec_len(io_rank, j)};
        memcpy(buf, &h, sizeof h);
        io_fill(buf + sizeof h, h.len - sizeof h, io_seed(io_rank, 1000 + j), 0);
        IO_CALL(MPI_File_write_shared(fh, buf, (int)h.len, MPI_BYTE, &st));
        IO_STATUS(&st, MPI_BYTE, (int)h.len, (int)h.len, "write_shared of a record");
    }
    MPI_Offset total = 0;
    for (int r = 0; r < io_size; r++)
        for (int j = 0; j < K; j++)
            total += rec_len(r, j);
    EXPECT_SHARED(fh, total, "after every write_shared");
    MPI_Offset size = -1;
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_File_get_size(fh, &size));
    IO_CHECK(size == total, "file size %lld, expected the sum of the records %lld",
             (long long)size, (long long)total);

    /* every rank parses the whole file */
    unsigned char *f = io_malloc((size_t)total);
    IO_CALL(MPI_File_read_at(fh, 0, f, (int)total, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)total, (int)total, "read of the whole file");
    int *seen = io_malloc(sizeof(int) * (size_t)io_size * K);
    int *last = io_malloc(sizeof(int) * (size_t)io_size);
    memset(seen, 0, sizeof(int) * (size_t)io_size * K);
    for (int r = 0; r < io_size; r++)
        last[r] = -1;
    MPI_Offset o = 0;
    while (o < total) {
        hdr_t h;
        IO_CHECK(o + (MPI_Offset)sizeof h <= total, "a record header cut by the end at %lld",
                 (long long)o);
        memcpy(&h, f + o, sizeof h);
        IO_CHECK(h.magic == MAGIC && h.rank < (uint32_t)io_size && h.seq < K &&
                     h.len == rec_len((int)h.rank, (int)h.seq),
                 "no valid record at offset %lld (magic 0x%x rank %u seq %u len %u): records "
                 "overlap or leave a gap", (long long)o, h.magic, h.rank, h.seq, h.len);
        IO_CHECK(o + h.len <= total, "record of rank %u seq %u at %lld runs past the end", h.rank,
                 h.seq, (long long)o);
        IO_VERIFY(f + o + sizeof h, h.len - sizeof h, io_seed((int)h.rank, 1000 + (int)h.seq), 0,
                  "payload of rank %u's record %u at file offset %lld", h.rank, h.seq,
                  (long long)o);
        IO_CHECK(++seen[h.rank * K + h.seq] == 1, "rank %u's record %u found twice (at %lld)",
                 h.rank, h.seq, (long long)o);
        IO_CHECK((int)h.seq > last[h.rank], "rank %u's record %u at %lld comes after its record %d",
                 h.rank, h.seq, (long long)o, last[h.rank]);
        last[h.rank] = (int)h.seq;
        o += h.len;
    }
    for (int r = 0; r < io_size; r++)
        for (int j = 0; j < K; j++)
            IO_CHECK(seen[r * K + j] == 1, "rank %d's record %d is missing", r, j);
    free(seen);
    free(last);
    free(f);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- read_shared and seek_shared ---------------------------------------- */

static void make_fixed(unsigned char *rec, int i)
{
    uint32_t idx = (uint32_t)i;
    io_fill(rec, RSZ, io_seed(-2, 2000), (uint64_t)i * RSZ);
    memcpy(rec, &idx, sizeof idx);
}

static int check_fixed(const unsigned char *rec, int n, const char *what)
{
    uint32_t idx;
    memcpy(&idx, rec, sizeof idx);
    IO_CHECK(idx < (uint32_t)n, "%s: record index %u out of range", what, idx);
    IO_VERIFY(rec + 4, RSZ - 4, io_seed(-2, 2000), (uint64_t)idx * RSZ + 4, "%s: record %u", what,
              idx);
    return (int)idx;
}

static void read_and_seek_shared(void)
{
    const int N = 12 * io_size + 5;
    MPI_File fh = open_file("fixed.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char rec[RSZ];
    MPI_Status st;
    if (io_rank == 0) {
        unsigned char *all = io_malloc((size_t)N * RSZ);
        for (int i = 0; i < N; i++)
            make_fixed(all + (size_t)i * RSZ, i);
        IO_CALL(MPI_File_write_at(fh, 0, all, N * RSZ, MPI_BYTE, MPI_STATUS_IGNORE));
        free(all);
    }
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
    EXPECT_SHARED(fh, 0, "before any shared access");

    /* everyone reads until end of file */
    int *mine = io_malloc(sizeof(int) * (size_t)N), got = 0;
    for (;;) {
        IO_CALL(MPI_File_read_shared(fh, rec, RSZ, MPI_BYTE, &st));
        int c = -1;
        IO_CALL(MPI_Get_count(&st, MPI_BYTE, &c));
        if (c == 0)
            break;
        IO_CHECK(c == RSZ, "read_shared of a %d-byte record returned %d bytes", RSZ, c);
        IO_CHECK(got < N, "more than %d records read", N);
        mine[got] = check_fixed(rec, N, "read_shared");
        IO_CHECK(got == 0 || mine[got] > mine[got - 1],
                 "read_shared gave record %d after record %d", mine[got], mine[got - 1]);
        got++;
    }
    int *counts = io_malloc(sizeof(int) * (size_t)io_size), *displs = io_malloc(sizeof(int) *
                                                                              (size_t)io_size);
    IO_CALL(MPI_Allgather(&got, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD));
    int sum = 0;
    for (int r = 0; r < io_size; r++) {
        displs[r] = sum;
        sum += counts[r];
    }
    IO_CHECK(sum == N, "%d records read in all, expected %d", sum, N);
    int *every = io_malloc(sizeof(int) * (size_t)N), *seen = io_malloc(sizeof(int) * (size_t)N);
    IO_CALL(MPI_Allgatherv(mine, got, MPI_INT, every, counts, displs, MPI_INT, MPI_COMM_WORLD));
    memset(seen, 0, sizeof(int) * (size_t)N);
    for (int i = 0; i < N; i++)
        seen[every[i]]++;
    for (int i = 0; i < N; i++)
        IO_CHECK(seen[i] == 1, "record %d read %d times by read_shared", i, seen[i]);
    free(every);
    free(seen);
    free(counts);
    free(displs);
    free(mine);
    /* Where the reads that found the end leave the pointer is not pinned
     * down: "the next etype after the last one that will be accessed" is
     * the end of file if it means the data read, one record further per
     * such read if it means the data asked for (ROMIO). */
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset sp = shared_pos(fh);
    IO_CHECK(sp >= (MPI_Offset)N * RSZ && sp <= (MPI_Offset)(N + io_size) * RSZ,
             "shared pointer %lld after reading to the end of a %d-byte file", (long long)sp,
             N * RSZ);
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));

    /* seek_shared: collective; the pointer is the same for all after it */
    IO_CALL(MPI_File_seek_shared(fh, 5 * RSZ, MPI_SEEK_SET));
    EXPECT_SHARED(fh, 5 * RSZ, "after seek_shared SET 5 records");
    if (io_rank == 0) {
        IO_CALL(MPI_File_read_shared(fh, rec, RSZ, MPI_BYTE, &st));
        IO_CHECK(check_fixed(rec, N, "read_shared after seek_shared") == 5,
                 "seek_shared SET 5 records, then read_shared: another record");
    }
    EXPECT_SHARED(fh, 6 * RSZ, "after one read_shared of rank 0");
    IO_CALL(MPI_File_seek_shared(fh, -3 * RSZ, MPI_SEEK_CUR));
    EXPECT_SHARED(fh, 3 * RSZ, "after seek_shared CUR -3 records");
    IO_CALL(MPI_File_seek_shared(fh, -2 * RSZ, MPI_SEEK_END));
    EXPECT_SHARED(fh, (MPI_Offset)(N - 2) * RSZ, "after seek_shared END -2 records");
    if (io_rank == io_size - 1) {
        IO_CALL(MPI_File_read_shared(fh, rec, RSZ, MPI_BYTE, &st));
        IO_CHECK(check_fixed(rec, N, "read_shared after seek_shared END") == N - 2,
                 "seek_shared END -2 records, then read_shared: another record");
    }
    EXPECT_SHARED(fh, (MPI_Offset)(N - 1) * RSZ, "after one read_shared at END -2 records");

    /* in etype units: a view of 64-byte records from record 2 */
    MPI_Datatype rt;
    IO_CALL(MPI_Type_contiguous(RSZ, MPI_BYTE, &rt));
    IO_CALL(MPI_Type_commit(&rt));
    IO_CALL(MPI_File_set_view(fh, 2 * RSZ, rt, rt, "native", MPI_INFO_NULL));
    EXPECT_SHARED(fh, 0, "after set_view");
    IO_CALL(MPI_File_seek_shared(fh, 3, MPI_SEEK_SET));
    EXPECT_SHARED(fh, 3, "etype view: after seek_shared SET 3");
    if (io_rank == 0) {
        IO_CALL(MPI_File_read_shared(fh, rec, 1, rt, &st));
        IO_STATUS(&st, rt, 1, RSZ, "read_shared of one record etype");
        IO_CHECK(check_fixed(rec, N, "etype view") == 5, "etype view: record 3 of the view is "
                 "not record 5 of the file");
    }
    EXPECT_SHARED(fh, 4, "etype view: after one record");
    IO_CALL(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    EXPECT_SHARED(fh, N - 2, "etype view: after seek_shared END");
    IO_CALL(MPI_Type_free(&rt));
    IO_CALL(MPI_File_close(&fh));
}

/* ---- ordered ------------------------------------------------------------ */

static int ord_len(int r, int round)
{
    return r % 3 == 1 ? 0 : 10 + 17 * r + round;
}

static void ordered(void)
{
    MPI_File fh = open_file("ordered.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_Offset before[2] = {0, 0}, total[2] = {0, 0};
    for (int round = 0; round < 2; round++) {
        for (int r = 0; r < io_size; r++) {
            if (r < io_rank)
                before[round] += ord_len(r, round);
            total[round] += ord_len(r, round);
        }
    }
    const MPI_Offset T = total[0] + total[1];
    unsigned char b[256];
    MPI_Status st;
    int len = ord_len(io_rank, 0);
    io_fill(b, (size_t)len, io_seed(io_rank, 3000), (uint64_t)before[0]);
    IO_CALL(MPI_File_write_ordered(fh, b, len, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, len, len, "write_ordered");
    EXPECT_SHARED(fh, total[0], "after write_ordered");

    /* the split form, after */
    int len1 = ord_len(io_rank, 1);
    unsigned char b1[256];
    io_fill(b1, (size_t)len1, io_seed(io_rank, 3001), (uint64_t)(total[0] + before[1]));
    IO_CALL(MPI_File_write_ordered_begin(fh, b1, len1, MPI_BYTE));
    IO_CALL(MPI_File_write_ordered_end(fh, b1, &st));
    IO_STATUS(&st, MPI_BYTE, len1, len1, "write_ordered_end");
    EXPECT_SHARED(fh, T, "after write_ordered_end");
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));

    /* the whole file: every rank's record in rank order */
    unsigned char *f = io_malloc((size_t)T + 1);
    IO_CALL(MPI_File_read_at(fh, 0, f, (int)T, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, (int)T, (int)T, "read of the whole file");
    MPI_Offset o = 0;
    for (int round = 0; round < 2; round++)
        for (int r = 0; r < io_size; r++) {
            int l = ord_len(r, round);
            IO_VERIFY(f + o, (size_t)l, io_seed(r, 3000 + round), o,
                      "ordered round %d: rank %d's record", round, r);
            o += l;
        }
    free(f);

    /* read them back in order */
    IO_CALL(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(b, 0, sizeof b);
    IO_CALL(MPI_File_read_ordered(fh, b, len, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, len, len, "read_ordered");
    IO_VERIFY(b, (size_t)len, io_seed(io_rank, 3000), before[0], "read_ordered: own record");
    memset(b1, 0, sizeof b1);
    IO_CALL(MPI_File_read_ordered_begin(fh, b1, len1, MPI_BYTE));
    IO_CALL(MPI_File_read_ordered_end(fh, b1, &st));
    IO_STATUS(&st, MPI_BYTE, len1, len1, "read_ordered_end");
    IO_VERIFY(b1, (size_t)len1, io_seed(io_rank, 3001), total[0] + before[1],
              "read_ordered_end: own record");
    EXPECT_SHARED(fh, T, "after read_ordered and read_ordered_end");
    /* at the end: every rank reads nothing */
    IO_CALL(MPI_File_read_ordered(fh, b, 10, MPI_BYTE, &st));
    IO_STATUS(&st, MPI_BYTE, 0, 0, "read_ordered at end of file");
    IO_CALL(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    io_init(&argc, &argv);
    write_shared_records();
    read_and_seek_shared();
    ordered();
    io_finish();
    return 0;
}
