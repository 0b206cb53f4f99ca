/*
 * waiter.c — the waiting policy: what a thread that waits does between
 * empty passes. It polls for the spin window (sized at init from the cost
 * of a wake-up, stretched per thread when events come just after it fell
 * asleep), yields the core where others need it, hands the cpu to a
 * partner queued behind it, then sleeps (block.c) with a boosted
 * priority when its own process loads every cpu (boost.c); with
 * PROUST_PROGRESS=poll it never sleeps but yields (so 8 processes on 2
 * cores still make progress). Either way it asks the layer above to check
 * its peers when nothing has moved for PROUST_PEER_CHECK_MS.
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "progress/progress.h"

uint64_t proust__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}


#define SPIN_POLLS 64             /* polls before looking at the clock */
#define YIELD_NS 50000ull         /* poll mode: spin up to 50 us before yielding */
#define NAP_AFTER_NS 5000000ull   /* poll mode: 5 ms without progress, nap */
#define SPIN_SCALE_MAX 16u        /* adaptive spin: at most 16x the base window */
#define WRITE_SPIN_MAX_NS 5000000ull /* spin for a peer writing into us: 5 ms at most */

/* Adaptive spin, per thread: a thread whose event comes soon after it
 * went to sleep spins twice as long next time; one that sleeps long
 * goes back toward the base window. Without it two ranks in a ping-pong
 * can settle into sleeping on every message: the partner's reply takes
 * its own wake-up (about the spin window) plus the send, so each wait
 * just misses the window and sleeps in turn, a hundred times slower
 * (docs/PERFORMANCE.md, "Figures behind the code"). */
static _Thread_local unsigned spin_scale = 1;

/* The first empty poll of a wait: count the waiter as an application
 * poller (the progress thread stays out of the wait set while there are
 * some, so that peers do not pay doorbells for messages we poll anyway). */
static void waiter_start_polling(struct proust__progress *p, struct proust__waiter *w)
{
    w->polling = true;
    atomic_fetch_add_explicit(&p->app_polling, 1, memory_order_seq_cst);
    atomic_fetch_add_explicit(&p->app_entries, 1, memory_order_relaxed);
}

/* Application threads of ours inside a wait besides the caller: polling
 * ones, and asleep ones (on the futex, or holding the wait set). */
static int others_in_waits(struct proust__progress *p, const struct proust__waiter *me)
{
    unsigned w = atomic_load_explicit(&p->waiting, memory_order_relaxed);
    int n = atomic_load_explicit(&p->app_polling, memory_order_relaxed) - (me->polling ? 1 : 0);
    n += atomic_load_explicit(&p->app_sleepers, memory_order_relaxed);
    if ((w & PROUST__WAIT_BLOCKER) && !atomic_load_explicit(&p->pt_blocking, memory_order_relaxed))
        n++;
    return n;
}

