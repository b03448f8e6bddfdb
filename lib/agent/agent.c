/*
 * The agent loop (see agent.h): model turn → tool calls through the session
 * → results → next turn, with approval pauses, budgets, notifications from
 * the session's tick and compaction of old tool outputs. This file holds the
 * small helpers shared by the agent's files, the public setup and the loop
 * (run, answer, resume, parallel groups of read-only calls); sub-agents are in
 * subagent.c, background tasks in background.c, save/restore in agent_save.c.
 */

#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "agent/agent_internal.h"

#define PREVIEW_BYTES 200
#define SUB_DEFAULT_MS (30LL * 60 * 1000) /* the Agent tool's fixed 30-minute limit */
#define NOTE_OPEN "<system-notification>\n"
#define NOTE_CLOSE "\n</system-notification>"

void agti_agent_susp_free(susp *sp)
{
    if (!sp)
        return;
    free(sp->subs);
    free(sp->desc);
    free(sp->note);
    free(sp);
}

/* ---- small helpers ----------------------------------------------------- */

int64_t agti_agent_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a sub-agent's run reached its deadline (the root has none). */
static bool out_of_time(agt_agent *a)
{
    int64_t d = atomic_load(&a->deadline);
    return d != 0 && agti_agent_mono_ms() >= d;
}

void agti_agent_calls_clear(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        if (a->calls[i].susp) {
            agti_session_drop_suspended(a->session, a->calls[i].id);
            agti_agent_susp_free(a->calls[i].susp);
        }
        free(a->calls[i].id);
        free(a->calls[i].name);
        free(a->calls[i].args);
        free(a->calls[i].text);
    }
    free(a->calls);
    a->calls = NULL;
    a->n_calls = 0;
}

static int emit(agt_agent *a, int kind, const char *data, size_t len)
{
    if (!a->event_fn)
        return 0;
    if (a->event_fn(kind, data, len, a->event_payload) != 0) {
        atomic_store(&a->cancelled, 1);
        return 1;
    }
    return 0;
}

/* Emits a JSON event; steals obj. */
void agti_agent_emit_json(agt_agent *a, int kind, json_t *obj)
{
    if (a->event_fn && obj) {
        char *s = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (s)
            emit(a, kind, s, strlen(s));
        free(s);
    }
    json_decref(obj);
}

static size_t messages_bytes(const json_t *messages)
{
    char *s = json_dumps(messages, JSON_COMPACT);
    size_t n = s ? strlen(s) : 0;
    free(s);
    return n;
}

static json_t *text_value(const char *s)
{
    agti_buf b = AGTI_BUF_INIT;
    agti_utf8_sanitize(&b, s, strlen(s));
    json_t *v = b.oom ? NULL : json_stringn(agti_buf_cstr(&b), b.len);
    agti_buf_free(&b);
    return v;
}

static int push_message(agt_agent *a, const char *role, const char *content)
{
    json_t *m = json_object();
    json_t *c = text_value(content);
    if (!m || !c || json_object_set_new(m, "role", json_string(role)) ||
        json_object_set_new(m, "content", c) || json_array_append_new(a->messages, m)) {
        json_decref(m);
        return agti_oom();
    }
    return AGT_OK;
}

/* ---- public setup ------------------------------------------------------ */

int agt_agent_new(agt_agent **out, agt_session *session, agt_model *model)
{
    if (!out || !session || !model)
        return agti_error(AGT_EINVAL, "agt_agent_new: %s is NULL",
                          !out       ? "out"
                          : !session ? "session"
                                     : "model");
    *out = NULL;
    agt_agent *a = calloc(1, sizeof *a);
    if (!a || !(a->messages = json_array())) {
        free(a);
        return agti_oom();
    }
    a->session = session;
    a->model = model;
    a->max_turns = 50;
    a->percent = 80;
    a->last_count = -1;
    a->swarm_max = 0; /* AgentSwarm: the reference's ramp without a cap */
    atomic_init(&a->parallel_max, 4);
    atomic_init(&a->subagent_ms, SUB_DEFAULT_MS);
    atomic_init(&a->deadline, 0);
    atomic_init(&a->cancelled, 0);
    pthread_mutex_init(&a->subs_lock, NULL);
    *out = a;
    return AGT_OK;
}

void agt_agent_free(agt_agent *a)
{
    if (!a)
        return;
    agti_error_forget(a);
    agti_agent_bg_free_all(a);
    if (!a->self && agti_session_pending_ext_payload(a->session) == a)
        agti_session_set_pending_ext(a->session, NULL, NULL);
    agti_agent_lost_free_all(a);
    agti_agent_calls_clear(a);
    agti_agent_susp_free(a->new_susp);
    json_decref(a->messages);
    free(a->last_text);
    for (size_t i = 0; i < a->n_subs; i++)
        agti_agent_sub_free(a->subs[i]);
    free(a->subs);
    agti_agent_profiles_free(a);
    free(a->tools_cache);
    pthread_mutex_destroy(&a->subs_lock);
    free(a);
}

