/*
 * libagenttools — agent loop: a conversation driven over a session and a model.
 *
 * agt_agent_run() repeats: background events from agt_session_tick() are added
 * to the conversation as notifications; the model is called with the
 * conversation and the session's offered tools (agt_registry_export "openai",
 * the session's phase); each tool call of its answer goes through
 * agt_session_dispatch() (schema, approval, hooks); the results are appended
 * as {"role":"tool","tool_call_id":...} messages; and the next call follows.
 * It stops when the model answers without tool calls, after a `task_done`
 * call, at the turn or token budget, when the host cancels, or when a call
 * waits for approval (then the host answers with agt_agent_answer() and
 * continues with agt_agent_resume()).
 *
 * Tool calls of one turn are dispatched in the model's order. A run of two
 * or more consecutive calls to parallel-safe tools (the built-in Read, Glob,
 * Grep, ReadMediaFile and FetchURL providers) has its providers run
 * concurrently, on up to agt_agent_set_parallel_tools() threads; every other
 * call runs alone and is a barrier between runs. Approval, hooks, events and
 * results stay on the host's thread and in call order (see
 * agt_agent_set_parallel_tools()).
 *
 * The conversation uses the canonical message shape of model.h. A
 * notification is a user message whose content starts with
 * "<system-notification>" and ends with "</system-notification>".
 *
 * Context size: with a window set (agt_agent_set_context_window()), the
 * conversation size is estimated before each model call as the server's last
 * prompt + completion token count plus bytes/4 of what was added since (or
 * bytes/4 of the whole conversation when the server gave no count). Above the
 * threshold, the contents of the oldest tool results (never those of the
 * latest turn) are replaced with "[output of <tool> compacted: N bytes]" until
 * the estimate is under it.
 *
 * Threads: an agent is used by one thread at a time, except
 * agt_agent_cancel(), which may be called from any thread.
 */
#ifndef AGENTTOOLS_AGENT_H
#define AGENTTOOLS_AGENT_H

#include "common.h"
#include "model.h"
#include "session.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An agent loop. */
typedef struct agt_agent agt_agent;

/** Kinds of events for the host. Append-only. */
enum agt_agent_event_kind {
    AGT_AGENT_TEXT = 0,         /**< a piece of assistant text (raw UTF-8) */
    AGT_AGENT_THINKING = 1,     /**< a piece of reasoning (raw UTF-8) */
    AGT_AGENT_TOOL_STARTED = 2, /**< {"id","name","arguments"} */
    AGT_AGENT_TOOL_FINISHED =
        3, /**< {"id","name","is_error":bool,"bytes":N,"preview":"first 200 bytes"} */
    AGT_AGENT_APPROVAL = 4, /**< {"id","name","arguments"}: the call waits for approval; a
                               sub-agent's call has "id":"agent-N/<call id>" and
                               "agent_id":"agent-N" (see agt_agent_enable_subagents()) */
    AGT_AGENT_USAGE =
        5, /**< {"turn":N,"prompt_tokens","completion_tokens","total_tokens","tokens_used"} */
    AGT_AGENT_NOTIFICATION =
        6,                  /**< an agt_session_tick() event object, as added to the conversation */
    AGT_AGENT_COMPACTED = 7 /**< {"id","name","bytes":N}: a tool output was compacted */
};

/** Why the last run stopped. Append-only. */
enum agt_agent_stop {
    AGT_AGENT_STOP_NONE = 0,       /**< not run yet */
    AGT_AGENT_STOP_DONE = 1,       /**< the model answered without tool calls */
    AGT_AGENT_STOP_TASK_DONE = 2,  /**< the model called task_done */
    AGT_AGENT_STOP_MAX_TURNS = 3,  /**< the turn budget was used up */
    AGT_AGENT_STOP_MAX_TOKENS = 4, /**< the token budget was used up */
    AGT_AGENT_STOP_CANCELLED = 5,  /**< the host cancelled */
    AGT_AGENT_STOP_APPROVAL = 6,   /**< paused: tool calls wait for approval */
    AGT_AGENT_STOP_ERROR = 7       /**< the model call failed (see the run's return code) */
};

