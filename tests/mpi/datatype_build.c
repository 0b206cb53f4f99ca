/*
 * datatype_build.c — datatype constructors and queries on one process.
 *
 * Every constructor (nested, resized, with gaps, negative displacements,
 * zero counts), subarray in 2 and 3 dimensions in both orders, darray:
 * size, lb/extent and true bounds against hand-computed values; envelope
 * and contents; names; and MPI_Pack/MPI_Unpack of several instances
 * against the reference type map of datatype_ref.h.
 */
#include "datatype_ref.h"

struct expect {
    MPI_Count size;
    MPI_Aint lb, extent, true_lb, true_extent;
};

static void check_bounds(const char *what, MPI_Datatype t, struct expect e)
{
    int size;
    MPI_Count size_x, lbx, extx;
    MPI_Aint lb, ext, tlb, text;
    MPI_CHECK(MPI_Type_size(t, &size));
    MPI_CHECK(MPI_Type_size_x(t, &size_x));
    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
    MPI_CHECK(MPI_Type_get_true_extent(t, &tlb, &text));
    CHECK(size == e.size && size_x == e.size, "%s: size %d/%lld, expected %lld", what, size,
          size_x, e.size);
    CHECK(lb == e.lb && ext == e.extent, "%s: lb %ld extent %ld, expected %ld %ld", what,
          (long)lb, (long)ext, (long)e.lb, (long)e.extent);
    CHECK(tlb == e.true_lb && text == e.true_extent,
          "%s: true lb %ld extent %ld, expected %ld %ld", what, (long)tlb, (long)text,
          (long)e.true_lb, (long)e.true_extent);
    MPI_CHECK(MPI_Type_get_extent_x(t, &lbx, &extx));
    CHECK(lbx == e.lb && extx == e.extent, "%s: extent_x", what);
    MPI_CHECK(MPI_Type_get_true_extent_x(t, &lbx, &extx));
    CHECK(lbx == e.true_lb && extx == e.true_extent, "%s: true_extent_x", what);
}

/* Pack `count` instances and compare with the reference map; unpack into a
 * clean buffer and check that exactly the mapped bytes came back. Also
 * packs one instance at a time (positions must chain). */
static void check_pack(const char *what, MPI_Datatype t, int count)
{
    struct ref_map m = {0};
    ref_map_of(t, 0, &m);
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
    int tsize;
    MPI_CHECK(MPI_Type_size(t, &tsize));
    long msize = 0;
    MPI_Aint lo = 0, hi = 0;
    for (size_t i = 0; i < m.n; i++)
        msize += m.e[i].len;
    CHECK(msize == tsize, "%s: reference size %ld, MPI_Type_size %d", what, msize, tsize);
    for (int c = 0; c < count; c++)
        for (size_t i = 0; i < m.n; i++) {
            MPI_Aint a = c * ext + m.e[i].disp;
            if (a < lo)
                lo = a;
            if (a + m.e[i].len > hi)
                hi = a + m.e[i].len;
        }
    size_t span = (size_t)(hi - lo) + 16;
    unsigned char *src = malloc(span), *dst = calloc(1, span), *cover = calloc(1, span);
    size_t total = (size_t)tsize * (size_t)count;
    unsigned char *packed = malloc(total + 1), *expect = malloc(total + 1),
                  *packed2 = malloc(total + 1);
    CHECK(src && dst && cover && packed && expect && packed2, "out of memory");
    mt_fill(src, span, 77);
    unsigned char *origin = src - lo, *dorigin = dst - lo; /* buffer address of offset 0 */
    size_t k = 0;
    for (int c = 0; c < count; c++)
        for (size_t i = 0; i < m.n; i++) {
            MPI_Aint a = c * ext + m.e[i].disp;
            memcpy(expect + k, origin + a, (size_t)m.e[i].len);
            memset(cover + (a - lo), 1, (size_t)m.e[i].len);
            k += (size_t)m.e[i].len;
        }
    int psize, pos = 0;
    MPI_CHECK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize));
    CHECK((size_t)psize == total, "%s: Pack_size %d, expected %zu", what, psize, total);
    MPI_CHECK(MPI_Pack(origin, count, t, packed, (int)total, &pos, MPI_COMM_WORLD));
    CHECK((size_t)pos == total, "%s: position %d after packing %zu bytes", what, pos, total);
    CHECK(memcmp(packed, expect, total) == 0, "%s: packed bytes differ from the type map", what);
    pos = 0;
    for (int c = 0; c < count; c++)
        MPI_CHECK(MPI_Pack(origin + c * ext, 1, t, packed2, (int)total, &pos, MPI_COMM_WORLD));
    CHECK(memcmp(packed2, expect, total) == 0, "%s: packing one at a time differs", what);
    pos = 0;
    MPI_CHECK(MPI_Unpack(packed, (int)total, &pos, dorigin, count, t, MPI_COMM_WORLD));
    CHECK((size_t)pos == total, "%s: unpack position %d", what, pos);
    for (size_t i = 0; i < span; i++)
        CHECK(dst[i] == (cover[i] ? src[i] : 0), "%s: byte %ld after unpack is %d, expected %d",
              what, (long)i + (long)lo, dst[i], cover[i] ? src[i] : 0);
    free(src);
    free(dst);
    free(cover);
    free(packed);
    free(packed2);
    free(expect);
    free(m.e);
}

