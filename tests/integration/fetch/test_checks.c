/* Argument rules of the host-backed tools (AskUserQuestion, WebSearch,
 * Skill) that their schemas cannot say, checked through
 * agt_session_dispatch before the host provider and before approval. The
 * expected texts are the wording of lib/tools/checks.c; the rules are those of
 * TOOLS.md. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"

static int calls;
static char last_tool[64];

static int host(agt_call *call, void *payload)
{
    (void)payload;
    calls++;
    snprintf(last_tool, sizeof last_tool, "%s", agt_call_tool(call));
    return agt_call_set_text(call, "host answered");
}

/* Dispatches and returns the result text ("" when none); *is_error and
 * *status from the result; *rc the dispatch return. */
static char *run(agt_session *s, const char *tool, const char *args, int *rc, int *is_error,
                 int *status)
{
    agt_result *r = NULL;
    *rc = agt_session_dispatch(s, "c1", tool, args, &r);
    *is_error = r ? agt_result_is_error(r) : -1;
    *status = r ? agt_result_status(r) : 1;
    char *text = strdup(r ? agt_result_text(r) : "");
    agt_result_free(r);
    return text;
}

#define Q1 "{\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"},{\"label\":\"No\"}]}"

static void expect_refused(agt_session *s, const char *tool, const char *args, const char *want,
                           const char *name)
{
    int rc, is_error, status;
    int before = calls;
    char *text = run(s, tool, args, &rc, &is_error, &status);
    T_EQ_INT(rc, AGT_OK, "%s: dispatch returns AGT_OK", name);
    T_EQ_INT(is_error, 1, "%s: error result", name);
    T_EQ_INT(calls, before, "%s: host provider not called", name);
    if (want != NULL) {
        T_EQ_STR(text, want, "%s: message", name);
        T_EQ_INT(status, AGT_EINVALID, "%s: status AGT_EINVALID", name);
    }
    free(text);
}

static void expect_ran(agt_session *s, const char *tool, const char *args, const char *name)
{
    int rc, is_error, status;
    int before = calls;
    char *text = run(s, tool, args, &rc, &is_error, &status);
    T_EQ_INT(rc, AGT_OK, "%s: dispatch returns AGT_OK", name);
    T_EQ_INT(calls, before + 1, "%s: host provider called once", name);
    T_EQ_STR(text, "host answered", "%s: the host's answer", name);
    T_EQ_STR(last_tool, tool, "%s: the host saw the tool", name);
    free(text);
}

/* Schema errors: refused, and the message names the offending place. */
static void expect_schema(agt_session *s, const char *tool, const char *args, const char *where,
                          const char *name)
{
    int rc, is_error, status;
    int before = calls;
    char *text = run(s, tool, args, &rc, &is_error, &status);
    T_CHECK(rc == AGT_OK && is_error == 1 && calls == before, "%s: refused by the schema", name);
    T_CHECK(strstr(text, where) != NULL, "%s: message names %s", name, where);
    free(text);
}

