/*
 * The agent loop over a real session (chat tool set) with the replay model
 * and with the HTTP model against fake_server.py on 127.0.0.1: a two-turn
 * tool call, approval pause/resume (approve and reject), save/restore of a
 * paused agent, turn and token budgets, cancel (event callback and another
 * thread), task_done, compaction of old tool outputs, and background-task
 * notifications from agt_session_tick().
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "agent_fixture.h"
#include "harness.h"

static fake_server srv;
static char root[64];

typedef struct counts {
    int text, thinking, started, finished, approval, usage, notification, compacted;
    int cancel_on_started;
    int cancel_on_finished;
    char text_buf[512];
    char last_finished[512];
} counts;

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    counts *c = payload;
    switch (kind) {
    case AGT_AGENT_TEXT:
        c->text++;
        if (strlen(c->text_buf) + len < sizeof c->text_buf)
            strncat(c->text_buf, data, len);
        break;
    case AGT_AGENT_THINKING:
        c->thinking++;
        break;
    case AGT_AGENT_TOOL_STARTED:
        c->started++;
        return c->cancel_on_started;
    case AGT_AGENT_TOOL_FINISHED:
        c->finished++;
        snprintf(c->last_finished, sizeof c->last_finished, "%.*s", (int)len, data);
        return c->cancel_on_finished;
    case AGT_AGENT_APPROVAL:
        c->approval++;
        break;
    case AGT_AGENT_USAGE:
        c->usage++;
        break;
    case AGT_AGENT_NOTIFICATION:
        c->notification++;
        break;
    case AGT_AGENT_COMPACTED:
        c->compacted++;
        break;
    }
    return 0;
}

static int big_provider(agt_call *call, void *payload)
{
    (void)payload;
    char text[4001];
    memset(text, 'x', 4000);
    text[4000] = 0;
    return agt_call_set_text(call, text);
}

static int done_provider(agt_call *call, void *payload)
{
    (void)payload;
    return agt_call_set_text(call, "review finished");
}

typedef struct fixture {
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    counts ev;
    char *replay;
} fixture;

static int setup(fixture *fx, const char *const *lines)
{
    memset(fx, 0, sizeof *fx);
    if (agt_registry_new(&fx->reg) != AGT_OK ||
        agt_registry_load_builtin(fx->reg, "chat") != AGT_OK)
        return -1;
    const char *big = "{\"name\":\"Big\",\"access\":\"read\",\"definition\":{\"name\":\"Big\","
                      "\"description\":\"big output\",\"parameters\":{\"type\":\"object\"}}}";
    agt_registry_set_provider(fx->reg, "Big", big_provider, NULL);
    agt_registry_add_json(fx->reg, big, strlen(big));
    agt_registry_load_builtin(fx->reg, "review");
    agt_registry_set_provider(fx->reg, "task_done", done_provider, NULL);
    if (agt_session_new(&fx->s, fx->reg, root) != AGT_OK)
        return -1;
    if (lines) {
        fx->replay = malloc(128);
        fx_write_replay(fx->replay, 128, root, "replay-", lines);
        if (agt_model_new_replay(&fx->m, fx->replay) != AGT_OK)
            return -1;
    }
    if (fx->m && agt_agent_new(&fx->a, fx->s, fx->m) != AGT_OK)
        return -1;
    if (fx->a) {
        agt_agent_set_event_callback(fx->a, on_event, &fx->ev);
        agt_agent_set_system_prompt(fx->a, "You are a test.");
        agt_agent_add_user_message(fx->a, "Do it.");
    }
    return 0;
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    if (fx->replay)
        unlink(fx->replay);
    free(fx->replay);
}

static const char *msg_field(json_t *msgs, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(msgs, i), key));
}

static const char *TODO_CALL =
    "{\"content\":\"Planning.\",\"tool_calls\":[{\"id\":\"r1\",\"name\":\"TodoList\",\"arguments\":"
    "\"{\\\"todos\\\":[{\\\"title\\\":\\\"write "
    "tests\\\",\\\"status\\\":\\\"in_progress\\\"}]}\"}],"
    "\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":40,\"total_tokens\":100}}";
static const char *FINAL = "{\"content\":\"Done.\",\"usage\":{\"prompt_tokens\":80,\"completion_"
                           "tokens\":20,\"total_tokens\":100}}";

static void test_two_turns(void)
{
    fixture fx;
    const char *lines[] = {TODO_CALL, FINAL, NULL};
    T_EQ_INT(setup(&fx, lines), 0, "two turns: setup");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "two turns: run ok");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_DONE, "two turns: stopped DONE");
    T_EQ_INT(agt_agent_turns(fx.a), 2, "two turns: 2 model calls");
    T_EQ_INT(agt_agent_tokens_used(fx.a), 200, "two turns: 100 + 100 tokens");
    T_EQ_STR(agt_agent_text(fx.a), "Done.", "two turns: final text");
    char *todos = NULL;
    agt_session_todos(fx.s, &todos);
    T_EQ_STR(todos, "[{\"title\":\"write tests\",\"status\":\"in_progress\"}]",
             "two turns: TodoList ran in the session");
    agt_free(todos);
    json_t *msgs = fx_messages(fx.a);
    T_EQ_INT(json_array_size(msgs), 5, "two turns: system, user, assistant, tool, assistant");
    T_EQ_STR(msg_field(msgs, 0, "role"), "system", "message 0 system");
    T_EQ_STR(msg_field(msgs, 2, "role"), "assistant", "message 2 assistant");
    json_t *tc = json_array_get(json_object_get(json_array_get(msgs, 2), "tool_calls"), 0);
    T_EQ_STR(json_string_value(json_object_get(tc, "id")), "r1", "assistant tool call id");
    T_EQ_STR(json_string_value(json_object_get(json_object_get(tc, "function"), "name")),
             "TodoList", "assistant tool call name");
    T_EQ_STR(msg_field(msgs, 3, "role"), "tool", "message 3 tool");
    T_EQ_STR(msg_field(msgs, 3, "tool_call_id"), "r1", "tool message answers r1");
    T_CHECK(json_object_get(json_array_get(msgs, 3), "is_error") == NULL,
            "TodoList result is not an error");
    T_EQ_STR(msg_field(msgs, 4, "content"), "Done.", "final assistant message");
    json_decref(msgs);
    T_EQ_INT(fx.ev.started, 1, "events: one tool started");
    T_EQ_INT(fx.ev.finished, 1, "events: one tool finished");
    T_CHECK(strstr(fx.ev.last_finished, "\"id\":\"r1\",\"name\":\"TodoList\",\"is_error\":false") !=
                NULL,
            "tool finished event: %s", fx.ev.last_finished);
    T_EQ_INT(fx.ev.usage, 2, "events: usage per turn");
    T_EQ_STR(fx.ev.text_buf, "Planning.Done.", "events: text of both turns");
    T_EQ_INT(agt_agent_run(fx.a), AGT_ELIMIT, "running again with the replay used up: model error");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_ERROR, "stop reason ERROR");
    teardown(&fx);
}

static const char *WRITE_CALL =
    "{\"content\":\"\",\"tool_calls\":[{\"id\":\"w1\",\"name\":\"Write\",\"arguments\":"
    "\"{\\\"path\\\":\\\"out.txt\\\",\\\"content\\\":\\\"hello\\\\n\\\"}\"},"
    "{\"id\":\"t1\",\"name\":\"TodoList\",\"arguments\":\"{}\"}]}";

static void test_approval(void)
{
    fixture fx;
    const char *lines[] = {WRITE_CALL, "{\"content\":\"Written.\"}", NULL};
    T_EQ_INT(setup(&fx, lines), 0, "approval: setup");
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "approval: run pauses with AGT_EPENDING");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_APPROVAL,
             "approval: stop reason APPROVAL");
    T_EQ_INT(fx.ev.approval, 1, "approval: one approval event");
    T_EQ_INT(fx.ev.finished, 1, "approval: the read-only call of the turn ran");
    char *pending = NULL;
    agt_session_pending(fx.s, &pending);
    T_CHECK(pending && strstr(pending, "\"w1\"") != NULL, "approval: session lists w1 as pending");
    agt_free(pending);
    T_EQ_INT(agt_agent_add_user_message(fx.a, "more"), AGT_ESTATE,
             "approval: no user message while paused");
    T_EQ_INT(agt_agent_run(fx.a), AGT_ESTATE, "approval: run while paused: AGT_ESTATE");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "approval: resume before the answer: AGT_ESTATE");
    T_EQ_INT(agt_agent_answer(fx.a, "nope", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "approval: unknown id");

    /* save the paused agent, restore it into a new agent over the same session */
    char *state = NULL;
    T_EQ_INT(agt_agent_save(fx.a, &state), AGT_OK, "approval: save while paused");
    agt_agent *b = NULL;
    agt_agent_new(&b, fx.s, fx.m);
    T_EQ_INT(agt_agent_restore(b, state, strlen(state)), AGT_OK,
             "approval: restore into a new agent");
    agt_free(state);
    counts ev2 = {0};
    agt_agent_set_event_callback(b, on_event, &ev2);
    T_EQ_INT(agt_agent_answer(b, "w1", AGT_DECISION_APPROVE, NULL), AGT_OK, "approval: approve w1");
    T_EQ_INT(agt_agent_resume(b), AGT_OK, "approval: resume runs to the end");
    T_EQ_STR(agt_agent_text(b), "Written.", "approval: final text");
    char path[128];
    snprintf(path, sizeof path, "%s/out.txt", root);
    FILE *f = fopen(path, "r");
    char buf[32] = {0};
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = 0;
        fclose(f);
    }
    T_EQ_STR(buf, "hello\n", "approval: the approved Write wrote the file");
    json_t *msgs = fx_messages(b);
    T_EQ_STR(msg_field(msgs, 3, "tool_call_id"), "w1", "approval: results in call order (w1)");
    T_EQ_STR(msg_field(msgs, 4, "tool_call_id"), "t1", "approval: results in call order (t1)");
    T_EQ_INT(json_array_size(msgs), 6, "approval: 6 messages");
    json_decref(msgs);
    agt_agent_free(b);
    teardown(&fx);

    /* rejection: the model is told */
    const char *lines2[] = {WRITE_CALL, "{\"content\":\"OK, not writing.\"}", NULL};
    unlink(path);
    setup(&fx, lines2);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "reject: paused");
    T_EQ_INT(agt_agent_answer(fx.a, "w1", AGT_DECISION_REJECT, "not now"), AGT_OK,
             "reject: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "reject: resumed");
    msgs = fx_messages(fx.a);
    T_CHECK(json_is_true(json_object_get(json_array_get(msgs, 3), "is_error")),
            "reject: tool result is an error");
    T_CHECK(strstr(msg_field(msgs, 3, "content"), "not now") != NULL,
            "reject: reason passed to the model: %s", msg_field(msgs, 3, "content"));
    json_decref(msgs);
    T_CHECK(access(path, F_OK) != 0, "reject: no file written");
    teardown(&fx);
}

