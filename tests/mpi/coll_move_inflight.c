/*
 * coll_move_inflight.c — many nonblocking data-movement collectives in flight
 * at once on one communicator (and on two), completed in an order different
 * from the order they were started, with compute-free polling by MPI_Test in
 * between; every result is checked against the reference values. Then each
 * nonblocking call is shown not to block: rank 0 starts it and only then lets
 * the others start theirs (a blocking call in disguise would deadlock).
 */
#include "mpitest.h"

static int rank, size;

enum { K = 7, NOPS = 9 };

static int val(int op, int from, int to, int i)
{
    return op * 1000000 + from * 10000 + to * 100 + i;
}

struct bufs {
    int *g_s, *g_r, *s_s, *s_r, *ag_s, *ag_r, *ag2_r, *a2a_s, *a2a_r;
    int *gv_s, *gv_r, *a2av_s, *a2av_r, *agv_r, *sv_s, *sv_r;
    int *cnt, *dsp, *a2a_cnt, *a2a_dsp;
};

static int *ialloc(size_t n)
{
    int *p = malloc(sizeof(int) * (n ? n : 1));
    for (size_t i = 0; i < n; i++)
        p[i] = -1;
    return p;
}

static void run(MPI_Comm comm, int base, int reverse_wait)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int groot = 0, sroot = n - 1, gvroot = n / 2, svroot = (n + 1) / 3;
    struct bufs b;
    size_t nk = (size_t)n * K;
    b.g_s = ialloc(K), b.g_r = ialloc(nk), b.s_s = ialloc(nk), b.s_r = ialloc(K);
    b.ag_s = ialloc(K), b.ag_r = ialloc(nk), b.ag2_r = ialloc(nk);
    b.a2a_s = ialloc(nk), b.a2a_r = ialloc(nk);
    b.gv_s = ialloc((size_t)me + 1), b.gv_r = ialloc((size_t)n * (n + 1) / 2);
    b.agv_r = ialloc((size_t)n * (n + 1) / 2);
    b.sv_s = ialloc((size_t)n * (n + 1) / 2), b.sv_r = ialloc((size_t)me + 1);
    b.a2av_s = ialloc((size_t)n * (n + 1)), b.a2av_r = ialloc((size_t)n * (n + 1));
    b.cnt = ialloc((size_t)n), b.dsp = ialloc((size_t)n);
    b.a2a_cnt = ialloc((size_t)n), b.a2a_dsp = ialloc((size_t)n);
    for (int r = 0, pos = 0; r < n; r++) { /* rank r contributes r + 1 ints */
        b.cnt[r] = r + 1;
        b.dsp[r] = pos;
        pos += r + 1;
    }
    for (int i = 0; i < K; i++) {
        b.g_s[i] = val(base + 0, me, groot, i);
        b.ag_s[i] = val(base + 2, me, 0, i);
    }
    for (int r = 0; r < n; r++)
        for (int i = 0; i < K; i++) {
            b.s_s[r * K + i] = val(base + 1, me, r, i);
            b.a2a_s[r * K + i] = val(base + 3, me, r, i);
        }
    for (int i = 0; i <= me; i++)
        b.gv_s[i] = val(base + 4, me, gvroot, i);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < r + 1; i++)
            b.sv_s[b.dsp[r] + i] = val(base + 5, me, r, i);
    /* Alltoallv: me sends (me + r) % 3 ints to r, at slots of n + 1. */
    for (int r = 0; r < n; r++) {
        b.a2a_cnt[r] = (me + r) % 3;
        b.a2a_dsp[r] = r * (n + 1);
        for (int i = 0; i < b.a2a_cnt[r]; i++)
            b.a2av_s[r * (n + 1) + i] = val(base + 6, me, r, i);
    }

    MPI_Request req[NOPS];
    MPI_CHECK(MPI_Igather(b.g_s, K, MPI_INT, b.g_r, K, MPI_INT, groot, comm, &req[0]));
    MPI_CHECK(MPI_Iscatter(b.s_s, K, MPI_INT, b.s_r, K, MPI_INT, sroot, comm, &req[1]));
    MPI_CHECK(MPI_Iallgather(b.ag_s, K, MPI_INT, b.ag_r, K, MPI_INT, comm, &req[2]));
    MPI_CHECK(MPI_Ialltoall(b.a2a_s, K, MPI_INT, b.a2a_r, K, MPI_INT, comm, &req[3]));
    MPI_CHECK(MPI_Igatherv(b.gv_s, me + 1, MPI_INT, b.gv_r, b.cnt, b.dsp, MPI_INT, gvroot, comm,
                           &req[4]));
    MPI_CHECK(MPI_Iscatterv(b.sv_s, b.cnt, b.dsp, MPI_INT, b.sv_r, me + 1, MPI_INT, svroot, comm,
                            &req[5]));
    MPI_CHECK(MPI_Ialltoallv(b.a2av_s, b.a2a_cnt, b.a2a_dsp, MPI_INT, b.a2av_r, b.a2a_cnt,
                             b.a2a_dsp, MPI_INT, comm, &req[6]));
    MPI_CHECK(MPI_Iallgatherv(b.gv_s, me + 1, MPI_INT, b.agv_r, b.cnt, b.dsp, MPI_INT, comm,
                              &req[7]));
    /* The same buffers read by two operations at once is allowed for sends. */
    MPI_CHECK(MPI_Iallgather(b.ag_s, K, MPI_INT, b.ag2_r, K, MPI_INT, comm, &req[8]));
    if (reverse_wait) {
        for (int i = NOPS - 1; i >= 0; i--) {
            int flag = 0;
            while (!flag)
                MPI_CHECK(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE));
        }
    } else {
        MPI_CHECK(MPI_Waitall(NOPS, req, MPI_STATUSES_IGNORE));
    }
    for (int i = 0; i < NOPS; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed", i);

    if (me == groot)
        for (int r = 0; r < n; r++)
            for (int i = 0; i < K; i++)
                CHECK(b.g_r[r * K + i] == val(base + 0, r, groot, i), "igather [%d][%d]", r, i);
    for (int i = 0; i < K; i++)
        CHECK(b.s_r[i] == val(base + 1, sroot, me, i), "iscatter [%d] = %d", i, b.s_r[i]);
    for (int r = 0; r < n; r++)
        for (int i = 0; i < K; i++) {
            CHECK(b.ag_r[r * K + i] == val(base + 2, r, 0, i), "iallgather [%d][%d]", r, i);
            CHECK(b.ag2_r[r * K + i] == val(base + 2, r, 0, i), "iallgather 2 [%d][%d]", r, i);
            CHECK(b.a2a_r[r * K + i] == val(base + 3, r, me, i), "ialltoall [%d][%d]", r, i);
        }
    if (me == gvroot)
        for (int r = 0; r < n; r++)
            for (int i = 0; i <= r; i++)
                CHECK(b.gv_r[b.dsp[r] + i] == val(base + 4, r, gvroot, i), "igatherv [%d][%d]", r,
                      i);
    for (int i = 0; i <= me; i++)
        CHECK(b.sv_r[i] == val(base + 5, svroot, me, i), "iscatterv [%d]", i);
    for (int r = 0; r < n; r++) {
        for (int i = 0; i < (me + r) % 3; i++)
            CHECK(b.a2av_r[r * (n + 1) + i] == val(base + 6, r, me, i), "ialltoallv [%d][%d]", r,
                  i);
        for (int i = (me + r) % 3; i < n + 1; i++)
            CHECK(b.a2av_r[r * (n + 1) + i] == -1, "ialltoallv wrote past block [%d][%d]", r, i);
        for (int i = 0; i <= r; i++)
            CHECK(b.agv_r[b.dsp[r] + i] == val(base + 4, r, gvroot, i), "iallgatherv [%d][%d]", r,
                  i);
    }
    int **all[] = {&b.g_s, &b.g_r, &b.s_s, &b.s_r, &b.ag_s, &b.ag_r, &b.ag2_r, &b.a2a_s, &b.a2a_r,
                   &b.gv_s, &b.gv_r, &b.a2av_s, &b.a2av_r, &b.agv_r, &b.sv_s, &b.sv_r,
                   &b.cnt, &b.dsp, &b.a2a_cnt, &b.a2a_dsp};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        free(*all[i]);
}

