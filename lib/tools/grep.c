/* Grep: PCRE2 search over the workspace (lib/search), rendered like ripgrep
 * and paged by entries (paths, lines or counts) with offset and head_limit. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "session/fs_settings.h"
#include "session/session_internal.h"
#include "search/search.h"
#include "tools_internal.h"
#include "ws.h"

/* A Grep call stops starting new files after this long and says so. */
#define GREP_TIME_BUDGET_MS 20000
/* Bytes of line text kept when head_limit is 0 (no entry limit). */
#define GREP_MAX_OUTPUT_BYTES (4u << 20)

typedef struct grep_args {
    const char *pattern, *glob, *type;
    int mode;
    bool icase, numbers, multiline, include_ignored;
    unsigned before, after;
    size_t offset, limit; /* limit 0: none */
} grep_args;

static unsigned uint_arg(json_t *args, const char *key, unsigned dflt)
{
    json_t *v = json_object_get(args, key);
    if (!json_is_integer(v))
        return dflt;
    json_int_t i = json_integer_value(v);
    return i < 0 ? 0u : i > 1000000 ? 1000000u : (unsigned)i;
}

static int parse_args(agt_call *call, grep_args *a)
{
    json_t *args = agti_call_args_json(call);
    memset(a, 0, sizeof *a);
    a->pattern = json_string_value(json_object_get(args, "pattern"));
    a->glob = json_string_value(json_object_get(args, "glob"));
    a->type = json_string_value(json_object_get(args, "type"));
    const char *mode = json_string_value(json_object_get(args, "output_mode"));
    if (a->pattern == NULL || a->pattern[0] == '\0')
        return agti_tool_fail(call, AGT_EINVAL, "Grep needs a non-empty \"pattern\".");
    if (mode == NULL || strcmp(mode, "files_with_matches") == 0)
        a->mode = AGTI_SEARCH_FILES;
    else if (strcmp(mode, "content") == 0)
        a->mode = AGTI_SEARCH_CONTENT;
    else if (strcmp(mode, "count_matches") == 0)
        a->mode = AGTI_SEARCH_COUNT;
    else
        return agti_tool_fail(call, AGT_EINVAL,
                              "output_mode must be files_with_matches, content or count_matches, "
                              "not '%s'.",
                              mode);
    a->icase = json_is_true(json_object_get(args, "-i"));
    a->numbers = !json_is_false(json_object_get(args, "-n"));
    a->multiline = json_is_true(json_object_get(args, "multiline"));
    a->include_ignored = json_is_true(json_object_get(args, "include_ignored"));
    unsigned c = uint_arg(args, "-C", 0);
    a->before = uint_arg(args, "-B", c);
    a->after = uint_arg(args, "-A", c);
    json_t *off = json_object_get(args, "offset");
    json_t *lim = json_object_get(args, "head_limit");
    a->offset =
        json_is_integer(off) && json_integer_value(off) > 0 ? (size_t)json_integer_value(off) : 0;
    a->limit = json_is_integer(lim)
                   ? (json_integer_value(lim) > 0 ? (size_t)json_integer_value(lim) : 0)
                   : (size_t)agti_session_file_limit(
                         agt_call_session(call), AGT_FILE_LIMIT_GREP_HEAD, AGTI_GREP_DEFAULT_HEAD);
    return AGT_OK;
}

/* Pages entries: skip `offset`, keep `limit` (0: all), count the rest. */
typedef struct pager {
    size_t offset, limit, seen, shown;
} pager;

static bool page_take(pager *p)
{
    size_t i = p->seen++;
    if (i < p->offset || (p->limit != 0 && i >= p->offset + p->limit))
        return false;
    p->shown++;
    return true;
}

/* prefix is a display path (escaped already); path a raw relative one. */
static void put_path(agti_buf *b, const char *prefix, const char *path)
{
    if (prefix != NULL)
        agti_buf_printf(b, "%s/", prefix);
    agti_ws_put_name(b, path, strlen(path));
}

/* Whether the file at path, or the lines shown of it, hold a private key:
 * the lines kept, then the file's first 16 KiB (a key file not named like
 * one; a key block further down shows in the lines when it matches). */
static bool key_inside(const char *path, const agti_search_file *f)
{
    for (size_t j = 0; j < f->nlines; j++)
        if (agti_sensitive_content(f->lines[j].text, f->lines[j].len, NULL))
            return true;
    char head[16384];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* what the search read */
    if (fd < 0)
        return false;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n > 0 && agti_sensitive_content(head, (size_t)n, NULL);
}

