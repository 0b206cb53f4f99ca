/*
 * coll.h — collective operations: schedules and algorithm selection.
 *
 * A collective is a *schedule*: a list of steps (send, receive, local
 * reduction, local copy) separated by fences. Steps between two fences run
 * concurrently; a fence waits for every earlier step. Sends and receives are
 * proust requests whose completion callbacks (proust_request_monitor) advance
 * the schedule, so a nonblocking collective progresses whenever any thread
 * drives the engine — no thread has to sit in MPI_Wait. A blocking
 * collective may build the same schedule and run it (pm_sched_run), or use a
 * direct path for small messages.
 *
 * Every message of one collective call carries the communicator's collective
 * context and the call's sequence number as tag, so concurrent nonblocking
 * collectives on one communicator never mix; MPI requires every rank to call
 * collectives in the same order, which makes the sequence numbers agree.
 */
#ifndef PROUST_MPI_COLL_H
#define PROUST_MPI_COLL_H

#include "mpi_impl.h"

struct pm_sched;

/* How a collective receive of `want` bytes that ended with engine code `rc`
 * and status `ps` leaves the collective. MPI_SUCCESS; or a failure it goes
 * on after, reporting it at the end (*stop false): the piece was truncated
 * or shorter than expected (the ranks' counts or types differ), or its
 * sender had failed already (PM_COLL_FAILED_BIT), so that every rank still
 * sends what the others wait for and none hangs; or one that ends it (*stop
 * true: a peer died, a connection broke). */
static inline int pm_coll_recv_outcome(int rc, const proust_status_t *ps, size_t want, bool *stop)
{
    *stop = false;
    if (PM_LIKELY(rc == PROUST_OK)) {
        if (PM_UNLIKELY(ps->tag & PM_COLL_FAILED_BIT))
            return PROUST_MPI_ERR_COLL_FAILED;
        return PM_LIKELY(ps->count == want) ? MPI_SUCCESS : PROUST_MPI_ERR_COLL_SIZE;
    }
    if (rc == PROUST_ERR_TRUNCATE)
        return MPI_ERR_TRUNCATE;
    *stop = rc != PROUST_ERR_CANCELED;
    return pm_error_from_proust(rc);
}

/* A new, empty schedule on `c` (takes the next collective sequence number
 * of `c`). NULL when out of memory. Peers are ranks of `c`'s peer group:
 * the remote group for an intercommunicator. */
struct pm_sched *pm_sched_create(struct pm_comm *c);
/* When >= 0, the next pm_sched_create of this thread takes this sequence
 * number instead (and resets it): a persistent collective reuses the one
 * it reserved at initialisation at every start (coll_persistent.c). */
extern _Thread_local int64_t pm_coll_forced_seq;
/* A collective with nothing for this rank to send or receive while other
 * ranks may still exchange among themselves (v forms skip empty blocks):
 * it takes its sequence number (a persistent start: the reserved one) so
 * that the next collectives still agree, and does nothing. */
static inline void pm_coll_skip_seq(struct pm_comm *c)
{
    if (pm_coll_forced_seq >= 0)
        pm_coll_forced_seq = -1;
    else
        (void)pm_coll_next_seq(c);
}
/* Zero-byte fast path of the blocking collectives (0.02-0.04 us of the full
 * checks; Open MPI 0.006): a valid intracommunicator (in *cp) and a
 * predefined contiguous datatype. Blocks of count 0 move nothing on any
 * rank (signatures match), so a call whose arguments pass these cheap
 * checks is done; any other takes the full path, which reports what is
 * wrong. */
static inline bool pm_coll_zero_ok(MPI_Comm comm, MPI_Datatype dt, struct pm_comm **cp)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    *cp = c;
    return c && !c->is_inter && pm_type_fast_size(dt) >= 0;
}
/* MPI_Alltoall, MPI_Allgather with empty blocks (the communicator in *cp). */
static inline bool pm_coll_zero_all(const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                                    const void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                                    MPI_Comm comm, struct pm_comm **cp)
{
    return rcount == 0 && rbuf != MPI_IN_PLACE &&
           (sbuf == MPI_IN_PLACE || (scount == 0 && pm_type_fast_size(stype) >= 0)) &&
           pm_coll_zero_ok(comm, rtype, cp);
}
/* MPI_Gather / MPI_Scatter with empty blocks: `mine` is every rank's block
 * (gather's send side, scatter's receive side; MPI_IN_PLACE at the root),
 * `all` the root's whole buffer (the communicator in *cp). */
