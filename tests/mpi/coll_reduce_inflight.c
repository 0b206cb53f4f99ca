/*
 * coll_reduce_inflight.c — nonblocking reduction-family collectives in flight
 * together on one communicator (each kind started, completed in reverse
 * order, by Waitall and by Waitany), interleaved with point-to-point
 * traffic on the same communicator; noncontiguous datatypes (vectors, a
 * root sending a vector that the others receive as plain ints); and
 * datatypes and user operations freed while the collective that uses them
 * is still running.
 */
#include "coll_reduce_util.h"

static int rank, size;

enum { N = 37, BIG = 40000, K = 10 };

struct flight {
    int bc[N], bcbig[BIG], ar[N], red[N], scan[N], exscan[N], rsb[N], rs[N * 8], arbig[BIG];
    int s[N * 8], sbig[BIG];
    int rcounts[64];
};

static void start_all(struct flight *f, MPI_Request *req, int t)
{
    int root = (t + 1) % size;
    for (int i = 0; i < N; i++) {
        f->bc[i] = rank == root ? ca_val(t, 0, i) : -1;
        f->ar[i] = f->red[i] = f->scan[i] = f->exscan[i] = f->rsb[i] = -1;
    }
    for (int i = 0; i < BIG; i++) {
        f->bcbig[i] = rank == root ? ca_val(t + 1, 0, i) : -1;
        f->sbig[i] = ca_val(t + 2, rank, i);
    }
    for (int i = 0; i < N * size; i++)
        f->s[i] = ca_val(t, rank, i);
    for (int i = 0; i < size; i++)
        f->rcounts[i] = (i % 2) + 1;
    MPI_CHECK(MPI_Ibcast(f->bc, N, MPI_INT, root, MPI_COMM_WORLD, &req[0]));
    MPI_CHECK(MPI_Iallreduce(f->s, f->ar, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[1]));
    MPI_CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req[2]));
    MPI_CHECK(MPI_Ireduce(f->s, f->red, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &req[3]));
    MPI_CHECK(MPI_Iscan(f->s, f->scan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[4]));
    MPI_CHECK(MPI_Iexscan(f->s, f->exscan, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[5]));
    MPI_CHECK(MPI_Ireduce_scatter_block(f->s, f->rsb, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                        &req[6]));
    MPI_CHECK(MPI_Ibcast(f->bcbig, BIG, MPI_INT, root, MPI_COMM_WORLD, &req[7]));
    MPI_CHECK(MPI_Iallreduce(f->sbig, f->arbig, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[8]));
    MPI_CHECK(MPI_Ireduce_scatter(f->s, f->rs, f->rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                  &req[9]));
}

static void check_all(struct flight *f, int t)
{
    int root = (t + 1) % size;
    for (int i = 0; i < N; i++) {
        CHECK(f->bc[i] == ca_val(t, 0, i), "t%d ibcast [%d] = %d", t, i, f->bc[i]);
        CHECK(f->ar[i] == ca_sum(t, 0, size - 1, i), "t%d iallreduce [%d] = %d", t, i, f->ar[i]);
        if (rank == root)
            CHECK(f->red[i] == ca_sum(t, 0, size - 1, i), "t%d ireduce [%d]", t, i);
        CHECK(f->scan[i] == ca_sum(t, 0, rank, i), "t%d iscan [%d]", t, i);
        if (rank)
            CHECK(f->exscan[i] == ca_sum(t, 0, rank - 1, i), "t%d iexscan [%d]", t, i);
        CHECK(f->rsb[i] == ca_sum(t, 0, size - 1, N * rank + i), "t%d ireduce_scatter_block [%d]",
              t, i);
    }
    int first = 0;
    for (int q = 0; q < rank; q++)
        first += f->rcounts[q];
    for (int i = 0; i < f->rcounts[rank]; i++)
        CHECK(f->rs[i] == ca_sum(t, 0, size - 1, first + i), "t%d ireduce_scatter [%d]", t, i);
    for (int i = 0; i < BIG; i++) {
        CHECK(f->bcbig[i] == ca_val(t + 1, 0, i), "t%d big ibcast [%d]", t, i);
        CHECK(f->arbig[i] == ca_sum(t + 2, 0, size - 1, i), "t%d big iallreduce [%d]", t, i);
    }
}

