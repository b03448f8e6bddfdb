/*
 * Sub-agents' approvals off the host's thread (issue #7), against
 * subappr_server.py's "appr" scenario (HTTP model, frozen registry):
 * - an AgentSwarm of 3 (2 need approval) on worker threads: the pause
 *   model (both waiting calls listed, answered, resumed) and the root
 *   session's approver (asked on the host's thread after the round);
 * - a background sub-agent that hits an approval: status "waiting for
 *   approval", one approval_needed event from agt_session_tick() (the poll
 *   descriptor wakes the host), agt_agent_answer() restarts it, the agent
 *   loop turns the events into notifications, or asks the session's
 *   approver itself; TaskStop while it waits; a background swarm;
 * - a save while a background sub-agent runs: restored as "lost".
 */
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
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
    int notifications;
    json_t *notes;
} fixture;

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    fixture *fx = payload;
    if (kind == AGT_AGENT_NOTIFICATION) {
        fx->notifications++;
        json_array_append_new(fx->notes, json_loadb(data, len, 0, NULL));
    }
    return 0;
}

static void setup(fixture *fx, const char *scenario)
{
    memset(fx, 0, sizeof *fx);
    fx->notes = json_array();
    fx_registry_swarm_bg(&fx->reg);
    agt_session_new(&fx->s, fx->reg, root);
    fx_http_model(&fx->m, &srv, scenario);
    fx_agent_new(&fx->a, fx->s, fx->m);
    agt_agent_set_event_callback(fx->a, on_event, fx);
    agt_agent_enable_subagents(fx->a);
    agt_agent_set_swarm_concurrency(fx->a, 3);
    agt_registry_freeze(fx->reg);
    fx_manual_subagents(fx->s);
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    json_decref(fx->notes);
}

static char *call(fixture *fx, const char *tool, const char *args)
{
    return fx_call_text(fx->s, tool, args, NULL);
}

typedef struct asked {
    int n, off_thread;
    pthread_t host;
    json_t *reqs;
} asked;

static int approver(agt_approval *req, void *payload)
{
    asked *a = payload;
    a->n++;
    if (!pthread_equal(pthread_self(), a->host))
        a->off_thread++;
    json_array_append_new(a->reqs, json_loads(agt_approval_json(req), 0, NULL));
    return AGT_DECISION_APPROVE;
}

static const char *SWARM_REPORT =
    "AgentSwarm: 3 sub-agents, 3 finished, 0 did not.\n\n"
    "## agent-1 \xe2\x80\x94 x: finished after 1 model call\nanswer: x\n\n"
    "## agent-2 \xe2\x80\x94 write y.txt: finished after 2 model calls\n"
    "after: Created y.txt: 1 byte written.\n\n"
    "## agent-3 \xe2\x80\x94 write z.txt: finished after 2 model calls\n"
    "after: Created z.txt: 1 byte written.";

static void test_swarm_threads(void)
{
    fixture fx;
    setup(&fx, "appr-1");
    agt_agent_add_user_message(fx.a, "swarm");
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "swarm: the round ends with two waiting");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 2, "swarm: two pending");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-2/call_0", "swarm: agent-2's call");
    T_EQ_STR(fx_jstr(json_array_get(p, 1), "call_id"), "agent-3/call_0", "swarm: agent-3's call");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-3/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "swarm: agent-3 approved");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "swarm: agent-2 approved");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "swarm: resumed to the end");
    char *msgs = NULL;
    agt_agent_messages(fx.a, &msgs);
    json_t *mj = json_loads(msgs, 0, NULL);
    agt_free(msgs);
    T_EQ_STR(fx_jstr(json_array_get(mj, 3), "content"), SWARM_REPORT, "swarm: the report");
    json_decref(mj);
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "swarm: the root's final text");
    fx_rm(root, "y.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);

    setup(&fx, "appr-2");
    asked ask = {0, 0, pthread_self(), json_array()};
    agt_session_set_approver(fx.s, approver, &ask);
    agt_agent_add_user_message(fx.a, "swarm");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm sync: no pause");
    T_EQ_INT(ask.n, 2, "swarm sync: asked twice");
    T_EQ_INT(ask.off_thread, 0, "swarm sync: never from a worker thread");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 0), "agent_id"), "agent-2", "swarm sync: agent-2");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 0), "call_id"), "call_0", "swarm sync: its own id");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 1), "agent_id"), "agent-3", "swarm sync: agent-3");
    T_EQ_STR(fx_file_text(root, "y.txt"), "w", "swarm sync: y written");
    T_EQ_STR(fx_file_text(root, "z.txt"), "w", "swarm sync: z written");
    json_decref(ask.reqs);
    fx_rm(root, "y.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);
}

