/*
 * tcp_frame_test.c — the tcp rail on its own, in one process: a job of one
 * rank whose traffic to itself goes over a real loopback connection
 * (PROUST_TCP_CONNECT=eager) and over the socketpair the rail uses for it
 * when it connects on demand (lazy), every part in both modes.
 *
 *  1. packets of 0..128 KiB split over up to 64 iovecs, and puts of 4 MiB in
 *     fragments, interleaved: contents, order and alignment checked;
 *  2. a valid byte stream written raw in random-sized pieces, polling after
 *     each, so that every frame is cut at every kind of place;
 *  3. malformed streams (bad magic, flags, kind, lengths, random bytes) must
 *     end in peer_failed(PROUST_ERR_PROTO) — never a crash or an overrun
 *     (run it under ASan) — and close() must not hang.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "drivers/driver.h"
#include "drivers/tcp.h"
#include "proust.h"
#include "unit.h"

#define CHECK(cond) EXPECT_TRUE(cond)

/* ---- A one-rank bootstrap kept in memory (the rail publishes its
 * addresses, its host and, as rank 0, the job's secret) ---- */
static const char *kv_keys[] = {"tcp.addr", "tcp.host", "tcp.secret"};
static char kv_value[3][600];
static size_t kv_len[3];

static int kv_slot(const char *key)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(key, kv_keys[i]) == 0)
            return i;
    return -1;
}

static int mem_put(proust__boot_t *b, const char *key, const void *v, size_t len)
{
    (void)b;
    int i = kv_slot(key);
    CHECK(i >= 0 && len <= sizeof kv_value[0]);
    memcpy(kv_value[i], v, len);
    kv_len[i] = len;
    return PROUST_OK;
}
static int mem_get(proust__boot_t *b, int rank, const char *key, void *v, size_t *len)
{
    (void)b;
    int i = kv_slot(key);
    if (rank != 0 || i < 0 || !kv_len[i])
        return PROUST_ERR_INVALID;
    if (*len < kv_len[i])
        return PROUST_ERR_NOMEM;
    memcpy(v, kv_value[i], kv_len[i]);
    *len = kv_len[i];
    return PROUST_OK;
}
static int mem_fence(proust__boot_t *b)
{
    (void)b;
    return PROUST_OK;
}
static const struct proust__boot_ops mem_ops = {.name = "mem", .put = mem_put, .get = mem_get,
                                                .fence = mem_fence};

/* ---- Upcalls ---- */
#define PUT_SIZE (4u << 20)
#define PUT_TOKEN 77u
static unsigned char *put_dst;
static uint64_t next_seq, packets, empties, put_bytes, put_dones, send_dones;
static int failed_status;
static int check_contents = 1;

static uint32_t prng(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

static void fill(unsigned char *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)prng(&seed);
}

static void up_packet(void *e, int peer, const void *data, size_t len)
{
    (void)e;
    CHECK(peer == 0);
    CHECK(((uintptr_t)data & 7) == 0);
    packets++;
    if (!check_contents)
        return; /* fuzzing: any bytes may come, just touch them */
    if (len == 0) {
        empties++;
        return;
    }
    CHECK(len >= 8);
    uint64_t seq;
    memcpy(&seq, data, 8);
    CHECK(seq == next_seq);
    next_seq++;
    unsigned char *expect = malloc(len);
    CHECK(expect);
    fill(expect, len - 8, seq);
    CHECK(memcmp(expect, (const unsigned char *)data + 8, len - 8) == 0);
    free(expect);
}
static void *up_put_target(void *e, int peer, uint64_t token, uint64_t off, size_t len)
{
    (void)e;
    CHECK(peer == 0);
    if (token != PUT_TOKEN || off > PUT_SIZE || len > PUT_SIZE - off)
        return NULL;
    return put_dst + off;
}
static void up_put_done(void *e, int peer, uint64_t token, uint64_t off, size_t len)
{
    (void)e;
    (void)peer;
    (void)token;
    (void)off;
    put_bytes += len;
    put_dones++;
}
static void up_send_done(void *e, void *ctx, int status)
{
    (void)e;
    (void)ctx;
    CHECK(status == PROUST_OK);
    send_dones++;
}
static void up_peer_failed(void *e, int peer, int status, const char *why)
{
    (void)e;
    CHECK(peer == 0);
    CHECK(why && why[0]);
    failed_status = status;
}

static proust__boot_t boot;
static proust__rail_t rail;

