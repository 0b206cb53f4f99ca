/*
 * The machine as hwloc sees it, I/O devices included: cores, NUMA nodes,
 * their distances, and the network / OpenFabrics devices with their
 * locality. Loaded from this machine or from an XML file (tests, and
 * `proust-info --placement --topology` for machines we do not have); an XML
 * topology is described, never bound to.
 *
 * This layer includes only common/ and hwloc; placement.c decides on top of
 * it, the session applies the decision.
 */
#ifndef PROUST_TOPOLOGY_H
#define PROUST_TOPOLOGY_H

#include <hwloc.h>
#include <stdbool.h>

struct proust__topo {
    hwloc_topology_t h;
    bool this_system; /* binding applies (false for an XML of another machine) */
    char source[256]; /* "this machine" or the XML path */
};

/* Load this machine's topology (xml NULL or "") or an XML file. with_io
 * keeps network and OpenFabrics devices (hwloc 2 drops I/O objects unless
 * told; discovering them costs tens of milliseconds, so init loads without them and
 * reads a device's locality from sysfs). Errors: PROUST_ERR_SYS (hwloc
 * failed; logged), PROUST_ERR_INVALID (unreadable XML). */
int proust__topo_load(struct proust__topo *t, const char *xml, bool with_io);
void proust__topo_unload(struct proust__topo *t);

int proust__topo_numa_count(const struct proust__topo *t);

/* The network or OpenFabrics OS device called `name` ("eth0", "ib0",
 * "mlx5_0"), or the PCI device at "pci=DOMAIN:BUS:DEV.FN" (what a
 * libfabric provider reports), if the topology holds I/O objects; NULL. */
hwloc_obj_t proust__topo_device(const struct proust__topo *t, const char *name);

/* The NUMA nodes nearest device `name`: the nodeset of its first non-I/O
 * ancestor in the topology or, on this machine, its PCI device's
 * local_cpus in sysfs. Returns 1 when that says something (some nodes are
 * nearer than others), 0 when it does not (the device hangs off the whole
 * machine, or there is one node), -1 when no such device is known; `out`
 * is all nodes unless 1. */
int proust__topo_device_nodes(const struct proust__topo *t, const char *name, hwloc_bitmap_t out);

/* Distance between two NUMA nodes given by logical index: hwloc's latency
 * matrix (from the firmware or the XML) where it has one, else 10 for the
 * node itself, +10 for each level of the tree between them. */
unsigned proust__topo_distance(const struct proust__topo *t, unsigned a, unsigned b);

/* NUMA nodes (logical indexes) in order of distance from the nearest node
 * of `from` (nearest first; ties by index). Returns the count written. */
int proust__topo_nodes_by_distance(const struct proust__topo *t, hwloc_const_nodeset_t from,
                                   unsigned *order, int max);

/* The cpus of the machine a process may use (allowed set). */
hwloc_const_cpuset_t proust__topo_allowed(const struct proust__topo *t);

#endif
