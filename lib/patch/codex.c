/* The Codex patch format: a parser with exact line numbers in its errors,
 * and an applier over an in-memory set of files that locates each hunk
 * with the matching ladder of match.c. The grammar follows Codex's
 * apply_patch (its parser's leniencies included: white space around the
 * markers, a here-document wrapper, a first hunk without "@@", blank lines
 * between hunks, an empty line read as an empty context line); on top of
 * it: several "@@" lines in a row narrow the place step by step, a
 * unified-diff range ("@@ -3,4 +3,5 @@") is taken as no anchor, and a
 * hunk without anchors that matches several places is refused rather than
 * applied at the first. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codex.h"
#include "patch.h"

#define BEGIN_MARK "*** Begin Patch"
#define END_MARK "*** End Patch"
#define ADD_MARK "*** Add File: "
#define DELETE_MARK "*** Delete File: "
#define UPDATE_MARK "*** Update File: "
#define MOVE_MARK "*** Move to: "
#define EOF_MARK "*** End of File"

/* Characters of a line quoted in a message. */
#define QUOTE_MAX 120

/* ---- lines ------------------------------------------------------------ */

typedef struct lines {
    agti_pline *v;
    size_t n;
} lines;

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static agti_pline trim(agti_pline l)
{
    while (l.n > 0 && is_ws(l.s[0]))
        l.s++, l.n--;
    while (l.n > 0 && is_ws(l.s[l.n - 1]))
        l.n--;
    return l;
}

static bool eq(agti_pline l, const char *lit)
{
    size_t n = strlen(lit);
    return l.n == n && memcmp(l.s, lit, n) == 0;
}

static bool starts(agti_pline l, const char *lit)
{
    size_t n = strlen(lit);
    return l.n >= n && memcmp(l.s, lit, n) == 0;
}

static bool blank(agti_pline l)
{
    return trim(l).n == 0;
}

/* Splits text into lines (without "\n" and a "\r" before it). */
static bool split(char *text, size_t len, lines *out)
{
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    out->v = malloc(n * sizeof *out->v);
    out->n = 0;
    if (out->v == NULL)
        return false;
    size_t i = 0;
    while (i <= len) {
        const char *nl = i < len ? memchr(text + i, '\n', len - i) : NULL;
        size_t e = nl ? (size_t)(nl - text) : len;
        if (nl == NULL && e == i)
            break; /* nothing after the last line break */
        size_t ce = e;
        if (ce > i && text[ce - 1] == '\r')
            ce--;
        out->v[out->n++] = (agti_pline){text + i, ce - i};
        if (nl == NULL)
            break;
        i = e + 1;
    }
    return true;
}

/* Appends line l to b, quoted and cut, with control bytes escaped. */
static void quote(agti_buf *b, agti_pline l)
{
    agti_buf_putc(b, '\'');
    size_t n = l.n > QUOTE_MAX ? agti_utf8_floor(l.s, QUOTE_MAX) : l.n;
    agti_utf8_sanitize(b, l.s, n);
    agti_buf_puts(b, n < l.n ? "...'" : "'");
}

/* ---- parser ----------------------------------------------------------- */

typedef struct parser {
    lines L;
    size_t first; /* index of line 1 of the patch in L (after blank lines) */
    agti_buf *err;
    agti_patch *p;
} parser;

static int perr(parser *ps, size_t idx, const char *fmt, ...) AGTI_PRINTF(3, 4);
static int perr(parser *ps, size_t idx, const char *fmt, ...)
{
    agti_buf_printf(ps->err, "line %zu: ", idx + 1);
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(ps->err, fmt, ap);
    va_end(ap);
    return ps->err->oom ? AGT_ENOMEM : AGT_EPARSE;
}

static void hunk_free(agti_phunk *h)
{
    free(h->anchors);
    free(h->old);
    free(h->old_at);
    free(h->nw);
}

static void op_free(agti_pop *o)
{
    free(o->path);
    free(o->move_to);
    free(o->content);
    for (size_t i = 0; i < o->nhunks; i++)
        hunk_free(&o->hunks[i]);
    free(o->hunks);
}

void agti_patch_free(agti_patch *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->nops; i++)
        op_free(&p->ops[i]);
    free(p->ops);
    free(p->text);
    free(p);
}

/* The path after a header marker: trimmed, not empty. */
static int header_path(parser *ps, size_t idx, agti_pline t, const char *mark, char **out)
{
    /* t is trimmed: "*** Add File: " with nothing after it is "*** Add File:" */
    size_t ml = strlen(mark);
    agti_pline rest = t.n > ml ? trim((agti_pline){t.s + ml, t.n - ml}) : (agti_pline){t.s, 0};
    if (rest.n == 0)
        return perr(ps, idx, "'%.*s' names no file: write the path after it.",
                    (int)(strlen(mark) - 1), mark);
    if (memchr(rest.s, '\0', rest.n) != NULL)
        return perr(ps, idx, "the path holds a NUL byte.");
    *out = agti_strndup(rest.s, rest.n);
    return *out ? AGT_OK : AGT_ENOMEM;
}

