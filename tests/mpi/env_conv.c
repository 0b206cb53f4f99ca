/*
 * env_conv.c — MPI_*_c2f / MPI_*_f2c: round trips of predefined and user
 * handles of every kind, null handles stay null, and f2c of a value that
 * names no live object of that kind (garbage, a handle of another kind, a
 * freed object) gives the null handle. MPI_Status_c2f / f2c and the
 * mpi_f08 forms keep every field of a status; the MPI-4.1 accessors
 * (MPI_Status_get/set_source, _tag, _error) read and write one each. The
 * version is 4.1, MPI-4.1's class MPI_ERR_ERRHANDLER has its string, and
 * the null communicator, datatype and window have names.
 */
#include "mpitest.h"

static void dummy_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
}

static void dummy_handler(MPI_Comm *comm, int *code, ...)
{
}

static void comms_groups(void)
{
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF, "self");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "comm null");
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Fint f = MPI_Comm_c2f(dup);
    CHECK(MPI_Comm_f2c(f) == dup, "dup round trip");
    int size;
    MPI_CHECK(MPI_Comm_size(MPI_Comm_f2c(f), &size));
    MPI_CHECK(MPI_Comm_free(&dup));
    CHECK(MPI_Comm_f2c(f) == MPI_COMM_NULL, "freed comm gives %#x", (unsigned)MPI_Comm_f2c(f));
    CHECK(MPI_Comm_f2c(12345) == MPI_COMM_NULL, "garbage comm");
    CHECK(MPI_Comm_f2c(MPI_Type_c2f(MPI_INT)) == MPI_COMM_NULL, "a type as comm");

    MPI_Group g;
    MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "group round trip");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY, "group empty");
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_NULL)) == MPI_GROUP_NULL, "group null");
    MPI_Fint gf = MPI_Group_c2f(g);
    MPI_CHECK(MPI_Group_free(&g));
    CHECK(MPI_Group_f2c(gf) == MPI_GROUP_NULL, "freed group");
    CHECK(MPI_Group_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_GROUP_NULL, "a comm as group");
}

static void types_ops(void)
{
    static const MPI_Datatype pre[] = {MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_2INT, MPI_REAL8,
                                       MPI_C_BOOL, MPI_PACKED, MPI_LONG_DOUBLE_INT};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++)
        CHECK(MPI_Type_f2c(MPI_Type_c2f(pre[i])) == pre[i], "predefined type %zu", i);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL, "type null");
    MPI_Datatype vec;
    MPI_CHECK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    MPI_Fint vf = MPI_Type_c2f(vec);
    CHECK(MPI_Type_f2c(vf) == vec, "derived type round trip");
    MPI_CHECK(MPI_Type_free(&vec));
    CHECK(MPI_Type_f2c(vf) == MPI_DATATYPE_NULL, "freed type");
    CHECK(MPI_Type_f2c(-1) == MPI_DATATYPE_NULL, "garbage type");
    CHECK(MPI_Type_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_DATATYPE_NULL, "an op as type");

    for (MPI_Op op = MPI_MAX; op <= MPI_NO_OP; op++)
        CHECK(MPI_Op_f2c(MPI_Op_c2f(op)) == op, "predefined op %#x", (unsigned)op);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_OP_NULL)) == MPI_OP_NULL, "op null");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_NO_OP + 1)) == MPI_OP_NULL, "unused op index");
    MPI_Op op;
    MPI_CHECK(MPI_Op_create(dummy_op, 1, &op));
    MPI_Fint of = MPI_Op_c2f(op);
    CHECK(MPI_Op_f2c(of) == op, "user op round trip");
    MPI_CHECK(MPI_Op_free(&op));
    CHECK(MPI_Op_f2c(of) == MPI_OP_NULL, "freed op");
}

