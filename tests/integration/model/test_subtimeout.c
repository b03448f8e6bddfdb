/*
 * The time limit of a sub-agent's run (agt_agent_set_subagent_timeout),
 * against subtimeout_server.py's "slow" scenario (HTTP model). A "hold"
 * prompt makes the server hold the model response until the client goes
 * away, so a sub-agent can only end by its limit cancelling the request;
 * the server gives up after 30 s with "server gave up", which fails the
 * assertions instead of hanging. Nothing here asserts on elapsed time:
 * - a foreground Agent call: the report says time limit, not an error, the
 *   root goes on; resume: "agent-1" gets a fresh limit and finishes;
 * - a sub-agent's own sub-agent stops at its parent's deadline;
 * - a Bash call running past the limit ends by itself, the Write after it
 *   in the same turn does not start;
 * - a swarm with a held and a quick item: one section timed out, one done;
 * - a background Agent task: status "timed_out", task_finished says so,
 *   then resumed in the foreground;
 * - time paused for approval does not count: paused longer than the limit
 *   (the pause model in the foreground and in a background task, and a
 *   synchronous approver), the sub-agent finishes;
 * - the setter's range.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "agent_fixture.h"
#include "harness.h"

static fake_server srv;
static char root[64];

typedef struct fixture {
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
} fixture;

static void setup(fixture *fx, const char *scenario, int64_t limit_ms)
{
    memset(fx, 0, sizeof *fx);
    agt_registry_new(&fx->reg);
    agt_registry_load_builtin(fx->reg, "chat");
    agt_session_new(&fx->s, fx->reg, root);
    fx_http_model(&fx->m, &srv, scenario);
    fx_agent_new(&fx->a, fx->s, fx->m);
    agt_agent_enable_subagents(fx->a);
    agt_registry_freeze(fx->reg);
    fx_manual_subagents(fx->s);
    agt_agent_set_subagent_timeout(fx->a, limit_ms);
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
}

/* The conversation's message i (its "content", and is_error). */
static char *message(fixture *fx, size_t i, int *is_error)
{
    char *msgs = NULL;
    agt_agent_messages(fx->a, &msgs);
    json_t *mj = json_loads(msgs ? msgs : "[]", 0, NULL);
    agt_free(msgs);
    json_t *m = json_array_get(mj, i);
    char *t = strdup(fx_jstr(m, "content"));
    if (is_error)
        *is_error = json_is_true(json_object_get(m, "is_error"));
    json_decref(mj);
    return t;
}

static void test_foreground(void)
{
    fixture fx;
    setup(&fx, "slow-1", 300);
    agt_agent_add_user_message(fx.a, "agent hold");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "fg: the root's run ends normally");
    int err = -1;
    char *t = message(&fx, 3, &err);
    T_EQ_STR(t,
             "Sub-agent agent-1 (d) stopped at its 300 ms time limit after 0 model calls. "
             "Resume it with resume: \"agent-1\".",
             "fg: the Agent result says the time limit");
    T_EQ_INT(err, 0, "fg: not an error result, like a budget stop");
    free(t);
    T_EQ_STR(agt_agent_text(fx.a),
             "root saw: Sub-agent agent-1 (d) stopped at its 300 ms time limit after 0 model "
             "calls. Resume it with resume: \"agent-1\".",
             "fg: the root went on to its next model call");
    /* a fresh limit: the old one is used up, so a kept clock would stop it at once */
    agt_agent_set_subagent_timeout(fx.a, 20000);
    t = fx_call_text(fx.s, "Agent",
                     "{\"prompt\":\"again\",\"description\":\"d2\",\"resume\":\"agent-1\"}", &err);
    T_EQ_STR(t,
             "Sub-agent agent-1 (d2) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nanswer: again",
             "fg: resume after a time-out finishes");
    T_EQ_INT(err, 0, "fg: resume not an error");
    free(t);
    /* host-dispatched, on the root's own model (the poll is swapped in and out) */
    agt_agent_set_subagent_timeout(fx.a, 300);
    t = fx_call_text(fx.s, "Agent", "{\"prompt\":\"hold\",\"description\":\"h\"}", &err);
    T_EQ_STR(t,
             "Sub-agent agent-2 (h) stopped at its 300 ms time limit after 0 model calls. "
             "Resume it with resume: \"agent-2\".",
             "fg host: stopped at the limit");
    free(t);
    agt_agent_add_user_message(fx.a, "hi");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "fg: the root's model still works after");
    T_EQ_STR(agt_agent_text(fx.a), "root done", "fg: its answer");
    teardown(&fx);
}

