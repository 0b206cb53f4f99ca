/*
 * fortran_glue.c — the hand-written part of the Fortran bindings: what
 * the generated wrappers cannot derive from the standard's description.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortran_glue.h"

MPI_Status *pm_f_statuses(const MPI_Fint *f, int count)
{
    if (pm_f_ignored(f) || count <= 0)
        return NULL;
    MPI_Status *c = malloc((size_t)count * sizeof(MPI_Status));
    for (int i = 0; c && i < count; i++)
        MPI_Status_f2c(f + (size_t)i * MPI_F_STATUS_SIZE, &c[i]);
    return c;
}

char *pm_f_string_in_info(const char *f, size_t len)
{
    while (len > 0 && f[0] == ' ') {
        f++;
        len--;
    }
    return pm_f_string_in(f, len);
}

char *pm_f_string_buf(long long n)
{
    return n < 0 ? NULL : calloc((size_t)n + 1, 1);
}

void pm_f_statuses_done(MPI_Fint *f, MPI_Status *c, int n)
{
    if (!c)
        return;
    for (int i = 0; i < n; i++)
        MPI_Status_c2f(&c[i], f + (size_t)i * MPI_F_STATUS_SIZE);
    free(c);
}

void pm_f_index_plus_one(int *index, int n)
{
    for (int i = 0; i < n; i++)
        if (index[i] != MPI_UNDEFINED)
            index[i]++;
}

char *pm_f_string_in(const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, f, len);
        c[len] = '\0';
    }
    return c;
}

void pm_f_string_out(const char *c, char *f, size_t len)
{
    size_t n = strnlen(c, len);
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

MPI_Aint pm_f_attr_value(char object, int keyval, void *ptr)
{
    if (object == 'c' && keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM)
        return ptr ? *(int *)ptr : 0;
    if (object == 'w') {
        if (keyval == MPI_WIN_BASE)
            return (MPI_Aint)(intptr_t)ptr;
        if (keyval == MPI_WIN_SIZE)
            return ptr ? *(MPI_Aint *)ptr : 0;
        if (keyval == MPI_WIN_DISP_UNIT || keyval == MPI_WIN_CREATE_FLAVOR ||
            keyval == MPI_WIN_MODEL)
            return ptr ? *(int *)ptr : 0;
    }
    return (MPI_Aint)(intptr_t)ptr;
}

/* ---- Procedures written by hand: what the standard's description does
 * not say well enough for the generator (gen_fortran.py leaves them) ---- */

/* MPI_INFO_GET_STRING: Fortran's buflen counts characters, no terminator:
 * in, how many to copy (0: none, the value argument untouched); out, the
 * value's length. */
static void info_get_string_impl(int profile, MPI_Fint *info, const char *key,
                                 MPI_Fint *buflen, char *value, MPI_Fint *flag,
                                 MPI_Fint *ierror, size_t key_len, size_t value_len)
{
    int (*fn)(MPI_Info, const char *, int *, char *, int *) =
        profile ? PMPI_Info_get_string : MPI_Info_get_string;
    char *key_c = pm_f_string_in_info(key, key_len);
    int want = *buflen;
    int cl = want > 0 ? want + 1 : 0;
    char *value_c = want > 0 ? pm_f_string_buf(want) : NULL;
    int rc = want > 0 && !value_c ? MPI_ERR_NO_MEM : fn(*info, key_c, &cl, value_c, flag);
    if (rc == MPI_SUCCESS && *flag) {
        *buflen = cl - 1;
        if (value_c)
            pm_f_string_out(value_c, value, value_len);
    }
    free(key_c);
    free(value_c);
    *ierror = rc;
}

PM_F_BOTH(info_get_string,
          (MPI_Fint * info, const char *key, MPI_Fint *buflen, char *value, MPI_Fint *flag,
           MPI_Fint *ierror, size_t key_len, size_t value_len),
          (info, key, buflen, value, flag, ierror, key_len, value_len))

/* MPI_SESSION_GET_NTH_PSET: as MPI_INFO_GET_STRING, Fortran's pset_len
 * counts characters with no terminator: 0 asks for the length. */
static void session_get_nth_pset_impl(int profile, MPI_Fint *session, MPI_Fint *info,
                                      MPI_Fint *n, MPI_Fint *pset_len, char *pset_name,
                                      MPI_Fint *ierror, size_t name_len)
{
    int (*fn)(MPI_Session, MPI_Info, int, int *, char *) =
        profile ? PMPI_Session_get_nth_pset : MPI_Session_get_nth_pset;
    int want = *pset_len;
    int cl = want > 0 ? want + 1 : 0;
    char *name_c = want > 0 ? pm_f_string_buf(want) : NULL;
    int rc = want > 0 && !name_c ? MPI_ERR_NO_MEM : fn(*session, *info, *n, &cl, name_c);
    if (rc == MPI_SUCCESS) {
        *pset_len = cl - 1;
        if (name_c)
            pm_f_string_out(name_c, pset_name, name_len);
    }
    free(name_c);
    *ierror = rc;
}

PM_F_BOTH(session_get_nth_pset,
          (MPI_Fint * session, MPI_Fint *info, MPI_Fint *n, MPI_Fint *pset_len, char *pset_name,
           MPI_Fint *ierror, size_t name_len),
          (session, info, n, pset_len, pset_name, ierror, name_len))

/* MPI_F_SYNC_REG(BUF): does nothing, where the compiler cannot see it: a
 * call it must assume reads and writes BUF, so a register copy of a buffer
 * of a nonblocking call is not kept across it (MPI-4.1 19.1.17). */
static void f_sync_reg_impl(int profile, void *buf)
{
    (void)profile;
    __asm__ volatile("" : : "r"(buf) : "memory");
}
PM_F_BOTH(f_sync_reg, (void *buf), (buf))
