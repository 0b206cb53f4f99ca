/*
 * coll_large_count.c — MPI-4.0 large-count collectives (the _c functions,
 * src/mpi/coll/coll_*.c, coll_persistent.c, op.c).
 *
 * Every collective's _c form runs blocking, nonblocking and persistent
 * (started twice, the output cleared between the starts) on MPI_Count
 * counts and MPI_Aint displacements, each rank checking every element it
 * gets: bcast, gather(v), scatter(v), allgather(v), alltoall(v/w),
 * reduce, allreduce, reduce_scatter(_block), scan, exscan, and the five
 * neighbourhood collectives on a periodic ring. The v/w forms lay their
 * blocks out of order (reversed displacements), so a displacement read
 * from the wrong array or at the wrong width shows. A user operation made
 * with MPI_Op_create_c runs in MPI_Allreduce_c and MPI_Reduce_local_c;
 * on a type of size zero (no memory needed) MPI_Reduce_local_c hands an
 * MPI_Op_create_c function the whole count past INT_MAX, and an
 * MPI_Op_create function pieces of at most INT_MAX. Errors: negative
 * counts and counts whose bytes overflow are MPI_ERR_COUNT, on every rank.
 * With the argument `big` (2 ranks): one MPI_Bcast_c of INT_MAX + 4099
 * bytes, checked at sampled positions.
 */
#include <limits.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;
enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *const mode_name[] = {"blocking", "nonblocking", "persistent"};

static void clear_out(void *out, size_t bytes)
{
    if (out)
        memset(out, 0xee, bytes);
}

/* Run one collective in `mode`: BLOCK is the blocking call, NB and INIT the
 * nonblocking and persistent calls taking &r_; a persistent request is
 * started twice, `out` (bytes, may be NULL) cleared between the starts. */
#define RUN(mode, out, bytes, BLOCK, NB, INIT)                                          \
    do {                                                                               \
        MPI_Request r_;                                                                \
        switch (mode) {                                                                \
        case BLOCKING: MPI_CHECK(BLOCK); break;                                        \
        case NONBLOCKING:                                                              \
            MPI_CHECK(NB);                                                             \
            MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                               \
            break;                                                                     \
        default:                                                                       \
            MPI_CHECK(INIT);                                                           \
            MPI_CHECK(MPI_Start(&r_));                                                 \
            MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                               \
            clear_out(out, bytes);                                                     \
            MPI_CHECK(MPI_Start(&r_));                                                 \
            MPI_CHECK(MPI_Wait(&r_, MPI_STATUS_IGNORE));                               \
            MPI_CHECK(MPI_Request_free(&r_));                                          \
        }                                                                              \
    } while (0)

#define W MPI_COMM_WORLD
#define NI MPI_INFO_NULL

static int val(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i;
}

/* counts of rank r's block (1..3 ints, some 0 when size allows) */
static int vcount(int r)
{
    return (r * 7 + 3) % 4;
}

/* Reversed layout: block r lives after the blocks of ranks > r. */
static void reversed(int n, const MPI_Count *cnt, MPI_Aint *disp)
{
    MPI_Count at = 0;
    for (int r = n - 1; r >= 0; r--) {
        disp[r] = at;
        at += cnt[r];
    }
}