static void test_budgets_and_cancel(void)
{
    fixture fx;
    json_t *msgs;
    const char *lines[] = {TODO_CALL, TODO_CALL, TODO_CALL, FINAL, NULL};
    setup(&fx, lines);
    agt_agent_set_max_turns(fx.a, 2);
    T_EQ_INT(agt_agent_run(fx.a), AGT_ELIMIT, "turn budget: AGT_ELIMIT");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_MAX_TURNS, "turn budget: MAX_TURNS");
    T_EQ_INT(agt_agent_turns(fx.a), 2, "turn budget: 2 calls made");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "turn budget: a new run goes on to the end");
    T_EQ_INT(agt_agent_turns(fx.a), 4, "turn budget: 4 calls in all");
    T_EQ_INT(agt_agent_set_max_turns(fx.a, -1), AGT_EINVAL, "negative turns: EINVAL");
    teardown(&fx);

    setup(&fx, lines);
    agt_agent_set_token_budget(fx.a, 150);
    T_EQ_INT(agt_agent_run(fx.a), AGT_ELIMIT, "token budget: AGT_ELIMIT");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_MAX_TOKENS, "token budget: MAX_TOKENS");
    T_EQ_INT(agt_agent_turns(fx.a), 2, "token budget: stopped before the third call (200 >= 150)");
    teardown(&fx);

    setup(&fx, lines);
    fx.ev.cancel_on_started = 1;
    T_EQ_INT(agt_agent_run(fx.a), AGT_ECANCELLED, "cancel from the event callback: AGT_ECANCELLED");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_CANCELLED, "cancel: CANCELLED");
    T_EQ_INT(agt_agent_turns(fx.a), 1, "cancel: no further model call");
    teardown(&fx);

    /* cancelled when the first of two calls finished (a host whose user
     * interrupted it): the second does not run, and the conversation still
     * has a result for each call */
    const char *two_lines[] = {
        "{\"content\":\"\",\"tool_calls\":[{\"id\":\"t1\",\"name\":\"TodoList\","
        "\"arguments\":\"{}\"},{\"id\":\"t2\",\"name\":\"TodoList\",\"arguments\":\"{}\"}]}",
        FINAL, NULL};
    setup(&fx, two_lines);
    fx.ev.cancel_on_finished = 1;
    T_EQ_INT(agt_agent_run(fx.a), AGT_ECANCELLED, "cancel at a finished call: AGT_ECANCELLED");
    T_EQ_INT(fx.ev.started, 1, "cancel at a finished call: the second call did not start");
    msgs = fx_messages(fx.a);
    T_EQ_INT((int)json_array_size(msgs), 5,
             "cancel at a finished call: system, user, "
             "assistant and two results");
    T_EQ_STR(msg_field(msgs, 3, "tool_call_id"), "t1", "the first call's result");
    T_EQ_STR(msg_field(msgs, 4, "tool_call_id"), "t2", "the second call's result");
    T_EQ_STR(msg_field(msgs, 4, "content"),
             "Not run: the run was cancelled (the user interrupted it) before this call started.",
             "the second call was not run");
    json_decref(msgs);
    fx.ev.cancel_on_finished = 0;
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "after the cancel a new run goes on");
    teardown(&fx);

    const char *done_lines[] = {
        "{\"content\":\"Reviewed.\",\"tool_calls\":[{\"id\":\"d1\",\"name\":\"task_done\","
        "\"arguments\":\"{\\\"state\\\":\\\"DONE\\\"}\"}]}",
        FINAL, NULL};
    setup(&fx, done_lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "task_done: ok");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_TASK_DONE, "task_done: TASK_DONE");
    T_EQ_INT(agt_agent_turns(fx.a), 1, "task_done: one model call");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 3, "content"), "review finished",
             "task_done: its result is in the conversation");
    json_decref(msgs);
    teardown(&fx);
}

