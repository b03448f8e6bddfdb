/*
 * Unified-diff parser: one pass over the input, lines stored as offsets into
 * the single copy of the text. Follows git-diff(1) "generating patch text"
 * (extended headers, quoted paths) and GNU diffutils `diff -u`/`-ruN`;
 * anything outside a file header or a hunk (mail and commit headers, diffstat,
 * `-- ` signature, `Only in ...`) is skipped.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "diff/diff_internal.h"

typedef struct parser {
    agt_diff *d;
    const char *base; /* d->text.ptr */
    size_t len;
    size_t lineno; /* 1-based number of the current line */
    agti_diff_file *file;
    bool header;   /* current file is still in its header (no hunk yet) */
    bool in_hunk;  /* counts of the current hunk not yet used up */
    bool binpatch; /* inside a `GIT binary patch` block */
    bool after_hunk_line;
    uint32_t rem_old, rem_new;
    size_t hunk_lineno; /* line of the current hunk's header */
    bool new_file, deleted_file, minus_null, plus_null, renamed, copied;
    bool plain_pending; /* a `diff ...` line of a plain diff was seen */
    bool noprefix;      /* `diff --git X X`: the same path twice, so no a/ b/
                           prefix to strip (git diff --no-prefix, diff.noprefix) */
    size_t plain_start;
} parser;

static bool starts(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    return n >= m && memcmp(s, lit, m) == 0;
}

/* Unquotes a C-style quoted path (git's quote_c_style) starting at s[0]=='"'.
 * Returns the number of bytes consumed, 0 on a malformed quote. */
static size_t unquote(const char *s, size_t n, agti_buf *out)
{
    size_t i = 1;
    while (i < n) {
        char c = s[i];
        if (c == '"')
            return i + 1;
        if (c != '\\') {
            agti_buf_putc(out, c);
            i++;
            continue;
        }
        if (++i >= n)
            return 0;
        c = s[i];
        switch (c) {
        case 'a':
            agti_buf_putc(out, '\a');
            break;
        case 'b':
            agti_buf_putc(out, '\b');
            break;
        case 't':
            agti_buf_putc(out, '\t');
            break;
        case 'n':
            agti_buf_putc(out, '\n');
            break;
        case 'v':
            agti_buf_putc(out, '\v');
            break;
        case 'f':
            agti_buf_putc(out, '\f');
            break;
        case 'r':
            agti_buf_putc(out, '\r');
            break;
        case '"':
        case '\\':
            agti_buf_putc(out, c);
            break;
        default:
            if (c >= '0' && c <= '7') {
                unsigned v = 0;
                int k = 0;
                while (k < 3 && i < n && s[i] >= '0' && s[i] <= '7') {
                    v = v * 8 + (unsigned)(s[i] - '0');
                    i++;
                    k++;
                }
                if (v == 0 || v > 255)
                    return 0;
                agti_buf_putc(out, (char)v);
                continue;
            }
            return 0;
        }
        i++;
    }
    return 0;
}

/* Removes the first path component (patch -p1); a path without '/' stays. */
static const char *strip_p1(const char *p)
{
    const char *s = strchr(p, '/');
    return s && s[1] ? s + 1 : p;
}

/* strip_p1 unless the current file's paths carry no prefix. */
static const char *strip_path(const parser *ps, const char *p)
{
    return ps->noprefix ? p : strip_p1(p);
}

static int line_error(parser *ps, int code, const char *what)
{
    return agti_error(code, "diff: line %zu: %s", ps->lineno, what);
}

/* Parses the path of a `---`/`+++`/`rename from` line (s..n after the
 * keyword). *out gets a malloc'd path (prefix not yet stripped); *is_null
 * true for /dev/null; *epoch true when a timestamp of 1970-01-01 follows. */
