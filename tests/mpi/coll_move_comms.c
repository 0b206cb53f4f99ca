/*
 * coll_move_comms.c — the data-movement collectives on communicators other than
 * MPI_COMM_WORLD: sub-communicators from MPI_Comm_split (ranks reordered by
 * key) and an intercommunicator between the even and the odd world ranks
 * from MPI_Intercomm_create (rooted calls with MPI_ROOT / MPI_PROC_NULL in
 * either group, allgather with different amounts per group, alltoall,
 * v- and w-variants), blocking and nonblocking. Results are checked against
 * values computed from (operation, group, sender, receiver, index).
 */
#include "mpitest.h"

static int wrank, wsize;

static int val(int op, int grp, int from, int to, int i)
{
    return op * 10000000 + grp * 1000000 + from * 10000 + to * 100 + i;
}

static void wait_if(int nb, MPI_Request *req)
{
    if (nb)
        MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

/* ---- Intracommunicator (sub-communicator) -------------------------------- */

static void intra(MPI_Comm comm, int nb)
{
    enum { K = 5 };
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int *s = malloc(sizeof(int) * K * (size_t)n), *r = malloc(sizeof(int) * K * (size_t)n);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int root = 0; root < n; root += n > 2 ? n - 1 : 1) {
        for (int i = 0; i < K; i++)
            s[i] = val(1, 0, me, root, i);
        if (nb)
            MPI_CHECK(MPI_Igather(s, K, MPI_INT, r, K, MPI_INT, root, comm, &req));
        else
            MPI_CHECK(MPI_Gather(s, K, MPI_INT, r, K, MPI_INT, root, comm));
        wait_if(nb, &req);
        if (me == root)
            for (int j = 0; j < n * K; j++)
                CHECK(r[j] == val(1, 0, j / K, root, j % K), "sub gather root %d [%d] = %d", root,
                      j, r[j]);
        for (int j = 0; j < n * K; j++)
            s[j] = val(2, 0, me, j / K, j % K);
        if (nb)
            MPI_CHECK(MPI_Iscatter(s, K, MPI_INT, r, K, MPI_INT, root, comm, &req));
        else
            MPI_CHECK(MPI_Scatter(s, K, MPI_INT, r, K, MPI_INT, root, comm));
        wait_if(nb, &req);
        for (int i = 0; i < K; i++)
            CHECK(r[i] == val(2, 0, root, me, i), "sub scatter root %d [%d] = %d", root, i, r[i]);
    }
    for (int i = 0; i < K; i++)
        s[i] = val(3, 0, me, 0, i);
    if (nb)
        MPI_CHECK(MPI_Iallgather(s, K, MPI_INT, r, K, MPI_INT, comm, &req));
    else
        MPI_CHECK(MPI_Allgather(s, K, MPI_INT, r, K, MPI_INT, comm));
    wait_if(nb, &req);
    for (int j = 0; j < n * K; j++)
        CHECK(r[j] == val(3, 0, j / K, 0, j % K), "sub allgather [%d] = %d", j, r[j]);
    for (int j = 0; j < n * K; j++)
        s[j] = val(4, 0, me, j / K, j % K);
    if (nb)
        MPI_CHECK(MPI_Ialltoall(s, K, MPI_INT, r, K, MPI_INT, comm, &req));
    else
        MPI_CHECK(MPI_Alltoall(s, K, MPI_INT, r, K, MPI_INT, comm));
    wait_if(nb, &req);
    for (int j = 0; j < n * K; j++)
        CHECK(r[j] == val(4, 0, j / K, me, j % K), "sub alltoall [%d] = %d", j, r[j]);
    free(s);
    free(r);
}

/* ---- Intercommunicator ---------------------------------------------------- */

static int grp, lr, nl, nr; /* my group (0 even, 1 odd), local rank/size, remote size */

/* Rooted pair: group `rg` holds the root at its local rank `rr`. */
static int root_arg(int rg, int rr)
{
    if (grp == rg)
        return lr == rr ? MPI_ROOT : MPI_PROC_NULL;
    return rr;
}

