/*
 * attr_language.h — which language an attribute call comes from, which
 * the Fortran bindings (libmpifort) say around theirs (MPI-4.1 19.3.7): a
 * value set from Fortran is an integer, and C reads it through a pointer
 * to the stored integer; Fortran reads what C stored (a pointer) as an
 * integer. Per thread: a callback that calls MPI runs on the same thread.
 */
#ifndef PROUST_MPI_ATTR_LANGUAGE_H
#define PROUST_MPI_ATTR_LANGUAGE_H

enum {
    PROUST_MPI_ATTR_C,            /* void * values */
    PROUST_MPI_ATTR_FORTRAN_AINT, /* INTEGER(KIND=MPI_ADDRESS_KIND): MPI_COMM_SET_ATTR & co */
    PROUST_MPI_ATTR_FORTRAN_INT   /* INTEGER: MPI-1's MPI_ATTR_PUT */
};

/* The calling thread's attribute calls come from lang from now on; returns
 * the language before, to restore once the call is done. */
int proust_mpi_attr_language(int lang);

/* A keyval just made from Fortran: its callbacks are trampolines that take
 * stored values as they are (C's get a pointer to a value Fortran set),
 * and free_extra(extra_state) runs when the keyval goes (freed, and no
 * attribute holds it). MPI_ERR_KEYVAL if there is no such keyval. */
int proust_mpi_keyval_fortran(int keyval, void (*free_extra)(void *extra_state));

#endif
