/*
 * datatype_external.c — MPI_Pack_external, MPI_Unpack_external and
 * MPI_Pack_external_size: the "external32" representation (MPI-3.1
 * §13.5.2), which any MPI implementation on any machine reads back.
 *
 * external32 is big-endian, without padding, with fixed sizes that are not
 * always the native ones (MPI_LONG is 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE
 * the 16-byte IEEE binary128). Packing is done in two passes: the native
 * pack of the type (pm_type_pack: its bytes in type-map order) into a
 * scratch buffer, then a conversion of that stream element by element,
 * driven by the type signature. The signature comes from the type's
 * contents: every constructor but struct repeats one inner type, so only
 * structs (and the predefined pair types) mix element types. A value that
 * does not fit its external size (a long beyond 32 bits) is an error
 * (MPI_ERR_CONVERSION), never a silent truncation.
 */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

#define ERR(code, ...) pm_error(MPI_COMM_WORLD, code, __VA_ARGS__)

/* How one element (or one part of a complex) is written. */
enum ext_kind {
    EXT_NONE, /* not a basic type (pair types: see ext_pair) */
    EXT_RAW,  /* bytes as they are (char, byte, bool, packed) */
    EXT_SINT, /* two's complement integer, resized with a range check */
    EXT_UINT, /* unsigned integer, the same */
    EXT_REAL, /* IEEE float or double: the bytes reversed */
    EXT_LDBL, /* C long double as IEEE binary128 */
};

struct ext_desc {
    unsigned char kind, native, ext, parts; /* part sizes; complex: 2 parts */
};

#define IDX(h) ((h) & PROUST_MPI_INDEX_MASK)
#define D(h, k, n, e, p) [IDX(h)] = {k, n, e, p}

static const struct ext_desc ext_table[PROUST_MPI_NUM_PREDEFINED_TYPES] = {
    D(MPI_CHAR, EXT_RAW, 1, 1, 1),
    D(MPI_SIGNED_CHAR, EXT_RAW, 1, 1, 1),
    D(MPI_UNSIGNED_CHAR, EXT_RAW, 1, 1, 1),
    D(MPI_BYTE, EXT_RAW, 1, 1, 1),
    D(MPI_PACKED, EXT_RAW, 1, 1, 1),
    D(MPI_C_BOOL, EXT_RAW, sizeof(_Bool), 1, 1),
    D(MPI_CXX_BOOL, EXT_RAW, sizeof(_Bool), 1, 1),
    D(MPI_CHARACTER, EXT_RAW, 1, 1, 1),
    D(MPI_WCHAR, EXT_UINT, sizeof(wchar_t), 2, 1),
    D(MPI_SHORT, EXT_SINT, sizeof(short), 2, 1),
    D(MPI_UNSIGNED_SHORT, EXT_UINT, sizeof(short), 2, 1),
    D(MPI_INT, EXT_SINT, sizeof(int), 4, 1),
    D(MPI_UNSIGNED, EXT_UINT, sizeof(int), 4, 1),
    D(MPI_LONG, EXT_SINT, sizeof(long), 4, 1),
    D(MPI_UNSIGNED_LONG, EXT_UINT, sizeof(long), 4, 1),
    D(MPI_LONG_LONG_INT, EXT_SINT, sizeof(long long), 8, 1),
    D(MPI_UNSIGNED_LONG_LONG, EXT_UINT, sizeof(long long), 8, 1),
    D(MPI_INT8_T, EXT_SINT, 1, 1, 1),
    D(MPI_INT16_T, EXT_SINT, 2, 2, 1),
    D(MPI_INT32_T, EXT_SINT, 4, 4, 1),
    D(MPI_INT64_T, EXT_SINT, 8, 8, 1),
    D(MPI_UINT8_T, EXT_UINT, 1, 1, 1),
    D(MPI_UINT16_T, EXT_UINT, 2, 2, 1),
    D(MPI_UINT32_T, EXT_UINT, 4, 4, 1),
    D(MPI_UINT64_T, EXT_UINT, 8, 8, 1),
    D(MPI_AINT, EXT_SINT, sizeof(MPI_Aint), 8, 1),
    D(MPI_OFFSET, EXT_SINT, sizeof(MPI_Offset), 8, 1),
    D(MPI_COUNT, EXT_SINT, sizeof(MPI_Count), 8, 1),
    D(MPI_FLOAT, EXT_REAL, 4, 4, 1),
    D(MPI_DOUBLE, EXT_REAL, 8, 8, 1),
    D(MPI_LONG_DOUBLE, EXT_LDBL, sizeof(long double), 16, 1),
    D(MPI_C_FLOAT_COMPLEX, EXT_REAL, 4, 4, 2),
    D(MPI_C_DOUBLE_COMPLEX, EXT_REAL, 8, 8, 2),
    D(MPI_C_LONG_DOUBLE_COMPLEX, EXT_LDBL, sizeof(long double), 16, 2),
    D(MPI_CXX_FLOAT_COMPLEX, EXT_REAL, 4, 4, 2),
    D(MPI_CXX_DOUBLE_COMPLEX, EXT_REAL, 8, 8, 2),
    D(MPI_CXX_LONG_DOUBLE_COMPLEX, EXT_LDBL, sizeof(long double), 16, 2),
    D(MPI_LOGICAL, EXT_SINT, 4, 4, 1),
    D(MPI_INTEGER, EXT_SINT, 4, 4, 1),
    D(MPI_REAL, EXT_REAL, 4, 4, 1),
    D(MPI_DOUBLE_PRECISION, EXT_REAL, 8, 8, 1),
    D(MPI_COMPLEX, EXT_REAL, 4, 4, 2),
    D(MPI_DOUBLE_COMPLEX, EXT_REAL, 8, 8, 2),
    D(MPI_2INTEGER, EXT_SINT, 4, 4, 2),
    D(MPI_2REAL, EXT_REAL, 4, 4, 2),
    D(MPI_2DOUBLE_PRECISION, EXT_REAL, 8, 8, 2),
    D(MPI_INTEGER1, EXT_SINT, 1, 1, 1),
    D(MPI_INTEGER2, EXT_SINT, 2, 2, 1),
    D(MPI_INTEGER4, EXT_SINT, 4, 4, 1),
    D(MPI_INTEGER8, EXT_SINT, 8, 8, 1),
    D(MPI_REAL4, EXT_REAL, 4, 4, 1),
    D(MPI_REAL8, EXT_REAL, 8, 8, 1),
    D(MPI_COMPLEX8, EXT_REAL, 4, 4, 2),
    D(MPI_COMPLEX16, EXT_REAL, 8, 8, 2),
};

