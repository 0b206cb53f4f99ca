/*
 * file_hints.c — hints (MPI-4.1 14.2.8) under the names users already set
 * for ROMIO, and MPI_File_set_info / get_info.
 *
 *   cb_buffer_size        bytes an aggregator gathers per round (16 MiB)
 *   cb_nodes              how many aggregators (default: by the size of
 *                         each collective call, one per PM_CB_AGG_BYTES of
 *                         the range it covers, at least one per host, at
 *                         most every rank: file_coll.c)
 *   cb_config_list        "*:N": N aggregators per host ("*:*": every rank)
 *   romio_cb_read/write   enable | disable | automatic: collective buffering
 *                         (the standard's collective_buffering: true | false)
 *   romio_ds_read/write   enable | disable | automatic: data sieving
 *   ind_rd_buffer_size    data sieving read buffer (4 MiB)
 *   ind_wr_buffer_size    data sieving write buffer (512 KiB)
 *   striping_factor/unit  kept and reported (a POSIX file system takes them
 *                         from its own tools); file domains on stripes
 *   file_perm             permissions of a file MPI_File_open creates (octal,
 *                         file_open.c; the umask applies)
 * Keys Proust does not know are kept and given back by get_info, as the
 * standard lets an implementation do. ROMIO_HINTS names a file of default
 * hints ("key value" lines) for every open, as with ROMIO; the info given
 * to MPI_File_open wins over it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_hints_file.h"
#include "io.h"

void pm_hints_default(struct pm_file_hints *h, int nhosts)
{
    memset(h, 0, sizeof *h);
    h->cb_buffer_size = 16 << 20;
    h->cb_nodes = nhosts;
    h->cb_auto = true;
    h->ind_rd_buffer_size = 4 << 20;
    h->ind_wr_buffer_size = 512 << 10;
    snprintf(h->cb_config_list, sizeof h->cb_config_list, "*:*");
}

static bool get_key(MPI_Info info, const char *key, char *val, int len)
{
    int flag = 0;
    return info != MPI_INFO_NULL && PMPI_Info_get(info, key, len - 1, val, &flag) == MPI_SUCCESS &&
           flag;
}

static int parse_switch(const char *v)
{
    if (!strcmp(v, "enable") || !strcmp(v, "true"))
        return PM_HINT_ENABLE;
    if (!strcmp(v, "disable") || !strcmp(v, "false"))
        return PM_HINT_DISABLE;
    return PM_HINT_AUTOMATIC;
}

static const char *switch_text(int s)
{
    return s == PM_HINT_ENABLE ? "enable" : s == PM_HINT_DISABLE ? "disable" : "automatic";
}

/* A positive size ("16777216", "16m", "4K"), or -1. */
static MPI_Offset parse_size(const char *v)
{
    char *end;
    long long n = strtoll(v, &end, 10);
    if (end == v || n <= 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        n <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        n <<= 20, end++;
    else if (*end == 'g' || *end == 'G')
        n <<= 30, end++;
    return *end ? -1 : (MPI_Offset)n;
}

/* Which ranks aggregate: the first `per_host` ranks of each host, host by
 * host, until cb_nodes. Collective over f->comm. */
static int choose_aggregators(struct pm_file *f)
{
    MPI_Comm node;
    int rc = PMPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, f->rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int lrank;
    PMPI_Comm_rank(node, &lrank);
    PMPI_Comm_free(&node);
    int *lranks = malloc((size_t)f->size * sizeof *lranks);
    int *aggs = malloc((size_t)f->size * sizeof *aggs);
    if (!lranks || !aggs) {
        free(lranks);
        free(aggs);
        return MPI_ERR_NO_MEM;
    }
    rc = PMPI_Allgather(&lrank, 1, MPI_INT, lranks, 1, MPI_INT, f->comm);
    if (rc != MPI_SUCCESS) {
        free(lranks);
        free(aggs);
        return rc;
    }
    int nhosts = 0, per_host = 1;
    for (int r = 0; r < f->size; r++)
        nhosts += lranks[r] == 0;
    f->nhosts = nhosts;
    const char *colon = strchr(f->hints.cb_config_list, ':');
    if (colon && colon[1] == '*')
        per_host = f->size;
    else if (colon && atoi(colon + 1) > 0)
        per_host = atoi(colon + 1);
    /* by size: every rank may aggregate, each call takes the first few */
    int want = f->hints.cb_auto ? f->size
               : f->hints.cb_nodes > 0 ? f->hints.cb_nodes
                                       : nhosts * per_host;
    if (want > f->size)
        want = f->size;
    /* local rank 0 of every host, then local rank 1..., so that the
     * aggregators spread over the hosts */
    int n = 0;
    for (int l = 0; n < want && l < f->size; l++)
        for (int r = 0; r < f->size && n < want; r++)
            if (lranks[r] == l)
                aggs[n++] = r;
    free(lranks);
    free(f->aggs);
    f->aggs = aggs;
    f->naggs = n;
    f->hints.cb_nodes = n;
    return MPI_SUCCESS;
}

static void info_put(MPI_Info info, const char *key, const char *fmt, long long v)
{
    char buf[64];
    snprintf(buf, sizeof buf, fmt, v);
    PMPI_Info_set(info, key, buf);
}

/* f->info: what get_info reports (the hints in force, and the others). */
static int record(struct pm_file *f, MPI_Info given)
{
    MPI_Info in;
    int rc = f->info != MPI_INFO_NULL ? MPI_SUCCESS : PMPI_Info_create(&f->info);
    if (rc != MPI_SUCCESS)
        return rc;
    in = f->info;
    if (given != MPI_INFO_NULL) {
        int n = 0;
        PMPI_Info_get_nkeys(given, &n);
        for (int i = 0; i < n; i++) {
            char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
            if (PMPI_Info_get_nthkey(given, i, key) == MPI_SUCCESS &&
                get_key(given, key, val, sizeof val))
                PMPI_Info_set(in, key, val);
        }
    }
    const struct pm_file_hints *h = &f->hints;
    info_put(in, "cb_buffer_size", "%lld", h->cb_buffer_size);
    info_put(in, "cb_nodes", "%lld", h->cb_nodes);
    PMPI_Info_set(in, "cb_config_list", h->cb_config_list);
    PMPI_Info_set(in, "romio_cb_read", switch_text(h->cb_read));
    PMPI_Info_set(in, "romio_cb_write", switch_text(h->cb_write));
    PMPI_Info_set(in, "romio_ds_read", switch_text(h->ds_read));
    PMPI_Info_set(in, "romio_ds_write", switch_text(h->ds_write));
    info_put(in, "ind_rd_buffer_size", "%lld", h->ind_rd_buffer_size);
    info_put(in, "ind_wr_buffer_size", "%lld", h->ind_wr_buffer_size);
    if (h->striping_factor > 0)
        info_put(in, "striping_factor", "%lld", h->striping_factor);
    if (h->striping_unit > 0)
        info_put(in, "striping_unit", "%lld", h->striping_unit);
    return MPI_SUCCESS;
}

static void put_default(void *ctx, const char *key, const char *value)
{
    MPI_Info in = *(MPI_Info *)ctx;
    int flag = 0, len = 0;
    PMPI_Info_get_valuelen(in, key, &len, &flag);
    if (!flag) /* the application's own hint wins */
        PMPI_Info_set(in, key, value);
}

/* info (MPI_INFO_NULL: none) with ROMIO_HINTS's file below it, in a new
 * info for the caller to free; MPI_INFO_NULL without such a file. */
static MPI_Info with_hints_file(MPI_Info info, const char *fname)
{
    const char *path = getenv("ROMIO_HINTS");
    if (!path || !*path)
        return MPI_INFO_NULL;
    static _Atomic int warned;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        if (!atomic_exchange(&warned, 1))
            fprintf(stderr, "[proust mpi] %s: ROMIO_HINTS=%s cannot be read (%s): no hints "
                    "taken from it\n", fname, path, strerror(errno));
        return MPI_INFO_NULL;
    }
    char *text = malloc(1 << 20);
    size_t n = text ? fread(text, 1, 1 << 20, fp) : 0;
    fclose(fp);
    MPI_Info merged = MPI_INFO_NULL;
    if (text && (info != MPI_INFO_NULL ? PMPI_Info_dup(info, &merged)
                                       : PMPI_Info_create(&merged)) == MPI_SUCCESS) {
        char why[160];
        int bad = pm_hints_file_parse(text, n, put_default, &merged, why, sizeof why);
        if (bad && !atomic_exchange(&warned, 1))
            fprintf(stderr, "[proust mpi] %s: ROMIO_HINTS=%s: %d line(s) left out, %s\n", fname,
                    path, bad, why);
    }
    free(text);
    return merged;
}

