/*
 * proust.h — the native Proust messaging API.
 *
 * Conventions, stated once:
 *  - Every function returns a proust status: PROUST_OK (0) on success, a
 *    negative PROUST_ERR_* code on failure; proust_strerror() describes it.
 *    Output parameters are written only on success.
 *  - Every function may be called from any thread at any time between
 *    proust_init() and proust_finalize() (MPI_THREAD_MULTIPLE semantics).
 *  - Ranks are 0..size-1 as given by the launcher (proustrun, or a single
 *    process when started without one).
 *  - Tags are 64-bit. A receive matches a message when
 *    (msg_tag & mask) == (tag & mask); mask 0 matches any tag
 *    (PROUST_TAG_MASK_ANY), PROUST_TAG_MASK_FULL matches the tag exactly.
 *  - Between one sender and one receiver, messages that a receive could
 *    match are matched in the order they were sent (non-overtaking).
 *  - Requests are opaque handles owned by the library. proust_wait/test and
 *    friends release a completed request and set the caller's handle to NULL.
 */
#ifndef PROUST_H
#define PROUST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PROUST_VERSION_MAJOR 0
#define PROUST_VERSION_MINOR 1
#define PROUST_VERSION_PATCH 0
#define PROUST_VERSION_STRING "0.1.0"

/* ---- Status codes (one list; proust_strerror/proust_error_name use it) -- */
#define PROUST_STATUS_LIST(X)                                                  \
    X(OK, 0, "success")                                                        \
    X(ERR_INVALID, -1, "invalid argument")                                     \
    X(ERR_RANK, -2, "invalid rank")                                            \
    X(ERR_TAG, -3, "invalid tag or tag mask")                                  \
    X(ERR_NOMEM, -4, "out of memory")                                          \
    X(ERR_TRUNCATE, -5, "message truncated: receive buffer too small")         \
    X(ERR_PEER_FAILED, -6, "peer process failed")                              \
    X(ERR_CONN, -7, "connection to peer lost")                                 \
    X(ERR_PROTO, -8, "malformed packet from the network")                      \
    X(ERR_CANCELED, -9, "request canceled")                                    \
    X(ERR_NOT_SUPPORTED, -10, "operation not supported")                       \
    X(ERR_TIMEOUT, -11, "timed out")                                           \
    X(ERR_BOOT, -12, "bootstrap (launcher) failure")                           \
    X(ERR_SYS, -13, "system call failed")                                      \
    X(ERR_STATE, -14, "library not initialized or already finalized")          \
    X(ERR_NO_RAIL, -15, "no rail can reach this peer")                         \
    X(ERR_BUSY, -16, "resource busy")                                          \
    X(ERR_PENDING, -17, "request still pending")

typedef enum {
#define PROUST_STATUS_ENUM(name, value, text) PROUST_##name = value,
    PROUST_STATUS_LIST(PROUST_STATUS_ENUM)
#undef PROUST_STATUS_ENUM
} proust_status_code_t;

/* Human-readable description of a status code ("invalid rank"). */
const char *proust_strerror(int code);
/* Symbolic name of a status code ("PROUST_ERR_RANK"). */
const char *proust_error_name(int code);

/* ---- Types --------------------------------------------------------------- */
typedef uint64_t proust_tag_t;
typedef struct proust_session proust_session_t; /* one per process */
typedef struct proust_request proust_request_t; /* a send or receive */
typedef struct proust_pack proust_pack_t;       /* a multi-segment message */

#define PROUST_ANY_SOURCE (-1)
#define PROUST_TAG_MASK_ANY ((proust_tag_t)0)
#define PROUST_TAG_MASK_FULL (~(proust_tag_t)0)

/* Completion information of a request. */
typedef struct proust_status {
    int source;       /* rank of the sender (receives) or destination (sends) */
    proust_tag_t tag; /* tag of the message */
    size_t size;      /* full size of the message as sent */
    size_t count;     /* bytes placed in the receive buffer (<= size) */
    int error;        /* PROUST_OK, PROUST_ERR_TRUNCATE, PROUST_ERR_CANCELED, ... */
} proust_status_t;

