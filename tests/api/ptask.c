/*
 * ptask — the polling-task API: event sources registered by the
 * application, requests they complete, and the uniform wait on them
 * (1 or 2 processes; every PROUST_PROGRESS / PROUST_LOCKING mode).
 *
 *  info      proust_progress_info matches the environment.
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
 *            (poll never runs). A source without PROUST_PTASK_ALWAYS and
 *            nothing pending is never polled; one with it is.
 *  fd        a pipe as the source's fd (frequency 0.2 Hz: polling alone
 *            could not be prompt): a byte written 100 ms after the waiter
 *            went to sleep wakes it in < 1 s; with two waiters and two
 *            bytes too.
 *  user      proust_request_create with no source: proust_request_complete
 *            from another thread wakes the thread blocked in proust_wait,
 *            with the status given; a request on a source completed from
 *            outside its callbacks; request monitors; a request freed while
 *            pending is completed by its source and released.
 *  comm      (2 processes) a group callback posts a send to the peer.
 *  errors    invalid registrations, unregister while busy, completing twice
 *            or completing a communication request, user data.
 *  many      (--test=many, a fresh session) registering more than 60 sources
 *            ends in PROUST_ERR_BUSY and nothing breaks; they all unregister.
 *  reregister (--test=reregister) one source registered and unregistered
 *            200 times in a row: each registration must succeed.
 *
 * --expect-init-fail: proust_init must fail with PROUST_ERR_INVALID (a bad
 * PROUST_PROGRESS / PROUST_LOCKING / PROUST_SPIN_US value); after the
 * variables are removed, proust_init must succeed.
 */
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "test_util.h"

static proust_session_t *S;
static proust_progress_info_t info;

/* ---------------------------------------------------------------- ticks */
static _Atomic int ticks;
static _Atomic int producer_stop;
static _Atomic double last_tick_time;
static int tick_max;

static void *producer_main(void *arg)
{
    (void)arg;
    while (!atomic_load(&producer_stop) && atomic_load(&ticks) < tick_max) {
        tu_sleep_ms(1);
        if (atomic_fetch_add(&ticks, 1) + 1 == tick_max)
            atomic_store(&last_tick_time, tu_now());
    }
    return NULL;
}

static pthread_t producer;
static void producer_start(int max)
{
    atomic_store(&ticks, 0);
    atomic_store(&producer_stop, 0);
    atomic_store(&last_tick_time, 0.0);
    tick_max = max;
    EXPECT(pthread_create(&producer, NULL, producer_main, NULL) == 0, "pthread_create");
}

static void producer_join(void)
{
    pthread_join(producer, NULL);
}