/* What a Grep call has rendered so far: the engine hands over the files
 * with matches in path order (agti_search_tree_sink) and each is judged
 * and rendered at once, so the results are never held twice (as files and
 * as text). files_with_matches lists newest first: its files (paths only)
 * are kept and rendered at the end. */
typedef struct grep_out {
    const grep_args *a;
    const char *prefix; /* display path of the searched folder (NULL: the root) */
    const char *single; /* display path of the searched file (NULL: a folder) */
    const char *dir;    /* absolute path of the searched folder, or of the file */
    const struct agti_sensitive *pol;
    agti_linkset links; /* hard links to the workspace's sensitive files */
    agti_buf b;         /* the entries */
    agti_buf full;
    pager pg;
    bool pending_sep, any;
    size_t nfiles;  /* files shown (after the sensitive ones were dropped) */
    size_t total;   /* count_matches: matched lines of those */
    agti_buf tails; /* notes on files with binary data part-way (the first 5) */
    size_t ntails;
    agti_search_file *files; /* files_with_matches: paths and times */
    size_t nf, capf;
} grep_out;

static void put_name(grep_out *g, agti_buf *b, const char *path)
{
    if (g->single)
        agti_buf_puts(b, g->single);
    else
        put_path(b, g->prefix, path);
}

static void note_tail(grep_out *g, const agti_search_file *f)
{
    if (f->binary_from_line == 0)
        return;
    if (g->ntails++ < 5) {
        put_name(g, &g->tails, f->path);
        agti_buf_printf(&g->tails,
                        " holds binary data (a NUL byte) from line %" PRIu64
                        " on; only the lines before it were searched.\n",
                        f->binary_from_line);
    }
}

static void render_lines(grep_out *g, const agti_search_file *f)
{
    const grep_args *a = g->a;
    agti_buf *b = &g->b;
    bool context = a->before > 0 || a->after > 0;
    for (size_t k = 0; k < f->nlines; k++) {
        const agti_search_line *l = &f->lines[k];
        if (context && (k == 0 || l->group_start))
            g->pending_sep = true;
        if (!page_take(&g->pg))
            continue;
        if (g->pending_sep && g->any)
            agti_buf_puts(b, "--\n");
        g->pending_sep = false;
        g->any = true;
        put_name(g, b, f->path);
        agti_search_format_line(b, l, a->numbers);
    }
}

static void render_entry(grep_out *g, const agti_search_file *f)
{
    if (!page_take(&g->pg))
        return;
    put_name(g, &g->b, f->path);
    if (g->a->mode == AGTI_SEARCH_COUNT)
        agti_buf_printf(&g->b, ":%zu", f->nmatch_lines);
    agti_buf_putc(&g->b, '\n');
}

/* The engine judges sensitivity on paths relative to the searched folder;
 * a folder such as ~/.aws needs the whole path ("credentials" alone is not
 * sensitive). A file with a private key inside is dropped too, unless a
 * host exception names it. */
static bool is_sensitive(grep_out *g, const agti_search_file *f)
{
    agti_buf_truncate(&g->full, 0);
    if (g->single != NULL)
        agti_buf_puts(&g->full, g->dir);
    else
        agti_buf_printf(&g->full, "%s/%s", g->dir, f->path);
    const char *fp = agti_buf_cstr(&g->full);
    return !g->full.oom && (agti_sensitive_match(g->pol, fp, NULL) ||
                            (f->multi_link && agti_linkset_hit_at(&g->links, AT_FDCWD, fp)) ||
                            (!agti_sensitive_host_excepted(g->pol, fp) && key_inside(fp, f)));
}

/* agti_search_sink: one file with matches, in path order. */
static int take_file(void *payload, agti_search_file *f)
{
    grep_out *g = payload;
    if (is_sensitive(g, f)) { /* dropped, not counted (see the closing note's count) */
        agti_search_file_clear(f);
        return AGT_OK;
    }
    g->nfiles++;
    if (g->a->mode == AGTI_SEARCH_FILES) {
        if (g->nf == g->capf) {
            size_t ncap = g->capf ? 2 * g->capf : 64;
            agti_search_file *nf = realloc(g->files, ncap * sizeof *nf);
            if (nf == NULL) {
                agti_search_file_clear(f);
                return agti_oom();
            }
            g->files = nf;
            g->capf = ncap;
        }
        free(f->lines);
        free(f->arena);
        f->lines = NULL;
        f->arena = NULL;
        f->nlines = 0;
        g->files[g->nf++] = *f;
        memset(f, 0, sizeof *f);
        return AGT_OK;
    }
    note_tail(g, f);
    if (g->a->mode == AGTI_SEARCH_CONTENT) {
        render_lines(g, f);
    } else {
        g->total += f->nmatch_lines;
        render_entry(g, f);
    }
    agti_search_file_clear(f);
    return g->b.oom || g->tails.oom ? agti_oom() : AGT_OK;
}

