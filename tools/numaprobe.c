/* proust-numaprobe: measure the memory-access latency between every NUMA node
 * that has CPUs and every NUMA node that has memory, then infer how many
 * interconnect hops separate them (seed 002, table 3.1). Links only hwloc. */
#include <errno.h>
#include <getopt.h>
#include <hwloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE_BYTES 64
#define UNIFORM_FRACTION 0.05 /* overheads below 5 % of local are noise */

struct probe_options {
    size_t size;
    unsigned reps;
    uint64_t loads;
    bool quick, csv;
    const char *topology_xml;
};

enum cell_flag { CELL_CPU_UNBOUND = 1, CELL_MEM_UNBOUND = 2, CELL_MEM_ELSEWHERE = 4 };

struct probe {
    hwloc_topology_t topo;
    struct probe_options opt;
    hwloc_obj_t *cpu_nodes, *mem_nodes; /* rows, columns */
    unsigned ncpu, nmem;
    double *ns;            /* ncpu x nmem, ns per load */
    unsigned *flags;       /* ncpu x nmem, enum cell_flag */
    unsigned *ref;         /* per row: column of the row's local memory */
    int *hops;             /* ncpu x nmem */
    double unit;           /* ns per hop, 0 when uniform */
    uint32_t *order;       /* visiting order of cache lines, one cycle */
    size_t lines;
};

/* Kept in a volatile so the compiler cannot drop the chase loop. */
static void *volatile chase_sink;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: proust-numaprobe [--size BYTES[K|M|G]] [--reps N] [--quick] [--csv]\n"
            "                        [--topology FILE.xml] [-h|--help]\n"
            "Measures memory latency between NUMA nodes (rows: CPU node, columns: memory\n"
            "node) by pointer chasing and infers interconnect hops.\n"
            "  --size      chase buffer size (default 64M; should exceed the last-level cache)\n"
            "  --reps      repetitions per pair, the median is kept (default 5)\n"
            "  --quick     tiny run (8M buffer, 1 rep): smoke test, numbers are indicative\n"
            "  --csv       one line per (cpu node, memory node) pair, machine-readable\n"
            "  --topology  print the distances hwloc reads from an XML file; no measurement\n");
}

