/*
 * session.c — the MPI-4 Sessions Model (MPI-4.0 §11.3): MPI_Session_init
 * and _finalize, the process sets ("mpi://WORLD", "mpi://SELF") and their
 * info, MPI_Group_from_session_pset, the session error handlers.
 *
 * A session is a handle on the one instance every model shares (init.c
 * starts it with the first session or MPI_Init and keeps it while anyone
 * holds it): the engine, the handle tables, the world and self groups. A
 * group from a session is an ordinary group; MPI_Comm_create_from_group
 * (comm_create.c) makes a communicator from it without a parent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "p2p.h"

struct pm_session_obj {
    int handle;
    MPI_Errhandler errhandler;   /* reference held */
    int thread_level;            /* asked with the "thread_level" info key */
    struct pm_bbuf *_Atomic bbuf; /* MPI_Session_attach_buffer's, made on first use */
};

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = 2 };
static const char *const level_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                          "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

static struct pm_session_obj *session_get(MPI_Session h)
{
    return (struct pm_session_obj *)pm_table_get(&pm_session_table, h);
}

/* Raise on session s (its handler), or on MPI_COMM_SELF's without one. */
#define SESSION_ERROR(s, code, ...)                                                          \
    ((s) ? pm_error_handler((s)->errhandler, (s)->handle, code, __VA_ARGS__)              \
         : pm_error(MPI_COMM_SELF, code, __VA_ARGS__))

#define GET_SESSION(var, h, fn)                                                              \
    PM_CHECK_INIT(fn);                                                                       \
    struct pm_session_obj *var = session_get(h);                                            \
    if (!var)                                                                                \
    return pm_error(MPI_COMM_SELF, MPI_ERR_SESSION, "%s: invalid session %#x", fn,           \
                    (unsigned)(h))

int pm_pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, pset_names[i]))
            return i;
    return -1;
}

/* The process set named `name`: its index in *i, or raise on s. */
static int pset_find(struct pm_session_obj *s, const char *name, const char *fn, int *i)
{
    if ((*i = pm_pset_index(name)) >= 0)
        return MPI_SUCCESS;
    return SESSION_ERROR(s, MPI_ERR_ARG, "%s: no process set named \"%s\"", fn,
                         name ? name : "(null)");
}

/* The thread level an info asks for (MPI_THREAD_MULTIPLE when it does not:
 * every level is always provided). */
