/*
 * hosts.c — which hosts a job runs on and which ranks go where (front
 * end), with the spellings of mpirun and Hydra:
 *   -H / --host a:2,b:2    hosts and their slots (a bare name: 1 slot)
 *   --hostfile FILE        one host per line: "a slots=2", "a:2" or "a";
 *                          '#' starts a comment; a repeated name adds slots
 *   --map-by slot          fill each host's slots in turn (default)
 *   --map-by node          rank i on host i mod (number of hosts)
 *   --npernode N           N ranks on every host (-n defaults to N x hosts)
 * Without -n, the job has as many ranks as slots. More ranks than slots
 * go round the hosts again, slot by slot, as with Hydra.
 * Inside a Slurm allocation (SLURM_JOB_NODELIST set, not inside a step)
 * and without -H or --hostfile, the hosts are the allocation's nodes
 * ("h[1-3],gpu07"), their slots SLURM_TASKS_PER_NODE or
 * SLURM_JOB_CPUS_PER_NODE ("2(x3),1"), and agents start with srun.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proustrun.h"

#define PR_MAX_SLOTS 1000000

static int add_host(struct pr_job *job, const char *name, size_t nlen, long slots)
{
    if (nlen == 0 || nlen > 255 || slots < 1 || slots > PR_MAX_SLOTS)
        return -1;
    for (int i = 0; i < job->nhosts; i++)
        if (strlen(job->hosts[i].name) == nlen && memcmp(job->hosts[i].name, name, nlen) == 0) {
            if (job->hosts[i].slots > PR_MAX_SLOTS - slots)
                return -1;
            job->hosts[i].slots += (int)slots;
            return 0;
        }
    struct pr_host *nh = realloc(job->hosts, ((size_t)job->nhosts + 1) * sizeof *nh);
    if (!nh)
        return -1;
    job->hosts = nh;
    char *copy = strndup(name, nlen);
    if (!copy)
        return -1;
    job->hosts[job->nhosts++] = (struct pr_host){.name = copy, .slots = (int)slots};
    return 0;
}

static int parse_slots(const char *p, const char *end, long *out)
{
    if (p == end)
        return -1;
    long v = 0;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p) || v > PR_MAX_SLOTS)
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

/* "a:2,b,c:4" */
static int parse_host_list(struct pr_job *job, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        long slots = 1;
        if (colon && parse_slots(colon + 1, end, &slots) != 0) {
            pr_err("-H %s: '%.*s' is not HOST or HOST:SLOTS", list, (int)(end - p), p);
            return 2;
        }
        if (add_host(job, p, (size_t)((colon ? colon : end) - p), slots) != 0) {
            pr_err("-H %s: '%.*s' is not HOST or HOST:SLOTS", list, (int)(end - p), p);
            return 2;
        }
        p = comma ? comma + 1 : end;
    }
    return 0;
}

static int parse_hostfile(struct pr_job *job, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        pr_err("cannot read the hostfile %s: %s", path, strerror(errno));
        return 2;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *word = strtok_r(line, " \t\r\n", &save);
        if (!word)
            continue;
        long slots = 1;
        char *colon = strchr(word, ':');
        size_t nlen = colon ? (size_t)(colon - word) : strlen(word);
        int bad = colon && parse_slots(colon + 1, colon + strlen(colon), &slots) != 0;
        for (char *w; !bad && (w = strtok_r(NULL, " \t\r\n", &save));) {
            if (strncmp(w, "slots=", 6) == 0)
                bad = parse_slots(w + 6, w + strlen(w), &slots) != 0;
            else if (strncmp(w, "max_slots=", 10) != 0) /* accepted, not enforced */
                bad = 1;
        }
        if (bad || add_host(job, word, nlen, slots) != 0) {
            pr_err("%s:%d: expected 'HOST', 'HOST slots=N' or 'HOST:N'", path, lineno);
            rc = 2;
        }
    }
    fclose(f);
    if (rc == 0 && job->nhosts == 0) {
        pr_err("the hostfile %s names no host", path);
        rc = 2;
    }
    return rc;
}

/* "2(x3),1" -> 2,2,2,1: the n-th node's count, or 1 if the list is short
 * or malformed. */
