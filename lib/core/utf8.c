#include <string.h>

#include "core.h"

#define HIGHS 0x8080808080808080u

size_t agti_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
    if (len == 0)
        return 0;
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return n;
}

bool agti_utf8_valid(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        /* ASCII runs 8 bytes at a time */
        while (len - i >= 8) {
            uint64_t w;
            memcpy(&w, p + i, sizeof w);
            if ((w & HIGHS) != 0)
                break;
            i += 8;
        }
        if (i >= len)
            break;
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t n = agti_utf8_decode(p + i, len - i, &cp);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

size_t agti_utf8_count(const char *s, size_t len)
{
    /* len less the continuation bytes (10xxxxxx), counted 8 at a time: bit 7
     * of a byte set and its bit 6 (shifted up by one) clear */
    size_t cont = 0, i = 0;
    for (; len - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, sizeof w);
        uint64_t c = (w & ~(w << 1) & HIGHS) >> 7; /* 1 in each byte that continues */
        cont += (size_t)((c * 0x0101010101010101u) >> 56);
    }
    for (; i < len; i++)
        cont += ((unsigned char)s[i] & 0xC0) == 0x80;
    return len - cont;
}

void agti_utf8_sanitize(agti_buf *b, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, run = 0;
    while (i < len) {
        uint32_t cp;
        /* a NUL counts as invalid: the text ends up in C strings, which it would cut */
        size_t n = p[i] == 0 ? 0 : p[i] < 0x80 ? 1 : agti_utf8_decode(p + i, len - i, &cp);
        if (n == 0) {
            agti_buf_put(b, s + run, i - run);
            agti_buf_put(b, "\xEF\xBF\xBD", 3);
            i++;
            run = i;
        } else {
            i += n;
        }
    }
    agti_buf_put(b, s + run, len - run);
}

size_t agti_utf8_floor(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = len;
    /* step back over at most 3 continuation bytes to the lead byte */
    size_t back = 0;
    while (i > 0 && back < 4 && (p[i - 1] & 0xC0) == 0x80) {
        i--;
        back++;
    }
    if (i == 0)
        return len;
    unsigned c = p[i - 1];
    size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (c < 0x80)
        return len;
    return (back + 1 >= need) ? len : i - 1;
}
