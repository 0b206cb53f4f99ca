/*
 * shm_resident — the shm rail's memory: small at init, rings given pages
 * on first use (drivers/shm.c), and every page of a ring there before a
 * record is written to it (a page left to the first send that reaches it
 * costs that send a page fault, ~5 us on a VM, hundreds of them per ring).
 *
 * Every process makes its own segment: a head (header, ready words, claim
 * words) with its pages from init, then one ring slot per local peer, a
 * hole of the file until that peer first sends to us. A node of up to 16
 * ranks maps every local peer's segment at init, a larger one a peer's
 * when it first needs it. Segments show in /proc/self/maps as
 * "/dev/shm/proust-<job>-<rank>" (" (deleted)" once unlinked: once all
 * have mapped it, or at its owner's close on a larger node).
 * mincore() tells which pages of a shared-memory mapping exist. After
 * init: every segment's head, and no ring page. After messages of 1 B -
 * 64 KiB to every peer and back (past the ring's first stages of pages:
 * 4 KiB, 64 KiB, then doubling; a 64 KiB record needs 128 KiB): in every
 * segment, the slot of each peer that wrote to its owner has its pages
 * from its start on, through 128 KiB of ring at least (or the whole ring
 * if smaller), with no page missing among them and none after a missing
 * one, and no more than 256 KiB (stages double, as a backlog needs them);
 * the owner's own slot has none, and the messages are intact.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "test_util.h"

enum { MAX_SEGMENTS = 64, LINE = 64 };

struct seg_counts {
    int segments, own;  /* distinct segments; mappings of our own */
    char names[MAX_SEGMENTS][128];
    size_t head_pages, head_missing; /* heads: pages, and those without memory */
    size_t ring_pages, ring_missing; /* slots of peers that wrote: pages of the
                                      * stages they must have, and those missing */
    size_t ring_holes;               /* pages with memory after a missing one */
    size_t ring_over;                /* slots with more than 256 KiB of pages */
    size_t stray;                    /* pages in slots nobody writes to */
};

/* A segment may be mapped more than once (ours: once to receive, once as
 * a peer of ourselves): count names. */
static void note_name(struct seg_counts *c, const char *path)
{
    for (int i = 0; i < c->segments; i++)
        if (strcmp(c->names[i], path) == 0)
            return;
    EXPECT(c->segments < MAX_SEGMENTS, "more than %d shm segments", MAX_SEGMENTS);
    snprintf(c->names[c->segments++], sizeof c->names[0], "%s", path);
}

/* The ring size the rail chose: PROUST_SHM_RING_SIZE (16K in one job) or
 * its default for a node of up to 8 ranks. */
static size_t ring_size(void)
{
    const char *v = getenv("PROUST_SHM_RING_SIZE");
    if (v && strcmp(v, "16K") == 0)
        return 16u << 10;
    EXPECT(!v && tu_size <= 8, "ring size not known to this test (PROUST_SHM_RING_SIZE=%s)",
           v ? v : "");
    return 1u << 20;
}

/* The rank owning a segment: its name ends in -<rank>[ (deleted)]. */
static int owner_of(const char *path)
{
    char name[128];
    snprintf(name, sizeof name, "%s", path);
    char *del = strstr(name, " (deleted)");
    if (del)
        *del = '\0';
    char *dash = strrchr(name, '-');
    EXPECT(dash, "segment name %s has no rank", path);
    return atoi(dash + 1);
}

static size_t missing_in(const unsigned char *vec, size_t from, size_t n)
{
    size_t missing = 0;
    for (size_t i = from; i < from + n; i++)
        missing += !(vec[i] & 1);
    return missing;
}

/* `wrote`: every peer but the owner has sent to the owner by now. */
static void count_mapping(uintptr_t lo, uintptr_t hi, const char *path, bool wrote,
                          struct seg_counts *c)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (hi - lo) / page;
    size_t slot = (LINE + ring_size() + page - 1) / page; /* control line + ring, in pages */
    EXPECT(n > (size_t)tu_size * slot, "%s: %zu pages, too few for %d ring slots of %zu", path,
           n, tu_size, slot);
    size_t head = n - (size_t)tu_size * slot;
    EXPECT(head <= 4, "%s: a head of %zu pages, more than 4", path, head);
    unsigned char *vec = malloc(n);
    EXPECT(vec, "out of memory");
    EXPECT(mincore((void *)lo, hi - lo, vec) == 0, "mincore on %s: %s", path, strerror(errno));
    int owner = owner_of(path);
    c->head_pages += head;
    c->head_missing += missing_in(vec, 0, head);
    /* the stage a 64 KiB record needs: 128 KiB of ring, or all of it */
    size_t ring_need = ring_size() < (128u << 10) ? ring_size() : 128u << 10;
    size_t need = (LINE + ring_need + page - 1) / page;
    for (int r = 0; r < tu_size; r++) {
        size_t at = head + (size_t)r * slot;
        size_t missing = missing_in(vec, at, slot);
        if (wrote && r != owner) {
            size_t short_by = missing_in(vec, at, need), holes = 0;
            size_t first_gap = 0;
            while (first_gap < slot && (vec[at + first_gap] & 1))
                first_gap++;
            for (size_t i = first_gap; i < slot; i++)
                holes += vec[at + i] & 1;
            c->ring_pages += need;
            c->ring_missing += short_by;
            c->ring_holes += holes;
            /* a few records waiting at most: not the whole 1 MiB ring */
            size_t most = (LINE + (256u << 10) + page - 1) / page;
            if (slot - missing > most) {
                c->ring_over++;
                fprintf(stderr, "[rank %d] %s: ring from rank %d: %zu pages with memory, "
                        "more than %zu\n", tu_rank, path, r, slot - missing, most);
            }
            if (short_by || holes)
                fprintf(stderr, "[rank %d] %s: ring from rank %d: %zu of its first %zu pages "
                        "missing, %zu with memory after a missing one\n",
                        tu_rank, path, r, short_by, need, holes);
        } else if (missing < slot) {
            c->stray += slot - missing;
            fprintf(stderr, "[rank %d] %s: ring from rank %d: %zu pages with memory\n", tu_rank,
                    path, r, slot - missing);
        }
    }
    free(vec);
    note_name(c, path);
    if (owner == tu_rank)
        c->own++;
}

