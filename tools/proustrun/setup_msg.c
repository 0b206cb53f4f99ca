/*
 * setup_msg.c — the SETUP record a front end sends each agent
 * (agent_wire.h): NUL-terminated "key=value" strings. Parsing takes bytes
 * from the network: every field is checked, nothing is trusted.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_wire.h"

#define PR_SETUP_MAX_ITEMS (1u << 20)

static int put(char **buf, size_t *len, size_t *cap, const char *key, const char *val)
{
    size_t k = strlen(key), v = strlen(val), need = k + 1 + v + 1;
    if (*len + need > *cap) {
        size_t ncap = *cap ? *cap : 4096;
        while (ncap < *len + need)
            ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = ncap;
    }
    memcpy(*buf + *len, key, k);
    (*buf)[*len + k] = '=';
    memcpy(*buf + *len + k + 1, val, v + 1);
    *len += need;
    return 0;
}

int pr_setup_encode(const struct pr_setup *s, char **out, size_t *len)
{
    char *buf = NULL, num[64];
    size_t n = 0, cap = 0;
    int rc = 0;
#define PUT(k, v) (rc |= put(&buf, &n, &cap, (k), (v)))
    snprintf(num, sizeof num, "%d", s->size), PUT("size", num);
    PUT("jobid", s->jobid);
    snprintf(num, sizeof num, "%d", s->tag_output), PUT("tag", num);
    snprintf(num, sizeof num, "%d", s->bind_to), PUT("bind", num);
    snprintf(num, sizeof num, "%.3f", s->grace_s), PUT("grace", num);
    PUT("cwd", s->cwd ? s->cwd : "");
    for (int i = 0; i < s->nranks; i++)
        snprintf(num, sizeof num, "%d", s->ranks[i]), PUT("rank", num);
    for (int i = 0; i < s->argc; i++)
        PUT("argv", s->argv[i]);
    for (int i = 0; i < s->envc; i++)
        PUT("env", s->env[i]);
#undef PUT
    if (rc) {
        free(buf);
        return -1;
    }
    *out = buf;
    *len = n;
    return 0;
}

static int parse_int(const char *v, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end || errno || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

void pr_setup_free(struct pr_setup *s)
{
    free(s->ranks);
    free(s->argv);
    free(s->env);
    s->ranks = NULL;
    s->argv = s->env = NULL;
}

int pr_setup_parse(char *buf, size_t len, struct pr_setup *s, const char **why)
{
    memset(s, 0, sizeof *s);
    s->size = -1;
    if (len == 0 || buf[len - 1] != '\0') {
        *why = "not a list of NUL-terminated strings";
        return -1;
    }
    /* Count first, to size the arrays. */
    size_t nr = 0, na = 0, ne = 0, items = 0;
    for (size_t off = 0; off < len; off += strlen(buf + off) + 1) {
        const char *it = buf + off;
        if (++items > PR_SETUP_MAX_ITEMS) {
            *why = "too many items";
            return -1;
        }
        nr += strncmp(it, "rank=", 5) == 0;
        na += strncmp(it, "argv=", 5) == 0;
        ne += strncmp(it, "env=", 4) == 0;
    }
    s->ranks = malloc((nr ? nr : 1) * sizeof *s->ranks);
    s->argv = malloc((na + 1) * sizeof *s->argv);
    s->env = malloc((ne + 1) * sizeof *s->env);
    if (!s->ranks || !s->argv || !s->env) {
        pr_setup_free(s);
        *why = "out of memory";
        return -1;
    }
    int have_jobid = 0, have_cwd = 0;
    *why = NULL;
    for (size_t off = 0; off < len && !*why; off += strlen(buf + off) + 1) {
        char *it = buf + off, *eq = strchr(it, '=');
        if (!eq) {
            *why = "an item without '='";
            break;
        }
        *eq = '\0';
        const char *k = it, *v = eq + 1;
        if (strcmp(k, "size") == 0) {
            if (parse_int(v, 1, INT_MAX, &s->size))
                *why = "bad size";
        } else if (strcmp(k, "jobid") == 0) {
            if (!*v || strlen(v) >= sizeof s->jobid)
                *why = "bad jobid";
            else
                snprintf(s->jobid, sizeof s->jobid, "%s", v), have_jobid = 1;
        } else if (strcmp(k, "tag") == 0) {
            if (parse_int(v, 0, 1, &s->tag_output))
                *why = "bad tag";
        } else if (strcmp(k, "bind") == 0) {
            if (parse_int(v, 0, 64, &s->bind_to))
                *why = "bad bind";
        } else if (strcmp(k, "grace") == 0) {
            char *end;
            errno = 0;
            s->grace_s = strtod(v, &end);
            if (end == v || *end || errno || !(s->grace_s >= 0) || s->grace_s > 1e6)
                *why = "bad grace";
        } else if (strcmp(k, "cwd") == 0) {
            s->cwd = v, have_cwd = 1;
        } else if (strcmp(k, "rank") == 0) {
            if (parse_int(v, 0, INT_MAX, &s->ranks[s->nranks]))
                *why = "bad rank";
            else
                s->nranks++;
        } else if (strcmp(k, "argv") == 0) {
            s->argv[s->argc++] = (char *)v;
        } else if (strcmp(k, "env") == 0) {
            if (!strchr(v, '='))
                *why = "an environment entry without '='";
            else
                s->env[s->envc++] = (char *)v;
        } else {
            *why = "unknown item";
        }
        *eq = '='; /* leave the buffer as it came (argv/env point past it) */
    }
    if (!*why && (s->size < 1 || !have_jobid || !have_cwd || s->nranks == 0 || s->argc == 0))
        *why = "an item is missing (size, jobid, cwd, rank or argv)";
    for (int i = 0; !*why && i < s->nranks; i++)
        if (s->ranks[i] >= s->size)
            *why = "a rank is not below size";
    if (*why) {
        pr_setup_free(s);
        return -1;
    }
    s->argv[s->argc] = NULL;
    s->env[s->envc] = NULL;
    return 0;
}
