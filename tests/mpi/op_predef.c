/*
 * op_predef.c — every predefined operation on every predefined datatype
 * with MPI_Reduce_local: allowed combinations (the table of MPI-3.1 §5.9.2)
 * give the reference result, the others fail with MPI_ERR_OP and leave the
 * buffer alone. Also misaligned buffers, MPI_REPLACE/MPI_NO_OP, integer
 * overflow wrapping and the argument checks of MPI_Reduce_local.
 */
#include <complex.h>
#include <stdbool.h>
#include <wchar.h>

#include "mpitest.h"

enum { CI = 1, FI = 2, FP = 4, LG = 8, CX = 16, BY = 32, PR = 64 };

struct ty {
    MPI_Datatype t;
    const char *name;
    int cls;
    bool is_unsigned;
    size_t size;
};

#define T(h, cls, uns, T) {h, #h, cls, uns, sizeof(T)}
static const struct ty types[] = {
    T(MPI_CHAR, CI, false, char), /* MPICH's extension */
    T(MPI_WCHAR, 0, false, wchar_t),
    T(MPI_CHARACTER, 0, false, char),
    T(MPI_PACKED, 0, true, char),
    T(MPI_SIGNED_CHAR, CI, false, signed char),
    T(MPI_UNSIGNED_CHAR, CI, true, unsigned char),
    T(MPI_SHORT, CI, false, short),
    T(MPI_UNSIGNED_SHORT, CI, true, unsigned short),
    T(MPI_INT, CI, false, int),
    T(MPI_UNSIGNED, CI, true, unsigned),
    T(MPI_LONG, CI, false, long),
    T(MPI_UNSIGNED_LONG, CI, true, unsigned long),
    T(MPI_LONG_LONG, CI, false, long long),
    T(MPI_UNSIGNED_LONG_LONG, CI, true, unsigned long long),
    T(MPI_INT8_T, CI, false, int8_t),
    T(MPI_INT16_T, CI, false, int16_t),
    T(MPI_INT32_T, CI, false, int32_t),
    T(MPI_INT64_T, CI, false, int64_t),
    T(MPI_UINT8_T, CI, true, uint8_t),
    T(MPI_UINT16_T, CI, true, uint16_t),
    T(MPI_UINT32_T, CI, true, uint32_t),
    T(MPI_UINT64_T, CI, true, uint64_t),
    /* The multi-language types also take the logical operations (as in
     * MPICH, whose test suite checks it), hence both classes. */
    T(MPI_AINT, CI | FI, false, MPI_Aint),
    T(MPI_OFFSET, CI | FI, false, MPI_Offset),
    T(MPI_COUNT, CI | FI, false, MPI_Count),
    T(MPI_INTEGER, FI, false, int32_t),
    T(MPI_INTEGER1, FI, false, int8_t),
    T(MPI_INTEGER2, FI, false, int16_t),
    T(MPI_INTEGER4, FI, false, int32_t),
    T(MPI_INTEGER8, FI, false, int64_t),
    T(MPI_FLOAT, FP, false, float),
    T(MPI_DOUBLE, FP, false, double),
    T(MPI_LONG_DOUBLE, FP, false, long double),
    T(MPI_REAL, FP, false, float),
    T(MPI_DOUBLE_PRECISION, FP, false, double),
    T(MPI_REAL4, FP, false, float),
    T(MPI_REAL8, FP, false, double),
    T(MPI_C_BOOL, LG, true, _Bool),
    T(MPI_CXX_BOOL, LG, true, _Bool),
    T(MPI_LOGICAL, LG, true, int32_t),
    T(MPI_C_FLOAT_COMPLEX, CX, false, float _Complex),
    T(MPI_C_DOUBLE_COMPLEX, CX, false, double _Complex),
    T(MPI_C_LONG_DOUBLE_COMPLEX, CX, false, long double _Complex),
    T(MPI_CXX_FLOAT_COMPLEX, CX, false, float _Complex),
    T(MPI_CXX_DOUBLE_COMPLEX, CX, false, double _Complex),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, CX, false, long double _Complex),
    T(MPI_COMPLEX, CX, false, float _Complex),
    T(MPI_DOUBLE_COMPLEX, CX, false, double _Complex),
    T(MPI_BYTE, BY, true, unsigned char),
    T(MPI_FLOAT_INT, PR, false, char[8]),
    T(MPI_DOUBLE_INT, PR, false, char[16]),
    T(MPI_LONG_INT, PR, false, char[16]),
    T(MPI_2INT, PR, false, char[8]),
    T(MPI_SHORT_INT, PR, false, char[8]),
    T(MPI_LONG_DOUBLE_INT, PR, false, char[32]),
    T(MPI_2INTEGER, PR, false, char[8]),
    T(MPI_2REAL, PR, false, char[8]),
    T(MPI_2DOUBLE_PRECISION, PR, false, char[16]),
};
#define NTYPES (int)(sizeof types / sizeof types[0])

