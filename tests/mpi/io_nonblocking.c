/*
 * io_nonblocking.c — nonblocking data access (MPI-4.1 §14.4.2-14.4.5).
 *
 * Checks:
 *  - MPI_File_iwrite_at: 64 requests of different sizes (1 B to 40 KB, from
 *    unaligned buffers) in flight per rank, MPI_Waitall with an array of
 *    statuses, each counting its bytes; MPI_File_iread_at of the same
 *    pieces into guarded buffers, completed by an MPI_Testany loop that
 *    checks each piece as it completes (and ends with MPI_UNDEFINED);
 *  - MPI_File_iwrite/iread: the individual pointer moves when a request is
 *    started (MPI_File_get_position before completion);
 *  - MPI_File_iwrite_shared/iread_shared: records from every rank, each in
 *    the file exactly once, each read by exactly one rank;
 *  - an MPI_Test loop with computation between the tests until a 2-4 MiB
 *    write, then read, completes;
 *  - MPI_File_iwrite_at_all/iwrite_all/iread_at_all/iread_all (MPI-3.1)
 *    over a strided view, each in flight together with a ring of
 *    MPI_Isend/MPI_Irecv, and two of them at once on two files; their
 *    statuses count the data, and the file and the messages are checked.
 */
#include "io_util.h"

#define GUARD 0xEE
#define NREQ 64

static MPI_File open_file(const char *name, int amode)
{
    char p[2048];
    MPI_File fh = MPI_FILE_NULL;
    IO_CALL(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, name), amode, MPI_INFO_NULL, &fh));
    return fh;
}

static void sync_all(MPI_File fh)
{
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
}

static int piece_size(int i)
{
    static const int s[] = {1, 7, 4097, 40000, 3, 512, 65, 12345};
    return s[i % 8] + i;
}

/* ---- many explicit-offset requests ---------------------------------------- */

