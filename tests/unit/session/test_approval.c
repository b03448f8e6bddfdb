/* Approval: modes × access classes, pending calls and their answers, the
 * synchronous approver, and pre/post-tool-use hooks. */
#include <time.h>

#include "common.h"

static void test_mode_table(agt_registry *reg)
{
    static const struct {
        const char *tool, *args;
    } calls[] = {
        {"Read", "{\"path\":\"a.txt\"}"},                    /* read */
        {"Write", "{\"path\":\"a.txt\",\"content\":\"x\"}"}, /* write */
        {"Bash", "{\"command\":\"make\"}"},                  /* execute */
        {"FetchURL", "{\"url\":\"https://e.com/\"}"},        /* network, exempt */
        {"WebSearch", "{\"query\":\"x\"}"},                  /* network, exempt */
        {"Ping", "{}"},                                      /* network */
        {"Skill", "{\"skill\":\"x\"}"},                      /* host */
        {"AskUserQuestion",
         "{\"questions\":[{\"question\":\"Which?\",\"header\":\"Pick\",\"options\":"
         "[{\"label\":\"A\",\"description\":\"a\"},{\"label\":\"B\",\"description\":\"b\"}],"
         "\"multi_select\":false}]}"}, /* host, auto-allowed */
        {"Agent", "{\"prompt\":\"Look around.\",\"description\":\"look around\"}"}, /* host */
        {"Notify", "{}"}, /* host, the host's own */
        {"AgentSwarm", "{\"prompt_template\":\"Check {{item}}.\",\"items\":[\"a\",\"b\"]}"},
        {"TaskStop", "{\"task_id\":\"t1\"}"},                          /* execute */
        {"CronCreate", "{\"cron\":\"*/5 * * * *\",\"prompt\":\"x\"}"}, /* write */
    };
    /* The reference's table: Read, Grep, Glob, ReadMediaFile, WebSearch,
     * FetchURL, Agent, AskUserQuestion, Skill (and the read-only task, cron
     * and plan tools) run without asking; Write, Edit, Bash, TaskStop,
     * CronCreate, CronDelete and AgentSwarm outside swarm mode ask; yolo
     * skips asking. Plan mode asks as the mode it was entered from. */
    static const struct {
        int mode, from;
        const char *name;
        const char *want[14];
    } table[] = {
        {AGT_MODE_MANUAL,
         AGT_MODE_MANUAL,
         "manual",
         {"ran", "pending", "pending", "ran", "ran", "pending", "ran", "ran", "ran", "pending",
          "pending", "pending", "pending"}},
        {AGT_MODE_YOLO,
         AGT_MODE_YOLO,
         "yolo",
         {"ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran",
          "ran"}},
        {AGT_MODE_AUTO,
         AGT_MODE_AUTO,
         "auto",
         {"ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran",
          "ran"}},
        {AGT_MODE_PLAN,
         AGT_MODE_MANUAL,
         "plan (from manual)",
         {"ran", "error:-11", "pending", "ran", "ran", "pending", "ran", "ran", "ran", "pending",
          "pending", "error:-11", "pending"}},
        {AGT_MODE_PLAN,
         AGT_MODE_YOLO,
         "plan (from yolo)",
         {"ran", "error:-11", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran",
          "error:-11", "ran"}},
        {AGT_MODE_PLAN,
         AGT_MODE_AUTO,
         "plan (from auto)",
         {"ran", "error:-11", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran", "ran",
          "error:-11", "ran"}},
    };
    for (size_t m = 0; m < sizeof table / sizeof table[0]; m++) {
        agt_session *s;
        agt_session_new(&s, reg, ws_root);
        agt_session_set_mode(s, table[m].from);
        agt_session_set_mode(s, table[m].mode);
        for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
            T_EQ_STR(outcome(s, calls[i].tool, calls[i].args), table[m].want[i], "%s × %s",
                     table[m].name, calls[i].tool);
        agt_session_free(s);
    }
}