struct opd {
    MPI_Op op;
    const char *name;
    int allowed;
};
static const struct opd ops[] = {
    {MPI_MAX, "MPI_MAX", CI | FI | FP},       {MPI_MIN, "MPI_MIN", CI | FI | FP},
    {MPI_SUM, "MPI_SUM", CI | FI | FP | CX},  {MPI_PROD, "MPI_PROD", CI | FI | FP | CX},
    {MPI_LAND, "MPI_LAND", CI | LG},          {MPI_LOR, "MPI_LOR", CI | LG},
    {MPI_LXOR, "MPI_LXOR", CI | LG},          {MPI_BAND, "MPI_BAND", CI | FI | BY},
    {MPI_BOR, "MPI_BOR", CI | FI | BY},       {MPI_BXOR, "MPI_BXOR", CI | FI | BY},
    {MPI_MINLOC, "MPI_MINLOC", PR},           {MPI_MAXLOC, "MPI_MAXLOC", PR},
};
#define NOPS (int)(sizeof ops / sizeof ops[0])

/* Element i of a buffer of type t as (re, im); stores convert back. */
#define SCALARS(X)                                                                 \
    X(MPI_SIGNED_CHAR, signed char)                                                \
    X(MPI_UNSIGNED_CHAR, unsigned char)                                            \
    X(MPI_SHORT, short)                                                            \
    X(MPI_UNSIGNED_SHORT, unsigned short)                                          \
    X(MPI_INT, int)                                                                \
    X(MPI_UNSIGNED, unsigned)                                                      \
    X(MPI_LONG, long)                                                              \
    X(MPI_UNSIGNED_LONG, unsigned long)                                            \
    X(MPI_LONG_LONG, long long)                                                    \
    X(MPI_UNSIGNED_LONG_LONG, unsigned long long)                                  \
    X(MPI_INT8_T, int8_t)                                                          \
    X(MPI_INT16_T, int16_t)                                                        \
    X(MPI_INT32_T, int32_t)                                                        \
    X(MPI_INT64_T, int64_t)                                                        \
    X(MPI_UINT8_T, uint8_t)                                                        \
    X(MPI_UINT16_T, uint16_t)                                                      \
    X(MPI_UINT32_T, uint32_t)                                                      \
    X(MPI_UINT64_T, uint64_t)                                                      \
    X(MPI_AINT, MPI_Aint)                                                          \
    X(MPI_OFFSET, MPI_Offset)                                                      \
    X(MPI_COUNT, MPI_Count)                                                        \
    X(MPI_INTEGER, int32_t)                                                        \
    X(MPI_INTEGER1, int8_t)                                                        \
    X(MPI_INTEGER2, int16_t)                                                       \
    X(MPI_INTEGER4, int32_t)                                                       \
    X(MPI_INTEGER8, int64_t)                                                       \
    X(MPI_FLOAT, float)                                                            \
    X(MPI_DOUBLE, double)                                                          \
    X(MPI_LONG_DOUBLE, long double)                                                \
    X(MPI_REAL, float)                                                             \
    X(MPI_DOUBLE_PRECISION, double)                                                \
    X(MPI_REAL4, float)                                                            \
    X(MPI_REAL8, double)                                                           \
    X(MPI_C_BOOL, unsigned char)                                                   \
    X(MPI_CXX_BOOL, unsigned char)                                                 \
    X(MPI_LOGICAL, int32_t)                                                        \
    X(MPI_BYTE, unsigned char)                                                     \
    X(MPI_CHAR, char)                                                              \
    X(MPI_WCHAR, wchar_t)                                                          \
    X(MPI_CHARACTER, char)                                                         \
    X(MPI_PACKED, unsigned char)
