/*
 * libagenttools — model client: one completion request to a language model.
 *
 * Three kinds of model share one handle type:
 *  - an HTTP model (libcurl) speaking OpenAI-compatible Chat Completions
 *    (POST <base_url>/chat/completions, base URL like https://api.openai.com/v1;
 *    also DeepSeek, Moonshot/Kimi, Ollama, llama.cpp server, vLLM) or Anthropic
 *    Messages (POST <base_url>/messages, base URL like https://api.anthropic.com/v1),
 *    with or without SSE streaming;
 *  - a replay model that answers from a JSONL file (one canonical response per
 *    line), for demos and tests;
 *  - a host model: a callback that receives the request JSON and answers with
 *    the response JSON (an editor with its own client).
 *
 * The conversation crosses the boundary in the OpenAI chat message shape, our
 * canonical form:
 *   [{"role":"system|user|assistant|tool","content":"...",
 *     "tool_calls":[{"id","type":"function","function":{"name","arguments"}}],
 *     "tool_call_id":"...","reasoning_content":"..."}]
 * Tools are given as agt_registry_export(..., "openai", ...) produces them; for
 * the Anthropic protocol they are converted to {"name","description","input_schema"}
 * (entries already in that shape pass through).
 *
 * The canonical response (agt_model_response_json(), replay lines, host answers):
 *   {"content":"...","reasoning_content":"...",
 *    "tool_calls":[{"id":"...","name":"...","arguments":"{...}"}],
 *    "finish_reason":"stop|tool_calls|length|...",
 *    "usage":{"prompt_tokens":N,"completion_tokens":N,"total_tokens":N}}
 * Anthropic stop reasons are mapped: end_turn/stop_sequence → "stop",
 * tool_use → "tool_calls", max_tokens → "length".
 *
 * Threads: a model is used by one thread at a time, except agt_model_cancel(),
 * which may be called from any thread while a request runs.
 * Proxies: libcurl's own environment handling (http_proxy, https_proxy,
 * no_proxy) applies.
 */
#ifndef AGENTTOOLS_MODEL_H
#define AGENTTOOLS_MODEL_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A model client. */
typedef struct agt_model agt_model;

/** The answer of one completion request. */
typedef struct agt_model_response agt_model_response;

/** The reply slot handed to a host model callback. */
typedef struct agt_model_reply agt_model_reply;

/** Wire protocols of HTTP models. Append-only. */
enum agt_protocol {
    AGT_PROTOCOL_OPENAI = 0,   /**< Chat Completions (/chat/completions) */
    AGT_PROTOCOL_ANTHROPIC = 1 /**< Anthropic Messages (/messages) */
};

/** Which request field carries the output token limit. Append-only. */
enum agt_max_tokens_field {
    AGT_MAX_TOKENS = 0,           /**< "max_tokens" (older OpenAI models, most servers) */
    AGT_MAX_COMPLETION_TOKENS = 1 /**< "max_completion_tokens" (OpenAI o-series and later) */
};

/** Kinds of streaming events. Append-only. */
enum agt_stream_kind {
    AGT_STREAM_TEXT = 0,     /**< a piece of the assistant's text */
    AGT_STREAM_THINKING = 1, /**< a piece of reasoning (reasoning_content, thinking) */
    AGT_STREAM_TOOL_CALL = 2 /**< a tool call started; text is the tool name */
};

/**
 * Streaming event callback.
 *
 * @param kind an AGT_STREAM_* value.
 * @param text the piece (UTF-8 bytes, not NUL-terminated; a multi-byte
 *        character may be split between two pieces for text deltas of
 *        servers that split them), borrowed for the call.
 * @param len its length in bytes.
 * @param payload the pointer given with the callback.
 * @return 0 to go on; non-zero cancels the request (AGT_ECANCELLED).
 */
typedef int (*agt_stream_fn)(int kind, const char *text, size_t len, void *payload);

/**
 * Cancel poll: called about every 100 ms and on every received block while an
 * HTTP request runs.
 *
 * @return non-zero to cancel the request (AGT_ECANCELLED).
 */
