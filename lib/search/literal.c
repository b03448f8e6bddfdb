/*
 * Literal search for fixed strings, case-sensitive or ASCII
 * case-insensitive. Two bytes of the needle, chosen as the rarest by a
 * rough frequency rank of text and code, are compared 16 positions at a time
 * (SSE2, which every x86-64 has; a scalar loop elsewhere), and each candidate
 * is verified in full. Case folding is "byte | 0x20 == lower-case letter",
 * which is exact for ASCII letters, so verification needs no table.
 */
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "search/search_internal.h"

static bool is_alpha(unsigned char c)
{
    return (unsigned char)(c | 0x20u) >= 'a' && (unsigned char)(c | 0x20u) <= 'z';
}

/* Smaller is rarer. Letters by English frequency, then white space and the
 * punctuation common in code. */
static int rank(unsigned char c)
{
    static const char common[] = " etaoinsrhldcumfpgwybvkxjqz";
    static const char punct[] = "\t\n_(),;.=*/-\"'{}<>:#";
    if (c >= 0x80)
        return 5;
    const char *p = memchr(common, c | (is_alpha(c) ? 0x20 : 0), sizeof common - 1);
    if (p != NULL)
        return 100 - (int)(p - common) + (c == ' ' ? 50 : 0);
    if (c == '_')
        return 95; /* identifiers in code are full of it */
    if (memchr(punct, c, sizeof punct - 1) != NULL)
        return 60;
    if (c >= '0' && c <= '9')
        return 40;
    return 10;
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
        if (rank(l->needle[i]) < rank(l->needle[k1]))
            k1 = i;
    size_t k2 = k1 == 0 ? n - 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (i != k1 && rank(l->needle[i]) < rank(l->needle[k2]))
            k2 = i;
    l->k1 = k1;
    l->k2 = n > 1 ? k2 : k1;
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
    for (size_t j = 0; j < l->n; j++)
        if ((unsigned char)(h[j] | l->mask[j]) != l->needle[j])
            return false;
    return true;
}

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
#if defined(__SSE2__)
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
        unsigned mask = (unsigned)_mm_movemask_epi8(eq);
        while (mask != 0) {
            size_t c = i + (size_t)__builtin_ctz(mask);
            if (c <= last && verify(l, h + c))
                return hay + c;
            mask &= mask - 1;
        }
        i += 16;
    }
#endif
    unsigned char c1 = l->needle[l->k1], mk1 = l->mask[l->k1];
    for (; i <= last; i++)
        if ((unsigned char)(h[i + l->k1] | mk1) == c1 && verify(l, h + i))
            return hay + i;
    return NULL;
}