/* ---- Session ------------------------------------------------------------- */
/*
 * Initialise the library. Rank, size and the address exchange come from the
 * launcher found in the environment (proustrun), or a one-process job when
 * started without one. Reads the PROUST_* environment variables.
 * Errors: PROUST_ERR_STATE if already initialised, PROUST_ERR_BOOT if the
 * launcher cannot be reached, PROUST_ERR_NO_RAIL if a peer cannot be reached.
 */
int proust_init(proust_session_t **session);
/* Complete outstanding sends (also those released with
 * proust_request_free; at most 10 s), leave together with the other ranks,
 * then release everything: receives still posted are dropped and every
 * request handle, waited for or not, becomes invalid. */
int proust_finalize(proust_session_t *session);
int proust_rank(const proust_session_t *session);
int proust_size(const proust_session_t *session);
/* 1 when more ranks of the job run on this node than there are cores for
 * them (PROUST_PROGRESS=auto then picks block mode: waiters yield and
 * sleep), 0 otherwise; PROUST_ERR_STATE without a session. */
int proust_node_oversubscribed(const proust_session_t *session);
/* The ranks of the job on this node and the cores they share there (the
 * usable cores, or PROUST_NODE_CPUS where the launcher set it), as
 * proust_node_oversubscribed compares them: PROUST_OK, PROUST_ERR_STATE
 * without a session, PROUST_ERR_INVALID for a NULL pointer. */
int proust_node_load(const proust_session_t *session, int *local_ranks, int *cpus);
/* Collective: every rank's `len` bytes, in rank order, into `all`
 * (size x len bytes), gathered by the launcher rather than by messages:
 * no shared-memory ring or connection is made, no rank waits on another's
 * turn at a cpu. For agreements at start-up (MPI_Init's). Every rank calls
 * it, in the same order, with the same len (at most 1 KiB).
 * PROUST_ERR_NOT_SUPPORTED where the launcher cannot gather in one
 * exchange (PMI's rank-by-rank gets: use messages), PROUST_ERR_INVALID for
 * bad arguments, PROUST_ERR_PROTO if a rank gave another length,
 * PROUST_ERR_BOOT if the launcher failed. */
int proust_oob_allgather(proust_session_t *session, const void *mine, size_t len, void *all);
/* PROUST_OK while `rank` is reachable, else why it is not (the status
 * that broke its connection: PROUST_ERR_PEER_FAILED, ...); the engine
 * learns it while it progresses. PROUST_ERR_RANK for a bad rank. */
int proust_peer_status(const proust_session_t *s, int rank);
/* Name of the rail (driver) that carries traffic to `peer` ("self", "shm",
 * "tcp"). Errors: PROUST_ERR_RANK. */
int proust_peer_rail(const proust_session_t *session, int peer, const char **rail_name);
/* Name of the strategy in force: PROUST_STRATEGY ("auto", "default",
 * "aggreg", "coalesce", "split_balance"). */
const char *proust_strategy_name(const proust_session_t *session);
/* The strategy that packs traffic to `peer` now: under "auto", the one its
 * rail's measured cost of a small packet calls for ("default" on shm,
 * "coalesce" on tcp), with that cost in nanoseconds in *packet_ns (may be
 * NULL). Errors: PROUST_ERR_INVALID, PROUST_ERR_RANK. */
int proust_peer_strategy(const proust_session_t *session, int peer, const char **name,
                         unsigned *packet_ns);
/* Advance communication from the calling thread; returns immediately. */
int proust_progress(proust_session_t *session);

/* ---- Point to point -------------------------------------------------------- */
/* Standard send: completes when the buffer may be reused. */
int proust_isend(proust_session_t *s, const void *buf, size_t len, int dest,
                 proust_tag_t tag, proust_request_t **req);
/* Synchronous send: completes only once a receive has matched the message. */
int proust_issend(proust_session_t *s, const void *buf, size_t len, int dest,
                  proust_tag_t tag, proust_request_t **req);
