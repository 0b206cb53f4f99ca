/*
 * progress — behaviour of the progress engine seen from the public API
 * (2 processes; PROUST_PROGRESS decides what may be claimed). One case a
 * run: `api_progress <case>` (test_cases.h; --list, --help).
 * --claim-background makes every case judge as in thread mode (to see the
 * checks fail).
 *
 *  overlap_*        rendezvous advancing while the application computes
 *                   without calling the library:
 *                   a. overlap_send: rank 0 isends 4 MiB, then computes
 *                      1.5 s with no library call; rank 1 receives it
 *                      (blocking). With PROUST_PROGRESS=thread, the send
 *                      must have completed during the computation (a
 *                      request callback records when; one proust_test
 *                      afterwards finds it complete) and rank 1's receive
 *                      must have completed before rank 0's computation
 *                      ended (both ranks are on this host: CLOCK_MONOTONIC
 *                      times compare).
 *                   b. overlap_recv, the mirror: rank 1 irecvs 4 MiB then
 *                      computes 1.5 s; rank 0's blocking proust_send must
 *                      return before that computation ends (thread mode).
 *                   c. overlap_chain: a chain of eager messages driven by
 *                      completion callbacks, as a nonblocking collective's
 *                      schedule runs: rank 0's callback for a small receive
 *                      sends the reply that rank 1's monitored receive
 *                      waits for, while both ranks compute 1.5 s without
 *                      calling the library. With progress threads, rank 1's
 *                      callback must run during its computation (an eager
 *                      arrival must wake a sleeping progress thread
 *                      whenever a callback waits for it, not only
 *                      rendezvous control).
 *                   d. overlap_late_monitor, a callback attached late: rank
 *                      0 isends 4 MiB, sleeps 0.2 s without calling the
 *                      library (rank 1 pulls the data meanwhile, and its
 *                      FIN finds rank 0's progress thread asleep, armed for
 *                      handshakes only), then monitors the send and
 *                      computes 1 s. With progress threads the callback
 *                      must have run by the end of the computation:
 *                      attaching it must make the sleeping thread look at
 *                      what came unannounced.
 *                   Other modes: data integrity only.
 *  waiters          N threads of rank 1 blocked on the same source, each on
 *                   its own tag; rank 0 sends the tags in a shuffled order
 *                   with distinct payloads (some rendezvous); every thread
 *                   must get its own message. 200 rounds; a round slower than
 *                   1 s means a lost wake-up (run with PROUST_PEER_CHECK_MS
 *                   large so that the periodic liveness check hides none).
 *  quiet            completions leave a sleeping progress thread alone:
 *                   each rank, its progress thread asleep in the wait set,
 *                   sends 64 messages to itself per round (receives posted,
 *                   then sends, then waits), 2000 rounds. The process's
 *                   voluntary context switches (getrusage) must stay under
 *                   one a round (0 measured): a completion that kicked the
 *                   sleeping thread (an eventfd write, and a wake-up when
 *                   it slept) gave 7000 (one every 18 messages). Thread
 *                   mode only; data checked in every mode.
 *  fullring         a sender facing a full ring is idle: rank 0 isends 512
 *                   eager messages, ~100 B and ~24 KiB in turn (6 MiB; run
 *                   with a 64 KiB shm ring: room freed by a small one is
 *                   not enough for the large one that waits) and waits for
 *                   all; rank 1 sleeps 300 ms without a
 *                   library call, then receives them in bursts of 16 with
 *                   10 ms sleeps between (each burst frees room while rank
 *                   0 sleeps: every one needs the receiver's ring). Data
 *                   and statuses checked; rank 0's wait must end within
 *                   20 s (a lost wake-up waits for PROUST_PEER_CHECK_MS,
 *                   set to 60 s); outside poll mode, rank 0's process may
 *                   use at most half a cpu over its wait (it waits ~0.6 s;
 *                   a sender that counted each failed flush as progress
 *                   spun through it, a whole cpu that the receiver of an
 *                   oversubscribed node needs).
 *  shutdown         threads blocked in proust_wait on user requests that a
 *                   third thread completes just before finalize; rendezvous
 *                   isends freed with proust_request_free, still in flight
 *                   when finalize is called: finalize returns PROUST_OK on
 *                   both ranks and the receiver gets the data intact.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

#include "test_util.h"
#include "test_cases.h"

static proust_session_t *S;
static int thread_mode; /* PROUST_PROGRESS=thread: background claims hold */
static int pt_mode;     /* progress threads (not block mode's helper) */
static proust_progress_info_t info;

