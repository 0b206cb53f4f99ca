/*
 * comm_create.c — making communicators from others: MPI_Comm_dup,
 * MPI_Comm_dup_with_info, MPI_Comm_create, MPI_Comm_create_group,
 * MPI_Comm_split and MPI_Comm_split_type.
 *
 * Every constructor agrees on a context id over the parent (context.c).
 * Communicators made by one split share their context id: their groups are
 * disjoint, so their traffic can never meet.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

/* ---- Internal constructors ---------------------------------------------------- */

int pm_comm_create_impl(struct pm_comm *c, struct pm_group *g, struct pm_comm **out)
{
    uint16_t ctx;
    *out = NULL;
    int rc = pm_context_alloc(c, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    if (g->rank == MPI_UNDEFINED) {
        pm_context_free(ctx);
        return MPI_SUCCESS;
    }
    struct pm_comm *nc = pm_comm_new(g, NULL, ctx);
    if (!nc) {
        pm_context_free(ctx);
        return MPI_ERR_NO_MEM;
    }
    pm_comm_inherit(nc, c);
    *out = nc;
    return MPI_SUCCESS;
}

int pm_comm_create_first(struct pm_comm *c, int n, struct pm_comm **out)
{
    *out = NULL;
    struct pm_group *g = pm_group_new(n, c->local->world);
    if (!g)
        return MPI_ERR_NO_MEM;
    int rc = pm_comm_create_impl(c, g, out);
    pm_group_release(g);
    return rc;
}

struct split_entry {
    int key, rank;
};

static int split_cmp(const void *a, const void *b)
{
    const struct split_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int pm_comm_split_impl(struct pm_comm *c, int color, int key, struct pm_comm **out)
{
    *out = NULL;
    int n = c->size, mine[2] = {color, key};
    int *all = malloc((size_t)n * 2 * sizeof *all);
    struct split_entry *e = malloc((size_t)n * sizeof *e);
    int *world = malloc((size_t)n * sizeof *world);
    if (!all || !e || !world) {
        free(all);
        free(e);
        free(world);
        return MPI_ERR_NO_MEM;
    }
    struct pm_xg x;
    pm_xg_of_comm(&x, c);
    int rc = pm_xg_allgather(&x, mine, all, sizeof mine);
    uint16_t ctx = 0;
    if (rc == MPI_SUCCESS)
        rc = pm_context_alloc(c, &ctx);
    if (rc == MPI_SUCCESS && color == MPI_UNDEFINED) {
        pm_context_free(ctx);
    } else if (rc == MPI_SUCCESS) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (all[2 * i] == color)
                e[m++] = (struct split_entry){all[2 * i + 1], i};
        qsort(e, (size_t)m, sizeof *e, split_cmp);
        for (int i = 0; i < m; i++)
            world[i] = c->local->world[e[i].rank];
        struct pm_group *g = pm_group_new(m, world);
        struct pm_comm *nc = g ? pm_comm_new(g, NULL, ctx) : NULL;
        pm_group_release(g);
        if (!nc) {
            pm_context_free(ctx);
            rc = MPI_ERR_NO_MEM;
        } else {
            pm_comm_inherit(nc, c);
            *out = nc;
        }
    }
    free(all);
    free(e);
    free(world);
    return rc;
}

/* Is every member of g a member of c's local group? */
static bool group_within(const struct pm_group *g, const struct pm_group *of)
{
    char *in = calloc((size_t)pm_world_size, 1);
    if (!in)
        return false;
    for (int i = 0; i < of->size; i++)
        in[of->world[i]] = 1;
    bool ok = true;
    for (int i = 0; i < g->size && ok; i++)
        ok = g->world[i] >= 0 && g->world[i] < pm_world_size && in[g->world[i]];
    free(in);
    return ok;
}

/* ---- Duplication -------------------------------------------------------------- */

static int comm_dup(MPI_Comm comm, struct pm_comm *c, MPI_Comm *newcomm, const char *fn)
{
    struct pm_comm *nc = NULL;
    int rc;
    if (c->is_inter) {
        rc = pm_intercomm_dup(c, &nc);
    } else {
        uint16_t ctx;
        rc = pm_context_alloc(c, &ctx);
        if (rc == MPI_SUCCESS) {
            nc = pm_comm_new(c->local, NULL, ctx);
            if (!nc) {
                pm_context_free(ctx);
                rc = MPI_ERR_NO_MEM;
            }
        }
    }
    if (rc != MPI_SUCCESS)
        return pm_comm_fail(comm, rc, fn);
    pm_comm_inherit(nc, c);
    if (!pm_topo_copy(nc, c)) {
        pm_comm_discard(nc);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    /* Info hints are checked by the caller and ignored (comm.c). */
    rc = pm_attrs_copy_comm(c, nc);
    if (rc != MPI_SUCCESS) {
        pm_comm_discard(nc);
        return pm_error(comm, rc, "%s: an attribute copy callback failed (error %d)", fn, rc);
    }
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    PM_CHECK_INIT("MPI_Comm_dup");
    GET_COMM(c, comm, "MPI_Comm_dup");
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_dup: newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    return comm_dup(comm, c, newcomm, "MPI_Comm_dup");
}
PM_WEAK(Comm_dup)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    PM_CHECK_INIT("MPI_Comm_dup_with_info");
    GET_COMM(c, comm, "MPI_Comm_dup_with_info");
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "MPI_Comm_dup_with_info: invalid info handle %#x",
                        (unsigned)info);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_dup_with_info: newcomm is NULL");
    return comm_dup(comm, c, newcomm, "MPI_Comm_dup_with_info");
}
PM_WEAK(Comm_dup_with_info)

