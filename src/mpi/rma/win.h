/*
 * win.h — one-sided communication (MPI_Win), shared by win*.c and rma_*.c.
 *
 * Every RMA operation is an active message on the window's private
 * communicator (a dup of the one given at creation): the origin sends a
 * header — and the data, inline when small — and the target applies it in
 * a completion callback of the receive it keeps posted for that origin
 * (rma_target.c). Callbacks run in whichever thread drives the engine, the
 * background progress thread included, so a target computing outside MPI
 * still serves puts, gets and locks when a progress thread runs.
 *
 * Per origin, the target handles one message at a time, in the order sent
 * (its receive is reposted only when the previous operation is applied):
 * accumulate ordering, and "every operation before this unlock/flush/
 * complete is applied", come from that order alone.
 *
 * Tags, in the MPI tag field of the window's communicator:
 *   PM_RMA_TAG_HDR        a header (always eager: at most PM_RMA_HDR_MAX)
 *   PM_RMA_TAG_DATA       the layout and data that did not fit in it
 *   PM_RMA_TAG_RESP | id  a reply: data of a get, result of a fetch, an ack
 */
#ifndef PROUST_MPI_WIN_H
#define PROUST_MPI_WIN_H

#include <pthread.h>

#include "mpi_impl.h"

#define PM_RMA_TAG_HDR 0u
#define PM_RMA_TAG_DATA 1u
#define PM_RMA_TAG_RESP (1u << 27)
#define PM_RMA_ID_MASK ((1u << 27) - 1)
/* Largest header message: header, target layout and data that fit. */
#define PM_RMA_HDR_MAX 8192

enum pm_rma_kind {
    PM_RMA_PUT = 1,
    PM_RMA_GET,
    PM_RMA_ACC,      /* accumulate (MPI_REPLACE included) */
    PM_RMA_GACC,     /* get_accumulate, fetch_and_op (MPI_NO_OP included) */
    PM_RMA_CAS,      /* compare_and_swap */
    PM_RMA_LOCK,     /* lock request; granted by an ack */
    PM_RMA_UNLOCK,   /* release; acked once every earlier operation is applied */
    PM_RMA_FLUSH,    /* acked once every earlier operation is applied */
    PM_RMA_POST,     /* PSCW: the target (sender) exposes its window */
    PM_RMA_COMPLETE, /* PSCW: the origin (sender) ends its access epoch */
    PM_RMA_CLOSE,    /* MPI_Win_free: the last message of an origin */
    PM_RMA_KIND_MAX
};

/* Lock types on the wire (pm_rma_hdr.lock_type): values of the protocol's
 * own, so that it does not depend on mpi.h's MPI_LOCK_* constants;
 * pm_rma_control encodes them. */
enum pm_rma_lock_wire {
    PM_RMA_LOCK_WIRE_NONE = 0, /* a control message that is no lock or unlock */
    PM_RMA_LOCK_WIRE_EXCLUSIVE = 1,
    PM_RMA_LOCK_WIRE_SHARED = 2,
};

/* Header flags. */
#define PM_RMA_F_FOLLOW 0x1u  /* layout and data come in a PM_RMA_TAG_DATA message */
#define PM_RMA_F_NOCHECK 0x2u /* unlock of a lock taken with MPI_MODE_NOCHECK */

struct pm_rma_hdr {
    uint8_t kind;      /* enum pm_rma_kind */
    uint8_t flags;     /* PM_RMA_F_* */
    uint8_t lock_type; /* LOCK/UNLOCK: enum pm_rma_lock_wire */
    uint8_t op;        /* ACC/GACC: index of the predefined operation */
    uint16_t basic;    /* ACC/GACC/CAS: index of the predefined element type */
    uint16_t reserved;
    uint32_t id;       /* reply tag (GET, GACC, CAS, LOCK, UNLOCK, FLUSH) */
    uint32_t epoch;    /* origin's fence epoch when the operation was issued */
    uint64_t disp;     /* target offset in bytes (dynamic windows: address) */
    uint64_t nblocks;  /* target layout blocks; 0: one block of `bytes` at disp */
    uint64_t bytes;    /* data bytes at the target (and reply bytes of a get) */
};
/* After the header: nblocks (offset, length) int64 pairs relative to disp,
 * then the data (PUT, ACC, GACC: the packed origin data; CAS: the new value
 * then the compare value). */

/* Does the operation get a reply carrying data (and so need one even when
 * the target refuses it)? */
static inline bool pm_rma_fetches(int kind)
{
    return kind == PM_RMA_GET || kind == PM_RMA_GACC || kind == PM_RMA_CAS;
}

/* Bytes of origin data an operation of `tbytes` target bytes carries, for
 * operation index `opi` (a fetch with MPI_NO_OP carries none). Both ends of
 * the wire compute it here. */
