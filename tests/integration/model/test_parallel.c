/*
 * Concurrent read-only tool calls of one agent turn (issue #7), with a host
 * model that answers from a script:
 * - concurrency proved without timing: barrier_server.py holds every
 *   FetchURL request until N are open at once (a TIMEOUT page after 20 s makes
 *   the test fail instead of hang) and reports the peak of open requests:
 *   3 calls → peak 3; agt_agent_set_parallel_tools(a, 1) → peak 1; bound 2
 *   with 4 calls → peak 2;
 * - a mixed turn Read, Grep, Write, Read: the Write is a barrier (the last
 *   Read sees the written text), results in call order, started/finished
 *   events and post-hooks in call order, the same conversation as with 1;
 * - a call waiting for approval inside a run of reads: the others run, the
 *   run pauses, answer + resume give the sequential run's conversation;
 * - a pre-hook refusing one call of a run;
 * - Read, Read, then Edit in the next turn;
 * - agt_agent_set_parallel_tools argument checks.
 */
#include <jansson.h>
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

/* ---- scripted host model ------------------------------------------------ */

typedef struct script {
    const char *turns[4]; /* canonical responses; then "done" */
    int next;
} script;

static int model_fn(agt_model_reply *reply, const char *request_json, void *payload)
{
    (void)request_json;
    script *sc = payload;
    const char *r = sc->next < 4 ? sc->turns[sc->next] : NULL;
    sc->next++;
    if (r == NULL)
        r = "{\"content\":\"done\",\"finish_reason\":\"stop\"}";
    return agt_model_reply_set(reply, r, strlen(r));
}

/* ---- events and hooks ----------------------------------------------------- */

typedef struct trace {
    char events[1024]; /* "S:id F:id A:id ..." */
    char post[512];    /* call ids seen by the post-hook */
    const char *deny;  /* call id the pre-hook blocks */
} trace;

static void add_word(char *buf, size_t cap, const char *w)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%s", n ? " " : "", w);
}

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    trace *t = payload;
    const char *k = kind == AGT_AGENT_TOOL_STARTED    ? "S"
                    : kind == AGT_AGENT_TOOL_FINISHED ? "F"
                    : kind == AGT_AGENT_APPROVAL      ? "A"
                                                      : NULL;
    if (k == NULL)
        return 0;
    json_t *j = json_loadb(data, len, 0, NULL);
    char w[128];
    snprintf(w, sizeof w, "%s:%s", k, json_string_value(json_object_get(j, "id")));
    json_decref(j);
    add_word(t->events, sizeof t->events, w);
    return 0;
}

static int pre_hook(agt_hook *h, void *payload)
{
    trace *t = payload;
    if (t->deny && strcmp(agt_hook_call_id(h), t->deny) == 0)
        return agt_hook_deny(h, "not this one");
    return AGT_OK;
}

static int post_hook(agt_hook *h, void *payload)
{
    trace *t = payload;
    add_word(t->post, sizeof t->post, agt_hook_call_id(h));
    return AGT_OK;
}

/* ---- fixture ------------------------------------------------------------- */

typedef struct fixture {
    char root[64];
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    script sc;
    trace tr;
} fixture;

