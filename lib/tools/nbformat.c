/* Notebook JSON written as Jupyter writes it (nbformat.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbformat.h"

void agti_nb_style_of(const char *text, size_t len, agti_nb_style *st)
{
    st->indent = 1;
    st->ascii = false;
    st->final_eol = len > 0 && text[len - 1] == '\n';
    /* the indent: spaces that start the line after the opening brace */
    const char *nl = memchr(text, '\n', len);
    if (nl != NULL) {
        size_t i = (size_t)(nl - text) + 1, n = 0;
        while (i + n < len && text[i + n] == ' ')
            n++;
        if (n > 0 && n <= 16 && i + n < len && text[i + n] == '"')
            st->indent = (int)n;
    }
    /* ensure_ascii: no raw non-ASCII byte, and a \u escape of a character
     * past ASCII (one not escaped by a backslash before it) */
    bool raw = false, esc = false;
    for (size_t i = 0; i < len && !raw; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80) {
            raw = true;
        } else if (c == '\\' && i + 1 < len) {
            if (text[i + 1] == 'u' && i + 5 < len) {
                char hex[5] = {text[i + 2], text[i + 3], text[i + 4], text[i + 5], 0};
                if (strtoul(hex, NULL, 16) >= 0x80)
                    esc = true;
            }
            i++; /* the escaped character */
        }
    }
    st->ascii = esc && !raw;
}

static void put_indent(agti_buf *b, const agti_nb_style *st, int level)
{
    agti_buf_putc(b, '\n');
    for (int i = 0; i < st->indent * level; i++)
        agti_buf_putc(b, ' ');
}

/* Decodes the UTF-8 character at s (valid: jansson checked it). */
static unsigned long utf8_at(const unsigned char *s, size_t *step)
{
    if (s[0] < 0xe0) {
        *step = 2;
        return ((s[0] & 0x1fu) << 6) | (s[1] & 0x3fu);
    }
    if (s[0] < 0xf0) {
        *step = 3;
        return ((s[0] & 0x0fu) << 12) | ((s[1] & 0x3fu) << 6) | (s[2] & 0x3fu);
    }
    *step = 4;
    return ((s[0] & 0x07ul) << 18) | ((s[1] & 0x3ful) << 12) | ((s[2] & 0x3ful) << 6) |
           (s[3] & 0x3ful);
}

/* A string as Python's json module escapes it. */
static void put_string(agti_buf *b, const char *s, size_t len, bool ascii)
{
    agti_buf_putc(b, '"');
    size_t run = 0; /* bytes copied as they are */
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        char u[16];
        size_t step = 1;
        switch (c) {
        case '"':
            rep = "\\\"";
            break;
        case '\\':
            rep = "\\\\";
            break;
        case '\n':
            rep = "\\n";
            break;
        case '\r':
            rep = "\\r";
            break;
        case '\t':
            rep = "\\t";
            break;
        case '\b':
            rep = "\\b";
            break;
        case '\f':
            rep = "\\f";
            break;
        default:
            if (c < 0x20) {
                snprintf(u, sizeof u, "\\u%04x", c);
                rep = u;
            } else if (c >= 0x80 && ascii) {
                unsigned long cp = utf8_at((const unsigned char *)s + i, &step);
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    snprintf(u, sizeof u, "\\u%04lx\\u%04lx", 0xd800 + (cp >> 10),
                             0xdc00 + (cp & 0x3ff));
                } else {
                    snprintf(u, sizeof u, "\\u%04lx", cp);
                }
                rep = u;
            }
        }
        if (rep == NULL) {
            run++;
            i++;
            continue;
        }
        agti_buf_put(b, s + i - run, run);
        run = 0;
        agti_buf_puts(b, rep);
        i += step;
    }
    agti_buf_put(b, s + len - run, run);
    agti_buf_putc(b, '"');
}

/* A double as Python's repr() writes it: the shortest digits that read
 * back as d, fixed notation for exponents -4..15 (with ".0" when
 * integral), else d.ddde+XX. */