/* Grows an array of elements of size sz to hold n + 1. */
static bool grow(void **v, size_t n, size_t *cap, size_t sz)
{
    if (n < *cap)
        return true;
    size_t nc = *cap ? *cap * 2 : 8;
    void *nv = realloc(*v, nc * sz);
    if (nv == NULL)
        return false;
    *v = nv;
    *cap = nc;
    return true;
}

/* Whether t (an anchor's text) is a unified-diff range "-a,b +c,d @@ ...";
 * *rest gets what follows the closing "@@" (trimmed, may be empty). */
static bool unified_range(agti_pline t, agti_pline *rest)
{
    size_t i = 0;
    if (i >= t.n || t.s[i] != '-')
        return false;
    i++;
    size_t d = i;
    while (i < t.n && ((t.s[i] >= '0' && t.s[i] <= '9') || t.s[i] == ','))
        i++;
    if (i == d || i + 1 >= t.n || t.s[i] != ' ' || t.s[i + 1] != '+')
        return false;
    i += 2;
    d = i;
    while (i < t.n && ((t.s[i] >= '0' && t.s[i] <= '9') || t.s[i] == ','))
        i++;
    if (i == d)
        return false;
    while (i < t.n && t.s[i] == ' ')
        i++;
    if (i + 2 > t.n || t.s[i] != '@' || t.s[i + 1] != '@')
        return false;
    *rest = trim((agti_pline){t.s + i + 2, t.n - i - 2});
    return true;
}

/* Parses the hunks of an Update File section from L.v[*i] (just after its
 * header and Move to line) up to the next line starting with '*'. */
static int parse_hunks(parser *ps, size_t *i, size_t end, agti_pop *o)
{
    size_t cap = 0;
    while (*i < end) {
        agti_pline l = ps->L.v[*i];
        if (blank(l)) {
            (*i)++; /* blank lines between hunks */
            continue;
        }
        if (l.n > 0 && l.s[0] == '*')
            break;
        if (!grow((void **)&o->hunks, o->nhunks, &cap, sizeof *o->hunks))
            return AGT_ENOMEM;
        agti_phunk *h = &o->hunks[o->nhunks];
        memset(h, 0, sizeof *h);
        o->nhunks++;
        h->line = *i + 1;
        size_t acap = 0, ocap = 0, ncap = 0, atcap = 0;
        bool header = false;
        /* "@@" lines: one or several anchors. */
        while (*i < end) {
            agti_pline t = ps->L.v[*i];
            agti_pline tt = t;
            while (tt.n > 0 && is_ws(tt.s[tt.n - 1]))
                tt.n--;
            if (eq(tt, "@@")) {
                header = true;
                (*i)++;
                continue;
            }
            if (!starts(t, "@@ "))
                break;
            header = true;
            agti_pline a = {t.s + 3, t.n - 3}, rest;
            if (unified_range(trim(a), &rest))
                a = rest;
            if (trim(a).n > 0) {
                if (!grow((void **)&h->anchors, h->nanchors, &acap, sizeof *h->anchors))
                    return AGT_ENOMEM;
                h->anchors[h->nanchors++] = a;
            }
            (*i)++;
        }
        if (!header && o->nhunks > 1) {
            agti_buf_printf(ps->err, "line %zu: ", *i + 1);
            quote(ps->err, ps->L.v[*i]);
            agti_buf_puts(ps->err,
                          " does not belong to the hunk above: every line of a hunk starts "
                          "with ' ' (context, a space even for an empty line), '-' (removed) "
                          "or '+' (added), and a new hunk starts with an '@@' line.");
            return ps->err->oom ? AGT_ENOMEM : AGT_EPARSE;
        }
        size_t changes = 0;
        while (*i < end) {
            agti_pline t = ps->L.v[*i];
            if (eq(trim(t), EOF_MARK)) {
                if (changes == 0)
                    return perr(ps, *i,
                                "'" EOF_MARK "' ends a hunk that has no lines: put it after "
                                "the hunk's last line.");
                h->eof = true;
                (*i)++;
                break;
            }
            char c = t.n ? t.s[0] : ' ';
            agti_pline body = t.n ? (agti_pline){t.s + 1, t.n - 1} : t;
            if (c != ' ' && c != '-' && c != '+') {
                if (changes == 0) {
                    agti_buf_printf(ps->err, "line %zu: ", *i + 1);
                    quote(ps->err, t);
                    agti_buf_puts(ps->err,
                                  " is not a hunk line: every line of a hunk starts with ' ' "
                                  "(context, a space even for an empty line), '-' (removed) or "
                                  "'+' (added).");
                    return ps->err->oom ? AGT_ENOMEM : AGT_EPARSE;
                }
                break; /* the next hunk or section */
            }
            if (c != '+') {
                if (!grow((void **)&h->old, h->nold, &ocap, sizeof *h->old) ||
                    !grow((void **)&h->old_at, h->nold, &atcap, sizeof *h->old_at))
                    return AGT_ENOMEM;
                h->old_at[h->nold] = *i + 1;
                h->old[h->nold++] = body;
            }
            if (c != '-') {
                if (!grow((void **)&h->nw, h->nnew, &ncap, sizeof *h->nw))
                    return AGT_ENOMEM;
                h->nw[h->nnew++] = body;
            }
            changes++;
            (*i)++;
        }
        if (changes == 0) {
            /* *i < the End Patch line's index: there is a line to name */
            return perr(ps, *i,
                        "the hunk that starts at line %zu has no lines: give its context (' '), "
                        "removed ('-') and added ('+') lines after the '@@' line.",
                        h->line);
        }
    }
    if (o->nhunks == 0 && o->move_to == NULL) /* a Move to alone renames the file */
        return perr(ps, o->line - 1,
                    "'" UPDATE_MARK "%s' has no hunks: give at least one '@@' hunk with the "
                    "lines to change, or use '" DELETE_MARK "' to remove the file.",
                    o->path);
    return AGT_OK;
}

