#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

static agt_model *model_alloc(int kind)
{
    agt_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->kind = kind;
    m->stream = 1;
    m->connect_ms = 30000;
    m->total_ms = 600000;
    m->low_speed_ms = 60000;
    m->max_retries = 3;
    m->backoff_base_ms = 500;
    m->backoff_max_ms = 30000;
    atomic_init(&m->cancelled, 0);
    return m;
}

int agt_model_new(agt_model **out, int protocol)
{
    if (!out)
        return agti_error(AGT_EINVAL, "agt_model_new: out is NULL");
    *out = NULL;
    if (protocol != AGT_PROTOCOL_OPENAI && protocol != AGT_PROTOCOL_ANTHROPIC)
        return agti_error(AGT_EINVAL, "agt_model_new: unknown protocol %d", protocol);
    int rc = agti_ensure_init();
    if (rc != AGT_OK)
        return rc;
    agt_model *m = model_alloc(AGTI_MODEL_HTTP);
    if (!m)
        return agti_oom();
    m->protocol = protocol;
    m->base_url = agti_strdup(protocol == AGT_PROTOCOL_OPENAI ? "https://api.openai.com/v1"
                                                              : "https://api.anthropic.com/v1");
    if (!m->base_url) {
        agt_model_free(m);
        return agti_oom();
    }
    *out = m;
    return AGT_OK;
}

static int read_file(const char *path, agti_buf *b)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return agti_error(AGT_EIO, "cannot open replay file '%s': %s", path, strerror(errno));
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        agti_buf_put(b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return agti_error(AGT_EIO, "cannot read replay file '%s'", path);
    return b->oom ? agti_oom() : AGT_OK;
}

int agt_model_new_replay(agt_model **out, const char *path)
{
    if (!out || !path)
        return agti_error(AGT_EINVAL, "agt_model_new_replay: NULL argument");
    *out = NULL;
    agti_buf b = AGTI_BUF_INIT;
    int rc = read_file(path, &b);
    agt_model *m = rc == AGT_OK ? model_alloc(AGTI_MODEL_REPLAY) : NULL;
    if (rc == AGT_OK && !m)
        rc = agti_oom();
    const char *p = agti_buf_cstr(&b), *end = p + b.len;
    size_t lineno = 0;
    while (rc == AGT_OK && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        lineno++;
        size_t k = 0;
        while (k < len && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r'))
            k++;
        if (k < len) {
            json_error_t je;
            json_t *v = json_loadb(p, len, 0, &je);
            if (!json_is_object(v)) {
                rc = agti_error(AGT_EPARSE, "replay file '%s', line %zu: %s", path, lineno,
                                v ? "not a JSON object" : je.text);
            } else {
                agt_model_response *r = agti_resp_new();
                rc = r ? agti_resp_from_json(r, v) : agti_oom();
                if (rc != AGT_OK)
                    agti_error_prefix("replay file '%s', line %zu", path, lineno);
                agt_model_response_free(r);
            }
            json_decref(v);
            if (rc == AGT_OK) {
                char **nlines = realloc(m->lines, (m->n_lines + 1) * sizeof *nlines);
                char *copy = agti_strndup(p, len);
                if (!nlines || !copy) {
                    free(copy);
                    if (nlines)
                        m->lines = nlines;
                    rc = agti_oom();
                } else {
                    m->lines = nlines;
                    m->lines[m->n_lines++] = copy;
                }
            }
        }
        p += len + (nl ? 1 : 0);
    }
    agti_buf_free(&b);
    if (rc != AGT_OK) {
        agt_model_free(m);
        return rc;
    }
    *out = m;
    return AGT_OK;
}

int agt_model_new_host(agt_model **out, agt_model_host_fn fn, void *payload)
{
    if (!out || !fn)
        return agti_error(AGT_EINVAL, "agt_model_new_host: %s is NULL", out ? "fn" : "out");
    *out = NULL;
    agt_model *m = model_alloc(AGTI_MODEL_HOST);
    if (!m)
        return agti_oom();
    m->host_fn = fn;
    m->host_payload = payload;
    *out = m;
    return AGT_OK;
}

void agt_model_free(agt_model *m)
{
    if (!m)
        return;
    agti_error_forget(m);
    free(m->base_url);
    if (m->api_key) {
        memset(m->api_key, 0, strlen(m->api_key));
        free(m->api_key);
    }
    free(m->name);
    json_decref(m->extra_body);
    if (m->extra_headers) { /* values may carry credentials */
        const char *k;
        json_t *v;
        json_object_foreach(m->extra_headers, k, v)
        {
            if (json_is_string(v))
                memset((char *)json_string_value(v), 0, json_string_length(v));
        }
        json_decref(m->extra_headers);
    }
    for (size_t i = 0; i < m->n_lines; i++)
        free(m->lines[i]);
    free(m->lines);
    free(m);
}

int agt_model_reply_set(agt_model_reply *reply, const char *json, size_t len)
{
    if (!reply || !json)
        return agti_error(AGT_EINVAL, "agt_model_reply_set: NULL argument");
    json_t *v = agti_json_parse(json, len, "host model reply");
    if (!v)
        return AGT_EPARSE;
    if (!json_is_object(v)) {
        json_decref(v);
        return agti_error(AGT_EPARSE, "host model reply is not a JSON object");
    }
    json_decref(reply->json);
    reply->json = v;
    return AGT_OK;
}

int agt_model_reply_set_error(agt_model_reply *reply, const char *message)
{
    if (!reply || !message)
        return agti_error(AGT_EINVAL, "agt_model_reply_set_error: NULL argument");
    char *c = agti_strdup(message);
    if (!c)
        return agti_oom();
    free(reply->error);
    reply->error = c;
    return AGT_OK;
}

static int set_str(char **dst, const char *v)
{
    char *c = NULL;
    if (v && !(c = agti_strdup(v)))
        return agti_oom();
    free(*dst);
    *dst = c;
    return AGT_OK;
}

int agt_model_set_base_url(agt_model *m, const char *url)
{
    if (!m || !url || !*url)
        return agti_error(AGT_EINVAL, "agt_model_set_base_url: %s",
                          m ? "url is NULL or empty" : "model is NULL");
    if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0)
        return agti_error(AGT_EINVAL, "model base URL '%s' is not http:// or https://", url);
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    char *c = agti_strndup(url, n);
    if (!c)
        return agti_oom();
    free(m->base_url);
    m->base_url = c;
    return AGT_OK;
}