static void test_background_agent(void)
{
    fixture fx;
    setup(&fx, "appr-3");
    char *r =
        call(&fx, "Agent",
             "{\"prompt\":\"write bg.txt\",\"description\":\"bgw\",\"run_in_background\":true}");
    T_CHECK(strncmp(r, "Started sub-agent agent-1 in the background: bgw", 48) == 0, "bg: started");
    free(r);
    T_EQ_INT(fx_wait_poll(fx.s), 1, "bg: the poll descriptor wakes the host");
    json_t *ev = fx_tick(fx.s);
    T_EQ_INT((int)json_array_size(ev), 1, "bg: one event");
    json_t *e = json_array_get(ev, 0);
    T_EQ_STR(fx_jstr(e, "type"), "approval_needed", "bg: approval_needed");
    T_EQ_STR(fx_jstr(e, "task_id"), "agent-1", "bg: task id");
    json_t *c = json_array_get(json_object_get(e, "calls"), 0);
    T_EQ_STR(fx_jstr(c, "call_id"), "agent-1/call_0", "bg: the call's qualified id");
    T_EQ_STR(fx_jstr(c, "agent_id"), "agent-1", "bg: agent_id");
    T_EQ_STR(fx_jstr(c, "tool"), "Write", "bg: tool");
    T_EQ_STR(fx_jstr(e, "message"),
             "Background sub-agent agent-1 (bgw) waits for the user's approval of 1 tool call:\n"
             "- Write {\"path\":\"bg.txt\",\"content\":\"w\"} (agent-1/call_0)\n"
             "It goes on by itself once the user has answered.",
             "bg: the message for the model");
    json_decref(ev);
    ev = fx_tick(fx.s);
    T_EQ_INT((int)json_array_size(ev), 0, "bg: the event is handed out once");
    json_decref(ev);
    r = call(&fx, "TaskList", "{}");
    T_EQ_STR(r, "Running background tasks: 1\nagent-1 [waiting for approval] sub-agent - bgw",
             "bg: TaskList shows it waiting");
    free(r);
    r = call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":5}");
    T_CHECK(strstr(r, "Status: waiting for approval") != NULL && strstr(r, "Still running") == NULL,
            "bg: TaskOutput block returns at once with the waiting status");
    free(r);
    json_t *p = fx_pending(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/call_0",
             "bg: agt_session_pending lists it");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "bg: answered");
    r = call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "Status: completed") != NULL, "bg: it went on and completed");
    T_CHECK(strstr(r, "Sub-agent agent-1 (bgw) finished after 2 model calls. Resume it with "
                      "resume: \"agent-1\".\n\nafter: Created bg.txt: 1 byte written.") != NULL,
            "bg: the report");
    free(r);
    T_EQ_STR(fx_file_text(root, "bg.txt"), "w", "bg: written");
    fx_rm(root, "bg.txt");
    /* the root's loop gets the task_finished notification */
    agt_agent_add_user_message(fx.a, "hello");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "bg: root run");
    T_EQ_STR(agt_agent_text(fx.a), "parent saw 1 notifications", "bg: one notification");
    T_EQ_STR(fx_jstr(json_array_get(fx.notes, 0), "type"), "task_finished",
             "bg: it is task_finished");
    teardown(&fx);

    /* the loop turns approval_needed into a notification too */
    setup(&fx, "appr-4");
    r = call(&fx, "Agent",
             "{\"prompt\":\"write bg2.txt\",\"description\":\"bg2\",\"run_in_background\":true}");
    free(r);
    fx_wait_poll(fx.s);
    agt_agent_add_user_message(fx.a, "hello");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "bg loop: root run");
    T_EQ_STR(agt_agent_text(fx.a), "parent saw 1 notifications", "bg loop: the model knows");
    T_EQ_STR(fx_jstr(json_array_get(fx.notes, 0), "type"), "approval_needed",
             "bg loop: AGT_AGENT_NOTIFICATION approval_needed");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_REJECT, "no"), AGT_OK,
             "bg loop: rejected");
    r = call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "\n\nafter: The user declined this Write call: no. Do not retry it "
                      "unchanged; ask the user or take another approach.") != NULL,
            "bg loop: the sub-agent got the declined text and finished");
    free(r);
    T_CHECK(fx_file_text(root, "bg2.txt") == NULL, "bg loop: nothing written");
    teardown(&fx);

    /* with an approver on the root session, the loop asks it */
    setup(&fx, "appr-5");
    asked ask = {0, 0, pthread_self(), json_array()};
    agt_session_set_approver(fx.s, approver, &ask);
    r = call(&fx, "Agent",
             "{\"prompt\":\"write bg3.txt\",\"description\":\"bg3\",\"run_in_background\":true}");
    free(r);
    fx_wait_poll(fx.s);
    agt_agent_add_user_message(fx.a, "hello");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "bg sync: root run");
    T_EQ_INT(ask.n, 1, "bg sync: the approver was asked");
    T_EQ_INT(ask.off_thread, 0, "bg sync: on the host's thread");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 0), "agent_id"), "agent-1", "bg sync: agent_id");
    T_EQ_STR(fx_jstr(json_array_get(fx.notes, 0), "message"),
             "Background sub-agent agent-1 (bg3) asked for the user's approval of 1 tool call: 1 "
             "approved, 0 declined. It goes on by itself.",
             "bg sync: the notification says what happened");
    r = call(&fx, "TaskOutput", "{\"task_id\":\"agent-1\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "Status: completed") != NULL, "bg sync: completed");
    free(r);
    T_EQ_STR(fx_file_text(root, "bg3.txt"), "w", "bg sync: written");
    fx_rm(root, "bg3.txt");
    json_decref(ask.reqs);
    teardown(&fx);
}