typedef int (*agt_cancel_fn)(void *payload);

/**
 * Host model callback: answers one request.
 *
 * @param reply where the answer goes: agt_model_reply_set().
 * @param request_json NUL-terminated JSON: {"model":"...","messages":[...],
 *        "tools":[...]} (messages and tools as given to agt_model_complete()).
 * @param payload the pointer given to agt_model_new_host().
 * @return AGT_OK after setting the reply; a negative AGT_E* code fails the
 *         request with that code (the message is the reply's error text, if set).
 */
typedef int (*agt_model_host_fn)(agt_model_reply *reply, const char *request_json, void *payload);

/**
 * Creates an HTTP model. Defaults: base URL "https://api.openai.com/v1"
 * (OpenAI) or "https://api.anthropic.com/v1" (Anthropic), no key, no model
 * name, streaming on, connect timeout 30000 ms, total timeout 600000 ms,
 * low-speed timeout 60000 ms, 3 retries, backoff 500 ms doubling up to
 * 30000 ms, no max token limit for OpenAI and 4096 for Anthropic (the field
 * is required there).
 *
 * @param out receives the model; free with agt_model_free().
 * @param protocol AGT_PROTOCOL_OPENAI or AGT_PROTOCOL_ANTHROPIC.
 * @return AGT_OK; AGT_EINVAL (out NULL, unknown protocol); AGT_ERROR
 *         (libcurl failed to initialise); AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_new(agt_model **out, int protocol);

/**
 * Creates a replay model from a JSONL file: every non-blank line is one
 * canonical response (see the top of this header; tool calls may also be in
 * the OpenAI shape {"id","function":{"name","arguments"}}, and "arguments" may
 * be an object). Each agt_model_complete() returns the next line. The file is
 * read and checked now.
 *
 * @param path file path (UTF-8).
 * @return AGT_OK; AGT_EINVAL (NULL argument); AGT_EIO (cannot read the file);
 *         AGT_EPARSE (a line is not a JSON object; the message gives the line
 *         number, 1-based); AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_new_replay(agt_model **out, const char *path);

/**
 * Creates a host model: every agt_model_complete() calls fn.
 *
 * @return AGT_OK; AGT_EINVAL (out or fn NULL); AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_new_host(agt_model **out, agt_model_host_fn fn, void *payload);

/** Frees a model; NULL is a no-op. */
AGT_EXTERN void agt_model_free(agt_model *m);

/**
 * Sets the answer of a host model callback: a canonical response JSON object
 * (copied after parsing).
 *
 * @return AGT_OK; AGT_EPARSE (not JSON, or not an object; the request then
 *         fails with this error); AGT_EINVAL (NULL argument); AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_reply_set(agt_model_reply *reply, const char *json, size_t len);

/**
 * Sets the error text reported when the host callback returns an error code.
 *
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_reply_set_error(agt_model_reply *reply, const char *message);

/**
 * Sets the base URL of an HTTP model, without the endpoint path
 * ("http://127.0.0.1:11434/v1"); a trailing slash is ignored.
 *
 * @return AGT_OK; AGT_EINVAL (NULL or empty, or not http:// or https://);
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_set_base_url(agt_model *m, const char *url);

/**
 * Sets the API key: sent as "Authorization: Bearer <key>" (OpenAI) or
 * "x-api-key: <key>" (Anthropic). NULL or "" sends none. The key never
 * appears in error messages (it is replaced with "***" if a server echoes it).
 *
 * @return AGT_OK, AGT_EINVAL (m NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_set_api_key(agt_model *m, const char *key);

/**
 * Sets the model name sent as "model" (also given to host models).
 *
 * @return AGT_OK, AGT_EINVAL (m or name NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_set_name(agt_model *m, const char *name);

/**
 * Sets the time limits of HTTP requests, in milliseconds; 0 means none.
 *
 * @param connect_ms limit for connecting (TCP + TLS).
 * @param total_ms limit for one whole attempt.
 * @param low_speed_ms the request fails when less than 1 byte per second
 *        arrives for this long (rounded up to whole seconds): a stalled stream.
 * @return AGT_OK; AGT_EINVAL (m NULL or a negative value).
 */
