/*
 * progress.h — the progress engine: event sources (polling tasks), the wait
 * set threads block in, waiters that spin then sleep, and background
 * progress threads.
 *
 * Who detects events (docs/ARCHITECTURE.md, "Progress"):
 *   - a thread waiting on a request polls every source for a bounded time
 *     (the spin window, sized at init from the measured cost of a blocking
 *     wake-up; zero when the machine is loaded);
 *   - then it sleeps. One sleeping thread at a time (the *blocker*) holds
 *     the wait set: it arms the rails' doorbells and blocks in epoll on the
 *     rails' and sources' file descriptors; every other one sleeps on a
 *     futex and is woken when a request completes or the blocker leaves;
 *   - the background progress thread polls while work flows, keeps out of
 *     the way (a timed nap, no doorbells) while application threads poll,
 *     and otherwise blocks like any waiter, so that nothing spins on a core
 *     the application needs.
 *
 * A layer below core: it sees rails as event sources (drivers/driver.h),
 * the topology and placement, and calls the layer above only through the
 * upcall table core registers at init (struct proust__progress_upcalls),
 * as drivers do through theirs. It never sees requests, gates or matching.
 */
#ifndef PROUST_PROGRESS_H
#define PROUST_PROGRESS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/lock.h"
#include "drivers/driver.h"
#include "proust.h"
#include "topology/placement.h"

struct proust__pt_arg;

#define PROUST__MAX_PTASKS 64
/* Posting a message at least this large kicks napping progress threads:
 * its rendezvous must advance while the application computes. */
#define PROUST__KICK_BYTES (256u << 10)
/* A rendezvous a progress thread answers (the application computes) is
 * written by the sender from this size up, if the rail can (shm) and the
 * sender waits in a blocking send; one that computes is pulled. */
#define PROUST__PUSH_FROM_BACKGROUND (128u << 10)
#define PROUST__MAX_PROGRESS_THREADS 16

enum proust__progress_mode {
    PROUST__PROGRESS_THREAD = 0, /* background threads; waiters spin then sleep */
    PROUST__PROGRESS_BLOCK,      /* no thread; waiters spin then block */
    PROUST__PROGRESS_POLL,       /* no thread; waiters never block */
    PROUST__PROGRESS_AUTO,       /* until start: thread or block by free cores */
};

/* What progress asks of the layer above it (core), set at init. */
struct proust__progress_upcalls {
    /* One pass over the rails and the work queued above them, then the
     * callbacks it queued on this thread; returns the events seen. */
    int (*pass)(void *core);
    /* The same, but every rail is polled: where another thread holds a
     * rail's poll flag, waits for it (a thread about to sleep must see
     * what arrived before its doorbells were armed; the holder may have
     * looked at that ring before the record came). */
    int (*last_look)(void *core);
    /* Run the callbacks and frees this thread queued (no lock held). */
    void (*run_deferred)(void);
    /* Ask the launcher and the rails whether peers died. */
    void (*check_peers)(void *core);
    /* Nothing moved for a while: work an idle process does (pull the
     * rendezvous messages waiting unexpected); returns what it did. */
    int (*idle_work)(void *core);
    /* A peer is writing into our memory now: its end comes sooner than a
     * sleep's wake-up, so a waiter spins on. */
    bool (*peer_writing)(void *core);
};

/* A request pending on a user source. The link lives in the request
 * (core's); progress keeps the list and hands `req` to the source's poll. */
struct proust__pending {
    struct proust__pending *next, *prev;
    proust_request_t *req;
};

/* One poller per task at a time: a flag, not a mutex, because pollers never
 * wait for each other (a thread that finds it taken moves on). */
static inline bool proust__poll_trylock(_Atomic int *polling)
{
    return !atomic_load_explicit(polling, memory_order_relaxed) &&
           !atomic_exchange_explicit(polling, 1, memory_order_acquire);
}

static inline void proust__poll_unlock(_Atomic int *polling)
{
    atomic_store_explicit(polling, 0, memory_order_release);
}

struct proust__progress;

