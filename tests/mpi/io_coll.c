/*
 * io_coll.c — collective data access (MPI-4.1 §14.4.2-14.4.5): every rank
 * writes interleaved noncontiguous pieces of a shared file, then every rank
 * checks every byte of it.
 *
 * Two distributions, for each of a list of hint sets:
 *  - a 3-D array of 8-byte elements, block distributed over MPI_Dims_create's
 *    grid, one MPI_Type_create_subarray view per rank: the first half of a
 *    rank's block written with MPI_File_write_all (individual pointer), the
 *    second with MPI_File_write_at_all_begin/end; read back through the view
 *    with MPI_File_read_all_begin/end;
 *  - 20-byte records dealt cyclically (record i to rank i mod P, an uneven
 *    number of them), an MPI_Type_vector view per rank: MPI_File_write_at_all
 *    twice, even ranks passing count 0 the first time and odd ranks the
 *    second, then the rest of the records with MPI_File_write_all_begin/end
 *    after MPI_File_seek; read back with MPI_File_read_at_all.
 * Then every rank reads each whole file contiguously with the default view
 * (MPI_File_read_at_all_begin/end, MPI_File_read_at_all) and compares it
 * byte for byte with the image it must have, and the last rank reads it
 * again alone in odd-sized pieces (MPI_File_read_at). Every _end status
 * counts what was asked.
 *
 * Hint sets (given as info both to MPI_File_open and to MPI_File_set_view;
 * none may change the results): none; cb_buffer_size=4096 (many rounds of
 * two-phase I/O); cb_nodes=1; cb_nodes=2 with cb_buffer_size=8192;
 * romio_cb_write=enable and romio_cb_read=enable; romio_cb_write=disable
 * and romio_cb_read=disable; write enabled, read disabled, 4096-byte
 * buffer. Then 3 MiB of cyclic records without hints: the aggregators
 * chosen by the data's size.
 */
#include "io_util.h"

#define ESZ 8   /* bytes per array element */
#define REC 5   /* ints per record */
#define HDR 64  /* header bytes before the array, written by rank 0 */

static const int G[3] = {20, 18, 17}; /* the 3-D array */

static MPI_File open_file(const char *name, int amode, MPI_Info info)
{
    char p[2048];
    MPI_File fh = MPI_FILE_NULL;
    IO_CALL(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, name), amode, info, &fh));
    return fh;
}

static void block_range(int n, int p, int c, int *start, int *len)
{
    int q = n / p, r = n % p;
    *len = q + (c < r);
    *start = c * q + (c < r ? c : r);
}

static int block_owner(int n, int p, int idx)
{
    for (int c = 0; c < p; c++) {
        int s, l;
        block_range(n, p, c, &s, &l);
        if (idx >= s && idx < s + l)
            return c;
    }
    return -1;
}

/* Read the whole file contiguously, collectively (split or not), and
 * compare with img; the last rank reads it again alone in odd pieces. */
static void verify_whole(MPI_File fh, const unsigned char *img, MPI_Offset n, int split,
                         const char *what)
{
    IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Offset size = -1;
    IO_CALL(MPI_File_get_size(fh, &size));
    IO_CHECK(size == n, "%s: file size %lld, expected %lld", what, (long long)size, (long long)n);
    unsigned char *got = io_malloc((size_t)n);
    memset(got, 0, (size_t)n);
    MPI_Status st;
    if (split) {
        IO_CALL(MPI_File_read_at_all_begin(fh, 0, got, (int)n, MPI_BYTE));
        IO_CALL(MPI_File_read_at_all_end(fh, got, &st));
    } else {
        IO_CALL(MPI_File_read_at_all(fh, 0, got, (int)n, MPI_BYTE, &st));
    }
    IO_STATUS(&st, MPI_BYTE, (int)n, (int)n, "collective read of the whole file");
    IO_SAME(got, img, n, "%s: the whole file read collectively", what);
    if (io_rank == io_size - 1) {
        memset(got, 0, (size_t)n);
        for (MPI_Offset o = 0; o < n; o += 4093) {
            int c = (int)(n - o < 4093 ? n - o : 4093);
            IO_CALL(MPI_File_read_at(fh, o, got + o, c, MPI_BYTE, &st));
            IO_STATUS(&st, MPI_BYTE, c, c, "independent read of a piece");
        }
        IO_SAME(got, img, n, "%s: the whole file read by the last rank alone", what);
    }
    free(got);
}

/* ---- 3-D block distribution, subarray views ------------------------------- */

