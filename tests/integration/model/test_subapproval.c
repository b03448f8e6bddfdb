/*
 * Sub-agents share their root's approval channel (issue #7): with the
 * replay model (root and sub-agents take its lines in turn),
 * - the pause model: a sub-agent's call that needs approval pauses the root
 *   run (AGT_EPENDING) with the call listed as "agent-N/<id>" (with
 *   "agent_id") in agt_session_pending() of the root session and in an
 *   AGT_AGENT_APPROVAL event; agt_agent_answer() + agt_agent_resume() go on
 *   (approve, reject, two calls, nested level 2, swarm), the suspended Agent
 *   call gets its report through the post-tool-use hook;
 * - the root session's synchronous approver: asked on the host's thread
 *   with "agent_id", APPROVE_SESSION rules land in the root session;
 * - APPROVE_SESSION of a sub-agent's Read outside the workspace admits the
 *   folder in the root session (the user's session) and in later
 *   sub-agents: neither asks again (synchronous approver and pause model);
 * - cancel and free while paused;
 * - save while paused, restore into a new session and agent, answer,
 *   resume (also through 2 levels); resume "agent-1" after a restore;
 *   hostile restore documents (AGT_EPARSE, nothing changed).
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
#include "session/fs_settings.h"

static char root[64];

typedef struct events {
    int approval, finished;
    json_t *approvals; /* the AGT_AGENT_APPROVAL events */
} events;

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    events *ev = payload;
    if (kind == AGT_AGENT_APPROVAL) {
        ev->approval++;
        json_array_append_new(ev->approvals, json_loadb(data, len, 0, NULL));
    } else if (kind == AGT_AGENT_TOOL_FINISHED) {
        ev->finished++;
    }
    return 0;
}

typedef struct fixture {
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    events ev;
    char replay[128];
} fixture;

static int post_hook(agt_hook *h, void *payload)
{
    (void)payload;
    if (strcmp(agt_hook_tool(h), "Agent") == 0 || strcmp(agt_hook_tool(h), "AgentSwarm") == 0) {
        char note[128];
        snprintf(note, sizeof note, "[post-hook saw %s %s]", agt_hook_tool(h), agt_hook_call_id(h));
        return agt_hook_append(h, note);
    }
    return AGT_OK;
}

/* Adds context for the model to the root's Agent calls (issue 18): a call
 * whose sub-agent waits stays suspended, and the context must still reach
 * the model with the report, also after save and restore. */
static int pre_hook_context(agt_hook *h, void *payload)
{
    (void)payload;
    if (strcmp(agt_hook_tool(h), "Agent") != 0)
        return AGT_OK;
    char text[128];
    snprintf(text, sizeof text, "[pre-hook context for %s]", agt_hook_call_id(h));
    return agt_hook_add_context(h, text);
}

/* Manual mode, Agent and AgentSwarm allowed (so only the sub-agents' calls
 * ask), a post-tool-use hook on the root session. */
static void setup(fixture *fx, const char *const *lines)
{
    memset(fx, 0, sizeof *fx);
    fx->ev.approvals = json_array();
    agt_registry_new(&fx->reg);
    agt_registry_load_builtin(fx->reg, "chat");
    agt_session_new(&fx->s, fx->reg, root);
    fx_write_replay(fx->replay, sizeof fx->replay, root, "replay-", lines);
    agt_model_new_replay(&fx->m, fx->replay);
    fx_agent_new(&fx->a, fx->s, fx->m);
    agt_agent_set_event_callback(fx->a, on_event, &fx->ev);
    agt_agent_enable_subagents(fx->a);
    fx_manual_subagents(fx->s);
    agt_session_set_post_hook(fx->s, post_hook, NULL);
    agt_agent_add_user_message(fx->a, "Do it.");
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    unlink(fx->replay);
    json_decref(fx->ev.approvals);
}

static const char *msg_content(json_t *msgs, size_t i)
{
    return fx_jstr(json_array_get(msgs, i), "content");
}

