/*
 * stress_traffic.c — many-to-many traffic under MPI_THREAD_MULTIPLE, every
 * message checked.
 *
 * Each rank runs T threads; in round m, thread t sends one message to every
 * rank (itself included) and receives one from every rank. Sizes run from
 * 0 B to the -m limit, most of them small, many around a rail threshold
 * (self 8 KiB, shm get 32 KiB, shm and tcp eager ~64 KiB, offers 128 KiB,
 * shm pushes 1 MiB), at odd alignments. A message's size, tag and bytes
 * follow from (seed, source, destination, thread, round), so a receiver
 * checks every byte, the count, the tag and, through the round in the
 * bytes, the order per source.
 *
 * Patterns (-p):
 *   safe      (default) each round picks, from the seed, how its messages
 *             are sent (Isend, Issend, before or after the receives are
 *             posted) and received: Irecv from each source or ANY_SOURCE,
 *             specific tag or ANY_TAG, completed by Waitall, Waitany,
 *             Testsome or Test loops; blocking Recv by source or
 *             ANY_SOURCE; Probe, Iprobe loops, Improbe + Mrecv/Imrecv.
 *             Rounds alternate between two communicators of the thread, so
 *             a wildcard receive never takes a faster peer's next round:
 *             the program is correct MPI whatever the buffering.
 *   buffered  the pattern of issue 38: Isend to every rank, MPI_Recv with
 *             ANY_SOURCE and one tag, then Waitall, on one communicator:
 *             it relies on the library buffering messages whose receive is
 *             not posted (MPICH does; Proust does where a process that
 *             waits can pull them: shm, self).
 *
 * Run through stress_run.sh, which picks and prints the seed and turns a
 * hang into a stack dump of every thread of every rank.
 */
#include <pthread.h>
#include <stdbool.h>

#include "mpitest.h"

enum { PAT_SAFE, PAT_BUFFERED };

