/*
 * comm.h — what the files of the communicator family share (group.c,
 * comm.c, comm_create.c, context.c, intercomm.c, cart.c, attr.c; win_attr.c
 * for attributes): internal collective steps used to build communicators,
 * context agreement, and the constructors behind the public functions.
 */
#ifndef PROUST_MPI_COMM_H
#define PROUST_MPI_COMM_H

#include "mpi_impl.h"

/* ---- group.c -------------------------------------------------------------- */
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL; -1 when out of memory. */
int pm_group_compare(const struct pm_group *a, const struct pm_group *b);
/* A user handle to a copy of g (MPI_GROUP_EMPTY if empty) deriving from
 * `session` (0: none); raises on error. */
int pm_group_handle_of(const struct pm_group *g, int session, MPI_Group *out, const char *fname);

/* ---- Internal collective steps (context.c) ---------------------------------
 * The participants of a step: `size` processes (world ranks in `world`), this
 * one at index `rank`, talking with tags `tag` (context field | sequence or
 * tag; the source field is added when sending). These steps use the engine
 * directly, never the MPI collectives. They return MPI_SUCCESS or an MPI
 * error class (not raised). */
struct pm_xg {
    const int *world;
    int size, rank;
    uint64_t tag;
};
/* The local group of c on its collective context, with the next sequence
 * number of c (every member must take it at the same point). */
void pm_xg_of_comm(struct pm_xg *x, struct pm_comm *c);
int pm_xg_allreduce_band(const struct pm_xg *x, uint64_t *v, size_t n);
int pm_xg_allgather(const struct pm_xg *x, const void *mine, void *all, size_t bytes);
int pm_xg_bcast(const struct pm_xg *x, void *buf, size_t bytes, int root);
/* Blocking exchange with one process (world ranks) on full tags: `stag` is
 * sent as is, the receive matches `rtag` under the context and tag fields. */
int pm_sendrecv_world(const void *sbuf, size_t slen, int dest, uint64_t stag, void *rbuf,
                      size_t rlen, int src, uint64_t rtag);

/* ---- Context ids (context.c) ------------------------------------------------
 * A context agreement, run by every participant; with `exchange`, two
 * groups agree: each group's leader (index `leader` of the local
 * participants) trades its group's result with the other leader. `key`
 * tells concurrent agreements of one process apart (it places their retry
 * candidates) and must be the same at every participant. */
struct pm_agree {
    struct pm_comm *seq_comm; /* take a sequence number of it per step, or NULL */
    const int *world;         /* local participants (world ranks) */
    int size, rank;
    int leader;               /* two-group agreement: this group's leader */
    uint64_t ctx_field;       /* context field of the local rounds */
    uint64_t fixed_tag;       /* tag of the local rounds when seq_comm is NULL */
    uint32_t fixed_seq;       /* ... and the number `exchange` gets then */
    uint64_t key;
    /* Two-group agreement: called at the leader with this step's sequence
     * number (when seq_comm) to AND the other group's words into v. */
    int (*exchange)(void *arg, uint32_t seq, uint64_t *v, size_t n);
    void *arg;
};
/* Agree on `n` (1 or 2) context ids free at every participant; reserves them. */
int pm_context_agree(const struct pm_agree *a, int n, uint16_t *ids);
/* Keys of pm_agree for the different callers (distinct for agreements that
 * may run at the same time in one process). */
#define PM_KEY_COMM(ctx) ((uint64_t)(ctx) << 32)
#define PM_KEY_GROUP(ctx, tag) (((uint64_t)(ctx) << 32) | (1u << 30) | (uint32_t)(tag))
#define PM_KEY_ICREATE(ctx, tag) (((uint64_t)(ctx) << 32) | (1u << 29) | (uint32_t)(tag))
/* Constructors run by a group's members only (MPI_Comm_create_group, the
 * sessions' *_from_group*) agree in the upper half of a communicator's
 * collective sequence space, at a 27-bit slot (the parent's own
 * collectives count from 0). */