/* The C pair types: a value, then an int (natively packed without the
 * padding between them). */
static const struct {
    MPI_Datatype pair, first;
} ext_pairs[] = {
    {MPI_FLOAT_INT, MPI_FLOAT}, {MPI_DOUBLE_INT, MPI_DOUBLE},
    {MPI_LONG_INT, MPI_LONG},   {MPI_2INT, MPI_INT},
    {MPI_SHORT_INT, MPI_SHORT}, {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE},
};

static MPI_Datatype pair_first(MPI_Datatype pair)
{
    for (size_t i = 0; i < sizeof ext_pairs / sizeof ext_pairs[0]; i++)
        if (ext_pairs[i].pair == pair)
            return ext_pairs[i].first;
    return MPI_DATATYPE_NULL;
}

/* ---- one element ---------------------------------------------------------- */

/* Integers as the machine holds them (little- or big-endian). */
static uint64_t load_native(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    unsigned char b[8] = {0};
    memcpy(b, p, n);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | b[i];
#else
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | b[i];
#endif
    return v;
}

static void store_native(unsigned char *p, unsigned n, uint64_t v)
{
    unsigned char b[8];
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (unsigned i = n; i-- > 0; v >>= 8)
        b[i] = (unsigned char)v;
#else
    for (unsigned i = 0; i < n; i++, v >>= 8)
        b[i] = (unsigned char)v;
#endif
    memcpy(p, b, n);
}

