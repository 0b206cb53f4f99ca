/*
 * Placement decisions on machines we do not have (tests/topology/xml, see
 * its README): the cpusets and nodesets the pure decision function returns
 * for one NIC, two NICs under each hint, no locality, no NIC, one node, a
 * user binding kept or overridden, fan-out by distance, bad input.
 */
#include <string.h>

#include "proust.h"
#include "topology/placement.h"
#include "unit/unit.h"

#ifndef TOPO_XML_DIR
#error TOPO_XML_DIR must name tests/topology/xml
#endif

#define EXPECT_SET(bitmap, text)                                                               \
    do {                                                                                       \
        char got_[128] = "-";                                                                  \
        if (bitmap)                                                                            \
            hwloc_bitmap_list_snprintf(got_, sizeof got_, bitmap);                             \
        if (strcmp(got_, text) != 0) {                                                         \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__,      \
                    #bitmap, got_, text);                                                      \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static struct proust__topo topo;

static void load(const char *file)
{
    proust__topo_unload(&topo);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TOPO_XML_DIR, file);
    EXPECT_EQ(proust__topo_load(&topo, path, true), PROUST_OK);
    EXPECT_TRUE(!topo.this_system); /* never bound to */
}

/* rails: a fast fabric on `fast`, an Ethernet on `eth` (NULL: absent),
 * shm (no device) last */
static struct proust__place_rail rails[3];
static int nrails;

static void set_rails(const char *fast, double fast_gbs, const char *eth, double eth_gbs)
{
    nrails = 0;
    if (fast)
        rails[nrails++] = (struct proust__place_rail){"ofi", fast, 1.5, fast_gbs, true};
    if (eth)
        rails[nrails++] = (struct proust__place_rail){"tcp", eth, 1.0, eth_gbs, true};
    rails[nrails++] = (struct proust__place_rail){"shm", NULL, 0.3, 8.0, true};
}

static struct proust__placement decide(enum proust__place_mode mode, enum proust__place_hint hint,
                                       const char *binding, int lrank, int lsize, int threads)
{
    hwloc_bitmap_t b = NULL;
    if (binding) {
        b = hwloc_bitmap_alloc();
        EXPECT_EQ(hwloc_bitmap_list_sscanf(b, binding), 0);
    }
    struct proust__place_input in = {.topo = &topo, .rails = rails, .nrails = nrails,
                                     .mode = mode, .hint = hint, .binding = b,
                                     .local_rank = lrank, .local_size = lsize,
                                     .threads_wanted = threads};
    struct proust__placement p;
    int rc = proust__place_decide(&in, &p);
    if (rc != PROUST_OK)
        fprintf(stderr, "decide failed: %d\n", rc);
    EXPECT_EQ(rc, PROUST_OK);
    EXPECT_TRUE(strlen(p.reasons) > 0);
    hwloc_bitmap_free(b);
    return p;
}

static void one_nic(void)
{
    /* ib0/mlx5_0 on package 1 (cpus 8-15 with SMT) */
    load("numa2-nic1.xml");
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    EXPECT_EQ(proust__topo_device_nodes(&topo, "mlx5_0", nodes), 1);
    EXPECT_SET(nodes, "1");
    EXPECT_EQ(proust__topo_device_nodes(&topo, "ib0", nodes), 1);
    EXPECT_EQ(proust__topo_device_nodes(&topo, "eth9", nodes), -1);
    EXPECT_EQ(proust__topo_device_nodes(&topo, "pci=0000:81:00.0", nodes), 1); /* its PCI address */
    EXPECT_SET(nodes, "1");
    EXPECT_EQ(proust__topo_device_nodes(&topo, "pci=0000:05:00.0", nodes), -1);
    hwloc_bitmap_free(nodes);
    set_rails("mlx5_0", 12.5, NULL, 0);
    for (int hint = 0; hint < 2; hint++) {
        struct proust__placement p = decide(PROUST__PLACE_AUTO, hint, NULL, 0, 2, 0);
        EXPECT_TRUE(p.nic_known);
        EXPECT_EQ(p.deciding_rail, 0);
        EXPECT_SET(p.nic_nodes, "1");
        EXPECT_SET(p.process, "8-15");
        EXPECT_EQ(p.nthreads, 1);
        EXPECT_SET(p.thread[0], "8-15");
        EXPECT_SET(p.memory[0], "1"); /* the fabric's buffers near its NIC */
        EXPECT_SET(p.memory[1], "1"); /* shm rings where the process now runs */
        proust__place_free(&p);
    }
    /* one rank for two nodes (MPI + threads): not confined to one node,
     * but its progress thread and buffers still go near the NIC */
    struct proust__placement lone = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 1, 0);
    EXPECT_SET(lone.process, "-");
    EXPECT_SET(lone.thread[0], "8-15");
    EXPECT_SET(lone.memory[0], "1");
    EXPECT_TRUE(strstr(lone.reasons, "would take cores") != NULL);
    proust__place_free(&lone);
    /* cores: one thread near the NIC, the application keeps its cores */
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_CORES, NULL, 0, 1, 0);
    EXPECT_SET(p.process, "-");
    EXPECT_EQ(p.nthreads, 1);
    EXPECT_SET(p.thread[0], "8-15");
    EXPECT_SET(p.memory[0], "1");
    EXPECT_SET(p.memory[1], "-");
    proust__place_free(&p);
    /* off: nothing at all */
    p = decide(PROUST__PLACE_OFF, PROUST__HINT_LATENCY, NULL, 0, 1, 0);
    EXPECT_SET(p.process, "-");
    EXPECT_EQ(p.nthreads, 1);
    EXPECT_SET(p.thread[0], "-");
    EXPECT_SET(p.memory[0], "-");
    proust__place_free(&p);
    /* more threads than nodes: nearest first, then wrap around by distance */
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 1, 3);
    EXPECT_EQ(p.nthreads, 3);
    EXPECT_SET(p.thread[0], "8-15");
    EXPECT_SET(p.thread[1], "0-7");
    EXPECT_SET(p.thread[2], "8-15");
    proust__place_free(&p);
    /* two rails on the same NIC (ib0 and mlx5_0 on node 1), equally wide:
     * one thread for that node, not two */
    rails[1] = (struct proust__place_rail){"tcp", "ib0", 2.0, 12.5, true};
    nrails = 2;
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_BANDWIDTH, NULL, 0, 1, 0);
    EXPECT_SET(p.nic_nodes, "1");
    EXPECT_EQ(p.nthreads, 1);
    EXPECT_SET(p.thread[0], "8-15");
    EXPECT_SET(p.memory[1], "1");
    proust__place_free(&p);
    set_rails("mlx5_0", 12.5, NULL, 0);
    /* the application bound its threads one by one (union: every cpu):
     * a user binding, the process is not moved */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    hwloc_bitmap_set_range(all, 0, 15);
    struct proust__place_input in = {.topo = &topo, .rails = rails, .nrails = nrails,
                                     .mode = PROUST__PLACE_AUTO, .hint = PROUST__HINT_LATENCY,
                                     .binding = all, .threads_bound = true,
                                     .local_rank = 0, .local_size = 2};
    EXPECT_EQ(proust__place_decide(&in, &p), PROUST_OK);
    EXPECT_TRUE(p.user_bound);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "8-15");
    proust__place_free(&p);
    in.mode = PROUST__PLACE_OVERRIDE;
    EXPECT_EQ(proust__place_decide(&in, &p), PROUST_OK);
    EXPECT_SET(p.process, "8-15");
    proust__place_free(&p);
    hwloc_bitmap_free(all);
    /* a rail that carries no peer (all peers local) does not decide */
    rails[0].used = false;
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 1, 0);
    EXPECT_TRUE(!p.nic_known);
    EXPECT_SET(p.process, "-");
    EXPECT_EQ(p.nthreads, 2); /* one per NUMA node */
    EXPECT_SET(p.thread[0], "0-7");
    EXPECT_SET(p.thread[1], "8-15");
    proust__place_free(&p);
}

