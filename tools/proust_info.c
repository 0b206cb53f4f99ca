/*
 * proust-info — what Proust would use on this machine and why: version,
 * rails and their capabilities, the strategy and thresholds in force, and
 * every PROUST_* variable with its value, default and meaning.
 * `--placement` prints the placement decision (proust_info_placement.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "boot/boot.h"
#include "common/config.h"
#include "common/log.h"
#include "core/gate.h"
#include "drivers/driver.h"
#include "drivers/ofi.h"
#include "proust.h"
#include "proust_info.h"
#include "strategy/strategy.h"
#define PM_CONFIG_TABLE
#include "mpi/init/mpi_config.h"

/* Proust MPI's own variables (pm_config_vars, the table libmpi registers):
 * the value in force. */
static const char *mpi_var(pm_config_id_t id)
{
    const char *v = getenv(pm_config_vars[id].name);
    return v ? v : pm_config_vars[id].def;
}

static void print_rail(const struct proust__rail_ops *ops, int in_use)
{
    proust__boot_t boot = {.ops = &proust__boot_singleton, .fd = -1};
    boot.ops->init(&boot);
    proust__rail_t rail = {.ops = ops, .boot = &boot};
    printf("  %-5s %s%s\n", ops->name, ops->description, in_use ? "" : "  [not in PROUST_RAILS]");
    int rc = ops->open(&rail);
    if (rc == PROUST_OK)
        rc = proust__rail_apply_profile(&rail);
    if (rc != PROUST_OK) {
        printf("        unavailable here: %s\n", proust_strerror(rc));
    } else {
        const struct proust__rail_caps *c = &rail.caps;
        const char *strategy_line;
        size_t room = proust__eager_room(c);
        printf("        max packet %zu B, rendezvous from %zu B, %zu iovec entries, "
               "put fragments %zu B\n",
               c->max_packet, c->rdv_threshold < room ? c->rdv_threshold : room, c->max_iov,
               c->put_fragment);
        printf("        profile %.2f us, %.1f GB/s; get (receiver pulls): %s",
               c->latency_us, c->bandwidth_gbs, (c->flags & PROUST__RAIL_CAN_GET) ? "yes" : "no");
        long coalesce_ns = 1000;
        proust__config_long(PROUST_CFG_COALESCE_NS, &coalesce_ns);
        unsigned prior = proust__packet_ns_prior(c->latency_us);
        strategy_line = proust__strategy_for_cost(prior, (unsigned)coalesce_ns)->name;
        if (c->flags & PROUST__RAIL_CAN_GET)
            printf(" from %zu B", c->get_threshold);
        printf("; blocking fd: %s\n", (c->flags & PROUST__RAIL_HAS_FD) ? "yes" : "no");
        printf("        PROUST_STRATEGY=auto: %s to begin with (a small packet %u ns by the "
               "profile, PROUST_COALESCE_NS=%ld), then as the measured cost says\n",
               strategy_line, prior, coalesce_ns);
        if (c->stream_max)
            printf("        a rendezvous between a blocking send and a blocking receive: "
                   "streamed through the rail by the sender\n");
        char text[1024];
        if (ops->explain && ops->explain(&rail, text, sizeof text) > 0)
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
                printf("        %s\n", line);
    }
    ops->close(&rail);
    boot.ops->finalize(&boot);
}

/* The progress engine as a one-process session sets it up here. */
static void print_progress(void)
{
    printf("\nProgress engine (PROUST_PROGRESS=%s, PROUST_LOCKING=%s):\n",
           proust__config_str(PROUST_CFG_PROGRESS), proust__config_str(PROUST_CFG_LOCKING));
    proust_session_t *s;
    int rc = proust_init(&s);
    if (rc != PROUST_OK) {
        printf("  proust_init fails here: %s\n", proust_strerror(rc));
        return;
    }
    proust_progress_info_t pi;
    if (proust_progress_info(s, &pi) == PROUST_OK) {
        printf("  mode %s (%s), %s locking, %d background progress thread(s)\n", pi.mode,
               pi.mode_reason, pi.locking, pi.threads);
        if (pi.spin_us < 0)
            printf("  waiters poll and never sleep: %s\n", pi.spin_reason);
        else
            printf("  waiters poll for %.1f us, then sleep: %s\n", pi.spin_us, pi.spin_reason);
        if (pi.wake_us > 0)
            printf("  measured wake-up of a sleeping thread: %.1f us\n", pi.wake_us);
        printf("  rendezvous helper (PROUST_RDV_THREAD): %s\n", pi.rdv_thread_reason);
        printf("  wait boost (PROUST_WAIT_BOOST): %s\n", pi.wait_boost);
    }
    /* what the MPI layer will agree on (coll_policy.c): any crowded node decides */
    const char *crowded = mpi_var(PM_CFG_COLL_CROWDED);
    const char *why;
    int on = proust_config_switch(crowded), ranks = 1, cpus = 1;
    (void)proust_node_load(s, &ranks, &cpus);
    if (on == 1)
        why = "on: MPI broadcasts of 128 KiB and more by binomial tree, whole messages";
    else if (on == 0)
        why = "off here (another process asking for more would win): large MPI broadcasts by "
              "scatter + ring allgather";
    else if (!strcasecmp(crowded, "moderate"))
        why = "moderate: MPI broadcasts of 128 KiB and more by binomial tree in 32 KiB "
              "segments, unless another process asks for on";
    else if (ranks > cpus && ranks <= 2 * cpus)
        why = "this node has up to 2 ranks a core: MPI broadcasts of 128 KiB and more by "
              "binomial tree in 32 KiB segments, unless another node is more crowded";
    else if (ranks > cpus)
        why = "this node has more than 2 ranks a core: MPI broadcasts of 128 KiB and more by "
              "binomial tree, whole messages";
    else
        why = "this node has a core per rank: large MPI broadcasts by scatter + ring "
              "allgather, unless another node of the job is crowded";
    printf("  crowded collectives (PROUST_COLL_CROWDED=%s): %s\n", crowded, why);
    char place[4096];
    if (proust_placement_describe(s, place, sizeof place) > 0)
        printf("\nPlacement of this one-process session (proust-info --placement: a job "
               "across hosts):\n%s", place);
    proust_finalize(s);
}

