#include "cli_util.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
        if (cap - n - 1 == 0) {
            char *p = realloc(buf, cap * 2);
            if (p == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    if (f != stdin)
        fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        if (len != NULL)
            *len = n;
    }
    return buf;
}

int64_t cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t cli_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_glob_match(const char *pattern, const char *path)
{
    if (fnmatch(pattern, path, 0) == 0)
        return 1;
    if (strchr(pattern, '/') == NULL) {
        const char *base = strrchr(path, '/');
        if (base != NULL && fnmatch(pattern, base + 1, 0) == 0)
            return 1;
    }
    /* "dir/" or "dir" excludes everything below it. */
    size_t n = strlen(pattern);
    while (n > 0 && pattern[n - 1] == '/')
        n--;
    if (n > 0 && strncmp(path, pattern, n) == 0 && path[n] == '/')
        return 1;
    return 0;
}

void cli_buf_put(cli_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (q == NULL) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void cli_buf_puts(cli_buf *b, const char *s)
{
    cli_buf_put(b, s, strlen(s));
}