static void inter_rooted(MPI_Comm ic, int nb, int rg, int rr)
{
    enum { K = 4 };
    int root = root_arg(rg, rr);
    int *s = malloc(sizeof(int) * K * 8), *r = malloc(sizeof(int) * K * 8);
    int *cnt = malloc(sizeof(int) * 8), *dsp = malloc(sizeof(int) * 8);
    MPI_Request req = MPI_REQUEST_NULL;
    int rsz = grp == rg ? nr : nl; /* size of the non-root group */
    /* Gather */
    for (int j = 0; j < K * 8; j++)
        r[j] = -1;
    for (int i = 0; i < K; i++)
        s[i] = val(5, grp, lr, rr, i);
    if (nb)
        MPI_CHECK(MPI_Igather(s, K, MPI_INT, r, K, MPI_INT, root, ic, &req));
    else
        MPI_CHECK(MPI_Gather(s, K, MPI_INT, r, K, MPI_INT, root, ic));
    wait_if(nb, &req);
    if (root == MPI_ROOT)
        for (int j = 0; j < rsz * K; j++)
            CHECK(r[j] == val(5, 1 - grp, j / K, rr, j % K), "inter gather [%d] = %d", j, r[j]);
    if (root == MPI_PROC_NULL)
        CHECK(r[0] == -1, "inter gather wrote at a PROC_NULL rank");
    /* Gatherv: remote rank j sends j + 1 ints, placed in reverse order. */
    for (int j = 0, pos = 0; j < rsz; j++) {
        cnt[rsz - 1 - j] = rsz - j;
        dsp[rsz - 1 - j] = pos;
        pos += rsz - j;
    }
    for (int i = 0; i <= lr; i++)
        s[i] = val(6, grp, lr, rr, i);
    if (nb)
        MPI_CHECK(MPI_Igatherv(s, lr + 1, MPI_INT, r, cnt, dsp, MPI_INT, root, ic, &req));
    else
        MPI_CHECK(MPI_Gatherv(s, lr + 1, MPI_INT, r, cnt, dsp, MPI_INT, root, ic));
    wait_if(nb, &req);
    if (root == MPI_ROOT)
        for (int j = 0; j < rsz; j++)
            for (int i = 0; i <= j; i++)
                CHECK(r[dsp[j] + i] == val(6, 1 - grp, j, rr, i), "inter gatherv [%d][%d]", j, i);
    /* Scatter */
    for (int j = 0; j < K * 8; j++)
        s[j] = val(7, grp, lr, j / K, j % K);
    if (nb)
        MPI_CHECK(MPI_Iscatter(s, K, MPI_INT, r, K, MPI_INT, root, ic, &req));
    else
        MPI_CHECK(MPI_Scatter(s, K, MPI_INT, r, K, MPI_INT, root, ic));
    wait_if(nb, &req);
    if (root >= 0)
        for (int i = 0; i < K; i++)
            CHECK(r[i] == val(7, 1 - grp, rr, lr, i), "inter scatter [%d] = %d", i, r[i]);
    /* Scatterv */
    for (int j = 0; j < rsz; j++)
        for (int i = 0; i <= j; i++)
            s[dsp[j] + i] = val(8, grp, lr, j, i);
    if (nb)
        MPI_CHECK(MPI_Iscatterv(s, cnt, dsp, MPI_INT, r, lr + 1, MPI_INT, root, ic, &req));
    else
        MPI_CHECK(MPI_Scatterv(s, cnt, dsp, MPI_INT, r, lr + 1, MPI_INT, root, ic));
    wait_if(nb, &req);
    if (root >= 0)
        for (int i = 0; i <= lr; i++)
            CHECK(r[i] == val(8, 1 - grp, rr, lr, i), "inter scatterv [%d] = %d", i, r[i]);
    free(s);
    free(r);
    free(cnt);
    free(dsp);
}

