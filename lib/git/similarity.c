/*
 * git's similarity index of a rename, so that the number shown is the one
 * `git diff -M` prints ("similarity index N%"). libgit2 pairs the files (its
 * own score decides, with the same 50% threshold) but scores differently;
 * this recomputes git's score from both contents: diffcore-delta.c cuts
 * each side into spans (a line, or 64 bytes), hashes them, and counts the
 * bytes of the source that reappear in the destination; diffcore-rename.c
 * divides that by the larger size.
 */
#include <stdint.h>
#include <stdlib.h>

#include "git/git_internal.h"

#define HASHBASE 107927u
#define MAX_SCORE 60000u

/* Adds the span byte counts of buf to cnt[hash] (git's hash_chars). */
static void hash_spans(const unsigned char *buf, size_t sz, bool is_text, uint32_t *cnt)
{
    uint32_t accum1 = 0, accum2 = 0, n = 0;
    while (sz) {
        uint32_t c = *buf++;
        uint32_t old1 = accum1;
        sz--;
        /* a CR of CRLF does not count in text */
        if (is_text && c == '\r' && sz && *buf == '\n')
            continue;
        accum1 = (accum1 << 7) ^ (accum2 >> 25);
        accum2 = (accum2 << 7) ^ (old1 >> 25);
        accum1 += c;
        if (++n < 64 && c != '\n')
            continue;
        cnt[(accum1 + accum2 * 0x61u) % HASHBASE] += n;
        n = 0;
        accum1 = accum2 = 0;
    }
    if (n > 0)
        cnt[(accum1 + accum2 * 0x61u) % HASHBASE] += n;
}

int agti_git_similarity(const char *src, size_t src_len, const char *dst, size_t dst_len,
                        bool is_text)
{
    if (dst_len == 0)
        return 0;
    uint32_t *cnt = calloc(2 * (size_t)HASHBASE, sizeof(uint32_t));
    if (!cnt)
        return -1;
    uint32_t *a = cnt, *b = cnt + HASHBASE;
    hash_spans((const unsigned char *)src, src_len, is_text, a);
    hash_spans((const unsigned char *)dst, dst_len, is_text, b);
    uint64_t copied = 0;
    for (size_t h = 0; h < HASHBASE; h++)
        copied += a[h] < b[h] ? a[h] : b[h];
    free(cnt);
    uint64_t max_size = src_len > dst_len ? src_len : dst_len;
    uint64_t score = copied * MAX_SCORE / max_size;
    return (int)(score * 100 / MAX_SCORE);
}
