/*
 * Review-set context tools over the change set under review: file_read (a
 * slice of a post-change file), file_read_diff (the diffs of other files of
 * the change set) and file_find (paths of the reviewed tree by substring).
 * Formats follow TOOLS.md ("Review set"); the wording is ours.
 */
#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "git/git_internal.h"
#include "session/fs_settings.h"
#include "session/review_internal.h"
#include "session/session_internal.h"
#include "review_guard.h"
#include "tools_internal.h"

/* file_read: lines per call, and bytes kept of one line. */
#define READ_MAX_LINES 500
#define READ_MAX_LINE_BYTES 2000
/* A NUL byte in this many leading bytes makes a file binary (git's rule). */
#define BINARY_PROBE 8000
/* file_find: paths listed at most. */
#define FIND_MAX 100
/* file_read_diff: bytes of diff text per call; paths named in the list of
 * files that do have diffs. */
#define DIFF_MAX_BYTES ((size_t)512 << 10)
#define DIFF_LIST_MAX 50
/* file_read_diff: paths per call (duplicates are found by a linear scan). */
#define DIFF_MAX_PATHS 500

int agti_review_tool_changes(agt_call *call, agt_changes **out)
{
    agt_session *s = agt_call_session(call);
    if (s == NULL)
        return agti_tool_fail(call, AGT_ESTATE,
                              "Error: %s needs a session with a change set under review.",
                              agt_call_tool(call));
    int rc = agti_review_changes(s, out);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return agti_tool_fail(
            call, rc,
            "Error: there is no change set to review (%s). The host must open one "
            "(agt_session_open_review) before the review tools can run.",
            agt_error_message());
    return AGT_OK;
}

static void trim(const char **s, size_t *len)
{
    while (*len > 0 && (**s == ' ' || **s == '\t' || **s == '\r' || **s == '\n'))
        (*s)++, (*len)--;
    while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t' || (*s)[*len - 1] == '\r' ||
                        (*s)[*len - 1] == '\n'))
        (*len)--;
}

static const char *arg_string(agt_call *call, const char *key)
{
    return json_string_value(json_object_get(agti_call_args_json(call), key));
}

static bool is_binary(const char *text, size_t len)
{
    return memchr(text, '\0', len < BINARY_PROBE ? len : BINARY_PROBE) != NULL;
}

/* ---- file_read --------------------------------------------------------- */

static size_t count_lines(const char *text, size_t len)
{
    size_t n = 0;
    for (const char *p = text; (p = memchr(p, '\n', len - (size_t)(p - text))) != NULL; p++)
        n++;
    return n + (len > 0 && text[len - 1] != '\n');
}

static void put_line(agti_buf *b, size_t no, const char *s, size_t len)
{
    if (len > 0 && s[len - 1] == '\r')
        len--;
    agti_buf_printf(b, "\n%zu|", no);
    if (len > READ_MAX_LINE_BYTES) {
        size_t keep = agti_utf8_floor(s, READ_MAX_LINE_BYTES);
        agti_buf_put(b, s, keep);
        agti_buf_printf(b, " [... line cut: %zu of its %zu bytes shown]", keep, len);
    } else {
        agti_buf_put(b, s, len);
    }
}

static int render_range(agt_call *call, const char *path, const char *text, size_t len,
                        long long first, long long last_asked, size_t total)
{
    agti_buf b = AGTI_BUF_INIT;
    size_t last = (size_t)last_asked > total ? total : (size_t)last_asked;
    bool truncated = last - (size_t)first + 1 > READ_MAX_LINES;
    size_t shown_last = truncated ? (size_t)first + READ_MAX_LINES - 1 : last;
    agti_buf_printf(&b, "File: %s (Total lines: %zu)\nIS_TRUNCATED: %s\nLINE_RANGE: %lld-%zu", path,
                    total, truncated ? "true" : "false", first, shown_last);
    const char *p = text, *end = text + len;
    for (size_t no = 1; no <= shown_last && p < end; no++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t n = eol ? (size_t)(eol - p) : (size_t)(end - p);
        if (no >= (size_t)first)
            put_line(&b, no, p, n);
        p = eol ? eol + 1 : end;
    }
    if (truncated)
        agti_buf_printf(&b,
                        "\nNote: Results truncated to %d lines. Please narrow your line range. "
                        "(Lines %lld-%zu of the %lld-%zu asked for were shown; the rest starts at "
                        "line %zu.)",
                        READ_MAX_LINES, first, shown_last, first, last, shown_last + 1);
    return agti_tool_finish(call, &b, NULL, false);
}

