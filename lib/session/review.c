/*
 * The review state of a session: which change set the review tools work on,
 * the file under review, the model's reasoning of the current turn, the
 * comments code_comment stored, and whether task_done ended the review.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "review_internal.h"
#include "session_internal.h"

agti_review *agti_session_review(agt_session *s)
{
    if (s->review != NULL)
        return s->review;
    agti_review *r = calloc(1, sizeof *r);
    json_t *comments = json_array();
    if (r == NULL || comments == NULL) {
        free(r);
        json_decref(comments);
        return NULL;
    }
    r->comments = comments;
    s->review = r;
    return r;
}

static void drop_changes(agti_review *r)
{
    if (r->owned)
        agt_changes_free(r->changes);
    else if (r->changes != NULL)
        /* a borrowed change set goes back to its owner without our callback */
        agt_diff_set_relocator(agt_changes_diff(r->changes), NULL, 1, NULL);
    r->changes = NULL;
    r->owned = false;
}

void agti_review_free(agti_review *r)
{
    if (r == NULL)
        return;
    drop_changes(r);
    free(r->file);
    free(r->thinking);
    json_decref(r->comments);
    free(r);
}

static void install_relocator(agti_review *r)
{
    if (r->changes == NULL)
        return;
    agt_diff *d = agt_changes_diff(r->changes);
    if (r->reloc != NULL)
        agt_diff_set_relocator(d, r->reloc, r->reloc_max, r->reloc_payload);
    else
        agt_diff_set_relocator(d, NULL, 1, NULL);
}

static void use_changes(agti_review *r, agt_changes *c, bool owned)
{
    drop_changes(r);
    r->changes = c;
    r->owned = owned;
    r->done = false;
    r->failed = false;
    install_relocator(r);
}

int agti_review_changes(agt_session *s, agt_changes **out)
{
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    if (r->changes == NULL) {
        agt_changes *c = NULL;
        int rc = agt_changes_open(&c, s->root, AGT_CHANGES_WORKSPACE, NULL, NULL);
        if (rc != AGT_OK)
            return rc;
        r->changes = c;
        r->owned = true;
        install_relocator(r);
    }
    *out = r->changes;
    return AGT_OK;
}

int agt_session_open_review(agt_session *s, const char *repo_path, int mode, const char *from,
                            const char *to)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_open_review: session is NULL");
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, repo_path ? repo_path : s->root, mode, from, to);
    if (rc != AGT_OK)
        return rc;
    use_changes(r, c, true);
    return AGT_OK;
}

int agt_session_set_changes(agt_session *s, agt_changes *c)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_changes: session is NULL");
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    if (c != NULL && c == r->changes) {
        r->done = r->failed = false;
        return AGT_OK;
    }
    use_changes(r, c, false);
    return AGT_OK;
}

agt_changes *agt_session_changes(const agt_session *s)
{
    return s && s->review ? s->review->changes : NULL;
}

int agt_session_set_relocator(agt_session *s, agt_diff_relocate_fn fn, int max_attempts,
                              void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_relocator: session is NULL");
    if (fn != NULL && (max_attempts < 1 || max_attempts > 10))
        return agti_error(AGT_EINVAL, "agt_session_set_relocator: max_attempts %d is outside 1..10",
                          max_attempts);
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    r->reloc = fn;
    r->reloc_max = fn ? max_attempts : 1;
    r->reloc_payload = fn ? payload : NULL;
    install_relocator(r);
    return AGT_OK;
}

static int set_string(char **slot, const char *text)
{
    char *copy = NULL;
    if (text != NULL && text[0] != '\0') {
        copy = agti_strdup(text);
        if (copy == NULL)
            return agti_oom();
    }
    free(*slot);
    *slot = copy;
    return AGT_OK;
}

int agt_session_set_review_file(agt_session *s, const char *path)
{
    if (s == NULL || (path != NULL && path[0] == '\0'))
        return agti_error(AGT_EINVAL, "agt_session_set_review_file: %s",
                          s == NULL ? "session is NULL" : "path is empty (pass NULL to clear)");
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    int rc = set_string(&r->file, path);
    if (rc == AGT_OK)
        r->done = r->failed = false;
    return rc;
}

const char *agt_session_review_file(const agt_session *s)
{
    return s && s->review ? s->review->file : NULL;
}

