/*
 * git's wildmatch() semantics (WM_PATHNAME), compiled to a Thompson NFA that
 * runs bit-parallel over the text: no backtracking, so "*a*a*a*a*b" on a long
 * text or many "**" costs O(text * pattern / 64), never exponential.
 *
 * Tokens: a literal, '?', a bracket class (each consumes one byte), '*'
 * (loops on any byte but '/', may be skipped), a "**" at the end after '/'
 * (loops on every byte, may be skipped) and a "**" followed by '/' (loops on
 * every byte) and a "**" followed by '/' (an entry token that may skip the
 * whole "**" + "/", which gives git's "foo / ** / bar matches foo/bar", then
 * a loop on every byte and the '/'). State i means "tokens [0, i) matched".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"

enum { WM_NEVER, WM_LITERAL, WM_ENDSWITH, WM_NFA };

struct agti_wm {
    int kind;
    bool casefold;
    char *lit; /* WM_LITERAL / WM_ENDSWITH: the literal (folded when casefold) */
    size_t litlen;
    size_t nstates; /* tokens + 1 */
    size_t nwords;
    uint64_t *acc;     /* [256][nwords]: token i accepts byte c */
    uint64_t *consume; /* tokens that advance */
    uint64_t *loop;    /* tokens that stay */
    uint64_t *eps1;    /* state i -> i+1 without input */
    uint64_t *eps3;    /* state i -> i+3 without input */
    /* Prefilter: a literal every match contains (a run of mandatory
     * single-byte tokens), and the fewest bytes a match consumes. */
    char req[16];
    size_t reqlen;
    size_t minlen;
};

static bool is_special(char c)
{
    return c == '*' || c == '?' || c == '[' || c == '\\';
}

static bool class_named(const char *s, size_t n, unsigned c, bool *known)
{
    *known = true;
#define CC(name) (n == sizeof(name) - 1 && memcmp(s, name, n) == 0)
    /* ASCII classes, like git's sane_ctype. */
    if (CC("alnum"))
        return c < 128 && isalnum((int)c);
    if (CC("alpha"))
        return c < 128 && isalpha((int)c);
    if (CC("blank"))
        return c == ' ' || c == '\t';
    if (CC("cntrl"))
        return c < 32 || c == 127;
    if (CC("digit"))
        return c >= '0' && c <= '9';
    if (CC("graph"))
        return c > 32 && c < 127;
    if (CC("lower"))
        return c >= 'a' && c <= 'z';
    if (CC("print"))
        return c >= 32 && c < 127;
    if (CC("punct"))
        return c > 32 && c < 127 && !isalnum((int)c);
    if (CC("space"))
        return c == ' ' || (c >= 9 && c <= 13);
    if (CC("upper"))
        return c >= 'A' && c <= 'Z';
    if (CC("xdigit"))
        return c < 128 && isxdigit((int)c);
#undef CC
    *known = false;
    return false;
}

/* Parses the bracket expression at p[i] == '[' following git's dowild();
 * fills set (when non-NULL) and returns the index after ']', 0 if malformed. */
static size_t parse_bracket(const char *p, size_t len, size_t i, bool set[256])
{
    bool negated = false;
    bool m[256];
    memset(m, 0, sizeof m);
    i++;
    if (i < len && (p[i] == '!' || p[i] == '^')) {
        negated = true;
        i++;
    }
    unsigned prev = 0;
    bool have_prev = false;
    for (bool first = true;; first = false) {
        if (i >= len)
            return 0;
        unsigned char ch = (unsigned char)p[i];
        if (ch == ']' && !first)
            break;
        if (ch == '\\') {
            if (++i >= len)
                return 0;
            ch = (unsigned char)p[i];
            m[ch] = true;
            prev = ch;
            have_prev = true;
        } else if (ch == '-' && have_prev && prev != 0 && i + 1 < len && p[i + 1] != ']') {
            i++;
            unsigned char hi = (unsigned char)p[i];
            if (hi == '\\') {
                if (++i >= len)
                    return 0;
                hi = (unsigned char)p[i];
            }
            for (unsigned c = prev; c <= hi; c++)
                m[c] = true;
            have_prev = false;
            prev = 0;
        } else if (ch == '[' && i + 1 < len && p[i + 1] == ':') {
            size_t s = i + 2, e = s;
            while (e < len && p[e] != ']')
                e++;
            if (e >= len)
                return 0;
            if (e == s || p[e - 1] != ':') {
                /* No ":]": a plain '[' in the set. */
                m['['] = true;
                prev = '[';
                have_prev = true;
            } else {
                bool known = true;
                for (unsigned c = 0; c < 256; c++)
                    if (class_named(p + s, e - 1 - s, c, &known))
                        m[c] = true;
                class_named(p + s, e - 1 - s, 'a', &known);
                if (!known)
                    return 0;
                i = e;
                have_prev = false;
                prev = 0;
            }
        } else {
            m[ch] = true;
            prev = ch;
            have_prev = true;
        }
        i++;
    }
    if (set != NULL)
        for (unsigned c = 0; c < 256; c++)
            set[c] = (m[c] != negated) && c != '/';
    return i + 1;
}