static inline bool pm_coll_zero_rooted(const void *mbuf, MPI_Count mcount, MPI_Datatype mtype,
                                       const void *abuf, MPI_Count acount, MPI_Datatype atype,
                                       int root, MPI_Comm comm, struct pm_comm **cp)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    *cp = c;
    if (!c || c->is_inter || root < 0 || root >= c->size)
        return false;
    bool mine = mcount == 0 && mbuf != MPI_IN_PLACE && pm_type_fast_size(mtype) >= 0;
    if (c->rank != root)
        return mine;
    return acount == 0 && abuf != MPI_IN_PLACE && pm_type_fast_size(atype) >= 0 &&
           (mbuf == MPI_IN_PLACE || mine);
}
/* In- and out-degree of this process in c's topology (Cartesian: 2 per
 * dimension); false, both 0, when c has none (coll_neighbor.c). */
bool pm_topo_degrees(const struct pm_comm *c, int *nin, int *nout);
/* Steps. Typed buffers are packed/unpacked by the schedule when the type is
 * not contiguous. Return MPI_SUCCESS or MPI_ERR_NO_MEM. */
int pm_sched_send(struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt, int peer);
int pm_sched_recv(struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer);
/* Intercommunicators: the same over c->local_comm (peers are ranks of the
 * local group), tagged with this schedule's sequence number. */
int pm_sched_send_local(struct pm_sched *s, const void *buf, MPI_Count count, MPI_Datatype dt,
                        int peer);
int pm_sched_recv_local(struct pm_sched *s, void *buf, MPI_Count count, MPI_Datatype dt, int peer);
/* inout = in op inout, when the step runs. */
int pm_sched_reduce(struct pm_sched *s, const void *in, void *inout, MPI_Count count,
                    MPI_Datatype dt, MPI_Op op);
/* Typed local copy (signatures must match, as MPI requires). */
int pm_sched_copy(struct pm_sched *s, const void *src, MPI_Count scount, MPI_Datatype stype,
                  void *dst, MPI_Count rcount, MPI_Datatype rtype);
/* Later steps wait for all earlier ones. */
int pm_sched_fence(struct pm_sched *s);
/* No step yet: what is added now would run first when it starts. */
bool pm_sched_empty(const struct pm_sched *s);
/* A mismatch found while building (pm_own_block): the schedule runs all the
 * same, its sends carrying PM_COLL_FAILED_BIT, and completes with `err`.
 * No-op for MPI_SUCCESS. */
void pm_sched_note(struct pm_sched *s, int err);
/* This rank's block to itself (gather and scatter roots, allgather,
 * alltoall): its counts send `have` bytes into a block of `room`. When they
 * differ, so do the ranks' counts or types; the collective still runs (the
 * other ranks wait for this one, and the next collective must match theirs)
 * and ends with `err`. */
struct pm_own_block {
    int err;                       /* MPI_ERR_TRUNCATE, PROUST_MPI_ERR_COLL_SIZE or 0 */
    long long have, room;
};
static inline void pm_own_block_check(struct pm_own_block *o, MPI_Count have, MPI_Count room)
{
    o->have = have;
    o->room = room;
    o->err = have > room ? MPI_ERR_TRUNCATE : have < room ? PROUST_MPI_ERR_COLL_SIZE : 0;
}
/* Scratch memory that lives as long as the schedule (NULL when out of memory). */
void *pm_sched_scratch(struct pm_sched *s, size_t bytes);
/* Start the schedule and return an MPI request that completes with it. */
int pm_sched_start(struct pm_sched *s, MPI_Request *request);
/* Run it to completion (blocking collectives); frees the schedule. */
int pm_sched_run(struct pm_sched *s);
/* Drop a schedule that was built but will not run. */
void pm_sched_discard(struct pm_sched *s);

/* The count and displacement arrays of the v and w collectives as the
 * caller passed them: int (the MPI-3 calls) or MPI_Count and MPI_Aint (the
 * MPI-4 _c calls). Read in place through pm_cnt / pm_dsp, never copied;
 * PM_COUNTS / PM_DISPLS pick the member from the array's type, so one
 * macro stamps an entry point and its _c twin. */
struct pm_counts {
    const int *i;
    const MPI_Count *c;
};
struct pm_displs {
    const int *i;
    const MPI_Aint *a;
};
#define PM_COUNTS(p)                                                                       \
    _Generic((p), const int *: (struct pm_counts){(const int *)(p), NULL},                 \
             const MPI_Count *: (struct pm_counts){NULL, (const MPI_Count *)(p)})
#define PM_DISPLS(p)                                                                       \
    _Generic((p), const int *: (struct pm_displs){(const int *)(p), NULL},                 \
             const MPI_Aint *: (struct pm_displs){NULL, (const MPI_Aint *)(p)})