static void test_ask_user(agt_session *s)
{
    expect_ran(s, "AskUserQuestion", "{\"questions\":[" Q1 "]}", "one valid question");
    expect_ran(s, "AskUserQuestion",
               "{\"questions\":[{\"question\":\"Which database?\",\"header\":\"Database1234\","
               "\"options\":[{\"label\":\"Postgres\",\"description\":\"server\"},"
               "{\"label\":\"SQLite\",\"description\":\"file\"},{\"label\":\"MySQL\"},"
               "{\"label\":\"None\"}],\"multi_select\":true}," Q1 "]}",
               "header of 12 characters, 4 options, 2 questions");
    /* 12 code points, 14 bytes: the limit counts characters */
    expect_ran(s, "AskUserQuestion",
               "{\"questions\":[{\"question\":\"Weiter?\",\"header\":\"\xc3\x9c"
               "berpr\xc3\xbf"
               "fung!\",\"options\":[{\"label\":\"Ja\"},{\"label\":\"Nein\"}]}]}",
               "header of 12 non-ASCII characters");

    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"},"
                   "{\"label\":\"No\"},{\"label\":\"yes\"}]}]}",
                   "AskUserQuestion: question 1 (\"Proceed?\") has the answer label \"yes\" twice "
                   "(options 1 and 3); labels must be unique within a question. Fix this and "
                   "call AskUserQuestion again.",
                   "duplicate label (case ignored)");
    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"},"
                   "{\"label\":\"other\"}]}]}",
                   "AskUserQuestion: option 2 of question 1 is labelled \"other\"; leave it out: "
                   "an \"Other\" answer for free text is added automatically. Fix this and call "
                   "AskUserQuestion again.",
                   "an Other label");
    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[" Q1 ",{\"question\":\" ?\",\"options\":[{\"label\":\"A\"},"
                   "{\"label\":\"B\"}]}]}",
                   "AskUserQuestion: question 2 has no text before its \"?\". Fix this and call "
                   "AskUserQuestion again.",
                   "question without text");
    expect_refused(s, "AskUserQuestion", "{\"questions\":[" Q1 "," Q1 "]}",
                   "AskUserQuestion: questions 1 and 2 are the same (\"Proceed?\"); ask each "
                   "question once. Fix this and call AskUserQuestion again.",
                   "the same question twice");
    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[{\"question\":\"Proceed?\",\"header\":\"  \",\"options\":"
                   "[{\"label\":\"Yes\"},{\"label\":\"No\"}]}]}",
                   "AskUserQuestion: the header of question 1 is blank; give a short tag (at most "
                   "12 characters) or leave it out. Fix this and call AskUserQuestion again.",
                   "blank header");
    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"   \"},"
                   "{\"label\":\"No\"}]}]}",
                   "AskUserQuestion: option 1 of question 1 has a blank label. Fix this and call "
                   "AskUserQuestion again.",
                   "blank label");

    /* the rules the schema in chat.json holds */
    expect_schema(s, "AskUserQuestion",
                  "{\"questions\":[{\"question\":\"Proceed\",\"options\":[{\"label\":\"Yes\"},"
                  "{\"label\":\"No\"}]}]}",
                  "/questions/0/question", "question not ending in ?");
    expect_schema(s, "AskUserQuestion",
                  "{\"questions\":[{\"question\":\"Proceed?\",\"header\":\"Database12345\","
                  "\"options\":[{\"label\":\"Yes\"},{\"label\":\"No\"}]}]}",
                  "/questions/0/header", "header of 13 characters");
    expect_schema(s, "AskUserQuestion",
                  "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"}]}]}",
                  "/questions/0/options", "one option");
    expect_schema(s, "AskUserQuestion",
                  "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"A\"},"
                  "{\"label\":\"B\"},{\"label\":\"C\"},{\"label\":\"D\"},{\"label\":\"E\"}]}]}",
                  "/questions/0/options", "five options");
    expect_schema(
        s, "AskUserQuestion",
        "{\"questions\":[{\"question\":\"A?\",\"options\":[{\"label\":\"Yes\"},{\"label\":"
        "\"No\"}]},{\"question\":\"B?\",\"options\":[{\"label\":\"Yes\"},{\"label\":"
        "\"No\"}]},{\"question\":\"C?\",\"options\":[{\"label\":\"Yes\"},{\"label\":"
        "\"No\"}]},{\"question\":\"D?\",\"options\":[{\"label\":\"Yes\"},{\"label\":"
        "\"No\"}]},{\"question\":\"E?\",\"options\":[{\"label\":\"Yes\"},{\"label\":"
        "\"No\"}]}]}",
        "/questions", "five questions");
    expect_schema(s, "AskUserQuestion", "{\"questions\":[]}", "/questions", "no questions");
}

