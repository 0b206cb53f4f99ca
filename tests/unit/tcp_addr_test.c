/*
 * tcp_addr_test — which of a peer's published addresses the tcp rail dials
 * (src/drivers/tcp_addr.c): loopback for a peer on this host that listens
 * everywhere, an address on one of our networks before the others, the
 * first otherwise, nothing for a peer elsewhere that publishes none, and
 * malformed lists refused. PROUST_TCP_IF_INCLUDE=lo makes loopback our one
 * usable interface, so the answers do not depend on this machine's NICs.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/tcp.h"
#include "proust.h"
#include "unit.h"

static int choose(const char *published, bool same_host, char *shown)
{
    struct sockaddr_in sa;
    return proust__tcp_choose(published, same_host, &sa, shown, 64);
}

int main(void)
{
    setenv("PROUST_TCP_IF_INCLUDE", "lo", 1);
    char shown[64];
    EXPECT_EQ(choose("*10.9.9.9:4000", true, shown), PROUST_OK);
    EXPECT_TRUE(strcmp(shown, "127.0.0.1:4000") == 0);
    EXPECT_EQ(choose("*10.9.9.9,127.0.0.5:4001", false, shown), PROUST_OK);
    EXPECT_TRUE(strcmp(shown, "127.0.0.5:4001") == 0); /* on our network (lo) */
    EXPECT_EQ(choose("*10.9.9.9,10.9.9.8:4002", false, shown), PROUST_OK);
    EXPECT_TRUE(strcmp(shown, "10.9.9.9:4002") == 0); /* none: the first */
    EXPECT_EQ(choose("10.9.9.9:4003", true, shown), PROUST_OK);
    EXPECT_TRUE(strcmp(shown, "10.9.9.9:4003") == 0); /* bound to one address: that one */
    EXPECT_EQ(choose("*:4004", true, shown), PROUST_OK);
    EXPECT_TRUE(strcmp(shown, "127.0.0.1:4004") == 0);
    EXPECT_EQ(choose("*:4005", false, shown), PROUST_ERR_CONN); /* elsewhere, no address */
    const char *bad[] = {"", "garbage", "*10.9.9.9", "*10.9.9.9:0", "*10.9.9.9:70000",
                         "*10.9.9.x:5", "*10.9.9.9:5x", "*999.1.1.1:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        EXPECT_EQ(choose(bad[i], false, shown), PROUST_ERR_PROTO);
    /* what we publish: loopback (the one usable interface here) and the port */
    char out[512];
    struct in_addr any = {0};
    proust__tcp_describe(out, sizeof out, true, any, 4242);
    EXPECT_TRUE(strcmp(out, "*127.0.0.1:4242") == 0);
    setenv("PROUST_TCP_IF_INCLUDE", "nosuchif", 1);
    proust__tcp_describe(out, sizeof out, true, any, 4243);
    EXPECT_TRUE(strcmp(out, "*:4243") == 0);
    printf("unit_tcp_addr: ok\n");
    return 0;
}
