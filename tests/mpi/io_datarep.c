/*
 * io_datarep.c — data representations (MPI-4.1 §14.5).
 *
 * Checks:
 *  - "native": ints and doubles written through a native view are their
 *    memory bytes in the file; MPI_File_get_type_extent is the type's extent;
 *  - "internal": what is written reads back the same through an internal
 *    view, at explicit offsets too (the bytes are the implementation's);
 *  - "external32": ints and doubles written through external32 views (a
 *    contiguous and a vector memory type) are, read back raw with a native
 *    view, big-endian (checked by hand) and the same bytes as
 *    MPI_Pack_external("external32") of the same data; they read back
 *    through the external32 view as the values written;
 *    MPI_File_get_type_extent under external32 (MPI_CHAR 1, MPI_SHORT 2,
 *    MPI_INT 4, MPI_FLOAT 4, MPI_DOUBLE 8, MPI_LONG_LONG 8, 5 doubles 40),
 *    MPI_File_get_view names the representation;
 *  - MPI_Register_datarep without conversion functions
 *    (MPI_CONVERSION_FN_NULL): a second registration of the name ->
 *    MPI_ERR_DUP_DATAREP, through MPI_Register_datarep_c too;
 *  - MPI_Register_datarep: a representation "proust_xor" storing each int
 *    XOR 0x5a5a5a5a (the raw bytes are checked, the conversion callbacks
 *    get the extra state and the datatype), one "proust_wide" storing each
 *    int in 8 bytes (its dtype_file_extent_fn sets the file layout and
 *    MPI_File_get_type_extent), one whose write conversion fails
 *    (MPI_ERR_CONVERSION), the large-count MPI_Register_datarep_c; a
 *    second registration of a name -> MPI_ERR_DUP_DATAREP.
 */
#include "io_util.h"

#define NI 37
#define ND 23

static MPI_File open_file(const char *name, int amode)
{
    char p[2048];
    MPI_File fh = MPI_FILE_NULL;
    IO_CALL(MPI_File_open(MPI_COMM_WORLD, io_path(p, sizeof p, name), amode, MPI_INFO_NULL, &fh));
    return fh;
}

static void sync_all(MPI_File fh)
{
    IO_CALL(MPI_File_sync(fh));
    IO_CALL(MPI_Barrier(MPI_COMM_WORLD));
    IO_CALL(MPI_File_sync(fh));
}

static void values(int *iv, double *dv, int test)
{
    for (int i = 0; i < NI; i++)
        iv[i] = (int)(io_mix(io_seed(io_rank, test) + (uint64_t)i) & 0xffffffffu);
    iv[0] = -1;
    iv[1] = 0x01020304;
    for (int i = 0; i < ND; i++)
        dv[i] = (double)(io_rank + 1) * (i - 11.25) / 3.0;
}

static void check_rep(MPI_File fh, const char *want)
{
    MPI_Offset d;
    MPI_Datatype e, f;
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    IO_CALL(MPI_File_get_view(fh, &d, &e, &f, rep));
    if (!strcmp(want, "internal") && !strcmp(rep, "native"))
        /* ROMIO (MPICH 4.0) only remembers whether the view is external32 */
        IO_CHECK_ROMIO_DEVIATES(0, "get_view datarep \"%s\", expected \"%s\"", rep, want);
    else
        IO_CHECK(!strcmp(rep, want), "get_view datarep \"%s\", expected \"%s\"", rep, want);
}

static void expect_extent(MPI_File fh, MPI_Datatype t, MPI_Aint want, const char *what)
{
    MPI_Aint got = -1;
    IO_CALL(MPI_File_get_type_extent(fh, t, &got));
    IO_CHECK(got == want, "MPI_File_get_type_extent(%s) = %ld, expected %ld", what, (long)got,
             (long)want);
#if MPI_VERSION >= 4
    MPI_Count gc = -1;
    IO_CALL(MPI_File_get_type_extent_c(fh, t, &gc));
    IO_CHECK(gc == (MPI_Count)want, "MPI_File_get_type_extent_c(%s) = %lld, expected %ld", what,
             (long long)gc, (long)want);
#endif
}

