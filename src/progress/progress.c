/*
 * progress.c — set up the progress engine from PROUST_PROGRESS,
 * PROUST_LOCKING and PROUST_SPIN_US; start and stop it.
 */
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "progress/progress.h"

static int read_mode(struct proust__progress *p)
{
    const char *m = proust__config_str(PROUST_CFG_PROGRESS);
    if (strcmp(m, "auto") == 0)
        p->mode = PROUST__PROGRESS_AUTO; /* decided at start, once the node's ranks are known */
    else if (strcmp(m, "thread") == 0)
        p->mode = PROUST__PROGRESS_THREAD;
    else if (strcmp(m, "block") == 0)
        p->mode = PROUST__PROGRESS_BLOCK;
    else if (strcmp(m, "poll") == 0)
        p->mode = PROUST__PROGRESS_POLL;
    else {
        PROUST_ERROR("PROUST_PROGRESS=%s: expected auto, thread, block or poll", m);
        return PROUST_ERR_INVALID;
    }
    long nthreads = 0;
    if (proust__config_long(PROUST_CFG_PROGRESS_THREADS, &nthreads) != PROUST_OK ||
        nthreads < 0 || nthreads > PROUST__MAX_PROGRESS_THREADS) {
        PROUST_ERROR("PROUST_PROGRESS_THREADS=%s: expected 0 (one per NUMA node) to %d",
                     proust__config_str(PROUST_CFG_PROGRESS_THREADS),
                     PROUST__MAX_PROGRESS_THREADS);
        return PROUST_ERR_INVALID;
    }
    const char *l = proust__config_str(PROUST_CFG_LOCKING);
    if (strcmp(l, "fine") == 0)
        p->coarse = false;
    else if (strcmp(l, "coarse") == 0)
        p->coarse = true;
    else {
        PROUST_ERROR("PROUST_LOCKING=%s: expected fine or coarse", l);
        return PROUST_ERR_INVALID;
    }
    return PROUST_OK;
}

/* The spin window: PROUST_SPIN_US, or the measured wake-up cost. */
static int choose_spin(struct proust__progress *p)
{
    const char *v = proust__config_str(PROUST_CFG_SPIN_US);
    if (p->mode == PROUST__PROGRESS_POLL) {
        p->spin_ns = UINT64_MAX;
        p->spin_reason = "PROUST_PROGRESS=poll: waiters never sleep";
        return PROUST_OK;
    }
    if (strcmp(v, "auto") != 0) {
        char *end;
        errno = 0;
        double us = strtod(v, &end);
        if (errno || end == v || *end || us < 0 || us > 1e7) {
            PROUST_ERROR("PROUST_SPIN_US=%s: expected microseconds (0 to 1e7) or auto", v);
            return PROUST_ERR_INVALID;
        }
        p->spin_ns = (uint64_t)(us * 1000.0);
        p->spin_reason = "set by PROUST_SPIN_US";
        return PROUST_OK;
    }
    p->wake_us = proust__measure_wake_us();
    double us = p->wake_us;
    if (us < 20.0)
        us = 20.0;
    if (us > 200.0)
        us = 200.0;
    p->spin_ns = (uint64_t)(us * 1000.0);
    p->spin_reason = "the measured wake-up cost (spin as long as sleeping would cost; "
                     "0 while the cpus are overcommitted and the waiter's process "
                     "computes on other threads)";
    return PROUST_OK;
}

int proust__progress_init(struct proust__progress *p, const struct proust__progress_upcalls *up,
                          void *core, long peer_check_ms)
{
    p->up = up;
    p->core = core;
    p->epfd = p->kick_fd = p->helper_timer = -1;
    p->loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    pthread_mutex_init(&p->reg_lock, NULL);
    proust__lock_init(&p->big_lock);
    p->peer_check_ns = (uint64_t)peer_check_ms * 1000000ull;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    p->ncpus = n > 0 ? (int)n : 1;
    p->mode_reason = "set by PROUST_PROGRESS";
    int rc = read_mode(p);
    if (rc != PROUST_OK)
        return rc;
    const char *h = proust__config_str(PROUST_CFG_HANDOFF);
    if (strcmp(h, "migrate") != 0 && strcmp(h, "sleep") != 0) {
        PROUST_ERROR("PROUST_HANDOFF=%s: expected migrate or sleep", h);
        return PROUST_ERR_INVALID;
    }
    p->handoff_migrate = strcmp(h, "migrate") == 0;
    if ((rc = proust__boost_parse(proust__config_str(PROUST_CFG_WAIT_BOOST), &p->boost_mode)))
        return rc;
    p->boost_reason = p->mode == PROUST__PROGRESS_POLL ? "none: waiters never sleep (poll mode)"
                                                       : proust__boost_probe(p->boost_mode);
    if ((rc = choose_spin(p)) != PROUST_OK)
        return rc;
    if (p->mode != PROUST__PROGRESS_POLL) {
        p->epfd = epoll_create1(EPOLL_CLOEXEC);
        p->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
        if (p->epfd < 0 || p->kick_fd < 0 ||
            epoll_ctl(p->epfd, EPOLL_CTL_ADD, p->kick_fd, &ev) != 0) {
            PROUST_WARN("progress: no wait set (%s): waiters will nap instead of blocking",
                        strerror(errno));
            if (p->epfd >= 0)
                close(p->epfd);
            p->epfd = -1;
        }
    }
    return PROUST_OK;
}