int agt_agent_set_system_prompt(agt_agent *a, const char *text)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_set_system_prompt: agent is NULL");
    json_t *first = json_array_get(a->messages, 0);
    bool has = first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0;
    if (!text) {
        if (has)
            json_array_remove(a->messages, 0);
        return AGT_OK;
    }
    json_t *c = text_value(text);
    if (!c)
        return agti_oom();
    if (has)
        return json_object_set_new(first, "content", c) ? agti_oom() : AGT_OK;
    json_t *m = json_pack("{s:s,s:o}", "role", "system", "content", c);
    if (!m || json_array_insert_new(a->messages, 0, m))
        return agti_oom();
    return AGT_OK;
}

int agt_agent_add_user_message(agt_agent *a, const char *text)
{
    if (!a || !text)
        return agti_error(AGT_EINVAL, "agt_agent_add_user_message: NULL argument");
    if (a->waiting)
        return agti_error(AGT_ESTATE, "the agent waits for approvals: answer them with "
                                      "agt_agent_answer() and call agt_agent_resume() first");
    return push_message(a, "user", text);
}

int agt_agent_set_event_callback(agt_agent *a, agt_agent_event_fn fn, void *payload)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_set_event_callback: agent is NULL");
    a->event_fn = fn;
    a->event_payload = payload;
    return AGT_OK;
}

int agt_agent_set_max_turns(agt_agent *a, int max_turns)
{
    if (!a || max_turns < 0)
        return agti_error(AGT_EINVAL, "agt_agent_set_max_turns: %s",
                          a ? "negative turns" : "agent is NULL");
    a->max_turns = max_turns;
    return AGT_OK;
}

int agt_agent_set_token_budget(agt_agent *a, int64_t tokens)
{
    if (!a || tokens < 0)
        return agti_error(AGT_EINVAL, "agt_agent_set_token_budget: %s",
                          a ? "negative budget" : "agent is NULL");
    a->token_budget = tokens;
    return AGT_OK;
}

int agt_agent_set_context_window(agt_agent *a, int64_t tokens, int percent)
{
    if (!a || tokens < 0 || percent < 1 || percent > 100)
        return agti_error(AGT_EINVAL, "agt_agent_set_context_window: %s",
                          !a           ? "agent is NULL"
                          : tokens < 0 ? "negative window"
                                       : "percent not in 1..100");
    a->window = tokens;
    a->percent = percent;
    return AGT_OK;
}

void agt_agent_cancel(agt_agent *a)
{
    if (!a)
        return;
    atomic_store(&a->cancelled, 1);
    agt_model_cancel(a->model);
    /* background sub-agents go on (TaskStop ends them), like background commands */
    pthread_mutex_lock(&a->subs_lock);
    for (size_t i = 0; i < a->n_subs; i++) {
        bool in_bg = false;
        for (const struct sub *p = a->subs[i]; p && !in_bg; p = p->parent)
            in_bg = atomic_load(&p->busy);
        if (!in_bg)
            agt_agent_cancel(a->subs[i]->agent);
    }
    pthread_mutex_unlock(&a->subs_lock);
}

int agt_agent_stop_reason(const agt_agent *a)
{
    return a ? a->stop : AGT_AGENT_STOP_NONE;
}

int agt_agent_turns(const agt_agent *a)
{
    return a ? a->turns : 0;
}

int64_t agt_agent_tokens_used(const agt_agent *a)
{
    return a ? a->tokens_used : 0;
}

const char *agt_agent_text(const agt_agent *a)
{
    return a && a->last_text ? a->last_text : "";
}

int agt_agent_messages(const agt_agent *a, char **out_json)
{
    if (!a || !out_json)
        return agti_error(AGT_EINVAL, "agt_agent_messages: NULL argument");
    *out_json = json_dumps(a->messages, JSON_COMPACT | JSON_PRESERVE_ORDER);
    return *out_json ? AGT_OK : agti_oom();
}

int agt_agent_set_parallel_tools(agt_agent *a, int max)
{
    if (!a || max < 1 || max > 64)
        return agti_error(AGT_EINVAL, "agt_agent_set_parallel_tools: %s",
                          a ? "max not in 1..64" : "agent is NULL");
    atomic_store(&a->parallel_max, max);
    return AGT_OK;
}

/* ---- the loop ---------------------------------------------------------- */

