/*
 * ptask_wakeup.c — what wakes a thread asleep in a wait on a source's
 * request when polling alone could not be prompt (cases fd,
 * block_callback).
 *
 *  fd              a pipe as the source's fd (frequency 0.2 Hz): a byte
 *                  written 100 ms after the waiter went to sleep wakes it
 *                  in < 1 s; with two waiters and two bytes too.
 *  block_callback  a source with a block callback and no fd (0.2 Hz): the
 *                  engine sleeps in the callback, which returns when the
 *                  event comes; the waiter wakes in < 1 s.
 */
#include <errno.h>
#include <fcntl.h>

#include "ptask.h"

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

void test_fd(void)
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

void test_block_cb(void)
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