static bool heredoc_start(agti_pline t)
{
    return eq(t, "<<EOF") || eq(t, "<<'EOF'") || eq(t, "<<\"EOF\"");
}

int agti_patch_parse(const char *text, size_t len, agti_patch **out, agti_buf *err)
{
    *out = NULL;
    if (len > AGTI_PATCH_MAX_BYTES) {
        agti_buf_printf(err, "the patch has %zu bytes; at most %u are taken.", len,
                        AGTI_PATCH_MAX_BYTES);
        return err->oom ? AGT_ENOMEM : AGT_ELIMIT;
    }
    agti_patch *p = calloc(1, sizeof *p);
    if (p == NULL || (p->text = malloc(len + 1)) == NULL) {
        free(p);
        return AGT_ENOMEM;
    }
    memcpy(p->text, text, len);
    p->text[len] = '\0';
    parser ps = {{NULL, 0}, 0, err, p};
    int rc = AGT_OK;
    if (!split(p->text, len, &ps.L)) {
        rc = AGT_ENOMEM;
        goto out;
    }
    size_t a = 0, z = ps.L.n;
    while (a < z && blank(ps.L.v[a]))
        a++;
    while (z > a && blank(ps.L.v[z - 1]))
        z--;
    if (a == z) {
        agti_buf_puts(err, "the patch is empty: it starts with the line '" BEGIN_MARK
                           "' and ends with the line '" END_MARK "'.");
        rc = err->oom ? AGT_ENOMEM : AGT_EPARSE;
        goto out;
    }
    if (!eq(trim(ps.L.v[a]), BEGIN_MARK) && heredoc_start(trim(ps.L.v[a])) && z - a >= 4) {
        agti_pline last = trim(ps.L.v[z - 1]);
        if (last.n >= 3 && memcmp(last.s + last.n - 3, "EOF", 3) == 0) {
            a++, z--;
            while (a < z && blank(ps.L.v[a]))
                a++;
            while (z > a && blank(ps.L.v[z - 1]))
                z--;
        }
    }
    if (a == z || !eq(trim(ps.L.v[a]), BEGIN_MARK)) {
        agti_buf_printf(err, "line %zu: the patch must start with the line '" BEGIN_MARK "', not ",
                        a + 1);
        quote(err, a < z ? ps.L.v[a] : ps.L.v[0]);
        agti_buf_puts(err, ".");
        rc = err->oom ? AGT_ENOMEM : AGT_EPARSE;
        goto out;
    }
    if (z - a < 2 || !eq(trim(ps.L.v[z - 1]), END_MARK)) {
        agti_buf_printf(err,
                        "line %zu: the patch must end with the line '" END_MARK "'; its last "
                        "line is ",
                        z);
        quote(err, ps.L.v[z - 1]);
        agti_buf_puts(err, " (was the patch cut off?).");
        rc = err->oom ? AGT_ENOMEM : AGT_EPARSE;
        goto out;
    }
    size_t i = a + 1, end = z - 1, cap = 0;
    while (i < end) {
        agti_pline l = ps.L.v[i];
        agti_pline t = trim(l);
        if (t.n == 0) {
            i++;
            continue;
        }
        if (p->nops >= AGTI_PATCH_MAX_FILES) {
            rc = perr(&ps, i, "the patch has more than %d file sections; split it.",
                      AGTI_PATCH_MAX_FILES);
            if (rc == AGT_EPARSE)
                rc = AGT_ELIMIT;
            goto out;
        }
        if (!grow((void **)&p->ops, p->nops, &cap, sizeof *p->ops)) {
            rc = AGT_ENOMEM;
            goto out;
        }
        agti_pop *o = &p->ops[p->nops];
        memset(o, 0, sizeof *o);
        o->line = i + 1;
        if (starts(t, ADD_MARK) || eq(t, "*** Add File:")) {
            p->nops++;
            o->kind = AGTI_PATCH_ADD;
            if ((rc = header_path(&ps, i, t, ADD_MARK, &o->path)) != AGT_OK)
                goto out;
            i++;
            agti_buf c = AGTI_BUF_INIT;
            while (i < end && ps.L.v[i].n > 0 && ps.L.v[i].s[0] == '+') {
                agti_buf_put(&c, ps.L.v[i].s + 1, ps.L.v[i].n - 1);
                agti_buf_putc(&c, '\n');
                i++;
            }
            if (c.oom) {
                agti_buf_free(&c);
                rc = AGT_ENOMEM;
                goto out;
            }
            o->content_len = c.len;
            o->content = c.len ? agti_buf_detach(&c) : agti_strdup("");
            agti_buf_free(&c);
            if (o->content == NULL) {
                rc = AGT_ENOMEM;
                goto out;
            }
        } else if (starts(t, DELETE_MARK) || eq(t, "*** Delete File:")) {
            p->nops++;
            o->kind = AGTI_PATCH_DELETE;
            if ((rc = header_path(&ps, i, t, DELETE_MARK, &o->path)) != AGT_OK)
                goto out;
            i++;
        } else if (starts(t, UPDATE_MARK) || eq(t, "*** Update File:")) {
            p->nops++;
            o->kind = AGTI_PATCH_UPDATE;
            if ((rc = header_path(&ps, i, t, UPDATE_MARK, &o->path)) != AGT_OK)
                goto out;
            i++;
            if (i < end) {
                agti_pline m = trim(ps.L.v[i]);
                if (starts(m, MOVE_MARK) || eq(m, "*** Move to:")) {
                    o->move_line = i + 1;
                    if ((rc = header_path(&ps, i, m, MOVE_MARK, &o->move_to)) != AGT_OK)
                        goto out;
                    i++;
                }
            }
            if ((rc = parse_hunks(&ps, &i, end, o)) != AGT_OK)
                goto out;
        } else {
            agti_buf_printf(err, "line %zu: ", i + 1);
            quote(err, l);
            if (starts(t, MOVE_MARK) || eq(t, "*** Move to:"))
                agti_buf_puts(err, " must follow its '" UPDATE_MARK "PATH' line directly.");
            else if (eq(t, EOF_MARK))
                agti_buf_puts(err, " must end a hunk of an '" UPDATE_MARK "PATH' section.");
            else if (eq(t, END_MARK) || eq(t, BEGIN_MARK))
                agti_buf_puts(err, " may appear only once, on the patch's last (first) line; "
                                   "give one patch per call.");
            else
                agti_buf_puts(err, " is not a file section: each starts with '" ADD_MARK
                                   "PATH' (then '+' lines), '" DELETE_MARK "PATH' or '" UPDATE_MARK
                                   "PATH' (then '@@' hunks).");
            rc = err->oom ? AGT_ENOMEM : AGT_EPARSE;
            goto out;
        }
    }
out:
    free(ps.L.v);
    if (rc != AGT_OK) {
        agti_patch_free(p);
        return rc;
    }
    *out = p;
    return AGT_OK;
}

