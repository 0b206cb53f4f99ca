/*
 * datatype_unit.c — the datatype internals without a job: built from the
 * datatype sources (plus the handle tables) with stand-ins for the error
 * and attribute functions, it checks what MPI calls cannot reach directly:
 * packing resumed at arbitrary byte offsets in pieces of any size (how
 * large messages are streamed), pm_type_elements on partial instances,
 * pm_type_check, the `contiguous` flag and block merging.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datatype.h"

_Atomic int pm_state;
static int last_error;

int pm_error(MPI_Comm comm, int code, const char *fmt, ...)
{
    last_error = code;
    return code;
}
int pm_error_uninit(const char *fname)
{
    return MPI_ERR_OTHER;
}
int pm_attrs_delete_type(struct pm_datatype *t)
{
    return MPI_SUCCESS;
}
int pm_attrs_copy_type(struct pm_datatype *from, struct pm_datatype *to)
{
    return MPI_SUCCESS;
}

static int failures;
#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);             \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            failures++;                                                            \
        }                                                                          \
    } while (0)
#define OK(call) EXPECT((call) == MPI_SUCCESS, "%s failed (%d)", #call, last_error)

static uint64_t rng = 88172645463325252ull;
static size_t rnd(size_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (size_t)(rng % n);
}

static struct pm_datatype *T(MPI_Datatype h)
{
    struct pm_datatype *t = pm_type_get(h);
    EXPECT(t != NULL, "handle %#x", (unsigned)h);
    return t;
}

/* Pack/unpack `count` instances in pieces at random offsets and compare with
 * the one-shot result. `span` bytes around `origin` are addressable. */
static void check_streaming(const char *what, MPI_Datatype h, MPI_Count count, size_t maxpiece)
{
    struct pm_datatype *t = T(h);
    MPI_Aint lo = t->true_lb, hi = t->true_lb + t->true_extent;
    if (count > 1) {
        MPI_Aint last = (MPI_Aint)(count - 1) * t->extent;
        lo += last < 0 ? last : 0;
        hi += last > 0 ? last : 0;
    }
    size_t span = (size_t)(hi - lo), total = (size_t)count * (size_t)t->size;
    unsigned char *src = malloc(span + 1), *d1 = calloc(1, span + 1), *d2 = calloc(1, span + 1);
    unsigned char *one = malloc(total + 1), *pieces = malloc(total + 1);
    for (size_t i = 0; i < span; i++)
        src[i] = (unsigned char)(i * 131 + 7);
    const unsigned char *origin = src - lo;
    size_t n = pm_type_pack(origin, count, t, 0, one, total);
    EXPECT(n == total, "%s: one-shot pack moved %zu of %zu", what, n, total);
    EXPECT(pm_type_pack(origin, count, t, 0, one, total + 100) == total, "%s: capped at total",
           what);
    EXPECT(pm_type_pack(origin, count, t, total, one, 10) == 0, "%s: nothing after the end", what);
    size_t off = 0;
    while (off < total) {
        size_t want = 1 + rnd(rnd(4) == 0 ? maxpiece : 17);
        size_t got = pm_type_pack(origin, count, t, off, pieces + off, want);
        size_t exp = total - off < want ? total - off : want;
        EXPECT(got == exp, "%s: pack at %zu moved %zu, expected %zu", what, off, got, exp);
        if (got != exp)
            break;
        off += got;
    }
    EXPECT(memcmp(one, pieces, total) == 0, "%s: pieces differ from the one-shot pack", what);
    n = pm_type_unpack(one, total, d1 - lo, count, t, 0);
    EXPECT(n == total, "%s: one-shot unpack moved %zu", what, n);
    off = 0;
    while (off < total) {
        size_t want = 1 + rnd(rnd(4) == 0 ? maxpiece : 23);
        size_t got = pm_type_unpack(one + off, want, d2 - lo, count, t, off);
        EXPECT(got == (total - off < want ? total - off : want), "%s: unpack at %zu", what, off);
        if (!got)
            break;
        off += got;
    }
    EXPECT(memcmp(d1, d2, span) == 0, "%s: unpack in pieces differs", what);
    /* and what was unpacked is what the source held there */
    unsigned char *back = malloc(total + 1);
    pm_type_pack(d1 - lo, count, t, 0, back, total);
    EXPECT(memcmp(back, one, total) == 0, "%s: round trip", what);
    free(back);
    free(src);
    free(d1);
    free(d2);
    free(one);
    free(pieces);
}