static int parse_path(parser *ps, const char *s, size_t n, bool tab_ends, char **out, bool *is_null,
                      bool *epoch)
{
    agti_buf b = AGTI_BUF_INIT;
    size_t used;
    *is_null = false;
    if (epoch)
        *epoch = false;
    if (n && s[0] == '"') {
        used = unquote(s, n, &b);
        if (!used) {
            agti_buf_free(&b);
            return line_error(ps, AGT_EPARSE, "malformed quoted path");
        }
    } else {
        const char *tab = tab_ends ? memchr(s, '\t', n) : NULL;
        used = tab ? (size_t)(tab - s) : n;
        agti_buf_put(&b, s, used);
    }
    if (epoch && used < n) {
        const char *t = s + used;
        size_t tn = n - used;
        while (tn && (*t == '\t' || *t == ' ')) {
            t++;
            tn--;
        }
        *epoch = starts(t, tn, "1970-01-01 00:00:00") || starts(t, tn, "1969-12-31 ");
    }
    if (b.oom)
        return agti_oom();
    if (memchr(agti_buf_cstr(&b), '\0', b.len)) {
        agti_buf_free(&b);
        return line_error(ps, AGT_EPARSE, "NUL byte in a path");
    }
    char *p = agti_buf_detach(&b);
    if (!p)
        return agti_oom();
    if (strcmp(p, "/dev/null") == 0)
        *is_null = true;
    *out = p;
    return AGT_OK;
}

static int set_path(char **slot, const char *p)
{
    char *c = agti_strdup(p);
    if (!c)
        return agti_oom();
    free(*slot);
    *slot = c;
    return AGT_OK;
}

/* `diff --git a/X b/Y`: the two paths, quoted or not. Unquoted paths with
 * spaces are split where both sides name the same file (as git does). */
static int parse_git_line(parser *ps, const char *s, size_t n)
{
    char *a = NULL, *b = NULL;
    bool nul;
    int rc = AGT_OK;
    if (n && s[0] == '"') {
        agti_buf q = AGTI_BUF_INIT;
        size_t used = unquote(s, n, &q);
        a = agti_buf_detach(&q);
        if (!used || !a) {
            free(a);
            return used ? agti_oom() : line_error(ps, AGT_EPARSE, "malformed quoted path");
        }
        while (used < n && s[used] == ' ')
            used++;
        rc = parse_path(ps, s + used, n - used, false, &b, &nul, NULL);
    } else if (n % 2 == 1 && s[n / 2] == ' ' && memcmp(s, s + n / 2 + 1, n / 2) == 0) {
        /* Both halves equal: git writes a/X b/X (or another prefix pair,
         * which always differ), so this is --no-prefix output. */
        a = agti_strndup(s, n / 2);
        b = agti_strndup(s, n / 2);
        if (!a || !b) {
            free(a);
            free(b);
            return agti_oom();
        }
    } else {
        /* ra: first '/' of the whole line (the a-side's prefix end); rb: first
         * '/' after the candidate space, moved forward only: linear in n */
        const char *split = NULL, *e = s + n;
        const char *ra = memchr(s, '/', n), *rb = NULL;
        for (const char *p = s; (p = memchr(p, ' ', (size_t)(e - p))) != NULL; p++) {
            if (p + 1 < e && p[1] == '"') {
                split = p;
                break;
            }
            if (!rb || rb <= p)
                rb = memchr(p + 1, '/', (size_t)(e - p - 1));
            if (!rb)
                break;
            if (ra && ra < p && (size_t)(p - ra) == (size_t)(e - rb) &&
                memcmp(ra, rb, (size_t)(p - ra)) == 0) {
                split = p;
                break;
            }
            if (!split && e - p > 2 && memcmp(p + 1, "b/", 2) == 0)
                split = p;
        }
        if (!split)
            return AGT_OK; /* ---/+++ or rename lines will give the paths */
        a = agti_strndup(s, (size_t)(split - s));
        if (!a)
            return agti_oom();
        size_t off = (size_t)(split + 1 - s);
        rc = parse_path(ps, s + off, n - off, false, &b, &nul, NULL);
    }
    if (rc == AGT_OK) {
        ps->noprefix = strcmp(a, b) == 0;
        rc = set_path(&ps->file->old_path, strip_path(ps, a));
        if (rc == AGT_OK)
            rc = set_path(&ps->file->new_path, strip_path(ps, b));
    }
    free(a);
    free(b);
    return rc;
}