static int asked_level(MPI_Info info)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL &&
        PMPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, value, &flag) == MPI_SUCCESS &&
        flag)
        for (int i = 0; i < 4; i++)
            if (!strcasecmp(value, level_names[i]))
                return i;
    return MPI_THREAD_MULTIPLE;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    /* before any instance exists: errors go to the handler given, if usable */
    MPI_Errhandler eh = pm_errhandler_usable(errhandler, PM_ERRH_FOR_SESSION)
                            ? errhandler : MPI_ERRORS_ARE_FATAL;
    if (!session)
        return pm_error_handler(eh, MPI_SESSION_NULL, MPI_ERR_ARG, "%s: session is NULL", fn);
    *session = MPI_SESSION_NULL;
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error_handler(eh, MPI_SESSION_NULL, MPI_ERR_INFO,
                                "%s: invalid info handle %#x", fn, (unsigned)info);
    if (eh != errhandler)
        return pm_error_handler(eh, MPI_SESSION_NULL, MPI_ERR_ERRHANDLER,
                                "%s: invalid error handler %#x for a session", fn,
                                (unsigned)errhandler);
    if (pm_instance_acquire(fn) != MPI_SUCCESS)
        return pm_error_handler(eh, MPI_SESSION_NULL, MPI_ERR_OTHER,
                                "%s: MPI was finalized in this process and cannot restart", fn);
    struct pm_session_obj *s = calloc(1, sizeof *s);
    int h = s ? pm_table_add(&pm_session_table, s) : 0;
    if (!h) {
        free(s);
        pm_instance_release();
        return pm_error_handler(eh, MPI_SESSION_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    s->handle = h;
    s->errhandler = errhandler;
    pm_errhandler_retain(errhandler);
    s->thread_level = asked_level(info);
    *session = h;
    return MPI_SUCCESS;
}
PM_WEAK(Session_init)

int PMPI_Session_finalize(MPI_Session *session)
{
    static const char fn[] = "MPI_Session_finalize";
    if (!session)
        return pm_error(MPI_COMM_SELF, MPI_ERR_ARG, "%s: session is NULL", fn);
    GET_SESSION(s, *session, fn);
    /* its buffered messages leave first, as MPI_Finalize's */
    struct pm_bbuf *b = atomic_load(&s->bbuf);
    pm_bbuf_flush(b);
    pm_table_remove(&pm_session_table, s->handle);
    pm_bbuf_free(b);
    pm_errhandler_release(s->errhandler);
    free(s);
    *session = MPI_SESSION_NULL;
    return pm_instance_release();
}
PM_WEAK(Session_finalize)

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char fn[] = "MPI_Session_get_num_psets";
    GET_SESSION(s, session, fn);
    (void)info; /* no query keys are defined */
    if (!npset_names)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: npset_names is NULL", fn);
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
PM_WEAK(Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    static const char fn[] = "MPI_Session_get_nth_pset";
    GET_SESSION(s, session, fn);
    (void)info;
    if (n < 0 || n >= NPSETS)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: process set %d outside 0..%d", fn, n,
                             NPSETS - 1);
    if (!pset_len || *pset_len < 0)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: pset_len is %s", fn,
                             pset_len ? "negative" : "NULL");
    int len = (int)strlen(pset_names[n]) + 1;
    if (*pset_len == 0) { /* MPI-4.0 §11.3.2: the length asked for, with its NUL */
        *pset_len = len;
        return MPI_SUCCESS;
    }
    if (!pset_name)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: pset_name is NULL", fn);
    int copy = *pset_len < len ? *pset_len - 1 : len - 1;
    memcpy(pset_name, pset_names[n], (size_t)copy);
    pset_name[copy] = '\0';
    *pset_len = len;
    return MPI_SUCCESS;
}
PM_WEAK(Session_get_nth_pset)

/* A new info holding one key. */
static int info_with(const char *key, const char *value, MPI_Info *out)
{
    int rc = PMPI_Info_create(out);
    if (rc == MPI_SUCCESS && (rc = PMPI_Info_set(*out, key, value)) != MPI_SUCCESS)
        PMPI_Info_free(out);
    return rc;
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Session_get_info";
    GET_SESSION(s, session, fn);
    if (!info_used)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: info_used is NULL", fn);
    int rc = info_with("thread_level", level_names[s->thread_level], info_used);
    return rc == MPI_SUCCESS ? rc : SESSION_ERROR(s, rc, "%s: out of memory", fn);
}
PM_WEAK(Session_get_info)

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fn[] = "MPI_Session_get_pset_info";
    GET_SESSION(s, session, fn);
    int i, rc = pset_find(s, pset_name, fn, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!info)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: info is NULL", fn);
    char size[16];
    snprintf(size, sizeof size, "%d", i == 0 ? pm_world_size : 1);
    rc = info_with("mpi_size", size, info);
    return rc == MPI_SUCCESS ? rc : SESSION_ERROR(s, rc, "%s: out of memory", fn);
}
PM_WEAK(Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name,
                                 MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_from_session_pset";
    GET_SESSION(s, session, fn);
    int i, rc = pset_find(s, pset_name, fn, &i);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!newgroup)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: newgroup is NULL", fn);
    rc = PMPI_Comm_group(i == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF, newgroup);
    if (rc != MPI_SUCCESS)
        return SESSION_ERROR(s, rc, "%s: out of memory", fn);
    pm_group_get(*newgroup)->session = s->handle; /* its communicators use s's buffer */
    return MPI_SUCCESS;
}
PM_WEAK(Group_from_session_pset)

/* ---- Buffered mode's session buffer (MPI-4.1 §3.6.1) ---------------------- */
struct pm_bbuf *pm_session_bbuf(int h)
{
    struct pm_session_obj *s = session_get(h);
    return s ? atomic_load_explicit(&s->bbuf, memory_order_acquire) : NULL;
}