/* ---- applying ---------------------------------------------------------- */

void agti_patch_result_clear(agti_patch_result *res)
{
    for (size_t i = 0; i < res->n; i++) {
        agti_pfile *f = &res->files[i];
        free(f->key);
        free(f->path);
        free(f->old);
        free(f->data);
        free(f->moved_from);
        agti_buf_free(&f->notes);
    }
    free(res->files);
    res->files = NULL;
    res->n = 0;
}

typedef struct applier {
    const agti_patch *p;
    int max_level;
    agti_patch_load_fn load;
    void *ctx;
    agti_patch_result *res;
    size_t cap;
    agti_buf *err;
} applier;

/* The file path names, loaded on first use. */
static int get_file(applier *ap, const char *path, agti_pfile **out)
{
    for (size_t i = 0; i < ap->res->n; i++)
        if (strcmp(ap->res->files[i].path, path) == 0) {
            *out = &ap->res->files[i];
            return AGT_OK;
        }
    agti_pload ld = {NULL, false, NULL, 0};
    int rc = ap->load(ap->ctx, path, &ld, ap->err);
    if (rc != AGT_OK) {
        free(ld.key);
        free(ld.data);
        return rc;
    }
    if (ld.key == NULL && (ld.key = agti_strdup(path)) == NULL) {
        free(ld.data);
        return AGT_ENOMEM;
    }
    for (size_t i = 0; i < ap->res->n; i++)
        if (strcmp(ap->res->files[i].key, ld.key) == 0) {
            free(ld.key);
            free(ld.data);
            *out = &ap->res->files[i];
            return AGT_OK;
        }
    if (!grow((void **)&ap->res->files, ap->res->n, &ap->cap, sizeof *ap->res->files)) {
        free(ld.key);
        free(ld.data);
        return AGT_ENOMEM;
    }
    agti_pfile *f = &ap->res->files[ap->res->n];
    memset(f, 0, sizeof *f);
    f->key = ld.key;
    f->path = agti_strdup(path);
    f->existed = f->exists = ld.exists;
    f->old = ld.data;
    f->old_len = ld.exists ? ld.len : 0;
    if (ld.exists) {
        f->data = malloc(f->old_len + 1);
        if (f->data != NULL) {
            memcpy(f->data, f->old ? f->old : "", f->old_len);
            f->data[f->old_len] = '\0';
        }
        f->len = f->old_len;
    }
    ap->res->n++;
    if (f->path == NULL || (ld.exists && f->data == NULL))
        return AGT_ENOMEM;
    *out = f;
    return AGT_OK;
}

