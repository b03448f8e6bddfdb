/*
 * libFuzzer target for agt-chat's markdown rendering (examples/chat/
 * markdown.c over md4c, compiled in). Input: flags byte (bit 0: colours;
 * bit 1: streamed in pieces cut at the following bytes' values), then the
 * text. Invariants: rendering never fails on any bytes; without colours the
 * output has no ESC byte unless the text had one; text that is valid UTF-8
 * renders to valid UTF-8 (cells padded, lines prefixed, nothing cut inside
 * a character); the same text renders to the same bytes twice; streaming
 * writes what it is given and leaves nothing behind.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* UTF-8 as RFC 3629 has it: no overlong forms, no surrogates, at most
 * U+10FFFF (the target links no library code). */
static int utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = c < 0x80                 ? 1
                   : c >= 0xC2 && c <= 0xDF ? 2
                   : c >= 0xE0 && c <= 0xEF ? 3
                   : c >= 0xF0 && c <= 0xF4 ? 4
                                            : 0;
        if (k == 0 || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && s[i + 1] < 0xA0) || (c == 0xED && s[i + 1] >= 0xA0) ||
            (c == 0xF0 && s[i + 1] < 0x90) || (c == 0xF4 && s[i + 1] >= 0x90))
            return 0;
        i += k;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    int color = data[0] & 1;
    const char *md = (const char *)data + 1;
    size_t len = size - 1;
    char *a = chat_md_render(md, len, color);
    char *b = chat_md_render(md, len, color);
    if (a == NULL || b == NULL || strcmp(a, b) != 0)
        abort();
    if (!color && memchr(a, 0x1b, strlen(a)) != NULL && memchr(md, 0x1b, len) == NULL)
        abort();
    if (utf8_valid(md, len) && memchr(md, 0, len) == NULL && !utf8_valid(a, strlen(a)))
        abort();
    free(a);
    free(b);
    if (data[0] & 2) {
        FILE *f = fopen("/dev/null", "w");
        if (f == NULL)
            return 0;
        chat_md_stream m;
        memset(&m, 0, sizeof m);
        m.color = color;
        for (size_t i = 0; i < len;) {
            size_t piece = 1 + (unsigned char)md[i] % 37;
            if (piece > len - i)
                piece = len - i;
            chat_md_stream_feed(&m, md + i, piece, f);
            i += piece;
        }
        chat_md_stream_flush(&m, f);
        if (m.len != 0)
            abort();
        chat_md_stream_free(&m);
        fclose(f);
    }
    return 0;
}
