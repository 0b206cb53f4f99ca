/*
 * attr.c — attribute caching on communicators and datatypes: set/get/
 * delete (and the deprecated MPI_Attr_put/get/delete), the copy on dup and
 * deletion on free, and the predefined attributes (MPI_TAG_UB & co). Keys
 * are in attr_keyval.c; window attributes (win_attr.c) use the list
 * functions here through struct pm_attr_host.
 *
 * An object's attributes are a list, newest first, so deleting from the
 * head deletes in LIFO order (which MPI-2.2 asks for MPI_COMM_SELF at
 * MPI_Finalize). Callbacks may call MPI: no lock is held while they run.
 */
#include <stdint.h>
#include <stdlib.h>

#include "attr_language.h"
#include "comm.h"

struct pm_attr {
    struct pm_keyval *kv;
    void *val;
    int lang; /* PROUST_MPI_ATTR_*: who set it */
    int ival; /* set from Fortran as INTEGER: the value C reads a pointer to */
    struct pm_attr *next;
};

/* ---- Language of the caller (attr_language.h) ------------------------------------ */

static _Thread_local int attr_language = PROUST_MPI_ATTR_C;

__attribute__((visibility("default"))) int proust_mpi_attr_language(int lang)
{
    int old = attr_language;
    attr_language = lang;
    return old;
}

/* The value of a as the calling language reads it: C reads an integer
 * that Fortran set through a pointer to it; the rest as stored. */
static void *value_read(struct pm_attr *a)
{
    if (attr_language != PROUST_MPI_ATTR_C || a->lang == PROUST_MPI_ATTR_C)
        return a->val;
    return a->lang == PROUST_MPI_ATTR_FORTRAN_INT ? (void *)&a->ival : (void *)&a->val;
}

static void set_value(struct pm_attr *a, void *val, int lang)
{
    a->val = val;
    a->lang = lang;
    a->ival = (int)(intptr_t)val;
}

/* Datatypes have no lock of their own for their attributes. */
static atomic_flag type_attr_lock = ATOMIC_FLAG_INIT;

/* ---- Attribute lists -------------------------------------------------------------- */

/* Hosts of communicator and datatype lists (struct pm_attr_host: comm.h). */

static struct pm_attr_host host_comm(struct pm_comm *c)
{
    return (struct pm_attr_host){&c->attrs, &c->attr_lock, PM_KV_COMM, c->handle};
}

static struct pm_attr_host host_type(struct pm_datatype *t)
{
    return (struct pm_attr_host){&t->attrs, &type_attr_lock, PM_KV_TYPE, t->handle};
}

/* The value a copy or delete callback gets: a C keyval's callback reads
 * a value Fortran set through a pointer to it, as C's get_attr does (into
 * *a, a copy the callback may point to); a Fortran keyval's trampoline
 * gets the stored value itself. */
static void *callback_value(const struct pm_keyval *kv, struct pm_attr *a)
{
    if (kv->fortran || a->lang == PROUST_MPI_ATTR_C)
        return a->val;
    return a->lang == PROUST_MPI_ATTR_FORTRAN_INT ? (void *)&a->ival : (void *)&a->val;
}

/* Callbacks run as C code: the calls they make are C's, whoever called
 * the function that runs them (a Fortran keyval's trampoline calls into
 * Fortran, whose calls say so again). Returns the language to restore. */
static int callbacks_begin(void)
{
    int was = attr_language;
    attr_language = PROUST_MPI_ATTR_C;
    return was;
}

static int call_delete(const struct pm_attr_host *h, struct pm_keyval *kv, struct pm_attr a)
{
    void *val = callback_value(kv, &a);
    int was = callbacks_begin(), rc = MPI_SUCCESS;
    if (h->kind == PM_KV_COMM && kv->cdel)
        rc = kv->cdel(h->handle, kv->id, val, kv->extra);
    else if (h->kind == PM_KV_WIN && kv->wdel)
        rc = kv->wdel(h->handle, kv->id, val, kv->extra);
    else if (h->kind == PM_KV_TYPE && kv->tdel)
        rc = kv->tdel(h->handle, kv->id, val, kv->extra);
    attr_language = was;
    return rc;
}

