/*
 * coll_reduce_errors.c — argument errors of the reduction-family collectives
 * are raised with the right class through the communicator's error handler
 * (MPI_ERRORS_RETURN here, a user handler on a duplicate), before any
 * communication, so that the next valid collective still works; a receive side
 * too small for a broadcast gets MPI_ERR_TRUNCATE, blocking and nonblocking.
 */
#include "coll_reduce_util.h"

static int rank, size;

static void expect(int rc, int cls, const char *what)
{
    int got = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &got);
    CHECK(rc != MPI_SUCCESS && got == cls, "%s: returned %d (class %d), want class %d", what, rc,
          got, cls);
}

static int handler_calls, handler_code;
static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

/* The collectives still work after errors (nothing was left half done). */
static void still_works(MPI_Comm comm)
{
    int me, n, x, y = -1, inter = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_test_inter(comm, &inter);
    if (inter) /* the sum over the other group */
        MPI_Comm_remote_size(comm, &n);
    else
        MPI_Comm_size(comm, &n);
    x = me + 1;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    CHECK(y == n * (n + 1) / 2, "allreduce after errors = %d", y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm w = MPI_COMM_WORLD;
    int a[16] = {0}, b[16] = {0}, rc[64];
    MPI_Request req;
    for (int i = 0; i < 64; i++)
        rc[i] = 1;

    /* communicator */
    expect(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM, "Barrier(COMM_NULL)");
    expect(MPI_Ibarrier(MPI_COMM_NULL, &req), MPI_ERR_COMM, "Ibarrier(COMM_NULL)");
    expect(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, (MPI_Comm)0x1234567), MPI_ERR_COMM,
           "Allreduce(bogus comm)");
    expect(MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM, "Bcast(COMM_NULL)");
    expect(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM, "Scan(COMM_NULL)");
    /* count */
    expect(MPI_Bcast(a, -1, MPI_INT, 0, w), MPI_ERR_COUNT, "Bcast(count -1)");
    expect(MPI_Reduce(a, b, -1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_COUNT, "Reduce(count -1)");
    expect(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT, "Allreduce(count -2)");
    expect(MPI_Iallreduce(a, b, -2, MPI_INT, MPI_SUM, w, &req), MPI_ERR_COUNT,
           "Iallreduce(count -2)");
    expect(MPI_Scan(a, b, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT, "Scan(count -1)");
    expect(MPI_Exscan(a, b, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT, "Exscan(count -1)");
    expect(MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT,
           "Reduce_scatter_block(count -1)");
    rc[size - 1] = -1;
    expect(MPI_Reduce_scatter(a, b, rc, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT,
           "Reduce_scatter(recvcounts[last] -1)");
    rc[size - 1] = 1;
    expect(MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, w), MPI_ERR_ARG,
           "Reduce_scatter(recvcounts NULL)");
    /* datatype */
    MPI_Datatype unc;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &unc));
    expect(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE, "Bcast(DATATYPE_NULL)");
    expect(MPI_Allreduce(a, b, 1, unc, MPI_SUM, w), MPI_ERR_TYPE, "Allreduce(uncommitted)");
    expect(MPI_Ireduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, 0, w, &req), MPI_ERR_TYPE,
           "Ireduce(DATATYPE_NULL)");
    MPI_CHECK(MPI_Type_free(&unc));
    /* operation */
    expect(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP, "Allreduce(OP_NULL)");
    expect(MPI_Allreduce(a, b, 1, MPI_BYTE, MPI_SUM, w), MPI_ERR_OP, "Allreduce(SUM, BYTE)");
    expect(MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_BAND, 0, w), MPI_ERR_OP, "Reduce(BAND, DOUBLE)");
    expect(MPI_Scan(a, b, 1, MPI_INT, MPI_MINLOC, w), MPI_ERR_OP, "Scan(MINLOC, INT)");
    expect(MPI_Reduce_scatter_block(a, b, 1, MPI_FLOAT, MPI_LXOR, w), MPI_ERR_OP,
           "Reduce_scatter_block(LXOR, FLOAT)");
    /* no data does not make a wrong operation right (the zero-byte path) */
    expect(MPI_Reduce_scatter_block(a, b, 0, MPI_FLOAT, MPI_LXOR, w), MPI_ERR_OP,
           "Reduce_scatter_block(count 0, LXOR, FLOAT)");
    expect(MPI_Reduce_scatter_block(a, b, 0, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP,
           "Reduce_scatter_block(count 0, MPI_OP_NULL)");
    /* root */
    expect(MPI_Bcast(a, 1, MPI_INT, size, w), MPI_ERR_ROOT, "Bcast(root size)");
    expect(MPI_Bcast(a, 1, MPI_INT, -1, w), MPI_ERR_ROOT, "Bcast(root -1)");
    expect(MPI_Ibcast(a, 1, MPI_INT, MPI_ROOT, w, &req), MPI_ERR_ROOT,
           "Ibcast(MPI_ROOT on an intracommunicator)");
    expect(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size + 3, w), MPI_ERR_ROOT, "Reduce(root)");
    /* request */
    expect(MPI_Ibarrier(w, NULL), MPI_ERR_ARG, "Ibarrier(request NULL)");
    expect(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_ARG,
           "Iallreduce(request NULL)");
    expect(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_ARG, "Iscan(request NULL)");
    /* buffers */
    expect(MPI_Allreduce(a, NULL, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
           "Allreduce(recvbuf NULL)");
    expect(MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
           "Allreduce(sendbuf == recvbuf)");
    expect(MPI_Allreduce(a, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER,
           "Allreduce(recvbuf IN_PLACE)");
    expect(MPI_Bcast(NULL, 4, MPI_INT, 0, w), MPI_ERR_BUFFER, "Bcast(NULL)");
    expect(MPI_Scan(a, a, 2, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER, "Scan(sendbuf == recvbuf)");
    if (size > 1 && rank != 0) /* only the root may pass MPI_IN_PLACE (rank 0 stays out) */
        expect(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_BUFFER,
               "Reduce(IN_PLACE off the root)");
    still_works(w);

    /* a user handler on a duplicate sees the error */
    MPI_Comm d;
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_dup(w, &d));
    MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(d, eh));
    int r = MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, d);
    CHECK(handler_calls == 1 && handler_code == r, "user handler calls %d code %d (returned %d)",
          handler_calls, handler_code, r);
    expect(r, MPI_ERR_COUNT, "Allreduce(count -1) on dup with a user handler");
    still_works(d);

    /* intercommunicator rules */
    if (size >= 2) {
        MPI_Comm local, ic;
        MPI_CHECK(MPI_Comm_split(w, rank % 2, rank, &local));
        MPI_CHECK(MPI_Intercomm_create(local, 0, w, rank % 2 ? 0 : 1, 7, &ic));
        MPI_CHECK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
        expect(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, "Scan(intercomm)");
        expect(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM,
               "Iexscan(intercomm)");
        expect(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER,
               "Allreduce(IN_PLACE, intercomm)");
        int rsize;
        MPI_Comm_remote_size(ic, &rsize);
        expect(MPI_Bcast(a, 1, MPI_INT, rsize, ic), MPI_ERR_ROOT, "Bcast(intercomm, root)");
        expect(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, -7, ic), MPI_ERR_ROOT,
               "Reduce(intercomm, root -7)");
        still_works(ic);
        MPI_CHECK(MPI_Comm_free(&ic));
        MPI_CHECK(MPI_Comm_free(&local));
    }

    /* truncation: ranks 0 and 1 alone, 1 expects less than 0 sends */
    MPI_Comm pair;
    MPI_CHECK(MPI_Comm_split(w, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair));
    if (pair != MPI_COMM_NULL && size >= 2) {
        MPI_CHECK(MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN));
        for (int nb = 0; nb < 2; nb++) {
            int n = rank == 0 ? 8 : 4, e;
            if (nb) {
                MPI_CHECK(MPI_Ibcast(a, n, MPI_INT, 0, pair, &req));
                e = MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                e = MPI_Bcast(a, n, MPI_INT, 0, pair);
            }
            if (rank == 1)
                expect(e, MPI_ERR_TRUNCATE, nb ? "Ibcast truncated" : "Bcast truncated");
            else
                CHECK(e == MPI_SUCCESS, "Bcast root returned %d", e);
        }
        still_works(pair);
    }
    if (pair != MPI_COMM_NULL)
        MPI_CHECK(MPI_Comm_free(&pair));
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&d));
    still_works(w);
    if (rank == 0)
        printf("coll_reduce_errors: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
