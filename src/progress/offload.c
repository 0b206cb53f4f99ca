/*
 * offload.c — pieces of communication work that idle threads may run.
 *
 * A large copy (a rendezvous get) is cut into jobs; the thread that cut it
 * runs the first piece and queues the others, and whoever is idle — a
 * progress thread, an application thread waiting in the library — takes
 * them, so several cores copy one message. Queues are shaped like the
 * machine: one per NUMA node (a job goes to the node of the core that
 * submits it, near the memory it touches) and idle threads look at their
 * own node's queue first, then steal from the others.
 */
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "progress/progress.h"

struct proust__jobq {
    _Alignas(64) proust__lock_t lock;
    struct proust__job *head, *tail;
};

int proust__offload_init(struct proust__progress *p, hwloc_topology_t topo)
{
    size_t piece = 0;
    if (proust__config_size(PROUST_CFG_OFFLOAD_BYTES, &piece) != PROUST_OK)
        return PROUST_ERR_INVALID;
    /* someone must be idle to help: a progress thread on a second core */
    if (p->mode != PROUST__PROGRESS_THREAD || p->ncpus < 2 || piece == 0)
        return PROUST_OK;
    int nodes = 1;
    if (topo) {
        nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        if (nodes < 1)
            nodes = 1;
        p->cpu_queue = calloc((size_t)p->ncpus, sizeof *p->cpu_queue);
        for (int i = 0; p->cpu_queue && i < nodes; i++) {
            hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
            int cpu;
            hwloc_bitmap_foreach_begin(cpu, node->cpuset)
            {
                if (cpu < p->ncpus)
                    p->cpu_queue[cpu] = i;
            }
            hwloc_bitmap_foreach_end();
        }
    }
    /* cache-line aligned (the type says so): calloc would not be */
    p->queues = aligned_alloc(_Alignof(struct proust__jobq), (size_t)nodes * sizeof *p->queues);
    if (!p->queues)
        return PROUST_ERR_NOMEM;
    memset(p->queues, 0, (size_t)nodes * sizeof *p->queues);
    for (int i = 0; i < nodes; i++)
        proust__lock_init(&p->queues[i].lock);
    p->nqueues = nodes;
    p->offload_piece = piece;
    return PROUST_OK;
}

void proust__offload_destroy(struct proust__progress *p)
{
    free(p->queues);
    free(p->cpu_queue);
    p->queues = NULL;
    p->cpu_queue = NULL;
    p->nqueues = 0;
}

static int my_queue(const struct proust__progress *p)
{
    int cpu = sched_getcpu();
    return (p->cpu_queue && cpu >= 0 && cpu < p->ncpus) ? p->cpu_queue[cpu] : 0;
}

void proust__offload_submit(struct proust__progress *p, struct proust__job *first,
                            struct proust__job *last, int n)
{
    struct proust__jobq *q = &p->queues[my_queue(p)];
    last->next = NULL;
    proust__lock(&q->lock);
    if (q->tail)
        q->tail->next = first;
    else
        __atomic_store_n(&q->head, first, __ATOMIC_RELAXED); /* peeked without the lock */
    q->tail = last;
    proust__unlock(&q->lock);
    atomic_fetch_add_explicit(&p->jobs_queued, n, memory_order_seq_cst);
    /* helpers: napping progress threads, or one blocked in the wait set */
    proust__threads_kick(p);
    if (atomic_load_explicit(&p->pt_blocking, memory_order_seq_cst))
        proust__kick(p);
}

static struct proust__job *take(struct proust__jobq *q)
{
    if (!__atomic_load_n(&q->head, __ATOMIC_RELAXED))
        return NULL;
    proust__lock(&q->lock);
    struct proust__job *j = q->head;
    if (j) {
        __atomic_store_n(&q->head, j->next, __ATOMIC_RELAXED);
        if (!j->next)
            q->tail = NULL;
    }
    proust__unlock(&q->lock);
    return j;
}

int proust__offload_run(struct proust__progress *p)
{
    if (!atomic_load_explicit(&p->jobs_queued, memory_order_relaxed))
        return 0;
    int mine = my_queue(p), ran = 0;
    for (int k = 0; k < p->nqueues; k++) {
        struct proust__job *j;
        while ((j = take(&p->queues[(mine + k) % p->nqueues]))) {
            atomic_fetch_sub_explicit(&p->jobs_queued, 1, memory_order_relaxed);
            j->run(j);
            ran++;
        }
    }
    return ran;
}