static inline uint64_t pm_rma_data_bytes(int kind, int opi, uint64_t tbytes)
{
    switch (kind) {
    case PM_RMA_PUT:
    case PM_RMA_ACC:
        return tbytes;
    case PM_RMA_GACC:
        return opi == (MPI_NO_OP & PROUST_MPI_INDEX_MASK) ? 0 : tbytes;
    case PM_RMA_CAS:
        return 2 * tbytes;
    default:
        return 0;
    }
}

/* A region attached to a dynamic window. */
struct pm_win_region {
    uintptr_t base;
    size_t size;
};

/* The target side of one origin (rma_target.c). */
struct pm_rma_port;

/* A PSCW group translated to ranks of the window. */
struct pm_win_group {
    int n;
    int *ranks;
};

#define PM_SHM_LOCK_STRIDE 16 /* ints: a lock word per cache line */

struct pm_win {
    int handle;
    struct pm_comm *comm;   /* private dup: RMA traffic and internal collectives */
    int rank, size;
    int flavor;             /* MPI_WIN_FLAVOR_* */
    void *base;             /* local window memory */
    MPI_Aint win_size;      /* bytes of the local window */
    MPI_Aint disp_unit;     /* (MPI_Aint: MPI_Win_create_c & co) */
    int disp_unit_attr;     /* MPI_WIN_DISP_UNIT's int: the unit, or MPI_UNDEFINED */
    MPI_Aint *sizes;        /* every rank's window size (range checks) */
    MPI_Aint *disp_units;   /* every rank's displacement unit */
    void *alloc;            /* ALLOCATE: memory to release at free */
    /* SHARED flavor, and ALLOCATE within a host (PROUST_RMA_SHM): the
     * mapped segment and each rank's part of it; then `direct`: operations
     * are loads and stores by the origin, accumulates under the target's
     * lock word in the segment (shm_locks, one cache line each) */
    void *shm_base;
    size_t shm_len;
    MPI_Aint *shm_offsets;
    bool direct;
    _Atomic int *shm_locks;   /* rank r's: shm_locks[r * PM_SHM_LOCK_STRIDE] */

    /* Across hosts (PROUST_RMA_NIC): the window's memory registered for
     * one-sided access, and every rank's key (length 0: none). Puts and
     * gets to a rank with a key are remote writes and reads (rma_ops.c),
     * counted in `pending` until the bytes are there, not in `sent` or
     * `unflushed`: no message tells the target. `nic`: some rank has a
     * key (the same on every rank: fences then end with a barrier). */
    proust_mem_t *nic_mem;
    uint8_t (*nic_keys)[PROUST_MEM_KEY_MAX];
    uint8_t *nic_key_len;
    uint8_t *nic_how;        /* PROUST_RMA_BY_NIC or _BY_POLLING, per rank */
    int nic_mode;            /* PROUST_RMA_NIC: 1 on, -1 auto */
    bool nic;
    /* Accumulates by the NIC's atomics (rma_nic.c): the predefined types
     * (bit = type index) whose accumulates all go that way, on every rank
     * alike; every rank's key length for them (itself included), the low
     * bits of its window's address (alignment), and whether each waits
     * for the earlier ones (a provider that does not keep their order) */
    uint64_t nic_acc_types;
    uint8_t *nic_acc_key_len;
    uint8_t *nic_base_low;
    bool nic_acc_wait;
    /* Passive-target locks by the NIC's atomics (rma_nic_lock.c): this
     * rank's lock word and its registration, every rank's key; nic_locks
     * where every rank has one and 64-bit atomics go by the NIC */
    uint64_t *nic_lock_word;
    proust_mem_t *nic_lock_mem;
    struct pm_nic_lock_key *nic_lock_keys;
    bool nic_locks;

    pthread_mutex_t lock;   /* regions, lock state, queue, PSCW counters */
    struct pm_win_region *regions;
    int nregions, cap_regions;

    /* Target side. */
    struct pm_rma_port *ports; /* one per origin rank */
    _Atomic int ports_live;    /* ports whose receive is still posted */
    atomic_flag acc_lock;      /* accumulates are atomic with each other */
    int lock_excl;             /* exclusive holder present */
    int lock_shared;           /* shared holders */
    struct pm_rma_waiter *lock_queue, *lock_queue_tail;
    _Atomic uint64_t applied[2]; /* operations applied, by epoch parity */
    int *post_seen;            /* PSCW: posts received from each target */
    int *complete_seen;        /* PSCW: completes received from each origin */

    /* Origin side. */
    _Atomic uint32_t next_id;
    uint32_t epoch;            /* fence epoch of the operations being issued */
    _Atomic uint64_t *sent;    /* operations issued to each rank in this epoch */
    _Atomic int *pending;      /* operations to each rank not complete locally */
    _Atomic int *unflushed;    /* operations without a reply to each rank since the
                                  last flush (a flush's round trip is for them) */
    _Atomic int op_error;      /* an operation without a request failed at the
                                  origin (a refused get's short reply): raised by
                                  the next flush or unlock */
    int *locked;               /* passive target: 0, MPI_LOCK_* (held) */
    bool *lock_nocheck;
    bool lock_all;             /* inside MPI_Win_lock_all */
    bool lock_all_nocheck;
    struct pm_win_group access, exposure; /* PSCW groups in force */
    bool fence_open;           /* a fence opened an epoch (not NOSUCCEED) */