static void test_nested(void)
{
    fixture fx;
    setup(&fx, "slow-2", 300);
    int err = -1;
    char *t =
        fx_call_text(fx.s, "Agent", "{\"prompt\":\"agent hold\",\"description\":\"outer\"}", &err);
    T_EQ_STR(t,
             "Sub-agent agent-1 (outer) stopped at its 300 ms time limit after 1 model call. "
             "Resume it with resume: \"agent-1\".",
             "nested: the parent stops before its next model call");
    T_EQ_INT(err, 0, "nested: not an error");
    free(t);
    /* its conversation holds the inner one's report (the server quotes it) */
    agt_agent_set_subagent_timeout(fx.a, 20000);
    t = fx_call_text(fx.s, "Agent",
                     "{\"prompt\":\"report\",\"description\":\"o2\",\"resume\":\"agent-1\"}", NULL);
    T_EQ_STR(t,
             "Sub-agent agent-1 (o2) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\ninner was: Sub-agent agent-2 (inner) stopped at the time limit of "
             "agent-1 after 0 model calls. Resume it with resume: \"agent-2\".",
             "nested: the inner one stopped at its parent's deadline");
    free(t);
    teardown(&fx);
}

/* A tool call that runs past the limit ends by its own limits; the next
 * call of the turn does not start. The Bash call takes at least 1 s, the
 * limit is 300 ms, whatever the machine's speed. */
static void test_tool_call(void)
{
    fixture fx;
    setup(&fx, "slow-8", 300);
    agt_session_add_rule(fx.s, AGT_RULE_ALLOW, "Bash");
    agt_session_add_rule(fx.s, AGT_RULE_ALLOW, "Write");
    char *t = fx_call_text(fx.s, "Agent", "{\"prompt\":\"slowtool\",\"description\":\"st\"}", NULL);
    T_EQ_STR(t,
             "Sub-agent agent-1 (st) stopped at its 300 ms time limit after 1 model call. "
             "Resume it with resume: \"agent-1\".",
             "tool: stopped after the turn's calls");
    free(t);
    char path[160];
    snprintf(path, sizeof path, "%s/bash.txt", root);
    T_EQ_INT(access(path, F_OK), 0, "tool: the running Bash call ran to its end");
    unlink(path);
    snprintf(path, sizeof path, "%s/late.txt", root);
    T_CHECK(access(path, F_OK) != 0, "tool: the Write after it did not start");
    agt_agent_set_subagent_timeout(fx.a, 20000);
    t = fx_call_text(fx.s, "Agent",
                     "{\"prompt\":\"report\",\"description\":\"r\",\"resume\":\"agent-1\"}", NULL);
    T_EQ_STR(t,
             "Sub-agent agent-1 (r) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\ninner was: Not run: the sub-agent's time limit ran out before this "
             "call started.",
             "tool: the skipped call got a result saying why");
    free(t);
    teardown(&fx);
}

static void test_swarm(void)
{
    fixture fx;
    setup(&fx, "slow-3", 2000);
    agt_agent_add_user_message(fx.a, "swarm hold,quick");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm: the root's run ends normally");
    char *t = message(&fx, 3, NULL);
    T_EQ_STR(t,
             "AgentSwarm: 2 sub-agents, 1 finished, 1 did not.\n\n"
             "## agent-1 \xe2\x80\x94 hold: stopped at its 2-second time limit after 0 model "
             "calls\n\n\n"
             "## agent-2 \xe2\x80\x94 quick: finished after 1 model call\nanswer: quick",
             "swarm: one section timed out, one finished");
    free(t);
    T_EQ_STR(agt_agent_text(fx.a), "root saw: AgentSwarm: 2 sub-agents, 1 finished, 1 did not.",
             "swarm: the root went on");
    teardown(&fx);
}

static void test_background(void)
{
    fixture fx;
    setup(&fx, "slow-4", 300);
    char *t = fx_call_text(
        fx.s, "Agent", "{\"prompt\":\"hold\",\"description\":\"bgh\",\"run_in_background\":true}",
        NULL);
    T_CHECK(strncmp(t, "Started sub-agent agent-1 in the background: bgh", 48) == 0, "bg: started");
    free(t);
    t = fx_call_text(fx.s, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":40}",
                     NULL);
    T_CHECK(strstr(t, "Status: timed_out") != NULL, "bg: TaskOutput status timed_out");
    T_CHECK(strstr(t, "Sub-agent agent-1 (bgh) stopped at its 300 ms time limit after 0 model "
                      "calls. Resume it with resume: \"agent-1\".") != NULL,
            "bg: the report");
    if (!strstr(t, "Status: timed_out"))
        t_diag("%s", t);
    free(t);
    t = fx_call_text(fx.s, "TaskList", "{\"active_only\":false}", NULL);
    T_EQ_STR(t, "Background tasks: 1\nagent-1 [timed_out] sub-agent - bgh", "bg: TaskList");
    free(t);
    char *ev = NULL;
    agt_session_tick(fx.s, -1, &ev);
    json_t *evj = json_loads(ev ? ev : "[]", 0, NULL);
    agt_free(ev);
    json_t *e = json_array_get(evj, 0);
    T_EQ_INT((int)json_array_size(evj), 1, "bg: one event");
    T_EQ_STR(fx_jstr(e, "type"), "task_finished", "bg: task_finished");
    T_EQ_STR(fx_jstr(e, "status"), "timed_out", "bg: its status");
    T_EQ_STR(fx_jstr(e, "message"),
             "Background sub-agent agent-1 (bgh) timed out: it stopped at its time limit and can "
             "be resumed.\n\nSub-agent agent-1 (bgh) stopped at its 300 ms time limit after 0 "
             "model calls. Resume it with resume: \"agent-1\".",
             "bg: the notification says so");
    json_decref(evj);
    agt_agent_set_subagent_timeout(fx.a, 20000);
    t = fx_call_text(fx.s, "Agent",
                     "{\"prompt\":\"more\",\"description\":\"r\",\"resume\":\"agent-1\"}", NULL);
    T_EQ_STR(t,
             "Sub-agent agent-1 (r) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nanswer: more",
             "bg: resumed in the foreground with a fresh limit");
    free(t);
    teardown(&fx);
}

