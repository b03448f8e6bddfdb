/*
 * The agent loop (see agent.h): model turn → tool calls through the session
 * → results → next turn, with approval pauses, budgets, notifications from
 * the session's tick and compaction of old tool outputs.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "dispatch/dispatch_internal.h"
#include "model/model_internal.h"
#include "session/events_internal.h"
#include "session/jobs.h"
#include "session/subapproval.h"

#define PREVIEW_BYTES 200
#define SUB_DEFAULT_MS (30LL * 60 * 1000) /* the Agent tool's fixed 30-minute limit */
#define SUB_MAX_MS (30LL * 24 * 3600 * 1000)
#define NOTE_OPEN "<system-notification>\n"
#define NOTE_CLOSE "\n</system-notification>"

/* An Agent or AgentSwarm call suspended while its sub-agents wait for
 * approval: what is needed to finish it later. */
typedef struct susp {
    bool swarm;
    struct sub **subs;
    size_t n;
    char *desc; /* Agent: the description */
    char *note; /* why it ran in the foreground, or NULL */
    bool parallel;
} susp;

typedef struct call {
    char *id;
    char *name;
    char *args;
    bool answered; /* a result is known */
    char *text;
    bool is_error;
    susp *susp;     /* suspended on sub-agents' approvals */
    bool announced; /* its AGT_AGENT_APPROVAL event was given to the root's host */
    bool presented; /* waiting when a run or resume returned AGT_EPENDING */
} call;

struct agt_agent {
    agt_session *session;
    agt_model *model;
    json_t *messages;
    agt_agent_event_fn event_fn;
    void *event_payload;
    int max_turns;
    int64_t token_budget;
    int64_t window;
    int percent;
    int turns;
    int run_turns; /* model calls in the current run */
    int64_t tokens_used;
    int64_t last_count; /* prompt + completion tokens of the last call; -1 unknown */
    size_t bytes_at_count;
    int stop;
    atomic_int cancelled;
    call *calls; /* the tool calls of the turn being handled */
    size_t n_calls;
    bool waiting; /* paused on approvals */
    bool task_done;
    char *last_text;
    /* sub-agents (the Agent tool), owned by the root agent */
    struct sub **subs;
    size_t n_subs;
    struct bgtask **bgs; /* background sub-agents and swarms */
    size_t n_bgs;
    size_t n_swarms;
    agt_subagent_approver_fn approver;
    void *approver_payload;
    int swarm_max;     /* AgentSwarm workers */
    char *tools_cache; /* the export of a frozen registry for tools_phase */
    int tools_phase;
    pthread_mutex_t subs_lock; /* subs against agt_agent_cancel() from other threads */
    struct sub *self;          /* the sub-agent this agent is, NULL for the root */
    int dispatching;           /* in a dispatch or answer of its own calls (can suspend one) */
    struct lost_task **lost;   /* restored background tasks that ran when saved */
    size_t n_lost;
    susp *new_susp;              /* set by the Agent/AgentSwarm provider that suspends its call */
    atomic_int parallel_max;     /* concurrent read-only calls of a turn (root's applies) */
    _Atomic int64_t subagent_ms; /* a sub-agent run's working-time limit, 0: none (root's) */
    _Atomic int64_t deadline;    /* CLOCK_MONOTONIC ms a sub-agent's run stops at, 0: none */
    bool timed_out;              /* the last run stopped at its deadline */
};

typedef struct sub {
    char id[32];
    agt_agent *root;
    int level;          /* 1: started by the root agent, 2: by a sub-agent */
    struct sub *parent; /* the sub-agent that started it, or NULL */
    atomic_bool busy;   /* running in a background task */
    struct bgtask *bg;  /* the background task running it, while busy */
    agt_session *session;
    agt_agent *agent;
    agt_model *own_model; /* a copy of the root's model for a swarm worker */
    char *item;           /* the AgentSwarm item it was started with */
    int rc;               /* the last run's status */
    int turns_before;
    bool on_host; /* runs on the host's thread: may ask the root session's approver */
    bool lost;    /* restored: it ran in the background when saved, its state is gone */
    /* the time limit of the current run (see sub_clock_start) */
    int64_t limit_ms;          /* the limit it started with, 0: none */
    int64_t left_ms;           /* working time left when it paused */
    bool clock_set;            /* limit_ms/left_ms belong to the current run */
    const struct sub *capped;  /* its parent, whose deadline came first; NULL: its own */
    _Atomic int64_t paused_ms; /* time spent in approvers during this stretch */
} sub;

static void susp_free(susp *sp)
{
    if (!sp)
        return;
    free(sp->subs);
    free(sp->desc);
    free(sp->note);
    free(sp);
}

/* ---- small helpers ----------------------------------------------------- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether a sub-agent's run reached its deadline (the root has none). */
static bool out_of_time(agt_agent *a)
{
    int64_t d = atomic_load(&a->deadline);
    return d != 0 && mono_ms() >= d;
}

static void calls_clear(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        if (a->calls[i].susp) {
            agti_session_drop_suspended(a->session, a->calls[i].id);
            susp_free(a->calls[i].susp);
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
static void emit_json(agt_agent *a, int kind, json_t *obj)
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

static void bg_free_all(agt_agent *root);
static void lost_free_all(agt_agent *root);

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
    a->swarm_max = 4;
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
    bg_free_all(a);
    if (!a->self && agti_session_pending_ext_payload(a->session) == a)
        agti_session_set_pending_ext(a->session, NULL, NULL);
    lost_free_all(a);
    calls_clear(a);
    susp_free(a->new_susp);
    json_decref(a->messages);
    free(a->last_text);
    for (size_t i = 0; i < a->n_subs; i++) {
        agt_agent_free(a->subs[i]->agent);
        agt_session_free(a->subs[i]->session);
        agt_model_free(a->subs[i]->own_model);
        free(a->subs[i]->item);
        free(a->subs[i]);
    }
    free(a->subs);
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

/* ---- the loop ---------------------------------------------------------- */

static int ask_bg_event(agt_agent *a, json_t *ev);

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
            rc = ask_bg_event(a, ev);
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
        emit_json(a, AGT_AGENT_NOTIFICATION, json_incref(ev));
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
        emit_json(a, AGT_AGENT_COMPACTED,
                  json_pack("{s:s,s:s,s:I}", "id", id ? id : "", "name", name ? name : "", "bytes",
                            (json_int_t)len));
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
                calls_clear(a);
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

static void finished_event(agt_agent *a, const call *c)
{
    size_t len = strlen(c->text);
    size_t pv = agti_utf8_floor(c->text, len < PREVIEW_BYTES ? len : PREVIEW_BYTES);
    emit_json(a, AGT_AGENT_TOOL_FINISHED,
              json_pack("{s:s,s:s,s:b,s:I,s:s%}", "id", c->id, "name", c->name, "is_error",
                        c->is_error, "bytes", (json_int_t)len, "preview", c->text, pv));
}

static int set_result(call *c, const agt_result *res)
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

static void announce(agt_agent *a);
static int continue_suspended(agt_agent *a);

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
    emit_json(a, AGT_AGENT_APPROVAL,
              json_pack("{s:s,s:s,s:s}", "id", c->id, "name", c->name, "arguments", c->args));
}

static void started_event(agt_agent *a, const call *c)
{
    emit_json(a, AGT_AGENT_TOOL_STARTED,
              json_pack("{s:s,s:s,s:s}", "id", c->id, "name", c->name, "arguments", c->args));
}

/* Takes the outcome of a dispatch, answer or completed job of c: a result,
 * a wait (AGT_EPENDING), or a failure that becomes an error result. With
 * event, the finished event is given now. AGT_OK, or AGT_ENOMEM. */
static int take_outcome(agt_agent *a, call *c, int rc, agt_result *res, bool event)
{
    if (rc == AGT_OK) {
        rc = set_result(c, res);
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
        finished_event(a, c);
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
            finished_event(a, c);
        }
    }
    free(jobs);
    return rc;
}

static agt_agent *root_of(agt_agent *a)
{
    return a->self ? a->self->root : a;
}

/* The calls from index `from` on do not start: the run's time limit ran out
 * (the conversation still gets a result for each). */
static int skip_calls(agt_agent *a, size_t from)
{
    for (size_t i = from; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        c->text = agti_strdup("Not run: the sub-agent's time limit ran out before this call "
                              "started.");
        if (!c->text)
            return agti_oom();
        c->answered = true;
        c->is_error = true;
    }
    return AGT_OK;
}

/* Dispatches the calls of the turn; sets a->waiting when some need approval.
 * Runs of two or more consecutive parallel-safe calls go to dispatch_group,
 * every other call is a barrier dispatched on its own. */
static int dispatch_calls(agt_agent *a)
{
    int max = atomic_load(&root_of(a)->parallel_max);
    size_t i = 0;
    while (i < a->n_calls) {
        if (out_of_time(a))
            return skip_calls(a, i);
        size_t j = i;
        while (max > 1 && j < a->n_calls &&
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
static int append_results(agt_agent *a)
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
    calls_clear(a);
    return AGT_OK;
}

static int stop(agt_agent *a, int reason, int rc)
{
    a->stop = reason;
    return rc;
}

static int finish_turn(agt_agent *a)
{
    int rc = append_results(a);
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
static int offered_tools(agt_agent *a, const char **out)
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
        rc = offered_tools(a, &tools);
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
        emit_json(a, AGT_AGENT_USAGE,
                  json_pack("{s:i,s:I,s:I,s:I,s:I}", "turn", a->turns, "prompt_tokens",
                            (json_int_t)p, "completion_tokens", (json_int_t)c, "total_tokens",
                            (json_int_t)t, "tokens_used", (json_int_t)a->tokens_used));
        if (a->n_calls == 0)
            return stop(a, AGT_AGENT_STOP_DONE, AGT_OK);
        rc = dispatch_calls(a);
        susp_free(a->new_susp); /* a provider that suspended, then failed */
        a->new_susp = NULL;
        if (rc != AGT_OK)
            return stop(a, AGT_AGENT_STOP_ERROR, rc);
        if (a->waiting) {
            announce(a);
            return paused(a);
        }
        rc = finish_turn(a);
        if (rc != 1)
            return rc;
    }
}

int agt_agent_run(agt_agent *a)
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

static struct sub *waiting_sub(agt_agent *a, const char *id);
struct bgtask;
static struct sub *bg_waiting_sub(agt_agent *root, const char *id, struct bgtask **out);
static int bg_answer(struct bgtask *t, struct sub *sb, const char *call_id, int decision,
                     const char *reason);
static int answer_in_sub(struct sub *sb, const char *call_id, int decision, const char *reason);
static char *first_unanswered(agt_agent *a);

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
            susp_free(a->new_susp);
            a->new_susp = NULL;
            announce(a);
            return AGT_OK;
        }
        susp_free(a->new_susp);
        a->new_susp = NULL;
        if (rc != AGT_OK)
            return rc;
        rc = set_result(c, res);
        agt_result_free(res);
        if (rc == AGT_OK)
            finished_event(a, c);
        return rc;
    }
    /* "agent-N/<call id>": a waiting call of a sub-agent under this agent */
    const char *slash = strchr(call_id, '/');
    if (slash && (size_t)(slash - call_id) < 32) {
        char sid[32];
        snprintf(sid, sizeof sid, "%.*s", (int)(slash - call_id), call_id);
        struct sub *sb = a->waiting ? waiting_sub(a, sid) : NULL;
        if (sb) {
            int rc = answer_in_sub(sb, slash + 1, decision, reason);
            announce(a);
            return rc;
        }
        struct bgtask *t = NULL;
        if (!a->self && (sb = bg_waiting_sub(a, sid, &t)) != NULL)
            return bg_answer(t, sb, slash + 1, decision, reason);
    }
    return agti_error(AGT_ENOTFOUND, "no tool call '%s' waits for approval in this agent", call_id);
}

