/*
 * fortran_mpi1.c — the MPI-1 procedures that MPI-3 removed, in their
 * Fortran form: addresses and extents as default INTEGER. MPICH and Open
 * MPI still provide them, and old Fortran codes call them. The standard's
 * description has no entry for them, so they are written here.
 * MPI_ADDRESS is not: a 64-bit address does not fit its INTEGER, and a
 * truncated one would corrupt data sent from MPI_BOTTOM; a program that
 * calls it fails to link, where MPI_GET_ADDRESS is the answer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fortran_glue.h"

/* An address that does not fit an INTEGER is an error, never truncated. */
static int to_fint(MPI_Aint a, MPI_Fint *f)
{
    if (a < INT32_MIN || a > INT32_MAX)
        return MPI_ERR_ARG;
    *f = (MPI_Fint)a;
    return MPI_SUCCESS;
}

/* INTEGER displacements as the MPI_Aint array C wants; NULL when out of memory. */
static MPI_Aint *aint_array(const MPI_Fint *f, int n)
{
    MPI_Aint *a = malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Aint));
    for (int i = 0; a && i < n; i++)
        a[i] = f[i];
    return a;
}

static void type_hvector_impl(int profile, MPI_Fint *count, MPI_Fint *blocklength,
                              MPI_Fint *stride, MPI_Fint *oldtype, MPI_Fint *newtype,
                              MPI_Fint *ierror)
{
    *ierror = (profile ? PMPI_Type_create_hvector : MPI_Type_create_hvector)(
        *count, *blocklength, (MPI_Aint)*stride, *oldtype, newtype);
}
#define HVECTOR_PARAMS                                                                         \
    (MPI_Fint * count, MPI_Fint * blocklength, MPI_Fint * stride, MPI_Fint * oldtype,          \
     MPI_Fint * newtype, MPI_Fint * ierror)
PM_F_BOTH(type_hvector, HVECTOR_PARAMS, (count, blocklength, stride, oldtype, newtype, ierror))

static void type_hindexed_impl(int profile, MPI_Fint *count, MPI_Fint *blocklengths,
                               MPI_Fint *displacements, MPI_Fint *oldtype, MPI_Fint *newtype,
                               MPI_Fint *ierror)
{
    MPI_Aint *d = aint_array(displacements, *count);
    *ierror = !d ? MPI_ERR_NO_MEM
                 : (profile ? PMPI_Type_create_hindexed : MPI_Type_create_hindexed)(
                       *count, blocklengths, d, *oldtype, newtype);
    free(d);
}
#define HINDEXED_PARAMS                                                                        \
    (MPI_Fint * count, MPI_Fint * blocklengths, MPI_Fint * displacements, MPI_Fint * oldtype,  \
     MPI_Fint * newtype, MPI_Fint * ierror)
PM_F_BOTH(type_hindexed, HINDEXED_PARAMS,
     (count, blocklengths, displacements, oldtype, newtype, ierror))

static void type_struct_impl(int profile, MPI_Fint *count, MPI_Fint *blocklengths,
                             MPI_Fint *displacements, MPI_Fint *types, MPI_Fint *newtype,
                             MPI_Fint *ierror)
{
    MPI_Aint *d = aint_array(displacements, *count);
    *ierror = !d ? MPI_ERR_NO_MEM
                 : (profile ? PMPI_Type_create_struct : MPI_Type_create_struct)(
                       *count, blocklengths, d, types, newtype);
    free(d);
}
#define STRUCT_PARAMS                                                                          \
    (MPI_Fint * count, MPI_Fint * blocklengths, MPI_Fint * displacements, MPI_Fint * types,    \
     MPI_Fint * newtype, MPI_Fint * ierror)
PM_F_BOTH(type_struct, STRUCT_PARAMS, (count, blocklengths, displacements, types, newtype, ierror))

/* MPI_TYPE_EXTENT, _LB, _UB: parts of MPI_Type_get_extent. */
static void extent_part(int profile, MPI_Fint *type, int part, MPI_Fint *out, MPI_Fint *ierror)
{
    MPI_Aint lb = 0, extent = 0;
    *ierror = (profile ? PMPI_Type_get_extent : MPI_Type_get_extent)(*type, &lb, &extent);
    if (*ierror == MPI_SUCCESS)
        *ierror = to_fint(part == 0 ? extent : part == 1 ? lb : lb + extent, out);
}
static void type_extent_impl(int profile, MPI_Fint *type, MPI_Fint *out, MPI_Fint *ierror)
{
    extent_part(profile, type, 0, out, ierror);
}
static void type_lb_impl(int profile, MPI_Fint *type, MPI_Fint *out, MPI_Fint *ierror)
{
    extent_part(profile, type, 1, out, ierror);
}
static void type_ub_impl(int profile, MPI_Fint *type, MPI_Fint *out, MPI_Fint *ierror)
{
    extent_part(profile, type, 2, out, ierror);
}
#define EXTENT_PARAMS (MPI_Fint * type, MPI_Fint * out, MPI_Fint * ierror)
PM_F_BOTH(type_extent, EXTENT_PARAMS, (type, out, ierror))
PM_F_BOTH(type_lb, EXTENT_PARAMS, (type, out, ierror))
PM_F_BOTH(type_ub, EXTENT_PARAMS, (type, out, ierror))
