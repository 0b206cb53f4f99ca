/* proust__migrate_away: the calling thread leaves the cpu it names for
 * another one it may use, and its affinity mask is the same afterwards;
 * it refuses (false, nothing changed) a cpu outside the mask, a negative
 * one, and a mask of one cpu. */
#include <sched.h>
#include <string.h>

#include "progress/progress.h"
#include "unit.h"

static int affinity_equal(const cpu_set_t *a, const cpu_set_t *b)
{
    return CPU_EQUAL(a, b);
}

int main(void)
{
    cpu_set_t before, after;
    EXPECT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    EXPECT_TRUE(!proust__migrate_away(-1));
    EXPECT_TRUE(!proust__migrate_away(CPU_SETSIZE));

    if (sched_setaffinity(0, sizeof before, &before) != 0) {
        /* the system refuses affinity changes (seccomp): so must we */
        EXPECT_TRUE(!proust__migrate_away(proust__current_cpu()));
        printf("affinity changes refused here: migration refused too\n");
        return 0;
    }
    if (CPU_COUNT(&before) < 2) {
        /* one cpu allowed: nowhere to go, and the mask stays */
        EXPECT_TRUE(!proust__migrate_away(proust__current_cpu()));
        EXPECT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
        EXPECT_TRUE(affinity_equal(&before, &after));
        printf("one cpu allowed: migration refused, as it should\n");
        return 0;
    }

    /* the kernel may put us back once the mask is restored, though rarely
     * within microseconds: some of 50 tries must see another cpu */
    bool moved = false;
    for (int round = 0; round < 50 && !moved; round++) {
        int cpu = proust__current_cpu();
        EXPECT_TRUE(cpu >= 0);
        EXPECT_TRUE(proust__migrate_away(cpu));
        moved = proust__current_cpu() != cpu;
        EXPECT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
        EXPECT_TRUE(affinity_equal(&before, &after));
    }
    EXPECT_TRUE(moved);

    /* a cpu we may not use: refused, mask unchanged */
    int outside = -1;
    for (int c = 0; c < CPU_SETSIZE && outside < 0; c++)
        if (!CPU_ISSET(c, &before))
            outside = c;
    if (outside >= 0) {
        EXPECT_TRUE(!proust__migrate_away(outside));
        EXPECT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
        EXPECT_TRUE(affinity_equal(&before, &after));
    }

    /* restricted to one cpu by the user: refused, that mask kept */
    cpu_set_t one;
    CPU_ZERO(&one);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &before))
            first = c;
    CPU_SET(first, &one);
    EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_TRUE(!proust__migrate_away(first));
    EXPECT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
    EXPECT_TRUE(affinity_equal(&one, &after));
    EXPECT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
    printf("migration off the current cpu works and keeps the mask\n");
    return 0;
}
