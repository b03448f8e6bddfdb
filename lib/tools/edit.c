/* Edit: literal string replacement in an existing file. When old_string is
 * not found byte for byte, the matching ladder of lib/patch (line endings,
 * trailing white space, indentation, Unicode look-alikes) is tried one level
 * at a time and used only when a level finds exactly one place; the result
 * says which level applied. Strict sessions and replace_all match exactly
 * only; places that differ only in white space are then reported. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/dispatch_internal.h"
#include "fs/fs.h"
#include "patch/patch.h"
#include "session/fs_settings.h"
#include "tools_internal.h"
#include "ws.h"

/* Places reported in an error message. */
#define MAX_PLACES 5
/* Lines of context shown around the first replacement. */
#define SNIPPET_CONTEXT 2
#define SNIPPET_MAX_LINES 20

static size_t count_occurrences(const char *hay, size_t hlen, const char *needle, size_t nlen,
                                size_t *first, size_t *offs, size_t noffs)
{
    size_t n = 0, i = 0;
    while (i + nlen <= hlen) {
        const char *hit = memmem(hay + i, hlen - i, needle, nlen);
        if (hit == NULL)
            break;
        size_t at = (size_t)(hit - hay);
        if (n == 0)
            *first = at;
        if (n < noffs)
            offs[n] = at;
        n++;
        i = at + nlen;
    }
    return n;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Copies s without white space; map[i] = offset in s of kept byte i. */
static char *squeeze(const char *s, size_t len, size_t **map, size_t *out_len)
{
    char *o = malloc(len + 1);
    size_t *m = map ? malloc((len + 1) * sizeof *m) : NULL;
    if (o == NULL || (map && m == NULL)) {
        free(o);
        free(m);
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        if (!is_space(s[i])) {
            if (m)
                m[k] = i;
            o[k++] = s[i];
        }
    o[k] = '\0';
    *out_len = k;
    if (map)
        *map = m;
    return o;
}

/* Appends " at lines a-b (, ...)" for places where old differs from the file
 * only in white space; false when there is none (or on OOM). */
static bool near_misses(agti_buf *b, const char *text, size_t len, const char *old, size_t olen)
{
    size_t *map = NULL, flen, nlen;
    char *ftxt = squeeze(text, len, &map, &flen);
    char *ntxt = squeeze(old, olen, NULL, &nlen);
    bool found = false;
    if (ftxt == NULL || ntxt == NULL || nlen == 0)
        goto out;
    size_t i = 0, n = 0;
    while (i + nlen <= flen) {
        const char *hit = memmem(ftxt + i, flen - i, ntxt, nlen);
        if (hit == NULL)
            break;
        size_t at = (size_t)(hit - ftxt);
        if (n < MAX_PLACES) {
            size_t a = agti_ws_line_of(text, map[at]);
            size_t z = agti_ws_line_of(text, map[at + nlen - 1]);
            agti_buf_puts(b, n == 0 ? " at line" : ", ");
            if (n == 0 && a != z)
                agti_buf_putc(b, 's');
            agti_buf_printf(b, n == 0 ? " %zu" : "%zu", a);
            if (a != z)
                agti_buf_printf(b, "-%zu", z);
        }
        n++;
        i = at + nlen;
    }
    if (n > MAX_PLACES)
        agti_buf_printf(b, " and %zu more places", n - MAX_PLACES);
    found = n > 0;
out:
    free(ftxt);
    free(ntxt);
    free(map);
    return found;
}

static void snippet(agti_buf *b, const char *text, size_t len, size_t from, size_t to)
{
    size_t first = agti_ws_line_of(text, from);
    size_t last = agti_ws_line_of(text, to > from ? to - 1 : from);
    size_t a = first > SNIPPET_CONTEXT ? first - SNIPPET_CONTEXT : 1;
    size_t z = last + SNIPPET_CONTEXT;
    if (z - a + 1 > SNIPPET_MAX_LINES)
        z = a + SNIPPET_MAX_LINES - 1;
    size_t no = 1, i = 0;
    while (i < len && no <= z) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - text) : len;
        if (no >= a) {
            size_t l = end - i;
            if (l > 0 && text[end - 1] == '\r')
                l--;
            if (l > AGTI_READ_MAX_LINE_CHARS)
                l = agti_utf8_floor(text + i, AGTI_READ_MAX_LINE_CHARS);
            agti_buf_printf(b, "\n%zu\t", no);
            agti_utf8_sanitize(b, text + i, l);
        }
        if (nl == NULL)
            break;
        i = end + 1;
        no++;
    }
}

