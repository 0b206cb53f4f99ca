/*
 * file_datarep.c — data representations of files (MPI-4.1 14.5): "native"
 * (memory's bytes), "internal" (here the same as native: the file is only
 * read back by Proust on the same kind of machine), "external32" (the
 * standard's big-endian format, converted by MPI_Pack_external), and those
 * an application registers with MPI_Register_datarep (its conversion
 * callbacks; MPI_CONVERSION_FN_NULL: no conversion).
 *
 * A representation may give elements another size in the file than in
 * memory (external32's MPI_LONG is 4 bytes; a registered one says through
 * its extent function): a view of one basic type is then laid out scaled
 * (pm_datarep_scale). A type mixing basic types is accepted when every
 * element keeps its size; otherwise MPI_File_set_view refuses it with
 * MPI_ERR_UNSUPPORTED_DATAREP and says why.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"

#define PM_MAX_DATAREPS 64

static struct pm_datarep builtin[] = {
    {.name = "native", .kind = PM_REP_NATIVE},
    {.name = "internal", .kind = PM_REP_INTERNAL},
    {.name = "external32", .kind = PM_REP_EXTERNAL32},
};
static struct pm_datarep *user_reps[PM_MAX_DATAREPS];
static int nuser;
static atomic_flag reps_lock = ATOMIC_FLAG_INIT;

const struct pm_datarep *pm_datarep_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (!strcmp(builtin[i].name, name))
            return &builtin[i];
    const struct pm_datarep *found = NULL;
    pm_lock(&reps_lock);
    for (int i = 0; i < nuser && !found; i++)
        if (!strcmp(user_reps[i]->name, name))
            found = user_reps[i];
    pm_unlock(&reps_lock);
    return found;
}

/* The file extent of predefined type `basic` under rep, or -1. */
static MPI_Offset file_extent(const struct pm_datarep *rep, MPI_Datatype basic)
{
    if (rep->kind == PM_REP_EXTERNAL32) {
        MPI_Count ext = 0;
        return PMPI_Pack_external_size_c("external32", 1, basic, &ext) == MPI_SUCCESS ? ext : -1;
    }
    if (rep->kind == PM_REP_USER && rep->extent_fn) {
        MPI_Aint e = 0;
        return rep->extent_fn(basic, &e, rep->extra_state) == MPI_SUCCESS && e > 0 ? e : -1;
    }
    return pm_type_get(basic)->size;
}

int pm_datarep_scale(const struct pm_datarep *rep, struct pm_datatype *t, MPI_Offset *num,
                     MPI_Offset *den, char *why, size_t whylen)
{
    *num = *den = 1;
    if (rep->kind == PM_REP_NATIVE || rep->kind == PM_REP_INTERNAL)
        return MPI_SUCCESS;
    if (t->basic) {
        MPI_Datatype basic = PROUST_MPI_TYPE(t->basic);
        MPI_Offset fe = file_extent(rep, basic), me = pm_type_get(basic)->size;
        if (fe < 0) {
            snprintf(why, whylen, "data representation \"%s\" has no extent for type %#x",
                     rep->name, (unsigned)basic);
            return MPI_ERR_UNSUPPORTED_DATAREP;
        }
        if (fe != me) {
            *num = fe;
            *den = me;
        }
        return MPI_SUCCESS;
    }
    /* several basic types: each must keep its size */
    if (rep->kind == PM_REP_EXTERNAL32) {
        MPI_Count ext = 0;
        if (PMPI_Pack_external_size_c("external32", 1, t->handle, &ext) == MPI_SUCCESS &&
            ext == t->size)
            return MPI_SUCCESS;
    } else if (rep->kind == PM_REP_USER) {
        return MPI_SUCCESS; /* the callbacks' business: as memory */
    }
    snprintf(why, whylen, "type %#x mixes basic types whose sizes differ in \"%s\": Proust "
             "lays such a view out only when every element keeps its size", (unsigned)t->handle,
             rep->name);
    return MPI_ERR_UNSUPPORTED_DATAREP;
}

