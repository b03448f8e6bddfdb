/* Approval: the gate the dispatcher calls before a provider runs. It applies
 * deny rules and plan-mode limits, then decides from the mode, the rules and
 * the tool's access class whether to ask; asking goes to the synchronous
 * approver when the host set one, else the call is parked as pending until
 * agt_session_answer(). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "policy.h"
#include "sandbox_settings.h"
#include "session_internal.h"
#include "jobs.h"
#include "subapproval.h"

struct agt_approval {
    char *json;
    char *reason;
    char *rule;
    const char *suggested; /* borrowed for the callback */
};

/* A call whose provider suspended it (subapproval.h). */
typedef struct agti_suspended {
    char *call_id;
    char *tool;
    char *args; /* the arguments it ran with */
    char *note; /* hook failures to append to its result; NULL: none */
} agti_suspended;

struct agti_subappr {
    agti_suspended *calls;
    size_t n;
    agti_pending_ext_fn pending_fn;
    void *pending_payload;
};

typedef struct gate_ctx {
    agt_session *s;
    bool approved;      /* the user already approved (answer path) */
    const char *reason; /* the user's reason from the answer */
    agti_buf note;      /* hook failures, appended to the result */
    char *args;         /* arguments the provider ran with (for the post hook) */
    bool ran;           /* the gate let the call through */
} gate_ctx;

agti_policy *agti_policy_new(void)
{
    agti_policy *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->hook_budget_ms = 5000;
    p->mode_before_plan = AGT_MODE_MANUAL;
    return p;
}

static void pending_clear(agti_pending *q)
{
    free(q->call_id);
    free(q->tool);
    free(q->args);
    free(q->reason);
    free(q->suggested);
}

void agti_policy_drop_pending(agti_policy *p)
{
    for (size_t i = 0; i < p->npending; i++)
        pending_clear(&p->pending[i]);
    p->npending = 0;
}

static void suspended_clear(agti_suspended *c)
{
    free(c->call_id);
    free(c->tool);
    free(c->args);
    free(c->note);
}

static void subappr_free(struct agti_subappr *sa)
{
    if (sa == NULL)
        return;
    for (size_t i = 0; i < sa->n; i++)
        suspended_clear(&sa->calls[i]);
    free(sa->calls);
    free(sa);
}

void agti_policy_free(agti_policy *p)
{
    if (p == NULL)
        return;
    subappr_free(p->sub);
    agti_ruleset_clear(&p->rules);
    agti_policy_drop_pending(p);
    free(p->pending);
    free(p->plan_file);
    free(p);
}

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

/* ---- suggested "allow for session" rules ----------------------------- */

static void put_escaped(agti_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*')
            agti_buf_putc(b, '\\');
        agti_buf_putc(b, s[i]);
    }
}

static bool plain_word(const char *w, size_t n)
{
    if (n == 0 || w[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = w[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == ':'))
            return false;
    }
    return true;
}

/* `Bash(git log *)` for "git log --oneline src/": the program and its
 * subcommand (a plain second word), then a star. */
static void suggest_command(agti_buf *b, const char *part)
{
    const char *w1 = part;
    size_t n1 = strcspn(w1, " \t");
    const char *w2 = w1 + n1;
    w2 += strspn(w2, " \t");
    size_t n2 = strcspn(w2, " \t");
    agti_buf_puts(b, "Bash(");
    put_escaped(b, w1, n1);
    if (plain_word(w2, n2)) {
        agti_buf_putc(b, ' ');
        put_escaped(b, w2, n2);
        const char *rest = w2 + n2;
        rest += strspn(rest, " \t");
        agti_buf_puts(b, *rest ? " *)" : ")");
    } else {
        agti_buf_puts(b, n2 ? " *)" : ")");
    }
}

