/*
 * hosts_test — proustrun's host lists and rank maps (tools/proustrun/hosts.c):
 * -H lists, hostfiles, Slurm node lists and task counts, --map-by and
 * --npernode; malformed input is an error with a message, never a crash.
 */
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "proustrun.h"
#include "unit.h"

static char last_err[2048];
void pr_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_err, sizeof last_err, fmt, ap);
    va_end(ap);
}

static void reset(struct pr_job *job)
{
    for (int h = 0; h < job->nhosts; h++)
        free(job->hosts[h].name);
    free(job->hosts);
    free(job->ranks);
    memset(job, 0, sizeof *job);
    last_err[0] = '\0';
    unsetenv("SLURM_JOB_NODELIST");
    unsetenv("SLURM_TASKS_PER_NODE");
    unsetenv("SLURM_JOB_CPUS_PER_NODE");
}

/* The hosts of ranks 0..n-1 as "h1 h1 h2 ...". */
static const char *where(struct pr_job *job)
{
    static char out[1024];
    out[0] = '\0';
    for (int i = 0; i < job->opt.nprocs; i++) {
        strcat(out, i ? " " : "");
        strcat(out, job->hosts[job->ranks[i].host].name);
    }
    return out;
}

#define EXPECT_STR(a, b)                                                                      \
    do {                                                                                      \
        if (strcmp((a), (b)) != 0) {                                                          \
            fprintf(stderr, "%s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, (a), (b));       \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static void test_host_lists(void)
{
    struct pr_job job = {0};
    job.opt.host_list = "a:2,b:2";
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_EQ(job.opt.nprocs, 4); /* no -n: one rank per slot */
    EXPECT_STR(where(&job), "a a b b");
    reset(&job);

    job.opt.host_list = "a:2,b";
    job.opt.nprocs = 5; /* more ranks than slots: round again */
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_STR(where(&job), "a a b a a");
    reset(&job);

    job.opt.host_list = "a:2,b:2,a";
    job.opt.nprocs = 5;
    job.opt.map_by = PR_MAP_NODE;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_EQ(job.nhosts, 2); /* a repeated name adds slots */
    EXPECT_STR(where(&job), "a b a b a");
    reset(&job);

    job.opt.host_list = "a:7,b:1";
    job.opt.npernode = 2;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_STR(where(&job), "a a b b");
    reset(&job);

    static const char *bad[] = {"a:", "a:x", ":2", "a,,b", "a:0", "a:99999999999", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        job.opt.host_list = bad[i];
        EXPECT_TRUE(pr_hosts_plan(&job) != 0);
        EXPECT_TRUE(last_err[0] != '\0');
        reset(&job);
    }
}

static void test_hostfile(void)
{
    char path[] = "/tmp/proust-hosts-XXXXXX";
    int fd = mkstemp(path);
    EXPECT_TRUE(fd >= 0);
    const char text[] = "# cluster\n  a slots=2 max_slots=4\nb:3 # fast\n\nc\n";
    EXPECT_EQ(write(fd, text, sizeof text - 1), (long long)(sizeof text - 1));
    close(fd);
    struct pr_job job = {0};
    job.opt.hostfile = path;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_STR(where(&job), "a a b b b c");
    reset(&job);

    static const char *bad[] = {"a slots=\n", "a slots=x\n", "a b\n", "# nothing\n", "a:-1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        fputs(bad[i], f);
        fclose(f);
        job.opt.hostfile = path;
        EXPECT_TRUE(pr_hosts_plan(&job) != 0);
        EXPECT_TRUE(last_err[0] != '\0');
        reset(&job);
    }
    unlink(path);
    job.opt.hostfile = "/nonexistent/hosts";
    EXPECT_TRUE(pr_hosts_plan(&job) != 0);
    reset(&job);
}

static void test_slurm(void)
{
    struct pr_job job = {0};
    setenv("SLURM_JOB_NODELIST", "n[08-10],gpu7,x[1,3-4]y", 1);
    setenv("SLURM_TASKS_PER_NODE", "2(x2),1,3,1(x3)", 1);
    job.opt.slurm = 1;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_EQ(job.nhosts, 7);
    EXPECT_STR(where(&job), "n08 n08 n09 n09 n10 gpu7 gpu7 gpu7 x1y x3y x4y");
    reset(&job);

    setenv("SLURM_JOB_NODELIST", "h[1-2]", 1);
    setenv("SLURM_JOB_CPUS_PER_NODE", "4(x2)", 1);
    job.opt.slurm = 1;
    job.opt.nprocs = 3;
    job.opt.map_by = PR_MAP_NODE;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_STR(where(&job), "h1 h2 h1");
    reset(&job);

    static const char *bad[] = {"h[1-", "h[2-1]", "h[a]", "h[1]x[2]", "h[1-2", "h[]", "h[1,]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("SLURM_JOB_NODELIST", bad[i], 1);
        job.opt.slurm = 1;
        if (pr_hosts_plan(&job) == 0) {
            fprintf(stderr, "node list '%s' accepted: %s\n", bad[i], where(&job));
            exit(1);
        }
        reset(&job);
    }
    /* counts that do not parse count 1 per node */
    setenv("SLURM_JOB_NODELIST", "h[1-2]", 1);
    setenv("SLURM_TASKS_PER_NODE", "2(y3)", 1);
    job.opt.slurm = 1;
    EXPECT_EQ(pr_hosts_plan(&job), 0);
    EXPECT_STR(where(&job), "h1 h2");
    reset(&job);
}

/* Random node lists and counts: an answer or an error, never a crash (ASan). */
static void test_slurm_fuzz(void)
{
    static const char alpha[] = "h[]0123,-x()";
    unsigned long long rng = 88172645463325252ull;
    struct pr_job job = {0};
    int accepted = 0;
    for (int iter = 0; iter < 20000; iter++) {
        char list[16], counts[12];
        for (int k = 0; k < 2; k++) {
            char *out = k ? counts : list;
            size_t n = (k ? sizeof counts : sizeof list) - 1;
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            size_t len = 1 + rng % n;
            for (size_t i = 0; i < len; i++) {
                rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
                out[i] = alpha[rng % (sizeof alpha - 1)];
            }
            out[len] = '\0';
        }
        setenv("SLURM_JOB_NODELIST", list, 1);
        setenv("SLURM_TASKS_PER_NODE", counts, 1);
        job.opt.slurm = 1;
        if (pr_hosts_plan(&job) == 0) {
            accepted++;
            EXPECT_TRUE(job.nhosts >= 1 && job.opt.nprocs >= 1);
        }
        reset(&job);
    }
    EXPECT_TRUE(accepted > 0);
}

int main(void)
{
    test_host_lists();
    test_hostfile();
    test_slurm();
    test_slurm_fuzz();
    printf("hosts: ok\n");
    return 0;
}
