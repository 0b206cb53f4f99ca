/*
 * datatype_subarray.c — MPI_Type_create_subarray and MPI_Type_create_darray,
 * and their MPI-4 large-count twins (sizes as MPI_Count; the int forms
 * widen theirs).
 *
 * Both describe a piece of an n-dimensional array of oldtype (C or Fortran
 * order) and are built the classic way (as ROMIO/MPICH do): one dimension
 * at a time with internal hvector/struct steps, then resized to the whole
 * array (lb 0, extent = product of the sizes times oldtype's extent). The
 * intermediate types have no handle and go away once flattened.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

#define ERR(code, ...) pm_error(MPI_COMM_NULL, code, __VA_ARGS__)

/* count blocks of bl copies of old, `stride` bytes apart, placed at `disp`. */
static int hvector(const char *fn, MPI_Count count, MPI_Count bl, MPI_Aint stride,
                   const struct pm_datatype *old, struct pm_datatype **out)
{
    struct pm_type_desc d = {.n = count, .type = old, .bl = bl, .stride = stride};
    return pm_type_build(fn, &d, out);
}

/* Replace *t by a type made from it, releasing the old one. */
static int step_hvector(const char *fn, MPI_Count count, MPI_Count bl, MPI_Aint stride,
                        struct pm_datatype **t)
{
    struct pm_datatype *n;
    int rc = hvector(fn, count, bl, stride, *t, &n);
    pm_type_release(*t);
    *t = rc ? NULL : n;
    return rc;
}

/* *t placed at byte displacement `disp`, then resized to [lb, lb + extent). */
static int step_place(const char *fn, MPI_Aint disp, MPI_Aint lb, MPI_Aint extent,
                      struct pm_datatype **t)
{
    struct pm_datatype *moved, *n;
    struct pm_type_desc d = {.n = 1, .type = *t, .bl = 1, .disps = &disp};
    int rc = pm_type_build(fn, &d, &moved);
    pm_type_release(*t);
    *t = NULL;
    if (rc)
        return rc;
    rc = pm_type_build_resized(fn, moved, lb, extent, &n);
    pm_type_release(moved);
    if (!rc)
        *t = n;
    return rc;
}

/* oldtype's extent times the product of `n` sizes, overflow-checked. */
static bool mul_sizes(MPI_Aint ext, const MPI_Count *sizes, int n, MPI_Aint *out)
{
    for (int i = 0; i < n; i++)
        if (__builtin_mul_overflow(ext, (MPI_Aint)sizes[i], &ext))
            return false;
    *out = ext;
    return true;
}

/* Dimension order: dims[0] varies fastest. */
static void dim_order(int ndims, int order, int *dims)
{
    for (int k = 0; k < ndims; k++)
        dims[k] = order == MPI_ORDER_C ? ndims - 1 - k : k;
}

