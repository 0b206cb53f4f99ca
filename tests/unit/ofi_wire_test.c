/* The ofi rail's message header (drivers/ofi_wire.c): what the rail builds
 * is accepted with its fields; truncations, a wrong mark, a rank the job
 * does not have, an unknown kind, a put offset that wraps, a pull or its
 * acknowledgement of the wrong size, a pull of nothing or that wraps, and
 * random bytes are refused with a reason, never read past the message (ASan in
 * CI). */
#include <string.h>

#include "drivers/ofi.h"
#include <stddef.h>

#include "proust.h"
#include "unit.h"

static size_t build(uint8_t *out, int kind, uint32_t src, uint32_t seq, uint64_t token,
                    uint64_t offset, size_t payload)
{
    struct ofi_hdr h = {.src = src, .kind = (uint16_t)kind, .magic = OFI_MAGIC, .seq = seq,
                        .token = token, .offset = offset};
    memcpy(out, &h, sizeof h);
    for (size_t i = 0; i < payload; i++)
        out[sizeof h + i] = (uint8_t)(i * 7);
    return sizeof h + payload;
}

int main(void)
{
    static uint8_t buf[4096];
    struct ofi_msg m;
    const char *why = NULL;

    /* a packet and a put, as the rail builds them */
    size_t n = build(buf, OFI_MSG_PACKET, 3, 41, 0, 0, 100);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_OK);
    EXPECT_EQ(m.kind, OFI_MSG_PACKET);
    EXPECT_EQ(m.src, 3);
    EXPECT_EQ(m.seq, 41);
    EXPECT_EQ(m.len, 100);
    EXPECT_TRUE(m.payload == buf + sizeof(struct ofi_hdr));
    n = build(buf, OFI_MSG_PUT, 0, 7, 0x1234, 65536, 0);
    EXPECT_EQ(proust__ofi_parse(buf, n, 1, &m, &why), PROUST_OK);
    EXPECT_EQ(m.kind, OFI_MSG_PUT);
    EXPECT_EQ(m.token, 0x1234);
    EXPECT_EQ(m.offset, 65536);
    EXPECT_EQ(m.len, 0);

    /* every truncation of a header is refused */
    n = build(buf, OFI_MSG_PACKET, 1, 0, 0, 0, 0);
    for (size_t cut = 0; cut < n; cut++) {
        why = NULL;
        EXPECT_EQ(proust__ofi_parse(buf, cut, 4, &m, &why), PROUST_ERR_PROTO);
        EXPECT_TRUE(why != NULL);
    }
    /* a wrong mark, a rank out of the job, an unknown kind, a wrapping put */
    n = build(buf, OFI_MSG_PACKET, 1, 0, 0, 0, 8);
    buf[6] ^= 0xff;
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, OFI_MSG_PACKET, 4, 0, 0, 0, 8);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, OFI_MSG_PACKET, 0xffffffffu, 0, 0, 0, 8);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, 9, 1, 0, 0, 0, 8);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, OFI_MSG_PUT, 1, 0, 5, UINT64_MAX - 3, 8);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);

    /* a pull and its acknowledgement, as the rail builds them */
    struct ofi_pull_desc d = {.raddr = 0x7f0000001000u, .rkey = 99, .len = 300000, .cookie = 5};
    n = build(buf, OFI_MSG_PULL, 2, 8, 0x55, 4096, 0);
    memcpy(buf + n, &d, sizeof d);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof d, 4, &m, &why), PROUST_OK);
    EXPECT_EQ(m.kind, OFI_MSG_PULL);
    EXPECT_EQ(m.pull.raddr, 0x7f0000001000u);
    EXPECT_EQ(m.pull.rkey, 99);
    EXPECT_EQ(m.pull.len, 300000);
    EXPECT_EQ(m.pull.cookie, 5);
    EXPECT_EQ(m.token, 0x55);
    /* one byte short or long; no bytes; an offset or an address that wraps */
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof d - 1, 4, &m, &why), PROUST_ERR_PROTO);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof d + 1, 4, &m, &why), PROUST_ERR_PROTO);
    struct ofi_pull_desc bad = d;
    bad.len = 0;
    memcpy(buf + n, &bad, sizeof bad);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof bad, 4, &m, &why), PROUST_ERR_PROTO);
    bad = d;
    bad.raddr = UINT64_MAX - 10;
    memcpy(buf + n, &bad, sizeof bad);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof bad, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, OFI_MSG_PULL, 2, 8, 0x55, UINT64_MAX - 100, 0);
    memcpy(buf + n, &d, sizeof d);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof d, 4, &m, &why), PROUST_ERR_PROTO);
    struct ofi_pull_ack a = {.cookie = 77, .status = 0};
    n = build(buf, OFI_MSG_PULL_ACK, 1, 0, 0, 0, 0);
    memcpy(buf + n, &a, sizeof a);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof a, 4, &m, &why), PROUST_OK);
    EXPECT_EQ(m.kind, OFI_MSG_PULL_ACK);
    EXPECT_EQ(m.ack.cookie, 77);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof a - 1, 4, &m, &why), PROUST_ERR_PROTO);

    /* a ring grant (and a refusal), a request and a credit carry what they should */
    struct ofi_ring_grant g = {.raddr = 0x7f0000002000u, .rkey = 7, .slots = 64, .slot_size = 1024};
    n = build(buf, OFI_MSG_RING_GRANT, 3, 0, 0, 0, 0);
    memcpy(buf + n, &g, sizeof g);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof g, 4, &m, &why), PROUST_OK);
    EXPECT_EQ(m.kind, OFI_MSG_RING_GRANT);
    EXPECT_EQ(m.grant.slots, 64);
    EXPECT_EQ(m.grant.slot_size, 1024);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof g - 1, 4, &m, &why), PROUST_ERR_PROTO);
    struct ofi_ring_grant gb = g;
    gb.slot_size = 100; /* below the smallest slot, and not a multiple of 8 */
    memcpy(buf + n, &gb, sizeof gb);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof gb, 4, &m, &why), PROUST_ERR_PROTO);
    gb = g;
    gb.raddr = UINT64_MAX - 4096; /* the ring wraps the address space */
    memcpy(buf + n, &gb, sizeof gb);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof gb, 4, &m, &why), PROUST_ERR_PROTO);
    gb = g;
    gb.slots = 0; /* a refusal: the rest does not matter */
    gb.slot_size = 3;
    memcpy(buf + n, &gb, sizeof gb);
    EXPECT_EQ(proust__ofi_parse(buf, n + sizeof gb, 4, &m, &why), PROUST_OK);
    n = build(buf, OFI_MSG_CREDIT, 1, 0, 0, 0, 0);
    uint32_t credit = 42;
    memcpy(buf + offsetof(struct ofi_hdr, credit), &credit, sizeof credit);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_OK);
    EXPECT_EQ(m.credit, 42);
    EXPECT_EQ(proust__ofi_parse(buf, n + 1, 4, &m, &why), PROUST_ERR_PROTO);
    n = build(buf, OFI_MSG_RING_REQ, 1, 3, 0, 0, 4);
    EXPECT_EQ(proust__ofi_parse(buf, n, 4, &m, &why), PROUST_ERR_PROTO);

    /* a sender's credit view: the highest count seen, never beyond the
     * writes it made (a stranger's credit must not free unread slots) */
    struct ofi_peer peers[4];
    memset(peers, 0, sizeof peers);
    struct ofi_rail rail = {.size = 4, .peers = peers};
    atomic_store(&peers[1].ring_written, 10);
    struct ofi_msg cm = {.src = 1, .credit = 5};
    proust__ofi_ring_credit(&rail, &cm);
    EXPECT_EQ(atomic_load(&peers[1].ring_consumed), 5);
    cm.credit = 3; /* an older message, come late */
    proust__ofi_ring_credit(&rail, &cm);
    EXPECT_EQ(atomic_load(&peers[1].ring_consumed), 5);
    cm.credit = 11; /* more than was written */
    proust__ofi_ring_credit(&rail, &cm);
    EXPECT_EQ(atomic_load(&peers[1].ring_consumed), 5);
    cm.credit = 10;
    proust__ofi_ring_credit(&rail, &cm);
    EXPECT_EQ(atomic_load(&peers[1].ring_consumed), 10);

    /* random bytes: any answer, never a read past the message (each one
     * copied into a block of exactly its size, so ASan sees an overrun) */
    unsigned seed = 12345;
    int accepted = 0;
    for (int i = 0; i < 200000; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 8) % 96;
        if (i % 4 == 1) /* the pull's exact size, so some pass */
            len = sizeof(struct ofi_hdr) + sizeof(struct ofi_pull_desc);
        if (i % 8 == 3) /* a grant's */
            len = sizeof(struct ofi_hdr) + sizeof(struct ofi_ring_grant);
        uint8_t *p = malloc(len ? len : 1);
        EXPECT_TRUE(p != NULL);
        for (size_t k = 0; k < len; k++) {
            seed = seed * 1103515245u + 12345u;
            p[k] = (uint8_t)(seed >> 16);
        }
        if (len >= sizeof(struct ofi_hdr) && (i & 1)) { /* half with a plausible header */
            struct ofi_hdr h;
            memcpy(&h, p, sizeof h);
            h.magic = OFI_MAGIC;
            h.kind = (uint16_t)(1 + (i >> 1) % 8);
            h.src %= 8;
            memcpy(p, &h, sizeof h);
        }
        int rc = proust__ofi_parse(p, len, 8, &m, &why);
        EXPECT_TRUE(rc == PROUST_OK || rc == PROUST_ERR_PROTO);
        if (rc == PROUST_OK) {
            accepted++;
            EXPECT_TRUE(m.payload + m.len == p + len);
            EXPECT_TRUE(m.src >= 0 && m.src < 8);
        }
        free(p);
    }
    EXPECT_TRUE(accepted > 0);
    printf("ofi_wire: %d of 200000 random messages accepted\n", accepted);
    return 0;
}
