/*
 * datatype_predef.c — the predefined datatypes of mpi.h: sizes, extents
 * and alignments as the C compiler lays the types out (pair types such as
 * MPI_DOUBLE_INT are the C struct {double; int}, padding included), Fortran
 * types with Fortran sizes, names for MPI_Type_get_name, and the check that
 * a handle names a datatype usable for communication, and
 * MPI_Type_match_size.
 */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "datatype.h"

struct pm_datatype pm_type_predef[PROUST_MPI_NUM_PREDEFINED_TYPES];
struct pm_type_x pm_type_predef_x[PROUST_MPI_NUM_PREDEFINED_TYPES];
atomic_flag pm_type_name_lock = ATOMIC_FLAG_INIT;

/* Layout of one predefined type: `first` > 0 for the pair types (value at
 * 0 of `first` bytes, int-like second member at `second`). */
struct predef_desc {
    const char *name;
    MPI_Aint size, extent, align;
    MPI_Aint first, second;
    char marker; /* 'l' / 'u': MPI_LB / MPI_UB (no data, an explicit bound) */
};

#define IDX(h) ((h) & PROUST_MPI_INDEX_MASK)
#define SCALAR(h, T) [IDX(h)] = {#h, sizeof(T), sizeof(T), _Alignof(T), 0, 0}
#define FIXED(h, sz, al) [IDX(h)] = {#h, sz, sz, al, 0, 0}
#define PAIR(h, S)                                                                 \
    [IDX(h)] = {#h,                                                                \
                (MPI_Aint)(sizeof(((S *)0)->a) + sizeof(((S *)0)->b)),             \
                sizeof(S),                                                         \
                _Alignof(S),                                                       \
                sizeof(((S *)0)->a),                                               \
                offsetof(S, b)}
#define MARKER(h, m) [IDX(h)] = {#h, 0, 0, 1, 0, 0, m}
#define FPAIR(h, sz, al) [IDX(h)] = {#h, 2 * (sz), 2 * (sz), al, sz, sz}

struct pair_float_int { float a; int b; };
struct pair_double_int { double a; int b; };
struct pair_long_int { long a; int b; };
struct pair_int_int { int a; int b; };
struct pair_short_int { short a; int b; };
struct pair_ldouble_int { long double a; int b; };

