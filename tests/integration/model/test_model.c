/*
 * Model client against a fake HTTP server on 127.0.0.1 (fake_server.py),
 * through the real libcurl path, plus the replay and host models.
 *
 * Recorded stream shapes (after each endpoint's documented format):
 *  - OpenAI Chat Completions streaming: role delta, content split over
 *    several deltas, finish chunk, separate usage chunk with empty choices
 *    (stream_options.include_usage), ": keep-alive" comments, [DONE];
 *  - OpenAI parallel tool calls: id/type/name in the first delta of each
 *    call, argument pieces by index, cut mid-token; the whole stream written
 *    in 5-byte TCP pieces so lines, JSON and UTF-8 sequences are split;
 *  - OpenAI non-streaming chat.completion body with tool_calls, and a server
 *    that answers a streaming request with that plain body;
 *  - DeepSeek (deepseek-reasoner): reasoning_content deltas, usage in the
 *    last chunk together with finish_reason;
 *  - Moonshot/Kimi: usage inside choices[0] of the final chunk;
 *  - llama.cpp server: tool call id and name only in the first delta, no
 *    usage chunk; vLLM/OpenRouter "reasoning" field for thinking;
 *  - Ollama /v1: two whole tool calls in one chunk without "index";
 *  - Anthropic Messages streaming: message_start usage, thinking block
 *    (thinking_delta, signature_delta), text block, ping, tool_use block with
 *    input_json_delta pieces, message_delta stop_reason + usage, message_stop;
 *    event lines; 5-byte TCP pieces; Anthropic non-streaming body; Anthropic
 *    400 error body {"type":"error","error":{"message"}};
 *  - SSE framing: CRLF line endings, one event's JSON over two data: lines,
 *    event:/id: fields, a last event without its closing blank line;
 *  - failures: 429 with Retry-After: 1, 429 with an HTTP-date Retry-After,
 *    500 then success, 503 always, 400 with an OpenAI error body that echoes
 *    the key, a connection dropped inside a chunk, a stream that ends without
 *    finish_reason/[DONE], malformed JSON in one event, a slow stream
 *    (cancel), a stalled stream (timeout), a closed port.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/model.h"
#include "agent_fixture.h"
#include "harness.h"

static fake_server srv;

typedef struct events {
    char text[4096];
    char thinking[1024];
    char tools[1024];
    int n_text, n_tools;
    int cancel_after_text;
} events;

static int on_event(int kind, const char *text, size_t len, void *payload)
{
    events *e = payload;
    char *dst = kind == AGT_STREAM_TEXT       ? e->text
                : kind == AGT_STREAM_THINKING ? e->thinking
                                              : e->tools;
    size_t cap = kind == AGT_STREAM_TEXT       ? sizeof e->text
                 : kind == AGT_STREAM_THINKING ? sizeof e->thinking
                                               : sizeof e->tools;
    size_t have = strlen(dst);
    if (kind == AGT_STREAM_TOOL_CALL && have + 1 < cap)
        dst[have++] = '|';
    if (have + len < cap) {
        memcpy(dst + have, text, len);
        dst[have + len] = 0;
    }
    if (kind == AGT_STREAM_TEXT)
        e->n_text++;
    if (kind == AGT_STREAM_TOOL_CALL)
        e->n_tools++;
    return e->cancel_after_text && e->n_text >= e->cancel_after_text;
}

static agt_model *http_model(int protocol, const char *scenario)
{
    agt_model *m = NULL;
    char url[256];
    fake_server_url(&srv, scenario, url, sizeof url);
    if (agt_model_new(&m, protocol) != AGT_OK)
        return NULL;
    agt_model_set_base_url(m, url);
    agt_model_set_name(m, "test-model");
    agt_model_set_api_key(m, "sk-test");
    agt_model_set_retries(m, 2, 10, 2000);
    agt_model_set_timeouts(m, 5000, 20000, 10000);
    return m;
}

static const char *MSGS = "[{\"role\":\"system\",\"content\":\"Be brief.\"},"
                          "{\"role\":\"user\",\"content\":\"hi\"}]";

static int run(agt_model *m, events *e, agt_model_response **out)
{
    if (e)
        agt_model_set_stream_callback(m, on_event, e);
    return agt_model_complete(out, m, MSGS, strlen(MSGS), NULL, 0);
}

static json_t *last_request(const char *scenario)
{
    char *text = fake_server_last(&srv, scenario);
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return v;
}

static void check_usage(const agt_model_response *r, long long p, long long c, long long t,
                        const char *what)
{
    int64_t a = 0, b = 0, d = 0;
    agt_model_response_usage(r, &a, &b, &d);
    T_CHECK(a == p && b == c && d == t, "%s: usage %lld/%lld/%lld (want %lld/%lld/%lld)", what,
            (long long)a, (long long)b, (long long)d, p, c, t);
}

static void test_openai_text(void)
{
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "text-1");
    agt_model_set_max_tokens(m, 256, AGT_MAX_COMPLETION_TOKENS);
    const char *extra = "{\"temperature\":0.25,\"tool_choice\":\"auto\"}";
    T_EQ_INT(agt_model_set_extra_body(m, extra, strlen(extra)), AGT_OK, "extra_body set");
    events e = {0};
    agt_model_response *r = NULL;
    T_EQ_INT(run(m, &e, &r), AGT_OK, "openai text stream: ok");
    T_EQ_STR(agt_model_response_text(r), "Hello, world", "openai text: assembled text");
    T_EQ_STR(e.text, "Hello, world", "openai text: streamed pieces");
    T_EQ_INT(e.n_text, 3, "openai text: three non-empty text deltas");
    T_EQ_STR(agt_model_response_finish_reason(r), "stop", "openai text: finish_reason");
    T_EQ_INT(agt_model_response_tool_count(r), 0, "openai text: no tool calls");
    check_usage(r, 31, 7, 38, "openai text");
    T_EQ_INT(agt_model_http_status(m), 200, "openai text: status 200");
    T_EQ_INT(agt_model_attempts(m), 1, "openai text: one attempt");
    T_EQ_STR(agt_model_response_json(r),
             "{\"content\":\"Hello, world\",\"tool_calls\":[],\"finish_reason\":\"stop\","
             "\"usage\":{\"prompt_tokens\":31,\"completion_tokens\":7,\"total_tokens\":38}}",
             "openai text: canonical JSON");
    json_t *req = last_request("text-1");
    json_t *body = json_object_get(req, "body");
    json_t *hdr = json_object_get(req, "headers");
    T_EQ_STR(json_string_value(json_object_get(req, "path")), "/text-1/v1/chat/completions",
             "request path");
    T_EQ_STR(json_string_value(json_object_get(hdr, "authorization")), "Bearer sk-test",
             "bearer header");
    T_EQ_STR(json_string_value(json_object_get(body, "model")), "test-model", "request model");
    T_CHECK(json_is_true(json_object_get(body, "stream")), "request stream: true");
    T_CHECK(json_is_true(json_object_get(json_object_get(body, "stream_options"), "include_usage")),
            "request stream_options.include_usage");
    T_EQ_INT(json_integer_value(json_object_get(body, "max_completion_tokens")), 256,
             "request max_completion_tokens");
    T_CHECK(json_object_get(body, "max_tokens") == NULL, "no max_tokens with the completion field");
    T_CHECK(json_real_value(json_object_get(body, "temperature")) == 0.25,
            "extra_body temperature merged");
    T_EQ_STR(json_string_value(json_object_get(body, "tool_choice")), "auto",
             "extra_body tool_choice merged");
    T_EQ_INT(json_array_size(json_object_get(body, "messages")), 2, "messages passed through");
    T_CHECK(json_object_get(body, "tools") == NULL, "no tools field without tools");
    json_decref(req);
    agt_model_response_free(r);

    /* max_tokens field and tools */
    agt_model_set_max_tokens(m, 100, AGT_MAX_TOKENS);
    agt_model_set_extra_body(m, NULL, 0);
    agt_model_set_base_url(m, "http://127.0.0.1:1/unused"); /* replaced below */
    char url[256];
    fake_server_url(&srv, "text-2", url, sizeof url);
    strcat(url, "/");
    agt_model_set_base_url(m, url);
    const char *tools =
        "[{\"type\":\"function\",\"function\":{\"name\":\"Read\",\"description\":\"d\","
        "\"parameters\":{\"type\":\"object\"}}}]";
    T_EQ_INT(agt_model_complete(&r, m, MSGS, strlen(MSGS), tools, strlen(tools)), AGT_OK,
             "request with tools: ok");
    req = last_request("text-2");
    body = json_object_get(req, "body");
    T_EQ_STR(json_string_value(json_object_get(req, "path")), "/text-2/v1/chat/completions",
             "trailing slash of the base URL dropped");
    T_EQ_INT(json_integer_value(json_object_get(body, "max_tokens")), 100, "request max_tokens");
    T_EQ_STR(json_string_value(json_object_get(
                 json_object_get(json_array_get(json_object_get(body, "tools"), 0), "function"),
                 "name")),
             "Read", "tools passed through");
    T_CHECK(json_object_get(body, "temperature") == NULL, "extra_body cleared");
    json_decref(req);
    agt_model_response_free(r);
    agt_model_free(m);
}