static void test_web_search(agt_session *s)
{
    expect_ran(s, "WebSearch", "{\"query\":\"jansson json_dumps flags\"}", "plain query");
    expect_ran(s, "WebSearch", "{\"query\":\"x\",\"limit\":1}", "limit 1");
    expect_ran(s, "WebSearch", "{\"query\":\"x\",\"limit\":20,\"include_content\":true}",
               "limit 20");
    expect_refused(s, "WebSearch", "{\"query\":\" \\t \"}",
                   "WebSearch: the query is blank; say what to search for. Fix this and call "
                   "WebSearch again.",
                   "blank query");
    expect_schema(s, "WebSearch", "{\"query\":\"x\",\"limit\":0}", "/limit", "limit 0");
    expect_schema(s, "WebSearch", "{\"query\":\"x\",\"limit\":21}", "/limit", "limit 21");
    expect_schema(s, "WebSearch", "{\"query\":\"\"}", "/query", "empty query");
}

static void test_skill(agt_session *s)
{
    expect_ran(s, "Skill", "{\"skill\":\"pdf\",\"args\":\"report.pdf\"}", "skill with args");
    expect_refused(s, "Skill", "{\"skill\":\"  \"}",
                   "Skill: the skill name is blank; give the name of one of the skills listed in "
                   "your instructions. Fix this and call Skill again.",
                   "blank skill name");
}

/* The checks come before approval: a bad call is refused at once instead of
 * asking the user about it. */
static void test_before_approval(agt_registry *reg, const char *root)
{
    agt_session *s = NULL;
    T_EQ_INT(agt_session_new(&s, reg, root), AGT_OK, "manual-mode session");
    agt_result *r = NULL;
    /* AskUserQuestion runs without asking by default (the reference's
     * table); an ask rule makes it ask, which the checks come before */
    T_EQ_INT(agt_session_dispatch(s, "c0", "AskUserQuestion", "{\"questions\":[" Q1 "]}", &r),
             AGT_OK, "manual mode: AskUserQuestion runs without asking");
    agt_result_free(r);
    r = NULL;
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ASK, "AskUserQuestion"), AGT_OK, "ask rule");
    expect_refused(s, "AskUserQuestion",
                   "{\"questions\":[{\"question\":\"Proceed?\",\"options\":[{\"label\":\"Yes\"},"
                   "{\"label\":\"yes\"}]}]}",
                   NULL, "manual mode: a bad call is refused, not pending");
    T_EQ_INT(agt_session_dispatch(s, "c2", "AskUserQuestion", "{\"questions\":[" Q1 "]}", &r),
             AGT_EPENDING, "manual mode, ask rule: a good call waits for approval");
    agt_result_free(r);
    agt_session_free(s);
}

int main(void)
{
    char root[] = "/tmp/agt-checks-XXXXXX";
    T_CHECK(mkdtemp(root) != NULL, "workspace");
    agt_registry *reg = NULL;
    T_EQ_INT(agt_registry_new(&reg), AGT_OK, "registry");
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "chat set");

    /* without host providers these tools are not offered */
    agt_session *s = NULL;
    T_EQ_INT(agt_session_new(&s, reg, root), AGT_OK, "session");
    agt_session_set_mode(s, AGT_MODE_YOLO);
    expect_refused(s, "WebSearch", "{\"query\":\"x\"}", NULL, "WebSearch without a host provider");
    agt_session_free(s);

    T_EQ_INT(agt_registry_set_provider(reg, "AskUserQuestion", host, NULL), AGT_OK, "host: ask");
    T_EQ_INT(agt_registry_set_provider(reg, "WebSearch", host, NULL), AGT_OK, "host: search");
    T_EQ_INT(agt_registry_set_provider(reg, "Skill", host, NULL), AGT_OK, "host: skill");
    T_EQ_INT(agt_session_new(&s, reg, root), AGT_OK, "session");
    agt_session_set_mode(s, AGT_MODE_YOLO);
    test_ask_user(s);
    test_web_search(s);
    test_skill(s);
    agt_session_free(s);
    test_before_approval(reg, root);
    agt_registry_free(reg);
    rmdir(root);
    return t_done();
}