int agt_agent_resume(agt_agent *a)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_resume: agent is NULL");
    if (!a->waiting)
        return agti_error(AGT_ESTATE, "the agent is not paused for approval");
    if (!a->self && unpresented(a, false))
        return paused(a); /* answering made new calls wait: the pause goes on */
    char *still = first_unanswered(a);
    if (still) {
        agti_error(AGT_ESTATE, "tool call %s still waits for approval", still);
        free(still);
        return AGT_ESTATE;
    }
    atomic_store(&a->cancelled, 0);
    a->timed_out = false;
    int rc = continue_suspended(a);
    if (rc == AGT_EPENDING) {
        announce(a);
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

/* ---- sub-agents (the Agent tool) --------------------------------------- */

#define SUB_MAX_DEPTH 2
#define SUB_PROMPT                                                                                 \
    "You are a sub-agent: another agent gave you the task below. Work on it with your tools, "     \
    "then end with a final answer that reports what you found or did; that answer is all the "     \
    "other agent sees."
#define BG_PREVIEW_BYTES 2048
#define BG_TRANSCRIPT_MAX (1024 * 1024)
#define BG_STOP_WAIT_MS 10000

/* A background sub-agent (Agent) or swarm (AgentSwarm): its thread, its
 * state for TaskList/TaskOutput/TaskStop and its notification. */
typedef struct bgtask {
    char id[32]; /* agent-N (the sub-agent's id) or swarm-N */
    char *description;
    agt_agent *root;
    bool swarm;
    sub **subs;
    size_t n;
    int workers;
    bool parallel;
    pthread_t th;
    bool joinable;
    int pipefd[2]; /* the read end becomes readable when it ends */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    /* under lock */
    bool done, stopped, failed;
    bool timed_out;     /* an Agent task whose sub-agent stopped at its time limit */
    bool waiting;       /* sub-agents wait for the host's answers (the thread sleeps) */
    bool answering;     /* the host answers one of them now */
    bool wait_reported; /* the approval_needed event was handed out */
    json_t *wait_calls; /* the waiting calls, agt_session_pending() shape */
    char *stop_reason;
    agti_buf transcript;
    char *result;  /* the report, once done */
    char *preview; /* the start of the final answer, once done */
} bgtask;

static sub *sub_find(agt_agent *root, const char *id)
{
    sub *found = NULL;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; id && i < root->n_subs; i++)
        if (strcmp(root->subs[i]->id, id) == 0)
            found = root->subs[i];
    pthread_mutex_unlock(&root->subs_lock);
    return found;
}

/* The sub-agent whose session made this call, or NULL for the root's. */
static sub *caller_of(agt_agent *root, agt_call *callp)
{
    agt_session *s = agt_call_session(callp);
    sub *found = NULL;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; i < root->n_subs; i++)
        if (root->subs[i]->session == s)
            found = root->subs[i];
    pthread_mutex_unlock(&root->subs_lock);
    return found;
}

/* Time spent waiting in an approver is not working time: it moves the
 * deadline of sb, and of the foreground parents waiting for it (up to the
 * sub-agent a background task runs), by ms. */
static void clock_pause(sub *sb, int64_t ms)
{
    for (sub *p = sb; p && ms > 0; p = p->parent) {
        int64_t d = atomic_load(&p->agent->deadline);
        while (d != 0 && !atomic_compare_exchange_weak(&p->agent->deadline, &d, d + ms))
            ;
        atomic_fetch_add(&p->paused_ms, ms);
        if (atomic_load(&p->busy))
            break;
    }
}

static int sub_approve(agt_approval *req, void *payload)
{
    sub *sb = payload;
    int64_t t0 = mono_ms();
    int d = sb->root->approver(sb->id, req, sb->root->approver_payload);
    clock_pause(sb, mono_ms() - t0);
    return d;
}

/* Whether a sub-agent runs (or waits) inside a background task now. */
static bool in_background(const sub *sb)
{
    for (const sub *p = sb; p; p = p->parent)
        if (atomic_load(&p->busy))
            return true;
    return false;
}

/* An APPROVE_SESSION answer to a sub-agent's request: the rule goes to the
 * root session (so the whole tree and later sub-agents get it, as they copy
 * the root's rules) and to the existing sub-agents that do not run in the
 * background (their sessions are another thread's now). except already has
 * it. A rule the session refuses is dropped: the call was approved once. */
static void share_session_rule(agt_agent *root, const sub *except, const char *rule)
{
    int rc = agti_session_add_session_rule(root->session, rule);
    if (rc != AGT_OK)
        return;
    pthread_mutex_lock(&root->subs_lock);
    for (size_t i = 0; i < root->n_subs; i++)
        if (root->subs[i] != except && !in_background(root->subs[i]))
            agti_session_add_session_rule(root->subs[i]->session, rule);
    pthread_mutex_unlock(&root->subs_lock);
}

/* The approver of a foreground sub-agent on the host's thread: the root
 * session's approver, asked with "agent_id" in the request. */
static int sub_forward(agt_approval *req, void *payload)
{
    sub *sb = payload;
    agt_approver_fn fn;
    void *fp;
    agti_session_approver(sb->root->session, &fn, &fp);
    if (!fn) {
        agt_approval_set_reason(req, "the host removed its approver");
        return AGT_DECISION_REJECT;
    }
    if (agti_approval_tag(req, sb->id) != AGT_OK)
        return AGT_DECISION_REJECT;
    int64_t t0 = mono_ms();
    int d = fn(req, fp);
    clock_pause(sb, mono_ms() - t0);
    if (d == AGT_DECISION_APPROVE_SESSION) {
        json_t *j = json_loads(agt_approval_json(req), 0, NULL);
        const char *tool = json_string_value(json_object_get(j, "tool"));
        const char *rule = agti_approval_session_rule(req);
        if (rule && tool && strcmp(tool, "ExitPlanMode") != 0)
            share_session_rule(sb->root, sb, rule);
        json_decref(j);
    }
    return d;
}

/* Chooses how a sub-agent's calls that need approval are asked: the host's
 * sub-agent approver (it takes precedence); else, on the host's thread, the
 * root session's approver; else they wait (the run pauses). */
static int sub_use_approver(sub *sb, bool host)
{
    agt_agent *root = sb->root;
    if (root->approver)
        return agt_session_set_approver(sb->session, sub_approve, sb);
    agt_approver_fn fn = NULL;
    void *fp = NULL;
    if (host)
        agti_session_approver(root->session, &fn, &fp);
    return agt_session_set_approver(sb->session, fn ? sub_forward : NULL, sb);
}

/* A new sub-agent: its own session (same registry and workspace, the parent
 * session's mode and rules), its own conversation and todo list. parent is
 * the sub-agent that starts it (NULL: the root agent). */
static int sub_new(agt_agent *root, agt_session *parent_s, sub *parent, bool own_model, sub **out)
{
    sub *sb = calloc(1, sizeof *sb);
    if (!sb)
        return agti_oom();
    sb->root = root;
    sb->parent = parent;
    sb->level = parent ? parent->level + 1 : 1;
    atomic_init(&sb->busy, false);
    int rc =
        agt_session_new(&sb->session, agt_session_registry(parent_s), agt_session_root(parent_s));
    char *rules = NULL;
    if (rc == AGT_OK)
        rc = agt_session_set_mode(sb->session, agt_session_mode(parent_s));
    if (rc == AGT_OK)
        rc = agt_session_rules(parent_s, &rules);
    if (rc == AGT_OK)
        rc = agt_session_load_rules(sb->session, rules, strlen(rules));
    agt_free(rules);
    if (rc == AGT_OK && own_model)
        rc = agti_model_clone(&sb->own_model, root->model);
    if (rc == AGT_OK)
        rc = agt_agent_new(&sb->agent, sb->session, sb->own_model ? sb->own_model : root->model);
    if (rc == AGT_OK) {
        sb->agent->self = sb;
        /* a sub-agent's child takes its parent's prompt (which has the note
         * already): the root's conversation may be in use on another thread */
        json_t *first = json_array_get(parent ? parent->agent->messages : root->messages, 0);
        const char *sys = NULL;
        if (first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0)
            sys = json_string_value(json_object_get(first, "content"));
        char *prompt = parent && sys ? agti_strdup(sys)
                       : sys         ? agti_aprintf("%s\n\n%s", sys, SUB_PROMPT)
                                     : agti_strdup(SUB_PROMPT);
        rc = prompt ? agt_agent_set_system_prompt(sb->agent, prompt) : agti_oom();
        free(prompt);
        sb->agent->max_turns = root->max_turns;
        sb->agent->window = root->window;
        sb->agent->percent = root->percent;
    }
    if (rc != AGT_OK) {
        agt_agent_free(sb->agent);
        agt_session_free(sb->session);
        agt_model_free(sb->own_model);
        free(sb);
        return rc;
    }
    /* grown and appended in one step: sub-agents of background tasks and
     * swarm workers start their own sub-agents concurrently */
    pthread_mutex_lock(&root->subs_lock);
    sub **grown = realloc(root->subs, (root->n_subs + 1) * sizeof *grown);
    if (grown) {
        root->subs = grown;
        snprintf(sb->id, sizeof sb->id, "agent-%zu", root->n_subs + 1);
        root->subs[root->n_subs++] = sb;
    }
    pthread_mutex_unlock(&root->subs_lock);
    if (!grown) {
        agt_agent_free(sb->agent);
        agt_session_free(sb->session);
        agt_model_free(sb->own_model);
        free(sb);
        return agti_oom();
    }
    *out = sb;
    return AGT_OK;
}

/* Starts a stretch of a sub-agent's run on its clock. A run (an Agent
 * call, a swarm item, a background task, a resume: "agent-N") starts with
 * the root's limit; its continuation after an approval pause (fresh false)
 * gets what was left, so the pause does not count. A sub-agent its parent
 * waits for also stops at the parent's deadline (a background one does not). */
static int64_t sub_clock_start(sub *sb, bool fresh)
{
    if (fresh || !sb->clock_set) {
        sb->limit_ms = atomic_load(&sb->root->subagent_ms);
        sb->left_ms = sb->limit_ms;
        sb->clock_set = true;
    }
    int64_t start = mono_ms();
    atomic_store(&sb->paused_ms, 0);
    int64_t d = 0;
    if (sb->limit_ms > 0)
        d = start + (sb->left_ms > 0 ? sb->left_ms : 0);
    sb->capped = NULL;
    int64_t pd =
        sb->parent && !atomic_load(&sb->busy) ? atomic_load(&sb->parent->agent->deadline) : 0;
    if (pd != 0 && (d == 0 || pd < d)) {
        d = pd;
        sb->capped = sb->parent;
    }
    atomic_store(&sb->agent->deadline, d != 0 && d < 1 ? 1 : d);
    return start;
}

/* Ends a stretch: the working time it took (approver waits left out) is
 * taken from what is left. */
static void sub_clock_stop(sub *sb, int64_t start)
{
    if (sb->limit_ms > 0)
        sb->left_ms -= mono_ms() - start - atomic_load(&sb->paused_ms);
    atomic_store(&sb->agent->deadline, 0);
}

/* Runs a sub-agent until it ends or pauses (AGT_EPENDING: calls wait for
 * approval, see sub_use_approver); host: it runs on the host's thread. */
static int sub_run(sub *sb, bool host)
{
    sb->on_host = host;
    int rc = sub_use_approver(sb, host);
    if (rc != AGT_OK)
        return rc;
    int64_t start = sub_clock_start(sb, true);
    rc = agt_agent_run(sb->agent);
    sub_clock_stop(sb, start);
    return rc;
}

/* Continues a paused sub-agent whose waiting calls were all answered. */
static int sub_resume(sub *sb, bool host)
{
    sb->on_host = host;
    int rc = sub_use_approver(sb, host);
    if (rc != AGT_OK)
        return rc;
    int64_t start = sub_clock_start(sb, false);
    rc = agt_agent_resume(sb->agent);
    sub_clock_stop(sb, start);
    return rc;
}

