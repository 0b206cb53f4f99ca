/*
 * attr_cb.c — attribute caching: copy callbacks on MPI_Comm_dup (DUP_FN,
 * NULL_COPY_FN, user functions, failing ones), delete callbacks on free,
 * replace and delete, keyvals freed while still in use, the predefined
 * attributes, the deprecated MPI-1 interface, datatype attributes, error
 * classes, and the LIFO deletion of MPI_COMM_SELF's attributes at
 * MPI_Finalize.
 */
#include <stdbool.h>

#include "mpitest.h"

static int wrank, wsize;

/* Delete callbacks record what they saw. */
enum { LOG = 64 };
struct deletion {
    int keyval;
    void *val;
    MPI_Comm comm;
};
static struct deletion dlog[LOG];
static int ndel, fail_delete;

static int record_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    if (fail_delete)
        return MPI_ERR_OTHER;
    if (ndel < LOG)
        dlog[ndel] = (struct deletion){keyval, val, comm};
    ndel++;
    int *count = extra;
    if (count)
        (*count)++;
    return MPI_SUCCESS;
}

/* Copies value + 1 (values are small integers stored in the pointer). */
static int plus_one(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    return MPI_ERR_OTHER;
}

static bool got_attr(MPI_Comm c, int k, void **val)
{
    int flag = -1;
    MPI_CHECK(MPI_Comm_get_attr(c, k, val, &flag));
    return flag;
}

static void test_copy_delete(void)
{
    int k1, k2, k3, k4, count3 = 0;
    static int a = 5, b = 6;
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, record_delete, &k1, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &k2, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(plus_one, record_delete, &k3, &count3));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k4, NULL));
    CHECK(k1 != k2 && k2 != k3 && k3 != k4 && k1 != MPI_KEYVAL_INVALID, "keyvals not distinct");

    MPI_Comm c, d;
    void *v;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK(!got_attr(c, k1, &v), "attribute present before being set");
    MPI_CHECK(MPI_Comm_set_attr(c, k1, &a));
    MPI_CHECK(MPI_Comm_set_attr(c, k2, &b));
    MPI_CHECK(MPI_Comm_set_attr(c, k3, (void *)(char *)10));
    MPI_CHECK(MPI_Comm_set_attr(c, k4, &b));
    CHECK(got_attr(c, k1, &v) && v == &a, "k1 value");

    ndel = 0;
    MPI_CHECK(MPI_Comm_dup(c, &d));
    CHECK(ndel == 0, "dup ran %d delete callbacks", ndel);
    CHECK(got_attr(d, k1, &v) && v == &a, "DUP_FN did not copy");
    CHECK(!got_attr(d, k2, &v), "NULL_COPY_FN copied");
    CHECK(got_attr(d, k3, &v) && v == (void *)(char *)11, "user copy: %p", v);
    CHECK(!got_attr(d, k4, &v), "NULL_COPY_FN copied (k4)");
    /* The copy is independent of the original. */
    MPI_CHECK(MPI_Comm_set_attr(d, k1, &b));
    CHECK(ndel == 1 && dlog[0].keyval == k1 && dlog[0].val == &a && dlog[0].comm == d,
          "replacing a value: %d deletes", ndel);
    CHECK(got_attr(c, k1, &v) && v == &a, "the original changed with its copy");

    /* Deleting calls the callback; the attribute is then gone. */
    ndel = 0;
    MPI_CHECK(MPI_Comm_delete_attr(d, k3));
    CHECK(ndel == 1 && dlog[0].val == (void *)(char *)11 && count3 == 1, "delete_attr: %d", ndel);
    CHECK(!got_attr(d, k3, &v), "deleted attribute still there");
    MPI_CHECK(MPI_Comm_delete_attr(d, k3)); /* nothing left to delete: fine */

    /* Freeing runs the remaining delete callbacks, newest first. */
    ndel = 0;
    MPI_CHECK(MPI_Comm_free(&d));
    CHECK(ndel == 1 && dlog[0].keyval == k1 && dlog[0].val == &b, "free of the copy: %d", ndel);

    /* A keyval freed while in use (MPI-1 5.7.1): the user's variable is
     * reset, the callbacks still run, and the number still reaches its
     * attributes until the last one goes (as in MPICH and Open MPI). */
    int k1_old = k1;
    MPI_CHECK(MPI_Comm_free_keyval(&k1));
    CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    CHECK(got_attr(c, k1_old, &v) && v == &a, "a freed keyval in use lost its attribute");
    EXPECT_CLASS(MPI_Comm_free_keyval(&k1), MPI_ERR_KEYVAL);
    MPI_CHECK(MPI_Comm_dup(c, &d)); /* DUP_FN of the freed keyval still copies */
    ndel = 0;
    MPI_CHECK(MPI_Comm_free(&d));
    CHECK(ndel == 2, "free of a copy with a freed keyval: %d deletes", ndel);
    MPI_CHECK(MPI_Comm_dup(c, &d));
    ndel = 0;
    MPI_CHECK(MPI_Comm_delete_attr(d, k1_old));
    CHECK(ndel == 1 && dlog[0].keyval == k1_old && dlog[0].val == &a,
          "delete through a freed keyval: %d deletes", ndel);
    CHECK(!got_attr(d, k1_old, &v), "attribute still there after its delete");
    MPI_CHECK(MPI_Comm_free(&d));

    /* A failing copy callback fails the dup; a failing delete callback
     * fails the free, which leaves the communicator usable. */
    int k5;
    MPI_CHECK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &k5, NULL));
    MPI_CHECK(MPI_Comm_set_attr(c, k5, NULL));
    d = MPI_COMM_SELF;
    EXPECT_CLASS(MPI_Comm_dup(c, &d), MPI_ERR_OTHER);
    CHECK(d == MPI_COMM_NULL, "failed dup left %#x", (unsigned)d);
    MPI_CHECK(MPI_Comm_delete_attr(c, k5));
    MPI_CHECK(MPI_Comm_free_keyval(&k5));
    fail_delete = 1;
    EXPECT_CLASS(MPI_Comm_delete_attr(c, k2), MPI_ERR_OTHER);
    EXPECT_CLASS(MPI_Comm_free(&c), MPI_ERR_OTHER);
    CHECK(c != MPI_COMM_NULL, "a failed free reset the handle");
    fail_delete = 0;
    int n;
    MPI_CHECK(MPI_Comm_size(c, &n));
    CHECK(got_attr(c, k2, &v) && v == &b, "attribute lost by a failed delete");
    ndel = 0;
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(ndel == 3, "final free: %d deletes (k1 k2 k3 expected)", ndel);
    /* k1's last attribute is gone: its number is now invalid. */
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_SELF, k1_old, &v, &(int){0}), MPI_ERR_KEYVAL);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_CHECK(MPI_Comm_free_keyval(&k2));
    MPI_CHECK(MPI_Comm_free_keyval(&k3));
    MPI_CHECK(MPI_Comm_free_keyval(&k4));
}

