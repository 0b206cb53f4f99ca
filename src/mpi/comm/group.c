/*
 * group.c — process groups: the pm_group objects communicators are built on
 * (an ordered list of world ranks) and the MPI_Group_* functions.
 *
 * A group is immutable once made, so it is shared freely by reference
 * (communicators hold references to theirs). Groups owned by communicators
 * have no handle; every group given to the user is a fresh object with its
 * own handle, except empty results, which are MPI_GROUP_EMPTY (static).
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static struct pm_group group_empty = {.handle = MPI_GROUP_EMPTY, .size = 0,
                                      .rank = MPI_UNDEFINED};

struct pm_group *pm_group_get(MPI_Group h)
{
    return (struct pm_group *)pm_table_get(&pm_group_table, h);
}

struct pm_group *pm_group_new(int n, const int *world_ranks)
{
    struct pm_group *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->world = malloc((size_t)(n > 0 ? n : 1) * sizeof *g->world);
    if (!g->world) {
        free(g);
        return NULL;
    }
    atomic_init(&g->refs, 1);
    g->size = n;
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        g->world[i] = world_ranks[i];
        if (world_ranks[i] == pm_world_rank && g->rank == MPI_UNDEFINED)
            g->rank = i;
    }
    return g;
}

void pm_group_retain(struct pm_group *g)
{
    if (g && g != &group_empty)
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

void pm_group_release(struct pm_group *g)
{
    if (!g || g == &group_empty)
        return;
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1) {
        free(g->world);
        free(g);
    }
}

void pm_groups_init(void)
{
    pm_table_set(&pm_group_table, 0, &group_empty);
}

/* Hand a new group (reference owned by the caller) to the user: empty groups
 * become MPI_GROUP_EMPTY, others get a handle. */
static int group_out(struct pm_group *g, MPI_Group *out, const char *fname)
{
    if (g->size == 0) {
        pm_group_release(g);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int h = pm_table_add(&pm_group_table, g);
    if (!h) {
        pm_group_release(g);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of group handles", fname);
    }
    g->handle = h;
    *out = h;
    return MPI_SUCCESS;
}

/* A new group with the world ranks of g at positions idx[0..n). */
static int group_pick(const struct pm_group *g, int n, const int *idx, MPI_Group *out,
                      const char *fname)
{
    int *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (!w)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    for (int i = 0; i < n; i++)
        w[i] = g->world[idx[i]];
    struct pm_group *ng = pm_group_new(n, w);
    free(w);
    if (!ng)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    ng->session = g->session;
    return group_out(ng, out, fname);
}

/* world rank -> rank in g, or -1: an array of pm_world_size entries. */
static int *group_inverse(const struct pm_group *g)
{
    int *inv = malloc((size_t)pm_world_size * sizeof *inv);
    if (!inv)
        return NULL;
    for (int i = 0; i < pm_world_size; i++)
        inv[i] = -1;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] >= 0 && g->world[i] < pm_world_size)
            inv[g->world[i]] = i;
    return inv;
}

#define GET_GROUP(var, h, fname)                                                        \
    struct pm_group *var = pm_group_get(h);                                             \
    if (!var)                                                                           \
        return pm_error(MPI_COMM_NULL, MPI_ERR_GROUP, "%s: invalid group handle %#x%s",  \
                        fname, (unsigned)(h), (h) == MPI_GROUP_NULL ? " (MPI_GROUP_NULL)" : "")

int PMPI_Group_size(MPI_Group group, int *size)
{
    PM_CHECK_INIT("MPI_Group_size");
    GET_GROUP(g, group, "MPI_Group_size");
    if (!size)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_size: size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}
