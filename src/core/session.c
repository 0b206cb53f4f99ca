/*
 * session.c — proust_init / proust_finalize: read the configuration, reach
 * the launcher, open the rails in PROUST_RAILS order, give every peer a gate
 * on the first rail that reaches it.
 */
#include <sched.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "boot/wire.h"
#include "common/config.h"
#include "common/log.h"
#include "core/gate.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/place.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/rma.h"
#include "core/send.h"
#include "core/session.h"
#include "core/token.h"
#include "core/wait.h"

static _Atomic int initialized;

static const struct proust__rail_ops *const known_rails[] = {
    &proust__rail_self,
    &proust__rail_shm,
    &proust__rail_tcp,
    &proust__rail_ofi,
    NULL,
};

const struct proust__rail_ops *proust__rail_find(const char *name)
{
    for (int i = 0; known_rails[i]; i++)
        if (strcmp(known_rails[i]->name, name) == 0)
            return known_rails[i];
    return NULL;
}

/* PROUST_RAIL_BANDWIDTH ("ofi:11.5,tcp:1.1", GB/s): the bandwidth measured
 * here (bench/ofi/calibrate.sh prints it) replaces the open rail's profile,
 * which split_balance's shares and placement read. */
int proust__rail_apply_profile(proust__rail_t *rail)
{
    const char *text = proust__config_str(PROUST_CFG_RAIL_BANDWIDTH);
    size_t name_len = strlen(rail->ops->name);
    for (const char *p = text; *p;) {
        const char *colon = strchr(p, ':');
        char *end = NULL;
        double gbs = colon ? strtod(colon + 1, &end) : 0;
        if (!colon || end == colon + 1 || !(gbs > 0) || (*end && *end != ',')) {
            PROUST_ERROR("PROUST_RAIL_BANDWIDTH=%s: expected rail:GB/s pairs, comma-separated "
                         "(ofi:11.5,tcp:1.1)",
                         text);
            return PROUST_ERR_INVALID;
        }
        if ((size_t)(colon - p) == name_len && strncmp(p, rail->ops->name, name_len) == 0)
            rail->caps.bandwidth_gbs = gbs;
        p = *end ? end + 1 : end;
    }
    return PROUST_OK;
}

static int open_rails(struct proust_session *s)
{
    char list[256];
    snprintf(list, sizeof list, "%s", proust__config_str(PROUST_CFG_RAILS));
    char *save = NULL;
    for (char *name = strtok_r(list, ", ", &save); name; name = strtok_r(NULL, ", ", &save)) {
        const struct proust__rail_ops *ops = proust__rail_find(name);
        if (!ops) {
            PROUST_ERROR("PROUST_RAILS: unknown rail '%s' (known: self, shm, tcp, ofi)", name);
            return PROUST_ERR_INVALID;
        }
        if (s->nrails == PROUST__MAX_RAILS) {
            PROUST_ERROR("PROUST_RAILS: at most %d rails", PROUST__MAX_RAILS);
            return PROUST_ERR_INVALID;
        }
        struct proust__rail_slot *rs = &s->rails[s->nrails];
        memset(rs, 0, sizeof *rs);
        proust__rail_t *rail = &rs->rail;
        rail->ops = ops;
        rail->boot = &s->boot;
        rail->index = s->nrails;
        rail->up = (struct proust__rail_upcalls){
            .engine = s,
            .packet = proust__on_packet,
            .put_target = proust__on_put_target,
            .put_done = proust__on_put_done,
            .check_peers = proust__rail_check_peers,
            .send_done = proust__on_send_done,
            .rma_done = proust__on_rma_done,
            .peer_failed = proust__on_peer_failed,
            .place_memory = proust__place_memory,
        };
        int rc = ops->open(rail);
        if (rc == PROUST_ERR_NOT_SUPPORTED) { /* it said why: the next rail */
            ops->close(rail);
            continue;
        }
        if (rc != PROUST_OK) {
            PROUST_ERROR("rail %s failed to open: %s", name, proust_strerror(rc));
            ops->close(rail); /* drivers release what a partial open made */
            return rc;
        }
        s->nrails++;
        if ((rc = proust__rail_apply_profile(rail)) != PROUST_OK)
            return rc;
        atomic_init(&rail->packet_ns, proust__packet_ns_prior(rail->caps.latency_us));
    }
    if (s->nrails == 0) {
        PROUST_ERROR("PROUST_RAILS names no rail");
        return PROUST_ERR_INVALID;
    }
    return PROUST_OK;
}