#define BUFFER_CALL(s, fn, call)                                                           \
    do {                                                                                   \
        char why[PM_WHY_LEN];                                                              \
        int rc_ = (call);                                                                  \
        if (rc_ != MPI_SUCCESS)                                                            \
            return SESSION_ERROR(s, rc_, "%s: %s", fn, why);                               \
    } while (0)

int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    static const char fn[] = "MPI_Session_attach_buffer";
    GET_SESSION(s, session, fn);
    BUFFER_CALL(s, fn, pm_bbuf_attach_call(pm_bbuf_get(&s->bbuf), buffer, size, why));
    return MPI_SUCCESS;
}
PM_WEAK(Session_attach_buffer)

int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    static const char fn[] = "MPI_Session_attach_buffer_c";
    GET_SESSION(s, session, fn);
    BUFFER_CALL(s, fn, pm_bbuf_attach_call(pm_bbuf_get(&s->bbuf), buffer, size, why));
    return MPI_SUCCESS;
}
PM_WEAK(Session_attach_buffer_c)

int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    static const char fn[] = "MPI_Session_detach_buffer";
    GET_SESSION(s, session, fn);
    size_t n = 0;
    BUFFER_CALL(s, fn, pm_bbuf_detach_call(atomic_load(&s->bbuf), buffer_addr, size != NULL,
                                           &n, why));
    *size = pm_int_or_undefined((MPI_Count)n);
    return MPI_SUCCESS;
}
PM_WEAK(Session_detach_buffer)

int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    static const char fn[] = "MPI_Session_detach_buffer_c";
    GET_SESSION(s, session, fn);
    size_t n = 0;
    BUFFER_CALL(s, fn, pm_bbuf_detach_call(atomic_load(&s->bbuf), buffer_addr, size != NULL,
                                           &n, why));
    *size = (MPI_Count)n;
    return MPI_SUCCESS;
}
PM_WEAK(Session_detach_buffer_c)

int PMPI_Session_flush_buffer(MPI_Session session)
{
    GET_SESSION(s, session, "MPI_Session_flush_buffer");
    pm_bbuf_flush(atomic_load(&s->bbuf));
    return MPI_SUCCESS;
}
PM_WEAK(Session_flush_buffer)

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    static const char fn[] = "MPI_Session_iflush_buffer";
    GET_SESSION(s, session, fn);
    BUFFER_CALL(s, fn, pm_bbuf_iflush_call(atomic_load(&s->bbuf), pm_comm_self, request, why));
    return MPI_SUCCESS;
}
PM_WEAK(Session_iflush_buffer)

/* ---- Error handlers ------------------------------------------------------ */
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    /* allowed before any session exists (MPI-4.0 §11.3.1) */
    return pm_errhandler_create((MPI_Comm_errhandler_function *)session_errhandler_fn,
                                PM_ERRH_FOR_SESSION, errhandler,
                                "MPI_Session_create_errhandler");
}
PM_WEAK(Session_create_errhandler)

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_Session_set_errhandler";
    GET_SESSION(s, session, fn);
    if (!pm_errhandler_usable(errhandler, PM_ERRH_FOR_SESSION))
        return SESSION_ERROR(s, MPI_ERR_ERRHANDLER,
                             "%s: invalid error handler %#x for a session", fn,
                             (unsigned)errhandler);
    pm_errhandler_swap(&s->errhandler, errhandler);
    return MPI_SUCCESS;
}
PM_WEAK(Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_Session_get_errhandler";
    GET_SESSION(s, session, fn);
    if (!errhandler)
        return SESSION_ERROR(s, MPI_ERR_ARG, "%s: errhandler is NULL", fn);
    pm_errhandler_read(&s->errhandler, errhandler);
    return MPI_SUCCESS;
}
PM_WEAK(Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char fn[] = "MPI_Session_call_errhandler";
    GET_SESSION(s, session, fn);
    return pm_errhandler_call_with(s->errhandler, s->handle, errorcode, fn);
}
PM_WEAK(Session_call_errhandler)
