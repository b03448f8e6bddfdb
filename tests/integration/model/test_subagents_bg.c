/*
 * Background sub-agents and swarms (Agent / AgentSwarm with
 * run_in_background) against fake_server.py's "bgagent" scenario: the task
 * id comes back at once, TaskList/TaskOutput/TaskStop see the task,
 * agt_session_tick() hands out its task_finished event once (also through a
 * readable agt_session_poll_fds() descriptor), resume continues the
 * sub-agent's conversation, TaskStop cancels a running one, the agent loop
 * turns the event into a notification; the foreground fallback says why;
 * the sub-agent approval policy for calls the host dispatches itself (declined:
 * no agent loop to pause) or a host sub-agent approver.
 */
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/dispatch.h"
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
    char *replay;
} fixture;

static int notifications;

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    (void)data;
    (void)len;
    (void)payload;
    if (kind == AGT_AGENT_NOTIFICATION)
        notifications++;
    return 0;
}

/* HTTP model on scenario (NULL: replay lines), frozen registry when freeze. */
static void setup(fixture *fx, const char *scenario, const char *const *lines, bool freeze)
{
    memset(fx, 0, sizeof *fx);
    fx_registry_swarm_bg(&fx->reg);
    agt_session_new(&fx->s, fx->reg, root);
    if (scenario) {
        fx_http_model(&fx->m, &srv, scenario);
    } else {
        fx->replay = malloc(128);
        fx_write_replay(fx->replay, 128, root, "replay-", lines);
        agt_model_new_replay(&fx->m, fx->replay);
    }
    fx_agent_new(&fx->a, fx->s, fx->m);
    agt_agent_set_event_callback(fx->a, on_event, NULL);
    agt_agent_enable_subagents(fx->a);
    if (freeze)
        agt_registry_freeze(fx->reg);
    agt_session_set_mode(fx->s, AGT_MODE_AUTO); /* Agent is a host tool: it asks in manual */
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    if (fx->replay)
        unlink(fx->replay);
    free(fx->replay);
}

typedef struct res {
    char text[8192];
    int is_error;
    json_t *json;
} res;

