/*
 * Review-set tools that change the review state: code_comment (anchor each
 * comment with the diff engine, store it on the session, acknowledge where it
 * landed) and task_done (end the review loop).
 */
#include <string.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "session/review_internal.h"
#include "session/session_internal.h"
#include "review_guard.h"
#include "tools_internal.h"

static int fail(agt_call *call, int code, const char *text)
{
    int rc = agt_call_set_error(call, text);
    return rc == AGT_OK ? code : rc;
}

/* ---- task_done --------------------------------------------------------- */

int agti_tool_task_done(agt_call *call, void *payload)
{
    (void)payload;
    const char *state = json_string_value(json_object_get(agti_call_args_json(call), "state"));
    bool failed = state != NULL && strcmp(state, "FAILED") == 0;
    if (state != NULL && !failed && strcmp(state, "DONE") != 0)
        return fail(call, AGT_EINVAL, "Error: state must be DONE or FAILED.");
    agt_session *s = agt_call_session(call);
    agti_review *r = s ? agti_session_review(s) : NULL;
    if (s != NULL && r == NULL)
        return agti_oom();
    size_t n = 0;
    if (r != NULL) {
        r->done = true;
        r->failed = failed;
        n = json_array_size(r->comments);
    }
    char text[160];
    snprintf(text, sizeof text, "Review ended (%s). %zu comment%s stored in this session.",
             failed ? "FAILED" : "DONE", n, n == 1 ? " is" : "s are");
    int rc = agt_call_set_text(call, text);
    if (rc == AGT_OK) {
        const char *json = failed ? "{\"state\":\"FAILED\"}" : "{\"state\":\"DONE\"}";
        rc = agt_call_set_json(call, json, strlen(json));
    }
    return rc;
}

/* ---- code_comment ------------------------------------------------------ */

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* The path one comment is addressed to: its own, the call's, the file under
 * review, or none (then every file of the change set is searched). */
static const char *comment_path(json_t *c, const char *call_path, const agti_review *r)
{
    const char *p = str(c, "path");
    if (p != NULL && p[0] != '\0')
        return p;
    if (call_path != NULL && call_path[0] != '\0')
        return call_path;
    return r->file;
}

static json_t *anchor_input(json_t *comments, const char *call_path, const agti_review *r)
{
    json_t *in = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(comments, i, c)
    {
        json_t *o = json_object();
        const char *p = comment_path(c, call_path, r);
        if (o == NULL || json_array_append_new(in, o) != 0 ||
            (p != NULL && json_object_set_new(o, "path", json_string(p)) != 0) ||
            json_object_set(o, "existing_code", json_object_get(c, "existing_code")) != 0 ||
            (str(c, "suggestion_code") != NULL &&
             json_object_set(o, "suggestion_code", json_object_get(c, "suggestion_code")) != 0)) {
            json_decref(in);
            return NULL;
        }
    }
    return in;
}

static json_t *or_null(json_t *v)
{
    return json_is_string(v) ? json_incref(v) : json_null();
}

/* The stored form of one comment (see agt_session_comments()). */
static json_t *stored_comment(json_t *c, json_t *a, const char *requested, const agti_review *r)
{
    json_t *path = json_object_get(a, "path");
    json_t *thinking = json_object_get(c, "thinking");
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "path",
                               json_is_string(path) ? json_incref(path)
                               : requested          ? json_string(requested)
                                                    : json_null());
    bad |= json_object_set(o, "start_line", json_object_get(a, "start_line"));
    bad |= json_object_set(o, "end_line", json_object_get(a, "end_line"));
    bad |= json_object_set(o, "side", json_object_get(a, "side"));
    bad |= json_object_set(o, "content", json_object_get(c, "content"));
    bad |= json_object_set(o, "existing_code", json_object_get(c, "existing_code"));
    bad |=
        json_object_set_new(o, "suggestion_code", or_null(json_object_get(c, "suggestion_code")));
    bad |= json_object_set_new(o, "category", or_null(json_object_get(c, "category")));
    bad |= json_object_set_new(o, "severity", or_null(json_object_get(c, "severity")));
    bad |= json_object_set_new(o, "thinking",
                               json_is_string(thinking) && json_string_length(thinking) > 0
                                   ? json_incref(thinking)
                               : r->thinking ? json_string(r->thinking)
                                             : json_null());
    bad |= json_object_set(o, "method", json_object_get(a, "method"));
    bad |= json_object_set(o, "ambiguous", json_object_get(a, "ambiguous"));
    bad |= json_object_set(o, "candidates", json_object_get(a, "candidates"));
    bad |=
        json_object_set_new(o, "requested_path", requested ? json_string(requested) : json_null());
    bad |= json_object_set(o, "relocated", json_object_get(a, "relocated"));
    bad |= json_object_set_new(o, "reason", or_null(json_object_get(a, "reason")));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static bool same_string(json_t *a, json_t *b)
{
    if (json_is_null(a) || json_is_null(b))
        return json_is_null(a) && json_is_null(b);
    return json_is_string(a) && json_is_string(b) &&
           strcmp(json_string_value(a), json_string_value(b)) == 0;
}

