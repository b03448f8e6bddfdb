/*
 * HTTP transport of the model client: libcurl POST with SSE parsing
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html), the
 * OpenAI Chat Completions chunk format and the Anthropic Messages event
 * format, retries with backoff.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "model_internal.h"
#include "net/curl_dl.h"

#define BODY_CAP ((size_t)64 << 20)

typedef struct xfer {
    agt_model *m;
    const agti_stream_sink *sink;
    agt_model_response *r;
    int status;
    int64_t retry_after_ms;
    bool event_stream; /* Content-Type: text/event-stream */
    agti_buf body;
    agti_buf line;
    agti_buf data;
    bool has_data;
    bool cr_pending; /* the last piece ended in a CR (maybe half a CRLF) */
    size_t n_events;
    bool done;
    bool finished; /* a finish reason arrived */
    bool delivered;
    int err;
    long *block_call; /* Anthropic content block index -> tool call index */
    size_t n_blocks;
    size_t anth_calls;
} xfer;

static int fail(xfer *x, int code, const char *fmt, ...) AGTI_PRINTF(3, 4);

static int fail(xfer *x, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    agti_verror(code, fmt, ap);
    va_end(ap);
    x->err = code;
    return code;
}

static void emit(xfer *x, int kind, const char *text, size_t len)
{
    if (len == 0 || x->err)
        return;
    x->delivered = true;
    if (agti_sink_emit(x->sink, kind, text, len) != 0)
        fail(x, AGT_ECANCELLED, "model request cancelled by the stream callback");
}

static void append_text(xfer *x, agti_buf *b, int kind, const json_t *v)
{
    if (!json_is_string(v))
        return;
    agti_buf_put(b, json_string_value(v), json_string_length(v));
    emit(x, kind, json_string_value(v), json_string_length(v));
}

static void announce(xfer *x, agti_tool_call *c)
{
    if (c->announced || !c->name)
        return;
    c->announced = true;
    emit(x, AGT_STREAM_TOOL_CALL, c->name, strlen(c->name));
}

static void set_usage_openai(agt_model_response *r, const json_t *u)
{
    const char *names[3] = {"prompt_tokens", "completion_tokens", "total_tokens"};
    for (int k = 0; k < 3; k++) {
        json_t *v = json_object_get(u, names[k]);
        if (json_is_integer(v))
            r->usage[k] = json_integer_value(v);
    }
}

/* Error text from a server's JSON: {"error":{"message"}}, {"error":"..."},
 * {"message":"..."}; NULL when none. */
static const char *server_message(const json_t *root)
{
    json_t *e = json_object_get(root, "error");
    if (json_is_string(e))
        return json_string_value(e);
    json_t *msg = json_object_get(e, "message");
    if (json_is_string(msg))
        return json_string_value(msg);
    msg = json_object_get(root, "message");
    if (json_is_string(msg) && !json_object_get(root, "choices"))
        return json_string_value(msg);
    return NULL;
}