static char *read_file(const char *root, const char *name)
{
    char p[128];
    snprintf(p, sizeof p, "%s/%s", root, name);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 4096);
    size_t n = buf ? fread(buf, 1, 4095, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

/* A workspace with a.txt "old", b.txt "bee", c.txt "sea" and an agent whose
 * model answers the turns given; max: agt_agent_set_parallel_tools. */
static int fixture_open(fixture *fx, int mode, int max, const char *t0, const char *t1)
{
    memset(fx, 0, sizeof *fx);
    if (fx_workspace_make(fx->root, sizeof fx->root, "/tmp/agt-par-XXXXXX") != 0)
        return -1;
    fx_write_file(fx->root, "a.txt", "old\n");
    fx_write_file(fx->root, "b.txt", "bee\n");
    fx_write_file(fx->root, "c.txt", "sea\n");
    fx->sc.turns[0] = t0;
    fx->sc.turns[1] = t1;
    int rc = agt_registry_new(&fx->reg);
    if (rc == AGT_OK)
        rc = agt_registry_load_builtin(fx->reg, "chat");
    if (rc == AGT_OK)
        rc = agt_session_new(&fx->s, fx->reg, fx->root);
    if (rc == AGT_OK)
        rc = agt_session_set_mode(fx->s, mode);
    if (rc == AGT_OK) /* FetchURL goes to the test server on 127.0.0.1 */
        rc = agt_session_set_fetch_private(fx->s, 1);
    if (rc == AGT_OK)
        rc = agt_session_set_pre_hook(fx->s, pre_hook, &fx->tr);
    if (rc == AGT_OK)
        rc = agt_session_set_post_hook(fx->s, post_hook, &fx->tr);
    if (rc == AGT_OK)
        rc = agt_model_new_host(&fx->m, model_fn, &fx->sc);
    if (rc == AGT_OK)
        rc = agt_agent_new(&fx->a, fx->s, fx->m);
    if (rc == AGT_OK)
        rc = agt_agent_set_event_callback(fx->a, on_event, &fx->tr);
    if (rc == AGT_OK)
        rc = agt_agent_set_parallel_tools(fx->a, max);
    if (rc == AGT_OK)
        rc = agt_agent_add_user_message(fx->a, "go");
    return rc;
}

static void fixture_close(fixture *fx)
{
    fx_free(fx->a, fx->m, fx->s, fx->reg);
    fx_workspace_remove(fx->root);
}

/* The tool messages of the conversation: [[id, content, is_error], ...]
 * with the workspace path replaced by ROOT (so runs in two workspaces
 * compare). Caller frees. */
static char *tool_messages(const fixture *fx)
{
    char *all = NULL;
    if (agt_agent_messages(fx->a, &all) != AGT_OK)
        return NULL;
    json_t *msgs = json_loads(all, 0, NULL);
    agt_free(all);
    json_t *out = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (strcmp(json_string_value(json_object_get(m, "role")), "tool") != 0)
            continue;
        json_array_append_new(out, json_pack("[s,s,b]",
                                             json_string_value(json_object_get(m, "tool_call_id")),
                                             json_string_value(json_object_get(m, "content")),
                                             json_is_true(json_object_get(m, "is_error"))));
    }
    char *text = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    json_decref(msgs);
    /* replace the workspace path */
    for (char *p; text && (p = strstr(text, fx->root)) != NULL;) {
        size_t rl = strlen(fx->root);
        memcpy(p, "ROOT", 4);
        memmove(p + 4, p + rl, strlen(p + rl) + 1);
    }
    return text;
}

/* The content of the tool message of call id (malloc'd), or NULL. */
static char *tool_text(const fixture *fx, const char *id, int *is_error)
{
    char *all = NULL;
    if (agt_agent_messages(fx->a, &all) != AGT_OK)
        return NULL;
    json_t *msgs = json_loads(all, 0, NULL);
    agt_free(all);
    char *r = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        const char *tid = json_string_value(json_object_get(m, "tool_call_id"));
        if (tid && strcmp(tid, id) == 0) {
            r = strdup(json_string_value(json_object_get(m, "content")));
            if (is_error)
                *is_error = json_is_true(json_object_get(m, "is_error"));
        }
    }
    json_decref(msgs);
    return r;
}

static int starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- FetchURL concurrency --------------------------------------------- */

static int peak(void)
{
    char *buf = fake_server_get(&srv, "/peak");
    int v = buf ? atoi(buf) : -1;
    free(buf);
    return v;
}

