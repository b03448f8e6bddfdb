/*
 * File names shown to the model. A name may hold any byte but NUL and '/':
 * a newline would split a Glob or Grep line in two, and bytes that are not
 * UTF-8 cannot travel in JSON text at all (they used to become U+FFFD, and
 * the file could then never be named again). Such bytes are escaped, and
 * every file tool takes the escaped form back as a path:
 *   \n \t \r   newline, tab, carriage return
 *   \\         a backslash
 *   \xNN       any other control character (0x01-0x1f, 0x7f) and every byte
 *              that is not part of valid UTF-8, two lower-case hex digits.
 * The scheme is unambiguous: a backslash in a name is always doubled, so a
 * backslash in the output always starts an escape. A path given back with
 * a backslash that starts no escape ("a\q") is taken literally.
 */
#include <stdlib.h>
#include <string.h>

#include "fs.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, cp = c & 0x07u;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

static bool plain(unsigned char c)
{
    return c >= 0x20 && c != 0x7f && c != '\\';
}

bool agti_fs_name_needs_escape(const char *name, size_t n)
{
    const unsigned char *s = (const unsigned char *)name;
    for (size_t i = 0; i < n;) {
        if (s[i] < 0x80) {
            if (!plain(s[i]))
                return true;
            i++;
            continue;
        }
        size_t l = utf8_len(s + i, n - i);
        if (l == 0)
            return true;
        i += l;
    }
    return false;
}

void agti_fs_name_escape(agti_buf *b, const char *name, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)name;
    size_t i = 0;
    while (i < n) {
        size_t start = i;
        while (i < n) {
            if (s[i] < 0x80) {
                if (!plain(s[i]))
                    break;
                i++;
            } else {
                size_t l = utf8_len(s + i, n - i);
                if (l == 0)
                    break;
                i += l;
            }
        }
        agti_buf_put(b, name + start, i - start);
        if (i >= n)
            break;
        unsigned char c = s[i++];
        switch (c) {
        case '\n':
            agti_buf_puts(b, "\\n");
            break;
        case '\t':
            agti_buf_puts(b, "\\t");
            break;
        case '\r':
            agti_buf_puts(b, "\\r");
            break;
        case '\\':
            agti_buf_puts(b, "\\\\");
            break;
        default: {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            agti_buf_put(b, e, 4);
        }
        }
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char *agti_fs_name_unescape(const char *name, size_t *out_len)
{
    agti_buf b = AGTI_BUF_INIT;
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (c != '\\' || i + 1 >= n) {
            agti_buf_putc(&b, c);
            continue;
        }
        char d = name[i + 1];
        if (d == 'n' || d == 't' || d == 'r' || d == '\\') {
            agti_buf_putc(&b, d == 'n' ? '\n' : d == 't' ? '\t' : d == 'r' ? '\r' : '\\');
            i++;
        } else if (d == 'x' && i + 3 < n + 0 && hexval(name[i + 2]) >= 0 &&
                   hexval(name[i + 3]) >= 0) {
            int v = hexval(name[i + 2]) * 16 + hexval(name[i + 3]);
            if (v == 0) {
                agti_buf_free(&b);
                agti_error(AGT_EINVAL, "the path has an escaped NUL byte (\\x00)");
                return NULL;
            }
            agti_buf_putc(&b, (char)v);
            i += 3;
        } else {
            agti_buf_putc(&b, c);
        }
    }
    if (out_len != NULL)
        *out_len = b.len;
    char *r = agti_buf_detach(&b);
    if (r == NULL && !b.oom)
        r = agti_strdup("");
    if (r == NULL)
        agti_oom();
    return r;
}
