/*
 * fortran_f08.c — mpi_f08's choice buffers: a TYPE(*), DIMENSION(..)
 * argument arrives as a descriptor (ISO_Fortran_binding.h, TS 29113). A
 * contiguous one is its base address. A non-contiguous array section
 * a(1:n:2) is, as the standard says (MPI-4.1 19.1.12), as if copied into
 * a contiguous buffer that (count, datatype) then describes: where the
 * datatype is one element of the array, that is a datatype over the
 * section's own elements (buffer() below), so nothing is copied and
 * nonblocking calls work on sections too (MPI_SUBARRAYS_SUPPORTED).
 */
#include <ISO_Fortran_binding.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fortran_glue.h"

/* A section refused: the specific raises MPI_ERR_BUFFER on the call's
 * communicator or window (mpi_f08_wrappers.f90); the message says why. */
static MPI_Fint buffer_error(const char *why)
{
    fprintf(stderr, "[proust mpi] mpi_f08 choice buffer: %s\n", why);
    return MPI_ERR_BUFFER;
}

static int contiguous(const CFI_cdesc_t *d)
{
    return d->rank == 0 || CFI_is_contiguous(d);
}

/* The address and (count, datatype) a call gets for a buffer descriptor.
 * per_rank: count is each rank's share of the buffer (MPI_Gather's
 * recvcount & co.), not all of it. A 1-D section with a positive stride is
 * the datatype resized to the stride, with the same count: right for any
 * call. Another section is a datatype of its first `count` elements
 * (count becomes 1), which needs count to be all of the buffer. */
static void buffer(const CFI_cdesc_t *d, MPI_Count count, MPI_Fint datatype, bool per_rank,
                   intptr_t *addr, MPI_Count *newcount, MPI_Fint *newtype, MPI_Fint *ierror)
{
    *addr = (intptr_t)d->base_addr;
    *newcount = count;
    *newtype = datatype;
    *ierror = MPI_SUCCESS;
    if (contiguous(d) || count <= 0)
        return;
    MPI_Count elements = 1;
    for (int r = 0; r < d->rank; r++)
        elements *= (MPI_Count)d->dim[r].extent;
    MPI_Aint lb = 0, extent = 0;
    MPI_Count size = 0;
    if (MPI_Type_get_extent(datatype, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_size_c(datatype, &size) != MPI_SUCCESS) {
        *ierror = MPI_ERR_TYPE;
        return;
    }
    if (lb != 0 || extent != (MPI_Aint)d->elem_len || size != extent) {
        *ierror = buffer_error("a non-contiguous section needs a datatype of exactly one of "
                               "its elements (same size and extent, no holes)");
        return;
    }
    MPI_Datatype section;
    if (d->rank == 1 && d->dim[0].sm > 0) {
        if (!per_rank && count > elements) {
            *ierror = buffer_error("count is larger than the section");
            return;
        }
        int rc = MPI_Type_create_resized(datatype, 0, (MPI_Aint)d->dim[0].sm, &section);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&section);
        *ierror = rc;
        if (rc == MPI_SUCCESS)
            *newtype = section;
        return;
    }
    if (per_rank) {
        *ierror = buffer_error("where count is each rank's share, a section must have one "
                               "dimension and a positive stride");
        return;
    }
    if (count > elements) {
        *ierror = buffer_error("count is larger than the section");
        return;
    }
    /* The addresses of the first `count` elements, in array element order
     * (the first index varies fastest). */
    MPI_Count *displs = malloc((size_t)count * sizeof *displs);
    if (!displs) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    CFI_index_t index[CFI_MAX_RANK] = {0};
    for (MPI_Count k = 0; k < count; k++) {
        MPI_Count at = 0;
        for (int r = 0; r < d->rank; r++)
            at += (MPI_Count)index[r] * (MPI_Count)d->dim[r].sm;
        displs[k] = at;
        for (int r = 0; r < d->rank && ++index[r] == d->dim[r].extent; r++)
            index[r] = 0;
    }
    int rc = MPI_Type_create_hindexed_block_c(count, 1, displs, datatype, &section);
    free(displs);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&section);
    if (rc != MPI_SUCCESS) {
        *ierror = rc;
        return;
    }
    *newcount = 1;
    *newtype = section;
}

void proust_f08_buffer(const CFI_cdesc_t *d, const MPI_Fint *count, const MPI_Fint *datatype,
                       const MPI_Fint *per_rank, intptr_t *addr, MPI_Fint *newcount,
                       MPI_Fint *newtype, MPI_Fint *ierror);
void proust_f08_buffer(const CFI_cdesc_t *d, const MPI_Fint *count, const MPI_Fint *datatype,
                       const MPI_Fint *per_rank, intptr_t *addr, MPI_Fint *newcount,
                       MPI_Fint *newtype, MPI_Fint *ierror)
{
    MPI_Count n = 0;
    buffer(d, *count, *datatype, *per_rank != 0, addr, &n, newtype, ierror);
    *newcount = (MPI_Fint)n; /* *count, or 1 */
}

/* The large-count form (MPI_Send_c & co). */
void proust_f08_buffer_c(const CFI_cdesc_t *d, const MPI_Count *count, const MPI_Fint *datatype,
                         const MPI_Fint *per_rank, intptr_t *addr, MPI_Count *newcount,
                         MPI_Fint *newtype, MPI_Fint *ierror);
void proust_f08_buffer_c(const CFI_cdesc_t *d, const MPI_Count *count, const MPI_Fint *datatype,
                         const MPI_Fint *per_rank, intptr_t *addr, MPI_Count *newcount,
                         MPI_Fint *newtype, MPI_Fint *ierror)
{
    buffer(d, *count, *datatype, *per_rank != 0, addr, newcount, newtype, ierror);
}

/* After the call: a datatype made for a section goes (a nonblocking
 * operation keeps what it needs: freeing a datatype in use is allowed). */
void proust_f08_buffer_done(const MPI_Fint *datatype, const MPI_Fint *newtype);
void proust_f08_buffer_done(const MPI_Fint *datatype, const MPI_Fint *newtype)
{
    if (*newtype != *datatype) {
        MPI_Datatype t = *newtype;
        MPI_Type_free(&t);
    }
}

/* A buffer with no (count, datatype) of its own (v and w collectives'
 * displacements, MPI_Win_create's base...): contiguous only. */
void proust_f08_address(const CFI_cdesc_t *d, intptr_t *addr, MPI_Fint *ierror);
void proust_f08_address(const CFI_cdesc_t *d, intptr_t *addr, MPI_Fint *ierror)
{
    *addr = (intptr_t)d->base_addr;
    *ierror = contiguous(d) ? MPI_SUCCESS
                            : buffer_error("this argument takes contiguous arrays only");
}

/* MPI_F_sync_reg's mpi_f08 form: a call the compiler cannot see into. */
void proust_f08_sync_reg(const CFI_cdesc_t *d);
void proust_f08_sync_reg(const CFI_cdesc_t *d)
{
    __asm__ volatile("" : : "r"(d) : "memory");
}
