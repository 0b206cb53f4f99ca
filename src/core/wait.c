/*
 * wait.c — progress, and the wait / test family.
 *
 * Any thread may make progress: it polls each rail and each registered
 * source whose poll flag it can take (others are being polled already) and
 * schedules gates with work queued. A waiting thread polls for the spin
 * window, then sleeps (progress/block.c) until a completion or an event
 * wakes it; with PROUST_PROGRESS=poll it never sleeps but yields the core
 * (so 8 processes on 2 cores still make progress). Either way it checks
 * that its peers are alive when nothing has moved for PROUST_PEER_CHECK_MS.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/engine.h"

uint64_t proust__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int proust__progress(struct proust_session *s)
{
    int events = 0;
    PROUST__COARSE_ENTER(&s->prog);
    for (int i = 0; i < s->nrails; i++) {
        struct proust__rail_slot *rs = &s->rails[i];
        if (rs->ngates && proust__poll_trylock(&rs->task.polling)) {
            int n = rs->rail.ops->poll(&rs->rail);
            proust__poll_unlock(&rs->task.polling);
            if (n > 0)
                events += n;
        }
    }

    if (s->gets_head) /* racy peek; gets_run takes the lock */
        proust__gets_run(s);
    if (atomic_load_explicit(&s->uses_head, memory_order_relaxed))
        events += proust__offer_uses_run(s); /* writes into offered receives */
    if (atomic_load_explicit(&s->prog.jobs_queued, memory_order_relaxed))
        events += proust__offload_run(s); /* pieces of someone's copy */
    if (atomic_load_explicit(&s->gates_pending, memory_order_acquire) > 0) {
        for (int r = 0; r < s->size; r++) {
            struct proust__gate *g = &s->gates[r];
            if (!atomic_load_explicit(&g->pending_work, memory_order_acquire))
                continue;
            if (proust__trylock(&g->lock)) {
                /* only what moved counts: a sender facing a full ring is
                 * idle (it yields, then sleeps until the receiver rings) */
                events += proust__gate_schedule(s, g);
                proust__unlock(&g->lock);
            }
        }
    }
    PROUST__COARSE_LEAVE(&s->prog);
    /* user sources after the coarse section: their callbacks may post */
    if (atomic_load_explicit(&s->prog.ntasks, memory_order_relaxed) > s->nrails)
        events += proust__ptasks_poll_user(s);
    return events;
}

static inline bool is_finished(const struct proust_request *req)
{
    return proust__request_finished(
        atomic_load_explicit(&((struct proust_request *)req)->flags, memory_order_acquire));
}

/* Polls in a row that found nothing, by this thread's tests and probes:
 * after this many, the process is idle enough to pull the rendezvous
 * messages waiting unexpected (unexp_pull.c), as a wait does before it
 * sleeps; a test loop waiting on a peer that waits on us must not hang. */
#define APP_IDLE_POLLS 1024u
static _Thread_local unsigned app_empty_polls;

/* One poll on behalf of an application call that does not block (test,
 * probe, progress): it counts as the application polling, so a progress
 * thread naps instead of racing it for the poll flags. Otherwise, on a
 * test loop, the progress thread takes every packet (each one a new
 * event) and, woken onto the tester's cpu, gets preempted holding the
 * flag: the test then fails for a whole time slice (mpi4py's
 * testManyISSendAndRecv: 10 Testall calls after the last receive). */
static int app_poll(struct proust_session *s)
{
    if (!proust__in_progress_thread)
        atomic_fetch_add_explicit(&s->prog.app_entries, 1, memory_order_relaxed);
    int ev = proust__progress(s);
    proust__run_deferred();
    if (ev > 0) {
        app_empty_polls = 0;
        return ev;
    }
    ++app_empty_polls;
    /* More processes than cores: what a test loop waits for needs a core
     * that this loop holds (as a wait yields: proust__waiter_idle) */
    if (s->oversubscribed && !(app_empty_polls & 7u))
        sched_yield();
    if (app_empty_polls >= APP_IDLE_POLLS && proust__idle_pull_wanted(s)) {
        app_empty_polls = 0;
        ev = proust__idle_pull(s);
    }
    return ev;
}

/* Is a rail being polled by another thread right now? */
static bool rail_polled_elsewhere(const struct proust_session *s)
{
    for (int i = 0; i < s->nrails; i++)
        if (s->rails[i].ngates &&
            atomic_load_explicit(&s->rails[i].task.polling, memory_order_relaxed))
            return true;
    return false;
}

#define TEST_HOLD_NS 20000ull /* a test waits this long at most for another poller */