static void test_predefined(void)
{
    int *v, flag;
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767, "MPI_TAG_UB: flag %d value %d", flag, flag ? *v : 0);
    int big = *v, got = -1;
    /* The largest tag works. */
    MPI_CHECK(MPI_Sendrecv(&wrank, 1, MPI_INT, wrank, big, &got, 1, MPI_INT, wrank, big,
                           MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == wrank, "message with tag MPI_TAG_UB");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag && *v == MPI_PROC_NULL, "MPI_HOST");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag && (*v == MPI_ANY_SOURCE || (*v >= 0 && *v < wsize)), "MPI_IO");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(flag && (*v == 0 || *v == 1), "MPI_WTIME_IS_GLOBAL");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag));
    CHECK(!flag || *v >= wsize, "MPI_UNIVERSE_SIZE %d", *v);
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag));
    CHECK(!flag || *v >= 0, "MPI_APPNUM");
    MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d", *v);
    int cls, code;
    MPI_CHECK(MPI_Add_error_class(&cls));
    MPI_CHECK(MPI_Add_error_code(cls, &code));
    MPI_CHECK(MPI_Attr_get(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag));
    CHECK(flag && *v >= code && *v >= cls, "MPI_LASTUSEDCODE %d after adding %d", *v, code);
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &big), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_HOST), MPI_ERR_KEYVAL);
    int k = MPI_TAG_UB;
    EXPECT_CLASS(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
}

static int free_in_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    return MPI_Keyval_free(&keyval);
}

static void test_errors_and_deprecated(void)
{
    /* Freeing a keyval number again while attributes still use it is
     * harmless (MPICH's keyval_double_free), also from a delete callback
     * and, for MPI_COMM_SELF's attribute, at MPI_Finalize. */
    int kf, kf_copy;
    MPI_Comm dd;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_SELF, &dd));
    MPI_CHECK(MPI_Keyval_create(MPI_NULL_COPY_FN, free_in_delete, &kf, NULL));
    kf_copy = kf;
    MPI_CHECK(MPI_Attr_put(MPI_COMM_SELF, kf, NULL));
    MPI_CHECK(MPI_Attr_put(dd, kf, NULL));
    MPI_CHECK(MPI_Comm_free(&dd));
    MPI_CHECK(MPI_Keyval_free(&kf));
    MPI_CHECK(MPI_Keyval_free(&kf_copy));

    void *v;
    int flag, kt, kc, kd;
    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 999999, &v, &flag), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, NULL), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, NULL), MPI_ERR_COMM);
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &kt, NULL));
    MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kc, NULL));
    EXPECT_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, kt, NULL), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Type_set_attr(MPI_INT, kc, NULL), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Type_free_keyval(&kc), MPI_ERR_KEYVAL);
    EXPECT_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, kc, NULL, &flag), MPI_ERR_ARG);
    MPI_CHECK(MPI_Type_free_keyval(&kt));
    MPI_CHECK(MPI_Comm_free_keyval(&kc));

    /* MPI-1 interface. */
    static int val = 77;
    int count = 0;
    MPI_CHECK(MPI_Keyval_create(MPI_DUP_FN, record_delete, &kd, &count));
    MPI_Comm c, d;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MPI_CHECK(MPI_Attr_put(c, kd, &val));
    MPI_CHECK(MPI_Comm_dup(c, &d));
    int *p;
    MPI_CHECK(MPI_Attr_get(d, kd, &p, &flag));
    CHECK(flag && p == &val && *p == 77, "MPI_Attr_get after dup");
    MPI_CHECK(MPI_Attr_delete(d, kd));
    CHECK(count == 1, "MPI_Attr_delete: %d deletes", count);
    MPI_CHECK(MPI_Attr_get(d, kd, &p, &flag));
    CHECK(!flag, "attribute after MPI_Attr_delete");
    MPI_CHECK(MPI_Comm_free(&d));
    MPI_CHECK(MPI_Keyval_free(&kd));
    CHECK(kd == MPI_KEYVAL_INVALID, "MPI_Keyval_free did not reset the keyval");
    MPI_CHECK(MPI_Comm_free(&c));
    CHECK(count == 2, "free with an MPI-1 keyval: %d deletes", count);
}