int agt_model_set_api_key(agt_model *m, const char *key)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_api_key: model is NULL");
    if (m->api_key)
        memset(m->api_key, 0, strlen(m->api_key));
    return set_str(&m->api_key, key && *key ? key : NULL);
}

int agt_model_set_name(agt_model *m, const char *name)
{
    if (!m || !name)
        return agti_error(AGT_EINVAL, "agt_model_set_name: NULL argument");
    return set_str(&m->name, name);
}

int agt_model_set_timeouts(agt_model *m, int64_t connect_ms, int64_t total_ms, int64_t low_speed_ms)
{
    if (!m || connect_ms < 0 || total_ms < 0 || low_speed_ms < 0)
        return agti_error(AGT_EINVAL, "agt_model_set_timeouts: %s",
                          m ? "negative time limit" : "model is NULL");
    m->connect_ms = connect_ms;
    m->total_ms = total_ms;
    m->low_speed_ms = low_speed_ms;
    return AGT_OK;
}

int agt_model_set_retries(agt_model *m, int max_retries, int64_t base_ms, int64_t max_ms)
{
    if (!m || max_retries < 0 || base_ms < 0 || max_ms < 0)
        return agti_error(AGT_EINVAL, "agt_model_set_retries: %s",
                          m ? "negative value" : "model is NULL");
    m->max_retries = max_retries;
    m->backoff_base_ms = base_ms;
    m->backoff_max_ms = max_ms;
    return AGT_OK;
}

int agt_model_set_max_tokens(agt_model *m, int64_t max_tokens, int field)
{
    if (!m || max_tokens < 0 || (field != AGT_MAX_TOKENS && field != AGT_MAX_COMPLETION_TOKENS))
        return agti_error(AGT_EINVAL, "agt_model_set_max_tokens: %s",
                          !m               ? "model is NULL"
                          : max_tokens < 0 ? "negative limit"
                                           : "unknown field");
    m->max_tokens = max_tokens;
    m->max_tokens_field = field;
    return AGT_OK;
}

int agt_model_set_extra_body(agt_model *m, const char *json, size_t len)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_extra_body: model is NULL");
    json_t *v = NULL;
    if (json) {
        v = agti_json_parse(json, len, "extra_body");
        if (!v)
            return AGT_EPARSE;
        if (!json_is_object(v)) {
            json_decref(v);
            return agti_error(AGT_EPARSE, "extra_body is not a JSON object");
        }
    }
    json_decref(m->extra_body);
    m->extra_body = v;
    return AGT_OK;
}