static char *replace(const char *text, size_t len, const char *old, size_t olen, const char *nw,
                     size_t nlen, bool all, size_t *out_len, size_t *count)
{
    agti_buf o = AGTI_BUF_INIT;
    size_t i = 0, n = 0;
    while (i <= len) {
        const char *hit = i + olen <= len ? memmem(text + i, len - i, old, olen) : NULL;
        if (hit == NULL || (!all && n == 1))
            break;
        agti_buf_put(&o, text + i, (size_t)(hit - (text + i)));
        agti_buf_put(&o, nw, nlen);
        i = (size_t)(hit - text) + olen;
        n++;
    }
    agti_buf_put(&o, text + i, len - i);
    *count = n;
    *out_len = o.len;
    return agti_buf_detach(&o);
}

typedef struct edit_args {
    const char *old, *nw;
    size_t olen, nlen;
    bool all;
} edit_args;

/* The text an edit produced, or why it could not be made. */
typedef struct edit_out {
    char *text; /* malloc'd new content */
    size_t len;
    size_t first;  /* offset of the first replacement in text */
    size_t nlen;   /* length of the (first) replacement */
    size_t count;  /* places replaced */
    char why[160]; /* the ladder's note, "" for an exact match */
} edit_out;

static int not_found(agti_buf *err, const char *rel, const char *text, size_t len,
                     const edit_args *a)
{
    agti_buf_printf(err, "old_string was not found in %s. Nothing was changed.", rel);
    agti_buf near = AGTI_BUF_INIT;
    if (near_misses(&near, text, len, a->old, a->olen))
        agti_buf_printf(err,
                        " Text that differs from old_string only in white space or line "
                        "endings is%s: read those lines again and copy them exactly "
                        "(indentation included, without the line-number prefix).",
                        agti_buf_cstr(&near));
    else
        agti_buf_puts(err, " The file may have changed: read it again and copy old_string "
                           "exactly from the Read output (without the line-number prefix).");
    agti_buf_free(&near);
    return err->oom ? AGT_ENOMEM : AGT_ENOTFOUND;
}

/* Phrases of the ladder's levels, for an ambiguous match. */
static const char *const LEVEL_PHRASE[] = {"", "normalising line endings",
                                           "ignoring trailing white space", "ignoring indentation",
                                           "folding Unicode look-alikes"};

/* old_string is not in the file byte for byte: the ladder. */
static int apply_ladder(agti_buf *err, const char *rel, const char *text, size_t len,
                        const edit_args *a, edit_out *o)
{
    agti_match m;
    if (agti_match_find(text, len, a->old, a->olen, AGTI_MATCH_UNICODE, &m) != AGT_OK)
        return AGT_ENOMEM;
    if (m.count == 0)
        return not_found(err, rel, text, len, a);
    if (m.count > 1) {
        agti_buf_printf(err,
                        "old_string was not found exactly in %s; after %s it matches %zu places "
                        "(at lines",
                        rel, LEVEL_PHRASE[m.level], m.count);
        size_t shown = m.count < AGTI_MATCH_MAX_PLACES ? m.count : AGTI_MATCH_MAX_PLACES;
        for (size_t i = 0; i < shown; i++)
            agti_buf_printf(err, "%s %zu", i ? "," : "", m.lines[i]);
        if (m.count > shown)
            agti_buf_printf(err, " and %zu more", m.count - shown);
        agti_buf_puts(err, "). Nothing was changed. Read those lines again and copy old_string "
                           "exactly, with enough surrounding lines to make it unique.");
        return err->oom ? AGT_ENOMEM : AGT_EAMBIGUOUS;
    }
    size_t rlen;
    char *rep = agti_match_adapt(text, len, &m, a->old, a->olen, a->nw, a->nlen, &rlen);
    if (rep == NULL)
        return AGT_ENOMEM;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_put(&b, text, m.start);
    agti_buf_put(&b, rep, rlen);
    agti_buf_put(&b, text + m.end, len - m.end);
    free(rep);
    if (b.oom) {
        agti_buf_free(&b);
        return AGT_ENOMEM;
    }
    o->len = b.len;
    o->text = agti_buf_detach(&b);
    o->first = m.start;
    o->nlen = rlen;
    o->count = 1;
    snprintf(o->why, sizeof o->why, "%s", m.why);
    return o->text ? AGT_OK : AGT_ENOMEM;
}

