/* The matching ladder: where old text lands in a file when it is not there
 * byte for byte, and how its replacement is re-ended and re-indented to the
 * file's own style. Every level normalises both sides the same way and
 * keeps, for each byte it keeps, the span of the original bytes it stands
 * for, so a place found in the normalised text maps back exactly. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "patch.h"

#define TAB_STOP 8

/* A Unicode look-alike: its UTF-8 bytes, what it folds to ("" drops it),
 * its code point and name for messages. */
typedef struct lookalike {
    const char *utf8;
    const char *fold;
    unsigned cp;
    const char *name;
} lookalike;

static const lookalike LOOKALIKES[] = {
    {"\xc2\xa0", " ", 0x00A0, "no-break space"},
    {"\xe2\x80\x80", " ", 0x2000, "en quad"},
    {"\xe2\x80\x81", " ", 0x2001, "em quad"},
    {"\xe2\x80\x82", " ", 0x2002, "en space"},
    {"\xe2\x80\x83", " ", 0x2003, "em space"},
    {"\xe2\x80\x84", " ", 0x2004, "three-per-em space"},
    {"\xe2\x80\x85", " ", 0x2005, "four-per-em space"},
    {"\xe2\x80\x86", " ", 0x2006, "six-per-em space"},
    {"\xe2\x80\x87", " ", 0x2007, "figure space"},
    {"\xe2\x80\x88", " ", 0x2008, "punctuation space"},
    {"\xe2\x80\x89", " ", 0x2009, "thin space"},
    {"\xe2\x80\x8a", " ", 0x200A, "hair space"},
    {"\xe2\x80\xaf", " ", 0x202F, "narrow no-break space"},
    {"\xe2\x81\x9f", " ", 0x205F, "medium mathematical space"},
    {"\xe3\x80\x80", " ", 0x3000, "ideographic space"},
    {"\xe2\x80\x8b", "", 0x200B, "zero-width space"},
    {"\xe2\x80\x8c", "", 0x200C, "zero-width non-joiner"},
    {"\xe2\x80\x8d", "", 0x200D, "zero-width joiner"},
    {"\xe2\x81\xa0", "", 0x2060, "word joiner"},
    {"\xef\xbb\xbf", "", 0xFEFF, "zero-width no-break space"},
    {"\xe2\x80\x98", "'", 0x2018, "left single quotation mark"},
    {"\xe2\x80\x99", "'", 0x2019, "right single quotation mark"},
    {"\xe2\x80\x9a", "'", 0x201A, "single low-9 quotation mark"},
    {"\xe2\x80\x9b", "'", 0x201B, "single high-reversed-9 quotation mark"},
    {"\xe2\x80\x9c", "\"", 0x201C, "left double quotation mark"},
    {"\xe2\x80\x9d", "\"", 0x201D, "right double quotation mark"},
    {"\xe2\x80\x9e", "\"", 0x201E, "double low-9 quotation mark"},
    {"\xe2\x80\x9f", "\"", 0x201F, "double high-reversed-9 quotation mark"},
    {"\xe2\x80\x90", "-", 0x2010, "hyphen"},
    {"\xe2\x80\x91", "-", 0x2011, "non-breaking hyphen"},
    {"\xe2\x80\x92", "-", 0x2012, "figure dash"},
    {"\xe2\x80\x93", "-", 0x2013, "en dash"},
    {"\xe2\x80\x94", "-", 0x2014, "em dash"},
    {"\xe2\x80\x95", "-", 0x2015, "horizontal bar"},
    {"\xe2\x88\x92", "-", 0x2212, "minus sign"},
};
#define NLOOKALIKES (sizeof LOOKALIKES / sizeof LOOKALIKES[0])

