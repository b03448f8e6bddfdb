/* EnterPlanMode / ExitPlanMode. The session's gate has already enforced the
 * preconditions of ExitPlanMode (plan mode, a non-empty plan, option labels)
 * and obtained the user's approval; this only switches the mode and tells
 * the model what happened. */
#include <string.h>
#include <strings.h>

#include "core/core.h"
#include "dispatch/dispatch_internal.h"
#include "session/policy.h"
#include "session/session_internal.h"
#include "tools_internal.h"

static const char *mode_name(int mode)
{
    static const char *const names[] = {"manual", "plan", "yolo", "auto"};
    return mode >= 0 && mode <= 3 ? names[mode] : "manual";
}

static int finish(agt_call *call, agti_buf *b, json_t *doc)
{
    char *json = doc ? agti_json_dump(doc) : NULL;
    json_decref(doc);
    int rc = (b->oom || json == NULL) ? agti_oom() : agt_call_set_text(call, agti_buf_cstr(b));
    if (rc == AGT_OK)
        rc = agt_call_set_json(call, json, strlen(json));
    agti_buf_free(b);
    agt_free(json);
    return rc;
}

int agti_tool_enter_plan_mode(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    agti_buf b = AGTI_BUF_INIT;
    const char *path;
    int rc = agti_plan_ensure_file(s, &path);
    if (rc != AGT_OK)
        return rc;
    if (s->mode == AGT_MODE_PLAN) {
        agti_buf_printf(&b, "Already in plan mode. The plan file is %s.", path);
        return finish(call, &b, json_pack("{s:s}", "plan_file", path));
    }
    agt_session_set_mode(s, AGT_MODE_PLAN);
    agti_buf_printf(&b,
                    "Plan mode is on. Explore with the read-only tools and write your plan to "
                    "the plan file %s (Write and Edit may change only that file while planning). "
                    "When the plan is ready, call ExitPlanMode to ask the user to approve it.",
                    path);
    return finish(call, &b, json_pack("{s:s}", "plan_file", path));
}

int agti_tool_exit_plan_mode(agt_call *call, void *payload)
{
    (void)payload;
    agt_session *s = agt_call_session(call);
    const char *reason = s->policy->exit_reason;
    const char *chosen = NULL;
    json_t *options = json_object_get(agti_call_args_json(call), "options");
    size_t i;
    json_t *o;
    json_array_foreach(options, i, o)
    {
        const char *label = json_string_value(json_object_get(o, "label"));
        if (reason != NULL && label != NULL && strcasecmp(reason, label) == 0)
            chosen = label;
    }
    int back = s->policy->mode_before_plan;
    if (back == AGT_MODE_PLAN)
        back = AGT_MODE_MANUAL;
    agt_session_set_mode(s, back);
    const char *plan = s->policy->plan_file ? s->policy->plan_file : "";
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b,
                    "The user approved the plan. Plan mode is over and the session is back in "
                    "%s mode. Carry out the plan in %s.",
                    mode_name(back), plan);
    if (chosen != NULL)
        agti_buf_printf(&b, "\nThe user chose the option: %s", chosen);
    else if (reason != NULL && reason[0] != '\0')
        agti_buf_printf(&b, "\nThe user's comment: %s", reason);
    return finish(call, &b,
                  json_pack("{s:b, s:s, s:s, s:s?}", "approved", 1, "mode", mode_name(back),
                            "plan_file", plan, "option", chosen));
}
