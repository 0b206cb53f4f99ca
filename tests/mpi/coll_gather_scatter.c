/*
 * coll_gather_scatter.c — MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv
 * and their nonblocking forms on MPI_COMM_WORLD: blocking and nonblocking,
 * every root placement (first, middle, last), block sizes from 0 bytes up to
 * the argument (default 64 KiB; crosses the tree/linear switch), MPI_IN_PLACE
 * at the root, irregular counts with zeros and displacements out of rank order
 * with gaps. Results are checked byte for byte against the pattern each sender
 * wrote (mt_fill, seeded by sender, receiver and call), and bytes the operation
 * must not touch are checked to be unchanged.
 *
 * Usage: coll_gather_scatter [max block bytes]
 */
#include "mpitest.h"

static int rank, size;
static int call_no;

#define GUARD 0xEE

static uint64_t seed_of(int from, int to)
{
    return ((uint64_t)call_no << 40) ^ ((uint64_t)from << 20) ^ (uint64_t)to ^ 0x5bd1e995ull;
}

static void check_guard(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == GUARD, "%s: byte %zu overwritten (call %d)", what, i, call_no);
}

/* Irregular counts for the v-variants: zero for every third rank. */
static int vcount(int r, size_t base)
{
    return r % 3 == 1 ? 0 : (int)(base + (size_t)r * 3 + 1);
}

/* Displacements in reverse rank order, 5 bytes of gap before each block;
 * returns the buffer size. */
static size_t vdispls(size_t base, int *counts, int *displs)
{
    size_t pos = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = vcount(r, base);
        pos += 5;
        displs[r] = (int)pos;
        pos += (size_t)counts[r];
    }
    return pos + 5;
}

static void gather(size_t n, int root, int nb, int inplace)
{
    call_no++;
    unsigned char *sb = malloc(n + 1), *rb = NULL;
    mt_fill(sb, n, seed_of(rank, root));
    if (rank == root) {
        rb = malloc(n * (size_t)size + 1);
        memset(rb, GUARD, n * (size_t)size);
        if (inplace)
            mt_fill(rb + (size_t)rank * n, n, seed_of(rank, root));
    }
    const void *s = inplace && rank == root ? MPI_IN_PLACE : sb;
    /* Arguments that do not matter are given nonsense values. */
    int sc = inplace && rank == root ? -7 : (int)n;
    MPI_Datatype st = inplace && rank == root ? MPI_DATATYPE_NULL : MPI_BYTE;
    int rc = rank == root ? (int)n : -3;
    MPI_Datatype rt = rank == root ? MPI_BYTE : MPI_DATATYPE_NULL;
    if (nb) {
        MPI_Request req = MPI_REQUEST_NULL;
        MPI_CHECK(MPI_Igather(s, sc, st, rb, rc, rt, root, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL, "request not freed");
    } else {
        MPI_CHECK(MPI_Gather(s, sc, st, rb, rc, rt, root, MPI_COMM_WORLD));
    }
    if (rank == root) {
        for (int r = 0; r < size; r++) {
            long bad = mt_verify(rb + (size_t)r * n, n, seed_of(r, root));
            CHECK(bad < 0, "gather n=%zu root=%d nb=%d inplace=%d: block of rank %d wrong at %ld",
                  n, root, nb, inplace, r, bad);
        }
    }
    free(sb);
    free(rb);
}

static void gatherv(size_t base, int root, int nb, int inplace)
{
    call_no++;
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    size_t total = vdispls(base, counts, displs);
    size_t n = (size_t)counts[rank];
    unsigned char *sb = malloc(n + 1), *rb = NULL;
    mt_fill(sb, n, seed_of(rank, root));
    if (rank == root) {
        rb = malloc(total);
        memset(rb, GUARD, total);
        if (inplace)
            mt_fill(rb + displs[rank], n, seed_of(rank, root));
    }
    const void *s = inplace && rank == root ? MPI_IN_PLACE : sb;
    int sc = inplace && rank == root ? -7 : (int)n;
    MPI_Datatype st = inplace && rank == root ? MPI_DATATYPE_NULL : MPI_BYTE;
    /* Non-roots pass NULL arrays: they are not significant there. */
    const int *rc = rank == root ? counts : NULL, *rd = rank == root ? displs : NULL;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Igatherv(s, sc, st, rb, rc, rd, MPI_BYTE, root, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Gatherv(s, sc, st, rb, rc, rd, MPI_BYTE, root, MPI_COMM_WORLD));
    }
    if (rank == root) {
        for (int r = 0; r < size; r++) {
            long bad = mt_verify(rb + displs[r], (size_t)counts[r], seed_of(r, root));
            CHECK(bad < 0, "gatherv base=%zu root=%d nb=%d inplace=%d: rank %d wrong at %ld", base,
                  root, nb, inplace, r, bad);
            check_guard(rb + displs[r] - 5, 5, "gatherv gap");
        }
        check_guard(rb + total - 5, 5, "gatherv tail");
    }
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

static void scatter(size_t n, int root, int nb, int inplace)
{
    call_no++;
    unsigned char *sb = NULL, *rb = malloc(n + 1);
    memset(rb, GUARD, n + 1);
    if (rank == root) {
        sb = malloc(n * (size_t)size + 1);
        for (int r = 0; r < size; r++)
            mt_fill(sb + (size_t)r * n, n, seed_of(root, r));
    }
    void *r_ = inplace && rank == root ? MPI_IN_PLACE : rb;
    int rc = inplace && rank == root ? -7 : (int)n;
    MPI_Datatype rt = inplace && rank == root ? MPI_DATATYPE_NULL : MPI_BYTE;
    int sc = rank == root ? (int)n : -3;
    MPI_Datatype st = rank == root ? MPI_BYTE : MPI_DATATYPE_NULL;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Iscatter(sb, sc, st, r_, rc, rt, root, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Scatter(sb, sc, st, r_, rc, rt, root, MPI_COMM_WORLD));
    }
    if (inplace && rank == root) {
        check_guard(rb, n + 1, "scatter in place: recvbuf");
    } else {
        long bad = mt_verify(rb, n, seed_of(root, rank));
        CHECK(bad < 0, "scatter n=%zu root=%d nb=%d inplace=%d: wrong at %ld", n, root, nb, inplace,
              bad);
        check_guard(rb + n, 1, "scatter tail");
    }
    if (rank == root) {
        for (int r = 0; r < size; r++)
            CHECK(mt_verify(sb + (size_t)r * n, n, seed_of(root, r)) < 0,
                  "scatter changed sendbuf");
    }
    free(sb);
    free(rb);
}

