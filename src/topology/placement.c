/*
 * The placement decision (placement.h): which NIC matters under the hint,
 * the NUMA nodes in order of distance from it, then the process, the
 * progress threads (fanned out by distance) and each rail's buffers.
 * Every choice leaves a line in out->reasons.
 */
#include "topology/placement.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proust.h"

static const char *const hint_names[] = {"latency", "bandwidth", "cores"};
static const char *const mode_names[] = {"auto", "override", "off"};

const char *proust__place_hint_name(enum proust__place_hint h)
{
    return (unsigned)h < 3 ? hint_names[h] : "?";
}

const char *proust__place_mode_name(enum proust__place_mode m)
{
    return (unsigned)m < 3 ? mode_names[m] : "?";
}

int proust__place_hint_parse(const char *text)
{
    for (int i = 0; text && i < 3; i++)
        if (strcmp(text, hint_names[i]) == 0)
            return i;
    return -1;
}

int proust__place_mode_parse(const char *text)
{
    for (int i = 0; text && i < 3; i++)
        if (strcmp(text, mode_names[i]) == 0)
            return i;
    return -1;
}

static void note(struct proust__placement *p, const char *fmt, ...)
{
    size_t used = strlen(p->reasons);
    if (used + 2 >= sizeof p->reasons)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->reasons + used, sizeof p->reasons - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(p->reasons);
    p->reasons[used] = '\n';
    p->reasons[used + 1] = '\0';
}

/* a bitmap as a list ("0-3,8"), in a rotating set of static buffers */
static const char *list(hwloc_const_bitmap_t b)
{
    static _Thread_local char bufs[4][128];
    static _Thread_local unsigned next;
    char *s = bufs[next++ & 3];
    if (!b)
        snprintf(s, 128, "-");
    else
        hwloc_bitmap_list_snprintf(s, 128, b);
    return s;
}

static hwloc_obj_t numa(const struct proust__topo *t, unsigned i)
{
    return hwloc_get_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, i);
}

static int cores_in(const struct proust__topo *t, hwloc_const_cpuset_t set)
{
    int n = hwloc_get_nbobjs_inside_cpuset_by_type(t->h, set, HWLOC_OBJ_CORE);
    return n > 0 ? n : hwloc_bitmap_weight(set);
}

/* Choose the NIC(s) that matter under the hint; fill each rail's memory
 * nodes on the way. Returns the index of the first deciding rail or -1. */
static int choose_rails(const struct proust__place_input *in, struct proust__placement *p,
                        bool *deciding)
{
    const struct proust__topo *t = in->topo;
    bool known[PROUST__PLACE_MAX_RAILS] = {0};
    int best = -1;
    for (int i = 0; i < in->nrails; i++) {
        const struct proust__place_rail *r = &in->rails[i];
        if (!r->device) {
            note(p, "%s: no network device", r->name);
            continue;
        }
        if (!r->used) {
            note(p, "%s (%s): carries no peer here, not considered", r->name, r->device);
            continue;
        }
        hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
        int found = nodes ? proust__topo_device_nodes(t, r->device, nodes) : -1;
        known[i] = found == 1;
        if (known[i]) {
            /* only nodes this process may allocate on (cgroup cpuset.mems) */
            hwloc_bitmap_and(nodes, nodes, hwloc_topology_get_allowed_nodeset(t->h));
            if (hwloc_bitmap_iszero(nodes))
                hwloc_bitmap_copy(nodes, hwloc_topology_get_allowed_nodeset(t->h));
            p->memory[i] = nodes;
            note(p, "%s (%s): NIC near NUMA node(s) %s", r->name, r->device, list(nodes));
        } else {
            hwloc_bitmap_free(nodes);
            note(p, "%s (%s): %s", r->name, r->device,
                 found < 0 ? "not a device hwloc knows (virtual interface?): no locality"
                 : proust__topo_numa_count(t) < 2 ? "one NUMA node: every core is as near"
                                                  : "no locality information (attached to the "
                                                    "whole machine)");
        }
        bool better;
        if (best < 0)
            better = true;
        else if (in->hint == PROUST__HINT_BANDWIDTH)
            better = r->bandwidth_gbs > in->rails[best].bandwidth_gbs;
        else
            better = r->latency_us < in->rails[best].latency_us;
        if (better)
            best = i;
    }
    if (best < 0) {
        note(p, "no network rail in use: nothing to be near");
        return -1;
    }
    /* bandwidth: every rail within 10 % of the best one streams too */
    for (int i = 0; i < in->nrails; i++) {
        const struct proust__place_rail *r = &in->rails[i];
        if (!r->device || !r->used)
            continue;
        deciding[i] = i == best || (in->hint == PROUST__HINT_BANDWIDTH &&
                                    r->bandwidth_gbs >= 0.9 * in->rails[best].bandwidth_gbs);
        if (deciding[i] && known[i]) {
            hwloc_bitmap_or(p->nic_nodes, p->nic_nodes, p->memory[i]);
            p->nic_known = true;
        }
    }
    for (int i = 0; i < in->nrails; i++)
        if (!deciding[i] && known[i] && !hwloc_bitmap_isequal(p->memory[i], p->nic_nodes))
            note(p, "rails disagree: %s is near node(s) %s, %s near %s; hint=%s follows %s",
                 in->rails[i].name, list(p->memory[i]), in->rails[best].name,
                 list(p->nic_nodes), proust__place_hint_name(in->hint), in->rails[best].name);
    note(p, "hint=%s: %s decides (%.1f us, %.1f GB/s)%s", proust__place_hint_name(in->hint),
         in->rails[best].name, in->rails[best].latency_us, in->rails[best].bandwidth_gbs,
         p->nic_known ? "" : ", but its NIC has no locality");
    return best;
}

