/*
 * coll_persistent.c — persistent collectives (MPI-4.0 §6.13,
 * src/mpi/coll/coll_persistent.c).
 *
 * Every init is started several times, the buffers refilled before each
 * start, and each result checked: allreduce (small and 1 MiB), bcast from
 * a moving root... each with its own request; alltoall, allgatherv,
 * reduce, scan, exscan, reduce_scatter_block, barrier; an alltoallw whose
 * derived datatype the user freed right after the init (and allgatherv
 * count arrays overwritten and freed after it); a neighbour
 * alltoall on a ring. Two allreduces started in opposite orders on even
 * and odd ranks, with a blocking allreduce between starts, still pair up
 * (each init reserved its tag). Inactive requests complete at once with
 * an empty status; starting an active one is MPI_ERR_REQUEST.
 */
#include "mpitest.h"

static int rank, size;

static void wait_ok(MPI_Request *r, const char *what)
{
    MPI_Status st;
    MPI_CHECK(MPI_Wait(r, &st));
    CHECK(*r != MPI_REQUEST_NULL, "%s: a persistent request became MPI_REQUEST_NULL", what);
}

static void reductions(void)
{
    const int counts[2] = {7, 1 << 17}; /* 28 B and 512 KiB of ints */
    for (int k = 0; k < 2; k++) {
        int n = counts[k];
        int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
        MPI_Request ar, rr, sr, er;
        MPI_CHECK(MPI_Allreduce_init(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                     &ar));
        int red = 0, sc = 0, ex = -1;
        MPI_CHECK(MPI_Reduce_init(&rank, &red, 1, MPI_INT, MPI_MAX, size - 1, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &rr));
        MPI_CHECK(MPI_Scan_init(&rank, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &sr));
        MPI_CHECK(MPI_Exscan_init(&rank, &ex, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &er));
        for (int it = 0; it < 5; it++) {
            for (int i = 0; i < n; i++)
                in[i] = rank * it + i;
            memset(out, 0xff, sizeof(int) * (size_t)n);
            MPI_CHECK(MPI_Start(&ar));
            wait_ok(&ar, "allreduce");
            for (int i = 0; i < n; i++)
                CHECK(out[i] == it * size * (size - 1) / 2 + size * i,
                      "allreduce %d ints, start %d: [%d] = %d", n, it, i, out[i]);
            red = sc = -1;
            MPI_Request rs[3] = {rr, sr, er};
            MPI_CHECK(MPI_Startall(3, rs));
            MPI_CHECK(MPI_Waitall(3, rs, MPI_STATUSES_IGNORE));
            if (rank == size - 1)
                CHECK(red == size - 1, "reduce: %d", red);
            CHECK(sc == rank * (rank + 1) / 2, "scan: %d", sc);
            if (rank > 0)
                CHECK(ex == rank * (rank - 1) / 2, "exscan: %d", ex);
        }
        MPI_CHECK(MPI_Request_free(&ar));
        MPI_CHECK(MPI_Request_free(&rr));
        MPI_CHECK(MPI_Request_free(&sr));
        MPI_CHECK(MPI_Request_free(&er));
        CHECK(ar == MPI_REQUEST_NULL, "freed request not reset");
        free(in);
        free(out);
    }
}

static void movement(void)
{
    int *sb = malloc(sizeof(int) * (size_t)size * 3), *rb = malloc(sizeof(int) * (size_t)size * 3);
    int *cnts = malloc(sizeof(int) * (size_t)size), *disps = malloc(sizeof(int) * (size_t)size);
    int total = 0;
    for (int i = 0; i < size; i++) {
        cnts[i] = i % 3 + 1;
        disps[i] = total;
        total += cnts[i];
    }
    int bval = -1;
    MPI_Request bc[3], a2a, agv, rsb, bar;
    for (int root = 0; root < 3; root++) /* one request per root */
        MPI_CHECK(MPI_Bcast_init(&bval, 1, MPI_INT, root % size, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &bc[root]));
    MPI_CHECK(MPI_Alltoall_init(sb, 2, MPI_INT, rb, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &a2a));
    /* arrays that the caller reuses once the init returns (as mpi4py's
     * large-count fallbacks do, which free theirs) */
    int *tc = malloc(sizeof(int) * (size_t)size), *td = malloc(sizeof(int) * (size_t)size);
    memcpy(tc, cnts, sizeof(int) * (size_t)size);
    memcpy(td, disps, sizeof(int) * (size_t)size);
    MPI_CHECK(MPI_Allgatherv_init(sb, cnts[rank], MPI_INT, rb, tc, td, MPI_INT, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, &agv));
    memset(tc, 0xff, sizeof(int) * (size_t)size);
    memset(td, 0xff, sizeof(int) * (size_t)size);
    free(tc);
    free(td);
    int rsb_out = -1;
    MPI_CHECK(MPI_Reduce_scatter_block_init(sb, &rsb_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                            MPI_INFO_NULL, &rsb));
    MPI_CHECK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &bar));
    for (int it = 0; it < 4; it++) {
        for (int root = 0; root < 3; root++) {
            bval = rank == root % size ? 1000 * it + root : -1;
            MPI_CHECK(MPI_Start(&bc[root]));
            wait_ok(&bc[root], "bcast");
            CHECK(bval == 1000 * it + root, "bcast root %d start %d: %d", root % size, it, bval);
        }
        for (int i = 0; i < 2 * size; i++)
            sb[i] = 100 * rank + i + it;
        MPI_CHECK(MPI_Start(&a2a));
        wait_ok(&a2a, "alltoall");
        for (int p = 0; p < size; p++)
            for (int j = 0; j < 2; j++)
                CHECK(rb[2 * p + j] == 100 * p + 2 * rank + j + it, "alltoall from %d: %d", p,
                      rb[2 * p + j]);
        for (int i = 0; i < cnts[rank]; i++)
            sb[i] = 10 * rank + i + it;
        MPI_CHECK(MPI_Start(&agv));
        wait_ok(&agv, "allgatherv");
        for (int p = 0; p < size; p++)
            for (int i = 0; i < cnts[p]; i++)
                CHECK(rb[disps[p] + i] == 10 * p + i + it, "allgatherv from %d", p);
        for (int i = 0; i < size; i++)
            sb[i] = rank + i * it;
        MPI_CHECK(MPI_Start(&rsb));
        MPI_CHECK(MPI_Start(&bar));
        MPI_Request two[2] = {rsb, bar};
        MPI_CHECK(MPI_Waitall(2, two, MPI_STATUSES_IGNORE));
        CHECK(rsb_out == size * (size - 1) / 2 + size * rank * it, "reduce_scatter_block: %d",
              rsb_out);
    }
    for (int root = 0; root < 3; root++)
        MPI_Request_free(&bc[root]);
    MPI_Request_free(&a2a);
    MPI_Request_free(&agv);
    MPI_Request_free(&rsb);
    MPI_Request_free(&bar);
    free(sb);
    free(rb);
    free(cnts);
    free(disps);
}