/* How many times a header name (lower case) was sent. */
static int header_count(json_t *req, const char *name)
{
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(req, "header_names"), i, v)
    {
        n += strcmp(json_string_value(v), name) == 0;
    }
    return n;
}

static void test_extra_headers(void)
{
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "text-hdr");
    const char *hdrs = "{\"OpenAI-Organization\":\"org-7\",\"accept\":\"application/x-test\","
                       "\"X-Empty\":\"\"}";
    T_EQ_INT(agt_model_set_extra_headers(m, hdrs, strlen(hdrs)), AGT_OK, "extra headers set");
    agt_model_response *r = NULL;
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "request with extra headers: ok");
    agt_model_response_free(r);
    json_t *req = last_request("text-hdr");
    json_t *hdr = json_object_get(req, "headers");
    T_EQ_STR(json_string_value(json_object_get(hdr, "openai-organization")), "org-7",
             "extra header sent");
    T_EQ_STR(json_string_value(json_object_get(hdr, "accept")), "application/x-test",
             "an extra header replaces ours of the same name (any case)");
    T_EQ_INT(header_count(req, "accept"), 1, "and ours is not sent as well");
    T_EQ_STR(json_string_value(json_object_get(hdr, "x-empty")), "", "an empty value is sent");
    T_EQ_STR(json_string_value(json_object_get(hdr, "authorization")), "Bearer sk-test",
             "the key is still sent");
    json_decref(req);

    const char *auth = "{\"Authorization\":\"Token abc\"}";
    T_EQ_INT(agt_model_set_extra_headers(m, auth, strlen(auth)), AGT_OK, "Authorization set");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "request with a replaced Authorization: ok");
    agt_model_response_free(r);
    req = last_request("text-hdr");
    T_EQ_STR(json_string_value(json_object_get(json_object_get(req, "headers"), "authorization")),
             "Token abc", "an extra Authorization replaces the key's");
    T_EQ_INT(header_count(req, "authorization"), 1, "one Authorization header");
    json_decref(req);

    T_EQ_INT(agt_model_set_extra_headers(m, NULL, 0), AGT_OK, "extra headers cleared");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "request after clearing: ok");
    agt_model_response_free(r);
    req = last_request("text-hdr");
    hdr = json_object_get(req, "headers");
    T_CHECK(json_object_get(hdr, "openai-organization") == NULL, "cleared: not sent");
    T_EQ_STR(json_string_value(json_object_get(hdr, "accept")), "text/event-stream",
             "cleared: our Accept again");
    json_decref(req);

    static const struct {
        const char *json;
        int rc;
        const char *msg;
    } bad[] = {
        {"[1]", AGT_EPARSE, "extra_headers is not a JSON object"},
        {"{\"Bad Name\":\"x\"}", AGT_EINVALID, "\"Bad Name\" is not a header name"},
        {"{\"\":\"x\"}", AGT_EINVALID, "\"\" is not a header name"},
        {"{\"X-A\":\"a\\r\\nX-B: b\"}", AGT_EINVALID, "the value of \"X-A\" must be a string"},
        {"{\"X-A\":\"a\\u0000b\"}", AGT_EINVALID, "the value of \"X-A\" must be a string"},
        {"{\"X-A\":5}", AGT_EINVALID, "the value of \"X-A\" must be a string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        T_EQ_INT(agt_model_set_extra_headers(m, bad[i].json, strlen(bad[i].json)), bad[i].rc,
                 "bad extra headers %s: refused", bad[i].json);
        T_CHECK(strstr(agt_error_message(), bad[i].msg) != NULL, "bad extra headers %s: %s",
                bad[i].json, agt_error_message());
    }
    T_EQ_INT(agt_model_set_extra_headers(NULL, "{}", 2), AGT_EINVAL, "NULL model: EINVAL");
    agt_model_free(m);

    /* anthropic: an extra x-api-key replaces the key's header */
    m = http_model(AGT_PROTOCOL_ANTHROPIC, "anthropic-hdr");
    const char *k = "{\"x-api-key\":\"other\",\"anthropic-beta\":\"tools-1\"}";
    T_EQ_INT(agt_model_set_extra_headers(m, k, strlen(k)), AGT_OK, "anthropic extra headers set");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "anthropic request with extra headers: ok");
    agt_model_response_free(r);
    req = last_request("anthropic-hdr");
    hdr = json_object_get(req, "headers");
    T_EQ_STR(json_string_value(json_object_get(hdr, "x-api-key")), "other",
             "anthropic: an extra x-api-key replaces the key's");
    T_EQ_INT(header_count(req, "x-api-key"), 1, "anthropic: one x-api-key header");
    T_EQ_STR(json_string_value(json_object_get(hdr, "anthropic-beta")), "tools-1",
             "anthropic: extra header sent");
    T_EQ_STR(json_string_value(json_object_get(hdr, "anthropic-version")), "2023-06-01",
             "anthropic: our anthropic-version still sent");
    json_decref(req);
    agt_model_free(m);
}

