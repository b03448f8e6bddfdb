/*
 * The review set (task_done, code_comment, file_read, file_read_diff,
 * file_find, code_search) through agt_session_dispatch, over a real
 * repository built with the git CLI, in the three change-set modes. Every
 * expected text below was worked out by hand from the files written here.
 *
 * History:
 *   v1 (root): src/app.c (12 lines), src/util.h, README.md, Makefile,
 *              scripts/run, .gitignore, docs/old.txt, big.txt (600 lines),
 *              gen/f001.txt .. gen/f120.txt
 *   v2: src/app.c edited (14 lines), src/util.h gains a line, docs/old.txt
 *       deleted, src/new.c added
 *   HEAD: src/new.c gains a first comment line
 *   working tree: README.md edited, notes.txt, .env untracked, debug.log
 *       ignored
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agenttools/agenttools.h"
#include "harness.h"
#include "tools/tools_internal.h"

#define GIT                                                                                        \
    "git -c user.name=Tester -c user.email=tester@example.com -c core.autocrlf=false "             \
    "-c init.defaultBranch=main "

static char root[512], repo[600], norepo[600];
static agt_registry *reg;

static const char *flat(const char *s)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    size_t i = 0;
    for (; s != NULL && s[i] != '\0' && i + 1 < sizeof buf[0]; i++)
        b[i] = s[i] == '\n' ? '|' : s[i];
    b[i] = '\0';
    return b;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    int n = snprintf(cmd, sizeof cmd, "cd '%s' && ", repo);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st == -1 ? -1 : WEXITSTATUS(st);
}

/* The stdout of a shell command run in the repository. */
static char *cli(const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "cd '%s' && %s", repo, cmd);
    FILE *p = popen(full, "r");
    if (p == NULL)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = buf ? fread(buf, 1, 65535, p) : 0;
    pclose(p);
    if (buf)
        buf[n] = '\0';
    return buf;
}