static int g_rank, g_size, g_threads = 2, g_rounds = 50, g_pattern = PAT_SAFE;
static uint64_t g_seed = 1;
static size_t g_max = (1u << 20) + 3;
static MPI_Comm (*g_comms)[2]; /* per thread: the communicators of even and odd rounds */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The key of the message src -> dst of thread t in round m. */
static uint64_t msg_key(int src, int dst, int t, int m)
{
    return mix(g_seed ^ mix(((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^
                            ((uint64_t)t << 24) ^ (uint64_t)m));
}

/* Sizes around the thresholds of the rails (and a little past them). */
static const size_t edges[] = {8192, 32768, 32896, 65536, 65700, 65792, 131072, 1u << 20};

static size_t msg_size(uint64_t k)
{
    uint64_t r = mix(k ^ 0x5151);
    size_t n;
    switch (r % 16) {
    case 0: case 1: n = 0; break;
    case 2: case 3: case 4: n = 1 + (r >> 8) % 64; break;
    case 5: case 6: case 7: n = 65 + (r >> 8) % 4000; break;
    case 8: case 9: case 10: case 11: {
        size_t e = edges[(r >> 8) % (sizeof edges / sizeof edges[0])];
        n = e + (size_t)((r >> 16) % 49) - 40; /* e-40 .. e+8 */
        break;
    }
    case 12: case 13: case 14: n = 4096 + (r >> 8) % (256u << 10); break;
    default: n = (r >> 8) % (g_max + 1); break;
    }
    return n > g_max ? g_max : n;
}

/* Tags: per source in some rounds, one for the whole round in others (so
 * ANY_SOURCE receives can name a tag then). */
static bool round_common_tag(int t, int m)
{
    return mix(g_seed ^ ((uint64_t)t << 40) ^ (uint64_t)m ^ 0x7777) & 1;
}

static int msg_tag(int src, int dst, int t, int m)
{
    if (g_pattern == PAT_BUFFERED)
        return t;
    if (round_common_tag(t, m))
        return (int)(mix(g_seed ^ ((uint64_t)t << 40) ^ (uint64_t)m) % 1000);
    return (int)(msg_key(src, dst, t, m) % 1000);
}

/* Byte i of message k: byte i%8 of k plus 0x3b per 8 bytes; a word at a
 * time (bytewise addition without carries; bytes of a word in memory
 * order on this little-endian machine). */
static inline uint8_t pat_byte(uint64_t k, size_t i)
{
    return (uint8_t)((k >> ((i & 7) * 8)) + (i >> 3) * 0x3b);
}

static inline uint64_t pat_word(uint64_t k, size_t j)
{
    uint64_t c = (uint64_t)(uint8_t)(j * 0x3b) * 0x0101010101010101ull;
    const uint64_t lo = 0x7f7f7f7f7f7f7f7full;
    return ((k & lo) + (c & lo)) ^ ((k ^ c) & ~lo);
}

static void fill(uint8_t *p, size_t n, uint64_t k)
{
    size_t j = 0;
    for (; 8 * j + 8 <= n; j++) {
        uint64_t v = pat_word(k, j);
        memcpy(p + 8 * j, &v, 8);
    }
    for (size_t i = 8 * j; i < n; i++)
        p[i] = pat_byte(k, i);
}

static void check_bytes(const uint8_t *p, size_t n, uint64_t k, int src, int t, int m)
{
    size_t j = 0;
    for (; 8 * j + 8 <= n; j++) {
        uint64_t v, want = pat_word(k, j);
        memcpy(&v, p + 8 * j, 8);
        if (v != want)
            break;
    }
    for (size_t i = 8 * j; i < n; i++)
        CHECK(p[i] == pat_byte(k, i),
              "thread %d round %d: byte %zu of %zu from rank %d is wrong (a message of "
              "another round, or corrupted)", t, m, i, n, src);
}

struct worker {
    int t;
    uint8_t **sbuf, **rbuf; /* per rank, g_max + 8 bytes */
    MPI_Request *sreq, *rreq;
    int *expect_round;      /* buffered pattern: next round per source */
    char *got;              /* this round: a message came from rank r */
    long messages;
};

static uint8_t *send_buf(struct worker *w, int dst, uint64_t k)
{
    return w->sbuf[dst] + (k >> 40) % 8; /* odd alignments */
}

static uint8_t *recv_buf(struct worker *w, int slot, int m)
{
    return w->rbuf[slot] + (size_t)(slot * 3 + m) % 8;
}

/* A received message: who sent it, and is it the one expected? */
static void verify(struct worker *w, int m, const MPI_Status *st, const uint8_t *buf, int want_src)
{
    int src = st->MPI_SOURCE, count = -1;
    CHECK(src >= 0 && src < g_size, "thread %d round %d: status names rank %d", w->t, m, src);
    CHECK(want_src == MPI_ANY_SOURCE || src == want_src,
          "thread %d round %d: receive from %d got rank %d's message", w->t, m, want_src, src);
    int round = m;
    if (g_pattern == PAT_BUFFERED)
        round = w->expect_round[src]++;
    else
        CHECK(!w->got[src], "thread %d round %d: two messages from rank %d", w->t, m, src);
    w->got[src] = 1;
    uint64_t k = msg_key(src, g_rank, w->t, round);
    size_t n = msg_size(k);
    MPI_CHECK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK((size_t)count == n, "thread %d round %d: %d bytes from rank %d, expected %zu", w->t,
          round, count, src, n);
    CHECK(st->MPI_TAG == msg_tag(src, g_rank, w->t, round),
          "thread %d round %d: tag %d from rank %d, expected %d", w->t, round, st->MPI_TAG, src,
          msg_tag(src, g_rank, w->t, round));
    check_bytes(buf, n, k, src, w->t, round);
    w->messages++;
}

static void post_sends(struct worker *w, int m, MPI_Comm c, bool sync_some)
{
    for (int d = 0; d < g_size; d++) {
        int dst = (g_rank + 1 + d) % g_size;
        uint64_t k = msg_key(g_rank, dst, w->t, m);
        size_t n = msg_size(k);
        uint8_t *p = send_buf(w, dst, k);
        fill(p, n, k);
        int tag = msg_tag(g_rank, dst, w->t, m);
        if (sync_some && (k & 0x300) == 0)
            MPI_CHECK(MPI_Issend(p, (int)n, MPI_BYTE, dst, tag, c, &w->sreq[d]));
        else
            MPI_CHECK(MPI_Isend(p, (int)n, MPI_BYTE, dst, tag, c, &w->sreq[d]));
    }
}

/* Complete the receives in rreq (slot i names its buffer) one way or another. */
static void complete_recvs(struct worker *w, int m, int how, int want_any)
{
    MPI_Status st[g_size];
    int idx[g_size], left = g_size;
    switch (how) {
    case 0: /* Waitall */
        MPI_CHECK(MPI_Waitall(g_size, w->rreq, st));
        for (int i = 0; i < g_size; i++)
            verify(w, m, &st[i], recv_buf(w, i, m), want_any ? MPI_ANY_SOURCE : i);
        break;
    case 1: /* Waitany */
        while (left--) {
            int i;
            MPI_CHECK(MPI_Waitany(g_size, w->rreq, &i, &st[0]));
            CHECK(i >= 0 && i < g_size, "Waitany index %d", i);
            verify(w, m, &st[0], recv_buf(w, i, m), want_any ? MPI_ANY_SOURCE : i);
        }
        break;
    case 2: /* Testsome */
        while (left > 0) {
            int out = 0;
            MPI_CHECK(MPI_Testsome(g_size, w->rreq, &out, idx, st));
            CHECK(out != MPI_UNDEFINED, "Testsome: no active request with %d left", left);
            for (int j = 0; j < out; j++)
                verify(w, m, &st[j], recv_buf(w, idx[j], m),
                       want_any ? MPI_ANY_SOURCE : idx[j]);
            left -= out;
        }
        break;
    default: /* Test each in turn */
        while (left > 0)
            for (int i = 0; i < g_size; i++) {
                int flag = 0;
                if (w->rreq[i] == MPI_REQUEST_NULL)
                    continue;
                MPI_CHECK(MPI_Test(&w->rreq[i], &flag, &st[0]));
                if (flag) {
                    verify(w, m, &st[0], recv_buf(w, i, m), want_any ? MPI_ANY_SOURCE : i);
                    left--;
                }
            }
        break;
    }
}

static void round_safe(struct worker *w, int m)
{
    MPI_Comm c = g_comms[w->t][m & 1];
    uint64_t r = mix(g_seed ^ ((uint64_t)g_rank << 48) ^ ((uint64_t)w->t << 32) ^ (uint64_t)m);
    int style = (int)(r % 9);
    bool common = round_common_tag(w->t, m);
    int ctag = msg_tag(0, g_rank, w->t, m); /* when common, every source's tag */
    bool sync_some = (r >> 8) & 1, sends_first = (r >> 9) & 1;
    int how = (int)((r >> 10) % 4);
    int cap = (int)g_max + 1;
    memset(w->got, 0, (size_t)g_size);
    if (style <= 2 && !sends_first)
        ; /* receives first */
    else
        post_sends(w, m, c, sync_some);
    MPI_Status st;
    switch (style) {
    case 0: case 1: case 2: { /* nonblocking receives */
        bool any_src = style == 1;
        bool any_tag = style == 2 || (any_src && !common);
        for (int i = 0; i < g_size; i++) {
            int src = any_src ? MPI_ANY_SOURCE : i;
            int tag = any_tag ? MPI_ANY_TAG : any_src ? ctag : msg_tag(i, g_rank, w->t, m);
            MPI_CHECK(MPI_Irecv(recv_buf(w, i, m), cap, MPI_BYTE, src, tag, c, &w->rreq[i]));
        }
        if (!sends_first)
            post_sends(w, m, c, sync_some);
        complete_recvs(w, m, how, any_src);
        break;
    }
    case 3: /* blocking, by source */
        for (int i = 0; i < g_size; i++) {
            int src = (g_rank + g_size - 1 - i) % g_size;
            MPI_CHECK(MPI_Recv(recv_buf(w, i, m), cap, MPI_BYTE, src,
                               msg_tag(src, g_rank, w->t, m), c, &st));
            verify(w, m, &st, recv_buf(w, i, m), src);
        }
        break;
    case 4: /* blocking, ANY_SOURCE */
        for (int i = 0; i < g_size; i++) {
            MPI_CHECK(MPI_Recv(recv_buf(w, i, m), cap, MPI_BYTE, MPI_ANY_SOURCE,
                               common ? ctag : MPI_ANY_TAG, c, &st));
            verify(w, m, &st, recv_buf(w, i, m), MPI_ANY_SOURCE);
        }
        break;
    case 5: /* Probe, then receive what it saw */
        for (int i = 0; i < g_size; i++) {
            int count;
            MPI_CHECK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &st));
            MPI_CHECK(MPI_Get_count(&st, MPI_BYTE, &count));
            CHECK(count >= 0 && count <= cap, "probe count %d", count);
            MPI_CHECK(MPI_Recv(recv_buf(w, i, m), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, c,
                               &st));
            verify(w, m, &st, recv_buf(w, i, m), MPI_ANY_SOURCE);
        }
        break;
    case 6: /* Iprobe loops on each source in turn */
        for (int i = 0; i < g_size; i++) {
            int flag = 0, src = (g_rank + i) % g_size;
            while (!flag)
                MPI_CHECK(MPI_Iprobe(src, MPI_ANY_TAG, c, &flag, &st));
            MPI_CHECK(MPI_Recv(recv_buf(w, i, m), cap, MPI_BYTE, src, st.MPI_TAG, c, &st));
            verify(w, m, &st, recv_buf(w, i, m), src);
        }
        break;
    default: /* matched probes: Improbe loops, then Mrecv or Imrecv */
        for (int i = 0; i < g_size; i++) {
            int flag = 0;
            MPI_Message msg;
            while (!flag)
                MPI_CHECK(MPI_Improbe(MPI_ANY_SOURCE, common ? ctag : MPI_ANY_TAG, c, &flag,
                                      &msg, &st));
            if (style == 7) {
                MPI_CHECK(MPI_Mrecv(recv_buf(w, i, m), cap, MPI_BYTE, &msg, &st));
            } else {
                MPI_Request q;
                MPI_CHECK(MPI_Imrecv(recv_buf(w, i, m), cap, MPI_BYTE, &msg, &q));
                MPI_CHECK(MPI_Wait(&q, &st));
            }
            verify(w, m, &st, recv_buf(w, i, m), MPI_ANY_SOURCE);
        }
        break;
    }
    if (how == 3) { /* sends by Testall loops */
        int done = 0;
        while (!done)
            MPI_CHECK(MPI_Testall(g_size, w->sreq, &done, MPI_STATUSES_IGNORE));
    } else {
        MPI_CHECK(MPI_Waitall(g_size, w->sreq, MPI_STATUSES_IGNORE));
    }
    for (int i = 0; i < g_size; i++)
        CHECK(w->got[i], "thread %d round %d: nothing from rank %d", w->t, m, i);
}

