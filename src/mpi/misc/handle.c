/*
 * handle.c — the tables that turn int handles into objects.
 *
 * A table is a two-level array (chunks of PM_TABLE_CHUNK pointers, allocated
 * on demand and never moved), so a lookup is two loads and takes no lock.
 * Freed indices are reused through a free list; adding and removing take the
 * table's spinlock.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi_impl.h"

#define PM_TABLE_INIT(name, text, k, res) \
    struct pm_table name = {.what = text, .kind = k, .reserved = res, .next = res}

PM_TABLE_INIT(pm_comm_table, "communicator", PROUST_MPI_KIND_COMM, 2);
PM_TABLE_INIT(pm_group_table, "group", PROUST_MPI_KIND_GROUP, 1);
PM_TABLE_INIT(pm_type_table, "datatype", PROUST_MPI_KIND_DATATYPE, PM_TYPE_FIRST_USER);
PM_TABLE_INIT(pm_op_table, "operation", PROUST_MPI_KIND_OP, PROUST_MPI_NUM_PREDEFINED_OPS);
PM_TABLE_INIT(pm_errh_table, "error handler", PROUST_MPI_KIND_ERRHANDLER, 3);
PM_TABLE_INIT(pm_info_table, "info", PROUST_MPI_KIND_INFO, 1);
/* Request index 0 would make handle KIND_REQUEST|0, which is fine, but we
 * keep it unused so that a request handle is never a small number; index 1
 * is the shared request of sends that left at once (PM_REQ_SENT_HANDLE). */
PM_TABLE_INIT(pm_request_table, "request", PROUST_MPI_KIND_REQUEST, 2);
PM_TABLE_INIT(pm_message_table, "message", PROUST_MPI_KIND_MESSAGE, 1);
PM_TABLE_INIT(pm_win_table, "window", PROUST_MPI_KIND_WIN, 1);
PM_TABLE_INIT(pm_session_table, "session", PROUST_MPI_KIND_SESSION, 1);
PM_TABLE_INIT(pm_file_table, "file", PROUST_MPI_KIND_FILE, 1);

static struct pm_table *const all_tables[] = {
    &pm_comm_table, &pm_group_table, &pm_type_table,    &pm_op_table,
    &pm_errh_table, &pm_info_table,  &pm_request_table, &pm_message_table,
    &pm_win_table,   &pm_session_table, &pm_file_table,
};

/* The chunk holding `idx`, allocated if needed (table lock held). */
static void **chunk_for(struct pm_table *t, unsigned idx)
{
    unsigned c = idx / PM_TABLE_CHUNK;
    if (c >= PM_TABLE_CHUNKS)
        return NULL;
    void **chunk = atomic_load_explicit(&t->chunks[c], memory_order_relaxed);
    if (!chunk) {
        chunk = calloc(PM_TABLE_CHUNK, sizeof *chunk);
        if (!chunk)
            return NULL;
        atomic_store_explicit(&t->chunks[c], chunk, memory_order_release);
    }
    return chunk;
}

void pm_table_set(struct pm_table *t, int index, void *obj)
{
    pm_lock(&t->lock);
    void **chunk = chunk_for(t, (unsigned)index);
    if (chunk)
        __atomic_store_n(&chunk[index % PM_TABLE_CHUNK], obj, __ATOMIC_RELEASE);
    pm_unlock(&t->lock);
}

int pm_table_add(struct pm_table *t, void *obj)
{
    pm_lock(&t->lock);
    int idx;
    if (t->free_count > 0) {
        idx = t->free_list[--t->free_count];
    } else {
        if (t->next > PROUST_MPI_INDEX_MASK) {
            pm_unlock(&t->lock);
            return 0;
        }
        idx = t->next;
    }
    void **chunk = chunk_for(t, (unsigned)idx);
    if (!chunk) {
        if (idx != t->next)
            t->free_count++;
        pm_unlock(&t->lock);
        return 0;
    }
    if (idx == t->next)
        t->next++;
    /* Release order: the object is fully built before its handle is
     * published to other threads through the caller. */
    __atomic_store_n(&chunk[idx % PM_TABLE_CHUNK], obj, __ATOMIC_RELEASE);
    atomic_fetch_add_explicit(&t->live, 1, memory_order_relaxed);
    pm_unlock(&t->lock);
    return t->kind | idx;
}

void pm_table_remove(struct pm_table *t, int handle)
{
    if ((handle & PROUST_MPI_KIND_MASK) != t->kind)
        return;
    int idx = handle & PROUST_MPI_INDEX_MASK;
    pm_lock(&t->lock);
    void **chunk = atomic_load_explicit(&t->chunks[idx / PM_TABLE_CHUNK], memory_order_relaxed);
    if (!chunk || !chunk[idx % PM_TABLE_CHUNK]) {
        pm_unlock(&t->lock);
        return;
    }
    __atomic_store_n(&chunk[idx % PM_TABLE_CHUNK], NULL, __ATOMIC_RELAXED);
    atomic_fetch_sub_explicit(&t->live, 1, memory_order_relaxed);
    if (idx >= t->reserved) {
        if (t->free_count == t->free_cap) {
            int cap = t->free_cap ? 2 * t->free_cap : 256;
            int *fl = realloc(t->free_list, (size_t)cap * sizeof *fl);
            if (!fl) { /* the index is simply never reused */
                pm_unlock(&t->lock);
                return;
            }
            t->free_list = fl;
            t->free_cap = cap;
        }
        t->free_list[t->free_count++] = idx;
    }
    pm_unlock(&t->lock);
}

void pm_tables_init(void)
{
    for (size_t i = 0; i < sizeof all_tables / sizeof all_tables[0]; i++) {
        struct pm_table *t = all_tables[i];
        if (atomic_load(&t->live) > 0)
            continue; /* info objects made before MPI_Init (MPI-4.0) */
        t->next = t->reserved;
        t->free_count = 0;
        atomic_store(&t->live, 0);
    }
}

void pm_tables_finalize(void)
{
    for (size_t i = 0; i < sizeof all_tables / sizeof all_tables[0]; i++) {
        struct pm_table *t = all_tables[i];
        for (unsigned c = 0; c < PM_TABLE_CHUNKS; c++) {
            void **chunk = atomic_load(&t->chunks[c]);
            if (!chunk)
                break;
            atomic_store(&t->chunks[c], NULL);
            free(chunk);
        }
        free(t->free_list);
        t->free_list = NULL;
        t->free_cap = t->free_count = 0;
    }
}
