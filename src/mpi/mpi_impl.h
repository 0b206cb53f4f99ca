/*
 * mpi_impl.h — what the files of Proust MPI (src/mpi) share.
 *
 * libmpi is a client of the native API (proust.h) and nothing else: it never
 * includes src/core. Naming: MPI_/PMPI_ are the public functions (each file
 * defines PMPI_Xxx and makes MPI_Xxx a weak alias with PM_WEAK(Xxx)); pm_ is
 * internal and hidden by src/mpi/mpi.map. Inside the library, call PMPI_ or
 * pm_ functions, never MPI_ ones (a profiling tool may have replaced them).
 *
 * Tags on the wire. A 64-bit proust tag carries (PM_TAG_BITS, PM_SRC_BITS,
 * PM_CTX_SHIFT below)
 *   bits 48-63  context field: the communicator's context id << 1 (ids
 *               0..32767, context.c: bits 49-63), | 1 (bit 48) for the
 *               collective traffic of that communicator
 *   bit  47     the side bit (PM_SIDE_BIT): a second space in each context
 *               that no MPI receive matches (partitioned communication)
 *   bits 28-46  the sender's rank in its local group, 19 bits (so at most
 *               2^19 processes, PM_MAX_COMM_SIZE; status.MPI_SOURCE needs
 *               no translation, intercommunicators included)
 *   bits  0-27  the MPI tag (MPI_TAG_UB = 2^28 - 1), or for collectives the
 *               communicator's collective sequence number (bits 0-26) and
 *               the failed bit (27, PM_COLL_FAILED_BIT)
 * so a receive masks the source field out (PM_CTX_MASK covers the context
 * field and the side bit) and the engine's per-peer ordering gives MPI's
 * non-overtaking rule.
 */
#ifndef PROUST_MPI_IMPL_H
#define PROUST_MPI_IMPL_H

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The public functions keep default visibility; everything else in libmpi
 * is compiled with -fvisibility=hidden, so internal globals and calls need
 * no GOT or PLT indirection on the fast paths. */
#pragma GCC visibility push(default)
#include "mpi.h"
#include "proust.h"
#pragma GCC visibility pop

#include "mpi_config.h"

/* Define MPI_name as a weak alias of PMPI_name (the profiling interface). */
#define PM_PRAGMA(x) _Pragma(#x)
#define PM_WEAK(name) PM_PRAGMA(weak MPI_##name = PMPI_##name)

#define PM_LIKELY(x) __builtin_expect(!!(x), 1)
#define PM_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- Library state (init.c) --------------------------------------------- */
enum { PM_STATE_NONE = 0, PM_STATE_RUNNING = 1, PM_STATE_FINALIZED = 2 };
/* The instance: running from the first MPI_Init or MPI_Session_init on. */
extern _Atomic int pm_state;
/* A session takes (starts if needed) / leaves the instance (init.c);
 * acquire fails (MPI_ERR_OTHER) once the instance has stopped. */
int pm_instance_acquire(const char *fname);
int pm_instance_release(void);
extern proust_session_t *pm_session;
extern int pm_world_rank, pm_world_size;
extern int pm_thread_level; /* provided level */

/* Fail with MPI_ERR_OTHER (through the world's handler) when called before
 * MPI_Init or after MPI_Finalize. */
#define PM_CHECK_INIT(fname)                                                        \
    do {                                                                            \
        if (PM_UNLIKELY(atomic_load_explicit(&pm_state, memory_order_relaxed) !=     \
                        PM_STATE_RUNNING))                                          \
            return pm_error_uninit(fname);                                          \
    } while (0)

/* ---- Handle tables (handle.c) --------------------------------------------- */
/* Index -> object pointer, lock-free lookups, growable up to 2^27 entries.
 * Indices below `reserved` are for predefined objects, registered with
 * pm_table_set at init. */
#define PM_TABLE_CHUNK 1024
#define PM_TABLE_CHUNKS (1u << 17)
struct pm_table {
    const char *what;                       /* "communicator" (messages) */
    int kind;                               /* PROUST_MPI_KIND_* */
    int reserved;                           /* first index pm_table_add gives */
    _Atomic(void **) chunks[PM_TABLE_CHUNKS];
    atomic_flag lock;                       /* protects free list and growth */
    int *free_list;
    int free_count, free_cap;
    int next;                               /* next never-used index */
    _Atomic int live;                       /* objects in the table */
};
extern struct pm_table pm_comm_table, pm_group_table, pm_type_table, pm_op_table,
    pm_errh_table, pm_info_table, pm_request_table, pm_message_table, pm_session_table;

