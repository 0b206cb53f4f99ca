/*
 * datatype_create.c — the datatype constructors (contiguous, vector,
 * hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * resized): check the arguments, describe the type map as pieces for
 * pm_type_build, record the envelope for MPI_Type_get_contents, publish.
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
static int envelope(const char *fn, struct pm_datatype *t, int combiner, int ni, int na, int nd)
{
    if (pm_type_set_envelope(t, combiner, ni, na, nd) == MPI_SUCCESS)
        return MPI_SUCCESS;
    pm_type_release(t);
    return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
}

static int check_count(const char *fn, int count)
{
    if (count < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_COUNT, "%s: count %d is negative", fn, count);
    return MPI_SUCCESS;
}

static int check_newtype(const char *fn, const MPI_Datatype *newtype)
{
    if (!newtype)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    return MPI_SUCCESS;
}

/* Block lengths must be nonnegative; arrays may be NULL only when empty. */
static int check_blocklengths(const char *fn, int count, const int *bls)
{
    if (count > 0 && !bls)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: array_of_blocklengths is NULL", fn);
    for (int i = 0; i < count; i++)
        if (bls[i] < 0)
            return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                            "%s: array_of_blocklengths[%d] = %d is negative", fn, i, bls[i]);
    return MPI_SUCCESS;
}

static int check_array(const char *fn, int count, const void *a, const char *what)
{
    if (count > 0 && !a)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: %s is NULL", fn, what);
    return MPI_SUCCESS;
}

/* Envelope ints of the indexed family: count, then up to two int arrays. */
static int too_many_ints(const char *fn, int count, int per, int extra, int *ni)
{
    long long n = (long long)count * per + extra;
    if (n > 0x7fffffff)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: count %d is too large", fn, count);
    *ni = (int)n;
    return MPI_SUCCESS;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_contiguous";
    PM_CHECK_INIT(fn);
    int rc = check_count(fn, count);
    if (rc)
        return rc;
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    if ((rc = check_newtype(fn, newtype)))
        return rc;
    struct pm_type_desc d = {.n = 1, .type = old, .bl = count};
    if ((rc = pm_type_build(fn, &d, &t)) || (rc = envelope(fn, t, MPI_COMBINER_CONTIGUOUS, 1, 0, 1)))
        return rc;
    t->ints[0] = count;
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}
PM_WEAK(Type_contiguous)

/* vector and hvector: count blocks of blocklength, `stride` bytes apart. */
static int vector(const char *fn, int count, int blocklength, MPI_Aint stride, bool bytes,
                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int rc = check_count(fn, count);
    if (rc)
        return rc;
    if (blocklength < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: blocklength %d is negative", fn,
                        blocklength);
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
    if (bytes) {
        if ((rc = envelope(fn, t, MPI_COMBINER_HVECTOR, 2, 1, 1)))
            return rc;
        t->aints[0] = stride;
    } else {
        if ((rc = envelope(fn, t, MPI_COMBINER_VECTOR, 3, 0, 1)))
            return rc;
        t->ints[2] = (int)stride;
    }
    t->ints[0] = count;
    t->ints[1] = blocklength;
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_vector");
    return vector("MPI_Type_vector", count, blocklength, stride, false, oldtype, newtype);
}
PM_WEAK(Type_vector)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hvector");
    return vector("MPI_Type_create_hvector", count, blocklength, stride, true, oldtype, newtype);
}
PM_WEAK(Type_create_hvector)

/* The indexed family: per-block lengths (INDEXED, HINDEXED) or one
 * `blocklength`; displacements in elements (INDEXED, INDEXED_BLOCK) or in
 * bytes. */
