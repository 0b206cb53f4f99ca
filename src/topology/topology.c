/*
 * Topology discovery over hwloc 2: load (machine or XML), devices and their
 * locality, NUMA distances. See topology.h.
 */
#include "topology/topology.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc/linux.h>

#include "common/log.h"
#include "proust.h"

int proust__topo_load(struct proust__topo *t, const char *xml, bool with_io)
{
    memset(t, 0, sizeof *t);
    if (hwloc_topology_init(&t->h) != 0) {
        PROUST_ERROR("topology: hwloc cannot start: %s", strerror(errno));
        t->h = NULL;
        return PROUST_ERR_SYS;
    }
    /* NICs are OS devices under PCI devices: keep both kinds, drop the
     * bridges and disks nobody asked for */
    if (with_io) {
        hwloc_topology_set_io_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    } else {
        /* init: placement needs cores and nodes only; skipping caches
         * saves part of the load time */
        hwloc_topology_set_cache_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_icache_types_filter(t->h, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    if (xml && xml[0]) {
        if (access(xml, R_OK) != 0 || hwloc_topology_set_xml(t->h, xml) != 0) {
            PROUST_ERROR("topology: cannot read the XML topology %s: %s", xml, strerror(errno));
            hwloc_topology_destroy(t->h);
            t->h = NULL;
            return PROUST_ERR_INVALID;
        }
        /* an XML of another machine: we describe it, we do not bind to it */
        hwloc_topology_set_flags(t->h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
        snprintf(t->source, sizeof t->source, "%s", xml);
    } else {
        snprintf(t->source, sizeof t->source, "this machine");
    }
    if (hwloc_topology_load(t->h) != 0) {
        PROUST_ERROR("topology: hwloc cannot load %s: %s", t->source, strerror(errno));
        hwloc_topology_destroy(t->h);
        t->h = NULL;
        return xml && xml[0] ? PROUST_ERR_INVALID : PROUST_ERR_SYS;
    }
    t->this_system = hwloc_topology_is_thissystem(t->h) != 0;
    return PROUST_OK;
}

void proust__topo_unload(struct proust__topo *t)
{
    if (t->h)
        hwloc_topology_destroy(t->h);
    t->h = NULL;
}

int proust__topo_numa_count(const struct proust__topo *t)
{
    int n = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE);
    return n > 0 ? n : 1;
}

hwloc_obj_t proust__topo_device(const struct proust__topo *t, const char *name)
{
    if (!name || !name[0])
        return NULL;
    if (strncmp(name, "pci=", 4) == 0)
        return hwloc_get_pcidev_by_busidstring(t->h, name + 4);
    for (hwloc_obj_t o = hwloc_get_next_osdev(t->h, NULL); o; o = hwloc_get_next_osdev(t->h, o)) {
        if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
            o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS)
            continue;
        if (o->name && strcmp(o->name, name) == 0)
            return o;
    }
    return NULL;
}

/* sysfs: the cpus near the PCI device behind a network or InfiniBand
 * device, or a PCI address ("pci=0000:81:00.0"); false if there is none
 * (virtual interfaces) */
static bool sysfs_device_cpus(const char *name, hwloc_bitmap_t cpus)
{
    /* a virtio NIC's device is a virtio bus device: its PCI parent knows */
    static const char *const paths[] = {"/sys/class/net/%s/device/local_cpus",
                                        "/sys/class/net/%s/device/../local_cpus",
                                        "/sys/class/infiniband/%s/device/local_cpus",
                                        "/sys/bus/pci/devices/%s/local_cpus"};
    bool pci = strncmp(name, "pci=", 4) == 0;
    for (int i = pci ? 3 : 0; i < (pci ? 4 : 3); i++) {
        char path[256];
        snprintf(path, sizeof path, paths[i], pci ? name + 4 : name);
        if (strchr(name, '/') == NULL && access(path, R_OK) == 0 &&
            hwloc_linux_read_path_as_cpumask(path, cpus) == 0 && !hwloc_bitmap_iszero(cpus))
            return true;
    }
    return false;
}

int proust__topo_device_nodes(const struct proust__topo *t, const char *name, hwloc_bitmap_t out)
{
    hwloc_const_nodeset_t all = hwloc_topology_get_topology_nodeset(t->h);
    hwloc_bitmap_copy(out, all);
    if (!name || !name[0])
        return -1;
    hwloc_obj_t dev = proust__topo_device(t, name);
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    int found = -1;
    if (dev) {
        hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->h, dev);
        found = 0;
        if (anc && anc->nodeset && !hwloc_bitmap_iszero(anc->nodeset)) {
            hwloc_bitmap_copy(nodes, anc->nodeset);
            found = 1;
        }
    } else if (t->this_system) {
        hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
        if (sysfs_device_cpus(name, cpus)) {
            hwloc_cpuset_to_nodeset(t->h, cpus, nodes);
            found = hwloc_bitmap_iszero(nodes) ? 0 : 1;
        }
        hwloc_bitmap_free(cpus);
    }
    /* a device near every node that has cores (attached to the machine,
     * or one node; memory-only nodes do not count) gives no preference */
    hwloc_bitmap_t with_cpus = hwloc_bitmap_alloc();
    hwloc_cpuset_to_nodeset(t->h, hwloc_topology_get_topology_cpuset(t->h), with_cpus);
    if (found == 1 && hwloc_bitmap_isincluded(with_cpus, nodes))
        found = 0;
    hwloc_bitmap_free(with_cpus);
    if (found == 1)
        hwloc_bitmap_copy(out, nodes);
    hwloc_bitmap_free(nodes);
    return found;
}