int agt_session_set_turn_thinking(agt_session *s, const char *text)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_turn_thinking: session is NULL");
    agti_review *r = agti_session_review(s);
    if (r == NULL)
        return agti_oom();
    return set_string(&r->thinking, text);
}

int agt_session_review_done(const agt_session *s)
{
    return s && s->review && s->review->done ? 1 : 0;
}

const char *agt_session_review_state(const agt_session *s)
{
    if (!agt_session_review_done(s))
        return NULL;
    return s->review->failed ? "FAILED" : "DONE";
}

int agt_session_comments(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_comments: session or out_json is NULL");
    if (s->review == NULL) {
        *out_json = agti_strdup("[]");
    } else {
        *out_json = agti_json_dump(s->review->comments);
    }
    return *out_json ? AGT_OK : agti_oom();
}

int agt_session_clear_comments(agt_session *s)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_clear_comments: session is NULL");
    if (s->review != NULL)
        json_array_clear(s->review->comments);
    return AGT_OK;
}

/* ---- save and restore: section "comments" ----------------------------- */

int agti_review_section_save(const agt_session *s, json_t **value)
{
    *value = NULL;
    if (s->review == NULL || json_array_size(s->review->comments) == 0)
        return AGT_OK;
    *value = json_deep_copy(s->review->comments);
    return *value ? AGT_OK : agti_oom();
}

static bool string_or_null(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return v == NULL || json_is_null(v) || json_is_string(v);
}

static int check_comment(json_t *c, size_t i)
{
    static const char *const strings[] = {"path",           "suggestion_code", "category",
                                          "severity",       "thinking",        "method",
                                          "requested_path", "reason"};
    if (!json_is_object(c))
        return agti_error(AGT_EINVALID, "session file: \"comments\"[%zu] is not an object", i);
    if (!json_is_string(json_object_get(c, "content")) ||
        !json_is_string(json_object_get(c, "existing_code")))
        return agti_error(AGT_EINVALID,
                          "session file: \"comments\"[%zu] needs string \"content\" and "
                          "\"existing_code\"",
                          i);
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++)
        if (!string_or_null(c, strings[k]))
            return agti_error(AGT_EINVALID,
                              "session file: \"comments\"[%zu].%s must be a string or null", i,
                              strings[k]);
    json_t *sl = json_object_get(c, "start_line"), *el = json_object_get(c, "end_line");
    if (!json_is_integer(sl) || !json_is_integer(el) || json_integer_value(sl) < 0 ||
        json_integer_value(el) < json_integer_value(sl))
        return agti_error(AGT_EINVALID,
                          "session file: \"comments\"[%zu] needs integer \"start_line\" and "
                          "\"end_line\" with 0 <= start_line <= end_line",
                          i);
    const char *side = json_string_value(json_object_get(c, "side"));
    if (side == NULL || (strcmp(side, "new") != 0 && strcmp(side, "old") != 0))
        return agti_error(AGT_EINVALID,
                          "session file: \"comments\"[%zu].side must be \"new\" or \"old\"", i);
    return AGT_OK;
}

int agti_review_section_load(agt_session *s, json_t *value, void **tmp)
{
    /* created here (empty, invisible) so that commit cannot fail */
    if (agti_session_review(s) == NULL)
        return agti_oom();
    if (value != NULL && !json_is_array(value))
        return agti_error(AGT_EINVALID, "session file: \"comments\" must be an array");
    if (json_array_size(value) > AGTI_REVIEW_MAX_COMMENTS)
        return agti_error(AGT_EINVALID, "session file: \"comments\" holds more than %d comments",
                          AGTI_REVIEW_MAX_COMMENTS);
    size_t i;
    json_t *c;
    json_array_foreach(value, i, c)
    {
        int rc = check_comment(c, i);
        if (rc != AGT_OK)
            return rc;
    }
    json_t *copy = value ? json_deep_copy(value) : json_array();
    if (copy == NULL)
        return agti_oom();
    *tmp = copy;
    return AGT_OK;
}

void agti_review_section_commit(agt_session *s, void *tmp)
{
    agti_review *r = s->review; /* created by the load */
    json_decref(r->comments);
    r->comments = tmp;
}

void agti_review_section_discard(void *tmp)
{
    json_decref((json_t *)tmp);
}
