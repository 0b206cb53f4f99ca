/*
 * status.c — what a status says: element counts, the setters used by
 * generalized requests, and its Fortran forms.
 */
#include <limits.h>
#include <string.h>

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


/* ---- Fortran forms (MPI-4.0 §19.3.5) ------------------------------------
 * A C status is MPI_F_STATUS_SIZE ints (checked below), so each form is
 * the same integers: a copy. The *_STATUS_IGNORE values are not statuses. */
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "MPI_F_STATUS_SIZE must describe MPI_Status");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPI_F08_status size");

static int status_copy(const char *fn, const void *from, void *to)
{
    PM_CHECK_INIT(fn);
    if (!from || !to)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %s is NULL or a STATUS_IGNORE value",
                        fn, from ? "the output status" : "the input status");
    memcpy(to, from, sizeof(MPI_Status));
    return MPI_SUCCESS;
}

#define PM_STATUS_CONV(Name, From, To)                                                      \
    int PMPI_Status_##Name(const From *in, To *out)                                         \
    {                                                                                       \
        return status_copy("MPI_Status_" #Name, in, out);                                   \
    }                                                                                       \
    PM_WEAK(Status_##Name)

PM_STATUS_CONV(c2f, MPI_Status, MPI_Fint)
PM_STATUS_CONV(f2c, MPI_Fint, MPI_Status)
PM_STATUS_CONV(c2f08, MPI_Status, MPI_F08_status)
PM_STATUS_CONV(f082c, MPI_F08_status, MPI_Status)
PM_STATUS_CONV(f2f08, MPI_Fint, MPI_F08_status)
PM_STATUS_CONV(f082f, MPI_F08_status, MPI_Fint)

/* ---- field accessors (MPI-4.1 §3.2.5: for bindings that cannot reach the
 * struct's members) ------------------------------------------------------ */
#define PM_STATUS_FIELD(Field, Member)                                                      \
    int PMPI_Status_get_##Field(MPI_Status *status, int *out)                               \
    {                                                                                       \
        PM_CHECK_INIT("MPI_Status_get_" #Field);                                            \
        if (!status || !out)                                                                \
            return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_get_" #Field           \
                            ": %s is NULL", status ? #Field : "status");                    \
        *out = status->Member;                                                              \
        return MPI_SUCCESS;                                                                 \
    }                                                                                       \
    PM_WEAK(Status_get_##Field)                                                             \
    int PMPI_Status_set_##Field(MPI_Status *status, int value)                              \
    {                                                                                       \
        PM_CHECK_INIT("MPI_Status_set_" #Field);                                            \
        if (!status)                                                                        \
            return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,                                    \
                            "MPI_Status_set_" #Field ": status is NULL");                   \
        status->Member = value;                                                             \
        return MPI_SUCCESS;                                                                 \
    }                                                                                       \
    PM_WEAK(Status_set_##Field)

PM_STATUS_FIELD(source, MPI_SOURCE)
PM_STATUS_FIELD(tag, MPI_TAG)
PM_STATUS_FIELD(error, MPI_ERROR)
