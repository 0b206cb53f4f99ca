/*
 * datatype_f90.c — MPI_Type_create_f90_real / _complex / _integer
 * (MPI-4.0 §19.1.9): the type of a Fortran REAL, COMPLEX or INTEGER kind
 * chosen by decimal precision p and exponent range r, as
 * SELECTED_REAL_KIND(p, r) / SELECTED_INT_KIND(r) would choose it.
 *
 * The kinds are those of gfortran on this platform: REAL 4 (p <= 6,
 * r <= 37) and 8 (p <= 15, r <= 307), COMPLEX of those, INTEGER 1, 2, 4, 8
 * (r <= 2, 4, 9, 18). Anything more is MPI_ERR_ARG (no such kind here).
 *
 * The standard makes the result behave as a predefined type whose envelope
 * says MPI_COMBINER_F90_* with p and r as contents: each (combiner, p, r)
 * gets one type, made on first request with the type map of the kind's
 * predefined type and kept for the life of the process (the same handle
 * every time, MPI_Type_free refuses it).
 */
#include <pthread.h>
#include <stdlib.h>

#include "datatype.h"

struct f90_type {
    int combiner, p, r;
    MPI_Datatype handle;
};

static pthread_mutex_t f90_lock = PTHREAD_MUTEX_INITIALIZER;
static struct f90_type *f90_made;
static size_t f90_count, f90_cap;

/* The predefined type of the kind, or MPI_DATATYPE_NULL. p or r may be
 * MPI_UNDEFINED (no requirement). */
static MPI_Datatype kind_of(int combiner, int p, int r)
{
    int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
    if (combiner == MPI_COMBINER_F90_INTEGER)
        return rr <= 2 ? MPI_INTEGER1 : rr <= 4 ? MPI_INTEGER2 : rr <= 9 ? MPI_INTEGER4
               : rr <= 18 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
    bool complex = combiner == MPI_COMBINER_F90_COMPLEX;
    if (pp <= 6 && rr <= 37)
        return complex ? MPI_COMPLEX : MPI_REAL4;
    if (pp <= 15 && rr <= 307)
        return complex ? MPI_DOUBLE_COMPLEX : MPI_REAL8;
    return MPI_DATATYPE_NULL;
}

/* A new permanent type: `base`'s type map, envelope (combiner; p, r). */
static int make(const char *fn, int combiner, int p, int r, MPI_Datatype base,
                MPI_Datatype *out)
{
    struct pm_datatype *t = pm_type_copy(pm_type_get(base));
    if (!t)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    t->name[0] = '\0';
    pm_type_clear_envelope(t);
    int ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (pm_type_set_envelope(t, combiner, ni, 0, 0, 0) != MPI_SUCCESS) {
        pm_type_release(t);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    if (ni == 1) {
        t->ints[0] = r;
    } else {
        t->ints[0] = p;
        t->ints[1] = r;
    }
    t->committed = true;
    t->permanent = true;
    return pm_type_publish(fn, t, out);
}

static int create(const char *fn, int combiner, int p, int r, MPI_Datatype *newtype)
{
    PM_CHECK_INIT(fn);
    if (!newtype)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: newtype is NULL", fn);
    bool integer = combiner == MPI_COMBINER_F90_INTEGER;
    if ((!integer && p == MPI_UNDEFINED && r == MPI_UNDEFINED) || (integer && r == MPI_UNDEFINED))
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %s", fn,
                        integer ? "r is MPI_UNDEFINED" : "p and r are both MPI_UNDEFINED");
    if ((p < 0 && p != MPI_UNDEFINED) || (r < 0 && r != MPI_UNDEFINED))
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: negative %s (%d)", fn,
                        p < 0 && p != MPI_UNDEFINED ? "precision p" : "range r",
                        p < 0 && p != MPI_UNDEFINED ? p : r);
    MPI_Datatype base = kind_of(combiner, p, r);
    if (base == MPI_DATATYPE_NULL)
        return integer ? pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                                  "%s: no INTEGER kind has a range of 10^%d", fn, r)
                       : pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                                  "%s: no %s kind has precision %d and range %d (at most 15 "
                                  "and 307 here)",
                                  fn, combiner == MPI_COMBINER_F90_COMPLEX ? "COMPLEX" : "REAL",
                                  p, r);
    if (integer)
        p = MPI_UNDEFINED; /* not part of the key */
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&f90_lock);
    for (size_t i = 0; i < f90_count; i++) {
        const struct f90_type *f = &f90_made[i];
        if (f->combiner == combiner && f->p == p && f->r == r) {
            *newtype = f->handle;
            pthread_mutex_unlock(&f90_lock);
            return MPI_SUCCESS;
        }
    }
    if (f90_count == f90_cap) {
        size_t cap = f90_cap ? 2 * f90_cap : 8;
        struct f90_type *n = realloc(f90_made, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&f90_lock);
            return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        }
        f90_made = n;
        f90_cap = cap;
    }
    MPI_Datatype h;
    rc = make(fn, combiner, p, r, base, &h);
    if (rc == MPI_SUCCESS) {
        f90_made[f90_count++] = (struct f90_type){combiner, p, r, h};
        *newtype = h;
    }
    pthread_mutex_unlock(&f90_lock);
    return rc;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return create("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}
PM_WEAK(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return create("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}
PM_WEAK(Type_create_f90_complex)

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    return create("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r,
                  newtype);
}
PM_WEAK(Type_create_f90_integer)
