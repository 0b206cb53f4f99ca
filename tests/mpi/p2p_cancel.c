/*
 * p2p_cancel.c — MPI_Cancel of sends (rank 0 sends to rank 1; other ranks
 * only join the barriers):
 *
 *  unmatched: an Issend of 0 B .. 4 MiB, or an Isend of rendezvous size,
 *             that nobody receives is cancelled (Test_cancelled true); a
 *             later message with the same tag is the one rank 1 receives.
 *  middle:    of three Issends with one tag the second is cancelled; rank 1
 *             gets the first and the third, in order.
 *  matched:   a send whose receive was posted first is not cancelled.
 *  persist:   a started Ssend_init is cancelled; started again it is sent.
 *  vector:    a noncontiguous Issend is cancelled; the next one arrives.
 *  freed:     an Issend cancelled then freed leaves nothing at rank 1.
 *  done:      cancelling a send that left at once changes nothing.
 *  self:      every rank's Issend to itself (0 B and 100 KiB), probed then
 *             cancelled, is already cancelled when MPI_Cancel returns:
 *             MPI_Request_get_status says so (mpi4py's testProbeCancel
 *             receives the message otherwise, and would wait forever).
 *
 * After each case rank 0 sends a FENCE message; rank 1 receives with
 * MPI_ANY_TAG and must get the fence: by the non-overtaking rule it cannot
 * while a message sent before it (a cancel that did nothing) is pending.
 */
#include "p2p_common.h"

#define FENCE 999

static int rank, size;

/* A cancel that did nothing leaves an Issend's wait hanging: test with a
 * deadline instead, so the failure says so. Returns Test_cancelled. */
static int finish(MPI_Request *r, const char *what)
{
    MPI_Status st;
    int flag = 0;
    double until = MPI_Wtime() + 20;
    while (!flag && MPI_Wtime() < until)
        MPI_CHECK(MPI_Test(r, &flag, &st));
    CHECK(flag, "%s: the cancelled send did not complete within 20 s", what);
    MPI_CHECK(MPI_Test_cancelled(&st, &flag));
    return flag;
}

/* Rank 1, after the case's barrier: the next message from 0 is the fence
 * and nothing with `tag` is left. */
static void only_fence_left(int tag, const char *what)
{
    MPI_Status st;
    int flag = 1;
    MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_TAG == FENCE, "%s: got a message with tag %d before the fence", what,
          st.MPI_TAG);
    MPI_CHECK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "%s: a message with tag %d is still there", what, tag);
}

