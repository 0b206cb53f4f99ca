/*
 * env_errh.c — error handlers: a user handler is called with the
 * communicator and the error code (MPI_Send to rank = size gives a code of
 * class MPI_ERR_RANK), MPI_ERRORS_RETURN returns codes, set/get round trips
 * with reference counts (a freed handle stays in force on the communicator
 * that uses it), objects without a handler of their own following
 * MPI_COMM_WORLD's, MPI_Comm_call_errhandler, the MPI-4.1 removal of added
 * error classes, codes and strings, and the argument errors.
 */
#include "mpitest.h"

static int rank, size;
static int calls, last_code;
static MPI_Comm last_comm;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static int other_calls;
static void other(MPI_Comm *comm, int *code, ...)
{
    other_calls++;
}

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void check_class(int rc, int want, const char *what)
{
    int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : class_of(rc);
    CHECK(rc != MPI_SUCCESS && cls == want, "%s: rc %d class %d, want class %d", what, rc, cls,
          want);
}

static void defaults(void)
{
    /* MPI_SUCCESS through MPI_ERRORS_ARE_FATAL does not end the job. */
    MPI_CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_SUCCESS));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD is %#x", (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&eh)); /* a predefined handle may be freed */
    CHECK(eh == MPI_ERRHANDLER_NULL, "free did not set MPI_ERRHANDLER_NULL");
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_SELF is %#x", (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&eh));
}

/* Communicators and windows on which no handler was ever set (nor on
 * those they derive from) follow MPI_COMM_WORLD's handler of the moment, as
 * in MPICH: its suite sets MPI_ERRORS_RETURN on the world after making a
 * duplicate and expects the duplicate's errors returned. A handler set on
 * the object itself wins; the query still names MPI_ERRORS_ARE_FATAL. */
static void world_default(void)
{
    MPI_Comm early, split;
    MPI_Win win;
    int wbuf = 0, buf = 0;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &early));
    MPI_CHECK(MPI_Comm_split(early, 0, rank, &split));
    MPI_CHECK(MPI_Win_create(&wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    calls = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, early);
    CHECK(calls == 1 && last_comm == early && class_of(last_code) == MPI_ERR_RANK,
          "error on an early dup: world's handler called %d times, comm %#x", calls,
          (unsigned)last_comm);
    rc = MPI_Comm_split(split, 0, 0, NULL);
    CHECK(calls == 2 && last_comm == split && class_of(rc) == MPI_ERR_ARG,
          "error on a split of it: calls %d, class %d", calls, class_of(rc));
    MPI_CHECK(MPI_Comm_get_errhandler(early, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "early dup's handler reads %#x", (unsigned)got);
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    check_class(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE, "a window's error");
    MPI_Errhandler mine;
    MPI_CHECK(MPI_Comm_create_errhandler(other, &mine));
    MPI_CHECK(MPI_Comm_set_errhandler(early, mine));
    other_calls = 0;
    calls = 0;
    MPI_Send(&buf, 1, MPI_INT, size, 0, early);
    CHECK(other_calls == 1 && calls == 0, "own handler: %d calls, world's: %d", other_calls,
          calls);
    MPI_CHECK(MPI_Errhandler_free(&mine));
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Win_free(&win));
    MPI_CHECK(MPI_Comm_free(&split));
    MPI_CHECK(MPI_Comm_free(&early));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void user_handler(void)
{
    MPI_Errhandler eh, got;
    MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL && eh != MPI_ERRORS_RETURN && eh != MPI_ERRORS_ARE_FATAL,
          "new handler %#x", (unsigned)eh);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "get returned %#x, set %#x", (unsigned)got, (unsigned)eh);

    /* An invalid rank: the handler sees MPI_COMM_WORLD and the code. */
    int buf = 0;
    calls = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    CHECK(calls == 1, "handler called %d times", calls);
    CHECK(last_comm == MPI_COMM_WORLD, "handler got comm %#x", (unsigned)last_comm);
    CHECK(class_of(last_code) == MPI_ERR_RANK, "handler got code %d (class %d)", last_code,
          class_of(last_code));
    CHECK(rc == last_code, "MPI_Send returned %d, handler saw %d", rc, last_code);
    rc = MPI_Recv(&buf, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(calls == 2 && class_of(last_code) == MPI_ERR_TAG, "bad tag: calls %d class %d", calls,
          class_of(last_code));
    /* An error on MPI_COMM_NULL goes to MPI_COMM_WORLD's handler. */
    MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    CHECK(calls == 3 && class_of(last_code) == MPI_ERR_COMM && last_comm == MPI_COMM_WORLD,
          "error on MPI_COMM_NULL: calls %d class %d comm %#x", calls, class_of(last_code),
          (unsigned)last_comm);

    /* MPI_COMM_SELF keeps its own handler. */
    MPI_Errhandler oh;
    MPI_CHECK(MPI_Comm_create_errhandler(other, &oh));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, oh));
    MPI_CHECK(MPI_Errhandler_free(&oh));
    other_calls = 0;
    MPI_Send(&buf, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    CHECK(other_calls == 1 && calls == 3, "error on SELF: other %d world %d", other_calls, calls);

    /* Both user handles freed: the handler stays in force on the comm. */
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_Errhandler stale = eh;
    MPI_CHECK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "free did not set MPI_ERRHANDLER_NULL");
    check_class(MPI_Errhandler_free(&stale), MPI_ERR_ERRHANDLER, "freeing a freed handle");
    CHECK(calls == 4 && class_of(last_code) == MPI_ERR_ERRHANDLER, "free error went to the handler");
    check_class(MPI_Comm_set_errhandler(MPI_COMM_SELF, stale), MPI_ERR_ERRHANDLER,
                "setting a freed handle");
    CHECK(other_calls == 2, "SELF's handler saw the set error: %d", other_calls);

    /* MPI_Comm_call_errhandler: the user handler, then MPI_SUCCESS. */
    int myclass, mycode;
    MPI_CHECK(MPI_Add_error_class(&myclass));
    MPI_CHECK(MPI_Add_error_code(myclass, &mycode));
    calls = 0;
    MPI_CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, mycode));
    CHECK(calls == 1 && last_code == mycode && last_comm == MPI_COMM_WORLD,
          "call_errhandler: calls %d code %d", calls, last_code);
    MPI_CHECK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(calls == 2 && last_code == MPI_ERR_OTHER, "call_errhandler 2: code %d", last_code);

    /* A get of the freed handler hands out a live handle again. */
    MPI_CHECK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == stale, "get after free: %#x, want %#x", (unsigned)got, (unsigned)stale);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_CHECK(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER));
    CHECK(calls == 3 && last_comm == MPI_COMM_SELF, "SELF now has the first handler");

    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    /* The handler object is gone: its handle names nothing now. */
    check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, stale), MPI_ERR_ERRHANDLER,
                "a handle of a released handler");
    CHECK(calls == 3, "the released handler was called");
}

