/*
 * reuse — memory freed and allocated again at the same address, between
 * large transfers: a rail that registers memory (the ofi rail's reads, a
 * registration cache) must never move the old pages' bytes, or write into
 * them, once the address holds new ones.
 *
 * Each round, both ways (at once, or by blocking calls in turn: what the
 * ofi rail reads by get), a message of about 1 MiB (above every
 * rail's rendezvous and read thresholds; odd sizes, odd offsets) goes from
 * a buffer obtained one way, which is then released and obtained again the
 * same way (the same address, for the kernel or malloc gives it back, with
 * new pages) and refilled with another pattern before the next message;
 * the receiver does the same with its receive buffer. Every byte checked.
 *   mmap:    munmap, then mmap again at the old address (a hint)
 *   malloc:  free, then malloc of the same size (glibc: an mmap of its own)
 *   realloc: realloc to twice the size and back (moved or remapped)
 *   brk:     malloc from the heap (mmap threshold raised), free trimming the
 *            heap (brk shrinks), malloc again (brk grows: new pages)
 * One case a run (test_cases.h): mmap, malloc, realloc, brk.
 */
#include <errno.h>
#include <malloc.h>
#include <sys/mman.h>

#include "test_cases.h"
#include "test_util.h"

#define ROUNDS 12
#define SIZE ((1u << 20) + 4093) /* odd, above every threshold */
#define OFFSET 13                /* bytes in from the start of the allocation */

enum how { BY_MMAP, BY_MALLOC, BY_REALLOC, BY_BRK };
static enum how how;

static uint8_t *obtain(void *hint)
{
    size_t n = SIZE + OFFSET;
    if (how == BY_MMAP) {
        void *p = mmap(hint, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        EXPECT(p != MAP_FAILED, "mmap: %s", strerror(errno));
        return p;
    }
    uint8_t *p = malloc(n);
    EXPECT(p, "out of memory");
    return p;
}

static uint8_t *release_and_obtain(uint8_t *p, int *same)
{
    size_t n = SIZE + OFFSET;
    uint8_t *q;
    switch (how) {
    case BY_MMAP:
        EXPECT(munmap(p, n) == 0, "munmap: %s", strerror(errno));
        q = obtain(p);
        break;
    case BY_REALLOC:
        q = realloc(p, 2 * n);
        EXPECT(q, "out of memory");
        q = realloc(q, n);
        EXPECT(q, "out of memory");
        break;
    default: /* malloc, brk */
        free(p);
        q = obtain(NULL);
        break;
    }
    *same += q == p;
    return q;
}

static void rounds(proust_session_t *s, int peer)
{
    uint8_t *out = obtain(NULL), *in = obtain(NULL);
    int same_out = 0, same_in = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t mine = 1000 * (uint64_t)r + (uint64_t)tu_rank;
        uint64_t theirs = 1000 * (uint64_t)r + (uint64_t)peer;
        tu_fill(out + OFFSET, SIZE, mine);
        memset(in, 0xee, SIZE + OFFSET);
        proust_status_t st;
        if (r % 2 == 0) { /* both ways at once */
            proust_request_t *rr, *sr;
            CHECK(proust_irecv(s, in + OFFSET, SIZE, peer, 77, PROUST_TAG_MASK_FULL, &rr));
            CHECK(proust_isend(s, out + OFFSET, SIZE, peer, 77, &sr));
            CHECK(proust_wait(&rr, &st));
            CHECK(proust_wait(&sr, NULL));
        } else if (tu_rank == 0) { /* blocking sends (the ofi rail's gets) */
            CHECK(proust_send(s, out + OFFSET, SIZE, peer, 77));
            CHECK(proust_recv(s, in + OFFSET, SIZE, peer, 77, PROUST_TAG_MASK_FULL, &st));
        } else {
            CHECK(proust_recv(s, in + OFFSET, SIZE, peer, 77, PROUST_TAG_MASK_FULL, &st));
            CHECK(proust_send(s, out + OFFSET, SIZE, peer, 77));
        }
        EXPECT_STATUS(st, peer, 77, SIZE, SIZE, PROUST_OK);
        EXPECT_PATTERN(in + OFFSET, SIZE, theirs, "round %d", r);
        for (int k = 0; k < OFFSET; k++)
            EXPECT(in[k] == 0xee, "round %d: byte %d before the receive buffer was written", r,
                   k);
        /* the peer must be done with both before they go */
        tu_barrier(s);
        out = release_and_obtain(out, &same_out);
        in = release_and_obtain(in, &same_in);
    }
    if (tu_rank == 0)
        printf("reuse: %d rounds, the same address again %d times (send buffer), %d (receive "
               "buffer)\n",
               ROUNDS, same_out, same_in);
    if (how == BY_MMAP) {
        munmap(out, SIZE + OFFSET);
        munmap(in, SIZE + OFFSET);
    } else {
        free(out);
        free(in);
    }
}

static proust_session_t *S;
static int peer_rank;

static void test_mmap(void)
{
    how = BY_MMAP;
    rounds(S, peer_rank);
}

static void test_malloc(void)
{
    how = BY_MALLOC;
    rounds(S, peer_rank);
}

static void test_realloc(void)
{
    how = BY_REALLOC;
    rounds(S, peer_rank);
}

static void test_brk(void)
{
    how = BY_BRK;
    /* from the heap, and the heap's top given back at every free */
    if (mallopt(M_MMAP_THRESHOLD, 64 << 20) != 1 || mallopt(M_TRIM_THRESHOLD, 0) != 1) {
        /* a sanitizer's allocator (ASan) maps its own memory: no heap here */
        if (tu_rank == 0)
            printf("reuse brk: this allocator ignores mallopt; the rounds run on its memory\n");
    }
    rounds(S, peer_rank);
}

static const struct tu_case cases[] = {
    {"mmap", test_mmap, "munmap, then mmap at the same address, between transfers"},
    {"malloc", test_malloc, "free, then malloc of the same size, between transfers"},
    {"realloc", test_realloc, "realloc to twice the size and back, between transfers"},
    {"brk", test_brk, "heap buffers, the heap trimmed (brk shrinks) and grown again"},
};

int main(int argc, char **argv)
{
    const struct tu_case *c = tu_case_select(argc, argv, cases, TU_NCASES(cases));
    S = tu_init(60);
    EXPECT(tu_size == 2, "run with 2 processes, got %d", tu_size);
    peer_rank = 1 - tu_rank;
    c->run();
    tu_barrier(S);
    tu_finalize(S);
    if (tu_rank == 0)
        printf("reuse %s: ok\n", c->name);
    return 0;
}
