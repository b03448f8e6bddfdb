/*
 * Background sub-agents and swarms (see agent.h): the task threads, the
 * TaskList/TaskOutput/TaskStop operations the session asks of them, and the
 * approvals their sub-agents wait for.
 */

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_internal.h"

#define BG_PREVIEW_BYTES 2048
#define BG_TRANSCRIPT_MAX (1024 * 1024)
#define BG_STOP_WAIT_MS 10000

void agti_agent_bg_note(bgtask *t, const char *fmt, ...)
{
    agti_buf lb = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&lb, fmt, ap);
    va_end(ap);
    char *line = agti_buf_detach(&lb);
    if (!line)
        return;
    pthread_mutex_lock(&t->lock);
    if (t->transcript.len < BG_TRANSCRIPT_MAX)
        agti_buf_puts(&t->transcript, line);
    pthread_mutex_unlock(&t->lock);
    free(line);
}

/* Event callback of a background sub-agent: its transcript for TaskOutput. */
static int bg_sub_event(int kind, const char *data, size_t len, void *payload)
{
    sub *sb = payload;
    bgtask *t = sb->bg;
    if (!t)
        return 0;
    if (kind == AGT_AGENT_TEXT && !t->swarm) {
        pthread_mutex_lock(&t->lock);
        if (t->transcript.len < BG_TRANSCRIPT_MAX)
            agti_buf_put(&t->transcript, data, len);
        pthread_mutex_unlock(&t->lock);
    } else if (kind == AGT_AGENT_TOOL_STARTED) {
        json_t *o = json_loadb(data, len, 0, NULL);
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *args = json_string_value(json_object_get(o, "arguments"));
        if (t->swarm)
            agti_agent_bg_note(t, "%s: [tool] %s %.200s\n", sb->id, name ? name : "?",
                               args ? args : "");
        else
            agti_agent_bg_note(t, "\n[tool] %s %.200s\n", name ? name : "?", args ? args : "");
        json_decref(o);
    }
    return 0;
}

static void wake_host(bgtask *t)
{
    ssize_t w;
    do
        w = write(t->pipefd[1], "x", 1);
    while (w < 0 && errno == EINTR);
}

/* On the task's thread: publishes the calls its sub-agents wait for and
 * sleeps until the host answered them all (true) or stopped the task. */
static bool bg_wait_answers(bgtask *t)
{
    json_t *calls = json_array();
    for (size_t i = 0; calls && i < t->n; i++)
        if (t->subs[i]->rc == AGT_EPENDING &&
            agti_agent_collect_waiting(t->subs[i]->agent, calls, false) != AGT_OK) {
            json_decref(calls);
            calls = NULL;
        }
    pthread_mutex_lock(&t->lock);
    if (!calls && !t->stopped) {
        t->stopped = true;
        free(t->stop_reason);
        t->stop_reason = agti_strdup("out of memory while waiting for approval");
    }
    json_decref(t->wait_calls);
    t->wait_calls = calls;
    t->waiting = true;
    t->wait_reported = false;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    wake_host(t);
    pthread_mutex_lock(&t->lock);
    while ((t->waiting || t->answering) && !t->stopped)
        pthread_cond_wait(&t->cond, &t->lock);
    while (t->answering) /* a TaskStop during an answer: let it end */
        pthread_cond_wait(&t->cond, &t->lock);
    bool stopped = t->stopped;
    t->waiting = false;
    json_decref(t->wait_calls);
    t->wait_calls = NULL;
    pthread_mutex_unlock(&t->lock);
    return !stopped;
}

