/*
 * Change-set model: builder, accessors, post-change content, JSON export and
 * git-style rendering of files that were not parsed from text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff_internal.h"

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = ncap;
    return true;
}

int agti_diff_new(agt_diff **out)
{
    agt_diff *d = calloc(1, sizeof(*d));
    if (!d)
        return agti_oom();
    d->relocate_max = 2;
    atomic_init(&d->indexed, false);
    if (pthread_mutex_init(&d->index_lock, NULL) != 0) {
        free(d);
        return agti_error(AGT_ERROR, "diff: cannot create the index lock");
    }
    *out = d;
    return AGT_OK;
}

static void file_free(agti_diff_file *f)
{
    free(f->old_path);
    free(f->new_path);
    agti_line_index_free(&f->idx);
}

void agt_diff_free(agt_diff *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nfiles; i++)
        file_free(&d->files[i]);
    for (size_t i = 0; i < d->ncontents; i++)
        agti_diff_content_free(&d->contents[i]);
    for (size_t i = 0; i < d->nwarnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    free(d->files);
    free(d->hunks);
    free(d->lines);
    free(d->contents);
    agti_buf_free(&d->text);
    pthread_mutex_destroy(&d->index_lock);
    free(d);
}

int agti_diff_add_warning(agt_diff *d, const char *fmt, ...)
{
    va_list ap;
    agti_buf b = AGTI_BUF_INIT;
    va_start(ap, fmt);
    agti_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    char *s = agti_buf_detach(&b);
    char **w = s ? realloc(d->warnings, (d->nwarnings + 1) * sizeof(char *)) : NULL;
    if (!w) {
        free(s);
        return agti_oom();
    }
    d->warnings = w;
    d->warnings[d->nwarnings++] = s;
    d->best_effort = true;
    return AGT_OK;
}

int agti_diff_add_file(agt_diff *d, const char *old_path, const char *new_path, int status,
                       bool binary, uint32_t old_mode, uint32_t new_mode, int similarity)
{
    if (!grow((void **)&d->files, &d->cap_files, d->nfiles + 1, sizeof(agti_diff_file)))
        return agti_oom();
    agti_diff_file *f = &d->files[d->nfiles];
    memset(f, 0, sizeof(*f));
    f->old_path = old_path ? agti_strdup(old_path) : NULL;
    f->new_path = new_path ? agti_strdup(new_path) : NULL;
    if ((old_path && !f->old_path) || (new_path && !f->new_path)) {
        file_free(f);
        return agti_oom();
    }
    f->status = status;
    f->binary = binary;
    f->old_mode = old_mode;
    f->new_mode = new_mode;
    f->similarity = similarity;
    f->dissimilarity = -1;
    f->first_hunk = (uint32_t)d->nhunks;
    f->first_line = (uint32_t)d->nlines;
    d->nfiles++;
    atomic_store_explicit(&d->indexed, false, memory_order_relaxed);
    return AGT_OK;
}

int agti_diff_add_hunk(agt_diff *d, uint32_t old_start, uint32_t old_lines, uint32_t new_start,
                       uint32_t new_lines, const char *section, size_t section_len)
{
    if (d->nfiles == 0)
        return agti_error(AGT_ESTATE, "diff builder: hunk added before any file");
    if (section_len > UINT32_MAX)
        return agti_error(AGT_ELIMIT, "diff builder: hunk section too long");
    if (!grow((void **)&d->hunks, &d->cap_hunks, d->nhunks + 1, sizeof(agti_diff_hunk)))
        return agti_oom();
    agti_diff_hunk *h = &d->hunks[d->nhunks];
    h->old_start = old_start;
    h->old_lines = old_lines;
    h->new_start = new_start;
    h->new_lines = new_lines;
    h->section_off = d->text.len;
    h->section_len = (uint32_t)section_len;
    if (section_len)
        agti_buf_put(&d->text, section, section_len);
    if (d->text.oom)
        return agti_oom();
    h->first_line = (uint32_t)d->nlines;
    h->nlines = 0;
    /* a side of 0 lines names the line before: its first line is start + 1 */
    h->old_next = old_lines ? old_start : old_start + 1;
    h->new_next = new_lines ? new_start : new_start + 1;
    d->nhunks++;
    d->files[d->nfiles - 1].nhunks++;
    return AGT_OK;
}