static void close_rails(struct proust_session *s)
{
    for (int i = s->nrails - 1; i >= 0; i--) {
        s->rails[i].rail.ops->close(&s->rails[i].rail);
    }
    s->nrails = 0;
}

static int assign_gates(struct proust_session *s)
{
    for (int peer = 0; peer < s->size; peer++) {
        struct proust__gate *g = &s->gates[peer];
        for (int i = 0; i < s->nrails && !g->rail; i++)
            if (s->rails[i].rail.ops->reaches(&s->rails[i].rail, peer))
                proust__gate_set_rail(s, g, &s->rails[i].rail);
        if (!g->rail) {
            PROUST_ERROR("no rail in PROUST_RAILS=%s reaches rank %d",
                         proust__config_str(PROUST_CFG_RAILS), peer);
            return PROUST_ERR_NO_RAIL;
        }
        s->rails[g->rail->index].ngates++;
        /* a strategy that splits large puts uses every rail to the peer
         * (and every process polls them: the peer splits towards us) */
        for (int i = 0; s->strategy->split && peer != s->rank && i < s->nrails; i++) {
            proust__rail_t *r = &s->rails[i].rail;
            if (r == g->rail || g->nextra == PROUST__GATE_EXTRA_MAX || !r->ops->reaches(r, peer))
                continue;
            g->extra[g->nextra++] = r;
            s->rails[i].ngates++;
        }
    }
    return PROUST_OK;
}

static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The cpus the job has on this node: what the launcher had (ranks it bound
 * one per core each see one), else this process's own. */
static int node_cpus(int mine)
{
    const char *v = getenv(PROUST_ENV_NODE_CPUS);
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    return v && *end == '\0' && n > 0 && n < 1 << 20 ? (int)n : mine;
}

/* A whole-number variable that must lie in [lo, hi]: PROUST_OK, or
 * PROUST_ERR_INVALID with a message naming it. */
static int config_long_between(proust__config_id_t id, const char *name, long lo, long hi, long *out)
{
    if (proust__config_long(id, out) != PROUST_OK)
        return PROUST_ERR_INVALID;
    if (*out < lo || *out > hi) {
        PROUST_ERROR("%s=%ld: expected %ld to %ld", name, *out, lo, hi);
        return PROUST_ERR_INVALID;
    }
    return PROUST_OK;
}

static int read_config(struct proust_session *s)
{
    const char *name = proust__config_str(PROUST_CFG_STRATEGY);
    s->strategy = proust__strategy_find(name);
    if (!s->strategy) {
        PROUST_ERROR("PROUST_STRATEGY=%s is not a strategy (auto, default, aggreg, coalesce, "
                     "split_balance)", name);
        return PROUST_ERR_INVALID;
    }
    long coalesce_ns;
    if (config_long_between(PROUST_CFG_COALESCE_NS, "PROUST_COALESCE_NS", 0, 1000000000,
                            &coalesce_ns) != PROUST_OK)
        return PROUST_ERR_INVALID;
    s->coalesce_ns = (unsigned)coalesce_ns;
    if (proust__config_size(PROUST_CFG_RDV_THRESHOLD, &s->rdv_threshold_override) != PROUST_OK)
        return PROUST_ERR_INVALID;
    if (proust__config_long(PROUST_CFG_PEER_CHECK_MS, &s->peer_check_ms) != PROUST_OK ||
        s->peer_check_ms <= 0)
        return PROUST_ERR_INVALID;
    if (proust__config_size(PROUST_CFG_OFFER_BYTES, &s->offer_bytes) != PROUST_OK)
        return PROUST_ERR_INVALID;
    if (proust__config_size(PROUST_CFG_IDLE_PULL_BYTES, &s->idle_pull_budget) != PROUST_OK)
        return PROUST_ERR_INVALID;
    long stripes;
    if (config_long_between(PROUST_CFG_MATCH_STRIPES, "PROUST_MATCH_STRIPES", 1, 4096,
                            &stripes) != PROUST_OK)
        return PROUST_ERR_INVALID;
    s->nstripes = (int)stripes;
    return PROUST_OK;
}

