/* mpio.h — MPI-IO's declarations are in mpi.h; this header is for
 * programs written for MPICH (ROMIO), which include it by name. */
#ifndef PROUST_MPIO_H
#define PROUST_MPIO_H
#include <mpi.h>
#endif
