/*
 * env_info.c — info objects: create/set/get/dup/delete/free, key order
 * (nthkey), valuelen and truncation of values, the length limits
 * (MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE), MPI_ERR_INFO_NOKEY, invalid
 * handles (MPI_ERR_INFO), MPI_INFO_ENV, and concurrent use from threads.
 * MPI-4.0: info objects made and used before MPI_Init and after
 * MPI_Finalize keep their contents and handles across both (objects made
 * in between get other handles), and MPI_Info_create_env gives the same
 * keys before MPI_Init, after it and after MPI_Finalize.
 */
#include <pthread.h>
#include <stdbool.h>

#include "mpitest.h"

static void check_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

static void get_expect(MPI_Info info, const char *key, const char *want)
{
    char val[MPI_MAX_INFO_VAL];
    int flag = -1, len = -1;
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, val, &flag));
    MPI_CHECK(MPI_Info_get_valuelen(info, key, &len, &flag));
    if (!want) {
        CHECK(!flag, "key %s should be absent", key);
        return;
    }
    CHECK(flag, "key %s missing", key);
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, want) == 0, "key %s = \"%s\", want \"%s\"", key, val, want);
    CHECK(len == (int)strlen(want), "valuelen of %s = %d, want %zu", key, len, strlen(want));
}

static void basics(void)
{
    MPI_Info info, dup;
    MPI_CHECK(MPI_Info_create(&info));
    int n = -1;
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 0, "new info has %d keys", n);
    MPI_CHECK(MPI_Info_set(info, "alpha", "1"));
    MPI_CHECK(MPI_Info_set(info, "beta", "two"));
    MPI_CHECK(MPI_Info_set(info, "gamma", ""));
    MPI_CHECK(MPI_Info_set(info, "alpha", "one")); /* overrides, keeps its place */
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "nkeys %d, want 3", n);
    const char *order[3] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3; i++) {
        char key[MPI_MAX_INFO_KEY];
        MPI_CHECK(MPI_Info_get_nthkey(info, i, key));
        CHECK(strcmp(key, order[i]) == 0, "key %d = %s, want %s", i, key, order[i]);
    }
    get_expect(info, "alpha", "one");
    get_expect(info, "beta", "two");
    get_expect(info, "gamma", "");
    get_expect(info, "delta", NULL);
    get_expect(info, "Alpha", NULL); /* keys are case sensitive */

    /* Truncation: at most valuelen characters, then a null. */
    char small[8];
    memset(small, 'x', sizeof small);
    int flag = 0;
    MPI_CHECK(MPI_Info_get(info, "beta", 2, small, &flag));
    CHECK(flag && strcmp(small, "tw") == 0 && small[3] == 'x', "truncated value \"%s\"", small);
    MPI_CHECK(MPI_Info_get(info, "beta", 0, small, &flag));
    CHECK(flag && small[0] == '\0', "valuelen 0 gives \"%s\"", small);

    /* MPI_Info_get_string: buflen counts the null; out, the length + 1. */
    int buflen = 0;
    memset(small, 'x', sizeof small);
    MPI_CHECK(MPI_Info_get_string(info, "alpha", &buflen, NULL, &flag));
    CHECK(flag && buflen == 4, "get_string length query: flag %d buflen %d", flag, buflen);
    buflen = 3;
    MPI_CHECK(MPI_Info_get_string(info, "alpha", &buflen, small, &flag));
    CHECK(flag && buflen == 4 && strcmp(small, "on") == 0 && small[3] == 'x',
          "get_string cut to 3: \"%s\", buflen %d", small, buflen);
    buflen = (int)sizeof small;
    MPI_CHECK(MPI_Info_get_string(info, "gamma", &buflen, small, &flag));
    CHECK(flag && buflen == 1 && small[0] == '\0', "get_string of \"\": buflen %d", buflen);
    buflen = 5;
    flag = 1;
    MPI_CHECK(MPI_Info_get_string(info, "delta", &buflen, small, &flag));
    CHECK(!flag && buflen == 5, "get_string of a missing key: flag %d buflen %d", flag, buflen);
    buflen = -1;
    check_class(MPI_Info_get_string(info, "beta", &buflen, small, &flag), MPI_ERR_ARG,
                "get_string buflen -1");

    /* dup copies keys and order; the two are independent afterwards */
    MPI_CHECK(MPI_Info_dup(info, &dup));
    CHECK(dup != info && dup != MPI_INFO_NULL, "dup handle %#x", (unsigned)dup);
    MPI_CHECK(MPI_Info_set(dup, "beta", "changed"));
    MPI_CHECK(MPI_Info_delete(info, "alpha"));
    get_expect(dup, "alpha", "one");
    get_expect(dup, "beta", "changed");
    get_expect(info, "alpha", NULL);
    get_expect(info, "beta", "two");
    char key[MPI_MAX_INFO_KEY];
    MPI_CHECK(MPI_Info_get_nthkey(info, 0, key));
    CHECK(strcmp(key, "beta") == 0, "after delete, key 0 = %s", key);
    MPI_CHECK(MPI_Info_get_nthkey(dup, 2, key));
    CHECK(strcmp(key, "gamma") == 0, "dup key 2 = %s", key);

    check_class(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY, "deleting a missing key");
    check_class(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG, "nthkey past the end");
    check_class(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG, "nthkey -1");
    check_class(MPI_Info_get(info, "beta", -1, small, &flag), MPI_ERR_ARG, "valuelen -1");

    MPI_CHECK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");
    MPI_Info stale = dup;
    MPI_CHECK(MPI_Info_free(&dup));
    check_class(MPI_Info_set(stale, "a", "b"), MPI_ERR_INFO, "set on a freed info");
    check_class(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO, "nkeys of MPI_INFO_NULL");
    check_class(MPI_Info_free(&stale), MPI_ERR_INFO, "freeing twice");
    check_class(MPI_Info_dup(MPI_COMM_WORLD, &dup), MPI_ERR_INFO, "a communicator as info");
}