/* The rails become the progress engine's first sources; then it starts
 * with what the job and placement decided. */
static int start_progress(struct proust_session *s)
{
    int rc = PROUST_OK;
    bool cpu_moved = false;
    for (int i = 0; i < s->nrails && rc == PROUST_OK; i++)
        rc = proust__ptask_add_rail(&s->prog, &s->rails[i].task, &s->rails[i].rail,
                                    s->rails[i].ngates > 0);
    for (int i = 0; i < s->size && !cpu_moved; i++)
        cpu_moved = proust__helper_serves_peer(s, i);
    struct proust__progress_job job = {
        .rank = s->rank,
        .local_size = s->boot.local_size,
        .usable_cores = s->usable_cores,
        .oversubscribed = s->oversubscribed,
        .place = s->placed ? &s->place : NULL,
        .place_threads = s->place_threads,
        .topo = s->topo.h ? &s->topo : NULL,
        .cpu_moved_peers = cpu_moved,
    };
    return rc == PROUST_OK ? proust__progress_start(&s->prog, &job) : rc;
}

int proust_init(proust_session_t **out)
{
    if (!out)
        return PROUST_ERR_INVALID;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&initialized, &expected, 1))
        return PROUST_ERR_STATE;
    proust__log_init();
    proust__config_check_unknown();

    /* members sit on their own cache lines (poll flags): calloc would not
     * align them */
    struct proust_session *s = aligned_alloc(_Alignof(struct proust_session), sizeof *s);
    if (s)
        memset(s, 0, sizeof *s);
    int rc = PROUST_ERR_NOMEM;
    if (!s)
        goto undo_flag;
    proust__lock_init(&s->any_lock);
    proust__requests_init(s);
    proust__lock_init(&s->gets_lock);
    pthread_mutex_init(&s->monitor_lock, NULL);
    if ((rc = read_config(s)) != PROUST_OK)
        goto undo_session;
    if ((rc = proust__progress_init(&s->prog, &proust__core_upcalls, s, s->peer_check_ms)) !=
        PROUST_OK)
        goto undo_progress;
    if ((rc = proust__boot_open(&s->boot)) != PROUST_OK) {
        PROUST_ERROR("cannot reach the launcher: %s", proust_strerror(rc));
        goto undo_progress;
    }
    s->rank = s->boot.rank;
    s->size = s->boot.size;
    s->usable_cores = usable_cores();
    s->node_cpus = node_cpus(s->usable_cores);
    s->oversubscribed = s->boot.local_size > s->node_cpus;
    proust__log_rank = s->rank;
    if ((rc = proust__tokens_init(s)) != PROUST_OK)
        goto undo_boot;
    if ((rc = proust__gates_init(s)) != PROUST_OK)
        goto undo_tokens;
    if ((rc = open_rails(s)) != PROUST_OK)
        goto undo_rails;
    /* before the rails connect: their receive buffers are made there */
    if ((rc = proust__place_init(s)) != PROUST_OK)
        goto undo_rails;
    if ((rc = s->boot.ops->fence(&s->boot)) != PROUST_OK)
        goto undo_rails;
    for (int i = 0; i < s->nrails; i++) {
        if ((rc = s->rails[i].rail.ops->connect(&s->rails[i].rail)) != PROUST_OK) {
            PROUST_ERROR("rail %s failed to connect: %s", s->rails[i].rail.ops->name,
                         proust_strerror(rc));
            goto undo_rails;
        }
    }
    if ((rc = assign_gates(s)) != PROUST_OK)
        goto undo_rails;
    /* every peer is connected before the first message flows */
    if ((rc = s->boot.ops->fence(&s->boot)) != PROUST_OK)
        goto undo_rails;
    atomic_store(&s->active, 1);
    if ((rc = start_progress(s)) != PROUST_OK) {
        atomic_store(&s->active, 0);
        proust__progress_stop(&s->prog);
        goto undo_rails;
    }
    proust__rma_session(s);
    *out = s;
    return PROUST_OK;

    /* each label undoes its step and everything set up before it */
