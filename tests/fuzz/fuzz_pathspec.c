/*
 * libFuzzer target for git pathspecs (lib/search/pathspec.c). Input: specs
 * separated by '\n', then '\0', then paths separated by '\n'.
 * Invariants: a refused list sets a message; for accepted specs, a path's
 * verdict does not depend on the order of the specs, and a plain spec
 * (no magic, no glob characters) selects itself and what lies below it.
 */
#include <stdint.h>

#include "fuzz_common.h"
#include "search/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Letters, digits, '_', '-' and single inner slashes: a spec that names
 * a path as it is. */
static bool is_plain(const char *s)
{
    if (*s == '\0' || *s == '/')
        return false;
    for (const char *p = s; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' ||
                  (*p == '/' && p[1] != '/' && p[1] != '\0');
        if (!ok)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = fz_cstr(data, size);
    if (s == NULL)
        return 0;
    size_t slen = strlen(s);
    char *paths = slen < size ? s + slen + 1 : NULL;
    const char *specs[64], *rev[64];
    size_t n = 0;
    for (char *p = s; p != NULL && n < 64;) {
        char *e = strchr(p, '\n');
        if (e != NULL)
            *e++ = '\0';
        specs[n++] = p;
        p = e;
    }
    for (size_t i = 0; i < n; i++)
        rev[i] = specs[n - 1 - i];
    agti_pathspec *ps = NULL, *pr = NULL;
    int rc = agti_pathspec_compile(&ps, specs, n);
    if (rc != AGT_OK) {
        if (ps != NULL || !*agt_error_message())
            abort();
        free(s);
        return 0;
    }
    if (agti_pathspec_compile(&pr, rev, n) != AGT_OK)
        abort();
    bool plain = n == 1 && is_plain(specs[0]);
    if (plain && !agti_pathspec_match(ps, specs[0]))
        abort();
    char below[300];
    if (plain && strlen(specs[0]) < 200) {
        snprintf(below, sizeof below, "%s/x.c", specs[0]);
        if (!agti_pathspec_match(ps, below))
            abort();
    }
    for (char *p = paths; p != NULL;) {
        char *e = strchr(p, '\n');
        if (e != NULL)
            *e++ = '\0';
        if (agti_pathspec_match(ps, p) != agti_pathspec_match(pr, p))
            abort();
        p = e;
    }
    agti_pathspec_free(ps);
    agti_pathspec_free(pr);
    free(s);
    return 0;
}