/* Receive from `source` (or PROUST_ANY_SOURCE) a message whose tag matches
 * `tag` under `mask`. */
int proust_irecv(proust_session_t *s, void *buf, size_t len, int source,
                 proust_tag_t tag, proust_tag_t mask, proust_request_t **req);
/* proust_irecv, except that a receive matched in the call by a message
 * that has wholly arrived (eager) completes there: PROUST_OK with *reqp
 * NULL and its status in *status (error PROUST_ERR_TRUNCATE if it did not
 * fit); otherwise *reqp as proust_irecv gives it. Saves the request of the
 * common "message already here" case. */
int proust_irecv_inline(proust_session_t *s, void *buf, size_t len, int source, proust_tag_t tag,
                        proust_tag_t mask, proust_request_t **reqp, proust_status_t *status);

/* Send now or not at all: PROUST_OK when the message left inside the call
 * (an eager message with nothing queued ahead of it to `dest`: the buffer
 * may be reused, there is nothing to wait for); PROUST_ERR_BUSY when it
 * would have had to wait (rendezvous size, a full queue, an aggregating
 * strategy): nothing was sent, post it with proust_isend. Other errors as
 * proust_isend. Order with the other sends to `dest` is kept. */
int proust_try_send(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag);

/* Blocking helpers: post then wait. */
int proust_send(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag);
int proust_ssend(proust_session_t *s, const void *buf, size_t len, int dest, proust_tag_t tag);
int proust_recv(proust_session_t *s, void *buf, size_t len, int source, proust_tag_t tag,
                proust_tag_t mask, proust_status_t *status);

/*
 * Completion. On completion the request is released and *req set to NULL;
 * `status` (may be NULL) receives its completion information. The return
 * value is the request's own error (PROUST_ERR_TRUNCATE, ...), also in
 * status->error. Waiting on a NULL request returns at once with PROUST_OK.
 */
int proust_wait(proust_request_t **req, proust_status_t *status);
/* *flag = 1 and the request released if complete, *flag = 0 otherwise. */
int proust_test(proust_request_t **req, int *flag, proust_status_t *status);
/* Wait for one of `count` requests (NULL entries are skipped). *index is the
 * completed one; PROUST_ERR_INVALID if all are NULL. */
int proust_waitany(size_t count, proust_request_t **reqs, size_t *index, proust_status_t *status);
/* Wait for all; statuses (may be NULL) has `count` entries. Returns
 * PROUST_OK if every request succeeded, else the first error found. */
int proust_waitall(size_t count, proust_request_t **reqs, proust_status_t *statuses);
/* Complete those that are done: *outcount of them, their positions in
 * indices[] and their statuses in statuses[] (both may be NULL). */
int proust_testsome(size_t count, proust_request_t **reqs, size_t *outcount, size_t *indices,
                    proust_status_t *statuses);
/* Cancel a posted receive not yet matched: it completes with
 * PROUST_ERR_CANCELED (a matched receive cannot be: PROUST_ERR_BUSY).
 * Cancel a send: its receiver is asked to drop the message if it has not
 * matched it yet (PROUST_OK: asked; PROUST_ERR_BUSY: asked already, or the
 * send failed). The send then completes with PROUST_ERR_CANCELED if the
 * message was dropped, normally if it was not; either way the request is
 * not finished before the receiver answers (or fails). The request must
 * still be waited for. */
int proust_cancel(proust_request_t *req);
/* Release a request the caller will not wait for; it completes in the
 * background. */
int proust_request_free(proust_request_t **req);

/* Is a matching message available? On success *flag tells, and status
 * describes the message (size, source, tag) without receiving it. */
int proust_iprobe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                  int *flag, proust_status_t *status);
int proust_probe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                 proust_status_t *status);

/*
 * Matched probe (MPI_Mprobe): like proust_iprobe, but a message found is
 * taken out of matching at once — no other receive or probe can see it —
 * and *msg names it until proust_imrecv receives it (exactly once).
 */
typedef struct proust_message proust_message_t;
int proust_improbe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                   int *flag, proust_message_t **msg, proust_status_t *status);
/* Receive a message taken by proust_improbe into buf (truncation as for
 * proust_irecv). */
