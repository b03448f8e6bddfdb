/*
 * Bash approval corpus (bash_bypass.txt, path in argv[1]): every line run
 * through the real session API in manual and in yolo mode with the rules the
 * file names, its decision checked; then the bypass lines (deny, closed)
 * really run through the built-in Bash tool in yolo mode with the deny rule
 * Bash(rm -rf*): the folder d they target must still be there. Then the
 * session approval of compound commands, the interpreter suggestions, a
 * hook's rewritten command and the limits.
 */
#include <jansson.h>
#include <stdbool.h>

#include "common.h"

#define MAXLINES 512

typedef struct {
    char label[8];
    char *cmd;
    char *raw; /* as in the file (<NL> for newlines): test names stay one line */
} line_t;

static line_t lines[MAXLINES];
static size_t nlines;

static const char *const corpus_rules =
    "{\"deny\":[\"Bash(rm -rf*)\"],"
    "\"allow\":[\"Bash(git status)\",\"Bash(git log *)\",\"Bash(git diff *)\",\"Bash(head *)\","
    "\"Bash(tail *)\",\"Bash(make:*)\",\"Bash(cd *)\",\"Bash(ls *)\",\"Bash(ls)\","
    "\"Bash(printf *)\",\"Bash(echo *)\",\"Bash(grep *)\",\"Bash(wc *)\",\"Bash(cat *)\","
    "\"Bash(sort *)\",\"Bash(npm run test:*)\",\"Bash(./gradlew *)\","
    "\"Bash(python3 -m pytest *)\",\"Bash(true)\"]}";

static char *unescape(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(n + 1);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (strncmp(s + i, "<NL>", 4) == 0) {
            out[o++] = '\n';
            i += 4;
        } else {
            out[o++] = s[i++];
        }
    }
    out[o] = '\0';
    return out;
}

static void load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        printf("Bail out! cannot open %s\n", path);
        exit(1);
    }
    char buf[4096];
    while (fgets(buf, sizeof buf, f) && nlines < MAXLINES) {
        size_t n = strlen(buf);
        if (n && buf[n - 1] == '\n')
            buf[--n] = '\0';
        if (n == 0 || buf[0] == '#')
            continue;
        char *sp = strchr(buf, ' ');
        if (sp == NULL || (size_t)(sp - buf) >= sizeof lines[0].label)
            continue;
        memcpy(lines[nlines].label, buf, (size_t)(sp - buf));
        lines[nlines].label[sp - buf] = '\0';
        lines[nlines].cmd = unescape(sp + 1);
        lines[nlines].raw = strdup(sp + 1);
        nlines++;
    }
    fclose(f);
}

static char *bash_args(const char *cmd)
{
    json_t *j = json_pack("{s:s, s:i}", "command", cmd, "timeout", 10000); /* milliseconds */
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return t;
}

static bool starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The decision of one line in a mode: "ran", "pending", "deny", "closed",
 * "refused:<text>". */
static const char *decide(agt_session *s, const char *cmd)
{
    static char buf[512];
    static int n;
    char id[32];
    snprintf(id, sizeof id, "c%d", ++n);
    char *args = bash_args(cmd);
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, id, "Bash", args, &r);
    free(args);
    if (rc == AGT_EPENDING) {
        agt_result *x = NULL;
        agt_session_answer(s, id, AGT_DECISION_REJECT, NULL, &x);
        agt_result_free(x);
        return "pending";
    }
    const char *text = r ? agt_result_text(r) : "";
    if (rc != AGT_OK)
        snprintf(buf, sizeof buf, "rc:%d", rc);
    else if (!agt_result_is_error(r))
        snprintf(buf, sizeof buf, "ran");
    else if (starts(text, "Bash call refused: the rule 'Bash(rm -rf*)' in the deny list"))
        snprintf(buf, sizeof buf, "deny");
    else if (starts(text, "Bash call refused: this command cannot be checked before it runs"))
        snprintf(buf, sizeof buf, "closed");
    else
        snprintf(buf, sizeof buf, "refused:%.400s", text);
    agt_result_free(r);
    return buf;
}