/**
 * Event callback.
 *
 * @param kind an AGT_AGENT_* event kind.
 * @param data the event (raw text for TEXT and THINKING, a JSON object for
 *        the others), len bytes, not NUL-terminated for TEXT and THINKING;
 *        borrowed for the call.
 * @param payload the pointer given to agt_agent_set_event_callback().
 * @return 0 to go on; non-zero cancels the run (AGT_ECANCELLED).
 */
typedef int (*agt_agent_event_fn)(int kind, const char *data, size_t len, void *payload);

/**
 * Creates an agent over a session and a model, both borrowed: they must
 * outlive the agent. The agent sets no callback on the model (it passes its
 * own stream sink per request).
 *
 * Defaults: no system prompt, 50 turns, no token budget, no context window.
 *
 * @param out receives the agent; free with agt_agent_free().
 * @return AGT_OK, AGT_EINVAL (a NULL argument), AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_new(agt_agent **out, agt_session *session, agt_model *model);

/** Frees an agent; NULL is a no-op. The session and model are not freed. */
AGT_EXTERN void agt_agent_free(agt_agent *a);

/**
 * Sets the system prompt: the first message of the conversation (replaced
 * when there is one already; NULL removes it).
 *
 * @return AGT_OK, AGT_EINVAL (a NULL agent), AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_set_system_prompt(agt_agent *a, const char *text);

/**
 * Appends a user message (UTF-8; invalid sequences are replaced with U+FFFD).
 *
 * @return AGT_OK; AGT_EINVAL (NULL argument); AGT_ESTATE (the run is paused
 *         on approvals: answer them and resume first); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_add_user_message(agt_agent *a, const char *text);

/**
 * Sets (fn = NULL clears) the event callback.
 *
 * @return AGT_OK, AGT_EINVAL (a NULL agent).
 */
AGT_EXTERN int agt_agent_set_event_callback(agt_agent *a, agt_agent_event_fn fn, void *payload);

/**
 * Sets the turn budget: the most model calls one agt_agent_run() (with its
 * resumes) may make; 0 = no limit.
 *
 * @return AGT_OK, AGT_EINVAL (NULL agent or negative).
 */
AGT_EXTERN int agt_agent_set_max_turns(agt_agent *a, int max_turns);

/**
 * Sets the token budget: the run stops before a model call once the tokens
 * used by the agent (sum of the servers' total_tokens, or bytes/4 estimates)
 * reach it; 0 = no limit.
 *
 * @return AGT_OK, AGT_EINVAL (NULL agent or negative).
 */
AGT_EXTERN int agt_agent_set_token_budget(agt_agent *a, int64_t tokens);

/**
 * Sets the model's context window in tokens (0 = unknown: no compaction) and
 * the compaction threshold in percent of it (1..100; 80 is a good value).
 *
 * @return AGT_OK, AGT_EINVAL (NULL agent, negative window, percent out of range).
 */
AGT_EXTERN int agt_agent_set_context_window(agt_agent *a, int64_t tokens, int percent);

