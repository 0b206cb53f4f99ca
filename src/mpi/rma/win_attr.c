/*
 * win_attr.c — the local window calls beside RMA (MPI-3.1 §11.2.6-7, §8.3):
 * error handlers, attributes (keys are in attr_keyval.c, the lists in
 * attr.c), name, info hints, group, and raising an error on a window.
 *
 * A window's error handler is kept on its private communicator (w->comm),
 * whose win_handle names the window: pm_error then calls the handler with
 * the window, and the communicator error handler code serves windows too.
 */
#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "win.h"

int pm_win_error(MPI_Win win, int code, const char *fmt, ...)
{
    char msg[MPI_MAX_ERROR_STRING];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct pm_win *w = pm_win_get(win);
    /* A window still under construction may have no communicator yet. */
    MPI_Comm comm = w && w->comm ? w->comm->handle : MPI_COMM_WORLD;
    return pm_error(comm, code, "%s", msg);
}

int pm_win_invalid(MPI_Win win, const char *fname)
{
    if (win == MPI_WIN_NULL)
        return pm_win_error(MPI_WIN_NULL, MPI_ERR_WIN, "%s: the window is MPI_WIN_NULL", fname);
    return pm_win_error(MPI_WIN_NULL, MPI_ERR_WIN, "%s: invalid window %#x", fname,
                        (unsigned)win);
}

/* ---- Error handlers ------------------------------------------------------ */

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_Win_create_errhandler");
    /* Same signature but for the handle type, which is an int for both. */
    return pm_errhandler_create((MPI_Comm_errhandler_function *)win_errhandler_fn, PM_ERRH_FOR_WIN,
                                errhandler, "MPI_Win_create_errhandler");
}
PM_WEAK(Win_create_errhandler)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    PM_CHECK_INIT("MPI_Win_set_errhandler");
    PM_GET_WIN(w, win, "MPI_Win_set_errhandler");
    return pm_errhandler_set(w->comm, errhandler, "MPI_Win_set_errhandler");
}
PM_WEAK(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    PM_CHECK_INIT("MPI_Win_get_errhandler");
    PM_GET_WIN(w, win, "MPI_Win_get_errhandler");
    return pm_errhandler_get_of(w->comm, errhandler, "MPI_Win_get_errhandler");
}
PM_WEAK(Win_get_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    PM_CHECK_INIT("MPI_Win_call_errhandler");
    PM_GET_WIN(w, win, "MPI_Win_call_errhandler");
    return pm_errhandler_call(w->comm, errorcode, "MPI_Win_call_errhandler");
}
PM_WEAK(Win_call_errhandler)

/* ---- Attributes ---------------------------------------------------------- */

static struct pm_attr_host host_win(struct pm_win *w)
{
    return (struct pm_attr_host){&w->attrs, &w->attr_lock, PM_KV_WIN, w->handle};
}

int pm_attrs_delete_win(struct pm_win *w)
{
    struct pm_attr_host h = host_win(w);
    return pm_attrs_delete_all(&h);
}

/* The value of a predefined attribute (§11.2.6): the base address itself,
 * pointers for the others, valid while the window lives. */
static void *predefined_value(struct pm_win *w, int keyval)
{
    static const int model = MPI_WIN_UNIFIED; /* one copy of the memory: no separate public one */
    switch (keyval) {
    case MPI_WIN_BASE: return w->base;
    case MPI_WIN_SIZE: return &w->win_size;
    case MPI_WIN_DISP_UNIT: return &w->disp_unit_attr;
    case MPI_WIN_CREATE_FLAVOR: return &w->flavor;
    case MPI_WIN_MODEL: return (void *)&model;
    default: return NULL;
    }
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Win_set_attr";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(win_keyval, PM_KV_WIN, false, w->comm->handle, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_win(w);
    rc = pm_attr_set(&h, kv, attribute_val);
    pm_kv_release(kv);
    if (rc)
        return pm_win_error(win, rc,
                            "%s: the delete callback of the old value failed, or out of "
                            "memory (error %d)", fn, rc);
    return MPI_SUCCESS;
}
PM_WEAK(Win_set_attr)

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Win_get_attr";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    if (!attribute_val || !flag)
        return pm_win_error(win, MPI_ERR_ARG, "%s: attribute_val or flag is NULL", fn);
    /* Predefined keyvals are outside the keyval table: answer them first. */
    if (pm_kv_win_predefined(win_keyval)) {
        *(void **)attribute_val = predefined_value(w, win_keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    struct pm_keyval *kv;
    int rc = pm_kv_get(win_keyval, PM_KV_WIN, false, w->comm->handle, fn, &kv);
    if (rc)
        return rc;
    void *v = NULL;
    struct pm_attr_host h = host_win(w);
    *flag = pm_attr_get(&h, kv, &v);
    if (*flag)
        *(void **)attribute_val = v;
    pm_kv_release(kv);
    return MPI_SUCCESS;
}
PM_WEAK(Win_get_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char fn[] = "MPI_Win_delete_attr";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    /* pm_kv_get refuses the predefined keyvals (MPI_ERR_KEYVAL). */
    struct pm_keyval *kv;
    int rc = pm_kv_get(win_keyval, PM_KV_WIN, false, w->comm->handle, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_win(w);
    rc = pm_attr_delete(&h, kv);
    pm_kv_release(kv);
    if (rc)
        return pm_win_error(win, rc, "%s: the delete callback failed (error %d)", fn, rc);
    return MPI_SUCCESS;
}
PM_WEAK(Win_delete_attr)

/* ---- Name, info, group --------------------------------------------------- */

int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    PM_CHECK_INIT("MPI_Win_set_name");
    PM_GET_WIN(w, win, "MPI_Win_set_name");
    if (!win_name)
        return pm_win_error(win, MPI_ERR_ARG, "MPI_Win_set_name: win_name is NULL");
    pm_lock(&w->attr_lock);
    pm_strlcpy(w->name, win_name, sizeof w->name);
    pm_unlock(&w->attr_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    PM_CHECK_INIT("MPI_Win_get_name");
    if (win == MPI_WIN_NULL && win_name && resultlen) { /* MPI-4.1: named too */
        *resultlen = pm_strlcpy(win_name, "MPI_WIN_NULL", MPI_MAX_OBJECT_NAME);
        return MPI_SUCCESS;
    }
    PM_GET_WIN(w, win, "MPI_Win_get_name");
    if (!win_name || !resultlen)
        return pm_win_error(win, MPI_ERR_ARG, "MPI_Win_get_name: win_name or resultlen is NULL");
    pm_lock(&w->attr_lock);
    *resultlen = pm_strlcpy(win_name, w->name, MPI_MAX_OBJECT_NAME);
    pm_unlock(&w->attr_lock);
    return MPI_SUCCESS;
}
PM_WEAK(Win_get_name)

/* The window hints of §11.2.1 and their defaults (what the implementation
 * does when not told otherwise: every accumulate ordering, any operation,
 * sizes and units may differ). Other keys are ignored, as in MPICH, so
 * MPI_Win_get_info reports the hints in use and nothing else. */
static const struct {
    const char *key, *value;
} win_hints[] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"alloc_shared_noncontig", "false"},
};

