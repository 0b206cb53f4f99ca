/*
 * bind.c — --bind-to: the cpus each rank runs on, decided in the launcher
 * before the ranks start (as mpirun --bind-to and hydra's -bind-to do).
 * Ranks are mapped by core: rank i on the i-th core of the cpus this
 * launcher may use (wrapping when there are more ranks than cores), then
 * bound to the object of the asked type that holds that core. The library
 * sees this as the user's binding and keeps it (PROUST_PLACEMENT=auto).
 */
#include <errno.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proustrun.h"

static const char *const names[] = {
    [PR_BIND_NONE] = "none",       [PR_BIND_HWTHREAD] = "hwthread", [PR_BIND_CORE] = "core",
    [PR_BIND_L3CACHE] = "l3cache", [PR_BIND_NUMA] = "numa",         [PR_BIND_PACKAGE] = "package",
};

int pr_bind_parse(const char *text)
{
    if (strcmp(text, "socket") == 0 || strcmp(text, "board") == 0)
        return PR_BIND_PACKAGE; /* Open MPI / hydra spellings */
    if (strcmp(text, "numanode") == 0)
        return PR_BIND_NUMA;
    if (strcmp(text, "l3") == 0)
        return PR_BIND_L3CACHE;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

/* The cpus of the object of `kind` that holds `pu`. */
static int bind_set(hwloc_topology_t topo, hwloc_obj_t pu, int kind, hwloc_bitmap_t out)
{
    hwloc_obj_t o = NULL;
    switch (kind) {
    case PR_BIND_HWTHREAD:
        o = pu;
        break;
    case PR_BIND_CORE:
        o = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
        break;
    case PR_BIND_L3CACHE:
        o = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_L3CACHE, pu);
        break;
    case PR_BIND_PACKAGE:
        o = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pu);
        break;
    case PR_BIND_NUMA:
        /* NUMA nodes are memory children: their cpus are those of the
         * nodes in the PU's nodeset */
        return hwloc_cpuset_from_nodeset(topo, out, pu->nodeset);
    }
    if (!o)
        o = hwloc_get_root_obj(topo); /* no such level here: the machine */
    return hwloc_bitmap_copy(out, o->cpuset);
}

int pr_bind_plan(struct pr_job *job)
{
    int n = job->opt.nprocs, kind = job->opt.bind_to;
    if (kind == PR_BIND_NONE)
        return 0;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0) {
        pr_err("--bind-to %s: cannot read this machine's topology (hwloc): %s", names[kind],
               strerror(errno));
        return 1;
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
    int rc = 0;
    if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) != 0)
        hwloc_bitmap_copy(mine, hwloc_topology_get_allowed_cpuset(topo));
    /* slots: cores (hwthread: PUs) inside what the launcher may use */
    hwloc_obj_type_t slot_type = kind == PR_BIND_HWTHREAD ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    int nslots = hwloc_get_nbobjs_inside_cpuset_by_type(topo, mine, slot_type);
    if (nslots <= 0) {
        slot_type = HWLOC_OBJ_PU;
        nslots = hwloc_get_nbobjs_inside_cpuset_by_type(topo, mine, slot_type);
    }
    job->bind_sets = calloc((size_t)n, sizeof *job->bind_sets);
    if (!job->bind_sets || nslots <= 0) {
        pr_err("--bind-to %s: %s", names[kind], nslots <= 0 ? "no cpu to bind to" : "out of memory");
        rc = 1;
    }
    if (rc == 0 && n > nslots && kind <= PR_BIND_CORE)
        fprintf(stderr, "proustrun: --bind-to %s: %d ranks on %d %s: ranks share them\n",
                names[kind], n, nslots, slot_type == HWLOC_OBJ_PU ? "hardware threads" : "cores");
    for (int i = 0; rc == 0 && i < n; i++) {
        hwloc_obj_t slot = hwloc_get_obj_inside_cpuset_by_type(topo, mine, slot_type,
                                                               (unsigned)(i % nslots));
        hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, slot->cpuset, HWLOC_OBJ_PU, 0);
        bind_set(topo, pu ? pu : slot, kind, set);
        hwloc_bitmap_and(set, set, mine);
        if (hwloc_cpuset_to_glibc_sched_affinity(topo, set, &job->bind_sets[i],
                                                 sizeof job->bind_sets[i]) != 0) {
            pr_err("--bind-to %s: cannot express rank %d's cpus", names[kind], i);
            rc = 1;
        }
        if (job->opt.report_bindings) {
            char text[256];
            hwloc_bitmap_list_snprintf(text, sizeof text, set);
            fprintf(stderr, "proustrun: rank %d bound to cpus %s (%s)\n", i, text, names[kind]);
        }
    }
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    if (rc != 0) {
        free(job->bind_sets);
        job->bind_sets = NULL;
    }
    return rc;
}
