/*
 * coll_policy.c — choices of collective algorithms that every process must
 * make alike, agreed once when the instance starts.
 *
 * Crowded nodes (PROUST_COLL_CROWDED): with more ranks than cores on a
 * node, a rank waits at every step for partners that the others keep off
 * the cpus, so algorithms with fewer, larger steps win there even where
 * they move more bytes: a broadcast of 512 KiB by scatter + ring allgather
 * (8 ranks, 2 cores) took 3.4 times as long as by binomial tree
 * (docs/PERFORMANCE.md). Each process reads the variable and, for `auto`,
 * whether its node is oversubscribed; the processes then AND their "not
 * crowded" over the world, so that a job whose nodes or environments
 * differ still picks one algorithm everywhere (a mismatch would deadlock).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "coll_algo.h"
#include "comm.h"

bool pm_coll_crowded;

/* This process's wish: PROUST_COLL_CROWDED, and for auto its node. */
static bool crowded_here(void)
{
    const char *value = pm_config_str(PM_CFG_COLL_CROWDED);
    int on = proust_config_switch(value);
    if (on >= 0)
        return on;
    if (*value && strcasecmp(value, "auto") && pm_world_rank == 0)
        fprintf(stderr, "[proust mpi] PROUST_COLL_CROWDED=%s is not auto, on or off: auto\n",
                value);
    return proust_node_oversubscribed(pm_session) == 1;
}

int pm_coll_policy_init(void)
{
    uint64_t calm = !crowded_here();
    struct pm_xg x;
    pm_xg_of_comm(&x, pm_comm_world); /* the first step on the world: same on all */
    int rc = pm_xg_allreduce_band(&x, &calm, 1);
    pm_coll_crowded = rc == MPI_SUCCESS && !(calm & 1);
    return rc;
}