bool pm_win_unordered(const struct pm_win *w)
{
    char val[MPI_MAX_INFO_VAL];
    int flag = 0;
    if (w->info == MPI_INFO_NULL ||
        PMPI_Info_get(w->info, "accumulate_ordering", MPI_MAX_INFO_VAL - 1, val, &flag) !=
            MPI_SUCCESS)
        return false;
    return flag && strcmp(val, "none") == 0;
}

/* A new info holding every window hint: its value in given if set there,
 * else in old if set there, else the default. */
int pm_win_hints(MPI_Info old, MPI_Info given, MPI_Info *out)
{
    int rc = PMPI_Info_create(out);
    char val[MPI_MAX_INFO_VAL];
    for (size_t i = 0; i < sizeof win_hints / sizeof win_hints[0] && !rc; i++) {
        int flag = 0;
        if (given != MPI_INFO_NULL)
            rc = PMPI_Info_get(given, win_hints[i].key, MPI_MAX_INFO_VAL - 1, val, &flag);
        if (!rc && !flag && old != MPI_INFO_NULL)
            rc = PMPI_Info_get(old, win_hints[i].key, MPI_MAX_INFO_VAL - 1, val, &flag);
        if (!rc)
            rc = PMPI_Info_set(*out, win_hints[i].key, flag ? val : win_hints[i].value);
    }
    if (rc && *out != MPI_INFO_NULL)
        PMPI_Info_free(out);
    return rc;
}

/* §11.2.7: new values for the hints given; the other hints keep theirs.
 * Proust MPI acts on no hint after creation, so they are only recorded
 * (and reported by MPI_Win_get_info). */
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char fn[] = "MPI_Win_set_info";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS; /* no hints to change */
    if (!pm_info_valid(info))
        return pm_win_error(win, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    /* attr_lock keeps MPI_Win_set_info in another thread from freeing the
     * hints while they are read */
    MPI_Info merged = MPI_INFO_NULL;
    pm_lock(&w->attr_lock);
    int rc = pm_win_hints(w->info, info, &merged);
    pm_unlock(&w->attr_lock);
    if (rc)
        return pm_win_error(win, rc, "%s: could not record the hints (error %d)", fn, rc);
    pm_lock(&w->attr_lock);
    MPI_Info old = w->info;
    w->info = merged;
    pm_unlock(&w->attr_lock);
    if (old != MPI_INFO_NULL)
        PMPI_Info_free(&old);
    return MPI_SUCCESS;
}
PM_WEAK(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    PM_CHECK_INIT("MPI_Win_get_info");
    PM_GET_WIN(w, win, "MPI_Win_get_info");
    if (!info_used)
        return pm_win_error(win, MPI_ERR_ARG, "MPI_Win_get_info: info_used is NULL");
    pm_lock(&w->attr_lock);
    int rc = pm_win_hints(w->info, MPI_INFO_NULL, info_used);
    pm_unlock(&w->attr_lock);
    if (rc)
        return pm_win_error(win, rc, "MPI_Win_get_info: could not create the info object");
    return MPI_SUCCESS;
}
PM_WEAK(Win_get_info)

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    PM_CHECK_INIT("MPI_Win_get_group");
    PM_GET_WIN(w, win, "MPI_Win_get_group");
    if (!group)
        return pm_win_error(win, MPI_ERR_ARG, "MPI_Win_get_group: group is NULL");
    return pm_group_handle_of(w->comm->local, w->comm->session, group, "MPI_Win_get_group");
}
PM_WEAK(Win_get_group)
