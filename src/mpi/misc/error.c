/*
 * error.c — raising errors, error codes and classes, their strings.
 *
 * Codes 0..MPI_ERR_LASTCODE are the standard classes; 80..83 are Proust
 * codes of class MPI_ERR_OTHER that name what happened to a peer; codes and
 * classes added by the application start at PM_FIRST_USER_CODE; codes with
 * PM_DETAIL_BIT carry a message (the class in their low 7 bits, a sequence
 * number above), as MPICH's codes do: what failed, on which file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define PM_FIRST_USER_CODE 96
#define PM_MAX_USER_CODES 4096
#define PM_DETAIL_BIT (1 << 24)
#define PM_DETAIL_RING 64
_Static_assert(MPI_ERR_LASTCODE < 128, "a class fits the low 7 bits of a detail code");
_Static_assert(PM_FIRST_USER_CODE + PM_MAX_USER_CODES < PM_DETAIL_BIT, "codes apart");

static const char *const class_text[MPI_ERR_LASTCODE + 1] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid reduction operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_IN_STATUS] = "error code is in status",
    [MPI_ERR_PENDING] = "pending request",
    [MPI_ERR_KEYVAL] = "invalid keyval",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_INFO_KEY] = "info key too long",
    [MPI_ERR_INFO_VALUE] = "info value too long",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_SPAWN] = "error spawning processes",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_SERVICE] = "invalid service name",
    [MPI_ERR_NAME] = "invalid name",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_ASSERT] = "invalid assert argument",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to window",
    [MPI_ERR_RMA_SYNC] = "wrong synchronization of RMA calls",
    [MPI_ERR_RMA_RANGE] = "target memory not in window",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_NOT_SAME] = "collective argument not identical on all processes",
    [MPI_ERR_AMODE] = "invalid file access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "unsupported operation",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_CONVERSION] = "error in data conversion function",
    [MPI_ERR_IO] = "I/O error",
    [MPI_T_ERR_MEMORY] = "MPI_T: out of memory",
    [MPI_T_ERR_NOT_INITIALIZED] = "MPI_T: the tool interface is not initialized",
    [MPI_T_ERR_CANNOT_INIT] = "MPI_T: the tool interface cannot be initialized",
    [MPI_T_ERR_INVALID_INDEX] = "MPI_T: invalid index",
    [MPI_T_ERR_INVALID_ITEM] = "MPI_T: invalid enumeration item",
    [MPI_T_ERR_INVALID_HANDLE] = "MPI_T: invalid handle",
    [MPI_T_ERR_OUT_OF_HANDLES] = "MPI_T: no more handles",
    [MPI_T_ERR_OUT_OF_SESSIONS] = "MPI_T: no more sessions",
    [MPI_T_ERR_INVALID_SESSION] = "MPI_T: invalid session",
    [MPI_T_ERR_CVAR_SET_NOT_NOW] = "MPI_T: the control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER] = "MPI_T: the control variable can never be set",
    [MPI_T_ERR_PVAR_NO_STARTSTOP] = "MPI_T: the performance variable cannot be started or "
                                    "stopped",
    [MPI_T_ERR_PVAR_NO_WRITE] = "MPI_T: the performance variable cannot be written",
    [MPI_T_ERR_PVAR_NO_ATOMIC] = "MPI_T: the performance variable cannot be read and reset "
                                 "atomically",
    [MPI_T_ERR_INVALID_NAME] = "MPI_T: no variable or category of that name",
    [MPI_T_ERR_INVALID] = "MPI_T: invalid use of the tool interface",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_PROC_ABORTED] = "a process of the operation aborted",
    [MPI_ERR_VALUE_TOO_LARGE] = "value too large to be stored",
    [MPI_ERR_ERRHANDLER] = "invalid error handler",
};

static const char *proust_code_text(int code)
{
    switch (code) {
    case PROUST_MPI_ERR_PEER_FAILED: return "peer process failed";
    case PROUST_MPI_ERR_CONN: return "connection to a peer lost";
    case PROUST_MPI_ERR_PROTO: return "malformed packet received from a peer";
    case PROUST_MPI_ERR_TIMEOUT: return "operation timed out";
    case PROUST_MPI_ERR_COLL_SIZE:
        return "a collective received a piece of another size than its count and type say "
               "(do the ranks' counts or types differ?)";
    case PROUST_MPI_ERR_COLL_FAILED:
        return "the collective failed on another rank (see that rank's error)";
    default: return NULL;
    }
}

/* Codes and classes added by the application. A removed one (MPI-4.1
 * MPI_Remove_error_code/class) leaves its slot with class -1, for the next
 * one added: MPI_LASTUSEDCODE is the highest slot ever used. */
