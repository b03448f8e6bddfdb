/*
 * Comment anchoring: places a snippet on lines of the change set through the
 * stages documented in include/agenttools/diff.h. Each file's hunk lines and
 * each post-change content are indexed by trimmed-line hash, so a snippet is
 * looked up by its first non-blank line and verified from there; nothing is
 * rescanned per comment.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"

/* Candidates reported for an ambiguous snippet; the search stops there, which
 * also bounds the work for snippets made of very common lines. */
#define MAX_CANDIDATES 100

/* ---- hashing and the line index -------------------------------------- */

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

void agti_line_trim(const char **s, size_t *len)
{
    const char *p = *s;
    size_t n = *len;
    while (n && is_ws(*p)) {
        p++;
        n--;
    }
    while (n && is_ws(p[n - 1]))
        n--;
    *s = p;
    *len = n;
}

/* Lines are compared as the model was shown them: the tools pass every
 * text through agti_utf8_sanitize(), which makes each invalid byte (and a
 * NUL) one U+FFFD. A deleted line holding a Latin-1 byte ("L\xf8vset") was
 * shown as "L\uFFFDvset", the model quoted that, and a byte comparison could
 * never match it. A cursor walks a line's bytes in that decoded form. */
typedef struct shown {
    const unsigned char *p;
    size_t len, i;
    const unsigned char *unit; /* the current character's bytes */
    size_t ulen, upos;
} shown;

static const unsigned char replacement[3] = {0xEF, 0xBF, 0xBD};

static void shown_init(shown *c, const char *s, size_t len)
{
    c->p = (const unsigned char *)s;
    c->len = len;
    c->i = 0;
    c->unit = NULL;
    c->ulen = c->upos = 0;
}

/* Next byte of the decoded form, or -1 at the end. */
static int shown_next(shown *c)
{
    if (c->upos < c->ulen)
        return c->unit[c->upos++];
    if (c->i >= c->len)
        return -1;
    unsigned char b = c->p[c->i];
    if (b != 0 && b < 0x80) {
        c->i++;
        return b;
    }
    uint32_t cp;
    size_t n = b == 0 ? 0 : agti_utf8_decode(c->p + c->i, c->len - c->i, &cp);
    if (n == 0) {
        c->unit = replacement;
        c->ulen = 3;
        c->i++;
    } else {
        c->unit = c->p + c->i;
        c->ulen = n;
        c->i += n;
    }
    c->upos = 1;
    return c->unit[0];
}

uint64_t agti_line_hash(const char *s, size_t len)
{
    agti_line_trim(&s, &len);
    if (len == 0)
        return 0;
    uint64_t h = 0xcbf29ce484222325ull;
    shown c;
    shown_init(&c, s, len);
    for (int b; (b = shown_next(&c)) >= 0;) {
        h ^= (unsigned char)b;
        h *= 0x100000001b3ull;
    }
    h ^= h >> 29;
    return h ? h : 1;
}

int agti_line_index_build(agti_line_index *ix, const uint64_t *hashes, size_t n)
{
    size_t cap = 16;
    while (cap < n * 2)
        cap *= 2;
    ix->keys = calloc(cap, sizeof(uint64_t));
    ix->heads = malloc(cap * sizeof(uint32_t));
    ix->counts = malloc(cap * sizeof(uint32_t));
    ix->next = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!ix->keys || !ix->heads || !ix->counts || !ix->next) {
        agti_line_index_free(ix);
        return agti_oom();
    }
    ix->mask = cap - 1;
    /* push front from the end so every chain is in ascending order */
    for (size_t i = n; i-- > 0;) {
        uint64_t h = hashes[i];
        ix->next[i] = AGTI_DIFF_NONE;
        if (h == 0)
            continue;
        size_t slot = (size_t)h & ix->mask;
        while (ix->keys[slot] && ix->keys[slot] != h)
            slot = (slot + 1) & ix->mask;
        if (ix->keys[slot]) {
            ix->next[i] = ix->heads[slot];
            ix->counts[slot]++;
        } else {
            ix->keys[slot] = h;
            ix->counts[slot] = 1;
        }
        ix->heads[slot] = (uint32_t)i;
    }
    return AGT_OK;
}