static int fail(applier *ap, int code, const agti_pop *o, const char *fmt, ...) AGTI_PRINTF(4, 5);
static int fail(applier *ap, int code, const agti_pop *o, const char *fmt, ...)
{
    agti_buf_printf(ap->err, "line %zu: ", o->line);
    va_list va;
    va_start(va, fmt);
    agti_buf_vprintf(ap->err, fmt, va);
    va_end(va);
    return ap->err->oom ? AGT_ENOMEM : code;
}

/* Lines l[0..n) joined, each followed by "\n". */
static char *join(const agti_pline *l, size_t n, size_t *out_len)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_reserve(&b, 1);
    for (size_t i = 0; i < n; i++) {
        agti_buf_put(&b, l[i].s, l[i].n);
        agti_buf_putc(&b, '\n');
    }
    if (b.oom) {
        agti_buf_free(&b);
        return NULL;
    }
    *out_len = b.len;
    return agti_buf_detach(&b);
}

static size_t line_no(const char *t, size_t off)
{
    size_t n = 1;
    for (size_t i = 0; i < off; i++)
        n += t[i] == '\n';
    return n;
}

/* The line of t that starts at offset off (without its ending). */
static agti_pline line_at(const char *t, size_t len, size_t off)
{
    const char *nl = memchr(t + off, '\n', len - off);
    size_t e = nl ? (size_t)(nl - t) : len;
    if (e > off && t[e - 1] == '\r')
        e--;
    return (agti_pline){t + off, e - off};
}

/* Whether a file line and a hunk line are the same at the ladder's
 * level (white space only: the closest place for a message). */
static bool loose_eq(agti_pline a, agti_pline b, int level)
{
    if (level >= AGTI_MATCH_INDENT) {
        a = trim(a);
        b = trim(b);
    } else if (level >= AGTI_MATCH_TRAILING) {
        while (a.n > 0 && is_ws(a.s[a.n - 1]))
            a.n--;
        while (b.n > 0 && is_ws(b.s[b.n - 1]))
            b.n--;
    }
    return a.n == b.n && memcmp(a.s, b.s, a.n) == 0;
}

/* Explains why hunk h's lines were not found in text[from..len): the
 * place where most of its first lines match (white space aside), the
 * first line that does not, and the file's line there. */