static void test_compaction(void)
{
    fixture fx;
    const char *big = "{\"content\":\"\",\"tool_calls\":[{\"id\":\"b%d\",\"name\":\"Big\","
                      "\"arguments\":\"{}\"}]}";
    char l1[256], l2[256];
    snprintf(l1, sizeof l1, big, 1);
    snprintf(l2, sizeof l2, big, 2);
    const char *lines[] = {l1, l2, "{\"content\":\"small now\"}", NULL};
    setup(&fx, lines);
    agt_agent_set_context_window(fx.a, 1000, 80);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "compaction: run ok");
    json_t *msgs = fx_messages(fx.a);
    /* system, user, a(b1), tool(b1), a(b2), tool(b2), a */
    T_EQ_STR(msg_field(msgs, 3, "content"), "[output of Big compacted: 4000 bytes]",
             "compaction: old output replaced");
    T_EQ_INT(strlen(msg_field(msgs, 5, "content")), 4000, "compaction: latest output kept");
    T_EQ_INT(fx.ev.compacted, 1, "compaction: one event");
    json_decref(msgs);
    T_EQ_INT(agt_agent_set_context_window(fx.a, 1000, 0), AGT_EINVAL, "percent 0: EINVAL");
    teardown(&fx);

    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "no window: run ok");
    msgs = fx_messages(fx.a);
    T_EQ_INT(strlen(msg_field(msgs, 3, "content")), 4000, "no window: nothing compacted");
    json_decref(msgs);
    teardown(&fx);
}