static void info_errh(void)
{
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_ENV)) == MPI_INFO_ENV, "info env");
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL, "info null");
    MPI_Info info;
    MPI_CHECK(MPI_Info_create(&info));
    MPI_Fint inf = MPI_Info_c2f(info);
    CHECK(MPI_Info_f2c(inf) == info, "info round trip");
    MPI_CHECK(MPI_Info_set(MPI_Info_f2c(inf), "k", "v"));
    MPI_CHECK(MPI_Info_free(&info));
    CHECK(MPI_Info_f2c(inf) == MPI_INFO_NULL, "freed info");

    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN, "ret");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_ARE_FATAL)) == MPI_ERRORS_ARE_FATAL,
          "fatal");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL)) == MPI_ERRHANDLER_NULL,
          "errhandler null");
    MPI_Errhandler eh;
    MPI_CHECK(MPI_Comm_create_errhandler(dummy_handler, &eh));
    MPI_Fint ef = MPI_Errhandler_c2f(eh);
    CHECK(MPI_Errhandler_f2c(ef) == eh, "user errhandler round trip");
    MPI_CHECK(MPI_Errhandler_free(&eh));
    CHECK(MPI_Errhandler_f2c(ef) == MPI_ERRHANDLER_NULL, "freed errhandler");
    CHECK(MPI_Errhandler_f2c(MPI_Info_c2f(MPI_INFO_ENV)) == MPI_ERRHANDLER_NULL,
          "an info as errhandler");
}

static void requests_messages(void)
{
    int rank, buf = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Request req;
    MPI_CHECK(MPI_Irecv(&buf, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &req));
    MPI_Fint rf = MPI_Request_c2f(req);
    CHECK(MPI_Request_f2c(rf) == req, "request round trip");
    int one = 1;
    MPI_CHECK(MPI_Send(&one, 1, MPI_INT, rank, 5, MPI_COMM_WORLD));
    MPI_Request back = MPI_Request_f2c(rf);
    MPI_CHECK(MPI_Wait(&back, MPI_STATUS_IGNORE));
    CHECK(buf == 1 && back == MPI_REQUEST_NULL, "wait through the converted handle");
    CHECK(MPI_Request_f2c(rf) == MPI_REQUEST_NULL, "completed request");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "req null");

    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC, "no proc");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "msg null");
    MPI_CHECK(MPI_Send(&one, 1, MPI_INT, rank, 6, MPI_COMM_WORLD));
    MPI_Message msg;
    MPI_CHECK(MPI_Mprobe(rank, 6, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE));
    MPI_Fint mf = MPI_Message_c2f(msg);
    CHECK(MPI_Message_f2c(mf) == msg, "message round trip");
    MPI_Message m2 = MPI_Message_f2c(mf);
    MPI_CHECK(MPI_Mrecv(&buf, 1, MPI_INT, &m2, MPI_STATUS_IGNORE));
    CHECK(MPI_Message_f2c(mf) == MPI_MESSAGE_NULL, "received message");
    CHECK(MPI_Message_f2c(7) == MPI_MESSAGE_NULL, "garbage message");
}

/* MPI_Status_c2f & co: a received message's status survives every round
 * trip (source, tag, error, count, cancelled), the Fortran indices name the
 * public fields, and the STATUS_IGNORE values are refused. */
static void check_status(const char *what, const MPI_Status *st, int src, int tag, int count,
                         int cancelled)
{
    int n = -1, c = -1;
    MPI_CHECK(MPI_Get_count(st, MPI_INT, &n));
    MPI_CHECK(MPI_Test_cancelled(st, &c));
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && st->MPI_ERROR == MPI_ERR_PENDING &&
              n == count && c == cancelled,
          "%s: source %d tag %d error %d count %d cancelled %d, expected %d %d %d %d %d", what,
          st->MPI_SOURCE, st->MPI_TAG, st->MPI_ERROR, n, c, src, tag, MPI_ERR_PENDING, count,
          cancelled);
}

