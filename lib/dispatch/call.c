#include <stdlib.h>
#include <string.h>

#include "dispatch_internal.h"

const char *agt_call_id(const agt_call *call)
{
    return call && call->id ? call->id : "";
}

const char *agt_call_tool(const agt_call *call)
{
    return call && call->tool ? call->tool : "";
}

const char *agt_call_args(const agt_call *call)
{
    if (call == NULL)
        return "{}";
    if (call->args_dump != NULL)
        return call->args_dump;
    return call->args_text;
}

struct agt_session *agt_call_session(const agt_call *call)
{
    return call ? call->session : NULL;
}

json_t *agti_call_args_json(const agt_call *call)
{
    return call->args;
}

void agti_call_suspend(agt_call *call)
{
    call->suspended = true;
}

int agti_call_replace_args(agt_call *call, json_t *args)
{
    /* dumped first: with the dump failing after the swap, agt_call_args()
     * fell back to the text as received and a host provider ran on the
     * arguments the hook had rewritten away */
    char *dump = agti_json_dump(args);
    if (dump == NULL) {
        json_decref(args);
        return agti_oom();
    }
    json_decref(call->args);
    call->args = args;
    free(call->args_dump);
    call->args_dump = dump;
    return AGT_OK;
}

static int set_result_text(agt_call *call, const char *text, bool is_error)
{
    if (call == NULL || text == NULL)
        return agti_error(AGT_EINVAL, "agt_call_set_%s: call or text is NULL",
                          is_error ? "error" : "text");
    agti_buf_truncate(&call->text, 0);
    call->text.oom = false;
    agti_utf8_sanitize(&call->text, text, strlen(text));
    if (call->text.oom)
        return agti_oom();
    call->text_set = true;
    call->is_error = is_error;
    return AGT_OK;
}

int agti_call_take_text(agt_call *call, agti_buf *b)
{
    if (b->oom) {
        agti_buf_free(b);
        return agti_oom();
    }
    const char *text = agti_buf_cstr(b);
    if (b->oom || !agti_utf8_valid(text, b->len) || memchr(text, '\0', b->len) != NULL) {
        int rc = b->oom ? agti_oom() : set_result_text(call, text, false);
        agti_buf_free(b);
        return rc;
    }
    agti_buf_free(&call->text);
    call->text = *b;
    *b = (agti_buf)AGTI_BUF_INIT;
    call->text_set = true;
    call->is_error = false;
    return AGT_OK;
}

int agt_call_set_text(agt_call *call, const char *text)
{
    return set_result_text(call, text, false);
}

int agt_call_set_error(agt_call *call, const char *text)
{
    return set_result_text(call, text, true);
}

int agt_call_set_json(agt_call *call, const char *json, size_t len)
{
    if (call == NULL)
        return agti_error(AGT_EINVAL, "agt_call_set_json: call is NULL");
    json_t *v = agti_json_parse(json, len, "result JSON");
    if (v == NULL)
        return agt_error_code();
    json_decref(call->json);
    call->json = v;
    return AGT_OK;
}

agt_result *agti_result_new(const char *call_id, const char *tool, const char *text, bool is_error,
                            int status)
{
    agt_result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->text = agti_strdup(text ? text : "");
    r->call_id = agti_strdup(call_id ? call_id : "");
    r->tool = agti_strdup(tool ? tool : "");
    r->is_error = is_error;
    r->status = status;
    if (!r->text || !r->call_id || !r->tool) {
        agt_result_free(r);
        return NULL;
    }
    return r;
}

const char *agt_result_text(const agt_result *r)
{
    return r && r->text ? r->text : "";
}

int agt_result_is_error(const agt_result *r)
{
    return r != NULL && r->is_error;
}

int agt_result_status(const agt_result *r)
{
    return r ? r->status : AGT_EINVAL;
}

const char *agt_result_json(const agt_result *r)
{
    return r ? r->json : NULL;
}

const char *agt_result_call_id(const agt_result *r)
{
    return r && r->call_id ? r->call_id : "";
}

const char *agt_result_tool(const agt_result *r)
{
    return r && r->tool ? r->tool : "";
}

void agt_result_free(agt_result *r)
{
    if (r == NULL)
        return;
    free(r->text);
    free(r->json);
    free(r->call_id);
    free(r->tool);
    free(r);
}