#define COMPLEXES(X)                                                               \
    X(MPI_C_FLOAT_COMPLEX, float _Complex)                                         \
    X(MPI_C_DOUBLE_COMPLEX, double _Complex)                                       \
    X(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex)                             \
    X(MPI_CXX_FLOAT_COMPLEX, float _Complex)                                       \
    X(MPI_CXX_DOUBLE_COMPLEX, double _Complex)                                     \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex)                           \
    X(MPI_COMPLEX, float _Complex)                                                 \
    X(MPI_DOUBLE_COMPLEX, double _Complex)

static void store(MPI_Datatype t, void *buf, int i, double re, double im)
{
    switch (t) {
#define X(h, T)                                                                    \
    case h: {                                                                      \
        T v = (T)re;                                                               \
        memcpy((char *)buf + (size_t)i * sizeof(T), &v, sizeof v);                 \
        break;                                                                     \
    }
        SCALARS(X)
#undef X
#define X(h, T)                                                                    \
    case h: {                                                                      \
        T v = (T)(re + im * I);                                                    \
        memcpy((char *)buf + (size_t)i * sizeof(T), &v, sizeof v);                 \
        break;                                                                     \
    }
        COMPLEXES(X)
#undef X
    default:
        CHECK(0, "store: type %#x", (unsigned)t);
    }
}

static void load(MPI_Datatype t, const void *buf, int i, double *re, double *im)
{
    *im = 0;
    switch (t) {
#define X(h, T)                                                                    \
    case h: {                                                                      \
        T v;                                                                       \
        memcpy(&v, (const char *)buf + (size_t)i * sizeof(T), sizeof v);           \
        *re = (double)v;                                                           \
        break;                                                                     \
    }
        SCALARS(X)
#undef X
#define X(h, T)                                                                    \
    case h: {                                                                      \
        T v;                                                                       \
        memcpy(&v, (const char *)buf + (size_t)i * sizeof(T), sizeof v);           \
        *re = (double)creall(v);                                                   \
        *im = (double)cimagl(v);                                                   \
        break;                                                                     \
    }
        COMPLEXES(X)
#undef X
    default:
        CHECK(0, "load: type %#x", (unsigned)t);
    }
}

#define N 21

/* Operand values: small, with equal, smaller and larger pairs, zeros. */
static void operands(const struct ty *ty, int i, double *a, double *ai, double *b, double *bi)
{
    if (ty->cls == BY) {
        *a = (i * 37 + 11) & 255;
        *b = (i * 91 + 200) & 255;
    } else if (ty->cls == LG) {
        *a = i % 3;
        *b = (i / 3) % 3;
    } else {
        double lo = ty->is_unsigned ? 0 : -3;
        *a = lo + (i * 3) % 7;
        *b = lo + (i * 5 + 2) % 7;
    }
    *ai = ty->cls == CX ? (i % 3) - 1 : 0;
    *bi = ty->cls == CX ? ((i + 1) % 4) - 2 : 0;
}

