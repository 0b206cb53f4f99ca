/*
 * p2p_isendrecv.c — MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0).
 *
 * Checks: ring exchanges of 0 B - 4 MiB (eager and rendezvous) with a
 * checksum pattern; the status of the request is the receive's (source,
 * tag, count); a halves matched by plain MPI_Recv / MPI_Send at the peer;
 * noncontiguous types on both sides and in the replace form; completion by
 * MPI_Test polling, by MPI_Waitall over several in flight, and after
 * MPI_Request_free; MPI_PROC_NULL partners; argument errors.
 */
#include <stdbool.h>

#include "mpitest.h"

static int rank, size, right, left;

static unsigned char pat(int from, size_t i, int salt)
{
    return (unsigned char)(from * 31 + (int)(i * 7 % 251) + salt);
}

/* Sizes around the eager/rendezvous switch and odd ones. */
static const size_t sizes[] = {0, 1, 7, 4096, 65535, 65537, 300001, (size_t)4 << 20};

static void ring_exchange(void)
{
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    unsigned char *s = malloc(max + 3), *r = malloc(max + 3);
    CHECK(s && r, "malloc");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++)
            s[i + 3] = pat(rank, i, (int)k); /* odd alignment */
        memset(r, 0xee, max + 3);
        MPI_Request req;
        MPI_Status st;
        /* the tag names the sender: the receive's differs from the send's */
        int tag = 10 + 10 * (int)k;
        MPI_CHECK(MPI_Isendrecv(s + 3, (int)n, MPI_BYTE, right, tag + rank, r + 1, (int)n,
                                MPI_BYTE, left, tag + left, MPI_COMM_WORLD, &req));
        if (k % 2) {
            int done = 0;
            while (!done)
                MPI_CHECK(MPI_Test(&req, &done, &st));
        } else {
            MPI_CHECK(MPI_Wait(&req, &st));
        }
        CHECK(req == MPI_REQUEST_NULL, "request not freed");
        int cnt = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag + left && cnt == (int)n,
              "status: source %d tag %d count %d (size %zu)", st.MPI_SOURCE, st.MPI_TAG, cnt, n);
        CHECK(r[0] == 0xee && r[n + 1] == 0xee, "wrote outside the receive buffer (size %zu)", n);
        for (size_t i = 0; i < n; i++)
            CHECK(r[i + 1] == pat(left, i, (int)k), "byte %zu of %zu: %u, want %u", i, n,
                  r[i + 1], pat(left, i, (int)k));
    }
    free(s);
    free(r);
}

/* The halves match ordinary operations at the peer: rank 0 uses
 * MPI_Isendrecv, rank 1 plain MPI_Recv then MPI_Send. */
static void against_plain(void)
{
    if (size < 2 || rank > 1)
        return;
    enum { N = 200000 };
    int *a = malloc(N * sizeof(int)), *b = malloc(N * sizeof(int));
    CHECK(a && b, "malloc");
    for (int i = 0; i < N; i++)
        a[i] = rank * N + i;
    if (rank == 0) {
        MPI_Request req;
        MPI_CHECK(MPI_Isendrecv(a, N, MPI_INT, 1, 5, b, N, MPI_INT, 1, 6, MPI_COMM_WORLD, &req));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_CHECK(MPI_Recv(b, N, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Send(a, N, MPI_INT, 0, 6, MPI_COMM_WORLD));
    }
    int other = 1 - rank;
    for (int i = 0; i < N; i++)
        CHECK(b[i] == other * N + i, "int %d: %d", i, b[i]);
    free(a);
    free(b);
}

/* Vector types on both sides; the replace form on a vector; several in
 * flight completed by one MPI_Waitall; one freed before completion. */
static void typed_and_replace(void)
{
    enum { K = 1000, NREQ = 4 };
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(K, 2, 3, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int *buf[NREQ], *out = malloc(3 * K * sizeof(int));
    CHECK(out, "malloc");
    for (int i = 0; i < 3 * K; i++)
        out[i] = rank * 100000 + i;
    MPI_Request reqs[NREQ];
    for (int q = 0; q < NREQ; q++) {
        buf[q] = malloc(3 * K * sizeof(int));
        CHECK(buf[q], "malloc");
        for (int i = 0; i < 3 * K; i++)
            buf[q][i] = q < 2 ? -1 : rank * 100000 + q * 10000 + i;
        if (q < 2) /* vector to contiguous 2K ints and back again */
            MPI_CHECK(MPI_Isendrecv(out, 1, vec, right, q, buf[q], 1, vec, left, q,
                                    MPI_COMM_WORLD, &reqs[q]));
        else
            MPI_CHECK(MPI_Isendrecv_replace(buf[q], 1, vec, right, q, left, q, MPI_COMM_WORLD,
                                            &reqs[q]));
    }
    MPI_CHECK(MPI_Waitall(NREQ, reqs, MPI_STATUSES_IGNORE));
    for (int q = 0; q < NREQ; q++)
        for (int i = 0; i < 3 * K; i++) {
            bool in = i % 3 < 2;
            int want = q < 2 ? (in ? left * 100000 + i : -1)
                             : (in ? left : rank) * 100000 + q * 10000 + i;
            CHECK(buf[q][i] == want, "request %d int %d: %d, want %d", q, i, buf[q][i], want);
        }
    /* freed before it completes: the exchange still happens */
    int one = rank, got = -1;
    MPI_Request req;
    MPI_CHECK(MPI_Isendrecv(&one, 1, MPI_INT, right, 77, &got, 1, MPI_INT, left, 77,
                            MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL, "freed request handle");
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* every send left... */
    MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_INT, right, 78, NULL, 0, MPI_INT, left, 78,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* ...and arrived (FIFO) */
    volatile int *g = &got;
    CHECK(*g == left, "freed Isendrecv delivered %d, want %d", *g, left);
    for (int q = 0; q < NREQ; q++)
        free(buf[q]);
    free(out);
    MPI_CHECK(MPI_Type_free(&vec));
}

static void proc_null_and_errors(void)
{
    int x = 5, y = -1;
    MPI_Request req;
    MPI_Status st;
    MPI_CHECK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &y, 1, MPI_INT, MPI_PROC_NULL, 0,
                            MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, &st));
    int cnt = -1;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0 && y == -1,
          "MPI_PROC_NULL status: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                               &req),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isendrecv(&x, -1, MPI_INT, right, 0, &y, 1, MPI_INT, left, 0,
                               MPI_COMM_WORLD, &req),
                 MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Isendrecv_replace(&x, 1, MPI_DATATYPE_NULL, right, 0, left, 0,
                                       MPI_COMM_WORLD, &req),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Isendrecv(&x, 1, MPI_INT, right, 0, &y, 1, MPI_INT, left, 0, MPI_COMM_WORLD,
                               NULL),
                 MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    ring_exchange();
    against_plain();
    typed_and_replace();
    proc_null_and_errors();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