int agti_diff_push_line(agt_diff *d, char origin, size_t off, size_t len)
{
    if (len >= UINT32_MAX || off >= UINT32_MAX - len)
        return agti_error(AGT_ELIMIT, "diff: text store exceeds 4 GiB");
    if (d->nlines >= d->cap_lines &&
        !grow((void **)&d->lines, &d->cap_lines, d->nlines + 1, sizeof(agti_diff_line)))
        return agti_oom();
    agti_diff_hunk *h = &d->hunks[d->nhunks - 1];
    agti_diff_file *f = &d->files[d->nfiles - 1];
    agti_diff_line *l = &d->lines[d->nlines];
    l->off = (uint32_t)off;
    l->len = (uint32_t)len;
    l->origin = origin;
    l->flags = 0;
    l->old_no = 0;
    l->new_no = 0;
    if (origin != '+')
        l->old_no = h->old_next++;
    if (origin != '-')
        l->new_no = h->new_next++;
    if (origin == '+')
        f->added++;
    else if (origin == '-')
        f->deleted++;
    h->nlines++;
    f->nlines++;
    d->nlines++;
    return AGT_OK;
}

int agti_diff_add_line(agt_diff *d, char origin, const char *text, size_t len, bool noeol)
{
    if (d->nhunks == 0 || d->nfiles == 0 || d->files[d->nfiles - 1].nhunks == 0)
        return agti_error(AGT_ESTATE, "diff builder: line added before any hunk");
    if (origin != ' ' && origin != '+' && origin != '-')
        return agti_error(AGT_EINVAL, "diff builder: line origin must be ' ', '+' or '-'");
    size_t off = d->text.len;
    agti_buf_put(&d->text, text, len);
    if (d->text.oom)
        return agti_oom();
    int rc = agti_diff_push_line(d, origin, off, len);
    if (rc == AGT_OK && noeol)
        d->lines[d->nlines - 1].flags |= AGTI_LINE_NOEOL;
    return rc;
}

/* ---- lookup ----------------------------------------------------------- */

static agti_diff_file *find_exact(const agt_diff *d, const char *path)
{
    for (size_t i = 0; i < d->nfiles; i++)
        if (d->files[i].new_path && strcmp(d->files[i].new_path, path) == 0)
            return &d->files[i];
    for (size_t i = 0; i < d->nfiles; i++)
        if (d->files[i].old_path && strcmp(d->files[i].old_path, path) == 0)
            return &d->files[i];
    return NULL;
}

static const char *strip_prefix(const char *path)
{
    if (strncmp(path, "./", 2) == 0 || strncmp(path, "a/", 2) == 0 || strncmp(path, "b/", 2) == 0)
        return path + 2;
    return NULL;
}

agti_diff_file *agti_diff_find_file(const agt_diff *d, const char *path)
{
    agti_diff_file *f = find_exact(d, path);
    const char *p = f ? NULL : strip_prefix(path);
    return f ? f : p ? find_exact(d, p) : NULL;
}

static const char *file_path(const agti_diff_file *f)
{
    return f->new_path ? f->new_path : f->old_path;
}

agti_diff_content *agti_diff_find_content(const agt_diff *d, const char *path)
{
    const agti_diff_file *f = agti_diff_find_file(d, path);
    const char *want = f ? file_path(f) : path;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < d->ncontents; i++)
            if (strcmp(d->contents[i].path, want) == 0)
                return &d->contents[i];
        if (f || !(want = strip_prefix(path)))
            break;
    }
    return NULL;
}

/* ---- content ---------------------------------------------------------- */

void agti_diff_content_free(agti_diff_content *c)
{
    free(c->path);
    free(c->text);
    free(c->line_off);
    agti_line_index_free(&c->idx);
    memset(c, 0, sizeof(*c));
}

