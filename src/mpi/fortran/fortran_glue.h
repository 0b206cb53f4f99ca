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

#include <mpi.h>

/* The C value of a sentinel of mpif.h passed by address (MPI_BOTTOM,
 * MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE: f77_sentinels.c), else p. */
void *pm_f_sentinel_c(const void *p);

/* A choice buffer as C wants it. */
static inline void *pm_f_buffer(const void *p)
{
    return pm_f_sentinel_c(p);
}

/* Is this status argument MPI_STATUS_IGNORE or MPI_STATUSES_IGNORE? */
static inline bool pm_f_ignored(const MPI_Fint *status)
{
    return pm_f_sentinel_c(status) != (const void *)status;
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

#endif