void agti_line_index_free(agti_line_index *ix)
{
    free(ix->keys);
    free(ix->heads);
    free(ix->counts);
    free(ix->next);
    memset(ix, 0, sizeof(*ix));
}

uint32_t agti_line_index_first(const agti_line_index *ix, uint64_t h, uint32_t *count)
{
    if (count)
        *count = 0;
    if (!ix->keys || h == 0)
        return AGTI_DIFF_NONE;
    size_t slot = (size_t)h & ix->mask;
    while (ix->keys[slot]) {
        if (ix->keys[slot] == h) {
            if (count)
                *count = ix->counts[slot];
            return ix->heads[slot];
        }
        slot = (slot + 1) & ix->mask;
    }
    return AGTI_DIFF_NONE;
}

static int build_indexes(agt_diff *d)
{
    for (size_t fi = 0; fi < d->nfiles; fi++) {
        agti_diff_file *f = &d->files[fi];
        if (f->idx_built)
            continue;
        uint64_t *hashes = malloc((f->nlines ? f->nlines : 1) * sizeof(uint64_t));
        if (!hashes)
            return agti_oom();
        for (uint32_t i = 0; i < f->nlines; i++) {
            const agti_diff_line *l = &d->lines[f->first_line + i];
            hashes[i] = agti_line_hash(d->text.ptr + l->off, l->len);
        }
        int rc = agti_line_index_build(&f->idx, hashes, f->nlines);
        free(hashes);
        if (rc != AGT_OK)
            return rc;
        f->idx_built = true;
    }
    return AGT_OK;
}

int agti_diff_build_index(agt_diff *d)
{
    if (atomic_load_explicit(&d->indexed, memory_order_acquire))
        return AGT_OK;
    pthread_mutex_lock(&d->index_lock);
    int rc = AGT_OK;
    if (!atomic_load_explicit(&d->indexed, memory_order_relaxed)) {
        rc = build_indexes(d);
        if (rc == AGT_OK)
            atomic_store_explicit(&d->indexed, true, memory_order_release);
    }
    pthread_mutex_unlock(&d->index_lock);
    return rc;
}

/* ---- snippets --------------------------------------------------------- */

typedef struct sline {
    const char *s;
    size_t len;
    uint64_t hash;
} sline;

typedef struct snippet {
    sline *l;
    size_t n;
} snippet;

/* Splits text into its non-blank, trimmed lines; strip_marker removes one
 * '+'/'-' in column 0. Sets *had_marker when one was removed. */
static int snippet_prepare(snippet *sn, const char *text, bool strip_marker, bool *had_marker)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    sn->l = malloc(cap * sizeof(sline));
    sn->n = 0;
    if (!sn->l)
        return agti_oom();
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *s = p;
        p = nl ? nl + 1 : p + n;
        if (n && s[0] == '\\')
            continue; /* "\ No newline at end of file" pasted from a diff */
        if (n >= 4 && memcmp(s, "@@ -", 4) == 0)
            continue; /* a hunk header pasted from a diff */
        if (strip_marker && n && (s[0] == '+' || s[0] == '-')) {
            s++;
            n--;
            if (had_marker)
                *had_marker = true;
        }
        agti_line_trim(&s, &n);
        if (n == 0)
            continue;
        sn->l[sn->n].s = s;
        sn->l[sn->n].len = n;
        sn->l[sn->n].hash = agti_line_hash(s, n);
        sn->n++;
    }
    return AGT_OK;
}

static bool same(const sline *a, const char *s, size_t len)
{
    agti_line_trim(&s, &len);
    if (a->len == len && memcmp(a->s, s, len) == 0)
        return true;
    /* equal as shown (see struct shown), e.g. U+FFFD quoted for a Latin-1 byte */
    shown x, y;
    shown_init(&x, a->s, a->len);
    shown_init(&y, s, len);
    for (;;) {
        int bx = shown_next(&x), by = shown_next(&y);
        if (bx != by)
            return false;
        if (bx < 0)
            return true;
    }
}

/* ---- matching ---------------------------------------------------------- */

enum { M_NONE, M_HUNK_NEW, M_HUNK_OLD, M_FILE };

typedef struct hits {
    int method;
    size_t total;
    size_t n;
    uint32_t start[MAX_CANDIDATES], end[MAX_CANDIDATES];
} hits;