static int content_fill(agti_diff_content *c, const char *text, size_t len)
{
    c->text = malloc(len + 1);
    if (!c->text)
        return agti_oom();
    if (len)
        memcpy(c->text, text, len);
    c->text[len] = '\0';
    c->len = len;
    size_t n = 0;
    for (const char *p = c->text, *e = c->text + len; p < e; n++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        p = nl ? nl + 1 : e;
    }
    if (n >= UINT32_MAX)
        return agti_error(AGT_ELIMIT, "content has too many lines");
    c->line_off = malloc((n ? n : 1) * sizeof(size_t));
    uint64_t *hashes = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!c->line_off || !hashes) {
        free(hashes);
        return agti_oom();
    }
    size_t i = 0;
    for (const char *p = c->text, *e = c->text + len; p < e; i++) {
        const char *nl = memchr(p, '\n', (size_t)(e - p));
        const char *end = nl ? nl : e;
        c->line_off[i] = (size_t)(p - c->text);
        hashes[i] = agti_line_hash(p, (size_t)(end - p));
        p = nl ? nl + 1 : e;
    }
    c->nlines = (uint32_t)n;
    int rc = agti_line_index_build(&c->idx, hashes, n);
    free(hashes);
    return rc;
}

int agt_diff_set_content(agt_diff *d, const char *path, const char *text, size_t len)
{
    if (!d || !path || !*path || (!text && len))
        return agti_error(AGT_EINVAL, "agt_diff_set_content: %s",
                          !d                ? "d is NULL"
                          : !path || !*path ? "path is NULL or empty"
                                            : "text is NULL with a non-zero length");
    if (len >= UINT32_MAX)
        return agti_error(AGT_ELIMIT, "agt_diff_set_content: content of '%s' exceeds 4 GiB", path);
    const agti_diff_file *f = agti_diff_find_file(d, path);
    const char *canon = f ? file_path(f) : path;
    agti_diff_content c = {0};
    c.path = agti_strdup(canon);
    if (!c.path)
        return agti_oom();
    int rc = content_fill(&c, text ? text : "", len);
    if (rc != AGT_OK) {
        agti_diff_content_free(&c);
        return rc;
    }
    agti_diff_file *fm = (agti_diff_file *)f;
    for (size_t i = 0; i < d->ncontents; i++) {
        if (strcmp(d->contents[i].path, canon) == 0) {
            agti_diff_content_free(&d->contents[i]);
            d->contents[i] = c;
            if (fm)
                fm->content_ix1 = (uint32_t)i + 1;
            return AGT_OK;
        }
    }
    if (!grow((void **)&d->contents, &d->cap_contents, d->ncontents + 1,
              sizeof(agti_diff_content))) {
        agti_diff_content_free(&c);
        return agti_oom();
    }
    d->contents[d->ncontents++] = c;
    if (fm)
        fm->content_ix1 = (uint32_t)d->ncontents;
    return AGT_OK;
}

int agt_diff_content(const agt_diff *d, const char *path, const char **out_text, size_t *out_len)
{
    if (!d || !path || !out_text)
        return agti_error(AGT_EINVAL, "agt_diff_content: %s is NULL",
                          !d      ? "d"
                          : !path ? "path"
                                  : "out_text");
    const agti_diff_content *c = agti_diff_find_content(d, path);
    if (!c)
        return agti_error(AGT_ENOTFOUND, "no post-change content was set for '%s'", path);
    *out_text = c->text;
    if (out_len)
        *out_len = c->len;
    return AGT_OK;
}

/* ---- accessors -------------------------------------------------------- */

size_t agt_diff_file_count(const agt_diff *d)
{
    return d ? d->nfiles : 0;
}

const char *agt_diff_file_path(const agt_diff *d, size_t i)
{
    return d && i < d->nfiles ? file_path(&d->files[i]) : NULL;
}