#define BIG (4u << 20)
#define COMPUTE_S 1.5

#define TAG_A 0x100
#define TAG_A_TIME 0x101
#define TAG_B 0x200
#define TAG_B_TIME 0x201
#define TAG_W 0x1000000ull
#define TAG_W_GO 0x2000000ull
#define TAG_SD 0x300
#define TAG_D 0x500

/* Busy computation without any library call, until `seconds` have passed. */
static double compute(double seconds)
{
    volatile uint64_t acc = 1;
    double end = tu_now() + seconds;
    for (;;) {
        for (int i = 0; i < 20000; i++)
            acc = tu_mix(acc + (uint64_t)i);
        double now = tu_now();
        if (now >= end)
            return now;
    }
}

struct done_rec {
    _Atomic int calls;
    _Atomic double when;
    int error;
};

static void on_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct done_rec *d = arg;
    d->error = st->error;
    atomic_store(&d->when, tu_now());
    atomic_fetch_add(&d->calls, 1);
}

/* ------------------------------------------------------------------ overlap */
static void test_overlap_send(void)
{
    TU_PHASE("overlap: isend then compute");
    uint8_t *buf = malloc(BIG);
    EXPECT(buf, "out of memory");
    tu_barrier(S);
    if (tu_rank == 0) {
        tu_fill(buf, BIG, TAG_A);
        struct done_rec d = {0};
        proust_request_t *r;
        double posted = tu_now();
        CHECK(proust_isend(S, buf, BIG, 1, TAG_A, &r));
        CHECK(proust_request_monitor(r, on_done, &d));
        double t0 = tu_now();
        double end = compute(COMPUTE_S); /* no library call in here */
        int calls = atomic_load(&d.calls);
        double when = atomic_load(&d.when);
        int flag = 0;
        proust_status_t st;
        if (thread_mode) {
            EXPECT(calls == 1,
                   "with background progress the 4 MiB isend did not complete while the "
                   "sender computed %.2f s without calling the library (callback ran %d times)",
                   end - t0, calls);
            EXPECT(when <= end, "callback time %.6f after the end of the computation %.6f", when,
                   end);
            CHECK(proust_test(&r, &flag, &st)); /* one call */
            EXPECT(flag == 1, "proust_test after the computation: flag %d, expected the "
                              "isend to be complete already", flag);
            printf("overlap: isend completed %.3f s into the computation\n", when - t0);
        } else {
            CHECK(proust_wait(&r, &st));
        }
        EXPECT(r == NULL, "completed request handle not cleared");
        EXPECT(st.error == PROUST_OK, "isend status %s", proust_error_name(st.error));
        double recv_done = 0;
        CHECK(proust_recv(S, &recv_done, sizeof recv_done, 1, TAG_A_TIME, PROUST_TAG_MASK_FULL,
                          NULL));
        if (thread_mode) {
            EXPECT(recv_done > posted, "rank 1's receive completed at %+.6f s, before the "
                   "isend was posted (clocks?)", recv_done - posted);
            EXPECT(recv_done < end,
                   "rank 1's receive completed at %+.3f s, after rank 0's computation ended "
                   "(%+.3f s): the rendezvous waited for the sender to call the library",
                   recv_done - t0, end - t0);
            printf("overlap: rank 1's recv completed %.3f s into rank 0's computation\n",
                   recv_done - t0);
        }
    } else {
        memset(buf, 0, BIG);
        proust_status_t st;
        CHECK(proust_recv(S, buf, BIG, 0, TAG_A, PROUST_TAG_MASK_FULL, &st));
        double done = tu_now();
        EXPECT_STATUS(st, 0, TAG_A, BIG, BIG, PROUST_OK);
        EXPECT_PATTERN(buf, BIG, TAG_A, "4 MiB sent by a computing rank");
        CHECK(proust_send(S, &done, sizeof done, 0, TAG_A_TIME));
    }
    free(buf);
}

