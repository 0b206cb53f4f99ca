/*
 * coll_allgather.c — MPI_Allgather, MPI_Allgatherv and their nonblocking
 * forms on MPI_COMM_WORLD: block sizes from 0 bytes up to the argument
 * (default 64 KiB; crosses the recursive-doubling / Bruck / ring switches),
 * MPI_IN_PLACE, irregular counts with zeros and displacements out of rank
 * order with gaps, int data. Results are checked byte for byte against the
 * pattern each rank wrote; gaps must stay untouched.
 *
 * Usage: coll_allgather [max block bytes]
 */
#include "mpitest.h"

static int rank, size;
static int call_no;

#define GUARD 0xEE

static uint64_t seed_of(int from)
{
    return ((uint64_t)call_no << 32) ^ ((uint64_t)from * 0x9e37ull) ^ 0x1234567ull;
}

static void check_guard(const unsigned char *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == GUARD, "%s: byte %zu overwritten (call %d)", what, i, call_no);
}

static void allgather(size_t n, int nb, int inplace)
{
    call_no++;
    unsigned char *sb = malloc(n + 1), *rb = malloc(n * (size_t)size + 1);
    mt_fill(sb, n, seed_of(rank));
    memset(rb, GUARD, n * (size_t)size + 1);
    if (inplace)
        mt_fill(rb + (size_t)rank * n, n, seed_of(rank));
    const void *s = inplace ? MPI_IN_PLACE : sb;
    int sc = inplace ? -1 : (int)n;
    MPI_Datatype st = inplace ? MPI_DATATYPE_NULL : MPI_BYTE;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Iallgather(s, sc, st, rb, (int)n, MPI_BYTE, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Allgather(s, sc, st, rb, (int)n, MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++) {
        long bad = mt_verify(rb + (size_t)r * n, n, seed_of(r));
        CHECK(bad < 0, "allgather n=%zu nb=%d inplace=%d: block of rank %d wrong at %ld", n, nb,
              inplace, r, bad);
    }
    check_guard(rb + n * (size_t)size, 1, "allgather tail");
    free(sb);
    free(rb);
}

static void allgatherv(size_t base, int nb, int inplace)
{
    call_no++;
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    size_t pos = 0;
    for (int r = size - 1; r >= 0; r--) { /* reverse order, 3-byte gaps */
        counts[r] = r % 3 == 2 ? 0 : (int)(base + (size_t)r * 7 + (r & 1));
        pos += 3;
        displs[r] = (int)pos;
        pos += (size_t)counts[r];
    }
    size_t total = pos + 3;
    size_t n = (size_t)counts[rank];
    unsigned char *sb = malloc(n + 1), *rb = malloc(total);
    mt_fill(sb, n, seed_of(rank));
    memset(rb, GUARD, total);
    if (inplace)
        mt_fill(rb + displs[rank], n, seed_of(rank));
    const void *s = inplace ? MPI_IN_PLACE : sb;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Iallgatherv(s, (int)n, MPI_BYTE, rb, counts, displs, MPI_BYTE, MPI_COMM_WORLD,
                                  &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(
            MPI_Allgatherv(s, (int)n, MPI_BYTE, rb, counts, displs, MPI_BYTE, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++) {
        long bad = mt_verify(rb + displs[r], (size_t)counts[r], seed_of(r));
        CHECK(bad < 0, "allgatherv base=%zu nb=%d inplace=%d: block of rank %d wrong at %ld", base,
              nb, inplace, r, bad);
        check_guard(rb + displs[r] - 3, 3, "allgatherv gap");
    }
    check_guard(rb + total - 3, 3, "allgatherv tail");
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

/* Ints with different send and receive counts in matching signatures:
 * 2k ints sent as MPI_INT, received as k MPI_2INT pairs. */
static void typed_pairs(int nb)
{
    call_no++;
    enum { K = 5 };
    int sb[2 * K], *rb = malloc(sizeof(int) * 2 * K * (size_t)size);
    for (int i = 0; i < 2 * K; i++)
        sb[i] = rank * 100 + i;
    if (nb) {
        MPI_Request req;
        MPI_CHECK(MPI_Iallgather(sb, 2 * K, MPI_INT, rb, K, MPI_2INT, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Allgather(sb, 2 * K, MPI_INT, rb, K, MPI_2INT, MPI_COMM_WORLD));
    }
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 2 * K; i++)
            CHECK(rb[r * 2 * K + i] == r * 100 + i, "allgather 2int [%d][%d] = %d", r, i,
                  rb[r * 2 * K + i]);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : 65536;
    const size_t sizes[] = {0, 1, 37, 1000, 10240, 65536, 1 << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        if (sizes[si] > max)
            break;
        for (int nb = 0; nb < 2; nb++) {
            for (int ip = 0; ip < 2; ip++) {
                allgather(sizes[si], nb, ip);
                allgatherv(sizes[si], nb, ip);
            }
        }
    }
    typed_pairs(0);
    typed_pairs(1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_allgather: %d calls on %d ranks OK\n", call_no, size);
    MPI_Finalize();
    return 0;
}