/* files_with_matches, newest first; then what ends every listing. */
static void finish_entries(grep_out *g, bool *more, size_t *entries)
{
    const grep_args *a = g->a;
    if (a->mode == AGTI_SEARCH_FILES) {
        agti_search_result sorted;
        memset(&sorted, 0, sizeof sorted);
        sorted.files = g->files;
        sorted.nfiles = g->nf;
        agti_search_sort_by_mtime(&sorted);
        for (size_t i = 0; i < g->nf; i++) {
            render_entry(g, &g->files[i]);
            note_tail(g, &g->files[i]);
        }
    }
    pager *pg = &g->pg;
    *entries = pg->seen;
    *more = pg->limit != 0 && pg->seen > pg->offset + pg->limit;
    if (pg->shown == 0 && pg->seen > 0)
        agti_buf_printf(&g->b, "offset %zu is past the last of the %zu entries.\n", a->offset,
                        pg->seen);
}

static void notes(grep_out *g, const agti_search_result *res, bool more, size_t entries)
{
    agti_buf *b = &g->b;
    const grep_args *a = g->a;
    const char *what = a->mode == AGTI_SEARCH_CONTENT ? "lines"
                       : a->mode == AGTI_SEARCH_COUNT ? "counts"
                                                      : "files";
    bool capped = res->truncated_matches || res->truncated_output;
    if (g->nfiles == 0)
        agti_buf_printf(b, "No matches for '%s'.\n", a->pattern);
    if (a->mode == AGTI_SEARCH_COUNT && g->nfiles > 0)
        agti_buf_printf(b, "Total: %zu matching line%s in %zu file%s.\n", g->total,
                        g->total == 1 ? "" : "s", g->nfiles, g->nfiles == 1 ? "" : "s");
    if (more || capped) {
        /* head_limit 0 shows every entry the engine kept (it stops at 4 MiB) */
        size_t last =
            a->limit != 0 && a->offset + a->limit < entries ? a->offset + a->limit : entries;
        /* that cap counts from the first entry, so a next page needs a head_limit */
        bool cap4 = a->limit == 0 && res->truncated_output;
        agti_buf_printf(b,
                        "[Showing %s %zu-%zu of %s%zu; %scontinue with offset %zu%s or narrow "
                        "the search.]\n",
                        what, a->offset + 1, last, capped ? "more than " : "",
                        capped ? last : entries,
                        cap4 ? "output stops at 4 MiB with head_limit 0: " : "", last,
                        cap4 ? " and a head_limit (such as 1000)," : "");
    }
    /* Only the files the walk left out by name are counted: those dropped
     * here are dropped because they matched (a hard link to one, a key
     * inside, a name judged on the whole path), and counting them told a
     * right guess of what they hold from a wrong one. */
    size_t sensitive = res->sensitive_skipped;
    if (sensitive > 0)
        agti_buf_printf(b,
                        "%zu sensitive file%s (.env files, private keys, credentials) %s left "
                        "out.\n",
                        sensitive, sensitive == 1 ? "" : "s", sensitive == 1 ? "was" : "were");
    if (res->timed_out)
        agti_buf_printf(b,
                        "The search stopped after %d s; results may be incomplete: narrow "
                        "the path or the pattern.\n",
                        GREP_TIME_BUDGET_MS / 1000);
    agti_buf_put(b, g->tails.ptr, g->tails.len);
    if (g->ntails > 5)
        agti_buf_printf(b, "%zu more files hold binary data part-way and were searched up to it.\n",
                        g->ntails - 5);
    for (size_t i = 0; i < res->nerrors && i < 5; i++)
        agti_buf_printf(b, "Error: %s\n", res->errors[i].message);
    for (size_t i = 0; i < res->nwarnings && i < 5; i++)
        agti_buf_printf(b, "Warning: %s\n", res->warnings[i]);
}

static void grep_out_free(grep_out *g)
{
    agti_buf_free(&g->b);
    agti_buf_free(&g->full);
    agti_buf_free(&g->tails);
    agti_linkset_free(&g->links);
    for (size_t i = 0; i < g->nf; i++)
        agti_search_file_clear(&g->files[i]);
    free(g->files);
}

