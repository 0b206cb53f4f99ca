/*
 * datatype_large.c — the MPI-4.0 large-count datatype calls (MPI_*_c).
 *
 * Checks: each _c constructor builds the type map of its int twin (same
 * size, bounds and packed bytes of a patterned buffer); its envelope and
 * contents have the large-count layout of MPI-4.0 (counts and
 * displacements in the large-count array), which the int queries refuse
 * with MPI_ERR_TYPE while the _c queries read int-built types as before;
 * sizes and extents past INT_MAX (the int queries read MPI_UNDEFINED);
 * MPI_Pack_c / Unpack_c / Pack_size_c and the external32 _c calls; and a
 * large-count type carries data between two ranks.
 */
#include <limits.h>
#include <stdbool.h>

#include "mpitest.h"

#define BUF 4096
static unsigned char src[BUF];

/* Two types must have the same map: size, bounds, and what MPI_Pack makes
 * of `count` instances laid over src. */
static void same_map(const char *what, MPI_Datatype a, MPI_Datatype b, int count)
{
    MPI_Count sa, sb, la, lb, ea, eb, tla, tlb, tea, teb;
    MPI_CHECK(MPI_Type_size_c(a, &sa));
    MPI_CHECK(MPI_Type_size_c(b, &sb));
    MPI_CHECK(MPI_Type_get_extent_c(a, &la, &ea));
    MPI_CHECK(MPI_Type_get_extent_c(b, &lb, &eb));
    MPI_CHECK(MPI_Type_get_true_extent_c(a, &tla, &tea));
    MPI_CHECK(MPI_Type_get_true_extent_c(b, &tlb, &teb));
    CHECK(sa == sb && la == lb && ea == eb && tla == tlb && tea == teb,
          "%s: size %lld/%lld lb %lld/%lld extent %lld/%lld true %lld+%lld / %lld+%lld", what,
          (long long)sa, (long long)sb, (long long)la, (long long)lb, (long long)ea,
          (long long)eb, (long long)tla, (long long)tea, (long long)tlb, (long long)teb);
    static unsigned char pa[BUF * 4], pb[BUF * 4];
    MPI_Count posa = 0;
    MPI_CHECK(MPI_Pack_c(src, count, a, pa, sizeof pa, &posa, MPI_COMM_WORLD));
    int ipos = 0;
    MPI_CHECK(MPI_Pack(src, count, b, pb, (int)sizeof pb, &ipos, MPI_COMM_WORLD));
    CHECK(posa == ipos && posa == count * sa && memcmp(pa, pb, (size_t)posa) == 0,
          "%s: packed %lld / %d bytes differ", what, (long long)posa, ipos);
}

/* Make a type with `call` (which stores it in t) and commit it. */
#define MAKE(call, t)                                                              \
    do {                                                                           \
        MPI_CHECK(call);                                                           \
        MPI_CHECK(MPI_Type_commit(&(t)));                                          \
    } while (0)

/* Envelope and contents of a _c type: combiner, the counts of each array
 * and the large counts themselves. */