static int call(fixture *fx, const char *tool, const char *args, res *r)
{
    static int n;
    char id[32];
    snprintf(id, sizeof id, "c%d", ++n);
    agt_result *out = NULL;
    int rc = agt_session_dispatch(fx->s, id, tool, args, &out);
    memset(r, 0, sizeof *r);
    if (out) {
        snprintf(r->text, sizeof r->text, "%s", agt_result_text(out));
        r->is_error = agt_result_is_error(out);
        const char *j = agt_result_json(out);
        r->json = j ? json_loads(j, 0, NULL) : NULL;
        agt_result_free(out);
    }
    return rc;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_background_agent(void)
{
    fixture fx;
    res r;
    setup(&fx, "bgagent-1", NULL, true);
    T_EQ_INT(call(&fx, "Agent",
                  "{\"prompt\":\"find todo things\",\"description\":\"finder\","
                  "\"run_in_background\":true}",
                  &r),
             AGT_OK, "bg agent: dispatched");
    T_EQ_STR(r.text,
             "Started sub-agent agent-1 in the background: finder\nStatus: running\nYou will get "
             "a notification with its report when it finishes; TaskOutput shows its progress, "
             "TaskStop stops it, resume: \"agent-1\" continues it afterwards.",
             "bg agent: returns at once with the task id");
    T_EQ_STR(fx_jstr(r.json, "task_id"), "agent-1", "bg agent: JSON task_id");
    T_EQ_STR(fx_jstr(r.json, "status"), "running", "bg agent: JSON status running");
    json_decref(r.json);

    call(&fx, "TaskList", "{}", &r);
    T_EQ_STR(r.text, "Running background tasks: 1\nagent-1 [running] sub-agent - finder",
             "bg agent: TaskList shows it running");
    json_decref(r.json);
    json_t *none = fx_tick(fx.s);
    T_EQ_INT((int)json_array_size(none), 0, "bg agent: no event while it runs");
    json_decref(none);

    call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}", &r);
    T_EQ_STR(r.text,
             "Task: agent-1 (finder)\nKind: sub-agent\nStatus: completed\nOutput:\nLooking. \n"
             "[tool] TodoList {\"todos\": [{\"title\": \"look\", \"status\": \"in_progress\"}]}\n"
             "answer 1: find todo things\n\nSub-agent agent-1 (finder) finished after 2 model "
             "calls. Resume it with resume: \"agent-1\".\n\nanswer 1: find todo things",
             "bg agent: TaskOutput block gives the transcript and the report");
    json_decref(r.json);

    json_t *ev = fx_tick(fx.s);
    json_t *e = json_array_get(ev, 0);
    T_EQ_INT((int)json_array_size(ev), 1, "bg agent: one event after it finished");
    T_EQ_STR(fx_jstr(e, "type"), "task_finished", "bg agent: event type");
    T_EQ_STR(fx_jstr(e, "kind"), "agent", "bg agent: event kind");
    T_EQ_STR(fx_jstr(e, "task_id"), "agent-1", "bg agent: event task id");
    T_EQ_STR(fx_jstr(e, "status"), "completed", "bg agent: event status");
    T_EQ_STR(fx_jstr(e, "preview"), "answer 1: find todo things", "bg agent: event preview");
    T_EQ_STR(fx_jstr(e, "message"),
             "Background sub-agent agent-1 (finder) finished.\n\nSub-agent agent-1 (finder) "
             "finished after 2 model calls. Resume it with resume: \"agent-1\".\n\nanswer 1: "
             "find todo things",
             "bg agent: event message for the model");
    json_decref(ev);
    ev = fx_tick(fx.s);
    T_EQ_INT((int)json_array_size(ev), 0, "bg agent: the event is handed out once");
    json_decref(ev);

    call(&fx, "TaskList", "{}", &r);
    T_EQ_STR(r.text, "No running background tasks.", "bg agent: TaskList active: none");
    json_decref(r.json);
    call(&fx, "TaskList", "{\"active_only\":false}", &r);
    T_EQ_STR(r.text, "Background tasks: 1\nagent-1 [completed] sub-agent - finder",
             "bg agent: TaskList all: completed");
    json_decref(r.json);

    /* resume in the foreground: the conversation goes on (2nd user message) */
    call(&fx, "Agent", "{\"prompt\":\"more\",\"description\":\"again\",\"resume\":\"agent-1\"}",
         &r);
    T_EQ_STR(r.text,
             "Sub-agent agent-1 (again) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nanswer 2: more",
             "bg agent: resume of the finished sub-agent continues its conversation");

    /* and in the background again, waited for through the poll descriptor */
    call(&fx, "Agent",
         "{\"prompt\":\"third\",\"description\":\"third\",\"resume\":\"agent-1\","
         "\"run_in_background\":true}",
         &r);
    T_CHECK(strncmp(r.text, "Started sub-agent agent-1 in the background: third", 50) == 0,
            "bg agent: resumed in the background");
    json_decref(r.json);
    int fds[8];
    size_t nfd = 0;
    T_EQ_INT(agt_session_poll_fds(fx.s, fds, 8, &nfd), AGT_OK, "bg agent: poll fds");
    T_EQ_INT((int)nfd, 1, "bg agent: one descriptor for the running sub-agent");
    struct pollfd p = {fds[0], POLLIN, 0};
    T_EQ_INT(poll(&p, 1, 20000), 1, "bg agent: the descriptor becomes readable at its end");
    ev = fx_tick(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(ev, 0), "preview"), "answer 3: third",
             "bg agent: second run's event");
    json_decref(ev);
    agt_session_poll_fds(fx.s, fds, 8, &nfd);
    T_EQ_INT((int)nfd, 0, "bg agent: no descriptor once reported");

    /* the parent's loop turns a finished task into a notification */
    call(&fx, "Agent",
         "{\"prompt\":\"fourth\",\"description\":\"fourth\",\"resume\":\"agent-1\","
         "\"run_in_background\":true}",
         &r);
    json_decref(r.json);
    call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}", &r);
    json_decref(r.json);
    notifications = 0;
    agt_agent_add_user_message(fx.a, "hello");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "bg agent: parent run ok");
    T_EQ_STR(agt_agent_text(fx.a), "parent saw the notification",
             "bg agent: the parent's model got the notification");
    T_EQ_INT(notifications, 1, "bg agent: one AGT_AGENT_NOTIFICATION");
    teardown(&fx);
}

