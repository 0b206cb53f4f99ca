/*
 * p2p_err.c — errors of point-to-point calls under MPI_ERRORS_RETURN:
 * truncation (MPI_ERR_TRUNCATE, status.MPI_ERROR, the count delivered,
 * eager and rendezvous sizes, Recv, Irecv+Wait, Waitall with
 * MPI_ERR_IN_STATUS), bytes that end inside an element of the receive type
 * (MPI_ERR_TYPE) and the classes of invalid arguments: rank, tag (also
 * above the MPI_TAG_UB attribute), count, datatype, communicator, request.
 * After each error, communication still works.
 */
#include <limits.h>
#include <stdbool.h>

#include "p2p_common.h"

static int rank, size, to, from;

static void truncation(void)
{
    static const int sizes[] = {100, 200000};
    for (int k = 0; k < 2; k++) {
        int n = sizes[k], room = n / 2;
        unsigned char *out = malloc((size_t)n), *in = malloc((size_t)n);
        CHECK(out && in, "out of memory");
        p2p_fill(out, (size_t)n, (uint64_t)rank * 7 + (uint64_t)k);
        MPI_Request sr;
        MPI_Status st;
        /* blocking receive */
        MPI_CHECK(MPI_Isend(out, n, MPI_BYTE, to, 5, MPI_COMM_WORLD, &sr));
        memset(in, 0, (size_t)n);
        st.MPI_ERROR = MPI_SUCCESS;
        EXPECT_CLASS(MPI_Recv(in, room, MPI_BYTE, from, 5, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
        CHECK(p2p_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "Recv: status.MPI_ERROR %d",
              st.MPI_ERROR);
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 5, "Recv: status %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
        int cnt = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == room, "Recv: count %d after truncation to %d bytes", cnt, room);
        CHECK(p2p_check(in, (size_t)room, (uint64_t)from * 7 + (uint64_t)k) < 0,
              "Recv: the part that fit is wrong");
        CHECK(in[room] == 0, "Recv wrote past the receive buffer");
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        /* nonblocking receive, error at Wait */
        MPI_Request rr;
        MPI_CHECK(MPI_Isend(out, n, MPI_BYTE, to, 6, MPI_COMM_WORLD, &sr));
        MPI_CHECK(MPI_Irecv(in, room, MPI_BYTE, from, 6, MPI_COMM_WORLD, &rr));
        st.MPI_ERROR = MPI_SUCCESS;
        EXPECT_CLASS(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE);
        CHECK(rr == MPI_REQUEST_NULL, "Wait did not free a failed request");
        CHECK(p2p_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "Wait: status.MPI_ERROR %d",
              st.MPI_ERROR);
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == room, "Wait: count %d after truncation to %d bytes", cnt, room);
        MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        /* Waitall: MPI_ERR_IN_STATUS, the error in the truncated slot only */
        MPI_Request rq[3];
        int a = rank, b = -1;
        MPI_CHECK(MPI_Irecv(&b, 1, MPI_INT, from, 8, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Irecv(in, room, MPI_BYTE, from, 7, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Isend(out, n, MPI_BYTE, to, 7, MPI_COMM_WORLD, &rq[2]));
        MPI_CHECK(MPI_Send(&a, 1, MPI_INT, to, 8, MPI_COMM_WORLD));
        MPI_Status sts[3];
        for (int i = 0; i < 3; i++)
            sts[i].MPI_ERROR = -12345;
        EXPECT_CLASS(MPI_Waitall(3, rq, sts), MPI_ERR_IN_STATUS);
        CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[2].MPI_ERROR == MPI_SUCCESS,
              "Waitall: errors %d and %d in the good slots", sts[0].MPI_ERROR, sts[2].MPI_ERROR);
        CHECK(p2p_class(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE, "Waitall: slot 1 error %d",
              sts[1].MPI_ERROR);
        CHECK(b == from, "Waitall: the good receive got %d", b);
        for (int i = 0; i < 3; i++)
            CHECK(rq[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
        /* and the next message is fine */
        MPI_CHECK(MPI_Sendrecv(out, n, MPI_BYTE, to, 9, in, n, MPI_BYTE, from, 9, MPI_COMM_WORLD,
                               &st));
        CHECK(p2p_check(in, (size_t)n, (uint64_t)from * 7 + (uint64_t)k) < 0,
              "message after the truncations is wrong");
        free(out);
        free(in);
    }
}

static void classes(void)
{
    int buf[4] = {0};
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    /* ranks */
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Ssend(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Isend(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Irecv(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Probe(size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    int flag;
    EXPECT_CLASS(MPI_Iprobe(-9, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Sendrecv(buf, 1, MPI_INT, size, 0, buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD,
                              &st),
                 MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
    /* tags */
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, to, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, to, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Isend(buf, 1, MPI_INT, to, -100, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, from, -2, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Irecv(buf, 1, MPI_INT, from, -3, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    int *ubp = NULL;
    flag = 0;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ubp, &flag));
    CHECK(flag && ubp && *ubp >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag,
          ubp ? *ubp : -1);
    int ub = *ubp;
    if (ub < INT_MAX) {
        EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, to, ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
        EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, from, ub + 1, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
        EXPECT_CLASS(MPI_Issend(buf, 1, MPI_INT, to, ub + 1, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    }
    /* the upper bound itself is a valid tag */
    int x = 77 + rank, y = -1;
    MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, to, ub, &y, 1, MPI_INT, from, ub, MPI_COMM_WORLD,
                           &st));
    CHECK(y == 77 + from && st.MPI_TAG == ub, "tag MPI_TAG_UB: value %d tag %d", y, st.MPI_TAG);
    /* counts */
    EXPECT_CLASS(MPI_Send(buf, -1, MPI_INT, to, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Recv(buf, -1, MPI_INT, from, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Isend(buf, -4, MPI_INT, to, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Irecv(buf, -4, MPI_INT, from, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Bsend(buf, -1, MPI_INT, to, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    /* datatypes */
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_DATATYPE_NULL, to, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Recv(buf, 1, MPI_DATATYPE_NULL, from, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Send(buf, 1, (MPI_Datatype)12345, to, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Isend(buf, 1, MPI_COMM_WORLD, to, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &unc));
    EXPECT_CLASS(MPI_Send(buf, 1, unc, to, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Irecv(buf, 1, unc, from, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_free(&unc));
    /* communicators */
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Probe(0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, (MPI_Comm)MPI_INT), MPI_ERR_COMM);
    MPI_Comm dup, dead;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    dead = dup;
    MPI_CHECK(MPI_Comm_free(&dup));
    EXPECT_CLASS(MPI_Send(buf, 1, MPI_INT, 0, 0, dead), MPI_ERR_COMM);
    /* requests */
    MPI_Request bogus = (MPI_Request)0x7000abcd;
    EXPECT_CLASS(MPI_Wait(&bogus, &st), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Test(&bogus, &flag, &st), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Request_free(&bogus), MPI_ERR_REQUEST);
    r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST);
    MPI_Request arr[2] = {MPI_REQUEST_NULL, (MPI_Request)MPI_COMM_WORLD};
    EXPECT_CLASS(MPI_Waitall(2, arr, MPI_STATUSES_IGNORE), MPI_ERR_REQUEST);
    int idx;
    EXPECT_CLASS(MPI_Waitany(2, arr, &idx, &st), MPI_ERR_REQUEST);
    /* a request freed by Wait is invalid afterwards */
    MPI_Request done;
    MPI_CHECK(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &done));
    MPI_Request stale = done;
    MPI_CHECK(MPI_Wait(&done, &st));
    EXPECT_CLASS(MPI_Wait(&stale, &st), MPI_ERR_REQUEST);
    /* still alive: a plain exchange */
    x = 5;
    MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, to, 1, &y, 1, MPI_INT, from, 1, MPI_COMM_WORLD, &st));
    CHECK(y == 5, "exchange after the errors: %d", y);
}

/* Errors go to the handler of the communicator used, here a user one. */
static int handler_calls, handler_code;
static void count_errors(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
}

static void user_handler(void)
{
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_create_errhandler(count_errors, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(dup, eh));
    int buf = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, dup);
    CHECK(handler_calls == 1 && p2p_class(handler_code) == MPI_ERR_RANK &&
              p2p_class(rc) == MPI_ERR_RANK,
          "user handler: %d calls, code %d, rc %d", handler_calls, handler_code, rc);
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&dup));
}

/* Bytes that end inside an element of a noncontiguous receive type: the
 * signatures differ (MPI_ERR_TYPE, as MPICH reports), blocking and at
 * Wait; a message of whole elements shorter than the type is fine. */
static void partial_elements(void)
{
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    char out[12] = "abcdefghijk";
    int in[6] = {0}, n = -1;
    MPI_Request sr, rr;
    MPI_Status st;
    MPI_CHECK(MPI_Isend(out, 6, MPI_CHAR, to, 11, MPI_COMM_WORLD, &sr));
    EXPECT_CLASS(MPI_Recv(in, 1, every_other, from, 11, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    CHECK(p2p_class(st.MPI_ERROR) == MPI_ERR_TYPE, "Recv: status.MPI_ERROR %d", st.MPI_ERROR);
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Isend(out, 10, MPI_CHAR, to, 12, MPI_COMM_WORLD, &sr));
    MPI_CHECK(MPI_Irecv(in, 1, every_other, from, 12, MPI_COMM_WORLD, &rr));
    EXPECT_CLASS(MPI_Wait(&rr, &st), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Isend(out, 8, MPI_CHAR, to, 13, MPI_COMM_WORLD, &sr));
    MPI_CHECK(MPI_Recv(in, 1, every_other, from, 13, MPI_COMM_WORLD, &st));
    MPI_CHECK(MPI_Get_elements(&st, every_other, &n));
    CHECK(n == 2 && !memcmp(&in[2], out + 4, 4), "two whole elements: %d", n);
    MPI_CHECK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    truncation();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    partial_elements();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    classes();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    user_handler();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_err: %d ranks: OK\n", size);
    return 0;
}
