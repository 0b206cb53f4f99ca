/*
 * attr.c — attribute caching on communicators and datatypes: keyvals
 * (MPI_Comm/Type_create_keyval and _free_keyval, the deprecated
 * MPI_Keyval_create/free), attributes (set/get/delete, the deprecated
 * MPI_Attr_put/get/delete), their copy on dup and deletion on free, the
 * predefined attributes (MPI_TAG_UB & co) and the predefined callbacks.
 *
 * Keyvals are small ints (predefined ones below PROUST_MPI_NUM_PREDEFINED_
 * KEYVALS), never reused. A keyval lives while its number (until freed) or
 * an attribute uses it; a freed keyval still in use can no longer set or
 * get attributes, but freeing it again does nothing (as in MPICH, which
 * its test suite relies on). An object's attributes
 * are a list, newest first, so deleting from the head deletes in LIFO
 * order (which MPI-2.2 asks for MPI_COMM_SELF at MPI_Finalize).
 * Callbacks may call MPI: no lock is held while they run.
 */
#include <stdlib.h>

#include "comm.h"

enum { KV_COMM = 1, KV_TYPE = 2 };

struct pm_keyval {
    int id, kind;
    MPI_Comm_copy_attr_function *ccopy;
    MPI_Comm_delete_attr_function *cdel;
    MPI_Type_copy_attr_function *tcopy;
    MPI_Type_delete_attr_function *tdel;
    void *extra;
    int refs;   /* the number (until freed) + attributes using it; kv_lock */
    bool freed; /* MPI_*_free_keyval was called */
};

struct pm_attr {
    struct pm_keyval *kv;
    void *val;
    struct pm_attr *next;
};

static struct pm_keyval **kvs;
static int kv_cap, kv_next = PROUST_MPI_NUM_PREDEFINED_KEYVALS;
static atomic_flag kv_lock = ATOMIC_FLAG_INIT;
/* Datatypes have no lock of their own for their attributes. */
static atomic_flag type_attr_lock = ATOMIC_FLAG_INIT;

/* ---- Predefined callbacks ------------------------------------------------------- */

int MPI_COMM_NULL_COPY_FN(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype type, int keyval, void *extra, void *in, void *out,
                          int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype type, int keyval, void *val, void *extra)
{
    return MPI_SUCCESS;
}

int MPI_TYPE_DUP_FN(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- Keyvals ---------------------------------------------------------------------- */

/* Reference counts change under kv_lock, so that a lookup never revives a
 * keyval whose last reference is going. */
static void kv_retain(struct pm_keyval *kv)
{
    pm_lock(&kv_lock);
    kv->refs++;
    pm_unlock(&kv_lock);
}

static void kv_release(struct pm_keyval *kv)
{
    pm_lock(&kv_lock);
    bool last = --kv->refs == 0;
    if (last && kvs[kv->id] == kv)
        kvs[kv->id] = NULL;
    pm_unlock(&kv_lock);
    if (last)
        free(kv);
}

static const char *kind_name(int kind)
{
    return kind == KV_COMM ? "communicator" : "datatype";
}

/* The keyval `id` of `kind` with a reference taken, or raise on `comm`.
 * A freed keyval is refused unless `allow_freed`. */
static int kv_lookup(int id, int kind, bool allow_predefined, bool allow_freed, MPI_Comm comm,
                     const char *fn, struct pm_keyval **out)
{
    *out = NULL;
    if (id > 0 && id < PROUST_MPI_NUM_PREDEFINED_KEYVALS) {
        if (kind == KV_COMM && allow_predefined)
            return MPI_SUCCESS; /* *out NULL: predefined */
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %d is predefined%s", fn, id,
                        kind == KV_COMM ? " and cannot be changed" : " (a communicator keyval)");
    }
    struct pm_keyval *kv = NULL;
    bool freed = false;
    pm_lock(&kv_lock);
    if (id >= PROUST_MPI_NUM_PREDEFINED_KEYVALS && id < kv_next)
        kv = kvs[id];
    if (kv) {
        freed = kv->freed;
        if (!freed || allow_freed)
            kv->refs++;
    }
    pm_unlock(&kv_lock);
    if (!kv || (freed && !allow_freed))
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: invalid keyval %d%s", fn, id,
                        id == MPI_KEYVAL_INVALID ? " (MPI_KEYVAL_INVALID)"
                        : kv ? " (it has been freed)" : "");
    if (kv->kind != kind) {
        kv_release(kv);
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %d is a %s keyval, not a %s keyval", fn,
                        id, kind_name(kv->kind), kind_name(kind));
    }
    *out = kv;
    return MPI_SUCCESS;
}

