/* Suspended calls (subapproval.h): a provider that cannot finish yet marks
 * its call suspended; the session keeps it until agti_session_complete()
 * gives it its text and runs the post-tool-use hook. Also the lister of the
 * sub-agents' pending calls. */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "policy.h"
#include "session_internal.h"
#include "subapproval.h"

/* A call whose provider suspended it (subapproval.h). */
typedef struct agti_suspended {
    char *call_id;
    char *tool;
    char *args;    /* the arguments it ran with */
    char *note;    /* hook failures to append to its result; NULL: none */
    char *context; /* the pre-tool-use hook's context for the model; NULL: none */
} agti_suspended;

struct agti_subappr {
    agti_suspended *calls;
    size_t n;
    agti_pending_ext_fn pending_fn;
    void *pending_payload;
};

static void suspended_clear(agti_suspended *c)
{
    free(c->call_id);
    free(c->tool);
    free(c->args);
    free(c->note);
    free(c->context);
}

void agti_subappr_free(struct agti_subappr *sa)
{
    if (sa == NULL)
        return;
    for (size_t i = 0; i < sa->n; i++)
        suspended_clear(&sa->calls[i]);
    free(sa->calls);
    free(sa);
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

int agti_suspend_keep(agt_session *s, const char *call_id, const char *tool, gate_ctx *g)
{
    if (agti_session_is_suspended(s, call_id))
        return agti_error(AGT_EEXISTS, "call id '%s' is already suspended", call_id);
    agti_suspended c = {agti_strdup(call_id), agti_strdup(tool), g->args,
                        g->note.len ? agti_buf_detach(&g->note) : NULL,
                        g->context.len ? agti_buf_detach(&g->context) : NULL};
    g->args = NULL;
    if (!c.call_id || !c.tool || !c.args) {
        suspended_clear(&c);
        return agti_oom();
    }
    int rc = add_suspended(s, c);
    return rc == AGT_OK ? AGT_EPENDING : rc;
}

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
    agti_buf note = AGTI_BUF_INIT, context = AGTI_BUF_INIT;
    if (c.note != NULL)
        agti_buf_puts(&note, c.note);
    if (c.context != NULL)
        agti_buf_puts(&context, c.context);
    int rc = note.oom || context.oom ? agti_oom() : agti_hook_post(s, r, c.args, &context, &note);
    agti_buf_free(&note);
    agti_buf_free(&context);
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
        if (json_array_append_new(
                list, json_pack("{s:o,s:o,s:s,s:o,s:o*}", "call_id", agti_json_text(c->call_id),
                                "tool", agti_json_text(c->tool), "arguments", c->args, "note",
                                agti_json_text(c->note), "context",
                                c->context ? agti_json_text(c->context) : NULL)) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    return list;
}

int agti_session_add_suspended(agt_session *s, const char *call_id, const char *tool,
                               const char *args, const char *note, const char *context)
{
    if (agti_session_is_suspended(s, call_id))
        return agti_error(AGT_EEXISTS, "call id '%s' is already suspended", call_id);
    agti_suspended c = {agti_strdup(call_id), agti_strdup(tool), agti_strdup(args),
                        note ? agti_strdup(note) : NULL, context ? agti_strdup(context) : NULL};
    if (!c.call_id || !c.tool || !c.args || (note && !c.note) || (context && !c.context)) {
        suspended_clear(&c);
        return agti_oom();
    }
    return add_suspended(s, c);
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

int agti_subappr_list_pending(const agt_session *s, json_t *list)
{
    const struct agti_subappr *sa = s->policy->sub;
    if (sa != NULL && sa->pending_fn != NULL)
        return sa->pending_fn(sa->pending_payload, list);
    return AGT_OK;
}
