/* Internal dispatcher: runs one tool call through look-up, argument parsing,
 * schema validation, an approval gate and the provider. The session layer
 * owns the state (mode, rules, hooks) and passes it in as a gate. */
#ifndef AGT_LIB_DISPATCH_INTERNAL_H
#define AGT_LIB_DISPATCH_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/dispatch.h"
#include "core/core.h"
#include "registry/registry_internal.h"

struct agt_call {
    const char *id;
    const char *tool;       /* tool_copy: the registry entry may go while the call lives */
    char *tool_copy;        /* owned */
    const agti_tool *entry; /* valid in prepare up to the gate's return only */
    struct agt_session *session;
    json_t *args;          /* parsed, validated arguments (owned) */
    const char *args_text; /* the arguments as received (borrowed) */
    char *args_dump;       /* compact text of `args` when it was rewritten */
    agti_buf text;
    bool text_set;
    bool is_error;
    json_t *json;
    bool suspended; /* the provider suspended it: no result yet (agti_call_suspend) */
    /* A file tool's path outside every folder of the session (set by the
     * approval gate, lib/session/outside.c): the folder to admit, whether
     * the call writes there, and whether the gate admitted it for this
     * call (the provider then resolves below it too). */
    char *outside_dir;
    bool outside_write;
    bool outside_admitted;
};

struct agt_result {
    char *text;
    char *json;
    char *call_id;
    char *tool;
    int status;
    bool is_error;
};

/* The approval gate: returns AGT_OK to run the call, AGT_EDENIED with an error
 * result in *out to refuse it, or AGT_EPENDING to park it. */
typedef int (*agti_gate_fn)(void *ctx, agt_call *call, agt_result **out);

typedef struct agti_dispatch_env {
    const agt_registry *reg;
    int phase;
    struct agt_session *session;
    agti_gate_fn gate; /* NULL: allow */
    void *gate_ctx;
} agti_dispatch_env;

int agti_dispatch(const agti_dispatch_env *env, const char *call_id, const char *tool,
                  const char *args_json, agt_result **out);

/* Builds a result (copies the strings); NULL on OOM. */
agt_result *agti_result_new(const char *call_id, const char *tool, const char *text, bool is_error,
                            int status);

/* Rules of built-in tools' arguments that their schema cannot say (e.g.
 * unique answer labels), run after schema validation and before approval;
 * defined in lib/tools/checks.c. AGT_OK, or an error code with the call's
 * error text set. */
int agti_builtin_check(agt_call *call);

/* Whether a string or member name in v holds a NUL character (providers read
 * C strings, which would end there); its JSON Pointer is appended to ptr. */
bool agti_args_find_nul(json_t *v, agti_buf *ptr);

/* Turns the top-level arguments that t declares "integer" and that were
 * written with a zero fraction (2.0, valid JSON Schema integers) into JSON
 * integers, so json_integer_value reads them. AGT_OK or AGT_ENOMEM. */
int agti_args_integral(const agti_tool *t, json_t *args);

/* Marks a call suspended: the provider returns AGT_OK without a result and
 * agti_dispatch returns AGT_EPENDING with *out NULL. The call has passed the
 * gate and the pre-hook; its owner (the session, see
 * lib/session/subapproval.h) keeps it and completes it later. Used by the
 * Agent and AgentSwarm providers when a sub-agent waits for approval. */
void agti_call_suspend(agt_call *call);

/* The parsed arguments of a call (borrowed). */
json_t *agti_call_args_json(const agt_call *call);

/* Replaces the arguments (e.g. after a hook rewrote them); takes ownership,
 * also on failure. AGT_OK, or AGT_ENOMEM with the call unchanged. */
int agti_call_replace_args(agt_call *call, json_t *args);

/* agt_call_set_text with the text in *b, which is taken (left empty): a
 * large result (a Grep of megabytes) is not copied. Text that is not valid
 * UTF-8 is sanitized as agt_call_set_text does. AGT_OK or AGT_ENOMEM (also
 * when b ran out of memory). */
int agti_call_take_text(agt_call *call, agti_buf *b);

/* ---- split dispatch: concurrent read-only calls (issue #7) ----
 * agti_dispatch = agti_dispatch_prepare + agti_dispatch_execute. Prepare
 * (look-up, arguments, checks, the gate with approval and pre-hook) runs on
 * the session's thread in call order; execute (provider + result) may run on
 * another thread when the provider is parallel-safe; the caller completes
 * (post-hook) back on the session's thread. */
typedef struct agti_prepared agti_prepared;

/* Prepares a call. AGT_OK with *prep set: ready to execute (the call's
 * strings are copied). AGT_OK with *out set: answered already (not
 * available, bad arguments, refused by the gate). AGT_EPENDING: parked by the
 * gate. Another code: failed (nothing set). */
int agti_dispatch_prepare(const agti_dispatch_env *env, const char *call_id, const char *tool,
                          const char *args_json, agti_prepared **prep, agt_result **out);

/* Runs the provider of a prepared call and builds its result, on any thread
 * (one thread for the whole call). Returns what agti_dispatch would: AGT_OK
 * with *out, AGT_EPENDING (suspended), or an error code with the calling
 * thread's last error set. The call is released; free p afterwards. */
int agti_dispatch_execute(agti_prepared *p, agt_result **out);

/* Frees a prepared call, run or not; NULL is a no-op. */
void agti_prepared_free(agti_prepared *p);

/* Whether the prepared call's provider may run concurrently with others. */
bool agti_prepared_parallel_safe(const agti_prepared *p);

/* Whether `tool` is offered in env's phase and its provider is
 * parallel-safe (a host provider never is). */
bool agti_dispatch_parallel_safe(const agti_dispatch_env *env, const char *tool);

/* Whether a provider may run on a worker thread concurrently with other
 * parallel-safe calls of the same session: only built-in providers audited
 * for shared state (lib/tools/providers.c). */
bool agti_provider_parallel_safe(agt_provider_fn fn);

#endif