static uint64_t load_be(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static void store_be(unsigned char *p, unsigned n, uint64_t v)
{
    for (unsigned i = n; i-- > 0; v >>= 8)
        p[i] = (unsigned char)v;
}

/* Sign-extend the low `n` bytes of v. */
static int64_t sext(uint64_t v, unsigned n)
{
    if (n >= 8)
        return (int64_t)v;
    uint64_t m = 1ull << (8 * n - 1);
    v &= (m << 1) - 1;
    return (int64_t)((v ^ m) - m);
}

/* Does v (signed or not) fit in n bytes? */
static bool fits(uint64_t v, unsigned n, bool is_signed)
{
    if (n >= 8)
        return true;
    if (is_signed)
        return sext(v, n) == (int64_t)v;
    return v >> (8 * n) == 0;
}

/* long double <-> binary128 (big-endian, 16 bytes): x87 extended (64-bit
 * significand with an explicit integer bit) has the binary128 sign and
 * exponent (15 bits, bias 16383); the fraction moves to the top of the
 * 112-bit field. binary128 long doubles only change byte order. */
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384
static void ldbl_to_ext(const unsigned char *in, unsigned char *out)
{
    uint64_t mant = load_native(in, 8);
    unsigned se = (unsigned)load_native(in + 8, 2);
    uint64_t frac = mant & ~(1ull << 63); /* 63 fraction bits */
    store_be(out, 2, se);
    /* 112 fraction bits: the 63 at the top, zeros below */
    store_be(out + 2, 8, frac << 1);
    memset(out + 10, 0, 6);
}

static void ldbl_from_ext(const unsigned char *in, unsigned char *out)
{
    unsigned se = (unsigned)load_be(in, 2);
    uint64_t top = load_be(in + 2, 8); /* the first 64 of 112 fraction bits */
    uint64_t mant = top >> 1;
    if ((se & 0x7fff) != 0)
        mant |= 1ull << 63; /* normal, infinite or NaN: the integer bit */
    if ((se & 0x7fff) == 0x7fff && mant == 1ull << 63 && (top & 1 || load_be(in + 10, 6)))
        mant |= 1ull << 62; /* a NaN whose payload sat below our 63 bits */
    memset(out, 0, sizeof(long double));
    store_native(out, 8, mant);
    store_native(out + 8, 2, se);
}
#elif LDBL_MANT_DIG == 113
static void ldbl_to_ext(const unsigned char *in, unsigned char *out)
{
    for (int i = 0; i < 16; i++)
        out[i] = in[__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? i : 15 - i];
}

static void ldbl_from_ext(const unsigned char *in, unsigned char *out)
{
    ldbl_to_ext(in, out);
}
#else
#define PM_NO_LDBL_EXT32 1
#endif

/* ---- the stream --------------------------------------------------------------- */

struct ext_cursor {
    const unsigned char *in;
    unsigned char *out;
    bool pack;          /* native -> external32, or back */
    MPI_Datatype bad;   /* a value that did not fit, of this type */
};

/* n elements of predefined type `idx` (pair types split in two). */
static void convert_basic(int idx, MPI_Count n, struct ext_cursor *c)
{
    const struct ext_desc *d = &ext_table[idx];
    if (d->kind == EXT_NONE) {
        MPI_Datatype first = pair_first(PROUST_MPI_TYPE(idx));
        for (MPI_Count i = 0; i < n; i++) {
            convert_basic((int)IDX(first), 1, c);
            convert_basic((int)IDX(MPI_INT), 1, c);
        }
        return;
    }
    unsigned from = c->pack ? d->native : d->ext, to = c->pack ? d->ext : d->native;
    MPI_Count parts = n * d->parts;
    switch (d->kind) {
    case EXT_RAW:
        memcpy(c->out, c->in, (size_t)parts * from);
        break;
    case EXT_SINT:
    case EXT_UINT:
        for (MPI_Count i = 0; i < parts; i++) {
            const unsigned char *p = c->in + i * from;
            uint64_t v = c->pack ? load_native(p, from) : load_be(p, from);
            if (d->kind == EXT_SINT)
                v = (uint64_t)sext(v, from);
            if (!fits(v, to, d->kind == EXT_SINT))
                c->bad = PROUST_MPI_TYPE(idx);
            unsigned char *q = c->out + i * to;
            if (c->pack)
                store_be(q, to, v);
            else
                store_native(q, to, v);
        }
        break;
    case EXT_REAL:
        for (MPI_Count i = 0; i < parts; i++) {
            const unsigned char *p = c->in + i * from;
            unsigned char *q = c->out + i * to;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            memcpy(q, p, from);
#else
            for (unsigned k = 0; k < from; k++)
                q[k] = p[from - 1 - k];
#endif
        }
        break;
    case EXT_LDBL:
#ifndef PM_NO_LDBL_EXT32
        for (MPI_Count i = 0; i < parts; i++) {
            if (c->pack)
                ldbl_to_ext(c->in + i * from, c->out + i * to);
            else
                ldbl_from_ext(c->in + i * from, c->out + i * to);
        }
#else
        c->bad = PROUST_MPI_TYPE(idx);
#endif
        break;
    }
    c->in += parts * from;
    c->out += parts * to;
}

/* `count` instances of t, in type-map order. */
static void convert_type(const struct pm_datatype *t, MPI_Count count, struct ext_cursor *c)
{
    if (count <= 0 || t->size == 0)
        return;
    if (t->basic) { /* every element of that predefined type */
        MPI_Count per = t->size / pm_type_predef[t->basic].size;
        convert_basic(t->basic, count * per, c);
        return;
    }
    struct pm_datatype **inner = pm_type_x(t)->inner;
    if (t->combiner == MPI_COMBINER_STRUCT) {
        for (MPI_Count k = 0; k < count; k++)
            for (int i = 0; i < t->nd; i++)
                convert_type(inner[i], pm_type_struct_bl(t, i), c);
        return;
    }
    /* any other constructor repeats its one inner type */
    convert_type(inner[0], count * (t->size / inner[0]->size), c);
}

/* Bytes of `count` instances of t in external32. */
static MPI_Count ext_size(const struct pm_datatype *t, MPI_Count count)
{
    if (count <= 0 || t->size == 0)
        return 0;
    if (t->basic) {
        int idx = t->basic;
        const struct ext_desc *d = &ext_table[idx];
        MPI_Count per = t->size / pm_type_predef[idx].size;
        if (d->kind == EXT_NONE)
            return count * per *
                   (ext_size(pm_type_get(pair_first(PROUST_MPI_TYPE(idx))), 1) + 4);
        return count * per * d->parts * d->ext;
    }
    struct pm_datatype **inner = pm_type_x(t)->inner;
    if (t->combiner == MPI_COMBINER_STRUCT) {
        MPI_Count one = 0;
        for (int i = 0; i < t->nd; i++)
            one += ext_size(inner[i], pm_type_struct_bl(t, i));
        return count * one;
    }
    return ext_size(inner[0], count * (t->size / inner[0]->size));
}

/* ---- the calls -------------------------------------------------------------------- */

static int check_args(const char *fn, const char *datarep, MPI_Count count,
                      MPI_Datatype datatype, struct pm_datatype **t)
{
    if (!datarep)
        return ERR(MPI_ERR_ARG, "%s: datarep is NULL", fn);
    if (strcmp(datarep, "external32") != 0)
        return ERR(MPI_ERR_UNSUPPORTED_DATAREP,
                   "%s: data representation \"%s\" is not supported (only \"external32\")", fn,
                   datarep);
    if (count < 0)
        return ERR(MPI_ERR_COUNT, "%s: count %lld is negative", fn, (long long)count);
    *t = pm_type_get(datatype);
    if (!*t)
        return ERR(MPI_ERR_TYPE, "%s: datatype %#x is not a valid datatype", fn,
                   (unsigned)datatype);
    if (!(*t)->committed)
        return ERR(MPI_ERR_TYPE, "%s: datatype %#x is not committed", fn, (unsigned)datatype);
    MPI_Count native; /* external32 never takes more than twice the native bytes */
    if (__builtin_mul_overflow(count, (*t)->size, &native) || native > PTRDIFF_MAX / 2)
        return ERR(MPI_ERR_COUNT, "%s: %lld elements of %lld bytes overflow", fn,
                   (long long)count, (long long)(*t)->size);
    return MPI_SUCCESS;
}

static int conversion_error(const char *fn, MPI_Datatype bad)
{
    const struct pm_datatype *b = pm_type_get(bad);
#ifdef PM_NO_LDBL_EXT32
    if (bad == MPI_LONG_DOUBLE || bad == MPI_C_LONG_DOUBLE_COMPLEX ||
        bad == MPI_CXX_LONG_DOUBLE_COMPLEX)
        return ERR(MPI_ERR_CONVERSION, "%s: this machine's long double has no external32 "
                                       "conversion here", fn);
#endif
    return ERR(MPI_ERR_CONVERSION, "%s: a value of type %s does not fit its external32 size "
                                   "(%d bytes)",
               fn, b ? b->name : "?", (int)ext_table[IDX(bad)].ext);
}

/* The three calls with MPI_Count sizes (the _c forms; the MPI_Aint/int
 * ones convert). `position` may be NULL (an error). */
static int pack_external(const char *fn, const char datarep[], const void *inbuf,
                         MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                         MPI_Count outsize, MPI_Count *position)
{
    struct pm_datatype *t = NULL;
    int rc = check_args(fn, datarep, incount, datatype, &t);
    MPI_Count need = rc ? 0 : ext_size(t, incount);
    if (rc || (rc = pm_type_check_stream(fn, MPI_COMM_WORLD, outbuf, outsize, position != NULL,
                                         position ? *position : 0, need, "outsize")))
        return rc;
    if (need == 0)
        return MPI_SUCCESS;
    size_t native = (size_t)incount * (size_t)t->size;
    unsigned char *tmp = malloc(native);
    if (!tmp)
        return ERR(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", fn, native);
    pm_type_pack(inbuf, incount, t, 0, tmp, native);
    struct ext_cursor c = {tmp, (unsigned char *)outbuf + *position, true, MPI_DATATYPE_NULL};
    convert_type(t, incount, &c);
    free(tmp);
    if (c.bad != MPI_DATATYPE_NULL)
        return conversion_error(fn, c.bad);
    *position += need;
    return MPI_SUCCESS;
}

static int unpack_external(const char *fn, const char datarep[], const void *inbuf,
                           MPI_Count insize, MPI_Count *position, void *outbuf,
                           MPI_Count outcount, MPI_Datatype datatype)
{
    struct pm_datatype *t = NULL;
    int rc = check_args(fn, datarep, outcount, datatype, &t);
    MPI_Count need = rc ? 0 : ext_size(t, outcount);
    if (rc || (rc = pm_type_check_stream(fn, MPI_COMM_WORLD, inbuf, insize, position != NULL,
                                         position ? *position : 0, need, "insize")))
        return rc;
    if (need == 0)
        return MPI_SUCCESS;
    size_t native = (size_t)outcount * (size_t)t->size;
    unsigned char *tmp = malloc(native);
    if (!tmp)
        return ERR(MPI_ERR_NO_MEM, "%s: no memory for %zu bytes of scratch", fn, native);
    struct ext_cursor c = {(const unsigned char *)inbuf + *position, tmp, false,
                           MPI_DATATYPE_NULL};
    convert_type(t, outcount, &c);
    if (c.bad == MPI_DATATYPE_NULL)
        pm_type_unpack(tmp, native, outbuf, outcount, t, 0);
    free(tmp);
    if (c.bad != MPI_DATATYPE_NULL)
        return conversion_error(fn, c.bad);
    *position += need;
    return MPI_SUCCESS;
}

static int external_size(const char *fn, const char datarep[], MPI_Count incount,
                         MPI_Datatype datatype, MPI_Count *size)
{
    struct pm_datatype *t = NULL;
    int rc = check_args(fn, datarep, incount, datatype, &t);
    if (rc)
        return rc;
    if (!size)
        return ERR(MPI_ERR_ARG, "%s: size is NULL", fn);
    *size = ext_size(t, incount);
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount,
                       MPI_Datatype datatype, void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    PM_CHECK_INIT("MPI_Pack_external");
    MPI_Count pos = position ? *position : 0;
    int rc = pack_external("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf,
                           outsize, position ? &pos : NULL);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
PM_WEAK(Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    PM_CHECK_INIT("MPI_Pack_external_c");
    return pack_external("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf,
                         outsize, position);
}
PM_WEAK(Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    PM_CHECK_INIT("MPI_Unpack_external");
    MPI_Count pos = position ? *position : 0;
    int rc = unpack_external("MPI_Unpack_external", datarep, inbuf, insize,
                             position ? &pos : NULL, outbuf, outcount, datatype);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
PM_WEAK(Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    PM_CHECK_INIT("MPI_Unpack_external_c");
    return unpack_external("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf,
                           outcount, datatype);
}
PM_WEAK(Unpack_external_c)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    PM_CHECK_INIT("MPI_Pack_external_size");
    MPI_Count n = 0;
    int rc = external_size("MPI_Pack_external_size", datarep, incount, datatype,
                           size ? &n : NULL);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Aint)n;
    return rc;
}
PM_WEAK(Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    PM_CHECK_INIT("MPI_Pack_external_size_c");
    return external_size("MPI_Pack_external_size_c", datarep, incount, datatype, size);
}
PM_WEAK(Pack_external_size_c)
