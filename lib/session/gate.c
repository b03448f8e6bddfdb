/* Approval: the gate the dispatcher calls before a provider runs. It applies
 * deny rules and plan-mode limits, then decides from the mode, the rules and
 * the tool's access class whether to ask; asking goes to the synchronous
 * approver when the host set one, else the call is parked as pending until
 * agt_session_answer(). */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "outside.h"
#include "policy.h"
#include "sandbox_settings.h"
#include "session_internal.h"
#include "subapproval.h"

int agti_refuse(agt_call *call, int status, const char *text, agt_result **out)
{
    agt_result *r = agti_result_new(agt_call_id(call), agt_call_tool(call), text, true, status);
    if (r == NULL)
        return agti_oom();
    *out = r;
    return AGT_EDENIED;
}

static const char *mode_name(int mode)
{
    static const char *const names[] = {"manual", "plan", "yolo", "auto"};
    return mode >= 0 && mode <= 3 ? names[mode] : "manual";
}

static const char *access_phrase(int access)
{
    switch (access) {
    case AGT_ACCESS_WRITE:
        return "changes files";
    case AGT_ACCESS_EXECUTE:
        return "runs commands";
    case AGT_ACCESS_NETWORK:
        return "reaches the network";
    case AGT_ACCESS_HOST:
        return "is handled by the host";
    default:
        return "reads the workspace";
    }
}

/* What a call of the tool does, for the approval reason: the access class
 * says it in general; the tools whose class would mislead the user (the cron
 * and task tools write the session's state, not files) say it themselves. */
static const char *tool_phrase(const char *tool, int access)
{
    if (strcmp(tool, "CronCreate") == 0)
        return "schedules a prompt";
    if (strcmp(tool, "CronDelete") == 0)
        return "deletes a scheduled prompt";
    if (strcmp(tool, "TaskStop") == 0)
        return "stops a background task";
    return access_phrase(access);
}

/* ---- the decision ----------------------------------------------------- */

/* The mode whose approval rules apply. Plan mode is a working state laid
 * over the permission mode it was entered from, not a permission mode of
 * its own: besides its limits (plan.c) every tool stays under the rules of
 * the mode before it, so a session that entered plan mode from yolo runs
 * Bash without asking, as the reference agent does. */
int agti_gate_approval_mode(const agt_session *s)
{
    if (s->mode != AGT_MODE_PLAN)
        return s->mode;
    int before = s->policy->mode_before_plan;
    return before == AGT_MODE_PLAN ? AGT_MODE_MANUAL : before;
}

/* Tools the reference agent runs without asking although their access
 * class alone would ask: FetchURL and WebSearch (network), Agent,
 * AskUserQuestion and Skill (host). A rule still decides over this. */
static bool auto_allowed(const char *tool, int access)
{
    if (access == AGT_ACCESS_NETWORK)
        return strcmp(tool, "FetchURL") == 0 || strcmp(tool, "WebSearch") == 0;
    if (access == AGT_ACCESS_HOST)
        return strcmp(tool, "Agent") == 0 || strcmp(tool, "AskUserQuestion") == 0 ||
               strcmp(tool, "Skill") == 0;
    return access == AGT_ACCESS_READ;
}