static void reference(MPI_Op op, double a, double ai, double b, double bi, double *r, double *ri)
{
    long long x = (long long)a, y = (long long)b;
    *ri = 0;
    if (op == MPI_MAX) *r = a > b ? a : b;
    else if (op == MPI_MIN) *r = a < b ? a : b;
    else if (op == MPI_SUM) { *r = a + b; *ri = ai + bi; }
    else if (op == MPI_PROD) { *r = a * b - ai * bi; *ri = a * bi + ai * b; }
    else if (op == MPI_LAND) *r = (a != 0) && (b != 0);
    else if (op == MPI_LOR) *r = (a != 0) || (b != 0);
    else if (op == MPI_LXOR) *r = (a != 0) != (b != 0);
    else if (op == MPI_BAND) *r = (double)(x & y);
    else if (op == MPI_BOR) *r = (double)(x | y);
    else if (op == MPI_BXOR) *r = (double)(x ^ y);
    else CHECK(0, "reference: op %#x", (unsigned)op);
}

/* Buffers with room for N elements of the largest type, plus one byte so
 * that a misaligned copy fits. */
static _Alignas(64) unsigned char inb[N * 32 + 64], iob[N * 32 + 64], refb[N * 32 + 64];

static void one(const struct ty *ty, const struct opd *od, size_t shift)
{
    unsigned char *in = inb + shift, *io = iob + shift;
    memset(inb, 0, sizeof inb);
    memset(iob, 0, sizeof iob);
    memset(refb, 0, sizeof refb);
    bool allowed = (ty->cls & od->allowed) != 0;
    if (ty->cls == PR) {
        /* Pairs get their values checked by op_user.c; here only refusals. */
        if (allowed)
            return;
        mt_fill(in, N * ty->size, 1);
        mt_fill(io, N * ty->size, 2);
        memcpy(refb, io, N * ty->size);
    } else {
        for (int i = 0; i < N; i++) {
            double a, ai, b, bi;
            operands(ty, i, &a, &ai, &b, &bi);
            store(ty->t, in, i, a, ai);
            store(ty->t, io, i, b, bi);
        }
        memcpy(refb, io, N * ty->size);
    }
    int rc = MPI_Reduce_local(in, io, N, ty->t, od->op);
    if (!allowed) {
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OP,
              "%s on %s returned %d (class %d), want MPI_ERR_OP", od->name, ty->name, rc, cls);
        CHECK(memcmp(refb, io, N * ty->size) == 0, "%s on %s changed inoutbuf after an error",
              od->name, ty->name);
        return;
    }
    CHECK(rc == MPI_SUCCESS, "%s on %s returned %d", od->name, ty->name, rc);
    for (int i = 0; i < N; i++) {
        double a, ai, b, bi, r, ri, got, goti;
        operands(ty, i, &a, &ai, &b, &bi);
        reference(od->op, a, ai, b, bi, &r, &ri);
        /* The reference is stored and loaded back in the type (wrapping). */
        store(ty->t, refb, i, r, ri);
        load(ty->t, refb, i, &r, &ri);
        load(ty->t, io, i, &got, &goti);
        CHECK(got == r && goti == ri,
              "%s on %s (shift %zu) element %d: %g %s %g gave %g+%gi, want %g+%gi", od->name,
              ty->name, shift, i, a, od->name, b, got, goti, r, ri);
        double ca, cai;
        load(ty->t, in, i, &ca, &cai);
        CHECK(ca == a, "%s on %s changed inbuf", od->name, ty->name);
    }
}

/* MPI_REPLACE copies in to inout, MPI_NO_OP leaves inout: any type. */
static void replace_noop(const struct ty *ty)
{
    if (ty->cls == PR)
        return;
    for (int i = 0; i < N; i++) {
        store(ty->t, inb, i, (double)(i % 5), 0);
        store(ty->t, iob, i, (double)(i % 3 + 1), 0);
    }
    MPI_CHECK(MPI_Reduce_local(inb, iob, N, ty->t, MPI_NO_OP));
    for (int i = 0; i < N; i++) {
        double v, vi;
        load(ty->t, iob, i, &v, &vi);
        CHECK(v == (double)(i % 3 + 1), "MPI_NO_OP on %s changed element %d", ty->name, i);
    }
    MPI_CHECK(MPI_Reduce_local(inb, iob, N, ty->t, MPI_REPLACE));
    for (int i = 0; i < N; i++) {
        double v, vi;
        load(ty->t, iob, i, &v, &vi);
        CHECK(v == (double)(i % 5), "MPI_REPLACE on %s element %d = %g", ty->name, i, v);
    }
}

