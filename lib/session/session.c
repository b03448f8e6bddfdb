#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "policy.h"
#include "review_internal.h"
#include "seen.h"
#include "session_internal.h"

int agt_session_new(agt_session **out, agt_registry *reg, const char *workspace_root)
{
    if (out == NULL || reg == NULL || workspace_root == NULL)
        return agti_error(AGT_EINVAL, "agt_session_new: %s",
                          out == NULL   ? "out is NULL"
                          : reg == NULL ? "reg is NULL (pass the registry the session offers)"
                                        : "workspace_root is NULL (pass the folder the tools "
                                          "work in)");
    *out = NULL;
    char *root = realpath(workspace_root, NULL);
    if (root == NULL)
        return agti_error(errno == ENOMEM ? AGT_ENOMEM : AGT_ENOTFOUND,
                          "workspace root '%s' cannot be resolved: %s", workspace_root,
                          strerror(errno));
    struct stat st;
    if (stat(root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        free(root);
        return agti_error(AGT_ENOTFOUND, "workspace root '%s' is not a directory", workspace_root);
    }
    agt_session *s = calloc(1, sizeof *s);
    json_t *todos = json_array();
    agti_policy *policy = agti_policy_new();
    struct agti_seen *seen = agti_seen_new();
    if (s == NULL || todos == NULL || policy == NULL || seen == NULL) {
        free(root);
        free(s);
        json_decref(todos);
        agti_policy_free(policy);
        agti_seen_free(seen);
        return agti_oom();
    }
    s->seen = seen;
    s->reg = reg;
    s->root = root;
    s->mode = AGT_MODE_MANUAL;
    s->phase = AGT_PHASE_ALL;
    s->todos = todos;
    s->policy = policy;
    *out = s;
    return AGT_OK;
}

void agt_session_free(agt_session *s)
{
    if (s == NULL)
        return;
    agti_error_forget(s);
    free(s->root);
    json_decref(s->todos);
    agti_session_bg_free(s->bg);
    agti_policy_free(s->policy);
    agti_review_free(s->review);
    agti_fs_settings_free(s->fs);
    agti_sb_settings_free(s->sandbox);
    agti_seen_free(s->seen);
    free(s);
}

const char *agt_session_root(const agt_session *s)
{
    return s ? s->root : NULL;
}

agt_registry *agt_session_registry(const agt_session *s)
{
    return s ? s->reg : NULL;
}

int agt_session_set_mode(agt_session *s, int mode)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_mode: session is NULL");
    if (mode < AGT_MODE_MANUAL || mode > AGT_MODE_AUTO)
        return agti_error(AGT_EINVAL, "agt_session_set_mode: unknown mode %d", mode);
    agti_plan_mode_changed(s, s->mode, mode);
    s->mode = mode;
    return AGT_OK;
}

int agt_session_mode(const agt_session *s)
{
    return s ? s->mode : AGT_MODE_MANUAL;
}

int agt_session_set_phase(agt_session *s, int phase)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_phase: session is NULL");
    if (phase != AGT_PHASE_ALL && phase != AGT_PHASE_PLAN && phase != AGT_PHASE_MAIN)
        return agti_error(AGT_EINVAL, "agt_session_set_phase: unknown phase %d", phase);
    s->phase = phase;
    return AGT_OK;
}

int agt_session_phase(const agt_session *s)
{
    return s ? s->phase : AGT_PHASE_ALL;
}

int agt_session_dispatch(agt_session *s, const char *call_id, const char *tool,
                         const char *args_json, agt_result **out)
{
    if (out != NULL)
        *out = NULL;
    /* checked here: the approval path frees *out when dispatch fails */
    if (s == NULL || tool == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "agt_session_dispatch: %s",
                          s == NULL      ? "the session is NULL"
                          : tool == NULL ? "tool is NULL (pass the tool name the model called)"
                                         : "out is NULL");
    int rc = agti_session_dispatch(s, call_id, tool, args_json, out);
    if (rc == AGT_EPENDING)
        /* common.h: the last error describes the last failure; a host that
         * logs it after this return would otherwise print a stale one */
        agti_error(AGT_EPENDING,
                   "the %s call %s waits for the user's approval (agt_session_pending)", tool,
                   call_id ? call_id : "(no id)");
    agti_error_keep(s, rc);
    return rc;
}

int agt_session_todos(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_todos: session or out_json is NULL");
    *out_json = agti_json_dump(s->todos);
    return *out_json ? AGT_OK : agti_oom();
}
