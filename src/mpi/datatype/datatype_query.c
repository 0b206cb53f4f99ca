/*
 * datatype_query.c — what can be asked of a datatype and its lifetime:
 * size, extent and true extent (int/Aint, _x and MPI-4 _c forms), envelope
 * and contents (with the large counts of the _c constructors), names, commit, free and dup; and the address helpers
 * (MPI_Get_address, MPI_Aint_add, MPI_Aint_diff).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

#define ERR(code, ...) pm_error(MPI_COMM_NULL, code, __VA_ARGS__)

static int null_arg(const char *fn, const char *what)
{
    return ERR(MPI_ERR_ARG, "%s: %s is NULL", fn, what);
}

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    static const char fn[] = "MPI_Type_size";
    PM_CHECK_INIT(fn);
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!size)
        return null_arg(fn, "size");
    *size = pm_int_or_undefined(t->size);
    return MPI_SUCCESS;
}
PM_WEAK(Type_size)

/* MPI_Type_size_x (MPI-3) and MPI_Type_size_c (MPI-4): the same query. */
static int count_size(const char *fn, MPI_Datatype datatype, MPI_Count *size)
{
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!size)
        return null_arg(fn, "size");
    *size = t->size;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    PM_CHECK_INIT("MPI_Type_size_x");
    return count_size("MPI_Type_size_x", datatype, size);
}
PM_WEAK(Type_size_x)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    PM_CHECK_INIT("MPI_Type_size_c");
    return count_size("MPI_Type_size_c", datatype, size);
}
PM_WEAK(Type_size_c)

/* The type whose bounds an extent query reads, once its output pointers
 * `a` and `b` are checked; NULL with *rc the raised error. */
static const struct pm_datatype *bounds_of(const char *fn, MPI_Datatype datatype, const void *a,
                                           const void *b, bool true_bounds, int *rc)
{
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    *rc = MPI_ERR_TYPE;
    if (!t)
        return NULL;
    if (!a || !b) {
        *rc = null_arg(fn, !a ? (true_bounds ? "true_lb" : "lb")
                              : (true_bounds ? "true_extent" : "extent"));
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return t;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    PM_CHECK_INIT("MPI_Type_get_extent");
    int rc;
    const struct pm_datatype *t = bounds_of("MPI_Type_get_extent", datatype, lb, extent, false, &rc);
    if (t) {
        *lb = t->lb;
        *extent = t->extent;
    }
    return rc;
}
PM_WEAK(Type_get_extent)

/* The MPI_Count forms (_x of MPI-3, _c of MPI-4) of the two extents. */
static int count_bounds(const char *fn, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent,
                        bool true_bounds)
{
    int rc;
    const struct pm_datatype *t = bounds_of(fn, datatype, lb, extent, true_bounds, &rc);
    if (t) {
        *lb = true_bounds ? t->true_lb : t->lb;
        *extent = true_bounds ? t->true_extent : t->extent;
    }
    return rc;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PM_CHECK_INIT("MPI_Type_get_extent_x");
    return count_bounds("MPI_Type_get_extent_x", datatype, lb, extent, false);
}
PM_WEAK(Type_get_extent_x)

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    PM_CHECK_INIT("MPI_Type_get_extent_c");
    return count_bounds("MPI_Type_get_extent_c", datatype, lb, extent, false);
}
PM_WEAK(Type_get_extent_c)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    PM_CHECK_INIT("MPI_Type_get_true_extent");
    int rc;
    const struct pm_datatype *t =
        bounds_of("MPI_Type_get_true_extent", datatype, true_lb, true_extent, true, &rc);
    if (t) {
        *true_lb = t->true_lb;
        *true_extent = t->true_extent;
    }
    return rc;
}
PM_WEAK(Type_get_true_extent)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    PM_CHECK_INIT("MPI_Type_get_true_extent_x");
    return count_bounds("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true);
}
PM_WEAK(Type_get_true_extent_x)

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    PM_CHECK_INIT("MPI_Type_get_true_extent_c");
    return count_bounds("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, true);
}
PM_WEAK(Type_get_true_extent_c)

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    static const char fn[] = "MPI_Type_get_envelope";
    PM_CHECK_INIT(fn);
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return null_arg(fn, "an output argument");
    if (t->nc)
        return ERR(MPI_ERR_TYPE,
                   "%s: datatype %#x was made by a large-count constructor: its contents "
                   "have large counts, which only MPI_Type_get_envelope_c reports",
                   fn, (unsigned)datatype);
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    static const char fn[] = "MPI_Type_get_envelope_c";
    PM_CHECK_INIT(fn);
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return null_arg(fn, "an output argument");
    *num_integers = t->ni;
    *num_addresses = t->na;
    *num_large_counts = t->nc;
    *num_datatypes = t->nd;
    *combiner = t->combiner;
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_envelope_c)

