#!/usr/bin/env python3
"""Write the hwloc 2 XML topologies used by the NUIOA placement tests.

The tests assert placement decisions on machines we do not have, so each
machine is described here once and written as hwloc 2.9 XML into xml/.
Output is deterministic (no timestamps, fixed gp_index order).

    python3 tests/topology/make_topologies.py            # (re)write xml/*.xml
    python3 tests/topology/make_topologies.py --expected # print README table
"""
import os
import sys
from collections import deque
from xml.sax.saxutils import quoteattr

HWLOC_VERSION = "2.9.0"
GIB = 1 << 30
MIB = 1 << 20
PAGE_SIZE = 4096
OSDEV_NETWORK = 2       # HWLOC_OBJ_OSDEV_NETWORK
OSDEV_OPENFABRICS = 3   # HWLOC_OBJ_OSDEV_OPENFABRICS
DIST_KIND = 5           # HWLOC_DISTANCES_KIND_FROM_OS | MEANS_LATENCY
VALUES_PER_LINE = 10    # hwloc's own export splits arrays by 10


def bitmap(bits):
    """Format like hwloc XML and hwloc_bitmap_snprintf: 32-bit words."""
    words = [bits & 0xffffffff]
    bits >>= 32
    while bits:
        words.append(bits & 0xffffffff)
        bits >>= 32
    return ",".join("0x%08x" % w for w in reversed(words))


def mask(indexes):
    bits = 0
    for i in indexes:
        bits |= 1 << i
    return bits


class Obj:
    """One <object>; CPU-side objects carry cpus/nodes, I/O ones do not."""

    def __init__(self, type_, attrs=(), infos=(), cpus=None, nodes=None,
                 os_index=None):
        self.type = type_
        self.os_index = os_index
        self.attrs = list(attrs)
        self.infos = list(infos)
        self.cpus = cpus
        self.nodes = nodes
        self.memory = []     # NUMANode children, exported first like hwloc
        self.children = []   # normal children
        self.io = []         # Bridge/PCIDev/OSDev children
        self.local_memory = None


# ---- I/O devices ---------------------------------------------------------

class Pci:
    def __init__(self, busid, class_id, ids, subsys, rev, link_gbs, osdevs):
        self.busid, self.class_id, self.ids = busid, class_id, ids
        self.subsys, self.rev, self.link_gbs = subsys, rev, link_gbs
        self.osdevs = osdevs  # [(name, osdev_type, [(info, value)])]


def connectx5():
    """Mellanox ConnectX-5 (PCIe gen3 x16), as in the shared example."""
    return Pci("0000:81:00.0", "0207", "15b3:1017", "15b3:0007", "00",
               "15.753846", [
                   ("ib0", OSDEV_NETWORK, [
                       ("Address", "00:00:10:87:fe:80:00:00:00:00:00:00:"
                                   "b8:59:9f:03:00:c1:2d:32"),
                       ("Port", "1")]),
                   ("mlx5_0", OSDEV_OPENFABRICS, [
                       ("NodeGUID", "b859:9f03:00c1:2d32"),
                       ("SysImageGUID", "b859:9f03:00c1:2d32"),
                       ("Port1State", "4")])])


def intel_i350(netname):
    """Intel I350 gigabit Ethernet (PCIe gen2 x4)."""
    return Pci("0000:01:00.0", "0200", "8086:1521", "8086:0001", "01",
               "2.000000", [
                   (netname, OSDEV_NETWORK,
                    [("Address", "a0:36:9f:00:00:01")])])


def infinihost3():
    """Hagrid's Mellanox InfiniHost III Ex (mthca driver, PCIe x8)."""
    return Pci("0000:01:00.0", "0c06", "15b3:6278", "15b3:6278", "20",
               "2.000000", [
                   ("ib0", OSDEV_NETWORK, [
                       ("Address", "80:00:04:04:fe:80:00:00:00:00:00:00:"
                                   "00:02:c9:02:00:21:4f:e9"),
                       ("Port", "1")]),
                   ("mthca0", OSDEV_OPENFABRICS, [
                       ("NodeGUID", "0002:c902:0021:4fe8"),
                       ("SysImageGUID", "0002:c902:0021:4feb"),
                       ("Port1State", "4")])])