/* Bind the process near the NIC: local ranks fill the nearest node's cores
 * first, then the next nearest (fan-out by distance). */
static void place_process(const struct proust__place_input *in, struct proust__placement *p,
                          hwloc_const_cpuset_t cands, const unsigned *order, int norder)
{
    const struct proust__topo *t = in->topo;
    if (!p->nic_known) {
        note(p, "process: not moved (no NIC locality to follow)");
        return;
    }
    if (in->hint == PROUST__HINT_CORES) {
        note(p, "process: not moved (hint=cores)");
        return;
    }
    if (p->user_bound && in->mode != PROUST__PLACE_OVERRIDE) {
        note(p, "process: the user's binding %s is kept (PROUST_PLACEMENT=override moves it)",
             list(in->binding));
        return;
    }
    int total = 0, nodes = 0;
    for (int k = 0; k < norder; k++) {
        hwloc_bitmap_t c = hwloc_bitmap_alloc();
        hwloc_bitmap_and(c, numa(t, order[k])->cpuset, cands);
        total += hwloc_bitmap_iszero(c) ? 0 : cores_in(t, c);
        nodes += !hwloc_bitmap_iszero(c);
        hwloc_bitmap_free(c);
    }
    if (total == 0)
        return;
    /* Fewer ranks than nodes: each rank has more than a node's cores to
     * itself (a hybrid MPI + threads code); one node would take them away.
     * A user binding of one node or less loses nothing (override). */
    bool narrow = p->user_bound && in->binding &&
                  cores_in(t, in->binding) * nodes <= total;
    if (in->local_size < nodes && !narrow) {
        note(p, "process: not moved (%d rank(s) here for %d NUMA nodes: binding one to a node "
             "would take cores from its threads; progress threads and buffers still go near "
             "the NIC)", in->local_size, nodes);
        return;
    }
    int slot = in->local_rank % total, seen = 0;
    for (int k = 0; k < norder && !p->process; k++) {
        hwloc_bitmap_t c = hwloc_bitmap_alloc();
        hwloc_bitmap_and(c, numa(t, order[k])->cpuset, cands);
        int n = hwloc_bitmap_iszero(c) ? 0 : cores_in(t, c);
        if (slot < seen + n) {
            p->process = c;
            note(p, "process: local rank %d of %d -> NUMA node %u, cpus %s (%s the NIC, %d "
                 "cores)%s",
                 in->local_rank, in->local_size, numa(t, order[k])->os_index, list(c),
                 k == 0 ? "nearest" : "fanned out from", n,
                 p->user_bound ? "; override: the user's binding is replaced" : "");
        } else {
            hwloc_bitmap_free(c);
        }
        seen += n;
    }
}

/* Progress threads: the nearest usable node first, further ones by
 * distance (bandwidth: one per NIC first). */
