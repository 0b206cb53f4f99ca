/*
 * intercomm.c — intercommunicators: MPI_Intercomm_create and
 * MPI_Intercomm_merge, and the intercommunicator versions of MPI_Comm_dup,
 * MPI_Comm_create and MPI_Comm_split (MPI-2.2 semantics).
 *
 * An intercommunicator has its own context id, agreed by both groups, and a
 * private intracommunicator over its local group (local_comm, another
 * context) for the local half of intercommunicator collectives. Work done
 * for an intercommunicator operation is numbered with the intercommunicator's
 * collective sequence: the local rounds on local_comm's collective context,
 * the leaders' exchange (rank 0 of each group) on the intercommunicator's.
 */
#include <stdlib.h>
#include <string.h>

#include "comm.h"

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

struct pm_comm *pm_intercomm_new(struct pm_group *local, struct pm_group *remote,
                                 const uint16_t ids[2])
{
    struct pm_comm *ic = pm_comm_new(local, remote, ids[0]);
    if (!ic) {
        pm_context_free(ids[0]);
        pm_context_free(ids[1]);
        return NULL;
    }
    struct pm_comm *lc = pm_comm_new(local, NULL, ids[1]);
    if (!lc) {
        pm_context_free(ids[1]);
        pm_table_remove(&pm_comm_table, ic->handle);
        pm_comm_release(ic); /* gives ids[0] back */
        return NULL;
    }
    ic->local_comm = lc;
    return ic;
}

/* One step of an intercommunicator operation: the local group on
 * local_comm's collective context, numbered by the intercommunicator. */
struct inter_step {
    struct pm_xg local;
    uint64_t xtag; /* the leaders' exchange: intercommunicator context | seq */
    int peer;      /* the other leader (world rank) */
};

static void inter_step(struct inter_step *s, struct pm_comm *c)
{
    uint32_t seq = pm_coll_next_seq(c);
    s->local.world = c->local->world;
    s->local.size = c->size;
    s->local.rank = c->rank;
    s->local.tag = c->local_comm->tag_coll | seq;
    s->xtag = c->tag_coll | seq;
    s->peer = c->remote->world[0];
}

/* Leaders swap `len` bytes (the other side's length is `rlen`). */
static int inter_swap(const struct inter_step *s, struct pm_comm *c, const void *mine, size_t len,
                      void *theirs, size_t rlen)
{
    return pm_sendrecv_world(mine, len, s->peer, s->xtag | c->tag_src, theirs, rlen, s->peer,
                             s->xtag);
}

/* ---- MPI_Intercomm_create ------------------------------------------------------- */

struct ic_header {
    int32_t err;  /* leader's outcome, in the local broadcast */
    int32_t size; /* the remote group's size */
    int32_t ctx;  /* the remote local_comm's context (agreement key) */
};

/* How the two leaders talk: the remote one's world rank, the tags. */
struct ic_peer {
    int remote_leader;
    uint64_t stag, rtag;
};

static int peer_swap(const struct ic_peer *p, const void *mine, size_t len, void *theirs,
                     size_t rlen)
{
    return pm_sendrecv_world(mine, len, p->remote_leader, p->stag, theirs, rlen,
                             p->remote_leader, p->rtag);
}

static int peer_exchange(void *arg, uint32_t seq, uint64_t *v, size_t n)
{
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int rc = peer_swap(arg, v, n * sizeof *v, tmp, n * sizeof *tmp);
    for (size_t i = 0; !rc && i < n; i++)
        v[i] &= tmp[i];
    free(tmp);
    return rc;
}

/* At the local leader: validate the peer side of MPI_Intercomm_create. */
static int leader_peer(struct pm_comm *lc, MPI_Comm peer_comm, int remote_leader, int tag,
                       struct ic_peer *p)
{
    struct pm_comm *peer = pm_comm_get(peer_comm);
    if (!peer)
        return pm_error(lc->handle, MPI_ERR_COMM,
                        "MPI_Intercomm_create: invalid peer communicator %#x at the local leader",
                        (unsigned)peer_comm);
    if (remote_leader < 0 || remote_leader >= peer->remote->size)
        return pm_error(lc->handle, MPI_ERR_RANK,
                        "MPI_Intercomm_create: remote_leader %d is not a rank of peer_comm "
                        "(size %d)", remote_leader, peer->remote->size);
    p->remote_leader = pm_comm_peer(peer, remote_leader);
    p->stag = peer->tag_pt2pt | peer->tag_src | (uint64_t)tag;
    p->rtag = peer->tag_pt2pt | (uint64_t)tag;
    return MPI_SUCCESS;
}