static void *bg_main(void *arg)
{
    bgtask *t = arg;
    char *report = NULL, *preview = NULL;
    bool failed = false, timed_out = false;
    if (t->swarm)
        agti_agent_swarm_run(t->subs, t->n, t->workers, t);
    else
        t->subs[0]->rc = agti_agent_sub_run(t->subs[0], false);
    /* sub-agents that wait for approval: the host answers, they go on */
    for (;;) {
        size_t m = 0;
        for (size_t i = 0; i < t->n; i++)
            m += t->subs[i]->rc == AGT_EPENDING;
        if (m == 0)
            break;
        if (!bg_wait_answers(t)) {
            pthread_mutex_lock(&t->lock);
            char *why = agti_strdup(t->stop_reason ? t->stop_reason : "stopped");
            pthread_mutex_unlock(&t->lock);
            for (size_t i = 0; i < t->n; i++)
                if (t->subs[i]->rc == AGT_EPENDING) {
                    agti_agent_abandon(t->subs[i]->agent, why ? why : "stopped");
                    t->subs[i]->rc =
                        agti_error(AGT_ECANCELLED, "stopped while waiting for approval: %s",
                                   why ? why : "stopped");
                }
            free(why);
            break;
        }
        agti_agent_bg_note(t, "(approvals answered: going on)\n");
        if (!t->swarm) {
            t->subs[0]->rc = agti_agent_sub_resume(t->subs[0], false);
            continue;
        }
        sub **again = calloc(m, sizeof *again);
        if (!again)
            break; /* they stay paused; the report says so */
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->subs[i]->rc == AGT_EPENDING)
                again[k++] = t->subs[i];
        agti_agent_swarm_run(again, k, t->workers, t);
        free(again);
    }
    if (t->swarm) {
        report = agti_agent_swarm_report(t->subs, t->n, t->parallel);
    } else {
        sub *sb = t->subs[0];
        report = agti_agent_report(sb, sb->rc, t->description, sb->turns_before, NULL, &failed);
        timed_out = agti_agent_sub_timed_out(sb, sb->rc);
    }
    const char *answer = t->swarm ? (report ? report : "") : agt_agent_text(t->subs[0]->agent);
    size_t len = strlen(answer);
    preview = agti_strndup(
        answer, agti_utf8_floor(answer, len < BG_PREVIEW_BYTES ? len : BG_PREVIEW_BYTES));
    for (size_t i = 0; i < t->n; i++) {
        agt_agent_set_event_callback(t->subs[i]->agent, NULL, NULL);
        atomic_store(&t->subs[i]->busy, false);
    }
    pthread_mutex_lock(&t->lock);
    t->result = report;
    t->preview = preview;
    t->failed = failed || !report;
    t->timed_out = timed_out;
    t->done = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    wake_host(t);
    return NULL;
}

/* Waits up to ms for the task's end (or, with or_waiting, for its
 * sub-agents to wait for the host). AGT_OK or AGT_ETIMEOUT. */
static int bg_wait_for(bgtask *t, int64_t ms, bool or_waiting)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&t->lock);
    int err = 0;
    while (!t->done && !(or_waiting && t->waiting) && err == 0)
        err = pthread_cond_timedwait(&t->cond, &t->lock, &until);
    bool done = t->done || (or_waiting && t->waiting);
    pthread_mutex_unlock(&t->lock);
    return done ? AGT_OK : AGT_ETIMEOUT;
}

/* The session's wait (TaskOutput block): a task whose sub-agents wait for
 * approval goes no further without the host, so that ends the wait too. */
static int bg_wait(void *payload, int64_t ms)
{
    return bg_wait_for(payload, ms, true);
}

static const char *bg_status(const bgtask *t)
{
    if (!t->done)
        return t->waiting ? "waiting for approval" : "running";
    if (t->stopped)
        return "killed";
    if (t->timed_out)
        return "timed_out";
    return t->failed ? "failed" : "completed";
}

static int bg_snapshot(void *payload, agti_ext_snapshot *out)
{
    bgtask *t = payload;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&t->lock);
    out->status = bg_status(t);
    agti_buf o = AGTI_BUF_INIT;
    agti_buf_put(&o, agti_buf_cstr(&t->transcript), t->transcript.len);
    if (t->done && t->result)
        agti_buf_printf(&o, "%s%s", o.len ? "\n\n" : "", t->result);
    out->output = agti_buf_detach(&o);
    if (t->done) {
        agti_buf m = AGTI_BUF_INIT;
        agti_buf_printf(&m, "Background %s %s (%s) ", t->swarm ? "swarm" : "sub-agent", t->id,
                        t->description);
        if (t->stopped)
            agti_buf_printf(&m, "was stopped: %s.", t->stop_reason ? t->stop_reason : "stopped");
        else if (t->timed_out)
            agti_buf_puts(&m, "timed out: it stopped at its time limit and can be resumed.");
        else
            agti_buf_printf(&m, "%s.", t->failed ? "failed" : "finished");
        agti_buf_printf(&m, "\n\n%s", t->result ? t->result : "(no report)");
        out->message = agti_buf_detach(&m);
        out->preview = agti_strdup(t->preview ? t->preview : "");
    }
    pthread_mutex_unlock(&t->lock);
    if (!out->output ||
        (!agti_ext_status_active(out->status) && (!out->message || !out->preview))) {
        agti_ext_snapshot_free(out);
        return agti_oom();
    }
    return AGT_OK;
}

static int bg_stop(void *payload, const char *reason)
{
    bgtask *t = payload;
    pthread_mutex_lock(&t->lock);
    if (t->done) {
        pthread_mutex_unlock(&t->lock);
        return AGT_ESTATE;
    }
    t->stopped = true;
    free(t->stop_reason);
    t->stop_reason = agti_strdup(reason ? reason : "stopped");
    pthread_cond_broadcast(&t->cond); /* wakes a task waiting for approvals */
    pthread_mutex_unlock(&t->lock);
    /* a run that starts after a cancel clears it, so cancel until it ends */
    for (int waited = 0; waited < BG_STOP_WAIT_MS; waited += 50) {
        for (size_t i = 0; i < t->n; i++)
            agt_agent_cancel(t->subs[i]->agent);
        if (bg_wait_for(t, 50, false) == AGT_OK)
            return AGT_OK;
    }
    return AGT_ETIMEOUT;
}

