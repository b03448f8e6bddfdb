/*
 * code_search (review set): literal or PCRE2 search over the files of the
 * reviewed tree, limited by git pathspecs, grouped by file as TOOLS.md
 * describes. The candidates are the reviewed tree's files (workspace mode:
 * tracked + untracked non-ignored files of the working tree; range/commit
 * mode: the blobs of the target tree), read through the change set, and each
 * is searched with the search engine's buffer entry point.
 */
#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "git/git_internal.h"
#include "search/search.h"
#include "session/review_internal.h"
#include "tools_internal.h"

#define SEARCH_MAX_PER_FILE 100
/* Output bytes after which no further file is added (the per-file cap alone
 * does not bound a search that matches in thousands of files). */
#define SEARCH_MAX_BYTES ((size_t)512 << 10)

static int fail(agt_call *call, int code, const char *msg, const char *detail)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_puts(&b, msg);
    if (detail != NULL)
        agti_buf_printf(&b, ": %s", detail);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agt_call_set_error(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc == AGT_OK ? code : rc;
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\n'))
        (*s)++, (*len)--;
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r' ||
                        (*s)[*len - 1] == '\n'))
        (*len)--;
}

/* Builds the searcher from the call's arguments; an error result on bad ones. */
static int make_searcher(agt_call *call, agti_searcher **out)
{
    json_t *args = agti_call_args_json(call);
    const char *text = json_string_value(json_object_get(args, "search_text"));
    const char *t = text ? text : "";
    size_t tlen = strlen(t);
    trim(&t, &tlen);
    if (tlen == 0)
        return fail(call, AGT_EINVAL,
                    "Error: search_text is blank; give the text (or, with use_perl_regexp, the "
                    "regular expression) to look for",
                    NULL);
    json_t *pats = json_object_get(args, "file_patterns");
    size_t np = json_array_size(pats);
    const char **specs = np ? calloc(np, sizeof *specs) : NULL;
    if (np && specs == NULL)
        return agti_oom();
    for (size_t i = 0; i < np; i++) {
        specs[i] = json_string_value(json_array_get(pats, i));
        if (specs[i] == NULL || specs[i][0] == '\0') {
            free(specs);
            return fail(call, AGT_EINVAL, "Error: file_patterns holds an empty pattern", NULL);
        }
    }
    agti_search_opts o;
    memset(&o, 0, sizeof o);
    o.pattern = text;
    o.literal = !json_is_true(json_object_get(args, "use_perl_regexp"));
    o.case_insensitive = !json_is_true(json_object_get(args, "case_sensitive"));
    o.mode = AGTI_SEARCH_CONTENT;
    o.max_matches_per_file = SEARCH_MAX_PER_FILE;
    o.pathspecs = specs;
    o.npathspecs = np;
    int rc = agti_searcher_new(out, &o);
    free(specs);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return fail(call, rc, "Error: cannot search", agt_error_message());
    return AGT_OK;
}

static void put_file(agti_buf *b, const agti_search_file *f, size_t *shown_files)
{
    size_t shown = 0;
    for (size_t i = 0; i < f->nlines; i++)
        shown += f->lines[i].is_match;
    agti_buf_printf(b, "%sFile: %s\nMatch lines: %zu", (*shown_files)++ ? "\n\n" : "", f->path,
                    shown);
    for (size_t i = 0; i < f->nlines; i++) {
        const agti_search_line *l = &f->lines[i];
        if (!l->is_match)
            continue;
        agti_buf_printf(b, "\n%llu|", (unsigned long long)l->line_no);
        agti_buf_put(b, l->text, l->len);
        if (l->cut)
            agti_buf_puts(b, " [... line cut]");
    }
}

typedef struct scan {
    agti_buf out;
    size_t files, truncated_files, sensitive, skipped_large, unreadable;
    bool capped; /* SEARCH_MAX_BYTES reached */
    size_t capped_at;
} scan;

