#include "common/config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "proust.h"

extern char **environ;

const proust_config_var_t proust__config_table[PROUST_CFG_COUNT] = {
#define PROUST_CONFIG_ROW(id, name, def, doc) [PROUST_CFG_##id] = {name, def, doc},
    PROUST_CONFIG_LIST(PROUST_CONFIG_ROW)
#undef PROUST_CONFIG_ROW
};

/* The tables of the layers above (proust_config_register): slots filled
 * under the mutex, published by the count. */
#define CONFIG_TABLES_MAX 8
static struct {
    const proust_config_var_t *vars;
    int count;
} config_tables[CONFIG_TABLES_MAX];
static _Atomic int config_ntables;
static pthread_mutex_t config_register_lock = PTHREAD_MUTEX_INITIALIZER;

int proust_config_register(const proust_config_var_t *vars, int count)
{
    if (!vars || count <= 0)
        return PROUST_ERR_INVALID;
    for (int i = 0; i < count; i++)
        if (!vars[i].name || strncmp(vars[i].name, "PROUST_", 7) != 0 || !vars[i].def ||
            !vars[i].doc)
            return PROUST_ERR_INVALID;
    int rc = PROUST_OK;
    pthread_mutex_lock(&config_register_lock);
    int n = atomic_load_explicit(&config_ntables, memory_order_relaxed);
    for (int t = 0; t < n; t++)
        if (config_tables[t].vars == vars)
            goto out; /* registered already */
    if (n == CONFIG_TABLES_MAX) {
        rc = PROUST_ERR_NOMEM;
        goto out;
    }
    config_tables[n].vars = vars;
    config_tables[n].count = count;
    atomic_store_explicit(&config_ntables, n + 1, memory_order_release);
out:
    pthread_mutex_unlock(&config_register_lock);
    return rc;
}

/* Variable `index` of proust_config_entry's list, or NULL past its end. */
static const proust_config_var_t *config_var(int index)
{
    if (index < 0)
        return NULL;
    if (index < PROUST_CFG_COUNT)
        return &proust__config_table[index];
    index -= PROUST_CFG_COUNT;
    int n = atomic_load_explicit(&config_ntables, memory_order_acquire);
    for (int t = 0; t < n; index -= config_tables[t].count, t++)
        if (index < config_tables[t].count)
            return &config_tables[t].vars[index];
    return NULL;
}

static const char *config_value(const proust_config_var_t *v)
{
    const char *e = getenv(v->name);
    return e ? e : v->def;
}

const char *proust__config_str(proust__config_id_t id)
{
    return config_value(&proust__config_table[id]);
}

int proust_config_entry(int index, const char **name, const char **value, const char **def,
                        const char **doc)
{
    const proust_config_var_t *e = config_var(index);
    if (!e)
        return PROUST_ERR_INVALID;
    if (name)
        *name = e->name;
    if (value)
        *value = config_value(e);
    if (def)
        *def = e->def;
    if (doc)
        *doc = e->doc;
    return PROUST_OK;
}

int proust_config_switch(const char *value)
{
    if (!value)
        return -1;
    if (!strcasecmp(value, "on") || !strcmp(value, "1") || !strcasecmp(value, "yes"))
        return 1;
    if (!strcasecmp(value, "off") || !strcmp(value, "0") || !strcasecmp(value, "no"))
        return 0;
    return -1;
}

int proust__config_is_set(proust__config_id_t id)
{
    return getenv(proust__config_table[id].name) != NULL;
}

int proust__parse_size(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || errno != 0 || text[0] == '-')
        return PROUST_ERR_INVALID;
    unsigned long long mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1ULL << 10; end++; break;
    case 'm': case 'M': mult = 1ULL << 20; end++; break;
    case 'g': case 'G': mult = 1ULL << 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b') /* accept 64KiB, 64KB */
        end += (*end == 'i' && (end[1] == 'B' || end[1] == 'b')) ? 2 : 1;
    if (*end != '\0' || v > (unsigned long long)SIZE_MAX / mult)
        return PROUST_ERR_INVALID;
    *out = (size_t)(v * mult);
    return PROUST_OK;
}

int proust__config_size(proust__config_id_t id, size_t *out)
{
    int rc = proust__parse_size(proust__config_str(id), out);
    if (rc != PROUST_OK)
        PROUST_ERROR("%s=%s is not a size (examples: 4096, 64K, 16M)",
                     proust__config_table[id].name, proust__config_str(id));
    return rc;
}

int proust__config_long(proust__config_id_t id, long *out)
{
    const char *text = proust__config_str(id);
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0) {
        PROUST_ERROR("%s=%s is not an integer", proust__config_table[id].name, text);
        return PROUST_ERR_INVALID;
    }
    *out = v;
    return PROUST_OK;
}

/* Levenshtein distance, small strings only. */
static size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    size_t row[128];
    if (lb >= 128)
        return (size_t)-1;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            if (up + 1 < best)
                best = up + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

void proust__config_check_unknown(void)
{
    /* Variables read by the launcher protocol, not user knobs. */
    static const char *const internal[] = {"PROUST_RANK", "PROUST_SIZE", "PROUST_BOOT_FD",
                                            "PROUST_JOBID", "PROUST_LOCAL_RANK",
                                            "PROUST_LOCAL_SIZE", "PROUST_NODE_CPUS", NULL};
    for (char **env = environ; env && *env; env++) {
        if (strncmp(*env, "PROUST_", 7) != 0)
            continue;
        size_t len = strcspn(*env, "=");
        int known = 0;
        const proust_config_var_t *v;
        for (int i = 0; (v = config_var(i)) && !known; i++)
            known = strlen(v->name) == len && strncmp(v->name, *env, len) == 0;
        for (int i = 0; internal[i] && !known; i++)
            known = strlen(internal[i]) == len && strncmp(internal[i], *env, len) == 0;
        if (known)
            continue;
        const char *best = NULL;
        size_t best_d = (size_t)-1;
        for (int i = 0; (v = config_var(i)); i++) {
            const char *n = v->name;
            size_t d = edit_distance(*env, len, n, strlen(n));
            if (d < best_d) {
                best_d = d;
                best = n;
            }
        }
        if (best && best_d <= 3)
            PROUST_WARN("unknown variable %.*s (did you mean %s?)", (int)len, *env, best);
        else
            PROUST_WARN("unknown variable %.*s (proust-info lists them all)", (int)len, *env);
    }
}