/* At the local leader: swap the groups with the remote leader. */
static int leader_swap(struct pm_comm *lc, const struct ic_peer *p, struct ic_header *h,
                       int **rworld)
{
    if (p->remote_leader == pm_world_rank)
        return pm_error(lc->handle, MPI_ERR_RANK,
                        "MPI_Intercomm_create: the remote leader is the local leader itself");
    struct ic_header mine = {0, lc->size, lc->context};
    int rc = peer_swap(p, &mine, sizeof mine, h, sizeof *h);
    if (!rc && (h->size <= 0 || h->size > PM_MAX_COMM_SIZE))
        rc = MPI_ERR_INTERN;
    if (!rc && !(*rworld = malloc((size_t)h->size * sizeof **rworld)))
        rc = MPI_ERR_NO_MEM;
    if (!rc)
        rc = peer_swap(p, lc->local->world, (size_t)lc->size * sizeof(int), *rworld,
                       (size_t)h->size * sizeof(int));
    if (rc)
        return pm_error(lc->handle, rc,
                        "MPI_Intercomm_create: exchange with the remote leader failed (error %d)",
                        rc);
    return MPI_SUCCESS;
}

/* The intercommunicator of local communicator lc and the group its leader
 * reaches through p (filled at the leader only, or h->err set); `tag` keys
 * the context agreement. Raises on lc. */
