/*
 * block.c — how a thread with nothing to do goes to sleep, and how it is
 * woken.
 *
 * One sleeping thread, the blocker, holds the wait set: it arms the rails'
 * doorbells (a shm peer then signals our fd when it writes to us), checks
 * once more that nothing arrived, and blocks in epoll on every rail's and
 * source's fd plus the kick eventfd. The others sleep on a futex word
 * (wake_seq). Waking is Dekker-style: a sleeper announces itself in
 * `waiting` (seq_cst) before checking its condition; a completer sets DONE
 * (seq_cst) before reading `waiting`; one of the two always sees the other.
 * When the blocker leaves it wakes the sleepers, so one of them can take
 * its place.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progress/progress.h"

static _Atomic uint64_t thread_ids;
_Thread_local bool proust__in_progress_thread;
static _Thread_local uint64_t my_thread_id;

uint64_t proust__thread_id(void)
{
    if (!my_thread_id)
        my_thread_id = atomic_fetch_add(&thread_ids, 1) + 1;
    return my_thread_id;
}

static void futex_wait(_Atomic unsigned *word, unsigned expected, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    (void)syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, expected,
                  timeout_ns ? &ts : NULL, NULL, 0);
}

static void futex_wake_all(_Atomic unsigned *word)
{
    (void)syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void proust__kick(struct proust__progress *p)
{
    uint64_t one = 1;
    if (p->kick_fd >= 0)
        (void)!write(p->kick_fd, &one, sizeof one);
}

void proust__wake_slow(struct proust__progress *p, unsigned waiting)
{
    if (waiting & PROUST__WAIT_SLEEPERS) {
        atomic_fetch_add_explicit(&p->wake_seq, 1, memory_order_seq_cst);
        futex_wake_all(&p->wake_seq);
    }
    /* A progress thread in the wait set waits for no request: a completion
     * or an arrival is nothing to it (what it serves rings the rails'
     * doorbells), and a kick is a system call on the completer's path and
     * a context switch -- one per message of a process that sends to
     * itself. An application thread there waits for its request: kick it.
     * (pt_blocking is cleared before the wait set is let go: seeing the
     * blocker bit of an application thread, we see it clear.) */
    if ((waiting & PROUST__WAIT_BLOCKER) &&
        !atomic_load_explicit(&p->pt_blocking, memory_order_seq_cst))
        proust__kick_blocker(p);
}

void proust__kick_blocker(struct proust__progress *p)
{
    if (atomic_load_explicit(&p->blocker_id, memory_order_relaxed) != proust__thread_id())
        proust__kick(p);
}

static void arm_rails(struct proust__progress *p, int level)
{
    for (int i = 0; i < p->nrails; i++) {
        proust__rail_t *r = atomic_load_explicit(&p->tasks[i], memory_order_relaxed)->rail;
        if (r->ops->arm)
            r->ops->arm(r, level);
    }
}

static void drain_kicks(struct proust__progress *p)
{
    uint64_t v;
    (void)!read(p->kick_fd, &v, sizeof v);
}

