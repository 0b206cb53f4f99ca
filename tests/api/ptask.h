/*
 * ptask.h — what the files of api_ptask share (tests/api/ptask*.c, the
 * case table in ptask.c): the session and the progress settings it runs
 * under, a tick counter that a producer thread advances every millisecond,
 * requests that complete at a tick, and the cases' functions.
 */
#ifndef PROUST_TEST_PTASK_H
#define PROUST_TEST_PTASK_H

#define TU_SHARED_STATE /* one tu_rank / tu_phase for all the files */

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "test_util.h"

extern proust_session_t *S;
extern proust_progress_info_t info; /* proust_progress_info of S */

/* ---- ticks: +1 a millisecond from producer_start(max) up to max ---------- */
extern _Atomic int ticks;
extern _Atomic double last_tick_time; /* when tick `max` came */
void producer_start(int max);
void producer_join(void);

/* ---- requests on sources ----------------------------------------------- */
struct src_state;

/* A request to complete once `ticks` reaches `target`. */
struct preq {
    int target;
    _Atomic int completed;
    _Atomic long polls;
    struct src_state *src;
    proust_request_t *handle; /* for group callbacks */
};

/* Completes a struct preq request (its user data) at its target. */
int slow_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg);
/* Never completes anything. */
int idle_poll_cb(proust_ptask_t *t, proust_request_t *req, void *arg);
int nop_group_cb(proust_ptask_t *t, void *arg);

/* A thread that completes `req` with `status` after `delay_ms`. */
struct late_arg {
    proust_request_t *req;
    int delay_ms;
    int status;
    _Atomic double when;
    int rc;
};
void *late_completer(void *argp);

/* A request monitor that counts its calls. */
struct cb_rec {
    _Atomic int calls;
    int error;
};
void on_user_done(proust_request_t *req, const proust_status_t *st, void *arg);

/* ---- the cases ------------------------------------------------------------ */
/* ptask.c */
void test_info(void);
void test_init_refused(void);
/* ptask_callbacks.c */
void test_poll(void);
void test_group(void);
void test_always(void);
/* ptask_wakeup.c */
void test_fd(void);
void test_block_cb(void);
/* ptask_requests.c */
void test_user_wake(void);
void test_user_monitor(void);
void test_user_outside(void);
void test_user_freed(void);
void test_comm(void);
/* ptask_register.c */
void test_errors(void);
void test_many(void);
void test_reregister(void);
void test_unregister_in_poll(void);
void test_unregister_in_group(void);
/* ptask_polling.c */
void test_background(void);
void test_stale_timeout(void);
void test_frequency_50hz(void);
void test_frequency_500hz(void);
void test_frequency_5khz(void);

#endif
