/* The shm presence line and the co-location rule (shm_bell.c): a waiter
 * publishes the cpu it polls on and when, in its own segment header; a
 * peer is "behind" the caller on `cpu` when it was last seen polling there,
 * before the caller's wait began, not since, and is runnable (not blocked
 * in the kernel, or rung since it was seen). Segments are stand-ins in
 * this process's memory: the rule reads only the header words. */
#include <string.h>

#include "drivers/shm_state.h"
#include "unit.h"

#define NRANKS 4

static struct seg_header headers[NRANKS];
static struct shm_peer peers[NRANKS];
static int local_ranks[NRANKS] = {0, 1, 2, 3};
static struct shm_state st;
static proust__rail_t rail;

static void seen(int r, unsigned cpu, uint64_t ns)
{
    atomic_store(&headers[r].seen_cpu, cpu + 1);
    atomic_store(&headers[r].seen_ns, ns);
}

static void reset(void)
{
    memset(headers, 0, sizeof headers);
    memset(peers, 0, sizeof peers);
    for (int r = 0; r < NRANKS; r++) {
        peers[r].local_index = r;
        peers[r].map = &headers[r];
        atomic_store(&peers[r].mapped, 1);
        peers[r].bell_fd = -1;
    }
}

int main(void)
{
    /* not connected yet: no answer but no */
    rail.priv = &st;
    st.rank = 0;
    st.size = NRANKS;
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 100), 0);
    proust__shm_presence(&rail, 3, 50); /* no segment: ignored, no crash */

    st.seg = &headers[0];
    st.peers = peers;
    st.nlocal = NRANKS;
    st.local_ranks = local_ranks;
    reset();

    /* presence: cpu + 1 (0 means never seen) and the time, in our header */
    proust__shm_presence(&rail, 5, 1234);
    EXPECT_EQ(atomic_load(&headers[0].seen_cpu), 6);
    EXPECT_EQ(atomic_load(&headers[0].seen_ns), 1234);
    proust__shm_presence(&rail, 0, 1300);
    EXPECT_EQ(atomic_load(&headers[0].seen_cpu), 1);

    /* never seen: not behind */
    EXPECT_EQ(proust__shm_behind(&rail, 1, 0, 100), 0);

    /* seen on our cpu before our wait began, not since: behind */
    seen(1, 3, 100);
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 200), 1);
    /* another cpu: it runs elsewhere */
    EXPECT_EQ(proust__shm_behind(&rail, 1, 2, 200), 0);
    /* polled since our wait began: it runs */
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 100), 0);
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 50), 0);

    /* blocked in the kernel and not rung since: not runnable, not behind */
    atomic_store(&headers[1].sleeping, 1);
    atomic_store(&peers[1].rang_ns, 90);
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 200), 0);
    /* rung since it was seen: runnable again, behind */
    atomic_store(&peers[1].rang_ns, 150);
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 200), 1);
    atomic_store(&headers[1].sleeping, 0);

    /* a dead peer, a peer off this machine, ourselves, ranks out of range */
    atomic_store(&peers[1].dead, 1);
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 200), 0);
    atomic_store(&peers[1].dead, 0);
    peers[1].local_index = -1;
    EXPECT_EQ(proust__shm_behind(&rail, 1, 3, 200), 0);
    peers[1].local_index = 1;
    seen(0, 3, 100);
    EXPECT_EQ(proust__shm_behind(&rail, 0, 3, 200), 0);
    EXPECT_EQ(proust__shm_behind(&rail, NRANKS, 3, 200), 0);
    peers[2].map = NULL; /* not mapped (yet) */
    seen(2, 3, 100);
    EXPECT_EQ(proust__shm_behind(&rail, 2, 3, 200), 0);

    /* any local peer (wildcard waits): one behind is enough, ourselves
     * excluded */
    reset();
    seen(0, 3, 100);
    seen(1, 2, 100);
    seen(2, 3, 250);
    EXPECT_EQ(proust__shm_behind(&rail, -1, 3, 200), 0);
    seen(3, 3, 150);
    EXPECT_EQ(proust__shm_behind(&rail, -1, 3, 200), 1);
    EXPECT_EQ(proust__shm_behind(&rail, -1, 2, 200), 1);
    EXPECT_EQ(proust__shm_behind(&rail, -1, 7, 200), 0);

    printf("shm presence: OK\n");
    return 0;
}