/* Point-to-point ring on the same communicator while collectives fly. */
static void ring(int t)
{
    int out = rank * 100 + t, in = -1;
    MPI_CHECK(MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, t, &in, 1, MPI_INT,
                           (rank - 1 + size) % size, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in == ((rank - 1 + size) % size) * 100 + t, "ring got %d", in);
}

static void t_flight(void)
{
    struct flight *f = malloc(sizeof *f);
    MPI_Request req[K];
    /* reverse order */
    start_all(f, req, 3);
    ring(1);
    for (int k = K - 1; k >= 0; k--)
        MPI_CHECK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
    check_all(f, 3);
    /* Waitall */
    start_all(f, req, 5);
    ring(2);
    MPI_CHECK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    check_all(f, 5);
    /* Waitany: whatever finishes first */
    start_all(f, req, 7);
    for (int k = 0; k < K; k++) {
        int idx = -1;
        MPI_CHECK(MPI_Waitany(K, req, &idx, MPI_STATUS_IGNORE));
        CHECK(idx >= 0 && idx < K && req[idx] == MPI_REQUEST_NULL, "waitany index %d", idx);
    }
    check_all(f, 7);
    /* two of each in flight, completed newest first */
    struct flight *g = malloc(sizeof *g);
    MPI_Request req2[K];
    start_all(f, req, 11);
    start_all(g, req2, 13);
    MPI_CHECK(MPI_Waitall(K, req2, MPI_STATUSES_IGNORE));
    MPI_CHECK(MPI_Waitall(K, req, MPI_STATUSES_IGNORE));
    check_all(f, 11);
    check_all(g, 13);
    free(g);
    free(f);
}

