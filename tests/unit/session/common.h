/* Shared set-up for the session tests: a temporary workspace, the chat set,
 * and recording host providers for tools whose built-in providers live
 * elsewhere (Write, Edit, Bash, ...), so the tests depend only on the
 * session layer. */
#ifndef AGT_TEST_SESSION_COMMON_H
#define AGT_TEST_SESSION_COMMON_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"

static int rec_calls;
static char rec_last[4096];

/* Records the call; for Write also writes the file (the plan-mode tests
 * need a real plan file). */
static int rec_provider(agt_call *call, void *payload)
{
    (void)payload;
    rec_calls++;
    snprintf(rec_last, sizeof rec_last, "%s %s", agt_call_tool(call), agt_call_args(call));
    if (strcmp(agt_call_tool(call), "Write") == 0) {
        const char *a = agt_call_args(call);
        /* tests write {"path":"<abs>","content":"<plain>"} */
        const char *p = strstr(a, "\"path\":\"");
        const char *c = strstr(a, "\"content\":\"");
        if (p && c) {
            char path[PATH_MAX], content[1024];
            p += 8;
            c += 11;
            size_t pl = (size_t)(strchr(p, '"') - p), cl = (size_t)(strchr(c, '"') - c);
            if (pl < sizeof path && cl < sizeof content && p[0] == '/') {
                memcpy(path, p, pl);
                path[pl] = '\0';
                memcpy(content, c, cl);
                content[cl] = '\0';
                FILE *f = fopen(path, "wb");
                if (f) {
                    fputs(content, f);
                    fclose(f);
                }
            }
        }
    }
    return agt_call_set_text(call, "ran");
}

static const char *host_tools[] = {
    "Read",     "Write",      "Edit",       "MultiEdit",  "NotebookEdit",
    "Bash",     "FetchURL",   "WebSearch",  "Skill",      "AskUserQuestion",
    "TaskStop", "CronCreate", "CronDelete", "Grep",       "Glob",
    "Agent",    "AgentSwarm", "Notify"};

static char ws_root[PATH_MAX];

static agt_registry *make_chat_registry(void)
{
    agt_registry *reg = NULL;
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "chat") != AGT_OK)
        return NULL;
    for (size_t i = 0; i < sizeof host_tools / sizeof host_tools[0]; i++)
        agt_registry_set_provider(reg, host_tools[i], rec_provider, NULL);
    /* a network tool that is not FetchURL/WebSearch: asks by default */
    static const char *ping =
        "{\"name\":\"Ping\",\"access\":\"network\",\"plan_task\":true,\"main_task\":true,"
        "\"definition\":{\"name\":\"Ping\",\"description\":\"Ping a host.\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{}}}}";
    agt_registry_set_provider(reg, "Ping", rec_provider, NULL);
    if (agt_registry_add_json(reg, ping, strlen(ping)) != AGT_OK)
        t_diag("Ping: %s", agt_error_message());
    /* a host tool of the host's own (not one the reference auto-allows) */
    static const char *notify =
        "{\"name\":\"Notify\",\"access\":\"host\",\"plan_task\":true,\"main_task\":true,"
        "\"definition\":{\"name\":\"Notify\",\"description\":\"Notify the user.\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{}}}}";
    if (agt_registry_add_json(reg, notify, strlen(notify)) != AGT_OK)
        t_diag("Notify: %s", agt_error_message());
    return reg;
}

static void make_workspace(void)
{
    char tmpl[] = "/tmp/agt-session-XXXXXX";
    char *d = mkdtemp(tmpl);
    if (d == NULL || realpath(d, ws_root) == NULL) {
        printf("Bail out! cannot create a workspace\n");
        exit(1);
    }
}

static void remove_tree(const char *path)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        t_diag("could not remove %s", path);
}

/* Dispatches; returns the status (AGT_OK, AGT_EPENDING, ...) and the result
 * in *r (NULL when none). */
static int disp(agt_session *s, const char *id, const char *tool, const char *args, agt_result **r)
{
    *r = NULL;
    return agt_session_dispatch(s, id, tool, args, r);
}

/* "ran" when the provider ran, "pending", "denied:<status>" otherwise. */
static const char *outcome(agt_session *s, const char *tool, const char *args)
{
    static char buf[64];
    static int n;
    char id[32];
    snprintf(id, sizeof id, "o%d", ++n);
    agt_result *r;
    int rc = disp(s, id, tool, args, &r);
    if (rc == AGT_EPENDING) {
        agt_result *x = NULL;
        agt_session_answer(s, id, AGT_DECISION_REJECT, NULL, &x); /* clear it */
        agt_result_free(x);
        return "pending";
    }
    if (rc != AGT_OK)
        snprintf(buf, sizeof buf, "rc:%d", rc);
    else if (!agt_result_is_error(r))
        snprintf(buf, sizeof buf, "ran");
    else
        snprintf(buf, sizeof buf, "error:%d", agt_result_status(r));
    agt_result_free(r);
    return buf;
}

#endif