static struct {
    atomic_flag lock;
    int count;                          /* codes in use above the first */
    int class_of[PM_MAX_USER_CODES];    /* a class is its own class; -1: removed */
    char *text[PM_MAX_USER_CODES];
} user_codes;

/* Slot of a live added code (lock held), or -1. */
static int user_slot(int code)
{
    int i = code - PM_FIRST_USER_CODE;
    return i >= 0 && i < user_codes.count && user_codes.class_of[i] >= 0 ? i : -1;
}

/* The last PM_DETAIL_RING messages, by sequence number. */
static struct {
    atomic_flag lock;
    unsigned seq;
    int code[PM_DETAIL_RING];
    char msg[PM_DETAIL_RING][MPI_MAX_ERROR_STRING];
} details;

static bool is_detail(int code)
{
    return code >= PM_DETAIL_BIT && code < 2 * PM_DETAIL_BIT && (code & 127) > 0 &&
           (code & 127) <= MPI_ERR_LASTCODE;
}

int pm_error_detail(int code, const char *msg)
{
    if (code <= 0 || code > MPI_ERR_LASTCODE || !msg || !*msg)
        return code;
    pm_lock(&details.lock);
    unsigned seq = details.seq++ & ((PM_DETAIL_BIT >> 7) - 1);
    int slot = (int)(seq % PM_DETAIL_RING);
    int d = PM_DETAIL_BIT | (int)(seq << 7) | code;
    details.code[slot] = d;
    pm_strlcpy(details.msg[slot], msg, MPI_MAX_ERROR_STRING);
    pm_unlock(&details.lock);
    return d;
}

/* "<class text>: <message>" of a detail code into string; false when its
 * message is no longer kept. */
static bool detail_text(int code, char *string, int *resultlen)
{
    const char *cls = class_text[code & 127];
    int slot = (int)(((unsigned)code >> 7) % PM_DETAIL_RING);
    pm_lock(&details.lock);
    bool kept = details.code[slot] == code;
    if (kept)
        *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", cls, details.msg[slot]);
    pm_unlock(&details.lock);
    if (kept && *resultlen >= MPI_MAX_ERROR_STRING)
        *resultlen = MPI_MAX_ERROR_STRING - 1;
    return kept;
}

int pm_error_last_code(void)
{
    pm_lock(&user_codes.lock);
    int last = user_codes.count ? PM_FIRST_USER_CODE + user_codes.count - 1 : PROUST_MPI_ERR_TIMEOUT;
    pm_unlock(&user_codes.lock);
    return last;
}

/* Class of a valid code, or -1. */
static int class_of(int code)
{
    if (code >= 0 && code <= MPI_ERR_LASTCODE)
        return code;
    if (proust_code_text(code))
        return MPI_ERR_OTHER;
    if (is_detail(code))
        return code & 127;
    int cls = -1;
    pm_lock(&user_codes.lock);
    int i = user_slot(code);
    if (i >= 0)
        cls = user_codes.class_of[i];
    pm_unlock(&user_codes.lock);
    return cls;
}

int pm_error_from_proust(int st)
{
    switch (st) {
    case PROUST_OK: return MPI_SUCCESS;
    case PROUST_ERR_INVALID: return MPI_ERR_ARG;
    case PROUST_ERR_RANK: return MPI_ERR_RANK;
    case PROUST_ERR_TAG: return MPI_ERR_TAG;
    case PROUST_ERR_NOMEM: return MPI_ERR_NO_MEM;
    case PROUST_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case PROUST_ERR_PEER_FAILED: return PROUST_MPI_ERR_PEER_FAILED;
    case PROUST_ERR_CONN: return PROUST_MPI_ERR_CONN;
    case PROUST_ERR_PROTO: return PROUST_MPI_ERR_PROTO;
    case PROUST_ERR_CANCELED: return MPI_SUCCESS; /* reported by Test_cancelled */
    case PROUST_ERR_NOT_SUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case PROUST_ERR_TIMEOUT: return PROUST_MPI_ERR_TIMEOUT;
    case PROUST_ERR_PENDING: return MPI_ERR_PENDING;
    default: return MPI_ERR_OTHER;
    }
}

/* Run handler `eh` (NULL: fatal) for `code` raised on `object` (the
 * communicator, window or session handle its function gets). */
