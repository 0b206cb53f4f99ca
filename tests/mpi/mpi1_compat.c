/*
 * mpi1_compat.c — the MPI-1 functions removed in MPI-3.0 that old programs
 * still call (src/mpi/misc/deprecated.c): a struct built with MPI_Address and
 * MPI_Type_struct travels between ranks intact and has the layout of its
 * MPI_Type_create_struct twin; MPI_Type_hvector / _hindexed pack like their
 * MPI-2 names; MPI_Type_extent / _lb / _ub agree with MPI_Type_get_extent;
 * an error handler made by MPI_Errhandler_create, installed by
 * MPI_Errhandler_set, is the one MPI_Errhandler_get returns and the one
 * that runs on an error. The MPI_LB / MPI_UB markers set a struct's
 * bounds as MPI-1 said (the least LB, the greatest UB, through nesting),
 * and a type stretched by MPI_UB strides through a buffer between ranks.
 */
#include <string.h>

#include "mpitest.h"

struct particle {
    int id;
    double pos[3];
    char tag[5];
};

static int handler_calls, handler_code;

static void count_errors(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    handler_code = *code;
}

/* The packed bytes of `count` elements of `t` from `buf`. */
static int pack_of(const void *buf, int count, MPI_Datatype t, unsigned char *out, int cap)
{
    int pos = 0;
    MPI_CHECK(MPI_Pack(buf, count, t, out, cap, &pos, MPI_COMM_WORLD));
    return pos;
}

