/*
 * comm.c — the communicator object: creation, reference counts, the
 * predefined MPI_COMM_WORLD and MPI_COMM_SELF, and the local queries and
 * settings (size, rank, compare, groups, free, names, info hints,
 * intercommunicator queries).
 *
 * A communicator is freed when its last reference goes: the user's handle
 * holds one (MPI_Comm_free drops it and invalidates the handle at once),
 * pending operations hold others. Its context id is given back only then,
 * so traffic still in flight can never meet a successor's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

struct pm_comm *pm_comm_world, *pm_comm_self;

void pm_comm_set_context(struct pm_comm *c, uint16_t context)
{
    c->context = context;
    c->tag_pt2pt = (uint64_t)(context << 1) << PM_CTX_SHIFT;
    c->tag_coll = (uint64_t)((context << 1) | 1) << PM_CTX_SHIFT;
}

static struct pm_comm *comm_alloc(struct pm_group *local, struct pm_group *remote,
                                  uint16_t context)
{
    struct pm_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    pm_group_retain(local);
    c->local = local;
    c->is_inter = remote != NULL;
    if (remote)
        pm_group_retain(remote);
    c->remote = remote ? remote : local;
    c->rank = local->rank;
    c->size = local->size;
    pm_comm_set_context(c, context);
    c->tag_src = (uint64_t)(c->rank >= 0 ? c->rank : 0) << PM_TAG_BITS;
    atomic_init(&c->coll_seq, 0);
    c->errhandler = MPI_ERRORS_ARE_FATAL;
    pm_errhandler_retain(c->errhandler);
    atomic_init(&c->errh_default, true);
    atomic_flag_clear(&c->attr_lock);
    c->info = MPI_INFO_NULL;
    return c;
}

struct pm_comm *pm_comm_new(struct pm_group *local, struct pm_group *remote, uint16_t context)
{
    struct pm_comm *c = comm_alloc(local, remote, context);
    if (!c)
        return NULL;
    int h = pm_table_add(&pm_comm_table, c);
    if (!h) {
        /* The caller still owns the context id. */
        c->context = 0;
        pm_comm_release(c);
        return NULL;
    }
    c->handle = h;
    return c;
}

void pm_comm_destroy(struct pm_comm *c)
{
    if (c->local_comm) {
        /* The local intracommunicator of an intercommunicator is private to
         * it: its handle goes with it. */
        pm_table_remove(&pm_comm_table, c->local_comm->handle);
        pm_comm_release(c->local_comm);
    }
    pm_group_release(c->local);
    if (c->is_inter)
        pm_group_release(c->remote);
    pm_cart_free(c->cart);
    pm_graph_free(c->graph);
    pm_dist_graph_free(c->dgraph);
    pm_errhandler_release(c->errhandler);
    pm_context_free(c->context);
    pm_bbuf_free(atomic_load(&c->bbuf)); /* its messages held references: all left */
    free(c);
}

void pm_comm_discard(struct pm_comm *c)
{
    pm_attrs_delete_comm(c);
    pm_table_remove(&pm_comm_table, c->handle);
    pm_comm_release(c);
}

void pm_comm_inherit(struct pm_comm *nc, const struct pm_comm *parent)
{
    MPI_Errhandler h = parent->errhandler;
    pm_errhandler_retain(h);
    MPI_Errhandler old = nc->errhandler;
    nc->errhandler = h;
    pm_errhandler_release(old);
    atomic_store_explicit(&nc->errh_default, atomic_load_explicit(&parent->errh_default,
                                                                  memory_order_relaxed),
                          memory_order_relaxed);
    nc->session = parent->session;
}

int pm_comm_invalid(MPI_Comm comm, const char *fname)
{
    if (comm == MPI_COMM_NULL)
        return pm_error(MPI_COMM_NULL, MPI_ERR_COMM, "%s: the communicator is MPI_COMM_NULL",
                        fname);
    return pm_error(MPI_COMM_NULL, MPI_ERR_COMM, "%s: invalid communicator handle %#x", fname,
                    (unsigned)comm);
}