/* Whether sb waits in the tree under agent a (a's suspended calls, down). */
static bool in_tree(agt_agent *a, const sub *sb)
{
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        const susp *sp = a->calls[i].susp;
        for (size_t k = 0; sp && k < sp->n; k++)
            if (sp->subs[k] == sb || in_tree(sp->subs[k]->agent, sb))
                return true;
    }
    return false;
}

static struct sub *waiting_sub(agt_agent *a, const char *id)
{
    agt_agent *root = a->self ? a->self->root : a;
    sub *sb = sub_find(root, id);
    return sb && sb->agent->waiting && in_tree(a, sb) ? sb : NULL;
}

/* The rule an APPROVE_SESSION answer stores for a call parked in sb's
 * session (its suggested rule; malloc'd), or NULL. */
static char *suggested_rule(sub *sb, const char *call_id)
{
    char *pj = NULL;
    if (agt_session_pending(sb->session, &pj) != AGT_OK)
        return NULL;
    json_t *list = json_loads(pj, 0, NULL);
    agt_free(pj);
    char *rule = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p)
    {
        const char *id = json_string_value(json_object_get(p, "call_id"));
        const char *r = json_string_value(json_object_get(p, "suggested_rule"));
        const char *tool = json_string_value(json_object_get(p, "tool"));
        if (id && r && tool && strcmp(id, call_id) == 0 && strcmp(tool, "ExitPlanMode") != 0)
            rule = agti_strdup(r);
    }
    json_decref(list);
    return rule;
}

static int answer_in_sub(struct sub *sb, const char *call_id, int decision, const char *reason)
{
    /* APPROVE_SESSION: the rule is the root's, as with the session approver */
    char *rule = decision == AGT_DECISION_APPROVE_SESSION ? suggested_rule(sb, call_id) : NULL;
    int rc = agt_agent_answer(sb->agent, call_id, decision, reason);
    if (rc == AGT_OK && rule)
        share_session_rule(sb->root, sb, rule);
    free(rule);
    if (rc == AGT_ENOTFOUND)
        agti_error(AGT_ENOTFOUND, "no tool call '%s/%s' waits for approval", sb->id, call_id);
    return rc;
}

/* "'agent-1/call_1' (Write)": the first call under a that still waits for
 * an answer (malloc'd), or NULL when all are answered. */
static char *first_unanswered(agt_agent *a)
{
    for (size_t i = 0; i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (!c->susp)
            return a->self ? agti_aprintf("'%s/%s' (%s)", a->self->id, c->id, c->name)
                           : agti_aprintf("'%s' (%s)", c->id, c->name);
        for (size_t k = 0; k < c->susp->n; k++) {
            sub *sb = c->susp->subs[k];
            char *w = sb->agent->waiting ? first_unanswered(sb->agent) : NULL;
            if (w)
                return w;
        }
    }
    return NULL;
}

/* Appends the waiting calls of sub-agents under agent a to list: as
 * AGT_AGENT_APPROVAL events (event: those not announced yet, marked) or in
 * the agt_session_pending() shape. */
static int collect_waiting(agt_agent *a, json_t *list, bool event)
{
    json_t *pend = NULL;
    if (a->self && !event) {
        char *pj = NULL;
        int rc = agt_session_pending(a->session, &pj);
        if (rc != AGT_OK)
            return rc;
        pend = json_loads(pj, 0, NULL);
        agt_free(pj);
        if (!pend)
            return agti_oom();
    }
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (c->susp) {
            for (size_t k = 0; rc == AGT_OK && k < c->susp->n; k++)
                if (c->susp->subs[k]->agent->waiting)
                    rc = collect_waiting(c->susp->subs[k]->agent, list, event);
            continue;
        }
        if (!a->self || (event && c->announced))
            continue;
        char *qid = agti_aprintf("%s/%s", a->self->id, c->id);
        json_t *item = NULL;
        if (qid && event) {
            item = json_pack("{s:s,s:s,s:s,s:s}", "id", qid, "name", c->name, "arguments", c->args,
                             "agent_id", a->self->id);
            c->announced = true;
        } else if (qid) {
            size_t j;
            json_t *p;
            json_array_foreach(pend, j, p)
            {
                const char *pid = json_string_value(json_object_get(p, "call_id"));
                if (pid && strcmp(pid, c->id) == 0) {
                    item = json_deep_copy(p);
                    if (item) {
                        json_object_set_new(item, "call_id", json_string(qid));
                        json_object_set_new(item, "agent_id", json_string(a->self->id));
                    }
                    break;
                }
            }
            if (!item) /* not parked in its session (restored): still listed */
                item = json_pack("{s:s,s:s,s:s,s:s,s:s}", "call_id", qid, "tool", c->name,
                                 "arguments", c->args, "reason", "", "agent_id", a->self->id);
        }
        free(qid);
        if (!item || json_array_append_new(list, item))
            rc = agti_oom();
    }
    json_decref(pend);
    return rc;
}

/* Gives the root's host an AGT_AGENT_APPROVAL event for each sub-agent
 * call that started waiting since the last time. */
static void announce(agt_agent *a)
{
    if (a->self || !a->event_fn)
        return;
    json_t *list = json_array();
    if (list && collect_waiting(a, list, true) == AGT_OK) {
        size_t i;
        json_t *ev;
        json_array_foreach(list, i, ev) emit_json(a, AGT_AGENT_APPROVAL, json_incref(ev));
    }
    json_decref(list);
}

static int ask_item(agt_agent *root, const json_t *item, int *decision, char **reason);

/* An approval_needed event of a background task, seen by the root's loop
 * on the host's thread: with an approver on the root session, each call is
 * asked there and answered (the task goes on by itself), and the event's
 * message says so. Without one, the event stays as it is for the host. */
static int ask_bg_event(agt_agent *a, json_t *ev)
{
    agt_approver_fn fn = NULL;
    void *fp = NULL;
    agti_session_approver(a->session, &fn, &fp);
    if (a->self || !fn)
        return AGT_OK;
    size_t i, approved = 0, n = 0;
    json_t *item;
    int rc = AGT_OK;
    json_array_foreach(json_object_get(ev, "calls"), i, item)
    {
        int decision;
        char *reason = NULL;
        rc = ask_item(a, item, &decision, &reason);
        if (rc == AGT_OK)
            rc = agt_agent_answer(a, json_string_value(json_object_get(item, "call_id")), decision,
                                  reason);
        free(reason);
        if (rc == AGT_ENOMEM)
            return rc;
        n++;
        approved += rc == AGT_OK && decision == AGT_DECISION_APPROVE;
        rc = AGT_OK;
    }
    const char *kind = json_string_value(json_object_get(ev, "kind"));
    char *msg = agti_aprintf("Background %s %s (%s) asked for the user's approval of %zu tool "
                             "call%s: %zu approved, %zu declined. It goes on by itself.",
                             kind && strcmp(kind, "swarm") == 0 ? "swarm" : "sub-agent",
                             json_string_value(json_object_get(ev, "task_id")),
                             json_string_value(json_object_get(ev, "description")), n,
                             n == 1 ? "" : "s", approved, n - approved);
    if (!msg || json_object_set_new(ev, "message", json_string(msg)))
        rc = agti_oom();
    free(msg);
    return rc;
}

/* agt_session_pending() of the root session: the sub-agents' waiting calls. */
static int pending_ext(void *payload, json_t *list)
{
    agt_agent *root = payload;
    int rc = root->waiting ? collect_waiting(root, list, false) : AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < root->n_bgs; i++) {
        bgtask *t = root->bgs[i];
        pthread_mutex_lock(&t->lock);
        size_t k;
        json_t *c;
        if (t->waiting && !t->done)
            json_array_foreach(t->wait_calls, k, c)
            {
                if (json_array_append_new(list, json_deep_copy(c)) != 0)
                    rc = agti_oom();
            }
        pthread_mutex_unlock(&t->lock);
    }
    return rc;
}

/* "Sub-agent agent-1 (desc) finished after N model calls[: error][note].
 * Resume it with ...\n\n<answer>"; *failed for a run that failed. */
/* Whether a run with status rc stopped at its time limit. */
static bool sub_timed_out(const sub *sb, int rc)
{
    return rc == AGT_ETIMEOUT && sb->agent->timed_out;
}

/* "stopped at its 30-minute time limit" (or "300 ms", or "the time limit
 * of agent-1": its parent's ran out first). */
static void time_limit_phrase(agti_buf *b, const sub *sb)
{
    long long ms = (long long)sb->limit_ms;
    if (sb->capped)
        agti_buf_printf(b, "stopped at the time limit of %s", sb->capped->id);
    else if (ms % 60000 == 0)
        agti_buf_printf(b, "stopped at its %lld-minute time limit", ms / 60000);
    else if (ms % 1000 == 0)
        agti_buf_printf(b, "stopped at its %lld-second time limit", ms / 1000);
    else
        agti_buf_printf(b, "stopped at its %lld ms time limit", ms);
}

/* "finished", "stopped at its budget", "stopped at its ... time limit" or
 * "failed" for a run that ended with rc. */
static void outcome_phrase(agti_buf *b, const sub *sb, int rc)
{
    if (sub_timed_out(sb, rc))
        time_limit_phrase(b, sb);
    else
        agti_buf_puts(b, rc == AGT_OK       ? "finished"
                         : rc == AGT_ELIMIT ? "stopped at its budget"
                                            : "failed");
}

static char *agent_report(sub *sb, int rc, const char *desc, int turns_before, const char *note,
                          bool *failed)
{
    agti_buf out = AGTI_BUF_INIT;
    *failed = rc != AGT_OK && rc != AGT_ELIMIT && !sub_timed_out(sb, rc);
    int t = sb->agent->turns - turns_before;
    agti_buf_printf(&out, "Sub-agent %s (%s) ", sb->id, desc ? desc : "task");
    outcome_phrase(&out, sb, rc);
    agti_buf_printf(&out, " after %d model call%s", t, t == 1 ? "" : "s");
    if (*failed)
        agti_buf_printf(&out, ": %s", agt_error_message());
    if (note)
        agti_buf_puts(&out, note);
    agti_buf_printf(&out, ". Resume it with resume: \"%s\".", sb->id);
    if (*agt_agent_text(sb->agent))
        agti_buf_printf(&out, "\n\n%s", agt_agent_text(sb->agent));
    return agti_buf_detach(&out);
}

/* The template with every {{item}} replaced. */
static char *fill_template(const char *tpl, const char *item)
{
    agti_buf b = AGTI_BUF_INIT;
    const char *p;
    while ((p = strstr(tpl, "{{item}}")) != NULL) {
        agti_buf_put(&b, tpl, (size_t)(p - tpl));
        agti_buf_puts(&b, item);
        tpl = p + 8;
    }
    agti_buf_puts(&b, tpl);
    return agti_buf_detach(&b);
}

typedef struct swarm {
    sub **subs;
    size_t n;
    atomic_size_t next;
    bgtask *bg; /* a background swarm: progress lines */
} swarm;

static void bg_note(bgtask *t, const char *fmt, ...) AGTI_PRINTF(2, 3);

static void *swarm_worker(void *arg)
{
    swarm *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&w->next, 1);
        if (i >= w->n)
            return NULL;
        sub *sb = w->subs[i];
        sb->rc = sb->agent->waiting ? sub_resume(sb, false) : sub_run(sb, false);
        if (w->bg)
            bg_note(w->bg, "%s %s after %d model calls\n", sb->id,
                    sb->rc == AGT_OK            ? "finished"
                    : sub_timed_out(sb, sb->rc) ? "stopped at its time limit"
                                                : "ended",
                    sb->agent->turns - sb->turns_before);
    }
}

