#include <jansson.h>
#include <string.h>

#include "model_internal.h"

static void merge_extra(const agt_model *m, json_t *body)
{
    if (m->extra_body)
        json_object_update(body, m->extra_body);
}

json_t *agti_request_openai(const agt_model *m, json_t *messages, json_t *tools)
{
    json_t *body = json_object();
    if (!body) {
        agti_oom();
        return NULL;
    }
    json_object_set_new(body, "model", json_string(m->name ? m->name : ""));
    /* Our own marks are not Chat Completions fields, and DeepSeek refuses
     * reasoning_content in input messages: leave both out. */
    json_t *sent = json_array();
    size_t i;
    json_t *msg;
    json_array_foreach(messages, i, msg)
    {
        json_t *c = json_copy(msg);
        json_object_del(c, "is_error");
        json_object_del(c, "reasoning_content");
        json_array_append_new(sent, c);
    }
    json_object_set_new(body, "messages", sent);
    if (tools && json_array_size(tools) > 0)
        json_object_set(body, "tools", tools);
    if (m->max_tokens > 0)
        json_object_set_new(body,
                            m->max_tokens_field == AGT_MAX_COMPLETION_TOKENS
                                ? "max_completion_tokens"
                                : "max_tokens",
                            json_integer(m->max_tokens));
    if (m->stream) {
        json_object_set_new(body, "stream", json_true());
        json_t *so = json_object();
        json_object_set_new(so, "include_usage", json_true());
        json_object_set_new(body, "stream_options", so);
    }
    merge_extra(m, body);
    return body;
}

/* Appends content blocks to the last message when it has the same role
 * (Anthropic requires user and assistant turns to alternate). */
static int push_blocks(json_t *out, const char *role, json_t *blocks)
{
    size_t n = json_array_size(out);
    json_t *last = n ? json_array_get(out, n - 1) : NULL;
    if (last && strcmp(json_string_value(json_object_get(last, "role")), role) == 0) {
        json_array_extend(json_object_get(last, "content"), blocks);
        json_decref(blocks);
        return AGT_OK;
    }
    json_t *msg = json_object();
    json_object_set_new(msg, "role", json_string(role));
    json_object_set_new(msg, "content", blocks);
    json_array_append_new(out, msg);
    return AGT_OK;
}

/* The text of a canonical "content": a string, or an array of {"type":"text","text"}. */
static void content_text(const json_t *content, agti_buf *b)
{
    if (json_is_string(content)) {
        agti_buf_put(b, json_string_value(content), json_string_length(content));
        return;
    }
    size_t i;
    json_t *part;
    json_array_foreach(content, i, part)
    {
        json_t *t = json_object_get(part, "text");
        if (json_is_string(t))
            agti_buf_put(b, json_string_value(t), json_string_length(t));
    }
}

static json_t *text_block(const char *text, size_t len)
{
    json_t *b = json_object();
    json_object_set_new(b, "type", json_string("text"));
    json_object_set_new(b, "text", json_stringn(text, len));
    return b;
}

json_t *agti_request_anthropic(const agt_model *m, json_t *messages, json_t *tools)
{
    json_t *body = json_object();
    json_t *out = json_array();
    agti_buf system = AGTI_BUF_INIT;
    if (!body || !out) {
        json_decref(body);
        json_decref(out);
        agti_oom();
        return NULL;
    }
    size_t i;
    json_t *msg;
    json_array_foreach(messages, i, msg)
    {
        const char *role = json_string_value(json_object_get(msg, "role"));
        json_t *content = json_object_get(msg, "content");
        agti_buf text = AGTI_BUF_INIT;
        content_text(content, &text);
        if (strcmp(role, "system") == 0) {
            if (system.len)
                agti_buf_puts(&system, "\n\n");
            agti_buf_put(&system, agti_buf_cstr(&text), text.len);
        } else if (strcmp(role, "user") == 0) {
            json_t *blocks = json_array();
            json_array_append_new(blocks, text_block(agti_buf_cstr(&text), text.len));
            push_blocks(out, "user", blocks);
        } else if (strcmp(role, "assistant") == 0) {
            json_t *blocks = json_array();
            if (text.len)
                json_array_append_new(blocks, text_block(text.ptr, text.len));
            size_t k;
            json_t *tc;
            json_array_foreach(json_object_get(msg, "tool_calls"), k, tc)
            {
                json_t *fn = json_object_get(tc, "function");
                const json_t *src = json_is_object(fn) ? fn : tc;
                json_t *args = json_object_get(src, "arguments");
                json_t *input = NULL;
                if (json_is_string(args))
                    input = json_loadb(json_string_value(args), json_string_length(args), 0, NULL);
                else if (json_is_object(args))
                    input = json_incref(args);
                if (!json_is_object(input)) {
                    json_decref(input);
                    input = json_object();
                }
                json_t *b = json_object();
                json_object_set_new(b, "type", json_string("tool_use"));
                json_object_set(b, "id", json_object_get(tc, "id"));
                json_object_set(b, "name", json_object_get(src, "name"));
                json_object_set_new(b, "input", input);
                json_array_append_new(blocks, b);
            }
            if (json_array_size(blocks) == 0)
                json_array_append_new(blocks, text_block("", 0));
            push_blocks(out, "assistant", blocks);
        } else if (strcmp(role, "tool") == 0) {
            json_t *blocks = json_array();
            json_t *b = json_object();
            json_object_set_new(b, "type", json_string("tool_result"));
            json_object_set(b, "tool_use_id", json_object_get(msg, "tool_call_id"));
            json_object_set_new(b, "content", json_stringn(agti_buf_cstr(&text), text.len));
            if (json_is_true(json_object_get(msg, "is_error")))
                json_object_set_new(b, "is_error", json_true());
            json_array_append_new(blocks, b);
            push_blocks(out, "user", blocks);
        }
        agti_buf_free(&text);
    }
    json_object_set_new(body, "model", json_string(m->name ? m->name : ""));
    json_object_set_new(body, "max_tokens", json_integer(m->max_tokens > 0 ? m->max_tokens : 4096));
    if (system.len)
        json_object_set_new(body, "system", json_stringn(system.ptr, system.len));
    json_object_set_new(body, "messages", out);
    if (tools && json_array_size(tools) > 0) {
        json_t *at = json_array();
        size_t k;
        json_t *t;
        json_array_foreach(tools, k, t)
        {
            json_t *fn = json_object_get(t, "function");
            if (!json_is_object(fn)) {
                json_array_append(at, t); /* already Anthropic-shaped */
                continue;
            }
            json_t *o = json_object();
            json_object_set(o, "name", json_object_get(fn, "name"));
            if (json_object_get(fn, "description"))
                json_object_set(o, "description", json_object_get(fn, "description"));
            json_t *params = json_object_get(fn, "parameters");
            if (params)
                json_object_set(o, "input_schema", params);
            else
                json_object_set_new(o, "input_schema", json_pack("{s:s}", "type", "object"));
            json_array_append_new(at, o);
        }
        json_object_set_new(body, "tools", at);
    }
    if (m->stream)
        json_object_set_new(body, "stream", json_true());
    merge_extra(m, body);
    agti_buf_free(&system);
    return body;
}