int proust_imrecv(proust_session_t *s, proust_message_t *msg, void *buf, size_t len,
                  proust_request_t **req);

/* Stop the whole job: every process exits, the launcher with `code`. */
int proust_abort(proust_session_t *s, int code);

/* ---- One-sided access (remote memory) ------------------------------------
 * Memory a process registers can be written and read by its peers without
 * it taking part: the NIC (or the provider's own progress) moves the bytes.
 * Only rails that can do it (ofi, where the provider has RMA) offer it, and
 * only to the peers they carry: proust_rma_reaches says which. Give a peer
 * the key of proust_mem_key by any message; it stays valid until
 * proust_mem_release, which must wait until no peer uses it (a barrier). */
typedef struct proust_mem proust_mem_t;
#define PROUST_MEM_KEY_MAX 64 /* bytes of a key, at most */
/* Register [buf, buf + len) (len > 0) on every rail that can serve remote
 * access. PROUST_ERR_NOT_SUPPORTED: no rail can. */
int proust_mem_register(proust_session_t *s, void *buf, size_t len, proust_mem_t **mem);
/* The key that lets peers reach the memory: *len bytes (at most
 * PROUST_MEM_KEY_MAX) written to key. */
int proust_mem_key(const proust_mem_t *mem, void *key, size_t cap, size_t *len);
int proust_mem_release(proust_mem_t *mem);
/* How proust_rma_write/read reach `peer`: PROUST_RMA_BY_NIC (the NIC
 * moves the bytes, whatever the peer does), PROUST_RMA_BY_POLLING (the
 * provider moves them in software while the peer polls its engine: ofi
 * over tcp), 0 when the rail that carries its traffic cannot, or a
 * PROUST_ERR_* code (a bad rank). */
#define PROUST_RMA_BY_NIC 1
#define PROUST_RMA_BY_POLLING 2
int proust_rma_reaches(proust_session_t *s, int peer);
/* Write src[0..len) at `offset` of the peer's memory that `key` (its
 * proust_mem_key) describes, or read from there into dst. The request
 * completes once the bytes are in the peer's memory, visible to it (write),
 * or here (read), in as many pieces as the rail needs; its status says
 * PROUST_ERR_PEER_FAILED if the peer died,
 * PROUST_ERR_PROTO if the peer refused the access. src/dst must stay
 * untouched until then. Errors: PROUST_ERR_INVALID (a key that does not
 * hold [offset, offset + len), or garbage), PROUST_ERR_NOT_SUPPORTED (no
 * rail reaches the peer that way), PROUST_ERR_RANK, the peer's failure. */
int proust_rma_write(proust_session_t *s, int peer, const void *src, size_t len, const void *key,
                     size_t key_len, uint64_t offset, proust_request_t **req);
int proust_rma_read(proust_session_t *s, int peer, void *dst, size_t len, const void *key,
                    size_t key_len, uint64_t offset, proust_request_t **req);
/* Atomic operations on a peer's registered memory, element by element.
 * Each element's update is atomic with respect to every other atomic of
 * this API on that memory (all go through the target's NIC, or its
 * provider), not with loads and stores of the target's CPU nor with
 * proust_rma_write: a program that mixes them must order them itself. */
