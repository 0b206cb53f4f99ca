/*
 * util.c — small helpers shared by the MPI files.
 */
#include <sched.h>
#include <string.h>

#include "mpi_impl.h"

void pm_lock_slow(atomic_flag *l)
{
    unsigned spins = 0;
    while (atomic_flag_test_and_set_explicit(l, memory_order_acquire)) {
        /* The holder may be descheduled (8 ranks on 2 cores): yield soon. */
        if (++spins > 64) {
            sched_yield();
            spins = 0;
        }
    }
}

int pm_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
    return (int)n;
}
