#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

bool agti_buf_reserve(agti_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (extra > SIZE_MAX - b->len - 1) {
        b->oom = true;
        return false;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(b->ptr, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    /* a buffer that has storage is always a C string (agti_buf_cstr): a
     * reserve on an empty buffer used to leave its first byte unset, and
     * an empty quoted word of a Bash rule ('') was then read past its end */
    p[b->len] = '\0';
    b->ptr = p;
    b->cap = cap;
    return true;
}

void agti_buf_put(agti_buf *b, const void *data, size_t len)
{
    if (!agti_buf_reserve(b, len))
        return;
    if (len)
        memcpy(b->ptr + b->len, data, len);
    b->len += len;
    b->ptr[b->len] = '\0';
}

void agti_buf_puts(agti_buf *b, const char *s)
{
    agti_buf_put(b, s, strlen(s));
}

void agti_buf_putc(agti_buf *b, char c)
{
    agti_buf_put(b, &c, 1);
}

void agti_buf_vprintf(agti_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !agti_buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void agti_buf_printf(agti_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void agti_buf_truncate(agti_buf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        b->ptr[len] = '\0';
    }
}

char *agti_buf_detach(agti_buf *b)
{
    if (b->oom) {
        agti_buf_free(b);
        return NULL;
    }
    char *p = b->ptr;
    if (p == NULL)
        p = agti_strdup("");
    b->ptr = NULL;
    b->len = b->cap = 0;
    return p;
}

void agti_buf_free(agti_buf *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->oom = false;
}

const char *agti_buf_cstr(const agti_buf *b)
{
    return b->ptr ? b->ptr : "";
}

char *agti_strdup(const char *s)
{
    return s ? agti_strndup(s, strlen(s)) : NULL;
}

char *agti_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *agti_aprintf(const char *fmt, ...)
{
    agti_buf b = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return agti_buf_detach(&b);
}
