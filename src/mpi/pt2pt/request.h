/*
 * request.h — what request.c shares with request_multi.c.
 */
#ifndef PROUST_MPI_REQUEST_H
#define PROUST_MPI_REQUEST_H

#include "mpi_impl.h"

/* The request of a handle, or NULL after raising MPI_ERR_REQUEST (*rc). */
struct pm_request *pm_req_lookup(const char *fname, MPI_Request h, int *rc);
/* Block until the request completes (engine wait, schedule or flag). */
void pm_req_wait_one(struct pm_request *r);
/* A completed request leaves: persistent ones become inactive, the others
 * are freed and *handle set to MPI_REQUEST_NULL. Returns what a
 * generalized request's free function returned (else MPI_SUCCESS). */
int pm_req_retire(struct pm_request *r, MPI_Request *handle);
/* An engine request of `r` completed (proust_wait/test returned rc): record
 * its status, unpack a noncontiguous receive, mark it done. */
void pm_req_finish_engine(struct pm_request *r, int rc, const proust_status_t *ps);
/* Copy the request's status (MPI_ERROR only when `with_error`). */
void pm_req_copy_status(MPI_Status *dst, const struct pm_request *r, bool with_error);

#endif /* PROUST_MPI_REQUEST_H */