const char *agt_diff_file_old_path(const agt_diff *d, size_t i)
{
    return d && i < d->nfiles ? d->files[i].old_path : NULL;
}

const char *agt_diff_file_new_path(const agt_diff *d, size_t i)
{
    return d && i < d->nfiles ? d->files[i].new_path : NULL;
}

int agt_diff_file_status(const agt_diff *d, size_t i)
{
    if (!d || i >= d->nfiles)
        return agti_error(AGT_EINVAL, "agt_diff_file_status: %s",
                          !d ? "d is NULL" : "file index out of range");
    return d->files[i].status;
}

int agt_diff_file_is_binary(const agt_diff *d, size_t i)
{
    if (!d || i >= d->nfiles)
        return agti_error(AGT_EINVAL, "agt_diff_file_is_binary: %s",
                          !d ? "d is NULL" : "file index out of range");
    return d->files[i].binary ? 1 : 0;
}

int agt_diff_file_index(const agt_diff *d, const char *path, size_t *out_index)
{
    if (!d || !path)
        return agti_error(AGT_EINVAL, "agt_diff_file_index: %s is NULL", !d ? "d" : "path");
    const agti_diff_file *f = agti_diff_find_file(d, path);
    if (!f)
        return agti_error(AGT_ENOTFOUND, "'%s' is not in the change set", path);
    if (out_index)
        *out_index = (size_t)(f - d->files);
    return AGT_OK;
}

/* ---- rendering -------------------------------------------------------- */

static void put_quoted_path(agti_buf *b, const char *prefix, const char *path)
{
    bool quote = false;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p < 0x20 || *p >= 0x7f || *p == '"' || *p == '\\')
            quote = true;
    if (!quote) {
        agti_buf_puts(b, prefix);
        agti_buf_puts(b, path);
        return;
    }
    agti_buf_putc(b, '"');
    agti_buf_puts(b, prefix);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        switch (*p) {
        case '"':
            agti_buf_puts(b, "\\\"");
            break;
        case '\\':
            agti_buf_puts(b, "\\\\");
            break;
        case '\t':
            agti_buf_puts(b, "\\t");
            break;
        case '\n':
            agti_buf_puts(b, "\\n");
            break;
        default:
            if (*p < 0x20 || *p >= 0x7f)
                agti_buf_printf(b, "\\%03o", (unsigned)*p);
            else
                agti_buf_putc(b, (char)*p);
        }
    }
    agti_buf_putc(b, '"');
}

/* One side's path in a header line: the prefixed path, or /dev/null when the
 * file does not exist on that side. */
static void put_side_path(agti_buf *b, const char *prefix, const char *path)
{
    if (path != NULL)
        put_quoted_path(b, prefix, path);
    else
        agti_buf_puts(b, "/dev/null");
}

