/*
 * args.c — command line of proustrun.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proust.h"
#include "proustrun.h"

#define PR_MAX_PROCS 100000

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: proustrun -n N [options] program [args...]\n"
            "Start N processes of `program`, on this machine or on the hosts named,\n"
            "connected by Proust.\n"
            "\n"
            "Options:\n"
            "  -n N, -np N        number of processes (ranks 0..N-1); with hosts, the\n"
            "                     default is their number of slots\n"
            "  -H, --host LIST    hosts and slots: a:2,b:2 (a bare name has 1 slot)\n"
            "  --hostfile FILE    one host per line: 'a slots=2', 'a:2' or 'a'\n"
            "  --map-by slot|node fill each host's slots in turn (default), or deal\n"
            "                     ranks round the hosts\n"
            "  --npernode N       N ranks on every host\n"
            "  --launch-agent CMD how to run a command on a host (CMD HOST COMMAND, as\n"
            "                     ssh; default ssh, or PROUST_LAUNCH_AGENT); proustrun\n"
            "                     must be at the same path there\n"
            "Inside a Slurm allocation (salloc, sbatch) without -H or --hostfile, the\n"
            "hosts are the allocation's nodes, and the agents start with srun.\n"
            "  --tag-output       prefix each output line with \"[rank] \"\n"
            "  --grace SECONDS    after a rank fails, how long the others may run\n"
            "                     before they are terminated (default %g)\n"
            "  --timeout SECONDS  stop the whole job (an error) after this long; the\n"
            "                     environment variable MPIEXEC_TIMEOUT does the same, as\n"
            "                     for MPICH's and Open MPI's mpiexec (the option wins)\n"
            "  --bind-to WHAT     bind each rank: none (default), hwthread, core, l3cache,\n"
            "                     numa, package (socket); rank i goes to the i-th core,\n"
            "                     then to the object of that type holding it\n"
            "  --report-bindings  print each rank's cpus on stderr\n"
            "  -h, --help         show this help\n"
            "  -V, --version      show the version\n"
            "\n"
            "With hosts, one agent per host (proustrun --agent, started by the launch\n"
            "agent) starts that host's ranks with this environment and directory.\n"
            "Each rank gets PROUST_RANK, PROUST_SIZE, PROUST_LOCAL_RANK, PROUST_LOCAL_SIZE,\n"
            "PROUST_JOBID and PROUST_BOOT_FD. Rank 0 reads proustrun's stdin; the others\n"
            "read /dev/null. The exit status is 0 if every rank exits 0, else that of the\n"
            "first rank to fail (128+signal for a signal), the code given to abort, or\n"
            "124 when the time limit stopped the job.\n",
            PR_DEFAULT_GRACE_S);
}

static int usage_error(const char *fmt, const char *what)
{
    fprintf(stderr, "proustrun: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nTry 'proustrun --help' for more information.\n");
    return 2;
}

static int parse_nprocs(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v < 1 || v > PR_MAX_PROCS)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_seconds(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(v >= 0) || v > 1e6)
        return -1;
    *out = v;
    return 0;
}

/* Value of an option given as "--opt V", "--opt=V" or (short) "-nV". */
static const char *option_value(int argc, char **argv, int *i, const char *arg,
                                size_t name_len)
{
    if (arg[name_len] == '=')
        return arg + name_len + 1;
    if (arg[name_len] != '\0')
        return arg + name_len;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

int pr_parse_args(int argc, char **argv, struct pr_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->grace_s = PR_DEFAULT_GRACE_S;
    int have_n = 0, have_timeout = 0;
    opt->launch_agent = getenv("PROUST_LAUNCH_AGENT");
    if (opt->launch_agent && !*opt->launch_agent)
        opt->launch_agent = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("proustrun (Proust) %s\n", PROUST_VERSION_STRING);
            return 0;
        }
        if (strcmp(a, "--tag-output") == 0) {
            opt->tag_output = 1;
            continue;
        }
        size_t nlen = 0;
        if (strncmp(a, "-np", 3) == 0 && (a[3] == '\0' || a[3] == '='))
            nlen = 3;
        else if (strncmp(a, "--np", 4) == 0 && (a[4] == '\0' || a[4] == '='))
            nlen = 4;
        else if (strncmp(a, "-n", 2) == 0 && a[2] != '-' && (a[2] == '\0' || a[2] == '=' ||
                                                             (a[2] >= '0' && a[2] <= '9')))
            nlen = 2;
        if (nlen) {
            const char *v = option_value(argc, argv, &i, a, nlen);
            if (!v)
                return usage_error("option '%s' needs a number of processes", a);
            if (parse_nprocs(v, &opt->nprocs) != 0)
                return usage_error("'%s' is not a number of processes (1 or more)", v);
            have_n = 1;
            continue;
        }
        if (strcmp(a, "--report-bindings") == 0) {
            opt->report_bindings = 1;
            continue;
        }
        if (strncmp(a, "--bind-to", 9) == 0 && (a[9] == '\0' || a[9] == '=')) {
            const char *v = option_value(argc, argv, &i, a, 9);
            if (!v)
                return usage_error("option '%s' needs what to bind to", a);
            if ((opt->bind_to = pr_bind_parse(v)) < 0)
                return usage_error("--bind-to %s: expected none, hwthread, core, l3cache, numa "
                                   "or package", v);
            continue;
        }
        const char *v = NULL;
#define STRING_OPT(name_, field_, what_)                                              \
    if (strncmp(a, name_, strlen(name_)) == 0 &&                                      \
        (a[strlen(name_)] == '\0' || a[strlen(name_)] == '=')) {                      \
        if (!(v = option_value(argc, argv, &i, a, strlen(name_))) || !*v)             \
            return usage_error("option '%s' needs " what_, a);                        \
        opt->field_ = v;                                                              \
        continue;                                                                     \
    }
        STRING_OPT("--hostfile", hostfile, "a file name")
        STRING_OPT("-hostfile", hostfile, "a file name")
        STRING_OPT("--machinefile", hostfile, "a file name")
        STRING_OPT("--hosts", host_list, "a list of hosts")
        STRING_OPT("-hosts", host_list, "a list of hosts")
        STRING_OPT("--host", host_list, "a list of hosts")
        STRING_OPT("-H", host_list, "a list of hosts")
        STRING_OPT("--launch-agent", launch_agent, "a command")
        STRING_OPT("--agent", agent_arg, "the front end's address")
#undef STRING_OPT
        if (strncmp(a, "--map-by", 8) == 0 && (a[8] == '\0' || a[8] == '=')) {
            if (!(v = option_value(argc, argv, &i, a, 8)))
                return usage_error("option '%s' needs slot or node", a);
            if (strcmp(v, "slot") == 0 || strcmp(v, "core") == 0)
                opt->map_by = PR_MAP_SLOT;
            else if (strcmp(v, "node") == 0)
                opt->map_by = PR_MAP_NODE;
            else
                return usage_error("--map-by %s: expected slot or node", v);
            continue;
        }
        if ((strncmp(a, "--npernode", 10) == 0 && (a[10] == '\0' || a[10] == '=')) ||
            strcmp(a, "-npernode") == 0) {
            if (!(v = option_value(argc, argv, &i, a, a[1] == '-' ? 10 : 9)) ||
                parse_nprocs(v, &opt->npernode) != 0)
                return usage_error("option '%s' needs a number of ranks per host (1 or more)",
                                   a);
            continue;
        }
        if (strncmp(a, "--grace", 7) == 0 && (a[7] == '\0' || a[7] == '=')) {
            v = option_value(argc, argv, &i, a, 7);
            if (!v)
                return usage_error("option '%s' needs a number of seconds", a);
            if (parse_seconds(v, &opt->grace_s) != 0)
                return usage_error("'%s' is not a number of seconds", v);
            continue;
        }
        if (strncmp(a, "--timeout", 9) == 0 && (a[9] == '\0' || a[9] == '=')) {
            v = option_value(argc, argv, &i, a, 9);
            if (!v)
                return usage_error("option '%s' needs a number of seconds", a);
            if (parse_seconds(v, &opt->timeout_s) != 0)
                return usage_error("'%s' is not a number of seconds", v);
            have_timeout = 1;
            continue;
        }
        return usage_error("unknown option '%s'", a);
    }
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT");
    if (!have_timeout && env_timeout && *env_timeout &&
        parse_seconds(env_timeout, &opt->timeout_s) != 0)
        return usage_error("MPIEXEC_TIMEOUT=%s is not a number of seconds", env_timeout);
    if (opt->agent_arg) {
        opt->mode = PR_MODE_AGENT; /* the job comes from the front end */
        return -1;
    }
    /* Inside a Slurm allocation (not inside one of its steps), its nodes
     * are the hosts, as for mpirun and Hydra. */
    const char *alloc = getenv("SLURM_JOB_NODELIST");
    if (!opt->host_list && !opt->hostfile && alloc && *alloc && !getenv("SLURM_STEP_ID"))
        opt->slurm = 1;
    if (opt->host_list || opt->hostfile || opt->slurm)
        opt->mode = PR_MODE_FRONTEND;
    else if (opt->npernode || opt->map_by != PR_MAP_SLOT)
        return usage_error("%s", "--npernode and --map-by need hosts (-H or --hostfile)");
    if (i >= argc)
        return usage_error("%s", "no program to run");
    if (!have_n && opt->mode == PR_MODE_LOCAL)
        return usage_error("%s", "the number of processes is missing (-n N)");
    opt->argv = argv + i;
    return -1;
}