static void rooted(int mode)
{
    const char *m = mode_name[mode];
    int root = size - 1;
    /* bcast */
    int n = 1000;
    int *b = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        b[i] = rank == root ? val(root, 0, i) : -1;
    RUN(mode, rank == root ? NULL : b, sizeof(int) * (size_t)n,
        MPI_Bcast_c(b, n, MPI_INT, root, W), MPI_Ibcast_c(b, n, MPI_INT, root, W, &r_),
        MPI_Bcast_init_c(b, n, MPI_INT, root, W, NI, &r_));
    for (int i = 0; i < n; i++)
        CHECK(b[i] == val(root, 0, i), "%s bcast_c: [%d] = %d", m, i, b[i]);
    free(b);

    /* gather / scatter, fixed blocks of 5 */
    int mine[5], all[5 * 64];
    for (int i = 0; i < 5; i++)
        mine[i] = val(rank, root, i);
    RUN(mode, all, sizeof all, MPI_Gather_c(mine, 5, MPI_INT, all, 5, MPI_INT, root, W),
        MPI_Igather_c(mine, 5, MPI_INT, all, 5, MPI_INT, root, W, &r_),
        MPI_Gather_init_c(mine, 5, MPI_INT, all, 5, MPI_INT, root, W, NI, &r_));
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < 5; i++)
                CHECK(all[5 * r + i] == val(r, root, i), "%s gather_c: rank %d [%d] = %d", m, r,
                      i, all[5 * r + i]);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 5; i++)
            all[5 * r + i] = val(root, r, i);
    RUN(mode, mine, sizeof mine, MPI_Scatter_c(all, 5, MPI_INT, mine, 5, MPI_INT, root, W),
        MPI_Iscatter_c(all, 5, MPI_INT, mine, 5, MPI_INT, root, W, &r_),
        MPI_Scatter_init_c(all, 5, MPI_INT, mine, 5, MPI_INT, root, W, NI, &r_));
    for (int i = 0; i < 5; i++)
        CHECK(mine[i] == val(root, rank, i), "%s scatter_c: [%d] = %d", m, i, mine[i]);

    /* gatherv / scatterv, reversed layout */
    MPI_Count cnt[64];
    MPI_Aint disp[64];
    for (int r = 0; r < size; r++)
        cnt[r] = vcount(r);
    reversed(size, cnt, disp);
    int mv[3], allv[3 * 64];
    for (int i = 0; i < vcount(rank); i++)
        mv[i] = val(rank, 1, i);
    RUN(mode, allv, sizeof allv,
        MPI_Gatherv_c(mv, vcount(rank), MPI_INT, allv, cnt, disp, MPI_INT, root, W),
        MPI_Igatherv_c(mv, vcount(rank), MPI_INT, allv, cnt, disp, MPI_INT, root, W, &r_),
        MPI_Gatherv_init_c(mv, vcount(rank), MPI_INT, allv, cnt, disp, MPI_INT, root, W, NI,
                           &r_));
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < cnt[r]; i++)
                CHECK(allv[disp[r] + i] == val(r, 1, i), "%s gatherv_c: rank %d [%d] = %d", m, r,
                      i, allv[disp[r] + i]);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < cnt[r]; i++)
            allv[disp[r] + i] = val(root, r, i);
    RUN(mode, mv, sizeof mv,
        MPI_Scatterv_c(allv, cnt, disp, MPI_INT, mv, vcount(rank), MPI_INT, root, W),
        MPI_Iscatterv_c(allv, cnt, disp, MPI_INT, mv, vcount(rank), MPI_INT, root, W, &r_),
        MPI_Scatterv_init_c(allv, cnt, disp, MPI_INT, mv, vcount(rank), MPI_INT, root, W, NI,
                            &r_));
    for (int i = 0; i < vcount(rank); i++)
        CHECK(mv[i] == val(root, rank, i), "%s scatterv_c: [%d] = %d", m, i, mv[i]);
}