static void many_at(void)
{
    MPI_File fh = open_file("many.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_Offset off[NREQ], cur = 0;
    int sz[NREQ];
    for (int i = 0; i < NREQ; i++) {
        sz[i] = piece_size(i);
        off[i] = cur;
        cur += sz[i] + 5;
    }
    const MPI_Offset base = (MPI_Offset)io_rank * cur;
    unsigned char *w[NREQ], *r[NREQ];
    MPI_Request req[NREQ];
    MPI_Status st[NREQ];
    for (int i = 0; i < NREQ; i++) {
        w[i] = io_malloc((size_t)sz[i] + 1);
        io_fill(w[i] + 1, (size_t)sz[i], io_seed(io_rank, 1), (uint64_t)(base + off[i]));
        IO_CALL(MPI_File_iwrite_at(fh, base + off[i], w[i] + 1, sz[i], MPI_BYTE, &req[i]));
    }
    IO_CALL(MPI_Waitall(NREQ, req, st));
    for (int i = 0; i < NREQ; i++) {
        IO_CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
        IO_STATUS(&st[i], MPI_BYTE, sz[i], sz[i], "iwrite_at status");
        free(w[i]);
    }

    /* read them back, every rank its neighbour's, completing with Testany */
    sync_all(fh);
    const int nb = (io_rank + 1) % io_size;
    const MPI_Offset nbase = (MPI_Offset)nb * cur;
    for (int i = 0; i < NREQ; i++) {
        r[i] = io_malloc((size_t)sz[i] + 9);
        memset(r[i], GUARD, (size_t)sz[i] + 9);
        IO_CALL(MPI_File_iread_at(fh, nbase + off[i], r[i] + 1, sz[i], MPI_BYTE, &req[i]));
    }
    int done = 0, spins = 0, flag = 0, idx = -1;
    char what[96];
    while (done < NREQ) {
        MPI_Status s1;
        IO_CALL(MPI_Testany(NREQ, req, &idx, &flag, &s1));
        spins++;
        if (!flag)
            continue;
        IO_CHECK(idx >= 0 && idx < NREQ, "MPI_Testany: flag set, index %d", idx);
        IO_CHECK(req[idx] == MPI_REQUEST_NULL, "MPI_Testany did not free request %d", idx);
        snprintf(what, sizeof what, "iread_at %d (%d bytes at %lld)", idx, sz[idx],
                 (long long)(nbase + off[idx]));
        IO_STATUS(&s1, MPI_BYTE, sz[idx], sz[idx], what);
        IO_VERIFY(r[idx] + 1, (size_t)sz[idx], io_seed(nb, 1), nbase + off[idx], "%s", what);
        IO_GUARD(r[idx], 1, GUARD, "%s: before the buffer", what);
        IO_GUARD(r[idx] + 1 + sz[idx], 8, GUARD, "%s: after the buffer", what);
        done++;
    }
    IO_CALL(MPI_Testany(NREQ, req, &idx, &flag, MPI_STATUS_IGNORE));
    IO_CHECK(flag && idx == MPI_UNDEFINED, "MPI_Testany with no active request: flag %d index %d",
             flag, idx);
    for (int i = 0; i < NREQ; i++)
        free(r[i]);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- the individual pointer moves at the start -------------------------- */

static void pointer_requests(void)
{
    MPI_File fh = open_file("ptr.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    enum { N = 16 };
    int sz[N];
    MPI_Offset total = 0;
    for (int i = 0; i < N; i++) {
        sz[i] = piece_size(3 * i) % 9000 + 1;
        total += sz[i];
    }
    const MPI_Offset base = (MPI_Offset)io_rank * total;
    unsigned char *b = io_malloc((size_t)total + 16), *back = io_malloc((size_t)total + 16);
    io_fill(b, (size_t)total, io_seed(io_rank, 2), (uint64_t)base);
    MPI_Request req[N];
    MPI_Status st[N];
    IO_CALL(MPI_File_seek(fh, base, MPI_SEEK_SET));
    MPI_Offset at = 0, pos = -1;
    for (int i = 0; i < N; i++) {
        IO_CALL(MPI_File_iwrite(fh, b + at, sz[i], MPI_BYTE, &req[i]));
        at += sz[i];
        IO_CALL(MPI_File_get_position(fh, &pos));
        IO_CHECK(pos == base + at, "after starting iwrite %d: position %lld, expected %lld", i,
                 (long long)pos, (long long)(base + at));
    }
    IO_CALL(MPI_Waitall(N, req, st));
    for (int i = 0; i < N; i++)
        IO_STATUS(&st[i], MPI_BYTE, sz[i], sz[i], "iwrite status");
    IO_CALL(MPI_File_seek(fh, base, MPI_SEEK_SET));
    memset(back, GUARD, (size_t)total + 16);
    at = 0;
    for (int i = 0; i < N; i++) {
        IO_CALL(MPI_File_iread(fh, back + at, sz[i], MPI_BYTE, &req[i]));
        at += sz[i];
        IO_CALL(MPI_File_get_position(fh, &pos));
        IO_CHECK(pos == base + at, "after starting iread %d: position %lld, expected %lld", i,
                 (long long)pos, (long long)(base + at));
    }
    IO_CALL(MPI_Waitall(N, req, st));
    for (int i = 0; i < N; i++)
        IO_STATUS(&st[i], MPI_BYTE, sz[i], sz[i], "iread status");
    IO_VERIFY(back, (size_t)total, io_seed(io_rank, 2), base, "iwrite/iread with the pointer");
    IO_GUARD(back + total, 16, GUARD, "after the iread data");
    free(b);
    free(back);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- shared pointer requests --------------------------------------------- */

#define RS 48
#define NS 8

static void shared_requests(void)
{
    MPI_File fh = open_file("shared.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char rec[NS][RS];
    MPI_Request req[NS];
    MPI_Status st[NS];
    for (int j = 0; j < NS; j++) {
        int id[2] = {io_rank, j};
        io_fill(rec[j], RS, io_seed(io_rank, 300 + j), 0);
        memcpy(rec[j], id, sizeof id);
        IO_CALL(MPI_File_iwrite_shared(fh, rec[j], RS, MPI_BYTE, &req[j]));
    }
    IO_CALL(MPI_Waitall(NS, req, st));
    for (int j = 0; j < NS; j++)
        IO_STATUS(&st[j], MPI_BYTE, RS, RS, "iwrite_shared status");
    const int N = NS * io_size;
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset sp = -1;
    IO_CALL(MPI_File_get_position_shared(fh, &sp));
    IO_CHECK(sp == (MPI_Offset)N * RS, "shared pointer %lld after every iwrite_shared, expected %d",
             (long long)sp, N * RS);
    sync_all(fh);

    /* every record once in the file */
    unsigned char *all = io_malloc((size_t)N * RS);
    IO_CALL(MPI_File_read_at(fh, 0, all, N * RS, MPI_BYTE, st));
    IO_STATUS(&st[0], MPI_BYTE, N * RS, N * RS, "read of the whole file");
    int *seen = io_malloc(sizeof(int) * (size_t)N);
    memset(seen, 0, sizeof(int) * (size_t)N);
    for (int i = 0; i < N; i++) {
        int id[2];
        memcpy(id, all + (size_t)i * RS, sizeof id);
        IO_CHECK(id[0] >= 0 && id[0] < io_size && id[1] >= 0 && id[1] < NS,
                 "no valid record at offset %d (rank %d seq %d)", i * RS, id[0], id[1]);
        IO_VERIFY(all + (size_t)i * RS + sizeof id, RS - sizeof id, io_seed(id[0], 300 + id[1]),
                  sizeof id, "record of rank %d seq %d at offset %d", id[0], id[1], i * RS);
        IO_CHECK(++seen[id[0] * NS + id[1]] == 1, "record of rank %d seq %d twice", id[0], id[1]);
    }
    free(all);

    /* every rank reads NS records with iread_shared */
    IO_CALL(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int j = 0; j < NS; j++) {
        memset(rec[j], 0, RS);
        IO_CALL(MPI_File_iread_shared(fh, rec[j], RS, MPI_BYTE, &req[j]));
    }
    IO_CALL(MPI_Waitall(NS, req, st));
    int ids[NS];
    for (int j = 0; j < NS; j++) {
        IO_STATUS(&st[j], MPI_BYTE, RS, RS, "iread_shared status");
        int id[2];
        memcpy(id, rec[j], sizeof id);
        IO_CHECK(id[0] >= 0 && id[0] < io_size && id[1] >= 0 && id[1] < NS,
                 "iread_shared: no valid record (rank %d seq %d)", id[0], id[1]);
        IO_VERIFY(rec[j] + sizeof id, RS - sizeof id, io_seed(id[0], 300 + id[1]), sizeof id,
                  "iread_shared: record of rank %d seq %d", id[0], id[1]);
        ids[j] = id[0] * NS + id[1];
    }
    int *every = io_malloc(sizeof(int) * (size_t)N);
    IO_CALL(MPI_Allgather(ids, NS, MPI_INT, every, NS, MPI_INT, MPI_COMM_WORLD));
    memset(seen, 0, sizeof(int) * (size_t)N);
    for (int i = 0; i < N; i++)
        seen[every[i]]++;
    for (int i = 0; i < N; i++)
        IO_CHECK(seen[i] == 1, "record of rank %d seq %d read %d times by iread_shared", i / NS,
                 i % NS, seen[i]);
    free(every);
    free(seen);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- MPI_Test with computation between ------------------------------------ */

static volatile uint64_t work_sink; /* keeps the computation */

static uint64_t work(const unsigned char *p, size_t n, uint64_t acc)
{
    for (size_t i = 0; i < n; i++)
        acc = (acc ^ p[i]) * 0x100000001b3ull;
    return acc;
}

static void test_loop(void)
{
    const size_t n = io_size <= 4 ? ((size_t)4 << 20) + 11 : ((size_t)2 << 20) + 11;
    const MPI_Offset off = (MPI_Offset)io_rank * (MPI_Offset)n;
    MPI_File fh = open_file("progress.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    unsigned char *b = io_malloc(n), *scratch = io_malloc(65536);
    io_fill(b, n, io_seed(io_rank, 4), (uint64_t)off);
    io_fill(scratch, 65536, 99, 0);
    MPI_Request req;
    MPI_Status st;
    int flag = 0;
    long tests = 0;
    uint64_t acc = 1;
    IO_CALL(MPI_File_iwrite_at(fh, off, b, (int)n, MPI_BYTE, &req));
    while (!flag) {
        acc = work(scratch, 4096, acc);
        IO_CALL(MPI_Test(&req, &flag, &st));
        tests++;
    }
    IO_CHECK(req == MPI_REQUEST_NULL, "MPI_Test completed the write but left the request");
    IO_STATUS(&st, MPI_BYTE, (int)n, (int)n, "iwrite_at completed by MPI_Test");
    memset(b, 0, n);
    flag = 0;
    IO_CALL(MPI_File_iread_at(fh, off, b, (int)n, MPI_BYTE, &req));
    while (!flag) {
        acc = work(scratch, 4096, acc);
        IO_CALL(MPI_Test(&req, &flag, &st));
        tests++;
    }
    IO_STATUS(&st, MPI_BYTE, (int)n, (int)n, "iread_at completed by MPI_Test");
    IO_VERIFY(b, n, io_seed(io_rank, 4), off, "read completed by an MPI_Test loop");
    work_sink = acc;
    free(b);
    free(scratch);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- nonblocking collectives with point-to-point in flight ----------------- */

#define MSG 100000

/* A ring exchange started: to the right, from the left. */
static void ring_start(unsigned char *out, unsigned char *in, int tag, MPI_Request *r)
{
    int right = (io_rank + 1) % io_size, left = (io_rank + io_size - 1) % io_size;
    io_fill(out, MSG, io_seed(io_rank, 500 + tag), 0);
    memset(in, 0, MSG);
    IO_CALL(MPI_Irecv(in, MSG, MPI_BYTE, left, tag, MPI_COMM_WORLD, &r[0]));
    IO_CALL(MPI_Isend(out, MSG, MPI_BYTE, right, tag, MPI_COMM_WORLD, &r[1]));
}

static void ring_check(const unsigned char *in, int tag)
{
    int left = (io_rank + io_size - 1) % io_size;
    IO_VERIFY(in, MSG, io_seed(left, 500 + tag), 0, "ring message %d from rank %d", tag, left);
}

static void nb_collectives(void)
{
    const int P = io_size, M = 3001; /* ints per rank */
    MPI_Datatype ft;
    /* rank r's int k at int slot r + P k */
    IO_CALL(MPI_Type_create_resized(MPI_INT, 0, 4 * (MPI_Aint)P, &ft));
    IO_CALL(MPI_Type_commit(&ft));
    MPI_File fh = open_file("nbcoll.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_File fh2 = open_file("nbcoll2.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    IO_CALL(MPI_File_set_view(fh, 4 * (MPI_Offset)io_rank, MPI_INT, ft, "native", MPI_INFO_NULL));
    IO_CALL(MPI_File_set_view(fh2, 4 * (MPI_Offset)io_rank, MPI_INT, ft, "native", MPI_INFO_NULL));
    int *v = io_malloc(sizeof(int) * M), *back = io_malloc(sizeof(int) * M);
    for (int k = 0; k < M; k++)
        v[k] = (io_rank + P * k) * 7 + 3;
    unsigned char *out = io_malloc(MSG), *in = io_malloc(MSG);
    MPI_Request r[4];
    MPI_Status st[4];
    const int h = M / 2;

    /* iwrite_at_all of the first half, with a ring */
    IO_CALL(MPI_File_iwrite_at_all(fh, 0, v, h, MPI_INT, &r[2]));
    ring_start(out, in, 1, r);
    IO_CALL(MPI_Waitall(3, r, st));
    ring_check(in, 1);
    IO_STATUS(&st[2], MPI_INT, h, h, "iwrite_at_all status");
    /* iwrite_all of the second half from the pointer, with a ring */
    IO_CALL(MPI_File_seek(fh, h, MPI_SEEK_SET));
    ring_start(out, in, 2, r);
    IO_CALL(MPI_File_iwrite_all(fh, v + h, M - h, MPI_INT, &r[2]));
    MPI_Offset pos = -1;
    IO_CALL(MPI_File_get_position(fh, &pos));
    IO_CHECK(pos == M, "position %lld after starting iwrite_all, expected %d", (long long)pos, M);
    /* and the whole thing on the second file at the same time */
    IO_CALL(MPI_File_iwrite_at_all(fh2, 0, v, M, MPI_INT, &r[3]));
    IO_CALL(MPI_Waitall(4, r, st));
    ring_check(in, 2);
    IO_STATUS(&st[2], MPI_INT, M - h, M - h, "iwrite_all status");
    IO_STATUS(&st[3], MPI_INT, M, M, "iwrite_at_all status (second file)");
    sync_all(fh);
    sync_all(fh2);

    /* the files as plain ints: int j is (j) * 7 + 3 */
    int *all = io_malloc(sizeof(int) * (size_t)M * (size_t)P);
    MPI_File files[2] = {fh, fh2};
    for (int f = 0; f < 2; f++) {
        IO_CALL(MPI_File_set_view(files[f], 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
        memset(all, 0, sizeof(int) * (size_t)M * (size_t)P);
        IO_CALL(MPI_File_read_at(files[f], 0, all, M * P, MPI_INT, &st[0]));
        IO_STATUS(&st[0], MPI_INT, M * P, M * P, "read of the whole file");
        for (int j = 0; j < M * P; j++)
            IO_CHECK(all[j] == j * 7 + 3, "file %d: int %d is %d, expected %d", f, j, all[j],
                     j * 7 + 3);
        IO_CALL(MPI_File_set_view(files[f], 4 * (MPI_Offset)io_rank, MPI_INT, ft, "native",
                                  MPI_INFO_NULL));
    }
    free(all);

    /* iread_at_all and iread_all, with rings, both files at once */
    memset(back, 0, sizeof(int) * M);
    int *back2 = io_malloc(sizeof(int) * M);
    memset(back2, 0, sizeof(int) * M);
    IO_CALL(MPI_File_iread_at_all(fh, 0, back, h, MPI_INT, &r[2]));
    ring_start(out, in, 3, r);
    IO_CALL(MPI_File_iread_all(fh2, back2, M, MPI_INT, &r[3]));
    IO_CALL(MPI_Waitall(4, r, st));
    ring_check(in, 3);
    IO_STATUS(&st[2], MPI_INT, h, h, "iread_at_all status");
    IO_STATUS(&st[3], MPI_INT, M, M, "iread_all status");
    IO_CALL(MPI_File_seek(fh, h, MPI_SEEK_SET));
    ring_start(out, in, 4, r);
    IO_CALL(MPI_File_iread_all(fh, back + h, M - h, MPI_INT, &r[2]));
    int done = 0;
    while (!done) /* Testall as the progress loop */
        IO_CALL(MPI_Testall(3, r, &done, st));
    ring_check(in, 4);
    IO_STATUS(&st[2], MPI_INT, M - h, M - h, "iread_all status");
    for (int k = 0; k < M; k++) {
        IO_CHECK(back[k] == v[k], "iread_at_all/iread_all: int %d is %d, expected %d", k, back[k],
                 v[k]);
        IO_CHECK(back2[k] == v[k], "iread_all (second file): int %d is %d, expected %d", k,
                 back2[k], v[k]);
    }
    free(back2);
    free(v);
    free(back);
    free(out);
    free(in);
    IO_CALL(MPI_File_close(&fh));
    IO_CALL(MPI_File_close(&fh2));
    IO_CALL(MPI_Type_free(&ft));
}

int main(int argc, char **argv)
{
    io_init(&argc, &argv);
    many_at();
    pointer_requests();
    shared_requests();
    test_loop();
    nb_collectives();
    io_finish();
    return 0;
}