/* ---------------------------------------------------------------- info */
static void test_info(void)
{
    TU_PHASE("info");
    const char *mode = getenv("PROUST_PROGRESS");
    const char *locking = getenv("PROUST_LOCKING");
    const char *spin = getenv("PROUST_SPIN_US");
    const char *nthreads = getenv("PROUST_PROGRESS_THREADS");
    if (!mode || strcmp(mode, "auto") == 0) {
        /* auto: a thread only where the node has more usable cores than
         * ranks of the job */
        cpu_set_t set;
        int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        const char *ls = getenv("PROUST_LOCAL_SIZE");
        int local = ls ? atoi(ls) : 1;
        mode = usable > (local > 0 ? local : 1) ? "thread" : "block";
        EXPECT(info.mode_reason && strncmp(info.mode_reason, "auto", 4) == 0,
               "mode chosen by auto but the reason says '%s'",
               info.mode_reason ? info.mode_reason : "(null)");
    }
    if (!locking)
        locking = "fine";
    EXPECT(info.mode && strcmp(info.mode, mode) == 0, "info.mode %s, PROUST_PROGRESS %s",
           info.mode ? info.mode : "(null)", mode);
    EXPECT(info.locking && strcmp(info.locking, locking) == 0,
           "info.locking %s, PROUST_LOCKING %s", info.locking ? info.locking : "(null)",
           locking);
    if (strcmp(mode, "thread") == 0) {
        EXPECT(info.threads >= 1, "thread mode with %d progress threads", info.threads);
        if (nthreads && atoi(nthreads) > 0)
            EXPECT(info.threads == atoi(nthreads),
                   "PROUST_PROGRESS_THREADS=%s but %d thread(s) run", nthreads, info.threads);
    } else {
        EXPECT(info.threads == 0, "%s mode with %d progress threads", mode, info.threads);
    }
    if (strcmp(mode, "poll") != 0) {
        if (spin && strcmp(spin, "auto") != 0)
            EXPECT(info.spin_us == atof(spin), "PROUST_SPIN_US=%s, info.spin_us %g", spin,
                   info.spin_us);
        else
            EXPECT(info.spin_us >= 5.0 && info.spin_us <= 200.0,
                   "auto spin window %g us, documented bounds 5-200", info.spin_us);
    }
    EXPECT(info.spin_reason != NULL, "no spin_reason");
    EXPECT(info.wait_boost != NULL && info.wait_boost[0], "no wait_boost");
    if (info.spin_us < 0)
        EXPECT(strstr(info.wait_boost, "never sleep") != NULL, "poll mode boost: %s",
               info.wait_boost);
    CHECK_RC(proust_progress_info(S, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_progress_info(NULL, &info), PROUST_ERR_STATE);
}

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

struct preq {
    int target;
    _Atomic int completed;
    _Atomic long polls;
    struct src_state *src;
    proust_request_t *handle; /* for group callbacks */
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

static void test_poll(void)
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

static void test_group(void)
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

    TU_PHASE("group: ALWAYS and idle sources");
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

/* ---------------------------------------------------------------- fd */
struct fd_state {
    int rfd, wfd;
    _Atomic int inside, overlaps, bad;
    _Atomic long calls;
};

static int fd_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    struct fd_state *f = arg;
    if (atomic_exchange(&f->inside, 1))
        atomic_fetch_add(&f->overlaps, 1);
    atomic_fetch_add(&f->calls, 1);
    char c;
    int ev = 0;
    ssize_t n = read(f->rfd, &c, 1);
    if (n == 1) {
        if (proust_request_complete(req, PROUST_OK) != PROUST_OK)
            atomic_fetch_add(&f->bad, 1);
        ev = 1;
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        atomic_fetch_add(&f->bad, 1);
    }
    atomic_store(&f->inside, 0);
    return ev;
}

struct writer_arg {
    int fd;
    int delays_ms[2];
    int nbytes;
    _Atomic double when[2];
};

static void *writer_main(void *argp)
{
    struct writer_arg *w = argp;
    for (int i = 0; i < w->nbytes; i++) {
        tu_sleep_ms(w->delays_ms[i]);
        atomic_store(&w->when[i], tu_now());
        char c = 'x';
        if (write(w->fd, &c, 1) != 1)
            TU_FAIL("write to the pipe: %s", strerror(errno));
    }
    return NULL;
}

struct fdw_arg {
    proust_request_t *req;
    _Atomic double returned;
    int rc;
};

static void *fd_waiter(void *argp)
{
    struct fdw_arg *a = argp;
    proust_status_t st;
    a->rc = proust_wait(&a->req, &st);
    atomic_store(&a->returned, tu_now());
    return NULL;
}

static void test_fd(void)
{
    TU_PHASE("fd source");
    static struct fd_state f;
    memset(&f, 0, sizeof f);
    int p[2];
    EXPECT(pipe(p) == 0, "pipe: %s", strerror(errno));
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    f.rfd = p[0];
    f.wfd = p[1];
    struct proust_ptask_desc d = {.name = "pipe",
                                  .poll = fd_poll_cb,
                                  .fd = p[0],
                                  .frequency_hz = 0.2, /* every 5 s: only the fd is prompt */
                                  .arg = &f};
    proust_ptask_t *t;
    CHECK(proust_ptask_register(S, &d, &t));

    /* one waiter (this thread), one byte after 100 ms */
    proust_request_t *r;
    CHECK(proust_request_create(S, t, NULL, &r));
    EXPECT(proust_request_user_data(r) == NULL, "user data of a request created with NULL");
    struct writer_arg w = {.fd = p[1], .delays_ms = {100, 0}, .nbytes = 1};
    pthread_t wt;
    EXPECT(pthread_create(&wt, NULL, writer_main, &w) == 0, "create");
    proust_status_t st;
    CHECK(proust_wait(&r, &st));
    double back = tu_now();
    pthread_join(wt, NULL);
    double lat = back - atomic_load(&w.when[0]);
    EXPECT(lat >= 0, "the wait on the pipe returned %.3f s before the byte was written", -lat);
    EXPECT(lat < 1.0, "a waiter blocked on an fd source woke %.3f s after the fd became "
           "readable (expected < 1 s)", lat);
    EXPECT(st.error == PROUST_OK, "status %s", proust_error_name(st.error));
    double lat1 = lat;

    /* two waiting threads, two bytes at 100 ms and 300 ms */
    struct fdw_arg a[2] = {0};
    CHECK(proust_request_create(S, t, NULL, &a[0].req));
    CHECK(proust_request_create(S, t, NULL, &a[1].req));
    pthread_t th[2];
    for (int k = 0; k < 2; k++)
        EXPECT(pthread_create(&th[k], NULL, fd_waiter, &a[k]) == 0, "create");
    struct writer_arg w2 = {.fd = p[1], .delays_ms = {100, 200}, .nbytes = 2};
    EXPECT(pthread_create(&wt, NULL, writer_main, &w2) == 0, "create");
    pthread_join(wt, NULL);
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < 2; k++) {
        CHECK_RC(a[k].rc, PROUST_OK);
        EXPECT(a[k].req == NULL, "handle not cleared");
    }
    double first = atomic_load(&a[0].returned), second = atomic_load(&a[1].returned);
    if (second < first) {
        double x = first;
        first = second;
        second = x;
    }
    double l1 = first - atomic_load(&w2.when[0]), l2 = second - atomic_load(&w2.when[1]);
    EXPECT(l1 >= 0 && l1 < 1.0, "first of two fd waiters woke %.3f s after its byte", l1);
    EXPECT(l2 >= 0 && l2 < 1.0, "second of two fd waiters woke %.3f s after its byte", l2);
    EXPECT(atomic_load(&f.overlaps) == 0, "fd callback ran concurrently with itself");
    EXPECT(atomic_load(&f.bad) == 0, "fd callback failures");
    CHECK(proust_ptask_unregister(&t));
    close(p[0]);
    close(p[1]);
    if (tu_rank == 0)
        printf("ptask fd: woke %.1f ms after the byte; two waiters %.1f / %.1f ms\n", lat1 * 1e3,
               l1 * 1e3, l2 * 1e3);
}

