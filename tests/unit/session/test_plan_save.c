/* Plan mode (EnterPlanMode, limits, ExitPlanMode approval) and session
 * save/restore. */
#include "common.h"

static char plan_path[PATH_MAX];
static char state_dir[PATH_MAX + 16]; /* $XDG_STATE_HOME of the test */

static void write_call(agt_session *s, const char *id, const char *path, const char *content,
                       agt_result **r, int *rc)
{
    char args[PATH_MAX + 256];
    snprintf(args, sizeof args, "{\"path\":\"%s\",\"content\":\"%s\"}", path, content);
    *rc = disp(s, id, "Write", args, r);
}

static void test_plan(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    agt_result *r;
    int rc;
    T_CHECK(agt_session_plan_file(s) == NULL, "no plan file before plan mode");
    T_EQ_INT(disp(s, "x0", "ExitPlanMode", "{}", &r), AGT_OK, "ExitPlanMode outside plan mode");
    T_EQ_STR(agt_result_text(r),
             "ExitPlanMode only works in plan mode, and the session is not in plan mode. Go on "
             "with the task.",
             "outside plan mode text");
    T_EQ_INT(agt_result_status(r), AGT_ESTATE, "outside plan mode status");
    agt_result_free(r);

    T_EQ_INT(disp(s, "e1", "EnterPlanMode", "{}", &r), AGT_OK, "EnterPlanMode runs (read)");
    T_EQ_INT(agt_session_mode(s), AGT_MODE_PLAN, "mode is plan");
    const char *pf = agt_session_plan_file(s);
    T_CHECK(pf != NULL, "plan file chosen");
    snprintf(plan_path, sizeof plan_path, "%s", pf ? pf : "");
    char prefix[PATH_MAX + 64];
    snprintf(prefix, sizeof prefix, "%s/agenttools/plans/", state_dir);
    T_CHECK(strncmp(plan_path, prefix, strlen(prefix)) == 0 &&
                strlen(plan_path) == strlen(prefix) + 16 + 3 &&
                strcmp(plan_path + strlen(plan_path) - 3, ".md") == 0,
            "plan file under $XDG_STATE_HOME/agenttools/plans/<16 hex>.md: %s", plan_path);
    char want[PATH_MAX + 512];
    snprintf(want, sizeof want,
             "Plan mode is on. Explore with the read-only tools and write your plan to the plan "
             "file %s (Write and Edit may change only that file while planning). When the plan "
             "is ready, call ExitPlanMode to ask the user to approve it.",
             plan_path);
    T_EQ_STR(agt_result_text(r), want, "EnterPlanMode text names the plan file");
    agt_result_free(r);
    struct stat st;
    snprintf(prefix, sizeof prefix, "%s/agenttools/plans", state_dir);
    T_CHECK(stat(prefix, &st) == 0 && S_ISDIR(st.st_mode), "plan folder created");
    snprintf(prefix, sizeof prefix, "%s/.agenttools", ws_root);
    T_CHECK(lstat(prefix, &st) != 0, "nothing created in the workspace");

    /* limits */
    write_call(s, "w1", "notes.md", "x", &r, &rc);
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "Write to another file refused");
    snprintf(want, sizeof want,
             "In plan mode Write may only change the plan file %s, not 'notes.md'. Put your "
             "plan there, then call ExitPlanMode to ask the user to approve it.",
             plan_path);
    T_EQ_STR(agt_result_text(r), want, "refusal text");
    agt_result_free(r);
    T_EQ_STR(outcome(s, "Edit", "{\"path\":\"src/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "error:-11", "Edit of another file refused");
    T_EQ_STR(outcome(s, "TaskStop", "{\"task_id\":\"t1\"}"), "error:-11", "TaskStop refused");
    T_EQ_STR(outcome(s, "CronCreate", "{\"cron\":\"*/5 * * * *\",\"prompt\":\"x\"}"), "ran",
             "CronCreate is not refused in plan mode (the reference blocks TaskStop and "
             "CronDelete only); from yolo it runs");
    T_EQ_STR(outcome(s, "CronDelete", "{\"id\":\"0123abcd\"}"), "error:-11", "CronDelete refused");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log\"}"), "ran",
             "Bash keeps the rules of yolo, the mode plan mode was entered from: it runs");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"a.c\"}"), "ran", "reads run");

    T_EQ_INT(disp(s, "x1", "ExitPlanMode", "{}", &r), AGT_OK, "ExitPlanMode with no plan");
    snprintf(want, sizeof want,
             "The plan file %s is empty. Write your plan into it with Write, then call "
             "ExitPlanMode again.",
             plan_path);
    T_EQ_STR(agt_result_text(r), want, "empty plan refused");
    agt_result_free(r);

    write_call(s, "w2", plan_path, "   ", &r, &rc);
    T_EQ_STR(agt_result_text(r), "ran", "Write to the plan file runs without asking");
    agt_result_free(r);
    T_EQ_STR(outcome(s, "ExitPlanMode", "{}"), "error:-19", "blank plan is empty");
    write_call(s, "w3", plan_path, "1. do it", &r, &rc);
    agt_result_free(r);
    /* every tool that changes one named file gets the plan file shortcut
     * (MultiEdit asked for approval while Write and Edit did not) */
    char margs[PATH_MAX + 200];
    snprintf(margs, sizeof margs,
             "{\"path\":\"%s\",\"edits\":[{\"old_string\":\"do\",\"new_string\":\"do\"}]}",
             plan_path);
    T_EQ_STR(outcome(s, "MultiEdit", margs), "ran",
             "MultiEdit of the plan file runs without asking");
    snprintf(margs, sizeof margs, "{\"path\":\"%s\",\"old_string\":\"do\",\"new_string\":\"d\"}",
             plan_path);
    T_EQ_STR(outcome(s, "Edit", margs), "ran", "Edit of the plan file runs without asking");
    T_EQ_STR(
        outcome(s, "MultiEdit",
                "{\"path\":\"notes.md\",\"edits\":[{\"old_string\":\"a\",\"new_string\":\"b\"}]}"),
        "error:-11", "MultiEdit of another file refused");
    T_EQ_STR(
        outcome(s, "NotebookEdit", "{\"path\":\"a.ipynb\",\"cell_index\":0,\"new_source\":\"x\"}"),
        "error:-11", "NotebookEdit of another file refused");

    /* option label rules */
    T_EQ_STR(outcome(s, "ExitPlanMode", "{\"options\":[{\"label\":\"approve\"}]}"), "error:-4",
             "reserved label, any case");
    disp(s, "x2", "ExitPlanMode", "{\"options\":[{\"label\":\"Fast\"},{\"label\":\"FAST\"}]}", &r);
    T_EQ_STR(agt_result_text(r),
             "Options 1 and 2 of ExitPlanMode have the same label 'FAST'; labels must be unique. "
             "Rename one and call ExitPlanMode again.",
             "duplicate label text");
    agt_result_free(r);
    char longlabel[200];
    snprintf(longlabel, sizeof longlabel, "{\"options\":[{\"label\":\"%081d\"}]}", 0);
    T_EQ_STR(outcome(s, "ExitPlanMode", longlabel), "error:-4", "label over 80 characters");
    T_EQ_STR(outcome(s, "ExitPlanMode",
                     "{\"options\":[{\"label\":\"a\"},{\"label\":\"b\"},{\"label\":\"c\"},"
                     "{\"label\":\"d\"}]}"),
             "error:-4", "more than 3 options");

    /* always asks, even in yolo (the mode before plan mode) */
    const char *opts = "{\"options\":[{\"label\":\"Option A\",\"description\":\"a\"},"
                       "{\"label\":\"Option B\",\"description\":\"b\"}]}";
    T_EQ_INT(disp(s, "x3", "ExitPlanMode", opts, &r), AGT_EPENDING, "ExitPlanMode asks");
    char *json;
    agt_session_pending(s, &json);
    T_CHECK(strstr(json, "\"reason\":\"ExitPlanMode always asks the user to approve the plan\","
                         "\"suggested_rule\":null") != NULL,
            "pending ExitPlanMode: %s", json);
    agt_free(json);
    T_EQ_INT(agt_session_answer(s, "x3", AGT_DECISION_REJECT, "add tests", &r), AGT_OK,
             "reject the plan");
    snprintf(want, sizeof want,
             "The user rejected the plan: add tests. You are still in plan mode: revise the "
             "plan file %s and call ExitPlanMode again.",
             plan_path);
    T_EQ_STR(agt_result_text(r), want, "rejected plan text");
    agt_result_free(r);
    T_EQ_INT(agt_session_mode(s), AGT_MODE_PLAN, "still in plan mode");

    disp(s, "x4", "ExitPlanMode", opts, &r);
    T_EQ_INT(agt_session_answer(s, "x4", AGT_DECISION_APPROVE_SESSION, "option b", &r), AGT_OK,
             "approve the plan with an option");
    snprintf(want, sizeof want,
             "The user approved the plan. Plan mode is over and the session is back in yolo "
             "mode. Carry out the plan in %s.\nThe user chose the option: Option B",
             plan_path);
    T_EQ_STR(agt_result_text(r), want, "approved plan text");
    T_EQ_INT(agt_session_mode(s), AGT_MODE_YOLO, "back to the mode before plan mode");
    agt_result_free(r);
    agt_session_rules(s, &json);
    T_CHECK(strstr(json, "\"session\":[]") != NULL, "approving a plan stores no rule");
    agt_free(json);

    /* host-set plan file, comment instead of option */
    T_EQ_INT(agt_session_set_plan_file(s, "docs/../PLAN.md"), AGT_OK, "set plan file");
    snprintf(want, sizeof want, "%s/PLAN.md", ws_root);
    T_EQ_STR(agt_session_plan_file(s), want, "plan file normalised and absolute");
    agt_session_set_mode(s, AGT_MODE_PLAN);
    write_call(s, "w4", "PLAN.md", "x", &r, &rc);
    T_EQ_INT(agt_result_is_error(r), 0, "relative path to the plan file allowed");
    agt_result_free(r);
    write_call(s, "w5", want, "plan", &r, &rc);
    agt_result_free(r);
    disp(s, "x5", "ExitPlanMode", "{}", &r);
    agt_session_answer(s, "x5", AGT_DECISION_APPROVE, "looks good", &r);
    T_CHECK(strstr(agt_result_text(r), "back in yolo mode") &&
                strstr(agt_result_text(r), "\nThe user's comment: looks good"),
            "comment passed on");
    agt_result_free(r);
    agt_session_free(s);
}

