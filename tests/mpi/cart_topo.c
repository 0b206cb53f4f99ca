/*
 * cart_topo.c — Cartesian topologies: MPI_Dims_create values, 2D periodic
 * and non-periodic grids (coords/rank round trips, shifts against a
 * reference, halo exchange along the shifts), Cart_sub, Cart_get, Cart_map,
 * Topo_test, ranks left out of the grid, zero-dimensional grids, dup of a
 * Cartesian communicator, and error classes.
 */
#include "mpitest.h"

static int wrank, wsize;

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[16];
    memcpy(d, in, (size_t)ndims * sizeof *d);
    MPI_CHECK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims,
              i, d[i], want[i]);
}

static void test_dims(void)
{
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    dims_case(16, 2, (int[]){0, 0}, (int[]){4, 4});
    dims_case(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_case(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims_case(30, 2, (int[]){0, 5}, (int[]){6, 5});
    dims_case(8, 2, (int[]){2, 4}, (int[]){2, 4});
    dims_case(100, 2, (int[]){0, 0}, (int[]){10, 10});
    dims_case(360, 4, (int[]){0, 0, 0, 0}, (int[]){6, 5, 4, 3});
    /* Values MPICH's test suite expects (topo/baddims.h): ties go to the
     * larger small factors; large primes stand alone. */
    dims_case(72, 2, (int[]){0, 0}, (int[]){9, 8});
    dims_case(1323, 2, (int[]){0, 0}, (int[]){49, 27});
    dims_case(140679, 3, (int[]){0, 0, 0}, (int[]){77, 63, 29});
    dims_case(140784, 3, (int[]){0, 0, 0}, (int[]){419, 21, 16});
    dims_case(492408, 4, (int[]){0, 0, 0, 0}, (int[]){977, 9, 8, 7});
    dims_case(762048, 12, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
              (int[]){7, 7, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2});
    dims_case(907200, 12, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
              (int[]){7, 5, 5, 4, 3, 3, 3, 3, 2, 2, 2, 2});
    /* Large inputs stay fast. */
    dims_case(479001600, 16, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
              (int[]){11, 7, 5, 5, 4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2});
    /* Properties over a sweep: product, non-increasing free entries,
     * fixed entries untouched. */
    for (int n = 1; n <= 200; n++)
        for (int nd = 1; nd <= 4; nd++) {
            int d[4] = {0, 0, 0, 0};
            if (nd >= 3 && n % 2 == 0)
                d[1] = 2;
            MPI_CHECK(MPI_Dims_create(n, nd, d));
            long p = 1;
            for (int i = 0; i < nd; i++)
                p *= d[i];
            CHECK(p == n, "Dims_create(%d, %d): product %ld", n, nd, p);
            if (nd >= 3 && n % 2 == 0)
                CHECK(d[1] == 2, "Dims_create changed a fixed entry");
            int prev = 1 << 30;
            for (int i = 0; i < nd; i++) {
                if (nd >= 3 && n % 2 == 0 && i == 1)
                    continue;
                CHECK(d[i] <= prev, "Dims_create(%d, %d): not non-increasing", n, nd);
                prev = d[i];
            }
        }
    int d[2] = {0, 0};
    MPI_CHECK(MPI_Dims_create(1, 0, d));
    EXPECT_CLASS(MPI_Dims_create(10, 2, (int[]){3, 0}), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Dims_create(10, 2, (int[]){-1, 0}), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Dims_create(6, 2, (int[]){2, 2}), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Dims_create(6, -1, d), MPI_ERR_DIMS);
}

/* Reference: rank of (x, y) in a dx*dy row-major grid, with wrapping or
 * MPI_PROC_NULL. */
static int ref_rank(int x, int y, int dx, int dy, const int *per)
{
    if (x < 0 || x >= dx) {
        if (!per[0])
            return MPI_PROC_NULL;
        x = (x % dx + dx) % dx;
    }
    if (y < 0 || y >= dy) {
        if (!per[1])
            return MPI_PROC_NULL;
        y = (y % dy + dy) % dy;
    }
    return x * dy + y;
}

static void test_grid(int periodic)
{
    int dims[2] = {0, 0}, per[2] = {periodic, periodic ? 0 : 1};
    MPI_CHECK(MPI_Dims_create(wsize, 2, dims));
    MPI_Comm cart;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 1, &cart));
    int r, nd, status;
    MPI_CHECK(MPI_Comm_rank(cart, &r));
    CHECK(r == wrank, "reorder is ignored: rank %d", r);
    MPI_CHECK(MPI_Topo_test(cart, &status));
    CHECK(status == MPI_CART, "Topo_test: %d", status);
    MPI_CHECK(MPI_Cartdim_get(cart, &nd));
    CHECK(nd == 2, "Cartdim_get: %d", nd);
    int gd[2], gp[2], gc[2];
    MPI_CHECK(MPI_Cart_get(cart, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == per[0] && gp[1] == per[1],
          "Cart_get");
    CHECK(gc[0] == r / dims[1] && gc[1] == r % dims[1], "my coords (%d, %d)", gc[0], gc[1]);
    for (int q = 0; q < wsize; q++) {
        int c[2], back;
        MPI_CHECK(MPI_Cart_coords(cart, q, 2, c));
        CHECK(c[0] == q / dims[1] && c[1] == q % dims[1], "coords of %d", q);
        MPI_CHECK(MPI_Cart_rank(cart, c, &back));
        CHECK(back == q, "rank of coords of %d: %d", q, back);
    }
    /* Out-of-range coordinates wrap in periodic dimensions only. */
    int far[2] = {per[0] ? -1 : 0, per[1] ? dims[1] : 0}, fr;
    MPI_CHECK(MPI_Cart_rank(cart, far, &fr));
    CHECK(fr == ref_rank(far[0], far[1], dims[0], dims[1], per), "rank of wrapped coords %d", fr);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    int bad[2] = {per[0] ? 0 : dims[0], per[1] ? 0 : -1};
    EXPECT_CLASS(MPI_Cart_rank(cart, bad, &fr), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Cart_coords(cart, wsize, 2, gc), MPI_ERR_RANK);
    EXPECT_CLASS(MPI_Cart_shift(cart, 2, 1, &fr, &fr), MPI_ERR_ARG);

    for (int dir = 0; dir < 2; dir++)
        for (int disp = -3; disp <= 3; disp++) {
            int src, dst;
            MPI_CHECK(MPI_Cart_shift(cart, dir, disp, &src, &dst));
            int x = gc[0], y = gc[1];
            int wdst = ref_rank(x + (dir == 0) * disp, y + (dir == 1) * disp, dims[0], dims[1],
                                per);
            int wsrc = ref_rank(x - (dir == 0) * disp, y - (dir == 1) * disp, dims[0], dims[1],
                                per);
            CHECK(src == wsrc && dst == wdst, "shift dir %d disp %d: (%d, %d), expected (%d, %d)",
                  dir, disp, src, dst, wsrc, wdst);
            /* Halo exchange along the shift, MPI_PROC_NULL included. */
            int out = r * 10 + dir, in = -7;
            MPI_Status st;
            MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, dst, disp + 10, &in, 1, MPI_INT, src,
                                   disp + 10, cart, &st));
            if (src == MPI_PROC_NULL)
                CHECK(in == -7 && st.MPI_SOURCE == MPI_PROC_NULL, "receive from MPI_PROC_NULL");
            else
                CHECK(in == src * 10 + dir, "halo from %d: %d", src, in);
        }

    /* Rows and columns. */
    int rows[2] = {0, 1}, cols[2] = {1, 0};
    MPI_Comm row, col;
    MPI_CHECK(MPI_Cart_sub(cart, rows, &row));
    MPI_CHECK(MPI_Cart_sub(cart, cols, &col));
    int rr, rn, cr, cn;
    MPI_CHECK(MPI_Comm_rank(row, &rr));
    MPI_CHECK(MPI_Comm_size(row, &rn));
    MPI_CHECK(MPI_Comm_rank(col, &cr));
    MPI_CHECK(MPI_Comm_size(col, &cn));
    CHECK(rn == dims[1] && rr == gc[1], "row: rank %d size %d", rr, rn);
    CHECK(cn == dims[0] && cr == gc[0], "column: rank %d size %d", cr, cn);
    MPI_CHECK(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1, "row dims %d", nd);
    MPI_CHECK(MPI_Cart_get(col, 1, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gp[0] == per[0] && gc[0] == cr, "column Cart_get");
    /* A row's members are consecutive world ranks. */
    int v = wrank, got = -1;
    MPI_CHECK(MPI_Sendrecv(&v, 1, MPI_INT, (rr + 1) % rn, 0, &got, 1, MPI_INT, (rr + rn - 1) % rn,
                           0, row, MPI_STATUS_IGNORE));
    CHECK(got == (wrank / dims[1]) * dims[1] + (rr + rn - 1) % rn, "row neighbour %d", got);
    MPI_Comm none;
    int nothing[2] = {0, 0};
    /* Keeping nothing: a zero-dimensional grid, one process (the grid's
     * rank 0, as in MPICH; the others get MPI_COMM_NULL). */
    MPI_CHECK(MPI_Cart_sub(cart, nothing, &none));
    int crank;
    MPI_CHECK(MPI_Comm_rank(cart, &crank));
    if (crank == 0) {
        int ns, cmp;
        MPI_CHECK(MPI_Comm_size(none, &ns));
        MPI_CHECK(MPI_Cartdim_get(none, &nd));
        CHECK(ns == 1 && nd == 0, "Cart_sub keeping nothing: size %d dims %d", ns, nd);
        MPI_CHECK(MPI_Comm_compare(none, MPI_COMM_SELF, &cmp));
        CHECK(cmp == MPI_CONGRUENT, "Cart_sub keeping nothing: compare to SELF %d", cmp);
        MPI_CHECK(MPI_Comm_free(&none));
    } else {
        CHECK(none == MPI_COMM_NULL, "Cart_sub keeping nothing gave rank %d a communicator",
              crank);
    }

    /* A dup keeps the topology. */
    MPI_Comm d;
    MPI_CHECK(MPI_Comm_dup(cart, &d));
    MPI_CHECK(MPI_Topo_test(d, &status));
    MPI_CHECK(MPI_Cart_get(d, 2, gd, gp, gc));
    CHECK(status == MPI_CART && gd[0] == dims[0] && gd[1] == dims[1], "dup lost the topology");
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Comm_free(&row));
    MPI_CHECK(MPI_Comm_free(&col));
    MPI_CHECK(MPI_Comm_free(&cart));
}