/* ---------------------------------------------------------------- user requests */
struct late_arg {
    proust_request_t *req;
    int delay_ms;
    int status;
    _Atomic double when;
    int rc;
};

static void *late_completer(void *argp)
{
    struct late_arg *a = argp;
    tu_sleep_ms(a->delay_ms);
    atomic_store(&a->when, tu_now());
    a->rc = proust_request_complete(a->req, a->status);
    return NULL;
}

struct cb_rec {
    _Atomic int calls;
    int error;
};

static void on_user_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct cb_rec *c = arg;
    c->error = st->error;
    atomic_fetch_add(&c->calls, 1);
}

static int slow_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)arg;
    struct preq *p = proust_request_user_data(req);
    if (p && atomic_load(&ticks) >= p->target) {
        atomic_store(&p->completed, 1);
        proust_request_complete(req, PROUST_OK);
        return 1;
    }
    return 0;
}

static int idle_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)req;
    (void)arg;
    return 0;
}

static void test_user(void)
{
    TU_PHASE("user requests without a source");
    int marker = 42;
    proust_request_t *r;
    CHECK(proust_request_create(S, NULL, &marker, &r));
    EXPECT(proust_request_user_data(r) == &marker, "user data %p, expected %p",
           proust_request_user_data(r), (void *)&marker);
    int flag = 1;
    CHECK(proust_test(&r, &flag, NULL));
    EXPECT(flag == 0 && r != NULL, "a request nobody completed tests complete");
    struct late_arg a = {.req = r, .delay_ms = 100, .status = PROUST_ERR_TIMEOUT};
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, late_completer, &a) == 0, "create");
    proust_status_t st;
    memset(&st, 0, sizeof st);
    CHECK_RC(proust_wait(&r, &st), PROUST_ERR_TIMEOUT);
    double back = tu_now();
    pthread_join(th, NULL);
    CHECK_RC(a.rc, PROUST_OK);
    EXPECT(r == NULL, "handle not cleared");
    EXPECT(st.error == PROUST_ERR_TIMEOUT, "status.error %s, expected the status given to "
           "proust_request_complete", proust_error_name(st.error));
    double lat = back - atomic_load(&a.when);
    EXPECT(lat >= 0 && lat < 1.0, "waiter woke %.3f s after proust_request_complete", lat);

    TU_PHASE("user request: monitor, complete, test");
    struct cb_rec c = {0};
    CHECK(proust_request_create(S, NULL, NULL, &r));
    CHECK(proust_request_monitor(r, on_user_done, &c));
    EXPECT(atomic_load(&c.calls) == 0, "monitor callback before completion");
    CHECK(proust_request_complete(r, PROUST_OK));
    CHECK_RC(proust_request_complete(r, PROUST_OK), PROUST_ERR_STATE);
    EXPECT(atomic_load(&c.calls) == 1, "monitor callback ran %d times after complete returned",
           atomic_load(&c.calls));
    CHECK(proust_test(&r, &flag, &st));
    EXPECT(flag == 1 && r == NULL, "completed user request: flag %d", flag);
    EXPECT(atomic_load(&c.calls) == 1 && c.error == PROUST_OK, "callback %d times, error %s",
           atomic_load(&c.calls), proust_error_name(c.error));

    TU_PHASE("user request on a source, completed from outside its callbacks");
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "idle", .poll = idle_poll_cb, .fd = -1};
    CHECK(proust_ptask_register(S, &d, &t));
    CHECK(proust_request_create(S, t, NULL, &r));
    CHECK_RC(proust_ptask_unregister(&t), PROUST_ERR_BUSY);
    EXPECT(t != NULL, "a refused unregister cleared the handle");
    struct late_arg b = {.req = r, .delay_ms = 100, .status = PROUST_OK};
    EXPECT(pthread_create(&th, NULL, late_completer, &b) == 0, "create");
    CHECK(proust_wait(&r, &st));
    back = tu_now();
    pthread_join(th, NULL);
    CHECK_RC(b.rc, PROUST_OK);
    lat = back - atomic_load(&b.when);
    EXPECT(lat >= 0 && lat < 1.0, "waiter on a source woke %.3f s after an outside completion",
           lat);
    CHECK(proust_ptask_unregister(&t));
    EXPECT(t == NULL, "unregister left the handle");

    TU_PHASE("user request freed while pending");
    static struct preq fp;
    atomic_store(&ticks, 0);
    fp.target = 30;
    atomic_store(&fp.completed, 0);
    struct proust_ptask_desc ds = {.name = "slow", .poll = slow_poll_cb, .fd = -1};
    CHECK(proust_ptask_register(S, &ds, &t));
    CHECK(proust_request_create(S, t, &fp, &r));
    struct cb_rec fc = {0};
    CHECK(proust_request_monitor(r, on_user_done, &fc));
    CHECK(proust_request_free(&r));
    EXPECT(r == NULL, "request_free left the handle");
    producer_start(fp.target);
    double deadline = tu_now() + 5;
    int rc;
    while ((rc = proust_ptask_unregister(&t)) == PROUST_ERR_BUSY && tu_now() < deadline) {
        CHECK(proust_progress(S));
        tu_sleep_ms(1);
    }
    producer_join();
    CHECK_RC(rc, PROUST_OK);
    EXPECT(atomic_load(&fp.completed) == 1, "the freed request was never completed");
    /* its callback runs right after the source let go of it */
    deadline = tu_now() + 5;
    while (atomic_load(&fc.calls) == 0 && tu_now() < deadline)
        CHECK(proust_progress(S));
    EXPECT(atomic_load(&fc.calls) == 1, "the freed request's callback ran %d times",
           atomic_load(&fc.calls));
}