/* A comment sent again after an ambiguous placement replaces that one, so
 * re-quoting does not leave a duplicate behind. */
static int store(agti_review *r, json_t *o)
{
    size_t i;
    json_t *old;
    json_array_foreach(r->comments, i, old)
    {
        if (json_is_true(json_object_get(old, "ambiguous")) &&
            same_string(json_object_get(old, "content"), json_object_get(o, "content")) &&
            same_string(json_object_get(old, "requested_path"),
                        json_object_get(o, "requested_path")))
            return json_array_set_new(r->comments, i, o) == 0 ? AGT_OK : agti_oom();
    }
    return json_array_append_new(r->comments, o) == 0 ? AGT_OK : agti_oom();
}

static void put_lines(agti_buf *b, long long s, long long e)
{
    if (s == e)
        agti_buf_printf(b, "%lld", s);
    else
        agti_buf_printf(b, "%lld-%lld", s, e);
}

static void ack_one(agti_buf *b, size_t no, json_t *o, json_t *a)
{
    const char *path = str(o, "path");
    const char *requested = str(o, "requested_path");
    const char *method = str(a, "method");
    const char *side = str(a, "side");
    long long s = json_integer_value(json_object_get(a, "start_line"));
    long long e = json_integer_value(json_object_get(a, "end_line"));
    agti_buf_printf(b, "\n%zu. %s", no, path ? path : "(no path)");
    if (json_is_true(json_object_get(a, "ambiguous"))) {
        json_t *cands = json_object_get(a, "candidates");
        agti_buf_puts(b, ": ambiguous, the snippet matches ");
        size_t i;
        json_t *c;
        json_array_foreach(cands, i, c)
        {
            agti_buf_puts(b, i == 0 ? "lines " : ", ");
            put_lines(b, json_integer_value(json_array_get(c, 0)),
                      json_integer_value(json_array_get(c, 1)));
        }
        agti_buf_printf(b,
                        " (%s side) — kept at line 0. Send this comment again with a longer "
                        "existing_code that occurs only once.",
                        side);
        return;
    }
    if (s == 0) {
        const char *reason = str(a, "reason");
        agti_buf_printf(b,
                        ": not anchored — kept at line 0 (%s). To place it, send it again with "
                        "existing_code copied from the diff.",
                        reason ? reason : "the snippet was not found");
        return;
    }
    agti_buf_putc(b, ':');
    put_lines(b, s, e);
    agti_buf_printf(b, " (%s side", side);
    if (method != NULL && strcmp(method, "moved") == 0)
        agti_buf_printf(b, "; moved: the snippet is not in %s but only in this file",
                        requested ? requested : "the file asked for");
    else if (method != NULL && strcmp(method, "file") == 0)
        agti_buf_puts(b, "; outside the diff's hunks, found in the file after the change");
    if (json_is_true(json_object_get(a, "relocated")))
        agti_buf_puts(b, "; placed with a relocated snippet");
    agti_buf_puts(b, ")");
}

/* An anchor result in a sensitive file (a comment addressed to one, or a
 * snippet found only there) would tell the model whether a guessed line is
 * in it: such a result becomes unanchored. Addressed to one, the reason
 * says so (decided by the name alone); landed in one, it reads as if the
 * snippet had not been found. */
static int hide_sensitive(agt_call *call, agt_changes *c, json_t *comments, json_t *anchors,
                          const char *call_path, const agti_review *r)
{
    agti_review_guard g;
    if (agti_review_guard_init(&g, call, c) != AGT_OK)
        return AGT_ENOMEM;
    int rc = AGT_OK;
    for (size_t i = 0; i < json_array_size(anchors) && rc == AGT_OK; i++) {
        json_t *a = json_array_get(anchors, i);
        const char *req = comment_path(json_array_get(comments, i), call_path, r);
        const char *landed = str(a, "path");
        bool asked = req != NULL && agti_review_guard_path(&g, req, NULL);
        if (!asked && (landed == NULL || !agti_review_guard_path(&g, landed, NULL)))
            continue;
        char why[600];
        if (asked)
            snprintf(why, sizeof why, "%s is a sensitive file; comments are not placed in it", req);
        else
            snprintf(why, sizeof why, "%s",
                     req ? "the snippet was not found in the file's hunks or content"
                         : "the snippet was not found in the change set");
        json_t *u = json_pack("{s:o,s:o,s:i,s:i,s:s,s:s,s:b,s:[],s:b,s:i,s:s}", "path",
                              req ? json_string(req) : json_null(), "requested_path",
                              req ? json_string(req) : json_null(), "start_line", 0, "end_line", 0,
                              "side", "new", "method", "unanchored", "ambiguous", 0, "candidates",
                              "relocated", 0, "attempts", 0, "reason", why);
        if (u == NULL || json_array_set_new(anchors, i, u) != 0)
            rc = agti_oom();
    }
    agti_review_guard_free(&g);
    return rc;
}