static void finish_file(parser *ps)
{
    agti_diff_file *f = ps->file;
    if (!f)
        return;
    if (ps->in_hunk) {
        agti_diff_add_warning(ps->d,
                              "line %zu: end of input inside the hunk at line %zu (%u old and "
                              "%u new lines missing)",
                              ps->lineno, ps->hunk_lineno, ps->rem_old, ps->rem_new);
        ps->in_hunk = false;
    }
    if (ps->new_file || ps->minus_null) {
        f->status = AGT_DIFF_ADDED;
        free(f->old_path);
        f->old_path = NULL;
    } else if (ps->deleted_file || ps->plus_null) {
        f->status = AGT_DIFF_DELETED;
        free(f->new_path);
        f->new_path = NULL;
    } else if (ps->renamed) {
        f->status = AGT_DIFF_RENAMED;
    } else if (ps->copied) {
        f->status = AGT_DIFF_COPIED;
    } else {
        f->status = AGT_DIFF_MODIFIED;
    }
    if (!f->old_path && !f->new_path)
        agti_diff_add_warning(ps->d, "file %zu has no path", ps->d->nfiles);
    ps->file = NULL;
    ps->header = false;
    ps->binpatch = false;
    ps->after_hunk_line = false;
}

static int start_file(parser *ps, size_t raw_start, bool git)
{
    finish_file(ps);
    int rc = agti_diff_add_file(ps->d, NULL, NULL, AGT_DIFF_MODIFIED, false, 0, 0, -1);
    if (rc != AGT_OK)
        return rc;
    ps->file = &ps->d->files[ps->d->nfiles - 1];
    ps->file->git = git;
    ps->file->raw = true;
    ps->file->raw_start = raw_start;
    ps->header = true;
    ps->new_file = ps->deleted_file = ps->minus_null = ps->plus_null = false;
    ps->renamed = ps->copied = false;
    ps->noprefix = false;
    ps->plain_pending = false;
    return AGT_OK;
}

static bool parse_u32(const char **s, const char *e, uint32_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    if (p >= e || *p < '0' || *p > '9')
        return false;
    while (p < e && *p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > INT32_MAX)
            return false;
        p++;
    }
    *out = (uint32_t)v;
    *s = p;
    return true;
}

static int parse_hunk_header(parser *ps, const char *s, size_t n)
{
    const char *p = s + 3, *e = s + n;
    uint32_t os, ol = 1, ns, nl = 1;
    if (p >= e || *p != '-')
        goto bad;
    p++;
    if (!parse_u32(&p, e, &os))
        goto bad;
    if (p < e && *p == ',') {
        p++;
        if (!parse_u32(&p, e, &ol))
            goto bad;
    }
    if (e - p < 2 || p[0] != ' ' || p[1] != '+')
        goto bad;
    p += 2;
    if (!parse_u32(&p, e, &ns))
        goto bad;
    if (p < e && *p == ',') {
        p++;
        if (!parse_u32(&p, e, &nl))
            goto bad;
    }
    if (e - p < 3 || memcmp(p, " @@", 3) != 0)
        goto bad;
    p += 3;
    if (p < e && *p == ' ')
        p++;
    else
        p = e; /* "@@x" or nothing: no section */
    /* Every body line takes at least one byte (its line break, or one
     * character for a last line without one), and there are at least as many
     * as the larger count: a header claiming more lines than the rest of the
     * input has bytes lies about its body (a cut-off hunk stays best effort). */
    const char *body = e, *input_end = ps->base + ps->len;
    if (body < input_end && *body == '\r')
        body++;
    if (body < input_end && *body == '\n')
        body++;
    size_t rest = (size_t)(input_end - body), most = ol > nl ? ol : nl;
    if (most > rest)
        return agti_error(AGT_EPARSE,
                          "diff: line %zu: the hunk header claims %u old and %u new lines but "
                          "only %zu byte%s of input follow it; the counts do not match the "
                          "hunk's body (fix the counts in '@@ -%u,%u +%u,%u @@')",
                          ps->lineno, ol, nl, rest, rest == 1 ? "" : "s", os, ol, ns, nl);
    /* the section is already in d->text: point at it (appending would move
     * the store under the parser) */
    int rc = agti_diff_add_hunk(ps->d, os, ol, ns, nl, NULL, 0);
    if (rc != AGT_OK)
        return rc;
    ps->d->hunks[ps->d->nhunks - 1].section_off = (size_t)(p - ps->base);
    ps->d->hunks[ps->d->nhunks - 1].section_len = (uint32_t)(e - p);
    ps->rem_old = ol;
    ps->rem_new = nl;
    ps->hunk_lineno = ps->lineno;
    ps->in_hunk = ol || nl;
    ps->header = false;
    return AGT_OK;
bad:
    return agti_error(AGT_EPARSE, "diff: line %zu: malformed hunk header '%.*s'", ps->lineno,
                      (int)(n > 80 ? 80 : n), s);
}

