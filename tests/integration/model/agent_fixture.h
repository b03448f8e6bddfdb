/*
 * The setup the agent integration tests share: a test program's start and
 * end (usage skip, no proxy for 127.0.0.1, workspace temp dir, the server
 * script of fake_server.h), the registry/model/agent pieces every fixture
 * builds, and the small readers of the session and the agent (dispatch a
 * tool and keep its text, pending calls, tick events, messages, poll fds,
 * files in the workspace).  Each test keeps its own fixture struct; these
 * take the handles they work on.
 */
#ifndef AGT_TEST_AGENT_FIXTURE_H
#define AGT_TEST_AGENT_FIXTURE_H

#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agenttools/agent.h"
#include "agenttools/model.h"
#include "agenttools/registry.h"
#include "agenttools/session.h"
#include "fake_server.h"
#include "harness.h"

#define FX_UNUSED __attribute__((unused))

/* AgentSwarm as in chat.json plus run_in_background. */
FX_UNUSED static const char *FX_SWARM_BG =
    "{\"name\":\"AgentSwarm\",\"access\":\"host\",\"definition\":{\"name\":\"AgentSwarm\","
    "\"description\":\"swarm\",\"parameters\":{\"type\":\"object\",\"properties\":{"
    "\"prompt_template\":{\"type\":\"string\"},\"items\":{\"type\":\"array\",\"items\":{"
    "\"type\":\"string\"}},\"resume_agent_ids\":{\"type\":\"array\",\"items\":{\"type\":"
    "\"string\"}},\"run_in_background\":{\"type\":\"boolean\"}},\"additionalProperties\":false}}}";

/* Replay model lines: an Agent call, a Write call (path file, content text)
 * and a text answer. */
#define AGENT_CALL(id, prompt, desc)                                                               \
    "{\"tool_calls\":[{\"id\":\"" id "\",\"name\":\"Agent\",\"arguments\":"                        \
    "\"{\\\"prompt\\\":\\\"" prompt "\\\",\\\"description\\\":\\\"" desc "\\\"}\"}]}"
#define WRITE_CALL(id, file, text)                                                                 \
    "{\"tool_calls\":[{\"id\":\"" id "\",\"name\":\"Write\",\"arguments\":"                        \
    "\"{\\\"path\\\":\\\"" file "\\\",\\\"content\\\":\\\"" text "\\\"}\"}]}"
#define TEXT(t) "{\"content\":\"" t "\"}"

/* ---- a test program's start and end ------------------------------------ */

/* The local servers are reached directly, never through a proxy. */
FX_UNUSED static void fx_no_proxy(void)
{
    setenv("no_proxy", "127.0.0.1", 1);
    setenv("NO_PROXY", "127.0.0.1", 1);
}

/* A new temp dir in root (cap bytes) from tmpl, a mkdtemp template such as
 * "/tmp/agt-agent-XXXXXX".  Returns 0, or -1 when it could not be made. */
FX_UNUSED static int fx_workspace_make(char *root, size_t cap, const char *tmpl)
{
    snprintf(root, cap, "%s", tmpl);
    return mkdtemp(root) ? 0 : -1;
}

/* Removes the temp dir and all below it (a TAP diagnostic if that fails). */
FX_UNUSED static void fx_workspace_remove(const char *root)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        t_diag("could not remove %s", root);
}

/*
 * The start of a server test's main(): argv[1] is python3 and argv[2] the
 * server script, else the program prints a TAP skip line naming prog's usage.
 * Then no proxy for 127.0.0.1, the temp dir from tmpl into root (cap bytes;
 * root NULL: none) and the server in srv.  Returns true to go on; false when
 * main should return *status at once: 0 after the skip, t_done() after a
 * failing check named fail (temp dir or server could not start).
 */
FX_UNUSED static bool fx_begin(int argc, char **argv, const char *prog, char *root, size_t cap,
                               const char *tmpl, fake_server *srv, const char *fail, int *status)
{
    if (argc < 3) {
        printf("1..0 # SKIP usage: %s PYTHON SERVER_SCRIPT\n", prog);
        *status = 0;
        return false;
    }
    fx_no_proxy();
    if ((root && fx_workspace_make(root, cap, tmpl) != 0) ||
        fake_server_start(srv, argv[1], argv[2]) != 0) {
        T_CHECK(0, "%s", fail);
        *status = t_done();
        return false;
    }
    return true;
}

/* The end of a server test's main(): stops the server, removes root (when
 * not NULL), and gives t_done() for main to return. */
FX_UNUSED static int fx_end(fake_server *srv, const char *root)
{
    fake_server_stop(srv);
    if (root)
        fx_workspace_remove(root);
    return t_done();
}

/* ---- building a fixture ------------------------------------------------ */

/* Writes lines (NULL-terminated, one a line) to a new replay file
 * <root>/<stem><n>.jsonl, n counting up from 0 in each test program, whose
 * path goes to path (cap bytes).  Returns 0, or -1 when it cannot be written. */
