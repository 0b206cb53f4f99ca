/*
 * coll_move_datatypes.c — the data-movement collectives with derived datatypes:
 * send and receive types that differ but have the same signature
 * (4k MPI_INT against k contiguous-of-4), noncontiguous types on either side
 * (a column of a matrix as a vector resized to one int, so block i of the
 * collective is column i; an indexed type with holes), noncontiguous types
 * with MPI_IN_PLACE, Alltoallw with a different type per peer, MPI_BOTTOM
 * with a type of absolute addresses. Holes of the
 * noncontiguous layouts must stay untouched. Blocking and nonblocking; block
 * sizes cover the small (tree / Bruck) and the large algorithms.
 */
#include <stddef.h>

#include "mpitest.h"

static int rank, size;

static int val(int op, int from, int to, int i)
{
    return op * 10000000 + from * 100000 + to * 1000 + i;
}

static void coll_wait(int nb, MPI_Request *req)
{
    if (nb)
        MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

/* Column type of a k x n int matrix (row-major): k ints at stride n,
 * resized to one int so that consecutive instances are consecutive
 * columns. */
static MPI_Datatype column_type(int k, int n)
{
    MPI_Datatype v, col;
    MPI_CHECK(MPI_Type_vector(k, 1, n, MPI_INT, &v));
    MPI_CHECK(MPI_Type_create_resized(v, 0, (MPI_Aint)sizeof(int), &col));
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Type_commit(&col));
    return col;
}

/* Gather K ints from every rank into column r of a K x n matrix at the
 * root; scatter columns back. */
static void columns(int k, int root, int nb)
{
    int n = size;
    MPI_Datatype col = column_type(k, n);
    int *mine = malloc(sizeof(int) * (size_t)k), *mat = malloc(sizeof(int) * (size_t)(k * n));
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < k; i++)
        mine[i] = val(1, rank, root, i);
    for (int i = 0; i < k * n; i++)
        mat[i] = -1;
    if (nb)
        MPI_CHECK(MPI_Igather(mine, k, MPI_INT, mat, 1, col, root, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Gather(mine, k, MPI_INT, mat, 1, col, root, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    if (rank == root)
        for (int i = 0; i < k; i++)
            for (int r = 0; r < n; r++)
                CHECK(mat[i * n + r] == val(1, r, root, i), "gather column k=%d [%d][%d] = %d", k,
                      i, r, mat[i * n + r]);
    /* Scatter the columns back (root: matrix of fresh values). */
    for (int i = 0; i < k * n; i++)
        mat[i] = val(2, root, i % n, i / n);
    for (int i = 0; i < k; i++)
        mine[i] = -1;
    if (nb)
        MPI_CHECK(MPI_Iscatter(mat, 1, col, mine, k, MPI_INT, root, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Scatter(mat, 1, col, mine, k, MPI_INT, root, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < k; i++)
        CHECK(mine[i] == val(2, root, rank, i), "scatter column k=%d [%d] = %d", k, i, mine[i]);
    /* Allgather into columns at every rank, in place. */
    for (int i = 0; i < k * n; i++)
        mat[i] = -1;
    for (int i = 0; i < k; i++)
        mat[i * n + rank] = val(3, rank, 0, i);
    if (nb)
        MPI_CHECK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mat, 1, col, MPI_COMM_WORLD,
                                 &req));
    else
        MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mat, 1, col, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < k; i++)
        for (int r = 0; r < n; r++)
            CHECK(mat[i * n + r] == val(3, r, 0, i), "allgather column k=%d [%d][%d] = %d", k, i, r,
                  mat[i * n + r]);
    /* Alltoall: column d of my matrix goes to d, arrives as column `me`. */
    int *out = malloc(sizeof(int) * (size_t)(k * n));
    for (int i = 0; i < k * n; i++) {
        mat[i] = val(4, rank, i % n, i / n);
        out[i] = -1;
    }
    if (nb)
        MPI_CHECK(MPI_Ialltoall(mat, 1, col, out, 1, col, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Alltoall(mat, 1, col, out, 1, col, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < k * n; i++)
        CHECK(out[i] == val(4, i % n, rank, i / n), "alltoall columns k=%d [%d] = %d", k, i,
              out[i]);
    /* The same in place. */
    if (nb)
        MPI_CHECK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mat, 1, col, MPI_COMM_WORLD,
                                &req));
    else
        MPI_CHECK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, mat, 1, col, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < k * n; i++)
        CHECK(mat[i] == val(4, i % n, rank, i / n), "alltoall columns in place k=%d [%d] = %d", k,
              i, mat[i]);
    free(out);
    free(mine);
    free(mat);
    MPI_CHECK(MPI_Type_free(&col));
}