/* A turn of n FetchURL calls f1..fn to /<kind>/<num>/<tag i>. */
static char *fetch_turn(int n, const char *kind, int num)
{
    json_t *calls = json_array();
    for (int i = 1; i <= n; i++) {
        char id[16], args[160];
        snprintf(id, sizeof id, "f%d", i);
        snprintf(args, sizeof args, "{\"url\":\"http://127.0.0.1:%d/%s/%d/t%d\"}", srv.port, kind,
                 num, i);
        json_array_append_new(
            calls, json_pack("{s:s,s:s,s:s}", "id", id, "name", "FetchURL", "arguments", args));
    }
    json_t *r = json_pack("{s:o,s:s}", "tool_calls", calls, "finish_reason", "tool_calls");
    char *t = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    return t;
}

/* The FetchURL result for /<kind>/<num>/t<i>: the server's page is
 * "page t<i>" (6 bytes + digits), text/plain; charset=utf-8. */
static void want_fetch(char *buf, size_t cap, const char *kind, int num, int i)
{
    char body[32];
    snprintf(body, sizeof body, "page t%d", i);
    snprintf(buf, cap,
             "Fetched http://127.0.0.1:%d/%s/%d/t%d (HTTP 200, text/plain; charset=utf-8, %zu "
             "bytes): text passed through.\n\n%s",
             srv.port, kind, num, i, strlen(body), body);
}

static void test_fetch(int calls, int max, const char *kind, int num, int want_peak,
                       const char *want_events)
{
    fixture fx;
    char *turn = fetch_turn(calls, kind, num);
    if (fixture_open(&fx, AGT_MODE_YOLO, max, turn, NULL) != AGT_OK) {
        T_CHECK(0, "fetch fixture: %s", agt_error_message());
        free(turn);
        return;
    }
    peak(); /* reset */
    int rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_OK, "%d FetchURL calls, bound %d: run", calls, max);
    T_EQ_INT(peak(), want_peak, "%d FetchURL calls, bound %d: peak of open requests", calls, max);
    for (int i = 1; i <= calls; i++) {
        char id[16], want[512];
        snprintf(id, sizeof id, "f%d", i);
        want_fetch(want, sizeof want, kind, num, i);
        int err = -1;
        char *got = tool_text(&fx, id, &err);
        T_EQ_STR(got, want, "bound %d: result of %s in its place", max, id);
        T_EQ_INT(err, 0, "bound %d: %s not an error", max, id);
        free(got);
    }
    T_EQ_STR(fx.tr.events, want_events, "bound %d: started events first, finished in call order",
             max);
    fixture_close(&fx);
    free(turn);
}

/* ---- mixed turn: Read, Grep, Write, Read ------------------------------- */

static const char *MIXED =
    "{\"tool_calls\":["
    "{\"id\":\"r1\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"},"
    "{\"id\":\"g1\",\"name\":\"Grep\",\"arguments\":\"{\\\"pattern\\\":\\\"old\\\"}\"},"
    "{\"id\":\"w1\",\"name\":\"Write\",\"arguments\":"
    "\"{\\\"path\\\":\\\"a.txt\\\",\\\"content\\\":\\\"new\\\\n\\\"}\"},"
    "{\"id\":\"r2\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"}],"
    "\"finish_reason\":\"tool_calls\"}";

static char *run_mixed(int max, trace *tr_out)
{
    fixture fx;
    if (fixture_open(&fx, AGT_MODE_YOLO, max, MIXED, NULL) != AGT_OK) {
        T_CHECK(0, "mixed fixture: %s", agt_error_message());
        return NULL;
    }
    int rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_OK, "mixed turn, bound %d: run", max);
    char *r1 = tool_text(&fx, "r1", NULL);
    char *r2 = tool_text(&fx, "r2", NULL);
    char *g1 = tool_text(&fx, "g1", NULL);
    /* TOOLS.md: Read prints N<TAB>text, then a note */
    T_CHECK(starts_with(r1, "1\told\n\nRead 1 line (1-1) of 1;"),
            "bound %d: first Read sees the old text", max);
    T_CHECK(starts_with(r2, "1\tnew\n\nRead 1 line (1-1) of 1;"),
            "bound %d: Read after the Write (a barrier) sees the new text", max);
    T_CHECK(g1 && strstr(g1, "a.txt") != NULL && strstr(g1, "b.txt") == NULL,
            "bound %d: Grep ran before the Write (finds old in a.txt only)", max);
    char *file = read_file(fx.root, "a.txt");
    T_EQ_STR(file, "new\n", "bound %d: the Write wrote", max);
    free(file);
    free(r1);
    free(r2);
    free(g1);
    *tr_out = fx.tr;
    char *msgs = tool_messages(&fx);
    fixture_close(&fx);
    return msgs;
}