def host_bridge(pci):
    """Host bridge -> PCIDev -> OSDevs; where it hangs gives the locality."""
    domain, bus = pci.busid.split(":")[:2]
    bus = int(bus, 16)
    bridge = Obj("Bridge", [("bridge_type", "0-1"), ("depth", "0"),
                            ("bridge_pci", "%s:[%02x-%02x]"
                             % (domain, bus & 0x80, bus))])
    dev = Obj("PCIDev", [
        ("pci_busid", pci.busid),
        ("pci_type", "%s [%s] [%s] %s"
         % (pci.class_id, pci.ids, pci.subsys, pci.rev)),
        ("pci_link_speed", pci.link_gbs)])
    for name, osdev_type, infos in pci.osdevs:
        dev.io.append(Obj("OSDev", [("name", name),
                                    ("osdev_type", str(osdev_type))], infos))
    bridge.io.append(dev)
    return bridge


# ---- machines ------------------------------------------------------------

class Spec:
    def __init__(self, name, what, packages, cores, pus=1, dies=0,
                 memory=GIB, nics=(), distances=None, old_opteron=False):
        self.name, self.what = name, what
        self.packages = packages
        self.dies = dies            # NUMA nodes per package when > 0
        self.cores = cores          # cores per NUMA node
        self.pus = pus              # PUs per core
        self.memory = memory        # bytes per NUMA node
        self.nics = list(nics)      # [(package index or None, Pci)]
        self.distances = distances  # NxN list or None
        self.old_opteron = old_opteron  # K8: L2+L1d per core, no L3

    def numa_count(self):
        return self.packages * max(self.dies, 1)


def build_numa_domain(spec, parent, numa, first_pu, first_core):
    """A NUMA node with its cores/PUs attached under `parent`."""
    ncpus = spec.cores * spec.pus
    cpus = mask(range(first_pu, first_pu + ncpus))
    nodes = 1 << numa
    node = Obj("NUMANode", os_index=numa, cpus=cpus, nodes=nodes)
    node.local_memory = spec.memory
    parent.memory.append(node)

    cores = []
    for c in range(spec.cores):
        pu0 = first_pu + c * spec.pus
        core = Obj("Core", os_index=first_core + c,
                   cpus=mask(range(pu0, pu0 + spec.pus)), nodes=nodes)
        for p in range(spec.pus):
            core.children.append(Obj("PU", os_index=pu0 + p,
                                     cpus=1 << (pu0 + p), nodes=nodes))
        cores.append(core)

    if spec.old_opteron:
        for core in cores:
            l1 = cache(1, 64 * 1024, 1, 2, core.cpus, nodes)
            l1.children.append(core)
            l2 = cache(2, MIB, 0, 16, core.cpus, nodes)
            l2.children.append(l1)
            parent.children.append(l2)
    else:
        l3 = cache(3, 16 * MIB, 0, 0, cpus, nodes)
        l3.children.extend(cores)
        parent.children.append(l3)


def cache(level, size, cache_type, assoc, cpus, nodes):
    return Obj("L%dCache" % level, [
        ("cache_size", str(size)), ("depth", str(level)),
        ("cache_linesize", "64"), ("cache_associativity", str(assoc)),
        ("cache_type", str(cache_type))], cpus=cpus, nodes=nodes)