typedef enum {
    PROUST_ATOMIC_SUM,
    PROUST_ATOMIC_PROD,
    PROUST_ATOMIC_MIN,
    PROUST_ATOMIC_MAX,
    PROUST_ATOMIC_BAND,
    PROUST_ATOMIC_BOR,
    PROUST_ATOMIC_BXOR,
    PROUST_ATOMIC_LAND,
    PROUST_ATOMIC_LOR,
    PROUST_ATOMIC_LXOR,
    PROUST_ATOMIC_WRITE, /* the operand replaces the element */
    PROUST_ATOMIC_READ,  /* the element, unchanged, into result */
    PROUST_ATOMIC_CSWAP, /* operand replaces the element where it equals compare */
    PROUST_ATOMIC_OPS
} proust_atomic_op_t;
typedef enum {
    PROUST_ATOMIC_INT8,
    PROUST_ATOMIC_UINT8,
    PROUST_ATOMIC_INT16,
    PROUST_ATOMIC_UINT16,
    PROUST_ATOMIC_INT32,
    PROUST_ATOMIC_UINT32,
    PROUST_ATOMIC_INT64,
    PROUST_ATOMIC_UINT64,
    PROUST_ATOMIC_FLOAT,
    PROUST_ATOMIC_DOUBLE,
    PROUST_ATOMIC_TYPES
} proust_atomic_type_t;
/* How many elements one proust_rma_atomic of (op, type) to `peer` may
 * carry at once where a rail does it (more go in several, each element
 * still atomic): > 0; fetching: with a result. 0 when no rail that
 * reaches the peer does that operation on that type; a PROUST_ERR_* code
 * for a bad rank or argument. */
int proust_rma_atomic_max(proust_session_t *s, int peer, int op, int type, int fetching);
/* 1 when atomics to `peer` apply there in the order this process posted
 * them (each waits for none), 0 when the rail does not promise it (wait
 * for one before posting the next where order matters), or an error. */
int proust_rma_atomic_ordered(proust_session_t *s, int peer);
/* Apply `op` to `count` elements of `type` at `offset` of the peer's
 * memory that `key` describes, with operand[i] (NULL for READ); the
 * elements as they were before go to result when it is not NULL (READ and
 * CSWAP need one); CSWAP compares with compare[i]. The request completes
 * once every element is updated at the peer and result holds the old
 * values; buffers stay untouched until then. Errors as proust_rma_write,
 * and PROUST_ERR_NOT_SUPPORTED where proust_rma_atomic_max says 0. */
int proust_rma_atomic(proust_session_t *s, int peer, int op, int type, const void *operand,
                      const void *compare, void *result, size_t count, const void *key,
                      size_t key_len, uint64_t offset, proust_request_t **req);
/* What this process did one-sided so far (MPI windows included), and how
 * often the rails' registrations for a peer's reads (large sends and
 * puts) found their memory registered already (memory of
 * proust_mem_register: MPI windows, MPI_Alloc_mem of 64 KiB and more):
 * the hit rate of that cache is cache_hits / (cache_hits + cache_misses). */
typedef struct {
    uint64_t registrations; /* proust_mem_register calls that succeeded */
    uint64_t writes, reads; /* transfers started */
    uint64_t bytes_written, bytes_read;
    uint64_t cache_hits, cache_misses;
    uint64_t atomics; /* proust_rma_atomic calls started (MPI accumulates included) */
} proust_rma_counts_t;
void proust_rma_counts(proust_rma_counts_t *out);

/* ---- Events (for runtimes that do not want to poll requests) ------------- */
/*
 * A request callback runs exactly once, when the request completes, on
 * whichever thread made the progress (never with a library lock held, so it
 * may post new requests). If the request is already complete the callback
 * runs at once in the calling thread. The request stays valid until it is
 * waited for, tested or freed.
 */
typedef void (*proust_request_cb_t)(proust_request_t *req, const proust_status_t *status,
                                    void *arg);
int proust_request_monitor(proust_request_t *req, proust_request_cb_t cb, void *arg);

/* Session events. PROUST_EVENT_UNEXPECTED: a message arrived that no posted
 * receive matched; the callback gets its envelope (source, tag, size). */
#define PROUST_EVENT_UNEXPECTED 0x1u
typedef void (*proust_event_cb_t)(proust_session_t *s, unsigned event,
                                  const proust_status_t *envelope, void *arg);
/* Install (cb != NULL) or remove (cb == NULL) the session monitor. */
int proust_session_monitor(proust_session_t *s, unsigned events, proust_event_cb_t cb, void *arg);