static void all_to_all(int mode)
{
    const char *m = mode_name[mode];
    int mine[4], all[4 * 64];
    for (int i = 0; i < 4; i++)
        mine[i] = val(rank, 2, i);
    RUN(mode, all, sizeof all, MPI_Allgather_c(mine, 4, MPI_INT, all, 4, MPI_INT, W),
        MPI_Iallgather_c(mine, 4, MPI_INT, all, 4, MPI_INT, W, &r_),
        MPI_Allgather_init_c(mine, 4, MPI_INT, all, 4, MPI_INT, W, NI, &r_));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < 4; i++)
            CHECK(all[4 * r + i] == val(r, 2, i), "%s allgather_c: rank %d [%d]", m, r, i);

    MPI_Count cnt[64];
    MPI_Aint disp[64];
    for (int r = 0; r < size; r++)
        cnt[r] = vcount(r);
    reversed(size, cnt, disp);
    RUN(mode, all, sizeof all,
        MPI_Allgatherv_c(mine, vcount(rank), MPI_INT, all, cnt, disp, MPI_INT, W),
        MPI_Iallgatherv_c(mine, vcount(rank), MPI_INT, all, cnt, disp, MPI_INT, W, &r_),
        MPI_Allgatherv_init_c(mine, vcount(rank), MPI_INT, all, cnt, disp, MPI_INT, W, NI, &r_));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < cnt[r]; i++)
            CHECK(all[disp[r] + i] == val(r, 2, i), "%s allgatherv_c: rank %d [%d]", m, r, i);

    /* alltoall: block j of rank r is val(r, j, .) */
    int sb[3 * 64], rb[3 * 64];
    for (int j = 0; j < size; j++)
        for (int i = 0; i < 3; i++)
            sb[3 * j + i] = val(rank, j, i);
    RUN(mode, rb, sizeof rb, MPI_Alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, W),
        MPI_Ialltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, W, &r_),
        MPI_Alltoall_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, W, NI, &r_));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < 3; i++)
            CHECK(rb[3 * j + i] == val(j, rank, i), "%s alltoall_c: from %d [%d]", m, j, i);

    /* alltoallv / w: rank r sends (r + j) % 3 + 1 ints to j; sends laid
     * out forward, receives reversed (bytes for w) */
    MPI_Count sc[64], rc[64], st = 0;
    MPI_Aint sd[64], rd[64], sdb[64], rdb[64];
    MPI_Datatype ty[64];
    for (int j = 0; j < size; j++) {
        sc[j] = (rank + j) % 3 + 1;
        rc[j] = (j + rank) % 3 + 1;
        sd[j] = st;
        st += sc[j];
        ty[j] = MPI_INT;
    }
    reversed(size, rc, rd);
    for (int j = 0; j < size; j++) {
        sdb[j] = sd[j] * (MPI_Aint)sizeof(int);
        rdb[j] = rd[j] * (MPI_Aint)sizeof(int);
        for (int i = 0; i < sc[j]; i++)
            sb[sd[j] + i] = val(rank, j, i);
    }
    for (int w = 0; w < 2; w++) {
        if (w == 0)
            RUN(mode, rb, sizeof rb,
                MPI_Alltoallv_c(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, W),
                MPI_Ialltoallv_c(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, W, &r_),
                MPI_Alltoallv_init_c(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, W, NI, &r_));
        else
            RUN(mode, rb, sizeof rb, MPI_Alltoallw_c(sb, sc, sdb, ty, rb, rc, rdb, ty, W),
                MPI_Ialltoallw_c(sb, sc, sdb, ty, rb, rc, rdb, ty, W, &r_),
                MPI_Alltoallw_init_c(sb, sc, sdb, ty, rb, rc, rdb, ty, W, NI, &r_));
        for (int j = 0; j < size; j++)
            for (int i = 0; i < rc[j]; i++)
                CHECK(rb[rd[j] + i] == val(j, rank, i), "%s alltoall%c_c: from %d [%d] = %d", m,
                      w ? 'w' : 'v', j, i, rb[rd[j] + i]);
    }
}