/* Runs the prepared sub-agents on up to `workers` threads (1: this thread). */
static void swarm_run(sub **subs, size_t n, int workers, bgtask *bg)
{
    swarm w = {subs, n, 0, bg};
    pthread_t th[64];
    size_t started = 0;
    if (workers > 64)
        workers = 64;
    if ((size_t)workers > n)
        workers = (int)n;
    for (int k = 1; k < workers; k++)
        if (pthread_create(&th[started], NULL, swarm_worker, &w) == 0)
            started++;
    swarm_worker(&w);
    for (size_t k = 0; k < started; k++)
        pthread_join(th[k], NULL);
}

/* Asks the root session's approver (on the host's thread) about one
 * waiting call (agt_session_pending() shape: qualified "call_id",
 * "agent_id"); the request has the sub-agent's own call id and
 * "agent_id". APPROVE_SESSION stores the rule as sub_forward does and
 * becomes APPROVE; anything else but APPROVE becomes REJECT. */
static int ask_item(agt_agent *root, const json_t *item, int *decision, char **reason)
{
    *decision = AGT_DECISION_REJECT;
    *reason = NULL;
    const char *aid = json_string_value(json_object_get(item, "agent_id"));
    const char *qid = json_string_value(json_object_get(item, "call_id"));
    if (!aid || !qid || strncmp(qid, aid, strlen(aid)) != 0 || qid[strlen(aid)] != '/')
        return agti_error(AGT_EINVAL, "not a sub-agent's call");
    json_t *req = json_deep_copy(item);
    if (!req || json_object_set_new(req, "call_id", json_string(qid + strlen(aid) + 1))) {
        json_decref(req);
        return agti_oom();
    }
    char *text = agti_json_dump(req);
    json_decref(req);
    char *rule = NULL;
    int rc = text ? agti_session_ask(root->session, text, decision, reason, &rule) : agti_oom();
    free(text);
    if (rc == AGT_OK && *decision == AGT_DECISION_APPROVE_SESSION) {
        const char *tool = json_string_value(json_object_get(item, "tool"));
        if (rule && tool && strcmp(tool, "ExitPlanMode") != 0)
            share_session_rule(root, NULL, rule);
        *decision = AGT_DECISION_APPROVE;
    } else if (rc == AGT_OK && *decision != AGT_DECISION_APPROVE) {
        *decision = AGT_DECISION_REJECT;
    }
    free(rule);
    return rc;
}

/* Asks the root session's approver about every call waiting under sb, and
 * answers it. */
static int ask_for_tree(agt_agent *root, sub *sb)
{
    json_t *list = json_array();
    int rc = list ? collect_waiting(sb->agent, list, false) : agti_oom();
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        if (rc != AGT_OK)
            break;
        int decision;
        char *reason = NULL;
        rc = ask_item(root, item, &decision, &reason);
        sub *x = sub_find(root, json_string_value(json_object_get(item, "agent_id")));
        if (rc == AGT_OK && x) {
            const char *qid = json_string_value(json_object_get(item, "call_id"));
            rc = agt_agent_answer(x->agent, qid + strlen(x->id) + 1, decision, reason);
        }
        if (rc != AGT_ENOMEM)
            rc = AGT_OK; /* a failed answer leaves the call waiting: the swarm pauses */
        free(reason);
    }
    json_decref(list);
    return rc;
}

static void swarm_run(sub **subs, size_t n, int workers, bgtask *bg);

/* After a round of a swarm: while sub-agents wait for approval and the root
 * session has an approver that may be asked here (host), asks it about
 * their calls and resumes them (concurrently as the round ran). AGT_OK when
 * none waits, AGT_EPENDING when some still do. */
static int swarm_settle(agt_agent *root, sub **subs, size_t n, bool parallel, bool host)
{
    sub **again = calloc(n ? n : 1, sizeof *again);
    if (!again)
        return agti_oom();
    int rc = AGT_OK;
    for (int round = 0; round < 100; round++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (subs[i]->rc == AGT_EPENDING)
                again[m++] = subs[i];
        if (m == 0) {
            rc = AGT_OK;
            break;
        }
        agt_approver_fn fn = NULL;
        void *fp = NULL;
        if (host)
            agti_session_approver(root->session, &fn, &fp);
        rc = AGT_EPENDING;
        if (!fn)
            break;
        for (size_t i = 0; i < m && rc != AGT_ENOMEM; i++)
            if (ask_for_tree(root, again[i]) == AGT_ENOMEM)
                rc = AGT_ENOMEM;
        if (rc == AGT_ENOMEM)
            break;
        /* only those whose calls are all answered go on */
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
            char *w = first_unanswered(again[i]->agent);
            if (!w)
                again[k++] = again[i];
            free(w);
        }
        if (k == 0)
            break;
        swarm_run(again, k, parallel ? root->swarm_max : 1, NULL);
    }
    free(again);
    return rc;
}

static char *swarm_report(sub **subs, size_t n, bool parallel)
{
    agti_buf out = AGTI_BUF_INIT;
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += subs[i]->rc == AGT_OK;
    agti_buf_printf(&out, "AgentSwarm: %zu sub-agent%s, %zu finished, %zu did not%s.", n,
                    n == 1 ? "" : "s", ok, n - ok, parallel ? "" : " (run one after the other)");
    for (size_t i = 0; i < n; i++) {
        sub *sb = subs[i];
        int t = sb->agent->turns - sb->turns_before;
        agti_buf_printf(&out, "\n\n## %s%s%s: ", sb->id, sb->item ? " — " : "",
                        sb->item ? sb->item : "");
        outcome_phrase(&out, sb, sb->rc);
        agti_buf_printf(&out, " after %d model call%s\n", t, t == 1 ? "" : "s");
        if (sb->rc != AGT_OK && sb->rc != AGT_ELIMIT && !sub_timed_out(sb, sb->rc))
            agti_buf_printf(&out, "(%s)\n", agt_status_string(sb->rc));
        agti_buf_puts(&out, agt_agent_text(sb->agent));
    }
    return agti_buf_detach(&out);
}

/* The report of a finished suspended call: its result, with the post-hook. */
static int complete_call(agt_agent *a, call *c, const char *report, bool failed)
{
    agt_result *res = NULL;
    int rc = agti_session_complete(a->session, c->id, report, failed, &res);
    if (rc == AGT_OK)
        rc = set_result(c, res);
    agt_result_free(res);
    if (rc != AGT_OK)
        return rc;
    susp_free(c->susp);
    c->susp = NULL;
    finished_event(a, c);
    return AGT_OK;
}

/* Continues the sub-agents of a suspended call, whose waiting calls were
 * all answered; completes the call when they are done. */
static int continue_call(agt_agent *a, call *c)
{
    susp *sp = c->susp;
    bool host = a->self ? a->self->on_host : true;
    agt_agent *root = a->self ? a->self->root : a;
    if (!sp->swarm) {
        sub *sb = sp->subs[0];
        int rc = sb->agent->waiting ? sub_resume(sb, host) : sb->rc;
        if (rc == AGT_EPENDING || rc == AGT_ENOMEM)
            return rc;
        sb->rc = rc;
        bool failed = false;
        char *report = agent_report(sb, rc, sp->desc, sb->turns_before, sp->note, &failed);
        rc = report ? complete_call(a, c, report, failed) : agti_oom();
        free(report);
        return rc;
    }
    sub **again = calloc(sp->n, sizeof *again);
    if (!again)
        return agti_oom();
    size_t m = 0;
    int rc = AGT_OK;
    for (size_t i = 0; i < sp->n; i++) {
        sub *sb = sp->subs[i];
        if (!sb->agent->waiting)
            continue;
        again[m++] = sb;
        /* concurrent workers need a model each (a restored sub-agent has none) */
        if (rc == AGT_OK && sp->parallel && root->model->kind == AGTI_MODEL_HTTP &&
            !sb->own_model && (rc = agti_model_clone(&sb->own_model, root->model)) == AGT_OK)
            sb->agent->model = sb->own_model;
    }
    if (rc != AGT_OK) {
        free(again);
        return rc;
    }
    swarm_run(again, m, sp->parallel ? root->swarm_max : 1, NULL);
    free(again);
    rc = swarm_settle(root, sp->subs, sp->n, sp->parallel, host);
    if (rc != AGT_OK)
        return rc;
    agti_buf out = AGTI_BUF_INIT;
    char *report = swarm_report(sp->subs, sp->n, sp->parallel);
    if (report && sp->note)
        agti_buf_printf(&out, "%s\n(It ran in the foreground: %s.)", report, sp->note);
    else if (report)
        agti_buf_puts(&out, report);
    free(report);
    rc = !report || out.oom ? agti_oom() : complete_call(a, c, agti_buf_cstr(&out), false);
    agti_buf_free(&out);
    return rc;
}

static int continue_suspended(agt_agent *a)
{
    bool pending = false;
    for (size_t i = 0; i < a->n_calls; i++) {
        if (!a->calls[i].susp)
            continue;
        int rc = continue_call(a, &a->calls[i]);
        if (rc == AGT_EPENDING)
            pending = true;
        else if (rc != AGT_OK)
            return rc;
    }
    return pending ? AGT_EPENDING : AGT_OK;
}

/* Ends a paused run without going on (its background task was stopped):
 * waiting calls are declined with reason, suspended calls (and the
 * sub-agents under them) end the same way, the results join the
 * conversation, so the agent can be resumed later with a new prompt. */
static void abandon(agt_agent *a, const char *reason)
{
    for (size_t i = 0; a->waiting && i < a->n_calls; i++) {
        call *c = &a->calls[i];
        if (c->answered)
            continue;
        if (c->susp) {
            for (size_t k = 0; k < c->susp->n; k++) {
                sub *sb = c->susp->subs[k];
                if (sb->agent->waiting) {
                    abandon(sb->agent, reason);
                    sb->rc = AGT_ECANCELLED;
                }
            }
            char *t = agti_aprintf("Stopped while sub-agents waited for approval: %s", reason);
            if (!t || complete_call(a, c, t, true) != AGT_OK) {
                agti_session_drop_suspended(a->session, c->id);
                susp_free(c->susp);
                c->susp = NULL;
            }
            free(t);
        } else {
            agt_agent_answer(a, c->id, AGT_DECISION_REJECT, reason);
        }
        if (!c->answered) {
            free(c->text);
            c->text = agti_aprintf("Not run: %s", reason);
            c->is_error = true;
            c->answered = true;
        }
    }
    if (a->waiting) {
        append_results(a);
        a->waiting = false;
        a->stop = AGT_AGENT_STOP_CANCELLED;
    }
}

/* ---- background sub-agents and swarms ---------------------------------- */

