/*
 * Concurrent read-only tool calls of one agent turn, attacked as a host and
 * as a model would (a host model answering from a script; every
 * conversation is compared with the same run at bound 1, byte for byte):
 * - a host provider set for Read: never parallel, runs on the host's thread
 *   only (pthread_self in the provider), one at a time;
 * - a host tools.json entry named Grep (no built-in provider): not grouped;
 * - a pre-hook that rewrites one member's arguments and denies another, a
 *   post-hook that appends to one member's result;
 * - invalid arguments for one member (schema error, the others run);
 * - 64 Read calls in one turn at bounds 64 and 2;
 * - agt_agent_cancel from another thread while a group runs: the group
 *   finishes, the run returns AGT_ECANCELLED with every call answered;
 * - agt_agent_free right after a run paused inside a group.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "agent_fixture.h"
#include "harness.h"

/* ---- scripted host model ------------------------------------------------ */

typedef struct script {
    char *turn0; /* the first answer (owned); then "done" */
    int next;
} script;

static int model_fn(agt_model_reply *reply, const char *request_json, void *payload)
{
    (void)request_json;
    script *sc = payload;
    const char *r = sc->next == 0 ? sc->turn0 : "{\"content\":\"done\",\"finish_reason\":\"stop\"}";
    sc->next++;
    return agt_model_reply_set(reply, r, strlen(r));
}

/* A turn of calls: names[i] with args[i] (JSON object text), ids c0, c1, ... */
static char *turn_of(size_t n, const char *const *names, const char *const *args)
{
    json_t *calls = json_array();
    for (size_t i = 0; i < n; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%zu", i);
        json_array_append_new(
            calls, json_pack("{s:s,s:s,s:s}", "id", id, "name", names[i], "arguments", args[i]));
    }
    json_t *t = json_pack("{s:o}", "tool_calls", calls);
    char *s = json_dumps(t, JSON_COMPACT);
    json_decref(t);
    return s;
}

/* ---- hooks, providers, events ---------------------------------------------- */

typedef struct hooks {
    const char *rewrite_id; /* pre-hook: rewrites this call's path to b.txt */
    const char *deny_id;    /* pre-hook: denies this call */
    const char *append_id;  /* post-hook: appends to this call's result */
    const char *swap_id;    /* pre-hook: sets the host Read provider at this call */
    const char *remove_id;  /* pre-hook: removes Read from the registry at this call */
    agt_registry *reg;
    const char *root;
} hooks;

static int host_read(agt_call *call, void *payload);

static int pre_hook(agt_hook *h, void *payload)
{
    hooks *k = payload;
    if (k->deny_id && strcmp(agt_hook_call_id(h), k->deny_id) == 0)
        return agt_hook_deny(h, "no");
    if (k->remove_id && strcmp(agt_hook_call_id(h), k->remove_id) == 0)
        return agt_registry_remove(k->reg, "Read");
    if (k->swap_id && strcmp(agt_hook_call_id(h), k->swap_id) == 0)
        return agt_registry_set_provider(k->reg, "Read", host_read, NULL);
    if (k->rewrite_id && strcmp(agt_hook_call_id(h), k->rewrite_id) == 0) {
        char j[256];
        snprintf(j, sizeof j, "{\"path\":\"%s/b.txt\"}", k->root);
        return agt_hook_rewrite(h, j);
    }
    return AGT_OK;
}

static int post_hook(agt_hook *h, void *payload)
{
    hooks *k = payload;
    if (k->append_id && strcmp(agt_hook_call_id(h), k->append_id) == 0)
        return agt_hook_append(h, "POST");
    return AGT_OK;
}

static pthread_t host_thread;
static atomic_int in_flight, peak, off_thread, host_calls;

static int host_read(agt_call *call, void *payload)
{
    (void)payload;
    int now = atomic_fetch_add(&in_flight, 1) + 1;
    if (now > atomic_load(&peak))
        atomic_store(&peak, now);
    if (!pthread_equal(pthread_self(), host_thread))
        atomic_fetch_add(&off_thread, 1);
    atomic_fetch_add(&host_calls, 1);
    usleep(2000); /* a window for an overlapping call to show */
    char t[256];
    snprintf(t, sizeof t, "host read %s", agt_call_args(call));
    atomic_fetch_sub(&in_flight, 1);
    return agt_call_set_text(call, t);
}

typedef struct events {
    agt_agent *a;
    int cancel_at_started; /* cancel (from a new thread) at this many started events */
    int started;
} events;

static void *cancel_main(void *arg)
{
    agt_agent_cancel(arg);
    return NULL;
}

static int on_event(int kind, const char *data, size_t len, void *payload)
{
    (void)data;
    (void)len;
    events *e = payload;
    if (kind == AGT_AGENT_TOOL_STARTED && ++e->started == e->cancel_at_started) {
        pthread_t th;
        if (pthread_create(&th, NULL, cancel_main, e->a) == 0)
            pthread_join(th, NULL);
    }
    return 0;
}

/* ---- fixture ------------------------------------------------------------- */

typedef struct fixture {
    char root[64];
    agt_registry *reg;
    agt_session *s;
    agt_model *m;
    agt_agent *a;
    script sc;
    hooks hk;
    events ev;
} fixture;

enum { HOST_READ = 1, HOST_GREP = 2 };

static const char *GREP_ENTRY =
    "{\"name\":\"Grep\",\"access\":\"host\",\"definition\":{\"name\":\"Grep\",\"description\":"
    "\"host grep\",\"parameters\":{\"type\":\"object\",\"properties\":{\"pattern\":{\"type\":"
    "\"string\"}},\"required\":[\"pattern\"]}}}";

