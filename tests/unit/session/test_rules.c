/* Permission rules: syntax, precedence, compound commands, path patterns. */
#include "common.h"
#include "session/policy.h"

static void check_bad(agt_session *s, const char *rule, const char *want_msg)
{
    int rc = agt_session_add_rule(s, AGT_RULE_ALLOW, rule);
    T_EQ_INT(rc, AGT_EINVALID, "malformed rule '%s' rejected", rule);
    T_EQ_STR(agt_error_message(), want_msg, "message for '%s'", rule);
}

static void test_syntax(agt_session *s)
{
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ALLOW, "Bash"), AGT_OK, "Tool form");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ALLOW, " Bash(git *) "), AGT_OK, "Tool(pattern)");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "Read(*)"), AGT_OK, "Tool(*) = Tool");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ASK, "mcp__srv__tool"), AGT_OK, "MCP tool name");
    /* an empty quoted word in a pattern (fuzz_rule: read past the end of its
     * unterminated text) */
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "Bash('' x *)"), AGT_OK,
             "pattern with an empty quoted word");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "Bash(\"\")"), AGT_OK,
             "pattern that is one empty word");
    T_EQ_INT(agt_session_add_rule(s, 7, "Bash"), AGT_EINVAL, "unknown kind");
    check_bad(s, "", "rule '': a rule names a tool, as Tool or Tool(pattern)");
    check_bad(s, "Bash(git *", "rule 'Bash(git *': the pattern must end with ')'");
    check_bad(s, "Bash()", "rule 'Bash()': the pattern in () is empty");
    check_bad(s, "Ba sh",
              "rule 'Ba sh': ' ' cannot appear in a tool name (write Tool, "
              "Tool(pattern), or '*' alone for every tool)");
    check_bad(s, "(x)", "rule '(x)': the tool name is missing");
    check_bad(s, "TodoList(x)",
              "rule 'TodoList(x)': TodoList rules match the tool name only; "
              "write 'TodoList' without a pattern");
    check_bad(s, "Edit(../x)",
              "rule 'Edit(../x)': the path pattern climbs out of the "
              "workspace root; write it as an absolute path");
    int rc = agt_session_add_rule(s, AGT_RULE_ALLOW, "Edit(src/[a)");
    T_EQ_INT(rc, AGT_EINVALID, "bad glob rejected");
    T_CHECK(strstr(agt_error_message(), "rule 'Edit(src/[a)': bad path pattern") != NULL,
            "bad glob message names the rule: %s", agt_error_message());

    const char *doc = "{\"allow\":[\"Bash(ls *)\"],\"deny\":[\"Bash(rm *)\",\"Write(\"]}";
    char *before = NULL, *after = NULL;
    agt_session_rules(s, &before);
    T_EQ_INT(agt_session_load_rules(s, doc, strlen(doc)), AGT_EINVALID, "load: malformed rule");
    T_EQ_STR(agt_error_message(), "rules: deny[1]: rule 'Write(': the pattern must end with ')'",
             "load: message names list, index and rule");
    agt_session_rules(s, &after);
    T_EQ_STR(after, before, "load: all or nothing");
    agt_free(before);
    agt_free(after);
    T_EQ_INT(agt_session_load_rules(s, "{\"allow\":\"Bash\"}", 16), AGT_EINVALID,
             "load: list not an array");
    T_EQ_INT(agt_session_load_rules(s, "{\"allow\":[", 10), AGT_EPARSE, "load: not JSON");
}

static void test_precedence(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    const char *rules = "{\"allow\":[\"Bash(git *)\",\"Bash(npm test)\"],"
                        "\"ask\":[\"Bash(git push *)\"],"
                        "\"deny\":[\"Bash(git push --force*)\",\"Bash(rm *)\"],"
                        "\"comment\":\"ignored\"}";
    T_EQ_INT(agt_session_load_rules(s, rules, strlen(rules)), AGT_OK, "load rules");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log src/a.c\"}"), "ran",
             "allow: * crosses / and spaces");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"npm test\"}"), "ran", "allow: exact pattern");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"npm test --watch\"}"), "pending",
             "exact pattern does not cover more");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git push origin main\"}"), "pending",
             "ask beats allow");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git push --force origin\"}"), "error:-11",
             "deny beats ask and allow");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status; ls\"}"), "pending",
             "compound: every part must be allowed");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status && curl http://e.com\"}"), "pending",
             "compound &&: curl not covered");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status; rm -rf x\"}"), "error:-11",
             "compound: a denied part denies");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log $(rm -rf x)\"}"), "error:-11",
             "substitution is checked as its own command");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git commit -m \\\"a; rm -rf x\\\"\"}"), "ran",
             "quoted separator stays one command");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status | git diff\"}"), "ran",
             "compound of allowed parts runs");
    /* `*` in an allow rule would also match a redirection into a file */
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log > notes.txt\"}"), "pending",
             "allow rule does not cover writing a file with >");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log >>notes.txt\"}"), "pending", "nor with >>");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log 2>err.txt\"}"), "pending", "nor with 2>");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log &> all.txt\"}"), "pending", "nor with &>");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log 2>&1\"}"), "ran",
             "a descriptor duplication writes no file");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log > /dev/null\"}"), "ran",
             "/dev/null writes no file");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git log --grep '>x'\"}"), "ran",
             "a quoted > is no redirection");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"npm test > log.txt\"}"), "pending",
             "an exact rule does not cover a redirection either");
    agt_result *r;
    disp(s, "d1", "Bash", "{\"command\":\"rm -rf build\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "Bash call refused: the rule 'Bash(rm *)' in the deny list forbids it. Do not "
             "retry it; take another approach or ask the user to change the rules.",
             "deny result text");
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "deny status");
    agt_result_free(r);
    /* deny applies in every mode */
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"rm x\"}"), "error:-11", "deny in yolo");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git push x\"}"), "ran", "yolo skips ask rules");
    agt_session_set_mode(s, AGT_MODE_AUTO);
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"rm x\"}"), "error:-11", "deny in auto");
    agt_session_free(s);
}

