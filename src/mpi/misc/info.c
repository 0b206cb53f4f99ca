/*
 * info.c — info objects (MPI-3.1 chapter 9): ordered (key, value) string
 * pairs, and MPI_INFO_ENV (§8.7.2: how the program was started), built on
 * first use and registered at index 0 of the info table.
 *
 * Every info function works before MPI_Init and after MPI_Finalize
 * (MPI-4.0 §11.4.1): the info table is never reset while it holds objects
 * (handle.c), and none of these calls needs the engine.
 *
 * Keys are at most MPI_MAX_INFO_KEY - 1 characters and values at most
 * MPI_MAX_INFO_VAL - 1, so that each fits with its terminating null in a
 * buffer of MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL characters. Keys keep the
 * order they were first set in (MPI_Info_get_nthkey, MPI_Info_dup).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "mpi_impl.h"

struct pm_info_entry {
    char *key;
    char *value;
};

struct pm_info {
    int handle;
    atomic_flag lock; /* several threads may use one info object */
    int n, cap;
    struct pm_info_entry *e;
};

static struct pm_info env_info = {.handle = MPI_INFO_ENV, .lock = ATOMIC_FLAG_INIT};
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* ---- Entries (lock held) ------------------------------------------------- */

static int find(const struct pm_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->e[i].key, key) == 0)
            return i;
    return -1;
}

/* MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int put(struct pm_info *in, const char *key, const char *value)
{
    char *v = strdup(value);
    if (!v)
        return MPI_ERR_NO_MEM;
    int i = find(in, key);
    if (i >= 0) {
        free(in->e[i].value);
        in->e[i].value = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 8;
        struct pm_info_entry *e = realloc(in->e, (size_t)cap * sizeof *e);
        if (!e) {
            free(v);
            return MPI_ERR_NO_MEM;
        }
        in->e = e;
        in->cap = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(v);
        return MPI_ERR_NO_MEM;
    }
    in->e[in->n].key = k;
    in->e[in->n].value = v;
    in->n++;
    return MPI_SUCCESS;
}

static void clear(struct pm_info *in)
{
    for (int i = 0; i < in->n; i++) {
        free(in->e[i].key);
        free(in->e[i].value);
    }
    free(in->e);
    in->e = NULL;
    in->n = in->cap = 0;
}

/* ---- MPI_INFO_ENV -------------------------------------------------------- */

/* "command" (argv[0]) and "argv" (the other arguments, space separated,
 * whole ones within MPI_MAX_INFO_VAL); the process's own, from
 * /proc/self/cmdline, when argc is 0. */
static int put_command(struct pm_info *in, int argc, char *const argv[])
{
    char buf[8192];
    char *own[512];
    if (argc <= 0 || !argv || !argv[0]) {
        argc = 0;
        argv = own;
        FILE *f = fopen("/proc/self/cmdline", "r");
        if (!f)
            return MPI_SUCCESS;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        for (size_t pos = 0; pos < len && argc < 512; pos += strlen(buf + pos) + 1)
            own[argc++] = buf + pos;
        if (argc == 0)
            return MPI_SUCCESS;
    }
    char args[MPI_MAX_INFO_VAL] = "";
    size_t used = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        size_t l = strlen(argv[i]);
        if (used + l + 2 > sizeof args)
            break;
        if (used)
            args[used++] = ' ';
        memcpy(args + used, argv[i], l + 1);
        used += l;
    }
    char cmd[MPI_MAX_INFO_VAL];
    pm_strlcpy(cmd, argv[0], sizeof cmd);
    int rc = cmd[0] ? put(in, "command", cmd) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && args[0])
        rc = put(in, "argv", args);
    return rc;
}

/* maxprocs, host, arch, wdir: the keys that do not depend on MPI_Init's
 * arguments. maxprocs is the launcher's size, known before MPI_Init. */
static int env_common(struct pm_info *in)
{
    char val[MPI_MAX_INFO_VAL];
    const char *launched = getenv("PROUST_SIZE");
    if (launched && atoi(launched) > 0)
        snprintf(val, sizeof val, "%d", atoi(launched));
    else
        snprintf(val, sizeof val, "%d", pm_world_size > 0 ? pm_world_size : 1);
    int rc = put(in, "maxprocs", val);
    if (rc == MPI_SUCCESS && gethostname(val, sizeof val) == 0) {
        val[sizeof val - 1] = '\0';
        rc = put(in, "host", val);
    }
    struct utsname u;
    if (rc == MPI_SUCCESS && uname(&u) == 0)
        rc = put(in, "arch", u.machine);
    if (rc == MPI_SUCCESS && getcwd(val, sizeof val))
        rc = put(in, "wdir", val);
    return rc;
}

