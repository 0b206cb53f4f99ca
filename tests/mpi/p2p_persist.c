/*
 * p2p_persist.c — persistent requests: Send_init, Ssend_init, Rsend_init,
 * Bsend_init and Recv_init restarted many times with Startall (the buffer
 * is read at each start), small and rendezvous sizes; an inactive request
 * completes at once with an empty status in Wait/Test/Request_get_status,
 * the Wait/Test families skip inactive requests (MPI_UNDEFINED); handles
 * survive completion and go with Request_free (also while active); a type
 * freed after Send_init keeps working; errors of MPI_Start/Startall.
 */
#include <stdbool.h>

#include "p2p_common.h"

enum { P_SEND, P_SSEND, P_RSEND, P_BSEND, P_COUNT };
static const char *const pname[] = {"Send_init", "Ssend_init", "Rsend_init", "Bsend_init"};

static int rank, size, to, from;

static void check_empty(const MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: not an empty status (source %d tag %d count %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, n);
}

static void restart_loop(int mode, int n, int iters)
{
    unsigned char *sb = malloc((size_t)n + 1), *rb = malloc((size_t)n + 3);
    CHECK(sb && rb, "out of memory");
    MPI_Request req[2];
    int tag = 10 + mode;
    /* receive first in the array: Startall starts them in order */
    MPI_CHECK(MPI_Recv_init(rb + 3, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &req[0]));
    int (*init[])(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = {
        MPI_Send_init, MPI_Ssend_init, MPI_Rsend_init, MPI_Bsend_init};
    MPI_CHECK(init[mode](sb + 1, n, MPI_BYTE, to, tag, MPI_COMM_WORLD, &req[1]));
    MPI_Request keep[2] = {req[0], req[1]};
    for (int it = 0; it < iters; it++) {
        uint64_t seed = (uint64_t)rank << 40 | (uint64_t)mode << 32 | (uint64_t)it;
        p2p_fill(sb + 1, (size_t)n, seed);
        memset(rb + 3, 0, (size_t)n);
        if (mode == P_RSEND) {
            /* ready mode: our receive must be posted before the peer sends */
            MPI_CHECK(MPI_Start(&req[0]));
            MPI_CHECK(MPI_Sendrecv(NULL, 0, MPI_BYTE, from, 99, NULL, 0, MPI_BYTE, to, 99,
                                   MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_CHECK(MPI_Start(&req[1]));
        } else {
            MPI_CHECK(MPI_Startall(2, req));
        }
        MPI_Status sts[2];
        if (it % 3 == 0) {
            MPI_CHECK(MPI_Waitall(2, req, sts));
        } else if (it % 3 == 1) {
            int done = 0, idx;
            while (done < 2) {
                MPI_Status s1;
                MPI_CHECK(MPI_Waitany(2, req, &idx, &s1));
                CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
                sts[idx] = s1;
                done++;
            }
            /* both inactive now: Waitany finds nothing active */
            MPI_Status scratch;
            MPI_CHECK(MPI_Waitany(2, req, &idx, &scratch));
            CHECK(idx == MPI_UNDEFINED, "Waitany on inactive requests: index %d", idx);
            check_empty(&scratch, "Waitany on inactive requests");
            MPI_CHECK(MPI_Wait(&req[0], &scratch));
            check_empty(&scratch, "Wait on an inactive request");
        } else {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Testall(2, req, &flag, sts));
        }
        CHECK(req[0] == keep[0] && req[1] == keep[1],
              "completion changed a persistent handle (%#x %#x -> %#x %#x)", (unsigned)keep[0],
              (unsigned)keep[1], (unsigned)req[0], (unsigned)req[1]);
        CHECK_STATUS(sts[0], from, tag, n);
        uint64_t theirs = (uint64_t)from << 40 | (uint64_t)mode << 32 | (uint64_t)it;
        CHECK(p2p_check(rb + 3, (size_t)n, theirs) < 0, "%s, %d bytes, start %d: data wrong",
              pname[mode], n, it);
    }
    /* Inactive: complete at once, empty status, handle kept. */
    MPI_Status st;
    int flag = 0;
    MPI_CHECK(MPI_Test(&req[1], &flag, &st));
    CHECK(flag && req[1] == keep[1], "MPI_Test on an inactive request");
    check_empty(&st, "MPI_Test on an inactive request");
    flag = 0;
    MPI_CHECK(MPI_Request_get_status(req[0], &flag, &st));
    CHECK(flag, "Request_get_status on an inactive request: flag 0");
    check_empty(&st, "Request_get_status on an inactive request");
    int idx = 5;
    flag = 0;
    MPI_CHECK(MPI_Testany(2, req, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on inactive requests: flag %d index %d", flag,
          idx);
    int outcount = 5;
    int indices[2];
    MPI_CHECK(MPI_Waitsome(2, req, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED, "Waitsome on inactive requests: outcount %d", outcount);
    MPI_CHECK(MPI_Request_free(&req[0]));
    MPI_CHECK(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
          "Request_free did not reset the handles");
    free(sb);
    free(rb);
}

/* A contiguous type freed right after Send_init/Recv_init still works. */
static void freed_type(void)
{
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    int out[6], in[6];
    MPI_Request req[2];
    MPI_CHECK(MPI_Recv_init(in, 2, t, from, 20, MPI_COMM_WORLD, &req[0]));
    MPI_CHECK(MPI_Send_init(out, 2, t, to, 20, MPI_COMM_WORLD, &req[1]));
    MPI_CHECK(MPI_Type_free(&t));
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 6; i++)
            out[i] = rank * 100 + it * 10 + i;
        MPI_CHECK(MPI_Startall(2, req));
        MPI_CHECK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 6; i++)
            CHECK(in[i] == from * 100 + it * 10 + i, "freed type, start %d: int %d is %d", it, i,
                  in[i]);
    }
    MPI_CHECK(MPI_Request_free(&req[0]));
    MPI_CHECK(MPI_Request_free(&req[1]));
}

/* Request_free of an active persistent send: the message still goes. */
static void free_active(void)
{
    int v = 4242 + rank, w = -1;
    MPI_Request s, r;
    MPI_CHECK(MPI_Irecv(&w, 1, MPI_INT, from, 30, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Send_init(&v, 1, MPI_INT, to, 30, MPI_COMM_WORLD, &s));
    MPI_CHECK(MPI_Start(&s));
    MPI_CHECK(MPI_Request_free(&s));
    CHECK(s == MPI_REQUEST_NULL, "Request_free of an active request left the handle");
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(w == 4242 + from, "message of a freed active send: %d", w);
    /* the send buffer may be reused only once we know it left: the
     * receive above tells us */
}

static void errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Start(&r), MPI_ERR_REQUEST);
    int buf = 0;
    MPI_Request rq[2];
    MPI_CHECK(MPI_Recv_init(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[0]));
    MPI_CHECK(MPI_Start(&rq[0]));
    EXPECT_CLASS(MPI_Start(&rq[0]), MPI_ERR_REQUEST); /* already active */
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* the same request twice in Startall */
    rq[1] = rq[0];
    EXPECT_CLASS(MPI_Startall(2, rq), MPI_ERR_REQUEST);
    MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    /* a nonpersistent request */
    MPI_Request nb;
    MPI_CHECK(MPI_Irecv(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &nb));
    EXPECT_CLASS(MPI_Start(&nb), MPI_ERR_REQUEST);
    MPI_CHECK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
    rq[1] = MPI_REQUEST_NULL;
    EXPECT_CLASS(MPI_Startall(2, rq), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Startall(-1, rq), MPI_ERR_COUNT);
    MPI_CHECK(MPI_Startall(0, rq));
    /* argument checks at creation */
    EXPECT_CLASS(MPI_Send_init(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Recv_init(&buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Bsend_init(&buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Ssend_init(&buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD, &r),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Rsend_init(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    MPI_CHECK(MPI_Request_free(&rq[0]));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    int big = 300001;
    /* A rank may run up to size - 1 starts ahead of the neighbour it sends
     * to (which waits for its own left neighbour): that many buffered
     * messages can be pending at once. */
    int bsize = (size + 2) * (big + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    CHECK(battach, "out of memory");
    MPI_CHECK(MPI_Buffer_attach(battach, bsize));
    for (int mode = 0; mode < P_COUNT; mode++) {
        restart_loop(mode, 100, size > 4 ? 50 : 200);
        restart_loop(mode, big, size > 4 ? 6 : 20);
        restart_loop(mode, 0, 10);
    }
    freed_type();
    free_active();
    errors();
    void *b;
    int bs;
    MPI_CHECK(MPI_Buffer_detach(&b, &bs));
    free(battach);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_persist: %d ranks: OK\n", size);
    return 0;
}