static int search(agt_call *call, const grep_args *a, const agti_ws_path *p, bool is_file)
{
    agti_search_opts o;
    memset(&o, 0, sizeof o);
    o.pattern = a->pattern;
    o.case_insensitive = a->icase;
    o.multiline = a->multiline;
    o.mode = a->mode;
    o.before = a->mode == AGTI_SEARCH_CONTENT ? a->before : 0;
    o.after = a->mode == AGTI_SEARCH_CONTENT ? a->after : 0;
    if (a->mode == AGTI_SEARCH_CONTENT && a->limit != 0)
        o.max_matches = a->offset + a->limit + 1;
    if (a->limit == 0)
        o.max_output_bytes = GREP_MAX_OUTPUT_BYTES;
    o.time_budget_ms = GREP_TIME_BUDGET_MS;
    o.include_ignored = a->include_ignored;
    /* Ignore files of the workspace folders above the searched one apply too
     * (a .gitignore at the root listing build/ keeps path "src" from
     * searching src/build), as in ripgrep. */
    agt_session *sess = agt_call_session(call);
    o.ignore_root = sess != NULL ? sess->root : NULL;
    o.skip_sensitive = true;
    o.sensitive = agti_session_sensitive(sess);
    if (a->glob != NULL) {
        o.globs = &a->glob;
        o.nglobs = 1;
        /* rg run from the root matches a glob that starts with the searched
         * folder's path (src, then any file below): the glob also sees the
         * path from the workspace root. */
        if (strcmp(p->rel, ".") != 0 && p->rel[0] != '/')
            o.glob_base = p->rel;
    }
    if (a->type != NULL) {
        o.types = &a->type;
        o.ntypes = 1;
    }
    agti_searcher *s = NULL;
    int rc = agti_searcher_new(&s, &o);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK) {
        char *msg = agti_strdup(agt_error_message());
        rc = agti_tool_fail(call, rc, "Grep cannot run: %s.", msg ? msg : "bad pattern");
        free(msg);
        return rc;
    }
    grep_out g;
    memset(&g, 0, sizeof g);
    g.a = a;
    g.prefix = strcmp(p->rel, ".") == 0 ? NULL : p->rel;
    g.single = is_file ? p->rel : NULL;
    g.dir = p->abs;
    g.pol = o.sensitive;
    agti_linkset_init(&g.links, g.pol, sess ? sess->root : NULL);
    g.pg = (pager){a->offset, a->limit, 0, 0};
    /* Room for what the output cap lets through, taken at once: the pages
     * are only mapped, each used when written, and the buffer is never
     * copied as it grows (the old and new copies together were the peak). */
    if (o.max_output_bytes)
        agti_buf_reserve(&g.b, o.max_output_bytes + (o.max_output_bytes >> 4));
    agti_search_result res;
    memset(&res, 0, sizeof res);
    rc = agti_search_tree_sink(s, p->loc.fd, p->abs, take_file, &g, &res);
    if (rc != AGT_OK && rc != AGT_ENOMEM) {
        char *msg = agti_strdup(agt_error_message());
        rc = agti_tool_fail(call, rc, "Grep could not search %s: %s.", p->rel, msg ? msg : "error");
        free(msg);
    }
    if (rc == AGT_OK) {
        bool more = false;
        size_t entries = 0;
        finish_entries(&g, &more, &entries);
        notes(&g, &res, more, entries);
        agti_buf *b = &g.b;
        agti_buf_truncate(b, b->len > 0 && b->ptr[b->len - 1] == '\n' ? b->len - 1 : b->len);
        rc = agti_ws_finish(call, b);
    }
    grep_out_free(&g);
    agti_search_result_clear(&res);
    agti_searcher_free(s);
    return rc;
}

int agti_tool_grep(agt_call *call, void *payload)
{
    (void)payload;
    grep_args a;
    int rc = parse_args(call, &a);
    if (rc != AGT_OK)
        return rc;
    const char *path = json_string_value(json_object_get(agti_call_args_json(call), "path"));
    agti_ws_path p;
    rc = agti_ws_resolve(call, path ? path : ".", AGTI_WS_OPEN | AGTI_WS_MISSING,
                         O_RDONLY | O_NONBLOCK, false, &p);
    if (rc != AGT_OK)
        return rc;
    struct stat st = p.loc.st;
    if (!p.loc.exists) {
        rc = agti_ws_missing(call, &p, "");
    } else if (p.loc.fd < 0) {
        rc = agti_ws_open_failed(call, &p);
    } else if (!S_ISDIR(st.st_mode) &&
               agti_sensitive_match(agti_session_sensitive(agt_call_session(call)), p.abs, NULL)) {
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "No matches for '%s'.\n1 sensitive file (.env files, private keys, "
                        "credentials) was left out.",
                        a.pattern);
        rc = agti_ws_finish(call, &b);
    } else {
        rc = search(call, &a, &p, !S_ISDIR(st.st_mode));
    }
    agti_ws_path_free(&p);
    return rc;
}