static int bg_poll_fd(void *payload)
{
    return ((bgtask *)payload)->pipefd[0];
}

/* The approval_needed event, once per wait (on the session's thread). */
static json_t *bg_take_event(void *payload)
{
    bgtask *t = payload;
    json_t *ev = NULL;
    pthread_mutex_lock(&t->lock);
    if (t->waiting && !t->wait_reported && t->wait_calls && !t->done) {
        agti_buf m = AGTI_BUF_INIT;
        agti_buf_printf(
            &m, "Background %s %s (%s) waits for the user's approval of %zu tool call%s:",
            t->swarm ? "swarm" : "sub-agent", t->id, t->description, json_array_size(t->wait_calls),
            json_array_size(t->wait_calls) == 1 ? "" : "s");
        size_t i;
        json_t *c;
        json_array_foreach(t->wait_calls, i, c)
        {
            char *args = agti_json_dump(json_object_get(c, "arguments"));
            agti_buf_printf(&m, "\n- %s %.200s (%s)", json_string_value(json_object_get(c, "tool")),
                            args ? args : "", json_string_value(json_object_get(c, "call_id")));
            free(args);
        }
        agti_buf_puts(&m, "\nIt goes on by itself once the user has answered.");
        ev = m.oom
                 ? NULL
                 : json_pack("{s:s,s:s,s:s,s:s,s:O,s:s}", "type", "approval_needed", "kind",
                             t->swarm ? "swarm" : "agent", "task_id", t->id, "description",
                             t->description, "calls", t->wait_calls, "message", agti_buf_cstr(&m));
        agti_buf_free(&m);
        t->wait_reported = ev != NULL;
    }
    pthread_mutex_unlock(&t->lock);
    char c;
    while (read(t->pipefd[0], &c, 1) == 1)
        ;
    return ev;
}

/* The background task and sub-agent that wait with the call of sub id
 * (a task's sub-agent or one under it), or NULL. */
sub *agti_agent_bg_waiting_sub(agt_agent *root, const char *id, bgtask **out)
{
    sub *target = agti_agent_sub_find(root, id);
    for (size_t i = 0; target && i < root->n_bgs; i++) {
        bgtask *t = root->bgs[i];
        pthread_mutex_lock(&t->lock);
        bool waiting = t->waiting && !t->answering && !t->stopped && !t->done;
        pthread_mutex_unlock(&t->lock);
        for (size_t k = 0; waiting && k < t->n; k++)
            if (target->agent->waiting &&
                (t->subs[k] == target || agti_agent_in_tree(t->subs[k]->agent, target))) {
                *out = t;
                return target;
            }
    }
    return NULL;
}

/* The host answers a call a background task waits for (on the host's
 * thread, while the task's thread sleeps); when none waits any more, the
 * task goes on by itself. */
int agti_agent_bg_answer(bgtask *t, sub *sb, const char *call_id, int decision, const char *reason)
{
    pthread_mutex_lock(&t->lock);
    t->answering = true;
    pthread_mutex_unlock(&t->lock);
    int rc = agti_agent_answer_in_sub(sb, call_id, decision, reason);
    bool all = true;
    json_t *left = json_array();
    for (size_t i = 0; i < t->n; i++) {
        if (t->subs[i]->rc != AGT_EPENDING)
            continue;
        char *w = agti_agent_first_unanswered(t->subs[i]->agent);
        all &= w == NULL;
        free(w);
        if (left && agti_agent_collect_waiting(t->subs[i]->agent, left, false) != AGT_OK) {
            json_decref(left);
            left = NULL;
        }
    }
    pthread_mutex_lock(&t->lock);
    t->answering = false;
    if (left) {
        json_decref(t->wait_calls);
        t->wait_calls = left;
    }
    if (all)
        t->waiting = false;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    if (!left)
        return agti_oom();
    return rc;
}

static const agti_ext_task_ops bg_ops = {bg_snapshot, bg_stop, bg_wait, bg_poll_fd, bg_take_event};

bgtask *agti_agent_bg_find(agt_agent *root, const char *id)
{
    for (size_t i = 0; i < root->n_bgs; i++)
        if (strcmp(root->bgs[i]->id, id) == 0)
            return root->bgs[i];
    return NULL;
}

