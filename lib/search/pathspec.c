/*
 * Git pathspecs for code_search's file_patterns. git's rules (see
 * gitglossary(7) "pathspec"): without glob characters a spec names a path or
 * a directory prefix; with them it is an fnmatch pattern over the whole path
 * in which '*' also matches '/', unless the "glob" magic asks for
 * wildmatch's pathname semantics (lib/fs).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"
#include "search/search.h"

enum { PS_EXCLUDE = 1, PS_GLOB = 2, PS_LITERAL = 4, PS_ICASE = 8 };

typedef struct ps_item {
    char *text;
    size_t len;
    unsigned magic;
    bool wild;
    agti_wm *wm; /* PS_GLOB */
} ps_item;

struct agti_pathspec {
    ps_item *items;
    size_t n;
    size_t npositive;
};

static bool has_wild(const char *s)
{
    return strpbrk(s, "*?[\\") != NULL;
}

static int parse_long_magic(const char *spec, const char **rest, unsigned *magic)
{
    const char *p = spec + 2; /* after ":(" */
    const char *close = strchr(p, ')');
    if (close == NULL)
        return agti_error(AGT_EINVAL, "pathspec '%s': missing ')' after the magic", spec);
    while (p < close) {
        const char *end = memchr(p, ',', (size_t)(close - p));
        if (end == NULL)
            end = close;
        size_t n = (size_t)(end - p);
        if (n == 7 && memcmp(p, "exclude", 7) == 0)
            *magic |= PS_EXCLUDE;
        else if (n == 4 && memcmp(p, "glob", 4) == 0)
            *magic |= PS_GLOB;
        else if (n == 7 && memcmp(p, "literal", 7) == 0)
            *magic |= PS_LITERAL;
        else if (n == 5 && memcmp(p, "icase", 5) == 0)
            *magic |= PS_ICASE;
        else if (n == 3 && memcmp(p, "top", 3) == 0)
            ; /* specs are relative to the root already */
        else if (n > 0)
            return agti_error(AGT_EINVAL,
                              "pathspec '%s': unsupported magic '%.*s' (known: exclude, glob, "
                              "literal, icase, top)",
                              spec, (int)n, p);
        p = end < close ? end + 1 : close;
    }
    *rest = close + 1;
    return AGT_OK;
}

static int parse_short_magic(const char *spec, const char **rest, unsigned *magic)
{
    const char *p = spec + 1;
    for (; *p; p++) {
        if (*p == '!' || *p == '^')
            *magic |= PS_EXCLUDE;
        else if (*p == '/')
            ; /* top: the root already */
        else
            break;
    }
    if (*p == ':')
        p++;
    *rest = p;
    return AGT_OK;
}

static int compile_item(ps_item *it, const char *spec)
{
    const char *rest = spec;
    unsigned magic = 0;
    int rc = AGT_OK;
    if (spec[0] == ':' && spec[1] == '(')
        rc = parse_long_magic(spec, &rest, &magic);
    else if (spec[0] == ':')
        rc = parse_short_magic(spec, &rest, &magic);
    if (rc != AGT_OK)
        return rc;
    while (rest[0] == '.' && rest[1] == '/')
        rest += 2;
    if (strcmp(rest, ".") == 0)
        rest = "";
    it->text = agti_strdup(rest);
    if (it->text == NULL)
        return agti_oom();
    it->len = strlen(rest);
    it->magic = magic;
    it->wild = !(magic & PS_LITERAL) && has_wild(rest);
    if (it->wild && (magic & PS_GLOB)) {
        bool bad = false;
        rc = agti_wm_compile(&it->wm, rest, it->len, (magic & PS_ICASE) ? AGTI_WM_CASEFOLD : 0,
                             &bad);
        if (rc != AGT_OK)
            return rc;
    }
    return AGT_OK;
}

int agti_pathspec_compile(agti_pathspec **out, const char *const *specs, size_t n)
{
    if (out == NULL || (n > 0 && specs == NULL))
        return agti_error(AGT_EINVAL, "pathspec: NULL argument");
    *out = NULL;
    agti_pathspec *ps = calloc(1, sizeof *ps);
    if (ps == NULL)
        return agti_oom();
    ps->items = calloc(n ? n : 1, sizeof *ps->items);
    if (ps->items == NULL) {
        free(ps);
        return agti_oom();
    }
    for (size_t i = 0; i < n; i++) {
        if (specs[i] == NULL || specs[i][0] == '\0') {
            agti_pathspec_free(ps);
            return agti_error(AGT_EINVAL, "pathspec %zu is empty", i);
        }
        int rc = compile_item(&ps->items[i], specs[i]);
        ps->n = i + 1;
        if (rc != AGT_OK) {
            agti_pathspec_free(ps);
            return rc;
        }
        if (!(ps->items[i].magic & PS_EXCLUDE))
            ps->npositive++;
    }
    *out = ps;
    return AGT_OK;
}

static bool prefix_eq(const char *a, const char *b, size_t n, bool icase)
{
    return icase ? strncasecmp(a, b, n) == 0 : memcmp(a, b, n) == 0;
}

static bool item_match(const ps_item *it, const char *path, size_t plen)
{
    bool icase = (it->magic & PS_ICASE) != 0;
    if (it->len == 0)
        return true;
    if (!it->wild) {
        size_t n = it->len;
        if (it->text[n - 1] == '/') /* "dir/": directory prefix */
            return plen >= n && prefix_eq(path, it->text, n, icase);
        if (plen < n || !prefix_eq(path, it->text, n, icase))
            return false;
        return plen == n || path[n] == '/';
    }
    if (it->wm != NULL)
        return agti_wm_match(it->wm, path, plen);
    return fnmatch(it->text, path, icase ? FNM_CASEFOLD : 0) == 0;
}

bool agti_pathspec_match(const agti_pathspec *ps, const char *relpath)
{
    if (ps == NULL || ps->n == 0)
        return true;
    size_t plen = strlen(relpath);
    bool in = ps->npositive == 0;
    for (size_t i = 0; i < ps->n && !in; i++)
        if (!(ps->items[i].magic & PS_EXCLUDE) && item_match(&ps->items[i], relpath, plen))
            in = true;
    if (!in)
        return false;
    for (size_t i = 0; i < ps->n; i++)
        if ((ps->items[i].magic & PS_EXCLUDE) && item_match(&ps->items[i], relpath, plen))
            return false;
    return true;
}

void agti_pathspec_free(agti_pathspec *ps)
{
    if (ps == NULL)
        return;
    for (size_t i = 0; i < ps->n; i++) {
        free(ps->items[i].text);
        agti_wm_free(ps->items[i].wm);
    }
    free(ps->items);
    free(ps);
}
