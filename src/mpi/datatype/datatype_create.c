/*
 * datatype_create.c — the datatype constructors (contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * resized) and their MPI-4 large-count twins (_c): check the arguments,
 * describe the type map as pieces for pm_type_build, record the envelope
 * for MPI_Type_get_contents (a _c constructor's counts, displacements
 * included, go to the large-count array), publish.
 * Subarray and darray are in datatype_subarray.c, dup in datatype_query.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

struct pm_datatype *pm_type_arg(const char *fname, MPI_Datatype dt, const char *what)
{
    struct pm_datatype *t = pm_type_get(dt);
    if (PM_UNLIKELY(!t)) {
        if (dt == MPI_DATATYPE_NULL)
            pm_error(MPI_COMM_NULL, MPI_ERR_TYPE, "%s: %s is MPI_DATATYPE_NULL", fname, what);
        else
            pm_error(MPI_COMM_NULL, MPI_ERR_TYPE, "%s: %s %#x is not a valid datatype", fname,
                     what, (unsigned)dt);
    }
    return t;
}

/* Give `t` its envelope; on failure release it and raise. */
static int envelope(const char *fn, struct pm_datatype *t, int combiner, int ni, int na, int nc,
                    int nd)
{
    if (pm_type_set_envelope(t, combiner, ni, na, nc, nd) == MPI_SUCCESS)
        return MPI_SUCCESS;
    pm_type_release(t);
    return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
}

/* An array of counts as the caller gave it: int (the MPI-3 constructors)
 * or MPI_Count (the _c ones); at most one pointer is set. */
struct counts {
    const int *i;
    const MPI_Count *c;
};
static inline MPI_Count count_at(struct counts a, MPI_Count k)
{
    return a.c ? a.c[k] : a.i[k];
}
static inline bool counts_null(struct counts a)
{
    return !a.i && !a.c;
}
/* Copy n entries to a large-count envelope array. */
static void counts_copy(MPI_Count *dst, struct counts a, MPI_Count n)
{
    for (MPI_Count k = 0; k < n; k++)
        dst[k] = count_at(a, k);
}

static int check_count(const char *fn, MPI_Count count)
{
    if (count < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_COUNT, "%s: count %lld is negative", fn,
                        (long long)count);
    return MPI_SUCCESS;
}

static int check_newtype(const char *fn, const MPI_Datatype *newtype)
{
    if (!newtype)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    return MPI_SUCCESS;
}

/* Block lengths must be nonnegative; arrays may be NULL only when empty. */
static int check_blocklengths(const char *fn, MPI_Count count, struct counts bls)
{
    if (count > 0 && counts_null(bls))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: array_of_blocklengths is NULL", fn);
    for (MPI_Count i = 0; i < count; i++)
        if (count_at(bls, i) < 0)
            return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                            "%s: array_of_blocklengths[%lld] = %lld is negative", fn,
                            (long long)i, (long long)count_at(bls, i));
    return MPI_SUCCESS;
}

static int check_array(const char *fn, MPI_Count count, const void *a, const char *what)
{
    if (count > 0 && !a)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: %s is NULL", fn, what);
    return MPI_SUCCESS;
}

/* Envelope entries of the indexed family: `extra` head values and `per`
 * per block; the envelope counts are ints. */
static int envelope_size(const char *fn, MPI_Count count, int per, int extra, int *n)
{
    if (count > (0x7fffffff - extra) / (per ? per : 1))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: count %lld is too large", fn,
                        (long long)count);
    *n = (int)count * per + extra;
    return MPI_SUCCESS;
}

static int contiguous(const char *fn, MPI_Count count, MPI_Datatype oldtype,
                      MPI_Datatype *newtype, bool large)
{
    int rc = check_count(fn, count);
    if (rc)
        return rc;
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    if ((rc = check_newtype(fn, newtype)))
        return rc;
    struct pm_type_desc d = {.n = 1, .type = old, .bl = count};
    if ((rc = pm_type_build(fn, &d, &t)) ||
        (rc = envelope(fn, t, MPI_COMBINER_CONTIGUOUS, !large, 0, large, 1)))
        return rc;
    if (large)
        t->counts[0] = count;
    else
        t->ints[0] = (int)count;
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_contiguous");
    return contiguous("MPI_Type_contiguous", count, oldtype, newtype, false);
}
PM_WEAK(Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_contiguous_c");
    return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype, true);
}
PM_WEAK(Type_contiguous_c)

