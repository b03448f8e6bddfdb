#include "cli_agent.h"

#include "cli_util.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_model_open(const cli_config *cfg, agt_model **out, char *err, size_t errlen)
{
    agt_model *m = NULL;
    int rc;
    *out = NULL;
    if (cfg->replay_path != NULL) {
        rc = agt_model_new_replay(&m, cfg->replay_path);
        if (rc != AGT_OK) {
            snprintf(err, errlen, "replay model %s: %s", cfg->replay_path, agt_error_message());
            return -1;
        }
        *out = m;
        return 0;
    }
    rc = agt_model_new(&m, cfg->protocol == CLI_PROTO_ANTHROPIC ? AGT_PROTOCOL_ANTHROPIC
                                                                : AGT_PROTOCOL_OPENAI);
    if (rc == AGT_OK)
        rc = agt_model_set_base_url(m, cfg->base_url);
    if (rc == AGT_OK)
        rc = agt_model_set_name(m, cfg->model);
    if (rc == AGT_OK && cfg->api_key != NULL)
        rc = agt_model_set_api_key(m, cfg->api_key);
    if (rc == AGT_OK && cfg->max_tokens > 0)
        rc = agt_model_set_max_tokens(
            m, cfg->max_tokens, cfg->max_tokens_field ? AGT_MAX_COMPLETION_TOKENS : AGT_MAX_TOKENS);
    if (rc == AGT_OK && cfg->extra_body != NULL)
        rc = agt_model_set_extra_body(m, cfg->extra_body, strlen(cfg->extra_body));
    if (rc == AGT_OK && cfg->extra_headers != NULL)
        rc = agt_model_set_extra_headers(m, cfg->extra_headers, strlen(cfg->extra_headers));
    if (rc != AGT_OK) {
        snprintf(err, errlen, "model setup: %s", agt_error_message());
        agt_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

static int stopped(const cli_agent *a)
{
    if (a->cancel != NULL && *a->cancel)
        return CLI_RUN_CANCELLED;
    if (a->deadline_ms > 0 && cli_now_ms() > a->deadline_ms)
        return CLI_RUN_TIMEOUT;
    return 0;
}

/* The model's cancel poll: HTTP requests stop within ~100 ms. */
static int cancel_poll(void *payload)
{
    return stopped(payload) != 0;
}

static void keep_thinking(cli_agent *a, const char *text, size_t len)
{
    char *p = realloc(a->thinking, a->thinking_len + len + 1);
    if (p == NULL)
        return;
    memcpy(p + a->thinking_len, text, len);
    a->thinking_len += len;
    p[a->thinking_len] = '\0';
    a->thinking = p;
}

/* Calls of the turn that started and have not finished, by event id: the
 * calls of a parallel group all start before any of them finishes, so each
 * finished event is matched to its own arguments by id. */
static void tool_started(cli_agent *a, json_t *ev)
{
    const char *id = json_string_value(json_object_get(ev, "id"));
    if (id == NULL)
        return;
    if (a->started == NULL)
        a->started = json_object();
    json_object_set(a->started, id, ev);
    if (a->on_tool_started != NULL) {
        const char *name = json_string_value(json_object_get(ev, "name"));
        const char *args = json_string_value(json_object_get(ev, "arguments"));
        a->on_tool_started(id, name != NULL ? name : "?", args != NULL ? args : "{}", a->payload);
    }
}

static void tool_finished(cli_agent *a, json_t *ev)
{
    const char *id = json_string_value(json_object_get(ev, "id"));
    const char *name = json_string_value(json_object_get(ev, "name"));
    const char *preview = json_string_value(json_object_get(ev, "preview"));
    json_t *st = id != NULL ? json_object_get(a->started, id) : NULL;
    const char *args = json_string_value(json_object_get(st, "arguments"));
    if (a->on_tool != NULL)
        a->on_tool(id != NULL ? id : "", name != NULL ? name : "?", args != NULL ? args : "{}",
                   json_is_true(json_object_get(ev, "is_error")), preview != NULL ? preview : "",
                   a->payload);
    if (id != NULL)
        json_object_del(a->started, id);
}

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    cli_agent *a = payload;
    json_t *ev = NULL;
    if (kind == AGT_AGENT_TEXT) {
        if (a->on_text != NULL)
            a->on_text(data, len, a->payload);
    } else if (kind == AGT_AGENT_THINKING) {
        keep_thinking(a, data, len);
        if (a->on_thinking != NULL)
            a->on_thinking(data, len, a->payload);
    } else if ((ev = json_loadb(data, len, 0, NULL)) != NULL) {
        if (kind == AGT_AGENT_USAGE) {
            json_int_t p = json_integer_value(json_object_get(ev, "prompt_tokens"));
            json_int_t c = json_integer_value(json_object_get(ev, "completion_tokens"));
            a->prompt_tokens += p > 0 ? p : 0;
            a->completion_tokens += c > 0 ? c : 0;
            /* The model call of this turn is over: its reasoning goes with the
               comments its tool calls store. */
            if (a->set_thinking)
                agt_session_set_turn_thinking(a->session, a->thinking);
            free(a->thinking);
            a->thinking = NULL;
            a->thinking_len = 0;
        } else if (kind == AGT_AGENT_TOOL_STARTED) {
            tool_started(a, ev);
        } else if (kind == AGT_AGENT_TOOL_FINISHED) {
            tool_finished(a, ev);
        } else if (kind == AGT_AGENT_NOTIFICATION && a->on_notification != NULL) {
            char *s = json_dumps(ev, JSON_COMPACT);
            if (s != NULL)
                a->on_notification(s, a->payload);
            free(s);
        }
        json_decref(ev);
    }
    return stopped(a) != 0;
}

int cli_agent_init(cli_agent *a, agt_model *m, agt_session *s, int max_turns, char *err,
                   size_t errlen)
{
    memset(a, 0, sizeof *a);
    a->model = m;
    a->session = s;
    if (agt_agent_new(&a->agent, s, m) != AGT_OK ||
        agt_agent_set_event_callback(a->agent, on_event, a) != AGT_OK ||
        agt_agent_set_max_turns(a->agent, max_turns > 0 ? max_turns : 50) != AGT_OK ||
        agt_model_set_cancel_callback(m, cancel_poll, a) != AGT_OK) {
        snprintf(err, errlen, "agent setup: %s", agt_error_message());
        return -1;
    }
    return 0;
}

void cli_agent_fini(cli_agent *a)
{
    if (a->model != NULL)
        agt_model_set_cancel_callback(a->model, NULL, NULL);
    agt_agent_free(a->agent);
    free(a->thinking);
    json_decref(a->started);
    memset(a, 0, sizeof *a);
}

int cli_agent_set_system(cli_agent *a, const char *text)
{
    return agt_agent_set_system_prompt(a->agent, text) == AGT_OK ? 0 : -1;
}

int cli_agent_add_user(cli_agent *a, const char *text)
{
    return agt_agent_add_user_message(a->agent, text) == AGT_OK ? 0 : -1;
}

int cli_agent_add_notification(cli_agent *a, const char *message)
{
    size_t len = strlen(message) + 64;
    char *text = malloc(len);
    if (text == NULL)
        return -1;
    /* the wrapping agt_agent_run() gives the events it picks up itself */
    snprintf(text, len, "<system-notification>\n%s\n</system-notification>", message);
    int rc = cli_agent_add_user(a, text);
    free(text);
    return rc;
}

/* A call left pending (no approver set) is declined, and the run resumes. */
static int decline_pending(cli_agent *a)
{
    char *pj = NULL;
    if (agt_session_pending(a->session, &pj) != AGT_OK)
        return AGT_ERROR;
    json_t *arr = json_loads(pj, 0, NULL);
    agt_free(pj);
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const char *id = json_string_value(json_object_get(json_array_get(arr, i), "call_id"));
        if (id != NULL)
            agt_agent_answer(a->agent, id, AGT_DECISION_REJECT,
                             "this host cannot ask for approval");
    }
    json_decref(arr);
    return agt_agent_resume(a->agent);
}

int cli_agent_run(cli_agent *a, char *err, size_t errlen)
{
    int rc = agt_agent_run(a->agent);
    for (int k = 0; rc == AGT_EPENDING && k < 1000; k++)
        rc = decline_pending(a);
    int st = stopped(a);
    if (rc == AGT_OK)
        return CLI_RUN_DONE;
    if (st != 0)
        return st;
    if (rc == AGT_ELIMIT && agt_agent_stop_reason(a->agent) == AGT_AGENT_STOP_MAX_TURNS)
        return CLI_RUN_TURNS;
    if (rc == AGT_ECANCELLED)
        return CLI_RUN_CANCELLED;
    snprintf(err, errlen, "%s", agt_error_message());
    return CLI_RUN_ERROR;
}

const char *cli_agent_text(const cli_agent *a)
{
    return agt_agent_text(a->agent);
}

int cli_agent_turns(const cli_agent *a)
{
    return agt_agent_turns(a->agent);
}