/* MPI-4.1 MPI_Remove_error_class / _code / _string: only what was added,
 * a code or class only once its string is gone, a class only once its
 * codes are; removed codes are used again. */
static void removals(void)
{
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int cls, code, c2, got, len = -1;
    char text[MPI_MAX_ERROR_STRING];
    MPI_CHECK(MPI_Add_error_class(&cls));
    MPI_CHECK(MPI_Add_error_code(cls, &code));
    MPI_CHECK(MPI_Add_error_string(code, "mine"));
    check_class(MPI_Remove_error_class(cls), MPI_ERR_ARG, "removing a class with a code");
    check_class(MPI_Remove_error_code(cls), MPI_ERR_ARG, "a class removed as a code");
    check_class(MPI_Remove_error_class(code), MPI_ERR_ARG, "a code removed as a class");
    check_class(MPI_Remove_error_code(MPI_ERR_OTHER), MPI_ERR_ARG, "a predefined code");
    check_class(MPI_Remove_error_string(cls), MPI_ERR_ARG, "a class without a string");
    check_class(MPI_Remove_error_code(code), MPI_ERR_ARG, "removing a code with a string");
    MPI_CHECK(MPI_Remove_error_string(code));
    MPI_CHECK(MPI_Error_string(code, text, &len));
    CHECK(len == 0, "string after its removal: '%s'", text);
    check_class(MPI_Remove_error_string(code), MPI_ERR_ARG, "removing a string twice");
    MPI_CHECK(MPI_Error_class(code, &got));
    CHECK(got == cls, "class of the code: %d, expected %d", got, cls);
    MPI_CHECK(MPI_Remove_error_code(code));
    check_class(MPI_Error_class(code, &got), MPI_ERR_ARG, "class of a removed code");
    check_class(MPI_Add_error_string(code, "x"), MPI_ERR_ARG, "string on a removed code");
    check_class(MPI_Remove_error_code(code), MPI_ERR_ARG, "removing a code twice");
    MPI_CHECK(MPI_Add_error_string(cls, "my class"));
    check_class(MPI_Remove_error_class(cls), MPI_ERR_ARG, "removing a class with a string");
    MPI_CHECK(MPI_Remove_error_string(cls));
    MPI_CHECK(MPI_Remove_error_class(cls));
    check_class(MPI_Add_error_code(cls, &c2), MPI_ERR_ARG, "a code in a removed class");
    check_class(MPI_Remove_error_class(cls), MPI_ERR_ARG, "removing a class twice");
    /* removed codes are reused: adding and removing never runs out */
    int last0 = 0, last1 = 0, flag = 0;
    int *lastp;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    last0 = *lastp;
    for (int k = 0; k < 10000; k++) {
        MPI_CHECK(MPI_Add_error_class(&c2));
        MPI_CHECK(MPI_Add_error_code(c2, &code));
        MPI_CHECK(MPI_Add_error_string(code, "again"));
        MPI_CHECK(MPI_Remove_error_string(code));
        MPI_CHECK(MPI_Remove_error_code(code));
        MPI_CHECK(MPI_Remove_error_class(c2));
    }
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lastp, &flag));
    last1 = *lastp;
    CHECK(flag && last1 <= last0 + 2, "MPI_LASTUSEDCODE grew from %d to %d", last0, last1);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* A new communicator inherits its parent's handler and keeps it alive. */