/* A polling task: an engine rail or a source registered by the user. */
struct proust_ptask {
    _Alignas(64) _Atomic int polling; /* one poller at a time (a flag, never waited on) */
    _Atomic int dead;                 /* unregistered: skipped, memory kept until finalize */
    _Atomic int npending;             /* user requests pending on this source */
    struct proust__progress *p;
    proust__rail_t *rail;             /* an engine rail, or NULL */
    char name[32];
    proust_ptask_poll_cb_t poll;
    proust_ptask_group_cb_t group;
    proust_ptask_block_cb_t block;
    int fd;
    unsigned flags;
    void *arg;
    uint64_t period_ns; /* longest sleep while requests are pending and no fd */
    proust__lock_t lock; /* the pending list */
    struct proust__pending *pend_head, *pend_tail;
    struct proust__pending *iter_next; /* per-request polling in progress */
    _Atomic int blocker_running;      /* its blocking-call thread runs */
    struct proust_ptask *retired_next; /* unregistered, slot reused */
};

/* A piece of communication work an idle thread may run (offload.c). */
struct proust__job {
    void (*run)(struct proust__job *job);
    struct proust__job *next;
};
struct proust__jobq;

/* s->prog.waiting: sleepers on the futex in the low bits, the blocker bit. */
#define PROUST__WAIT_BLOCKER (1u << 24)
#define PROUST__WAIT_SLEEPERS 0xffffffu

struct proust__progress {
    /* the layer above, and what it told us at init */
    const struct proust__progress_upcalls *up;
    void *core;
    int rank;
    bool oversubscribed; /* more processes on this host than usable cores */
    enum proust__progress_mode mode;
    const char *mode_reason;
    bool coarse;              /* PROUST_LOCKING=coarse */
    proust__lock_t big_lock;  /* coarse mode: around posts and progress passes */
    /* sources: [0, nrails) are the rails, then user tasks; read lock-free */
    int nrails;
    struct proust_ptask *_Atomic tasks[PROUST__MAX_PTASKS];
    _Atomic int ntasks;
    pthread_mutex_t reg_lock; /* registration */
    struct proust_ptask *retired; /* unregistered tasks whose slot was reused */
    /* blocking */
    int epfd;                 /* rails' and sources' fds + kick_fd */
    int kick_fd;              /* eventfd: wakes the blocker */
    _Atomic unsigned waiting; /* sleepers + PROUST__WAIT_BLOCKER */
    _Atomic unsigned wake_seq; /* futex word of the sleepers */
    _Atomic uint64_t blocker_id; /* thread id of the blocker */
    _Atomic int pt_blocking;     /* the blocker is a progress thread */
    _Atomic int app_sleepers;    /* application threads asleep on the futex */
    /* requests whose completion runs a callback (a collective's schedule,
     * an RMA port): a progress thread blocked while some are in flight is
     * rung for every packet, not only for handshakes (block.c) */
    _Atomic int monitored;
    /* application threads polling in a wait: the progress thread stays out
     * of their way while there are some; entries changes at every wait and
     * at every test, probe or progress call of an application thread */
    _Atomic int app_polling;
    _Atomic uint64_t app_entries;
    /* spin window */
    uint64_t spin_ns;         /* when the machine is not loaded */
    double wake_us;           /* measured wake-up cost */
    const char *spin_reason;
    bool handoff_migrate;     /* PROUST_HANDOFF=migrate (colocate.c) */
    int boost_mode;           /* PROUST_WAIT_BOOST (boost.c) */
    const char *boost_reason; /* what a boosted wait gets here */
    _Atomic bool overcommitted; /* more runnable threads than cores */
    _Atomic uint64_t load_checked_ns;
    int ncpus;
    int loadavg_fd;
    /* background threads */
    int nthreads;
    pthread_t threads[PROUST__MAX_PROGRESS_THREADS];
    struct proust__pt_arg *thread_args;
    _Atomic int stop;
    _Atomic unsigned kick_seq; /* futex word of napping progress threads */
    _Atomic int napping;
    uint64_t peer_check_ns;
    /* rendezvous helper (block mode, helper.c): asleep on helper_timer
     * while helped (requests it must advance, RF_HELPED) is 0 or
     * application threads wait (app_waiting) */
    bool helper;
    const char *helper_reason;
    int helper_timer;             /* timerfd: armed by posts and ends of waits */
    _Atomic int helped;
    _Atomic int app_waiting;
    pthread_t helper_thread;
    _Atomic int helper_avoid_cpu; /* the last poster's cpu: kept out of helper_cpus */
    _Atomic int helper_tid;
    _Atomic int helper_armed;           /* the timer may be armed */
    _Atomic bool helper_waited_at_once; /* the last helped post was waited for at once */
    _Atomic uint64_t helper_post_ns;    /* when the last helped post was made */
    cpu_set_t helper_cpus;        /* where the process may run */
    /* offload: job queues, one per NUMA node (none: offload off) */
    struct proust__jobq *queues;
    int nqueues;
    int *cpu_queue;          /* cpu -> queue */
    size_t offload_piece;    /* bytes per piece of a split copy */
    _Atomic int jobs_queued;
};