/* ---- Creation from groups -------------------------------------------------------- */

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    struct pm_group *g = pm_group_get(group);
    if (!g)
        return pm_error(comm, MPI_ERR_GROUP, "%s: invalid group handle %#x", fn,
                        (unsigned)group);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    if (!group_within(g, c->local))
        return pm_error(comm, MPI_ERR_GROUP,
                        "%s: the group is not a subset of the communicator's %sgroup", fn,
                        c->is_inter ? "local " : "");
    struct pm_comm *nc;
    int rc = c->is_inter ? pm_intercomm_create_sub(c, g, &nc) : pm_comm_create_impl(c, g, &nc);
    if (rc != MPI_SUCCESS)
        return pm_comm_fail(comm, rc, fn);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_create)

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_group";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    if (c->is_inter)
        return pm_error(comm, MPI_ERR_COMM, "%s: not allowed on an intercommunicator", fn);
    struct pm_group *g = pm_group_get(group);
    if (!g)
        return pm_error(comm, MPI_ERR_GROUP, "%s: invalid group handle %#x", fn,
                        (unsigned)group);
    if (tag < 0 || tag > PM_TAG_UB)
        return pm_error(comm, MPI_ERR_TAG, "%s: tag %d is outside 0..%d", fn, tag, PM_TAG_UB);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    if (!group_within(g, c->local))
        return pm_error(comm, MPI_ERR_GROUP, "%s: the group is not a subset of the "
                        "communicator's group", fn);
    if (g->rank == MPI_UNDEFINED)
        return MPI_SUCCESS; /* not a member: nothing to take part in */
    /* Only the members of g take part, in the user's tag's slot. */
    struct pm_comm *nc;
    int rc = pm_comm_create_in_slot(c, g, (uint32_t)tag, PM_KEY_GROUP(c->context, tag), &nc);
    if (rc != MPI_SUCCESS)
        return rc == MPI_ERR_NO_MEM ? pm_error(comm, rc, "%s: out of memory", fn)
                                    : pm_comm_fail(comm, rc, fn);
    pm_comm_inherit(nc, c);
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_create_group)