static void test_notifications(void)
{
    fixture fx;
    const char *lines[] = {
        "{\"tool_calls\":[{\"id\":\"bg1\",\"name\":\"Bash\",\"arguments\":"
        "\"{\\\"command\\\":\\\"echo "
        "hi\\\",\\\"run_in_background\\\":true,\\\"description\\\":\\\"say hi\\\"}\"}]}",
        "{\"content\":\"started\"}", "{\"content\":\"noted\"}", NULL};
    setup(&fx, lines);
    agt_session_set_mode(fx.s, AGT_MODE_YOLO);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "notifications: first run ok");
    usleep(800000);
    agt_agent_add_user_message(fx.a, "status?");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "notifications: second run ok");
    json_t *msgs = fx_messages(fx.a);
    int found = 0;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *c = json_string_value(json_object_get(m, "content"));
        if (c && strncmp(c, "<system-notification>\n", 22) == 0 &&
            strstr(c, "</system-notification>"))
            found++;
    }
    if (!found) {
        char *dump = json_dumps(msgs, JSON_COMPACT);
        t_diag("conversation: %s", dump);
        free(dump);
    }
    json_decref(msgs);
    T_EQ_INT(found, 1, "notifications: the task_finished event is in the conversation once");
    T_EQ_INT(fx.ev.notification, 1, "notifications: one notification event");
    teardown(&fx);
}

static void *cancel_later(void *arg)
{
    usleep(300000);
    agt_agent_cancel(arg);
    return NULL;
}