def build_machine(spec):
    numa_per_pkg = max(spec.dies, 1)
    pus_per_numa = spec.cores * spec.pus
    npus = spec.numa_count() * pus_per_numa
    machine = Obj("Machine", (),
                  [("Backend", "Synthetic"), ("hwlocVersion", HWLOC_VERSION),
                   ("ProustTopology", spec.name),
                   ("ProustDescription", spec.what)],
                  cpus=mask(range(npus)), nodes=mask(range(spec.numa_count())),
                  os_index=0)
    pkg_infos = []
    if spec.old_opteron:
        pkg_infos = [("CPUVendor", "AuthenticAMD"),
                     ("CPUModel", "Dual Core AMD Opteron(tm) 1.8 GHz")]
    packages = []
    for p in range(spec.packages):
        numa0 = p * numa_per_pkg
        pu0 = numa0 * pus_per_numa
        pkg = Obj("Package", (), pkg_infos, os_index=p,
                  cpus=mask(range(pu0, pu0 + numa_per_pkg * pus_per_numa)),
                  nodes=mask(range(numa0, numa0 + numa_per_pkg)))
        for d in range(numa_per_pkg):
            numa = numa0 + d
            parent = pkg
            if spec.dies:
                first = numa * pus_per_numa
                parent = Obj("Die", os_index=numa,
                             cpus=mask(range(first, first + pus_per_numa)),
                             nodes=1 << numa)
                pkg.children.append(parent)
            build_numa_domain(spec, parent, numa, numa * pus_per_numa,
                              numa * spec.cores)
        packages.append(pkg)
        machine.children.append(pkg)
    for where, pci in spec.nics:
        (machine if where is None else packages[where]).io.append(
            host_bridge(pci))
    return machine, packages


# ---- XML output ----------------------------------------------------------

def write_object(obj, out, indent, next_gp):
    attrs = [("type", obj.type)]
    if obj.os_index is not None:
        attrs.append(("os_index", str(obj.os_index)))
    if obj.cpus is not None:
        cs, ns = bitmap(obj.cpus), bitmap(obj.nodes)
        attrs += [("cpuset", cs), ("complete_cpuset", cs)]
        if obj.type == "Machine":
            attrs.append(("allowed_cpuset", cs))
        attrs += [("nodeset", ns), ("complete_nodeset", ns)]
        if obj.type == "Machine":
            attrs.append(("allowed_nodeset", ns))
    attrs.append(("gp_index", str(next_gp[0])))
    next_gp[0] += 1
    attrs += obj.attrs
    if obj.local_memory is not None:
        attrs.append(("local_memory", str(obj.local_memory)))
    pad = "  " * indent
    head = pad + "<object " + " ".join(
        "%s=%s" % (k, quoteattr(v)) for k, v in attrs)
    body = []
    inner = "  " * (indent + 1)
    for k, v in obj.infos:
        body.append("%s<info name=%s value=%s/>\n"
                    % (inner, quoteattr(k), quoteattr(v)))
    if obj.local_memory is not None:
        body.append('%s<page_type size="%d" count="%d"/>\n'
                    % (inner, PAGE_SIZE, obj.local_memory // PAGE_SIZE))
    children = obj.memory + obj.children + obj.io
    if not body and not children:
        out.append(head + "/>\n")
        return
    out.append(head + ">\n")
    out.extend(body)
    for child in children:
        write_object(child, out, indent + 1, next_gp)
    out.append(pad + "</object>\n")


def number_array(tag, values, out):
    """hwloc's array syntax: length = characters of the text."""
    for i in range(0, len(values), VALUES_PER_LINE):
        text = "".join("%d " % v for v in values[i:i + VALUES_PER_LINE])
        out.append('    <%s length="%d">%s</%s>\n' % (tag, len(text), text, tag))


def write_distances(matrix, out):
    n = len(matrix)
    out.append('  <distances2 type="NUMANode" nbobjs="%d" kind="%d" '
               'name="NUMALatency" indexing="os">\n' % (n, DIST_KIND))
    number_array("indexes", list(range(n)), out)
    number_array("u64values", [v for row in matrix for v in row], out)
    out.append("  </distances2>\n")


def render(spec):
    machine, _ = build_machine(spec)
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n',
           '<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n',
           '<topology version="2.0">\n']
    write_object(machine, out, 1, [1])
    if spec.distances:
        write_distances(spec.distances, out)
    for support in ("discovery.pu", "discovery.numa",
                    "discovery.numa_memory", "custom.exported_support"):
        out.append('  <support name="%s"/>\n' % support)
    out.append("</topology>\n")
    return "".join(out)


# ---- distance matrices ---------------------------------------------------

def two_level(n, group, local, near, far):
    """local on the diagonal, near inside a group of `group` nodes."""
    return [[local if i == j else near if i // group == j // group else far
             for j in range(n)] for i in range(n)]


def hop_distances(n, links, local=10, per_hop=6):
    """local + per_hop * shortest hop count over undirected links (BFS)."""
    adjacent = {i: [] for i in range(n)}
    for a, b in links:
        adjacent[a].append(b)
        adjacent[b].append(a)
    matrix = []
    for src in range(n):
        hops = {src: 0}
        queue = deque([src])
        while queue:
            cur = queue.popleft()
            for nxt in sorted(adjacent[cur]):
                if nxt not in hops:
                    hops[nxt] = hops[cur] + 1
                    queue.append(nxt)
        matrix.append([local + per_hop * hops[dst] for dst in range(n)])
    return matrix


# Hagrid's HyperTransport links, read off the seed 002 latency table 3.1.
HAGRID_LINKS = [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4), (3, 5),
                (4, 6), (4, 7), (5, 6), (5, 7), (6, 7)]
