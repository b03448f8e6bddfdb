/*
 * Literal search for fixed strings, case-sensitive or ASCII
 * case-insensitive. Two bytes of the needle, the rarest by a table of byte
 * frequencies in source code and text, are compared at 32 positions at a
 * time (AVX2, when the CPU has it) or 16 (SSE2, which every x86-64 has; a
 * scalar loop elsewhere), and each candidate is verified in full, 8 bytes
 * at a time. Case folding is "byte | 0x20 == lower-case letter", which is
 * exact for ASCII letters, so verification needs no table.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LIT_AVX2 1
#endif

#include "search/search_internal.h"

static bool is_alpha(unsigned char c)
{
    return (unsigned char)(c | 0x20u) >= 'a' && (unsigned char)(c | 0x20u) <= 'z';
}

/* Each byte's rank in the byte counts of Python's and Perl's standard
 * libraries (0: rarest, 255: the space), from bench/search/byte_ranks.py
 * (its header says how). */
static const unsigned char byte_rank[256] = {
    0,   1,   2,   3,   4,   5,   6,   84,  7,   193, 253, 8,   135, 9,   10,  11,  12,  13,  14,
    15,  16,  17,  18,  19,  20,  21,  22,  23,  24,  25,  26,  27,  255, 173, 199, 218, 202, 168,
    164, 235, 217, 216, 176, 172, 225, 205, 239, 178, 246, 234, 236, 220, 213, 207, 215, 203, 211,
    206, 224, 197, 179, 223, 204, 161, 174, 242, 198, 226, 212, 240, 208, 187, 192, 229, 166, 180,
    227, 196, 221, 210, 195, 162, 222, 209, 233, 191, 177, 181, 170, 182, 165, 188, 185, 189, 160,
    228, 159, 250, 214, 241, 243, 254, 238, 219, 230, 248, 171, 186, 244, 231, 247, 245, 232, 175,
    249, 251, 252, 237, 190, 194, 200, 201, 169, 184, 167, 183, 163, 28,  157, 119, 125, 95,  104,
    112, 142, 141, 126, 140, 138, 139, 105, 93,  80,  88,  106, 91,  89,  107, 152, 102, 113, 90,
    147, 156, 115, 99,  154, 155, 108, 153, 146, 120, 136, 92,  143, 131, 148, 116, 97,  134, 149,
    144, 129, 127, 130, 82,  100, 109, 137, 101, 110, 96,  94,  83,  145, 132, 118, 111, 121, 117,
    114, 98,  29,  30,  122, 151, 72,  79,  31,  32,  33,  34,  35,  36,  37,  38,  103, 123, 85,
    86,  39,  40,  41,  42,  43,  87,  44,  45,  46,  47,  73,  48,  49,  50,  76,  133, 158, 124,
    77,  74,  51,  52,  81,  75,  78,  53,  54,  55,  56,  128, 150, 57,  58,  59,  60,  61,  62,
    63,  64,  65,  66,  67,  68,  69,  70,  71,
};

/* Smaller is rarer; a folded letter is as common as its commoner case. */
static int rank(unsigned char c, bool fold)
{
    if (!fold)
        return byte_rank[c];
    int lo = byte_rank[c | 0x20u], up = byte_rank[c & ~0x20u];
    return lo > up ? lo : up;
}

int agti_lit_init(agti_lit *l, const char *needle, size_t n, bool icase)
{
    memset(l, 0, sizeof *l);
    l->n = n;
    l->needle = malloc(n ? n : 1);
    l->mask = malloc(n ? n : 1);
    if (l->needle == NULL || l->mask == NULL) {
        agti_lit_fini(l);
        return agti_oom();
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)needle[i];
        bool fold = icase && is_alpha(c);
        l->mask[i] = fold ? 0x20 : 0;
        l->needle[i] = fold ? (unsigned char)(c | 0x20u) : c;
    }
    size_t k1 = 0;
    for (size_t i = 1; i < n; i++)
        if (rank(l->needle[i], l->mask[i]) < rank(l->needle[k1], l->mask[k1]))
            k1 = i;
    /* The second byte: the rarest other one, preferring a different value
     * (two equal bytes say little more than one). */
    size_t k2 = k1;
    for (size_t i = 0; i < n; i++) {
        if (i == k1)
            continue;
        bool same = l->needle[i] == l->needle[k1], best_same = l->needle[k2] == l->needle[k1];
        if (k2 == k1 || (best_same && !same) ||
            (same == best_same &&
             rank(l->needle[i], l->mask[i]) < rank(l->needle[k2], l->mask[k2])))
            k2 = i;
    }
    l->k1 = k1;
    l->k2 = k2;
    l->simd = AGTI_LIT_SCALAR;
#if defined(__SSE2__)
    l->simd = AGTI_LIT_SSE2;
#endif
#if defined(LIT_AVX2)
    if (__builtin_cpu_supports("avx2"))
        l->simd = AGTI_LIT_AVX2;
#endif
    return AGT_OK;
}

void agti_lit_fini(agti_lit *l)
{
    free(l->needle);
    free(l->mask);
    memset(l, 0, sizeof *l);
}

static bool verify(const agti_lit *l, const unsigned char *h)
{
    size_t n = l->n, j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t a, m, c;
        memcpy(&a, h + j, 8);
        memcpy(&m, l->mask + j, 8);
        memcpy(&c, l->needle + j, 8);
        if ((a | m) != c)
            return false;
    }
    for (; j < n; j++)
        if ((unsigned char)(h[j] | l->mask[j]) != l->needle[j])
            return false;
    return true;
}

