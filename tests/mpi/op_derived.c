/*
 * op_derived.c — predefined operations on derived datatypes made of one
 * predefined type (MPI-3.1 §5.9.2: the operation applies element-wise over
 * the type map): vectors, resized and indexed types, misaligned elements
 * (hvector with an odd stride), pairs with a hole (MPI_SHORT_INT), and the
 * refusal of types mixing several predefined types. Bytes outside the type
 * map must never change.
 */
#include <stdbool.h>

#include "mpitest.h"

static void check_class(int rc, int want, const char *what)
{
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

/* vector(4, 2, 3) of int, 2 instances, SUM: ints in the map are summed,
 * the others keep their value. */
static void vector_sum(void)
{
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(4, 2, 3, MPI_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    int a[24], b[24];
    bool in_map[24] = {false};
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 4; j++)
            for (int e = 0; e < 2; e++)
                in_map[k * 11 + j * 3 + e] = true;
    for (int i = 0; i < 24; i++) {
        a[i] = i + 1;
        b[i] = 1000 * (i + 1);
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 2, vec, MPI_SUM));
    for (int i = 0; i < 24; i++) {
        int want = in_map[i] ? 1000 * (i + 1) + i + 1 : 1000 * (i + 1);
        CHECK(b[i] == want, "vector SUM b[%d] = %d, want %d", i, b[i], want);
    }
    /* MPI_LAND on the same type (C integer allowed) */
    for (int i = 0; i < 24; i++) {
        a[i] = i % 2;
        b[i] = 5;
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 2, vec, MPI_LAND));
    for (int i = 0; i < 24; i++) {
        int want = in_map[i] ? i % 2 : 5;
        CHECK(b[i] == want, "vector LAND b[%d] = %d, want %d", i, b[i], want);
    }
    MPI_CHECK(MPI_Type_free(&vec));
}

/* resized int (extent 3 ints) and an indexed type whose blocks merge. */
static void resized_indexed(void)
{
    MPI_Datatype rs, ix;
    MPI_CHECK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rs));
    MPI_CHECK(MPI_Type_commit(&rs));
    int a[15], b[15];
    for (int i = 0; i < 15; i++) {
        a[i] = i + 2;
        b[i] = 3;
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 5, rs, MPI_PROD));
    for (int i = 0; i < 15; i++)
        CHECK(b[i] == (i % 3 == 0 ? 3 * (i + 2) : 3), "resized PROD b[%d] = %d", i, b[i]);

    int bl[3] = {2, 3, 1}, disp[3] = {0, 2, 7};
    MPI_CHECK(MPI_Type_indexed(3, bl, disp, MPI_INT, &ix));
    MPI_CHECK(MPI_Type_commit(&ix));
    for (int i = 0; i < 15; i++) {
        a[i] = 1 << (i % 8);
        b[i] = 0x100;
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 1, ix, MPI_BOR));
    for (int i = 0; i < 15; i++) {
        bool in = i < 5 || i == 7;
        CHECK(b[i] == (in ? (0x100 | (1 << (i % 8))) : 0x100), "indexed BOR b[%d] = %#x", i, b[i]);
    }
    MPI_CHECK(MPI_Type_free(&rs));
    MPI_CHECK(MPI_Type_free(&ix));
}

/* Contiguous and dup'ed types: the whole buffer in one go. */
static void contiguous_dup(void)
{
    MPI_Datatype ct, dup;
    MPI_CHECK(MPI_Type_contiguous(5, MPI_DOUBLE, &ct));
    MPI_CHECK(MPI_Type_commit(&ct));
    MPI_CHECK(MPI_Type_dup(MPI_UNSIGNED, &dup));
    double a[15], b[15];
    for (int i = 0; i < 15; i++) {
        a[i] = (i * 7) % 11;
        b[i] = (i * 5) % 11;
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 3, ct, MPI_MAX));
    for (int i = 0; i < 15; i++) {
        double x = (i * 7) % 11, y = (i * 5) % 11;
        CHECK(b[i] == (x > y ? x : y), "contiguous MAX b[%d] = %g", i, b[i]);
    }
    unsigned u[6] = {1, 2, 3, 4, 5, 6}, v[6] = {6, 5, 4, 3, 2, 1};
    MPI_CHECK(MPI_Reduce_local(u, v, 6, dup, MPI_BXOR));
    for (int i = 0; i < 6; i++)
        CHECK(v[i] == ((unsigned)(i + 1) ^ (unsigned)(6 - i)), "dup BXOR v[%d] = %u", i, v[i]);
    MPI_CHECK(MPI_Type_free(&ct));
    MPI_CHECK(MPI_Type_free(&dup));
}

/* hvector of doubles with a 9-byte stride: elements at odd addresses,
 * enough of them for several internal batches. */
static void misaligned(void)
{
    enum { COUNT = 1500, STRIDE = 9 };
    MPI_Datatype hv;
    MPI_CHECK(MPI_Type_create_hvector(COUNT, 1, STRIDE, MPI_DOUBLE, &hv));
    MPI_CHECK(MPI_Type_commit(&hv));
    size_t bytes = (size_t)(COUNT - 1) * STRIDE + sizeof(double);
    unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1), *ref = malloc(bytes + 1);
    CHECK(a && b && ref, "malloc");
    mt_fill(b, bytes + 1, 7);
    for (int k = 0; k < COUNT; k++) {
        double x = k, y = 2.5 * k;
        memcpy(a + 1 + (size_t)k * STRIDE, &x, sizeof x);
        memcpy(b + 1 + (size_t)k * STRIDE, &y, sizeof y);
    }
    memcpy(ref, b, bytes + 1);
    for (int k = 0; k < COUNT; k++) {
        double r = 3.5 * k;
        memcpy(ref + 1 + (size_t)k * STRIDE, &r, sizeof r);
    }
    MPI_CHECK(MPI_Reduce_local(a + 1, b + 1, 1, hv, MPI_SUM));
    for (size_t i = 0; i < bytes + 1; i++)
        CHECK(b[i] == ref[i], "hvector SUM: byte %zu is %#x, want %#x", i, b[i], ref[i]);
    MPI_CHECK(MPI_Type_free(&hv));
    free(a);
    free(b);
    free(ref);
}

