/*
 * rma_op.h — an origin's one-sided operation in flight, shared by the
 * message path (rma_ops.c) and the one-sided path across hosts
 * (rma_nic.c): what the API hands over, and the parts an operation
 * counts until it is complete here.
 */
#ifndef PROUST_MPI_RMA_OP_H
#define PROUST_MPI_RMA_OP_H

#include "win.h"

/* Blocks of a target layout that remote writes and reads take on; more go
 * as messages (atomics take any number: rma_nic.c). */
#define PM_NIC_MAX_BLOCKS 64

struct rma_op {
    struct pm_win *w;
    int target;
    _Atomic int parts;       /* engine requests still in flight */
    int err;                 /* MPI error class seen by a part */
    struct pm_request *mreq; /* MPI_R* request, or NULL */
    /* the reply: unpacked from rtmp into (ubuf, ucount, utype) if rtmp */
    void *ubuf;
    MPI_Count ucount;
    struct pm_datatype *utype;
    void *rtmp;
    size_t rlen;
    bool unpack_at_end;      /* one-sided get into rtmp: unpack once every block is in */
    void *send_tmp;          /* the data message's buffer, if ours */
    char msg[];              /* the header message */
};

/* What an operation is, as the API functions hand it over. */
struct rma_args {
    const char *fn;
    int kind;
    const void *obuf;        /* origin data (PUT, ACC, GACC, CAS: new value) */
    MPI_Count ocount;
    struct pm_datatype *otype;
    const void *cbuf;        /* CAS: compare value */
    void *rbuf;              /* GET: origin buffer; GACC, CAS: result */
    MPI_Count rcount;
    struct pm_datatype *rtype;
    int target;
    MPI_Aint disp;
    MPI_Count tcount;
    struct pm_datatype *ttype;
    MPI_Op op;
};

/* One part of `o` is over; the last one finishes it (request, pending). */
void pm_rma_op_part_done(struct rma_op *o);
/* A request callback for a part whose data needs nothing more. */
void pm_rma_send_done(proust_request_t *req, const proust_status_t *st, void *arg);
/* Track an engine request of `o` as one part, with `cb` at its end. */
void pm_rma_track(struct rma_op *o, proust_request_t *req, proust_request_cb_t cb);
/* The end of issuing `o`: the error of what was posted noted, the MPI
 * request handed out, our hold on `o` dropped; raises what failed
 * ("<fn>: <what> rank <t> failed: ..."). */
int pm_rma_issue_end(MPI_Win win, struct rma_op *o, struct pm_request *r, MPI_Request *request,
                     int prc, const struct rma_args *a, const char *what);
/* For an operation with nothing to do: a request already complete. */
int pm_rma_nothing_to_do(MPI_Win win, struct pm_win *w, const char *fn, MPI_Request *request);
/* Does the type lie in one block (or hold nothing)? */
bool pm_rma_contiguous(const struct pm_datatype *t);

/* ---- rma_nic.c: across hosts, without the target's MPI ---- */
/* Should a put or get of tbytes to `target` be a remote write or read? */
bool pm_rma_nic_pays(const struct pm_win *w, int target, uint64_t tbytes);
/* Issue a put or get as remote writes or reads, one per block of the
 * target layout `lay` (nb blocks, 0: one of tbytes) at byte `at` of the
 * target's window. Takes `lay` over. */
int pm_rma_issue_nic(MPI_Win win, struct pm_win *w, const struct rma_args *a,
                     MPI_Request *request, int64_t *lay, uint64_t nb, uint64_t at,
                     uint64_t tbytes);
/* Does an accumulate of `a`, on target layout `lay` at byte `at`, go by
 * the NIC's atomics (the window's types, aligned elements)? */
bool pm_rma_nic_atomic(const struct pm_win *w, const struct rma_args *a, const int64_t *lay,
                       uint64_t nb, uint64_t at);
/* Issue an accumulate, get_accumulate, fetch_and_op or compare_and_swap
 * as atomics, one per block of the target layout; as pm_rma_issue_nic. */
int pm_rma_issue_nic_atomic(MPI_Win win, struct pm_win *w, const struct rma_args *a,
                            MPI_Request *request, int64_t *lay, uint64_t nb, uint64_t at,
                            uint64_t tbytes);

#endif /* PROUST_MPI_RMA_OP_H */