static void reductions(int mode)
{
    const char *m = mode_name[mode];
    enum { N = 300 };
    long long in[N], out[N], expect;
    for (int i = 0; i < N; i++)
        in[i] = (long long)rank * 100000 + i;
    int root = size / 2;
    RUN(mode, out, sizeof out, MPI_Reduce_c(in, out, N, MPI_LONG_LONG, MPI_SUM, root, W),
        MPI_Ireduce_c(in, out, N, MPI_LONG_LONG, MPI_SUM, root, W, &r_),
        MPI_Reduce_init_c(in, out, N, MPI_LONG_LONG, MPI_SUM, root, W, NI, &r_));
    long long ranks = (long long)size * (size - 1) / 2;
    for (int i = 0; rank == root && i < N; i++)
        CHECK(out[i] == ranks * 100000 + (long long)size * i, "%s reduce_c: [%d] = %lld", m, i,
              out[i]);
    RUN(mode, out, sizeof out, MPI_Allreduce_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W),
        MPI_Iallreduce_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, &r_),
        MPI_Allreduce_init_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, NI, &r_));
    for (int i = 0; i < N; i++)
        CHECK(out[i] == ranks * 100000 + (long long)size * i, "%s allreduce_c: [%d]", m, i);
    RUN(mode, out, sizeof out, MPI_Scan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W),
        MPI_Iscan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, &r_),
        MPI_Scan_init_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, NI, &r_));
    long long upto = (long long)rank * (rank + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECK(out[i] == upto * 100000 + (long long)(rank + 1) * i, "%s scan_c: [%d]", m, i);
    RUN(mode, out, sizeof out, MPI_Exscan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W),
        MPI_Iexscan_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, &r_),
        MPI_Exscan_init_c(in, out, N, MPI_LONG_LONG, MPI_SUM, W, NI, &r_));
    upto = (long long)rank * (rank - 1) / 2;
    for (int i = 0; rank > 0 && i < N; i++)
        CHECK(out[i] == upto * 100000 + (long long)rank * i, "%s exscan_c: [%d]", m, i);

    /* reduce_scatter(_block): the vector holds size blocks */
    MPI_Count rcnt[64], tot = 0, off = 0;
    for (int r = 0; r < size; r++) {
        rcnt[r] = vcount(r) + 1;
        tot += rcnt[r];
        if (r < rank)
            off += rcnt[r];
    }
    long long *vin = malloc(sizeof(long long) * (size_t)(tot + 2 * size));
    for (int i = 0; i < tot + 2 * size; i++)
        vin[i] = (long long)rank * 1000 + i;
    RUN(mode, out, sizeof out, MPI_Reduce_scatter_c(vin, out, rcnt, MPI_LONG_LONG, MPI_SUM, W),
        MPI_Ireduce_scatter_c(vin, out, rcnt, MPI_LONG_LONG, MPI_SUM, W, &r_),
        MPI_Reduce_scatter_init_c(vin, out, rcnt, MPI_LONG_LONG, MPI_SUM, W, NI, &r_));
    for (int i = 0; i < rcnt[rank]; i++) {
        expect = ranks * 1000 + (long long)size * (off + i);
        CHECK(out[i] == expect, "%s reduce_scatter_c: [%d] = %lld, expected %lld", m, i, out[i],
              expect);
    }
    RUN(mode, out, sizeof out, MPI_Reduce_scatter_block_c(vin, out, 2, MPI_LONG_LONG, MPI_SUM, W),
        MPI_Ireduce_scatter_block_c(vin, out, 2, MPI_LONG_LONG, MPI_SUM, W, &r_),
        MPI_Reduce_scatter_block_init_c(vin, out, 2, MPI_LONG_LONG, MPI_SUM, W, NI, &r_));
    for (int i = 0; i < 2; i++)
        CHECK(out[i] == ranks * 1000 + (long long)size * (2 * rank + i),
              "%s reduce_scatter_block_c: [%d] = %lld", m, i, out[i]);
    free(vin);
}

/* Neighbourhood collectives on a periodic ring: in-neighbours (left,
 * right), out-neighbours (left, right); what goes left arrives as the
 * left neighbour's "from the right" block. */
