/*
 * Sub-agents sharing the root's approval channel, misused as a host might
 * (breaker tests): malformed and unknown qualified ids, call ids holding
 * '/', a root call whose id looks qualified, answering twice, bad decision
 * values, run/add while paused, cancel while paused then resume, a session
 * approver returning garbage or re-entering agt_agent_answer(), and
 * restoring a paused state into an agent without the Agent tool or in
 * another folder, 10k sub-agents in a restore document, every node of the
 * new parts of a saved document (subs, waiting) given each other JSON type
 * or removed (846 documents: AGT_OK or AGT_EPARSE, nothing changed); with
 * subappr_server.py (HTTP model): the waiting calls of a background swarm
 * answered twice each from threads other than the host's (one at a time,
 * as agent.h allows; -DAGT_HOSTILE_CONCURRENT answers at once, outside that
 * contract), APPROVE_SESSION from a background sub-agent, a background
 * sub-agent waiting while the root run is paused on a foreground swarm.
 * Expected values come from agent.h and session.h (agt_approver_fn: any
 * other value rejects the call).
 */
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "agent_fixture.h"
#include "harness.h"

static char root[64];
static fake_server srv;

typedef struct fixture {
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    char replay[128];
} fixture;

static void setup_in(fixture *fx, const char *const *lines, const char *dir, bool subagents)
{
    memset(fx, 0, sizeof *fx);
    agt_registry_new(&fx->reg);
    agt_registry_load_builtin(fx->reg, "chat");
    agt_session_new(&fx->s, fx->reg, dir);
    fx_write_replay(fx->replay, sizeof fx->replay, root, "replay-h", lines);
    agt_model_new_replay(&fx->m, fx->replay);
    fx_agent_new(&fx->a, fx->s, fx->m);
    if (subagents)
        agt_agent_enable_subagents(fx->a);
    fx_manual_subagents(fx->s);
    agt_agent_add_user_message(fx->a, "Do it.");
}

static void setup(fixture *fx, const char *const *lines)
{
    setup_in(fx, lines, root, true);
}

static void teardown(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    unlink(fx->replay);
}

/* Malformed and unknown ids change nothing; the real one still works. */
static void test_bad_ids(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "writer"),
                           WRITE_CALL("call_0", "h1.txt", "x"), TEXT("wrote it"),
                           TEXT("parent done"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "ids: paused");
    static const char *bad[] = {"agent-1/",
                                "/call_0",
                                "agent-1/agent-1/call_0",
                                "agent-99/call_0",
                                "agent-1",
                                "agent-/call_0",
                                "agent-01/call_0",
                                "agent-1//call_0",
                                "",
                                "agent-1/call_0/",
                                "p1",
                                "agent-0/call_0",
                                "agent--1/call_0",
                                "agent-4294967297/call_0",
                                "AGENT-1/call_0",
                                NULL};
    for (int i = 0; bad[i]; i++) {
        int rc = agt_agent_answer(fx.a, bad[i], AGT_DECISION_APPROVE, NULL);
        T_CHECK(rc == AGT_ENOTFOUND || rc == AGT_EINVAL, "ids: '%s' refused (rc %d: %s)", bad[i],
                rc, agt_error_message());
    }
    T_EQ_INT(agt_agent_answer(fx.a, NULL, AGT_DECISION_APPROVE, NULL), AGT_EINVAL,
             "ids: NULL id is EINVAL");
    T_EQ_INT(agt_agent_answer(NULL, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_EINVAL,
             "ids: NULL agent is EINVAL");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", 99, NULL), AGT_EINVAL,
             "ids: decision 99 is EINVAL");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", -1, NULL), AGT_EINVAL,
             "ids: decision -1 is EINVAL");
    T_CHECK(fx_file_text(root, "h1.txt") == NULL, "ids: nothing ran");
    json_t *p = fx_pending(fx.s);
    T_EQ_INT((int)json_array_size(p), 1, "ids: still one pending call");
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/call_0", "ids: the same call");
    json_decref(p);
    T_EQ_INT(agt_agent_run(fx.a), AGT_ESTATE, "ids: run while paused is ESTATE");
    T_EQ_INT(agt_agent_add_user_message(fx.a, "more"), AGT_ESTATE, "ids: no message while paused");
    /* cancel while paused: the pause stays (agent.h) */
    agt_agent_cancel(fx.a);
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "ids: cancel keeps the pause, call still waits");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "ids: the real id");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_REJECT, NULL), AGT_ENOTFOUND,
             "ids: answering twice");
    T_EQ_STR(fx_file_text(root, "h1.txt"), "x", "ids: approved Write ran once");
    int rc = agt_agent_resume(fx.a);
    T_EQ_INT(rc, AGT_OK, "ids: resume after cancel-while-paused goes on (%s)",
             rc ? agt_error_message() : "");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "ids: root final text");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "ids: resume when not paused");
    fx_rm(root, "h1.txt");
    teardown(&fx);
}

