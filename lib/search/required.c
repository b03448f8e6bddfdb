/*
 * Required literals of a regex, as ripgrep extracts them: a set of strings
 * such that every match of the pattern contains at least one of them. A
 * buffer is then scanned with the literal finder (literal.c) and PCRE2 runs
 * only on the lines that hold a hit.
 *
 * The parser knows a conservative subset of PCRE2 syntax: literal
 * characters, escaped punctuation, \t \r, the classes \d \w \s \h \v (and
 * their negations), '.', bracket classes, ^ $ \b \B, capturing and (?:)
 * groups, alternation and the quantifiers * + ? {n} {n,} {n,m} with their
 * lazy and possessive forms. Anything else (other (? or (* constructs,
 * back references, \Q, \x, \p, \A \z \G \K, ...) gives no literals, so
 * the search runs as without a prefilter. Under case-insensitive matching
 * only ASCII letters other than k and s take part (PCRE2 folds K to U+212A
 * KELVIN SIGN and S to U+017F LONG S, which an ASCII-caseless scan would
 * miss), and no byte >= 0x80.
 *
 * Rules, for a concatenation: consecutive unquantified literal characters
 * form a run; an atom quantified with a minimum >= 1 ends the run with one
 * copy of itself and starts the next run with it ("abc+d" needs "abc" and
 * "cd"); any other atom ends the run. The best of the runs and of the
 * groups' own sets is the concatenation's set. An alternation's set is the
 * union of its branches' sets, and none when any branch has none. A set is
 * better when its shortest member is longer, then when it is smaller.
 * Members are cut to AGTI_REQ_LEN bytes (a prefix of a required string is
 * required too).
 */
#include <string.h>

#include "search/search_internal.h"

typedef struct rparser {
    const char *p;
    size_t n, i;
    bool icase;
    bool bail;
    int depth; /* groups open */
} rparser;

static size_t set_min(const agti_req *r)
{
    size_t m = SIZE_MAX;
    for (size_t i = 0; i < r->n; i++)
        if (r->len[i] < m)
            m = r->len[i];
    return r->n ? m : 0;
}

static bool better(const agti_req *a, const agti_req *b)
{
    if (a->n == 0)
        return false;
    if (b->n == 0)
        return true;
    size_t ma = set_min(a), mb = set_min(b);
    return ma > mb || (ma == mb && a->n < b->n);
}

static void consider(agti_req *best, const agti_req *cand)
{
    if (better(cand, best))
        *best = *cand;
}

typedef struct run {
    char s[AGTI_REQ_LEN];
    size_t len;
    bool full; /* a byte did not fit: nothing more may be appended */
} run;

static void run_put(run *r, const char *b, size_t n)
{
    if (r->full || r->len + n > AGTI_REQ_LEN) {
        r->full = true;
        return;
    }
    memcpy(r->s + r->len, b, n);
    r->len += n;
}

static void run_flush(run *r, agti_req *best)
{
    if (r->len > 0) {
        agti_req one;
        one.n = 1;
        one.len[0] = (unsigned char)r->len;
        memcpy(one.s[0], r->s, r->len);
        consider(best, &one);
    }
    r->len = 0;
    r->full = false;
}

static bool is_alnum(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20u) >= 'a' && (c | 0x20u) <= 'z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Where a POSIX item such as "[:alpha:]" that starts at p[j] == '[' ends
 * (the index after its "]"), or 0 when it is none and the '[' is an ordinary
 * member of the class. PCRE2's own rule (check_posix_syntax in
 * pcre2_compile.c): the item ends at the first terminator followed by ']',
 * but it is none when a ']' or a new '[' with the same terminator comes
 * first; "\]" and "\\" are skipped over. Scanning on to any later
 * terminator instead took "[[=]|ab=]]cd" for one class and lost the
 * alternation after it. */
static size_t posix_item_end(const char *p, size_t n, size_t j)
{
    char kind = p[j + 1];
    for (size_t k = j + 2; k + 1 < n; k++) {
        if (p[k] == '\\' && (p[k + 1] == ']' || p[k + 1] == '\\'))
            k++;
        else if ((p[k] == '[' && p[k + 1] == kind) || p[k] == ']')
            return 0;
        else if (p[k] == kind && p[k + 1] == ']')
            return k + 2;
    }
    return 0;
}

/* Skips a bracket class starting at p[i] == '['. */
static void skip_class(rparser *r)
{
    size_t j = r->i + 1;
    if (j < r->n && r->p[j] == '^')
        j++;
    if (j < r->n && r->p[j] == ']')
        j++;
    for (;;) {
        if (j >= r->n) {
            r->bail = true;
            return;
        }
        char c = r->p[j];
        if (c == '\\') {
            if (j + 1 >= r->n || r->p[j + 1] == 'Q' || r->p[j + 1] == 'E') {
                r->bail = true;
                return;
            }
            j += 2;
            continue;
        }
        if (c == '[' && j + 1 < r->n &&
            (r->p[j + 1] == ':' || r->p[j + 1] == '.' || r->p[j + 1] == '=')) {
            size_t end = posix_item_end(r->p, r->n, j);
            if (end != 0) {
                j = end;
                continue;
            }
            /* not a POSIX item: this '[' is an ordinary member */
        }
        if (c == ']') {
            r->i = j + 1;
            return;
        }
        j++;
    }
}

