/*
 * Internal parts of the model client: the response builder shared by the
 * protocol parsers, and the hooks the agent loop uses.
 */
#ifndef AGT_LIB_MODEL_INTERNAL_H
#define AGT_LIB_MODEL_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "agenttools/model.h"
#include "core/core.h"

struct json_t;

typedef struct agti_tool_call {
    char *id;
    char *name;
    agti_buf args;
    bool announced; /* the AGT_STREAM_TOOL_CALL event was sent */
} agti_tool_call;

struct agt_model_response {
    agti_buf text;
    agti_buf thinking;
    char *finish;
    agti_tool_call *calls;
    size_t n_calls;
    size_t cap_calls;
    int64_t usage[3]; /* prompt, completion, total; -1 unknown */
    char *json;       /* canonical form, built by agti_resp_finish */
};

enum agti_model_kind { AGTI_MODEL_HTTP, AGTI_MODEL_REPLAY, AGTI_MODEL_HOST };

struct agt_model {
    int kind;
    int protocol;
    char *base_url;
    char *api_key;
    char *name;
    int64_t connect_ms, total_ms, low_speed_ms;
    int max_retries;
    int64_t backoff_base_ms, backoff_max_ms;
    int64_t max_tokens;
    int max_tokens_field;
    struct json_t *extra_body;
    struct json_t *extra_headers; /* {"Name": "value"}, checked by agt_model_set_extra_headers */
    int stream;
    agt_stream_fn stream_fn;
    void *stream_payload;
    agt_cancel_fn cancel_fn;
    void *cancel_payload;
    atomic_int cancelled;
    int http_status;
    int attempts;
    /* replay */
    char **lines;
    size_t n_lines, next_line;
    /* host */
    agt_model_host_fn host_fn;
    void *host_payload;
};

struct agt_model_reply {
    struct json_t *json;
    char *error;
};

/* Response builder. */
agt_model_response *agti_resp_new(void);
/* The tool call slot at index (grown with empty slots as needed); NULL on OOM. */
agti_tool_call *agti_resp_call(agt_model_response *r, size_t index);
void agti_resp_set_finish(agt_model_response *r, const char *finish);
/* Fills the canonical JSON; generates ids for calls without one. */
int agti_resp_finish(agt_model_response *r);
/* Fills r from a canonical response object (replay line, host answer). */
int agti_resp_from_json(agt_model_response *r, const struct json_t *obj);

/* Streaming sink: forwards to the callback; returns non-zero to cancel. */
typedef struct agti_stream_sink {
    agt_stream_fn fn;
    void *payload;
} agti_stream_sink;
int agti_sink_emit(const agti_stream_sink *s, int kind, const char *text, size_t len);

/* Request bodies (jansson objects; NULL with the error set). */
struct json_t *agti_request_openai(const agt_model *m, struct json_t *messages,
                                   struct json_t *tools);
struct json_t *agti_request_anthropic(const agt_model *m, struct json_t *messages,
                                      struct json_t *tools);

/* One HTTP completion with retries. */
int agti_http_complete(agt_model *m, const struct json_t *body, const agti_stream_sink *sink,
                       agt_model_response **out);

/* Parsers of whole (non-streaming) answers. */
int agti_parse_openai_body(agt_model_response *r, const struct json_t *root,
                           const agti_stream_sink *sink);
int agti_parse_anthropic_body(agt_model_response *r, const struct json_t *root,
                              const agti_stream_sink *sink);

/* agt_model_complete with a stream sink that overrides the model's callback
 * (the agent loop forwards pieces as its own events). */
int agti_model_complete_sink(agt_model_response **out, agt_model *m, const char *messages_json,
                             size_t len, const char *tools_json, size_t tools_len, agt_stream_fn fn,
                             void *payload);

/* A new HTTP model with m's settings (no callbacks), for a worker thread;
 * AGT_EUNSUPPORTED for replay and host models. */
int agti_model_clone(agt_model **out, const agt_model *m);

#endif