static int host_grep(agt_call *call, void *payload)
{
    (void)payload;
    if (!pthread_equal(pthread_self(), host_thread))
        atomic_fetch_add(&off_thread, 1);
    char t[256];
    snprintf(t, sizeof t, "host grep %s", agt_call_args(call));
    return agt_call_set_text(call, t);
}

/* A workspace with a.txt "alpha", b.txt "bee" and f0..f63.txt, and an agent
 * whose model first answers turn0 (taken). */
static int fixture_open(fixture *fx, int mode, int max, int flags, char *turn0)
{
    memset(fx, 0, sizeof *fx);
    fx->sc.turn0 = turn0;
    if (fx_workspace_make(fx->root, sizeof fx->root, "/tmp/agt-parh-XXXXXX") != 0)
        return -1;
    fx_write_file(fx->root, "a.txt", "alpha\n");
    fx_write_file(fx->root, "b.txt", "bee\n");
    for (int i = 0; i < 64; i++) {
        char n[32], t[32];
        snprintf(n, sizeof n, "f%d.txt", i);
        snprintf(t, sizeof t, "file %d\nline two\n", i);
        fx_write_file(fx->root, n, t);
    }
    fx->hk.root = fx->root;
    int rc = agt_registry_new(&fx->reg);
    if (rc == AGT_OK)
        rc = agt_registry_load_builtin(fx->reg, "chat");
    if (rc == AGT_OK && (flags & HOST_READ))
        rc = agt_registry_set_provider(fx->reg, "Read", host_read, NULL);
    if (rc == AGT_OK && (flags & HOST_GREP)) {
        agt_registry_remove(fx->reg, "Grep");
        rc = agt_registry_add_json(fx->reg, GREP_ENTRY, strlen(GREP_ENTRY));
        if (rc == AGT_OK)
            rc = agt_registry_set_provider(fx->reg, "Grep", host_grep, NULL);
    }
    fx->hk.reg = fx->reg;
    if (rc == AGT_OK)
        rc = agt_session_new(&fx->s, fx->reg, fx->root);
    if (rc == AGT_OK)
        rc = agt_session_set_mode(fx->s, mode);
    if (rc == AGT_OK) /* FetchURL goes to the test server on 127.0.0.1 */
        rc = agt_session_set_fetch_private(fx->s, 1);
    if (rc == AGT_OK)
        rc = agt_session_set_pre_hook(fx->s, pre_hook, &fx->hk);
    if (rc == AGT_OK)
        rc = agt_session_set_post_hook(fx->s, post_hook, &fx->hk);
    if (rc == AGT_OK)
        rc = agt_model_new_host(&fx->m, model_fn, &fx->sc);
    if (rc == AGT_OK)
        rc = agt_agent_new(&fx->a, fx->s, fx->m);
    fx->ev.a = fx->a;
    if (rc == AGT_OK)
        rc = agt_agent_set_event_callback(fx->a, on_event, &fx->ev);
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
    free(fx->sc.turn0);
}