static void test_mixed(void)
{
    trace par, seq;
    char *p = run_mixed(4, &par);
    char *s = run_mixed(1, &seq);
    T_EQ_STR(par.events, "S:r1 S:g1 F:r1 F:g1 S:w1 F:w1 S:r2 F:r2",
             "mixed: events of the parallel run (Read+Grep together, Write and Read alone)");
    T_EQ_STR(seq.events, "S:r1 F:r1 S:g1 F:g1 S:w1 F:w1 S:r2 F:r2",
             "mixed: events of the sequential run");
    T_EQ_STR(par.post, "r1 g1 w1 r2", "mixed: post-hooks in call order (parallel)");
    T_EQ_STR(seq.post, "r1 g1 w1 r2", "mixed: post-hooks in call order (sequential)");
    T_CHECK(p && s && strcmp(p, s) == 0, "mixed: conversation equals the sequential run's");
    if (p && s && strcmp(p, s) != 0)
        t_diag("parallel %s\n# sequential %s", p, s);
    T_CHECK(p && strstr(p, "[\"r1\"") < strstr(p, "[\"g1\"") &&
                strstr(p, "[\"g1\"") < strstr(p, "[\"w1\"") &&
                strstr(p, "[\"w1\"") < strstr(p, "[\"r2\""),
            "mixed: results in call order");
    free(p);
    free(s);
}

/* ---- approval inside a run ----------------------------------------------- */

static const char *THREE_READS =
    "{\"tool_calls\":["
    "{\"id\":\"p1\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"},"
    "{\"id\":\"p2\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"b.txt\\\"}\"},"
    "{\"id\":\"p3\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"c.txt\\\"}\"}],"
    "\"finish_reason\":\"tool_calls\"}";

static char *run_approval(int max, trace *tr_out)
{
    fixture fx;
    if (fixture_open(&fx, AGT_MODE_MANUAL, max, THREE_READS, NULL) != AGT_OK ||
        agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(b.txt)") != AGT_OK) {
        T_CHECK(0, "approval fixture: %s", agt_error_message());
        return NULL;
    }
    int rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_EPENDING, "approval, bound %d: the run pauses", max);
    char *pending = NULL;
    agt_session_pending(fx.s, &pending);
    T_CHECK(pending && strstr(pending, "\"p2\"") && !strstr(pending, "\"p1\"") &&
                !strstr(pending, "\"p3\""),
            "approval, bound %d: only p2 waits", max);
    agt_free(pending);
    T_EQ_INT(agt_agent_answer(fx.a, "p2", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "approval, bound %d: answer", max);
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "approval, bound %d: resume ends the run", max);
    char *p2 = tool_text(&fx, "p2", NULL);
    T_CHECK(starts_with(p2, "1\tbee\n"), "approval, bound %d: p2 ran after approval", max);
    free(p2);
    *tr_out = fx.tr;
    char *msgs = tool_messages(&fx);
    fixture_close(&fx);
    return msgs;
}

static void test_approval(void)
{
    trace par, seq;
    char *p = run_approval(4, &par);
    char *s = run_approval(1, &seq);
    T_EQ_STR(par.events, "S:p1 S:p2 A:p2 S:p3 F:p1 F:p3 F:p2",
             "approval: p1 and p3 ran together, p2 after the answer");
    T_EQ_STR(seq.events, "S:p1 F:p1 S:p2 A:p2 S:p3 F:p3 F:p2", "approval: sequential events");
    T_EQ_STR(par.post, "p1 p3 p2", "approval: post-hooks (p2 when it ran)");
    T_CHECK(p && s && strcmp(p, s) == 0, "approval: conversation equals the sequential run's");
    if (p && s && strcmp(p, s) != 0)
        t_diag("parallel %s\n# sequential %s", p, s);
    free(p);
    free(s);
}

