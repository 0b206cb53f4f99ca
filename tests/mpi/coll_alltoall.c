/*
 * coll_alltoall.c — MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw and their
 * nonblocking forms on MPI_COMM_WORLD: block sizes from 0 bytes up to the
 * argument (default 64 KiB; crosses the Bruck / batched pairwise switches),
 * MPI_IN_PLACE for all three, irregular counts with zeros and displacements
 * out of rank order with gaps, Alltoallw with a different type per peer.
 * Every block is checked byte for byte against the pattern its sender wrote
 * (seeded by sender, receiver and call); gaps must stay untouched.
 *
 * Usage: coll_alltoall [max block bytes]
 */
#include "mpitest.h"

static int rank, size;
static int call_no;

#define GUARD 0xEE

static uint64_t seed_of(int from, int to)
{
    return ((uint64_t)call_no << 40) ^ ((uint64_t)from << 20) ^ (uint64_t)to ^ 0xabcdefull;
}

static void check_guard(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == GUARD, "%s: byte %zu overwritten (call %d)", what, i, call_no);
}

static void alltoall(size_t n, int nb, int inplace)
{
    call_no++;
    size_t all = n * (size_t)size;
    unsigned char *sb = malloc(all + 1), *rb = malloc(all + 1);
    memset(rb, GUARD, all + 1);
    for (int d = 0; d < size; d++)
        mt_fill((inplace ? rb : sb) + (size_t)d * n, n, seed_of(rank, d));
    const void *s = inplace ? MPI_IN_PLACE : sb;
    int sc = inplace ? -1 : (int)n;
    MPI_Datatype st = inplace ? MPI_DATATYPE_NULL : MPI_BYTE;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Ialltoall(s, sc, st, rb, (int)n, MPI_BYTE, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Alltoall(s, sc, st, rb, (int)n, MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++) {
        long bad = mt_verify(rb + (size_t)r * n, n, seed_of(r, rank));
        CHECK(bad < 0, "alltoall n=%zu nb=%d inplace=%d: block from rank %d wrong at %ld", n, nb,
              inplace, r, bad);
    }
    check_guard(rb + all, 1, "alltoall tail");
    free(sb);
    free(rb);
}

/* Bytes rank a sends to rank b; symmetric when in place is tested (the
 * block for a peer is also the block from it). */
static int vbytes(int a, int b, size_t base, int sym)
{
    int x = sym ? a + b : a * 3 + b;
    return x % 4 == 1 ? 0 : (int)(base + (size_t)(x % 5) * 11);
}

/* Displacements in reverse peer order with 4-byte gaps (in units). */
static size_t layout(const int *counts, int *displs, int unit)
{
    size_t pos = 0;
    for (int r = size - 1; r >= 0; r--) {
        pos += 4;
        displs[r] = (int)(pos * (size_t)unit);
        pos += (size_t)counts[r];
    }
    return pos + 4;
}

static void alltoallv(size_t base, int nb, int inplace)
{
    call_no++;
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    for (int r = 0; r < size; r++) {
        sc[r] = vbytes(rank, r, base, inplace);
        rc[r] = vbytes(r, rank, base, inplace);
    }
    size_t stotal = layout(sc, sd, 1), rtotal = layout(rc, rd, 1);
    unsigned char *sb = malloc(stotal), *rb = malloc(rtotal);
    memset(sb, GUARD, stotal);
    memset(rb, GUARD, rtotal);
    for (int d = 0; d < size; d++) {
        if (inplace)
            mt_fill(rb + rd[d], (size_t)rc[d], seed_of(rank, d));
        else
            mt_fill(sb + sd[d], (size_t)sc[d], seed_of(rank, d));
    }
    const void *s = inplace ? MPI_IN_PLACE : sb;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Ialltoallv(s, inplace ? NULL : sc, inplace ? NULL : sd, MPI_BYTE, rb, rc, rd,
                                 MPI_BYTE, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Alltoallv(s, inplace ? NULL : sc, inplace ? NULL : sd, MPI_BYTE, rb, rc, rd,
                                MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++) {
        long bad = mt_verify(rb + rd[r], (size_t)rc[r], seed_of(r, rank));
        CHECK(bad < 0, "alltoallv base=%zu nb=%d inplace=%d: block from %d wrong at %ld", base, nb,
              inplace, r, bad);
        check_guard(rb + rd[r] - 4, 4, "alltoallv gap");
    }
    check_guard(rb + rtotal - 4, 4, "alltoallv tail");
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* Alltoallw: the type for the pair (a, b) depends on a + b, so both sides
 * agree; counts are in elements of that type, displacements in bytes. */
static MPI_Datatype wtype(int a, int b, int *bytes)
{
    static const MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_BYTE, MPI_SHORT};
    static const int sz[4] = {sizeof(int), sizeof(double), 1, sizeof(short)};
    *bytes = sz[(a + b) % 4];
    return types[(a + b) % 4];
}

static void alltoallw(size_t base, int nb, int inplace)
{
    call_no++;
    int n = size;
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *stypes = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rtypes = malloc(sizeof(MPI_Datatype) * (size_t)n);
    int *sbytes = malloc(sizeof(int) * (size_t)n), *rbytes = malloc(sizeof(int) * (size_t)n);
    for (int r = 0; r < n; r++) {
        int es, er;
        stypes[r] = wtype(rank, r, &es);
        rtypes[r] = wtype(r, rank, &er);
        sc[r] = vbytes(rank, r, base, 1) / 8 + (vbytes(rank, r, base, 1) ? 1 : 0);
        rc[r] = vbytes(r, rank, base, 1) / 8 + (vbytes(r, rank, base, 1) ? 1 : 0);
        sbytes[r] = sc[r] * es;
        rbytes[r] = rc[r] * er;
        if (sc[r] == 0)
            stypes[r] = MPI_DATATYPE_NULL; /* not looked at for empty blocks */
    }
    /* Byte displacements, aligned to 8, reverse order, 8-byte gaps. */
    size_t spos = 0, rpos = 0;
    for (int r = n - 1; r >= 0; r--) {
        spos += 8;
        sd[r] = (int)spos;
        spos += ((size_t)sbytes[r] + 7) / 8 * 8;
        rpos += 8;
        rd[r] = (int)rpos;
        rpos += ((size_t)rbytes[r] + 7) / 8 * 8;
    }
    spos += 8;
    rpos += 8;
    unsigned char *sb = malloc(spos), *rb = malloc(rpos);
    memset(sb, GUARD, spos);
    memset(rb, GUARD, rpos);
    for (int d = 0; d < n; d++) {
        if (inplace)
            mt_fill(rb + rd[d], (size_t)rbytes[d], seed_of(rank, d));
        else
            mt_fill(sb + sd[d], (size_t)sbytes[d], seed_of(rank, d));
    }
    const void *s = inplace ? MPI_IN_PLACE : sb;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Ialltoallw(s, sc, sd, stypes, rb, rc, rd, rtypes, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Alltoallw(s, sc, sd, stypes, rb, rc, rd, rtypes, MPI_COMM_WORLD));
    }
    for (int r = 0; r < n; r++) {
        long bad = mt_verify(rb + rd[r], (size_t)rbytes[r], seed_of(r, rank));
        CHECK(bad < 0, "alltoallw base=%zu nb=%d inplace=%d: block from %d wrong at %ld", base, nb,
              inplace, r, bad);
        check_guard(rb + rd[r] - 8, 8, "alltoallw gap");
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(stypes);
    free(rtypes);
    free(sbytes);
    free(rbytes);
}

/* Different send and receive types with one signature: 2k ints out as
 * MPI_INT, in as k MPI_2INT. */
static void typed_pairs(int nb)
{
    call_no++;
    enum { K = 3 };
    int *sb = malloc(sizeof(int) * 2 * K * (size_t)size);
    int *rb = malloc(sizeof(int) * 2 * K * (size_t)size);
    for (int d = 0; d < size; d++)
        for (int i = 0; i < 2 * K; i++)
            sb[d * 2 * K + i] = rank * 10000 + d * 100 + i;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Ialltoall(sb, 2 * K, MPI_INT, rb, K, MPI_2INT, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Alltoall(sb, 2 * K, MPI_INT, rb, K, MPI_2INT, MPI_COMM_WORLD));
    }
    for (int s = 0; s < size; s++)
        for (int i = 0; i < 2 * K; i++)
            CHECK(rb[s * 2 * K + i] == s * 10000 + rank * 100 + i, "alltoall 2int [%d][%d] = %d", s,
                  i, rb[s * 2 * K + i]);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    const size_t sizes[] = {0, 1, 37, 256, 257, 4000, 40000, 65536, 1 << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        if (sizes[si] > max)
            break;
        for (int nb = 0; nb < 2; nb++) {
            for (int ip = 0; ip < 2; ip++) {
                alltoall(sizes[si], nb, ip);
                alltoallv(sizes[si], nb, ip);
                alltoallw(sizes[si], nb, ip);
            }
        }
    }
    typed_pairs(0);
    typed_pairs(1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_alltoall: %d calls on %d ranks OK\n", call_no, size);
    MPI_Finalize();
    return 0;
}