static void hits_add(hits *h, uint32_t s, uint32_t e)
{
    if (h->n < MAX_CANDIDATES) {
        h->start[h->n] = s;
        h->end[h->n] = e;
        h->n++;
    }
    h->total++;
}

/* Picks the snippet line with the fewest occurrences in ix as the pivot, so a
 * snippet is verified only where its rarest line is. Returns false when some
 * line does not occur at all (no match possible). */
static bool pick_pivot(const agti_line_index *ix, const snippet *sn, size_t *kp, uint32_t *head)
{
    uint32_t best = UINT32_MAX;
    for (size_t k = 0; k < sn->n; k++) {
        uint32_t count;
        uint32_t h = agti_line_index_first(ix, sn->l[k].hash, &count);
        if (h == AGTI_DIFF_NONE)
            return false;
        if (count < best) {
            best = count;
            *kp = k;
            *head = h;
        }
    }
    return sn->n > 0;
}

/* The hunk (range in d->lines) that holds file-local line pos. */
static void hunk_bounds(const agt_diff *d, const agti_diff_file *f, uint32_t pos, uint32_t *hs,
                        uint32_t *he)
{
    uint32_t abs = f->first_line + pos;
    uint32_t lo = 0, hi = f->nhunks;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (d->hunks[f->first_hunk + mid].first_line <= abs)
            lo = mid;
        else
            hi = mid;
    }
    const agti_diff_hunk *h = &d->hunks[f->first_hunk + lo];
    *hs = h->first_line;
    *he = h->first_line + h->nlines;
}

/* Whether diff line l is on the side (not `skip`) and not blank. */
static bool diff_line_counts(const agt_diff *d, const agti_diff_line *l, char skip)
{
    if (l->origin == skip)
        return false;
    const char *s = d->text.ptr + l->off;
    size_t len = l->len;
    agti_line_trim(&s, &len);
    return len > 0;
}

static void match_hunks(const agt_diff *d, const agti_diff_file *f, const snippet *sn, bool old,
                        hits *h)
{
    char skip = old ? '+' : '-';
    size_t kp = 0;
    uint32_t head = AGTI_DIFF_NONE;
    if (!pick_pivot(&f->idx, sn, &kp, &head))
        return;
    for (uint32_t p = head; p != AGTI_DIFF_NONE && h->n < MAX_CANDIDATES; p = f->idx.next[p]) {
        const agti_diff_line *l = &d->lines[f->first_line + p];
        if (l->origin == skip || !same(&sn->l[kp], d->text.ptr + l->off, l->len))
            continue;
        uint32_t hs, he, j = f->first_line + p;
        hunk_bounds(d, f, p, &hs, &he);
        const agti_diff_line *last = l, *firstl = l;
        bool ok = true;
        for (size_t k = kp + 1; ok && k < sn->n; k++) {
            while (++j < he && !diff_line_counts(d, &d->lines[j], skip))
                ;
            ok = j < he && same(&sn->l[k], d->text.ptr + d->lines[j].off, d->lines[j].len);
            last = ok ? &d->lines[j] : last;
        }
        j = f->first_line + p;
        for (size_t k = kp; ok && k-- > 0;) {
            while (j-- > hs && !diff_line_counts(d, &d->lines[j], skip))
                ;
            ok = j != UINT32_MAX && j >= hs &&
                 same(&sn->l[k], d->text.ptr + d->lines[j].off, d->lines[j].len);
            firstl = ok ? &d->lines[j] : firstl;
        }
        if (ok)
            hits_add(h, old ? firstl->old_no : firstl->new_no, old ? last->old_no : last->new_no);
    }
}

static void content_line(const agti_diff_content *c, uint32_t i, const char **s, size_t *len)
{
    size_t a = c->line_off[i];
    size_t b = i + 1 < c->nlines ? c->line_off[i + 1] - 1 : c->len;
    if (b > a && c->text[b - 1] == '\n')
        b--;
    *s = c->text + a;
    *len = b - a;
}

static bool content_blank(const agti_diff_content *c, uint32_t i)
{
    const char *s;
    size_t len;
    content_line(c, i, &s, &len);
    agti_line_trim(&s, &len);
    return len == 0;
}

static bool content_same(const agti_diff_content *c, uint32_t i, const sline *sl)
{
    const char *s;
    size_t len;
    content_line(c, i, &s, &len);
    return same(sl, s, len);
}

