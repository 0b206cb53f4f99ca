/*
 * shm_resident — the shm rail's memory: small at init, rings made on first
 * use (drivers/shm.c), and every page of it there before it is used (a page
 * left to the first send that reaches it costs that send a page fault, ~5
 * us on a VM, hundreds of them per ring).
 *
 * Every process makes its own segment (header, ready words, claim words)
 * and maps every local peer's at init on a node of up to 16 ranks, else a
 * peer's when it first needs it; the ring from A to B is a
 * segment A makes on its first message to B, which B maps. They show in
 * /proc/self/maps as "/dev/shm/proust-<job>-<rank>" and
 * "/dev/shm/proust-ring-<job>-<from>-<to> (deleted)" (the reader unlinks a
 * ring once mapped; a segment's name goes once all have mapped it, or at
 * its owner's close on a larger node).
 * mincore() tells which pages of a shared-memory mapping exist. After
 * init: the segments, a few pages each, no ring. After messages of
 * every ring size to every peer and back: every peer's segment, two rings
 * per peer (ours to it, its to us), every page of every mapping there, and
 * the messages intact.
 */
#include <errno.h>
#include <sys/mman.h>

#include "test_util.h"

enum { MAX_SEGMENTS = 64 };

struct seg_counts {
    int segments, own;          /* distinct segments; mappings of our own */
    int rings;                  /* distinct ring segments */
    char names[MAX_SEGMENTS][128];
    size_t pages, missing;
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

static void count_mapping(uintptr_t lo, uintptr_t hi, const char *path, struct seg_counts *c)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (hi - lo) / page;
    unsigned char *vec = malloc(n);
    EXPECT(vec, "out of memory");
    EXPECT(mincore((void *)lo, hi - lo, vec) == 0, "mincore on %s: %s", path, strerror(errno));
    size_t missing = 0;
    for (size_t i = 0; i < n; i++)
        missing += !(vec[i] & 1);
    free(vec);
    c->pages += n;
    c->missing += missing;
    if (missing)
        fprintf(stderr, "[rank %d] %s: %zu of %zu pages missing\n", tu_rank, path, missing, n);
    if (strstr(path, "/proust-ring-")) {
        c->rings++; /* each ring is mapped once here: by its writer or its reader */
        return;
    }
    note_name(c, path);
    /* our own segment: its name ends in -<our rank>, with " (deleted)"
     * once unlinked */
    char mine[32], mine_deleted[48];
    snprintf(mine, sizeof mine, "-%d", tu_rank);
    snprintf(mine_deleted, sizeof mine_deleted, "-%d (deleted)", tu_rank);
    size_t len = strlen(path);
    if ((len > strlen(mine) && strcmp(path + len - strlen(mine), mine) == 0) ||
        (len > strlen(mine_deleted) && strcmp(path + len - strlen(mine_deleted), mine_deleted) == 0))
        c->own++;
}

static void scan_segments(struct seg_counts *c)
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
        count_mapping(lo, hi, path, c);
    }
    fclose(f);
}

int main(void)
{
    proust_session_t *s = tu_init(60);

    TU_PHASE("resident");
    static struct seg_counts c;
    scan_segments(&c);
    /* a small node (up to 16 ranks, shm.c SHM_MAP_ALL_MAX) maps every
     * peer's segment at init, a larger one when first needed */
    int expect = tu_size <= 16 ? tu_size : 1;
    EXPECT(c.segments == expect, "%d shm segments mapped after init, expected %d", c.segments,
           expect);
    EXPECT(c.own >= 1, "our own segment is not mapped");
    EXPECT(c.missing == 0, "%zu of %zu segment pages had no memory after init", c.missing,
           c.pages);
    EXPECT(c.rings == 0, "%d rings mapped after init: they are made on first use", c.rings);
    /* a segment is a header page, ready words and 8 KiB of claim words */
    EXPECT(c.pages <= (size_t)(expect + 1) * 4, "%zu pages of segments after init for %d "
           "processes: more than 4 a segment", c.pages, tu_size);
    size_t init_pages = c.pages;

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
    scan_segments(&after);
    EXPECT(after.rings == 2 * (tu_size - 1), "%d rings mapped after talking to %d peers both "
           "ways, expected %d", after.rings, tu_size - 1, 2 * (tu_size - 1));
    EXPECT(after.segments == tu_size, "%d segments mapped after talking to every peer, "
           "expected %d", after.segments, tu_size);
    EXPECT(after.missing == 0, "%zu of %zu pages had no memory after the messages",
           after.missing, after.pages);
    CHECK(proust_finalize(s));
    printf("rank %d: %d segments (%zu pages) at init; then %d rings, %zu pages, all resident\n",
           tu_rank, c.segments, init_pages, after.rings, after.pages);
    return 0;
}