/* Adds the session's background events as notifications. */
static int add_notifications(agt_agent *a)
{
    char *events = NULL;
    int rc = agt_session_tick(a->session, -1, &events);
    if (rc != AGT_OK && rc != AGT_EIO)
        return rc;
    json_t *arr = events ? json_loads(events, 0, NULL) : NULL;
    agt_free(events);
    size_t i;
    json_t *ev;
    json_array_foreach(arr, i, ev)
    {
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (type && strcmp(type, "approval_needed") == 0) {
            rc = agti_agent_ask_bg_event(a, ev);
            if (rc != AGT_OK)
                break;
        }
        const char *msg = json_string_value(json_object_get(ev, "message"));
        if (!msg)
            continue;
        char *text = agti_aprintf(NOTE_OPEN "%s" NOTE_CLOSE, msg);
        rc = text ? push_message(a, "user", text) : agti_oom();
        free(text);
        if (rc != AGT_OK)
            break;
        agti_agent_emit_json(a, AGT_AGENT_NOTIFICATION, json_incref(ev));
    }
    json_decref(arr);
    return rc == AGT_EIO ? AGT_OK : rc;
}

static int64_t estimate_tokens(const agt_agent *a, size_t bytes)
{
    if (a->last_count >= 0 && bytes >= a->bytes_at_count)
        return a->last_count + (int64_t)((bytes - a->bytes_at_count) / 4);
    return (int64_t)(bytes / 4);
}

/* The tool name of a tool_call_id, from the assistant messages before index. */
static const char *tool_name_of(const json_t *messages, size_t before, const char *id)
{
    for (size_t k = before; k-- > 0;) {
        json_t *m = json_array_get(messages, k);
        size_t j;
        json_t *tc;
        json_array_foreach(json_object_get(m, "tool_calls"), j, tc)
        {
            const char *tid = json_string_value(json_object_get(tc, "id"));
            if (tid && strcmp(tid, id) == 0)
                return json_string_value(json_object_get(json_object_get(tc, "function"), "name"));
        }
    }
    return NULL;
}

static void compact(agt_agent *a)
{
    if (a->window <= 0)
        return;
    int64_t threshold = a->window * a->percent / 100;
    size_t bytes = messages_bytes(a->messages);
    int64_t est = estimate_tokens(a, bytes);
    if (est <= threshold)
        return;
    /* the latest turn's tool results are the messages after the last assistant message */
    size_t n = json_array_size(a->messages), last_assistant = 0;
    for (size_t k = 0; k < n; k++)
        if (strcmp(json_string_value(json_object_get(json_array_get(a->messages, k), "role")),
                   "assistant") == 0)
            last_assistant = k;
    for (size_t k = 0; k < last_assistant && est > threshold; k++) {
        json_t *m = json_array_get(a->messages, k);
        if (strcmp(json_string_value(json_object_get(m, "role")), "tool") != 0)
            continue;
        json_t *content = json_object_get(m, "content");
        if (!json_is_string(content) || strncmp(json_string_value(content), "[output of ", 11) == 0)
            continue;
        size_t len = json_string_length(content);
        const char *id = json_string_value(json_object_get(m, "tool_call_id"));
        const char *name = id ? tool_name_of(a->messages, k, id) : NULL;
        char *note =
            agti_aprintf("[output of %s compacted: %zu bytes]", name ? name : "a tool", len);
        if (!note || strlen(note) >= len) {
            free(note);
            continue;
        }
        size_t saved = len - strlen(note);
        json_object_set_new(m, "content", json_string(note));
        free(note);
        est -= (int64_t)(saved / 4);
        if (a->last_count >= 0) {
            a->last_count -= (int64_t)(saved / 4);
            if (a->last_count < 0)
                a->last_count = 0;
        }
        agti_agent_emit_json(a, AGT_AGENT_COMPACTED,
                             json_pack("{s:s,s:s,s:I}", "id", id ? id : "", "name",
                                       name ? name : "", "bytes", (json_int_t)len));
    }
    a->bytes_at_count = messages_bytes(a->messages);
}

typedef struct sink_ctx {
    agt_agent *a;
} sink_ctx;

static int forward(int kind, const char *text, size_t len, void *payload)
{
    agt_agent *a = ((sink_ctx *)payload)->a;
    if (atomic_load(&a->cancelled))
        return 1;
    if (kind == AGT_STREAM_TEXT)
        return emit(a, AGT_AGENT_TEXT, text, len);
    if (kind == AGT_STREAM_THINKING)
        return emit(a, AGT_AGENT_THINKING, text, len);
    return 0;
}