/* Take the attribute of kv out of the list (lock held); NULL if none. */
static struct pm_attr *unlink_attr(struct pm_attr **list, const struct pm_keyval *kv)
{
    for (struct pm_attr **p = list; *p; p = &(*p)->next)
        if ((*p)->kv == kv) {
            struct pm_attr *a = *p;
            *p = a->next;
            return a;
        }
    return NULL;
}

static bool find_attr(struct pm_attr *list, const struct pm_keyval *kv, struct pm_attr *copy)
{
    for (struct pm_attr *a = list; a; a = a->next)
        if (a->kv == kv) {
            *copy = *a;
            return true;
        }
    return false;
}

bool pm_attr_get(const struct pm_attr_host *h, const struct pm_keyval *kv, void **val)
{
    pm_lock(h->lock);
    bool found = false;
    for (struct pm_attr *a = *h->list; a && !found; a = a->next)
        if (a->kv == kv) {
            *val = value_read(a);
            found = true;
        }
    pm_unlock(h->lock);
    return found;
}

/* Delete the attribute of kv: its delete callback first; on failure the
 * attribute stays. */
int pm_attr_delete(const struct pm_attr_host *h, struct pm_keyval *kv)
{
    struct pm_attr found_attr;
    pm_lock(h->lock);
    bool found = find_attr(*h->list, kv, &found_attr);
    pm_unlock(h->lock);
    if (!found)
        return MPI_SUCCESS;
    int rc = call_delete(h, kv, found_attr);
    if (rc != MPI_SUCCESS)
        return rc;
    pm_lock(h->lock);
    struct pm_attr *a = unlink_attr(h->list, kv);
    pm_unlock(h->lock);
    if (a) {
        pm_kv_release(a->kv);
        free(a);
    }
    return MPI_SUCCESS;
}

/* As if the old value were deleted first, then the new one stored. */
int pm_attr_set(const struct pm_attr_host *h, struct pm_keyval *kv, void *val)
{
    int lang = attr_language; /* (before the delete callback, which may call MPI) */
    int rc = pm_attr_delete(h, kv);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pm_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    pm_kv_retain(kv);
    a->kv = kv;
    set_value(a, val, lang);
    pm_lock(h->lock);
    struct pm_attr *old = unlink_attr(h->list, kv); /* set by a racing thread */
    a->next = *h->list;
    *h->list = a;
    pm_unlock(h->lock);
    if (old) {
        pm_kv_release(old->kv);
        free(old);
    }
    return MPI_SUCCESS;
}

/* Delete every attribute, newest first. Stops at a failing callback (that
 * attribute and the older ones stay). */
int pm_attrs_delete_all(const struct pm_attr_host *h)
{
    for (;;) {
        pm_lock(h->lock);
        struct pm_attr *a = *h->list;
        if (a)
            *h->list = a->next;
        pm_unlock(h->lock);
        if (!a)
            return MPI_SUCCESS;
        int rc = call_delete(h, a->kv, *a);
        if (rc != MPI_SUCCESS) {
            pm_lock(h->lock);
            a->next = *h->list;
            *h->list = a;
            pm_unlock(h->lock);
            return rc;
        }
        pm_kv_release(a->kv);
        free(a);
    }
}

/* Run the copy callbacks of from's attributes, oldest first, storing those
 * that ask to be copied on `to` (a new object nobody else sees yet). */
