/*
 * libagenttools — tool registry: the catalogue of tools offered to a model.
 *
 * Each entry has the shape of the tools.json format (see docs/tools.md):
 *   {"name": "file_read", "plan_task": false, "main_task": true,
 *    "access": "read", "set": "review", "provider": "file_read",
 *    "definition": {"name": "file_read", "description": "...",
 *                   "parameters": {JSON Schema}}}
 * "access", "set" and "provider" are optional. "parameters" is compiled as a
 * JSON Schema (draft 2020-12 unless it says "$schema") when the entry loads.
 *
 * A tool is *offered* (exported to the model, dispatchable) when it has a
 * provider: a built-in one, or one the host set with agt_registry_set_provider().
 * Host-backed tools (WebSearch, Agent, AskUserQuestion, Skill, ...) have no
 * built-in provider and are offered only once the host sets one.
 *
 * Threads: a registry is used by one thread at a time until
 * agt_registry_freeze(); a frozen registry is immutable and may be shared by
 * many sessions on many threads. A registry must outlive the sessions that use it.
 */
#ifndef AGENTTOOLS_REGISTRY_H
#define AGENTTOOLS_REGISTRY_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A tool catalogue. */
typedef struct agt_registry agt_registry;

/** One tool call being executed; handed to providers (see dispatch.h). */
typedef struct agt_call agt_call;

/** Phases of a review (tools.json "plan_task"/"main_task"). Append-only. */
enum agt_phase {
    AGT_PHASE_ALL = 0,  /**< every offered tool, whatever its phase flags */
    AGT_PHASE_PLAN = 1, /**< tools with "plan_task": true */
    AGT_PHASE_MAIN = 2  /**< tools with "main_task": true */
};

/** Access classes (tools.json "access"); they drive default approval. Append-only. */
enum agt_access {
    AGT_ACCESS_READ = 0,    /**< reads the workspace only: runs without asking */
    AGT_ACCESS_WRITE = 1,   /**< changes files */
    AGT_ACCESS_EXECUTE = 2, /**< runs commands */
    AGT_ACCESS_NETWORK = 3, /**< reaches the network */
    AGT_ACCESS_HOST = 4     /**< handled by the host (questions, sub-agents, skills) */
};

/**
 * A provider: runs one validated tool call. Read the call with agt_call_*()
 * and answer with agt_call_set_text() / agt_call_set_error() /
 * agt_call_set_json().
 *
 * @param call the call; valid only during this invocation.
 * @param payload the pointer given to agt_registry_set_provider().
 * @return AGT_OK when the result was set (it may be an error result);
 *         a negative AGT_E* code to fail the call, in which case the model
 *         receives an error result built from agt_error_message() (or from a
 *         text set with agt_call_set_error()).
 */
typedef int (*agt_provider_fn)(agt_call *call, void *payload);

/**
 * Creates an empty registry.
 *
 * @param out receives the registry; free with agt_registry_free().
 * @return AGT_OK, AGT_EINVAL (out is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_new(agt_registry **out);

/** Frees a registry; NULL is a no-op. Sessions using it must be freed first. */
AGT_EXTERN void agt_registry_free(agt_registry *reg);

/**
 * Adds a built-in tool set, embedded in the library: "review" (task_done,
 * code_comment, file_read, file_read_diff, file_find, code_search) or "chat"
 * (Read, Write, Edit, Grep, Glob, ReadMediaFile, Bash, WebSearch, FetchURL,
 * EnterPlanMode, ExitPlanMode, TodoList, Agent, AgentSwarm, AskUserQuestion,
 * Skill, TaskList, TaskOutput, TaskStop, CronCreate, CronList, CronDelete).
 * Entries with a name already present replace it.
 *
 * @return AGT_OK, AGT_ENOTFOUND (unknown set name), AGT_EFROZEN, AGT_EINVAL,
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_load_builtin(agt_registry *reg, const char *set);

/**
 * Replaces the whole catalogue with a host's tools.json (a JSON array of
 * entries). Use it to drop tools (leave them out), re-describe them, change
 * their phases, or add a tool under a new name backed by an existing provider
 * ("provider": "<tool name>"). Every name must be backed by a provider: a
 * built-in tool of that name, a provider set with agt_registry_set_provider()
 * before the load, or the tool named in "provider". All or nothing: on any
 * error the registry is unchanged.
 *
 * @param json len bytes of UTF-8 JSON.
 * @return AGT_OK; AGT_EPARSE (not JSON); AGT_EINVALID (an entry is malformed,
 *         its "parameters" is not a valid schema or not an object schema (a
 *         "type" other than "object" or a list without it), a name repeats,
 *         or a name has no provider; the message names the entry index and
 *         the field);
 *         AGT_EFROZEN; AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_load_json(agt_registry *reg, const char *json, size_t len);

/**
 * Adds one entry (the tools.json entry shape, as a JSON object), replacing an
 * entry of the same name. Same rules as agt_registry_load_json().
 *
 * @return as agt_registry_load_json().
 */