static void put(const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", repo, rel);
    for (char *s = path + strlen(repo) + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        printf("Bail out! cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

static const char app_v1[] = "#include <stdio.h>\n"
                             "\n"
                             "int add(int a, int b)\n"
                             "{\n"
                             "    return a + b;\n"
                             "}\n"
                             "\n"
                             "int main(void)\n"
                             "{\n"
                             "    printf(\"%d\\n\", add(1, 2));\n"
                             "    return 0;\n"
                             "}\n";

static const char app_v2[] = "#include <stdio.h>\n"
                             "#include <stdlib.h>\n"
                             "\n"
                             "int add(int a, int b)\n"
                             "{\n"
                             "    return a + b;\n"
                             "}\n"
                             "\n"
                             "int main(void)\n"
                             "{\n"
                             "    int r = add(1, 2);\n"
                             "    printf(\"%d\\n\", r);\n"
                             "    return 0;\n"
                             "}\n";

static const char new_v2[] = "int sub(int a, int b)\n{\n    return a - b;\n}\n";

static void build_repo(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/agt-review-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (mkdtemp(root) == NULL) {
        printf("Bail out! mkdtemp\n");
        exit(1);
    }
    setenv("HOME", root, 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    setenv("LC_ALL", "C", 1);
    unsetenv("XDG_CONFIG_HOME");
    unsetenv("GIT_DIR");
    unsetenv("GIT_WORK_TREE");
    unsetenv("GIT_INDEX_FILE");
    setenv("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z", 1);
    setenv("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z", 1);
    snprintf(repo, sizeof repo, "%s/repo", root);
    snprintf(norepo, sizeof norepo, "%s/plain", root);
    mkdir(repo, 0755);
    mkdir(norepo, 0755);
    sh(GIT "init -q");
    put("src/app.c", app_v1);
    put("src/util.h", "int add(int a, int b);\n");
    put("README.md", "# Demo\nSome text\n");
    put("Makefile", "all:\n\tcc -o app src/app.c\n");
    put("scripts/run", "#!/bin/sh\n./app\n");
    put(".gitignore", "*.log\n");
    put("docs/old.txt", "old notes\nline two\n");
    int rc = sh("for i in $(seq 1 600); do echo \"line $i\"; done > big.txt && mkdir -p gen && "
                "for i in $(seq -w 1 120); do echo \"generated $i\" > gen/f$i.txt; done");
    rc |= sh(GIT "add -A && " GIT "commit -q -m v1 && " GIT "tag v1");
    put("src/app.c", app_v2);
    put("src/util.h", "int add(int a, int b);\nint sub(int a, int b);\n");
    put("src/new.c", new_v2);
    rc |= sh(GIT "rm -q docs/old.txt && " GIT "add -A && " GIT "commit -q -m v2 && " GIT "tag v2");
    put("src/new.c", "/* subtraction */\nint sub(int a, int b)\n{\n    return a - b;\n}\n");
    rc |= sh(GIT "commit -q -am v3");
    put("README.md", "# Demo\nSome text\nMore text\n");
    put("notes.txt", "TODO: write docs\n");
    put(".env", "SECRET=1\n");
    put("debug.log", "printf debug\n");
    if (rc != 0) {
        printf("Bail out! building the repository failed\n");
        exit(1);
    }
}

static agt_session *session_at(const char *dir)
{
    agt_session *s = NULL;
    if (agt_session_new(&s, reg, dir) != AGT_OK) {
        printf("Bail out! session: %s\n", agt_error_message());
        exit(1);
    }
    return s;
}

/* Runs a call; returns its text (malloc'd) and whether it is an error. */
static char *run(agt_session *s, const char *tool, const char *args, int *is_error)
{
    agt_result *r = NULL;
    int rc = agt_session_dispatch(s, "c1", tool, args, &r);
    if (rc != AGT_OK || r == NULL) {
        printf("Bail out! dispatch %s %s: %d %s\n", tool, args, rc, agt_error_message());
        exit(1);
    }
    char *t = strdup(agt_result_text(r));
    if (is_error)
        *is_error = agt_result_is_error(r);
    agt_result_free(r);
    return t;
}

/* Checks a successful call's exact text. */
static void expect(agt_session *s, const char *tool, const char *args, const char *want,
                   const char *name)
{
    int err = -1;
    char *got = run(s, tool, args, &err);
    T_EQ_INT(err, 0, "%s: not an error", name);
    T_EQ_STR(got, want, "%s: text", name);
    free(got);
}

/* Checks that a call fails and that its text contains each given fragment. */
static void expect_error(agt_session *s, const char *tool, const char *args, const char *frag1,
                         const char *frag2, const char *name)
{
    int err = -1;
    char *got = run(s, tool, args, &err);
    T_EQ_INT(err, 1, "%s: error result", name);
    T_CHECK(strstr(got, frag1) != NULL && (frag2 == NULL || strstr(got, frag2) != NULL),
            "%s: names '%s'%s%s (got: %s)", name, frag1, frag2 ? " and " : "", frag2 ? frag2 : "",
            flat(got));
    free(got);
}

static agt_session *range_session(void)
{
    agt_session *s = session_at(repo);
    int rc = agt_session_open_review(s, NULL, AGT_CHANGES_RANGE, "v1", "v2");
    T_EQ_INT(rc, AGT_OK, "open_review range v1...v2");
    return s;
}

/* ---- file_read ---------------------------------------------------------- */

static void test_file_read(void)
{
    agt_session *s = range_session();
    expect(s, "file_read", "{\"file_path\":\"src/app.c\",\"start_line\":10,\"end_line\":12}",
           "File: src/app.c (Total lines: 14)\nIS_TRUNCATED: false\nLINE_RANGE: 10-12\n"
           "10|{\n11|    int r = add(1, 2);\n12|    printf(\"%d\\n\", r);",
           "file_read range: v2 lines 10-12");
    expect(s, "file_read", "{\"file_path\":\"src/new.c\"}",
           "File: src/new.c (Total lines: 4)\nIS_TRUNCATED: false\nLINE_RANGE: 1-4\n"
           "1|int sub(int a, int b)\n2|{\n3|    return a - b;\n4|}",
           "file_read range: whole file at v2 (not the working tree's version)");
    expect(s, "file_read", "{\"file_path\":\"./src/app.c\",\"start_line\":13,\"end_line\":99}",
           "File: ./src/app.c (Total lines: 14)\nIS_TRUNCATED: false\nLINE_RANGE: 13-14\n"
           "13|    return 0;\n14|}",
           "file_read: end_line past the end is clamped");
    /* 600 lines from 50: lines 50-549, then the note */
    {
        int err = -1;
        char *got = run(s, "file_read", "{\"file_path\":\"big.txt\",\"start_line\":50}", &err);
        T_EQ_INT(err, 0, "file_read big: not an error");
        T_CHECK(strncmp(got,
                        "File: big.txt (Total lines: 600)\nIS_TRUNCATED: true\n"
                        "LINE_RANGE: 50-549\n50|line 50\n51|line 51\n",
                        strlen("File: big.txt (Total lines: 600)\nIS_TRUNCATED: true\n"
                               "LINE_RANGE: 50-549\n50|line 50\n51|line 51\n")) == 0,
                "file_read big: header and first lines (got %.80s)", flat(got));
        T_CHECK(strstr(got, "\n549|line 549\nNote: Results truncated to 500 lines. Please narrow "
                            "your line range. (Lines 50-549 of the 50-600 asked for were shown; "
                            "the rest starts at line 550.)") != NULL &&
                    strstr(got, "550|") == NULL,
                "file_read big: 500 lines then the note");
        size_t n = 0;
        for (const char *p = got; (p = strchr(p, '\n')) != NULL; p++)
            n++;
        T_EQ_INT(n, 3 + 500, "file_read big: 3 header lines + 500 lines + note");
        free(got);
    }
    expect_error(s, "file_read", "{\"file_path\":\"src/missing.c\"}", "file not found",
                 "src/missing.c", "file_read: missing file");
    expect_error(s, "file_read", "{\"file_path\":\"docs/old.txt\"}", "file not found",
                 "docs/old.txt", "file_read: file deleted by the change");
    expect_error(s, "file_read", "{\"file_path\":\"src/app.c\",\"start_line\":15}",
                 "start_line 15 is past the end", "14 lines", "file_read: start past the end");
    expect_error(s, "file_read", "{\"file_path\":\"src/app.c\",\"start_line\":5,\"end_line\":4}",
                 "end_line 4 comes before start_line 5", NULL, "file_read: end before start");
    expect_error(s, "file_read", "{\"file_path\":\"src/app.c\",\"start_line\":0}", "start_line",
                 NULL, "file_read: start_line 0 fails the schema");
    agt_session_free(s);

    /* commit mode (HEAD = v3): new.c has the comment line */
    s = session_at(repo);
    T_EQ_INT(agt_session_open_review(s, NULL, AGT_CHANGES_COMMIT, NULL, NULL), AGT_OK,
             "open_review commit HEAD");
    expect(s, "file_read", "{\"file_path\":\"src/new.c\",\"end_line\":2}",
           "File: src/new.c (Total lines: 5)\nIS_TRUNCATED: false\nLINE_RANGE: 1-2\n"
           "1|/* subtraction */\n2|int sub(int a, int b)",
           "file_read commit: HEAD's version");
    agt_session_free(s);

    /* workspace mode, opened lazily at the session root */
    s = session_at(repo);
    expect(s, "file_read", "{\"file_path\":\"README.md\"}",
           "File: README.md (Total lines: 3)\nIS_TRUNCATED: false\nLINE_RANGE: 1-3\n"
           "1|# Demo\n2|Some text\n3|More text",
           "file_read workspace: the working-tree file");
    expect(s, "file_read", "{\"file_path\":\"notes.txt\"}",
           "File: notes.txt (Total lines: 1)\nIS_TRUNCATED: false\nLINE_RANGE: 1-1\n"
           "1|TODO: write docs",
           "file_read workspace: an untracked file");
    expect_error(s, "file_read", "{\"file_path\":\".env\"}", "sensitive", NULL,
                 "file_read workspace: .env refused");
    expect_error(s, "file_read", "{\"file_path\":\"debug.log\"}", "file not found", NULL,
                 "file_read workspace: ignored file is not in the tree");
    agt_session_free(s);
}

/* ---- file_read_diff ----------------------------------------------------- */

static void test_file_read_diff(void)
{
    agt_session *s = range_session();
    /* the file's diff as git prints it (the change set's rendering has no
     * "index" line), after the header line */
    char *want = cli(GIT "diff v1...v2 -- src/util.h | grep -v '^index '");
    char framed[1024];
    snprintf(framed, sizeof framed, "==== FILE: src/util.h ====\n%s", want ? want : "");
    if (framed[strlen(framed) - 1] == '\n')
        framed[strlen(framed) - 1] = '\0';
    expect(s, "file_read_diff", "{\"path_array\":[\"src/util.h\"]}", framed,
           "file_read_diff: one file, as git diff prints it");
    free(want);
    int err = -1;
    char *got = run(s, "file_read_diff",
                    "{\"path_array\":[\"src/new.c\",\"nope.c\",\"src/util.h\"]}", &err);
    T_EQ_INT(err, 0, "file_read_diff: found + missing is not an error");
    const char *n1 = strstr(got, "==== FILE: src/new.c ====\ndiff --git a/src/new.c b/src/new.c\n"
                                 "new file mode 100644\n");
    const char *n2 = strstr(got, "\n\n==== FILE: src/util.h ====\n");
    const char *n3 = strstr(got, "\n\nError: diff not found for: nope.c. Diffs exist for: "
                                 "docs/old.txt, src/app.c, src/new.c, src/util.h.");
    T_CHECK(got == n1 && n2 != NULL && n3 != NULL && n1 < n2 && n2 < n3 &&
                n3[strlen("\n\nError: diff not found for: nope.c. Diffs exist for: docs/old.txt, "
                          "src/app.c, src/new.c, src/util.h.")] == '\0',
            "file_read_diff: found diffs in order, then the error line listing the diffs (got %s)",
            flat(got));
    T_CHECK(strstr(got, "@@ -0,0 +1,4 @@\n+int sub(int a, int b)\n+{\n+    return a - b;\n+}\n") !=
                NULL,
            "file_read_diff: new.c's hunk");
    free(got);
    expect_error(s, "file_read_diff", "{\"path_array\":[\"a.c\",\"b.c\"]}",
                 "Error: diff not found for: a.c, b.c.", "Diffs exist for: docs/old.txt",
                 "file_read_diff: only missing paths");
    expect_error(s, "file_read_diff", "{\"path_array\":[]}", "Error: no files found. ", NULL,
                 "file_read_diff: empty array");
    {
        char *many = malloc(8192);
        strcpy(many, "{\"path_array\":[");
        for (int i = 0; i < 501; i++)
            strcat(many, i ? ",\"x\"" : "\"x\"");
        strcat(many, "]}");
        expect_error(s, "file_read_diff", many, "501 paths", "at most 500",
                     "file_read_diff: more than 500 paths");
        free(many);
    }
    got = run(s, "file_read_diff", "{\"path_array\":[\"docs/old.txt\"]}", &err);
    T_CHECK(err == 0 && strstr(got, "==== FILE: docs/old.txt ====\ndiff --git a/docs/old.txt "
                                    "b/docs/old.txt\ndeleted file mode 100644\n") == got,
            "file_read_diff: deleted file (got %s)", flat(got));
    free(got);
    agt_session_free(s);

    /* a change set with no diffs at all: HEAD with a clean tree and index */
    s = session_at(repo);
    T_EQ_INT(agt_session_open_review(s, NULL, AGT_CHANGES_RANGE, "v2", "v2"), AGT_OK,
             "open_review empty range");
    expect_error(s, "file_read_diff", "{\"path_array\":[\"src/app.c\"]}",
                 "diff not found for: src/app.c", "file_read",
                 "file_read_diff: empty change set points to file_read");
    agt_session_free(s);
}

/* ---- file_find ---------------------------------------------------------- */

/* the reference's literal answer first, our detail after it */
#define NOT_FOUND "// The file was not found.\nNo file path of the repository contains the query."

static void test_file_find(void)
{
    agt_session *s = range_session();
    expect(s, "file_find", "{\"query_name\":\"src\"}", "src/app.c\nsrc/new.c\nsrc/util.h",
           "file_find: substring of paths, sorted");
    expect(s, "file_find", "{\"query_name\":\"SRC/APP\"}", "src/app.c",
           "file_find: case-insensitive by default");
    expect(s, "file_find", "{\"query_name\":\"SRC/APP\",\"case_sensitive\":true}", NOT_FOUND,
           "file_find: case-sensitive");
    expect(s, "file_find", "{\"query_name\":\"src\\\\new\"}", "src/new.c",
           "file_find: backslash separators");
    expect(s, "file_find", "{\"query_name\":\"make\"}", "Makefile",
           "file_find: Makefile kept without extension");
    expect(s, "file_find", "{\"query_name\":\"run\"}", NOT_FOUND,
           "file_find: scripts/run skipped (no extension)");
    expect(s, "file_find", "{\"query_name\":\".git\"}", ".gitignore",
           "file_find: dot file counts as having an extension");
    expect(s, "file_find", "{\"query_name\":\"  \"}", NOT_FOUND, "file_find: blank query");
    expect(s, "file_find", "{\"query_name\":\"docs\"}", NOT_FOUND,
           "file_find range: v2's tree has no docs/old.txt");
    {
        int err = -1;
        char *got = run(s, "file_find", "{\"query_name\":\"gen/\"}", &err);
        char want[2048] = "";
        for (int i = 1; i <= 100; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%sgen/f%03d.txt",
                     i > 1 ? "\n" : "", i);
        T_EQ_INT(err, 0, "file_find: 120 hits is not an error");
        T_EQ_STR(got, want, "file_find: at most 100 paths");
        free(got);
    }
    agt_session_free(s);

    s = session_at(repo);
    T_EQ_INT(agt_session_open_review(s, NULL, AGT_CHANGES_COMMIT, "v1", NULL), AGT_OK,
             "open_review commit v1 (root)");
    expect(s, "file_find", "{\"query_name\":\"docs\"}", "docs/old.txt",
           "file_find commit v1: the root commit's tree");
    agt_session_free(s);

    s = session_at(repo);
    expect(s, "file_find", "{\"query_name\":\"notes\"}", "notes.txt",
           "file_find workspace: untracked file listed");
    expect(s, "file_find", "{\"query_name\":\"debug\"}", NOT_FOUND,
           "file_find workspace: ignored file not listed");
    expect(s, "file_find", "{\"query_name\":\".env\"}",
           NOT_FOUND "\nNote: 1 sensitive file (credentials, keys, environment files) matching "
                     "the query is not listed.",
           "file_find workspace: sensitive file filtered and counted");
    agt_session_free(s);

    s = session_at(norepo);
    expect_error(s, "file_find", "{\"query_name\":\"x\"}", "no change set to review", NULL,
                 "file_find: session root that is not a repository");
    agt_session_free(s);
}

/* ---- code_search -------------------------------------------------------- */

static void test_code_search(void)
{
    agt_session *s = range_session();
    const char *add_both = "File: src/app.c\nMatch lines: 2\n4|int add(int a, int b)\n"
                           "11|    int r = add(1, 2);\n\n"
                           "File: src/util.h\nMatch lines: 1\n1|int add(int a, int b);";
    expect(s, "code_search", "{\"search_text\":\"add\"}", add_both, "code_search: literal");
    expect(s, "code_search", "{\"search_text\":\"ADD\"}", add_both,
           "code_search: case-insensitive by default");
    expect(s, "code_search", "{\"search_text\":\"ADD\",\"case_sensitive\":true}",
           "No matches found.", "code_search: case-sensitive, no match");
    expect(s, "code_search", "{\"search_text\":\"add\",\"file_patterns\":[\"*.h\"]}",
           "File: src/util.h\nMatch lines: 1\n1|int add(int a, int b);",
           "code_search: pathspec *.h");
    const char *app_only = "File: src/app.c\nMatch lines: 2\n4|int add(int a, int b)\n"
                           "11|    int r = add(1, 2);";
    expect(s, "code_search",
           "{\"search_text\":\"add\",\"file_patterns\":[\":(exclude)src/util.h\"]}", app_only,
           "code_search: :(exclude)");
    expect(s, "code_search", "{\"search_text\":\"add\",\"file_patterns\":[\"src/\",\":!*.h\"]}",
           app_only, "code_search: folder and :! short form");
    expect(s, "code_search", "{\"search_text\":\"add\",\"file_patterns\":[\":^src/util.h\"]}",
           app_only, "code_search: :^ short form");
    expect(s, "code_search", "{\"search_text\":\"a + b\"}",
           "File: src/app.c\nMatch lines: 1\n6|    return a + b;",
           "code_search: literal '+' (not a regex)");
    expect(s, "code_search", "{\"search_text\":\"return [ab] [-+]\",\"use_perl_regexp\":true}",
           "File: src/app.c\nMatch lines: 1\n6|    return a + b;\n\n"
           "File: src/new.c\nMatch lines: 1\n3|    return a - b;",
           "code_search range: regex over v2's blobs");
    {
        int err = -1;
        char *got = run(s, "code_search", "{\"search_text\":\"line\"}", &err);
        char *want = malloc(8192);
        strcpy(want, "Note: The results have been truncated. Only showing first 100 results. "
                     "(That is the cap of matching lines per file; 1 file reached it.)\n\n"
                     "File: big.txt\nMatch lines: 100");
        for (int i = 1; i <= 100; i++)
            snprintf(want + strlen(want), 8192 - strlen(want), "\n%d|line %d", i, i);
        T_EQ_INT(err, 0, "code_search cap: not an error");
        T_EQ_STR(got, want, "code_search: 100 lines per file and the note first");
        free(want);
        free(got);
    }
    expect_error(s, "code_search", "{\"search_text\":\"   \"}", "Error: search_text is blank. ",
                 NULL, "code_search: blank text");
    expect_error(s, "code_search", "{\"search_text\":\"\"}", "Error: search_text is blank. ", NULL,
                 "code_search: empty text reaches the tool (not a schema error)");
    expect_error(s, "code_search", "{\"search_text\":\"(\",\"use_perl_regexp\":true}", "Error",
                 NULL, "code_search: bad regex");
    agt_session_free(s);

    s = session_at(repo);
    T_EQ_INT(agt_session_open_review(s, NULL, AGT_CHANGES_COMMIT, "HEAD", NULL), AGT_OK,
             "open_review commit HEAD");
    expect(s, "code_search", "{\"search_text\":\"return a - b\"}",
           "File: src/new.c\nMatch lines: 1\n4|    return a - b;",
           "code_search commit: HEAD's blob (line 4)");
    /* README.md is edited in the working tree ("More text" added): commit
     * mode searches HEAD's blob, never the edited file */
    expect(s, "code_search", "{\"search_text\":\"text\"}",
           "File: README.md\nMatch lines: 1\n2|Some text",
           "code_search commit: an edited file is searched as committed");
    expect(s, "code_search", "{\"search_text\":\"Some text\"}",
           "File: README.md\nMatch lines: 1\n2|Some text",
           "code_search commit: the same again (readers kept from the first search)");
    agt_session_free(s);

    s = session_at(repo);
    /* the .env of the tree is counted in every search of its scope,
     * whatever it holds */
    expect(s, "code_search", "{\"search_text\":\"todo\"}",
           "File: notes.txt\nMatch lines: 1\n1|TODO: write docs\n\nNote: 1 sensitive file "
           "(credentials, keys, environment files) is not searched.",
           "code_search workspace: untracked file searched");
    expect(s, "code_search", "{\"search_text\":\"debug\"}",
           "No matches found.\n\nNote: 1 sensitive file (credentials, keys, environment files) is "
           "not searched.",
           "code_search workspace: ignored file not searched");
    expect(s, "code_search", "{\"search_text\":\"SECRET\"}",
           "No matches found.\n\nNote: 1 sensitive file (credentials, keys, environment files) is "
           "not searched.",
           "code_search workspace: sensitive file skipped and counted");
    /* the count told a matching guess of a secret from a wrong one
     * (SECRET=1 is .env's line): the same text for both now */
    expect(s, "code_search", "{\"search_text\":\"SECRET=[0-4]\",\"use_perl_regexp\":true}",
           "No matches found.\n\nNote: 1 sensitive file (credentials, keys, environment files) is "
           "not searched.",
           "code_search workspace: a right guess of .env");
    expect(s, "code_search", "{\"search_text\":\"SECRET=[5-9]\",\"use_perl_regexp\":true}",
           "No matches found.\n\nNote: 1 sensitive file (credentials, keys, environment files) is "
           "not searched.",
           "code_search workspace: a wrong guess, the same text");
    expect(s, "code_search", "{\"search_text\":\"todo\",\"file_patterns\":[\"*.txt\"]}",
           "File: notes.txt\nMatch lines: 1\n1|TODO: write docs",
           "code_search workspace: .env outside the pathspec is not counted");
    agt_session_free(s);
}

/* The first review call of a session opens the change set (workspace
 * mode: a diff of the whole working tree); code_search searches the index's
 * files meanwhile and keeps a result only where it is what the late search
 * would give. Each case is a fresh session (the first call) and then the
 * same call again (the change set open: no early search), with the counts
 * of files taken from the early search worked out from the tree. */
static void first_and_again(const char *dir, const char *args, const char *want, size_t want_early,
                            const char *name)
{
    agt_session *s = session_at(dir);
    expect(s, "code_search", args, want, name);
    T_EQ_INT(agti_code_search_last_early(), want_early, "%s: files from the early search", name);
    expect(s, "code_search", args, want, name);
    T_EQ_INT(agti_code_search_last_early(), 0, "%s, again: none from an early search", name);
    agt_session_free(s);
}

static void test_code_search_early(void)
{
    char saved[sizeof repo];
    memcpy(saved, repo, sizeof repo);
    snprintf(repo, sizeof repo, "%s/early", root);
    mkdir(repo, 0755);
    put("a/one.c", "alpha\nneedle one\n");
    put("a/two.c", "needle two\n");
    put("b/c/three.txt", "no match\n");
    put("b/four.txt", "x\nneedle four\n");
    put(".env", "needle=secret\n");
    /* the index is written a second after the files: no entry racily clean */
    int rc = sh(GIT "init -q && sleep 1 && " GIT "add -A && " GIT "commit -q -m one");
    T_EQ_INT(rc, 0, "early: repository built");
    const char *sens =
        "\n\nNote: 1 sensitive file (credentials, keys, environment files) is not searched.";
    char want[1024];
    snprintf(want, sizeof want,
             "File: a/one.c\nMatch lines: 1\n2|needle one\n\nFile: a/two.c\nMatch lines: "
             "1\n1|needle two\n\nFile: b/four.txt\nMatch lines: 1\n2|needle four%s",
             sens);
    /* a clean tree: the change set reviews the index; every file is
     * stat-clean, so all 5 (.env too: searched, then left out) are early */
    first_and_again(repo, "{\"search_text\":\"needle\"}", want, 5, "early, clean tree");
    first_and_again(repo, "{\"search_text\":\"needle\",\"file_patterns\":[\"b/\"]}",
                    "File: b/four.txt\nMatch lines: 1\n2|needle four", 2,
                    "early, clean tree, pathspec b/");
    /* same bytes, another mtime: still the index reviewed, but a/two.c's
     * stat data no longer match its entry, so its early read does not count
     * and it is read again (from the blob) */
    rc = sh("touch -d '2030-01-02 03:04:05' a/two.c");
    T_EQ_INT(rc, 0, "early: a/two.c touched");
    first_and_again(repo, "{\"search_text\":\"needle\"}", want, 4, "early, a stat-dirty file");
    /* unstaged changes: the working tree is reviewed. a/one.c deleted (not
     * a file of the tree), b/c/three.txt edited, u/new.txt untracked (found
     * by the late search only) */
    rc = sh("rm a/one.c");
    put("b/c/three.txt", "needle three\n");
    put("u/new.txt", "needle new\n");
    T_EQ_INT(rc, 0, "early: working tree changed");
    snprintf(want, sizeof want,
             "File: a/two.c\nMatch lines: 1\n1|needle two\n\nFile: b/c/three.txt\nMatch lines: "
             "1\n1|needle three\n\nFile: b/four.txt\nMatch lines: 1\n2|needle four\n\nFile: "
             "u/new.txt\nMatch lines: 1\n1|needle new%s",
             sens);
    first_and_again(repo, "{\"search_text\":\"needle\"}", want, 4, "early, unstaged changes");
    /* a session rooted in a folder of the repository reviews the whole
     * repository's working tree, paths from its top */
    char sub[700];
    snprintf(sub, sizeof sub, "%s/b", repo);
    first_and_again(sub, "{\"search_text\":\"needle f\"}",
                    "File: b/four.txt\nMatch lines: 1\n2|needle four\n\nNote: 1 sensitive file "
                    "(credentials, keys, environment files) is not searched.",
                    4, "early, session in a subfolder");
    memcpy(repo, saved, sizeof repo);
}

/* ---- code_comment and task_done ---------------------------------------- */

static json_t *comments_of(agt_session *s)
{
    char *j = NULL;
    if (agt_session_comments(s, &j) != AGT_OK)
        return NULL;
    json_t *v = json_loads(j, 0, NULL);
    agt_free(j);
    return v;
}

static int relocate_calls;
static int relocate(const char *path, const char *file_diff, const char *snippet,
                    const char *suggestion, agt_diff_relocation *r, void *payload)
{
    (void)file_diff;
    (void)suggestion;
    (void)payload;
    relocate_calls++;
    if (strcmp(path, "src/app.c") == 0 && strcmp(snippet, "int r = add(1,2);") == 0)
        agt_diff_relocation_provide(r, "int r = add(1, 2);", 18);
    return 0;
}

static void test_code_comment(void)
{
    agt_session *s = range_session();
    T_EQ_INT(agt_session_set_review_file(s, "src/app.c"), AGT_OK, "set_review_file");
    T_EQ_STR(agt_session_review_file(s), "src/app.c", "review_file");
    T_EQ_INT(agt_session_set_turn_thinking(s, "checking main"), AGT_OK, "set_turn_thinking");
    expect(s, "code_comment",
           "{\"comments\":["
           "{\"content\":\"c1\",\"existing_code\":\"int r = add(1, 2);\\nprintf(\\\"%d\\\\n\\\", "
           "r);\",\"suggestion_code\":\"x\",\"category\":\"bug\",\"severity\":\"low\"},"
           "{\"content\":\"c2\",\"existing_code\":\"+    int r = add(1, 2);\"},"
           "{\"content\":\"c3\",\"existing_code\":\"printf(\\\"%d\\\\n\\\", add(1, 2));\"},"
           "{\"content\":\"c4\",\"existing_code\":\"{\"},"
           "{\"content\":\"c5\",\"existing_code\":\"int sub(int a, int b);\"},"
           "{\"content\":\"c6\",\"existing_code\":\"nothing like this\",\"thinking\":\"mine\"},"
           "{\"content\":\"c7\",\"existing_code\":\"return a - b;\",\"path\":\"src/new.c\"}]}",
           "Stored 7 comments:\n"
           "1. src/app.c:11-12 (new side)\n"
           "2. src/app.c:11 (new side)\n"
           "3. src/app.c:10 (old side)\n"
           "4. src/app.c: ambiguous, the snippet matches lines 5, 10 (new side) — kept at line 0. "
           "Send this comment again with a longer existing_code that occurs only once.\n"
           "5. src/util.h:2 (new side; moved: the snippet is not in src/app.c but only in this "
           "file)\n"
           "6. src/app.c: not anchored — kept at line 0 (the snippet was not found in the file's "
           "hunks or content). To place it, send it again with existing_code copied from the "
           "diff.\n"
           "7. src/new.c:3 (new side)",
           "code_comment: seven comments acknowledged");
    json_t *c = comments_of(s);
    T_EQ_INT(json_array_size(c), 7, "comments: 7 stored");
    json_t *c1 = json_array_get(c, 0);
    T_EQ_STR(json_string_value(json_object_get(c1, "path")), "src/app.c", "c1 path injected");
    T_EQ_INT(json_integer_value(json_object_get(c1, "start_line")), 11, "c1 start");
    T_EQ_INT(json_integer_value(json_object_get(c1, "end_line")), 12, "c1 end");
    T_EQ_STR(json_string_value(json_object_get(c1, "side")), "new", "c1 side");
    T_EQ_STR(json_string_value(json_object_get(c1, "method")), "hunk_new", "c1 method");
    T_EQ_STR(json_string_value(json_object_get(c1, "suggestion_code")), "x", "c1 suggestion");
    T_EQ_STR(json_string_value(json_object_get(c1, "category")), "bug", "c1 category");
    T_EQ_STR(json_string_value(json_object_get(c1, "severity")), "low", "c1 severity");
    T_EQ_STR(json_string_value(json_object_get(c1, "thinking")), "checking main",
             "c1 thinking from the turn");
    json_t *c2 = json_array_get(c, 1);
    T_CHECK(json_is_null(json_object_get(c2, "category")) &&
                json_is_null(json_object_get(c2, "suggestion_code")),
            "c2: absent optional fields are null");
    json_t *c3 = json_array_get(c, 2);
    T_EQ_STR(json_string_value(json_object_get(c3, "side")), "old", "c3 deleted line: side old");
    T_EQ_INT(json_integer_value(json_object_get(c3, "start_line")), 10, "c3 old line 10");
    T_EQ_STR(json_string_value(json_object_get(c3, "method")), "hunk_old", "c3 method");
    json_t *c4 = json_array_get(c, 3);
    char *cands = json_dumps(json_object_get(c4, "candidates"), JSON_COMPACT);
    T_EQ_STR(cands, "[[5,5],[10,10]]", "c4 ambiguous candidates");
    free(cands);
    T_CHECK(json_is_true(json_object_get(c4, "ambiguous")) &&
                json_integer_value(json_object_get(c4, "start_line")) == 0,
            "c4 stored ambiguous at line 0");
    json_t *c5 = json_array_get(c, 4);
    T_EQ_STR(json_string_value(json_object_get(c5, "path")), "src/util.h", "c5 moved path");
    T_EQ_STR(json_string_value(json_object_get(c5, "requested_path")), "src/app.c",
             "c5 requested path");
    T_EQ_STR(json_string_value(json_object_get(c5, "method")), "moved", "c5 method");
    json_t *c6 = json_array_get(c, 5);
    T_EQ_STR(json_string_value(json_object_get(c6, "method")), "unanchored", "c6 unanchored");
    T_EQ_STR(json_string_value(json_object_get(c6, "thinking")), "mine", "c6 own thinking");
    T_CHECK(json_is_string(json_object_get(c6, "reason")), "c6 has a reason");
    json_t *c7 = json_array_get(c, 6);
    T_EQ_STR(json_string_value(json_object_get(c7, "path")), "src/new.c", "c7 comment path");
    T_EQ_INT(json_integer_value(json_object_get(c7, "start_line")), 3, "c7 line 3 (v2)");
    json_decref(c);

    /* the acknowledgement's tail (line 7) */
    int err = -1;
    char *got = run(s, "code_comment",
                    "{\"path\":\"src/new.c\",\"comments\":[{\"content\":\"c8\",\"existing_code\":"
                    "\"return a - b;\"}]}",
                    &err);
    T_EQ_STR(got, "Stored 1 comment:\n1. src/new.c:3 (new side)",
             "code_comment: top-level path beats the file under review");
    free(got);
    /* re-sending c4 with a specific snippet replaces the ambiguous one */
    got =
        run(s, "code_comment",
            "{\"comments\":[{\"content\":\"c4\",\"existing_code\":\"int main(void)\\n{\"}]}", &err);
    T_EQ_STR(got, "Stored 1 comment:\n1. src/app.c:9-10 (new side)",
             "code_comment: re-quoted snippet");
    free(got);
    c = comments_of(s);
    T_EQ_INT(json_array_size(c), 8, "re-quoted comment replaced the ambiguous one");
    T_EQ_INT(json_integer_value(json_object_get(json_array_get(c, 3), "start_line")), 9,
             "replacement in place");
    json_decref(c);

    /* relocation callback through the session */
    T_EQ_INT(agt_session_set_relocator(s, relocate, 2, NULL), AGT_OK, "set_relocator");
    T_EQ_INT(agt_session_set_relocator(s, relocate, 11, NULL), AGT_EINVAL,
             "set_relocator: 11 attempts refused");
    got = run(s, "code_comment",
              "{\"comments\":[{\"content\":\"r\",\"existing_code\":\"int r = add(1,2);\"}]}", &err);
    T_EQ_STR(got, "Stored 1 comment:\n1. src/app.c:11 (new side; placed with a relocated snippet)",
             "code_comment: relocated by the host callback");
    T_EQ_INT(relocate_calls, 1, "relocator called once");
    free(got);

    /* save and restore */
    char *saved = NULL;
    T_EQ_INT(agt_session_save(s, &saved), AGT_OK, "save");
    agt_session *s2 = session_at(repo);
    T_EQ_INT(agt_session_restore(s2, saved, strlen(saved)), AGT_OK, "restore");
    char *a = NULL, *b = NULL;
    agt_session_comments(s, &a);
    agt_session_comments(s2, &b);
    T_EQ_STR(b, a, "restored comments equal the saved ones");
    agt_free(a);
    agt_free(b);
    agt_free(saved);
    T_EQ_INT(agt_session_restore(s2, "{\"format\":1,\"comments\":[{\"content\":1}]}",
                                 strlen("{\"format\":1,\"comments\":[{\"content\":1}]}")),
             AGT_EINVALID, "restore: bad comment refused");
    agt_session_free(s2);

    /* task_done */
    T_EQ_INT(agt_session_review_done(s), 0, "not done yet");
    T_CHECK(agt_session_review_state(s) == NULL, "no state yet");
    expect(s, "task_done", "{}", "Review ended (DONE). 9 comments are stored in this session.",
           "task_done: default DONE");
    T_EQ_INT(agt_session_review_done(s), 1, "done");
    T_EQ_STR(agt_session_review_state(s), "DONE", "state DONE");
    T_EQ_INT(agt_session_set_review_file(s, "src/util.h"), AGT_OK, "next file");
    T_EQ_INT(agt_session_review_done(s), 0, "next file clears done");
    expect(s, "task_done", "{\"state\":\"FAILED\"}",
           "Review ended (FAILED). 9 comments are stored in this session.", "task_done FAILED");
    T_EQ_STR(agt_session_review_state(s), "FAILED", "state FAILED");
    T_EQ_INT(agt_session_clear_comments(s), AGT_OK, "clear_comments");
    c = comments_of(s);
    T_EQ_INT(json_array_size(c), 0, "cleared");
    json_decref(c);

    /* phases: task_done and code_comment are main-phase tools */
    agt_session_set_phase(s, AGT_PHASE_PLAN);
    got = run(s, "task_done", "{}", &err);
    T_EQ_INT(err, 1, "plan phase: task_done not available");
    free(got);
    got = run(s, "file_find", "{\"query_name\":\"util\"}", &err);
    T_EQ_STR(got, "src/util.h", "plan phase: file_find available");
    free(got);
    agt_session_free(s);

    /* a borrowed change set */
    agt_changes *ch = NULL;
    T_EQ_INT(agt_changes_open(&ch, repo, AGT_CHANGES_COMMIT, "v2", NULL), AGT_OK, "changes v2");
    s = session_at(repo);
    T_EQ_INT(agt_session_set_changes(s, ch), AGT_OK, "set_changes (borrowed)");
    T_CHECK(agt_session_changes(s) == ch, "changes returns it");
    expect(s, "code_comment",
           "{\"path\":\"src/util.h\",\"comments\":[{\"content\":\"d\",\"existing_code\":\"-x\"},"
           "{\"content\":\"e\",\"existing_code\":\"int sub(int a, int b);\"}]}",
           "Stored 2 comments:\n1. src/util.h: not anchored — kept at line 0 (the snippet was "
           "not found in the file's hunks or content). To place it, send it again with "
           "existing_code copied from the diff.\n2. src/util.h:2 (new side)",
           "code_comment on a borrowed change set");
    agt_session_free(s);
    agt_changes_free(ch);
}

int main(void)
{
    build_repo();
    if (agt_registry_new(&reg) != AGT_OK || agt_registry_load_builtin(reg, "review") != AGT_OK) {
        printf("Bail out! registry: %s\n", agt_error_message());
        return 1;
    }
    test_file_read();
    test_file_read_diff();
    test_file_find();
    test_code_search();
    test_code_search_early();
    test_code_comment();
    agt_registry_free(reg);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        t_diag("could not remove %s", root);
    return t_done();
}