/* Whether the call must ask; *why gets the reason (malloc'd). */
int agti_gate_need_ask(agt_session *s, agt_call *call, agti_verdict *v, bool *ask, char **why)
{
    const char *tool = agt_call_tool(call);
    int kind = v->kind;
    int mode = agti_gate_approval_mode(s);
    *ask = false;
    *why = NULL;
    /* A file tool's path outside every folder: asks in manual and plan
     * mode, runs in yolo and auto mode (outside.c); an allow rule naming
     * such paths is the user's answer already. */
    int orc = agti_outside_check(s, call);
    if (orc != AGT_OK)
        return orc;
    if (call->outside_dir != NULL && !call->outside_admitted) {
        bool rule_allows = kind == AGT_RULE_ALLOW && v->rule != NULL && v->rule->abs;
        if (s->mode == AGT_MODE_YOLO || s->mode == AGT_MODE_AUTO || rule_allows) {
            call->outside_admitted = true;
        } else {
            *ask = true;
            *why = agti_outside_reason(s, call);
            return *why ? AGT_OK : agti_oom();
        }
    }
    char *escape = agti_sandbox_escape_reason(s, call); /* sandbox hook (sandbox_settings.c) */
    if (strcmp(tool, "ExitPlanMode") == 0) {
        *ask = true;
        *why = agti_strdup("ExitPlanMode always asks the user to approve the plan");
    } else if (escape != NULL) {
        *ask = true; /* in every mode, whatever the rules allow */
        *why = escape;
        escape = NULL;
    } else if (mode == AGT_MODE_YOLO || mode == AGT_MODE_AUTO) {
        return AGT_OK;
    } else if (s->mode == AGT_MODE_PLAN && kind != AGT_RULE_ASK &&
               (agti_plan_file_tool(tool) || strcmp(tool, "apply_patch") == 0)) {
        return AGT_OK; /* the plan check let it through: it is the plan file */
    } else if (v->closed != NULL) {
        *ask = true;
        *why = agti_aprintf("this command cannot be checked before it runs: %s", v->closed);
    } else if (kind == AGT_RULE_ASK) {
        *ask = true;
        *why = agti_aprintf("the rule '%s' is in the ask list", v->rule->text);
    } else if (kind == AGT_RULE_ALLOW) {
        return AGT_OK;
    } else if (agti_sandbox_auto_allows(s, call)) { /* sandbox hook (sandbox_settings.c) */
        return AGT_OK;
    } else {
        int access = call->entry->access;
        if (auto_allowed(tool, access))
            return AGT_OK;
        *ask = true;
        if (agti_verdict_details(v) != AGT_OK)
            return AGT_ENOMEM;
        size_t nu = v->uncovered ? json_array_size(v->uncovered) : 0;
        if (v->unallowed != NULL && nu <= 1) {
            *why = agti_strdup(v->unallowed);
        } else if (nu > 0 && v->ncommands > 1) {
            agti_buf b = AGTI_BUF_INIT;
            for (size_t i = 0; i < nu; i++)
                agti_buf_printf(&b, "%s'%s'", i ? ", " : "",
                                json_string_value(json_array_get(v->uncovered, i)));
            *why = b.oom ? NULL
                         : agti_aprintf("the command part%s %s %s not covered by an allow rule%s%s",
                                        nu > 1 ? "s" : "", agti_buf_cstr(&b), nu > 1 ? "are" : "is",
                                        v->unallowed ? "; " : "", v->unallowed ? v->unallowed : "");
            agti_buf_free(&b);
        } else {
            *why = agti_aprintf("%s %s (access: %s) and the session is in %s mode", tool,
                                tool_phrase(tool, access),
                                access == AGT_ACCESS_WRITE     ? "write"
                                : access == AGT_ACCESS_EXECUTE ? "execute"
                                : access == AGT_ACCESS_NETWORK ? "network"
                                                               : "host",
                                mode_name(s->mode));
        }
    }
    return *why ? AGT_OK : agti_oom();
}

static int refuse_text(agt_call *call, char *text, agt_result **out)
{
    if (text == NULL)
        return agti_oom();
    int rc = agti_refuse(call, AGT_EDENIED, text, out);
    free(text);
    return rc;
}

/* Deny rules, limits, undecidable commands where nothing asks, and
 * plan-mode limits, on a verdict of the call's arguments. */