static void rail_up(void)
{
    memset(&boot, 0, sizeof boot);
    boot.ops = &mem_ops;
    boot.rank = 0;
    boot.size = 1;
    boot.local_size = 1;
    boot.fd = -1;
    snprintf(boot.jobid, sizeof boot.jobid, "tcp-frame-test-%d", (int)getpid());
    memset(&rail, 0, sizeof rail);
    rail.ops = &proust__rail_tcp;
    rail.boot = &boot;
    rail.up = (struct proust__rail_upcalls){.packet = up_packet,
                                            .put_target = up_put_target,
                                            .put_done = up_put_done,
                                            .send_done = up_send_done,
                                            .peer_failed = up_peer_failed};
    kv_len[0] = kv_len[1] = 0;
    failed_status = 0;
    CHECK(rail.ops->open(&rail) == PROUST_OK);
    CHECK(rail.caps.max_packet == TCP_MAX_PACKET && rail.caps.put_fragment == TCP_PUT_FRAGMENT);
    CHECK(rail.caps.flags & PROUST__RAIL_HAS_FD);
    CHECK(rail.ops->connect(&rail) == PROUST_OK);
    CHECK(rail.ops->reaches(&rail, 0));
    CHECK(rail.ops->fd(&rail) >= 0);
}

static void progress(void)
{
    rail.ops->poll(&rail);
    if (rail.ops->busy(&rail, 0))
        CHECK(rail.ops->flush(&rail, 0) >= PROUST_OK); /* 1: something moved */
}

/* 1. Real traffic through send/put. */
static void test_traffic(void)
{
    static const size_t sizes[] = {0,    8,    9,     15,    16,    17,    100,   4096,
                                   4097, 9000, 65535, 65536, 65537, 99999, 131072};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    const int npackets = 200;
    unsigned char **bufs = calloc((size_t)npackets, sizeof *bufs);
    unsigned char *src = malloc(PUT_SIZE);
    CHECK(bufs && src);
    fill(src, PUT_SIZE, 4242);
    memset(put_dst, 0, PUT_SIZE);
    uint64_t inprogress = 0;
    size_t put_off = 0;
    uint64_t seq = 0;
    for (int i = 0; i < npackets; i++) {
        size_t len = sizes[(size_t)i % nsizes];
        struct iovec iov[TCP_MAX_IOV];
        int n = 0;
        if (len) {
            bufs[i] = malloc(len);
            CHECK(bufs[i]);
            memcpy(bufs[i], &seq, 8);
            fill(bufs[i] + 8, len - 8, seq);
            seq++;
            int k = i % TCP_MAX_IOV + 1;
            size_t pos = 0;
            for (int j = 0; j < k; j++) {
                size_t chunk = j == k - 1 ? len - pos : (len - pos) / (size_t)(k - j);
                iov[n].iov_base = bufs[i] + pos;
                iov[n++].iov_len = chunk;
                pos += chunk;
            }
        }
        int rc = rail.ops->send(&rail, 0, iov, n, bufs[i]);
        CHECK(rc == PROUST_OK || rc == PROUST__INPROGRESS);
        inprogress += rc == PROUST__INPROGRESS;
        if (i % 10 == 0 && put_off < PUT_SIZE) {
            size_t plen = i % 20 == 0 ? 333333 : TCP_PUT_FRAGMENT;
            if (plen > PUT_SIZE - put_off)
                plen = PUT_SIZE - put_off;
            rc = rail.ops->put(&rail, 0, PUT_TOKEN, put_off, src + put_off, plen, NULL);
            CHECK(rc == PROUST_OK || rc == PROUST__INPROGRESS);
            inprogress += rc == PROUST__INPROGRESS;
            put_off += plen;
        }
        if (i % 3 == 0)
            progress();
    }
    while (put_off < PUT_SIZE) {
        size_t plen = PUT_SIZE - put_off < TCP_PUT_FRAGMENT ? PUT_SIZE - put_off
                                                            : TCP_PUT_FRAGMENT;
        int rc = rail.ops->put(&rail, 0, PUT_TOKEN, put_off, src + put_off, plen, NULL);
        CHECK(rc == PROUST_OK || rc == PROUST__INPROGRESS);
        inprogress += rc == PROUST__INPROGRESS;
        put_off += plen;
    }
    /* A put to a token nobody knows is dropped, and traffic goes on. */
    CHECK(rail.ops->put(&rail, 0, 999, 0, src, 5000, NULL) >= 0);
    /* Over-limit requests are refused up front. */
    struct iovec big = {src, TCP_MAX_PACKET + 1};
    CHECK(rail.ops->send(&rail, 0, &big, 1, NULL) == PROUST_ERR_INVALID);
    CHECK(rail.ops->put(&rail, 0, PUT_TOKEN, 0, src, TCP_PUT_FRAGMENT + 1, NULL) ==
          PROUST_ERR_INVALID);
    CHECK(rail.ops->send(&rail, 1, &big, 0, NULL) == PROUST_ERR_RANK);

    for (long spins = 0; packets < (uint64_t)npackets || put_bytes < PUT_SIZE ||
                         send_dones < inprogress;
         spins++) {
        CHECK(spins < 50000000);
        progress();
    }
    CHECK(next_seq == seq && empties == packets - seq);
    CHECK(memcmp(src, put_dst, PUT_SIZE) == 0);
    CHECK(failed_status == 0);
    for (int i = 0; i < npackets; i++)
        free(bufs[i]);
    free(bufs);
    free(src);
}

