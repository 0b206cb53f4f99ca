/*
 * match_threads — matching under concurrency: NT threads per process, every
 * process talking to every other (and itself) at once, so arrivals from
 * several peers are matched while other threads post source-specific and
 * ANY_SOURCE receives, probe, cancel and take messages with improbe.
 *
 * Thread t of every rank owns the tags of its channels; per round it sends
 * to thread t of every rank:
 *   S  K_S messages received with source-specific receives,
 *   A  K_A messages received with ANY_SOURCE receives,
 *   W  K_W messages received with ANY_SOURCE and a tag mask (the low bits
 *      carry the sender's index),
 *   M  K_M messages taken with improbe(ANY_SOURCE) + imrecv.
 * Posting order, sends first or receives first, and sizes (eager and
 * rendezvous) vary by round. Checked: every message arrives exactly once,
 * intact, with the right status, and the messages of one sender on one
 * channel arrive in send order in the order the thread posted its receives
 * (MPI's non-overtaking rule: one thread posts all receives of a channel).
 * Thread 0 also cancels ANY_SOURCE receives no message matches, and probes
 * a tag nobody sends to, while the others work.
 *
 * Run with 2 or more processes; args: --rounds=N.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "test_util.h"

#define NT 4
#define K_S 3
#define K_A 3
#define K_W 2
#define K_M 2
#define MAXP 16
#define BIG 70000

enum { CH_S, CH_A, CH_W, CH_M, NCH };
static const int per_ch[NCH] = {K_S, K_A, K_W, K_M};
static const char *ch_name[NCH] = {"specific", "any-source", "masked", "improbe"};

struct hdr {
    int32_t rank, thread, round, ch, index, pad;
};

static proust_session_t *S;
static int rounds = 30;

#define TAG_BASE 0x3000000000000000ull
#define TAG_NEVER 0x3F00000000000000ull

/* The tag of (channel, thread, round); W's low 8 bits are the index. */
static proust_tag_t ch_tag(int ch, int t, int round)
{
    return TAG_BASE | ((uint64_t)ch << 48) | ((uint64_t)t << 40) | ((uint64_t)round << 8);
}

static size_t msg_size(int from, int to, int t, int round, int ch, int i)
{
    uint64_t h = tu_mix(((uint64_t)from << 48) ^ ((uint64_t)to << 40) ^ ((uint64_t)t << 32) ^
                        ((uint64_t)round << 16) ^ ((uint64_t)ch << 8) ^ (uint64_t)i);
    if (ch != CH_M && h % 11 == 0)
        return BIG + (size_t)(h % 4093); /* rendezvous on every rail */
    return sizeof(struct hdr) + (size_t)(h % 1500);
}

static uint64_t seed(int from, int to, int t, int round, int ch, int i)
{
    return ((uint64_t)from << 52) ^ ((uint64_t)to << 44) ^ ((uint64_t)t << 36) ^
           ((uint64_t)round << 16) ^ ((uint64_t)ch << 12) ^ (uint64_t)i;
}

struct recv_slot {
    uint8_t *buf;
    proust_request_t *req;
    proust_status_t st;
};

/* Check one received message; `next[src]` is the index this channel expects
 * next from src, in posting order. */