static void place_threads(const struct proust__place_input *in, struct proust__placement *p,
                          hwloc_const_cpuset_t cands, const unsigned *order, int norder,
                          const bool *deciding)
{
    const struct proust__topo *t = in->topo;
    hwloc_cpuset_t sets[256];
    int nsets = 0;
    for (int k = 0; k < norder && nsets < 256; k++) {
        hwloc_bitmap_t c = hwloc_bitmap_alloc();
        hwloc_bitmap_and(c, numa(t, order[k])->cpuset, cands);
        if (hwloc_bitmap_iszero(c))
            hwloc_bitmap_free(c);
        else
            sets[nsets++] = c;
    }
    int want = in->threads_wanted;
    const char *why = "asked for (PROUST_PROGRESS_THREADS)";
    if (want == 0) {
        if (in->hint == PROUST__HINT_CORES) {
            want = 1, why = "hint=cores";
        } else if (p->nic_known) {
            /* one per distinct NIC locality among the deciding rails */
            hwloc_bitmap_t seen = hwloc_bitmap_alloc();
            want = 0;
            for (int i = 0; i < in->nrails; i++)
                if (deciding[i] && p->memory[i] && !hwloc_bitmap_isincluded(p->memory[i], seen)) {
                    hwloc_bitmap_or(seen, seen, p->memory[i]);
                    want++;
                }
            hwloc_bitmap_free(seen);
            why = want > 1 ? "one per NIC" : "one near the NIC";
        } else {
            want = nsets > 0 ? nsets : 1, why = "one per NUMA node the process may use";
        }
    }
    if (want > PROUST__PLACE_MAX_THREADS)
        want = PROUST__PLACE_MAX_THREADS;
    p->nthreads = want;
    /* bandwidth with NICs on several nodes: thread i starts at NIC i */
    int nic_index[PROUST__PLACE_MAX_THREADS];
    int nnic = 0;
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    for (int i = 0; i < in->nrails && nnic < PROUST__PLACE_MAX_THREADS; i++)
        if (deciding[i] && p->memory[i] && !hwloc_bitmap_isincluded(p->memory[i], seen)) {
            hwloc_bitmap_or(seen, seen, p->memory[i]);
            nic_index[nnic++] = i; /* two NICs on one node: one thread */
        }
    hwloc_bitmap_free(seen);
    for (int i = 0; i < want; i++) {
        if (nsets == 0 || (!p->nic_known && nsets == 1))
            break; /* one node: the threads run where the process runs */
        if (i < nnic && nnic > 1) {
            hwloc_bitmap_t c = hwloc_bitmap_alloc();
            hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
            hwloc_cpuset_from_nodeset(t->h, cpus, p->memory[nic_index[i]]);
            hwloc_bitmap_and(c, cpus, cands);
            hwloc_bitmap_free(cpus);
            if (!hwloc_bitmap_iszero(c)) {
                p->thread[i] = c;
                continue;
            }
            hwloc_bitmap_free(c);
        }
        p->thread[i] = hwloc_bitmap_dup(sets[i % nsets]);
    }
    char line[512] = "";
    for (int i = 0; i < want && strlen(line) < sizeof line - 40; i++)
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? " | " : "",
                 p->thread[i] ? list(p->thread[i]) : "with the process");
    note(p, "progress threads: %d (%s): cpus %s", want, why, line);
    for (int k = 0; k < nsets; k++)
        hwloc_bitmap_free(sets[k]);
}

/* Rails without a NIC (shm, self): their rings where the process runs. */
static void place_local_memory(const struct proust__place_input *in, struct proust__placement *p,
                               hwloc_const_cpuset_t cands)
{
    const struct proust__topo *t = in->topo;
    hwloc_const_cpuset_t where = p->process ? p->process : cands;
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    hwloc_cpuset_to_nodeset(t->h, where, nodes);
    bool narrower = !hwloc_bitmap_isincluded(hwloc_topology_get_topology_nodeset(t->h), nodes);
    for (int i = 0; i < in->nrails; i++) {
        if (in->rails[i].device)
            continue;
        if (narrower) {
            p->memory[i] = hwloc_bitmap_dup(nodes);
            note(p, "%s: receive buffers on the process's node(s) %s", in->rails[i].name,
                 list(nodes));
        }
    }
    hwloc_bitmap_free(nodes);
}

