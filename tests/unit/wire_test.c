/* The packet decoder accepts what the engine builds and rejects, without
 * crashing or reading out of bounds, anything malformed (truncations,
 * bad lengths, bad types, random bytes). Run under ASan in CI. */
#include <string.h>

#include "core/wire.h"
#include "proust.h"
#include "unit.h"

static size_t build(uint8_t *out, unsigned n, size_t body)
{
    struct proust__pkt_hdr ph = {.magic = PROUST__PKT_MAGIC, .nchunks = (uint16_t)n};
    size_t off = sizeof ph;
    for (unsigned i = 0; i < n; i++) {
        struct proust__chunk_hdr h = {.type = PROUST__CH_DATA, .nseg = 1, .seq = i,
                                      .len = (uint32_t)body, .tag = 100 + i, .total = body};
        memcpy(out + off, &h, sizeof h);
        off += sizeof h;
        memset(out + off, (int)i, body);
        off += body;
    }
    ph.len = (uint32_t)off;
    memcpy(out, &ph, sizeof ph);
    return off;
}

static int parse_all(const uint8_t *p, size_t len, unsigned *count)
{
    struct proust__wire_reader r;
    struct proust__wire_chunk c;
    const char *why = NULL;
    int rc = proust__wire_open(&r, p, len, &why);
    *count = 0;
    if (rc != PROUST_OK)
        return rc;
    while ((rc = proust__wire_next(&r, &c, &why)) == 1) {
        if (c.body < p || c.body + c.hdr.len > p + len)
            return -100; /* a body outside the packet would be a decoder bug */
        (*count)++;
    }
    if (rc < 0)
        EXPECT_TRUE(why != NULL && why[0]);
    return rc;
}

/* The latency path's parser (proust__wire_single_data) accepts only what
 * the reader accepts, as the same one chunk: anything it takes that the
 * reader refuses would reach matching unchecked. */
static void check_single_agrees(const uint8_t *p, size_t len, int *accepted)
{
    struct proust__wire_chunk fast;
    if (!proust__wire_single_data(p, len, &fast))
        return;
    (*accepted)++;
    struct proust__wire_reader r;
    struct proust__wire_chunk c;
    const char *why = NULL;
    EXPECT_EQ(proust__wire_open(&r, p, len, &why), PROUST_OK);
    EXPECT_EQ(proust__wire_next(&r, &c, &why), 1);
    EXPECT_TRUE(memcmp(&c.hdr, &fast.hdr, sizeof c.hdr) == 0 && c.body == fast.body);
    EXPECT_EQ(proust__wire_next(&r, &c, &why), 0);
    EXPECT_TRUE(c.hdr.type == PROUST__CH_DATA && !(c.hdr.flags & PROUST__CF_SYNC) &&
                c.hdr.nseg == 1 && fast.body + fast.hdr.len == p + len);
}

static void test_single_data(uint8_t *pkt, uint8_t *bad)
{
    struct proust__wire_chunk c;
    int accepted = 0;
    size_t len = build(pkt, 1, 13);
    EXPECT_TRUE(proust__wire_single_data(pkt, len, &c));
    EXPECT_EQ(c.hdr.len, 13);
    EXPECT_TRUE(c.body == pkt + len - 13);
    check_single_agrees(pkt, len, &accepted);
    EXPECT_EQ(accepted, 1);
    /* shapes it leaves to the reader: two chunks, SYNC, two segments, a
     * body longer than its message, trailing bytes, an empty packet */
    size_t len2 = build(bad, 2, 13);
    EXPECT_TRUE(!proust__wire_single_data(bad, len2, &c));
    struct proust__chunk_hdr h;
    const size_t at = sizeof(struct proust__pkt_hdr);
    for (int shape = 0; shape < 4; shape++) {
        memcpy(bad, pkt, len);
        memcpy(&h, bad + at, sizeof h);
        if (shape == 0)
            h.flags |= PROUST__CF_SYNC;
        else if (shape == 1)
            h.nseg = 2;
        else if (shape == 2)
            h.total = 12;
        else
            h.seg = 1;
        memcpy(bad + at, &h, sizeof h);
        EXPECT_TRUE(!proust__wire_single_data(bad, len, &c));
    }
    memcpy(bad, pkt, len);
    bad[len] = 0;
    ((struct proust__pkt_hdr *)bad)->len = (uint32_t)(len + 1);
    EXPECT_TRUE(!proust__wire_single_data(bad, len + 1, &c));
    EXPECT_TRUE(!proust__wire_single_data(bad, 0, &c));
    /* every byte of a good packet changed, alone, many ways */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < len; i++)
        for (int k = 0; k < 64; k++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            memcpy(bad, pkt, len);
            bad[i] = (uint8_t)x;
            check_single_agrees(bad, len, &accepted);
            for (size_t cut = 0; cut < len; cut += 7)
                check_single_agrees(bad, cut, &accepted);
        }
    EXPECT_TRUE(accepted > 1); /* changed tags and payload bytes are still good packets */
}