/* ---- Raw streams ---- */
struct stream {
    unsigned char *p;
    size_t len, cap;
};

static void put_bytes_raw(struct stream *s, const void *b, size_t n)
{
    if (s->len + n > s->cap) {
        s->cap = (s->len + n) * 2;
        s->p = realloc(s->p, s->cap);
        CHECK(s->p);
    }
    memcpy(s->p + s->len, b, n);
    s->len += n;
}
static void add_frame(struct stream *s, uint8_t kind, uint32_t len, const void *hdr_extra,
                      size_t extra_len, const void *payload, size_t plen)
{
    struct tcp_frame h = {.len = len, .magic = TCP_FRAME_MAGIC, .kind = kind, .flags = 0};
    put_bytes_raw(s, &h, sizeof h);
    if (extra_len)
        put_bytes_raw(s, hdr_extra, extra_len);
    if (plen)
        put_bytes_raw(s, payload, plen);
    static const unsigned char zeros[8];
    put_bytes_raw(s, zeros, tcp_pad(plen));
}

/* Write a stream in random-sized pieces, polling after each. Returns once
 * it is all written (or the rail dropped the connection). */
static void feed(const struct stream *s, uint64_t *rng)
{
    int fd = proust__tcp_debug_send_fd(&rail, 0);
    CHECK(fd >= 0);
    size_t off = 0;
    long spins = 0;
    while (off < s->len && !failed_status) {
        size_t piece = 1 + prng(rng) % (prng(rng) % 4 == 0 ? 40000 : 50);
        if (piece > s->len - off)
            piece = s->len - off;
        ssize_t n = send(fd, s->p + off, piece, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0)
            off += (size_t)n;
        rail.ops->poll(&rail);
        CHECK(++spins < 10000000);
    }
}

static void drain(void)
{
    for (int i = 0; i < 2000 && !failed_status; i++)
        rail.ops->poll(&rail);
}

/* 2. Valid frames cut everywhere. */
static void test_pieces(uint64_t *rng)
{
    struct stream s = {0};
    memset(put_dst, 0, PUT_SIZE);
    unsigned char *payload = malloc(TCP_MAX_PACKET);
    CHECK(payload);
    uint64_t seq = 0, nput = 0, putsum = 0;
    int nframes = 0;
    next_seq = packets = empties = put_bytes = put_dones = 0;
    for (int i = 0; i < 300; i++) {
        unsigned r = prng(rng) % 10;
        if (r < 6) {
            size_t len = r == 0 ? 0 : 8 + prng(rng) % (r == 1 ? TCP_MAX_PACKET - 8 : 300);
            if (len) {
                memcpy(payload, &seq, 8);
                fill(payload + 8, len - 8, seq);
                seq++;
            }
            add_frame(&s, TCP_FRAME_PACKET, (uint32_t)len, NULL, 0, payload, len);
        } else {
            uint64_t tp[2] = {r == 9 ? 12345u : PUT_TOKEN, prng(rng) % (PUT_SIZE / 2)};
            size_t len = prng(rng) % (r == 8 ? TCP_PUT_FRAGMENT : 5000);
            if (len > PUT_SIZE - tp[1])
                len = PUT_SIZE - tp[1];
            fill(payload, len < TCP_MAX_PACKET ? len : TCP_MAX_PACKET, tp[1]);
            struct stream body = {0};
            for (size_t done = 0; done < len;) {
                size_t k = len - done < TCP_MAX_PACKET ? len - done : TCP_MAX_PACKET;
                put_bytes_raw(&body, payload, k);
                done += k;
            }
            add_frame(&s, TCP_FRAME_PUT, (uint32_t)len, tp, sizeof tp, body.p, len);
            free(body.p);
            if (tp[0] == PUT_TOKEN) {
                nput++;
                putsum += len;
            }
        }
        nframes++;
    }
    feed(&s, rng);
    for (long spins = 0; (next_seq < seq || put_dones < nput) && !failed_status; spins++) {
        CHECK(spins < 10000000);
        rail.ops->poll(&rail);
    }
    CHECK(failed_status == 0);
    CHECK(next_seq == seq && put_dones == nput && put_bytes == putsum);
    (void)nframes;
    free(s.p);
    free(payload);
}

