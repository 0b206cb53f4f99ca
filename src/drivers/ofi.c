/*
 * ofi.c — the ofi rail: libfabric, the portable interface to InfiniBand,
 * RoCE, EFA, Slingshot, Omni-Path and (here) tcp. This file picks the
 * provider, opens the endpoint, publishes its address and reads the
 * peers'; ofi_io.c moves the data.
 *
 * The provider: PROUST_OFI_PROVIDER names one (its full name,
 * "tcp;ofi_rxm", or its first part, "tcp"), else the best one present that
 * offers reliable datagrams with messages and RMA, in the order of
 * `preferred` below. sockets and bare udp (slow, for testing) and shm
 * (one host; Proust's own shm rail is faster) are taken only when named.
 * Among its domains, a loopback one only if nothing else is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "drivers/ofi.h"
#include "proust.h"

#define OFI_VERSION FI_VERSION(1, 10)
#define OFI_CARD_MAX 256 /* an endpoint address, as published */

/* auto: the best first; a provider not listed comes after these */
static const char *const preferred[] = {"cxi",           "efa",          "opx",
                                        "psm3",          "psm2",         "verbs;ofi_rxm",
                                        "tcp;ofi_rxm",   "net;ofi_rxm",  "ucx",
                                        "udp;ofi_rxd",   NULL};
static const char *const named_only[] = {"sockets", "udp", "shm", NULL};

static struct fi_info *make_hints(void)
{
    struct fi_info *h = proust__ofi.dupinfo(NULL);
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | FI_RMA;
    h->mode = FI_CONTEXT;
    /* everything verbs and efa may ask for, which we honour (ofi_io.c) */
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                              FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_SAFE;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    return h;
}

static bool in_list(const char *const *list, const char *name)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* Does the user's name (full, or the first part) name this provider? */
static bool names(const char *want, const char *prov)
{
    size_t n = strcspn(prov, ";");
    return strcmp(want, prov) == 0 || (strlen(want) == n && strncmp(want, prov, n) == 0);
}

static int rank_of(const char *prov)
{
    int i = 0;
    for (; preferred[i]; i++)
        if (strcmp(preferred[i], prov) == 0)
            return i;
    return i; /* unknown providers after the known ones */
}

static bool loopback(const struct fi_info *fi)
{
    return fi->domain_attr->name && strcmp(fi->domain_attr->name, "lo") == 0;
}

/* A virtual bridge is no NIC (a Linux bridge, docker*, virbr*: as the tcp
 * rail's rule); one that comes and goes while a job starts would also
 * give its ranks different domains. */
static bool bridge(const struct fi_info *fi)
{
    const char *n = fi->domain_attr->name;
    if (!n || strchr(n, '/'))
        return false;
    char path[128];
    snprintf(path, sizeof path, "/sys/class/net/%s/bridge", n);
    return strncmp(n, "docker", 6) == 0 || strncmp(n, "virbr", 5) == 0 ||
           access(path, F_OK) == 0;
}

/* Is a better than b (same provider rank)? A real interface before a
 * bridge before loopback, IPv4 before the rest, then the provider's own
 * order. */
static bool better_domain(const struct fi_info *a, const struct fi_info *b)
{
    if (loopback(a) != loopback(b))
        return !loopback(a);
    if (bridge(a) != bridge(b))
        return !bridge(a);
    bool a4 = a->addr_format == FI_SOCKADDR_IN, b4 = b->addr_format == FI_SOCKADDR_IN;
    return a4 && !b4;
}

/* Pick from the providers present; the chosen one is duplicated. */
static struct fi_info *choose(struct fi_info *list, const char *want, char *why, size_t cap)
{
    bool any = strcmp(want, "auto") == 0 || want[0] == '\0';
    struct fi_info *best = NULL;
    int best_rank = 0;
    for (struct fi_info *fi = list; fi; fi = fi->next) {
        const char *prov = fi->fabric_attr->prov_name;
        if (!prov)
            continue;
        int r;
        if (any) {
            if (in_list(named_only, prov))
                continue;
            r = rank_of(prov);
        } else {
            if (!names(want, prov))
                continue;
            r = strcmp(want, prov) == 0 ? 0 : 1;
        }
        if (!best || r < best_rank || (r == best_rank && better_domain(fi, best))) {
            best = fi;
            best_rank = r;
        }
    }
    if (!best)
        return NULL;
    snprintf(why, cap, "%s, domain %s (%s)", best->fabric_attr->prov_name,
             best->domain_attr->name ? best->domain_attr->name : "?",
             any ? "the best provider present with reliable datagrams, messages and RMA"
                 : "named by PROUST_OFI_PROVIDER");
    return proust__ofi.dupinfo(best);
}