static void test_openai_tools(void)
{
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "tools-1");
    events e = {0};
    agt_model_response *r = NULL;
    T_EQ_INT(run(m, &e, &r), AGT_OK, "parallel tool calls: ok");
    T_EQ_INT(agt_model_response_tool_count(r), 2, "parallel tool calls: two calls");
    T_EQ_STR(agt_model_response_tool_id(r, 0), "call_A", "call 0 id");
    T_EQ_STR(agt_model_response_tool_name(r, 0), "Read", "call 0 name");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0),
             "{\"path\": \"caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac.txt\", \"n\": 10}",
             "call 0 arguments reassembled across token and UTF-8 splits");
    T_EQ_STR(agt_model_response_tool_id(r, 1), "call_B", "call 1 id");
    T_EQ_STR(agt_model_response_tool_name(r, 1), "TodoList", "call 1 name");
    T_EQ_STR(agt_model_response_tool_arguments(r, 1),
             "{\"todos\": [{\"title\": \"x\", \"status\": \"done\"}]}", "call 1 arguments");
    T_CHECK(agt_model_response_tool_id(r, 2) == NULL, "call 2 out of range: NULL");
    T_EQ_STR(agt_model_response_finish_reason(r), "tool_calls", "finish_reason tool_calls");
    T_EQ_STR(e.tools, "|Read|TodoList", "tool call started events in order");
    T_EQ_STR(agt_model_response_text(r), "", "no text (content null)");
    check_usage(r, 31, 7, 38, "parallel tool calls");
    agt_model_response_free(r);
    agt_model_free(m);
}