static void test_pause_approve(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "writer"),
                           WRITE_CALL("call_0", "sub.txt", "x"), TEXT("wrote it"),
                           TEXT("parent done"), NULL};
    setup(&fx, lines);
    agt_session_set_pre_hook(fx.s, pre_hook_context, NULL);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "pause: the root run pauses");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_APPROVAL, "pause: stop reason APPROVAL");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 1, "pause: one pending call in the root session");
    json_t *q = json_array_get(p, 0);
    T_EQ_STR(fx_jstr(q, "call_id"), "agent-1/call_0", "pause: qualified call id");
    T_EQ_STR(fx_jstr(q, "agent_id"), "agent-1", "pause: agent_id");
    T_EQ_STR(fx_jstr(q, "tool"), "Write", "pause: tool");
    T_EQ_STR(fx_jstr(json_object_get(q, "arguments"), "path"), "sub.txt",
             "pause: arguments object");
    T_EQ_STR(fx_jstr(q, "reason"),
             "Write changes files (access: write) and the session is in manual mode",
             "pause: the sub-agent session's reason");
    T_EQ_STR(fx_jstr(q, "suggested_rule"), "Write(./sub.txt)", "pause: suggested rule");
    json_decref(p);
    T_EQ_INT(fx.ev.approval, 1, "pause: one AGT_AGENT_APPROVAL event");
    json_t *e = json_array_get(fx.ev.approvals, 0);
    T_EQ_STR(fx_jstr(e, "id"), "agent-1/call_0", "pause: event id qualified");
    T_EQ_STR(fx_jstr(e, "agent_id"), "agent-1", "pause: event agent_id");
    T_EQ_STR(fx_jstr(e, "name"), "Write", "pause: event name");
    T_EQ_STR(fx_jstr(e, "arguments"), "{\"path\":\"sub.txt\",\"content\":\"x\"}",
             "pause: event arguments as the model sent them");
    T_EQ_INT(fx.ev.finished, 0, "pause: the Agent call has no result yet");
    T_CHECK(fx_file_text(root, "sub.txt") == NULL, "pause: nothing written yet");
    T_EQ_INT(agt_agent_add_user_message(fx.a, "x"), AGT_ESTATE, "pause: no new message");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "pause: resume before the answer");
    T_EQ_STR(agt_error_message(), "tool call 'agent-1/call_0' (Write) still waits for approval",
             "pause: the message names the waiting call");
    T_EQ_INT(agt_agent_answer(fx.a, "call_0", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "pause: the plain id is not the root's");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/call_0", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "pause: no agent-2");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE_SESSION, NULL), AGT_OK,
             "pause: answered");
    T_EQ_STR(fx_file_text(root, "sub.txt"), "x", "pause: the approved Write ran");
    char *rules = NULL;
    agt_session_rules(fx.s, &rules);
    json_t *rj = json_loads(rules, 0, NULL);
    agt_free(rules);
    json_t *sess = json_object_get(rj, "session");
    T_EQ_INT((int)json_array_size(sess), 1, "pause: one session rule in the root session");
    T_EQ_STR(json_string_value(json_array_get(sess, 0)), "Write(./sub.txt)",
             "pause: APPROVE_SESSION stored the suggested rule in the root session");
    json_decref(rj);
    p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 0, "pause: nothing pending after the answer");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "pause: a second answer");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "pause: resumed to the end");
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_DONE, "pause: stop reason DONE");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "pause: the root's final answer");
    T_EQ_INT(agt_agent_turns(fx.a), 2, "pause: the root made 2 model calls");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_INT((int)json_array_size(msgs), 5, "pause: system, user, assistant, tool, assistant");
    T_EQ_STR(fx_jstr(json_array_get(msgs, 3), "tool_call_id"), "p1",
             "pause: the tool message is p1's");
    T_EQ_STR(msg_content(msgs, 3),
             "Sub-agent agent-1 (writer) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nwrote it\n\n[pre-hook context for p1]\n\n[post-hook saw Agent p1]",
             "pause: the Agent result is the report, the pre-hook's context, then the "
             "post-hook's text");
    json_decref(msgs);
    T_EQ_INT(fx.ev.finished, 1, "pause: one TOOL_FINISHED (p1)");
    fx_rm(root, "sub.txt");
    teardown(&fx);
}

