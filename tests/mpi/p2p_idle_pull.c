/*
 * p2p_idle_pull — a process that waits with nothing to do takes in the
 * rendezvous messages waiting unexpected (core/unexp_pull.c), so sends
 * that rely on buffering complete; synchronous sends still wait for their
 * receive.
 *
 * Phases (ranks 0 and 1 of the job; a job of one rank runs phase self):
 *   buffered  rank 0 Isends 1 MiB + 5 to rank 1 and waits for it, while rank
 *             1 waits in a receive of another tag that rank 0 sends only
 *             after: without the pull, both wait for ever. Rank 0 then
 *             scribbles over its buffer; rank 1 probes (the size must be
 *             right), receives into a smaller buffer (truncated: error
 *             class MPI_ERR_TRUNCATE, count of what fit) and then the same
 *             message again from a second send, whole, and checks the bytes.
 *   sync      rank 0 Issends 1 MiB to rank 1, which waits 0.3 s in a
 *             receive of another tag: the Issend must not complete before
 *             rank 1 posts its receive.
 *   any       two senders (ranks 1 and 2 when there are 3) Isend 600 KB
 *             each to rank 0 and wait, while rank 0 waits for a token;
 *             then rank 0 receives both with ANY_SOURCE.
 *   self      a rank Isends 1 MiB to itself, waits for it, then receives it.
 */
#include <stdbool.h>
#include <time.h>

#include "mpitest.h"

#define BIG ((1 << 20) + 5)
#define MID 600000

static int rank, size;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31 + seed + (i >> 12));
}

static void check(const unsigned char *p, size_t n, unsigned seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(p[i] == (unsigned char)(i * 31 + seed + (i >> 12)), "%s: byte %zu of %zu wrong",
              what, i, n);
}

static void phase_buffered(unsigned char *buf)
{
    if (rank == 0) {
        MPI_Request r;
        fill(buf, BIG, 1);
        MPI_CHECK(MPI_Isend(buf, BIG, MPI_BYTE, 1, 10, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE)); /* rank 1 has posted nothing for it */
        memset(buf, 0xee, BIG);                    /* the data it keeps is its own */
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 11, MPI_COMM_WORLD));
        fill(buf, BIG, 2);
        MPI_CHECK(MPI_Send(buf, BIG, MPI_BYTE, 1, 10, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Status st;
        int count;
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Probe(0, 10, MPI_COMM_WORLD, &st));
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK(count == BIG, "probe of the pulled message: %d bytes, sent %d", count, BIG);
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        memset(buf, 0, BIG);
        int rc = MPI_Recv(buf, 1000, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st), cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "a pulled message into 1000 bytes: class %d", cls);
        MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
        CHECK(count == 1000, "truncated receive counted %d", count);
        check(buf, 1000, 1, "truncated pulled message");
        MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MPI_CHECK(MPI_Recv(buf, BIG, MPI_BYTE, 0, 10, MPI_COMM_WORLD, &st));
        check(buf, BIG, 2, "second message");
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void phase_sync(unsigned char *buf)
{
    if (rank == 0) {
        MPI_Request r;
        int done = 0;
        fill(buf, BIG, 3);
        MPI_CHECK(MPI_Issend(buf, BIG, MPI_BYTE, 1, 20, MPI_COMM_WORLD, &r));
        double t0 = now();
        while (now() - t0 < 0.3) {
            MPI_CHECK(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
            CHECK(!done, "MPI_Issend completed before its receive was posted");
        }
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 1, 21, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    } else if (rank == 1) {
        MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_CHECK(MPI_Recv(buf, BIG, MPI_BYTE, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        check(buf, BIG, 3, "synchronous message");
    }
}

static void phase_any(unsigned char *buf)
{
    if (rank == 1 || rank == 2) {
        MPI_Request r;
        fill(buf, MID, 10 + (unsigned)rank);
        MPI_CHECK(MPI_Isend(buf, MID, MPI_BYTE, 0, 30, MPI_COMM_WORLD, &r));
        MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        memset(buf, 0xee, MID);
        MPI_CHECK(MPI_Send(NULL, 0, MPI_BYTE, 0, 31, MPI_COMM_WORLD));
    } else if (rank == 0) {
        bool seen[3] = {false};
        for (int i = 0; i < 2; i++)
            MPI_CHECK(MPI_Recv(NULL, 0, MPI_BYTE, MPI_ANY_SOURCE, 31, MPI_COMM_WORLD,
                               MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++) {
            MPI_Status st;
            MPI_CHECK(MPI_Recv(buf, MID, MPI_BYTE, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &st));
            CHECK(st.MPI_SOURCE == 1 || st.MPI_SOURCE == 2, "source %d", st.MPI_SOURCE);
            CHECK(!seen[st.MPI_SOURCE], "two messages from %d", st.MPI_SOURCE);
            seen[st.MPI_SOURCE] = true;
            check(buf, MID, 10 + (unsigned)st.MPI_SOURCE, "ANY_SOURCE pulled message");
        }
    }
}

static void phase_self(unsigned char *buf, unsigned char *in)
{
    MPI_Request r;
    fill(buf, BIG, 40);
    MPI_CHECK(MPI_Isend(buf, BIG, MPI_BYTE, rank, 40, MPI_COMM_WORLD, &r));
    MPI_CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    memset(buf, 0xee, BIG);
    MPI_CHECK(MPI_Recv(in, BIG, MPI_BYTE, rank, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check(in, BIG, 40, "message to self");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *buf = malloc(BIG), *in = malloc(BIG);
    CHECK(buf && in, "out of memory");
    if (size == 1) {
        phase_self(buf, in);
    } else {
        phase_buffered(buf);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        phase_sync(buf);
        MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        if (size >= 3) {
            phase_any(buf);
            MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
    if (rank == 0)
        printf("p2p_idle_pull: ok (%d ranks)\n", size);
    free(buf);
    free(in);
    MPI_Finalize();
    return 0;
}