/* One tool call delta (OpenAI shape); pos is its place in the delta's array. */
static void openai_tool_delta(xfer *x, const json_t *tc, size_t pos)
{
    json_t *idx = json_object_get(tc, "index");
    size_t index;
    if (json_is_integer(idx) && json_integer_value(idx) >= 0)
        index = (size_t)json_integer_value(idx);
    else
        index = x->r->n_calls + pos; /* whole calls without index (Ollama) */
    agti_tool_call *c = agti_resp_call(x->r, index);
    if (!c) {
        x->err = agt_error_code();
        return;
    }
    json_t *id = json_object_get(tc, "id");
    if (json_is_string(id) && *json_string_value(id) && !c->id)
        c->id = agti_strdup(json_string_value(id));
    json_t *fn = json_object_get(tc, "function");
    json_t *name = json_object_get(fn, "name");
    if (json_is_string(name) && *json_string_value(name) && !c->name)
        c->name = agti_strdup(json_string_value(name));
    json_t *args = json_object_get(fn, "arguments");
    if (json_is_string(args))
        agti_buf_put(&c->args, json_string_value(args), json_string_length(args));
    else if (json_is_object(args)) {
        char *d = json_dumps(args, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (d)
            agti_buf_puts(&c->args, d);
        free(d);
    }
    announce(x, c);
}

static void openai_message(xfer *x, const json_t *delta)
{
    append_text(x, &x->r->thinking, AGT_STREAM_THINKING,
                json_object_get(delta, "reasoning_content"));
    append_text(x, &x->r->thinking, AGT_STREAM_THINKING, json_object_get(delta, "reasoning"));
    append_text(x, &x->r->text, AGT_STREAM_TEXT, json_object_get(delta, "content"));
    size_t j;
    json_t *tc;
    json_array_foreach(json_object_get(delta, "tool_calls"), j, tc)
    {
        if (x->err)
            return;
        if (json_is_object(tc))
            openai_tool_delta(x, tc, j);
    }
}

static void openai_chunk(xfer *x, const json_t *root)
{
    const char *msg = json_object_get(root, "error") ? server_message(root) : NULL;
    if (msg) {
        fail(x, AGT_ENET, "model server sent an error in stream event %zu: %s", x->n_events, msg);
        return;
    }
    json_t *u = json_object_get(root, "usage");
    if (json_is_object(u))
        set_usage_openai(x->r, u);
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    if (!json_is_object(choice))
        return;
    json_t *delta = json_object_get(choice, "delta");
    if (!json_is_object(delta))
        delta = json_object_get(choice, "message");
    if (json_is_object(delta))
        openai_message(x, delta);
    json_t *fr = json_object_get(choice, "finish_reason");
    if (json_is_string(fr)) {
        agti_resp_set_finish(x->r, json_string_value(fr));
        x->finished = true;
    }
    u = json_object_get(choice, "usage"); /* Moonshot puts it here */
    if (json_is_object(u))
        set_usage_openai(x->r, u);
}

static const char *anthropic_finish(const char *stop)
{
    if (strcmp(stop, "end_turn") == 0 || strcmp(stop, "stop_sequence") == 0)
        return "stop";
    if (strcmp(stop, "tool_use") == 0)
        return "tool_calls";
    if (strcmp(stop, "max_tokens") == 0)
        return "length";
    return stop;
}

static void anthropic_usage(agt_model_response *r, const json_t *u)
{
    json_t *in = json_object_get(u, "input_tokens");
    json_t *outt = json_object_get(u, "output_tokens");
    if (json_is_integer(in))
        r->usage[0] = json_integer_value(in);
    if (json_is_integer(outt))
        r->usage[1] = json_integer_value(outt);
    if (r->usage[0] >= 0 && r->usage[1] >= 0 && r->usage[0] <= INT64_MAX - r->usage[1])
        r->usage[2] = r->usage[0] + r->usage[1];
}

static agti_tool_call *anthropic_block_call(xfer *x, const json_t *root, bool create)
{
    json_t *idx = json_object_get(root, "index");
    if (!json_is_integer(idx) || json_integer_value(idx) < 0 || json_integer_value(idx) >= 4096) {
        fail(x, AGT_EPARSE, "stream event %zu: content block without a valid \"index\"",
             x->n_events);
        return NULL;
    }
    size_t bi = (size_t)json_integer_value(idx);
    if (bi >= x->n_blocks) {
        long *nb = realloc(x->block_call, (bi + 1) * sizeof *nb);
        if (!nb) {
            fail(x, AGT_ENOMEM, "out of memory");
            return NULL;
        }
        for (size_t k = x->n_blocks; k <= bi; k++)
            nb[k] = -1;
        x->block_call = nb;
        x->n_blocks = bi + 1;
    }
    if (x->block_call[bi] < 0) {
        if (!create)
            return NULL;
        x->block_call[bi] = (long)x->anth_calls++;
    }
    agti_tool_call *c = agti_resp_call(x->r, (size_t)x->block_call[bi]);
    if (!c)
        x->err = agt_error_code();
    return c;
}

static void anthropic_tool_block(xfer *x, const json_t *root, const json_t *block)
{
    agti_tool_call *c = anthropic_block_call(x, root, true);
    if (!c)
        return;
    json_t *id = json_object_get(block, "id");
    json_t *name = json_object_get(block, "name");
    if (json_is_string(id) && !c->id)
        c->id = agti_strdup(json_string_value(id));
    if (json_is_string(name) && !c->name)
        c->name = agti_strdup(json_string_value(name));
    json_t *input = json_object_get(block, "input");
    if (json_is_object(input) && json_object_size(input) > 0) {
        char *d = json_dumps(input, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (d)
            agti_buf_puts(&c->args, d);
        free(d);
    }
    announce(x, c);
}

static void anthropic_event(xfer *x, const json_t *root)
{
    const char *type = json_string_value(json_object_get(root, "type"));
    if (!type) {
        fail(x, AGT_EPARSE, "stream event %zu has no \"type\"", x->n_events);
        return;
    }
    if (strcmp(type, "message_start") == 0) {
        anthropic_usage(x->r, json_object_get(json_object_get(root, "message"), "usage"));
    } else if (strcmp(type, "content_block_start") == 0) {
        json_t *block = json_object_get(root, "content_block");
        const char *bt = json_string_value(json_object_get(block, "type"));
        if (!bt)
            return;
        if (strcmp(bt, "tool_use") == 0)
            anthropic_tool_block(x, root, block);
        else if (strcmp(bt, "text") == 0)
            append_text(x, &x->r->text, AGT_STREAM_TEXT, json_object_get(block, "text"));
        else if (strcmp(bt, "thinking") == 0)
            append_text(x, &x->r->thinking, AGT_STREAM_THINKING,
                        json_object_get(block, "thinking"));
    } else if (strcmp(type, "content_block_delta") == 0) {
        json_t *d = json_object_get(root, "delta");
        const char *dt = json_string_value(json_object_get(d, "type"));
        if (!dt)
            return;
        if (strcmp(dt, "text_delta") == 0)
            append_text(x, &x->r->text, AGT_STREAM_TEXT, json_object_get(d, "text"));
        else if (strcmp(dt, "thinking_delta") == 0)
            append_text(x, &x->r->thinking, AGT_STREAM_THINKING, json_object_get(d, "thinking"));
        else if (strcmp(dt, "input_json_delta") == 0) {
            agti_tool_call *c = anthropic_block_call(x, root, false);
            json_t *pj = json_object_get(d, "partial_json");
            if (!c && !x->err)
                fail(x, AGT_EPARSE,
                     "stream event %zu: input_json_delta for a block that is not a tool_use",
                     x->n_events);
            else if (c && json_is_string(pj))
                agti_buf_put(&c->args, json_string_value(pj), json_string_length(pj));
        }
    } else if (strcmp(type, "message_delta") == 0) {
        const char *stop =
            json_string_value(json_object_get(json_object_get(root, "delta"), "stop_reason"));
        if (stop) {
            agti_resp_set_finish(x->r, anthropic_finish(stop));
            x->finished = true;
        }
        anthropic_usage(x->r, json_object_get(root, "usage"));
    } else if (strcmp(type, "message_stop") == 0) {
        x->done = true;
    } else if (strcmp(type, "error") == 0) {
        const char *msg = server_message(root);
        fail(x, AGT_ENET, "model server sent an error in stream event %zu: %s", x->n_events,
             msg ? msg : "(no message)");
    }
}

static void dispatch_event(xfer *x)
{
    if (!x->has_data)
        return;
    x->has_data = false;
    x->n_events++;
    const char *d = agti_buf_cstr(&x->data);
    size_t len = x->data.len;
    if (x->m->protocol == AGT_PROTOCOL_OPENAI && len == 6 && memcmp(d, "[DONE]", 6) == 0) {
        x->done = true;
        agti_buf_truncate(&x->data, 0);
        return;
    }
    json_error_t je;
    json_t *root = json_loadb(d, len, JSON_ALLOW_NUL, &je);
    if (!root)
        fail(x, AGT_EPARSE, "malformed JSON in stream event %zu, column %d: %s", x->n_events,
             je.column, je.text);
    else if (!json_is_object(root))
        fail(x, AGT_EPARSE, "stream event %zu is not a JSON object", x->n_events);
    else if (x->m->protocol == AGT_PROTOCOL_OPENAI)
        openai_chunk(x, root);
    else
        anthropic_event(x, root);
    json_decref(root);
    agti_buf_truncate(&x->data, 0);
}

/* One line of the stream, without its line end. */
static void sse_line(xfer *x, const char *s, size_t len)
{
    if (len == 0) {
        dispatch_event(x);
        return;
    }
    if (s[0] == ':')
        return; /* comment: keep-alive */
    if (len >= 5 && memcmp(s, "data:", 5) == 0) {
        s += 5;
        len -= 5;
        if (len && *s == ' ') {
            s++;
            len--;
        }
        if (x->has_data)
            agti_buf_putc(&x->data, '\n');
        agti_buf_put(&x->data, s, len);
        x->has_data = true;
    }
    /* "event:", "id:", "retry:": the data's own "type" says enough */
}

/* Splits the stream into lines as the WHATWG rules do: CRLF, a bare LF and
 * a bare CR each end a line. A CR that ends one piece of the stream may be
 * the first half of a CRLF whose LF starts the next piece: cr_pending
 * remembers it, so that LF ends no second (empty) line. */
static void sse_feed(xfer *x, const char *p, size_t n)
{
    if (n && x->cr_pending) {
        x->cr_pending = false;
        if (*p == '\n') {
            p++;
            n--;
        }
    }
    while (n && !x->err) {
        size_t k = 0;
        while (k < n && p[k] != '\n' && p[k] != '\r')
            k++;
        if (k == n) {
            agti_buf_put(&x->line, p, n);
            return;
        }
        if (x->line.len) {
            agti_buf_put(&x->line, p, k);
            sse_line(x, x->line.ptr, x->line.len);
            agti_buf_truncate(&x->line, 0);
        } else {
            sse_line(x, p, k);
        }
        size_t used = k + 1;
        if (p[k] == '\r') {
            if (used < n && p[used] == '\n')
                used++;
            else if (used == n)
                x->cr_pending = true;
        }
        p += used;
        n -= used;
    }
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (x->err)
        return 0;
    if (x->body.len + n > BODY_CAP) {
        fail(x, AGT_ELIMIT, "model answer is larger than %zu bytes", BODY_CAP);
        return 0;
    }
    agti_buf_put(&x->body, p, n);
    if (x->status >= 200 && x->status < 300 && x->event_stream)
        sse_feed(x, p, n);
    if (x->body.oom || x->line.oom || x->data.oom)
        fail(x, AGT_ENOMEM, "out of memory");
    return x->err ? 0 : n;
}

static bool header_is(const char *h, size_t n, const char *name)
{
    size_t k = strlen(name);
    return n > k && strncasecmp(h, name, k) == 0 && h[k] == ':';
}

static size_t on_header(char *h, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    if (n > 5 && memcmp(h, "HTTP/", 5) == 0) {
        const char *sp = memchr(h, ' ', n);
        x->status = sp ? atoi(sp + 1) : 0;
        x->retry_after_ms = -1;
        x->event_stream = false;
    } else if (header_is(h, n, "retry-after")) {
        char v[128];
        size_t k = strlen("retry-after:");
        size_t vl = n - k < sizeof v - 1 ? n - k : sizeof v - 1;
        memcpy(v, h + k, vl);
        v[vl] = 0;
        char *s = v;
        while (*s == ' ' || *s == '\t')
            s++;
        s[strcspn(s, "\r\n")] = 0;
        char *end;
        long long secs = strtoll(s, &end, 10);
        if (end != s && *end == 0 && secs >= 0)
            x->retry_after_ms = secs * 1000;
        else {
            time_t t = curl_getdate(s, NULL);
            if (t != -1) {
                int64_t d = ((int64_t)t - (int64_t)time(NULL)) * 1000;
                x->retry_after_ms = d > 0 ? d : 0;
            }
        }
    } else if (header_is(h, n, "content-type")) {
        char v[128];
        size_t vl = n < sizeof v - 1 ? n : sizeof v - 1;
        memcpy(v, h, vl);
        v[vl] = 0;
        x->event_stream = strcasestr(v, "text/event-stream") != NULL;
    }
    return n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    xfer *x = ud;
    if (atomic_load(&x->m->cancelled) ||
        (x->m->cancel_fn && x->m->cancel_fn(x->m->cancel_payload))) {
        fail(x, AGT_ECANCELLED, "model request cancelled by the host");
        return 1;
    }
    return 0;
}

/* Replaces every occurrence of the API key in s with "***". */
static char *redact(const char *s, const char *key)
{
    agti_buf b = AGTI_BUF_INIT;
    size_t kl = key ? strlen(key) : 0;
    if (kl < 4)
        return agti_strdup(s);
    const char *p;
    while ((p = strstr(s, key)) != NULL) {
        agti_buf_put(&b, s, (size_t)(p - s));
        agti_buf_puts(&b, "***");
        s = p + kl;
    }
    agti_buf_puts(&b, s);
    return agti_buf_detach(&b);
}

static int http_error(xfer *x, const char *url)
{
    const char *msg = NULL;
    json_t *root = json_loadb(agti_buf_cstr(&x->body), x->body.len, 0, NULL);
    if (root)
        msg = server_message(root);
    char snippet[301];
    if (!msg) {
        size_t n = agti_utf8_floor(agti_buf_cstr(&x->body), x->body.len < 300 ? x->body.len : 300);
        memcpy(snippet, agti_buf_cstr(&x->body), n);
        snippet[n] = 0;
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)snippet[i] < 0x20)
                snippet[i] = ' ';
        msg = n ? snippet : "(empty body)";
    }
    char *safe = redact(msg, x->m->api_key);
    int rc = agti_error(AGT_ENET, "HTTP %d from %s: %s", x->status, url, safe ? safe : "");
    free(safe);
    json_decref(root);
    return rc;
}