static MPI_Datatype committed(MPI_Datatype h)
{
    OK(PMPI_Type_commit(&h));
    return h;
}

static void test_streaming(void)
{
    MPI_Datatype v, s, sub, dar, res, big, neg;
    OK(PMPI_Type_vector(5, 3, 7, MPI_INT, &v));
    int bl[3] = {1, 2, 1};
    MPI_Aint d[3] = {0, 8, 40};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, v};
    OK(PMPI_Type_create_struct(3, bl, d, ty, &s));
    int sz[3] = {7, 6, 5}, ss[3] = {3, 4, 2}, st[3] = {2, 1, 3};
    OK(PMPI_Type_create_subarray(3, sz, ss, st, MPI_ORDER_C, s, &sub));
    int gs[2] = {11, 13}, di[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, da[2] = {2, 5},
        ps[2] = {3, 3};
    OK(PMPI_Type_create_darray(9, 5, 2, gs, di, da, ps, MPI_ORDER_FORTRAN, MPI_SHORT_INT, &dar));
    OK(PMPI_Type_create_resized(s, -16, 300, &res));
    OK(PMPI_Type_vector(1 << 20, 1, 2, MPI_INT, &big));
    OK(PMPI_Type_vector(4, 2, -3, MPI_DOUBLE_INT, &neg));
    check_streaming("vector", committed(v), 9, 200);
    check_streaming("struct", committed(s), 7, 500);
    check_streaming("subarray of struct", committed(sub), 2, 4000);
    check_streaming("darray of SHORT_INT", committed(dar), 3, 300);
    check_streaming("resized struct", committed(res), 5, 1000);
    check_streaming("negative stride", committed(neg), 6, 100);
    check_streaming("DOUBLE_INT", MPI_DOUBLE_INT, 33, 100);
    check_streaming("1M-block vector", committed(big), 2, 1 << 20);
    MPI_Datatype all[] = {v, s, sub, dar, res, big, neg};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        OK(PMPI_Type_free(&all[i]));
}