/* ---------------------------------------------------------------- comm */
#define TAG_COMM 0x5150
static int comm_val;
static proust_request_t *comm_user_req;
static _Atomic int comm_state; /* 0 pending, 1 done, <0 error */

static int comm_group_cb(proust_ptask_t *t, void *arg)
{
    (void)t;
    (void)arg;
    if (atomic_load(&comm_state) != 0 || atomic_load(&ticks) < 20)
        return 0;
    proust_request_t *sr;
    int rc = proust_isend(S, &comm_val, sizeof comm_val, 1 - tu_rank, TAG_COMM, &sr);
    if (rc == PROUST_OK)
        rc = proust_request_free(&sr);
    atomic_store(&comm_state, rc == PROUST_OK ? 1 : rc);
    proust_request_complete(comm_user_req, rc);
    return 1;
}

static void test_comm(void)
{
    TU_PHASE("comm: a callback posts a send");
    tu_barrier(S);
    comm_val = 1000 + tu_rank;
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "sender", .group = comm_group_cb, .fd = -1};
    CHECK(proust_ptask_register(S, &d, &t));
    atomic_store(&comm_state, 0);
    atomic_store(&ticks, 0);
    CHECK(proust_request_create(S, t, NULL, &comm_user_req));
    proust_request_t *r = comm_user_req;
    producer_start(20);
    CHECK(proust_wait(&r, NULL));
    producer_join();
    EXPECT(atomic_load(&comm_state) == 1, "isend from a group callback: %s",
           proust_error_name(atomic_load(&comm_state)));
    int v = 0;
    CHECK(proust_recv(S, &v, sizeof v, 1 - tu_rank, TAG_COMM, PROUST_TAG_MASK_FULL, NULL));
    EXPECT(v == 1000 + (1 - tu_rank), "got %d from the peer's callback", v);
    CHECK(proust_ptask_unregister(&t));
    tu_barrier(S);
}