static void put_real(agti_buf *b, double d)
{
    if (isnan(d) || isinf(d)) { /* what json.dumps writes (not JSON) */
        agti_buf_puts(b, isnan(d) ? "NaN" : d < 0 ? "-Infinity" : "Infinity");
        return;
    }
    char e[40];
    for (int p = 0; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p, d);
        if (strtod(e, NULL) == d)
            break;
    }
    /* e is [-]D[.DDD]e(+|-)XX */
    char digits[24];
    size_t nd = 0;
    const char *q = e;
    bool neg = *q == '-';
    if (neg)
        q++;
    for (; *q != 'e'; q++)
        if (*q != '.')
            digits[nd++] = *q;
    digits[nd] = '\0';
    int exp = atoi(q + 1);
    if (neg)
        agti_buf_putc(b, '-');
    if (exp < -4 || exp >= 16) {
        agti_buf_putc(b, digits[0]);
        if (nd > 1) {
            agti_buf_putc(b, '.');
            agti_buf_put(b, digits + 1, nd - 1);
        }
        agti_buf_printf(b, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else if (exp < 0) {
        agti_buf_puts(b, "0.");
        for (int i = 0; i < -exp - 1; i++)
            agti_buf_putc(b, '0');
        agti_buf_put(b, digits, nd);
    } else if ((size_t)exp + 1 >= nd) {
        agti_buf_put(b, digits, nd);
        for (size_t i = nd; i < (size_t)exp + 1; i++)
            agti_buf_putc(b, '0');
        agti_buf_puts(b, ".0");
    } else {
        agti_buf_put(b, digits, (size_t)exp + 1);
        agti_buf_putc(b, '.');
        agti_buf_put(b, digits + exp + 1, nd - (size_t)exp - 1);
    }
}

static void dump(agti_buf *b, const json_t *v, const agti_nb_style *st, int level)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            agti_buf_puts(b, "{}");
            break;
        }
        agti_buf_putc(b, '{');
        const char *key;
        json_t *val;
        bool first = true;
        json_object_foreach((json_t *)v, key, val)
        {
            if (!first)
                agti_buf_putc(b, ',');
            first = false;
            put_indent(b, st, level + 1);
            put_string(b, key, strlen(key), st->ascii);
            agti_buf_puts(b, ": ");
            dump(b, val, st, level + 1);
        }
        put_indent(b, st, level);
        agti_buf_putc(b, '}');
        break;
    }
    case JSON_ARRAY: {
        if (json_array_size(v) == 0) {
            agti_buf_puts(b, "[]");
            break;
        }
        agti_buf_putc(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i > 0)
                agti_buf_putc(b, ',');
            put_indent(b, st, level + 1);
            dump(b, json_array_get(v, i), st, level + 1);
        }
        put_indent(b, st, level);
        agti_buf_putc(b, ']');
        break;
    }
    case JSON_STRING:
        put_string(b, json_string_value(v), json_string_length(v), st->ascii);
        break;
    case JSON_INTEGER:
        agti_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        put_real(b, json_real_value(v));
        break;
    case JSON_TRUE:
        agti_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        agti_buf_puts(b, "false");
        break;
    default:
        agti_buf_puts(b, "null");
        break;
    }
}

void agti_nb_dump(agti_buf *b, const json_t *v, const agti_nb_style *st)
{
    dump(b, v, st, 0);
    if (st->final_eol)
        agti_buf_putc(b, '\n');
}

/* Bytes of the line boundary at s[i] (str.splitlines), 0 when none. */
static size_t boundary(const char *s, size_t len, size_t i)
{
    unsigned char c = (unsigned char)s[i];
    if (c == '\r')
        return i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
    if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e))
        return 1;
    if (c == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] == 0x85)
        return 2;
    if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9))
        return 3;
    return 0;
}

json_t *agti_nb_split_lines(const char *s, size_t len)
{
    json_t *arr = json_array();
    size_t start = 0;
    for (size_t i = 0; arr != NULL && i < len;) {
        size_t n = boundary(s, len, i);
        if (n == 0) {
            i++;
            continue;
        }
        i += n;
        if (json_array_append_new(arr, json_stringn(s + start, i - start)) != 0) {
            json_decref(arr);
            return NULL;
        }
        start = i;
    }
    if (arr != NULL && start < len &&
        json_array_append_new(arr, json_stringn(s + start, len - start)) != 0) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

bool agti_nb_text(agti_buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        agti_buf_put(b, json_string_value(v), json_string_length(v));
        return true;
    }
    if (!json_is_array(v))
        return false;
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *part = json_array_get(v, i);
        if (!json_is_string(part))
            return false;
        agti_buf_put(b, json_string_value(part), json_string_length(part));
    }
    return true;
}

/* ---- the view Read gives of a notebook -------------------------------- */

/* Appends s[0..n) without ANSI escape sequences (CSI: ESC [ ... final
 * byte; other ESC x pairs), as tracebacks and colored output carry them. */
static void put_plain(agti_buf *b, const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        const char *esc = memchr(s + i, '\x1b', n - i);
        size_t end = esc ? (size_t)(esc - s) : n;
        agti_buf_put(b, s + i, end - i);
        if (esc == NULL)
            break;
        i = end + 1;
        if (i < n && s[i] == '[') {
            i++;
            while (i < n && ((unsigned char)s[i] < 0x40 || (unsigned char)s[i] > 0x7e))
                i++;
        }
        if (i < n)
            i++;
    }
}