static bool parse_size(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || text[0] == '-')
        return false;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    if (*end || v > (SIZE_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

/* Returns 0 to run, 1 when help was printed, 2 on a bad command line. */
static int parse_options(int argc, char **argv, struct probe_options *opt)
{
    static const struct option longopts[] = {
        {"size", required_argument, NULL, 's'}, {"reps", required_argument, NULL, 'r'},
        {"quick", no_argument, NULL, 'q'},      {"csv", no_argument, NULL, 'c'},
        {"topology", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bool size_given = false, reps_given = false;
    *opt = (struct probe_options){.size = 64u << 20, .reps = 5, .loads = 1u << 22};
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's':
            if (!parse_size(optarg, &opt->size) || opt->size < 4096) {
                fprintf(stderr, "proust-numaprobe: bad --size '%s' (bytes, optional K/M/G suffix, at least 4K)\n", optarg);
                return 2;
            }
            size_given = true;
            break;
        case 'r': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*end || end == optarg || v == 0 || v > 1000) {
                fprintf(stderr, "proust-numaprobe: bad --reps '%s' (1..1000)\n", optarg);
                return 2;
            }
            opt->reps = (unsigned)v;
            reps_given = true;
            break;
        }
        case 'q': opt->quick = true; break;
        case 'c': opt->csv = true; break;
        case 't': opt->topology_xml = optarg; break;
        case 'h': usage(stdout); return 1;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "proust-numaprobe: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (opt->quick) {
        opt->size = size_given ? opt->size : 8u << 20;
        opt->reps = reps_given ? opt->reps : 1;
        opt->loads = 1u << 18;
    }
    return 0;
}

static uint64_t rng_next(uint64_t *state) /* xorshift64*: fixed seed, reproducible */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

/* A random order of all cache lines: following it jumps to a random page at
 * every step, so neither the prefetcher nor page locality shortens a load. */
static uint32_t *make_order(size_t lines)
{
    uint32_t *order = malloc(lines * sizeof *order);
    if (!order)
        return NULL;
    uint64_t state = 0x9E3779B97F4A7C15ULL;
    for (size_t k = 0; k < lines; k++)
        order[k] = (uint32_t)k;
    for (size_t k = lines - 1; k > 0; k--) {
        size_t pick = rng_next(&state) % (k + 1);
        uint32_t tmp = order[k];
        order[k] = order[pick];
        order[pick] = tmp;
    }
    return order;
}

/* Each visited line stores the address of the next one; the last closes the cycle. */
static void link_chain(char *buf, const uint32_t *order, size_t lines)
{
    for (size_t k = 0; k < lines; k++) {
        char *next = buf + (size_t)order[(k + 1) % lines] * LINE_BYTES;
        *(void **)(buf + (size_t)order[k] * LINE_BYTES) = next;
    }
}

static void *chase(void *start, uint64_t loads)
{
    void **p = start;
    for (uint64_t k = loads / 8; k; k--) {
        p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
        p = (void **)*p; p = (void **)*p; p = (void **)*p; p = (void **)*p;
    }
    return p;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bind_thread(struct probe *p, hwloc_obj_t node, unsigned *flags)
{
    hwloc_const_cpuset_t cpus = node->cpuset;
    if (!hwloc_set_cpubind(p->topo, cpus, HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT) ||
        !hwloc_set_cpubind(p->topo, cpus, HWLOC_CPUBIND_THREAD))
        return;
    fprintf(stderr, "proust-numaprobe: cannot bind the thread to node %u's CPUs (%s); measuring unbound\n",
            node->os_index, strerror(errno));
    *flags |= CELL_CPU_UNBOUND;
}

/* STRICT so that hwloc reports a binding it cannot do instead of hiding it. */
static void *alloc_on(struct probe *p, hwloc_obj_t node, unsigned *flags)
{
    size_t size = p->opt.size;
    void *buf = hwloc_alloc_membind(p->topo, size, node->nodeset, HWLOC_MEMBIND_BIND,
                                    HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
    if (!buf && errno != ENOMEM) {
        static bool told_unsupported;
        if (errno != ENOSYS)
            fprintf(stderr, "proust-numaprobe: cannot bind memory to node %u (%s); "
                            "measuring unbound memory, marked '*'\n", node->os_index, strerror(errno));
        else if (!told_unsupported)
            fprintf(stderr, "proust-numaprobe: binding memory is not supported here; "
                            "measuring unbound memory, marked '*'\n");
        told_unsupported |= errno == ENOSYS;
        *flags |= CELL_MEM_UNBOUND;
        buf = hwloc_alloc(p->topo, size);
    }
    if (!buf)
        fprintf(stderr, "proust-numaprobe: cannot allocate %zu bytes on node %u: %s\n", size,
                node->os_index, strerror(errno));
    return buf;
}

static int measure_cell(struct probe *p, unsigned row, unsigned col)
{
    unsigned *flags = &p->flags[row * p->nmem + col];
    bind_thread(p, p->cpu_nodes[row], flags);
    char *buf = alloc_on(p, p->mem_nodes[col], flags);
    if (!buf)
        return -1;
    madvise(buf, p->opt.size, MADV_HUGEPAGE); /* fewer TLB misses; best effort */
    link_chain(buf, p->order, p->lines);

    hwloc_nodeset_t where = hwloc_bitmap_alloc();
    if (!(*flags & CELL_MEM_UNBOUND) && where &&
        !hwloc_get_area_memlocation(p->topo, buf, p->opt.size, where, HWLOC_MEMBIND_BYNODESET) &&
        !hwloc_bitmap_iszero(where) && !hwloc_bitmap_isincluded(where, p->mem_nodes[col]->nodeset))
        *flags |= CELL_MEM_ELSEWHERE;
    hwloc_bitmap_free(where);

    double *runs = malloc(p->opt.reps * sizeof *runs);
    if (!runs) {
        hwloc_free(p->topo, buf, p->opt.size);
        return -1;
    }
    void *start = buf + (size_t)p->order[0] * LINE_BYTES;
    chase_sink = chase(start, 1u << 16); /* warm the TLB and the clock */
    for (unsigned r = 0; r < p->opt.reps; r++) {
        double t0 = now_ns();
        chase_sink = chase(start, p->opt.loads);
        runs[r] = (now_ns() - t0) / (double)p->opt.loads;
    }
    qsort(runs, p->opt.reps, sizeof *runs, compare_double);
    p->ns[row * p->nmem + col] = runs[p->opt.reps / 2];
    free(runs);
    hwloc_free(p->topo, buf, p->opt.size);
    return 0;
}

static uint64_t llc_size(hwloc_topology_t topo)
{
    static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
                                              HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                              HWLOC_OBJ_L1CACHE};
    for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++) {
        hwloc_obj_t cache = hwloc_get_obj_by_type(topo, levels[k], 0);
        if (cache)
            return cache->attr->cache.size;
    }
    return 0;
}

/* Rows: NUMA nodes with CPUs. Columns: NUMA nodes with memory (all of them
 * if hwloc knows no sizes). ref[row]: the row's own node, else its fastest. */
static int collect_nodes(struct probe *p)
{
    int n = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_NUMANODE);
    if (n <= 0)
        return -1;
    p->cpu_nodes = calloc((size_t)n, sizeof *p->cpu_nodes);
    p->mem_nodes = calloc((size_t)n, sizeof *p->mem_nodes);
    if (!p->cpu_nodes || !p->mem_nodes)
        return -1;
    bool any_size = false;
    for (int k = 0; k < n; k++)
        any_size |= hwloc_get_obj_by_type(p->topo, HWLOC_OBJ_NUMANODE, (unsigned)k)->attr->numanode.local_memory > 0;
    for (int k = 0; k < n; k++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(p->topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
        if (!hwloc_bitmap_iszero(node->cpuset))
            p->cpu_nodes[p->ncpu++] = node;
        if (!any_size || node->attr->numanode.local_memory > 0)
            p->mem_nodes[p->nmem++] = node;
    }
    size_t cells = (size_t)p->ncpu * p->nmem;
    p->ns = calloc(cells, sizeof *p->ns);
    p->flags = calloc(cells, sizeof *p->flags);
    p->hops = calloc(cells, sizeof *p->hops);
    p->ref = calloc(p->ncpu, sizeof *p->ref);
    return p->ncpu && p->nmem && p->ns && p->flags && p->hops && p->ref ? 0 : -1;
}

static void find_local_columns(struct probe *p)
{
    for (unsigned r = 0; r < p->ncpu; r++) {
        const double *row = &p->ns[r * p->nmem];
        unsigned best = 0;
        for (unsigned c = 0; c < p->nmem; c++) {
            if (p->mem_nodes[c] == p->cpu_nodes[r]) {
                best = c;
                break;
            }
            if (row[c] < row[best])
                best = c;
        }
        p->ref[r] = best;
    }
}

static double overhead(const struct probe *p, unsigned r, unsigned c)
{
    return p->ns[r * p->nmem + c] - p->ns[r * p->nmem + p->ref[r]];
}

/* unit = the smallest off-diagonal overhead above the noise floor; every
 * overhead is then a whole number of such hops (seed 002: ~34 ns per link). */
static void infer_hops(struct probe *p)
{
    p->unit = 0;
    for (unsigned r = 0; r < p->ncpu; r++)
        for (unsigned c = 0; c < p->nmem; c++) {
            double o = overhead(p, r, c), noise = UNIFORM_FRACTION * p->ns[r * p->nmem + p->ref[r]];
            if (c != p->ref[r] && o > noise && (p->unit == 0 || o < p->unit))
                p->unit = o;
        }
    for (unsigned r = 0; r < p->ncpu; r++)
        for (unsigned c = 0; c < p->nmem; c++) {
            double o = overhead(p, r, c), noise = UNIFORM_FRACTION * p->ns[r * p->nmem + p->ref[r]];
            bool counts = c != p->ref[r] && p->unit > 0 && o > noise;
            p->hops[r * p->nmem + c] = counts ? (int)(o / p->unit + 0.5) : 0;
        }
}

static unsigned count_links(const struct probe *p, unsigned *one_hop_cells)
{
    unsigned n = (unsigned)hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_NUMANODE), links = 0;
    bool *linked = calloc((size_t)n * n, sizeof *linked);
    *one_hop_cells = 0;
    for (unsigned r = 0; r < p->ncpu; r++)
        for (unsigned c = 0; c < p->nmem; c++) {
            if (p->hops[r * p->nmem + c] != 1)
                continue;
            ++*one_hop_cells;
            unsigned a = p->cpu_nodes[r]->logical_index, b = p->mem_nodes[c]->logical_index;
            bool *pair = linked ? &linked[(a < b ? a : b) * n + (a < b ? b : a)] : NULL;
            if (pair && !*pair) {
                *pair = true;
                links++;
            }
        }
    free(linked);
    return links;
}