static char *suggest_rule(agt_session *s, const char *tool, json_t *args, json_t *parts)
{
    agti_buf b = AGTI_BUF_INIT;
    int subject = agti_rule_subject(tool);
    if (strcmp(tool, "ExitPlanMode") == 0)
        return NULL;
    if (subject == AGTI_SUBJ_COMMAND && parts != NULL) {
        /* the first part that no allow rule covers */
        const char *pick = NULL;
        size_t i;
        json_t *v;
        json_array_foreach(parts, i, v)
        {
            const agti_rule *hit;
            agti_ruleset_match(&s->policy->rules, tool, subject, json_string_value(v), NULL, &hit);
            if (hit == NULL || hit->kind != AGT_RULE_ALLOW) {
                pick = json_string_value(v);
                break;
            }
        }
        if (pick == NULL)
            pick = json_string_value(json_array_get(parts, 0));
        suggest_command(&b, pick ? pick : "");
    } else if (subject == AGTI_SUBJ_PATH && json_is_string(json_object_get(args, "path"))) {
        char *rel, *abs;
        if (agti_policy_path(s->root, json_string_value(json_object_get(args, "path")), &rel,
                             &abs) != AGT_OK)
            return NULL;
        const char *p = rel ? rel : abs;
        const char *slash = strrchr(p, '/');
        agti_buf_printf(&b, "%s(", tool);
        if (slash == NULL) {
            agti_buf_puts(&b, "./");
            put_escaped(&b, p, strlen(p));
        } else if (slash == p) {
            agti_buf_puts(&b, "/**");
        } else {
            put_escaped(&b, p, (size_t)(slash - p));
            agti_buf_puts(&b, "/**");
        }
        agti_buf_putc(&b, ')');
        free(rel);
        free(abs);
    } else {
        agti_buf_puts(&b, tool);
    }
    return agti_buf_detach(&b);
}

/* ---- the decision ----------------------------------------------------- */

/* Whether the call must ask; *why gets the reason (malloc'd). */
static int need_ask(agt_session *s, agt_call *call, int kind, const agti_rule *rule, json_t *parts,
                    bool *ask, char **why)
{
    const char *tool = agt_call_tool(call);
    *ask = false;
    *why = NULL;
    char *escape = agti_sandbox_escape_reason(s, call); /* sandbox hook (sandbox_settings.c) */
    if (strcmp(tool, "ExitPlanMode") == 0) {
        *ask = true;
        *why = agti_strdup("ExitPlanMode always asks the user to approve the plan");
    } else if (escape != NULL) {
        *ask = true; /* in every mode, whatever the rules allow */
        *why = escape;
        escape = NULL;
    } else if (s->mode == AGT_MODE_YOLO) {
        return AGT_OK;
    } else if (s->mode == AGT_MODE_PLAN && kind != AGT_RULE_ASK &&
               (strcmp(tool, "Write") == 0 || strcmp(tool, "Edit") == 0)) {
        return AGT_OK; /* the plan check let it through: it is the plan file */
    } else if (s->mode == AGT_MODE_AUTO && strcmp(tool, "AskUserQuestion") != 0) {
        return AGT_OK;
    } else if (kind == AGT_RULE_ASK) {
        *ask = true;
        *why = agti_aprintf("the rule '%s' is in the ask list", rule->text);
    } else if (kind == AGT_RULE_ALLOW) {
        return AGT_OK;
    } else if (agti_sandbox_auto_allows(s, call)) { /* sandbox hook (sandbox_settings.c) */
        return AGT_OK;
    } else {
        int access = call->entry->access;
        if (access == AGT_ACCESS_READ)
            return AGT_OK;
        if (access == AGT_ACCESS_NETWORK &&
            (strcmp(tool, "FetchURL") == 0 || strcmp(tool, "WebSearch") == 0))
            return AGT_OK;
        *ask = true;
        if (parts != NULL && json_array_size(parts) > 1) {
            const char *pick = "";
            size_t i;
            json_t *v;
            json_array_foreach(parts, i, v)
            {
                const agti_rule *hit;
                agti_ruleset_match(&s->policy->rules, tool, AGTI_SUBJ_COMMAND, json_string_value(v),
                                   NULL, &hit);
                if (hit == NULL) {
                    pick = json_string_value(v);
                    break;
                }
            }
            *why = agti_aprintf("the command part '%s' is not covered by an allow rule", pick);
        } else {
            *why = agti_aprintf("%s %s (access: %s) and the session is in %s mode", tool,
                                access_phrase(access),
                                access == AGT_ACCESS_WRITE     ? "write"
                                : access == AGT_ACCESS_EXECUTE ? "execute"
                                : access == AGT_ACCESS_NETWORK ? "network"
                                                               : "host",
                                mode_name(s->mode));
        }
    }
    return *why ? AGT_OK : agti_oom();
}

