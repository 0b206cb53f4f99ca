/*
 * placement — the placement API around a real session (any number of
 * processes): proust_placement_hint before init is taken (unless
 * PROUST_PLACEMENT_HINT overrides it) and refused after; the decision is
 * described; a topology given as XML (PROUST_TOPOLOGY) is decided on but
 * never bound to; messages still flow; after finalize the hint may be set
 * again. argv[1] is the hint the
 * description must show, argv[2] (optional) a text it must contain.
 */
#include <sched.h>
#include <string.h>

#include "test_util.h"

int main(int argc, char **argv)
{
    EXPECT(argc >= 2, "usage: api_placement HINT [TEXT]");
    cpu_set_t before, after;
    CHECK(sched_getaffinity(0, sizeof before, &before) == 0 ? PROUST_OK : PROUST_ERR_SYS);
    CHECK_RC(proust_placement_hint("diagonal"), PROUST_ERR_INVALID);
    CHECK(proust_placement_hint("bandwidth"));
    proust_session_t *s = tu_init(30);
    CHECK_RC(proust_placement_hint("latency"), PROUST_ERR_STATE);
    CHECK_RC(proust_placement_describe(NULL, NULL, 0), PROUST_ERR_STATE);

    char text[4096];
    int n = proust_placement_describe(s, text, sizeof text);
    EXPECT(n > 0 && (size_t)n < sizeof text, "describe returned %d", n);
    EXPECT((size_t)n == strlen(text), "describe: length %d, text %zu", n, strlen(text));
    char want[64];
    snprintf(want, sizeof want, "hint=%s", argv[1]);
    EXPECT(strstr(text, want), "expected %s in:\n%s", want, text);
    EXPECT(strstr(text, "why:"), "no reasons in:\n%s", text);
    if (argc > 2)
        EXPECT(strstr(text, argv[2]), "expected \"%s\" in:\n%s", argv[2], text);
    char tiny[8];
    EXPECT(proust_placement_describe(s, tiny, sizeof tiny) == n && strlen(tiny) == 7,
           "a short buffer gets a truncated, terminated text");

    if (getenv("PROUST_TOPOLOGY")) {
        /* another machine's topology: decided on, never bound to */
        CHECK(sched_getaffinity(0, sizeof after, &after) == 0 ? PROUST_OK : PROUST_ERR_SYS);
        EXPECT(CPU_EQUAL(&before, &after), "an XML topology must not bind the process");
    }

    /* the session works: a ring of 1 MiB messages, checked */
    size_t len = 1u << 20;
    uint8_t *out = malloc(len), *in = malloc(len);
    EXPECT(out && in, "out of memory");
    tu_fill(out, len, (uint64_t)tu_rank);
    int next = (tu_rank + 1) % tu_size, prev = (tu_rank + tu_size - 1) % tu_size;
    proust_request_t *r[2];
    CHECK(proust_irecv(s, in, len, prev, 7, PROUST_TAG_MASK_FULL, &r[0]));
    CHECK(proust_isend(s, out, len, next, 7, &r[1]));
    CHECK(proust_waitall(2, r, NULL));
    long bad = tu_first_diff(in, len, (uint64_t)prev);
    EXPECT(bad < 0, "byte %ld of the message from rank %d is wrong", bad, prev);
    free(out);
    free(in);
    tu_barrier(s);
    CHECK(proust_finalize(s));
    CHECK(proust_placement_hint("latency")); /* no session any more */
    printf("rank %d: placement ok\n", tu_rank);
    return 0;
}
