/*
 * copy.h — the engine's memory copy for payloads.
 *
 * glibc copies from 2 KiB up to about the L2 size with `rep movsb`. On AMD
 * Zen processors (this VM's EPYC among them) that instruction runs an
 * order of magnitude slower when the destination sits 1-31 bytes past the
 * source modulo 64 (docs/PERFORMANCE.md, "Figures behind the code"). Buffers
 * from malloc are 16-byte
 * aligned and ring payloads follow packet headers, so about half of all
 * payload copies met that case, at random: one of the VM's "bimodal"
 * figures. proust__copy takes those copies to a vector loop (stores
 * aligned, loads not) that runs at full speed whatever the offset; every
 * other copy stays with memcpy.
 */
#ifndef PROUST_COPY_H
#define PROUST_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* from here memcpy may use `rep movsb` (glibc's x86_rep_movsb_threshold
 * is 2 KiB or more); up to here our loop replaces it (beyond, glibc's
 * own vector loop or non-temporal stores take over) */
#define PROUST__COPY_LOOP_MIN ((size_t)2048)
#define PROUST__COPY_LOOP_MAX ((size_t)4 << 20)

void proust__copy_loop(void *dst, const void *src, size_t n);

/* Is dst - src modulo 64 in 1..31 (the slow `rep movsb` case)? */
static inline int proust__copy_offset_slow(const void *dst, const void *src)
{
    return (((uintptr_t)dst - (uintptr_t)src) & 63u) - 1u < 31u;
}

/* memcpy(dst, src, n), not overlapping. */
static inline void proust__copy(void *dst, const void *src, size_t n)
{
    /* the payloads of small messages, on the latency path: two moves
     * (overlapping when n is not a power of two) instead of a call */
    if (n <= 16) {
        unsigned char *d = dst;
        const unsigned char *sr = src;
        if (n >= 8) {
            uint64_t a, b;
            memcpy(&a, sr, 8);
            memcpy(&b, sr + n - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + n - 8, &b, 8);
        } else if (n >= 4) {
            uint32_t a, b;
            memcpy(&a, sr, 4);
            memcpy(&b, sr + n - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + n - 4, &b, 4);
        } else if (n) {
            unsigned char a = sr[0], m = sr[n / 2], z = sr[n - 1];
            d[0] = a;
            d[n / 2] = m;
            d[n - 1] = z;
        }
        return;
    }
#if defined(__x86_64__)
    if (n >= PROUST__COPY_LOOP_MIN && n <= PROUST__COPY_LOOP_MAX &&
        proust__copy_offset_slow(dst, src)) {
        proust__copy_loop(dst, src, n);
        return;
    }
#endif
    memcpy(dst, src, n);
}

#endif
