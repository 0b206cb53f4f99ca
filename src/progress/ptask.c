/*
 * ptask.c — polling tasks: the rails and the sources users register, and
 * the lists of requests pending on those sources (the requests themselves
 * are core's: core/user_request.c).
 *
 * The task table is read without a lock by every poller: slots are
 * published with a release store; the slot of an unregistered task may be
 * given to a new one, but the old task's memory stays until finalize (a
 * poller may still hold its pointer: it sees `dead` and skips it). Each
 * task has one poller at a time (its `polling` flag); a thread that finds
 * the flag taken moves on, because someone is polling it.
 *
 * A source with a blocking call and no fd gets its own thread (as in
 * PIOMan): while requests are pending on the source it sits in the
 * blocking call and polls the source when the call returns, so waiters
 * elsewhere sleep in the wait set undisturbed.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "common/list.h"
#include "common/log.h"
#include "progress/progress.h"

/* The task the calling thread is polling request by request: completing a
 * request of that task from its poll callback needs no lock (held). */
static _Thread_local struct proust_ptask *polling_task;
/* The task whose callback (poll or group) the calling thread runs: it
 * holds that task's poll flag. */
static _Thread_local struct proust_ptask *in_callback;

static int add_task(struct proust__progress *p, struct proust_ptask *t)
{
    pthread_mutex_lock(&p->reg_lock);
    int n = atomic_load(&p->ntasks), slot = n;
    for (int i = p->nrails; i < n && slot == n; i++) {
        struct proust_ptask *old = atomic_load(&p->tasks[i]);
        if (atomic_load(&old->dead)) {
            slot = i; /* reused: the old one is kept until finalize */
            old->retired_next = p->retired;
            p->retired = old;
        }
    }
    if (slot == PROUST__MAX_PTASKS) {
        pthread_mutex_unlock(&p->reg_lock);
        return PROUST_ERR_BUSY;
    }
    if (t->fd >= 0 && p->epfd >= 0) {
        /* rails drain what they report (level-triggered); a user source
         * reports edges, so an fd nobody reads cannot keep waking us */
        struct epoll_event ev = {.events = EPOLLIN | (t->rail ? 0u : (unsigned)EPOLLET),
                                 .data.ptr = t};
        if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, t->fd, &ev) != 0) {
            PROUST_WARN("progress: cannot watch the fd of source '%s': %s", t->name,
                        strerror(errno));
            t->fd = -1; /* polled at its frequency instead */
        }
    }
    atomic_store_explicit(&p->tasks[slot], t, memory_order_release);
    if (slot == n)
        atomic_store_explicit(&p->ntasks, n + 1, memory_order_release);
    pthread_mutex_unlock(&p->reg_lock);
    return PROUST_OK;
}

static int poll_task(struct proust_ptask *t);