/* ---------------------------------------------------------------- errors */
static void test_errors(void)
{
    TU_PHASE("errors");
    proust_ptask_t *t = NULL;
    struct proust_ptask_desc ok = {.name = "e", .poll = idle_poll_cb, .fd = -1};
    struct proust_ptask_desc d;
    CHECK_RC(proust_ptask_register(S, NULL, &t), PROUST_ERR_INVALID);
    CHECK_RC(proust_ptask_register(S, &ok, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_ptask_register(NULL, &ok, &t), PROUST_ERR_STATE);
    d = ok;
    d.poll = NULL;
    d.group = NULL;
    CHECK_RC(proust_ptask_register(S, &d, &t), PROUST_ERR_INVALID);
    d = ok;
    d.frequency_hz = -1;
    CHECK_RC(proust_ptask_register(S, &d, &t), PROUST_ERR_INVALID);
    d = ok;
    d.flags = 0x80u;
    CHECK_RC(proust_ptask_register(S, &d, &t), PROUST_ERR_INVALID);
    d = ok;
    d.flags = PROUST_PTASK_ALWAYS | 0x2u;
    CHECK_RC(proust_ptask_register(S, &d, &t), PROUST_ERR_INVALID);
    EXPECT(t == NULL, "a failed register wrote the handle");

    CHECK_RC(proust_ptask_unregister(NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_ptask_unregister(&t), PROUST_ERR_INVALID);

    /* unregister while a request is pending */
    CHECK(proust_ptask_register(S, &ok, &t));
    proust_request_t *r, *r2;
    CHECK_RC(proust_request_create(S, t, NULL, NULL), PROUST_ERR_INVALID);
    CHECK_RC(proust_request_create(NULL, t, NULL, &r), PROUST_ERR_STATE);
    CHECK(proust_request_create(S, t, &ok, &r));
    CHECK(proust_request_create(S, t, NULL, &r2));
    EXPECT(proust_request_user_data(r) == &ok, "user data");
    CHECK_RC(proust_ptask_unregister(&t), PROUST_ERR_BUSY);
    CHECK(proust_request_complete(r, PROUST_OK));
    CHECK_RC(proust_request_complete(r, PROUST_OK), PROUST_ERR_STATE);
    CHECK_RC(proust_request_complete(r, PROUST_ERR_CANCELED), PROUST_ERR_STATE);
    CHECK_RC(proust_ptask_unregister(&t), PROUST_ERR_BUSY); /* r2 still pending */
    CHECK(proust_request_complete(r2, PROUST_ERR_CANCELED));
    proust_status_t st;
    CHECK(proust_wait(&r, &st));
    EXPECT(st.error == PROUST_OK, "first completion's status wins: %s",
           proust_error_name(st.error));
    CHECK_RC(proust_wait(&r2, &st), PROUST_ERR_CANCELED);
    CHECK(proust_ptask_unregister(&t));
    EXPECT(t == NULL, "handle");
    CHECK_RC(proust_request_complete(NULL, PROUST_OK), PROUST_ERR_INVALID);

    /* completing a communication request */
    int v = 0;
    CHECK(proust_irecv(S, &v, sizeof v, tu_rank, 0x7777, PROUST_TAG_MASK_FULL, &r));
    CHECK_RC(proust_request_complete(r, PROUST_OK), PROUST_ERR_INVALID);
    CHECK(proust_cancel(r));
    CHECK_RC(proust_wait(&r, &st), PROUST_ERR_CANCELED);
    EXPECT(st.error == PROUST_ERR_CANCELED, "a receive that refused proust_request_complete "
           "then canceled: %s", proust_error_name(st.error));
    int x = 5;
    proust_request_t *sr;
    CHECK(proust_isend(S, &x, sizeof x, tu_rank, 0x7778, &sr));
    CHECK_RC(proust_request_complete(sr, PROUST_OK), PROUST_ERR_INVALID);
    CHECK(proust_recv(S, &v, sizeof v, tu_rank, 0x7778, PROUST_TAG_MASK_FULL, NULL));
    CHECK(proust_wait(&sr, &st));
    EXPECT(v == 5 && st.error == PROUST_OK, "self message after a refused complete: %d %s", v,
           proust_error_name(st.error));
}

/* ---------------------------------------------------------------- many */
static int nop_group_cb(proust_ptask_t *t, void *arg)
{
    (void)t;
    (void)arg;
    return 0;
}

static void test_many(void)
{
    TU_PHASE("many sources");
    enum { TRY = 100 };
    proust_ptask_t *t[TRY] = {0};
    int n = 0, rc = PROUST_OK;
    for (int i = 0; i < TRY; i++) {
        struct proust_ptask_desc d = {.name = "many", .group = nop_group_cb, .fd = -1};
        rc = proust_ptask_register(S, &d, &t[n]);
        if (rc != PROUST_OK)
            break;
        n++;
    }
    CHECK_RC(rc, PROUST_ERR_BUSY);
    EXPECT(n >= 60, "only %d sources registered, documented: 60", n);
    /* the engine still works with a full table */
    proust_request_t *r;
    CHECK(proust_request_create(S, t[n - 1], NULL, &r));
    CHECK(proust_request_complete(r, PROUST_OK));
    CHECK(proust_wait(&r, NULL));
    int v = 0, x = 9;
    CHECK(proust_send(S, &x, sizeof x, tu_rank, 0x8888));
    CHECK(proust_recv(S, &v, sizeof v, tu_rank, 0x8888, PROUST_TAG_MASK_FULL, NULL));
    EXPECT(v == 9, "self message with a full source table: %d", v);
    for (int i = 0; i < n; i++)
        CHECK(proust_ptask_unregister(&t[i]));
    proust_ptask_t *again = NULL;
    struct proust_ptask_desc d = {.name = "again", .group = nop_group_cb, .fd = -1};
    int rc2 = proust_ptask_register(S, &d, &again);
    if (rc2 == PROUST_OK)
        CHECK(proust_ptask_unregister(&again));
    if (tu_rank == 0)
        printf("ptask many: %d sources registered, the next one %s; after unregistering them "
               "all, registering %s\n",
               n, proust_error_name(rc), proust_error_name(rc2));
}

/* ---------------------------------------------------------------- main */
static int expect_init_fail(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    tu_watchdog(30);
    proust_session_t *s = NULL;
    TU_PHASE("proust_init with a bad progress setting");
    int rc = proust_init(&s);
    if (rc == PROUST_OK)
        TU_FAIL("proust_init succeeded with PROUST_PROGRESS=%s PROUST_LOCKING=%s "
                "PROUST_SPIN_US=%s",
                getenv("PROUST_PROGRESS") ? getenv("PROUST_PROGRESS") : "(unset)",
                getenv("PROUST_LOCKING") ? getenv("PROUST_LOCKING") : "(unset)",
                getenv("PROUST_SPIN_US") ? getenv("PROUST_SPIN_US") : "(unset)");
    CHECK_RC(rc, PROUST_ERR_INVALID);
    EXPECT(s == NULL, "a failed proust_init wrote the session");
    TU_PHASE("proust_init again with the defaults");
    unsetenv("PROUST_PROGRESS");
    unsetenv("PROUST_LOCKING");
    unsetenv("PROUST_SPIN_US");
    CHECK(proust_init(&s));
    tu_rank = proust_rank(s);
    tu_size = proust_size(s);
    CHECK(proust_progress_info(s, &info));
    EXPECT(strcmp(info.mode, "thread") == 0 && strcmp(info.locking, "fine") == 0,
           "defaults after a failed init: %s %s", info.mode, info.locking);
    CHECK(proust_finalize(s));
    printf("ptask: proust_init refused the setting (PROUST_ERR_INVALID), then worked\n");
    return 0;
}

/* ---------------------------------------------------------------- background */
/* PROUST_PROGRESS=thread: "the background progress thread polls it too": a
 * request on a source completes while no application thread calls the
 * library. */
static void test_background(void)
{
    TU_PHASE("background polling of a source");
    static struct preq bp;
    atomic_store(&ticks, 0);
    bp.target = 50;
    atomic_store(&bp.completed, 0);
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "bg", .poll = slow_poll_cb, .fd = -1};
    CHECK(proust_ptask_register(S, &d, &t));
    tu_sleep_ms(100); /* the progress thread has nothing to do: it sleeps */
    proust_request_t *r;
    CHECK(proust_request_create(S, t, &bp, &r));
    struct cb_rec c = {0};
    CHECK(proust_request_monitor(r, on_user_done, &c));
    producer_start(bp.target);
    producer_join();
    tu_sleep_ms(300); /* no library call from here ... */
    int done = atomic_load(&c.calls);
    int completed = atomic_load(&bp.completed); /* ... to here */
    if (strcmp(info.mode, "thread") == 0) {
        EXPECT(completed == 1 && done == 1,
               "with PROUST_PROGRESS=thread a request on a source was not completed while the "
               "application made no library call for 300 ms (completed %d, callback %d)",
               completed, done);
    }
    CHECK(proust_wait(&r, NULL));
    CHECK(proust_ptask_unregister(&t));
}

/* A thread holds the wait set (blocked in a wait on a request only another
 * thread completes, 1.5 s later); meanwhile a second thread creates a
 * request on a source without fd (1 kHz) and waits on it: the source must
 * be polled at its frequency although the blocker went to sleep before
 * the source had anything pending. */
struct st_arg {
    double target_time, done_time;
    int rc;
};

static void *stale_second_waiter(void *argp)
{
    struct st_arg *a = argp;
    static struct preq sp;
    tu_sleep_ms(100); /* the first thread is asleep in the wait set */
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "late", .poll = slow_poll_cb, .fd = -1};
    a->rc = proust_ptask_register(S, &d, &t);
    if (a->rc != PROUST_OK)
        return NULL;
    atomic_store(&ticks, 0);
    sp.target = 20;
    atomic_store(&sp.completed, 0);
    proust_request_t *r;
    if ((a->rc = proust_request_create(S, t, &sp, &r)) != PROUST_OK)
        return NULL;
    producer_start(sp.target);
    a->rc = proust_wait(&r, NULL);
    a->done_time = tu_now();
    producer_join();
    a->target_time = atomic_load(&last_tick_time);
    if (a->rc == PROUST_OK)
        a->rc = proust_ptask_unregister(&t);
    return NULL;
}