/* Plan mode keeps the approval rules of the mode it was entered from (the
 * reference: "All other tools (including Bash) are still governed by the
 * current permission rules"); only its own limits are added. */
static void test_plan_keeps_mode(agt_registry *reg)
{
    static const struct {
        int from;
        const char *name;
        const char *bash, *cron_create, *unchecked, *write_other, *skill, *ping;
    } rows[] = {
        {AGT_MODE_MANUAL, "manual", "pending", "pending", "pending", "error:-11", "ran", "pending"},
        {AGT_MODE_YOLO, "yolo", "ran", "ran", "error:-11", "error:-11", "ran", "ran"},
        {AGT_MODE_AUTO, "auto", "ran", "ran", "error:-11", "error:-11", "ran", "ran"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        agt_session *s;
        agt_session_new(&s, reg, ws_root);
        agt_session_set_mode(s, rows[i].from);
        agt_result *r;
        disp(s, "e", "EnterPlanMode", "{}", &r);
        agt_result_free(r);
        T_EQ_INT(agt_session_mode(s), AGT_MODE_PLAN, "plan mode from %s", rows[i].name);
        T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log\"}"), rows[i].bash,
                 "plan from %s: Bash", rows[i].name);
        T_EQ_STR(outcome(s, "CronCreate", "{\"cron\":\"*/5 * * * *\",\"prompt\":\"x\"}"),
                 rows[i].cron_create, "plan from %s: CronCreate", rows[i].name);
        T_EQ_STR(outcome(s, "Bash", "{\"command\":\"$CMD\"}"), rows[i].unchecked,
                 "plan from %s: a command that cannot be checked", rows[i].name);
        T_EQ_STR(outcome(s, "Write", "{\"path\":\"notes.md\",\"content\":\"x\"}"),
                 rows[i].write_other, "plan from %s: Write of another file", rows[i].name);
        T_EQ_STR(outcome(s, "Skill", "{\"skill\":\"x\"}"), rows[i].skill, "plan from %s: Skill",
                 rows[i].name);
        T_EQ_STR(outcome(s, "Ping", "{}"), rows[i].ping, "plan from %s: a network tool",
                 rows[i].name);
        T_EQ_STR(outcome(s, "TaskStop", "{\"task_id\":\"t1\"}"), "error:-11",
                 "plan from %s: TaskStop refused", rows[i].name);
        T_EQ_STR(outcome(s, "CronDelete", "{\"id\":\"0123abcd\"}"), "error:-11",
                 "plan from %s: CronDelete refused", rows[i].name);
        if (rows[i].from != AGT_MODE_MANUAL) {
            disp(s, "u", "Bash", "{\"command\":\"$CMD\"}", &r);
            char want[128];
            snprintf(want, sizeof want,
                     "The session is in plan mode, entered from %s mode, which does not ask, so "
                     "such a command does not run.",
                     rows[i].name);
            T_CHECK(r && strstr(agt_result_text(r), want) != NULL,
                    "plan from %s: the refusal names both modes: %s", rows[i].name,
                    r ? agt_result_text(r) : "(none)");
            agt_result_free(r);
        }
        /* deny rules hold whatever the mode before */
        agt_session_add_rule(s, AGT_RULE_DENY, "Bash(git push *)");
        T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git push origin\"}"), "error:-11",
                 "plan from %s: a deny rule refuses", rows[i].name);
        agt_session_free(s);
    }
}