/* A sub-agent's call id holding '/': its qualified id is still answerable. */
static void test_slash_in_id(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "writer"), WRITE_CALL("a/b", "h2.txt", "y"),
                           TEXT("wrote it"), TEXT("parent done"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "slash: paused");
    json_t *p = fx_pending(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-1/a/b", "slash: qualified id");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/a", AGT_DECISION_APPROVE, NULL), AGT_ENOTFOUND,
             "slash: a prefix is not the call");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/a/b", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "slash: answered (%s)", agt_error_message());
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "slash: resumed");
    T_EQ_STR(fx_file_text(root, "h2.txt"), "y", "slash: written");
    fx_rm(root, "h2.txt");
    teardown(&fx);
}

/* A root call waits for approval; a sub id for it is not it, and an id
 * that looks qualified but is the root's own is the root's. */
static void test_root_call(void)
{
    fixture fx;
    const char *lines[] = {WRITE_CALL("agent-1/call_0", "h3.txt", "r"), TEXT("root done"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "root: paused on its own call");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/agent-1/call_0", AGT_DECISION_APPROVE, NULL),
             AGT_ENOTFOUND, "root: a sub id for the root's call");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "root: its own id, though it looks qualified (%s)", agt_error_message());
    T_EQ_STR(fx_file_text(root, "h3.txt"), "r", "root: written");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "root: resumed");
    fx_rm(root, "h3.txt");
    teardown(&fx);
}

typedef struct garbage {
    fixture *fx;
    int n, decision, reentered_rc;
} garbage;

static int garbage_approver(agt_approval *req, void *payload)
{
    (void)req;
    garbage *g = payload;
    g->n++;
    if (g->fx != NULL)
        g->reentered_rc = agt_agent_answer(g->fx->a, "agent-1/call_0", AGT_DECISION_APPROVE, NULL);
    return g->decision;
}

/* garbage decisions reject (session.h); re-entering the agent API from the
 * approver neither hangs nor answers anything */
static void test_garbage_approver(void)
{
    static const int values[] = {12345, -7, AGT_DECISION_APPROVE};
    for (int k = 0; k < 3; k++) {
        fixture fx;
        const char *lines[] = {AGENT_CALL("p1", "write it", "writer"),
                               WRITE_CALL("call_0", "h4.txt", "z"), TEXT("sub done"),
                               TEXT("parent done"), NULL};
        setup(&fx, lines);
        garbage g = {k == 2 ? &fx : NULL, 0, values[k], -999};
        agt_session_set_approver(fx.s, garbage_approver, &g);
        int rc = agt_agent_run(fx.a);
        T_EQ_INT(rc, AGT_OK, "approver %d: the run ends (%s)", values[k],
                 rc ? agt_error_message() : "");
        T_EQ_INT(g.n, 1, "approver %d: asked once", values[k]);
        if (k < 2)
            T_CHECK(fx_file_text(root, "h4.txt") == NULL, "approver %d: rejected, nothing written",
                    values[k]);
        else {
            T_CHECK(g.reentered_rc == AGT_ENOTFOUND || g.reentered_rc == AGT_ESTATE,
                    "approver: re-entered agt_agent_answer refused (rc %d)", g.reentered_rc);
            T_EQ_STR(fx_file_text(root, "h4.txt"), "z", "approver: approved once, written");
        }
        T_EQ_STR(agt_agent_text(fx.a), "parent done", "approver %d: root final text", values[k]);
        fx_rm(root, "h4.txt");
        teardown(&fx);
    }
}

