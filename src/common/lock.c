#include "common/lock.h"

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

void proust__lock_slow(proust__lock_t *l)
{
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&l->held, memory_order_relaxed) &&
            !atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
            return;
        if (spins < 128)
            cpu_relax();
        else
            sched_yield(); /* the holder may have been preempted */
    }
}