AGT_EXTERN int agt_model_set_timeouts(agt_model *m, int64_t connect_ms, int64_t total_ms,
                                      int64_t low_speed_ms);

/**
 * Sets the retry policy for 429, 5xx and connection failures (before any
 * streamed piece reached the host). The delay before retry n (0-based) is the
 * server's Retry-After (seconds or HTTP date) when it sent one, else
 * base_ms * 2^n; either is capped at max_ms.
 *
 * @param max_retries retries after the first attempt (0 = none).
 * @return AGT_OK; AGT_EINVAL (m NULL or a negative value).
 */
AGT_EXTERN int agt_model_set_retries(agt_model *m, int max_retries, int64_t base_ms,
                                     int64_t max_ms);

/**
 * Sets the output token limit and the request field that carries it.
 *
 * @param max_tokens tokens; 0 sends no limit (Anthropic then sends 4096).
 * @param field AGT_MAX_TOKENS or AGT_MAX_COMPLETION_TOKENS (OpenAI only;
 *        Anthropic always uses "max_tokens").
 * @return AGT_OK; AGT_EINVAL (m NULL, negative limit, unknown field).
 */
AGT_EXTERN int agt_model_set_max_tokens(agt_model *m, int64_t max_tokens, int field);

/**
 * Sets extra request fields: a JSON object whose members are merged into
 * every request body at top level, replacing ours of the same name
 * ("temperature", "top_p", "tool_choice", "thinking", ...). NULL clears.
 *
 * @return AGT_OK; AGT_EPARSE (not a JSON object); AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_set_extra_body(agt_model *m, const char *json, size_t len);

/**
 * Sets extra HTTP request headers: a JSON object of header names and string
 * values ({"OpenAI-Organization": "org-1", "anthropic-beta": "..."}), sent
 * with every request of an HTTP model. A header of the same name as one the
 * client sends itself (compared without case: Content-Type, Accept,
 * Authorization, x-api-key, anthropic-version, ...) replaces it. Values are
 * never shown in error messages. NULL clears.
 *
 * @param json the object, len bytes of UTF-8 JSON; copied.
 * @return AGT_OK; AGT_EPARSE (not a JSON object); AGT_EINVALID (a name that
 *         is not an RFC 9110 token, a value that is not a string or holds a
 *         CR, LF or NUL; the message names the header); AGT_EINVAL (m NULL);
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_set_extra_headers(agt_model *m, const char *json, size_t len);

/**
 * Turns SSE streaming on (1, default) or off (0) for HTTP models. When a
 * server answers a streaming request with a plain JSON body, that is parsed.
 *
 * @return AGT_OK, AGT_EINVAL (m NULL).
 */
AGT_EXTERN int agt_model_set_stream(agt_model *m, int on);

/**
 * Sets (fn = NULL clears) the streaming event callback. Replay and host
 * models call it too, once per text, thinking and tool call of their answer.
 *
 * @return AGT_OK, AGT_EINVAL (m NULL).
 */
AGT_EXTERN int agt_model_set_stream_callback(agt_model *m, agt_stream_fn fn, void *payload);

/**
 * Sets (fn = NULL clears) a cancel poll for HTTP requests and retry waits.
 *
 * @return AGT_OK, AGT_EINVAL (m NULL).
 */
AGT_EXTERN int agt_model_set_cancel_callback(agt_model *m, agt_cancel_fn fn, void *payload);

/**
 * Asks the running request (from any thread) to stop: it returns
 * AGT_ECANCELLED within about 100 ms. The flag is cleared when the next
 * agt_model_complete() starts.
 */
AGT_EXTERN void agt_model_cancel(agt_model *m);