/* Deny rules and plan-mode limits; also run again after a hook rewrote the
 * arguments. */
int agti_policy_recheck(agt_session *s, agt_call *call, agt_result **out)
{
    int kind;
    const agti_rule *rule;
    json_t *parts;
    int rc = agti_policy_evaluate(s, agt_call_tool(call), agti_call_args_json(call), &kind, &rule,
                                  &parts);
    json_decref(parts);
    if (rc != AGT_OK)
        return rc;
    if (kind == AGT_RULE_DENY) {
        char *text = agti_aprintf("%s call refused: the rule '%s' in the deny list forbids it. "
                                  "Do not retry it; take another approach or ask the user to "
                                  "change the rules.",
                                  agt_call_tool(call), rule->text);
        if (text == NULL)
            return agti_oom();
        rc = agti_refuse(call, AGT_EDENIED, text, out);
        free(text);
        return rc;
    }
    return agti_plan_check(s, call, out);
}

static char *declined_text(agt_session *s, const char *tool, const char *reason)
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
    return json_pack("{s:s, s:s, s:o, s:s, s:s?}", "call_id", agt_call_id(call), "tool",
                     agt_call_tool(call), "arguments", args ? args : json_object(), "reason", why,
                     "suggested_rule", suggested);
}

static int add_session_rule(agt_session *s, const char *text)
{
    agti_rule *r;
    int rc = agti_rule_parse(text, AGT_RULE_ALLOW, s->root, &r);
    if (rc != AGT_OK)
        return rc;
    r->session = true;
    return agti_ruleset_add(&s->policy->rules, r);
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
            rc = add_session_rule(s, rule);
            if (rc == AGT_EINVALID)
                rc = AGT_OK; /* documented: a bad host rule approves once */
        }
        if (rc == AGT_OK && a.reason != NULL) {
            /* the reason must outlive the callback while the provider runs */
            g->reason = a.reason;
            a.reason = NULL;
        }
    } else {
        char *text = declined_text(s, agt_call_tool(call), a.reason);
        rc = text ? agti_refuse(call, AGT_EDENIED, text, out) : agti_oom();
        free(text);
    }
    free(a.json);
    free(a.reason);
    free(a.rule);
    return rc;
}