/* The host switches to plan mode itself; EnterPlanMode then only reports. */
static void test_host_plan_mode(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_AUTO);
    agt_session_set_mode(s, AGT_MODE_PLAN);
    agt_result *r;
    disp(s, "e1", "EnterPlanMode", "{}", &r);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "Already in plan mode. The plan file is %s.",
             agt_session_plan_file(s) ? agt_session_plan_file(s) : "(null)");
    T_EQ_STR(agt_result_text(r), want, "EnterPlanMode in plan mode chooses and names the file");
    agt_result_free(r);
    int rc;
    write_call(s, "w1", agt_session_plan_file(s), "step 1", &r, &rc);
    agt_result_free(r);
    disp(s, "x1", "ExitPlanMode", "{}", &r);
    T_EQ_INT(agt_session_answer(s, "x1", AGT_DECISION_APPROVE, NULL, &r), AGT_OK, "approve");
    T_EQ_INT(agt_session_mode(s), AGT_MODE_AUTO, "back to the mode the host left");
    agt_result_free(r);
    agt_session_free(s);
}

static char *save(agt_session *s)
{
    char *json = NULL;
    if (agt_session_save(s, &json) != AGT_OK)
        t_diag("save failed: %s", agt_error_message());
    return json;
}

static void bad_restore(agt_session *s, const char *json, int want_rc, const char *want_msg,
                        const char *label)
{
    char *before = save(s);
    T_EQ_INT(agt_session_restore(s, json, strlen(json)), want_rc, "%s: status", label);
    if (want_msg)
        T_EQ_STR(agt_error_message(), want_msg, "%s: message", label);
    char *after = save(s);
    T_EQ_STR(after, before, "%s: session unchanged", label);
    agt_free(before);
    agt_free(after);
}