/* Store obj and return its handle (kind | index), or 0 when out of memory. */
int pm_table_add(struct pm_table *t, void *obj);
void pm_table_set(struct pm_table *t, int index, void *obj);
void pm_table_remove(struct pm_table *t, int handle);
static inline void *pm_table_get(struct pm_table *t, int handle)
{
    if (PM_UNLIKELY((handle & PROUST_MPI_KIND_MASK) != t->kind))
        return NULL;
    unsigned idx = (unsigned)handle & PROUST_MPI_INDEX_MASK;
    void **chunk = atomic_load_explicit(&t->chunks[idx / PM_TABLE_CHUNK], memory_order_acquire);
    return chunk ? __atomic_load_n(&chunk[idx % PM_TABLE_CHUNK], __ATOMIC_ACQUIRE) : NULL;
}
void pm_tables_init(void);
void pm_tables_finalize(void);

/* ---- Errors (error.c, errhandler.c) ------------------------------------- */
enum { PM_ERRH_FATAL = 0, PM_ERRH_RETURN = 1, PM_ERRH_USER = 2, PM_ERRH_ABORT = 3 };
struct pm_errhandler {
    int handle;
    int kind; /* PM_ERRH_* */
    MPI_Comm_errhandler_function *fn;
    _Atomic int refs;
};
/* Raise error class/code `code` on `comm` (MPI_COMM_NULL or an invalid
 * handle: MPI_COMM_WORLD's handler; a window's private communicator: the
 * window's handler, given the window): format the message, run the handler
 * (ERRORS_ARE_FATAL prints "MPI error in <func>: <message>" and aborts the
 * job), and return `code` for the caller to return. */