static int publish(const char *fn, struct pm_datatype *t, int combiner, int ni,
                   const int *ints, int nc, const MPI_Count *counts, struct pm_datatype *old,
                   MPI_Datatype *newtype)
{
    if (pm_type_set_envelope(t, combiner, ni, 0, nc, 1) != MPI_SUCCESS) {
        pm_type_release(t);
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    memcpy(t->ints, ints, (size_t)ni * sizeof(int));
    if (nc)
        memcpy(t->counts, counts, (size_t)nc * sizeof(MPI_Count));
    pm_type_set_inner(t, 0, old);
    return pm_type_publish(fn, t, newtype);
}

/* `dimv` holds sizes, subsizes and starts, ndims each. */
static int subarray(const char *fn, int ndims, const MPI_Count *dimv, int order,
                    MPI_Datatype oldtype, MPI_Datatype *newtype, bool large)
{
    const MPI_Count *array_of_sizes = dimv, *array_of_subsizes = dimv + ndims,
                    *array_of_starts = dimv + 2 * ndims;
    if (ndims <= 0) /* checked by subarray_dims; said again for the compiler */
        return ERR(MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    for (int i = 0; i < ndims; i++) {
        long long sz = array_of_sizes[i], sub = array_of_subsizes[i], st = array_of_starts[i];
        if (sz <= 0)
            return ERR(MPI_ERR_ARG, "%s: array_of_sizes[%d] = %lld is not positive", fn, i, sz);
        if (sub < 0 || sub > sz)
            return ERR(MPI_ERR_ARG, "%s: array_of_subsizes[%d] = %lld is outside [0, %lld]", fn,
                       i, sub, sz);
        if (st < 0 || st > sz - sub)
            return ERR(MPI_ERR_ARG,
                       "%s: array_of_starts[%d] = %lld is outside [0, %lld] (size %lld, "
                       "subsize %lld)",
                       fn, i, st, sz - sub, sz, sub);
    }
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ERR(MPI_ERR_ARG, "%s: order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", fn,
                   order);
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype");
    if (!old)
        return MPI_ERR_TYPE;
    if (!newtype)
        return ERR(MPI_ERR_ARG, "%s: newtype is NULL", fn);

    int *dims = malloc((size_t)ndims * sizeof *dims);
    if (!dims)
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    dim_order(ndims, order, dims);
    /* Fastest dimension: subsizes contiguous elements; each slower one
     * repeats the result with the stride of its slice of the full array. */
    MPI_Aint ext = old->extent, slice = ext, disp = 0, full, off;
    struct pm_datatype *t = NULL;
    int rc = hvector(fn, 1, array_of_subsizes[dims[0]], 0, old, &t);
    bool ok = true;
    for (int k = 0; k < ndims && !rc; k++) {
        int d = dims[k];
        if (k > 0)
            rc = step_hvector(fn, array_of_subsizes[d], 1, slice, &t);
        ok = ok && !__builtin_mul_overflow(slice, (MPI_Aint)array_of_starts[d], &off) &&
             !__builtin_add_overflow(disp, off, &disp) &&
             !__builtin_mul_overflow(slice, (MPI_Aint)array_of_sizes[d], &slice);
    }
    free(dims);
    if (!rc && (!ok || !mul_sizes(ext, array_of_sizes, ndims, &full))) {
        pm_type_release(t);
        return ERR(MPI_ERR_ARG, "%s: the array's extent overflows MPI_Aint", fn);
    }
    if (rc || (rc = step_place(fn, disp, 0, full, &t)))
        return rc;

    if (large) { /* ints: ndims, order; large counts: the three arrays */
        int ints[2] = {ndims, order};
        return publish(fn, t, MPI_COMBINER_SUBARRAY, 2, ints, 3 * ndims, dimv, old, newtype);
    }
    int ni = 3 * ndims + 2;
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints) {
        pm_type_release(t);
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    ints[0] = ndims;
    for (int i = 0; i < 3 * ndims; i++)
        ints[1 + i] = (int)dimv[i];
    ints[ni - 1] = order;
    rc = publish(fn, t, MPI_COMBINER_SUBARRAY, ni, ints, 0, NULL, old, newtype);
    free(ints);
    return rc;
}

/* Copy the three arrays of a subarray call (int, or MPI_Count if `large`)
 * one after the other into a new MPI_Count array *out. */
static int subarray_dims(const char *fn, int ndims, const void *sizes, const void *subsizes,
                         const void *starts, bool large, MPI_Count **out)
{
    if (ndims <= 0)
        return ERR(MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    if (!sizes || !subsizes || !starts)
        return ERR(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    if (ndims > 0x7fffffff / 3 - 1)
        return ERR(MPI_ERR_ARG, "%s: ndims %d is too large", fn, ndims);
    MPI_Count *dimv = malloc((size_t)ndims * 3 * sizeof *dimv);
    if (!dimv)
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    const void *arrays[3] = {sizes, subsizes, starts};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < ndims; i++)
            dimv[a * ndims + i] = large ? ((const MPI_Count *)arrays[a])[i]
                                        : ((const int *)arrays[a])[i];
    *out = dimv;
    return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray";
    PM_CHECK_INIT(fn);
    MPI_Count *dimv = NULL;
    int rc = subarray_dims(fn, ndims, array_of_sizes, array_of_subsizes, array_of_starts, false,
                           &dimv);
    if (rc)
        return rc;
    rc = subarray(fn, ndims, dimv, order, oldtype, newtype, false);
    free(dimv);
    return rc;
}
PM_WEAK(Type_create_subarray)

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order,
                                MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_subarray_c";
    PM_CHECK_INIT(fn);
    MPI_Count *dimv = NULL;
    int rc = subarray_dims(fn, ndims, array_of_sizes, array_of_subsizes, array_of_starts, true,
                           &dimv);
    if (rc)
        return rc;
    rc = subarray(fn, ndims, dimv, order, oldtype, newtype, true);
    free(dimv);
    return rc;
}
PM_WEAK(Type_create_subarray_c)

/* ---- darray ---- */

/* The darray layout of one dimension: how many elements of the dimension
 * this process owns, as blocks of `blk` elements every `period` elements
 * starting at element `first` (the last block may be short). */
struct dimspec {
    MPI_Count nfull;   /* full blocks */
    MPI_Count rem;     /* elements of the last, short block (0: none) */
    MPI_Aint first;    /* first element owned */
    MPI_Aint blk, period;
};

static void dim_block(MPI_Count gsize, int nprocs, int coord, int darg, struct dimspec *s)
{
    long long blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + nprocs - 1) / nprocs : darg;
    long long start = blk * coord, mine = gsize - start;
    if (mine > blk)
        mine = blk;
    if (mine < 0)
        mine = 0;
    s->nfull = mine > 0 ? 1 : 0;
    s->rem = 0;
    s->blk = (MPI_Aint)mine;
    s->period = 0;
    s->first = mine > 0 ? (MPI_Aint)start : 0;
}

static void dim_cyclic(MPI_Count gsize, int nprocs, int coord, int darg, struct dimspec *s)
{
    long long blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    long long start = blk * coord, period = blk * nprocs, local = 0;
    if (start < gsize) {
        long long span = gsize - start;
        local = span / period * blk;
        long long r = span % period;
        local += r < blk ? r : blk;
    }
    s->nfull = local / blk;
    s->rem = local % blk;
    s->blk = (MPI_Aint)blk;
    s->period = (MPI_Aint)period;
    s->first = local > 0 ? (MPI_Aint)start : 0;
}

/* The owned elements of one dimension, each a copy of *t (whose extent is
 * one element of this dimension, `slice` bytes), at their place in the
 * dimension; resized to the whole dimension. Replaces *t. */
static int dim_type(const char *fn, const struct dimspec *s, MPI_Aint slice, MPI_Count gsize,
                    struct pm_datatype **t)
{
    MPI_Aint stride, first, tail, whole;
    struct pm_datatype *a = NULL, *n;
    if (__builtin_mul_overflow(s->period, slice, &stride) ||
        __builtin_mul_overflow(s->first, slice, &first) ||
        __builtin_mul_overflow((MPI_Aint)s->nfull, stride, &tail) ||
        __builtin_add_overflow(tail, first, &tail) ||
        __builtin_mul_overflow(slice, (MPI_Aint)gsize, &whole)) {
        pm_type_release(*t);
        *t = NULL;
        return ERR(MPI_ERR_ARG, "%s: the array's extent overflows MPI_Aint", fn);
    }
    struct pm_type_desc d = {.n = s->nfull, .type = *t, .bl = s->blk, .stride = stride,
                             .offset = first};
    int rc = pm_type_build(fn, &d, &a);
    if (!rc && s->rem) {
        /* then the short last block */
        struct pm_datatype *types[2] = {a, *t};
        int bls[2] = {1, (int)s->rem};
        MPI_Aint disps[2] = {0, tail};
        struct pm_type_desc d2 = {.n = 2, .types = types, .bls = bls, .disps = disps};
        rc = pm_type_build(fn, &d2, &n);
        pm_type_release(a);
        a = rc ? NULL : n;
    }
    pm_type_release(*t);
    *t = NULL;
    if (rc)
        return rc;
    rc = pm_type_build_resized(fn, a, 0, whole, &n);
    pm_type_release(a);
    if (!rc)
        *t = n;
    return rc;
}

static int darray_check(const char *fn, int size, int rank, int ndims, const MPI_Count *gsizes,
                        const int *distribs, const int *dargs, const int *psizes, int order)
{
    if (size <= 0)
        return ERR(MPI_ERR_ARG, "%s: size %d is not positive", fn, size);
    if (rank < 0 || rank >= size)
        return ERR(MPI_ERR_ARG, "%s: rank %d is outside [0, %d]", fn, rank, size - 1);
    if (ndims <= 0)
        return ERR(MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    if (!gsizes || !distribs || !dargs || !psizes)
        return ERR(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    long long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        if (gsizes[i] <= 0)
            return ERR(MPI_ERR_ARG, "%s: array_of_gsizes[%d] = %lld is not positive", fn, i,
                       (long long)gsizes[i]);
        if (psizes[i] <= 0)
            return ERR(MPI_ERR_ARG, "%s: array_of_psizes[%d] = %d is not positive", fn, i,
                       psizes[i]);
        if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0 &&
            distribs[i] != MPI_DISTRIBUTE_NONE)
            return ERR(MPI_ERR_ARG, "%s: array_of_dargs[%d] = %d is not positive", fn, i,
                       dargs[i]);
        switch (distribs[i]) {
        case MPI_DISTRIBUTE_BLOCK:
            if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG &&
                (long long)dargs[i] * psizes[i] < gsizes[i])
                return ERR(MPI_ERR_ARG,
                           "%s: dimension %d: block size %d times %d processes does not cover "
                           "%lld elements",
                           fn, i, dargs[i], psizes[i], (long long)gsizes[i]);
            break;
        case MPI_DISTRIBUTE_CYCLIC:
            break;
        case MPI_DISTRIBUTE_NONE:
            if (psizes[i] != 1)
                return ERR(MPI_ERR_ARG,
                           "%s: dimension %d is not distributed but array_of_psizes[%d] = %d",
                           fn, i, i, psizes[i]);
            break;
        default:
            return ERR(MPI_ERR_ARG, "%s: array_of_distribs[%d] = %d is not a distribution", fn,
                       i, distribs[i]);
        }
        nprocs *= psizes[i];
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return ERR(MPI_ERR_ARG, "%s: the process grid does not have size %d processes", fn, size);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return ERR(MPI_ERR_ARG, "%s: order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", fn,
                   order);
    if (ndims > 0x7fffffff / 4 - 1)
        return ERR(MPI_ERR_ARG, "%s: ndims %d is too large", fn, ndims);
    return MPI_SUCCESS;
}

static int darray(const char *fn, int size, int rank, int ndims, const MPI_Count *array_of_gsizes,
                  const int array_of_distribs[], const int array_of_dargs[],
                  const int array_of_psizes[], int order, MPI_Datatype oldtype,
                  MPI_Datatype *newtype, bool large)
{
    int rc = darray_check(fn, size, rank, ndims, array_of_gsizes, array_of_distribs,
                          array_of_dargs, array_of_psizes, order);
    if (rc)
        return rc;
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype");
    if (!old)
        return MPI_ERR_TYPE;
    if (!newtype)
        return ERR(MPI_ERR_ARG, "%s: newtype is NULL", fn);

    int *dims = malloc((size_t)ndims * 2 * sizeof *dims), *coords = dims + ndims;
    if (!dims)
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    /* Process grid coordinates, row-major as MPI_Cart_create numbers them. */
    for (int i = 0, left = rank, procs = size; i < ndims; i++) {
        procs /= array_of_psizes[i];
        coords[i] = left / procs;
        left %= procs;
    }
    dim_order(ndims, order, dims);
    MPI_Aint slice = old->extent;
    struct pm_datatype *t = old;
    pm_type_retain(t);
    for (int k = 0; k < ndims && !rc; k++) {
        int d = dims[k];
        MPI_Count g = array_of_gsizes[d];
        struct dimspec s;
        if (array_of_distribs[d] == MPI_DISTRIBUTE_CYCLIC)
            dim_cyclic(g, array_of_psizes[d], coords[d], array_of_dargs[d], &s);
        else if (array_of_distribs[d] == MPI_DISTRIBUTE_BLOCK)
            dim_block(g, array_of_psizes[d], coords[d], array_of_dargs[d], &s);
        else
            dim_block(g, 1, 0, MPI_DISTRIBUTE_DFLT_DARG, &s);
        if (!(rc = dim_type(fn, &s, slice, g, &t)))
            slice = t->extent;
    }
    free(dims);
    if (rc)
        return rc;

    /* ints: size, rank, ndims, [gsizes,] distribs, dargs, psizes, order; the
     * large-count form keeps the gsizes apart */
    int ng = large ? 0 : ndims, ni = 3 * ndims + ng + 4;
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (!ints) {
        pm_type_release(t);
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int i = 0; i < ng; i++)
        ints[3 + i] = (int)array_of_gsizes[i];
    memcpy(ints + 3 + ng, array_of_distribs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ng + ndims, array_of_dargs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ng + 2 * ndims, array_of_psizes, (size_t)ndims * sizeof(int));
    ints[ni - 1] = order;
    rc = publish(fn, t, MPI_COMBINER_DARRAY, ni, ints, large ? ndims : 0,
                 large ? array_of_gsizes : NULL, old, newtype);
    free(ints);
    return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_darray";
    PM_CHECK_INIT(fn);
    if (ndims <= 0)
        return ERR(MPI_ERR_ARG, "%s: ndims %d is not positive", fn, ndims);
    if (!array_of_gsizes)
        return ERR(MPI_ERR_ARG, "%s: an array argument is NULL", fn);
    MPI_Count *g = malloc((size_t)ndims * sizeof *g);
    if (!g)
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < ndims; i++)
        g[i] = array_of_gsizes[i];
    int rc = darray(fn, size, rank, ndims, g, array_of_distribs, array_of_dargs,
                    array_of_psizes, order, oldtype, newtype, false);
    free(g);
    return rc;
}
PM_WEAK(Type_create_darray)

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    PM_CHECK_INIT("MPI_Type_create_darray_c");
    return darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes,
                  array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype,
                  true);
}
PM_WEAK(Type_create_darray_c)
