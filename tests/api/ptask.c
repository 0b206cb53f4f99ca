/*
 * ptask — the polling-task API: event sources registered by the
 * application, requests they complete, and the uniform wait on them
 * (1 or 2 processes; every PROUST_PROGRESS / PROUST_LOCKING mode).
 *
 * One case a run (`api_ptask --help` lists them with what each checks;
 * tests/api.cmake runs each under the modes that matter). The cases live
 * in files by theme:
 *
 *  ptask.c            info, init_refused; the case table, main, what the
 *                     cases share (ptask.h)
 *  ptask_callbacks.c  poll, group, always: callbacks completing requests
 *                     that several threads wait on
 *  ptask_wakeup.c     fd, block_callback: what wakes a sleeping waiter
 *  ptask_requests.c   user_*, comm: requests the application completes
 *  ptask_register.c   errors, many, reregister, unregister_in_*
 *  ptask_polling.c    background, stale_timeout, frequency_*: sources
 *                     polled while the application's threads sleep
 *
 *  info          proust_progress_info matches the environment.
 *  init_refused  proust_init fails with PROUST_ERR_INVALID on a bad
 *                PROUST_PROGRESS / PROUST_LOCKING / PROUST_SPIN_US value
 *                and succeeds once the variables are removed (no session
 *                is made before the case runs).
 */
#define TU_STATE_HERE /* this file defines tu_rank, tu_phase... */
#include <sched.h>

#include "ptask.h"
#include "test_cases.h"

proust_session_t *S;
proust_progress_info_t info;

/* ---------------------------------------------------------------- ticks */
_Atomic int ticks;
static _Atomic int producer_stop;
_Atomic double last_tick_time;
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
void producer_start(int max)
{
    atomic_store(&ticks, 0);
    atomic_store(&producer_stop, 0);
    atomic_store(&last_tick_time, 0.0);
    tick_max = max;
    EXPECT(pthread_create(&producer, NULL, producer_main, NULL) == 0, "pthread_create");
}

void producer_join(void)
{
    pthread_join(producer, NULL);
}

/* ---------------------------------------------------------------- shared helpers */
void *late_completer(void *argp)
{
    struct late_arg *a = argp;
    tu_sleep_ms(a->delay_ms);
    atomic_store(&a->when, tu_now());
    a->rc = proust_request_complete(a->req, a->status);
    return NULL;
}

void on_user_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct cb_rec *c = arg;
    c->error = st->error;
    atomic_fetch_add(&c->calls, 1);
}

int slow_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
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

int idle_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg)
{
    (void)t;
    (void)req;
    (void)arg;
    return 0;
}

int nop_group_cb(proust_ptask_t *t, void *arg)
{
    (void)t;
    (void)arg;
    return 0;
}

/* ---------------------------------------------------------------- info */
void test_info(void)
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

/* ---------------------------------------------------------------- init_refused */
/* A bad PROUST_PROGRESS / PROUST_LOCKING / PROUST_SPIN_US value: proust_init
 * must fail with PROUST_ERR_INVALID; without the variables it must succeed
 * (this case makes its own sessions). */
void test_init_refused(void)
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
}

/* ---------------------------------------------------------------- main */
static const struct tu_case cases[] = {
    {"info", test_info, "proust_progress_info matches PROUST_PROGRESS, _LOCKING, _SPIN_US"},
    {"init_refused", test_init_refused, "a bad progress setting fails proust_init, then works"},
    {"poll", test_poll, "poll callbacks complete 16 requests 4 threads wait on, on time"},
    {"group", test_group, "a group callback completes requests; preferred to poll"},
    {"always", test_always, "PROUST_PTASK_ALWAYS sources polled, idle ones never"},
    {"fd", test_fd, "a readable fd wakes one and two sleeping waiters in < 1 s"},
    {"block_callback", test_block_cb, "a block callback without fd wakes its waiter"},
    {"user_wake", test_user_wake, "completing a sourceless request wakes its waiter"},
    {"user_monitor", test_user_monitor, "a user request's monitor runs once; no 2nd complete"},
    {"user_outside", test_user_outside, "a source's request completed outside its callbacks"},
    {"user_freed", test_user_freed, "a request freed while pending is completed, released"},
    {"comm", test_comm, "(2 processes) a group callback posts a send to the peer"},
    {"errors", test_errors, "invalid registrations, busy unregister, completing twice"},
    {"many", test_many, "more than 60 sources: PROUST_ERR_BUSY, the engine still works"},
    {"reregister", test_reregister, "200 register/unregister cycles of one source succeed"},
    {"unregister_in_poll", test_unregister_in_poll, "a poll callback unregisters its source"},
    {"unregister_in_group", test_unregister_in_group, "a group callback unregisters its source"},
    {"background", test_background, "the progress thread polls while the application computes"},
    {"stale_timeout", test_stale_timeout, "a source pending while another thread sleeps is polled"},
    {"frequency_50hz", test_frequency_50hz, "a 50 Hz source is polled at its frequency"},
    {"frequency_500hz", test_frequency_500hz, "a 500 Hz source is polled at its frequency"},
    {"frequency_5khz", test_frequency_5khz, "a 5 kHz source is polled at its frequency"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    if (c->run == test_init_refused) {
        test_init_refused();
        return 0;
    }
    S = tu_init(60);
    CHECK(proust_progress_info(S, &info));
    if (tu_rank == 0)
        printf("ptask: %d process(es), mode %s, locking %s, %d thread(s), spin %.1f us\n",
               tu_size, info.mode, info.locking, info.threads, info.spin_us);
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("ptask %s: ok\n", c->name);
    return 0;
}
