/* Edit: literal string replacement in an existing file. When old_string is
 * not found byte for byte, the matching ladder of lib/patch (line endings,
 * trailing white space, indentation, Unicode look-alikes) is tried one level
 * at a time and used only when a level finds exactly one place; the result
 * says which level applied. Strict sessions and replace_all match exactly
 * only; places that differ only in white space are then reported. */
#include <fcntl.h>
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

static int not_found(agt_call *call, const agti_ws_path *p, const char *text, size_t len,
                     const edit_args *a)
{
    int rc;
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "old_string was not found in %s. Nothing was changed.", p->rel);
    agti_buf near = AGTI_BUF_INIT;
    if (near_misses(&near, text, len, a->old, a->olen))
        agti_buf_printf(&b,
                        " Text that differs from old_string only in white space or line "
                        "endings is%s: read those lines again and copy them exactly "
                        "(indentation included, without the line-number prefix).",
                        agti_buf_cstr(&near));
    else
        agti_buf_puts(&b, " The file may have changed: read it again and copy old_string "
                          "exactly from the Read output (without the line-number prefix).");
    agti_buf_free(&near);
    rc = b.oom ? agti_oom() : agt_call_set_error(call, agti_buf_cstr(&b));
    agti_buf_free(&b);
    rc = rc == AGT_OK ? AGT_ENOTFOUND : rc;
    return rc;
}

/* Phrases of the ladder's levels, for an ambiguous match. */
static const char *const LEVEL_PHRASE[] = {"", "normalising line endings",
                                           "ignoring trailing white space", "ignoring indentation",
                                           "folding Unicode look-alikes"};

/* Writes out_text over the file and sets the result (replaced count places,
 * the first at byte first, the new text nlen bytes long; how: the ladder's
 * note or NULL). Takes out_text. */
static int write_result(agt_call *call, const agti_ws_path *p, char *out_text, size_t out_len,
                        size_t count, size_t first, size_t nlen, const char *how)
{
    agti_write_info info;
    int rc = agti_fs_write_at(p->loc.dirfd, p->loc.name, p->abs, out_text, out_len,
                              agti_tool_write_flags(call), &info);
    if (rc != AGT_OK && rc != AGT_ENOMEM)
        rc = agti_tool_write_failed(call, rc, p->rel, info.kept);
    if (rc == AGT_OK) {
        agti_buf b = AGTI_BUF_INIT;
        size_t line = agti_ws_line_of(out_text, first);
        agti_buf_printf(&b, "Edited %s: replaced %zu occurrence%s", p->rel, count,
                        count == 1 ? "" : "s");
        if (count == 1)
            agti_buf_printf(&b, " at line %zu", line);
        if (how != NULL)
            agti_buf_printf(&b, " (%s)", how);
        agti_buf_puts(&b, ".");
        if (count == 1) {
            agti_buf_puts(&b, " The lines around it now read:");
            snippet(&b, out_text, out_len, first, first + nlen);
        }
        agti_tool_link_note(&b, p, &info);
        rc = agti_ws_finish(call, &b);
    }
    free(out_text);
    return rc;
}

/* old_string is not in the file byte for byte: the ladder. */
static int apply_ladder(agt_call *call, const agti_ws_path *p, const char *text, size_t len,
                        const edit_args *a)
{
    agti_match m;
    int rc = agti_match_find(text, len, a->old, a->olen, AGTI_MATCH_UNICODE, &m);
    if (rc != AGT_OK)
        return agti_oom();
    if (m.count == 0)
        return not_found(call, p, text, len, a);
    if (m.count > 1) {
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b,
                        "old_string was not found exactly in %s; after %s it matches %zu places "
                        "(at lines",
                        p->rel, LEVEL_PHRASE[m.level], m.count);
        size_t shown = m.count < AGTI_MATCH_MAX_PLACES ? m.count : AGTI_MATCH_MAX_PLACES;
        for (size_t i = 0; i < shown; i++)
            agti_buf_printf(&b, "%s %zu", i ? "," : "", m.lines[i]);
        if (m.count > shown)
            agti_buf_printf(&b, " and %zu more", m.count - shown);
        agti_buf_puts(&b, "). Nothing was changed. Read those lines again and copy old_string "
                          "exactly, with enough surrounding lines to make it unique.");
        rc = b.oom ? agti_oom() : agt_call_set_error(call, agti_buf_cstr(&b));
        agti_buf_free(&b);
        return rc == AGT_OK ? AGT_EAMBIGUOUS : rc;
    }
    size_t rlen;
    char *rep = agti_match_adapt(text, len, &m, a->old, a->olen, a->nw, a->nlen, &rlen);
    if (rep == NULL)
        return agti_oom();
    agti_buf o = AGTI_BUF_INIT;
    agti_buf_put(&o, text, m.start);
    agti_buf_put(&o, rep, rlen);
    agti_buf_put(&o, text + m.end, len - m.end);
    free(rep);
    if (o.oom) {
        agti_buf_free(&o);
        return agti_oom();
    }
    size_t out_len = o.len;
    return write_result(call, p, agti_buf_detach(&o), out_len, 1, m.start, rlen, m.why);
}