static void bg_note(bgtask *t, const char *fmt, ...)
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
            bg_note(t, "%s: [tool] %s %.200s\n", sb->id, name ? name : "?", args ? args : "");
        else
            bg_note(t, "\n[tool] %s %.200s\n", name ? name : "?", args ? args : "");
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
            collect_waiting(t->subs[i]->agent, calls, false) != AGT_OK) {
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
        swarm_run(t->subs, t->n, t->workers, t);
    else
        t->subs[0]->rc = sub_run(t->subs[0], false);
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
                    abandon(t->subs[i]->agent, why ? why : "stopped");
                    t->subs[i]->rc =
                        agti_error(AGT_ECANCELLED, "stopped while waiting for approval: %s",
                                   why ? why : "stopped");
                }
            free(why);
            break;
        }
        bg_note(t, "(approvals answered: going on)\n");
        if (!t->swarm) {
            t->subs[0]->rc = sub_resume(t->subs[0], false);
            continue;
        }
        sub **again = calloc(m, sizeof *again);
        if (!again)
            break; /* they stay paused; the report says so */
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (t->subs[i]->rc == AGT_EPENDING)
                again[k++] = t->subs[i];
        swarm_run(again, k, t->workers, t);
        free(again);
    }
    if (t->swarm) {
        report = swarm_report(t->subs, t->n, t->parallel);
    } else {
        sub *sb = t->subs[0];
        report = agent_report(sb, sb->rc, t->description, sb->turns_before, NULL, &failed);
        timed_out = sub_timed_out(sb, sb->rc);
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
static sub *bg_waiting_sub(agt_agent *root, const char *id, bgtask **out)
{
    sub *target = sub_find(root, id);
    for (size_t i = 0; target && i < root->n_bgs; i++) {
        bgtask *t = root->bgs[i];
        pthread_mutex_lock(&t->lock);
        bool waiting = t->waiting && !t->answering && !t->stopped && !t->done;
        pthread_mutex_unlock(&t->lock);
        for (size_t k = 0; waiting && k < t->n; k++)
            if (target->agent->waiting &&
                (t->subs[k] == target || in_tree(t->subs[k]->agent, target))) {
                *out = t;
                return target;
            }
    }
    return NULL;
}

/* The host answers a call a background task waits for (on the host's
 * thread, while the task's thread sleeps); when none waits any more, the
 * task goes on by itself. */
static int bg_answer(bgtask *t, sub *sb, const char *call_id, int decision, const char *reason)
{
    pthread_mutex_lock(&t->lock);
    t->answering = true;
    pthread_mutex_unlock(&t->lock);
    int rc = answer_in_sub(sb, call_id, decision, reason);
    bool all = true;
    json_t *left = json_array();
    for (size_t i = 0; i < t->n; i++) {
        if (t->subs[i]->rc != AGT_EPENDING)
            continue;
        char *w = first_unanswered(t->subs[i]->agent);
        all &= w == NULL;
        free(w);
        if (left && collect_waiting(t->subs[i]->agent, left, false) != AGT_OK) {
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

static bgtask *bg_find(agt_agent *root, const char *id)
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
static void bg_free_all(agt_agent *root)
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
static int bg_start(agt_agent *root, const char *id, const char *desc, bool is_swarm, sub **subs,
                    size_t n, bool parallel)
{
    bgtask *t = bg_find(root, id);
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
        rc = offered_tools(subs[i]->agent, &tools);
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

/* Why a call cannot run in the background, or NULL when it can: only the
 * root agent's calls (their task belongs to its session), with a frozen
 * registry (shared read-only) and an HTTP model (copied per sub-agent). */
static const char *no_background(agt_agent *root, agt_call *callp, const sub *caller)
{
    if (caller)
        return "inside a sub-agent, sub-agents run in the foreground";
    if (!agt_registry_is_frozen(agt_session_registry(agt_call_session(callp))))
        return "background sub-agents need a frozen registry";
    if (root->model->kind != AGTI_MODEL_HTTP)
        return "background sub-agents need an HTTP model";
    return NULL;
}

static int refuse(agt_call *callp, json_t *args, const char *fmt, ...) AGTI_PRINTF(3, 4);
static int refuse(agt_call *callp, json_t *args, const char *fmt, ...)
{
    agti_buf mb = AGTI_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    agti_buf_vprintf(&mb, fmt, ap);
    va_end(ap);
    char *msg = agti_buf_detach(&mb);
    json_decref(args);
    int rc = msg ? agt_call_set_error(callp, msg) : agti_oom();
    free(msg);
    return rc;
}

/* Without an agent loop to pause (the host dispatched Agent or AgentSwarm
 * itself), the waiting calls under subs are declined and the sub-agents go
 * on, until none waits. */
static int decline_waiting(agt_agent *root, sub **subs, size_t n)
{
    for (int round = 0; round < 100; round++) {
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            sub *sb = subs[i];
            if (sb->rc != AGT_EPENDING)
                continue;
            any = true;
            json_t *list = json_array();
            int rc = list ? collect_waiting(sb->agent, list, false) : agti_oom();
            size_t k;
            json_t *item;
            json_array_foreach(list, k, item)
            {
                const char *aid = json_string_value(json_object_get(item, "agent_id"));
                const char *qid = json_string_value(json_object_get(item, "call_id"));
                sub *x = sub_find(root, aid);
                if (x && qid && strlen(qid) > strlen(aid))
                    agt_agent_answer(x->agent, qid + strlen(aid) + 1, AGT_DECISION_REJECT,
                                     "a sub-agent started outside an agent loop cannot ask the "
                                     "user for approval; leave this step to the parent agent and "
                                     "say so in your answer");
            }
            json_decref(list);
            if (rc != AGT_OK)
                return rc;
            char *w = first_unanswered(sb->agent);
            if (w) { /* an answer failed: give up on this one */
                free(w);
                sb->rc =
                    agti_error(AGT_ESTATE, "sub-agent %s: a call could not be declined", sb->id);
                continue;
            }
            sb->rc = sub_resume(sb, sb->on_host);
        }
        if (!any)
            return AGT_OK;
    }
    return AGT_OK;
}

/* Whether the provider's call can be suspended: the calling agent's loop
 * dispatched it (not the host directly). */
static bool can_suspend(agt_agent *root, sub *caller)
{
    return (caller ? caller->agent : root)->dispatching > 0;
}

/* Suspends the provider's call on sp: the calling agent takes sp when
 * the dispatch returns AGT_EPENDING (took_pending). */
static int suspend_call(agt_agent *root, sub *caller, agt_call *callp, susp *sp)
{
    agt_agent *ca = caller ? caller->agent : root;
    susp_free(ca->new_susp);
    ca->new_susp = sp;
    agti_call_suspend(callp);
    return AGT_OK;
}

static int agent_tool(agt_call *callp, void *payload)
{
    agt_agent *root = payload;
    json_t *args = json_loads(agt_call_args(callp), 0, NULL);
    const char *prompt = json_string_value(json_object_get(args, "prompt"));
    const char *desc = json_string_value(json_object_get(args, "description"));
    const char *resume = json_string_value(json_object_get(args, "resume"));
    bool background = json_is_true(json_object_get(args, "run_in_background"));
    int rc = AGT_OK;
    sub *sb = NULL;
    sub *caller = caller_of(root, callp);
    if (!prompt)
        return refuse(callp, args, "Agent needs a \"prompt\".");
    if (caller && caller->level >= SUB_MAX_DEPTH)
        return refuse(callp, args,
                      "Sub-agents are nested too deep (at most 2 levels): do this task yourself.");
    const char *why_fg = background ? no_background(root, callp, caller) : NULL;
    bool in_bg = background && !why_fg;
    if (resume) {
        sb = sub_find(root, resume);
        if (!sb) {
            pthread_mutex_lock(&root->subs_lock);
            size_t n = root->n_subs;
            pthread_mutex_unlock(&root->subs_lock);
            return refuse(callp, args,
                          "No sub-agent '%s' to resume; the ids are agent-1 to agent-%zu.", resume,
                          n);
        }
        if (sb->lost)
            return refuse(callp, args,
                          "Sub-agent %s ran in the background when the session was saved; its "
                          "work was lost. Start a new sub-agent for the task.",
                          resume);
        if (atomic_load(&sb->busy) || sb == caller)
            return refuse(callp, args,
                          "Sub-agent %s is still running%s: wait for its notification (or use "
                          "TaskOutput / TaskStop with task_id \"%s\"), then resume it.",
                          resume, sb == caller ? "" : " in the background", resume);
        if (in_bg && root->model->kind == AGTI_MODEL_HTTP && !sb->own_model) {
            rc = agti_model_clone(&sb->own_model, root->model);
            if (rc != AGT_OK) {
                json_decref(args);
                return rc;
            }
            sb->agent->model = sb->own_model;
        }
    } else {
        /* inside a sub-agent (maybe on another thread) or in the background
         * the root's model may be busy on another thread: an HTTP model is copied */
        rc = sub_new(root, agt_call_session(callp), caller,
                     (caller || in_bg) && root->model->kind == AGTI_MODEL_HTTP, &sb);
        if (rc != AGT_OK) {
            json_decref(args);
            return rc;
        }
    }
    /* a finished background run of this sub-agent is joined before it runs again */
    bgtask *old = bg_find(root, sb->id);
    if (old && old->joinable && !in_bg) {
        pthread_join(old->th, NULL);
        old->joinable = false;
    }
    sb->turns_before = sb->agent->turns;
    rc = agt_agent_add_user_message(sb->agent, prompt);
    if (rc == AGT_OK && in_bg) {
        sub **one = malloc(sizeof *one);
        if (!one) {
            json_decref(args);
            return agti_oom();
        }
        one[0] = sb;
        rc = bg_start(root, sb->id, desc, false, one, 1, false);
        if (rc != AGT_OK) {
            json_decref(args);
            return rc;
        }
        agti_buf out = AGTI_BUF_INIT;
        agti_buf_printf(&out,
                        "Started sub-agent %s in the background: %s\nStatus: running\nYou will "
                        "get a notification with its report when it finishes; TaskOutput shows "
                        "its progress, TaskStop stops it, resume: \"%s\" continues it afterwards.",
                        sb->id, desc ? desc : "task", sb->id);
        json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "task_id", sb->id, "kind", "agent",
                              "description", desc ? desc : "task", "status", "running");
        char *js = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        json_decref(args);
        rc = out.oom || !js ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
        if (rc == AGT_OK)
            rc = agt_call_set_json(callp, js, strlen(js));
        free(js);
        agti_buf_free(&out);
        return rc;
    }
    if (rc == AGT_OK)
        rc = sub_run(sb, caller ? caller->on_host : true);
    if (rc == AGT_EPENDING && !can_suspend(root, caller)) {
        sb->rc = rc;
        rc = decline_waiting(root, &sb, 1);
        if (rc == AGT_OK)
            rc = sb->rc;
    }
    if (rc == AGT_ENOMEM) {
        json_decref(args);
        return rc;
    }
    char *note = why_fg ? agti_aprintf(" (it ran in the foreground: %s)", why_fg) : NULL;
    if (rc == AGT_EPENDING) {
        /* the sub-agent waits for approval: this call waits with it */
        susp *sp = calloc(1, sizeof *sp);
        sub **one = malloc(sizeof *one);
        char *d = desc ? agti_strdup(desc) : NULL;
        json_decref(args);
        if (!sp || !one || (desc && !d)) {
            free(sp);
            free(one);
            free(d);
            free(note);
            return agti_oom();
        }
        one[0] = sb;
        *sp = (susp){false, one, 1, d, note, false};
        return suspend_call(root, caller, callp, sp);
    }
    bool failed = false;
    char *report = agent_report(sb, rc, desc, sb->turns_before, note, &failed);
    free(note);
    json_decref(args);
    if (!report)
        return agti_oom();
    rc = failed ? agt_call_set_error(callp, report) : agt_call_set_text(callp, report);
    free(report);
    return rc;
}

static int swarm_tool(agt_call *callp, void *payload)
{
    agt_agent *root = payload;
    json_t *args = json_loads(agt_call_args(callp), 0, NULL);
    const char *tpl = json_string_value(json_object_get(args, "prompt_template"));
    json_t *items = json_object_get(args, "items");
    json_t *resume = json_object_get(args, "resume_agent_ids");
    bool background = json_is_true(json_object_get(args, "run_in_background"));
    size_t n_items = json_array_size(items), n_resume = json_array_size(resume);
    sub *caller = caller_of(root, callp);
    agti_buf out = AGTI_BUF_INIT;
    int rc = AGT_OK;
    sub **subs = NULL;
    size_t n = 0;
    if (caller && caller->level >= SUB_MAX_DEPTH)
        agti_buf_puts(
            &out, "Sub-agents are nested too deep (at most 2 levels): do these tasks yourself.");
    else if (n_items + n_resume == 0)
        agti_buf_puts(
            &out, "AgentSwarm needs \"items\" (with \"prompt_template\") or \"resume_agent_ids\".");
    else if (n_items && !tpl)
        agti_buf_puts(&out,
                      "AgentSwarm needs a \"prompt_template\" containing {{item}} with \"items\".");
    for (size_t i = 0; !out.len && i < n_resume; i++) {
        const char *id = json_string_value(json_array_get(resume, i));
        sub *r = sub_find(root, id);
        if (!r) {
            pthread_mutex_lock(&root->subs_lock);
            size_t have = root->n_subs;
            pthread_mutex_unlock(&root->subs_lock);
            agti_buf_printf(&out, "No sub-agent '%s' to resume; the ids are agent-1 to agent-%zu.",
                            id, have);
        } else if (r->lost) {
            agti_buf_printf(&out,
                            "Sub-agent %s ran in the background when the session was saved; its "
                            "work was lost. Start a new sub-agent for the task.",
                            id);
        } else if (atomic_load(&r->busy) || r == caller) {
            agti_buf_printf(
                &out, "Sub-agent %s is still running: wait for it to finish, then resume it.", id);
        }
    }
    if (out.len) {
        json_decref(args);
        rc = out.oom ? agti_oom() : agt_call_set_error(callp, agti_buf_cstr(&out));
        agti_buf_free(&out);
        return rc;
    }
    const char *why_fg = background ? no_background(root, callp, caller) : NULL;
    bool in_bg = background && !why_fg;
    /* Concurrent only when that is safe: a frozen registry (shared read-only
     * by the sub-sessions) and an HTTP model (copied per sub-agent). */
    bool parallel = root->swarm_max > 1 &&
                    agt_registry_is_frozen(agt_session_registry(agt_call_session(callp))) &&
                    root->model->kind == AGTI_MODEL_HTTP;
    bool copy_model = root->model->kind == AGTI_MODEL_HTTP && (parallel || caller || in_bg);
    subs = calloc(n_items + n_resume, sizeof *subs);
    if (!subs)
        rc = agti_oom();
    for (size_t i = 0; rc == AGT_OK && i < n_items + n_resume; i++) {
        sub *sb = NULL;
        char *prompt = NULL;
        if (i < n_items) {
            const char *item = json_string_value(json_array_get(items, i));
            rc = sub_new(root, agt_call_session(callp), caller, copy_model, &sb);
            if (rc == AGT_OK && !(sb->item = agti_strdup(item)))
                rc = agti_oom();
            prompt = rc == AGT_OK ? fill_template(tpl, item) : NULL;
        } else {
            sb = sub_find(root, json_string_value(json_array_get(resume, i - n_items)));
            bgtask *old = bg_find(root, sb->id);
            if (old && old->joinable) {
                pthread_join(old->th, NULL);
                old->joinable = false;
            }
            if (copy_model && !sb->own_model) {
                rc = agti_model_clone(&sb->own_model, root->model);
                if (rc == AGT_OK)
                    sb->agent->model = sb->own_model;
            }
            prompt = tpl && sb->item
                         ? fill_template(tpl, sb->item)
                         : agti_strdup("Continue your task, then give your final report.");
        }
        if (rc == AGT_OK && !prompt)
            rc = agti_oom();
        if (rc == AGT_OK) {
            sb->turns_before = sb->agent->turns;
            sb->rc = AGT_OK;
            rc = agt_agent_add_user_message(sb->agent, prompt);
            subs[n++] = sb;
        }
        free(prompt);
    }
    if (rc == AGT_OK && in_bg) {
        char id[32];
        snprintf(id, sizeof id, "swarm-%zu", root->n_swarms + 1);
        char *desc = agti_aprintf("%zu sub-agents", n);
        rc = desc ? bg_start(root, id, desc, true, subs, n, parallel) : agti_oom();
        subs = NULL; /* taken (or freed) by bg_start */
        if (rc == AGT_OK) {
            root->n_swarms++;
            agti_buf_printf(&out, "Started AgentSwarm %s in the background: %zu sub-agents (", id,
                            n);
            for (size_t i = 0; i < n; i++) {
                bgtask *t = bg_find(root, id);
                agti_buf_printf(&out, "%s%s", i ? ", " : "", t->subs[i]->id);
            }
            agti_buf_printf(&out,
                            ")\nStatus: running\nYou will get a notification with the combined "
                            "report when all have finished; TaskOutput shows progress, TaskStop "
                            "stops them all.");
            rc = out.oom ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
            json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "task_id", id, "kind", "swarm",
                                  "description", desc, "status", "running");
            char *js = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
            json_decref(j);
            if (rc == AGT_OK)
                rc = js ? agt_call_set_json(callp, js, strlen(js)) : agti_oom();
            free(js);
        }
        free(desc);
        agti_buf_free(&out);
        json_decref(args);
        return rc;
    }
    for (size_t i = 0; rc == AGT_OK && parallel && i < n; i++) {
        const char *t;
        rc = offered_tools(subs[i]->agent, &t);
    }
    if (rc == AGT_OK) {
        swarm_run(subs, n, parallel ? root->swarm_max : 1, NULL);
        rc = swarm_settle(root, subs, n, parallel, caller ? caller->on_host : true);
        if (rc == AGT_EPENDING && !can_suspend(root, caller))
            rc = decline_waiting(root, subs, n);
    }
    if (rc == AGT_EPENDING) {
        /* some sub-agents wait for approval: the swarm call waits with them */
        susp *sp = calloc(1, sizeof *sp);
        char *note = why_fg ? agti_strdup(why_fg) : NULL;
        agti_buf_free(&out);
        json_decref(args);
        if (!sp || (why_fg && !note)) {
            free(sp);
            free(note);
            free(subs);
            return agti_oom();
        }
        *sp = (susp){true, subs, n, NULL, note, parallel};
        return suspend_call(root, caller, callp, sp);
    }
    if (rc == AGT_OK) {
        char *report = swarm_report(subs, n, parallel);
        if (report && why_fg)
            agti_buf_printf(&out, "%s\n(It ran in the foreground: %s.)", report, why_fg);
        else if (report)
            agti_buf_puts(&out, report);
        free(report);
        rc = !report || out.oom ? agti_oom() : agt_call_set_text(callp, agti_buf_cstr(&out));
    }
    free(subs);
    agti_buf_free(&out);
    json_decref(args);
    return rc;
}

int agt_agent_enable_subagents(agt_agent *a)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_enable_subagents: agent is NULL");
    agt_registry *reg = agt_session_registry(a->session);
    int rc = agt_registry_set_provider(reg, "Agent", agent_tool, a);
    if (rc == AGT_OK)
        rc = agt_registry_set_provider(reg, "AgentSwarm", swarm_tool, a);
    if (rc == AGT_OK && !a->self)
        rc = agti_session_set_pending_ext(a->session, pending_ext, a);
    return rc;
}

int agt_agent_set_swarm_concurrency(agt_agent *a, int max)
{
    if (!a || max < 1 || max > 64)
        return agti_error(AGT_EINVAL, "agt_agent_set_swarm_concurrency: %s",
                          a ? "max not in 1..64" : "agent is NULL");
    a->swarm_max = max;
    return AGT_OK;
}

int agt_agent_set_parallel_tools(agt_agent *a, int max)
{
    if (!a || max < 1 || max > 64)
        return agti_error(AGT_EINVAL, "agt_agent_set_parallel_tools: %s",
                          a ? "max not in 1..64" : "agent is NULL");
    atomic_store(&a->parallel_max, max);
    return AGT_OK;
}

int agt_agent_set_subagent_timeout(agt_agent *a, int64_t ms)
{
    if (!a || ms < 0 || ms > SUB_MAX_MS)
        return agti_error(AGT_EINVAL, "agt_agent_set_subagent_timeout: %s",
                          !a       ? "agent is NULL"
                          : ms < 0 ? "negative limit"
                                   : "limit over 30 days (2592000000 ms); 0 means no limit");
    atomic_store(&a->subagent_ms, ms);
    return AGT_OK;
}

int agt_agent_set_subagent_approver(agt_agent *a, agt_subagent_approver_fn fn, void *payload)
{
    if (!a)
        return agti_error(AGT_EINVAL, "agt_agent_set_subagent_approver: agent is NULL");
    pthread_mutex_lock(&a->subs_lock);
    for (size_t i = 0; i < a->n_subs; i++)
        if (atomic_load(&a->subs[i]->busy)) {
            pthread_mutex_unlock(&a->subs_lock);
            return agti_error(AGT_ESTATE,
                              "agt_agent_set_subagent_approver: sub-agent %s runs "
                              "in the background; set the approver before",
                              a->subs[i]->id);
        }
    a->approver = fn;
    a->approver_payload = payload;
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < a->n_subs; i++)
        rc = agt_session_set_approver(a->subs[i]->session, fn ? sub_approve : NULL,
                                      fn ? a->subs[i] : NULL);
    pthread_mutex_unlock(&a->subs_lock);
    return rc;
}