/* Appends the assistant message of a response and takes its tool calls. */
static int take_response(agt_agent *a, const agt_model_response *r)
{
    json_t *m = json_object();
    if (!m)
        return agti_oom();
    json_object_set_new(m, "role", json_string("assistant"));
    const char *text = agt_model_response_text(r);
    json_object_set_new(m, "content", *text ? json_string(text) : json_null());
    if (*agt_model_response_thinking(r))
        json_object_set_new(m, "reasoning_content", json_string(agt_model_response_thinking(r)));
    size_t n = agt_model_response_tool_count(r);
    if (n) {
        json_t *tcs = json_array();
        a->calls = calloc(n, sizeof *a->calls);
        if (!tcs || !a->calls) {
            json_decref(tcs);
            json_decref(m);
            return agti_oom();
        }
        a->n_calls = n;
        for (size_t i = 0; i < n; i++) {
            call *c = &a->calls[i];
            c->id = agti_strdup(agt_model_response_tool_id(r, i));
            c->name = agti_strdup(agt_model_response_tool_name(r, i));
            c->args = agti_strdup(agt_model_response_tool_arguments(r, i));
            json_array_append_new(tcs, json_pack("{s:s,s:s,s:{s:s,s:s}}", "id", c->id ? c->id : "",
                                                 "type", "function", "function", "name",
                                                 c->name ? c->name : "", "arguments",
                                                 c->args ? c->args : "{}"));
            if (!c->id || !c->name || !c->args) {
                json_decref(tcs);
                json_decref(m);
                agti_agent_calls_clear(a);
                return agti_oom();
            }
        }
        json_object_set_new(m, "tool_calls", tcs);
    }
    if (json_array_append_new(a->messages, m))
        return agti_oom();
    free(a->last_text);
    a->last_text = agti_strdup(text);
    return AGT_OK;
}

void agti_agent_finished_event(agt_agent *a, const call *c)
{
    size_t len = strlen(c->text);
    size_t pv = agti_utf8_floor(c->text, len < PREVIEW_BYTES ? len : PREVIEW_BYTES);
    agti_agent_emit_json(a, AGT_AGENT_TOOL_FINISHED,
                         json_pack("{s:s,s:s,s:b,s:I,s:s%}", "id", c->id, "name", c->name,
                                   "is_error", c->is_error, "bytes", (json_int_t)len, "preview",
                                   c->text, pv));
}

int agti_agent_set_result(call *c, const agt_result *res)
{
    char *t = agti_strdup(agt_result_text(res));
    if (!t)
        return agti_oom();
    free(c->text);
    c->text = t;
    c->is_error = agt_result_is_error(res) != 0;
    c->answered = true;
    return AGT_OK;
}

/* Whether a call under a waits that no AGT_EPENDING return showed the host
 * yet (it appeared while the host answered another, e.g. an approved Agent
 * call whose sub-agent paused at once); with mark, marks them shown. */
static bool unpresented(agt_agent *a, bool mark)
{
    bool any = false;
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (c->susp) {
            for (size_t k = 0; k < c->susp->n; k++)
                any |= unpresented(c->susp->subs[k]->agent, mark);
        } else if (!c->presented) {
            any = true;
            c->presented |= mark;
        }
    }
    return any;
}

/* A stop with AGT_EPENDING: the host sees every waiting call now. */
static int paused(agt_agent *a)
{
    if (!a->self)
        unpresented(a, true);
    a->stop = AGT_AGENT_STOP_APPROVAL;
    return agti_error(AGT_EPENDING, "agent paused: tool calls wait for approval");
}

/* After a dispatch or answer of c returned AGT_EPENDING: the call waits for
 * approval, or its provider suspended it on sub-agents (a->new_susp). */
static void took_pending(agt_agent *a, call *c)
{
    a->waiting = true;
    if (a->new_susp) {
        c->susp = a->new_susp;
        a->new_susp = NULL;
        return;
    }
    c->announced = !a->self;
    agti_agent_emit_json(
        a, AGT_AGENT_APPROVAL,
        json_pack("{s:s,s:s,s:s}", "id", c->id, "name", c->name, "arguments", c->args));
}

static void started_event(agt_agent *a, const call *c)
{
    agti_agent_emit_json(
        a, AGT_AGENT_TOOL_STARTED,
        json_pack("{s:s,s:s,s:s}", "id", c->id, "name", c->name, "arguments", c->args));
}

/* Takes the outcome of a dispatch, answer or completed job of c: a result,
 * a wait (AGT_EPENDING), or a failure that becomes an error result. With
 * event, the finished event is given now. AGT_OK, or AGT_ENOMEM. */