static void test_http(void)
{
    fixture fx;
    setup(&fx, NULL);
    fx_http_model(&fx.m, &srv, "agent-1");
    agt_agent_new(&fx.a, fx.s, fx.m);
    agt_agent_set_event_callback(fx.a, on_event, &fx.ev);
    agt_agent_add_user_message(fx.a, "plan");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "http agent: ok");
    T_EQ_STR(agt_agent_text(fx.a), "All set.", "http agent: final text");
    T_EQ_STR(fx.ev.text_buf, "Planning.All set.", "http agent: streamed text");
    char *todos = NULL;
    agt_session_todos(fx.s, &todos);
    T_EQ_STR(todos, "[{\"title\":\"a\",\"status\":\"pending\"}]",
             "http agent: tool call assembled and run");
    agt_free(todos);
    char *last = fake_server_last(&srv, "agent-1");
    json_t *req = json_loads(last, 0, NULL);
    free(last);
    json_t *msgs = json_object_get(json_object_get(req, "body"), "messages");
    T_EQ_INT(json_array_size(msgs), 3, "http agent: second request has user, assistant, tool");
    T_EQ_STR(msg_field(msgs, 2, "tool_call_id"), "call_T", "http agent: tool result sent back");
    T_CHECK(json_array_size(json_object_get(json_object_get(req, "body"), "tools")) > 5,
            "http agent: the session's tools were offered");
    json_decref(req);
    teardown(&fx);

    setup(&fx, NULL);
    fx_http_model(&fx.m, &srv, "slow-agent");
    agt_agent_new(&fx.a, fx.s, fx.m);
    agt_agent_add_user_message(fx.a, "hi");
    pthread_t th;
    pthread_create(&th, NULL, cancel_later, fx.a);
    T_EQ_INT(agt_agent_run(fx.a), AGT_ECANCELLED, "cancel from another thread during a model call");
    pthread_join(th, NULL);
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_CANCELLED, "thread cancel: CANCELLED");
    teardown(&fx);
}

static void test_subagents(void)
{
    fixture fx;
    const char *lines[] = {
        "{\"tool_calls\":[{\"id\":\"p1\",\"name\":\"Agent\",\"arguments\":"
        "\"{\\\"prompt\\\":\\\"make a plan\\\",\\\"description\\\":\\\"plan it\\\"}\"}]}",
        TODO_CALL,
        "{\"content\":\"sub result\"}",
        "{\"content\":\"parent done\"}",
        "{\"tool_calls\":[{\"id\":\"p2\",\"name\":\"Agent\",\"arguments\":"
        "\"{\\\"prompt\\\":\\\"more\\\",\\\"description\\\":\\\"again\\\",\\\"resume\\\":\\\"agent-"
        "1\\\"}\"}]}",
        "{\"content\":\"sub again\"}",
        "{\"content\":\"ok\"}",
        NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_enable_subagents(fx.a), AGT_OK, "sub-agents: enabled");
    agt_session_set_mode(fx.s, AGT_MODE_AUTO); /* Agent is a host tool: it asks in manual mode */
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "sub-agents: parent run ok");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "sub-agents: parent's final text");
    T_EQ_INT(agt_agent_turns(fx.a), 2, "sub-agents: the parent made 2 model calls");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 3, "content"),
             "Sub-agent agent-1 (plan it) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nsub result",
             "sub-agents: the final answer is the tool result");
    json_decref(msgs);
    char *todos = NULL;
    agt_session_todos(fx.s, &todos);
    T_EQ_STR(todos, "[]", "sub-agents: the sub-agent's todo list is its own");
    agt_free(todos);
    agt_agent_add_user_message(fx.a, "again");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "sub-agents: second run with resume ok");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 7, "content"),
             "Sub-agent agent-1 (again) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nsub again",
             "sub-agents: resume continues agent-1");
    json_decref(msgs);
    teardown(&fx);

    /* manual mode: the parent's Agent call runs without asking (the
     * reference auto-allows Agent); the sub-agent's Write, which asks,
     * pauses the parent's run with the sub-agent's call (qualified id);
     * rejected, the sub-agent goes on */
    const char *lines2[] = {
        "{\"tool_calls\":[{\"id\":\"p1\",\"name\":\"Agent\",\"arguments\":"
        "\"{\\\"prompt\\\":\\\"write it\\\",\\\"description\\\":\\\"writer\\\"}\"}]}",
        "{\"tool_calls\":[{\"id\":\"s1\",\"name\":\"Write\",\"arguments\":"
        "\"{\\\"path\\\":\\\"sub.txt\\\",\\\"content\\\":\\\"x\\\"}\"}]}",
        "{\"content\":\"could not write\"}", "{\"content\":\"parent done\"}", NULL};
    setup(&fx, lines2);
    agt_agent_enable_subagents(fx.a);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING,
             "sub-agents (manual): the Agent call runs, the sub-agent's Write pauses the parent");
    T_EQ_INT(agt_agent_answer(fx.a, "p1", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "sub-agents (manual): the Agent call itself never waited");
    T_EQ_INT(fx.ev.approval, 1, "sub-agents (manual): one approval event, agent-1/s1");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/s1", AGT_DECISION_REJECT, "not now"), AGT_OK,
             "sub-agents (manual): the sub-agent's Write rejected");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "sub-agents (manual): resumed to the end");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 3, "content"),
             "Sub-agent agent-1 (writer) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\ncould not write",
             "sub-agents (manual): the sub-agent went on after the declined Write");
    json_decref(msgs);
    char path[128];
    snprintf(path, sizeof path, "%s/sub.txt", root);
    T_CHECK(access(path, F_OK) != 0, "sub-agents (manual): nothing written");
    teardown(&fx);
}