static void check_envelope(const char *what, MPI_Datatype t, int comb, int ni, int na, int nd)
{
    int a, b, c, d;
    MPI_CHECK(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    CHECK(d == comb && a == ni && b == na && c == nd,
          "%s: envelope (%d,%d,%d, combiner %d), expected (%d,%d,%d, %d)", what, a, b, c, d, ni,
          na, nd, comb);
}

static MPI_Datatype commit(MPI_Datatype t)
{
    MPI_CHECK(MPI_Type_commit(&t));
    return t;
}

static void test_predefined(void)
{
    struct { MPI_Datatype t; struct expect e; } p[] = {
        {MPI_INT, {4, 0, 4, 0, 4}},
        {MPI_DOUBLE, {8, 0, 8, 0, 8}},
        {MPI_CHAR, {1, 0, 1, 0, 1}},
        {MPI_FLOAT_INT, {8, 0, 8, 0, 8}},
        {MPI_DOUBLE_INT, {12, 0, 16, 0, 12}},
        {MPI_LONG_INT, {12, 0, 16, 0, 12}},
        {MPI_2INT, {8, 0, 8, 0, 8}},
        {MPI_SHORT_INT, {6, 0, 8, 0, 8}},
        {MPI_LONG_DOUBLE_INT, {20, 0, 32, 0, 20}},
        {MPI_C_DOUBLE_COMPLEX, {16, 0, 16, 0, 16}},
        {MPI_INTEGER, {4, 0, 4, 0, 4}},
        {MPI_DOUBLE_PRECISION, {8, 0, 8, 0, 8}},
        {MPI_2DOUBLE_PRECISION, {16, 0, 16, 0, 16}},
        {MPI_LOGICAL, {4, 0, 4, 0, 4}},
        {MPI_PACKED, {1, 0, 1, 0, 1}},
        {MPI_AINT, {sizeof(MPI_Aint), 0, sizeof(MPI_Aint), 0, sizeof(MPI_Aint)}},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_CHECK(MPI_Type_get_name(p[i].t, name, &len));
        check_bounds(name, p[i].t, p[i].e);
        check_envelope(name, p[i].t, MPI_COMBINER_NAMED, 0, 0, 0);
    }
    /* every predefined type has a name "MPI_..." and a positive size */
    for (int i = 1; i <= 58; i++) {
        MPI_Datatype t = PROUST_MPI_TYPE(i);
        char name[MPI_MAX_OBJECT_NAME];
        int len, sz;
        MPI_CHECK(MPI_Type_get_name(t, name, &len));
        MPI_CHECK(MPI_Type_size(t, &sz));
        CHECK(len > 4 && strncmp(name, "MPI_", 4) == 0 && (int)strlen(name) == len,
              "type %d has name '%s' (%d)", i, name, len);
        CHECK(sz > 0, "%s has size %d", name, sz);
    }
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_CHECK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0 && len == 14, "name %s", name);
    /* one handle for the synonyms, named as MPICH's typename test expects */
    MPI_CHECK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0, "name %s", name);
    check_pack("MPI_SHORT_INT", MPI_SHORT_INT, 5);
    check_pack("MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, 3);
    check_pack("MPI_DOUBLE", MPI_DOUBLE, 7);
}

