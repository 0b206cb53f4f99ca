/*
 * pmi_wire_test — the PMI-1 reply parser, hex values and process mappings
 * (src/boot/pmi_wire.c): replies as Hydra and Slurm send them, then
 * truncated, oversized, unprintable and random ones, which must be refused
 * with a reason and never crash (the fuzz loop runs under ASan in CI).
 */
#include <string.h>

#include "boot/pmi_wire.h"
#include "proust.h"
#include "unit.h"

static int parse(const char *line, struct proust__pmi_msg *m, const char **why)
{
    *why = NULL;
    return proust__pmi_parse(line, strlen(line), m, why);
}

static void test_replies(void)
{
    struct proust__pmi_msg m;
    const char *why;
    EXPECT_EQ(parse("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0", &m, &why),
              PROUST_OK);
    EXPECT_TRUE(proust__pmi_is(&m, "response_to_init"));
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "rc"), "0") == 0);
    EXPECT_TRUE(proust__pmi_get(&m, "msg") == NULL);
    EXPECT_EQ(parse("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024", &m, &why),
              PROUST_OK);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "vallen_max"), "1024") == 0);
    /* a value may hold '=' (msg=...), words may be separated by runs of spaces */
    EXPECT_EQ(parse("cmd=get_result  rc=-1 msg=key=x_not_found ", &m, &why), PROUST_OK);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "msg"), "key=x_not_found") == 0);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "rc"), "-1") == 0);
    EXPECT_EQ(parse("cmd=get_result rc=0 value=", &m, &why), PROUST_OK);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "value"), "") == 0);
    EXPECT_EQ(parse("cmd=barrier_out", &m, &why), PROUST_OK);
    EXPECT_TRUE(proust__pmi_is(&m, "barrier_out") && !proust__pmi_is(&m, "barrier"));

    /* garbage */
    const char *bad[] = {"", "   ", "barrier_out", "rc=0 cmd=put_result", "cmd=", "cmd",
                         "=x cmd=y", "cmd=x novalue", "cmd=x a=1 b=2 c=3 d=4 e=5 f=6 g=7 h=8 "
                         "i=9 j=10 k=11 l=12 m=13 n=14 o=15 p=16"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_EQ(parse(bad[i], &m, &why), PROUST_ERR_PROTO);
        EXPECT_TRUE(why != NULL);
    }
    char line[] = "cmd=get_result rc=0 value=ab\001cd";
    EXPECT_EQ(parse(line, &m, &why), PROUST_ERR_PROTO); /* unprintable */
    EXPECT_EQ(proust__pmi_parse("cmd=x\0y=1", 9, &m, &why), PROUST_ERR_PROTO); /* a NUL */
    static char big[PROUST__PMI_LINE_MAX + 10];
    memset(big, 'a', sizeof big - 1);
    memcpy(big, "cmd=x v=", 8);
    EXPECT_EQ(proust__pmi_parse(big, PROUST__PMI_LINE_MAX + 1, &m, &why), PROUST_ERR_PROTO);
    EXPECT_EQ(proust__pmi_parse(big, PROUST__PMI_LINE_MAX, &m, &why), PROUST_OK);
}

/* PMI-2 messages: ';' ends a word, ";;" is a ';' in a value. */
static void test_pmi2(void)
{
    struct proust__pmi_msg m;
    const char *why;
    const char *full = "cmd=fullinit-response;pmi-version=2;rank=3;size=8;rc=0;";
    EXPECT_EQ(proust__pmi2_parse(full, strlen(full), &m, &why), PROUST_OK);
    EXPECT_TRUE(proust__pmi_is(&m, "fullinit-response"));
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "rank"), "3") == 0);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "rc"), "0") == 0);
    const char *esc = "cmd=kvs-get-response;found=TRUE;value=a;;b=c;;;rc=0";
    EXPECT_EQ(proust__pmi2_parse(esc, strlen(esc), &m, &why), PROUST_OK);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "value"), "a;b=c;") == 0);
    EXPECT_TRUE(strcmp(proust__pmi_get(&m, "rc"), "0") == 0); /* no ';' at the end */
    static const char *bad[] = {"", ";", "rc=0;cmd=x;", "cmd=;", "cmd=x;novalue;", "=1;cmd=x;",
                                "cmd=x;\001=2;"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why = NULL;
        EXPECT_EQ(proust__pmi2_parse(bad[i], strlen(bad[i]), &m, &why), PROUST_ERR_PROTO);
        EXPECT_TRUE(why != NULL);
    }
}