static int park(agt_session *s, agt_call *call, char *why, char *suggested)
{
    agti_policy *p = s->policy;
    for (size_t i = 0; i < p->npending; i++)
        if (strcmp(p->pending[i].call_id, agt_call_id(call)) == 0) {
            free(why);
            free(suggested);
            return agti_error(AGT_EEXISTS, "call id '%s' is already waiting for approval",
                              agt_call_id(call));
        }
    if (p->npending == p->cappending) {
        size_t cap = p->cappending ? p->cappending * 2 : 8;
        agti_pending *v = realloc(p->pending, cap * sizeof *v);
        if (v == NULL) {
            free(why);
            free(suggested);
            return agti_oom();
        }
        p->pending = v;
        p->cappending = cap;
    }
    agti_pending q = {agti_strdup(agt_call_id(call)), agti_strdup(agt_call_tool(call)),
                      agti_strdup(agt_call_args(call)), why, suggested};
    if (!q.call_id || !q.tool || !q.args) {
        pending_clear(&q);
        return agti_oom();
    }
    p->pending[p->npending++] = q;
    return AGT_EPENDING;
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
    int kind;
    const agti_rule *rule;
    json_t *parts;
    int rc = agti_policy_evaluate(s, tool, agti_call_args_json(call), &kind, &rule, &parts);
    if (rc != AGT_OK)
        return rc;
    rc = agti_policy_recheck(s, call, out);
    if (rc == AGT_OK && !g->approved) {
        bool ask;
        char *why;
        rc = need_ask(s, call, kind, rule, parts, &ask, &why);
        if (rc == AGT_OK && ask) {
            char *suggested = suggest_rule(s, tool, agti_call_args_json(call), parts);
            if (s->policy->approver != NULL) {
                rc = ask_approver(g, call, why, suggested, out);
                free(why);
                free(suggested);
            } else {
                rc = park(s, call, why, suggested);
            }
        }
    }
    json_decref(parts);
    if (rc == AGT_OK)
        rc = still_registered(s, call, "waited for approval", out);
    if (rc != AGT_OK)
        return rc;
    s->policy->exit_reason = g->reason;
    rc = agti_hook_pre(s, call, out, &g->note);
    if (rc == AGT_OK)
        rc = still_registered(s, call, "was in the pre-tool-use hook", out);
    if (rc != AGT_OK)
        return rc;
    g->ran = true;
    g->args = agti_strdup(agt_call_args(call));
    return g->args ? AGT_OK : agti_oom();
}

static struct agti_subappr *subappr(agt_session *s)
{
    if (s->policy->sub == NULL)
        s->policy->sub = calloc(1, sizeof *s->policy->sub);
    return s->policy->sub;
}

static int add_suspended(agt_session *s, agti_suspended c)
{
    struct agti_subappr *sa = subappr(s);
    agti_suspended *v = sa ? realloc(sa->calls, (sa->n + 1) * sizeof *v) : NULL;
    if (v == NULL) {
        suspended_clear(&c);
        return agti_oom();
    }
    sa->calls = v;
    sa->calls[sa->n++] = c;
    return AGT_OK;
}

static int keep_suspended(agt_session *s, const char *call_id, const char *tool, gate_ctx *g)
{
    if (agti_session_is_suspended(s, call_id))
        return agti_error(AGT_EEXISTS, "call id '%s' is already suspended", call_id);
    agti_suspended c = {agti_strdup(call_id), agti_strdup(tool), g->args,
                        g->note.len ? agti_buf_detach(&g->note) : NULL};
    g->args = NULL;
    if (!c.call_id || !c.tool || !c.args) {
        suspended_clear(&c);
        return agti_oom();
    }
    int rc = add_suspended(s, c);
    return rc == AGT_OK ? AGT_EPENDING : rc;
}

/* What follows the provider on the session's thread: the suspension of a
 * call its provider suspended, else the post-hook (also for a call the gate
 * answered, with the hook failures noted). Frees the gate's state. */
static int finish_run(agt_session *s, gate_ctx *g, const char *call_id, const char *tool,
                      const char *reason, int rc, agt_result **out)
{
    s->policy->exit_reason = NULL;
    if (rc == AGT_EPENDING && g->ran) {
        /* the provider suspended the call: kept until agti_session_complete */
        rc = keep_suspended(s, call_id, tool, g);
    } else if (rc == AGT_OK && *out != NULL && g->ran)
        rc = agti_hook_post(s, *out, g->args, &g->note);
    else if (rc == AGT_OK && *out != NULL && g->note.len > 0)
        rc = agti_hook_post(s, *out, NULL, &g->note);
    if (rc != AGT_OK && rc != AGT_EPENDING) {
        agt_result_free(*out);
        *out = NULL;
    }
    if (g->reason != reason)
        free((char *)g->reason);
    g->reason = reason;
    agti_buf_free(&g->note);
    free(g->args);
    g->args = NULL;
    return rc;
}