RING4 = [(0, 1), (1, 2), (2, 3), (3, 0)]

SPECS = [
    Spec("numa2-nic1", "2 packages, 4 cores x 2 PUs (SMT); ConnectX-5 on "
         "package 1", packages=2, cores=4, pus=2,
         nics=[(1, connectx5())], distances=two_level(2, 1, 10, 10, 21)),
    Spec("numa2-2nics", "2 packages, 4 cores; ConnectX-5 on package 1, "
         "I350 eth1 on package 0", packages=2, cores=4,
         nics=[(0, intel_i350("eth1")), (1, connectx5())],
         distances=two_level(2, 1, 10, 10, 21)),
    Spec("numa4-nic", "4 packages on a ring, 2 cores each; ConnectX-5 on "
         "package 2, I350 eth0 on package 0", packages=4, cores=2,
         nics=[(0, intel_i350("eth0")), (2, connectx5())],
         distances=hop_distances(4, RING4, 10, 6)),
    Spec("numa4-2pernode", "2 packages x 2 dies (1 NUMA node each), 2 cores "
         "per die; ConnectX-5 on package 1", packages=2, dies=2, cores=2,
         nics=[(1, connectx5())], distances=two_level(4, 2, 10, 12, 32)),
    Spec("hagrid8", "seed 002 Hagrid: 8 dual-core Opterons, 11 HT links; "
         "InfiniHost III on package 0", packages=8, cores=2, memory=4 * GIB,
         nics=[(0, infinihost3())], distances=hop_distances(8, HAGRID_LINKS),
         old_opteron=True),
    Spec("noloc", "2 packages, 2 cores; ConnectX-5 host bridge under "
         "Machine (locality unknown)", packages=2, cores=2,
         nics=[(None, connectx5())]),
    Spec("numa2-nonic", "2 packages, 2 cores; no I/O", packages=2, cores=2),
    Spec("single", "1 package, 2 cores; I350 eth0", packages=1, cores=2,
         nics=[(0, intel_i350("eth0"))]),
]


def expected_rows():
    """Markdown rows: per NIC OS device, the locality hwloc should report."""
    rows = []
    for spec in SPECS:
        machine, packages = build_machine(spec)
        nics = [(osdev[0], packages[w] if w is not None else machine)
                for w, pci in spec.nics for osdev in pci.osdevs]
        if not nics:
            rows.append("| %s.xml | %d | (none) | | |"
                        % (spec.name, spec.numa_count()))
        for name, where in nics:
            rows.append("| %s.xml | %d | %s | %s | %s |"
                        % (spec.name, spec.numa_count(), name,
                           bitmap(where.cpus), bitmap(where.nodes)))
    return rows


def main():
    if sys.argv[1:] == ["--expected"]:
        print("| file | NUMA nodes | OS device | locality cpuset | nodeset |")
        print("|---|---|---|---|---|")
        print("\n".join(expected_rows()))
        return 0
    if sys.argv[1:]:
        sys.stderr.write(__doc__)
        return 2
    outdir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xml")
    os.makedirs(outdir, exist_ok=True)
    for spec in SPECS:
        path = os.path.join(outdir, spec.name + ".xml")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(render(spec))
        print("wrote", os.path.relpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
