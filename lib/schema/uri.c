/* URI reference resolution (RFC 3986 section 5.2) for "$id" and "$ref". */
#include <stdlib.h>
#include <string.h>

#include "schema_priv.h"

typedef struct uri_parts {
    const char *scheme, *auth, *path, *query, *frag;
    size_t scheme_len, auth_len, path_len, query_len, frag_len;
    bool has_scheme, has_auth, has_query, has_frag;
} uri_parts;

static bool is_scheme_char(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    if (first)
        return false;
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

static void uri_parse(const char *s, uri_parts *u)
{
    memset(u, 0, sizeof *u);
    const char *p = s;
    const char *q = s;
    while (*q && is_scheme_char(*q, q == s))
        q++;
    if (q > s && *q == ':') {
        u->has_scheme = true;
        u->scheme = s;
        u->scheme_len = (size_t)(q - s);
        p = q + 1;
    }
    if (p[0] == '/' && p[1] == '/') {
        p += 2;
        u->has_auth = true;
        u->auth = p;
        while (*p && *p != '/' && *p != '?' && *p != '#')
            p++;
        u->auth_len = (size_t)(p - u->auth);
    }
    u->path = p;
    while (*p && *p != '?' && *p != '#')
        p++;
    u->path_len = (size_t)(p - u->path);
    if (*p == '?') {
        u->has_query = true;
        u->query = ++p;
        while (*p && *p != '#')
            p++;
        u->query_len = (size_t)(p - u->query);
    }
    if (*p == '#') {
        u->has_frag = true;
        u->frag = p + 1;
        u->frag_len = strlen(u->frag);
    }
}

/* RFC 3986 5.2.4, writing into out (which has room for len + 1 bytes). */
static void remove_dot_segments(const char *in, size_t len, agti_buf *out)
{
    size_t start = out->len;
    size_t i = 0;
    while (i < len) {
        const char *p = in + i;
        size_t rest = len - i;
        if (rest >= 3 && memcmp(p, "../", 3) == 0) {
            i += 3;
        } else if (rest >= 2 && memcmp(p, "./", 2) == 0) {
            i += 2;
        } else if ((rest >= 3 && memcmp(p, "/./", 3) == 0)) {
            i += 2;
        } else if (rest == 2 && memcmp(p, "/.", 2) == 0) {
            /* replace with "/" */
            agti_buf_putc(out, '/');
            i += 2;
        } else if ((rest >= 4 && memcmp(p, "/../", 4) == 0) ||
                   (rest == 3 && memcmp(p, "/..", 3) == 0)) {
            i += 3;
            /* drop the last segment of the output */
            size_t k = out->len;
            while (k > start && out->ptr[k - 1] != '/')
                k--;
            if (k > start)
                k--;
            agti_buf_truncate(out, k);
            if (rest == 3)
                agti_buf_putc(out, '/');
        } else if ((rest == 1 && p[0] == '.') || (rest == 2 && memcmp(p, "..", 2) == 0)) {
            i += rest;
        } else {
            size_t j = (p[0] == '/') ? 1 : 0;
            while (j < rest && p[j] != '/')
                j++;
            agti_buf_put(out, p, j);
            i += j;
        }
    }
}

char *agti_uri_resolve(const char *base, const char *ref)
{
    if (base == NULL || base[0] == '\0')
        return agti_strdup(ref);
    uri_parts b, r;
    uri_parse(base, &b);
    uri_parse(ref, &r);
    agti_buf out = AGTI_BUF_INIT;
    const uri_parts *auth_src, *query_src;
    if (r.has_scheme) {
        agti_buf_put(&out, r.scheme, r.scheme_len);
        agti_buf_putc(&out, ':');
        if (r.has_auth) {
            agti_buf_puts(&out, "//");
            agti_buf_put(&out, r.auth, r.auth_len);
        }
        remove_dot_segments(r.path, r.path_len, &out);
        query_src = &r;
    } else {
        if (b.has_scheme) {
            agti_buf_put(&out, b.scheme, b.scheme_len);
            agti_buf_putc(&out, ':');
        }
        auth_src = r.has_auth ? &r : &b;
        if (auth_src->has_auth) {
            agti_buf_puts(&out, "//");
            agti_buf_put(&out, auth_src->auth, auth_src->auth_len);
        }
        if (r.has_auth) {
            remove_dot_segments(r.path, r.path_len, &out);
            query_src = &r;
        } else if (r.path_len == 0) {
            agti_buf_put(&out, b.path, b.path_len);
            query_src = r.has_query ? &r : &b;
        } else {
            agti_buf merged = AGTI_BUF_INIT;
            if (r.path[0] == '/') {
                agti_buf_put(&merged, r.path, r.path_len);
            } else if (b.has_auth && b.path_len == 0) {
                agti_buf_putc(&merged, '/');
                agti_buf_put(&merged, r.path, r.path_len);
            } else {
                size_t k = b.path_len;
                while (k > 0 && b.path[k - 1] != '/')
                    k--;
                agti_buf_put(&merged, b.path, k);
                agti_buf_put(&merged, r.path, r.path_len);
            }
            if (merged.oom)
                out.oom = true;
            else if (merged.len > 0)
                remove_dot_segments(merged.ptr, merged.len, &out);
            agti_buf_free(&merged);
            query_src = &r;
        }
    }
    if (query_src->has_query) {
        agti_buf_putc(&out, '?');
        agti_buf_put(&out, query_src->query, query_src->query_len);
    }
    if (r.has_frag) {
        agti_buf_putc(&out, '#');
        agti_buf_put(&out, r.frag, r.frag_len);
    }
    if (out.oom) {
        agti_buf_free(&out);
        return NULL;
    }
    return agti_buf_detach(&out);
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

char *agti_uri_pct_decode(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '%' && i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
            out[o++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            out[o++] = s[i];
        }
    }
    out[o] = '\0';
    return out;
}