static void check_contents(const char *what, MPI_Datatype t, int comb, int ni, int nc,
                           const MPI_Count *want, int nd)
{
    MPI_Count gi, ga, gc, gd;
    int gcomb;
    MPI_CHECK(MPI_Type_get_envelope_c(t, &gi, &ga, &gc, &gd, &gcomb));
    CHECK(gcomb == comb && gi == ni && ga == 0 && gc == nc && gd == nd,
          "%s: envelope %d: %lld ints %lld aints %lld counts %lld types", what, gcomb,
          (long long)gi, (long long)ga, (long long)gc, (long long)gd);
    int ints[16];
    MPI_Aint aints[1];
    MPI_Count counts[32];
    MPI_Datatype types[4];
    MPI_CHECK(MPI_Type_get_contents_c(t, 16, 1, 32, 4, ints, aints, counts, types));
    for (int i = 0; i < nc; i++)
        CHECK(counts[i] == want[i], "%s: large count %d is %lld, want %lld", what, i,
              (long long)counts[i], (long long)want[i]);
    for (int i = 0; i < nd; i++) {
        int c, n1, n2, n3;
        MPI_CHECK(MPI_Type_get_envelope(types[i], &n1, &n2, &n3, &c));
        if (c != MPI_COMBINER_NAMED)
            MPI_CHECK(MPI_Type_free(&types[i]));
    }
    /* the int queries cannot describe it */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int n1, n2, n3, c;
    CHECK(MPI_Type_get_envelope(t, &n1, &n2, &n3, &c) != MPI_SUCCESS,
          "%s: MPI_Type_get_envelope accepted a large-count type", what);
    CHECK(MPI_Type_get_contents(t, 16, 1, 4, ints, aints, types) != MPI_SUCCESS,
          "%s: MPI_Type_get_contents accepted a large-count type", what);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

static void test_constructors(void)
{
    MPI_Datatype a, b;
    /* contiguous */
    MAKE(MPI_Type_contiguous_c(5, MPI_INT, &a), a);
    MAKE(MPI_Type_contiguous(5, MPI_INT, &b), b);
    same_map("contiguous", a, b, 3);
    check_contents("contiguous", a, MPI_COMBINER_CONTIGUOUS, 0, 1, (MPI_Count[]){5}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    /* vector and hvector */
    MAKE(MPI_Type_vector_c(4, 2, 5, MPI_SHORT, &a), a);
    MAKE(MPI_Type_vector(4, 2, 5, MPI_SHORT, &b), b);
    same_map("vector", a, b, 2);
    check_contents("vector", a, MPI_COMBINER_VECTOR, 0, 3, (MPI_Count[]){4, 2, 5}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MAKE(MPI_Type_create_hvector_c(3, 2, 21, MPI_INT, &a), a);
    MAKE(MPI_Type_create_hvector(3, 2, 21, MPI_INT, &b), b);
    same_map("hvector", a, b, 2);
    check_contents("hvector", a, MPI_COMBINER_HVECTOR, 0, 3, (MPI_Count[]){3, 2, 21}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    /* indexed family */
    MPI_Count cbl[3] = {2, 0, 3}, cdi[3] = {7, 1, 0};
    int ibl[3] = {2, 0, 3}, idi[3] = {7, 1, 0};
    MPI_Aint adi[3] = {29, 3, 0};
    MPI_Count cadi[3] = {29, 3, 0};
    MAKE(MPI_Type_indexed_c(3, cbl, cdi, MPI_INT, &a), a);
    MAKE(MPI_Type_indexed(3, ibl, idi, MPI_INT, &b), b);
    same_map("indexed", a, b, 2);
    check_contents("indexed", a, MPI_COMBINER_INDEXED, 0, 7,
                   (MPI_Count[]){3, 2, 0, 3, 7, 1, 0}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MAKE(MPI_Type_create_hindexed_c(3, cbl, cadi, MPI_SHORT, &a), a);
    MAKE(MPI_Type_create_hindexed(3, ibl, adi, MPI_SHORT, &b), b);
    same_map("hindexed", a, b, 2);
    check_contents("hindexed", a, MPI_COMBINER_HINDEXED, 0, 7,
                   (MPI_Count[]){3, 2, 0, 3, 29, 3, 0}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MAKE(MPI_Type_create_indexed_block_c(3, 2, cdi, MPI_INT, &a), a);
    MAKE(MPI_Type_create_indexed_block(3, 2, idi, MPI_INT, &b), b);
    same_map("indexed_block", a, b, 2);
    check_contents("indexed_block", a, MPI_COMBINER_INDEXED_BLOCK, 0, 5,
                   (MPI_Count[]){3, 2, 7, 1, 0}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MAKE(MPI_Type_create_hindexed_block_c(3, 2, cadi, MPI_BYTE, &a), a);
    MAKE(MPI_Type_create_hindexed_block(3, 2, adi, MPI_BYTE, &b), b);
    same_map("hindexed_block", a, b, 3);
    check_contents("hindexed_block", a, MPI_COMBINER_HINDEXED_BLOCK, 0, 5,
                   (MPI_Count[]){3, 2, 29, 3, 0}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    /* struct */
    MPI_Datatype st[2] = {MPI_DOUBLE, MPI_CHAR};
    MPI_Count sbl[2] = {2, 3}, sdi[2] = {0, 17};
    int isbl[2] = {2, 3};
    MPI_Aint isdi[2] = {0, 17};
    MAKE(MPI_Type_create_struct_c(2, sbl, sdi, st, &a), a);
    MAKE(MPI_Type_create_struct(2, isbl, isdi, st, &b), b);
    same_map("struct", a, b, 3);
    check_contents("struct", a, MPI_COMBINER_STRUCT, 0, 5, (MPI_Count[]){2, 2, 3, 0, 17}, 2);
    /* the element count of a partial struct reads the large block lengths */
    MPI_Status status;
    MPI_CHECK(MPI_Status_set_elements_x(&status, MPI_BYTE, 16 + 2));
    MPI_Count el = -1;
    MPI_CHECK(MPI_Get_elements_c(&status, a, &el));
    CHECK(el == 4, "struct_c: 18 bytes hold %lld elements, want 4", (long long)el);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    /* resized */
    MAKE(MPI_Type_create_resized_c(MPI_INT, -4, 24, &a), a);
    MAKE(MPI_Type_create_resized(MPI_INT, -4, 24, &b), b);
    same_map("resized", a, b, 3);
    check_contents("resized", a, MPI_COMBINER_RESIZED, 0, 2, (MPI_Count[]){-4, 24}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    /* subarray and darray */
    MPI_Count csz[2] = {6, 7}, csub[2] = {2, 3}, cst[2] = {1, 4};
    int isz[2] = {6, 7}, isub[2] = {2, 3}, ist[2] = {1, 4};
    MAKE(MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_C, MPI_INT,
                                                     &a), a);
    MAKE(MPI_Type_create_subarray(2, isz, isub, ist, MPI_ORDER_C, MPI_INT,
                                                   &b), b);
    same_map("subarray", a, b, 1);
    check_contents("subarray", a, MPI_COMBINER_SUBARRAY, 2, 6,
                   (MPI_Count[]){6, 7, 2, 3, 1, 4}, 1);
    MPI_Type_free(&a);
    MPI_Type_free(&b);
    MPI_Count cg[2] = {9, 10};
    int ig[2] = {9, 10}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
    MAKE(MPI_Type_create_darray_c(6, 4, 2, cg, dist, darg, ps, MPI_ORDER_C,
                                                   MPI_SHORT, &a), a);
    MAKE(MPI_Type_create_darray(6, 4, 2, ig, dist, darg, ps, MPI_ORDER_C,
                                                 MPI_SHORT, &b), b);
    same_map("darray", a, b, 1);
    check_contents("darray", a, MPI_COMBINER_DARRAY, 3 * 2 + 4, 2, (MPI_Count[]){9, 10}, 1);
    int dints[16];
    MPI_Aint dai[1];
    MPI_Count dcounts[4];
    MPI_Datatype dty[1];
    MPI_CHECK(MPI_Type_get_contents_c(a, 16, 1, 4, 1, dints, dai, dcounts, dty));
    CHECK(dints[0] == 6 && dints[1] == 4 && dints[2] == 2 && dints[3] == MPI_DISTRIBUTE_BLOCK &&
              dints[5] == MPI_DISTRIBUTE_DFLT_DARG && dints[6] == 2 && dints[7] == 2 &&
              dints[8] == 3 && dints[9] == MPI_ORDER_C,
          "darray_c ints: %d %d %d %d %d %d %d %d %d %d", dints[0], dints[1], dints[2], dints[3],
          dints[4], dints[5], dints[6], dints[7], dints[8], dints[9]);
    MPI_Type_free(&a);
    MPI_Type_free(&b);

    /* the _c queries read an int-built type as MPI-3 described it */
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &b));
    MPI_Count gi, ga, gc, gd;
    int comb;
    MPI_CHECK(MPI_Type_get_envelope_c(b, &gi, &ga, &gc, &gd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && gi == 3 && ga == 0 && gc == 0 && gd == 1,
          "envelope_c of an int vector: %lld %lld %lld %lld", (long long)gi, (long long)ga,
          (long long)gc, (long long)gd);
    MPI_Type_free(&b);
}

/* Sizes and extents that an int cannot hold, without the memory. */
static void test_big_types(void)
{
    const MPI_Count n = (MPI_Count)3 * 1000 * 1000 * 1000;
    MPI_Datatype t;
    MPI_CHECK(MPI_Type_contiguous_c(n, MPI_BYTE, &t));
    MPI_Count sz, lb, ext;
    int isz;
    MPI_CHECK(MPI_Type_size_c(t, &sz));
    MPI_CHECK(MPI_Type_size(t, &isz));
    MPI_CHECK(MPI_Type_get_extent_c(t, &lb, &ext));
    CHECK(sz == n && isz == MPI_UNDEFINED && lb == 0 && ext == n,
          "contiguous_c of %lld bytes: size %lld / %d, extent %lld", (long long)n, (long long)sz,
          isz, (long long)ext);
    MPI_Count psz = 0;
    MPI_CHECK(MPI_Pack_size_c(2, t, MPI_COMM_WORLD, &psz));
    CHECK(psz >= 2 * n, "Pack_size_c: %lld", (long long)psz);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int ipsz;
    CHECK(MPI_Pack_size(2, t, MPI_COMM_WORLD, &ipsz) != MPI_SUCCESS,
          "MPI_Pack_size gave an int for %lld bytes", (long long)(2 * n));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_Type_free(&t);
    /* a struct whose second field is 5 GB away */
    MPI_Count bl[2] = {1, 1}, di[2] = {0, (MPI_Count)5 << 30};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_CHECK(MPI_Type_create_struct_c(2, bl, di, ty, &t));
    MPI_CHECK(MPI_Type_get_true_extent_c(t, &lb, &ext));
    CHECK(lb == 0 && ext == di[1] + 4, "struct_c true extent %lld", (long long)ext);
    MPI_Type_free(&t);
    /* a subarray of an array of 2^33 elements */
    MPI_Count sizes[1] = {(MPI_Count)1 << 33}, subs[1] = {10}, starts[1] = {(MPI_Count)1 << 32};
    MPI_CHECK(MPI_Type_create_subarray_c(1, sizes, subs, starts, MPI_ORDER_C, MPI_SHORT, &t));
    MPI_CHECK(MPI_Type_get_extent_c(t, &lb, &ext));
    MPI_Count tlb, text;
    MPI_CHECK(MPI_Type_get_true_extent_c(t, &tlb, &text));
    CHECK(lb == 0 && ext == sizes[0] * 2 && tlb == starts[0] * 2 && text == 20,
          "subarray_c: extent %lld true %lld+%lld", (long long)ext, (long long)tlb,
          (long long)text);
    MPI_Type_free(&t);
    /* a darray: one process owning a block of 2^33 elements */
    int dist = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG, ps = 1;
    MPI_CHECK(MPI_Type_create_darray_c(1, 0, 1, sizes, &dist, &darg, &ps, MPI_ORDER_C, MPI_BYTE,
                                       &t));
    MPI_CHECK(MPI_Type_size_c(t, &sz));
    CHECK(sz == sizes[0], "darray_c: size %lld", (long long)sz);
    MPI_Type_free(&t);
}

static void test_pack(void)
{
    MPI_Datatype v;
    MPI_CHECK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &v));
    MPI_CHECK(MPI_Type_commit(&v));
    int in[24], out[24];
    for (int i = 0; i < 24; i++) {
        in[i] = i * 11 + 1;
        out[i] = -1;
    }
    unsigned char buf[256];
    MPI_Count pos = 3, size;
    MPI_CHECK(MPI_Pack_size_c(2, v, MPI_COMM_WORLD, &size));
    CHECK(size == 48, "Pack_size_c: %lld", (long long)size);
    MPI_CHECK(MPI_Pack_c(in, 2, v, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 3 + 48, "Pack_c position %lld", (long long)pos);
    pos = 3;
    MPI_CHECK(MPI_Unpack_c(buf, sizeof buf, &pos, out, 2, v, MPI_COMM_WORLD));
    CHECK(pos == 3 + 48, "Unpack_c position %lld", (long long)pos);
    MPI_Aint lb, ext;
    MPI_CHECK(MPI_Type_get_extent(v, &lb, &ext));
    for (int inst = 0; inst < 2; inst++)
        for (int blk = 0; blk < 3; blk++)
            for (int j = 0; j < 2; j++) {
                int idx = inst * (int)(ext / 4) + blk * 4 + j;
                CHECK(out[idx] == in[idx], "Unpack_c: int %d is %d, want %d", idx, out[idx],
                      in[idx]);
            }
    /* external32: big-endian ints, MPI_Count positions */
    MPI_Count esz = 0, epos = 0;
    MPI_CHECK(MPI_Pack_external_size_c("external32", 2, v, &esz));
    CHECK(esz == 48, "Pack_external_size_c: %lld", (long long)esz);
    MPI_CHECK(MPI_Pack_external_c("external32", in, 2, v, buf, sizeof buf, &epos));
    CHECK(epos == 48 && buf[0] == 0 && buf[3] == 1 && buf[7] == 12,
          "Pack_external_c: position %lld, bytes %u %u %u", (long long)epos, buf[0], buf[3],
          buf[7]);
    memset(out, 0xff, sizeof out);
    epos = 0;
    MPI_CHECK(MPI_Unpack_external_c("external32", buf, esz, &epos, out, 2, v));
    CHECK(epos == 48 && out[0] == in[0] && out[5] == in[5], "Unpack_external_c");
    /* errors: truncation and a negative count */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    pos = 0;
    int rc = MPI_Pack_c(in, 2, v, buf, 40, &pos, MPI_COMM_WORLD), cls = 0;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE && pos == 0, "Pack_c into 40 bytes: class %d", cls);
    rc = MPI_Pack_c(in, -1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "Pack_c of -1: class %d", cls);
    MPI_Datatype bad;
    rc = MPI_Type_contiguous_c(-2, MPI_INT, &bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "contiguous_c of -2: class %d", cls);
    MPI_Count nbl[2] = {1, -1}, ndi[2] = {0, 8};
    rc = MPI_Type_indexed_c(2, nbl, ndi, MPI_INT, &bad);
    CHECK(rc != MPI_SUCCESS, "indexed_c with a negative block length accepted");
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_Type_free(&v);
}

/* A struct_c type carries data between two ranks. */
static void test_transfer(int rank, int size)
{
    if (size < 2)
        return;
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    MPI_Count bl[2] = {3, 2}, di[2] = {0, 16};
    MPI_CHECK(MPI_Type_create_struct_c(2, bl, di, ty, &t));
    MPI_CHECK(MPI_Type_commit(&t));
    struct rec {
        int a[3];
        int pad;
        double d[2];
    } r[5];
    if (rank == 0) {
        for (int i = 0; i < 5; i++) {
            r[i].a[0] = i;
            r[i].a[1] = i * 2;
            r[i].a[2] = i * 3;
            r[i].d[0] = i + 0.5;
            r[i].d[1] = i - 0.25;
        }
        MPI_CHECK(MPI_Send_c(r, 5, t, 1, 3, MPI_COMM_WORLD));
    } else if (rank == 1) {
        memset(r, 0, sizeof r);
        MPI_Status st;
        MPI_CHECK(MPI_Recv_c(r, 5, t, 0, 3, MPI_COMM_WORLD, &st));
        MPI_Count n;
        MPI_CHECK(MPI_Get_count_c(&st, t, &n));
        CHECK(n == 5, "received %lld records", (long long)n);
        for (int i = 0; i < 5; i++)
            CHECK(r[i].a[2] == i * 3 && r[i].d[1] == i - 0.25, "record %d wrong", i);
    }
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < BUF; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    test_constructors();
    test_big_types();
    test_pack();
    test_transfer(rank, size);
    MPI_CHECK(MPI_Finalize());
    if (rank == 0)
        printf("datatype_large: ok\n");
    return 0;
}
