/*
 * colocate.c — is the partner we wait for queued behind us on our own cpu?
 *
 * When every cpu is busy, the kernel often wakes a thread onto its waker's
 * cpu. Two ranks in a ping-pong can then share one cpu while the other
 * computes: whoever spins there only delays the partner it waits for (the
 * partner stays runnable behind a whole spin window). So
 * waiting threads publish the cpu they poll on through the rails that
 * reach local peers (shm: a line of the segment header), and a waiter that
 * would spin first asks whether its partner was last seen on this very
 * cpu and has not polled since: then it moves to another cpu it may run
 * on (PROUST_HANDOFF=migrate, the default), or hands the cpu over by
 * sleeping (=sleep). Sleeping alone keeps the pair on one cpu: each wakes
 * the other onto the cpu it is about to leave, for good. Moving costs two
 * sched_setaffinity calls, a few dozen times a second, and the pair then
 * runs apart, twenty times faster (docs/PERFORMANCE.md, "Figures behind the code").
 * sched_getcpu reads the kernel's rseq area: a few nanoseconds.
 */
#include <sched.h>

#include "progress/progress.h"

/* Leave `cpu` for another one we may run on, keeping our affinity: set a
 * mask without it, which migrates us at once, then put the mask back. */
bool proust__migrate_away(int cpu)
{
    cpu_set_t mine, other;
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mine, &mine) != 0 ||
        !CPU_ISSET(cpu, &mine) || CPU_COUNT(&mine) < 2)
        return false;
    other = mine;
    CPU_CLR(cpu, &other);
    if (sched_setaffinity(0, sizeof other, &other) != 0)
        return false;
    (void)sched_setaffinity(0, sizeof mine, &mine);
    return true;
}

int proust__current_cpu(void)
{
    return sched_getcpu();
}

/* The rails, in order (progress's first tasks). */
static proust__rail_t *rail_at(struct proust__progress *p, int i)
{
    return atomic_load_explicit(&p->tasks[i], memory_order_relaxed)->rail;
}

void proust__presence_publish(struct proust__progress *p, int cpu, uint64_t now_ns)
{
    if (cpu < 0)
        return;
    for (int i = 0; i < p->nrails; i++) {
        proust__rail_t *r = rail_at(p, i);
        if (r->ops->presence)
            r->ops->presence(r, (unsigned)cpu, now_ns);
    }
}

bool proust__partner_behind(struct proust__progress *p, int partner, int cpu,
                            uint64_t since_ns)
{
    if (cpu < 0 || partner == p->rank)
        return false;
    for (int i = 0; i < p->nrails; i++) {
        proust__rail_t *r = rail_at(p, i);
        if (r->ops->behind && r->ops->behind(r, partner, (unsigned)cpu, since_ns) > 0)
            return true;
    }
    return false;
}
