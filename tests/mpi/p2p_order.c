/*
 * p2p_order.c — MPI's ordering rules: messages from one sender that a
 * receive could match arrive in send order (same tag, ANY_TAG, ANY_SOURCE;
 * eager and rendezvous sizes mixed), receives posted earlier match first,
 * tags select, and communicators never mix (a message on a duplicate is
 * invisible to the original, even to wildcard receives).
 */
#include <stdbool.h>

#include "p2p_common.h"

#define NMSG 60
#define BIG 100000

static int rank, size;

/* Size of message `seq`: mostly small, every 10th large (rendezvous). */
static size_t msg_size(int seq)
{
    return seq % 10 == 9 ? BIG + (size_t)seq : 8 + (size_t)(seq * 13 % 500);
}

/* Payload: sender, sequence number, then a pattern. */
static void make_msg(unsigned char *buf, int src, int seq)
{
    size_t n = msg_size(seq);
    p2p_fill(buf, n, (uint64_t)src * 1000 + (uint64_t)seq);
    memcpy(buf, &src, sizeof src);
    memcpy(buf + 4, &seq, sizeof seq);
}

static void check_msg(const unsigned char *buf, const MPI_Status *st, int src, int seq,
                      const char *what)
{
    int s, q;
    memcpy(&s, buf, 4);
    memcpy(&q, buf + 4, 4);
    CHECK(s == src && q == seq, "%s: got message %d of rank %d, expected %d of rank %d", what,
          q, s, seq, src);
    size_t n = msg_size(seq);
    int count;
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(count == (int)n, "%s: message %d has %d bytes, expected %zu", what, seq, count, n);
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
    unsigned char *ref = malloc(n);
    CHECK(ref, "out of memory");
    make_msg(ref, src, seq);
    CHECK(memcmp(ref, buf, n) == 0, "%s: message %d from %d corrupted", what, seq, src);
    free(ref);
}

/* Every rank sends NMSG messages to every rank (itself too) with tags from
 * tag_of(seq); returns the requests to wait for. */
static MPI_Request *send_all(unsigned char ***bufs, int (*tag_of)(int), MPI_Comm comm)
{
    MPI_Request *reqs = malloc(sizeof *reqs * (size_t)(size * NMSG));
    *bufs = malloc(sizeof **bufs * (size_t)NMSG);
    CHECK(reqs && *bufs, "out of memory");
    for (int q = 0; q < NMSG; q++) {
        (*bufs)[q] = malloc(msg_size(q));
        CHECK((*bufs)[q], "out of memory");
        make_msg((*bufs)[q], rank, q);
    }
    for (int q = 0; q < NMSG; q++)
        for (int d = 0; d < size; d++)
            MPI_CHECK(MPI_Isend((*bufs)[q], (int)msg_size(q), MPI_BYTE, (rank + d) % size,
                                tag_of(q), comm, &reqs[q * size + d]));
    return reqs;
}

static void finish_sends(MPI_Request *reqs, unsigned char **bufs)
{
    MPI_CHECK(MPI_Waitall(size * NMSG, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < size * NMSG; i++)
        CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);
    for (int q = 0; q < NMSG; q++)
        free(bufs[q]);
    free(bufs);
    free(reqs);
}

