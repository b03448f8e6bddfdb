/*
 * libFuzzer target: compile an arbitrary glob and match arbitrary paths; and
 * differential check of the wildmatch NFA against a straight port of git's
 * recursive dowild() (wildmatch.c, WM_PATHNAME) on short inputs.
 * Input: pattern '\n' path ('\n' path)...
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { REF_MATCH = 0, REF_NOMATCH = 1, REF_ABORT_ALL = -1, REF_ABORT_TO_STARSTAR = -2 };

static int ref_class(const char *s, size_t n, unsigned char c, int *ok)
{
    static const char *const names[] = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                        "lower", "print", "punct", "space", "upper", "xdigit"};
    *ok = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0) {
            *ok = 1;
            break;
        }
    if (!*ok)
        return 0;
    switch (s[0]) {
    case 'a':
        return n == 5 && s[2] == 'n' ? (c < 128 && ((c | 32) - 'a' < 26u || c - '0' < 10u))
                                     : (c < 128 && (c | 32) - 'a' < 26u);
    case 'b':
        return c == ' ' || c == '\t';
    case 'c':
        return c < 32 || c == 127;
    case 'd':
        return c - '0' < 10u;
    case 'g':
        return c > 32 && c < 127;
    case 'l':
        return c - 'a' < 26u;
    case 'p':
        if (s[1] == 'r')
            return c >= 32 && c < 127;
        return c > 32 && c < 127 && !((c | 32) - 'a' < 26u || c - '0' < 10u);
    case 's':
        return c == ' ' || (c >= 9 && c <= 13);
    case 'u':
        return c - 'A' < 26u;
    case 'x':
        return c - '0' < 10u || (c | 32) - 'a' < 6u;
    }
    return 0;
}

/* git's dowild() with flags = WM_PATHNAME, no case folding. */
static int ref_dowild(const unsigned char *p, const unsigned char *text)
{
    unsigned char p_ch;
    const unsigned char *pattern = p;
    for (; (p_ch = *p) != '\0'; text++, p++) {
        int matched, match_slash, negated;
        unsigned char t_ch, prev_ch;
        if ((t_ch = *text) == '\0' && p_ch != '*')
            return REF_ABORT_ALL;
        switch (p_ch) {
        case '\\':
            p_ch = *++p;
            /* fall through */
        default:
            if (t_ch != p_ch)
                return REF_NOMATCH;
            continue;
        case '?':
            if (t_ch == '/')
                return REF_NOMATCH;
            continue;
        case '*':
            if (*++p == '*') {
                const unsigned char *prev_p = p - 2;
                while (*++p == '*') {
                }
                if ((prev_p < pattern || *prev_p == '/') &&
                    (*p == '\0' || *p == '/' || (p[0] == '\\' && p[1] == '/'))) {
                    if (p[0] == '/' && ref_dowild(p + 1, text) == REF_MATCH)
                        return REF_MATCH;
                    match_slash = 1;
                } else {
                    match_slash = 0;
                }
            } else {
                match_slash = 0;
            }
            if (*p == '\0') {
                if (!match_slash && strchr((const char *)text, '/'))
                    return REF_NOMATCH;
                return REF_MATCH;
            } else if (!match_slash && *p == '/') {
                const char *slash = strchr((const char *)text, '/');
                if (!slash)
                    return REF_NOMATCH;
                text = (const unsigned char *)slash;
                break;
            }
            while (1) {
                if (t_ch == '\0')
                    break;
                if (!(*p == '*' || *p == '?' || *p == '[' || *p == '\\')) {
                    p_ch = *p;
                    while ((t_ch = *text) != '\0' && (match_slash || t_ch != '/')) {
                        if (t_ch == p_ch)
                            break;
                        text++;
                    }
                    if (t_ch != p_ch)
                        return REF_NOMATCH;
                }
                if ((matched = ref_dowild(p, text)) != REF_NOMATCH) {
                    if (!match_slash || matched != REF_ABORT_TO_STARSTAR)
                        return matched;
                } else if (!match_slash && t_ch == '/') {
                    return REF_ABORT_TO_STARSTAR;
                }
                t_ch = *++text;
            }
            return REF_ABORT_ALL;
        case '[':
            p_ch = *++p;
            if (p_ch == '^')
                p_ch = '!';
            negated = p_ch == '!';
            if (negated)
                p_ch = *++p;
            prev_ch = 0;
            matched = 0;
            do {
                if (!p_ch)
                    return REF_ABORT_ALL;
                if (p_ch == '\\') {
                    p_ch = *++p;
                    if (!p_ch)
                        return REF_ABORT_ALL;
                    if (t_ch == p_ch)
                        matched = 1;
                } else if (p_ch == '-' && prev_ch && p[1] && p[1] != ']') {
                    p_ch = *++p;
                    if (p_ch == '\\') {
                        p_ch = *++p;
                        if (!p_ch)
                            return REF_ABORT_ALL;
                    }
                    if (t_ch <= p_ch && t_ch >= prev_ch)
                        matched = 1;
                    p_ch = 0;
                } else if (p_ch == '[' && p[1] == ':') {
                    const unsigned char *s;
                    long i;
                    for (s = p += 2; (p_ch = *p) && p_ch != ']'; p++) {
                    }
                    if (!p_ch)
                        return REF_ABORT_ALL;
                    i = p - s - 1;
                    if (i < 0 || p[-1] != ':') {
                        p = s - 2;
                        p_ch = '[';
                        if (t_ch == p_ch)
                            matched = 1;
                        continue;
                    }
                    int ok;
                    if (ref_class((const char *)s, (size_t)i, t_ch, &ok))
                        matched = 1;
                    if (!ok)
                        return REF_ABORT_ALL;
                    p_ch = 0;
                } else if (t_ch == p_ch) {
                    matched = 1;
                }
            } while (prev_ch = p_ch, (p_ch = *++p) != ']');
            if (matched == negated || t_ch == '/')
                return REF_NOMATCH;
            continue;
        }
    }
    return *text ? REF_NOMATCH : REF_MATCH;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *nl = memchr(buf, '\n', size);
    char *paths = NULL;
    if (nl != NULL) {
        *nl = '\0';
        paths = nl + 1;
    }
    size_t plen = strlen(buf);
    agti_glob *g = NULL;
    if (agti_glob_compile(&g, buf, 0) != AGT_OK)
        g = NULL;
    agti_wm *wm = NULL;
    agti_wm_compile(&wm, buf, plen, 0, NULL);
    while (paths != NULL) {
        char *next = strchr(paths, '\n');
        if (next != NULL)
            *next++ = '\0';
        size_t len = strlen(paths);
        if (g != NULL) {
            agti_glob_match(g, paths, len, false);
            agti_glob_match(g, paths, len, true);
        }
        /* NUL bytes cut both strings the same way for the reference. */
        if (wm != NULL && plen == strlen(buf) && plen <= 48 && len <= 48) {
            bool got = agti_wm_match(wm, paths, len);
            bool want =
                ref_dowild((const unsigned char *)buf, (const unsigned char *)paths) == REF_MATCH;
            if (got != want)
                __builtin_trap();
        }
        paths = next;
    }
    agti_wm_free(wm);
    agti_glob_free(g);
    free(buf);
    return 0;
}