/* The look-alike starting at s[0..n), or NULL. */
static const lookalike *lookalike_at(const char *s, size_t n)
{
    unsigned char c = (unsigned char)s[0];
    if (c != 0xc2 && c != 0xe2 && c != 0xe3 && c != 0xef)
        return NULL;
    for (size_t k = 0; k < NLOOKALIKES; k++) {
        size_t l = strlen(LOOKALIKES[k].utf8);
        if (l <= n && memcmp(s, LOOKALIKES[k].utf8, l) == 0)
            return &LOOKALIKES[k];
    }
    return NULL;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* U+240D (the mark Read puts where a CR ends a line of a file that mixes
 * endings) at t[i], followed by a line end or the end of the text. */
static bool is_cr_mark(const char *t, size_t i, size_t len)
{
    return i + 3 <= len && memcmp(t + i, "\xe2\x90\x8d", 3) == 0 &&
           (i + 3 == len || t[i + 3] == '\n' ||
            (t[i + 3] == '\r' && i + 4 < len && t[i + 4] == '\n'));
}

/* A normalised text: bytes, and for byte k the original span [ms[k], me[k]). */
typedef struct norm {
    char *s;
    uint32_t *ms, *me;
    size_t n;
} norm;

static void norm_free(norm *z)
{
    free(z->s);
    free(z->ms);
    free(z->me);
    memset(z, 0, sizeof *z);
}

static void keep(norm *z, char c, size_t a, size_t b)
{
    z->s[z->n] = c;
    z->ms[z->n] = (uint32_t)a;
    z->me[z->n] = (uint32_t)b;
    z->n++;
}

/* Normalises t[0..len) for level (>= 1). false on OOM. */
static bool normalise(const char *t, size_t len, int level, norm *z)
{
    memset(z, 0, sizeof *z);
    z->s = malloc(len + 1);
    z->ms = malloc((len + 1) * sizeof *z->ms);
    z->me = malloc((len + 1) * sizeof *z->me);
    if (z->s == NULL || z->ms == NULL || z->me == NULL) {
        norm_free(z);
        return false;
    }
    bool line_start = true;
    size_t i = 0;
    while (i < len) {
        char c = t[i];
        if (level >= AGTI_MATCH_INDENT && line_start && (c == ' ' || c == '\t')) {
            i++;
            continue;
        }
        if (c == '\r' && i + 1 < len && t[i + 1] == '\n') {
            i++; /* level >= 1: CRLF is LF */
            continue;
        }
        if (is_cr_mark(t, i, len)) {
            i += 3; /* the CR as Read shows it in a file that mixes endings */
            continue;
        }
        if (level >= AGTI_MATCH_TRAILING && is_blank(c)) {
            size_t j = i;
            while (j < len && is_blank(t[j]))
                j++;
            if (j == len || t[j] == '\n') {
                i = j;
                continue;
            }
        }
        if (level >= AGTI_MATCH_UNICODE && (unsigned char)c >= 0x80) {
            const lookalike *lk = lookalike_at(t + i, len - i);
            if (lk != NULL) {
                size_t l = strlen(lk->utf8);
                if (lk->fold[0] != '\0') {
                    keep(z, lk->fold[0], i, i + l);
                    line_start = false;
                }
                i += l;
                continue;
            }
        }
        keep(z, c, i, i + 1);
        line_start = c == '\n';
        i++;
    }
    z->s[z->n] = '\0';
    return true;
}

static size_t line_of(const char *t, size_t off)
{
    size_t n = 1;
    for (size_t i = 0; i < off; i++)
        n += t[i] == '\n';
    return n;
}

static size_t line_start_of(const char *t, size_t off)
{
    while (off > 0 && t[off - 1] != '\n')
        off--;
    return off;
}

static size_t indent_width(const char *s, size_t n, size_t *bytes)
{
    size_t w = 0, i = 0;
    for (; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
        w = s[i] == '\t' ? (w / TAB_STOP + 1) * TAB_STOP : w + 1;
    if (bytes)
        *bytes = i;
    return w;
}

/* A line of old paired with the line of the file it matched. */
typedef struct ipair {
    size_t ow, fw;    /* indentation widths */
    const char *find; /* the file line's indentation */
    size_t fn;
    bool otab, ftab;
} ipair;

static int pair_cmp(const void *a, const void *b)
{
    const ipair *x = a, *y = b;
    return x->ow < y->ow ? -1 : x->ow > y->ow ? 1 : 0;
}

/* Pairs the lines of old with the lines of text[start..end) (start at a
 * line start when at_line_start), skipping blank lines and a first line
 * that starts in the middle of a file line. Sorted by old width. *np may
 * be 0. NULL with *np 0 on OOM or when nothing pairs. */
static ipair *collect_pairs(const char *t, size_t start, size_t end, const char *old, size_t olen,
                            bool at_line_start, size_t *np)
{
    size_t lines = 1;
    for (size_t i = 0; i < olen; i++)
        lines += old[i] == '\n';
    ipair *p = malloc(lines * sizeof *p);
    *np = 0;
    if (p == NULL)
        return NULL;
    size_t oi = 0, fi = start;
    for (size_t k = 0; k < lines && oi <= olen && fi <= end; k++) {
        const char *onl = memchr(old + oi, '\n', olen - oi);
        size_t oe = onl ? (size_t)(onl - old) : olen;
        const char *fnl = memchr(t + fi, '\n', end - fi);
        size_t fe = fnl ? (size_t)(fnl - t) : end;
        size_t ob, fb;
        size_t ow = indent_width(old + oi, oe - oi, &ob);
        size_t fw = indent_width(t + fi, fe - fi, &fb);
        bool oblank = true, fblank = true;
        for (size_t j = oi + ob; j < oe; j++)
            oblank = oblank && is_blank(old[j]);
        for (size_t j = fi + fb; j < fe; j++)
            fblank = fblank && is_blank(t[j]);
        if ((k > 0 || at_line_start) && !oblank && !fblank) {
            p[*np] = (ipair){ow,
                             fw,
                             t + fi,
                             fb,
                             memchr(old + oi, '\t', ob) != NULL,
                             memchr(t + fi, '\t', fb) != NULL};
            (*np)++;
        }
        if (onl == NULL || fnl == NULL)
            break;
        oi = oe + 1;
        fi = fe + 1;
    }
    qsort(p, *np, sizeof *p, pair_cmp);
    return p;
}

/* Whether the indentation of old maps onto the file's by one monotone
 * re-basing: equal widths stay equal, deeper stays deeper. */
static bool indent_consistent(const ipair *p, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        if (p[i].ow == p[i - 1].ow && p[i].fw != p[i - 1].fw)
            return false;
        if (p[i].ow > p[i - 1].ow && p[i].fw <= p[i - 1].fw)
            return false;
    }
    return true;
}

/* The first index of z whose original span starts at or after off. */
static size_t norm_index_at(const norm *z, size_t off)
{
    size_t lo = 0, hi = z->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->ms[mid] < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Records a place [a, b) found in text. */
static void add_place(const char *text, agti_match *m, size_t a, size_t b)
{
    if (m->count < AGTI_MATCH_MAX_PLACES)
        m->lines[m->count] = line_of(text, a);
    if (m->count == 0) {
        m->start = a;
        m->end = b;
    }
    m->count++;
}

/* Whether a place [a, b) of text satisfies the AGTI_MATCH_LINES and
 * AGTI_MATCH_AT_END conditions of flags. */
static bool place_ok(const char *text, size_t len, size_t a, size_t b, unsigned flags)
{
    if ((flags & AGTI_MATCH_LINES) && a > 0 && text[a - 1] != '\n')
        return false;
    if ((flags & AGTI_MATCH_AT_END) && b != len)
        return false;
    return true;
}

/* Searches one level; fills m (count, lines, span of the first place). */
static int find_level(const char *text, size_t len, size_t from, const char *old, size_t olen,
                      int level, unsigned flags, agti_match *m)
{
    norm zf, zo;
    if (!normalise(text, len, level, &zf))
        return AGT_ENOMEM;
    if (!normalise(old, olen, level, &zo)) {
        norm_free(&zf);
        return AGT_ENOMEM;
    }
    m->count = 0;
    m->level = level;
    size_t i = from > 0 ? norm_index_at(&zf, from) : 0;
    int rc = AGT_OK;
    while (zo.n > 0 && i + zo.n <= zf.n) {
        const char *hit = memmem(zf.s + i, zf.n - i, zo.s, zo.n);
        if (hit == NULL)
            break;
        size_t k = (size_t)(hit - zf.s);
        size_t a = zf.ms[k], b = zf.me[k + zo.n - 1];
        bool at_ls = k == 0 || zf.s[k - 1] == '\n';
        if (level >= AGTI_MATCH_INDENT && at_ls)
            a = line_start_of(text, a);
        bool ok = a >= from && place_ok(text, len, a, b, flags);
        if (ok && level >= AGTI_MATCH_INDENT) {
            size_t np;
            ipair *p = collect_pairs(text, a, b, old, olen, at_ls, &np);
            if (p == NULL && np == 0 && olen > 0) {
                /* malloc failure (collect_pairs always allocates >= 1) */
                rc = AGT_ENOMEM;
                break;
            }
            ok = indent_consistent(p, np);
            free(p);
        }
        if (ok)
            add_place(text, m, a, b);
        /* Whole-line places may overlap (a block repeated twice in a row
         * holds it three times); substrings are counted apart. */
        i = (flags & AGTI_MATCH_LINES) ? k + 1 : k + zo.n;
    }
    norm_free(&zf);
    norm_free(&zo);
    return rc;
}

static void why_eol(const char *text, size_t len, agti_match *m)
{
    size_t crlf = 0, lf = 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            (i > 0 && text[i - 1] == '\r') ? crlf++ : lf++;
    snprintf(m->why, sizeof m->why, "matched after normalising line endings: %s",
             crlf && lf ? "the file mixes LF and CRLF line endings"
             : crlf     ? "the file uses CRLF line endings"
                        : "the file uses LF line endings");
}

static bool file_uses_tabs(const char *text, size_t len, size_t *space_unit);

static void why_indent(const char *text, size_t len, const char *old, size_t olen, agti_match *m)
{
    size_t np, unit = 4;
    bool at_ls = m->start == 0 || text[m->start - 1] == '\n';
    ipair *p = collect_pairs(text, m->start, m->end, old, olen, at_ls, &np);
    bool ftab = false, otab = false, same = np > 0;
    long d = np ? (long)p[0].fw - (long)p[0].ow : 0;
    for (size_t i = 0; i < np; i++) {
        ftab = ftab || p[i].ftab;
        otab = otab || p[i].otab;
        same = same && (long)p[i].fw - (long)p[i].ow == d;
    }
    if (np == 0)
        ftab = file_uses_tabs(text, len, &unit);
    free(p);
    const char *what;
    char buf[80];
    if (ftab && !otab)
        what = "the file uses tabs";
    else if (!ftab && otab)
        what = "the file uses spaces";
    else if (same && d != 0) {
        snprintf(buf, sizeof buf, "the file's lines are indented %ld columns %s", d > 0 ? d : -d,
                 d > 0 ? "deeper" : "less deep");
        what = buf;
    } else
        what = "the file uses a different indentation width";
    snprintf(m->why, sizeof m->why, "matched after ignoring indentation: %s", what);
}

static void why_unicode(const char *text, const char *old, size_t olen, agti_match *m)
{
    for (size_t i = m->start; i < m->end; i++) {
        const lookalike *lk = lookalike_at(text + i, m->end - i);
        if (lk != NULL) {
            snprintf(m->why, sizeof m->why,
                     "matched after folding Unicode look-alikes: the file has U+%04X (%s) at "
                     "line %zu",
                     lk->cp, lk->name, line_of(text, i));
            return;
        }
    }
    for (size_t i = 0; i < olen; i++) {
        const lookalike *lk = lookalike_at(old + i, olen - i);
        if (lk != NULL) {
            snprintf(m->why, sizeof m->why,
                     "matched after folding Unicode look-alikes: old_string has U+%04X (%s) "
                     "where the file has plain text",
                     lk->cp, lk->name);
            return;
        }
    }
    snprintf(m->why, sizeof m->why, "matched after folding Unicode look-alikes");
}

static void set_why(const char *text, size_t len, const char *old, size_t olen, agti_match *m)
{
    if (m->level == AGTI_MATCH_EOL)
        why_eol(text, len, m);
    else if (m->level == AGTI_MATCH_TRAILING)
        snprintf(m->why, sizeof m->why, "matched after ignoring trailing white space");
    else if (m->level == AGTI_MATCH_INDENT)
        why_indent(text, len, old, olen, m);
    else if (m->level == AGTI_MATCH_UNICODE)
        why_unicode(text, old, olen, m);
}

int agti_match_find_at(const char *text, size_t len, size_t from, const char *old, size_t olen,
                       int max_level, unsigned flags, agti_match *m)
{
    memset(m, 0, sizeof *m);
    if (from > len)
        return AGT_OK;
    if (len > UINT32_MAX - 1 || olen > UINT32_MAX - 1)
        max_level = AGTI_MATCH_EXACT; /* the maps hold 32-bit offsets */
    size_t i = from;
    while (olen > 0 && i + olen <= len) {
        const char *hit = memmem(text + i, len - i, old, olen);
        if (hit == NULL)
            break;
        size_t at = (size_t)(hit - text);
        if (place_ok(text, len, at, at + olen, flags))
            add_place(text, m, at, at + olen);
        i = (flags & AGTI_MATCH_LINES) ? at + 1 : at + olen;
    }
    if (m->count > 0)
        return AGT_OK;
    for (int level = AGTI_MATCH_EOL; level <= max_level && level <= AGTI_MATCH_UNICODE; level++) {
        int rc = find_level(text, len, from, old, olen, level, flags, m);
        if (rc != AGT_OK)
            return rc;
        if (m->count > 1 && !(flags & AGTI_MATCH_LINES))
            return AGT_OK;
        if (m->count >= 1) {
            set_why(text, len, old, olen, m);
            return AGT_OK;
        }
    }
    memset(m, 0, sizeof *m);
    return AGT_OK;
}

int agti_match_find(const char *text, size_t len, const char *old, size_t olen, int max_level,
                    agti_match *m)
{
    return agti_match_find_at(text, len, 0, old, olen, max_level, 0, m);
}

/* Whether the file indents with tabs (its first indented line does), and
 * the greatest common divisor of its space indentations (4 when none). */
static bool file_uses_tabs(const char *text, size_t len, size_t *space_unit)
{
    size_t g = 0, i = 0, lines = 0;
    int tabs = -1;
    while (i < len && lines < 10000) {
        size_t b;
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len;
        indent_width(text + i, e - i, &b);
        if (b > 0 && b < e - i && !is_blank(text[i + b])) {
            if (tabs < 0)
                tabs = text[i] == '\t';
            if (memchr(text + i, '\t', b) == NULL) {
                size_t a = g, c = b;
                while (c) {
                    size_t r = a % c;
                    a = c;
                    c = r;
                }
                g = a;
            }
        }
        lines++;
        if (nl == NULL)
            break;
        i = e + 1;
    }
    *space_unit = g ? g : 4;
    return tabs == 1;
}

static void put_indent(agti_buf *o, size_t w, bool tabs)
{
    if (tabs) {
        for (size_t k = 0; k < w / TAB_STOP; k++)
            agti_buf_putc(o, '\t');
        w %= TAB_STOP;
    }
    for (size_t k = 0; k < w; k++)
        agti_buf_putc(o, ' ');
}

char *agti_match_adapt(const char *text, size_t len, const agti_match *m, const char *old,
                       size_t olen, const char *nw, size_t nlen, size_t *out_len)
{
    agti_buf o = AGTI_BUF_INIT;
    /* The endings of the matched lines, in order. */
    size_t nend = 0, crlf = 0, lf = 0;
    for (size_t i = m->start; i < m->end; i++)
        nend += text[i] == '\n';
    bool *ecr = malloc((nend + 1) * sizeof *ecr);
    if (ecr == NULL)
        return NULL;
    nend = 0;
    for (size_t i = m->start; i < m->end; i++)
        if (text[i] == '\n')
            ecr[nend++] = i > 0 && text[i - 1] == '\r';
    for (size_t i = 0; i < len; i++)
        if (text[i] == '\n')
            (i > 0 && text[i - 1] == '\r') ? crlf++ : lf++;
    bool dflt_cr = crlf > lf;

    bool reindent = m->level >= AGTI_MATCH_INDENT;
    bool at_ls = m->start == 0 || text[m->start - 1] == '\n';
    size_t np = 0, unit = 4;
    ipair *p = reindent ? collect_pairs(text, m->start, m->end, old, olen, at_ls, &np) : NULL;
    bool tabs = false, otab = false;
    for (size_t k = 0; k < np; k++) {
        tabs = tabs || p[k].ftab;
        otab = otab || p[k].otab;
    }
    bool ftabs_file = reindent ? file_uses_tabs(text, len, &unit) : false;
    if (np == 0)
        tabs = ftabs_file;
    else if (!tabs) {
        bool any_f = false;
        for (size_t k = 0; k < np; k++)
            any_f = any_f || p[k].fw > 0;
        if (!any_f)
            tabs = ftabs_file;
    }
    size_t uo = 0, uf = 0;
    for (size_t k = 1; k < np; k++) {
        if (p[k].ow > p[k - 1].ow && (uo == 0 || p[k].ow - p[k - 1].ow < uo))
            uo = p[k].ow - p[k - 1].ow;
        if (p[k].fw > p[k - 1].fw && (uf == 0 || p[k].fw - p[k - 1].fw < uf))
            uf = p[k].fw - p[k - 1].fw;
    }
    if (uo == 0)
        uo = otab ? TAB_STOP : 4;
    if (uf == 0)
        uf = tabs ? TAB_STOP : unit;
    size_t bo = np ? p[0].ow : 0, bf = np ? p[0].fw : 0;

    size_t i = 0, line = 0;
    while (i <= nlen) {
        const char *nl = i < nlen ? memchr(nw + i, '\n', nlen - i) : NULL;
        size_t e = nl ? (size_t)(nl - nw) : nlen;
        size_t ce = e;
        if (nl != NULL && ce > i && nw[ce - 1] == '\r')
            ce--;
        if (ce >= i + 3 && is_cr_mark(nw, ce - 3, ce))
            ce -= 3; /* copied from Read: the line's ending comes from the file */
        if (reindent && (line > 0 || at_ls)) {
            size_t b;
            size_t w = indent_width(nw + i, ce - i, &b);
            bool blank = true;
            for (size_t j = i + b; j < ce; j++)
                blank = blank && is_blank(nw[j]);
            if (!blank) {
                const ipair *hit = NULL;
                for (size_t k = 0; k < np && hit == NULL; k++)
                    if (p[k].ow == w)
                        hit = &p[k];
                if (hit != NULL)
                    agti_buf_put(&o, hit->find, hit->fn);
                else {
                    long steps = ((long)w - (long)bo) / (long)uo;
                    long rem = ((long)w - (long)bo) % (long)uo;
                    if (rem * 2 >= (long)uo)
                        steps++;
                    else if (rem * 2 <= -(long)uo)
                        steps--;
                    long target = (long)bf + steps * (long)uf;
                    put_indent(&o, target > 0 ? (size_t)target : 0, tabs);
                }
            }
            agti_buf_put(&o, nw + i + b, ce - (i + b));
        } else
            agti_buf_put(&o, nw + i, ce - i);
        if (nl == NULL)
            break;
        bool cr = line < nend ? ecr[line] : nend > 0 ? ecr[nend - 1] : dflt_cr;
        agti_buf_puts(&o, cr ? "\r\n" : "\n");
        line++;
        i = e + 1;
    }
    free(ecr);
    free(p);
    if (o.oom) {
        agti_buf_free(&o);
        return NULL;
    }
    *out_len = o.len;
    return agti_buf_detach(&o);
}