static void test_pause_reject_two(void)
{
    fixture fx;
    const char *two = "{\"tool_calls\":["
                      "{\"id\":\"call_0\",\"name\":\"Write\",\"arguments\":"
                      "\"{\\\"path\\\":\\\"a.txt\\\",\\\"content\\\":\\\"A\\\"}\"},"
                      "{\"id\":\"call_1\",\"name\":\"Write\",\"arguments\":"
                      "\"{\\\"path\\\":\\\"b.txt\\\",\\\"content\\\":\\\"B\\\"}\"}]}";
    const char *lines[] = {AGENT_CALL("call_0", "write two", "two"), two, TEXT("wrote a only"),
                           TEXT("parent done"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "two: paused");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 2, "two: both calls pending");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/call_0", "two: first");
    T_EQ_STR(fx_jstr(json_array_get(p, 1), "call_id"), "agent-1/call_1", "two: second");
    json_decref(p);
    T_EQ_INT(fx.ev.approval, 2, "two: two events");
    /* the root's own call is call_0 too: the qualified ids keep them apart */
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "two: first approved");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "two: resume with one waiting");
    T_EQ_STR(agt_error_message(), "tool call 'agent-1/call_1' (Write) still waits for approval",
             "two: names the second");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_1", AGT_DECISION_REJECT, "not b"), AGT_OK,
             "two: second rejected");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "two: resumed");
    T_EQ_STR(fx_file_text(root, "a.txt"), "A", "two: a written");
    T_CHECK(fx_file_text(root, "b.txt") == NULL, "two: b not written");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3),
             "Sub-agent agent-1 (two) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nwrote a only\n\n[post-hook saw Agent call_0]",
             "two: report");
    json_decref(msgs);
    fx_rm(root, "a.txt");
    teardown(&fx);
}

static void test_nested(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "outer", "outer"),
                           AGENT_CALL("n1", "inner", "inner"),
                           WRITE_CALL("w1", "deep.txt", "d"),
                           TEXT("inner done"),
                           TEXT("outer done"),
                           TEXT("parent done"),
                           NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "nested: paused");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 1, "nested: one pending");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-2/w1", "nested: level 2 id");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "agent_id"), "agent-2", "nested: level 2 agent");
    json_decref(p);
    T_EQ_STR(fx_jstr(json_array_get(fx.ev.approvals, 0), "id"), "agent-2/w1", "nested: event");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/w1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "nested: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "nested: resumed through both levels");
    T_EQ_STR(fx_file_text(root, "deep.txt"), "d", "nested: written");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "nested: root's final text");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3),
             "Sub-agent agent-1 (outer) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nouter done\n\n[post-hook saw Agent p1]",
             "nested: the root's Agent result");
    json_decref(msgs);
    fx_rm(root, "deep.txt");
    teardown(&fx);

    /* nested, the level-2 pause then freed (ASan checks the cleanup) */
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "nested free: paused");
    teardown(&fx);
}

typedef struct asked {
    int n;
    json_t *reqs;
    pthread_t host;
    int off_thread;
    int decision;
    const char *rule; /* set on APPROVE_SESSION when not NULL */
} asked;

static int session_approver(agt_approval *req, void *payload)
{
    asked *a = payload;
    a->n++;
    if (!pthread_equal(pthread_self(), a->host))
        a->off_thread++;
    json_array_append_new(a->reqs, json_loads(agt_approval_json(req), 0, NULL));
    if (a->rule != NULL)
        agt_approval_set_rule(req, a->rule);
    return a->decision;
}

static void test_sync_approver(void)
{
    fixture fx;
    const char *lines[] = {WRITE_CALL("r1", "root.txt", "r"),
                           AGENT_CALL("p1", "write a", "first"),
                           WRITE_CALL("s1", "a.txt", "1"),
                           TEXT("first done"),
                           AGENT_CALL("p2", "write a again", "second"),
                           WRITE_CALL("s2", "a.txt", "2"),
                           TEXT("second done"),
                           TEXT("parent done"),
                           NULL};
    setup(&fx, lines);
    asked ask = {0, json_array(), pthread_self(), 0, AGT_DECISION_APPROVE_SESSION};
    agt_session_set_approver(fx.s, session_approver, &ask);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "sync: the run goes through");
    T_EQ_INT(ask.n, 2, "sync: asked for the root's Write and agent-1's (not agent-2's)");
    T_EQ_INT(ask.off_thread, 0, "sync: always on the host's thread");
    json_t *r0 = json_array_get(ask.reqs, 0), *r1 = json_array_get(ask.reqs, 1);
    T_CHECK(json_object_get(r0, "agent_id") == NULL, "sync: the root's request has no agent_id");
    T_EQ_STR(fx_jstr(r0, "call_id"), "r1", "sync: root request id");
    T_EQ_STR(fx_jstr(r1, "agent_id"), "agent-1", "sync: the sub-agent's request names it");
    T_EQ_STR(fx_jstr(r1, "call_id"), "s1", "sync: the sub-agent's call id");
    T_EQ_STR(fx_jstr(r1, "tool"), "Write", "sync: tool");
    T_EQ_STR(fx_jstr(r1, "suggested_rule"), "Write(./a.txt)", "sync: suggested rule");
    T_EQ_STR(fx_file_text(root, "a.txt"), "2", "sync: both sub-agents wrote");
    T_EQ_INT(fx.ev.approval, 0, "sync: no approval events");
    char *rules = NULL;
    agt_session_rules(fx.s, &rules);
    json_t *rj = json_loads(rules, 0, NULL);
    agt_free(rules);
    json_t *sess = json_object_get(rj, "session");
    T_EQ_INT((int)json_array_size(sess), 2, "sync: two session rules in the root session");
    T_EQ_STR(json_string_value(json_array_get(sess, 0)), "Write(./root.txt)",
             "sync: the root's rule");
    T_EQ_STR(json_string_value(json_array_get(sess, 1)), "Write(./a.txt)",
             "sync: the sub-agent's APPROVE_SESSION rule is the root's");
    json_decref(rj);
    json_decref(ask.reqs);
    fx_rm(root, "a.txt");
    fx_rm(root, "root.txt");
    teardown(&fx);
}