static void test_swarm(void)
{
    fixture fx;
    setup(&fx, NULL);
    fx_http_model(&fx.m, &srv, "swarm-1");
    agt_agent_new(&fx.a, fx.s, fx.m);
    agt_agent_add_user_message(fx.a, "check all");
    T_EQ_INT(agt_agent_enable_subagents(fx.a), AGT_OK, "swarm: enabled");
    T_EQ_INT(agt_agent_set_swarm_concurrency(fx.a, 2), AGT_OK, "swarm: 2 at once");
    /* 0 is no cap now (the reference's default), no longer an error */
    T_EQ_INT(agt_agent_set_swarm_concurrency(fx.a, -1), AGT_EINVAL, "swarm: -1: EINVAL");
    T_EQ_INT(agt_agent_set_swarm_concurrency(fx.a, 129), AGT_EINVAL, "swarm: 129: EINVAL");
    T_EQ_STR(agt_error_message(), "agt_agent_set_swarm_concurrency: max not in 0..128 (0: no cap)",
             "swarm: range message");
    T_EQ_INT(agt_agent_set_swarm_concurrency(fx.a, 0), AGT_OK, "swarm: 0 (no cap) accepted");
    T_EQ_INT(agt_agent_set_swarm_concurrency(fx.a, 2), AGT_OK, "swarm: back to 2 at once");
    agt_registry_freeze(fx.reg);
    agt_session_set_mode(fx.s, AGT_MODE_AUTO);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm (HTTP, frozen registry): ok");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "swarm: parent's final text");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 2, "content"),
             "AgentSwarm: 3 sub-agents, 3 finished, 0 did not.\n\n"
             "## agent-1 \xe2\x80\x94 a: finished after 1 model call\ndone: check a\n\n"
             "## agent-2 \xe2\x80\x94 b: finished after 1 model call\ndone: check b\n\n"
             "## agent-3 \xe2\x80\x94 c: finished after 1 model call\ndone: check c",
             "swarm: one aggregated report in item order");
    json_decref(msgs);
    char *last = fake_server_last(&srv, "swarm-1");
    json_t *req = json_loads(last, 0, NULL);
    free(last);
    T_EQ_INT(json_integer_value(json_object_get(req, "max_inflight")), 2,
             "swarm: two sub-agents ran at once (the bound)");
    json_decref(req);
    teardown(&fx);

    const char *lines[] = {
        "{\"tool_calls\":[{\"id\":\"sw\",\"name\":\"AgentSwarm\",\"arguments\":"
        "\"{\\\"prompt_template\\\":\\\"do {{item}}\\\",\\\"items\\\":[\\\"x\\\",\\\"y\\\"]}\"}]}",
        "{\"content\":\"rx\"}", "{\"content\":\"ry\"}", "{\"content\":\"ok\"}", NULL};
    setup(&fx, lines);
    agt_agent_enable_subagents(fx.a);
    agt_session_set_mode(fx.s, AGT_MODE_AUTO);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm (replay model): ok");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_field(msgs, 3, "content"),
             "AgentSwarm: 2 sub-agents, 2 finished, 0 did not (run one after the other).\n\n"
             "## agent-1 \xe2\x80\x94 x: finished after 1 model call\nrx\n\n"
             "## agent-2 \xe2\x80\x94 y: finished after 1 model call\nry",
             "swarm (replay): sequential report");
    json_decref(msgs);
    teardown(&fx);
}

/* AgentSwarm's concurrency ramps (5 at once, then one more every 700 ms)
 * up to an optional cap, instead of a fixed pool of 4. Shown without timing:
 * scenario ramp-N-K holds every sub-agent request until N are open at once
 * and reports the peak (a request that waits 20 s answers "TIMEOUT"). */