    MPI_Info info;
    char name[MPI_MAX_OBJECT_NAME];
    struct pm_attr *attrs;     /* user attributes (win_attr.c) */
    atomic_flag attr_lock;
};

extern struct pm_table pm_win_table;

static inline struct pm_win *pm_win_get(MPI_Win h)
{
    return (struct pm_win *)pm_table_get(&pm_win_table, h);
}

/* Raise `code` on the window's error handler (MPI_WIN_NULL or an invalid
 * window: MPI_COMM_WORLD's). */
int pm_win_error(MPI_Win win, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Raise MPI_ERR_WIN for a handle that names no window. */
int pm_win_invalid(MPI_Win win, const char *fname);
/* Did the window's creation say accumulate_ordering "none"? */
bool pm_win_unordered(const struct pm_win *w);
/* A new info with every window hint: from given, else old, else default. */
int pm_win_hints(MPI_Info old, MPI_Info given, MPI_Info *out);
/* struct pm_win *var for handle h, or return the MPI_ERR_WIN raised. */
#define PM_GET_WIN(var, h, fname)       \
    struct pm_win *var = pm_win_get(h); \
    if (!var)                           \
    return pm_win_invalid(h, fname)

/* Byte `at` of rank `target`'s part of a shared-memory window's segment. */
static inline char *pm_win_shm_addr(const struct pm_win *w, int target, uint64_t at)
{
    return (char *)w->shm_base + w->shm_offsets[target] + at;
}

/* ---- Target side (rma_target.c) ---- */
/* Post the receive of every origin; MPI_SUCCESS or MPI_ERR_NO_MEM. */
int pm_rma_ports_open(struct pm_win *w);
/* Close every port (collective: each waits for every origin's CLOSE). */
void pm_rma_ports_close(struct pm_win *w);
/* Send a header-only control message to `target` (LOCK, UNLOCK, FLUSH,
 * POST, COMPLETE); with `wait_ack`, wait for the reply. `lock_type`:
 * MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED for LOCK and UNLOCK, else 0.
 * Returns an MPI error class (the target's reply may carry one). */
int pm_rma_control(struct pm_win *w, int target, int kind, int flags, int lock_type,
                   bool wait_ack);
/* Accumulates to `target`'s memory are atomic with each other: its lock
 * word in the segment of a direct window, else the window's own lock.
 * Fails (an MPI error) only when a process of the window died. */
int pm_rma_acc_lock(struct pm_win *w, int target);
void pm_rma_acc_unlock(struct pm_win *w, int target);
/* A direct window's passive-target lock of `target` (MPI_LOCK_*), taken
 * and released by the origin on the word in the segment; the wait fails
 * (an MPI error) when a process of the window died. */
int pm_rma_direct_lock(struct pm_win *w, int target, int type);
void pm_rma_direct_unlock(struct pm_win *w, int target, int type);
/* A direct window: apply the operation `h` (layout lay, packed data in)
 * to `target`'s memory here, its reply (get data, fetched values) into
 * out. MPI_SUCCESS, or the error class the target would have counted. */
int pm_rma_apply_direct(struct pm_win *w, int target, const struct pm_rma_hdr *h,
                        const int64_t *lay, const char *in, char *out);

/* ---- Across hosts (rma_nic.c, rma_nic_lock.c) ---- */
struct pm_nic_lock_key {
    uint8_t len;
    uint8_t key[PROUST_MEM_KEY_MAX];
};
/* Allocate and register this rank's lock word: its key (*key_len 0: none,
 * the window's locks stay messages); MPI_ERR_NO_MEM. */
int pm_rma_nic_lock_setup(struct pm_win *w, uint8_t *key, uint64_t *key_len);
void pm_rma_nic_lock_free(struct pm_win *w);
/* Take or give back `target`'s lock (MPI_LOCK_*) on its word; an MPI
 * error class if an atomic failed (a process of the window died). */
int pm_rma_nic_lock(struct pm_win *w, int target, int type);
int pm_rma_nic_unlock(struct pm_win *w, int target, int type);
/* The predefined types (bit = index) this process can accumulate by the
 * NIC's atomics to every rank of the window; 0 for none. */
uint64_t pm_rma_nic_acc_offer(const struct pm_win *w);
/* The proust_atomic_type_t of a predefined type index, or -1. */
int pm_rma_nic_type(int basic);

/* ---- Origin side (rma_ops.c) ---- */
/* Wait until the operations issued to `target` (-1: every rank) completed
 * locally (buffers reusable, gets landed). */
void pm_rma_wait_local(struct pm_win *w, int target);

/* ---- Attributes (win_attr.c) ---- */
/* Delete every user attribute of a window being freed. */
int pm_attrs_delete_win(struct pm_win *w);

#endif /* PROUST_MPI_WIN_H */
