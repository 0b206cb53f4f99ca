/*
 * deprecated.c — MPI-1 functions that MPI-3.0 removed but that old programs
 * (and MPICH's own test suite) still call; MPICH and Open MPI keep them.
 * Each is its MPI-2 replacement under the old name: MPI_Address,
 * MPI_Type_hvector, MPI_Type_hindexed, MPI_Type_struct, MPI_Type_extent,
 * MPI_Type_lb, MPI_Type_ub, MPI_Errhandler_create, _set and _get. (The
 * MPI_LB / MPI_UB markers are predefined types: datatype_predef.c.)
 */
#include "mpi_impl.h"

int PMPI_Address(void *location, MPI_Aint *address)
{
    return PMPI_Get_address(location, address);
}
PM_WEAK(Address)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
PM_WEAK(Type_hvector)

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                     newtype);
}
PM_WEAK(Type_hindexed)

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}
PM_WEAK(Type_struct)

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, extent ? &lb : NULL, extent);
}
PM_WEAK(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, displacement ? &extent : NULL);
}
PM_WEAK(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(datatype, displacement ? &lb : NULL, &extent);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}
PM_WEAK(Type_ub)

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_create_errhandler(function, errhandler);
}
PM_WEAK(Errhandler_create)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
PM_WEAK(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
PM_WEAK(Errhandler_get)