static const char *want_for(const char *label, int mode)
{
    if (strcmp(label, "deny") == 0)
        return "deny";
    if (strcmp(label, "closed") == 0)
        return mode == AGT_MODE_YOLO ? "closed" : "pending";
    if (strcmp(label, "ask") == 0)
        return mode == AGT_MODE_YOLO ? "ran" : "pending";
    return "ran";
}

static void run_corpus(agt_registry *reg, int mode, const char *mode_name)
{
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    T_EQ_INT(agt_session_load_rules(s, corpus_rules, strlen(corpus_rules)), AGT_OK,
             "%s: corpus rules load", mode_name);
    agt_session_set_mode(s, mode);
    for (size_t i = 0; i < nlines; i++) {
        const char *want = want_for(lines[i].label, mode);
        T_EQ_STR(decide(s, lines[i].cmd), want, "%s %s line %zu: %s", mode_name, lines[i].label,
                 i + 1, lines[i].raw);
    }
    agt_session_free(s);
}

static bool keep_exists(void)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/d/keep", ws_root);
    struct stat st;
    return stat(p, &st) == 0;
}

static void make_target(void)
{
    char p[PATH_MAX + 16];
    snprintf(p, sizeof p, "%s/d", ws_root);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/d/keep", ws_root);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
}

/* The bypass lines through the real Bash tool, yolo mode, deny rm -rf. */
static void run_for_real(void)
{
    agt_registry *reg = NULL;
    agt_registry_new(&reg);
    T_EQ_INT(agt_registry_load_builtin(reg, "chat"), AGT_OK, "real: chat set with built-in Bash");
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "Bash(rm -rf*)"), AGT_OK, "real: deny rule");
    /* the control: without a bypass, an unrelated command really runs */
    make_target();
    T_EQ_STR(decide(s, "ls d"), "ran", "real: ls d runs in yolo mode");
    size_t n = 0;
    for (size_t i = 0; i < nlines; i++) {
        if (strcmp(lines[i].label, "deny") != 0 && strcmp(lines[i].label, "closed") != 0)
            continue;
        make_target();
        const char *got = decide(s, lines[i].cmd);
        T_CHECK(strcmp(got, "deny") == 0 || strcmp(got, "closed") == 0,
                "real line %zu refused (%s): %s", i + 1, got, lines[i].raw);
        T_CHECK(keep_exists(), "real line %zu left d in place: %s", i + 1, lines[i].raw);
        n++;
    }
    /* the control the other way: a plain rm really removes (the check can fail) */
    make_target();
    T_EQ_STR(decide(s, "rm -r d"), "ran", "real: rm -r d is not rm -rf: it runs");
    T_CHECK(!keep_exists(), "real: rm -r d removed d (the existence check sees removals)");
    t_diag("%zu bypass lines run through the Bash tool", n);
    agt_session_free(s);
    agt_registry_free(reg);
}

static int approver_calls;
static char approver_reason[1024], approver_rule[1024];
static int approve_session(agt_approval *req, void *payload)
{
    (void)payload;
    approver_calls++;
    json_t *j = json_loads(agt_approval_json(req), 0, NULL);
    snprintf(approver_reason, sizeof approver_reason, "%s",
             json_string_value(json_object_get(j, "reason")));
    const char *sr = json_string_value(json_object_get(j, "suggested_rule"));
    snprintf(approver_rule, sizeof approver_rule, "%s", sr ? sr : "(null)");
    json_decref(j);
    return AGT_DECISION_APPROVE_SESSION;
}