void proust__waiter_idle(struct proust__progress *p, struct proust__waiter *w, int events)
{
    if (events > 0) {
        w->idle_polls = 0;
        w->idle_since_ns = 0;
        return;
    }
    if (!w->polling && !w->slept)
        waiter_start_polling(p, w);
    /* More processes than cores, or more threads than cores with others of
     * ours waiting too: whoever we wait for may need this core (a thread
     * of ours whose message is in, or a peer rank), so give it up after a
     * few empty polls rather than a whole spin. Otherwise the scheduler
     * shares the core between our waiting threads by time slices, an
     * order of magnitude slower (docs/PERFORMANCE.md, "Figures behind the code"). */
    if (++w->idle_polls, !(w->idle_polls & 7u) &&
        (p->oversubscribed || (proust__cpus_overcommitted(p) && others_in_waits(p, w) > 0)))
        sched_yield();
    if (w->idle_polls < SPIN_POLLS || (w->idle_polls & 15u))
        return; /* the clock costs more than a poll: read it every 16 */
    uint64_t now = proust__now_ns();
    if (!w->idle_since_ns) {
        w->idle_since_ns = now;
        if (!w->last_check_ns)
            w->last_check_ns = now;
    }
    if (now - w->last_check_ns >= p->peer_check_ns) {
        w->last_check_ns = now;
        p->up->check_peers(p->core);
    }
    uint64_t idle = now - w->idle_since_ns;
    /* nothing to do for a spin window: the layer above does what an idle
     * process does (core takes in the rendezvous messages waiting
     * unexpected, whose senders may be waiting for us to), and we poll
     * again before sleeping (poll mode: spin_ns is infinite) */
    if (idle >= (p->spin_ns < YIELD_NS ? p->spin_ns : YIELD_NS) &&
        p->up->idle_work(p->core) > 0) {
        w->idle_since_ns = 0;
        return;
    }
    uint64_t window = p->spin_ns * spin_scale;
    if (w->spin_floor_ns > window)
        window = w->spin_floor_ns;
    int cpu = proust__current_cpu();
    proust__presence_publish(p, cpu, now);
    if (p->mode == PROUST__PROGRESS_POLL) {
        if (idle > NAP_AFTER_NS) {
            struct timespec nap = {0, 50000};
            nanosleep(&nap, NULL);
        } else if (!p->oversubscribed && idle > YIELD_NS) {
            sched_yield();
        }
        return;
    }
    /* Loaded as measured, not as counted: more ranks than cores is not
     * load while the others sleep (ranks waiting in a barrier while two
     * others ping-pong: sending every wait to sleep at once made their
     * ping-pong ten times slower; docs/PERFORMANCE.md, "Figures behind the code") */
    bool loaded = proust__waiter_loaded(p, now);
    /* a peer is copying into our memory (core: it claimed one of our
     * offered receives): its end comes within the copy, sooner than a
     * sleep and its wake-up; a copy that takes far longer is not running */
    if (idle < WRITE_SPIN_MAX_NS && p->up->peer_writing(p->core)) {
        if (loaded || p->oversubscribed)
            sched_yield();
        return;
    }
    bool handoff = false;
    if (idle < window) {
        /* Our own threads do not need this cpu; the partner may, when the
         * kernel queued it behind us (colocate.c): move to another cpu,
         * or hand this one over by sleeping. (More ranks than cores: the
         * yields above hand it over; moving only lands on another rank.) */
        if (!loaded) {
            if (p->oversubscribed || !proust__cpus_overcommitted(p) ||
                !proust__partner_behind(p, w->partner - 1, cpu, w->idle_since_ns))
                return;
            if (p->handoff_migrate && proust__migrate_away(cpu)) {
                proust__presence_publish(p, proust__current_cpu(), proust__now_ns());
                return;
            }
            handoff = true;
        }
        /* Loaded, and other threads of ours poll too: the core most likely
         * goes to one of them, which finds its message and answers; a
         * sleep would cost a wake-up for each. Loaded by compute
         * threads instead: sleep now, the kernel wakes us on the event. */
        else if (atomic_load_explicit(&p->app_polling, memory_order_relaxed) > 1) {
            sched_yield();
            return;
        }
    }
    /* spun as long as sleeping costs: sleep; loaded by our own threads,
     * with a wake-up that preempts them (boost.c) */
    if (loaded)
        proust__boost_begin(p, w);
    proust__waiter_stop_polling(p, w);
    w->slept = true;
    if (w->done) {
        uint64_t slept_at = proust__now_ns();
        proust__block(p, w->done, w->ctx, p->peer_check_ns);
        uint64_t woke_at = proust__now_ns(), slept = woke_at - slept_at;
        proust__presence_publish(p, proust__current_cpu(), woke_at);
        /* woken within a few wake-up costs (by an event: the timeout is far
         * longer; the next pass completes the request): a little more spin
         * would have caught it (unless loaded: the core belongs to others;
         * or a hand-off: the partner answered because we let it run) */
        if (!loaded && !handoff && slept < 4 * p->spin_ns) {
            if (spin_scale < SPIN_SCALE_MAX)
                spin_scale *= 2;
        } else if (slept > 16 * p->spin_ns * spin_scale && spin_scale > 1) {
            spin_scale /= 2;
        }
    } else {
        struct timespec nap = {0, 50000};
        nanosleep(&nap, NULL);
    }
    w->idle_polls = SPIN_POLLS - 1; /* back here after one more poll */
}