static void ramp_case(const char *scen, int cap, int want_peak, size_t items)
{
    fixture fx;
    setup(&fx, NULL);
    fx_http_model(&fx.m, &srv, scen);
    agt_agent_new(&fx.a, fx.s, fx.m);
    agt_agent_add_user_message(fx.a, "check all");
    agt_agent_enable_subagents(fx.a);
    if (cap >= 0)
        agt_agent_set_swarm_concurrency(fx.a, cap);
    agt_registry_freeze(fx.reg);
    agt_session_set_mode(fx.s, AGT_MODE_YOLO);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "%s: ok", scen);
    json_t *msgs = fx_messages(fx.a);
    const char *rep = msg_field(msgs, 2, "content");
    char head[128];
    snprintf(head, sizeof head, "AgentSwarm: %zu sub-agents, %zu finished, 0 did not.", items,
             items);
    T_CHECK(strncmp(rep, head, strlen(head)) == 0 && strstr(rep, "TIMEOUT") == NULL,
            "%s: every sub-agent finished without waiting out the barrier", scen);
    json_decref(msgs);
    char *last = fake_server_last(&srv, scen);
    json_t *req = json_loads(last, 0, NULL);
    free(last);
    T_EQ_INT(json_integer_value(json_object_get(req, "max_inflight")), want_peak,
             "%s: peak of concurrent sub-agents", scen);
    json_decref(req);
    teardown(&fx);
}

static void test_swarm_ramp(void)
{
    /* the default, no cap: 7 items all run at once (the ramp adds the 6th
     * and 7th while the first 5 wait); a pool of 4 never got there */
    ramp_case("ramp-7-7", -1, 7, 7);
    /* a cap of 6: more than the 5 that start at once, never 7 */
    ramp_case("ramp-6-7", 6, 6, 7);
    /* a cap of 3 below the ramp's start */
    ramp_case("ramp-3-5", 3, 3, 5);
}

/* With resume_agent_ids one new item is enough; without, 2 are needed
 * (the schema required 2 items in every case). */
static void test_swarm_one_item(void)
{
    fixture fx;
    const char *lines[] = {"{\"content\":\"first\"}", "{\"content\":\"again\"}",
                           "{\"content\":\"new one\"}", NULL};
    setup(&fx, lines);
    agt_agent_enable_subagents(fx.a);
    agt_session_set_mode(fx.s, AGT_MODE_YOLO);
    int err = 0;
    char *t = fx_call_text(fx.s, "AgentSwarm",
                           "{\"prompt_template\":\"do {{item}}\",\"items\":[\"x\"]}", &err);
    T_EQ_STR(t,
             "AgentSwarm needs at least 2 items when it resumes no sub-agent; for a single task "
             "call Agent, or add resume_agent_ids to continue existing sub-agents along with "
             "this item.",
             "one item without resume_agent_ids is refused");
    T_EQ_INT(err, 1, "one item alone: an error result");
    free(t);
    t = fx_call_text(fx.s, "Agent", "{\"prompt\":\"p\",\"description\":\"d\"}", &err);
    free(t);
    t = fx_call_text(fx.s, "AgentSwarm",
                     "{\"prompt_template\":\"do {{item}}\",\"items\":[\"y\"],"
                     "\"resume_agent_ids\":[\"agent-1\"]}",
                     &err);
    T_EQ_STR(t,
             "AgentSwarm: 2 sub-agents, 2 finished, 0 did not (run one after the other).\n\n"
             "## agent-2 \xe2\x80\x94 y: finished after 1 model call\nagain\n\n"
             "## agent-1: finished after 1 model call\nnew one",
             "one new item with a resumed sub-agent runs");
    T_EQ_INT(err, 0, "one item with resume: not an error");
    free(t);
    teardown(&fx);
}

