/*
 * init.c — starting and stopping the MPI library, and the environment
 * queries (versions, processor name, clocks, thread level, abort).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_impl.h"

_Atomic int pm_state = PM_STATE_NONE;
proust_session_t *pm_session;
int pm_world_rank, pm_world_size = 1;
int pm_thread_level = MPI_THREAD_SINGLE;
int64_t pm_type_contig_size[PM_TYPE_FIRST_USER];
static pthread_t main_thread;
static pthread_mutex_t init_mutex = PTHREAD_MUTEX_INITIALIZER;

/*
 * The instance (the engine and the MPI tables) serves the World Model
 * (MPI_Init .. MPI_Finalize) and every MPI-4 session: the first of them
 * starts it, and it stops when MPI_Finalize finds no session left, or at
 * the last MPI_Session_finalize after MPI_Finalize. A process that only
 * ever used sessions keeps it until exit (a later MPI_Session_init or
 * MPI_Init may still come; the engine cannot restart once stopped): an
 * exit handler stops it then, with the same fence as MPI_Finalize.
 */
static int instance_users;          /* World Model + live sessions (init_mutex) */
static _Atomic int world_state;     /* PM_STATE_* of the World Model */

/* Start the instance if it is not running (init_mutex held). */
static int instance_start(const char *fname)
{
    int st = atomic_load(&pm_state);
    if (st == PM_STATE_RUNNING)
        return MPI_SUCCESS;
    if (st == PM_STATE_FINALIZED)
        return MPI_ERR_OTHER;
    pm_config_register(); /* before proust_init warns about unknown variables */
    int rc = proust_init(&pm_session);
    if (rc != PROUST_OK) {
        pthread_mutex_unlock(&init_mutex);
        fprintf(stderr, "[proust mpi] fatal error: %s: the Proust engine did not start: %s\n",
                fname, proust_strerror(rc));
        exit(1);
    }
    pm_world_rank = proust_rank(pm_session);
    pm_world_size = proust_size(pm_session);
    if (pm_world_size > PM_MAX_COMM_SIZE) {
        fprintf(stderr, "[proust mpi] fatal error: %d processes, at most %d supported\n",
                pm_world_size, PM_MAX_COMM_SIZE);
        exit(1);
    }
    pm_tables_init();
    pm_requests_init();
    pm_errhandler_init();
    pm_datatypes_init();
    for (int i = 0; i < PM_TYPE_FIRST_USER; i++) {
        const struct pm_datatype *t = pm_type_get(PROUST_MPI_TYPE(i));
        pm_type_contig_size[i] =
            t && t->committed && t->contiguous && t->true_lb == 0 ? (int64_t)t->size : -1;
    }
    pm_ops_init();
    pm_groups_init();
    pm_comms_init();
    rc = pm_coll_policy_init();
    if (rc != MPI_SUCCESS) {
        pthread_mutex_unlock(&init_mutex);
        fprintf(stderr, "[proust mpi] fatal error: %s: the processes could not agree on the "
                "collective algorithms (error class %d)\n", fname, rc);
        exit(1);
    }
    atomic_store(&pm_state, PM_STATE_RUNNING);
    return MPI_SUCCESS;
}

/* Stop the instance (init_mutex held): every process leaves together. */
static int instance_stop(void)
{
    int rc = proust_finalize(pm_session);
    atomic_store(&pm_state, PM_STATE_FINALIZED);
    pm_session = NULL;
    pm_errors_finalize();
    if (rc != PROUST_OK) {
        fprintf(stderr, "[proust mpi, rank %d] MPI_Finalize: %s\n", pm_world_rank,
                proust_strerror(rc));
        return pm_error_from_proust(rc);
    }
    return MPI_SUCCESS;
}

/* At exit, a process that used sessions only (or finalized the World Model
 * while sessions were alive) stops the instance still running. */
static void instance_at_exit(void)
{
    pthread_mutex_lock(&init_mutex);
    if (atomic_load(&pm_state) == PM_STATE_RUNNING && world_state != PM_STATE_RUNNING)
        instance_stop();
    pthread_mutex_unlock(&init_mutex);
}

int pm_instance_acquire(const char *fname)
{
    static bool exit_handler;
    pthread_mutex_lock(&init_mutex);
    int rc = instance_start(fname);
    if (rc == MPI_SUCCESS) {
        instance_users++;
        if (!exit_handler)
            exit_handler = atexit(instance_at_exit) == 0;
    }
    pthread_mutex_unlock(&init_mutex);
    return rc;
}

int pm_instance_release(void)
{
    int rc = MPI_SUCCESS;
    pthread_mutex_lock(&init_mutex);
    if (--instance_users == 0 && world_state == PM_STATE_FINALIZED)
        rc = instance_stop();
    pthread_mutex_unlock(&init_mutex);
    return rc;
}

