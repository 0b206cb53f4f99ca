/*
 * mpi_t_event.c — the MPI-4 tool events (MPI-4.0 §15.3.8): event sources
 * and event types, registrations and instances.
 *
 * Proust MPI has one event source, its clock (CLOCK_MONOTONIC in
 * nanoseconds, ordered), and defines no event type yet: the counts say so,
 * every index is MPI_T_ERR_INVALID_INDEX, and since no registration or
 * instance can exist, a handle is always MPI_T_ERR_INVALID_HANDLE.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "mpi_impl.h"

enum { NUM_SOURCES = 1, NUM_EVENTS = 0 };

int PMPI_T_source_get_num(int *num_sources)
{
    PM_T_CHECK_INIT();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = NUM_SOURCES;
    return MPI_SUCCESS;
}
PM_WEAK(T_source_get_num)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                           int *desc_len, MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    PM_T_CHECK_INIT();
    if (source_index < 0 || source_index >= NUM_SOURCES)
        return MPI_T_ERR_INVALID_INDEX;
    pm_t_str_out("proust_clock", name, name_len);
    pm_t_str_out("the process's monotonic clock, in nanoseconds", desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info)
        return PMPI_Info_create(info) == MPI_SUCCESS ? MPI_SUCCESS : MPI_T_ERR_MEMORY;
    return MPI_SUCCESS;
}
PM_WEAK(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    PM_T_CHECK_INIT();
    if (source_index < 0 || source_index >= NUM_SOURCES)
        return MPI_T_ERR_INVALID_INDEX;
    if (!timestamp)
        return MPI_T_ERR_INVALID;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
    return MPI_SUCCESS;
}
PM_WEAK(T_source_get_timestamp)

int PMPI_T_event_get_num(int *num_events)
{
    PM_T_CHECK_INIT();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = NUM_EVENTS;
    return MPI_SUCCESS;
}
PM_WEAK(T_event_get_num)

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    PM_T_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX; /* no event types */
}
PM_WEAK(T_event_get_info)

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    PM_T_CHECK_INIT();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
PM_WEAK(T_event_get_index)

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    PM_T_CHECK_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
PM_WEAK(T_event_handle_alloc)

/* No registration can exist: every call on one names an invalid handle. */
#define NO_REGISTRATION(name, params, uses)                                          \
    int PMPI_T_##name params                                                         \
    {                                                                                \
        uses;                                                                        \
        PM_T_CHECK_INIT();                                                              \
        return MPI_T_ERR_INVALID_HANDLE;                                             \
    }                                                                                \
    PM_WEAK(T_##name)

NO_REGISTRATION(event_handle_set_info, (MPI_T_event_registration r, MPI_Info info),
                ((void)r, (void)info))
NO_REGISTRATION(event_handle_get_info, (MPI_T_event_registration r, MPI_Info *info_used),
                ((void)r, (void)info_used))
NO_REGISTRATION(event_register_callback,
                (MPI_T_event_registration r, MPI_T_cb_safety safety, MPI_Info info,
                 void *user_data, MPI_T_event_cb_function *fn),
                ((void)r, (void)safety, (void)info, (void)user_data, (void)fn))
NO_REGISTRATION(event_callback_set_info,
                (MPI_T_event_registration r, MPI_T_cb_safety safety, MPI_Info info),
                ((void)r, (void)safety, (void)info))
NO_REGISTRATION(event_callback_get_info,
                (MPI_T_event_registration r, MPI_T_cb_safety safety, MPI_Info *info_used),
                ((void)r, (void)safety, (void)info_used))
NO_REGISTRATION(event_handle_free,
                (MPI_T_event_registration r, void *user_data, MPI_T_event_free_cb_function *fn),
                ((void)r, (void)user_data, (void)fn))
NO_REGISTRATION(event_set_dropped_handler,
                (MPI_T_event_registration r, MPI_T_event_dropped_cb_function *fn),
                ((void)r, (void)fn))
/* ... nor an instance (one exists only inside an event callback). */
NO_REGISTRATION(event_read, (MPI_T_event_instance e, int element_index, void *buffer),
                ((void)e, (void)element_index, (void)buffer))
NO_REGISTRATION(event_copy, (MPI_T_event_instance e, void *buffer), ((void)e, (void)buffer))
NO_REGISTRATION(event_get_timestamp, (MPI_T_event_instance e, MPI_Count *event_timestamp),
                ((void)e, (void)event_timestamp))
NO_REGISTRATION(event_get_source, (MPI_T_event_instance e, int *source_index),
                ((void)e, (void)source_index))

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    PM_T_CHECK_INIT();
    int num_cat = 0;
    PMPI_T_category_get_num(&num_cat);
    if (cat_index < 0 || cat_index >= num_cat)
        return MPI_T_ERR_INVALID_INDEX;
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = NUM_EVENTS;
    return MPI_SUCCESS;
}
PM_WEAK(T_category_get_num_events)

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    (void)indices;
    PM_T_CHECK_INIT();
    int num_cat = 0;
    PMPI_T_category_get_num(&num_cat);
    if (cat_index < 0 || cat_index >= num_cat)
        return MPI_T_ERR_INVALID_INDEX;
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}
PM_WEAK(T_category_get_events)