#define PM_GROUP_TAG_MASK ((1u << (PM_TAG_BITS - 1)) - 1)
static inline uint64_t pm_group_slot(const struct pm_comm *c, uint32_t tag)
{
    return c->tag_coll | ((uint64_t)1 << (PM_TAG_BITS - 1)) | (tag & PM_GROUP_TAG_MASK);
}
/* The slot a string tag stands for (comm_create.c). */
uint32_t pm_stringtag_hash(const char *stringtag);
/* A communicator over g, which the caller is in: g's members agree on a
 * context id in c's slot `tag` (agreement key `key`). */
int pm_comm_create_in_slot(struct pm_comm *c, struct pm_group *g, uint32_t tag, uint64_t key,
                           struct pm_comm **out);
#define PM_KEY_FROM_GROUP(tag) (((uint64_t)0xffff << 32) | (1u << 30) | (uint32_t)(tag))
#define PM_KEY_IDUP(ctx, seq) (((uint64_t)(ctx) << 32) | (1u << 28) | ((seq) & 0x0fffffffu))
/* Agree on n ids over communicator c (intra: its group; inter: both groups). */
int pm_context_alloc_n(struct pm_comm *c, int n, uint16_t *ids);
/* The same with every step on the tag of one sequence number of c, taken
 * by the caller: the agreement may then run at any time after the caller's
 * turn among c's collectives (MPI_Comm_idup). */
int pm_context_alloc_at(struct pm_comm *c, int n, uint16_t *ids, uint32_t seq);

/* ---- Communicator objects (comm.c) ------------------------------------------ */
/* Give `nc` what a derived communicator keeps of `parent`: its error handler
 * (instead of the default) and its session. */
void pm_comm_inherit(struct pm_comm *nc, const struct pm_comm *parent);
/* Give c context id `context` (and the tag fields derived from it). */
void pm_comm_set_context(struct pm_comm *c, uint16_t context);
/* Undo pm_comm_new for a communicator never shown to the user. */
void pm_comm_discard(struct pm_comm *c);
/* Raise an error for an invalid communicator handle. */
int pm_comm_invalid(MPI_Comm comm, const char *fname);
/* Raise the failure `rc` of a constructor (agreement, exchange) on comm,
 * saying what it means. */
int pm_comm_fail(MPI_Comm comm, int rc, const char *fname);

/* ---- Constructors (comm_create.c, intercomm.c) ------------------------------ */
/* Collective over intracomm c: a communicator over the members of c with
 * the same color, ordered by (key, rank in c); *out NULL for MPI_UNDEFINED. */
int pm_comm_split_impl(struct pm_comm *c, int color, int key, struct pm_comm **out);
/* Collective over intracomm c: a communicator over g (a subset of c's group,
 * the same at every process); *out NULL where this process is not in g. */
int pm_comm_create_impl(struct pm_comm *c, struct pm_group *g, struct pm_comm **out);
/* A communicator over the first n ranks of c, in order (the topology
 * constructors); *out is NULL on the others. Collective over c. */
int pm_comm_create_first(struct pm_comm *c, int n, struct pm_comm **out);
/* Intercommunicator versions (intercomm.c). */
int pm_intercomm_dup(struct pm_comm *c, struct pm_comm **out);
int pm_intercomm_split(struct pm_comm *c, int color, int key, struct pm_comm **out);
/* Split by host (MPI_COMM_TYPE_SHARED); host is a hash of the host name, 0
 * for MPI_UNDEFINED. */
int pm_intercomm_split_shared(struct pm_comm *c, uint64_t host, int key, struct pm_comm **out);
/* MPI_Comm_split_type once checked (comm_split_type.c): split_type is
 * MPI_COMM_TYPE_SHARED, _HW_GUIDED, _HW_UNGUIDED or MPI_UNDEFINED. */
int pm_comm_split_by_type(struct pm_comm *c, int split_type, int key, MPI_Info info,
                          struct pm_comm **out);
int pm_intercomm_create_sub(struct pm_comm *c, struct pm_group *g, struct pm_comm **out);
/* New intercommunicator over groups local/remote with contexts ids[0] (the
 * intercommunicator) and ids[1] (its local_comm). */
struct pm_comm *pm_intercomm_new(struct pm_group *local, struct pm_group *remote,
                                 const uint16_t ids[2]);

