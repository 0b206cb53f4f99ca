/*
 * coll_reduce_user_ops.c — reductions with user operations. A non-commutative
 * one (2x2 matrix product modulo a prime, on a contiguous datatype of four
 * ints) must combine in rank order: Reduce (roots first, middle, last; in place
 * at the root), Allreduce, Reduce_scatter, Reduce_scatter_block, Scan and
 * Exscan, blocking and nonblocking, on counts from 1 to above the large-message
 * thresholds. A commutative user operation (a sum) is run on large vectors so
 * the segmenting algorithms call user functions too.
 */
#include "coll_reduce_util.h"

static int rank, size;
static MPI_Datatype mat;
static MPI_Op matop, usum;

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    CHECK(*dt == MPI_INT, "user sum called with datatype %#x", (unsigned)*dt);
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] += a[i];
}

static void done(int nb, MPI_Request *req)
{
    if (nb)
        MPI_CHECK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

static void check_mat(const char *what, const ca_mat *got, long n, int t, int lo, int hi,
                      long off)
{
    for (long i = 0; i < n; i++) {
        ca_mat want = ca_matprod(t, lo, hi, off + i);
        CHECK(ca_mateq(got[i], want), "%s [%ld]: (%d %d %d %d), want (%d %d %d %d)", what, i,
              got[i].a, got[i].b, got[i].c, got[i].d, want.a, want.b, want.c, want.d);
    }
}

static void t_reduce(long n, int nb, int t)
{
    ca_mat *s = malloc(sizeof *s * (size_t)(n + 1)), *r = malloc(sizeof *r * (size_t)(n + 1));
    int roots[3] = {0, size / 2, size - 1};
    for (int k = 0; k < 3; k++) {
        int root = roots[k];
        for (int inplace = 0; inplace < 2; inplace++) {
            for (long i = 0; i < n; i++)
                s[i] = r[i] = ca_matval(t + k, rank, i);
            const void *sb = inplace && rank == root ? MPI_IN_PLACE : s;
            MPI_Request req;
            if (nb)
                MPI_CHECK(MPI_Ireduce(sb, r, (int)n, mat, matop, root, MPI_COMM_WORLD, &req));
            else
                MPI_CHECK(MPI_Reduce(sb, r, (int)n, mat, matop, root, MPI_COMM_WORLD));
            done(nb, &req);
            if (rank == root)
                check_mat("reduce", r, n, t + k, 0, size - 1, 0);
        }
    }
    free(s);
    free(r);
}

static void t_allreduce(long n, int nb, int t)
{
    ca_mat *s = malloc(sizeof *s * (size_t)(n + 1)), *r = malloc(sizeof *r * (size_t)(n + 1));
    for (int inplace = 0; inplace < 2; inplace++) {
        for (long i = 0; i < n; i++)
            s[i] = r[i] = ca_matval(t, rank, i);
        MPI_Request req;
        const void *sb = inplace ? MPI_IN_PLACE : s;
        if (nb)
            MPI_CHECK(MPI_Iallreduce(sb, r, (int)n, mat, matop, MPI_COMM_WORLD, &req));
        else
            MPI_CHECK(MPI_Allreduce(sb, r, (int)n, mat, matop, MPI_COMM_WORLD));
        done(nb, &req);
        check_mat("allreduce", r, n, t, 0, size - 1, 0);
    }
    free(s);
    free(r);
}

static void t_reduce_scatter(long n, int nb, int t)
{
    int *rc = malloc(sizeof(int) * (size_t)size);
    for (int block = 0; block < 2; block++) {
        long total = 0, first = 0;
        for (int i = 0; i < size; i++) {
            rc[i] = block ? (int)n : (int)(n + (i % 3) - 1 > 0 ? n + (i % 3) - 1 : 0);
            if (i < rank)
                first += rc[i];
            total += rc[i];
        }
        ca_mat *s = malloc(sizeof *s * (size_t)(total + 1));
        ca_mat *r = malloc(sizeof *r * (size_t)(total + 1));
        for (int inplace = 0; inplace < 2; inplace++) {
            for (long i = 0; i < total; i++)
                s[i] = r[i] = ca_matval(t + block, rank, i);
            const void *sb = inplace ? MPI_IN_PLACE : s;
            MPI_Request req;
            if (block && nb)
                MPI_CHECK(MPI_Ireduce_scatter_block(sb, r, rc[0], mat, matop, MPI_COMM_WORLD,
                                                    &req));
            else if (block)
                MPI_CHECK(MPI_Reduce_scatter_block(sb, r, rc[0], mat, matop, MPI_COMM_WORLD));
            else if (nb)
                MPI_CHECK(MPI_Ireduce_scatter(sb, r, rc, mat, matop, MPI_COMM_WORLD, &req));
            else
                MPI_CHECK(MPI_Reduce_scatter(sb, r, rc, mat, matop, MPI_COMM_WORLD));
            done(nb, &req);
            check_mat(block ? "reduce_scatter_block" : "reduce_scatter", r, rc[rank], t + block,
                      0, size - 1, first);
        }
        free(s);
        free(r);
    }
    free(rc);
}

static void t_scan(long n, int nb, int t)
{
    ca_mat *s = malloc(sizeof *s * (size_t)(n + 1)), *r = malloc(sizeof *r * (size_t)(n + 1));
    for (int ex = 0; ex < 2; ex++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            for (long i = 0; i < n; i++)
                s[i] = r[i] = ca_matval(t + ex, rank, i);
            const void *sb = inplace ? MPI_IN_PLACE : s;
            MPI_Request req;
            if (ex && nb)
                MPI_CHECK(MPI_Iexscan(sb, r, (int)n, mat, matop, MPI_COMM_WORLD, &req));
            else if (ex)
                MPI_CHECK(MPI_Exscan(sb, r, (int)n, mat, matop, MPI_COMM_WORLD));
            else if (nb)
                MPI_CHECK(MPI_Iscan(sb, r, (int)n, mat, matop, MPI_COMM_WORLD, &req));
            else
                MPI_CHECK(MPI_Scan(sb, r, (int)n, mat, matop, MPI_COMM_WORLD));
            done(nb, &req);
            if (!ex)
                check_mat("scan", r, n, t, 0, rank, 0);
            else if (rank > 0)
                check_mat("exscan", r, n, t + 1, 0, rank - 1, 0);
        }
    }
    free(s);
    free(r);
}

