/* Pre- and post-tool-use hooks. A hook is the host's code, so a hook that
 * fails or overruns its budget must not take the call down with it: its
 * decision is dropped, the call goes on, and the result carries a note so
 * the failure is visible to whoever reads the transcript. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "policy.h"
#include "schema/schema_internal.h"
#include "session_internal.h"

struct agt_hook {
    const char *tool;
    const char *call_id;
    const char *args;
    const char *result_text; /* NULL in a pre hook */
    bool is_error;
    bool post;
    bool denied;
    char *deny_reason;
    json_t *rewrite;
    agti_buf append;
    agti_buf context; /* pre-tool-use: agt_hook_add_context */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void hook_release(agt_hook *h)
{
    free(h->deny_reason);
    json_decref(h->rewrite);
    agti_buf_free(&h->append);
    agti_buf_free(&h->context);
}

/* Calls the hook; false when it failed or overran (a note says which). */
static bool call_hook(agt_session *s, agt_hook_fn fn, void *payload, agt_hook *h, agti_buf *note,
                      const char *which)
{
    int64_t t0 = now_ms();
    int rc = fn(h, payload);
    int64_t took = now_ms() - t0;
    const char *sep = note->len ? "\n" : "";
    if (rc != AGT_OK) {
        agti_buf_printf(note,
                        "%s[note: the %s hook failed (%s, code %d); the call went on "
                        "without it]",
                        sep, which, agt_status_string(rc), rc);
        return false;
    }
    if (took > s->policy->hook_budget_ms) {
        agti_buf_printf(note,
                        "%s[note: the %s hook took %lld ms, over its budget of %lld ms; its "
                        "answer was ignored]",
                        sep, which, (long long)took, (long long)s->policy->hook_budget_ms);
        return false;
    }
    return true;
}

static int rewrite_invalid(agt_call *call, json_t *errors, agt_result **out)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_printf(&b,
                    "A pre-tool-use hook rewrote the arguments of %s, and they do not match "
                    "its parameters:",
                    agt_call_tool(call));
    size_t i;
    json_t *e;
    json_array_foreach(errors, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "instance_path"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        agti_buf_printf(&b, "\n- %s: %s", path && path[0] ? path : "(arguments)",
                        msg ? msg : "invalid");
    }
    if (b.oom) {
        agti_buf_free(&b);
        return agti_oom();
    }
    int rc = agti_refuse(call, AGT_EINVALID, agti_buf_cstr(&b), out);
    agti_buf_free(&b);
    return rc;
}

int agti_hook_pre(agt_session *s, agt_call *call, agt_result **out, agti_buf *note,
                  agti_buf *context)
{
    agti_policy *p = s->policy;
    if (p->pre_hook == NULL)
        return AGT_OK;
    agt_hook h;
    memset(&h, 0, sizeof h);
    h.tool = agt_call_tool(call);
    h.call_id = agt_call_id(call);
    h.args = agt_call_args(call);
    int rc = AGT_OK;
    if (!call_hook(s, p->pre_hook, p->pre_payload, &h, note, "pre-tool-use")) {
        hook_release(&h);
        return note->oom ? agti_oom() : AGT_OK;
    }
    if (h.context.oom) {
        hook_release(&h);
        return agti_oom();
    }
    if (h.context.len > 0) {
        /* the hook's answer stands from here on: the context goes with
         * whatever result the call gets, a refusal included */
        agti_buf_free(context);
        *context = h.context;
        h.context = (agti_buf)AGTI_BUF_INIT;
    }
    if (h.denied) {
        bool has = h.deny_reason && h.deny_reason[0];
        char *text = agti_aprintf("A pre-tool-use hook blocked this %s call%s%s", h.tool,
                                  has ? ": " : ".", has ? h.deny_reason : "");
        rc = text ? agti_refuse(call, AGT_EDENIED, text, out) : agti_oom();
        free(text);
    } else if (h.rewrite != NULL) {
        /* the hook is host code: it may have removed the tool (the caller
         * then refuses the call) or moved the registry's entries */
        const agti_tool *t = agti_registry_find(s->reg, agt_call_tool(call));
        if (t == NULL) {
            hook_release(&h);
            return AGT_OK;
        }
        call->entry = t;
        const agt_schema *schema = NULL;
        json_t *errors = NULL;
        rc = agti_tool_schema(t, &schema);
        if (rc == AGT_OK && schema != NULL)
            rc = agti_schema_validate_json(schema, h.rewrite, &errors);
        agti_buf where = AGTI_BUF_INIT;
        if (rc == AGT_OK && agti_args_find_nul(h.rewrite, &where)) {
            char *text = agti_aprintf("A pre-tool-use hook rewrote the arguments of %s, and they "
                                      "contain a NUL character (\\u0000) at %s.",
                                      h.tool, where.oom ? "(arguments)" : agti_buf_cstr(&where));
            rc = text ? agti_refuse(call, AGT_EINVALID, text, out) : agti_oom();
            free(text);
        } else if (rc == AGT_OK) {
            rc = agti_args_integral(t, h.rewrite);
        }
        agti_buf_free(&where);
        if (rc == AGT_EINVALID) {
            rc = rewrite_invalid(call, errors, out);
        } else if (rc == AGT_OK) {
            const char *cmd =
                json_string_value(json_object_get(agti_call_args_json(call), "command"));
            char *before = cmd ? agti_strdup(cmd) : NULL;
            if (cmd != NULL && before == NULL) {
                rc = agti_oom();
            } else {
                rc = agti_call_replace_args(call, h.rewrite);
                h.rewrite = NULL;
            }
            if (rc == AGT_OK)
                rc = agti_policy_recheck_rewrite(s, call, before, out);
            free(before);
        }
        json_decref(errors);
    }
    hook_release(&h);
    return rc;
}