/* APPROVE_SESSION on a sub-agent's call: the rule lands in the root session
 * and a later sub-agent does not ask again. */
static void test_session_rule_new_sub(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "write it", "first"),
                           WRITE_CALL("call_0", "h5.txt", "1"),
                           TEXT("first done"),
                           AGENT_CALL("p2", "write again", "second"),
                           WRITE_CALL("call_0", "h5.txt", "2"),
                           TEXT("second done"),
                           TEXT("parent done"),
                           NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "rule: paused");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-1/call_0", AGT_DECISION_APPROVE_SESSION, NULL), AGT_OK,
             "rule: approve for the session");
    int rc = agt_agent_resume(fx.a);
    T_EQ_INT(rc, AGT_OK, "rule: the second sub-agent did not ask (%s)",
             rc ? agt_error_message() : "");
    T_EQ_STR(fx_file_text(root, "h5.txt"), "2", "rule: the second sub-agent wrote");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "rule: final text");
    fx_rm(root, "h5.txt");
    teardown(&fx);
}

/* Paused at level 2, saved; restored into an agent that never enabled
 * sub-agents (its registry has no Agent tool) or whose session works in
 * another folder: a clear error or a working restore, never a crash. */
static void test_restore_elsewhere(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "outer", "outer"), AGENT_CALL("n1", "inner", "inner"),
                           WRITE_CALL("w1", "h6.txt", "d"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "elsewhere: paused at level 2");
    char *state = NULL, *sess = NULL;
    T_EQ_INT(agt_agent_save(fx.a, &state), AGT_OK, "elsewhere: saved");
    agt_session_save(fx.s, &sess);
    teardown(&fx);

    const char *rest[] = {TEXT("inner done"), TEXT("outer done"), TEXT("parent done"), NULL};
    setup_in(&fx, rest, root, false);
    agt_session_restore(fx.s, sess, strlen(sess));
    int rc = agt_agent_restore(fx.a, state, strlen(state));
    /* the sub-agents use the agent's model and registry (agent.h): the
     * paused sub-agents are restored and go on without the Agent tool */
    T_EQ_INT(rc, AGT_OK, "elsewhere: no Agent tool: restored (%s)", rc ? agt_error_message() : "");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/w1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "elsewhere: no Agent tool: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "elsewhere: no Agent tool: resumed");
    T_EQ_STR(agt_agent_text(fx.a), "parent done", "elsewhere: no Agent tool: final text");
    T_EQ_STR(fx_file_text(root, "h6.txt"), "d", "elsewhere: no Agent tool: written");
    fx_rm(root, "h6.txt");
    teardown(&fx);

    char other[96];
    snprintf(other, sizeof other, "%s/other", root);
    mkdir(other, 0755);
    setup_in(&fx, rest, other, true);
    agt_session_restore(fx.s, sess, strlen(sess));
    rc = agt_agent_restore(fx.a, state, strlen(state));
    T_EQ_INT(rc, AGT_OK, "elsewhere: other root: restored (%s)", rc ? agt_error_message() : "");
    json_t *p = fx_pending(fx.s);
    T_EQ_STR(fx_jstr(json_array_get(p, 0), "call_id"), "agent-2/w1", "elsewhere: still waits");
    json_decref(p);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/w1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "elsewhere: answered");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "elsewhere: resumed");
    char path[160];
    snprintf(path, sizeof path, "%s/other/h6.txt", root);
    T_CHECK(access(path, F_OK) == 0, "elsewhere: written in the new session's root");
    unlink(path);
    rmdir(other);
    teardown(&fx);
    agt_free(state);
    agt_free(sess);
}

/* 10k sub-agents in a restore document: refused or taken, in bounded time. */
static void test_many_subs(void)
{
    fixture fx;
    const char *lines[] = {TEXT("x"), NULL};
    setup(&fx, lines);
    json_t *doc = json_pack("{s:i,s:[]}", "version", 1, "messages");
    json_t *subs = json_array();
    for (int i = 1; i <= 10000; i++) {
        char id[32];
        snprintf(id, sizeof id, "agent-%d", i);
        json_array_append_new(subs, json_pack("{s:s,s:i,s:i,s:{s:i},s:{s:i,s:[]}}", "id", id, "rc",
                                              0, "turns_before", 0, "session", "format", 1, "agent",
                                              "version", 1, "messages"));
    }
    json_object_set_new(doc, "subs", subs);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    time_t t0 = time(NULL);
    int rc = agt_agent_restore(fx.a, text, strlen(text));
    T_CHECK(rc == AGT_OK || rc == AGT_EPARSE || rc == AGT_ELIMIT, "many: rc %d (%s)", rc,
            rc ? agt_error_message() : "");
    T_CHECK(time(NULL) - t0 < 30, "many: within 30 s (%ld s)", (long)(time(NULL) - t0));
    free(text);
    teardown(&fx);
}

