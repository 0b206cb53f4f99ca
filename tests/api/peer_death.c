/*
 * peer_death — a rank is killed (SIGKILL, by itself) while a 16 MiB
 * message is on its way between ranks 0 and 1; the survivors are blocked
 * on requests involving it and must get PROUST_ERR_PEER_FAILED or
 * PROUST_ERR_CONN within 5 s, not hang.
 *
 * --mode=sender-dies:   rank 0 posts the 16 MiB send, pumps progress for
 *                       3 ms and dies; rank 1 waits in its receive.
 * --mode=receiver-dies: rank 1 posts the receive, pumps for 3 ms and dies;
 *                       rank 0 waits in its send.
 * --mode=delivered-then-dies (2 processes): rank 0 sends a small message
 *                       that rank 1 sees with iprobe (it is fully there),
 *                       then dies; once rank 1 has seen the failure, iprobe
 *                       still reports the message and a receive must get
 *                       it (data intact): a message delivered before the
 *                       failure is not lost.
 * --mode=full-ring-receiver-dies (2 processes, run with a small shm ring):
 *                       rank 0 isends 256 eager messages of 24 KiB and
 *                       waits for them all, asleep behind the full ring
 *                       (a sender facing a full ring is idle); rank 1 never
 *                       receives, sleeps 0.1 s and dies. The sends the ring
 *                       did not take must fail within 5 s of the death, the
 *                       others complete, and nothing hangs.
 * Each survivor also has a receive from the victim posted that is never
 * matched (it must fail too), and after the failure new requests to or
 * from the victim must fail at once. With 3 processes rank 2 also waits on
 * an ANY_SOURCE receive, a receive from the victim and a synchronous
 * rendezvous send to it; it reports its results to the other survivor, which checks them (the
 * survivors can still talk to each other).
 *
 * The surviving rank among 0/1 prints "survivor got <error> after X s",
 * then "survivor exiting cleanly" once proust_finalize has returned. Run
 * under proustrun --grace 10; proustrun itself exits non-zero (a rank
 * died), so the test asserts on those lines.
 */
#include <signal.h>

#include "test_util.h"

#define BIG (16u << 20)
#define TAG_BIG 0xD1E0001
#define TAG_NEVER 0xD1E0002
#define TAG_NEVER_ANY 0xD1E0003
#define TAG_REPORT 0xD1E0004
#define TAG_LATE 0xD1E0005
#define LIMIT_S 5.0

static int is_failure(int rc)
{
    return rc == PROUST_ERR_PEER_FAILED || rc == PROUST_ERR_CONN;
}

struct report {
    int32_t rc_never, rc_any, rc_send, rc_late_recv, rc_late_send;
    double elapsed;
};

/* New requests towards a failed peer must fail at once (well, quickly). */
static void late_requests(proust_session_t *s, int victim, int *rc_recv, int *rc_send)
{
    char b[16] = {0};
    proust_request_t *r;
    double t0 = tu_now();
    int rc = proust_irecv(s, b, sizeof b, victim, TAG_LATE, PROUST_TAG_MASK_FULL, &r);
    *rc_recv = rc == PROUST_OK ? proust_wait(&r, NULL) : rc;
    rc = proust_isend(s, b, sizeof b, victim, TAG_LATE, &r);
    *rc_send = rc == PROUST_OK ? proust_wait(&r, NULL) : rc;
    EXPECT(tu_now() - t0 < LIMIT_S, "requests to the failed rank took %.2f s",
           tu_now() - t0);
}

#define TAG_DELIVERED 0xD1E0006
#define TAG_ACK 0xD1E0007
#define TAG_ANNOUNCED 0xD1E0008

