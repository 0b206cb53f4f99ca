/*
 * pmi_wire.h — the text of the PMI-1 "simple" wire protocol (MPICH's Hydra,
 * Slurm's mpi/pmi2 plugin in its PMI-1 mode) and of PMI-2's messages, as
 * pure functions: parse a reply line or message, encode binary values for a store that
 * only keeps short printable strings, read a PMI_process_mapping.
 *
 * A message is one line: space-separated key=value words, the first of
 * which is cmd=NAME, ended by '\n'. Replies come from another process, so
 * every byte is checked: a line too long, unprintable, without cmd= or with
 * too many words is an error with a reason, never a crash.
 */
#ifndef PROUST_BOOT_PMI_WIRE_H
#define PROUST_BOOT_PMI_WIRE_H

#include <stddef.h>

#define PROUST__PMI_LINE_MAX 4096 /* a reply longer than this is garbage */
#define PROUST__PMI_WORDS_MAX 16

struct proust__pmi_msg {
    char buf[PROUST__PMI_LINE_MAX + 1]; /* the line, cut into words in place */
    int nwords;
    const char *key[PROUST__PMI_WORDS_MAX];
    const char *value[PROUST__PMI_WORDS_MAX];
};

/* Parse one line (without its '\n'). PROUST_OK, or PROUST_ERR_PROTO with
 * *why saying what is wrong. */
int proust__pmi_parse(const char *line, size_t len, struct proust__pmi_msg *msg,
                      const char **why);
/* Parse one PMI-2 message (its text after the 6-byte length): words
 * "key=value" ended by ';', ";;" standing for a ';' in a value, cmd=
 * first. Same result and errors as proust__pmi_parse. */
int proust__pmi2_parse(const char *text, size_t len, struct proust__pmi_msg *msg,
                       const char **why);
/* The value of `key` in a parsed message, or NULL. */
const char *proust__pmi_get(const struct proust__pmi_msg *msg, const char *key);
/* Is the message the command `cmd`? */
int proust__pmi_is(const struct proust__pmi_msg *msg, const char *cmd);

/* Hex of len bytes into out (2 * len + 1 bytes with the NUL). */
void proust__pmi_hex_encode(const void *data, size_t len, char *out);
/* Bytes of a hex string into out (capacity cap); the byte count, or -1 if
 * the string is not hex of an even length or does not fit. */
long proust__pmi_hex_decode(const char *hex, void *out, size_t cap);

/* Node of every rank from a PMI_process_mapping value such as
 * "(vector,(0,2,4),(2,1,3))": blocks of (first node, nodes, ranks per node)
 * in rank order. PROUST_OK with node[0..size-1] set, or PROUST_ERR_PROTO
 * (malformed, or not covering exactly `size` ranks). */
int proust__pmi_parse_mapping(const char *text, int size, int *node);

#endif