static int raise_with(struct pm_errhandler *eh, int object, int code, const char *fmt,
                      va_list ap)
{
    int kind = eh ? eh->kind : PM_ERRH_FATAL;
    if (kind == PM_ERRH_RETURN)
        return code;
    if (kind == PM_ERRH_USER) {
        int tmp = code;
        eh->fn((MPI_Comm *)&object, &tmp);
        return code;
    }
    char msg[MPI_MAX_ERROR_STRING];
    vsnprintf(msg, sizeof msg, fmt, ap);
    char text[MPI_MAX_ERROR_STRING];
    int len;
    PMPI_Error_string(is_detail(code) ? code & 127 : code, text, &len); /* msg is the detail */
    /* MPI_ERRORS_ABORT aborts "the processes of the communicator": like
     * MPI_Abort, every process of the job (MPI-4.0 §9.3) */
    fprintf(stderr, "[proust mpi, rank %d] fatal error: %s (%s)%s\n", pm_world_rank, msg, text,
            kind == PM_ERRH_ABORT ? " [MPI_ERRORS_ABORT: the job is aborted]" : "");
    fflush(stderr);
    if (pm_session)
        proust_abort(pm_session, code ? code : 1);
    abort();
}

int pm_error(MPI_Comm comm, int code, const char *fmt, ...)
{
    struct pm_comm *c = pm_comm_get(comm);
    if (!c) {
        c = pm_comm_world;
        comm = MPI_COMM_WORLD;
    }
    struct pm_comm *hc = c; /* whose handler */
    if (c && c != pm_comm_world && pm_comm_world &&
        atomic_load_explicit(&c->errh_default, memory_order_relaxed))
        hc = pm_comm_world;
    struct pm_errhandler *eh = hc ? pm_errhandler_get(hc->errhandler) : NULL;
    /* A window's handler lives on its private communicator and is called
     * with the window (MPI_Win_errhandler_function). */
    int object = c && c->win_handle ? c->win_handle : comm;
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_with(eh, object, code, fmt, ap);
    va_end(ap);
    return rc;
}

int pm_error_handler(MPI_Errhandler h, int object, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = raise_with(pm_errhandler_get(h), object, code, fmt, ap);
    va_end(ap);
    return rc;
}

int pm_error_uninit(const char *fname)
{
    int st = atomic_load(&pm_state);
    fprintf(stderr, "[proust mpi] fatal error: %s called %s\n", fname,
            st == PM_STATE_NONE ? "before MPI_Init" : "after MPI_Finalize");
    fflush(stderr);
    exit(1);
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    const char *text = NULL;
    char buf[64];
    if (errorcode >= 0 && errorcode <= MPI_ERR_LASTCODE)
        text = class_text[errorcode];
    else if (is_detail(errorcode)) {
        if (string && resultlen && detail_text(errorcode, string, resultlen))
            return MPI_SUCCESS;
        text = class_text[errorcode & 127];
    } else if (proust_code_text(errorcode))
        text = proust_code_text(errorcode);
    else {
        pm_lock(&user_codes.lock);
        int i = user_slot(errorcode);
        if (i >= 0) {
            const char *t = user_codes.text[i] ? user_codes.text[i] : "";
            *resultlen = pm_strlcpy(string, t, MPI_MAX_ERROR_STRING);
            pm_unlock(&user_codes.lock);
            return MPI_SUCCESS;
        }
        pm_unlock(&user_codes.lock);
    }
    if (!text) {
        snprintf(buf, sizeof buf, "invalid error code %d", errorcode);
        *resultlen = pm_strlcpy(string, buf, MPI_MAX_ERROR_STRING);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_string: invalid error code %d",
                        errorcode);
    }
    *resultlen = pm_strlcpy(string, text, MPI_MAX_ERROR_STRING);
    return MPI_SUCCESS;
}
PM_WEAK(Error_string)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    int cls = class_of(errorcode);
    if (cls < 0)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Error_class: invalid error code %d",
                        errorcode);
    *errorclass = cls;
    return MPI_SUCCESS;
}
PM_WEAK(Error_class)

