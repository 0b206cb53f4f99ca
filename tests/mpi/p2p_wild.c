/*
 * p2p_wild.c — wildcards, MPI_PROC_NULL and probes:
 *  - ANY_SOURCE / ANY_TAG receives report the real source, tag and count;
 *  - every operation on MPI_PROC_NULL completes at once with source
 *    MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, and touches no buffer;
 *  - Probe (and an Iprobe loop) then Get_count then Recv of exactly the
 *    probed size; Get_count of a partial element is MPI_UNDEFINED.
 */
#include <stdbool.h>

#include "p2p_common.h"

static int rank, size;

static void check_proc_null(const MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && n == 0,
          "%s: status source %d tag %d count %d, expected MPI_PROC_NULL, MPI_ANY_TAG, 0", what,
          st->MPI_SOURCE, st->MPI_TAG, n);
}

static void wildcards(void)
{
    /* Everyone sends 10 + rank ints with tag 100 + rank to everyone. */
    int *out = malloc(sizeof(int) * (size_t)(10 + size));
    int *in = malloc(sizeof(int) * (size_t)(10 + size + 5));
    MPI_Request *sr = malloc(sizeof *sr * (size_t)(size + 2));
    bool *seen = calloc((size_t)size, 1);
    CHECK(out && in && sr && seen, "out of memory");
    for (int i = 0; i < 10 + rank; i++)
        out[i] = rank * 1000 + i;
    for (int d = 0; d < size; d++)
        MPI_CHECK(MPI_Isend(out, 10 + rank, MPI_INT, d, 100 + rank, MPI_COMM_WORLD, &sr[d]));
    for (int k = 0; k < size; k++) {
        MPI_Status st;
        st.MPI_SOURCE = st.MPI_TAG = -77;
        MPI_CHECK(MPI_Recv(in, 10 + size + 5, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                           MPI_COMM_WORLD, &st));
        int s = st.MPI_SOURCE;
        CHECK(s >= 0 && s < size && !seen[s], "ANY_SOURCE: source %d (seen before: %d)", s,
              s >= 0 && s < size ? seen[s] : -1);
        seen[s] = true;
        CHECK(st.MPI_TAG == 100 + s, "ANY_TAG: tag %d from %d, expected %d", st.MPI_TAG, s,
              100 + s);
        int n;
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 10 + s, "count %d from %d, expected %d", n, s, 10 + s);
        for (int i = 0; i < n; i++)
            CHECK(in[i] == s * 1000 + i, "element %d from %d is %d", i, s, in[i]);
    }
    MPI_CHECK(MPI_Waitall(size, sr, MPI_STATUSES_IGNORE));
    /* nobody sends more before everyone took its messages: the wildcard
     * receives above must not see those below */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));

    /* Specific tag from any source, then any tag from a specific source. */
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int a = rank, b = -rank - 1, x = -5, y = -5;
    MPI_CHECK(MPI_Isend(&a, 1, MPI_INT, to, 11, MPI_COMM_WORLD, &sr[0]));
    MPI_CHECK(MPI_Isend(&b, 1, MPI_INT, to, 12, MPI_COMM_WORLD, &sr[1]));
    MPI_Status st;
    MPI_CHECK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &st));
    CHECK(y == -from - 1 && st.MPI_SOURCE == from && st.MPI_TAG == 12,
          "ANY_SOURCE tag 12: %d from %d tag %d", y, st.MPI_SOURCE, st.MPI_TAG);
    MPI_CHECK(MPI_Recv(&x, 1, MPI_INT, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(x == from && st.MPI_SOURCE == from && st.MPI_TAG == 11,
          "ANY_TAG from %d: %d tag %d", from, x, st.MPI_TAG);
    MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));

    /* A wildcard Irecv completes through Waitany with the sender's envelope. */
    MPI_Request rr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_CHECK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rr[1]));
    MPI_CHECK(MPI_Send(&a, 1, MPI_INT, to, 13, MPI_COMM_WORLD));
    int idx = -1;
    MPI_CHECK(MPI_Waitany(2, rr, &idx, &st));
    CHECK(idx == 1 && x == from && st.MPI_SOURCE == from && st.MPI_TAG == 13,
          "Waitany: index %d value %d source %d tag %d", idx, x, st.MPI_SOURCE, st.MPI_TAG);
    free(out);
    free(in);
    free(sr);
    free(seen);
}