/* Applies one edit to text[0..len) in memory: *o on success, else err
 * holds the reason (AGT_ENOTFOUND, AGT_EAMBIGUOUS) or AGT_ENOMEM. */
static int edit_mem(agti_buf *err, const char *rel, const char *text, size_t len,
                    const edit_args *a, bool strict, edit_out *o)
{
    int rc = AGT_OK;
    char *old_c = NULL, *new_c = NULL;
    const char *old = a->old, *nw = a->nw;
    size_t olen = a->olen, nlen = a->nlen, first = 0;
    size_t offs[MAX_PLACES];
    size_t n = 0;
    memset(o, 0, sizeof *o);
    bool crlf = agti_fs_detect_eol(text, len) == AGTI_EOL_CRLF;
    if (crlf && memchr(old, '\n', olen) != NULL) {
        size_t l1, l2;
        old_c = agti_fs_lf_to_crlf(old, olen, &l1);
        new_c = agti_fs_lf_to_crlf(nw, nlen, &l2);
        if (old_c == NULL || new_c == NULL) {
            rc = AGT_ENOMEM;
            goto out;
        }
        n = count_occurrences(text, len, old_c, l1, &first, offs, MAX_PLACES);
        if (n > 0) {
            old = old_c, olen = l1, nw = new_c, nlen = l2;
        }
    } else if (crlf && memchr(nw, '\n', nlen) != NULL) {
        /* old_string is one line; its replacement's line breaks follow the file. */
        size_t l2;
        new_c = agti_fs_lf_to_crlf(nw, nlen, &l2);
        if (new_c == NULL) {
            rc = AGT_ENOMEM;
            goto out;
        }
        nw = new_c, nlen = l2;
    }
    if (n == 0)
        n = count_occurrences(text, len, old, olen, &first, offs, MAX_PLACES);
    if (n == 0) {
        rc = !a->all && !strict ? apply_ladder(err, rel, text, len, a, o)
                                : not_found(err, rel, text, len, a);
        goto out;
    }
    if (n > 1 && !a->all) {
        agti_buf_printf(err, "old_string occurs %zu times in %s (at line", n, rel);
        size_t shown = n < MAX_PLACES ? n : MAX_PLACES;
        if (shown > 1)
            agti_buf_putc(err, 's');
        for (size_t i = 0; i < shown; i++)
            agti_buf_printf(err, "%s %zu", i ? "," : "", agti_ws_line_of(text, offs[i]));
        if (n > shown)
            agti_buf_printf(err, " and %zu more", n - shown);
        agti_buf_puts(err, "). Nothing was changed. Include more surrounding lines in old_string "
                           "to make it unique, or set replace_all to true to replace every "
                           "occurrence.");
        rc = err->oom ? AGT_ENOMEM : AGT_EAMBIGUOUS;
        goto out;
    }
    /* The output is bounded like the input: refuse before allocating it
     * (1,000 bytes for every byte of a 4 MB file would be 4 GB). */
    size_t rep = a->all ? n : 1, max_out = AGTI_EDIT_MAX_BYTES;
    if (nlen > olen && (nlen - olen) > (max_out - (len < max_out ? len : max_out)) / rep) {
        agti_buf_printf(err,
                        "Edit would make %s larger than the %u MiB limit: %zu occurrence%s "
                        "of old_string (%zu bytes) replaced by new_string (%zu bytes) in a "
                        "file of %zu bytes. Nothing was changed. Replace fewer occurrences "
                        "per call or use a shorter new_string.",
                        rel, AGTI_EDIT_MAX_BYTES >> 20, rep, rep == 1 ? "" : "s", olen, nlen, len);
        rc = err->oom ? AGT_ENOMEM : AGT_ELIMIT;
        goto out;
    }
    o->text = replace(text, len, old, olen, nw, nlen, a->all, &o->len, &o->count);
    o->first = first;
    o->nlen = nlen;
    rc = o->text ? AGT_OK : AGT_ENOMEM;
out:
    free(old_c);
    free(new_c);
    return rc;
}

static bool strict_session(agt_call *call)
{
    return (agti_session_edit_options(agt_call_session(call)) & AGT_EDIT_STRICT) != 0;
}

