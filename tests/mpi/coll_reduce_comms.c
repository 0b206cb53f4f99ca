/*
 * coll_reduce_comms.c — the reduction-family collectives on communicators other
 * than MPI_COMM_WORLD: MPI_COMM_SELF, sub-communicators from MPI_Comm_split
 * whose ranks are reordered by key (results follow the new ranks, rank
 * order included for a non-commutative operation), and an
 * intercommunicator between the even and the odd world ranks: Barrier,
 * Bcast and Reduce with MPI_ROOT / MPI_PROC_NULL in either group,
 * Allreduce, Reduce_scatter and Reduce_scatter_block (each group gets the
 * other group's reduction), blocking and nonblocking.
 */
#include "coll_reduce_util.h"

static int wrank, wsize;
static MPI_Datatype mat;
static MPI_Op matop;

static void fin(int nb, MPI_Request *req)
{
    if (nb)
        MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

/* ---- Intracommunicators -------------------------------------------------- */

static void intra(MPI_Comm comm, int nb, int t)
{
    enum { n = 23 };
    int me, sz;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &sz);
    MPI_Request req = MPI_REQUEST_NULL;
    int s[n * 8], r[n * 8];
    ca_mat ms[n], mr[n];
    /* bcast from the last rank */
    for (int i = 0; i < n; i++)
        r[i] = me == sz - 1 ? ca_val(t, 99, i) : -1;
    if (nb)
        MPI_CHECK(MPI_Ibcast(r, n, MPI_INT, sz - 1, comm, &req));
    else
        MPI_CHECK(MPI_Bcast(r, n, MPI_INT, sz - 1, comm));
    fin(nb, &req);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == ca_val(t, 99, i), "sub bcast [%d] = %d", i, r[i]);
    /* non-commutative reduce to the middle, allreduce, scan */
    for (int i = 0; i < n; i++)
        ms[i] = ca_matval(t, me, i);
    int root = sz / 2;
    if (nb)
        MPI_CHECK(MPI_Ireduce(ms, mr, n, mat, matop, root, comm, &req));
    else
        MPI_CHECK(MPI_Reduce(ms, mr, n, mat, matop, root, comm));
    fin(nb, &req);
    if (me == root)
        for (int i = 0; i < n; i++)
            CHECK(ca_mateq(mr[i], ca_matprod(t, 0, sz - 1, i)), "sub reduce [%d]", i);
    if (nb)
        MPI_CHECK(MPI_Iallreduce(ms, mr, n, mat, matop, comm, &req));
    else
        MPI_CHECK(MPI_Allreduce(ms, mr, n, mat, matop, comm));
    fin(nb, &req);
    for (int i = 0; i < n; i++)
        CHECK(ca_mateq(mr[i], ca_matprod(t, 0, sz - 1, i)), "sub allreduce [%d]", i);
    if (nb)
        MPI_CHECK(MPI_Iscan(ms, mr, n, mat, matop, comm, &req));
    else
        MPI_CHECK(MPI_Scan(ms, mr, n, mat, matop, comm));
    fin(nb, &req);
    for (int i = 0; i < n; i++)
        CHECK(ca_mateq(mr[i], ca_matprod(t, 0, me, i)), "sub scan [%d]", i);
    /* sums: exscan, reduce_scatter_block */
    for (int i = 0; i < n * sz; i++)
        s[i] = ca_val(t, me, i);
    if (nb)
        MPI_CHECK(MPI_Iexscan(s, r, n, MPI_INT, MPI_SUM, comm, &req));
    else
        MPI_CHECK(MPI_Exscan(s, r, n, MPI_INT, MPI_SUM, comm));
    fin(nb, &req);
    if (me)
        for (int i = 0; i < n; i++)
            CHECK(r[i] == ca_sum(t, 0, me - 1, i), "sub exscan [%d] = %d", i, r[i]);
    if (nb)
        MPI_CHECK(MPI_Ireduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, comm, &req));
    else
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, comm));
    fin(nb, &req);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == ca_sum(t, 0, sz - 1, n * me + i), "sub reduce_scatter_block [%d]", i);
    if (nb)
        MPI_CHECK(MPI_Ibarrier(comm, &req));
    else
        MPI_CHECK(MPI_Barrier(comm));
    fin(nb, &req);
}

/* ---- Intercommunicator ------------------------------------------------------ */