static int init_common(int required, int *provided, const char *fname)
{
    pthread_mutex_lock(&init_mutex);
    if (world_state != PM_STATE_NONE || atomic_load(&pm_state) == PM_STATE_FINALIZED) {
        int st = world_state;
        pthread_mutex_unlock(&init_mutex);
        if (st == PM_STATE_RUNNING)
            return pm_error(MPI_COMM_WORLD, MPI_ERR_OTHER, "%s: MPI is already initialized",
                            fname);
        fprintf(stderr, "[proust mpi] fatal error: %s called after MPI_Finalize\n", fname);
        exit(1);
    }
    instance_start(fname);
    if (required < MPI_THREAD_SINGLE)
        required = MPI_THREAD_SINGLE;
    pm_thread_level = required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : required;
    if (provided)
        *provided = pm_thread_level;
    main_thread = pthread_self();
    world_state = PM_STATE_RUNNING;
    instance_users++;
    pthread_mutex_unlock(&init_mutex);
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv)
{
    return init_common(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}
PM_WEAK(Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    return init_common(required, provided, "MPI_Init_thread");
}
PM_WEAK(Init_thread)

int PMPI_Finalize(void)
{
    PM_CHECK_INIT("MPI_Finalize");
    /* the buffered messages leave first: an implicit MPI_Buffer_detach */
    pm_bbuf_flush(&pm_bbuf_process);
    pthread_mutex_lock(&init_mutex);
    if (world_state != PM_STATE_RUNNING) {
        pthread_mutex_unlock(&init_mutex);
        return pm_error(MPI_COMM_SELF, MPI_ERR_OTHER, "MPI_Finalize: MPI_Init was not called "
                        "(sessions end with MPI_Session_finalize)");
    }
    pm_idup_quiesce();
    /* Attributes of MPI_COMM_SELF are deleted first (MPI-3.1 §8.7.1): their
     * callbacks may still communicate. */
    pm_comms_finalize();
    world_state = PM_STATE_FINALIZED;
    int rc = --instance_users == 0 ? instance_stop() : MPI_SUCCESS;
    pthread_mutex_unlock(&init_mutex);
    return rc;
}
PM_WEAK(Finalize)

int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = atomic_load(&world_state) != PM_STATE_NONE;
    return MPI_SUCCESS;
}
PM_WEAK(Initialized)

int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPI_ERR_ARG;
    *flag = atomic_load(&world_state) == PM_STATE_FINALIZED;
    return MPI_SUCCESS;
}
PM_WEAK(Finalized)

int PMPI_Query_thread(int *provided)
{
    PM_CHECK_INIT("MPI_Query_thread");
    if (!provided)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Query_thread: provided is NULL");
    *provided = pm_thread_level;
    return MPI_SUCCESS;
}
PM_WEAK(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    PM_CHECK_INIT("MPI_Is_thread_main");
    if (!flag)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Is_thread_main: flag is NULL");
    *flag = pthread_equal(pthread_self(), main_thread) != 0;
    return MPI_SUCCESS;
}
PM_WEAK(Is_thread_main)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    /* Every process of the job stops, whatever `comm` is (allowed by
     * MPI-3.1 §8.7: an implementation may abort all processes). */
    fprintf(stderr, "[proust mpi, rank %d] MPI_Abort called with error code %d\n", pm_world_rank,
            errorcode);
    fflush(stderr);
    int code = errorcode & 0xff;
    if (code == 0)
        code = 1; /* an aborted job never reports success */
    if (pm_session)
        proust_abort(pm_session, code);
    exit(code);
}
PM_WEAK(Abort)

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
PM_WEAK(Wtime)

double PMPI_Wtick(void)
{
    struct timespec res;
    if (clock_getres(CLOCK_MONOTONIC, &res) != 0)
        return 1e-9;
    return (double)res.tv_sec + 1e-9 * (double)res.tv_nsec;
}
PM_WEAK(Wtick)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    PM_CHECK_INIT("MPI_Get_processor_name");
    if (!name || !resultlen)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_processor_name: NULL argument");
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        pm_strlcpy(host, "localhost", sizeof host);
    host[sizeof host - 1] = '\0';
    *resultlen = pm_strlcpy(name, host, MPI_MAX_PROCESSOR_NAME);
    return MPI_SUCCESS;
}
PM_WEAK(Get_processor_name)

int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
PM_WEAK(Get_version)

int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    snprintf(text, sizeof text, "Proust MPI %s (MPI %d.%d on the Proust engine %s)",
             PROUST_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, PROUST_VERSION_STRING);
    *resultlen = pm_strlcpy(version, text, MPI_MAX_LIBRARY_VERSION_STRING);
    return MPI_SUCCESS;
}
PM_WEAK(Get_library_version)

int PMPI_Pcontrol(const int level, ...)
{
    /* MPI-3.1 §14.2.4: a hook for profiling libraries; the MPI library
     * itself has nothing to do. */
    return MPI_SUCCESS;
}
PM_WEAK(Pcontrol)