static void test_stop(void)
{
    fixture fx;
    res r;
    setup(&fx, "bgagent-2", NULL, true);
    call(&fx, "Agent",
         "{\"prompt\":\"slow job\",\"description\":\"sleeper\",\"run_in_background\":true}", &r);
    json_decref(r.json);
    call(&fx, "Agent", "{\"prompt\":\"x\",\"description\":\"y\",\"resume\":\"agent-1\"}", &r);
    T_CHECK(r.is_error, "stop: resuming a running sub-agent is an error result");
    T_EQ_STR(r.text,
             "Sub-agent agent-1 is still running in the background: wait for its notification "
             "(or use TaskOutput / TaskStop with task_id \"agent-1\"), then resume it.",
             "stop: the error says what to do");
    call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\"}", &r);
    T_EQ_STR(r.text, "Task: agent-1 (sleeper)\nKind: sub-agent\nStatus: running\n(no output yet)",
             "stop: TaskOutput while it runs");
    json_decref(r.json);
    usleep(300000); /* the model request is under way */
    int64_t t0 = now_ms();
    call(&fx, "TaskStop", "{\"task_id\":\"agent-1\"}", &r);
    int64_t took = now_ms() - t0;
    T_EQ_STR(r.text, "Task agent-1 was stopped; final state: killed (Stopped by TaskStop).",
             "stop: TaskStop cancels the running sub-agent");
    T_CHECK(json_is_true(json_object_get(r.json, "stopped")), "stop: JSON stopped true");
    json_decref(r.json);
    T_CHECK(took < 3000, "stop: it ended within 3 s (took %lld ms)", (long long)took);
    json_t *ev = fx_tick(fx.s);
    json_t *e = json_array_get(ev, 0);
    T_EQ_STR(fx_jstr(e, "status"), "killed", "stop: event status killed");
    T_EQ_STR(fx_jstr(e, "message"),
             "Background sub-agent agent-1 (sleeper) was stopped: Stopped by TaskStop.\n\n"
             "Sub-agent agent-1 (sleeper) failed after 0 model calls: agent run cancelled by the "
             "host. Resume it with resume: \"agent-1\".",
             "stop: event message");
    json_decref(ev);
    call(&fx, "TaskStop", "{\"task_id\":\"agent-1\"}", &r);
    T_EQ_STR(r.text, "Task agent-1 had already ended: killed. Nothing was stopped.",
             "stop: a second TaskStop is harmless");
    json_decref(r.json);

    /* freeing the agent while a sub-agent runs stops it and waits */
    call(&fx, "Agent",
         "{\"prompt\":\"slow again\",\"description\":\"left running\",\"run_in_background\":"
         "true}",
         &r);
    json_decref(r.json);
    T_CHECK(strncmp(r.text, "Started sub-agent agent-2", 25) == 0, "stop: agent-2 started");
    t0 = now_ms();
    teardown(&fx);
    T_CHECK(now_ms() - t0 < 3000, "stop: agt_agent_free stopped the running sub-agent");
}