static void statuses(void)
{
    int rank, out[3] = {1, 2, 3}, in[5];
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_Status st;
    MPI_CHECK(MPI_Sendrecv(out, 3, MPI_INT, rank, 42, in, 5, MPI_INT, rank, 42, MPI_COMM_WORLD,
                           &st));
    st.MPI_ERROR = MPI_ERR_PENDING; /* a value the receive would not leave there */
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_CHECK(MPI_Status_c2f(&st, f));
    CHECK(f[MPI_F_SOURCE] == rank && f[MPI_F_TAG] == 42 && f[MPI_F_ERROR] == MPI_ERR_PENDING,
          "Fortran status: source %d tag %d error %d", f[MPI_F_SOURCE], f[MPI_F_TAG],
          f[MPI_F_ERROR]);
    MPI_Status back;
    memset(&back, 0xff, sizeof back);
    MPI_CHECK(MPI_Status_f2c(f, &back));
    check_status("c2f then f2c", &back, rank, 42, 3, 0);

    MPI_CHECK(MPI_Status_set_cancelled(&st, 1));
    MPI_F08_status f08, f08b;
    MPI_CHECK(MPI_Status_c2f08(&st, &f08));
    CHECK(f08.MPI_SOURCE == rank && f08.MPI_TAG == 42 && f08.MPI_ERROR == MPI_ERR_PENDING,
          "mpi_f08 status: source %d tag %d error %d", f08.MPI_SOURCE, f08.MPI_TAG,
          f08.MPI_ERROR);
    MPI_CHECK(MPI_Status_f082f(&f08, f));
    MPI_CHECK(MPI_Status_f2f08(f, &f08b));
    memset(&back, 0, sizeof back);
    MPI_CHECK(MPI_Status_f082c(&f08b, &back));
    check_status("c2f08, f082f, f2f08, f082c", &back, rank, 42, 3, 1);

    /* the MPI-4.1 accessors */
    int v = -1;
    MPI_CHECK(MPI_Status_get_source(&back, &v));
    CHECK(v == rank, "Status_get_source: %d", v);
    MPI_CHECK(MPI_Status_get_tag(&back, &v));
    CHECK(v == 42, "Status_get_tag: %d", v);
    MPI_CHECK(MPI_Status_get_error(&back, &v));
    CHECK(v == MPI_ERR_PENDING, "Status_get_error: %d", v);
    MPI_CHECK(MPI_Status_set_source(&back, 7));
    MPI_CHECK(MPI_Status_set_tag(&back, 9));
    MPI_CHECK(MPI_Status_set_error(&back, MPI_SUCCESS));
    CHECK(back.MPI_SOURCE == 7 && back.MPI_TAG == 9 && back.MPI_ERROR == MPI_SUCCESS,
          "Status_set_*: source %d tag %d error %d", back.MPI_SOURCE, back.MPI_TAG,
          back.MPI_ERROR);
    MPI_CHECK(MPI_Get_count(&back, MPI_INT, &v));
    CHECK(v == 3, "the setters left the count alone: %d", v);

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Status_get_tag(MPI_STATUS_IGNORE, &v), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_get_source(&back, NULL), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_set_error(MPI_STATUS_IGNORE, 0), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_c2f(MPI_STATUS_IGNORE, f), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &back), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_c2f08(&st, MPI_F08_STATUS_IGNORE), MPI_ERR_ARG);
    EXPECT_CLASS(MPI_Status_f082c(MPI_F08_STATUS_IGNORE, &back), MPI_ERR_ARG);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void version(void)
{
    int v = 0, sv = -1;
    MPI_CHECK(MPI_Get_version(&v, &sv));
    CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION && v == 4 && sv == 1, "version %d.%d", v,
          sv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_CHECK(MPI_Get_library_version(lib, &len));
    CHECK(strstr(lib, "MPI 4.1") != NULL, "library version \"%s\"", lib);
    int cls = -1;
    MPI_CHECK(MPI_Error_class(MPI_ERR_ERRHANDLER, &cls));
    CHECK(cls == MPI_ERR_ERRHANDLER && MPI_ERR_ERRHANDLER <= MPI_ERR_LASTCODE,
          "MPI_ERR_ERRHANDLER's class %d", cls);
    char text[MPI_MAX_ERROR_STRING];
    MPI_CHECK(MPI_Error_string(MPI_ERR_ERRHANDLER, text, &len));
    CHECK(strstr(text, "error handler") != NULL, "MPI_ERR_ERRHANDLER says \"%s\"", text);
    /* the null handles have names */
    MPI_CHECK(MPI_Comm_get_name(MPI_COMM_NULL, text, &len));
    CHECK(!strcmp(text, "MPI_COMM_NULL") && len == 13, "MPI_COMM_NULL's name \"%s\"", text);
    MPI_CHECK(MPI_Type_get_name(MPI_DATATYPE_NULL, text, &len));
    CHECK(!strcmp(text, "MPI_DATATYPE_NULL") && len == 17, "MPI_DATATYPE_NULL's name \"%s\"",
          text);
    MPI_CHECK(MPI_Win_get_name(MPI_WIN_NULL, text, &len));
    CHECK(!strcmp(text, "MPI_WIN_NULL") && len == 12, "MPI_WIN_NULL's name \"%s\"", text);
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    comms_groups();
    types_ops();
    info_errh();
    requests_messages();
    statuses();
    version();
    MPI_CHECK(MPI_Finalize());
    return 0;
}
