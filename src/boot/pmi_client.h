/*
 * pmi_client.h — private to the PMI bootstraps: pmi1.c (the PMI-1 "simple"
 * lines, the store's key layout, local ranks, the boot ops) and pmi2.c
 * (PMI-2's own messages, start and barrier), which share one connection
 * state and one store.
 */
#ifndef PROUST_BOOT_PMI_CLIENT_H
#define PROUST_BOOT_PMI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "boot/boot.h"
#include "boot/pmi_wire.h"

struct pmi1 {
    int fd;
    int v2; /* PMI-2 messages (PROUST_BOOT=pmi2), else PMI-1 lines */
    unsigned fences; /* PMI-2: fences done, names each one's keys */
    char kvsname[256];
    size_t keylen_max, vallen_max;
    char in[PROUST__PMI_LINE_MAX + 2]; /* bytes read, not yet a whole line */
    size_t inlen;
};

/* pmi1.c */
int proust__pmi_send_line(struct pmi1 *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int proust__pmi_read_reply(struct pmi1 *p, const char *cmd, struct proust__pmi_msg *msg);
int proust__pmi_reply_rc(const struct proust__pmi_msg *msg, const char *what, bool quiet);
int proust__pmi_expect_count(const struct proust__pmi_msg *msg, const char *key, size_t *out);
int proust__pmi_kvs_put(struct pmi1 *p, const char *key, const char *value);
int proust__pmi_kvs_get(struct pmi1 *p, const char *key, char *out, size_t cap);
int proust__pmi_launcher_fence(struct pmi1 *p);
int proust__pmi_find_local(proust__boot_t *boot);
void proust__pmi_name_job(proust__boot_t *boot, const char *kvs);
int proust__pmi_init(proust__boot_t *boot, int v2);
int proust__pmi_put(proust__boot_t *boot, const char *key, const void *value, size_t len);
int proust__pmi_get_value(proust__boot_t *boot, int rank, const char *key, void *value,
                          size_t *len);
int proust__pmi_fence(proust__boot_t *boot);
void proust__pmi_abort(proust__boot_t *boot, int code, const char *why);
void proust__pmi_finalize(proust__boot_t *boot);
int proust__pmi_job_mapping(struct pmi1 *p, char *out, size_t cap);

/* pmi2.c */
int proust__pmi2_send(struct pmi1 *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int proust__pmi2_read(struct pmi1 *p, const char *cmd, struct proust__pmi_msg *msg);
int proust__pmi2_start(proust__boot_t *boot, struct pmi1 *p);
int proust__pmi2_barrier(proust__boot_t *boot, struct pmi1 *p);

#endif
