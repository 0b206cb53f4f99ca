/*
 * recv_path.c — from a packet to completed receives.
 *
 * Messages are matched in the order the peer sent them: every chunk carries
 * its message's per-gate sequence number, a message is matched when its
 * turn comes (chunks that arrive early wait in the gate's stash), and later
 * segments of a message find it by sequence number. Decisions are made
 * under the gate's match stripe; the answers they call for (CTS, ACK, FIN, get) are
 * collected as actions and carried out after the lock is released
 * (recv_rdv.c answers rendezvous requests).
 */
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/gate.h"
#include "core/inmsg.h"
#include "core/match.h"
#include "core/offer.h"
#include "core/recv.h"
#include "core/request.h"
#include "core/send.h"
#include "core/session.h"
#include "proust.h"

enum { ACT_ACK = 1, ACT_CTS, ACT_GET, ACT_LANDED };

struct action {
    uint8_t kind;
    uint16_t seg;
    struct proust_request *req;
    uint64_t sender_token;
    size_t accepted;
    uint32_t key_len;
    bool sender_waits; /* the RTS said so (PROUST__CF_WAITS) */
    uint8_t key[PROUST__MAX_KEY]; /* a copy: the chunk or inmsg may be gone */
};

#define ACTS_MAX (PROUST_PACK_MAX_SEGMENTS + 2)

struct actions {
    unsigned n;
    bool defer_gets; /* queue gets for proust__gets_run instead of copying now */
    struct action a[ACTS_MAX];
};