/* A Read call of path (runtime text) as a replay line, into buf. */
static const char *read_call(char *buf, size_t cap, const char *id, const char *path)
{
    snprintf(buf, cap,
             "{\"tool_calls\":[{\"id\":\"%s\",\"name\":\"Read\",\"arguments\":"
             "\"{\\\"path\\\":\\\"%s\\\"}\"}]}",
             id, path);
    return buf;
}

/* A folder outside the workspace with a.txt, b.txt and c.txt in it, and
 * the replay lines reading them: s1 (a.txt) and s2 (c.txt) for the
 * sub-agents, r1 (b.txt) for the root. */
typedef struct outside {
    char dir[128], a[256], b[256], c[256];
    char s1[512], r1[512], s2[512];
} outside;

static void outside_dir(char *out, size_t cap);

static void outside_make(outside *o)
{
    outside_dir(o->dir, sizeof o->dir);
    snprintf(o->a, sizeof o->a, "%s/a.txt", o->dir);
    snprintf(o->b, sizeof o->b, "%s/b.txt", o->dir);
    snprintf(o->c, sizeof o->c, "%s/c.txt", o->dir);
    read_call(o->s1, sizeof o->s1, "s1", o->a);
    read_call(o->r1, sizeof o->r1, "r1", o->b);
    read_call(o->s2, sizeof o->s2, "s2", o->c);
}

static void outside_dir(char *out, size_t cap)
{
    char tmpl[] = "/tmp/agt-subappr-out-XXXXXX";
    char *d = mkdtemp(tmpl);
    char *real = d ? realpath(d, NULL) : NULL;
    snprintf(out, cap, "%s", real ? real : "(none)");
    free(real);
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s.txt", out, names[i]);
        FILE *f = fopen(p, "w");
        if (f) {
            fprintf(f, "%s\n", names[i]);
            fclose(f);
        }
    }
}