int proust__place_decide(const struct proust__place_input *in, struct proust__placement *out)
{
    memset(out, 0, sizeof *out);
    out->deciding_rail = -1;
    if (!in || !in->topo || !in->topo->h || in->nrails < 0 ||
        in->nrails > PROUST__PLACE_MAX_RAILS || (in->nrails > 0 && !in->rails) ||
        in->local_size < 1 || in->local_rank < 0 || in->local_rank >= in->local_size ||
        in->threads_wanted < 0 || (unsigned)in->mode > PROUST__PLACE_OFF ||
        (unsigned)in->hint > PROUST__HINT_CORES)
        return PROUST_ERR_INVALID;
    const struct proust__topo *t = in->topo;
    out->mode = in->mode;
    out->hint = in->hint;
    out->nic_nodes = hwloc_bitmap_alloc();
    if (!out->nic_nodes)
        return PROUST_ERR_NOMEM;
    hwloc_const_cpuset_t allowed = proust__topo_allowed(t);
    out->user_bound = in->threads_bound || (in->binding && !hwloc_bitmap_iszero(in->binding) &&
                                            !hwloc_bitmap_isincluded(allowed, in->binding));
    int nnodes = proust__topo_numa_count(t);
    note(out, "topology: %s, %d NUMA node(s), %d cores", t->source, nnodes,
         cores_in(t, allowed));

    hwloc_const_cpuset_t cands = allowed;
    if (in->mode == PROUST__PLACE_OFF) {
        note(out, "PROUST_PLACEMENT=off: nothing is bound");
        out->nthreads = in->threads_wanted ? in->threads_wanted : 1;
        if (out->nthreads > PROUST__PLACE_MAX_THREADS)
            out->nthreads = PROUST__PLACE_MAX_THREADS;
        return PROUST_OK;
    }
    if (out->user_bound && in->mode != PROUST__PLACE_OVERRIDE && in->binding)
        cands = in->binding;

    bool deciding[PROUST__PLACE_MAX_RAILS] = {0};
    out->deciding_rail = choose_rails(in, out, deciding);

    /* nodes by distance from the NIC, else from where the process may run */
    hwloc_bitmap_t from = hwloc_bitmap_alloc();
    if (out->nic_known)
        hwloc_bitmap_copy(from, out->nic_nodes);
    else
        hwloc_cpuset_to_nodeset(t->h, cands, from);
    unsigned order[256];
    int norder = proust__topo_nodes_by_distance(t, from, order, 256);
    hwloc_bitmap_free(from);
    if (out->nic_known && cands != allowed) {
        hwloc_bitmap_t nic_cpus = hwloc_bitmap_alloc();
        hwloc_cpuset_from_nodeset(t->h, nic_cpus, out->nic_nodes);
        if (!hwloc_bitmap_intersects(nic_cpus, cands))
            note(out, "the user's binding %s has no core near the NIC: using its nearest ones",
                 list(cands));
        hwloc_bitmap_free(nic_cpus);
    }

    place_process(in, out, cands, order, norder);
    place_threads(in, out, cands, order, norder, deciding);
    place_local_memory(in, out, out->user_bound && !out->process ? cands : allowed);
    return PROUST_OK;
}

void proust__place_free(struct proust__placement *p)
{
    hwloc_bitmap_free(p->nic_nodes);
    hwloc_bitmap_free(p->process);
    for (int i = 0; i < PROUST__PLACE_MAX_THREADS; i++)
        hwloc_bitmap_free(p->thread[i]);
    for (int i = 0; i < PROUST__PLACE_MAX_RAILS; i++)
        hwloc_bitmap_free(p->memory[i]);
    memset(p, 0, sizeof *p);
    p->deciding_rail = -1;
}

void proust__place_describe(const struct proust__topo *topo, const struct proust__placement *p,
                            const struct proust__place_rail *rails, int nrails, char *buf,
                            size_t len)
{
    size_t n = 0;
#define OUT(...)                                                                                  \
    do {                                                                                          \
        if (n < len)                                                                              \
            n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__);                                 \
    } while (0)
    OUT("placement: mode=%s hint=%s\n", proust__place_mode_name(p->mode),
        proust__place_hint_name(p->hint));
    OUT("  process:          %s\n", p->process ? list(p->process) : "left where it is");
    OUT("  progress threads: %d (with background progress)\n", p->nthreads);
    for (int i = 0; i < p->nthreads; i++)
        OUT("    thread %d:       cpus %s\n", i, p->thread[i] ? list(p->thread[i]) : "with the process");
    for (int i = 0; i < nrails && i < PROUST__PLACE_MAX_RAILS; i++)
        OUT("  %-6s buffers:   %s\n", rails[i].name,
            p->memory[i] ? list(p->memory[i]) : "where first touched");
    OUT("  why:\n");
    const char *r = p->reasons;
    while (*r) {
        const char *e = strchr(r, '\n');
        int l = e ? (int)(e - r) : (int)strlen(r);
        OUT("    %.*s\n", l, r);
        r += l + (e ? 1 : 0);
    }
    (void)topo;
#undef OUT
}