/* ---- save and restore -------------------------------------------------- */

/* A background task that ran when the state was saved: its thread is gone,
 * so it shows as "lost" (TaskList, TaskOutput, one task_finished event). */
typedef struct lost_task {
    char id[32];
    char kind[8];
    char *description;
} lost_task;

static int lost_snapshot(void *payload, agti_ext_snapshot *out)
{
    lost_task *t = payload;
    memset(out, 0, sizeof *out);
    out->status = "lost";
    out->output = agti_strdup("");
    out->preview = agti_strdup("");
    out->message = agti_aprintf(
        "Background %s %s (%s) was running when the session was saved; its work was lost. "
        "Start it again if the task still matters.",
        strcmp(t->kind, "swarm") == 0 ? "swarm" : "sub-agent", t->id, t->description);
    if (!out->output || !out->preview || !out->message) {
        agti_ext_snapshot_free(out);
        return agti_oom();
    }
    return AGT_OK;
}

static int lost_stop(void *payload, const char *reason)
{
    (void)payload;
    (void)reason;
    return AGT_ESTATE;
}

static int lost_wait(void *payload, int64_t ms)
{
    (void)payload;
    (void)ms;
    return AGT_OK;
}

static int lost_poll_fd(void *payload)
{
    (void)payload;
    return -1;
}

static const agti_ext_task_ops lost_ops = {lost_snapshot, lost_stop, lost_wait, lost_poll_fd, NULL};

typedef struct lost_list {
    lost_task **v;
    size_t n;
} lost_list;

static void lost_list_free(lost_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i]->description);
        free(l->v[i]);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void lost_free_all(agt_agent *root)
{
    for (size_t i = 0; i < root->n_lost; i++)
        agti_session_ext_remove(root->session, root->lost[i]->id);
    lost_list l = {root->lost, root->n_lost};
    lost_list_free(&l);
    root->lost = NULL;
    root->n_lost = 0;
}

static int parse_lost(json_t *tasks, lost_list *l)
{
    if (tasks && !json_is_array(tasks))
        return agti_error(AGT_EPARSE, "agent state: \"tasks\" is not an array");
    size_t n = json_array_size(tasks);
    if (n == 0)
        return AGT_OK;
    if (!(l->v = calloc(n, sizeof *l->v)))
        return agti_oom();
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(tasks, i);
        const char *id = json_string_value(json_object_get(o, "id"));
        const char *kind = json_string_value(json_object_get(o, "kind"));
        const char *desc = json_string_value(json_object_get(o, "description"));
        if (!id || !desc || !kind || (strcmp(kind, "agent") && strcmp(kind, "swarm")) ||
            strlen(id) == 0 || strlen(id) >= 32) {
            lost_list_free(l);
            return agti_error(AGT_EPARSE,
                              "agent state: tasks[%zu] needs \"id\" (1..31 bytes), \"kind\" "
                              "(agent or swarm) and \"description\"",
                              i);
        }
        lost_task *t = calloc(1, sizeof *t);
        if (!t || !(t->description = agti_strdup(desc))) {
            free(t);
            lost_list_free(l);
            return agti_oom();
        }
        snprintf(t->id, sizeof t->id, "%s", id);
        snprintf(t->kind, sizeof t->kind, "%s", kind);
        l->v[l->n++] = t;
    }
    return AGT_OK;
}

#define STATE_VERSION 1

/* {"version","messages","turns","tokens_used","stop","waiting":[{"id","name",
 * "arguments","answered","text","is_error"[,"suspended":{...}]}]} of one
 * agent; NULL on OOM. */