size_t agti_wm_bracket_end(const char *p, size_t len, size_t i)
{
    return parse_bracket(p, len, i, NULL);
}

/* ---- compile ---------------------------------------------------------- */

enum { T_ONE, T_STAR, T_ALL_END, T_ALL_SLASH, T_ENTRY };

typedef struct tok {
    int type;
    bool set[256];
} tok;

static void set_bit(uint64_t *v, size_t i)
{
    v[i / 64] |= (uint64_t)1 << (i % 64);
}

static int tok_push(tok **toks, size_t *n, size_t *cap, int type)
{
    if (agti_grow(&*toks, &*cap, *n, sizeof **toks, 16) != AGT_OK)
        return AGT_ENOMEM;
    (*toks)[*n].type = type;
    memset((*toks)[*n].set, 0, sizeof(*toks)[*n].set);
    (*n)++;
    return AGT_OK;
}

static void fold_set(bool set[256])
{
    for (unsigned c = 'a'; c <= 'z'; c++) {
        bool any = set[c] || set[c - 32];
        set[c] = set[c - 32] = any;
    }
}

/* Tokenises; returns 1 when the pattern is malformed (matches nothing). */
static int tokenize(const char *p, size_t len, bool casefold, tok **toks, size_t *n)
{
    size_t cap = 0;
    *toks = NULL;
    *n = 0;
    for (size_t i = 0; i < len;) {
        char c = p[i];
        int rc;
        if (c == '*') {
            size_t j = i;
            while (j < len && p[j] == '*')
                j++;
            bool dbl = j - i >= 2;
            bool left = i == 0 || p[i - 1] == '/';
            if (dbl && left && j == len) {
                if ((rc = tok_push(toks, n, &cap, T_ALL_END)) != AGT_OK)
                    return rc;
                i = j;
                continue;
            }
            if (dbl && left && (p[j] == '/' || (p[j] == '\\' && j + 1 < len && p[j + 1] == '/'))) {
                /* entry (skip all three, or go on), loop, '/'. git only
                 * takes the zero-directory shortcut for an unescaped '/'. */
                if (p[j] == '/' && (rc = tok_push(toks, n, &cap, T_ENTRY)) != AGT_OK)
                    return rc;
                if ((rc = tok_push(toks, n, &cap, T_ALL_SLASH)) != AGT_OK)
                    return rc;
                if ((rc = tok_push(toks, n, &cap, T_ONE)) != AGT_OK)
                    return rc;
                (*toks)[*n - 1].set['/'] = true;
                i = p[j] == '/' ? j + 1 : j + 2;
                continue;
            }
            if ((rc = tok_push(toks, n, &cap, T_STAR)) != AGT_OK)
                return rc;
            for (unsigned b = 0; b < 256; b++)
                (*toks)[*n - 1].set[b] = b != '/';
            i = j;
            continue;
        }
        if ((rc = tok_push(toks, n, &cap, T_ONE)) != AGT_OK)
            return rc;
        bool *set = (*toks)[*n - 1].set;
        if (c == '?') {
            for (unsigned b = 0; b < 256; b++)
                set[b] = b != '/';
            i++;
        } else if (c == '[') {
            size_t e = parse_bracket(p, len, i, set);
            if (e == 0)
                return 1;
            if (casefold)
                fold_set(set);
            i = e;
        } else {
            if (c == '\\') {
                if (++i >= len)
                    return 1;
                c = p[i];
            }
            set[(unsigned char)c] = true;
            if (casefold)
                fold_set(set);
            i++;
        }
    }
    return AGT_OK;
}

/* The only byte a token accepts, or -1. */
static int single_byte(const tok *t)
{
    int found = -1;
    for (unsigned c = 0; c < 256; c++)
        if (t->set[c]) {
            if (found >= 0)
                return -1;
            found = (int)c;
        }
    return found;
}

