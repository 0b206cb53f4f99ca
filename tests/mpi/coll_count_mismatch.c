/*
 * coll_count_mismatch.c — collectives whose ranks pass counts that disagree
 * (the MPICH suite's errors/coll/ *length tests, as users write them):
 * no rank hangs, every rank that can see the mismatch reports it (those fed
 * by a failed rank through PM_COLL_FAILED_BIT too), a rank that finds its
 * own block too small or too large still takes part, and the next valid
 * collective works (nothing of the failed one is left for it to match).
 * Also the aliasing a rank can see alone (sendbuf at its own block of
 * recvbuf), refused before any communication.
 *
 * Usage: coll_count_mismatch   (any number of ranks; the interesting ones 3+)
 */
#include <string.h>

#include "coll_reduce_util.h"

static int rank, size;

/* The rank failed, with a class that says what went wrong. */
static void expect_failed(int rc, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_TRUNCATE || cls == MPI_ERR_OTHER ||
                                cls == MPI_ERR_BUFFER),
          "%s: rank %d returned %d (class %d), want a failure", what, rank, rc, cls);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, text, &len);
        CHECK(len > 0, "%s: empty error string", what);
    }
}

/* The next collective matches on every rank. */
static void still_works(const char *after)
{
    int x = rank + 1, y = -1;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == size * (size + 1) / 2, "allreduce after %s = %d", after, y);
    int v[4] = {rank, rank, rank, rank};
    MPI_CHECK(MPI_Bcast(v, 4, MPI_INT, size - 1, MPI_COMM_WORLD));
    CHECK(v[0] == size - 1 && v[3] == size - 1, "bcast after %s = %d", after, v[0]);
}