static void test_struct(int rank, int size)
{
    struct particle p[2];
    MPI_Aint base, a_id, a_pos, a_tag;
    MPI_CHECK(MPI_Address(&p[0], &base));
    MPI_CHECK(MPI_Address(&p[0].id, &a_id));
    MPI_CHECK(MPI_Address(&p[0].pos, &a_pos));
    MPI_CHECK(MPI_Address(&p[0].tag, &a_tag));
    int bl[3] = {1, 3, 5};
    MPI_Aint disp[3] = {a_id - base, a_pos - base, a_tag - base};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, old_t, new_t;
    MPI_CHECK(MPI_Type_struct(3, bl, disp, types, &old_t));
    MPI_CHECK(MPI_Type_create_struct(3, bl, disp, types, &new_t));
    MPI_CHECK(MPI_Type_commit(&old_t));
    MPI_CHECK(MPI_Type_commit(&new_t));

    MPI_Aint lb_new, ext_new, ext, lb, ub;
    MPI_CHECK(MPI_Type_get_extent(old_t, &lb_new, &ext_new));
    MPI_CHECK(MPI_Type_extent(old_t, &ext));
    MPI_CHECK(MPI_Type_lb(old_t, &lb));
    MPI_CHECK(MPI_Type_ub(old_t, &ub));
    CHECK(ext == ext_new && lb == lb_new && ub == lb_new + ext_new,
          "extent %ld lb %ld ub %ld, MPI_Type_get_extent says lb %ld extent %ld", (long)ext,
          (long)lb, (long)ub, (long)lb_new, (long)ext_new);
    MPI_Aint e2;
    MPI_CHECK(MPI_Type_get_extent(new_t, &lb_new, &e2));
    CHECK(e2 == ext, "MPI_Type_struct extent %ld, MPI_Type_create_struct %ld", (long)ext, (long)e2);

    /* Rank 0 sends two particles to every other rank, which checks them. */
    if (rank == 0) {
        for (int i = 0; i < 2; i++) {
            p[i].id = 100 + i;
            for (int k = 0; k < 3; k++)
                p[i].pos[k] = i * 10 + k + 0.5;
            memcpy(p[i].tag, i ? "beta" : "alph", 5);
        }
        for (int r = 1; r < size; r++)
            MPI_CHECK(MPI_Send(p, 2, old_t, r, 7, MPI_COMM_WORLD));
    } else {
        memset(p, 0, sizeof p);
        MPI_CHECK(MPI_Recv(p, 2, new_t, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2; i++) {
            CHECK(p[i].id == 100 + i, "particle %d id %d", i, p[i].id);
            for (int k = 0; k < 3; k++)
                CHECK(p[i].pos[k] == i * 10 + k + 0.5, "particle %d pos[%d] %g", i, k,
                      p[i].pos[k]);
            CHECK(!memcmp(p[i].tag, i ? "beta" : "alph", 5), "particle %d tag", i);
        }
    }
    MPI_CHECK(MPI_Type_free(&old_t));
    MPI_CHECK(MPI_Type_free(&new_t));
}

static void test_h_constructors(void)
{
    int src[64];
    for (int i = 0; i < 64; i++)
        src[i] = i * 7 + 1;
    MPI_Datatype a, b;
    unsigned char pa[512], pb[512];

    MPI_CHECK(MPI_Type_hvector(4, 2, 5 * sizeof(int), MPI_INT, &a));
    MPI_CHECK(MPI_Type_create_hvector(4, 2, 5 * sizeof(int), MPI_INT, &b));
    MPI_CHECK(MPI_Type_commit(&a));
    MPI_CHECK(MPI_Type_commit(&b));
    int na = pack_of(src, 2, a, pa, sizeof pa), nb = pack_of(src, 2, b, pb, sizeof pb);
    CHECK(na == 16 * (int)sizeof(int) && na == nb && !memcmp(pa, pb, (size_t)na),
          "MPI_Type_hvector packs %d bytes, MPI_Type_create_hvector %d", na, nb);
    /* block 1 of element 0 starts 5 ints in */
    int second;
    memcpy(&second, pa + 2 * sizeof(int), sizeof second);
    CHECK(second == src[5], "hvector's second block starts with %d, expected %d", second, src[5]);
    MPI_CHECK(MPI_Type_free(&a));
    MPI_CHECK(MPI_Type_free(&b));

    int bl[3] = {3, 1, 2};
    MPI_Aint disp[3] = {40 * sizeof(int), 0, 9 * sizeof(int)};
    MPI_CHECK(MPI_Type_hindexed(3, bl, disp, MPI_INT, &a));
    MPI_CHECK(MPI_Type_create_hindexed(3, bl, disp, MPI_INT, &b));
    MPI_CHECK(MPI_Type_commit(&a));
    MPI_CHECK(MPI_Type_commit(&b));
    na = pack_of(src, 1, a, pa, sizeof pa);
    nb = pack_of(src, 1, b, pb, sizeof pb);
    int want[6] = {src[40], src[41], src[42], src[0], src[9], src[10]};
    CHECK(na == (int)sizeof want && na == nb && !memcmp(pa, want, sizeof want) &&
              !memcmp(pa, pb, sizeof want),
          "MPI_Type_hindexed packs %d bytes (MPI_Type_create_hindexed %d), or other values", na,
          nb);
    MPI_CHECK(MPI_Type_free(&a));
    MPI_CHECK(MPI_Type_free(&b));
}

static void test_errhandler(void)
{
    MPI_Comm c;
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Errhandler_create(count_errors, &eh));
    MPI_CHECK(MPI_Errhandler_set(c, eh));
    MPI_CHECK(MPI_Errhandler_get(c, &got));
    CHECK(got == eh, "MPI_Errhandler_get returned another handler");
    MPI_CHECK(MPI_Errhandler_free(&got));
    int v = 0, rc = MPI_Send(&v, 1, MPI_INT, 1 << 20, 0, c); /* no such rank */
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK, "send to a bad rank: class %d", cls);
    CHECK(handler_calls == 1 && handler_code == rc, "the handler ran %d times (code %d, rc %d)",
          handler_calls, handler_code, rc);
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_free(&c));
}

static void check_bounds(const char *what, MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, int size)
{
    MPI_Aint l, e;
    int sz;
    MPI_CHECK(MPI_Type_get_extent(t, &l, &e));
    MPI_CHECK(MPI_Type_size(t, &sz));
    CHECK(l == lb && e == extent && sz == size, "%s: lb %ld extent %ld size %d, expected %ld %ld %d",
          what, (long)l, (long)e, sz, (long)lb, (long)extent, size);
}