/* Write ints then doubles through views of `rep` in this rank's region;
 * return the region's displacement. */
static MPI_Offset write_values(MPI_File fh, const char *rep, const int *iv, const double *dv,
                               MPI_Offset region)
{
    const MPI_Offset disp = (MPI_Offset)io_rank * region;
    MPI_Status st;
    IO_CALL(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    check_rep(fh, rep);
    IO_CALL(MPI_File_write_at(fh, 0, iv, NI, MPI_INT, &st));
    IO_STATUS(&st, MPI_INT, NI, NI, "write of ints");
    MPI_Aint iext = 0;
    IO_CALL(MPI_File_get_type_extent(fh, MPI_INT, &iext));
    IO_CALL(MPI_File_set_view(fh, disp + NI * (MPI_Offset)iext, MPI_DOUBLE, MPI_DOUBLE, rep,
                              MPI_INFO_NULL));
    IO_CALL(MPI_File_write_all(fh, dv, ND, MPI_DOUBLE, &st));
    IO_STATUS(&st, MPI_DOUBLE, ND, ND, "write_all of doubles");
    return disp;
}

static void read_values_back(MPI_File fh, const char *rep, const int *iv, const double *dv,
                             MPI_Offset disp)
{
    int ib[NI];
    double db[ND];
    MPI_Aint iext = 0;
    MPI_Status st;
    memset(ib, 0, sizeof ib);
    memset(db, 0, sizeof db);
    IO_CALL(MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    IO_CALL(MPI_File_read_at_all(fh, 0, ib, NI, MPI_INT, &st));
    IO_STATUS(&st, MPI_INT, NI, NI, "read of ints");
    for (int i = 0; i < NI; i++)
        IO_CHECK(ib[i] == iv[i], "%s: int %d reads back as %d, written %d", rep, i, ib[i], iv[i]);
    /* one at an explicit offset in etypes */
    int one = 0;
    IO_CALL(MPI_File_read_at(fh, NI - 2, &one, 1, MPI_INT, &st));
    IO_CHECK(one == iv[NI - 2], "%s: int %d read alone is %d, written %d", rep, NI - 2, one,
             iv[NI - 2]);
    IO_CALL(MPI_File_get_type_extent(fh, MPI_INT, &iext));
    IO_CALL(MPI_File_set_view(fh, disp + NI * (MPI_Offset)iext, MPI_DOUBLE, MPI_DOUBLE, rep,
                              MPI_INFO_NULL));
    IO_CALL(MPI_File_read(fh, db, ND, MPI_DOUBLE, &st));
    IO_STATUS(&st, MPI_DOUBLE, ND, ND, "read of doubles");
    for (int i = 0; i < ND; i++)
        IO_CHECK(db[i] == dv[i], "%s: double %d reads back as %.17g, written %.17g", rep, i, db[i],
                 dv[i]);
}

/* ---- native and internal ---------------------------------------------------- */

static void native_and_internal(void)
{
    int iv[NI];
    double dv[ND];
    const MPI_Offset region = 1024;
    values(iv, dv, 1);
    MPI_File fh = open_file("native.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_Offset disp = write_values(fh, "native", iv, dv, region);
    expect_extent(fh, MPI_INT, sizeof(int), "MPI_INT, native");
    expect_extent(fh, MPI_DOUBLE, sizeof(double), "MPI_DOUBLE, native");
    sync_all(fh);
    read_values_back(fh, "native", iv, dv, disp);
    /* the raw bytes are the memory's */
    IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    unsigned char raw[NI * sizeof(int) + ND * sizeof(double)], want[sizeof raw];
    memcpy(want, iv, sizeof iv);
    memcpy(want + sizeof iv, dv, sizeof dv);
    IO_CALL(MPI_File_read_at(fh, disp, raw, (int)sizeof raw, MPI_BYTE, MPI_STATUS_IGNORE));
    IO_SAME(raw, want, sizeof raw, "native: the raw bytes of rank %d's values", io_rank);
    IO_CALL(MPI_File_close(&fh));

    values(iv, dv, 2);
    fh = open_file("internal.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    disp = write_values(fh, "internal", iv, dv, region);
    sync_all(fh);
    read_values_back(fh, "internal", iv, dv, disp);
    IO_CALL(MPI_File_close(&fh));
}

/* ---- external32 ------------------------------------------------------------- */

static void external32(void)
{
    int iv[NI];
    double dv[ND];
    const MPI_Offset region = 1024;
    values(iv, dv, 3);
    MPI_File fh = open_file("external32.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    MPI_Offset disp = write_values(fh, "external32", iv, dv, region);
    expect_extent(fh, MPI_CHAR, 1, "MPI_CHAR, external32");
    expect_extent(fh, MPI_SHORT, 2, "MPI_SHORT, external32");
    expect_extent(fh, MPI_INT, 4, "MPI_INT, external32");
    expect_extent(fh, MPI_FLOAT, 4, "MPI_FLOAT, external32");
    expect_extent(fh, MPI_DOUBLE, 8, "MPI_DOUBLE, external32");
    expect_extent(fh, MPI_LONG_LONG, 8, "MPI_LONG_LONG, external32");
    MPI_Datatype d5;
    IO_CALL(MPI_Type_contiguous(5, MPI_DOUBLE, &d5));
    IO_CALL(MPI_Type_commit(&d5));
    expect_extent(fh, d5, 40, "5 doubles, external32");
    IO_CALL(MPI_Type_free(&d5));

    /* ints from a vector in memory after the doubles: every other int */
    int sparse[2 * NI];
    for (int i = 0; i < 2 * NI; i++)
        sparse[i] = i % 2 ? -7 : iv[NI - 1 - i / 2];
    MPI_Datatype vec;
    IO_CALL(MPI_Type_vector(NI, 1, 2, MPI_INT, &vec));
    IO_CALL(MPI_Type_commit(&vec));
    const MPI_Offset disp2 = disp + NI * 4 + ND * 8;
    IO_CALL(MPI_File_set_view(fh, disp2, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    IO_CALL(MPI_File_write_at(fh, 0, sparse, 1, vec, MPI_STATUS_IGNORE));
    sync_all(fh);
    read_values_back(fh, "external32", iv, dv, disp);

    /* raw: big-endian, and what MPI_Pack_external gives */
    IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    enum { RAW = NI * 4 + ND * 8 + NI * 4 };
    unsigned char raw[RAW], packed[RAW], hand[RAW];
    IO_CALL(MPI_File_read_at(fh, disp, raw, RAW, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < NI; i++) {
        uint32_t u = (uint32_t)iv[i], w = (uint32_t)iv[NI - 1 - i];
        for (int k = 0; k < 4; k++) {
            hand[4 * i + k] = (unsigned char)(u >> (24 - 8 * k));
            hand[NI * 4 + ND * 8 + 4 * i + k] = (unsigned char)(w >> (24 - 8 * k));
        }
    }
    for (int i = 0; i < ND; i++) {
        uint64_t u;
        memcpy(&u, &dv[i], 8);
        for (int k = 0; k < 8; k++)
            hand[NI * 4 + 8 * i + k] = (unsigned char)(u >> (56 - 8 * k));
    }
    IO_SAME(raw, hand, RAW, "external32: raw bytes against big-endian by hand (rank %d)", io_rank);
    MPI_Aint pos = 0;
    int rev[NI];
    for (int i = 0; i < NI; i++)
        rev[i] = iv[NI - 1 - i];
    IO_CALL(MPI_Pack_external("external32", iv, NI, MPI_INT, packed, RAW, &pos));
    IO_CALL(MPI_Pack_external("external32", dv, ND, MPI_DOUBLE, packed, RAW, &pos));
    IO_CALL(MPI_Pack_external("external32", rev, NI, MPI_INT, packed, RAW, &pos));
    IO_CHECK(pos == RAW, "MPI_Pack_external packed %ld bytes, expected %d", (long)pos, RAW);
    IO_SAME(raw, packed, RAW, "external32: raw bytes against MPI_Pack_external (rank %d)",
            io_rank);

    /* the vector written back into a vector */
    int back[2 * NI];
    for (int i = 0; i < 2 * NI; i++)
        back[i] = 99;
    IO_CALL(MPI_File_set_view(fh, disp2, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    IO_CALL(MPI_File_read_at(fh, 0, back, 1, vec, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * NI; i++)
        IO_CHECK(back[i] == (i % 2 ? 99 : sparse[i]), "external32 into a vector: int %d is %d", i,
                 back[i]);
    IO_CALL(MPI_Type_free(&vec));
    IO_CALL(MPI_File_close(&fh));
}

/* ---- user representations ----------------------------------------------------- */

#define XOR 0x5a5a5a5a

typedef struct {
    int magic;
    int calls;
    int bad; /* a callback got something unexpected */
} state_t;

static state_t xor_state = {0x1234, 0, 0}, wide_state = {0x5678, 0, 0}, fail_state = {0x9abc, 0, 0};

static int xor_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                    void *extra)
{
    state_t *s = extra;
    s->calls++;
    if (s != &xor_state || t != MPI_INT || count < 0 || position < 0) {
        s->bad++;
        return MPI_ERR_CONVERSION;
    }
    int *u = (int *)userbuf + position;
    const unsigned char *f = filebuf;
    for (int i = 0; i < count; i++) {
        int v;
        memcpy(&v, f + 4 * (size_t)i, 4);
        u[i] = v ^ XOR;
    }
    return MPI_SUCCESS;
}

static int xor_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    state_t *s = extra;
    s->calls++;
    if (s != &xor_state || t != MPI_INT || count < 0 || position < 0) {
        s->bad++;
        return MPI_ERR_CONVERSION;
    }
    const int *u = (const int *)userbuf + position;
    unsigned char *f = filebuf;
    for (int i = 0; i < count; i++) {
        int v = u[i] ^ XOR;
        memcpy(f + 4 * (size_t)i, &v, 4);
    }
    return MPI_SUCCESS;
}

static int xor_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    state_t *s = extra;
    if (!s) /* the extra state is passed */
        return MPI_ERR_CONVERSION;
    int size = 0;
    MPI_Type_size(t, &size);
    *extent = size;
    return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                     void *extra)
{
    state_t *s = extra;
    s->calls++;
    if (s != &wide_state || t != MPI_INT) {
        s->bad++;
        return MPI_ERR_CONVERSION;
    }
    int *u = (int *)userbuf + position;
    for (int i = 0; i < count; i++) {
        int64_t v;
        memcpy(&v, (unsigned char *)filebuf + 8 * (size_t)i, 8);
        u[i] = (int)v;
    }
    return MPI_SUCCESS;
}

static int wide_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                      void *extra)
{
    state_t *s = extra;
    s->calls++;
    if (s != &wide_state || t != MPI_INT) {
        s->bad++;
        return MPI_ERR_CONVERSION;
    }
    const int *u = (const int *)userbuf + position;
    for (int i = 0; i < count; i++) {
        int64_t v = u[i];
        memcpy((unsigned char *)filebuf + 8 * (size_t)i, &v, 8);
    }
    return MPI_SUCCESS;
}

/* Every predefined type twice as wide as in memory (only MPI_INT is
 * converted: the others are never used with this representation) */
static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    state_t *s = extra;
    if (s != &wide_state) {
        if (s)
            s->bad++;
        return MPI_ERR_CONVERSION;
    }
    int size = 0;
    MPI_Type_size(t, &size);
    *extent = 2 * (MPI_Aint)size;
    return MPI_SUCCESS;
}

static int fail_write(void *userbuf, MPI_Datatype t, int count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    ((state_t *)extra)->calls++;
    return MPI_ERR_OTHER;
}

#if MPI_VERSION >= 4
static int xor_read_c(void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf,
                      MPI_Offset position, void *extra)
{
    return xor_read(userbuf, t, (int)count, filebuf, position, extra);
}
static int xor_write_c(void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf,
                       MPI_Offset position, void *extra)
{
    return xor_write(userbuf, t, (int)count, filebuf, position, extra);
}
#endif

/* Can the view use a registered representation? ROMIO (MPICH 4.0) takes
 * the registration but refuses the name in MPI_File_set_view with
 * MPI_ERR_UNSUPPORTED_DATAREP: the data part is skipped there. */
static int view_takes(MPI_File fh, MPI_Offset disp, const char *rep)
{
    int rc = MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, rep, MPI_INFO_NULL);
    if (rc != MPI_SUCCESS && IO_ROMIO && io_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP) {
        if (io_rank == 0)
            fprintf(stderr, "note: known ROMIO deviation, skipped: set_view refuses the "
                    "registered representation \"%s\"\n", rep);
        return 0;
    }
    IO_CHECK(rc == MPI_SUCCESS, "set_view with the registered representation \"%s\": %s", rep,
             io_describe(rc));
    return 1;
}

static void user_reps(void)
{
    /* Without conversion functions (all ROMIO takes): the name is taken,
     * a second registration of it is refused, by either binding. */
    static state_t null_state = {0, 0, 0};
    IO_CALL(MPI_Register_datarep("proust_null", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                 xor_extent, &null_state));
    IO_EXPECT_CLASS(MPI_Register_datarep("proust_null", MPI_CONVERSION_FN_NULL,
                                         MPI_CONVERSION_FN_NULL, xor_extent, &null_state),
                    MPI_ERR_DUP_DATAREP);
#if MPI_VERSION >= 4
    IO_EXPECT_CLASS(MPI_Register_datarep_c("proust_null", MPI_CONVERSION_FN_NULL_C,
                                           MPI_CONVERSION_FN_NULL_C, xor_extent, &null_state),
                    MPI_ERR_DUP_DATAREP);
#endif

    /* With conversion functions. ROMIO (MPICH 4.0) refuses them
     * ("Read and Write datarep conversions are currently not supported",
     * MPI_ERR_CONVERSION): the rest is skipped there. */
    int rc = MPI_Register_datarep("proust_xor", xor_read, xor_write, xor_extent, &xor_state);
    if (rc != MPI_SUCCESS && IO_ROMIO && io_class(rc) == MPI_ERR_CONVERSION) {
        if (io_rank == 0)
            fprintf(stderr, "note: known ROMIO deviation, skipped: MPI_Register_datarep with "
                    "conversion functions refused (%s)\n", io_class_name(io_class(rc)));
        return;
    }
    IO_CHECK(rc == MPI_SUCCESS, "MPI_Register_datarep(proust_xor): %s", io_describe(rc));
    IO_EXPECT_CLASS(MPI_Register_datarep("proust_xor", xor_read, xor_write, xor_extent,
                                         &xor_state), MPI_ERR_DUP_DATAREP);
    IO_CALL(MPI_Register_datarep("proust_wide", wide_read, wide_write, wide_extent, &wide_state));
    IO_CALL(MPI_Register_datarep("proust_fail", xor_read, fail_write, xor_extent, &fail_state));
#if MPI_VERSION >= 4
    IO_CALL(MPI_Register_datarep_c("proust_xor_c", xor_read_c, xor_write_c, xor_extent,
                                   &xor_state));
    IO_EXPECT_CLASS(MPI_Register_datarep_c("proust_xor_c", xor_read_c, xor_write_c, xor_extent,
                                           &xor_state), MPI_ERR_DUP_DATAREP);
    IO_EXPECT_CLASS(MPI_Register_datarep("proust_xor_c", xor_read, xor_write, xor_extent,
                                         &xor_state), MPI_ERR_DUP_DATAREP);
#endif
    const char *reps[] = {"proust_xor", "proust_wide"
#if MPI_VERSION >= 4
                          , "proust_xor_c"
#endif
    };
    int iv[NI], ib[NI];
    double dv[ND];
    values(iv, dv, 4);
    MPI_File fh = open_file("user.dat", MPI_MODE_CREATE | MPI_MODE_RDWR);
    const MPI_Offset region = 8 * NI + 16, disp = (MPI_Offset)io_rank * region;
    for (size_t k = 0; k < sizeof reps / sizeof reps[0]; k++) {
        const char *rep = reps[k];
        int wide = !strcmp(rep, "proust_wide");
        state_t *s = wide ? &wide_state : &xor_state;
        s->calls = s->bad = 0;
        if (!view_takes(fh, disp, rep))
            break;
        check_rep(fh, rep);
        expect_extent(fh, MPI_INT, wide ? 8 : 4, rep);
        MPI_Status st;
        IO_CALL(MPI_File_write_at_all(fh, 0, iv, NI, MPI_INT, &st));
        IO_STATUS(&st, MPI_INT, NI, NI, "write through a user representation");
        IO_CHECK(s->calls > 0 && s->bad == 0, "%s: write conversion called %d times, %d with "
                 "unexpected arguments", rep, s->calls, s->bad);
        sync_all(fh);
        memset(ib, 0, sizeof ib);
        s->calls = 0;
        IO_CALL(MPI_File_read_at_all(fh, 0, ib, NI, MPI_INT, &st));
        IO_STATUS(&st, MPI_INT, NI, NI, "read through a user representation");
        IO_CHECK(s->calls > 0 && s->bad == 0, "%s: read conversion called %d times, %d with "
                 "unexpected arguments", rep, s->calls, s->bad);
        for (int i = 0; i < NI; i++)
            IO_CHECK(ib[i] == iv[i], "%s: int %d reads back as %d, written %d", rep, i, ib[i],
                     iv[i]);
        /* the raw bytes */
        IO_CALL(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Offset size = -1;
        IO_CALL(MPI_File_get_size(fh, &size));
        IO_CHECK(size == (MPI_Offset)(io_size - 1) * region + (wide ? 8 : 4) * NI,
                 "%s: file size %lld", rep, (long long)size);
        unsigned char raw[8 * NI];
        IO_CALL(MPI_File_read_at(fh, disp, raw, (wide ? 8 : 4) * NI, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < NI; i++) {
            if (wide) {
                int64_t v;
                memcpy(&v, raw + 8 * i, 8);
                IO_CHECK(v == iv[i], "%s: int %d stored as %lld, expected %d", rep, i,
                         (long long)v, iv[i]);
            } else {
                int v;
                memcpy(&v, raw + 4 * i, 4);
                IO_CHECK(v == (iv[i] ^ XOR), "%s: int %d stored as 0x%x, expected 0x%x", rep, i,
                         (unsigned)v, (unsigned)(iv[i] ^ XOR));
            }
        }
        IO_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* every rank has read before the cut */
        IO_CALL(MPI_File_set_size(fh, 0));
    }
    /* a failing write conversion: MPI_ERR_CONVERSION */
    if (view_takes(fh, disp, "proust_fail")) {
        fail_state.calls = 0;
        IO_EXPECT_CLASS(MPI_File_write_at(fh, 0, iv, NI, MPI_INT, MPI_STATUS_IGNORE),
                        MPI_ERR_CONVERSION);
        IO_CHECK(fail_state.calls > 0, "the failing conversion was not called");
    }
    IO_CALL(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    io_init(&argc, &argv);
    native_and_internal();
    external32();
    user_reps();
    io_finish();
    return 0;
}