static void limits(void)
{
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    char key[MPI_MAX_INFO_KEY + 2], val[MPI_MAX_INFO_VAL + 2], out[MPI_MAX_INFO_VAL];
    /* the longest key and value that fit their buffers */
    memset(key, 'k', MPI_MAX_INFO_KEY - 1);
    key[MPI_MAX_INFO_KEY - 1] = '\0';
    memset(val, 'v', MPI_MAX_INFO_VAL - 1);
    val[MPI_MAX_INFO_VAL - 1] = '\0';
    MPI_CHECK(MPI_Info_set(info, key, val));
    int flag = 0, len = 0;
    MPI_CHECK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL - 1, out, &flag));
    CHECK(flag && strcmp(out, val) == 0, "longest value not returned");
    MPI_CHECK(MPI_Info_get_valuelen(info, key, &len, &flag));
    CHECK(len == MPI_MAX_INFO_VAL - 1, "valuelen %d", len);
    char nth[MPI_MAX_INFO_KEY];
    MPI_CHECK(MPI_Info_get_nthkey(info, 0, nth));
    CHECK(strcmp(nth, key) == 0, "longest key not returned by nthkey");
    /* one character more: refused with the right class */
    memset(key, 'k', MPI_MAX_INFO_KEY);
    key[MPI_MAX_INFO_KEY] = '\0';
    check_class(MPI_Info_set(info, key, "x"), MPI_ERR_INFO_KEY, "key too long (set)");
    check_class(MPI_Info_get(info, key, 10, out, &flag), MPI_ERR_INFO_KEY, "key too long (get)");
    check_class(MPI_Info_delete(info, key), MPI_ERR_INFO_KEY, "key too long (delete)");
    check_class(MPI_Info_get_valuelen(info, key, &len, &flag), MPI_ERR_INFO_KEY,
                "key too long (valuelen)");
    check_class(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, "empty key");
    memset(val, 'v', MPI_MAX_INFO_VAL);
    val[MPI_MAX_INFO_VAL] = '\0';
    check_class(MPI_Info_set(info, "k", val), MPI_ERR_INFO_VALUE, "value too long");
    check_class(MPI_Info_set(info, "k", NULL), MPI_ERR_INFO_VALUE, "NULL value");
    int n = 0;
    MPI_CHECK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "refused sets added keys: %d", n);
    MPI_CHECK(MPI_Info_free(&info));
}

static void env(void)
{
    int n = 0, flag = 0;
    MPI_CHECK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 3, "MPI_INFO_ENV has %d keys", n);
    char val[MPI_MAX_INFO_VAL];
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "command", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strstr(val, "env_info") != NULL, "command = \"%s\"", flag ? val : "");
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "argv", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "first second") == 0, "argv = \"%s\"", flag ? val : "");
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && atoi(val) == size, "maxprocs = \"%s\", size %d", flag ? val : "", size);
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "thread_level", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_MULTIPLE") == 0, "thread_level = \"%s\"",
          flag ? val : "");
    MPI_CHECK(MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL - 1, val, &flag));
    CHECK(flag && val[0] == '/', "wdir = \"%s\"", flag ? val : "");
    MPI_Info copy;
    MPI_CHECK(MPI_Info_dup(MPI_INFO_ENV, &copy));
    int m = 0;
    MPI_CHECK(MPI_Info_get_nkeys(copy, &m));
    CHECK(m == n, "dup of MPI_INFO_ENV has %d keys, want %d", m, n);
    MPI_CHECK(MPI_Info_free(&copy));
    MPI_Info e = MPI_INFO_ENV;
    check_class(MPI_Info_free(&e), MPI_ERR_INFO, "freeing MPI_INFO_ENV");
    CHECK(MPI_Info_c2f(MPI_INFO_ENV) == (MPI_Fint)MPI_INFO_ENV, "c2f");
}