static void scatterv(size_t base, int root, int nb, int inplace)
{
    call_no++;
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    size_t total = vdispls(base, counts, displs);
    size_t n = (size_t)counts[rank];
    unsigned char *sb = NULL, *rb = malloc(n + 1);
    memset(rb, GUARD, n + 1);
    if (rank == root) {
        sb = malloc(total);
        memset(sb, GUARD, total);
        for (int r = 0; r < size; r++)
            mt_fill(sb + displs[r], (size_t)counts[r], seed_of(root, r));
    }
    void *r_ = inplace && rank == root ? MPI_IN_PLACE : rb;
    int rc = inplace && rank == root ? -7 : (int)n;
    MPI_Datatype rt = inplace && rank == root ? MPI_DATATYPE_NULL : MPI_BYTE;
    const int *sc = rank == root ? counts : NULL, *sd = rank == root ? displs : NULL;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Iscatterv(sb, sc, sd, MPI_BYTE, r_, rc, rt, root, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Scatterv(sb, sc, sd, MPI_BYTE, r_, rc, rt, root, MPI_COMM_WORLD));
    }
    if (!(inplace && rank == root)) {
        long bad = mt_verify(rb, n, seed_of(root, rank));
        CHECK(bad < 0, "scatterv base=%zu root=%d nb=%d: wrong at %ld", base, root, nb, bad);
    }
    check_guard(rb + (inplace && rank == root ? 0 : n), inplace && rank == root ? n + 1 : 1,
                "scatterv recvbuf");
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

/* Typed: ints gathered/scattered with a receive count that is a multiple of
 * the send count's elements (MPI_INT both sides), checked as values. */
static void typed_ints(int root)
{
    call_no++;
    enum { K = 13 };
    int sb[K], *rb = NULL;
    for (int i = 0; i < K; i++)
        sb[i] = rank * 1000 + i;
    if (rank == root)
        rb = malloc(sizeof(int) * K * (size_t)size);
    MPI_CHECK(MPI_Gather(sb, K, MPI_INT, rb, K, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < K; i++)
                CHECK(rb[r * K + i] == r * 1000 + i, "gather int [%d][%d] = %d", r, i,
                      rb[r * K + i]);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < K; i++)
                rb[r * K + i] = -(r * 1000 + i);
    }
    int got[K];
    MPI_CHECK(MPI_Scatter(rb, K, MPI_INT, got, K, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < K; i++)
        CHECK(got[i] == -(rank * 1000 + i), "scatter int [%d] = %d", i, got[i]);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    const size_t sizes[] = {0, 1, 37, 1000, 8192, 8193, 65536, 1 << 20};
    int roots[3] = {0, size / 2, size - 1};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        if (n > max)
            break;
        for (int ri = 0; ri < 3; ri++) {
            if (ri && roots[ri] == roots[ri - 1])
                continue;
            for (int nb = 0; nb < 2; nb++) {
                for (int ip = 0; ip < 2; ip++) {
                    gather(n, roots[ri], nb, ip);
                    scatter(n, roots[ri], nb, ip);
                    if (n <= 65536) {
                        gatherv(n, roots[ri], nb, ip);
                        scatterv(n, roots[ri], nb, ip);
                    }
                }
            }
        }
    }
    for (int ri = 0; ri < 3; ri++)
        typed_ints(roots[ri]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_gather_scatter: %d calls on %d ranks OK\n", call_no, size);
    MPI_Finalize();
    return 0;
}
