/*
 * fortran_callbacks.c — procedures a Fortran program passes to MPI that
 * C calls the other way: attribute copy/delete functions and generalized
 * requests. C passes handles and values by value and reads a return code;
 * Fortran takes every argument by reference and answers in IERROR. Each
 * keyval or request made from Fortran gets a C trampoline whose
 * extra_state holds the Fortran procedures and the program's own
 * extra_state. Also the predefined MPI_*_DUP_FN / NULL_*_FN that Fortran
 * passes: their Fortran forms.
 */
#include <stdint.h>
#include <stdlib.h>

#include "attr_language.h"
#include "fortran_glue.h"

/* COPY_FN(OLD, KEYVAL, EXTRA_STATE, ATTRIBUTE_VAL_IN, ATTRIBUTE_VAL_OUT,
 * FLAG, IERROR): the three trailing values are INTEGER(KIND=
 * MPI_ADDRESS_KIND), or INTEGER for the MPI-1 MPI_KEYVAL_CREATE. */
typedef void fortran_copy_fn(MPI_Fint *old, MPI_Fint *keyval, void *extra, void *in, void *out,
                             MPI_Fint *flag, MPI_Fint *ierror);
typedef void fortran_delete_fn(MPI_Fint *obj, MPI_Fint *keyval, void *value, void *extra,
                               MPI_Fint *ierror);

struct fortran_keyval {
    fortran_copy_fn *copy;
    fortran_delete_fn *del;
    MPI_Aint extra;   /* the program's extra_state */
    bool int_flavour; /* MPI_KEYVAL_CREATE: INTEGER values */
};

/* A keyval's callbacks may still run after it is freed (attributes that
 * hold it keep it alive): the library frees the state when the keyval
 * goes (proust_mpi_keyval_fortran). */
static struct fortran_keyval *keyval_state(void *copy, void *del, MPI_Aint extra,
                                           bool int_flavour)
{
    struct fortran_keyval *k = malloc(sizeof(*k));
    if (k)
        *k = (struct fortran_keyval){.copy = (fortran_copy_fn *)copy,
                                     .del = (fortran_delete_fn *)del,
                                     .extra = extra,
                                     .int_flavour = int_flavour};
    return k;
}

/* Communicators, datatypes and windows are all int handles in Proust, so
 * one pair of trampolines serves the three. */
static int copy_trampoline(int old, int keyval, void *extra_state, void *in, void *out,
                           int *flag)
{
    struct fortran_keyval *k = extra_state;
    MPI_Fint fold = old, fkeyval = keyval, fflag = 0, ierror = MPI_SUCCESS;
    MPI_Aint value;
    if (k->int_flavour) {
        MPI_Fint e = (MPI_Fint)k->extra, i = (MPI_Fint)(intptr_t)in, o = 0;
        k->copy(&fold, &fkeyval, &e, &i, &o, &fflag, &ierror);
        value = o;
    } else {
        MPI_Aint i = (MPI_Aint)(intptr_t)in, o = 0;
        k->copy(&fold, &fkeyval, &k->extra, &i, &o, &fflag, &ierror);
        value = o;
    }
    *flag = fflag != 0;
    if (*flag)
        *(void **)out = (void *)(intptr_t)value;
    return ierror;
}

static int delete_trampoline(int obj, int keyval, void *value, void *extra_state)
{
    struct fortran_keyval *k = extra_state;
    MPI_Fint fobj = obj, fkeyval = keyval, ierror = MPI_SUCCESS;
    if (k->int_flavour) {
        MPI_Fint e = (MPI_Fint)k->extra, v = (MPI_Fint)(intptr_t)value;
        k->del(&fobj, &fkeyval, &v, &e, &ierror);
    } else {
        MPI_Aint v = (MPI_Aint)(intptr_t)value;
        k->del(&fobj, &fkeyval, &v, &k->extra, &ierror);
    }
    return ierror;
}

typedef int create_keyval_fn(MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *,
                             int *, void *);

static void create_keyval(create_keyval_fn *create, void *copy, void *del, MPI_Fint *keyval,
                          MPI_Aint extra, bool int_flavour, MPI_Fint *ierror)
{
    struct fortran_keyval *k = keyval_state(copy, del, extra, int_flavour);
    *ierror = k ? create(copy_trampoline, delete_trampoline, keyval, k) : MPI_ERR_NO_MEM;
    if (*ierror == MPI_SUCCESS)
        proust_mpi_keyval_fortran(*keyval, free);
    else
        free(k);
}

/* The entry points: mpi_x_ and pmpi_x_ of each. The C functions of the
 * three objects have the same type (int handles). */
#define KEYVAL_ENTRY(fname, cname, extra_type, int_flavour)                                    \
    void fname(void *copy, void *del, MPI_Fint *keyval, extra_type *extra, MPI_Fint *ierror);  \
    void fname(void *copy, void *del, MPI_Fint *keyval, extra_type *extra, MPI_Fint *ierror)   \
    {                                                                                          \
        create_keyval(cname, copy, del, keyval, (MPI_Aint)*extra, int_flavour, ierror);       \
    }