static void test_session_compound(agt_registry *reg)
{
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_approver(s, approve_session, NULL);
    approver_calls = 0;
    T_EQ_STR(decide(s, "cd sub && ls"), "ran", "cd sub && ls: approved for the session");
    T_EQ_INT(approver_calls, 1, "it asked once");
    T_EQ_STR(approver_rule, "Bash(cd sub)\nBash(ls)", "one rule per simple command");
    char *rules = NULL;
    agt_session_rules(s, &rules);
    T_EQ_STR(rules,
             "{\"allow\":[\"Bash(cd sub)\",\"Bash(ls)\"],\"ask\":[],\"deny\":[],"
             "\"session\":[\"Bash(cd sub)\",\"Bash(ls)\"]}",
             "both stored as session rules");
    agt_free(rules);
    T_EQ_STR(decide(s, "cd sub && ls"), "ran", "the same command runs again");
    T_EQ_INT(approver_calls, 1, "without asking");
    T_EQ_STR(decide(s, "cd sub && ls && rm x"), "ran", "a new part asks");
    T_EQ_INT(approver_calls, 2, "it asked");
    T_EQ_STR(approver_reason, "the command part 'rm x' is not covered by an allow rule",
             "naming only the new part");
    T_EQ_STR(approver_rule, "Bash(rm x)", "and suggesting a rule for it only");
    agt_session_free(s);

    /* the pending path stores the same rules */
    agt_session_new(&s, reg, ws_root);
    agt_result *r = NULL;
    char *args = bash_args("git status && npm test");
    T_EQ_INT(agt_session_dispatch(s, "p1", "Bash", args, &r), AGT_EPENDING, "parked");
    free(args);
    char *pending = NULL;
    agt_session_pending(s, &pending);
    json_t *pj = json_loads(pending, 0, NULL);
    json_t *item = json_array_get(pj, 0);
    T_EQ_STR(json_string_value(json_object_get(item, "suggested_rule")),
             "Bash(git status)\nBash(npm test)", "pending: suggested rules, one per line");
    T_EQ_INT((long)json_array_size(json_object_get(item, "suggested_rules")), 2,
             "pending: suggested_rules lists them");
    json_decref(pj);
    agt_free(pending);
    T_EQ_INT(agt_session_answer(s, "p1", AGT_DECISION_APPROVE_SESSION, NULL, &r), AGT_OK,
             "approved for the session");
    agt_result_free(r);
    T_EQ_STR(decide(s, "git status && npm test"), "ran", "pending path: runs again unasked");
    T_EQ_STR(decide(s, "npm test"), "ran", "each part alone is covered too");
    agt_session_free(s);
}

static void check_suggest(agt_registry *reg, const char *cmd, const char *want)
{
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_approver(s, approve_session, NULL);
    decide(s, cmd);
    T_EQ_STR(approver_rule, want, "suggestion for %s", cmd);
    agt_session_free(s);
}

static void test_suggestions(agt_registry *reg)
{
    check_suggest(reg, "python3 -m pytest tests/x.py", "Bash(python3 -m pytest *)");
    check_suggest(reg, "python3 -u tools/gen.py --out x", "Bash(python3 -u tools/gen.py *)");
    check_suggest(reg, "python -c 'print(1)'", "Bash(python -c print(1))");
    check_suggest(reg, "python -c 'import os; print(1)'", "Bash(python -c 'import os; print(1)')");
    check_suggest(reg, "node scripts/build.js --prod", "Bash(node scripts/build.js *)");
    check_suggest(reg, "npx -y prettier --check .", "Bash(npx -y prettier *)");
    check_suggest(reg, "uv run pytest -q", "Bash(uv run pytest *)");
    check_suggest(reg, "uv run python -m mypy src", "Bash(uv run python -m mypy *)");
    check_suggest(reg, "bash scripts/ci.sh fast", "Bash(bash scripts/ci.sh *)");
    check_suggest(reg, "perl -w tools/x.pl a", "Bash(perl -w tools/x.pl *)");
    check_suggest(reg, "ruby bin/setup", "Bash(ruby bin/setup)");
    check_suggest(reg, "java -jar build/app.jar --port 1", "Bash(java -jar build/app.jar *)");
    check_suggest(reg, "go run ./cmd/server -v", "Bash(go run ./cmd/server *)");
    check_suggest(reg, "cargo run --bin x -- a", "Bash(cargo run --bin x *)");
    check_suggest(reg, "git log --oneline src/", "Bash(git log *)");
    check_suggest(reg, "ls -la", "Bash(ls *)");
    check_suggest(reg, "make", "Bash(make)");
    check_suggest(reg, "echo 'a b' *.c", "Bash(echo *)");
    check_suggest(reg, "X=rm; $X -rf d", "(null)");
    /* the suggested rules cover the command they were made for */
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Bash(python3 -m pytest *)");
    T_EQ_STR(decide(s, "python3 -m pytest tests/x.py -k a"), "ran", "module rule covers it");
    T_EQ_STR(decide(s, "python3 evil.py"), "pending", "but not another script");
    agt_session_free(s);
}