/* ---- a pre-hook refusing one call of a run ----------------------------- */

static void test_pre_hook(void)
{
    char *msgs[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        int max = k == 0 ? 4 : 1;
        fixture fx;
        if (fixture_open(&fx, AGT_MODE_YOLO, max, THREE_READS, NULL) != AGT_OK) {
            T_CHECK(0, "pre-hook fixture: %s", agt_error_message());
            return;
        }
        fx.tr.deny = "p2";
        T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "pre-hook, bound %d: run", max);
        int err = 0;
        char *p2 = tool_text(&fx, "p2", &err);
        T_EQ_STR(p2, "A pre-tool-use hook blocked this Read call: not this one",
                 "pre-hook, bound %d: p2 refused with the hook's reason", max);
        T_EQ_INT(err, 1, "pre-hook, bound %d: p2 is an error", max);
        free(p2);
        char *p3 = tool_text(&fx, "p3", NULL);
        T_CHECK(starts_with(p3, "1\tsea\n"), "pre-hook, bound %d: p3 ran", max);
        free(p3);
        if (k == 0)
            T_EQ_STR(fx.tr.events, "S:p1 S:p2 S:p3 F:p1 F:p2 F:p3",
                     "pre-hook: events in call order");
        msgs[k] = tool_messages(&fx);
        fixture_close(&fx);
    }
    T_CHECK(msgs[0] && msgs[1] && strcmp(msgs[0], msgs[1]) == 0,
            "pre-hook: conversation equals the sequential run's");
    free(msgs[0]);
    free(msgs[1]);
}

/* ---- every parallel-safe kind in one run --------------------------------- */

static const char *KINDS =
    "{\"tool_calls\":["
    "{\"id\":\"k1\",\"name\":\"Glob\",\"arguments\":\"{\\\"pattern\\\":\\\"*.txt\\\"}\"},"
    "{\"id\":\"k2\",\"name\":\"Grep\",\"arguments\":\"{\\\"pattern\\\":\\\"e\\\"}\"},"
    "{\"id\":\"k3\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"c.txt\\\"}\"},"
    "{\"id\":\"k4\",\"name\":\"ReadMediaFile\",\"arguments\":"
    "\"{\\\"path\\\":\\\"b.txt\\\"}\"},"
    "{\"id\":\"k5\",\"name\":\"Grep\",\"arguments\":"
    "\"{\\\"pattern\\\":\\\"(\\\"}\"}],"
    "\"finish_reason\":\"tool_calls\"}";

static void test_kinds(void)
{
    char *msgs[2] = {NULL, NULL};
    char events[2][1024];
    for (int k = 0; k < 2; k++) {
        int max = k == 0 ? 8 : 1;
        fixture fx;
        if (fixture_open(&fx, AGT_MODE_YOLO, max, KINDS, NULL) != AGT_OK) {
            T_CHECK(0, "kinds fixture: %s", agt_error_message());
            return;
        }
        T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "kinds, bound %d: run", max);
        int err = 0;
        char *k5 = tool_text(&fx, "k5", &err);
        T_EQ_INT(err, 1, "kinds, bound %d: the bad regex is an error result", max);
        free(k5);
        char *k1 = tool_text(&fx, "k1", NULL);
        T_CHECK(k1 && strstr(k1, "a.txt") && strstr(k1, "b.txt") && strstr(k1, "c.txt"),
                "kinds, bound %d: Glob lists the three files", max);
        free(k1);
        snprintf(events[k], sizeof events[k], "%s", fx.tr.events);
        msgs[k] = tool_messages(&fx);
        fixture_close(&fx);
    }
    T_EQ_STR(events[0], "S:k1 S:k2 S:k3 S:k4 S:k5 F:k1 F:k2 F:k3 F:k4 F:k5",
             "kinds: one run of five");
    T_CHECK(msgs[0] && msgs[1] && strcmp(msgs[0], msgs[1]) == 0,
            "kinds: conversation equals the sequential run's");
    free(msgs[0]);
    free(msgs[1]);
}

