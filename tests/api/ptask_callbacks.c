/*
 * ptask_callbacks.c — how a source's callbacks complete its requests
 * while several threads wait on them (cases poll, group, always).
 *
 *  poll      two sources with a per-request poll callback; a request
 *            completes once a shared tick counter (advanced by a producer
 *            thread every ms) reaches its target. 4 threads wait on 16
 *            requests at once (wait, waitall, waitany, a test loop): each
 *            completes, never early, with its own user data; a source's
 *            callback never runs concurrently with itself; everything is
 *            done promptly once the last target is reached (a sleeping
 *            waiter polls a source without fd at its frequency).
 *  group     a group callback completes every pending request whose target
 *            was reached; given with a poll callback, the group one is used
 *            (poll never runs).
 *  always    a source without PROUST_PTASK_ALWAYS and nothing pending is
 *            never polled; one with it is, until it is unregistered.
 */
#include <sched.h>

#include "ptask.h"

/* ---------------------------------------------------------------- poll */
struct src_state {
    proust_ptask_t *_Atomic task;
    _Atomic int inside;
    _Atomic int overlaps;
    _Atomic long calls;
    _Atomic long poll_calls; /* the per-request callback (group sources: must stay 0) */
    _Atomic int bad;         /* wrong task / user data, failed complete */
    _Atomic int completions;
};

static void enter(struct src_state *ss)
{
    if (atomic_exchange(&ss->inside, 1))
        atomic_fetch_add(&ss->overlaps, 1);
    atomic_fetch_add(&ss->calls, 1);
}

static void leave(struct src_state *ss)
{
    /* widen the window a concurrent call would have to hit */
    for (volatile int i = 0; i < 200; i++)
        ;
    atomic_store(&ss->inside, 0);
}

static int poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    struct src_state *ss = arg;
    enter(ss);
    atomic_fetch_add(&ss->poll_calls, 1);
    int ev = 0;
    struct preq *p = proust_request_user_data(req);
    if (t != atomic_load(&ss->task) || !p || p->src != ss) {
        atomic_fetch_add(&ss->bad, 1);
    } else {
        atomic_fetch_add(&p->polls, 1);
        if (atomic_load(&ticks) >= p->target) {
            if (atomic_exchange(&p->completed, 1))
                atomic_fetch_add(&ss->bad, 1); /* polled after completion */
            atomic_fetch_add(&ss->completions, 1); /* before: the waiter may return at once */
            if (proust_request_complete(req, PROUST_OK) != PROUST_OK)
                atomic_fetch_add(&ss->bad, 1);
            ev = 1;
        }
    }
    leave(ss);
    return ev;
}

#define NSRC 2
#define NREQ 16
#define NWT 4

static struct preq preqs[NREQ];
static proust_request_t *wreqs[NREQ];
static _Atomic int wait_errors;

static void wait_fail(const char *what, int i, int rc)
{
    fprintf(stderr, "[rank %d] FAIL %s on request %d: %s\n", tu_rank, what, i,
            proust_error_name(rc));
    atomic_fetch_add(&wait_errors, 1);
}

static void check_done(int i, const proust_status_t *st)
{
    if (st->error != PROUST_OK)
        wait_fail("status.error", i, st->error);
    if (!atomic_load(&preqs[i].completed))
        wait_fail("wait returned before the callback completed it", i, 0);
    if (atomic_load(&ticks) < preqs[i].target)
        wait_fail("completed before its target", i, 0);
}

static void *waiter_main(void *arg)
{
    int k = (int)(intptr_t)arg;
    proust_request_t **r = &wreqs[k * 4];
    int base = k * 4;
    proust_status_t st[4];
    int rc;
    switch (k) {
    case 0: /* proust_wait one by one */
        for (int i = 0; i < 4; i++) {
            if ((rc = proust_wait(&r[i], &st[i])) != PROUST_OK)
                wait_fail("proust_wait", base + i, rc);
            check_done(base + i, &st[i]);
        }
        break;
    case 1: /* waitall */
        if ((rc = proust_waitall(4, r, st)) != PROUST_OK)
            wait_fail("proust_waitall", base, rc);
        for (int i = 0; i < 4; i++)
            check_done(base + i, &st[i]);
        break;
    case 2: /* waitany until all done */
        for (int n = 0; n < 4; n++) {
            size_t idx = 99;
            proust_status_t s1;
            if ((rc = proust_waitany(4, r, &idx, &s1)) != PROUST_OK || idx >= 4) {
                wait_fail("proust_waitany", base, rc);
                break;
            }
            check_done(base + (int)idx, &s1);
        }
        break;
    default: /* a test loop */
        for (int i = 0; i < 4; i++) {
            int flag = 0;
            double deadline = tu_now() + 20;
            while (!flag && tu_now() < deadline) {
                if ((rc = proust_test(&r[i], &flag, &st[i])) != PROUST_OK) {
                    wait_fail("proust_test", base + i, rc);
                    break;
                }
                if (!flag)
                    sched_yield();
            }
            if (flag)
                check_done(base + i, &st[i]);
            else
                wait_fail("proust_test loop timed out", base + i, 0);
        }
    }
    for (int i = 0; i < 4; i++)
        if (r[i])
            wait_fail("handle not cleared", base + i, 0);
    return NULL;
}