/* Indexed type with holes: blocks {2 at 0, 1 at 4, 3 at 6}: 6 ints in an
 * extent of 9. Sent as one indexed, received as 6 MPI_INT, and back. */
static void holes(int nb)
{
    int n = size;
    int bl[3] = {2, 1, 3}, dp[3] = {0, 4, 6};
    MPI_Datatype idx;
    MPI_CHECK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    MPI_CHECK(MPI_Type_commit(&idx));
    static const int pos[6] = {0, 1, 4, 6, 7, 8};
    int *sparse = malloc(sizeof(int) * 9 * (size_t)n), *dense = malloc(sizeof(int) * 6 * (size_t)n);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < 9 * n; i++)
        sparse[i] = -1;
    for (int d = 0; d < n; d++)
        for (int j = 0; j < 6; j++)
            sparse[9 * d + pos[j]] = val(5, rank, d, j);
    if (nb)
        MPI_CHECK(MPI_Ialltoall(sparse, 1, idx, dense, 6, MPI_INT, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Alltoall(sparse, 1, idx, dense, 6, MPI_INT, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int s = 0; s < n; s++)
        for (int j = 0; j < 6; j++)
            CHECK(dense[6 * s + j] == val(5, s, rank, j), "indexed alltoall [%d][%d]", s, j);
    /* Back: dense out, sparse in; holes stay -2. */
    for (int i = 0; i < 9 * n; i++)
        sparse[i] = -2;
    for (int d = 0; d < n; d++)
        for (int j = 0; j < 6; j++)
            dense[6 * d + j] = val(6, rank, d, j);
    if (nb)
        MPI_CHECK(MPI_Ialltoall(dense, 6, MPI_INT, sparse, 1, idx, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Alltoall(dense, 6, MPI_INT, sparse, 1, idx, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int s = 0; s < n; s++) {
        for (int j = 0; j < 6; j++)
            CHECK(sparse[9 * s + pos[j]] == val(6, s, rank, j), "indexed recv [%d][%d]", s, j);
        CHECK(sparse[9 * s + 2] == -2 && sparse[9 * s + 3] == -2 && sparse[9 * s + 5] == -2,
              "indexed recv wrote into a hole of block %d", s);
    }
    /* Gatherv / Scatterv / Allgatherv with the indexed type on the
     * receiving side, rank r contributing r % 3 instances. */
    int *cnt = malloc(sizeof(int) * (size_t)n), *dsp = malloc(sizeof(int) * (size_t)n);
    int tot = 0;
    for (int r = n - 1; r >= 0; r--) { /* reverse order */
        cnt[r] = r % 3;
        dsp[r] = tot;
        tot += cnt[r];
    }
    int *big = malloc(sizeof(int) * 9 * (size_t)(tot + 1));
    for (int i = 0; i < 9 * (tot + 1); i++)
        big[i] = -3;
    for (int i = 0; i < 6 * (rank % 3); i++)
        dense[i] = val(7, rank, 0, i);
    if (nb)
        MPI_CHECK(MPI_Iallgatherv(dense, 6 * (rank % 3), MPI_INT, big, cnt, dsp, idx,
                                  MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Allgatherv(dense, 6 * (rank % 3), MPI_INT, big, cnt, dsp, idx,
                                 MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < cnt[r]; c++)
            for (int j = 0; j < 6; j++)
                CHECK(big[9 * (dsp[r] + c) + pos[j]] == val(7, r, 0, 6 * c + j),
                      "indexed allgatherv [%d][%d][%d]", r, c, j);
    int root = n - 1;
    for (int i = 0; i < 9 * (tot + 1); i++)
        big[i] = -3;
    if (nb)
        MPI_CHECK(MPI_Igatherv(dense, 6 * (rank % 3), MPI_INT, big, cnt, dsp, idx, root,
                               MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Gatherv(dense, 6 * (rank % 3), MPI_INT, big, cnt, dsp, idx, root,
                              MPI_COMM_WORLD));
    coll_wait(nb, &req);
    if (rank == root)
        for (int r = 0; r < n; r++)
            for (int c = 0; c < cnt[r]; c++)
                for (int j = 0; j < 6; j++)
                    CHECK(big[9 * (dsp[r] + c) + pos[j]] == val(7, r, 0, 6 * c + j),
                          "indexed gatherv [%d][%d][%d]", r, c, j);
    for (int i = 0; i < 6 * (rank % 3); i++)
        dense[i] = -4;
    if (nb)
        MPI_CHECK(MPI_Iscatterv(big, cnt, dsp, idx, dense, 6 * (rank % 3), MPI_INT, root,
                                MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Scatterv(big, cnt, dsp, idx, dense, 6 * (rank % 3), MPI_INT, root,
                               MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < 6 * (rank % 3); i++)
        CHECK(dense[i] == val(7, rank, 0, i), "indexed scatterv [%d] = %d", i, dense[i]);
    free(cnt);
    free(dsp);
    free(big);
    free(sparse);
    free(dense);
    MPI_CHECK(MPI_Type_free(&idx));
}

/* Alltoallw: to an odd peer a vector(3, 1, 2) of ints, to an even one a
 * contiguous of 3; each receiver uses the other description for the same
 * 3 ints. Byte displacements. */
static void mixed_w(int nb)
{
    int n = size;
    MPI_Datatype vec, con;
    MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &con));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_CHECK(MPI_Type_commit(&con));
    int *sb = malloc(sizeof(int) * 5 * (size_t)n), *rb = malloc(sizeof(int) * 5 * (size_t)n);
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int i = 0; i < 5 * n; i++) {
        sb[i] = -1;
        rb[i] = -1;
    }
    for (int p = 0; p < n; p++) {
        int odd = p % 2; /* layout of my send block for p */
        st[p] = odd ? vec : con;
        sc[p] = 1;
        sd[p] = (int)sizeof(int) * 5 * (n - 1 - p);
        for (int j = 0; j < 3; j++)
            sb[5 * (n - 1 - p) + (odd ? 2 * j : j)] = val(8, rank, p, j);
        /* What p sends me was laid out by my parity; I use the other. */
        int vodd = rank % 2;
        rt[p] = vodd ? con : vec;
        rc[p] = 1;
        rd[p] = (int)sizeof(int) * 5 * p;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    if (nb)
        MPI_CHECK(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int p = 0; p < n; p++) {
        int vec_in = !(rank % 2);
        for (int j = 0; j < 3; j++)
            CHECK(rb[5 * p + (vec_in ? 2 * j : j)] == val(8, p, rank, j), "alltoallw [%d][%d] = %d",
                  p, j, rb[5 * p + (vec_in ? 2 * j : j)]);
        if (vec_in)
            CHECK(rb[5 * p + 1] == -1 && rb[5 * p + 3] == -1, "alltoallw wrote into a hole");
        else
            CHECK(rb[5 * p + 3] == -1 && rb[5 * p + 4] == -1, "alltoallw wrote past the block");
    }
    /* Freeing the types while a nonblocking call is in flight is allowed. */
    for (int p = 0; p < n; p++)
        for (int j = 0; j < 5; j++)
            rb[5 * p + j] = -1;
    MPI_CHECK(MPI_Ialltoallw(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Type_free(&con));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int p = 0; p < n; p++) {
        int vec_in = !(rank % 2);
        for (int j = 0; j < 3; j++)
            CHECK(rb[5 * p + (vec_in ? 2 * j : j)] == val(8, p, rank, j),
                  "alltoallw after free [%d][%d]", p, j);
    }
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(st);
    free(rt);
}

/* MPI_BOTTOM buffers: a struct type of absolute addresses (an int and a
 * double in separate variables) sent with MPI_Allgather / MPI_Alltoallw,
 * received as (int, double) structs. */
struct pair {
    int i;
    double d;
};

static void bottom(int nb)
{
    int n = size;
    int ival = rank * 7 + 1;
    double dval = rank * 0.5 + 0.25;
    MPI_Aint addr[2];
    MPI_CHECK(MPI_Get_address(&ival, &addr[0]));
    MPI_CHECK(MPI_Get_address(&dval, &addr[1]));
    int bl[2] = {1, 1};
    MPI_Datatype ts[2] = {MPI_INT, MPI_DOUBLE}, abs_t, pair_t;
    MPI_CHECK(MPI_Type_create_struct(2, bl, addr, ts, &abs_t));
    MPI_CHECK(MPI_Type_commit(&abs_t));
    MPI_Aint rel[2] = {offsetof(struct pair, i), offsetof(struct pair, d)};
    MPI_CHECK(MPI_Type_create_struct(2, bl, rel, ts, &pair_t));
    MPI_CHECK(MPI_Type_commit(&pair_t));
    struct pair *got = malloc(sizeof *got * (size_t)n);
    MPI_Request req = MPI_REQUEST_NULL;
    if (nb)
        MPI_CHECK(MPI_Iallgather(MPI_BOTTOM, 1, abs_t, got, 1, pair_t, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Allgather(MPI_BOTTOM, 1, abs_t, got, 1, pair_t, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int r = 0; r < n; r++)
        CHECK(got[r].i == r * 7 + 1 && got[r].d == r * 0.5 + 0.25, "MPI_BOTTOM allgather [%d]", r);
    /* Alltoallw: the same absolute type to every peer, displacement 0. */
    int *cnt = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rd = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int r = 0; r < n; r++) {
        cnt[r] = 1;
        sd[r] = 0;
        rd[r] = (int)(sizeof(struct pair) * (size_t)(n - 1 - r));
        st[r] = abs_t;
        rt[r] = pair_t;
        got[r].i = -1;
    }
    if (nb)
        MPI_CHECK(MPI_Ialltoallw(MPI_BOTTOM, cnt, sd, st, got, cnt, rd, rt, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Alltoallw(MPI_BOTTOM, cnt, sd, st, got, cnt, rd, rt, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int r = 0; r < n; r++)
        CHECK(got[n - 1 - r].i == r * 7 + 1 && got[n - 1 - r].d == r * 0.5 + 0.25,
              "MPI_BOTTOM alltoallw [%d]", r);
    free(cnt);
    free(sd);
    free(rd);
    free(st);
    free(rt);
    free(got);
    MPI_CHECK(MPI_Type_free(&abs_t));
    MPI_CHECK(MPI_Type_free(&pair_t));
}

/* 4k MPI_INT sent, k contiguous-of-4 received (and back). */
static void quads(int k, int nb)
{
    MPI_Datatype quad;
    MPI_CHECK(MPI_Type_contiguous(4, MPI_INT, &quad));
    MPI_CHECK(MPI_Type_commit(&quad));
    int n = size, root = n / 2;
    int *s = malloc(sizeof(int) * 4 * (size_t)k), *r = malloc(sizeof(int) * 4 * (size_t)(k * n));
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < 4 * k; i++)
        s[i] = val(9, rank, root, i);
    if (nb)
        MPI_CHECK(MPI_Igather(s, 4 * k, MPI_INT, r, k, quad, root, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Gather(s, 4 * k, MPI_INT, r, k, quad, root, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    if (rank == root)
        for (int i = 0; i < 4 * k * n; i++)
            CHECK(r[i] == val(9, i / (4 * k), root, i % (4 * k)), "quad gather k=%d [%d]", k, i);
    if (nb)
        MPI_CHECK(MPI_Iallgather(s, k, quad, r, 4 * k, MPI_INT, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Allgather(s, k, quad, r, 4 * k, MPI_INT, MPI_COMM_WORLD));
    coll_wait(nb, &req);
    for (int i = 0; i < 4 * k * n; i++)
        CHECK(r[i] == val(9, i / (4 * k), root, i % (4 * k)), "quad allgather k=%d [%d]", k, i);
    free(s);
    free(r);
    MPI_CHECK(MPI_Type_free(&quad));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int ks[] = {1, 7, 64, 3000, 6000}; /* ints per block: tree/Bruck and linear/pairwise */
    for (int nb = 0; nb < 2; nb++) {
        for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
            columns(ks[ki], 0, nb);
            columns(ks[ki], size - 1, nb);
            quads(ks[ki], nb);
        }
        holes(nb);
        mixed_w(nb);
        bottom(nb);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_move_datatypes: OK on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
