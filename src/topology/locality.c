/*
 * locality.c — proust_locality: which hardware domain of a given kind the
 * calling process runs in (MPI_Comm_split_type's MPI_COMM_TYPE_HW_GUIDED,
 * _RESOURCE_GUIDED and _UNGUIDED, MPI_Get_hw_resource_info). Loads this
 * machine's topology for the question, caches included: the session's own
 * (placement) has no caches and is not loaded at all on a one-node machine,
 * and the question is asked rarely.
 */
#include <hwloc.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "proust.h"

/* Kinds by name, hwloc's own ("NUMANode", "L3Cache", ...) or MPI's. */
static int kind_of(const char *name, hwloc_obj_type_t *type, union hwloc_obj_attr_u *attr)
{
    static const struct { const char *name; hwloc_obj_type_t type; } alias[] = {
        {"socket", HWLOC_OBJ_PACKAGE}, {"hwthread", HWLOC_OBJ_PU}, {"numa", HWLOC_OBJ_NUMANODE},
    };
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (!strcasecmp(name, alias[i].name)) {
            *type = alias[i].type;
            return 0;
        }
    /* hwloc's parser takes abbreviations ("n..."): only whole names here,
     * a cache with its level and kind ("L2Cache", "l1dcache") */
    size_t n = strlen(name);
    bool cache = n >= 7 && (name[0] == 'l' || name[0] == 'L') && name[1] >= '1' &&
                 name[1] <= '5' && !strcasecmp(name + n - 5, "cache") &&
                 (n == 7 || (n == 8 && strchr("uidUID", name[2])));
    if (hwloc_type_sscanf(name, type, attr, sizeof *attr) != 0 ||
        (!cache && strcasecmp(name, hwloc_obj_type_string(*type)) != 0))
        return -1;
    /* I/O and misc objects hold no cpus: not a domain a process runs in */
    return hwloc_obj_type_is_io(*type) || *type == HWLOC_OBJ_MISC ||
                   *type == HWLOC_OBJ_MEMCACHE
               ? -1
               : 0;
}

static bool attr_matches(hwloc_obj_t o, hwloc_obj_type_t type, const union hwloc_obj_attr_u *a)
{
    if (!hwloc_obj_type_is_cache(type) || !a->cache.depth)
        return true;
    return o->attr->cache.depth == a->cache.depth &&
           (a->cache.type == HWLOC_OBJ_CACHE_UNIFIED || o->attr->cache.type == a->cache.type);
}

int proust_locality_many(const char *const kinds[], int n, int found[], unsigned index[])
{
    if (n < 0 || (n > 0 && (!kinds || !found || !index)))
        return PROUST_ERR_INVALID;
    for (int i = 0; i < n; i++) {
        hwloc_obj_type_t type;
        union hwloc_obj_attr_u attr;
        if (!kinds[i] || kind_of(kinds[i], &type, &attr) != 0)
            return PROUST_ERR_INVALID;
    }
    hwloc_topology_t t;
    if (hwloc_topology_init(&t) != 0)
        return PROUST_ERR_SYS;
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    int rc = PROUST_ERR_SYS;
    if (mine && hwloc_topology_load(t) == 0) {
        /* where the process may run: its binding, else all it is allowed */
        if (hwloc_get_cpubind(t, mine, HWLOC_CPUBIND_PROCESS) != 0)
            hwloc_bitmap_copy(mine, hwloc_topology_get_allowed_cpuset(t));
        hwloc_bitmap_and(mine, mine, hwloc_topology_get_topology_cpuset(t));
        rc = PROUST_OK;
        for (int i = 0; i < n; i++) {
            hwloc_obj_type_t type;
            union hwloc_obj_attr_u attr;
            memset(&attr, 0, sizeof attr);
            kind_of(kinds[i], &type, &attr);
            found[i] = -1;
            /* NUMA nodes hang beside the cpu tree: compare cpusets, for all */
            for (hwloc_obj_t o = NULL; (o = hwloc_get_next_obj_by_type(t, type, o)) != NULL;) {
                if (!o->cpuset || !attr_matches(o, type, &attr))
                    continue;
                if (found[i] < 0)
                    found[i] = 0;
                if (!hwloc_bitmap_iszero(mine) && hwloc_bitmap_isincluded(mine, o->cpuset)) {
                    index[i] = o->logical_index;
                    found[i] = 1;
                    break;
                }
            }
        }
    }
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(t);
    return rc;
}

int proust_locality(const char *kind, unsigned *index)
{
    if (!kind || !index)
        return PROUST_ERR_INVALID;
    int found = 0;
    int rc = proust_locality_many(&kind, 1, &found, index);
    return rc != PROUST_OK ? rc : found == 1;
}
