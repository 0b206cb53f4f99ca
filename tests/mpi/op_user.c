/*
 * op_user.c — user-defined operations (MPI_Op_create/commutative/free: the
 * function gets (in, inout) in that order with the user's count and
 * datatype; freed handles are refused) and MPI_MINLOC/MPI_MAXLOC on every
 * pair type with the standard's tie rule (the smaller index wins).
 */
#include <stdbool.h>

#include "mpitest.h"

#define N 24

static int calls, last_len;
static MPI_Datatype last_type;

/* Not commutative: inout = 100 * in + inout. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    calls++;
    last_len = *len;
    last_type = *dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = 100 * a[i] + b[i];
}

/* Commutative max of absolute values, on any type made of ints: it walks
 * *len instances of the two-int vector type used below. */
static void absmax_vec(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    calls++;
    last_len = *len;
    last_type = *dt;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*dt, &lb, &extent);
    for (int k = 0; k < *len; k++) {
        int *a = (int *)((char *)in + k * extent), *b = (int *)((char *)inout + k * extent);
        /* the vector type: ints 0 and 2 of each instance */
        for (int j = 0; j <= 2; j += 2) {
            int x = abs(a[j]), y = abs(b[j]);
            b[j] = x > y ? x : y;
        }
    }
}

static void check_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

static void user_ops(void)
{
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(affine, 0, &op));
    CHECK(op != MPI_OP_NULL, "MPI_Op_create gave MPI_OP_NULL");
    int commute = -1;
    MPI_CHECK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0, "non-commutative op reports %d", commute);
    int a[N], b[N];
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 7 - i;
    }
    calls = 0;
    MPI_CHECK(MPI_Reduce_local(a, b, N, MPI_INT, op));
    CHECK(calls == 1 && last_len == N && last_type == MPI_INT,
          "user function: %d calls, len %d, type %#x", calls, last_len, (unsigned)last_type);
    for (int i = 0; i < N; i++)
        CHECK(b[i] == 100 * i + 7 - i, "b[%d] = %d: in and inout swapped?", i, b[i]);
    for (int i = 0; i < N; i++)
        CHECK(a[i] == i, "inbuf changed at %d", i);

    /* count 0: the function need not be called, nothing changes */
    calls = 0;
    MPI_CHECK(MPI_Reduce_local(a, b, 0, MPI_INT, op));
    CHECK(b[0] == 7, "count 0 changed the buffer");

    MPI_Op kept = op;
    MPI_CHECK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not set MPI_OP_NULL");
    check_class(MPI_Reduce_local(a, b, N, MPI_INT, kept), MPI_ERR_OP, "freed op in Reduce_local");
    check_class(MPI_Op_commutative(kept, &commute), MPI_ERR_OP, "freed op in Op_commutative");
    check_class(MPI_Op_free(&kept), MPI_ERR_OP, "freeing twice");
    check_class(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG, "NULL function");
    check_class(MPI_Op_create(affine, 1, NULL), MPI_ERR_ARG, "NULL op pointer");

    /* A commutative op over a derived type: called once with the user's
     * count and datatype handle. */
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    MPI_Op am;
    MPI_CHECK(MPI_Op_create(absmax_vec, 1, &am));
    MPI_CHECK(MPI_Op_commutative(am, &commute));
    CHECK(commute == 1, "commutative op reports %d", commute);
    MPI_Aint lb, extent;
    MPI_CHECK(MPI_Type_get_extent(vec, &lb, &extent));
    CHECK(extent == 3 * (MPI_Aint)sizeof(int), "vector extent %td", extent);
    int x[9] = {-5, 1, 2, 3, -4, 5, 6, 7, 8}, y[9] = {4, 10, -3, 30, 40, 50, -60, 70, 0};
    calls = 0;
    MPI_CHECK(MPI_Reduce_local(x, y, 3, vec, am));
    CHECK(calls == 1 && last_len == 3 && last_type == vec, "derived: %d calls, len %d, type %#x",
          calls, last_len, (unsigned)last_type);
    int want[9] = {5, 10, 3, 30, 40, 50, 60, 70, 8};
    for (int i = 0; i < 9; i++)
        CHECK(y[i] == want[i], "absmax y[%d] = %d, want %d", i, y[i], want[i]);
    MPI_CHECK(MPI_Op_free(&am));
    MPI_CHECK(MPI_Type_free(&vec));

    /* Many ops, freed in another order: handles stay distinct and valid. */
    MPI_Op many[40];
    for (int i = 0; i < 40; i++)
        MPI_CHECK(MPI_Op_create(affine, i & 1, &many[i]));
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < i; j++)
            CHECK(many[i] != many[j], "ops %d and %d share a handle", i, j);
    for (int i = 39; i >= 0; i -= 2)
        MPI_CHECK(MPI_Op_free(&many[i]));
    for (int i = 0; i < 40; i += 2) {
        MPI_CHECK(MPI_Op_commutative(many[i], &commute));
        CHECK(commute == 0, "op %d commute %d", i, commute);
        MPI_CHECK(MPI_Op_free(&many[i]));
    }
}

