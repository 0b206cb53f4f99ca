/*
 * ptask_polling.c — sources polled while every application thread sleeps
 * or computes (cases background, stale_timeout, frequency_50hz,
 * frequency_500hz, frequency_5khz).
 *
 *  background       PROUST_PROGRESS=thread: the progress thread completes a
 *                   request on a source while the application makes no
 *                   library call.
 *  stale_timeout    a source that gets a pending request while another
 *                   thread holds the wait set is polled at its frequency.
 *  frequency_<f>    a source asking for f is polled at least half that
 *                   often (or half what the kernel's own sleeps allow)
 *                   while a thread sleeps in a wait.
 */
#include "ptask.h"

/* ---------------------------------------------------------------- background */
/* PROUST_PROGRESS=thread: "the background progress thread polls it too": a
 * request on a source completes while no application thread calls the
 * library. */
void test_background(void)
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

void test_stale_timeout(void)
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

void test_frequency_50hz(void)
{
    test_frequency(50);
}

void test_frequency_500hz(void)
{
    test_frequency(500);
}

void test_frequency_5khz(void)
{
    test_frequency(5000);
}