PM_WEAK(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    PM_CHECK_INIT("MPI_Group_rank");
    GET_GROUP(g, group, "MPI_Group_rank");
    if (!rank)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_rank: rank is NULL");
    *rank = g->rank;
    return MPI_SUCCESS;
}
PM_WEAK(Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char fn[] = "MPI_Group_translate_ranks";
    PM_CHECK_INIT(fn);
    GET_GROUP(g1, group1, fn);
    GET_GROUP(g2, group2, fn);
    if (n < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    if (n > 0 && (!ranks1 || !ranks2))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: ranks1 or ranks2 is NULL", fn);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return pm_error(MPI_COMM_NULL, MPI_ERR_RANK,
                            "%s: ranks1[%d] = %d is not a rank of group1 (size %d)", fn, i,
                            ranks1[i], g1->size);
    if (n == 0)
        return MPI_SUCCESS;
    int *inv = group_inverse(g2);
    if (!inv)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = inv[g1->world[ranks1[i]]];
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    free(inv);
    return MPI_SUCCESS;
}
PM_WEAK(Group_translate_ranks)

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL (shared with MPI_Comm_compare). */
int pm_group_compare(const struct pm_group *a, const struct pm_group *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    if (a->size == 0 || !memcmp(a->world, b->world, (size_t)a->size * sizeof *a->world))
        return MPI_IDENT;
    int *inv = group_inverse(b);
    if (!inv)
        return -1;
    int res = MPI_SIMILAR;
    for (int i = 0; i < a->size; i++)
        if (inv[a->world[i]] < 0) {
            res = MPI_UNEQUAL;
            break;
        }
    free(inv);
    return res;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    PM_CHECK_INIT("MPI_Group_compare");
    GET_GROUP(g1, group1, "MPI_Group_compare");
    GET_GROUP(g2, group2, "MPI_Group_compare");
    if (!result)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_compare: result is NULL");
    int r = pm_group_compare(g1, g2);
    if (r < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Group_compare: out of memory");
    *result = r;
    return MPI_SUCCESS;
}
PM_WEAK(Group_compare)

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

/* Union: group1 then the members of group2 not in group1; intersection and
 * difference: members of group1 (in group1's order) in / not in group2. */
static int group_setop(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op,
                       const char *fn)
{
    PM_CHECK_INIT(fn);
    GET_GROUP(g1, group1, fn);
    GET_GROUP(g2, group2, fn);
    if (!newgroup)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    int *in1 = group_inverse(g1), *in2 = group_inverse(g2);
    int *w = malloc((size_t)(g1->size + g2->size + 1) * sizeof *w);
    if (!in1 || !in2 || !w) {
        free(in1);
        free(in2);
        free(w);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    int n = 0;
    for (int i = 0; i < g1->size; i++) {
        bool in_other = in2[g1->world[i]] >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == in_other)
            w[n++] = g1->world[i];
    }
    if (op == SET_UNION)
        for (int i = 0; i < g2->size; i++)
            if (in1[g2->world[i]] < 0)
                w[n++] = g2->world[i];
    free(in1);
    free(in2);
    struct pm_group *g = pm_group_new(n, w);
    free(w);
    if (!g)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    g->session = g1->session ? g1->session : g2->session;
    return group_out(g, newgroup, fn);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}
PM_WEAK(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}
PM_WEAK(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return group_setop(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}
PM_WEAK(Group_difference)

/* Check that ranks[0..n) are distinct valid ranks of g; *seen (g->size
 * flags, caller frees) marks them. */
static int check_rank_list(const struct pm_group *g, int n, const int ranks[], char **seen,
                           const char *fn)
{
    if (n < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    if (n > 0 && !ranks)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: ranks is NULL", fn);
    *seen = calloc((size_t)g->size + 1, 1);
    if (!*seen)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) {
            free(*seen);
            return pm_error(MPI_COMM_NULL, MPI_ERR_RANK,
                            "%s: ranks[%d] = %d is not a rank of the group (size %d)", fn, i,
                            ranks[i], g->size);
        }
        if ((*seen)[ranks[i]]) {
            free(*seen);
            return pm_error(MPI_COMM_NULL, MPI_ERR_RANK, "%s: rank %d appears twice in ranks",
                            fn, ranks[i]);
        }
        (*seen)[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_incl";
    PM_CHECK_INIT(fn);
    GET_GROUP(g, group, fn);
    if (!newgroup)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    char *seen;
    int rc = check_rank_list(g, n, ranks, &seen, fn);
    if (rc)
        return rc;
    free(seen);
    return group_pick(g, n, ranks, newgroup, fn);
}
PM_WEAK(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_excl";
    PM_CHECK_INIT(fn);
    GET_GROUP(g, group, fn);
    if (!newgroup)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    char *seen;
    int rc = check_rank_list(g, n, ranks, &seen, fn);
    if (rc)
        return rc;
    int *keep = malloc((size_t)(g->size + 1) * sizeof *keep);
    if (!keep) {
        free(seen);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    int m = 0;
    for (int i = 0; i < g->size; i++)
        if (!seen[i])
            keep[m++] = i;
    free(seen);
    rc = group_pick(g, m, keep, newgroup, fn);
    free(keep);
    return rc;
}
PM_WEAK(Group_excl)

/* Expand ranges (first, last, stride) into the ranks they name, checking
 * that each is valid and that no rank appears twice. *seen marks them. */
static int expand_ranges(const struct pm_group *g, int n, int ranges[][3], int **list, int *count,
                         char **seen, const char *fn)
{
    if (n < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: n = %d is negative", fn, n);
    if (n > 0 && !ranges)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: ranges is NULL", fn);
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0)
            return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: ranges[%d] has stride 0", fn, i);
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return pm_error(MPI_COMM_NULL, MPI_ERR_RANK,
                            "%s: ranges[%d] = (%d, %d, %d) names ranks outside the group "
                            "(size %d)", fn, i, first, last, stride, g->size);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                            "%s: ranges[%d] = (%d, %d, %d): the stride leads away from last",
                            fn, i, first, last, stride);
    }
    *seen = calloc((size_t)g->size + 1, 1);
    *list = malloc((size_t)(g->size + 1) * sizeof **list);
    if (!*seen || !*list) {
        free(*seen);
        free(*list);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if ((*seen)[r]) {
                free(*seen);
                free(*list);
                return pm_error(MPI_COMM_NULL, MPI_ERR_RANK,
                                "%s: rank %ld is named twice (ranges[%d] = (%d, %d, %d))", fn,
                                r, i, first, last, stride);
            }
            (*seen)[r] = 1;
            (*list)[m++] = (int)r;
        }
    }
    *count = m;
    return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_incl";
    PM_CHECK_INIT(fn);
    GET_GROUP(g, group, fn);
    if (!newgroup)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    int *list, m;
    char *seen;
    int rc = expand_ranges(g, n, ranges, &list, &m, &seen, fn);
    if (rc)
        return rc;
    rc = group_pick(g, m, list, newgroup, fn);
    free(list);
    free(seen);
    return rc;
}
PM_WEAK(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_range_excl";
    PM_CHECK_INIT(fn);
    GET_GROUP(g, group, fn);
    if (!newgroup)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    int *list, m;
    char *seen;
    int rc = expand_ranges(g, n, ranges, &list, &m, &seen, fn);
    if (rc)
        return rc;
    m = 0;
    for (int i = 0; i < g->size; i++)
        if (!seen[i])
            list[m++] = i;
    rc = group_pick(g, m, list, newgroup, fn);
    free(list);
    free(seen);
    return rc;
}
PM_WEAK(Group_range_excl)

int PMPI_Group_free(MPI_Group *group)
{
    PM_CHECK_INIT("MPI_Group_free");
    if (!group)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Group_free: group is NULL");
    GET_GROUP(g, *group, "MPI_Group_free");
    /* MPI_GROUP_EMPTY is what empty results are, so freeing it is allowed
     * (and does nothing to the predefined object). */
    if (g != &group_empty) {
        pm_table_remove(&pm_group_table, *group);
        pm_group_release(g);
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(Group_free)

/* A handle for the user to a group that stays shared (MPI_Comm_group,
 * MPI_Comm_remote_group): a copy, so the group's own handle field is never
 * needed; it derives from `session` (the communicator's). */
int pm_group_handle_of(const struct pm_group *g, int session, MPI_Group *out, const char *fname)
{
    struct pm_group *ng = pm_group_new(g->size, g->world);
    if (!ng)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    ng->session = session;
    return group_out(ng, out, fname);
}