/* RFC 9110 section 5.6.2 token characters. */
static bool is_tchar(unsigned char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

int agt_model_set_extra_headers(agt_model *m, const char *json, size_t len)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_extra_headers: model is NULL");
    json_t *v = NULL;
    if (json) {
        v = agti_json_parse(json, len, "extra_headers");
        if (!v)
            return AGT_EPARSE;
        if (!json_is_object(v)) {
            json_decref(v);
            return agti_error(AGT_EPARSE, "extra_headers is not a JSON object");
        }
        const char *k;
        json_t *val;
        json_object_foreach(v, k, val)
        {
            bool name_ok = k[0] != '\0';
            for (const char *p = k; *p && name_ok; p++)
                name_ok = is_tchar((unsigned char)*p);
            if (!name_ok) {
                int rc = agti_error(AGT_EINVALID,
                                    "extra_headers: \"%.100s\" is not a header name (letters, "
                                    "digits and !#$%%&'*+-.^_`|~ only)",
                                    k);
                json_decref(v);
                return rc;
            }
            if (!json_is_string(val) ||
                strcspn(json_string_value(val), "\r\n") != json_string_length(val)) {
                int rc = agti_error(AGT_EINVALID,
                                    "extra_headers: the value of \"%s\" must be a string "
                                    "without CR, LF or NUL",
                                    k);
                json_decref(v);
                return rc;
            }
        }
    }
    json_decref(m->extra_headers);
    m->extra_headers = v;
    return AGT_OK;
}

int agt_model_set_stream(agt_model *m, int on)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_stream: model is NULL");
    m->stream = on ? 1 : 0;
    return AGT_OK;
}

int agt_model_set_stream_callback(agt_model *m, agt_stream_fn fn, void *payload)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_stream_callback: model is NULL");
    m->stream_fn = fn;
    m->stream_payload = payload;
    return AGT_OK;
}

int agt_model_set_cancel_callback(agt_model *m, agt_cancel_fn fn, void *payload)
{
    if (!m)
        return agti_error(AGT_EINVAL, "agt_model_set_cancel_callback: model is NULL");
    m->cancel_fn = fn;
    m->cancel_payload = payload;
    return AGT_OK;
}

void agt_model_cancel(agt_model *m)
{
    if (m)
        atomic_store(&m->cancelled, 1);
}

int agt_model_http_status(const agt_model *m)
{
    return m ? m->http_status : 0;
}

int agt_model_attempts(const agt_model *m)
{
    return m ? m->attempts : 0;
}

/* Sends the pieces of a ready response to the sink (replay and host models). */
static int replay_events(const agt_model_response *r, const agti_stream_sink *sink)
{
    if (agti_sink_emit(sink, AGT_STREAM_THINKING, r->thinking.ptr, r->thinking.len) ||
        agti_sink_emit(sink, AGT_STREAM_TEXT, r->text.ptr, r->text.len))
        return agti_error(AGT_ECANCELLED, "model request cancelled by the stream callback");
    for (size_t i = 0; i < r->n_calls; i++) {
        const char *n = r->calls[i].name ? r->calls[i].name : "";
        if (agti_sink_emit(sink, AGT_STREAM_TOOL_CALL, n, strlen(n)))
            return agti_error(AGT_ECANCELLED, "model request cancelled by the stream callback");
    }
    return AGT_OK;
}

static int check_messages(const json_t *messages)
{
    size_t i;
    json_t *msg;
    json_array_foreach(messages, i, msg)
    {
        const char *role = json_string_value(json_object_get(msg, "role"));
        if (!json_is_object(msg) || !role)
            return agti_error(AGT_EPARSE, "messages[%zu] is not an object with a \"role\" string",
                              i);
        if (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
            strcmp(role, "tool"))
            return agti_error(AGT_EPARSE, "messages[%zu]: unknown role '%s'", i, role);
    }
    return AGT_OK;
}

static int complete_local(agt_model *m, json_t *messages, json_t *tools,
                          const agti_stream_sink *sink, agt_model_response **out)
{
    json_t *obj = NULL;
    agt_model_reply reply = {NULL, NULL};
    int rc = AGT_OK;
    if (m->kind == AGTI_MODEL_REPLAY) {
        if (m->next_line >= m->n_lines)
            return agti_error(AGT_ELIMIT, "replay model has no response left (%zu used)",
                              m->n_lines);
        const char *line = m->lines[m->next_line++];
        obj = agti_json_parse(line, strlen(line), "replay line");
        if (!obj)
            return AGT_EPARSE;
    } else {
        json_t *req = json_object();
        json_object_set_new(req, "model", json_string(m->name ? m->name : ""));
        json_object_set(req, "messages", messages);
        json_object_set_new(req, "tools", tools ? json_incref(tools) : json_array());
        char *text = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(req);
        if (!text)
            return agti_oom();
        rc = m->host_fn(&reply, text, m->host_payload);
        free(text);
        if (rc > 0)
            rc = AGT_ERROR;
        if (rc != AGT_OK)
            agti_error(rc, "host model failed: %s",
                       reply.error ? reply.error : agt_status_string(rc));
        else if (!reply.json)
            rc = agti_error(AGT_ESTATE, "host model returned AGT_OK without agt_model_reply_set()");
        obj = reply.json;
        free(reply.error);
        if (rc != AGT_OK) {
            json_decref(obj);
            return rc;
        }
    }
    agt_model_response *r = agti_resp_new();
    rc = r ? agti_resp_from_json(r, obj) : agti_oom();
    json_decref(obj);
    if (rc == AGT_OK)
        rc = agti_resp_finish(r);
    if (rc == AGT_OK)
        rc = replay_events(r, sink);
    if (rc != AGT_OK) {
        agt_model_response_free(r);
        return rc;
    }
    *out = r;
    return AGT_OK;
}