/* Start operation `op` (every rank the same): 12 kinds, each with a small
 * buffer set checked only for completion and content of one block. */
static void start_op(int op, int *sb, int *rb, int *cnt, int *dsp, MPI_Datatype *types,
                     MPI_Request *req)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int root = op % 2 ? 0 : size - 1;
    switch (op) {
    case 0: MPI_CHECK(MPI_Igather(sb, 1, MPI_INT, rb, 1, MPI_INT, root, w, req)); break;
    case 1: MPI_CHECK(MPI_Igatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, root, w, req)); break;
    case 2: MPI_CHECK(MPI_Iscatter(sb, 1, MPI_INT, rb, 1, MPI_INT, root, w, req)); break;
    case 3: MPI_CHECK(MPI_Iscatterv(sb, cnt, dsp, MPI_INT, rb, 1, MPI_INT, root, w, req)); break;
    case 4: MPI_CHECK(MPI_Iallgather(sb, 1, MPI_INT, rb, 1, MPI_INT, w, req)); break;
    case 5: MPI_CHECK(MPI_Iallgatherv(sb, 1, MPI_INT, rb, cnt, dsp, MPI_INT, w, req)); break;
    case 6: MPI_CHECK(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, w, req)); break;
    case 7: MPI_CHECK(MPI_Ialltoallv(sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, w, req)); break;
    default:
        for (int i = 0; i < size; i++)
            dsp[i] *= (int)sizeof(int); /* byte displacements */
        MPI_CHECK(MPI_Ialltoallw(sb, cnt, dsp, types, rb, cnt, dsp, types, w, req));
        for (int i = 0; i < size; i++)
            dsp[i] /= (int)sizeof(int);
        break;
    }
}

