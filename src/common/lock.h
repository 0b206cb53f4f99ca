/*
 * lock.h — the engine's short-hold lock: a test-and-set spinlock that
 * yields the core after a bounded spin (so a preempted holder on an
 * oversubscribed machine gets to run). Uncontended lock + unlock is one
 * atomic exchange and one store, against ~55 instructions for a pthread
 * mutex pair; the engine never holds one across a blocking call.
 */
#ifndef PROUST_LOCK_H
#define PROUST_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
    _Atomic int held;
} proust__lock_t;

void proust__lock_slow(proust__lock_t *l);

/* A pause in a spin loop (lets the sibling hyperthread run). */
static inline void proust__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline void proust__lock_init(proust__lock_t *l)
{
    atomic_init(&l->held, 0);
}

static inline bool proust__trylock(proust__lock_t *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

static inline void proust__lock(proust__lock_t *l)
{
    if (__builtin_expect(!atomic_exchange_explicit(&l->held, 1, memory_order_acquire), 1))
        return;
    proust__lock_slow(l);
}

static inline void proust__unlock(proust__lock_t *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

#endif