int pm_comm_create_in_slot(struct pm_comm *c, struct pm_group *g, uint32_t tag, uint64_t key,
                           struct pm_comm **out)
{
    struct pm_agree a = {
        .world = g->world,
        .size = g->size,
        .rank = g->rank,
        .fixed_tag = pm_group_slot(c, tag),
        .key = key,
    };
    uint16_t ctx;
    int rc = pm_context_agree(&a, 1, &ctx);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!(*out = pm_comm_new(g, NULL, ctx))) {
        pm_context_free(ctx);
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

uint32_t pm_stringtag_hash(const char *stringtag)
{
    uint64_t hash = pm_hash_string(stringtag);
    return (uint32_t)(hash ^ (hash >> 27) ^ (hash >> 54)) & PM_GROUP_TAG_MASK;
}

/* MPI-4 sessions: a communicator over `group` with no parent. Its members
 * agree on a context id on the world communicator's collective context,
 * with a hash of the string tag in the upper half of the sequence space
 * (as MPI_Comm_create_group's tag: a concurrent call there with the same
 * 27 bits from the same processes would have to collide). Errors go to the
 * handler given, which the new communicator keeps. */
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_create_from_group";
    PM_CHECK_INIT(fn);
    MPI_Errhandler eh = pm_errhandler_usable(errhandler, PM_ERRH_FOR_COMM)
                            ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    if (eh != errhandler)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_ERRHANDLER,
                                "%s: invalid error handler %#x for a communicator", fn,
                                (unsigned)errhandler);
    struct pm_group *g = pm_group_get(group);
    if (!g)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_GROUP, "%s: invalid group handle %#x",
                                fn, (unsigned)group);
    if (!stringtag || strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_ARG, "%s: stringtag is %s", fn,
                                stringtag ? "longer than MPI_MAX_STRINGTAG_LEN" : "NULL");
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_INFO, "%s: invalid info handle %#x",
                                fn, (unsigned)info);
    if (!newcomm)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    if (g->rank == MPI_UNDEFINED)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_GROUP,
                                "%s: the calling process is not in the group", fn);
    uint32_t tag = pm_stringtag_hash(stringtag);
    struct pm_comm *nc;
    int rc = pm_comm_create_in_slot(pm_comm_world, g, tag, PM_KEY_FROM_GROUP(tag), &nc);
    if (rc != MPI_SUCCESS)
        return pm_error_handler(eh, MPI_COMM_NULL, rc, "%s: %s", fn, rc == MPI_ERR_NO_MEM
                                ? "out of memory" : "agreeing on a context id failed");
    pm_errhandler_set(nc, errhandler, fn);
    nc->session = g->session;
    *newcomm = nc->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_create_from_group)

/* ---- Splitting -------------------------------------------------------------------- */

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    if (color < 0 && color != MPI_UNDEFINED)
        return pm_error(comm, MPI_ERR_ARG, "%s: color %d is negative (and not MPI_UNDEFINED)",
                        fn, color);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    struct pm_comm *nc;
    int rc = c->is_inter ? pm_intercomm_split(c, color, key, &nc)
                         : pm_comm_split_impl(c, color, key, &nc);
    if (rc != MPI_SUCCESS)
        return pm_comm_fail(comm, rc, fn);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_split)

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Comm_split_type";
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    bool hw = split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED ||
              split_type == MPI_COMM_TYPE_RESOURCE_GUIDED;
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED && !hw)
        return pm_error(comm, MPI_ERR_ARG,
                        "%s: unknown split_type %d (MPI_COMM_TYPE_SHARED, _HW_GUIDED, "
                        "_RESOURCE_GUIDED, _HW_UNGUIDED or MPI_UNDEFINED)", fn, split_type);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    if (!newcomm)
        return pm_error(comm, MPI_ERR_ARG, "%s: newcomm is NULL", fn);
    struct pm_comm *nc = NULL;
    int rc = pm_comm_split_by_type(c, split_type, key, info, &nc);
    if (rc != MPI_SUCCESS)
        return pm_comm_fail(comm, rc, fn);
    *newcomm = nc ? nc->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_split_type)