int pm_comm_fail(MPI_Comm comm, int rc, const char *fname)
{
    const char *why;
    switch (rc) {
    case MPI_ERR_OTHER:
        why = "no context id is free in every process (too many communicators exist)";
        break;
    case MPI_ERR_NO_MEM: why = "out of memory"; break;
    case MPI_ERR_INTERN: why = "the processes disagree (mismatched collective calls?)"; break;
    default: why = "communication with the other processes failed"; break;
    }
    return pm_error(comm, rc, "%s: %s (error class %d)", fname, why, rc);
}

/* A predefined communicator at table index `index`. */
static struct pm_comm *comm_predefined(int index, int n, const int *world, uint16_t context,
                                       const char *name)
{
    struct pm_group *g = pm_group_new(n, world);
    struct pm_comm *c = g ? comm_alloc(g, NULL, context) : NULL;
    if (!c) {
        fprintf(stderr, "[proust mpi] fatal error: MPI_Init: out of memory creating %s\n", name);
        exit(1);
    }
    pm_group_release(g); /* the communicator holds it */
    c->handle = PROUST_MPI_KIND_COMM | index;
    c->predefined = true;
    pm_strlcpy(c->name, name, sizeof c->name);
    pm_table_set(&pm_comm_table, index, c);
    return c;
}

void pm_comms_init(void)
{
    int *world = malloc((size_t)pm_world_size * sizeof *world);
    if (!world) {
        fprintf(stderr, "[proust mpi] fatal error: MPI_Init: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < pm_world_size; i++)
        world[i] = i;
    pm_comm_world = comm_predefined(0, pm_world_size, world, 0, "MPI_COMM_WORLD");
    free(world);
    pm_comm_self = comm_predefined(1, 1, &pm_world_rank, 1, "MPI_COMM_SELF");
}

void pm_comms_finalize(void)
{
    /* MPI-3.1 §8.7.1: MPI_Finalize first frees MPI_COMM_SELF, which runs the
     * delete callbacks of its attributes (last set, first deleted). */
    if (pm_comm_self)
        pm_attrs_delete_comm(pm_comm_self);
    if (pm_comm_world)
        pm_attrs_delete_comm(pm_comm_world);
}

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    PM_CHECK_INIT("MPI_Comm_size");
    GET_COMM(c, comm, "MPI_Comm_size");
    if (!size)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_size: size is NULL");
    *size = c->size;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_size)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    PM_CHECK_INIT("MPI_Comm_rank");
    GET_COMM(c, comm, "MPI_Comm_rank");
    if (!rank)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_rank: rank is NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_rank)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    PM_CHECK_INIT("MPI_Comm_compare");
    GET_COMM(a, comm1, "MPI_Comm_compare");
    GET_COMM(b, comm2, "MPI_Comm_compare");
    if (!result)
        return pm_error(comm1, MPI_ERR_ARG, "MPI_Comm_compare: result is NULL");
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int r = pm_group_compare(a->local, b->local);
    if (r >= 0 && a->is_inter) {
        int r2 = pm_group_compare(a->remote, b->remote);
        r = r2 < 0 ? r2 : (r2 > r ? r2 : r);
    }
    if (r < 0)
        return pm_error(comm1, MPI_ERR_NO_MEM, "MPI_Comm_compare: out of memory");
    /* Distinct communicators are at best congruent (another context). */
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_compare)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    PM_CHECK_INIT("MPI_Comm_group");
    GET_COMM(c, comm, "MPI_Comm_group");
    if (!group)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_group: group is NULL");
    return pm_group_handle_of(c->local, c->session, group, "MPI_Comm_group");
}
PM_WEAK(Comm_group)