static void outside_rm(const char *dir)
{
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s.txt", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* The read-only folders of session s, joined by ",". */
static char *readable_of(const agt_session *s)
{
    size_t n = 0;
    const char *const *d = agti_session_readable_dirs(s, &n);
    char *out = calloc(1, 4096);
    for (size_t i = 0; i < n; i++)
        snprintf(out + strlen(out), 4096 - strlen(out), "%s%s", i ? "," : "", d[i]);
    return out;
}

/* The synchronous approver: agent-1's Read outside asks once; approved for
 * the session, the folder is the root session's, so the root's own Read of
 * another file there and agent-2's (started later) ask nothing. */
static void test_outside_sync(void)
{
    outside o;
    outside_make(&o);
    const char *out = o.dir, *a = o.a;
    const char *lines[] = {AGENT_CALL("p1", "read a", "first"),
                           o.s1,
                           TEXT("first done"),
                           o.r1,
                           AGENT_CALL("p2", "read c", "second"),
                           o.s2,
                           TEXT("second done"),
                           TEXT("parent done"),
                           NULL};
    fixture fx;
    setup(&fx, lines);
    /* the user keeps the rule to a.txt: only the folder's admission lets
     * the others read b.txt and c.txt without a question */
    char rule[300];
    snprintf(rule, sizeof rule, "Read(%s)", a);
    asked ask = {0, json_array(), pthread_self(), 0, AGT_DECISION_APPROVE_SESSION, rule};
    agt_session_set_approver(fx.s, session_approver, &ask);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "outside sync: the run goes through");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "outside sync: the root's final answer");
    T_EQ_INT(ask.n, 1,
             "outside sync: asked once (agent-1's Read), not for the root's or agent-2's");
    json_t *r0 = json_array_get(ask.reqs, 0);
    T_EQ_STR(fx_jstr(r0, "agent_id"), "agent-1", "outside sync: agent-1 asked");
    T_EQ_STR(fx_jstr(r0, "tool"), "Read", "outside sync: for its Read");
    T_EQ_STR(fx_jstr(json_object_get(r0, "outside"), "folder"), out,
             "outside sync: the request names the folder");
    T_EQ_STR(fx_jstr(json_object_get(r0, "outside"), "access"), "read",
             "outside sync: for reading");
    char sugg[300];
    snprintf(sugg, sizeof sugg, "Read(%s/**)", out);
    T_EQ_STR(fx_jstr(r0, "suggested_rule"), sugg, "outside sync: the suggested rule (not kept)");
    char *rd = readable_of(fx.s);
    T_EQ_STR(rd, out, "outside sync: the folder is a read-only folder of the root session");
    free(rd);
    json_t *msgs = fx_messages(fx.a);
    /* system, user, p1 call, p1 report, r1 call, r1 result, p2, report, answer */
    T_EQ_STR(fx_jstr(json_array_get(msgs, 5), "tool_call_id"), "r1", "outside sync: r1's result");
    T_EQ_STR(msg_content(msgs, 5), "1\tb\n\nRead 1 line (1-1) of 1; reached the end of the file.",
             "outside sync: the root read b.txt");
    json_decref(msgs);
    json_decref(ask.reqs);
    teardown(&fx);
    outside_rm(out);
}

/* The pause model: agent-1's Read outside waits; answered APPROVE_SESSION,
 * the root's own Read of another file there runs without a new pause. */
static void test_outside_pause(void)
{
    outside o;
    outside_make(&o);
    const char *out = o.dir;
    const char *lines[] = {AGENT_CALL("p1", "read a", "first"),
                           o.s1,
                           TEXT("first done"),
                           o.r1,
                           TEXT("parent done"),
                           NULL};
    fixture fx;
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "outside pause: the root run pauses");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 1, "outside pause: one pending call");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/s1", "outside pause: agent-1's");
    T_EQ_STR(fx_jstr(json_object_get(json_array_get(p, 0), "outside"), "folder"), out,
             "outside pause: it names the folder");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/s1", AGT_DECISION_APPROVE_SESSION, NULL), AGT_OK,
             "outside pause: approved for the session");
    char *rd = readable_of(fx.s);
    T_EQ_STR(rd, out, "outside pause: the folder is a read-only folder of the root session");
    free(rd);
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "outside pause: resumed to the end, no new pause");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "outside pause: the root's final answer");
    teardown(&fx);
    outside_rm(out);
}

static const char *SWARM_CALL =
    "{\"tool_calls\":[{\"id\":\"sw\",\"name\":\"AgentSwarm\",\"arguments\":"
    "\"{\\\"prompt_template\\\":\\\"do {{item}}\\\",\\\"items\\\":[\\\"x\\\",\\\"y\\\",\\\"z\\\"]}"
    "\"}]}";
static const char *SWARM_REPORT =
    "AgentSwarm: 3 sub-agents, 3 finished, 0 did not (run one after the other).\n\n"
    "## agent-1 \xe2\x80\x94 x: finished after 2 model calls\nrx\n\n"
    "## agent-2 \xe2\x80\x94 y: finished after 1 model call\nry\n\n"
    "## agent-3 \xe2\x80\x94 z: finished after 2 model calls\nrz\n\n"
    "[post-hook saw AgentSwarm sw]";