/* Waits for a task that has ended and resets it for another run. */
static void bg_reset(bgtask *t)
{
    if (t->joinable)
        pthread_join(t->th, NULL);
    t->joinable = false;
    char c;
    while (read(t->pipefd[0], &c, 1) == 1)
        ;
    t->done = t->stopped = t->failed = t->timed_out = false;
    t->waiting = t->answering = t->wait_reported = false;
    json_decref(t->wait_calls);
    t->wait_calls = NULL;
    free(t->stop_reason);
    free(t->result);
    free(t->preview);
    t->stop_reason = t->result = t->preview = NULL;
    agti_buf_free(&t->transcript);
    free(t->subs);
    t->subs = NULL;
    t->n = 0;
}

static void bg_destroy(bgtask *t)
{
    bg_reset(t);
    close(t->pipefd[0]);
    close(t->pipefd[1]);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t->description);
    free(t);
}

/* Stops and waits for every background task and unregisters them. */
void agti_agent_bg_free_all(agt_agent *root)
{
    for (size_t i = 0; i < root->n_bgs; i++) {
        bgtask *t = root->bgs[i];
        if (t->joinable) {
            pthread_mutex_lock(&t->lock);
            bool done = t->done;
            if (!done && !t->stopped) {
                t->stopped = true; /* wakes a task waiting for approvals */
                free(t->stop_reason);
                t->stop_reason = agti_strdup("the agent was freed");
                pthread_cond_broadcast(&t->cond);
            }
            pthread_mutex_unlock(&t->lock);
            while (!done) {
                for (size_t k = 0; k < t->n; k++)
                    agt_agent_cancel(t->subs[k]->agent);
                done = bg_wait_for(t, 50, false) == AGT_OK;
            }
        }
        agti_session_ext_remove(root->session, t->id);
        bg_destroy(t);
    }
    free(root->bgs);
    root->bgs = NULL;
    root->n_bgs = 0;
}

/* Starts subs (already given their prompts) as background task id on the
 * root's session; takes subs. */
int agti_agent_bg_start(agt_agent *root, const char *id, const char *desc, bool is_swarm,
                        sub **subs, size_t n, bool parallel)
{
    bgtask *t = agti_agent_bg_find(root, id);
    bool fresh = t == NULL;
    if (fresh) {
        bgtask **grown = realloc(root->bgs, (root->n_bgs + 1) * sizeof *grown);
        if (!grown || !(t = calloc(1, sizeof *t))) {
            if (grown)
                root->bgs = grown;
            free(subs);
            return agti_oom();
        }
        root->bgs = grown;
        if (pipe(t->pipefd) != 0) {
            free(t);
            free(subs);
            return agti_error(AGT_EIO, "cannot start a background sub-agent: pipe: %s",
                              strerror(errno));
        }
        fcntl(t->pipefd[0], F_SETFL, O_NONBLOCK);
        fcntl(t->pipefd[0], F_SETFD, FD_CLOEXEC);
        fcntl(t->pipefd[1], F_SETFD, FD_CLOEXEC);
        pthread_mutex_init(&t->lock, NULL);
        pthread_cond_init(&t->cond, NULL);
        snprintf(t->id, sizeof t->id, "%s", id);
        t->root = root;
        root->bgs[root->n_bgs++] = t;
    } else {
        bg_reset(t);
    }
    char *d = agti_strdup(desc ? desc : "task");
    if (!d) {
        free(subs);
        return agti_oom();
    }
    free(t->description);
    t->description = d;
    t->swarm = is_swarm;
    t->subs = subs;
    t->n = n;
    t->parallel = parallel;
    t->workers = parallel ? root->swarm_max : 1;
    /* the tools' export is made here, not on the task's threads */
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < n; i++) {
        const char *tools;
        rc = agti_agent_offered_tools(subs[i]->agent, &tools);
    }
    if (rc == AGT_OK)
        rc = agti_session_ext_add(root->session, t->id, is_swarm ? "swarm" : "agent",
                                  t->description, &bg_ops, t);
    if (rc != AGT_OK) {
        free(t->subs);
        t->subs = NULL;
        t->n = 0;
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        subs[i]->bg = t;
        atomic_store(&subs[i]->busy, true);
        agt_agent_set_event_callback(subs[i]->agent, bg_sub_event, subs[i]);
    }
    if (pthread_create(&t->th, NULL, bg_main, t) != 0) {
        for (size_t i = 0; i < n; i++) {
            atomic_store(&subs[i]->busy, false);
            agt_agent_set_event_callback(subs[i]->agent, NULL, NULL);
        }
        agti_session_ext_remove(root->session, t->id);
        free(t->subs);
        t->subs = NULL;
        t->n = 0;
        return agti_error(AGT_EIO, "cannot start a background sub-agent: no thread");
    }
    t->joinable = true;
    return AGT_OK;
}
