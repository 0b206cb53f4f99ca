/*
 * coll_algo.h — private to the collectives written against a collective
 * context (coll_sched.c, coll_cx.c, coll_check.c and every coll_*.c but
 * coll_neighbor.c and coll_persistent.c).
 *
 * An algorithm is written once against a *collective context* (struct
 * pm_cx) and runs in one of two modes:
 *  - schedule mode: every step is appended to a schedule (coll.h), which the
 *    nonblocking calls start and return;
 *  - direct mode (blocking calls): steps execute at once — receives are
 *    posted, sends go out (blocking for small messages), local steps run, a
 *    fence waits for what is outstanding. No schedule, no allocation on the
 *    small path (scratch comes from a per-thread arena).
 * Rules every algorithm follows so that both modes are correct:
 *  - within a round (between fences) receives are emitted before sends,
 *    so blocking sends never wait on each other in a cycle;
 *  - a round's steps start in the order emitted and local steps (reduce,
 *    copy) run when they start: a local step may feed a later send of its
 *    round, and may read a buffer that a later receive of its round fills.
 * Errors: pm_cx_end/pm_cx_start report the first. One that leaves the
 * buffers sound (a piece of another size than this rank's count says, a
 * local copy that does not fit, a sender that had failed) lets the steps go
 * on, so that the other ranks get what they wait for, and the messages sent
 * after it carry PM_COLL_FAILED_BIT; any other (a peer died, no memory)
 * makes every further step a no-op.
 */
#ifndef PROUST_MPI_COLL_ALGO_H
#define PROUST_MPI_COLL_ALGO_H

#include <stdint.h>

#include "coll.h"

/* ---- Algorithm selection thresholds (bytes) ------------------------------ */
/* Bcast: binomial tree below, scatter + ring allgather at and above (more
 * than two ranks, and no node of the job crowded). */
#define PM_BCAST_LARGE (128 * 1024)
/* Bcast on a crowded (not swamped) node, from PM_BCAST_LARGE: a binomial
 * tree in segments of this many bytes (4 ranks on 2 cores: 32 KiB beat 16
 * and 64 in time and spread) */
#define PM_BCAST_SEGMENT (32 * 1024)
/* A node of the job has more ranks than cores, or PROUST_COLL_CROWDED=on
 * or moderate: the same in every process (coll_policy.c). */
extern bool pm_coll_crowded;
/* ... and more than 2 ranks a core there, or PROUST_COLL_CROWDED=on */
extern bool pm_coll_swamped;
/* Every rank of the job reaches every other through shared memory (agreed
 * like the two above): small collectives of up to PM_COLL_ONE_ROUND_RANKS
 * go in one round, every rank's part straight to every other (barrier,
 * allgather, allreduce, reduce-scatter; allgatherv always). */
extern bool pm_coll_shm_only;
#define PM_COLL_ONE_ROUND_RANKS 8
/* Allreduce/Reduce: recursive doubling / binomial below, Rabenseifner's
 * reduce-scatter + allgather (gather) at and above (commutative ops). */
#define PM_ALLREDUCE_LARGE (32 * 1024)
#define PM_REDUCE_LARGE (32 * 1024)
/* Scatter / Gather: binomial tree while a block is at most this many bytes
 * (inner nodes then buffer at most ranks / 2 blocks), linear above. */
#define PM_SCATTER_TREE_MAX_BLOCK 8192
#define PM_GATHER_TREE_MAX_BLOCK 8192
/* Direct mode: sends up to this size are blocking (eager, no request);
 * larger ones are posted and waited for at the next fence. */
#define PM_CX_BLOCKING_SEND 4096
/* Schedules: a copy of contiguous bytes up to this size that would be the
 * first step is done while the schedule is built (a step costs more). */
#define PM_CX_EAGER_COPY 4096

/* Engine fast paths of the blocking rooted collectives (coll_rooted_fast.c):
 * -1 when the call does not qualify (the general path then checks and
 * runs it), else an MPI code (an error raised on comm, with fn's name). */