static void test_swarm(void)
{
    /* replay model: one after the other; agent-1 and agent-3 write */
    const char *lines[] = {SWARM_CALL, WRITE_CALL("c", "x.txt", "x"),
                           TEXT("ry"), WRITE_CALL("c", "z.txt", "z"),
                           TEXT("rx"), TEXT("rz"),
                           TEXT("ok"), NULL};
    fixture fx;
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "swarm pause: paused after the round");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 2, "swarm pause: two waiting calls");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/c", "swarm pause: agent-1's");
    T_EQ_STR(fx_jstr(json_array_get(p, 1), "call_id"), "agent-3/c", "swarm pause: agent-3's");
    json_decref(p);
    T_EQ_INT(fx.ev.approval, 2, "swarm pause: two events");
    agt_agent_answer(fx.a, "agent-1/c", AGT_DECISION_APPROVE, NULL);
    agt_agent_answer(fx.a, "agent-3/c", AGT_DECISION_APPROVE, NULL);
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "swarm pause: resumed");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3), SWARM_REPORT, "swarm pause: the report");
    json_decref(msgs);
    T_EQ_STR(fx_file_text(root, "x.txt"), "x", "swarm pause: x written");
    T_EQ_STR(fx_file_text(root, "z.txt"), "z", "swarm pause: z written");
    fx_rm(root, "x.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);

    setup(&fx, lines);
    asked ask = {0, json_array(), pthread_self(), 0, AGT_DECISION_APPROVE};
    agt_session_set_approver(fx.s, session_approver, &ask);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "swarm sync: no pause");
    T_EQ_INT(ask.n, 2, "swarm sync: asked twice");
    T_EQ_INT(ask.off_thread, 0, "swarm sync: on the host's thread");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 0), "agent_id"), "agent-1", "swarm sync: agent-1");
    T_EQ_STR(fx_jstr(json_array_get(ask.reqs, 1), "agent_id"), "agent-3", "swarm sync: agent-3");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3), SWARM_REPORT, "swarm sync: the same report");
    json_decref(msgs);
    json_decref(ask.reqs);
    fx_rm(root, "x.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);
}

static void test_cancel_free(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "writer"), WRITE_CALL("s1", "c.txt", "c"),
                           TEXT("wrote it"), TEXT("parent done"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "cancel: paused");
    agt_agent_cancel(fx.a);
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_APPROVAL, "cancel: still paused");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/s1", AGT_DECISION_REJECT, NULL), AGT_OK,
             "cancel: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "cancel: a resume after a cancel goes on");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "cancel: final text");
    teardown(&fx);

    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "free: paused");
    teardown(&fx); /* ASan: the suspended call, the sub-agent and its pending call are freed */
    T_CHECK(1, "free while paused");
}

#define AGENT_RESUME(id, prompt, desc, sid)                                                        \
    "{\"tool_calls\":[{\"id\":\"" id "\",\"name\":\"Agent\",\"arguments\":"                        \
    "\"{\\\"prompt\\\":\\\"" prompt "\\\",\\\"description\\\":\\\"" desc                           \
    "\\\",\\\"resume\\\":\\\"" sid "\\\"}\"}]}"

/* Saves the agent and its session, frees them all (the old process ends),
 * and sets up a fresh fixture over lines2 with both restored. */
static void reincarnate(fixture *fx, const char *const *lines2, const char *what)
{
    char *state = NULL, *sess = NULL;
    T_EQ_INT(agt_agent_save(fx->a, &state), AGT_OK, "%s: agent saved", what);
    T_EQ_INT(agt_session_save(fx->s, &sess), AGT_OK, "%s: session saved", what);
    teardown(fx);
    setup(fx, lines2);
    T_EQ_INT(agt_session_restore(fx->s, sess, strlen(sess)), AGT_OK, "%s: session restored", what);
    T_EQ_INT(agt_agent_restore(fx->a, state, strlen(state)), AGT_OK, "%s: agent restored", what);
    agt_free(state);
    agt_free(sess);
}

