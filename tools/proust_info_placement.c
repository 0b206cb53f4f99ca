/*
 * proust-info --placement: the placement decision (topology/placement.h)
 * and its reasons, for this machine as a job spanning hosts would see it,
 * or for another machine given as an hwloc XML file with the rails and
 * binding to assume.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "drivers/driver.h"
#include "proust.h"
#include "proust_info.h"
#include "topology/placement.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: proust-info --placement [--topology FILE.xml] [--nic NAME[:LAT_US:GBS]]...\n"
            "                   [--hint latency|bandwidth|cores] [--mode auto|override|off]\n"
            "                   [--bind CPULIST] [--local-rank R --local-size N] [--threads N]\n"
            "Prints where Proust puts the process, its progress threads and each rail's\n"
            "buffers, and why. Defaults: this machine, its tcp interface and shm, as in a\n"
            "job spanning hosts; PROUST_PLACEMENT and PROUST_PLACEMENT_HINT. With\n"
            "--topology and no --nic: every NIC of the file (OpenFabrics devices as a fast\n"
            "rail, 1.5 us / 12.5 GB/s; Ethernet as tcp, 25 us / 1.2 GB/s).\n");
}

/* Rails from the NICs of an XML topology. */
static int rails_from_topology(const struct proust__topo *t, struct proust__place_rail *r,
                               char names[][64])
{
    int n = 0;
    for (hwloc_obj_t o = hwloc_get_next_osdev(t->h, NULL); o && n < PROUST__PLACE_MAX_RAILS;
         o = hwloc_get_next_osdev(t->h, o)) {
        bool fabric = o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
        bool ethernet = o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
                        strncmp(o->name, "ib", 2) != 0; /* ib0 is the HCA's IP face */
        if (!fabric && !ethernet)
            continue;
        snprintf(names[n], 64, "%s:%s", fabric ? "ofi" : "tcp", o->name);
        r[n] = (struct proust__place_rail){.name = names[n], .device = o->name,
                                           .latency_us = fabric ? 1.5 : 25.0,
                                           .bandwidth_gbs = fabric ? 12.5 : 1.2, .used = true};
        n++;
    }
    return n;
}

/* This machine's rails: tcp (its interface) and shm. */
static int rails_of_this_machine(struct proust__place_rail *r, char names[][64])
{
    int n = 0;
    const char *which[] = {"tcp", "shm"};
    for (int i = 0; i < 2; i++) {
        const struct proust__rail_ops *ops = proust__rail_find(which[i]);
        proust__boot_t boot = {.ops = &proust__boot_singleton, .fd = -1};
        boot.ops->init(&boot);
        proust__rail_t rail = {.ops = ops, .boot = &boot};
        if (ops->open(&rail) == PROUST_OK) {
            const char *dev = ops->device ? ops->device(&rail) : NULL;
            snprintf(names[n], 64, "%s", dev ? dev : "");
            r[n] = (struct proust__place_rail){.name = ops->name,
                                               .device = dev ? names[n] : NULL,
                                               .latency_us = rail.caps.latency_us,
                                               .bandwidth_gbs = rail.caps.bandwidth_gbs,
                                               .used = true};
            n++;
        }
        ops->close(&rail);
        boot.ops->finalize(&boot);
    }
    return n;
}

static int parse_nic(const char *arg, struct proust__place_rail *r, char *name)
{
    double lat = 1.5, bw = 12.5;
    char dev[64];
    if (sscanf(arg, "%63[^:]:%lf:%lf", dev, &lat, &bw) < 1 || lat < 0 || bw < 0)
        return -1;
    snprintf(name, 64, "%s", dev);
    *r = (struct proust__place_rail){.name = name, .device = name, .latency_us = lat,
                                     .bandwidth_gbs = bw, .used = true};
    return 0;
}