static void test_markers(int rank, int size)
{
    check_bounds("MPI_LB", MPI_LB, 0, 0, 0);
    check_bounds("MPI_UB", MPI_UB, 0, 0, 0);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_CHECK(MPI_Type_get_name(MPI_UB, name, &len));
    CHECK(strcmp(name, "MPI_UB") == 0, "MPI_UB's name is '%s'", name);

    /* two ints between an LB at -8 and a UB at 24 */
    int bl[5] = {1, 2, 1, 1, 1};
    MPI_Aint d[5] = {-8, 0, 24};
    MPI_Datatype ty[5] = {MPI_LB, MPI_INT, MPI_UB}, framed, several, nested;
    MPI_CHECK(MPI_Type_create_struct(3, bl, d, ty, &framed));
    MPI_CHECK(MPI_Type_commit(&framed));
    check_bounds("struct{LB@-8, 2 int@0, UB@24}", framed, -8, 32, 8);
    MPI_Aint tlb, text;
    MPI_CHECK(MPI_Type_get_true_extent(framed, &tlb, &text));
    CHECK(tlb == 0 && text == 8, "true lb %ld true extent %ld", (long)tlb, (long)text);

    /* several markers: the least LB and the greatest UB count, not the data */
    MPI_Aint d2[5] = {16, 0, 40, 4, -4};
    MPI_Datatype ty2[5] = {MPI_UB, MPI_INT, MPI_UB, MPI_LB, MPI_LB};
    int bl2[5] = {1, 1, 1, 1, 1};
    MPI_CHECK(MPI_Type_create_struct(5, bl2, d2, ty2, &several));
    MPI_CHECK(MPI_Type_commit(&several));
    check_bounds("struct{UB@16, int@0, UB@40, LB@4, LB@-4}", several, -4, 44, 4);

    /* the markers of an inner type stay explicit: an int below them does
     * not lower the bound (the standard's rule, and Open MPI's answer for
     * the same struct of a resized type; MPICH 4 says lb 0, extent 124) */
    MPI_Aint d3[2] = {100, 0};
    MPI_Datatype ty3[2] = {framed, MPI_INT};
    MPI_CHECK(MPI_Type_create_struct(2, bl2, d3, ty3, &nested));
    MPI_CHECK(MPI_Type_commit(&nested));
    check_bounds("struct{framed@100, int@0}", nested, 92, 32, 12);

    /* ROMIO's tests' idiom: an int stretched to two by MPI_UB, sent as a
     * count of 5 (every other int) and received contiguous */
    MPI_Datatype every_other;
    MPI_Aint d4[2] = {0, 2 * sizeof(int)};
    MPI_Datatype ty4[2] = {MPI_INT, MPI_UB};
    MPI_CHECK(MPI_Type_struct(2, bl2, d4, ty4, &every_other));
    MPI_CHECK(MPI_Type_commit(&every_other));
    check_bounds("struct{int@0, UB@8}", every_other, 0, 2 * sizeof(int), sizeof(int));
    int buf[10];
    if (rank == 0) {
        for (int i = 0; i < 10; i++)
            buf[i] = 1000 + i;
        for (int r = 1; r < size; r++)
            MPI_CHECK(MPI_Send(buf, 5, every_other, r, 9, MPI_COMM_WORLD));
    } else {
        memset(buf, 0, sizeof buf);
        MPI_Status st;
        MPI_CHECK(MPI_Recv(buf, 10, MPI_INT, 0, 9, MPI_COMM_WORLD, &st));
        int n;
        MPI_CHECK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 5, "received %d ints, expected 5", n);
        for (int i = 0; i < 5; i++)
            CHECK(buf[i] == 1000 + 2 * i, "int %d is %d, expected %d", i, buf[i], 1000 + 2 * i);
    }
    MPI_CHECK(MPI_Type_free(&framed));
    MPI_CHECK(MPI_Type_free(&several));
    MPI_CHECK(MPI_Type_free(&nested));
    MPI_CHECK(MPI_Type_free(&every_other));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    test_struct(rank, size);
    test_h_constructors();
    test_errhandler();
    test_markers(rank, size);
    MPI_CHECK(MPI_Finalize());
    return 0;
}
