/*
 * memory.c — MPI_Alloc_mem and MPI_Free_mem: malloc-backed memory aligned
 * to 64 bytes (a cache line). Every block handed out is remembered in a
 * hash set, so that MPI_Free_mem of any other pointer raises MPI_ERR_BASE
 * instead of corrupting the heap.
 *
 * A block of PM_MEM_REGISTER bytes or more is registered with the rails
 * that serve remote access (proust_mem_register: the ofi rail) until it is
 * freed: large sends and puts from it are then read by their receivers
 * without a registration each (the registration cache of
 * proust_rma_counts), and nothing stale can be served, since the memory
 * stays ours until MPI_Free_mem releases the registration first. The
 * registration sits in a header of 64 bytes before the block.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define PM_MEM_ALIGN 64
#define PM_MEM_REGISTER ((size_t)64 << 10)

/* Before each block (PM_MEM_ALIGN bytes, so the block stays aligned). */
struct pm_mem_head {
    proust_mem_t *reg; /* NULL: not registered */
};
_Static_assert(sizeof(struct pm_mem_head) <= PM_MEM_ALIGN, "the header fits its slot");

/* Open addressing with linear probing; deletion shifts entries back, so no
 * tombstones. cap is a power of two, at most half full. */
static struct {
    atomic_flag lock;
    void **slot;
    size_t cap, n;
} mem = {.lock = ATOMIC_FLAG_INIT};

static size_t hash(const void *p, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p >> 6; /* blocks are 64-byte aligned */
    x *= 0x9e3779b97f4a7c15ull;
    return (size_t)(x >> 32) & (cap - 1);
}

static void set_insert_nogrow(void *p)
{
    size_t i = hash(p, mem.cap);
    while (mem.slot[i])
        i = (i + 1) & (mem.cap - 1);
    mem.slot[i] = p;
    mem.n++;
}

/* false when out of memory (lock held). */
static bool set_insert(void *p)
{
    if (2 * (mem.n + 1) > mem.cap) {
        size_t cap = mem.cap ? 2 * mem.cap : 64;
        void **old = mem.slot;
        size_t oldcap = mem.cap;
        void **slot = calloc(cap, sizeof *slot);
        if (!slot)
            return false;
        mem.slot = slot;
        mem.cap = cap;
        mem.n = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i])
                set_insert_nogrow(old[i]);
        free(old);
    }
    set_insert_nogrow(p);
    return true;
}

/* Remove p; false if it is not in the set (lock held). */
static bool set_remove(void *p)
{
    if (!mem.cap)
        return false;
    size_t i = hash(p, mem.cap);
    while (mem.slot[i] != p) {
        if (!mem.slot[i])
            return false;
        i = (i + 1) & (mem.cap - 1);
    }
    mem.slot[i] = NULL;
    mem.n--;
    /* Move back the entries of the probe run that follows. */
    size_t j = i;
    for (;;) {
        j = (j + 1) & (mem.cap - 1);
        if (!mem.slot[j])
            break;
        size_t h = hash(mem.slot[j], mem.cap);
        /* Entry j may fill hole i unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            mem.slot[i] = mem.slot[j];
            mem.slot[j] = NULL;
            i = j;
        }
    }
    return true;
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    PM_CHECK_INIT("MPI_Alloc_mem");
    if (size < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Alloc_mem: size %td < 0", size);
    /* No hints are understood, but the info must be a valid object. */
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO, "MPI_Alloc_mem: invalid info object %#x",
                        (unsigned)info);
    if (!baseptr)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Alloc_mem: baseptr is NULL");
    if ((uint64_t)size > (uint64_t)PTRDIFF_MAX - PM_MEM_ALIGN)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem: cannot allocate %td bytes",
                        size);
    /* Size 0 still gets a distinct block, which MPI_Free_mem accepts. */
    size_t bytes = ((size_t)size + PM_MEM_ALIGN - 1) & ~(size_t)(PM_MEM_ALIGN - 1);
    if (bytes == 0)
        bytes = PM_MEM_ALIGN;
    char *raw = aligned_alloc(PM_MEM_ALIGN, PM_MEM_ALIGN + bytes);
    if (!raw)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem: cannot allocate %td bytes",
                        size);
    void *p = raw + PM_MEM_ALIGN;
    struct pm_mem_head *head = (struct pm_mem_head *)(void *)raw;
    head->reg = NULL;
    if ((size_t)size >= PM_MEM_REGISTER && proust_mem_register(pm_session, p, (size_t)size,
                                                                &head->reg) != PROUST_OK)
        head->reg = NULL; /* no rail can: sends register as they go */
    pm_lock(&mem.lock);
    bool ok = set_insert(p);
    pm_unlock(&mem.lock);
    if (!ok) {
        if (head->reg)
            proust_mem_release(head->reg);
        free(raw);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Alloc_mem: out of memory");
    }
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}
PM_WEAK(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    PM_CHECK_INIT("MPI_Free_mem");
    if (!base)
        return MPI_SUCCESS; /* like free(NULL) */
    pm_lock(&mem.lock);
    bool ok = set_remove(base);
    pm_unlock(&mem.lock);
    if (!ok)
        return pm_error(MPI_COMM_NULL, MPI_ERR_BASE,
                        "MPI_Free_mem: %p was not allocated by MPI_Alloc_mem (or already freed)",
                        base);
    char *raw = (char *)base - PM_MEM_ALIGN;
    struct pm_mem_head *head = (struct pm_mem_head *)(void *)raw;
    if (head->reg)
        proust_mem_release(head->reg);
    free(raw);
    return MPI_SUCCESS;
}
PM_WEAK(Free_mem)
