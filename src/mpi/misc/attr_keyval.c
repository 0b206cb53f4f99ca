/*
 * attr_keyval.c — attribute keys: MPI_Comm/Type/Win_create_keyval and
 * _free_keyval, the deprecated MPI_Keyval_create/free, and the predefined
 * callbacks (MPI_COMM_NULL_COPY_FN & co). The attributes themselves are in
 * attr.c and win_attr.c.
 *
 * Keyvals are small ints (predefined ones below PROUST_MPI_NUM_PREDEFINED_
 * KEYVALS), never reused. A keyval lives while its number (until freed) or
 * an attribute uses it. MPI-1 §5.7.1: freeing a keyval in use does not
 * remove it, so until its last attribute goes a freed number still sets,
 * gets and deletes attributes, and freeing it again does nothing (as in
 * MPICH and Open MPI; MPICH's test suite deletes through a freed number).
 */
#include <stdlib.h>

#include "comm.h"

static struct pm_keyval **kvs;
static int kv_cap, kv_next = PROUST_MPI_NUM_PREDEFINED_KEYVALS;
static atomic_flag kv_lock = ATOMIC_FLAG_INIT;

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

int MPI_WIN_NULL_COPY_FN(MPI_Win win, int keyval, void *extra, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int MPI_WIN_NULL_DELETE_FN(MPI_Win win, int keyval, void *val, void *extra)
{
    return MPI_SUCCESS;
}

int MPI_WIN_DUP_FN(MPI_Win win, int keyval, void *extra, void *in, void *out, int *flag)
{
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* ---- Keyvals ---------------------------------------------------------------------- */

/* Reference counts change under kv_lock, so that a lookup never revives a
 * keyval whose last reference is going. */
void pm_kv_retain(struct pm_keyval *kv)
{
    pm_lock(&kv_lock);
    kv->refs++;
    pm_unlock(&kv_lock);
}

void pm_kv_release(struct pm_keyval *kv)
{
    pm_lock(&kv_lock);
    bool last = --kv->refs == 0;
    if (last && kvs[kv->id] == kv)
        kvs[kv->id] = NULL;
    pm_unlock(&kv_lock);
    if (last && kv->free_extra)
        kv->free_extra(kv->extra);
    if (last)
        free(kv);
}

/* attr_language.h: the Fortran bindings mark the keyvals they make. */
__attribute__((visibility("default"))) int proust_mpi_keyval_fortran(int keyval,
                                                                     void (*free_extra)(void *))
{
    pm_lock(&kv_lock);
    struct pm_keyval *kv = keyval > 0 && keyval < kv_cap ? kvs[keyval] : NULL;
    if (kv) {
        kv->fortran = true;
        kv->free_extra = free_extra;
    }
    pm_unlock(&kv_lock);
    return kv ? MPI_SUCCESS : MPI_ERR_KEYVAL;
}

static const char *kind_name(int kind)
{
    return kind == PM_KV_COMM ? "communicator" : kind == PM_KV_WIN ? "window" : "datatype";
}

/* The keyval `id` of `kind` with a reference taken, or raise on `comm`.
 * A freed keyval is found while attributes still hold it. */
static int kv_lookup(int id, int kind, bool allow_predefined, MPI_Comm comm, const char *fn,
                     struct pm_keyval **out)
{
    *out = NULL;
    if (id > 0 && id < PROUST_MPI_NUM_PREDEFINED_KEYVALS) {
        if (kind == PM_KV_COMM && allow_predefined)
            return MPI_SUCCESS; /* *out NULL: predefined */
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %d is predefined%s", fn, id,
                        kind == PM_KV_COMM ? " and cannot be changed" : " (a communicator keyval)");
    }
    const char *wname = pm_kv_win_predefined(id);
    if (wname) {
        if (kind == PM_KV_WIN)
            return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %s is predefined and cannot be changed",
                            fn, wname);
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %s is a window keyval, not a %s keyval",
                        fn, wname, kind_name(kind));
    }
    struct pm_keyval *kv = NULL;
    pm_lock(&kv_lock);
    if (id >= PROUST_MPI_NUM_PREDEFINED_KEYVALS && id < kv_next)
        kv = kvs[id];
    if (kv)
        kv->refs++;
    pm_unlock(&kv_lock);
    if (!kv)
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: invalid keyval %d%s", fn, id,
                        id == MPI_KEYVAL_INVALID ? " (MPI_KEYVAL_INVALID)"
                        : id >= PROUST_MPI_NUM_PREDEFINED_KEYVALS && id < kv_next
                            ? " (freed, and no attribute uses it any more)"
                            : "");
    if (kv->kind != kind) {
        pm_kv_release(kv);
        return pm_error(comm, MPI_ERR_KEYVAL, "%s: keyval %d is a %s keyval, not a %s keyval", fn,
                        id, kind_name(kv->kind), kind_name(kind));
    }
    *out = kv;
    return MPI_SUCCESS;
}