static void test_stale_timeout(void)
{
    TU_PHASE("a source gets pending while another thread holds the wait set");
    proust_request_t *r;
    CHECK(proust_request_create(S, NULL, NULL, &r));
    struct late_arg a = {.req = r, .delay_ms = 1500, .status = PROUST_OK};
    struct st_arg b = {0};
    pthread_t ta, tb;
    EXPECT(pthread_create(&ta, NULL, late_completer, &a) == 0, "create");
    EXPECT(pthread_create(&tb, NULL, stale_second_waiter, &b) == 0, "create");
    CHECK(proust_wait(&r, NULL));
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK_RC(b.rc, PROUST_OK);
    double lat = b.done_time - b.target_time;
    if (tu_rank == 0)
        printf("ptask stale timeout: request completed %.3f s after its target\n", lat);
    EXPECT(lat < 1.0,
           "a request on a 1 kHz source completed %.3f s after its target was reached: the "
           "source was not polled while another thread held the wait set (only when that "
           "thread woke up)", lat);
}

/* ---------------------------------------------------------------- frequency */
/* "frequency_hz: poll at least this often while requests are pending and
 * threads sleep". One thread waits 500 ms on a request nobody but a timer
 * thread completes, while a source without fd has a request pending. */
/* Polls that follow one another within a quarter period come from one
 * wake-up (the wait's last look, then its own poll): counted once, so
 * that two polls per millisecond timeout never pass for 2 kHz. */
static _Atomic long freq_polls;
static _Atomic double freq_last, freq_min_gap;
static int count_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)req;
    (void)arg;
    double now = tu_now();
    if (now - atomic_load(&freq_last) >= atomic_load(&freq_min_gap)) {
        atomic_fetch_add(&freq_polls, 1);
        atomic_store(&freq_last, now);
    }
    return 0;
}

/* What the kernel gives a thread that sleeps 1/hz at a time, measured in
 * the same window as the engine (this VM's 200 us sleeps take 0.2-4 ms
 * depending on the host, from one second to the next): the engine cannot
 * poll a fd-less source faster than its own timed sleeps return. */
