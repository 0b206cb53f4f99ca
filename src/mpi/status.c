/*
 * status.c — what a status says: element counts, and the setters used by
 * generalized requests.
 */
#include <limits.h>

#include "datatype.h"
#include "mpi_impl.h"

/* Whole instances of `dt` the status received, or MPI_UNDEFINED. */
static int count_of(const char *fn, const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    struct pm_datatype *t;
    if (!status || !count)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL argument", fn);
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "%s: invalid datatype %#x", fn, (unsigned)dt);
    MPI_Count bytes = status->proust_bytes;
    if (t->size == 0)
        *count = 0;
    else if (bytes % t->size != 0)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / t->size;
    return MPI_SUCCESS;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    PM_CHECK_INIT("MPI_Get_count");
    MPI_Count n = 0;
    int rc = count_of("MPI_Get_count", status, dt, &n);
    if (rc == MPI_SUCCESS)
        *count = pm_int_or_undefined(n);
    return rc;
}
PM_WEAK(Get_count)

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    PM_CHECK_INIT("MPI_Get_count_c");
    return count_of("MPI_Get_count_c", status, dt, count);
}
PM_WEAK(Get_count_c)

static int elements_of(const char *fn, const MPI_Status *status, MPI_Datatype dt,
                       MPI_Count *count)
{
    struct pm_datatype *t;
    if (!status || !count)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: NULL argument", fn);
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "%s: invalid datatype %#x", fn, (unsigned)dt);
    *count = pm_type_elements(t, status->proust_bytes);
    return MPI_SUCCESS;
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    PM_CHECK_INIT("MPI_Get_elements_x");
    return elements_of("MPI_Get_elements_x", status, dt, count);
}
PM_WEAK(Get_elements_x)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype dt, MPI_Count *count)
{
    PM_CHECK_INIT("MPI_Get_elements_c");
    return elements_of("MPI_Get_elements_c", status, dt, count);
}
PM_WEAK(Get_elements_c)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype dt, int *count)
{
    PM_CHECK_INIT("MPI_Get_elements");
    MPI_Count n = 0;
    int rc = elements_of("MPI_Get_elements", status, dt, &n);
    if (rc == MPI_SUCCESS)
        *count = pm_int_or_undefined(n);
    return rc;
}
PM_WEAK(Get_elements)

/* MPI_Status_set_elements and its _x (MPI-3) and _c (MPI-4) forms. */
static int set_elements(const char *fn, MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
    PM_CHECK_INIT(fn);
    struct pm_datatype *t;
    if (!status)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: status is NULL", fn);
    if (count < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: negative count %lld", fn,
                        (long long)count);
    int rc = pm_type_check(dt, &t);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "%s: invalid datatype %#x", fn, (unsigned)dt);
    status->proust_bytes = pm_type_element_bytes(t, count);
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype dt, int count)
{
    return set_elements("MPI_Status_set_elements", status, dt, count);
}
PM_WEAK(Status_set_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, dt, count);
}
PM_WEAK(Status_set_elements_x)

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype dt, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_c", status, dt, count);
}
PM_WEAK(Status_set_elements_c)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    PM_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled: status is NULL");
    status->proust_cancelled = flag != 0;
    return MPI_SUCCESS;
}
PM_WEAK(Status_set_cancelled)