static void user_binding(void)
{
    load("numa2-nic1.xml");
    set_rails("mlx5_0", 12.5, NULL, 0);
    /* kept: the process stays on node 0; threads within the binding */
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, "0-3", 0, 1, 0);
    EXPECT_TRUE(p.user_bound);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "0-3");
    EXPECT_SET(p.memory[0], "1"); /* the NIC's buffers still near the NIC */
    EXPECT_SET(p.memory[1], "0"); /* shm rings where the user put the process */
    EXPECT_TRUE(strstr(p.reasons, "kept") != NULL);
    proust__place_free(&p);
    /* a binding that already covers the NIC node: threads there */
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, "6-9", 0, 1, 0);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "8-9");
    proust__place_free(&p);
    /* overridden */
    p = decide(PROUST__PLACE_OVERRIDE, PROUST__HINT_LATENCY, "0-3", 0, 1, 0);
    EXPECT_SET(p.process, "8-15");
    EXPECT_SET(p.thread[0], "8-15");
    EXPECT_SET(p.memory[1], "1");
    EXPECT_TRUE(strstr(p.reasons, "override") != NULL);
    proust__place_free(&p);
    /* binding to every cpu is no binding */
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, "0-15", 0, 2, 0);
    EXPECT_TRUE(!p.user_bound);
    EXPECT_SET(p.process, "8-15");
    proust__place_free(&p);
}