static void test_bad_input(void)
{
    fixture fx;
    const char *lines[] = {FINAL, NULL};
    setup(&fx, lines);
    agt_agent *b = NULL;
    T_EQ_INT(agt_agent_new(&b, NULL, fx.m), AGT_EINVAL, "new without session: EINVAL");
    T_EQ_INT(agt_agent_new(&b, fx.s, fx.m), AGT_OK, "new: ok");
    T_EQ_INT(agt_agent_run(b), AGT_ESTATE, "run without a user message: ESTATE");
    T_EQ_INT(agt_agent_resume(b), AGT_ESTATE, "resume when not paused: ESTATE");
    T_EQ_INT(agt_agent_restore(b, "{\"version\":1,\"messages\":[{\"role\":\"robot\"}]}", 43),
             AGT_EPARSE, "restore with a bad role: EPARSE");
    T_EQ_INT(agt_agent_restore(b, "{\"version\":2,\"messages\":[]}", 27), AGT_EPARSE,
             "restore version 2: EPARSE");
    T_EQ_INT(agt_agent_restore(b, "[", 1), AGT_EPARSE, "restore truncated: EPARSE");
    T_EQ_INT(agt_agent_set_system_prompt(b, "sys"), AGT_OK, "system prompt");
    T_EQ_INT(agt_agent_set_system_prompt(b, "sys2"), AGT_OK, "system prompt replaced");
    char *s = NULL;
    agt_agent_messages(b, &s);
    T_EQ_STR(s, "[{\"role\":\"system\",\"content\":\"sys2\"}]", "one system message");
    agt_free(s);
    T_EQ_INT(agt_agent_add_user_message(b, "bad \xff byte"), AGT_OK,
             "invalid UTF-8 user text accepted");
    agt_agent_messages(b, &s);
    T_CHECK(strstr(s, "bad \xef\xbf\xbd byte") != NULL, "invalid byte replaced with U+FFFD");
    agt_free(s);
    agt_agent_free(b);
    agt_agent_free(NULL);
    T_EQ_INT(agt_agent_stop_reason(NULL), AGT_AGENT_STOP_NONE, "stop reason of NULL");
    teardown(&fx);
}

/* The catalogue says at most 128 sub-agents per AgentSwarm call, counting
 * new and resumed ones; each list alone is capped by the schema, the total
 * was not checked (128 items + resumed ids all ran). */
static void test_swarm_total(void)
{
    fixture fx;
    setup(&fx, NULL);
    fx_http_model(&fx.m, &srv, "swarm-1");
    agt_agent_new(&fx.a, fx.s, fx.m);
    T_EQ_INT(agt_agent_enable_subagents(fx.a), AGT_OK, "swarm total: enabled");
    agt_session_set_mode(fx.s, AGT_MODE_YOLO);
    char args[4096];
    size_t k =
        (size_t)snprintf(args, sizeof args, "{\"prompt_template\":\"check {{item}}\",\"items\":[");
    for (int i = 0; i < 127; i++)
        k += (size_t)snprintf(args + k, sizeof args - k, "%s\"m%d\"", i ? "," : "", i);
    snprintf(args + k, sizeof args - k, "],\"resume_agent_ids\":[\"agent-1\",\"agent-2\"]}");
    agt_result *r = NULL;
    T_EQ_INT(agt_session_dispatch(fx.s, "sw", "AgentSwarm", args, &r), AGT_OK,
             "swarm total: dispatched");
    T_EQ_STR(r ? agt_result_text(r) : "",
             "AgentSwarm runs at most 128 sub-agents per call, counting new and resumed ones; "
             "this call asks for 129 (127 new, 2 resumed). Split the work into several "
             "AgentSwarm calls, one after the other.",
             "swarm total: 127 new + 2 resumed refused");
    T_EQ_INT(r ? agt_result_is_error(r) : 0, 1, "swarm total: an error result");
    agt_result_free(r);
    /* 127 + 1 = 128 is within the limit: the next check (the resumed id
     * must exist) answers instead */
    snprintf(args + k, sizeof args - k, "],\"resume_agent_ids\":[\"agent-1\"]}");
    T_EQ_INT(agt_session_dispatch(fx.s, "sw2", "AgentSwarm", args, &r), AGT_OK,
             "swarm total 128: dispatched");
    T_EQ_STR(r ? agt_result_text(r) : "",
             "No sub-agent 'agent-1' to resume; the ids are agent-1 to agent-0.",
             "swarm total: 127 new + 1 resumed passes the limit");
    agt_result_free(r);
    char *pj = NULL;
    agt_session_pending(fx.s, &pj);
    T_EQ_STR(pj, "[]", "swarm total: nothing started or waiting");
    agt_free(pj);
    teardown(&fx);
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-agent", root, sizeof root, "/tmp/agt-agent-XXXXXX", &srv,
                  "setup: temp dir and fake server", &status))
        return status;
    test_two_turns();
    test_approval();
    test_budgets_and_cancel();
    test_compaction();
    test_notifications();
    test_http();
    test_subagents();
    test_swarm();
    test_swarm_ramp();
    test_swarm_one_item();
    test_swarm_total();
    test_bad_input();
    return fx_end(&srv, root);
}