static void test_pending(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_result *r;
    int before = rec_calls;
    T_EQ_INT(disp(s, "c1", "Bash", "{\"command\":\"git log --oneline src/\"}", &r), AGT_EPENDING,
             "write/execute call is pending");
    T_CHECK(r == NULL, "no result while pending");
    T_EQ_INT(rec_calls, before, "provider not run yet");
    char *json = NULL;
    agt_session_pending(s, &json);
    T_EQ_STR(json,
             "[{\"call_id\":\"c1\",\"tool\":\"Bash\",\"arguments\":{\"command\":\"git log "
             "--oneline src/\"},\"reason\":\"Bash runs commands (access: execute) and the "
             "session is in manual mode\",\"suggested_rule\":\"Bash(git log *)\"}]",
             "pending list");
    agt_free(json);
    T_EQ_INT(disp(s, "c1", "Bash", "{\"command\":\"ls\"}", &r), AGT_EEXISTS, "same call id twice");

    T_EQ_INT(agt_session_answer(s, "c1", AGT_DECISION_APPROVE, NULL, &r), AGT_OK, "approve once");
    T_EQ_STR(agt_result_text(r), "ran", "approved call ran");
    T_EQ_STR(rec_last, "Bash {\"command\":\"git log --oneline src/\"}", "with its arguments");
    T_EQ_STR(agt_result_call_id(r), "c1", "result call id");
    agt_result_free(r);
    T_EQ_INT(agt_session_answer(s, "c1", AGT_DECISION_APPROVE, NULL, &r), AGT_ENOTFOUND,
             "answered call is gone");
    T_EQ_INT(agt_session_answer(s, "nope", AGT_DECISION_REJECT, NULL, &r), AGT_ENOTFOUND,
             "unknown call id");

    T_EQ_INT(disp(s, "c2", "Bash", "{\"command\":\"git log -p\"}", &r), AGT_EPENDING,
             "approve once stored nothing");
    T_EQ_INT(agt_session_answer(s, "c2", AGT_DECISION_APPROVE_SESSION, NULL, &r), AGT_OK,
             "approve for session");
    T_EQ_STR(agt_result_text(r), "ran", "ran");
    agt_result_free(r);
    agt_session_rules(s, &json);
    T_EQ_STR(json,
             "{\"allow\":[\"Bash(git log *)\"],\"ask\":[],\"deny\":[],\"session\":[\"Bash(git "
             "log *)\"]}",
             "suggested rule stored as a session rule");
    agt_free(json);
    T_EQ_INT(disp(s, "c3", "Bash", "{\"command\":\"git log --stat README\"}", &r), AGT_OK,
             "a later similar call runs without asking");
    T_EQ_STR(agt_result_text(r), "ran", "ran directly");
    agt_result_free(r);
    T_EQ_INT(disp(s, "c4", "Bash", "{\"command\":\"git status\"}", &r), AGT_EPENDING,
             "the session rule is not broader than git log");

    before = rec_calls;
    T_EQ_INT(agt_session_answer(s, "c4", AGT_DECISION_REJECT, "not now", &r), AGT_OK, "reject");
    T_EQ_STR(agt_result_text(r),
             "The user declined this Bash call: not now. Do not retry it unchanged; ask the "
             "user or take another approach.",
             "rejection text");
    T_EQ_INT(agt_result_is_error(r), 1, "rejection is an error result");
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "rejection status");
    T_EQ_INT(rec_calls, before, "rejected call did not run");
    agt_result_free(r);
    disp(s, "c5", "Bash", "{\"command\":\"make\"}", &r);
    agt_session_answer(s, "c5", AGT_DECISION_REJECT, NULL, &r);
    T_EQ_STR(agt_result_text(r),
             "The user declined this Bash call. Do not retry it unchanged; ask the user or "
             "take another approach.",
             "rejection without reason");
    agt_result_free(r);

    /* host-given rule */
    disp(s, "c6", "Bash", "{\"command\":\"npm run build\"}", &r);
    T_EQ_INT(agt_session_answer_rule(s, "c6", "Bash(npm", NULL, &r), AGT_EINVALID,
             "malformed host rule");
    agt_session_pending(s, &json);
    T_CHECK(strstr(json, "\"call_id\":\"c6\"") != NULL, "call stays pending");
    agt_free(json);
    T_EQ_INT(agt_session_answer_rule(s, "c6", "Bash(npm *)", NULL, &r), AGT_OK, "host rule");
    agt_result_free(r);
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"npm test\"}"), "ran", "host rule applies");

    /* path suggestions */
    disp(s, "w1", "Write", "{\"path\":\"src/deep/a.c\",\"content\":\"x\"}", &r);
    disp(s, "w2", "Write", "{\"path\":\"./README.md\",\"content\":\"x\"}", &r);
    disp(s, "w3", "Edit", "{\"path\":\"/opt/x/y.conf\",\"old_string\":\"a\",\"new_string\":\"b\"}",
         &r);
    agt_session_pending(s, &json);
    T_CHECK(strstr(json, "\"suggested_rule\":\"Write(src/deep/**)\"") != NULL,
            "path suggestion: parent folder");
    T_CHECK(strstr(json, "\"suggested_rule\":\"Write(./README.md)\"") != NULL,
            "path suggestion: file at the root");
    T_CHECK(strstr(json, "\"suggested_rule\":\"Edit(/opt/x/**)\"") != NULL,
            "path suggestion: outside the root");
    agt_free(json);
    agt_session_answer(s, "w2", AGT_DECISION_APPROVE_SESSION, NULL, &r);
    agt_result_free(r);
    T_EQ_STR(outcome(s, "Write", "{\"path\":\"README.md\",\"content\":\"y\"}"), "ran",
             "root file rule covers the same file");
    T_EQ_STR(outcome(s, "Write", "{\"path\":\"docs/README.md\",\"content\":\"y\"}"), "pending",
             "root file rule is anchored");
    T_EQ_INT(agt_session_answer(s, "w1", 9, NULL, &r), AGT_EINVAL, "unknown decision");
    agt_session_free(s); /* frees what is still pending */
}

