/*
 * mpi_t.c — the tool information interface (src/mpi/init/mpi_t.c).
 *
 * Before MPI_Init, between and after MPI_Finalize: nested init/finalize;
 * every PROUST_* variable (the engine's, then the MPI layer's own, such as
 * PROUST_RMA_SHM) is a read-only string control variable whose
 * value is the environment's (PROUST_RAILS, set by the launcher job);
 * the string conventions of MPI-3.1 §14.3.3 (NULL buffer or zero length
 * give the full length, truncation keeps the NUL, a NULL length leaves the
 * buffer alone); the "proust" category lists them; no performance variables
 * or enumerations, sessions that work, and the error classes (returned,
 * with strings) for bad indices, names, handles and sessions.
 */
#include "mpitest.h"

#define T_EXPECT(call, cls)                                                        \
    do {                                                                           \
        int t_rc_ = (call);                                                        \
        CHECK(t_rc_ == (cls), "%s returned %d, expected %s (%d)", #call, t_rc_, #cls, \
              (cls));                                                              \
    } while (0)

static int find_cvar(const char *name)
{
    int idx = -1;
    MPI_CHECK(MPI_T_cvar_get_index(name, &idx));
    char got[64];
    int len = sizeof got;
    MPI_CHECK(MPI_T_cvar_get_info(idx, got, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(strcmp(got, name) == 0 && len == (int)strlen(name) + 1,
          "cvar %d is named %s (len %d), not %s", idx, got, len, name);
    return idx;
}

static void control_variables(void)
{
    int n = -1;
    MPI_CHECK(MPI_T_cvar_get_num(&n));
    CHECK(n >= 10, "only %d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[2048];
        int nl = sizeof name, dl = sizeof desc, verb = -1, bind = -1, scope = -1;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum en = (MPI_T_enum)0x1234;
        MPI_CHECK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        CHECK(strncmp(name, "PROUST_", 7) == 0, "cvar %d is %s", i, name);
        CHECK(dt == MPI_CHAR && en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT &&
                  scope == MPI_T_SCOPE_READONLY,
              "%s: type, enum, bind or scope", name);
        CHECK(strstr(desc, "default") != NULL, "%s: description %s", name, desc);
        int idx = -1;
        MPI_CHECK(MPI_T_cvar_get_index(name, &idx));
        CHECK(idx == i, "%s: index %d, listed at %d", name, idx, i);
    }
    T_EXPECT(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    T_EXPECT(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    int idx;
    T_EXPECT(MPI_T_cvar_get_index("PROUST_NO_SUCH_THING", &idx), MPI_T_ERR_INVALID_NAME);
    /* the MPI layer's own variables (src/mpi/init/mpi_config.h) follow the engine's */
    CHECK(find_cvar("PROUST_RMA_SHM") > find_cvar("PROUST_RAILS") &&
              find_cvar("PROUST_COLL_CROWDED") > find_cvar("PROUST_RAILS"),
          "the MPI layer's variables are not listed after the engine's");

    /* strings: full length, truncated, left alone */
    int rails = find_cvar("PROUST_RAILS");
    int full = 1;
    MPI_CHECK(MPI_T_cvar_get_info(rails, NULL, &full, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(full == (int)strlen("PROUST_RAILS") + 1, "NULL buffer: length %d", full);
    char buf[16] = "xxxxxxxxxxxxxxx";
    int len = 0;
    MPI_CHECK(MPI_T_cvar_get_info(rails, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(len == full && buf[0] == 'x', "zero length: length %d, buffer written", len);
    len = 5;
    MPI_CHECK(MPI_T_cvar_get_info(rails, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(strcmp(buf, "PROU") == 0 && len == 5 && buf[5] == 'x', "truncated to %s (%d)", buf,
          len);
    memset(buf, 'y', sizeof buf);
    MPI_CHECK(MPI_T_cvar_get_info(rails, buf, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(buf[0] == 'y', "NULL length: buffer written");

    /* the value in force: the launcher job sets PROUST_RAILS */
    const char *env = getenv("PROUST_RAILS");
    CHECK(env != NULL, "the job should set PROUST_RAILS");
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    int count = -1;
    MPI_CHECK(MPI_T_cvar_handle_alloc(rails, NULL, &h, &count));
    CHECK(h != MPI_T_CVAR_HANDLE_NULL && count == (int)strlen(env) + 1, "count %d for \"%s\"",
          count, env);
    char *val = malloc((size_t)count + 8);
    memset(val, 'z', (size_t)count + 8);
    MPI_CHECK(MPI_T_cvar_read(h, val));
    CHECK(strcmp(val, env) == 0 && val[count] == 'z', "read \"%s\", environment \"%s\"", val, env);
    T_EXPECT(MPI_T_cvar_write(h, "tcp"), MPI_T_ERR_CVAR_SET_NEVER);
    MPI_CHECK(MPI_T_cvar_read(h, val));
    CHECK(strcmp(val, env) == 0, "changed to \"%s\" by a refused write", val);
    free(val);
    MPI_CHECK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "a freed handle is not reset");
    T_EXPECT(MPI_T_cvar_handle_free(&h), MPI_T_ERR_INVALID_HANDLE);
    T_EXPECT(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, buf), MPI_T_ERR_INVALID_HANDLE);
    T_EXPECT(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);

    /* the category holds them all */
    int ncat = -1, nc = -1, np = -1, nsub = -1, stamp = -1, stamp2 = -2, cat = -1;
    MPI_CHECK(MPI_T_category_get_num(&ncat));
    CHECK(ncat == 1, "%d categories", ncat);
    char cname[32];
    len = sizeof cname;
    MPI_CHECK(MPI_T_category_get_info(0, cname, &len, NULL, NULL, &nc, &np, &nsub));
    CHECK(strcmp(cname, "proust") == 0 && nc == n && np == 0 && nsub == 0,
          "category %s: %d cvars of %d, %d pvars, %d subcategories", cname, nc, n, np, nsub);
    MPI_CHECK(MPI_T_category_get_index("proust", &cat));
    CHECK(cat == 0, "category index %d", cat);
    T_EXPECT(MPI_T_category_get_index("mpich", &cat), MPI_T_ERR_INVALID_NAME);
    int *ids = malloc(sizeof(int) * (size_t)n);
    MPI_CHECK(MPI_T_category_get_cvars(0, n, ids));
    for (int i = 0; i < n; i++)
        CHECK(ids[i] == i, "category cvar %d is %d", i, ids[i]);
    free(ids);
    T_EXPECT(MPI_T_category_get_cvars(1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    MPI_CHECK(MPI_T_category_changed(&stamp));
    MPI_CHECK(MPI_T_category_changed(&stamp2));
    CHECK(stamp == stamp2, "categories changed: %d then %d", stamp, stamp2);
}

static void performance_variables(void)
{
    int n = -1;
    MPI_CHECK(MPI_T_pvar_get_num(&n));
    CHECK(n == 0, "%d performance variables", n);
    T_EXPECT(MPI_T_pvar_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    int idx;
    T_EXPECT(MPI_T_pvar_get_index("anything", MPI_T_PVAR_CLASS_COUNTER, &idx),
             MPI_T_ERR_INVALID_NAME);
    MPI_T_pvar_session s = MPI_T_PVAR_SESSION_NULL, s2 = MPI_T_PVAR_SESSION_NULL;
    MPI_CHECK(MPI_T_pvar_session_create(&s));
    MPI_CHECK(MPI_T_pvar_session_create(&s2));
    CHECK(s != MPI_T_PVAR_SESSION_NULL && s2 != s, "sessions %p %p", (void *)s, (void *)s2);
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int count;
    T_EXPECT(MPI_T_pvar_handle_alloc(s, 0, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    MPI_CHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_CHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    MPI_CHECK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    long long v;
    T_EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    T_EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, &v), MPI_T_ERR_INVALID_HANDLE);
    MPI_CHECK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "a freed session is not reset");
    MPI_T_pvar_session stale = s2;
    MPI_CHECK(MPI_T_pvar_session_free(&s2));
    T_EXPECT(MPI_T_pvar_session_free(&stale), MPI_T_ERR_INVALID_SESSION);
    T_EXPECT(MPI_T_pvar_start(stale, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    int num;
    T_EXPECT(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
}

/* MPI-4 events: one source (the clock), no event types. */
static void events(void)
{
    int n = -1;
    MPI_CHECK(MPI_T_source_get_num(&n));
    CHECK(n == 1, "%d event sources", n);
    char name[64];
    int len = sizeof name;
    MPI_T_source_order order = MPI_T_SOURCE_UNORDERED;
    MPI_Count tps = 0, max = 0, t0 = 0, t1 = 0;
    MPI_Info info = MPI_INFO_NULL;
    MPI_CHECK(MPI_T_source_get_info(0, name, &len, NULL, NULL, &order, &tps, &max, &info));
    CHECK(len == (int)strlen(name) + 1 && order == MPI_T_SOURCE_ORDERED && tps == 1000000000 &&
          max > 0 && info != MPI_INFO_NULL, "source 0: %s, order %d, %lld ticks/s", name,
          (int)order, (long long)tps);
    MPI_CHECK(MPI_Info_free(&info));
    MPI_CHECK(MPI_T_source_get_timestamp(0, &t0));
    usleep(2000);
    MPI_CHECK(MPI_T_source_get_timestamp(0, &t1));
    CHECK(t1 - t0 >= 2000000, "2 ms apart, the clock moved %lld ticks", (long long)(t1 - t0));
    T_EXPECT(MPI_T_source_get_timestamp(1, &t0), MPI_T_ERR_INVALID_INDEX);
    MPI_CHECK(MPI_T_event_get_num(&n));
    CHECK(n == 0, "%d event types", n);
    T_EXPECT(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                  NULL),
             MPI_T_ERR_INVALID_INDEX);
    MPI_T_event_registration reg = NULL;
    T_EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    T_EXPECT(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    T_EXPECT(MPI_T_event_get_index("anything", &n), MPI_T_ERR_INVALID_NAME);
    MPI_CHECK(MPI_T_category_get_num_events(0, &n));
    CHECK(n == 0, "category 0 has %d events", n);
    T_EXPECT(MPI_T_category_get_num_events(999, &n), MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv)
{
    int n, provided = -1;
    T_EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    /* before MPI_Init, nested */
    MPI_CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided));
    control_variables();
    MPI_CHECK(MPI_T_finalize());
    MPI_CHECK(MPI_T_cvar_get_num(&n)); /* one init still open */

    MPI_CHECK(MPI_Init(&argc, &argv));
    control_variables();
    performance_variables();
    events();
    /* the classes are error classes, with their strings */
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    MPI_CHECK(MPI_Error_class(MPI_T_ERR_INVALID_HANDLE, &cls));
    CHECK(cls == MPI_T_ERR_INVALID_HANDLE, "class %d", cls);
    MPI_CHECK(MPI_Error_string(MPI_T_ERR_CVAR_SET_NEVER, text, &len));
    CHECK(len > 0 && strstr(text, "MPI_T") != NULL, "string \"%s\"", text);
    CHECK(MPI_T_ERR_INVALID < MPI_ERR_LASTCODE, "MPI_T classes above MPI_ERR_LASTCODE");
    MPI_CHECK(MPI_Finalize());

    /* after MPI_Finalize too */
    control_variables();
    MPI_CHECK(MPI_T_finalize());
    T_EXPECT(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    T_EXPECT(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    printf("mpi_t: ok\n");
    return 0;
}