static void render_file(const agt_diff *d, const agti_diff_file *f, agti_buf *b)
{
    const char *op = f->old_path ? f->old_path : f->new_path;
    const char *np = f->new_path ? f->new_path : f->old_path;
    agti_buf_puts(b, "diff --git ");
    put_quoted_path(b, "a/", op);
    agti_buf_putc(b, ' ');
    put_quoted_path(b, "b/", np);
    agti_buf_putc(b, '\n');
    if (f->status == AGT_DIFF_ADDED)
        agti_buf_printf(b, "new file mode %06o\n", f->new_mode ? f->new_mode : 0100644u);
    else if (f->status == AGT_DIFF_DELETED)
        agti_buf_printf(b, "deleted file mode %06o\n", f->old_mode ? f->old_mode : 0100644u);
    else if (f->old_mode && f->new_mode && f->old_mode != f->new_mode)
        agti_buf_printf(b, "old mode %06o\nnew mode %06o\n", f->old_mode, f->new_mode);
    if (f->status == AGT_DIFF_RENAMED || f->status == AGT_DIFF_COPIED) {
        const char *verb = f->status == AGT_DIFF_RENAMED ? "rename" : "copy";
        if (f->similarity >= 0)
            agti_buf_printf(b, "similarity index %d%%\n", f->similarity);
        agti_buf_printf(b, "%s from ", verb);
        put_quoted_path(b, "", op);
        agti_buf_printf(b, "\n%s to ", verb);
        put_quoted_path(b, "", np);
        agti_buf_putc(b, '\n');
    }
    if (f->binary) {
        agti_buf_puts(b, "Binary files ");
        put_side_path(b, "a/", f->old_path);
        agti_buf_puts(b, " and ");
        put_side_path(b, "b/", f->new_path);
        agti_buf_puts(b, " differ\n");
        return;
    }
    if (f->nhunks == 0)
        return;
    agti_buf_puts(b, "--- ");
    put_side_path(b, "a/", f->old_path);
    agti_buf_puts(b, "\n+++ ");
    put_side_path(b, "b/", f->new_path);
    agti_buf_putc(b, '\n');
    for (uint32_t hi = 0; hi < f->nhunks; hi++) {
        const agti_diff_hunk *h = &d->hunks[f->first_hunk + hi];
        agti_buf_printf(b, "@@ -%u", h->old_start);
        if (h->old_lines != 1)
            agti_buf_printf(b, ",%u", h->old_lines);
        agti_buf_printf(b, " +%u", h->new_start);
        if (h->new_lines != 1)
            agti_buf_printf(b, ",%u", h->new_lines);
        agti_buf_puts(b, " @@");
        if (h->section_len) {
            agti_buf_putc(b, ' ');
            agti_buf_put(b, d->text.ptr + h->section_off, h->section_len);
        }
        agti_buf_putc(b, '\n');
        for (uint32_t li = 0; li < h->nlines; li++) {
            const agti_diff_line *l = &d->lines[h->first_line + li];
            agti_buf_putc(b, l->origin);
            agti_buf_put(b, d->text.ptr + l->off, l->len);
            agti_buf_putc(b, '\n');
            if (l->flags & AGTI_LINE_NOEOL)
                agti_buf_puts(b, "\\ No newline at end of file\n");
        }
    }
}

void agti_diff_file_render(const agt_diff *d, const agti_diff_file *f, agti_buf *b)
{
    if (f->raw)
        agti_buf_put(b, d->text.ptr + f->raw_start, f->raw_end - f->raw_start);
    else
        render_file(d, f, b);
}

int agt_diff_file_text(const agt_diff *d, const char *path, char **out_text)
{
    if (!d || !path || !out_text)
        return agti_error(AGT_EINVAL, "agt_diff_file_text: %s is NULL",
                          !d      ? "d"
                          : !path ? "path"
                                  : "out_text");
    const agti_diff_file *f = agti_diff_find_file(d, path);
    if (!f)
        return agti_error(AGT_ENOTFOUND, "'%s' is not in the change set", path);
    agti_buf b = AGTI_BUF_INIT;
    agti_diff_file_render(d, f, &b);
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_text = s;
    return AGT_OK;
}

/* ---- JSON ------------------------------------------------------------- */

void agti_diff_json_string(agti_buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    agti_buf_putc(b, '"');
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        while (run < len) {
            unsigned char c = (unsigned char)s[run];
            if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80)
                break;
            run++;
        }
        if (run > i) {
            agti_buf_put(b, s + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            uint32_t cp;
            size_t n = agti_utf8_decode((const unsigned char *)s + i, len - i, &cp);
            if (n == 0) {
                agti_buf_puts(b, "\\ufffd");
                i++;
            } else {
                agti_buf_put(b, s + i, n);
                i += n;
            }
            continue;
        }
        switch (c) {
        case '"':
            agti_buf_puts(b, "\\\"");
            break;
        case '\\':
            agti_buf_puts(b, "\\\\");
            break;
        case '\n':
            agti_buf_puts(b, "\\n");
            break;
        case '\r':
            agti_buf_puts(b, "\\r");
            break;
        case '\t':
            agti_buf_puts(b, "\\t");
            break;
        default: {
            char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            agti_buf_puts(b, e);
        }
        }
        i++;
    }
    agti_buf_putc(b, '"');
}