/* MINLOC/MAXLOC: values with ties; reference computed here. */
#define PAIRS(X)                                                                   \
    X(float_int, MPI_FLOAT_INT, float, int)                                        \
    X(double_int, MPI_DOUBLE_INT, double, int)                                     \
    X(long_int, MPI_LONG_INT, long, int)                                           \
    X(2int, MPI_2INT, int, int)                                                    \
    X(short_int, MPI_SHORT_INT, short, int)                                        \
    X(long_double_int, MPI_LONG_DOUBLE_INT, long double, int)                      \
    X(2integer, MPI_2INTEGER, int32_t, int32_t)                                    \
    X(2real, MPI_2REAL, float, float)                                              \
    X(2double_precision, MPI_2DOUBLE_PRECISION, double, double)

#define PAIR_TEST(NM, H, V, I)                                                         \
    static void test_##NM(int shift)                                                \
    {                                                                              \
        typedef struct {                                                           \
            V v;                                                                   \
            I i;                                                                   \
        } P;                                                                       \
        static _Alignas(64) unsigned char ib[N * sizeof(P) + 8], ob[N * sizeof(P) + 8]; \
        for (int o = 0; o < 2; o++) {                                              \
            MPI_Op op = o ? MPI_MAXLOC : MPI_MINLOC;                               \
            P a[N], b[N], r[N];                                                    \
            memset(a, 0, sizeof a);                                                \
            memset(b, 0, sizeof b);                                                \
            for (int k = 0; k < N; k++) {                                          \
                a[k].v = (V)((k * 3) % 5);                                         \
                a[k].i = (I)(k % 4);                                               \
                b[k].v = (V)((k * 2) % 5);                                         \
                b[k].i = (I)((k + 1) % 4);                                         \
                bool first = o ? a[k].v > b[k].v : a[k].v < b[k].v;                \
                bool second = o ? a[k].v < b[k].v : a[k].v > b[k].v;               \
                r[k] = first ? a[k] : b[k];                                        \
                if (!first && !second)                                             \
                    r[k].i = a[k].i < b[k].i ? a[k].i : b[k].i;                    \
            }                                                                      \
            memcpy(ib + shift, a, sizeof a);                                       \
            memcpy(ob + shift, b, sizeof b);                                       \
            MPI_CHECK(MPI_Reduce_local(ib + shift, ob + shift, N, H, op));         \
            memcpy(b, ob + shift, sizeof b);                                       \
            int ties = 0;                                                          \
            for (int k = 0; k < N; k++) {                                          \
                CHECK(b[k].v == r[k].v && b[k].i == r[k].i,                        \
                      "%s %s (shift %d) pair %d: (%g,%g), want (%g,%g)",           \
                      o ? "MAXLOC" : "MINLOC", #H, shift, k, (double)b[k].v,       \
                      (double)b[k].i, (double)r[k].v, (double)r[k].i);             \
                ties += a[k].v == b[k].v;                                          \
            }                                                                      \
            (void)ties;                                                            \
            CHECK(ties >= 4, "the data has %d ties", ties);                        \
        }                                                                          \
    }
#define PAIR_DEF(NM, H, V, I) PAIR_TEST(NM, H, V, I)
PAIRS(PAIR_DEF)

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    user_ops();
    for (int shift = 0; shift < 4; shift += 3) {
#define PAIR_RUN(NM, H, V, I) test_##NM(shift);
        PAIRS(PAIR_RUN)
    }
    MPI_CHECK(MPI_Finalize());
    return 0;
}