void test_poll(void)
{
    TU_PHASE("poll sources");
    static struct src_state src[NSRC];
    proust_ptask_t *tasks[NSRC];
    for (int s = 0; s < NSRC; s++) {
        memset(&src[s], 0, sizeof src[s]);
        struct proust_ptask_desc d = {.name = s ? "counter-b" : "counter-a",
                                      .poll = poll_cb,
                                      .fd = -1,
                                      .frequency_hz = 0, /* default 1 kHz */
                                      .arg = &src[s]};
        CHECK(proust_ptask_register(S, &d, &tasks[s]));
        EXPECT(tasks[s] != NULL, "no task handle");
        atomic_store(&src[s].task, tasks[s]);
    }
    atomic_store(&ticks, 0);
    int max_target = 0;
    for (int i = 0; i < NREQ; i++) {
        preqs[i].target = 10 + (i * 37) % 190; /* 10..199 ms of ticks */
        if (preqs[i].target > max_target)
            max_target = preqs[i].target;
        atomic_store(&preqs[i].completed, 0);
        atomic_store(&preqs[i].polls, 0);
        preqs[i].src = &src[i % NSRC];
        CHECK(proust_request_create(S, tasks[i % NSRC], &preqs[i], &wreqs[i]));
        EXPECT(proust_request_user_data(wreqs[i]) == &preqs[i], "user data %p, expected %p",
               proust_request_user_data(wreqs[i]), (void *)&preqs[i]);
    }
    atomic_store(&wait_errors, 0);
    producer_start(max_target);
    pthread_t th[NWT];
    for (int k = 0; k < NWT; k++)
        EXPECT(pthread_create(&th[k], NULL, waiter_main, (void *)(intptr_t)k) == 0, "create");
    for (int k = 0; k < NWT; k++)
        pthread_join(th[k], NULL);
    double done = tu_now();
    producer_join();
    double last = atomic_load(&last_tick_time);
    EXPECT(atomic_load(&wait_errors) == 0, "%d waiter failure(s) (above)",
           atomic_load(&wait_errors));
    EXPECT(done - last < 1.0,
           "the waits returned %.3f s after the last target was reached: sleeping waiters do "
           "not poll a source at its frequency", done - last);
    long calls = 0;
    for (int s = 0; s < NSRC; s++) {
        EXPECT(atomic_load(&src[s].overlaps) == 0,
               "source %d: its poll callback ran concurrently with itself %d time(s)", s,
               atomic_load(&src[s].overlaps));
        EXPECT(atomic_load(&src[s].bad) == 0,
               "source %d: %d callback(s) with a wrong task / user data, a request polled "
               "after it completed, or a failed proust_request_complete", s,
               atomic_load(&src[s].bad));
        EXPECT(atomic_load(&src[s].completions) == NREQ / NSRC, "source %d completed %d",
               s, atomic_load(&src[s].completions));
        calls += atomic_load(&src[s].calls);
    }
    for (int s = 0; s < NSRC; s++) {
        CHECK(proust_ptask_unregister(&tasks[s]));
        EXPECT(tasks[s] == NULL, "unregister left the handle");
    }
    if (tu_rank == 0)
        printf("ptask poll: %d requests on %d sources, %d waiting threads, %ld callbacks, "
               "done %.1f ms after the last target\n",
               NREQ, NSRC, NWT, calls, (done - last) * 1e3);
}

/* ---------------------------------------------------------------- group */
#define NG 12
static struct preq greqs[NG];
static _Atomic int group_items; /* greqs[0..group_items) have a handle */

static int group_cb(proust_ptask_t *t, void *arg)
{
    struct src_state *ss = arg;
    enter(ss);
    if (t != atomic_load(&ss->task))
        atomic_fetch_add(&ss->bad, 1);
    int ev = 0, now = atomic_load(&ticks);
    for (int i = 0; i < atomic_load(&group_items); i++) {
        struct preq *p = &greqs[i];
        if (atomic_load(&p->completed) || now < p->target)
            continue;
        atomic_store(&p->completed, 1);
        atomic_fetch_add(&ss->completions, 1);
        if (proust_request_complete(p->handle, PROUST_OK) != PROUST_OK)
            atomic_fetch_add(&ss->bad, 1);
        ev++;
    }
    leave(ss);
    return ev;
}

static int never_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)req;
    struct src_state *ss = arg;
    atomic_fetch_add(&ss->poll_calls, 1);
    return 0;
}

static int counting_group_cb(proust_ptask_t *t, void *arg)
{
    (void)t;
    struct src_state *ss = arg;
    enter(ss);
    leave(ss);
    return 0;
}

struct gw_arg {
    int first, n;
};

