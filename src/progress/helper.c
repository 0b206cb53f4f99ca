/*
 * helper.c — the rendezvous helper of PROUST_PROGRESS=block (opt-in:
 * PROUST_RDV_THREAD=on).
 *
 * Block mode runs no progress thread: every rank of the node has a core
 * and computes on it. A nonblocking transfer on a rail where our own CPU
 * moves the data (tcp: the sender writes its socket after the CTS, the
 * receiver reads its socket) then moves only inside Wait, and no buffering
 * hides that: on loopback, writing 1 MiB into a socket costs the sender
 * more CPU than the whole transfer takes (docs/PERFORMANCE.md).
 *
 * The helper is one thread, asleep until an application thread posts such
 * a transfer with a nonblocking call and goes on computing. It runs off
 * the poster's cpu (the core it takes is typically one whose rank waits in
 * a blocking call) and advances the engine like a progress thread — passes
 * while events flow, asleep in the wait set otherwise — until every
 * transfer it was given has completed; then it sleeps again. It stands
 * aside while any application thread waits in the library (that thread
 * advances the transfers itself, on its own core).
 *
 * Most nonblocking posts are waited for at once (Isend then Wait), and
 * even waking the helper to find that out costs: a wake-up on the peer's
 * core, or arming a timer and disarming it, slowed a large tcp Irecv+Wait
 * by half (docs/PERFORMANCE.md, "Figures behind the code"). So a post arms the timer
 * (GRACE_NS) only when the previous helped post was not waited for at
 * once; a wait disarms it, and re-arms it when it returns with helped
 * transfers still in flight. A callback attached to a helped request
 * (proust_request_monitor) wakes it at once: nobody will wait for that
 * one. Blocking calls, small messages and rails the
 * receiver pulls from (shm) never involve it.
 *
 * Off by default: where every core computes, the helper takes turns with
 * someone's compute, and when it is taken off its cpu in the middle of a
 * pass it holds the rail's poll flag while our own application waits for
 * it (1 MiB exchanged with compute on both ranks of the 2-core VM: 1.5-2x
 * slower). Telling a core whose rank spins in a wait from one that
 * computes needs the peers' state, not the load average.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "progress/progress.h"

/* How long after a post (or the end of a wait) the helper looks whether
 * the application computes. */
#define GRACE_NS 30000ull

static void arm(struct proust__progress *p, uint64_t ns)
{
    struct itimerspec its = {.it_value = {0, (long)ns}};
    (void)timerfd_settime(p->helper_timer, 0, &its, NULL);
}

/* Its transfers are done, an application thread waits (it advances them
 * itself), or the session stops: leave the wait set. */
static bool idle_now(void *ctx)
{
    struct proust__progress *p = ctx;
    return atomic_load(&p->stop) || atomic_load(&p->helped) <= 0 ||
           atomic_load(&p->app_waiting) > 0;
}

static void *helper_main(void *arg)
{
    struct proust__progress *p = arg;
    proust__in_progress_thread = true;
    atomic_store(&p->helper_tid, (int)syscall(SYS_gettid));
    struct proust__pt_state st;
    bool active = false;
    while (!atomic_load_explicit(&p->stop, memory_order_acquire)) {
        if (!active || atomic_load(&p->helped) <= 0) {
            /* until the timer fires: after a post or the end of a wait,
             * with transfers in flight (or stop) */
            active = false;
            struct pollfd pfd = {.fd = p->helper_timer, .events = POLLIN};
            if (poll(&pfd, 1, -1) > 0) {
                uint64_t n;
                (void)!read(p->helper_timer, &n, sizeof n);
            }
            /* the application computes (a waiting thread advances the
             * transfers itself): from now on like a progress thread
             * (out of its way while it polls) until they are done */
            active = atomic_load(&p->helped) > 0 && atomic_load(&p->app_waiting) == 0;
            proust__pt_state_init(p, &st);
            continue;
        }
        if (atomic_load(&p->app_waiting) > 0) {
            active = false; /* it advances the transfers itself */
            continue;
        }
        proust__pt_step(p, &st, idle_now, p);
    }
    return NULL;
}

