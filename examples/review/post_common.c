/*
 * agt-review --post, the parts GitHub and GitLab share: the pull request's
 * diff hunks line by line (what the APIs accept comments on), the hidden
 * markers that make re-runs idempotent, comment bodies and the sticky
 * summary.
 */
#include "post.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_util.h"

static const char comment_marker[] = "<!-- agt-review:comment ";
static const char summary_marker[] = "<!-- agt-review:summary head=";

int rv_severity_rank(const char *sev)
{
    if (sev == NULL)
        return 2;
    if (strcmp(sev, "critical") == 0)
        return 4;
    if (strcmp(sev, "high") == 0)
        return 3;
    if (strcmp(sev, "low") == 0)
        return 1;
    return 2;
}

static const char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s != NULL ? s : "";
}

/* ---- the diff of the pull request ---- */

static int parse_range(const char *p, long *start, long *count)
{
    char *end = NULL;
    *start = strtol(p, &end, 10);
    *count = 1;
    if (end == p)
        return -1;
    if (*end == ',')
        *count = strtol(end + 1, &end, 10);
    return 0;
}

/* Parses one file's unified diff text into hunks with their lines. */
static int parse_file_diff(rv_pfile *f, const char *text)
{
    const char *p = text;
    rv_phunk *cur = NULL;
    long o = 0, n = 0;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (len > 3 && strncmp(p, "@@ -", 4) == 0) {
            rv_phunk *h = realloc(f->h, (f->n + 1) * sizeof *h);
            if (h == NULL)
                return -1;
            f->h = h;
            cur = &f->h[f->n++];
            memset(cur, 0, sizeof *cur);
            const char *plus = strstr(p, " +");
            if (parse_range(p + 4, &cur->os, &cur->ol) != 0 || plus == NULL ||
                parse_range(plus + 2, &cur->ns, &cur->nl) != 0)
                return -1;
            o = cur->os;
            n = cur->ns;
        } else if (cur != NULL && len > 0 && (p[0] == '+' || p[0] == '-' || p[0] == ' ')) {
            rv_pline *ls = realloc(cur->lines, (cur->n + 1) * sizeof *ls);
            if (ls == NULL)
                return -1;
            cur->lines = ls;
            rv_pline *l = &cur->lines[cur->n++];
            l->t = p[0];
            l->o = p[0] == '+' ? 0 : o++;
            l->n = p[0] == '-' ? 0 : n++;
        } else if (cur != NULL && len == 0) {
            /* an empty context line whose space was stripped */
            rv_pline *ls = realloc(cur->lines, (cur->n + 1) * sizeof *ls);
            if (ls == NULL)
                return -1;
            cur->lines = ls;
            rv_pline *l = &cur->lines[cur->n++];
            l->t = ' ';
            l->o = o++;
            l->n = n++;
        }
        p += len + (nl != NULL);
    }
    return 0;
}

int rv_prdiff_open(rv_prdiff *d, const char *repo, const char *base, const char *head, char *err,
                   size_t errlen)
{
    agt_changes *ch = NULL;
    memset(d, 0, sizeof *d);
    if (agt_changes_open(&ch, repo, AGT_CHANGES_RANGE, base, head) != AGT_OK) {
        snprintf(err, errlen, "cannot open the pull request's diff %.64s...%.64s: %s", base, head,
                 agt_error_message());
        return -1;
    }
    agt_diff *diff = agt_changes_diff(ch);
    size_t n = agt_diff_file_count(diff);
    d->f = calloc(n + 1, sizeof *d->f);
    if (d->f == NULL)
        goto oom;
    for (size_t i = 0; i < n; i++) {
        rv_pfile *f = &d->f[d->n++];
        const char *op = agt_diff_file_old_path(diff, i);
        f->path = strdup(agt_diff_file_path(diff, i));
        f->old_path = op != NULL ? strdup(op) : NULL;
        char *text = NULL;
        if (f->path == NULL || agt_diff_file_text(diff, f->path, &text) != AGT_OK)
            goto oom;
        int rc = parse_file_diff(f, text);
        agt_free(text);
        if (rc != 0)
            goto oom;
    }
    agt_changes_free(ch);
    return 0;
oom:
    snprintf(err, errlen, "cannot read the pull request's diff: %s",
             agt_error_message()[0] ? agt_error_message() : "out of memory");
    agt_changes_free(ch);
    rv_prdiff_free(d);
    return -1;
}