static int delivered_then_dies(proust_session_t *s)
{
    EXPECT(tu_size == 2, "delivered-then-dies runs with 2 processes");
    uint8_t msg[300];
    uint8_t *big = calloc(1, BIG);
    EXPECT(big != NULL, "out of memory");
    if (tu_rank == 0) {
        /* a rendezvous message announced (its RTS arrives) but whose data
         * will never be sent: receiving it after the death must fail, not
         * wait forever (synchronous: an idle receiver may pull a plain
         * one's data before the death, unexp_pull.c, which delivers it) */
        proust_request_t *rbig;
        CHECK(proust_issend(s, big, BIG, 1, TAG_ANNOUNCED, &rbig));
        tu_fill(msg, sizeof msg, TAG_DELIVERED);
        CHECK(proust_send(s, msg, sizeof msg, 1, TAG_DELIVERED));
        CHECK(proust_recv(s, NULL, 0, 1, TAG_ACK, PROUST_TAG_MASK_FULL, NULL));
        printf("rank 0: message delivered, killing myself\n");
        fflush(stdout);
        raise(SIGKILL);
        TU_FAIL("still alive after SIGKILL");
    }
    TU_PHASE("waiting for the messages to be there");
    CHECK(proust_probe(s, 0, TAG_ANNOUNCED, PROUST_TAG_MASK_FULL, NULL));
    CHECK(proust_probe(s, 0, TAG_DELIVERED, PROUST_TAG_MASK_FULL, NULL));
    proust_request_t *rnever;
    char b;
    CHECK(proust_irecv(s, &b, 1, 0, TAG_NEVER, PROUST_TAG_MASK_FULL, &rnever));
    double t0 = tu_now();
    CHECK(proust_send(s, NULL, 0, 0, TAG_ACK));
    TU_PHASE("waiting for the failure");
    int rc = proust_wait(&rnever, NULL);
    double elapsed = tu_now() - t0;
    EXPECT(is_failure(rc), "receive from the dead rank completed with %s", proust_error_name(rc));
    EXPECT(elapsed <= LIMIT_S, "the failure took %.2f s to be reported", elapsed);
    printf("survivor got %s after %.3f s\n", proust_error_name(rc), elapsed);
    TU_PHASE("receiving the message delivered before the failure");
    int flag = 0;
    proust_status_t st;
    CHECK(proust_iprobe(s, 0, TAG_DELIVERED, PROUST_TAG_MASK_FULL, &flag, &st));
    EXPECT(flag == 1 && st.size == sizeof msg,
           "iprobe after the failure: flag %d size %zu (the message had arrived)", flag, st.size);
    memset(msg, 0, sizeof msg);
    rc = proust_recv(s, msg, sizeof msg, 0, TAG_DELIVERED, PROUST_TAG_MASK_FULL, &st);
    EXPECT(rc == PROUST_OK,
           "receive of a message that arrived before its sender died (iprobe reports it) "
           "returned %s", proust_error_name(rc));
    EXPECT_STATUS(st, 0, TAG_DELIVERED, sizeof msg, sizeof msg, PROUST_OK);
    EXPECT_PATTERN(msg, sizeof msg, TAG_DELIVERED, "message delivered before the failure");
    printf("delivered message received intact\n");
    TU_PHASE("receiving the announced rendezvous message of the dead sender");
    t0 = tu_now();
    rc = proust_recv(s, big, BIG, 0, TAG_ANNOUNCED, PROUST_TAG_MASK_FULL, &st);
    elapsed = tu_now() - t0;
    EXPECT(is_failure(rc), "receive of a rendezvous whose sender died returned %s",
           proust_error_name(rc));
    EXPECT(elapsed <= LIMIT_S, "it took %.2f s", elapsed);
    printf("announced rendezvous from the dead rank: %s\n", proust_error_name(rc));
    free(big);
    proust_finalize(s);
    printf("survivor exiting cleanly\n");
    return 0;
}

