/*
 * wait.c — progress passes, the progress engine's upcalls, and the wait /
 * test family.
 *
 * Any thread may make progress: it polls each rail and each registered
 * source whose poll flag it can take (others are being polled already) and
 * schedules gates with work queued. A waiting thread alternates passes
 * with the progress engine's waiting policy (progress/waiter.c: spin, then
 * sleep), which calls back here for passes, peer checks and idle work.
 */
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/session.h"
#include "core/wait.h"

_Thread_local unsigned proust__progress_epoch;
_Thread_local const void *proust__burst_session;
_Thread_local int proust__burst_peer;
static _Thread_local bool in_rail_poll; /* (a callback under a poll may wait) */

/* Another thread polls this rail: wait until it is done (a poll is short;
 * on a full machine the holder may need our core to finish). */
static void take_poll_flag(_Atomic int *polling)
{
    for (unsigned spins = 0; !proust__poll_trylock(polling); spins++) {
        if (spins < 64)
            proust__cpu_relax();
        else
            sched_yield();
    }
}

/* Send what a gate holds (a burst held back, packets a full rail left). */
static int schedule_gate(struct proust_session *s, struct proust__gate *g)
{
    int events = 0;
    if (atomic_load_explicit(&g->pending_work, memory_order_acquire) && proust__trylock(&g->lock)) {
        /* only what moved counts: a sender facing a full ring is idle (it
         * yields, then sleeps until the receiver rings) */
        events = proust__gate_schedule(s, g);
        proust__unlock(&g->lock);
    }
    return events;
}

static int schedule_gates(struct proust_session *s)
{
    int events = 0;
    for (int r = 0; r < s->size; r++)
        events += schedule_gate(s, &s->gates[r]);
    return events;
}

static int progress_pass(struct proust_session *s, bool every_rail)
{
    int events = 0;
    proust__progress_epoch++; /* ends this thread's burst (gate.h) */
    PROUST__COARSE_ENTER(&s->prog);
    /* what this thread's burst held back leaves before the polls (on tcp
     * a system call each): its peer is waiting for it */
    if (proust__burst_session == s) {
        proust__burst_session = NULL;
        if (proust__burst_peer >= 0 && proust__burst_peer < s->size)
            events += schedule_gate(s, &s->gates[proust__burst_peer]);
    }
    for (int i = 0; i < s->nrails; i++) {
        struct proust__rail_slot *rs = &s->rails[i];
        if (!rs->ngates)
            continue;
        if (!proust__poll_trylock(&rs->task.polling)) {
            if (!every_rail || in_rail_poll)
                continue; /* polled now by another thread */
            take_poll_flag(&rs->task.polling);
        }
        bool nested = in_rail_poll; /* (restored: a nested pass must not clear it) */
        in_rail_poll = true;
        int n = rs->rail.ops->poll(&rs->rail);
        in_rail_poll = nested;
        proust__poll_unlock(&rs->task.polling);
        if (n > 0)
            events += n;
    }

    if (s->gets_head) /* racy peek; gets_run takes the lock */
        proust__gets_run(s);
    if (atomic_load_explicit(&s->uses_head, memory_order_relaxed))
        events += proust__offer_uses_run(s); /* writes into offered receives */
    if (atomic_load_explicit(&s->prog.jobs_queued, memory_order_relaxed))
        events += proust__offload_run(&s->prog); /* pieces of someone's copy */
    if (atomic_load_explicit(&s->gates_pending, memory_order_acquire) > 0)
        events += schedule_gates(s);
    PROUST__COARSE_LEAVE(&s->prog);
    /* user sources after the coarse section: their callbacks may post */
    if (atomic_load_explicit(&s->prog.ntasks, memory_order_relaxed) > s->nrails)
        events += proust__ptasks_poll_user(&s->prog);
    return events;
}

int proust__progress(struct proust_session *s)
{
    return progress_pass(s, false);
}

/* ---- the progress engine's upcalls ------------------------------------------ */
static int core_pass(void *core)
{
    int ev = proust__progress(core);
    proust__run_deferred();
    return ev;
}

static int core_last_look(void *core)
{
    int ev = progress_pass(core, true);
    proust__run_deferred();
    return ev;
}

static void core_check_peers(void *core)
{
    proust__check_peers(core);
}

/* an idle process pulls the rendezvous messages waiting unexpected
 * (unexp_pull.c): their senders may be waiting for us to */
static int core_idle_work(void *core)
{
    struct proust_session *s = core;
    return proust__idle_pull_wanted(s) ? proust__idle_pull(s) : 0;
}

/* a peer claimed one of our offered receives and copies into it (offer.c) */
static bool core_peer_writing(void *core)
{
    struct proust_session *s = core;
    return atomic_load_explicit(&s->offers_writing, memory_order_relaxed) > 0;
}

const struct proust__progress_upcalls proust__core_upcalls = {
    .pass = core_pass,
    .last_look = core_last_look,
    .run_deferred = proust__run_deferred,
    .check_peers = core_check_peers,
    .idle_work = core_idle_work,
    .peer_writing = core_peer_writing,
};

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
    proust__app_entered(&s->prog);
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

#define RDV_SPIN_NS_PER_KIB 500ull  /* a rendezvous send's wait spins ~2 GB/s worth, */
#define RDV_SPIN_MAX_NS 5000000ull  /* 5 ms at most */

void proust__rail_check_peers(void *engine)
{
    proust__check_peers(engine);
}

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
 * pulls it, longer than the spin window. The sender's cpu is not needed
 * meanwhile, but a sleep then costs a wake-up that a VM sometimes takes
 * milliseconds to deliver (several times the transfer; docs/PERFORMANCE.md,
 * "Figures behind the code"). Spin for about the
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
        proust__waiter_enter(&s->prog, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        if (!is_finished(req))
            proust__waiter_idle(&s->prog, &w, ev);
    }
    proust__waiter_end(&s->prog, &w);
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
                proust__waiter_end(&s->prog, &w);
                return finish(&reqs[i], status);
            }
        }
        proust__waiter_enter(&s->prog, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        proust__waiter_idle(&s->prog, &w, ev);
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
        proust__waiter_enter(&s->prog, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        proust__waiter_idle(&s->prog, &w, ev);
    }
    if (s)
        proust__waiter_end(&s->prog, &w);
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
                proust__waiter_end(&s->prog, &w);
            return rc;
        }
        if (source != PROUST_ANY_SOURCE) {
            int failed = atomic_load(&s->gates[source].failed);
            if (failed) {
                proust__waiter_end(&s->prog, &w);
                return failed;
            }
        }
        proust__waiter_enter(&s->prog, &w);
        proust__waiter_idle(&s->prog, &w, 0);
    }
}