int agti_gate_verdict_check(agt_session *s, agt_call *call, const agti_verdict *v, agt_result **out)
{
    const char *tool = agt_call_tool(call);
    if (v->kind == AGT_RULE_DENY)
        return refuse_text(call,
                           agti_aprintf("%s call refused: the rule '%s' in the deny list forbids "
                                        "it. Do not retry it; take another approach or ask the "
                                        "user to change the rules.",
                                        tool, v->rule->text),
                           out);
    if (v->refused != NULL)
        return refuse_text(call, agti_aprintf("%s call refused: %s.", tool, v->refused), out);
    int mode = agti_gate_approval_mode(s);
    if (v->closed != NULL && (mode == AGT_MODE_YOLO || mode == AGT_MODE_AUTO))
        return refuse_text(
            call,
            agti_aprintf("%s call refused: this command cannot be checked before it runs: %s. "
                         "The session is in %s%s mode, which does not ask, so such a command "
                         "does not run. Write it with literal command names and strings (no "
                         "$VAR or $(...) as a command, no eval or sh -c of a variable, no script "
                         "piped into a shell), or ask the user to run it.",
                         tool, v->closed,
                         s->mode == AGT_MODE_PLAN ? "plan mode, entered from " : "",
                         mode_name(mode)),
            out);
    return agti_plan_check(s, call, out);
}

int agti_policy_recheck(agt_session *s, agt_call *call, agt_result **out)
{
    agti_verdict v;
    int rc = agti_policy_evaluate(s, agt_call_tool(call), agti_call_args_json(call), &v);
    if (rc == AGT_OK)
        rc = agti_gate_verdict_check(s, call, &v, out);
    agti_verdict_clear(&v);
    return rc;
}

int agti_policy_recheck_rewrite(agt_session *s, agt_call *call, const char *before,
                                agt_result **out)
{
    agti_verdict v;
    int rc = agti_policy_evaluate(s, agt_call_tool(call), agti_call_args_json(call), &v);
    if (rc == AGT_OK)
        rc = agti_gate_verdict_check(s, call, &v, out);
    const char *now = json_string_value(json_object_get(agti_call_args_json(call), "command"));
    bool changed = now != NULL && (before == NULL || strcmp(before, now) != 0);
    int mode = agti_gate_approval_mode(s);
    bool asks = v.closed != NULL ||
                (v.kind == AGT_RULE_ASK && mode != AGT_MODE_YOLO && mode != AGT_MODE_AUTO);
    if (rc == AGT_OK && changed && asks) {
        char *why = v.closed ? agti_aprintf("it cannot be checked before it runs: %s", v.closed)
                             : agti_aprintf("the rule '%s' is in the ask list", v.rule->text);
        rc = why ? refuse_text(call,
                               agti_aprintf("A pre-tool-use hook rewrote the command to `%s`, "
                                            "which needs approval: %s. It did not run; ask the "
                                            "user or take another approach.",
                                            now, why),
                               out)
                 : agti_oom();
        free(why);
    }
    agti_verdict_clear(&v);
    return rc;
}

char *agti_gate_declined_text(agt_session *s, const char *tool, const char *reason)
{
    bool has = reason != NULL && reason[0] != '\0';
    if (strcmp(tool, "ExitPlanMode") == 0)
        return agti_aprintf("The user rejected the plan%s%s. You are still in plan mode: revise "
                            "the plan file %s and call ExitPlanMode again.",
                            has ? ": " : "", has ? reason : "",
                            s->policy->plan_file ? s->policy->plan_file : "");
    return agti_aprintf("The user declined this %s call%s%s. Do not retry it unchanged; ask the "
                        "user or take another approach.",
                        tool, has ? ": " : "", has ? reason : "");
}