static int full_ring_receiver_dies(proust_session_t *s)
{
    EXPECT(tu_size == 2, "full-ring-receiver-dies runs with 2 processes");
    enum { NF = 256, FLEN = 24576 };
    tu_barrier(s);
    if (tu_rank == 1) {
        tu_sleep_ms(100); /* no call: rank 0 fills the ring and sleeps */
        printf("rank 1: killing myself with the ring full\n");
        fflush(stdout);
        raise(SIGKILL);
        TU_FAIL("still alive after SIGKILL");
    }
    uint8_t *buf = malloc((size_t)NF * FLEN);
    EXPECT(buf != NULL, "out of memory");
    static proust_request_t *r[NF];
    static proust_status_t st[NF];
    double t0 = tu_now();
    for (int i = 0; i < NF; i++) {
        tu_fill(buf + (size_t)i * FLEN, FLEN, (uint64_t)i);
        int rc = proust_isend(s, buf + (size_t)i * FLEN, FLEN, 1, TAG_BIG + (proust_tag_t)i,
                              &r[i]);
        EXPECT(rc == PROUST_OK || is_failure(rc), "isend %d: %s", i, proust_error_name(rc));
        if (rc != PROUST_OK)
            r[i] = NULL;
    }
    TU_PHASE("sender waiting behind the full ring");
    int rc = proust_waitall(NF, r, st);
    double elapsed = tu_now() - t0;
    int ok = 0, failed = 0;
    for (int i = 0; i < NF; i++) {
        if (st[i].error == PROUST_OK)
            ok++;
        else if (is_failure(st[i].error))
            failed++;
    }
    EXPECT(is_failure(rc), "waitall of sends to a dead rank returned %s", proust_error_name(rc));
    EXPECT(failed > 0, "no send failed (%d completed)", ok);
    EXPECT(elapsed <= 0.1 + LIMIT_S, "the failure took %.2f s to be reported", elapsed);
    printf("%d sends completed, %d failed\n", ok, failed);
    printf("survivor got %s after %.3f s\n", proust_error_name(rc), elapsed);
    int lr, ls;
    late_requests(s, 1, &lr, &ls);
    EXPECT(is_failure(lr) && is_failure(ls), "late requests: %s / %s", proust_error_name(lr),
           proust_error_name(ls));
    free(buf);
    proust_finalize(s);
    printf("survivor exiting cleanly\n");
    return 0;
}

