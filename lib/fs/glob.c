/*
 * Glob patterns for the Glob tool and glob filters. Braces are expanded once
 * at compile time (nested, with escapes, never inside "[...]"), and every
 * alternative is compiled to a wildmatch NFA; matching never backtracks.
 * Anchoring follows ripgrep's -g: a pattern with no '/' matches the basename
 * at any depth, one with a '/' matches the whole root-relative path. An
 * alternative made of leading "**" + "/" pairs and an X without '/' or "**"
 * is matched as X on the basename: the pairs take any folders and no token
 * of X can match a '/', so X must match exactly the last component (and
 * "*.h" alone runs as a suffix compare instead of the NFA).
 */
#include <stdlib.h>
#include <string.h>

#include "fs.h"

struct agti_glob {
    agti_wm **alts;
    bool *on_base; /* per alternative: matched against the basename */
    size_t nalts;
    bool basename_only;
    bool dir_only;
};

/* Length of the leading run of "**" + "/" of alt when what follows is a
 * non-empty X without '/' and without "**" (so alt matches exactly when X
 * matches the basename), else 0. */
static size_t any_dirs_prefix(const char *alt, size_t len)
{
    size_t k = 0;
    while (len - k > 3 && memcmp(alt + k, "**/", 3) == 0)
        k += 3;
    if (k == 0 || memchr(alt + k, '/', len - k) != NULL)
        return 0;
    for (size_t i = k; i + 1 < len; i++)
        if (alt[i] == '*' && alt[i + 1] == '*')
            return 0;
    return k;
}

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void strlist_clear(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static int strlist_push(strlist *l, char *s)
{
    if (s == NULL)
        return agti_oom();
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) {
            free(s);
            return AGT_OK;
        }
    if (l->n >= AGTI_GLOB_MAX_ALTERNATIVES) {
        free(s);
        return agti_error(AGT_ELIMIT, "glob: more than %d alternatives after brace expansion",
                          AGTI_GLOB_MAX_ALTERNATIVES);
    }
    if (agti_grow(&l->v, &l->cap, l->n, sizeof *l->v, 8) != AGT_OK) {
        free(s);
        return AGT_ENOMEM;
    }
    l->v[l->n++] = s;
    return AGT_OK;
}

/* Checks escapes, brackets and brace balance of the whole pattern so that
 * expansion can assume a well-formed input; the message names the offset. */
static int validate(const char *p, size_t len)
{
    size_t depth = 0, open_at = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c == '\\') {
            if (i + 1 >= len)
                return agti_error(AGT_EPARSE, "glob '%s': trailing backslash at offset %zu", p, i);
            i++;
        } else if (c == '[') {
            size_t e = agti_wm_bracket_end(p, len, i);
            if (e == 0)
                return agti_error(AGT_EPARSE,
                                  "glob '%s': unclosed or malformed '[' at offset %zu (write "
                                  "\\[ for a literal bracket)",
                                  p, i);
            i = e - 1;
        } else if (c == '{') {
            if (depth++ == 0)
                open_at = i;
        } else if (c == '}') {
            if (depth == 0)
                return agti_error(AGT_EPARSE,
                                  "glob '%s': '}' at offset %zu has no matching '{' (write \\} "
                                  "for a literal brace)",
                                  p, i);
            depth--;
        }
    }
    if (depth > 0)
        return agti_error(AGT_EPARSE,
                          "glob '%s': '{' at offset %zu is not closed (write \\{ for a literal "
                          "brace)",
                          p, open_at);
    return AGT_OK;
}

/* Index just past the escape or bracket expression starting at i, or i+1. */
static size_t skip_atom(const char *p, size_t len, size_t i)
{
    if (p[i] == '\\')
        return i + 2 <= len ? i + 2 : len;
    if (p[i] == '[') {
        size_t e = agti_wm_bracket_end(p, len, i);
        return e ? e : i + 1;
    }
    return i + 1;
}