static int run(agt_session *s, const char *call_id, const char *tool, const char *args_json,
               bool approved, const char *reason, agt_result **out)
{
    gate_ctx g = {s, approved, reason, AGTI_BUF_INIT, NULL, false};
    agti_dispatch_env env = {s->reg, s->phase, s, agti_session_gate, &g};
    int rc = agti_dispatch(&env, call_id, tool, args_json, out);
    return finish_run(s, &g, call_id, tool, reason, rc, out);
}

/* ---- split dispatch (jobs.h) ------------------------------------------- */

struct agti_session_job {
    agt_session *s;
    gate_ctx g;
    agti_prepared *prep;
    char *call_id;
    char *tool;
    int rc;          /* the outcome of execute */
    agt_result *out; /* its result */
    char *error;     /* its last error message, when rc is an error */
    bool executed;
};

void agti_session_job_free(agti_session_job *job)
{
    if (job == NULL)
        return;
    agti_prepared_free(job->prep);
    agt_result_free(job->out);
    if (job->g.reason != NULL)
        free((char *)job->g.reason);
    agti_buf_free(&job->g.note);
    free(job->g.args);
    free(job->call_id);
    free(job->tool);
    free(job->error);
    free(job);
}

int agti_session_prepare(agt_session *s, const char *call_id, const char *tool,
                         const char *args_json, agti_session_job **job, agt_result **out)
{
    if (job != NULL)
        *job = NULL;
    if (out != NULL)
        *out = NULL;
    if (s == NULL || tool == NULL || job == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "agti_session_prepare: session, tool, job or out is NULL");
    if (call_id == NULL)
        call_id = "";
    agti_session_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return agti_oom();
    j->s = s;
    j->g = (gate_ctx){s, false, NULL, AGTI_BUF_INIT, NULL, false};
    j->call_id = agti_strdup(call_id);
    j->tool = agti_strdup(tool);
    if (j->call_id == NULL || j->tool == NULL) {
        agti_session_job_free(j);
        return agti_oom();
    }
    agti_dispatch_env env = {s->reg, s->phase, s, agti_session_gate, &j->g};
    int rc = agti_dispatch_prepare(&env, call_id, tool, args_json, &j->prep, out);
    if (rc == AGT_OK && j->prep != NULL) {
        /* the reason the approver gave is read by ExitPlanMode only, which
         * runs alone; it stays with the job */
        s->policy->exit_reason = NULL;
        *job = j;
        return AGT_OK;
    }
    rc = finish_run(s, &j->g, j->call_id, j->tool, NULL, rc, out);
    agti_session_job_free(j);
    return rc;
}

bool agti_session_job_parallel_safe(const agti_session_job *job)
{
    return job != NULL && agti_prepared_parallel_safe(job->prep);
}

void agti_session_job_execute(agti_session_job *job)
{
    if (job->executed)
        return;
    job->executed = true;
    job->rc = agti_dispatch_execute(job->prep, &job->out);
    if (job->rc != AGT_OK && job->rc != AGT_EPENDING) {
        agt_result_free(job->out);
        job->out = NULL;
        job->error = agti_strdup(agt_error_message());
    }
    agti_prepared_free(job->prep);
    job->prep = NULL;
}

int agti_session_job_complete(agti_session_job *job, agt_result **out)
{
    *out = NULL;
    agti_session_job_execute(job); /* a no-op when it ran on a worker */
    int rc = job->rc;
    if (rc != AGT_OK && rc != AGT_EPENDING) {
        if (rc == AGT_ENOMEM)
            agti_oom();
        else
            agti_error(rc, "%s", job->error ? job->error : "the tool call failed");
    }
    *out = job->out;
    job->out = NULL;
    rc = finish_run(job->s, &job->g, job->call_id, job->tool, NULL, rc, out);
    agti_session_job_free(job);
    return rc;
}

bool agti_session_parallel_safe(const agt_session *s, const char *tool)
{
    agti_dispatch_env env = {s->reg, s->phase, (agt_session *)s, NULL, NULL};
    return agti_dispatch_parallel_safe(&env, tool);
}