static inline bool seq_before(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* Capacity a request offers for segment `seg` of a message. */
static size_t seg_cap(const struct proust_request *req, uint16_t seg)
{
    return seg < req->nseg ? req->segs[seg].iov_len : 0;
}

/* Start receiving a matched message into req (the gate's stripe held). */
static void bind_request(struct proust_request *req, int source, proust_tag_t tag,
                         uint16_t nseg, size_t size)
{
    req->status.source = source;
    req->status.tag = tag;
    req->status.size = size;
    req->status.count = 0;
    req->where = PROUST__IN_NONE;
    atomic_store_explicit(&req->pending, nseg, memory_order_relaxed);
    if (nseg != req->nseg || size > req->total)
        proust__request_set_error(req, PROUST_ERR_TRUNCATE);
}

/* Deliver one segment's data into a bound request (the gate's stripe held).
 * `data`: eager bytes, or NULL for a rendezvous segment described by rts. */
static void deliver_segment(struct proust_session *s, struct proust__gate *g,
                            struct proust_request *req, uint16_t seg, const void *data,
                            size_t seg_size, uint8_t flags, uint64_t sync_token,
                            const struct proust__rts_body *rts, const uint8_t *key,
                            struct actions *acts)
{
    size_t cap = seg_cap(req, seg);
    size_t take = seg_size < cap ? seg_size : cap;
    if (seg_size > cap)
        proust__request_set_error(req, PROUST_ERR_TRUNCATE);
    if (flags & PROUST__CF_SYNC)
        acts->a[acts->n++] = (struct action){.kind = ACT_ACK, .sender_token = sync_token,
                                             .key_len = 0};
    if (!rts) {
        /* an offered receive matched by an eager message (sent before
         * the sender saw the offer): nobody will write into it */
        if (__builtin_expect(req->offer != NULL, 0))
            proust__offer_drop(s, req);
        if (take)
            proust_copy(req->segs[seg].iov_base, data, take);
        req->status.count += take;
        if (atomic_load_explicit(&req->pending, memory_order_acquire) == 1)
            /* its last event and no other thread can add one: no need to count */
            proust__request_complete(req);
        else
            proust__request_event_done(req);
        return;
    }
    req->status.count += take;
    if (take) /* take is 0 for a segment the request has no buffer for */
        req->seg_left[seg] = take;
    if (take && req->where != PROUST__IN_RECEIVING) {
        req->where = PROUST__IN_RECEIVING;
        req->remote_owed = 0;
        proust__dlist_append(&g->receiving_head, &g->receiving_tail, req);
    }
    if (take)
        req->remote_owed++;
    bool landed;
    if (__builtin_expect(req->offer != NULL, 0) && seg == 0 && take &&
        proust__offer_hold(s, req, rts->key_len ? PROUST__OFFER_ACT_GET : PROUST__OFFER_ACT_CTS,
                           rts->sender_token, take, key, rts->key_len, &landed)) {
        /* the sender is writing: its DONE completes the segment */
        if (landed)
            acts->a[acts->n++] = (struct action){.kind = ACT_LANDED, .req = req};
        return;
    }
    struct action *a = &acts->a[acts->n++];
    /* Both sides wait in blocking calls: the sender streams the data
     * through the ring (two copies, one on each core, pipelined) rather
     * than we pull it (one copy by the kernel at a third of the speed;
     * docs/PERFORMANCE.md, "Figures behind the code"). Otherwise pull: that needs
     * nothing from a sender that may be computing. */
    bool stream = (flags & PROUST__CF_WAITS) && req->waited && !s->oversubscribed &&
                  take <= g->rail->caps.stream_max;
    a->kind = (rts->key_len && take && !stream) ? ACT_GET : ACT_CTS;
    a->seg = seg;
    a->req = req;
    a->sender_token = rts->sender_token;
    a->accepted = take;
    a->sender_waits = (flags & PROUST__CF_WAITS) != 0;
    a->key_len = a->kind == ACT_GET ? rts->key_len : 0;
    if (a->key_len)
        memcpy(a->key, key, a->key_len);
}

/* Where the inline bytes of `m` start. */
static inline uint8_t *inmsg_inline(struct proust__inmsg *m)
{
    return (uint8_t *)&m->seg[m->nseg];
}

/* A descriptor for a message of h->nseg segments (g's stripe held). */
static struct proust__inmsg *inmsg_new(struct proust__gate *g, const struct proust__chunk_hdr *h)
{
    size_t head = sizeof(struct proust__inmsg) + h->nseg * sizeof(struct proust__inseg);
    bool cached = head <= PROUST__INMSG_BLOCK;
    struct proust__inmsg *m = cached ? proust__inmsg_block_get(g) : malloc(head);
    if (!m)
        return NULL;
    memset(m, 0, head);
    m->cached = cached;
    m->inline_cap = cached ? (uint32_t)(PROUST__INMSG_BLOCK - head) : 0;
    m->source = g->peer;
    m->seq = h->seq;
    m->nseg = h->nseg;
    m->tag = h->tag;
    m->size = h->total;
    return m;
}

/* Free a segment's private bytes unless they live in the block. */
static inline void inseg_release(struct proust__match_stripe *ms, struct proust__inmsg *m,
                                 struct proust__inseg *sg)
{
    if (__builtin_expect(sg->state == PROUST__SEG_PULLING, 0))
        return; /* a failed gate's: its puts may still be writing there, so it leaks */
    if (sg->data && (uint8_t *)sg->data != inmsg_inline(m))
        proust__unexp_buf_put(ms, sg->data, sg->len);
    if (sg->pulled && ms)
        atomic_fetch_sub_explicit(ms->idle_pulled, sg->len, memory_order_relaxed);
    sg->pulled = false;
    sg->data = NULL;
}

/* Release a descriptor whose segments were all delivered (its gate's
 * stripe held). */
void proust__inmsg_release(struct proust_session *s, struct proust__inmsg *m)
{
    for (uint16_t i = 0; i < m->nseg; i++)
        inseg_release(s->gates[m->source].ms, m, &m->seg[i]);
    if (m->cached)
        proust__inmsg_block_put(&s->gates[m->source], m);
    else
        free(m);
}

/* Keep a segment of an unexpected message (the gate's stripe held). */
static int inmsg_store(struct proust_session *s, struct proust__gate *g,
                       struct proust__inmsg *m, const struct proust__chunk_hdr *h,
                       const uint8_t *body)
{
    struct proust__inseg *sg = &m->seg[h->seg];
    if (sg->state != PROUST__SEG_NONE)
        return PROUST_ERR_PROTO; /* segment sent twice */
    if (h->type == PROUST__CH_DATA) {
        size_t skip = (h->flags & PROUST__CF_SYNC) ? sizeof(struct proust__data_tail) : 0;
        if (skip) {
            struct proust__data_tail t;
            memcpy(&t, body, sizeof t);
            m->flags |= PROUST__CF_SYNC;
            m->sync_token = t.sender_token;
        }
        sg->len = h->len - skip;
        /* one segment's bytes fit in the descriptor's own block */
        if (m->nseg == 1 && sg->len <= m->inline_cap)
            sg->data = inmsg_inline(m);
        else
            sg->data = proust__unexp_buf_get(g->ms, sg->len);
        if (!sg->data)
            return PROUST_ERR_NOMEM;
        proust_copy(sg->data, body + skip, sg->len);
        sg->state = PROUST__SEG_EAGER;
    } else {
        struct proust__rts_body rb;
        memcpy(&rb, body, sizeof rb);
        if (rb.key_len > PROUST__MAX_KEY) /* re-read from shared memory: check again */
            return PROUST_ERR_PROTO;
        sg->len = rb.seg_size;
        sg->sender_token = rb.sender_token;
        sg->key_len = rb.key_len;
        memcpy(sg->key, body + sizeof rb, rb.key_len);
        sg->state = PROUST__SEG_RTS;
        if (h->seg == 0)
            m->flags |= h->flags & PROUST__CF_WAITS;
        m->flags |= h->flags & PROUST__CF_RDV_SYNC;
        /* an idle wait may pull it in (unexp_pull.c): one asleep must wake
         * to, since the thread that polled it in may not be idle */
        atomic_fetch_add_explicit(&s->unexp_rts, 1, memory_order_relaxed);
        proust__wake_check(&s->prog);
    }
    m->nseg_seen++;
    return PROUST_OK;
}

/* Deliver a stored segment of a message that was just matched. */
static void inmsg_replay(struct proust_session *s, struct proust__gate *g,
                         struct proust__inmsg *m, uint16_t seg, struct actions *acts)
{
    struct proust__inseg *sg = &m->seg[seg];
    uint8_t flags = seg == 0 ? m->flags : 0; /* only segment 0 asks for the ACK */
    if (sg->state == PROUST__SEG_EAGER) {
        deliver_segment(s, g, m->req, seg, sg->data, sg->len, flags, m->sync_token, NULL, NULL,
                        acts);
        inseg_release(g->ms, m, sg);
    } else {
        struct proust__rts_body rb = {.sender_token = sg->sender_token,
                                      .seg_size = sg->len,
                                      .key_len = sg->key_len};
        deliver_segment(s, g, m->req, seg, NULL, sg->len, flags, m->sync_token, &rb, sg->key, acts);
    }
    sg->state = PROUST__SEG_DONE;
}

static void gate_active_remove(struct proust__gate *g, struct proust__inmsg *m)
{
    for (struct proust__inmsg **pp = &g->active; *pp; pp = &(*pp)->next) {
        if (*pp == m) {
            *pp = m->next;
            return;
        }
    }
}

/* A chunk of a message whose turn has come, or of one already started.
 * `searched`: the caller took the posted receive already (`taken`, NULL if
 * none matched), so the queue is not searched twice. */
static int process_chunk(struct proust_session *s, struct proust__gate *g,
                         const struct proust__chunk_hdr *h, const uint8_t *body, bool is_new,
                         bool searched, struct proust_request *taken, struct actions *acts)
{
    const uint8_t *data = body;
    size_t seg_size;
    uint64_t sync_token = 0;
    const struct proust__rts_body *rts = NULL;
    struct proust__rts_body rb;
    if (h->type == PROUST__CH_DATA) {
        seg_size = h->len;
        if (h->flags & PROUST__CF_SYNC) {
            struct proust__data_tail t;
            memcpy(&t, body, sizeof t);
            sync_token = t.sender_token;
            data += sizeof t;
            seg_size -= sizeof t;
        }
    } else {
        memcpy(&rb, body, sizeof rb);
        if (rb.key_len > PROUST__MAX_KEY) /* re-read from shared memory: check again */
            return PROUST_ERR_PROTO;
        rts = &rb;
        seg_size = rb.seg_size;
    }

    struct proust__inmsg *m = NULL;
    if (is_new) {
        struct proust_request *req = searched ? taken : proust__posted_take(s, g->peer, h->tag);
        if (req && h->nseg == 1) {
            /* the common case: a one-segment message with its receive posted */
            bind_request(req, g->peer, h->tag, 1, h->total);
            deliver_segment(s, g, req, 0, data, seg_size, h->flags, sync_token, rts,
                            body + sizeof rb, acts);
            return PROUST_OK;
        }
        m = inmsg_new(g, h);
        if (!m) {
            if (req) /* put it back: it stays posted */
                proust__posted_append(s, req);
            return PROUST_ERR_NOMEM;
        }
        m->req = req;
        if (m->req) {
            bind_request(m->req, g->peer, h->tag, h->nseg, h->total);
        } else {
            proust__unexpected_append(s, m);
            if (atomic_load_explicit(&s->monitor_wants_unexpected, memory_order_relaxed))
                proust__defer_event(s, PROUST_EVENT_UNEXPECTED,
                                    &(proust_status_t){.source = g->peer, .tag = h->tag,
                                                       .size = h->total, .count = h->total});
        }
        if (m->req && m->nseg > 1) {
            m->next = g->active;
            g->active = m;
        }
    } else {
        for (m = g->active; m && m->seq != h->seq; m = m->next)
            ;
        if (!m)
            for (m = g->unexp_head; m && m->seq != h->seq; m = m->next)
                ;
        if (!m || h->nseg != m->nseg || h->tag != m->tag)
            return PROUST_ERR_PROTO;
    }
    if (!m->req)
        return inmsg_store(s, g, m, h, body);
    struct proust__inseg *sg = &m->seg[h->seg];
    if (sg->state != PROUST__SEG_NONE)
        return PROUST_ERR_PROTO;
    sg->state = PROUST__SEG_DONE;
    m->nseg_seen++;
    deliver_segment(s, g, m->req, h->seg, data, seg_size, h->flags, sync_token, rts,
                    body + sizeof rb, acts);
    if (m->nseg_seen == m->nseg) {
        if (m->nseg > 1)
            gate_active_remove(g, m);
        proust__inmsg_release(s, m);
    }
    return PROUST_OK;
}

static int stash_chunk(struct proust__gate *g, const struct proust__chunk_hdr *h,
                       const uint8_t *body)
{
    struct proust__stashed *st = malloc(sizeof *st + h->len);
    if (!st)
        return PROUST_ERR_NOMEM;
    st->hdr = *h;
    proust_copy(st->body, body, h->len);
    st->next = g->stash;
    g->stash = st;
    return PROUST_OK;
}

/* Does the stash hold a chunk whose turn has come? */
static bool stash_ready(const struct proust__gate *g)
{
    for (const struct proust__stashed *st = g->stash; st; st = st->next)
        if (!seq_before(g->recv_seq, st->hdr.seq))
            return true;
    return false;
}

/* Process the stashed chunks whose turn has come, while the action list
 * has room for what one chunk may add (the caller flushes and calls again
 * while stash_ready says so). */
static int drain_stash(struct proust_session *s, struct proust__gate *g, struct actions *acts)
{
    int rc = PROUST_OK;
    while (rc == PROUST_OK && g->stash && acts->n + 2 <= ACTS_MAX) {
        struct proust__stashed **pp = &g->stash, *st;
        for (; *pp; pp = &(*pp)->next)
            if (!seq_before(g->recv_seq, (*pp)->hdr.seq))
                break;
        if (!*pp)
            break;
        st = *pp;
        *pp = st->next;
        bool next_new = st->hdr.seq == g->recv_seq;
        if (next_new)
            g->recv_seq++;
        rc = process_chunk(s, g, &st->hdr, st->body, next_new, false, NULL, acts);
        free(st);
    }
    return rc;
}

/* Envelope-bearing chunk (DATA/RTS), the gate's stripe held. */
static int on_message_chunk(struct proust_session *s, struct proust__gate *g,
                            const struct proust__chunk_hdr *h, const uint8_t *body,
                            struct actions *acts)
{
    if (seq_before(g->recv_seq, h->seq))
        return stash_chunk(g, h, body); /* ahead of its turn */
    bool is_new = h->seq == g->recv_seq;
    struct proust_request *req = NULL;
    if (is_new) {
        g->recv_seq++;
        req = proust__posted_take(s, g->peer, h->tag);
        if (req && req->nseg == 1 && h->type == PROUST__CH_DATA && h->nseg == 1 &&
            !(h->flags & PROUST__CF_SYNC) && !g->stash && !req->offer) {
            /* the common case, kept short: a one-segment eager message whose
             * receive is posted */
            size_t n = h->len, cap = req->seg0.iov_len;
            req->status.source = g->peer;
            req->status.tag = h->tag;
            req->status.size = h->total;
            if (n > cap) {
                req->status.error = PROUST_ERR_TRUNCATE;
                n = cap;
            }
            if (n)
                proust_copy(req->seg0.iov_base, body, n);
            req->status.count = n;
            proust__request_complete(req);
            return PROUST_OK;
        }
    }
    int rc = process_chunk(s, g, h, body, is_new, is_new, req, acts);
    return rc == PROUST_OK ? drain_stash(s, g, acts) : rc;
}

/* Carry out the answers decided under the match locks (no lock held). */
static void run_actions(struct proust_session *s, int peer, struct actions *acts)
{
    for (unsigned i = 0; i < acts->n; i++) {
        struct action *a = &acts->a[i];
        if (a->kind == ACT_ACK) {
            proust__send_control(s, peer, PROUST__CH_ACK, a->sender_token, NULL, 0);
        } else if (a->kind == ACT_LANDED) { /* an offer's data came before its RTS */
            proust__match_lock(&s->gates[peer]);
            proust__offer_drop(s, a->req);
            proust__match_unlock(&s->gates[peer]);
            proust__segment_landed(s, peer, a->req);
        } else if (a->kind == ACT_GET && acts->defer_gets)
            proust__queue_get(s, peer, a->req, a->seg, a->sender_token, a->accepted, a->key,
                              a->key_len, a->sender_waits);
        else if (a->kind == ACT_GET)
            proust__do_get(s, peer, a->req, a->seg, a->sender_token, a->accepted, a->key,
                           a->key_len);
        else
            proust__send_cts(s, peer, a->req, a->seg, a->sender_token, a->accepted);
    }
    acts->n = 0;
}

/* Leave the gate's stripe and carry out what was decided under it. */
static void flush_decisions(struct proust_session *s, int peer, struct actions *acts,
                            bool *locked)
{
    if (*locked) {
        proust__match_unlock(&s->gates[peer]);
        *locked = false;
    }
    if (acts->n)
        run_actions(s, peer, acts);
}

void proust__on_packet(void *engine, int peer, const void *data, size_t len)
{
    struct proust_session *s = engine;
    struct proust__gate *g = &s->gates[peer];
    struct proust__wire_reader rd;
    struct proust__wire_chunk ch;
    struct actions acts;
    const char *why = NULL;
    bool locked = false;
    if (atomic_load_explicit(&g->failed, memory_order_acquire))
        return; /* what a failed peer still sends is not trusted */
    acts.n = 0;
    acts.defer_gets = g->rail->ops->write != NULL;
    /* most packets are one small message: one pass of the loop, no reader */
    bool single = proust__wire_single_data(data, len, &ch);
    int rc = single ? PROUST_OK : proust__wire_open(&rd, data, len, &why);
    while (rc == PROUST_OK && (single || (rc = proust__wire_next(&rd, &ch, &why)) == 1)) {
        rc = PROUST_OK;
        if (ch.hdr.type != PROUST__CH_DATA && ch.hdr.type != PROUST__CH_RTS) {
            /* control chunks take the gate lock: leave the stripe first */
            flush_decisions(s, peer, &acts, &locked);
            if (ch.hdr.type == PROUST__CH_CTS) {
                struct proust__cts_body cts;
                memcpy(&cts, ch.body, sizeof cts);
                proust__send_on_cts(s, peer, &cts);
            } else if (ch.hdr.type == PROUST__CH_PUSH) {
                struct proust__push_body pb;
                memcpy(&pb, ch.body, sizeof pb);
                proust__send_on_push(s, peer, &pb, ch.body + sizeof pb);
            } else if (ch.hdr.type == PROUST__CH_DONE) {
                if (!proust__offer_on_done(s, peer, ch.hdr.total))
                    proust__recv_on_done(s, peer, ch.hdr.total);
            } else if (ch.hdr.type == PROUST__CH_OFFER) {
                proust__send_on_offer(s, peer, &ch.hdr, ch.body);
            } else if (ch.hdr.type == PROUST__CH_OFFER_NO) {
                proust__recv_on_offer_no(s, peer, ch.hdr.total,
                                         (ch.hdr.flags & PROUST__CF_EXCHANGE) != 0);
            } else if (ch.hdr.type == PROUST__CH_REVOKE) {
                proust__send_on_revoke(s, peer, ch.hdr.total);
            } else if (ch.hdr.type == PROUST__CH_CANCEL) {
                proust__recv_on_cancel(s, peer, &ch.hdr);
            } else if (ch.hdr.type == PROUST__CH_CANCEL_ANS) {
                proust__send_on_cancel_answer(s, peer, ch.hdr.total,
                                              (ch.hdr.flags & PROUST__CF_CANCELLED) != 0);
            } else {
                proust__send_on_ack(s, peer, ch.hdr.total);
            }
            continue;
        }
        /* consecutive message chunks (an aggregated packet) share one
         * acquisition of the gate's stripe */
        if (!locked) {
            proust__match_lock(g);
            locked = true;
        }
        rc = on_message_chunk(s, g, &ch.hdr, ch.body, &acts);
        /* a drained stash may hold more than one action list's worth */
        while (rc == PROUST_OK && stash_ready(g)) {
            flush_decisions(s, peer, &acts, &locked);
            proust__match_lock(g);
            locked = true;
            rc = drain_stash(s, g, &acts);
        }
        if (rc != PROUST_OK && !why)
            why = rc == PROUST_ERR_NOMEM ? "out of memory keeping an unexpected message"
                                         : "chunk of an unknown or duplicate message";
        if (acts.n + 2 > ACTS_MAX)
            flush_decisions(s, peer, &acts, &locked);
        if (single)
            break;
    }
    if (acts.n)
        flush_decisions(s, peer, &acts, &locked);
    else if (locked) /* the common end: nothing to answer */
        proust__match_unlock(g);
    if (rc < 0)
        proust__gate_fail(s, g, PROUST_ERR_PROTO, why ? why : "malformed packet");
}

void proust__on_peer_failed(void *engine, int peer, int status, const char *why)
{
    struct proust_session *s = engine;
    if (peer >= 0 && peer < s->size)
        proust__gate_fail(s, &s->gates[peer], status, why);
}

/* Receive an unexpected message `m` with `req` (m's stripe held); the
 * answers are left in acts. */
static void recv_take(struct proust_session *s, struct proust_request *req,
                      struct proust__inmsg *m, struct actions *acts)
{
    struct proust__gate *g = &s->gates[m->source];
    m->req = req;
    bind_request(req, m->source, m->tag, m->nseg, m->size);
    for (uint16_t i = 0; i < m->nseg; i++)
        if (m->seg[i].state == PROUST__SEG_EAGER || m->seg[i].state == PROUST__SEG_RTS)
            inmsg_replay(s, g, m, i, acts);
    if (m->nseg_seen < m->nseg) {
        m->next = g->active;
        g->active = m;
        int failed = atomic_load_explicit(&g->failed, memory_order_acquire);
        if (failed) /* a segment still to come from a failed peer never will */
            proust__request_fail(req, failed);
    } else {
        proust__inmsg_release(s, m);
    }
}

/* Has every segment of m arrived, eager (its data held here)? */
static bool inmsg_whole_eager(const struct proust__inmsg *m)
{
    if (m->nseg_seen < m->nseg)
        return false;
    for (uint16_t i = 0; i < m->nseg; i++)
        if (m->seg[i].state != PROUST__SEG_EAGER)
            return false;
    return true;
}

/* A receive on the caller's stack (only filled) takes an unexpected
 * one-segment eager message without an ACK to send: copy, status, and the
 * descriptor back -- what recv_take and deliver_segment do for that case,
 * without the bookkeeping of a request someone waits on. */
static void take_small_inline(struct proust_session *s, struct proust_request *req,
                              struct proust__inmsg *m)
{
    struct proust__inseg *sg = &m->seg[0];
    size_t cap = req->seg0.iov_len;
    size_t take = sg->len < cap ? sg->len : cap;
    if (take)
        proust_copy(req->seg0.iov_base, sg->data, take);
    req->status.source = m->source;
    req->status.tag = m->tag;
    req->status.size = m->size;
    req->status.count = take;
    req->status.error = m->size > req->total || sg->len > cap ? PROUST_ERR_TRUNCATE : PROUST_OK;
    proust__inmsg_release(s, m);
}

/* Post req. With `heap`, req is on the caller's stack, only filled
 * (proust__recv_fill): it is initialised here only if it takes a message
 * that has wholly arrived eager (*heap = NULL: req is complete); anything
 * else goes on with a request from the thread's cache (reserved by the
 * caller), *heap. Inlined in the nonblocking posting path. */
static inline __attribute__((always_inline)) int
recv_post(struct proust_session *s, struct proust_request *req, unsigned how,
          struct proust_request **heap)
{
    struct proust__offer_msg offer;
    bool offered = false;
    struct actions acts;
    acts.n = 0;
    acts.defer_gets = (how & PROUST__POST_NONBLOCKING) != 0;
    /* ANY_SOURCE: every stripe, so no message can arrive between the search
     * of the unexpected messages and the queueing of the receive */
    proust__match_lock_source(s, req->peer);
    /* a message that arrived before its sender failed is still delivered */
    struct proust__inmsg *m =
        req->peer != PROUST_ANY_SOURCE && !s->gates[req->peer].unexp_head
            ? NULL /* the common case of a posted receive: no call */
            : proust__unexpected_find(s, req->peer, req->tag, req->mask, true);
    int source = m ? m->source : req->peer;
    bool taken = false; /* by the stack request, whole */
    if (heap) {
        *heap = NULL;
        if (!m || !inmsg_whole_eager(m)) {
            struct proust_request *h = proust__request_alloc(s, PROUST__REQ_RECV);
            proust__recv_fill(h, req->seg0.iov_base, req->seg0.iov_len, req->peer, req->tag,
                              req->mask);
            *heap = req = h;
        } else if (m->nseg == 1 && !(m->flags & PROUST__CF_SYNC)) {
            take_small_inline(s, req, m);
            taken = true;
        } else {
            proust__request_init(req, s, PROUST__REQ_RECV); /* only filled until now */
        }
    }
    if (taken) {
        /* complete: the caller reads its status */
    } else if (m) {
        recv_take(s, req, m, &acts);
    } else if (req->peer != PROUST_ANY_SOURCE && atomic_load(&s->gates[req->peer].failed)) {
        req->status.source = req->peer;
        req->status.error = atomic_load(&s->gates[req->peer].failed);
        proust__request_complete(req);
    } else {
        req->where = PROUST__IN_POSTED;
        proust__posted_append(s, req);
        /* most receives are too small to offer: no call for them */
        offered = (how & PROUST__POST_MAY_OFFER) && s->offer_bytes &&
                  req->total >= s->offer_bytes && proust__offer_prepare(s, req, &offer);
    }
    proust__match_unlock_source(s, req->peer);
    if (acts.n)
        run_actions(s, source, &acts);
    if (offered)
        proust__offer_send(s, req->peer, &offer);
    return PROUST_OK;
}

/* The blocking receives' copy, out of line: inlined there too, it cost
 * their ping-pong 2-3 %. */
static __attribute__((noinline)) int recv_post_blocking(struct proust_session *s,
                                                        struct proust_request *req, unsigned how)
{
    return recv_post(s, req, how, NULL);
}

int proust__recv_post(struct proust_session *s, struct proust_request *req, unsigned how)
{
    PROUST__COARSE_ENTER(&s->prog);
    int rc = recv_post_blocking(s, req, how);
    PROUST__COARSE_LEAVE(&s->prog);
    if (req->total >= PROUST__KICK_BYTES) /* its RTS may come while we compute */
        proust__threads_kick(&s->prog);
    return rc;
}

struct proust_request *proust__recv_post_inline(struct proust_session *s,
                                                struct proust_request *tmp, unsigned how)
{
    struct proust_request *heap = NULL;
    PROUST__COARSE_ENTER(&s->prog);
    recv_post(s, tmp, how, &heap);
    PROUST__COARSE_LEAVE(&s->prog);
    if (heap && heap->total >= PROUST__KICK_BYTES)
        proust__threads_kick(&s->prog);
    return heap;
}

int proust__recv_post_message(struct proust_session *s, struct proust_request *req,
                              struct proust__inmsg *m)
{
    struct actions acts;
    acts.n = 0;
    acts.defer_gets = true;
    struct proust__gate *g = &s->gates[m->source];
    PROUST__COARSE_ENTER(&s->prog);
    proust__match_lock(g);
    recv_take(s, req, m, &acts);
    proust__match_unlock(g);
    if (acts.n)
        run_actions(s, g->peer, &acts);
    PROUST__COARSE_LEAVE(&s->prog);
    return PROUST_OK;
}

void proust__recv_pull_landed(struct proust_session *s, int peer, struct proust_request *holder)
{
    struct proust__gate *g = &s->gates[peer];
    struct actions acts;
    acts.n = 0;
    acts.defer_gets = false;
    int err = atomic_load_explicit(&holder->error, memory_order_acquire);
    proust__match_lock(g);
    struct proust__inmsg *m = holder->held_for;
    struct proust__inseg *sg = &m->seg[holder->held_seg];
    m->nseg_seen++;
    int cancel = -1; /* a cancel that waited for the data: -1 none, 0 not done, 1 done */
    uint64_t cancel_token = m->cancel_token;
    if (!m->req) { /* still unexpected: the receive that comes copies it */
        sg->state = PROUST__SEG_EAGER;
        if (err != PROUST_OK) { /* no data: a receive will find the peer failed */
            inseg_release(g->ms, m, sg);
            sg->state = PROUST__SEG_RTS;
            sg->key_len = 0;
        }
        if (m->cancel_pending && !proust__inmsg_pulling(m)) {
            /* drop it if still queued (an improbe may have taken it) */
            struct proust__inmsg *t = proust__unexpected_take_seq(s, g, m->seq, m->tag);
            m->cancel_pending = false;
            cancel = t != NULL;
            if (t)
                proust__inmsg_release(s, t);
        }
    } else {
        /* a receive matched it meanwhile: it gets the data now, unless the
         * gate failed (which failed that receive already, and kept m) */
        struct proust_request *req = m->req;
        sg->state = PROUST__SEG_DONE;
        if (m->cancel_pending) { /* matched before the data came: too late */
            m->cancel_pending = false;
            cancel = 0;
        }
        if (atomic_load_explicit(&g->failed, memory_order_acquire)) {
            cancel = -1; /* nobody to answer */
        } else if (err == PROUST_OK) {
            deliver_segment(s, g, req, holder->held_seg, sg->data, sg->len,
                            holder->held_seg == 0 ? m->flags : 0, m->sync_token, NULL, NULL,
                            &acts);
        } else {
            proust__request_set_error(req, err);
            proust__request_event_done(req);
        }
        inseg_release(g->ms, m, sg);
        if (m->nseg_seen == m->nseg) {
            gate_active_remove(g, m);
            proust__inmsg_release(s, m);
        }
    }
    proust__match_unlock(g);
    if (acts.n)
        run_actions(s, peer, &acts);
    if (cancel >= 0)
        proust__send_control_ext(s, peer, PROUST__CH_CANCEL_ANS, cancel ? PROUST__CF_CANCELLED : 0,
                                 cancel_token, 0, 0, NULL, 0);
    proust__request_release(holder);
}

void proust__inmsg_free(struct proust__inmsg *m)
{
    for (uint16_t i = 0; i < m->nseg; i++)
        inseg_release(NULL, m, &m->seg[i]);
    free(m);
}

void proust__recv_cleanup(struct proust_session *s)
{
    for (int r = 0; r < s->size; r++) {
        struct proust__gate *g = &s->gates[r];
        /* receives never matched keep their requests (freed with the
         * session) but not their offers */
        for (struct proust_request *q = g->posted_head; q; q = q->next)
            proust__offer_drop(s, q);
        for (struct proust_request *q = g->receiving_head; q; q = q->next)
            proust__offer_drop(s, q);
        while (g->stash) {
            struct proust__stashed *st = g->stash;
            g->stash = st->next;
            free(st);
        }
        while (g->unexp_head) {
            struct proust__inmsg *m = g->unexp_head;
            g->unexp_head = m->next;
            proust__inmsg_free(m);
        }
        while (g->active) {
            struct proust__inmsg *m = g->active;
            g->active = m->next;
            proust__inmsg_free(m);
        }
    }
}
