/*
 * config.h — every PROUST_* environment variable of the engine, declared
 * once. The layers above declare theirs in tables of their own and
 * register them (proust_config_register: Proust MPI's are in
 * src/mpi/init/mpi_config.h). proust-info prints them all; an unknown PROUST_*
 * variable in the environment draws a warning with the closest known name.
 */
#ifndef PROUST_CONFIG_H
#define PROUST_CONFIG_H

#include <stddef.h>

#include "proust.h"

/* X(id, environment name, default, documentation) */
#define PROUST_CONFIG_LIST(X)                                                                   \
    X(STRATEGY, "PROUST_STRATEGY", "auto",                                                      \
      "packet scheduling strategy: auto (each peer's from its rail's measured cost of a small " \
      "packet: coalesce from PROUST_COALESCE_NS, as on tcp, else default, as on shm), default " \
      "(one chunk per packet, sent at once), aggreg (merge pending small chunks to the same "   \
      "peer into one packet), coalesce (a lone chunk at once, a burst of posts merged) or "     \
      "split_balance (as default, and the data of a large rendezvous sent by puts is split "    \
      "across every rail of PROUST_RAILS that reaches the peer, in proportion to their "        \
      "bandwidth)")                                                                             \
    X(COALESCE_NS, "PROUST_COALESCE_NS", "1000",                                                \
      "PROUST_STRATEGY=auto: a rail whose small packets cost this many nanoseconds to send or " \
      "more (measured on one send in 32) gets coalesce, a cheaper one default")                \
    X(BOOT, "PROUST_BOOT", "auto",                                                              \
      "how a process finds its job: auto (proustrun's embedded protocol where PROUST_BOOT_FD "  \
      "is set, else PMIx where PMIX_NAMESPACE and PMIX_RANK are: Open MPI's mpirun, srun "    \
      "--mpi=pmix; else PMI-1 where PMI_FD or PMI_PORT is: MPICH's Hydra, srun --mpi=pmi2; "   \
      "else a one-process job), or one of embedded, pmix, pmi1, pmi2 (PMI-2's own messages, " \
      "over PMI_FD: srun --mpi=pmi2, Hydra), singleton")                                      \
    X(LAUNCH_AGENT, "PROUST_LAUNCH_AGENT", "ssh",                                               \
      "how proustrun runs its agent on another host: CMD HOST COMMAND (words split on "        \
      "spaces), as Hydra's -launcher-exec and Open MPI's plm_rsh_agent; --launch-agent wins; " \
      "proustrun must be at the same path on every host (read by proustrun only)")             \
    X(RAILS, "PROUST_RAILS", "self,shm,tcp",                                                    \
      "rails to use, in order of preference (self, shm, tcp, ofi); each peer gets the first "  \
      "one that reaches it; a rail that cannot open here (ofi without a usable provider) is "  \
      "left out with a warning")                                                                \
    X(OFI_PROVIDER, "PROUST_OFI_PROVIDER", "auto",                                              \
      "the libfabric provider of the ofi rail: its full name (tcp;ofi_rxm, verbs;ofi_rxm) or "  \
      "first part (verbs, efa, tcp); auto = the best one present with reliable datagrams, "     \
      "messages and RMA (cxi, efa, opx, psm3, psm2, verbs, tcp, net, ucx, udp;ofi_rxd in that "\
      "order); sockets, bare udp and shm only when named")                                      \
    X(OFI_READ_MIN, "PROUST_OFI_READ_MIN", "0",                                                 \
      "rendezvous data on the ofi rail from this size (bytes, K/M suffixes) is read by the "    \
      "receiver straight from the sender's registered memory (fi_read): a blocking send's RTS " \
      "carries the key, other sends announce their pieces after the CTS; smaller pieces go as " \
      "messages; 0 = the rail's own (256K), off = never (messages only)")                        \
    X(OFI_RMA_MAX, "PROUST_OFI_RMA_MAX", "0",                                                   \
      "bytes one one-sided transfer of the ofi rail moves at most (proust_rma_write/read, MPI " \
      "puts and gets across hosts); larger ones go in pieces of this size, all in flight; 0 = " \
      "the provider's largest message")                                                         \
    X(OFI_RING, "PROUST_OFI_RING", "auto",                                                      \
      "seed 003's slot rings on the ofi rail: after PROUST_OFI_RING_AFTER messages to a peer, " \
      "the sender asks it for a ring of registered slots and writes its small messages there " \
      "with one remote write each (credits come back on the receiver's traffic); on, off, "    \
      "auto = on where a NIC moves the bytes (not a software provider such as tcp)")            \
    X(OFI_RING_AFTER, "PROUST_OFI_RING_AFTER", "16",                                            \
      "messages to a peer before its sender asks for a slot ring (PROUST_OFI_RING)")            \
    X(OFI_RING_PEERS, "PROUST_OFI_RING_PEERS", "32",                                            \
      "slot rings a process grants at most (memory stays bounded whatever the job's size: "   \
      "each holds PROUST_OFI_RING_SLOTS slots of PROUST_OFI_RING_SLOT bytes)")                 \
    X(OFI_RING_SLOTS, "PROUST_OFI_RING_SLOTS", "64", "slots of a slot ring (PROUST_OFI_RING)") \
    X(OFI_RING_SLOT, "PROUST_OFI_RING_SLOT", "1K",                                              \
      "bytes of a slot of a slot ring, headers included (at least 256); messages that do not " \
      "fit go as messages")                                                                     \
    X(RAIL_BANDWIDTH, "PROUST_RAIL_BANDWIDTH", "",                                              \
      "measured bandwidth of rails, rail:GB/s pairs (ofi:11.5,tcp:1.1; bench/ofi/calibrate.sh " \
      "prints them), replacing the rails' built-in profiles for split_balance's shares and "    \
      "placement; empty = the profiles")                                                        \
    X(RDV_THRESHOLD, "PROUST_RDV_THRESHOLD", "0",                                               \
      "message size (bytes, K/M suffixes) from which rendezvous is used; 0 = each rail's own")  \
    X(LOG_LEVEL, "PROUST_LOG_LEVEL", "warn", "error, warn, info, debug or trace")               \
    X(SHM_RING_SIZE, "PROUST_SHM_RING_SIZE", "0",                                               \
      "bytes of each shared-memory ring (one per pair that talks, in the receiver's segment, " \
      "given memory as it is used: 4K on the sender's first message, 64K, then up to 4M); "  \
      "a power of two; 0 = by processes on the node: 1M up to 8, 512K up to 32, else 256K")   \
    X(SHM_GET_THRESHOLD, "PROUST_SHM_GET_THRESHOLD", "0",                                       \
      "shm rendezvous size from which the receiver copies straight from the sender "           \
      "(process_vm_readv); smaller ones stream through the ring; 0 = every rendezvous")        \
    X(TCP_IF_INCLUDE, "PROUST_TCP_IF_INCLUDE", "",                                              \
      "the tcp rail publishes only the addresses of these interfaces (names or CIDR blocks, "  \
      "comma-separated; loopback too if named); empty: every interface that is up, but "       \
      "loopback and virtual bridges (docker*, virbr*)")                                          \
    X(TCP_IF_EXCLUDE, "PROUST_TCP_IF_EXCLUDE", "",                                              \
      "interfaces (names or CIDR blocks, comma-separated) whose addresses the tcp rail does "   \
      "not publish, besides loopback and virtual bridges")                                      \
    X(TCP_ADDR, "PROUST_TCP_ADDR", "",                                                          \
      "IPv4 address (or interface) the tcp rail listens on and publishes, alone; empty = "     \
      "every address, publishing those PROUST_TCP_IF_INCLUDE/EXCLUDE leave")                    \
    X(TCP_CONNECT_TIMEOUT, "PROUST_TCP_CONNECT_TIMEOUT", "20",                                  \
      "seconds the tcp rail tries to connect to a peer (on demand: from the first message "    \
      "to it; all pairs: at init) before it counts the peer as failed")                        \
    X(TCP_CONNECT, "PROUST_TCP_CONNECT", "lazy",                                                \
      "when the tcp rail connects to a peer: lazy (on the first message either way; a job "    \
      "whose ranks talk to few peers opens few connections) or eager (every pair at init)")     \
    X(PEER_CHECK_MS, "PROUST_PEER_CHECK_MS", "200",                                             \
      "a wait that sees no progress for this long checks that its peers are alive")            \
    X(PROGRESS, "PROUST_PROGRESS", "auto",                                                      \
      "event detection: auto (thread where the node has more cores than ranks, else block), "  \
      "thread (background progress threads; waiters poll, then sleep), "                        \
      "block (no thread; a waiter polls, then blocks in the kernel) or poll (waiters never "    \
      "block: lowest latency on dedicated cores)")                                              \
    X(PROGRESS_THREADS, "PROUST_PROGRESS_THREADS", "0",                                         \
      "background progress threads with PROUST_PROGRESS=thread; 0 = one per NUMA node the "    \
      "process may run on")                                                                     \
    X(RDV_THREAD, "PROUST_RDV_THREAD", "off",                                                   \
      "with PROUST_PROGRESS=block: on = a helper thread, asleep until a nonblocking transfer "   \
      "of 256 KiB or more on a rail where our cpu moves the data (tcp) is in flight while the " \
      "application computes, advances it on another core; off (default): such transfers move " \
      "inside Wait")                                                                            \
    X(SPIN_US, "PROUST_SPIN_US", "auto",                                                        \
      "microseconds a waiter polls before it sleeps; auto = the cost of a blocking wake-up "       \
      "measured at init (20 to 200); 0 while the cpus are overcommitted and the waiter's "      \
      "own process computes on other threads")                                                  \
    X(HANDOFF, "PROUST_HANDOFF", "migrate",                                                     \
      "every cpu busy, and the rank a waiter waits for is queued behind it on its cpu: "        \
      "migrate (the waiter moves to another cpu it may use; its affinity mask is kept) or "     \
      "sleep (it hands the cpu over)")                                                          \
    X(WAIT_BOOST, "PROUST_WAIT_BOOST", "auto",                                                  \
      "a thread asleep in a wait while its own process's threads keep every cpu busy takes a " \
      "100 us slice (Linux 6.12+) and, where permitted (CAP_SYS_NICE or RLIMIT_NICE), a nice " \
      "10 lower until the wait ends, so that its wake-up preempts them: auto, slice (the "     \
      "slice only) or off")                                                                     \
    X(OFFLOAD_BYTES, "PROUST_OFFLOAD_BYTES", "1M",                                             \
      "a rendezvous copy of at least twice this size is cut into pieces of this size that "    \
      "idle threads (progress threads, waiting threads) copy in parallel; 0 = never "           \
      "(only with PROUST_PROGRESS=thread on 2+ cores)")                                         \
    X(LOCKING, "PROUST_LOCKING", "fine",                                                        \
      "fine (per gate, per rail, per queue locks) or coarse (one session lock around every "    \
      "post and progress pass, for comparison)")                                               \
    X(OFFER_BYTES, "PROUST_OFFER_BYTES", "128K",                                               \
      "a nonblocking receive of at least this size, for one source, is offered to its sender, "\
      "which writes the message straight into it (shm) while the receiver computes; 0 = never")\
    X(IDLE_PULL_BYTES, "PROUST_IDLE_PULL_BYTES", "64M",                                        \
      "a process that waits with nothing to do pulls the rendezvous messages waiting "          \
      "unexpected into its own memory, up to this many bytes in all, so that their senders "   \
      "complete before the receives are posted (as MPICH buffers them; a program that relies " \
      "on it hangs otherwise); synchronous sends are left alone; 0 = never")                    \
    X(MATCH_STRIPES, "PROUST_MATCH_STRIPES", "16",                                              \
      "locks over the receive-side matching state: peer i's messages and receives are "        \
      "matched under lock i % N (N is at most the number of ranks); ANY_SOURCE receives take " \
      "them all; 1 = one matching lock per session (for comparison)")                          \
    X(PLACEMENT, "PROUST_PLACEMENT", "auto",                                                    \
      "auto (progress threads and buffers near the NIC of the rail that matters, the process "  \
      "too unless the user bound it), override (the same, replacing the user's binding) or "    \
      "off (bind nothing)")                                                                     \
    X(PLACEMENT_HINT, "PROUST_PLACEMENT_HINT", "latency",                                       \
      "what placement follows where rails disagree: latency (the fastest rail's NIC), "         \
      "bandwidth (the NICs of the widest rails) or cores (one progress thread, the process "    \
      "stays where it is); overrides proust_placement_hint()")                                  \
    X(TOPOLOGY, "PROUST_TOPOLOGY", "",                                                          \
      "an hwloc XML file to decide placement on instead of this machine (nothing is then "      \
      "bound: for proust-info and experiments)")

typedef enum {
#define PROUST_CONFIG_ENUM(id, name, def, doc) PROUST_CFG_##id,
    PROUST_CONFIG_LIST(PROUST_CONFIG_ENUM)
#undef PROUST_CONFIG_ENUM
    PROUST_CFG_COUNT
} proust__config_id_t;

/* The table, indexed by proust__config_id_t. */
extern const proust_config_var_t proust__config_table[PROUST_CFG_COUNT];

/* The value in force: the environment's, else the default. */
const char *proust__config_str(proust__config_id_t id);
/* Was the variable set in the environment? */
int proust__config_is_set(proust__config_id_t id);
/* Parse as a size with optional K/M/G suffix; *out untouched on error. */
int proust__config_size(proust__config_id_t id, size_t *out);
int proust__config_long(proust__config_id_t id, long *out);
/* Parse "123", "64K", "16M", "1G". */
int proust__parse_size(const char *text, size_t *out);
/* Warn about PROUST_* variables that are in no table: the engine's, or
 * one registered by a layer above (proust_config_register). */
void proust__config_check_unknown(void);

#endif