void rv_prdiff_free(rv_prdiff *d)
{
    for (size_t i = 0; i < d->n; i++) {
        for (size_t k = 0; k < d->f[i].n; k++)
            free(d->f[i].h[k].lines);
        free(d->f[i].h);
        free(d->f[i].path);
        free(d->f[i].old_path);
    }
    free(d->f);
    memset(d, 0, sizeof *d);
}

const rv_pfile *rv_prdiff_file(const rv_prdiff *d, const char *path)
{
    for (size_t i = 0; path != NULL && i < d->n; i++)
        if (strcmp(d->f[i].path, path) == 0)
            return &d->f[i];
    return NULL;
}

const rv_pline *rv_phunk_line(const rv_phunk *h, int old, long line)
{
    for (size_t k = 0; k < h->n; k++)
        if ((old ? h->lines[k].o : h->lines[k].n) == line)
            return &h->lines[k];
    return NULL;
}

/* The hunk holding lines a..b on one side, or NULL. */
static const rv_phunk *hunk_of(const rv_pfile *f, int old, long a, long b)
{
    for (size_t k = 0; f != NULL && k < f->n; k++)
        if (rv_phunk_line(&f->h[k], old, a) != NULL && rv_phunk_line(&f->h[k], old, b) != NULL)
            return &f->h[k];
    return NULL;
}

/* ---- markers ---- */

/* FNV-1a, 64 bits. */
static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/*
 * The anchor hash: path, side and the quoted code with each line trimmed of
 * white space and a leading diff marker, blank lines left out. It does not
 * depend on line numbers, so a comment keeps its key when lines above it
 * move.
 */
static uint64_t anchor_hash(const char *path, int old, const char *code)
{
    uint64_t h = 14695981039346656037ULL;
    h = fnv(h, path, strlen(path) + 1);
    h = fnv(h, old ? "old" : "new", 4);
    const char *p = code != NULL ? code : "";
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        const char *s = p, *e = p + len;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if (s < e && (*s == '+' || *s == '-') && s == p)
            s++;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        if (e > s) {
            h = fnv(h, s, (size_t)(e - s));
            h = fnv(h, "\n", 1);
        }
        p += len + (nl != NULL);
    }
    return h;
}

void rv_marker(const rv_item *it, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s -->", comment_marker, it->key);
}

void rv_collect_markers(json_t *seen, const char *body)
{
    const char *p = body;
    while (p != NULL && (p = strstr(p, comment_marker)) != NULL) {
        p += sizeof comment_marker - 1;
        const char *e = strstr(p, " -->");
        if (e == NULL || (size_t)(e - p) >= 96)
            break;
        char key[96];
        memcpy(key, p, (size_t)(e - p));
        key[e - p] = '\0';
        json_object_set_new(seen, key, json_true());
        p = e;
    }
}

int rv_summary_head(const char *body, char *head, size_t len)
{
    const char *p = body != NULL ? strstr(body, summary_marker) : NULL;
    if (p == NULL)
        return 0;
    p += sizeof summary_marker - 1;
    size_t n = strspn(p, "0123456789abcdef");
    if (n + 1 > len)
        n = len - 1;
    memcpy(head, p, n);
    head[n] = '\0';
    return 1;
}

/* ---- items ---- */

void rv_comment_key(json_t *c, const char *path, char *buf, size_t len)
{
    int old = strcmp(jstr(c, "side"), "old") == 0;
    const char *cat = jstr(c, "category")[0] != '\0' ? jstr(c, "category") : "other";
    snprintf(buf, len, "anchor=%016llx rule=%.40s",
             (unsigned long long)anchor_hash(path, old, jstr(c, "existing_code")), cat);
}

int rv_items(const rv_set *set, const rv_opts *o, const rv_prdiff *d, rv_item **out, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < set->n_files; i++)
        total += set->files[i].skip == NULL ? json_array_size(set->files[i].comments) : 0;
    rv_item *items = calloc(total + 1, sizeof *items);
    if (items == NULL)
        return -1;
    size_t k = 0;
    int min = o->min_severity != NULL ? rv_severity_rank(o->min_severity) : 0;
    for (size_t i = 0; i < set->n_files; i++) {
        const rv_file *f = &set->files[i];
        for (size_t j = 0; f->skip == NULL && j < json_array_size(f->comments); j++) {
            json_t *c = json_array_get(f->comments, j);
            const char *sev = json_string_value(json_object_get(c, "severity"));
            if (rv_severity_rank(sev) < min)
                continue;
            rv_item *it = &items[k++];
            it->c = c;
            it->path = jstr(c, "path")[0] != '\0' ? jstr(c, "path") : f->path;
            it->old_path = f->old_path;
            it->old = strcmp(jstr(c, "side"), "old") == 0;
            it->a = (long)json_integer_value(json_object_get(c, "start_line"));
            it->b = (long)json_integer_value(json_object_get(c, "end_line"));
            if (it->b < it->a)
                it->b = it->a;
            const rv_pfile *pf = d != NULL ? rv_prdiff_file(d, it->path) : NULL;
            it->h = it->a > 0 ? hunk_of(pf, it->old, it->a, it->b) : NULL;
            it->suggest = it->h != NULL && !it->old && jstr(c, "suggestion_code")[0] != '\0';
            rv_comment_key(c, it->path, it->key, sizeof it->key);
        }
    }
    *out = items;
    *n = k;
    return 0;
}