static long slurm_count(const char *list, int n)
{
    const char *p = list;
    int node = 0;
    while (p && *p) {
        char *end;
        long v = strtol(p, &end, 10), rep = 1;
        if (end == p || v < 1)
            return 1;
        if (*end == '(') {
            if (end[1] != 'x')
                return 1;
            rep = strtol(end + 2, &end, 10);
            if (*end != ')' || rep < 1)
                return 1;
            end++;
        }
        if (n < node + rep)
            return v;
        node += (int)rep;
        p = *end == ',' ? end + 1 : NULL;
    }
    return 1;
}

/* "pre[1-3,07]suf,other" -> hosts, in order. 0 or an exit code. */
static int parse_slurm_nodes(struct pr_job *job, const char *list, const char *counts)
{
    const char *p = list;
    int node = 0;
    while (*p) {
        const char *lb = NULL, *q = p;
        for (; *q && *q != ','; q++)
            if (*q == '[') {
                if (lb)
                    goto bad; /* several bracket groups: not supported */
                lb = q;
                q = strchr(q, ']');
                if (!q)
                    goto bad;
            } else if (*q == ']') {
                goto bad;
            }
        /* entry is p..q; a bracket group, if any, at lb */
        if (!lb) {
            if (add_host(job, p, (size_t)(q - p), slurm_count(counts, node++)) != 0)
                goto bad;
        } else {
            const char *rb = strchr(lb, ']');
            const char *r = lb + 1;
            while (r < rb) {
                char *e;
                long a = strtol(r, &e, 10), b = a;
                int width = (int)(e - r);
                if (e == r || a < 0)
                    goto bad;
                if (*e == '-') {
                    const char *r2 = e + 1;
                    b = strtol(r2, &e, 10);
                    if (e == r2 || b < a || b - a > 100000)
                        goto bad;
                }
                if (e != rb && *e != ',')
                    goto bad;
                for (long v = a; v <= b; v++) {
                    char name[512];
                    int len = snprintf(name, sizeof name, "%.*s%0*ld%.*s", (int)(lb - p), p,
                                       width, v, (int)(q - rb - 1), rb + 1);
                    if (len < 0 || (size_t)len >= sizeof name ||
                        add_host(job, name, (size_t)len, slurm_count(counts, node++)) != 0)
                        goto bad;
                }
                if (e != rb && e + 1 == rb)
                    goto bad; /* "[1,]" */
                r = e == rb ? rb : e + 1;
            }
        }
        p = *q ? q + 1 : q;
    }
    return 0;
bad:
    pr_err("cannot read the Slurm node list '%s'", list);
    return 2;
}

int pr_hosts_plan(struct pr_job *job)
{
    struct pr_options *o = &job->opt;
    int rc = 0;
    if (o->slurm) {
        const char *nodes = getenv("SLURM_JOB_NODELIST");
        const char *counts = getenv("SLURM_TASKS_PER_NODE");
        if (!counts || !*counts)
            counts = getenv("SLURM_JOB_CPUS_PER_NODE");
        rc = parse_slurm_nodes(job, nodes ? nodes : "", counts ? counts : "");
    }
    if (rc == 0 && o->host_list)
        rc = parse_host_list(job, o->host_list);
    if (rc == 0 && o->hostfile)
        rc = parse_hostfile(job, o->hostfile);
    if (rc != 0)
        return rc;
    if (job->nhosts == 0) {
        pr_err("no host to run on");
        return 2;
    }
    long total = 0;
    for (int h = 0; h < job->nhosts; h++) {
        if (o->npernode > 0)
            job->hosts[h].slots = o->npernode;
        total += job->hosts[h].slots;
    }
    if (o->nprocs == 0) {
        if (total > 100000) {
            pr_err("the hosts have %ld slots: give -n", total);
            return 2;
        }
        o->nprocs = (int)total;
    }
    job->size = o->nprocs;
    job->ranks = calloc((size_t)o->nprocs, sizeof *job->ranks);
    if (!job->ranks) {
        pr_err("out of memory");
        return 1;
    }
    /* slot: host by host, each to its slots, round again if needed */
    int h = 0, used = 0;
    for (int i = 0; i < o->nprocs; i++) {
        struct pr_rank *r = &job->ranks[i];
        if (o->map_by == PR_MAP_NODE) {
            r->host = i % job->nhosts;
        } else {
            while (used >= job->hosts[h].slots) {
                h = (h + 1) % job->nhosts;
                used = 0;
            }
            r->host = h;
            used++;
        }
        job->hosts[r->host].nranks++;
    }
    return 0;
}
