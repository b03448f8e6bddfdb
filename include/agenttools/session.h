/*
 * libagenttools — sessions: the state around tool calls (workspace root, mode,
 * phase, todo list, ...) and the entry point that dispatches a call.
 *
 * A session is used by one thread at a time. Its registry must outlive it.
 */
#ifndef AGENTTOOLS_SESSION_H
#define AGENTTOOLS_SESSION_H

#include "common.h"
#include "dispatch.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A session. */
typedef struct agt_session agt_session;

/** Session modes. Append-only. */
enum agt_mode {
    AGT_MODE_MANUAL = 0, /**< ask before anything but reads (default) */
    AGT_MODE_PLAN = 1,   /**< read-only; writes only to the plan file */
    AGT_MODE_YOLO = 2,   /**< never ask (ExitPlanMode still asks) */
    AGT_MODE_AUTO = 3    /**< approve everything but questions to the user */
};

/**
 * Creates a session over a registry and a workspace.
 *
 * @param out receives the session; free with agt_session_free().
 * @param reg the tool catalogue; borrowed: it must outlive the session.
 * @param workspace_root an existing directory; made absolute and resolved
 *        (symlinks followed) once, here.
 * @return AGT_OK, AGT_ENOTFOUND (root does not exist or is not a directory;
 *         the message names it), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_new(agt_session **out, agt_registry *reg, const char *workspace_root);

/** Frees a session; NULL is a no-op. */
AGT_EXTERN void agt_session_free(agt_session *s);

/** The resolved absolute workspace root, borrowed. */
AGT_EXTERN const char *agt_session_root(const agt_session *s);

/** The registry the session dispatches through (borrowed). */
AGT_EXTERN agt_registry *agt_session_registry(const agt_session *s);

/**
 * Sets the mode (AGT_MODE_*).
 *
 * @return AGT_OK, AGT_EINVAL (unknown mode).
 */
AGT_EXTERN int agt_session_set_mode(agt_session *s, int mode);

/** The current mode (AGT_MODE_*). */
AGT_EXTERN int agt_session_mode(const agt_session *s);

/**
 * Sets which phase's tools the session offers and accepts (AGT_PHASE_*;
 * default AGT_PHASE_ALL). A call to a tool outside the phase gets the
 * not-available result.
 *
 * @return AGT_OK, AGT_EINVAL (unknown phase).
 */
AGT_EXTERN int agt_session_set_phase(agt_session *s, int phase);

/** The current phase (AGT_PHASE_*). */
AGT_EXTERN int agt_session_phase(const agt_session *s);

/**
 * Dispatches one tool call: look-up → argument parsing → JSON Schema
 * validation → approval gate → provider → result.
 *
 * @param call_id the model's id for the call (copied; NULL means "").
 * @param tool the tool name.
 * @param args_json the arguments as a NUL-terminated JSON object; NULL or ""
 *        means {}.
 * @param out receives the result (free with agt_result_free()). A bad call
 *        (unknown tool, malformed JSON, schema violations — every one listed —,
 *        provider failure) still returns AGT_OK with an error result.
 * @return AGT_OK (see *out); AGT_EPENDING when the call waits for approval
 *         (*out is NULL); AGT_EINVAL (s, tool or out is NULL); AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_dispatch(agt_session *s, const char *call_id, const char *tool,
                                    const char *args_json, agt_result **out);

/**
 * The todo list as JSON: [{"title":"...","status":"pending|in_progress|done"}].
 *
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_todos(const agt_session *s, char **out_json);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_SESSION_H */