static int append_text(agt_result *r, const char *extra)
{
    char *t = agti_aprintf("%s%s%s", r->text, r->text[0] ? "\n\n" : "", extra);
    if (t == NULL)
        return agti_oom();
    free(r->text);
    r->text = t;
    return AGT_OK;
}

int agti_hook_post(agt_session *s, agt_result *r, const char *args, const agti_buf *context,
                   agti_buf *note)
{
    agti_policy *p = s->policy;
    int rc = AGT_OK;
    if (context != NULL && context->len > 0) {
        /* after the post hook has seen the tool's own text, but placed
         * before what it appends: the pre hook's context came first */
        if (p->post_hook == NULL || args == NULL)
            rc = append_text(r, agti_buf_cstr(context));
    }
    if (rc == AGT_OK && p->post_hook != NULL && args != NULL) {
        agt_hook h;
        memset(&h, 0, sizeof h);
        h.tool = r->tool;
        h.call_id = r->call_id;
        h.args = args;
        h.result_text = r->text;
        h.is_error = r->is_error;
        h.post = true;
        bool ok = call_hook(s, p->post_hook, p->post_payload, &h, note, "post-tool-use");
        if (context != NULL && context->len > 0)
            rc = append_text(r, agti_buf_cstr(context));
        if (rc == AGT_OK && ok && h.append.len > 0)
            rc = h.append.oom ? agti_oom() : append_text(r, agti_buf_cstr(&h.append));
        hook_release(&h);
    }
    if (rc == AGT_OK && note->len > 0)
        rc = note->oom ? agti_oom() : append_text(r, agti_buf_cstr(note));
    return rc;
}

int agt_session_set_pre_hook(agt_session *s, agt_hook_fn fn, void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_pre_hook: session is NULL");
    s->policy->pre_hook = fn;
    s->policy->pre_payload = fn ? payload : NULL;
    return AGT_OK;
}

int agt_session_set_post_hook(agt_session *s, agt_hook_fn fn, void *payload)
{
    if (s == NULL)
        return agti_error(AGT_EINVAL, "agt_session_set_post_hook: session is NULL");
    s->policy->post_hook = fn;
    s->policy->post_payload = fn ? payload : NULL;
    return AGT_OK;
}

int agt_session_set_hook_budget(agt_session *s, int64_t budget_ms)
{
    if (s == NULL || budget_ms < 1)
        return agti_error(AGT_EINVAL,
                          "agt_session_set_hook_budget: session is NULL or budget "
                          "%lld ms is below 1",
                          (long long)budget_ms);
    s->policy->hook_budget_ms = budget_ms;
    return AGT_OK;
}

const char *agt_hook_tool(const agt_hook *h)
{
    return h && h->tool ? h->tool : "";
}

const char *agt_hook_call_id(const agt_hook *h)
{
    return h && h->call_id ? h->call_id : "";
}

const char *agt_hook_args(const agt_hook *h)
{
    return h && h->args ? h->args : "{}";
}

const char *agt_hook_result_text(const agt_hook *h)
{
    return h ? h->result_text : NULL;
}

int agt_hook_result_is_error(const agt_hook *h)
{
    return h != NULL && h->is_error;
}

int agt_hook_deny(agt_hook *h, const char *reason)
{
    if (h == NULL)
        return agti_error(AGT_EINVAL, "agt_hook_deny: hook is NULL");
    if (h->post)
        return agti_error(AGT_ESTATE, "agt_hook_deny: the call has already run (post-tool-use)");
    char *c = reason ? agti_strdup(reason) : NULL;
    if (reason != NULL && c == NULL)
        return agti_oom();
    free(h->deny_reason);
    h->deny_reason = c;
    h->denied = true;
    return AGT_OK;
}

int agt_hook_rewrite(agt_hook *h, const char *json)
{
    if (h == NULL || json == NULL)
        return agti_error(AGT_EINVAL, "agt_hook_rewrite: hook or json is NULL");
    if (h->post)
        return agti_error(AGT_ESTATE, "agt_hook_rewrite: the call has already run (post-tool-use)");
    json_t *v = agti_json_parse(json, strlen(json), "rewritten arguments");
    if (v == NULL)
        return agt_error_code();
    if (!json_is_object(v)) {
        json_decref(v);
        return agti_error(AGT_EINVALID, "rewritten arguments: expected a JSON object");
    }
    json_decref(h->rewrite);
    h->rewrite = v;
    return AGT_OK;
}

int agt_hook_add_context(agt_hook *h, const char *text)
{
    if (h == NULL || text == NULL)
        return agti_error(AGT_EINVAL, "agt_hook_add_context: hook or text is NULL");
    if (h->post)
        return agti_error(AGT_ESTATE, "agt_hook_add_context: the call has already run "
                                      "(post-tool-use); use agt_hook_append there");
    if (h->context.len)
        agti_buf_putc(&h->context, '\n');
    agti_utf8_sanitize(&h->context, text, strlen(text));
    return h->context.oom ? agti_oom() : AGT_OK;
}

int agt_hook_append(agt_hook *h, const char *text)
{
    if (h == NULL || text == NULL)
        return agti_error(AGT_EINVAL, "agt_hook_append: hook or text is NULL");
    if (!h->post)
        return agti_error(AGT_ESTATE, "agt_hook_append: only a post-tool-use hook appends");
    if (h->append.len)
        agti_buf_putc(&h->append, '\n');
    agti_utf8_sanitize(&h->append, text, strlen(text));
    return h->append.oom ? agti_oom() : AGT_OK;
}