/* Every node of a document saved at a level-2 pause replaced by a value of
 * each other JSON type: each restore is AGT_OK or AGT_EPARSE, and a refused
 * one leaves the agent as it was. */
typedef struct fuzz {
    agt_agent *a;
    json_t *doc;
    const char *before;
    int runs, bad_rc, changed;
} fuzz;

static void fuzz_try(fuzz *f)
{
    char *text = json_dumps(f->doc, JSON_COMPACT);
    int rc = agt_agent_restore(f->a, text, strlen(text));
    f->runs++;
    if (rc != AGT_OK && rc != AGT_EPARSE) {
        if (f->bad_rc++ < 5)
            t_diag("restore rc %d (%s) for %.300s", rc, agt_error_message(), text);
    }
    if (rc == AGT_OK) {
        agt_agent_restore(f->a, f->before, strlen(f->before));
    } else {
        char *now = NULL;
        agt_agent_save(f->a, &now);
        if (now == NULL || strcmp(now, f->before) != 0)
            f->changed++;
        agt_free(now);
    }
    free(text);
}

static void fuzz_node(fuzz *f, json_t *parent, const char *key, size_t index, json_t *node)
{
    json_t *repl[] = {json_null(),      json_integer(-1), json_integer(1000000), json_real(0.5),
                      json_string("x"), json_true(),      json_array(),          json_object()};
    for (size_t r = 0; r < sizeof repl / sizeof *repl; r++) {
        if (json_typeof(repl[r]) == json_typeof(node) && !json_is_integer(node)) {
            json_decref(repl[r]);
            continue;
        }
        json_t *old = json_incref(node);
        if (key)
            json_object_set(parent, key, repl[r]);
        else
            json_array_set(parent, index, repl[r]);
        fuzz_try(f);
        if (key)
            json_object_set(parent, key, old);
        else
            json_array_set(parent, index, old);
        json_decref(old);
        json_decref(repl[r]);
    }
    /* and the node removed */
    json_t *old = json_incref(node);
    if (key)
        json_object_del(parent, key);
    else
        json_array_remove(parent, index);
    fuzz_try(f);
    if (key)
        json_object_set(parent, key, old);
    else
        json_array_insert(parent, index, old);
    json_decref(old);
    if (key != NULL && strcmp(key, "session") == 0)
        return; /* agt_session_restore()'s own document */
    if (json_is_object(node)) {
        /* the keys first: setting a key back may move it in the object */
        json_t *keys = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(node, k, v) json_array_append_new(keys, json_string(k));
        for (size_t i = 0; i < json_array_size(keys); i++) {
            const char *kk = json_string_value(json_array_get(keys, i));
            fuzz_node(f, node, kk, 0, json_object_get(node, kk));
        }
        json_decref(keys);
    } else if (json_is_array(node)) {
        for (size_t i = 0; i < json_array_size(node); i++)
            fuzz_node(f, node, NULL, i, json_array_get(node, i));
    }
}

