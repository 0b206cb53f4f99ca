/*
 * thread.c — background progress threads.
 *
 * A progress thread runs passes over every source while events flow. When
 * application threads are polling themselves (a wait in progress, or one
 * recently), it naps on a futex with a growing timeout instead: it would
 * only compete with them for the poll flags and the core, and its
 * doorbells would make every peer's send pay a system call. Otherwise,
 * after a few empty passes, it sleeps like any waiter — holding the wait
 * set, so a message for a computing application wakes it. Work
 * that must start at once (a rendezvous posted, a user source created)
 * kicks it out of its nap.
 *
 * Placement: as many threads, bound where, as the placement decided at
 * init (core/place.c, topology/placement.c): near the NIC of the rail that
 * matters, further ones fanned out by distance; unbound on one node.
 */
#include <errno.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "progress/progress.h"

#define NAP_MIN_NS 50000ull    /* first nap while the application polls */
#define NAP_MAX_NS 200000ull   /* naps double up to this */
#define IDLE_PASSES 64         /* empty passes before sleeping */

struct proust__pt_arg {
    struct proust__progress *p;
    bool bind;
    cpu_set_t cpus;
};

static void nap(struct proust__progress *p, uint64_t ns)
{
    unsigned seq = atomic_load(&p->kick_seq);
    atomic_fetch_add(&p->napping, 1);
    struct timespec ts = {0, (long)ns};
    if (!atomic_load(&p->stop))
        (void)syscall(SYS_futex, (unsigned *)&p->kick_seq, FUTEX_WAIT_PRIVATE, seq, &ts, NULL,
                      0);
    atomic_fetch_sub(&p->napping, 1);
}

void proust__threads_kick(struct proust__progress *p)
{
    if (atomic_load_explicit(&p->napping, memory_order_relaxed) > 0) {
        atomic_fetch_add(&p->kick_seq, 1);
        (void)syscall(SYS_futex, (unsigned *)&p->kick_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
                      NULL, 0);
    }
}

void proust__threads_wake(struct proust__progress *p)
{
    if (p->nthreads <= 0)
        return;
    proust__threads_kick(p);
    uint64_t blocker = atomic_load_explicit(&p->blocker_id, memory_order_relaxed);
    if (blocker && blocker != proust__thread_id())
        proust__kick(p); /* out of epoll */
}

static bool stopping(void *ctx)
{
    struct proust__progress *p = ctx;
    return atomic_load(&p->stop) != 0;
}

void proust__pt_state_init(struct proust__progress *p, struct proust__pt_state *st)
{
    st->seen_entries = atomic_load(&p->app_entries);
    st->nap_ns = NAP_MIN_NS;
    st->idle_passes = 0;
}

void proust__pt_step(struct proust__progress *p, struct proust__pt_state *st,
                     proust__done_fn idle, void *ctx)
{
    int ev = p->up->pass(p->core);
    uint64_t entries = atomic_load_explicit(&p->app_entries, memory_order_relaxed);
    bool app_entered = entries != st->seen_entries;
    if (ev > 0 && !app_entered) {
        st->idle_passes = 0;
        st->nap_ns = NAP_MIN_NS;
        return;
    }
    /* (events or not: an application that keeps calling in polls them
     * itself, and our passes would only take the poll flags from it) */
    if (app_entered || atomic_load_explicit(&p->app_polling, memory_order_relaxed) > 0) {
        /* the application polls: stay out of its way, look again
         * later, and later still while it keeps polling */
        st->seen_entries = entries;
        nap(p, st->nap_ns);
        if (st->nap_ns < NAP_MAX_NS)
            st->nap_ns *= 2;
        st->idle_passes = 0;
        return;
    }
    /* Nothing moves and nobody polls: a few more passes (a reply often
     * follows what we just did), then sleep. Spinning longer would
     * take a core from the application; waiters spin for themselves. */
    if (++st->idle_passes < IDLE_PASSES) {
        proust__cpu_relax();
        return;
    }
    uint64_t t0 = proust__now_ns();
    proust__block(p, idle, ctx, p->peer_check_ns);
    st->idle_passes = 0;
    st->nap_ns = NAP_MIN_NS;
    if (proust__now_ns() - t0 >= p->peer_check_ns)
        p->up->check_peers(p->core);
}

static void *progress_main(void *argp)
{
    struct proust__pt_arg *a = argp;
    struct proust__progress *p = a->p;
    if (a->bind)
        (void)sched_setaffinity(0, sizeof a->cpus, &a->cpus);
    proust__in_progress_thread = true;
    struct proust__pt_state st;
    proust__pt_state_init(p, &st);
    while (!atomic_load_explicit(&p->stop, memory_order_acquire))
        proust__pt_step(p, &st, stopping, p);
    return NULL;
}

/* How many threads, bound where: the placement decided it at init (near
 * the NIC, fanned out by distance; floating where nothing was decided). */
int proust__threads_start(struct proust__progress *p, hwloc_topology_t topo,
                          const struct proust__placement *pl, int n)
{
    if (n > PROUST__MAX_PROGRESS_THREADS)
        n = PROUST__MAX_PROGRESS_THREADS;
    struct proust__pt_arg *args = calloc((size_t)n, sizeof *args);
    p->thread_args = args;
    int rc = args ? PROUST_OK : PROUST_ERR_NOMEM;
    /* signals stay with the application's threads: ours start with every
     * signal blocked (the mask is inherited) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; rc == PROUST_OK && i < n; i++) {
        args[i].p = p;
        if (topo && pl && i < PROUST__PLACE_MAX_THREADS && pl->thread[i])
            args[i].bind = hwloc_cpuset_to_glibc_sched_affinity(topo, pl->thread[i],
                                                                &args[i].cpus,
                                                                sizeof args[i].cpus) == 0;
        if (pthread_create(&p->threads[i], NULL, progress_main, &args[i]) != 0) {
            PROUST_ERROR("progress: cannot start a progress thread: %s", strerror(errno));
            rc = PROUST_ERR_SYS;
            break;
        }
        p->nthreads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

void proust__threads_stop(struct proust__progress *p)
{
    atomic_store(&p->stop, 1);
    for (int i = 0; i < p->nthreads; i++) {
        /* it may nap, sleep on the futex or hold the wait set */
        atomic_fetch_add(&p->kick_seq, 1);
        (void)syscall(SYS_futex, (unsigned *)&p->kick_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
                      NULL, 0);
        proust__wake_slow(p, PROUST__WAIT_SLEEPERS | PROUST__WAIT_BLOCKER);
        proust__kick(p);
    }
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    p->nthreads = 0;
    free(p->thread_args);
    p->thread_args = NULL;
}