/* 3. Malformed streams: some valid frames, then a bad one. */
static void test_malformed(uint64_t *rng, int variant)
{
    struct stream s = {0};
    unsigned char payload[512];
    memset(payload, 0xab, sizeof payload);
    int nvalid = (int)(prng(rng) % 5);
    for (int i = 0; i < nvalid; i++)
        add_frame(&s, TCP_FRAME_PACKET, 100, NULL, 0, payload, 100);
    struct tcp_frame h = {.len = 16, .magic = TCP_FRAME_MAGIC, .kind = TCP_FRAME_PACKET};
    switch (variant) {
    case 0: h.magic ^= (uint16_t)(1u + prng(rng) % 0xfffe); break;
    case 1: h.flags = (uint8_t)(1 + prng(rng) % 255); break;
    case 2: h.kind = (uint8_t)(4 + prng(rng) % 250); break;
    case 3: h.kind = 0; break;
    case 4: h.len = TCP_MAX_PACKET + 1 + prng(rng) % 1000000; break;
    case 5: h.kind = TCP_FRAME_PUT; h.len = TCP_PUT_FRAGMENT + 1 + prng(rng); break;
    case 6: h.kind = TCP_FRAME_BYE; h.len = 1 + prng(rng) % 64; break;
    default: break;
    }
    if (variant <= 6) {
        put_bytes_raw(&s, &h, sizeof h);
        put_bytes_raw(&s, payload, 64);
    } else {
        /* Random bytes; the first header is forced bad so the outcome is known. */
        unsigned char junk[4096];
        fill(junk, sizeof junk, prng(rng));
        junk[4] = (unsigned char)~(TCP_FRAME_MAGIC & 0xff);
        put_bytes_raw(&s, junk, 64 + prng(rng) % (sizeof junk - 64));
    }
    failed_status = 0;
    check_contents = 0;
    packets = 0;
    feed(&s, rng);
    drain();
    check_contents = 1;
    CHECK(failed_status == PROUST_ERR_PROTO);
    CHECK(packets == (uint64_t)nvalid);
    /* The peer is gone for good: sends fail at once, nothing is busy. */
    CHECK(rail.ops->send(&rail, 0, NULL, 0, NULL) == PROUST_ERR_CONN);
    CHECK(!rail.ops->busy(&rail, 0));
    CHECK(!rail.ops->reaches(&rail, 0));
    free(s.p);
}

/* Random frames with valid headers but random kinds/lengths: any outcome
 * is fine as long as nothing breaks. */
static void test_fuzz(uint64_t *rng)
{
    struct stream s = {0};
    unsigned char payload[2048];
    fill(payload, sizeof payload, prng(rng));
    for (int i = 0; i < 20; i++) {
        struct tcp_put_frame p;
        memset(&p, 0, sizeof p);
        p.h.magic = TCP_FRAME_MAGIC;
        p.h.kind = (uint8_t)(prng(rng) % 5);
        p.h.len = prng(rng) % 3 == 0 ? prng(rng) : prng(rng) % 2048;
        p.token = prng(rng) % 2 ? PUT_TOKEN : prng(rng);
        p.offset = prng(rng) % 3 == 0 ? (uint64_t)prng(rng) << 20 : prng(rng) % PUT_SIZE;
        put_bytes_raw(&s, &p, prng(rng) % 2 ? sizeof p : sizeof p.h);
        put_bytes_raw(&s, payload, prng(rng) % sizeof payload);
    }
    check_contents = 0;
    feed(&s, rng);
    drain();
    check_contents = 1;
    free(s.p);
}

int main(void)
{
    setenv("PROUST_TCP_ADDR", "127.0.0.1", 0);
    setenv("PROUST_TCP_CONNECT_TIMEOUT", "10", 0);
    proust__log_rank = 0;
    proust__log_init();
    if (!getenv("PROUST_LOG_LEVEL"))
        proust__log_level = -1; /* the malformed streams would log errors */
    put_dst = malloc(PUT_SIZE);
    CHECK(put_dst);
    uint64_t rng = 2024;
    for (int mode = 0; mode < 2; mode++) {
    setenv("PROUST_TCP_CONNECT", mode ? "lazy" : "eager", 1);
    next_seq = packets = empties = put_bytes = put_dones = send_dones = 0;
    rail_up();
    test_traffic();
    rail.ops->close(&rail);
    CHECK(rail.priv == NULL);
    rail.ops->close(&rail); /* twice is harmless */

    for (int round = 0; round < 3; round++) {
        rail_up();
        test_pieces(&rng);
        rail.ops->close(&rail);
    }
    for (int round = 0; round < 24; round++) {
        rail_up();
        test_malformed(&rng, round % 8);
        rail.ops->close(&rail);
    }
    for (int round = 0; round < 24; round++) {
        rail_up();
        test_fuzz(&rng);
        rail.ops->close(&rail);
    }
    }
    free(put_dst);
    printf("tcp_frame_test: ok\n");
    return 0;
}