static int apply(agt_call *call, const agti_ws_path *p, char *text, size_t len, const edit_args *a)
{
    int rc;
    char *old_c = NULL, *new_c = NULL;
    const char *old = a->old, *nw = a->nw;
    size_t olen = a->olen, nlen = a->nlen, first = 0;
    size_t offs[MAX_PLACES];
    size_t n = 0;
    bool crlf = agti_fs_detect_eol(text, len) == AGTI_EOL_CRLF;
    if (crlf && memchr(old, '\n', olen) != NULL) {
        size_t l1, l2;
        old_c = agti_fs_lf_to_crlf(old, olen, &l1);
        new_c = agti_fs_lf_to_crlf(nw, nlen, &l2);
        if (old_c == NULL || new_c == NULL) {
            rc = agti_oom();
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
            rc = agti_oom();
            goto out;
        }
        nw = new_c, nlen = l2;
    }
    if (n == 0)
        n = count_occurrences(text, len, old, olen, &first, offs, MAX_PLACES);
    if (n == 0 && !a->all &&
        (agti_session_edit_options(agt_call_session(call)) & AGT_EDIT_STRICT) == 0) {
        rc = apply_ladder(call, p, text, len, a);
        goto out;
    }
    if (n == 0) {
        rc = not_found(call, p, text, len, a);
        goto out;
    }
    if (n > 1 && !a->all) {
        agti_buf b = AGTI_BUF_INIT;
        agti_buf_printf(&b, "old_string occurs %zu times in %s (at line", n, p->rel);
        size_t shown = n < MAX_PLACES ? n : MAX_PLACES;
        if (shown > 1)
            agti_buf_putc(&b, 's');
        for (size_t i = 0; i < shown; i++)
            agti_buf_printf(&b, "%s %zu", i ? "," : "", agti_ws_line_of(text, offs[i]));
        if (n > shown)
            agti_buf_printf(&b, " and %zu more", n - shown);
        agti_buf_puts(&b, "). Nothing was changed. Include more surrounding lines in old_string "
                          "to make it unique, or set replace_all to true to replace every "
                          "occurrence.");
        rc = b.oom ? agti_oom() : agt_call_set_error(call, agti_buf_cstr(&b));
        agti_buf_free(&b);
        rc = rc == AGT_OK ? AGT_EAMBIGUOUS : rc;
        goto out;
    }
    size_t out_len, count;
    char *out_text = replace(text, len, old, olen, nw, nlen, a->all, &out_len, &count);
    if (out_text == NULL) {
        rc = agti_oom();
        goto out;
    }
    rc = write_result(call, p, out_text, out_len, count, first, nlen, NULL);
out:
    free(old_c);
    free(new_c);
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
    int rc =
        agti_ws_resolve(call, path, AGTI_WS_OPEN | AGTI_WS_CHANGE, O_RDONLY | O_NONBLOCK, true, &p);
    if (rc != AGT_OK)
        return rc;
    char *text = NULL;
    size_t len = 0;
    rc = agti_ws_load(call, &p, AGTI_EDIT_MAX_BYTES, &text, &len);
    if (rc == AGT_OK && memchr(text, '\0', len) != NULL)
        rc = agti_tool_fail(call, AGT_EUNSUPPORTED,
                            "%s is a binary file (it contains NUL bytes); Edit changes text files "
                            "only.",
                            p.rel);
    if (rc == AGT_OK)
        rc = apply(call, &p, text, len, &a);
    free(text);
    agti_ws_path_free(&p);
    return rc;
}
