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
 */
#ifndef PROUST_PROGRESS_H
#define PROUST_PROGRESS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/lock.h"
#include "proust.h"

struct proust_session;
struct proust_request;
struct proust__rail;
struct proust__pt_arg;
struct hwloc_topology; /* hwloc_topology_t, loaded once at start */

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

/* A polling task: an engine rail or a source registered by the user. */
struct proust_ptask {
    _Alignas(64) _Atomic int polling; /* one poller at a time (a flag, never waited on) */
    _Atomic int dead;                 /* unregistered: skipped, memory kept until finalize */
    _Atomic int npending;             /* user requests pending on this source */
    struct proust_session *s;
    struct proust__rail *rail;        /* an engine rail, or NULL */
    char name[32];
    proust_ptask_poll_cb_t poll;
    proust_ptask_group_cb_t group;
    proust_ptask_block_cb_t block;
    int fd;
    unsigned flags;
    void *arg;
    uint64_t period_ns; /* longest sleep while requests are pending and no fd */
    proust__lock_t lock; /* the pending list */
    struct proust_request *pend_head, *pend_tail;
    struct proust_request *iter_next; /* per-request polling in progress */
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
    enum proust__progress_mode mode;
    const char *mode_reason;
    bool coarse;              /* PROUST_LOCKING=coarse */
    proust__lock_t big_lock;  /* coarse mode: around posts and progress passes */
    /* sources: [0, nrails) are the rails, then user tasks; read lock-free */
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
/* Read PROUST_PROGRESS/LOCKING/SPIN_US, register the rails as tasks, build
 * the wait set, measure the wake-up cost. Before threads start. */
int proust__progress_init(struct proust_session *s);
/* Start the background threads (PROUST_PROGRESS=thread), after the rails
 * are connected. */
int proust__progress_start(struct proust_session *s);
/* Stop the threads and wake every sleeper (finalize). */
void proust__progress_stop(struct proust_session *s);
void proust__progress_destroy(struct proust_session *s);

/* ---- tasks (ptask.c) ---------------------------------------------------------- */
int proust__ptask_add_rail(struct proust_session *s, struct proust__rail *rail);
/* Poll the user sources with pending requests (or ALWAYS); events seen. */
int proust__ptasks_poll_user(struct proust_session *s);
/* Shortest period among sources without fd that need polling, or 0. */
uint64_t proust__ptasks_period(struct proust_session *s);
void proust__ptasks_destroy(struct proust_session *s);

/* ---- sleeping and waking (block.c) ------------------------------------------- */
/* A waiter's condition: true when it may stop waiting. */
typedef bool (*proust__done_fn)(void *ctx);
/* Sleep until something happens (a completion, an event on a source, a
 * hand-over) or timeout_ns: as the blocker in the wait set, or on the futex
 * if another thread holds it. done() is checked once armed, so a completion
 * racing with falling asleep is never missed. */
void proust__block(struct proust_session *s, proust__done_fn done, void *ctx,
                   uint64_t timeout_ns);
/* A request completed or a message arrived while threads may be sleeping:
 * wake the application threads among them (cheap when nobody sleeps;
 * inline in proust__wake_check). */
void proust__wake_slow(struct proust_session *s, unsigned waiting);
/* Wake the blocker out of epoll (a new application poller, a kick). */
void proust__kick(struct proust_session *s);
/* The same, unless the blocker is the calling thread. proust__wake_slow
 * kicks only an application thread there (progress threads wait for no
 * request): a reason to wake a progress thread kicks it with this. */
void proust__kick_blocker(struct proust_session *s);
/* A request got a completion callback before completing (monitored + 1):
 * from now on every packet may matter to a blocked progress thread. */
void proust__monitored_begins(struct proust_session *s);
uint64_t proust__thread_id(void);
/* Set in background progress threads. */
extern _Thread_local bool proust__in_progress_thread;

/* ---- spin window and load (calibrate.c) --------------------------------------- */
/* Measure the cost of waking a sleeping thread (futex round trip / 2). */
double proust__measure_wake_us(void);
/* Is the calling waiter loaded: more runnable threads than cores, and the
 * other threads of its process want the cpu? Sampled every 10 ms. */
bool proust__waiter_loaded(struct proust_session *s, uint64_t now_ns);
/* More runnable threads than cores at the last sample (/proc/loadavg). */
bool proust__cpus_overcommitted(struct proust_session *s);

/* ---- co-location with the partner (colocate.c) --------------------------------- */
/* Move the calling thread off `cpu`, keeping its affinity mask. */
bool proust__migrate_away(int cpu);

/* boost.c: a waiter that sleeps while its process loads every cpu */
enum { PROUST__BOOST_OFF, PROUST__BOOST_SLICE, PROUST__BOOST_AUTO };
int proust__boost_parse(const char *v, int *mode);
const char *proust__boost_probe(int mode);
struct proust__waiter;
void proust__boost_begin(struct proust_session *s, struct proust__waiter *w);
void proust__boost_end(struct proust__waiter *w);
/* The cpu this thread runs on, or -1. */
int proust__current_cpu(void);
/* A waiting thread polls on cpu at now_ns: tell local peers. */
void proust__presence_publish(struct proust_session *s, int cpu, uint64_t now_ns);
/* Is rank `partner` (any local peer when < 0) probably queued behind us on
 * `cpu`: last seen polling there before since_ns and runnable? */
bool proust__partner_behind(struct proust_session *s, int partner, int cpu, uint64_t since_ns);

/* ---- background threads (thread.c) -------------------------------------------- */
/* topo: this machine's topology, or NULL (threads then float). */
int proust__threads_start(struct proust_session *s, struct hwloc_topology *topo);
void proust__threads_stop(struct proust_session *s);
/* Bring napping progress threads back at once (new background work). */
void proust__threads_kick(struct proust_session *s);
/* The loop of a background thread, one step at a time (thread.c): a
 * pass; or a nap while application threads poll; or, after a few empty
 * passes, a sleep in the wait set until something happens or idle(ctx). */
struct proust__pt_state {
    uint64_t seen_entries;
    uint64_t nap_ns;
    unsigned idle_passes;
};
void proust__pt_state_init(struct proust_session *s, struct proust__pt_state *st);
void proust__pt_step(struct proust_session *s, struct proust__pt_state *st, proust__done_fn idle,
                     void *ctx);
void proust__helper_stop(struct proust_session *s);
/* Block mode: start the rendezvous helper if PROUST_RDV_THREAD and the
 * machine allow it (sets prog.helper, helper_reason). */
int proust__helper_start(struct proust_session *s);
/* A nonblocking post of req (application thread): if the helper serves it
 * (256 KiB+, with a peer on a rail where our cpu moves the data), count it,
 * keep the helper off this thread's cpu and arm its wake-up (unless the
 * last helped post was waited for at once). */
void proust__helper_engage(struct proust_session *s, struct proust_request *req);
/* A callback was attached to a helped request not complete yet
 * (proust_request_monitor): wake the helper now (nobody will wait for it). */
void proust__helper_monitored(struct proust_session *s);
/* An application thread starts / ends a wait (helper sessions only): the
 * helper stands aside while any waits. */
void proust__helper_wait_begins(struct proust_session *s);
void proust__helper_wait_ends(struct proust_session *s);
/* Clear req's helped flag; whoever clears it uncounts it (a completion,
 * or a post that found the request done already). */
void proust__helper_unhelp(struct proust_request *req);

/* ---- offload (offload.c) ----------------------------------------------------------- */
/* Queues per NUMA node when PROUST_PROGRESS=thread, 2+ cores and
 * PROUST_OFFLOAD_BYTES > 0; otherwise offload is off (nqueues 0). */
int proust__offload_init(struct proust_session *s, struct hwloc_topology *topo);
void proust__offload_destroy(struct proust_session *s);
/* Queue jobs first..last (n of them) on the caller's node; wakes helpers. */
void proust__offload_submit(struct proust_session *s, struct proust__job *first,
                            struct proust__job *last, int n);
/* Run queued jobs (own node first, then the others); how many ran. */
int proust__offload_run(struct proust_session *s);

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
