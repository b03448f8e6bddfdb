/* Hostile calls through agt_session_dispatch that once got through: each
 * case is a bug found by feeding the tool layer what a confused or malicious
 * model (or a tampered save file) would send. Expected texts are worked out
 * from docs/workspace-tools.md and TOOLS.md, not copied from output. */
#include "wsfix.h"

/* A NUL inside a JSON string ended the C string the providers read: Read
 * {"path":"a.txt\u0000x"} read a.txt, Grep and Glob patterns were cut, Bash
 * ran a truncated command. Such arguments are refused before any tool runs. */
static void test_nul_in_arguments(agt_session *s)
{
    put_file("a.txt", "hello\n");
    expect_prefix(s, "Read", "{\"path\":\"a.txt\\u0000x\"}",
                  "The arguments for Read contain a NUL character (\\u0000) at /path; paths, "
                  "patterns, commands and text cannot hold it. Call Read again without it.",
                  AGT_EINVALID, "NUL in path");
    expect_prefix(s, "Write", "{\"path\":\"nul.txt\",\"content\":\"abc\\u0000def\"}",
                  "The arguments for Write contain a NUL character (\\u0000) at /content;",
                  AGT_EINVALID, "NUL in content");
    T_CHECK(get_file("nul.txt", NULL) == NULL, "Write: nothing written for NUL content");
    expect_prefix(s, "Grep", "{\"pattern\":\"zzz\\u0000|hello\"}",
                  "The arguments for Grep contain a NUL character (\\u0000) at /pattern;",
                  AGT_EINVALID, "NUL in pattern");
    expect_prefix(s, "TodoList",
                  "{\"todos\":[{\"title\":\"ok\",\"status\":\"pending\"},"
                  "{\"title\":\"a\\u0000b\",\"status\":\"pending\"}]}",
                  "The arguments for TodoList contain a NUL character (\\u0000) at "
                  "/todos/1/title;",
                  AGT_EINVALID, "NUL deep inside");
    /* JSON Pointer escapes of the member names on the way */
    agt_result *r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "c", "Read", "{\"path\":\"a.txt\",\"a/~b\":\"\\u0000\"}", &r),
             AGT_OK, "dispatch with NUL in an unknown member");
    T_CHECK(r != NULL && strstr(agt_result_text(r), " at /a~1~0b;") != NULL,
            "pointer to the member is escaped");
    agt_result_free(r);
}

/* JSON Schema's "integer" accepts 1.0; jansson keeps it a real, and the
 * providers read 0 through json_integer_value: n_lines 1.0 was refused as
 * "not 0", Grep head_limit 1.0 was ignored, Bash timeout 1.0 ran with the
 * default timeout. */
static void test_integral_reals(agt_session *s)
{
    put_file("three.txt", "l1\nl2\nl3\n");
    expect(s, "Read", "{\"path\":\"three.txt\",\"n_lines\":1.0}",
           "1\tl1\n\nRead 1 line (1-1) of 3; stopped at n_lines (1); continue with line_offset 2.",
           0, "n_lines 1.0");
    expect(s, "Read", "{\"path\":\"three.txt\",\"line_offset\":-1.0}",
           "3\tl3\n\nRead 1 line (3-3) of 3; reached the end of the file.", 0, "line_offset -1.0");
    expect_prefix(s, "Read", "{\"path\":\"three.txt\",\"n_lines\":1.5}",
                  "The arguments for Read do not match its parameters (1 problem):\n- /n_lines: ",
                  AGT_EINVALID, "n_lines 1.5 stays invalid");

    put_file("g/one.txt", "needle\n");
    put_file("g/two.txt", "needle\n");
    agt_result *r = call(s, "Grep",
                         "{\"pattern\":\"needle\",\"path\":\"g\",\"output_mode\":\"content\","
                         "\"head_limit\":1.0}");
    const char *t = agt_result_text(r);
    size_t lines = 0;
    for (const char *p = t; (p = strstr(p, ":1:needle")) != NULL; p++)
        lines++;
    T_EQ_INT((int)lines, 1, "Grep head_limit 1.0 keeps one line");
    agt_result_free(r);

    struct timeval t0, t1;
    gettimeofday(&t0, NULL);
    r = call(s, "Bash", "{\"command\":\"sleep 20\",\"timeout\":1000.0}");
    gettimeofday(&t1, NULL);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_usec - t0.tv_usec) / 1e6;
    T_CHECK(secs < 10.0, "Bash timeout 1000.0 stops the command (took %.1f s)", secs);
    T_CHECK(strstr(agt_result_text(r), "timed out after 1 s") != NULL, "Bash timeout 1000.0 text");
    T_EQ_INT(agt_result_is_error(r), 1, "Bash timeout 1000.0 is an error");
    agt_result_free(r);
}