static int take_outcome(agt_agent *a, call *c, int rc, agt_result *res, bool event)
{
    if (rc == AGT_OK) {
        rc = agti_agent_set_result(c, res);
        agt_result_free(res);
        if (rc != AGT_OK)
            return rc;
    } else if (rc == AGT_EPENDING) {
        took_pending(a, c);
        return AGT_OK;
    } else if (rc == AGT_ENOMEM) {
        return rc;
    } else {
        char *t = agti_aprintf("Tool call failed: %s", agt_error_message());
        if (!t)
            return agti_oom();
        free(c->text);
        c->text = t;
        c->is_error = true;
        c->answered = true;
    }
    if (event)
        agti_agent_finished_event(a, c);
    return AGT_OK;
}

/* One call through agt_session_dispatch: everything that is not a
 * read-only built-in, and every call when the bound is 1. */
static int dispatch_one(agt_agent *a, call *c)
{
    started_event(a, c);
    if (strcmp(c->name, "task_done") == 0)
        a->task_done = true;
    agt_result *res = NULL;
    a->dispatching++;
    int rc = agt_session_dispatch(a->session, c->id, c->name, c->args, &res);
    a->dispatching--;
    return take_outcome(a, c, rc, res, true);
}

typedef struct pool {
    agti_session_job **jobs; /* the jobs to run; NULL entries are skipped */
    size_t n;
    atomic_size_t next;
} pool;

static void pool_work(pool *p)
{
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return;
        if (p->jobs[i] != NULL && agti_session_job_parallel_safe(p->jobs[i]))
            agti_session_job_execute(p->jobs[i]);
    }
}

static void *pool_main(void *arg)
{
    pool_work(arg);
    return NULL;
}

/* Runs the parallel-safe jobs on up to max threads, the host's included
 * (a thread that cannot be started leaves its share to the others). */
static void pool_run(agti_session_job **jobs, size_t n, int max)
{
    size_t ready = 0;
    for (size_t i = 0; i < n; i++)
        ready += jobs[i] != NULL && agti_session_job_parallel_safe(jobs[i]);
    pool p = {jobs, n, 0};
    size_t want = ready < (size_t)max ? ready : (size_t)max;
    pthread_t th[64];
    size_t started = 0;
    while (started + 1 < want && pthread_create(&th[started], NULL, pool_main, &p) == 0)
        started++;
    pool_work(&p);
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* A run of consecutive calls to parallel-safe tools (calls [from, to)):
 * prepared in call order on this thread (started events, approval, the
 * pre-hooks), their providers run concurrently, then completed in call
 * order (post-hooks, finished events). A call answered in prepare (refused,
 * bad arguments) or waiting for approval takes no thread. */
static int dispatch_group(agt_agent *a, size_t from, size_t to, int max)
{
    size_t n = to - from;
    agti_session_job **jobs = calloc(n, sizeof *jobs);
    if (!jobs)
        return agti_oom();
    int rc = AGT_OK;
    size_t k = 0;
    for (; k < n && rc == AGT_OK; k++) {
        call *c = &a->calls[from + k];
        started_event(a, c);
        agt_result *res = NULL;
        a->dispatching++;
        int prc = agti_session_prepare(a->session, c->id, c->name, c->args, &jobs[k], &res);
        a->dispatching--;
        if (prc != AGT_OK || jobs[k] == NULL)
            rc = take_outcome(a, c, prc, res, false);
    }
    if (rc == AGT_OK)
        pool_run(jobs, n, max);
    for (size_t i = 0; i < n; i++) {
        call *c = &a->calls[from + i];
        if (rc != AGT_OK) {
            agti_session_job_free(jobs[i]);
        } else if (jobs[i] != NULL) {
            agt_result *res = NULL;
            int crc = agti_session_job_complete(jobs[i], &res);
            rc = take_outcome(a, c, crc, res, true);
        } else if (c->answered) {
            agti_agent_finished_event(a, c);
        }
    }
    free(jobs);
    return rc;
}

static agt_agent *root_of(agt_agent *a)
{
    return a->self ? a->self->root : a;
}

/* The calls from index `from` on do not start: the run's time limit ran out,
 * or the host cancelled the run (the conversation still gets a result for
 * each). */
static int skip_calls(agt_agent *a, size_t from, const char *why)
{
    for (size_t i = from; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        free(c->text);
        c->text = agti_strdup(why);
        if (!c->text)
            return agti_oom();
        c->answered = true;
        c->is_error = true;
    }
    return AGT_OK;
}

/* Answers c with an error result without dispatching it. */
static int refuse_call(agt_agent *a, call *c, char *text)
{
    if (!text)
        return agti_oom();
    started_event(a, c);
    free(c->text);
    c->text = text;
    c->is_error = true;
    c->answered = true;
    agti_agent_finished_event(a, c);
    return AGT_OK;
}

/* The calls the loop answers itself: a tool the sub-agent's profile does
 * not allow, and an AgentSwarm call that is not the only call of its
 * response (the reference's rule; the other calls run). */
static int refuse_calls(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        int rc = AGT_OK;
        if (a->self && !agti_agent_sub_allows(a->self, c->name)) {
            agti_buf b = AGTI_BUF_INIT;
            agti_buf_printf(&b,
                            "%s is not available to this sub-agent: its profile '%s' allows only ",
                            c->name, a->self->profile ? a->self->profile : "?");
            size_t k;
            json_t *v;
            json_array_foreach(a->self->tools, k, v)
            {
                agti_buf_printf(&b, "%s%s", k ? ", " : "", json_string_value(v));
            }
            if (json_array_size(a->self->tools) == 0)
                agti_buf_puts(&b, "no tools");
            agti_buf_puts(&b, ". Do the task with those, or say in your report what is left to "
                              "do.");
            rc = refuse_call(a, c, agti_buf_detach(&b));
        } else if (a->n_calls > 1 && strcmp(c->name, "AgentSwarm") == 0) {
            rc = refuse_call(
                a, c,
                agti_aprintf("AgentSwarm was not run: it must be the only tool call in its "
                             "response, and this response has %zu calls (the others ran). Call "
                             "AgentSwarm again in a response of its own; to run several swarms, "
                             "call one, wait for its result, then the next, or cover the work "
                             "with a single prompt_template.",
                             a->n_calls));
        }
        if (rc != AGT_OK)
            return rc;
    }
    return AGT_OK;
}

