/* Glob and Grep through agt_session_dispatch on a temporary workspace with
 * set modification times. Expected texts worked out by hand from the tree
 * (ordering: newest first by mtime for Glob and files_with_matches, path
 * order for content and count_matches, as ripgrep prints with -j1). */
#include "wsfix.h"

static void build_tree(void)
{
    put_file("src/a.c", "int a;\n");
    put_file("src/b.c", "int b;\n");
    put_file("src/sub/c.c", "int c;\n");
    put_file("src/x.h", "int x;\n");
    put_file("README.md", "# readme\n");
    put_file(".gitignore", "build/\n");
    put_file("build/out.c", "int out;\n");
    put_file(".env", "KEY=1\n");
    put_file(".hidden/h.c", "int h;\n");
    set_mtime("src/a.c", 1000);
    set_mtime("src/b.c", 3000);
    set_mtime("src/sub/c.c", 2000);
    set_mtime("build/out.c", 500);
    set_mtime("src/x.h", 900);
    set_mtime(".hidden/h.c", 1500);
    for (int i = 0; i < 150; i++) {
        char name[64];
        snprintf(name, sizeof name, "many/f%03d.txt", i);
        put_file(name, "x\n");
        set_mtime(name, 10000 + i);
    }
    /* grep tree */
    put_file("g/one.txt", "foo\nbar\nfoo bar\n");
    put_file("g/two.txt", "nothing\nFOO\n");
    put_file("g/ctx.txt", "m1\nc\nc\nc\nc\nm2\n");
    put_file("g/.gitignore", "ign/\n");
    put_file("g/ign/x.txt", "foo\n");
    put_file("g/.env.local", "foo=1\n");
    put_file("g/code.py", "foo = 1\n");
    set_mtime("g/one.txt", 100);
    set_mtime("g/two.txt", 200);
    set_mtime("g/ctx.txt", 50);
    set_mtime("g/code.py", 300);
    set_mtime("g/ign/x.txt", 400);
    put_file("m/s.cc", "struct a {\n int x;\n};\nint y;\n");
    put_file("home/.aws/credentials", "aws_secret = 1\n");
    put_file("home/.aws/config", "region = x\n");
}

static void test_glob(agt_session *s)
{
    expect(s, "Glob", "{\"pattern\":\"*.c\"}", "src/b.c\nsrc/sub/c.c\n.hidden/h.c\nsrc/a.c", 0,
           "any depth, newest first, ignored left out");
    expect(s, "Glob", "{\"pattern\":\"*.c\",\"include_ignored\":true}",
           "src/b.c\nsrc/sub/c.c\n.hidden/h.c\nsrc/a.c\nbuild/out.c", 0, "include_ignored");
    expect(s, "Glob", "{\"pattern\":\"*.c\",\"path\":\"src\"}", "src/b.c\nsrc/sub/c.c\nsrc/a.c", 0,
           "path argument");
    expect(s, "Glob", "{\"pattern\":\"src/{a,b}.c\"}", "src/b.c\nsrc/a.c", 0, "braces");
    expect(s, "Glob", "{\"pattern\":\"src/*.c\"}", "src/b.c\nsrc/a.c", 0, "slash anchors");
    expect(s, "Glob", "{\"pattern\":\"src/**/*.[ch]\"}", "src/b.c\nsrc/sub/c.c\nsrc/a.c\nsrc/x.h",
           0, "globstar and class");
    expect(s, "Glob", "{\"pattern\":\".env*\"}",
           "No files match '.env*' in the workspace root.\n2 sensitive files matching the "
           "pattern were left out (.env files, private keys, credentials).",
           0, "sensitive filtered with count");
    expect(s, "Glob", "{\"pattern\":\"*.zig\"}", "No files match '*.zig' in the workspace root.", 0,
           "no match");
    expect(s, "Glob", "{\"pattern\":\"*.zig\",\"path\":\"src\"}", "No files match '*.zig' in src.",
           0, "no match in a folder");
    agt_result *r = call(s, "Glob", "{\"pattern\":\"many/*\"}");
    const char *t = agt_result_text(r);
    const char *note = "many/f050.txt\n\nShowing the 100 most recently modified of 150 matching "
                       "files; narrow the pattern or the folder to see the others.";
    T_CHECK(strncmp(t, "many/f149.txt\nmany/f148.txt\n", 28) == 0, "Glob: 100 cap newest first");
    T_CHECK(strlen(t) > strlen(note) && strcmp(t + strlen(t) - strlen(note), note) == 0,
            "Glob: 100 cap note");
    agt_result_free(r);
    expect_prefix(s, "Glob", "{\"pattern\":\"src/{a\"}",
                  "Invalid glob pattern 'src/{a': ", AGT_EPARSE, "unbalanced brace");
    expect(s, "Glob", "{\"pattern\":\"*\",\"path\":\"README.md\"}",
           "README.md is a file, not a folder; give Glob a folder as path (Read reads a file).", 1,
           "path is a file");
    expect(s, "Glob", "{\"pattern\":\"*\",\"path\":\"nope\"}", "nope does not exist.", 1,
           "missing folder");
    {
        char up[4096];
        if (realpath(ws, up) != NULL && strrchr(up, '/') != up)
            *strrchr(up, '/') = '\0';
        expect_outside(s, "Glob", "{\"pattern\":\"*\",\"path\":\"..\"}", up, "read",
                       "outside the root");
    }
}

