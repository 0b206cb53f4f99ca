/*
 * status.c — what a status says: element counts, and the setters used by
 * generalized requests.
 */
#include "datatype.h"
#include "mpi_impl.h"

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    PM_CHECK_INIT("MPI_Get_count");
    struct pm_datatype *t;
    if (!status || !count)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_count: NULL argument");
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "MPI_Get_count: invalid datatype %#x", (unsigned)dt);
    MPI_Count bytes = status->proust_bytes;
    if (t->size == 0)
        *count = 0;
    else if (bytes % t->size != 0 || bytes / t->size > 0x7fffffff)
        *count = MPI_UNDEFINED;
    else
        *count = (int)(bytes / t->size);
    return MPI_SUCCESS;
}
PM_WEAK(Get_count)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    PM_CHECK_INIT("MPI_Get_elements_x");
    struct pm_datatype *t;
    if (!status || !count)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_elements_x: NULL argument");
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "MPI_Get_elements_x: invalid datatype %#x",
                        (unsigned)dt);
    *count = pm_type_elements(t, status->proust_bytes);
    return MPI_SUCCESS;
}
PM_WEAK(Get_elements_x)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    PM_CHECK_INIT("MPI_Get_elements");
    MPI_Count n;
    int rc = PMPI_Get_elements_x(status, dt, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    *count = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
PM_WEAK(Get_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
    PM_CHECK_INIT("MPI_Status_set_elements_x");
    struct pm_datatype *t;
    if (!status || count < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_elements_x: bad argument");
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "MPI_Status_set_elements_x: invalid datatype %#x",
                        (unsigned)dt);
    status->proust_bytes = pm_type_element_bytes(t, count);
    return MPI_SUCCESS;
}
PM_WEAK(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dt, int count)
{
    PM_CHECK_INIT("MPI_Status_set_elements");
    return PMPI_Status_set_elements_x(status, dt, count);
}
PM_WEAK(Status_set_elements)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    PM_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled: status is NULL");
    status->proust_cancelled = flag != 0;
    return MPI_SUCCESS;
}
PM_WEAK(Status_set_cancelled)