static bool same_str(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* The chosen provider and domain again, with atomics if they have them
 * (asked apart: a provider without atomics must still be chosen), ordered
 * as MPI's accumulates want if it can; else `pick` unchanged. */
static struct fi_info *with_atomics(struct fi_info *pick)
{
    const uint64_t ordered = FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR |
                             FI_ORDER_ATOMIC_WAW;
    for (int attempt = 0; attempt < 2; attempt++) {
        struct fi_info *hints = make_hints(), *list = NULL, *found = NULL;
        if (!hints)
            return pick;
        hints->caps |= FI_ATOMIC;
        if (attempt == 0)
            hints->tx_attr->msg_order |= ordered;
        hints->fabric_attr->prov_name = strdup(pick->fabric_attr->prov_name);
        int rc = proust__ofi.getinfo(OFI_VERSION, NULL, NULL, 0, hints, &list);
        proust__ofi.freeinfo(hints);
        for (struct fi_info *fi = rc == 0 ? list : NULL; fi && !found; fi = fi->next)
            if (same_str(fi->fabric_attr->prov_name, pick->fabric_attr->prov_name) &&
                same_str(fi->domain_attr->name, pick->domain_attr->name) &&
                same_str(fi->fabric_attr->name, pick->fabric_attr->name) &&
                fi->addr_format == pick->addr_format && (fi->caps & FI_ATOMIC))
                found = fi;
        struct fi_info *dup = found ? proust__ofi.dupinfo(found) : NULL;
        if (list)
            proust__ofi.freeinfo(list);
        if (dup) {
            proust__ofi.freeinfo(pick);
            return dup;
        }
    }
    return pick;
}

static struct fi_info *list_providers(void)
{
    if (proust__ofi_load() != PROUST_OK)
        return NULL;
    struct fi_info *hints = make_hints(), *list = NULL;
    if (!hints)
        return NULL;
    int rc = proust__ofi.getinfo(OFI_VERSION, NULL, NULL, 0, hints, &list);
    proust__ofi.freeinfo(hints);
    return rc == 0 ? list : NULL;
}

size_t proust__ofi_describe(char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    struct fi_info *list = list_providers();
    if (!list)
        return (size_t)snprintf(out, cap, "no libfabric provider with reliable datagrams, "
                                          "messages and RMA\n");
    char why[160];
    struct fi_info *pick = choose(list, proust__config_str(PROUST_CFG_OFI_PROVIDER), why,
                                  sizeof why);
    char seen[1024] = "";
    for (struct fi_info *fi = list; fi && n < cap; fi = fi->next) {
        const char *prov = fi->fabric_attr->prov_name;
        if (!prov || strstr(seen, prov)) /* one line per provider */
            continue;
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s|", prov);
        n += (size_t)snprintf(out + n, cap - n, "  %-14s%s\n", prov,
                              in_list(named_only, prov) ? " (only when named)" : "");
    }
    if (n < cap)
        n += (size_t)snprintf(out + n, cap - n, "  chosen: %s\n", pick ? why : "none");
    proust__ofi.freeinfo(pick);
    proust__ofi.freeinfo(list);
    return n < cap ? n : cap - 1;
}

/* The NIC as placement wants it: its PCI address, else the OS name of
 * the domain (an interface: tcp). */
static void note_device(struct ofi_rail *o)
{
    const struct fid_nic *nic = o->info->nic;
    if (nic && nic->bus_attr && nic->bus_attr->bus_type == FI_BUS_PCI) {
        const struct fi_pci_attr *p = &nic->bus_attr->attr.pci;
        snprintf(o->device, sizeof o->device, "pci=%04x:%02x:%02x.%x", p->domain_id, p->bus_id,
                 p->device_id, p->function_id);
    } else if (o->info->domain_attr->name) {
        snprintf(o->device, sizeof o->device, "%s", o->info->domain_attr->name);
    }
}

static int fail(const char *what, int rc)
{
    PROUST_WARN("ofi: %s: %s", what, proust__ofi.strerror(-rc));
    return PROUST_ERR_SYS;
}

/* The fd blocking waits sleep on (ofi_arm): the completion queue's wait
 * fd and our eventfd in one epoll set; none if the provider has no fd. */
static void open_wait_set(struct ofi_rail *o)
{
    int cqfd = -1;
    if (fi_control(&o->cq->fid, FI_GETWAIT, &cqfd) != 0 || cqfd < 0)
        return;
    o->epfd = epoll_create1(EPOLL_CLOEXEC);
    o->kickfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event a = {.events = EPOLLIN}, b = {.events = EPOLLIN};
    if (o->epfd < 0 || o->kickfd < 0 || epoll_ctl(o->epfd, EPOLL_CTL_ADD, cqfd, &a) != 0 ||
        epoll_ctl(o->epfd, EPOLL_CTL_ADD, o->kickfd, &b) != 0) {
        if (o->epfd >= 0)
            close(o->epfd);
        if (o->kickfd >= 0)
            close(o->kickfd);
        o->epfd = o->kickfd = -1;
    }
}

static int open_endpoint(struct ofi_rail *o)
{
    int rc;
    if ((rc = proust__ofi.fabric(o->info->fabric_attr, &o->fabric, NULL)))
        return fail("fi_fabric", rc);
    if ((rc = fi_domain(o->fabric, o->info, &o->domain, NULL)))
        return fail("fi_domain", rc);
    struct fi_av_attr av = {.type = FI_AV_UNSPEC};
    if ((rc = fi_av_open(o->domain, &av, &o->av, NULL)))
        return fail("fi_av_open", rc);
    /* with a wait fd for blocking waits if the provider has one */
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD, .size = 1024};
    if (fi_cq_open(o->domain, &cq, &o->cq, NULL) != 0) {
        cq.wait_obj = FI_WAIT_NONE;
        if ((rc = fi_cq_open(o->domain, &cq, &o->cq, NULL)))
            return fail("fi_cq_open", rc);
    }
    if ((rc = fi_endpoint(o->domain, o->info, &o->ep, NULL)))
        return fail("fi_endpoint", rc);
    if ((rc = fi_ep_bind(o->ep, &o->av->fid, 0)))
        return fail("fi_ep_bind(av)", rc);
    if ((rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV)))
        return fail("fi_ep_bind(cq)", rc);
    if ((rc = fi_enable(o->ep)))
        return fail("fi_enable", rc);
    open_wait_set(o);
    return PROUST_OK;
}