static void test_save(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    const char *rules = "{\"allow\":[\"Bash(git *)\",\"Edit(src/**)\"],\"ask\":[\"Bash(git "
                        "push *)\"],\"deny\":[\"Read(*.pem)\"]}";
    agt_session_load_rules(s, rules, strlen(rules));
    agt_result *r;
    disp(s, "c1", "Bash", "{\"command\":\"make test\"}", &r);
    agt_session_answer(s, "c1", AGT_DECISION_APPROVE_SESSION, NULL, &r);
    agt_result_free(r);
    disp(s, "t1", "TodoList",
         "{\"todos\":[{\"title\":\"write\",\"status\":\"done\"},{\"title\":\"test\",\"status\":"
         "\"in_progress\"}]}",
         &r);
    agt_result_free(r);
    /* pending (manual mode): dropped by save; made before plan mode, which
     * asks as auto, the mode it is entered from, that is never */
    T_EQ_INT(disp(s, "p1", "Bash", "{\"command\":\"ls\"}", &r), AGT_EPENDING, "a pending call");
    agt_session_set_mode(s, AGT_MODE_AUTO);
    agt_session_set_plan_file(s, "PLAN.md");
    agt_session_set_mode(s, AGT_MODE_PLAN);

    char *saved = save(s);
    char want[PATH_MAX + 1024];
    snprintf(want, sizeof want,
             "{\"format\":1,\"mode\":\"plan\",\"rules\":{\"allow\":[\"Bash(git *)\",\"Edit(src/"
             "**)\"],\"ask\":[\"Bash(git push *)\"],\"deny\":[\"Read(*.pem)\"],\"session\":["
             "\"Bash(make test)\"]},\"todos\":[{\"title\":\"write\",\"status\":\"done\"},{"
             "\"title\":\"test\",\"status\":\"in_progress\"}],\"plan\":{\"file\":\"%s/PLAN.md\","
             "\"mode_before\":\"auto\"}}",
             ws_root);
    T_EQ_STR(saved, want, "saved document");

    agt_session *s2;
    agt_session_new(&s2, reg, ws_root);
    T_EQ_INT(agt_session_restore(s2, saved, strlen(saved)), AGT_OK, "restore");
    char *again = save(s2);
    T_EQ_STR(again, saved, "round trip");
    agt_free(again);
    T_EQ_INT(agt_session_mode(s2), AGT_MODE_PLAN, "mode restored");
    T_EQ_STR(outcome(s2, "Bash", "{\"command\":\"make test\"}"), "ran",
             "session approval restored");
    T_EQ_STR(outcome(s2, "Read", "{\"path\":\"k/a.pem\"}"), "error:-11", "deny rule restored");
    char *todos;
    agt_session_todos(s2, &todos);
    T_EQ_STR(todos,
             "[{\"title\":\"write\",\"status\":\"done\"},{\"title\":\"test\",\"status\":\"in_"
             "progress\"}]",
             "todos restored");
    agt_free(todos);
    agt_session_set_mode(s2, AGT_MODE_MANUAL);

    /* restore drops pending calls */
    T_EQ_INT(agt_session_restore(s, saved, strlen(saved)), AGT_OK, "restore over itself");
    char *pend;
    agt_session_pending(s, &pend);
    T_EQ_STR(pend, "[]", "pending approvals dropped");
    agt_free(pend);

    /* an older/smaller file, unknown fields */
    const char *old = "{\"format\":1,\"mode\":\"yolo\",\"todos\":[{\"title\":\"a\",\"status\":"
                      "\"done\",\"priority\":3}],\"future\":{\"x\":[1,2]},\"rules\":{\"allow\":"
                      "[\"Bash(ls *)\"],\"notes\":\"x\"}}";
    T_EQ_INT(agt_session_restore(s2, old, strlen(old)), AGT_OK, "older file with unknown fields");
    char *got = save(s2);
    T_EQ_STR(got,
             "{\"format\":1,\"mode\":\"yolo\",\"rules\":{\"allow\":[\"Bash(ls *)\"],\"ask\":[],"
             "\"deny\":[],\"session\":[]},\"todos\":[{\"title\":\"a\",\"status\":\"done\"}],"
             "\"plan\":{\"file\":null,\"mode_before\":\"manual\"}}",
             "missing sections get defaults, unknown fields dropped");
    agt_free(got);

    /* corrupt files leave the session unchanged */
    char trunc[4096];
    size_t half = strlen(saved) / 2;
    memcpy(trunc, saved, half);
    trunc[half] = '\0';
    bad_restore(s, trunc, AGT_EPARSE, NULL, "truncated file");
    bad_restore(s, "", AGT_EPARSE, NULL, "empty file");
    bad_restore(s, "[]", AGT_EINVALID, "session file: expected a JSON object", "not an object");
    bad_restore(s, "{\"mode\":\"yolo\"}", AGT_EINVALID,
                "session file: \"format\" is missing or not a positive integer", "no format");
    bad_restore(s, "{\"format\":2,\"mode\":\"yolo\"}", AGT_EUNSUPPORTED,
                "session file: format 2 is newer than this library reads (1)", "newer format");
    bad_restore(s, "{\"format\":1,\"mode\":\"turbo\"}", AGT_EINVALID,
                "session file: \"mode\" must be \"manual\", \"plan\", \"yolo\" or \"auto\"",
                "bad mode");
    bad_restore(s, "{\"format\":1,\"mode\":\"yolo\",\"rules\":{\"deny\":[\"Bash(\"]}}",
                AGT_EINVALID,
                "session file: rules: deny[0]: rule 'Bash(': the pattern must end with ')'",
                "bad rule (after a good section)");
    bad_restore(s, "{\"format\":1,\"todos\":[{\"title\":\"a\",\"status\":\"later\"}]}",
                AGT_EINVALID,
                "session file: todos[0] needs a \"title\" and a \"status\" (pending, "
                "in_progress or done)",
                "bad todo");
    /* items TodoList would refuse, after a good one: a blank title, a NUL
     * (shown, the title would end there) */
    bad_restore(s,
                "{\"format\":1,\"mode\":\"yolo\",\"todos\":[{\"title\":\"a\",\"status\":"
                "\"done\"},{\"title\":\" \\t\",\"status\":\"pending\"}]}",
                AGT_EINVALID,
                "session file: todos[1].title is blank or holds a NUL character (\\u0000); "
                "TodoList accepts neither",
                "blank todo title");
    bad_restore(s, "{\"format\":1,\"todos\":[{\"title\":\"a\\u0000b\",\"status\":\"pending\"}]}",
                AGT_EINVALID,
                "session file: todos[0].title is blank or holds a NUL character (\\u0000); "
                "TodoList accepts neither",
                "NUL in a todo title");
    bad_restore(s, "{\"format\":1,\"plan\":{\"file\":\"rel.md\"}}", AGT_EINVALID,
                "session file: plan.file must be an absolute path", "bad plan file");
    T_EQ_INT(agt_session_mode(s), AGT_MODE_PLAN, "mode unchanged after failures");
    agt_free(saved);
    agt_session_free(s);
    agt_session_free(s2);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *slurp(const char *path)
{
    static char buf[256];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

/* Issue 14: a plan file through a symlink, a symlinked .agenttools, and a
 * restored document naming a folder or a path outside. Each of these was
 * accepted by the old code (PLAN.md -> ../elsewhere/target.txt was stored
 * as the target and Write in plan mode overwrote it). */
static void test_plan_links(agt_registry *reg)
{
    char out[PATH_MAX + 16], p[PATH_MAX + 96], q[PATH_MAX + 96];
    snprintf(out, sizeof out, "%s-elsewhere", ws_root);
    mkdir(out, 0755);
    snprintf(p, sizeof p, "%s/target.txt", out);
    put(p, "outside\n");
    snprintf(q, sizeof q, "%s/PLAN.md", ws_root);
    unlink(q); /* test_save's plan file */
    T_EQ_INT(symlink(p, q), 0, "PLAN.md -> ../elsewhere/target.txt");
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_INT(agt_session_set_plan_file(s, "PLAN.md"), AGT_EDENIED, "symlinked PLAN.md refused");
    T_CHECK(strstr(agt_error_message(), "is a symbolic link") != NULL, "says why: %s",
            agt_error_message());
    agt_result *r;
    agt_session_set_mode(s, AGT_MODE_PLAN);
    int wrc;
    write_call(s, "pl1", "PLAN.md", "new plan", &r, &wrc);
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "Write through PLAN.md refused in plan mode");
    agt_result_free(r);
    T_EQ_STR(slurp(p), "outside\n", "the target outside is untouched");
    unlink(q);

    /* .agenttools -> a folder outside */
    snprintf(q, sizeof q, "%s/.agenttools", ws_root);
    symlink(out, q);
    T_EQ_INT(agt_session_set_plan_file(s, ".agenttools/plans/p.md"), AGT_EDENIED,
             "plan file under a symlinked .agenttools refused");
    snprintf(p, sizeof p, "%s/plans", out);
    struct stat st;
    T_CHECK(lstat(p, &st) != 0, "no plans folder created outside");
    unlink(q);
    agt_session_free(s);

    /* restored documents */
    agt_session_new(&s, reg, ws_root);
    char doc[PATH_MAX + 256];
    snprintf(doc, sizeof doc, "{\"format\":1,\"plan\":{\"file\":\"%s\"}}", out);
    T_EQ_INT(agt_session_restore(s, doc, strlen(doc)), AGT_EINVALID,
             "restored plan file: a folder outside refused");
    snprintf(doc, sizeof doc, "{\"format\":1,\"plan\":{\"file\":\"%s/target.txt\"}}", out);
    T_EQ_INT(agt_session_restore(s, doc, strlen(doc)), AGT_EINVALID,
             "restored plan file: a file outside refused");
    snprintf(p, sizeof p, "%s/adir", ws_root);
    mkdir(p, 0755);
    snprintf(doc, sizeof doc, "{\"format\":1,\"plan\":{\"file\":\"%s\"}}", p);
    T_EQ_INT(agt_session_restore(s, doc, strlen(doc)), AGT_EINVALID,
             "restored plan file: a folder inside refused");
    T_CHECK(agt_session_plan_file(s) == NULL, "no plan file after the refusals");
    snprintf(doc, sizeof doc,
             "{\"format\":1,\"plan\":{\"file\":\"%s/agenttools/plans/0123456789abcdef.md\"}}",
             state_dir);
    T_EQ_INT(agt_session_restore(s, doc, strlen(doc)), AGT_OK,
             "restored plan file in the plan folder accepted");
    rmdir(p);
    agt_session_free(s);
    snprintf(p, sizeof p, "%s/target.txt", out);
    unlink(p);
    rmdir(out);
}

int main(void)
{
    make_workspace();
    snprintf(state_dir, sizeof state_dir, "%s-state", ws_root);
    mkdir(state_dir, 0700);
    setenv("XDG_STATE_HOME", state_dir, 1);
    agt_registry *reg = make_chat_registry();
    T_CHECK(reg != NULL, "chat registry");
    test_plan(reg);
    test_plan_keeps_mode(reg);
    test_host_plan_mode(reg);
    test_save(reg);
    test_plan_links(reg);
    agt_registry_free(reg);
    remove_tree(ws_root);
    remove_tree(state_dir);
    return t_done();
}
