/* The shm rail's flush of packets queued behind a full ring (shm.c):
 * it reports what moved (the engine's waits count only that as progress,
 * so a sender facing a full ring may sleep), and whenever it leaves data
 * queued the ring's want_space word is set, so that the receiver rings the
 * sender when it frees room -- also after the receiver cleared the word
 * for room that was not enough (a small record freed before a large one
 * that waits): a sender asleep then would never be woken. The ring lives
 * in this process's memory; the peer's segment header is a stand-in. */
#include <string.h>

#include "drivers/shm_state.h"
#include "unit.h"

#define RING (16 * 1024)

static _Alignas(64) uint8_t ring[RING];
static struct proust__shm_ring_ctl ctl;
static struct seg_header peer_header;
static struct shm_peer peers[2];
static struct shm_state st;
static proust__rail_t rail;
static int sends_done, last_status = 99;

static void on_send_done(void *engine, void *ctx, int status)
{
    (void)engine;
    (void)ctx;
    sends_done++;
    last_status = status;
}

static int send_bytes(size_t len)
{
    static uint8_t msg[RING];
    struct iovec iov = {msg, len};
    return rail.ops->send(&rail, 1, &iov, 1, NULL);
}

/* The receiver takes one record, publishes the room and, as shm_poll
 * does, clears want_space (it would ring a sleeping sender there). */
static size_t receive_one(struct proust__shm_consumer *c)
{
    const char *err = NULL;
    const struct proust__shm_rec *r = proust__shm_ring_peek(c, &err);
    EXPECT_TRUE(r != NULL);
    size_t len = r->len;
    proust__shm_ring_consume(c, r);
    proust__shm_ring_publish(c);
    atomic_exchange(&ctl.want_space, 0);
    return len;
}

int main(void)
{
    rail.ops = &proust__rail_shm;
    rail.priv = &st;
    rail.up.send_done = on_send_done;
    st.rank = 0;
    st.size = 2;
    st.ring_size = RING;
    st.peers = peers;
    for (int r = 0; r < 2; r++) {
        peers[r].local_index = r;
        peers[r].bell_fd = -1;
        peers[r].map = &peer_header; /* nobody sleeps: no doorbell */
    }
    peers[1].out = (struct proust__shm_producer){.data = ring, .ctl = &ctl, .size = RING};
    atomic_store(&peers[1].out_ready, 1); /* made: no ring of the rail's own */
    struct proust__shm_consumer c = {.data = ring, .ctl = &ctl, .size = RING};

    /* nothing queued: nothing moves */
    EXPECT_EQ(rail.ops->flush(&rail, 1), 0);

    /* 100 B, then two of 7000 B fill 14 KiB of the 16; the third waits */
    EXPECT_EQ(send_bytes(100), PROUST_OK);
    EXPECT_EQ(send_bytes(7000), PROUST_OK);
    EXPECT_EQ(send_bytes(7000), PROUST_OK);
    EXPECT_EQ(send_bytes(7000), PROUST__INPROGRESS);
    EXPECT_EQ(atomic_load(&ctl.want_space), 1);
    EXPECT_TRUE(rail.ops->busy(&rail, 1));

    /* no room yet: a flush moves nothing and says so */
    EXPECT_EQ(rail.ops->flush(&rail, 1), 0);
    EXPECT_EQ(sends_done, 0);

    /* the receiver frees the small record only (and clears the word):
     * still no room, and the sender must have asked again */
    EXPECT_EQ(receive_one(&c), 100);
    EXPECT_EQ(atomic_load(&ctl.want_space), 0);
    EXPECT_EQ(rail.ops->flush(&rail, 1), 0);
    EXPECT_EQ(sends_done, 0);
    EXPECT_EQ(atomic_load(&ctl.want_space), 1);

    /* a large record freed: the waiting packet goes, and the flush says
     * one moved */
    EXPECT_EQ(receive_one(&c), 7000);
    EXPECT_EQ(rail.ops->flush(&rail, 1), 1);
    EXPECT_EQ(sends_done, 1);
    EXPECT_EQ(last_status, PROUST_OK);
    EXPECT_TRUE(!rail.ops->busy(&rail, 1));
    EXPECT_EQ(rail.ops->flush(&rail, 1), 0);

    /* what was queued arrives intact and in order */
    EXPECT_EQ(receive_one(&c), 7000);
    EXPECT_EQ(receive_one(&c), 7000);
    const char *err = NULL;
    EXPECT_TRUE(proust__shm_ring_peek(&c, &err) == NULL);

    /* a peer that died: the queued packet fails, which is movement too */
    EXPECT_EQ(send_bytes(7000), PROUST_OK);
    EXPECT_EQ(send_bytes(7000), PROUST_OK);
    EXPECT_EQ(send_bytes(7000), PROUST__INPROGRESS);
    atomic_store(&peers[1].dead, 1);
    EXPECT_EQ(rail.ops->flush(&rail, 1), 1);
    EXPECT_EQ(sends_done, 2);
    EXPECT_EQ(last_status, PROUST_ERR_PEER_FAILED);
    printf("shm flush: ok\n");
    return 0;
}