/**
 * Runs the loop until it stops (see the top of this header).
 *
 * @return AGT_OK (stop reason DONE or TASK_DONE); AGT_EPENDING (paused for
 *         approval: agt_session_pending() of the agent's session lists the
 *         calls, its sub-agents' too; answer each with agt_agent_answer(),
 *         then call agt_agent_resume()); AGT_ELIMIT (turn
 *         or token budget; the conversation is kept, run again to go on);
 *         AGT_ECANCELLED; AGT_ESTATE (paused on approvals, or nothing to
 *         answer: the conversation has no user message); a model error
 *         (AGT_ENET, AGT_ETIMEOUT, AGT_EPARSE, ...: the conversation is kept as
 *         before the call, so running again retries it); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_run(agt_agent *a);

/**
 * Answers the approval of a tool call the paused run waits for, through
 * agt_session_answer() (approving runs the call now), and keeps its result
 * for the conversation.
 *
 * @param call_id the call's id: the agent's own call as the model named it,
 *        or a sub-agent's call as "agent-N/<call id>" (the "call_id" of
 *        agt_session_pending() and the "id" of the AGT_AGENT_APPROVAL event).
 *        An approved Agent or AgentSwarm call whose sub-agents pause at
 *        once adds their calls to the pause (events, pending list).
 * @param decision an AGT_DECISION_* value. APPROVE_SESSION on a sub-agent's
 *        call stores its suggested rule (and its folder outside the
 *        workspace) as with a synchronous approver (see
 *        "Approvals" at agt_agent_enable_subagents()): in the root session
 *        and the existing sub-agents that do not run in the background.
 * @param reason optional text given to the model with a rejection.
 * @return AGT_OK; AGT_ENOTFOUND (no waiting call with that id); AGT_EINVAL;
 *         the codes of agt_session_answer(); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_answer(agt_agent *a, const char *call_id, int decision,
                                const char *reason);

/**
 * Continues a run paused for approval once every waiting call was answered:
 * paused sub-agents continue their loops first (see
 * agt_agent_enable_subagents()), then the agent's turn goes on.
 *
 * @return as agt_agent_run(); AGT_EPENDING also when answering made new
 *         calls wait (an approved Agent call whose sub-agent paused at once:
 *         answer those, then resume again); AGT_ESTATE when the run is not
 *         paused or a call the last AGT_EPENDING return showed still waits
 *         (the message names it).
 */
AGT_EXTERN int agt_agent_resume(agt_agent *a);

/**
 * The message of the last agt_agent_run() or agt_agent_resume() on a that
 * failed, kept with a whatever thread made the call (see
 * agt_session_error_message()). "" when the last of them succeeded; never
 * NULL. Valid until the next of those calls on a or agt_agent_free().
 */
AGT_EXTERN const char *agt_agent_error_message(const agt_agent *a);

/**
 * Asks a running loop (from any thread) to stop; it returns AGT_ECANCELLED.
 * A run paused for approval is not running: the pause stays (answer and
 * resume, or free the agent, which frees the paused sub-agents too).
 */
AGT_EXTERN void agt_agent_cancel(agt_agent *a);

/** Why the last run stopped: an AGT_AGENT_STOP_* value (NONE for NULL). */
AGT_EXTERN int agt_agent_stop_reason(const agt_agent *a);

/** The model calls made so far (all runs), 0 for NULL. */
AGT_EXTERN int agt_agent_turns(const agt_agent *a);

/** The tokens used so far (all runs; see agt_agent_set_token_budget()), 0 for NULL. */
AGT_EXTERN int64_t agt_agent_tokens_used(const agt_agent *a);

/** The text of the last assistant message, borrowed; "" when none. */
AGT_EXTERN const char *agt_agent_text(const agt_agent *a);