/* PROUST_PROGRESS=auto: a progress thread needs a core the application
 * does not keep busy; with as many ranks as cores on this node it would
 * only take turns with them (docs/PERFORMANCE.md). */
static void choose_auto(struct proust__progress *p, const struct proust__progress_job *job)
{
    /* counted before placement bound the process near the NIC: the
     * cores the job's ranks share on this node */
    int usable = job->usable_cores > 0 ? job->usable_cores : p->ncpus;
    int local = job->local_size > 0 ? job->local_size : 1;
    if (usable > local) {
        p->mode = PROUST__PROGRESS_THREAD;
        p->mode_reason = "auto: this node has more usable cores than ranks of the job";
    } else {
        p->mode = PROUST__PROGRESS_BLOCK;
        p->mode_reason = "auto: as many ranks as cores on this node, none free for a "
                         "progress thread";
    }
}

int proust__progress_start(struct proust__progress *p, const struct proust__progress_job *job)
{
    p->rank = job->rank;
    p->oversubscribed = job->oversubscribed;
    if (p->mode == PROUST__PROGRESS_AUTO)
        choose_auto(p, job);
    /* this machine's topology (placement may have loaded it already; an
     * XML machine of PROUST_TOPOLOGY is not this one), for the offload
     * queues per NUMA node: only with background threads */
    bool thread = p->mode == PROUST__PROGRESS_THREAD;
    struct proust__topo local = {0};
    hwloc_topology_t topo = NULL;
    if (thread) {
        if (job->topo && job->topo->h && job->topo->this_system)
            topo = job->topo->h;
        else if (proust__topo_load(&local, NULL, false) == PROUST_OK)
            topo = local.h;
        else
            PROUST_INFO("progress: no topology; one offload queue");
    }
    int rc = proust__offload_init(p, topo);
    if (rc == PROUST_OK && thread) {
        /* bound where placement decided, on this machine only */
        bool placed = job->place && job->topo && job->topo->this_system;
        rc = proust__threads_start(p, topo, placed ? job->place : NULL,
                                   job->place && job->place_threads > 0 ? job->place_threads
                                                                        : 1);
    }
    if (rc == PROUST_OK)
        rc = proust__helper_start(p, job->cpu_moved_peers);
    proust__topo_unload(&local);
    return rc;
}

void proust__progress_stop(struct proust__progress *p)
{
    proust__threads_stop(p);
    proust__helper_stop(p);
}

void proust__progress_destroy(struct proust__progress *p)
{
    proust__ptasks_destroy(p);
    proust__offload_destroy(p);
    if (p->epfd >= 0)
        close(p->epfd);
    if (p->kick_fd >= 0)
        close(p->kick_fd);
    if (p->loadavg_fd >= 0)
        close(p->loadavg_fd);
    p->epfd = p->kick_fd = p->loadavg_fd = -1;
    pthread_mutex_destroy(&p->reg_lock);
}

void proust__progress_describe(const struct proust__progress *p, proust_progress_info_t *info)
{
    static const char *const modes[] = {"thread", "block", "poll", "auto"};
    info->mode = modes[p->mode];
    info->mode_reason = p->mode_reason;
    info->locking = p->coarse ? "coarse" : "fine";
    info->threads = p->nthreads;
    info->spin_us = p->spin_ns == UINT64_MAX ? -1.0 : (double)p->spin_ns / 1000.0;
    info->wake_us = p->wake_us;
    info->spin_reason = p->spin_reason;
    info->wait_boost = p->boost_reason;
    info->rdv_thread = p->helper;
    info->rdv_thread_reason = p->helper_reason ? p->helper_reason : "not started";
}