static void match_content(const agti_diff_content *c, const snippet *sn, hits *h)
{
    size_t kp = 0;
    uint32_t head = AGTI_DIFF_NONE;
    if (!pick_pivot(&c->idx, sn, &kp, &head))
        return;
    for (uint32_t p = head; p != AGTI_DIFF_NONE && h->n < MAX_CANDIDATES; p = c->idx.next[p]) {
        if (!content_same(c, p, &sn->l[kp]))
            continue;
        uint32_t j = p, first = p, last = p;
        bool ok = true;
        for (size_t k = kp + 1; ok && k < sn->n; k++) {
            while (++j < c->nlines && content_blank(c, j))
                ;
            ok = j < c->nlines && content_same(c, j, &sn->l[k]);
            last = j;
        }
        j = p;
        for (size_t k = kp; ok && k-- > 0;) {
            while (j > 0 && content_blank(c, --j))
                ;
            ok = j < p && content_same(c, j, &sn->l[k]);
            first = j;
        }
        if (ok)
            hits_add(h, first + 1, last + 1);
    }
}

static const agti_diff_content *file_content(const agt_diff *d, const agti_diff_file *f)
{
    return f && f->content_ix1 ? &d->contents[f->content_ix1 - 1] : NULL;
}

/* Stages 1-3 for one file (f may be NULL when only content is known). */
static void try_target(const agt_diff *d, const agti_diff_file *f, const agti_diff_content *c,
                       const snippet *sn, hits *h)
{
    memset(h, 0, offsetof(hits, start));
    if (f && !f->binary) {
        match_hunks(d, f, sn, false, h);
        if (h->total) {
            h->method = M_HUNK_NEW;
            return;
        }
        match_hunks(d, f, sn, true, h);
        if (h->total) {
            h->method = M_HUNK_OLD;
            return;
        }
    }
    if (c) {
        match_content(c, sn, h);
        if (h->total)
            h->method = M_FILE;
    }
}

/* ---- one comment -------------------------------------------------------- */

typedef struct outcome {
    hits h;
    const agti_diff_file *file; /* where it landed (NULL: the requested path) */
    bool moved;
    size_t other_files; /* stage 4: files with a hit */
    const agti_diff_file *others[5];
} outcome;

/* Stages 1-4. Returns true when something matched (anchored or ambiguous). */
static bool run_stages(const agt_diff *d, const agti_diff_file *f, const agti_diff_content *c,
                       const snippet *sn, outcome *o)
{
    memset(o, 0, offsetof(outcome, others));
    try_target(d, f, c, sn, &o->h);
    if (o->h.total) {
        o->file = f;
        return true;
    }
    hits tmp;
    for (size_t i = 0; i < d->nfiles; i++) {
        const agti_diff_file *g = &d->files[i];
        if (g == f)
            continue;
        try_target(d, g, file_content(d, g), sn, &tmp);
        if (!tmp.total)
            continue;
        if (o->other_files < 5)
            o->others[o->other_files] = g;
        if (o->other_files++ == 0)
            o->h = tmp;
    }
    if (o->other_files == 1 && o->h.total == 1) {
        o->file = o->others[0];
        o->moved = true;
        return true;
    }
    memset(&o->h, 0, offsetof(hits, start));
    return false;
}

typedef struct agt_diff_relocation {
    char *text;
} relocation_t;

int agt_diff_relocation_provide(agt_diff_relocation *r, const char *text, size_t len)
{
    if (!r || !text)
        return agti_error(AGT_EINVAL, "agt_diff_relocation_provide: %s is NULL", !r ? "r" : "text");
    char *c = agti_strndup(text, len);
    if (!c)
        return agti_oom();
    free(r->text);
    r->text = c;
    return AGT_OK;
}

static const char *file_path(const agti_diff_file *f)
{
    return f->new_path ? f->new_path : f->old_path;
}

static void json_str_or_null(agti_buf *b, const char *s)
{
    if (s)
        agti_diff_json_string(b, s, strlen(s));
    else
        agti_buf_puts(b, "null");
}