/* MPI_Type_match_size: a predefined type of the class and size asked. */
static void test_match_size(void)
{
    static const struct {
        int cls, size;
    } ok[] = {
        {MPI_TYPECLASS_REAL, sizeof(float)},        {MPI_TYPECLASS_REAL, sizeof(double)},
        {MPI_TYPECLASS_REAL, sizeof(long double)},  {MPI_TYPECLASS_INTEGER, 1},
        {MPI_TYPECLASS_INTEGER, sizeof(short)},     {MPI_TYPECLASS_INTEGER, sizeof(int)},
        {MPI_TYPECLASS_INTEGER, sizeof(long long)}, {MPI_TYPECLASS_COMPLEX, 2 * sizeof(float)},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(double)},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(long double)},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int sz = -1;
        MPI_CHECK(MPI_Type_match_size(ok[i].cls, ok[i].size, &t));
        MPI_CHECK(MPI_Type_size(t, &sz));
        CHECK(sz == ok[i].size, "class %d size %d: got a type of %d bytes", ok[i].cls,
              ok[i].size, sz);
    }
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK(t == MPI_INTEGER4, "4-byte integer: the sized Fortran type first");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 0, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_match_size(42, 4, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* MPI_Type_create_f90_*: the kind SELECTED_*_KIND would pick (here REAL 4
 * and 8, INTEGER 1 to 8), one permanent type per (p, r) with the F90
 * envelope, usable in communication and reductions. */
static void check_f90(const char *what, MPI_Datatype t, int size, int comb, int p, int r)
{
    int sz = -1;
    MPI_CHECK(MPI_Type_size(t, &sz));
    CHECK(sz == size, "%s: %d bytes, expected %d", what, sz, size);
    int ni = comb == MPI_COMBINER_F90_INTEGER ? 1 : 2, ints[2] = {-1, -1};
    check_envelope(what, t, comb, ni, 0, 0);
    MPI_CHECK(MPI_Type_get_contents(t, ni, 0, 0, ints, NULL, NULL));
    CHECK(ni == 1 ? ints[0] == r : (ints[0] == p && ints[1] == r),
          "%s: contents (%d, %d), expected (%d, %d)", what, ints[0], ints[1], p, r);
}

static void test_f90(void)
{
    MPI_Datatype t, t2;
    MPI_CHECK(MPI_Type_create_f90_real(6, 37, &t));
    check_f90("real(6,37)", t, 4, MPI_COMBINER_F90_REAL, 6, 37);
    MPI_CHECK(MPI_Type_create_f90_real(6, 37, &t2));
    CHECK(t2 == t, "the same (p, r) twice: %#x then %#x", (unsigned)t, (unsigned)t2);
    MPI_CHECK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &t));
    check_f90("real(7,undefined)", t, 8, MPI_COMBINER_F90_REAL, 7, MPI_UNDEFINED);
    MPI_CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t2));
    CHECK(t2 != t, "another (p, r), another type");
    check_f90("real(undefined,300)", t2, 8, MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 300);
    MPI_CHECK(MPI_Type_create_f90_complex(15, 307, &t));
    check_f90("complex(15,307)", t, 16, MPI_COMBINER_F90_COMPLEX, 15, 307);
    MPI_CHECK(MPI_Type_create_f90_complex(3, MPI_UNDEFINED, &t));
    check_f90("complex(3,undefined)", t, 8, MPI_COMBINER_F90_COMPLEX, 3, MPI_UNDEFINED);
    static const int ranges[][2] = {{0, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 4}, {9, 4}, {10, 8},
                                    {18, 8}};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        MPI_CHECK(MPI_Type_create_f90_integer(ranges[i][0], &t));
        check_f90("integer(r)", t, ranges[i][1], MPI_COMBINER_F90_INTEGER, 0, ranges[i][0]);
    }

    /* it carries data and reduces as its kind */
    double in[3] = {1.5, -2.25, 1e300}, out[3] = {0, 0, 0};
    MPI_CHECK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &t));
    MPI_CHECK(MPI_Allreduce(in, out, 3, t, MPI_MAX, MPI_COMM_WORLD));
    CHECK(out[0] == 1.5 && out[1] == -2.25 && out[2] == 1e300, "allreduce MAX: %g %g %g",
          out[0], out[1], out[2]);
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    long long lin[2] = {-5, 1LL << 40}, lout[2] = {0, 0};
    MPI_CHECK(MPI_Type_create_f90_integer(12, &t2));
    MPI_CHECK(MPI_Sendrecv(lin, 2, t2, rank, 3, lout, 2, t2, rank, 3, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE));
    CHECK(lout[0] == -5 && lout[1] == 1LL << 40, "integer(12) sent to self: %lld %lld", lout[0],
          lout[1]);
    MPI_Datatype d;
    MPI_CHECK(MPI_Type_dup(t, &d));
    MPI_CHECK(MPI_Type_free(&d)); /* a dup is an ordinary type */

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Type_free(&t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_create_f90_real(16, 0, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_real(1, 308, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_complex(-1, 10, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_integer(19, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Type_create_f90_integer(4, NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* MPI_Type_get_value_index: the MINLOC/MAXLOC pair types, NULL otherwise. */
static void test_value_index(void)
{
    static const struct {
        MPI_Datatype value, index, pair;
    } cases[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INT, MPI_LONG, MPI_DATATYPE_NULL},
        {MPI_CHAR, MPI_INT, MPI_DATATYPE_NULL},
        {MPI_DOUBLE, MPI_DOUBLE, MPI_DATATYPE_NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = MPI_BYTE;
        MPI_CHECK(MPI_Type_get_value_index(cases[i].value, cases[i].index, &t));
        CHECK(t == cases[i].pair, "case %zu: pair %#x, expected %#x", i, (unsigned)t,
              (unsigned)cases[i].pair);
    }
    /* the pair reduces with MINLOC */
    struct {
        double v;
        int i;
    } in = {2.5, 0}, out = {0, -1};
    MPI_Datatype pair;
    int rank;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    in.i = rank;
    MPI_CHECK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &pair));
    MPI_CHECK(MPI_Allreduce(&in, &out, 1, pair, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out.v == 2.5 && out.i == 0, "MINLOC with the pair: %g at %d", out.v, out.i);
    MPI_Datatype t;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_get_value_index(MPI_DOUBLE, 12345, &t), MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, NULL), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

struct named {
    const char *what;
    MPI_Datatype t;
    struct expect e;
};

static void test_constructors(void)
{
    MPI_Datatype t, r, s;
    struct named n[32];
    int k = 0;

    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
    n[k++] = (struct named){"contiguous(3,int)", commit(t), {12, 0, 12, 0, 12}};
    MPI_CHECK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    n[k++] = (struct named){"vector(3,2,4,int)", commit(t), {24, 0, 40, 0, 40}};
    MPI_CHECK(MPI_Type_vector(3, 1, -2, MPI_DOUBLE, &t));
    n[k++] = (struct named){"vector(3,1,-2,double)", commit(t), {24, -32, 40, -32, 40}};
    MPI_CHECK(MPI_Type_create_hvector(2, 3, 20, MPI_CHAR, &t));
    n[k++] = (struct named){"hvector(2,3,20,char)", commit(t), {6, 0, 23, 0, 23}};
    {
        int bl[3] = {2, 0, 1}, d[3] = {4, 0, -1};
        MPI_CHECK(MPI_Type_indexed(3, bl, d, MPI_INT, &t));
        n[k++] = (struct named){"indexed", commit(t), {12, -4, 28, -4, 28}};
    }
    {
        int bl[2] = {1, 2};
        MPI_Aint d[2] = {8, -8};
        MPI_CHECK(MPI_Type_create_hindexed(2, bl, d, MPI_SHORT, &t));
        n[k++] = (struct named){"hindexed", commit(t), {6, -8, 18, -8, 18}};
    }
    {
        int d[3] = {0, 5, 2};
        MPI_CHECK(MPI_Type_create_indexed_block(3, 2, d, MPI_FLOAT, &t));
        n[k++] = (struct named){"indexed_block", commit(t), {24, 0, 28, 0, 28}};
    }
    {
        MPI_Aint d[2] = {0, 100};
        MPI_CHECK(MPI_Type_create_hindexed_block(2, 1, d, MPI_DOUBLE, &t));
        n[k++] = (struct named){"hindexed_block", commit(t), {16, 0, 108, 0, 108}};
    }
    {
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 4};
        MPI_Datatype ty[2] = {MPI_INT, MPI_CHAR};
        MPI_CHECK(MPI_Type_create_struct(2, bl, d, ty, &t));
        n[k++] = (struct named){"struct{int,char} (padded)", commit(t), {5, 0, 8, 0, 5}};
    }
    {
        int bl[3] = {1, 1, 2};
        MPI_Aint d[3] = {0, 8, 16};
        MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
        MPI_CHECK(MPI_Type_create_struct(3, bl, d, ty, &t));
        n[k++] = (struct named){"struct{char,double,2 short} gaps", commit(t), {13, 0, 24, 0, 20}};
    }
    MPI_CHECK(MPI_Type_create_resized(MPI_INT, -4, 16, &r));
    n[k++] = (struct named){"resized(int,-4,16)", commit(r), {4, -4, 16, 0, 4}};
    MPI_CHECK(MPI_Type_contiguous(2, r, &t));
    n[k++] = (struct named){"contiguous(2,resized)", commit(t), {8, -4, 32, 0, 20}};
    {
        /* explicit ub marker: no alignment padding, ub from the marker only */
        MPI_Datatype rd;
        MPI_CHECK(MPI_Type_create_resized(MPI_DOUBLE, 0, 12, &rd));
        int bl[1] = {1};
        MPI_Aint d[1] = {0};
        MPI_CHECK(MPI_Type_create_struct(1, bl, d, &rd, &t));
        n[k++] = (struct named){"struct{resized(double,0,12)}", commit(t), {8, 0, 12, 0, 8}};
        MPI_CHECK(MPI_Type_free(&rd));
        MPI_Datatype ri;
        MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 16, &ri));
        int bl2[2] = {1, 1};
        MPI_Aint d2[2] = {0, 20};
        MPI_Datatype ty[2] = {ri, MPI_INT};
        MPI_CHECK(MPI_Type_create_struct(2, bl2, d2, ty, &t));
        n[k++] = (struct named){"struct{resized(int,0,16),int@20}", commit(t), {8, 0, 16, 0, 24}};
        MPI_CHECK(MPI_Type_free(&ri));
    }
    /* zero counts and zero block lengths: empty type maps */
    MPI_CHECK(MPI_Type_contiguous(0, MPI_INT, &t));
    n[k++] = (struct named){"contiguous(0)", commit(t), {0, 0, 0, 0, 0}};
    MPI_CHECK(MPI_Type_vector(2, 0, 3, MPI_INT, &t));
    n[k++] = (struct named){"vector blocklength 0", commit(t), {0, 0, 0, 0, 0}};
    {
        int bl[2] = {0, 0};
        MPI_Aint d[2] = {8, 16};
        MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
        MPI_CHECK(MPI_Type_create_struct(2, bl, d, ty, &t));
        n[k++] = (struct named){"struct all zero", commit(t), {0, 0, 0, 0, 0}};
        int bl2[2] = {0, 1};
        MPI_CHECK(MPI_Type_create_struct(2, bl2, d, ty, &t));
        n[k++] = (struct named){"struct one zero", commit(t), {8, 16, 8, 16, 8}};
    }
    /* subarrays: 4x5 ints, 2x3 block at (1,2) */
    {
        int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
        MPI_CHECK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
        n[k++] = (struct named){"subarray C 2D", commit(t), {24, 0, 80, 28, 32}};
        MPI_CHECK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
        n[k++] = (struct named){"subarray Fortran 2D", commit(t), {24, 0, 80, 36, 40}};
    }
    {
        int sz[3] = {3, 4, 5}, sub[3] = {2, 2, 3}, st[3] = {1, 1, 0};
        /* C: element (i,j,k) at (i*4+j)*5+k; first (1,1,0)=25, last (2,2,2)=52 */
        MPI_CHECK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t));
        n[k++] = (struct named){"subarray C 3D", commit(t), {96, 0, 480, 200, 224}};
        /* Fortran: (i,j,k) at i+3*(j+4*k); first (1,1,0)=4, last (2,2,2)=2+3*(2+8)=32 */
        MPI_CHECK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t));
        n[k++] = (struct named){"subarray Fortran 3D", commit(t), {96, 0, 480, 32, 232}};
    }
    {
        int sz[2] = {4, 5}, sub[2] = {0, 3}, st[2] = {4, 2};
        MPI_CHECK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t));
        n[k++] = (struct named){"empty subarray", commit(t), {0, 0, 80, 0, 0}};
    }
    /* darray: 6x7 doubles over a 2x3 grid, block x cyclic(2); rank 4 = (1,1):
     * rows 3..5, columns {2,3} -> 6 elements, first (3,2)=23, last (5,3)=38 */
    {
        int gs[2] = {6, 7}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
        MPI_CHECK(MPI_Type_create_darray(6, 4, 2, gs, di, da, ps, MPI_ORDER_C, MPI_DOUBLE, &t));
        n[k++] = (struct named){"darray C block x cyclic(2)", commit(t),
                                {48, 0, 336, 184, 128}};
    }
    for (int i = 0; i < k; i++) {
        check_bounds(n[i].what, n[i].t, n[i].e);
        check_pack(n[i].what, n[i].t, 3);
    }
    /* nested: vector of struct with gaps of resized, and subarrays of that */
    MPI_CHECK(MPI_Type_vector(2, 2, 3, n[9].t, &s));
    MPI_CHECK(MPI_Type_commit(&s));
    check_pack("vector of struct", s, 2);
    {
        int bl[3] = {2, 1, 3};
        MPI_Aint d[3] = {-400, 0, 200};
        MPI_Datatype ty[3] = {s, n[0].t, n[5].t};
        MPI_Datatype u;
        MPI_CHECK(MPI_Type_create_struct(3, bl, d, ty, &u));
        MPI_CHECK(MPI_Type_commit(&u));
        check_pack("struct of vector, contiguous, hindexed", u, 3);
        check_bounds("struct of vector, contiguous, hindexed", u,
                     (struct expect){2 * 2 * 2 * 13 + 12 + 18, -400, 648, -400, 646});
        int sz[3] = {3, 2, 4}, sub[3] = {2, 1, 2}, st[3] = {0, 1, 1};
        MPI_Datatype v;
        MPI_CHECK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_FORTRAN, u, &v));
        MPI_CHECK(MPI_Type_commit(&v));
        check_pack("subarray of struct", v, 2);
        MPI_CHECK(MPI_Type_free(&v));
        MPI_CHECK(MPI_Type_free(&u));
    }
    MPI_CHECK(MPI_Type_free(&s));
    /* every darray distribution, both orders, every rank of the grid */
    {
        int gs[3] = {5, 7, 3}, ps[3] = {2, 3, 1};
        /* variant 3 leaves some processes without elements in a dimension */
        int dis[4][3] = {{MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE},
                         {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE},
                         {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
                         {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE}};
        int das[4][3] = {{MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, 0},
                         {2, 3, MPI_DISTRIBUTE_DFLT_DARG},
                         {3, 2, MPI_DISTRIBUTE_DFLT_DARG},
                         {5, 4, 0}};
        for (int v = 0; v < 4; v++)
            for (int o = 0; o < 2; o++) {
                long total = 0;
                for (int rank = 0; rank < 6; rank++) {
                    char what[64];
                    snprintf(what, sizeof what, "darray variant %d order %d rank %d", v, o, rank);
                    MPI_CHECK(MPI_Type_create_darray(6, rank, 3, gs, dis[v], das[v], ps,
                                                     o ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
                                                     MPI_INT, &t));
                    MPI_CHECK(MPI_Type_commit(&t));
                    MPI_Aint lb, ext;
                    int sz;
                    MPI_CHECK(MPI_Type_get_extent(t, &lb, &ext));
                    MPI_CHECK(MPI_Type_size(t, &sz));
                    CHECK(lb == 0 && ext == 5 * 7 * 3 * 4, "%s: lb %ld extent %ld", what,
                          (long)lb, (long)ext);
                    total += sz;
                    check_pack(what, t, 2);
                    MPI_CHECK(MPI_Type_free(&t));
                }
                /* the pieces of all ranks cover the array exactly once */
                CHECK(total == 5 * 7 * 3 * 4, "darray variant %d: sizes add up to %ld", v, total);
            }
    }
    for (int i = 0; i < k; i++) /* r among them */
        MPI_CHECK(MPI_Type_free(&n[i].t));
}