/* Dispatches the calls of the turn; sets a->waiting when some need approval.
 * Runs of two or more consecutive parallel-safe calls go to dispatch_group,
 * every other call is a barrier dispatched on its own. */
static int dispatch_calls(agt_agent *a)
{
    int max = atomic_load(&root_of(a)->parallel_max);
    int rrc = refuse_calls(a);
    if (rrc != AGT_OK)
        return rrc;
    size_t i = 0;
    while (i < a->n_calls) {
        if (a->calls[i].answered) {
            i++;
            continue;
        }
        if (out_of_time(a))
            return skip_calls(a, i,
                              "Not run: the sub-agent's time limit ran out before this call "
                              "started.");
        /* cancelled (an event callback returned non-zero, e.g. the user
         * interrupted the call before): the rest of the turn does not run */
        if (atomic_load(&a->cancelled))
            return skip_calls(a, i,
                              "Not run: the run was cancelled (the user interrupted it) "
                              "before this call started.");
        size_t j = i;
        while (max > 1 && j < a->n_calls && !a->calls[j].answered &&
               agti_session_parallel_safe(a->session, a->calls[j].name))
            j++;
        int rc;
        if (j - i >= 2) {
            rc = dispatch_group(a, i, j, max);
            i = j;
        } else {
            rc = dispatch_one(a, &a->calls[i]);
            i++;
        }
        if (rc != AGT_OK)
            return rc;
    }
    return AGT_OK;
}

/* Appends the results of the turn's calls as tool messages, in call order. */
int agti_agent_append_results(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        json_t *m = json_pack("{s:s,s:s,s:s}", "role", "tool", "tool_call_id", c->id, "content",
                              c->text ? c->text : "");
        if (m && c->is_error)
            json_object_set_new(m, "is_error", json_true());
        if (!m || json_array_append_new(a->messages, m))
            return agti_oom();
    }
    agti_agent_calls_clear(a);
    return AGT_OK;
}

static int stop(agt_agent *a, int reason, int rc)
{
    a->stop = reason;
    return rc;
}

static int finish_turn(agt_agent *a)
{
    int rc = agti_agent_append_results(a);
    if (rc != AGT_OK)
        return rc;
    if (a->task_done) {
        a->task_done = false;
        return stop(a, AGT_AGENT_STOP_TASK_DONE, AGT_OK);
    }
    return 1; /* go on */
}

/* The tools offered in the session's phase. A frozen registry cannot
 * change, so its export is kept (and swarm sub-agents get it from the main
 * thread, instead of sharing the registry's JSON between threads). */