static json_t *state_json(const agt_agent *a)
{
    json_t *waiting = json_array();
    json_t *susp_calls = agti_session_suspended_json(a->session);
    for (size_t i = 0; waiting && susp_calls && a->waiting && i < a->n_calls; i++) {
        const call *c = &a->calls[i];
        json_t *w =
            json_pack("{s:s,s:s,s:s,s:b,s:s?,s:b}", "id", c->id, "name", c->name, "arguments",
                      c->args, "answered", c->answered, "text", c->text, "is_error", c->is_error);
        if (w && c->susp) {
            json_t *ids = json_array();
            for (size_t k = 0; ids && k < c->susp->n; k++)
                json_array_append_new(ids, json_string(c->susp->subs[k]->id));
            const char *sargs = c->args, *snote = NULL;
            size_t j;
            json_t *e;
            json_array_foreach(susp_calls, j, e)
            {
                if (strcmp(json_string_value(json_object_get(e, "call_id")), c->id) == 0) {
                    sargs = json_string_value(json_object_get(e, "arguments"));
                    snote = json_string_value(json_object_get(e, "note"));
                }
            }
            json_t *sp = ids ? json_pack("{s:b,s:o,s:s?,s:s?,s:b,s:s,s:s?}", "swarm",
                                         c->susp->swarm, "subs", ids, "description", c->susp->desc,
                                         "note", c->susp->note, "parallel", c->susp->parallel,
                                         "session_arguments", sargs, "session_note", snote)
                             : NULL;
            if (!sp || json_object_set_new(w, "suspended", sp)) {
                json_decref(w);
                w = NULL;
            }
        }
        if (!w || json_array_append_new(waiting, w)) {
            json_decref(waiting);
            waiting = NULL;
        }
    }
    json_decref(susp_calls);
    if (!waiting)
        return NULL;
    return json_pack("{s:i,s:O,s:i,s:I,s:i,s:o}", "version", STATE_VERSION, "messages", a->messages,
                     "turns", a->turns, "tokens_used", (json_int_t)a->tokens_used, "stop", a->stop,
                     "waiting", waiting);
}

/* One sub-agent: its conversation and session, or only its place when it
 * runs in the background now (its state is another thread's). */
static json_t *sub_json(const sub *sb)
{
    json_t *o = json_pack("{s:s,s:s?,s:s?}", "id", sb->id, "parent",
                          sb->parent ? sb->parent->id : NULL, "item", sb->item);
    if (!o)
        return NULL;
    if (sb->lost || in_background(sb)) {
        if (json_object_set_new(o, "lost", json_true())) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    char *ss = NULL;
    json_t *sess = NULL;
    if (agt_session_save(sb->session, &ss) == AGT_OK)
        sess = json_loads(ss, 0, NULL);
    agt_free(ss);
    json_t *st = state_json(sb->agent);
    if (!sess || !st || json_object_set_new(o, "agent", st) ||
        json_object_set_new(o, "session", sess) ||
        json_object_set_new(o, "rc", json_integer(sb->rc)) ||
        json_object_set_new(o, "turns_before", json_integer(sb->turns_before)) ||
        json_object_set_new(o, "on_host", json_boolean(sb->on_host))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int agt_agent_save(const agt_agent *a, char **out_json)
{
    if (!a || !out_json)
        return agti_error(AGT_EINVAL, "agt_agent_save: NULL argument");
    *out_json = NULL;
    json_t *root = state_json(a);
    json_t *subs = json_array();
    agt_agent *ra = (agt_agent *)a;
    pthread_mutex_lock(&ra->subs_lock);
    for (size_t i = 0; root && subs && i < a->n_subs; i++)
        if (json_array_append_new(subs, sub_json(a->subs[i]))) {
            json_decref(subs);
            subs = NULL;
        }
    pthread_mutex_unlock(&ra->subs_lock);
    if (root && subs && a->n_subs && json_object_set_new(root, "subs", subs) == 0)
        subs = NULL;
    json_decref(subs);
    /* background tasks that run now (or ran when restored): lost on restore */
    json_t *tasks = json_array();
    for (size_t i = 0; root && tasks && i < a->n_bgs; i++) {
        bgtask *t = a->bgs[i];
        pthread_mutex_lock(&t->lock);
        bool running = t->joinable && !t->done;
        json_t *o = running ? json_pack("{s:s,s:s,s:s}", "id", t->id, "kind",
                                        t->swarm ? "swarm" : "agent", "description", t->description)
                            : NULL;
        pthread_mutex_unlock(&t->lock);
        if (running && json_array_append_new(tasks, o)) {
            json_decref(tasks);
            tasks = NULL;
        }
    }
    for (size_t i = 0; root && tasks && i < a->n_lost; i++)
        if (json_array_append_new(tasks, json_pack("{s:s,s:s,s:s}", "id", a->lost[i]->id, "kind",
                                                   a->lost[i]->kind, "description",
                                                   a->lost[i]->description))) {
            json_decref(tasks);
            tasks = NULL;
        }
    if (!tasks || (json_array_size(tasks) && json_object_set_new(root, "tasks", tasks) == 0))
        tasks = NULL;
    json_decref(tasks);
    *out_json = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(root);
    return *out_json ? AGT_OK : agti_oom();
}

static int check_restored_messages(const json_t *msgs, const char *where)
{
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *role = json_string_value(json_object_get(m, "role"));
        if (!json_is_object(m) || !role ||
            (strcmp(role, "system") && strcmp(role, "user") && strcmp(role, "assistant") &&
             strcmp(role, "tool")))
            return agti_error(AGT_EPARSE, "%s: messages[%zu] has no valid \"role\"", where, i);
    }
    return AGT_OK;
}

/* A parsed agent state, not applied yet. */
typedef struct pstate {
    json_t *doc; /* the state object (borrowed) */
    call *calls;
    size_t n_calls;
} pstate;

static void pstate_free(pstate *ps)
{
    for (size_t i = 0; ps->calls && i < ps->n_calls; i++) {
        free(ps->calls[i].id);
        free(ps->calls[i].name);
        free(ps->calls[i].args);
        free(ps->calls[i].text);
        susp_free(ps->calls[i].susp);
    }
    free(ps->calls);
    ps->calls = NULL;
    ps->n_calls = 0;
}

/* Validates one agent state (where names it in messages) and takes its
 * waiting calls; the "suspended" members are resolved later. */
static int parse_state(json_t *st, const char *where, pstate *ps)
{
    memset(ps, 0, sizeof *ps);
    ps->doc = st;
    json_t *msgs = json_object_get(st, "messages");
    json_t *waiting = json_object_get(st, "waiting");
    json_t *turns = json_object_get(st, "turns");
    json_t *tokens = json_object_get(st, "tokens_used");
    json_t *stopv = json_object_get(st, "stop");
    int rc = AGT_OK;
    if (!json_is_object(st) || !json_is_integer(json_object_get(st, "version")))
        return agti_error(AGT_EPARSE, "%s: not an object with \"version\"", where);
    if (json_integer_value(json_object_get(st, "version")) != STATE_VERSION)
        return agti_error(AGT_EPARSE, "%s: unknown version %lld", where,
                          (long long)json_integer_value(json_object_get(st, "version")));
    if (!json_is_array(msgs))
        return agti_error(AGT_EPARSE, "%s: \"messages\" is not an array", where);
    if (waiting && !json_is_array(waiting))
        return agti_error(AGT_EPARSE, "%s: \"waiting\" is not an array", where);
    if ((turns && (!json_is_integer(turns) || json_integer_value(turns) < 0 ||
                   json_integer_value(turns) > INT32_MAX)) ||
        (tokens && (!json_is_integer(tokens) || json_integer_value(tokens) < 0)) ||
        (stopv && (!json_is_integer(stopv) || json_integer_value(stopv) < 0 ||
                   json_integer_value(stopv) > AGT_AGENT_STOP_ERROR)))
        return agti_error(AGT_EPARSE,
                          "%s: \"turns\", \"tokens_used\" and \"stop\" must be integers in range",
                          where);
    rc = check_restored_messages(msgs, where);
    size_t nw = json_array_size(waiting);
    if (rc != AGT_OK || nw == 0)
        return rc;
    if (!(ps->calls = calloc(nw, sizeof *ps->calls)))
        return agti_oom();
    ps->n_calls = nw;
    size_t i;
    json_t *w;
    json_array_foreach(waiting, i, w)
    {
        const char *id = json_string_value(json_object_get(w, "id"));
        const char *name = json_string_value(json_object_get(w, "name"));
        const char *args = json_string_value(json_object_get(w, "arguments"));
        const char *text = json_string_value(json_object_get(w, "text"));
        json_t *sp = json_object_get(w, "suspended");
        if (!id || !name || !args || (sp && !json_is_object(sp))) {
            rc = agti_error(AGT_EPARSE,
                            "%s: waiting[%zu] needs \"id\", \"name\" and \"arguments\" strings "
                            "(and \"suspended\" an object)",
                            where, i);
            break;
        }
        call *c = &ps->calls[i];
        c->id = agti_strdup(id);
        c->name = agti_strdup(name);
        c->args = agti_strdup(args);
        c->text = text ? agti_strdup(text) : NULL;
        c->answered = json_is_true(json_object_get(w, "answered")) && text && !sp;
        c->is_error = json_is_true(json_object_get(w, "is_error"));
        c->presented = true;
        c->announced = true;
        if (!c->id || !c->name || !c->args || (text && !c->text)) {
            rc = agti_oom();
            break;
        }
    }
    if (rc != AGT_OK)
        pstate_free(ps);
    return rc;
}

/* Applies a parsed state to an agent (takes its calls). */
static void apply_state(agt_agent *a, pstate *ps)
{
    json_t *st = ps->doc;
    json_t *msgs = json_object_get(st, "messages");
    calls_clear(a);
    a->calls = ps->calls;
    a->n_calls = ps->n_calls;
    ps->calls = NULL;
    ps->n_calls = 0;
    a->waiting = a->n_calls > 0;
    json_decref(a->messages);
    a->messages = json_incref(msgs);
    json_t *turns = json_object_get(st, "turns"), *tokens = json_object_get(st, "tokens_used");
    json_t *stopv = json_object_get(st, "stop");
    a->turns = turns ? (int)json_integer_value(turns) : 0;
    a->tokens_used = tokens ? json_integer_value(tokens) : 0;
    a->stop = stopv ? (int)json_integer_value(stopv) : AGT_AGENT_STOP_NONE;
    a->last_count = -1;
    free(a->last_text);
    a->last_text = NULL;
    for (size_t k = json_array_size(msgs); k-- > 0;) {
        json_t *m = json_array_get(msgs, k);
        if (strcmp(json_string_value(json_object_get(m, "role")), "assistant") == 0) {
            const char *t = json_string_value(json_object_get(m, "content"));
            a->last_text = agti_strdup(t ? t : "");
            break;
        }
    }
}

/* Restored sub-agents, built before anything is replaced. */
typedef struct rsubs {
    sub **v;
    pstate *ps; /* per sub-agent */
    size_t n;
} rsubs;

static void sub_destroy(sub *sb)
{
    agt_agent_free(sb->agent);
    agt_session_free(sb->session);
    agt_model_free(sb->own_model);
    free(sb->item);
    free(sb);
}

static void rsubs_free(rsubs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        pstate_free(&r->ps[i]);
        if (r->v[i])
            sub_destroy(r->v[i]);
    }
    free(r->v);
    free(r->ps);
    memset(r, 0, sizeof *r);
}

static int restore_subs(agt_agent *a, json_t *list, rsubs *r)
{
    memset(r, 0, sizeof *r);
    if (list && !json_is_array(list))
        return agti_error(AGT_EPARSE, "agent state: \"subs\" is not an array");
    size_t n = json_array_size(list);
    if (n == 0)
        return AGT_OK;
    if (!(r->v = calloc(n, sizeof *r->v)) || !(r->ps = calloc(n, sizeof *r->ps))) {
        free(r->v);
        r->v = NULL;
        return agti_oom();
    }
    r->n = n;
    int rc = AGT_OK;
    for (size_t i = 0; rc == AGT_OK && i < n; i++) {
        json_t *o = json_array_get(list, i);
        char want[32], where[64];
        snprintf(want, sizeof want, "agent-%zu", i + 1);
        snprintf(where, sizeof where, "agent state: subs[%zu]", i);
        const char *id = json_string_value(json_object_get(o, "id"));
        json_t *parent = json_object_get(o, "parent"), *item = json_object_get(o, "item");
        json_t *rcv = json_object_get(o, "rc"), *tb = json_object_get(o, "turns_before");
        bool lost = json_is_true(json_object_get(o, "lost"));
        sub *par = NULL;
        if (!json_is_object(o) || !id || strcmp(id, want) != 0) {
            rc = agti_error(AGT_EPARSE, "%s: needs \"id\":\"%s\"", where, want);
            break;
        }
        if (parent && !json_is_null(parent)) {
            const char *pid = json_string_value(parent);
            for (size_t k = 0; pid && k < i; k++)
                if (strcmp(r->v[k]->id, pid) == 0)
                    par = r->v[k];
            if (!par || par->level >= SUB_MAX_DEPTH) {
                rc = agti_error(AGT_EPARSE,
                                "%s: \"parent\" must name an earlier sub-agent of level 1", where);
                break;
            }
        }
        if ((item && !json_is_null(item) && !json_is_string(item)) ||
            (!lost && (!json_is_integer(rcv) || json_integer_value(rcv) > 0 ||
                       json_integer_value(rcv) < -64 || !json_is_integer(tb) ||
                       json_integer_value(tb) < 0 || json_integer_value(tb) > INT32_MAX ||
                       !json_is_object(json_object_get(o, "session"))))) {
            rc = agti_error(AGT_EPARSE,
                            "%s: \"item\" must be a string, \"rc\" and \"turns_before\" "
                            "integers in range, \"session\" an object",
                            where);
            break;
        }
        sub *sb = calloc(1, sizeof *sb);
        if (!sb) {
            rc = agti_oom();
            break;
        }
        r->v[i] = sb;
        snprintf(sb->id, sizeof sb->id, "%s", id);
        sb->root = a;
        sb->parent = par;
        sb->level = par ? par->level + 1 : 1;
        sb->lost = lost;
        atomic_init(&sb->busy, false);
        sb->rc = lost ? AGT_OK : (int)json_integer_value(rcv);
        sb->turns_before = lost ? 0 : (int)json_integer_value(tb);
        sb->on_host = json_is_true(json_object_get(o, "on_host"));
        if (json_is_string(item) && !(sb->item = agti_strdup(json_string_value(item)))) {
            rc = agti_oom();
            break;
        }
        rc = agt_session_new(&sb->session, agt_session_registry(a->session),
                             agt_session_root(a->session));
        if (rc == AGT_OK)
            rc = agt_agent_new(&sb->agent, sb->session, a->model);
        if (rc != AGT_OK)
            break;
        sb->agent->self = sb;
        sb->agent->max_turns = a->max_turns;
        sb->agent->window = a->window;
        sb->agent->percent = a->percent;
        if (lost)
            continue;
        char *ss = json_dumps(json_object_get(o, "session"), JSON_COMPACT);
        rc = ss ? agt_session_restore(sb->session, ss, strlen(ss)) : agti_oom();
        free(ss);
        if (rc != AGT_OK) {
            if (rc != AGT_ENOMEM) {
                char *why = agti_strdup(agt_error_message());
                rc = why ? agti_error(AGT_EPARSE, "%s: session: %s", where, why) : agti_oom();
                free(why);
            }
            break;
        }
        snprintf(where, sizeof where, "agent state: subs[%zu].agent", i);
        rc = parse_state(json_object_get(o, "agent"), where, &r->ps[i]);
    }
    if (rc != AGT_OK)
        rsubs_free(r);
    return rc;
}

/* Resolves the "suspended" members of a parsed state's calls to the
 * restored sub-agents (each claimed once). */
static int resolve_susp(pstate *ps, const char *owner, rsubs *r, bool *claimed)
{
    json_t *waiting = json_object_get(ps->doc, "waiting");
    for (size_t i = 0; i < ps->n_calls; i++) {
        json_t *sp = json_object_get(json_array_get(waiting, i), "suspended");
        if (!sp)
            continue;
        json_t *ids = json_object_get(sp, "subs");
        json_t *desc = json_object_get(sp, "description"), *note = json_object_get(sp, "note");
        bool is_swarm = json_is_true(json_object_get(sp, "swarm"));
        size_t n = json_array_size(ids);
        if (!json_is_array(ids) || n == 0 || (!is_swarm && n != 1) ||
            !json_is_string(json_object_get(sp, "session_arguments")) ||
            (desc && !json_is_null(desc) && !json_is_string(desc)) ||
            (note && !json_is_null(note) && !json_is_string(note)))
            return agti_error(AGT_EPARSE,
                              "agent state: %s: waiting[%zu].suspended needs \"subs\" (one for "
                              "Agent), \"session_arguments\", string \"description\"/\"note\"",
                              owner, i);
        susp *s = calloc(1, sizeof *s);
        if (!s || !(s->subs = calloc(n, sizeof *s->subs))) {
            free(s);
            return agti_oom();
        }
        ps->calls[i].susp = s;
        s->swarm = is_swarm;
        s->parallel = json_is_true(json_object_get(sp, "parallel"));
        if ((json_is_string(desc) && !(s->desc = agti_strdup(json_string_value(desc)))) ||
            (json_is_string(note) && !(s->note = agti_strdup(json_string_value(note)))))
            return agti_oom();
        for (size_t k = 0; k < n; k++) {
            const char *id = json_string_value(json_array_get(ids, k));
            size_t j = 0;
            while (id && j < r->n && strcmp(r->v[j]->id, id) != 0)
                j++;
            if (!id || j == r->n || claimed[j] || strcmp(owner, id) == 0 || r->v[j]->lost)
                return agti_error(AGT_EPARSE,
                                  "agent state: %s: waiting[%zu].suspended.subs[%zu] is not a "
                                  "restored sub-agent that no other call waits for",
                                  owner, i, k);
            claimed[j] = true;
            s->subs[s->n++] = r->v[j];
        }
    }
    return AGT_OK;
}

/* Parks the restored sub-agents' waiting calls in their sessions again,
 * and keeps their suspended calls. */
static int repark_subs(rsubs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        pstate *ps = &r->ps[i];
        json_t *waiting = json_object_get(ps->doc, "waiting");
        for (size_t k = 0; k < ps->n_calls; k++) {
            call *c = &ps->calls[k];
            int rc = AGT_OK;
            if (c->susp) {
                json_t *sp = json_object_get(json_array_get(waiting, k), "suspended");
                rc = agti_session_add_suspended(
                    r->v[i]->session, c->id, c->name,
                    json_string_value(json_object_get(sp, "session_arguments")),
                    json_string_value(json_object_get(sp, "session_note")));
            } else if (!c->answered) {
                rc = agti_session_repark(r->v[i]->session, c->id, c->name, c->args);
            }
            if (rc != AGT_OK && rc != AGT_ENOMEM) {
                char *why = agti_strdup(agt_error_message());
                rc =
                    why ? agti_error(AGT_EPARSE, "agent state: subs[%zu]: %s", i, why) : agti_oom();
                free(why);
            }
            if (rc != AGT_OK)
                return rc;
        }
    }
    return AGT_OK;
}

