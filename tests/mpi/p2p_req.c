/*
 * p2p_req.c — semantics of the completion calls: Waitany, Waitsome,
 * Testany, Testall, Testsome (MPI_REQUEST_NULL entries, MPI_UNDEFINED
 * results, handles freed only when completed, statuses in the right
 * slots), Request_get_status and the MPI-4.1 Request_get_status_any /
 * _all / _some (they free nothing), and MPI_Cancel of a posted
 * receive (Test_cancelled true, the message goes to the next receive).
 * Small sends that leave inside MPI_Isend share one complete request: every
 * completion call takes it, several times in one array too.
 *
 * Each rank works with its ring neighbours; a message the receiver is
 * waiting for is released by a "go" message so that "not complete yet" is
 * certain.
 */
#include <stdbool.h>

#include "p2p_common.h"

static int rank, size, to, from;

static void check_empty(const MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &n));
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: not an empty status (source %d tag %d count %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, n);
}

/* Sender side of a held message: wait for "go" (tag 1) then send `v` with `tag`. */
static void release(int tag, int v)
{
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, to, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Send(&v, 1, MPI_INT, to, tag, MPI_COMM_WORLD));
}
static void go(void)
{
    MPI_Request r;
    MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, from, 1, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Request_free(&r));
}

static void nulls(void)
{
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int idx = 0, flag = 0, out = 0, ind[3];
    MPI_CHECK(MPI_Waitany(3, reqs, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany on null requests: index %d", idx);
    check_empty(&st, "Waitany on null requests");
    MPI_CHECK(MPI_Waitany(0, NULL, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany of 0 requests: index %d", idx);
    MPI_CHECK(MPI_Testany(3, reqs, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany on null requests: flag %d index %d", flag, idx);
    MPI_CHECK(MPI_Waitsome(3, reqs, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Waitsome on null requests: outcount %d", out);
    MPI_CHECK(MPI_Testsome(3, reqs, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "Testsome on null requests: outcount %d", out);
    flag = 0;
    MPI_CHECK(MPI_Testall(3, reqs, &flag, sts));
    CHECK(flag, "Testall on null requests: flag 0");
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Testall on null requests");
    MPI_CHECK(MPI_Waitall(3, reqs, sts));
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Waitall on null requests");
    MPI_CHECK(MPI_Wait(&reqs[0], &st));
    check_empty(&st, "Wait on a null request");
    MPI_CHECK(MPI_Test(&reqs[0], &flag, &st));
    CHECK(flag, "Test on a null request: flag 0");
    MPI_CHECK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag, "Request_get_status(MPI_REQUEST_NULL): flag 0");
    check_empty(&st, "Request_get_status(MPI_REQUEST_NULL)");
}

static void any_some_all(void)
{
    int v[3] = {-1, -1, -1};
    MPI_Request reqs[4];
    MPI_Status st, sts[4];
    int idx, flag, out, ind[4];

    /* Testany/Testsome/Testall before anything arrived. Entry 1 is null. */
    reqs[1] = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Irecv(&v[0], 1, MPI_INT, from, 10, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&v[1], 1, MPI_INT, from, 11, MPI_COMM_WORLD, &reqs[2]));
    MPI_CHECK(MPI_Irecv(&v[2], 1, MPI_INT, from, 12, MPI_COMM_WORLD, &reqs[3]));
    MPI_Request keep[4] = {reqs[0], reqs[1], reqs[2], reqs[3]};
    flag = 1;
    idx = 0;
    MPI_CHECK(MPI_Testany(4, reqs, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "Testany, nothing arrived: flag %d index %d", flag,
          idx);
    MPI_CHECK(MPI_Testsome(4, reqs, &out, ind, sts));
    CHECK(out == 0, "Testsome, nothing arrived: outcount %d", out);
    flag = 1;
    MPI_CHECK(MPI_Testall(4, reqs, &flag, sts));
    CHECK(!flag, "Testall, nothing arrived: flag 1");
    go();
    release(11, 111); /* and as a sender, to `to` */
    /* tag 11 arrives: Waitany says index 2 */
    MPI_CHECK(MPI_Waitany(4, reqs, &idx, &st));
    CHECK(idx == 2 && reqs[2] == MPI_REQUEST_NULL && v[1] == 111,
          "Waitany: index %d value %d", idx, v[1]);
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 11, "Waitany status %d/%d", st.MPI_SOURCE,
          st.MPI_TAG);
    CHECK(reqs[0] == keep[0] && reqs[3] == keep[3], "Waitany touched other handles");
    /* Testall with one done and one pending: nothing is freed. */
    go();
    release(12, 112);
    flag = 0;
    do {
        MPI_CHECK(MPI_Request_get_status(reqs[3], &flag, &st));
    } while (!flag);
    CHECK(reqs[3] == keep[3], "Request_get_status freed the request");
    CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 12, "Request_get_status: status %d/%d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_CHECK(MPI_Request_get_status(reqs[3], &flag, &st));
    CHECK(flag && st.MPI_TAG == 12, "Request_get_status twice: flag %d tag %d", flag, st.MPI_TAG);
    flag = 1;
    MPI_CHECK(MPI_Testall(4, reqs, &flag, sts));
    CHECK(!flag && reqs[3] == keep[3] && reqs[0] == keep[0],
          "Testall with a pending request: flag %d, handles changed", flag);
    /* Testsome finds the completed one only. */
    MPI_CHECK(MPI_Testsome(4, reqs, &out, ind, sts));
    CHECK(out == 1 && ind[0] == 3 && reqs[3] == MPI_REQUEST_NULL && v[2] == 112 &&
              sts[0].MPI_TAG == 12,
          "Testsome: outcount %d index %d value %d", out, out > 0 ? ind[0] : -1, v[2]);
    /* Last one through Waitsome. */
    go();
    release(10, 110);
    MPI_CHECK(MPI_Waitsome(4, reqs, &out, ind, sts));
    CHECK(out == 1 && ind[0] == 0 && v[0] == 110 && sts[0].MPI_SOURCE == from &&
              sts[0].MPI_TAG == 10,
          "Waitsome: outcount %d index %d value %d", out, ind[0], v[0]);
    for (int i = 0; i < 4; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d left", i);

    /* Testall completing everything: statuses in their slots, null entries empty. */
    int w[3];
    reqs[1] = MPI_REQUEST_NULL;
    MPI_CHECK(MPI_Irecv(&w[0], 1, MPI_INT, from, 20, MPI_COMM_WORLD, &reqs[0]));
    MPI_CHECK(MPI_Irecv(&w[2], 1, MPI_INT, from, 22, MPI_COMM_WORLD, &reqs[2]));
    reqs[3] = MPI_REQUEST_NULL;
    int x = rank;
    MPI_Request sr[2];
    MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, to, 22, MPI_COMM_WORLD, &sr[0]));
    MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, to, 20, MPI_COMM_WORLD, &sr[1]));
    flag = 0;
    while (!flag)
        MPI_CHECK(MPI_Testall(4, reqs, &flag, sts));
    CHECK(sts[0].MPI_TAG == 20 && sts[2].MPI_TAG == 22 && sts[0].MPI_SOURCE == from,
          "Testall statuses: %d %d", sts[0].MPI_TAG, sts[2].MPI_TAG);
    check_empty(&sts[1], "Testall, null entry");
    CHECK(w[0] == from && w[2] == from, "Testall data %d %d", w[0], w[2]);
    for (int i = 0; i < 4; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "Testall left request %d", i);
    /* Waitsome over sends and receives until all are done. */
    MPI_Request mix[4];
    MPI_CHECK(MPI_Irecv(&w[0], 1, MPI_INT, from, 30, MPI_COMM_WORLD, &mix[0]));
    MPI_CHECK(MPI_Irecv(&w[1], 1, MPI_INT, from, 31, MPI_COMM_WORLD, &mix[1]));
    mix[2] = sr[0];
    mix[3] = sr[1];
    int y[2] = {rank + 30, rank + 31};
    MPI_CHECK(MPI_Send(&y[1], 1, MPI_INT, to, 31, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Send(&y[0], 1, MPI_INT, to, 30, MPI_COMM_WORLD));
    int done = 0;
    bool got[4] = {false, false, false, false};
    while (done < 4) {
        MPI_CHECK(MPI_Waitsome(4, mix, &out, ind, sts));
        CHECK(out >= 1 && out <= 4, "Waitsome outcount %d", out);
        for (int k = 0; k < out; k++) {
            CHECK(ind[k] >= 0 && ind[k] < 4 && !got[ind[k]], "Waitsome index %d", ind[k]);
            got[ind[k]] = true;
            CHECK(mix[ind[k]] == MPI_REQUEST_NULL, "Waitsome left request %d", ind[k]);
            if (ind[k] < 2)
                CHECK(sts[k].MPI_TAG == 30 + ind[k] && sts[k].MPI_SOURCE == from,
                      "Waitsome status of %d: tag %d", ind[k], sts[k].MPI_TAG);
        }
        done += out;
    }
    CHECK(w[0] == from + 30 && w[1] == from + 31, "Waitsome data %d %d", w[0], w[1]);
}

/* Small sends, each completed by a different call; Proust gives the ones
 * that left inside MPI_Isend one shared request, so the arrays below hold
 * the same handle several times. The data must arrive in order. */
/* MPI-4.1 MPI_Request_get_status_any / _all / _some: Testany / Testall /
 * Testsome answers that free nothing. */
static void peeks(void)
{
    MPI_Request reqs[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[3];
    int idx = 0, flag = 0, out = 0, ind[3];
    MPI_CHECK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "get_status_any on nulls: flag %d index %d", flag, idx);
    check_empty(&st, "get_status_any on nulls");
    MPI_CHECK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(flag, "get_status_all on nulls: flag 0");
    check_empty(&sts[2], "get_status_all on nulls");
    MPI_CHECK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == MPI_UNDEFINED, "get_status_some on nulls: outcount %d", out);

    int v = -1;
    MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, from, 20, MPI_COMM_WORLD, &reqs[1]));
    MPI_Request keep = reqs[1];
    flag = 1;
    MPI_CHECK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "get_status_any, held: flag %d index %d", flag, idx);
    flag = 1;
    MPI_CHECK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    CHECK(!flag, "get_status_all, held: flag 1");
    MPI_CHECK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == 0, "get_status_some, held: outcount %d", out);
    go();
    release(20, 120);
    do {
        MPI_CHECK(MPI_Request_get_status_all(3, reqs, &flag, sts));
    } while (!flag);
    CHECK(reqs[1] == keep && v == 120, "get_status_all freed the request or lost the data");
    CHECK(sts[1].MPI_SOURCE == from && sts[1].MPI_TAG == 20 && sts[1].MPI_ERROR == MPI_SUCCESS,
          "get_status_all: status %d/%d/%d", sts[1].MPI_SOURCE, sts[1].MPI_TAG,
          sts[1].MPI_ERROR);
    check_empty(&sts[0], "get_status_all, null entry");
    MPI_CHECK(MPI_Request_get_status_any(3, reqs, &idx, &flag, &st));
    CHECK(flag && idx == 1 && st.MPI_TAG == 20 && reqs[1] == keep,
          "get_status_any, done: flag %d index %d tag %d", flag, idx, st.MPI_TAG);
    MPI_CHECK(MPI_Request_get_status_some(3, reqs, &out, ind, sts));
    CHECK(out == 1 && ind[0] == 1 && sts[0].MPI_SOURCE == from && reqs[1] == keep,
          "get_status_some, done: outcount %d index %d", out, out > 0 ? ind[0] : -1);
    /* still there for the real completion */
    MPI_CHECK(MPI_Wait(&reqs[1], &st));
    CHECK(reqs[1] == MPI_REQUEST_NULL && st.MPI_TAG == 20, "Wait after the peeks: tag %d",
          st.MPI_TAG);
}

