/*
 * datatype_errors.c — error classes of the datatype functions under
 * MPI_ERRORS_RETURN: bad counts and block lengths, invalid, null, freed and
 * uncommitted types (in constructors, queries, sends, packing), freeing a
 * predefined type, bad subarray/darray arguments, too small pack buffers,
 * types too large to describe. Every failing call must leave things usable.
 */
#include "mpitest.h"

static void expect(int rc, int cls, const char *what)
{
    int c = -1;
    if (rc != MPI_SUCCESS)
        MPI_CHECK(MPI_Error_class(rc, &c));
    CHECK(rc != MPI_SUCCESS && c == cls, "%s: returned %d (class %d), expected class %d", what,
          rc, c, cls);
}
#define EXPECT(call, cls) expect((call), cls, #call)

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype t = MPI_DATATYPE_NULL, u, bogus = PROUST_MPI_KIND_DATATYPE | 4321;
    int ints[4] = {1, 1, 1, 1}, disp[4] = {0, 1, 2, 3};
    MPI_Aint adisp[4] = {0, 8, 16, 24};

    /* counts and block lengths */
    EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_hvector(2, -1, 8, MPI_INT, &t), MPI_ERR_ARG);
    int badbl[2] = {1, -3};
    EXPECT(MPI_Type_indexed(2, badbl, disp, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_hindexed(-1, ints, adisp, MPI_INT, &t), MPI_ERR_COUNT);
    EXPECT(MPI_Type_create_indexed_block(2, -1, disp, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_hindexed_block(2, 1, NULL, MPI_INT, &t), MPI_ERR_ARG);
    MPI_Datatype tys[2] = {MPI_INT, MPI_DATATYPE_NULL};
    EXPECT(MPI_Type_create_struct(2, ints, adisp, tys, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_create_struct(2, badbl, adisp, tys, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_struct(-1, ints, adisp, tys, &t), MPI_ERR_COUNT);
    /* invalid input types and outputs */
    EXPECT(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, bogus, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, MPI_COMM_WORLD, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_contiguous(2, MPI_INT, NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_resized(bogus, 0, 8, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(MPI_DATATYPE_NULL, ints), MPI_ERR_TYPE);
    EXPECT(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    MPI_Aint lb, ext;
    EXPECT(MPI_Type_get_extent(bogus, &lb, &ext), MPI_ERR_TYPE);
    EXPECT(MPI_Type_get_true_extent(MPI_INT, NULL, &ext), MPI_ERR_ARG);
    EXPECT(MPI_Type_commit(NULL), MPI_ERR_ARG);
    EXPECT(MPI_Type_commit(&bogus), MPI_ERR_TYPE);

    /* predefined types cannot be freed; null and freed handles are invalid */
    MPI_Datatype pre = MPI_INT;
    EXPECT(MPI_Type_free(&pre), MPI_ERR_TYPE);
    CHECK(pre == MPI_INT, "failed free changed the handle");
    pre = MPI_DATATYPE_NULL;
    EXPECT(MPI_Type_free(&pre), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_contiguous(2, MPI_INT, &t));
    u = t;
    MPI_CHECK(MPI_Type_free(&t));
    EXPECT(MPI_Type_free(&u), MPI_ERR_TYPE);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    EXPECT(MPI_Type_get_name(u, name, &len), MPI_ERR_TYPE);

    /* envelope/contents */
    int I[8];
    MPI_Aint A[8];
    MPI_Datatype D[8];
    EXPECT(MPI_Type_get_contents(MPI_DOUBLE, 8, 8, 8, I, A, D), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
    EXPECT(MPI_Type_get_contents(t, 2, 8, 8, I, A, D), MPI_ERR_ARG);
    EXPECT(MPI_Type_get_contents(t, 8, 8, 0, I, A, D), MPI_ERR_ARG);

    /* uncommitted types cannot be communicated or packed */
    int buf[16] = {0}, pos = 0;
    char packed[64];
    EXPECT(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    MPI_Request req = MPI_REQUEST_NULL;
    EXPECT(MPI_Isend(buf, 1, t, 0, 0, MPI_COMM_SELF, &req), MPI_ERR_TYPE);
    EXPECT(MPI_Irecv(buf, 1, t, 0, 0, MPI_COMM_SELF, &req), MPI_ERR_TYPE);
    EXPECT(MPI_Pack(buf, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_SELF), MPI_ERR_TYPE);
    int psize;
    MPI_CHECK(MPI_Pack_size(3, t, MPI_COMM_WORLD, &psize)); /* size only: no commit needed */
    CHECK(psize == 24, "Pack_size %d", psize);
    MPI_CHECK(MPI_Type_commit(&t));
    /* once committed the same calls work (self send through a request) */
    MPI_CHECK(MPI_Irecv(buf + 8, 1, t, 0, 0, MPI_COMM_SELF, &req));
    buf[0] = 11;
    buf[3] = 22;
    MPI_CHECK(MPI_Send(buf, 1, t, 0, 0, MPI_COMM_SELF));
    MPI_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(buf[8] == 11 && buf[11] == 22 && buf[9] == 0, "self transfer: %d %d %d", buf[8],
          buf[11], buf[9]);

    /* packing: counts, buffers, positions, communicators */
    pos = 0;
    EXPECT(MPI_Pack(buf, -1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Pack(buf, 9, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    CHECK(pos == 0, "failed pack moved the position to %d", pos);
    pos = 60;
    EXPECT(MPI_Pack(buf, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    pos = 65;
    EXPECT(MPI_Pack(buf, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    pos = 0;
    EXPECT(MPI_Pack(buf, 1, t, packed, sizeof packed, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
    EXPECT(MPI_Pack(buf, 1, t, packed, sizeof packed, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Pack(buf, 1, t, packed, -1, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    MPI_CHECK(MPI_Pack(buf, 2, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16, "position %d after packing 2 vectors", pos);
    pos = 0;
    EXPECT(MPI_Unpack(packed, 12, &pos, buf, 2, t, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    EXPECT(MPI_Unpack(packed, 16, &pos, buf, 2, bogus, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
    EXPECT(MPI_Pack_size(1 << 30, MPI_DOUBLE, MPI_COMM_WORLD, &psize), MPI_ERR_ARG);
    MPI_CHECK(MPI_Type_free(&t));

    /* subarray and darray arguments */
    int sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    EXPECT(MPI_Type_create_subarray(0, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    st[1] = 3; /* 3 + 3 > 5 */
    EXPECT(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    st[1] = 2;
    sub[0] = 5;
    EXPECT(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    sub[0] = 2;
    sz[1] = 0;
    EXPECT(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
    sz[1] = 5;
    EXPECT(MPI_Type_create_subarray(2, sz, sub, st, 99, MPI_INT, &t), MPI_ERR_ARG);
    EXPECT(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, bogus, &t), MPI_ERR_TYPE);
    int gs[2] = {10, 10}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    EXPECT(MPI_Type_create_darray(5, 0, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG); /* 2x2 grid is not 5 processes */
    EXPECT(MPI_Type_create_darray(4, 4, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG); /* rank out of range */
    da[0] = 4; /* 4 * 2 < 10 */
    EXPECT(MPI_Type_create_darray(4, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
    da[0] = MPI_DISTRIBUTE_DFLT_DARG;
    di[1] = MPI_DISTRIBUTE_NONE; /* not distributed over 2 processes */
    EXPECT(MPI_Type_create_darray(4, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);
    di[1] = 7;
    EXPECT(MPI_Type_create_darray(4, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t),
           MPI_ERR_ARG);

    /* sizes beyond MPI_Count, type maps beyond what can be flattened */
    MPI_Datatype a, b;
    MPI_CHECK(MPI_Type_contiguous(1 << 30, MPI_INT, &a));
    MPI_CHECK(MPI_Type_contiguous(1 << 30, a, &b));
    EXPECT(MPI_Type_contiguous(1 << 30, b, &t), MPI_ERR_ARG);
    MPI_Count bsize;
    MPI_CHECK(MPI_Type_size_x(b, &bsize));
    CHECK(bsize == (MPI_Count)4 << 60, "size_x %lld", bsize);
    int isize;
    MPI_CHECK(MPI_Type_size(b, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Type_size of a huge type: %d", isize);
    MPI_CHECK(MPI_Type_free(&a));
    MPI_CHECK(MPI_Type_free(&b));
    MPI_CHECK(MPI_Type_vector(1 << 16, 1, 2, MPI_INT, &a));
    EXPECT(MPI_Type_vector(1 << 14, 1, 1 << 18, a, &t), MPI_ERR_NO_MEM);
    MPI_CHECK(MPI_Type_free(&a));

    MPI_CHECK(MPI_Finalize());
    return 0;
}