static void test_vendor_shapes(void)
{
    events e = {0};
    agt_model_response *r = NULL;
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "deepseek-1");
    T_EQ_INT(run(m, &e, &r), AGT_OK, "deepseek: ok");
    T_EQ_STR(agt_model_response_thinking(r), "Thinking.",
             "deepseek: reasoning_content as thinking");
    T_EQ_STR(e.thinking, "Thinking.", "deepseek: thinking streamed");
    T_EQ_STR(agt_model_response_text(r), "Answer", "deepseek: text");
    check_usage(r, 10, 5, 15, "deepseek");
    T_CHECK(strstr(agt_model_response_json(r), "\"reasoning_content\":\"Thinking.\"") != NULL,
            "deepseek: canonical JSON carries reasoning_content");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "moonshot-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "moonshot: ok");
    T_EQ_STR(agt_model_response_text(r), "Kimi", "moonshot: text");
    check_usage(r, 19, 13, 32, "moonshot usage inside the choice");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "llamacpp-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "llama.cpp: ok");
    T_EQ_STR(agt_model_response_thinking(r), "plan", "llama.cpp/vLLM: reasoning field as thinking");
    T_EQ_INT(agt_model_response_tool_count(r), 1, "llama.cpp: one call");
    T_EQ_STR(agt_model_response_tool_id(r, 0), "llama1", "llama.cpp: id from the first delta kept");
    T_EQ_STR(agt_model_response_tool_name(r, 0), "Glob", "llama.cpp: name");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"pattern\": \"*.c\"}",
             "llama.cpp: arguments");
    check_usage(r, -1, -1, -1, "llama.cpp: no usage reported");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "ollama-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "ollama: ok");
    T_EQ_INT(agt_model_response_tool_count(r), 2, "ollama: two whole calls in one chunk");
    T_EQ_STR(agt_model_response_tool_id(r, 1), "call_o2", "ollama: second id");
    T_EQ_STR(agt_model_response_tool_name(r, 1), "Grep", "ollama: second name");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"pattern\":\"*.md\"}",
             "ollama: first arguments");
    check_usage(r, 5, 6, 11, "ollama");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "crlf-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "CRLF, multi-line data, unterminated last event: ok");
    T_EQ_STR(agt_model_response_text(r), "AB", "CRLF stream: text");
    T_EQ_STR(agt_model_response_finish_reason(r), "stop", "CRLF stream: finish");
    agt_model_response_free(r);
    agt_model_free(m);

    /* WHATWG line ends: bare CR, mixed CR/LF/CRLF in 5-byte pieces, and CRLF
     * cut between the CR and the LF (an empty line there would dispatch half
     * of the two-line data event: malformed JSON) */
    const char *line_ends[] = {"barecr-1", "barecrbytes-1", "mixed-1", "crsplit-1"};
    for (size_t i = 0; i < sizeof line_ends / sizeof *line_ends; i++) {
        m = http_model(AGT_PROTOCOL_OPENAI, line_ends[i]);
        T_EQ_INT(run(m, NULL, &r), AGT_OK, "%s stream: ok", line_ends[i]);
        if (r == NULL)
            t_diag("  %s", agt_error_message());
        T_EQ_STR(r ? agt_model_response_text(r) : NULL, "AB", "%s stream: text", line_ends[i]);
        T_EQ_STR(r ? agt_model_response_finish_reason(r) : NULL, "stop", "%s stream: finish",
                 line_ends[i]);
        agt_model_response_free(r);
        r = NULL;
        agt_model_free(m);
    }

    /* non-streaming, and a server that ignores "stream" */
    for (int stream = 0; stream < 2; stream++) {
        m = http_model(AGT_PROTOCOL_OPENAI, stream ? "plain-2" : "plain-1");
        agt_model_set_stream(m, stream);
        memset(&e, 0, sizeof e);
        T_EQ_INT(run(m, &e, &r), AGT_OK, "plain body (stream %d): ok", stream);
        T_EQ_STR(agt_model_response_text(r), "Let me look.", "plain body (stream %d): text",
                 stream);
        T_EQ_STR(e.text, "Let me look.", "plain body (stream %d): text event", stream);
        T_EQ_STR(agt_model_response_tool_id(r, 0), "call_9", "plain body (stream %d): call id",
                 stream);
        T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"path\":\"a.txt\"}",
                 "plain body (stream %d): arguments", stream);
        check_usage(r, 12, 8, 20, "plain body");
        json_t *req = last_request(stream ? "plain-2" : "plain-1");
        T_CHECK((json_object_get(json_object_get(req, "body"), "stream") != NULL) == (stream != 0),
                "request has \"stream\" only when streaming (%d)", stream);
        json_decref(req);
        agt_model_response_free(r);
        agt_model_free(m);
    }
}