static void explain_miss(agti_buf *e, const char *text, size_t len, size_t from,
                         const agti_phunk *h, int level)
{
    size_t best = 0, best_at = 0;
    for (size_t s = from; s < len;) {
        size_t k = 0, q = s;
        while (k < h->nold && q < len && loose_eq(line_at(text, len, q), h->old[k], level)) {
            const char *nl = memchr(text + q, '\n', len - q);
            q = nl ? (size_t)(nl - text) + 1 : len;
            k++;
        }
        if (k > best) {
            best = k;
            best_at = s;
        }
        const char *nl = memchr(text + s, '\n', len - s);
        if (nl == NULL)
            break;
        s = (size_t)(nl - text) + 1;
    }
    if (best == 0) {
        agti_buf_printf(e, " Its first line (patch line %zu) ", h->old_at[0]);
        quote(e, h->old[0]);
        agti_buf_puts(e, from > 0 ? " is not in the file after the previous hunk or anchor"
                                  : " is not in the file");
        agti_buf_puts(e, level >= AGTI_MATCH_INDENT ? ", even ignoring white space." : ".");
        return;
    }
    size_t q = best_at;
    for (size_t k = 0; k < best; k++) {
        const char *nl = memchr(text + q, '\n', len - q);
        q = nl ? (size_t)(nl - text) + 1 : len;
    }
    size_t fl = line_no(text, best_at);
    if (best == h->nold && h->eof) {
        agti_buf_printf(e, " Its lines are the file's lines %zu-%zu, which do not end the file.",
                        fl, fl + best - 1);
        return;
    }
    if (best == h->nold && level < AGTI_MATCH_INDENT) {
        agti_buf_printf(e,
                        " Its lines are the file's lines %zu-%zu but for their line endings, "
                        "which strict matching does not ignore.",
                        fl, fl + best - 1);
        return;
    }
    if (best == h->nold) {
        agti_buf_printf(e,
                        " Its lines match the file's lines %zu-%zu only when white space is "
                        "ignored, in a way the matching does not allow (the indentation does "
                        "not change uniformly).",
                        fl, fl + best - 1);
        return;
    }
    if (best == 1)
        agti_buf_printf(e, " Its first line matches the file's line %zu", fl);
    else
        agti_buf_printf(e, " Its first %zu lines match the file from line %zu", best, fl);
    agti_buf_printf(e, ", but line %zu of the patch, ", h->old_at[best]);
    quote(e, h->old[best]);
    if (q < len) {
        agti_buf_printf(e, ", differs from the file's line %zu: ", line_no(text, q));
        quote(e, line_at(text, len, q));
        agti_buf_puts(e, ".");
    } else
        agti_buf_puts(e, ", is past the end of the file.");
}

/* The dominant line ending of text is CRLF. */
static bool crlf_file(const char *t, size_t len)
{
    size_t crlf = 0, lf = 0;
    for (size_t i = 0; i < len; i++)
        if (t[i] == '\n')
            (i > 0 && t[i - 1] == '\r') ? crlf++ : lf++;
    return crlf > lf;
}

/* text with every "\n" written as "\r\n" (text has no "\r"). */
static char *lf_to_crlf(const char *text, size_t len, size_t *out_len)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_reserve(&b, len + len / 8 + 1);
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            agti_buf_putc(&b, '\r');
        agti_buf_putc(&b, text[i]);
    }
    if (b.oom) {
        agti_buf_free(&b);
        return NULL;
    }
    *out_len = b.len;
    return agti_buf_detach(&b);
}

static const char *const LEVEL_NAME[] = {
    "exactly", "after normalising line endings", "after ignoring trailing white space",
    "after ignoring indentation", "after folding Unicode look-alikes"};

/* Applies hunk number hi of o to the file text *t (always ending in "\n"),
 * from *cursor on. */
