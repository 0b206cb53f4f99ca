/*
 * coll_policy.c — choices of collective algorithms that every process must
 * make alike, agreed once when the instance starts.
 *
 * Crowded nodes (PROUST_COLL_CROWDED): with more ranks than cores on a
 * node, a rank waits at every step for partners that the others keep off
 * the cpus, so algorithms with fewer, larger steps win there even where
 * they move more bytes: a broadcast of 512 KiB by scatter + ring allgather
 * (8 ranks, 2 cores) took 3.4 times as long as by binomial tree
 * (docs/PERFORMANCE.md). Up to 2 ranks a core ("crowded"), a tree in
 * segments still pays: a rank waits for one other's turn at most, and an
 * inner node passes a segment on while the next one comes (4 ranks, 2
 * cores, 128 KiB - 1 MiB: 1.3-1.6 times faster than the whole message at
 * each step); beyond ("swamped"), every segment would wait for several
 * turns (8 ranks: 1.1-1.4 times slower), so the message goes whole. Each
 * process reads the variable and, for `auto`, its node's ranks and cores;
 * the processes then AND their "not crowded" and "not swamped" over the
 * world (through the launcher where it can), so that a job whose nodes or
 * environments differ still picks one algorithm everywhere (a mismatch
 * would deadlock). A third bit, agreed alike, says whether every rank
 * reaches every other through shared memory (pm_coll_shm_only: the
 * one-round small collectives of up to 8 ranks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll_algo.h"
#include "comm.h"

bool pm_coll_crowded;
bool pm_coll_swamped;

bool pm_coll_shm_only;

enum { CALM = 1, UNSWAMPED = 2, SHM_ONLY = 4 }; /* bits of the agreement: AND over the world */

/* Every rank of the job is reached through shared memory from here: the
 * one-round forms of the small collectives pay there (each rank waits once
 * for its turn at a cpu) and not over tcp, whose extra messages cost more
 * than the rounds they save (4 ranks on loopback: barrier, allgather,
 * allreduce 33-39 -> 44-47 us). */
static uint64_t shm_only_here(void)
{
    for (int r = 0; r < pm_world_size; r++) {
        const char *rail = NULL;
        if (proust_peer_rail(pm_session, r, &rail) != PROUST_OK || !rail ||
            (strcmp(rail, "shm") && strcmp(rail, "self")))
            return 0;
    }
    return SHM_ONLY;
}

/* This process's wish: PROUST_COLL_CROWDED (on: swamped, moderate:
 * crowded up to 2 ranks a core), and for auto its node. */
static uint64_t calm_here(void)
{
    const char *value = pm_config_str(PM_CFG_COLL_CROWDED);
    int on = proust_config_switch(value);
    if (on >= 0)
        return on ? 0 : CALM | UNSWAMPED;
    if (!strcasecmp(value, "moderate"))
        return UNSWAMPED;
    if (*value && strcasecmp(value, "auto") && pm_world_rank == 0)
        fprintf(stderr, "[proust mpi] PROUST_COLL_CROWDED=%s is not auto, on, moderate or off: "
                        "auto\n", value);
    int ranks = 1, cpus = 1;
    if (proust_node_load(pm_session, &ranks, &cpus) != PROUST_OK || cpus < 1)
        return CALM | UNSWAMPED;
    return (ranks > cpus ? 0 : CALM) | (ranks > 2 * cpus ? 0 : UNSWAMPED);
}

/* The AND of every process's bits. Through the launcher where it gathers
 * in one exchange: MPI_Init then makes no ring and waits no round
 * (proust_oob_allgather); else by messages, the first step on the world
 * (the same on all). */
static int agree(uint64_t *calm)
{
    uint8_t mine = (uint8_t)*calm, *all = malloc((size_t)pm_world_size);
    if (!all)
        return MPI_ERR_NO_MEM;
    int rc = proust_oob_allgather(pm_session, &mine, 1, all);
    for (int r = 0; rc == PROUST_OK && r < pm_world_size; r++)
        *calm &= all[r];
    free(all);
    if (rc == PROUST_OK)
        return MPI_SUCCESS;
    if (rc != PROUST_ERR_NOT_SUPPORTED)
        return pm_error_from_proust(rc);
    struct pm_xg x;
    pm_xg_of_comm(&x, pm_comm_world);
    return pm_xg_allreduce_band(&x, calm, 1);
}

int pm_coll_policy_init(void)
{
    uint64_t calm = calm_here() | shm_only_here();
    int rc = agree(&calm);
    pm_coll_crowded = rc == MPI_SUCCESS && !(calm & CALM);
    pm_coll_swamped = rc == MPI_SUCCESS && !(calm & UNSWAMPED);
    pm_coll_shm_only = rc == MPI_SUCCESS && (calm & SHM_ONLY);
    return rc;
}