/* What a peer must have chosen too: provider and fabric. */
static void fabric_id(const struct ofi_rail *o, char *out, size_t cap)
{
    snprintf(out, cap, "%s|%s", o->info->fabric_attr->prov_name,
             o->info->fabric_attr->name ? o->info->fabric_attr->name : "");
}

static void ofi_close(proust__rail_t *rail);

/* Which puts the receiver reads (ofi_pull.c): those of PROUST_OFI_READ_MIN
 * bytes and more, where the provider reads remote memory with keys that
 * fit the 8 bytes a pull carries; the smaller ones are messages. */
static int choose_pull(struct ofi_rail *o)
{
    o->pull_min = 0;
    size_t min = 0;
    if (strcmp(proust__config_str(PROUST_CFG_OFI_READ_MIN), "off") == 0)
        min = SIZE_MAX;
    else if (proust__config_size(PROUST_CFG_OFI_READ_MIN, &min) != PROUST_OK)
        return PROUST_ERR_INVALID;
    const struct fi_domain_attr *d = o->info->domain_attr;
    bool can = (o->info->caps & FI_RMA) && d->mr_key_size <= sizeof(uint64_t) &&
               !(d->mr_mode & FI_MR_RAW);
    o->rma_ok = can; /* one-sided access for proust_rma_* and MPI windows */
    if (!can || min == SIZE_MAX)
        return PROUST_OK;
    if (min == 0)
        min = OFI_READ_MIN;
    o->pull_min = min;
    return PROUST_OK;
}