static void test_contents(void)
{
    MPI_Datatype v, st, sub, res, dup, out[4];
    int I[16];
    MPI_Aint A[4];
    MPI_CHECK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
    check_envelope("vector", v, MPI_COMBINER_VECTOR, 3, 0, 1);
    MPI_CHECK(MPI_Type_get_contents(v, 16, 4, 4, I, A, out));
    CHECK(I[0] == 3 && I[1] == 2 && I[2] == 5 && out[0] == MPI_INT, "vector contents");

    int bl[2] = {2, 1};
    MPI_Aint d[2] = {0, 100};
    MPI_Datatype ty[2] = {v, MPI_DOUBLE};
    MPI_CHECK(MPI_Type_create_struct(2, bl, d, ty, &st));
    check_envelope("struct", st, MPI_COMBINER_STRUCT, 3, 2, 2);
    MPI_CHECK(MPI_Type_get_contents(st, 16, 4, 4, I, A, out));
    CHECK(I[0] == 2 && I[1] == 2 && I[2] == 1 && A[0] == 0 && A[1] == 100, "struct contents");
    CHECK(out[1] == MPI_DOUBLE, "struct contents: predefined type returned as itself");
    /* the returned vector is a new type with the same envelope, freed by us */
    check_envelope("returned vector", out[0], MPI_COMBINER_VECTOR, 3, 0, 1);
    MPI_CHECK(MPI_Type_free(&out[0]));
    /* the inner type outlives the user's handle */
    MPI_CHECK(MPI_Type_free(&v));
    MPI_CHECK(MPI_Type_get_contents(st, 16, 4, 4, I, A, out));
    MPI_CHECK(MPI_Type_get_contents(out[0], 16, 4, 4, I, A, out + 2));
    CHECK(I[0] == 3 && I[1] == 2 && I[2] == 5 && out[2] == MPI_INT, "inner vector after free");
    MPI_CHECK(MPI_Type_free(&out[0]));

    int sz[2] = {4, 6}, ss[2] = {2, 3}, sst[2] = {1, 2};
    MPI_CHECK(MPI_Type_create_subarray(2, sz, ss, sst, MPI_ORDER_FORTRAN, MPI_FLOAT, &sub));
    check_envelope("subarray", sub, MPI_COMBINER_SUBARRAY, 8, 0, 1);
    MPI_CHECK(MPI_Type_get_contents(sub, 16, 4, 4, I, A, out));
    CHECK(I[0] == 2 && I[1] == 4 && I[2] == 6 && I[3] == 2 && I[4] == 3 && I[5] == 1 &&
              I[6] == 2 && I[7] == MPI_ORDER_FORTRAN && out[0] == MPI_FLOAT,
          "subarray contents");

    MPI_CHECK(MPI_Type_create_resized(st, -8, 200, &res));
    check_envelope("resized", res, MPI_COMBINER_RESIZED, 0, 2, 1);
    MPI_CHECK(MPI_Type_get_contents(res, 0, 4, 4, I, A, out));
    CHECK(A[0] == -8 && A[1] == 200, "resized contents");
    check_envelope("resized inner", out[0], MPI_COMBINER_STRUCT, 3, 2, 2);
    MPI_CHECK(MPI_Type_free(&out[0]));

    MPI_CHECK(MPI_Type_commit(&res));
    MPI_CHECK(MPI_Type_set_name(res, "my resized"));
    MPI_CHECK(MPI_Type_dup(res, &dup));
    check_envelope("dup", dup, MPI_COMBINER_DUP, 0, 0, 1);
    check_bounds("dup", dup, (struct expect){56, -8, 200, 0, 108});
    MPI_CHECK(MPI_Type_get_contents(dup, 0, 0, 1, I, A, out));
    check_envelope("dup inner", out[0], MPI_COMBINER_RESIZED, 0, 2, 1);
    MPI_CHECK(MPI_Type_free(&out[0]));
    check_pack("dup of resized struct", dup, 2); /* committed like its original */

    int gs[1] = {10}, di[1] = {MPI_DISTRIBUTE_CYCLIC}, da[1] = {3}, ps[1] = {2};
    MPI_Datatype dar;
    MPI_CHECK(MPI_Type_create_darray(2, 1, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &dar));
    check_envelope("darray", dar, MPI_COMBINER_DARRAY, 8, 0, 1);
    MPI_CHECK(MPI_Type_get_contents(dar, 16, 0, 1, I, A, out));
    CHECK(I[0] == 2 && I[1] == 1 && I[2] == 1 && I[3] == 10 && I[4] == MPI_DISTRIBUTE_CYCLIC &&
              I[5] == 3 && I[6] == 2 && I[7] == MPI_ORDER_C && out[0] == MPI_INT,
          "darray contents");
    /* rank 1 of cyclic(3) over 10: elements 3,4,5 and 9 */
    check_bounds("darray 1D", dar, (struct expect){16, 0, 40, 12, 28});
    MPI_CHECK(MPI_Type_free(&dar));

    /* names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_CHECK(MPI_Type_get_name(res, name, &len));
    CHECK(strcmp(name, "my resized") == 0 && len == 10, "name '%s'", name);
    MPI_CHECK(MPI_Type_get_name(sub, name, &len));
    CHECK(len == 0 && name[0] == '\0', "unnamed type has name '%s'", name);
    char longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    MPI_CHECK(MPI_Type_set_name(sub, longname));
    MPI_CHECK(MPI_Type_get_name(sub, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strlen(name) == (size_t)len, "long name: %d", len);
    MPI_CHECK(MPI_Type_set_name(MPI_FLOAT, "float"));
    MPI_CHECK(MPI_Type_get_name(MPI_FLOAT, name, &len));
    CHECK(strcmp(name, "float") == 0, "renamed predefined type: '%s'", name);
    MPI_CHECK(MPI_Type_set_name(MPI_FLOAT, "MPI_FLOAT"));

    MPI_CHECK(MPI_Type_free(&dup));
    MPI_CHECK(MPI_Type_free(&res));
    MPI_CHECK(MPI_Type_free(&sub));
    MPI_CHECK(MPI_Type_free(&st));
    CHECK(st == MPI_DATATYPE_NULL, "MPI_Type_free sets the handle to MPI_DATATYPE_NULL");
}

static void test_address(void)
{
    double a[4] = {0};
    MPI_Aint p0, p3;
    MPI_CHECK(MPI_Get_address(&a[0], &p0));
    MPI_CHECK(MPI_Get_address(&a[3], &p3));
    CHECK(MPI_Aint_diff(p3, p0) == 3 * (MPI_Aint)sizeof(double), "Aint_diff");
    CHECK(MPI_Aint_add(p0, 24) == p3, "Aint_add");
    /* a struct type with absolute addresses, used with MPI_BOTTOM */
    int x = 7;
    double y = 2.5;
    MPI_Aint d[2];
    MPI_CHECK(MPI_Get_address(&x, &d[0]));
    MPI_CHECK(MPI_Get_address(&y, &d[1]));
    int bl[2] = {1, 1};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_CHECK(MPI_Type_create_struct(2, bl, d, ty, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    char buf[64];
    int pos = 0;
    MPI_CHECK(MPI_Pack(MPI_BOTTOM, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12, "absolute pack: position %d", pos);
    int xx;
    double yy;
    memcpy(&xx, buf, 4);
    memcpy(&yy, buf + 4, 8);
    CHECK(xx == 7 && yy == 2.5, "absolute pack: %d %g", xx, yy);
    x = 0;
    y = 0;
    pos = 0;
    MPI_CHECK(MPI_Unpack(buf, sizeof buf, &pos, MPI_BOTTOM, 1, t, MPI_COMM_WORLD));
    CHECK(x == 7 && y == 2.5, "absolute unpack: %d %g", x, y);
    MPI_CHECK(MPI_Type_free(&t));
}

static int deleted;
static int count_deletes(MPI_Datatype t, int kv, void *val, void *extra)
{
    deleted += (int)(intptr_t)val;
    return MPI_SUCCESS;
}

/* Attributes follow MPI_Type_dup and are deleted by MPI_Type_free. */
static void test_attrs(void)
{
    int kv, flag;
    void *v;
    MPI_Datatype t, d;
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_deletes, &kv, NULL));
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &t));
    MPI_CHECK(MPI_Type_set_attr(t, kv, (void *)(intptr_t)5));
    MPI_CHECK(MPI_Type_dup(t, &d));
    MPI_CHECK(MPI_Type_get_attr(d, kv, &v, &flag));
    CHECK(flag && (intptr_t)v == 5, "dup'ed attribute: flag %d value %ld", flag, (long)(intptr_t)v);
    MPI_CHECK(MPI_Type_free(&t));
    CHECK(deleted == 5, "delete callback on free: %d", deleted);
    MPI_CHECK(MPI_Type_set_attr(MPI_INT, kv, (void *)(intptr_t)1));
    MPI_CHECK(MPI_Type_dup(MPI_INT, &t));
    MPI_CHECK(MPI_Type_get_attr(t, kv, &v, &flag));
    CHECK(flag && (intptr_t)v == 1, "attribute copied from a predefined type");
    MPI_CHECK(MPI_Type_delete_attr(MPI_INT, kv));
    MPI_CHECK(MPI_Type_free(&t));
    MPI_CHECK(MPI_Type_free(&d));
    CHECK(deleted == 5 + 1 + 1 + 5, "delete callbacks: %d", deleted);
    MPI_CHECK(MPI_Type_free_keyval(&kv));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    test_predefined();
    test_match_size();
    test_f90();
    test_value_index();
    test_constructors();
    test_contents();
    test_address();
    test_attrs();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
