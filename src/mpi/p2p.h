/*
 * p2p.h — what the point-to-point extras (bsend.c, persistent.c, probe.c)
 * share with each other.
 */
#ifndef PROUST_MPI_P2P_H
#define PROUST_MPI_P2P_H

#include "mpi_impl.h"

/* Buffered send (bsend.c): copy `count` instances of `t` from `buf` into the
 * attached buffer and start sending them to `dest` on `c`. Errors are raised
 * on `comm` with `fname` in the message. With `out`, also return a request
 * that is already complete (Ibsend, a started Bsend_init). The arguments
 * must have been validated. */
int pm_bsend_start(const char *fname, MPI_Comm comm, struct pm_comm *c, const void *buf,
                   MPI_Count count, struct pm_datatype *t, int dest, int tag,
                   struct pm_request **out);

/* Cancel the operation a started persistent request is running
 * (persistent.c); MPI_SUCCESS when there is nothing to cancel. */
int pm_persistent_cancel(struct pm_request *r);

/* Wait politely (bsend.c; used by probe.c too): spin a little, then yield
 * the core, then nap. `*idle` counts the calls since the last progress; start at 0. */
void pm_p2p_backoff(unsigned *idle);

#endif /* PROUST_MPI_P2P_H */