/* The whole conversation with the workspace path replaced by ROOT. */
static char *conversation(const fixture *fx)
{
    char *all = NULL;
    if (agt_agent_messages(fx->a, &all) != AGT_OK)
        return NULL;
    size_t rl = strlen(fx->root);
    char *out = malloc(strlen(all) + 1);
    char *o = out;
    for (const char *p = all; *p;) {
        if (strncmp(p, fx->root, rl) == 0) {
            memcpy(o, "ROOT", 4);
            o += 4;
            p += rl;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    agt_free(all);
    return out;
}

/* The content of tool message `id` (workspace path as ROOT); caller frees. */
static char *tool_text(const char *conv, const char *id, int *is_error)
{
    json_t *msgs = json_loads(conv, 0, NULL);
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

/* Runs the same turn at bound `max` and at bound 1; returns the conversation
 * at `max` (caller frees) and checks the two are byte-identical. */
static char *run_both(const char *what, int mode, int max, int flags, size_t n,
                      const char *const *names, const char *const *args, int *rc_out)
{
    char *conv[2] = {NULL, NULL};
    int bounds[2] = {max, 1};
    for (int k = 0; k < 2; k++) {
        fixture fx;
        /* each fixture has its own root: args naming ROOT are rewritten */
        if (fixture_open(&fx, mode, bounds[k], flags, NULL) != AGT_OK) {
            T_CHECK(0, "%s: fixture", what);
            fixture_close(&fx);
            return NULL;
        }
        const char *real[128];
        char *owned[128];
        for (size_t i = 0; i < n; i++) {
            const char *p = strstr(args[i], "ROOT");
            owned[i] = NULL;
            if (p) {
                size_t need = strlen(args[i]) + strlen(fx.root) + 1;
                owned[i] = malloc(need);
                snprintf(owned[i], need, "%.*s%s%s", (int)(p - args[i]), args[i], fx.root, p + 4);
            }
            real[i] = owned[i] ? owned[i] : args[i];
        }
        fx.sc.turn0 = turn_of(n, names, real);
        for (size_t i = 0; i < n; i++)
            free(owned[i]);
        int rc = agt_agent_run(fx.a);
        if (k == 0 && rc_out)
            *rc_out = rc;
        conv[k] = conversation(&fx);
        fixture_close(&fx);
    }
    T_CHECK(conv[0] && conv[1] && strcmp(conv[0], conv[1]) == 0,
            "%s: the conversation at bound %d is byte-identical to bound 1", what, max);
    free(conv[1]);
    return conv[0];
}

/* ---- the attacks ---------------------------------------------------------- */

static void test_host_read_provider(void)
{
    const char *names[] = {"Read", "Read", "Read", "Read"};
    const char *args[] = {"{\"path\":\"ROOT/a.txt\"}", "{\"path\":\"ROOT/b.txt\"}",
                          "{\"path\":\"ROOT/f1.txt\"}", "{\"path\":\"ROOT/f2.txt\"}"};
    atomic_store(&peak, 0);
    atomic_store(&off_thread, 0);
    atomic_store(&host_calls, 0);
    int rc = -1;
    char *c = run_both("host Read provider", AGT_MODE_AUTO, 4, HOST_READ, 4, names, args, &rc);
    T_EQ_INT(rc, AGT_OK, "rc, AGT_OK");
    T_EQ_INT(atomic_load(&host_calls), 8, "atomic_load(&host_calls), 8"); /* 4 calls, two runs */
    T_EQ_INT(atomic_load(&peak), 1, "atomic_load(&peak), 1");
    T_EQ_INT(atomic_load(&off_thread), 0, "atomic_load(&off_thread), 0");
    char *t = c ? tool_text(c, "c1", NULL) : NULL;
    T_EQ_STR(t, "host read {\"path\":\"ROOT/b.txt\"}", "the tool result text");
    free(t);
    free(c);
}

static void test_host_grep_entry(void)
{
    const char *names[] = {"Read", "Grep", "Grep", "Read"};
    const char *args[] = {"{\"path\":\"ROOT/a.txt\"}", "{\"pattern\":\"x\"}", "{\"pattern\":\"y\"}",
                          "{\"path\":\"ROOT/b.txt\"}"};
    atomic_store(&off_thread, 0);
    char *c = run_both("host tools.json Grep", AGT_MODE_AUTO, 4, HOST_GREP, 4, names, args, NULL);
    T_EQ_INT(atomic_load(&off_thread), 0, "atomic_load(&off_thread), 0");
    char *t = c ? tool_text(c, "c2", NULL) : NULL;
    T_EQ_STR(t, "host grep {\"pattern\":\"y\"}", "the tool result text");
    free(t);
    t = c ? tool_text(c, "c3", NULL) : NULL;
    T_EQ_STR(t, "1\tbee\n\nRead 1 line (1-1) of 1; reached the end of the file.",
             "the tool result text");
    free(t);
    free(c);
}

static void test_hooks_in_group(void)
{
    const char *names[] = {"Read", "Read", "Read", "Read"};
    const char *files[] = {"a.txt", "a.txt", "a.txt", "f3.txt"};
    char *conv[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        fixture fx;
        int rc = fixture_open(&fx, AGT_MODE_AUTO, k == 0 ? 4 : 1, 0, NULL);
        const char *real[4];
        char buf[4][128];
        for (int i = 0; i < 4; i++) {
            snprintf(buf[i], sizeof buf[i], "{\"path\":\"%s/%s\"}", fx.root, files[i]);
            real[i] = buf[i];
        }
        fx.sc.turn0 = turn_of(4, names, real);
        fx.hk.rewrite_id = "c1";
        fx.hk.deny_id = "c2";
        fx.hk.append_id = "c0";
        if (rc == AGT_OK)
            rc = agt_agent_run(fx.a);
        T_EQ_INT(rc, AGT_OK, "rc, AGT_OK");
        conv[k] = conversation(&fx);
        fixture_close(&fx);
    }
    T_CHECK(conv[0] && conv[1] && strcmp(conv[0], conv[1]) == 0,
            "hooks: the conversation at bound 4 is byte-identical to bound 1");
    int err = -1;
    char *t = conv[0] ? tool_text(conv[0], "c0", &err) : NULL;
    T_EQ_STR(t, "1\talpha\n\nRead 1 line (1-1) of 1; reached the end of the file.\n\nPOST",
             "the tool result text");
    free(t);
    t = conv[0] ? tool_text(conv[0], "c1", &err) : NULL;
    T_EQ_STR(t, "1\tbee\n\nRead 1 line (1-1) of 1; reached the end of the file.",
             "the tool result text"); /* rewritten to b.txt */
    T_EQ_INT(err, 0, "err, 0");
    free(t);
    t = conv[0] ? tool_text(conv[0], "c2", &err) : NULL;
    T_EQ_STR(t, "A pre-tool-use hook blocked this Read call: no", "the tool result text");
    T_EQ_INT(err, 1, "err, 1");
    free(t);
    t = conv[0] ? tool_text(conv[0], "c3", &err) : NULL;
    T_EQ_STR(t, "1\tfile 3\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
             "the tool result text");
    free(t);
    free(conv[0]);
    free(conv[1]);
}

static void test_invalid_member(void)
{
    const char *names[] = {"Read", "Read", "Glob", "Read"};
    const char *args[] = {"{\"path\":\"ROOT/a.txt\"}", "{\"nope\":1}", "{\"pattern\":\"b*\"}",
                          "{\"path\":\"ROOT/missing.txt\"}"};
    char *c = run_both("invalid member", AGT_MODE_AUTO, 4, 0, 4, names, args, NULL);
    int err = -1;
    char *t = c ? tool_text(c, "c1", &err) : NULL;
    T_CHECK(t && strstr(t, "missing required property 'path'") != NULL,
            "the schema error names the missing path");
    T_EQ_INT(err, 1, "err, 1");
    free(t);
    t = c ? tool_text(c, "c2", &err) : NULL;
    T_EQ_STR(t, "b.txt", "the tool result text");
    free(t);
    t = c ? tool_text(c, "c3", &err) : NULL;
    T_EQ_INT(err, 1, "err, 1");
    free(t);
    free(c);
}

static void test_64_reads(void)
{
    const char *names[64];
    const char *args[64];
    char buf[64][64];
    for (int i = 0; i < 64; i++) {
        names[i] = "Read";
        snprintf(buf[i], sizeof buf[i], "{\"path\":\"ROOT/f%d.txt\"}", i);
        args[i] = buf[i];
    }
    int bounds[] = {64, 2};
    for (int b = 0; b < 2; b++) {
        char what[32];
        snprintf(what, sizeof what, "64 reads, bound %d", bounds[b]);
        int rc = -1;
        char *c = run_both(what, AGT_MODE_AUTO, bounds[b], 0, 64, names, args, &rc);
        T_EQ_INT(rc, AGT_OK, "rc, AGT_OK");
        char *t = c ? tool_text(c, "c63", NULL) : NULL;
        T_EQ_STR(t,
                 "1\tfile 63\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
                 "the tool result text");
        free(t);
        free(c);
    }
}

static void test_cancel_during_group(void)
{
    const char *names[8];
    const char *args[8];
    char buf[8][128];
    fixture fx;
    int rc = fixture_open(&fx, AGT_MODE_AUTO, 4, 0, NULL);
    for (int i = 0; i < 8; i++) {
        names[i] = "Read";
        snprintf(buf[i], sizeof buf[i], "{\"path\":\"%s/f%d.txt\"}", fx.root, i);
        args[i] = buf[i];
    }
    fx.sc.turn0 = turn_of(8, names, args);
    fx.ev.cancel_at_started = 3; /* during the group's prepare */
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_ECANCELLED, "rc, AGT_ECANCELLED");
    T_EQ_INT(fx.sc.next, 1, "fx.sc.next, 1"); /* no second model call */
    char *c = conversation(&fx);
    char *t = c ? tool_text(c, "c7", NULL) : NULL;
    T_EQ_STR(t, "1\tfile 7\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
             "the tool result text");
    free(t);
    free(c);
    fixture_close(&fx);
}

/* A pre-hook that sets a host provider for Read while a group is being
 * prepared: the calls prepared after it run the host's function, on the
 * host's thread, one at a time (the group was formed before). */
static void test_swap_provider_in_hook(void)
{
    char *conv[2] = {NULL, NULL};
    atomic_store(&peak, 0);
    atomic_store(&off_thread, 0);
    atomic_store(&host_calls, 0);
    for (int k = 0; k < 2; k++) {
        fixture fx;
        int rc = fixture_open(&fx, AGT_MODE_AUTO, k == 0 ? 4 : 1, 0, NULL);
        const char *names[] = {"Read", "Read", "Read", "Read"};
        char buf[4][128];
        const char *args[4];
        for (int i = 0; i < 4; i++) {
            snprintf(buf[i], sizeof buf[i], "{\"path\":\"%s/f%d.txt\"}", fx.root, i);
            args[i] = buf[i];
        }
        fx.sc.turn0 = turn_of(4, names, args);
        fx.hk.swap_id = "c1";
        if (rc == AGT_OK)
            rc = agt_agent_run(fx.a);
        T_EQ_INT(rc, AGT_OK, "provider swapped by a pre-hook: run");
        conv[k] = conversation(&fx);
        fixture_close(&fx);
    }
    T_CHECK(conv[0] && conv[1] && strcmp(conv[0], conv[1]) == 0,
            "provider swapped by a pre-hook: conversation at bound 4 = bound 1");
    T_EQ_INT(atomic_load(&host_calls), 4, "the host provider ran for c2 and c3 in both runs");
    T_EQ_INT(atomic_load(&peak), 1, "the host provider never ran twice at once");
    T_EQ_INT(atomic_load(&off_thread), 0, "the host provider ran on the host's thread only");
    char *t = conv[0] ? tool_text(conv[0], "c1", NULL) : NULL;
    T_EQ_STR(t, "1\tfile 1\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
             "c1 was prepared with the built-in provider");
    free(t);
    t = conv[0] ? tool_text(conv[0], "c3", NULL) : NULL;
    T_EQ_STR(t, "host read {\"path\":\"ROOT/f3.txt\"}", "c3 ran the host provider");
    free(t);
    free(conv[0]);
    free(conv[1]);
}

/* ---- a small HTTP server for FetchURL ------------------------------------- */

static int http_port;

static void *http_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char req[2048];
    size_t n = 0;
    while (n < sizeof req - 1) {
        ssize_t r = recv(fd, req + n, sizeof req - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        req[n] = '\0';
        if (strstr(req, "\r\n\r\n"))
            break;
    }
    req[n] = '\0';
    char path[256] = "";
    sscanf(req, "GET %255s", path);
    char resp[512];
    if (strncmp(path, "/loop/", 6) == 0) {
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 302 Found\r\nLocation: /loop/%s\r\nContent-Length: 0\r\n"
                 "Connection: close\r\n\r\n",
                 strcmp(path + 6, "a") == 0 ? "b" : "a");
    } else if (strncmp(path, "/slow/", 6) == 0) {
        struct timespec ts = {0, atoi(path + 6) * 1000000L};
        nanosleep(&ts, NULL);
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n"
                 "Connection: close\r\n\r\nslow page");
    } else {
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    }
    size_t len = strlen(resp), off = 0;
    while (off < len) {
        ssize_t w = send(fd, resp + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    close(fd);
    return NULL;
}

static void *http_main(void *arg)
{
    int lfd = (int)(intptr_t)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        pthread_t th;
        if (pthread_create(&th, NULL, http_conn, (void *)(intptr_t)fd) == 0)
            pthread_detach(th);
        else
            close(fd);
    }
    return NULL;
}

/* A listening socket on 127.0.0.1; returns its port (0 on failure). With
 * serve false the socket is closed again: a port nobody listens on. */
static int local_port(bool serve)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0 || (serve && listen(fd, 64) != 0)) {
        close(fd);
        return 0;
    }
    int port = ntohs(sa.sin_port);
    if (!serve) {
        close(fd);
        return port;
    }
    pthread_t th;
    if (pthread_create(&th, NULL, http_main, (void *)(intptr_t)fd) != 0)
        return 0;
    pthread_detach(th);
    return port;
}

