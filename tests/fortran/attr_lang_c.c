/* attr_lang_c.c -- the C half of attr_lang.f90: keyvals made in C whose
 * callbacks look at attribute values Fortran set, and set their own. */
#include <mpi.h>
#include <stdint.h>

static int c_key, c_key2, cvalue = 4242;
static MPI_Aint delete_saw = -1; /* the value behind the pointer delete got */
static MPI_Aint copy_saw = -1;

static int c_copy(MPI_Comm comm, int key, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)key, (void)extra;
    copy_saw = *(MPI_Aint *)in; /* a value Fortran set: C gets a pointer to it */
    *(void **)out = in;
    *flag = 0;
    return MPI_SUCCESS;
}

/* Sets another attribute from inside the callback, as C: the library
 * must see that call as C's, whatever language called the function that
 * runs the callback. */
static int c_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)key, (void)extra;
    delete_saw = *(MPI_Aint *)value;
    return MPI_Comm_set_attr(comm, c_key2, &cvalue);
}

void attr_lang_setup_(MPI_Fint *key);
void attr_lang_setup_(MPI_Fint *key)
{
    MPI_Comm_create_keyval(c_copy, c_delete, &c_key, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &c_key2, NULL);
    *key = c_key;
}

/* What C reads now: 1 if every check holds. */
void attr_lang_check_(MPI_Fint *comm, MPI_Aint *want_deleted, MPI_Aint *want_copied,
                      MPI_Fint *ok);
void attr_lang_check_(MPI_Fint *comm, MPI_Aint *want_deleted, MPI_Aint *want_copied,
                      MPI_Fint *ok)
{
    void *v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(MPI_Comm_f2c(*comm), c_key2, &v, &flag);
    *ok = flag && v == &cvalue && delete_saw == *want_deleted && copy_saw == *want_copied;
}

/* C reads the attribute Fortran set on c_key: a pointer to its value. */
void attr_lang_read_(MPI_Fint *comm, MPI_Aint *out);
void attr_lang_read_(MPI_Fint *comm, MPI_Aint *out)
{
    void *v = NULL;
    int flag = 0;
    MPI_Comm_get_attr(MPI_Comm_f2c(*comm), c_key, &v, &flag);
    *out = flag && v ? *(MPI_Aint *)v : -1;
}
