/* A session's tool call split in three phases, for the agent's concurrent
 * read-only calls (issue #7): prepare (look-up, arguments, approval,
 * pre-hook) and complete (post-hook, suspension) on the session's thread in
 * call order, execute (the provider) on any thread. agt_session_dispatch is
 * the three in a row; a session handle stays single-threaded apart from
 * agti_session_job_execute of parallel-safe jobs, which only read it. */
#ifndef AGT_LIB_SESSION_JOBS_H
#define AGT_LIB_SESSION_JOBS_H

#include <stdbool.h>

#include "agenttools/dispatch.h"
#include "agenttools/session.h"

typedef struct agti_session_job agti_session_job;

/* Prepares a call as agt_session_dispatch would run it. AGT_OK with *job:
 * ready to execute. AGT_OK with *out: answered already (unknown tool, bad
 * arguments, refused by a rule, the approver or the pre-hook; the post-hook
 * has run as for a dispatch). AGT_EPENDING: waits for approval
 * (agt_session_answer). Another code: failed (nothing set). */
int agti_session_prepare(agt_session *s, const char *call_id, const char *tool,
                         const char *args_json, agti_session_job **job, agt_result **out);

/* Whether the job's provider may run concurrently with other jobs' (built-in
 * read-only providers only, see lib/tools/providers.c). */
bool agti_session_job_parallel_safe(const agti_session_job *job);

/* Runs the provider and builds the result; any thread, once. The outcome
 * (and a failure's message) is kept in the job for complete. */
void agti_session_job_execute(agti_session_job *job);

/* On the session's thread: the post-hook (or the suspension of a provider
 * that suspended the call), then frees the job. Returns what
 * agt_session_dispatch would have (AGT_OK with *out, AGT_EPENDING, or an error
 * code with the last error set from the provider's thread). */
int agti_session_job_complete(agti_session_job *job, agt_result **out);

/* Frees a job that will not be completed; NULL is a no-op. */
void agti_session_job_free(agti_session_job *job);

/* Whether a call of `tool` would be parallel-safe in the session's phase. */
bool agti_session_parallel_safe(const agt_session *s, const char *tool);

#endif