static void test_stop_waiting(void)
{
    fixture fx;
    setup(&fx, "appr-6");
    agt_session_add_rule(fx.s, AGT_RULE_ALLOW, "TaskStop");
    char *r =
        call(&fx, "Agent",
             "{\"prompt\":\"write st.txt\",\"description\":\"st\",\"run_in_background\":true}");
    free(r);
    fx_wait_poll(fx.s);
    r = call(&fx, "TaskStop", "{\"task_id\":\"agent-1\"}");
    T_EQ_STR(r, "Task agent-1 was stopped; final state: killed (Stopped by TaskStop).",
             "stop: TaskStop on a waiting task");
    free(r);
    json_t *ev = fx_tick(fx.s);
    T_EQ_INT((int)json_array_size(ev), 1, "stop: one event");
    T_EQ_STR(fx_jstr(json_array_get(ev, 0), "message"),
             "Background sub-agent agent-1 (st) was stopped: Stopped by TaskStop.\n\n"
             "Sub-agent agent-1 (st) failed after 1 model call: stopped while waiting for "
             "approval: Stopped by TaskStop. Resume it with resume: \"agent-1\".",
             "stop: task_finished says it was stopped while waiting");
    json_decref(ev);
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 0, "stop: nothing pending");
    json_decref(p);
    T_CHECK(fx_file_text(root, "st.txt") == NULL, "stop: nothing written");
    r = call(&fx, "Agent", "{\"prompt\":\"hi\",\"description\":\"again\",\"resume\":\"agent-1\"}");
    T_EQ_STR(r,
             "Sub-agent agent-1 (again) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nanswer: hi",
             "stop: the stopped sub-agent resumes with a new prompt");
    free(r);
    /* freed while one waits: the task is woken and ends */
    r = call(&fx, "Agent",
             "{\"prompt\":\"write f.txt\",\"description\":\"f\",\"run_in_background\":true}");
    free(r);
    fx_wait_poll(fx.s);
    teardown(&fx);
    T_CHECK(fx_file_text(root, "f.txt") == NULL, "free: nothing written");
}