static int slow_approver(agt_approval *req, void *payload)
{
    (void)req;
    (void)payload;
    usleep(2500 * 1000); /* longer than the limit */
    return AGT_DECISION_APPROVE;
}

static void test_paused(void)
{
    fixture fx;
    setup(&fx, "slow-5", 1500);
    agt_agent_add_user_message(fx.a, "agent write p.txt");
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "pause: the root pauses on the sub-agent's call");
    usleep(2500 * 1000); /* paused longer than the limit */
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "pause: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "pause: resumed to the end");
    T_EQ_STR(agt_agent_text(fx.a),
             "root saw: Sub-agent agent-1 (d) finished after 2 model calls. Resume it with "
             "resume: \"agent-1\".",
             "pause: the sub-agent finished normally");
    char path[160];
    snprintf(path, sizeof path, "%s/p.txt", root);
    T_EQ_INT(access(path, F_OK), 0, "pause: written");
    unlink(path);
    teardown(&fx);

    /* a background task waiting for answers */
    setup(&fx, "slow-9", 1500);
    char *r = fx_call_text(
        fx.s, "Agent",
        "{\"prompt\":\"write b.txt\",\"description\":\"bw\",\"run_in_background\":true}", NULL);
    free(r);
    r = fx_call_text(fx.s, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":40}",
                     NULL);
    T_CHECK(strstr(r, "Status: waiting for approval") != NULL, "bg pause: it waits");
    free(r);
    usleep(2500 * 1000); /* waiting longer than the limit */
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "bg pause: answered");
    r = fx_call_text(fx.s, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":40}",
                     NULL);
    T_CHECK(strstr(r, "Status: completed") != NULL &&
                strstr(r, "Sub-agent agent-1 (bw) finished after 2 model calls. Resume it with "
                          "resume: \"agent-1\".\n\nafter: Created b.txt: 1 byte written.") != NULL,
            "bg pause: it went on and finished");
    free(r);
    snprintf(path, sizeof path, "%s/b.txt", root);
    unlink(path);
    teardown(&fx);

    setup(&fx, "slow-6", 1500);
    agt_session_set_approver(fx.s, slow_approver, NULL);
    int err = -1;
    char *t =
        fx_call_text(fx.s, "Agent", "{\"prompt\":\"write q.txt\",\"description\":\"q\"}", &err);
    T_EQ_STR(t,
             "Sub-agent agent-1 (q) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nafter: Created q.txt: 1 byte written.",
             "approver: time in a synchronous approver does not count");
    free(t);
    snprintf(path, sizeof path, "%s/q.txt", root);
    unlink(path);
    teardown(&fx);
}

static void test_setter(void)
{
    fixture fx;
    setup(&fx, "slow-7", 0);
    T_EQ_INT(agt_agent_set_subagent_timeout(NULL, 1000), AGT_EINVAL, "setter: NULL agent");
    T_EQ_INT(agt_agent_set_subagent_timeout(fx.a, -1), AGT_EINVAL, "setter: negative");
    T_EQ_INT(agt_agent_set_subagent_timeout(fx.a, 2592000001LL), AGT_EINVAL,
             "setter: over 30 days");
    T_EQ_INT(agt_agent_set_subagent_timeout(fx.a, 2592000000LL), AGT_OK, "setter: 30 days");
    T_EQ_INT(agt_agent_set_subagent_timeout(fx.a, 1), AGT_OK, "setter: 1 ms");
    T_EQ_INT(agt_agent_set_subagent_timeout(fx.a, 0), AGT_OK, "setter: 0 (no limit)");
    char *t = fx_call_text(fx.s, "Agent", "{\"prompt\":\"hi\",\"description\":\"n\"}", NULL);
    T_EQ_STR(t,
             "Sub-agent agent-1 (n) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nanswer: hi",
             "setter: no limit runs normally");
    free(t);
    teardown(&fx);
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-subtimeout", root, sizeof root, "/tmp/agt-subtimeout-XXXXXX",
                  &srv, "setup: temp dir and server", &status))
        return status;
    test_setter();
    test_foreground();
    test_nested();
    test_tool_call();
    test_swarm();
    test_background();
    test_paused();
    return fx_end(&srv, root);
}
