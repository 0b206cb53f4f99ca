/*
 * ptask_requests.c — requests the application creates and completes itself
 * (cases user_wake, user_monitor, user_outside, user_freed, comm).
 *
 *  user_wake     proust_request_create with no source:
 *                proust_request_complete from another thread wakes the
 *                thread blocked in proust_wait, with the status given.
 *  user_monitor  a request monitor on such a request runs once, when it is
 *                completed; completing twice is PROUST_ERR_STATE.
 *  user_outside  a request on a source completed from outside its
 *                callbacks wakes its waiter; the source cannot be
 *                unregistered while the request is pending.
 *  user_freed    a request freed while pending is completed by its source
 *                and released; its monitor still runs.
 *  comm          (2 processes) a group callback posts a send to the peer.
 */
#include "ptask.h"

/* ---------------------------------------------------------------- user requests */
void test_user_wake(void)
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
}

void test_user_monitor(void)
{
    TU_PHASE("user request: monitor, complete, test");
    proust_request_t *r;
    proust_status_t st;
    int flag = 1;
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
}

void test_user_outside(void)
{
    TU_PHASE("user request on a source, completed from outside its callbacks");
    proust_request_t *r;
    proust_status_t st;
    pthread_t th;
    proust_ptask_t *t;
    struct proust_ptask_desc d = {.name = "idle", .poll = idle_poll_cb, .fd = -1};
    CHECK(proust_ptask_register(S, &d, &t));
    CHECK(proust_request_create(S, t, NULL, &r));
    CHECK_RC(proust_ptask_unregister(&t), PROUST_ERR_BUSY);
    EXPECT(t != NULL, "a refused unregister cleared the handle");
    struct late_arg b = {.req = r, .delay_ms = 100, .status = PROUST_OK};
    EXPECT(pthread_create(&th, NULL, late_completer, &b) == 0, "create");
    CHECK(proust_wait(&r, &st));
    double back = tu_now();
    pthread_join(th, NULL);
    CHECK_RC(b.rc, PROUST_OK);
    double lat = back - atomic_load(&b.when);
    EXPECT(lat >= 0 && lat < 1.0, "waiter on a source woke %.3f s after an outside completion",
           lat);
    CHECK(proust_ptask_unregister(&t));
    EXPECT(t == NULL, "unregister left the handle");
}

void test_user_freed(void)
{
    TU_PHASE("user request freed while pending");
    proust_request_t *r;
    proust_ptask_t *t;
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

void test_comm(void)
{
    TU_PHASE("comm: a callback posts a send");
    EXPECT(tu_size == 2, "run with 2 processes, got %d", tu_size);
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