/* Sets the call's error from err (or reports OOM) and returns rc. */
static int fail_with(agt_call *call, agti_buf *err, int rc)
{
    if (rc == AGT_ENOMEM || err->oom) {
        agti_buf_free(err);
        return agti_oom();
    }
    int r = agt_call_set_error(call, agti_buf_cstr(err));
    agti_buf_free(err);
    return r == AGT_OK ? rc : r;
}

/* Writes text over the file (atomically) and starts the result in b. */
static int write_text(agt_call *call, const agti_ws_path *p, const char *text, size_t len,
                      agti_write_info *info)
{
    int rc = agti_fs_write_at(p->loc.dirfd, p->loc.name, p->abs, text, len,
                              agti_tool_write_flags(call), info);
    if (rc != AGT_OK && rc != AGT_ENOMEM)
        rc = agti_tool_write_failed(call, rc, p->rel, info->kept);
    return rc;
}

static int apply(agt_call *call, const agti_ws_path *p, char *text, size_t len, const edit_args *a)
{
    agti_buf err = AGTI_BUF_INIT;
    edit_out o;
    int rc = edit_mem(&err, p->rel, text, len, a, strict_session(call), &o);
    if (rc != AGT_OK)
        return fail_with(call, &err, rc);
    agti_buf_free(&err);
    agti_write_info info;
    rc = write_text(call, p, o.text, o.len, &info);
    if (rc == AGT_OK) {
        agti_ws_record_seen(call, p, o.text, o.len);
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b, "Edited %s: replaced %zu occurrence%s", p->rel, o.count,
                        o.count == 1 ? "" : "s");
        if (o.count == 1)
            agti_buf_printf(&b, " at line %zu", agti_ws_line_of(o.text, o.first));
        if (o.why[0] != '\0')
            agti_buf_printf(&b, " (%s)", o.why);
        agti_buf_puts(&b, ".");
        if (o.count == 1) {
            agti_buf_puts(&b, " The lines around it now read:");
            snippet(&b, o.text, o.len, o.first, o.first + o.nlen);
        }
        agti_tool_link_note(&b, p, &info);
        rc = agti_ws_finish(call, &b);
    }
    free(o.text);
    return rc;
}

/* Resolves and loads the file an edit tool changes (text, not binary). */
static int load_for_edit(agt_call *call, const char *tool, const char *path, agti_ws_path *p,
                         char **text, size_t *len)
{
    int rc =
        agti_ws_resolve(call, path, AGTI_WS_OPEN | AGTI_WS_CHANGE, O_RDONLY | O_NONBLOCK, true, p);
    if (rc != AGT_OK)
        return rc;
    *text = NULL;
    *len = 0;
    rc = agti_ws_load(call, p, AGTI_EDIT_MAX_BYTES, text, len);
    if (rc == AGT_OK)
        rc = agti_ws_check_seen(call, p, tool, *text, *len, true);
    if (rc == AGT_OK && memchr(*text, '\0', *len) != NULL)
        rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                            "%s is a binary file (it contains NUL bytes); %s changes text files "
                            "only.",
                            p->rel, tool);
    if (rc != AGT_OK) {
        free(*text);
        *text = NULL;
        agti_ws_path_free(p);
    }
    return rc;
}

int agti_tool_edit(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *path = json_string_value(json_object_get(args, "path"));
    json_t *jo = json_object_get(args, "old_string");
    json_t *jn = json_object_get(args, "new_string");
    if (path == NULL || !json_is_string(jo) || !json_is_string(jn))
        return agti_tool_fail(call, AGT_EINVAL,
                              "Edit needs \"path\", \"old_string\" and \"new_string\".");
    edit_args a = {json_string_value(jo), json_string_value(jn), json_string_length(jo),
                   json_string_length(jn), json_is_true(json_object_get(args, "replace_all"))};
    if (a.olen == 0)
        return agti_tool_fail(call, AGT_EINVAL,
                              "old_string is empty. To create a file or replace all of it, use "
                              "Write.");
    if (a.olen == a.nlen && memcmp(a.old, a.nw, a.olen) == 0)
        return agti_tool_fail(call, AGT_EINVAL,
                              "old_string and new_string are identical, so the edit would change "
                              "nothing. Give the new text in new_string.");
    agti_ws_path p;
    char *text;
    size_t len;
    int rc = load_for_edit(call, "Edit", path, &p, &text, &len);
    if (rc != AGT_OK)
        return rc;
    rc = apply(call, &p, text, len, &a);
    free(text);
    agti_ws_path_free(&p);
    return rc;
}

