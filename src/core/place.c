/*
 * Placement at init (topology/placement.h decides, this file applies):
 * after the rails opened (the tcp rail knows its interface) and before they
 * connect (receive rings and staging buffers do not exist yet), bind the
 * process, remember the progress threads' cpusets, and bind each rail's
 * buffers through the place_memory upcall.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/config.h"
#include "common/log.h"
#include "core/place.h"
#include "core/session.h"

/* proust_placement_hint() before init; frozen while a session is being
 * made or runs. A mutex: the check and the store go together. */
static pthread_mutex_t hint_lock = PTHREAD_MUTEX_INITIALIZER;
static int api_hint = -1;
static bool hint_frozen;

int proust_placement_hint(const char *hint)
{
    int h = proust__place_hint_parse(hint);
    if (h < 0)
        return PROUST_ERR_INVALID;
    pthread_mutex_lock(&hint_lock);
    int rc = hint_frozen ? PROUST_ERR_STATE : PROUST_OK;
    if (rc == PROUST_OK)
        api_hint = h;
    pthread_mutex_unlock(&hint_lock);
    return rc;
}

/* freeze the hint and read it (-1: none given) */
static int freeze_hint(bool freeze)
{
    pthread_mutex_lock(&hint_lock);
    hint_frozen = freeze;
    int h = api_hint;
    pthread_mutex_unlock(&hint_lock);
    return h;
}

static int threads_wanted(void)
{
    long want = 0;
    proust__config_long(PROUST_CFG_PROGRESS_THREADS, &want);
    if (want <= 0)
        return 0;
    return want > PROUST__PLACE_MAX_THREADS ? PROUST__PLACE_MAX_THREADS : (int)want;
}

/* NUMA nodes the kernel shows; 0 if it does not say */
static int sysfs_numa_nodes(void)
{
    DIR *d = opendir("/sys/devices/system/node");
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "node", 4) == 0 && e->d_name[4] >= '0' && e->d_name[4] <= '9')
            n++;
    closedir(d);
    return n;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The rails as placement sees them. */
static int describe_rails(struct proust_session *s, struct proust__place_rail *r)
{
    int n = s->nrails < PROUST__PLACE_MAX_RAILS ? s->nrails : PROUST__PLACE_MAX_RAILS;
    bool shm = false;
    for (int i = 0; i < n; i++)
        shm |= strcmp(s->rails[i].rail.ops->name, "shm") == 0;
    for (int i = 0; i < n; i++) {
        proust__rail_t *rail = &s->rails[i].rail;
        r[i] = (struct proust__place_rail){
            .name = rail->ops->name,
            .device = rail->ops->device ? rail->ops->device(rail) : NULL,
            .latency_us = rail->caps.latency_us,
            .bandwidth_gbs = rail->caps.bandwidth_gbs,
            /* a network rail carries the peers on other hosts, and those
             * of this host when no shm rail does */
            .used = s->boot.size > s->boot.local_size || (!shm && s->boot.local_size > 1) ||
                    s->nrails == 1,
        };
    }
    return n;
}

static int read_choice(int *mode, int *hint, int api)
{
    const char *m = proust__config_str(PROUST_CFG_PLACEMENT);
    *mode = proust__place_mode_parse(m);
    if (*mode < 0) {
        PROUST_ERROR("PROUST_PLACEMENT=%s: expected auto, override or off", m);
        return PROUST_ERR_INVALID;
    }
    *hint = api >= 0 ? api : PROUST__HINT_LATENCY;
    if (proust__config_is_set(PROUST_CFG_PLACEMENT_HINT)) {
        const char *h = proust__config_str(PROUST_CFG_PLACEMENT_HINT);
        *hint = proust__place_hint_parse(h);
        if (*hint < 0) {
            PROUST_ERROR("PROUST_PLACEMENT_HINT=%s: expected latency, bandwidth or cores", h);
            return PROUST_ERR_INVALID;
        }
    }
    return PROUST_OK;
}

/* No topology needed: placement off, or one NUMA node (nothing is nearer
 * than anything else; loading hwloc would only cost init time). */
static void trivial(struct proust_session *s, int mode, int hint, const char *why)
{
    struct proust__placement *p = &s->place;
    memset(p, 0, sizeof *p);
    p->mode = (enum proust__place_mode)mode;
    p->hint = (enum proust__place_hint)hint;
    p->deciding_rail = -1;
    p->nthreads = threads_wanted() ? threads_wanted() : 1;
    snprintf(p->reasons, sizeof p->reasons, "%s: nothing bound; progress threads run where "
             "the process runs\n", why);
}