static void left_at_once(void)
{
    enum { N = 14 };
    int out[N], in[N];
    MPI_Request s[N], r[N];
    MPI_Status st, sts[N];
    int flag, idx, cnt, ind[N];
    for (int i = 0; i < N; i++) {
        in[i] = -1;
        MPI_CHECK(MPI_Irecv(&in[i], 1, MPI_INT, from, 50, MPI_COMM_WORLD, &r[i]));
    }
    /* every receive is posted before any send: the cancel of s[3] below
     * meets a matched message, which is not cancelled */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        out[i] = 1000 * rank + i;
        MPI_CHECK(MPI_Isend(&out[i], 1, MPI_INT, to, 50, MPI_COMM_WORLD, &s[i]));
        CHECK(s[i] != MPI_REQUEST_NULL, "MPI_Isend %d returned MPI_REQUEST_NULL", i);
    }
    MPI_CHECK(MPI_Wait(&s[0], &st));
    flag = 1;
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(s[0] == MPI_REQUEST_NULL && !flag, "Wait on a send: handle %#x cancelled %d",
          (unsigned)s[0], flag);
    for (flag = 0; !flag;)
        MPI_CHECK(MPI_Test(&s[1], &flag, &st));
    CHECK(s[1] == MPI_REQUEST_NULL, "Test completed a send but left its handle");
    MPI_Request keep = s[2];
    for (flag = 0; !flag;)
        MPI_CHECK(MPI_Request_get_status(s[2], &flag, &st));
    CHECK(s[2] == keep, "Request_get_status freed a send");
    MPI_CHECK(MPI_Wait(&s[2], MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Cancel(&s[3]));
    MPI_CHECK(MPI_Wait(&s[3], &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a send that left was reported cancelled");
    MPI_CHECK(MPI_Request_free(&s[4]));
    CHECK(s[4] == MPI_REQUEST_NULL, "Request_free left the handle");
    for (int k = 0; k < 2; k++) {
        MPI_CHECK(MPI_Waitany(2, &s[5], &idx, &st));
        CHECK(idx >= 0 && idx < 2 && s[5 + idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
    }
    CHECK(s[5] == MPI_REQUEST_NULL && s[6] == MPI_REQUEST_NULL, "Waitany left a send");
    for (int done = 0; done < 2; done += cnt) {
        MPI_CHECK(MPI_Testsome(2, &s[7], &cnt, ind, sts));
        CHECK(cnt >= 0 && cnt <= 2 - done, "Testsome outcount %d after %d", cnt, done);
    }
    CHECK(s[7] == MPI_REQUEST_NULL && s[8] == MPI_REQUEST_NULL, "Testsome left a send");
    for (flag = 0; !flag;)
        MPI_CHECK(MPI_Testall(2, &s[9], &flag, sts));
    CHECK(s[9] == MPI_REQUEST_NULL && s[10] == MPI_REQUEST_NULL, "Testall left a send");
    for (int i = 11; i < N; i++)
        sts[i].MPI_ERROR = -1;
    MPI_CHECK(MPI_Waitall(N - 11, &s[11], &sts[11]));
    for (int i = 11; i < N; i++)
        CHECK(s[i] == MPI_REQUEST_NULL && sts[i].MPI_ERROR == MPI_SUCCESS,
              "Waitall of sends: entry %d handle %#x error %d", i, (unsigned)s[i],
              sts[i].MPI_ERROR);
    MPI_CHECK(MPI_Waitall(N, r, sts));
    for (int i = 0; i < N; i++)
        CHECK(in[i] == 1000 * from + i && sts[i].MPI_SOURCE == from && sts[i].MPI_TAG == 50,
              "receive %d: value %d (expected %d) from %d", i, in[i], 1000 * from + i,
              sts[i].MPI_SOURCE);
}

static void cancel(void)
{
    /* A receive nobody sends to: cancelled. */
    int v = -1;
    MPI_Request r;
    MPI_Status st;
    MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, from, 40, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
    MPI_CHECK(MPI_Wait(&r, &st));
    int flag = 0;
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled posted receive");
    CHECK(v == -1, "a cancelled receive wrote its buffer");
    /* The message sent afterwards goes to the next receive. */
    MPI_Request r2;
    int w = -1;
    MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 41, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Irecv(&w, 1, MPI_INT, from, 41, MPI_COMM_WORLD, &r2));
    int x = 5000 + rank;
    go(); /* only now may `from` send */
    release(41, x);
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag && v == -1, "cancelled wildcard receive: cancelled %d, value %d", flag, v);
    MPI_CHECK(MPI_Wait(&r2, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && w == 5000 + from, "receive after a cancelled one: cancelled %d value %d",
          flag, w);
    /* Cancelling a completed receive does nothing. */
    MPI_CHECK(MPI_Sendrecv(&x, 1, MPI_INT, to, 42, NULL, 0, MPI_INT, MPI_PROC_NULL, 0,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Irecv(&v, 1, MPI_INT, from, 42, MPI_COMM_WORLD, &r));
    flag = 0;
    while (!flag)
        MPI_CHECK(MPI_Request_get_status(r, &flag, NULL));
    MPI_CHECK(MPI_Cancel(&r));
    MPI_CHECK(MPI_Wait(&r, &st));
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && v == 5000 + from && st.MPI_TAG == 42,
          "cancel after completion: cancelled %d value %d", flag, v);

    /* A started persistent receive is cancelled too, and stays allocated
     * (inactive) afterwards. Test with a deadline: a cancel that does
     * nothing would leave Wait hanging. */
    MPI_CHECK(MPI_Recv_init(&v, 1, MPI_INT, from, 43, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Start(&r));
    MPI_CHECK(MPI_Cancel(&r));
    double until = MPI_Wtime() + 10;
    flag = 0;
    while (!flag && MPI_Wtime() < until)
        MPI_CHECK(MPI_Test(&r, &flag, &st));
    CHECK(flag, "a cancelled persistent receive did not complete within 10 s");
    CHECK(r != MPI_REQUEST_NULL, "completion freed a persistent request");
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled persistent receive");
    MPI_CHECK(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    to = (rank + 1) % size;
    from = (rank - 1 + size) % size;
    nulls();
    any_some_all();
    peeks();
    left_at_once();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    cancel();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_req: %d ranks: OK\n", size);
    return 0;
}
