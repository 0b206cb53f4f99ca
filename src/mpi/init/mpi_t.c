/*
 * mpi_t.c — the tool information interface (MPI_T, MPI-3.1 chapter 14).
 *
 * Control variables: every PROUST_* environment variable (docs/CONFIG.md,
 * through proust_config_entry: the engine's, then this layer's own,
 * mpi_config.h, registered by MPI_T_init_thread and when MPI starts), as a
 * string (MPI_CHAR) holding the value in force: the environment's or the
 * default. They are read when the library starts, so their scope is
 * MPI_T_SCOPE_READONLY and writing one is MPI_T_ERR_CVAR_SET_NEVER; set
 * them in the environment instead. One category, "proust", holds them all.
 *
 * Performance variables: none are exported (MPI_T_pvar_get_num gives 0);
 * sessions work, and every index or handle is refused as the standard says
 * an unknown one must be. No enumerations either.
 *
 * The interface works before MPI_Init and after MPI_Finalize; calls other
 * than MPI_T_init_thread need it initialized (MPI_T_ERR_NOT_INITIALIZED).
 * MPI_T errors are returned, never raised through an error handler.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

static _Atomic int t_inits; /* MPI_T_init_thread calls not yet finalized */

int PMPI_T_init_thread(int required, int *provided)
{
    (void)required; /* every call here is thread-safe */
    if (!provided)
        return MPI_T_ERR_INVALID;
    pm_config_register(); /* the control variables include ours */
    atomic_fetch_add_explicit(&t_inits, 1, memory_order_acq_rel);
    *provided = MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}
PM_WEAK(T_init_thread)

int PMPI_T_finalize(void)
{
    int n = atomic_load_explicit(&t_inits, memory_order_acquire);
    do {
        if (n <= 0)
            return MPI_T_ERR_NOT_INITIALIZED;
    } while (!atomic_compare_exchange_weak_explicit(&t_inits, &n, n - 1, memory_order_acq_rel,
                                                    memory_order_acquire));
    return MPI_SUCCESS;
}
PM_WEAK(T_finalize)

/* A string out (MPI-3.1 §14.3.3): nothing when len is NULL; the length it
 * needs (with its NUL) when buf is NULL or *len is 0; otherwise as much as
 * fits, terminated, and the length written (with the NUL). */
bool pm_t_initialized(void)
{
    return atomic_load_explicit(&t_inits, memory_order_acquire) > 0;
}