static int approver_decision;
static int approver_calls;
static char approver_seen[1024];

static int approver(agt_approval *req, void *payload)
{
    (void)payload;
    approver_calls++;
    snprintf(approver_seen, sizeof approver_seen, "%s", agt_approval_json(req));
    if (approver_decision == AGT_DECISION_REJECT)
        agt_approval_set_reason(req, "no way");
    if (approver_decision == AGT_DECISION_APPROVE_SESSION)
        agt_approval_set_rule(req, "Bash(make*)");
    return approver_decision;
}

/* The reason of a pending call says what the call does: the cron and task
 * tools are of the write/execute class but change no file (once,
 * CronCreate's approval said it "changes files (access: write)"). */
static void test_reason_wording(agt_registry *reg)
{
    static const struct {
        const char *tool, *args, *reason;
    } cases[] = {
        {"CronCreate", "{\"cron\":\"*/10 * * * *\",\"prompt\":\"check the build\"}",
         "CronCreate schedules a prompt (access: write) and the session is in manual mode"},
        {"CronDelete", "{\"id\":\"0a1b2c3d\"}",
         "CronDelete deletes a scheduled prompt (access: write) and the session is in manual "
         "mode"},
        {"TaskStop", "{\"task_id\":\"bash-0a1b2c3d\"}",
         "TaskStop stops a background task (access: execute) and the session is in manual mode"},
        {"Write", "{\"path\":\"a.txt\",\"content\":\"x\"}",
         "Write changes files (access: write) and the session is in manual mode"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        agt_session *s;
        agt_session_new(&s, reg, ws_root);
        agt_result *r = NULL;
        T_EQ_INT(disp(s, "w1", cases[i].tool, cases[i].args, &r), AGT_EPENDING, "%s waits",
                 cases[i].tool);
        char *json = NULL;
        agt_session_pending(s, &json);
        char want[256];
        snprintf(want, sizeof want, "\"reason\":\"%s\"", cases[i].reason);
        T_CHECK(json != NULL && strstr(json, want) != NULL, "%s: the reason says what it does",
                cases[i].tool);
        agt_free(json);
        agt_result_free(r);
        agt_session_free(s);
    }
}

static void test_approver(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_approver(s, approver, NULL);
    agt_result *r;
    approver_decision = AGT_DECISION_APPROVE;
    T_EQ_INT(disp(s, "a1", "Bash", "{\"command\":\"ls -l\"}", &r), AGT_OK, "approver: no EPENDING");
    T_EQ_STR(agt_result_text(r), "ran", "approved by callback");
    T_EQ_STR(approver_seen,
             "{\"call_id\":\"a1\",\"tool\":\"Bash\",\"arguments\":{\"command\":\"ls -l\"},"
             "\"reason\":\"Bash runs commands (access: execute) and the session is in manual "
             "mode\",\"suggested_rule\":\"Bash(ls *)\"}",
             "request JSON");
    agt_result_free(r);
    approver_decision = AGT_DECISION_REJECT;
    T_EQ_INT(disp(s, "a2", "Bash", "{\"command\":\"ls\"}", &r), AGT_OK, "approver reject");
    T_EQ_STR(agt_result_text(r),
             "The user declined this Bash call: no way. Do not retry it unchanged; ask the user "
             "or take another approach.",
             "approver rejection text");
    agt_result_free(r);
    approver_decision = AGT_DECISION_APPROVE_SESSION;
    disp(s, "a3", "Bash", "{\"command\":\"make all\"}", &r);
    agt_result_free(r);
    int calls = approver_calls;
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"make -j8\"}"), "ran", "host rule from approver");
    T_EQ_INT(approver_calls, calls, "not asked again");
    char *json;
    agt_session_pending(s, &json);
    T_EQ_STR(json, "[]", "nothing pending with an approver");
    agt_free(json);
    agt_session_set_approver(s, NULL, NULL);
    T_EQ_INT(disp(s, "a4", "Bash", "{\"command\":\"ls\"}", &r), AGT_EPENDING,
             "approver removed: pending again");
    agt_session_free(s);
}