static void test_restore_fuzz(void)
{
    fixture fx;
    const char *lines[] = {AGENT_CALL("p1", "outer", "outer"), AGENT_CALL("n1", "inner", "inner"),
                           WRITE_CALL("w1", "h7.txt", "d"), NULL};
    setup(&fx, lines);
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "fuzz: paused at level 2");
    char *before = NULL;
    agt_agent_save(fx.a, &before);
    json_t *doc = json_loads(before, 0, NULL);
    if (getenv("B3_DUMP"))
        fprintf(stderr, "%s\n", before);
    fuzz f = {fx.a, doc, before, 0, 0, 0};
    /* the parts sub-agents added; the conversation is agent.c's older part */
    static const char *parts[] = {"subs", "waiting", "tasks"};
    for (size_t i = 0; i < 3; i++)
        if (json_object_get(doc, parts[i]) != NULL)
            fuzz_node(&f, doc, parts[i], 0, json_object_get(doc, parts[i]));
    t_diag("fuzz: %d restores", f.runs);
    T_CHECK(f.runs > 100, "fuzz: %d documents tried", f.runs);
    T_EQ_INT(f.bad_rc, 0, "fuzz: every restore is AGT_OK or AGT_EPARSE");
    T_EQ_INT(f.changed, 0, "fuzz: a refused restore changes nothing");
    json_decref(doc);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/w1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "fuzz: the pause still answers");
    agt_free(before);
    fx_rm(root, "h7.txt");
    teardown(&fx);
}

/* ---- background (HTTP model) ------------------------------------------ */

static void setup_http(fixture *fx, const char *scenario)
{
    memset(fx, 0, sizeof *fx);
    fx_registry_swarm_bg(&fx->reg);
    agt_session_new(&fx->s, fx->reg, root);
    fx_http_model(&fx->m, &srv, scenario);
    fx_agent_new(&fx->a, fx->s, fx->m);
    agt_agent_enable_subagents(fx->a);
    agt_agent_set_swarm_concurrency(fx->a, 3);
    agt_registry_freeze(fx->reg);
    fx_manual_subagents(fx->s);
    agt_session_add_rule(fx->s, AGT_RULE_ALLOW, "TaskOutput");
    snprintf(fx->replay, sizeof fx->replay, "%s/none", root);
}

static char *call(fixture *fx, const char *tool, const char *args)
{
    return fx_call_text(fx->s, tool, args, NULL);
}

typedef struct answerer {
    fixture *fx;
    pthread_barrier_t *go;
    const char *id;
    int decision, rc;
} answerer;

static void *answer_thread(void *p)
{
    answerer *w = p;
    pthread_barrier_wait(w->go);
    w->rc = agt_agent_answer(w->fx->a, w->id, w->decision, NULL);
    return NULL;
}

/* A background swarm's two waiting calls answered twice each from other
 * threads than the host's: each call is answered exactly once (the second
 * answer is ENOTFOUND), the swarm completes, APPROVE_SESSION lands in the
 * root session. */
static void test_concurrent_answers(void)
{
    fixture fx;
    setup_http(&fx, "appr-h1");
    agt_agent_add_user_message(fx.a, "swarm background");
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "conc: the root goes on");
    bool waiting = false;
    for (int k = 0; k < 5 && !waiting; k++) {
        fx_wait_poll(fx.s);
        char *ev = NULL;
        agt_session_tick(fx.s, -1, &ev);
        waiting = ev != NULL && strstr(ev, "approval_needed") != NULL;
        agt_free(ev);
    }
    T_CHECK(waiting, "conc: approval_needed");
    pthread_barrier_t go;
    answerer w[4] = {{&fx, &go, "agent-2/call_0", AGT_DECISION_APPROVE, -999},
                     {&fx, &go, "agent-2/call_0", AGT_DECISION_REJECT, -999},
                     {&fx, &go, "agent-3/call_0", AGT_DECISION_APPROVE_SESSION, -999},
                     {&fx, &go, "agent-3/call_0", AGT_DECISION_APPROVE_SESSION, -999}};