static int kv_get(int id, int kind, bool allow_predefined, MPI_Comm comm, const char *fn,
                  struct pm_keyval **out)
{
    return kv_lookup(id, kind, allow_predefined, false, comm, fn, out);
}

static int kv_create(struct pm_keyval *proto, int *keyval, const char *fn)
{
    if (!keyval)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: keyval is NULL", fn);
    struct pm_keyval *kv = malloc(sizeof *kv);
    if (!kv)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    *kv = *proto;
    kv->refs = 1;
    kv->freed = false;
    pm_lock(&kv_lock);
    if (kv_next >= kv_cap) {
        int cap = kv_cap ? 2 * kv_cap : 64;
        struct pm_keyval **n = realloc(kvs, (size_t)cap * sizeof *n);
        if (!n) {
            pm_unlock(&kv_lock);
            free(kv);
            return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of keyvals", fn);
        }
        for (int i = kv_cap; i < cap; i++)
            n[i] = NULL;
        kvs = n;
        kv_cap = cap;
    }
    kv->id = kv_next++;
    kvs[kv->id] = kv;
    pm_unlock(&kv_lock);
    *keyval = kv->id;
    return MPI_SUCCESS;
}

static int kv_free(int *keyval, int kind, const char *fn)
{
    if (!keyval)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: keyval is NULL", fn);
    struct pm_keyval *kv;
    int rc = kv_lookup(*keyval, kind, false, true, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    pm_lock(&kv_lock);
    bool first = !kv->freed;
    kv->freed = true;
    pm_unlock(&kv_lock);
    kv_release(kv); /* kv_lookup's reference */
    if (first)
        kv_release(kv); /* the number's */
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                            int *comm_keyval, void *extra_state)
{
    PM_CHECK_INIT("MPI_Comm_create_keyval");
    struct pm_keyval p = {.kind = KV_COMM, .ccopy = comm_copy_attr_fn,
                          .cdel = comm_delete_attr_fn, .extra = extra_state};
    return kv_create(&p, comm_keyval, "MPI_Comm_create_keyval");
}
PM_WEAK(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    PM_CHECK_INIT("MPI_Comm_free_keyval");
    return kv_free(comm_keyval, KV_COMM, "MPI_Comm_free_keyval");
}
PM_WEAK(Comm_free_keyval)

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn,
                            int *type_keyval, void *extra_state)
{
    PM_CHECK_INIT("MPI_Type_create_keyval");
    struct pm_keyval p = {.kind = KV_TYPE, .tcopy = type_copy_attr_fn,
                          .tdel = type_delete_attr_fn, .extra = extra_state};
    return kv_create(&p, type_keyval, "MPI_Type_create_keyval");
}
PM_WEAK(Type_create_keyval)

int PMPI_Type_free_keyval(int *type_keyval)
{
    PM_CHECK_INIT("MPI_Type_free_keyval");
    return kv_free(type_keyval, KV_TYPE, "MPI_Type_free_keyval");
}
PM_WEAK(Type_free_keyval)

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    PM_CHECK_INIT("MPI_Keyval_create");
    struct pm_keyval p = {.kind = KV_COMM, .ccopy = copy_fn, .cdel = delete_fn,
                          .extra = extra_state};
    return kv_create(&p, keyval, "MPI_Keyval_create");
}
PM_WEAK(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    PM_CHECK_INIT("MPI_Keyval_free");
    return kv_free(keyval, KV_COMM, "MPI_Keyval_free");
}
PM_WEAK(Keyval_free)