static int ofi_open(proust__rail_t *rail)
{
    struct ofi_rail *o = calloc(1, sizeof *o);
    if (!o)
        return PROUST_ERR_NOMEM;
    rail->priv = o;
    o->rank = rail->boot->rank;
    o->size = rail->boot->size;
    proust__lock_init(&o->send_lock);
    proust__lock_init(&o->fi_lock);
    proust__lock_init(&o->flight_lock);
    proust__lock_init(&o->expose_lock);
    proust__lock_init(&o->stash_lock);
    proust__lock_init(&o->rma_lock);
    o->write_flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
    o->epfd = o->kickfd = -1;
    struct fi_info *list = list_providers();
    bool any = list != NULL;
    const char *want = proust__config_str(PROUST_CFG_OFI_PROVIDER);
    o->info = list ? choose(list, want, o->why, sizeof o->why) : NULL;
    proust__ofi.freeinfo(list);
    if (o->info)
        o->info = with_atomics(o->info);
    if (!o->info) {
        PROUST_WARN("ofi: no usable libfabric provider%s (PROUST_OFI_PROVIDER=%s): the next "
                    "rail of PROUST_RAILS carries the traffic",
                    any ? " of that name" : " at all", want);
        ofi_close(rail);
        return PROUST_ERR_NOT_SUPPORTED;
    }
    if (open_endpoint(o) != PROUST_OK) {
        PROUST_WARN("ofi: provider %s is not usable here: the next rail of PROUST_RAILS "
                    "carries the traffic", o->info->fabric_attr->prov_name);
        ofi_close(rail);
        return PROUST_ERR_NOT_SUPPORTED;
    }
    int rc;
    note_device(o);
    o->mr_local = (o->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    o->inject_max = o->info->tx_attr->inject_size;
    o->zc_puts = !o->mr_local && o->info->tx_attr->iov_limit >= 2;
    char card[OFI_CARD_MAX], fid[256];
    o->addrlen = sizeof card;
    if ((rc = fi_getname(&o->ep->fid, card, &o->addrlen))) {
        ofi_close(rail);
        return fail("fi_getname", rc);
    }
    fabric_id(o, fid, sizeof fid);
    if ((rc = rail->boot->ops->put(rail->boot, "ofi.addr", card, o->addrlen)) != PROUST_OK ||
        (rc = rail->boot->ops->put(rail->boot, "ofi.fabric", fid, strlen(fid) + 1)) !=
            PROUST_OK) {
        ofi_close(rail);
        return rc;
    }
    size_t room = OFI_BUF_SIZE - sizeof(struct ofi_hdr);
    if ((rc = choose_pull(o)) != PROUST_OK || (rc = proust__ofi_ring_config(o)) != PROUST_OK) {
        ofi_close(rail);
        return rc;
    }
    size_t fragment = room;
    if (o->pull_min) {
        size_t max_msg = o->info->ep_attr->max_msg_size;
        fragment = max_msg < OFI_PULL_FRAGMENT ? max_msg : OFI_PULL_FRAGMENT;
    }
    rail->caps = (struct proust__rail_caps){
        .max_iov = OFI_MAX_IOV,
        .max_packet = room,
        .rdv_threshold = OFI_RDV_THRESHOLD,
        .put_fragment = fragment,
        .latency_us = OFI_LATENCY_US,
        .bandwidth_gbs = OFI_BANDWIDTH_GBS,
        .flags = (o->info->domain_attr->data_progress == FI_PROGRESS_AUTO
                      ? 0u
                      : PROUST__RAIL_POLL_TO_MOVE | PROUST__RAIL_GET_WHILE_WAITED) |
                 (o->epfd >= 0 ? PROUST__RAIL_HAS_FD : 0u),
    };
    if (o->pull_min) { /* the RTS of a large send carries a key: the receiver reads it */
        rail->caps.flags |= PROUST__RAIL_CAN_GET;
        rail->caps.get_threshold = o->pull_min;
    }
    if (o->rma_ok) {
        size_t max = 0;
        if (proust__config_size(PROUST_CFG_OFI_RMA_MAX, &max) != PROUST_OK) {
            ofi_close(rail);
            return PROUST_ERR_INVALID;
        }
        size_t limit = o->info->ep_attr->max_msg_size;
        rail->caps.flags |= PROUST__RAIL_CAN_RMA;
        rail->caps.rma_max = max && max < limit ? max : limit;
        proust__ofi_atomic_probe(o);
        if (o->atomic_ok)
            rail->caps.flags |= PROUST__RAIL_CAN_ATOMIC |
                                (o->atomic_ordered ? PROUST__RAIL_ATOMIC_ORDERED : 0u);
    }
    PROUST_INFO("ofi: %s", o->why);
    return PROUST_OK;
}

static size_t ofi_explain(proust__rail_t *rail, char *out, size_t cap)
{
    struct ofi_rail *o = rail->priv;
    const char *eager = getenv("FI_OFI_RXM_EAGER_LIMIT");
    int n;
    if (o->pull_min)
        n = snprintf(out, cap,
                     "provider %s\nrendezvous pieces of %zu B and more are read by the receiver "
                     "(fi_read) from the sender's memory, %zu B a piece; smaller ones are "
                     "messages (PROUST_OFI_READ_MIN=%s)\nmessages up to %zu B are injected "
                     "(copied by the provider at once); ofi_rxm sends messages up to %s B "
                     "at once (FI_OFI_RXM_EAGER_LIMIT)\n",
                     o->why, o->pull_min, rail->caps.put_fragment,
                     proust__config_str(PROUST_CFG_OFI_READ_MIN), o->inject_max,
                     eager ? eager : "?");
    else
        n = snprintf(out, cap,
                     "provider %s\nrendezvous data goes as messages (PROUST_OFI_READ_MIN=%s%s)\n",
                     o->why, proust__config_str(PROUST_CFG_OFI_READ_MIN),
                     strcmp(proust__config_str(PROUST_CFG_OFI_READ_MIN), "off") == 0
                         ? ""
                         : "; the provider cannot read remote memory with 8-byte keys");
    size_t used = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    int m = snprintf(out + used, cap - used,
                     o->rma_ok ? "one-sided access (proust_rma_*, MPI_Put/MPI_Get across hosts): "
                                 "remote writes (complete on delivery) and reads\n"
                               : "one-sided access: none (the provider cannot reach remote "
                                 "memory with 8-byte keys)\n");
    used += m < 0 ? 0 : (size_t)m < cap - used ? (size_t)m : cap - used - 1;
    if (o->rma_ok) {
        int ops = 0;
        for (int op = 0; op < PROUST_ATOMIC_OPS; op++)
            for (int t = 0; t < PROUST_ATOMIC_TYPES; t++)
                ops += o->atomic_max[0][op][t] || o->atomic_max[1][op][t] ||
                       o->atomic_max[2][op][t];
        m = o->atomic_ok
                ? snprintf(out + used, cap - used,
                           "atomics (proust_rma_atomic, MPI accumulates across hosts): %d of "
                           "%d operation and type pairs, %s; 64-bit sums of up to %u "
                           "elements a call\n",
                           ops, PROUST_ATOMIC_OPS * PROUST_ATOMIC_TYPES,
                           o->atomic_ordered ? "applied in the order posted"
                                             : "not ordered by the provider (MPI waits for "
                                               "each before the next to a rank)",
                           o->atomic_max[0][PROUST_ATOMIC_SUM][PROUST_ATOMIC_INT64])
                : snprintf(out + used, cap - used, "atomics: none (the provider has none)\n");
        used += m < 0 ? 0 : (size_t)m < cap - used ? (size_t)m : cap - used - 1;
    }
    if (o->ring_on)
        m = snprintf(out + used, cap - used,
                     "slot rings: after %u messages to a peer, at most %u peers, %u slots of %u B "
                     "(%s)\n",
                     o->ring_after, o->ring_peers, o->ring_slots, o->ring_slot, o->ring_why);
    else
        m = snprintf(out + used, cap - used, "slot rings: off (%s)\n", o->ring_why);
    used += m < 0 ? 0 : (size_t)m < cap - used ? (size_t)m : cap - used - 1;
    return used;
}

static int ofi_connect(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    o->peers = calloc((size_t)o->size, sizeof *o->peers);
    o->cards = calloc((size_t)o->size, o->addrlen);
    if (!o->peers || !o->cards)
        return PROUST_ERR_NOMEM;
    char mine[256], theirs[256];
    fabric_id(o, mine, sizeof mine);
    for (int r = 0; r < o->size; r++) {
        struct ofi_peer *p = &o->peers[r];
        atomic_init(&p->addr, FI_ADDR_NOTAVAIL);
        size_t flen = sizeof theirs, alen = o->addrlen;
        if (rail->boot->ops->get(rail->boot, r, "ofi.fabric", theirs, &flen) != PROUST_OK ||
            flen == 0 || theirs[flen - 1] != '\0' || strcmp(theirs, mine) != 0)
            continue; /* another provider or fabric (or none): another rail */
        if (rail->boot->ops->get(rail->boot, r, "ofi.addr", o->cards + (size_t)r * o->addrlen,
                                 &alen) != PROUST_OK ||
            alen != o->addrlen)
            continue;
        p->reachable = true;
    }
    return proust__ofi_post_receives(rail);
}

static int ofi_reaches(proust__rail_t *rail, int peer)
{
    struct ofi_rail *o = rail->priv;
    return o && o->peers && peer >= 0 && peer < o->size && o->peers[peer].reachable;
}

static const char *ofi_device(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    return o && o->device[0] ? o->device : NULL;
}

static int ofi_fd(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    return o ? o->epfd : -1;
}

/* A thread is about to sleep on the fd (level > 0), or is back (0).
 * Sleeping is safe only once fi_trywait says so (it also resets the wait
 * fd); when it says no, our eventfd wakes the sleeper at once and its
 * next pass reads what is there. */
static void ofi_arm(proust__rail_t *rail, int level)
{
    struct ofi_rail *o = rail->priv;
    if (!o || o->epfd < 0)
        return;
    if (level == 0) {
        uint64_t v;
        (void)!read(o->kickfd, &v, sizeof v);
        return;
    }
    struct fid *f = &o->cq->fid;
    proust__lock(&o->fi_lock);
    int rc = fi_trywait(o->fabric, &f, 1);
    proust__unlock(&o->fi_lock);
    if (rc != FI_SUCCESS) {
        uint64_t one = 1;
        (void)!write(o->kickfd, &one, sizeof one);
    }
}

static void close_fid(struct fid *f)
{
    if (f)
        (void)fi_close(f);
}

static void ofi_close(proust__rail_t *rail)
{
    struct ofi_rail *o = rail->priv;
    if (!o)
        return;
    uint64_t ring_out = atomic_load(&o->ring_msgs_out), ring_in = atomic_load(&o->ring_msgs_in);
    if (ring_out || ring_in)
        PROUST_INFO("ofi: slot rings carried %llu messages out, %llu in (%u rings granted, "
                    "%llu write notices)",
                    (unsigned long long)ring_out, (unsigned long long)ring_in, o->nrings_in,
                    (unsigned long long)atomic_load(&o->ring_notices));
    /* the endpoint first: nothing completes into our buffers after it */
    close_fid(o->ep ? &o->ep->fid : NULL);
    PROUST_DEBUG("ofi: %llu puts read by peers, %llu read from peers, %llu gets",
                 (unsigned long long)atomic_load(&o->pulls_sent),
                 (unsigned long long)atomic_load(&o->pulls_read),
                 (unsigned long long)atomic_load(&o->gets_done));
    proust__ofi_pull_close(o);
    proust__ofi_get_close(o);
    proust__ofi_rma_close(o);
    proust__ofi_ring_close(o);
    close_fid(o->recv_mr ? &o->recv_mr->fid : NULL);
    proust__ofi_free_sends(o);
    close_fid(o->cq ? &o->cq->fid : NULL);
    close_fid(o->av ? &o->av->fid : NULL);
    close_fid(o->domain ? &o->domain->fid : NULL);
    close_fid(o->fabric ? &o->fabric->fid : NULL);
    if (o->epfd >= 0)
        close(o->epfd);
    if (o->kickfd >= 0)
        close(o->kickfd);
    if (o->info)
        proust__ofi.freeinfo(o->info);
    free(o->recv_mem);
    for (int r = 0; o->peers && r < o->size; r++)
        while (o->peers[r].early) {
            struct ofi_early *e = o->peers[r].early;
            o->peers[r].early = e->next;
            free(e);
        }
    free(o->peers);
    free(o->cards);
    free(o);
    rail->priv = NULL;
}

const struct proust__rail_ops proust__rail_ofi = {
    .name = "ofi",
    .description = "libfabric reliable datagrams on the provider PROUST_OFI_PROVIDER picks "
                   "(InfiniBand, RoCE, EFA, Slingshot, Omni-Path, tcp); large puts read by "
                   "the receiver (fi_read), others as messages",
    .open = ofi_open,
    .connect = ofi_connect,
    .device = ofi_device,
    .reaches = ofi_reaches,
    .send = proust__ofi_send,
    .put = proust__ofi_put,
    .busy = proust__ofi_busy,
    .flush = proust__ofi_flush,
    .poll = proust__ofi_poll,
    .fd = ofi_fd,
    .arm = ofi_arm,
    .disconnect = proust__ofi_disconnect,
    .close = ofi_close,
    .expose = proust__ofi_expose,
    .unexpose = proust__ofi_unexpose,
    .get = proust__ofi_get,
    .mem_register = proust__ofi_mem_register,
    .mem_release = proust__ofi_mem_release,
    .rma = proust__ofi_rma,
    .registrations = proust__ofi_registrations,
    .atomic_max = proust__ofi_atomic_max,
    .atomic = proust__ofi_atomic,
    .explain = ofi_explain,
};