static const struct predef_desc predef[PROUST_MPI_NUM_PREDEFINED_TYPES] = {
    SCALAR(MPI_CHAR, char),
    SCALAR(MPI_SIGNED_CHAR, signed char),
    SCALAR(MPI_UNSIGNED_CHAR, unsigned char),
    FIXED(MPI_BYTE, 1, 1),
    SCALAR(MPI_WCHAR, wchar_t),
    SCALAR(MPI_SHORT, short),
    SCALAR(MPI_UNSIGNED_SHORT, unsigned short),
    SCALAR(MPI_INT, int),
    SCALAR(MPI_UNSIGNED, unsigned),
    SCALAR(MPI_LONG, long),
    SCALAR(MPI_UNSIGNED_LONG, unsigned long),
    SCALAR(MPI_LONG_LONG_INT, long long),
    SCALAR(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    SCALAR(MPI_FLOAT, float),
    SCALAR(MPI_DOUBLE, double),
    SCALAR(MPI_LONG_DOUBLE, long double),
    SCALAR(MPI_C_BOOL, _Bool),
    SCALAR(MPI_INT8_T, int8_t),
    SCALAR(MPI_INT16_T, int16_t),
    SCALAR(MPI_INT32_T, int32_t),
    SCALAR(MPI_INT64_T, int64_t),
    SCALAR(MPI_UINT8_T, uint8_t),
    SCALAR(MPI_UINT16_T, uint16_t),
    SCALAR(MPI_UINT32_T, uint32_t),
    SCALAR(MPI_UINT64_T, uint64_t),
    SCALAR(MPI_AINT, MPI_Aint),
    SCALAR(MPI_OFFSET, MPI_Offset),
    SCALAR(MPI_COUNT, MPI_Count),
    SCALAR(MPI_C_COMPLEX, float _Complex), /* MPI_C_FLOAT_COMPLEX is a synonym */
    SCALAR(MPI_C_DOUBLE_COMPLEX, double _Complex),
    SCALAR(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    FIXED(MPI_PACKED, 1, 1),
    PAIR(MPI_FLOAT_INT, struct pair_float_int),
    PAIR(MPI_DOUBLE_INT, struct pair_double_int),
    PAIR(MPI_LONG_INT, struct pair_long_int),
    PAIR(MPI_2INT, struct pair_int_int),
    PAIR(MPI_SHORT_INT, struct pair_short_int),
    PAIR(MPI_LONG_DOUBLE_INT, struct pair_ldouble_int),
    SCALAR(MPI_CXX_BOOL, _Bool), /* C++ bool: one byte with g++ */
    SCALAR(MPI_CXX_FLOAT_COMPLEX, float _Complex),
    SCALAR(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    SCALAR(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    /* Fortran: default INTEGER, LOGICAL and REAL are 4 bytes. */
    FIXED(MPI_CHARACTER, 1, 1),
    FIXED(MPI_LOGICAL, 4, 4),
    FIXED(MPI_INTEGER, 4, 4),
    FIXED(MPI_REAL, 4, 4),
    FIXED(MPI_DOUBLE_PRECISION, 8, 8),
    FIXED(MPI_COMPLEX, 8, 4),
    FIXED(MPI_DOUBLE_COMPLEX, 16, 8),
    FPAIR(MPI_2INTEGER, 4, 4),
    FPAIR(MPI_2REAL, 4, 4),
    FPAIR(MPI_2DOUBLE_PRECISION, 8, 8),
    FIXED(MPI_INTEGER1, 1, 1),
    FIXED(MPI_INTEGER2, 2, 2),
    FIXED(MPI_INTEGER4, 4, 4),
    FIXED(MPI_INTEGER8, 8, 8),
    FIXED(MPI_REAL4, 4, 4),
    FIXED(MPI_REAL8, 8, 8),
    FIXED(MPI_COMPLEX8, 8, 4),
    FIXED(MPI_COMPLEX16, 16, 8),
    MARKER(MPI_LB, 'l'),
    MARKER(MPI_UB, 'u'),
};

/* Blocks and stream offsets of the predefined types (at most two blocks). */
static struct pm_block predef_blocks[PROUST_MPI_NUM_PREDEFINED_TYPES][2];
static MPI_Aint predef_prefix[PROUST_MPI_NUM_PREDEFINED_TYPES][3];

void pm_datatypes_init(void)
{
    for (int i = 1; i < PROUST_MPI_NUM_PREDEFINED_TYPES; i++) {
        const struct predef_desc *d = &predef[i];
        struct pm_datatype *t = &pm_type_predef[i];
        struct pm_type_x *x = &pm_type_predef_x[i];
        struct pm_block *b = predef_blocks[i];
        MPI_Aint *pre = predef_prefix[i];
        size_t nb = d->marker ? 0 : 1;
        b[0].disp = 0;
        b[0].len = d->size;
        if (d->first && d->second != d->first) {
            /* padding between the members: two blocks */
            b[0].len = d->first;
            b[1].disp = d->second;
            b[1].len = d->size - d->first;
            nb = 2;
        }
        pre[0] = 0;
        pre[1] = b[0].len;
        pre[2] = d->size;

        t->handle = PROUST_MPI_TYPE(i);
        atomic_init(&t->refs, 1);
        t->predefined = true;
        t->committed = true;
        t->contiguous = d->size == d->extent && nb == 1;
        t->size = d->size;
        t->lb = 0;
        t->extent = d->extent;
        t->true_lb = 0;
        t->true_extent = nb == 0 ? 0 : nb == 1 ? b[0].len : b[1].disp + b[1].len;
        t->basic = i;
        t->nelements = d->marker ? 0 : d->first ? 2 : 1;
        t->nblocks = nb;
        t->blocks = b;
        t->combiner = MPI_COMBINER_NAMED;
        t->ni = t->na = t->nc = t->nd = 0;
        t->ints = NULL;
        t->aints = NULL;
        t->counts = NULL;
        t->types = NULL;
        pm_strlcpy(t->name, d->name, sizeof t->name);
        t->attrs = NULL;

        x->align = d->align;
        x->sticky_lb = d->marker == 'l';
        x->sticky_ub = d->marker == 'u';
        x->pair_first = d->first;
        x->prefix = pre;
        x->store = NULL;
        x->inner = NULL;
        x->contents = NULL;
    }
}

int pm_type_check(MPI_Datatype dt, struct pm_datatype **out)
{
    struct pm_datatype *t = pm_type_get(dt);
    if (out)
        *out = t;
    if (PM_UNLIKELY(!t || !t->committed))
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

/* MPI_Type_match_size (MPI-3.1 17.2.5): the predefined type of a class and
 * size. The sized Fortran types come first, as in MPICH; C types fill the
 * sizes they lack (long double, the C complex types). */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_match_size";
    static const MPI_Datatype reals[] = {MPI_REAL4, MPI_REAL8, MPI_FLOAT, MPI_DOUBLE,
                                         MPI_LONG_DOUBLE};
    static const MPI_Datatype integers[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
                                            MPI_INTEGER8, MPI_SIGNED_CHAR, MPI_SHORT,
                                            MPI_INT, MPI_LONG, MPI_LONG_LONG};
    static const MPI_Datatype complexes[] = {MPI_COMPLEX, MPI_DOUBLE_COMPLEX,
                                             MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                             MPI_C_LONG_DOUBLE_COMPLEX};
    PM_CHECK_INIT(fn);
    const MPI_Datatype *list;
    size_t n;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL: list = reals; n = sizeof reals / sizeof *reals; break;
    case MPI_TYPECLASS_INTEGER: list = integers; n = sizeof integers / sizeof *integers; break;
    case MPI_TYPECLASS_COMPLEX: list = complexes; n = sizeof complexes / sizeof *complexes; break;
    default:
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                        "%s: type class %d is not MPI_TYPECLASS_REAL, _INTEGER or _COMPLEX", fn,
                        typeclass);
    }
    if (!datatype)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: datatype is NULL", fn);
    for (size_t i = 0; i < n; i++)
        if (pm_type_predef[IDX(list[i])].size == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: no predefined %s type of %d bytes", fn,
                    typeclass == MPI_TYPECLASS_REAL      ? "real"
                    : typeclass == MPI_TYPECLASS_INTEGER ? "integer"
                                                         : "complex",
                    size);
}
PM_WEAK(Type_match_size)

/* MPI_Type_get_value_index (MPI-4.1 §6.9.4): the predefined pair type of
 * MPI_MINLOC / MPI_MAXLOC for a value type and an index type, or
 * MPI_DATATYPE_NULL when MPI has none for that combination. */
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    static const char fn[] = "MPI_Type_get_value_index";
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
    };
    PM_CHECK_INIT(fn);
    struct pm_datatype *t;
    if (pm_type_check(value_type, &t) != MPI_SUCCESS)
        return pm_error(MPI_COMM_NULL, MPI_ERR_TYPE, "%s: invalid value_type %#x", fn,
                        (unsigned)value_type);
    if (pm_type_check(index_type, &t) != MPI_SUCCESS)
        return pm_error(MPI_COMM_NULL, MPI_ERR_TYPE, "%s: invalid index_type %#x", fn,
                        (unsigned)index_type);
    if (!pair_type)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: pair_type is NULL", fn);
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (pairs[i].value == value_type && pairs[i].index == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_value_index)