static void find_required(agti_wm *wm, const tok *toks, size_t n)
{
    size_t best_at = 0, best_len = 0, run_at = 0, run_len = 0;
    wm->minlen = 0;
    for (size_t i = 0; i < n; i++) {
        /* The '/' after an entry + loop pair can be skipped. */
        bool optional = i >= 2 && toks[i - 2].type == T_ENTRY;
        bool lit = toks[i].type == T_ONE && !optional && single_byte(&toks[i]) >= 0;
        if (toks[i].type == T_ONE && !optional)
            wm->minlen++;
        if (lit) {
            if (run_len == 0)
                run_at = i;
            run_len++;
            if (run_len > best_len && best_len < sizeof wm->req) {
                best_at = run_at;
                best_len = run_len;
            }
        } else {
            run_len = 0;
        }
    }
    if (best_len > sizeof wm->req)
        best_len = sizeof wm->req;
    for (size_t i = 0; i < best_len; i++)
        wm->req[i] = (char)single_byte(&toks[best_at + i]);
    wm->reqlen = best_len;
}

static int build_nfa(agti_wm *wm, const tok *toks, size_t n)
{
    if (!wm->casefold)
        find_required(wm, toks, n);
    wm->nstates = n + 1;
    wm->nwords = (wm->nstates + 63) / 64;
    size_t w = wm->nwords;
    wm->acc = calloc(256 * w, sizeof(uint64_t));
    wm->consume = calloc(4 * w, sizeof(uint64_t));
    if (wm->acc == NULL || wm->consume == NULL)
        return agti_oom();
    wm->loop = wm->consume + w;
    wm->eps1 = wm->consume + 2 * w;
    wm->eps3 = wm->consume + 3 * w;
    for (size_t i = 0; i < n; i++) {
        const tok *t = &toks[i];
        switch (t->type) {
        case T_ONE:
            set_bit(wm->consume, i);
            for (unsigned c = 0; c < 256; c++)
                if (t->set[c])
                    set_bit(wm->acc + c * w, i);
            break;
        case T_STAR:
            set_bit(wm->loop, i);
            set_bit(wm->eps1, i);
            for (unsigned c = 0; c < 256; c++)
                if (t->set[c])
                    set_bit(wm->acc + c * w, i);
            break;
        case T_ENTRY:
            set_bit(wm->eps1, i);
            set_bit(wm->eps3, i);
            break;
        case T_ALL_END:
        case T_ALL_SLASH:
            set_bit(wm->loop, i);
            set_bit(wm->eps1, i);
            for (unsigned c = 0; c < 256; c++)
                set_bit(wm->acc + c * w, i);
            break;
        default:
            break;
        }
    }
    return AGT_OK;
}

int agti_wm_compile(agti_wm **out, const char *pattern, size_t len, unsigned flags, bool *bad)
{
    *out = NULL;
    if (bad != NULL)
        *bad = false;
    agti_wm *wm = calloc(1, sizeof *wm);
    if (wm == NULL)
        return agti_oom();
    wm->casefold = (flags & AGTI_WM_CASEFOLD) != 0;
    size_t nspecial = 0, first_special = len;
    for (size_t i = 0; i < len; i++)
        if (is_special(pattern[i])) {
            nspecial++;
            if (first_special == len)
                first_special = i;
        }
    if (nspecial == 0 || (nspecial == 1 && pattern[0] == '*' && len > 1 &&
                          memchr(pattern + 1, '/', len - 1) == NULL)) {
        size_t off = nspecial ? 1 : 0;
        wm->kind = nspecial ? WM_ENDSWITH : WM_LITERAL;
        wm->lit = agti_strndup(pattern + off, len - off);
        if (wm->lit == NULL) {
            free(wm);
            return agti_oom();
        }
        wm->litlen = len - off;
        if (wm->casefold)
            for (size_t i = 0; i < wm->litlen; i++)
                wm->lit[i] = (char)tolower((unsigned char)wm->lit[i]);
        *out = wm;
        return AGT_OK;
    }
    tok *toks = NULL;
    size_t n = 0;
    int rc = tokenize(pattern, len, wm->casefold, &toks, &n);
    if (rc == 1) {
        wm->kind = WM_NEVER;
        if (bad != NULL)
            *bad = true;
        rc = AGT_OK;
    } else if (rc == AGT_OK) {
        wm->kind = WM_NFA;
        rc = build_nfa(wm, toks, n);
    }
    free(toks);
    if (rc != AGT_OK) {
        agti_wm_free(wm);
        return rc;
    }
    *out = wm;
    return AGT_OK;
}

