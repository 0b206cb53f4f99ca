#include "common/config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "proust.h"

extern char **environ;

const struct proust__config_entry proust__config_table[PROUST_CFG_COUNT] = {
#define PROUST_CONFIG_ROW(id, name, def, doc) [PROUST_CFG_##id] = {name, def, doc},
    PROUST_CONFIG_LIST(PROUST_CONFIG_ROW)
#undef PROUST_CONFIG_ROW
};

const char *proust__config_str(proust__config_id_t id)
{
    const char *v = getenv(proust__config_table[id].name);
    return v ? v : proust__config_table[id].def;
}

int proust_config_entry(int index, const char **name, const char **value, const char **def,
                        const char **doc)
{
    if (index < 0 || index >= PROUST_CFG_COUNT)
        return PROUST_ERR_INVALID;
    const struct proust__config_entry *e = &proust__config_table[index];
    if (name)
        *name = e->name;
    if (value)
        *value = proust__config_str((proust__config_id_t)index);
    if (def)
        *def = e->def;
    if (doc)
        *doc = e->doc;
    return PROUST_OK;
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
        for (int i = 0; i < PROUST_CFG_COUNT && !known; i++)
            known = strlen(proust__config_table[i].name) == len &&
                    strncmp(proust__config_table[i].name, *env, len) == 0;
        for (int i = 0; internal[i] && !known; i++)
            known = strlen(internal[i]) == len && strncmp(internal[i], *env, len) == 0;
        if (known)
            continue;
        const char *best = NULL;
        size_t best_d = (size_t)-1;
        for (int i = 0; i < PROUST_CFG_COUNT; i++) {
            const char *n = proust__config_table[i].name;
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