static void test_overlap_recv(void)
{
    TU_PHASE("overlap: irecv then compute");
    uint8_t *buf = malloc(BIG);
    EXPECT(buf, "out of memory");
    if (tu_rank == 1) {
        memset(buf, 0, BIG);
        struct done_rec d = {0};
        proust_request_t *r;
        CHECK(proust_irecv(S, buf, BIG, 0, TAG_B, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &d));
        double posted = tu_now();
        tu_barrier(S); /* the receive is posted: rank 0 sends now */
        double t0 = tu_now();
        double end = compute(COMPUTE_S);
        int calls = atomic_load(&d.calls);
        double when = atomic_load(&d.when);
        proust_status_t st;
        if (thread_mode) {
            EXPECT(calls == 1,
                   "with background progress the posted 4 MiB irecv did not complete while "
                   "the receiver computed %.2f s without calling the library", end - t0);
            EXPECT(when <= end, "callback time after the end of the computation");
            int flag = 0;
            CHECK(proust_test(&r, &flag, &st));
            EXPECT(flag == 1, "proust_test after the computation: flag %d", flag);
        } else {
            CHECK(proust_wait(&r, &st));
        }
        EXPECT_STATUS(st, 0, TAG_B, BIG, BIG, PROUST_OK);
        EXPECT_PATTERN(buf, BIG, TAG_B, "4 MiB received by a computing rank");
        double send_returned = 0;
        CHECK(proust_recv(S, &send_returned, sizeof send_returned, 0, TAG_B_TIME,
                          PROUST_TAG_MASK_FULL, NULL));
        if (thread_mode) {
            EXPECT(send_returned > posted, "rank 0's send returned before the receive was "
                   "posted (clocks?)");
            EXPECT(send_returned < end,
                   "rank 0's blocking send returned at %+.3f s, after rank 1's computation "
                   "ended (%+.3f s)", send_returned - t0, end - t0);
            printf("overlap: rank 0's send returned %.3f s into rank 1's computation\n",
                   send_returned - t0);
        }
    } else {
        tu_fill(buf, BIG, TAG_B);
        tu_barrier(S);
        CHECK(proust_send(S, buf, BIG, 1, TAG_B));
        double t = tu_now();
        CHECK(proust_send(S, &t, sizeof t, 1, TAG_B_TIME));
    }
    free(buf);
}

#define TAG_C 0x400
#define TAG_C_REPLY 0x401

/* Rank 0's callback: the next "round", a reply posted from the callback. */
static int chain_out = 0x5eed;
static void chain_reply(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct done_rec *d = arg;
    proust_request_t *r;
    d->error = st->error;
    if (st->error == PROUST_OK && proust_isend(S, &chain_out, sizeof chain_out, 1, TAG_C_REPLY,
                                               &r) == PROUST_OK)
        proust_request_free(&r);
    atomic_store(&d->when, tu_now());
    atomic_fetch_add(&d->calls, 1);
}

