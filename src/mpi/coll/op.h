/*
 * op.h — what op.c (operation objects, checks, application over datatypes)
 * shares with op_kernels.c (the loops of the predefined operations).
 */
#ifndef PROUST_MPI_OP_H
#define PROUST_MPI_OP_H

#include <stddef.h>

#include "mpi_impl.h"

/* Index of a predefined operation (1..14) in its handle. */
#define PM_OPI(op) ((op) & PROUST_MPI_INDEX_MASK)

/* inout[i] = in[i] op inout[i] for n elements of one predefined type. */
typedef void pm_op_kernel(const void *in, void *inout, size_t n);

/* Classes of predefined types (MPI-3.1 §5.9.2). */
enum {
    PM_TC_CINT = 1 << 0,    /* C integer */
    PM_TC_FINT = 1 << 1,    /* Fortran integer (MPI_AINT, OFFSET, COUNT too) */
    PM_TC_FLOAT = 1 << 2,   /* floating point */
    PM_TC_LOGICAL = 1 << 3, /* C_BOOL, CXX_BOOL, LOGICAL */
    PM_TC_COMPLEX = 1 << 4,
    PM_TC_BYTE = 1 << 5,
    PM_TC_PAIR = 1 << 6,    /* value-index pairs of MINLOC/MAXLOC */
};

/* What reductions need to know of a predefined type. `size`/`align` are
 * those of the C type (for a pair: the struct, padding included); the data
 * bytes of one element are `nsub` runs (a pair such as MPI_SHORT_INT has a
 * hole between value and index), in type-map order. */
struct pm_op_type {
    const char *name;
    unsigned cls;
    unsigned short size, align;
    unsigned char nsub;
    struct {
        unsigned short disp, len;
    } sub[2];
    pm_op_kernel *const *kernels; /* by operation index; NULL: undefined */
};
extern const struct pm_op_type pm_op_types[PROUST_MPI_NUM_PREDEFINED_TYPES];

#endif /* PROUST_MPI_OP_H */
