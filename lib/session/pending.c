/* Pending approvals: a call that must ask while the host set no synchronous
 * approver is parked until agt_session_answer(); agt_session_pending() lists
 * them, agti_session_repark() parks a restored call again. */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "outside.h"
#include "policy.h"
#include "session_internal.h"
#include "subapproval.h"

static void pending_clear(agti_pending *q)
{
    free(q->call_id);
    free(q->tool);
    free(q->args);
    free(q->reason);
    free(q->suggested);
    free(q->folder);
}

void agti_policy_drop_pending(agti_policy *p)
{
    for (size_t i = 0; i < p->npending; i++)
        pending_clear(&p->pending[i]);
    p->npending = 0;
}

int agti_pending_park(agt_session *s, agt_call *call, char *why, char *suggested)
{
    agti_policy *p = s->policy;
    for (size_t i = 0; i < p->npending; i++)
        if (strcmp(p->pending[i].call_id, agt_call_id(call)) == 0) {
            free(why);
            free(suggested);
            return agti_error(AGT_EEXISTS, "call id '%s' is already waiting for approval",
                              agt_call_id(call));
        }
    if (agti_grow(&p->pending, &p->cappending, p->npending, sizeof *p->pending, 8) != AGT_OK) {
        free(why);
        free(suggested);
        return AGT_ENOMEM;
    }
    bool outside = call->outside_dir != NULL && !call->outside_admitted;
    agti_pending q = {agti_strdup(agt_call_id(call)),
                      agti_strdup(agt_call_tool(call)),
                      agti_strdup(agt_call_args(call)),
                      why,
                      suggested,
                      outside ? agti_strdup(call->outside_dir) : NULL,
                      call->outside_write};
    if (!q.call_id || !q.tool || !q.args || (outside && !q.folder)) {
        pending_clear(&q);
        return agti_oom();
    }
    p->pending[p->npending++] = q;
    return AGT_EPENDING;
}

/* The gate of agti_session_repark: parks the call with the reason and
 * suggested rule a dispatch would give it now. */
static int repark_gate(void *ctx, agt_call *call, agt_result **out)
{
    agt_session *s = ctx;
    const char *tool = agt_call_tool(call);
    agti_verdict v;
    int rc = agti_policy_evaluate(s, tool, agti_call_args_json(call), &v);
    if (rc != AGT_OK) {
        agti_verdict_clear(&v);
        return rc;
    }
    rc = agti_gate_verdict_check(s, call, &v, out);
    bool ask = false;
    char *why = NULL;
    if (rc == AGT_OK)
        rc = agti_gate_need_ask(s, call, &v, &ask, &why);
    if (rc == AGT_OK && !ask) {
        free(why);
        why = agti_strdup("it waited for approval when the session was saved");
        rc = why ? AGT_OK : agti_oom();
    }
    if (rc == AGT_OK)
        rc = agti_pending_park(s, call, why,
                               agti_suggest_rule(s, tool, agti_call_args_json(call), &v));
    else
        free(why);
    agti_verdict_clear(&v);
    return rc;
}

int agti_session_repark(agt_session *s, const char *call_id, const char *tool, const char *args)
{
    for (size_t i = 0; i < s->policy->npending; i++)
        if (strcmp(s->policy->pending[i].call_id, call_id) == 0)
            return AGT_OK;
    agti_dispatch_env env = {s->reg, s->phase, s, repark_gate, s};
    agt_result *r = NULL;
    int rc = agti_dispatch(&env, call_id, tool, args, &r);
    if (rc == AGT_OK)
        rc = agti_error(AGT_EINVALID, "tool call '%s' (%s) cannot wait for approval again: %s",
                        call_id, tool, r ? agt_result_text(r) : "refused");
    agt_result_free(r);
    return rc == AGT_EPENDING ? AGT_OK : rc;
}