/* Threads setting and reading their own keys of one shared info object. */
static MPI_Info shared;
static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    char key[32], val[32], out[32];
    for (int i = 0; i < 200; i++) {
        snprintf(key, sizeof key, "t%d_k%d", id, i % 10);
        snprintf(val, sizeof val, "%d", i);
        MPI_CHECK(MPI_Info_set(shared, key, val));
        int flag = 0;
        MPI_CHECK(MPI_Info_get(shared, key, sizeof out - 1, out, &flag));
        CHECK(flag && strcmp(out, val) == 0, "thread %d read %s = %s", id, key, out);
        if (i % 10 == 9)
            MPI_CHECK(MPI_Info_delete(shared, key));
    }
    return NULL;
}

static void threads(void)
{
    MPI_CHECK(MPI_Info_create(&shared));
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        CHECK(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i) == 0, "pthread_create");
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int n = 0;
    MPI_CHECK(MPI_Info_get_nkeys(shared, &n));
    CHECK(n == 4 * 9, "after the threads: %d keys, want 36", n);
    MPI_CHECK(MPI_Info_free(&shared));
}

/* The keys MPI_Info_create_env sets, equal in `a` and `b`. */
static void same_env(MPI_Info a, MPI_Info b, const char *when)
{
    static const char *const keys[] = {"command", "argv", "maxprocs", "soft", "host",
                                       "arch",    "wdir", "file",     "thread_level"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char va[MPI_MAX_INFO_VAL], vb[MPI_MAX_INFO_VAL];
        int la = MPI_MAX_INFO_VAL, lb = MPI_MAX_INFO_VAL, fa = 0, fb = 0;
        MPI_CHECK(MPI_Info_get_string(a, keys[i], &la, va, &fa));
        MPI_CHECK(MPI_Info_get_string(b, keys[i], &lb, vb, &fb));
        CHECK(fa == fb && (!fa || strcmp(va, vb) == 0),
              "MPI_Info_create_env %s: key %s is \"%s\" and \"%s\"", when, keys[i],
              fa ? va : "(unset)", fb ? vb : "(unset)");
    }
}

static void expect_value(MPI_Info info, const char *key, const char *want, const char *when)
{
    char v[MPI_MAX_INFO_VAL];
    int len = MPI_MAX_INFO_VAL, flag = 0;
    MPI_CHECK(MPI_Info_get_string(info, key, &len, v, &flag));
    CHECK(flag && strcmp(v, want) == 0, "%s: %s = \"%s\", want \"%s\"", when, key,
          flag ? v : "(unset)", want);
}

int main(int argc, char **argv)
{
    /* Before MPI_Init (MPI-4.0 §11.4.1). */
    MPI_Info early, env0, env1;
    MPI_CHECK(MPI_Info_create(&early));
    MPI_CHECK(MPI_Info_set(early, "made", "before MPI_Init"));
    MPI_CHECK(MPI_Info_create_env(argc, argv, &env0));
    expect_value(env0, "argv", "first second", "create_env before MPI_Init");
    char cmd[MPI_MAX_INFO_VAL];
    int len = MPI_MAX_INFO_VAL, flag = 0;
    MPI_CHECK(MPI_Info_get_string(env0, "command", &len, cmd, &flag));
    CHECK(flag && strstr(cmd, "env_info"), "create_env: command \"%s\"", flag ? cmd : "");

    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Info later;
    MPI_CHECK(MPI_Info_create(&later));
    CHECK(later != early && later != env0, "a handle made after MPI_Init repeats one made "
          "before (%#x)", (unsigned)later);
    MPI_CHECK(MPI_Info_set(later, "made", "after MPI_Init"));
    expect_value(early, "made", "before MPI_Init", "after MPI_Init");
    MPI_CHECK(MPI_Info_free(&later));
    MPI_CHECK(MPI_Info_create_env(argc, argv, &env1));
    same_env(env0, env1, "before and after MPI_Init");
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char nprocs[16];
    snprintf(nprocs, sizeof nprocs, "%d", size);
    expect_value(env1, "maxprocs", nprocs, "create_env after MPI_Init");
    MPI_CHECK(MPI_Info_free(&env1));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    basics();
    limits();
    env();
    threads();
    MPI_CHECK(MPI_Finalize());

    /* After MPI_Finalize. */
    expect_value(early, "made", "before MPI_Init", "after MPI_Finalize");
    MPI_CHECK(MPI_Info_set(early, "made", "after MPI_Finalize"));
    expect_value(early, "made", "after MPI_Finalize", "after MPI_Finalize");
    MPI_CHECK(MPI_Info_free(&early));
    MPI_CHECK(MPI_Info_create_env(argc, argv, &env1));
    same_env(env0, env1, "before MPI_Init and after MPI_Finalize");
    MPI_CHECK(MPI_Info_free(&env1));
    MPI_CHECK(MPI_Info_free(&env0));
    return 0;
}
