/*
 * file_scratch.c — the scratch buffers of collective I/O (the window of an
 * aggregator, the exchange buffers, a rank's packed data), kept with the
 * file between calls: its collectives never run at once, and a buffer
 * reused is one the kernel need not fault in and clear again. Buffers above
 * PM_SCRATCH_KEEP are the call's own.
 */
#include <stdlib.h>

#include "io.h"

#define PM_SCRATCH_KEEP ((size_t)64 << 20)

void *pm_file_scratch(struct pm_file *f, int slot, size_t n)
{
    struct pm_scratch *k = &f->scratch[slot];
    if (n == 0)
        n = 1;
    if (n > PM_SCRATCH_KEEP)
        return malloc(n);
    if (k->n < n) {
        free(k->p);
        k->p = malloc(n);
        k->n = k->p ? n : 0;
    }
    return k->p;
}

void pm_file_scratch_release(struct pm_file *f, int slot, void *p)
{
    if (p && p != f->scratch[slot].p)
        free(p);
}

void pm_file_scratch_free(struct pm_file *f)
{
    for (int i = 0; i < PM_SCRATCH_N; i++) {
        free(f->scratch[i].p);
        f->scratch[i] = (struct pm_scratch){NULL, 0};
    }
}
