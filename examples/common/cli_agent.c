#include "cli_agent.h"

#include "cli_util.h"

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
    if (rc != AGT_OK) {
        snprintf(err, errlen, "model setup: %s", agt_error_message());
        agt_model_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void cli_agent_init(cli_agent *a, agt_model *m, agt_session *s)
{
    memset(a, 0, sizeof *a);
    a->model = m;
    a->session = s;
    a->messages = json_array();
    a->started_ms = cli_now_ms();
}

void cli_agent_fini(cli_agent *a)
{
    json_decref(a->messages);
    a->messages = NULL;
}

void cli_agent_add(cli_agent *a, const char *role, const char *content)
{
    json_array_append_new(a->messages, json_pack("{s:s, s:s}", "role", role, "content", content));
}

static int cancel_poll(void *payload)
{
    cli_agent *a = payload;
    if (a->cancel != NULL && *a->cancel)
        return 1;
    return a->deadline_ms > 0 && cli_now_ms() > a->deadline_ms;
}

void cli_agent_arm(cli_agent *a)
{
    agt_model_set_cancel_callback(a->model, cancel_poll, a);
}

static int stopped(cli_agent *a)
{
    if (a->cancel != NULL && *a->cancel)
        return CLI_RUN_CANCELLED;
    if (a->deadline_ms > 0 && cli_now_ms() > a->deadline_ms)
        return CLI_RUN_TIMEOUT;
    return 0;
}

/* Appends the assistant message of a response to the conversation. */
static void add_assistant(cli_agent *a, const agt_model_response *r)
{
    json_t *msg =
        json_pack("{s:s, s:s}", "role", "assistant", "content", agt_model_response_text(r));
    const char *think = agt_model_response_thinking(r);
    if (think[0] != '\0')
        json_object_set_new(msg, "reasoning_content", json_string(think));
    size_t n = agt_model_response_tool_count(r);
    if (n > 0) {
        json_t *calls = json_array();
        for (size_t i = 0; i < n; i++) {
            const char *args = agt_model_response_tool_arguments(r, i);
            json_array_append_new(calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id",
                                                   agt_model_response_tool_id(r, i), "type",
                                                   "function", "function", "name",
                                                   agt_model_response_tool_name(r, i), "arguments",
                                                   args != NULL && args[0] != '\0' ? args : "{}"));
        }
        json_object_set_new(msg, "tool_calls", calls);
    }
    json_array_append_new(a->messages, msg);
}

static void add_tool_result(cli_agent *a, const char *id, const char *text)
{
    json_array_append_new(a->messages, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                                                 id, "content", text));
}

/* Dispatches one call; a call left pending (no approver set) is declined. */
static agt_result *dispatch_one(cli_agent *a, const char *id, const char *name, const char *args)
{
    agt_result *res = NULL;
    int rc = agt_session_dispatch(a->session, id, name, args, &res);
    if (rc == AGT_EPENDING)
        rc = agt_session_answer(a->session, id, AGT_DECISION_REJECT,
                                "this host cannot ask for approval", &res);
    if (rc != AGT_OK)
        res = NULL;
    return res;
}

int cli_agent_run(cli_agent *a, const char *tools_json, char *err, size_t errlen)
{
    int max = a->max_turns > 0 ? a->max_turns : 50;
    for (int turn = 0; turn < max; turn++) {
        int st = stopped(a);
        if (st != 0)
            return st;
        char *msgs = json_dumps(a->messages, JSON_COMPACT);
        agt_model_response *r = NULL;
        int rc = agt_model_complete(&r, a->model, msgs, strlen(msgs), tools_json,
                                    tools_json != NULL ? strlen(tools_json) : 0);
        free(msgs);
        if (rc != AGT_OK) {
            st = stopped(a);
            if (st != 0)
                return st;
            snprintf(err, errlen, "model request failed: %s", agt_error_message());
            return CLI_RUN_ERROR;
        }
        a->turns++;
        int64_t pt = -1, ct = -1;
        agt_model_response_usage(r, &pt, &ct, NULL);
        if (pt > 0)
            a->prompt_tokens += pt;
        if (ct > 0)
            a->completion_tokens += ct;
        add_assistant(a, r);
        if (a->on_reply != NULL)
            a->on_reply(agt_model_response_text(r), a->payload);
        if (a->set_thinking)
            agt_session_set_turn_thinking(a->session, agt_model_response_thinking(r));
        size_t n = agt_model_response_tool_count(r);
        int stop = 0;
        for (size_t i = 0; i < n; i++) {
            const char *id = agt_model_response_tool_id(r, i);
            const char *name = agt_model_response_tool_name(r, i);
            const char *args = agt_model_response_tool_arguments(r, i);
            if (stop || stopped(a)) {
                add_tool_result(a, id, "Not run: the turn was stopped.");
                continue;
            }
            agt_result *res = dispatch_one(a, id, name, args);
            const char *text = res != NULL ? agt_result_text(res) : agt_error_message();
            add_tool_result(a, id, text != NULL ? text : "");
            if (a->on_tool != NULL)
                a->on_tool(name, args, res, a->payload);
            agt_result_free(res);
            if (a->should_stop != NULL && a->should_stop(a->payload))
                stop = 1;
        }
        agt_model_response_free(r);
        if (stop || n == 0)
            return stopped(a) ? stopped(a) : CLI_RUN_DONE;
    }
    return CLI_RUN_TURNS;
}