/* Alltoallw with a vector type the user frees right after the init. */
static void freed_type(void)
{
    MPI_Datatype every_other;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    int *sb = malloc(sizeof(int) * 4 * (size_t)size), *rb = malloc(sizeof(int) * 2 * (size_t)size);
    int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
    int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int p = 0; p < size; p++) {
        sc[p] = 1, sd[p] = (int)sizeof(int) * 4 * p, st[p] = every_other;
        rc[p] = 2, rd[p] = (int)sizeof(int) * 2 * p, rt[p] = MPI_INT;
    }
    MPI_Request r;
    MPI_CHECK(MPI_Alltoallw_init(sb, sc, sd, st, rb, rc, rd, rt, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &r));
    MPI_CHECK(MPI_Type_free(&every_other));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 4 * size; i++)
            sb[i] = 1000 * rank + i + it;
        MPI_CHECK(MPI_Start(&r));
        wait_ok(&r, "alltoallw");
        for (int p = 0; p < size; p++) /* elements 0 and 2 of p's block for us */
            CHECK(rb[2 * p] == 1000 * p + 4 * rank + it && rb[2 * p + 1] == 1000 * p + 4 * rank + 2 + it,
                  "alltoallw from %d: %d %d", p, rb[2 * p], rb[2 * p + 1]);
    }
    MPI_Request_free(&r);
    free(sb), free(rb), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
}

static void neighbours(void)
{
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    MPI_CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int me;
    MPI_Comm_rank(ring, &me);
    int sb[2], rb[2];
    MPI_Request r;
    MPI_CHECK(MPI_Neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, ring, MPI_INFO_NULL,
                                         &r));
    for (int it = 0; it < 3; it++) {
        sb[0] = 10 * me + it;     /* to the lower neighbour */
        sb[1] = 10 * me + 5 + it; /* to the upper one */
        MPI_CHECK(MPI_Start(&r));
        wait_ok(&r, "neighbor_alltoall");
        int lo = (me - 1 + size) % size, hi = (me + 1) % size;
        if (size > 2) {
            CHECK(rb[0] == 10 * lo + 5 + it && rb[1] == 10 * hi + it,
                  "neighbor_alltoall: %d %d", rb[0], rb[1]);
        }
    }
    MPI_Request_free(&r);
    MPI_Comm_free(&ring);
}

/* Two inits in the same order, started in opposite orders. */
static void start_order(void)
{
    int a = rank, b = 10 * rank, ra = -1, rb = -1;
    MPI_Request ra_req, rb_req;
    MPI_CHECK(MPI_Allreduce_init(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &ra_req));
    MPI_CHECK(MPI_Allreduce_init(&b, &rb, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                 &rb_req));
    for (int it = 0; it < 5; it++) {
        int x = 1, sum = 0;
        if (rank % 2 == 0) {
            MPI_CHECK(MPI_Start(&ra_req));
            MPI_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Start(&rb_req));
        } else {
            MPI_CHECK(MPI_Start(&rb_req));
            MPI_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            MPI_CHECK(MPI_Start(&ra_req));
        }
        MPI_Request both[2] = {ra_req, rb_req};
        MPI_CHECK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
        CHECK(sum == size, "blocking allreduce between: %d", sum);
        CHECK(ra == size * (size - 1) / 2 && rb == 10 * size * (size - 1) / 2,
              "start %d: allreduces %d and %d", it, ra, rb);
    }
    /* inactive: complete at once, empty status; active: cannot start */
    int flag = 0;
    MPI_Status st;
    MPI_CHECK(MPI_Test(&ra_req, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "inactive request: flag %d, source %d, tag %d", flag, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_CHECK(MPI_Start(&ra_req));
    EXPECT_CLASS(MPI_Start(&ra_req), MPI_ERR_REQUEST);
    MPI_CHECK(MPI_Wait(&ra_req, MPI_STATUS_IGNORE));
    EXPECT_CLASS(MPI_Allreduce_init(&a, &ra, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, MPI_INFO_NULL,
                                    &rb_req),
                 MPI_ERR_COMM);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Request_free(&ra_req);
    MPI_Request_free(&rb_req);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reductions();
    movement();
    freed_type();
    neighbours();
    start_order();
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("coll_persistent: %d ranks: OK\n", size);
    return 0;
}
