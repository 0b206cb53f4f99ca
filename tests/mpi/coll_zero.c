/*
 * coll_zero.c — collectives that move no byte: MPI_Alltoall, MPI_Allgather,
 * MPI_Allgatherv (every count 0), MPI_Gather, MPI_Scatter, MPI_Bcast,
 * MPI_Allreduce, blocking and nonblocking, count 0 and zero-size types,
 * every root. Each returns with its buffers untouched; a nonblocking one's
 * request is complete at once (MPI_Test says so the first time); and the
 * collectives after them, with data, still match (no rank left one
 * behind): an MPI_Alltoall and an MPI_Allgather of rank-dependent values
 * after each empty one, checked. Also empty MPI_Alltoallv/Gatherv, which
 * take part as before (some ranks' counts there are not every rank's), and
 * v forms where one rank's blocks are all empty while the others exchange
 * (blocking, nonblocking, persistent).
 *
 * Usage: coll_zero   (any number of ranks)
 */
#include "mpitest.h"

enum { MAXR = 64, SENTINEL = -7 };
static int rank, size;

/* Data after an empty collective: still in step. */
static void follow_up(const char *after)
{
    int out[MAXR], in[MAXR];
    for (int i = 0; i < size; i++)
        out[i] = rank * 1000 + i;
    MPI_CHECK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(in[i] == i * 1000 + rank, "alltoall after %s: from %d got %d", after, i, in[i]);
    int me = rank * 7 + 1;
    MPI_CHECK(MPI_Allgather(&me, 1, MPI_INT, in, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(in[i] == i * 7 + 1, "allgather after %s: from %d got %d", after, i, in[i]);
}

static void untouched(const int *buf, const char *what)
{
    for (int i = 0; i < MAXR; i++)
        CHECK(buf[i] == SENTINEL, "%s wrote element %d (%d)", what, i, buf[i]);
}

/* A nonblocking one: complete at the first MPI_Test. */
static void done_at_once(MPI_Request *req, const char *what)
{
    int flag = 0;
    MPI_Status st;
    MPI_CHECK(MPI_Test(req, &flag, &st));
    CHECK(flag && *req == MPI_REQUEST_NULL, "%s: not complete at once", what);
}

/* v forms where the last rank has nothing to send or receive while the
 * others exchange: the empty rank is done at once (nonblocking: at the
 * first MPI_Test), the others' data arrive, and everybody stays in step;
 * also under a persistent MPI_Alltoallv_init started twice. */
static void some_ranks_empty(int *s, int *r)
{
    int idle = size - 1, me_idle = rank == idle;
    int scnt[MAXR], rcnt[MAXR], sd[MAXR], rd[MAXR];
    for (int i = 0; i < size; i++) {
        scnt[i] = rcnt[i] = (me_idle || i == idle) ? 0 : 1;
        sd[i] = rd[i] = i;
        s[i] = rank * 100 + i;
    }
    MPI_Request req, pers;
    MPI_CHECK(MPI_Alltoallv_init(s, scnt, sd, MPI_INT, r, rcnt, rd, MPI_INT, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &pers));
    for (int form = 0; form < 4; form++) {
        for (int i = 0; i < MAXR; i++)
            r[i] = SENTINEL;
        if (form == 0) {
            MPI_CHECK(MPI_Alltoallv(s, scnt, sd, MPI_INT, r, rcnt, rd, MPI_INT, MPI_COMM_WORLD));
        } else if (form == 1) {
            MPI_CHECK(MPI_Ialltoallv(s, scnt, sd, MPI_INT, r, rcnt, rd, MPI_INT, MPI_COMM_WORLD,
                                     &req));
            if (me_idle)
                done_at_once(&req, "ialltoallv of an empty rank");
            else
                MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Start(&pers));
            MPI_CHECK(MPI_Wait(&pers, MPI_STATUS_IGNORE));
        }
        for (int i = 0; i < size; i++) {
            int want = (me_idle || i == idle) ? SENTINEL : i * 100 + rank;
            CHECK(r[i] == want, "alltoallv form %d, one rank empty: from %d got %d, want %d",
                  form, i, r[i], want);
        }
        follow_up("an alltoallv with an empty rank");
    }
    MPI_CHECK(MPI_Request_free(&pers));
    /* Gatherv / Scatterv to and from rank 0; the idle rank's block is empty */
    int mine = rank == idle ? 0 : 1, v = rank * 3 + 2;
    for (int nb = 0; nb < 2; nb++) {
        for (int i = 0; i < MAXR; i++)
            r[i] = SENTINEL;
        if (nb) {
            MPI_CHECK(MPI_Igatherv(&v, mine, MPI_INT, r, rcnt, rd, MPI_INT, 0, MPI_COMM_WORLD,
                                   &req));
            if (me_idle && rank != 0)
                done_at_once(&req, "igatherv of an empty rank");
            else
                MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Gatherv(&v, mine, MPI_INT, r, rcnt, rd, MPI_INT, 0, MPI_COMM_WORLD));
        }
        if (rank == 0 && !me_idle)
            for (int i = 0; i < size; i++) {
                int want = i == idle ? SENTINEL : i * 3 + 2;
                CHECK(r[i] == want, "gatherv, one rank empty: from %d got %d", i, r[i]);
            }
        follow_up("a gatherv with an empty rank");
        int got = SENTINEL;
        for (int i = 0; i < size; i++)
            s[i] = i * 5 + 1;
        if (nb) {
            MPI_CHECK(MPI_Iscatterv(s, scnt, sd, MPI_INT, &got, mine, MPI_INT, 0, MPI_COMM_WORLD,
                                    &req));
            MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_CHECK(MPI_Scatterv(s, scnt, sd, MPI_INT, &got, mine, MPI_INT, 0, MPI_COMM_WORLD));
        }
        int want = (me_idle || size == 1) ? SENTINEL : rank * 5 + 1;
        CHECK(got == want, "scatterv, one rank empty: got %d, want %d", got, want);
        follow_up("a scatterv with an empty rank");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= MAXR, "at most %d ranks", MAXR);
    int s[MAXR], r[MAXR], zeros[MAXR] = {0}, displs[MAXR] = {0};
    MPI_Datatype empty; /* a type of no byte */
    MPI_CHECK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_CHECK(MPI_Type_commit(&empty));
    MPI_Request req;
    for (int i = 0; i < MAXR; i++)
        s[i] = rank;

    for (int round = 0; round < 2; round++) {
        int cnt = round == 0 ? 0 : 5;
        MPI_Datatype t = round == 0 ? MPI_INT : empty; /* 0 ints, or 5 empty ones */
        for (int i = 0; i < MAXR; i++)
            r[i] = SENTINEL;
        MPI_CHECK(MPI_Alltoall(s, cnt, t, r, cnt, t, MPI_COMM_WORLD));
        untouched(r, "alltoall");
        follow_up("an empty alltoall");
        MPI_CHECK(MPI_Ialltoall(s, cnt, t, r, cnt, t, MPI_COMM_WORLD, &req));
        done_at_once(&req, "ialltoall");
        MPI_CHECK(MPI_Allgather(s, cnt, t, r, cnt, t, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Iallgather(s, cnt, t, r, cnt, t, MPI_COMM_WORLD, &req));
        done_at_once(&req, "iallgather");
        MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, cnt, t, MPI_COMM_WORLD));
        untouched(r, "allgather");
        follow_up("an empty allgather");
        MPI_CHECK(MPI_Allgatherv(s, 0, MPI_INT, r, zeros, displs, MPI_INT, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Iallgatherv(s, 0, MPI_INT, r, zeros, displs, MPI_INT, MPI_COMM_WORLD,
                                  &req));
        done_at_once(&req, "iallgatherv");
        untouched(r, "allgatherv");
        follow_up("an empty allgatherv");
        for (int root = 0; root < size; root++) {
            MPI_CHECK(MPI_Gather(s, cnt, t, r, cnt, t, root, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Scatter(s, cnt, t, r, cnt, t, root, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Igather(s, cnt, t, r, cnt, t, root, MPI_COMM_WORLD, &req));
            done_at_once(&req, "igather");
            MPI_CHECK(MPI_Iscatter(s, cnt, t, r, cnt, t, root, MPI_COMM_WORLD, &req));
            done_at_once(&req, "iscatter");
            MPI_CHECK(MPI_Bcast(r, cnt, t, root, MPI_COMM_WORLD));
            untouched(r, "gather, scatter, bcast");
            follow_up("empty gathers and scatters");
        }
        MPI_CHECK(MPI_Allreduce(s, r, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        untouched(r, "allreduce");
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, cnt, t, MPI_SUM, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Ireduce_scatter_block(s, r, cnt, t, MPI_SUM, MPI_COMM_WORLD, &req));
        done_at_once(&req, "ireduce_scatter_block");
        untouched(r, "reduce_scatter_block");
        follow_up("an empty reduce_scatter_block");
        /* counts only some ranks know: these still take part */
        MPI_CHECK(MPI_Alltoallv(s, zeros, displs, MPI_INT, r, zeros, displs, MPI_INT,
                                MPI_COMM_WORLD));
        MPI_CHECK(MPI_Gatherv(s, 0, MPI_INT, r, zeros, displs, MPI_INT, 0, MPI_COMM_WORLD));
        untouched(r, "alltoallv, gatherv");
        follow_up("empty v collectives");
    }
    some_ranks_empty(s, r);
    MPI_CHECK(MPI_Type_free(&empty));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_zero: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