static void test_save_restore(void)
{
    fixture fx;
    const char *lines1[] = {AGENT_CALL("p1", "write it", "writer"),
                            WRITE_CALL("call_0", "saved.txt", "s"), NULL};
    const char *lines2[] = {TEXT("wrote it"), TEXT("parent done"), NULL};
    setup(&fx, lines1);
    agt_session_set_pre_hook(fx.s, pre_hook_context, NULL);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "save: paused on the sub-agent");
    reincarnate(&fx, lines2, "save"); /* the new session has no pre-hook */
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 1, "restore: one pending call");
    json_t *q = json_array_get(p, 0);
    T_EQ_STR(fx_jstr(q, "call_id"), "agent-1/call_0", "restore: qualified id");
    T_EQ_STR(fx_jstr(q, "agent_id"), "agent-1", "restore: agent_id");
    T_EQ_STR(fx_jstr(q, "reason"),
             "Write changes files (access: write) and the session is in manual mode",
             "restore: the reason, parked again in the sub-agent's session");
    json_decref(p);
    T_EQ_INT(agt_agent_stop_reason(fx.a), AGT_AGENT_STOP_APPROVAL, "restore: stop reason");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "restore: the call still waits");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "restore: answered");
    T_EQ_STR(fx_file_text(root, "saved.txt"), "s", "restore: written");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "restore: resumed");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "restore: the same final answer");
    json_t *msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3),
             "Sub-agent agent-1 (writer) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nwrote it\n\n[pre-hook context for p1]\n\n[post-hook saw Agent p1]",
             "restore: the suspended Agent call got its report and the saved pre-hook "
             "context");
    json_decref(msgs);
    fx_rm(root, "saved.txt");
    teardown(&fx);

    /* paused two levels down */
    const char *nest1[] = {AGENT_CALL("p1", "outer", "outer"), AGENT_CALL("n1", "inner", "inner"),
                           WRITE_CALL("w1", "deep2.txt", "d"), NULL};
    const char *nest2[] = {TEXT("inner done"), TEXT("outer done"), TEXT("parent done"), NULL};
    setup(&fx, nest1);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "save nested: paused");
    reincarnate(&fx, nest2, "save nested");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/w1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "restore nested: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "restore nested: resumed through both levels");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 3),
             "Sub-agent agent-1 (outer) finished after 2 model calls. Resume it with resume: "
             "\"agent-1\".\n\nouter done\n\n[post-hook saw Agent p1]",
             "restore nested: the root's Agent result");
    json_decref(msgs);
    T_EQ_STR(fx_file_text(root, "deep2.txt"), "d", "restore nested: written");
    fx_rm(root, "deep2.txt");
    teardown(&fx);

    /* a finished sub-agent resumes after a restore, with its conversation */
    const char *fin1[] = {AGENT_CALL("p1", "plan", "planner"), TEXT("sub result"),
                          TEXT("parent done"), NULL};
    const char *fin2[] = {AGENT_RESUME("p2", "more", "again", "agent-1"), TEXT("sub again"),
                          TEXT("ok"), NULL};
    setup(&fx, fin1);
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "resume after restore: first run");
    reincarnate(&fx, fin2, "resume after restore");
    agt_agent_add_user_message(fx.a, "again");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "resume after restore: second run");
    msgs = fx_messages(fx.a);
    T_EQ_STR(msg_content(msgs, 7),
             "Sub-agent agent-1 (again) finished after 1 model call. Resume it with resume: "
             "\"agent-1\".\n\nsub again\n\n[post-hook saw Agent p2]",
             "resume after restore: agent-1 continued");
    json_decref(msgs);
    char *state = NULL;
    agt_agent_save(fx.a, &state);
    json_t *sj = json_loads(state, 0, NULL);
    agt_free(state);
    json_t *sub_msgs = json_object_get(
        json_object_get(json_array_get(json_object_get(sj, "subs"), 0), "agent"), "messages");
    T_EQ_INT((int)json_array_size(sub_msgs), 5,
             "resume after restore: system, plan, sub result, more, sub again");
    T_EQ_STR(msg_content(sub_msgs, 2), "sub result", "resume after restore: the old answer kept");
    json_decref(sj);
    teardown(&fx);
}

static void test_hostile_restore(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "writer"), WRITE_CALL("s1", "h.txt", "h"),
                           NULL};
    setup(&fx, lines);
    agt_agent_run(fx.a);
    char *before = NULL;
    agt_agent_save(fx.a, &before);