enum matrix_kind { SHOW_LATENCY, SHOW_OVERHEAD, SHOW_HOPS };

static void print_matrix(const struct probe *p, const char *title, enum matrix_kind kind)
{
    printf("\n%s\n%6s", title, "");
    for (unsigned c = 0; c < p->nmem; c++) {
        char label[16];
        snprintf(label, sizeof label, "M%u", p->mem_nodes[c]->os_index);
        printf(" %9s ", label);
    }
    printf("\n");
    for (unsigned r = 0; r < p->ncpu; r++) {
        printf("C%-5u", p->cpu_nodes[r]->os_index);
        for (unsigned c = 0; c < p->nmem; c++) {
            unsigned i = r * p->nmem + c;
            const char *mark = p->flags[i] ? "*" : " ";
            if (kind == SHOW_LATENCY)
                printf(" %9.1f%s", p->ns[i], mark);
            else if (kind == SHOW_OVERHEAD)
                printf(" %+9.1f%s", overhead(p, r, c), mark);
            else
                printf(" %9d%s", p->hops[i], mark);
        }
        printf("\n");
    }
}

/* hwloc's own latency-kind matrix (ACPI SLIT on Linux, or the XML's). */
static struct hwloc_distances_s *get_distances(hwloc_topology_t topo)
{
    struct hwloc_distances_s *dist = NULL;
    unsigned nr = 1;
    if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &dist,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) || nr == 0)
        return NULL;
    return dist;
}