/* With head_limit 0 the content engine stops at 4 MiB of line text; the
 * paging note then said "[Showing lines 1-0 of more than 0; continue with
 * offset 0 ...]", sending the model back to the start. It names what was
 * shown: lines 1-N, continue with offset N. */
static void test_grep_unlimited_cap(agt_session *s)
{
    /* 5000 lines of 1023 characters + LF: 5 MiB of matching text */
    size_t n = 5000, len = 1024;
    char *big = malloc(n * len);
    for (size_t i = 0; i < n; i++) {
        memset(big + i * len, 'q', len - 1);
        big[i * len + len - 1] = '\n';
    }
    put_file_n("cap/big.txt", big, n * len);
    free(big);
    /* a folder (the walker's cap) and the file itself (searched alone) */
    const char *paths[2] = {"cap", "cap/big.txt"};
    for (int pi = 0; pi < 2; pi++) {
        char args[200];
        snprintf(args, sizeof args,
                 "{\"pattern\":\"q\",\"path\":\"%s\",\"output_mode\":\"content\","
                 "\"head_limit\":0}",
                 paths[pi]);
        agt_result *r = call(s, "Grep", args);
        const char *t = agt_result_text(r);
        size_t shown = 0;
        for (const char *p = t; (p = strstr(p, "cap/big.txt:")) != NULL; p++)
            shown++;
        T_CHECK(shown > 0 && shown < n, "%s: the 4 MiB cap stopped the search (%zu lines shown)",
                paths[pi], shown);
        char want[200];
        snprintf(want, sizeof want,
                 "\n[Showing lines 1-%zu of more than %zu; output stops at 4 MiB with "
                 "head_limit 0: continue with offset %zu and a head_limit (such as 1000), or "
                 "narrow the search.]",
                 shown, shown, shown);
        if (!T_CHECK(strstr(t, want) != NULL, "%s: the note names the lines shown", paths[pi]))
            t_diag("  want [%s]\n#   got tail [%s]", want + 1,
                   strlen(t) > 200 ? t + strlen(t) - 200 : t);
        agt_result_free(r);
        /* the next page as the note says */
        snprintf(args, sizeof args,
                 "{\"pattern\":\"q\",\"path\":\"%s\",\"output_mode\":\"content\","
                 "\"offset\":%zu,\"head_limit\":1000}",
                 paths[pi], shown);
        r = call(s, "Grep", args);
        char first[64];
        snprintf(first, sizeof first, "cap/big.txt:%zu:q", shown + 1);
        T_CHECK(strncmp(agt_result_text(r), first, strlen(first)) == 0,
                "%s: the next page starts at line %zu", paths[pi], shown + 1);
        agt_result_free(r);
    }
}

/* Appending to a CRLF file that ends in a bare CR: the content's leading LF
 * became CRLF too, leaving "l2\r\r\n" (a blank line and a stray CR) where
 * the model completed the line. */
static void test_append_after_cr(agt_session *s)
{
    put_file("cr.txt", "l1\r\nl2\r");
    expect(s, "Write", "{\"path\":\"cr.txt\",\"content\":\"\\na\\nb\\n\",\"mode\":\"append\"}",
           "Appended cr.txt: 7 bytes written at the end (the file now has 14 bytes). Line breaks "
           "were written as CRLF to match the file.",
           0, "append after a final CR");
    size_t n = 0;
    const char *got = get_file("cr.txt", &n);
    T_CHECK(got != NULL && n == 14 && memcmp(got, "l1\r\nl2\r\na\r\nb\r\n", 14) == 0,
            "the CR and the appended LF make one CRLF");
}

/* agt_session_dispatch with out NULL crashed: the approval path freed *out
 * after the dispatcher refused the NULL. */
static void test_dispatch_null_out(agt_session *s)
{
    T_EQ_INT(agt_session_dispatch(s, "c", "Read", "{\"path\":\"a.txt\"}", NULL), AGT_EINVAL,
             "dispatch with out NULL");
    T_EQ_STR(agt_error_message(), "agt_session_dispatch: out is NULL",
             "dispatch with out NULL: message");
    agt_result *r = (agt_result *)&r;
    T_EQ_INT(agt_session_dispatch(s, "c", NULL, "{}", &r), AGT_EINVAL, "dispatch with tool NULL");
    T_CHECK(r == NULL, "dispatch with tool NULL: *out is NULL");
}