/* The poll of a test: when the request is still not finished and another
 * thread holds a rail's poll flag, what we test for may be in its hands
 * (a pass takes every packet of the rail). Wait for its pass to end,
 * briefly (a holder that was preempted may be gone for a time slice),
 * and look again: a test soon after the event then sees it. Spin a
 * little, then yield: the holder may be queued on our own cpu (a
 * progress thread woken there), or waiting there for a gate lock. */
static void test_poll(struct proust_session *s, const struct proust_request *req)
{
    app_poll(s);
    if (is_finished(req) || !rail_polled_elsewhere(s))
        return;
    uint64_t until = proust__now_ns() + TEST_HOLD_NS;
    for (unsigned i = 1; rail_polled_elsewhere(s); i++) {
        if (i < 64) {
            proust__cpu_relax();
            continue;
        }
        sched_yield();
        if (proust__now_ns() > until)
            return;
    }
    if (!is_finished(req))
        app_poll(s);
}

int proust_progress(proust_session_t *s)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    app_poll(s);
    return PROUST_OK;
}

#define SPIN_POLLS 64             /* polls before looking at the clock */
#define YIELD_NS 50000ull         /* poll mode: spin up to 50 us before yielding */
#define NAP_AFTER_NS 5000000ull   /* poll mode: 5 ms without progress, nap */
#define SPIN_SCALE_MAX 16u        /* adaptive spin: at most 16x the base window */
#define OFFER_SPIN_MAX_NS 5000000ull /* spin for a peer writing an offer: 5 ms at most */
#define RDV_SPIN_NS_PER_KIB 500ull  /* a rendezvous send's wait spins ~2 GB/s worth, */
#define RDV_SPIN_MAX_NS 5000000ull  /* 5 ms at most */

/* Adaptive spin, per thread: a thread whose event comes soon after it
 * went to sleep spins twice as long next time; one that sleeps long
 * goes back toward the base window. Without it two ranks in a ping-pong
 * can settle into sleeping on every message: the partner's reply takes
 * its own wake-up (about the spin window) plus the send, so each wait
 * just misses the window and sleeps in turn (40-150 us per message
 * instead of 0.3). */
static _Thread_local unsigned spin_scale = 1;

void proust__check_peers(struct proust_session *s)
{
    int dead;
    while ((dead = proust__boot_poll_failed_rank(&s->boot)) >= 0) {
        char why[96];
        snprintf(why, sizeof why, "rank %d died (reported by the launcher)", dead);
        proust__on_peer_failed(s, dead, PROUST_ERR_PEER_FAILED, why);
    }
    /* and the rails' own look (shm: is the peer's process still there?) */
    for (int i = 0; i < s->nrails; i++)
        if (s->rails[i].rail.ops->check)
            s->rails[i].rail.ops->check(&s->rails[i].rail);
}

/* The first empty poll of a wait: count the waiter as an application
 * poller (the progress thread stays out of the wait set while there are
 * some, so that peers do not pay doorbells for messages we poll anyway). */