static void unmatched(size_t n, int sync, int tag)
{
    char what[64];
    snprintf(what, sizeof what, "%s of %zu B", sync ? "Issend" : "Isend", n);
    unsigned char *buf = malloc(n + 1);
    CHECK(buf, "malloc");
    MPI_Request r[2];
    if (rank == 0) {
        p2p_fill(buf, n, 2 * tag);
        if (sync)
            MPI_CHECK(MPI_Issend(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[0]));
        else
            MPI_CHECK(MPI_Isend(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Cancel(&r[0]));
        CHECK(finish(&r[0], what), "%s: Test_cancelled false", what);
        p2p_fill(buf, n, 2 * tag + 1); /* the buffer is ours again */
        MPI_CHECK(MPI_Isend(buf, (int)n, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 1, FENCE, MPI_COMM_WORLD, &r[1]));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    } else if (rank == 1) {
        MPI_Status st;
        MPI_CHECK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
        CHECK_STATUS(st, 0, tag, n);
        long bad = p2p_check(buf, n, 2 * tag + 1);
        CHECK(bad < 0, "%s: received data wrong at byte %ld (the cancelled message?)", what,
              bad);
        only_fence_left(tag, what);
    }
    free(buf);
}

static void middle(int tag)
{
    unsigned char buf[3][64];
    MPI_Request r[4];
    if (rank == 0) {
        for (int i = 0; i < 3; i++) {
            p2p_fill(buf[i], 64, 100 + i);
            MPI_CHECK(MPI_Issend(buf[i], 64, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r[i]));
        }
        MPI_CHECK(MPI_Cancel(&r[1]));
        CHECK(finish(&r[1], "middle"), "middle: Test_cancelled false");
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 1, FENCE, MPI_COMM_WORLD, &r[3]));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Status st[4];
        MPI_CHECK(MPI_Waitall(4, r, st));
        int c0 = 1, c2 = 1;
        MPI_CHECK(MPI_Test_cancelled(&st[0], &c0));
        MPI_CHECK(MPI_Test_cancelled(&st[2], &c2));
        CHECK(!c0 && !c2, "middle: a received send says cancelled (%d %d)", c0, c2);
    } else if (rank == 1) {
        for (int k = 0; k < 2; k++) {
            MPI_CHECK(MPI_Recv(buf[k], 64, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(p2p_check(buf[k], 64, 100 + 2 * k) < 0,
                  "middle: receive %d is not message %d", k, 2 * k);
        }
        only_fence_left(tag, "middle");
    }
}

static void matched(int tag)
{
    enum { N = 300000 };
    unsigned char *buf = malloc(N);
    CHECK(buf, "malloc");
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 1)
        MPI_CHECK(MPI_Irecv(buf, N, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* the receive is posted */
    if (rank == 0) {
        p2p_fill(buf, N, 7);
        MPI_CHECK(MPI_Isend(buf, N, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Cancel(&r));
        CHECK(!finish(&r, "matched"), "matched: a send already matched was cancelled");
    } else if (rank == 1) {
        MPI_Status st;
        MPI_CHECK(MPI_Wait(&r, &st));
        CHECK_STATUS(st, 0, tag, N);
        CHECK(p2p_check(buf, N, 7) < 0, "matched: received data wrong");
    }
    free(buf);
}

static void persist(int tag)
{
    unsigned char buf[100];
    MPI_Request r, f;
    if (rank == 0) {
        p2p_fill(buf, 100, 200);
        MPI_CHECK(MPI_Ssend_init(buf, 100, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Start(&r));
        MPI_CHECK(MPI_Cancel(&r));
        CHECK(finish(&r, "persist"), "persist: Test_cancelled false");
        CHECK(r != MPI_REQUEST_NULL, "persist: completion freed a persistent request");
        p2p_fill(buf, 100, 201);
        MPI_CHECK(MPI_Start(&r));
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 1, FENCE, MPI_COMM_WORLD, &f));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_Status st;
        int c = 1;
        MPI_CHECK(MPI_Wait(&r, &st));
        MPI_CHECK(MPI_Test_cancelled(&st, &c));
        CHECK(!c, "persist: the restarted send says cancelled");
        MPI_CHECK(MPI_Request_free(&r));
        MPI_CHECK(MPI_Wait(&f, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        MPI_CHECK(MPI_Recv(buf, 100, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(p2p_check(buf, 100, 201) < 0, "persist: received the cancelled message");
        only_fence_left(tag, "persist");
    }
}

/* `blocks` blocks of 2 ints every 3: the third int of each stays -1 at rank 1. */
static void vector(int blocks, int tag)
{
    int n = 3 * blocks;
    int *v = malloc(n * sizeof *v);
    CHECK(v, "malloc");
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_vector(blocks, 2, 3, MPI_INT, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    MPI_Request r[2];
    if (rank == 0) {
        for (int i = 0; i < n; i++)
            v[i] = i;
        MPI_CHECK(MPI_Issend(v, 1, t, 1, tag, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Cancel(&r[0]));
        CHECK(finish(&r[0], "vector"), "vector of %d blocks: Test_cancelled false", blocks);
        for (int i = 0; i < n; i++)
            v[i] = 1000000 + i;
        MPI_CHECK(MPI_Isend(v, 1, t, 1, tag, MPI_COMM_WORLD, &r[0]));
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 1, FENCE, MPI_COMM_WORLD, &r[1]));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        MPI_CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    } else if (rank == 1) {
        for (int i = 0; i < n; i++)
            v[i] = -1;
        MPI_CHECK(MPI_Recv(v, 1, t, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            int want = i % 3 == 2 ? -1 : 1000000 + i;
            CHECK(v[i] == want, "vector of %d blocks: int %d is %d, expected %d", blocks, i,
                  v[i], want);
        }
        only_fence_left(tag, "vector");
    }
    MPI_CHECK(MPI_Type_free(&t));
    free(v);
}

/* Freed without a wait: the cancellation still happens. Its request is
 * gone, so nothing on rank 0 says when; Proust queues the cancellation
 * behind the message and ahead of the fence, so rank 1 sees it done once
 * the fence has arrived. */
static void freed(int tag)
{
    unsigned char buf[100];
    MPI_Request r, f;
    if (rank == 0) {
        p2p_fill(buf, 100, 300);
        MPI_CHECK(MPI_Issend(buf, 100, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Cancel(&r));
        MPI_CHECK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "freed: Request_free left the handle");
        MPI_CHECK(MPI_Isend(NULL, 0, MPI_BYTE, 1, FENCE, MPI_COMM_WORLD, &f));
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        MPI_CHECK(MPI_Wait(&f, MPI_STATUS_IGNORE));
    else if (rank == 1)
        only_fence_left(tag, "freed");
}

/* A 4-byte Isend to a posted receive leaves inside MPI_Isend: too late. */
static void done(int tag)
{
    int x = -1;
    MPI_Request r = MPI_REQUEST_NULL;
    if (rank == 1)
        MPI_CHECK(MPI_Irecv(&x, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        x = 4242;
        MPI_CHECK(MPI_Isend(&x, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Cancel(&r));
        CHECK(!finish(&r, "done"), "done: a send that had left was cancelled");
    } else if (rank == 1) {
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(x == 4242, "done: received %d", x);
    }
}

static void self(void)
{
    MPI_Comm c;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &c));
    static unsigned char buf[100 << 10];
    for (int i = 0; i < 20; i++) {
        int n = i % 2 ? 0 : (int)sizeof buf, flag = 0, cancelled = 0;
        MPI_Request r;
        MPI_Status st;
        MPI_CHECK(MPI_Issend(buf, n, MPI_BYTE, 0, 123, c, &r));
        MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 123, "self: probed %d/%d", st.MPI_SOURCE,
              st.MPI_TAG);
        MPI_CHECK(MPI_Cancel(&r));
        MPI_CHECK(MPI_Request_get_status(r, &flag, &st));
        if (flag)
            MPI_CHECK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(flag && cancelled, "self %d: %d B: not cancelled when MPI_Cancel returned "
              "(complete %d)", i, n, flag);
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &st));
        CHECK(!flag, "self %d: the cancelled message is still there", i);
    }
    MPI_CHECK(MPI_Comm_free(&c));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks or more, not %d", size);
    /* 300000 B and up go by rendezvous; smaller by eager */
    const size_t sizes[] = {0, 1, 100, 10000, 300000, 4u << 20};
    int tag = 10;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        unmatched(sizes[i], 1, tag++);
    unmatched(300000, 0, tag++);
    unmatched(4u << 20, 0, tag++);
    middle(tag++);
    matched(tag++);
    persist(tag++);
    vector(8, tag++);
    vector(40000, tag++); /* 320000 B: rendezvous */
    freed(tag++);
    done(tag++);
    self();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_cancel: %d ranks: OK\n", size);
    return 0;
}