/* A path longer than PATH_MAX: Write created 16 levels of folders before
 * the system refused the rest ("The file was not changed", but the folders
 * stayed). It is refused before anything is touched. */
static void test_path_too_long(agt_session *s)
{
    char name[251], path[6000], args[6200];
    memset(name, 'x', 250);
    name[250] = '\0';
    path[0] = '\0';
    for (int i = 0; i < 20; i++) {
        strcat(path, name);
        strcat(path, "/");
    }
    strcat(path, "f.txt");
    snprintf(args, sizeof args, "{\"path\":\"%s\",\"content\":\"x\"}", path);
    char want[6400];
    /* the workspace, a slash, 20 x 251 bytes and "f.txt" */
    snprintf(want, sizeof want,
             "Cannot use path '%s': it is %zu bytes long as an absolute path; the system limit "
             "is 4095.",
             path, strlen(ws) + 1 + 20 * 251 + 5);
    expect(s, "Write", args, want, 1, "path over PATH_MAX");
    char first[600];
    snprintf(first, sizeof first, "%s/%s", ws, name);
    struct stat st;
    T_CHECK(stat(first, &st) != 0, "the first folder of the long path does not exist");
}

static int rewrite_hook(agt_hook *h, void *payload)
{
    return agt_hook_rewrite(h, (const char *)payload);
}

/* A pre-tool-use hook's rewrite is checked like the model's arguments: a NUL
 * is refused and integers written 1.0 are read as integers. */
static void test_hook_rewrite(void)
{
    agt_session *s = new_session();
    put_file("three.txt", "l1\nl2\nl3\n");
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"{\"path\":\"three.txt\\u0000x\"}");
    expect_prefix(s, "Read", "{\"path\":\"a.txt\"}",
                  "A pre-tool-use hook rewrote the arguments of Read, and they contain a NUL "
                  "character (\\u0000) at /path.",
                  AGT_EINVALID, "hook rewrite with a NUL");
    agt_session_set_pre_hook(s, rewrite_hook, (void *)"{\"path\":\"three.txt\",\"n_lines\":2.0}");
    expect(s, "Read", "{\"path\":\"a.txt\"}",
           "1\tl1\n2\tl2\n\nRead 2 lines (1-2) of 3; stopped at n_lines (2); continue with "
           "line_offset 3.",
           0, "hook rewrite with n_lines 2.0");
    agt_session_free(s);
}

/* A command over Linux's MAX_ARG_STRLEN (131072 bytes with its NUL) failed
 * as "process: cannot start '/bin/bash -c ...': Argument list too long";
 * the error now gives the size, the limit and what to do. 131071 bytes run. */
static void test_bash_long_command(agt_session *s)
{
    size_t n = 131072; /* "echo " and n - 5 x: a command of n bytes */
    char *args = malloc(n + 64);
    for (int pass = 0; pass < 2; pass++, n--) {
        strcpy(args, "{\"command\":\"echo ");
        size_t at = strlen(args);
        memset(args + at, 'x', n - 5);
        strcpy(args + at + n - 5, "\"}");
        agt_result *r = call(s, "Bash", args);
        const char *t = agt_result_text(r);
        if (pass == 0) {
            T_EQ_STR(t,
                     "The command is 131072 bytes long; a command line can have at most 131071. "
                     "Write the script to a file with Write and run that file.",
                     "Bash: command of 131072 bytes");
            T_EQ_INT(agt_result_is_error(r), 1, "Bash: command of 131072 bytes is an error");
        } else {
            T_CHECK(strstr(t, "Command completed with exit code 0.") != NULL,
                    "Bash: command of 131071 bytes runs");
        }
        agt_result_free(r);
    }
    free(args);
}

/* Glob with an absolute pattern (as models write them) or one with '..'
 * said only "No files match", as if no such file existed. An absolute
 * pattern inside the folder searched now matches (test_breaker2 has the
 * cases); one outside it still gets the explanation. */