static int comment_all(agt_call *call, agti_review *r, agt_changes *c, json_t *comments,
                       const char *call_path)
{
    json_t *in = anchor_input(comments, call_path, r);
    char *in_text = in ? agti_json_dump(in) : NULL;
    json_decref(in);
    if (in_text == NULL)
        return agti_oom();
    char *out_text = NULL;
    int rc = agt_diff_anchor_batch(agt_changes_diff(c), in_text, strlen(in_text), &out_text);
    free(in_text);
    if (rc == AGT_ECANCELLED)
        return fail(call, rc,
                    "Error: the host cancelled the placement of these comments; none was "
                    "stored.");
    if (rc != AGT_OK)
        return rc == AGT_ENOMEM ? rc : fail(call, rc, agt_error_message());
    json_t *anchors = agti_json_parse(out_text, strlen(out_text), "anchor results");
    agt_free(out_text);
    if (anchors == NULL)
        return agti_oom();
    if (hide_sensitive(call, c, comments, anchors, call_path, r) != AGT_OK) {
        json_decref(anchors);
        return AGT_ENOMEM;
    }
    size_t n = json_array_size(comments);
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b, "Stored %zu comment%s:", n, n == 1 ? "" : "s");
    json_t *stored = json_array();
    rc = stored ? AGT_OK : agti_oom();
    for (size_t i = 0; i < n && rc == AGT_OK; i++) {
        json_t *cm = json_array_get(comments, i), *a = json_array_get(anchors, i);
        json_t *o = stored_comment(cm, a, comment_path(cm, call_path, r), r);
        if (o == NULL || json_array_append(stored, o) != 0) {
            json_decref(o);
            rc = agti_oom();
            break;
        }
        ack_one(&b, i + 1, o, a);
        rc = store(r, o);
    }
    json_decref(anchors);
    char *json = rc == AGT_OK ? agti_json_dump(stored) : NULL;
    json_decref(stored);
    if (rc == AGT_OK && (b.oom || json == NULL))
        rc = agti_oom();
    if (rc == AGT_OK)
        rc = agt_call_set_text(call, agti_buf_cstr(&b));
    if (rc == AGT_OK)
        rc = agt_call_set_json(call, json, strlen(json));
    agti_buf_free(&b);
    agt_free(json);
    return rc;
}

int agti_tool_code_comment(agt_call *call, void *payload)
{
    (void)payload;
    json_t *args = agti_call_args_json(call);
    json_t *comments = json_object_get(args, "comments");
    size_t n = json_array_size(comments);
    if (n == 0)
        return fail(call, AGT_EINVAL, "Error: comments is empty; send at least one comment.");
    for (size_t i = 0; i < n; i++) {
        json_t *cm = json_array_get(comments, i);
        const char *code = str(cm, "existing_code");
        if (str(cm, "content") == NULL || code == NULL) {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "Error: comment %zu needs a \"content\" and an \"existing_code\" string.",
                     i + 1);
            return fail(call, AGT_EINVAL, msg);
        }
    }
    agt_session *s = agt_call_session(call);
    agti_review *r = s ? agti_session_review(s) : NULL;
    if (s == NULL)
        return fail(call, AGT_ESTATE, "Error: code_comment needs a session to store comments in.");
    if (r == NULL)
        return agti_oom();
    if (json_array_size(r->comments) + n > AGTI_REVIEW_MAX_COMMENTS) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "Error: a review holds at most %d comments and %zu are stored; keep only the "
                 "most important ones.",
                 AGTI_REVIEW_MAX_COMMENTS, json_array_size(r->comments));
        return fail(call, AGT_ELIMIT, msg);
    }
    agt_changes *c = NULL;
    int rc = agti_review_tool_changes(call, &c);
    if (rc != AGT_OK)
        return rc;
    return comment_all(call, r, c, comments, str(args, "path"));
}