/* ---- life cycle (progress.c) ------------------------------------------------ */
/* Read PROUST_PROGRESS/LOCKING/SPIN_US/HANDOFF/WAIT_BOOST, build the wait
 * set, measure the wake-up cost. `core` is handed back to every upcall. */
int proust__progress_init(struct proust__progress *p, const struct proust__progress_upcalls *up,
                          void *core, long peer_check_ms);
/* What core knows once the job is up, for progress_start. */
struct proust__progress_job {
    int rank;
    int local_size;   /* ranks of the job on this node */
    int usable_cores; /* cores the process could use at init, before placement */
    bool oversubscribed;
    /* the placement decided at init (NULL: nothing was), the progress
     * threads it asks for, and its topology (NULL: not loaded) */
    const struct proust__placement *place;
    int place_threads;
    const struct proust__topo *topo;
    /* some peer is on a rail where our cpu moves the data (the rendezvous
     * helper has work to do) */
    bool cpu_moved_peers;
};
/* Start the background threads (PROUST_PROGRESS=thread) or the rendezvous
 * helper, after the rails are registered (proust__ptask_add_rail). */
int proust__progress_start(struct proust__progress *p, const struct proust__progress_job *job);
/* Stop the threads and wake every sleeper (finalize). */
void proust__progress_stop(struct proust__progress *p);
void proust__progress_destroy(struct proust__progress *p);
/* For proust_progress_info. */
void proust__progress_describe(const struct proust__progress *p, proust_progress_info_t *info);

/* ---- tasks (ptask.c) ---------------------------------------------------------- */
/* A rail as the task `t` (its memory is the caller's); `used`: it carries
 * peers (one that carries none is never polled). Rails first, in order. */
int proust__ptask_add_rail(struct proust__progress *p, struct proust_ptask *t,
                           proust__rail_t *rail, bool used);
/* proust_ptask_register, for a running session. */
int proust__ptask_register(struct proust__progress *p, const struct proust_ptask_desc *desc,
                           proust_ptask_t **out);
/* May requests of `p` be made on t (a live user source of p)? */
bool proust__ptask_usable(const struct proust__progress *p, const struct proust_ptask *t);
/* A request pends on t until proust__ptask_unpend; wakes whoever polls it. */
void proust__ptask_pend(struct proust_ptask *t, struct proust__pending *l);
void proust__ptask_unpend(struct proust_ptask *t, struct proust__pending *l);
/* Is the calling thread inside a source's poll callback? */
bool proust__ptask_polling(void);
/* Poll the user sources with pending requests (or ALWAYS); events seen. */
int proust__ptasks_poll_user(struct proust__progress *p);
/* Shortest period among sources without fd that need polling, or 0. */
uint64_t proust__ptasks_period(struct proust__progress *p);
void proust__ptasks_destroy(struct proust__progress *p);

/* ---- sleeping and waking (block.c) ------------------------------------------- */
/* A waiter's condition: true when it may stop waiting. */
typedef bool (*proust__done_fn)(void *ctx);
/* Sleep until something happens (a completion, an event on a source, a
 * hand-over) or timeout_ns: as the blocker in the wait set, or on the futex
 * if another thread holds it. done() is checked once armed, so a completion
 * racing with falling asleep is never missed. */
void proust__block(struct proust__progress *p, proust__done_fn done, void *ctx,
                   uint64_t timeout_ns);
/* A request completed or a message arrived while threads may be sleeping:
 * wake the application threads among them (cheap when nobody sleeps;
 * inline in proust__wake_check). */
void proust__wake_slow(struct proust__progress *p, unsigned waiting);
/* Threads may sleep waiting for what just happened (a completion, an
 * arrival): wake them. One load when nobody sleeps. */