/**
 * The conversation as a JSON array of canonical messages.
 *
 * @param out_json receives the text; free with agt_free().
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_messages(const agt_agent *a, char **out_json);

/**
 * Saves the agent's state: {"version":1,"messages":[...],"turns":N,
 * "tokens_used":N,"stop":N,"waiting":[{"id","name","arguments","answered",
 * "text","is_error"}],"subs":[...],"tasks":[...]} ("waiting": the calls of
 * a run paused for approval; a call suspended on sub-agents has
 * "suspended":{"swarm","subs":["agent-N",...],"description","note",
 * "parallel","session_arguments","session_note"}). "subs" (when there are
 * sub-agents) holds each sub-agent in id order: {"id","parent","item",
 * "rc","turns_before","on_host","agent":<this same state shape, without
 * "subs" and "tasks">,"session":<agt_session_save() of its session>}, so a
 * pause on a sub-agent's approval (any level) continues after a restore in
 * a new process, and finished sub-agents can be resumed; a sub-agent that
 * runs in the background (or waits there for approval) now is saved as
 * {"id","parent","item","lost":true}, its task in "tasks":[{"id","kind",
 * "description"}]. Save the session too (agt_session_save()): its rules,
 * mode and todo list.
 *
 * @return AGT_OK, AGT_EINVAL, AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_save(const agt_agent *a, char **out_json);

/**
 * Restores a state written by agt_agent_save(), replacing the conversation
 * and the sub-agents (background ones are stopped first). All or nothing:
 * on any error the agent is unchanged. The waiting calls are parked for
 * approval again in their sessions (agt_session_restore() keeps no pending
 * approvals), so agt_session_pending() lists them and agt_agent_answer()
 * and agt_agent_resume() go on. Background tasks saved while they ran are
 * "lost": TaskList shows them with that status, agt_session_tick() gives
 * one task_finished event with "status":"lost", and resuming such a
 * sub-agent is refused with the reason. The sub-agents use the agent's
 * model and registry.
 *
 * @return AGT_OK; AGT_EPARSE (not JSON, a field has the wrong type or an
 *         impossible value, a sub-agent's session does not restore, a
 *         suspended call names a sub-agent that is missing or already
 *         claimed, a waiting call could not wait again: the message names
 *         it); AGT_EINVAL (NULL argument, or a sub-agent's own agent);
 *         AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_restore(agt_agent *a, const char *json, size_t len);

/**
 * Offers the Agent tool backed by sub-agents of this agent: sets the "Agent"
 * provider of the session's registry (so call it before agt_registry_freeze();
 * the registry then serves this agent's sub-agents only). A sub-agent gets
 * its own session over the same registry and workspace root, with the
 * parent session's mode and rules, its own conversation (the parent's system
 * prompt plus a sub-agent note) and todo list, the parent's model, turn budget
 * and context window; it runs to its end inside the tool call, and its final
 * text is the tool result, after a line "Sub-agent agent-N (description)
 * finished after K model calls. Resume it with resume: "agent-N".".
 * `resume` continues a finished sub-agent with a new prompt. Nesting is
 * limited to 2 levels. Sub-agents live until the agent is freed.
 *
 * Approvals: sub-agents share the agent's approval channel, so a host that
 * handles the root agent's approvals handles theirs the same way:
 * - a sub-agent approver (agt_agent_set_subagent_approver()) takes
 *   precedence over what follows;
 * - with a synchronous approver on the agent's session
 *   (agt_session_set_approver()), a foreground sub-agent's call that needs
 *   approval is asked through that approver, on the thread that runs
 *   agt_agent_run()/agt_agent_resume(); agt_approval_json() then has an
 *   "agent_id":"agent-N" member (the root agent's own requests have none)
 *   and "call_id" is the sub-agent's own id for the call. APPROVE_SESSION
 *   stores the rule in the root session (so later sub-agents, which copy its
 *   rules, get it) and in every existing sub-agent that does not run in the
 *   background; so does the folder outside the workspace that the request
 *   asked to admit ("outside"): sub-agents start with the folders of the
 *   session that starts them. The approver is never called from a swarm worker or a
 *   background thread: for an AgentSwarm, the sub-agents that hit an
 *   approval pause, the others go on, and when the round is over the swarm
 *   asks the approver here about each waiting call and resumes those
 *   sub-agents (concurrently as before), until none waits;
 * - without an approver (the pause model), a sub-agent that hits an
 *   approval pauses, its parent's Agent (or AgentSwarm, once its round is
 *   over) call is suspended without a result, and agt_agent_run() returns
 *   AGT_EPENDING with stop reason APPROVAL. The waiting call is listed by
 *   agt_session_pending() of the agent's session with "call_id":
 *   "agent-N/<call id>" (models reuse ids such as call_0 across
 *   conversations) plus "agent_id", and given in an AGT_AGENT_APPROVAL
 *   event with the same "id" and "agent_id". agt_agent_answer() takes that
 *   id; agt_agent_resume() continues the sub-agents' loops; when they end,
 *   the suspended call gets its report as its result (through the session's
 *   post-tool-use hook, as any call) and the agent goes on. A sub-agent
 *   that pauses again makes agt_agent_resume() return AGT_EPENDING again.
 *   Sub-agents of sub-agents (level 2) work the same way through both
 *   levels. Answer such calls with agt_agent_answer(), not
 *   agt_session_answer() (the id belongs to the sub-agent's session);
 * - a background sub-agent or swarm (run_in_background) whose sub-agents
 *   hit an approval waits (its thread sleeps; no approver is called from
 *   it): TaskList/TaskOutput show the status "waiting for approval"
 *   (TaskOutput with block returns at once then), agt_session_pending()
 *   lists its waiting calls, and agt_session_tick() hands out once a
 *   {"type":"approval_needed","kind":"agent" or "swarm","task_id",
 *   "description","calls":[agt_session_pending() items],"message"} event,
 *   with the poll descriptor readable. agt_agent_answer() (any time, the
 *   agent need not be paused) answers a call; when the last one is
 *   answered the task goes on by itself on its thread. The agent loop turns
 *   the event into a notification like task_finished; with an approver on
 *   the session, the loop (on the host's thread) first asks it about each
 *   call and answers them, and the notification says so. A host that calls
 *   agt_session_tick() itself answers with agt_agent_answer(). TaskStop on
 *   a waiting task declines its calls and stops it ("killed"); the
 *   sub-agent can be resumed later with a new prompt;
 * - when the host dispatches Agent or AgentSwarm itself
 *   (agt_session_dispatch() outside agt_agent_run()) there is no loop to
 *   pause: the sub-agents' calls that need approval are declined with a
 *   reason and they go on.
 *
 * run_in_background (Agent and AgentSwarm), for calls of this agent (not of
 * a sub-agent) with a frozen registry and an HTTP model (otherwise the call
 * runs in the foreground and its result says why): the call returns at once
 * with a task id — the sub-agent's id "agent-N" (resume takes it later) or
 * "swarm-N" for a swarm — and the sub-agents run on their own thread. The
 * session's TaskList, TaskOutput (transcript so far, then the report) and
 * TaskStop (cancels the sub-agents) see them; when one ends,
 * agt_session_tick() returns a {"type":"task_finished","kind":"agent" or
 * "swarm","task_id","description","status","preview","message"} event (the
 * agent loop turns it into a notification), and agt_session_poll_fds()
 * includes a descriptor that becomes readable then. agt_agent_cancel() does
 * not stop background sub-agents; agt_agent_free() stops them and waits.
 * Free the agent before its session.
 *
 * Also sets the AgentSwarm provider: one new sub-agent per item (prompt =
 * prompt_template with {{item}} replaced) plus the resumed resume_agent_ids,
 * run as agt_agent_set_swarm_concurrency() says (a ramp, by default
 * without a cap) — concurrently only
 * when the registry is frozen (sessions then share it read-only) and the
 * model is an HTTP model (each worker gets its own copy of it); otherwise
 * one after the other, which the report says. The result is one report with
 * a "## agent-N — item: finished after K model calls" section per sub-agent.
 *
 * @return AGT_OK; AGT_EINVAL (a NULL agent); AGT_EFROZEN (the registry is
 *         frozen); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_enable_subagents(agt_agent *a);

/**
 * Adds a sub-agent profile, or replaces the one of that name: what the
 * subagent_type argument of Agent and AgentSwarm chooses. Built in (before
 * any call): "coder" (every tool of the session; the default when
 * subagent_type is omitted), "explore" (Read, Grep, Glob, ReadMediaFile,
 * WebSearch, FetchURL: reads and searches, changes nothing) and "plan" (the
 * explore tools plus TodoList; its report is an implementation plan). A
 * sub-agent is offered only the tools its profile lists, and the agent loop
 * answers a call to any other tool with an error result; its system prompt
 * is the sub-agent prompt followed by system_prompt_addition. An unknown
 * subagent_type is an error result that lists the profiles with their
 * descriptions; resume together with subagent_type is refused (a resumed
 * sub-agent keeps its profile, also across agt_agent_save()/restore).
 * Sub-agents started later use the new profile; running ones keep theirs.
 *
 * @param a the root agent (not a sub-agent); profiles apply at every depth.
 * @param name 1..64 of a-z, 0-9, '_' and '-' (copied).
 * @param description a short phrase shown in the unknown-type answer (copied,
 *        not empty).
 * @param tools_json a JSON array of tool names (copied; names not in the
 *        registry are allowed and simply never offered), or NULL for every
 *        tool.
 * @param system_prompt_addition text added to the sub-agent's system prompt
 *        (copied), or NULL/"" for none.
 * @return AGT_OK; AGT_EINVAL (NULL agent/name/description, a sub-agent,
 *         a bad name, an empty description, tools_json not an array of
 *         non-empty strings); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_add_subagent_profile(agt_agent *a, const char *name,
                                              const char *description, const char *tools_json,
                                              const char *system_prompt_addition);

/**
 * Caps how many sub-agents an AgentSwarm call runs at once. Concurrency
 * ramps up as in the reference agents: 5 sub-agents start at once, then one
 * more every 700 ms while others wait, up to this cap. Default 0: no cap
 * (the reference's default; at most the swarm's 128 sub-agents). 1 runs
 * them one after the other. Concurrent only with a frozen registry and an
 * HTTP model (see agt_agent_enable_subagents()).
 *
 * @param max 0 (no cap) or 1..128 sub-agents.
 * @return AGT_OK; AGT_EINVAL (a NULL agent, max out of range).
 */
