/*
 * boost.c — a loaded waiter's wake-up must preempt its own process's
 * compute threads.
 *
 * A thread that sleeps in a wait while other threads of its process keep
 * every cpu busy is woken onto a cpu running one of them. Linux's fair
 * scheduler (EEVDF, 6.6+) lets the running thread finish its slice, and
 * the switch then waits for the next tick: a closed ping-pong against
 * compute threads made one round trip per tick, stalled most of the time
 * (docs/PERFORMANCE.md, "Figures behind the code"). Two knobs
 * of sched_setattr fix that for the length of the wait:
 *  - a short slice (sched_runtime, fair tasks, Linux 6.12+; no privilege):
 *    a waking thread whose slice is shorter than the running one's may
 *    preempt it at once (PREEMPT_SHORT), when it is eligible;
 *  - a nice value 10 lower (needs CAP_SYS_NICE or RLIMIT_NICE): the
 *    thread stays eligible although it wants more than a fair share.
 * Both are undone when the wait ends: the thread computes at the priority
 * it had. Threads the user gave another policy (batch, idle, real-time)
 * are left alone. PROUST_WAIT_BOOST: auto (both, nice where permitted),
 * slice (the slice only) or off.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "progress/progress.h"

#define BOOST_SLICE_NS 100000ull /* the shortest slice Linux accepts */
#define BOOST_NICE_STEP 10       /* weight x9.3 */

/* struct sched_attr of <linux/sched/types.h>, first version (48 bytes);
 * glibc has no wrapper before 2.41 */
struct proust_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};
#define RESET_ON_FORK 0x01 /* SCHED_FLAG_RESET_ON_FORK */

/* Process-wide: may we lower nice? (1 until a try says EPERM) */
static _Atomic int nice_permitted = 1;

static int get_attr(struct proust_sched_attr *a)
{
    memset(a, 0, sizeof *a);
    return syscall(SYS_sched_getattr, 0, a, (unsigned)sizeof *a, 0) == 0 ? 0 : errno;
}

static int set_attr(const struct proust_sched_attr *cur, int nice, uint64_t slice_ns)
{
    struct proust_sched_attr a = {
        .size = sizeof a,
        .sched_policy = SCHED_OTHER,
        .sched_flags = cur->sched_flags & RESET_ON_FORK,
        .sched_nice = nice,
        .sched_runtime = slice_ns,
    };
    return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : errno;
}

static int boosted_nice(int nice)
{
    int n = nice - BOOST_NICE_STEP;
    return n < -20 ? -20 : n;
}

int proust__boost_parse(const char *v, int *mode)
{
    if (strcmp(v, "auto") == 0)
        *mode = PROUST__BOOST_AUTO;
    else if (strcmp(v, "slice") == 0)
        *mode = PROUST__BOOST_SLICE;
    else if (strcmp(v, "off") == 0)
        *mode = PROUST__BOOST_OFF;
    else {
        PROUST_ERROR("PROUST_WAIT_BOOST=%s: expected auto, slice or off", v);
        return PROUST_ERR_INVALID;
    }
    return PROUST_OK;
}

void proust__boost_begin(struct proust__progress *p, struct proust__waiter *w)
{
    int mode = p->boost_mode;
    if (mode == PROUST__BOOST_OFF || w->boosted)
        return;
    struct proust_sched_attr cur;
    if (get_attr(&cur) != 0 || cur.sched_policy != SCHED_OTHER)
        return;
    int nice = cur.sched_nice, target = nice;
    if (mode == PROUST__BOOST_AUTO && atomic_load_explicit(&nice_permitted, memory_order_relaxed))
        target = boosted_nice(nice);
    int err = set_attr(&cur, target, BOOST_SLICE_NS);
    if (err == EPERM && target != nice) {
        atomic_store_explicit(&nice_permitted, 0, memory_order_relaxed);
        err = set_attr(&cur, nice, BOOST_SLICE_NS);
    }
    if (err == 0) {
        w->boosted = true;
        w->saved_nice = (int8_t)nice;
        w->saved_flags = (uint8_t)(cur.sched_flags & RESET_ON_FORK);
    }
}

void proust__boost_end(struct proust__waiter *w)
{
    struct proust_sched_attr cur = {.sched_flags = w->saved_flags};
    /* raising nice back and a default slice (runtime 0) need no privilege */
    (void)set_attr(&cur, w->saved_nice, 0);
    w->boosted = false;
}

/* What a boosted wait gets here, found by trying it on the calling thread
 * and undoing it at once (init, for proust-info). */
const char *proust__boost_probe(int mode)
{
    if (mode == PROUST__BOOST_OFF)
        return "off (PROUST_WAIT_BOOST=off)";
    struct proust_sched_attr cur;
    int err = get_attr(&cur);
    if (err == ENOSYS)
        return "unavailable: no sched_setattr in this kernel";
    if (err != 0)
        return "unavailable: sched_getattr fails";
    if (cur.sched_policy != SCHED_OTHER)
        return "not for this thread: its policy is not SCHED_OTHER (left as the user set it)";
    int nice = cur.sched_nice;
    bool lowered = mode == PROUST__BOOST_AUTO &&
                   set_attr(&cur, boosted_nice(nice), BOOST_SLICE_NS) == 0;
    if (!lowered && set_attr(&cur, nice, BOOST_SLICE_NS) != 0)
        return "unavailable: sched_setattr refuses it here";
    struct proust_sched_attr now;
    bool slice = get_attr(&now) == 0 && now.sched_runtime == BOOST_SLICE_NS;
    (void)set_attr(&cur, nice, 0);
    if (mode == PROUST__BOOST_AUTO && !lowered)
        atomic_store_explicit(&nice_permitted, 0, memory_order_relaxed);
    if (lowered)
        return slice ? "while a loaded waiter sleeps: a 100 us slice and nice lowered by 10"
                     : "while a loaded waiter sleeps: nice lowered by 10 (this kernel, before "
                       "6.12, has no slice for fair tasks)";
    if (!slice)
        return mode == PROUST__BOOST_AUTO
                   ? "no effect here: no permission to lower nice (CAP_SYS_NICE or "
                     "RLIMIT_NICE) and no slice for fair tasks (Linux before 6.12)"
                   : "no effect here: no slice for fair tasks (Linux before 6.12)";
    return mode == PROUST__BOOST_AUTO
               ? "while a loaded waiter sleeps: a 100 us slice (no permission to lower nice: "
                 "CAP_SYS_NICE or RLIMIT_NICE)"
               : "while a loaded waiter sleeps: a 100 us slice (PROUST_WAIT_BOOST=slice)";
}