static int search_all(agti_searcher *s, agt_changes *c, scan *sc)
{
    const char *const *paths = NULL;
    size_t n = 0;
    int rc = agti_changes_files(c, &paths, &n);
    if (rc != AGT_OK)
        return rc;
    for (size_t i = 0; i < n && !sc->capped; i++) {
        const char *p = paths[i];
        if (!agti_searcher_selects(s, p, strlen(p)))
            continue;
        bool sensitive = agti_fs_is_sensitive(p, NULL);
        char *data = NULL;
        size_t len = 0;
        rc = agt_changes_read_file(c, p, &data, &len);
        if (rc == AGT_ENOMEM)
            return rc;
        if (rc == AGT_ELIMIT) {
            sc->skipped_large++;
            continue;
        }
        if (rc != AGT_OK) { /* vanished or unreadable: the search goes on */
            sc->unreadable++;
            continue;
        }
        agti_search_file f;
        bool matched = false, binary = false;
        rc = agti_searcher_search_buffer(s, p, data, len, &f, &matched, &binary);
        agt_free(data);
        if (rc == AGT_ENOMEM)
            return rc;
        if (rc != AGT_OK) { /* a regex limit in this file */
            sc->unreadable++;
            continue;
        }
        if (matched && sensitive) { /* filtered out, but counted */
            sc->sensitive++;
        } else if (matched) {
            if (sc->out.len >= SEARCH_MAX_BYTES) {
                sc->capped = true;
                sc->capped_at = sc->files;
            } else {
                sc->truncated_files += f.truncated;
                put_file(&sc->out, &f, &sc->files);
            }
        }
        agti_search_file_clear(&f);
    }
    return AGT_OK;
}

int agti_tool_code_search(agt_call *call, void *payload)
{
    (void)payload;
    agti_searcher *s = NULL;
    int rc = make_searcher(call, &s);
    if (rc != AGT_OK)
        return rc;
    agt_changes *c = NULL;
    rc = agti_review_tool_changes(call, &c);
    if (rc != AGT_OK) {
        agti_searcher_free(s);
        return rc;
    }
    scan sc;
    memset(&sc, 0, sizeof sc);
    rc = search_all(s, c, &sc);
    agti_searcher_free(s);
    if (rc != AGT_OK) {
        agti_buf_free(&sc.out);
        return rc == AGT_ENOMEM
                   ? rc
                   : fail(call, rc, "Error: cannot search the reviewed tree", agt_error_message());
    }
    agti_buf b = AGTI_BUF_INIT;
    if (sc.truncated_files > 0)
        agti_buf_printf(&b,
                        "Note: The results have been truncated: only the first %d matching "
                        "lines of a file are shown (%zu file%s reached that cap).\n\n",
                        SEARCH_MAX_PER_FILE, sc.truncated_files,
                        sc.truncated_files == 1 ? "" : "s");
    if (sc.files == 0)
        agti_buf_puts(&b, "No matches found.");
    else
        agti_buf_put(&b, sc.out.ptr, sc.out.len);
    agti_buf_free(&sc.out);
    if (sc.capped)
        agti_buf_printf(&b,
                        "\n\nNote: output stopped after %zu files (%zu KiB); further files with "
                        "matches are not shown. Narrow file_patterns or the search text.",
                        sc.capped_at, SEARCH_MAX_BYTES >> 10);
    if (sc.sensitive > 0)
        agti_buf_printf(&b,
                        "\n\nNote: %zu sensitive file%s (credentials, keys, environment files) "
                        "with matches %s not shown.",
                        sc.sensitive, sc.sensitive == 1 ? "" : "s",
                        sc.sensitive == 1 ? "is" : "are");
    if (sc.skipped_large + sc.unreadable > 0)
        agti_buf_printf(&b, "\n\nNote: %zu file%s could not be searched (too large or unreadable).",
                        sc.skipped_large + sc.unreadable,
                        sc.skipped_large + sc.unreadable == 1 ? "" : "s");
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    rc = agt_call_set_text(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    return rc;
}