/* ---- Attribute lists -------------------------------------------------------------- */

/* An object's list and the lock that guards it. */
struct attr_host {
    struct pm_attr **list;
    atomic_flag *lock;
    int kind;
    int handle; /* passed to the callbacks */
};

static struct attr_host host_comm(struct pm_comm *c)
{
    return (struct attr_host){&c->attrs, &c->attr_lock, KV_COMM, c->handle};
}

static struct attr_host host_type(struct pm_datatype *t)
{
    return (struct attr_host){&t->attrs, &type_attr_lock, KV_TYPE, t->handle};
}

static int call_delete(const struct attr_host *h, struct pm_keyval *kv, void *val)
{
    if (h->kind == KV_COMM)
        return kv->cdel ? kv->cdel(h->handle, kv->id, val, kv->extra) : MPI_SUCCESS;
    return kv->tdel ? kv->tdel(h->handle, kv->id, val, kv->extra) : MPI_SUCCESS;
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

static bool find_attr(struct pm_attr *list, const struct pm_keyval *kv, void **val)
{
    for (struct pm_attr *a = list; a; a = a->next)
        if (a->kv == kv) {
            *val = a->val;
            return true;
        }
    return false;
}

/* Delete the attribute of kv: its delete callback first; on failure the
 * attribute stays. */
static int attr_delete(const struct attr_host *h, struct pm_keyval *kv)
{
    void *val;
    pm_lock(h->lock);
    bool found = find_attr(*h->list, kv, &val);
    pm_unlock(h->lock);
    if (!found)
        return MPI_SUCCESS;
    int rc = call_delete(h, kv, val);
    if (rc != MPI_SUCCESS)
        return rc;
    pm_lock(h->lock);
    struct pm_attr *a = unlink_attr(h->list, kv);
    pm_unlock(h->lock);
    if (a) {
        kv_release(a->kv);
        free(a);
    }
    return MPI_SUCCESS;
}

/* As if the old value were deleted first, then the new one stored. */
static int attr_set(const struct attr_host *h, struct pm_keyval *kv, void *val)
{
    int rc = attr_delete(h, kv);
    if (rc != MPI_SUCCESS)
        return rc;
    struct pm_attr *a = malloc(sizeof *a);
    if (!a)
        return MPI_ERR_NO_MEM;
    kv_retain(kv);
    a->kv = kv;
    a->val = val;
    pm_lock(h->lock);
    struct pm_attr *old = unlink_attr(h->list, kv); /* set by a racing thread */
    a->next = *h->list;
    *h->list = a;
    pm_unlock(h->lock);
    if (old) {
        kv_release(old->kv);
        free(old);
    }
    return MPI_SUCCESS;
}

/* Delete every attribute, newest first. Stops at a failing callback (that
 * attribute and the older ones stay). */
static int attrs_delete_all(const struct attr_host *h)
{
    for (;;) {
        pm_lock(h->lock);
        struct pm_attr *a = *h->list;
        if (a)
            *h->list = a->next;
        pm_unlock(h->lock);
        if (!a)
            return MPI_SUCCESS;
        int rc = call_delete(h, a->kv, a->val);
        if (rc != MPI_SUCCESS) {
            pm_lock(h->lock);
            a->next = *h->list;
            *h->list = a;
            pm_unlock(h->lock);
            return rc;
        }
        kv_release(a->kv);
        free(a);
    }
}

/* Run the copy callbacks of from's attributes, oldest first, storing those
 * that ask to be copied on `to` (a new object nobody else sees yet). */
static int attrs_copy(const struct attr_host *from, const struct attr_host *to)
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
        kv_retain(a->kv);
    }
    pm_unlock(from->lock);
    int rc = MPI_SUCCESS;
    for (i = 0; i < n; i++) {
        struct pm_keyval *kv = snap[i].kv;
        void *out = NULL;
        int flag = 0;
        if (!rc) {
            if (from->kind == KV_COMM && kv->ccopy)
                rc = kv->ccopy(from->handle, kv->id, kv->extra, snap[i].val, &out, &flag);
            else if (from->kind == KV_TYPE && kv->tcopy)
                rc = kv->tcopy(from->handle, kv->id, kv->extra, snap[i].val, &out, &flag);
        }
        if (!rc && flag) {
            struct pm_attr *a = malloc(sizeof *a);
            if (a) {
                a->kv = kv; /* takes the snapshot's reference */
                a->val = out;
                pm_lock(to->lock);
                a->next = *to->list;
                *to->list = a;
                pm_unlock(to->lock);
                continue;
            }
            rc = MPI_ERR_NO_MEM;
        }
        kv_release(kv);
    }
    free(snap);
    return rc;
}

