/*
 * errhandler.c — error handler objects: the predefined MPI_ERRORS_ARE_FATAL,
 * MPI_ERRORS_RETURN and MPI_ERRORS_ABORT, handlers made by MPI_Comm_create_errhandler, and
 * attaching them to communicators and windows (set/get/call/free; the
 * MPI_Win_ entry points are in win_attr.c). pm_error (error.c) runs the
 * handler found here.
 *
 * Two counts per user handler: `refs` (user handles plus communicators
 * using it; the object goes with the last) and `user_refs` (handles the
 * application holds: one from create, one per MPI_Comm_get_errhandler).
 * Once every user handle is freed the handle is invalid to the application,
 * yet communicators still using the handler keep it alive.
 */
#include <stdlib.h>

#include "mpi_impl.h"

struct pm_user_errh {
    struct pm_errhandler e;
    _Atomic int user_refs;
    int what;     /* PM_ERRH_FOR_*: made by MPI_{Comm,Win,Session}_create_errhandler */
};

static struct pm_errhandler predef_errh[3] = {
    {.handle = MPI_ERRORS_ARE_FATAL, .kind = PM_ERRH_FATAL, .fn = NULL, .refs = 1},
    {.handle = MPI_ERRORS_RETURN, .kind = PM_ERRH_RETURN, .fn = NULL, .refs = 1},
    {.handle = MPI_ERRORS_ABORT, .kind = PM_ERRH_ABORT, .fn = NULL, .refs = 1},
};
enum { NPREDEF = sizeof predef_errh / sizeof predef_errh[0] };

/* Serialises swapping an object's handler (communicator, window, session)
 * with reading it for MPI_*_get_errhandler, so that a handler is retained
 * before a concurrent set can release it. */
static atomic_flag swap_lock = ATOMIC_FLAG_INIT;

static bool is_predef(MPI_Errhandler h)
{
    return (h & PROUST_MPI_KIND_MASK) == PROUST_MPI_KIND_ERRHANDLER &&
           (h & PROUST_MPI_INDEX_MASK) < NPREDEF;
}

void pm_errhandler_init(void)
{
    for (int i = 0; i < NPREDEF; i++)
        pm_table_set(&pm_errh_table, i, &predef_errh[i]);
}

struct pm_errhandler *pm_errhandler_get(MPI_Errhandler h)
{
    if (is_predef(h))
        return &predef_errh[h & PROUST_MPI_INDEX_MASK];
    return (struct pm_errhandler *)pm_table_get(&pm_errh_table, h);
}

/* A handler the application may name: predefined, or a user handler with a
 * user handle not yet freed. */
static struct pm_errhandler *user_visible(MPI_Errhandler h)
{
    struct pm_errhandler *e = pm_errhandler_get(h);
    if (e && e->kind == PM_ERRH_USER &&
        atomic_load(&((struct pm_user_errh *)e)->user_refs) <= 0)
        return NULL;
    return e;
}

void pm_errhandler_retain(MPI_Errhandler h)
{
    if (is_predef(h))
        return;
    struct pm_errhandler *e = pm_errhandler_get(h);
    if (e)
        atomic_fetch_add(&e->refs, 1);
}

void pm_errhandler_release(MPI_Errhandler h)
{
    if (is_predef(h))
        return;
    struct pm_errhandler *e = pm_errhandler_get(h);
    if (e && atomic_fetch_sub(&e->refs, 1) == 1) {
        pm_table_remove(&pm_errh_table, e->handle);
        free(e);
    }
}

/* The internals of MPI_{Comm,Win}_*_errhandler. A window's handler sits on
 * its private communicator (c->win_handle set), so one set of functions
 * serves both; errors are raised on c, which reaches the window's handler. */

static const char *object_name(int what)
{
    return what == PM_ERRH_FOR_WIN       ? "window"
           : what == PM_ERRH_FOR_SESSION ? "session"
           : what == PM_ERRH_FOR_FILE    ? "file"
                                         : "communicator";
}

struct pm_errhandler *pm_errhandler_usable(MPI_Errhandler h, int what)
{
    struct pm_errhandler *e = user_visible(h);
    if (e && e->kind == PM_ERRH_USER && ((struct pm_user_errh *)e)->what != what)
        return NULL;
    return e;
}

int pm_errhandler_create(MPI_Comm_errhandler_function *fn, int what,
                         MPI_Errhandler *errhandler, const char *fname)
{
    static const char *const arg[] = {"comm", "win", "session", "file"};
    if (!fn)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: %s_errhandler_fn is NULL", fname,
                        arg[what]);
    if (!errhandler)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: errhandler is NULL", fname);
    struct pm_user_errh *u = calloc(1, sizeof *u);
    if (!u)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    u->e.kind = PM_ERRH_USER;
    u->e.fn = fn;
    u->what = what;
    atomic_init(&u->e.refs, 1);
    atomic_init(&u->user_refs, 1);
    int h = pm_table_add(&pm_errh_table, u);
    if (!h) {
        free(u);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of handles", fname);
    }
    u->e.handle = h;
    *errhandler = h;
    return MPI_SUCCESS;
}

int pm_errhandler_set(struct pm_comm *c, MPI_Errhandler errhandler, const char *fname)
{
    int win = c->win_handle ? PM_ERRH_FOR_WIN : PM_ERRH_FOR_COMM;
    struct pm_errhandler *e = user_visible(errhandler);
    if (!e)
        return pm_error(c->handle, MPI_ERR_ERRHANDLER, "%s: invalid error handler %#x", fname,
                        (unsigned)errhandler);
    /* MPI-3.1 §8.3: a user handler serves the kind of object it was made for
     * (the function gets an MPI_Comm * or an MPI_Win *). */
    if (e->kind == PM_ERRH_USER && ((struct pm_user_errh *)e)->what != win)
        return pm_error(c->handle, MPI_ERR_ERRHANDLER,
                        "%s: error handler %#x was created for a %s, not a %s", fname,
                        (unsigned)errhandler, object_name(((struct pm_user_errh *)e)->what),
                        object_name(win));
    pm_errhandler_swap(&c->errhandler, errhandler);
    atomic_store_explicit(&c->errh_default, false, memory_order_relaxed);
    return MPI_SUCCESS;
}

