/*
 * op_coll.c — operations inside the reduction collectives: a
 * non-commutative user operation (2x2 matrix product) must combine the
 * ranks' values in rank order in Reduce, Allreduce, Scan, Exscan and
 * Reduce_scatter_block; MINLOC ties across ranks; an operation not defined
 * for the type fails with MPI_ERR_OP on every rank; a user operation freed
 * while a nonblocking reduction runs stays usable by it.
 */
#include "mpitest.h"

static int rank, size;

/* A 2x2 matrix of unsigned ints (arithmetic mod 2^32: associative). */
typedef struct {
    unsigned m[4];
} mat;

static mat mul(mat a, mat b)
{
    mat r;
    r.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];
    r.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];
    r.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];
    r.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];
    return r;
}

static int mat_calls;
static MPI_Datatype mat_type;

/* inout = in * inout: the earlier ranks' product on the left. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    mat_calls++;
    CHECK(*dt == mat_type, "user function got type %#x, want %#x", (unsigned)*dt,
          (unsigned)mat_type);
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mul(a[i], b[i]);
}

/* Rank r's k-th matrix: not commuting with the others. */
static mat mine(int r, int k)
{
    mat x = {{(unsigned)(r + 2 + k), 1u, (unsigned)(3 * r + 1), (unsigned)(k + 1)}};
    return x;
}

/* Product of the matrices of ranks lo..hi-1, element k. */
static mat product(int lo, int hi, int k)
{
    mat p = {{1, 0, 0, 1}};
    for (int r = lo; r < hi; r++)
        p = mul(p, mine(r, k));
    return p;
}

static void check_mat(const mat *got, int lo, int hi, int k, const char *what)
{
    mat want = product(lo, hi, k);
    CHECK(memcmp(got, &want, sizeof want) == 0,
          "%s: element %d = {%u %u %u %u}, want ranks %d..%d {%u %u %u %u}", what, k,
          got->m[0], got->m[1], got->m[2], got->m[3], lo, hi - 1, want.m[0], want.m[1],
          want.m[2], want.m[3]);
}

#define K 3

static void noncommutative(void)
{
    MPI_Op op;
    MPI_CHECK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    MPI_CHECK(MPI_Type_commit(&mat_type));
    MPI_CHECK(MPI_Op_create(matmul, 0, &op));
    mat in[K], out[K];
    for (int k = 0; k < K; k++)
        in[k] = mine(rank, k);

    for (int root = 0; root < size; root++) {
        memset(out, 0, sizeof out);
        MPI_CHECK(MPI_Reduce(in, out, K, mat_type, op, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int k = 0; k < K; k++)
                check_mat(&out[k], 0, size, k, "MPI_Reduce");
    }
    MPI_CHECK(MPI_Allreduce(in, out, K, mat_type, op, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        check_mat(&out[k], 0, size, k, "MPI_Allreduce");
    memcpy(out, in, sizeof in);
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, out, K, mat_type, op, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        check_mat(&out[k], 0, size, k, "MPI_Allreduce in place");
    MPI_CHECK(MPI_Scan(in, out, K, mat_type, op, MPI_COMM_WORLD));
    for (int k = 0; k < K; k++)
        check_mat(&out[k], 0, rank + 1, k, "MPI_Scan");
    MPI_CHECK(MPI_Exscan(in, out, K, mat_type, op, MPI_COMM_WORLD));
    if (rank > 0)
        for (int k = 0; k < K; k++)
            check_mat(&out[k], 0, rank, k, "MPI_Exscan");

    /* Reduce_scatter_block: one matrix per rank, element k = rank. */
    mat *all = malloc(sizeof(mat) * (size_t)size);
    CHECK(all, "malloc");
    for (int k = 0; k < size; k++)
        all[k] = mine(rank, k);
    MPI_CHECK(MPI_Reduce_scatter_block(all, out, 1, mat_type, op, MPI_COMM_WORLD));
    check_mat(&out[0], 0, size, rank, "MPI_Reduce_scatter_block");
    free(all);

    /* Freed while a nonblocking allreduce runs: the collective keeps it. */
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(in, out, K, mat_type, op, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Op_free(&op));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < K; k++)
        check_mat(&out[k], 0, size, k, "MPI_Iallreduce after MPI_Op_free");
    if (size > 1)
        CHECK(mat_calls > 0, "the user function was never called");
    MPI_CHECK(MPI_Type_free(&mat_type));
}

static void minloc_ties(void)
{
    struct {
        double v;
        int i;
    } in[2], out[2];
    /* element 0: value rank % 3 (min 0 on ranks 0, 3, 6: index 0 wins);
     * element 1: value 7 everywhere, index size - rank (smallest: 1). */
    in[0].v = rank % 3;
    in[0].i = rank;
    in[1].v = 7;
    in[1].i = size - rank;
    MPI_CHECK(MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out[0].v == 0 && out[0].i == 0, "MINLOC (%g,%d)", out[0].v, out[0].i);
    CHECK(out[1].v == 7 && out[1].i == 1, "MINLOC tie (%g,%d)", out[1].v, out[1].i);
    MPI_CHECK(MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int maxv = size >= 3 ? 2 : size - 1;
    CHECK(out[0].v == maxv && out[0].i == maxv, "MAXLOC (%g,%d), want (%d,%d)", out[0].v,
          out[0].i, maxv, maxv);
    CHECK(out[1].v == 7 && out[1].i == 1, "MAXLOC tie (%g,%d)", out[1].v, out[1].i);
}

static void refused(void)
{
    double d[2] = {1, 2}, r[2];
    int rc = MPI_Allreduce(d, r, 2, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_BAND on MPI_DOUBLE: rc %d class %d", rc, cls);
    char c[2] = {1, 2}, cr[2];
    rc = MPI_Reduce(c, cr, 2, MPI_CHARACTER, MPI_SUM, 0, MPI_COMM_WORLD);
    cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_CHARACTER: rc %d class %d", rc, cls);
    /* MPI_CHAR reduces as a C integer (MPICH's extension) */
    MPI_CHECK(MPI_Allreduce(c, cr, 2, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
    CHECK(cr[0] == (char)size && cr[1] == (char)(2 * size), "MPI_SUM on MPI_CHAR: %d %d",
          cr[0], cr[1]);
    /* the communicator is still usable */
    int one = 1, sum = 0;
    MPI_CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size, "sum %d", sum);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    noncommutative();
    minloc_ties();
    refused();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