/* ---- suspended calls and sub-agents' approvals (subapproval.h) --------- */

static size_t suspended_index(const agt_session *s, const char *call_id)
{
    const struct agti_subappr *sa = s->policy->sub;
    for (size_t i = 0; sa != NULL && i < sa->n; i++)
        if (strcmp(sa->calls[i].call_id, call_id) == 0)
            return i;
    return (size_t)-1;
}

bool agti_session_is_suspended(const agt_session *s, const char *call_id)
{
    return suspended_index(s, call_id) != (size_t)-1;
}

static agti_suspended suspended_take(agt_session *s, size_t i)
{
    struct agti_subappr *sa = s->policy->sub;
    agti_suspended c = sa->calls[i];
    memmove(&sa->calls[i], &sa->calls[i + 1], (sa->n - i - 1) * sizeof *sa->calls);
    sa->n--;
    return c;
}

int agti_session_complete(agt_session *s, const char *call_id, const char *text, bool is_error,
                          agt_result **out)
{
    *out = NULL;
    size_t i = suspended_index(s, call_id);
    if (i == (size_t)-1)
        return agti_error(AGT_ENOTFOUND, "no suspended call with id '%s'", call_id);
    /* the result first: without memory the call stays suspended, and the
     * caller can complete it again */
    const agti_suspended *held = &s->policy->sub->calls[i];
    agt_result *r =
        agti_result_new(held->call_id, held->tool, text, is_error, is_error ? AGT_ERROR : AGT_OK);
    if (r == NULL)
        return agti_oom();
    agti_suspended c = suspended_take(s, i);
    agti_buf note = AGTI_BUF_INIT;
    if (c.note != NULL)
        agti_buf_puts(&note, c.note);
    int rc = note.oom ? agti_oom() : agti_hook_post(s, r, c.args, &note);
    agti_buf_free(&note);
    suspended_clear(&c);
    if (rc != AGT_OK) {
        agt_result_free(r);
        return rc;
    }
    *out = r;
    return AGT_OK;
}

void agti_session_drop_suspended(agt_session *s, const char *call_id)
{
    size_t i = suspended_index(s, call_id);
    if (i != (size_t)-1) {
        agti_suspended c = suspended_take(s, i);
        suspended_clear(&c);
    }
}