static void check_msg(int t, int round, int ch, const uint8_t *buf, const proust_status_t *st,
                      int *next)
{
    EXPECT(st->error == PROUST_OK, "thread %d round %d %s: status error %d", t, round,
           ch_name[ch], st->error);
    EXPECT(st->count == st->size && st->count >= sizeof(struct hdr),
           "thread %d round %d %s: count %zu size %zu", t, round, ch_name[ch], st->count,
           st->size);
    struct hdr h;
    memcpy(&h, buf, sizeof h);
    EXPECT(h.rank == st->source && h.rank >= 0 && h.rank < tu_size,
           "thread %d round %d %s: header rank %d, status source %d", t, round, ch_name[ch],
           h.rank, st->source);
    EXPECT(h.thread == t && h.round == round && h.ch == ch,
           "thread %d round %d %s: got thread %d round %d channel %d", t, round, ch_name[ch],
           h.thread, h.round, h.ch);
    EXPECT(h.index == next[h.rank],
           "thread %d round %d %s: from rank %d got message %d, expected %d (overtaken)", t,
           round, ch_name[ch], h.rank, h.index, next[h.rank]);
    next[h.rank]++;
    size_t n = msg_size(h.rank, tu_rank, t, round, ch, h.index);
    EXPECT(st->size == n, "thread %d round %d %s: size %zu expected %zu", t, round, ch_name[ch],
           st->size, n);
    if (ch == CH_W)
        EXPECT((st->tag & 0xff) == (uint64_t)h.index, "masked tag %#llx for index %d",
               (unsigned long long)st->tag, h.index);
    else
        EXPECT(st->tag == ch_tag(ch, t, round), "tag %#llx", (unsigned long long)st->tag);
    EXPECT_PATTERN(buf + sizeof h, n - sizeof h, seed(h.rank, tu_rank, t, round, ch, h.index),
                   "thread %d round %d %s from %d #%d", t, round, ch_name[ch], h.rank, h.index);
}

static void post_recvs(int t, int round, int ch, struct recv_slot *slots, int *nslots)
{
    int P = tu_size, k = per_ch[ch];
    proust_tag_t tag = ch_tag(ch, t, round);
    for (int i = 0; i < k; i++) {
        for (int r = 0; r < P; r++) {
            struct recv_slot *sl = &slots[(*nslots)++];
            sl->buf = malloc(BIG + 4096);
            EXPECT(sl->buf, "malloc");
            if (ch == CH_S)
                /* peer order rotates so queues fill in different orders */
                CHECK(proust_irecv(S, sl->buf, BIG + 4096, (r + round + t) % P, tag,
                                   PROUST_TAG_MASK_FULL, &sl->req));
            else if (ch == CH_A)
                CHECK(proust_irecv(S, sl->buf, BIG + 4096, PROUST_ANY_SOURCE, tag,
                                   PROUST_TAG_MASK_FULL, &sl->req));
            else
                CHECK(proust_irecv(S, sl->buf, BIG + 4096, PROUST_ANY_SOURCE, tag,
                                   ~(proust_tag_t)0xff, &sl->req));
        }
    }
}

static void post_sends(int t, int round, proust_request_t **sreqs, uint8_t **sbufs, int *ns)
{
    int P = tu_size;
    for (int ch = 0; ch < NCH; ch++) {
        for (int i = 0; i < per_ch[ch]; i++) {
            for (int d = 0; d < P; d++) {
                int to = (tu_rank + d + 1) % P;
                size_t n = msg_size(tu_rank, to, t, round, ch, i);
                uint8_t *b = malloc(n);
                EXPECT(b, "malloc");
                struct hdr h = {tu_rank, t, round, ch, i, 0};
                memcpy(b, &h, sizeof h);
                tu_fill(b + sizeof h, n - sizeof h, seed(tu_rank, to, t, round, ch, i));
                proust_tag_t tag = ch_tag(ch, t, round) | (ch == CH_W ? (uint64_t)i : 0);
                sbufs[*ns] = b;
                CHECK(proust_isend(S, b, n, to, tag, &sreqs[(*ns)++]));
            }
        }
    }
}

/* Take the K_M messages of every rank with improbe(ANY_SOURCE). */
static void take_probed(int t, int round)
{
    int next[MAXP] = {0};
    int want = K_M * tu_size;
    proust_tag_t tag = ch_tag(CH_M, t, round);
    uint8_t *buf = malloc(BIG + 4096);
    EXPECT(buf, "malloc");
    while (want > 0) {
        int flag = 0;
        proust_message_t *msg = NULL;
        proust_status_t pst;
        CHECK(proust_improbe(S, PROUST_ANY_SOURCE, tag, PROUST_TAG_MASK_FULL, &flag, &msg, &pst));
        if (!flag)
            continue;
        proust_request_t *r;
        proust_status_t st;
        CHECK(proust_imrecv(S, msg, buf, BIG + 4096, &r));
        CHECK(proust_wait(&r, &st));
        EXPECT(st.source == pst.source && st.size == pst.size, "improbe status %d/%zu, "
               "received %d/%zu", pst.source, pst.size, st.source, st.size);
        check_msg(t, round, CH_M, buf, &st, next);
        want--;
    }
    free(buf);
}

