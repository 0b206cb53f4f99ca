/*
 * wire.h — the protocol between proustrun and each process it starts.
 *
 * Transport. proustrun creates one AF_UNIX SOCK_STREAM socketpair per rank;
 * the child inherits its end across exec (the only descriptor proustrun
 * leaves without close-on-exec, apart from 0/1/2) and finds its number in
 * PROUST_BOOT_FD. Both ends are on the same host: integers are in host byte
 * order.
 *
 * Environment given to each rank: PROUST_RANK, PROUST_SIZE,
 * PROUST_LOCAL_RANK, PROUST_LOCAL_SIZE (all decimal), PROUST_JOBID (unique
 * per job on the host, "<launcher pid>-<hex>"), PROUST_BOOT_FD.
 *
 * Record. A 16-byte header, then `len` payload bytes:
 *     uint32 len    payload bytes after the header, <= PROUST_WIRE_MAX_PAYLOAD
 *     uint16 type   PROUST_WIRE_*
 *     uint16 magic  PROUST_WIRE_MAGIC (catches a stray descriptor or a
 *                   launcher/library version mismatch)
 *     int32  rank   meaning depends on the type
 *     int32  arg    meaning depends on the type
 * A record that breaks these rules ends the connection.
 *
 * Process -> launcher (a process has at most one request awaiting a reply,
 * so replies carry no identifier and arrive in order):
 *   PUT    rank = sender, arg = key length k (1..PROUST_WIRE_MAX_KEY),
 *          payload = k key bytes (no NUL) then the value. No reply. The value
 *          replaces any earlier one under the same (rank, key); it is
 *          visible to every GET handled after it.
 *   GET    rank = owner of the wanted value, payload = key. Reply GET_REPLY.
 *   GET_ALL  payload = key. Reply GET_ALL_REPLY: every rank's value under
 *          that key in one exchange (a process that needs all of them, such
 *          as the shm rail looking for its host's ranks, makes one request,
 *          not one per rank: n per process was n^2 for the launcher).
 *   FENCE  no payload. Reply FENCE_DONE once every rank has entered the
 *          fence; puts sent before a FENCE are visible to gets after it.
 *   ABORT  arg = exit code wanted for the job, payload = reason (text, no
 *          NUL). No reply: the launcher kills every rank.
 *
 * Launcher -> process:
 *   GET_REPLY   arg = PROUST_OK and payload = the value, or
 *               arg = PROUST_ERR_INVALID (no such key) and no payload.
 *   GET_ALL_REPLY  arg = PROUST_OK, rank = the job's size n, payload = n
 *               entries in rank order, each an int32 length (-1: that rank
 *               put nothing under the key) then that many bytes; or arg =
 *               PROUST_ERR_NOMEM (the values exceed a record) and no payload:
 *               ask rank by rank.
 *   FENCE_DONE  arg = PROUST_OK, or PROUST_ERR_PEER_FAILED when the fence can
 *               never complete (a rank exited or closed its connection
 *               without entering it).
 *   FAILED      unsolicited, may arrive at any time (also between a request
 *               and its reply): rank = a rank that died abnormally, arg = its
 *               exit code (> 0) or -signal, payload = text such as
 *               "rank 3 died (exited with code 2)". Sent once per dead rank.
 *
 * Closing the connection is a normal end (a finalized process); the launcher
 * treats only a process's exit status as success or failure.
 */
#ifndef PROUST_BOOT_WIRE_H
#define PROUST_BOOT_WIRE_H

#include <stdint.h>

#define PROUST_WIRE_MAGIC 0x5042u /* "PB" */
#define PROUST_WIRE_MAX_KEY 256
#define PROUST_WIRE_MAX_PAYLOAD (16u << 20)

enum proust__wire_type {
    PROUST_WIRE_PUT = 1,
    PROUST_WIRE_GET = 2,
    PROUST_WIRE_FENCE = 3,
    PROUST_WIRE_ABORT = 4,
    PROUST_WIRE_GET_ALL = 5,
    PROUST_WIRE_GET_REPLY = 16,
    PROUST_WIRE_FENCE_DONE = 17,
    PROUST_WIRE_FAILED = 18,
    PROUST_WIRE_GET_ALL_REPLY = 19,
};

struct proust__wire_hdr {
    uint32_t len;
    uint16_t type;
    uint16_t magic;
    int32_t rank;
    int32_t arg;
};

_Static_assert(sizeof(struct proust__wire_hdr) == 16, "wire header must be 16 bytes");

/* A GET_ALL_REPLY payload of `len` bytes for `n` ranks: off[r] and vlen[r]
 * (-1: none) of each rank's value. 0, or -1 when the bytes do not make
 * exactly n entries (a launcher that answers garbage). */
static inline int proust__wire_all_parse(const unsigned char *p, size_t len, int n, size_t *off,
                                         int32_t *vlen)
{
    size_t pos = 0;
    for (int r = 0; r < n; r++) {
        int32_t l;
        if (len - pos < sizeof l)
            return -1;
        __builtin_memcpy(&l, p + pos, sizeof l);
        pos += sizeof l;
        if (l < -1 || (l >= 0 && (size_t)l > len - pos))
            return -1;
        off[r] = pos;
        vlen[r] = l;
        pos += l > 0 ? (size_t)l : 0;
    }
    return pos == len ? 0 : -1;
}

/* Environment variables set by the launcher for each rank. */
#define PROUST_ENV_RANK "PROUST_RANK"
#define PROUST_ENV_SIZE "PROUST_SIZE"
#define PROUST_ENV_LOCAL_RANK "PROUST_LOCAL_RANK"
#define PROUST_ENV_LOCAL_SIZE "PROUST_LOCAL_SIZE"
#define PROUST_ENV_JOBID "PROUST_JOBID"
#define PROUST_ENV_BOOT_FD "PROUST_BOOT_FD"
/* cpus the launcher had for the job on this node: with ranks bound one
 * per core, each sees one cpu, yet the node is not oversubscribed */
#define PROUST_ENV_NODE_CPUS "PROUST_NODE_CPUS"

#endif