static void test_hex(void)
{
    unsigned char in[300], out[300];
    char hex[2 * sizeof in + 1];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n < sizeof in; n += 37) {
        proust__pmi_hex_encode(in, n, hex);
        EXPECT_EQ(strlen(hex), 2 * n);
        EXPECT_EQ(proust__pmi_hex_decode(hex, out, sizeof out), (long)n);
        EXPECT_TRUE(memcmp(in, out, n) == 0);
    }
    EXPECT_EQ(proust__pmi_hex_decode("abc", out, sizeof out), -1);   /* odd length */
    EXPECT_EQ(proust__pmi_hex_decode("zz", out, sizeof out), -1);    /* not hex */
    EXPECT_EQ(proust__pmi_hex_decode("0a0b0c", out, 2), -1);         /* does not fit */
    EXPECT_EQ(proust__pmi_hex_decode("0A0b", out, 2), 2);
    EXPECT_EQ(out[0], 10);
}

static void test_mapping(void)
{
    int node[16];
    /* 2 nodes of 2, then 1 node of 3 */
    EXPECT_EQ(proust__pmi_parse_mapping("(vector,(0,2,2),(2,1,3))", 7, node), PROUST_OK);
    const int want[] = {0, 0, 1, 1, 2, 2, 2};
    for (int r = 0; r < 7; r++)
        EXPECT_EQ(node[r], want[r]);
    /* cyclic: one rank per node over 2 nodes, repeated */
    EXPECT_EQ(proust__pmi_parse_mapping("(vector,(0,2,1))", 5, node), PROUST_OK);
    for (int r = 0; r < 5; r++)
        EXPECT_EQ(node[r], r % 2);
    EXPECT_EQ(proust__pmi_parse_mapping("(vector,(0,1,4))", 4, node), PROUST_OK);
    EXPECT_EQ(node[3], 0);
    const char *bad[] = {"", "(vector)", "(vector,(0,1))", "(vector,(0,1,2)", "(vector,(0,1,2)))",
                         "(vector,(0,0,0))", "(vector,(a,1,1))", "(vector,(0,1,99999999999))",
                         "vector,(0,1,1))", "(vector,(0,1,1)),", "(vector,(0,1,-1))"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_EQ(proust__pmi_parse_mapping(bad[i], 4, node), PROUST_ERR_PROTO);
    EXPECT_EQ(proust__pmi_parse_mapping("(vector,(0,1,1))", 0, node), PROUST_ERR_PROTO);
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random lines, and mutations of real replies: parsed or refused, every
 * word of a parsed one a key=value inside the line. */
static void test_fuzz(void)
{
    static const char *seeds[] = {"cmd=get_result rc=0 value=0a0b", "cmd=maxes keylen_max=64",
                                  "cmd=barrier_out", "cmd=set rank=3"};
    static char line[PROUST__PMI_LINE_MAX + 64];
    struct proust__pmi_msg m;
    int node[64];
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (int iter = 0; iter < 200000; iter++) {
        size_t len;
        if (iter % 2) {
            len = next(&rng) % (sizeof line);
            for (size_t i = 0; i < len; i++) {
                uint64_t r = next(&rng);
                line[i] = (char)(r % 4 == 0 ? " =cmd"[r % 5] : (int)(r >> 8));
            }
        } else {
            const char *s = seeds[next(&rng) % 4];
            len = strlen(s);
            memcpy(line, s, len);
            for (int k = (int)(next(&rng) % 4); k > 0 && len; k--)
                line[next(&rng) % len] = (char)next(&rng);
            len = next(&rng) % (len + 1); /* truncated too */
        }
        const char *why = NULL;
        /* PMI-2 messages too: the same bytes, ';' turned into separators */
        if (iter % 3 == 0) {
            for (size_t i = 0; i < len; i++)
                if (line[i] == ' ')
                    line[i] = ';';
            int rc2 = proust__pmi2_parse(line, len, &m, &why);
            EXPECT_TRUE(rc2 == PROUST_OK || (rc2 == PROUST_ERR_PROTO && why != NULL));
            if (rc2 == PROUST_OK)
                EXPECT_TRUE(m.nwords >= 1 && m.nwords <= PROUST__PMI_WORDS_MAX);
            continue;
        }
        int rc = proust__pmi_parse(line, len, &m, &why);
        if (rc != PROUST_OK) {
            EXPECT_EQ(rc, PROUST_ERR_PROTO);
            EXPECT_TRUE(why != NULL);
            continue;
        }
        EXPECT_TRUE(m.nwords >= 1 && m.nwords <= PROUST__PMI_WORDS_MAX);
        for (int w = 0; w < m.nwords; w++)
            EXPECT_TRUE(m.key[w] >= m.buf && m.value[w] <= m.buf + len);
        line[len] = '\0';
        (void)proust__pmi_parse_mapping(line, 1 + (int)(next(&rng) % 64), node);
        char out[PROUST__PMI_LINE_MAX];
        (void)proust__pmi_hex_decode(line, out, next(&rng) % sizeof out);
    }
}

int main(void)
{
    test_replies();
    test_pmi2();
    test_hex();
    test_mapping();
    test_fuzz();
    printf("unit_pmi_wire: ok\n");
    return 0;
}