/* FetchURL members hitting a closed port, a redirect loop and a slow server
 * at once (twice each), between two Reads: every member gets its own
 * error/result, the same as in a sequential run. */
static void test_fetch_hostile(void)
{
    int closed = local_port(false);
    if (http_port == 0)
        http_port = local_port(true);
    T_CHECK(closed > 0 && http_port > 0, "FetchURL: local ports");
    char u[6][128];
    snprintf(u[0], sizeof u[0], "{\"url\":\"http://127.0.0.1:%d/x\"}", closed);
    snprintf(u[1], sizeof u[1], "{\"url\":\"http://127.0.0.1:%d/loop/a\"}", http_port);
    snprintf(u[2], sizeof u[2], "{\"url\":\"http://127.0.0.1:%d/slow/300\"}", http_port);
    memcpy(u[3], u[0], sizeof u[0]);
    memcpy(u[4], u[1], sizeof u[1]);
    memcpy(u[5], u[2], sizeof u[2]);
    const char *names[] = {"FetchURL", "FetchURL", "FetchURL", "FetchURL", "FetchURL", "FetchURL"};
    const char *args[] = {u[0], u[1], u[2], u[3], u[4], u[5]};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = -1;
    char *c = run_both("FetchURL closed/loop/slow", AGT_MODE_YOLO, 6, 0, 6, names, args, &rc);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    T_EQ_INT(rc, AGT_OK, "FetchURL hostile: run");
    int err = -1;
    char want[512];
    snprintf(want, sizeof want,
             "Could not fetch the URL: fetching http://127.0.0.1:%d/x failed: Couldn't connect to "
             "server",
             closed);
    char *t = c ? tool_text(c, "c3", &err) : NULL;
    T_EQ_STR(t, want, "closed port: the connection error");
    T_EQ_INT(err, 1, "closed port: an error result");
    free(t);
    snprintf(want, sizeof want,
             "Could not fetch the URL: too many redirects (more than 10) fetching "
             "http://127.0.0.1:%d/loop/a; the redirects go round in a loop: "
             "http://127.0.0.1:%d/loop/a -> http://127.0.0.1:%d/loop/b -> "
             "http://127.0.0.1:%d/loop/a",
             http_port, http_port, http_port, http_port);
    t = c ? tool_text(c, "c4", &err) : NULL;
    T_EQ_STR(t, want, "redirect loop: the loop is named");
    T_EQ_INT(err, 1, "redirect loop: an error result");
    free(t);
    snprintf(want, sizeof want,
             "Fetched http://127.0.0.1:%d/slow/300 (HTTP 200, text/plain, 9 bytes): text passed "
             "through.\n\nslow page",
             http_port);
    t = c ? tool_text(c, "c5", &err) : NULL;
    T_EQ_STR(t, want, "slow server: the page");
    T_EQ_INT(err, 0, "slow server: not an error");
    free(t);
    free(c);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    t_diag("FetchURL closed/loop/slow x2: bound 6 + bound 1 runs took %.0f ms", ms);
}

