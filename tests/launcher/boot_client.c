/*
 * boot_client.c — a test client of the bootstrap interface (boot/boot.h),
 * run under proustrun by launcher_tests.sh. One mode per argument:
 *   kv          put/fence/get of every rank's values, several threads
 *   failnotice  the last rank dies during a fence; the others must see the
 *               fence fail and proust__boot_poll_failed_rank name it
 *   abort       rank 1 aborts with code 5 while the others wait in a fence
 *   fdlist      print the descriptors this process holds besides 0/1/2
 *   fdcheck     the same under proustrun, leaving out the boot socket
 *               (close-on-exec check: compare with fdlist run directly)
 *   lost        (no proustrun) the launcher connection dies: calls must
 *               return PROUST_ERR_BOOT, not hang
 *   singleton   (no proustrun) the one-process bootstrap
 * Exit status 0 means every check passed.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "proust.h"

static int failures;

#define CHECK(cond, ...)                                                          \
    do {                                                                          \
        if (!(cond)) {                                                            \
            fprintf(stderr, "CHECK FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                         \
            fprintf(stderr, "\n");                                                \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The value rank r publishes under "addr": lengths differ by rank. */
static size_t make_value(int r, char *buf, size_t cap)
{
    size_t len = (size_t)snprintf(buf, cap, "value-of-rank-%d:", r);
    size_t want = 16 + (size_t)r * 1500;
    while (len < want && len < cap)
        buf[len] = (char)('a' + (r + len) % 26), len++;
    return len;
}

struct thread_arg {
    proust__boot_t *boot;
    int id;
    int errors;
};

static void *getter(void *p)
{
    struct thread_arg *a = p;
    char want[8192], got[8192];
    for (int i = 0; i < 200; i++) {
        int r = (i * 7 + a->id) % a->boot->size;
        size_t wlen = make_value(r, want, sizeof want), glen = sizeof got;
        int rc = a->boot->ops->get(a->boot, r, "addr", got, &glen);
        if (rc != PROUST_OK || glen != wlen || memcmp(got, want, wlen) != 0)
            a->errors++;
    }
    return NULL;
}

