/* The wait boost (boost.c): a waiter that sleeps while its own process
 * loads every cpu takes a 100 us slice and, where permitted, a nice 10
 * lower; the end of the wait gives back exactly what the thread had.
 * Threads with another policy are left alone; PROUST_WAIT_BOOST=off does
 * nothing. Checked on this thread through sched_getattr / getpriority. */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "progress/progress.h"
#include "unit.h"

struct attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t prio;
    uint64_t runtime, deadline, period;
};

static struct attr now(void)
{
    struct attr a;
    memset(&a, 0, sizeof a);
    EXPECT_EQ(syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof a, 0), 0);
    return a;
}

static int my_nice(void)
{
    errno = 0;
    int n = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    EXPECT_EQ(errno, 0);
    return n;
}

static void set_nice(int n)
{
    EXPECT_EQ(setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), n), 0);
}

static struct proust__progress p;

int main(void)
{
    int mode = -1;
    EXPECT_EQ(proust__boost_parse("auto", &mode), PROUST_OK);
    EXPECT_EQ(mode, PROUST__BOOST_AUTO);
    EXPECT_EQ(proust__boost_parse("slice", &mode), PROUST_OK);
    EXPECT_EQ(mode, PROUST__BOOST_SLICE);
    EXPECT_EQ(proust__boost_parse("off", &mode), PROUST_OK);
    EXPECT_EQ(mode, PROUST__BOOST_OFF);
    EXPECT_EQ(proust__boost_parse("on", &mode), PROUST_ERR_INVALID);

    /* the expectations below start from nice 0: a run under `nice` goes
     * back to it where permitted, else there is nothing to compare with */
    if (my_nice() != 0 && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 0) != 0) {
        printf("skipped: started at nice %d and may not go back to 0\n", my_nice());
        return 77;
    }

    /* what this kernel and these rights give */
    const char *probe = proust__boost_probe(PROUST__BOOST_AUTO);
    printf("boost here: %s\n", probe);
    bool slice = strstr(probe, "100 us slice") != NULL;
    bool lowers = strstr(probe, "nice lowered") != NULL;
    /* (root without CAP_SYS_NICE, e.g. in a container, may not lower nice;
     * a seccomp filter may refuse sched_setattr: then nothing changes) */
    if (strstr(probe, "unavailable")) {
        p.boost_mode = PROUST__BOOST_AUTO;
        struct proust__waiter w = {0};
        proust__boost_begin(&p, &w);
        EXPECT_TRUE(!w.boosted);
        EXPECT_EQ(my_nice(), 0);
        printf("ok (nothing to boost with here)\n");
        return 0;
    }
    uint64_t base_runtime = now().runtime;
    EXPECT_EQ(my_nice(), 0);
    EXPECT_EQ(now().policy, SCHED_OTHER);

    /* auto: nice -10 (where permitted) and the short slice, then back */
    p.boost_mode = PROUST__BOOST_AUTO;
    struct proust__waiter w = {0};
    proust__boost_begin(&p, &w);
    EXPECT_TRUE(w.boosted);
    EXPECT_EQ(my_nice(), lowers ? -10 : 0);
    if (slice)
        EXPECT_EQ(now().runtime, 100000);
    proust__boost_begin(&p, &w); /* once per wait: no deeper */
    EXPECT_EQ(my_nice(), lowers ? -10 : 0);
    proust__boost_end(&w);
    EXPECT_TRUE(!w.boosted);
    EXPECT_EQ(my_nice(), 0);
    EXPECT_EQ(now().policy, SCHED_OTHER);
    EXPECT_EQ(now().runtime, base_runtime);

    /* relative to what the thread had, and clamped at -20 */
    set_nice(5);
    proust__boost_begin(&p, &w);
    EXPECT_EQ(my_nice(), lowers ? -5 : 5);
    proust__boost_end(&w);
    EXPECT_EQ(my_nice(), 5);
    if (lowers) {
        set_nice(-15);
        proust__boost_begin(&p, &w);
        EXPECT_EQ(my_nice(), -20);
        proust__boost_end(&w);
        EXPECT_EQ(my_nice(), -15);
        set_nice(0);
    }

    /* slice: the slice only */
    if (my_nice() == 0) {
        p.boost_mode = PROUST__BOOST_SLICE;
        proust__boost_begin(&p, &w);
        EXPECT_TRUE(w.boosted);
        EXPECT_EQ(my_nice(), 0);
        if (slice)
            EXPECT_EQ(now().runtime, 100000);
        proust__boost_end(&w);
        EXPECT_EQ(now().runtime, base_runtime);
    }

    /* off: nothing */
    p.boost_mode = PROUST__BOOST_OFF;
    proust__boost_begin(&p, &w);
    EXPECT_TRUE(!w.boosted);
    EXPECT_EQ(now().runtime, base_runtime);

    /* a policy the user chose is left alone */
    p.boost_mode = PROUST__BOOST_AUTO;
    struct sched_param sp = {0};
    EXPECT_EQ(sched_setscheduler(0, SCHED_BATCH, &sp), 0);
    proust__boost_begin(&p, &w);
    EXPECT_TRUE(!w.boosted);
    EXPECT_EQ(now().policy, SCHED_BATCH);
    EXPECT_TRUE(strstr(proust__boost_probe(PROUST__BOOST_AUTO), "not SCHED_OTHER") != NULL);
    EXPECT_EQ(now().policy, SCHED_BATCH);
    EXPECT_EQ(sched_setscheduler(0, SCHED_OTHER, &sp), 0);

    EXPECT_TRUE(strstr(proust__boost_probe(PROUST__BOOST_OFF), "off") != NULL);
    printf("ok\n");
    return 0;
}