int main(int argc, char **argv)
{
    /* listed with the engine's, and known to the unknown-variable warning */
    proust_config_register(pm_config_vars, PM_CFG_COUNT);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--placement") == 0) {
            proust__log_init();
            proust__config_check_unknown();
            return proust_info_placement(argc, argv);
        }
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: proust-info [--placement [options]]\nPrints Proust's version, rails, "
               "strategy, progress engine, placement and every PROUST_* variable;\n"
               "--placement (see proust-info --placement --help) explains the placement.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "proust-info: unknown option %s (try --help)\n", argv[1]);
        return 2;
    }
    proust__log_init(); /* (unknown variables: proust_init's one-process session warns) */
    printf("Proust %s\n\n", PROUST_VERSION_STRING);

    const char *boot_why;
    const struct proust__boot_ops *boot = proust__boot_choose(&boot_why);
    printf("Bootstrap (PROUST_BOOT=%s): %s, because %s\n\n",
           proust__config_str(PROUST_CFG_BOOT), boot ? boot->name : "none", boot_why);

    const char *rails = proust__config_str(PROUST_CFG_RAILS);
    printf("Rails (PROUST_RAILS=%s; each peer takes the first listed rail that reaches it):\n",
           rails);
    const char *names[] = {"self", "shm", "tcp", "ofi"};
    for (int i = 0; i < 4; i++) {
        char list[256];
        snprintf(list, sizeof list, ",%s,", rails);
        char want[16];
        snprintf(want, sizeof want, ",%s,", names[i]);
        print_rail(proust__rail_find(names[i]), strstr(list, want) != NULL);
    }
    char prov[4096];
    proust__ofi_describe(prov, sizeof prov);
    printf("\nlibfabric providers for the ofi rail (PROUST_OFI_PROVIDER=%s):\n%s",
           proust__config_str(PROUST_CFG_OFI_PROVIDER), prov);

    const char *sname = proust__config_str(PROUST_CFG_STRATEGY);
    const struct proust__strategy_ops *strat = proust__strategy_find(sname);
    printf("\nStrategy: %s%s\n", sname, strat ? "" : "  (UNKNOWN: proust_init will fail)");
    for (int i = 0; proust__strategies[i]; i++)
        printf("  %-8s %s\n", proust__strategies[i]->name, proust__strategies[i]->description);

    size_t rdv = 0;
    proust__config_size(PROUST_CFG_RDV_THRESHOLD, &rdv);
    if (rdv)
        printf("\nRendezvous threshold: %zu B on every rail (PROUST_RDV_THRESHOLD)\n", rdv);
    else
        printf("\nRendezvous threshold: each rail's own (above)\n");

    print_progress();

    /* MPI-IO takes its settings per file, from hints (ROMIO's names), and
     * from the file ROMIO_HINTS names, as ROMIO does */
    const char *hints = getenv("ROMIO_HINTS");
    printf("\nMPI-IO: hints per file (MPI_Info, ROMIO's names: cb_buffer_size, cb_nodes, "
           "cb_config_list, romio_cb_read/write, romio_ds_read/write, ind_rd/wr_buffer_size, "
           "striping_factor/unit, file_perm; defaults and meaning in docs/MPI.md); "
           "two-phase aggregators by each call's size unless cb_nodes or cb_config_list say\n"
           "  ROMIO_HINTS=%s%s\n",
           hints ? hints : "(unset: no hints file)",
           hints && access(hints, R_OK) != 0 ? "  (NOT READABLE: MPI_File_open warns and takes no hints from it)" : "");

    printf("\nVariables:\n");
    const char *name, *value, *def, *doc;
    for (int i = 0; proust_config_entry(i, &name, &value, &def, &doc) == PROUST_OK; i++) {
        if (i == PROUST_CFG_COUNT)
            printf("\nVariables of Proust MPI (libmpi):\n");
        printf("  %s=%s%s\n      default: \"%s\". %s\n", name, value,
               getenv(name) ? "  (set)" : "", def, doc);
    }
    return 0;
}
