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

/* The checks and work of the calls on a buffer of any scope (bsend.c):
 * MPI_SUCCESS, or an error class with the reason in why[PM_WHY_LEN] for the
 * caller to raise on its object. Attach (MPI_BUFFER_AUTOMATIC or a user
 * buffer; b NULL: out of memory), detach into the user's (void **)
 * buffer_addr and *size (has_size: the size pointer is not NULL), iflush
 * (a request on c). */
#define PM_WHY_LEN 128
int pm_bbuf_attach_call(struct pm_bbuf *b, void *buffer, MPI_Count size, char *why);
int pm_bbuf_detach_call(struct pm_bbuf *b, void *buffer_addr, bool has_size, size_t *size,
                        char *why);
int pm_bbuf_iflush_call(struct pm_bbuf *b, struct pm_comm *c, MPI_Request *request, char *why);

/* Cancel the operation a started persistent request is running
 * (persistent.c); MPI_SUCCESS when there is nothing to cancel. */
int pm_persistent_cancel(struct pm_request *r);

/* Wait politely (bsend.c; used by probe.c too): spin a little, then yield
 * the core, then nap. `*idle` counts the calls since the last progress; start at 0. */
void pm_p2p_backoff(unsigned *idle);

/* Partitioned communication (part.c): a partitioned send or receive,
 * held by a persistent request (persistent.c). */
struct pm_part;
/* Make `part` an inactive persistent request on `c` (taken over on
 * success); MPI_ERR_NO_MEM otherwise. */
int pm_persistent_new_part(struct pm_comm *c, struct pm_part *part, MPI_Request *request);
/* The partitioned operation a request holds, else NULL. */
struct pm_part *pm_persistent_part(struct pm_request *r);
/* Start a round: *round is the request that completes with it. */
int pm_part_start(struct pm_part *part, struct pm_request **round);
/* The round was completed by a wait or test: inactive again. */
void pm_part_complete(struct pm_part *part);
/* The request goes; the operations in flight finish first. */
void pm_part_free(struct pm_part *part);

#endif /* PROUST_MPI_P2P_H */