undo_rails:
    close_rails(s);
    proust__gates_destroy(s);
undo_tokens:
    proust__tokens_destroy(s);
undo_boot:
    /* no abort: the caller gets the error; peers waiting in a fence learn
     * from the launcher that this process left */
    proust__boot_close(&s->boot);
undo_progress:
    proust__progress_destroy(&s->prog);
    proust__place_destroy(s);
undo_session:
    pthread_mutex_destroy(&s->monitor_lock);
    proust__requests_destroy(s);
    free(s);
undo_flag:
    atomic_store(&initialized, 0);
    return rc;
}

/* Push out what is still queued, for a bounded time. */
/* Complete what this process still sends (queued packets, rendezvous
 * waiting for the receiver, even for requests the user freed), so that no
 * peer waits for data from a process sitting in the final fence. Bounded:
 * a receiver that never posts the receive only delays us. */
static void drain_sends(struct proust_session *s)
{
    uint64_t deadline = proust__now_ns() + 10ull * 1000000000ull;
    struct proust__waiter w = {0};
    while ((atomic_load(&s->gates_pending) > 0 || atomic_load(&s->sends_waiting) > 0) &&
           proust__now_ns() < deadline) {
        proust__waiter_enter(&s->prog, &w);
        int ev = proust__progress(s);
        proust__run_deferred();
        proust__waiter_idle(&s->prog, &w, ev);
    }
    proust__waiter_end(&s->prog, &w);
    if (atomic_load(&s->sends_waiting) > 0)
        PROUST_WARN("finalize: %d send(s) never matched by their receiver",
                    atomic_load(&s->sends_waiting));
}

/* The final fence, with a thread that keeps polling the rails meanwhile
 * when one needs it (PROUST__RAIL_POLL_TO_MOVE: ofi over tcp moves what
 * it accepted only while polled, and a peer may still be receiving it)
 * and no progress thread does. */
struct fence_poller {
    struct proust_session *s;
    _Atomic int stop;
};

static void *fence_poll_main(void *arg)
{
    struct fence_poller *fp = arg;
    while (!atomic_load_explicit(&fp->stop, memory_order_acquire)) {
        if (proust__progress(fp->s) == 0) {
            struct timespec nap = {0, 50000};
            nanosleep(&nap, NULL);
        }
        proust__run_deferred();
    }
    return NULL;
}

static int final_fence(struct proust_session *s)
{
    bool needed = false;
    for (int i = 0; i < s->nrails; i++)
        needed |= (s->rails[i].rail.caps.flags & PROUST__RAIL_POLL_TO_MOVE) &&
                  s->rails[i].ngates > 0;
    struct fence_poller fp = {.s = s};
    pthread_t th;
    bool started = needed && s->prog.nthreads == 0 &&
                   pthread_create(&th, NULL, fence_poll_main, &fp) == 0;
    int rc = s->boot.ops->fence(&s->boot);
    if (started) {
        atomic_store_explicit(&fp.stop, 1, memory_order_release);
        pthread_join(th, NULL);
    }
    return rc;
}