static void inter_all(MPI_Comm ic, int nb)
{
    /* Group 0 contributes K ints each, group 1 2K: each side receives the
     * other's amount. */
    enum { K = 3 };
    int mine = grp ? 2 * K : K, theirs = grp ? K : 2 * K;
    int *s = malloc(sizeof(int) * 64), *r = malloc(sizeof(int) * 64);
    int *sc = malloc(sizeof(int) * 8), *sd = malloc(sizeof(int) * 8);
    int *rc = malloc(sizeof(int) * 8), *rd = malloc(sizeof(int) * 8);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 8), *rt = malloc(sizeof(MPI_Datatype) * 8);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < mine; i++)
        s[i] = val(9, grp, lr, 0, i);
    if (nb)
        MPI_CHECK(MPI_Iallgather(s, mine, MPI_INT, r, theirs, MPI_INT, ic, &req));
    else
        MPI_CHECK(MPI_Allgather(s, mine, MPI_INT, r, theirs, MPI_INT, ic));
    wait_if(nb, &req);
    for (int j = 0; j < nr * theirs; j++)
        CHECK(r[j] == val(9, 1 - grp, j / theirs, 0, j % theirs), "inter allgather [%d] = %d", j,
              r[j]);
    /* Allgatherv: remote rank j gave j + 1 ints, stored at 8 * j. */
    for (int j = 0; j < nr; j++) {
        rc[j] = j + 1;
        rd[j] = 8 * j;
    }
    for (int i = 0; i <= lr; i++)
        s[i] = val(10, grp, lr, 0, i);
    if (nb)
        MPI_CHECK(MPI_Iallgatherv(s, lr + 1, MPI_INT, r, rc, rd, MPI_INT, ic, &req));
    else
        MPI_CHECK(MPI_Allgatherv(s, lr + 1, MPI_INT, r, rc, rd, MPI_INT, ic));
    wait_if(nb, &req);
    for (int j = 0; j < nr; j++)
        for (int i = 0; i <= j; i++)
            CHECK(r[8 * j + i] == val(10, 1 - grp, j, 0, i), "inter allgatherv [%d][%d]", j, i);
    /* Alltoall */
    for (int j = 0; j < nr * K; j++)
        s[j] = val(11, grp, lr, j / K, j % K);
    if (nb)
        MPI_CHECK(MPI_Ialltoall(s, K, MPI_INT, r, K, MPI_INT, ic, &req));
    else
        MPI_CHECK(MPI_Alltoall(s, K, MPI_INT, r, K, MPI_INT, ic));
    wait_if(nb, &req);
    for (int j = 0; j < nr * K; j++)
        CHECK(r[j] == val(11, 1 - grp, j / K, lr, j % K), "inter alltoall [%d] = %d", j, r[j]);
    /* Alltoallv: (a + b) % 3 ints between local a and remote b, at 4 * b. */
    for (int j = 0; j < nr; j++) {
        sc[j] = rc[j] = (lr + j) % 3;
        sd[j] = rd[j] = 4 * j;
        for (int i = 0; i < sc[j]; i++)
            s[4 * j + i] = val(12, grp, lr, j, i);
    }
    if (nb)
        MPI_CHECK(MPI_Ialltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, ic, &req));
    else
        MPI_CHECK(MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, ic));
    wait_if(nb, &req);
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < rc[j]; i++)
            CHECK(r[4 * j + i] == val(12, 1 - grp, j, lr, i), "inter alltoallv [%d][%d]", j, i);
    /* Alltoallw: MPI_INT or MPI_2INT by (a + b) % 2, byte displacements. */
    for (int j = 0; j < nr; j++) {
        int pair = (lr + j) % 2;
        st[j] = rt[j] = pair ? MPI_2INT : MPI_INT;
        sc[j] = rc[j] = 1 + (lr + j) % 2;
        sd[j] = rd[j] = (int)sizeof(int) * 6 * j;
        for (int i = 0; i < sc[j] * (pair ? 2 : 1); i++)
            s[6 * j + i] = val(13, grp, lr, j, i);
    }
    if (nb)
        MPI_CHECK(MPI_Ialltoallw(s, sc, sd, st, r, rc, rd, rt, ic, &req));
    else
        MPI_CHECK(MPI_Alltoallw(s, sc, sd, st, r, rc, rd, rt, ic));
    wait_if(nb, &req);
    for (int j = 0; j < nr; j++)
        for (int i = 0; i < rc[j] * ((lr + j) % 2 ? 2 : 1); i++)
            CHECK(r[6 * j + i] == val(13, 1 - grp, j, lr, i), "inter alltoallw [%d][%d]", j, i);
    free(s);
    free(r);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 8, "at most 8 ranks (fixed-size buffers)");
    /* Split by parity, ranks reversed by key; then a 3 / rest split. */
    MPI_Comm half, third;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half));
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank < 3, wrank, &third));
    for (int nb = 0; nb < 2; nb++) {
        intra(half, nb);
        intra(third, nb);
    }
    if (wsize >= 2) {
        MPI_Comm ic, local;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &local));
        MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 77, &ic));
        grp = wrank % 2;
        MPI_Comm_rank(ic, &lr);
        MPI_Comm_size(ic, &nl);
        MPI_Comm_remote_size(ic, &nr);
        for (int nb = 0; nb < 2; nb++) {
            inter_rooted(ic, nb, 0, 0);
            inter_rooted(ic, nb, 1, nr > 1 && grp == 0 ? nr - 1 : nl > 1 && grp == 1 ? nl - 1 : 0);
            inter_all(ic, nb);
        }
        MPI_CHECK(MPI_Comm_free(&ic));
        MPI_CHECK(MPI_Comm_free(&local));
    }
    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Comm_free(&third));
    if (wrank == 0)
        printf("coll_move_comms: OK on %d ranks\n", wsize);
    MPI_Finalize();
    return 0;
}