/* vector(3, 1, 2) of MPI_SHORT_INT (a short, 2 bytes of padding, an int):
 * MINLOC element-wise; padding and skipped pairs untouched. */
static void pairs_with_hole(void)
{
    typedef struct {
        short v;
        int i;
    } SI;
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(3, 1, 2, MPI_SHORT_INT, &vec));
    MPI_CHECK(MPI_Type_commit(&vec));
    SI a[10], b[10], ref[10];
    mt_fill(a, sizeof a, 1);
    mt_fill(b, sizeof b, 2);
    short av[10] = {1, 0, 5, 0, 2, 0, 9, 0, 4, 0}, bv[10] = {3, 0, 5, 0, 1, 0, 9, 0, 4, 0};
    int ai[10] = {7, 0, 2, 0, 0, 0, 1, 0, 3, 0}, bi[10] = {1, 0, 8, 0, 6, 0, 0, 0, 2, 0};
    for (int k = 0; k < 10; k++) {
        a[k].v = av[k];
        a[k].i = ai[k];
        b[k].v = bv[k];
        b[k].i = bi[k];
    }
    memcpy(ref, b, sizeof b);
    /* 2 instances of 3 pairs, extent 5 pairs: pairs 0 2 4, 5 7 9 */
    int map[6] = {0, 2, 4, 5, 7, 9};
    for (int m = 0; m < 6; m++) {
        int k = map[m];
        if (a[k].v < b[k].v || (a[k].v == b[k].v && a[k].i < b[k].i)) {
            ref[k].v = a[k].v;
            ref[k].i = a[k].i;
        }
    }
    MPI_CHECK(MPI_Reduce_local(a, b, 2, vec, MPI_MINLOC));
    CHECK(memcmp(b, ref, sizeof b) == 0, "vector of MPI_SHORT_INT MINLOC: wrong bytes");
    CHECK(b[2].v == 5 && b[2].i == 2 && b[4].v == 1 && b[4].i == 6 && b[0].v == 1 &&
              b[0].i == 7 && b[9].i == 0,
          "MINLOC results (%d,%d) (%d,%d)", b[2].v, b[2].i, b[4].v, b[4].i);
    check_class(MPI_Reduce_local(a, b, 2, vec, MPI_SUM), MPI_ERR_OP, "SUM on pairs");
    MPI_CHECK(MPI_Type_free(&vec));
}

/* Types whose elements are not all one allowed type. */
static void refusals(void)
{
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE}, st, cv, bv;
    MPI_CHECK(MPI_Type_create_struct(2, bl, disp, tys, &st));
    MPI_CHECK(MPI_Type_commit(&st));
    unsigned char a[16], b[16], ref[16];
    mt_fill(a, sizeof a, 3);
    mt_fill(b, sizeof b, 4);
    memcpy(ref, b, sizeof b);
    check_class(MPI_Reduce_local(a, b, 1, st, MPI_SUM), MPI_ERR_OP, "SUM on struct{int,double}");
    CHECK(memcmp(b, ref, sizeof b) == 0, "refused op changed the buffer");
    /* REPLACE copies the type map (not the gap), NO_OP nothing */
    MPI_CHECK(MPI_Reduce_local(a, b, 1, st, MPI_NO_OP));
    CHECK(memcmp(b, ref, sizeof b) == 0, "MPI_NO_OP changed the buffer");
    MPI_CHECK(MPI_Reduce_local(a, b, 1, st, MPI_REPLACE));
    memcpy(ref, a, 4);
    memcpy(ref + 8, a + 8, 8);
    CHECK(memcmp(b, ref, sizeof b) == 0, "MPI_REPLACE on a struct");

    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_CHARACTER, &cv));
    MPI_CHECK(MPI_Type_commit(&cv));
    check_class(MPI_Reduce_local(a, b, 1, cv, MPI_SUM), MPI_ERR_OP,
                "SUM on a vector of MPI_CHARACTER");
    MPI_CHECK(MPI_Type_vector(2, 1, 2, MPI_BYTE, &bv));
    MPI_CHECK(MPI_Type_commit(&bv));
    check_class(MPI_Reduce_local(a, b, 1, bv, MPI_SUM), MPI_ERR_OP, "SUM on a vector of MPI_BYTE");
    unsigned char x[3] = {0x0f, 0xaa, 0xf0}, y[3] = {0x30, 0x55, 0x03};
    MPI_CHECK(MPI_Reduce_local(x, y, 1, bv, MPI_BOR));
    CHECK(y[0] == 0x3f && y[1] == 0x55 && y[2] == 0xf3, "BOR on a vector of MPI_BYTE: %x %x %x",
          y[0], y[1], y[2]);
    MPI_CHECK(MPI_Type_free(&st));
    MPI_CHECK(MPI_Type_free(&cv));
    MPI_CHECK(MPI_Type_free(&bv));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    vector_sum();
    resized_indexed();
    contiguous_dup();
    misaligned();
    pairs_with_hole();
    refusals();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