int PMPI_Comm_free(MPI_Comm *comm)
{
    PM_CHECK_INIT("MPI_Comm_free");
    if (!comm)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Comm_free: comm is NULL");
    GET_COMM(c, *comm, "MPI_Comm_free");
    if (c == pm_comm_world || c == pm_comm_self)
        return pm_error(*comm, MPI_ERR_COMM, "MPI_Comm_free: %s cannot be freed",
                        c == pm_comm_world ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
    int rc = pm_attrs_delete_comm(c);
    if (rc != MPI_SUCCESS)
        return pm_error(*comm, rc,
                        "MPI_Comm_free: an attribute delete callback failed (error %d); "
                        "the communicator is not freed", rc);
    pm_table_remove(&pm_comm_table, *comm);
    *comm = MPI_COMM_NULL;
    pm_comm_release(c);
    return MPI_SUCCESS;
}
PM_WEAK(Comm_free)

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    PM_CHECK_INIT("MPI_Comm_set_name");
    GET_COMM(c, comm, "MPI_Comm_set_name");
    if (!comm_name)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_set_name: comm_name is NULL");
    pm_lock(&c->attr_lock);
    pm_strlcpy(c->name, comm_name, sizeof c->name);
    pm_unlock(&c->attr_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    PM_CHECK_INIT("MPI_Comm_get_name");
    if (comm == MPI_COMM_NULL && comm_name && resultlen) { /* MPI-4.1: named too */
        *resultlen = pm_strlcpy(comm_name, "MPI_COMM_NULL", MPI_MAX_OBJECT_NAME);
        return MPI_SUCCESS;
    }
    GET_COMM(c, comm, "MPI_Comm_get_name");
    if (!comm_name || !resultlen)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_get_name: comm_name or resultlen is NULL");
    pm_lock(&c->attr_lock);
    *resultlen = pm_strlcpy(comm_name, c->name, MPI_MAX_OBJECT_NAME);
    pm_unlock(&c->attr_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Comm_get_name)

bool pm_info_valid(MPI_Info info)
{
    return info == MPI_INFO_ENV || pm_table_get(&pm_info_table, info) != NULL;
}

/* Info hints (MPI-3.1 §6.4.4): MPI_Comm_get_info returns the hints
 * "actually used"; Proust MPI acts on none of the MPI-3.1 communicator
 * hints (there are no predefined ones), so hints are checked and ignored
 * and the info returned is empty, as MPICH does for unknown keys. */
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    PM_CHECK_INIT("MPI_Comm_set_info");
    GET_COMM(c, comm, "MPI_Comm_set_info");
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "MPI_Comm_set_info: invalid info handle %#x",
                        (unsigned)info);
    (void)c;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    PM_CHECK_INIT("MPI_Comm_get_info");
    GET_COMM(c, comm, "MPI_Comm_get_info");
    if (!info_used)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_get_info: info_used is NULL");
    (void)c;
    int rc = PMPI_Info_create(info_used);
    if (rc != MPI_SUCCESS)
        return pm_error(comm, rc, "MPI_Comm_get_info: could not create the info object");
    return MPI_SUCCESS;
}
PM_WEAK(Comm_get_info)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    PM_CHECK_INIT("MPI_Comm_test_inter");
    GET_COMM(c, comm, "MPI_Comm_test_inter");
    if (!flag)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_test_inter: flag is NULL");
    *flag = c->is_inter;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    PM_CHECK_INIT("MPI_Comm_remote_size");
    GET_COMM(c, comm, "MPI_Comm_remote_size");
    if (!c->is_inter)
        return pm_error(comm, MPI_ERR_COMM,
                        "MPI_Comm_remote_size: the communicator is not an intercommunicator");
    if (!size)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_remote_size: size is NULL");
    *size = c->remote->size;
    return MPI_SUCCESS;
}
PM_WEAK(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    PM_CHECK_INIT("MPI_Comm_remote_group");
    GET_COMM(c, comm, "MPI_Comm_remote_group");
    if (!c->is_inter)
        return pm_error(comm, MPI_ERR_COMM,
                        "MPI_Comm_remote_group: the communicator is not an intercommunicator");
    if (!group)
        return pm_error(comm, MPI_ERR_ARG, "MPI_Comm_remote_group: group is NULL");
    return pm_group_handle_of(c->remote, c->session, group, "MPI_Comm_remote_group");
}
PM_WEAK(Comm_remote_group)