static int apply_hunk(applier *ap, const agti_pop *o, size_t hi, agti_buf *t, size_t *cursor,
                      agti_pfile *f)
{
    const agti_phunk *h = &o->hunks[hi];
    const char *path = o->path;
    agti_match m;
    /* Anchors: each the first whole line from the cursor on (ladder), else
     * the first line containing its text. */
    for (size_t k = 0; k < h->nanchors; k++) {
        agti_pline a = h->anchors[k];
        size_t alen = 0;
        char *al = join(&a, 1, &alen);
        if (al == NULL)
            return AGT_ENOMEM;
        int rc = agti_match_find_at(t->ptr, t->len, *cursor, al, alen, ap->max_level,
                                    AGTI_MATCH_LINES, &m);
        free(al);
        if (rc != AGT_OK)
            return rc;
        if (m.count > 0) {
            *cursor = m.end;
            continue;
        }
        agti_pline ta = trim(a);
        const char *hit = ta.n ? memmem(t->ptr + *cursor, t->len - *cursor, ta.s, ta.n) : NULL;
        if (hit != NULL) {
            const char *nl = memchr(hit, '\n', (size_t)(t->ptr + t->len - hit));
            *cursor = nl ? (size_t)(nl - t->ptr) + 1 : t->len;
            continue;
        }
        agti_buf_printf(ap->err, "line %zu: hunk %zu of %s: the '@@' line's text ", h->line, hi + 1,
                        path);
        quote(ap->err, a);
        agti_buf_printf(ap->err, " is not a line of %s%s. Nothing was changed.", path,
                        *cursor > 0 ? " after the previous hunk or anchor" : "");
        return ap->err->oom ? AGT_ENOMEM : AGT_ENOTFOUND;
    }
    size_t ol = 0, nl_ = 0;
    char *old = join(h->old, h->nold, &ol);
    char *nw = join(h->nw, h->nnew, &nl_);
    if (old == NULL || nw == NULL) {
        free(old);
        free(nw);
        return AGT_ENOMEM;
    }
    size_t start, end;
    char *rep = NULL;
    size_t rlen = 0;
    int rc = AGT_OK;
    if (h->nold == 0) {
        /* Pure addition: after the anchors, else at the end of the file. */
        start = end = h->nanchors > 0 ? *cursor : t->len;
        if (crlf_file(t->ptr, t->len)) {
            rep = lf_to_crlf(nw, nl_, &rlen);
        } else {
            rep = nw;
            rlen = nl_;
            nw = NULL;
        }
        if (rep == NULL) {
            rc = AGT_ENOMEM;
            goto out;
        }
        m.level = AGTI_MATCH_EXACT;
    } else {
        unsigned flags = AGTI_MATCH_LINES | (h->eof ? AGTI_MATCH_AT_END : 0u);
        rc = agti_match_find_at(t->ptr, t->len, *cursor, old, ol, ap->max_level, flags, &m);
        if (rc != AGT_OK)
            goto out;
        size_t use_old = ol, use_new = nl_;
        if (m.count == 0 && h->nold > 1 && h->old[h->nold - 1].n == 0) {
            /* A trailing empty line stands for the file's last line break. */
            use_old = ol - 1;
            if (h->nnew > 0 && h->nw[h->nnew - 1].n == 0)
                use_new = nl_ - 1;
            rc =
                agti_match_find_at(t->ptr, t->len, *cursor, old, use_old, ap->max_level, flags, &m);
            if (rc != AGT_OK)
                goto out;
        }
        if (m.count == 0) {
            agti_buf_printf(ap->err, "line %zu: hunk %zu of %s does not match the file%s.", h->line,
                            hi + 1, path, h->eof ? " at its end ('" EOF_MARK "')" : "");
            explain_miss(ap->err, t->ptr, t->len, *cursor, h, ap->max_level);
            agti_buf_puts(ap->err, " Nothing was changed: read the file again and copy the "
                                   "context and '-' lines exactly.");
            rc = ap->err->oom ? AGT_ENOMEM : AGT_ENOTFOUND;
            goto out;
        }
        if (m.count > 1 && h->nanchors == 0) {
            agti_buf_printf(ap->err, "line %zu: hunk %zu of %s matches %zu places %s (lines",
                            h->line, hi + 1, path, m.count, LEVEL_NAME[m.level]);
            size_t shown = m.count < AGTI_MATCH_MAX_PLACES ? m.count : AGTI_MATCH_MAX_PLACES;
            for (size_t k = 0; k < shown; k++)
                agti_buf_printf(ap->err, "%s %zu", k ? "," : "", m.lines[k]);
            if (m.count > shown)
                agti_buf_printf(ap->err, " and %zu more", m.count - shown);
            agti_buf_puts(ap->err, "). Nothing was changed. Add an '@@' line naming the class "
                                   "or function it is in, or more context lines, so that it "
                                   "matches one place.");
            rc = ap->err->oom ? AGT_ENOMEM : AGT_EAMBIGUOUS;
            goto out;
        }
        start = m.start;
        end = m.end;
        if (m.level == AGTI_MATCH_EXACT) {
            rep = nw;
            rlen = use_new;
            nw = NULL;
        } else {
            rep = agti_match_adapt(t->ptr, t->len, &m, old, use_old, nw, use_new, &rlen);
            if (rep == NULL) {
                rc = AGT_ENOMEM;
                goto out;
            }
        }
    }
    if (t->len - (end - start) > AGTI_PATCH_MAX_OUT - rlen) {
        rc = fail(ap, AGT_ELIMIT, o, "%s would grow past %u MiB. Nothing was changed.", path,
                  AGTI_PATCH_MAX_OUT >> 20);
        goto out;
    }
    {
        agti_buf nb = AGTI_BUF_INIT;
        agti_buf_reserve(&nb, t->len - (end - start) + rlen + 1);
        agti_buf_put(&nb, t->ptr, start);
        agti_buf_put(&nb, rep, rlen);
        agti_buf_put(&nb, t->ptr + end, t->len - end);
        if (nb.oom) {
            agti_buf_free(&nb);
            rc = AGT_ENOMEM;
            goto out;
        }
        agti_buf_free(t);
        *t = nb;
    }
    if (h->nold > 0 || h->nanchors > 0)
        *cursor = start + rlen;
    if (m.level > AGTI_MATCH_EXACT && m.why[0] != '\0')
        agti_buf_printf(&f->notes, "\n  hunk %zu (line %zu of the file): %s", hi + 1,
                        line_no(t->ptr, start), m.why);
    f->hunks++;
out:
    free(old);
    free(nw);
    free(rep);
    return rc;
}

