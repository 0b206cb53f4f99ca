/*
 * intercomm_roots.c — rooted collectives on an intercommunicator, in the
 * pattern of mpi4py's tests: each member of the root's group is in turn
 * the root (MPI_ROOT) while the others pass MPI_PROC_NULL with no buffer,
 * no count and MPI_DATATYPE_NULL (only root is significant there), and the
 * message size changes with the root. A call that a MPI_PROC_NULL member
 * skips must still keep the communicator's collectives in step: the next
 * root's message must not be taken for this one's (it was: "message
 * truncated", then a hang). Blocking and nonblocking forms, both groups
 * as roots. Then MPI_Comm_split_type on the intercommunicator.
 */
#include <stdbool.h>

#include "mpitest.h"

static int wrank, wsize;

static void fill(int *b, int n, int base)
{
    for (int i = 0; i < n; i++)
        b[i] = base + i;
}

/* My group's turn to be the roots: each member once. */
static void as_roots(MPI_Comm ic, int rank, int lsize, int rsize, int color, bool nb)
{
    for (int root = 0; root < lsize; root++) {
        int n = root + 1 + color; /* a size per root */
        int buf[64], vals[64 * 8];
        MPI_Request rq;
        if (root != rank) {
            /* MPI_PROC_NULL: nothing significant but root */
            if (nb) {
                MPI_CHECK(MPI_Ibcast(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, ic, &rq));
                MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
                MPI_CHECK(MPI_Ireduce(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL,
                                      MPI_PROC_NULL, ic, &rq));
                MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            } else {
                MPI_CHECK(MPI_Bcast(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, ic));
                MPI_CHECK(MPI_Reduce(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL,
                                     MPI_PROC_NULL, ic));
            }
            MPI_CHECK(MPI_Gather(NULL, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL,
                                 MPI_PROC_NULL, ic));
            MPI_CHECK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, NULL, 0, MPI_DATATYPE_NULL,
                                  MPI_PROC_NULL, ic));
            continue;
        }
        fill(buf, n, 1000 * root);
        if (nb) {
            MPI_CHECK(MPI_Ibcast(buf, n, MPI_INT, MPI_ROOT, ic, &rq));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Bcast(buf, n, MPI_INT, MPI_ROOT, ic));
        }
        for (int i = 0; i < n; i++)
            buf[i] = -1;
        if (nb) {
            MPI_CHECK(MPI_Ireduce(NULL, buf, n, MPI_INT, MPI_SUM, MPI_ROOT, ic, &rq));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Reduce(NULL, buf, n, MPI_INT, MPI_SUM, MPI_ROOT, ic));
        }
        for (int i = 0; i < n; i++) /* remote rank r sent r + i */
            CHECK(buf[i] == rsize * i + rsize * (rsize - 1) / 2, "reduce from root %d: [%d] = %d",
                  root, i, buf[i]);
        for (int i = 0; i < rsize * n; i++)
            vals[i] = -1;
        MPI_CHECK(MPI_Gather(NULL, 0, MPI_INT, vals, n, MPI_INT, MPI_ROOT, ic));
        for (int r = 0; r < rsize; r++)
            for (int i = 0; i < n; i++)
                CHECK(vals[r * n + i] == 100 * r + i, "gather at root %d: [%d][%d] = %d", root,
                      r, i, vals[r * n + i]);
        for (int r = 0; r < rsize; r++)
            fill(vals + r * n, n, 7000 + 10 * r);
        MPI_CHECK(MPI_Scatter(vals, n, MPI_INT, NULL, 0, MPI_INT, MPI_ROOT, ic));
    }
}

/* The other group's turn: receive from each of its members in order. */
static void from_roots(MPI_Comm ic, int rank, int rsize, int color, bool nb)
{
    for (int root = 0; root < rsize; root++) {
        int n = root + 1 + color;
        int buf[64];
        MPI_Request rq;
        for (int i = 0; i < n; i++)
            buf[i] = -1;
        if (nb) {
            MPI_CHECK(MPI_Ibcast(buf, n, MPI_INT, root, ic, &rq));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Bcast(buf, n, MPI_INT, root, ic));
        }
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == 1000 * root + i, "bcast from root %d: [%d] = %d", root, i, buf[i]);
        fill(buf, n, rank);
        if (nb) {
            MPI_CHECK(MPI_Ireduce(buf, NULL, n, MPI_INT, MPI_SUM, root, ic, &rq));
            MPI_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Reduce(buf, NULL, n, MPI_INT, MPI_SUM, root, ic));
        }
        fill(buf, n, 100 * rank);
        MPI_CHECK(MPI_Gather(buf, n, MPI_INT, NULL, 0, MPI_INT, root, ic));
        MPI_CHECK(MPI_Scatter(NULL, 0, MPI_INT, buf, n, MPI_INT, root, ic));
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == 7000 + 10 * rank + i, "scatter from root %d: [%d] = %d", root, i,
                  buf[i]);
    }
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2 && wsize <= 16, "needs 2 to 16 ranks");
    int half = wsize / 2, color = wrank < half ? 0 : 1;
    MPI_Comm local, ic;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, color, 0, &local));
    MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : half, 11, &ic));
    int rank, lsize, rsize;
    MPI_CHECK(MPI_Comm_rank(ic, &rank));
    MPI_CHECK(MPI_Comm_size(ic, &lsize));
    MPI_CHECK(MPI_Comm_remote_size(ic, &rsize));

    for (int rep = 0; rep < 3; rep++)
        for (int nb = 0; nb < 2; nb++)
            for (int turn = 0; turn < 2; turn++) {
                if (turn == color)
                    as_roots(ic, rank, lsize, rsize, turn, nb);
                else
                    from_roots(ic, rank, rsize, turn, nb);
            }
    MPI_CHECK(MPI_Barrier(ic));

    /* Split by shared memory: every process here is on one host, so both
     * groups keep all their members; MPI_UNDEFINED gives MPI_COMM_NULL. */
    MPI_Comm sh;
    MPI_CHECK(MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
    int flag = 0, n = 0, rn = 0;
    CHECK(sh != MPI_COMM_NULL, "split_type(SHARED) of an intercommunicator gave MPI_COMM_NULL");
    MPI_CHECK(MPI_Comm_test_inter(sh, &flag));
    MPI_CHECK(MPI_Comm_size(sh, &n));
    MPI_CHECK(MPI_Comm_remote_size(sh, &rn));
    CHECK(flag && n == lsize && rn == rsize, "shared split: inter %d, sizes %d/%d", flag, n, rn);
    int token = wrank, got = -1;
    MPI_CHECK(MPI_Bcast(color ? &got : &token, 1, MPI_INT,
                        color ? 0 : (rank == 0 ? MPI_ROOT : MPI_PROC_NULL), sh));
    if (color)
        CHECK(got == 0, "bcast over the shared split: %d", got);
    MPI_CHECK(MPI_Comm_free(&sh));
    MPI_CHECK(MPI_Comm_split_type(ic, MPI_UNDEFINED, 0, MPI_INFO_NULL, &sh));
    CHECK(sh == MPI_COMM_NULL, "split_type(MPI_UNDEFINED) gave a communicator");

    MPI_CHECK(MPI_Comm_free(&ic));
    MPI_CHECK(MPI_Comm_free(&local));
    MPI_CHECK(MPI_Finalize());
    if (wrank == 0)
        printf("intercomm_roots: %d ranks: OK\n", wsize);
    return 0;
}