static void emit(agti_buf *b, const char *path, const char *requested, const outcome *o,
                 bool relocated, int attempts, const char *used_snippet, const char *reason)
{
    static const char *methods[] = {"unanchored", "hunk_new", "hunk_old", "file"};
    const hits *h = &o->h;
    bool ambiguous = h->total > 1;
    uint32_t s = h->total == 1 ? h->start[0] : 0, e = h->total == 1 ? h->end[0] : 0;
    agti_buf_puts(b, "{\"path\":");
    json_str_or_null(b, path);
    agti_buf_puts(b, ",\"requested_path\":");
    json_str_or_null(b, requested);
    agti_buf_printf(b, ",\"start_line\":%u,\"end_line\":%u,\"side\":\"%s\",\"method\":\"%s\"", s, e,
                    h->method == M_HUNK_OLD ? "old" : "new",
                    o->moved ? "moved" : methods[h->method]);
    agti_buf_printf(b, ",\"ambiguous\":%s,\"candidates\":[", ambiguous ? "true" : "false");
    for (size_t i = 0; i < h->n; i++)
        agti_buf_printf(b, "%s[%u,%u]", i ? "," : "", h->start[i], h->end[i]);
    agti_buf_printf(b, "],\"relocated\":%s,\"attempts\":%d", relocated ? "true" : "false",
                    attempts);
    if (relocated && used_snippet) {
        agti_buf_puts(b, ",\"snippet\":");
        agti_diff_json_string(b, used_snippet, strlen(used_snippet));
    }
    if (o->other_files > 1) {
        agti_buf_puts(b, ",\"other_paths\":[");
        for (size_t i = 0; i < o->other_files && i < 5; i++) {
            if (i)
                agti_buf_putc(b, ',');
            json_str_or_null(b, file_path(o->others[i]));
        }
        agti_buf_putc(b, ']');
    }
    if (reason) {
        agti_buf_puts(b, ",\"reason\":");
        agti_diff_json_string(b, reason, strlen(reason));
    }
    agti_buf_putc(b, '}');
}

/* Tries one snippet text: the marker-stripped lines, then (when a marker was
 * stripped and nothing matched) the lines as written. *blank when the
 * snippet has no non-blank line. */
static int try_snippet(const agt_diff *d, const agti_diff_file *f, const agti_diff_content *c,
                       const char *text, outcome *o, bool *blank)
{
    snippet sn;
    bool had_marker = false;
    memset(o, 0, offsetof(outcome, others));
    int rc = snippet_prepare(&sn, text, true, &had_marker);
    if (rc != AGT_OK)
        return rc;
    *blank = sn.n == 0;
    bool found = !*blank && run_stages(d, f, c, &sn, o);
    free(sn.l);
    if (found || *blank || !had_marker)
        return AGT_OK;
    rc = snippet_prepare(&sn, text, false, NULL);
    if (rc == AGT_OK && sn.n)
        run_stages(d, f, c, &sn, o);
    free(sn.l);
    return rc;
}

static int anchor_one(const agt_diff *d, const char *path, const char *snippet_text,
                      const char *suggestion, agti_buf *out)
{
    int rc = agti_diff_build_index((agt_diff *)d);
    if (rc != AGT_OK)
        return rc;
    if (path && !*path)
        path = NULL;
    const agti_diff_file *f = path ? agti_diff_find_file(d, path) : NULL;
    const agti_diff_content *c = f      ? file_content(d, f)
                                 : path ? agti_diff_find_content(d, path)
                                        : NULL;
    const char *canon = f ? file_path(f) : path;
    outcome o;
    bool blank = false;
    rc = try_snippet(d, f, c, snippet_text, &o, &blank);
    if (rc != AGT_OK)
        return rc;
    if (blank) {
        emit(out, canon, path, &o, false, 0, NULL, "the snippet has no non-blank line");
        return AGT_OK;
    }
    int attempts = 0;
    bool relocated = false;
    char *used = NULL;
    if (o.h.total == 0 && d->relocate) {
        agti_buf fd = AGTI_BUF_INIT;
        if (f)
            agti_diff_file_render(d, f, &fd);
        if (fd.oom)
            return agti_oom();
        const char *cur = snippet_text;
        while (attempts < d->relocate_max) {
            relocation_t r = {NULL};
            attempts++;
            int cb = d->relocate(path ? path : "", agti_buf_cstr(&fd), cur,
                                 suggestion ? suggestion : "", &r, d->relocate_payload);
            if (cb != 0) {
                free(r.text);
                free(used);
                agti_buf_free(&fd);
                return agti_error(AGT_ECANCELLED, "anchoring cancelled by the relocation callback");
            }
            if (!r.text)
                break;
            free(used);
            used = r.text;
            cur = used;
            bool b2 = false;
            rc = try_snippet(d, f, c, cur, &o, &b2);
            if (rc != AGT_OK) {
                free(used);
                agti_buf_free(&fd);
                return rc;
            }
            if (o.h.total) {
                relocated = true;
                break;
            }
        }
        agti_buf_free(&fd);
    }
    const char *landed = o.file ? file_path(o.file) : canon;
    const char *reason = NULL;
    if (o.h.total == 0)
        reason = o.other_files > 1 ? "the snippet was found in several other files"
                 : f || c          ? "the snippet was not found in the file's hunks or content"
                 : path            ? "the path is not in the change set and the snippet was not "
                                     "found in any other file"
                                   : "the snippet was not found in the change set";
    emit(out, landed, path, &o, relocated, attempts, used, reason);
    free(used);
    return out->oom ? agti_oom() : AGT_OK;
}