int proust_info_placement(int argc, char **argv)
{
    const char *xml = proust__config_str(PROUST_CFG_TOPOLOGY), *bind = NULL;
    int mode = proust__place_mode_parse(proust__config_str(PROUST_CFG_PLACEMENT));
    int hint = proust__place_hint_parse(proust__config_str(PROUST_CFG_PLACEMENT_HINT));
    struct proust__place_rail rails[PROUST__PLACE_MAX_RAILS];
    char names[PROUST__PLACE_MAX_RAILS][64];
    int nrails = 0, lrank = 0, lsize = 1, threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = v != NULL;
        if (strcmp(a, "--placement") == 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (ok && strcmp(a, "--topology") == 0) {
            xml = v;
        } else if (ok && strcmp(a, "--nic") == 0) {
            ok = nrails < PROUST__PLACE_MAX_RAILS &&
                 parse_nic(v, &rails[nrails], names[nrails]) == 0;
            nrails += ok;
        } else if (ok && strcmp(a, "--hint") == 0) {
            ok = (hint = proust__place_hint_parse(v)) >= 0;
        } else if (ok && strcmp(a, "--mode") == 0) {
            ok = (mode = proust__place_mode_parse(v)) >= 0;
        } else if (ok && strcmp(a, "--bind") == 0) {
            bind = v;
        } else if (ok && strcmp(a, "--local-rank") == 0) {
            lrank = atoi(v);
        } else if (ok && strcmp(a, "--local-size") == 0) {
            lsize = atoi(v);
        } else if (ok && strcmp(a, "--threads") == 0) {
            threads = atoi(v);
        } else {
            ok = false;
        }
        if (!ok) {
            fprintf(stderr, "proust-info: bad option %s%s%s\n", a, v ? " " : "", v ? v : "");
            usage(stderr);
            return 2;
        }
        i++;
    }
    if (mode < 0 || hint < 0) {
        fprintf(stderr, "proust-info: PROUST_PLACEMENT or PROUST_PLACEMENT_HINT is not valid\n");
        return 2;
    }
    struct proust__topo topo;
    /* as init does: an XML file whole, this machine without I/O objects
     * (device locality from sysfs) */
    if (proust__topo_load(&topo, xml, xml && xml[0]) != PROUST_OK)
        return 1;
    if (nrails == 0)
        nrails = topo.this_system ? rails_of_this_machine(rails, names)
                                  : rails_from_topology(&topo, rails, names);
    hwloc_bitmap_t binding = hwloc_bitmap_alloc();
    bool have_binding = false;
    if (bind) {
        if (hwloc_bitmap_list_sscanf(binding, bind) != 0 || hwloc_bitmap_iszero(binding)) {
            fprintf(stderr, "proust-info: --bind %s is not a cpu list (\"0-3,8\")\n", bind);
            hwloc_bitmap_free(binding);
            proust__topo_unload(&topo);
            return 2;
        }
        have_binding = true;
    } else if (topo.this_system) {
        have_binding = hwloc_get_cpubind(topo.h, binding, HWLOC_CPUBIND_PROCESS) == 0;
    }
    struct proust__place_input in = {
        .topo = &topo, .rails = rails, .nrails = nrails,
        .mode = (enum proust__place_mode)mode, .hint = (enum proust__place_hint)hint,
        .binding = have_binding ? binding : NULL,
        .local_rank = lrank, .local_size = lsize, .threads_wanted = threads,
    };
    struct proust__placement p;
    int rc = proust__place_decide(&in, &p);
    if (rc == PROUST_OK) {
        char text[8192];
        proust__place_describe(&topo, &p, rails, nrails, text, sizeof text);
        printf("%s", text);
    } else {
        fprintf(stderr, "proust-info: cannot decide: %s (local rank %d of %d?)\n",
                proust_strerror(rc), lrank, lsize);
    }
    proust__place_free(&p);
    hwloc_bitmap_free(binding);
    proust__topo_unload(&topo);
    return rc == PROUST_OK ? 0 : 2;
}