static void test_glob_absolute_pattern(agt_session *s)
{
    put_file("abs/x.txt", "x\n");
    char args[700];
    snprintf(args, sizeof args, "{\"pattern\":\"%s/abs/*.txt\"}", ws);
    expect(s, "Glob", args, "abs/x.txt", 0, "absolute pattern");
    expect(s, "Glob", "{\"pattern\":\"/nowhere/abs/*.txt\"}",
           "No files match '/nowhere/abs/*.txt' in the workspace root.\nThe pattern is matched "
           "against paths relative to the folder searched: an absolute pattern must lie inside "
           "that folder, and ~ and '..' do not work; give the folder as path and a relative "
           "pattern.",
           0, "absolute pattern outside");
    expect(s, "Glob", "{\"pattern\":\"abs/../abs/*.txt\"}",
           "No files match 'abs/../abs/*.txt' in the workspace root.\nThe pattern is matched "
           "against paths relative to the folder searched: an absolute pattern must lie inside "
           "that folder, and ~ and '..' do not work; give the folder as path and a relative "
           "pattern.",
           0, "pattern with ..");
    expect(s, "Glob", "{\"pattern\":\"abs/*.txt\"}", "abs/x.txt", 0, "relative pattern");
}

/* Path rules were matched on the lexical path: with src/up -> .., an allow
 * rule Write(src/...) let Write put src/up/esc.txt at the root without asking,
 * and a deny rule Read(private/...) did not stop Read through alias -> private. */
static void test_rules_follow_symlinks(void)
{
    put_file("src/keep.txt", "k\n");
    put_file("private/p.txt", "p\n");
    char link[700], target[700];
    snprintf(link, sizeof link, "%s/src/up", ws);
    T_CHECK(symlink("..", link) == 0, "symlink src/up -> ..");
    snprintf(link, sizeof link, "%s/alias", ws);
    snprintf(target, sizeof target, "%s/private", ws);
    T_CHECK(symlink(target, link) == 0, "symlink alias -> private");

    agt_session *s = NULL;
    agt_session_new(&s, reg, ws); /* manual mode: writes ask unless a rule allows */
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_ALLOW, "Write(src/**)"), AGT_OK, "allow rule");
    T_EQ_INT(agt_session_add_rule(s, AGT_RULE_DENY, "Read(private/**)"), AGT_OK, "deny rule");
    agt_result *r = NULL;
    T_EQ_INT(
        agt_session_dispatch(s, "w1", "Write", "{\"path\":\"src/new.txt\",\"content\":\"n\"}", &r),
        AGT_OK, "Write inside src runs under the allow rule");
    agt_result_free(r);
    r = NULL;
    T_EQ_INT(agt_session_dispatch(s, "w2", "Write",
                                  "{\"path\":\"src/up/esc.txt\",\"content\":\"e\"}", &r),
             AGT_EPENDING, "Write through src/up (the root) asks");
    T_CHECK(r == NULL && get_file("esc.txt", NULL) == NULL, "nothing written at the root");
    r = NULL;
    agt_session_answer(s, "w2", AGT_DECISION_REJECT, NULL, &r);
    agt_result_free(r);
    expect_prefix(s, "Read", "{\"path\":\"alias/p.txt\"}", "", AGT_EDENIED,
                  "Read through a symlink into a denied folder");
    r = call(s, "Read", "{\"path\":\"alias/p.txt\"}");
    T_CHECK(strstr(agt_result_text(r), "1\tp") == NULL, "the denied file is not shown");
    agt_result_free(r);
    agt_session_free(s);
}

/* A NUL byte after the first 8 KiB (the binary probe) reached the result
 * text, a C string: Read showed "3<TAB>before" and lost the rest, its note
 * included; Grep lost every result after that line. */
static void test_late_nul(agt_session *s)
{
    char data[9200];
    size_t n = 0;
    memcpy(data, "line1\n", 6);
    n = 6;
    memset(data + n, 'x', 9000);
    n += 9000;
    memcpy(data + n, "\nbefore\0after\nlast\n", 20);
    n += 20;
    put_file_n("nul/late.txt", data, n);
    put_file("nul/other.txt", "after zzz\n");
    expect(s, "Read", "{\"path\":\"nul/late.txt\",\"line_offset\":3}",
           "nul/late.txt is a binary file (line 3 has a NUL byte); Read shows text only. Inspect "
           "it with a tool made for its format through Bash (for example file, xxd or objdump).",
           1, "NUL past the binary probe");
    /* Grep searches a file only up to the line of a late NUL (as Read calls
     * the file binary, and rg stops there too): the next file still comes. */
    expect(s, "Grep",
           "{\"pattern\":\"after\",\"path\":\"nul\",\"output_mode\":\"content\","
           "\"glob\":\"*.txt\"}",
           "nul/other.txt:1:after zzz", 0, "Grep line with a NUL, and the next file");
}