static int apply_update(applier *ap, const agti_pop *o, agti_pfile *f, char **out, size_t *out_len)
{
    agti_buf t = AGTI_BUF_INIT;
    agti_buf_reserve(&t, f->len + 2);
    agti_buf_put(&t, f->data ? f->data : "", f->len);
    bool no_final = f->len > 0 && f->data[f->len - 1] != '\n';
    if (no_final)
        agti_buf_putc(&t, '\n'); /* taken off again below */
    if (t.oom) {
        agti_buf_free(&t);
        return AGT_ENOMEM;
    }
    size_t cursor = 0;
    int rc = AGT_OK;
    for (size_t hi = 0; hi < o->nhunks && rc == AGT_OK; hi++)
        rc = apply_hunk(ap, o, hi, &t, &cursor, f);
    if (rc != AGT_OK) {
        agti_buf_free(&t);
        return rc;
    }
    if (no_final && t.len > 0 && t.ptr[t.len - 1] == '\n') {
        t.len--;
        if (t.len > 0 && t.ptr[t.len - 1] == '\r')
            t.len--;
        t.ptr[t.len] = '\0';
    }
    *out_len = t.len;
    *out = agti_buf_detach(&t);
    if (*out == NULL && (*out = agti_strdup("")) == NULL)
        return AGT_ENOMEM;
    return AGT_OK;
}

static int set_data(agti_pfile *f, char *data, size_t len)
{
    free(f->data);
    f->data = data;
    f->len = len;
    f->exists = data != NULL;
    return AGT_OK;
}

static int apply_op(applier *ap, const agti_pop *o)
{
    agti_pfile *f;
    int rc = get_file(ap, o->path, &f);
    if (rc != AGT_OK)
        return rc;
    switch (o->kind) {
    case AGTI_PATCH_ADD: {
        if (f->exists)
            return fail(ap, AGT_EEXISTS, o,
                        "'" ADD_MARK "%s': the file exists already. Nothing was changed. To "
                        "change it use '" UPDATE_MARK "%s' with hunks; to replace all of it "
                        "put '" DELETE_MARK "%s' before this section.",
                        o->path, o->path, o->path);
        char *c = malloc(o->content_len + 1);
        if (c == NULL)
            return AGT_ENOMEM;
        memcpy(c, o->content, o->content_len + 1);
        set_data(f, c, o->content_len);
        return AGT_OK;
    }
    case AGTI_PATCH_DELETE:
        if (!f->exists)
            return fail(ap, AGT_ENOTFOUND, o,
                        "'" DELETE_MARK "%s': the file does not exist%s. Nothing was changed.",
                        o->path, f->existed ? " any more (an earlier section removed it)" : "");
        set_data(f, NULL, 0);
        return AGT_OK;
    default:
        break;
    }
    if (!f->exists)
        return fail(ap, AGT_ENOTFOUND, o,
                    "'" UPDATE_MARK "%s': the file does not exist%s. Nothing was changed. To "
                    "create it use '" ADD_MARK "%s' with '+' lines.",
                    o->path, f->existed ? " any more (an earlier section removed or moved it)" : "",
                    o->path);
    char *data = NULL;
    size_t len = 0;
    if ((rc = apply_update(ap, o, f, &data, &len)) != AGT_OK)
        return rc;
    if (o->move_to == NULL)
        return set_data(f, data, len);
    agti_pfile *d;
    size_t fi = (size_t)(f - ap->res->files);
    if ((rc = get_file(ap, o->move_to, &d)) != AGT_OK) {
        free(data);
        return rc;
    }
    f = &ap->res->files[fi]; /* get_file may have moved the array */
    if (d == f)
        return set_data(f, data, len); /* moved onto itself: an update */
    if (d->exists) {
        free(data);
        agti_buf_printf(ap->err,
                        "line %zu: '" MOVE_MARK "%s': that file exists already. Nothing was "
                        "changed. Put '" DELETE_MARK "%s' before this section to replace it.",
                        o->move_line, o->move_to, o->move_to);
        return ap->err->oom ? AGT_ENOMEM : AGT_EEXISTS;
    }
    set_data(d, data, len);
    d->hunks += f->hunks;
    f->hunks = 0;
    agti_buf_put(&d->notes, f->notes.ptr ? f->notes.ptr : "", f->notes.len);
    agti_buf_free(&f->notes);
    free(d->moved_from);
    d->moved_from = agti_strdup(o->path);
    set_data(f, NULL, 0);
    return d->moved_from ? AGT_OK : AGT_ENOMEM;
}

int agti_patch_apply(const agti_patch *p, int max_level, agti_patch_load_fn load, void *ctx,
                     agti_patch_result *res, agti_buf *err)
{
    memset(res, 0, sizeof *res);
    applier ap = {p, max_level, load, ctx, res, 0, err};
    int rc = AGT_OK;
    for (size_t i = 0; i < p->nops && rc == AGT_OK; i++)
        rc = apply_op(&ap, &p->ops[i]);
    if (rc != AGT_OK)
        agti_patch_result_clear(res);
    return rc;
}