static void futex_wake_all(_Atomic int *word)
{
    (void)syscall(SYS_futex, (int *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* The thread of a source with a blocking call: block while requests are
 * pending, then poll. */
static void *blocking_main(void *arg)
{
    struct proust_ptask *t = arg;
    struct proust__progress *p = t->p;
    long period_us = (long)(t->period_ns / 1000u);
    if (period_us < 1)
        period_us = 1;
    while (!atomic_load(&t->dead) && !atomic_load(&p->stop)) {
        int pending = atomic_load(&t->npending);
        if (!pending && !(t->flags & PROUST_PTASK_ALWAYS)) {
            struct timespec ts = {0, 100000000}; /* re-check stop and dead */
            (void)syscall(SYS_futex, (int *)&t->npending, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
            continue;
        }
        int rc = t->block(t, t->arg, period_us);
        if (rc < 0)
            PROUST_WARN("progress: source '%s' blocking call failed: %s", t->name,
                        proust_strerror(rc));
        if (proust__poll_trylock(&t->polling)) {
            if (!atomic_load(&t->dead))
                poll_task(t);
            proust__poll_unlock(&t->polling);
            p->up->run_deferred();
        }
    }
    atomic_store(&t->blocker_running, 0);
    futex_wake_all(&t->blocker_running);
    return NULL;
}

static int start_blocking_thread(struct proust_ptask *t)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&t->blocker_running, 1);
    pthread_t th;
    int rc = pthread_create(&th, &attr, blocking_main, t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        atomic_store(&t->blocker_running, 0);
        return PROUST_ERR_SYS;
    }
    return PROUST_OK;
}

/* Wait until the source's blocking thread has left (unless we are it). */
static void join_blocking_thread(struct proust_ptask *t)
{
    futex_wake_all(&t->npending);
    int running;
    while ((running = atomic_load(&t->blocker_running)) != 0 && in_callback != t) {
        struct timespec ts = {0, 10000000};
        (void)syscall(SYS_futex, (int *)&t->blocker_running, FUTEX_WAIT_PRIVATE, running, &ts,
                      NULL, 0);
    }
}

int proust__ptask_add_rail(struct proust__progress *p, struct proust_ptask *t,
                           proust__rail_t *rail, bool used)
{
    t->p = p;
    t->rail = rail;
    snprintf(t->name, sizeof t->name, "rail %s", rail->ops->name);
    /* a rail that carries no peer is never polled: its fd stays out of the
     * wait set too (an end of stream there would wake us forever) */
    t->fd = used && rail->ops->fd ? rail->ops->fd(rail) : -1;
    t->flags = used ? PROUST_PTASK_ALWAYS : 0;
    t->period_ns = 1000000; /* a rail without fd is polled every ms by a blocker */
    int rc = add_task(p, t);
    if (rc == PROUST_OK)
        p->nrails++;
    return rc;
}

int proust__ptask_register(struct proust__progress *p, const struct proust_ptask_desc *d,
                           proust_ptask_t **out)
{
    if (!d || !out || (!d->poll && !d->group) || d->frequency_hz < 0 ||
        (d->flags & ~PROUST_PTASK_ALWAYS))
        return PROUST_ERR_INVALID;
    /* its poll flag sits on its own cache line: calloc would not align it */
    struct proust_ptask *t = aligned_alloc(_Alignof(struct proust_ptask), sizeof *t);
    if (!t)
        return PROUST_ERR_NOMEM;
    memset(t, 0, sizeof *t);
    t->p = p;
    snprintf(t->name, sizeof t->name, "%s", d->name ? d->name : "user source");
    t->poll = d->poll;
    t->group = d->group;
    t->block = d->block;
    t->fd = d->fd >= 0 ? d->fd : -1;
    t->flags = d->flags;
    t->arg = d->arg;
    double hz = d->frequency_hz > 0 ? d->frequency_hz : 1000.0;
    t->period_ns = hz >= 1e9 ? 1 : (uint64_t)(1e9 / hz);
    proust__lock_init(&t->lock);
    int rc = add_task(p, t);
    if (rc != PROUST_OK) {
        free(t);
        return rc;
    }
    if (t->block && t->fd < 0 && (rc = start_blocking_thread(t)) != PROUST_OK) {
        atomic_store(&t->dead, 1);
        return rc;
    }
    *out = t;
    return PROUST_OK;
}

int proust_ptask_unregister(proust_ptask_t **tp)
{
    if (!tp || !*tp || (*tp)->rail)
        return PROUST_ERR_INVALID;
    struct proust_ptask *t = *tp;
    struct proust__progress *p = t->p;
    if (atomic_load(&t->npending) > 0)
        return PROUST_ERR_BUSY;
    if (atomic_exchange(&t->dead, 1))
        return PROUST_ERR_INVALID;
    /* wait out a poller running its callbacks (we may be that poller) */
    if (in_callback != t) {
        while (!proust__poll_trylock(&t->polling))
            proust__cpu_relax();
        proust__poll_unlock(&t->polling); /* dead: nobody takes it again */
    }
    if (t->fd >= 0 && p->epfd >= 0)
        (void)epoll_ctl(p->epfd, EPOLL_CTL_DEL, t->fd, NULL);
    join_blocking_thread(t);
    *tp = NULL;
    return PROUST_OK;
}

/* ---- requests pending on a source --------------------------------------------- */
bool proust__ptask_usable(const struct proust__progress *p, const struct proust_ptask *t)
{
    return t->p == p && !t->rail && !atomic_load(&t->dead);
}

void proust__ptask_pend(struct proust_ptask *t, struct proust__pending *l)
{
    proust__lock(&t->lock);
    PROUST__LIST_APPEND(t->pend_head, t->pend_tail, l);
    proust__unlock(&t->lock);
    atomic_fetch_add(&t->npending, 1);
    if (t->block && t->fd < 0)
        futex_wake_all(&t->npending); /* its blocking thread */
    /* a source to poll now: napping progress threads, and a sleeping
     * blocker whose timeout was chosen when nothing was pending */
    proust__threads_kick(t->p);
    unsigned w = atomic_load_explicit(&t->p->waiting, memory_order_seq_cst);
    if (w & PROUST__WAIT_BLOCKER) /* whoever it is: a progress thread too */
        proust__kick_blocker(t->p);
}

void proust__ptask_unpend(struct proust_ptask *t, struct proust__pending *l)
{
    bool mine = polling_task == t; /* from t's poll callback: lock held */
    if (!mine)
        proust__lock(&t->lock);
    if (t->iter_next == l)
        t->iter_next = l->next;
    PROUST__LIST_REMOVE(t->pend_head, t->pend_tail, l);
    if (!mine)
        proust__unlock(&t->lock);
    atomic_fetch_sub(&t->npending, 1);
}

bool proust__ptask_polling(void)
{
    return polling_task != NULL;
}

/* ---- polling ----------------------------------------------------------------- */
static int poll_one_by_one(struct proust_ptask *t)
{
    int events = 0;
    proust__lock(&t->lock);
    polling_task = t;
    for (struct proust__pending *l = t->pend_head; l; l = t->iter_next) {
        t->iter_next = l->next;
        int n = t->poll(t, l->req, t->arg);
        if (n > 0)
            events += n;
    }
    t->iter_next = NULL;
    polling_task = NULL;
    proust__unlock(&t->lock);
    return events;
}

static int poll_task(struct proust_ptask *t)
{
    int n = 0;
    struct proust_ptask *outer = in_callback;
    in_callback = t;
    if (t->group)
        n = t->group(t, t->arg);
    else if (atomic_load_explicit(&t->npending, memory_order_acquire))
        n = poll_one_by_one(t);
    in_callback = outer;
    if (n < 0) {
        PROUST_WARN("progress: source '%s' poll failed: %s", t->name, proust_strerror(n));
        return 0;
    }
    return n;
}

int proust__ptasks_poll_user(struct proust__progress *p)
{
    int n = atomic_load_explicit(&p->ntasks, memory_order_acquire);
    int events = 0;
    for (int i = p->nrails; i < n; i++) {
        struct proust_ptask *t = atomic_load_explicit(&p->tasks[i], memory_order_acquire);
        if (atomic_load_explicit(&t->dead, memory_order_relaxed) ||
            (!(t->flags & PROUST_PTASK_ALWAYS) &&
             !atomic_load_explicit(&t->npending, memory_order_relaxed)))
            continue;
        if (!proust__poll_trylock(&t->polling))
            continue;
        if (!atomic_load_explicit(&t->dead, memory_order_acquire))
            events += poll_task(t);
        proust__poll_unlock(&t->polling);
    }
    return events;
}

uint64_t proust__ptasks_period(struct proust__progress *p)
{
    int n = atomic_load_explicit(&p->ntasks, memory_order_acquire);
    uint64_t period = 0;
    for (int i = 0; i < n; i++) {
        struct proust_ptask *t = atomic_load_explicit(&p->tasks[i], memory_order_acquire);
        /* a rail whose data moves only while polled (ofi over tcp: a
         * connection being set up wakes no fd) is polled at its period
         * even with an fd */
        bool fd_enough = t->fd >= 0 &&
                         !(t->rail && (t->rail->caps.flags & PROUST__RAIL_POLL_TO_MOVE));
        if (fd_enough || (t->block && !t->rail) ||
            atomic_load_explicit(&t->dead, memory_order_relaxed) ||
            (!(t->flags & PROUST_PTASK_ALWAYS) && !atomic_load(&t->npending)))
            continue;
        if (t->rail && t->rail->ops == &proust__rail_self)
            continue; /* local sends kick the blocker themselves */
        if (!period || t->period_ns < period)
            period = t->period_ns;
    }
    return period;
}

void proust__ptasks_destroy(struct proust__progress *p)
{
    int n = atomic_load(&p->ntasks);
    for (int i = 0; i < n; i++) {
        struct proust_ptask *t = atomic_load(&p->tasks[i]);
        if (t->rail) /* rails' tasks live in their slots */
            continue;
        atomic_store(&t->dead, 1);
        join_blocking_thread(t);
        free(t);
    }
    while (p->retired) {
        struct proust_ptask *t = p->retired;
        p->retired = t->retired_next;
        free(t);
    }
    atomic_store(&p->ntasks, 0);
    p->nrails = 0;
}