int pm_datarep_to_file(const struct pm_datarep *rep, const void *ubuf, MPI_Count count,
                       MPI_Datatype dt, void *fbuf, MPI_Offset position)
{
    struct pm_datatype *t = pm_type_get(dt);
    MPI_Count bytes = count * t->size;
    if (rep->kind == PM_REP_EXTERNAL32) {
        MPI_Count pos = 0, ext = 0;
        int rc = PMPI_Pack_external_size_c("external32", count, dt, &ext);
        return rc != MPI_SUCCESS
                   ? rc
                   : PMPI_Pack_external_c("external32", ubuf, count, dt, fbuf, ext, &pos);
    }
    if (rep->kind == PM_REP_USER && (rep->write_fn || rep->write_fn_c)) {
        MPI_Count items = count * t->nelements;
        if (rep->write_fn_c)
            return rep->write_fn_c((void *)ubuf, dt, items, fbuf, position * t->nelements,
                                   rep->extra_state);
        if (items > INT32_MAX)
            return MPI_ERR_CONVERSION;
        return rep->write_fn((void *)ubuf, dt, (int)items, fbuf, position * t->nelements,
                             rep->extra_state);
    }
    pm_type_pack(ubuf, count, t, 0, fbuf, (size_t)bytes);
    return MPI_SUCCESS;
}

int pm_datarep_from_file(const struct pm_datarep *rep, void *ubuf, MPI_Count count,
                         MPI_Datatype dt, const void *fbuf, MPI_Offset position)
{
    struct pm_datatype *t = pm_type_get(dt);
    MPI_Count bytes = count * t->size;
    if (rep->kind == PM_REP_EXTERNAL32) {
        MPI_Count pos = 0, ext = 0;
        int rc = PMPI_Pack_external_size_c("external32", count, dt, &ext);
        return rc != MPI_SUCCESS
                   ? rc
                   : PMPI_Unpack_external_c("external32", fbuf, ext, &pos, ubuf, count, dt);
    }
    if (rep->kind == PM_REP_USER && (rep->read_fn || rep->read_fn_c)) {
        MPI_Count items = count * t->nelements;
        if (rep->read_fn_c)
            return rep->read_fn_c(ubuf, dt, items, (void *)fbuf, position * t->nelements,
                                  rep->extra_state);
        if (items > INT32_MAX)
            return MPI_ERR_CONVERSION;
        return rep->read_fn(ubuf, dt, (int)items, (void *)fbuf, position * t->nelements,
                            rep->extra_state);
    }
    pm_type_unpack(fbuf, (size_t)bytes, ubuf, count, t, 0);
    return MPI_SUCCESS;
}

static int register_rep(const char *datarep, MPI_Datarep_conversion_function *rd,
                        MPI_Datarep_conversion_function *wr,
                        MPI_Datarep_conversion_function_c *rd_c,
                        MPI_Datarep_conversion_function_c *wr_c,
                        MPI_Datarep_extent_function *extent, void *extra, const char *fn)
{
    PM_CHECK_INIT(fn);
    if (!datarep || !*datarep || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return pm_file_error(NULL, MPI_ERR_ARG, "%s: the name must have 1 to %d characters",
                             fn, MPI_MAX_DATAREP_STRING - 1);
    if (!extent)
        return pm_file_error(NULL, MPI_ERR_ARG, "%s: dtype_file_extent_fn is NULL", fn);
    struct pm_datarep *r = calloc(1, sizeof *r);
    if (!r)
        return pm_file_error(NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    strcpy(r->name, datarep);
    r->kind = PM_REP_USER;
    r->read_fn = rd;
    r->write_fn = wr;
    r->read_fn_c = rd_c;
    r->write_fn_c = wr_c;
    r->extent_fn = extent;
    r->extra_state = extra;
    int rc = MPI_SUCCESS;
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (!strcmp(builtin[i].name, datarep))
            rc = MPI_ERR_DUP_DATAREP;
    pm_lock(&reps_lock);
    for (int i = 0; i < nuser && rc == MPI_SUCCESS; i++)
        if (!strcmp(user_reps[i]->name, datarep))
            rc = MPI_ERR_DUP_DATAREP;
    if (rc == MPI_SUCCESS && nuser == PM_MAX_DATAREPS)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        user_reps[nuser++] = r; /* lives until the process ends: views use it */
    pm_unlock(&reps_lock);
    if (rc == MPI_SUCCESS)
        return rc;
    free(r);
    return pm_file_error(NULL, rc, rc == MPI_ERR_DUP_DATAREP
                                       ? "%s: data representation \"%s\" is already defined"
                                       : "%s: too many data representations (\"%s\")",
                         fn, datarep);
}

int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_rep(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL,
                        dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}
PM_WEAK(Register_datarep)

int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return register_rep(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn,
                        dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}
PM_WEAK(Register_datarep_c)