static void env_build(void)
{
    static const char *const levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                         "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    put_command(&env_info, 0, NULL);
    env_common(&env_info);
    if (pm_thread_level >= MPI_THREAD_SINGLE && pm_thread_level <= MPI_THREAD_MULTIPLE)
        put(&env_info, "thread_level", levels[pm_thread_level]);
    pm_table_set(&pm_info_table, 0, &env_info);
}

/* ---- Checks -------------------------------------------------------------- */

static struct pm_info *info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        pthread_once(&env_once, env_build);
        return &env_info;
    }
    return (struct pm_info *)pm_table_get(&pm_info_table, h);
}

#define GET_INFO(fname, h, in)                                                     \
    struct pm_info *in = info_get(h);                                              \
    if (!in)                                                                       \
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO, "%s: invalid info object %#x", \
                        fname, (unsigned)(h))

/* MPI_SUCCESS or the raised MPI_ERR_INFO_KEY. */
static int check_key(const char *fname, const char *key)
{
    if (!key)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_KEY, "%s: key is NULL", fname);
    size_t l = strnlen(key, MPI_MAX_INFO_KEY);
    if (l == 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_KEY, "%s: empty key", fname);
    if (l >= MPI_MAX_INFO_KEY)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_KEY,
                        "%s: key longer than %d characters", fname, MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

/* ---- MPI functions ------------------------------------------------------- */

/* A new empty info object under a handle of its own, in *out. */
static int info_new(const char *fname, struct pm_info **out, MPI_Info *handle)
{
    struct pm_info *in = calloc(1, sizeof *in);
    if (!in)
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of memory", fname);
    atomic_flag_clear(&in->lock);
    int h = pm_table_add(&pm_info_table, in);
    if (!h) {
        free(in);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "%s: out of handles", fname);
    }
    in->handle = h;
    *out = in;
    *handle = h;
    return MPI_SUCCESS;
}

/* Release `in` and its handle; *handle becomes MPI_INFO_NULL. */
static void info_drop(struct pm_info *in, MPI_Info *handle)
{
    pm_table_remove(&pm_info_table, in->handle);
    clear(in);
    free(in);
    *handle = MPI_INFO_NULL;
}

int PMPI_Info_create(MPI_Info *info)
{
    if (!info)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_create: info is NULL");
    struct pm_info *in = NULL;
    return info_new("MPI_Info_create", &in, info);
}
PM_WEAK(Info_create)

/* MPI-4.0 §11.4.1: what MPI_INFO_ENV holds for a start with these
 * arguments, before MPI_Init or after it alike (so no thread_level: that
 * is what MPI_Init is asked for). */
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char fn[] = "MPI_Info_create_env";
    if (!info)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: info is NULL", fn);
    if (argc < 0 || (argc > 0 && !argv))
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "%s: %d arguments in a NULL argv", fn,
                        argc);
    struct pm_info *in = NULL;
    int rc = info_new(fn, &in, info);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = put_command(in, argc, argv);
    if (rc == MPI_SUCCESS)
        rc = env_common(in);
    if (rc != MPI_SUCCESS) {
        info_drop(in, info);
        return pm_error(MPI_COMM_NULL, rc, "%s: out of memory", fn);
    }
    return MPI_SUCCESS;
}
PM_WEAK(Info_create_env)

int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    GET_INFO("MPI_Info_dup", info, in);
    if (!newinfo)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_dup: newinfo is NULL");
    struct pm_info *out = NULL;
    int rc = info_new("MPI_Info_dup", &out, newinfo);
    if (rc != MPI_SUCCESS)
        return rc;
    pm_lock(&in->lock);
    for (int i = 0; i < in->n && rc == MPI_SUCCESS; i++)
        rc = put(out, in->e[i].key, in->e[i].value);
    pm_unlock(&in->lock);
    if (rc != MPI_SUCCESS) {
        info_drop(out, newinfo);
        return pm_error(MPI_COMM_NULL, MPI_ERR_NO_MEM, "MPI_Info_dup: out of memory");
    }
    return MPI_SUCCESS;
}
PM_WEAK(Info_dup)