static void test_failures(void)
{
    agt_model_response *r = NULL;
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "rate-1");
    agt_model_set_retries(m, 2, 10, 1500);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "429 then success: ok");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    T_EQ_INT(agt_model_attempts(m), 2, "429: two attempts");
    T_CHECK(waited >= 0.9, "429: Retry-After: 1 honoured (waited %.2f s)", waited);
    T_EQ_STR(agt_model_response_text(r), "Hello, world", "429: answer of the retry");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "ratedate-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "429 with an HTTP-date Retry-After in the past: ok");
    T_EQ_INT(agt_model_attempts(m), 2, "429 date: two attempts");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "err500-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "500 then success: ok");
    T_EQ_INT(agt_model_attempts(m), 2, "500: two attempts");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "always500-1");
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "503 every time: AGT_ENET");
    T_CHECK(r == NULL, "503: no response");
    T_EQ_INT(agt_model_attempts(m), 3, "503: 1 + 2 retries");
    T_EQ_INT(agt_model_http_status(m), 503, "503: status");
    T_CHECK(strstr(agt_error_message(), "HTTP 503") && strstr(agt_error_message(), "overloaded"),
            "503: message has status and server message: %s", agt_error_message());
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "bad400-1");
    agt_model_set_api_key(m, "sk-test-SECRET-123");
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "400: AGT_ENET");
    T_EQ_INT(agt_model_attempts(m), 1, "400: not retried");
    T_EQ_INT(agt_model_http_status(m), 400, "400: status");
    T_CHECK(strstr(agt_error_message(), "Invalid value for 'messages[0].role'") != NULL,
            "400: server message in the error: %s", agt_error_message());
    T_CHECK(strstr(agt_error_message(), "SECRET") == NULL && strstr(agt_error_message(), "***"),
            "400: the API key echoed by the server is masked");
    agt_model_free(m);

    events e = {0};
    m = http_model(AGT_PROTOCOL_OPENAI, "drop-1");
    T_EQ_INT(run(m, &e, &r), AGT_ENET, "connection dropped mid-stream: AGT_ENET");
    T_EQ_INT(agt_model_attempts(m), 1, "dropped after text was streamed: not retried");
    T_CHECK(strstr(agt_error_message(), "mid-stream") != NULL, "dropped: message: %s",
            agt_error_message());
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "eof-1");
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "stream without finish: AGT_ENET");
    T_CHECK(strstr(agt_error_message(), "without a finish_reason or [DONE]") != NULL,
            "eof: message: %s", agt_error_message());
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "nofinish-1");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "stream ended by [DONE] without a finish_reason: ok");
    T_EQ_STR(agt_model_response_text(r), "Hello, world", "no finish_reason: text kept");
    T_EQ_STR(agt_model_response_finish_reason(r), "", "no finish_reason: \"\", not a made-up stop");
    T_CHECK(strstr(agt_model_response_json(r), "\"finish_reason\":\"\"") != NULL,
            "no finish_reason: the canonical JSON says \"\" too");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "malformed-1");
    T_EQ_INT(run(m, NULL, &r), AGT_EPARSE, "malformed JSON chunk: AGT_EPARSE");
    T_CHECK(strstr(agt_error_message(), "malformed JSON in stream event 2") != NULL,
            "malformed: message names the event: %s", agt_error_message());
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "text-cancel");
    memset(&e, 0, sizeof e);
    e.cancel_after_text = 1;
    T_EQ_INT(run(m, &e, &r), AGT_ECANCELLED, "stream callback cancels: AGT_ECANCELLED");
    T_EQ_INT(e.n_text, 1, "cancel: no text event after the cancel");
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_OPENAI, "stall-1");
    agt_model_set_timeouts(m, 2000, 800, 0);
    agt_model_set_retries(m, 0, 0, 0);
    T_EQ_INT(run(m, NULL, &r), AGT_ETIMEOUT, "stalled stream: AGT_ETIMEOUT");
    agt_model_free(m);

    m = NULL;
    agt_model_new(&m, AGT_PROTOCOL_OPENAI);
    agt_model_set_base_url(m, "http://127.0.0.1:1/v1");
    agt_model_set_name(m, "x");
    agt_model_set_retries(m, 1, 5, 5);
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "closed port: AGT_ENET");
    T_EQ_INT(agt_model_attempts(m), 2, "closed port: connection errors are retried");
    agt_model_free(m);
}