int agti_tool_file_read(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *path = arg_string(call, "file_path");
    if (path == NULL || path[0] == '\0')
        return agti_tool_fail(call, AGT_EINVAL, "Error: file_path is missing or empty.");
    json_t *sv = json_object_get(args, "start_line"), *ev = json_object_get(args, "end_line");
    long long first = json_is_integer(sv) ? json_integer_value(sv) : 1;
    if (first < 1)
        return agti_tool_fail(call, AGT_EINVAL,
                              "Error: start_line is %lld; lines are numbered from 1.", first);
    if (json_is_integer(ev) && json_integer_value(ev) < first)
        return agti_tool_fail(
            call, AGT_EINVAL,
            "Error: end_line %lld comes before start_line %lld; end_line is inclusive "
            "and must be at least start_line.",
            json_integer_value(ev), first);
    const char *why = NULL;
    const struct agti_sensitive *pol = agti_session_sensitive(agt_call_session(call));
    if (agti_sensitive_match(pol, path, &why))
        return agti_tool_fail(call, AGT_EDENIED,
                              "Error: %s is a sensitive file (%s); its content is not shown.", path,
                              why);
    agt_changes *c = NULL;
    int rc = agti_review_tool_changes(call, &c);
    if (rc != AGT_OK)
        return rc;
    /* another name of a sensitive file: a rename, a copy, a hard link */
    agti_review_guard g;
    if (agti_review_guard_init(&g, call, c) != AGT_OK)
        return AGT_ENOMEM;
    bool other = agti_review_guard_path(&g, path, &why);
    agti_review_guard_free(&g);
    if (other)
        return agti_tool_fail(call, AGT_EDENIED,
                              "Error: %s is a sensitive file (%s); its content is not shown.", path,
                              why);
    char *text = NULL;
    size_t len = 0;
    rc = agt_changes_read_file(c, path, &text, &len);
    if (rc == AGT_ENOTFOUND)
        return agti_tool_fail(
            call, rc,
            "Error: file not found: %s is not a file of the reviewed tree (after the "
            "change). Check the path with file_find.",
            path);
    if (rc == AGT_ENOMEM)
        return rc;
    if (rc != AGT_OK)
        return agti_tool_fail(call, rc, "Error: cannot read %s: %s", path, agt_error_message());
    if (is_binary(text, len)) {
        agt_free(text);
        return agti_tool_fail(call, AGT_EUNSUPPORTED,
                              "Error: %s is a binary file; file_read shows text files only.", path);
    }
    if (agti_sensitive_check(pol, path, text, len, &why)) {
        agt_free(text);
        return agti_tool_fail(call, AGT_EDENIED,
                              "Error: %s is a sensitive file (%s); its content is not shown.", path,
                              why);
    }
    size_t total = count_lines(text, len);
    if (total == 0) {
        agt_free(text);
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "File: %s (Total lines: 0)\nIS_TRUNCATED: false\nLINE_RANGE: 0-0\n"
                        "Note: the file is empty.",
                        path);
        return agti_tool_finish(call, &b, NULL, false);
    }
    if ((size_t)first > total) {
        agt_free(text);
        return agti_tool_fail(call, AGT_EINVAL,
                              "Error: start_line %lld is past the end of %s, which has %zu line%s.",
                              first, path, total, total == 1 ? "" : "s");
    }
    long long last = json_is_integer(ev) ? json_integer_value(ev) : (long long)total;
    rc = render_range(call, path, text, len, first, last, total);
    agt_free(text);
    return rc;
}

/* ---- file_read_diff ---------------------------------------------------- */

