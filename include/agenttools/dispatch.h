/*
 * libagenttools — tool calls and their results.
 *
 * agt_session_dispatch() (session.h) runs one tool call: look the tool up,
 * parse the arguments, validate them against the tool's JSON Schema, pass the
 * approval gate, run the provider, and hand back an agt_result. Every failure
 * a model can cause (unknown tool, malformed JSON, schema violation, provider
 * error) comes back as a result with is_error set and a message that tells the
 * model what to do next; it never fails the host.
 *
 * The agt_call_* functions are for providers, during their invocation.
 */
#ifndef AGENTTOOLS_DISPATCH_H
#define AGENTTOOLS_DISPATCH_H

#include "common.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The result of one tool call. */
typedef struct agt_result agt_result;

struct agt_session;

/** The call id given to agt_session_dispatch(), borrowed; never NULL ("" when none). */
AGT_EXTERN const char *agt_call_id(const agt_call *call);

/** The name of the tool being called, borrowed. */
AGT_EXTERN const char *agt_call_tool(const agt_call *call);

/**
 * The validated arguments as JSON text (an object), borrowed: the text the
 * model sent, unchanged (its spacing, key order and number spelling, e.g.
 * 2.0 for an integer parameter), or "{}" when it sent none; after a
 * pre-tool-use hook rewrote them, the compact JSON of the rewrite.
 */
AGT_EXTERN const char *agt_call_args(const agt_call *call);

/** The session the call runs in (borrowed). */
AGT_EXTERN struct agt_session *agt_call_session(const agt_call *call);

/**
 * Sets the result text (UTF-8, copied; invalid sequences are replaced with
 * U+FFFD) and marks the result as a success. Replaces earlier text.
 *
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_call_set_text(agt_call *call, const char *text);

/**
 * Sets the result text and marks the result as an error (is_error = 1).
 *
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_call_set_error(agt_call *call, const char *text);

/**
 * Attaches a structured form of the result (any JSON value, copied after
 * parsing). The text stays what the model sees.
 *
 * @return AGT_OK, AGT_EPARSE (not JSON), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_call_set_json(agt_call *call, const char *json, size_t len);

/** The text for the model, borrowed from the result; never NULL. */
AGT_EXTERN const char *agt_result_text(const agt_result *r);

/** 1 when the result is an error result, 0 otherwise. */
AGT_EXTERN int agt_result_is_error(const agt_result *r);

/**
 * Why the result is an error, as a status code: AGT_OK for success;
 * AGT_ENOTFOUND (tool not available), AGT_EPARSE (arguments not JSON),
 * AGT_EINVALID (arguments fail the schema), AGT_EDENIED (refused by mode,
 * rule, hook or user), or the code the provider failed with.
 */
AGT_EXTERN int agt_result_status(const agt_result *r);

/** The structured form of the result as JSON text, borrowed; NULL when none. */
AGT_EXTERN const char *agt_result_json(const agt_result *r);

/** The call id of the call this result answers, borrowed; never NULL. */
AGT_EXTERN const char *agt_result_call_id(const agt_result *r);

/** The tool name of the call this result answers, borrowed; never NULL. */
AGT_EXTERN const char *agt_result_tool(const agt_result *r);

/** Frees a result; NULL is a no-op. */
AGT_EXTERN void agt_result_free(agt_result *r);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_DISPATCH_H */