static int finish_body(xfer *x)
{
    json_error_t je;
    json_t *root = json_loadb(agti_buf_cstr(&x->body), x->body.len, 0, &je);
    if (!root)
        return agti_error(AGT_EPARSE, "model answer is not JSON (line %d, column %d: %s)", je.line,
                          je.column, je.text);
    int rc;
    const char *msg = json_object_get(root, "error") ? server_message(root) : NULL;
    if (msg)
        rc = agti_error(AGT_ENET, "model server sent an error: %s", msg);
    else if (x->m->protocol == AGT_PROTOCOL_OPENAI)
        rc = agti_parse_openai_body(x->r, root, x->sink);
    else
        rc = agti_parse_anthropic_body(x->r, root, x->sink);
    json_decref(root);
    return rc;
}

int agti_parse_openai_body(agt_model_response *r, const json_t *root, const agti_stream_sink *sink)
{
    json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
    if (!json_is_object(choice) || !json_is_object(json_object_get(choice, "message")))
        return agti_error(AGT_EPARSE, "model answer has no choices[0].message");
    xfer x = {0};
    x.r = r;
    x.sink = sink;
    openai_chunk(&x, root);
    return x.err ? x.err : AGT_OK;
}

int agti_parse_anthropic_body(agt_model_response *r, const json_t *root,
                              const agti_stream_sink *sink)
{
    json_t *content = json_object_get(root, "content");
    if (!json_is_array(content))
        return agti_error(AGT_EPARSE, "model answer has no \"content\" array");
    xfer x = {0};
    x.r = r;
    x.sink = sink;
    size_t i;
    json_t *b;
    json_array_foreach(content, i, b)
    {
        const char *bt = json_string_value(json_object_get(b, "type"));
        if (!bt)
            continue;
        if (strcmp(bt, "text") == 0)
            append_text(&x, &r->text, AGT_STREAM_TEXT, json_object_get(b, "text"));
        else if (strcmp(bt, "thinking") == 0)
            append_text(&x, &r->thinking, AGT_STREAM_THINKING, json_object_get(b, "thinking"));
        else if (strcmp(bt, "tool_use") == 0) {
            agti_tool_call *c = agti_resp_call(r, x.anth_calls++);
            if (!c)
                return agt_error_code();
            json_t *input = json_object_get(b, "input");
            c->id = agti_strdup(json_string_value(json_object_get(b, "id")));
            c->name = agti_strdup(json_string_value(json_object_get(b, "name")));
            char *d = input ? json_dumps(input, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            agti_buf_puts(&c->args, d ? d : "{}");
            free(d);
            announce(&x, c);
        }
        if (x.err)
            return x.err;
    }
    const char *stop = json_string_value(json_object_get(root, "stop_reason"));
    if (stop)
        agti_resp_set_finish(r, anthropic_finish(stop));
    anthropic_usage(r, json_object_get(root, "usage"));
    return x.err ? x.err : AGT_OK;
}

static void xfer_free(xfer *x)
{
    agti_buf_free(&x->body);
    agti_buf_free(&x->line);
    agti_buf_free(&x->data);
    free(x->block_call);
}

/* One attempt. *retryable tells whether a retry may help. */
static int attempt(agt_model *m, const char *url, const char *body, struct curl_slist *headers,
                   const agti_stream_sink *sink, agt_model_response *r, bool *retryable,
                   int64_t *retry_after_ms)
{
    xfer x = {0};
    x.m = m;
    x.sink = sink;
    x.r = r;
    x.retry_after_ms = -1;
    *retryable = false;
    CURL *h = curl_easy_init();
    if (!h)
        return agti_error(AGT_ERROR, "libcurl could not create a handle");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &x);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "libagenttools/" AGT_VERSION_STRING);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)m->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)m->total_ms);
    if (m->low_speed_ms > 0) {
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)((m->low_speed_ms + 999) / 1000));
    }
    CURLcode cc = curl_easy_perform(h);
    m->http_status = x.status;
    int rc = AGT_OK;
    if (x.err) {
        rc = x.err;
    } else if (cc == CURLE_OPERATION_TIMEDOUT) {
        rc = agti_error(AGT_ETIMEOUT,
                        "model request to %s timed out (limits: connect %lld ms, total %lld ms, "
                        "stalled %lld ms)",
                        url, (long long)m->connect_ms, (long long)m->total_ms,
                        (long long)m->low_speed_ms);
        *retryable = !x.delivered;
    } else if (cc != CURLE_OK) {
        rc = agti_error(AGT_ENET, "model request to %s failed%s: %s", url,
                        x.n_events ? " mid-stream" : "", curl_easy_strerror(cc));
        *retryable = !x.delivered;
    } else if (x.status >= 400 || x.status < 200) {
        rc = http_error(&x, url);
        *retryable = x.status == 429 || x.status >= 500;
        *retry_after_ms = x.retry_after_ms;
    } else if (x.n_events || x.event_stream) {
        if (x.line.len)
            sse_line(&x, x.line.ptr, x.line.len);
        if (!x.err)
            dispatch_event(&x);
        if (x.err)
            rc = x.err;
        else if (!x.done && !x.finished) {
            rc = agti_error(
                AGT_ENET, "model stream from %s ended after %zu events without %s", url, x.n_events,
                m->protocol == AGT_PROTOCOL_OPENAI ? "a finish_reason or [DONE]" : "message_stop");
            *retryable = !x.delivered;
        }
    } else {
        rc = finish_body(&x);
    }
    curl_easy_cleanup(h);
    xfer_free(&x);
    return rc;
}