/* Frees every sub-agent of the root (none runs: bg_free_all first). */
static void subs_free(agt_agent *a)
{
    for (size_t i = 0; i < a->n_subs; i++)
        sub_destroy(a->subs[i]);
    free(a->subs);
    a->subs = NULL;
    a->n_subs = 0;
}

int agt_agent_restore(agt_agent *a, const char *json, size_t len)
{
    if (!a || !json)
        return agti_error(AGT_EINVAL, "agt_agent_restore: NULL argument");
    if (a->self)
        return agti_error(AGT_EINVAL, "agt_agent_restore: not a root agent");
    json_t *doc = agti_json_parse(json, len, "agent state");
    if (!doc)
        return AGT_EPARSE;
    pstate ps;
    rsubs r = {0};
    bool *claimed = NULL;
    int rc = parse_state(doc, "agent state", &ps);
    if (rc == AGT_OK)
        rc = restore_subs(a, json_object_get(doc, "subs"), &r);
    if (rc == AGT_OK && r.n && !(claimed = calloc(r.n, sizeof *claimed)))
        rc = agti_oom();
    if (rc == AGT_OK)
        rc = resolve_susp(&ps, "root", &r, claimed);
    for (size_t i = 0; rc == AGT_OK && i < r.n; i++)
        if (!r.v[i]->lost)
            rc = resolve_susp(&r.ps[i], r.v[i]->id, &r, claimed);
    if (rc == AGT_OK)
        rc = repark_subs(&r);
    free(claimed);
    lost_list lost = {0};
    if (rc == AGT_OK)
        rc = parse_lost(json_object_get(doc, "tasks"), &lost);
    json_t *waiting = json_object_get(doc, "waiting");
    for (size_t i = 0; rc == AGT_OK && i < ps.n_calls; i++) {
        /* the root session's record of a suspended call (replacing an old one) */
        if (!ps.calls[i].susp)
            continue;
        json_t *sp = json_object_get(json_array_get(waiting, i), "suspended");
        agti_session_drop_suspended(a->session, ps.calls[i].id);
        rc = agti_session_add_suspended(a->session, ps.calls[i].id, ps.calls[i].name,
                                        json_string_value(json_object_get(sp, "session_arguments")),
                                        json_string_value(json_object_get(sp, "session_note")));
    }
    if (rc != AGT_OK) {
        for (size_t i = 0; i < ps.n_calls; i++)
            if (ps.calls[i].susp)
                agti_session_drop_suspended(a->session, ps.calls[i].id);
        lost_list_free(&lost);
        pstate_free(&ps);
        rsubs_free(&r);
        json_decref(doc);
        return rc;
    }
    /* commit: the old sub-agents and tasks go, the restored ones come */
    bg_free_all(a);
    lost_free_all(a);
    a->lost = lost.v;
    a->n_lost = lost.n;
    for (size_t i = 0; i < lost.n; i++)
        agti_session_ext_add(a->session, lost.v[i]->id, lost.v[i]->kind, lost.v[i]->description,
                             &lost_ops, lost.v[i]);
    pthread_mutex_lock(&a->subs_lock);
    subs_free(a);
    /* the root's old calls go first (they may name old sub-agents) */
    for (size_t i = 0; i < a->n_calls; i++)
        if (a->calls[i].susp) {
            bool kept = false;
            for (size_t k = 0; k < ps.n_calls; k++)
                kept |= ps.calls[k].susp && strcmp(ps.calls[k].id, a->calls[i].id) == 0;
            if (kept) { /* same id restored: keep the new record */
                susp_free(a->calls[i].susp);
                a->calls[i].susp = NULL;
            }
        }
    apply_state(a, &ps);
    a->subs = r.v;
    a->n_subs = r.n;
    for (size_t i = 0; i < r.n; i++) {
        if (!r.v[i]->lost)
            apply_state(r.v[i]->agent, &r.ps[i]);
        /* a child's system prompt is its parent's; lost ones get one too */
        if (r.v[i]->lost) {
            json_t *first = json_array_get(a->messages, 0);
            const char *sys = NULL;
            if (first && strcmp(json_string_value(json_object_get(first, "role")), "system") == 0)
                sys = json_string_value(json_object_get(first, "content"));
            char *prompt =
                sys ? agti_aprintf("%s\n\n%s", sys, SUB_PROMPT) : agti_strdup(SUB_PROMPT);
            if (prompt)
                agt_agent_set_system_prompt(r.v[i]->agent, prompt);
            free(prompt);
        }
    }
    pthread_mutex_unlock(&a->subs_lock);
    free(r.ps);
    json_decref(doc);
    return AGT_OK;
}