static void test_partial(void)
{
    /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
    int n = wsize > 1 ? wsize - 1 : 1, per = 1, newrank;
    MPI_Comm line;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, &per, 0, &line));
    MPI_CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, &n, &per, &newrank));
    if (wrank >= n) {
        CHECK(line == MPI_COMM_NULL, "rank outside the grid got a communicator");
        CHECK(newrank == MPI_UNDEFINED, "Cart_map outside the grid: %d", newrank);
    } else {
        int src, dst;
        CHECK(newrank == wrank, "Cart_map: %d", newrank);
        MPI_CHECK(MPI_Cart_shift(line, 0, 1, &src, &dst));
        CHECK(src == (wrank + n - 1) % n && dst == (wrank + 1) % n, "ring shift (%d, %d)", src,
              dst);
        MPI_CHECK(MPI_Comm_free(&line));
    }
    /* Zero dimensions: one process. */
    MPI_Comm zero;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &zero));
    if (wrank == 0) {
        int s, nd;
        MPI_CHECK(MPI_Comm_size(zero, &s));
        MPI_CHECK(MPI_Cartdim_get(zero, &nd));
        CHECK(s == 1 && nd == 0, "zero-dimensional grid: size %d dims %d", s, nd);
        MPI_CHECK(MPI_Comm_free(&zero));
    } else {
        CHECK(zero == MPI_COMM_NULL, "zero-dimensional grid on rank %d", wrank);
    }
    /* Errors. */
    int status, big[2] = {wsize, 2}, periods[2] = {0, 0}, nd;
    MPI_Comm c = MPI_COMM_SELF;
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "failed Cart_create left a communicator");
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, (int[]){1, -1}, periods, 0, &c), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, big, periods, 0, &c), MPI_ERR_DIMS);
    EXPECT_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &nd), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &nd, &nd), MPI_ERR_TOPOLOGY);
    EXPECT_CLASS(MPI_Topo_test(MPI_COMM_NULL, &status), MPI_ERR_COMM);
    MPI_CHECK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "Topo_test of MPI_COMM_WORLD: %d", status);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_dims();
    test_grid(1);
    test_grid(0);
    test_partial();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