static void overflow(void)
{
    int a[3] = {2147483647, -2147483647 - 1, 65536};
    int b[3] = {1, -1, 65536};
    MPI_CHECK(MPI_Reduce_local(a, b, 2, MPI_INT, MPI_SUM));
    CHECK(b[0] == -2147483647 - 1 && b[1] == 2147483647, "int sums wrap: %d %d", b[0], b[1]);
    b[2] = 65536;
    MPI_CHECK(MPI_Reduce_local(a + 2, b + 2, 1, MPI_INT, MPI_PROD));
    CHECK(b[2] == 0, "int product wraps: %d", b[2]);
    unsigned short us[1] = {65535}, ur[1] = {65535};
    MPI_CHECK(MPI_Reduce_local(us, ur, 1, MPI_UNSIGNED_SHORT, MPI_PROD));
    CHECK(ur[0] == 1, "unsigned short product: %u", ur[0]);
    int64_t l[1] = {INT64_MAX}, lr[1] = {INT64_MAX};
    MPI_CHECK(MPI_Reduce_local(l, lr, 1, MPI_INT64_T, MPI_SUM));
    CHECK(lr[0] == -2, "int64 sum wraps: %lld", (long long)lr[0]);
}

static void check_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

static void arg_errors(void)
{
    int a[4] = {1, 2, 3, 4}, b[4] = {0};
    check_class(MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT, "count -1");
    check_class(MPI_Reduce_local(a, b, 4, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE,
                "MPI_DATATYPE_NULL");
    check_class(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_OP_NULL), MPI_ERR_OP, "MPI_OP_NULL");
    check_class(MPI_Reduce_local(a, b, 4, MPI_INT, MPI_COMM_WORLD), MPI_ERR_OP,
                "a communicator as op");
    check_class(MPI_Reduce_local(a, b, 4, MPI_INT, (MPI_Op)(MPI_NO_OP + 1000)), MPI_ERR_OP,
                "unknown op");
    check_class(MPI_Reduce_local(MPI_IN_PLACE, b, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER,
                "MPI_IN_PLACE");
    check_class(MPI_Reduce_local(NULL, b, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER, "NULL inbuf");
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    check_class(MPI_Reduce_local(a, b, 1, vec, MPI_SUM), MPI_ERR_TYPE, "uncommitted type");
    MPI_CHECK(MPI_Type_free(&vec));
    /* count 0 with NULL buffers is fine */
    MPI_CHECK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM));
    int commute = -1;
    MPI_CHECK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1, "MPI_SUM commutative: %d", commute);
    MPI_CHECK(MPI_Op_commutative(MPI_MAXLOC, &commute));
    CHECK(commute == 1, "MPI_MAXLOC commutative: %d", commute);
    check_class(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP, "commutative(NULL)");
    MPI_Op sum = MPI_SUM;
    check_class(MPI_Op_free(&sum), MPI_ERR_OP, "freeing MPI_SUM");
    CHECK(sum == MPI_SUM, "failed MPI_Op_free changed the handle");
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int tested = 0, refused = 0;
    for (int t = 0; t < NTYPES; t++) {
        for (int o = 0; o < NOPS; o++) {
            one(&types[t], &ops[o], 0);
            if (types[t].cls & ops[o].allowed) {
                tested++;
                one(&types[t], &ops[o], 1); /* a misaligned buffer */
                one(&types[t], &ops[o], 3);
            } else {
                refused++;
            }
        }
        replace_noop(&types[t]);
    }
    CHECK(tested == 329 && refused == 367, "tested %d refused %d", tested, refused);
    overflow();
    arg_errors();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