static void print_distances(struct hwloc_distances_s *dist)
{
    if (!dist) {
        printf("\nhwloc distances (latency): none reported\n");
        return;
    }
    printf("\nhwloc distances (latency, %ux%u, relative units):\n%6s", dist->nbobjs,
           dist->nbobjs, "");
    for (unsigned c = 0; c < dist->nbobjs; c++) {
        char label[16];
        snprintf(label, sizeof label, "N%u", dist->objs[c]->os_index);
        printf(" %8s", label);
    }
    printf("\n");
    for (unsigned r = 0; r < dist->nbobjs; r++) {
        printf("N%-5u", dist->objs[r]->os_index);
        for (unsigned c = 0; c < dist->nbobjs; c++)
            printf(" %8llu", (unsigned long long)dist->values[r * dist->nbobjs + c]);
        printf("\n");
    }
}

static void print_csv(const struct probe *p, struct hwloc_distances_s *dist)
{
    printf("cpu_node,mem_node,latency_ns,overhead_ns,hops,cpu_bound,mem_bound,hwloc_distance\n");
    for (unsigned r = 0; r < p->ncpu; r++)
        for (unsigned c = 0; c < p->nmem; c++) {
            unsigned i = r * p->nmem + c;
            hwloc_uint64_t d = 0, back;
            printf("%u,%u,%.2f,%.2f,%d,%d,%d,", p->cpu_nodes[r]->os_index,
                   p->mem_nodes[c]->os_index, p->ns[i], overhead(p, r, c), p->hops[i],
                   !(p->flags[i] & CELL_CPU_UNBOUND),
                   !(p->flags[i] & (CELL_MEM_UNBOUND | CELL_MEM_ELSEWHERE)));
            if (dist && !hwloc_distances_obj_pair_values(dist, p->cpu_nodes[r], p->mem_nodes[c], &d, &back))
                printf("%llu\n", (unsigned long long)d);
            else
                printf("\n");
        }
}

