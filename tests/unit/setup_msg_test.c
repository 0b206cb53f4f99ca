/*
 * setup_msg_test — the job description a proustrun front end sends its
 * agents (tools/proustrun/setup_msg.c): a round trip, then truncated,
 * malformed and random payloads, which must be refused with a reason and
 * never crash or read out of bounds (the fuzz loop runs under ASan in CI).
 */
#include <stdint.h>
#include <string.h>

#include "agent_wire.h"
#include "unit.h"

static char *encode(const struct pr_setup *s, size_t *len)
{
    char *buf = NULL;
    EXPECT_EQ(pr_setup_encode(s, &buf, len), 0);
    return buf;
}

static int parse_copy(const char *data, size_t len, const char **why)
{
    char *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
    EXPECT_TRUE(copy != NULL);
    memcpy(copy, data, len);
    struct pr_setup s;
    int rc = pr_setup_parse(copy, len, &s, why);
    if (rc == 0) {
        EXPECT_TRUE(s.size >= 1 && s.nranks >= 1 && s.argc >= 1);
        for (int i = 0; i < s.nranks; i++)
            EXPECT_TRUE(s.ranks[i] >= 0 && s.ranks[i] < s.size);
        EXPECT_TRUE(s.argv[s.argc] == NULL && s.env[s.envc] == NULL);
        pr_setup_free(&s);
    } else {
        EXPECT_TRUE(*why != NULL);
    }
    free(copy);
    return rc;
}

static void test_round_trip(void)
{
    int ranks[] = {1, 3, 5};
    char *argv[] = {"/bin/prog", "a b", "", "x=y", NULL};
    char *env[] = {"PATH=/usr/bin", "EMPTY=", "EQ=a=b", NULL};
    struct pr_setup s = {.size = 6, .tag_output = 1, .bind_to = 2, .grace_s = 3.5,
                         .cwd = "/home/u/run dir", .nranks = 3, .ranks = ranks, .argc = 4,
                         .argv = argv, .envc = 3, .env = env};
    strcpy(s.jobid, "123-abcdef");
    size_t len;
    char *buf = encode(&s, &len);
    struct pr_setup t;
    const char *why = NULL;
    EXPECT_EQ(pr_setup_parse(buf, len, &t, &why), 0);
    EXPECT_EQ(t.size, 6);
    EXPECT_EQ(t.tag_output, 1);
    EXPECT_EQ(t.bind_to, 2);
    EXPECT_TRUE(t.grace_s > 3.49 && t.grace_s < 3.51);
    EXPECT_TRUE(strcmp(t.jobid, "123-abcdef") == 0);
    EXPECT_TRUE(strcmp(t.cwd, "/home/u/run dir") == 0);
    EXPECT_EQ(t.nranks, 3);
    EXPECT_EQ(t.ranks[0], 1);
    EXPECT_EQ(t.ranks[2], 5);
    EXPECT_EQ(t.argc, 4);
    EXPECT_TRUE(strcmp(t.argv[1], "a b") == 0 && strcmp(t.argv[2], "") == 0);
    EXPECT_TRUE(strcmp(t.argv[3], "x=y") == 0 && t.argv[4] == NULL);
    EXPECT_EQ(t.envc, 3);
    EXPECT_TRUE(strcmp(t.env[2], "EQ=a=b") == 0 && t.env[3] == NULL);
    pr_setup_free(&t);

    /* every proper prefix is refused (or, cut at an item's end, parsed
     * consistently), never read past */
    for (size_t cut = 0; cut < len; cut++)
        parse_copy(buf, cut, &why);
    free(buf);
}

static void test_malformed(void)
{
    const char *why;
#define BAD(lit) EXPECT_EQ(parse_copy(lit, sizeof lit - 1, &why), -1)
    BAD("");
    BAD("size=2");                          /* no NUL at the end */
    BAD("size=2\0jobid=j\0cwd=/\0argv=p\0"); /* no rank */
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0"); /* no argv */
    BAD("size=2\0jobid=j\0cwd=/\0rank=2\0argv=p\0");  /* rank not below size */
    BAD("size=2\0jobid=j\0cwd=/\0rank=-1\0argv=p\0"); /* negative rank */
    BAD("size=0\0jobid=j\0cwd=/\0rank=0\0argv=p\0");
    BAD("size=99999999999\0jobid=j\0cwd=/\0rank=0\0argv=p\0");
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0argv=p\0env=NOEQUALS\0");
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0argv=p\0bogus\0");
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0argv=p\0what=1\0");
    BAD("size=2\0jobid=\0cwd=/\0rank=0\0argv=p\0");
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0argv=p\0tag=2\0");
    BAD("size=2\0jobid=j\0cwd=/\0rank=0\0argv=p\0grace=nan\0");
#undef BAD
    const char good[] = "size=2\0jobid=j\0cwd=/\0rank=1\0argv=p\0";
    EXPECT_EQ(parse_copy(good, sizeof good - 1, &why), 0);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void test_fuzz(void)
{
    int ranks[] = {0, 2};
    char *argv[] = {"prog", "arg", NULL};
    char *env[] = {"A=1", "B=2", NULL};
    struct pr_setup s = {.size = 4, .cwd = "/tmp", .nranks = 2, .ranks = ranks, .argc = 2,
                         .argv = argv, .envc = 2, .env = env};
    strcpy(s.jobid, "j");
    size_t len;
    char *seed = encode(&s, &len);
    static const char alphabet[] = "=\0-09azrankgs";
    char *buf = malloc(len + 64);
    EXPECT_TRUE(buf != NULL);
    int accepted = 0;
    for (int iter = 0; iter < 200000; iter++) {
        size_t n = len;
        memcpy(buf, seed, len);
        int flips = 1 + (int)(next_rand() % 4);
        for (int f = 0; f < flips; f++) {
            uint32_t r = next_rand();
            switch (r % 3) {
            case 0: buf[next_rand() % n] = alphabet[next_rand() % (sizeof alphabet - 1)]; break;
            case 1: buf[next_rand() % n] = (char)next_rand(); break;
            default: n = 1 + next_rand() % n; break; /* truncate */
            }
        }
        const char *why;
        accepted += parse_copy(buf, n, &why) == 0;
    }
    EXPECT_TRUE(accepted > 0); /* the mutations are not all fatal */
    free(buf);
    free(seed);
}

int main(void)
{
    test_round_trip();
    test_malformed();
    test_fuzz();
    printf("setup_msg: ok\n");
    return 0;
}