int main(int argc, char **argv)
{
    proust_session_t *s = tu_init(60);
    const char *mode = tu_arg(argc, argv, "--mode", "sender-dies");
    EXPECT(tu_size == 2 || tu_size == 3, "run with 2 or 3 processes");
    int victim;
    if (strcmp(mode, "delivered-then-dies") == 0)
        return delivered_then_dies(s);
    if (strcmp(mode, "full-ring-receiver-dies") == 0)
        return full_ring_receiver_dies(s);
    if (strcmp(mode, "sender-dies") == 0)
        victim = 0;
    else if (strcmp(mode, "receiver-dies") == 0)
        victim = 1;
    else
        TU_FAIL("unknown --mode=%s", mode);
    int partner = 1 - victim; /* the survivor of the 0/1 pair */
    uint8_t *big = malloc(BIG);
    EXPECT(big != NULL, "out of memory");
    if (tu_rank == 0)
        tu_fill(big, BIG, 42);
    else
        memset(big, 0, BIG);

    /* requests posted before anyone dies */
    proust_request_t *rbig = NULL, *rnever = NULL, *rany = NULL, *rsend = NULL;
    if (tu_rank != victim && tu_rank < 2)
        CHECK(proust_irecv(s, big + 1, 1, victim, TAG_NEVER, PROUST_TAG_MASK_FULL, &rnever));
    if (tu_rank == 2) {
        CHECK(proust_irecv(s, big, 16, victim, TAG_NEVER, PROUST_TAG_MASK_FULL, &rnever));
        CHECK(proust_irecv(s, big + 16, 16, PROUST_ANY_SOURCE, TAG_NEVER_ANY, PROUST_TAG_MASK_FULL,
                           &rany));
        /* synchronous: an idle victim may pull a plain send's data before
         * it dies (unexp_pull.c), which completes that send */
        CHECK(proust_issend(s, big + 4096, 1u << 20, victim, TAG_NEVER, &rsend));
    }
    TU_PHASE("barrier before the death");
    tu_barrier(s);
    double t0 = tu_now();
    if (tu_rank == 0)
        CHECK(proust_isend(s, big, BIG, 1, TAG_BIG, &rbig));
    else if (tu_rank == 1)
        CHECK(proust_irecv(s, big, BIG, 0, TAG_BIG, PROUST_TAG_MASK_FULL, &rbig));

    if (tu_rank == victim) {
        TU_PHASE("victim pumping progress");
        while (tu_now() - t0 < 0.003)
            CHECK(proust_progress(s));
        printf("rank %d: killing myself mid-transfer\n", tu_rank);
        fflush(stdout);
        raise(SIGKILL);
        TU_FAIL("still alive after SIGKILL");
    }

    if (tu_rank == 2) {
        TU_PHASE("rank 2 waiting on requests involving the victim");
        struct report rep;
        rep.rc_never = proust_wait(&rnever, NULL);
        rep.rc_any = proust_wait(&rany, NULL);
        rep.rc_send = proust_wait(&rsend, NULL);
        rep.elapsed = tu_now() - t0;
        int lr, ls;
        late_requests(s, victim, &lr, &ls);
        rep.rc_late_recv = lr;
        rep.rc_late_send = ls;
        printf("rank 2 got %s / %s / %s after %.3f s\n", proust_error_name(rep.rc_never),
               proust_error_name(rep.rc_any), proust_error_name(rep.rc_send), rep.elapsed);
        TU_PHASE("rank 2 reporting to the other survivor");
        CHECK(proust_send(s, &rep, sizeof rep, partner, TAG_REPORT));
        /* stay until the partner has it (our exit would fail its gate to us) */
        CHECK(proust_recv(s, NULL, 0, partner, TAG_REPORT, PROUST_TAG_MASK_FULL, NULL));
    } else {
        TU_PHASE("survivor waiting on the transfer");
        proust_status_t st;
        int rc_big = proust_wait(&rbig, &st);
        double t_big = tu_now() - t0;
        TU_PHASE("survivor waiting on the never-matched receive");
        int rc_never = proust_wait(&rnever, NULL);
        double elapsed = tu_now() - t0;
        printf("rank %d: 16 MiB %s finished with %s after %.3f s; pending receive from the "
               "victim: %s\n",
               tu_rank, tu_rank == 0 ? "send" : "receive", proust_error_name(rc_big), t_big,
               proust_error_name(rc_never));
        EXPECT(rc_big == PROUST_OK || is_failure(rc_big),
               "the interrupted transfer completed with %s", proust_error_name(rc_big));
        EXPECT(is_failure(rc_never),
               "a receive from the dead rank completed with %s, expected PROUST_ERR_PEER_FAILED "
               "or PROUST_ERR_CONN",
               proust_error_name(rc_never));
        EXPECT(elapsed <= LIMIT_S, "the failure took %.2f s to be reported (limit %.0f s)",
               elapsed, LIMIT_S);
        int first = is_failure(rc_big) ? rc_big : rc_never;
        printf("survivor got %s after %.3f s\n", proust_error_name(first), elapsed);
        int lr, ls;
        late_requests(s, victim, &lr, &ls);
        EXPECT(is_failure(lr) && is_failure(ls),
               "requests posted after the failure: receive %s, send %s", proust_error_name(lr),
               proust_error_name(ls));
        if (tu_size == 3) {
            TU_PHASE("survivor receiving rank 2's report");
            struct report rep;
            CHECK(proust_recv(s, &rep, sizeof rep, 2, TAG_REPORT, PROUST_TAG_MASK_FULL, NULL));
            EXPECT(is_failure(rep.rc_never), "rank 2: receive from the dead rank: %s",
                   proust_error_name(rep.rc_never));
            EXPECT(is_failure(rep.rc_any), "rank 2: ANY_SOURCE receive: %s",
                   proust_error_name(rep.rc_any));
            EXPECT(is_failure(rep.rc_send), "rank 2: rendezvous send to the dead rank: %s",
                   proust_error_name(rep.rc_send));
            EXPECT(is_failure(rep.rc_late_recv) && is_failure(rep.rc_late_send),
                   "rank 2: requests after the failure: %s / %s",
                   proust_error_name(rep.rc_late_recv), proust_error_name(rep.rc_late_send));
            EXPECT(rep.elapsed <= LIMIT_S, "rank 2 saw the failure after %.2f s", rep.elapsed);
            printf("rank 2 checks ok (%.3f s)\n", rep.elapsed);
            CHECK(proust_send(s, NULL, 0, 2, TAG_REPORT));
        }
    }
    TU_PHASE("finalize after a peer died");
    double tf = tu_now();
    int rc = proust_finalize(s);
    double df = tu_now() - tf;
    printf("rank %d: proust_finalize returned %s after %.3f s\n", tu_rank, proust_error_name(rc),
           df);
    EXPECT(df <= LIMIT_S, "proust_finalize took %.2f s", df);
    if (tu_rank == partner)
        printf("survivor exiting cleanly\n");
    free(big);
    return 0;
}