static void two_nics(void)
{
    /* eth1 on node 0 (cpus 0-3), ib0 on node 1 (cpus 4-7); the Ethernet is
     * the lower-latency rail here, the fabric the wider one */
    load("numa2-2nics.xml");
    set_rails("ib0", 12.5, "eth1", 1.2);
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 2, 0);
    EXPECT_EQ(p.deciding_rail, 1);
    EXPECT_SET(p.nic_nodes, "0");
    EXPECT_SET(p.process, "0-3");
    EXPECT_SET(p.thread[0], "0-3");
    EXPECT_SET(p.memory[0], "1"); /* each rail's buffers near its own NIC */
    EXPECT_SET(p.memory[1], "0");
    EXPECT_TRUE(strstr(p.reasons, "rails disagree") != NULL);
    proust__place_free(&p);
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_BANDWIDTH, NULL, 0, 2, 0);
    EXPECT_EQ(p.deciding_rail, 0);
    EXPECT_SET(p.nic_nodes, "1");
    EXPECT_SET(p.process, "4-7");
    EXPECT_EQ(p.nthreads, 1);
    EXPECT_SET(p.thread[0], "4-7");
    proust__place_free(&p);
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_CORES, NULL, 0, 1, 0);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "0-3");
    proust__place_free(&p);
    /* equal bandwidth: both NICs stream, one thread per NIC, ranks fill
     * the nodes in turn */
    set_rails("ib0", 12.5, "eth1", 12.0);
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_BANDWIDTH, NULL, 5, 8, 0);
    EXPECT_SET(p.nic_nodes, "0-1");
    EXPECT_EQ(p.nthreads, 2);
    EXPECT_SET(p.thread[0], "4-7");
    EXPECT_SET(p.thread[1], "0-3");
    EXPECT_SET(p.process, "4-7"); /* rank 5: node 0's 4 cores are taken */
    proust__place_free(&p);
}

static void fan_out(void)
{
    /* ring 0-1-2-3-0, ib0 on node 2 (cpus 4-5) */
    load("numa4-nic.xml");
    EXPECT_EQ(proust__topo_distance(&topo, 0, 2), 22);
    EXPECT_EQ(proust__topo_distance(&topo, 1, 2), 16);
    EXPECT_EQ(proust__topo_distance(&topo, 3, 3), 10);
    set_rails("mlx5_0", 12.5, NULL, 0);
    const char *rank_cpus[8] = {"4-5", "4-5", "2-3", "2-3", "6-7", "6-7", "0-1", "0-1"};
    for (int r = 0; r < 8; r++) {
        struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, r, 8, 0);
        EXPECT_SET(p.process, rank_cpus[r]);
        proust__place_free(&p);
    }
    /* more ranks than cores wrap around */
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 9, 12, 0);
    EXPECT_SET(p.process, "4-5");
    proust__place_free(&p);
    /* several threads: nearest node first, then by distance */
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 1, 4);
    EXPECT_EQ(p.nthreads, 4);
    EXPECT_SET(p.thread[0], "4-5");
    EXPECT_SET(p.thread[1], "2-3");
    EXPECT_SET(p.thread[2], "6-7");
    EXPECT_SET(p.thread[3], "0-1");
    proust__place_free(&p);
    /* a user binding far from the NIC keeps the threads in it, nearest
     * node of the binding first */
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, "0-1,6-7", 0, 1, 2);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "6-7");
    EXPECT_SET(p.thread[1], "0-1");
    proust__place_free(&p);

    /* a NIC near a package of two nodes */
    load("numa4-2pernode.xml");
    EXPECT_EQ(proust__topo_distance(&topo, 2, 3), 12);
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 2, 4, 0);
    EXPECT_SET(p.nic_nodes, "2-3");
    EXPECT_SET(p.process, "6-7");
    EXPECT_SET(p.memory[0], "2-3");
    EXPECT_SET(p.thread[0], "4-5");
    proust__place_free(&p);
}