static int create_with(struct pm_comm *lc, int local_leader, struct ic_peer *p,
                       struct ic_header h, int tag, const char *fn, struct pm_comm **out)
{
    MPI_Comm local_comm = lc->handle;
    int *rworld = NULL;
    bool leader = lc->rank == local_leader;
    if (leader && !h.err)
        h.err = leader_swap(lc, p, &h, &rworld);
    /* The leader tells everyone the outcome and the remote group. */
    struct pm_xg x;
    pm_xg_of_comm(&x, lc);
    int rc = pm_xg_bcast(&x, &h, sizeof h, local_leader);
    if (rc)
        h.err = rc;
    if (h.err) {
        free(rworld);
        return leader ? h.err
                      : pm_error(local_comm, h.err, "%s: failed at the local leader (error %d)",
                                 fn, h.err);
    }
    /* (Out of memory here leaves this process's subtree of the broadcast
     * waiting: there is no way back from that.) */
    if (!leader && !(rworld = malloc((size_t)h.size * sizeof *rworld)))
        rc = MPI_ERR_NO_MEM;
    if (!rc)
        rc = pm_xg_bcast(&x, rworld, (size_t)h.size * sizeof *rworld, local_leader);
    if (rc) {
        free(rworld);
        return pm_comm_fail(local_comm, rc, fn);
    }
    /* The groups must be disjoint; both sides see both lists, so they
     * agree on the verdict. */
    char *in = calloc((size_t)pm_world_size, 1);
    if (!in) {
        free(rworld);
        return pm_error(local_comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    for (int i = 0; i < lc->size; i++)
        in[lc->local->world[i]] = 1;
    int overlap = -1;
    for (int i = 0; i < h.size && overlap < 0; i++)
        if (rworld[i] < 0 || rworld[i] >= pm_world_size || in[rworld[i]])
            overlap = rworld[i];
    free(in);
    if (overlap >= 0) {
        free(rworld);
        return pm_error(local_comm, MPI_ERR_COMM,
                        "%s: the local and remote groups overlap (world rank %d is in both)", fn,
                        overlap);
    }
    struct pm_group *rg = pm_group_new(h.size, rworld);
    free(rworld);
    if (!rg)
        return pm_error(local_comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);

    int key_ctx = lc->context < h.ctx ? lc->context : h.ctx;
    struct pm_agree a = {
        .seq_comm = lc,
        .world = lc->local->world,
        .size = lc->size,
        .rank = lc->rank,
        .leader = local_leader,
        .ctx_field = lc->tag_coll,
        .key = PM_KEY_ICREATE(key_ctx, tag),
        .exchange = peer_exchange,
        .arg = p,
    };
    uint16_t ids[2];
    rc = pm_context_agree(&a, 2, ids);
    if (rc) {
        pm_group_release(rg);
        return pm_comm_fail(local_comm, rc, fn);
    }
    struct pm_comm *ic = pm_intercomm_new(lc->local, rg, ids);
    pm_group_release(rg);
    if (!ic)
        return pm_error(local_comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    pm_comm_inherit(ic, lc);
    *out = ic;
    return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create";
    PM_CHECK_INIT(fn);
    GET_COMM(lc, local_comm, fn);
    if (newintercomm)
        *newintercomm = MPI_COMM_NULL;
    if (lc->is_inter)
        return pm_error(local_comm, MPI_ERR_COMM, "%s: local_comm is an intercommunicator", fn);
    if (local_leader < 0 || local_leader >= lc->size)
        return pm_error(local_comm, MPI_ERR_RANK, "%s: local_leader %d is outside 0..%d", fn,
                        local_leader, lc->size - 1);
    if (tag < 0 || tag > PM_TAG_UB)
        return pm_error(local_comm, MPI_ERR_TAG, "%s: tag %d is outside 0..%d", fn, tag,
                        PM_TAG_UB);
    if (!newintercomm)
        return pm_error(local_comm, MPI_ERR_ARG, "%s: newintercomm is NULL", fn);
    struct ic_header h = {0, 0, 0};
    struct ic_peer p = {0};
    if (lc->rank == local_leader)
        h.err = leader_peer(lc, peer_comm, remote_leader, tag, &p);
    struct pm_comm *ic;
    int rc = create_with(lc, local_leader, &p, h, tag, fn, &ic);
    if (rc == MPI_SUCCESS)
        *newintercomm = ic->handle;
    return rc;
}
PM_WEAK(Intercomm_create)

/* MPI-4 sessions: the local communicator comes from the local group (as
 * MPI_Comm_create_from_group makes it, with the same string tag), and the
 * leaders talk on the world communicator's collective context, in the
 * string tag's slot of the upper half (see comm_create.c). */
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char fn[] = "MPI_Intercomm_create_from_groups";
    PM_CHECK_INIT(fn);
    MPI_Errhandler eh = pm_errhandler_usable(errhandler, PM_ERRH_FOR_COMM)
                            ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (newintercomm)
        *newintercomm = MPI_COMM_NULL;
    struct pm_group *lg = pm_group_get(local_group), *rg = pm_group_get(remote_group);
    if (!lg || !rg)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_GROUP, "%s: invalid %s group %#x",
                                fn, lg ? "remote" : "local",
                                (unsigned)(lg ? remote_group : local_group));
    if (local_leader < 0 || local_leader >= lg->size || remote_leader < 0 ||
        remote_leader >= rg->size)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_RANK, "%s: leader %d outside its "
                                "group", fn, local_leader < 0 || local_leader >= lg->size
                                                 ? local_leader : remote_leader);
    if (!newintercomm)
        return pm_error_handler(eh, MPI_COMM_NULL, MPI_ERR_ARG, "%s: newintercomm is NULL", fn);
    MPI_Comm local;
    int rc = PMPI_Comm_create_from_group(local_group, stringtag, info, errhandler, &local);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pm_comm *lc = pm_comm_get(local), *w = pm_comm_world;
    uint64_t slot = pm_group_slot(w, pm_stringtag_hash(stringtag));
    struct ic_header h = {0, 0, 0};
    struct ic_peer p = {.remote_leader = rg->world[remote_leader],
                        .stag = slot | w->tag_src, .rtag = slot};
    struct pm_comm *ic;
    rc = create_with(lc, local_leader, &p, h, (int)(slot & PM_TAG_MASK), fn, &ic);
    if (rc == MPI_SUCCESS)
        *newintercomm = ic->handle;
    PMPI_Comm_free(&local);
    return rc;
}
PM_WEAK(Intercomm_create_from_groups)