json_t *agti_session_suspended_json(const agt_session *s)
{
    json_t *list = json_array();
    const struct agti_subappr *sa = s->policy->sub;
    for (size_t i = 0; list != NULL && sa != NULL && i < sa->n; i++) {
        const agti_suspended *c = &sa->calls[i];
        if (json_array_append_new(list,
                                  json_pack("{s:s,s:s,s:s,s:s?}", "call_id", c->call_id, "tool",
                                            c->tool, "arguments", c->args, "note", c->note)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

int agti_session_add_suspended(agt_session *s, const char *call_id, const char *tool,
                               const char *args, const char *note)
{
    if (agti_session_is_suspended(s, call_id))
        return agti_error(AGT_EEXISTS, "call id '%s' is already suspended", call_id);
    agti_suspended c = {agti_strdup(call_id), agti_strdup(tool), agti_strdup(args),
                        note ? agti_strdup(note) : NULL};
    if (!c.call_id || !c.tool || !c.args || (note && !c.note)) {
        suspended_clear(&c);
        return agti_oom();
    }
    return add_suspended(s, c);
}

/* The gate of agti_session_repark: parks the call with the reason and
 * suggested rule a dispatch would give it now. */
static int repark_gate(void *ctx, agt_call *call, agt_result **out)
{
    agt_session *s = ctx;
    const char *tool = agt_call_tool(call);
    int kind;
    const agti_rule *rule;
    json_t *parts;
    int rc = agti_policy_evaluate(s, tool, agti_call_args_json(call), &kind, &rule, &parts);
    if (rc != AGT_OK)
        return rc;
    rc = agti_policy_recheck(s, call, out);
    bool ask = false;
    char *why = NULL;
    if (rc == AGT_OK)
        rc = need_ask(s, call, kind, rule, parts, &ask, &why);
    if (rc == AGT_OK && !ask) {
        free(why);
        why = agti_strdup("it waited for approval when the session was saved");
        rc = why ? AGT_OK : agti_oom();
    }
    if (rc == AGT_OK)
        rc = park(s, call, why, suggest_rule(s, tool, agti_call_args_json(call), parts));
    else
        free(why);
    json_decref(parts);
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

void agti_session_approver(const agt_session *s, agt_approver_fn *fn, void **payload)
{
    *fn = s->policy->approver;
    *payload = s->policy->approver_payload;
}

int agti_approval_tag(agt_approval *req, const char *agent_id)
{
    json_t *j = json_loads(req->json, 0, NULL);
    if (j == NULL || json_object_set_new(j, "agent_id", json_string(agent_id)) != 0) {
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
    return add_session_rule(s, rule);
}

int agti_session_set_pending_ext(agt_session *s, agti_pending_ext_fn fn, void *payload)
{
    if (fn == NULL && s->policy->sub == NULL)
        return AGT_OK;
    struct agti_subappr *sa = subappr(s);
    if (sa == NULL)
        return agti_oom();
    sa->pending_fn = fn;
    sa->pending_payload = fn ? payload : NULL;
    return AGT_OK;
}

void *agti_session_pending_ext_payload(const agt_session *s)
{
    return s->policy->sub ? s->policy->sub->pending_payload : NULL;
}

int agti_session_dispatch(agt_session *s, const char *call_id, const char *tool,
                          const char *args_json, agt_result **out)
{
    return run(s, call_id, tool, args_json, false, NULL, out);
}

/* ---- public API -------------------------------------------------------- */

int agt_session_add_rule(agt_session *s, int kind, const char *rule)
{
    if (s == NULL || rule == NULL)
        return agti_error(AGT_EINVAL, "agt_session_add_rule: session or rule is NULL");
    if (kind < AGT_RULE_ALLOW || kind > AGT_RULE_DENY)
        return agti_error(AGT_EINVAL, "agt_session_add_rule: unknown rule kind %d", kind);
    agti_rule *r;
    int rc = agti_rule_parse(rule, kind, s->root, &r);
    if (rc != AGT_OK)
        return rc;
    return agti_ruleset_add(&s->policy->rules, r);
}

static const char *const kind_names[] = {"allow", "ask", "deny"};

/* Parses {"allow":[...],...} into a new rule list (all or nothing). */
int agti_rules_from_json(agt_session *s, json_t *doc, agti_ruleset *into, const char *where)
{
    if (!json_is_object(doc))
        return agti_error(AGT_EINVALID, "%s: expected an object with allow, ask and deny lists",
                          where);
    for (int k = AGT_RULE_ALLOW; k <= AGT_RULE_DENY; k++) {
        json_t *list = json_object_get(doc, kind_names[k]);
        if (list == NULL)
            continue;
        if (!json_is_array(list))
            return agti_error(AGT_EINVALID, "%s: \"%s\" must be an array of rule strings", where,
                              kind_names[k]);
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
        {
            if (!json_is_string(v))
                return agti_error(AGT_EINVALID, "%s: %s[%zu] is not a string", where, kind_names[k],
                                  i);
            agti_rule *r;
            int rc = agti_rule_parse(json_string_value(v), k, s->root, &r);
            if (rc == AGT_EINVALID)
                agti_error_prefix("%s: %s[%zu]", where, kind_names[k], i);
            if (rc == AGT_OK)
                rc = agti_ruleset_add(into, r);
            if (rc != AGT_OK)
                return rc;
        }
    }
    return AGT_OK;
}

int agt_session_load_rules(agt_session *s, const char *json, size_t len)
{
    if (s == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_load_rules: session or json is NULL");
    json_t *doc = agti_json_parse(json, len, "rules");
    if (doc == NULL)
        return agt_error_code();
    agti_ruleset tmp = {0};
    int rc = agti_rules_from_json(s, doc, &tmp, "rules");
    json_decref(doc);
    for (size_t i = 0; rc == AGT_OK && i < tmp.n; i++) {
        rc = agti_ruleset_add(&s->policy->rules, tmp.rules[i]);
        tmp.rules[i] = NULL;
        if (rc != AGT_OK) {
            /* roll back what was moved so the call stays all or nothing */
            agti_ruleset *rs = &s->policy->rules;
            for (size_t j = 0; j < i; j++)
                agti_rule_free(rs->rules[--rs->n]);
            rs->dirty = true;
        }
    }
    for (size_t i = 0; i < tmp.n; i++)
        if (rc != AGT_OK)
            agti_rule_free(tmp.rules[i]);
    tmp.n = 0;
    agti_ruleset_clear(&tmp);
    return rc;
}

json_t *agti_rules_to_json(const agti_ruleset *rs)
{
    json_t *doc = json_pack("{s:[], s:[], s:[], s:[]}", "allow", "ask", "deny", "session");
    if (doc == NULL)
        return NULL;
    for (size_t i = 0; i < rs->n; i++) {
        const agti_rule *r = rs->rules[i];
        if (json_array_append_new(json_object_get(doc, kind_names[r->kind]),
                                  json_string(r->text)) != 0 ||
            (r->session &&
             json_array_append_new(json_object_get(doc, "session"), json_string(r->text)) != 0)) {
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

int agt_session_rules(const agt_session *s, char **out_json)
{
    if (s == NULL || out_json == NULL)
        return agti_error(AGT_EINVAL, "agt_session_rules: session or out_json is NULL");
    json_t *doc = agti_rules_to_json(&s->policy->rules);
    *out_json = doc ? agti_json_dump(doc) : NULL;
    json_decref(doc);
    return *out_json ? AGT_OK : agti_oom();
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
        json_t *item = json_pack("{s:s, s:s, s:o, s:s, s:s?}", "call_id", q->call_id, "tool",
                                 q->tool, "arguments", args ? args : json_object(), "reason",
                                 q->reason ? q->reason : "", "suggested_rule", q->suggested);
        if (item == NULL || json_array_append_new(list, item) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    const struct agti_subappr *sa = p->sub;
    if (list != NULL && sa != NULL && sa->pending_fn != NULL) {
        int rc = sa->pending_fn(sa->pending_payload, list);
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
            int rc = add_session_rule(s, text);
            if (rc != AGT_OK)
                return rc; /* the call stays pending */
        }
    }
    memmove(&p->pending[i], &p->pending[i + 1], (p->npending - i - 1) * sizeof *p->pending);
    p->npending--;
    int rc;
    if (decision == AGT_DECISION_REJECT) {
        char *text = declined_text(s, q.tool, reason);
        *out = text ? agti_result_new(q.call_id, q.tool, text, true, AGT_EDENIED) : NULL;
        free(text);
        rc = *out ? AGT_OK : agti_oom();
    } else {
        rc = run(s, q.call_id, q.tool, q.args, true, reason, out);
    }
    pending_clear(&q);
    return rc;
}

int agt_session_answer(agt_session *s, const char *call_id, int decision, const char *reason,
                       agt_result **out)
{
    return answer(s, call_id, decision, NULL, reason, out);
}

int agt_session_answer_rule(agt_session *s, const char *call_id, const char *rule,
                            const char *reason, agt_result **out)
{
    if (rule == NULL)
        return agti_error(AGT_EINVAL, "agt_session_answer_rule: rule is NULL");
    return answer(s, call_id, AGT_DECISION_APPROVE_SESSION, rule, reason, out);
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
    agti_rule *r;
    int rc = agti_rule_parse(rule, AGT_RULE_ALLOW, "/", &r);
    agti_rule_free(r);
    if (rc != AGT_OK)
        return rc;
    return set_copy(&req->rule, rule, "agt_approval_set_rule");
}