static int indexed(const char *fn, int combiner, int count, const int *bls, int blocklength,
                   const int *idisps, const MPI_Aint *adisps, MPI_Datatype oldtype,
                   MPI_Datatype *newtype)
{
    bool per_block = combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED;
    bool in_elements = combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_INDEXED_BLOCK;
    int rc = check_count(fn, count);
    if (rc)
        return rc;
    if (per_block) {
        if ((rc = check_blocklengths(fn, count, bls)))
            return rc;
    } else if (blocklength < 0) {
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: blocklength %d is negative", fn,
                        blocklength);
    }
    if ((rc = check_array(fn, count, in_elements ? (const void *)idisps : (const void *)adisps,
                          "array_of_displacements")))
        return rc;
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    if ((rc = check_newtype(fn, newtype)))
        return rc;
    struct pm_type_desc d = {.n = count, .type = old, .bl = blocklength, .unit = old->extent};
    if (per_block)
        d.bls = bls;
    if (in_elements)
        d.idisps = idisps;
    else
        d.disps = adisps;
    if ((rc = pm_type_build(fn, &d, &t)))
        return rc;
    int ni = 0, na = in_elements ? 0 : count;
    int head = per_block ? 1 : 2; /* count [, blocklength] */
    int per = (per_block ? 1 : 0) + (in_elements ? 1 : 0);
    if ((rc = too_many_ints(fn, count, per, head, &ni))) {
        pm_type_release(t);
        return rc;
    }
    if ((rc = envelope(fn, t, combiner, ni, na, 1)))
        return rc;
    int *p = t->ints;
    *p++ = count;
    if (!per_block)
        *p++ = blocklength;
    if (count) {
        if (per_block) {
            memcpy(p, bls, (size_t)count * sizeof(int));
            p += count;
        }
        if (in_elements)
            memcpy(p, idisps, (size_t)count * sizeof(int));
        else
            memcpy(t->aints, adisps, (size_t)count * sizeof(MPI_Aint));
    }
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_indexed");
    return indexed("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                   array_of_displacements, NULL, oldtype, newtype);
}
PM_WEAK(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed");
    return indexed("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count,
                   array_of_blocklengths, 0, NULL, array_of_displacements, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_indexed_block");
    return indexed("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count, NULL,
                   blocklength, array_of_displacements, NULL, oldtype, newtype);
}
PM_WEAK(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_hindexed_block");
    return indexed("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count, NULL,
                   blocklength, NULL, array_of_displacements, oldtype, newtype);
}
PM_WEAK(Type_create_hindexed_block)

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_struct";
    PM_CHECK_INIT(fn);
    int rc = check_count(fn, count), ni = 0;
    if (rc || (rc = check_blocklengths(fn, count, array_of_blocklengths)) ||
        (rc = check_array(fn, count, array_of_displacements, "array_of_displacements")) ||
        (rc = check_array(fn, count, array_of_types, "array_of_types")))
        return rc;
    struct pm_datatype **types = malloc((size_t)(count > 0 ? count : 1) * sizeof *types), *t;
    if (!types)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < count; i++) {
        char what[48];
        snprintf(what, sizeof what, "array_of_types[%d]", i);
        if (!(types[i] = pm_type_arg(fn, array_of_types[i], what))) {
            free(types);
            return MPI_ERR_TYPE;
        }
    }
    if ((rc = check_newtype(fn, newtype)) || (rc = too_many_ints(fn, count, 1, 1, &ni))) {
        free(types);
        return rc;
    }
    struct pm_type_desc d = {.n = count, .types = types, .bls = array_of_blocklengths,
                             .disps = array_of_displacements, .is_struct = true};
    if (!(rc = pm_type_build(fn, &d, &t)) &&
        !(rc = envelope(fn, t, MPI_COMBINER_STRUCT, ni, count, count))) {
        t->ints[0] = count;
        if (count) {
            memcpy(t->ints + 1, array_of_blocklengths, (size_t)count * sizeof(int));
            memcpy(t->aints, array_of_displacements, (size_t)count * sizeof(MPI_Aint));
        }
        for (int i = 0; i < count; i++)
            pm_type_set_inner(t, i, types[i]);
    }
    free(types);
    return rc ? rc : pm_type_publish(fn, t, newtype);
}
PM_WEAK(Type_create_struct)

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_resized";
    PM_CHECK_INIT(fn);
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype"), *t;
    if (!old)
        return MPI_ERR_TYPE;
    int rc = check_newtype(fn, newtype);
    if (rc || (rc = pm_type_build_resized(fn, old, lb, extent, &t)) ||
        (rc = envelope(fn, t, MPI_COMBINER_RESIZED, 0, 2, 1)))
        return rc;
    t->aints[0] = lb;
    t->aints[1] = extent;
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}
PM_WEAK(Type_create_resized)
