/*
 * coll_reduce_builtin_ops.c — every predefined reduction operation on every
 * predefined datatype it is defined for (MPI-3.1 §5.9.2: C integer, Fortran
 * integer, floating point, logical, complex, byte, and the MINLOC/MAXLOC pairs
 * — some of which have a hole, so they travel packed) through Allreduce,
 * Iallreduce and Reduce on vectors long enough for the segmenting algorithms,
 * Reduce_scatter_block and Iscan. Inputs are small integers, so every result is
 * exact and compared with a reference folded locally.
 */
#include <complex.h>
#include <stddef.h>

#include "coll_reduce_util.h"

static int rank, size;

enum kind { SI, UI, FL, CX, LG, BY, PR };
enum { MAX, MIN, SUM, PROD, LAND, BAND, LOR, BOR, LXOR, BXOR, MINLOC, MAXLOC, NOPS };
static const MPI_Op ops[NOPS] = {MPI_MAX, MPI_MIN, MPI_SUM,  MPI_PROD, MPI_LAND,   MPI_BAND,
                                 MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC};
static const char *const opname[NOPS] = {"MAX", "MIN", "SUM",  "PROD", "LAND",   "BAND",
                                         "LOR", "BOR", "LXOR", "BXOR", "MINLOC", "MAXLOC"};
#define B(o) (1u << (o))
#define CINT                                                                               \
    (B(MAX) | B(MIN) | B(SUM) | B(PROD) | B(LAND) | B(LOR) | B(LXOR) | B(BAND) | B(BOR) | B(BXOR))
#define FINT (B(MAX) | B(MIN) | B(SUM) | B(PROD) | B(BAND) | B(BOR) | B(BXOR))
#define FLOAT (B(MAX) | B(MIN) | B(SUM) | B(PROD))
#define LOGIC (B(LAND) | B(LOR) | B(LXOR))
#define CPLX (B(SUM) | B(PROD))
#define BYTE (B(BAND) | B(BOR) | B(BXOR))
#define PAIR (B(MINLOC) | B(MAXLOC))

struct ty {
    const char *name;
    MPI_Datatype dt;
    enum kind k;
    int sz;     /* C size of one element (a pair: the struct) */
    unsigned ops;
    /* pairs: value kind and size, index kind and size and offset */
    enum kind vk, ik;
    int vsz, isz, ioff;
};

#define PL(nm, dt, k, sz, ops) {nm, dt, k, sz, ops, SI, SI, 0, 0, 0}
#define PT(T, U) offsetof(struct { T v; U i; }, i)
#define PAIRT(nm, dt, T, vk, U, ik)                                                    \
    {nm, dt, PR, sizeof(struct { T v; U i; }), PAIR, vk, ik, sizeof(T), sizeof(U), PT(T, U)}