int agti_model_complete_sink(agt_model_response **out, agt_model *m, const char *messages_json,
                             size_t len, const char *tools_json, size_t tools_len, agt_stream_fn fn,
                             void *payload)
{
    if (!out || !m || !messages_json)
        return agti_error(AGT_EINVAL, "agt_model_complete: NULL argument");
    *out = NULL;
    atomic_store(&m->cancelled, 0);
    m->http_status = 0;
    m->attempts = 0;
    if (m->kind == AGTI_MODEL_HTTP && (!m->name || !*m->name))
        return agti_error(AGT_EINVAL, "model has no name: call agt_model_set_name()");
    json_t *messages = agti_json_parse(messages_json, len, "messages");
    if (!messages)
        return AGT_EPARSE;
    json_t *tools = NULL;
    int rc = AGT_OK;
    if (!json_is_array(messages))
        rc = agti_error(AGT_EPARSE, "messages is not a JSON array");
    else
        rc = check_messages(messages);
    if (rc == AGT_OK && tools_json) {
        tools = agti_json_parse(tools_json, tools_len, "tools");
        if (!tools)
            rc = AGT_EPARSE;
        else if (!json_is_array(tools))
            rc = agti_error(AGT_EPARSE, "tools is not a JSON array");
    }
    agti_stream_sink sink = {fn, payload};
    if (rc == AGT_OK) {
        if (m->kind != AGTI_MODEL_HTTP) {
            rc = complete_local(m, messages, tools, &sink, out);
        } else {
            json_t *body = m->protocol == AGT_PROTOCOL_OPENAI
                               ? agti_request_openai(m, messages, tools)
                               : agti_request_anthropic(m, messages, tools);
            rc = body ? agti_http_complete(m, body, &sink, out) : agt_error_code();
            json_decref(body);
        }
    }
    json_decref(messages);
    json_decref(tools);
    return rc;
}

int agt_model_complete(agt_model_response **out, agt_model *m, const char *messages_json,
                       size_t len, const char *tools_json, size_t tools_len)
{
    int rc = agti_model_complete_sink(out, m, messages_json, len, tools_json, tools_len,
                                      m ? m->stream_fn : NULL, m ? m->stream_payload : NULL);
    agti_error_keep(m, rc);
    return rc;
}

int agti_model_clone(agt_model **out, const agt_model *m)
{
    *out = NULL;
    if (m->kind != AGTI_MODEL_HTTP)
        return agti_error(AGT_EUNSUPPORTED, "only HTTP models can be copied for another thread");
    agt_model *c = model_alloc(AGTI_MODEL_HTTP);
    if (!c)
        return agti_oom();
    c->protocol = m->protocol;
    c->base_url = agti_strdup(m->base_url);
    c->api_key = m->api_key ? agti_strdup(m->api_key) : NULL;
    c->name = m->name ? agti_strdup(m->name) : NULL;
    c->extra_body = m->extra_body ? json_deep_copy(m->extra_body) : NULL;
    c->extra_headers = m->extra_headers ? json_deep_copy(m->extra_headers) : NULL;
    c->connect_ms = m->connect_ms;
    c->total_ms = m->total_ms;
    c->low_speed_ms = m->low_speed_ms;
    c->max_retries = m->max_retries;
    c->backoff_base_ms = m->backoff_base_ms;
    c->backoff_max_ms = m->backoff_max_ms;
    c->max_tokens = m->max_tokens;
    c->max_tokens_field = m->max_tokens_field;
    c->stream = m->stream;
    if (!c->base_url || (m->api_key && !c->api_key) || (m->name && !c->name) ||
        (m->extra_body && !c->extra_body) || (m->extra_headers && !c->extra_headers)) {
        agt_model_free(c);
        return agti_oom();
    }
    *out = c;
    return AGT_OK;
}