void pm_t_str_out(const char *src, char *buf, int *len)
{
    if (!len)
        return;
    size_t n = strlen(src);
    if (!buf || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    if (n > (size_t)*len - 1)
        n = (size_t)*len - 1;
    memcpy(buf, src, n);
    buf[n] = '\0';
    *len = (int)n + 1;
}

/* ---- enumerations: none ------------------------------------------------- */

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    PM_T_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
PM_WEAK(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    PM_T_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
PM_WEAK(T_enum_get_item)

/* ---- control variables -------------------------------------------------- */

static int cvar_count(void)
{
    int n = 0;
    while (proust_config_entry(n, NULL, NULL, NULL, NULL) == PROUST_OK)
        n++;
    return n;
}

struct pm_t_cvar {
    int index;
    int count; /* the buffer a read needs, NUL included */
};

int PMPI_T_cvar_get_num(int *num_cvar)
{
    PM_T_CHECK_INIT();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = cvar_count();
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *scope)
{
    PM_T_CHECK_INIT();
    const char *n, *def, *doc;
    if (proust_config_entry(cvar_index, &n, NULL, &def, &doc) != PROUST_OK)
        return MPI_T_ERR_INVALID_INDEX;
    pm_t_str_out(n, name, name_len);
    if (desc_len) {
        size_t len = strlen(doc) + strlen(def) + 32;
        char *d = malloc(len);
        if (!d)
            return MPI_T_ERR_MEMORY;
        snprintf(d, len, "%s (default: \"%s\")", doc, def);
        pm_t_str_out(d, desc, desc_len);
        free(d);
    }
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = MPI_CHAR;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_get_info)

/* Index of the variable `name`, or -1. */
static int config_find(const char *name)
{
    const char *n;
    for (int i = 0; proust_config_entry(i, &n, NULL, NULL, NULL) == PROUST_OK; i++)
        if (strcmp(n, name) == 0)
            return i;
    return -1;
}

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    PM_T_CHECK_INIT();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    int i = config_find(name);
    if (i < 0)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = i;
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* bound to no object */
    PM_T_CHECK_INIT();
    const char *value;
    if (proust_config_entry(cvar_index, NULL, &value, NULL, NULL) != PROUST_OK)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct pm_t_cvar *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->index = cvar_index;
    h->count = (int)strlen(value) + 1;
    *handle = h;
    *count = h->count;
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_handle_alloc)

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    PM_T_CHECK_INIT();
    if (!handle || *handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    PM_T_CHECK_INIT();
    if (handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const char *value;
    if (proust_config_entry(handle->index, NULL, &value, NULL, NULL) != PROUST_OK)
        return MPI_T_ERR_INVALID_HANDLE;
    /* the buffer holds `count` chars, the length when the handle was made */
    int len = handle->count;
    pm_t_str_out(value, buf, &len);
    return MPI_SUCCESS;
}
PM_WEAK(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)buf;
    PM_T_CHECK_INIT();
    if (handle == MPI_T_CVAR_HANDLE_NULL)
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_CVAR_SET_NEVER; /* read at start-up: set the environment instead */
}
PM_WEAK(T_cvar_write)

/* ---- performance variables: none; sessions ---------------------------------- */

struct pm_t_session {
    struct pm_t_session *next;
};
static struct pm_t_session *sessions; /* the live ones, to tell a bad handle */
static atomic_flag sessions_lock = ATOMIC_FLAG_INIT;

static bool session_live(MPI_T_pvar_session s)
{
    bool found = false;
    pm_lock(&sessions_lock);
    for (struct pm_t_session *p = sessions; p && !found; p = p->next)
        found = p == s;
    pm_unlock(&sessions_lock);
    return found;
}

int PMPI_T_pvar_get_num(int *num_pvar)
{
    PM_T_CHECK_INIT();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = 0;
    return MPI_SUCCESS;
}
PM_WEAK(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                         char *desc, int *desc_len, int *bind, int *readonly, int *continuous,
                         int *atomic)
{
    (void)pvar_index, (void)name, (void)name_len, (void)verbosity, (void)var_class;
    (void)datatype, (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)readonly;
    (void)continuous, (void)atomic;
    PM_T_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
PM_WEAK(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    (void)var_class;
    PM_T_CHECK_INIT();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
PM_WEAK(T_pvar_get_index)

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    PM_T_CHECK_INIT();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct pm_t_session *s = malloc(sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    pm_lock(&sessions_lock);
    s->next = sessions;
    sessions = s;
    pm_unlock(&sessions_lock);
    *session = s;
    return MPI_SUCCESS;
}
PM_WEAK(T_pvar_session_create)

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    PM_T_CHECK_INIT();
    if (!session)
        return MPI_T_ERR_INVALID;
    struct pm_t_session *found = NULL;
    pm_lock(&sessions_lock);
    for (struct pm_t_session **pp = &sessions; *pp; pp = &(*pp)->next) {
        if (*pp == *session) {
            found = *pp;
            *pp = found->next;
            break;
        }
    }
    pm_unlock(&sessions_lock);
    if (!found)
        return MPI_T_ERR_INVALID_SESSION;
    free(found);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
PM_WEAK(T_pvar_session_free)

/* A session and a handle given to the calls below: no handle can exist (no
 * variable to make one for), so only MPI_T_PVAR_ALL_HANDLES is valid, where
 * `all_ok` (start, stop, reset: on every handle of the session, none). */
static int pvar_call(MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all_ok)
{
    PM_T_CHECK_INIT();
    if (!session_live(session))
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES && all_ok)
        return MPI_SUCCESS;
    return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)pvar_index, (void)obj_handle, (void)handle, (void)count;
    PM_T_CHECK_INIT();
    if (!session_live(session))
        return MPI_T_ERR_INVALID_SESSION;
    return MPI_T_ERR_INVALID_INDEX;
}
PM_WEAK(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    return pvar_call(session, handle ? *handle : MPI_T_PVAR_HANDLE_NULL, false);
}
PM_WEAK(T_pvar_handle_free)

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_call(session, handle, true);
}
PM_WEAK(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_call(session, handle, true);
}
PM_WEAK(T_pvar_stop)

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    (void)buf;
    return pvar_call(session, handle, false);
}
PM_WEAK(T_pvar_read)

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)buf;
    return pvar_call(session, handle, false);
}
PM_WEAK(T_pvar_write)

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_call(session, handle, true);
}
PM_WEAK(T_pvar_reset)

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    (void)buf;
    return pvar_call(session, handle, false);
}
PM_WEAK(T_pvar_readreset)

/* ---- categories: "proust", every control variable ------------------------------ */

static const char cat_name[] = "proust";
static const char cat_desc[] =
    "Proust runtime settings: the PROUST_* environment variables (docs/CONFIG.md)";

int PMPI_T_category_get_num(int *num_cat)
{
    PM_T_CHECK_INIT();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = 1;
    return MPI_SUCCESS;
}
PM_WEAK(T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                             int *desc_len, int *num_cvars, int *num_pvars, int *num_categories)
{
    PM_T_CHECK_INIT();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    pm_t_str_out(cat_name, name, name_len);
    pm_t_str_out(cat_desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = cvar_count();
    if (num_pvars)
        *num_pvars = 0;
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}
PM_WEAK(T_category_get_info)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    PM_T_CHECK_INIT();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    if (strcmp(name, cat_name) != 0)
        return MPI_T_ERR_INVALID_NAME;
    *cat_index = 0;
    return MPI_SUCCESS;
}
PM_WEAK(T_category_get_index)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    PM_T_CHECK_INIT();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    if (len < 0 || (len > 0 && !indices))
        return MPI_T_ERR_INVALID;
    int n = cvar_count();
    for (int i = 0; i < len && i < n; i++)
        indices[i] = i;
    return MPI_SUCCESS;
}
PM_WEAK(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    (void)indices;
    PM_T_CHECK_INIT();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}
PM_WEAK(T_category_get_pvars)

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    (void)indices;
    PM_T_CHECK_INIT();
    if (cat_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}
PM_WEAK(T_category_get_categories)

int PMPI_T_category_changed(int *stamp)
{
    PM_T_CHECK_INIT();
    if (!stamp)
        return MPI_T_ERR_INVALID;
    *stamp = 0; /* the categories never change */
    return MPI_SUCCESS;
}
PM_WEAK(T_category_changed)
