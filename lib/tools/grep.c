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

static void render_content(agti_buf *b, const agti_search_result *res, const grep_args *a,
                           const char *prefix, const char *single, pager *pg)
{
    bool context = a->before > 0 || a->after > 0;
    bool pending_sep = false, any = false;
    for (size_t i = 0; i < res->nfiles; i++) {
        const agti_search_file *f = &res->files[i];
        const char *name = single ? single : f->path;
        const char *pre = single ? NULL : prefix;
        bool raw = single == NULL;
        for (size_t k = 0; k < f->nlines; k++) {
            const agti_search_line *l = &f->lines[k];
            if (context && (k == 0 || l->group_start))
                pending_sep = true;
            if (!page_take(pg))
                continue;
            if (pending_sep && any)
                agti_buf_puts(b, "--\n");
            pending_sep = false;
            any = true;
            char sep = l->is_match ? ':' : '-';
            if (raw)
                put_path(b, pre, name);
            else
                agti_buf_puts(b, name);
            agti_buf_putc(b, sep);
            if (a->numbers)
                agti_buf_printf(b, "%llu%c", (unsigned long long)l->line_no, sep);
            if (l->cut_from > 0)
                agti_buf_printf(b, "[... %zu characters] ", l->cut_from);
            agti_buf_put(b, l->text, l->len);
            if (l->cut)
                agti_buf_puts(b, " [... line cut]");
            agti_buf_putc(b, '\n');
        }
    }
}

static void render(agti_buf *b, agti_search_result *res, const grep_args *a, const char *prefix,
                   const char *single, bool *more, size_t *entries)
{
    pager pg = {a->offset, a->limit, 0, 0};
    if (a->mode == AGTI_SEARCH_CONTENT) {
        render_content(b, res, a, prefix, single, &pg);
    } else {
        if (a->mode == AGTI_SEARCH_FILES)
            agti_search_sort_by_mtime(res);
        for (size_t i = 0; i < res->nfiles; i++) {
            if (!page_take(&pg))
                continue;
            if (single)
                agti_buf_puts(b, single);
            else
                put_path(b, prefix, res->files[i].path);
            if (a->mode == AGTI_SEARCH_COUNT)
                agti_buf_printf(b, ":%zu", res->files[i].nmatch_lines);
            agti_buf_putc(b, '\n');
        }
    }
    *entries = pg.seen;
    *more = pg.limit != 0 && pg.seen > pg.offset + pg.limit;
    if (pg.shown == 0 && pg.seen > 0)
        agti_buf_printf(b, "offset %zu is past the last of the %zu entries.\n", a->offset, pg.seen);
}

static void notes(agti_buf *b, const agti_search_result *res, const grep_args *a, bool more,
                  size_t entries, const char *pattern, const char *prefix, const char *single)
{
    const char *what = a->mode == AGTI_SEARCH_CONTENT ? "lines"
                       : a->mode == AGTI_SEARCH_COUNT ? "counts"
                                                      : "files";
    bool capped = res->truncated_matches || res->truncated_output;
    if (res->nfiles == 0)
        agti_buf_printf(b, "No matches for '%s'.\n", pattern);
    if (a->mode == AGTI_SEARCH_COUNT && res->nfiles > 0) {
        size_t total = 0;
        for (size_t i = 0; i < res->nfiles; i++)
            total += res->files[i].nmatch_lines;
        agti_buf_printf(b, "Total: %zu matching line%s in %zu file%s.\n", total,
                        total == 1 ? "" : "s", res->nfiles, res->nfiles == 1 ? "" : "s");
    }
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
    if (res->sensitive_skipped > 0)
        agti_buf_printf(b,
                        "%zu sensitive file%s (.env files, private keys, credentials) %s left "
                        "out.\n",
                        res->sensitive_skipped, res->sensitive_skipped == 1 ? "" : "s",
                        res->sensitive_skipped == 1 ? "was" : "were");
    if (res->timed_out)
        agti_buf_printf(b,
                        "The search stopped after %d s; results may be incomplete: narrow "
                        "the path or the pattern.\n",
                        GREP_TIME_BUDGET_MS / 1000);
    size_t tails = 0;
    for (size_t i = 0; i < res->nfiles; i++) {
        const agti_search_file *f = &res->files[i];
        if (f->binary_from_line == 0)
            continue;
        if (tails++ < 5) {
            if (single)
                agti_buf_puts(b, single);
            else
                put_path(b, prefix, f->path);
            agti_buf_printf(b,
                            " holds binary data (a NUL byte) from line %" PRIu64
                            " on; only the lines before it were searched.\n",
                            f->binary_from_line);
        }
    }
    if (tails > 5)
        agti_buf_printf(b, "%zu more files hold binary data part-way and were searched up to it.\n",
                        tails - 5);
    for (size_t i = 0; i < res->nerrors && i < 5; i++)
        agti_buf_printf(b, "Error: %s\n", res->errors[i].message);
    for (size_t i = 0; i < res->nwarnings && i < 5; i++)
        agti_buf_printf(b, "Warning: %s\n", res->warnings[i]);
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

/* The engine judges sensitivity on paths relative to the searched folder;
 * a folder such as ~/.aws needs the whole path ("credentials" alone is not
 * sensitive). A file with a private key inside is dropped too, unless a
 * host exception names it. With file set, res holds that one file. */
static void drop_sensitive(agti_search_result *res, const char *dir, const char *file,
                           const struct agti_sensitive *pol)
{
    agti_buf full = AGTI_BUF_INIT;
    size_t k = 0;
    for (size_t i = 0; i < res->nfiles; i++) {
        agti_buf_truncate(&full, 0);
        if (file != NULL)
            agti_buf_puts(&full, file);
        else
            agti_buf_printf(&full, "%s/%s", dir, res->files[i].path);
        const char *fp = agti_buf_cstr(&full);
        if (!full.oom &&
            (agti_sensitive_match(pol, fp, NULL) ||
             (!agti_sensitive_host_excepted(pol, fp) && key_inside(fp, &res->files[i])))) {
            agti_search_file_clear(&res->files[i]);
            res->sensitive_skipped++;
            continue;
        }
        if (k != i)
            res->files[k] = res->files[i];
        k++;
    }
    res->nfiles = k;
    agti_buf_free(&full);
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
    agti_search_result res;
    memset(&res, 0, sizeof res);
    rc = agti_search_tree_at(s, p->loc.fd, p->abs, &res);
    if (rc != AGT_OK && rc != AGT_ENOMEM) {
        char *msg = agti_strdup(agt_error_message());
        rc = agti_tool_fail(call, rc, "Grep could not search %s: %s.", p->rel, msg ? msg : "error");
        free(msg);
    }
    if (rc == AGT_OK)
        drop_sensitive(&res, p->abs, is_file ? p->abs : NULL, o.sensitive);
    if (rc == AGT_OK) {
        agti_buf b = AGTI_BUF_INIT;
        bool more = false;
        size_t entries = 0;
        const char *prefix = strcmp(p->rel, ".") == 0 ? NULL : p->rel;
        render(&b, &res, a, prefix, is_file ? p->rel : NULL, &more, &entries);
        notes(&b, &res, a, more, entries, a->pattern, prefix, is_file ? p->rel : NULL);
        agti_buf_truncate(&b, b.len > 0 && b.ptr[b.len - 1] == '\n' ? b.len - 1 : b.len);
        /* the results are in b now: freed before the text goes to the call */
        agti_search_result_clear(&res);
        rc = agti_ws_finish(call, &b);
    }
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
