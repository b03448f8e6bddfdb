#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

agt_model_response *agti_resp_new(void)
{
    agt_model_response *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->usage[0] = r->usage[1] = r->usage[2] = -1;
    return r;
}

agti_tool_call *agti_resp_call(agt_model_response *r, size_t index)
{
    if (index >= 4096) {
        agti_error(AGT_EPARSE, "tool call index %zu is out of range (limit 4096)", index);
        return NULL;
    }
    if (index >= r->cap_calls) {
        size_t cap = r->cap_calls ? r->cap_calls : 4;
        while (cap <= index)
            cap *= 2;
        agti_tool_call *c = realloc(r->calls, cap * sizeof *c);
        if (!c) {
            agti_oom();
            return NULL;
        }
        memset(c + r->cap_calls, 0, (cap - r->cap_calls) * sizeof *c);
        r->calls = c;
        r->cap_calls = cap;
    }
    if (index >= r->n_calls)
        r->n_calls = index + 1;
    return &r->calls[index];
}

void agti_resp_set_finish(agt_model_response *r, const char *finish)
{
    if (!finish || !*finish)
        return;
    char *f = agti_strdup(finish);
    if (!f)
        return;
    free(r->finish);
    r->finish = f;
}

int agti_sink_emit(const agti_stream_sink *s, int kind, const char *text, size_t len)
{
    if (!s || !s->fn || len == 0)
        return 0;
    return s->fn(kind, text, len, s->payload);
}

int agti_resp_finish(agt_model_response *r)
{
    json_t *root = json_object();
    json_t *calls = json_array();
    if (!root || !calls) {
        json_decref(root);
        json_decref(calls);
        return agti_oom();
    }
    int rc = AGT_OK;
    json_object_set_new(root, "content", json_stringn(agti_buf_cstr(&r->text), r->text.len));
    if (r->thinking.len)
        json_object_set_new(root, "reasoning_content",
                            json_stringn(agti_buf_cstr(&r->thinking), r->thinking.len));
    size_t kept = 0;
    for (size_t i = 0; i < r->n_calls; i++) {
        agti_tool_call *c = &r->calls[i];
        if (!c->name && !c->args.len && !c->id)
            continue; /* a gap left by sparse indices */
        if (!c->name || !*c->name) {
            /* agti_resp_from_json refuses such a call too: the canonical
             * form must read back */
            rc = agti_error(AGT_EPARSE, "model answer: tool call %zu%s%s%s has no function name", i,
                            c->id ? " (id " : "", c->id ? c->id : "", c->id ? ")" : "");
            break;
        }
        if (!c->id || !*c->id) {
            free(c->id);
            c->id = agti_aprintf("call_%zu", i);
            if (!c->id) {
                rc = agti_oom();
                break;
            }
        }
        if (c->args.oom) {
            rc = agti_oom();
            break;
        }
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(c->id));
        json_object_set_new(o, "name", json_string(c->name ? c->name : ""));
        json_object_set_new(
            o, "arguments",
            json_stringn(c->args.len ? c->args.ptr : "{}", c->args.len ? c->args.len : 2));
        json_array_append_new(calls, o);
        if (kept != i) {
            r->calls[kept] = *c;
            memset(c, 0, sizeof *c);
        }
        kept++;
    }
    if (rc == AGT_OK) {
        for (size_t i = kept; i < r->n_calls; i++) {
            free(r->calls[i].id);
            free(r->calls[i].name);
            agti_buf_free(&r->calls[i].args);
        }
        r->n_calls = kept;
        json_object_set_new(root, "tool_calls", calls);
        calls = NULL;
        /* "" when the provider sent none (self-hosted servers such as TGI):
         * a made-up "stop" would hide a cut-off stream from the host */
        json_object_set_new(root, "finish_reason", json_string(r->finish ? r->finish : ""));
        json_t *u = json_object();
        const char *names[3] = {"prompt_tokens", "completion_tokens", "total_tokens"};
        if (r->usage[2] < 0 && r->usage[0] >= 0 && r->usage[1] >= 0 &&
            r->usage[0] <= INT64_MAX - r->usage[1]) /* a sum past INT64_MAX stays unknown */
            r->usage[2] = r->usage[0] + r->usage[1];
        for (int k = 0; k < 3; k++)
            json_object_set_new(u, names[k],
                                r->usage[k] >= 0 ? json_integer(r->usage[k]) : json_null());
        json_object_set_new(root, "usage", u);
        if (r->text.oom || r->thinking.oom)
            rc = agti_oom();
        else {
            free(r->json);
            r->json = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
            if (!r->json) {
                if (!agti_utf8_valid(agti_buf_cstr(&r->text), r->text.len))
                    rc = agti_error(AGT_EPARSE, "model answer is not valid UTF-8");
                else
                    rc = agti_oom();
            }
        }
    }
    json_decref(calls);
    json_decref(root);
    return rc;
}

static int get_string_field(const json_t *obj, const char *key, const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return AGT_OK;
    if (!json_is_string(v))
        return agti_error(AGT_EPARSE, "response field \"%s\" is not a string", key);
    *out = json_string_value(v);
    return AGT_OK;
}