static void inherited(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm dup;
    MPI_CHECK(MPI_Comm_create_errhandler(handler, &eh));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_CHECK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh, "dup has handler %#x, want %#x", (unsigned)got, (unsigned)eh);
    MPI_CHECK(MPI_Errhandler_free(&got));
    MPI_Errhandler stale = eh;
    MPI_CHECK(MPI_Errhandler_free(&eh));
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int buf = 0;
    calls = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, dup);
    CHECK(calls == 1 && last_comm == dup && class_of(rc) == MPI_ERR_RANK,
          "error on the dup: calls %d comm %#x class %d", calls, (unsigned)last_comm,
          class_of(rc));
    MPI_CHECK(MPI_Comm_free(&dup));
    /* the last user gone, the handler is gone */
    check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, stale), MPI_ERR_ERRHANDLER,
                "a handler whose last communicator was freed");
    CHECK(calls == 1, "handler called after its release");
}

static void errors_return(void)
{
    int buf = 0;
    int rc = MPI_Send(&buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_RANK, "MPI_Send to rank = size");
    rc = MPI_Send(&buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD);
    check_class(rc, MPI_ERR_RANK, "MPI_Send to rank -5");
    /* The handler (MPI_ERRORS_RETURN) was called and returned: success. */
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TRUNCATE);
    CHECK(rc == MPI_SUCCESS, "call_errhandler with ERRORS_RETURN returned %d", rc);

    MPI_Errhandler eh;
    check_class(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG, "NULL function");
    check_class(MPI_Comm_create_errhandler(handler, NULL), MPI_ERR_ARG, "NULL handle pointer");
    check_class(MPI_Comm_set_errhandler(MPI_COMM_NULL, MPI_ERRORS_RETURN), MPI_ERR_COMM,
                "set on MPI_COMM_NULL");
    check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ERRHANDLER,
                "set MPI_ERRHANDLER_NULL");
    check_class(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)MPI_INFO_ENV),
                MPI_ERR_ERRHANDLER, "set an info handle");
    check_class(MPI_Comm_get_errhandler(MPI_COMM_NULL, &eh), MPI_ERR_COMM,
                "get on MPI_COMM_NULL");
    check_class(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL), MPI_ERR_ARG, "get into NULL");
    check_class(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM,
                "call on MPI_COMM_NULL");
    eh = MPI_ERRHANDLER_NULL;
    check_class(MPI_Errhandler_free(&eh), MPI_ERR_ERRHANDLER, "free MPI_ERRHANDLER_NULL");
    check_class(MPI_Errhandler_free(NULL), MPI_ERR_ARG, "free NULL");

    /* Many handlers: distinct handles, each freed once. */
    MPI_Errhandler many[20];
    for (int i = 0; i < 20; i++)
        MPI_CHECK(MPI_Comm_create_errhandler(i % 2 ? handler : other, &many[i]));
    for (int i = 0; i < 20; i++)
        for (int j = 0; j < i; j++)
            CHECK(many[i] != many[j], "handlers %d and %d share a handle", i, j);
    for (int i = 0; i < 20; i++)
        MPI_CHECK(MPI_Errhandler_free(&many[i]));
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    defaults();
    world_default();
    user_handler();
    errors_return();
    removals();
    inherited();
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_CHECK(MPI_Finalize());
    return 0;
}