static inline void proust__wake_check(struct proust__progress *p)
{
    unsigned w = atomic_load_explicit(&p->waiting, memory_order_seq_cst);
    if (__builtin_expect(w != 0, 0))
        proust__wake_slow(p, w);
}
/* Wake the blocker out of epoll (a new application poller, a kick). */
void proust__kick(struct proust__progress *p);
/* The same, unless the blocker is the calling thread. proust__wake_slow
 * kicks only an application thread there (progress threads wait for no
 * request): a reason to wake a progress thread kicks it with this. */
void proust__kick_blocker(struct proust__progress *p);
/* A request got a completion callback before completing (monitored + 1):
 * from now on every packet may matter to a blocked progress thread. */
void proust__monitored_begins(struct proust__progress *p);
uint64_t proust__thread_id(void);
/* Set in background progress threads. */
extern _Thread_local bool proust__in_progress_thread;
uint64_t proust__now_ns(void);

/* ---- waiting (waiter.c) ------------------------------------------------------- */
/* A thread waiting for something: it makes progress (upcall pass), and
 * between empty passes calls proust__waiter_idle, which spins for the spin
 * window, then sleeps (proust__block) if the waiter has a condition
 * (done), else naps; it checks peers when nothing moves. A waiter counts
 * as an application poller (the progress thread stays out of its way)
 * from its first empty poll until proust__waiter_end. */
struct proust__waiter {
    unsigned idle_polls;
    bool polling; /* counted in app_polling */
    bool slept;   /* has slept once: no longer an application poller */
    bool counted; /* counted in app_waiting (helper sessions) */
    uint64_t idle_since_ns;
    uint64_t last_check_ns;
    int partner; /* the rank awaited + 1; 0: any (co-location, colocate.c) */
    uint64_t spin_floor_ns; /* spin at least this long (a transfer under way), 0: none */
    bool boosted; /* slept with a boosted priority (boost.c), undone at the end */
    int8_t saved_nice;
    uint8_t saved_flags;
    proust__done_fn done;
    void *ctx;
};
void proust__waiter_idle(struct proust__progress *p, struct proust__waiter *w, int events);
void proust__helper_wait_begins(struct proust__progress *p);
void proust__helper_wait_ends(struct proust__progress *p);
void proust__boost_end(struct proust__waiter *w);
/* Before each pass of a wait: the rendezvous helper stands aside while
 * application threads wait (they advance its transfers themselves). */
static inline void proust__waiter_enter(struct proust__progress *p, struct proust__waiter *w)
{
    if (__builtin_expect(p->helper && !w->counted, 0)) {
        w->counted = true;
        proust__helper_wait_begins(p);
    }
}
static inline void proust__waiter_stop_polling(struct proust__progress *p,
                                               struct proust__waiter *w)
{
    if (w->polling) {
        atomic_fetch_sub_explicit(&p->app_polling, 1, memory_order_seq_cst);
        w->polling = false;
    }
}
/* The wait is over: the thread goes back to the application. */
static inline void proust__waiter_end(struct proust__progress *p, struct proust__waiter *w)
{
    proust__waiter_stop_polling(p, w);
    if (w->boosted)
        proust__boost_end(w);
    if (w->counted) {
        w->counted = false;
        proust__helper_wait_ends(p);
    }
}
/* Count an application thread's poll outside a wait (a test, a probe):
 * the progress thread stays out of its way. */
static inline void proust__app_entered(struct proust__progress *p)
{
    if (!proust__in_progress_thread)
        atomic_fetch_add_explicit(&p->app_entries, 1, memory_order_relaxed);
}

/* ---- spin window and load (calibrate.c) --------------------------------------- */
/* Measure the cost of waking a sleeping thread (futex round trip / 2). */
double proust__measure_wake_us(void);
/* Is the calling waiter loaded: more runnable threads than cores, and the
 * other threads of its process want the cpu? Sampled every 10 ms. */
bool proust__waiter_loaded(struct proust__progress *p, uint64_t now_ns);
/* More runnable threads than cores at the last sample (/proc/loadavg). */
bool proust__cpus_overcommitted(struct proust__progress *p);

/* ---- co-location with the partner (colocate.c) --------------------------------- */
/* Move the calling thread off `cpu`, keeping its affinity mask. */
bool proust__migrate_away(int cpu);
/* The cpu this thread runs on, or -1. */
int proust__current_cpu(void);
/* A waiting thread polls on cpu at now_ns: tell local peers. */
void proust__presence_publish(struct proust__progress *p, int cpu, uint64_t now_ns);
/* Is rank `partner` (any local peer when < 0) probably queued behind us on
 * `cpu`: last seen polling there before since_ns and runnable? */