int main(void)
{
    static uint8_t pkt[65536], bad[65536];
    unsigned n;
    size_t len = build(pkt, 5, 13);
    EXPECT_EQ(parse_all(pkt, len, &n), 0);
    EXPECT_EQ(n, 5);

    /* every truncation is refused */
    for (size_t cut = 0; cut < len; cut++) {
        memcpy(bad, pkt, cut);
        int rc = parse_all(bad, cut, &n);
        EXPECT_TRUE(rc == PROUST_ERR_PROTO);
    }
    /* a packet header that lies about the chunk count */
    memcpy(bad, pkt, len);
    ((struct proust__pkt_hdr *)bad)->nchunks = 6;
    EXPECT_EQ(parse_all(bad, len, &n), PROUST_ERR_PROTO);
    ((struct proust__pkt_hdr *)bad)->nchunks = 4;
    EXPECT_EQ(parse_all(bad, len, &n), PROUST_ERR_PROTO);
    /* a chunk claiming a body past the end */
    memcpy(bad, pkt, len);
    struct proust__chunk_hdr h;
    memcpy(&h, bad + 8, sizeof h);
    h.len = 1u << 30;
    memcpy(bad + 8, &h, sizeof h);
    EXPECT_EQ(parse_all(bad, len, &n), PROUST_ERR_PROTO);
    /* unknown type, segment out of range, RTS with a huge key */
    memcpy(bad, pkt, len);
    h.len = 13;
    h.type = 99;
    memcpy(bad + 8, &h, sizeof h);
    EXPECT_EQ(parse_all(bad, len, &n), PROUST_ERR_PROTO);
    h.type = PROUST__CH_DATA;
    h.seg = 3;
    h.nseg = 2;
    memcpy(bad + 8, &h, sizeof h);
    EXPECT_EQ(parse_all(bad, len, &n), PROUST_ERR_PROTO);
    {
        struct proust__pkt_hdr ph = {.magic = PROUST__PKT_MAGIC, .nchunks = 1};
        struct proust__chunk_hdr rh = {.type = PROUST__CH_RTS, .nseg = 1,
                                       .len = sizeof(struct proust__rts_body), .total = 100};
        struct proust__rts_body rb = {.seg_size = 100, .key_len = 4096};
        ph.len = (uint32_t)(sizeof ph + sizeof rh + sizeof rb);
        memcpy(bad, &ph, sizeof ph);
        memcpy(bad + sizeof ph, &rh, sizeof rh);
        memcpy(bad + sizeof ph + sizeof rh, &rb, sizeof rb);
        EXPECT_EQ(parse_all(bad, ph.len, &n), PROUST_ERR_PROTO);
        rb.key_len = 0;
        memcpy(bad + sizeof ph + sizeof rh, &rb, sizeof rb);
        EXPECT_EQ(parse_all(bad, ph.len, &n), 0);
        EXPECT_EQ(n, 1);
        rb.seg_size = 101; /* a segment larger than its message */
        memcpy(bad + sizeof ph + sizeof rh, &rb, sizeof rb);
        EXPECT_EQ(parse_all(bad, ph.len, &n), PROUST_ERR_PROTO);
    }
    /* CANCEL and its answer carry no body */
    for (uint8_t t = PROUST__CH_CANCEL; t <= PROUST__CH_CANCEL_ANS; t++) {
        struct proust__pkt_hdr ph = {.magic = PROUST__PKT_MAGIC, .nchunks = 1};
        struct proust__chunk_hdr ch = {.type = t, .seq = 7, .tag = 9, .total = 12345};
        ph.len = (uint32_t)(sizeof ph + sizeof ch);
        memcpy(bad, &ph, sizeof ph);
        memcpy(bad + sizeof ph, &ch, sizeof ch);
        EXPECT_EQ(parse_all(bad, ph.len, &n), 0);
        EXPECT_EQ(n, 1);
        ch.len = 8;
        ph.len += 8;
        memcpy(bad, &ph, sizeof ph);
        memcpy(bad + sizeof ph, &ch, sizeof ch);
        memset(bad + sizeof ph + sizeof ch, 0, 8);
        EXPECT_EQ(parse_all(bad, ph.len, &n), PROUST_ERR_PROTO);
    }
    /* random garbage: never crashes, at most accepted as some chunks */
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 20000; round++) {
        size_t l = (size_t)(x % 512);
        for (size_t i = 0; i < l; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bad[i] = (uint8_t)x;
        }
        if (l >= 8 && (round & 1)) { /* plausible header, random chunks */
            struct proust__pkt_hdr ph = {.magic = PROUST__PKT_MAGIC,
                                         .nchunks = (uint16_t)(x % 4), .len = (uint32_t)l};
            memcpy(bad, &ph, sizeof ph);
        }
        int rc = parse_all(bad, l, &n);
        EXPECT_TRUE(rc == 0 || rc == PROUST_ERR_PROTO);
        int accepted = 0;
        check_single_agrees(bad, l, &accepted);
    }
    test_single_data(pkt, bad);
    printf("wire: ok\n");
    return 0;
}
