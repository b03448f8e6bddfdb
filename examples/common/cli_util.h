/* Small helpers shared by the example CLIs. */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole file (NUL-terminated); NULL on failure (errno set). */
char *cli_read_file(const char *path, size_t *len);

/* Monotonic milliseconds. */
int64_t cli_now_ms(void);

/* Wall-clock milliseconds since the epoch (the session's clock). */
int64_t cli_wall_ms(void);

/*
 * Whether a repository-relative path matches an --exclude glob: fnmatch
 * where '*' also crosses '/', tried on the whole path and, for a pattern
 * without '/', on the file name.
 */
int cli_glob_match(const char *pattern, const char *path);

/* A growing NUL-terminated string (all zero: empty, p NULL). */
typedef struct cli_buf {
    char *p;
    size_t len, cap;
    int oom; /* an append ran out of memory: the rest were dropped */
} cli_buf;

/* Appends s[0..n) (p is allocated even for n 0). After an allocation
 * failure oom is set and nothing more is appended. */
void cli_buf_put(cli_buf *b, const char *s, size_t n);
void cli_buf_puts(cli_buf *b, const char *s);

#endif