int pm_error(MPI_Comm comm, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with handler `h` (a session's, or one given to a call that has
 * no object yet), whose function gets `object`. */
int pm_error_handler(MPI_Errhandler h, int object, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pm_error_uninit(const char *fname);
/* MPI error code for a proust status (PROUST_ERR_TRUNCATE -> MPI_ERR_TRUNCATE...). */
int pm_error_from_proust(int proust_status);
/* An error code of class `code`'s class that carries `msg`: MPI_Error_string
 * gives "<class text>: <msg>" (while the last PM_DETAIL_RING such codes
 * are kept), MPI_Error_class the class, on any rank (the class is in the
 * code's low bits). A code that is not a standard class comes back as it
 * is. Thread-safe. */
int pm_error_detail(int code, const char *msg);
/* Largest error code in use (attribute MPI_LASTUSEDCODE). */
int pm_error_last_code(void);
void pm_errors_finalize(void);
/* errhandler.c: the handler in force for a communicator, and its refcounts. */
struct pm_errhandler *pm_errhandler_get(MPI_Errhandler h);
void pm_errhandler_retain(MPI_Errhandler h);
void pm_errhandler_release(MPI_Errhandler h);
void pm_errhandler_init(void);
/* The MPI_{Comm,Win}_*_errhandler internals on a communicator (a window's:
 * its private one, win_handle set). They raise on c, `fname` naming the
 * MPI function; `what`: the object the handler is made for. */
struct pm_comm;
enum { PM_ERRH_FOR_COMM, PM_ERRH_FOR_WIN, PM_ERRH_FOR_SESSION, PM_ERRH_FOR_FILE };
int pm_errhandler_create(MPI_Comm_errhandler_function *fn, int what,
                         MPI_Errhandler *errhandler, const char *fname);
/* A handler the application may name for an object of kind `what`:
 * predefined, or a live user handler made for that kind. */
struct pm_errhandler *pm_errhandler_usable(MPI_Errhandler h, int what);
/* *out = a handle of the application's own on h (MPI_*_get_errhandler), to
 * free with MPI_Errhandler_free. */
void pm_errhandler_give(MPI_Errhandler h, MPI_Errhandler *out);
/* An object's handler slot (communicator, window, session): set it to h
 * (retained; the old one released), or read it for a caller (pm_errhandler_
 * give), both under one lock so that a read never gets a released one. */
void pm_errhandler_swap(MPI_Errhandler *slot, MPI_Errhandler h);
void pm_errhandler_read(const MPI_Errhandler *slot, MPI_Errhandler *out);
int pm_errhandler_set(struct pm_comm *c, MPI_Errhandler errhandler, const char *fname);
int pm_errhandler_get_of(struct pm_comm *c, MPI_Errhandler *errhandler, const char *fname);
int pm_errhandler_call(struct pm_comm *c, int errorcode, const char *fname);
/* MPI_*_call_errhandler with handler h on `object` (a session's). */
int pm_errhandler_call_with(MPI_Errhandler h, int object, int errorcode, const char *fname);

/* Is info a valid info handle, MPI_INFO_ENV included (MPI_INFO_NULL is
 * not)? (comm.c) */
bool pm_info_valid(MPI_Info info);

/* FNV-1a hash of a string (string tags, host names). */
static inline uint64_t pm_hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ---- Tool interface (mpi_t.c, mpi_t_event.c) ----------------------------- */
bool pm_t_initialized(void);
#define PM_T_CHECK_INIT()                                                          \
    do {                                                                           \
        if (!pm_t_initialized())                                                   \
            return MPI_T_ERR_NOT_INITIALIZED;                                      \
    } while (0)
/* Copy string src out as MPI_T does: *len in = room, out = length + 1. */
void pm_t_str_out(const char *src, char *buf, int *len);

/* ---- Datatypes (datatype_*.c) ------------------------------------------- */
/* One instance of a datatype is a list of contiguous blocks (displacement
 * from the buffer, length in bytes) in type-map order; adjacent blocks are
 * merged. */
struct pm_block {
    MPI_Aint disp;
    MPI_Aint len;
};
struct pm_datatype {
    int handle;
    _Atomic int refs;      /* handle + uses by pending operations/other types */
    bool predefined;
    bool permanent;        /* MPI_Type_create_f90_*: behaves as predefined */
    bool committed;
    bool contiguous;       /* count instances are one block starting at true_lb */
    MPI_Count size;        /* bytes of data in one instance */
    MPI_Aint lb, extent;   /* with MPI_Type_create_resized / struct markers */
    MPI_Aint true_lb, true_extent;
    int basic;             /* predefined type index if every element is that
                              type (reductions, Get_elements), else 0 */
    MPI_Count nelements;   /* predefined elements in one instance */
    size_t nblocks;
    struct pm_block *blocks;
    int combiner;          /* MPI_COMBINER_*; envelope/contents data below */
    int ni, na, nc, nd;    /* nc: large counts (the MPI-4 _c constructors) */
    int *ints;
    MPI_Aint *aints;
    MPI_Count *counts;
    MPI_Datatype *types;
    char name[MPI_MAX_OBJECT_NAME];
    struct pm_attr *attrs; /* attr.c */
};
/* The predefined types, indexed like PROUST_MPI_TYPE(i) (index 0 unused). */
extern struct pm_datatype pm_type_predef[PROUST_MPI_NUM_PREDEFINED_TYPES];
/* User types start at this table index. */
#define PM_TYPE_FIRST_USER 64

static inline struct pm_datatype *pm_type_get(MPI_Datatype h)
{
    unsigned idx = (unsigned)h & PROUST_MPI_INDEX_MASK;
    if (PM_LIKELY((h & PROUST_MPI_KIND_MASK) == PROUST_MPI_KIND_DATATYPE &&
                  idx - 1 < PROUST_MPI_NUM_PREDEFINED_TYPES - 1))
        return &pm_type_predef[idx];
    if (idx < PM_TYPE_FIRST_USER)
        return NULL;
    return (struct pm_datatype *)pm_table_get(&pm_type_table, h);
}
/* Bytes of one element of each predefined type whose instances are
 * contiguous (size == extent), else -1: the point-to-point fast paths need
 * one load to accept a predefined type (filled at init from pm_type_predef). */
extern int64_t pm_type_contig_size[PM_TYPE_FIRST_USER];
static inline int64_t pm_type_fast_size(MPI_Datatype dt)
{
    unsigned idx = (unsigned)dt - (unsigned)PROUST_MPI_KIND_DATATYPE;
    return PM_LIKELY(idx < PM_TYPE_FIRST_USER) ? pm_type_contig_size[idx] : -1;
}
/* MPI_SUCCESS, or the error class for using `dt` in communication: invalid
 * handle or not committed (MPI_ERR_TYPE). */
int pm_type_check(MPI_Datatype dt, struct pm_datatype **out);
void pm_type_retain(struct pm_datatype *t);
void pm_type_release(struct pm_datatype *t);
void pm_datatypes_init(void);
/* Copy `count` instances from a typed buffer into/out of a contiguous byte
 * stream, starting `skip` bytes into the stream, at most `max` bytes; return
 * the bytes moved. Resumable, so large data can be streamed in pieces. */
size_t pm_type_pack(const void *inbuf, MPI_Count count, const struct pm_datatype *t,
                    size_t skip, void *out, size_t max);
size_t pm_type_unpack(const void *in, size_t bytes, void *outbuf, MPI_Count count,
                      const struct pm_datatype *t, size_t skip);
/* Number of predefined elements in `bytes` of a stream of `t` (Get_elements);
 * MPI_UNDEFINED when bytes is not a whole number of elements. */
MPI_Count pm_type_elements(const struct pm_datatype *t, MPI_Count bytes);
/* A receive into noncontiguous type `t` got `bytes` that end inside one of
 * its basic elements: the send and receive type signatures differ (MPICH
 * reports it too). Checked where the data is unpacked anyway. */
static inline bool pm_recv_partial(const struct pm_datatype *t, size_t bytes)
{
    return t->size > 0 && bytes % (size_t)t->size &&
           pm_type_elements(t, (MPI_Count)bytes) == MPI_UNDEFINED;
}

/* ---- Reduction operations (op.c) ----------------------------------------- */
struct pm_op {
    int handle;
    bool commutative;
    MPI_User_function *fn;     /* MPI_Op_create's; NULL for predefined ops */
    MPI_User_function_c *fn_c; /* MPI_Op_create_c's (large counts) */
    _Atomic int refs;
};
struct pm_op *pm_op_get(MPI_Op h);
static inline bool pm_op_is_user(const struct pm_op *o)
{
    return o->fn || o->fn_c;
}
/* MPI_SUCCESS if `op` applies to `dt`, else MPI_ERR_OP (with a message). */
int pm_op_check(MPI_Op op, MPI_Datatype dt, MPI_Comm comm, const char *fname);
/* inout[i] = in[i] op inout[i] for `count` instances of `dt`. */
int pm_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype dt);
bool pm_op_commutative(MPI_Op op);
/* Is `op` a predefined operation defined on predefined type `dt`? (No error
 * raised: a predicate for fast paths.) */
bool pm_op_predef_applies(MPI_Op op, MPI_Datatype dt);
void pm_op_retain(MPI_Op op);
void pm_op_release(MPI_Op op);
void pm_ops_init(void);

/* ---- Groups (group.c) ---------------------------------------------------- */
struct pm_group {
    int handle;
    _Atomic int refs;
    int size;
    int rank;        /* this process's rank in the group, or MPI_UNDEFINED */
    int *world;      /* group rank -> world rank */
    int session;     /* the session it comes from (MPI_Group_from_session_pset), else 0 */
};
struct pm_group *pm_group_get(MPI_Group h);
/* A new group over `n` world ranks (copied); NULL when out of memory. */
struct pm_group *pm_group_new(int n, const int *world_ranks);
void pm_group_retain(struct pm_group *g);
void pm_group_release(struct pm_group *g);
void pm_groups_init(void);

/* ---- Communicators (comm*.c, intercomm.c, cart.c, graph.c) ----------------- */
struct pm_cart {
    int ndims;
    int *dims, *periods, *coords;
};
struct pm_graph {
    int nnodes;
    int *index, *edges; /* as given to MPI_Graph_create */
};
struct pm_dist_graph {
    int indegree, outdegree;
    int *sources, *sourceweights;      /* in-neighbours, as given or gathered */
    int *destinations, *destweights;   /* out-neighbours */
    bool weighted;                     /* false: the weights are all 1 */
};
struct pm_comm {
    int handle;
    _Atomic int refs;            /* handle + pending operations */
    bool predefined;             /* WORLD, SELF: live until exit, not counted */
    int rank, size;              /* in the local group */
    struct pm_group *local;      /* local group (world ranks) */
    struct pm_group *remote;     /* intercommunicators: the remote group, else == local */
    bool is_inter;
    struct pm_comm *local_comm;  /* intercommunicators: intracomm over the local group */
    uint16_t context;            /* context id; fields below derive from it */
    uint64_t tag_pt2pt;          /* context field << 48 for point-to-point */
    uint64_t tag_coll;           /* ... and for collectives */
    uint64_t tag_src;            /* this rank << 28, ORed into every tag sent */
    _Atomic uint32_t coll_seq;   /* collectives started on this communicator */
    MPI_Errhandler errhandler;
    /* No handler was ever set on it or the communicators it derives from:
     * its errors go to MPI_COMM_WORLD's handler of the moment, as in MPICH
     * (an application that sets MPI_ERRORS_RETURN on the world after making
     * its communicators gets the errors of all returned). */
    atomic_bool errh_default;
    int win_handle;              /* a window's private communicator: the window
                                    (its handler gets an MPI_Win *), else 0 */
    struct pm_cart *cart;        /* Cartesian topology, or NULL */
    struct pm_graph *graph;      /* graph topology, or NULL */
    struct pm_dist_graph *dgraph; /* distributed graph topology, or NULL */
    struct pm_attr *attrs;       /* attr.c */
    atomic_flag attr_lock;
    MPI_Info info;               /* hints given with set_info/dup_with_info */
    char name[MPI_MAX_OBJECT_NAME];
    int session;                 /* the session it derives from, else 0 (world model) */
    struct pm_bbuf *_Atomic bbuf; /* MPI_Comm_attach_buffer's, made on first use */
};
/* An engine tag: context field (16 bits: context id, collective bit), side
 * bit, sender's rank (19 bits), MPI tag (28 bits). The side bit opens a
 * second space in each context that no MPI receive can match (partitioned
 * communication, part.c): PM_CTX_MASK covers it, so every receive masked
 * with it wants the bit as its tag has it. */
#define PM_TAG_BITS 28
#define PM_SRC_BITS 19
#define PM_CTX_SHIFT 48
#define PM_SIDE_BIT ((uint64_t)1 << (PM_TAG_BITS + PM_SRC_BITS))
#define PM_TAG_UB ((1 << PM_TAG_BITS) - 1)
#define PM_TAG_MASK ((uint64_t)PM_TAG_UB)
#define PM_SRC_MASK ((((uint64_t)1 << PM_SRC_BITS) - 1) << PM_TAG_BITS)
#define PM_CTX_MASK ((~(uint64_t)0 << PM_CTX_SHIFT) | PM_SIDE_BIT)
#define PM_MAX_COMM_SIZE (1 << PM_SRC_BITS)
/* Collective traffic: the sequence number takes bits 0-26 of the tag field;
 * bit 27 marks a message sent by a rank whose part of the collective has
 * already failed (counts that differ between ranks, a truncated piece), so
 * the ranks it feeds report the failure instead of succeeding on bad data.
 * Collective receives ignore the bit (PM_COLL_RECV_MASK). */
#define PM_COLL_FAILED_BIT ((uint64_t)1 << (PM_TAG_BITS - 1))
#define PM_COLL_SEQ_MASK (PM_TAG_MASK >> 1)
#define PM_COLL_RECV_MASK (PM_CTX_MASK | PM_COLL_SEQ_MASK)

extern struct pm_comm *pm_comm_world, *pm_comm_self;
static inline struct pm_comm *pm_comm_get(MPI_Comm h)
{
    return (struct pm_comm *)pm_table_get(&pm_comm_table, h);
}
/* World rank of rank `r` of the peers of `c` (remote group if inter). */
static inline int pm_comm_peer(const struct pm_comm *c, int r)
{
    return c->remote->world[r];
}
/* The next collective sequence number of `c` (every member takes one per
 * collective, in the same order). */
static inline uint32_t pm_coll_next_seq(struct pm_comm *c)
{
    return atomic_fetch_add_explicit(&c->coll_seq, 1, memory_order_relaxed) &
           (uint32_t)PM_COLL_SEQ_MASK;
}
/* Status source/tag from a received proust tag. */
static inline int pm_tag_source(proust_tag_t t)
{
    return (int)((t & PM_SRC_MASK) >> PM_TAG_BITS);
}
static inline int pm_tag_tag(proust_tag_t t)
{
    return (int)(t & PM_TAG_MASK);
}
/* A communicator over `local` (and `remote` for an intercommunicator, else
 * NULL) with context `context`; takes a reference on the groups; registers
 * a handle. NULL when out of memory. */
struct pm_comm *pm_comm_new(struct pm_group *local, struct pm_group *remote, uint16_t context);
/* References (requests, schedules, handles). The predefined communicators
 * are never freed, so they are not counted: every request on them would
 * otherwise pay two atomic operations on one shared line. */
void pm_comm_destroy(struct pm_comm *c);
static inline void pm_comm_retain(struct pm_comm *c)
{
    if (!c->predefined)
        atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
}
static inline void pm_comm_release(struct pm_comm *c)
{
    if (!c->predefined && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
        pm_comm_destroy(c);
}
/* Agree on a context id unused by every member of `c` (collective over c). */
int pm_context_alloc(struct pm_comm *c, uint16_t *context);
void pm_context_free(uint16_t context);
void pm_comms_init(void);      /* world (context 0) and self (context 1) */
int pm_coll_policy_init(void); /* agree on the collective choices (coll_policy.c) */
void pm_comms_finalize(void);
/* MPI_Finalize: wait until no MPI_Comm_idup agreement thread runs (comm_idup.c). */
void pm_idup_quiesce(void);
/* Attributes (attr.c): copy on dup, delete on free. */
int pm_attrs_copy_comm(struct pm_comm *from, struct pm_comm *to);
int pm_attrs_delete_comm(struct pm_comm *c);
int pm_attrs_copy_type(struct pm_datatype *from, struct pm_datatype *to);
int pm_attrs_delete_type(struct pm_datatype *t);

/* ---- Buffered mode's buffers (bsend_buffer.c) ------------------------------ */
/* A buffer of a scope: the process's, a communicator's, a session's. */
struct pm_bbuf;
extern struct pm_bbuf pm_bbuf_process;
/* The buffer in *slot, made (detached) when there is none yet; NULL when
 * out of memory. It lives as long as its owner. */
struct pm_bbuf *pm_bbuf_get(struct pm_bbuf *_Atomic *slot);
/* Its owner goes (no message is left in it). */
void pm_bbuf_free(struct pm_bbuf *b);
/* Attach (MPI_ERR_BUFFER: one is attached); detach, after the messages in
 * it have left (MPI_ERR_BUFFER: another thread detaches). */
int pm_bbuf_attach(struct pm_bbuf *b, void *buffer, size_t size);
int pm_bbuf_detach(struct pm_bbuf *b, void **buffer, size_t *size);
/* Wait until the messages in it now have left; or a request (on c) that
 * completes then. b may be NULL (never attached). */
void pm_bbuf_flush(struct pm_bbuf *b);
int pm_bbuf_iflush(struct pm_bbuf *b, struct pm_comm *c, MPI_Request *request);
/* The buffer of session `h` (NULL: none, or no such session; session.c). */
struct pm_bbuf *pm_session_bbuf(int h);
/* The index of a process set's name (0: mpi://WORLD, 1: mpi://SELF; -1: no
 * such set; session.c). */
int pm_pset_index(const char *name);

/* ---- Requests (request.c) ------------------------------------------------ */
enum pm_req_kind {
    PM_REQ_SEND,      /* proust send in flight */
    PM_REQ_RECV,      /* proust receive in flight */
    PM_REQ_PERSISTENT,/* MPI_Send_init & co (persistent.c); inactive or started */
    PM_REQ_COLL,      /* nonblocking collective (coll_sched.c) */
    PM_REQ_GREQ,      /* generalized request */
    PM_REQ_ASYNC,     /* completed by engine callbacks: request-based RMA
                         (rma_ops.c), MPI_Isendrecv (isendrecv.c) */
    PM_REQ_DONE,      /* completed at creation (MPI_PROC_NULL, Ibsend...) */
    PM_REQ_FREE,      /* released, kept in a thread's cache with its handle */
};
typedef proust_request_t *_Atomic pm_sleeper_t;

struct pm_request {
    int handle;
    enum pm_req_kind kind;
    struct pm_comm *comm;        /* reference held while the request lives */
    proust_request_t *preq;      /* engine request while in flight */
    _Atomic int done;            /* COLL/GREQ/DONE: completed */
    pm_sleeper_t sleeper;        /* a thread waiting for `done` sleeps on it */
    MPI_Status status;           /* filled at completion */
    /* Receive into a noncontiguous type: data lands in `tmp`, unpacked into
     * (user_buf, count, type) at completion. Sends: `tmp` is freed. */
    void *tmp;
    void *user_buf;
    MPI_Count count;
    struct pm_datatype *type;
    /* PERSISTENT: the operation to start (persistent.c owns these). */
    struct pm_persistent *persist;
    /* COLL: the schedule, freed with `coll_free` when the request goes. */
    void *coll;
    void (*coll_free)(void *coll);
    /* GREQ */
    MPI_Grequest_query_function *gq;
    MPI_Grequest_free_function *gf;
    MPI_Grequest_cancel_function *gc;
    void *gextra;
    struct pm_request *cache_next; /* PM_REQ_FREE: next in the thread's cache */
};
/* A new request of `kind` on `c` (reference taken) with its handle; NULL when
 * out of memory. */
struct pm_request *pm_request_new(enum pm_req_kind kind, struct pm_comm *c);
static inline struct pm_request *pm_request_get(MPI_Request h)
{
    struct pm_request *r = (struct pm_request *)pm_table_get(&pm_request_table, h);
    return r && __atomic_load_n(&r->kind, __ATOMIC_ACQUIRE) != PM_REQ_FREE ? r : NULL;
}
/* The request of every MPI_Isend whose message left inside the call: shared,
 * complete from the start, never freed (request.c). Its handle is fixed, so
 * Wait and Waitall recognise it without a lookup. */
#define PM_REQ_SENT_HANDLE ((MPI_Request)(PROUST_MPI_KIND_REQUEST | 1))
extern struct pm_request pm_req_sent;
void pm_requests_init(void);
/* COLL/GREQ/DONE: mark complete with MPI error `err` (status already set). */
void pm_request_set_done(struct pm_request *r, int err);
/* Is it complete? Fills *st (unless NULL) without releasing it. Progresses
 * the engine once when `progress`. Returns MPI_SUCCESS or the request's
 * error. */
int pm_request_poll(struct pm_request *r, int *flag, MPI_Status *st, bool progress);
/* Release a completed (or inactive persistent) request and its handle. */
void pm_request_free(struct pm_request *r);
/* Fill an MPI status from a proust receive status on `c`. */
void pm_status_from_proust(MPI_Status *st, const proust_status_t *ps);
/* Status of a request that completed without error: a receive reads the
 * sender and tag from the engine's tag; a send keeps the destination and
 * tag recorded in `r` (may be NULL for receives). MPI_ERROR is untouched. */
static inline void pm_status_ok(MPI_Status *st, const struct pm_request *r, bool recv,
                                const proust_status_t *ps)
{
    st->MPI_SOURCE = recv ? pm_tag_source(ps->tag) : r->status.MPI_SOURCE;
    st->MPI_TAG = recv ? pm_tag_tag(ps->tag) : r->status.MPI_TAG;
    st->proust_bytes = (MPI_Count)(recv ? ps->count : ps->size);
    st->proust_cancelled = 0;
}
static inline void pm_status_empty(MPI_Status *st)
{
    if (st) {
        st->MPI_SOURCE = MPI_ANY_SOURCE;
        st->MPI_TAG = MPI_ANY_TAG;
        st->MPI_ERROR = MPI_SUCCESS;
        st->proust_cancelled = 0;
        st->proust_bytes = 0;
    }
}
/* Wait until `*done` becomes nonzero, driving the engine (spin, then yield). */
/* A completion flag set by another thread (schedules, generalized
 * requests): the waiter polls the engine for a while, then parks an engine
 * user request in `sleeper` and sleeps in proust_wait like any engine
 * waiter; pm_flag_set completes it. The setter touches the object holding
 * the flag only before setting it (its owner may free it right after). */
void pm_wait_flag(_Atomic int *done, pm_sleeper_t *sleeper);
/* Set `done` to `value` (atomic OR: the generalized request keeps a bit of
 * its own); returns the previous value. */
int pm_flag_set(_Atomic int *done, pm_sleeper_t *sleeper, int value);

/* persistent.c: PM_REQ_PERSISTENT requests. Poll the active operation (an
 * inactive one is complete with an empty status); complete = become
 * inactive, the handle stays; free = release everything. */
int pm_persistent_poll(struct pm_request *r, int *flag, MPI_Status *st, bool progress);
/* Persistent collectives (coll_persistent.c): the kept arguments `pc`
 * become an inactive persistent request (persistent.c takes `pc` over on
 * success); each start runs the nonblocking operation (its request in
 * *inner). */
struct pm_pcoll;
int pm_persistent_coll(struct pm_comm *c, struct pm_pcoll *pc, MPI_Request *request);
int pm_pcoll_start(struct pm_pcoll *pc, MPI_Request *inner);
void pm_pcoll_free(struct pm_pcoll *pc);
void pm_persistent_complete(struct pm_request *r);
void pm_persistent_free(struct pm_request *r);
/* Started and not yet completed. */
bool pm_persistent_active(const struct pm_request *r);
/* The operation a started request runs (NULL when inactive). */
struct pm_request *pm_persistent_inner(const struct pm_request *r);

/* ---- Point to point internals (pt2pt.c) ---------------------------------- */
/* Start a typed send/receive on `c` with the full MPI semantics (noncontig
 * types packed/unpacked, PROC_NULL): used by persistent and probe code.
 * `mode` is 0 (standard), 'S' (synchronous), 'R' (ready). */
int pm_isend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
             struct pm_comm *c, int mode, struct pm_request **out);
int pm_irecv(void *buf, MPI_Count count, MPI_Datatype dt, int source, int tag,
             struct pm_comm *c, struct pm_request **out);
/* Validation shared by point-to-point calls: return MPI_SUCCESS or raise. */
int pm_check_send(const char *fname, MPI_Comm comm, struct pm_comm *c, MPI_Count count,
                  MPI_Datatype dt, int dest, int tag, struct pm_datatype **t);
int pm_check_recv(const char *fname, MPI_Comm comm, struct pm_comm *c, MPI_Count count,
                  MPI_Datatype dt, int source, int tag, struct pm_datatype **t);
/* The count of a buffer (`count` instances of `t`): MPI_SUCCESS, or the
 * error raised on `comm` when it is negative or its bytes overflow. */
int pm_check_count(const char *fname, MPI_Comm comm, MPI_Count count,
                   const struct pm_datatype *t);
/* Counts up to this need no overflow check on the fast paths: times the
 * largest predefined type (32 bytes) they stay far below SIZE_MAX. An int
 * count passes whenever it is not negative. */
#define PM_COUNT_FAST_MAX ((MPI_Count)1 << 56)
static inline bool pm_count_fast(MPI_Count count)
{
    return (uint64_t)count <= (uint64_t)PM_COUNT_FAST_MAX;
}
/* A packed copy of (buf, count, t) and its size (NULL when out of memory). */
void *pm_pack_copy(const void *buf, MPI_Count count, const struct pm_datatype *t,
                   size_t *bytes);

/* ---- Small helpers (util.c) ----------------------------------------------- */
/* An int output of a value an int cannot hold (a count, a size, a unit set
 * through a _c call) reads MPI_UNDEFINED (MPI-4.0 §5.4.1, §4.1.5). */
static inline int pm_int_or_undefined(MPI_Count v)
{
    return v > INT_MAX ? MPI_UNDEFINED : (int)v;
}
/* A tiny spinlock for short critical sections (atomic_flag). */
void pm_lock_slow(atomic_flag *l);
static inline void pm_lock(atomic_flag *l)
{
    if (PM_UNLIKELY(atomic_flag_test_and_set_explicit(l, memory_order_acquire)))
        pm_lock_slow(l);
}
static inline void pm_unlock(atomic_flag *l)
{
    atomic_flag_clear_explicit(l, memory_order_release);
}
/* strncpy that always terminates and returns the length written. */
int pm_strlcpy(char *dst, const char *src, size_t cap);

#endif /* PROUST_MPI_IMPL_H */