static void test_swarm_background(void)
{
    fixture fx;
    setup(&fx, "appr-7");
    agt_agent_add_user_message(fx.a, "swarm background");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "bg swarm: the root goes on");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "bg swarm: root's text");
    int woke = 0;
    json_t *ev = NULL;
    for (int k = 0; k < 3 && !woke; k++) {
        fx_wait_poll(fx.s);
        json_decref(ev);
        ev = fx_tick(fx.s);
        woke = json_array_size(ev) > 0;
    }
    json_t *e = json_array_get(ev, 0);
    T_EQ_STR(fx_jstr(e, "type"), "approval_needed", "bg swarm: approval_needed");
    T_EQ_STR(fx_jstr(e, "task_id"), "swarm-1", "bg swarm: the swarm's id");
    json_t *calls = json_object_get(e, "calls");
    T_EQ_INT((int)json_array_size(calls), 2, "bg swarm: both waiting calls");
    T_EQ_STR(fx_jstr(json_array_get(calls, 0), "call_id"), "agent-2/call_0", "bg swarm: agent-2");
    T_EQ_STR(fx_jstr(json_array_get(calls, 1), "call_id"), "agent-3/call_0", "bg swarm: agent-3");
    json_decref(ev);
    agt_agent_answer(fx.a, "agent-2/call_0", AGT_DECISION_APPROVE, NULL);
    char *r = call(&fx, "TaskList", "{}");
    T_EQ_STR(r,
             "Running background tasks: 1\nswarm-1 [waiting for approval] sub-agent swarm - 3 "
             "sub-agents",
             "bg swarm: still waiting for agent-3");
    free(r);
    agt_agent_answer(fx.a, "agent-3/call_0", AGT_DECISION_APPROVE, NULL);
    r = call(&fx, "TaskOutput", "{\"task_id\":\"swarm-1\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "Status: completed") != NULL, "bg swarm: completed");
    T_CHECK(strstr(r, SWARM_REPORT) != NULL, "bg swarm: the report");
    free(r);
    fx_rm(root, "y.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);
}

static void test_save_lost(void)
{
    fixture fx;
    setup(&fx, "appr-8");
    char *r = call(&fx, "Agent",
                   "{\"prompt\":\"write lost.txt\",\"description\":\"lostw\","
                   "\"run_in_background\":true}");
    free(r);
    fx_wait_poll(fx.s);
    char *state = NULL, *sess = NULL;
    T_EQ_INT(agt_agent_save(fx.a, &state), AGT_OK, "lost: saved while the task waits");
    agt_session_save(fx.s, &sess);
    teardown(&fx);
    setup(&fx, "appr-8");
    T_EQ_INT(agt_session_restore(fx.s, sess, strlen(sess)), AGT_OK, "lost: session restored");
    T_EQ_INT(agt_agent_restore(fx.a, state, strlen(state)), AGT_OK, "lost: agent restored");
    agt_free(state);
    agt_free(sess);
    r = call(&fx, "TaskList", "{\"active_only\":false}");
    T_EQ_STR(r, "Background tasks: 1\nagent-1 [lost] sub-agent - lostw",
             "lost: TaskList shows the task lost");
    free(r);
    json_t *ev = fx_tick(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(ev, 0), "status"), "lost", "lost: one event with status lost");
    T_EQ_STR(fx_jstr(json_array_get(ev, 0), "message"),
             "Background sub-agent agent-1 (lostw) was running when the session was saved; its "
             "work was lost. Start it again if the task still matters.",
             "lost: the message says so");
    json_decref(ev);
    r = call(&fx, "Agent", "{\"prompt\":\"hi\",\"description\":\"d\",\"resume\":\"agent-1\"}");
    T_EQ_STR(r,
             "Sub-agent agent-1 ran in the background when the session was saved; its work was "
             "lost. Start a new sub-agent for the task.",
             "lost: resume refused with the reason");
    free(r);
    r = call(&fx, "Agent", "{\"prompt\":\"hi\",\"description\":\"d\"}");
    T_EQ_STR(r,
             "Sub-agent agent-2 (d) finished after 1 model call. Resume it with resume: "
             "\"agent-2\".\n\nanswer: hi",
             "lost: a new sub-agent is agent-2");
    free(r);
    T_CHECK(fx_file_text(root, "lost.txt") == NULL, "lost: nothing written");
    teardown(&fx);
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-subapproval-bg", root, sizeof root, "/tmp/agt-subapprbg-XXXXXX",
                  &srv, "setup: temp dir and server", &status))
        return status;
    test_swarm_threads();
    test_background_agent();
    test_stop_waiting();
    test_swarm_background();
    test_save_lost();
    return fx_end(&srv, root);
}