bool proust__partner_behind(struct proust__progress *p, int partner, int cpu,
                            uint64_t since_ns);

/* boost.c: a waiter that sleeps while its process loads every cpu */
enum { PROUST__BOOST_OFF, PROUST__BOOST_SLICE, PROUST__BOOST_AUTO };
int proust__boost_parse(const char *v, int *mode);
const char *proust__boost_probe(int mode);
void proust__boost_begin(struct proust__progress *p, struct proust__waiter *w);

/* ---- background threads (thread.c) -------------------------------------------- */
/* topo: this machine's topology, or NULL (threads then float); place: the
 * placement's cpusets for them (NULL: float), nthreads of them. */
int proust__threads_start(struct proust__progress *p, hwloc_topology_t topo,
                          const struct proust__placement *place, int nthreads);
void proust__threads_stop(struct proust__progress *p);
/* Bring napping progress threads back at once (new background work). */
void proust__threads_kick(struct proust__progress *p);
/* Work the application left for the background (chunks held back to be
 * merged): bring back the progress threads, napping or blocked; nothing
 * without progress threads. */
void proust__threads_wake(struct proust__progress *p);
/* The loop of a background thread, one step at a time (thread.c): a
 * pass; or a nap while application threads poll; or, after a few empty
 * passes, a sleep in the wait set until something happens or idle(ctx). */
struct proust__pt_state {
    uint64_t seen_entries;
    uint64_t nap_ns;
    unsigned idle_passes;
};
void proust__pt_state_init(struct proust__progress *p, struct proust__pt_state *st);
void proust__pt_step(struct proust__progress *p, struct proust__pt_state *st,
                     proust__done_fn idle, void *ctx);

/* ---- rendezvous helper (helper.c) --------------------------------------------- */
/* Block mode: start the rendezvous helper if PROUST_RDV_THREAD and the
 * machine allow it (sets helper, helper_reason); `needed`: some peer is on
 * a rail where our cpu moves the data. */
int proust__helper_start(struct proust__progress *p, bool needed);
void proust__helper_stop(struct proust__progress *p);
/* A nonblocking transfer the helper serves was just posted by an
 * application thread (core counted it with proust__helped_add): keep the
 * helper off this thread's cpu and arm its wake-up (unless the last helped
 * post was waited for at once). */
void proust__helper_posted(struct proust__progress *p);
/* Transfers the helper must advance: one more (counted before it is
 * flagged), one less (whoever clears the request's flag uncounts it). */
static inline void proust__helped_add(struct proust__progress *p)
{
    atomic_fetch_add(&p->helped, 1);
}
void proust__helped_remove(struct proust__progress *p);
/* A callback was attached to a helped request not complete yet
 * (proust_request_monitor): wake the helper now (nobody will wait for it). */
void proust__helper_monitored(struct proust__progress *p);

/* ---- offload (offload.c) ----------------------------------------------------------- */
/* Queues per NUMA node when PROUST_PROGRESS=thread, 2+ cores and
 * PROUST_OFFLOAD_BYTES > 0; otherwise offload is off (nqueues 0). */
int proust__offload_init(struct proust__progress *p, hwloc_topology_t topo);
void proust__offload_destroy(struct proust__progress *p);
/* Queue jobs first..last (n of them) on the caller's node; wakes helpers. */
void proust__offload_submit(struct proust__progress *p, struct proust__job *first,
                            struct proust__job *last, int n);
/* Run queued jobs (own node first, then the others); how many ran. */
int proust__offload_run(struct proust__progress *p);

/* ---- coarse locking ------------------------------------------------------------- */
#define PROUST__COARSE_ENTER(p)                                                             \
    do {                                                                                    \
        if (__builtin_expect((p)->coarse, 0))                                               \
            proust__lock(&(p)->big_lock);                                                   \
    } while (0)
#define PROUST__COARSE_LEAVE(p)                                                             \
    do {                                                                                    \
        if (__builtin_expect((p)->coarse, 0))                                               \
            proust__unlock(&(p)->big_lock);                                                 \
    } while (0)

#endif
