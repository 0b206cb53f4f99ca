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
 * to [20, 200] µs). On this class of VM that is typically ~40 µs, with
 * samples from 4 µs (the virtual CPU was still polling) to milliseconds
 * (the hypervisor ran something else); a thread woken right after it fell
 * asleep costs ~3 µs, which would badly underestimate a real sleep.
 * When more threads are runnable than there are cores (twice in a row, 10
 * ms apart: a progress thread running for a moment does not count),
 * spinning only delays whoever we wait for: the window drops to zero.
 */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/engine.h"

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
        while (atomic_load(&w.go))
            sched_yield();
    }
    pthread_join(th, NULL);
    qsort(w.latency, ROUNDS, sizeof w.latency[0], cmp_u64);
    /* the upper quartile: on a VM an idle virtual CPU is sometimes still
     * polling (a few µs) and sometimes deep asleep (tens of µs); a waiter
     * that sleeps in earnest meets the second case */
    return (double)w.latency[(ROUNDS * 3) / 4] / 1000.0;
}

bool proust__machine_loaded(struct proust_session *s, uint64_t now)
{
    struct proust__progress *p = &s->prog;
    uint64_t last = atomic_load_explicit(&p->load_checked_ns, memory_order_relaxed);
    if (now - last < 10000000ull ||
        !atomic_compare_exchange_strong(&p->load_checked_ns, &last, now))
        return atomic_load_explicit(&p->loaded, memory_order_relaxed);
    /* the 4th field of /proc/loadavg: runnable entities now / all (read
     * through a descriptor kept open: a pread costs a few µs) */
    int running = 0;
    char buf[128];
    ssize_t n = p->loadavg_fd >= 0 ? pread(p->loadavg_fd, buf, sizeof buf - 1, 0) : -1;
    if (n > 0) {
        buf[n] = '\0';
        double a, b, c;
        if (sscanf(buf, "%lf %lf %lf %d/", &a, &b, &c, &running) != 4)
            running = 0;
    }
    /* Loaded: more runnable threads than cores, and ours are being
     * preempted (2+ involuntary switches in the interval): a transient
     * reader or daemon makes the first true for an instant on a busy 2-core
     * machine, and sleeping at once then costs a wake-up per message
     * (40-150 us ping-pongs right after init). Seen twice in a row. */
    struct rusage ru;
    long nivcsw = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_nivcsw : 0;
    long preempted = nivcsw - atomic_exchange_explicit(&p->nivcsw_last, nivcsw,
                                                       memory_order_relaxed);
    bool over = running > p->ncpus && preempted >= 2;
    bool loaded = over && atomic_exchange_explicit(&p->over_last, over, memory_order_relaxed);
    if (!over)
        atomic_store_explicit(&p->over_last, false, memory_order_relaxed);
    atomic_store_explicit(&p->loaded, loaded, memory_order_relaxed);
    return loaded;
}