static void test_overlap_chain(void)
{
    TU_PHASE("overlap: callback chain while both compute");
    int in = 0, out = 0xc0ffee;
    struct done_rec d = {0};
    proust_request_t *r;
    if (tu_rank == 0) {
        CHECK(proust_irecv(S, &in, sizeof in, 1, TAG_C, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, chain_reply, &d));
    } else {
        CHECK(proust_irecv(S, &in, sizeof in, 0, TAG_C_REPLY, PROUST_TAG_MASK_FULL, &r));
        CHECK(proust_request_monitor(r, on_done, &d));
    }
    /* A rendezvous first, which wakes both progress threads (RTS, FIN): a
     * progress thread asleep since the barrier was armed for everything by
     * the application thread sleeping there too; now it sleeps again while
     * the application computes, armed for what it is told it must act on. */
    uint8_t *big = malloc(BIG);
    EXPECT(big, "out of memory");
    proust_request_t *rv;
    if (tu_rank == 0)
        CHECK(proust_irecv(S, big, BIG, 1, TAG_C_REPLY + 1, PROUST_TAG_MASK_FULL, &rv));
    tu_barrier(S); /* every receive is posted, the chain's are monitored */
    if (tu_rank == 1) {
        tu_fill(big, BIG, TAG_C);
        CHECK(proust_isend(S, big, BIG, 0, TAG_C_REPLY + 1, &rv));
    }
    compute(0.2);
    double t0 = tu_now();
    if (tu_rank == 1) {
        proust_request_t *s;
        CHECK(proust_isend(S, &out, sizeof out, 0, TAG_C, &s));
        CHECK(proust_request_free(&s));
    }
    double end = compute(COMPUTE_S);
    int calls = atomic_load(&d.calls);
    double when = atomic_load(&d.when);
    if (pt_mode)
        EXPECT(calls == 1 && when <= end,
               "rank %d: the callback of the chain did not run while the rank computed %.2f s "
               "without calling the library (%d calls): an eager message a callback waited "
               "for did not wake the progress thread", tu_rank, end - t0, calls);
    proust_status_t st;
    CHECK(proust_wait(&r, &st));
    EXPECT(st.error == PROUST_OK && d.error == PROUST_OK, "chain status %s",
           proust_error_name(st.error));
    EXPECT(in == (tu_rank == 0 ? 0xc0ffee : 0x5eed), "rank %d got %#x", tu_rank, in);
    CHECK(proust_wait(&rv, NULL));
    if (tu_rank == 0)
        EXPECT_PATTERN(big, BIG, TAG_C, "rendezvous before the chain");
    free(big);
    if (pt_mode && tu_rank == 1)
        printf("overlap: callback chain completed %.3f s into the computation\n", when - t0);
    tu_barrier(S);
}

static void test_overlap_late_monitor(void)
{
    TU_PHASE("overlap: isend, sleep, then attach a callback and compute");
    uint8_t *buf = malloc(BIG);
    EXPECT(buf, "out of memory");
    tu_barrier(S);
    if (tu_rank == 0) {
        tu_fill(buf, BIG, TAG_D);
        struct done_rec d = {0};
        proust_request_t *r;
        CHECK(proust_isend(S, buf, BIG, 1, TAG_D, &r));
        struct timespec nap = {0, 200 * 1000 * 1000};
        while (nanosleep(&nap, &nap) != 0) /* no library call */
            ;
        CHECK(proust_request_monitor(r, on_done, &d));
        double t0 = tu_now();
        double end = compute(1.0);
        int calls = atomic_load(&d.calls);
        if (thread_mode)
            EXPECT(calls == 1 && atomic_load(&d.when) <= end,
                   "the callback attached to a 4 MiB isend after it was answered did not run "
                   "while the sender computed %.2f s without calling the library (%d calls): "
                   "the answer that came while the progress thread slept was never read, or "
                   "block mode's helper was not woken by the callback",
                   end - t0, calls);
        proust_status_t st;
        CHECK(proust_wait(&r, &st));
        EXPECT(st.error == PROUST_OK && d.error == PROUST_OK, "isend status %s",
               proust_error_name(st.error));
        EXPECT(atomic_load(&d.calls) == 1, "callback ran %d times", atomic_load(&d.calls));
    } else {
        memset(buf, 0, BIG);
        proust_status_t st;
        CHECK(proust_recv(S, buf, BIG, 0, TAG_D, PROUST_TAG_MASK_FULL, &st));
        EXPECT_STATUS(st, 0, TAG_D, BIG, BIG, PROUST_OK);
        EXPECT_PATTERN(buf, BIG, TAG_D, "4 MiB sent by a sleeping rank");
    }
    free(buf);
    tu_barrier(S);
}