static void waiter_start_polling(struct proust_session *s, struct proust__waiter *w)
{
    struct proust__progress *p = &s->prog;
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

void proust__waiter_idle(struct proust_session *s, struct proust__waiter *w, int events)
{
    if (events > 0) {
        w->idle_polls = 0;
        w->idle_since_ns = 0;
        return;
    }
    if (!w->polling && !w->slept)
        waiter_start_polling(s, w);
    /* More processes than cores, or more threads than cores with others of
     * ours waiting too: whoever we wait for may need this core (a thread
     * of ours whose message is in, or a peer rank), so give it up after a
     * few empty polls rather than a whole spin. Otherwise the scheduler
     * shares the core between our waiting threads by time slices (8
     * threads per rank in concurrent ping-pongs on 2 cpus: 133 us a
     * message, median of 5 paired rounds, against 7.5 with the yields;
     * benchmark 6 in PERFORMANCE.md). */
    if (++w->idle_polls, !(w->idle_polls & 7u) &&
        (s->oversubscribed || (proust__cpus_overcommitted(s) && others_in_waits(&s->prog, w) > 0)))
        sched_yield();
    if (w->idle_polls < SPIN_POLLS || (w->idle_polls & 15u))
        return; /* the clock costs more than a poll: read it every 16 */
    uint64_t now = proust__now_ns();
    if (!w->idle_since_ns) {
        w->idle_since_ns = now;
        if (!w->last_check_ns)
            w->last_check_ns = now;
    }
    if (now - w->last_check_ns >= (uint64_t)s->peer_check_ms * 1000000ull) {
        w->last_check_ns = now;
        proust__check_peers(s);
    }
    uint64_t idle = now - w->idle_since_ns;
    struct proust__progress *p = &s->prog;
    /* nothing to do for a spin window: take in the rendezvous messages
     * waiting unexpected, whose senders may be waiting for us to
     * (unexp_pull.c), and poll again before sleeping */
    if (idle >= (p->spin_ns < YIELD_NS ? p->spin_ns : YIELD_NS) && /* poll mode: spin_ns is infinite */
        proust__idle_pull_wanted(s) && proust__idle_pull(s) > 0) {
        w->idle_since_ns = 0;
        return;
    }
    uint64_t window = p->spin_ns * spin_scale;
    if (w->spin_floor_ns > window)
        window = w->spin_floor_ns;
    int cpu = proust__current_cpu();
    proust__presence_publish(s, cpu, now);
    if (p->mode == PROUST__PROGRESS_POLL) {
        if (idle > NAP_AFTER_NS) {
            struct timespec nap = {0, 50000};
            nanosleep(&nap, NULL);
        } else if (!s->oversubscribed && idle > YIELD_NS) {
            sched_yield();
        }
        return;
    }
    /* Loaded as measured, not as counted: more ranks than cores is not
     * load while the others sleep (4 ranks on 2 cores, 2 of them waiting
     * in a barrier: a ping-pong 0.3-0.9 us instead of 3-13 us when
     * oversubscription alone sent every wait to sleep at once) */
    bool loaded = proust__waiter_loaded(s, now);
    /* a peer claimed one of our offered receives and is copying into it:
     * its DONE comes within the copy (~0.1 ms a MiB), sooner than a sleep
     * and its wake-up; a copy that takes far longer is not running */
    if (atomic_load_explicit(&s->offers_writing, memory_order_relaxed) > 0 &&
        idle < OFFER_SPIN_MAX_NS) {
        if (loaded || s->oversubscribed)
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
            if (s->oversubscribed || !proust__cpus_overcommitted(s) ||
                !proust__partner_behind(s, w->partner - 1, cpu, w->idle_since_ns))
                return;
            if (p->handoff_migrate && proust__migrate_away(cpu)) {
                proust__presence_publish(s, proust__current_cpu(), proust__now_ns());
                return;
            }
            handoff = true;
        }
        /* Loaded, and other threads of ours poll too: the core most likely
         * goes to one of them, which finds its message and answers; a
         * sleep would cost a ~40 us wake-up for each. Loaded by compute
         * threads instead: sleep now, the kernel wakes us on the event. */
        else if (atomic_load_explicit(&p->app_polling, memory_order_relaxed) > 1) {
            sched_yield();
            return;
        }
    }
    /* spun as long as sleeping costs: sleep; loaded by our own threads,
     * with a wake-up that preempts them (boost.c) */
    if (loaded)
        proust__boost_begin(s, w);
    proust__waiter_stop_polling(s, w);
    w->slept = true;
    if (w->done) {
        uint64_t slept_at = proust__now_ns();
        proust__block(s, w->done, w->ctx, (uint64_t)s->peer_check_ms * 1000000ull);
        uint64_t woke_at = proust__now_ns(), slept = woke_at - slept_at;
        proust__presence_publish(s, proust__current_cpu(), woke_at);
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

/* Copy out the status, release the request, return its error. */
static int finish(struct proust_request **reqp, proust_status_t *status)
{
    struct proust_request *req = *reqp;
    if (status)
        *status = req->status;
    int err = req->status.error;
    *reqp = NULL;
    proust__request_release(req);
    return err;
}

/* The waiter's partner field: rank + 1, 0 for any (or a rank no session
 * has, which the call rejects anyway) */
static int partner_of(int rank)
{
    return rank >= 0 && rank < INT_MAX ? rank + 1 : 0;
}

static bool request_done(void *ctx)
{
    return is_finished(ctx);
}

/* How long a wait for `req` spins before it sleeps, at least. A
 * rendezvous send completes when the receiver has the data: on shm it
 * pulls it (4 MiB: ~0.8 ms here), longer than the spin window. The
 * sender's cpu is not needed meanwhile, but a sleep then costs a wake-up
 * that a VM sometimes takes milliseconds to deliver (a 4 MiB Isend + Wait,
 * receiver in Recv: 4.6 ms against 0.55 polling). Spin for about the
 * transfer instead (a loaded waiter still sleeps at once; with more
 * ranks than cores, the window stays as it is). */
static uint64_t spin_floor(const struct proust_request *req)
{
    struct proust_session *s = req->session;
    /* more ranks than cores: the receiver may need our core for the copy */
    if (s->oversubscribed || req->kind != PROUST__REQ_SEND || req->peer < 0 ||
        req->peer >= s->size || req->total < s->gates[req->peer].rdv_threshold)
        return 0;
    uint64_t ns = (uint64_t)(req->total >> 10) * RDV_SPIN_NS_PER_KIB;
    return ns < RDV_SPIN_MAX_NS ? ns : RDV_SPIN_MAX_NS;
}

void proust__wait_request(struct proust_request *req)
{
    struct proust_session *s = req->session;
    struct proust__waiter w = {.done = request_done, .ctx = req, .partner = partner_of(req->peer),
                               .spin_floor_ns = spin_floor(req)};
    while (!is_finished(req)) {
        proust__waiter_enter(s, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        if (!is_finished(req))
            proust__waiter_idle(s, &w, ev);
    }
    proust__waiter_end(s, &w);
}

int proust_wait(proust_request_t **reqp, proust_status_t *status)
{
    if (!reqp)
        return PROUST_ERR_INVALID;
    struct proust_request *req = *reqp;
    if (!req)
        return PROUST_OK;
    if (!is_finished(req)) /* most of a Waitall's requests are */
        proust__wait_request(req);
    return finish(reqp, status);
}

int proust_test(proust_request_t **reqp, int *flag, proust_status_t *status)
{
    if (!reqp || !flag)
        return PROUST_ERR_INVALID;
    struct proust_request *req = *reqp;
    if (!req) {
        *flag = 1;
        return PROUST_OK;
    }
    if (!is_finished(req))
        test_poll(req->session, req);
    if (!is_finished(req)) {
        *flag = 0;
        return PROUST_OK;
    }
    *flag = 1;
    return finish(reqp, status);
}

static struct proust_session *first_session(size_t count, proust_request_t **reqs)
{
    for (size_t i = 0; i < count; i++)
        if (reqs[i])
            return reqs[i]->session;
    return NULL;
}

struct any_ctx {
    size_t count;
    proust_request_t **reqs;
};

static bool any_done(void *p)
{
    struct any_ctx *c = p;
    for (size_t i = 0; i < c->count; i++)
        if (c->reqs[i] && is_finished(c->reqs[i]))
            return true;
    return false;
}

/* waitall: done when the first unfinished request is finished (the loop
 * then moves on to the next one) */
static bool all_done(void *p)
{
    struct any_ctx *c = p;
    for (size_t i = 0; i < c->count; i++)
        if (c->reqs[i] && !is_finished(c->reqs[i]))
            return false;
    return true;
}

int proust_waitany(size_t count, proust_request_t **reqs, size_t *index, proust_status_t *status)
{
    if ((count && !reqs) || !index)
        return PROUST_ERR_INVALID;
    struct proust_session *s = first_session(count, reqs);
    if (!s)
        return PROUST_ERR_INVALID;
    struct any_ctx ctx = {count, reqs};
    struct proust__waiter w = {.done = any_done, .ctx = &ctx};
    for (;;) {
        for (size_t i = 0; i < count; i++) {
            if (reqs[i] && is_finished(reqs[i])) {
                *index = i;
                proust__waiter_end(s, &w);
                return finish(&reqs[i], status);
            }
        }
        proust__waiter_enter(s, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        proust__waiter_idle(s, &w, ev);
    }
}

int proust_waitall(size_t count, proust_request_t **reqs, proust_status_t *statuses)
{
    if (count && !reqs)
        return PROUST_ERR_INVALID;
    struct proust_session *s = first_session(count, reqs);
    int first_err = PROUST_OK;
    struct any_ctx ctx = {count, reqs};
    struct proust__waiter w = {.done = all_done, .ctx = &ctx};
    size_t next = 0; /* requests before `next` are done */
    while (next < count) {
        size_t i = next;
        for (; i < count; i++) {
            if (!reqs[i]) {
                if (statuses && i == next)
                    memset(&statuses[i], 0, sizeof statuses[i]);
                if (i == next)
                    next++;
                continue;
            }
            if (!is_finished(reqs[i])) {
                w.partner = partner_of(reqs[i]->peer);
                w.spin_floor_ns = spin_floor(reqs[i]);
                break;
            }
            int err = finish(&reqs[i], statuses ? &statuses[i] : NULL);
            if (err != PROUST_OK && first_err == PROUST_OK)
                first_err = err;
            if (i == next)
                next++;
        }
        if (next >= count)
            break;
        proust__waiter_enter(s, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        proust__waiter_idle(s, &w, ev);
    }
    if (s)
        proust__waiter_end(s, &w);
    return first_err;
}

int proust_testsome(size_t count, proust_request_t **reqs, size_t *outcount, size_t *indices,
                    proust_status_t *statuses)
{
    if ((count && !reqs) || !outcount)
        return PROUST_ERR_INVALID;
    struct proust_session *s = first_session(count, reqs);
    if (s)
        app_poll(s);
    size_t n = 0;
    int first_err = PROUST_OK;
    for (size_t i = 0; i < count; i++) {
        if (!reqs[i] || !is_finished(reqs[i]))
            continue;
        int err = finish(&reqs[i], statuses ? &statuses[n] : NULL);
        if (err != PROUST_OK && first_err == PROUST_OK)
            first_err = err;
        if (indices)
            indices[n] = i;
        n++;
    }
    *outcount = n;
    return first_err;
}

int proust_iprobe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                  int *flag, proust_status_t *status)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!flag)
        return PROUST_ERR_INVALID;
    if (source != PROUST_ANY_SOURCE && (source < 0 || source >= s->size))
        return PROUST_ERR_RANK;
    app_poll(s);
    /* nothing unexpected anywhere: no lock (a message counted by another
     * thread a moment ago is seen at the next call) */
    if (source == PROUST_ANY_SOURCE &&
        atomic_load_explicit(&s->unexpected_count, memory_order_relaxed) == 0) {
        *flag = 0;
        return PROUST_OK;
    }
    PROUST__COARSE_ENTER(&s->prog);
    proust__match_lock_source(s, source);
    struct proust__inmsg *m = proust__unexpected_find(s, source, tag, mask, false);
    proust_status_t st = {0};
    if (m) {
        st.source = m->source;
        st.tag = m->tag;
        st.size = m->size;
        st.count = m->size;
    }
    proust__match_unlock_source(s, source);
    PROUST__COARSE_LEAVE(&s->prog);
    *flag = m != NULL;
    if (m && status)
        *status = st;
    return PROUST_OK;
}

int proust_improbe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                   int *flag, proust_message_t **msg, proust_status_t *status)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    if (!flag || !msg)
        return PROUST_ERR_INVALID;
    if (source != PROUST_ANY_SOURCE && (source < 0 || source >= s->size))
        return PROUST_ERR_RANK;
    app_poll(s);
    PROUST__COARSE_ENTER(&s->prog);
    proust__match_lock_source(s, source);
    struct proust__inmsg *m = proust__unexpected_find(s, source, tag, mask, false);
    /* A multi-segment message still arriving stays until it is whole: its
     * later chunks find it in the unexpected queue. */
    if (m && m->nseg_seen == m->nseg)
        m = proust__unexpected_find(s, source, tag, mask, true);
    else
        m = NULL;
    proust_status_t st = {0};
    if (m) {
        st.source = m->source;
        st.tag = m->tag;
        st.size = m->size;
        st.count = m->size;
    }
    proust__match_unlock_source(s, source);
    PROUST__COARSE_LEAVE(&s->prog);
    *flag = m != NULL;
    if (m) {
        *msg = (proust_message_t *)m;
        if (status)
            *status = st;
    }
    return PROUST_OK;
}