/* ---- MPI_Intercomm_merge --------------------------------------------------------- */

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char fn[] = "MPI_Intercomm_merge";
    PM_CHECK_INIT(fn);
    GET_COMM(c, intercomm, fn);
    if (newintracomm)
        *newintracomm = MPI_COMM_NULL;
    if (!c->is_inter)
        return pm_error(intercomm, MPI_ERR_COMM, "%s: the communicator is not an "
                        "intercommunicator", fn);
    if (!newintracomm)
        return pm_error(intercomm, MPI_ERR_ARG, "%s: newintracomm is NULL", fn);
    /* Each group goes by its leader's `high`; the low group comes first, and
     * when both say the same the group whose leader has the lower world rank. */
    struct inter_step s;
    inter_step(&s, c);
    int32_t info[3] = {high ? 1 : 0, 0, 0}; /* my group's high, theirs, their leader */
    int rc = MPI_SUCCESS;
    if (c->rank == 0) {
        int32_t mine[2] = {info[0], pm_world_rank}, theirs[2];
        rc = inter_swap(&s, c, mine, sizeof mine, theirs, sizeof theirs);
        info[1] = theirs[0];
        info[2] = theirs[1];
    }
    if (!rc)
        rc = pm_xg_bcast(&s.local, info, sizeof info, 0);
    if (rc)
        return pm_comm_fail(intercomm, rc, fn);
    bool local_first = info[0] != info[1] ? info[0] < info[1] : c->local->world[0] < info[2];
    int n = c->size + c->remote->size;
    int *world = malloc((size_t)n * sizeof *world);
    if (!world)
        return pm_error(intercomm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    const struct pm_group *first = local_first ? c->local : c->remote;
    const struct pm_group *second = local_first ? c->remote : c->local;
    memcpy(world, first->world, (size_t)first->size * sizeof *world);
    memcpy(world + first->size, second->world, (size_t)second->size * sizeof *world);
    struct pm_group *g = pm_group_new(n, world);
    free(world);
    if (!g)
        return pm_error(intercomm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    uint16_t ctx;
    rc = pm_context_alloc(c, &ctx);
    if (rc) {
        pm_group_release(g);
        return pm_comm_fail(intercomm, rc, fn);
    }
    struct pm_comm *nc = pm_comm_new(g, NULL, ctx);
    pm_group_release(g);
    if (!nc) {
        pm_context_free(ctx);
        return pm_error(intercomm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    pm_comm_inherit(nc, c);
    *newintracomm = nc->handle;
    return MPI_SUCCESS;
}
PM_WEAK(Intercomm_merge)

/* ---- Dup, create, split ------------------------------------------------------------ */

int pm_intercomm_dup(struct pm_comm *c, struct pm_comm **out)
{
    uint16_t ids[2];
    *out = NULL;
    int rc = pm_context_alloc_n(c, 2, ids);
    if (rc)
        return rc;
    *out = pm_intercomm_new(c->local, c->remote, ids);
    return *out ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Swap a list of ints between the groups: the local one is the same at
 * every member of a group, the remote one (at most `max` long) comes back to
 * all of them in *theirs (malloc'ed). */
static int swap_lists(struct pm_comm *c, const int *mine, int n, int max, int **theirs, int *rn)
{
    struct inter_step s;
    inter_step(&s, c);
    int32_t cnt = n, rcnt = 0;
    int rc = MPI_SUCCESS;
    *theirs = NULL;
    if (c->rank == 0)
        rc = inter_swap(&s, c, &cnt, sizeof cnt, &rcnt, sizeof rcnt);
    if (!rc)
        rc = pm_xg_bcast(&s.local, &rcnt, sizeof rcnt, 0);
    if (rc)
        return rc;
    if (rcnt < 0 || rcnt > max)
        return MPI_ERR_INTERN;
    *rn = rcnt;
    *theirs = malloc((size_t)(rcnt > 0 ? rcnt : 1) * sizeof **theirs);
    if (!*theirs)
        return MPI_ERR_NO_MEM; /* the other members then wait: out of memory is fatal */
    if (c->rank == 0)
        rc = inter_swap(&s, c, mine, (size_t)n * sizeof *mine, *theirs,
                        (size_t)rcnt * sizeof **theirs);
    if (!rc)
        rc = pm_xg_bcast(&s.local, *theirs, (size_t)rcnt * sizeof **theirs, 0);
    return rc;
}

int pm_intercomm_create_sub(struct pm_comm *c, struct pm_group *g, struct pm_comm **out)
{
    *out = NULL;
    int *rworld, rn;
    int rc = swap_lists(c, g->world, g->size, c->remote->size, &rworld, &rn);
    uint16_t ids[2];
    if (!rc)
        rc = pm_context_alloc_n(c, 2, ids);
    if (rc) {
        free(rworld);
        return rc;
    }
    /* Members of g with a nonempty remote side get the intercommunicator. */
    if (g->rank == MPI_UNDEFINED || rn == 0) {
        pm_context_free(ids[0]);
        pm_context_free(ids[1]);
        free(rworld);
        return MPI_SUCCESS;
    }
    struct pm_group *rg = pm_group_new(rn, rworld);
    free(rworld);
    if (!rg) {
        pm_context_free(ids[0]);
        pm_context_free(ids[1]);
        return MPI_ERR_NO_MEM;
    }
    *out = pm_intercomm_new(g, rg, ids);
    pm_group_release(rg);
    if (!*out)
        return MPI_ERR_NO_MEM;
    pm_comm_inherit(*out, c);
    return MPI_SUCCESS;
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

/* The world ranks of the members of `g` whose (color, key) in `ck` has
 * `color`, ordered by (key, rank). Returns the count; NULL list on ENOMEM. */
static int *select_color(const struct pm_group *g, const int *ck, int color, int *count)
{
    struct split_entry *e = malloc((size_t)g->size * sizeof *e);
    int *w = malloc((size_t)g->size * sizeof *w);
    if (!e || !w) {
        free(e);
        free(w);
        return NULL;
    }
    int m = 0;
    for (int i = 0; i < g->size; i++)
        if (ck[2 * i] == color)
            e[m++] = (struct split_entry){ck[2 * i + 1], i};
    qsort(e, (size_t)m, sizeof *e, split_cmp);
    for (int i = 0; i < m; i++)
        w[i] = g->world[e[i].rank];
    free(e);
    *count = m;
    return w;
}

/* Everyone learns the pair of ints of every member of both groups: *lp
 * (local group, by rank) and *rp (remote group), both to free, even on an
 * error. */
static int pairs_of_both(struct pm_comm *c, const int mine[2], int **lp, int **rp)
{
    *rp = NULL;
    *lp = malloc((size_t)c->size * 2 * sizeof **lp);
    if (!*lp)
        return MPI_ERR_NO_MEM;
    struct inter_step s;
    inter_step(&s, c);
    int rc = pm_xg_allgather(&s.local, mine, *lp, 2 * sizeof *mine);
    int rn = 0;
    if (!rc)
        rc = swap_lists(c, *lp, 2 * c->size, 2 * c->remote->size, rp, &rn);
    if (!rc && rn != 2 * c->remote->size)
        rc = MPI_ERR_INTERN;
    return rc;
}

int pm_intercomm_split(struct pm_comm *c, int color, int key, struct pm_comm **out)
{
    *out = NULL;
    int mine[2] = {color, key};
    int *lck, *rck; /* (color, key) of both groups */
    int rc = pairs_of_both(c, mine, &lck, &rck);
    uint16_t ids[2];
    if (!rc)
        rc = pm_context_alloc_n(c, 2, ids);
    if (rc) {
        free(lck);
        free(rck);
        return rc;
    }
    int ln = 0, rm = 0;
    int *lw = NULL, *rw = NULL;
    if (color != MPI_UNDEFINED) {
        lw = select_color(c->local, lck, color, &ln);
        rw = select_color(c->remote, rck, color, &rm);
        if (!lw || !rw)
            rc = MPI_ERR_NO_MEM;
    }
    free(lck);
    free(rck);
    struct pm_group *lg = NULL, *rg = NULL;
    if (!rc && color != MPI_UNDEFINED && rm > 0) {
        lg = pm_group_new(ln, lw);
        rg = pm_group_new(rm, rw);
        if (lg && rg) {
            *out = pm_intercomm_new(lg, rg, ids);
            ids[0] = ids[1] = 0; /* owned by the new communicator now */
        }
        if (!*out)
            rc = MPI_ERR_NO_MEM;
        else
            pm_comm_inherit(*out, c);
    }
    pm_group_release(lg);
    pm_group_release(rg);
    free(lw);
    free(rw);
    pm_context_free(ids[0]);
    pm_context_free(ids[1]);
    return rc;
}

/* MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) on an intercommunicator: the
 * color of a process is the lowest world rank, over both groups, on its
 * host (hosts compared by a 64-bit hash of their names), so that both
 * sides agree on it; then a split. `host` 0 means MPI_UNDEFINED. */
int pm_intercomm_split_shared(struct pm_comm *c, uint64_t host, int key, struct pm_comm **out)
{
    *out = NULL;
    int mine[2] = {(int32_t)(host >> 32), (int32_t)(uint32_t)host};
    int *lh, *rh; /* the hosts of both groups */
    int rc = pairs_of_both(c, mine, &lh, &rh);
    int color = MPI_UNDEFINED;
    for (int side = 0; !rc && host && side < 2; side++) {
        const struct pm_group *g = side ? c->remote : c->local;
        const int *h = side ? rh : lh;
        for (int i = 0; i < g->size; i++)
            if (h[2 * i] == mine[0] && h[2 * i + 1] == mine[1] &&
                (color == MPI_UNDEFINED || g->world[i] < color))
                color = g->world[i];
    }
    free(lh);
    free(rh);
    return rc ? rc : pm_intercomm_split(c, color, key, out);
}