/* ------------------------------------------------------------------ waiters */
#define NW 8
#define ROUNDS 200

static pthread_barrier_t round_start, round_end;
static _Atomic int waiter_failures;

static size_t w_size(int round, int i)
{
    if (round % 10 == 3 && i % 3 == 0)
        return 70000 + (size_t)i * 1111; /* rendezvous on every rail */
    return 8 + (size_t)((round * 37 + i * 101) % 3000);
}

static uint64_t w_seed(int round, int i)
{
    return ((uint64_t)round << 16) ^ (uint64_t)(i + 1) * 0x9e37ull;
}

static void *waiter_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    uint8_t *buf = malloc(80000);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&round_start);
        proust_tag_t tag = TAG_W | ((proust_tag_t)round << 8) | (proust_tag_t)i;
        proust_status_t st;
        memset(buf, 0, 80000);
        int rc = proust_recv(S, buf, 80000, 0, tag, PROUST_TAG_MASK_FULL, &st);
        size_t n = w_size(round, i);
        if (rc != PROUST_OK || st.tag != tag || st.size != n || st.count != n ||
            tu_first_diff(buf, n, w_seed(round, i)) >= 0) {
            fprintf(stderr,
                    "[rank 1] FAIL waiter %d round %d: rc %s tag 0x%" PRIx64 " (want 0x%" PRIx64
                    ") size %zu (want %zu) data %s\n",
                    i, round, proust_error_name(rc), (uint64_t)st.tag, (uint64_t)tag, st.size,
                    n, tu_first_diff(buf, n, w_seed(round, i)) >= 0 ? "WRONG" : "ok");
            atomic_fetch_add(&waiter_failures, 1);
        }
        pthread_barrier_wait(&round_end);
    }
    free(buf);
    return NULL;
}