/* Receives nothing matches: cancelling them must succeed, whatever else
 * the ANY_SOURCE queue holds. */
static void cancel_never(void)
{
    proust_request_t *r[3];
    char b[8];
    for (int i = 0; i < 3; i++)
        CHECK(proust_irecv(S, b, sizeof b, i == 1 ? tu_size - 1 : PROUST_ANY_SOURCE,
                           TAG_NEVER | (uint64_t)i, PROUST_TAG_MASK_FULL, &r[i]));
    int flag = 1;
    CHECK(proust_iprobe(S, PROUST_ANY_SOURCE, TAG_NEVER, ~(proust_tag_t)0xff, &flag, NULL));
    EXPECT(!flag, "iprobe found a message on a tag nobody sends to");
    for (int i = 2; i >= 0; i--) {
        CHECK(proust_cancel(r[i]));
        proust_status_t st;
        proust_wait(&r[i], &st);
        EXPECT(st.error == PROUST_ERR_CANCELED, "cancelled receive: error %d", st.error);
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int P = tu_size;
    int nmax = (K_S + K_A + K_W) * P;
    struct recv_slot *slots = calloc((size_t)nmax, sizeof *slots);
    proust_request_t **sreqs = calloc((size_t)NCH * 4 * P, sizeof *sreqs);
    uint8_t **sbufs = calloc((size_t)NCH * 4 * P, sizeof *sbufs);
    EXPECT(slots && sreqs && sbufs, "calloc");
    for (int round = 0; round < rounds; round++) {
        int nslots = 0, ns = 0;
        int order = (round + t) % 4;
        int start[NCH];
        if (order == 0) /* sends first: the peers see them unexpected */
            post_sends(t, round, sreqs, sbufs, &ns);
        for (int k = 0; k < 3; k++) {
            int ch = (k + round) % 3; /* S, A, W posted in rotating order */
            start[ch] = nslots;
            post_recvs(t, round, ch, slots, &nslots);
            if (order == 1 && k == 0)
                post_sends(t, round, sreqs, sbufs, &ns);
        }
        if (order >= 2)
            post_sends(t, round, sreqs, sbufs, &ns);
        if (t == 0)
            cancel_never();
        take_probed(t, round);
        /* complete the receives in posting order, or in reverse */
        for (int k = 0; k < nslots; k++) {
            int i = order == 3 ? nslots - 1 - k : k;
            CHECK(proust_wait(&slots[i].req, &slots[i].st));
        }
        /* check each channel in posting order */
        for (int ch = 0; ch < 3; ch++) {
            int next[MAXP] = {0};
            for (int i = start[ch]; i < start[ch] + per_ch[ch] * P; i++) {
                check_msg(t, round, ch, slots[i].buf, &slots[i].st, next);
                free(slots[i].buf);
            }
            for (int r = 0; r < P; r++)
                EXPECT(next[r] == per_ch[ch], "thread %d round %d %s: %d messages from %d",
                       t, round, ch_name[ch], next[r], r);
        }
        CHECK(proust_waitall((size_t)ns, sreqs, NULL));
        for (int i = 0; i < ns; i++)
            free(sbufs[i]);
    }
    free(slots);
    free(sreqs);
    free(sbufs);
    return NULL;
}

int main(int argc, char **argv)
{
    S = tu_init(240);
    rounds = atoi(tu_arg(argc, argv, "--rounds", "30"));
    EXPECT(tu_size <= MAXP, "at most %d processes", MAXP);
    TU_PHASE("threads");
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        EXPECT(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    tu_barrier(S);
    if (tu_rank == 0)
        printf("match_threads: %d processes x %d threads, %d rounds: ok\n", tu_size, NT, rounds);
    tu_finalize(S);
    return 0;
}