static uint32_t parse_mode(const char *s, size_t n)
{
    uint32_t v = 0;
    for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '7' && i < 7; i++)
        v = v * 8 + (uint32_t)(s[i] - '0');
    return v;
}

static int parse_percent(const char *s, size_t n)
{
    int v = 0;
    size_t i = 0;
    for (; i < n && i < 3 && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (s[i] - '0');
    return i ? v : -1;
}

/* `--- X` followed by `+++ Y` (s is the `---` line, s2 the `+++` line). */
static int parse_minus_plus(parser *ps, size_t raw_start, const char *s, size_t n, const char *s2,
                            size_t n2)
{
    int rc;
    if (!(ps->file && ps->header && ps->file->git && !ps->file->seen_minus)) {
        rc = start_file(ps, ps->plain_pending ? ps->plain_start : raw_start, false);
        if (rc != AGT_OK)
            return rc;
    }
    agti_diff_file *f = ps->file;
    f->seen_minus = true;
    char *a = NULL, *b = NULL;
    bool anull, bnull, aepoch, bepoch;
    rc = parse_path(ps, s + 4, n - 4, true, &a, &anull, &aepoch);
    if (rc == AGT_OK) {
        ps->lineno++;
        rc = parse_path(ps, s2 + 4, n2 - 4, true, &b, &bnull, &bepoch);
    }
    if (rc == AGT_OK) {
        if (!f->git) {
            anull = anull || aepoch;
            bnull = bnull || bepoch;
        }
        ps->minus_null = anull;
        ps->plus_null = bnull;
        if (!anull && !(f->git && ps->renamed))
            rc = set_path(&f->old_path, strip_path(ps, a));
        if (rc == AGT_OK && !bnull && !(f->git && ps->renamed))
            rc = set_path(&f->new_path, strip_path(ps, b));
        /* the missing side of a git file keeps the other side's name until
         * finish_file clears it; plain diffs name it the same way */
        if (rc == AGT_OK && anull && !f->old_path && !bnull)
            rc = set_path(&f->old_path, strip_path(ps, b));
        if (rc == AGT_OK && bnull && !f->new_path && !anull)
            rc = set_path(&f->new_path, strip_path(ps, a));
    }
    free(a);
    free(b);
    return rc;
}

/* `Binary files X and Y differ` outside a git header (diff -r). */
static int plain_binary(parser *ps, size_t raw_start, const char *s, size_t n)
{
    int rc = start_file(ps, ps->plain_pending ? ps->plain_start : raw_start, false);
    if (rc != AGT_OK)
        return rc;
    agti_diff_file *f = ps->file;
    f->binary = true;
    const char *p = s + 13, *e = s + n;
    const char *and = NULL;
    for (const char *q = p; q + 5 <= e; q++)
        if (memcmp(q, " and ", 5) == 0) {
            and = q;
            break;
        }
    if (and&&e - and > 12 && memcmp(e - 7, " differ", 7) == 0) {
        char *a = agti_strndup(p, (size_t)(and-p));
        char *b = agti_strndup(and+5, (size_t)(e - 7 - and-5));
        if (!a || !b) {
            free(a);
            free(b);
            return agti_oom();
        }
        ps->minus_null = strcmp(a, "/dev/null") == 0;
        ps->plus_null = strcmp(b, "/dev/null") == 0;
        rc = set_path(&f->old_path, strip_p1(ps->minus_null ? b : a));
        if (rc == AGT_OK)
            rc = set_path(&f->new_path, strip_p1(ps->plus_null ? a : b));
        free(a);
        free(b);
    }
    return rc;
}

/* Extended header lines of a `diff --git` file. Returns 1 when handled. */
static int git_header_line(parser *ps, const char *s, size_t n, int *rc)
{
    agti_diff_file *f = ps->file;
    char *p = NULL;
    bool nul;
    *rc = AGT_OK;
    if (starts(s, n, "old mode ")) {
        f->old_mode = parse_mode(s + 9, n - 9);
    } else if (starts(s, n, "new mode ")) {
        f->new_mode = parse_mode(s + 9, n - 9);
    } else if (starts(s, n, "deleted file mode ")) {
        f->old_mode = parse_mode(s + 18, n - 18);
        ps->deleted_file = true;
    } else if (starts(s, n, "new file mode ")) {
        f->new_mode = parse_mode(s + 14, n - 14);
        ps->new_file = true;
    } else if (starts(s, n, "rename from ") || starts(s, n, "copy from ")) {
        size_t k = s[0] == 'r' ? 12 : 10;
        *rc = parse_path(ps, s + k, n - k, false, &p, &nul, NULL);
        if (*rc == AGT_OK)
            *rc = set_path(&f->old_path, p);
        ps->renamed = ps->renamed || s[0] == 'r';
        ps->copied = ps->copied || s[0] == 'c';
    } else if (starts(s, n, "rename to ") || starts(s, n, "copy to ")) {
        size_t k = s[0] == 'r' ? 10 : 8;
        *rc = parse_path(ps, s + k, n - k, false, &p, &nul, NULL);
        if (*rc == AGT_OK)
            *rc = set_path(&f->new_path, p);
        ps->renamed = ps->renamed || s[0] == 'r';
        ps->copied = ps->copied || s[0] == 'c';
    } else if (starts(s, n, "similarity index ")) {
        f->similarity = parse_percent(s + 17, n - 17);
    } else if (starts(s, n, "dissimilarity index ")) {
        f->dissimilarity = parse_percent(s + 20, n - 20);
    } else if (starts(s, n, "index ")) {
        /* blob ids (and the mode, which the sidecar format leaves out) */
    } else if (starts(s, n, "Binary files ")) {
        f->binary = true;
    } else if (n == 16 && memcmp(s, "GIT binary patch", 16) == 0) {
        f->binary = true;
        ps->binpatch = true;
    } else {
        return 0;
    }
    free(p);
    return 1;
}

/* Consumes the lines of the current hunk (and "\\ No newline" markers) until
 * its counts are used up, the input ends, or a line that cannot belong to it
 * (left unconsumed). The hot loop of the parser: no call per line but memchr. */
static int hunk_body(parser *ps, const char **sp, const char *end)
{
    agt_diff *d = ps->d;
    agti_diff_hunk *h = &d->hunks[d->nhunks - 1];
    agti_diff_file *f = ps->file;
    const char *s = *sp, *base = ps->base;
    uint32_t ro = ps->rem_old, rn = ps->rem_new, on = h->old_next, nn = h->new_next;
    uint32_t added = 0, deleted = 0;
    size_t nlines = d->nlines, lineno = ps->lineno, first = d->nlines;
    agti_diff_line *lines = d->lines;
    int rc = AGT_OK;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *next = nl ? nl + 1 : end;
        size_t n = (size_t)((nl ? nl : end) - s);
        char c = n ? s[0] : '\n';
        if (c == '\\' && nlines > first) {
            lines[nlines - 1].flags |= AGTI_LINE_NOEOL;
        } else if ((ro || rn) && ((c == ' ' && ro && rn) || (c == '-' && ro) || (c == '+' && rn) ||
                                  ((c == '\n' || (c == '\r' && n == 1)) && ro && rn))) {
            if (nlines == d->cap_lines) {
                size_t cap = d->cap_lines ? d->cap_lines * 2 : 1024;
                agti_diff_line *nv = realloc(d->lines, cap * sizeof(*nv));
                if (!nv) {
                    rc = agti_oom();
                    break;
                }
                d->lines = lines = nv;
                d->cap_lines = cap;
            }
            agti_diff_line *l = &lines[nlines++];
            bool empty = c == '\n' || c == '\r';
            l->off = (uint32_t)(s - base) + (empty ? 0u : 1u);
            l->len = empty ? (uint32_t)0 : (uint32_t)(n - 1);
            l->flags = 0;
            if (c == '+') {
                l->origin = '+';
                l->old_no = 0;
                l->new_no = nn++;
                rn--;
                added++;
            } else if (c == '-') {
                l->origin = '-';
                l->old_no = on++;
                l->new_no = 0;
                ro--;
                deleted++;
            } else {
                l->origin = ' ';
                l->old_no = on++;
                l->new_no = nn++;
                ro--;
                rn--;
            }
        } else {
            break;
        }
        lineno++;
        f->raw_end = (size_t)(next - base);
        s = next;
        if (!ro && !rn && (s >= end || *s != '\\'))
            break;
    }
    uint32_t count = (uint32_t)(nlines - first);
    h->nlines += count;
    f->nlines += count;
    f->added += added;
    f->deleted += deleted;
    h->old_next = on;
    h->new_next = nn;
    d->nlines = nlines;
    ps->rem_old = ro;
    ps->rem_new = rn;
    ps->in_hunk = ro || rn;
    ps->after_hunk_line = count > 0 || ps->after_hunk_line;
    ps->lineno = lineno;
    *sp = s;
    return rc;
}