#define SUB_OK "{\"id\":\"agent-1\",\"rc\":0,\"turns_before\":0,\"session\":{\"format\":1},"
#define AGENT_OK "\"agent\":{\"version\":1,\"messages\":[]}}"
    static const char *bad[] = {
        "{\"version\":1,\"messages\":[],\"subs\":{}}",
        "{\"version\":1,\"messages\":[],\"subs\":[{\"id\":\"agent-2\"}]}",
        "{\"version\":1,\"messages\":[],\"subs\":[7]}",
        "{\"version\":1,\"messages\":[],\"subs\":[" SUB_OK "\"parent\":\"agent-2\"," AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"subs\":[{\"id\":\"agent-1\",\"rc\":0,\"turns_before\":0,"
        "\"session\":5," AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"subs\":[{\"id\":\"agent-1\",\"rc\":3,\"turns_before\":0,"
        "\"session\":{}," AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"subs\":[{\"id\":\"agent-1\",\"rc\":0,\"turns_before\":0,"
        "\"session\":{\"format\":99}," AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"subs\":[" SUB_OK "\"agent\":{\"version\":1,\"messages\":"
        "[{\"role\":\"robot\"}]}}]}",
        "{\"version\":1,\"messages\":[],\"waiting\":[{\"id\":\"p\",\"name\":\"Agent\","
        "\"arguments\":"
        "\"{}\",\"suspended\":{\"subs\":[\"agent-9\"],\"session_arguments\":\"{}\"}}]}",
        "{\"version\":1,\"messages\":[],\"waiting\":[{\"id\":\"p\",\"name\":\"Agent\","
        "\"arguments\":"
        "\"{}\",\"suspended\":{\"subs\":\"agent-1\",\"session_arguments\":\"{}\"}}],\"subs\":"
        "[" SUB_OK AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"waiting\":[{\"id\":\"p\",\"name\":\"Agent\","
        "\"arguments\":"
        "\"{}\",\"suspended\":{\"subs\":[\"agent-1\"],\"session_arguments\":\"{}\"}},"
        "{\"id\":\"q\",\"name\":\"Agent\",\"arguments\":\"{}\",\"suspended\":{\"subs\":"
        "[\"agent-1\"],\"session_arguments\":\"{}\"}}],\"subs\":[" SUB_OK AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"subs\":[" SUB_OK "\"agent\":{\"version\":1,\"messages\":"
        "[],\"waiting\":[{\"id\":\"p\",\"name\":\"Agent\",\"arguments\":\"{}\",\"suspended\":"
        "{\"subs\":[\"agent-1\"],\"session_arguments\":\"{}\"}}]}}]}",
        "{\"version\":1,\"messages\":[],\"subs\":[" SUB_OK AGENT_OK "," SUB_OK AGENT_OK "]}",
        "{\"version\":1,\"messages\":[],\"tasks\":[{\"id\":\"\",\"kind\":\"agent\","
        "\"description\":\"x\"}]}",
        "{\"version\":1,\"messages\":[],\"subs\":[" SUB_OK "\"agent\":{\"version\":1,\"messages\":"
        "[],\"waiting\":[{\"id\":\"w\",\"name\":\"NoSuchTool\",\"arguments\":\"{}\"}]}}]}",
        NULL};
    for (int i = 0; bad[i]; i++)
        T_EQ_INT(agt_agent_restore(fx.a, bad[i], strlen(bad[i])), AGT_EPARSE,
                 "hostile restore %d: EPARSE (%s)", i, agt_error_message());
    agt_agent_restore(fx.a, bad[6], strlen(bad[6]));
    T_EQ_STR(agt_error_message(),
             "agent state: subs[0]: session: session file: format 99 is newer than this library "
             "reads (1)",
             "hostile restore: a bad sub-agent session is named");
    agt_agent_restore(fx.a, bad[14], strlen(bad[14]));
    const char *pre = "agent state: subs[0]: tool call 'w' (NoSuchTool) cannot wait for "
                      "approval again: Tool 'NoSuchTool' is not available here.";
    T_CHECK(strncmp(agt_error_message(), pre, strlen(pre)) == 0,
            "hostile restore: a waiting call that cannot wait is named: %s", agt_error_message());
    char *after = NULL;
    agt_agent_save(fx.a, &after);
    T_EQ_STR(after, before, "hostile restore: the agent is unchanged");
    agt_free(before);
    agt_free(after);
    json_t *p = fx_pending(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/s1",
             "hostile restore: still paused on agent-1/s1");
    json_decref(p);
    teardown(&fx);
}

int main(void)
{
    if (fx_workspace_make(root, sizeof root, "/tmp/agt-subappr-XXXXXX") != 0) {
        T_CHECK(0, "setup: temp dir");
        return t_done();
    }
    test_pause_approve();
    test_pause_reject_two();
    test_nested();
    test_sync_approver();
    test_outside_sync();
    test_outside_pause();
    test_swarm();
    test_cancel_free();
    test_save_restore();
    test_hostile_restore();
    fx_workspace_remove(root);
    return t_done();
}
