/*
 * comm_split_type.c — hardware and process-set domains: MPI_Comm_split_type's
 * colours and MPI_Get_hw_resource_info (MPI-4.1 §7.4.2, §11.4.3).
 *
 * MPI_COMM_TYPE_SHARED splits by host. MPI_COMM_TYPE_HW_GUIDED and
 * _RESOURCE_GUIDED split by the kind named in the info key
 * "mpi_hw_resource_type": "mpi_shared_memory", or an hwloc object type
 * ("NUMANode", "L3Cache", "Core", ... or as MPI_Get_hw_resource_info names
 * them, "hwloc://NUMANode"); _RESOURCE_GUIDED also by "mpi_pset_name" (a
 * session's process set: "mpi://WORLD", "mpi://SELF"). MPI_COMM_TYPE_HW_UNGUIDED
 * splits by the coarsest kind that cuts the group into strict subsets, and
 * names it in the info's "mpi_hw_resource_type".
 *
 * A process's key for a kind is its host name's hash and the logical index
 * of the domain of that kind holding all its cpus (proust_locality_many),
 * or 0 when it spans several (it then gets MPI_COMM_NULL, as the standard
 * says of a process that is in no such domain). Every process sends the
 * same array of keys in one allgather whatever its split_type -- ranks that
 * pass MPI_UNDEFINED send zeros -- so mixing a type with MPI_UNDEFINED is
 * one collective. The colour is the lowest rank with the same key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "comm.h"

/* From the whole host down to one hardware thread. */
static const char *const levels[] = {"Machine", "Package", "NUMANode", "L3Cache",
                                     "L2Cache", "L1Cache", "Core",     "PU"};
enum { NLEVELS = sizeof levels / sizeof levels[0] };

static uint64_t host_hash(void)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    return pm_hash_string(host);
}

#define HWLOC_URI "hwloc://"

static uint64_t domain_key(uint64_t host, unsigned index)
{
    uint64_t k = (host ^ ((uint64_t)index + 1) * 0x9e3779b97f4a7c15ull);
    return k ? k : 1;
}

/* This process's key for `kind` (0: not inside one domain of it, or an
 * unknown kind). */
static uint64_t key_of(const char *kind, uint64_t host)
{
    if (!strcasecmp(kind, "mpi_shared_memory"))
        return host | 1;
    if (!strncasecmp(kind, HWLOC_URI, strlen(HWLOC_URI)))
        kind += strlen(HWLOC_URI);
    unsigned index = 0;
    return proust_locality(kind, &index) == 1 ? domain_key(host, index) : 0;
}

/* This process's key for a process set (0: no such set). */
static uint64_t pset_key(const char *name)
{
    switch (pm_pset_index(name)) {
    case 0: return 1; /* mpi://WORLD: every process */
    case 1: return domain_key(0x5e1f, (unsigned)pm_world_rank); /* mpi://SELF */
    default: return 0;
    }
}

/* The guided split's key: from "mpi_hw_resource_type", or for
 * _RESOURCE_GUIDED "mpi_pset_name"; 0 without either. */
static uint64_t guided_key(MPI_Info info, bool psets, uint64_t host)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info == MPI_INFO_NULL)
        return 0;
    if (PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, value, &flag) ==
            MPI_SUCCESS && flag)
        return key_of(value, host);
    if (psets && PMPI_Info_get(info, "mpi_pset_name", MPI_MAX_INFO_VAL, value, &flag) ==
                     MPI_SUCCESS && flag)
        return pset_key(value);
    return 0;
}

/* Keys for every level at once (one look at the machine). */
static void level_keys(uint64_t host, uint64_t keys[NLEVELS])
{
    int found[NLEVELS];
    unsigned index[NLEVELS];
    if (proust_locality_many(levels, NLEVELS, found, index) != PROUST_OK) {
        memset(keys, 0, NLEVELS * sizeof *keys);
        return;
    }
    for (int l = 0; l < NLEVELS; l++)
        keys[l] = found[l] == 1 ? domain_key(host, index[l]) : 0;
}

/* The lowest rank whose key is `mine` (MPI_UNDEFINED for key 0). */
static int color_of(const uint64_t *keys, int n, int stride, uint64_t mine)
{
    if (!mine)
        return MPI_UNDEFINED;
    for (int i = 0; i < n; i++)
        if (keys[(size_t)i * stride] == mine)
            return i;
    return MPI_UNDEFINED;
}