static bool seen_before(json_t *arr, size_t i, const char *path)
{
    for (size_t k = 0; k < i; k++)
        if (strcmp(json_string_value(json_array_get(arr, k)), path) == 0)
            return true;
    return false;
}

static void list_diff_paths(agti_buf *b, const agt_diff *d)
{
    size_t n = agt_diff_file_count(d);
    for (size_t i = 0; i < n && i < DIFF_LIST_MAX; i++)
        agti_buf_printf(b, "%s%s", i ? ", " : "", agt_diff_file_path(d, i));
    if (n > DIFF_LIST_MAX)
        agti_buf_printf(b, " (and %zu more)", n - DIFF_LIST_MAX);
}

int agti_tool_file_read_diff(agt_call *call, void *payload)
{
    (void)payload;
    json_t *paths = json_object_get(agti_call_args_json(call), "path_array");
    if (json_array_size(paths) == 0)
        return agti_tool_fail(
            call, AGT_EINVAL,
            "Error: no files found. path_array is empty: name at least one path.");
    if (json_array_size(paths) > DIFF_MAX_PATHS)
        return agti_tool_fail(call, AGT_ELIMIT,
                              "Error: path_array names %zu paths; ask for at most %d per call.",
                              json_array_size(paths), DIFF_MAX_PATHS);
    agt_changes *c = NULL;
    int rc = agti_review_tool_changes(call, &c);
    if (rc != AGT_OK)
        return rc;
    const agt_diff *d = agt_changes_diff(c);
    const struct agti_sensitive *pol = agti_session_sensitive(agt_call_session(call));
    agti_review_guard g;
    if (agti_review_guard_init(&g, call, c) != AGT_OK)
        return AGT_ENOMEM;
    agti_buf b = AGTI_BUF_INIT, missing = AGTI_BUF_INIT;
    size_t found = 0, nmissing = 0, i;
    json_t *p;
    json_array_foreach(paths, i, p)
    {
        const char *path = json_string_value(p);
        if (path == NULL || path[0] == '\0' || seen_before(paths, i, path))
            continue;
        char *text = NULL;
        rc = agt_diff_file_text(d, path, &text);
        if (rc == AGT_ENOTFOUND) {
            agti_buf_printf(&missing, "%s%s", nmissing++ ? ", " : "", path);
            continue;
        }
        if (rc != AGT_OK)
            break;
        size_t tlen = strlen(text);
        const char *why = NULL;
        if (agti_review_guard_diff(&g, path, &why) ||
            agti_sensitive_check(pol, path, text, tlen, &why)) {
            /* the same policy as file_read: a staged .env.prod stays unseen,
             * and so do both names of a rename from or to one */
            agti_buf_printf(&b,
                            "%s==== FILE: %s ====\n[diff not shown: %s is a sensitive file (%s); "
                            "its content is never shown]\n",
                            found ? "\n" : "", path, path, why);
        } else if (b.len + tlen > DIFF_MAX_BYTES) {
            agti_buf_printf(&b,
                            "%s==== FILE: %s ====\n[diff not shown: the output of this call "
                            "reached %zu KiB; ask for this path in a separate call]\n",
                            found ? "\n" : "", path, DIFF_MAX_BYTES >> 10);
        } else {
            agti_buf_printf(&b, "%s==== FILE: %s ====\n", found ? "\n" : "", path);
            agti_buf_put(&b, text, tlen);
            if (tlen > 0 && text[tlen - 1] != '\n')
                agti_buf_putc(&b, '\n');
        }
        found++;
        agt_free(text);
    }
    agti_review_guard_free(&g);
    if (rc != AGT_OK && rc != AGT_ENOTFOUND) {
        agti_buf_free(&b);
        agti_buf_free(&missing);
        return rc;
    }
    if (nmissing > 0) {
        agti_buf_printf(&b, "%sError: diff not found for: %s.", found ? "\n" : "",
                        agti_buf_cstr(&missing));
        if (agt_diff_file_count(d) == 0) {
            agti_buf_puts(&b, " This change set has no diffs at all; use file_read to read "
                              "files as they are.");
        } else {
            agti_buf_puts(&b, " Diffs exist for: ");
            list_diff_paths(&b, d);
            agti_buf_putc(&b, '.');
        }
    }
    agti_buf_free(&missing);
    if (b.len > 0 && b.ptr[b.len - 1] == '\n')
        agti_buf_truncate(&b, b.len - 1);
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    rc = found == 0 ? agt_call_set_error(call, agti_buf_cstr(&b))
                    : agt_call_set_text(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    if (rc == AGT_OK && found == 0)
        return AGT_ENOTFOUND;
    return rc;
}

/* ---- file_find --------------------------------------------------------- */

/* Files without an extension are skipped except these names (the review
 * reference's list). */
static bool findable(const char *path)
{
    static const char *const names[] = {"Makefile", "Dockerfile", "LICENSE", "Vagrantfile",
                                        "Containerfile"};
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strchr(base, '.') != NULL)
        return true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(base, names[i]) == 0)
            return true;
    return false;
}