static void print_report(struct probe *p, struct hwloc_distances_s *dist)
{
    printf("%u NUMA nodes with CPUs, %u with memory; %zu MiB buffer, median of %u x %llu loads%s\n",
           p->ncpu, p->nmem, p->opt.size >> 20, p->opt.reps, (unsigned long long)p->opt.loads,
           p->opt.quick ? " (--quick: indicative only)" : "");
    print_matrix(p, "Latency (ns per dependent load; rows: CPU node, columns: memory node)",
                 SHOW_LATENCY);
    print_matrix(p, "Overhead vs the row's local memory (ns)", SHOW_OVERHEAD);
    if (p->unit == 0) {
        printf("\nAll overheads are under %.0f %% of local latency: the machine looks uniform.\n",
               UNIFORM_FRACTION * 100);
    } else {
        char title[96];
        snprintf(title, sizeof title, "Inferred hops (unit = %.1f ns, the smallest overhead)",
                 p->unit);
        print_matrix(p, title, SHOW_HOPS);
    }
    print_distances(dist);
    unsigned one_hop, links = count_links(p, &one_hop);
    printf("\nLinks inferred: %u (%u one-hop entries)\n", links, one_hop);
    for (unsigned i = 0; i < p->ncpu * p->nmem; i++)
        if (p->flags[i]) {
            printf("* = not measured as asked: thread or memory could not be bound where requested\n");
            break;
        }
}

/* --topology: an XML describes another machine, so only hwloc's view is shown. */
static int run_xml(const struct probe_options *opt)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return 1;
    if (hwloc_topology_set_xml(topo, opt->topology_xml) || hwloc_topology_load(topo)) {
        fprintf(stderr, "proust-numaprobe: cannot load topology '%s': %s\n", opt->topology_xml,
                strerror(errno));
        hwloc_topology_destroy(topo);
        return 1;
    }
    printf("%s: %d NUMA node(s). Cannot measure latency on a machine this does not run on; "
           "showing hwloc's distances only.\n",
           opt->topology_xml, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
    struct hwloc_distances_s *dist = get_distances(topo);
    print_distances(dist);
    if (dist)
        hwloc_distances_release(topo, dist);
    hwloc_topology_destroy(topo);
    return 0;
}

static int run_probe(struct probe *p)
{
    if (collect_nodes(p)) {
        fprintf(stderr, "proust-numaprobe: no NUMA node found, or out of memory\n");
        return 1;
    }
    uint64_t llc = llc_size(p->topo);
    if (llc && p->opt.size < 4 * llc && !p->opt.quick)
        fprintf(stderr, "proust-numaprobe: warning: %zu MiB buffer is not much larger than the "
                        "%llu MiB last-level cache; cache hits will lower the numbers\n",
                p->opt.size >> 20, (unsigned long long)(llc >> 20));
    p->lines = p->opt.size / LINE_BYTES;
    p->order = make_order(p->lines);
    if (!p->order) {
        fprintf(stderr, "proust-numaprobe: out of memory for the chase order\n");
        return 1;
    }
    for (unsigned r = 0; r < p->ncpu; r++)
        for (unsigned c = 0; c < p->nmem; c++)
            if (measure_cell(p, r, c))
                return 1;
    find_local_columns(p);
    infer_hops(p);

    struct hwloc_distances_s *dist = get_distances(p->topo);
    FILE *note = p->opt.csv ? stderr : stdout;
    if (p->opt.csv)
        print_csv(p, dist);
    if (p->ncpu == 1 && p->nmem == 1)
        fprintf(note, "1 NUMA node: nothing to compare; local memory latency %.1f ns%s\n", p->ns[0],
                p->flags[0] ? " (unbound)" : "");
    else if (!p->opt.csv)
        print_report(p, dist);
    if (dist)
        hwloc_distances_release(p->topo, dist);
    return 0;
}

int main(int argc, char **argv)
{
    struct probe p = {0};
    int rc = parse_options(argc, argv, &p.opt);
    if (rc)
        return rc == 1 ? 0 : 2;
    if (p.opt.topology_xml)
        return run_xml(&p.opt);

    if (hwloc_topology_init(&p.topo) || hwloc_topology_load(p.topo)) {
        fprintf(stderr, "proust-numaprobe: cannot load this machine's topology: %s\n",
                strerror(errno));
        return 1;
    }
    rc = run_probe(&p);
    free(p.order);
    free(p.cpu_nodes);
    free(p.mem_nodes);
    free(p.ns);
    free(p.flags);
    free(p.hops);
    free(p.ref);
    hwloc_topology_destroy(p.topo);
    return rc;
}