static void scan_segments(struct seg_counts *c, bool wrote)
{
    FILE *f = fopen("/proc/self/maps", "r");
    EXPECT(f, "cannot open /proc/self/maps: %s", strerror(errno));
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *path = strstr(line, "/proust-");
        if (!path || !strstr(line, " rw-s "))
            continue;
        uintptr_t lo, hi;
        EXPECT(sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2, "bad maps line: %s", line);
        count_mapping(lo, hi, path, wrote, c);
    }
    fclose(f);
}

int main(void)
{
    proust_session_t *s = tu_init(60);

    TU_PHASE("resident");
    static struct seg_counts c;
    scan_segments(&c, false);
    /* a small node (up to 16 ranks, shm.c SHM_MAP_ALL_MAX) maps every
     * peer's segment at init, a larger one when first needed */
    int expect = tu_size <= 16 ? tu_size : 1;
    EXPECT(c.segments == expect, "%d shm segments mapped after init, expected %d", c.segments,
           expect);
    EXPECT(c.own >= 1, "our own segment is not mapped");
    EXPECT(c.head_missing == 0, "%zu of %zu segment head pages had no memory after init",
           c.head_missing, c.head_pages);
    EXPECT(c.stray == 0, "%zu ring pages had memory after init: they get it on first use",
           c.stray);

    /* every rank looked before any writes to it: wait for the others
     * through the launcher (a barrier of messages would write to rank 0) */
    char mine = 1, all[64];
    CHECK(proust_oob_allgather(s, &mine, 1, all));

    /* the rings work: 1 B to 64 KiB (eager and rendezvous) to each peer */
    TU_PHASE("messages");
    size_t max = 64u << 10;
    uint8_t *out = malloc(max), *in = malloc(max);
    EXPECT(out && in, "out of memory");
    for (size_t len = 1; len <= max; len *= 4) {
        for (int d = 1; d < tu_size; d++) {
            int to = (tu_rank + d) % tu_size, from = (tu_rank + tu_size - d) % tu_size;
            tu_fill(out, len, (uint64_t)tu_rank * 131 + len);
            proust_request_t *r[2];
            CHECK(proust_irecv(s, in, len, from, 3, PROUST_TAG_MASK_FULL, &r[0]));
            CHECK(proust_isend(s, out, len, to, 3, &r[1]));
            CHECK(proust_waitall(2, r, NULL));
            long bad = tu_first_diff(in, len, (uint64_t)from * 131 + len);
            EXPECT(bad < 0, "%zu B from rank %d: byte %ld wrong", len, from, bad);
        }
    }
    free(out);
    free(in);
    tu_barrier(s);

    TU_PHASE("rings");
    static struct seg_counts after;
    scan_segments(&after, true);
    EXPECT(after.segments == tu_size, "%d segments mapped after talking to every peer, "
           "expected %d", after.segments, tu_size);
    EXPECT(after.ring_missing == 0, "%zu of %zu ring pages had no memory after the messages",
           after.ring_missing, after.ring_pages);
    EXPECT(after.ring_over == 0, "%zu rings had more than 256 KiB of pages after messages "
           "of 64 KiB at most: stages double as a backlog needs them", after.ring_over);
    EXPECT(after.ring_holes == 0, "%zu ring pages had memory after one that had none: "
           "stages are given from a ring's start on", after.ring_holes);
    EXPECT(after.stray == 0, "%zu pages in the slots of rings nobody writes to", after.stray);
    CHECK(proust_finalize(s));
    printf("rank %d: %d segments (%zu head pages) at init; then %zu ring pages, all resident\n",
           tu_rank, c.segments, c.head_pages, after.ring_pages);
    return 0;
}
