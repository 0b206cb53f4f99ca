/*
 * threads — 4 threads per process send and receive at the same time
 * (MPI_THREAD_MULTIPLE semantics).
 *
 *  own tags:  thread t exchanges K messages with thread t of the peer on
 *             its own tag; per-thread order and every payload checked.
 *             The threads complete their requests differently (waitall,
 *             a test loop, waitany, a request callback + wait) and one
 *             uses synchronous sends.
 *  shared:    every thread uses the same tag and ANY_SOURCE receives: each
 *             message must arrive exactly once, intact, and the messages a
 *             thread gets from one sending thread come in send order.
 *
 * One process: the threads talk to their own rank. One case a run:
 * `api_threads <case>` (test_cases.h; --list, --help): own_tags, shared_tag.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"
#include "test_cases.h"

#define NT 4
#define K 300
#define TAG_OWN 0x7000000000000000ull
#define TAG_SHARED 0x7100000000000000ull
#define MAXLEN 100000

struct hdr {
    int32_t rank, thread, index, pad;
};

static proust_session_t *S;
static int peer;
static _Atomic unsigned char seen[NT][K];

static size_t msg_size(int t, int i)
{
    if (i % 16 == 7)
        return MAXLEN - (size_t)t;
    return sizeof(struct hdr) + (size_t)((i * 29 + t * 5) % 2000);
}

static uint64_t seed(int rank, int t, int i, int shared)
{
    return ((uint64_t)shared << 60) ^ ((uint64_t)rank << 40) ^ ((uint64_t)t << 20) ^ (uint64_t)i;
}

static void make(uint8_t *buf, size_t n, int t, int i, int shared)
{
    struct hdr h = {tu_rank, t, i, 0};
    memcpy(buf, &h, sizeof h);
    tu_fill(buf + sizeof h, n - sizeof h, seed(tu_rank, t, i, shared));
}

struct cb_state {
    _Atomic int calls;
    proust_status_t st;
};

static void on_done(proust_request_t *req, const proust_status_t *st, void *arg)
{
    (void)req;
    struct cb_state *c = arg;
    c->st = *st;
    atomic_fetch_add(&c->calls, 1);
}

static void *own_tags(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *sbuf = malloc(MAXLEN), *rbuf = malloc(MAXLEN);
    EXPECT(sbuf && rbuf, "out of memory");
    proust_tag_t tag = TAG_OWN | (proust_tag_t)t;
    for (int i = 0; i < K; i++) {
        size_t n = msg_size(t, i);
        make(sbuf, n, t, i, 0);
        proust_request_t *r[2];
        proust_status_t st[2];
        CHECK(proust_irecv(S, rbuf, MAXLEN, peer, tag, PROUST_TAG_MASK_FULL, &r[0]));
        if (t == 2 && i % 5 == 0)
            CHECK(proust_issend(S, sbuf, n, peer, tag, &r[1]));
        else
            CHECK(proust_isend(S, sbuf, n, peer, tag, &r[1]));
        struct cb_state cb = {0};
        switch (t % 4) {
        case 0:
            CHECK(proust_waitall(2, r, st));
            break;
        case 1:
            for (int k = 0; k < 2; k++) {
                int flag = 0;
                while (!flag)
                    CHECK(proust_test(&r[k], &flag, &st[k]));
            }
            break;
        case 2:
            for (int k = 0; k < 2; k++) {
                size_t idx;
                proust_status_t x;
                CHECK(proust_waitany(2, r, &idx, &x));
                EXPECT(idx < 2, "waitany index %zu", idx);
                st[idx] = x;
            }
            break;
        default:
            CHECK(proust_request_monitor(r[0], on_done, &cb));
            CHECK(proust_waitall(2, r, st));
            EXPECT(atomic_load(&cb.calls) == 1, "thread %d message %d: callback ran %d times",
                   t, i, atomic_load(&cb.calls));
            EXPECT(cb.st.size == n && cb.st.source == peer,
                   "callback status: size %zu source %d, expected %zu from %d", cb.st.size,
                   cb.st.source, n, peer);
            break;
        }
        EXPECT_STATUS(st[0], peer, tag, n, n, PROUST_OK);
        struct hdr h;
        memcpy(&h, rbuf, sizeof h);
        EXPECT(h.rank == peer && h.thread == t && h.index == i,
               "thread %d expected message %d of thread %d of rank %d, got message %d of "
               "thread %d of rank %d",
               t, i, t, peer, h.index, h.thread, h.rank);
        EXPECT_PATTERN(rbuf + sizeof h, n - sizeof h, seed(peer, t, i, 0), "thread %d message %d",
                       t, i);
        EXPECT(st[1].error == PROUST_OK, "send %d of thread %d: %s", i, t,
               proust_error_name(st[1].error));
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

static void *shared_tag(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint8_t *sbuf = malloc(MAXLEN), *rbuf = malloc(MAXLEN);
    int last[NT];
    for (int k = 0; k < NT; k++)
        last[k] = -1;
    EXPECT(sbuf && rbuf, "out of memory");
    for (int i = 0; i < K; i++) {
        size_t n = msg_size(t, i);
        make(sbuf, n, t, i, 1);
        proust_request_t *r[2];
        proust_status_t st[2];
        CHECK(proust_irecv(S, rbuf, MAXLEN, PROUST_ANY_SOURCE, TAG_SHARED, PROUST_TAG_MASK_FULL,
                           &r[0]));
        CHECK(proust_isend(S, sbuf, n, peer, TAG_SHARED, &r[1]));
        CHECK(proust_waitall(2, r, st));
        struct hdr h;
        EXPECT(st[0].size >= sizeof h, "short message (%zu bytes)", st[0].size);
        memcpy(&h, rbuf, sizeof h);
        EXPECT(h.rank == peer && h.thread >= 0 && h.thread < NT && h.index >= 0 && h.index < K,
               "thread %d: garbage header rank %d thread %d index %d", t, h.rank, h.thread,
               h.index);
        size_t want = msg_size(h.thread, h.index);
        EXPECT_STATUS(st[0], peer, TAG_SHARED, want, want, PROUST_OK);
        EXPECT_PATTERN(rbuf + sizeof h, want - sizeof h, seed(peer, h.thread, h.index, 1),
                       "message %d of thread %d", h.index, h.thread);
        unsigned char before = atomic_fetch_add(&seen[h.thread][h.index], 1);
        EXPECT(before == 0, "message %d of thread %d received twice", h.index, h.thread);
        EXPECT(h.index > last[h.thread],
               "thread %d got message %d of sending thread %d after message %d (overtaking)", t,
               h.index, h.thread, last[h.thread]);
        last[h.thread] = h.index;
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

static void run(void *(*fn)(void *), const char *name)
{
    TU_PHASE(name);
    tu_barrier(S);
    pthread_t th[NT];
    double t0 = tu_now();
    for (int t = 0; t < NT; t++)
        EXPECT(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    tu_barrier(S);
    if (tu_rank == 0)
        printf("threads %s: %d threads x %d messages each way ok (%.2f s)\n", name, NT, K,
               tu_now() - t0);
}

/* ---------------------------------------------------------------- cases */
static void test_own_tags(void)
{
    run(own_tags, "own tags");
}

static void test_shared_tag(void)
{
    run(shared_tag, "shared tag, ANY_SOURCE");
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < K; i++)
            EXPECT(atomic_load(&seen[t][i]) == 1, "message %d of thread %d received %d times", i,
                   t, atomic_load(&seen[t][i]));
}

static const struct tu_case cases[] = {
    {"own_tags", test_own_tags,
     "4 threads, a tag each: order and data; waitall, test, waitany, callback"},
    {"shared_tag", test_shared_tag,
     "4 threads, one tag, ANY_SOURCE: each message once, in order per sending thread"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size <= 2, "run with 1 or 2 processes, got %d", tu_size);
    peer = tu_size == 1 ? 0 : 1 - tu_rank;
    c->run();
    tu_finalize(S);
    if (tu_rank == 0)
        printf("threads %s: ok\n", c->name);
    return 0;
}