AGT_EXTERN int agt_registry_add_json(agt_registry *reg, const char *entry_json, size_t len);

/**
 * Sets (or, with fn = NULL, removes) the host provider of a tool name. A host
 * provider takes precedence over the built-in one. The name need not be in
 * the catalogue yet (set providers before agt_registry_load_json()).
 *
 * Called from inside a dispatch (an approver or a pre-tool-use hook), it
 * applies to later calls: the call being dispatched runs the provider it was
 * looked up with (so keep a replaced provider's payload alive until that
 * call returns); a call whose tool is left with no provider at all is
 * refused ("lost its provider"), as is one whose tool was removed. Within a
 * concurrent group of the agent loop (agt_agent_set_parallel_tools()) the
 * same holds for every call of the group already prepared.
 *
 * @return AGT_OK, AGT_EFROZEN, AGT_EINVAL (empty name), AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_set_provider(agt_registry *reg, const char *name, agt_provider_fn fn,
                                         void *payload);

/**
 * Removes a tool from the catalogue; it is then not offered and calls to it
 * get the not-available result.
 *
 * @return AGT_OK, AGT_ENOTFOUND, AGT_EFROZEN, AGT_EINVAL.
 */
AGT_EXTERN int agt_registry_remove(agt_registry *reg, const char *name);

/**
 * Replaces a tool's description (UTF-8, copied).
 *
 * @return AGT_OK, AGT_ENOTFOUND, AGT_EFROZEN, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_set_description(agt_registry *reg, const char *name,
                                            const char *description);

/**
 * Makes the registry immutable; from then on it may be shared read-only by
 * sessions on many threads. Every mutating call then fails with AGT_EFROZEN.
 *
 * @return AGT_OK, AGT_EINVAL (reg is NULL).
 */
AGT_EXTERN int agt_registry_freeze(agt_registry *reg);

/** 1 when frozen, 0 otherwise (and for NULL). */
AGT_EXTERN int agt_registry_is_frozen(const agt_registry *reg);

/** Number of entries in the catalogue, offered or not (0 for NULL). */
AGT_EXTERN size_t agt_registry_count(const agt_registry *reg);

/**
 * Name of entry i (0-based, catalogue order), borrowed from the registry;
 * NULL when i is out of range.
 */
AGT_EXTERN const char *agt_registry_name_at(const agt_registry *reg, size_t i);

/**
 * Whether a tool is offered in a phase: 1 yes, 0 no (unknown name, no
 * provider, or not in that phase).
 */
AGT_EXTERN int agt_registry_is_offered(const agt_registry *reg, const char *name, int phase);

/**
 * The access class (AGT_ACCESS_*) of a tool, or AGT_ENOTFOUND.
 */
AGT_EXTERN int agt_registry_access(const agt_registry *reg, const char *name);

/**
 * Exports the tools offered in a phase.
 *
 * @param format "openai": [{"type":"function","function":{"name","description","parameters"}}];
 *               "anthropic": [{"name","description","input_schema"}];
 *               "mcp": {"tools":[{"name","description","inputSchema","annotations"}]},
 *                      annotations (MCP 2025-03-26) from the tool's access class:
 *                      "title" from the name ("ReadMediaFile" -> "Read media file");
 *                      read: readOnlyHint true, destructiveHint false,
 *                      idempotentHint true, openWorldHint false; write: false,
 *                      true, false, false; execute: false, true, false, true;
 *                      network: true, false, false, true; host: the title only;
 *               "native": the tools.json array of the offered entries.
 * @param phase AGT_PHASE_ALL, AGT_PHASE_PLAN or AGT_PHASE_MAIN.
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_ENOTFOUND (unknown format), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_registry_export(const agt_registry *reg, const char *format, int phase,
                                   char **out_json);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_REGISTRY_H */