/* ---- bodies ---- */

typedef cli_buf rv_md;

static void md_printf(rv_md *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void md_printf(rv_md *m, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cli_buf_puts(m, buf);
}

static char *md_done(rv_md *m)
{
    if (m->oom) {
        free(m->p);
        return NULL;
    }
    return m->p != NULL ? m->p : strdup("");
}

/* A fence longer than any run of backticks in the code. */
static void fence_for(const char *code, char *buf, size_t len)
{
    size_t run = 0, best = 0;
    for (const char *p = code; *p != '\0'; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    size_t n = best >= 3 ? best + 1 : 3;
    if (n >= len)
        n = len - 1;
    memset(buf, '`', n);
    buf[n] = '\0';
}

static void put_code(rv_md *m, const char *code)
{
    cli_buf_puts(m, code);
    size_t n = strlen(code);
    if (n == 0 || code[n - 1] != '\n')
        cli_buf_puts(m, "\n");
}

static void headline(rv_md *m, json_t *c)
{
    const char *sev = jstr(c, "severity"), *cat = jstr(c, "category");
    if (sev[0] != '\0')
        md_printf(m, "**%c%s**", sev[0] - 'a' + 'A', sev + 1);
    if (cat[0] != '\0')
        md_printf(m, "%s%s", sev[0] != '\0' ? " · " : "", cat);
    if (sev[0] != '\0' || cat[0] != '\0')
        cli_buf_puts(m, "\n\n");
}

char *rv_comment_body(const rv_item *it, int gitlab, long gitlab_above)
{
    rv_md m = {0};
    headline(&m, it->c);
    cli_buf_puts(&m, jstr(it->c, "content"));
    cli_buf_puts(&m, "\n");
    const char *sug = jstr(it->c, "suggestion_code");
    if (sug[0] != '\0') {
        char fence[32];
        fence_for(sug, fence, sizeof fence);
        if (it->suggest && gitlab)
            md_printf(&m, "\n%ssuggestion:-%ld+0\n", fence, gitlab_above);
        else if (it->suggest)
            md_printf(&m, "\n%ssuggestion\n", fence);
        else
            md_printf(&m, "\nSuggested code:\n\n%s\n", fence);
        put_code(&m, sug);
        md_printf(&m, "%s\n", fence);
    }
    char mk[160];
    rv_marker(it, mk, sizeof mk);
    md_printf(&m, "\n%s", mk);
    return md_done(&m);
}

char *rv_offdiff_text(const rv_item *it)
{
    rv_md m = {0};
    json_t *cands = json_object_get(it->c, "candidates");
    md_printf(&m, "**%s", it->path);
    if (it->a > 0 && it->b > it->a)
        md_printf(&m, ":%ld-%ld", it->a, it->b);
    else if (it->a > 0)
        md_printf(&m, ":%ld", it->a);
    cli_buf_puts(&m, "**");
    if (it->a > 0 && it->old)
        cli_buf_puts(&m, " (old side)");
    if (it->a > 0)
        cli_buf_puts(&m, " (outside the diff)");
    else if (json_is_true(json_object_get(it->c, "ambiguous")) && json_array_size(cands) > 0) {
        cli_buf_puts(&m, " (the quoted code matches lines");
        for (size_t k = 0; k < json_array_size(cands); k++) {
            json_t *p = json_array_get(cands, k);
            long a = (long)json_integer_value(json_array_get(p, 0));
            long b = (long)json_integer_value(json_array_get(p, 1));
            if (a == b)
                md_printf(&m, "%s %ld", k > 0 ? "," : "", a);
            else
                md_printf(&m, "%s %ld-%ld", k > 0 ? "," : "", a, b);
        }
        cli_buf_puts(&m, ")");
    } else {
        cli_buf_puts(&m, " (file level)");
    }
    cli_buf_puts(&m, "\n\n");
    rv_item copy = *it;
    copy.suggest = 0;
    char *rest = rv_comment_body(&copy, 0, 0);
    if (rest != NULL)
        cli_buf_puts(&m, rest);
    else
        m.oom = 1;
    free(rest);
    return md_done(&m);
}

char *rv_summary_body(const rv_set *set, const rv_post *p, const rv_item *items, size_t n,
                      size_t posted_inline, size_t posted_body, size_t dups)
{
    static const char *const sevs[] = {"critical", "high", "medium", "low"};
    rv_md m = {0};
    size_t reviewed = 0;
    for (size_t i = 0; i < set->n_files; i++)
        reviewed += set->files[i].skip == NULL;
    md_printf(&m, "%s%s -->\n## agt-review\n\n", summary_marker, p->head);
    md_printf(&m, "Reviewed up to `%.12s`", p->head);
    if (p->reviewed_from[0] != '\0')
        md_printf(&m, " (the commits since `%.12s`)", p->reviewed_from);
    md_printf(&m, ": %zu file%s reviewed, %zu skipped.\n\n", reviewed, reviewed == 1 ? "" : "s",
              set->n_files - reviewed);
    cli_buf_puts(&m, "| severity | comments |\n|---|---|\n");
    for (size_t s = 0; s < 4; s++) {
        size_t count = 0;
        for (size_t k = 0; k < n; k++) {
            const char *sev = json_string_value(json_object_get(items[k].c, "severity"));
            count += rv_severity_rank(sev) == 4 - (int)s;
        }
        md_printf(&m, "| %s | %zu |\n", sevs[s], count);
    }
    md_printf(&m,
              "\nThis run: %zu new comment%s (%zu on lines of the diff, %zu not on a line), %zu "
              "already posted.\n",
              posted_inline + posted_body, posted_inline + posted_body == 1 ? "" : "s",
              posted_inline, posted_body, dups);
    return md_done(&m);
}

/* ---- dispatch ---- */

int rv_post_prepare(rv_post *p, rv_opts *o, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->kind = o->post;
    p->seen = json_object();
    const char *log = getenv("AGT_REVIEW_HTTP_LOG");
    if (log != NULL && log[0] != '\0')
        p->http.log = fopen(log, "a");
    int rc = strcmp(o->post, "github") == 0 ? rv_github_prepare(p, o, err, errlen)
                                            : rv_gitlab_prepare(p, o, err, errlen);
    if (rc != 0)
        return -1;
    if (o->from == NULL && o->commit == NULL) {
        /* the pull request's change, or with --incremental what is new */
        const char *from = p->base;
        if (o->incremental && p->last_head[0] != '\0') {
            if (strcmp(p->last_head, p->head) == 0) {
                p->nothing_new = 1;
            } else {
                agt_changes *probe = NULL;
                if (agt_changes_open(&probe, o->repo, AGT_CHANGES_RANGE, p->last_head, p->head) ==
                    AGT_OK) {
                    from = p->last_head;
                    snprintf(p->reviewed_from, sizeof p->reviewed_from, "%s", p->last_head);
                } else {
                    fprintf(stderr,
                            "agt-review: --incremental: the last reviewed head %.12s is not in "
                            "this clone (%s); reviewing the whole change\n",
                            p->last_head, agt_error_message());
                }
                agt_changes_free(probe);
            }
        }
        o->from_owned = strdup(from);
        o->to_owned = strdup(p->head);
        o->from = o->from_owned;
        o->to = o->to_owned;
        o->mode = AGT_CHANGES_RANGE;
    }
    return 0;
}

int rv_post_publish(rv_post *p, const rv_set *set, const rv_opts *o, char *err, size_t errlen)
{
    rv_prdiff d;
    if (rv_prdiff_open(&d, o->repo, p->base, p->head, err, errlen) != 0)
        return -1;
    rv_item *items = NULL;
    size_t n = 0;
    int rc = -1;
    if (rv_items(set, o, &d, &items, &n) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < n; k++)
        items[k].dup = json_object_get(p->seen, items[k].key) != NULL;
    rc = strcmp(p->kind, "github") == 0 ? rv_github_publish(p, set, o, items, n, err, errlen)
                                        : rv_gitlab_publish(p, set, o, items, n, err, errlen);
out:
    free(items);
    rv_prdiff_free(&d);
    return rc;
}

void rv_post_free(rv_post *p)
{
    json_decref(p->seen);
    if (p->http.log != NULL)
        fclose(p->http.log);
    memset(p, 0, sizeof *p);
}
