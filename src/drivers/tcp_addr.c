/*
 * tcp_addr.c — which addresses the tcp rail listens on and publishes, and
 * which of a peer's it dials.
 *
 * A process listens on every address (unless PROUST_TCP_ADDR names one)
 * and publishes the usable ones: "*a.b.c.d,e.f.g.h:port", the star saying
 * that loopback answers too. Usable: up, IPv4, and by default neither
 * loopback nor a virtual bridge (docker*, virbr*: the same addresses on
 * every host, so they would lead to the wrong one); PROUST_TCP_IF_INCLUDE
 * keeps only what it names, PROUST_TCP_IF_EXCLUDE drops what it names
 * (interface names or CIDR blocks, comma-separated). A peer on the same
 * host (same host identity) is dialled on 127.0.0.1; another one on its
 * first address in a network of one of ours, else its first address.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/log.h"
#include "drivers/tcp.h"
#include "proust.h"

/* Does one item of a list (an interface name, or a CIDR block) name this
 * interface or address? */
static bool item_names(const char *item, const char *ifname, struct in_addr a)
{
    const char *slash = strchr(item, '/');
    if (!slash)
        return strcmp(item, ifname) == 0;
    char net[INET_ADDRSTRLEN];
    size_t n = (size_t)(slash - item);
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    struct in_addr base;
    if (n >= sizeof net || *end || bits < 0 || bits > 32)
        return false;
    memcpy(net, item, n);
    net[n] = '\0';
    if (inet_pton(AF_INET, net, &base) != 1)
        return false;
    uint32_t mask = bits ? htonl(~0u << (32 - bits)) : 0;
    return (a.s_addr & mask) == (base.s_addr & mask);
}

static bool list_names(const char *list, const char *ifname, struct in_addr a)
{
    char item[128];
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n && n < sizeof item) {
            memcpy(item, p, n);
            item[n] = '\0';
            if (item_names(item, ifname, a))
                return true;
        }
        p += n + (p[n] == ',');
    }
    return false;
}

static bool usable(const struct ifaddrs *i)
{
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
        return false;
    struct in_addr a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
    const char *inc = proust__config_str(PROUST_CFG_TCP_IF_INCLUDE);
    const char *exc = proust__config_str(PROUST_CFG_TCP_IF_EXCLUDE);
    if (inc[0])
        return list_names(inc, i->ifa_name, a);
    if ((i->ifa_flags & IFF_LOOPBACK) || strncmp(i->ifa_name, "docker", 6) == 0 ||
        strncmp(i->ifa_name, "virbr", 5) == 0)
        return false;
    return !(exc[0] && list_names(exc, i->ifa_name, a));
}

/* PROUST_TCP_ADDR: an IPv4 address, or an interface that has one. */
static int named_addr(const char *want, struct in_addr *out, char *ifname, size_t iflen)
{
    ifname[0] = '\0';
    struct ifaddrs *ifs = NULL;
    bool is_addr = inet_pton(AF_INET, want, out) == 1;
    if (getifaddrs(&ifs) != 0) {
        if (is_addr)
            return PROUST_OK;
        PROUST_ERROR("tcp: PROUST_TCP_ADDR=%s: cannot list interfaces", want);
        return PROUST_ERR_SYS;
    }
    bool found = is_addr;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
            continue;
        struct in_addr a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
        if (is_addr ? a.s_addr == out->s_addr : strcmp(i->ifa_name, want) == 0) {
            *out = a;
            snprintf(ifname, iflen, "%s", i->ifa_name);
            found = true;
            break;
        }
    }
    freeifaddrs(ifs);
    if (!found) {
        PROUST_ERROR("tcp: PROUST_TCP_ADDR=%s is neither an IPv4 address nor an interface "
                     "with one", want);
        return PROUST_ERR_INVALID;
    }
    return PROUST_OK;
}

int proust__tcp_bind_addr(struct in_addr *out, bool *any, char *ifname, size_t iflen)
{
    const char *want = proust__config_str(PROUST_CFG_TCP_ADDR);
    if (want[0]) {
        *any = false;
        return named_addr(want, out, ifname, iflen);
    }
    *any = true;
    out->s_addr = htonl(INADDR_ANY);
    ifname[0] = '\0';
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i && !ifname[0]; i = i->ifa_next)
            if (usable(i)) /* the NIC placement looks for */
                snprintf(ifname, iflen, "%s", i->ifa_name);
        freeifaddrs(ifs);
    }
    return PROUST_OK;
}

void proust__tcp_describe(char *out, size_t len, bool any, struct in_addr bound, unsigned port)
{
    size_t n = 0;
    char a[INET_ADDRSTRLEN];
    if (!any) {
        inet_ntop(AF_INET, &bound, a, sizeof a);
        snprintf(out, len, "%s:%u", a, port);
        return;
    }
    n = (size_t)snprintf(out, len, "*");
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            if (!usable(i))
                continue;
            inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr,
                      a, sizeof a);
            /* room for this one and the port, or stop: the first ones count most */
            if (n + strlen(a) + 8 >= len)
                break;
            n += (size_t)snprintf(out + n, len - n, "%s%s", n > 1 ? "," : "", a);
        }
        freeifaddrs(ifs);
    }
    snprintf(out + n, len - n, ":%u", port);
}

/* Is `a` in a network of one of our usable interfaces? */
static bool on_our_network(struct in_addr a)
{
    struct ifaddrs *ifs = NULL;
    bool yes = false;
    if (getifaddrs(&ifs) != 0)
        return false;
    for (struct ifaddrs *i = ifs; i && !yes; i = i->ifa_next) {
        if (!usable(i) || !i->ifa_netmask)
            continue;
        uint32_t mine = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr;
        uint32_t mask =
            ((const struct sockaddr_in *)(const void *)i->ifa_netmask)->sin_addr.s_addr;
        yes = (mine & mask) == (a.s_addr & mask);
    }
    freeifaddrs(ifs);
    return yes;
}

int proust__tcp_choose(const char *published, bool same_host, struct sockaddr_in *sa,
                       char *shown, size_t shownlen)
{
    const char *colon = strrchr(published, ':');
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || *end || port <= 0 || port > 65535)
        return PROUST_ERR_PROTO;
    bool any = published[0] == '*';
    const char *list = published + any;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    bool chosen = false;
    if (same_host && any) {
        sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        chosen = true;
    }
    /* a peer on our network, else the first it gave */
    for (int pass = 0; pass < 2 && !chosen; pass++) {
        for (const char *p = list; p < colon && !chosen;) {
            size_t n = strcspn(p, ",:");
            char a[INET_ADDRSTRLEN];
            struct in_addr in;
            if (n && n < sizeof a) {
                memcpy(a, p, n);
                a[n] = '\0';
                if (inet_pton(AF_INET, a, &in) != 1)
                    return PROUST_ERR_PROTO;
                if (pass == 1 || on_our_network(in)) {
                    sa->sin_addr = in;
                    chosen = true;
                }
            }
            p += n + (p[n] == ',');
        }
    }
    if (!chosen)
        return PROUST_ERR_CONN; /* listens on loopback only, and is elsewhere */
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, a, sizeof a);
    snprintf(shown, shownlen, "%s:%ld", a, port);
    return PROUST_OK;
}