#ifdef AGT_HOSTILE_CONCURRENT
    /* outside agent.h's contract (one thread at a time): kept out of the
     * build, see the breaker report */
    pthread_barrier_init(&go, NULL, 4);
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, answer_thread, &w[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
#else
    /* one at a time, each from a thread of its own (agent.h: one thread at
     * a time, not necessarily the same one) */
    pthread_barrier_init(&go, NULL, 1);
    for (int i = 0; i < 4; i++) {
        pthread_t th;
        pthread_create(&th, NULL, answer_thread, &w[i]);
        pthread_join(th, NULL);
    }
#endif
    pthread_barrier_destroy(&go);
    for (int k = 0; k < 4; k += 2) {
        int ok = (w[k].rc == AGT_OK) + (w[k + 1].rc == AGT_OK);
        int nf = (w[k].rc == AGT_ENOTFOUND) + (w[k + 1].rc == AGT_ENOTFOUND);
        T_CHECK(ok == 1 && nf == 1, "conc: %s answered once (rc %d, %d)", w[k].id, w[k].rc,
                w[k + 1].rc);
    }
    char *r = call(&fx, "TaskOutput", "{\"task_id\":\"swarm-1\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "Status: completed") != NULL, "conc: the swarm completed");
    free(r);
    T_EQ_STR(fx_file_text(root, "z.txt"), "w", "conc: agent-3 wrote");
    /* APPROVE_SESSION from a background sub-agent: stored in the root
     * session (agent.h: the root and the sub-agents not in the background) */
    char *rules = NULL;
    agt_session_rules(fx.s, &rules);
    T_CHECK(rules != NULL && strstr(rules, "Write(./z.txt)") != NULL,
            "conc: the session rule is in the root session: %s", rules ? rules : "(null)");
    agt_free(rules);
    fx_rm(root, "y.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);
}

/* A background sub-agent waits while the root run is paused on a
 * foreground swarm: each answer reaches its own waiter (the background one
 * goes on by itself, the swarm after the resume). */
static void test_mixed_pause(void)
{
    fixture fx;
    setup_http(&fx, "appr-h2");
    agt_agent_add_user_message(fx.a, "swarm");
    T_EQ_INT(agt_agent_run(fx.a), AGT_EPENDING, "mixed: the root pauses on the swarm");
    /* the host starts a background sub-agent meanwhile (agent-4) */
    char *r =
        call(&fx, "Agent",
             "{\"prompt\":\"write m1.txt\",\"description\":\"bgm\",\"run_in_background\":true}");
    T_CHECK(r && strncmp(r, "Started sub-agent agent-4 in the background", 43) == 0,
            "mixed: bg started: %.43s", r ? r : "(null)");
    free(r);
    fx_wait_poll(fx.s);
    char *pj = NULL;
    agt_session_pending(fx.s, &pj);
    T_CHECK(pj && strstr(pj, "agent-2/call_0") && strstr(pj, "agent-3/call_0") &&
                strstr(pj, "agent-4/call_0"),
            "mixed: all three waiting calls listed: %s", pj ? pj : "(null)");
    agt_free(pj);
    T_EQ_INT(agt_agent_answer(fx.a, "agent-4/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "mixed: the background call answered while the root is paused");
    r = call(&fx, "TaskOutput", "{\"task_id\":\"agent-4\",\"block\":true,\"timeout\":20}");
    T_CHECK(strstr(r, "Status: completed") != NULL, "mixed: the background task completed");
    free(r);
    T_EQ_STR(fx_file_text(root, "m1.txt"), "w", "mixed: bg wrote");
    T_EQ_INT(agt_agent_resume(fx.a), AGT_ESTATE, "mixed: the swarm's calls still wait");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-2/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "mixed: agent-2");
    T_EQ_INT(agt_agent_answer(fx.a, "agent-3/call_0", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "mixed: agent-3");
    int rc = agt_agent_resume(fx.a);
    T_EQ_INT(rc, AGT_OK, "mixed: resumed to the end (%s)", rc ? agt_error_message() : "");
    T_EQ_STR(fx_file_text(root, "y.txt"), "w", "mixed: y written");
    T_EQ_STR(fx_file_text(root, "z.txt"), "w", "mixed: z written");
    fx_rm(root, "m1.txt");
    fx_rm(root, "y.txt");
    fx_rm(root, "z.txt");
    teardown(&fx);
}

int main(int argc, char **argv)
{
    if (fx_workspace_make(root, sizeof root, "/tmp/agt-subh-XXXXXX") != 0) {
        T_CHECK(0, "setup: temp dir");
        return t_done();
    }
    test_bad_ids();
    test_slash_in_id();
    test_root_call();
    test_garbage_approver();
    test_session_rule_new_sub();
    test_restore_elsewhere();
    test_many_subs();
    test_restore_fuzz();
    if (argc >= 3) {
        fx_no_proxy();
        if (fake_server_start(&srv, argv[1], argv[2]) != 0)
            T_CHECK(0, "setup: server");
        else {
            test_concurrent_answers();
            test_mixed_pause();
            fake_server_stop(&srv);
        }
    }
    fx_workspace_remove(root);
    return t_done();
}