static json_t *request_json(agt_call *call, const char *why, const char *suggested)
{
    json_t *args = json_deep_copy(agti_call_args_json(call));
    json_t *j =
        json_pack("{s:o, s:o, s:o, s:o, s:o}", "call_id", agti_json_text(agt_call_id(call)), "tool",
                  agti_json_text(agt_call_tool(call)), "arguments", args ? args : json_object(),
                  "reason", agti_json_text(why), "suggested_rule", agti_json_text(suggested));
    if (j != NULL && suggested != NULL && strchr(suggested, '\n') != NULL &&
        json_object_set_new(j, "suggested_rules", agti_rule_lines(suggested)) != 0) {
        json_decref(j);
        j = NULL;
    }
    if (j != NULL && call->outside_dir != NULL && !call->outside_admitted &&
        json_object_set_new(j, "outside",
                            agti_outside_json(call->outside_dir, call->outside_write)) != 0) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

int agti_gate_add_outside_root(agt_session *s, const char *dir, bool write)
{
    int rc = agti_outside_add_root(s, dir, write);
    /* a folder removed since it was asked for: approved once, as a bad
     * host rule is */
    return rc == AGT_ENOTFOUND ? AGT_OK : rc;
}

int agti_gate_add_session_rule(agt_session *s, const char *text)
{
    /* a compound command's suggestion holds one rule per line: all or none */
    agti_ruleset tmp = {0};
    int rc = AGT_OK;
    for (const char *p = text; rc == AGT_OK;) {
        size_t n = strcspn(p, "\n");
        char *one = agti_strndup(p, n);
        agti_rule *r = NULL;
        rc = one ? agti_rule_parse(one, AGT_RULE_ALLOW, s->root, &r) : agti_oom();
        free(one);
        if (rc == AGT_OK) {
            r->session = true;
            rc = agti_ruleset_add(&tmp, r);
        }
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    for (size_t i = 0; rc == AGT_OK && i < tmp.n; i++) {
        rc = agti_ruleset_add(&s->policy->rules, tmp.rules[i]);
        tmp.rules[i] = NULL;
    }
    for (size_t i = 0; i < tmp.n; i++)
        agti_rule_free(tmp.rules[i]);
    tmp.n = 0;
    agti_ruleset_clear(&tmp);
    return rc;
}

static int ask_approver(gate_ctx *g, agt_call *call, const char *why, const char *suggested,
                        agt_result **out)
{
    agt_session *s = g->s;
    agti_policy *p = s->policy;
    json_t *req = request_json(call, why, suggested);
    struct agt_approval a = {agti_json_dump(req), NULL, NULL, suggested};
    json_decref(req);
    if (a.json == NULL)
        return agti_oom();
    int decision = p->approver(&a, p->approver_payload);
    int rc = AGT_OK;
    if (decision == AGT_DECISION_APPROVE || decision == AGT_DECISION_APPROVE_SESSION) {
        const char *rule = a.rule ? a.rule : suggested;
        if (decision == AGT_DECISION_APPROVE_SESSION && rule != NULL &&
            strcmp(agt_call_tool(call), "ExitPlanMode") != 0) {
            rc = agti_gate_add_session_rule(s, rule);
            if (rc == AGT_EINVALID)
                rc = AGT_OK; /* documented: a bad host rule approves once */
        }
        if (rc == AGT_OK && call->outside_dir != NULL) {
            /* once: this call may use the folder; for the session: a root */
            if (decision == AGT_DECISION_APPROVE_SESSION)
                rc = agti_gate_add_outside_root(s, call->outside_dir, call->outside_write);
            call->outside_admitted = true;
        }
        if (rc == AGT_OK && a.reason != NULL) {
            /* the reason must outlive the callback while the provider runs */
            g->reason = a.reason;
            a.reason = NULL;
        }
    } else {
        char *text = agti_gate_declined_text(s, agt_call_tool(call), a.reason);
        rc = text ? agti_refuse(call, AGT_EDENIED, text, out) : agti_oom();
        free(text);
    }
    free(a.json);
    free(a.reason);
    free(a.rule);
    return rc;
}

/* The approver and the pre-hook are host code: they may have removed the
 * call's tool from the registry (its entry is gone), changed other entries
 * (entries move) or removed its provider. The entry is looked up again; a
 * removed tool, or one left without any provider, does not run (its host
 * provider's payload may be gone with it). A call whose provider was
 * replaced runs the one it was looked up with, as the calls of a group
 * prepared before the change do. */
static int still_registered(agt_session *s, agt_call *call, const char *when, agt_result **out)
{
    const agti_tool *t = agti_registry_find(s->reg, agt_call_tool(call));
    agt_provider_fn fn = NULL;
    void *payload = NULL;
    if (t != NULL && agti_registry_provider(s->reg, t, &fn, &payload)) {
        call->entry = t;
        return AGT_OK;
    }
    char *text = agti_aprintf(t == NULL ? "The %s tool was removed from the tool registry while "
                                          "this call %s; it did not run."
                                        : "The %s tool lost its provider while this call %s; it "
                                          "did not run.",
                              agt_call_tool(call), when);
    if (text == NULL)
        return agti_oom();
    int rc = agti_refuse(call, AGT_ENOTFOUND, text, out);
    free(text);
    return rc;
}

int agti_session_gate(void *ctx, agt_call *call, agt_result **out)
{
    gate_ctx *g = ctx;
    agt_session *s = g->s;
    const char *tool = agt_call_tool(call);
    agti_verdict v;
    int rc = agti_policy_evaluate(s, tool, agti_call_args_json(call), &v);
    if (rc != AGT_OK) {
        agti_verdict_clear(&v);
        return rc;
    }
    rc = agti_gate_verdict_check(s, call, &v, out);
    if (rc == AGT_OK && g->approved) {
        /* the user approved it (agt_session_answer): an outside folder is
         * admitted for this call (for the session it was added already) */
        rc = agti_outside_check(s, call);
        call->outside_admitted = call->outside_dir != NULL;
    }
    if (rc == AGT_OK && !g->approved) {
        bool ask;
        char *why;
        rc = agti_gate_need_ask(s, call, &v, &ask, &why);
        if (rc == AGT_OK && ask) {
            char *suggested = agti_suggest_rule(s, tool, agti_call_args_json(call), &v);
            if (s->policy->approver != NULL) {
                rc = ask_approver(g, call, why, suggested, out);
                free(why);
                free(suggested);
            } else {
                rc = agti_pending_park(s, call, why, suggested);
            }
        }
    }
    agti_verdict_clear(&v);
    if (rc == AGT_OK)
        rc = still_registered(s, call, "waited for approval", out);
    if (rc != AGT_OK)
        return rc;
    s->policy->exit_reason = g->reason;
    rc = agti_hook_pre(s, call, out, &g->note, &g->context);
    if (rc == AGT_OK)
        rc = still_registered(s, call, "was in the pre-tool-use hook", out);
    if (rc != AGT_OK)
        return rc;
    g->ran = true;
    g->args = agti_strdup(agt_call_args(call));
    return g->args ? AGT_OK : agti_oom();
}

/* What follows the provider on the session's thread: the suspension of a
 * call its provider suspended, else the post-hook (also for a call the gate
 * answered, with the hook failures noted). Frees the gate's state. */
int agti_gate_finish(agt_session *s, gate_ctx *g, const char *call_id, const char *tool,
                     const char *reason, int rc, agt_result **out)
{
    s->policy->exit_reason = NULL;
    if (rc == AGT_EPENDING && g->ran) {
        /* the provider suspended the call: kept until agti_session_complete */
        rc = agti_suspend_keep(s, call_id, tool, g);
    } else if (rc == AGT_OK && *out != NULL && g->ran)
        rc = agti_hook_post(s, *out, g->args, &g->context, &g->note);
    else if (rc == AGT_OK && *out != NULL && (g->note.len > 0 || g->context.len > 0))
        rc = agti_hook_post(s, *out, NULL, &g->context, &g->note);
    if (rc != AGT_OK && rc != AGT_EPENDING) {
        agt_result_free(*out);
        *out = NULL;
    }
    if (g->reason != reason)
        free((char *)g->reason);
    g->reason = reason;
    agti_buf_free(&g->note);
    agti_buf_free(&g->context);
    free(g->args);
    g->args = NULL;
    return rc;
}

int agti_gate_run(agt_session *s, const char *call_id, const char *tool, const char *args_json,
                  bool approved, const char *reason, agt_result **out)
{
    gate_ctx g = {s, approved, reason, AGTI_BUF_INIT, NULL, false, AGTI_BUF_INIT};
    agti_dispatch_env env = {s->reg, s->phase, s, agti_session_gate, &g};
    int rc = agti_dispatch(&env, call_id, tool, args_json, out);
    return agti_gate_finish(s, &g, call_id, tool, reason, rc, out);
}

int agti_session_dispatch(agt_session *s, const char *call_id, const char *tool,
                          const char *args_json, agt_result **out)
{
    return agti_gate_run(s, call_id, tool, args_json, false, NULL, out);
}

void agti_session_approver(const agt_session *s, agt_approver_fn *fn, void **payload)
{
    *fn = s->policy->approver;
    *payload = s->policy->approver_payload;
}

int agti_approval_tag(agt_approval *req, const char *agent_id)
{
    json_t *j = json_loads(req->json, 0, NULL);
    if (j == NULL || json_object_set_new(j, "agent_id", agti_json_text(agent_id)) != 0) {
        json_decref(j);
        return agti_oom();
    }
    char *t = agti_json_dump(j);
    json_decref(j);
    if (t == NULL)
        return agti_oom();
    free(req->json);
    req->json = t;
    return AGT_OK;
}

const char *agti_approval_session_rule(const agt_approval *req)
{
    return req->rule ? req->rule : req->suggested;
}

int agti_session_ask(agt_session *s, const char *request_json, int *decision, char **reason,
                     char **rule)
{
    *reason = *rule = NULL;
    *decision = AGT_DECISION_REJECT;
    agti_policy *p = s->policy;
    if (p->approver == NULL)
        return agti_error(AGT_ESTATE, "the session has no approver");
    json_t *j = json_loads(request_json, 0, NULL);
    const char *sug = json_string_value(json_object_get(j, "suggested_rule"));
    struct agt_approval a = {agti_strdup(request_json), NULL, NULL, sug};
    if (a.json == NULL) {
        json_decref(j);
        return agti_oom();
    }
    *decision = p->approver(&a, p->approver_payload);
    *reason = a.reason;
    *rule = a.rule ? a.rule : (sug ? agti_strdup(sug) : NULL);
    free(a.json);
    json_decref(j);
    return AGT_OK;
}

int agti_session_add_session_rule(agt_session *s, const char *rule)
{
    return agti_gate_add_session_rule(s, rule);
}

int agt_session_set_approver(agt_session *s, agt_approver_fn fn, void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_approver: session is NULL");
    s->policy->approver = fn;
    s->policy->approver_payload = fn ? payload : NULL;
    return AGT_OK;
}

const char *agt_approval_json(const agt_approval *req)
{
    return req && req->json ? req->json : "{}";
}

static int set_copy(char **dst, const char *src, const char *what)
{
    if (src == NULL)
        return agti_error(AGT_EINVAL, "%s: argument is NULL", what);
    char *c = agti_strdup(src);
    if (c == NULL)
        return agti_oom();
    free(*dst);
    *dst = c;
    return AGT_OK;
}

int agt_approval_set_reason(agt_approval *req, const char *reason)
{
    if (req == NULL)
        return agti_error(AGT_EINVAL, "agt_approval_set_reason: request is NULL");
    return set_copy(&req->reason, reason, "agt_approval_set_reason");
}

int agt_approval_set_rule(agt_approval *req, const char *rule)
{
    if (req == NULL || rule == NULL)
        return agti_error(AGT_EINVAL, "agt_approval_set_rule: request or rule is NULL");
    /* one rule, or one per line (as a compound command's suggestion) */
    for (const char *p = rule;;) {
        size_t n = strcspn(p, "\n");
        char *one = agti_strndup(p, n);
        agti_rule *r = NULL;
        int rc = one ? agti_rule_parse(one, AGT_RULE_ALLOW, "/", &r) : agti_oom();
        free(one);
        agti_rule_free(r);
        if (rc != AGT_OK)
            return rc;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    return set_copy(&req->rule, rule, "agt_approval_set_rule");
}