static void *cancel_later(void *arg)
{
    usleep(300000);
    agt_model_cancel(arg);
    return NULL;
}

static void test_cancel_thread(void)
{
    agt_model *m = http_model(AGT_PROTOCOL_OPENAI, "slow-1");
    agt_model_response *r = NULL;
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, m);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    T_EQ_INT(run(m, NULL, &r), AGT_ECANCELLED,
             "agt_model_cancel from another thread: AGT_ECANCELLED");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(th, NULL);
    double took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    T_CHECK(took < 3.0, "cancel: returned well before the 5 s stream ended (%.2f s)", took);
    agt_model_free(m);
}

static void test_anthropic(void)
{
    agt_model *m = http_model(AGT_PROTOCOL_ANTHROPIC, "anthropic-1");
    events e = {0};
    agt_model_response *r = NULL;
    const char *conv =
        "[{\"role\":\"system\",\"content\":\"Sys A\"},{\"role\":\"system\",\"content\":\"Sys B\"},"
        "{\"role\":\"user\",\"content\":\"weather?\"},"
        "{\"role\":\"assistant\",\"content\":\"Let me "
        "check.\",\"tool_calls\":[{\"id\":\"toolu_00\","
        "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{"
        "\\\"location\\\":\\\"Oslo\\\"}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"toolu_00\",\"content\":\"rain\"},"
        "{\"role\":\"user\",\"content\":\"and Paris?\"}]";
    const char *tools = "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
                        "\"description\":\"Weather\",\"parameters\":{\"type\":\"object\"}}}]";
    agt_model_set_stream_callback(m, on_event, &e);
    T_EQ_INT(agt_model_complete(&r, m, conv, strlen(conv), tools, strlen(tools)), AGT_OK,
             "anthropic stream: ok");
    T_EQ_STR(agt_model_response_thinking(r), "Hmm.", "anthropic: thinking_delta");
    T_EQ_STR(agt_model_response_text(r), "Checking the weather.", "anthropic: text deltas");
    T_EQ_INT(agt_model_response_tool_count(r), 1, "anthropic: one tool_use");
    T_EQ_STR(agt_model_response_tool_id(r, 0), "toolu_01", "anthropic: tool id");
    T_EQ_STR(agt_model_response_tool_name(r, 0), "get_weather", "anthropic: tool name");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"location\": \"Paris\"}",
             "anthropic: input_json_delta pieces joined");
    T_EQ_STR(agt_model_response_finish_reason(r), "tool_calls", "anthropic: tool_use → tool_calls");
    check_usage(r, 25, 89, 114, "anthropic");
    T_EQ_STR(e.tools, "|get_weather", "anthropic: tool call event");
    agt_model_response_free(r);

    json_t *req = last_request("anthropic-1");
    json_t *hdr = json_object_get(req, "headers");
    json_t *body = json_object_get(req, "body");
    T_EQ_STR(json_string_value(json_object_get(req, "path")), "/anthropic-1/v1/messages",
             "anthropic path");
    T_EQ_STR(json_string_value(json_object_get(hdr, "x-api-key")), "sk-test", "x-api-key header");
    T_EQ_STR(json_string_value(json_object_get(hdr, "anthropic-version")), "2023-06-01",
             "anthropic-version header");
    T_CHECK(json_object_get(hdr, "authorization") == NULL, "no bearer header for anthropic");
    T_EQ_STR(json_string_value(json_object_get(body, "system")), "Sys A\n\nSys B",
             "system joined, separate");
    T_EQ_INT(json_integer_value(json_object_get(body, "max_tokens")), 4096,
             "default max_tokens 4096");
    char *msgs = json_dumps(json_object_get(body, "messages"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    T_EQ_STR(msgs,
             "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"weather?\"}]},"
             "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Let me check.\"},"
             "{\"type\":\"tool_use\",\"id\":\"toolu_00\",\"name\":\"get_weather\",\"input\":{"
             "\"location\":\"Oslo\"}}]},"
             "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_"
             "00\",\"content\":\"rain\"},"
             "{\"type\":\"text\",\"text\":\"and Paris?\"}]}]",
             "anthropic message conversion (tool_use, tool_result, merged user turn)");
    free(msgs);
    char *tl = json_dumps(json_object_get(body, "tools"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    T_EQ_STR(tl,
             "[{\"name\":\"get_weather\",\"description\":\"Weather\",\"input_schema\":{\"type\":"
             "\"object\"}}]",
             "anthropic tools with input_schema");
    free(tl);
    json_decref(req);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_ANTHROPIC, "anthropicbody-1");
    agt_model_set_stream(m, 0);
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "anthropic non-streaming: ok");
    T_EQ_STR(agt_model_response_text(r), "Sure.", "anthropic body: text");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"path\":\"b.txt\"}",
             "anthropic body: input");
    check_usage(r, 40, 12, 52, "anthropic body");
    agt_model_response_free(r);
    agt_model_free(m);

    m = http_model(AGT_PROTOCOL_ANTHROPIC, "anthropic400-1");
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "anthropic 400: AGT_ENET");
    T_CHECK(strstr(agt_error_message(), "max_tokens: Field required") != NULL,
            "anthropic 400: server message: %s", agt_error_message());
    agt_model_free(m);
}