/* Does this level cut the group into strict subsets? Not when every key
 * is 0 (nobody inside one domain), nor when all are the same domain. */
static bool cuts(const uint64_t *keys, int n, int stride)
{
    bool any = false, differ = false;
    for (int i = 0; i < n; i++) {
        uint64_t k = keys[(size_t)i * stride];
        any |= k != 0;
        differ |= k != keys[0];
    }
    return any && differ;
}

int pm_comm_split_by_type(struct pm_comm *c, int split_type, int key, MPI_Info info,
                          struct pm_comm **out)
{
    uint64_t host = host_hash();
    uint64_t mine[NLEVELS] = {0};
    if (split_type == MPI_COMM_TYPE_SHARED) {
        mine[0] = host | 1;
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED ||
               split_type == MPI_COMM_TYPE_RESOURCE_GUIDED) {
        /* no key, or a kind we do not know: 0, MPI_COMM_NULL */
        mine[0] = guided_key(info, split_type == MPI_COMM_TYPE_RESOURCE_GUIDED, host);
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        level_keys(host, mine);
    }
    /* An intercommunicator splits by one key per process (both groups
     * would have to agree on an unguided level: those get MPI_COMM_NULL). */
    if (c->is_inter)
        return pm_intercomm_split_shared(c, split_type == MPI_COMM_TYPE_HW_UNGUIDED ? 0 : mine[0],
                                         key, out);
    uint64_t *all = malloc((size_t)c->size * sizeof mine);
    if (!all)
        return MPI_ERR_NO_MEM;
    struct pm_xg x;
    pm_xg_of_comm(&x, c);
    int rc = pm_xg_allgather(&x, mine, all, sizeof mine);
    int color = MPI_UNDEFINED, level = -1;
    if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        for (int l = 0; l < NLEVELS && level < 0; l++)
            if (cuts(all + l, c->size, NLEVELS)) {
                color = color_of(all + l, c->size, NLEVELS, mine[l]);
                level = l;
            }
    } else if (rc == MPI_SUCCESS && split_type != MPI_UNDEFINED) {
        color = color_of(all, c->size, NLEVELS, mine[0]);
    }
    free(all);
    if (rc == MPI_SUCCESS)
        rc = pm_comm_split_impl(c, color, key, out);
    /* MPI-4.0 §7.4.2: an unguided split names the kind it chose */
    if (rc == MPI_SUCCESS && *out && level >= 0 && info != MPI_INFO_NULL) {
        char uri[64];
        snprintf(uri, sizeof uri, HWLOC_URI "%s", levels[level]);
        PMPI_Info_set(info, "mpi_hw_resource_type", uri);
    }
    return rc;
}

/* Each kind of domain this machine has, as "hwloc://<kind>": "true" when
 * the process is inside one domain of it, "false" when it spans several. */
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    static const char fn[] = "MPI_Get_hw_resource_info";
    PM_CHECK_INIT(fn);
    if (!hw_info)
        return pm_error(MPI_COMM_SELF, MPI_ERR_ARG, "%s: hw_info is NULL", fn);
    *hw_info = MPI_INFO_NULL;
    int found[NLEVELS];
    unsigned index[NLEVELS];
    if (proust_locality_many(levels, NLEVELS, found, index) != PROUST_OK)
        return pm_error(MPI_COMM_SELF, MPI_ERR_OTHER, "%s: hwloc cannot read this machine's "
                        "topology", fn);
    MPI_Info info;
    int rc = PMPI_Info_create(&info);
    for (int l = 0; l < NLEVELS && rc == MPI_SUCCESS; l++) {
        if (found[l] < 0)
            continue;
        char uri[64];
        snprintf(uri, sizeof uri, HWLOC_URI "%s", levels[l]);
        rc = PMPI_Info_set(info, uri, found[l] == 1 ? "true" : "false");
    }
    if (rc != MPI_SUCCESS) {
        PMPI_Info_free(&info);
        return pm_error(MPI_COMM_SELF, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    *hw_info = info;
    return MPI_SUCCESS;
}
PM_WEAK(Get_hw_resource_info)
