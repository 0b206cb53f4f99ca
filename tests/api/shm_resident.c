/*
 * shm_resident — the shm rail's segments have their pages when init
 * returns (drivers/shm.c, prefault): a ring page left to the first send
 * that reaches it costs that send a page fault (~5 us on a VM, hundreds of
 * them per ring, spread over the first messages to each peer).
 *
 * Every process maps its own segment (the rings it receives on) and each
 * local peer's (to write into its ring there); the segments are unlinked
 * once mapped, so they show in /proc/self/maps as
 * "/dev/shm/proust-<job>-<rank> (deleted)" (ours twice: to receive,
 * and as a peer of ourselves). mincore() tells which pages
 * of a shared-memory mapping exist: after init, all of our own segment's,
 * and all of every peer's (its owner gave them their pages before anyone
 * mapped it). Then messages of every ring size still arrive intact.
 */
#include <errno.h>
#include <sys/mman.h>

#include "test_util.h"

enum { MAX_SEGMENTS = 64 };

struct seg_counts {
    int segments, own;          /* distinct segments; mappings of our own */
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
    note_name(c, path);
    c->pages += n;
    c->missing += missing;
    /* our own segment: its name ends in -<our rank> */
    char mine[32];
    snprintf(mine, sizeof mine, "-%d (deleted)", tu_rank);
    const char *end = path + strlen(path) - strlen(mine);
    if (end > path && strcmp(end, mine) == 0)
        c->own++;
    if (missing)
        fprintf(stderr, "[rank %d] %s: %zu of %zu pages missing\n", tu_rank, path, missing, n);
}

static void scan_segments(struct seg_counts *c)
{
    FILE *f = fopen("/proc/self/maps", "r");
    EXPECT(f, "cannot open /proc/self/maps: %s", strerror(errno));
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *path = strstr(line, "/proust-");
        if (!path || !strstr(line, " rw-s ") || !strstr(path, "(deleted)"))
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
    /* one mapping per local process, ourselves included (all are local here) */
    EXPECT(c.segments == tu_size, "%d shm segments mapped, expected %d", c.segments, tu_size);
    EXPECT(c.own >= 1, "our own segment is not mapped");
    EXPECT(c.missing == 0, "%zu of %zu segment pages had no memory after init", c.missing,
           c.pages);

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
    CHECK(proust_finalize(s));
    printf("rank %d: %d segments, %zu pages, all resident\n", tu_rank, c.segments, c.pages);
    return 0;
}