/* Hold the wait set: block in epoll until an fd fires or timeout. */
static void block_in_waitset(struct proust__progress *p, proust__done_fn done, void *ctx,
                             uint64_t timeout_ns)
{
    atomic_store_explicit(&p->blocker_id, proust__thread_id(), memory_order_relaxed);
    /* application threads that start polling get a progress thread out of
     * here (they poll themselves; our doorbells would only cost them) */
    /* A progress thread alone needs waking for rendezvous handshakes only;
     * as soon as an application thread sleeps too, or a completion runs a
     * callback (a nonblocking collective's next round), for everything. */
    /* (Dekker with an application sleeper, which raises the level after
     * counting itself: arm low first, then look for sleepers; never lower
     * a level afterwards) */
    if (proust__in_progress_thread) {
        atomic_store_explicit(&p->pt_blocking, 1, memory_order_seq_cst);
        arm_rails(p, PROUST__ARM_URGENT);
        if (atomic_load_explicit(&p->app_sleepers, memory_order_seq_cst) > 0 ||
            atomic_load_explicit(&p->monitored, memory_order_seq_cst) > 0)
            arm_rails(p, PROUST__ARM_ALL);
    } else {
        arm_rails(p, PROUST__ARM_ALL); /* seq_cst inside: doorbells ring from now on */
    }
    /* what arrived before the doorbells were armed: the last look */
    int ev = p->up->last_look(p->core);
    bool app_polls = proust__in_progress_thread &&
                     atomic_load_explicit(&p->app_polling, memory_order_seq_cst) > 0;
    if (ev == 0 && !app_polls && !(done && done(ctx))) {
        uint64_t period = proust__ptasks_period(p);
        if (period && (!timeout_ns || period < timeout_ns))
            timeout_ns = period;
        /* ppoll on the epoll set: a timeout finer than epoll_wait's ms
         * (sources may ask for more than 1 kHz) */
        struct timespec ts = {(time_t)(timeout_ns / 1000000000u),
                              (long)(timeout_ns % 1000000000u)};
        struct pollfd pfd = {.fd = p->epfd, .events = POLLIN};
        if (ppoll(&pfd, 1, timeout_ns ? &ts : NULL, NULL) > 0) {
            struct epoll_event evs[8];
            int n = epoll_wait(p->epfd, evs, 8, 0);
            for (int i = 0; i < n; i++)
                if (evs[i].data.ptr == NULL)
                    drain_kicks(p);
        }
    }
    arm_rails(p, 0);
    if (proust__in_progress_thread)
        atomic_store_explicit(&p->pt_blocking, 0, memory_order_relaxed);
}

void proust__monitored_begins(struct proust__progress *p)
{
    /* (Dekker with a progress thread arming low: count first, then look) */
    int before = atomic_fetch_add_explicit(&p->monitored, 1, memory_order_seq_cst);
    if (before == 0 && atomic_load_explicit(&p->pt_blocking, memory_order_seq_cst)) {
        arm_rails(p, PROUST__ARM_ALL);
        /* A packet that came while the thread slept armed low rang
         * nobody (the FIN of a send whose receiver pulled the data, say)
         * and rings nobody now: the blocker must look once more. (From
         * one monitored request on, the thread arms for everything.) */
        proust__kick(p);
    }
}

void proust__block(struct proust__progress *p, proust__done_fn done, void *ctx, uint64_t timeout_ns)
{
    if (p->epfd >= 0 &&
        !(atomic_fetch_or_explicit(&p->waiting, PROUST__WAIT_BLOCKER, memory_order_seq_cst) &
          PROUST__WAIT_BLOCKER)) {
        block_in_waitset(p, done, ctx, timeout_ns);
        unsigned w = atomic_fetch_and_explicit(&p->waiting, ~PROUST__WAIT_BLOCKER,
                                               memory_order_seq_cst);
        if (w & PROUST__WAIT_SLEEPERS)
            proust__wake_slow(p, w & PROUST__WAIT_SLEEPERS); /* one of them takes over */
        return;
    }
    /* Someone else holds the wait set (or there is none): sleep until a
     * completion, a hand-over, or the timeout. */
    bool app = !proust__in_progress_thread;
    atomic_fetch_add_explicit(&p->waiting, 1, memory_order_seq_cst);
    unsigned seq = atomic_load_explicit(&p->wake_seq, memory_order_seq_cst);
    unsigned w = atomic_load_explicit(&p->waiting, memory_order_seq_cst);
    if (app) {
        /* a progress thread holding the wait set rings for handshakes
         * only: make every packet ring, then look once more at what came
         * before */
        atomic_fetch_add_explicit(&p->app_sleepers, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&p->pt_blocking, memory_order_seq_cst)) {
            arm_rails(p, PROUST__ARM_ALL);
            p->up->last_look(p->core);
        }
    }
    bool holder = (w & PROUST__WAIT_BLOCKER) || p->epfd < 0;
    if (holder && !atomic_load(&p->stop) && !(done && done(ctx)))
        futex_wait(&p->wake_seq, seq, timeout_ns);
    if (app)
        atomic_fetch_sub_explicit(&p->app_sleepers, 1, memory_order_seq_cst);
    atomic_fetch_sub_explicit(&p->waiting, 1, memory_order_seq_cst);
}
