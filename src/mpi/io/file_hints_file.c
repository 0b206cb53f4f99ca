/*
 * file_hints_file.c — the parser of a hints file (ROMIO_HINTS, as ROMIO
 * reads it: one "key value" per line, blank lines and lines starting with
 * '#' ignored). It depends on nothing of the library, so a unit test feeds
 * it arbitrary bytes (tests/unit/hints_file_test.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "file_hints_file.h"

int pm_hints_file_parse(const char *text, size_t len, pm_hint_put_fn put, void *ctx,
                        char *why, size_t whylen)
{
    int bad = 0, line = 0;
    size_t i = 0;
    if (whylen)
        why[0] = '\0';
    while (i < len) {
        size_t start = i;
        while (i < len && text[i] != '\n')
            i++;
        size_t end = i; /* [start, end): one line */
        i++;
        line++;
        while (start < end && isspace((unsigned char)text[start]))
            start++;
        while (end > start && isspace((unsigned char)text[end - 1]))
            end--;
        if (start == end || text[start] == '#')
            continue;
        size_t k = start;
        while (k < end && !isspace((unsigned char)text[k]))
            k++;
        size_t klen = k - start;
        while (k < end && isspace((unsigned char)text[k]))
            k++;
        size_t vlen = end - k;
        bool ok = klen > 0 && klen <= PM_HINT_KEY_MAX && vlen > 0 && vlen <= PM_HINT_VAL_MAX &&
                  !memchr(text + start, '\0', end - start);
        if (!ok) {
            if (!bad && whylen)
                snprintf(why, whylen, "line %d: %s", line,
                         vlen == 0 ? "a key without a value"
                         : klen > PM_HINT_KEY_MAX || vlen > PM_HINT_VAL_MAX
                             ? "key or value too long"
                             : "a NUL byte");
            bad++;
            continue;
        }
        char key[PM_HINT_KEY_MAX + 1], val[PM_HINT_VAL_MAX + 1];
        memcpy(key, text + start, klen);
        key[klen] = '\0';
        memcpy(val, text + k, vlen);
        val[vlen] = '\0';
        put(ctx, key, val);
    }
    return bad;
}
