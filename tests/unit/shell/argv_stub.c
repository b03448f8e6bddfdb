/*
 * Stand-in for an external command in the bash comparison test
 * (test_shell_bash.c): appends one record "argc\0argv0-basename\0argv1\0...\0"
 * to the file named by $SHSTUB_LOG with a single O_APPEND write, so records
 * of concurrent (background, piped) commands never interleave. Prints
 * nothing, reads nothing, exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *log = getenv("SHSTUB_LOG");
    if (!log)
        return 0;
    size_t need = 32;
    for (int i = 0; i < argc; i++)
        need += strlen(argv[i]) + 1;
    char *buf = malloc(need);
    if (!buf)
        return 1;
    int n = snprintf(buf, need, "%d", argc);
    size_t len = (size_t)n + 1;
    buf[n] = '\0';
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i == 0) {
            const char *slash = strrchr(a, '/');
            if (slash)
                a = slash + 1;
        }
        size_t l = strlen(a) + 1;
        memcpy(buf + len, a, l);
        len += l;
    }
    int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0600);
    if (fd < 0)
        return 1;
    ssize_t w = write(fd, buf, len);
    close(fd);
    free(buf);
    return w == (ssize_t)len ? 0 : 1;
}