static void array3d(int h, MPI_Info info)
{
    const int test = 10 * h + 1;
    int dims[3] = {0, 0, 0}, coords[3], sub[3], start[3];
    IO_CALL(MPI_Dims_create(io_size, 3, dims));
    for (int d = 2, r = io_rank; d >= 0; d--) {
        coords[d] = r % dims[d];
        r /= dims[d];
    }
    int n = 1;
    for (int d = 0; d < 3; d++) {
        block_range(G[d], dims[d], coords[d], &start[d], &sub[d]);
        n *= sub[d];
    }
    const MPI_Offset fsz = HDR + (MPI_Offset)G[0] * G[1] * G[2] * ESZ;

    /* the image: header, then each element the pattern of its owner at its
     * place */
    unsigned char *img = io_malloc((size_t)fsz);
    io_fill(img, HDR, io_seed(-1, test), 0);
    for (int z = 0; z < G[0]; z++)
        for (int y = 0; y < G[1]; y++)
            for (int x = 0; x < G[2]; x++) {
                int o = (block_owner(G[0], dims[0], z) * dims[1] + block_owner(G[1], dims[1], y)) *
                            dims[2] + block_owner(G[2], dims[2], x);
                MPI_Offset at = HDR + (((MPI_Offset)z * G[1] + y) * G[2] + x) * ESZ;
                io_fill(img + at, ESZ, io_seed(o, test), (uint64_t)at);
            }
    /* this rank's block, in memory order (C order) */
    unsigned char *mine = io_malloc((size_t)n * ESZ);
    int k = 0;
    for (int z = start[0]; z < start[0] + sub[0]; z++)
        for (int y = start[1]; y < start[1] + sub[1]; y++)
            for (int x = start[2]; x < start[2] + sub[2]; x++, k++) {
                MPI_Offset at = HDR + (((MPI_Offset)z * G[1] + y) * G[2] + x) * ESZ;
                memcpy(mine + (size_t)k * ESZ, img + at, ESZ);
            }

    char name[32], what[64];
    snprintf(name, sizeof name, "array3d_%d.dat", h);
    snprintf(what, sizeof what, "3-D array, hint set %d", h);
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    if (io_rank == 0)
        IO_CALL(MPI_File_write_at(fh, 0, img, HDR, MPI_BYTE, MPI_STATUS_IGNORE));

    MPI_Datatype ft;
    IO_CALL(MPI_Type_create_subarray(3, G, sub, start, MPI_ORDER_C, MPI_INT64_T, &ft));
    IO_CALL(MPI_Type_commit(&ft));
    IO_CALL(MPI_File_set_view(fh, HDR, MPI_INT64_T, ft, "native", info));
    const int n1 = n / 2, n2 = n - n1;
    MPI_Status st;
    IO_CALL(MPI_File_write_all(fh, mine, n1, MPI_INT64_T, &st));
    IO_STATUS(&st, MPI_INT64_T, n1, n1, "write_all of the first half of the block");
    IO_CALL(MPI_File_write_at_all_begin(fh, n1, mine + (size_t)n1 * ESZ, n2, MPI_INT64_T));
    IO_CALL(MPI_File_write_at_all_end(fh, mine + (size_t)n1 * ESZ, &st));
    IO_STATUS(&st, MPI_INT64_T, n2, n2, "write_at_all_end of the second half");
    MPI_Offset pos = -1;
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == n1, "%s: position %lld, expected %d", what, (long long)pos, n1);
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));

    /* back through the view */
    unsigned char *back = io_malloc((size_t)n * ESZ);
    memset(back, 0, (size_t)n * ESZ);
    IO_CALL(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    IO_CALL(MPI_File_read_all_begin(fh, back, n, MPI_INT64_T));
    IO_CALL(MPI_File_read_all_end(fh, back, &st));
    IO_STATUS(&st, MPI_INT64_T, n, n, "read_all_end of the block");
    IO_SAME(back, mine, (size_t)n * ESZ, "%s: the block read back through the view", what);

    verify_whole(fh, img, fsz, h % 2, what);
    IO_CALL(MPI_File_close(&fh));
    IO_CALL(MPI_Type_free(&ft));
    free(back);
    free(mine);
    free(img);
}

/* ---- cyclic records, vector views ------------------------------------------ */

