/*
 * copy.c — the vector loop of proust_copy (proust.h, "Payload copy": why it
 * exists): 32-byte loads at any alignment, aligned 32-byte stores, four per
 * iteration; AVX2 where the processor has it, SSE2 (every x86-64) otherwise.
 */
#include "proust.h"

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static void copy_avx2(unsigned char *d, const unsigned char *s,
                                                      size_t n)
{
    /* the first 32 bytes unaligned, then on from d's next 32-byte boundary */
    _mm256_storeu_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
    size_t head = 32 - ((uintptr_t)d & 31u);
    d += head, s += head, n -= head;
    for (; n >= 128; d += 128, s += 128, n -= 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(s + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(s + 96));
        _mm256_store_si256((__m256i *)d, a);
        _mm256_store_si256((__m256i *)(d + 32), b);
        _mm256_store_si256((__m256i *)(d + 64), c);
        _mm256_store_si256((__m256i *)(d + 96), e);
    }
    for (; n >= 32; d += 32, s += 32, n -= 32)
        _mm256_store_si256((__m256i *)d, _mm256_loadu_si256((const __m256i *)s));
    if (n) /* the last 32 bytes, overlapping what is done */
        _mm256_storeu_si256((__m256i *)(d + n - 32), _mm256_loadu_si256((const __m256i *)(s + n - 32)));
    _mm256_zeroupper();
}

static void copy_sse2(unsigned char *d, const unsigned char *s, size_t n)
{
    _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    size_t head = 16 - ((uintptr_t)d & 15u);
    d += head, s += head, n -= head;
    for (; n >= 64; d += 64, s += 64, n -= 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_store_si128((__m128i *)d, a);
        _mm_store_si128((__m128i *)(d + 16), b);
        _mm_store_si128((__m128i *)(d + 32), c);
        _mm_store_si128((__m128i *)(d + 48), e);
    }
    for (; n >= 16; d += 16, s += 16, n -= 16)
        _mm_store_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    if (n)
        _mm_storeu_si128((__m128i *)(d + n - 16), _mm_loadu_si128((const __m128i *)(s + n - 16)));
}

void proust_copy_loop(void *dst, const void *src, size_t n)
{
    /* n >= PROUST_COPY_LOOP_MIN: the head and tail stores fit */
    static int avx2 = -1;
    int have = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") ? 1 : 0;
        __atomic_store_n(&avx2, have, __ATOMIC_RELAXED);
    }
    if (have)
        copy_avx2(dst, src, n);
    else
        copy_sse2(dst, src, n);
}
#else
void proust_copy_loop(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif
