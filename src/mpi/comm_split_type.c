/*
 * comm_split_type.c — MPI_Comm_split_type's colours: MPI_COMM_TYPE_SHARED
 * (one host), and by hardware domain (MPI-4.0 §7.4.2):
 * MPI_COMM_TYPE_HW_GUIDED splits by the kind named in the info key
 * "mpi_hw_resource_type" ("mpi_shared_memory", or an hwloc object type:
 * "Package", "NUMANode", "L3Cache", "Core", ...); MPI_COMM_TYPE_HW_UNGUIDED
 * by the coarsest kind that cuts the group into strict subsets.
 *
 * A process's key for a kind is its host name's hash and the logical index
 * of the domain of that kind holding all its cpus (proust_locality), or 0
 * when it spans several (it then gets MPI_COMM_NULL, as the standard says
 * of a process that is in no such domain). Every process sends the same
 * array of keys in one allgather whatever its split_type -- ranks that pass
 * MPI_UNDEFINED send zeros -- so mixing a type with MPI_UNDEFINED is one
 * collective. The colour is the lowest rank with the same key.
 */
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

/* This process's key for `kind` (0: not inside one domain of it, or an
 * unknown kind). */
static uint64_t key_of(const char *kind, uint64_t host)
{
    if (!strcasecmp(kind, "mpi_shared_memory"))
        return host | 1;
    unsigned index = 0;
    if (proust_locality(kind, &index) != 1)
        return 0;
    uint64_t k = (host ^ ((uint64_t)index + 1) * 0x9e3779b97f4a7c15ull);
    return k ? k : 1;
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
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        char kind[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        mine[0] = 0; /* no key, or a kind we do not know: MPI_COMM_NULL */
        if (info != MPI_INFO_NULL &&
            PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, kind, &flag) ==
                MPI_SUCCESS && flag)
            mine[0] = key_of(kind, host);
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        for (int l = 0; l < NLEVELS; l++)
            mine[l] = key_of(levels[l], host);
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
    int color = MPI_UNDEFINED;
    if (rc == MPI_SUCCESS &&
        (split_type == MPI_COMM_TYPE_SHARED || split_type == MPI_COMM_TYPE_HW_GUIDED)) {
        color = color_of(all, c->size, NLEVELS, mine[0]);
    } else if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        for (int l = 0; l < NLEVELS; l++)
            if (cuts(all + l, c->size, NLEVELS)) {
                color = color_of(all + l, c->size, NLEVELS, mine[l]);
                break;
            }
    }
    free(all);
    return rc == MPI_SUCCESS ? pm_comm_split_impl(c, color, key, out) : rc;
}
