/*
 * p2p_mprobe.c — matched probes. Four threads of a receiver take messages
 * from the same source with MPI_Mprobe/MPI_Mrecv and MPI_Improbe/
 * MPI_Imrecv: every message is received exactly once, with its own size,
 * tag and data. A message taken by Mprobe is invisible to later probes and
 * receives; Mrecv into a noncontiguous type; truncation; invalid messages.
 *
 * Ranks pair up (even receives from the next odd; a rank without a partner
 * sends to itself).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "p2p_common.h"

#define NMSG 400
#define NTHREADS 4
#define STOP_TAG 1000

static int rank, size;
static int sender;              /* of the receiver: whose messages it takes */
static _Atomic int seen[NMSG];
static _Atomic int total;

static int msg_bytes(int id)
{
    return id % 5 == 0 ? 70000 + id : 4 + id % 300;
}

static void *receiver(void *arg)
{
    int me = (int)(intptr_t)arg;
    for (;;) {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        if (me % 2 == 0) {
            MPI_CHECK(MPI_Mprobe(sender, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &st));
        } else {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Improbe(sender, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
        }
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "no message handle");
        CHECK(st.MPI_SOURCE == sender, "probed source %d, expected %d", st.MPI_SOURCE, sender);
        int n = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        unsigned char *buf = malloc((size_t)n + 1);
        CHECK(buf, "out of memory");
        MPI_Status rst;
        if (me % 2 == 0) {
            MPI_CHECK(MPI_Mrecv(buf, n, MPI_BYTE, &msg, &rst));
        } else {
            MPI_Request rq;
            MPI_CHECK(MPI_Imrecv(buf, n, MPI_BYTE, &msg, &rq));
            MPI_CHECK(MPI_Wait(&rq, &rst));
        }
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv/Imrecv left the message handle");
        CHECK_STATUS(rst, sender, st.MPI_TAG, n);
        if (st.MPI_TAG == STOP_TAG) {
            free(buf);
            return NULL;
        }
        int id;
        memcpy(&id, buf, sizeof id);
        CHECK(id >= 0 && id < NMSG, "message id %d", id);
        CHECK(n == msg_bytes(id) && st.MPI_TAG == id % 17,
              "message %d: %d bytes tag %d, expected %d bytes tag %d", id, n, st.MPI_TAG,
              msg_bytes(id), id % 17);
        CHECK(p2p_check(buf + 4, (size_t)n - 4, (uint64_t)sender << 20 | (uint64_t)id) < 0,
              "message %d corrupted", id);
        int before = atomic_fetch_add(&seen[id], 1);
        CHECK(before == 0, "message %d received %d times", id, before + 1);
        atomic_fetch_add(&total, 1);
        free(buf);
    }
}

/* Send NMSG messages, then one stop message per receiving thread. */
static MPI_Request *send_all(int dest, unsigned char ***bufs)
{
    MPI_Request *reqs = malloc(sizeof *reqs * (NMSG + NTHREADS));
    *bufs = malloc(sizeof **bufs * NMSG);
    CHECK(reqs && *bufs, "out of memory");
    for (int id = 0; id < NMSG; id++) {
        int n = msg_bytes(id);
        unsigned char *b = (*bufs)[id] = malloc((size_t)n);
        CHECK(b, "out of memory");
        memcpy(b, &id, sizeof id);
        p2p_fill(b + 4, (size_t)n - 4, (uint64_t)rank << 20 | (uint64_t)id);
        MPI_CHECK(MPI_Isend(b, n, MPI_BYTE, dest, id % 17, MPI_COMM_WORLD, &reqs[id]));
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, dest, STOP_TAG, MPI_COMM_WORLD, &reqs[NMSG + t]));
    return reqs;
}

static void threaded(void)
{
    /* even ranks receive from rank + 1; odd ranks send to rank - 1 */
    bool recv_role = rank % 2 == 0;
    int partner = recv_role ? rank + 1 : rank - 1;
    if (partner >= size)
        partner = rank; /* alone: both roles */
    MPI_Request *reqs = NULL;
    unsigned char **bufs = NULL;
    if (!recv_role || partner == rank)
        reqs = send_all(partner, &bufs);
    if (recv_role) {
        sender = partner;
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            CHECK(pthread_create(&th[t], NULL, receiver, (void *)(intptr_t)t) == 0,
                  "pthread_create");
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
        CHECK(atomic_load(&total) == NMSG, "%d messages received, expected %d",
              atomic_load(&total), NMSG);
        for (int id = 0; id < NMSG; id++)
            CHECK(atomic_load(&seen[id]) == 1, "message %d received %d times", id,
                  atomic_load(&seen[id]));
    }
    if (reqs) {
        MPI_CHECK(MPI_Waitall(NMSG + NTHREADS, reqs, MPI_STATUSES_IGNORE));
        for (int id = 0; id < NMSG; id++)
            free(bufs[id]);
        free(bufs);
        free(reqs);
    }
}