static void inter(MPI_Comm ic, int grp, int nb)
{
    enum { n = 17, T = 12 };
    int me, lsz, rsz;
    MPI_Comm_rank(ic, &me);
    MPI_Comm_size(ic, &lsz);
    MPI_Comm_remote_size(ic, &rsz);
    int t = 50 + nb; /* inputs of group g: ca_val(t + g, rank in g, i) */
    MPI_Request req = MPI_REQUEST_NULL;
    int s[T * 8], r[T * 8];
    ca_mat ms[n], mr[n];

    if (nb)
        MPI_CHECK(MPI_Ibarrier(ic, &req));
    else
        MPI_CHECK(MPI_Barrier(ic));
    fin(nb, &req);

    for (int rg = 0; rg < 2; rg++) { /* the root is in group rg, its last rank */
        int rroot = (rg == 0 ? (wsize + 1) / 2 : wsize / 2) - 1;
        int root = grp == rg ? (me == lsz - 1 ? MPI_ROOT : MPI_PROC_NULL) : rroot;
        /* bcast */
        for (int i = 0; i < n; i++)
            r[i] = root == MPI_ROOT ? ca_val(t, 77 + rg, i) : -1;
        if (nb)
            MPI_CHECK(MPI_Ibcast(r, n, MPI_INT, root, ic, &req));
        else
            MPI_CHECK(MPI_Bcast(r, n, MPI_INT, root, ic));
        fin(nb, &req);
        for (int i = 0; i < n; i++)
            CHECK(r[i] == (root == MPI_PROC_NULL ? -1 : ca_val(t, 77 + rg, i)),
                  "inter bcast rg=%d [%d] = %d", rg, i, r[i]);
        /* non-commutative reduce: the other group's product in its order */
        for (int i = 0; i < n; i++) {
            ms[i] = ca_matval(t + grp, me, i);
            mr[i] = (ca_mat){-1, -1, -1, -1};
        }
        if (nb)
            MPI_CHECK(MPI_Ireduce(ms, mr, n, mat, matop, root, ic, &req));
        else
            MPI_CHECK(MPI_Reduce(ms, mr, n, mat, matop, root, ic));
        fin(nb, &req);
        if (root == MPI_ROOT)
            for (int i = 0; i < n; i++)
                CHECK(ca_mateq(mr[i], ca_matprod(t + !grp, 0, rsz - 1, i)),
                      "inter reduce rg=%d [%d]", rg, i);
        if (root != MPI_ROOT)
            for (int i = 0; i < n; i++)
                CHECK(mr[i].a == -1, "inter reduce wrote recvbuf off the root");
    }
    /* allreduce: each group gets the other's product */
    for (int i = 0; i < n; i++)
        ms[i] = ca_matval(t + grp, me, i);
    if (nb)
        MPI_CHECK(MPI_Iallreduce(ms, mr, n, mat, matop, ic, &req));
    else
        MPI_CHECK(MPI_Allreduce(ms, mr, n, mat, matop, ic));
    fin(nb, &req);
    for (int i = 0; i < n; i++)
        CHECK(ca_mateq(mr[i], ca_matprod(t + !grp, 0, rsz - 1, i)), "inter allreduce [%d]", i);
    /* long vectors: the local phases use the large-message algorithms */
    enum { L = 40000 };
    int *ls = malloc(sizeof(int) * L), *lr = malloc(sizeof(int) * L);
    for (int i = 0; i < L; i++)
        ls[i] = ca_val(t + 4 + grp, me, i);
    if (nb)
        MPI_CHECK(MPI_Iallreduce(ls, lr, L, MPI_INT, MPI_SUM, ic, &req));
    else
        MPI_CHECK(MPI_Allreduce(ls, lr, L, MPI_INT, MPI_SUM, ic));
    fin(nb, &req);
    for (int i = 0; i < L; i++)
        CHECK(lr[i] == ca_sum(t + 4 + !grp, 0, rsz - 1, i), "inter long allreduce [%d]", i);
    int lroot = grp == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (nb)
        MPI_CHECK(MPI_Ibcast(ls, L, MPI_INT, lroot, ic, &req));
    else
        MPI_CHECK(MPI_Bcast(ls, L, MPI_INT, lroot, ic));
    fin(nb, &req);
    if (grp == 1)
        for (int i = 0; i < L; i++)
            CHECK(ls[i] == ca_val(t + 4, 0, i), "inter long bcast [%d] = %d", i, ls[i]);
    free(ls);
    free(lr);
    /* reduce_scatter: T elements in all, split over my group */
    int rc[8], first = 0;
    for (int i = 0; i < lsz; i++) {
        rc[i] = T / lsz + (i < T % lsz);
        if (i < me)
            first += rc[i];
    }
    for (int i = 0; i < T; i++)
        s[i] = ca_val(t + grp, me, i);
    if (nb)
        MPI_CHECK(MPI_Ireduce_scatter(s, r, rc, MPI_INT, MPI_SUM, ic, &req));
    else
        MPI_CHECK(MPI_Reduce_scatter(s, r, rc, MPI_INT, MPI_SUM, ic));
    fin(nb, &req);
    for (int i = 0; i < rc[me]; i++)
        CHECK(r[i] == ca_sum(t + !grp, 0, rsz - 1, first + i), "inter reduce_scatter [%d] = %d", i,
              r[i]);
    /* reduce_scatter_block: blocks of rsz elements (both groups: lsz * rsz) */
    for (int i = 0; i < lsz * rsz; i++)
        s[i] = ca_val(t + 2 + grp, me, i);
    if (nb)
        MPI_CHECK(MPI_Ireduce_scatter_block(s, r, rsz, MPI_INT, MPI_SUM, ic, &req));
    else
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, rsz, MPI_INT, MPI_SUM, ic));
    fin(nb, &req);
    for (int i = 0; i < rsz; i++)
        CHECK(r[i] == ca_sum(t + 2 + !grp, 0, rsz - 1, rsz * me + i),
              "inter reduce_scatter_block [%d] = %d", i, r[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize <= 8, "at most 8 ranks");
    MPI_CHECK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_CHECK(MPI_Type_commit(&mat));
    MPI_CHECK(MPI_Op_create(ca_matop, 0, &matop));

    MPI_Comm rev, half;
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev));
    MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half));
    for (int nb = 0; nb < 2; nb++) {
        intra(MPI_COMM_SELF, nb, 1);
        intra(rev, nb, 2);
        intra(half, nb, 3);
    }
    if (wsize >= 2) {
        MPI_Comm local, ic;
        MPI_CHECK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &local));
        MPI_CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 42, &ic));
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        for (int nb = 0; nb < 2; nb++)
            inter(ic, wrank % 2, nb);
        MPI_CHECK(MPI_Comm_free(&ic));
        MPI_CHECK(MPI_Comm_free(&local));
    }
    MPI_CHECK(MPI_Comm_free(&rev));
    MPI_CHECK(MPI_Comm_free(&half));
    MPI_CHECK(MPI_Op_free(&matop));
    MPI_CHECK(MPI_Type_free(&mat));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("coll_reduce_comms: %d ranks OK\n", wsize);
    MPI_Finalize();
    return 0;
}