void agti_wm_free(agti_wm *wm)
{
    if (wm == NULL)
        return;
    free(wm->lit);
    free(wm->acc);
    free(wm->consume);
    free(wm);
}

/* ---- match ------------------------------------------------------------ */

static bool eq_fold(const char *a, const char *lit, size_t n, bool fold)
{
    if (!fold)
        return memcmp(a, lit, n) == 0;
    for (size_t i = 0; i < n; i++)
        if ((char)tolower((unsigned char)a[i]) != lit[i])
            return false;
    return true;
}

static void closure(const agti_wm *wm, uint64_t *s)
{
    size_t w = wm->nwords;
    if (w == 1) {
        uint64_t e1 = wm->eps1[0], e3 = wm->eps3[0], v = s[0];
        for (;;) {
            uint64_t add = ((v & e1) << 1) | ((v & e3) << 3);
            if ((add & ~v) == 0)
                break;
            v |= add;
        }
        s[0] = v;
        return;
    }
    for (;;) {
        bool changed = false;
        for (size_t k = w; k-- > 0;) {
            uint64_t e1 = s[k] & wm->eps1[k], e3 = s[k] & wm->eps3[k];
            if (!(e1 | e3))
                continue;
            uint64_t add = (e1 << 1) | (e3 << 3);
            if ((s[k] | add) != s[k]) {
                s[k] |= add;
                changed = true;
            }
            if (k + 1 < w) {
                uint64_t carry = (e1 >> 63) | (e3 >> 61);
                if ((s[k + 1] | carry) != s[k + 1]) {
                    s[k + 1] |= carry;
                    changed = true;
                }
            }
        }
        if (!changed)
            return;
    }
}

static bool run_nfa(const agti_wm *wm, const char *text, size_t len)
{
    size_t w = wm->nwords;
    uint64_t small[2 * 4];
    uint64_t *cur = small, *heap = NULL;
    if (w > 4) {
        heap = malloc(2 * w * sizeof(uint64_t));
        if (heap == NULL)
            return false;
        cur = heap;
    }
    uint64_t *nxt = cur + w;
    memset(cur, 0, w * sizeof(uint64_t));
    cur[0] = 1;
    closure(wm, cur);
    bool alive = true;
    for (size_t i = 0; i < len && alive; i++) {
        unsigned char c = (unsigned char)text[i];
        if (wm->casefold)
            c = (unsigned char)tolower(c);
        const uint64_t *acc = wm->acc + (size_t)c * w;
        uint64_t carry = 0;
        alive = false;
        for (size_t k = 0; k < w; k++) {
            uint64_t reach = cur[k] & acc[k];
            uint64_t adv = reach & wm->consume[k];
            nxt[k] = (adv << 1) | carry | (reach & wm->loop[k]);
            carry = adv >> 63;
        }
        closure(wm, nxt);
        for (size_t k = 0; k < w; k++)
            if (nxt[k])
                alive = true;
        uint64_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    size_t last = wm->nstates - 1;
    bool ok = alive && (cur[last / 64] >> (last % 64)) & 1;
    free(heap);
    return ok;
}

bool agti_wm_match(const agti_wm *wm, const char *text, size_t len)
{
    switch (wm->kind) {
    case WM_LITERAL:
        return len == wm->litlen && eq_fold(text, wm->lit, len, wm->casefold);
    case WM_ENDSWITH:
        return len >= wm->litlen &&
               eq_fold(text + len - wm->litlen, wm->lit, wm->litlen, wm->casefold) &&
               memchr(text, '/', len - wm->litlen) == NULL;
    case WM_NFA:
        if (len < wm->minlen || (wm->reqlen > 0 && memmem(text, len, wm->req, wm->reqlen) == NULL))
            return false;
        return run_nfa(wm, text, len);
    default:
        return false;
    }
}

bool agti_wildmatch(const char *pattern, const char *text, unsigned flags)
{
    agti_wm *wm;
    if (agti_wm_compile(&wm, pattern, strlen(pattern), flags, NULL) != AGT_OK)
        return false;
    bool m = agti_wm_match(wm, text, strlen(text));
    agti_wm_free(wm);
    return m;
}
