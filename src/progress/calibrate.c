/*
 * calibrate.c — how long a waiter should spin, and whether the machine is
 * loaded.
 *
 * Spinning then blocking is 2-competitive when the spin lasts as long as a
 * sleep and wake-up cost: a wait shorter than that never pays for the
 * kernel, a longer one pays at most twice. So init measures a wake-up as a
 * waiter meets it: a thread that has slept for a while (its core gone
 * idle) is woken through a futex, and the time from the wake call to the
 * thread running again (upper quartile of 8) is the spin window (bounded
 * to [20, 200] µs). A VM's samples spread over three orders of magnitude
 * (the virtual CPU still polling, the hypervisor running something else),
 * hence the quartile; a thread woken right after it fell asleep costs a
 * tenth of a real sleep, hence the wait before the wake
 * (docs/PERFORMANCE.md, "Figures behind the code").
 * When more threads are runnable than there are cores and the waiter's own
 * process computes on other threads (twice in a row, 10 ms apart: a
 * progress thread running for a moment does not count), spinning only
 * takes the core from them: the window drops to zero.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progress/progress.h"

#define ROUNDS 8
#define SLEEP_US 300 /* long enough for the sleeper's core to go idle */

struct wake_probe {
    _Atomic unsigned go;      /* futex word */
    _Atomic uint64_t woken_at; /* set by the waker just before waking */
    uint64_t latency[ROUNDS];
};

static void *sleeper(void *arg)
{
    struct wake_probe *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        while (atomic_load(&w->go) == 0)
            (void)syscall(SYS_futex, (unsigned *)&w->go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        w->latency[i] = proust__now_ns() - atomic_load(&w->woken_at);
        atomic_store(&w->go, 0);
        (void)syscall(SYS_futex, (unsigned *)&w->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

double proust__measure_wake_us(void)
{
    struct wake_probe w = {0};
    pthread_t th;
    if (pthread_create(&th, NULL, sleeper, &w) != 0)
        return 40.0; /* the figure this VM class shows */
    for (int i = 0; i < ROUNDS; i++) {
        struct timespec nap = {0, SLEEP_US * 1000};
        nanosleep(&nap, NULL);
        atomic_store(&w.woken_at, proust__now_ns());
        atomic_store(&w.go, 1);
        (void)syscall(SYS_futex, (unsigned *)&w.go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        /* asleep until the sleeper ran: on a crowded node a loop of
         * sched_yield here handed the cpu to every other rank in turn, a
         * context switch each (128 ranks on 2 cores: 30 000 a job) */
        while (atomic_load(&w.go))
            (void)syscall(SYS_futex, (unsigned *)&w.go, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    }
    pthread_join(th, NULL);
    qsort(w.latency, ROUNDS, sizeof w.latency[0], cmp_u64);
    /* the upper quartile: on a VM an idle virtual CPU is sometimes still
     * polling (a few µs) and sometimes deep asleep (tens of µs); a waiter
     * that sleeps in earnest meets the second case */
    return (double)w.latency[(ROUNDS * 3) / 4] / 1000.0;
}

/* More threads runnable than cores, from the 4th field of /proc/loadavg
 * (runnable entities now / all), sampled at most every 10 ms for the whole
 * session, through a descriptor kept open: a pread costs a few µs. */
static bool cpus_overcommitted(struct proust__progress *p, uint64_t now)
{
    uint64_t last = atomic_load_explicit(&p->load_checked_ns, memory_order_relaxed);
    if (now - last < 10000000ull ||
        !atomic_compare_exchange_strong(&p->load_checked_ns, &last, now))
        return atomic_load_explicit(&p->overcommitted, memory_order_relaxed);
    int running = 0;
    char buf[128];
    ssize_t n = p->loadavg_fd >= 0 ? pread(p->loadavg_fd, buf, sizeof buf - 1, 0) : -1;
    if (n > 0) {
        buf[n] = '\0';
        double a, b, c;
        if (sscanf(buf, "%lf %lf %lf %d/", &a, &b, &c, &running) != 4)
            running = 0;
    }
    bool over = running > p->ncpus;
    atomic_store_explicit(&p->overcommitted, over, memory_order_relaxed);
    return over;
}

bool proust__cpus_overcommitted(struct proust__progress *p)
{
    return atomic_load_explicit(&p->overcommitted, memory_order_relaxed);
}

static uint64_t cpu_ns(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0)
        return 0;
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
           (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* What one waiting thread knows of the load, sampled every 10 ms. */
struct thread_load {
    uint64_t checked_ns;
    uint64_t process_cpu_ns; /* CPU time of the whole process then */
    uint64_t thread_cpu_ns;  /* ... and of this thread */
    bool busy_last;          /* the previous sample saw load too */
    bool loaded;
};
static _Thread_local struct thread_load my_load;

/* Loaded, for a waiter: the cpus are overcommitted AND the other threads of
 * its own process used more than half a cpu since the last sample; twice
 * in a row. Those threads are the ones our spinning would take the core
 * from (compute threads next to a waiting one: seed 004's table 2), and
 * they would wake us on the event anyway. A rank whose only thread waits
 * spins its window even on a busy machine: sleeping at once there made
 * every message a wake-up, which the kernel then tended to serve on the
 * very cpu its peer runs on (a ping-pong against a rank running compute
 * threads was then 20 times slower in half of the runs; docs/PERFORMANCE.md,
 * "Figures behind the code"). */
bool proust__waiter_loaded(struct proust__progress *p, uint64_t now)
{
    struct thread_load *l = &my_load;
    if (l->checked_ns && now - l->checked_ns < 10000000ull)
        return l->loaded;
    bool over = cpus_overcommitted(p, now);
    uint64_t proc = cpu_ns(RUSAGE_SELF), mine = cpu_ns(RUSAGE_THREAD);
    bool busy = false;
    if (l->checked_ns) {
        /* (signed: this thread's clock is read last, a little later) */
        int64_t others = (int64_t)(proc - l->process_cpu_ns) - (int64_t)(mine - l->thread_cpu_ns);
        busy = over && others > 0 && (uint64_t)others * 2 > now - l->checked_ns;
    }
    l->loaded = busy && l->busy_last;
    l->busy_last = busy;
    l->checked_ns = now;
    l->process_cpu_ns = proc;
    l->thread_cpu_ns = mine;
    return l->loaded;
}