#define PM_NO_COUNTS ((struct pm_counts){NULL, NULL})
#define PM_NO_DISPLS ((struct pm_displs){NULL, NULL})
static inline bool pm_counts_null(struct pm_counts v)
{
    return !v.i && !v.c;
}
static inline bool pm_displs_null(struct pm_displs v)
{
    return !v.i && !v.a;
}
static inline MPI_Count pm_cnt(struct pm_counts v, int k)
{
    return v.c ? v.c[k] : v.i[k];
}
static inline MPI_Aint pm_dsp(struct pm_displs v, int k)
{
    return v.a ? v.a[k] : v.i[k];
}

/* `off` bytes past `base`, in integer arithmetic: base may be MPI_BOTTOM
 * (NULL) with absolute displacements. */
static inline void *pm_at(const void *base, MPI_Aint off)
{
    return (void *)((uintptr_t)base + (uintptr_t)off);
}

/* A collective that moves no byte anywhere, decided from what all ranks'
 * arguments say alike: MPI_SUCCESS at once, a nonblocking one with its
 * request already complete. */
int pm_coll_nothing(MPI_Request *request, bool nonblocking);
/* count instances of a checked type, in bytes. */
MPI_Count pm_coll_bytes(MPI_Count count, MPI_Datatype type);
/* Argument checks shared by the collectives (MPI_SUCCESS or raised error). */
int pm_coll_check_comm(const char *fname, MPI_Comm comm, struct pm_comm **c);
int pm_coll_check_root(const char *fname, struct pm_comm *c, int root);
int pm_coll_check_buf(const char *fname, struct pm_comm *c, MPI_Count count, MPI_Datatype dt);
/* The n counts of array `what` of a v or w collective: none negative, and
 * none whose bytes overflow, in instances of `dt` (which is checked too),
 * or of types[i] (each checked where its count is not zero) when `types`. */
int pm_coll_check_counts(const char *fname, struct pm_comm *c, const char *what,
                         struct pm_counts v, int n, MPI_Datatype dt, const MPI_Datatype *types);

/* MPI_Gatherv / MPI_Scatterv: nothing moves to or from this rank: its own
 * block (`mine`: gather's send side, scatter's receive side) is empty and,
 * at the root, every block of `counts`. */
static inline bool pm_coll_rank_empty_v(const void *mbuf, MPI_Count mcount, MPI_Datatype mtype,
                                        bool root, struct pm_counts counts, MPI_Datatype atype,
                                        int n)
{
    if (mbuf != MPI_IN_PLACE && mcount * (MPI_Count)pm_type_get(mtype)->size != 0)
        return false;
    if (!root || pm_type_get(atype)->size == 0)
        return true;
    for (int i = 0; i < n; i++)
        if (pm_cnt(counts, i) != 0)
            return false;
    return true;
}
/* Blocking fast path of MPI_Gatherv / MPI_Scatterv (as pm_coll_zero_*):
 * arguments that pass the cheap checks and say pm_coll_rank_empty_v; the
 * call takes its sequence number (other ranks may still exchange with the
 * root). */
static inline bool pm_coll_zero_rooted_v(const void *mbuf, MPI_Count mcount, MPI_Datatype mtype,
                                         const void *abuf, struct pm_counts counts,
                                         struct pm_displs displs, MPI_Datatype atype, int root,
                                         MPI_Comm comm)
{
    struct pm_comm *c = comm == MPI_COMM_WORLD ? pm_comm_world : pm_comm_get(comm);
    if (!c || c->is_inter || root < 0 || root >= c->size)
        return false;
    bool at_root = c->rank == root;
    if ((mbuf == MPI_IN_PLACE ? !at_root : pm_type_fast_size(mtype) < 0) ||
        (at_root && (pm_counts_null(counts) || pm_displs_null(displs) ||
                     abuf == MPI_IN_PLACE || pm_type_fast_size(atype) < 0)) ||
        !pm_coll_rank_empty_v(mbuf, mcount, mtype, at_root, counts, atype, c->size))
        return false;
    pm_coll_skip_seq(c);
    return true;
}
/* MPI_Allgatherv with every count 0 (the same on every rank). */
static inline bool pm_coll_zero_allv(const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                                     const void *rbuf, struct pm_counts counts,
                                     struct pm_displs displs, MPI_Datatype rtype, MPI_Comm comm)
{
    struct pm_comm *c;
    if (rbuf == MPI_IN_PLACE || pm_counts_null(counts) || pm_displs_null(displs) ||
        !(sbuf == MPI_IN_PLACE || (scount == 0 && pm_type_fast_size(stype) >= 0)) ||
        !pm_coll_zero_ok(comm, rtype, &c))
        return false;
    for (int i = 0; i < c->size; i++)
        if (pm_cnt(counts, i) != 0)
            return false;
    return true;
}

#endif /* PROUST_MPI_COLL_H */
