/*
 * NUIOA-aware placement (seed 002): where the process, its progress threads
 * and each rail's buffers go, relative to the NICs. A pure function of
 * (topology, rails, hint, mode, current binding, local rank): tests feed it
 * XML topologies of machines we do not have and assert its cpusets and
 * nodesets; the session applies the result at init, before progress
 * threads and communication buffers exist.
 */
#ifndef PROUST_PLACEMENT_H
#define PROUST_PLACEMENT_H

#include <hwloc.h>
#include <stdbool.h>

#include "topology/topology.h"

#define PROUST__PLACE_MAX_THREADS 64
#define PROUST__PLACE_MAX_RAILS 8

enum proust__place_mode {
    PROUST__PLACE_AUTO,     /* place; keep a binding the user made */
    PROUST__PLACE_OVERRIDE, /* place, whatever the user bound */
    PROUST__PLACE_OFF,      /* bind nothing */
};

enum proust__place_hint {
    PROUST__HINT_LATENCY,   /* the lowest-latency rail's NIC decides */
    PROUST__HINT_BANDWIDTH, /* the highest-bandwidth rails' NICs decide */
    PROUST__HINT_CORES,     /* leave the cores to the application: one
                               progress thread, the process is not moved */
};

/* What a rail tells placement about itself. */
struct proust__place_rail {
    const char *name;   /* "tcp", "shm" */
    const char *device; /* OS device it sends through ("eth0", "mlx5_0"); NULL: none */
    double latency_us;
    double bandwidth_gbs;
    bool used; /* carries traffic to at least one peer */
};

struct proust__place_input {
    const struct proust__topo *topo;
    const struct proust__place_rail *rails;
    int nrails;
    enum proust__place_mode mode;
    enum proust__place_hint hint;
    hwloc_const_cpuset_t binding; /* the process's binding now; NULL = unknown */
    bool threads_bound;           /* its threads have different bindings (the
                                     application placed them: a user binding) */
    int local_rank, local_size;   /* among the job's processes on this node */
    int threads_wanted;           /* progress threads asked for; 0 = decide */
};

struct proust__placement {
    enum proust__place_mode mode;
    enum proust__place_hint hint;
    bool user_bound;          /* the binding was narrower than the machine */
    bool nic_known;           /* some deciding NIC has locality */
    int deciding_rail;        /* index in the input (first one), -1: none */
    hwloc_nodeset_t nic_nodes; /* nodes nearest the deciding NIC(s) */
    /* bind the process here (NULL: leave it as it is) */
    hwloc_cpuset_t process;
    /* progress threads' cpusets (bind[i] NULL: run where the process runs) */
    int nthreads;
    hwloc_cpuset_t thread[PROUST__PLACE_MAX_THREADS];
    /* each rail's buffers (NULL: where first touched) */
    hwloc_nodeset_t memory[PROUST__PLACE_MAX_RAILS];
    char reasons[2048]; /* one line per decision, for proust-info */
};

/* Decide. Returns PROUST_OK, PROUST_ERR_INVALID (bad input), or
 * PROUST_ERR_NOMEM. Free with proust__place_free even on error. */
int proust__place_decide(const struct proust__place_input *in, struct proust__placement *out);
void proust__place_free(struct proust__placement *p);

/* "latency" / "bandwidth" / "cores" and "auto" / "override" / "off";
 * parse returns -1 for an unknown word. */
const char *proust__place_hint_name(enum proust__place_hint h);
const char *proust__place_mode_name(enum proust__place_mode m);
int proust__place_hint_parse(const char *text);
int proust__place_mode_parse(const char *text);

/* Human-readable summary of a decision (cpusets as lists: "0-3,8"), then
 * the reasons. */
void proust__place_describe(const struct proust__topo *topo, const struct proust__placement *p,
                            const struct proust__place_rail *rails, int nrails, char *buf,
                            size_t len);

#endif