int agt_session_pending(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_pending: session or out_json is NULL");
    *out_json = NULL;
    json_t *list = json_array();
    const agti_policy *p = s->policy;
    for (size_t i = 0; list != NULL && i < p->npending; i++) {
        const agti_pending *q = &p->pending[i];
        json_t *args = json_loads(q->args, 0, NULL);
        /* a call id or a command's words need not be UTF-8: agti_json_text */
        json_t *item =
            json_pack("{s:o, s:o, s:o, s:o, s:o}", "call_id", agti_json_text(q->call_id), "tool",
                      agti_json_text(q->tool), "arguments", args ? args : json_object(), "reason",
                      agti_json_text(q->reason ? q->reason : ""), "suggested_rule",
                      agti_json_text(q->suggested));
        if (item != NULL && q->suggested != NULL && strchr(q->suggested, '\n') != NULL &&
            json_object_set_new(item, "suggested_rules", agti_rule_lines(q->suggested)) != 0) {
            json_decref(item);
            item = NULL;
        }
        if (item != NULL && q->folder != NULL &&
            json_object_set_new(item, "outside", agti_outside_json(q->folder, q->folder_write)) !=
                0) {
            json_decref(item);
            item = NULL;
        }
        if (item == NULL || json_array_append_new(list, item) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    if (list != NULL) {
        int rc = agti_subappr_list_pending(s, list);
        if (rc != AGT_OK) {
            json_decref(list);
            return rc;
        }
    }
    *out_json = list ? agti_json_dump(list) : NULL;
    json_decref(list);
    return *out_json ? AGT_OK : agti_oom();
}

static int answer(agt_session *s, const char *call_id, int decision, const char *rule,
                  const char *reason, agt_result **out)
{
    if (out != NULL)
        *out = NULL;
    if (s == NULL || call_id == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "agt_session_answer: session, call_id or out is NULL");
    if (decision < AGT_DECISION_APPROVE || decision > AGT_DECISION_REJECT)
        return agti_error(AGT_EINVAL, "agt_session_answer: unknown decision %d", decision);
    agti_policy *p = s->policy;
    size_t i = 0;
    while (i < p->npending && strcmp(p->pending[i].call_id, call_id) != 0)
        i++;
    if (i == p->npending)
        return agti_error(AGT_ENOTFOUND, "no call with id '%s' is waiting for approval", call_id);
    agti_pending q = p->pending[i];
    bool plan_exit = strcmp(q.tool, "ExitPlanMode") == 0;
    if (decision == AGT_DECISION_APPROVE_SESSION && !plan_exit) {
        const char *text = rule ? rule : q.suggested;
        if (text != NULL) {
            int rc = agti_gate_add_session_rule(s, text);
            if (rc != AGT_OK)
                return rc; /* the call stays pending */
        }
        if (q.folder != NULL) {
            int rc = agti_gate_add_outside_root(s, q.folder, q.folder_write);
            if (rc != AGT_OK)
                return rc;
        }
    }
    memmove(&p->pending[i], &p->pending[i + 1], (p->npending - i - 1) * sizeof *p->pending);
    p->npending--;
    int rc;
    if (decision == AGT_DECISION_REJECT) {
        char *text = agti_gate_declined_text(s, q.tool, reason);
        *out = text ? agti_result_new(q.call_id, q.tool, text, true, AGT_EDENIED) : NULL;
        free(text);
        rc = *out ? AGT_OK : agti_oom();
    } else {
        rc = agti_gate_run(s, q.call_id, q.tool, q.args, true, reason, out);
    }
    pending_clear(&q);
    return rc;
}

int agt_session_answer(agt_session *s, const char *call_id, int decision, const char *reason,
                       agt_result **out)
{
    int rc = answer(s, call_id, decision, NULL, reason, out);
    agti_error_keep(s, rc);
    return rc;
}

int agt_session_answer_rule(agt_session *s, const char *call_id, const char *rule,
                            const char *reason, agt_result **out)
{
    int rc = rule == NULL ? agti_error(AGT_EINVAL, "agt_session_answer_rule: rule is NULL")
                          : answer(s, call_id, AGT_DECISION_APPROVE_SESSION, rule, reason, out);
    agti_error_keep(s, rc);
    return rc;
}