int pm_attrs_copy_comm(struct pm_comm *from, struct pm_comm *to)
{
    struct attr_host f = host_comm(from), t = host_comm(to);
    return attrs_copy(&f, &t);
}

int pm_attrs_delete_comm(struct pm_comm *c)
{
    struct attr_host h = host_comm(c);
    return attrs_delete_all(&h);
}

int pm_attrs_copy_type(struct pm_datatype *from, struct pm_datatype *to)
{
    struct attr_host f = host_type(from), t = host_type(to);
    return attrs_copy(&f, &t);
}

int pm_attrs_delete_type(struct pm_datatype *t)
{
    struct attr_host h = host_type(t);
    return attrs_delete_all(&h);
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
    int rc = kv_get(keyval, KV_COMM, false, comm, fn, &kv);
    if (rc)
        return rc;
    struct attr_host h = host_comm(c);
    rc = attr_set(&h, kv, val);
    kv_release(kv);
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
    int rc = kv_get(keyval, KV_COMM, true, comm, fn, &kv);
    if (rc)
        return rc;
    if (!val || !flag) {
        if (kv)
            kv_release(kv);
        return pm_error(comm, MPI_ERR_ARG, "%s: attribute_val or flag is NULL", fn);
    }
    if (!kv) {
        *(void **)val = predefined_value(keyval);
        *flag = 1;
        return MPI_SUCCESS;
    }
    void *v = NULL;
    pm_lock(&c->attr_lock);
    *flag = find_attr(c->attrs, kv, &v);
    pm_unlock(&c->attr_lock);
    if (*flag)
        *(void **)val = v;
    kv_release(kv);
    return MPI_SUCCESS;
}

static int comm_delete_attr(MPI_Comm comm, int keyval, const char *fn)
{
    PM_CHECK_INIT(fn);
    GET_COMM(c, comm, fn);
    struct pm_keyval *kv;
    int rc = kv_get(keyval, KV_COMM, false, comm, fn, &kv);
    if (rc)
        return rc;
    struct attr_host h = host_comm(c);
    rc = attr_delete(&h, kv);
    kv_release(kv);
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
    int rc = kv_get(type_keyval, KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    struct attr_host h = host_type(t);
    h.handle = datatype;
    rc = attr_set(&h, kv, attribute_val);
    kv_release(kv);
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
    int rc = kv_get(type_keyval, KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    if (!attribute_val || !flag) {
        kv_release(kv);
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: attribute_val or flag is NULL", fn);
    }
    void *v = NULL;
    pm_lock(&type_attr_lock);
    *flag = find_attr(t->attrs, kv, &v);
    pm_unlock(&type_attr_lock);
    if (*flag)
        *(void **)attribute_val = v;
    kv_release(kv);
    return MPI_SUCCESS;
}
PM_WEAK(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char fn[] = "MPI_Type_delete_attr";
    PM_CHECK_INIT(fn);
    GET_TYPE(t, datatype, fn);
    struct pm_keyval *kv;
    int rc = kv_get(type_keyval, KV_TYPE, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    struct attr_host h = host_type(t);
    h.handle = datatype;
    rc = attr_delete(&h, kv);
    kv_release(kv);
    if (rc)
        return pm_error(MPI_COMM_NULL, rc, "%s: the delete callback failed (error %d)", fn, rc);
    return MPI_SUCCESS;
}
PM_WEAK(Type_delete_attr)