/* ---- Packs: messages made of several segments ---------------------------- */
/*
 * A pack is one message made of 1 to PROUST_PACK_MAX_SEGMENTS segments, each
 * sent from its own buffer; it matches one unpack with the same number of
 * segments, whose i-th buffer receives the i-th segment. Hints let the
 * strategy schedule segments:
 *   PROUST_PACK_URGENT   — send this segment before the others (e.g. a header
 *                          the receiver needs first);
 *   PROUST_PACK_REORDER  — this segment may be reordered or merged with other
 *                          small chunks to the same peer.
 * Buffers must stay valid until the request completes.
 */
#define PROUST_PACK_MAX_SEGMENTS 64
#define PROUST_PACK_URGENT 0x1u
#define PROUST_PACK_REORDER 0x2u
int proust_pack_begin(proust_session_t *s, int dest, proust_tag_t tag, proust_pack_t **pack);
int proust_pack_add(proust_pack_t *pack, const void *buf, size_t len, unsigned hints);
/* Send the pack; *req completes when every segment was sent. */
int proust_pack_end(proust_pack_t *pack, proust_request_t **req);

/* Receive side: same calls with receive buffers. A segment longer than its
 * buffer is truncated (PROUST_ERR_TRUNCATE); a segment-count mismatch
 * completes the request with PROUST_ERR_TRUNCATE too. */
int proust_unpack_begin(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                        proust_pack_t **pack);
int proust_unpack_add(proust_pack_t *pack, void *buf, size_t len);
int proust_unpack_end(proust_pack_t *pack, proust_request_t **req);
/* Drop a pack or unpack that was begun but will not be ended. */
int proust_pack_abort(proust_pack_t *pack);

/* ---- Progress engine: event sources and the uniform wait ----------------- */
/*
 * The engine detects events for its own rails and for sources that
 * applications and runtimes register (a socket, a device queue, another
 * library's requests). A source is a *polling task*: a poll callback, an
 * optional group callback that tests every pending request of the source in
 * one call, an optional blocking call or file descriptor, and a target
 * polling frequency. Requests made with proust_request_create() on a source
 * are waited for with proust_wait / proust_test / proust_waitall... like any
 * other request: whichever thread waits, one poller at a time serves the
 * source (waiting threads that are not polling sleep), and the background
 * progress thread polls it too.
 *
 * Callbacks run on any thread that makes progress, one at a time per source
 * (never concurrently with themselves), with no library lock held; they may
 * call proust_request_complete() and post communication. They return the
 * number of events seen (>= 0) or a PROUST_ERR_* code (logged, the source
 * stays registered).
 */
typedef struct proust_ptask proust_ptask_t;
/* Test one pending request of the source (poll), or every one (group). */
typedef int (*proust_ptask_poll_cb_t)(proust_ptask_t *task, proust_request_t *req, void *arg);
typedef int (*proust_ptask_group_cb_t)(proust_ptask_t *task, void *arg);
/* Sleep until the source may have an event or timeout_us elapsed. A source
 * with a blocking call and no fd gets a thread of its own that sits in the
 * call while requests are pending on the source (or always, with
 * PROUST_PTASK_ALWAYS) and polls the source each time it returns. */
typedef int (*proust_ptask_block_cb_t)(proust_ptask_t *task, void *arg, long timeout_us);

/* Poll the source even when none of its requests is pending (a source that
 * delivers unsolicited events, like a rail receiving messages). */
#define PROUST_PTASK_ALWAYS 0x1u

struct proust_ptask_desc {
    const char *name;                 /* for proust-info and logs (copied) */
    proust_ptask_poll_cb_t poll;      /* per request; may be NULL if group is set */
    proust_ptask_group_cb_t group;    /* all pending requests at once; preferred */
    proust_ptask_block_cb_t block;    /* optional blocking call */
    int fd;                           /* -1, or readable when the source has events */
    double frequency_hz;              /* poll at least this often while requests are
                                         pending and threads sleep (0: 1 kHz) */
    unsigned flags;                   /* PROUST_PTASK_* */
    void *arg;                        /* passed to every callback */
};
/* Register a source. At most 60 sources registered at once per session
 * (PROUST_ERR_BUSY beyond). */
int proust_ptask_register(proust_session_t *s, const struct proust_ptask_desc *desc,
                          proust_ptask_t **task);
