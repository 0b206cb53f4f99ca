/*
 * ptask_register.c — registering and unregistering sources (cases errors,
 * many, reregister, unregister_in_poll, unregister_in_group).
 *
 *  errors               invalid registrations, unregister while busy,
 *                       completing twice or completing a communication
 *                       request, user data.
 *  many                 registering more than 60 sources ends in
 *                       PROUST_ERR_BUSY and nothing breaks; they all
 *                       unregister.
 *  reregister           one source registered and unregistered 200 times
 *                       in a row: each registration must succeed.
 *  unregister_in_poll   a poll callback that completes its source's last
 *                       request unregisters the source.
 *  unregister_in_group  the same from a group callback.
 */
#include "ptask.h"

/* ---------------------------------------------------------------- errors */
void test_errors(void)
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
void test_many(void)
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

/* Register and unregister one source at a time, many more times than the
 * table has slots: at most one is registered at any moment. */
void test_reregister(void)
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

void test_unregister_in_poll(void)
{
    test_unregister_in_callback(0);
}

void test_unregister_in_group(void)
{
    tu_watchdog(10);
    test_unregister_in_callback(1);
}