static int type_deletes;
static int type_delete(MPI_Datatype t, int k, void *val, void *extra)
{
    type_deletes++;
    return MPI_SUCCESS;
}

static void test_types(void)
{
    int k, flag;
    void *v;
    static int x = 3;
    MPI_CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete, &k, NULL));
    MPI_Datatype t, t2;
    MPI_CHECK(MPI_Type_contiguous(3, MPI_INT, &t));
    MPI_CHECK(MPI_Type_set_attr(t, k, &x));
    MPI_CHECK(MPI_Type_get_attr(t, k, &v, &flag));
    CHECK(flag && v == &x, "type attribute");
    MPI_CHECK(MPI_Type_dup(t, &t2));
    MPI_CHECK(MPI_Type_get_attr(t2, k, &v, &flag));
    CHECK(flag && v == &x, "type attribute after MPI_Type_dup");
    type_deletes = 0;
    MPI_CHECK(MPI_Type_free(&t2));
    CHECK(type_deletes == 1, "Type_free: %d deletes", type_deletes);
    MPI_CHECK(MPI_Type_delete_attr(t, k));
    CHECK(type_deletes == 2, "Type_delete_attr: %d deletes", type_deletes);
    MPI_CHECK(MPI_Type_get_attr(t, k, &v, &flag));
    CHECK(!flag, "type attribute after delete");
    MPI_CHECK(MPI_Type_free(&t));
    /* Predefined types can carry attributes too. */
    MPI_CHECK(MPI_Type_set_attr(MPI_DOUBLE, k, &x));
    MPI_CHECK(MPI_Type_get_attr(MPI_DOUBLE, k, &v, &flag));
    CHECK(flag && v == &x, "attribute on MPI_DOUBLE");
    MPI_CHECK(MPI_Type_delete_attr(MPI_DOUBLE, k));
    EXPECT_CLASS(MPI_Type_get_attr(MPI_DATATYPE_NULL, k, &v, &flag), MPI_ERR_TYPE);
    MPI_CHECK(MPI_Type_free_keyval(&k));
}

/* MPI_COMM_SELF's attributes are deleted first at MPI_Finalize, newest
 * first, while MPI can still be called. */
enum { NSELF = 5 };
static int self_keys[NSELF], self_order[NSELF], nself, self_rank_ok = 1;
static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    int r = -1;
    if (MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS || r != wrank)
        self_rank_ok = 0;
    if (nself < NSELF)
        self_order[nself] = (int)(intptr_t)val;
    nself++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_CHECK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    test_copy_delete();
    test_predefined();
    test_errors_and_deprecated();
    test_types();
    for (int i = 0; i < NSELF; i++) {
        MPI_CHECK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_keys[i], NULL));
        MPI_CHECK(MPI_Comm_set_attr(MPI_COMM_SELF, self_keys[i], (void *)(intptr_t)i));
    }
    MPI_CHECK(MPI_Finalize());
    /* No MPI (nor CHECK, which aborts through MPI) from here on. */
    int bad = nself != NSELF || !self_rank_ok;
    for (int i = 0; i < NSELF && !bad; i++)
        bad = self_order[i] != NSELF - 1 - i;
    if (bad) {
        fprintf(stderr, "[rank %d] MPI_COMM_SELF attributes at MPI_Finalize: %d deletes, "
                "rank query %s, order", wrank, nself, self_rank_ok ? "ok" : "failed");
        for (int i = 0; i < nself && i < NSELF; i++)
            fprintf(stderr, " %d", self_order[i]);
        fprintf(stderr, "\n");
        return 1;
    }
    return 0;
}