/**
 * Sends one completion request and waits for the whole answer (streamed
 * pieces go to the stream callback while it arrives).
 *
 * @param out receives the response; free with agt_model_response_free().
 * @param messages_json the conversation (canonical shape), len bytes.
 * @param tools_json the tools (OpenAI export shape), tools_len bytes; NULL or
 *        "[]" for none.
 * @return AGT_OK;
 *         AGT_EINVAL (NULL argument; HTTP model without model name);
 *         AGT_EPARSE (messages or tools not JSON arrays; an answer that is not
 *         the protocol's JSON, including malformed JSON in a stream event: the
 *         message names the event number, 1-based);
 *         AGT_ENET (connection failed, dropped mid-stream, or an HTTP error
 *         status: the message gives the status and the server's error message;
 *         agt_model_http_status() gives the status);
 *         AGT_ETIMEOUT (a time limit of agt_model_set_timeouts() ran out);
 *         AGT_ECANCELLED (agt_model_cancel(), the cancel poll or the stream
 *         callback asked to stop);
 *         AGT_ELIMIT (a replay model has no line left);
 *         a host callback's code; AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_complete(agt_model_response **out, agt_model *m, const char *messages_json,
                                  size_t len, const char *tools_json, size_t tools_len);

/**
 * The message of the last agt_model_complete() on m that failed, kept with
 * m whatever thread made the call (see agt_session_error_message()). ""
 * when the last one succeeded; never NULL. Valid until the next
 * agt_model_complete() on m or agt_model_free().
 */
AGT_EXTERN const char *agt_model_error_message(const agt_model *m);

/**
 * The HTTP status of the last attempt of the last request (0 before any, or
 * when no response arrived; always 0 for replay and host models).
 */
AGT_EXTERN int agt_model_http_status(const agt_model *m);

/** The number of attempts the last request made (1 without retries). */
AGT_EXTERN int agt_model_attempts(const agt_model *m);

/**
 * Builds a response from canonical JSON (as replay lines are read).
 *
 * @return AGT_OK; AGT_EPARSE (not a JSON object, or a field of the wrong
 *         type); AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_model_response_parse(agt_model_response **out, const char *json, size_t len);

/** The canonical response JSON (see the top of this header), borrowed; never NULL. */
AGT_EXTERN const char *agt_model_response_json(const agt_model_response *r);

/** The assistant's text, borrowed; "" when none. */
AGT_EXTERN const char *agt_model_response_text(const agt_model_response *r);

/** The reasoning text, borrowed; "" when none. */
AGT_EXTERN const char *agt_model_response_thinking(const agt_model_response *r);

/** The finish reason ("stop", "tool_calls", "length", ...), borrowed; "" when none. */
AGT_EXTERN const char *agt_model_response_finish_reason(const agt_model_response *r);

/** The number of tool calls (0 for NULL). */
AGT_EXTERN size_t agt_model_response_tool_count(const agt_model_response *r);

/** The id of tool call i (0-based), borrowed; NULL when i is out of range. */
AGT_EXTERN const char *agt_model_response_tool_id(const agt_model_response *r, size_t i);

/** The tool name of tool call i (0-based), borrowed; NULL when out of range. */
AGT_EXTERN const char *agt_model_response_tool_name(const agt_model_response *r, size_t i);

/**
 * The arguments of tool call i (0-based) as the model sent them (JSON text,
 * not checked), borrowed; NULL when out of range.
 */
AGT_EXTERN const char *agt_model_response_tool_arguments(const agt_model_response *r, size_t i);

/**
 * Token usage as the server reported it; -1 for a count it did not give.
 *
 * @return AGT_OK, AGT_EINVAL (r NULL). Any of the out pointers may be NULL.
 */
AGT_EXTERN int agt_model_response_usage(const agt_model_response *r, int64_t *prompt_tokens,
                                        int64_t *completion_tokens, int64_t *total_tokens);

/** Frees a response; NULL is a no-op. */
AGT_EXTERN void agt_model_response_free(agt_model_response *r);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_MODEL_H */