/* ---- sub-agents and swarm workers (HTTP model) ---------------------------- */

static fake_server msrv;
static atomic_int sampling, peak_threads;

static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void *sampler(void *arg)
{
    (void)arg;
    while (atomic_load(&sampling)) {
        int n = thread_count();
        if (n > atomic_load(&peak_threads))
            atomic_store(&peak_threads, n);
        struct timespec ts = {0, 2000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* The root's conversation after an Agent ("solo") or AgentSwarm (a, b, c;
 * 3 workers) call whose sub-agents each make 4 FetchURL calls of 300 ms in
 * one turn, at parallel bound max; *extra: the peak number of threads
 * beyond those before the run (the sampler's own included there). */
static char *sub_run(const char *prompt, int max, int *extra, double *ms)
{
    char root[64];
    agt_registry *reg = NULL;
    agt_session *s = NULL;
    agt_model *m = NULL;
    agt_agent *a = NULL;
    if (fx_workspace_make(root, sizeof root, "/tmp/agt-parh-XXXXXX") != 0)
        return NULL;
    agt_registry_new(&reg);
    agt_registry_load_builtin(reg, "chat");
    agt_session_new(&s, reg, root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_fetch_private(s, 1); /* sub-agents inherit it */
    fx_http_model(&m, &msrv, "par");
    fx_agent_new(&a, s, m);
    agt_agent_enable_subagents(a);
    agt_agent_set_swarm_concurrency(a, 3);
    agt_agent_set_parallel_tools(a, max);
    agt_registry_freeze(reg);
    agt_agent_add_user_message(a, prompt);
    int base = thread_count();
    atomic_store(&peak_threads, base);
    atomic_store(&sampling, 1);
    pthread_t th;
    bool sampled = pthread_create(&th, NULL, sampler, NULL) == 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = agt_agent_run(a);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_store(&sampling, 0);
    if (sampled)
        pthread_join(th, NULL);
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    *extra = atomic_load(&peak_threads) - base - 1; /* minus the sampler */
    T_EQ_INT(rc, AGT_OK, "%s at bound %d: run", prompt, max);
    char *all = NULL;
    agt_agent_messages(a, &all);
    char *conv = all ? strdup(all) : NULL;
    agt_free(all);
    fx_free(a, m, s, reg);
    fx_workspace_remove(root);
    return conv;
}

static void test_subagents(void)
{
    /* one sub-agent (on the host's thread): its group uses the root's bound */
    int extra1 = 0, extra4 = 0;
    double ms1 = 0, ms4 = 0;
    char *c1 = sub_run("agent", 1, &extra1, &ms1);
    char *c4 = sub_run("agent", 4, &extra4, &ms4);
    T_CHECK(c1 && c4 && strcmp(c1, c4) == 0, "sub-agent: conversation at bound 4 = bound 1");
    T_CHECK(c4 && strstr(c4, "after: 4 results"), "sub-agent: its 4 FetchURL results came back");
    T_CHECK(extra4 <= 3, "sub-agent at bound 4: at most 3 threads beside the host's (%d)", extra4);
    T_CHECK(ms4 < ms1, "sub-agent: bound 4 (%.0f ms) is faster than bound 1 (%.0f ms)", ms4, ms1);
    t_diag("sub-agent, 4 FetchURL of 300 ms: bound 1 %.0f ms (%d extra threads), bound 4 %.0f "
           "ms (%d)",
           ms1, extra1, ms4, extra4);
    free(c1);
    free(c4);
    /* a swarm of 3 workers, each a group of 4 at bound 2 */
    c1 = sub_run("swarm", 1, &extra1, &ms1);
    char *c2 = sub_run("swarm", 2, &extra4, &ms4);
    T_CHECK(c1 && c2 && strcmp(c1, c2) == 0, "swarm: conversation at bound 2 = bound 1");
    T_CHECK(c2 && strstr(c2, "AgentSwarm: 3 sub-agents, 3 finished, 0 did not.") != NULL,
            "swarm: 3 workers at once, all 3 finished");
    T_CHECK(c2 && strstr(c2, "after: 4 results") != NULL, "swarm: the sub-agents' results");
    /* workers x bound threads in all, the host's thread being one of them */
    T_CHECK(extra4 <= 3 * 2 - 1,
            "swarm, 3 workers x bound 2: at most 5 threads beside the host's (%d)", extra4);
    t_diag("swarm 3 x 4 FetchURL of 300 ms: bound 1 %.0f ms (%d extra threads), bound 2 %.0f ms "
           "(%d)",
           ms1, extra1, ms4, extra4);
    free(c1);
    free(c2);
}

/* ---- approval inside a group ------------------------------------------------ */

static const char *const FIVE[] = {"a.txt", "b.txt", "f1.txt", "f2.txt", "f3.txt"};

static char *five_reads(const fixture *fx)
{
    const char *names[5] = {"Read", "Read", "Read", "Read", "Read"};
    char buf[5][128];
    const char *args[5];
    for (int i = 0; i < 5; i++) {
        snprintf(buf[i], sizeof buf[i], "{\"path\":\"%s/%s\"}", fx->root, FIVE[i]);
        args[i] = buf[i];
    }
    return turn_of(5, names, args);
}

/* c1 and c3 wait for approval inside a run of five Reads; the agent is saved
 * while paused, restored into a new agent on the same session, c1 approved,
 * c3 rejected, resumed. */
static char *approval_restore_run(int max)
{
    fixture fx;
    int rc = fixture_open(&fx, AGT_MODE_MANUAL, max, 0, NULL);
    agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(b.txt)");
    agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(f2.txt)");
    fx.sc.turn0 = five_reads(&fx);
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_EPENDING, "approval + restore, bound %d: paused", max);
    char *saved = NULL;
    T_EQ_INT(agt_agent_save(fx.a, &saved), AGT_OK, "approval + restore, bound %d: save", max);
    agt_agent_free(fx.a);
    fx.a = NULL;
    rc = agt_agent_new(&fx.a, fx.s, fx.m);
    if (rc == AGT_OK)
        rc = agt_agent_set_parallel_tools(fx.a, max);
    if (rc == AGT_OK && saved)
        rc = agt_agent_restore(fx.a, saved, strlen(saved));
    agt_free(saved);
    T_EQ_INT(rc, AGT_OK, "approval + restore, bound %d: restore", max);
    T_EQ_INT(agt_agent_answer(fx.a, "c1", AGT_DECISION_APPROVE, NULL), AGT_OK,
             "approval + restore, bound %d: approve c1", max);
    T_EQ_INT(agt_agent_answer(fx.a, "c3", AGT_DECISION_REJECT, "not f2"), AGT_OK,
             "approval + restore, bound %d: reject c3", max);
    T_EQ_INT(agt_agent_resume(fx.a), AGT_OK, "approval + restore, bound %d: resume", max);
    char *c = conversation(&fx);
    fixture_close(&fx);
    return c;
}

typedef struct approver_log {
    char seen[256];
    int calls;
} approver_log;

/* b.txt rejected, f2.txt approved for the session (the suggested rule). */
static int approver(agt_approval *req, void *payload)
{
    approver_log *l = payload;
    l->calls++;
    const char *j = agt_approval_json(req);
    size_t n = strlen(l->seen);
    snprintf(l->seen + n, sizeof l->seen - n, "%s", strstr(j, "b.txt") ? "b " : "f2 ");
    return strstr(j, "b.txt") ? AGT_DECISION_REJECT : AGT_DECISION_APPROVE_SESSION;
}

static char *approver_run(int max, approver_log *l)
{
    fixture fx;
    int rc = fixture_open(&fx, AGT_MODE_MANUAL, max, 0, NULL);
    agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(b.txt)");
    agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(f2.txt)");
    agt_session_set_approver(fx.s, approver, l);
    fx.sc.turn0 = five_reads(&fx);
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_OK, "synchronous approver, bound %d: run", max);
    char *c = conversation(&fx);
    fixture_close(&fx);
    return c;
}

static void test_approval_in_group(void)
{
    char *p = approval_restore_run(4);
    char *q = approval_restore_run(1);
    T_CHECK(p && q && strcmp(p, q) == 0,
            "approval + save/restore/answer/resume: conversation at bound 4 = bound 1");
    int err = -1;
    char *t = p ? tool_text(p, "c1", &err) : NULL;
    T_EQ_STR(t, "1\tbee\n\nRead 1 line (1-1) of 1; reached the end of the file.",
             "approved c1 ran after the restore");
    free(t);
    t = p ? tool_text(p, "c4", &err) : NULL;
    T_EQ_STR(t, "1\tfile 3\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
             "c4 ran in the first run");
    free(t);
    free(p);
    free(q);
    approver_log l4 = {"", 0}, l1 = {"", 0};
    p = approver_run(4, &l4);
    q = approver_run(1, &l1);
    T_CHECK(p && q && strcmp(p, q) == 0, "synchronous approver: conversation at bound 4 = bound 1");
    T_EQ_STR(l4.seen, "b f2 ", "the approver was asked for b.txt, then f2.txt (bound 4)");
    T_EQ_STR(l1.seen, "b f2 ", "the approver was asked for b.txt, then f2.txt (bound 1)");
    t = p ? tool_text(p, "c1", &err) : NULL;
    T_EQ_INT(err, 1, "the rejected c1 is an error result");
    free(t);
    t = p ? tool_text(p, "c3", &err) : NULL;
    T_EQ_STR(t, "1\tfile 2\n2\tline two\n\nRead 2 lines (1-2) of 2; reached the end of the file.",
             "approved c3 ran in the group");
    free(t);
    free(p);
    free(q);
}

/* ---- 20 Greps over a large tree: memory ------------------------------------- */

static atomic_long rss_peak_kb;
static atomic_int rss_sampling;

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    fclose(f);
    return kb;
}

static void *rss_sampler(void *arg)
{
    (void)arg;
    while (atomic_load(&rss_sampling)) {
        long kb = rss_kb();
        if (kb > atomic_load(&rss_peak_kb))
            atomic_store(&rss_peak_kb, kb);
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* 300 files of 2000 lines (about 40 KiB each, 12 MB in all) under big/;
 * 20 Grep calls (content and count modes) over all of it; the growth of
 * the resident size during the run in *grow_kb. */
static char *grep_run(int max, long *grow_kb, double *ms)
{
    fixture fx;
    int rc = fixture_open(&fx, AGT_MODE_AUTO, max, 0, NULL);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/big", fx.root);
    mkdir(dir, 0755);
    char *line = malloc(64 * 2000 + 1);
    for (int f = 0; rc == AGT_OK && line && f < 300; f++) {
        size_t o = 0;
        for (int i = 0; i < 2000; i++)
            o += (size_t)sprintf(line + o, "line %d of file %d: needle%d haystack\n", i, f, i % 7);
        char name[32];
        snprintf(name, sizeof name, "big/g%03d.txt", f);
        fx_write_file(fx.root, name, line);
    }
    free(line);
    const char *names[20];
    char buf[20][160];
    const char *args[20];
    for (int i = 0; i < 20; i++) {
        names[i] = "Grep";
        snprintf(buf[i], sizeof buf[i],
                 "{\"pattern\":\"needle%d\",\"path\":\"big\",\"output_mode\":\"%s\"}", i % 7,
                 i % 2 ? "count_matches" : "content");
        args[i] = buf[i];
    }
    fx.sc.turn0 = turn_of(20, names, args);
    long base = rss_kb();
    atomic_store(&rss_peak_kb, base);
    atomic_store(&rss_sampling, 1);
    pthread_t th;
    bool sampled = pthread_create(&th, NULL, rss_sampler, NULL) == 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    atomic_store(&rss_sampling, 0);
    if (sampled)
        pthread_join(th, NULL);
    *grow_kb = atomic_load(&rss_peak_kb) - base;
    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1000.0 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    T_EQ_INT(rc, AGT_OK, "20 Greps, bound %d: run", max);
    char *c = conversation(&fx);
    fixture_close(&fx);
    return c;
}

static void test_grep_memory(void)
{
    long g1 = 0, g20 = 0;
    double ms1 = 0, ms20 = 0;
    char *q = grep_run(1, &g1, &ms1);
    char *p = grep_run(20, &g20, &ms20);
    T_CHECK(p && q && strcmp(p, q) == 0, "20 Greps: conversation at bound 20 = bound 1");
    int err = -1;
    char *t = p ? tool_text(p, "c1", &err) : NULL;
    /* needle1 is on lines i % 7 == 1 of 2000: 286 lines in each of 300 files */
    T_CHECK(t && strstr(t, "85800") != NULL, "count mode: 300 x 286 = 85800 matches");
    free(t);
    /* each Grep keeps at most its capped output: 20 at once stay well under
     * 20 x the tree (12 MB) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    t_diag("sanitizer build: shadow memory inflates the resident size; not checked");
#else
    T_CHECK(g20 < 64 * 1024, "20 Greps at once: resident size grew %ld KiB (< 64 MiB)", g20);
#endif
    t_diag("20 Greps over 12 MB: bound 1 %.0f ms, +%ld KiB RSS; bound 20 %.0f ms, +%ld KiB RSS",
           ms1, g1, ms20, g20);
    free(p);
    free(q);
}

/* ---- the registry changed by host callbacks during a group ------------------ */

static agt_registry *approver_reg;

/* Removes Read from the registry, then approves. */
static int removing_approver(agt_approval *req, void *payload)
{
    (void)req;
    (void)payload;
    agt_registry_remove(approver_reg, "Read");
    return AGT_DECISION_APPROVE;
}

/* c0..c3 Read a.txt, b.txt, f1.txt, f2.txt. by_hook: the pre-hook of c1
 * removes Read; else c1 (b.txt) waits for approval and the approver removes
 * Read. c0 was prepared before (its tool name was the registry's: freed). */
static char *removal_run(int max, bool by_hook)
{
    fixture fx;
    int rc = fixture_open(&fx, by_hook ? AGT_MODE_AUTO : AGT_MODE_MANUAL, max, 0, NULL);
    const char *files[] = {"a.txt", "b.txt", "f1.txt", "f2.txt"};
    const char *names[] = {"Read", "Read", "Read", "Read"};
    char buf[4][128];
    const char *args[4];
    for (int i = 0; i < 4; i++) {
        snprintf(buf[i], sizeof buf[i], "{\"path\":\"%s/%s\"}", fx.root, files[i]);
        args[i] = buf[i];
    }
    fx.sc.turn0 = turn_of(4, names, args);
    if (by_hook) {
        fx.hk.remove_id = "c1";
    } else {
        agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(b.txt)");
        approver_reg = fx.reg;
        agt_session_set_approver(fx.s, removing_approver, NULL);
    }
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_OK, "Read removed by a %s, bound %d: run", by_hook ? "pre-hook" : "approver",
             max);
    char *c = conversation(&fx);
    fixture_close(&fx);
    return c;
}

static void test_registry_removal(void)
{
    for (int k = 0; k < 2; k++) {
        bool by_hook = k == 0;
        const char *who = by_hook ? "pre-hook" : "approver";
        char *p = removal_run(4, by_hook);
        char *q = removal_run(1, by_hook);
        T_CHECK(p && q && strcmp(p, q) == 0,
                "Read removed by the %s of c1: conversation at bound 4 = bound 1", who);
        int err = -1;
        char *t = p ? tool_text(p, "c0", &err) : NULL;
        T_EQ_STR(t, "1\talpha\n\nRead 1 line (1-1) of 1; reached the end of the file.",
                 "%s removal: c0, prepared before, ran", who);
        free(t);
        t = p ? tool_text(p, "c1", &err) : NULL;
        T_EQ_STR(t,
                 by_hook ? "The Read tool was removed from the tool registry while this call was "
                           "in the pre-tool-use hook; it did not run."
                         : "The Read tool was removed from the tool registry while this call "
                           "waited for approval; it did not run.",
                 "%s removal: c1 did not run", who);
        T_EQ_INT(err, 1, "%s removal: c1 is an error result", who);
        free(t);
        t = p ? tool_text(p, "c2", &err) : NULL;
        T_CHECK(t && strncmp(t, "Tool 'Read' is not available here.", 34) == 0,
                "%s removal: c2 finds no Read", who);
        free(t);
        free(p);
        free(q);
    }
}

static void test_free_paused_group(void)
{
    fixture fx;
    int rc = fixture_open(&fx, AGT_MODE_MANUAL, 4, 0, NULL);
    agt_session_add_rule(fx.s, AGT_RULE_ASK, "Read(b.txt)");
    char a0[128], a2[128];
    snprintf(a0, sizeof a0, "{\"path\":\"%s/a.txt\"}", fx.root);
    snprintf(a2, sizeof a2, "{\"path\":\"%s/b.txt\"}", fx.root);
    const char *names[] = {"Read", "Read", "Read"};
    const char *args[] = {a0, a2, a0};
    fx.sc.turn0 = turn_of(3, names, args);
    if (rc == AGT_OK)
        rc = agt_agent_run(fx.a);
    T_EQ_INT(rc, AGT_EPENDING, "rc, AGT_EPENDING");
    fixture_close(&fx); /* ASan: nothing leaks, nothing is used after free */
}

int main(int argc, char **argv)
{
    host_thread = pthread_self();
    test_host_read_provider();
    test_host_grep_entry();
    test_hooks_in_group();
    test_invalid_member();
    test_64_reads();
    test_cancel_during_group();
    test_swap_provider_in_hook();
    test_fetch_hostile();
    test_approval_in_group();
    test_grep_memory();
    test_registry_removal();
    test_free_paused_group();
    if (argc >= 3) {
        fx_no_proxy();
        if (fake_server_start(&msrv, argv[1], argv[2]) == 0) {
            test_subagents();
            fake_server_stop(&msrv);
        } else {
            T_CHECK(0, "model server start");
        }
    }
    return t_done();
}