int agti_agent_offered_tools(agt_agent *a, const char **out)
{
    agt_registry *reg = agt_session_registry(a->session);
    int phase = agt_session_phase(a->session);
    if (a->tools_cache && a->tools_phase == phase && agt_registry_is_frozen(reg)) {
        *out = a->tools_cache;
        return AGT_OK;
    }
    char *t = NULL;
    int rc = agt_registry_export(reg, "openai", phase, &t);
    if (rc != AGT_OK)
        return rc;
    if (a->self && a->self->tools) {
        /* a sub-agent's profile: only the tools it allows are offered */
        json_t *all = json_loads(t, 0, NULL), *kept = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(all, i, v)
        {
            const char *name =
                json_string_value(json_object_get(json_object_get(v, "function"), "name"));
            if (!name)
                name = json_string_value(json_object_get(v, "name"));
            if (kept && name && agti_agent_sub_allows(a->self, name) &&
                json_array_append(kept, v) != 0) {
                json_decref(kept);
                kept = NULL;
            }
        }
        char *ft = all && kept ? json_dumps(kept, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(all);
        json_decref(kept);
        free(t);
        if (!ft)
            return agti_oom();
        t = ft;
    }
    free(a->tools_cache);
    a->tools_cache = t;
    a->tools_phase = phase;
    *out = t;
    return AGT_OK;
}

static int time_up(agt_agent *a)
{
    a->timed_out = true;
    return stop(a, AGT_AGENT_STOP_ERROR,
                agti_error(AGT_ETIMEOUT, "sub-agent stopped: its time limit ran out"));
}

/* The model's cancel poll during a model call of a run with a deadline:
 * the deadline, then the poll the host set (kept, and put back after). */
typedef struct deadline_poll {
    agt_agent *a;
    agt_cancel_fn fn;
    void *payload;
} deadline_poll;

static int poll_deadline(void *payload)
{
    deadline_poll *dp = payload;
    if (out_of_time(dp->a))
        return 1;
    return dp->fn ? dp->fn(dp->payload) : 0;
}

static int loop(agt_agent *a)
{
    for (;;) {
        if (atomic_load(&a->cancelled))
            return stop(a, AGT_AGENT_STOP_CANCELLED,
                        agti_error(AGT_ECANCELLED, "agent run cancelled by the host"));
        if (out_of_time(a))
            return time_up(a);
        int rc = add_notifications(a);
        if (rc != AGT_OK)
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        if (a->max_turns > 0 && a->run_turns >= a->max_turns)
            return stop(a, AGT_AGENT_STOP_MAX_TURNS,
                        agti_error(AGT_ELIMIT,
                                   "agent stopped: turn budget of %d model calls used up",
                                   a->max_turns));
        if (a->token_budget > 0 && a->tokens_used >= a->token_budget)
            return stop(a, AGT_AGENT_STOP_MAX_TOKENS,
                        agti_error(AGT_ELIMIT,
                                   "agent stopped: token budget of %lld used up (%lld used)",
                                   (long long)a->token_budget, (long long)a->tokens_used));
        compact(a);
        const char *tools = NULL;
        rc = agti_agent_offered_tools(a, &tools);
        if (rc != AGT_OK)
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        char *msgs = json_dumps(a->messages, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!msgs)
            return stop(a, AGT_AGENT_STOP_ERROR, agti_oom());
        size_t sent_bytes = strlen(msgs);
        sink_ctx sc = {a};
        agt_model_response *r = NULL;
        /* a model used by one thread at a time: the poll is swapped in for the call */
        deadline_poll dp = {a, a->model->cancel_fn, a->model->cancel_payload};
        bool timed = atomic_load(&a->deadline) != 0;
        if (timed) {
            a->model->cancel_fn = poll_deadline;
            a->model->cancel_payload = &dp;
        }
        rc = agti_model_complete_sink(&r, a->model, msgs, sent_bytes, tools, strlen(tools), forward,
                                      &sc);
        if (timed) {
            a->model->cancel_fn = dp.fn;
            a->model->cancel_payload = dp.payload;
        }
        free(msgs);
        if (rc != AGT_OK && !atomic_load(&a->cancelled) && out_of_time(a)) {
            agt_model_response_free(r);
            return time_up(a);
        }
        if (rc != AGT_OK) {
            if (rc == AGT_ECANCELLED || atomic_load(&a->cancelled))
                return stop(a, AGT_AGENT_STOP_CANCELLED,
                            agti_error(AGT_ECANCELLED, "agent run cancelled by the host"));
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        }
        a->turns++;
        a->run_turns++;
        int64_t p, c, t;
        agt_model_response_usage(r, &p, &c, &t);
        rc = take_response(a, r);
        size_t reply_bytes = strlen(agt_model_response_json(r));
        agt_model_response_free(r);
        if (rc != AGT_OK)
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        if (t < 0)
            t = (int64_t)((sent_bytes + reply_bytes) / 4);
        a->tokens_used += t;
        a->last_count = p >= 0 && c >= 0 ? p + c : -1;
        a->bytes_at_count = messages_bytes(a->messages);
        agti_agent_emit_json(a, AGT_AGENT_USAGE,
                             json_pack("{s:i,s:I,s:I,s:I,s:I}", "turn", a->turns, "prompt_tokens",
                                       (json_int_t)p, "completion_tokens", (json_int_t)c,
                                       "total_tokens", (json_int_t)t, "tokens_used",
                                       (json_int_t)a->tokens_used));
        if (a->n_calls == 0)
            return stop(a, AGT_AGENT_STOP_DONE, AGT_OK);
        rc = dispatch_calls(a);
        agti_agent_susp_free(a->new_susp); /* a provider that suspended, then failed */
        a->new_susp = NULL;
        if (rc != AGT_OK)
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        if (a->waiting) {
            agti_agent_announce(a);
            return paused(a);
        }
        rc = finish_turn(a);
        if (rc != 1)
            return rc;
    }
}

static int agent_run(agt_agent *a)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_run: agent is NULL");
    if (a->waiting)
        return agti_error(AGT_ESTATE, "the agent waits for approvals: answer them with "
                                      "agt_agent_answer() and call agt_agent_resume()");
    bool has_user = false;
    size_t i;
    json_t *m;
    json_array_foreach(a->messages, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "role")), "user") == 0)
            has_user = true;
    }
    if (!has_user)
        return agti_error(AGT_ESTATE, "the conversation has no user message to answer");
    atomic_store(&a->cancelled, 0);
    a->run_turns = 0;
    a->task_done = false;
    a->timed_out = false;
    return loop(a);
}