AGT_EXTERN int agt_agent_set_swarm_concurrency(agt_agent *a, int max);

/**
 * Sets how many read-only tool calls of one model turn may run at once
 * (default 4; 1 runs every call one after the other). Sub-agents (Agent,
 * AgentSwarm) follow the root agent's setting, also when it changes later.
 *
 * Parallel-safe are the built-in providers of Read, Glob, Grep,
 * ReadMediaFile and FetchURL (network fetches gain the most): they only read
 * the session. A tool whose provider the host set (WebSearch,
 * AskUserQuestion, Skill, or a built-in name overridden) is never
 * parallel-safe (the host's thread-safety is unknown), nor is task_done,
 * Agent, AgentSwarm, the todo/plan/task/cron tools, anything that writes or
 * executes, or the review tools (they share the session's change set).
 *
 * A maximal run of two or more consecutive parallel-safe calls is handled in
 * three phases: on the host's thread and in call order, each call's
 * AGT_AGENT_TOOL_STARTED event, look-up, argument checks, approval (the
 * session's approver is asked here) and pre-tool-use hook; then the
 * providers of the calls that passed run on up to max threads (the host's
 * thread is one of them); then, on the host's thread and in call order, the
 * post-tool-use hooks and the AGT_AGENT_TOOL_FINISHED events. A call that is
 * refused, has bad arguments or waits for approval (AGT_EPENDING: it runs
 * when answered, as without concurrency) takes no thread. Any other call
 * runs alone, after the run before it finished, so e.g. a Read after a Write
 * sees the written file. Results enter the conversation in call order and
 * are the same as those of a sequential run of the same calls, with one
 * exception: the approver and the pre-tool-use hooks of a group's calls all
 * run before any of its providers, so a hook or approver with side effects
 * on the workspace (writing a file an earlier call of the group reads) is
 * seen by calls it would have followed in a sequential run; set max to 1 if
 * such hooks matter. A sub-agent's time limit is checked between groups.
 *
 * @param max 1..64 calls at once.
 * @return AGT_OK; AGT_EINVAL (a NULL agent, max out of range).
 */