struct kernel_sleeper {
    double hz;
    _Atomic int stop;
    long wakes;
};
static void *kernel_sleeper_main(void *arg)
{
    struct kernel_sleeper *k = arg;
    struct timespec ts = {0, (long)(1e9 / k->hz)};
    while (!atomic_load(&k->stop)) {
        nanosleep(&ts, NULL);
        k->wakes++;
    }
    return NULL;
}

/* One window: the rates at which the source was polled and at which the
 * kernel's sleeps returned, in Hz. */
static void measure_frequency(double hz, double *rate, double *kernel)
{
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "freq", .poll = count_poll_cb, .fd = -1,
                                  .frequency_hz = hz};
    CHECK(proust_ptask_register(S, &d, &t));
    proust_request_t *pending, *r;
    CHECK(proust_request_create(S, t, NULL, &pending));
    CHECK(proust_request_create(S, NULL, NULL, &r));
    struct late_arg a = {.req = r, .delay_ms = 500, .status = PROUST_OK};
    struct kernel_sleeper k = {.hz = hz};
    pthread_t th, tk;
    tu_sleep_ms(20);
    atomic_store(&freq_min_gap, 0.25 / hz);
    atomic_store(&freq_polls, 0);
    double t0 = tu_now();
    EXPECT(pthread_create(&tk, NULL, kernel_sleeper_main, &k) == 0, "create");
    EXPECT(pthread_create(&th, NULL, late_completer, &a) == 0, "create");
    CHECK(proust_wait(&r, NULL));
    double dt = tu_now() - t0;
    long polls = atomic_load(&freq_polls);
    atomic_store(&k.stop, 1);
    pthread_join(tk, NULL);
    pthread_join(th, NULL);
    CHECK(proust_request_complete(pending, PROUST_OK));
    CHECK(proust_wait(&pending, NULL));
    CHECK(proust_ptask_unregister(&t));
    *rate = (double)polls / dt;
    *kernel = (double)k.wakes / dt;
    if (tu_rank == 0)
        printf("ptask frequency: %.0f Hz asked, %ld polls in %.3f s (%.0f Hz; the kernel's "
               "sleeps: %.0f Hz)\n", hz, polls, dt, *rate, *kernel);
}

static void test_frequency(double hz)
{
    TU_PHASE("frequency");
    /* Half of what was asked, or of what the kernel's sleeps allowed in the
     * same window when that is less (a source at 5 kHz woken by
     * millisecond timeouts: ~0.3x where sleeps are fine-grained). Three
     * windows: a loaded 2-core machine can starve the engine in one of
     * them; a sleep really too long fails all three. */
    double best = 0, kernel_best = 0;
    for (int attempt = 0; attempt < 3; attempt++) {
        double rate, kernel;
        measure_frequency(hz, &rate, &kernel);
        double want = 0.5 * (kernel < hz ? kernel : hz);
        if (rate >= want)
            return;
        if (rate > best)
            best = rate, kernel_best = kernel;
        if (tu_rank == 0)
            printf("ptask frequency: window %d below %.0f Hz\n", attempt, want);
    }
    EXPECT(0, "a source asking for %.0f Hz was polled at %.0f Hz at best (3 windows) while a "
              "thread slept in a wait; the kernel's own sleeps ran at %.0f Hz",
           hz, best, kernel_best);
}

/* ---------------------------------------------------------------- block callback */
/* A source with a blocking call and no fd, polled at 0.2 Hz: the engine
 * sleeps in its block callback, which returns when the event comes. */
static pthread_mutex_t bc_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bc_cv = PTHREAD_COND_INITIALIZER;
static int bc_event;
static _Atomic long bc_blocks;

static int bc_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)arg;
    pthread_mutex_lock(&bc_mu);
    int ev = bc_event;
    bc_event = 0;
    pthread_mutex_unlock(&bc_mu);
    if (ev)
        proust_request_complete(req, PROUST_OK);
    return ev;
}

static int bc_block_cb(proust_ptask_t *t, void *arg, long timeout_us)
{
    (void)t;
    (void)arg;
    atomic_fetch_add(&bc_blocks, 1);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (timeout_us < 0 || timeout_us > 10000000)
        timeout_us = 10000000;
    ts.tv_sec += timeout_us / 1000000;
    ts.tv_nsec += (timeout_us % 1000000) * 1000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&bc_mu);
    while (!bc_event && pthread_cond_timedwait(&bc_cv, &bc_mu, &ts) == 0)
        ;
    int ev = bc_event;
    pthread_mutex_unlock(&bc_mu);
    return ev;
}

static _Atomic double bc_when;
static void *bc_signaller(void *arg)
{
    (void)arg;
    tu_sleep_ms(100);
    pthread_mutex_lock(&bc_mu);
    bc_event = 1;
    atomic_store(&bc_when, tu_now());
    pthread_cond_broadcast(&bc_cv);
    pthread_mutex_unlock(&bc_mu);
    return NULL;
}