/* Single-threaded semantics, around a ring. */
static void semantics(void)
{
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int a[10], b[10], x[10], y[10];
    for (int i = 0; i < 10; i++) {
        a[i] = rank * 100 + i;
        b[i] = -(rank * 100 + i);
    }
    MPI_Request sr[2];
    MPI_CHECK(MPI_Isend(a, 10, MPI_INT, to, 1, MPI_COMM_WORLD, &sr[0]));
    MPI_CHECK(MPI_Isend(b, 10, MPI_INT, to, 1, MPI_COMM_WORLD, &sr[1]));
    MPI_Message msg;
    MPI_Status st;
    /* single-completion calls leave MPI_ERROR alone (MPI-3.1 §3.2.5) */
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_CHECK(MPI_Mprobe(from, 1, MPI_COMM_WORLD, &msg, &st));
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Mprobe set status.MPI_ERROR to %d", st.MPI_ERROR);
    /* message A is ours now: a receive with the same envelope gets B */
    MPI_CHECK(MPI_Recv(y, 10, MPI_INT, from, 1, MPI_COMM_WORLD, &st));
    CHECK(y[0] == -(from * 100) && y[9] == -(from * 100 + 9), "Recv after Mprobe got %d",
          y[0]);
    int flag = 1;
    MPI_CHECK(MPI_Iprobe(from, 1, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "Iprobe sees a message taken by Mprobe");
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_CHECK(MPI_Mrecv(x, 10, MPI_INT, &msg, &st));
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Mrecv set status.MPI_ERROR to %d", st.MPI_ERROR);
    CHECK(x[0] == from * 100 && x[9] == from * 100 + 9, "Mrecv got %d", x[0]);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 1, "Mrecv status %d/%d", st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));

    /* Mrecv into a vector type. */
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(5, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_CHECK(MPI_Isend(a, 5, MPI_INT, to, 2, MPI_COMM_WORLD, &sr[0]));
    for (int i = 0; i < 10; i++)
        x[i] = -1;
    MPI_CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &msg, &st));
    CHECK(st.MPI_SOURCE == from, "Mprobe ANY_SOURCE: source %d", st.MPI_SOURCE);
    MPI_Request rq;
    MPI_CHECK(MPI_Imrecv(x, 1, vec, &msg, &rq));
    MPI_CHECK(MPI_Wait(&rq, &st));
    for (int i = 0; i < 10; i++)
        CHECK(x[i] == (i % 2 ? -1 : from * 100 + i / 2), "vector Mrecv: element %d is %d", i,
              x[i]);
    MPI_CHECK(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Type_free(&vec));

    /* Errors, under MPI_ERRORS_RETURN. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    msg = MPI_MESSAGE_NULL;
    EXPECT_CLASS(MPI_Mrecv(x, 10, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
    EXPECT_CLASS(MPI_Mprobe(size, 0, MPI_COMM_WORLD, &msg, &st), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Improbe(0, -3, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_TAG);
    EXPECT_CLASS(MPI_Mprobe(0, 0, MPI_COMM_NULL, &msg, &st), MPI_ERR_COMM);
    /* truncation: 10 ints into room for 5 */
    MPI_CHECK(MPI_Isend(a, 10, MPI_INT, to, 3, MPI_COMM_WORLD, &sr[0]));
    MPI_CHECK(MPI_Mprobe(from, 3, MPI_COMM_WORLD, &msg, &st));
    for (int i = 0; i < 10; i++)
        x[i] = -1;
    st.MPI_ERROR = MPI_SUCCESS;
    EXPECT_CLASS(MPI_Mrecv(x, 5, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
    CHECK(p2p_class(st.MPI_ERROR) == MPI_ERR_TRUNCATE, "status.MPI_ERROR %d", st.MPI_ERROR);
    CHECK(x[4] == from * 100 + 4 && x[5] == -1, "truncated Mrecv: x[4]=%d x[5]=%d", x[4], x[5]);
    MPI_CHECK(MPI_Wait(&sr[0], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    threaded();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    semantics();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_mprobe: %d ranks: OK\n", size);
    return 0;
}