AGT_EXTERN int agt_agent_set_parallel_tools(agt_agent *a, int max);

/**
 * Sets the time limit of a sub-agent's run (the Agent tool's fixed
 * 30-minute timeout, see the Agent tool reference). It counts per run — one
 * Agent call, one AgentSwarm item, one background task, one resume:
 * "agent-N" (each starts with the full limit) — the sub-agent's working
 * time: CLOCK_MONOTONIC wall time from the run's start, its model calls and
 * its tool calls (its own sub-agents' time included), until it ends. Not
 * counted: time it is paused for approval (agt_agent_answer()/resume, a
 * background task waiting for answers; a call approved then runs before the
 * clock goes on, and is not counted either) and time spent in a synchronous
 * approver (agt_agent_set_subagent_approver(), the root session's approver).
 *
 * When the limit runs out, the model request in flight is cancelled (its
 * cancel poll, about every 100 ms; an HTTP model only: a host or replay
 * model's call ends on its own), a running tool call ends by its own limits
 * (Bash has its own timeout), no further tool call starts (the rest of that
 * turn's calls get the error result "Not run: the sub-agent's time limit ran
 * out before this call started.") and the run stops with AGT_ETIMEOUT. The
 * Agent call's result, not an error (like a budget stop), reads "Sub-agent
 * agent-N (description) stopped at its 30-minute time limit after K model
 * calls. Resume it with resume: "agent-N"." and then its last text; an
 * AgentSwarm section "## agent-N — item: stopped at its ... time limit
 * after K model calls"; a background Agent task ends with status "timed_out"
 * and its task_finished message says "timed out". A sub-agent started by a
 * sub-agent that waits for it also stops at its parent's deadline ("stopped
 * at the time limit of agent-1"). The sub-agent stays resumable.
 *
 * The value of the root agent applies to all sub-agents, at any depth;
 * a run takes the value set when it starts.
 *
 * @param ms the limit in milliseconds: 0 (no limit) or 1..2592000000 (30
 *        days); default 1800000 (30 minutes).
 * @return AGT_OK; AGT_EINVAL (a NULL agent, ms negative or over 30 days).
 */