static const struct ty types[] = {
    PL("SIGNED_CHAR", MPI_SIGNED_CHAR, SI, 1, CINT),
    PL("UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, UI, 1, CINT),
    PL("SHORT", MPI_SHORT, SI, sizeof(short), CINT),
    PL("UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, UI, sizeof(short), CINT),
    PL("INT", MPI_INT, SI, sizeof(int), CINT),
    PL("UNSIGNED", MPI_UNSIGNED, UI, sizeof(int), CINT),
    PL("LONG", MPI_LONG, SI, sizeof(long), CINT),
    PL("UNSIGNED_LONG", MPI_UNSIGNED_LONG, UI, sizeof(long), CINT),
    PL("LONG_LONG", MPI_LONG_LONG, SI, sizeof(long long), CINT),
    PL("UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, UI, sizeof(long long), CINT),
    PL("INT8_T", MPI_INT8_T, SI, 1, CINT),
    PL("INT16_T", MPI_INT16_T, SI, 2, CINT),
    PL("INT32_T", MPI_INT32_T, SI, 4, CINT),
    PL("INT64_T", MPI_INT64_T, SI, 8, CINT),
    PL("UINT8_T", MPI_UINT8_T, UI, 1, CINT),
    PL("UINT16_T", MPI_UINT16_T, UI, 2, CINT),
    PL("UINT32_T", MPI_UINT32_T, UI, 4, CINT),
    PL("UINT64_T", MPI_UINT64_T, UI, 8, CINT),
    PL("INTEGER", MPI_INTEGER, SI, 4, FINT),
    PL("AINT", MPI_AINT, SI, sizeof(MPI_Aint), FINT),
    PL("OFFSET", MPI_OFFSET, SI, sizeof(MPI_Offset), FINT),
    PL("COUNT", MPI_COUNT, SI, sizeof(MPI_Count), FINT),
    PL("INTEGER1", MPI_INTEGER1, SI, 1, FINT),
    PL("INTEGER2", MPI_INTEGER2, SI, 2, FINT),
    PL("INTEGER4", MPI_INTEGER4, SI, 4, FINT),
    PL("INTEGER8", MPI_INTEGER8, SI, 8, FINT),
    PL("FLOAT", MPI_FLOAT, FL, sizeof(float), FLOAT),
    PL("DOUBLE", MPI_DOUBLE, FL, sizeof(double), FLOAT),
    PL("LONG_DOUBLE", MPI_LONG_DOUBLE, FL, sizeof(long double), FLOAT),
    PL("REAL", MPI_REAL, FL, 4, FLOAT),
    PL("DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, FL, 8, FLOAT),
    PL("REAL4", MPI_REAL4, FL, 4, FLOAT),
    PL("REAL8", MPI_REAL8, FL, 8, FLOAT),
    PL("C_BOOL", MPI_C_BOOL, LG, 1, LOGIC),
    PL("CXX_BOOL", MPI_CXX_BOOL, LG, 1, LOGIC),
    PL("LOGICAL", MPI_LOGICAL, LG, 4, LOGIC),
    PL("C_COMPLEX", MPI_C_COMPLEX, CX, sizeof(float _Complex), CPLX),
    PL("C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, CX, sizeof(double _Complex), CPLX),
    PL("C_LONG_DOUBLE_COMPLEX", MPI_C_LONG_DOUBLE_COMPLEX, CX, sizeof(long double _Complex),
       CPLX),
    PL("CXX_FLOAT_COMPLEX", MPI_CXX_FLOAT_COMPLEX, CX, sizeof(float _Complex), CPLX),
    PL("CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX, CX, sizeof(double _Complex), CPLX),
    PL("CXX_LONG_DOUBLE_COMPLEX", MPI_CXX_LONG_DOUBLE_COMPLEX, CX, sizeof(long double _Complex),
       CPLX),
    PL("COMPLEX", MPI_COMPLEX, CX, sizeof(float _Complex), CPLX),
    PL("DOUBLE_COMPLEX", MPI_DOUBLE_COMPLEX, CX, sizeof(double _Complex), CPLX),
    PL("BYTE", MPI_BYTE, BY, 1, BYTE),
    PAIRT("FLOAT_INT", MPI_FLOAT_INT, float, FL, int, SI),
    PAIRT("DOUBLE_INT", MPI_DOUBLE_INT, double, FL, int, SI),
    PAIRT("LONG_INT", MPI_LONG_INT, long, SI, int, SI),
    PAIRT("2INT", MPI_2INT, int, SI, int, SI),
    PAIRT("SHORT_INT", MPI_SHORT_INT, short, SI, int, SI),
    PAIRT("LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, long double, FL, int, SI),
    PAIRT("2INTEGER", MPI_2INTEGER, int, SI, int, SI),
    PAIRT("2REAL", MPI_2REAL, float, FL, float, FL),
    PAIRT("2DOUBLE_PRECISION", MPI_2DOUBLE_PRECISION, double, FL, double, FL),
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

/* A value: real (and imaginary) part, or a pair's value and index. */
typedef struct {
    long double a, b;
} val;

static void put_scalar(void *p, enum kind k, int sz, long double v)
{
    if (k == FL) {
        if (sz == 4)
            *(float *)p = (float)v;
        else if (sz == 8)
            *(double *)p = (double)v;
        else
            *(long double *)p = v;
        return;
    }
    long long x = (long long)v;
    switch (sz) {
    case 1: *(int8_t *)p = (int8_t)x; break;
    case 2: *(int16_t *)p = (int16_t)x; break;
    case 4: *(int32_t *)p = (int32_t)x; break;
    default: *(int64_t *)p = (int64_t)x; break;
    }
}

static long double get_scalar(const void *p, enum kind k, int sz)
{
    if (k == FL)
        return sz == 4 ? *(const float *)p : sz == 8 ? *(const double *)p
                                                     : *(const long double *)p;
    if (k == UI || k == BY || k == LG) {
        switch (sz) {
        case 1: return *(const uint8_t *)p;
        case 2: return *(const uint16_t *)p;
        case 4: return *(const uint32_t *)p;
        default: return (long double)*(const uint64_t *)p;
        }
    }
    switch (sz) {
    case 1: return *(const int8_t *)p;
    case 2: return *(const int16_t *)p;
    case 4: return *(const int32_t *)p;
    default: return (long double)*(const int64_t *)p;
    }
}

static void put(const struct ty *t, void *buf, long i, val v)
{
    char *p = (char *)buf + i * t->sz;
    if (t->k == PR) {
        put_scalar(p, t->vk, t->vsz, v.a);
        put_scalar(p + t->ioff, t->ik, t->isz, v.b);
    } else if (t->k == CX) {
        put_scalar(p, FL, t->sz / 2, v.a);
        put_scalar(p + t->sz / 2, FL, t->sz / 2, v.b);
    } else {
        put_scalar(p, t->k, t->sz, v.a);
    }
}

static val get(const struct ty *t, const void *buf, long i)
{
    const char *p = (const char *)buf + i * t->sz;
    val v = {0, 0};
    if (t->k == PR) {
        v.a = get_scalar(p, t->vk, t->vsz);
        v.b = get_scalar(p + t->ioff, t->ik, t->isz);
    } else if (t->k == CX) {
        v.a = get_scalar(p, FL, t->sz / 2);
        v.b = get_scalar(p + t->sz / 2, FL, t->sz / 2);
    } else {
        v.a = get_scalar(p, t->k, t->sz);
    }
    return v;
}

/* Input of rank r, element i, for operation o on type t. */
static val input(const struct ty *t, int o, int r, long i)
{
    val v = {0, 0};
    switch (o) {
    case SUM:
        v.a = (r + i) % 3 + (t->k == FL ? 0.5L : 0);
        if (t->k == CX)
            v.b = (r * 2 + i) % 3;
        break;
    case PROD:
        if (t->k == CX) {
            v.a = r == i % size ? 0 : 1; /* one rank contributes i */
            v.b = r == i % size ? 1 : 0;
        } else {
            v.a = r == i % size ? 2 : 1;
        }
        break;
    case MAX:
    case MIN:
        v.a = (r * 13 + i * 7) % 50 - (t->k == UI ? 0 : 25) - (t->k == FL ? 0.25L : 0);
        break;
    case LAND:
    case LOR:
    case LXOR:
        v.a = (r + i) % 3 == 0 ? 0 : (t->k == LG ? 1 : 1 + r % 2);
        if (o == LAND && i % 4 == 1)
            v.a = 1 + (t->k != LG) * (r % 2); /* all true somewhere */
        break;
    case BAND:
    case BOR:
    case BXOR:
        v.a = (r * 37 + i * 11) & 0x7f;
        if (o == BAND && i % 4 == 1)
            v.a = 0x7f - (r % 2); /* keep some bits set in every input */
        break;
    case MINLOC:
    case MAXLOC:
        v.a = (r * 7 + i * 3) % 5;
        v.b = r;
        break;
    }
    return v;
}

static val combine(int o, const struct ty *t, val x, val y)
{
    val z = x;
    switch (o) {
    case SUM: z.a = x.a + y.a; z.b = x.b + y.b; break;
    case PROD:
        if (t->k == CX) {
            z.a = x.a * y.a - x.b * y.b;
            z.b = x.a * y.b + x.b * y.a;
        } else {
            z.a = x.a * y.a;
        }
        break;
    case MAX: z.a = x.a > y.a ? x.a : y.a; break;
    case MIN: z.a = x.a < y.a ? x.a : y.a; break;
    case LAND: z.a = (x.a != 0) && (y.a != 0); break;
    case LOR: z.a = (x.a != 0) || (y.a != 0); break;
    case LXOR: z.a = (x.a != 0) != (y.a != 0); break;
    case BAND: z.a = (long double)((long long)x.a & (long long)y.a); break;
    case BOR: z.a = (long double)((long long)x.a | (long long)y.a); break;
    case BXOR: z.a = (long double)((long long)x.a ^ (long long)y.a); break;
    case MINLOC:
        if (y.a < x.a || (y.a == x.a && y.b < x.b))
            z = y;
        break;
    case MAXLOC:
        if (y.a > x.a || (y.a == x.a && y.b < x.b))
            z = y;
        break;
    }
    return z;
}

static val expect(const struct ty *t, int o, int lo, int hi, long i)
{
    val acc = input(t, o, lo, i);
    for (int r = lo + 1; r <= hi; r++)
        acc = combine(o, t, acc, input(t, o, r, i));
    if (o == LAND || o == LOR || o == LXOR)
        acc.a = acc.a != 0; /* logical results are 0 or 1 */
    return acc;
}

static void verify(const char *call, const struct ty *t, int o, const void *buf, long n,
                   int lo, int hi, long off)
{
    for (long i = 0; i < n; i++) {
        val g = get(t, buf, i), w = expect(t, o, lo, hi, off + i);
        if (o == LAND || o == LOR || o == LXOR)
            g.a = g.a != 0;
        int ok = g.a == w.a && ((t->k != CX && t->k != PR) || g.b == w.b);
        CHECK(ok, "%s %s on %s [%ld]: got (%Lg, %Lg), want (%Lg, %Lg)", call, opname[o], t->name,
              off + i, g.a, g.b, w.a, w.b);
    }
}

static void run(const struct ty *t, int o, long big)
{
    MPI_Op op = ops[o];
    size_t bytes = (size_t)t->sz * (size_t)(big * size + 1);
    char *s = calloc(1, bytes), *r = calloc(1, bytes);
    for (long i = 0; i < big * size; i++)
        put(t, s, i, input(t, o, rank, i));
    /* small Allreduce: the direct path */
    MPI_CHECK(MPI_Allreduce(s, r, 5, t->dt, op, MPI_COMM_WORLD));
    verify("Allreduce", t, o, r, 5, 0, size - 1, 0);
    /* long Iallreduce (schedule) and Reduce to the last rank (direct) */
    MPI_Request req;
    MPI_CHECK(MPI_Iallreduce(s, r, (int)big, t->dt, op, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    verify("Iallreduce", t, o, r, big, 0, size - 1, 0);
    memset(r, 0, bytes);
    MPI_CHECK(MPI_Reduce(s, r, (int)big, t->dt, op, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        verify("Reduce", t, o, r, big, 0, size - 1, 0);
    MPI_CHECK(MPI_Reduce_scatter_block(s, r, 3, t->dt, op, MPI_COMM_WORLD));
    verify("Reduce_scatter_block", t, o, r, 3, 0, size - 1, 3L * rank);
    MPI_CHECK(MPI_Iscan(s, r, 5, t->dt, op, MPI_COMM_WORLD, &req));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    verify("Iscan", t, o, r, 5, 0, rank, 0);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long big = argc > 1 ? atol(argv[1]) : 9000;
    int pairs = 0;
    for (int k = 0; k < NTYPES; k++)
        for (int o = 0; o < NOPS; o++)
            if (types[k].ops & B(o)) {
                run(&types[k], o, big);
                pairs++;
            }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_reduce_builtin_ops: %d (operation, datatype) pairs on %d ranks OK\n", pairs, size);
    MPI_Finalize();
    return 0;
}