/* The contents of `datatype` into arrays the caller sized (max_*). */
static int contents(const char *fn, MPI_Datatype datatype, MPI_Count max_integers,
                    MPI_Count max_addresses, MPI_Count max_large_counts, MPI_Count max_datatypes,
                    int array_of_integers[], MPI_Aint array_of_addresses[],
                    MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (t->combiner == MPI_COMBINER_NAMED)
        return ERR(MPI_ERR_TYPE, "%s: datatype %#x is predefined (combiner MPI_COMBINER_NAMED)",
                   fn, (unsigned)datatype);
    if (max_integers < t->ni || max_addresses < t->na || max_large_counts < t->nc ||
        max_datatypes < t->nd)
        return ERR(MPI_ERR_ARG,
                   "%s: the arrays hold %lld integers, %lld addresses, %lld large counts, %lld "
                   "datatypes; the envelope has %d, %d, %d, %d",
                   fn, (long long)max_integers, (long long)max_addresses,
                   (long long)max_large_counts, (long long)max_datatypes, t->ni, t->na, t->nc,
                   t->nd);
    if ((t->ni && !array_of_integers) || (t->na && !array_of_addresses) ||
        (t->nc && !array_of_large_counts) || (t->nd && !array_of_datatypes))
        return null_arg(fn, "an output array");
    /* Derived inner types come back as new objects (the user frees them):
     * make them all first so that a failure leaves nothing behind. */
    struct pm_datatype **inner = pm_type_x(t)->inner;
    for (int i = 0; i < t->nd; i++) {
        if (inner[i]->predefined) {
            array_of_datatypes[i] = inner[i]->handle;
            continue;
        }
        struct pm_datatype *c = pm_type_copy(inner[i]);
        int h = c ? pm_table_add(&pm_type_table, c) : 0;
        if (!h) {
            if (c)
                pm_type_release(c);
            for (int j = 0; j < i; j++) {
                struct pm_datatype *o = pm_type_get(array_of_datatypes[j]);
                if (o && !o->predefined) {
                    pm_table_remove(&pm_type_table, array_of_datatypes[j]);
                    pm_type_release(o);
                }
            }
            return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
        }
        c->handle = h;
        array_of_datatypes[i] = h;
    }
    if (t->ni)
        memcpy(array_of_integers, t->ints, (size_t)t->ni * sizeof(int));
    if (t->na)
        memcpy(array_of_addresses, t->aints, (size_t)t->na * sizeof(MPI_Aint));
    if (t->nc && array_of_large_counts) /* checked above; said again for the compiler */
        memcpy(array_of_large_counts, t->counts, (size_t)t->nc * sizeof(MPI_Count));
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents";
    PM_CHECK_INIT(fn);
    struct pm_datatype *t = pm_type_get(datatype);
    if (t && t->nc)
        return ERR(MPI_ERR_TYPE,
                   "%s: datatype %#x was made by a large-count constructor: use "
                   "MPI_Type_get_contents_c",
                   fn, (unsigned)datatype);
    return contents(fn, datatype, max_integers, max_addresses, 0, max_datatypes,
                    array_of_integers, array_of_addresses, NULL, array_of_datatypes);
}
PM_WEAK(Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                             MPI_Count max_addresses, MPI_Count max_large_counts,
                             MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    static const char fn[] = "MPI_Type_get_contents_c";
    PM_CHECK_INIT(fn);
    return contents(fn, datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                    array_of_integers, array_of_addresses, array_of_large_counts,
                    array_of_datatypes);
}
PM_WEAK(Type_get_contents_c)

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char fn[] = "MPI_Type_set_name";
    PM_CHECK_INIT(fn);
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!type_name)
        return null_arg(fn, "type_name");
    pm_lock(&pm_type_name_lock);
    pm_strlcpy(t->name, type_name, sizeof t->name); /* longer names are truncated */
    pm_unlock(&pm_type_name_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char fn[] = "MPI_Type_get_name";
    PM_CHECK_INIT(fn);
    if (datatype == MPI_DATATYPE_NULL && type_name && resultlen) { /* MPI-4.1: named too */
        *resultlen = pm_strlcpy(type_name, "MPI_DATATYPE_NULL", MPI_MAX_OBJECT_NAME);
        return MPI_SUCCESS;
    }
    struct pm_datatype *t = pm_type_arg(fn, datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (!type_name)
        return null_arg(fn, "type_name");
    if (!resultlen)
        return null_arg(fn, "resultlen");
    pm_lock(&pm_type_name_lock);
    *resultlen = pm_strlcpy(type_name, t->name, MPI_MAX_OBJECT_NAME);
    pm_unlock(&pm_type_name_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_name)

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_commit";
    PM_CHECK_INIT(fn);
    if (!datatype)
        return null_arg(fn, "datatype");
    struct pm_datatype *t = pm_type_arg(fn, *datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    /* The block list is built with the type: committing only allows its use
     * (predefined types are committed and never written). */
    if (!t->committed)
        t->committed = true;
    return MPI_SUCCESS;
}
PM_WEAK(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    static const char fn[] = "MPI_Type_free";
    PM_CHECK_INIT(fn);
    if (!datatype)
        return null_arg(fn, "datatype");
    struct pm_datatype *t = pm_type_arg(fn, *datatype, "datatype");
    if (!t)
        return MPI_ERR_TYPE;
    if (t->predefined || t->permanent)
        return ERR(MPI_ERR_TYPE, "%s: datatype %#x is predefined%s and cannot be freed", fn,
                   (unsigned)*datatype, t->permanent ? " (MPI_Type_create_f90_*)" : "");
    /* Delete callbacks run now, with the handle still valid; one that fails
     * fails the free (MPI-3.1 6.7.2). */
    int rc = pm_attrs_delete_type(t);
    if (rc != MPI_SUCCESS)
        return ERR(rc, "%s: an attribute delete callback failed (error %d)", fn, rc);
    pm_table_remove(&pm_type_table, *datatype);
    *datatype = MPI_DATATYPE_NULL;
    /* Pending operations and other types may still hold references. */
    pm_type_release(t);
    return MPI_SUCCESS;
}
PM_WEAK(Type_free)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_dup";
    PM_CHECK_INIT(fn);
    struct pm_datatype *old = pm_type_arg(fn, oldtype, "oldtype");
    if (!old)
        return MPI_ERR_TYPE;
    if (!newtype)
        return null_arg(fn, "newtype");
    struct pm_datatype *t = pm_type_copy(old);
    if (!t)
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    /* Same type map and committed state; the envelope is DUP(old); names,
     * like communicators' (MPI-3.1 6.8), are not inherited. */
    t->name[0] = '\0';
    pm_type_clear_envelope(t);
    if (pm_type_set_envelope(t, MPI_COMBINER_DUP, 0, 0, 0, 1) != MPI_SUCCESS) {
        pm_type_release(t);
        return ERR(MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    pm_type_set_inner(t, 0, old);
    MPI_Datatype h;
    int rc = pm_type_publish(fn, t, &h);
    if (rc)
        return rc;
    rc = pm_attrs_copy_type(old, t);
    if (rc != MPI_SUCCESS) {
        PMPI_Type_free(&h);
        return ERR(rc, "%s: an attribute copy callback failed (error %d)", fn, rc);
    }
    *newtype = h;
    return MPI_SUCCESS;
}
PM_WEAK(Type_dup)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    static const char fn[] = "MPI_Get_address";
    PM_CHECK_INIT(fn);
    if (!address)
        return null_arg(fn, "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
PM_WEAK(Get_address)

/* Addresses are plain byte addresses here: the arithmetic is the integer one
 * (done unsigned so that wrapping is defined). */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
PM_WEAK(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
PM_WEAK(Aint_diff)