static int run(int nb, MPI_Request *req, int rc)
{
    if (!nb || rc != MPI_SUCCESS)
        return rc;
    return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static int *buf_a, *buf_b;

/* One call of the collective under test with this rank's count `n`. */
typedef int (*coll_fn)(int nb, int n, MPI_Request *req);

static int bcast_call(int nb, int n, MPI_Request *req)
{
    return nb ? MPI_Ibcast(buf_a, n, MPI_INT, 0, MPI_COMM_WORLD, req)
              : MPI_Bcast(buf_a, n, MPI_INT, 0, MPI_COMM_WORLD);
}

static int allreduce_call(int nb, int n, MPI_Request *req)
{
    return nb ? MPI_Iallreduce(buf_a, buf_b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, req)
              : MPI_Allreduce(buf_a, buf_b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

/* Rank 0 passes counts[k][0], the others counts[k][1]: every other rank
 * fails, blocking and nonblocking, and the next collective works. */
static void lengths(const char *name, coll_fn call, const int (*counts)[2], size_t n)
{
    for (int nb = 0; nb < 2; nb++)
        for (size_t k = 0; k < n; k++) {
            MPI_Request req;
            int rc = run(nb, &req, call(nb, rank == 0 ? counts[k][0] : counts[k][1], &req));
            char what[64];
            snprintf(what, sizeof what, "%s%s %d vs %d", nb ? "i" : "", name, counts[k][0],
                     counts[k][1]);
            if (rank != 0)
                expect_failed(rc, what);
            still_works(what);
        }
}

/* Rooted and all-to-all: a rank whose own block does not fit its counts
 * reports it and still takes part; the others see its pieces' size. */
static void own_blocks(int *a, int *b)
{
    for (int nb = 0; nb < 2; nb++) {
        MPI_Request req;
        int rc;
        /* gather: the root expects 1 element a rank, the others send 10 */
        rc = nb ? MPI_Igather(a, 10, MPI_INT, b, rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD,
                              &req)
                : MPI_Gather(a, 10, MPI_INT, b, rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD);
        rc = run(nb, &req, rc);
        if (rank == 0)
            expect_failed(rc, "gather, root's block too small");
        still_works("gather");
        /* scatter: the root sends 1 element a rank, the others expect 10 */
        rc = nb ? MPI_Iscatter(a, rank == 0 ? 1 : 10, MPI_INT, b, 10, MPI_INT, 0,
                               MPI_COMM_WORLD, &req)
                : MPI_Scatter(a, rank == 0 ? 1 : 10, MPI_INT, b, 10, MPI_INT, 0, MPI_COMM_WORLD);
        rc = run(nb, &req, rc);
        if (size > 1 && rank != 0)
            expect_failed(rc, "scatter, short pieces");
        if (size > 1 && rank == 0)
            expect_failed(rc, "scatter, root's own block");
        still_works("scatter");
        /* allgather: rank 0 contributes 1 element, its block holds 10 */
        rc = nb ? MPI_Iallgather(a, rank == 0 ? 1 : 10, MPI_INT, b, 10, MPI_INT, MPI_COMM_WORLD,
                                 &req)
                : MPI_Allgather(a, rank == 0 ? 1 : 10, MPI_INT, b, 10, MPI_INT, MPI_COMM_WORLD);
        rc = run(nb, &req, rc);
        expect_failed(rc, "allgather, rank 0 short");
        still_works("allgather");
        /* alltoall: rank 0 sends 2 elements a rank, everyone receives 1 */
        rc = nb ? MPI_Ialltoall(a, rank == 0 ? 2 : 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD,
                                &req)
                : MPI_Alltoall(a, rank == 0 ? 2 : 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
        rc = run(nb, &req, rc);
        expect_failed(rc, rank == 0 ? "alltoall, rank 0's own block" : "alltoall, long piece");
        still_works("alltoall");
    }
}

/* Aliasing each rank sees alone: refused with MPI_ERR_BUFFER before any
 * message (in the MPICH suite only the root calls the rooted ones). */
static void aliases(int *a)
{
    MPI_Request req;
    EXPECT_CLASS(MPI_Allgather(&a[rank], 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD),
                 MPI_ERR_BUFFER);
    EXPECT_CLASS(MPI_Iallgather(&a[rank * 2], 2, MPI_INT, a, 2, MPI_INT, MPI_COMM_WORLD, &req),
                 MPI_ERR_BUFFER);
    int counts[64], displs[64];
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = size - 1 - i;
    }
    EXPECT_CLASS(MPI_Allgatherv(&a[size - 1 - rank], 1, MPI_INT, a, counts, displs, MPI_INT,
                                MPI_COMM_WORLD),
                 MPI_ERR_BUFFER);
    if (rank == 0) {
        EXPECT_CLASS(MPI_Gather(a, 2, MPI_INT, a, 2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        EXPECT_CLASS(MPI_Scatter(a, 2, MPI_INT, a, 2, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    }
    if (rank == size - 1) { /* the root's block is not at the start of the buffer */
        EXPECT_CLASS(MPI_Gather(&a[2 * rank], 2, MPI_INT, a, 2, MPI_INT, rank, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
        EXPECT_CLASS(MPI_Scatter(a, 2, MPI_INT, &a[2 * rank], 2, MPI_INT, rank, MPI_COMM_WORLD),
                     MPI_ERR_BUFFER);
    }
    int x[4] = {1, 2, 3, 4};
    EXPECT_CLASS(MPI_Reduce_local(x, x, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK(x[3] == 4, "Reduce_local with aliased buffers changed them");
    still_works("aliases");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks");
    int *a = calloc((size_t)size * 4096, sizeof *a), *b = calloc((size_t)size * 4096, sizeof *b);
    CHECK(a && b, "out of memory");
    buf_a = a;
    buf_b = b;
    if (size > 1) {
        /* bcast: small (the engine's blocking path) and mid-size (direct
         * mode), the root's count smaller and larger */
        static const int bcast_counts[][2] = {{1, 10}, {10, 1}, {1000, 2000}, {2000, 1000}};
        lengths("bcast", bcast_call, bcast_counts, 4);
        static const int allreduce_counts[][2] = {{1, 10}, {10, 1}, {300, 600}};
        lengths("allreduce", allreduce_call, allreduce_counts, 3);
    }
    own_blocks(a, b);
    aliases(a);
    /* the new codes say what happened */
    char text[MPI_MAX_ERROR_STRING];
    int len, cls;
    MPI_CHECK(MPI_Error_string(PROUST_MPI_ERR_COLL_SIZE, text, &len));
    CHECK(strstr(text, "counts or types"), "PROUST_MPI_ERR_COLL_SIZE reads \"%s\"", text);
    MPI_CHECK(MPI_Error_class(PROUST_MPI_ERR_COLL_FAILED, &cls));
    CHECK(cls == MPI_ERR_OTHER, "PROUST_MPI_ERR_COLL_FAILED is of class %d", cls);
    free(a);
    free(b);
    if (rank == 0)
        printf("coll_count_mismatch: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