int agt_agent_run(agt_agent *a)
{
    int rc = agent_run(a);
    agti_error_keep(a, rc);
    return rc;
}

int agt_agent_answer(agt_agent *a, const char *call_id, int decision, const char *reason)
{
    if (!a || !call_id)
        return agti_error(AGT_EINVAL, "agt_agent_answer: NULL argument");
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (strcmp(c->id, call_id) != 0 || c->answered || c->susp)
            continue;
        agt_result *res = NULL;
        /* a restored session keeps no pending approvals: the call waits again */
        int rc = agti_session_repark(a->session, c->id, c->name, c->args);
        if (rc != AGT_OK)
            return rc;
        a->dispatching++;
        rc = agt_session_answer(a->session, call_id, decision, reason, &res);
        a->dispatching--;
        if (rc == AGT_EPENDING) {
            /* approved, and it suspended on a sub-agent of its own */
            took_pending(a, c);
            agti_agent_susp_free(a->new_susp);
            a->new_susp = NULL;
            agti_agent_announce(a);
            return AGT_OK;
        }
        agti_agent_susp_free(a->new_susp);
        a->new_susp = NULL;
        if (rc != AGT_OK)
            return rc;
        rc = agti_agent_set_result(c, res);
        agt_result_free(res);
        if (rc == AGT_OK)
            agti_agent_finished_event(a, c);
        return rc;
    }
    /* "agent-N/<call id>": a waiting call of a sub-agent under this agent */
    const char *slash = strchr(call_id, '/');
    if (slash && (size_t)(slash - call_id) < 32) {
        char sid[32];
        snprintf(sid, sizeof sid, "%.*s", (int)(slash - call_id), call_id);
        struct sub *sb = a->waiting ? agti_agent_waiting_sub(a, sid) : NULL;
        if (sb) {
            int rc = agti_agent_answer_in_sub(sb, slash + 1, decision, reason);
            agti_agent_announce(a);
            return rc;
        }
        struct bgtask *t = NULL;
        if (!a->self && (sb = agti_agent_bg_waiting_sub(a, sid, &t)) != NULL)
            return agti_agent_bg_answer(t, sb, slash + 1, decision, reason);
    }
    return agti_error(AGT_ENOTFOUND, "no tool call '%s' waits for approval in this agent", call_id);
}

static int agent_resume(agt_agent *a)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_resume: agent is NULL");
    if (!a->waiting)
        return agti_error(AGT_ESTATE, "the agent is not paused for approval");
    if (!a->self && unpresented(a, false))
        return paused(a); /* answering made new calls wait: the pause goes on */
    char *still = agti_agent_first_unanswered(a);
    if (still) {
        agti_error(AGT_ESTATE, "tool call %s still waits for approval", still);
        free(still);
        return AGT_ESTATE;
    }
    atomic_store(&a->cancelled, 0);
    a->timed_out = false;
    int rc = agti_agent_continue_suspended(a);
    if (rc == AGT_EPENDING) {
        agti_agent_announce(a);
        return paused(a);
    }
    if (rc != AGT_OK)
        return stop(a, AGT_AGENT_STOP_ERROR, rc);
    a->waiting = false;
    rc = finish_turn(a);
    if (rc != 1)
        return rc;
    return loop(a);
}

int agt_agent_resume(agt_agent *a)
{
    int rc = agent_resume(a);
    agti_error_keep(a, rc);
    return rc;
}