static void test_waiters(void)
{
    TU_PHASE("waiters");
    tu_barrier(S);
    double worst = 0;
    if (tu_rank == 1) {
        pthread_t th[NW];
        pthread_barrier_init(&round_start, NULL, NW + 1);
        pthread_barrier_init(&round_end, NULL, NW + 1);
        for (int i = 0; i < NW; i++)
            EXPECT(pthread_create(&th[i], NULL, waiter_main, (void *)(intptr_t)i) == 0,
                   "pthread_create");
        for (int round = 0; round < ROUNDS; round++) {
            pthread_barrier_wait(&round_start);
            double t0 = tu_now();
            int r = round;
            CHECK(proust_send(S, &r, sizeof r, 0, TAG_W_GO)); /* threads are receiving */
            pthread_barrier_wait(&round_end);
            double dt = tu_now() - t0;
            if (dt > worst)
                worst = dt;
            EXPECT(atomic_load(&waiter_failures) == 0, "round %d: %d thread(s) got a wrong "
                   "message", round, atomic_load(&waiter_failures));
            EXPECT(dt < 1.0, "round %d took %.3f s: a waiter was not woken by its completion",
                   round, dt);
        }
        for (int i = 0; i < NW; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&round_start);
        pthread_barrier_destroy(&round_end);
        printf("waiters: %d rounds of %d threads on one source, slowest round %.1f ms\n", ROUNDS,
               NW, worst * 1e3);
    } else {
        uint8_t *bufs[NW];
        for (int i = 0; i < NW; i++)
            bufs[i] = malloc(80000);
        uint64_t rng = 12345;
        for (int round = 0; round < ROUNDS; round++) {
            int r = -1;
            CHECK(proust_recv(S, &r, sizeof r, 1, TAG_W_GO, PROUST_TAG_MASK_FULL, NULL));
            EXPECT(r == round, "go for round %d, expected %d", r, round);
            if (round & 1)
                tu_sleep_ms(1); /* the receivers are asleep, past their spin */
            int order[NW];
            for (int i = 0; i < NW; i++)
                order[i] = i;
            for (int i = NW - 1; i > 0; i--) { /* Fisher-Yates */
                rng = tu_mix(rng);
                int j = (int)(rng % (uint64_t)(i + 1));
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            proust_request_t *reqs[NW];
            for (int k = 0; k < NW; k++) {
                int i = order[k];
                size_t n = w_size(round, i);
                tu_fill(bufs[i], n, w_seed(round, i));
                proust_tag_t tag = TAG_W | ((proust_tag_t)round << 8) | (proust_tag_t)i;
                CHECK(proust_isend(S, bufs[i], n, 1, tag, &reqs[k]));
            }
            CHECK(proust_waitall(NW, reqs, NULL));
        }
        for (int i = 0; i < NW; i++)
            free(bufs[i]);
    }
    tu_barrier(S);
}

/* ------------------------------------------------------------------ shutdown */
#define NU 4
static proust_request_t *ureq[NU];
static _Atomic int uwait_rc[NU];
static _Atomic int uwait_returned;

static void *uwaiter_main(void *arg)
{
    int i = (int)(intptr_t)arg;
    proust_status_t st;
    memset(&st, 0, sizeof st);
    int rc = proust_wait(&ureq[i], &st);
    atomic_store(&uwait_rc[i], rc == st.error ? rc : 99);
    atomic_fetch_add(&uwait_returned, 1);
    return NULL;
}

static proust_request_t *creq[NU];
static void *completer_main(void *arg)
{
    (void)arg;
    tu_sleep_ms(200); /* the waiters are asleep by now */
    for (int i = 0; i < NU; i++) {
        int rc = proust_request_complete(creq[i], i == 2 ? PROUST_ERR_CANCELED : PROUST_OK);
        if (rc != PROUST_OK)
            TU_FAIL("proust_request_complete returned %s", proust_error_name(rc));
    }
    return NULL;
}

/* ------------------------------------------------------------------- quiet */
#define TAG_Q 0x600

static long voluntary_switches(void)
{
    struct rusage ru;
    EXPECT(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");
    return ru.ru_nvcsw;
}

static void test_quiet(void)
{
    TU_PHASE("completions do not kick a sleeping progress thread");
    enum { W = 64, QROUNDS = 2000 };
    uint64_t out[W], in[W];
    proust_request_t *r[W];
    tu_barrier(S);
    tu_sleep_ms(100); /* no call: our progress thread goes to sleep in the wait set */
    long before = voluntary_switches();
    for (int round = 0; round < QROUNDS; round++) {
        for (int i = 0; i < W; i++) {
            in[i] = 0;
            CHECK(proust_irecv(S, &in[i], sizeof in[i], tu_rank, TAG_Q + (proust_tag_t)i,
                               PROUST_TAG_MASK_FULL, &r[i]));
        }
        for (int i = 0; i < W; i++) {
            out[i] = tu_mix((uint64_t)round * W + (uint64_t)i);
            CHECK(proust_send(S, &out[i], sizeof out[i], tu_rank, TAG_Q + (proust_tag_t)i));
        }
        for (int i = 0; i < W; i++) {
            CHECK(proust_wait(&r[i], NULL));
            EXPECT(in[i] == out[i], "round %d message %d: got %#llx, sent %#llx", round, i,
                   (unsigned long long)in[i], (unsigned long long)out[i]);
        }
    }
    long switches = voluntary_switches() - before;
    printf("quiet: rank %d, %d messages to itself, %ld voluntary context switches\n", tu_rank,
           W * QROUNDS, switches);
    if (pt_mode)
        EXPECT(switches < QROUNDS,
               "%ld voluntary context switches for %d messages to itself: completions wake "
               "the progress thread asleep in the wait set",
               switches, W * QROUNDS);
    tu_barrier(S);
}

#define TAG_F 0x700

static double cpu_seconds(void)
{
    struct rusage ru;
    EXPECT(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static void test_fullring(int poll_mode)
{
    TU_PHASE("a sender facing a full ring sleeps, and is woken when room comes");
    enum { NF = 512, FLEN = 24576 + 8, BURST = 16 };
#define FULLRING_LEN(i) ((i) % 2 ? 24576 + (size_t)(i) % 7 : 100 + (size_t)(i) % 13)
    uint8_t *buf = malloc((size_t)NF * FLEN);
    EXPECT(buf != NULL, "malloc");
    tu_barrier(S);
    if (tu_rank == 0) {
        static proust_request_t *r[NF];
        for (int i = 0; i < NF; i++)
            tu_fill(buf + (size_t)i * FLEN, FULLRING_LEN(i), TAG_F + (uint64_t)i);
        double t0 = tu_now(), c0 = cpu_seconds();
        for (int i = 0; i < NF; i++)
            CHECK(proust_isend(S, buf + (size_t)i * FLEN, FULLRING_LEN(i), 1,
                               TAG_F + (proust_tag_t)i, &r[i]));
        CHECK(proust_waitall(NF, r, NULL));
        double wall = tu_now() - t0, cpu = cpu_seconds() - c0;
        printf("fullring: rank 0 waited %.3f s for %d eager sends, %.3f s of cpu\n", wall, NF,
               cpu);
        EXPECT(wall > 0.25, "the sends completed in %.3f s, before the receiver started: "
               "the ring never filled (run with PROUST_SHM_RING_SIZE=64K)", wall);
        EXPECT(wall < 20.0, "the sends took %.1f s: a sender asleep on a full ring was not "
               "woken when the receiver freed room", wall);
        if (!poll_mode)
            EXPECT(cpu < 0.5 * wall,
                   "%.3f s of cpu over a %.3f s wait on a full ring: the sender spins instead "
                   "of yielding and sleeping", cpu, wall);
    } else {
        tu_sleep_ms(300); /* no call: rank 0 fills the ring and waits */
        for (int i = 0; i < NF; i++) {
            if (i && i % BURST == 0)
                tu_sleep_ms(10);
            proust_status_t st;
            memset(buf, 0, FLEN);
            CHECK(proust_recv(S, buf, FLEN, 0, TAG_F + (proust_tag_t)i, PROUST_TAG_MASK_FULL,
                              &st));
            EXPECT_STATUS(st, 0, TAG_F + (uint64_t)i, FULLRING_LEN(i), FULLRING_LEN(i),
                          PROUST_OK);
            EXPECT_PATTERN(buf, FULLRING_LEN(i), TAG_F + (uint64_t)i,
                           "eager message %d through a full ring", i);
        }
    }
#undef FULLRING_LEN
    free(buf);
    tu_barrier(S);
}

static void test_shutdown(void)
{
    TU_PHASE("shutdown");
    tu_barrier(S);
    /* rank 0: rendezvous isends freed at once */
    enum { NS = 3 };
    uint8_t *sbuf[NS] = {0};
    size_t slen[NS] = {BIG, 300000, 100};
    if (tu_rank == 0) {
        for (int k = 0; k < NS; k++) {
            sbuf[k] = malloc(slen[k]);
            tu_fill(sbuf[k], slen[k], TAG_SD + (uint64_t)k);
            proust_request_t *r;
            CHECK(proust_isend(S, sbuf[k], slen[k], 1, TAG_SD + (proust_tag_t)k, &r));
            CHECK(proust_request_free(&r));
            EXPECT(r == NULL, "request_free left the handle");
        }
    }
    /* every rank: waiters on user requests, completed by another thread */
    pthread_t w[NU], c;
    for (int i = 0; i < NU; i++) {
        CHECK(proust_request_create(S, NULL, &ureq[i], &ureq[i]));
        creq[i] = ureq[i];
        atomic_store(&uwait_rc[i], 77);
    }
    for (int i = 0; i < NU; i++)
        EXPECT(pthread_create(&w[i], NULL, uwaiter_main, (void *)(intptr_t)i) == 0, "create");
    EXPECT(pthread_create(&c, NULL, completer_main, NULL) == 0, "create");
    if (tu_rank == 1) {
        /* receive late: rank 0 is in finalize with its sends in flight */
        tu_sleep_ms(300);
        uint8_t *rbuf = malloc(BIG);
        for (int k = 0; k < NS; k++) {
            proust_status_t st;
            memset(rbuf, 0, slen[k]);
            CHECK(proust_recv(S, rbuf, BIG, 0, TAG_SD + (proust_tag_t)k, PROUST_TAG_MASK_FULL,
                              &st));
            EXPECT_STATUS(st, 0, TAG_SD + k, slen[k], slen[k], PROUST_OK);
            EXPECT_PATTERN(rbuf, slen[k], TAG_SD + (uint64_t)k,
                           "freed isend %d received after the sender entered finalize", k);
        }
        free(rbuf);
    }
    pthread_join(c, NULL);
    for (int i = 0; i < NU; i++)
        pthread_join(w[i], NULL);
    EXPECT(atomic_load(&uwait_returned) == NU, "%d waiters returned", atomic_load(&uwait_returned));
    for (int i = 0; i < NU; i++) {
        int want = i == 2 ? PROUST_ERR_CANCELED : PROUST_OK;
        EXPECT(atomic_load(&uwait_rc[i]) == want,
               "waiter %d: proust_wait returned %d (%s), status.error must match; want %s", i,
               atomic_load(&uwait_rc[i]), proust_error_name(atomic_load(&uwait_rc[i])),
               proust_error_name(want));
        EXPECT(ureq[i] == NULL, "waiter %d: handle not cleared", i);
    }
    TU_PHASE("proust_finalize with freed sends in flight");
    double t0 = tu_now();
    int rc = proust_finalize(S);
    double dt = tu_now() - t0;
    EXPECT(rc == PROUST_OK, "proust_finalize returned %s", proust_error_name(rc));
    EXPECT(dt < 9.0, "proust_finalize took %.1f s", dt);
    alarm(0);
    for (int k = 0; k < NS; k++)
        free(sbuf[k]);
    printf("shutdown: rank %d finalize ok in %.3f s\n", tu_rank, dt);
}

static void test_fullring_case(void)
{
    test_fullring(strcmp(info.mode, "poll") == 0);
}

static const struct tu_case cases[] = {
    {"overlap_send", test_overlap_send, "a 4 MiB isend completes while its sender computes"},
    {"overlap_recv", test_overlap_recv, "a 4 MiB irecv completes while its receiver computes"},
    {"overlap_chain", test_overlap_chain, "eager replies posted by callbacks while both compute"},
    {"overlap_late_monitor", test_overlap_late_monitor,
     "a callback attached to an answered isend runs while its sender computes"},
    {"waiters", test_waiters, "8 threads blocked on one source each get their own message"},
    {"quiet", test_quiet, "completions leave a sleeping progress thread asleep"},
    {"fullring", test_fullring_case, "a sender facing a full ring sleeps, is woken for room"},
    {"shutdown", test_shutdown, "finalize with waiters just woken and freed sends in flight"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size == 2, "run with 2 processes, got %d", tu_size);
    CHECK(proust_progress_info(S, &info));
    /* background progress: progress threads, or block mode's rendezvous
     * helper (tcp, PROUST_RDV_THREAD=on, 2+ cpus) */
    pt_mode = strcmp(info.mode, "thread") == 0;
    thread_mode = pt_mode || info.rdv_thread;
    if (tu_has_arg(argc, argv, "--claim-background")) /* to see the checks fail */
        thread_mode = pt_mode = 1;
    if (tu_rank == 0)
        printf("progress: mode %s, locking %s, %d thread(s), spin %.1f us, helper: %s\n",
               info.mode, info.locking, info.threads, info.spin_us, info.rdv_thread_reason);
    c->run();
    if (c->run != test_shutdown) { /* shutdown finalizes */
        tu_barrier(S);
        tu_finalize(S);
    }
    if (tu_rank == 0 && strncmp(c->name, "overlap", 7) == 0)
        printf("%s: ok (%s)\n", c->name,
               thread_mode ? "background progress checked" : "data only");
    else if (tu_rank == 0)
        printf("%s: ok\n", c->name);
    return 0;
}