static void neighbours(int mode, MPI_Comm ring)
{
    const char *m = mode_name[mode];
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int from[2] = {left, right};
    int mine[3], got[6];
    for (int i = 0; i < 3; i++)
        mine[i] = val(rank, 3, i);
    RUN(mode, got, sizeof got, MPI_Neighbor_allgather_c(mine, 3, MPI_INT, got, 3, MPI_INT, ring),
        MPI_Ineighbor_allgather_c(mine, 3, MPI_INT, got, 3, MPI_INT, ring, &r_),
        MPI_Neighbor_allgather_init_c(mine, 3, MPI_INT, got, 3, MPI_INT, ring, NI, &r_));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            CHECK(got[3 * k + i] == val(from[k], 3, i), "%s neighbor_allgather_c: %d [%d]", m, k,
                  i);
    MPI_Count cnt[2] = {2, 2};
    MPI_Aint disp[2] = {3, 0}; /* reversed, a gap between */
    int g2[5];
    RUN(mode, g2, sizeof g2,
        MPI_Neighbor_allgatherv_c(mine, 2, MPI_INT, g2, cnt, disp, MPI_INT, ring),
        MPI_Ineighbor_allgatherv_c(mine, 2, MPI_INT, g2, cnt, disp, MPI_INT, ring, &r_),
        MPI_Neighbor_allgatherv_init_c(mine, 2, MPI_INT, g2, cnt, disp, MPI_INT, ring, NI, &r_));
    for (int i = 0; i < 2; i++) {
        CHECK(g2[3 + i] == val(left, 3, i), "%s neighbor_allgatherv_c: left [%d]", m, i);
        CHECK(g2[i] == val(right, 3, i), "%s neighbor_allgatherv_c: right [%d]", m, i);
    }
    /* alltoall: block k goes to out-neighbour k (0 left, 1 right) */
    int sb[6], rb[6];
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            sb[3 * k + i] = val(rank, 10 + k, i);
    RUN(mode, rb, sizeof rb, MPI_Neighbor_alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, ring),
        MPI_Ineighbor_alltoall_c(sb, 3, MPI_INT, rb, 3, MPI_INT, ring, &r_),
        MPI_Neighbor_alltoall_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, ring, NI, &r_));
    for (int i = 0; i < 3; i++) {
        CHECK(rb[i] == val(left, 11, i), "%s neighbor_alltoall_c: from the left [%d]", m, i);
        CHECK(rb[3 + i] == val(right, 10, i), "%s neighbor_alltoall_c: from the right [%d]", m,
              i);
    }
    /* alltoallv / w: 2 elements each way, receive blocks reversed */
    MPI_Count c2[2] = {2, 2};
    MPI_Aint sd[2] = {0, 3}, rd[2] = {3, 0}, sdb[2] = {0, 12}, rdb[2] = {12, 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    for (int w = 0; w < 2; w++) {
        memset(rb, 0, sizeof rb);
        if (w == 0)
            RUN(mode, rb, sizeof rb,
                MPI_Neighbor_alltoallv_c(sb, c2, sd, MPI_INT, rb, c2, rd, MPI_INT, ring),
                MPI_Ineighbor_alltoallv_c(sb, c2, sd, MPI_INT, rb, c2, rd, MPI_INT, ring, &r_),
                MPI_Neighbor_alltoallv_init_c(sb, c2, sd, MPI_INT, rb, c2, rd, MPI_INT, ring, NI,
                                              &r_));
        else
            RUN(mode, rb, sizeof rb,
                MPI_Neighbor_alltoallw_c(sb, c2, sdb, ty, rb, c2, rdb, ty, ring),
                MPI_Ineighbor_alltoallw_c(sb, c2, sdb, ty, rb, c2, rdb, ty, ring, &r_),
                MPI_Neighbor_alltoallw_init_c(sb, c2, sdb, ty, rb, c2, rdb, ty, ring, NI, &r_));
        for (int i = 0; i < 2; i++) {
            CHECK(rb[3 + i] == val(left, 11, i), "%s neighbor_alltoall%c_c: left [%d] = %d", m,
                  w ? 'w' : 'v', i, rb[3 + i]);
            CHECK(rb[i] == val(right, 10, i), "%s neighbor_alltoall%c_c: right [%d] = %d", m,
                  w ? 'w' : 'v', i, rb[i]);
        }
    }
}

/* ---- user operations -------------------------------------------------------- */
static MPI_Count seen_c;   /* last len an MPI_Op_create_c function got */
static int calls_c;
static MPI_Count pieces[4]; /* lens an MPI_Op_create function got */
static int npieces;

static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt)
{
    seen_c = *len;
    calls_c++;
    if (*dt != MPI_LONG_LONG)
        return; /* the size-zero type: nothing to add */
    for (MPI_Count i = 0; i < *len; i++)
        ((long long *)inout)[i] += ((long long *)in)[i];
}

static void count_int(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)dt;
    if (npieces < 4)
        pieces[npieces] = *len;
    npieces++;
}

static void user_ops(void)
{
    MPI_Op op, op_int;
    MPI_CHECK(MPI_Op_create_c(sum_c, 1, &op));
    enum { N = 40 };
    long long in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = rank + i;
    MPI_CHECK(MPI_Allreduce_c(in, out, N, MPI_LONG_LONG, op, W));
    for (int i = 0; i < N; i++)
        CHECK(out[i] == (long long)size * (size - 1) / 2 + (long long)size * i,
              "allreduce_c with an MPI_Op_create_c operation: [%d] = %lld", i, out[i]);
    int calls = 0; /* (a rank folded in at odd sizes only sends and receives) */
    MPI_CHECK(MPI_Allreduce(&calls_c, &calls, 1, MPI_INT, MPI_SUM, W));
    CHECK(size == 1 || calls > 0, "allreduce_c never called the MPI_Op_create_c function");
    for (int i = 0; i < N; i++)
        out[i] = 1;
    calls_c = 0;
    MPI_CHECK(MPI_Reduce_local_c(in, out, N, MPI_LONG_LONG, op));
    CHECK(calls_c == 1 && seen_c == N, "reduce_local_c: %d calls, len %lld", calls_c, seen_c);
    for (int i = 0; i < N; i++)
        CHECK(out[i] == 1 + in[i], "reduce_local_c: [%d] = %lld", i, out[i]);
    /* past INT_MAX elements on a type of size zero: no memory needed */
    MPI_Datatype empty;
    MPI_CHECK(MPI_Type_contiguous(0, MPI_INT, &empty));
    MPI_CHECK(MPI_Type_commit(&empty));
    MPI_Count big = (MPI_Count)INT_MAX + 5;
    char a = 0, b = 0;
    MPI_CHECK(MPI_Reduce_local_c(&a, &b, big, empty, op));
    CHECK(seen_c == big, "an MPI_Op_create_c function got len %lld, expected %lld", seen_c, big);
    MPI_CHECK(MPI_Op_create(count_int, 1, &op_int));
    MPI_CHECK(MPI_Reduce_local_c(&a, &b, big, empty, op_int));
    CHECK(npieces == 2 && pieces[0] == INT_MAX && pieces[1] == 5,
          "an MPI_Op_create function got %d pieces (%lld, %lld), expected INT_MAX and 5",
          npieces, pieces[0], pieces[1]);
    MPI_CHECK(MPI_Type_free(&empty));
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Op_free(&op_int));
}