static void round_buffered(struct worker *w, int m)
{
    MPI_Comm c = g_comms[w->t][0];
    post_sends(w, m, c, false);
    for (int i = 0; i < g_size; i++) {
        MPI_Status st;
        MPI_CHECK(MPI_Recv(w->rbuf[0], (int)g_max + 1, MPI_BYTE, MPI_ANY_SOURCE, w->t, c, &st));
        verify(w, m, &st, w->rbuf[0], MPI_ANY_SOURCE);
    }
    MPI_CHECK(MPI_Waitall(g_size, w->sreq, MPI_STATUSES_IGNORE));
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int m = 0; m < g_rounds; m++) {
        if (g_pattern == PAT_SAFE)
            round_safe(w, m);
        else
            round_buffered(w, m);
    }
    if (g_pattern == PAT_BUFFERED)
        for (int r = 0; r < g_size; r++)
            CHECK(w->expect_round[r] == g_rounds, "thread %d: %d rounds from rank %d, not %d",
                  w->t, w->expect_round[r], r, g_rounds);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: stress_traffic [-t threads] [-r rounds] [-s seed] [-m max_bytes] "
                    "[-p safe|buffered]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        switch (argv[i - 1][1]) {
        case 't': g_threads = atoi(v); break;
        case 'r': g_rounds = atoi(v); break;
        case 's': g_seed = strtoull(v, NULL, 10); break;
        case 'm': g_max = strtoull(v, NULL, 10); break;
        case 'p':
            if (!strcmp(v, "safe"))
                g_pattern = PAT_SAFE;
            else if (!strcmp(v, "buffered"))
                g_pattern = PAT_BUFFERED;
            else
                usage();
            break;
        default: usage();
        }
    }
    if (g_threads < 1 || g_threads > 64 || g_rounds < 1 || g_max > (64u << 20))
        usage();
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    g_rounds = (g_rounds + 3) / 4; /* 5-15 times slower: a quarter of the rounds */
#endif
    int provided;
    MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    g_comms = calloc((size_t)g_threads, sizeof *g_comms);
    struct worker *ws = calloc((size_t)g_threads, sizeof *ws);
    pthread_t *th = calloc((size_t)g_threads, sizeof *th);
    CHECK(g_comms && ws && th, "out of memory");
    for (int t = 0; t < g_threads; t++) {
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[t][0]));
        MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[t][1]));
        struct worker *w = &ws[t];
        w->t = t;
        w->sbuf = calloc((size_t)g_size, sizeof *w->sbuf);
        w->rbuf = calloc((size_t)g_size, sizeof *w->rbuf);
        w->sreq = calloc((size_t)g_size, sizeof *w->sreq);
        w->rreq = calloc((size_t)g_size, sizeof *w->rreq);
        w->expect_round = calloc((size_t)g_size, sizeof *w->expect_round);
        w->got = calloc((size_t)g_size, 1);
        CHECK(w->sbuf && w->rbuf && w->sreq && w->rreq && w->expect_round && w->got,
              "out of memory");
        for (int r = 0; r < g_size; r++) {
            w->sbuf[r] = malloc(g_max + 8);
            w->rbuf[r] = malloc(g_max + 8);
            CHECK(w->sbuf[r] && w->rbuf[r], "out of memory");
        }
    }
    double t0 = MPI_Wtime();
    for (int t = 0; t < g_threads; t++)
        CHECK(pthread_create(&th[t], NULL, worker_main, &ws[t]) == 0, "pthread_create");
    long messages = 0;
    for (int t = 0; t < g_threads; t++) {
        pthread_join(th[t], NULL);
        messages += ws[t].messages;
    }
    long all = 0;
    MPI_CHECK(MPI_Reduce(&messages, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    if (g_rank == 0) {
        long want = (long)g_size * g_size * g_threads * g_rounds;
        CHECK(all == want, "%ld messages checked, %ld sent", all, want);
        printf("stress_traffic: %s, %d ranks x %d threads x %d rounds, seed %llu: %ld messages "
               "checked in %.2f s\n", g_pattern == PAT_SAFE ? "safe" : "buffered", g_size,
               g_threads, g_rounds, (unsigned long long)g_seed, all, MPI_Wtime() - t0);
    }
    for (int t = 0; t < g_threads; t++) {
        MPI_Comm_free(&g_comms[t][0]);
        MPI_Comm_free(&g_comms[t][1]);
        for (int r = 0; r < g_size; r++) {
            free(ws[t].sbuf[r]);
            free(ws[t].rbuf[r]);
        }
        free(ws[t].sbuf);
        free(ws[t].rbuf);
        free(ws[t].sreq);
        free(ws[t].rreq);
        free(ws[t].expect_round);
        free(ws[t].got);
    }
    free(ws);
    free(th);
    free(g_comms);
    MPI_Finalize();
    return 0;
}