int pm_scatter_fast(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
/* MPI_Scatterv's non-root rank, as pm_scatter_fast (-1: not taken). */
int pm_scatterv_fast(const char *fn, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                     MPI_Comm comm);
int pm_gather_fast(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                   void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
/* Direct mode: receives and sends outstanding in one round at most (a
 * pairwise batch of 32 rounds posts 32 of each). */
#define PM_CX_MAXREQ 64

/* ---- Collective context ---------------------------------------------------- */
struct pm_cx_req {
    proust_request_t *preq;
    bool recv;
    void *unpack_to;               /* receive of a noncontiguous type: unpack here */
    MPI_Count count;
    const struct pm_datatype *t;
    void *packed;
    /* a receive not posted yet (direct mode defers the last one) */
    void *buf;
    size_t bytes;
    int world;
};
struct pm_cx_mem;

struct pm_cx {
    struct pm_comm *c;
    struct pm_sched *s;            /* schedule mode; NULL in direct mode */
    bool local;                    /* peers are ranks of c's local group (intercomm phases) */
    int err;                       /* first error (MPI class) */
    bool stop;                     /* ... one that ends the collective: steps are skipped */
    /* direct mode */
    uint64_t stag, rtag;
    int nreq;
    bool deferred;                 /* req[nreq] is a receive not posted yet */
    struct pm_cx_req req[PM_CX_MAXREQ + 1];
    bool arena_held;               /* this cx uses the thread's scratch arena */
    size_t arena_used, arena_want;
    struct pm_cx_mem *mem;         /* scratch that did not fit the arena */
};

/* Direct mode on `c` (takes the next collective sequence number). */
void pm_cx_direct(struct pm_cx *cx, struct pm_comm *c);
/* Direct mode: wait for what is outstanding, release scratch, return the
 * first error (MPI class) or MPI_SUCCESS. */
int pm_cx_end(struct pm_cx *cx);
/* Schedule mode on `c`: MPI_SUCCESS or MPI_ERR_NO_MEM. */
int pm_cx_sched(struct pm_cx *cx, struct pm_comm *c);
/* Schedule mode: start the schedule (its request in *request), or drop it
 * when building failed; MPI_SUCCESS or the error class. */
int pm_cx_start(struct pm_cx *cx, MPI_Request *request);
/* The mode a call asks for: direct when blocking, else a schedule
 * (MPI_SUCCESS or MPI_ERR_NO_MEM). */
int pm_cx_begin(struct pm_cx *cx, struct pm_comm *c, bool nonblocking);
/* End what pm_cx_begin began: pm_cx_end or pm_cx_start. */
int pm_cx_finish(struct pm_cx *cx, MPI_Request *request);
/* A mismatch found before the first step (pm_own_block): the collective
 * runs all the same, its sends carrying PM_COLL_FAILED_BIT, and ends with
 * `err`. No-op for MPI_SUCCESS. */
void pm_cx_note(struct pm_cx *cx, int err);
/* A failure that ends the collective: every further step is a no-op. */
int pm_cx_fail(struct pm_cx *cx, int err);
/* Direct mode, a round whose requests do not wait on each other (a root's
 * receives of a linear gather, its sends of a scatter): when the request
 * table is full, wait for what it holds. No-op in schedule mode. */
void pm_cx_room(struct pm_cx *cx);

/* Steps; each returns cx->err. Peers are ranks of the peer group (remote
 * group of an intercommunicator), or of the local group while cx->local. */
int pm_cx_send(struct pm_cx *cx, const void *buf, MPI_Count count, MPI_Datatype dt, int peer);
int pm_cx_recv(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt, int peer);
/* inout = in op inout */
int pm_cx_reduce(struct pm_cx *cx, const void *in, void *inout, MPI_Count count,
                 MPI_Datatype dt, MPI_Op op);
int pm_cx_copy(struct pm_cx *cx, const void *src, MPI_Count scount, MPI_Datatype stype,
               void *dst, MPI_Count rcount, MPI_Datatype rtype);
int pm_cx_fence(struct pm_cx *cx);
/* Scratch bytes living as long as the collective; NULL (and cx->err set)
 * when out of memory. */
void *pm_cx_scratch(struct pm_cx *cx, size_t bytes);
/* Scratch for `count` instances of `dt`, returned as a buffer address laid
 * out like a user buffer of that type (true_lb accounted for). */
void *pm_cx_tmp(struct pm_cx *cx, MPI_Count count, MPI_Datatype dt);

/* ---- Shared helpers (coll_sched.c) -------------------------------------- */
/* Typed local copy between buffers (signatures must match in bytes):
 * MPI_SUCCESS or MPI_ERR_TRUNCATE. */
int pm_coll_copy(const void *src, MPI_Count scount, const struct pm_datatype *st, void *dst,
                 MPI_Count rcount, const struct pm_datatype *rt);
/* inout = in op inout over `count` instances of `t` (handle `dt`), also when
 * the application has freed the datatype handle meanwhile. */
int pm_coll_reduce(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype dt,
                   const struct pm_datatype *t);

/* ---- Argument checks (coll_check.c) ----------------------------------------- */
/* MPI_ERR_OP checks of `op` on `dt` (pm_op_check), raised on c. */
int pm_coll_check_op(const char *fname, struct pm_comm *c, MPI_Op op, MPI_Datatype dt);
/* A predefined reduction operation (MPI_MAX .. MPI_MAXLOC, not MPI_REPLACE
 * or MPI_NO_OP) defined on the predefined type `dt`: what the fast paths
 * accept without pm_coll_check_op. */
static inline bool pm_coll_op_predef(MPI_Op op, MPI_Datatype dt)
{
    unsigned opi = (unsigned)op - (unsigned)PROUST_MPI_KIND_OP;
    return opi - 1 <= 11u && pm_op_predef_applies(op, dt);
}
/* A buffer that must hold data: not NULL (unless the type's data starts
 * elsewhere: MPI_BOTTOM with absolute displacements) and not MPI_IN_PLACE. */
int pm_coll_check_data(const char *fname, struct pm_comm *c, const char *what, const void *buf,
                       MPI_Count count, MPI_Datatype dt);
/* sendbuf/recvbuf of a reduction: IN_PLACE allowed when `in_place_ok`,
 * aliasing refused. */
int pm_coll_check_reduce_bufs(const char *fname, struct pm_comm *c, const void *sbuf,
                              MPI_Count scount, const void *rbuf, MPI_Count rcount,
                              MPI_Datatype dt, bool in_place_ok, bool need_rbuf);
int pm_coll_check_request(const char *fname, struct pm_comm *c, MPI_Request *request);
/* Finish a collective of the gather/scatter/allgather/alltoall families
 * (pm_cx_finish) whose own-block mismatch `own` was noted at its start;
 * MPI_SUCCESS or the error raised on `comm`, naming the mismatch when there
 * was one. */
int pm_coll_cx_go(struct pm_cx *cx, const struct pm_own_block *own, MPI_Comm comm,
                  const char *fname, int rank, MPI_Request *request);

/* ---- Algorithms shared between the files ------------------------------------ */
static inline int pm_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}
/* Participant p of a fold to a power of two is rank 2p+1 (p < rem) or p + rem. */
static inline int pm_part_rank(int p, int rem)
{
    return p < rem ? 2 * p + 1 : p + rem;
}
/* Elements of segments [a, a + m) (disps are prefix sums of cnts). */
static inline MPI_Count pm_seg_span(const MPI_Count *cnts, const MPI_Count *disps, int a, int m)
{
    return disps[a + m - 1] + cnts[a + m - 1] - disps[a];
}
/* coll_barrier.c: dissemination barrier over (rank, size). */
int pm_alg_barrier(struct pm_cx *cx, int rank, int size);
/* coll_bcast.c: broadcast over (rank, size), algorithm chosen by size. */
int pm_alg_bcast(struct pm_cx *cx, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                 int rank, int size);
/* coll_reduce.c: reduction of (sbuf or, if MPI_IN_PLACE at the root, rbuf)
 * to `root` over (rank, size), combined in rank order unless the operation
 * commutes; the result lands in rbuf at the root. */
int pm_alg_reduce(struct pm_cx *cx, const void *sbuf, void *rbuf, MPI_Count count,
                  MPI_Datatype dt, MPI_Op op, int root, int rank, int size);
/* coll_reduce_scatter.c: recursive halving over the `pof2` participants
 * (newrank 0..pof2-1; extra ranks folded in: participant p < rem is rank
 * 2p+1, the others p + rem). Segment i is elements [disps[i], disps[i] +
 * cnts[i]) of `res` (reduced in place; `tmp` is the same size). At the end
 * participant p holds the reduction of segment p. Commutative ops only.
 * The vector starts in `src` (== res, or a buffer of the same layout: the
 * first exchange sends from it, receives the partner's half straight into
 * res and combines src's half into it). */
int pm_alg_rs_halving(struct pm_cx *cx, const void *src, void *res, void *tmp,
                      const MPI_Count *cnts, const MPI_Count *disps, MPI_Datatype dt, MPI_Op op,
                      int newrank, int pof2, int rem);
/* Recursive-doubling allgather of the segments after pm_alg_rs_halving. */
int pm_alg_ag_doubling(struct pm_cx *cx, void *res, const MPI_Count *cnts,
                       const MPI_Count *disps, MPI_Datatype dt, int newrank, int pof2, int rem);
/* Binomial scatter from rank 0 over (rank, size): rank i gets elements
 * [disps[i], disps[i] + cnts[i]) of `buf` (significant at rank 0) in rbuf;
 * disps are the prefix sums of cnts. */
int pm_alg_scatterv0(struct pm_cx *cx, const void *buf, const MPI_Count *cnts,
                     const MPI_Count *disps, MPI_Datatype dt, void *rbuf, int rank, int size);
/* The one-round forms' last step: `slots` holds n vectors of `count`
 * elements, rank order; rbuf = s0 op (s1 op ... sn-1), the same bits on
 * every rank and right for non-commutative operations (slot n-1 is
 * overwritten). */
int pm_alg_fold_slots(struct pm_cx *cx, void *slots, int n, MPI_Count count, MPI_Datatype dt,
                      MPI_Op op, void *rbuf);

/* World rank of `peer` in the context's current peer group. */
static inline int pm_cx_world(const struct pm_cx *cx, int peer)
{
    return cx->local ? cx->c->local->world[peer] : cx->c->remote->world[peer];
}

#endif /* PROUST_MPI_COLL_ALGO_H */
