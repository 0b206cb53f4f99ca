/*
 * file_hints_file.h — the parser of a hints file (file_hints_file.c).
 */
#ifndef PROUST_MPI_FILE_HINTS_FILE_H
#define PROUST_MPI_FILE_HINTS_FILE_H

#include <stdbool.h>
#include <stddef.h>

#define PM_HINT_KEY_MAX 255  /* MPI_MAX_INFO_KEY - 1 */
#define PM_HINT_VAL_MAX 1023 /* MPI_MAX_INFO_VAL - 1 */

typedef void (*pm_hint_put_fn)(void *ctx, const char *key, const char *value);

/* Call put(ctx, key, value) for every "key value" line of text[0..len);
 * returns the lines refused (no value, too long, a NUL byte), the first
 * described in why. Never reads past len. */
int pm_hints_file_parse(const char *text, size_t len, pm_hint_put_fn put, void *ctx,
                        char *why, size_t whylen);

#endif /* PROUST_MPI_FILE_HINTS_FILE_H */