static void errors(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN));
    int x[4] = {0}, y[4 * 64] = {0};
    MPI_Request r;
    EXPECT_CLASS(MPI_Bcast_c(x, -1, MPI_INT, 0, W), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Ibcast_c(x, -1, MPI_INT, 0, W, &r), MPI_ERR_COUNT);
    MPI_Count huge = (MPI_Count)1 << 62; /* times 4 bytes: past the address space */
    EXPECT_CLASS(MPI_Allreduce_c(x, y, huge, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_local_c(x, y, huge, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_local_c(x, y, -2, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    MPI_Count cnt[64];
    MPI_Aint disp[64];
    for (int i = 0; i < size; i++)
        cnt[i] = 1, disp[i] = i;
    cnt[size - 1] = -1;
    EXPECT_CLASS(MPI_Allgatherv_c(x, 1, MPI_INT, y, cnt, disp, MPI_INT, W), MPI_ERR_COUNT);
    cnt[size - 1] = huge;
    EXPECT_CLASS(MPI_Allgatherv_c(x, 1, MPI_INT, y, cnt, disp, MPI_INT, W), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Alltoallv_c(x, cnt, disp, MPI_INT, y, cnt, disp, MPI_INT, W), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter_c(x, y, cnt, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Reduce_scatter_block_c(x, y, huge, MPI_INT, MPI_SUM, W), MPI_ERR_COUNT);
    MPI_Op op;
    EXPECT_CLASS(MPI_Op_create_c(NULL, 1, &op), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(W, MPI_ERRORS_ARE_FATAL));
}

/* One broadcast of more than INT_MAX bytes (2 ranks, several GiB free). */
static void big_bcast(void)
{
    MPI_Count n = (MPI_Count)INT_MAX + 4099;
    if (!mt_all_have_memory(3.0 * (double)n * size)) {
        if (rank == 0)
            printf("coll_large_count: big broadcast skipped (not enough free memory)\n");
        return;
    }
    unsigned char *buf = malloc((size_t)n);
    CHECK(buf, "cannot allocate %lld bytes", n);
    for (MPI_Count i = 0; i < n; i += 4096)
        buf[i] = rank == 0 ? mt_byte(7, (size_t)i) : 0;
    buf[n - 1] = rank == 0 ? 0x5a : 0;
    MPI_CHECK(MPI_Bcast_c(buf, n, MPI_BYTE, 0, W));
    for (MPI_Count i = 0; i < n; i += 4096)
        CHECK(buf[i] == mt_byte(7, (size_t)i), "big bcast_c: byte %lld", i);
    CHECK(buf[n - 1] == 0x5a, "big bcast_c: the last byte");
    free(buf);
    if (rank == 0)
        printf("coll_large_count: one MPI_Bcast_c of %lld bytes\n", n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &size);
    CHECK(size <= 64, "at most 64 ranks");
    if (argc > 1 && strcmp(argv[1], "big") == 0) {
        big_bcast();
        MPI_Finalize();
        return 0;
    }
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    MPI_CHECK(MPI_Cart_create(W, 1, dims, periods, 0, &ring));
    for (int mode = BLOCKING; mode <= PERSISTENT; mode++) {
        rooted(mode);
        all_to_all(mode);
        reductions(mode);
        neighbours(mode, ring);
    }
    MPI_CHECK(MPI_Comm_free(&ring));
    user_ops();
    errors();
    MPI_CHECK(MPI_Barrier(W));
    if (rank == 0)
        printf("coll_large_count: every _c collective checked on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