static int parse_lines(parser *ps)
{
    const char *base = ps->base, *end = base + ps->len;
    const char *s = base;
    int rc = AGT_OK;
    while (s < end && rc == AGT_OK) {
        if (ps->in_hunk) {
            rc = hunk_body(ps, &s, end);
            if (rc != AGT_OK || s >= end)
                break;
            if (ps->in_hunk) {
                /* a line that cannot be part of the hunk: keep what we have */
                rc = agti_diff_add_warning(ps->d,
                                           "line %zu: hunk at line %zu ends early (%u old and %u "
                                           "new lines missing)",
                                           ps->lineno + 1, ps->hunk_lineno, ps->rem_old,
                                           ps->rem_new);
                ps->in_hunk = false;
            }
            continue;
        }
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        const char *next = nl ? nl + 1 : end;
        size_t n = (size_t)(le - s);
        ps->lineno++;
        /* header lines: compare without a trailing CR */
        size_t hn = n && s[n - 1] == '\r' ? n - 1 : n;
        if (hn && s[0] == '\\' && ps->file && ps->after_hunk_line) {
            ps->d->lines[ps->d->nlines - 1].flags |= AGTI_LINE_NOEOL;
            ps->file->raw_end = (size_t)(next - base);
            s = next;
            continue;
        }
        ps->after_hunk_line = false;
        if (ps->binpatch) {
            if (hn == 0 || starts(s, hn, "literal ") || starts(s, hn, "delta ") ||
                !memchr(s, ' ', hn)) {
                ps->file->raw_end = (size_t)(next - base);
                s = next;
                continue;
            }
            ps->binpatch = false;
        }
        size_t raw_start = (size_t)(s - base);
        if (starts(s, hn, "diff --git ")) {
            rc = start_file(ps, raw_start, true);
            if (rc == AGT_OK)
                rc = parse_git_line(ps, s + 11, hn - 11);
            if (ps->file)
                ps->file->raw_end = (size_t)(next - base);
        } else if (starts(s, hn, "@@ ")) {
            if (!ps->file)
                return line_error(ps, AGT_EPARSE, "hunk header before any file header");
            rc = parse_hunk_header(ps, s, hn);
            ps->file->raw_end = (size_t)(next - base);
        } else if (starts(s, hn, "--- ") && next < end &&
                   starts(next, (size_t)(end - next), "+++ ")) {
            const char *nl2 = memchr(next, '\n', (size_t)(end - next));
            const char *le2 = nl2 ? nl2 : end;
            size_t n2 = (size_t)(le2 - next);
            if (n2 && next[n2 - 1] == '\r')
                n2--;
            rc = parse_minus_plus(ps, raw_start, s, hn, next, n2);
            next = nl2 ? nl2 + 1 : end;
            if (ps->file)
                ps->file->raw_end = (size_t)(next - base);
        } else if (ps->file && ps->header && ps->file->git) {
            int handled = git_header_line(ps, s, hn, &rc);
            if (handled)
                ps->file->raw_end = (size_t)(next - base);
        } else if (starts(s, hn, "diff ")) {
            finish_file(ps);
            if (starts(s, hn, "diff --cc ") || starts(s, hn, "diff --combined "))
                rc = agti_diff_add_warning(ps->d,
                                           "line %zu: combined (merge) diffs are not supported; "
                                           "its hunks are skipped",
                                           ps->lineno);
            ps->plain_pending = true;
            ps->plain_start = raw_start;
        } else if (starts(s, hn, "Binary files ") && hn > 20) {
            rc = plain_binary(ps, raw_start, s, hn);
            if (ps->file)
                ps->file->raw_end = (size_t)(next - base);
            finish_file(ps);
        }
        s = next;
    }
    if (rc == AGT_OK)
        finish_file(ps);
    return rc;
}