void pm_errhandler_swap(MPI_Errhandler *slot, MPI_Errhandler h)
{
    pm_errhandler_retain(h);
    pm_lock(&swap_lock);
    MPI_Errhandler old = __atomic_exchange_n(slot, h, __ATOMIC_ACQ_REL);
    pm_unlock(&swap_lock);
    pm_errhandler_release(old);
}

void pm_errhandler_read(const MPI_Errhandler *slot, MPI_Errhandler *out)
{
    pm_lock(&swap_lock);
    pm_errhandler_give(__atomic_load_n(slot, __ATOMIC_ACQUIRE), out);
    pm_unlock(&swap_lock);
}

void pm_errhandler_give(MPI_Errhandler h, MPI_Errhandler *out)
{
    struct pm_errhandler *e = pm_errhandler_get(h);
    if (!e) {
        /* Never set: the default of every communicator and window. */
        h = MPI_ERRORS_ARE_FATAL;
        e = &predef_errh[0];
    }
    pm_errhandler_retain(h);
    if (e->kind == PM_ERRH_USER)
        atomic_fetch_add(&((struct pm_user_errh *)e)->user_refs, 1);
    *out = h;
}

int pm_errhandler_get_of(struct pm_comm *c, MPI_Errhandler *errhandler, const char *fname)
{
    if (!errhandler)
        return pm_error(c->handle, MPI_ERR_ARG, "%s: errhandler is NULL", fname);
    pm_errhandler_read(&c->errhandler, errhandler);
    return MPI_SUCCESS;
}

int pm_errhandler_call_with(MPI_Errhandler h, int object, int errorcode, const char *fname)
{
    /* MPI_SUCCESS is no error: never a reason to abort the job. */
    struct pm_errhandler *e = pm_errhandler_get(h);
    if (errorcode == MPI_SUCCESS && (!e || e->kind == PM_ERRH_FATAL || e->kind == PM_ERRH_ABORT))
        return MPI_SUCCESS;
    pm_error_handler(h, object, errorcode, "%s: error code %d raised by the application", fname,
                     errorcode);
    /* The handler was called and returned (MPI_ERRORS_RETURN "handles" an
     * error by doing nothing more): MPI_SUCCESS, as the standard specifies. */
    return MPI_SUCCESS;
}

int pm_errhandler_call(struct pm_comm *c, int errorcode, const char *fname)
{
    /* a window's handler is called with the window (see pm_error) */
    return pm_errhandler_call_with(__atomic_load_n(&c->errhandler, __ATOMIC_ACQUIRE),
                                   c->win_handle ? c->win_handle : c->handle, errorcode, fname);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_Comm_create_errhandler");
    return pm_errhandler_create(comm_errhandler_fn, PM_ERRH_FOR_COMM, errhandler,
                                "MPI_Comm_create_errhandler");
}
PM_WEAK(Comm_create_errhandler)

#define GET_COMM(var, h, fname)                                                         \
    struct pm_comm *var = pm_comm_get(h);                                               \
    if (!var)                                                                           \
    return pm_error(MPI_COMM_NULL, MPI_ERR_COMM, "%s: invalid communicator %#x", fname, \
                    (unsigned)(h))

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    PM_CHECK_INIT("MPI_Comm_set_errhandler");
    GET_COMM(c, comm, "MPI_Comm_set_errhandler");
    return pm_errhandler_set(c, errhandler, "MPI_Comm_set_errhandler");
}
PM_WEAK(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_Comm_get_errhandler");
    GET_COMM(c, comm, "MPI_Comm_get_errhandler");
    return pm_errhandler_get_of(c, errhandler, "MPI_Comm_get_errhandler");
}
PM_WEAK(Comm_get_errhandler)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    PM_CHECK_INIT("MPI_Comm_call_errhandler");
    GET_COMM(c, comm, "MPI_Comm_call_errhandler");
    return pm_errhandler_call(c, errorcode, "MPI_Comm_call_errhandler");
}
PM_WEAK(Comm_call_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_Errhandler_free");
    if (!errhandler)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Errhandler_free: errhandler is NULL");
    MPI_Errhandler h = *errhandler;
    /* A predefined handler may be freed (a handle from
     * MPI_Comm_get_errhandler is one): nothing to release. */
    if (is_predef(h)) {
        *errhandler = MPI_ERRHANDLER_NULL;
        return MPI_SUCCESS;
    }
    struct pm_errhandler *e = user_visible(h);
    if (!e)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ERRHANDLER,
                        "MPI_Errhandler_free: invalid error handler %#x", (unsigned)h);
    struct pm_user_errh *u = (struct pm_user_errh *)e;
    if (atomic_fetch_sub(&u->user_refs, 1) <= 0) {
        atomic_fetch_add(&u->user_refs, 1); /* freed concurrently by another thread */
        return pm_error(MPI_COMM_NULL, MPI_ERR_ERRHANDLER,
                        "MPI_Errhandler_free: error handler %#x already freed", (unsigned)h);
    }
    *errhandler = MPI_ERRHANDLER_NULL;
    pm_errhandler_release(h);
    return MPI_SUCCESS;
}
PM_WEAK(Errhandler_free)