static void path_session(agt_registry *reg, const char *rule, const char *label)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ALLOW, rule), AGT_OK, "%s: add", label);
    char abs[PATH_MAX + 64];
    snprintf(abs, sizeof abs, "{\"path\":\"%s/src/c.c\",\"content\":\"\"}", ws_root);
    T_EQ_STR(outcome(s, "Edit", "{\"path\":\"src/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "ran", "%s: relative path", label);
    T_EQ_STR(outcome(s, "Edit",
                     "{\"path\":\"./src/x/../b.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "ran", "%s: ./ and .. normalised", label);
    T_EQ_STR(outcome(s, "Write", abs), "pending", "%s: Write is another tool", label);
    snprintf(abs, sizeof abs,
             "{\"path\":\"%s/src/deep/c.c\",\"old_string\":\"a\",\"new_string\":\"b\"}", ws_root);
    T_EQ_STR(outcome(s, "Edit", abs), "ran", "%s: absolute path inside the root", label);
    T_EQ_STR(
        outcome(s, "Edit", "{\"path\":\"docs/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
        "pending", "%s: other folder asks", label);
    T_EQ_STR(
        outcome(s, "Edit", "{\"path\":\"lib/src/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
        "pending", "%s: anchored at the root", label);
    agt_session_free(s);
}

static void test_paths(agt_registry *reg)
{
    path_session(reg, "Edit(./src/**)", "./src/**");
    path_session(reg, "Edit(src/**)", "src/**");
    char rule[PATH_MAX + 32];
    snprintf(rule, sizeof rule, "Edit(%s/src/**)", ws_root);
    path_session(reg, rule, "<root>/src/**");
    path_session(reg, "Edit(src/)", "src/ (folder)");

    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    const char *rules = "{\"allow\":[\"Edit(*.md)\",\"Edit(build)\"],"
                        "\"deny\":[\"Read(/etc/**)\",\"Read(*.pem)\",\"Grep(*password*)\","
                        "\"FetchURL(https://evil.example/*)\"]}";
    T_EQ_INT(agt_session_load_rules(s, rules, strlen(rules)), AGT_OK, "path rules");
    T_EQ_STR(outcome(s, "Edit",
                     "{\"path\":\"a/b/README.md\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "ran", "pattern without / matches the name at any depth");
    T_EQ_STR(outcome(s, "Edit",
                     "{\"path\":\"x/build/out.o\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "ran", "a folder name covers what is inside (gitignore)");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"/etc/passwd\"}"), "error:-11",
             "absolute pattern outside the root");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"/etc/../etc/hosts\"}"), "error:-11",
             "absolute path normalised");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"keys/server.pem\"}"), "error:-11",
             "read denied by name glob");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"src/main.c\"}"), "ran", "read allowed by default");
    T_EQ_STR(outcome(s, "Grep", "{\"pattern\":\"db_password =\"}"), "error:-11",
             "Grep rule on the pattern");
    T_EQ_STR(outcome(s, "FetchURL", "{\"url\":\"https://evil.example/a/b\"}"), "error:-11",
             "FetchURL rule on the URL");
    T_EQ_STR(outcome(s, "FetchURL", "{\"url\":\"https://good.example/\"}"), "ran",
             "FetchURL allowed by default");
    agt_session_free(s);
}

/* The rule '*' names every tool (issue 18: a locked-down session writes
 * deny ["*"] and allows a few tools). It is the weakest rule: it decides
 * only calls that no rule of their own tool decides. */
static void test_every_tool(agt_registry *reg)
{
    agt_session *s;
    agt_session_new(&s, reg, ws_root);
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ALLOW, "*"), AGT_OK, "'*' in the allow list");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ASK, " * "), AGT_OK, "'*' in the ask list");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "*(*)"), AGT_OK, "'*(*)' is '*'");
    check_bad(s, "*(git *)",
              "rule '*(git *)': the rule '*' names every tool and takes no pattern (tools match "
              "different arguments); write '*', or Tool(pattern) for one tool");
    check_bad(s, "*x",
              "rule '*x': '*' cannot appear in a tool name (write Tool, Tool(pattern), or '*' "
              "alone for every tool)");
    check_bad(s, "**",
              "rule '**': '*' cannot appear in a tool name (write Tool, Tool(pattern), or '*' "
              "alone for every tool)");
    char *json = NULL;
    agt_session_rules(s, &json);
    T_EQ_STR(json, "{\"allow\":[\"*\"],\"ask\":[\"*\"],\"deny\":[\"*(*)\"],\"session\":[]}",
             "'*' rules listed as written");
    agt_free(json);
    agt_session_free(s);

    /* deny everything, allow a few */
    agt_session_new(&s, reg, ws_root);
    const char *locked = "{\"deny\":[\"*\"],\"allow\":[\"Read\",\"Bash(git status)\"]}";
    T_EQ_INT(agt_session_load_rules(s, locked, strlen(locked)), AGT_OK, "load deny '*'");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"a.c\"}"), "ran", "deny '*': allowed Read runs");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status\"}"), "ran",
             "deny '*': allowed command runs");
    agt_result *r;
    disp(s, "d1", "Write", "{\"path\":\"a.c\",\"content\":\"x\"}", &r);
    T_EQ_STR(agt_result_text(r),
             "Write call refused: the rule '*' in the deny list forbids it. Do not retry it; take "
             "another approach or ask the user to change the rules.",
             "deny '*': Write refused naming the rule");
    T_EQ_INT(agt_result_status(r), AGT_EDENIED, "deny '*': status");
    agt_result_free(r);
    T_EQ_STR(outcome(s, "Grep", "{\"pattern\":\"x\"}"), "error:-11",
             "deny '*': a read tool without an allow rule is refused");
    T_EQ_STR(outcome(s, "TodoList", "{}"), "error:-11", "deny '*': TodoList refused");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"git status; rm x\"}"), "error:-11",
             "deny '*': a command the Bash rule does not cover is refused");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"$CMD\"}"), "error:-11",
             "deny '*': a command that cannot be checked is refused");
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_STR(outcome(s, "Write", "{\"path\":\"a.c\",\"content\":\"x\"}"), "error:-11",
             "deny '*' holds in yolo mode");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"a.c\"}"), "ran", "yolo: allowed Read runs");
    agt_session_free(s);

    /* allow everything, deny and ask a few */
    agt_session_new(&s, reg, ws_root);
    const char *open_ = "{\"allow\":[\"*\"],\"deny\":[\"Bash(rm *)\"],\"ask\":[\"Write\"]}";
    T_EQ_INT(agt_session_load_rules(s, open_, strlen(open_)), AGT_OK, "load allow '*'");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"make\"}"), "ran", "allow '*': Bash runs");
    T_EQ_STR(outcome(s, "Edit", "{\"path\":\"a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}"),
             "ran", "allow '*': Edit runs");
    T_EQ_STR(outcome(s, "Ping", "{}"), "ran", "allow '*': a network tool runs");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"rm x\"}"), "error:-11",
             "allow '*': the deny rule of the tool still refuses");
    T_EQ_STR(outcome(s, "Write", "{\"path\":\"a.c\",\"content\":\"x\"}"), "pending",
             "allow '*': the ask rule of the tool still asks");
    T_EQ_STR(outcome(s, "Bash", "{\"command\":\"$CMD\"}"), "pending",
             "allow '*': a command that cannot be checked still asks");
    agt_session_free(s);

    /* ask everything: the tool's own allow rule decides over it */
    agt_session_new(&s, reg, ws_root);
    agt_session_add_rule(s, AGT_RULE_ASK, "*");
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Grep");
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"a.c\"}"), "pending", "ask '*': Read asks");
    T_EQ_STR(outcome(s, "Grep", "{\"pattern\":\"x\"}"), "ran", "ask '*': allowed Grep runs");
    disp(s, "k1", "Glob", "{\"pattern\":\"*.c\"}", &r);
    agt_session_pending(s, &json);
    T_CHECK(json && strstr(json, "\"reason\":\"the rule '*' is in the ask list\"") != NULL,
            "ask '*': the reason names the rule: %s", json ? json : "(null)");
    agt_free(json);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_STR(outcome(s, "Read", "{\"path\":\"a.c\"}"), "ran", "ask '*' skipped in yolo");
    agt_session_free(s);
}

int main(void)
{
    make_workspace();
    agt_registry *reg = make_chat_registry();
    T_CHECK(reg != NULL, "chat registry");
    agt_session *s = NULL;
    T_EQ_INT(agt_session_new(&s, reg, ws_root), AGT_OK, "session");
    test_syntax(s);
    agt_session_free(s);
    test_precedence(reg);
    test_paths(reg);
    test_every_tool(reg);
    agt_registry_free(reg);
    remove_tree(ws_root);
    return t_done();
}