static void test_grep(agt_session *s)
{
    const char *sens = "1 sensitive file (.env files, private keys, credentials) was left out.";
    char want[1024];
    snprintf(want, sizeof want, "g/code.py\ng/one.txt\n%s", sens);
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g\"}", want, 0, "files_with_matches");
    snprintf(want, sizeof want, "g/code.py\ng/two.txt\ng/one.txt\n%s", sens);
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g\",\"-i\":true}", want, 0,
           "-i newest first");
    snprintf(want, sizeof want, "g/code.py\ng/one.txt\n%s", sens);
    expect(s, "Grep", "{\"pattern\":\"fo+\\\\b\",\"path\":\"g\"}", want, 0, "regex");
    snprintf(want, sizeof want, "g/one.txt:1:foo\ng/one.txt:3:foo bar\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"content\",\"glob\":\"*.txt\"}",
           want, 0, "content");
    snprintf(want, sizeof want, "g/one.txt:foo\ng/one.txt:foo bar\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"content\",\"-n\":false,"
           "\"glob\":\"*.txt\"}",
           want, 0, "content without line numbers");
    snprintf(want, sizeof want, "g/one.txt:1:foo\ng/one.txt-2-bar\ng/one.txt:3:foo bar\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"content\",\"-C\":1,"
           "\"glob\":\"one.txt\"}",
           want, 0, "context in one group");
    snprintf(want, sizeof want,
             "g/ctx.txt:1:m1\ng/ctx.txt-2-c\n--\ng/ctx.txt-5-c\ng/ctx.txt:6:m2\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"^m\\\\d\",\"path\":\"g\",\"output_mode\":\"content\",\"-A\":1,\"-B\":1}",
           want, 0, "context groups separated by --");
    snprintf(want, sizeof want, "g/code.py:1\ng/one.txt:2\nTotal: 3 matching lines in 2 files.\n%s",
             sens);
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"count_matches\"}",
           want, 0, "count");
    snprintf(want, sizeof want,
             "g/code.py:1:foo = 1\n[Showing lines 1-1 of 3; continue with offset 1 or narrow the "
             "search.]\n%s",
             sens);
    {
        agt_result *r = call(s, "Grep",
                             "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"content\","
                             "\"head_limit\":1}");
        const char *t = agt_result_text(r);
        T_CHECK(strncmp(t, "g/code.py:1:foo = 1\n[Showing lines 1-1 of ", 40) == 0 &&
                    strstr(t, "continue with offset 1 or narrow the search.]") != NULL,
                "Grep: head_limit 1 cuts and says so");
        if (!T_CHECK(strstr(t, "\n1 sensitive") != NULL,
                     "Grep: head_limit keeps the sensitive note"))
            t_diag("%s", t);
        agt_result_free(r);
    }
    snprintf(want, sizeof want, "g/one.txt:3:foo bar\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"output_mode\":\"content\",\"offset\":2}", want, 0,
           "offset");
    snprintf(want, sizeof want, "g/two.txt\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"-i\":true,\"offset\":1,\"head_limit\":1}",
           "g/two.txt\n[Showing files 2-2 of 3; continue with offset 2 or narrow the search.]\n"
           "1 sensitive file (.env files, private keys, credentials) was left out.",
           0, "files paging");
    snprintf(want, sizeof want, "g/ign/x.txt\ng/one.txt\n%s", sens);
    expect(s, "Grep",
           "{\"pattern\":\"foo\",\"path\":\"g\",\"include_ignored\":true,\"glob\":\"*.txt\"}", want,
           0, "include_ignored");
    snprintf(want, sizeof want, "g/code.py\n%s", sens);
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g\",\"type\":\"py\"}", want, 0, "type py");
    snprintf(want, sizeof want, "No matches for 'zzz'.\n%s", sens);
    expect(s, "Grep", "{\"pattern\":\"zzz\",\"path\":\"g\"}", want, 0, "no match");
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g/one.txt\",\"output_mode\":\"content\"}",
           "g/one.txt:1:foo\ng/one.txt:3:foo bar", 0, "single file");
    expect(s, "Grep", "{\"pattern\":\"foo\",\"path\":\"g/.env.local\"}",
           "No matches for 'foo'.\n1 sensitive file (.env files, private keys, credentials) was "
           "left out.",
           0, "sensitive single file");
    expect(s, "Grep", "{\"pattern\":\"int\",\"path\":\"src\",\"output_mode\":\"count_matches\"}",
           "src/a.c:1\nsrc/b.c:1\nsrc/sub/c.c:1\nsrc/x.h:1\nTotal: 4 matching lines in 4 files.", 0,
           "count without sensitive files");
    /* rg -U -n: every line of a multi-line match is a match line */
    expect(
        s, "Grep",
        "{\"pattern\":\"struct \\\\w+ \\\\{[\\\\s\\\\S]*?\\\\}\",\"path\":\"m\",\"multiline\":true,"
        "\"output_mode\":\"content\"}",
        "m/s.cc:1:struct a {\nm/s.cc:2: int x;\nm/s.cc:3:};", 0, "multiline");
    expect(s, "Grep",
           "{\"pattern\":\"a.*x\",\"path\":\"m\",\"multiline\":true,\"output_mode\":\"content\"}",
           "m/s.cc:1:struct a {\nm/s.cc:2: int x;", 0, "multiline dot matches a line break");
    expect(s, "Grep", "{\"pattern\":\"a.*x\",\"path\":\"m\",\"output_mode\":\"content\"}",
           "No matches for 'a.*x'.", 0, "without multiline");
    /* credentials is left out, and not counted: it is judged when it
     * matched, and a count would tell a right guess of it from a wrong one */
    expect(s, "Grep", "{\"pattern\":\"=\",\"path\":\"home/.aws\"}", "home/.aws/config", 0,
           "sensitive judged on the whole path");
    expect(s, "Glob", "{\"pattern\":\"*\",\"path\":\"home/.aws\"}",
           "home/.aws/config\n\n1 sensitive file matching the pattern was left out (.env files, "
           "private keys, credentials).",
           0, "Glob: sensitive judged on the whole path");
    expect_prefix(s, "Grep", "{\"pattern\":\"(\",\"path\":\"g\"}", "Grep cannot run: ", AGT_EPARSE,
                  "bad regex");
    expect_prefix(s, "Grep", "{\"pattern\":\"x\",\"type\":\"nolang\"}",
                  "Grep cannot run: ", AGT_EINVAL, "unknown type");
    expect(s, "Grep", "{\"pattern\":\"x\",\"path\":\"nope\"}", "nope does not exist.", 1,
           "missing");
    expect_outside(s, "Grep", "{\"pattern\":\"x\",\"path\":\"/\"}", "/", "read",
                   "outside the root");
}

int main(void)
{
    make_ws("wssearch");
    build_tree();
    agt_session *s = new_session();
    test_glob(s);
    test_grep(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