static int wait_ms(agt_model *m, int64_t ms)
{
    while (ms > 0) {
        if (atomic_load(&m->cancelled) || (m->cancel_fn && m->cancel_fn(m->cancel_payload)))
            return agti_error(AGT_ECANCELLED,
                              "model request cancelled by the host during a retry wait");
        int64_t step = ms < 50 ? ms : 50;
        struct timespec ts = {(time_t)(step / 1000), (long)(step % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return AGT_OK;
}

/* Whether an extra header has the name of the fixed header "Name: value". */
static bool extra_replaces(const agt_model *m, const char *fixed)
{
    if (!m->extra_headers)
        return false;
    size_t n = strcspn(fixed, ":");
    const char *k;
    json_t *v;
    json_object_foreach(m->extra_headers, k, v)
    {
        if (strlen(k) == n && strncasecmp(k, fixed, n) == 0)
            return true;
    }
    return false;
}

int agti_http_complete(agt_model *m, const json_t *body, const agti_stream_sink *sink,
                       agt_model_response **out)
{
    int rc = agti_ensure_init();
    if (rc != AGT_OK)
        return rc;
    if ((rc = agti_curl_ensure()) != AGT_OK)
        return rc;
    char *text = json_dumps(body, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *url =
        agti_aprintf("%s%s", m->base_url,
                     m->protocol == AGT_PROTOCOL_OPENAI ? "/chat/completions" : "/messages");
    struct curl_slist *headers = NULL, *t;
    agti_buf auth = AGTI_BUF_INIT;
    if (!text || !url) {
        free(text);
        free(url);
        return agti_oom();
    }
    const char *fixed[] = {
        "Content-Type: application/json",
        "Expect:", m->stream ? "Accept: text/event-stream" : "Accept: application/json",
        m->protocol == AGT_PROTOCOL_ANTHROPIC ? "anthropic-version: 2023-06-01" : NULL};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        if (!fixed[i] || extra_replaces(m, fixed[i]))
            continue;
        if (!(t = curl_slist_append(headers, fixed[i])))
            goto oom;
        headers = t;
    }
    if (m->extra_headers) {
        const char *k;
        json_t *v;
        json_object_foreach(m->extra_headers, k, v)
        {
            agti_buf h = AGTI_BUF_INIT;
            /* "Name;" is curl's way to send a header with an empty value */
            if (json_string_length(v) == 0)
                agti_buf_printf(&h, "%s;", k);
            else
                agti_buf_printf(&h, "%s: %s", k, json_string_value(v));
            t = h.oom ? NULL : curl_slist_append(headers, h.ptr);
            if (h.ptr)
                memset(h.ptr, 0, h.len);
            agti_buf_free(&h);
            if (!t)
                goto oom;
            headers = t;
        }
    }
    if (m->api_key && *m->api_key &&
        !extra_replaces(m, m->protocol == AGT_PROTOCOL_OPENAI ? "Authorization:" : "x-api-key:")) {
        if (m->protocol == AGT_PROTOCOL_OPENAI)
            agti_buf_printf(&auth, "Authorization: Bearer %s", m->api_key);
        else
            agti_buf_printf(&auth, "x-api-key: %s", m->api_key);
        if (auth.oom || !(t = curl_slist_append(headers, auth.ptr)))
            goto oom;
        headers = t;
    }
    for (int n = 0;; n++) {
        agt_model_response *r = agti_resp_new();
        if (!r)
            goto oom;
        bool retryable = false;
        int64_t retry_after = -1;
        m->attempts = n + 1;
        rc = attempt(m, url, text, headers, sink, r, &retryable, &retry_after);
        if (rc == AGT_OK)
            rc = agti_resp_finish(r);
        if (rc == AGT_OK) {
            *out = r;
            break;
        }
        agt_model_response_free(r);
        if (!retryable || n >= m->max_retries)
            break;
        int64_t delay = retry_after;
        if (delay < 0) {
            delay = m->backoff_base_ms;
            for (int k = 0; k < n && delay < m->backoff_max_ms; k++)
                delay *= 2;
        }
        if (delay > m->backoff_max_ms)
            delay = m->backoff_max_ms;
        int wrc = wait_ms(m, delay);
        if (wrc != AGT_OK) {
            rc = wrc;
            break;
        }
    }
    goto done;
oom:
    rc = agti_oom();
done:
    if (auth.ptr) /* wipe the key from memory we owned */
        memset(auth.ptr, 0, auth.len);
    agti_buf_free(&auth);
    curl_slist_free_all(headers);
    free(text);
    free(url);
    return rc;
}
