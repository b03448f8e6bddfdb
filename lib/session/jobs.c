/* A session's tool call split in three phases (jobs.h): prepare and
 * complete on the session's thread, execute on any thread. */
#include <stdlib.h>
#include <string.h>

#include "approval_internal.h"
#include "core/core.h"
#include "policy.h"
#include "session_internal.h"
#include "jobs.h"

struct agti_session_job {
    agt_session *s;
    gate_ctx g;
    agti_prepared *prep;
    char *call_id;
    char *tool;
    int rc;          /* the outcome of execute */
    agt_result *out; /* its result */
    char *error;     /* its last error message, when rc is an error */
    bool executed;
};

void agti_session_job_free(agti_session_job *job)
{
    if (job == NULL)
        return;
    agti_prepared_free(job->prep);
    agt_result_free(job->out);
    if (job->g.reason != NULL)
        free((char *)job->g.reason);
    agti_buf_free(&job->g.note);
    agti_buf_free(&job->g.context);
    free(job->g.args);
    free(job->call_id);
    free(job->tool);
    free(job->error);
    free(job);
}

int agti_session_prepare(agt_session *s, const char *call_id, const char *tool,
                         const char *args_json, agti_session_job **job, agt_result **out)
{
    if (job != NULL)
        *job = NULL;
    if (out != NULL)
        *out = NULL;
    if (s == NULL || tool == NULL || job == NULL || out == NULL)
        return agti_error(AGT_EINVAL, "agti_session_prepare: session, tool, job or out is NULL");
    if (call_id == NULL)
        call_id = "";
    agti_session_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return agti_oom();
    j->s = s;
    j->g = (gate_ctx){s, false, NULL, AGTI_BUF_INIT, NULL, false, AGTI_BUF_INIT};
    j->call_id = agti_strdup(call_id);
    j->tool = agti_strdup(tool);
    if (j->call_id == NULL || j->tool == NULL) {
        agti_session_job_free(j);
        return agti_oom();
    }
    agti_dispatch_env env = {s->reg, s->phase, s, agti_session_gate, &j->g};
    int rc = agti_dispatch_prepare(&env, call_id, tool, args_json, &j->prep, out);
    if (rc == AGT_OK && j->prep != NULL) {
        /* the reason the approver gave is read by ExitPlanMode only, which
         * runs alone; it stays with the job */
        s->policy->exit_reason = NULL;
        *job = j;
        return AGT_OK;
    }
    rc = agti_gate_finish(s, &j->g, j->call_id, j->tool, NULL, rc, out);
    agti_session_job_free(j);
    return rc;
}

bool agti_session_job_parallel_safe(const agti_session_job *job)
{
    return job != NULL && agti_prepared_parallel_safe(job->prep);
}

void agti_session_job_execute(agti_session_job *job)
{
    if (job->executed)
        return;
    job->executed = true;
    job->rc = agti_dispatch_execute(job->prep, &job->out);
    if (job->rc != AGT_OK && job->rc != AGT_EPENDING) {
        agt_result_free(job->out);
        job->out = NULL;
        job->error = agti_strdup(agt_error_message());
    }
    agti_prepared_free(job->prep);
    job->prep = NULL;
}

int agti_session_job_complete(agti_session_job *job, agt_result **out)
{
    *out = NULL;
    agti_session_job_execute(job); /* a no-op when it ran on a worker */
    int rc = job->rc;
    if (rc != AGT_OK && rc != AGT_EPENDING) {
        if (rc == AGT_ENOMEM)
            agti_oom();
        else
            agti_error(rc, "%s", job->error ? job->error : "the tool call failed");
    }
    *out = job->out;
    job->out = NULL;
    rc = agti_gate_finish(job->s, &job->g, job->call_id, job->tool, NULL, rc, out);
    agti_session_job_free(job);
    return rc;
}

bool agti_session_parallel_safe(const agt_session *s, const char *tool)
{
    agti_dispatch_env env = {s->reg, s->phase, (agt_session *)s, NULL, NULL};
    return agti_dispatch_parallel_safe(&env, tool);
}