/* Remove a source; PROUST_ERR_BUSY while requests made on it are pending.
 * Returns once no other thread runs its callbacks (it may be called from
 * the source's own callbacks). */
int proust_ptask_unregister(proust_ptask_t **task);

/* A request completed by its source: created pending on `task` (or on no
 * source, task NULL: then only proust_request_complete completes it). */
int proust_request_create(proust_session_t *s, proust_ptask_t *task, void *user_data,
                          proust_request_t **req);
void *proust_request_user_data(const proust_request_t *req);
/* Complete a request made by proust_request_create with `status`
 * (PROUST_OK or an error); any thread, once. PROUST_ERR_STATE if it was
 * completed already, PROUST_ERR_INVALID for a communication request. */
int proust_request_complete(proust_request_t *req, int status);

/* What the progress engine chose (proust-info prints it with the reasons). */
typedef struct {
    const char *mode;      /* "thread", "block" or "poll" (PROUST_PROGRESS) */
    const char *mode_reason;
    const char *locking;   /* "fine" or "coarse" (PROUST_LOCKING) */
    int threads;           /* background progress threads running */
    double spin_us;        /* how long a waiter polls before it sleeps */
    double wake_us;        /* measured cost of a blocking wake-up */
    const char *spin_reason;
    int rdv_thread;        /* block mode: the rendezvous helper runs (PROUST_RDV_THREAD) */
    const char *rdv_thread_reason;
    const char *wait_boost; /* what a waiter asleep on a loaded machine gets (PROUST_WAIT_BOOST) */
} proust_progress_info_t;
int proust_progress_info(const proust_session_t *s, proust_progress_info_t *info);

/* The PROUST_* environment variables (docs/CONFIG.md), entry `index`
 * from 0: the engine's, then those of the tables registered with
 * proust_config_register, in order: its name, the value in force (the
 * environment's, else the default), the default and what it does. Any
 * output may be NULL; the strings stay valid until the environment
 * changes. PROUST_ERR_INVALID past the last entry. Needs no session (MPI_T
 * control variables). */
int proust_config_entry(int index, const char **name, const char **value, const char **def,
                        const char **doc);

/* One PROUST_* variable of a layer above the engine. */
typedef struct {
    const char *name; /* "PROUST_..." */
    const char *def;  /* the default */
    const char *doc;  /* what it does */
} proust_config_var_t;

/* A layer above the engine (Proust MPI: src/mpi/init/mpi_config.h) declares the
 * variables that only it reads: `count` entries of `vars`, a table that
 * must stay valid. From then on proust_config_entry lists them after the
 * engine's, and the warning about unknown PROUST_* variables (proust_init)
 * knows them; register before proust_init. Registering a table again does
 * nothing. Needs no session; thread-safe. PROUST_ERR_INVALID for a bad
 * table, PROUST_ERR_NOMEM past 8 tables. */
int proust_config_register(const proust_config_var_t *vars, int count);

/* The value of an on/off switch: 1 for on, 1 or yes, 0 for off, 0 or no
 * (words in any case), -1 for anything else (NULL, auto, not a switch
 * word). The engine and the layers above read switches alike. */
int proust_config_switch(const char *value);

/* ---- Placement (NUIOA) ------------------------------------------------------
 * At init Proust binds its progress threads and each rail's receive buffers
 * on the NUMA node(s) nearest the NIC of the rail that matters, and the
 * process too when the user did not bind it (PROUST_PLACEMENT). */

/* Before proust_init: what placement follows where rails disagree:
 * "latency" (the fastest rail's NIC), "bandwidth" (the widest rails' NICs)
 * or "cores" (one progress thread, the process stays where it is).
 * PROUST_PLACEMENT_HINT, when set, wins (a run is tuned without
 * rebuilding). Errors: PROUST_ERR_INVALID (unknown hint), PROUST_ERR_STATE
 * (after proust_init). */
int proust_placement_hint(const char *hint);

/* What placement decided and why, as text (what `proust-info --placement`
 * prints), NUL-terminated, truncated to len. Returns the length it needed
 * (like snprintf) or PROUST_ERR_STATE / PROUST_ERR_INVALID. */
