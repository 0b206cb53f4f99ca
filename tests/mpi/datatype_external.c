/*
 * datatype_external.c — MPI_Pack_external, MPI_Unpack_external and
 * MPI_Pack_external_size ("external32", MPI-3.1 §13.5.2).
 *
 * Checks the bytes themselves (big-endian, the standard's sizes: MPI_LONG 4
 * bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE IEEE binary128, pair types without
 * padding), round trips of derived types mixing element types (struct with
 * padding, inside vectors, at odd positions, counts 0-9), and the errors: an
 * unknown representation, a long that does not fit 32 bits (nothing
 * written, position unchanged), buffers too short, bad counts and types.
 */
#include <float.h>
#include <complex.h>
#include <math.h>
#include <wchar.h>

#include "mpitest.h"

static const char *EXT = "external32";

static void hex(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

/* Pack one value and compare with the expected bytes. */
static void expect_bytes(MPI_Datatype t, const void *value, const char *want, const char *what)
{
    unsigned char buf[64];
    memset(buf, 0xee, sizeof buf);
    MPI_Aint size = -1, pos = 0;
    MPI_CHECK(MPI_Pack_external_size(EXT, 1, t, &size));
    size_t n = strlen(want) / 2;
    CHECK(size == (MPI_Aint)n, "%s: external size %ld, expected %zu", what, (long)size, n);
    MPI_CHECK(MPI_Pack_external(EXT, value, 1, t, buf, sizeof buf, &pos));
    CHECK(pos == (MPI_Aint)n, "%s: position %ld after packing, expected %zu", what, (long)pos, n);
    char got[129];
    hex(buf, n, got);
    CHECK(strcmp(got, want) == 0, "%s: packed %s, expected %s", what, got, want);
    CHECK(buf[n] == 0xee, "%s: a byte written past the packed value", what);
}

static void known_encodings(void)
{
    int i = 0x01020304;
    expect_bytes(MPI_INT, &i, "01020304", "MPI_INT");
    long l = -2;
    expect_bytes(MPI_LONG, &l, "fffffffe", "MPI_LONG -2 (4 bytes)");
    unsigned long ul = 0xfedcba98ul;
    expect_bytes(MPI_UNSIGNED_LONG, &ul, "fedcba98", "MPI_UNSIGNED_LONG");
    short s = -3;
    expect_bytes(MPI_SHORT, &s, "fffd", "MPI_SHORT");
    long long ll = 0x0102030405060708ll;
    expect_bytes(MPI_LONG_LONG, &ll, "0102030405060708", "MPI_LONG_LONG");
    MPI_Aint a = -1;
    expect_bytes(MPI_AINT, &a, "ffffffffffffffff", "MPI_AINT");
    float f = 1.0f;
    expect_bytes(MPI_FLOAT, &f, "3f800000", "MPI_FLOAT 1.0");
    double d = -2.0;
    expect_bytes(MPI_DOUBLE, &d, "c000000000000000", "MPI_DOUBLE -2.0");
    long double ld = 1.0L;
    expect_bytes(MPI_LONG_DOUBLE, &ld, "3fff0000000000000000000000000000", "MPI_LONG_DOUBLE 1.0");
    ld = -2.5L; /* 1.01b x 2^1 */
    expect_bytes(MPI_LONG_DOUBLE, &ld, "c0004000000000000000000000000000", "MPI_LONG_DOUBLE -2.5");
    wchar_t w = L'A';
    expect_bytes(MPI_WCHAR, &w, "0041", "MPI_WCHAR (2 bytes)");
    _Bool b = 1;
    expect_bytes(MPI_C_BOOL, &b, "01", "MPI_C_BOOL");
    double _Complex z = 1.0 + 2.0 * _Complex_I;
    expect_bytes(MPI_C_DOUBLE_COMPLEX, &z, "3ff00000000000004000000000000000",
                 "MPI_C_DOUBLE_COMPLEX 1+2i");
    struct { short v; int k; } si = {0x0102, 7};
    expect_bytes(MPI_SHORT_INT, &si, "010200000007", "MPI_SHORT_INT (no padding)");
    struct { double v; int k; } di = {1.0, -1};
    expect_bytes(MPI_DOUBLE_INT, &di, "3ff0000000000000ffffffff", "MPI_DOUBLE_INT");
    struct { long v; int k; } li = {5, 6};
    expect_bytes(MPI_LONG_INT, &li, "0000000500000006", "MPI_LONG_INT");
    struct { long double v; int k; } ldi = {1.0L, 2};
    expect_bytes(MPI_LONG_DOUBLE_INT, &ldi, "3fff000000000000000000000000000000000002",
                 "MPI_LONG_DOUBLE_INT");
    unsigned char by = 0xab;
    expect_bytes(MPI_BYTE, &by, "ab", "MPI_BYTE");

    MPI_Aint size = -1;
    MPI_CHECK(MPI_Pack_external_size(EXT, 3, MPI_C_LONG_DOUBLE_COMPLEX, &size));
    CHECK(size == 96, "3 long double complex: %ld bytes, expected 96", (long)size);
    MPI_CHECK(MPI_Pack_external_size(EXT, 0, MPI_DOUBLE, &size));
    CHECK(size == 0, "0 doubles: %ld bytes", (long)size);
}

/* Long doubles whose binary128 form has low fraction bits: values of all
 * magnitudes (subnormal, huge, infinity) come back unchanged. */
static void long_double_round_trip(void)
{
    long double v[] = {0.0L, -0.0L, 1.0L / 3.0L, -LDBL_MAX, LDBL_MIN, LDBL_MIN / 1024.0L,
                       LDBL_TRUE_MIN, -HUGE_VALL, 12345.678L};
    int n = (int)(sizeof v / sizeof v[0]);
    unsigned char buf[16 * 16];
    MPI_Aint pos = 0;
    MPI_CHECK(MPI_Pack_external(EXT, v, n, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    CHECK(pos == 16 * n, "position %ld", (long)pos);
    long double back[16];
    pos = 0;
    MPI_CHECK(MPI_Unpack_external(EXT, buf, sizeof buf, &pos, back, n, MPI_LONG_DOUBLE));
    for (int i = 0; i < n; i++)
        CHECK(back[i] == v[i] && signbit(back[i]) == signbit(v[i]),
              "long double %d: %Lg came back as %Lg", i, v[i], back[i]);
}

/* A struct mixing sizes and padding, with markers that give it a larger
 * extent; a vector of it; a subarray of longs. */
struct rec {
    char c;
    long l;
    double d;
    short s[3];
    long double q;
    wchar_t w;
};

static MPI_Datatype rec_type(void)
{
    struct rec r = {0};
    int bl[6] = {1, 1, 1, 3, 1, 1};
    MPI_Datatype ty[6] = {MPI_CHAR, MPI_LONG, MPI_DOUBLE, MPI_SHORT, MPI_LONG_DOUBLE, MPI_WCHAR};
    MPI_Aint base, disp[6];
    MPI_Get_address(&r, &base);
    MPI_Get_address(&r.c, &disp[0]);
    MPI_Get_address(&r.l, &disp[1]);
    MPI_Get_address(&r.d, &disp[2]);
    MPI_Get_address(r.s, &disp[3]);
    MPI_Get_address(&r.q, &disp[4]);
    MPI_Get_address(&r.w, &disp[5]);
    for (int i = 0; i < 6; i++)
        disp[i] -= base;
    MPI_Datatype t, rt;
    MPI_CHECK(MPI_Type_create_struct(6, bl, disp, ty, &t));
    MPI_CHECK(MPI_Type_create_resized(t, 0, sizeof r, &rt));
    MPI_Type_free(&t);
    return rt;
}

static void fill_rec(struct rec *r, int i)
{
    memset(r, 0, sizeof *r);
    r->c = (char)('a' + i % 26);
    r->l = -100000L * i - 7;
    r->d = 0.5 * i - 3.25;
    for (int k = 0; k < 3; k++)
        r->s[k] = (short)(i * 3 + k - 20);
    r->q = (long double)i / 7.0L;
    r->w = (wchar_t)(0x3b1 + i);
}

static void derived_round_trips(void)
{
    MPI_Datatype rec = rec_type(), vec, sub;
    MPI_CHECK(MPI_Type_commit(&rec));
    /* every other record, two at a time */
    MPI_CHECK(MPI_Type_vector(2, 2, 3, rec, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 2};
    MPI_CHECK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_LONG, &sub));
    MPI_CHECK(MPI_Type_commit(&sub));
    const MPI_Aint one_rec = 1 + 4 + 8 + 3 * 2 + 16 + 2;

    MPI_Aint size;
    MPI_CHECK(MPI_Pack_external_size(EXT, 1, rec, &size));
    CHECK(size == one_rec, "record: %ld bytes, expected %ld", (long)size, (long)one_rec);
    MPI_CHECK(MPI_Pack_external_size(EXT, 2, vec, &size));
    CHECK(size == 8 * one_rec, "2 vectors of 4 records: %ld bytes", (long)size);
    MPI_CHECK(MPI_Pack_external_size(EXT, 3, sub, &size));
    CHECK(size == 3 * 6 * 4, "3 subarrays of 6 longs: %ld bytes", (long)size);

    enum { NREC = 6 * 9 };
    struct rec *in = calloc(NREC, sizeof *in), *out = calloc(NREC, sizeof *out);
    long lin[9 * 20], lout[9 * 20];
    CHECK(in && out, "out of memory");
    for (int i = 0; i < NREC; i++)
        fill_rec(&in[i], i);
    for (int i = 0; i < 9 * 20; i++)
        lin[i] = (i % 2 ? -1L : 1L) * (i * 1000003L % 2147483647L);
    size_t cap = (size_t)9 * 4 * one_rec + 9 * 6 * 4 + 64;
    unsigned char *buf = malloc(cap);
    CHECK(buf != NULL, "out of memory");
    for (int count = 0; count <= 9; count++) {
        for (MPI_Aint start = 0; start < 4; start += 3) { /* aligned and odd positions */
            memset(out, 0x5a, NREC * sizeof *out);
            memset(lout, 0x5a, sizeof lout);
            MPI_Aint pos = start;
            MPI_CHECK(MPI_Pack_external(EXT, in, count, vec, buf, (MPI_Aint)cap, &pos));
            MPI_CHECK(MPI_Pack_external(EXT, lin, count, sub, buf, (MPI_Aint)cap, &pos));
            CHECK(pos == start + count * (4 * one_rec + 6 * 4), "count %d: position %ld", count,
                  (long)pos);
            MPI_Aint end = pos;
            pos = start;
            MPI_CHECK(MPI_Unpack_external(EXT, buf, end, &pos, out, count, vec));
            MPI_CHECK(MPI_Unpack_external(EXT, buf, end, &pos, lout, count, sub));
            CHECK(pos == end, "count %d: unpacked to %ld of %ld", count, (long)pos, (long)end);
            for (int k = 0; k < count; k++)
                for (int blk = 0; blk < 2; blk++)
                    for (int j = 0; j < 2; j++) {
                        int i = k * 5 + blk * 3 + j; /* vector(2, 2, 3): extent 5 records */
                        const struct rec *a = &in[i], *b = &out[i];
                        CHECK(a->c == b->c && a->l == b->l && a->d == b->d &&
                                  memcmp(a->s, b->s, sizeof a->s) == 0 && a->q == b->q &&
                                  a->w == b->w,
                              "count %d start %ld: record %d differs", count, (long)start, i);
                    }
            for (int k = 0; k < count; k++)
                for (int r = 1; r < 3; r++)
                    for (int c = 2; c < 5; c++) {
                        int i = k * 20 + r * 5 + c;
                        CHECK(lout[i] == lin[i], "count %d: long %d is %ld, expected %ld", count,
                              i, lout[i], lin[i]);
                    }
            /* what the types do not cover is left alone */
            CHECK(count < 1 || out[2].c == 0x5a, "count %d: record 2 written", count);
            CHECK(count < 1 || lout[0] == lout[1], "count %d: long 0 written", count);
        }
    }
    free(buf);
    free(in);
    free(out);
    MPI_Type_free(&vec);
    MPI_Type_free(&sub);
    MPI_Type_free(&rec);
}

static void errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char buf[32];
    memset(buf, 0x11, sizeof buf);
    int v[4] = {1, 2, 3, 4};
    MPI_Aint pos = 0, size;
    EXPECT_CLASS(MPI_Pack_external("native", v, 1, MPI_INT, buf, sizeof buf, &pos),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    EXPECT_CLASS(MPI_Pack_external_size("external64", 1, MPI_INT, &size),
                 MPI_ERR_UNSUPPORTED_DATAREP);
    EXPECT_CLASS(MPI_Pack_external(EXT, v, -1, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_COUNT);
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 1, MPI_DATATYPE_NULL, buf, sizeof buf, &pos),
                 MPI_ERR_TYPE);
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 1, MPI_INT, buf, sizeof buf, NULL), MPI_ERR_ARG);
    /* 4 ints are 16 bytes: 15 are too few, at position 0 or 17 of 32 */
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 4, MPI_INT, buf, 15, &pos), MPI_ERR_TRUNCATE);
    pos = 17;
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 4, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_TRUNCATE);
    CHECK(pos == 17, "position moved to %ld by a failed pack", (long)pos);
    pos = 40;
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 1, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    pos = 0;
    EXPECT_CLASS(MPI_Unpack_external(EXT, buf, 7, &pos, v, 2, MPI_INT), MPI_ERR_TRUNCATE);
    CHECK(v[0] == 1 && v[1] == 2, "a failed unpack wrote the output");
    MPI_Datatype uncommitted;
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    EXPECT_CLASS(MPI_Pack_external(EXT, v, 1, uncommitted, buf, sizeof buf, &pos), MPI_ERR_TYPE);
    MPI_Type_free(&uncommitted);
    /* a long that needs more than 32 bits: refused, nothing counted */
    long big[2] = {1, 1L << 40};
    memset(buf, 0x11, sizeof buf);
    pos = 0;
    if (sizeof(long) > 4) {
        EXPECT_CLASS(MPI_Pack_external(EXT, big, 2, MPI_LONG, buf, sizeof buf, &pos),
                     MPI_ERR_CONVERSION);
        CHECK(pos == 0, "position moved to %ld by a refused conversion", (long)pos);
    }
    /* and a 4-byte value read back into a long is sign-extended */
    unsigned char neg[4] = {0xff, 0xff, 0xff, 0xf0};
    long back = 0;
    pos = 0;
    MPI_CHECK(MPI_Unpack_external(EXT, neg, 4, &pos, &back, 1, MPI_LONG));
    CHECK(back == -16, "external32 fffffff0 read as long %ld", back);
    unsigned long uback = 0;
    pos = 0;
    MPI_CHECK(MPI_Unpack_external(EXT, neg, 4, &pos, &uback, 1, MPI_UNSIGNED_LONG));
    CHECK(uback == 0xfffffff0ul, "external32 fffffff0 read as unsigned long %lx", uback);
    wchar_t wide = (wchar_t)0x1f600; /* beyond 16 bits */
    pos = 0;
    EXPECT_CLASS(MPI_Pack_external(EXT, &wide, 1, MPI_WCHAR, buf, sizeof buf, &pos),
                 MPI_ERR_CONVERSION);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    known_encodings();
    long_double_round_trip();
    derived_round_trips();
    errors();
    if (mt_rank() == 0)
        printf("datatype_external: ok\n");
    MPI_Finalize();
    return 0;
}