static void test_nested(void)
{
    fixture fx;
    res r;
    setup(&fx, "bgagent-4", NULL, true);
    call(&fx, "Agent",
         "{\"prompt\":\"nest it\",\"description\":\"outer\",\"run_in_background\":true}", &r);
    json_decref(r.json);
    /* meanwhile the parent starts a foreground sub-agent of its own */
    call(&fx, "Agent", "{\"prompt\":\"side job\",\"description\":\"side\"}", &r);
    T_CHECK(strstr(r.text, "answer 1: side job") != NULL,
            "nested: a foreground sub-agent runs while one runs in the background");
    call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}", &r);
    json_decref(r.json);
    T_CHECK(strstr(r.text, "Status: completed") != NULL, "nested: the outer one completed");
    T_CHECK(strstr(r.text, "[tool] Agent {\"prompt\": \"inner\", \"description\": \"inner\"}") !=
                NULL,
            "nested: its transcript shows its Agent call");
    T_CHECK(strstr(r.text, "finished after 2 model calls. Resume it with resume: "
                           "\"agent-1\".\n\nanswer 1: nest it") != NULL,
            "nested: the outer report");
    call(&fx, "TaskList", "{\"active_only\":false}", &r);
    T_EQ_STR(r.text, "Background tasks: 1\nagent-1 [completed] sub-agent - outer",
             "nested: the inner (foreground) sub-agent is no task");
    json_decref(r.json);
    call(&fx, "Agent", "{\"prompt\":\"again\",\"description\":\"i2\",\"resume\":\"agent-3\"}", &r);
    T_EQ_STR(r.text,
             "Sub-agent agent-3 (i2) finished after 1 model call. Resume it with resume: "
             "\"agent-3\".\n\nanswer 2: again",
             "nested: the inner sub-agent (agent-3, started on the background thread) resumes");
    teardown(&fx);
}

static void test_swarm_background(void)
{
    fixture fx;
    res r;
    setup(&fx, "bgagent-3", NULL, true);
    call(&fx, "AgentSwarm",
         "{\"prompt_template\":\"check {{item}}\",\"items\":[\"a\",\"b\"],"
         "\"run_in_background\":true}",
         &r);
    T_EQ_STR(r.text,
             "Started AgentSwarm swarm-1 in the background: 2 sub-agents (agent-1, agent-2)\n"
             "Status: running\nYou will get a notification with the combined report when all "
             "have finished; TaskOutput shows progress, TaskStop stops them all.",
             "swarm bg: returns at once");
    T_EQ_STR(fx_jstr(r.json, "task_id"), "swarm-1", "swarm bg: JSON task id");
    json_decref(r.json);
    call(&fx, "TaskList", "{}", &r);
    T_EQ_STR(r.text,
             "Running background tasks: 1\nswarm-1 [running] sub-agent swarm - 2 sub-agents",
             "swarm bg: TaskList shows one task");
    json_decref(r.json);
    call(&fx, "TaskOutput", "{\"task_id\":\"swarm-1\",\"block\":true,\"timeout\":20}", &r);
    T_CHECK(strstr(r.text, "Status: completed") != NULL, "swarm bg: completed");
    json_decref(r.json);
    const char *report = "AgentSwarm: 2 sub-agents, 2 finished, 0 did not.\n\n"
                         "## agent-1 \xe2\x80\x94 a: finished after 1 model call\n"
                         "answer 1: check a\n\n"
                         "## agent-2 \xe2\x80\x94 b: finished after 1 model call\n"
                         "answer 1: check b";
    T_CHECK(strstr(r.text, report) != NULL, "swarm bg: TaskOutput has the aggregated report");
    json_t *ev = fx_tick(fx.s);
    json_t *e = json_array_get(ev, 0);
    T_EQ_STR(fx_jstr(e, "kind"), "swarm", "swarm bg: event kind swarm");
    char want[1024];
    snprintf(want, sizeof want, "Background swarm swarm-1 (2 sub-agents) finished.\n\n%s", report);
    T_EQ_STR(fx_jstr(e, "message"), want, "swarm bg: one aggregated report in the event");
    json_decref(ev);
    /* its sub-agents can be resumed afterwards */
    call(&fx, "Agent", "{\"prompt\":\"go on\",\"description\":\"b2\",\"resume\":\"agent-2\"}", &r);
    T_EQ_STR(r.text,
             "Sub-agent agent-2 (b2) finished after 1 model call. Resume it with resume: "
             "\"agent-2\".\n\nanswer 2: go on",
             "swarm bg: a swarm's sub-agent resumes");
    teardown(&fx);
}

