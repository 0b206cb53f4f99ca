/*
 * p2p_ring.c — MPI_Sendrecv and MPI_Sendrecv_replace around rings (shift
 * by 1 and by every distance), small to 4 MiB messages, different send and
 * receive types, and Sendrecv_replace on a noncontiguous type (the holes
 * of the buffer stay untouched).
 */
#include "p2p_common.h"

static int rank, size;

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    static const int sizes[] = {0, 1, 1000, 100003, (4 << 20) + 1};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    const int maxn = (4 << 20) + 1;
    unsigned char *a = malloc((size_t)maxn + 8), *b = malloc((size_t)maxn + 8);
    CHECK(a && b, "out of memory");
    MPI_Status st;

    for (int shift = 1; shift <= size; shift++) {
        int to = (rank + shift) % size, from = (rank - shift + size) % size;
        for (int si = 0; si < nsizes; si++) {
            int n = sizes[si];
            if (size > 4 && n > 200000 && shift > 2)
                continue; /* keep big rings short with many ranks */
            uint64_t mine = (uint64_t)rank << 32 | (uint64_t)(shift * 16 + si);
            uint64_t theirs = (uint64_t)from << 32 | (uint64_t)(shift * 16 + si);
            /* Sendrecv, unaligned receive buffer, receive count larger. */
            p2p_fill(a, (size_t)n, mine);
            memset(b, 0x5a, (size_t)n + 8);
            MPI_CHECK(MPI_Sendrecv(a, n, MPI_BYTE, to, si, b + 1, n + 4, MPI_BYTE, from, si,
                                   MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, from, si, n);
            CHECK(p2p_check(b + 1, (size_t)n, theirs) < 0, "Sendrecv shift %d size %d corrupted",
                  shift, n);
            CHECK(b[n + 1] == 0x5a, "Sendrecv wrote past the message");
            /* Sendrecv_replace in place. */
            p2p_fill(a, (size_t)n, mine + 1);
            MPI_CHECK(MPI_Sendrecv_replace(a, n, MPI_BYTE, to, 7, from, MPI_ANY_TAG,
                                           MPI_COMM_WORLD, &st));
            CHECK_STATUS(st, from, 7, n);
            CHECK(p2p_check(a, (size_t)n, theirs + 1) < 0,
                  "Sendrecv_replace shift %d size %d corrupted", shift, n);
        }
    }

    /* Different types on the two sides: ints out, bytes in. */
    {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        int v[5] = {rank, rank + 1, rank + 2, rank + 3, rank + 4}, w[5] = {0};
        MPI_CHECK(MPI_Sendrecv(v, 5, MPI_INT, to, 3, w, (int)sizeof w, MPI_BYTE, from, 3,
                               MPI_COMM_WORLD, &st));
        int n;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == (int)sizeof w, "byte count %d", n);
        for (int i = 0; i < 5; i++)
            CHECK(w[i] == from + i, "int %d is %d", i, w[i]);
    }

    /* Sendrecv_replace with a vector type. */
    {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        /* 100 blocks of 2 ints every 3, extent resized to 300 ints so that
         * the second instance follows on the same pattern */
        MPI_Datatype v0, vec;
        MPI_CHECK(MPI_Type_vector(100, 2, 3, MPI_INT, &v0));
        MPI_CHECK(MPI_Type_create_resized(v0, 0, 300 * (MPI_Aint)sizeof(int), &vec));
        MPI_CHECK(MPI_Type_free(&v0));
        MPI_CHECK(MPI_Type_commit(&vec));
        int buf[2 * 300];
        for (int i = 0; i < 600; i++)
            buf[i] = i % 3 == 2 ? -9 : rank * 10000 + i;
        MPI_CHECK(MPI_Sendrecv_replace(buf, 2, vec, to, 4, from, 4, MPI_COMM_WORLD, &st));
        int n;
        MPI_CHECK(MPI_Get_count(&st, vec, &n));
        CHECK(n == 2, "Get_count with the vector type: %d", n);
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 400, "Get_count as ints: %d", n);
        for (int i = 0; i < 600; i++)
            CHECK(buf[i] == (i % 3 == 2 ? -9 : from * 10000 + i), "vector element %d is %d", i,
                  buf[i]);
        MPI_CHECK(MPI_Type_free(&vec));
    }

    free(a);
    free(b);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_ring: %d ranks: OK\n", size);
    return 0;
}