/* A pre-hook that rewrites every Bash command to the payload's text. */
static int rewrite_hook(agt_hook *h, void *payload)
{
    if (strcmp(agt_hook_tool(h), "Bash") != 0)
        return AGT_OK;
    char *args = bash_args(payload);
    int rc = agt_hook_rewrite(h, args);
    free(args);
    return rc;
}

static void test_hook_rewrite(agt_registry *reg)
{
    const char *rules =
        "{\"allow\":[\"Bash(ls *)\",\"Bash(git *)\"],\"ask\":[\"Bash(git push *)\"],"
        "\"deny\":[\"Bash(rm -rf*)\"]}";
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_load_rules(s, rules, strlen(rules));
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"git push origin main");
    T_EQ_STR(decide(s, "ls -la"),
             "refused:A pre-tool-use hook rewrote the command to `git push "
             "origin main`, which needs approval: the rule 'Bash(git push *)' "
             "is in the ask list. It did not run; ask the user or take "
             "another approach.",
             "rewritten into an ask-rule command: refused");
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"X=rm; $X -rf d");
    T_EQ_STR(decide(s, "ls -la"),
             "refused:A pre-tool-use hook rewrote the command to `X=rm; $X -rf d`, which needs "
             "approval: it cannot be checked before it runs: `$X -rf d`: its command name is only "
             "known when it runs. It did not run; ask the user or take another approach.",
             "rewritten into an undecidable command: refused");
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"timeout 5 rm -rf d");
    T_EQ_STR(decide(s, "ls -la"), "deny", "rewritten into a denied command: denied");
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"ls -l");
    T_EQ_STR(decide(s, "ls -la"), "ran", "rewritten into an allowed command: runs");
    agt_session_free(s);
}

static void test_limits(agt_registry *reg)
{
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_set_mode(s, AGT_MODE_YOLO);
    size_t big = (1u << 20) + 1;
    char *cmd = malloc(big + 1);
    memset(cmd, ' ', big);
    memcpy(cmd, "echo x", 6);
    cmd[big] = '\0';
    char want[256];
    snprintf(want, sizeof want,
             "refused:Bash call refused: the command is %zu bytes long, over the 1048576-byte (1 "
             "MiB) limit of the approval check; split it into smaller commands.",
             big);
    T_EQ_STR(decide(s, cmd), want, "over 1 MiB: refused, not truncated");
    free(cmd);
    /* 300 nested subshells: over the 256 levels */
    char deep[1300];
    size_t o = 0;
    for (int i = 0; i < 300; i++) {
        deep[o++] = '(';
        deep[o++] = ' ';
    }
    deep[o++] = 'l';
    deep[o++] = 's';
    for (int i = 0; i < 300; i++) {
        deep[o++] = ' ';
        deep[o++] = ')';
    }
    deep[o] = '\0';
    const char *got = decide(s, deep);
    T_CHECK(
        starts(got,
               "refused:Bash call refused: the command is over a limit of the approval check: "),
        "300 levels: refused (%.200s)", got);
    /* 10,001 commands */
    size_t n = 10001 * 5;
    char *many = malloc(n + 1);
    for (size_t i = 0; i < 10001; i++)
        memcpy(many + i * 5, "true;", 5);
    many[n] = '\0';
    got = decide(s, many);
    T_CHECK(
        starts(got,
               "refused:Bash call refused: the command is over a limit of the approval check: "),
        "10,001 commands: refused (%.200s)", got);
    free(many);
    agt_session_free(s);
}