static void test_elements(void)
{
    /* struct {int; double; char} packed: 4 + 8 + 1 = 13 bytes, 3 elements */
    MPI_Datatype s, c, v, mix, e;
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    OK(PMPI_Type_create_struct(3, bl, d, ty, &s));
    struct { MPI_Count bytes, elems; } se[] = {
        {0, 0}, {4, 1}, {12, 2}, {13, 3}, {17, 4}, {25, 5}, {26, 6}, {30, 7},
        {5, MPI_UNDEFINED}, {10, MPI_UNDEFINED}, {14, MPI_UNDEFINED}, {2, MPI_UNDEFINED},
    };
    for (size_t i = 0; i < sizeof se / sizeof se[0]; i++)
        EXPECT(pm_type_elements(T(s), se[i].bytes) == se[i].elems,
               "struct: %lld bytes -> %lld elements, expected %lld", se[i].bytes,
               pm_type_elements(T(s), se[i].bytes), se[i].elems);
    for (size_t i = 0; i < sizeof se / sizeof se[0]; i++)
        if (se[i].elems != MPI_UNDEFINED)
            EXPECT(pm_type_element_bytes(T(s), se[i].elems) == se[i].bytes,
                   "struct: %lld elements take %lld bytes, expected %lld", se[i].elems,
                   pm_type_element_bytes(T(s), se[i].elems), se[i].bytes);
    EXPECT(pm_type_elements(T(MPI_DOUBLE_INT), 12) == 2, "DOUBLE_INT whole");
    EXPECT(pm_type_element_bytes(T(MPI_DOUBLE_INT), 3) == 20, "DOUBLE_INT 3 elements");
    EXPECT(pm_type_elements(T(MPI_DOUBLE_INT), 8) == 1, "DOUBLE_INT first member");
    EXPECT(pm_type_elements(T(MPI_DOUBLE_INT), 20) == 3, "DOUBLE_INT 1.5");
    EXPECT(pm_type_elements(T(MPI_DOUBLE_INT), 4) == MPI_UNDEFINED, "DOUBLE_INT 4 bytes");
    OK(PMPI_Type_contiguous(4, MPI_SHORT_INT, &c));
    EXPECT(T(c)->basic == (MPI_SHORT_INT & PROUST_MPI_INDEX_MASK), "basic of contiguous pairs");
    EXPECT(pm_type_elements(T(c), 6) == 2 && pm_type_elements(T(c), 2) == 1 &&
               pm_type_elements(T(c), 8) == 3 && pm_type_elements(T(c), 3) == MPI_UNDEFINED,
           "contiguous(SHORT_INT)");
    OK(PMPI_Type_vector(2, 3, 5, MPI_INT, &v));
    EXPECT(pm_type_elements(T(v), 12) == 3 && pm_type_elements(T(v), 6) == MPI_UNDEFINED &&
               pm_type_elements(T(v), 48) == 12,
           "vector of int");
    int bl2[2] = {2, 1};
    MPI_Aint d2[2] = {0, 16};
    MPI_Datatype ty2[2] = {MPI_2INT, s};
    OK(PMPI_Type_create_struct(2, bl2, d2, ty2, &mix));
    EXPECT(T(mix)->basic == 0 && T(mix)->nelements == 7, "mixed struct: basic %d, %lld elements",
           T(mix)->basic, T(mix)->nelements);
    EXPECT(pm_type_elements(T(mix), 8) == 2 && pm_type_elements(T(mix), 20) == 5 &&
               pm_type_elements(T(mix), 28) == 6 && pm_type_elements(T(mix), 29) == 7 &&
               pm_type_elements(T(mix), 29 + 12) == 10 &&
               pm_type_elements(T(mix), 21) == MPI_UNDEFINED &&
               pm_type_elements(T(mix), 9) == MPI_UNDEFINED,
           "mixed struct elements");
    for (MPI_Count b = 0; b <= 3 * 29; b++) {
        MPI_Count n = pm_type_elements(T(mix), b);
        if (n != MPI_UNDEFINED)
            EXPECT(pm_type_element_bytes(T(mix), n) == b, "mixed: %lld bytes -> %lld elements -> %lld",
                   b, n, pm_type_element_bytes(T(mix), n));
    }
    OK(PMPI_Type_contiguous(0, MPI_INT, &e));
    EXPECT(pm_type_elements(T(e), 0) == 0, "empty type");
    MPI_Datatype all[] = {s, c, v, mix, e};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        OK(PMPI_Type_free(&all[i]));
}

/* With the limit lowered to 1000 blocks: lists that merge below it are
 * built even when the count before merging is far above it (the store
 * grows), others are refused. */
static void test_block_limit(void)
{
    enum { N = 3000 };
    MPI_Count saved = pm_type_max_blocks;
    pm_type_max_blocks = 1000;
    int *bl = malloc(N * sizeof *bl), *disp = malloc(N * sizeof *disp);
    MPI_Datatype t;
    for (int sparse = 0; sparse <= 1200; sparse += 400) {
        /* `sparse` isolated ints, then the rest adjacent */
        for (int i = 0; i < N; i++) {
            bl[i] = 1;
            disp[i] = i < sparse ? 2 * i : sparse * 2 + (i - sparse);
        }
        int rc = PMPI_Type_indexed(N, bl, disp, MPI_INT, &t);
        size_t want = (size_t)sparse + 1;
        if (want <= 1000) {
            EXPECT(rc == MPI_SUCCESS && T(t)->nblocks == want && T(t)->size == 4 * N,
                   "%d sparse: rc %d", sparse, rc);
            if (rc == MPI_SUCCESS) {
                OK(PMPI_Type_commit(&t));
                check_streaming("grown block list", t, 2, 3000);
                OK(PMPI_Type_free(&t));
            }
        } else {
            EXPECT(rc == MPI_ERR_NO_MEM, "%d sparse blocks: rc %d", sparse, rc);
        }
    }
    free(bl);
    free(disp);
    pm_type_max_blocks = saved;
}