static int host_fn(agt_model_reply *reply, const char *request_json, void *payload)
{
    int *calls = payload;
    (*calls)++;
    if (strstr(request_json, "\"messages\":[{\"role\":\"system\"") == NULL)
        return AGT_EINVAL;
    if (*calls == 2) {
        agt_model_reply_set_error(reply, "host says no");
        return AGT_ENET;
    }
    const char *ans = "{\"content\":\"from host\",\"tool_calls\":[{\"id\":\"h1\",\"function\":"
                      "{\"name\":\"Read\",\"arguments\":{\"path\":\"x\"}}}]}";
    return agt_model_reply_set(reply, ans, strlen(ans));
}

static void test_local_models(void)
{
    char path[] = "/tmp/agt-replay-XXXXXX";
    int fd = mkstemp(path);
    const char *lines =
        "{\"content\":\"one\",\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n"
        "\n"
        "{\"content\":null,\"tool_calls\":[{\"id\":\"r1\",\"name\":\"TodoList\",\"arguments\":\"{}"
        "\"}]}\n";
    T_CHECK(write(fd, lines, strlen(lines)) == (ssize_t)strlen(lines), "replay file written");
    close(fd);
    agt_model *m = NULL;
    events e = {0};
    agt_model_response *r = NULL;
    T_EQ_INT(agt_model_new_replay(&m, path), AGT_OK, "replay model: ok");
    T_EQ_INT(run(m, &e, &r), AGT_OK, "replay 1: ok");
    T_EQ_STR(agt_model_response_text(r), "one", "replay 1: text");
    T_EQ_STR(e.text, "one", "replay 1: text event");
    check_usage(r, 3, 1, 4, "replay 1 (total computed)");
    agt_model_response_free(r);
    T_EQ_INT(run(m, &e, &r), AGT_OK, "replay 2: ok (blank line skipped)");
    T_EQ_STR(agt_model_response_tool_name(r, 0), "TodoList", "replay 2: tool call");
    T_EQ_STR(agt_model_response_finish_reason(r), "",
             "replay 2: no finish_reason given: \"\" (model.h), not a guess");
    agt_model_response_free(r);
    T_EQ_INT(run(m, &e, &r), AGT_ELIMIT, "replay exhausted: AGT_ELIMIT");
    agt_model_free(m);

    FILE *f = fopen(path, "w");
    fputs("{\"content\":\"ok\"}\n[1,2]\n", f);
    fclose(f);
    T_EQ_INT(agt_model_new_replay(&m, path), AGT_EPARSE,
             "replay with a non-object line: AGT_EPARSE");
    T_CHECK(strstr(agt_error_message(), "line 2") != NULL, "replay error names line 2: %s",
            agt_error_message());
    f = fopen(path, "w");
    fputs("{\"tool_calls\":[{\"arguments\":\"{}\"}]}\n", f);
    fclose(f);
    T_EQ_INT(agt_model_new_replay(&m, path), AGT_EPARSE, "replay call without name: AGT_EPARSE");
    unlink(path);
    T_EQ_INT(agt_model_new_replay(&m, path), AGT_EIO, "missing replay file: AGT_EIO");

    int calls = 0;
    T_EQ_INT(agt_model_new_host(&m, host_fn, &calls), AGT_OK, "host model: ok");
    T_EQ_INT(run(m, NULL, &r), AGT_OK, "host model answer: ok");
    T_EQ_STR(agt_model_response_text(r), "from host", "host model: text");
    T_EQ_STR(agt_model_response_tool_arguments(r, 0), "{\"path\":\"x\"}",
             "host model: object arguments dumped");
    agt_model_response_free(r);
    T_EQ_INT(run(m, NULL, &r), AGT_ENET, "host model error code passed on");
    T_CHECK(strstr(agt_error_message(), "host says no") != NULL, "host error text: %s",
            agt_error_message());
    agt_model_free(m);
}

