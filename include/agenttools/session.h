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
#include "git.h"
#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A session. */
typedef struct agt_session agt_session;

/** Session modes. Append-only. */
enum agt_mode {
    /** ask before writes, commands and host tools, except FetchURL,
     *  WebSearch, Agent, AskUserQuestion and Skill (default) */
    AGT_MODE_MANUAL = 0,
    /** planning: Write/Edit/MultiEdit only to the plan file, TaskStop and
     *  CronDelete refused; otherwise asks as the mode it was entered from */
    AGT_MODE_PLAN = 1,
    AGT_MODE_YOLO = 2, /**< never ask (ExitPlanMode still asks) */
    /** never ask, as yolo (ExitPlanMode still asks); AskUserQuestion
     *  still reaches the user through its provider */
    AGT_MODE_AUTO = 3
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
 *         (*out is NULL; see agt_session_pending() and agt_session_answer());
 *         AGT_EEXISTS (a call with this call_id is already waiting for
 *         approval); AGT_EINVAL (s, tool or out is NULL); AGT_ENOMEM.
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

/* ---- approval ---------------------------------------------------------- */

/** Rule lists. Append-only. */
enum agt_rule_kind {
    AGT_RULE_ALLOW = 0, /**< run without asking */
    AGT_RULE_ASK = 1,   /**< ask the user even where the default would allow */
    AGT_RULE_DENY = 2   /**< refuse, in every mode */
};

/** Answers to an approval request. Append-only. */
enum agt_decision {
    AGT_DECISION_APPROVE = 0,         /**< run this call once */
    AGT_DECISION_APPROVE_SESSION = 1, /**< run it and allow similar calls for the session */
    AGT_DECISION_REJECT = 2           /**< do not run it; the model is told the user declined */
};

/**
 * Adds a permission rule. A rule is `Tool` (every call of the tool),
 * `Tool(pattern)`, or `*` (also `*(*)`): every tool, no other pattern.
 * What the pattern is matched against:
 *  - Bash: every command the parsed command line can run, as it would run
 *    (wrappers such as env, timeout, sudo, xargs seen through; sh -c and
 *    eval strings parsed again; functions expanded; the command word's
 *    basename), as its words joined by one space. `*` matches any
 *    characters, '/' and spaces included; `\*` is a literal star; a trailing
 *    ` *` also matches no more words; `x:*` is x alone or followed by words.
 *    Deny and ask rules match option clusters in any spelling and order
 *    (`-rf` = `-fr` = `-r -f`). The line is allowed only when every command
 *    is allowed, denied when any is denied; a command that cannot be
 *    decided before it runs (`$X args`, `eval "$v"`, `| sh`, source) asks,
 *    and is refused in yolo and auto mode (and in plan mode entered from
 *    them); a redirection into a file is not
 *    covered by an allow rule with a pattern. docs/session.md has the rules.
 *  - Read, Write, Edit, ReadMediaFile: the path, resolved as the file tools
 *    resolve it (absolute against the workspace root, `~` expanded, symbolic
 *    links followed; lexical only when it cannot be resolved, e.g. a link
 *    loop), then taken relative to the root when inside it, so a link cannot
 *    walk around a rule. The pattern is a gitignore-style glob
 *    (git's wildmatch: `*` stays within a component, `**` spans directories,
 *    `{a,b}`, `[...]`); a pattern without '/' matches the file name at any
 *    depth; `./src/x`, `src/x` and `<root>/src/x` (x being `**` or any
 *    other glob) are the same rule; an
 *    absolute pattern outside the root matches absolute paths.
 *  - Grep, Glob: the pattern argument; FetchURL: the URL (`*` as for Bash).
 *  - Any other tool: the name only; a pattern on it is rejected
 *    (AGT_EINVALID), so a rule never silently means more than it says.
 * Precedence: deny beats ask beats allow among the rules naming the call's
 * tool; the rules `*` decide only a call that none of those decided (deny
 * beats ask beats allow among them), so {"deny":["*"],"allow":["Read"]}
 * runs Read and refuses every other tool. Deny rules apply in every mode;
 * yolo and auto mode skip ask rules (they never ask, see enum agt_mode), and
 * so does plan mode entered from them.
 *
 * @param kind AGT_RULE_ALLOW, AGT_RULE_ASK or AGT_RULE_DENY.
 * @param rule NUL-terminated UTF-8, copied.
 * @return AGT_OK; AGT_EINVALID (malformed rule: empty, bad tool name, missing
 *         ')', empty pattern, pattern on a name-only tool or on `*`, bad glob; the
 *         message names the rule); AGT_EINVAL (NULL, unknown kind); AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_add_rule(agt_session *s, int kind, const char *rule);

/**
 * Adds the rules of a JSON document {"allow":[...],"ask":[...],"deny":[...]}
 * (each list optional, each item a rule string as for agt_session_add_rule();
 * other keys are ignored). All or nothing: on any error no rule is added.
 *
 * @param json len bytes of UTF-8 JSON.
 * @return AGT_OK; AGT_EPARSE (not JSON); AGT_EINVALID (not an object, a list
 *         is not an array of strings, or a malformed rule: the message names
 *         the list, the index and the rule); AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_load_rules(agt_session *s, const char *json, size_t len);

/**
 * The session's rules as {"allow":[...],"ask":[...],"deny":[...],
 * "session":[...]}: "session" lists the allow rules added by
 * AGT_DECISION_APPROVE_SESSION answers (they also appear in "allow").
 *
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_rules(const agt_session *s, char **out_json);

/**
 * The calls waiting for approval, oldest first, as
 * [{"call_id","tool","arguments":{...},"reason":"why it asks",
 *   "suggested_rule":"Bash(git log *)" or null}]; for a compound Bash command
 * the suggested rule holds one rule per uncovered command, one per line, and
 * "suggested_rules" lists them.
 * The suggested rule is what AGT_DECISION_APPROVE_SESSION stores: broader
 * than the call (the command's first words followed by ` *`, the parent
 * folder of a path followed by a slash and `**`); null when the tool always
 * asks
 * (ExitPlanMode).
 *
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_pending(const agt_session *s, char **out_json);

/**
 * Answers a pending call (see agt_session_dispatch() returning AGT_EPENDING)
 * and removes it from the pending list. Approving runs the call (pre-hook,
 * provider, post-hook) and hands back its result. Rejecting gives the error
 * result "The user declined this <Tool> call[: <reason>]. Do not retry it
 * unchanged; ask the user or take another approach." with status AGT_EDENIED.
 * For ExitPlanMode, an approving reason equal (ignoring case) to one of the
 * call's option labels selects that option; any other reason is passed to
 * the model as the user's comment.
 *
 * @param call_id the id given to agt_session_dispatch().
 * @param decision AGT_DECISION_*.
 * @param reason optional text from the user (NULL or "" for none), copied.
 * @param out receives the result; free with agt_result_free().
 * @return AGT_OK (see *out); AGT_ENOTFOUND (no pending call with that id);
 *         AGT_EINVAL (NULL argument, unknown decision); AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_answer(agt_session *s, const char *call_id, int decision,
                                  const char *reason, agt_result **out);

/**
 * The message of the last agt_session_dispatch(), agt_session_answer() or
 * agt_session_answer_rule() on s that failed, kept with s whatever thread
 * made the call: a binding that runs the call on a worker thread reads it
 * on its own thread, where agt_error_message() is another thread's. "" when
 * the last of those calls succeeded (or none was made); never NULL. Valid
 * until the next of those calls on s or agt_session_free().
 */
AGT_EXTERN const char *agt_session_error_message(const agt_session *s);

/**
 * Approves a pending call for the session with a host-given rule (instead
 * of the suggested one), then runs it as agt_session_answer() does. The rule
 * is checked first: a malformed rule leaves the call pending.
 *
 * @param rule an allow rule in agt_session_add_rule() syntax.
 * @return AGT_OK (see *out); AGT_EINVALID (malformed rule; the call stays
 *         pending); AGT_ENOTFOUND; AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_answer_rule(agt_session *s, const char *call_id, const char *rule,
                                       const char *reason, agt_result **out);

/** An approval request handed to a synchronous approver. */
typedef struct agt_approval agt_approval;

/**
 * A synchronous approver: decides a call that needs approval.
 *
 * @param req the request; valid only during the callback.
 * @param payload the pointer given to agt_session_set_approver().
 * @return AGT_DECISION_APPROVE, AGT_DECISION_APPROVE_SESSION or
 *         AGT_DECISION_REJECT; any other value rejects the call.
 */
typedef int (*agt_approver_fn)(agt_approval *req, void *payload);

/**
 * Sets (fn != NULL) or removes (fn = NULL) the synchronous approver. While
 * one is set, agt_session_dispatch() asks it and never returns AGT_EPENDING.
 *
 * @return AGT_OK, AGT_EINVAL (s is NULL).
 */
AGT_EXTERN int agt_session_set_approver(agt_session *s, agt_approver_fn fn, void *payload);

/**
 * The request as one JSON object, the shape of an agt_session_pending()
 * item; borrowed, valid during the callback.
 */
AGT_EXTERN const char *agt_approval_json(const agt_approval *req);

/**
 * Sets the user's reason (rejection reason, comment, or the chosen
 * ExitPlanMode option label), copied.
 *
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_approval_set_reason(agt_approval *req, const char *reason);

/**
 * Sets the rule stored by an AGT_DECISION_APPROVE_SESSION answer instead of
 * the suggested one, copied. Checked when the callback returns: a malformed
 * rule turns the answer into a one-time approval.
 *
 * @return AGT_OK, AGT_EINVALID (malformed rule), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_approval_set_rule(agt_approval *req, const char *rule);

/* ---- hooks ------------------------------------------------------------- */

/** A tool call seen by a pre- or post-tool-use hook. */
typedef struct agt_hook agt_hook;

/**
 * A hook. Pre-tool-use hooks run after approval, right before the provider;
 * they may agt_hook_deny(), agt_hook_rewrite() and agt_hook_add_context().
 * Post-tool-use hooks run after the provider and may agt_hook_append()
 * context to the result text.
 *
 * @param h the call; valid only during the callback.
 * @param payload the pointer given when the hook was set.
 * @return AGT_OK to apply what the hook decided. Any other value means the
 *         hook failed: its decision is ignored, the call goes on, and the
 *         result text ends with a note naming the failure. A hook that takes
 *         longer than the hook budget is treated the same way.
 */
typedef int (*agt_hook_fn)(agt_hook *h, void *payload);

/**
 * Sets (or with fn = NULL removes) the pre-tool-use hook.
 *
 * @return AGT_OK, AGT_EINVAL (s is NULL).
 */
AGT_EXTERN int agt_session_set_pre_hook(agt_session *s, agt_hook_fn fn, void *payload);

/**
 * Sets (or with fn = NULL removes) the post-tool-use hook.
 *
 * @return AGT_OK, AGT_EINVAL (s is NULL).
 */
AGT_EXTERN int agt_session_set_post_hook(agt_session *s, agt_hook_fn fn, void *payload);

/**
 * Sets the time budget of one hook invocation, in milliseconds (monotonic
 * clock; default 5000). A hook that returns later is ignored as failed.
 *
 * @param budget_ms 1 or more.
 * @return AGT_OK, AGT_EINVAL (s is NULL or budget_ms < 1).
 */
AGT_EXTERN int agt_session_set_hook_budget(agt_session *s, int64_t budget_ms);

/** The tool name of the hooked call, borrowed; never NULL. */
AGT_EXTERN const char *agt_hook_tool(const agt_hook *h);

/** The call id of the hooked call, borrowed; never NULL. */
AGT_EXTERN const char *agt_hook_call_id(const agt_hook *h);

/** The (validated) arguments as compact JSON text, borrowed; never NULL. */
AGT_EXTERN const char *agt_hook_args(const agt_hook *h);

/** Post-tool-use: the result text, borrowed; NULL in a pre-tool-use hook. */
AGT_EXTERN const char *agt_hook_result_text(const agt_hook *h);

/** Post-tool-use: 1 when the result is an error result; 0 otherwise. */
AGT_EXTERN int agt_hook_result_is_error(const agt_hook *h);

/**
 * Pre-tool-use: blocks the call. The model gets the error result "A
 * pre-tool-use hook blocked this <Tool> call: <reason>" (status AGT_EDENIED).
 *
 * @param reason NUL-terminated UTF-8, copied (NULL: no reason given).
 * @return AGT_OK, AGT_ESTATE (in a post-tool-use hook), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_hook_deny(agt_hook *h, const char *reason);

/**
 * Pre-tool-use: replaces the arguments with a JSON object. They are
 * validated against the tool's schema again and checked against deny rules
 * and plan mode; failing either gives an error result naming the problem.
 *
 * @param json NUL-terminated JSON text, copied after parsing.
 * @return AGT_OK, AGT_EPARSE (not JSON), AGT_EINVALID (not an object),
 *         AGT_ESTATE (in a post-tool-use hook), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_hook_rewrite(agt_hook *h, const char *json);

/**
 * Post-tool-use: appends context to the result text (after a blank line).
 * May be called more than once.
 *
 * @return AGT_OK, AGT_ESTATE (in a pre-tool-use hook), AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_hook_append(agt_hook *h, const char *text);

/**
 * Pre-tool-use: adds context for the model, such as guidance on how to use
 * the call's output. The text reaches the model with the call's result: it
 * is appended to the result text after a blank line, after the tool's own
 * output and before what a post-tool-use hook appends (the post hook's
 * agt_hook_result_text() does not contain it). It goes with whatever result
 * the call gets: the tool's, an error, or the refusal when this hook also
 * calls agt_hook_deny() or its rewrite is refused. It is dropped with the
 * rest of the hook's answer when the hook fails or overruns its budget. May
 * be called more than once (the texts are joined by newlines); invalid UTF-8
 * becomes U+FFFD. A call that stays suspended (a sub-agent waiting for
 * approval) keeps the context until it completes, across agent save and
 * restore.
 *
 * @param text NUL-terminated UTF-8, copied.
 * @return AGT_OK, AGT_ESTATE (in a post-tool-use hook: use agt_hook_append),
 *         AGT_EINVAL (h or text is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_hook_add_context(agt_hook *h, const char *text);

/* ---- plan mode --------------------------------------------------------- */

/**
 * Sets the plan file that EnterPlanMode hands to the model and that Write and
 * Edit may touch in plan mode. Default: $XDG_STATE_HOME/agenttools/plans/<id>.md
 * (else ~/.local/state/agenttools/plans/<id>.md; <root>/.agenttools/plans/
 * without a home), outside the workspace so it never shows in git status or
 * Glob, with a random 16-hex-digit id chosen when plan mode is first entered.
 *
 * @param path absolute, or relative to the workspace root; normalised
 *        lexically and stored absolute. Inside the root it is checked the
 *        way the file tools resolve paths: a path leading outside through a
 *        symbolic link is refused, and so is a plan file that is itself a
 *        symbolic link, a folder or a special file (outside the root too).
 * @return AGT_OK, AGT_EINVAL (NULL or empty path, a folder, a special file),
 *         AGT_EDENIED (a symbolic link), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_plan_file(agt_session *s, const char *path);

/** The absolute plan file path, borrowed; NULL until one is set or chosen. */
AGT_EXTERN const char *agt_session_plan_file(const agt_session *s);

/* ---- save and restore -------------------------------------------------- */

/**
 * Saves the session state as JSON ({"format":1,...}; see docs/session.md):
 * mode, the mode before plan mode, rules, session approvals, todo list, plan
 * file, and the sections other components add. Pending approvals are not
 * saved (a restored session has none; the host re-runs those calls).
 *
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_save(const agt_session *s, char **out_json);

/**
 * Restores a state saved by agt_session_save() of this or an older format
 * version. Unknown fields are ignored; a section the file lacks gets its
 * default (for example no rules, an empty todo list).
 * All or nothing: everything is parsed and checked before the session
 * changes, so on any error the session is unchanged. Pending approvals are
 * dropped.
 *
 * @param json len bytes of UTF-8 JSON.
 * @return AGT_OK; AGT_EPARSE (not JSON or truncated: the message gives line
 *         and column); AGT_EINVALID (a field has the wrong type or value, a
 *         rule is malformed: the message names the field);
 *         AGT_EUNSUPPORTED ("format" newer than this library reads);
 *         AGT_EINVAL; AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_restore(agt_session *s, const char *json, size_t len);

/* ---- background tasks, scheduled prompts and events -------------------- */

/**
 * A wall clock: milliseconds since 1970-01-01T00:00:00Z. payload is the
 * value given to agt_session_set_clock().
 */
typedef int64_t (*agt_clock_fn)(void *payload);

/**
 * Sets the clock the session reads "now" from when a tool needs it (CronCreate
 * computes the next fire time from it; CronList shows ages with it). Default:
 * the system's real-time clock. Tests and replaying hosts pass their own.
 *
 * @param fn the clock; NULL restores the real-time clock.
 * @param payload passed to fn; borrowed.
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_clock(agt_session *s, agt_clock_fn fn, void *payload);

/**
 * Tells the session whether the agent is idle (waiting for the user, no model
 * turn running). Scheduled prompts (cron fires) are delivered by
 * agt_session_tick() only while the session is idle; fires that fall due
 * while it is busy wait and are coalesced. Default: 0 (busy).
 *
 * @param idle 1 idle, 0 busy.
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_idle(agt_session *s, int idle);

/**
 * Does the session's background work without blocking: reads the output of
 * background tasks, applies their timeouts, reaps the ones that ended, and,
 * when the session is idle, delivers due cron fires. Returns the events
 * collected since the last call, oldest first, as a JSON array:
 *   {"type":"task_finished","task_id":"bash-1a2b3c4d","description":"...",
 *    "status":"completed|failed|timed_out|killed","exit_code":0 (or null),
 *    "signal":0,"reason":"..." (or null),"output_path":"...","preview":"...",
 *    "message":"text for the model"}
 *   {"type":"cron_fire","id":"0a1b2c3d","cron":"0 9 * * 1-5","prompt":"...",
 *    "recurring":true,"scheduled_at":"2026-11-30T09:00:00+01:00",
 *    "coalesced_count":1,"stale":false,"deleted":false,
 *    "message":"<cron-fire ...>prompt</cron-fire>"}
 * coalesced_count is the number of scheduled fires this one stands for (more
 * than 1 after the host did not tick, or was busy, for a while); a stale fire
 * is the last one of a recurring job older than 7 days, which is then
 * deleted, as is a one-shot job after its fire.
 *
 * @param now_ms wall-clock milliseconds since the epoch (the time cron fires
 *        are judged against); negative: read the session clock.
 * @param events_json receives the array ("[]" when nothing happened); free
 *        with agt_free().
 * @return AGT_OK, AGT_EINVAL (s or events_json is NULL), AGT_EIO (reading
 *         a task's output or waiting for it failed; that task is ended),
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_tick(agt_session *s, int64_t now_ms, char **events_json);

/**
 * The session's scheduled prompts (cron jobs, made by the model's CronCreate
 * calls or restored), for a host's own view: a UI list, a `/cron` command.
 * A JSON array in creation order:
 *   [{"id":"0a1b2c3d","cron":"0 9 * * 1-5","prompt":"...","recurring":true,
 *     "paused":false,"created":1764579600,"last_fire":null,"next_fire":1764579900}]
 * Times are unix seconds; next_fire is the next delivery time (jitter
 * included) and null while the job is paused; last_fire is null before the
 * first fire. No approval is involved: these calls are the host's, not the
 * model's.
 *
 * @param out_json receives the array; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (s or out_json is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_cron_list(agt_session *s, char **out_json);

/**
 * Deletes a cron job, as CronDelete does but without a model call and
 * without approval (the host acts for the user).
 *
 * @param id the job's id as agt_session_cron_list() gives it (case ignored).
 * @return AGT_OK, AGT_EINVAL (s or id is NULL), AGT_ENOTFOUND (no such job).
 */
AGT_EXTERN int agt_session_cron_delete(agt_session *s, const char *id);

/**
 * Pauses (paused != 0) or resumes (0) a cron job. A paused job never fires;
 * CronList shows it as paused to the model; the pause is kept by
 * agt_session_save(). On resume the fires that fell due while it was paused
 * are dropped, not delivered at once: the next fire is the first one after
 * the session clock's now. Pausing a paused job, or resuming a running one,
 * changes nothing.
 *
 * @return AGT_OK, AGT_EINVAL (s or id is NULL), AGT_ENOTFOUND (no such job,
 *         or on resume a job whose expression never fires again).
 */
AGT_EXTERN int agt_session_cron_set_paused(agt_session *s, const char *id, int paused);

/**
 * For a host event loop: the file descriptors to poll for readability
 * (POLLIN) so that agt_session_tick() is called when a background task has
 * output or has ended.
 *
 * @param fds the caller's array of cap ints; may be NULL when cap is 0.
 * @param cap entries in fds.
 * @param n_out receives how many descriptors there are (may exceed cap: call
 *        again with a larger array).
 * @return AGT_OK, AGT_EINVAL (s or n_out is NULL, or fds NULL with cap > 0).
 */
AGT_EXTERN int agt_session_poll_fds(agt_session *s, int *fds, size_t cap, size_t *n_out);

/**
 * For a host event loop: when agt_session_tick() must run next even if no
 * descriptor becomes readable (a task's timeout or kill grace period, the
 * next cron fire).
 *
 * @param now_ms the host's wall-clock now, milliseconds since the epoch
 *        (negative: the session clock).
 * @param out_ms receives the deadline on the same clock as now_ms
 *        (milliseconds since the epoch; may be <= now_ms: tick at once), or
 *        -1 when nothing is pending. Cron fires count only while idle.
 * @return AGT_OK, AGT_EINVAL (s or out_ms is NULL).
 */
AGT_EXTERN int agt_session_next_deadline(agt_session *s, int64_t now_ms, int64_t *out_ms);

/**
 * Sets the directory for background task logs (created with mode 0700 when
 * missing). Default: $TMPDIR (or /tmp)/agenttools-<uid>/<random session
 * token>. Must be set before the first Bash call.
 *
 * @param dir an absolute path; copied.
 * @return AGT_OK, AGT_EINVAL (NULL, empty or relative path), AGT_ESTATE (a
 *         command already ran), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_task_log_dir(agt_session *s, const char *dir);

/**
 * Sets how many background tasks may run at the same time (default 16); a
 * Bash call with run_in_background beyond it gets an error result. Must be
 * set before the first Bash call.
 *
 * @param max 1 to 4096.
 * @return AGT_OK, AGT_EINVAL (s NULL or max out of range), AGT_ESTATE (a
 *         command already ran), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_max_tasks(agt_session *s, int max);

/**
 * Chooses what happens to a foreground Bash command that runs past its
 * timeout: 0 (default) terminate it (TERM to its process group, 5 s grace,
 * KILL); 1 move it to the background, where it keeps running as a task
 * (limit 600 s from its start) and the result gives its task id.
 *
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_background_on_timeout(agt_session *s, int on);

/**
 * A tool call's live output (see agt_session_set_tool_output_callback()).
 *
 * @param call_id, tool the call, as given to agt_session_dispatch();
 *        borrowed for the call.
 * @param data, len a piece of output, or NULL and 0 for a heartbeat.
 * @param payload the pointer given with fn.
 * @return 0 to go on; non-zero interrupts the call.
 */
typedef int (*agt_tool_output_fn)(const char *call_id, const char *tool, const char *data,
                                  size_t len, void *payload);

/**
 * Live output of a running tool call, and the host's way to interrupt it.
 *
 * While a foreground Bash command of the session runs (not one started with
 * run_in_background), fn is called on the thread that dispatches the call:
 * with each piece of output as the command writes it (len > 0: raw bytes of
 * its merged stdout and stderr, as they reach the log; a UTF-8 sequence may
 * be split between two calls), and with data NULL, len 0 about every 100 ms
 * of the run in between (a heartbeat, for a spinner or to look at an
 * interrupt flag). A foreground command run through the task manager
 * (agt_session_set_background_on_timeout()) gets its output the same way,
 * read from its log.
 *
 * Returning non-zero interrupts the call: the command's process group gets
 * SIGTERM, then SIGKILL when it has not ended after the grace period (5
 * seconds); every process it started ends with it. The call's result is then
 * an error (status AGT_OK) whose text is the output so far followed by
 * "Command was interrupted by the user: ..." and whose JSON has
 * "status":"interrupted". fn is not called again for that call.
 *
 * The callback belongs to this session: sub-agents' sessions do not inherit
 * it. fn must not call back into the session.
 *
 * @param fn the callback; NULL removes it.
 * @param payload passed to fn.
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_tool_output_callback(agt_session *s, agt_tool_output_fn fn,
                                                    void *payload);

/* ---- workspace file tools (Read, Write, Edit, Glob, Grep, ReadMediaFile) */

/**
 * Admits a directory outside the workspace root for the file tools: a path
 * that resolves (symbolic links followed) to this directory or below it is
 * accepted instead of refused, and shown to the model as an absolute path.
 * Sensitive files stay refused. Approval rules still apply. Adding the same
 * directory twice is a no-op.
 *
 * @param dir an absolute path of an existing directory; its symbolic links
 *        are resolved now, and the resolved path is stored.
 * @return AGT_OK, AGT_EINVAL (s or dir NULL, dir relative), AGT_ENOTFOUND
 *         (dir is not an existing directory), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_add_allowed_dir(agt_session *s, const char *dir);

/**
 * Adds a pattern to the session's list of sensitive files: files the file
 * and review tools never read, write, list, search or show in a diff (see
 * docs/sensitive-files.md for the built-in list). Syntax: git wildmatch,
 * case-insensitive; a pattern without '/' matches a file name at any depth
 * ("*.secret"), one with '/' the last components of the path
 * ("deploy/prod/secrets.yml"; "**" spans folders). A pattern starting with '!' is an
 * exception: the files it matches are not sensitive by name, and a private
 * key in their content does not make them sensitive either (use it for key
 * fixtures of a test suite: "!tests/fixtures/server.pem"). Adding a pattern the
 * list already has is a no-op. Takes effect for the next tool call; do not
 * call it while a call of this session runs.
 *
 * @param pattern copied.
 * @return AGT_OK, AGT_EINVAL (s or pattern NULL, empty pattern, a leading
 *         or trailing '/', a malformed bracket expression), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_add_sensitive_pattern(agt_session *s, const char *pattern);

/**
 * Removes a pattern from the session's list of sensitive files: a built-in
 * one by its exact text as agt_session_sensitive_patterns() lists it
 * ("*.pem", "!*.pub", ...), or one the host added (letter case ignored).
 * Removing a built-in exception makes those files sensitive again.
 *
 * @return AGT_OK, AGT_EINVAL (NULL argument), AGT_ENOTFOUND (no such
 *         pattern in the list), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_remove_sensitive_pattern(agt_session *s, const char *pattern);

/**
 * The session's sensitive-file patterns in the order they are checked, as a
 * JSON array of strings (the built-in ones first, then those added).
 *
 * @param s the session, or NULL for the built-in list.
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (out_json NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_sensitive_patterns(const agt_session *s, char **out_json);

/**
 * Applies the session's sensitive-file policy to a path, and to content
 * when given: what the tools refuse, for a host that shows files itself
 * (a review front end deciding which diffs to send a model). When the
 * session has a change set under review (agt_session_open_review,
 * agt_session_set_changes), a path of it is also sensitive as another name
 * of a sensitive file, as the review tools judge it: either name of a
 * rename or copy with a sensitive side, an added or deleted file holding
 * most of a sensitive file (moved or copied), a hard link in the working
 * tree to a sensitive file there (docs/sensitive-files.md, "Other names").
 *
 * @param s the session, or NULL for the built-in policy.
 * @param path a file path, relative or absolute ('/'-separated).
 * @param content the file's bytes or its diff, or NULL: with content, a
 *        private key block in it ("-----BEGIN ... PRIVATE KEY-----") makes
 *        the file sensitive unless a host exception names the path.
 * @param len bytes of content.
 * @param reason receives a static phrase such as "environment file (.env)"
 *        when sensitive, else NULL (may be NULL); valid until the session's
 *        list changes or it is freed.
 * @return 1 sensitive, 0 not, AGT_EINVAL (path NULL, or content NULL with
 *         len > 0).
 */
AGT_EXTERN int agt_session_check_sensitive(const agt_session *s, const char *path,
                                           const char *content, size_t len, const char **reason);

/**
 * Lets FetchURL connect to loopback (127.0.0.0/8, ::1), link-local
 * (169.254.0.0/16 with the cloud metadata address, fe80::/10), private
 * (10/8, 172.16/12, 192.168/16, fc00::/7), shared (100.64/10) and
 * unspecified (0.0.0.0, ::) addresses, also in their IPv4-mapped IPv6
 * forms. Refused by default: the address is checked after DNS resolution,
 * for every connection and every redirect, so a name that resolves to such
 * an address is refused too.
 *
 * @param allow 1 to allow, 0 (the default) to refuse.
 * @return AGT_OK, AGT_EINVAL (s NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_fetch_private(agt_session *s, int allow);

/** Limits of the file tools, for agt_session_set_file_limit(). */
enum agt_file_limit {
    /** Read: lines per call (default 1000, max 1,000,000) */
    AGT_FILE_LIMIT_READ_LINES = 1,
    /** Read: bytes of line text per call (default 102400, max 2^30) */
    AGT_FILE_LIMIT_READ_BYTES = 2,
    /** Read: characters kept of a line (default 2000, max 1,000,000) */
    AGT_FILE_LIMIT_LINE_CHARS = 3,
    /** Glob: paths listed (default 100, max 1,000,000) */
    AGT_FILE_LIMIT_GLOB_RESULTS = 4,
    /** Grep: head_limit when the call gives none (default 250, max 1,000,000) */
    AGT_FILE_LIMIT_GREP_HEAD = 5,
    /** ReadMediaFile: largest file in bytes (default 100 MiB, max 2^32) */
    AGT_FILE_LIMIT_MEDIA_BYTES = 6
};

/**
 * Overrides one default limit of the file tools for this session (TOOLS.md:
 * every limit is a default the host can change). A Read call's n_lines still
 * caps its own window: READ_LINES raises the default and the ceiling of the
 * window, not the schema's maximum of n_lines.
 *
 * @param which an AGT_FILE_LIMIT_* value.
 * @param value the new limit (lines, bytes or characters as listed), 1 up
 *        to the listed maximum; 0 restores the default.
 * @return AGT_OK, AGT_EINVAL (s NULL, unknown which, value out of range),
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_file_limit(agt_session *s, int which, int64_t value);

/** What Write and Edit do to a file with more than one name (hard links),
 * for agt_session_set_hardlink_writes(). */
enum agt_hardlink_writes {
    /** Replace it (default): the written name becomes a new file, the other
     * names, which may lie outside the workspace, keep the old content; the
     * result says the link was broken. */
    AGT_HARDLINKS_BREAK = 0,
    /** Rewrite it in place, so every name shows the new content: a flushed
     * undo copy first, the old content put back when the rewrite fails;
     * a process killed midway leaves that undo copy next to the file, and
     * the next write of the file refuses to write it while it may be torn
     * (the message names the copy; see docs/internals/fs.md). */
    AGT_HARDLINKS_IN_PLACE = 1
};

/**
 * Chooses what Write and Edit do to a file with several names (hard links).
 *
 * @param mode an AGT_HARDLINKS_* value.
 * @return AGT_OK, AGT_EINVAL (s NULL, unknown mode), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_hardlink_writes(agt_session *s, int mode);

/** Flags of agt_session_set_edit_options(). */
enum agt_edit_options {
    /** Strict matching: Edit, MultiEdit and apply_patch accept only text
     * found byte for byte (a CRLF file still takes "\n" for its line
     * breaks), never the matching ladder (line endings, trailing white
     * space, indentation, Unicode look-alikes). */
    AGT_EDIT_STRICT = 1,
    /** No staleness check: Edit, MultiEdit, NotebookEdit and Write change a
     * file even when it changed on disk since the session last read it.
     * By default they refuse, naming the changed lines, until the file is
     * read again. */
    AGT_EDIT_NO_STALE_CHECK = 2,
    /** Edit, MultiEdit, NotebookEdit and Write (overwrite) refuse to change
     * an existing file that was not read in this session (a partial Read
     * counts). By default a file never read can be changed. */
    AGT_EDIT_REQUIRE_READ = 4
};

/**
 * Sets how the editing tools match the text they replace and whether they
 * check that a file is as the session last read it.
 *
 * The session keeps, for each file Read showed or an edit tool wrote, a
 * hash of its whole content (XXH3-64) and of each line; a file is "changed
 * on disk" when its content hash differs (size and time stamps are not
 * trusted). That record is part of agt_session_save() (without the line
 * hashes, so a restored session names no changed lines).
 *
 * @param flags a combination of AGT_EDIT_* flags; 0 (the default) lets
 *        Edit fall back to the matching ladder when the exact text is not
 *        found, one level at a time, and only for a single place, and
 *        refuses changes to a file that changed since it was read.
 * @return AGT_OK, AGT_EINVAL (s NULL, an unknown flag), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_edit_options(agt_session *s, unsigned int flags);

/* ---- code review (the review set's state) ------------------------------ */

/**
 * Opens the change set to review and makes the session own it (see git.h for
 * the modes and revisions). The review tools (file_read, file_read_diff,
 * file_find, code_search, code_comment) work on it; a change set set earlier
 * is released (or, when borrowed, forgotten). Stored comments stay; the
 * task_done flag is cleared. Without any change set, the review tools open
 * AGT_CHANGES_WORKSPACE at the workspace root on their first call.
 *
 * @param repo_path a directory inside the repository; NULL means the
 *        workspace root.
 * @param mode AGT_CHANGES_WORKSPACE, AGT_CHANGES_RANGE or AGT_CHANGES_COMMIT.
 * @param from, to revisions, as agt_changes_open() takes them.
 * @return AGT_OK, or the codes of agt_changes_open() (AGT_EINVAL,
 *         AGT_ENOTFOUND, AGT_EGIT, AGT_ELIMIT, AGT_ENOMEM); on failure the
 *         session keeps its previous change set.
 */
AGT_EXTERN int agt_session_open_review(agt_session *s, const char *repo_path, int mode,
                                       const char *from, const char *to);

/**
 * Sets a change set the caller opened (agt_changes_open()) as the one under
 * review. Borrowed: the caller keeps ownership and must keep it alive until
 * it is replaced, detached (c = NULL) or the session is freed. A relocator
 * set with agt_session_set_relocator() is installed on its diff. Stored
 * comments stay; the task_done flag is cleared.
 *
 * @param c the change set, or NULL to detach the current one.
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_changes(agt_session *s, agt_changes *c);

/**
 * The change set under review, borrowed (owned by the session after
 * agt_session_open_review() or by the caller after agt_session_set_changes());
 * NULL when none is set yet.
 */
AGT_EXTERN agt_changes *agt_session_changes(const agt_session *s);

/**
 * Sets the host relocation callback that code_comment's anchoring uses for a
 * snippet found nowhere (anchoring stage 5, see diff.h): it is forwarded
 * with agt_diff_set_relocator() to the diff of the change set under review,
 * now and whenever another change set is set or opened. Without one, such a
 * comment is stored unanchored (line 0).
 *
 * @param fn the callback, or NULL to remove it.
 * @param max_attempts callback calls per comment, 1..10 (ignored when fn is
 *        NULL).
 * @param payload passed back to fn; borrowed.
 * @return AGT_OK, AGT_EINVAL (s is NULL, max_attempts out of range), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_relocator(agt_session *s, agt_diff_relocate_fn fn, int max_attempts,
                                         void *payload);

/**
 * Sets the file currently under review: code_comment uses it as the path of
 * comments that name none. Also starts the review of that file: the
 * task_done flag is cleared.
 *
 * @param path repository-relative path (copied), or NULL to clear it.
 * @return AGT_OK, AGT_EINVAL (s is NULL, path is ""), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_review_file(agt_session *s, const char *path);

/** The file under review, borrowed; NULL when none is set. */
AGT_EXTERN const char *agt_session_review_file(const agt_session *s);

/**
 * Sets the model's reasoning ("thinking") of the current turn. code_comment
 * stores it on each comment of that turn whose call carries no "thinking" of
 * its own. Set it (or clear it) at the start of every model turn.
 *
 * @param text UTF-8, copied; NULL or "" clears it.
 * @return AGT_OK, AGT_EINVAL (s is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_set_turn_thinking(agt_session *s, const char *text);

/**
 * Whether task_done was called since the review (or the file under review)
 * was last set: the host's review loop stops when this is 1.
 *
 * @return 1 done, 0 not (also when s is NULL).
 */
AGT_EXTERN int agt_session_review_done(const agt_session *s);

/**
 * The state task_done reported: "DONE" or "FAILED"; NULL while
 * agt_session_review_done() is 0. Static string.
 */
AGT_EXTERN const char *agt_session_review_state(const agt_session *s);

/**
 * The comments code_comment stored, oldest first, as a JSON array of
 * {"path","start_line","end_line","side":"new|old","content","existing_code",
 *  "suggestion_code","category","severity","thinking","method":
 *  "hunk_new|hunk_old|file|moved|unanchored","ambiguous","candidates":
 *  [[start,end],...],"requested_path","relocated","reason"}.
 * Line numbers are 1-based and inclusive, new-file lines for side "new" and
 * old-file lines for side "old"; 0 means unanchored (or ambiguous: the
 * candidates say where the snippet matched). Optional fields the model did
 * not send are null; "reason" is null unless unanchored.
 *
 * @param out_json receives the JSON text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL (s or out_json is NULL), AGT_ENOMEM.
 */
AGT_EXTERN int agt_session_comments(const agt_session *s, char **out_json);

/**
 * Removes every stored comment (for example after the host posted them).
 *
 * @return AGT_OK, AGT_EINVAL (s is NULL).
 */
AGT_EXTERN int agt_session_clear_comments(agt_session *s);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_SESSION_H */