static void hagrid(void)
{
    /* seed 002's 8-node machine, InfiniBand near node 0 */
    load("hagrid8.xml");
    EXPECT_EQ(proust__topo_numa_count(&topo), 8);
    EXPECT_EQ(proust__topo_distance(&topo, 0, 7), 28); /* 3 HyperTransport hops */
    EXPECT_EQ(proust__topo_distance(&topo, 0, 4), 22);
    unsigned order[8];
    hwloc_bitmap_t from = hwloc_bitmap_alloc();
    hwloc_bitmap_only(from, 7);
    EXPECT_EQ(proust__topo_nodes_by_distance(&topo, from, order, 8), 8);
    /* from node 7: itself, then its links 4, 5, 6, then 2, 3 (2 hops), then 0, 1 */
    unsigned want[8] = {7, 4, 5, 6, 2, 3, 0, 1};
    for (int i = 0; i < 8; i++)
        EXPECT_EQ(order[i], want[i]);
    hwloc_bitmap_free(from);
    set_rails("mthca0", 1.4, NULL, 0);
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_BANDWIDTH, NULL, 3, 16, 8);
    EXPECT_SET(p.process, "2-3"); /* ranks 2-3 on node 1, one hop away */
    EXPECT_SET(p.memory[0], "0");
    EXPECT_SET(p.thread[0], "0-1");
    EXPECT_SET(p.thread[1], "2-3");
    EXPECT_SET(p.thread[2], "4-5");
    EXPECT_SET(p.thread[7], "14-15");
    proust__place_free(&p);
}

static void no_locality(void)
{
    /* a NIC attached to the whole machine */
    load("noloc.xml");
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    EXPECT_EQ(proust__topo_device_nodes(&topo, "mlx5_0", nodes), 0);
    EXPECT_SET(nodes, "0-1");
    hwloc_bitmap_free(nodes);
    set_rails("mlx5_0", 12.5, NULL, 0);
    struct proust__placement p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 2, 0);
    EXPECT_TRUE(!p.nic_known);
    EXPECT_SET(p.process, "-");
    EXPECT_EQ(p.nthreads, 2);
    EXPECT_SET(p.thread[0], "0-1");
    EXPECT_SET(p.thread[1], "2-3");
    EXPECT_SET(p.memory[0], "-");
    EXPECT_TRUE(strstr(p.reasons, "no locality") != NULL);
    proust__place_free(&p);
    /* no I/O at all: the device is unknown; distances from the tree */
    load("numa2-nonic.xml");
    EXPECT_EQ(proust__topo_distance(&topo, 0, 1), 30);
    set_rails(NULL, 0, "eth0", 1.2);
    p = decide(PROUST__PLACE_AUTO, PROUST__HINT_LATENCY, NULL, 0, 1, 0);
    EXPECT_TRUE(!p.nic_known);
    EXPECT_SET(p.process, "-");
    EXPECT_TRUE(strstr(p.reasons, "not a device hwloc knows") != NULL);
    proust__place_free(&p);
    /* one node: nothing is nearer than anything else */
    load("single.xml");
    set_rails(NULL, 0, "eth0", 1.2);
    p = decide(PROUST__PLACE_OVERRIDE, PROUST__HINT_LATENCY, "0", 0, 1, 0);
    EXPECT_TRUE(!p.nic_known);
    EXPECT_SET(p.process, "-");
    EXPECT_SET(p.thread[0], "-");
    proust__place_free(&p);
}

static void bad_input(void)
{
    load("numa2-nic1.xml");
    set_rails("mlx5_0", 12.5, NULL, 0);
    struct proust__place_input in = {.topo = &topo, .rails = rails, .nrails = nrails,
                                     .mode = PROUST__PLACE_AUTO, .hint = PROUST__HINT_LATENCY,
                                     .local_rank = 2, .local_size = 2};
    struct proust__placement p;
    EXPECT_EQ(proust__place_decide(&in, &p), PROUST_ERR_INVALID); /* rank >= size */
    proust__place_free(&p);
    in.local_rank = 0;
    in.nrails = PROUST__PLACE_MAX_RAILS + 1;
    EXPECT_EQ(proust__place_decide(&in, &p), PROUST_ERR_INVALID);
    proust__place_free(&p);
    in.nrails = nrails;
    in.hint = (enum proust__place_hint)7;
    EXPECT_EQ(proust__place_decide(&in, &p), PROUST_ERR_INVALID);
    proust__place_free(&p);
    EXPECT_EQ(proust__place_hint_parse("bandwidth"), PROUST__HINT_BANDWIDTH);
    EXPECT_EQ(proust__place_hint_parse("fast"), -1);
    EXPECT_EQ(proust__place_mode_parse("override"), PROUST__PLACE_OVERRIDE);
    EXPECT_EQ(proust__place_mode_parse(""), -1);
    struct proust__topo none;
    EXPECT_EQ(proust__topo_load(&none, TOPO_XML_DIR "/no-such-file.xml", true),
              PROUST_ERR_INVALID);
    EXPECT_EQ(proust_placement_hint("sideways"), PROUST_ERR_INVALID);
    EXPECT_EQ(proust_placement_hint("cores"), PROUST_OK);
}

int main(void)
{
    one_nic();
    user_binding();
    two_nics();
    fan_out();
    hagrid();
    no_locality();
    bad_input();
    proust__topo_unload(&topo);
    printf("placement decisions: all as expected\n");
    return 0;
}
