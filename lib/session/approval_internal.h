/* Internal: what the approval files of lib/session share (gate.c, pending.c,
 * suspend.c, jobs.c, suggest.c, policy.c). */
#ifndef AGT_LIB_SESSION_APPROVAL_INTERNAL_H
#define AGT_LIB_SESSION_APPROVAL_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include "core/core.h"
#include "policy.h"

struct agt_approval {
    char *json;
    char *reason;
    char *rule;
    const char *suggested; /* borrowed for the callback */
};

typedef struct gate_ctx {
    agt_session *s;
    bool approved;      /* the user already approved (answer path) */
    const char *reason; /* the user's reason from the answer */
    agti_buf note;      /* hook failures, appended to the result */
    char *args;         /* arguments the provider ran with (for the post hook) */
    bool ran;           /* the gate let the call through */
    agti_buf context;   /* what the pre-tool-use hook added for the model */
} gate_ctx;

/* ---- gate.c ---- */
/* The mode whose approval rules apply: the session's mode, or in plan mode
 * the mode plan mode was entered from (manual when unknown). */
int agti_gate_approval_mode(const agt_session *s);
/* Whether the call must ask; *why gets the reason (malloc'd). */
int agti_gate_need_ask(agt_session *s, agt_call *call, agti_verdict *v, bool *ask, char **why);
/* Refuses (AGT_EDENIED, *out) what the verdict forbids in the session's
 * mode: a deny rule, a limit, an undecidable command where nothing asks;
 * then the plan-mode limits. */
int agti_gate_verdict_check(agt_session *s, agt_call *call, const agti_verdict *v,
                            agt_result **out);
/* The result text of a call the user declined (malloc'd, NULL on OOM). */
char *agti_gate_declined_text(agt_session *s, const char *tool, const char *reason);
/* Approve for the session of a file tool's path outside every folder: adds
 * dir as a writable root (write) or a read-only folder of the file tools.
 * AGT_OK (also when dir is gone: approved once), AGT_ENOMEM. */
int agti_gate_add_outside_root(agt_session *s, const char *dir, bool write);
/* Adds an allow rule marked as added by an approve-for-session answer. */
int agti_gate_add_session_rule(agt_session *s, const char *text);
/* A full dispatch through the gate, then agti_gate_finish. */
int agti_gate_run(agt_session *s, const char *call_id, const char *tool, const char *args_json,
                  bool approved, const char *reason, agt_result **out);
/* What follows the provider on the session's thread: the suspension of a
 * call its provider suspended, else the post-hook (also for a call the gate
 * answered, with the hook failures noted). Frees the gate's state. */
int agti_gate_finish(agt_session *s, gate_ctx *g, const char *call_id, const char *tool,
                     const char *reason, int rc, agt_result **out);

/* ---- suggest.c ---- */
/* The suggested "allow for session" rule of a call (malloc'd), NULL when
 * none or on OOM. */
char *agti_suggest_rule(agt_session *s, const char *tool, json_t *args, agti_verdict *v);
/* The rules of a suggestion (one per line) as a JSON array of strings. */
json_t *agti_rule_lines(const char *rules);

/* ---- pending.c ---- */
/* Parks the call as pending (takes why and suggested): AGT_EPENDING, or an
 * error code. */
int agti_pending_park(agt_session *s, agt_call *call, char *why, char *suggested);

/* ---- suspend.c ---- */
void agti_subappr_free(struct agti_subappr *sa);
/* Keeps the call its provider suspended (takes g's args, note and context):
 * AGT_EPENDING, or an error code. */
int agti_suspend_keep(agt_session *s, const char *call_id, const char *tool, gate_ctx *g);
/* Appends the sub-agents' pending calls (the lister set by
 * agti_session_set_pending_ext) to list: AGT_OK or its error code. */
int agti_subappr_list_pending(const agt_session *s, json_t *list);

#endif