/* Commutative user op on vectors long enough for the segmenting algorithms. */
static void t_user_sum(long n, int nb)
{
    int *s = malloc(sizeof(int) * (size_t)n * (size_t)size);
    int *r = malloc(sizeof(int) * (size_t)n * (size_t)size);
    for (long i = 0; i < n * size; i++)
        s[i] = ca_val(30, rank, i);
    MPI_Request req;
    if (nb)
        MPI_CHECK(MPI_Iallreduce(s, r, (int)n, MPI_INT, usum, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Allreduce(s, r, (int)n, MPI_INT, usum, MPI_COMM_WORLD));
    done(nb, &req);
    for (long i = 0; i < n; i++)
        CHECK(r[i] == ca_sum(30, 0, size - 1, i), "user-sum allreduce [%ld] = %d", i, r[i]);
    int root = size / 2;
    if (nb)
        MPI_CHECK(MPI_Ireduce(s, r, (int)n, MPI_INT, usum, root, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Reduce(s, r, (int)n, MPI_INT, usum, root, MPI_COMM_WORLD));
    done(nb, &req);
    if (rank == root)
        for (long i = 0; i < n; i++)
            CHECK(r[i] == ca_sum(30, 0, size - 1, i), "user-sum reduce [%ld] = %d", i, r[i]);
    if (nb)
        MPI_CHECK(MPI_Ireduce_scatter_block(s, r, (int)n, MPI_INT, usum, MPI_COMM_WORLD, &req));
    else
        MPI_CHECK(MPI_Reduce_scatter_block(s, r, (int)n, MPI_INT, usum, MPI_COMM_WORLD));
    done(nb, &req);
    for (long i = 0; i < n; i++)
        CHECK(r[i] == ca_sum(30, 0, size - 1, rank * n + i), "user-sum rs_block [%ld] = %d", i,
              r[i]);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_CHECK(MPI_Type_contiguous(4, MPI_INT, &mat));
    MPI_CHECK(MPI_Type_commit(&mat));
    MPI_CHECK(MPI_Op_create(ca_matop, 0, &matop));
    MPI_CHECK(MPI_Op_create(sum_fn, 1, &usum));
    int commute = 1;
    MPI_CHECK(MPI_Op_commutative(matop, &commute));
    CHECK(commute == 0, "matrix op reported commutative");
    static const long counts[] = {1, 7, 3000};
    for (int nb = 0; nb < 2; nb++) {
        for (int k = 0; k < 3; k++) {
            long n = counts[k];
            int t = 10 * k + nb;
            t_reduce(n, nb, t);
            t_allreduce(n, nb, t);
            t_reduce_scatter(n, nb, t);
            t_scan(n, nb, t);
        }
        t_user_sum(20000, nb);
    }
    MPI_CHECK(MPI_Op_free(&matop));
    MPI_CHECK(MPI_Op_free(&usum));
    MPI_CHECK(MPI_Type_free(&mat));
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_reduce_user_ops: %d ranks OK\n", size);
    MPI_Finalize();
    return 0;
}