int proust_placement_describe(const proust_session_t *s, char *buf, size_t len);

/* The hardware domain of kind `kind` that holds every cpu the calling
 * process may run on (its binding, else the cpus it is allowed): an hwloc
 * object type name ("Machine", "Package", "NUMANode", "L3Cache", "Core",
 * "PU"; also "socket", "hwthread"). Returns 1 and its logical index in
 * *index, 0 when the process spans several domains of that kind (or there
 * is none), PROUST_ERR_INVALID for an unknown kind, PROUST_ERR_SYS when
 * hwloc fails. Any time, with or without a session. */
int proust_locality(const char *kind, unsigned *index);
/* The same for n kinds at once (one look at the machine): found[i] is 1
 * (index[i] set), 0 when the process spans several domains of kinds[i], -1
 * when the machine has none. Returns PROUST_OK, PROUST_ERR_INVALID (an
 * unknown kind: nothing is filled), PROUST_ERR_SYS. */
int proust_locality_many(const char *const kinds[], int n, int found[], unsigned index[]);

/* ---- Payload copy -----------------------------------------------------------
 * The engine's memory copy for payloads, public so that layers above it
 * (Proust MPI: pack, unpack, collective and one-sided copies) copy the same
 * way. glibc copies from 2 KiB up to about the L2 size with `rep movsb`. On
 * AMD Zen processors that instruction runs an order of magnitude slower when
 * the destination sits 1-31 bytes past the source modulo 64
 * (docs/PERFORMANCE.md, "Figures behind the code"). Buffers from malloc are 16-byte aligned and ring payloads
 * follow packet headers, so about half of all payload copies met that case,
 * at random. proust_copy takes those copies to a vector loop (stores
 * aligned, loads not) that runs at full speed whatever the offset; every
 * other copy stays with memcpy, and copies of up to 16 bytes are inline
 * moves (the latency path). */

/* From here memcpy may use `rep movsb` (glibc's x86_rep_movsb_threshold is
 * 2 KiB or more); up to here the loop replaces it (beyond, glibc's own
 * vector loop or non-temporal stores take over). */
#define PROUST_COPY_LOOP_MIN ((size_t)2048)
#define PROUST_COPY_LOOP_MAX ((size_t)4 << 20)

/* The vector loop (32-byte loads at any alignment, aligned stores; AVX2
 * where the processor has it, else SSE2): n >= PROUST_COPY_LOOP_MIN, not
 * overlapping. Call proust_copy, which picks it. */
void proust_copy_loop(void *dst, const void *src, size_t n);

/* Is dst - src modulo 64 in 1..31 (the slow `rep movsb` case)? */
static inline int proust_copy_offset_slow(const void *dst, const void *src)
{
    return (((uintptr_t)dst - (uintptr_t)src) & 63u) - 1u < 31u;
}

/* memcpy(dst, src, n), not overlapping. Any time, with or without a
 * session. */
static inline void proust_copy(void *dst, const void *src, size_t n)
{
    /* two moves (overlapping when n is not a power of two) instead of a
     * call */
    if (n <= 16) {
        unsigned char *d = (unsigned char *)dst;
        const unsigned char *sr = (const unsigned char *)src;
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, sr, 8);
            memcpy(&b, sr + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else if (n >= 4) {
            uint32_t a, b;
            memcpy(&a, sr, 4);
            memcpy(&b, sr + n - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        } else if (n) {
            unsigned char a = sr[0], m = sr[n / 2], z = sr[n - 1];
            d[0] = a;
            d[n / 2] = m;
            d[n - 1] = z;
        }
        return;
    }
#if defined(__x86_64__)
    if (n >= PROUST_COPY_LOOP_MIN && n <= PROUST_COPY_LOOP_MAX &&
        proust_copy_offset_slow(dst, src)) {
        proust_copy_loop(dst, src, n);
        return;
    }
#endif
    memcpy(dst, src, n);
}

#ifdef __cplusplus
}
#endif
#endif /* PROUST_H */