/* Largest number of edits one MultiEdit call takes. */
#define MULTIEDIT_MAX_EDITS 1000

int agti_tool_multiedit(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    const char *path = json_string_value(json_object_get(args, "path"));
    json_t *edits = json_object_get(args, "edits");
    if (path == NULL || !json_is_array(edits) || json_array_size(edits) == 0)
        return agti_tool_fail(call, AGT_EINVAL,
                              "MultiEdit needs \"path\" and a non-empty \"edits\" array of "
                              "{old_string, new_string, replace_all}.");
    size_t ne = json_array_size(edits);
    if (ne > MULTIEDIT_MAX_EDITS)
        return agti_tool_fail(call, AGT_EINVAL,
                              "edits has %zu entries; MultiEdit takes at most %d per call.", ne,
                              MULTIEDIT_MAX_EDITS);
    for (size_t i = 0; i < ne; i++) {
        json_t *e = json_array_get(edits, i);
        json_t *jo = json_object_get(e, "old_string"), *jn = json_object_get(e, "new_string");
        if (!json_is_string(jo) || !json_is_string(jn))
            return agti_tool_fail(call, AGT_EINVAL,
                                  "edits[%zu] needs \"old_string\" and \"new_string\" "
                                  "(strings). No edit was applied.",
                                  i);
        if (json_string_length(jo) == 0)
            return agti_tool_fail(call, AGT_EINVAL,
                                  "edits[%zu]: old_string is empty. No edit was applied.", i);
        if (json_string_length(jo) == json_string_length(jn) &&
            memcmp(json_string_value(jo), json_string_value(jn), json_string_length(jo)) == 0)
            return agti_tool_fail(call, AGT_EINVAL,
                                  "edits[%zu]: old_string and new_string are identical. No edit "
                                  "was applied.",
                                  i);
    }
    agti_ws_path p;
    char *text;
    size_t len;
    int rc = load_for_edit(call, "MultiEdit", path, &p, &text, &len);
    if (rc != AGT_OK)
        return rc;
    bool strict = strict_session(call);
    agti_buf notes = AGTI_BUF_INIT;
    for (size_t i = 0; i < ne && rc == AGT_OK; i++) {
        json_t *e = json_array_get(edits, i);
        json_t *jo = json_object_get(e, "old_string"), *jn = json_object_get(e, "new_string");
        edit_args a = {json_string_value(jo), json_string_value(jn), json_string_length(jo),
                       json_string_length(jn), json_is_true(json_object_get(e, "replace_all"))};
        agti_buf err = AGTI_BUF_INIT;
        edit_out o;
        rc = edit_mem(&err, p.rel, text, len, &a, strict, &o);
        if (rc != AGT_OK) {
            agti_buf msg = AGTI_BUF_INIT;
            agti_buf_printf(&msg, "edits[%zu]: %s", i, agti_buf_cstr(&err));
            if (i > 0)
                agti_buf_printf(&msg,
                                " The %zu edit%s before it %s not applied either: %s is "
                                "unchanged.",
                                i, i == 1 ? "" : "s", i == 1 ? "was" : "were", p.rel);
            msg.oom = msg.oom || err.oom;
            agti_buf_free(&err);
            rc = fail_with(call, &msg, rc);
            break;
        }
        agti_buf_free(&err);
        agti_buf_printf(&notes, "\nedits[%zu]: replaced %zu occurrence%s", i, o.count,
                        o.count == 1 ? "" : "s");
        if (o.count == 1)
            agti_buf_printf(&notes, " at line %zu", agti_ws_line_of(o.text, o.first));
        if (o.why[0] != '\0')
            agti_buf_printf(&notes, " (%s)", o.why);
        free(text);
        text = o.text;
        len = o.len;
    }
    if (rc == AGT_OK) {
        agti_write_info info;
        rc = write_text(call, &p, text, len, &info);
        if (rc == AGT_OK) {
            agti_ws_record_seen(call, &p, text, len);
            agti_buf b = AGTI_BUF_INIT;
            agti_buf_printf(&b, "Edited %s: applied %zu edit%s in one write:%s", p.rel, ne,
                            ne == 1 ? "" : "s", agti_buf_cstr(&notes));
            agti_tool_link_note(&b, &p, &info);
            rc = agti_ws_finish(call, &b);
        }
    }
    agti_buf_free(&notes);
    free(text);
    agti_ws_path_free(&p);
    return rc;
}