/* A new code of class `cls` (-1: a new class, its own class). */
static int add_code(int cls, int *out)
{
    pm_lock(&user_codes.lock);
    /* a removed slot first: a program that adds and removes classes in a
     * loop never runs out */
    int i = 0;
    while (i < user_codes.count && user_codes.class_of[i] >= 0)
        i++;
    if (i == PM_MAX_USER_CODES) {
        pm_unlock(&user_codes.lock);
        return MPI_ERR_NO_MEM;
    }
    if (i == user_codes.count)
        user_codes.count++;
    int code = PM_FIRST_USER_CODE + i;
    user_codes.class_of[i] = cls < 0 ? code : cls;
    user_codes.text[i] = NULL;
    pm_unlock(&user_codes.lock);
    *out = code;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    PM_CHECK_INIT("MPI_Add_error_class");
    if (!errorclass)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_class: errorclass is NULL");
    int rc = add_code(-1, errorclass);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "MPI_Add_error_class: more than %d codes",
                        PM_MAX_USER_CODES);
    return MPI_SUCCESS;
}
PM_WEAK(Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    PM_CHECK_INIT("MPI_Add_error_code");
    int cls = class_of(errorclass);
    if (cls != errorclass || !errorcode)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_code: %d is not an error class",
                        errorclass);
    int rc = add_code(errorclass, errorcode);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_WORLD, rc, "MPI_Add_error_code: more than %d codes",
                        PM_MAX_USER_CODES);
    return MPI_SUCCESS;
}
PM_WEAK(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    PM_CHECK_INIT("MPI_Add_error_string");
    if (!string || strlen(string) >= MPI_MAX_ERROR_STRING)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                        "MPI_Add_error_string: string missing or longer than %d",
                        MPI_MAX_ERROR_STRING - 1);
    char *copy = strdup(string);
    if (!copy)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Add_error_string: out of memory");
    pm_lock(&user_codes.lock);
    int i = user_slot(errorcode);
    if (i < 0) {
        pm_unlock(&user_codes.lock);
        free(copy);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                        "MPI_Add_error_string: %d is not a code added by MPI_Add_error_code/class",
                        errorcode);
    }
    free(user_codes.text[i]);
    user_codes.text[i] = copy;
    pm_unlock(&user_codes.lock);
    return MPI_SUCCESS;
}
PM_WEAK(Add_error_string)

/* MPI-4.1: remove an added code (class: want_class). One that still has
 * its string, or a class still holding codes, stays (erroneous for the
 * application: an MPI_ERR_ARG here). */
static int remove_code(const char *fn, int code, bool want_class)
{
    pm_lock(&user_codes.lock);
    int i = user_slot(code);
    const char *why = NULL;
    if (i < 0)
        why = want_class ? "is not a class added by MPI_Add_error_class"
                         : "is not a code added by MPI_Add_error_code";
    else if ((user_codes.class_of[i] == code) != want_class)
        why = want_class ? "is an error code, not a class (MPI_Remove_error_code)"
                         : "is an error class, not a code (MPI_Remove_error_class)";
    else if (user_codes.text[i]) /* MPI-4.1 §9.5: the string goes first */
        why = "still has an error string (MPI_Remove_error_string first)";
    else if (want_class)
        for (int k = 0; k < user_codes.count && !why; k++)
            if (k != i && user_codes.class_of[k] == code)
                why = "still has error codes (remove them first)";
    if (why) {
        pm_unlock(&user_codes.lock);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: %d %s", fn, code, why);
    }
    user_codes.class_of[i] = -1; /* its string is gone already */
    pm_unlock(&user_codes.lock);
    return MPI_SUCCESS;
}

int PMPI_Remove_error_class(int errorclass)
{
    PM_CHECK_INIT("MPI_Remove_error_class");
    return remove_code("MPI_Remove_error_class", errorclass, true);
}
PM_WEAK(Remove_error_class)

int PMPI_Remove_error_code(int errorcode)
{
    PM_CHECK_INIT("MPI_Remove_error_code");
    return remove_code("MPI_Remove_error_code", errorcode, false);
}
PM_WEAK(Remove_error_code)

int PMPI_Remove_error_string(int errorcode)
{
    PM_CHECK_INIT("MPI_Remove_error_string");
    pm_lock(&user_codes.lock);
    int i = user_slot(errorcode);
    if (i < 0 || !user_codes.text[i]) {
        pm_unlock(&user_codes.lock);
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG,
                        "MPI_Remove_error_string: %d has no string added by "
                        "MPI_Add_error_string",
                        errorcode);
    }
    free(user_codes.text[i]);
    user_codes.text[i] = NULL;
    pm_unlock(&user_codes.lock);
    return MPI_SUCCESS;
}
PM_WEAK(Remove_error_string)

void pm_errors_finalize(void)
{
    pm_lock(&user_codes.lock);
    for (int i = 0; i < user_codes.count; i++) {
        free(user_codes.text[i]);
        user_codes.text[i] = NULL;
    }
    user_codes.count = 0;
    pm_unlock(&user_codes.lock);
}