int proust_finalize(proust_session_t *s)
{
    if (!s || !atomic_load(&s->active))
        return PROUST_ERR_STATE;
    drain_sends(s);
    /* Peers may still be receiving what we sent: leave together. */
    int rc = final_fence(s);
    proust__progress_stop(&s->prog); /* nobody polls the rails from here on */
    atomic_store(&s->active, 0);
    proust__rma_session(NULL);
    /* Incoming messages nobody received are dropped; the memory of every
     * request, waited for or not, goes with the session below. Before the
     * rails close: a pending offered receive gives its claim word back to
     * the rail. */
    proust__offer_uses_forget(s, -1);
    proust__match_lock_all(s);
    proust__recv_cleanup(s);
    proust__match_unlock_all(s);
    close_rails(s);
    proust__gates_destroy(s);
    proust__tokens_destroy(s);
    proust__boot_close(&s->boot);
    proust__progress_destroy(&s->prog);
    proust__place_destroy(s);
    pthread_mutex_destroy(&s->monitor_lock);
    proust__run_deferred(); /* before the requests' memory goes */
    proust__requests_destroy(s);
    free(s);
    atomic_store(&initialized, 0);
    return rc == PROUST_OK ? PROUST_OK : rc;
}

int proust_rank(const proust_session_t *s)
{
    return s ? s->rank : PROUST_ERR_STATE;
}

int proust_peer_status(const proust_session_t *s, int rank)
{
    if (!s)
        return PROUST_ERR_INVALID;
    if (rank < 0 || rank >= s->size)
        return PROUST_ERR_RANK;
    int failed = atomic_load_explicit(&s->gates[rank].failed, memory_order_acquire);
    return failed ? failed : PROUST_OK;
}

int proust_size(const proust_session_t *s)
{
    return s ? s->size : PROUST_ERR_STATE;
}

int proust_node_oversubscribed(const proust_session_t *s)
{
    return s ? (s->oversubscribed ? 1 : 0) : PROUST_ERR_STATE;
}

int proust_node_load(const proust_session_t *s, int *local_ranks, int *cpus)
{
    if (!s)
        return PROUST_ERR_STATE;
    if (!local_ranks || !cpus)
        return PROUST_ERR_INVALID;
    *local_ranks = s->boot.local_size;
    *cpus = s->node_cpus;
    return PROUST_OK;
}

int proust_peer_rail(const proust_session_t *s, int peer, const char **name)
{
    if (!s || !name)
        return PROUST_ERR_INVALID;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    *name = s->gates[peer].rail->ops->name;
    return PROUST_OK;
}

const char *proust_strategy_name(const proust_session_t *s)
{
    return s ? s->strategy->name : NULL;
}

int proust_peer_strategy(const proust_session_t *s, int peer, const char **name,
                         unsigned *packet_ns)
{
    if (!s || !name)
        return PROUST_ERR_INVALID;
    if (peer < 0 || peer >= s->size)
        return PROUST_ERR_RANK;
    const proust__rail_t *rail = s->gates[peer].rail;
    *name = proust__gate_strategy(s, rail)->name;
    if (packet_ns)
        *packet_ns = atomic_load_explicit(&rail->packet_ns, memory_order_relaxed);
    return PROUST_OK;
}

int proust_session_monitor(proust_session_t *s, unsigned events, proust_event_cb_t cb, void *arg)
{
    if (!s)
        return PROUST_ERR_STATE;
    if (events & ~PROUST_EVENT_UNEXPECTED)
        return PROUST_ERR_INVALID;
    pthread_mutex_lock(&s->monitor_lock);
    s->event_cb = cb;
    s->event_arg = arg;
    s->event_mask = cb ? events : 0;
    atomic_store(&s->monitor_wants_unexpected, (s->event_mask & PROUST_EVENT_UNEXPECTED) != 0);
    pthread_mutex_unlock(&s->monitor_lock);
    return PROUST_OK;
}

int proust_abort(proust_session_t *s, int code)
{
    if (!s)
        return PROUST_ERR_STATE;
    char why[64];
    snprintf(why, sizeof why, "rank %d called abort", s->rank);
    s->boot.ops->abort(&s->boot, code, why);
    return PROUST_ERR_STATE; /* not reached: abort does not return */
}