KEYVAL_ENTRY(mpi_comm_create_keyval_, MPI_Comm_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(pmpi_comm_create_keyval_, PMPI_Comm_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(mpi_type_create_keyval_, MPI_Type_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(pmpi_type_create_keyval_, PMPI_Type_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(mpi_win_create_keyval_, MPI_Win_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(pmpi_win_create_keyval_, PMPI_Win_create_keyval, MPI_Aint, false)
KEYVAL_ENTRY(mpi_keyval_create_, MPI_Keyval_create, MPI_Fint, true)
KEYVAL_ENTRY(pmpi_keyval_create_, PMPI_Keyval_create, MPI_Fint, true)

/* The predefined copy and delete functions, as Fortran calls them. */
#define NULL_COPY(fname, vtype)                                                                \
    void fname(MPI_Fint *old, MPI_Fint *keyval, vtype *extra, vtype *in, vtype *out,           \
               MPI_Fint *flag, MPI_Fint *ierror);                                              \
    void fname(MPI_Fint *old, MPI_Fint *keyval, vtype *extra, vtype *in, vtype *out,           \
               MPI_Fint *flag, MPI_Fint *ierror)                                               \
    {                                                                                          \
        (void)old, (void)keyval, (void)extra, (void)in, (void)out;                             \
        *flag = 0;                                                                             \
        *ierror = MPI_SUCCESS;                                                                 \
    }
#define DUP(fname, vtype)                                                                      \
    void fname(MPI_Fint *old, MPI_Fint *keyval, vtype *extra, vtype *in, vtype *out,           \
               MPI_Fint *flag, MPI_Fint *ierror);                                              \
    void fname(MPI_Fint *old, MPI_Fint *keyval, vtype *extra, vtype *in, vtype *out,           \
               MPI_Fint *flag, MPI_Fint *ierror)                                               \
    {                                                                                          \
        (void)old, (void)keyval, (void)extra;                                                  \
        *out = *in;                                                                            \
        *flag = 1;                                                                             \
        *ierror = MPI_SUCCESS;                                                                 \
    }
#define NULL_DELETE(fname, vtype)                                                              \
    void fname(MPI_Fint *obj, MPI_Fint *keyval, vtype *value, vtype *extra, MPI_Fint *ierror); \
    void fname(MPI_Fint *obj, MPI_Fint *keyval, vtype *value, vtype *extra, MPI_Fint *ierror)  \
    {                                                                                          \
        (void)obj, (void)keyval, (void)value, (void)extra;                                     \
        *ierror = MPI_SUCCESS;                                                                 \
    }
NULL_COPY(mpi_null_copy_fn_, MPI_Fint)
DUP(mpi_dup_fn_, MPI_Fint)
NULL_DELETE(mpi_null_delete_fn_, MPI_Fint)
NULL_COPY(mpi_comm_null_copy_fn_, MPI_Aint)
DUP(mpi_comm_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_comm_null_delete_fn_, MPI_Aint)
NULL_COPY(mpi_type_null_copy_fn_, MPI_Aint)
DUP(mpi_type_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_type_null_delete_fn_, MPI_Aint)
NULL_COPY(mpi_win_null_copy_fn_, MPI_Aint)
DUP(mpi_win_dup_fn_, MPI_Aint)
NULL_DELETE(mpi_win_null_delete_fn_, MPI_Aint)

/* ---- Generalized requests ---- */

/* QUERY_FN(EXTRA_STATE, STATUS, IERROR), FREE_FN(EXTRA_STATE, IERROR),
 * CANCEL_FN(EXTRA_STATE, COMPLETE, IERROR). */
typedef void fortran_query_fn(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierror);
typedef void fortran_free_fn(MPI_Aint *extra, MPI_Fint *ierror);
typedef void fortran_cancel_fn(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierror);

struct fortran_grequest {
    fortran_query_fn *query;
    fortran_free_fn *free;
    fortran_cancel_fn *cancel;
    /* The program's own variable, as MPICH and Open MPI pass it: what the
     * callbacks write there, the program sees (MPICH's greqf counts on it). */
    MPI_Aint *extra;
};

static int query_trampoline(void *extra_state, MPI_Status *status)
{
    struct fortran_grequest *g = extra_state;
    MPI_Fint f[MPI_F_STATUS_SIZE], ierror = MPI_SUCCESS;
    MPI_Status_c2f(status, f);
    g->query(g->extra, f, &ierror);
    MPI_Status_f2c(f, status);
    return ierror;
}

/* MPI calls free_fn once, when the request is freed: the state goes too. */
static int free_trampoline(void *extra_state)
{
    struct fortran_grequest *g = extra_state;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free(g->extra, &ierror);
    free(g);
    return ierror;
}

static int cancel_trampoline(void *extra_state, int complete)
{
    struct fortran_grequest *g = extra_state;
    MPI_Fint fcomplete = complete != 0, ierror = MPI_SUCCESS;
    g->cancel(g->extra, &fcomplete, &ierror);
    return ierror;
}

static void grequest_start_impl(int profile, void *query, void *free_fn, void *cancel,
                                MPI_Aint *extra, MPI_Fint *request, MPI_Fint *ierror)
{
    int (*start)(MPI_Grequest_query_function *, MPI_Grequest_free_function *,
                 MPI_Grequest_cancel_function *, void *, MPI_Request *) =
        profile ? PMPI_Grequest_start : MPI_Grequest_start;
    struct fortran_grequest *g = malloc(sizeof(*g));
    if (!g) {
        *ierror = MPI_ERR_NO_MEM;
        return;
    }
    *g = (struct fortran_grequest){.query = (fortran_query_fn *)query,
                                   .free = (fortran_free_fn *)free_fn,
                                   .cancel = (fortran_cancel_fn *)cancel,
                                   .extra = extra};
    *ierror = start(query_trampoline, free_trampoline, cancel_trampoline, g, request);
    if (*ierror != MPI_SUCCESS)
        free(g);
}

PM_F_BOTH(grequest_start,
          (void *query, void *free_fn, void *cancel, MPI_Aint *extra, MPI_Fint *request,
           MPI_Fint *ierror),
          (query, free_fn, cancel, extra, request, ierror))