/* vector and hvector: count blocks of blocklength, `stride` elements or
 * bytes apart. */
static int vector(const char *fn, MPI_Count count, MPI_Count blocklength, MPI_Aint stride,
                  bool bytes, bool large, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = check_count(fn, count);
    if (rc)
        return rc;
    if (blocklength < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: blocklength %lld is negative", fn,
                        (long long)blocklength);
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    if ((rc = check_newtype(fn, newtype)))
        return rc;
    MPI_Aint step = stride;
    if (!bytes && __builtin_mul_overflow(stride, old->extent, &step))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: stride %ld times extent %ld overflows",
                        fn, (long)stride, (long)old->extent);
    struct pm_type_desc d = {.n = count, .type = old, .bl = blocklength, .stride = step};
    if ((rc = pm_type_build(fn, &d, &t)))
        return rc;
    int combiner = bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR;
    if (large) {
        if ((rc = envelope(fn, t, combiner, 0, 0, 3, 1)))
            return rc;
        t->counts[0] = count;
        t->counts[1] = blocklength;
        t->counts[2] = stride;
    } else {
        if ((rc = envelope(fn, t, combiner, bytes ? 2 : 3, bytes, 0, 1)))
            return rc;
        t->ints[0] = (int)count;
        t->ints[1] = (int)blocklength;
        if (bytes)
            t->aints[0] = stride;
        else
            t->ints[2] = (int)stride;
    }
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_vector");
    return vector("MPI_Type_vector", count, blocklength, stride, false, false, oldtype, newtype);
}
PM_WEAK(Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_vector_c");
    return vector("MPI_Type_vector_c", count, blocklength, stride, false, true, oldtype,
                  newtype);
}
PM_WEAK(Type_vector_c)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hvector");
    return vector("MPI_Type_create_hvector", count, blocklength, stride, true, false, oldtype,
                  newtype);
}
PM_WEAK(Type_create_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hvector_c");
    return vector("MPI_Type_create_hvector_c", count, blocklength, stride, true, true, oldtype,
                  newtype);
}
PM_WEAK(Type_create_hvector_c)

/* The indexed family: per-block lengths `bls` (INDEXED, HINDEXED) or one
 * `blocklength`; displacements `disps` in elements (INDEXED, INDEXED_BLOCK)
 * or in bytes, given as MPI_Aint (`adisps`, the MPI-3 h-forms) or as
 * MPI_Count (`disps.c`, every _c form). */
struct indexed_args {
    int combiner;
    MPI_Count count;
    struct counts bls;
    MPI_Count blocklength;
    struct counts disps;
    const MPI_Aint *adisps;
    bool large;
};

static int indexed_envelope(const char *fn, struct pm_datatype *t, const struct indexed_args *a,
                            bool per_block)
{
    MPI_Count count = a->count;
    int head = per_block ? 1 : 2; /* count [, blocklength] */
    int rc, n = 0;
    if (a->large) { /* count [, blocklength], [lengths], displacements */
        if ((rc = envelope_size(fn, count, per_block ? 2 : 1, head, &n)) ||
            (rc = envelope(fn, t, a->combiner, 0, 0, n, 1)))
            return rc;
        MPI_Count *p = t->counts;
        *p++ = count;
        if (!per_block)
            *p++ = a->blocklength;
        if (per_block) {
            counts_copy(p, a->bls, count);
            p += count;
        }
        counts_copy(p, a->disps, count);
        return MPI_SUCCESS;
    }
    bool in_ints = a->adisps == NULL;
    int per = (per_block ? 1 : 0) + (in_ints ? 1 : 0);
    if ((rc = envelope_size(fn, count, per, head, &n)) ||
        (rc = envelope(fn, t, a->combiner, n, in_ints ? 0 : (int)count, 0, 1)))
        return rc;
    int *p = t->ints;
    *p++ = (int)count;
    if (!per_block)
        *p++ = (int)a->blocklength;
    if (count) {
        if (per_block) {
            memcpy(p, a->bls.i, (size_t)count * sizeof(int));
            p += count;
        }
        if (in_ints)
            memcpy(p, a->disps.i, (size_t)count * sizeof(int));
        else
            memcpy(t->aints, a->adisps, (size_t)count * sizeof(MPI_Aint));
    }
    return MPI_SUCCESS;
}