static void test_block_cb(void)
{
    TU_PHASE("block callback");
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "cond", .poll = bc_poll_cb, .block = bc_block_cb,
                                  .fd = -1, .frequency_hz = 0.2};
    CHECK(proust_ptask_register(S, &d, &t));
    proust_request_t *r;
    CHECK(proust_request_create(S, t, NULL, &r));
    pthread_t th;
    EXPECT(pthread_create(&th, NULL, bc_signaller, NULL) == 0, "create");
    CHECK(proust_wait(&r, NULL));
    double lat = tu_now() - atomic_load(&bc_when);
    pthread_join(th, NULL);
    CHECK(proust_ptask_unregister(&t));
    if (tu_rank == 0)
        printf("ptask block callback: called %ld times, waiter woke %.3f s after the event\n",
               atomic_load(&bc_blocks), lat);
    EXPECT(lat < 1.0,
           "a source with a block callback (no fd, 0.2 Hz) woke its waiter %.3f s after the "
           "event; the block callback ran %ld times", lat, atomic_load(&bc_blocks));
}

/* ---------------------------------------------------------------- unregister in a callback */
/* The callback completes the source's last request, then unregisters the
 * source ("Returns once no thread is running its callbacks": not counting
 * the caller's own). */
static proust_ptask_t *_Atomic uc_task;
static _Atomic int uc_rc = 1;

static int uc_finish(proust_request_t *req)
{
    if (atomic_load(&ticks) < 10 || atomic_load(&uc_rc) != 1)
        return 0;
    proust_request_complete(req, PROUST_OK);
    proust_ptask_t *t = atomic_load(&uc_task);
    atomic_store(&uc_rc, proust_ptask_unregister(&t));
    return 1;
}

static proust_request_t *_Atomic uc_req;
static int uc_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)arg;
    return uc_finish(req);
}

static int uc_group_cb(proust_ptask_t *t, void *arg)
{
    (void)t;
    (void)arg;
    return uc_finish(atomic_load(&uc_req));
}

static void test_unregister_in_callback(int group)
{
    TU_PHASE(group ? "unregister from its group callback" : "unregister from its poll callback");
    atomic_store(&ticks, 0);
    atomic_store(&uc_rc, 1);
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "self-removing", .fd = -1};
    if (group)
        d.group = uc_group_cb;
    else
        d.poll = uc_poll_cb;
    CHECK(proust_ptask_register(S, &d, &t));
    atomic_store(&uc_task, t);
    proust_request_t *r;
    CHECK(proust_request_create(S, t, NULL, &r));
    atomic_store(&uc_req, r);
    producer_start(10);
    CHECK(proust_wait(&r, NULL));
    producer_join();
    /* the callback unregisters after completing: it may still be at it */
    double deadline = tu_now() + 5;
    while (atomic_load(&uc_rc) == 1 && tu_now() < deadline)
        tu_sleep_ms(1);
    CHECK_RC(atomic_load(&uc_rc), PROUST_OK);
}

/* Register and unregister one source at a time, many more times than the
 * table has slots: at most one is registered at any moment. */
static void test_reregister(void)
{
    TU_PHASE("reregister");
    int i, rc = PROUST_OK;
    for (i = 0; i < 200; i++) {
        proust_ptask_t *t = NULL;
        struct proust_ptask_desc d = {.name = "cycle", .group = nop_group_cb, .fd = -1};
        rc = proust_ptask_register(S, &d, &t);
        if (rc != PROUST_OK)
            break;
        CHECK(proust_ptask_unregister(&t));
    }
    EXPECT(rc == PROUST_OK,
           "registering a source failed with %s after %d register/unregister cycles, with no "
           "other source registered: unregistered sources keep their slot of the 60",
           proust_error_name(rc), i);
}

int main(int argc, char **argv)
{
    if (tu_has_arg(argc, argv, "--expect-init-fail"))
        return expect_init_fail();
    /* --test=all (default), many or reregister: the last two need a fresh
     * session, since an unregistered source keeps its slot */
    const char *which = tu_arg(argc, argv, "--test", "all");
    S = tu_init(60);
    CHECK(proust_progress_info(S, &info));
    if (tu_rank == 0)
        printf("ptask: %d process(es), mode %s, locking %s, %d thread(s), spin %.1f us\n",
               tu_size, info.mode, info.locking, info.threads, info.spin_us);
    if (strcmp(which, "many") == 0) {
        test_many();
    } else if (strcmp(which, "reregister") == 0) {
        test_reregister();
    } else if (strcmp(which, "background") == 0) {
        test_background();
    } else if (strcmp(which, "stale-timeout") == 0) {
        test_stale_timeout();
    } else if (strcmp(which, "frequency") == 0) {
        test_frequency(50);
        test_frequency(500);
    } else if (strcmp(which, "frequency-high") == 0) {
        test_frequency(5000);
    } else if (strcmp(which, "block-callback") == 0) {
        test_block_cb();
    } else if (strcmp(which, "unregister-in-poll") == 0) {
        test_unregister_in_callback(0);
    } else if (strcmp(which, "unregister-in-group") == 0) {
        tu_watchdog(10);
        test_unregister_in_callback(1);
    } else {
        test_info();
        test_poll();
        test_group();
        test_fd();
        test_user();
        if (tu_size == 2)
            test_comm();
        test_errors();
    }
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("ptask %s: ok\n", which);
    return 0;
}