int agti_resp_from_json(agt_model_response *r, const json_t *obj)
{
    if (!json_is_object(obj))
        return agti_error(AGT_EPARSE, "response is not a JSON object");
    const char *s;
    int rc;
    if ((rc = get_string_field(obj, "content", &s)) != AGT_OK)
        return rc;
    if (s)
        agti_buf_puts(&r->text, s);
    if ((rc = get_string_field(obj, "reasoning_content", &s)) != AGT_OK)
        return rc;
    if (!s && (rc = get_string_field(obj, "reasoning", &s)) != AGT_OK)
        return rc;
    if (s)
        agti_buf_puts(&r->thinking, s);
    if ((rc = get_string_field(obj, "finish_reason", &s)) != AGT_OK)
        return rc;
    agti_resp_set_finish(r, s);
    json_t *calls = json_object_get(obj, "tool_calls");
    if (calls && !json_is_null(calls)) {
        if (!json_is_array(calls))
            return agti_error(AGT_EPARSE, "response field \"tool_calls\" is not an array");
        size_t i;
        json_t *c;
        json_array_foreach(calls, i, c)
        {
            if (!json_is_object(c))
                return agti_error(AGT_EPARSE, "tool_calls[%zu] is not an object", i);
            json_t *fn = json_object_get(c, "function");
            const json_t *src = json_is_object(fn) ? fn : c;
            json_t *name = json_object_get(src, "name");
            json_t *args = json_object_get(src, "arguments");
            json_t *id = json_object_get(c, "id");
            if (!json_is_string(name) || !*json_string_value(name))
                return agti_error(AGT_EPARSE, "tool_calls[%zu] has no \"name\" string", i);
            agti_tool_call *tc = agti_resp_call(r, i);
            if (!tc)
                return agt_error_code();
            tc->name = agti_strdup(json_string_value(name));
            if (json_is_string(id))
                tc->id = agti_strdup(json_string_value(id));
            if (json_is_string(args))
                agti_buf_puts(&tc->args, json_string_value(args));
            else if (args && !json_is_null(args)) {
                char *d = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
                if (!d)
                    return agti_oom();
                agti_buf_puts(&tc->args, d);
                free(d);
            }
            if (!tc->name)
                return agti_oom();
        }
    }
    json_t *u = json_object_get(obj, "usage");
    if (json_is_object(u)) {
        const char *names[3] = {"prompt_tokens", "completion_tokens", "total_tokens"};
        for (int k = 0; k < 3; k++) {
            json_t *v = json_object_get(u, names[k]);
            if (json_is_integer(v))
                r->usage[k] = json_integer_value(v);
        }
    }
    return AGT_OK;
}

int agt_model_response_parse(agt_model_response **out, const char *json, size_t len)
{
    if (!out || !json)
        return agti_error(AGT_EINVAL, "agt_model_response_parse: NULL argument");
    *out = NULL;
    json_t *root = agti_json_parse(json, len, "model response");
    if (!root)
        return AGT_EPARSE;
    agt_model_response *r = agti_resp_new();
    if (!r) {
        json_decref(root);
        return agti_oom();
    }
    int rc = agti_resp_from_json(r, root);
    json_decref(root);
    if (rc == AGT_OK)
        rc = agti_resp_finish(r);
    if (rc != AGT_OK) {
        agt_model_response_free(r);
        return rc;
    }
    *out = r;
    return AGT_OK;
}

void agt_model_response_free(agt_model_response *r)
{
    if (!r)
        return;
    agti_buf_free(&r->text);
    agti_buf_free(&r->thinking);
    for (size_t i = 0; i < r->n_calls; i++) {
        free(r->calls[i].id);
        free(r->calls[i].name);
        agti_buf_free(&r->calls[i].args);
    }
    free(r->calls);
    free(r->finish);
    free(r->json);
    free(r);
}

const char *agt_model_response_json(const agt_model_response *r)
{
    return r && r->json ? r->json : "{}";
}

const char *agt_model_response_text(const agt_model_response *r)
{
    return r ? agti_buf_cstr(&r->text) : "";
}

const char *agt_model_response_thinking(const agt_model_response *r)
{
    return r ? agti_buf_cstr(&r->thinking) : "";
}

const char *agt_model_response_finish_reason(const agt_model_response *r)
{
    return r && r->finish ? r->finish : "";
}

size_t agt_model_response_tool_count(const agt_model_response *r)
{
    return r ? r->n_calls : 0;
}

const char *agt_model_response_tool_id(const agt_model_response *r, size_t i)
{
    return r && i < r->n_calls ? r->calls[i].id : NULL;
}

const char *agt_model_response_tool_name(const agt_model_response *r, size_t i)
{
    return r && i < r->n_calls ? (r->calls[i].name ? r->calls[i].name : "") : NULL;
}

const char *agt_model_response_tool_arguments(const agt_model_response *r, size_t i)
{
    if (!r || i >= r->n_calls)
        return NULL;
    return r->calls[i].args.len ? r->calls[i].args.ptr : "{}";
}

int agt_model_response_usage(const agt_model_response *r, int64_t *prompt_tokens,
                             int64_t *completion_tokens, int64_t *total_tokens)
{
    if (!r)
        return agti_error(AGT_EINVAL, "agt_model_response_usage: response is NULL");
    if (prompt_tokens)
        *prompt_tokens = r->usage[0];
    if (completion_tokens)
        *completion_tokens = r->usage[1];
    if (total_tokens)
        *total_tokens = r->usage[2];
    return AGT_OK;
}