static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4};
    MPI_Status st;
    MPI_Request rq;
    MPI_CHECK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Bsend(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD)); /* no buffer needed */
    MPI_CHECK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "MPI_Recv");
    CHECK(buf[0] == 1 && buf[3] == 4, "MPI_Recv from MPI_PROC_NULL wrote the buffer");
    MPI_CHECK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "MPI_Recv, ANY_TAG");

    int (*isends[])(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = {
        MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Ibsend};
    for (int i = 0; i < 4; i++) {
        MPI_CHECK(isends[i](buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &rq));
        int flag = 0;
        MPI_CHECK(MPI_Test(&rq, &flag, &st));
        CHECK(flag && rq == MPI_REQUEST_NULL, "nonblocking send %d to MPI_PROC_NULL not done", i);
    }
    MPI_CHECK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &rq));
    int flag = 0;
    MPI_CHECK(MPI_Test(&rq, &flag, &st));
    CHECK(flag && rq == MPI_REQUEST_NULL, "MPI_Irecv from MPI_PROC_NULL not complete at once");
    check_proc_null(&st, "MPI_Irecv");

    MPI_CHECK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, buf, 4, MPI_INT, MPI_PROC_NULL, 1,
                           MPI_COMM_WORLD, &st));
    check_proc_null(&st, "MPI_Sendrecv");
    MPI_CHECK(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1,
                                   MPI_COMM_WORLD, &st));
    check_proc_null(&st, "MPI_Sendrecv_replace");
    CHECK(buf[0] == 1 && buf[3] == 4, "MPI_Sendrecv_replace with MPI_PROC_NULL changed the buffer");

    MPI_CHECK(MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "MPI_Probe");
    flag = 0;
    MPI_CHECK(MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL) found nothing");
    check_proc_null(&st, "MPI_Iprobe");

    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_CHECK(MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) message %#x", (unsigned)msg);
    check_proc_null(&st, "MPI_Mprobe");
    MPI_CHECK(MPI_Mrecv(buf, 4, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv did not reset the message handle");
    check_proc_null(&st, "MPI_Mrecv");
    flag = 0;
    MPI_CHECK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d msg %#x",
          flag, (unsigned)msg);
    MPI_CHECK(MPI_Imrecv(buf, 4, MPI_INT, &msg, &rq));
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv did not reset the message handle");
    MPI_CHECK(MPI_Wait(&rq, &st));
    check_proc_null(&st, "MPI_Imrecv");
    CHECK(buf[0] == 1 && buf[3] == 4, "a receive from MPI_PROC_NULL wrote the buffer");

    /* Persistent operations on MPI_PROC_NULL. */
    MPI_Request pr[2];
    MPI_CHECK(MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &pr[0]));
    MPI_CHECK(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &pr[1]));
    for (int it = 0; it < 3; it++) {
        MPI_Status sts[2];
        MPI_CHECK(MPI_Startall(2, pr));
        MPI_CHECK(MPI_Waitall(2, pr, sts));
        check_proc_null(&sts[1], "persistent receive");
    }
    MPI_CHECK(MPI_Request_free(&pr[0]));
    MPI_CHECK(MPI_Request_free(&pr[1]));
}

/* Message k of this test: size and tag. */
static int probe_size(int src, int k)
{
    return (int)((uint64_t)(src * 7919 + k * 104729) % 50000) * (k % 3 == 0 ? 4 : 1);
}

static void probes(void)
{
    enum { K = 12 };
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    int maxn = 200000;
    unsigned char *out = malloc((size_t)maxn);
    MPI_Request sr[K];
    CHECK(out, "out of memory");
    p2p_fill(out, (size_t)maxn, (uint64_t)rank);
    for (int k = 0; k < K; k++)
        MPI_CHECK(MPI_Isend(out, probe_size(rank, k), MPI_BYTE, to, 500 + k, MPI_COMM_WORLD,
                            &sr[k]));
    for (int k = 0; k < K; k++) {
        MPI_Status st;
        if (k % 2) {
            MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else {
            int flag = 0;
            for (long spins = 0; !flag; spins++) {
                MPI_CHECK(MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                CHECK(spins < 100000000L, "MPI_Iprobe never found message %d", k);
            }
        }
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 500 + k, "probe: source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
        int n = -1;
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
        CHECK(n == probe_size(from, k), "probed count %d, expected %d", n, probe_size(from, k));
        /* Probing again finds the same message. */
        MPI_Status st2;
        MPI_CHECK(MPI_Probe(from, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        CHECK(st2.MPI_SOURCE == from && st2.MPI_TAG == 500 + k, "second probe differs");
        unsigned char *in = malloc(n ? (size_t)n : 1);
        CHECK(in, "out of memory");
        MPI_CHECK(MPI_Recv(in, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
        CHECK_STATUS(st2, from, 500 + k, n);
        CHECK(p2p_check(in, (size_t)n, (uint64_t)from) < 0, "probed message %d corrupted", k);
        if (n % 4 == 0) {
            int ints;
            MPI_CHECK(MPI_Get_count(&st2, MPI_INT, &ints));
            CHECK(ints == n / 4, "Get_count(MPI_INT) %d for %d bytes", ints, n);
        }
        free(in);
    }
    MPI_CHECK(MPI_Waitall(K, sr, MPI_STATUSES_IGNORE));
    /* 7 bytes are not a whole number of ints. */
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(out, 7, MPI_BYTE, to, 9, out + 100, 16, MPI_BYTE, from, 9,
                           MPI_COMM_WORLD, &st));
    int n = 0;
    MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == MPI_UNDEFINED, "Get_count of 7 bytes as MPI_INT: %d, expected MPI_UNDEFINED", n);
    MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == 7, "Get_count of 7 bytes: %d", n);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    wildcards();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    proc_null();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    probes();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_wild: %d ranks: OK\n", size);
    return 0;
}