/* Bind the process; the binding it had comes back at finalize. */
static void apply(struct proust_session *s, hwloc_const_cpuset_t before)
{
    if (!s->topo.this_system || !s->place.process)
        return;
    if (hwloc_set_cpubind(s->topo.h, s->place.process, HWLOC_CPUBIND_PROCESS) != 0) {
        PROUST_WARN("placement: cannot bind the process: %s", strerror(errno));
        return;
    }
    s->place_restore = before ? hwloc_bitmap_dup(before) : NULL;
}

int proust__place_init(struct proust_session *s)
{
    double t0 = now_ms();
    int mode, hint;
    int rc = read_choice(&mode, &hint, freeze_hint(true));
    if (rc != PROUST_OK)
        return rc;
    const char *xml = proust__config_str(PROUST_CFG_TOPOLOGY);
    if (mode == PROUST__PLACE_OFF) {
        trivial(s, mode, hint, "PROUST_PLACEMENT=off");
    } else if (!xml[0] && sysfs_numa_nodes() == 1) {
        trivial(s, mode, hint, "one NUMA node");
    } else {
        /* an XML file is cheap to read whole; this machine without I/O
         * objects (device locality comes from sysfs) */
        if ((rc = proust__topo_load(&s->topo, xml, xml[0] != 0)) != PROUST_OK)
            return rc;
        struct proust__place_rail rails[PROUST__PLACE_MAX_RAILS];
        /* STRICT: threads the application bound one by one (EXDEV) are a
         * user binding too; their union is where the process may run */
        hwloc_bitmap_t binding = hwloc_bitmap_alloc();
        bool bound = false, per_thread = false;
        if (s->topo.this_system && binding) {
            bound = hwloc_get_cpubind(s->topo.h, binding,
                                      HWLOC_CPUBIND_PROCESS | HWLOC_CPUBIND_STRICT) == 0;
            if (!bound && errno == EXDEV) {
                per_thread = true;
                bound = hwloc_get_cpubind(s->topo.h, binding, HWLOC_CPUBIND_PROCESS) == 0;
            }
        }
        struct proust__place_input in = {
            .topo = &s->topo,
            .rails = rails,
            .nrails = describe_rails(s, rails),
            .mode = (enum proust__place_mode)mode,
            .hint = (enum proust__place_hint)hint,
            .binding = bound ? binding : NULL,
            .threads_bound = per_thread,
            .local_rank = s->boot.local_rank,
            .local_size = s->boot.local_size,
            .threads_wanted = threads_wanted(),
        };
        rc = proust__place_decide(&in, &s->place);
        if (rc == PROUST_OK)
            apply(s, bound ? binding : NULL);
        hwloc_bitmap_free(binding);
        if (rc != PROUST_OK) {
            proust__place_free(&s->place);
            return rc;
        }
    }
    s->placed = true;
    s->place_threads = s->place.nthreads;
    if (s->topo.h && !s->topo.this_system) /* another machine's decision */
        s->place_threads = threads_wanted() ? threads_wanted() : 1;
    s->place_ms = now_ms() - t0;
    PROUST_DEBUG("placement decided in %.2f ms:\n%s", s->place_ms, s->place.reasons);
    return PROUST_OK;
}

void proust__place_destroy(struct proust_session *s)
{
    /* the process leaves with the binding it came with */
    if (s->place_restore && s->topo.h &&
        hwloc_set_cpubind(s->topo.h, s->place_restore, HWLOC_CPUBIND_PROCESS) != 0)
        PROUST_DEBUG("placement: cannot restore the binding: %s", strerror(errno));
    hwloc_bitmap_free(s->place_restore);
    s->place_restore = NULL;
    if (s->placed)
        proust__place_free(&s->place);
    s->placed = false;
    proust__topo_unload(&s->topo);
    freeze_hint(false);
}

void proust__place_memory(void *engine, int rail_index, void *addr, size_t len)
{
    struct proust_session *s = engine;
    if (!s->placed || !s->topo.h || !s->topo.this_system || rail_index < 0 ||
        rail_index >= PROUST__PLACE_MAX_RAILS || !s->place.memory[rail_index])
        return;
    if (hwloc_set_area_membind(s->topo.h, addr, len, s->place.memory[rail_index],
                               HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) != 0)
        PROUST_DEBUG("placement: cannot bind %zu bytes of %s buffers: %s", len,
                     s->rails[rail_index].rail.ops->name, strerror(errno));
}

int proust_placement_describe(const proust_session_t *s, char *buf, size_t len)
{
    if (!s || !s->placed)
        return PROUST_ERR_STATE;
    if (!buf && len)
        return PROUST_ERR_INVALID;
    struct proust__place_rail rails[PROUST__PLACE_MAX_RAILS];
    int n = describe_rails((struct proust_session *)s, rails);
    char tmp[4096];
    proust__place_describe(&s->topo, &s->place, rails, n, tmp, sizeof tmp);
    return snprintf(buf, len, "%s  decided in %.2f ms\n", tmp, s->place_ms);
}
