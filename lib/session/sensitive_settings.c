/* The session's sensitive-file policy and FetchURL's address policy: host
 * settings of what the tools may show the model and where they may
 * connect. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fs/fs.h"
#include "fs_settings.h"
#include "session_internal.h"
#include "tools/review_guard.h"

const struct agti_sensitive *agti_session_sensitive(const agt_session *s)
{
    return s != NULL && s->fs != NULL ? s->fs->sensitive : NULL;
}

/* The session's own copy of the policy, made from the built-in list on the
 * first change. */
static int own_policy(agt_session *s, agti_sensitive **out)
{
    agti_fs_settings *fs = agti_session_fs_settings(s);
    if (fs == NULL)
        return agti_oom();
    if (fs->sensitive == NULL) {
        int rc = agti_sensitive_new(&fs->sensitive);
        if (rc != AGT_OK)
            return rc;
    }
    *out = fs->sensitive;
    return AGT_OK;
}

int agt_session_add_sensitive_pattern(agt_session *s, const char *pattern)
{
    if (s == NULL || pattern == NULL)
        return agti_error(AGT_EINVAL, "agt_session_add_sensitive_pattern: %s is NULL",
                          s == NULL ? "session" : "pattern");
    agti_sensitive *pol = NULL;
    int rc = own_policy(s, &pol);
    return rc == AGT_OK ? agti_sensitive_add(pol, pattern) : rc;
}

int agt_session_remove_sensitive_pattern(agt_session *s, const char *pattern)
{
    if (s == NULL || pattern == NULL)
        return agti_error(AGT_EINVAL, "agt_session_remove_sensitive_pattern: %s is NULL",
                          s == NULL ? "session" : "pattern");
    agti_sensitive *pol = NULL;
    int rc = own_policy(s, &pol);
    return rc == AGT_OK ? agti_sensitive_remove(pol, pattern) : rc;
}

int agt_session_sensitive_patterns(const agt_session *s, char **out_json)
{
    if (out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_sensitive_patterns: out_json is NULL");
    *out_json = NULL;
    const agti_sensitive *pol = agti_session_sensitive(s);
    json_t *a = json_array();
    size_t n = agti_sensitive_count(pol);
    for (size_t i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_string(agti_sensitive_pattern(pol, i))) != 0) {
            json_decref(a);
            a = NULL;
        }
    char *text = a != NULL ? agti_json_dump(a) : NULL;
    json_decref(a);
    if (text == NULL)
        return agti_oom();
    *out_json = text;
    return AGT_OK;
}

int agt_session_check_sensitive(const agt_session *s, const char *path, const char *content,
                                size_t len, const char **reason)
{
    if (reason != NULL)
        *reason = NULL;
    if (path == NULL)
        return agti_error(AGT_EINVAL, "agt_session_check_sensitive: path is NULL");
    if (content == NULL && len > 0)
        return agti_error(AGT_EINVAL, "agt_session_check_sensitive: content is NULL with len %zu",
                          len);
    const agti_sensitive *pol = agti_session_sensitive(s);
    if (agti_sensitive_check(pol, path, content, len, reason))
        return 1;
    /* with a change set under review, its other names of sensitive files
     * too (renames, copies, moves, hard links), as the review tools judge */
    agt_changes *c = agt_session_changes(s);
    if (c == NULL)
        return 0;
    agti_review_guard g;
    if (agti_review_guard_init_pol(&g, pol, c) != AGT_OK) {
        if (reason != NULL)
            *reason = "could not be checked against the change set (out of memory)";
        return 1; /* fail closed */
    }
    bool hit = agti_review_guard_diff(&g, path, reason);
    agti_review_guard_free(&g);
    return hit ? 1 : 0;
}

int agti_session_copy_secrets(agt_session *dst, const agt_session *src)
{
    if (src == NULL || src->fs == NULL)
        return AGT_OK;
    agti_fs_settings *fs = agti_session_fs_settings(dst);
    if (fs == NULL)
        return agti_oom();
    fs->fetch_private = src->fs->fetch_private;
    if (src->fs->sensitive == NULL)
        return AGT_OK;
    agti_sensitive *copy = NULL;
    int rc = agti_sensitive_clone(&copy, src->fs->sensitive);
    if (rc != AGT_OK)
        return rc;
    agti_sensitive_free(fs->sensitive);
    fs->sensitive = copy;
    return AGT_OK;
}

int agt_session_set_fetch_private(agt_session *s, int allow)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_fetch_private: session is NULL");
    agti_fs_settings *fs = agti_session_fs_settings(s);
    if (fs == NULL)
        return agti_oom();
    fs->fetch_private = allow != 0;
    return AGT_OK;
}

bool agti_session_fetch_private(const agt_session *s)
{
    return s != NULL && s->fs != NULL && s->fs->fetch_private;
}