static int indexed(const char *fn, const struct indexed_args *a, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    int comb = a->combiner;
    bool per_block = comb == MPI_COMBINER_INDEXED || comb == MPI_COMBINER_HINDEXED;
    bool in_elements = comb == MPI_COMBINER_INDEXED || comb == MPI_COMBINER_INDEXED_BLOCK;
    int rc = check_count(fn, a->count);
    if (rc)
        return rc;
    if (per_block) {
        if ((rc = check_blocklengths(fn, a->count, a->bls)))
            return rc;
    } else if (a->blocklength < 0) {
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: blocklength %lld is negative", fn,
                        (long long)a->blocklength);
    }
    if (a->count > 0 && !a->adisps && counts_null(a->disps))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: array_of_displacements is NULL", fn);
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    if ((rc = check_newtype(fn, newtype)))
        return rc;
    struct pm_type_desc d = {.n = a->count, .type = old, .bl = a->blocklength,
                             .unit = in_elements ? old->extent : 1};
    if (per_block) {
        d.bls = a->bls.i;
        d.cbls = a->bls.c;
    }
    d.disps = a->adisps;
    d.idisps = a->disps.i;
    d.cdisps = a->disps.c;
    if ((rc = pm_type_build(fn, &d, &t)))
        return rc;
    if ((rc = indexed_envelope(fn, t, a, per_block)))
        return rc;
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_indexed");
    struct indexed_args a = {MPI_COMBINER_INDEXED, count, {.i = array_of_blocklengths}, 0,
                             {.i = array_of_displacements}, NULL, false};
    return indexed("MPI_Type_indexed", &a, oldtype, newtype);
}
PM_WEAK(Type_indexed)

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_indexed_c");
    struct indexed_args a = {MPI_COMBINER_INDEXED, count, {.c = array_of_blocklengths}, 0,
                             {.c = array_of_displacements}, NULL, true};
    return indexed("MPI_Type_indexed_c", &a, oldtype, newtype);
}
PM_WEAK(Type_indexed_c)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed");
    struct indexed_args a = {MPI_COMBINER_HINDEXED, count, {.i = array_of_blocklengths}, 0,
                             {0}, array_of_displacements, false};
    return indexed("MPI_Type_create_hindexed", &a, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed)

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed_c");
    struct indexed_args a = {MPI_COMBINER_HINDEXED, count, {.c = array_of_blocklengths}, 0,
                             {.c = array_of_displacements}, NULL, true};
    return indexed("MPI_Type_create_hindexed_c", &a, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed_c)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_indexed_block");
    struct indexed_args a = {MPI_COMBINER_INDEXED_BLOCK, count, {0}, blocklength,
                             {.i = array_of_displacements}, NULL, false};
    return indexed("MPI_Type_create_indexed_block", &a, oldtype, newtype);
}
PM_WEAK(Type_create_indexed_block)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_indexed_block_c");
    struct indexed_args a = {MPI_COMBINER_INDEXED_BLOCK, count, {0}, blocklength,
                             {.c = array_of_displacements}, NULL, true};
    return indexed("MPI_Type_create_indexed_block_c", &a, oldtype, newtype);
}
PM_WEAK(Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed_block");
    struct indexed_args a = {MPI_COMBINER_HINDEXED_BLOCK, count, {0}, blocklength, {0},
                             array_of_displacements, false};
    return indexed("MPI_Type_create_hindexed_block", &a, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed_block)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed_block_c");
    struct indexed_args a = {MPI_COMBINER_HINDEXED_BLOCK, count, {0}, blocklength,
                             {.c = array_of_displacements}, NULL, true};
    return indexed("MPI_Type_create_hindexed_block_c", &a, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed_block_c)

/* struct: displacements in bytes, MPI_Aint (`adisps`) or MPI_Count
 * (`cdisps`, the _c form, which records everything as large counts). */
static int create_struct(const char *fn, bool large, MPI_Count count, struct counts bls,
                         const MPI_Aint *adisps, const MPI_Count *cdisps,
                         const MPI_Datatype *array_of_types, MPI_Datatype *newtype)
{
    int rc = check_count(fn, count), n = 0;
    if (rc || (rc = check_blocklengths(fn, count, bls)) ||
        (rc = check_array(fn, count, large ? (const void *)cdisps : (const void *)adisps,
                          "array_of_displacements")) ||
        (rc = check_array(fn, count, array_of_types, "array_of_types")) ||
        (rc = check_newtype(fn, newtype)) ||
        (rc = envelope_size(fn, count, large ? 2 : 1, 1, &n)))
        return rc;
    struct pm_datatype **types = malloc((size_t)(count > 0 ? count : 1) * sizeof *types), *t;
    if (!types)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (MPI_Count i = 0; i < count; i++) {
        char what[48];
        snprintf(what, sizeof what, "array_of_types[%lld]", (long long)i);
        if (!(types[i] = pm_type_arg(fn, array_of_types[i], what))) {
            free(types);
            return MPI_ERR_TYPE;
        }
    }
    struct pm_type_desc d = {.n = count, .types = types, .bls = bls.i, .cbls = bls.c,
                             .disps = adisps, .cdisps = cdisps, .unit = 1, .is_struct = true};
    int nc = (int)count;
    if (!(rc = pm_type_build(fn, &d, &t)) &&
        !(rc = envelope(fn, t, MPI_COMBINER_STRUCT, large ? 0 : n, large ? 0 : nc,
                        large ? n : 0, nc))) {
        if (large) {
            t->counts[0] = count;
            counts_copy(t->counts + 1, bls, count);
            if (count)
                memcpy(t->counts + 1 + count, cdisps, (size_t)count * sizeof(MPI_Count));
        } else {
            t->ints[0] = (int)count;
            if (count) {
                memcpy(t->ints + 1, bls.i, (size_t)count * sizeof(int));
                memcpy(t->aints, adisps, (size_t)count * sizeof(MPI_Aint));
            }
        }
        for (int i = 0; i < nc; i++)
            pm_type_set_inner(t, i, types[i]);
    }
    free(types);
    return rc ? rc : pm_type_publish(fn, t, newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_struct");
    struct counts bls = {.i = array_of_blocklengths};
    return create_struct("MPI_Type_create_struct", false, count, bls, array_of_displacements,
                         NULL, array_of_types, newtype);
}
PM_WEAK(Type_create_struct)

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_struct_c");
    struct counts bls = {.c = array_of_blocklengths};
    return create_struct("MPI_Type_create_struct_c", true, count, bls, NULL,
                         array_of_displacements, array_of_types, newtype);
}
PM_WEAK(Type_create_struct_c)

static int resized(const char *fn, MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                   bool large, MPI_Datatype *newtype)
{
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    int rc = check_newtype(fn, newtype);
    if (rc || (rc = pm_type_build_resized(fn, old, lb, extent, &t)) ||
        (rc = envelope(fn, t, MPI_COMBINER_RESIZED, 0, large ? 0 : 2, large ? 2 : 0, 1)))
        return rc;
    if (large) {
        t->counts[0] = lb;
        t->counts[1] = extent;
    } else {
        t->aints[0] = lb;
        t->aints[1] = extent;
    }
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_resized");
    return resized("MPI_Type_create_resized", oldtype, lb, extent, false, newtype);
}
PM_WEAK(Type_create_resized)

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_resized_c");
    return resized("MPI_Type_create_resized_c", oldtype, (MPI_Aint)lb, (MPI_Aint)extent, true,
                   newtype);
}
PM_WEAK(Type_create_resized_c)