static int attrs_copy(const struct pm_attr_host *from, const struct pm_attr_host *to)
{
    pm_lock(from->lock);
    size_t n = 0;
    for (struct pm_attr *a = *from->list; a; a = a->next)
        n++;
    struct pm_attr *snap = n ? malloc(n * sizeof *snap) : NULL;
    if (n && !snap) {
        pm_unlock(from->lock);
        return MPI_ERR_NO_MEM;
    }
    size_t i = n;
    for (struct pm_attr *a = *from->list; a; a = a->next) {
        snap[--i] = *a;
        pm_kv_retain(a->kv);
    }
    pm_unlock(from->lock);
    int rc = MPI_SUCCESS;
    for (i = 0; i < n; i++) {
        struct pm_keyval *kv = snap[i].kv;
        void *out = NULL;
        int flag = 0;
        if (!rc) {
            void *in = callback_value(kv, &snap[i]);
            int was = callbacks_begin();
            if (from->kind == PM_KV_COMM && kv->ccopy)
                rc = kv->ccopy(from->handle, kv->id, kv->extra, in, &out, &flag);
            else if (from->kind == PM_KV_TYPE && kv->tcopy)
                rc = kv->tcopy(from->handle, kv->id, kv->extra, in, &out, &flag);
            attr_language = was;
        }
        if (!rc && flag) {
            struct pm_attr *a = malloc(sizeof *a);
            if (a) {
                a->kv = kv; /* takes the snapshot's reference */
                set_value(a, out, snap[i].lang);
                pm_lock(to->lock);
                a->next = *to->list;
                *to->list = a;
                pm_unlock(to->lock);
                continue;
            }
            rc = MPI_ERR_NO_MEM;
        }
        pm_kv_release(kv);
    }
    free(snap);
    return rc;
}

int pm_attrs_copy_comm(struct pm_comm *from, struct pm_comm *to)
{
    struct pm_attr_host f = host_comm(from), t = host_comm(to);
    return attrs_copy(&f, &t);
}

int pm_attrs_delete_comm(struct pm_comm *c)
{
    struct pm_attr_host h = host_comm(c);
    return pm_attrs_delete_all(&h);
}

int pm_attrs_copy_type(struct pm_datatype *from, struct pm_datatype *to)
{
    struct pm_attr_host f = host_type(from), t = host_type(to);
    return attrs_copy(&f, &t);
}

int pm_attrs_delete_type(struct pm_datatype *t)
{
    struct pm_attr_host h = host_type(t);
    return pm_attrs_delete_all(&h);
}

/* ---- Communicator attributes ------------------------------------------------------- */

/* Values of the predefined attributes: the caller gets a pointer to them. */
static int pv_tag_ub = PM_TAG_UB, pv_host = MPI_PROC_NULL, pv_io = MPI_ANY_SOURCE,
           pv_wtime_global = 0, pv_appnum = 0;
static _Atomic int pv_universe, pv_lastcode;

static void *predefined_value(int keyval)
{
    switch (keyval) {
    case MPI_TAG_UB: return &pv_tag_ub;
    case MPI_HOST: return &pv_host;
    case MPI_IO: return &pv_io;
    case MPI_WTIME_IS_GLOBAL: return &pv_wtime_global;
    case MPI_UNIVERSE_SIZE:
        atomic_store(&pv_universe, pm_world_size);
        return (void *)&pv_universe;
    case MPI_LASTUSEDCODE:
        atomic_store(&pv_lastcode, pm_error_last_code());
        return (void *)&pv_lastcode;
    case MPI_APPNUM: return &pv_appnum;
    default: return NULL;
    }
}

#define GET_COMM(var, h, fname)         \
    struct pm_comm *var = pm_comm_get(h); \
    if (!var)                             \
    return pm_comm_invalid(h, fname)