/* The examples of docs/session.md, "Bash rules". */
static void test_doc_examples(agt_registry *reg)
{
    const char *rules = "{\"deny\":[\"Bash(rm -rf*)\"],"
                        "\"allow\":[\"Bash(git *)\",\"Bash(ls *)\",\"Bash(echo *)\"]}";
    static const struct {
        const char *cmd, *manual, *yolo;
    } ex[] = {
        {"timeout 5 rm -rf d", "deny", "deny"},
        {"env FOO=1 rm -fr d", "deny", "deny"},
        {"bash -c 'rm -rf d'", "deny", "deny"},
        {"git log $(rm -rf d)", "deny", "deny"},
        {"f() { rm -rf d; }; f", "deny", "deny"},
        {"sudo -u x rm -r -f d", "deny", "deny"},
        {"X=rm; $X -rf d", "pending", "closed"},
        {"echo cm0gLXJmIGQ= | base64 -d | sh", "pending", "closed"},
        {"echo 'a; rm -rf d'", "ran", "ran"},
        {"git  status", "ran", "ran"},
        {"ls > /dev/null 2>&1", "ran", "ran"},
        {"echo x > notes.txt", "pending", "ran"},
        {"git status && curl x", "pending", "ran"},
        {"./git status", "pending", "ran"},
        {"/usr/bin/git status", "ran", "ran"},
        {"rm -r d", "pending", "ran"},
        {"rm --recu --forc d", "deny", "deny"},
        {"parallel rm -rf ::: d", "deny", "deny"},
        {"x='a[$(rm -rf d)]'; echo $((x))", "pending", "closed"},
        {"PATH=.:$PATH ls", "pending", "ran"},
        {"echo a | xargs git log", "pending", "ran"},
        {"git show HEAD:.env", "pending", "ran"},
        {"git -c core.pager=id log", "pending", "ran"},
        {"git diff --ext-diff", "pending", "ran"},
    };
    for (int mode = 0; mode < 2; mode++) {
        agt_session *s = NULL;
        agt_session_new(&s, reg, ws_root);
        agt_session_load_rules(s, rules, strlen(rules));
        agt_session_set_mode(s, mode ? AGT_MODE_YOLO : AGT_MODE_MANUAL);
        for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
            T_EQ_STR(decide(s, ex[i].cmd), mode ? ex[i].yolo : ex[i].manual, "doc %s: %s",
                     mode ? "yolo" : "manual", ex[i].cmd);
        agt_session_free(s);
    }
    /* privilege wrappers need their own allow rule; a deny rule on a wrapper */
    agt_session *s = NULL;
    agt_session_new(&s, reg, ws_root);
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Bash(apt update)");
    T_EQ_STR(decide(s, "apt update"), "ran", "apt update allowed");
    T_EQ_STR(decide(s, "sudo apt update"), "pending", "sudo apt update is not");
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Bash(sudo apt update)");
    T_EQ_STR(decide(s, "sudo apt update"), "ran", "with a rule for the sudo stage it is");
    agt_session_add_rule(s, AGT_RULE_DENY, "Bash(sudo *)");
    agt_session_add_rule(s, AGT_RULE_ALLOW, "Bash(ls *)");
    T_EQ_STR(decide(s, "timeout 5 sudo ls -la"),
             "refused:Bash call refused: the rule 'Bash(sudo "
             "*)' in the deny list forbids it. Do not retry it; "
             "take another approach or ask the user to change "
             "the rules.",
             "a deny rule on a wrapper stage");
    agt_session_free(s);
}

int main(int argc, char **argv)
{
    (void)outcome;
    if (argc < 2) {
        printf("Bail out! usage: test-bash-corpus bash_bypass.txt\n");
        return 1;
    }
    load(argv[1]);
    size_t counts[4] = {0};
    for (size_t i = 0; i < nlines; i++)
        counts[strcmp(lines[i].label, "deny") == 0     ? 0
               : strcmp(lines[i].label, "closed") == 0 ? 1
               : strcmp(lines[i].label, "ask") == 0    ? 2
                                                       : 3]++;
    t_diag("corpus: %zu lines: %zu denied, %zu asked (%zu undecidable, %zu uncovered), %zu "
           "allowed",
           nlines, counts[0], counts[1] + counts[2], counts[1], counts[2], counts[3]);
    T_CHECK(counts[0] + counts[1] >= 100, "at least 100 bypass lines");
    make_workspace();
    agt_registry *reg = make_chat_registry();
    run_corpus(reg, AGT_MODE_MANUAL, "manual");
    run_corpus(reg, AGT_MODE_YOLO, "yolo");
    test_session_compound(reg);
    test_suggestions(reg);
    test_hook_rewrite(reg);
    test_limits(reg);
    test_doc_examples(reg);
    agt_registry_free(reg);
    run_for_real();
    remove_tree(ws_root);
    for (size_t i = 0; i < nlines; i++) {
        free(lines[i].cmd);
        free(lines[i].raw);
    }
    return t_done();
}