static void json_path(agti_buf *b, const char *p)
{
    if (p)
        agti_diff_json_string(b, p, strlen(p));
    else
        agti_buf_puts(b, "null");
}

static const char *status_name(int st)
{
    switch (st) {
    case AGT_DIFF_ADDED:
        return "added";
    case AGT_DIFF_DELETED:
        return "deleted";
    case AGT_DIFF_RENAMED:
        return "renamed";
    case AGT_DIFF_COPIED:
        return "copied";
    default:
        return "modified";
    }
}

static void json_mode(agti_buf *b, uint32_t m)
{
    if (m)
        agti_buf_printf(b, "\"%06o\"", m);
    else
        agti_buf_puts(b, "null");
}

static void json_int_or_null(agti_buf *b, int v)
{
    if (v >= 0)
        agti_buf_printf(b, "%d", v);
    else
        agti_buf_puts(b, "null");
}

int agt_diff_to_json(const agt_diff *d, char **out_json)
{
    if (!d || !out_json)
        return agti_error(AGT_EINVAL, "agt_diff_to_json: %s is NULL", !d ? "d" : "out_json");
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, "{\"files\":[");
    for (size_t i = 0; i < d->nfiles; i++) {
        const agti_diff_file *f = &d->files[i];
        if (i)
            agti_buf_putc(&b, ',');
        agti_buf_puts(&b, "{\"old_path\":");
        json_path(&b, f->old_path);
        agti_buf_puts(&b, ",\"new_path\":");
        json_path(&b, f->new_path);
        agti_buf_printf(&b,
                        ",\"status\":\"%s\",\"binary\":%s,\"old_mode\":", status_name(f->status),
                        f->binary ? "true" : "false");
        json_mode(&b, f->old_mode);
        agti_buf_puts(&b, ",\"new_mode\":");
        json_mode(&b, f->new_mode);
        agti_buf_puts(&b, ",\"similarity\":");
        json_int_or_null(&b, f->similarity);
        agti_buf_puts(&b, ",\"dissimilarity\":");
        json_int_or_null(&b, f->dissimilarity);
        agti_buf_puts(&b, ",\"hunks\":[");
        for (uint32_t hi = 0; hi < f->nhunks; hi++) {
            const agti_diff_hunk *h = &d->hunks[f->first_hunk + hi];
            agti_buf_printf(&b,
                            "%s{\"old_start\":%u,\"old_lines\":%u,\"new_start\":%u,"
                            "\"new_lines\":%u,\"section\":",
                            hi ? "," : "", h->old_start, h->old_lines, h->new_start, h->new_lines);
            agti_diff_json_string(&b, d->text.ptr ? d->text.ptr + h->section_off : "",
                                  h->section_len);
            agti_buf_putc(&b, '}');
        }
        agti_buf_printf(&b, "],\"added\":%u,\"deleted\":%u}", f->added, f->deleted);
    }
    agti_buf_printf(&b, "],\"best_effort\":%s,\"warnings\":[", d->best_effort ? "true" : "false");
    for (size_t i = 0; i < d->nwarnings; i++) {
        if (i)
            agti_buf_putc(&b, ',');
        agti_diff_json_string(&b, d->warnings[i], strlen(d->warnings[i]));
    }
    agti_buf_puts(&b, "]}");
    char *s = agti_buf_detach(&b);
    if (!s)
        return agti_oom();
    *out_json = s;
    return AGT_OK;
}

int agt_diff_set_relocator(agt_diff *d, agt_diff_relocate_fn fn, int max_attempts, void *payload)
{
    if (!d)
        return agti_error(AGT_EINVAL, "agt_diff_set_relocator: d is NULL");
    if (max_attempts < 1 || max_attempts > 10)
        return agti_error(AGT_EINVAL, "agt_diff_set_relocator: max_attempts %d is not in 1..10",
                          max_attempts);
    d->relocate = fn;
    d->relocate_max = max_attempts;
    d->relocate_payload = payload;
    return AGT_OK;
}