/* ---- hooks ---- */

static const char *hook_mode;

static int pre_hook(agt_hook *h, void *payload)
{
    (void)payload;
    if (strcmp(agt_hook_tool(h), "Bash") != 0)
        return AGT_OK;
    if (strcmp(hook_mode, "deny") == 0)
        return agt_hook_deny(h, "no network from hooks");
    if (strcmp(hook_mode, "rewrite") == 0)
        return agt_hook_rewrite(h, "{\"command\":\"echo safe\"}");
    if (strcmp(hook_mode, "rewrite-bad") == 0)
        return agt_hook_rewrite(h, "{\"command\":42}");
    if (strcmp(hook_mode, "rewrite-denied") == 0)
        return agt_hook_rewrite(h, "{\"command\":\"rm -rf /\"}");
    if (strcmp(hook_mode, "fail") == 0) {
        agt_hook_deny(h, "ignored");
        return AGT_ERROR;
    }
    if (strcmp(hook_mode, "slow") == 0) {
        agt_hook_deny(h, "too late");
        struct timespec ts = {0, 30 * 1000000L};
        nanosleep(&ts, NULL);
        return AGT_OK;
    }
    if (strcmp(hook_mode, "misuse") == 0)
        return agt_hook_append(h, "x") == AGT_ESTATE ? AGT_OK : AGT_ERROR;
    if (strcmp(hook_mode, "context") == 0) {
        if (agt_hook_add_context(h, "The tests live in tests/; run make check after this.") !=
            AGT_OK)
            return AGT_ERROR;
        return agt_hook_add_context(h, "bad \xff byte");
    }
    if (strcmp(hook_mode, "context-deny") == 0) {
        agt_hook_add_context(h, "Use git restore to undo changes instead.");
        return agt_hook_deny(h, "no curl");
    }
    if (strcmp(hook_mode, "context-rewrite-denied") == 0) {
        agt_hook_add_context(h, "Cleaning is done by make clean.");
        return agt_hook_rewrite(h, "{\"command\":\"rm -rf /\"}");
    }
    if (strcmp(hook_mode, "context-fail") == 0) {
        agt_hook_add_context(h, "dropped with the failed answer");
        return AGT_ERROR;
    }
    return AGT_OK;
}

