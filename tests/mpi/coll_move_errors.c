/*
 * coll_move_errors.c — argument errors of the data-movement collectives under
 * MPI_ERRORS_RETURN: each call must fail with the right error class and
 * leave the communicator usable.
 *
 * Errors found on every rank are tested on MPI_COMM_WORLD (every rank makes
 * the same mistake, so no rank is left waiting); mistakes in arguments that
 * only the root reads are tested on MPI_COMM_SELF, where every process is
 * the root. Afterwards valid calls on both must still give right results.
 */
#include "mpitest.h"

static int rank, size;

#define EXPECT(call, cls)                                                          \
    do {                                                                           \
        int e_ = (call);                                                           \
        int c_ = -1;                                                               \
        MPI_Error_class(e_, &c_);                                                  \
        CHECK(e_ != MPI_SUCCESS && c_ == (cls), "%s returned %d (class %d), expected class %d", \
              #call, e_, c_, cls);                                                 \
    } while (0)

static void world_errors(void)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = size;
    int *ibuf = calloc((size_t)(4 * n + 8), sizeof(int));
    int *obuf = calloc((size_t)(4 * n + 8), sizeof(int));
    int *cnt = calloc((size_t)n, sizeof(int)), *dsp = calloc((size_t)n, sizeof(int));
    MPI_Datatype *types = calloc((size_t)n, sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) {
        cnt[i] = 1;
        dsp[i] = i;
        types[i] = MPI_INT;
    }
    MPI_Request req = MPI_REQUEST_NULL;

    /* Communicator. */
    EXPECT(MPI_Gather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Igather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM);
    EXPECT(MPI_Allgather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Alltoall(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, (MPI_Comm)0x1234), MPI_ERR_COMM);
    EXPECT(MPI_Scatterv(ibuf, cnt, dsp, MPI_INT, obuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    /* Root. */
    EXPECT(MPI_Gather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, n, w), MPI_ERR_ROOT);
    EXPECT(MPI_Scatter(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, -5, w), MPI_ERR_ROOT);
    EXPECT(MPI_Gatherv(ibuf, 1, MPI_INT, obuf, cnt, dsp, MPI_INT, MPI_ROOT, w), MPI_ERR_ROOT);
    EXPECT(MPI_Iscatterv(ibuf, cnt, dsp, MPI_INT, obuf, 1, MPI_INT, n + 3, w, &req), MPI_ERR_ROOT);
    /* Counts and types every rank reads. */
    EXPECT(MPI_Gather(ibuf, -1, MPI_INT, obuf, 1, MPI_INT, 0, w), MPI_ERR_COUNT);
    EXPECT(MPI_Gather(ibuf, 1, MPI_DATATYPE_NULL, obuf, 1, MPI_INT, 0, w), MPI_ERR_TYPE);
    EXPECT(MPI_Scatter(ibuf, 1, MPI_INT, obuf, -2, MPI_INT, 0, w), MPI_ERR_COUNT);
    EXPECT(MPI_Allgather(ibuf, 1, MPI_INT, obuf, -1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Allgather(ibuf, 1, MPI_INT, obuf, 1, (MPI_Datatype)0x7777, w), MPI_ERR_TYPE);
    EXPECT(MPI_Allgatherv(ibuf, 1, MPI_INT, obuf, NULL, dsp, MPI_INT, w), MPI_ERR_ARG);
    EXPECT(MPI_Alltoall(ibuf, 1, MPI_INT, obuf, -1, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoallv(ibuf, NULL, dsp, MPI_INT, obuf, cnt, dsp, MPI_INT, w), MPI_ERR_ARG);
    EXPECT(MPI_Alltoallv(ibuf, cnt, dsp, MPI_INT, obuf, cnt, NULL, MPI_INT, w), MPI_ERR_ARG);
    EXPECT(MPI_Alltoallw(ibuf, cnt, dsp, types, obuf, cnt, dsp, NULL, w), MPI_ERR_ARG);
    cnt[n - 1] = -4;
    EXPECT(MPI_Allgatherv(ibuf, 1, MPI_INT, obuf, cnt, dsp, MPI_INT, w), MPI_ERR_COUNT);
    EXPECT(MPI_Alltoallv(ibuf, cnt, dsp, MPI_INT, obuf, cnt, dsp, MPI_INT, w), MPI_ERR_COUNT);
    cnt[n - 1] = 1;
    types[n - 1] = MPI_DATATYPE_NULL;
    EXPECT(MPI_Alltoallw(ibuf, cnt, dsp, types, obuf, cnt, dsp, types, w), MPI_ERR_TYPE);
    types[n - 1] = MPI_INT;
    /* An uncommitted type. */
    MPI_Datatype pair;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &pair));
    EXPECT(MPI_Alltoall(ibuf, 1, pair, obuf, 1, pair, w), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_free(&pair));
    /* Buffers. */
    EXPECT(MPI_Allgather(ibuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoall(ibuf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Ialltoallw(MPI_IN_PLACE, cnt, dsp, types, MPI_IN_PLACE, cnt, dsp, types, w, &req),
           MPI_ERR_BUFFER);
    /* The same buffer for both sides instead of MPI_IN_PLACE. */
    EXPECT(MPI_Allgather(obuf, 1, MPI_INT, obuf, 1, MPI_INT, w), MPI_ERR_BUFFER);
    EXPECT(MPI_Alltoallv(obuf, cnt, dsp, MPI_INT, obuf, cnt, dsp, MPI_INT, w), MPI_ERR_BUFFER);
    /* Each rank's block for itself must fit where it goes. */
    EXPECT(MPI_Alltoall(ibuf, 2, MPI_INT, obuf, 1, MPI_INT, w), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Allgather(ibuf, 3, MPI_INT, obuf, 2, MPI_INT, w), MPI_ERR_TRUNCATE);
    /* The request argument. */
    EXPECT(MPI_Ialltoall(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, w, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Iallgather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, w, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Igather(ibuf, 1, MPI_INT, obuf, 1, MPI_INT, 0, w, NULL), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL, "a failed call set the request");
    free(ibuf);
    free(obuf);
    free(cnt);
    free(dsp);
    free(types);
}

/* Arguments only the root reads: on MPI_COMM_SELF every process is root. */
static void root_errors(void)
{
    MPI_Comm s = MPI_COMM_SELF;
    int a[4] = {1, 2, 3, 4}, b[4] = {0};
    int one = 1, zero = 0, neg = -1;
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT(MPI_Gather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, s), MPI_ERR_BUFFER);
    EXPECT(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, 0, s), MPI_ERR_TYPE);
    EXPECT(MPI_Gather(a, 1, MPI_INT, b, -1, MPI_INT, 0, s), MPI_ERR_COUNT);
    EXPECT(MPI_Gather(a, 2, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Gather(b, 1, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_BUFFER);
    EXPECT(MPI_Scatter(b, 1, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_BUFFER);
    EXPECT(MPI_Gatherv(a, 1, MPI_INT, b, NULL, &zero, MPI_INT, 0, s), MPI_ERR_ARG);
    EXPECT(MPI_Igatherv(a, 1, MPI_INT, b, &neg, &zero, MPI_INT, 0, s, &req), MPI_ERR_COUNT);
    EXPECT(MPI_Scatter(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_BUFFER);
    EXPECT(MPI_Scatter(a, -3, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_COUNT);
    EXPECT(MPI_Scatterv(a, &one, NULL, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_ARG);
    EXPECT(MPI_Scatterv(a, &neg, &zero, MPI_INT, b, 1, MPI_INT, 0, s), MPI_ERR_COUNT);
    EXPECT(MPI_Scatterv(a, &one, &zero, MPI_DATATYPE_NULL, b, 1, MPI_INT, 0, s), MPI_ERR_TYPE);
    EXPECT(MPI_Iscatter(a, 1, MPI_INT, b, 1, MPI_INT, 0, s, NULL), MPI_ERR_ARG);
    CHECK(req == MPI_REQUEST_NULL, "a failed call set the request");
    /* Still works. */
    MPI_CHECK(MPI_Gather(a, 2, MPI_INT, b, 2, MPI_INT, 0, s));
    CHECK(b[0] == 1 && b[1] == 2, "self gather: %d %d", b[0], b[1]);
    MPI_CHECK(MPI_Scatterv(a + 2, &one, &one, MPI_INT, b + 3, 1, MPI_INT, 0, s));
    CHECK(b[3] == 4, "self scatterv: %d", b[3]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    world_errors();
    root_errors();
    /* The world still works after all those errors. */
    int *all = malloc(sizeof(int) * (size_t)size), *back = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        all[i] = rank * 100 + i;
    MPI_CHECK(MPI_Alltoall(all, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(back[i] == i * 100 + rank, "alltoall after errors: [%d] = %d", i, back[i]);
    MPI_CHECK(MPI_Allgather(&rank, 1, MPI_INT, back, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(back[i] == i, "allgather after errors: [%d] = %d", i, back[i]);
    free(all);
    free(back);
    if (rank == 0)
        printf("coll_move_errors: OK on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
