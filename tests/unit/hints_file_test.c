/*
 * hints_file_test.c — the parser of ROMIO_HINTS files (src/mpi/io/
 * file_hints_file.c): the lines it takes, the ones it refuses, and random
 * bytes (every key and value it hands out is whole, within the limits and
 * free of spaces or NULs at its edges; it never reads past the length).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/io/file_hints_file.h"
#include "unit.h"

struct seen {
    int n;
    char keys[8][PM_HINT_KEY_MAX + 1], vals[8][PM_HINT_VAL_MAX + 1];
};

static void record(void *ctx, const char *key, const char *value)
{
    struct seen *s = ctx;
    size_t kl = strlen(key), vl = strlen(value);
    EXPECT_TRUE(kl > 0 && kl <= PM_HINT_KEY_MAX);
    EXPECT_TRUE(vl > 0 && vl <= PM_HINT_VAL_MAX);
    for (size_t i = 0; i < kl; i++)
        EXPECT_TRUE(!isspace((unsigned char)key[i]));
    EXPECT_TRUE(!isspace((unsigned char)value[0]) && !isspace((unsigned char)value[vl - 1]));
    if (s->n < 8) {
        strcpy(s->keys[s->n], key);
        strcpy(s->vals[s->n], value);
    }
    s->n++;
}

static int parse(const char *text, size_t len, struct seen *s, char *why)
{
    memset(s, 0, sizeof *s);
    return pm_hints_file_parse(text, len, record, s, why, 160);
}

int main(void)
{
    struct seen s;
    char why[160];
    const char *good = "# ROMIO hints\n\ncb_buffer_size 4194304\n  romio_cb_write   enable  \n"
                       "cb_config_list *:2\r\nstriping_unit 1048576";
    EXPECT_EQ(parse(good, strlen(good), &s, why), 0);
    EXPECT_EQ(s.n, 4);
    EXPECT_TRUE(!strcmp(s.keys[0], "cb_buffer_size") && !strcmp(s.vals[0], "4194304"));
    EXPECT_TRUE(!strcmp(s.keys[1], "romio_cb_write") && !strcmp(s.vals[1], "enable"));
    EXPECT_TRUE(!strcmp(s.keys[2], "cb_config_list") && !strcmp(s.vals[2], "*:2"));
    EXPECT_TRUE(!strcmp(s.keys[3], "striping_unit") && !strcmp(s.vals[3], "1048576"));
    /* a value with spaces inside is one value */
    const char *spaced = "key a b  c\n";
    EXPECT_EQ(parse(spaced, strlen(spaced), &s, why), 0);
    EXPECT_TRUE(s.n == 1 && !strcmp(s.vals[0], "a b  c"));
    /* refused: no value, a NUL, a key too long; the others still taken */
    char bad[2048];
    int n = snprintf(bad, sizeof bad, "lonely\nok 1\n");
    memset(bad + n, 'k', 300);
    n += 300;
    n += snprintf(bad + n, sizeof bad - (size_t)n, " v\nnul x");
    bad[n++] = '\0';
    n += snprintf(bad + n, sizeof bad - (size_t)n, "y\nlast 2");
    EXPECT_EQ(parse(bad, (size_t)n, &s, why), 3);
    EXPECT_EQ(s.n, 2);
    EXPECT_TRUE(strstr(why, "line 1") != NULL);
    /* the length is the end: "key value" cut before its value */
    EXPECT_EQ(parse("key value", 4, &s, why), 1);
    EXPECT_EQ(s.n, 0);
    /* random bytes, biased towards what the parser looks at */
    srand(12345);
    static const char alphabet[] = "ab# \t\n\r\0=:*9";
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(rand() % 3000);
        char *buf = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = rand() % 4 ? alphabet[rand() % (sizeof alphabet - 1)] : (char)rand();
        int refused = parse(buf, len, &s, why);
        EXPECT_TRUE(refused >= 0);
        free(buf);
    }
    printf("hints file parser: ok\n");
    return 0;
}