/* ---- Read, Read, then Edit in the next turn ------------------------------ */

static void test_read_then_edit(void)
{
    fixture fx;
    const char *t0 =
        "{\"tool_calls\":["
        "{\"id\":\"e1\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"a.txt\\\"}\"},"
        "{\"id\":\"e2\",\"name\":\"Read\",\"arguments\":\"{\\\"path\\\":\\\"b.txt\\\"}\"}],"
        "\"finish_reason\":\"tool_calls\"}";
    const char *t1 = "{\"tool_calls\":["
                     "{\"id\":\"e3\",\"name\":\"Edit\",\"arguments\":"
                     "\"{\\\"path\\\":\\\"a.txt\\\",\\\"old_string\\\":\\\"old\\\","
                     "\\\"new_string\\\":\\\"edited\\\"}\"}],"
                     "\"finish_reason\":\"tool_calls\"}";
    if (fixture_open(&fx, AGT_MODE_YOLO, 4, t0, t1) != AGT_OK) {
        T_CHECK(0, "edit fixture: %s", agt_error_message());
        return;
    }
    T_EQ_INT(agt_agent_run(fx.a), AGT_OK, "read then edit: run");
    int err = -1;
    char *e3 = tool_text(&fx, "e3", &err);
    T_EQ_INT(err, 0, "read then edit: the Edit succeeded");
    T_CHECK(e3 != NULL && strstr(e3, "a.txt") != NULL, "read then edit: the Edit names the file");
    free(e3);
    char *file = read_file(fx.root, "a.txt");
    T_EQ_STR(file, "edited\n", "read then edit: file edited");
    free(file);
    T_EQ_INT(fx.sc.next, 3, "read then edit: three model calls");
    fixture_close(&fx);
}

static void test_setter(void)
{
    fixture fx;
    if (fixture_open(&fx, AGT_MODE_YOLO, 4, NULL, NULL) != AGT_OK) {
        T_CHECK(0, "setter fixture");
        return;
    }
    T_EQ_INT(agt_agent_set_parallel_tools(NULL, 2), AGT_EINVAL, "setter: NULL agent");
    T_EQ_INT(agt_agent_set_parallel_tools(fx.a, 0), AGT_EINVAL, "setter: 0");
    T_EQ_INT(agt_agent_set_parallel_tools(fx.a, 65), AGT_EINVAL, "setter: 65");
    T_CHECK(strstr(agt_error_message(), "1..64") != NULL, "setter: message names the range");
    T_EQ_INT(agt_agent_set_parallel_tools(fx.a, 64), AGT_OK, "setter: 64");
    T_EQ_INT(agt_agent_set_parallel_tools(fx.a, 1), AGT_OK, "setter: 1");
    fixture_close(&fx);
}

int main(int argc, char **argv)
{
    int status;
    if (!fx_begin(argc, argv, "test-parallel", NULL, 0, NULL, &srv, "barrier server started",
                  &status))
        return status;
    test_fetch(3, 4, "wait", 3, 3, "S:f1 S:f2 S:f3 F:f1 F:f2 F:f3");
    test_fetch(3, 1, "hold", 150, 1, "S:f1 F:f1 S:f2 F:f2 S:f3 F:f3");
    test_fetch(4, 2, "wait", 2, 2, "S:f1 S:f2 S:f3 S:f4 F:f1 F:f2 F:f3 F:f4");
    test_mixed();
    test_approval();
    test_pre_hook();
    test_kinds();
    test_read_then_edit();
    test_setter();
    return fx_end(&srv, NULL);
}