/* Vectors: every other int of 2n. */
static void t_vector(int nb)
{
    enum { n = 300 };
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int *s = malloc(sizeof(int) * 2 * n * (size_t)size), *r = malloc(sizeof(int) * 2 * n);
    int *plain = malloc(sizeof(int) * n);
    MPI_Request req = MPI_REQUEST_NULL;
    /* bcast: the root sends a vector, the others receive n plain ints */
    int root = size - 1;
    for (int i = 0; i < 2 * n; i++)
        s[i] = i % 2 ? -5 : ca_val(20, 0, i / 2);
    for (int i = 0; i < n; i++)
        plain[i] = -1;
    if (rank == root) {
        if (nb)
            MPI_CHECK(MPI_Ibcast(s, 1, vec, root, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Bcast(s, 1, vec, root, MPI_COMM_WORLD));
    } else {
        if (nb)
            MPI_CHECK(MPI_Ibcast(plain, n, MPI_INT, root, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Bcast(plain, n, MPI_INT, root, MPI_COMM_WORLD));
    }
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (rank != root)
        for (int i = 0; i < n; i++)
            CHECK(plain[i] == ca_val(20, 0, i), "vector bcast [%d] = %d", i, plain[i]);
    /* allreduce / reduce / scan on vectors: the gaps stay untouched */
    for (int op = 0; op < 3; op++) {
        for (int i = 0; i < 2 * n; i++) {
            s[i] = i % 2 ? -5 : ca_val(21 + op, rank, i / 2);
            r[i] = -9;
        }
        if (op == 0 && nb)
            MPI_CHECK(MPI_Iallreduce(s, r, 1, vec, MPI_SUM, MPI_COMM_WORLD, &req));
        else if (op == 0)
            MPI_CHECK(MPI_Allreduce(s, r, 1, vec, MPI_SUM, MPI_COMM_WORLD));
        else if (op == 1 && nb)
            MPI_CHECK(MPI_Ireduce(s, r, 1, vec, MPI_SUM, 0, MPI_COMM_WORLD, &req));
        else if (op == 1)
            MPI_CHECK(MPI_Reduce(s, r, 1, vec, MPI_SUM, 0, MPI_COMM_WORLD));
        else if (nb)
            MPI_CHECK(MPI_Iscan(s, r, 1, vec, MPI_SUM, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Scan(s, r, 1, vec, MPI_SUM, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        if (op == 1 && rank != 0)
            continue;
        int hi = op == 2 ? rank : size - 1;
        for (int i = 0; i < 2 * n; i++)
            CHECK(r[i] == (i % 2 ? -9 : ca_sum(21 + op, 0, hi, i / 2)),
                  "vector reduction %d nb=%d [%d] = %d", op, nb, i, r[i]);
    }
    /* reduce_scatter_block of vectors: block k is the k-th vector of s */
    for (int i = 0; i < 2 * n * size; i++)
        s[i] = ca_val(25, rank, i);
    for (int i = 0; i < 2 * n; i++)
        r[i] = -9;
    MPI_Datatype rv; /* one vector spans 2n - 1 ints: resize to 2n */
    MPI_CHECK(MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * n * sizeof(int)), &rv));
    MPI_CHECK(MPI_Type_commit(&rv));
    if (nb)
        MPI_CHECK(MPI_Ireduce_scatter_block(s, r, 1, rv, MPI_SUM, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, 1, rv, MPI_SUM, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * n; i++)
        CHECK(r[i] == (i % 2 ? -9 : ca_sum(25, 0, size - 1, 2 * n * rank + i)),
              "vector reduce_scatter_block nb=%d [%d] = %d", nb, i, r[i]);
    MPI_CHECK(MPI_Type_free(&rv));
    MPI_CHECK(MPI_Type_free(&vec));
    free(s);
    free(r);
    free(plain);
    /* a long vector broadcast (scatter + ring over packed bytes) */
    enum { L = 60000 };
    MPI_Datatype lv;
    MPI_CHECK(MPI_Type_vector(L, 1, 2, MPI_INT, &lv));
    MPI_CHECK(MPI_Type_commit(&lv));
    int *v = malloc(sizeof(int) * 2 * L);
    for (int lr = 0; lr < size; lr += size > 2 ? size - 1 : 1) {
        for (int i = 0; i < 2 * L; i++)
            v[i] = i % 2 ? -5 : rank == lr ? ca_val(26, lr, i / 2) : -1;
        if (nb)
            MPI_CHECK(MPI_Ibcast(v, 1, lv, lr, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Bcast(v, 1, lv, lr, MPI_COMM_WORLD));
        MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * L; i++)
            CHECK(v[i] == (i % 2 ? -5 : ca_val(26, lr, i / 2)),
                  "long vector bcast root %d nb=%d [%d] = %d", lr, nb, i, v[i]);
    }
    MPI_CHECK(MPI_Type_free(&lv));
    free(v);
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

/* The application frees the datatype and the operation while the
 * collectives using them run. */
static void t_freed(void)
{
    enum { n = 5000 };
    MPI_Datatype vec;
    MPI_Op op;
    int *s = malloc(sizeof(int) * 2 * n), *r1 = malloc(sizeof(int) * 2 * n);
    int *r2 = malloc(sizeof(int) * 2 * n), *r3 = malloc(sizeof(int) * 2 * n);
    for (int i = 0; i < 2 * n; i++) {
        s[i] = ca_val(40, rank, i);
        r1[i] = r2[i] = r3[i] = -9;
    }
    MPI_CHECK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_CHECK(MPI_Op_create(sum_fn, 1, &op));
    MPI_Request req[3];
    MPI_CHECK(MPI_Iallreduce(s, r1, 1, vec, MPI_SUM, MPI_COMM_WORLD, &req[0]));
    MPI_CHECK(MPI_Iallreduce(s, r2, 2 * n, MPI_INT, op, MPI_COMM_WORLD, &req[1]));
    MPI_CHECK(MPI_Iscan(s, r3, 1, vec, MPI_MAX, MPI_COMM_WORLD, &req[2]));
    MPI_CHECK(MPI_Type_free(&vec));
    MPI_CHECK(MPI_Op_free(&op));
    CHECK(vec == MPI_DATATYPE_NULL && op == MPI_OP_NULL, "handles not nulled");
    MPI_CHECK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 2 * n; i++) {
        CHECK(r1[i] == (i % 2 ? -9 : ca_sum(40, 0, size - 1, i)), "freed type [%d] = %d", i,
              r1[i]);
        CHECK(r2[i] == ca_sum(40, 0, size - 1, i), "freed op [%d] = %d", i, r2[i]);
        int mx = -1;
        for (int q = 0; q <= rank; q++)
            mx = ca_val(40, q, i) > mx ? ca_val(40, q, i) : mx;
        CHECK(r3[i] == (i % 2 ? -9 : mx), "freed type scan max [%d] = %d", i, r3[i]);
    }
    free(s);
    free(r1);
    free(r2);
    free(r3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 8, "at most 8 ranks");
    t_flight();
    t_vector(0);
    t_vector(1);
    t_freed();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_reduce_inflight: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