/* Levels of the tree between two objects: from each up to their common
 * ancestor. */
static unsigned tree_hops(hwloc_topology_t h, hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t c = hwloc_get_common_ancestor_obj(h, a, b);
    unsigned hops = 0;
    for (hwloc_obj_t o = a; o && o != c; o = o->parent)
        hops++;
    for (hwloc_obj_t o = b; o && o != c; o = o->parent)
        hops++;
    return hops;
}

/* Distance between two nodes with the matrix `d` (NULL: none). */
static unsigned distance_in(const struct proust__topo *t, struct hwloc_distances_s *d, unsigned a,
                            unsigned b)
{
    hwloc_obj_t na = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, a);
    hwloc_obj_t nb = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, b);
    if (!na || !nb)
        return 0;
    if (na == nb)
        return 10;
    hwloc_uint64_t ab = 0, ba = 0;
    if (d && hwloc_distances_obj_pair_values(d, na, nb, &ab, &ba) == 0)
        return (unsigned)ab;
    /* no matrix: NUMA nodes hang under their package (or group); each
     * level apart is a hop (siblings under a package: 2 levels = 20) */
    return 10 + 5 * tree_hops(t->h, na, nb);
}

/* hwloc's NUMA latency matrix, or NULL; release with hwloc_distances_release */
static struct hwloc_distances_s *latency_matrix(const struct proust__topo *t)
{
    struct hwloc_distances_s *d[1];
    unsigned nr = 1;
    if (hwloc_distances_get_by_type(t->h, HWLOC_OBJ_NUMANODE, &nr, d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr > 0)
        return d[0];
    return NULL;
}

unsigned proust__topo_distance(const struct proust__topo *t, unsigned a, unsigned b)
{
    struct hwloc_distances_s *d = latency_matrix(t);
    unsigned v = distance_in(t, d, a, b);
    if (d)
        hwloc_distances_release(t->h, d);
    return v;
}

int proust__topo_nodes_by_distance(const struct proust__topo *t, hwloc_const_nodeset_t from,
                                   unsigned *order, int max)
{
    int n = hwloc_get_nbobjs_by_type(t->h, HWLOC_OBJ_NUMANODE);
    unsigned dist[256];
    if (n > max)
        n = max;
    if (n > 256)
        n = 256;
    struct hwloc_distances_s *d = latency_matrix(t);
    for (int i = 0; i < n; i++) {
        unsigned best = ~0u;
        for (int j = 0; j < n; j++) {
            hwloc_obj_t f = hwloc_get_obj_by_type(t->h, HWLOC_OBJ_NUMANODE, (unsigned)j);
            if (!hwloc_bitmap_isset(from, f->os_index))
                continue;
            unsigned v = distance_in(t, d, (unsigned)j, (unsigned)i);
            if (v < best)
                best = v;
        }
        dist[i] = best;
        order[i] = (unsigned)i;
    }
    if (d)
        hwloc_distances_release(t->h, d);
    /* insertion sort: a handful of nodes, stable on index */
    for (int i = 1; i < n; i++) {
        unsigned o = order[i];
        int j = i;
        while (j > 0 && dist[order[j - 1]] > dist[o]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = o;
    }
    return n;
}

hwloc_const_cpuset_t proust__topo_allowed(const struct proust__topo *t)
{
    return hwloc_topology_get_allowed_cpuset(t->h);
}