AGT_EXTERN int agt_agent_set_subagent_timeout(agt_agent *a, int64_t ms);

/**
 * Decides a sub-agent's tool call that needs the user's approval.
 *
 * @param agent_id the sub-agent's id ("agent-N").
 * @param req the request (agt_approval_json() for the call, without
 *        "agent_id"; the reason and rule setters work); valid only during
 *        the callback.
 * @param payload the pointer given to agt_agent_set_subagent_approver().
 * @return AGT_DECISION_APPROVE, AGT_DECISION_APPROVE_SESSION (stored in the
 *         sub-agent's own session only) or AGT_DECISION_REJECT; any other
 *         value rejects the call.
 */
typedef int (*agt_subagent_approver_fn)(const char *agent_id, agt_approval *req, void *payload);

/**
 * A dedicated approver for sub-agents: with fn set, their calls that need
 * approval are passed to fn, which answers synchronously (the sub-agent
 * waits), instead of going through the agent's own approval channel (see
 * "Approvals" at agt_agent_enable_subagents()). fn is called on the
 * sub-agent's thread — a swarm worker or a background task — so it must be
 * thread-safe. fn NULL (the default) clears it. Applies to existing and new
 * sub-agents.
 *
 * @return AGT_OK; AGT_EINVAL (a NULL agent); AGT_ESTATE (a sub-agent runs
 *         in the background now); AGT_ENOMEM.
 */
AGT_EXTERN int agt_agent_set_subagent_approver(agt_agent *a, agt_subagent_approver_fn fn,
                                               void *payload);

#ifdef __cplusplus
}
#endif

#endif /* AGENTTOOLS_AGENT_H */