/* The copy of the input and the line array are the parser's only large
 * allocations; first-touch page faults dominate their cost, so big ones are
 * 2 MiB-aligned and offered to transparent huge pages. The line array
 * reserves one line per 16 bytes of input: untouched pages cost nothing and
 * a diff with shorter lines just grows it. Both are released with free(). */
static bool big_alloc(void **out, size_t size)
{
    const size_t huge = (size_t)2 << 20;
    if (size < 2 * huge) {
        *out = malloc(size);
        return *out != NULL;
    }
    size = (size + huge - 1) & ~(huge - 1);
    if (posix_memalign(out, huge, size) != 0) {
        *out = NULL;
        return false;
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(*out, size, MADV_HUGEPAGE);
#endif
    return true;
}

int agt_diff_parse(agt_diff **out, const char *text, size_t len)
{
    if (!out || (!text && len))
        return agti_error(AGT_EINVAL, "agt_diff_parse: %s",
                          !out ? "out is NULL" : "text is NULL with a non-zero length");
    *out = NULL;
    if (len >= UINT32_MAX)
        return agti_error(AGT_ELIMIT, "agt_diff_parse: input of %zu bytes exceeds 4 GiB", len);
    agt_diff *d;
    int rc = agti_diff_new(&d);
    if (rc != AGT_OK)
        return rc;
    d->cap_lines = len / 16 + 64;
    if (!big_alloc((void **)&d->text.ptr, len + 1) ||
        !big_alloc((void **)&d->lines, d->cap_lines * sizeof(agti_diff_line))) {
        agt_diff_free(d);
        return agti_oom();
    }
    d->text.cap = len + 1;
    d->text.ptr[0] = '\0';
    if (len)
        agti_buf_put(&d->text, text, len);
    parser ps = {0};
    ps.d = d;
    ps.base = d->text.ptr;
    ps.len = len;
    rc = parse_lines(&ps);
    if (rc == AGT_OK && d->nfiles == 0) {
        bool blank = true;
        for (size_t i = 0; i < len && blank; i++)
            blank = text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n';
        if (!blank)
            rc = agti_error(AGT_EPARSE,
                            "diff: no file header ('diff --git', 'diff ', "
                            "'---'/'+++') found in %zu bytes",
                            len);
    }
    if (rc != AGT_OK) {
        agt_diff_free(d);
        return rc;
    }
    *out = d;
    return AGT_OK;
}