static void cyclic(int h, MPI_Info info, int per_rank)
{
    const int test = 10 * h + 2, P = io_size;
    const int N = per_rank * P + 3; /* records: the first 3 ranks get one more */
    const int own = (N - io_rank + P - 1) / P, half = own / 2;
    const MPI_Offset fsz = (MPI_Offset)N * REC * 4;
    unsigned char *img = io_malloc((size_t)fsz);
    for (int i = 0; i < N; i++) {
        MPI_Offset at = (MPI_Offset)i * REC * 4;
        io_fill(img + at, REC * 4, io_seed(i % P, test), (uint64_t)at);
    }
    unsigned char *mine = io_malloc((size_t)own * REC * 4);
    for (int j = 0; j < own; j++)
        memcpy(mine + (size_t)j * REC * 4, img + (size_t)(io_rank + j * P) * REC * 4, REC * 4);

    char name[32], what[64];
    snprintf(name, sizeof name, "cyclic_%d.dat", h);
    snprintf(what, sizeof what, "cyclic records, hint set %d", h);
    MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    MPI_Datatype ft;
    IO_CALL(MPI_Type_vector(own, REC, REC * P, MPI_INT, &ft));
    IO_CALL(MPI_Type_commit(&ft));
    IO_CALL(MPI_File_set_view(fh, (MPI_Offset)io_rank * REC * 4, MPI_INT, ft, "native", info));

    /* the first half of the records: even ranks, then odd ranks; the others
     * pass count 0 */
    MPI_Status st;
    for (int parity = 0; parity < 2; parity++) {
        int c = io_rank % 2 == parity ? half * REC : 0;
        IO_CALL(MPI_File_write_at_all(fh, 0, mine, c, MPI_INT, &st));
        IO_STATUS(&st, MPI_INT, c, c, "write_at_all (some ranks with count 0)");
    }
    /* the rest, split collective from the individual pointer */
    IO_CALL(MPI_File_seek(fh, (MPI_Offset)half * REC, MPI_SEEK_SET));
    int rest = (own - half) * REC;
    IO_CALL(MPI_File_write_all_begin(fh, mine + (size_t)half * REC * 4, rest, MPI_INT));
    IO_CALL(MPI_File_write_all_end(fh, mine + (size_t)half * REC * 4, &st));
    IO_STATUS(&st, MPI_INT, rest, rest, "write_all_end of the rest of the records");
    MPI_Offset pos = -1;
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == (MPI_Offset)own * REC, "%s: position %lld after write_all_end, expected %d",
             what, (long long)pos, own * REC);
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));

    unsigned char *back = io_malloc((size_t)own * REC * 4);
    memset(back, 0, (size_t)own * REC * 4);
    IO_CALL(MPI_File_read_at_all(fh, 0, back, own * REC, MPI_INT, &st));
    IO_STATUS(&st, MPI_INT, own * REC, own * REC, "read_at_all of the records");
    IO_SAME(back, mine, (size_t)own * REC * 4, "%s: the records read back through the view", what);

    verify_whole(fh, img, fsz, (h + 1) % 2, what);
    IO_CALL(MPI_File_close(&fh));
    IO_CALL(MPI_Type_free(&ft));
    free(back);
    free(mine);
    free(img);
}

/* Every rank writes the same two 100-byte pieces with a 100-byte hole
 * between (collective buffering forced): the pieces add up to the span,
 * yet the hole must keep what the file had. */
static void overlapping_writes(void)
{
    MPI_Info info = io_info("romio_cb_write", "enable", NULL);
    MPI_File fh = open_file("overlap.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, info);
    unsigned char before[300], piece[200], got[300];
    memset(before, 0x11, sizeof before);
    memset(piece, 0x77, sizeof piece);
    if (io_rank == 0)
        IO_CALL(MPI_File_write_at(fh, 0, before, 300, MPI_BYTE, MPI_STATUS_IGNORE));
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
    int len[2] = {100, 100}, at[2] = {0, 200};
    MPI_Datatype ft;
    IO_CALL(MPI_Type_indexed(2, len, at, MPI_BYTE, &ft));
    IO_CALL(MPI_Type_commit(&ft));
    IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info));
    IO_CALL(MPI_File_write_all(fh, piece, 200, MPI_BYTE, MPI_STATUS_IGNORE));
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    IO_CALL(MPI_File_read_at(fh, 0, got, 300, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < 300; i++)
        IO_CHECK(got[i] == (i >= 100 && i < 200 ? 0x11 : 0x77),
                 "overlapping collective writes: byte %d is %#x", i, got[i]);
    IO_CALL(MPI_File_close(&fh));
    IO_CALL(MPI_Type_free(&ft));
    io_info_free(&info);
}

int main(int argc, char **argv)
{
    io_init(&argc, &argv);
    MPI_Info sets[7];
    sets[0] = MPI_INFO_NULL;
    sets[1] = io_info("cb_buffer_size", "4096", NULL);
    sets[2] = io_info("cb_nodes", "1", NULL);
    sets[3] = io_info("cb_nodes", "2", "cb_buffer_size", "8192", NULL);
    sets[4] = io_info("romio_cb_write", "enable", "romio_cb_read", "enable", NULL);
    sets[5] = io_info("romio_cb_write", "disable", "romio_cb_read", "disable", NULL);
    sets[6] = io_info("romio_cb_write", "enable", "romio_cb_read", "disable", "cb_buffer_size",
                      "4096", NULL);
    for (int h = 0; h < 7; h++) {
        array3d(h, sets[h]);
        cyclic(h, sets[h], 37);
        io_info_free(&sets[h]);
    }
    /* 3 MiB of 20-byte records without hints: two-phase with aggregators
     * by size (one per MiB: all 2 or 4 ranks, 4 of 8) */
    cyclic(7, MPI_INFO_NULL, 40000);
    overlapping_writes();
    io_finish();
    return 0;
}