/* The candidates of a block at i: bit b set when h[i + b + k1] and
 * h[i + b + k2] are the needle's bytes there. Returns the first verified
 * one, or SIZE_MAX. */
static size_t check_mask(const agti_lit *l, const unsigned char *h, size_t i, uint64_t mask,
                         size_t last)
{
    while (mask != 0) {
        size_t c = i + (size_t)__builtin_ctzll(mask);
        if (c > last)
            return SIZE_MAX;
        if (verify(l, h + c))
            return c;
        mask &= mask - 1;
    }
    return SIZE_MAX;
}

#if defined(LIT_AVX2)
/* The AVX2 loop: 64 positions per round, then 32; returns the first hit
 * or SIZE_MAX, and in *next where the caller's loop goes on. */
__attribute__((target("avx2"))) static size_t find_avx2(const agti_lit *l, const unsigned char *h,
                                                        size_t len, size_t *next)
{
    size_t n = l->n, last = len - n, i = 0;
    size_t kmax = l->k1 > l->k2 ? l->k1 : l->k2;
    const unsigned char *p1 = h + l->k1, *p2 = h + l->k2;
    const __m256i t1 = _mm256_set1_epi8((char)l->needle[l->k1]);
    const __m256i m1 = _mm256_set1_epi8((char)l->mask[l->k1]);
    const __m256i t2 = _mm256_set1_epi8((char)l->needle[l->k2]);
    const __m256i m2 = _mm256_set1_epi8((char)l->mask[l->k2]);
    /* Loads read h[i + k .. i + k + 64), so go on while i + kmax + 64 <= len. */
    while (i + kmax + 64 <= len) {
        __m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)(p1 + i));
        __m256i b0 = _mm256_loadu_si256((const __m256i *)(const void *)(p2 + i));
        __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(p1 + i + 32));
        __m256i b1 = _mm256_loadu_si256((const __m256i *)(const void *)(p2 + i + 32));
        __m256i e0 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(a0, m1), t1),
                                      _mm256_cmpeq_epi8(_mm256_or_si256(b0, m2), t2));
        __m256i e1 = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(a1, m1), t1),
                                      _mm256_cmpeq_epi8(_mm256_or_si256(b1, m2), t2));
        if (!_mm256_testz_si256(_mm256_or_si256(e0, e1), _mm256_or_si256(e0, e1))) {
            uint64_t mask = (uint64_t)(uint32_t)_mm256_movemask_epi8(e0) |
                            (uint64_t)(uint32_t)_mm256_movemask_epi8(e1) << 32;
            size_t c = check_mask(l, h, i, mask, last);
            if (c != SIZE_MAX)
                return c;
        }
        i += 64;
    }
    while (i + kmax + 32 <= len) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(p1 + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p2 + i));
        __m256i e = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_or_si256(a, m1), t1),
                                     _mm256_cmpeq_epi8(_mm256_or_si256(b, m2), t2));
        uint64_t mask = (uint32_t)_mm256_movemask_epi8(e);
        size_t c = check_mask(l, h, i, mask, last);
        if (c != SIZE_MAX)
            return c;
        i += 32;
    }
    *next = i;
    return SIZE_MAX;
}
#endif

const char *agti_lit_find(const agti_lit *l, const char *hay, size_t len)
{
    size_t n = l->n;
    if (n == 0)
        return hay;
    if (len < n)
        return NULL;
    if (n == 1 && l->mask[0] == 0)
        return memchr(hay, l->needle[0], len);
    const unsigned char *h = (const unsigned char *)hay;
    size_t last = len - n; /* last possible start */
    size_t i = 0;
#if defined(LIT_AVX2)
    if (l->simd == AGTI_LIT_AVX2) {
        size_t c = find_avx2(l, h, len, &i);
        if (c != SIZE_MAX)
            return hay + c;
    }
#endif
#if defined(__SSE2__)
    if (l->simd != AGTI_LIT_SCALAR) {
        size_t kmax = l->k1 > l->k2 ? l->k1 : l->k2;
        const __m128i t1 = _mm_set1_epi8((char)l->needle[l->k1]);
        const __m128i m1 = _mm_set1_epi8((char)l->mask[l->k1]);
        const __m128i t2 = _mm_set1_epi8((char)l->needle[l->k2]);
        const __m128i m2 = _mm_set1_epi8((char)l->mask[l->k2]);
        /* Loads read h[i + k .. i + k + 16), so stop while i + kmax + 16 <= len. */
        while (i + kmax + 16 <= len) {
            __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(h + i + l->k1));
            __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(h + i + l->k2));
            __m128i eq = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(a, m1), t1),
                                       _mm_cmpeq_epi8(_mm_or_si128(b, m2), t2));
            size_t c = check_mask(l, h, i, (unsigned)_mm_movemask_epi8(eq), last);
            if (c != SIZE_MAX)
                return hay + c;
            i += 16;
        }
    }
#endif
    unsigned char c1 = l->needle[l->k1], mk1 = l->mask[l->k1];
    for (; i <= last; i++)
        if ((unsigned char)(h[i + l->k1] | mk1) == c1 && verify(l, h + i))
            return hay + i;
    return NULL;
}