static int mode_kv(proust__boot_t *b)
{
    int me = b->rank, n = b->size;
    char buf[8192], want[8192];
    CHECK(b->fd >= 0, "embedded bootstrap expected");
    CHECK(b->local_rank == me && b->local_size == n, "local %d/%d", b->local_rank, b->local_size);
    CHECK(b->jobid[0] != '\0', "empty jobid");
    size_t len = make_value(me, buf, sizeof buf);
    CHECK(b->ops->put(b, "addr", buf, len) == PROUST_OK, "put addr");
    CHECK(b->ops->put(b, "empty", NULL, 0) == PROUST_OK, "put empty");
    CHECK(b->ops->put(b, "tmp", "old", 3) == PROUST_OK, "put tmp");
    CHECK(b->ops->put(b, "tmp", "new!", 4) == PROUST_OK, "put tmp again");
    snprintf(buf, sizeof buf, "%s", b->jobid);
    CHECK(b->ops->put(b, "jobid", buf, strlen(buf)) == PROUST_OK, "put jobid");
    CHECK(b->ops->put(b, "", "x", 1) == PROUST_ERR_INVALID, "empty key accepted");
    CHECK(b->ops->fence(b) == PROUST_OK, "fence 1");

    for (int r = 0; r < n; r++) {
        size_t wlen = make_value(r, want, sizeof want), glen = sizeof buf;
        int rc = b->ops->get(b, r, "addr", buf, &glen);
        CHECK(rc == PROUST_OK && glen == wlen && memcmp(buf, want, wlen) == 0,
              "addr of rank %d: rc %d len %zu want %zu", r, rc, glen, wlen);
        glen = sizeof buf;
        CHECK(b->ops->get(b, r, "empty", buf, &glen) == PROUST_OK && glen == 0, "empty of %d", r);
        glen = sizeof buf;
        rc = b->ops->get(b, r, "tmp", buf, &glen);
        CHECK(rc == PROUST_OK && glen == 4 && memcmp(buf, "new!", 4) == 0, "tmp of %d", r);
        glen = sizeof buf;
        rc = b->ops->get(b, r, "jobid", buf, &glen);
        CHECK(rc == PROUST_OK && glen == strlen(b->jobid) && memcmp(buf, b->jobid, glen) == 0,
              "jobid of rank %d differs", r);
        /* Too small a buffer: NOMEM and the size needed. */
        glen = 3;
        rc = b->ops->get(b, r, "addr", buf, &glen);
        CHECK(rc == PROUST_ERR_NOMEM && glen == wlen, "small buffer: rc %d len %zu", rc, glen);
    }
    size_t glen = sizeof buf;
    CHECK(b->ops->get(b, 0, "missing", buf, &glen) == PROUST_ERR_INVALID, "missing key");
    glen = sizeof buf;
    CHECK(b->ops->get(b, n, "addr", buf, &glen) == PROUST_ERR_RANK, "rank out of range");
    CHECK(proust__boot_poll_failed_rank(b) == -1, "spurious failure notice");

    /* Several threads at once. */
    pthread_t th[4];
    struct thread_arg ta[4];
    for (int i = 0; i < 4; i++) {
        ta[i] = (struct thread_arg){b, i, 0};
        pthread_create(&th[i], NULL, getter, &ta[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(ta[i].errors == 0, "thread %d: %d bad gets", i, ta[i].errors);
    }

    /* A second round: values put after fence 1 are seen after fence 2. */
    int v = me * 7 + 1;
    CHECK(b->ops->put(b, "round2", &v, sizeof v) == PROUST_OK, "put round2");
    CHECK(b->ops->fence(b) == PROUST_OK, "fence 2");
    for (int r = 0; r < n; r++) {
        int got = -1;
        glen = sizeof got;
        int rc = b->ops->get(b, r, "round2", &got, &glen);
        CHECK(rc == PROUST_OK && glen == sizeof got && got == r * 7 + 1, "round2 of %d: %d", r,
              got);
    }
    /* Every rank's value in one exchange, then again after a new put of
     * the same key and a fence: the launcher answers the new values (it
     * keeps built replies until the next put). Fences around each put:
     * every rank has read the old values before anyone replaces them. */
    CHECK(b->ops->fence(b) == PROUST_OK, "fence after the round2 gets");
    for (int round = 1; round <= 2; round++) {
        struct proust__boot_values all;
        int rc = proust__boot_get_all(b, "round2", sizeof v, &all);
        CHECK(rc == PROUST_OK, "get_all round2 (%d): rc %d", round, rc);
        for (int r = 0; rc == PROUST_OK && r < n; r++) {
            int got = -1;
            glen = sizeof got;
            CHECK(proust__boot_value(&all, r, &got, &glen) == PROUST_OK && glen == sizeof got &&
                      got == r * 7 + round,
                  "get_all round2 (%d) of rank %d: %d, expected %d", round, r, got, r * 7 + round);
        }
        if (rc == PROUST_OK)
            proust__boot_values_free(&all);
        CHECK(b->ops->fence(b) == PROUST_OK, "fence after get_all round2 (%d)", round);
        v = me * 7 + 2;
        CHECK(b->ops->put(b, "round2", &v, sizeof v) == PROUST_OK, "put round2 again");
        CHECK(b->ops->fence(b) == PROUST_OK, "fence after round2 (%d)", round);
    }
    CHECK(b->ops->fence(b) == PROUST_OK, "fence 3");
    if (failures == 0)
        printf("rank %d: kv ok\n", me);
    return failures ? 1 : 0;
}

struct poller {
    proust__boot_t *boot;
    atomic_int dead;
    atomic_int stop;
};

/* Polls for failure notices while the main thread waits in a fence. */
static void *poller_main(void *p)
{
    struct poller *pl = p;
    while (!atomic_load(&pl->stop)) {
        int d = proust__boot_poll_failed_rank(pl->boot);
        if (d >= 0) {
            atomic_store(&pl->dead, d);
            break;
        }
        sleep_ms(5);
    }
    return NULL;
}

static int mode_failnotice(proust__boot_t *b)
{
    int victim = b->size - 1;
    CHECK(b->size >= 2, "needs 2 ranks");
    CHECK(b->ops->fence(b) == PROUST_OK, "first fence");
    if (b->rank == victim) {
        sleep_ms(300);
        fflush(stdout);
        _exit(3);
    }
    /* The victim dies while we wait in this fence: it must fail, not hang.
     * The notice reaches the poller thread, or is queued by the fence. */
    struct poller pl = {.boot = b};
    atomic_init(&pl.dead, -1);
    atomic_init(&pl.stop, 0);
    pthread_t th;
    pthread_create(&th, NULL, poller_main, &pl);
    double t0 = now_s();
    int rc = b->ops->fence(b);
    CHECK(rc == PROUST_ERR_PEER_FAILED, "fence with a dead rank returned %d", rc);
    int dead = -1;
    while (dead < 0 && now_s() - t0 < 5.0) {
        dead = atomic_load(&pl.dead);
        if (dead < 0)
            sleep_ms(10);
    }
    atomic_store(&pl.stop, 1);
    pthread_join(th, NULL);
    CHECK(dead == victim, "poll_failed_rank returned %d, expected %d", dead, victim);
    CHECK(now_s() - t0 < 3.0, "notice took %.2f s", now_s() - t0);
    CHECK(proust__boot_poll_failed_rank(b) == -1, "second notice for one death");
    /* Later fences fail at once too. */
    CHECK(b->ops->fence(b) == PROUST_ERR_PEER_FAILED, "fence after the failure");
    if (failures == 0)
        printf("rank %d saw rank %d fail\n", b->rank, dead);
    return failures ? 1 : 0;
}

static int mode_abort(proust__boot_t *b)
{
    if (b->rank == 1)
        b->ops->abort(b, 5, "test abort reason");
    b->ops->fence(b); /* never completes: rank 1 is gone */
    sleep_ms(10000);
    return 1;
}

static int mode_fdlist(proust__boot_t *b)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 1;
    int dfd = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd <= 2 || fd == dfd || (b && fd == b->fd))
            continue;
        printf("%d\n", fd);
    }
    closedir(d);
    return 0;
}

static int mode_lost(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) { /* a fake launcher that reads one request and dies */
        close(sv[1]);
        char tmp[64];
        ssize_t r = read(sv[0], tmp, sizeof tmp);
        (void)r;
        _exit(0);
    }
    close(sv[0]);
    char fdtext[16];
    snprintf(fdtext, sizeof fdtext, "%d", sv[1]);
    setenv("PROUST_RANK", "0", 1);
    setenv("PROUST_SIZE", "2", 1);
    setenv("PROUST_BOOT_FD", fdtext, 1);
    proust__boot_t b;
    CHECK(proust__boot_open(&b) == PROUST_OK, "open");
    CHECK(b.rank == 0 && b.size == 2, "rank/size");
    double t0 = now_s();
    int rc = b.ops->fence(&b);
    CHECK(rc == PROUST_ERR_BOOT, "fence with a dead launcher returned %d", rc);
    char buf[16];
    size_t len = sizeof buf;
    rc = b.ops->get(&b, 1, "k", buf, &len);
    CHECK(rc == PROUST_ERR_BOOT, "get with a dead launcher returned %d", rc);
    rc = b.ops->put(&b, "k", "v", 1);
    CHECK(rc == PROUST_ERR_BOOT, "put with a dead launcher returned %d", rc);
    CHECK(proust__boot_poll_failed_rank(&b) == -1, "poll");
    CHECK(now_s() - t0 < 2.0, "took %.2f s", now_s() - t0);
    proust__boot_close(&b);
    waitpid(pid, NULL, 0);
    if (failures == 0)
        printf("lost ok\n");
    return failures ? 1 : 0;
}

static int mode_singleton(void)
{
    const char *vars[] = {"PROUST_RANK", "PROUST_SIZE", "PROUST_BOOT_FD", "PROUST_JOBID",
                          "PROUST_LOCAL_RANK", "PROUST_LOCAL_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
    proust__boot_t b;
    CHECK(proust__boot_open(&b) == PROUST_OK, "open");
    CHECK(strcmp(b.ops->name, "singleton") == 0, "name %s", b.ops->name);
    CHECK(b.rank == 0 && b.size == 1 && b.fd == -1 && b.jobid[0], "rank/size/jobid");
    CHECK(b.ops->put(&b, "k", "v1", 2) == PROUST_OK, "put");
    CHECK(b.ops->put(&b, "k", "v22", 3) == PROUST_OK, "put again");
    CHECK(b.ops->fence(&b) == PROUST_OK, "fence");
    char buf[16];
    size_t len = sizeof buf;
    CHECK(b.ops->get(&b, 0, "k", buf, &len) == PROUST_OK && len == 3 && !memcmp(buf, "v22", 3),
          "get");
    len = 1;
    CHECK(b.ops->get(&b, 0, "k", buf, &len) == PROUST_ERR_NOMEM && len == 3, "small buffer");
    len = sizeof buf;
    CHECK(b.ops->get(&b, 0, "nope", buf, &len) == PROUST_ERR_INVALID, "missing");
    CHECK(proust__boot_poll_failed_rank(&b) == -1, "poll");
    proust__boot_close(&b);
    if (failures == 0)
        printf("singleton ok\n");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kv";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "lost") == 0)
        return mode_lost();
    if (strcmp(mode, "singleton") == 0)
        return mode_singleton();
    if (strcmp(mode, "fdlist") == 0)
        return mode_fdlist(NULL);
    proust__boot_t b;
    int rc = proust__boot_open(&b);
    if (rc != PROUST_OK) {
        fprintf(stderr, "boot_open: %s\n", proust_strerror(rc));
        return 1;
    }
    if (strcmp(mode, "kv") == 0)
        rc = mode_kv(&b);
    else if (strcmp(mode, "failnotice") == 0)
        rc = mode_failnotice(&b);
    else if (strcmp(mode, "abort") == 0)
        rc = mode_abort(&b);
    else if (strcmp(mode, "fdcheck") == 0) {
        CHECK(strcmp(b.ops->name, "proustrun") == 0, "not started by proustrun");
        rc = failures ? 1 : mode_fdlist(&b);
    }
    else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rc = 2;
    }
    proust__boot_close(&b);
    return rc;
}