int PMPI_Info_free(MPI_Info *info)
{
    if (!info)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_free: info is NULL");
    if (*info == MPI_INFO_ENV)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO,
                        "MPI_Info_free: MPI_INFO_ENV is predefined and cannot be freed");
    GET_INFO("MPI_Info_free", *info, in);
    info_drop(in, info);
    return MPI_SUCCESS;
}
PM_WEAK(Info_free)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    GET_INFO("MPI_Info_set", info, in);
    int rc = check_key("MPI_Info_set", key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!value)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_VALUE, "MPI_Info_set: value is NULL");
    if (strnlen(value, MPI_MAX_INFO_VAL) >= MPI_MAX_INFO_VAL)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_VALUE,
                        "MPI_Info_set: value of key \"%s\" longer than %d characters", key,
                        MPI_MAX_INFO_VAL - 1);
    pm_lock(&in->lock);
    rc = put(in, key, value);
    pm_unlock(&in->lock);
    if (rc != MPI_SUCCESS)
        return pm_error(MPI_COMM_NULL, rc, "MPI_Info_set: out of memory");
    return MPI_SUCCESS;
}
PM_WEAK(Info_set)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    GET_INFO("MPI_Info_get", info, in);
    int rc = check_key("MPI_Info_get", key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (valuelen < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get: valuelen %d < 0", valuelen);
    if (!value || !flag)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get: %s is NULL",
                        value ? "flag" : "value");
    pm_lock(&in->lock);
    int i = find(in, key);
    if (i >= 0) {
        /* At most valuelen characters, then the terminating null. */
        size_t l = strlen(in->e[i].value);
        if (l > (size_t)valuelen)
            l = (size_t)valuelen;
        memcpy(value, in->e[i].value, l);
        value[l] = '\0';
    }
    pm_unlock(&in->lock);
    *flag = i >= 0;
    return MPI_SUCCESS;
}
PM_WEAK(Info_get)

/* MPI-4.0: *buflen in = room in value (counting the null), out = the value's
 * length + 1; the value is cut to fit. */
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    GET_INFO("MPI_Info_get_string", info, in);
    int rc = check_key("MPI_Info_get_string", key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!buflen || !flag)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_string: %s is NULL",
                        buflen ? "flag" : "buflen");
    if (*buflen < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_string: *buflen %d < 0",
                        *buflen);
    if (*buflen > 0 && !value)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                        "MPI_Info_get_string: value is NULL and *buflen is %d", *buflen);
    pm_lock(&in->lock);
    int i = find(in, key);
    if (i >= 0) {
        size_t l = strlen(in->e[i].value);
        if (*buflen > 0) {
            size_t n = l < (size_t)*buflen - 1 ? l : (size_t)*buflen - 1;
            memcpy(value, in->e[i].value, n);
            value[n] = '\0';
        }
        *buflen = l + 1 > INT_MAX ? INT_MAX : (int)(l + 1);
    }
    pm_unlock(&in->lock);
    *flag = i >= 0;
    return MPI_SUCCESS;
}
PM_WEAK(Info_get_string)

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    GET_INFO("MPI_Info_delete", info, in);
    int rc = check_key("MPI_Info_delete", key);
    if (rc != MPI_SUCCESS)
        return rc;
    pm_lock(&in->lock);
    int i = find(in, key);
    if (i >= 0) {
        free(in->e[i].key);
        free(in->e[i].value);
        memmove(&in->e[i], &in->e[i + 1], (size_t)(in->n - i - 1) * sizeof in->e[0]);
        in->n--;
    }
    pm_unlock(&in->lock);
    if (i < 0)
        return pm_error(MPI_COMM_NULL, MPI_ERR_INFO_NOKEY, "MPI_Info_delete: no key \"%s\"",
                        key);
    return MPI_SUCCESS;
}
PM_WEAK(Info_delete)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    GET_INFO("MPI_Info_get_nkeys", info, in);
    if (!nkeys)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nkeys: nkeys is NULL");
    pm_lock(&in->lock);
    *nkeys = in->n;
    pm_unlock(&in->lock);
    return MPI_SUCCESS;
}
PM_WEAK(Info_get_nkeys)

int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    GET_INFO("MPI_Info_get_nthkey", info, in);
    if (!key)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_nthkey: key is NULL");
    pm_lock(&in->lock);
    int nkeys = in->n;
    if (n >= 0 && n < nkeys)
        pm_strlcpy(key, in->e[n].key, MPI_MAX_INFO_KEY);
    pm_unlock(&in->lock);
    if (n < 0 || n >= nkeys)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG,
                        "MPI_Info_get_nthkey: n = %d, the info object has %d keys", n, nkeys);
    return MPI_SUCCESS;
}
PM_WEAK(Info_get_nthkey)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    GET_INFO("MPI_Info_get_valuelen", info, in);
    int rc = check_key("MPI_Info_get_valuelen", key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!valuelen || !flag)
        return pm_error(MPI_COMM_NULL, MPI_ERR_ARG, "MPI_Info_get_valuelen: %s is NULL",
                        valuelen ? "flag" : "valuelen");
    pm_lock(&in->lock);
    int i = find(in, key);
    if (i >= 0)
        *valuelen = (int)strlen(in->e[i].value);
    pm_unlock(&in->lock);
    *flag = i >= 0;
    return MPI_SUCCESS;
}
PM_WEAK(Info_get_valuelen)