/* ---- Attribute keys (attr_keyval.c, used by attr.c and win_attr.c) ---------- */
enum { PM_KV_COMM = 1, PM_KV_TYPE = 2, PM_KV_WIN = 3 };
struct pm_keyval {
    int id, kind; /* PM_KV_* */
    MPI_Comm_copy_attr_function *ccopy;
    MPI_Comm_delete_attr_function *cdel;
    MPI_Type_copy_attr_function *tcopy;
    MPI_Type_delete_attr_function *tdel;
    MPI_Win_copy_attr_function *wcopy; /* never called: windows are not duplicated */
    MPI_Win_delete_attr_function *wdel;
    void *extra;
    int refs;   /* the number (until freed) + attributes using it (keyval lock) */
    bool freed; /* MPI_*_free_keyval was called */
    /* made from Fortran (attr_language.h): its callbacks are trampolines
     * that take stored values as they are, and free_extra(extra) runs
     * when the keyval goes */
    bool fortran;
    void (*free_extra)(void *extra);
};
/* The name of a predefined window keyval (MPI_WIN_BASE & co: outside the
 * keyval number space, read by MPI_Win_get_attr only), else NULL. */
static inline const char *pm_kv_win_predefined(int id)
{
    switch (id) {
    case MPI_WIN_BASE: return "MPI_WIN_BASE";
    case MPI_WIN_SIZE: return "MPI_WIN_SIZE";
    case MPI_WIN_DISP_UNIT: return "MPI_WIN_DISP_UNIT";
    case MPI_WIN_CREATE_FLAVOR: return "MPI_WIN_CREATE_FLAVOR";
    case MPI_WIN_MODEL: return "MPI_WIN_MODEL";
    default: return NULL;
    }
}
void pm_kv_retain(struct pm_keyval *kv);
void pm_kv_release(struct pm_keyval *kv);
/* The keyval `id` of `kind` with a reference taken, or raise on `comm`
 * (MPI_ERR_KEYVAL). Predefined keyvals give MPI_SUCCESS and *out NULL when
 * allow_predefined (communicator keyvals only). */
int pm_kv_get(int id, int kind, bool allow_predefined, MPI_Comm comm, const char *fn,
              struct pm_keyval **out);

/* ---- Attribute lists (attr.c) ------------------------------------------------
 * An object's attribute list and the lock that guards it, for objects whose
 * attribute functions live outside attr.c (windows, win_attr.c). No lock is
 * held while a callback runs. */
struct pm_attr_host {
    struct pm_attr **list;
    atomic_flag *lock;
    int kind;   /* PM_KV_* */
    int handle; /* passed to the callbacks */
};
/* Store val for kv (the old value's delete callback first); returns an MPI
 * error class, not raised (a failing callback's code as is). */
int pm_attr_set(const struct pm_attr_host *h, struct pm_keyval *kv, void *val);
/* The value stored for kv: true and *val, or false. */
bool pm_attr_get(const struct pm_attr_host *h, const struct pm_keyval *kv, void **val);
/* Delete kv's attribute (delete callback first; none: MPI_SUCCESS). */
int pm_attr_delete(const struct pm_attr_host *h, struct pm_keyval *kv);
/* Delete every attribute, newest first; stops at a failing callback. */
int pm_attrs_delete_all(const struct pm_attr_host *h);

/* ---- Topologies (cart.c) ------------------------------------------------------ */
struct pm_cart *pm_cart_new(int ndims, const int *dims, const int *periods, int rank);
struct pm_cart *pm_cart_copy(const struct pm_cart *t);
void pm_cart_free(struct pm_cart *t);
/* (graph.c) */
struct pm_graph *pm_graph_new(int nnodes, const int *index, const int *edges);
struct pm_graph *pm_graph_copy(const struct pm_graph *t);
void pm_graph_free(struct pm_graph *t);
/* (dist_graph.c) */
void pm_dist_graph_free(struct pm_dist_graph *t);
/* Give nc copies of c's topology; false when out of memory. */
bool pm_topo_copy(struct pm_comm *nc, const struct pm_comm *c);

#endif /* PROUST_MPI_COMM_H */