/* Parses a quantifier at p[i] if there is one: -1 none, else its minimum. */
static long quantifier(rparser *r)
{
    if (r->i >= r->n)
        return -1;
    char c = r->p[r->i];
    long min;
    if (c == '*' || c == '?') {
        min = 0;
        r->i++;
    } else if (c == '+') {
        min = 1;
        r->i++;
    } else if (c == '{') {
        size_t j = r->i + 1;
        if (j >= r->n || !is_digit(r->p[j])) {
            r->bail = true; /* "{" as a literal, or a form not known here */
            return -1;
        }
        min = 0;
        while (j < r->n && is_digit(r->p[j])) {
            if (min < 100000)
                min = min * 10 + (r->p[j] - '0');
            j++;
        }
        if (j < r->n && r->p[j] == ',') {
            j++;
            while (j < r->n && is_digit(r->p[j]))
                j++;
        }
        if (j >= r->n || r->p[j] != '}') {
            r->bail = true;
            return -1;
        }
        r->i = j + 1;
    } else {
        return -1;
    }
    if (r->i < r->n && (r->p[r->i] == '?' || r->p[r->i] == '+'))
        r->i++;
    /* a further quantifier or '{' right after: not a form known here */
    if (r->i < r->n && memchr("*+?{", r->p[r->i], 4) != NULL)
        r->bail = true;
    return min;
}

static void parse_alt(rparser *r, agti_req *out);

enum { A_LIT, A_GROUP, A_OTHER };

static void parse_concat(rparser *r, agti_req *best)
{
    run cur = {{0}, 0, false};
    best->n = 0;
    while (!r->bail && r->i < r->n) {
        unsigned char c = (unsigned char)r->p[r->i];
        if (c == '|' || c == ')')
            break;
        int kind = A_OTHER;
        char lit[4];
        size_t litn = 0;
        agti_req sub;
        sub.n = 0;
        if (c == '(') {
            if (r->i + 1 < r->n && r->p[r->i + 1] == '*') {
                r->bail = true;
                return;
            }
            if (r->i + 1 < r->n && r->p[r->i + 1] == '?') {
                if (r->i + 2 >= r->n || r->p[r->i + 2] != ':') {
                    r->bail = true;
                    return;
                }
                r->i += 3;
            } else {
                r->i++;
            }
            r->depth++;
            parse_alt(r, &sub);
            r->depth--;
            if (r->bail)
                return;
            if (r->i >= r->n || r->p[r->i] != ')') {
                r->bail = true;
                return;
            }
            r->i++;
            kind = A_GROUP;
        } else if (c == '[') {
            skip_class(r);
        } else if (c == '.' || c == '^' || c == '$') {
            r->i++;
        } else if (c == '\\') {
            if (r->i + 1 >= r->n) {
                r->bail = true;
                return;
            }
            unsigned char e = (unsigned char)r->p[r->i + 1];
            r->i += 2;
            if (e >= 0x80) {
                r->bail = true;
                return;
            } else if (!is_alnum(e)) {
                kind = A_LIT;
                lit[litn++] = (char)e;
            } else if (e == 't' || e == 'r') {
                kind = A_LIT;
                lit[litn++] = e == 't' ? '\t' : '\r';
            } else if (strchr("dDwWsShHvVbB", e) == NULL) {
                r->bail = true;
                return;
            }
        } else if (c == '*' || c == '+' || c == '?' || c == '{') {
            r->bail = true;
            return;
        } else if (c < 0x80) {
            kind = A_LIT;
            lit[litn++] = (char)c;
            r->i++;
        } else {
            /* one UTF-8 character: a quantifier after it repeats all of it */
            size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
            if (k == 0 || r->i + k > r->n) {
                r->bail = true;
                return;
            }
            for (size_t j = 1; j < k; j++)
                if (((unsigned char)r->p[r->i + j] & 0xC0u) != 0x80u) {
                    r->bail = true;
                    return;
                }
            kind = A_LIT;
            memcpy(lit, r->p + r->i, k);
            litn = k;
            r->i += k;
        }
        if (kind == A_LIT && r->icase) {
            unsigned char l = (unsigned char)(lit[0] | 0x20);
            if ((unsigned char)lit[0] >= 0x80 || l == 'k' || l == 's')
                kind = A_OTHER;
        }
        long q = quantifier(r);
        if (r->bail)
            return;
        if (kind == A_LIT) {
            if (q < 0) {
                run_put(&cur, lit, litn);
            } else if (q >= 1) {
                run_put(&cur, lit, litn);
                run_flush(&cur, best);
                run_put(&cur, lit, litn);
            } else {
                run_flush(&cur, best);
            }
        } else {
            run_flush(&cur, best);
            if (kind == A_GROUP && q != 0)
                consider(best, &sub);
        }
    }
    run_flush(&cur, best);
}

static void parse_alt(rparser *r, agti_req *out)
{
    agti_req uni;
    uni.n = 0;
    bool ok = true;
    if (r->depth > 64) {
        r->bail = true;
        return;
    }
    for (;;) {
        agti_req cat;
        parse_concat(r, &cat);
        if (r->bail)
            return;
        if (cat.n == 0 || uni.n + cat.n > AGTI_REQ_MAX)
            ok = false;
        if (ok) {
            for (size_t k = 0; k < cat.n; k++) {
                uni.len[uni.n] = cat.len[k];
                memcpy(uni.s[uni.n], cat.s[k], cat.len[k]);
                uni.n++;
            }
        }
        if (r->i < r->n && r->p[r->i] == '|') {
            r->i++;
            continue;
        }
        break;
    }
    out->n = ok ? uni.n : 0;
    if (ok)
        *out = uni;
}

bool agti_regex_required(const char *pattern, size_t n, bool icase, agti_req *out)
{
    rparser r = {pattern, n, 0, icase, false, 0};
    out->n = 0;
    parse_alt(&r, out);
    if (r.bail || r.i != n) {
        out->n = 0;
        return false;
    }
    return true;
}