int pm_hints_apply(struct pm_file *f, MPI_Info info, const char *fname)
{
    if (!f->aggs) { /* at open: the hints file first */
        MPI_Info merged = with_hints_file(info, fname);
        if (merged != MPI_INFO_NULL) {
            int rc = pm_hints_apply_given(f, merged, fname);
            PMPI_Info_free(&merged);
            return rc;
        }
    }
    return pm_hints_apply_given(f, info, fname);
}

int pm_hints_apply_given(struct pm_file *f, MPI_Info info, const char *fname)
{
    (void)fname;
    if (!f->aggs)
        pm_hints_default(&f->hints, 0);
    struct pm_file_hints *h = &f->hints;
    char v[MPI_MAX_INFO_VAL + 1];
    MPI_Offset n;
    bool regroup = !f->aggs;
    if (get_key(info, "cb_buffer_size", v, sizeof v) && (n = parse_size(v)) > 0)
        h->cb_buffer_size = n;
    bool nodes_given = get_key(info, "cb_nodes", v, sizeof v) && atoi(v) > 0;
    if (nodes_given) {
        h->cb_nodes = atoi(v);
        h->cb_auto = false;
        regroup = true;
    }
    if (get_key(info, "cb_config_list", v, sizeof v)) {
        snprintf(h->cb_config_list, sizeof h->cb_config_list, "%.*s",
                 (int)sizeof h->cb_config_list - 1, v);
        if (!nodes_given)
            h->cb_nodes = 0; /* the list says how many */
        h->cb_auto = false;
        regroup = true;
    }
    if (get_key(info, "collective_buffering", v, sizeof v)) /* the standard's name */
        h->cb_read = h->cb_write = parse_switch(v);
    if (get_key(info, "romio_cb_read", v, sizeof v))
        h->cb_read = parse_switch(v);
    if (get_key(info, "romio_cb_write", v, sizeof v))
        h->cb_write = parse_switch(v);
    if (get_key(info, "romio_ds_read", v, sizeof v))
        h->ds_read = parse_switch(v);
    if (get_key(info, "romio_ds_write", v, sizeof v))
        h->ds_write = parse_switch(v);
    if (get_key(info, "ind_rd_buffer_size", v, sizeof v) && (n = parse_size(v)) > 0)
        h->ind_rd_buffer_size = n;
    if (get_key(info, "ind_wr_buffer_size", v, sizeof v) && (n = parse_size(v)) > 0)
        h->ind_wr_buffer_size = n;
    if (get_key(info, "striping_factor", v, sizeof v) && atoi(v) > 0)
        h->striping_factor = atoi(v);
    if (get_key(info, "striping_unit", v, sizeof v) && (n = parse_size(v)) > 0)
        h->striping_unit = n;
    /* The aggregators must be the same everywhere: every rank computes them
     * from rank 0's hints. */
    int agreed[4] = {(int)(h->cb_buffer_size > INT32_MAX ? INT32_MAX : h->cb_buffer_size),
                     h->cb_nodes, regroup, h->cb_auto};
    int rc = PMPI_Bcast(agreed, 4, MPI_INT, 0, f->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    h->cb_buffer_size = agreed[0];
    h->cb_nodes = agreed[1];
    h->cb_auto = agreed[3];
    if (agreed[2]) {
        rc = choose_aggregators(f);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return record(f, info);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_file_error(f, MPI_ERR_INFO, "%s: invalid info %#x", fn, (unsigned)info);
    pm_file_drain(f);
    int rc = pm_hints_apply(f, info, fn);
    return rc == MPI_SUCCESS ? rc : pm_file_error(f, rc, "%s(%s): hints not agreed", fn, f->path);
}
PM_WEAK(File_set_info)

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    PM_CHECK_INIT(fn);
    PM_FILE_GET(f, fh, fn);
    if (!info_used)
        return pm_file_error(f, MPI_ERR_ARG, "%s: info_used is NULL", fn);
    int rc = PMPI_Info_dup(f->info, info_used);
    return rc == MPI_SUCCESS ? rc : pm_file_error(f, rc, "%s: cannot copy the hints", fn);
}
PM_WEAK(File_get_info)