static void test_bad_input(void)
{
    agt_model *m = NULL;
    agt_model_response *r = NULL;
    T_EQ_INT(agt_model_new(NULL, AGT_PROTOCOL_OPENAI), AGT_EINVAL, "new(NULL): EINVAL");
    T_EQ_INT(agt_model_new(&m, 7), AGT_EINVAL, "unknown protocol: EINVAL");
    T_EQ_INT(agt_model_new(&m, AGT_PROTOCOL_OPENAI), AGT_OK, "new: ok");
    T_EQ_INT(agt_model_set_base_url(m, "ftp://x"), AGT_EINVAL, "ftp base URL: EINVAL");
    T_EQ_INT(agt_model_set_timeouts(m, -1, 0, 0), AGT_EINVAL, "negative timeout: EINVAL");
    T_EQ_INT(agt_model_set_max_tokens(m, 5, 9), AGT_EINVAL, "unknown max tokens field: EINVAL");
    T_EQ_INT(agt_model_set_extra_body(m, "[1]", 3), AGT_EPARSE, "extra_body array: EPARSE");
    T_EQ_INT(agt_model_complete(&r, m, "[]", 2, NULL, 0), AGT_EINVAL, "no model name: EINVAL");
    agt_model_set_name(m, "x");
    T_EQ_INT(agt_model_complete(&r, m, "{}", 2, NULL, 0), AGT_EPARSE, "messages object: EPARSE");
    T_EQ_INT(agt_model_complete(&r, m, "[{\"role\":\"robot\"}]", 18, NULL, 0), AGT_EPARSE,
             "unknown role: EPARSE");
    T_EQ_INT(agt_model_complete(&r, m, "[1]", 3, NULL, 0), AGT_EPARSE,
             "message not an object: EPARSE");
    T_EQ_INT(agt_model_complete(&r, m, "[", 1, NULL, 0), AGT_EPARSE, "truncated messages: EPARSE");
    T_EQ_INT(agt_model_complete(&r, m, "[]", 2, "{}", 2), AGT_EPARSE, "tools object: EPARSE");
    T_EQ_INT(agt_model_complete(NULL, m, "[]", 2, NULL, 0), AGT_EINVAL, "out NULL: EINVAL");
    agt_model_free(m);
    agt_model_free(NULL);
    agt_model_response_free(NULL);
    T_EQ_INT(agt_model_response_parse(&r, "{\"content\":5}", 13), AGT_EPARSE,
             "content number: EPARSE");
    T_EQ_INT(agt_model_response_tool_count(NULL), 0, "tool count of NULL: 0");
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-model", NULL, 0, NULL, &srv, "fake server started", &status))
        return status;
    test_openai_text();
    test_extra_headers();
    test_openai_tools();
    test_vendor_shapes();
    test_failures();
    test_cancel_thread();
    test_anthropic();
    test_local_models();
    test_bad_input();
    return fx_end(&srv, NULL);
}