struct probe_ctx {
    struct proust_session *s;
    int source;
    proust_tag_t tag, mask;
};

static bool probe_done(void *p)
{
    struct probe_ctx *c = p;
    if (c->source != PROUST_ANY_SOURCE && atomic_load(&c->s->gates[c->source].failed))
        return true;
    /* under the locks the arrival held: it wakes us after appending */
    proust__match_lock_source(c->s, c->source);
    bool found = proust__unexpected_find(c->s, c->source, c->tag, c->mask, false) != NULL;
    proust__match_unlock_source(c->s, c->source);
    return found;
}

int proust_probe(proust_session_t *s, int source, proust_tag_t tag, proust_tag_t mask,
                 proust_status_t *status)
{
    struct probe_ctx ctx = {s, source, tag, mask};
    struct proust__waiter w = {.done = probe_done, .ctx = &ctx, .partner = partner_of(source)};
    for (;;) {
        int flag = 0;
        int rc = proust_iprobe(s, source, tag, mask, &flag, status);
        if (rc != PROUST_OK || flag) {
            if (rc == PROUST_OK || w.counted || w.polling) /* (s is valid then) */
                proust__waiter_end(s, &w);
            return rc;
        }
        if (source != PROUST_ANY_SOURCE) {
            int failed = atomic_load(&s->gates[source].failed);
            if (failed) {
                proust__waiter_end(s, &w);
                return failed;
            }
        }
        proust__waiter_enter(s, &w);
        proust__waiter_idle(s, &w, 0);
    }
}
