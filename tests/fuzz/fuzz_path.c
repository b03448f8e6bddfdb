/*
 * libFuzzer target for path handling in lib/fs/path.c. Input: lines, each
 * a path. Per line: lexical normalisation (agti_path_normalize), the
 * within test, and resolution against a workspace folder of this process
 * (agti_path_resolve: reads the file system, writes nothing).
 * Invariants: normalisation is idempotent, keeps a path absolute or
 * relative, leaves no "." or empty components (except "." for an empty
 * result), no ".." in an absolute result and ".." only leading in a
 * relative one; a path lies within itself; a resolved path is absolute,
 * normalised and within the root (or the allowed folder), with the display
 * path matching it; a refusal sets a message.
 */
#include <stdint.h>

#include "fs/fs.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_normal(const char *in, const char *n)
{
    if (n[0] == '\0' || (in[0] == '/') != (n[0] == '/'))
        abort();
    if (strcmp(n, ".") == 0 || strcmp(n, "/") == 0)
        return;
    bool leading = n[0] != '/';
    const char *p = n[0] == '/' ? n + 1 : n;
    for (;;) {
        const char *e = strchr(p, '/');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 0 || (k == 1 && p[0] == '.'))
            abort();
        bool dotdot = k == 2 && p[0] == '.' && p[1] == '.';
        if (dotdot && !leading)
            abort();
        if (!dotdot)
            leading = false;
        if (!e)
            break;
        p = e + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char allowed[PATH_MAX];
    if (size > 8192)
        return 0;
    const char *root = fz_workspace();
    if (allowed[0] == '\0')
        snprintf(allowed, sizeof allowed, "%s/../agt-fuzz-allowed", root);
    const char *allow[1] = {allowed};
    char *s = fz_cstr(data, size);
    if (s == NULL)
        return 0;
    for (char *line = s; line != NULL;) {
        char *next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        char *n = agti_path_normalize(line);
        if (n != NULL) {
            check_normal(line, n);
            char *n2 = agti_path_normalize(n);
            if (n2 != NULL && strcmp(n, n2) != 0)
                abort();
            if (!agti_path_is_within(n, n))
                abort();
            free(n2);
            free(n);
        }
        char *abs = NULL, *rel = NULL;
        int rc = agti_path_resolve(root, allow, 1, "/nonexistent-agt-fuzz-home", line, &abs, &rel);
        if (rc == AGT_OK) {
            if (abs == NULL || rel == NULL || abs[0] != '/')
                abort();
            char *na = agti_path_normalize(abs);
            if (na == NULL || strcmp(na, abs) != 0)
                abort();
            free(na);
            if (agti_path_is_within(abs, root)) {
                size_t rl = strlen(root);
                if (strcmp(rel, ".") == 0 ? strcmp(abs, root) != 0
                                          : abs[rl] != '/' || strcmp(abs + rl + 1, rel) != 0)
                    abort();
            } else if (strcmp(rel, abs) != 0) {
                abort(); /* an allowed folder: shown absolute */
            }
        } else if (abs != NULL || rel != NULL || !*agt_error_message()) {
            abort();
        }
        free(abs);
        free(rel);
        line = next;
    }
    free(s);
    return 0;
}
