/*
 * datatype.h — private to the datatype files (datatype_*.c).
 *
 * Every datatype object is made here: predefined ones live in
 * pm_type_predef[], derived ones are allocated as a struct pm_dtype whose
 * first member is the public struct pm_datatype. Beside the public fields
 * each type has a struct pm_type_x: what the struct padding and the lb/ub
 * rules need (alignment, explicit markers), the cursor index for resumable
 * packing, and the objects its contents refer to. Code outside the datatype
 * files must never build a struct pm_datatype of its own: pm_type_pack and
 * friends rely on the extras.
 */
#ifndef PROUST_MPI_DATATYPE_H
#define PROUST_MPI_DATATYPE_H

#include "mpi_impl.h"

/* Block list of one instance with its stream offsets, shared (immutable)
 * by a type, its dups and the copies MPI_Type_get_contents hands out. */
struct pm_type_store {
    _Atomic int refs;
    size_t n;
    /* a regular list (a vector's): every block reg_len bytes, block i at
     * b[0].disp + i * reg_stride; reg_len 0: not so (datatype_pack.c) */
    MPI_Aint reg_len, reg_stride;
    struct pm_block b[]; /* n blocks, then n + 1 MPI_Aint stream offsets */
};

struct pm_type_x {
    MPI_Aint align;          /* largest alignment of the basic types inside */
    bool sticky_lb;          /* the type map has an explicit lb marker */
    bool sticky_ub;          /* ... an explicit ub marker (resized & co) */
    MPI_Aint pair_first;     /* predefined pair types: bytes of the first member */
    MPI_Aint *prefix;        /* prefix[i]: stream offset of block i; [nblocks] = size */
    struct pm_type_store *store; /* owner of blocks/prefix (NULL: predefined) */
    struct pm_datatype **inner;  /* the nd types of the contents (references held) */
    void *contents;          /* one allocation holding aints, inner, types, ints */
};

struct pm_dtype {
    struct pm_datatype t; /* first: a struct pm_datatype * is a struct pm_dtype * */
    struct pm_type_x x;
};

extern struct pm_type_x pm_type_predef_x[PROUST_MPI_NUM_PREDEFINED_TYPES];

static inline struct pm_type_x *pm_type_x(const struct pm_datatype *t)
{
    if (t->predefined)
        return &pm_type_predef_x[t - pm_type_predef];
    return &((struct pm_dtype *)(uintptr_t)t)->x;
}

/* An empty type map (no data, no markers): contributes nothing to bounds. */
static inline bool pm_type_is_empty(const struct pm_datatype *t)
{
    const struct pm_type_x *x = pm_type_x(t);
    return t->size == 0 && !x->sticky_lb && !x->sticky_ub;
}

/* Protects the names (MPI_Type_set_name on any type, predefined included). */
extern atomic_flag pm_type_name_lock;

/* ---- Building (datatype_flatten.c) ---- */
/* Most blocks a type's list may have (tests lower it). */
extern MPI_Count pm_type_max_blocks;
/* A new type map as a sequence of pieces: piece i is bl_i consecutive
 * copies of type_i (copy j at disp_i + j * extent(type_i)). Each field is
 * either one value for every piece or an array. */
struct pm_type_desc {
    MPI_Count n;                          /* number of pieces */
    const struct pm_datatype *type;       /* every piece, or NULL: types[i] */
    struct pm_datatype *const *types;
    MPI_Count bl;                         /* every piece, or bls[i] / cbls[i] */
    const int *bls;
    const MPI_Count *cbls;                /* (the large-count constructors) */
    const MPI_Aint *disps;                /* disps[i] bytes, or else */
    const int *idisps;                    /* idisps[i] * unit bytes, or else */
    const MPI_Count *cdisps;              /* cdisps[i] * unit bytes, or else */
    MPI_Aint unit;
    MPI_Aint stride;                      /* i * stride bytes */
    MPI_Aint offset;                      /* added to every displacement */
    bool is_struct;                       /* pad the extent to the alignment */
};
/* Build an uncommitted, handle-less type (refs 1, combiner NAMED, no
 * contents) from `d`. Raises (MPI_COMM_WORLD) and returns the error class on
 * overflow or lack of memory. */
int pm_type_build(const char *fname, const struct pm_type_desc *d, struct pm_datatype **out);
/* The same type map with new lb and extent (explicit markers). */
int pm_type_build_resized(const char *fname, const struct pm_datatype *old, MPI_Aint lb,
                          MPI_Aint extent, struct pm_datatype **out);
/* A new object with the same type map, contents, name and commit state
 * (no attributes, no handle). NULL when out of memory. */
struct pm_datatype *pm_type_copy(const struct pm_datatype *old);
/* Give `t` its envelope: allocates the arrays (filled by the caller) and
 * zeroes them. MPI_SUCCESS or MPI_ERR_NO_MEM (not raised). */
int pm_type_set_envelope(struct pm_datatype *t, int combiner, int ni, int na, int nc, int nd);
/* Block length of field i of a struct type, from its contents (ints, or
 * large counts when made by MPI_Type_create_struct_c). */
static inline MPI_Count pm_type_struct_bl(const struct pm_datatype *t, int i)
{
    return t->nc ? t->counts[1 + i] : t->ints[1 + i];
}
/* Drop the envelope (releasing the contents' types): combiner NAMED. */
void pm_type_clear_envelope(struct pm_datatype *t);
/* contents type i := `inner` (a reference is taken). */
void pm_type_set_inner(struct pm_datatype *t, int i, struct pm_datatype *inner);
/* Register `t` in the handle table and store the handle in *newtype; on
 * failure release `t` and raise MPI_ERR_NO_MEM. */
int pm_type_publish(const char *fname, struct pm_datatype *t, MPI_Datatype *newtype);

/* ---- Packing (datatype_pack.c) ---- */
/* Bytes taken by the first `n` basic elements of a stream of `t` (the
 * inverse of pm_type_elements, for MPI_Status_set_elements). */
MPI_Count pm_type_element_bytes(const struct pm_datatype *t, MPI_Count n);
/* The packed buffer of MPI_Pack & co and their external32 twins: a
 * position given, within [0, bufsize], with room for `need` bytes from it.
 * MPI_SUCCESS, or the error raised on `comm`. */
int pm_type_check_stream(const char *fn, MPI_Comm comm, const void *buf, MPI_Aint bufsize,
                         bool has_position, MPI_Aint position, MPI_Count need, const char *what);

/* ---- Helpers of the constructors (datatype_create.c) ---- */
/* The object of a handle valid as a constructor input (committed or not),
 * or NULL after raising MPI_ERR_TYPE naming `what`. */
struct pm_datatype *pm_type_arg(const char *fname, MPI_Datatype dt, const char *what);

#endif /* PROUST_MPI_DATATYPE_H */
