/*
 * fortran_glue.h — what the generated Fortran entry points
 * (f77_wrappers.c, tools/fortran/gen_fortran.py) call: sentinels passed by
 * address, statuses, 1-based indices, blank-padded strings. libmpifort is
 * a client of mpi.h only, as any MPI program.
 */
#ifndef PROUST_MPI_FORTRAN_GLUE_H
#define PROUST_MPI_FORTRAN_GLUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mpi.h>

/* The C value of a sentinel of mpif.h passed by address (MPI_BOTTOM,
 * MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE...: f77_sentinels.c), else p. */
void *pm_f_sentinel_c(const void *p);

/* The sentinels' storage (mpif.h's COMMON blocks): f77_sentinels.c. */
extern MPI_Fint proust_mpi_bottom_[], proust_mpi_in_place_[], proust_mpi_status_ignore_[],
    proust_mpi_statuses_ignore_[];

/* A choice buffer as C wants it (inline: every buffer of every call). */
static inline void *pm_f_buffer(const void *p)
{
    if (p == (const void *)proust_mpi_bottom_)
        return MPI_BOTTOM;
    if (p == (const void *)proust_mpi_in_place_)
        return MPI_IN_PLACE;
    return (void *)p;
}

/* Is this status argument MPI_STATUS_IGNORE or MPI_STATUSES_IGNORE? */
static inline bool pm_f_ignored(const MPI_Fint *status)
{
    return status == proust_mpi_status_ignore_ || status == proust_mpi_statuses_ignore_;
}

/* A Fortran status as a C one: the same MPI_F_STATUS_SIZE integers
 * (MPI_Status_f2c is a copy), so the Fortran one itself where it is
 * aligned for the C struct, else a copy in *tmp (pm_f_status_done copies
 * it back); MPI_STATUS_IGNORE for the sentinels. */
static inline MPI_Status *pm_f_status(MPI_Fint *f, MPI_Status *tmp)
{
    if (pm_f_ignored(f))
        return MPI_STATUS_IGNORE;
    if (((uintptr_t)f & (_Alignof(MPI_Status) - 1)) == 0)
        return (MPI_Status *)(void *)f;
    memcpy(tmp, f, sizeof *tmp);
    return tmp;
}

static inline void pm_f_status_done(MPI_Fint *f, const MPI_Status *c, const MPI_Status *tmp)
{
    if (c == tmp)
        memcpy(f, tmp, sizeof *tmp);
}

/* C statuses for `count` Fortran ones, as they are (a call leaves some
 * fields alone); NULL when they are ignored or count is 0, or out of
 * memory: the call then gets MPI_STATUSES_IGNORE. */
MPI_Status *pm_f_statuses(const MPI_Fint *f, int count);
/* The first n C statuses back into the Fortran array; frees c. */
void pm_f_statuses_done(MPI_Fint *f, MPI_Status *c, int n);

/* Indices of a C call made 1-based (MPI_UNDEFINED stays). */
void pm_f_index_plus_one(int *index, int n);

/* The value a Fortran program reads for the attribute C returned as `ptr`
 * (object 'c' communicator, 'w' window, 't' datatype): the predefined ones
 * are pointers to their value (the window's base is its address itself);
 * any other holds its value, as a Fortran MPI_*_set_attr stores it. */
MPI_Aint pm_f_attr_value(char object, int keyval, void *ptr);

/* A Fortran string (len characters, blank-padded) as a C one: trailing
 * blanks dropped; free() it. NULL only when out of memory. */
char *pm_f_string_in(const char *f, size_t len);
/* The same without leading blanks either (info keys and values). */
char *pm_f_string_in_info(const char *f, size_t len);
/* A buffer for a C string of at most n characters, zeroed; free() it.
 * NULL when n is negative or memory is out (the call then fails). */
char *pm_f_string_buf(long long n);
/* A C string into a Fortran one of len characters, blank-padded. */
void pm_f_string_out(const char *c, char *f, size_t len);

/* The two entry points of a procedure written by hand: mpi_x_ and its
 * profiling twin pmpi_x_, each calling x_impl(profile, args) (profile: 0
 * calls MPI_X, 1 PMPI_X). params is the parenthesised parameter list, args
 * the parenthesised argument list. */
#define PM_F_ARGS(...) __VA_ARGS__
#define PM_F_BOTH(name, params, args)                                                          \
    void mpi_##name##_ params;                                                                 \
    void mpi_##name##_ params { name##_impl(0, PM_F_ARGS args); }                              \
    void pmpi_##name##_ params;                                                                \
    void pmpi_##name##_ params { name##_impl(1, PM_F_ARGS args); }

#endif