static void test_flags(void)
{
    MPI_Datatype t;
    struct { const char *what; bool contiguous; size_t nblocks; } x;
#define FLAG(call, c, nb)                                                          \
    do {                                                                           \
        OK(call);                                                                  \
        struct pm_datatype *p_ = T(t);                                             \
        x.what = #call;                                                            \
        EXPECT(p_->contiguous == (c) && p_->nblocks == (nb),                       \
               "%s: contiguous %d nblocks %zu", x.what, p_->contiguous, p_->nblocks); \
        EXPECT(pm_type_check(t, NULL) == MPI_ERR_TYPE, "uncommitted %s", x.what);   \
        OK(PMPI_Type_commit(&t));                                                  \
        EXPECT(pm_type_check(t, NULL) == MPI_SUCCESS, "committed %s", x.what);     \
        OK(PMPI_Type_free(&t));                                                    \
    } while (0)
    FLAG(PMPI_Type_vector(1, 5, 9, MPI_INT, &t), true, 1);
    FLAG(PMPI_Type_contiguous(3, MPI_2INT, &t), true, 1);
    FLAG(PMPI_Type_contiguous(3, MPI_DOUBLE_INT, &t), false, 3);
    FLAG(PMPI_Type_contiguous(2, MPI_SHORT_INT, &t), false, 3);
    FLAG(PMPI_Type_create_resized(MPI_INT, 0, 8, &t), false, 1);
    FLAG(PMPI_Type_create_resized(MPI_INT, -4, 4, &t), false, 1);
    FLAG(PMPI_Type_create_hvector(2, 1, 4, MPI_INT, &t), true, 1);
    FLAG(PMPI_Type_vector(3, 2, 4, MPI_INT, &t), false, 3);
    FLAG(PMPI_Type_contiguous(0, MPI_INT, &t), true, 0);
    {
        int bl[2] = {1, 1}, dd[2] = {1, 0};
        FLAG(PMPI_Type_indexed(2, bl, dd, MPI_INT, &t), false, 2);
        int dd2[2] = {0, 1};
        FLAG(PMPI_Type_indexed(2, bl, dd2, MPI_INT, &t), true, 1);
        MPI_Aint ad[2] = {4, 8};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        FLAG(PMPI_Type_create_struct(2, bl, ad, ty, &t), true, 1);
        MPI_Datatype ty2[2] = {MPI_INT, MPI_CHAR};
        FLAG(PMPI_Type_create_struct(2, bl, ad, ty2, &t), false, 1); /* padded to 8 */
    }
    /* more pieces than the block limit, merged into one block */
    FLAG(PMPI_Type_vector((1 << 26) + 3, 1, 1, MPI_CHAR, &t), true, 1);
    {
        /* and what cannot merge is refused before any work */
        MPI_Datatype a;
        OK(PMPI_Type_vector(1 << 16, 1, 2, MPI_INT, &a));
        EXPECT(PMPI_Type_vector(1 << 14, 1, 1 << 18, a, &t) == MPI_ERR_NO_MEM, "too many blocks");
        OK(PMPI_Type_free(&a));
    }
    {
        /* resized(int, -4, 4): one block, not `contiguous` (lb != true_lb),
         * yet its copies abut: one block */
        MPI_Datatype r;
        OK(PMPI_Type_create_resized(MPI_INT, -4, 4, &r));
        FLAG(PMPI_Type_contiguous(5, r, &t), false, 1);
        int bl[2] = {3, 2}, dd[2] = {0, 3};
        FLAG(PMPI_Type_indexed(2, bl, dd, r, &t), false, 1);
        OK(PMPI_Type_free(&r));
    }
    test_block_limit();
    EXPECT(pm_type_check(MPI_DATATYPE_NULL, NULL) == MPI_ERR_TYPE, "NULL type");
    EXPECT(pm_type_check(PROUST_MPI_KIND_DATATYPE | 12345, NULL) == MPI_ERR_TYPE, "junk type");
    EXPECT(pm_type_check(PROUST_MPI_KIND_DATATYPE | PROUST_MPI_NUM_PREDEFINED_TYPES, NULL) ==
               MPI_ERR_TYPE,
           "unused index");
    EXPECT(pm_type_check(MPI_COMM_WORLD, NULL) == MPI_ERR_TYPE, "a communicator");
    EXPECT(pm_type_check(MPI_LONG_DOUBLE_INT, NULL) == MPI_SUCCESS, "predefined");
}

int main(void)
{
    pm_tables_init();
    pm_datatypes_init();
    atomic_store(&pm_state, PM_STATE_RUNNING);
    test_flags();
    test_elements();
    test_streaming();
    EXPECT(atomic_load(&pm_type_table.live) == 0, "%d types left", atomic_load(&pm_type_table.live));
    pm_tables_finalize();
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