static int post_hook(agt_hook *h, void *payload)
{
    (void)payload;
    if (strcmp(hook_mode, "post-fail") == 0)
        return AGT_EIO;
    if (agt_hook_deny(h, "late") != AGT_ESTATE)
        return AGT_ERROR;
    if (agt_hook_add_context(h, "late") != AGT_ESTATE)
        return AGT_ERROR;
    if (agt_hook_result_text(h) && strcmp(agt_hook_result_text(h), "ran") == 0 &&
        !agt_hook_result_is_error(h))
        return agt_hook_append(h, "context: the build is green");
    return AGT_OK;
}

static void test_hooks(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_add_rule(s, AGT_RULE_DENY, "Bash(rm *)");
    agt_session_set_pre_hook(s, pre_hook, NULL);
    agt_result *r;
    int before = rec_calls;

    hook_mode = "deny";
    disp(s, "h1", "Bash", "{\"command\":\"curl x\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "A pre-tool-use hook blocked this Bash call: no network from hooks", "hook deny text");
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "hook deny status");
    T_EQ_INT(rec_calls, before, "denied call did not run");
    agt_result_free(r);

    hook_mode = "rewrite";
    disp(s, "h2", "Bash", "{\"command\":\"curl x\"}", &r);
    T_EQ_STR(rec_last, "Bash {\"command\":\"echo safe\"}", "provider saw the rewritten args");
    T_EQ_STR(agt_result_text(r), "ran", "rewritten call ran");
    agt_result_free(r);

    hook_mode = "rewrite-bad";
    before = rec_calls;
    disp(s, "h3", "Bash", "{\"command\":\"curl x\"}", &r);
    T_CHECK(strncmp(agt_result_text(r),
                    "A pre-tool-use hook rewrote the arguments of Bash, and they do not match "
                    "its parameters:\n- /command: ",
                    96) == 0,
            "rewrite failing the schema");
    T_EQ_INT(agt_result_status(r), AGT_EINVALID, "rewrite failing the schema: status");
    T_EQ_INT(rec_calls, before, "bad rewrite did not run");
    agt_result_free(r);

    hook_mode = "rewrite-denied";
    disp(s, "h4", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "rewrite into a denied command is refused");
    T_EQ_INT(rec_calls, before, "denied rewrite did not run");
    agt_result_free(r);

    hook_mode = "fail";
    disp(s, "h5", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "ran\n\n[note: the pre-tool-use hook failed (error, code -1); the call "
             "went on without it]",
             "failing hook does not block");
    T_EQ_INT(agt_result_is_error(r), 0, "still a success");
    agt_result_free(r);

    hook_mode = "slow";
    agt_session_set_hook_budget(s, 5);
    disp(s, "h6", "Bash", "{\"command\":\"ls\"}", &r);
    T_CHECK(strncmp(agt_result_text(r), "ran\n\n[note: the pre-tool-use hook took ", 38) == 0 &&
                strstr(agt_result_text(r), "over its budget of 5 ms; its answer was ignored]"),
            "slow hook ignored");
    agt_result_free(r);
    T_EQ_INT(agt_session_set_hook_budget(s, 0), AGT_EINVAL, "budget below 1 ms");

    hook_mode = "misuse";
    agt_session_set_post_hook(s, post_hook, NULL);
    disp(s, "h7", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r), "ran\n\ncontext: the build is green", "post hook appends");
    agt_result_free(r);
    hook_mode = "post-fail";
    disp(s, "h8", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "ran\n\n[note: the post-tool-use hook failed (input/output error, code -10); the call "
             "went on "
             "without it]",
             "failing post hook");
    agt_result_free(r);

    /* pre-tool-use context (agt_hook_add_context) */
    agt_session_set_post_hook(s, NULL, NULL);
    hook_mode = "context";
    disp(s, "h9", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "ran\n\nThe tests live in tests/; run make check after this.\nbad \xef\xbf\xbd byte",
             "pre hook context follows the result, texts joined by a newline, invalid UTF-8 "
             "replaced");
    T_EQ_INT(agt_result_is_error(r), 0, "context leaves a success a success");
    agt_result_free(r);
    agt_session_set_post_hook(s, post_hook, NULL);
    disp(s, "h10", "Bash", "{\"command\":\"ls\"}", &r);
    /* the post hook appends only when it saw exactly "ran": the context is
     * not in its result text, and comes before what it appends */
    T_EQ_STR(agt_result_text(r),
             "ran\n\nThe tests live in tests/; run make check after this.\nbad \xef\xbf\xbd "
             "byte\n\ncontext: the build is green",
             "pre hook context before the post hook's text");
    agt_result_free(r);
    hook_mode = "context-deny";
    before = rec_calls;
    disp(s, "h11", "Bash", "{\"command\":\"curl x\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "A pre-tool-use hook blocked this Bash call: no curl\n\nUse git restore to undo "
             "changes instead.",
             "context goes with the hook's refusal");
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "refusal status kept");
    T_EQ_INT(rec_calls, before, "denied call did not run");
    agt_result_free(r);
    hook_mode = "context-rewrite-denied";
    disp(s, "h12", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "Bash call refused: the rule 'Bash(rm *)' in the deny list forbids it. Do not retry "
             "it; take another approach or ask the user to change the rules.\n\nCleaning is done "
             "by make clean.",
             "context goes with the refusal of a rewrite");
    T_EQ_INT(rec_calls, before, "refused rewrite did not run");
    agt_result_free(r);
    hook_mode = "context-fail";
    disp(s, "h13", "Bash", "{\"command\":\"ls\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "ran\n\ncontext: the build is green\n\n[note: the pre-tool-use hook failed (error, "
             "code -1); the call went on without it]",
             "a failed hook's context is dropped with its answer");
    agt_result_free(r);
    T_EQ_INT(agt_hook_add_context(NULL, "x"), AGT_EINVAL, "add_context: NULL hook");
    T_EQ_STR(agt_error_message(), "agt_hook_add_context: hook or text is NULL",
             "add_context: NULL message");
    agt_session_free(s);
}

/* A pre-hook is host code: one that removed its call's tool and then
 * rewrote the arguments made the rewrite check read the freed registry
 * entry; one that added tools (the entries move) checked the rewrite
 * against a stale entry. The entry is looked up again after the hook. */
static agt_registry *hook_reg;

static int registry_hook(agt_hook *h, void *payload)
{
    (void)payload;
    if (strcmp(hook_mode, "remove-rewrite") == 0) {
        agt_registry_remove(hook_reg, agt_hook_tool(h));
        return agt_hook_rewrite(h, "{\"command\":\"echo safe\"}");
    }
    if (strcmp(hook_mode, "grow-rewrite") == 0 || strcmp(hook_mode, "grow-rewrite-bad") == 0) {
        static int added;
        for (int i = 0; i < 200; i++) {
            char def[256];
            snprintf(def, sizeof def,
                     "{\"name\":\"Extra%d\",\"access\":\"read\",\"definition\":{\"name\":"
                     "\"Extra%d\",\"description\":\"x\",\"parameters\":{\"type\":\"object\"}}}",
                     added, added);
            char name[32];
            snprintf(name, sizeof name, "Extra%d", added);
            added++;
            if (agt_registry_set_provider(hook_reg, name, rec_provider, NULL) != AGT_OK ||
                agt_registry_add_json(hook_reg, def, strlen(def)) != AGT_OK)
                return AGT_ERROR;
        }
        return agt_hook_rewrite(h, strcmp(hook_mode, "grow-rewrite") == 0
                                       ? "{\"command\":\"echo safe\"}"
                                       : "{\"command\":42}");
    }
    if (strcmp(hook_mode, "drop-provider") == 0)
        return agt_registry_set_provider(hook_reg, agt_hook_tool(h), NULL, NULL);
    return AGT_OK;
}

static void test_hook_changes_registry(void)
{
    hook_reg = make_chat_registry();
    agt_session *s;
    agt_session_new(&s, hook_reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_session_set_pre_hook(s, registry_hook, NULL);
    /* adding 200 tools takes seconds under ASan on a loaded machine: past
     * the default 5 s budget the hook's answer would be ignored, which is
     * not what this test is about */
    agt_session_set_hook_budget(s, 600000);
    agt_result *r;
    int before = rec_calls;

    hook_mode = "grow-rewrite";
    disp(s, "g1", "Bash", "{\"command\":\"curl x\"}", &r);
    T_EQ_STR(rec_last, "Bash {\"command\":\"echo safe\"}",
             "hook adding 200 tools: the rewrite reached the provider");
    T_EQ_STR(agt_result_text(r), "ran", "hook adding tools: the call ran");
    agt_result_free(r);

    hook_mode = "grow-rewrite-bad";
    before = rec_calls;
    disp(s, "g2", "Bash", "{\"command\":\"curl x\"}", &r);
    T_CHECK(strncmp(agt_result_text(r),
                    "A pre-tool-use hook rewrote the arguments of Bash, and they do not match "
                    "its parameters:\n- /command: ",
                    96) == 0,
            "hook adding tools: a bad rewrite is checked against Bash's schema");
    T_EQ_INT(rec_calls, before, "hook adding tools: the bad rewrite did not run");
    agt_result_free(r);

    hook_mode = "remove-rewrite";
    disp(s, "g3", "Bash", "{\"command\":\"curl x\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "The Bash tool was removed from the tool registry while this call was in the "
             "pre-tool-use hook; it did not run.",
             "hook removing its tool, then rewriting: refused");
    T_EQ_INT(agt_result_status(r), AGT_ENOTFOUND, "hook removing its tool: status");
    T_EQ_INT(rec_calls, before, "hook removing its tool: the call did not run");
    agt_result_free(r);

    /* Ping has no built-in provider: the host's is the only one, and a
     * hook that removes it may free its payload with it */
    before = rec_calls;
    hook_mode = "drop-provider";
    disp(s, "g5", "Ping", "{}", &r);
    T_EQ_STR(agt_result_text(r),
             "The Ping tool lost its provider while this call was in the pre-tool-use hook; "
             "it did not run.",
             "hook removing its tool's only provider: refused");
    T_EQ_INT(agt_result_status(r), AGT_ENOTFOUND, "hook removing its tool's provider: status");
    T_EQ_INT(rec_calls, before, "hook removing its tool's provider: no provider ran");
    agt_result_free(r);
    agt_session_free(s);
    agt_registry_free(hook_reg);
}

int main(void)
{
    make_workspace();
    agt_registry *reg = make_chat_registry();
    T_CHECK(reg != NULL, "chat registry");
    test_mode_table(reg);
    test_pending(reg);
    test_reason_wording(reg);
    test_approver(reg);
    test_hooks(reg);
    test_hook_changes_registry();
    agt_registry_free(reg);
    remove_tree(ws_root);
    return t_done();
}