static int expand(const char *p, size_t len, strlist *out, size_t *budget)
{
    /* Duplicates are dropped, so bound the work itself, not only the result. */
    if (*budget == 0)
        return agti_error(AGT_ELIMIT,
                          "glob: brace expansion is too large (more than %d "
                          "alternatives)",
                          AGTI_GLOB_MAX_ALTERNATIVES);
    (*budget)--;
    size_t open = len;
    for (size_t i = 0; i < len;) {
        if (p[i] == '{') {
            open = i;
            break;
        }
        i = skip_atom(p, len, i);
    }
    if (open == len)
        return strlist_push(out, agti_strndup(p, len));
    /* Find the matching '}' and the top-level commas. */
    size_t depth = 0, close = len;
    for (size_t i = open; i < len;) {
        if (p[i] == '{')
            depth++;
        else if (p[i] == '}' && --depth == 0) {
            close = i;
            break;
        }
        i = skip_atom(p, len, i);
    }
    if (close == len)
        return agti_error(AGT_EPARSE, "glob: unbalanced '{'");
    size_t start = open + 1;
    depth = 0;
    for (size_t i = open + 1; i <= close;) {
        bool split = i == close || (p[i] == ',' && depth == 0);
        if (!split) {
            if (p[i] == '{')
                depth++;
            else if (p[i] == '}')
                depth--;
            i = skip_atom(p, len, i);
            continue;
        }
        /* prefix + part + suffix, expanded again for the braces left. */
        size_t plen = open, alen = i - start, slen = len - close - 1;
        char *s = malloc(plen + alen + slen + 1);
        if (s == NULL)
            return agti_oom();
        memcpy(s, p, plen);
        memcpy(s + plen, p + start, alen);
        memcpy(s + plen + alen, p + close + 1, slen);
        s[plen + alen + slen] = '\0';
        int rc = expand(s, plen + alen + slen, out, budget);
        free(s);
        if (rc != AGT_OK)
            return rc;
        start = i + 1;
        i++;
    }
    return AGT_OK;
}

int agti_glob_compile(agti_glob **out, const char *pattern, unsigned flags)
{
    if (out == NULL)
        return agti_error(AGT_EINVAL, "glob: NULL out");
    *out = NULL;
    if (pattern == NULL || pattern[0] == '\0')
        return agti_error(AGT_EINVAL, "glob: the pattern is empty");
    size_t len = strlen(pattern);
    if (len > AGTI_GLOB_MAX_LEN)
        return agti_error(AGT_ELIMIT, "glob: the pattern is %zu bytes long; the limit is %d", len,
                          AGTI_GLOB_MAX_LEN);
    int rc = validate(pattern, len);
    if (rc != AGT_OK)
        return rc;
    agti_glob *g = calloc(1, sizeof *g);
    if (g == NULL)
        return agti_oom();
    const char *p = pattern;
    bool anchored = false;
    for (;;) {
        if (len >= 2 && p[0] == '.' && p[1] == '/') {
            p += 2;
            len -= 2;
            anchored = true;
        } else if (len >= 1 && p[0] == '/') {
            p++;
            len--;
            anchored = true;
        } else {
            break;
        }
    }
    while (len > 0 && p[len - 1] == '/' && !(len >= 2 && p[len - 2] == '\\')) {
        g->dir_only = true;
        len--;
    }
    if (len == 0) {
        free(g);
        return agti_error(AGT_EINVAL, "glob '%s': nothing left to match after the slashes",
                          pattern);
    }
    g->basename_only = !anchored && memchr(p, '/', len) == NULL;
    strlist alts = {NULL, 0, 0};
    size_t budget = 4 * AGTI_GLOB_MAX_ALTERNATIVES;
    rc = expand(p, len, &alts, &budget);
    if (rc == AGT_OK) {
        g->alts = calloc(alts.n ? alts.n : 1, sizeof *g->alts);
        g->on_base = calloc(alts.n ? alts.n : 1, sizeof *g->on_base);
        if (g->alts == NULL || g->on_base == NULL)
            rc = agti_oom();
    }
    unsigned wf = (flags & AGTI_GLOB_CASEFOLD) ? AGTI_WM_CASEFOLD : 0;
    for (size_t i = 0; rc == AGT_OK && i < alts.n; i++) {
        const char *a = alts.v[i];
        size_t alen = strlen(a);
        size_t skip = g->basename_only ? 0 : any_dirs_prefix(a, alen);
        g->on_base[i] = g->basename_only || skip > 0;
        rc = agti_wm_compile(&g->alts[i], a + skip, alen - skip, wf, NULL);
        if (rc == AGT_OK)
            g->nalts++;
    }
    strlist_clear(&alts);
    if (rc != AGT_OK) {
        agti_glob_free(g);
        return rc;
    }
    *out = g;
    return AGT_OK;
}

bool agti_glob_match(const agti_glob *g, const char *relpath, size_t len, bool is_dir)
{
    if (g == NULL || relpath == NULL || (g->dir_only && !is_dir))
        return false;
    const char *base = relpath;
    for (size_t i = len; i-- > 0;)
        if (relpath[i] == '/') {
            base = relpath + i + 1;
            break;
        }
    size_t blen = len - (size_t)(base - relpath);
    for (size_t i = 0; i < g->nalts; i++)
        if (g->on_base[i] ? agti_wm_match(g->alts[i], base, blen)
                          : agti_wm_match(g->alts[i], relpath, len))
            return true;
    return false;
}

void agti_glob_free(agti_glob *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->nalts; i++)
        agti_wm_free(g->alts[i]);
    free(g->alts);
    free(g->on_base);
    free(g);
}
