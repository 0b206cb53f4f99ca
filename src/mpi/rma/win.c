/*
 * win.c — window objects: creation in the four flavors (create, allocate,
 * allocate_shared, dynamic), attach/detach, shared_query and free.
 *
 * A window owns a private duplicate of the communicator it was made on,
 * so RMA traffic and the window's internal collectives (fence) never meet
 * the application's messages. Creation allgathers every rank's size and
 * displacement unit: origins check target ranges and scale displacements
 * themselves, and targets check again (a malformed header is dropped, never
 * applied).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "comm.h"
#include "win.h"

/* Memory of MPI_Win_allocate(_shared): aligned like MPI_Alloc_mem. */
#define PM_WIN_ALIGN 64

static void win_destroy(struct pm_win *w)
{
    if (!w)
        return;
    if (w->comm)
        pm_comm_discard(w->comm);
    if (w->nic_mem) /* before the memory goes: a registration never outlives it */
        proust_mem_release(w->nic_mem);
    w->nic_mem = NULL;
    free(w->alloc);
    if (w->shm_base)
        munmap(w->shm_base, w->shm_len);
    free(w->shm_offsets);
    free(w->sizes);
    free(w->disp_units);
    free(w->sent);
    free(w->pending);
    free(w->unflushed);
    free(w->locked);
    free(w->lock_nocheck);
    free(w->post_seen);
    free(w->complete_seen);
    free(w->access.ranks);
    free(w->exposure.ranks);
    free(w->regions);
    free(w->nic_keys);
    free(w->nic_key_len);
    free(w->nic_how);
    free(w->nic_acc_key_len);
    free(w->nic_base_low);
    pm_rma_nic_lock_free(w);
    if (w->info != MPI_INFO_NULL)
        PMPI_Info_free(&w->info);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* A window over a private dup of `comm` with its per-rank arrays; memory
 * and ports come later. Raises on `comm`. */
static int win_new(MPI_Comm comm, MPI_Info info, int flavor, const char *fn, struct pm_win **out)
{
    struct pm_comm *c = pm_comm_get(comm);
    if (!c)
        return pm_comm_invalid(comm, fn);
    if (c->is_inter)
        return pm_error(comm, MPI_ERR_COMM, "%s: windows are made on intracommunicators", fn);
    if (info != MPI_INFO_NULL && !pm_info_valid(info))
        return pm_error(comm, MPI_ERR_INFO, "%s: invalid info handle %#x", fn, (unsigned)info);
    struct pm_win *w = calloc(1, sizeof *w);
    if (!w)
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    pthread_mutex_init(&w->lock, NULL);
    w->info = MPI_INFO_NULL;
    w->flavor = flavor;
    w->rank = c->rank;
    w->size = c->size;
    uint16_t ctx;
    int rc = pm_context_alloc(c, &ctx);
    if (rc != MPI_SUCCESS) {
        free(w);
        return pm_comm_fail(comm, rc, fn);
    }
    w->comm = pm_comm_new(c->local, NULL, ctx);
    if (!w->comm) {
        pm_context_free(ctx);
        free(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    size_t n = (size_t)w->size;
    w->sizes = calloc(n, sizeof *w->sizes);
    w->disp_units = calloc(n, sizeof *w->disp_units);
    w->sent = calloc(n, sizeof *w->sent);
    w->pending = calloc(n, sizeof *w->pending);
    w->unflushed = calloc(n, sizeof *w->unflushed);
    w->locked = calloc(n, sizeof *w->locked);
    w->lock_nocheck = calloc(n, sizeof *w->lock_nocheck);
    w->post_seen = calloc(n, sizeof *w->post_seen);
    w->complete_seen = calloc(n, sizeof *w->complete_seen);
    if (!w->sizes || !w->disp_units || !w->sent || !w->pending || !w->unflushed || !w->locked ||
        !w->lock_nocheck || !w->post_seen || !w->complete_seen) {
        win_destroy(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    if (pm_win_hints(MPI_INFO_NULL, info, &w->info) != MPI_SUCCESS)
        w->info = MPI_INFO_NULL; /* then get_info reports the defaults */
    *out = w;
    return MPI_SUCCESS;
}

/* Exchange sizes and units, open the ports, publish the handle. The
 * exchange is the creation's synchronisation: no rank sends to a window
 * before every rank has made it (messages arriving early would simply wait
 * unexpected, but a failed creation must fail everywhere first). */
/* What each rank tells the others when a window is made. */
struct win_card {
    int64_t size, disp_unit;
    uint64_t key_len; /* 0: no one-sided access to this rank's memory */
    uint8_t key[PROUST_MEM_KEY_MAX];
    uint64_t acc_types; /* types it can accumulate by atomics to every rank */
    uint64_t base_low;  /* its window's address, low bits */
    uint64_t lock_key_len; /* its lock word's key (0: none) */
    uint8_t lock_key[PROUST_MEM_KEY_MAX];
};

/* PROUST_RMA_NIC: register the window's memory with the rails that offer
 * one-sided access (none: no key, the operations stay messages). */
static void nic_register(struct pm_win *w, struct win_card *card)
{
    card->key_len = 0;
    w->nic_mode = proust_config_switch(pm_config_str(PM_CFG_RMA_NIC));
    if (w->direct || w->flavor == MPI_WIN_FLAVOR_DYNAMIC || w->win_size <= 0 || !w->base ||
        w->nic_mode == 0)
        return;
    size_t len = 0;
    if (proust_mem_register(pm_session, w->base, (size_t)w->win_size, &w->nic_mem) !=
        PROUST_OK)
        return;
    if (proust_mem_key(w->nic_mem, card->key, sizeof card->key, &len) == PROUST_OK)
        card->key_len = len;
}

/* Exchange sizes, units and keys, open the ports, publish the handle. The
 * exchange is the creation's synchronisation: no rank sends to a window
 * before every rank has made it (messages arriving early would simply wait
 * unexpected, but a failed creation must fail everywhere first). */
static int win_publish(MPI_Comm comm, struct pm_win *w, const char *fn, MPI_Win *win)
{
    struct win_card mine = {.size = (int64_t)w->win_size, .disp_unit = (int64_t)w->disp_unit};
    w->disp_unit_attr = pm_int_or_undefined(w->disp_unit);
    nic_register(w, &mine);
    if (mine.key_len)
        mine.acc_types = pm_rma_nic_acc_offer(w);
    if ((mine.acc_types >> (MPI_UINT64_T & PROUST_MPI_INDEX_MASK) & 1) &&
        pm_rma_nic_lock_setup(w, mine.lock_key, &mine.lock_key_len) != MPI_SUCCESS) {
        win_destroy(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    mine.base_low = (uint64_t)(uintptr_t)w->base & 63;
    struct win_card *all = malloc((size_t)w->size * sizeof mine);
    w->nic_keys = malloc((size_t)w->size * sizeof *w->nic_keys);
    w->nic_key_len = calloc((size_t)w->size, 1);
    w->nic_how = calloc((size_t)w->size, 1);
    w->nic_acc_key_len = calloc((size_t)w->size, 1);
    w->nic_base_low = calloc((size_t)w->size, 1);
    if (!all || !w->nic_keys || !w->nic_key_len || !w->nic_how || !w->nic_acc_key_len ||
        !w->nic_base_low) {
        free(all);
        win_destroy(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    int rc = PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                            w->comm->handle);
    if (rc != MPI_SUCCESS) {
        free(all);
        win_destroy(w);
        return pm_error(comm, rc, "%s: exchanging window sizes failed", fn);
    }
    /* atomics for a type only if every rank offers it and every rank with
     * memory has a key: the same on every rank, from the same cards */
    w->nic_acc_types = ~(uint64_t)0;
    w->nic_locks = true;
    w->nic_lock_keys = calloc((size_t)w->size, sizeof *w->nic_lock_keys);
    for (int r = 0; r < w->size; r++) {
        size_t ll = all[r].lock_key_len <= PROUST_MEM_KEY_MAX ? (size_t)all[r].lock_key_len : 0;
        w->nic_locks &= ll > 0 && w->nic_lock_keys;
        if (w->nic_lock_keys) {
            w->nic_lock_keys[r].len = (uint8_t)ll;
            memcpy(w->nic_lock_keys[r].key, all[r].lock_key, ll);
        }
        w->sizes[r] = (MPI_Aint)all[r].size;
        w->disp_units[r] = (MPI_Aint)all[r].disp_unit;
        size_t kl = all[r].key_len <= PROUST_MEM_KEY_MAX ? (size_t)all[r].key_len : 0;
        w->nic |= kl > 0;
        w->nic_acc_types &= all[r].acc_types;
        if (!kl && all[r].size > 0)
            w->nic_acc_types = 0;
        memcpy(w->nic_keys[r], all[r].key, kl);
        w->nic_acc_key_len[r] = (uint8_t)kl;
        w->nic_base_low[r] = (uint8_t)(all[r].base_low & 63);
        int how = r == w->rank ? 0 : proust_rma_reaches(pm_session, pm_comm_peer(w->comm, r));
        if (how != PROUST_RMA_BY_NIC && how != PROUST_RMA_BY_POLLING)
            kl = 0; /* its key is for a rail that does not carry us */
        w->nic_how[r] = (uint8_t)(kl ? how : 0);
        w->nic_key_len[r] = (uint8_t)(r == w->rank ? 0 : kl);
    }
    free(all);
    w->nic_locks &= (w->nic_acc_types >> (MPI_UINT64_T & PROUST_MPI_INDEX_MASK) & 1) != 0;
    w->nic_acc_wait = w->nic_acc_types &&
                      proust_rma_atomic_ordered(pm_session, pm_comm_peer(w->comm, w->rank)) != 1 &&
                      !pm_win_unordered(w);
    w->handle = pm_table_add(&pm_win_table, w);
    if (!w->handle) {
        win_destroy(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of handles", fn);
    }
    w->comm->win_handle = w->handle;
    if (pm_rma_ports_open(w) != MPI_SUCCESS) {
        pm_table_remove(&pm_win_table, w->handle);
        win_destroy(w);
        return pm_error(comm, MPI_ERR_NO_MEM, "%s: out of memory", fn);
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

static int check_size_unit(MPI_Comm comm, MPI_Aint size, MPI_Aint disp_unit, const char *fn)
{
    if (size < 0)
        return pm_error(comm, MPI_ERR_SIZE, "%s: negative window size %td", fn, size);
    if (disp_unit <= 0)
        return pm_error(comm, MPI_ERR_DISP, "%s: displacement unit %td is not positive", fn,
                        disp_unit);
    return MPI_SUCCESS;
}

static int same_host(struct pm_win *w, bool *same);
static int map_shared(struct pm_win *w, MPI_Aint size);

/* PROUST_RMA_SHM: windows within a host in shared memory (not "off"). */
static bool rma_shm_local(void)
{
    return proust_config_switch(pm_config_str(PM_CFG_RMA_SHM)) != 0;
}

/* Every process of the window wants it (collective: a window whose ranks
 * disagreed would lock two ways); *rc: the collective's outcome. */
static bool rma_shm_wanted(struct pm_win *w, int *rc)
{
    int mine = rma_shm_local(), all = 0;
    *rc = PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, w->comm->handle);
    return *rc == MPI_SUCCESS && all;
}

/* Shared memory for the window (PROUST_RMA_SHM): every process wants it
 * and they all run on this host (collective). *rc: MPI_SUCCESS, or the
 * error of a collective. */
static bool shared_within_host(struct pm_win *w, int *rc)
{
    bool same = false;
    return rma_shm_wanted(w, rc) && (*rc = same_host(w, &same)) == MPI_SUCCESS && same;
}

/* The int entry points and their _c twins (MPI_Aint units) share these. */
static int win_create(const char *fn, void *base, MPI_Aint size, MPI_Aint disp_unit,
                      MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    PM_CHECK_INIT(fn);
    if (!win)
        return pm_error(comm, MPI_ERR_ARG, "%s: win is NULL", fn);
    *win = MPI_WIN_NULL;
    int rc = check_size_unit(comm, size, disp_unit, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size > 0 && !base)
        return pm_error(comm, MPI_ERR_ARG, "%s: NULL base for a window of %td bytes", fn, size);
    struct pm_win *w;
    rc = win_new(comm, info, MPI_WIN_FLAVOR_CREATE, fn, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    w->base = base;
    w->win_size = size;
    w->disp_unit = disp_unit;
    /* within a host, the passive-target locks are words in a small shared
     * segment: taken without the target (operations stay messages) */
    if (shared_within_host(w, &rc))
        rc = map_shared(w, 0);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return pm_error(comm, rc, "%s: cannot map the window's lock words", fn);
    }
    return win_publish(comm, w, fn, win);
}

/* The start of MPI_Win_allocate(_shared): check the arguments, make the
 * window of `flavor` (memory comes next). */
static int allocating_new(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                          void *baseptr, MPI_Win *win, int flavor, const char *fn,
                          struct pm_win **out)
{
    PM_CHECK_INIT(fn);
    if (!win || !baseptr)
        return pm_error(comm, MPI_ERR_ARG, "%s: %s is NULL", fn, win ? "baseptr" : "win");
    *win = MPI_WIN_NULL;
    int rc = check_size_unit(comm, size, disp_unit, fn);
    if (rc != MPI_SUCCESS)
        return rc;
    return win_new(comm, info, flavor, fn, out);
}

static int win_allocate(const char *fn, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                        MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    struct pm_win *w;
    int rc = allocating_new(size, disp_unit, info, comm, baseptr, win, MPI_WIN_FLAVOR_ALLOCATE, fn, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    /* within a host, one shared segment: the origins load and store */
    if (shared_within_host(w, &rc) && (rc = map_shared(w, size)) == MPI_SUCCESS) {
        w->direct = true;
        w->base = size ? pm_win_shm_addr(w, w->rank, 0) : NULL;
    } else if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return pm_error(comm, rc, "%s: cannot map a shared segment of the window", fn);
    } else {
        size_t bytes = ((size_t)size + PM_WIN_ALIGN - 1) & ~(size_t)(PM_WIN_ALIGN - 1);
        w->alloc = aligned_alloc(PM_WIN_ALIGN, bytes ? bytes : PM_WIN_ALIGN);
        if (!w->alloc) {
            win_destroy(w);
            return pm_error(comm, MPI_ERR_NO_MEM, "%s: cannot allocate %td bytes", fn, size);
        }
        w->base = size ? w->alloc : NULL;
    }
    w->win_size = size;
    w->disp_unit = disp_unit;
    rc = win_publish(comm, w, fn, win);
    if (rc == MPI_SUCCESS)
        *(void **)baseptr = w->base;
    return rc;
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    static const char fn[] = "MPI_Win_create_dynamic";
    PM_CHECK_INIT(fn);
    if (!win)
        return pm_error(comm, MPI_ERR_ARG, "%s: win is NULL", fn);
    *win = MPI_WIN_NULL;
    struct pm_win *w;
    int rc = win_new(comm, info, MPI_WIN_FLAVOR_DYNAMIC, fn, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    w->base = MPI_BOTTOM;
    w->disp_unit = 1;
    return win_publish(comm, w, fn, win);
}
PM_WEAK(Win_create_dynamic)

/* ---- Shared memory windows ------------------------------------------------ */

/* Do all ranks of the window run on this host? (allgather of host names) */
static int same_host(struct pm_win *w, bool *same)
{
    enum { HOST = 256 };
    char mine[HOST] = {0};
    if (gethostname(mine, HOST - 1) != 0)
        strcpy(mine, "localhost");
    char *all = malloc((size_t)w->size * HOST);
    if (!all)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Allgather(mine, HOST, MPI_CHAR, all, HOST, MPI_CHAR, w->comm->handle);
    *same = true;
    for (int r = 0; rc == MPI_SUCCESS && r < w->size; r++)
        if (strncmp(all + (size_t)r * HOST, mine, HOST))
            *same = false;
    free(all);
    return rc;
}

/* Rank 0 creates one POSIX shared memory segment holding every rank's part
 * (each aligned); the others map it once it exists; the name is removed as
 * soon as everyone has it mapped. */
static int map_shared(struct pm_win *w, MPI_Aint size)
{
    int64_t mine = size, *all = malloc((size_t)w->size * sizeof *all);
    w->shm_offsets = calloc((size_t)w->size + 1, sizeof *w->shm_offsets);
    if (!all || !w->shm_offsets) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    int rc = PMPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, w->comm->handle);
    size_t total = 0;
    for (int r = 0; r < w->size; r++) {
        w->shm_offsets[r] = (MPI_Aint)total;
        total += ((size_t)all[r] + PM_WIN_ALIGN - 1) & ~(size_t)(PM_WIN_ALIGN - 1);
    }
    free(all);
    if (rc != MPI_SUCCESS)
        return rc;
    /* then a cache line of lock words per rank, its accumulate lock and
     * its passive-target lock (zero: free, as ftruncate leaves them) */
    size_t locks = total;
    w->shm_len = total + (size_t)w->size * PM_SHM_LOCK_STRIDE * sizeof(int);
    char name[64];
    int64_t id[2] = {getpid(), w->comm->context};
    rc = PMPI_Bcast(id, 2, MPI_INT64_T, 0, w->comm->handle);
    if (rc != MPI_SUCCESS)
        return rc;
    snprintf(name, sizeof name, "/proust-win-%lld-%lld", (long long)id[0], (long long)id[1]);
    int fd = -1, ok = 1;
    if (w->rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)w->shm_len) != 0)
            ok = 0;
    }
    rc = PMPI_Bcast(&ok, 1, MPI_INT, 0, w->comm->handle);
    if (rc == MPI_SUCCESS && ok && w->rank != 0) {
        fd = shm_open(name, O_RDWR, 0);
        ok = fd >= 0;
    }
    if (ok && fd >= 0) {
        void *p = mmap(NULL, w->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            ok = 0;
        } else {
            w->shm_base = p;
            w->shm_locks = (_Atomic int *)((char *)p + locks);
        }
    }
    if (fd >= 0)
        close(fd);
    int all_ok = 0;
    if (rc == MPI_SUCCESS)
        rc = PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, w->comm->handle);
    if (w->rank == 0)
        shm_unlink(name);
    if (rc != MPI_SUCCESS)
        return rc;
    return all_ok ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static int win_allocate_shared(const char *fn, MPI_Aint size, MPI_Aint disp_unit,
                               MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    struct pm_win *w;
    int rc = allocating_new(size, disp_unit, info, comm, baseptr, win, MPI_WIN_FLAVOR_SHARED, fn, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    bool same = false;
    rc = same_host(w, &same);
    if (rc == MPI_SUCCESS && !same) {
        win_destroy(w);
        return pm_error(comm, MPI_ERR_RMA_SHARED,
                        "%s: the processes of the communicator are not all on one host", fn);
    }
    if (rc == MPI_SUCCESS)
        rc = map_shared(w, size);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return pm_error(comm, rc, "%s: cannot map a shared segment of the window", fn);
    }
    w->base = size ? pm_win_shm_addr(w, w->rank, 0) : NULL;
    w->direct = rma_shm_wanted(w, &rc);
    if (rc != MPI_SUCCESS) {
        win_destroy(w);
        return pm_error(comm, rc, "%s: the processes could not agree on the window", fn);
    }
    w->win_size = size;
    w->disp_unit = disp_unit;
    rc = win_publish(comm, w, fn, win);
    if (rc == MPI_SUCCESS)
        *(void **)baseptr = w->base;
    return rc;
}

static int win_shared_query(const char *fn, MPI_Win win, int rank, MPI_Aint *size,
                            MPI_Aint *disp_unit, void *baseptr)
{
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return pm_win_error(win, MPI_ERR_RMA_FLAVOR,
                            "%s: a dynamic window has no memory to query", fn);
    if (!size || !disp_unit || !baseptr)
        return pm_win_error(win, MPI_ERR_ARG, "%s: a NULL output argument", fn);
    if (rank == MPI_PROC_NULL) {
        /* the first rank with memory (MPI-3.1 §11.2.3) */
        rank = 0;
        while (rank < w->size - 1 && w->sizes[rank] == 0)
            rank++;
    } else if (rank < 0 || rank >= w->size) {
        return pm_win_error(win, MPI_ERR_RANK, "%s: invalid rank %d (window of %d)", fn, rank,
                            w->size);
    }
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && !w->direct) {
        /* MPI-4.1: any window; only the caller's own memory is reachable
         * with loads and stores, the others' answer size 0 and NULL */
        bool mine = rank == w->rank && w->sizes[rank] > 0;
        *size = mine ? w->sizes[rank] : 0;
        *disp_unit = w->disp_units[rank];
        *(void **)baseptr = mine ? w->base : NULL;
        return MPI_SUCCESS;
    }
    *size = w->sizes[rank];
    *disp_unit = w->disp_units[rank];
    *(void **)baseptr = w->sizes[rank] ? pm_win_shm_addr(w, rank, 0) : NULL;
    return MPI_SUCCESS;
}

/* Each entry point and its _c twin (MPI_Aint displacement units). */
#define PM_WIN_API(SUF, UT)                                                                   \
    int PMPI_Win_create##SUF(void *base, MPI_Aint size, UT disp_unit, MPI_Info info,          \
                             MPI_Comm comm, MPI_Win *win)                                     \
    {                                                                                         \
        return win_create("MPI_Win_create" #SUF, base, size, disp_unit, info, comm, win);     \
    }                                                                                         \
    PM_WEAK(Win_create##SUF)                                                                  \
                                                                                              \
    int PMPI_Win_allocate##SUF(MPI_Aint size, UT disp_unit, MPI_Info info, MPI_Comm comm,     \
                               void *baseptr, MPI_Win *win)                                   \
    {                                                                                         \
        return win_allocate("MPI_Win_allocate" #SUF, size, disp_unit, info, comm, baseptr,    \
                            win);                                                             \
    }                                                                                         \
    PM_WEAK(Win_allocate##SUF)                                                                \
                                                                                              \
    int PMPI_Win_allocate_shared##SUF(MPI_Aint size, UT disp_unit, MPI_Info info,             \
                                      MPI_Comm comm, void *baseptr, MPI_Win *win)             \
    {                                                                                         \
        return win_allocate_shared("MPI_Win_allocate_shared" #SUF, size, disp_unit, info,     \
                                   comm, baseptr, win);                                       \
    }                                                                                         \
    PM_WEAK(Win_allocate_shared##SUF)

PM_WIN_API(, int)
PM_WIN_API(_c, MPI_Aint)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint unit;
    int rc = win_shared_query("MPI_Win_shared_query", win, rank, size, disp_unit ? &unit : NULL,
                              baseptr);
    if (rc == MPI_SUCCESS) /* a unit set with a _c call */
        *disp_unit = pm_int_or_undefined(unit);
    return rc;
}
PM_WEAK(Win_shared_query)

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    return win_shared_query("MPI_Win_shared_query_c", win, rank, size, disp_unit, baseptr);
}
PM_WEAK(Win_shared_query_c)

/* ---- Dynamic windows ------------------------------------------------------ */

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char fn[] = "MPI_Win_attach";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return pm_win_error(win, MPI_ERR_RMA_FLAVOR,
                            "%s: the window was not made by MPI_Win_create_dynamic", fn);
    if (size < 0)
        return pm_win_error(win, MPI_ERR_SIZE, "%s: negative size %td", fn, size);
    if (!base && size > 0)
        return pm_win_error(win, MPI_ERR_ARG, "%s: NULL base", fn);
    pthread_mutex_lock(&w->lock);
    uintptr_t b = (uintptr_t)base;
    for (int i = 0; i < w->nregions; i++) {
        const struct pm_win_region *r = &w->regions[i];
        if (b < r->base + r->size && r->base < b + (size_t)size) {
            pthread_mutex_unlock(&w->lock);
            return pm_win_error(win, MPI_ERR_RMA_ATTACH,
                                "%s: [%p, +%td) overlaps a region already attached", fn, base,
                                size);
        }
    }
    if (w->nregions == w->cap_regions) {
        int cap = w->cap_regions ? 2 * w->cap_regions : 8;
        struct pm_win_region *n = realloc(w->regions, (size_t)cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&w->lock);
            return pm_win_error(win, MPI_ERR_NO_MEM, "%s: out of memory", fn);
        }
        w->regions = n;
        w->cap_regions = cap;
    }
    w->regions[w->nregions++] = (struct pm_win_region){b, (size_t)size};
    pthread_mutex_unlock(&w->lock);
    return MPI_SUCCESS;
}
PM_WEAK(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char fn[] = "MPI_Win_detach";
    PM_CHECK_INIT(fn);
    PM_GET_WIN(w, win, fn);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return pm_win_error(win, MPI_ERR_RMA_FLAVOR,
                            "%s: the window was not made by MPI_Win_create_dynamic", fn);
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < w->nregions; i++) {
        if (w->regions[i].base == (uintptr_t)base) {
            w->regions[i] = w->regions[--w->nregions];
            pthread_mutex_unlock(&w->lock);
            return MPI_SUCCESS;
        }
    }
    pthread_mutex_unlock(&w->lock);
    return pm_win_error(win, MPI_ERR_RMA_ATTACH, "%s: no region attached at %p", fn, base);
}
PM_WEAK(Win_detach)

/* ---- Free ----------------------------------------------------------------- */

int PMPI_Win_free(MPI_Win *win)
{
    static const char fn[] = "MPI_Win_free";
    PM_CHECK_INIT(fn);
    if (!win)
        return pm_error(MPI_COMM_WORLD, MPI_ERR_ARG, "%s: win is NULL", fn);
    PM_GET_WIN(w, *win, fn);
    for (int r = 0; r < w->size; r++)
        if (w->locked[r])
            return pm_win_error(*win, MPI_ERR_RMA_SYNC,
                                "%s: rank %d of the window is still locked", fn, r);
    if (w->lock_all)
        return pm_win_error(*win, MPI_ERR_RMA_SYNC, "%s: a lock_all epoch is still open", fn);
    if (w->access.ranks || w->exposure.ranks)
        return pm_win_error(*win, MPI_ERR_RMA_SYNC,
                            "%s: a post/start epoch is still open", fn);
    pm_rma_wait_local(w, -1);
    int rc = pm_attrs_delete_win(w);
    if (rc != MPI_SUCCESS)
        return pm_win_error(*win, rc, "%s: an attribute delete callback failed (error %d)", fn,
                            rc);
    pm_rma_ports_close(w);
    pm_table_remove(&pm_win_table, w->handle);
    *win = MPI_WIN_NULL;
    win_destroy(w);
    return MPI_SUCCESS;
}
PM_WEAK(Win_free)