static int tag_same(int seq)
{
    (void)seq;
    return 42;
}
static int tag_varied(int seq)
{
    return seq * 7 % 50;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    unsigned char *rbuf = malloc(BIG + NMSG);
    CHECK(rbuf, "out of memory");
    unsigned char **bufs;
    MPI_Request *reqs;
    MPI_Status st;

    /* 1. Same tag, specific source: in send order, whatever the sizes. */
    reqs = send_all(&bufs, tag_same, MPI_COMM_WORLD);
    for (int d = 0; d < size; d++) {
        int src = (rank - d + size) % size;
        for (int q = 0; q < NMSG; q++) {
            MPI_CHECK(MPI_Recv(rbuf, BIG + NMSG, MPI_BYTE, src, 42, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_TAG == 42, "tag %d", st.MPI_TAG);
            check_msg(rbuf, &st, src, q, "same tag");
        }
    }
    finish_sends(reqs, bufs);

    /* 2. ANY_TAG from each source: send order, the tags as sent. */
    reqs = send_all(&bufs, tag_varied, MPI_COMM_WORLD);
    for (int d = 0; d < size; d++) {
        int src = (rank + d) % size;
        for (int q = 0; q < NMSG; q++) {
            MPI_CHECK(MPI_Recv(rbuf, BIG + NMSG, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD,
                               &st));
            CHECK(st.MPI_TAG == tag_varied(q), "ANY_TAG: message %d has tag %d, expected %d", q,
                  st.MPI_TAG, tag_varied(q));
            check_msg(rbuf, &st, src, q, "ANY_TAG");
        }
    }
    finish_sends(reqs, bufs);

    /* 3. ANY_SOURCE and ANY_TAG: per-source order holds. */
    reqs = send_all(&bufs, tag_varied, MPI_COMM_WORLD);
    int *next = calloc((size_t)size, sizeof *next);
    CHECK(next, "out of memory");
    for (int i = 0; i < size * NMSG; i++) {
        MPI_CHECK(MPI_Recv(rbuf, BIG + NMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                           MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size, "source %d", st.MPI_SOURCE);
        int q = next[st.MPI_SOURCE]++;
        CHECK(st.MPI_TAG == tag_varied(q), "ANY_SOURCE: tag %d, expected %d", st.MPI_TAG,
              tag_varied(q));
        check_msg(rbuf, &st, st.MPI_SOURCE, q, "ANY_SOURCE");
    }
    for (int s = 0; s < size; s++)
        CHECK(next[s] == NMSG, "%d messages from %d, expected %d", next[s], s, NMSG);
    free(next);
    finish_sends(reqs, bufs);

    /* 4. Receives posted earlier match first: two identical receives, then
     * one with wildcards, all posted before the messages exist. */
    {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        int r[3] = {-1, -1, -1};
        MPI_Request rq[3];
        MPI_CHECK(MPI_Irecv(&r[0], 1, MPI_INT, from, 7, MPI_COMM_WORLD, &rq[0]));
        MPI_CHECK(MPI_Irecv(&r[1], 1, MPI_INT, from, 7, MPI_COMM_WORLD, &rq[1]));
        MPI_CHECK(MPI_Irecv(&r[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                            &rq[2]));
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        for (int v = 0; v < 3; v++)
            MPI_CHECK(MPI_Send(&v, 1, MPI_INT, to, 7, MPI_COMM_WORLD));
        MPI_Status sts[3];
        MPI_CHECK(MPI_Waitall(3, rq, sts));
        for (int v = 0; v < 3; v++) {
            CHECK(r[v] == v, "posted receive %d got %d", v, r[v]);
            CHECK(sts[v].MPI_SOURCE == from && sts[v].MPI_TAG == 7, "status %d: %d/%d", v,
                  sts[v].MPI_SOURCE, sts[v].MPI_TAG);
        }
    }

    /* 5. Tags select: tag 1 then tag 2 sent (small and large), tag 2 then
     * tag 1 received. */
    for (int big = 0; big < 2; big++) {
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        size_t n = big ? BIG : 16;
        unsigned char *a = malloc(n), *b = malloc(n), *x = malloc(n), *y = malloc(n);
        CHECK(a && b && x && y, "out of memory");
        p2p_fill(a, n, 1000 + (uint64_t)rank);
        p2p_fill(b, n, 2000 + (uint64_t)rank);
        MPI_Request sr[2];
        MPI_CHECK(MPI_Isend(a, (int)n, MPI_BYTE, to, 1, MPI_COMM_WORLD, &sr[0]));
        MPI_CHECK(MPI_Isend(b, (int)n, MPI_BYTE, to, 2, MPI_COMM_WORLD, &sr[1]));
        MPI_CHECK(MPI_Recv(y, (int)n, MPI_BYTE, from, 2, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, from, 2, n);
        MPI_CHECK(MPI_Recv(x, (int)n, MPI_BYTE, from, 1, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, from, 1, n);
        CHECK(p2p_check(x, n, 1000 + (uint64_t)from) < 0, "tag 1 message corrupted");
        CHECK(p2p_check(y, n, 2000 + (uint64_t)from) < 0, "tag 2 message corrupted");
        MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
        free(a);
        free(b);
        free(x);
        free(y);
    }

    /* 6. Communicators never mix: A sent on a duplicate first, B on world
     * second; a wildcard receive on world gets B, the duplicate gets A. */
    {
        MPI_Comm dup;
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        int to = (rank + 1) % size, from = (rank - 1 + size) % size;
        int va = 1000 + rank, vb = 2000 + rank, ra = -1, rb = -1;
        MPI_Request sr[2];
        MPI_CHECK(MPI_Isend(&va, 1, MPI_INT, to, 5, dup, &sr[0]));
        MPI_CHECK(MPI_Isend(&vb, 1, MPI_INT, to, 5, MPI_COMM_WORLD, &sr[1]));
        MPI_CHECK(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(rb == 2000 + from && st.MPI_SOURCE == from && st.MPI_TAG == 5,
              "world received %d from %d (tag %d), expected %d", rb, st.MPI_SOURCE, st.MPI_TAG,
              2000 + from);
        MPI_CHECK(MPI_Probe(from, 5, dup, &st)); /* A is here now... */
        int flag = 1;
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(!flag, "world sees a message that was sent on its duplicate");
        MPI_CHECK(MPI_Recv(&ra, 1, MPI_INT, from, 5, dup, &st));
        CHECK(ra == 1000 + from, "duplicate received %d, expected %d", ra, 1000 + from);
        MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
        /* Self: MPI_COMM_SELF and world are separate too. */
        MPI_CHECK(MPI_Isend(&va, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &sr[0]));
        MPI_CHECK(MPI_Isend(&vb, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &sr[1]));
        MPI_CHECK(MPI_Recv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st));
        CHECK(rb == vb && st.MPI_SOURCE == rank, "world self-message: %d from %d", rb,
              st.MPI_SOURCE);
        MPI_CHECK(MPI_Recv(&ra, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_SELF, &st));
        CHECK(ra == va && st.MPI_SOURCE == 0, "MPI_COMM_SELF message: %d from %d", ra,
              st.MPI_SOURCE);
        MPI_CHECK(MPI_Waitall(2, sr, MPI_STATUSES_IGNORE));
        MPI_CHECK(MPI_Comm_free(&dup));
        CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    }

    free(rbuf);
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_order: %d ranks: OK\n", size);
    return 0;
}