static int comm_set_attr(MPI_Comm comm, int keyval, void *val, const char *fn)
{
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(keyval, PM_KV_COMM, false, comm, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_comm(c);
    rc = pm_attr_set(&h, kv, val);
    pm_kv_release(kv);
    if (rc)
        return pm_error(comm, rc, "%s: the delete callback of the old value failed (error %d)",
                        fn, rc);
    return MPI_SUCCESS;
}

static int comm_get_attr(MPI_Comm comm, int keyval, void *val, int *flag, const char *fn)
{
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(keyval, PM_KV_COMM, true, comm, fn, &kv);
    if (rc)
        return rc;
    if (!val || !flag) {
        if (kv)
            pm_kv_release(kv);
        return pm_error(comm, MPI_ERR_ARG, "%s: attribute_val or flag is NULL", fn);
    }
    if (!kv) {
        *(void **)val = predefined_value(keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    void *v = NULL;
    struct pm_attr_host h = host_comm(c);
    *flag = pm_attr_get(&h, kv, &v);
    if (*flag)
        *(void **)val = v;
    pm_kv_release(kv);
    return MPI_SUCCESS;
}

static int comm_delete_attr(MPI_Comm comm, int keyval, const char *fn)
{
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(keyval, PM_KV_COMM, false, comm, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_comm(c);
    rc = pm_attr_delete(&h, kv);
    pm_kv_release(kv);
    if (rc)
        return pm_error(comm, rc, "%s: the delete callback failed (error %d)", fn, rc);
    return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return comm_set_attr(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}
PM_WEAK(Comm_set_attr)

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return comm_get_attr(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}
PM_WEAK(Comm_get_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return comm_delete_attr(comm, comm_keyval, "MPI_Comm_delete_attr");
}
PM_WEAK(Comm_delete_attr)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_set_attr(comm, keyval, attribute_val, "MPI_Attr_put");
}
PM_WEAK(Attr_put)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return comm_get_attr(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}
PM_WEAK(Attr_get)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_delete_attr(comm, keyval, "MPI_Attr_delete");
}
PM_WEAK(Attr_delete)

/* ---- Datatype attributes ------------------------------------------------------------ */

#define GET_TYPE(var, h, fname)                                                      \
    struct pm_datatype *var = pm_type_get(h);                                        \
    if (!var)                                                                        \
    return pm_error(MPI_COMM_NULL, MPI_ERR_TYPE, "%s: invalid datatype handle %#x%s", \
                    fname, (unsigned)(h), (h) == MPI_DATATYPE_NULL ? " (MPI_DATATYPE_NULL)" : "")

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char fn[] = "MPI_Type_set_attr";
    PM_CHECK_INIT(fn);
    GET_TYPE(t, datatype, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(type_keyval, PM_KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_type(t);
    h.handle = datatype;
    rc = pm_attr_set(&h, kv, attribute_val);
    pm_kv_release(kv);
    if (rc)
        return pm_error(MPI_COMM_NULL, rc,
                        "%s: the delete callback of the old value failed (error %d)", fn, rc);
    return MPI_SUCCESS;
}
PM_WEAK(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char fn[] = "MPI_Type_get_attr";
    PM_CHECK_INIT(fn);
    GET_TYPE(t, datatype, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(type_keyval, PM_KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    if (!attribute_val || !flag) {
        pm_kv_release(kv);
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: attribute_val or flag is NULL", fn);
    }
    void *v = NULL;
    struct pm_attr_host h = host_type(t);
    *flag = pm_attr_get(&h, kv, &v);
    if (*flag)
        *(void **)attribute_val = v;
    pm_kv_release(kv);
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char fn[] = "MPI_Type_delete_attr";
    PM_CHECK_INIT(fn);
    GET_TYPE(t, datatype, fn);
    struct pm_keyval *kv;
    int rc = pm_kv_get(type_keyval, PM_KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    struct pm_attr_host h = host_type(t);
    h.handle = datatype;
    rc = pm_attr_delete(&h, kv);
    pm_kv_release(kv);
    if (rc)
        return pm_error(MPI_COMM_NULL, rc, "%s: the delete callback failed (error %d)", fn, rc);
    return MPI_SUCCESS;
}
PM_WEAK(Type_delete_attr)