int agt_diff_anchor(const agt_diff *d, const char *path, const char *code, char **out_json)
{
    if (!d || !code || !out_json)
        return agti_error(AGT_EINVAL, "agt_diff_anchor: %s is NULL",
                          !d      ? "d"
                          : !code ? "code"
                                  : "out_json");
    agti_buf b = AGTI_BUF_INIT;
    int rc = anchor_one(d, path, code, NULL, &b);
    if (rc != AGT_OK) {
        agti_buf_free(&b);
        return rc;
    }
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_json = s;
    return AGT_OK;
}

int agt_diff_anchor_batch(const agt_diff *d, const char *json, size_t len, char **out_json)
{
    if (!d || !json || !out_json)
        return agti_error(AGT_EINVAL, "agt_diff_anchor_batch: %s is NULL",
                          !d      ? "d"
                          : !json ? "json"
                                  : "out_json");
    json_t *arr = agti_json_parse(json, len, "anchor batch");
    if (!arr)
        return AGT_EPARSE;
    int rc = AGT_OK;
    if (!json_is_array(arr)) {
        json_decref(arr);
        return agti_error(AGT_EINVALID, "anchor batch: expected a JSON array of comments");
    }
    size_t n = json_array_size(arr);
    for (size_t i = 0; i < n && rc == AGT_OK; i++) {
        json_t *o = json_array_get(arr, i);
        json_t *code = json_is_object(o) ? json_object_get(o, "existing_code") : NULL;
        json_t *p = json_is_object(o) ? json_object_get(o, "path") : NULL;
        json_t *sug = json_is_object(o) ? json_object_get(o, "suggestion_code") : NULL;
        if (!json_is_object(o))
            rc = agti_error(AGT_EINVALID, "anchor batch: /%zu is not an object", i);
        else if (!json_is_string(code))
            rc = agti_error(AGT_EINVALID,
                            "anchor batch: /%zu/existing_code is missing or not "
                            "a string",
                            i);
        else if (p && !json_is_string(p) && !json_is_null(p))
            rc = agti_error(AGT_EINVALID, "anchor batch: /%zu/path is not a string", i);
        else if (sug && !json_is_string(sug) && !json_is_null(sug))
            rc = agti_error(AGT_EINVALID, "anchor batch: /%zu/suggestion_code is not a string", i);
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_putc(&b, '[');
    for (size_t i = 0; i < n && rc == AGT_OK; i++) {
        json_t *o = json_array_get(arr, i);
        json_t *p = json_object_get(o, "path");
        json_t *sug = json_object_get(o, "suggestion_code");
        if (i)
            agti_buf_putc(&b, ',');
        rc = anchor_one(d, json_is_string(p) ? json_string_value(p) : NULL,
                        json_string_value(json_object_get(o, "existing_code")),
                        json_is_string(sug) ? json_string_value(sug) : NULL, &b);
    }
    agti_buf_putc(&b, ']');
    json_decref(arr);
    if (rc != AGT_OK) {
        agti_buf_free(&b);
        return rc;
    }
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_json = s;
    return AGT_OK;
}