static void fold(char *s)
{
    for (; *s; s++)
        if (*s >= 'A' && *s <= 'Z')
            *s = (char)(*s - 'A' + 'a');
}

static bool contains(const char *path, const char *query, bool icase, agti_buf *tmp)
{
    if (!icase)
        return strstr(path, query) != NULL;
    agti_buf_truncate(tmp, 0);
    agti_buf_puts(tmp, path);
    if (tmp->oom)
        return false;
    fold(tmp->ptr);
    return strstr(tmp->ptr, query) != NULL;
}

/* The reference's literal answer, which reviewer models are trained to look
 * for; our detail follows on its own line. */
#define NOT_FOUND_LINE                                                                             \
    "// The file was not found.\nNo file path of the repository contains the query."

int agti_tool_file_find(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *q = arg_string(call, "query_name");
    bool icase = !json_is_true(json_object_get(args, "case_sensitive"));
    /* the query as a path fragment: trimmed, '\' separators as '/' */
    const char *qs = q ? q : "";
    size_t qlen = strlen(qs);
    trim(&qs, &qlen);
    if (qlen == 0)
        return agt_call_set_text(call, NOT_FOUND_LINE);
    char *query = agti_strndup(qs, qlen);
    if (query == NULL)
        return agti_oom();
    for (char *s = query; *s; s++)
        if (*s == '\\')
            *s = '/';
    if (icase)
        fold(query);
    agt_changes *c = NULL;
    int rc = agti_review_tool_changes(call, &c);
    const char *const *files = NULL;
    size_t n = 0;
    if (rc == AGT_OK && (rc = agti_changes_files(c, &files, &n)) != AGT_OK) {
        free(query);
        if (rc == AGT_ENOMEM)
            return rc;
        return agti_tool_fail(call, rc, "Error: cannot list the files of the reviewed tree: %s",
                              agt_error_message());
    }
    if (rc != AGT_OK) {
        free(query);
        return rc;
    }
    agti_review_guard g;
    if (agti_review_guard_init(&g, call, c) != AGT_OK) {
        free(query);
        return AGT_ENOMEM;
    }
    agti_buf b = AGTI_BUF_INIT, tmp = AGTI_BUF_INIT;
    size_t listed = 0, sensitive = 0;
    for (size_t i = 0; i < n && listed < FIND_MAX; i++) {
        if (!findable(files[i]) || !contains(files[i], query, icase, &tmp))
            continue;
        if (agti_review_guard_path(&g, files[i], NULL)) {
            sensitive++;
            continue;
        }
        agti_buf_printf(&b, "%s%s", listed++ ? "\n" : "", files[i]);
    }
    agti_review_guard_free(&g);
    free(query);
    bool oom = tmp.oom;
    agti_buf_free(&tmp);
    if (oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    if (listed == 0)
        agti_buf_puts(&b, NOT_FOUND_LINE);
    if (sensitive > 0)
        agti_buf_printf(&b,
                        "\nNote: %zu sensitive file%s (credentials, keys, environment files) "
                        "matching the query %s not listed.",
                        sensitive, sensitive == 1 ? "" : "s", sensitive == 1 ? "is" : "are");
    return agti_tool_finish(call, &b, NULL, false);
}