static void no_hidden_blocking(void)
{
    int *sb = malloc(sizeof(int) * (size_t)size), *rb = malloc(sizeof(int) * (size_t)size);
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int op = 0; op < 9; op++) {
        for (int i = 0; i < size; i++) {
            sb[i] = op * 1000 + rank * 10 + i % 10;
            rb[i] = -1;
            cnt[i] = 1;
            dsp[i] = i;
            types[i] = MPI_INT;
        }
        MPI_Request req;
        int token = op;
        if (rank == 0) {
            start_op(op, sb, rb, cnt, dsp, types, &req);
            for (int r = 1; r < size; r++)
                MPI_CHECK(MPI_Send(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD));
        } else {
            MPI_CHECK(MPI_Recv(&token, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(token == op, "token %d for op %d", token, op);
            start_op(op, sb, rb, cnt, dsp, types, &req);
        }
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        /* Block 0 of the result: what rank 0 (or the root) contributed. */
        int root = op % 2 ? 0 : size - 1;
        int want;
        switch (op) {
        case 0: case 1: want = rank == root ? op * 1000 + 0 : -1; break;
        case 2: case 3: want = op * 1000 + root * 10 + rank % 10; break;
        case 4: case 5: want = op * 1000 + 0 * 10 + 0; break;
        default: want = op * 1000 + 0 * 10 + rank % 10; break;
        }
        CHECK(rb[0] == want, "op %d: rb[0] = %d, want %d", op, rb[0], want);
    }
    free(sb);
    free(rb);
    free(cnt);
    free(dsp);
    free(types);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 4; round++)
        run(MPI_COMM_WORLD, round * 10, round & 1);
    no_hidden_blocking();
    /* Two communicators interleaved: world and a duplicate. */
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int x = rank, y = -rank;
    int *ax = malloc(sizeof(int) * (size_t)size), *ay = malloc(sizeof(int) * (size_t)size);
    MPI_Request r2[2];
    MPI_CHECK(MPI_Iallgather(&x, 1, MPI_INT, ax, 1, MPI_INT, dup, &r2[0]));
    MPI_CHECK(MPI_Iallgather(&y, 1, MPI_INT, ay, 1, MPI_INT, MPI_COMM_WORLD, &r2[1]));
    MPI_CHECK(MPI_Waitall(2, r2, MPI_STATUSES_IGNORE));
    for (int i = 0; i < size; i++)
        CHECK(ax[i] == i && ay[i] == -i, "two comms: [%d] = %d, %d", i, ax[i], ay[i]);
    free(ax);
    free(ay);
    MPI_CHECK(MPI_Comm_free(&dup));
    if (rank == 0)
        printf("coll_move_inflight: OK on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