static void *group_waiter(void *argp)
{
    struct gw_arg *a = argp;
    proust_request_t *r[NG];
    proust_status_t st[NG];
    for (int i = 0; i < a->n; i++)
        r[i] = greqs[a->first + i].handle;
    int rc = proust_waitall((size_t)a->n, r, st);
    if (rc != PROUST_OK)
        wait_fail("group waitall", a->first, rc);
    for (int i = 0; i < a->n; i++) {
        if (r[i])
            wait_fail("group: handle not cleared", a->first + i, 0);
        if (st[i].error != PROUST_OK)
            wait_fail("group: status.error", a->first + i, st[i].error);
        if (!atomic_load(&greqs[a->first + i].completed) ||
            atomic_load(&ticks) < greqs[a->first + i].target)
            wait_fail("group: returned before completion", a->first + i, 0);
    }
    return NULL;
}

void test_group(void)
{
    TU_PHASE("group sources");
    static struct src_state g;
    memset(&g, 0, sizeof g);
    struct proust_ptask_desc d = {.name = "group",
                                  .poll = never_poll_cb, /* group is preferred */
                                  .group = group_cb,
                                  .fd = -1,
                                  .frequency_hz = 2000,
                                  .arg = &g};
    proust_ptask_t *t;
    CHECK(proust_ptask_register(S, &d, &t));
    atomic_store(&g.task, t);
    atomic_store(&ticks, 0);
    atomic_store(&group_items, 0);
    int max_target = 0;
    for (int i = 0; i < NG; i++) {
        greqs[i].target = 5 + (i * 53) % 150;
        if (greqs[i].target > max_target)
            max_target = greqs[i].target;
        atomic_store(&greqs[i].completed, 0);
        greqs[i].src = &g;
        CHECK(proust_request_create(S, t, &greqs[i], &greqs[i].handle));
        atomic_store(&group_items, i + 1); /* the callback may look at it now */
    }
    atomic_store(&wait_errors, 0);
    producer_start(max_target);
    pthread_t th[3];
    struct gw_arg a[3] = {{0, 4}, {4, 4}, {8, 4}};
    for (int k = 0; k < 3; k++)
        EXPECT(pthread_create(&th[k], NULL, group_waiter, &a[k]) == 0, "create");
    for (int k = 0; k < 3; k++)
        pthread_join(th[k], NULL);
    double done = tu_now();
    producer_join();
    EXPECT(atomic_load(&wait_errors) == 0, "%d failure(s) (above)", atomic_load(&wait_errors));
    EXPECT(done - atomic_load(&last_tick_time) < 1.0, "group requests done %.3f s late",
           done - atomic_load(&last_tick_time));
    EXPECT(atomic_load(&g.overlaps) == 0, "group callback ran concurrently with itself %d "
           "time(s)", atomic_load(&g.overlaps));
    EXPECT(atomic_load(&g.poll_calls) == 0,
           "the poll callback ran %ld time(s) although a group callback was given (documented: "
           "group preferred)", atomic_load(&g.poll_calls));
    EXPECT(atomic_load(&g.bad) == 0, "%d bad group callback(s)", atomic_load(&g.bad));
    EXPECT(atomic_load(&g.completions) == NG, "%d completions", atomic_load(&g.completions));
    CHECK(proust_ptask_unregister(&t));
}

/* ---------------------------------------------------------------- always */
void test_always(void)
{
    TU_PHASE("ALWAYS and idle sources");
    static struct src_state idle, always;
    memset(&idle, 0, sizeof idle);
    memset(&always, 0, sizeof always);
    struct proust_ptask_desc di = {.name = "idle", .group = counting_group_cb, .fd = -1,
                                   .arg = &idle};
    struct proust_ptask_desc da = {.name = "always", .group = counting_group_cb, .fd = -1,
                                   .flags = PROUST_PTASK_ALWAYS, .arg = &always};
    proust_ptask_t *ti, *ta;
    CHECK(proust_ptask_register(S, &di, &ti));
    CHECK(proust_ptask_register(S, &da, &ta));
    for (int i = 0; i < 200; i++)
        CHECK(proust_progress(S));
    tu_sleep_ms(20);
    CHECK(proust_ptask_unregister(&ti));
    CHECK(proust_ptask_unregister(&ta));
    EXPECT(atomic_load(&idle.calls) == 0,
           "a source with no pending request and no PROUST_PTASK_ALWAYS was polled %ld times",
           atomic_load(&idle.calls));
    EXPECT(atomic_load(&always.calls) >= 20,
           "a PROUST_PTASK_ALWAYS source was polled %ld times by 200 proust_progress calls",
           atomic_load(&always.calls));
    EXPECT(atomic_load(&always.overlaps) == 0, "ALWAYS source polled concurrently");
    /* unregistered: never called again */
    long before = atomic_load(&always.calls);
    for (int i = 0; i < 100; i++)
        CHECK(proust_progress(S));
    tu_sleep_ms(10);
    EXPECT(atomic_load(&always.calls) == before,
           "an unregistered source was polled %ld more times", atomic_load(&always.calls) - before);
}