/* Bash output with a NUL byte: the result text ended at it, so the rest of
 * the output and the exit-code line were lost. */
static void test_bash_output_nul(agt_session *s)
{
    expect(s, "Bash", "{\"command\":\"printf 'a\\\\000b\\\\nsecond line\\\\n'\"}",
           "a\xEF\xBF\xBD"
           "b\nsecond line\nCommand completed with exit code 0.",
           0, "NUL in the output");
}

/* A saved session is input: its tasks' output_path was read back by
 * TaskOutput whatever it named, so a tampered save turned TaskOutput into a
 * reader of any file (keys, credentials) outside the workspace. */
static void test_restore_output_path(void)
{
    char secret[600];
    snprintf(secret, sizeof secret, "%s-secret", ws);
    FILE *f = fopen(secret, "w");
    if (f) {
        fputs("TOPSECRET\n", f);
        fclose(f);
    }
    char save[2048];
    snprintf(save, sizeof save,
             "{\"format\":1,\"mode\":\"manual\",\"tasks\":[{\"task_id\":\"bash-1\",\"command\":"
             "\"x\",\"description\":\"d\",\"status\":\"completed\",\"exit_code\":0,\"signal\":0,"
             "\"reason\":null,\"output_path\":\"%s\",\"output_bytes\":10}]}",
             secret);
    agt_session *s = new_session();
    T_EQ_INT(agt_session_restore(s, save, strlen(save)), AGT_EINVALID,
             "restore refuses an output_path that is not the task's log");
    char want[1024];
    snprintf(want, sizeof want,
             "saved session: tasks[0]: output_path '%s' is not the log of task 'bash-1' (an "
             "absolute path ending in /bash-1.log); TaskOutput would read it",
             secret);
    T_EQ_STR(agt_error_message(), want, "restore names the bad output_path");
    agt_result *r = call(s, "TaskOutput", "{\"task_id\":\"bash-1\"}");
    T_CHECK(strstr(agt_result_text(r), "TOPSECRET") == NULL, "TaskOutput does not read it");
    agt_result_free(r);

    /* a log path of the right shape is still restored */
    snprintf(save, sizeof save,
             "{\"format\":1,\"mode\":\"manual\",\"tasks\":[{\"task_id\":\"bash-1\",\"command\":"
             "\"x\",\"description\":\"d\",\"status\":\"completed\",\"exit_code\":0,\"signal\":0,"
             "\"reason\":null,\"output_path\":\"%s/bash-1.log\",\"output_bytes\":3}]}",
             ws);
    put_file("bash-1.log", "hi\n");
    T_EQ_INT(agt_session_restore(s, save, strlen(save)), AGT_OK, "restore a real log path");
    r = call(s, "TaskOutput", "{\"task_id\":\"bash-1\"}");
    T_CHECK(strstr(agt_result_text(r), "Output (end of the log):\nhi\n") != NULL,
            "TaskOutput reads the restored log");
    agt_result_free(r);
    agt_session_free(s);
    unlink(secret);
}

/* A line break inside a todo title (the schema allows it) printed the item
 * over two lines, the second reading like the next item or prose. */
static void test_todo_title_newline(agt_session *s)
{
    expect(s, "TodoList",
           "{\"todos\":[{\"title\":\"a\\nb\",\"status\":\"pending\"},"
           "{\"title\":\"c\\r\\nd\",\"status\":\"done\"}]}",
           "Todo list updated: 2 items (1 done, 0 in progress, 1 pending).\n"
           "1. [ ] a b\n"
           "2. [x] c  d",
           0, "todo titles with line breaks stay on their line");
    expect(s, "TodoList", "{\"todos\":[]}", "The todo list was cleared.", 0, "todo cleared");
}

int main(void)
{
    make_ws("breaker");
    agt_session *s = new_session();
    test_nul_in_arguments(s);
    test_integral_reals(s);
    test_grep_unlimited_cap(s);
    test_append_after_cr(s);
    test_dispatch_null_out(s);
    test_path_too_long(s);
    test_bash_long_command(s);
    test_glob_absolute_pattern(s);
    test_late_nul(s);
    test_bash_output_nul(s);
    test_todo_title_newline(s);
    agt_session_free(s);
    test_restore_output_path();
    test_hook_rewrite();
    test_rules_follow_symlinks();
    rm_ws();
    return t_done();
}