int proust__helper_start(struct proust__progress *p, bool needed)
{
    p->helper_timer = -1;
    const char *v = proust__config_str(PROUST_CFG_RDV_THREAD);
    if (strcmp(v, "off") == 0) {
        p->helper_reason = "off (PROUST_RDV_THREAD=off, the default)";
        return PROUST_OK;
    }
    if (strcmp(v, "on") != 0) {
        PROUST_ERROR("PROUST_RDV_THREAD=%s: expected on or off", v);
        return PROUST_ERR_INVALID;
    }
    if (p->mode != PROUST__PROGRESS_BLOCK) {
        p->helper_reason = p->mode == PROUST__PROGRESS_THREAD
                               ? "not needed: progress threads advance every transfer"
                               : "off: PROUST_PROGRESS=poll asks for no thread";
        return PROUST_OK;
    }
    if (!needed) {
        p->helper_reason = "not started: no peer on a rail where our cpu moves the data (tcp)";
        return PROUST_OK;
    }
    cpu_set_t *set = &p->helper_cpus;
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0 || CPU_COUNT(set) < 2) {
        p->helper_reason = "not started: this process may run on one cpu only, where it "
                           "would take turns with the application";
        return PROUST_OK;
    }
    p->helper_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (p->helper_timer < 0) {
        PROUST_ERROR("progress: timerfd for the rendezvous helper: %s", strerror(errno));
        return PROUST_ERR_SYS;
    }
    atomic_store(&p->helper_avoid_cpu, -1);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&p->helper_thread, NULL, helper_main, p);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        PROUST_ERROR("progress: cannot start the rendezvous helper: %s", strerror(e));
        close(p->helper_timer);
        p->helper_timer = -1;
        return PROUST_ERR_SYS;
    }
    p->helper = true;
    p->helper_reason = "on: wakes when a nonblocking transfer of 256 KiB or more to or from a "
                       "tcp peer is in flight while the application computes, advances it on "
                       "another core";
    return PROUST_OK;
}

void proust__helper_stop(struct proust__progress *p)
{
    if (p->helper) {
        atomic_store(&p->stop, 1);
        arm(p, 1); /* asleep on the timer */
        proust__wake_slow(p, PROUST__WAIT_SLEEPERS | PROUST__WAIT_BLOCKER);
        proust__kick(p); /* in the wait set */
        proust__threads_kick(p); /* napping */
        pthread_join(p->helper_thread, NULL);
        p->helper = false;
    }
    if (p->helper_timer >= 0)
        close(p->helper_timer);
    p->helper_timer = -1;
}

void proust__helper_posted(struct proust__progress *p)
{
    /* keep it off our cpu (we compute there), before it wakes: a wake-up
     * there would take the cpu from us */
    int cpu = sched_getcpu();
    int tid = atomic_load_explicit(&p->helper_tid, memory_order_relaxed);
    if (tid > 0 &&
        cpu != atomic_exchange_explicit(&p->helper_avoid_cpu, cpu, memory_order_relaxed)) {
        cpu_set_t set = p->helper_cpus;
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set))
            CPU_CLR(cpu, &set);
        (void)sched_setaffinity(tid, sizeof set, &set);
    }
    /* Arm the timer only if the last helped post was not waited for at
     * once: Isend-then-Wait loops never pay for it (above); the first
     * post after a change of habit goes unhelped. */
    atomic_store_explicit(&p->helper_post_ns, proust__now_ns(), memory_order_relaxed);
    if (!atomic_load_explicit(&p->helper_waited_at_once, memory_order_relaxed)) {
        atomic_store_explicit(&p->helper_armed, 1, memory_order_relaxed);
        arm(p, GRACE_NS);
    }
}

void proust__helper_monitored(struct proust__progress *p)
{
    /* A callback says the application will not wait for this one: the
     * post that went unhelped because the last one was waited for at once
     * (or any other) gets the helper now. */
    atomic_store_explicit(&p->helper_waited_at_once, 0, memory_order_relaxed);
    atomic_store_explicit(&p->helper_armed, 1, memory_order_relaxed);
    arm(p, 1);
}

void proust__helper_wait_begins(struct proust__progress *p)
{
    /* the first application waiter: the helper stands aside (out of the
     * wait set if it holds it: we take what wakes us ourselves) */
    if (atomic_fetch_add_explicit(&p->app_waiting, 1, memory_order_seq_cst) == 0 &&
        atomic_load_explicit(&p->helped, memory_order_relaxed) > 0) {
        uint64_t since = proust__now_ns() -
                         atomic_load_explicit(&p->helper_post_ns, memory_order_relaxed);
        atomic_store_explicit(&p->helper_waited_at_once, since < GRACE_NS,
                              memory_order_relaxed);
        if (atomic_exchange_explicit(&p->helper_armed, 0, memory_order_relaxed))
            arm(p, 0);
        if (atomic_load_explicit(&p->pt_blocking, memory_order_seq_cst))
            proust__kick(p); /* out of the wait set: we take what wakes us */
    }
}

void proust__helper_wait_ends(struct proust__progress *p)
{
    /* back to computing while helped transfers are in flight */
    if (atomic_fetch_sub_explicit(&p->app_waiting, 1, memory_order_seq_cst) == 1 &&
        atomic_load_explicit(&p->helped, memory_order_seq_cst) > 0) {
        atomic_store_explicit(&p->helper_armed, 1, memory_order_relaxed);
        arm(p, GRACE_NS);
    }
}

void proust__helped_remove(struct proust__progress *p)
{
    /* the last one: if the helper holds the wait set, let it go to sleep
     * (an application waiter then takes the wait set) */
    if (atomic_fetch_sub(&p->helped, 1) == 1 && atomic_load(&p->pt_blocking))
        proust__kick(p);
}