/* Appends a notebook string field, ANSI-free, ending with a line break. */
static void put_field(agti_buf *b, const json_t *v, bool plain)
{
    agti_buf t = AGTI_BUF_INIT;
    if (agti_nb_text(&t, v) && t.len > 0) {
        if (plain)
            put_plain(b, t.ptr, t.len);
        else
            agti_buf_put(b, t.ptr, t.len);
        if (b->len > 0 && b->ptr[b->len - 1] != '\n')
            agti_buf_putc(b, '\n');
    }
    b->oom = b->oom || t.oom;
    agti_buf_free(&t);
}

static void put_output(agti_buf *b, const json_t *o)
{
    const char *type = json_string_value(json_object_get(o, "output_type"));
    if (type == NULL)
        return;
    if (strcmp(type, "stream") == 0) {
        const char *name = json_string_value(json_object_get(o, "name"));
        agti_buf_printf(b, "<output stream=\"%s\">\n", name ? name : "stdout");
        put_field(b, json_object_get(o, "text"), true);
    } else if (strcmp(type, "error") == 0) {
        const char *en = json_string_value(json_object_get(o, "ename"));
        const char *ev = json_string_value(json_object_get(o, "evalue"));
        agti_buf_printf(b, "<output error=\"%s\">\n", en ? en : "");
        json_t *tb = json_object_get(o, "traceback");
        if (json_is_array(tb) && json_array_size(tb) > 0) {
            for (size_t i = 0; i < json_array_size(tb); i++)
                put_field(b, json_array_get(tb, i), true);
        } else {
            agti_buf_printf(b, "%s: %s\n", en ? en : "", ev ? ev : "");
        }
    } else {
        json_t *data = json_object_get(o, "data");
        agti_buf_printf(b, "<output %s>\n",
                        strcmp(type, "execute_result") == 0 ? "result" : "display");
        json_t *plain = json_object_get(data, "text/plain");
        const char *mime;
        json_t *v;
        json_object_foreach(data, mime, v)
        {
            agti_buf t = AGTI_BUF_INIT;
            agti_nb_text(&t, v);
            if (strncmp(mime, "image/", 6) == 0)
                agti_buf_printf(b, "[%s image, %zu bytes of base64: not shown here]\n", mime,
                                t.len);
            else if (plain == NULL && strcmp(mime, "text/plain") != 0)
                agti_buf_printf(b, "[%s output, %zu characters: not shown here]\n", mime, t.len);
            agti_buf_free(&t);
        }
        if (plain != NULL)
            put_field(b, plain, true);
    }
    agti_buf_puts(b, "</output>\n");
}

bool agti_nb_render(agti_buf *b, const char *rel, const char *text, size_t len)
{
    json_t *nb = json_loadb(text, len, 0, NULL);
    json_t *cells = json_object_get(nb, "cells");
    json_t *major = json_object_get(nb, "nbformat");
    bool ok = json_is_array(cells) && json_is_integer(major) && json_integer_value(major) == 4;
    for (size_t i = 0; ok && i < json_array_size(cells); i++)
        ok = json_is_string(json_object_get(json_array_get(cells, i), "cell_type"));
    if (!ok) {
        json_decref(nb);
        return false;
    }
    size_t n = json_array_size(cells);
    json_t *minor = json_object_get(nb, "nbformat_minor");
    json_t *meta = json_object_get(nb, "metadata");
    const char *lang =
        json_string_value(json_object_get(json_object_get(meta, "kernelspec"), "language"));
    if (lang == NULL)
        lang = json_string_value(json_object_get(json_object_get(meta, "language_info"), "name"));
    agti_buf_printf(b, "Jupyter notebook %s: %zu cell%s (nbformat 4.%lld", rel, n,
                    n == 1 ? "" : "s",
                    json_is_integer(minor) ? (long long)json_integer_value(minor) : 0LL);
    if (lang != NULL)
        agti_buf_printf(b, ", %s", lang);
    agti_buf_puts(b, "). This is a view of its cells, not its JSON text: change a cell with "
                     "NotebookEdit (cell_id or cell_index).\n");
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(cells, i);
        const char *type = json_string_value(json_object_get(c, "cell_type"));
        const char *id = json_string_value(json_object_get(c, "id"));
        json_t *count = json_object_get(c, "execution_count");
        agti_buf_printf(b, "<cell index=\"%zu\"", i);
        if (id != NULL)
            agti_buf_printf(b, " id=\"%s\"", id);
        agti_buf_printf(b, " type=\"%s\"", type);
        if (json_is_integer(count))
            agti_buf_printf(b, " execution_count=\"%lld\"", (long long)json_integer_value(count));
        agti_buf_puts(b, ">\n");
        put_field(b, json_object_get(c, "source"), false);
        json_t *outs = json_object_get(c, "outputs");
        for (size_t k = 0; json_is_array(outs) && k < json_array_size(outs); k++)
            put_output(b, json_array_get(outs, k));
        agti_buf_puts(b, "</cell>\n");
    }
    json_decref(nb);
    return true;
}