FX_UNUSED static int fx_write_replay(char *path, size_t cap, const char *root, const char *stem,
                                     const char *const *lines)
{
    static int n;
    snprintf(path, cap, "%s/%s%d.jsonl", root, stem, n++);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (size_t i = 0; lines[i]; i++)
        fprintf(f, "%s\n", lines[i]);
    fclose(f);
    return 0;
}

/* An OpenAI-protocol model named "m" on the server's scenario. */
FX_UNUSED static int fx_http_model(agt_model **m, const fake_server *srv, const char *scenario)
{
    char url[256];
    fake_server_url(srv, scenario, url, sizeof url);
    int rc = agt_model_new(m, AGT_PROTOCOL_OPENAI);
    if (rc != AGT_OK)
        return rc;
    agt_model_set_base_url(*m, url);
    return agt_model_set_name(*m, "m");
}

/* The "chat" tools with AgentSwarm replaced by FX_SWARM_BG. */
FX_UNUSED static int fx_registry_swarm_bg(agt_registry **reg)
{
    int rc = agt_registry_new(reg);
    if (rc != AGT_OK)
        return rc;
    agt_registry_load_builtin(*reg, "chat");
    agt_registry_remove(*reg, "AgentSwarm");
    return agt_registry_add_json(*reg, FX_SWARM_BG, strlen(FX_SWARM_BG));
}

/* An agent on session s and model m with the system prompt "You are a test." */
FX_UNUSED static int fx_agent_new(agt_agent **a, agt_session *s, agt_model *m)
{
    int rc = agt_agent_new(a, s, m);
    if (rc != AGT_OK)
        return rc;
    return agt_agent_set_system_prompt(*a, "You are a test.");
}

/* Manual mode with Agent and AgentSwarm allowed: only the sub-agents' own
 * calls ask. */
FX_UNUSED static void fx_manual_subagents(agt_session *s)
{
    agt_session_set_mode(s, AGT_MODE_MANUAL);
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Agent");
    agt_session_add_rule(s, AGT_RULE_ALLOW, "AgentSwarm");
}

/* Frees a fixture's handles, the agent first. */
FX_UNUSED static void fx_free(agt_agent *a, agt_model *m, agt_session *s, agt_registry *reg)
{
    agt_agent_free(a);
    agt_model_free(m);
    agt_session_free(s);
    agt_registry_free(reg);
}

/* ---- reading the session, the agent and the workspace ------------------ */

/* The string at key of o, or "(none)". */
FX_UNUSED static const char *fx_jstr(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "(none)";
}

/* Dispatches tool with args on s as host call "h<n>" (n counting up from 1 in
 * each test program): the result's text (malloc'd; "(no result)" when there
 * is none); is_error (when not NULL): the result's flag, -1 without one. */
FX_UNUSED static char *fx_call_text(agt_session *s, const char *tool, const char *args,
                                    int *is_error)
{
    static int n;
    char id[32];
    snprintf(id, sizeof id, "h%d", ++n);
    agt_result *out = NULL;
    agt_session_dispatch(s, id, tool, args, &out);
    char *t = strdup(out ? agt_result_text(out) : "(no result)");
    if (is_error)
        *is_error = out ? agt_result_is_error(out) : -1;
    agt_result_free(out);
    return t;
}

/* agt_session_pending() parsed (NULL when there is nothing). */
FX_UNUSED static json_t *fx_pending(agt_session *s)
{
    char *p = NULL;
    agt_session_pending(s, &p);
    json_t *v = p ? json_loads(p, 0, NULL) : NULL;
    agt_free(p);
    return v;
}

/* The next agt_session_tick() event without waiting, parsed (NULL: none). */
FX_UNUSED static json_t *fx_tick(agt_session *s)
{
    char *ev = NULL;
    agt_session_tick(s, -1, &ev);
    json_t *v = ev ? json_loads(ev, 0, NULL) : NULL;
    agt_free(ev);
    return v;
}

/* The agent's conversation (agt_agent_messages) parsed (NULL: none). */
FX_UNUSED static json_t *fx_messages(agt_agent *a)
{
    char *s = NULL;
    agt_agent_messages(a, &s);
    json_t *v = s ? json_loads(s, 0, NULL) : NULL;
    agt_free(s);
    return v;
}

/* Waits (at most 20 s) until the session's descriptors say something
 * happened: poll()'s result, 0 when there is no descriptor. */
FX_UNUSED static int fx_wait_poll(agt_session *s)
{
    int fds[8];
    size_t n = 0;
    agt_session_poll_fds(s, fds, 8, &n);
    if (n == 0)
        return 0;
    struct pollfd p[8];
    for (size_t i = 0; i < n && i < 8; i++)
        p[i] = (struct pollfd){fds[i], POLLIN, 0};
    return poll(p, n, 20000);
}

/* The first 255 bytes of <root>/<name> (a static buffer), NULL when it
 * cannot be opened. */
FX_UNUSED static char *fx_file_text(const char *root, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[256];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Writes text to <root>/<name> (best effort: a test checks what it reads). */
FX_UNUSED static void fx_write_file(const char *root, const char *name, const char *text)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, name);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Removes <root>/<name>. */
FX_UNUSED static void fx_rm(const char *root, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", root, name);
    unlink(path);
}

#endif