int pm_kv_get(int id, int kind, bool allow_predefined, MPI_Comm comm, const char *fn,
                  struct pm_keyval **out)
{
    return kv_lookup(id, kind, allow_predefined, comm, fn, out);
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
    int rc = kv_lookup(*keyval, kind, false, MPI_COMM_NULL, fn, &kv);
    if (rc)
        return rc;
    pm_lock(&kv_lock);
    bool first = !kv->freed;
    kv->freed = true;
    pm_unlock(&kv_lock);
    pm_kv_release(kv); /* kv_lookup's reference */
    if (first)
        pm_kv_release(kv); /* the number's */
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn,
                            int *comm_keyval, void *extra_state)
{
    PM_CHECK_INIT("MPI_Comm_create_keyval");
    struct pm_keyval p = {.kind = PM_KV_COMM, .ccopy = comm_copy_attr_fn,
                          .cdel = comm_delete_attr_fn, .extra = extra_state};
    return kv_create(&p, comm_keyval, "MPI_Comm_create_keyval");
}
PM_WEAK(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *comm_keyval)
{
    PM_CHECK_INIT("MPI_Comm_free_keyval");
    return kv_free(comm_keyval, PM_KV_COMM, "MPI_Comm_free_keyval");
}
PM_WEAK(Comm_free_keyval)

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn,
                            int *type_keyval, void *extra_state)
{
    PM_CHECK_INIT("MPI_Type_create_keyval");
    struct pm_keyval p = {.kind = PM_KV_TYPE, .tcopy = type_copy_attr_fn,
                          .tdel = type_delete_attr_fn, .extra = extra_state};
    return kv_create(&p, type_keyval, "MPI_Type_create_keyval");
}
PM_WEAK(Type_create_keyval)

int PMPI_Type_free_keyval(int *type_keyval)
{
    PM_CHECK_INIT("MPI_Type_free_keyval");
    return kv_free(type_keyval, PM_KV_TYPE, "MPI_Type_free_keyval");
}
PM_WEAK(Type_free_keyval)

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    PM_CHECK_INIT("MPI_Win_create_keyval");
    struct pm_keyval p = {.kind = PM_KV_WIN, .wcopy = win_copy_attr_fn,
                          .wdel = win_delete_attr_fn, .extra = extra_state};
    return kv_create(&p, win_keyval, "MPI_Win_create_keyval");
}
PM_WEAK(Win_create_keyval)

int PMPI_Win_free_keyval(int *win_keyval)
{
    PM_CHECK_INIT("MPI_Win_free_keyval");
    return kv_free(win_keyval, PM_KV_WIN, "MPI_Win_free_keyval");
}
PM_WEAK(Win_free_keyval)

int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    PM_CHECK_INIT("MPI_Keyval_create");
    struct pm_keyval p = {.kind = PM_KV_COMM, .ccopy = copy_fn, .cdel = delete_fn,
                          .extra = extra_state};
    return kv_create(&p, keyval, "MPI_Keyval_create");
}
PM_WEAK(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    PM_CHECK_INIT("MPI_Keyval_free");
    return kv_free(keyval, PM_KV_COMM, "MPI_Keyval_free");
}
PM_WEAK(Keyval_free)