static void test_foreground_fallback(void)
{
    fixture fx;
    res r;
    const char *lines[] = {"{\"content\":\"fg answer\"}", NULL};
    setup(&fx, NULL, lines, false);
    call(&fx, "Agent", "{\"prompt\":\"p\",\"description\":\"d\",\"run_in_background\":true}", &r);
    T_EQ_STR(r.text,
             "Sub-agent agent-1 (d) finished after 1 model call (it ran in the foreground: "
             "background sub-agents need a frozen registry). Resume it with resume: "
             "\"agent-1\".\n\nfg answer",
             "fallback: unfrozen registry runs in the foreground and says why");
    teardown(&fx);
    setup(&fx, NULL, lines, true);
    call(&fx, "Agent", "{\"prompt\":\"p\",\"description\":\"d\",\"run_in_background\":true}", &r);
    T_EQ_STR(r.text,
             "Sub-agent agent-1 (d) finished after 1 model call (it ran in the foreground: "
             "background sub-agents need an HTTP model). Resume it with resume: "
             "\"agent-1\".\n\nfg answer",
             "fallback: replay model runs in the foreground and says why");
    teardown(&fx);
}

typedef struct approvals {
    int asked;
    char agent[32];
    char tool[32];
    int decision;
} approvals;

static int approver(const char *agent_id, agt_approval *req, void *payload)
{
    approvals *ap = payload;
    ap->asked++;
    snprintf(ap->agent, sizeof ap->agent, "%s", agent_id);
    json_t *j = json_loads(agt_approval_json(req), 0, NULL);
    snprintf(ap->tool, sizeof ap->tool, "%s", fx_jstr(j, "tool"));
    json_decref(j);
    if (ap->decision == AGT_DECISION_REJECT)
        agt_approval_set_reason(req, "not now");
    return ap->decision;
}

static void test_approval_policy(void)
{
    const char *lines[] = {"{\"tool_calls\":[{\"id\":\"s1\",\"name\":\"Write\",\"arguments\":"
                           "\"{\\\"path\\\":\\\"approved.txt\\\",\\\"content\\\":\\\"x\\\"}\"}]}",
                           "{\"content\":\"wrote it\"}", NULL};
    char path[160];
    snprintf(path, sizeof path, "%s/approved.txt", root);
    for (int k = 0; k < 3; k++) {
        fixture fx;
        res r;
        approvals ap = {0, "", "", k == 1 ? AGT_DECISION_APPROVE : AGT_DECISION_REJECT};
        setup(&fx, NULL, lines, false);
        agt_session_set_mode(fx.s, AGT_MODE_MANUAL);
        agt_session_add_rule(fx.s, AGT_RULE_ALLOW, "Agent");
        if (k > 0)
            T_EQ_INT(agt_agent_set_subagent_approver(fx.a, approver, &ap), AGT_OK,
                     "approval: approver set");
        call(&fx, "Agent", "{\"prompt\":\"write\",\"description\":\"writer\"}", &r);
        if (k == 0) {
            T_EQ_INT(ap.asked, 0, "approval (default): nobody asked");
            T_CHECK(access(path, F_OK) != 0, "approval (default): the Write was declined");
        } else if (k == 1) {
            T_EQ_INT(ap.asked, 1, "approval (approver): asked once");
            T_EQ_STR(ap.agent, "agent-1", "approval (approver): names the sub-agent");
            T_EQ_STR(ap.tool, "Write", "approval (approver): names the tool");
            T_CHECK(access(path, F_OK) == 0, "approval (approver): approved Write landed");
            unlink(path);
        } else {
            T_EQ_INT(ap.asked, 1, "approval (approver, reject): asked once");
            T_CHECK(access(path, F_OK) != 0, "approval (approver, reject): nothing written");
        }
        T_CHECK(strstr(r.text, "wrote it") != NULL, "approval: the sub-agent finished (%d)", k);
        teardown(&fx);
    }
    T_EQ_INT(agt_agent_set_subagent_approver(NULL, approver, NULL), AGT_EINVAL,
             "approval: NULL agent is EINVAL");
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-subagents-bg", root, sizeof root, "/tmp/agt-subbg-XXXXXX", &srv,
                  "setup: temp dir and fake server", &status))
        return status;
    test_background_agent();
    test_stop();
    test_nested();
    test_swarm_background();
    test_foreground_fallback();
    test_approval_policy();
    return fx_end(&srv, root);
}
