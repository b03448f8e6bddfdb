/* Internal: what the agent layer needs from the session to let sub-agents
 * share their root's approval channel (agent.h, "Sub-agents and approval"):
 *
 * - suspended calls: a provider that cannot finish yet (an Agent call whose
 *   sub-agent waits for approval) marks its call suspended
 *   (agti_call_suspend); the session keeps {call id, tool, arguments, hook
 *   note} and returns AGT_EPENDING without a result. agti_session_complete()
 *   later gives the call its text and runs the post-tool-use hook, as for
 *   any call that ran;
 * - the session's synchronous approver, and the request helpers to pass a
 *   sub-agent's request on to it (tagged with "agent_id");
 * - a lister of extra pending calls, so agt_session_pending() on the root
 *   session shows the sub-agents' waiting calls too. */
#ifndef AGT_LIB_SESSION_SUBAPPROVAL_H
#define AGT_LIB_SESSION_SUBAPPROVAL_H

#include <jansson.h>
#include <stdbool.h>

#include "agenttools/session.h"

/* Completes a suspended call: builds its result (status AGT_OK, or AGT_ERROR
 * when is_error) and runs the post-tool-use hook on it with the arguments it
 * ran with. AGT_OK with *out set; AGT_ENOTFOUND (no suspended call with that
 * id); AGT_ENOMEM. */
int agti_session_complete(agt_session *s, const char *call_id, const char *text, bool is_error,
                          agt_result **out);
/* Forgets a suspended call without a result (its owner went away). */
void agti_session_drop_suspended(agt_session *s, const char *call_id);
/* Whether a call with that id is suspended. */
bool agti_session_is_suspended(const agt_session *s, const char *call_id);
/* The suspended calls as [{"call_id","tool","arguments"(text),"note",
 * "context"}] (note null and context left out when there is none; for
 * save); NULL on
 * OOM. */
json_t *agti_session_suspended_json(const agt_session *s);
/* Adds a suspended call (for restore; note, context: NULL when none).
 * AGT_OK, AGT_EEXISTS, AGT_ENOMEM. */
int agti_session_add_suspended(agt_session *s, const char *call_id, const char *tool,
                               const char *args, const char *note, const char *context);

/* Parks a call for approval again (after a restore: agt_session_restore()
 * keeps no pending approvals), with the reason and suggested rule a
 * dispatch would give it now; AGT_OK also when it is pending already.
 * AGT_EINVALID (the call would not wait now: unknown tool, bad arguments, a
 * deny rule; the message says why), AGT_ENOMEM. */
int agti_session_repark(agt_session *s, const char *call_id, const char *tool, const char *args);

/* The session's synchronous approver (fn NULL when none). */
void agti_session_approver(const agt_session *s, agt_approver_fn *fn, void **payload);
/* Adds "agent_id":id to the request's JSON. AGT_OK or AGT_ENOMEM. */
int agti_approval_tag(agt_approval *req, const char *agent_id);
/* The rule an APPROVE_SESSION answer stores: the host's, else the suggested
 * one; NULL when none (borrowed from req). */
const char *agti_approval_session_rule(const agt_approval *req);
/* Asks the session's synchronous approver about a request given as JSON
 * (the agt_approval_json() shape); *decision gets its answer, *reason and
 * *rule what it set (malloc'd or NULL). AGT_OK; AGT_ESTATE (no approver);
 * AGT_ENOMEM. */
int agti_session_ask(agt_session *s, const char *request_json, int *decision, char **reason,
                     char **rule);
/* Adds an allow rule marked as added by an approve-for-session answer. */
int agti_session_add_session_rule(agt_session *s, const char *rule);

/* Appends extra items (the agt_session_pending() shape plus "agent_id") to
 * list; AGT_OK or an error code. */
typedef int (*agti_pending_ext_fn)(void *payload, json_t *list);
/* Sets (fn NULL clears) the lister agt_session_pending() calls after the
 * session's own pending calls. AGT_OK or AGT_ENOMEM. */
int agti_session_set_pending_ext(agt_session *s, agti_pending_ext_fn fn, void *payload);
/* The payload of the lister set, or NULL. */
void *agti_session_pending_ext_payload(const agt_session *s);

#endif
