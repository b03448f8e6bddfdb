/*
 * Anchoring: each case is a real diff (calc.c made with git diff -U1, the
 * others written to git's format) and lines worked out by hand from it.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/diff.h"
#include "core/core.h"
#include "harness.h"

static const char DIFF[] = "diff --git a/src/calc.c b/src/calc.c\n"
                           "index faf48e5..2f01036 100644\n"
                           "--- a/src/calc.c\n"
                           "+++ b/src/calc.c\n"
                           "@@ -6,3 +6,2 @@ int add(int a, int b)\n"
                           " {\n"
                           "-    counter++;\n"
                           "     return a + b;\n"
                           "@@ -12,3 +11,5 @@ int mul(int a, int b)\n"
                           " {\n"
                           "-    return a * b;\n"
                           "+    int r = a * b;\n"
                           "+    counter += r;\n"
                           "+    return r;\n"
                           " }\n"
                           "@@ -18,2 +19,3 @@ int main(void)\n"
                           "     printf(\"%d\\n\", add(1, 2));\n"
                           "+    printf(\"%d\\n\", mul(2, 3));\n"
                           "     return 0;\n"
                           "diff --git a/notes.txt b/notes.txt\n"
                           "index 1111111..2222222 100644\n"
                           "--- a/notes.txt\n"
                           "+++ b/notes.txt\n"
                           "@@ -3,3 +3,5 @@ beta\n"
                           " gamma\n"
                           "+NEW ONE\n"
                           "+NEW TWO\n"
                           " delta\n"
                           " epsilon\n"
                           "diff --git a/util/old_name.h b/util/new_name.h\n"
                           "similarity index 80%\n"
                           "rename from util/old_name.h\n"
                           "rename to util/new_name.h\n"
                           "index 3333333..4444444 100644\n"
                           "--- a/util/old_name.h\n"
                           "+++ b/util/new_name.h\n"
                           "@@ -1,3 +1,3 @@\n"
                           " #pragma once\n"
                           "-int legacy_api(void);\n"
                           "+int modern_api(void);\n"
                           " int helper(void);\n"
                           "diff --git a/win.txt b/win.txt\n"
                           "index 5555555..6666666 100644\n"
                           "--- a/win.txt\n"
                           "+++ b/win.txt\n"
                           "@@ -1,3 +1,3 @@\n"
                           " foo\r\n"
                           "-bar\r\n"
                           "+BAR\r\n"
                           " baz\r\n"
                           "diff --git a/dup.c b/dup.c\n"
                           "index 7777777..8888888 100644\n"
                           "--- a/dup.c\n"
                           "+++ b/dup.c\n"
                           "@@ -1,2 +1,3 @@\n"
                           " void f(void)\n"
                           "+    reset();\n"
                           " {\n"
                           "@@ -10,2 +11,3 @@\n"
                           " void g(void)\n"
                           "+    reset();\n"
                           " {\n"
                           "diff --git a/x.c b/x.c\n"
                           "index 1212121..3434343 100644\n"
                           "--- a/x.c\n"
                           "+++ b/x.c\n"
                           "@@ -1 +1,2 @@\n"
                           " x\n"
                           "+shared_line();\n"
                           "diff --git a/y.c b/y.c\n"
                           "index 5656565..7878787 100644\n"
                           "--- a/y.c\n"
                           "+++ b/y.c\n"
                           "@@ -1 +1,2 @@\n"
                           " y\n"
                           "+shared_line();\n"
                           "diff --git a/list.md b/list.md\n"
                           "index 9999999..aaaaaaa 100644\n"
                           "--- a/list.md\n"
                           "+++ b/list.md\n"
                           "@@ -1,2 +1,3 @@\n"
                           " # List\n"
                           "+- item one\n"
                           " - item two\n";

static const char CALC_POST[] = "#include <stdio.h>\n"
                                "\n"
                                "static int counter;\n"
                                "\n"
                                "int add(int a, int b)\n"
                                "{\n"
                                "    return a + b;\n"
                                "}\n"
                                "\n"
                                "int mul(int a, int b)\n"
                                "{\n"
                                "    int r = a * b;\n"
                                "    counter += r;\n"
                                "    return r;\n"
                                "}\n"
                                "\n"
                                "int main(void)\n"
                                "{\n"
                                "    printf(\"%d\\n\", add(1, 2));\n"
                                "    printf(\"%d\\n\", mul(2, 3));\n"
                                "    return 0;\n"
                                "}\n";

static json_t *anchor(const agt_diff *d, const char *path, const char *snippet)
{
    char *s = NULL;
    int rc = agt_diff_anchor(d, path, snippet, &s);
    if (rc != AGT_OK) {
        t_diag("anchor failed: %s", agt_error_message());
        return NULL;
    }
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        t_diag("invalid JSON %s", s);
    agt_free(s);
    return j;
}

/* Checks path, lines, side and method of an anchor result. */
static void expect(const char *name, json_t *j, const char *path, long long start, long long end,
                   const char *side, const char *method)
{
    const char *p = json_string_value(json_object_get(j, "path"));
    long long s = json_integer_value(json_object_get(j, "start_line"));
    long long e = json_integer_value(json_object_get(j, "end_line"));
    const char *sd = json_string_value(json_object_get(j, "side"));
    const char *m = json_string_value(json_object_get(j, "method"));
    int ok = j && p && path && strcmp(p, path) == 0 && s == start && e == end && sd &&
             strcmp(sd, side) == 0 && m && strcmp(m, method) == 0;
    if (!T_CHECK(ok, "%s", name)) {
        char *dump = j ? json_dumps(j, 0) : NULL;
        t_diag("  got  %s", dump ? dump : "(null)");
        t_diag("  want path=%s lines=%lld-%lld side=%s method=%s", path, start, end, side, method);
        free(dump);
    }
    json_decref(j);
}

typedef struct reloc {
    const char *answer; /* NULL: give no answer */
    int calls;
    int cancel;
    int saw_diff;
    char suggestion[64];
} reloc;

static int relocate(const char *path, const char *file_diff, const char *snippet,
                    const char *suggestion, agt_diff_relocation *r, void *payload)
{
    reloc *st = payload;
    (void)path;
    (void)snippet;
    st->calls++;
    if (strstr(file_diff, "@@ -3,3 +3,5 @@ beta"))
        st->saw_diff = 1;
    snprintf(st->suggestion, sizeof st->suggestion, "%s", suggestion);
    if (st->cancel)
        return 1;
    if (st->answer)
        agt_diff_relocation_provide(r, st->answer, strlen(st->answer));
    return 0;
}

/* zlib's ChangeLog has "Tyge L\xf8vset" in Latin-1. The review tools show the
 * model every invalid byte as U+FFFD (agti_utf8_sanitize), so that is what
 * the model quotes back; each stage must match it, and only it. */
static void test_latin1(void)
{
    static const char LATIN1[] = "diff --git a/ChangeLog b/ChangeLog\n"
                                 "index 1111111..2222222 100644\n"
                                 "--- a/ChangeLog\n"
                                 "+++ b/ChangeLog\n"
                                 "@@ -10,3 +10,3 @@ Changes in 1.2.3\n"
                                 " - Fix typo\n"
                                 "-  by Tyge L\xf8vset\n"
                                 "+  by Tyge L\xc3\xb8vset (UTF-8 now)\n"
                                 " - Add zlib.3.pdf\n"
                                 "diff --git a/names.txt b/names.txt\n"
                                 "index 3333333..4444444 100644\n"
                                 "--- a/names.txt\n"
                                 "+++ b/names.txt\n"
                                 "@@ -1,2 +1,3 @@\n"
                                 " J\xfcrgen\n"
                                 "+Ren\xe9\n"
                                 " end\n";
    agt_diff *d = NULL;
    T_EQ_INT(agt_diff_parse(&d, LATIN1, strlen(LATIN1)), AGT_OK, "Latin-1 diff parses");
    expect("deleted Latin-1 line quoted as shown (U+FFFD): old side, line 11",
           anchor(d, "ChangeLog", "  by Tyge L\xef\xbf\xbdvset"), "ChangeLog", 11, 11, "old",
           "hunk_old");
    expect("the raw byte itself still matches", anchor(d, "ChangeLog", "by Tyge L\xf8vset"),
           "ChangeLog", 11, 11, "old", "hunk_old");
    expect("the real UTF-8 line is the new one",
           anchor(d, "ChangeLog", "by Tyge L\xc3\xb8vset (UTF-8 now)"), "ChangeLog", 11, 11, "new",
           "hunk_new");
    expect("added Latin-1 line quoted as shown: new side, line 2",
           anchor(d, "names.txt", "Ren\xef\xbf\xbd"), "names.txt", 2, 2, "new", "hunk_new");
    expect("context + added Latin-1 lines as shown",
           anchor(d, "names.txt", "J\xef\xbf\xbdrgen\nRen\xef\xbf\xbd"), "names.txt", 1, 2, "new",
           "hunk_new");
    /* one U+FFFD per invalid byte: two replacement characters do not stand for one byte */
    json_t *j = anchor(d, "names.txt", "Ren\xef\xbf\xbd\xef\xbf\xbd");
    const char *m = json_string_value(json_object_get(j, "method"));
    T_EQ_STR(m, "unanchored", "two U+FFFD for one byte: not found");
    json_decref(j);
    T_EQ_INT(agt_diff_set_content(d, "names.txt", "J\xfcrgen\nRen\xe9\nend\nZo\xeb\n", 19), AGT_OK,
             "Latin-1 post-change file given");
    expect("file scan: a line outside the hunk quoted as shown",
           anchor(d, "names.txt", "Zo\xef\xbf\xbd"), "names.txt", 4, 4, "new", "file");
    agt_diff_free(d);
}

int main(void)
{
    agt_diff *d = NULL;
    T_EQ_INT(agt_diff_parse(&d, DIFF, strlen(DIFF)), AGT_OK, "test diff parses");
    T_EQ_INT(agt_diff_file_count(d), 8, "8 files");
    test_latin1();

    expect("deleted line: old side, old-file line", anchor(d, "src/calc.c", "counter++;"),
           "src/calc.c", 7, 7, "old", "hunk_old");
    expect("added lines in @@ -3,3 +3,5 @@ -> 4-5", anchor(d, "notes.txt", "NEW ONE\nNEW TWO"),
           "notes.txt", 4, 5, "new", "hunk_new");
    expect("context line -> new-side number", anchor(d, "notes.txt", "  delta  "), "notes.txt", 6,
           6, "new", "hunk_new");
    expect("context line in calc.c -> new 7", anchor(d, "src/calc.c", "return a + b;"),
           "src/calc.c", 7, 7, "new", "hunk_new");
    expect("match in the second hunk",
           anchor(d, "src/calc.c", "    int r = a * b;\n    counter += r;"), "src/calc.c", 12, 13,
           "new", "hunk_new");
    expect("new-side run across a deleted line", anchor(d, "src/calc.c", "{\n return a + b;"),
           "src/calc.c", 6, 7, "new", "hunk_new");
    expect("old-side run across an added line",
           anchor(d, "src/calc.c", "printf(\"%d\\n\", add(1, 2));\nreturn 0;"), "src/calc.c", 18,
           19, "old", "hunk_old");
    expect("snippet pasted with + markers",
           anchor(d, "src/calc.c", "+    int r = a * b;\n+    counter += r;\n"), "src/calc.c", 12,
           13, "new", "hunk_new");
    expect("snippet pasted with - and space markers",
           anchor(d, "src/calc.c", " {\n-    return a * b;"), "src/calc.c", 12, 13, "old",
           "hunk_old");
    expect("renamed file addressed by its old path",
           anchor(d, "util/old_name.h", "int modern_api(void);"), "util/new_name.h", 2, 2, "new",
           "hunk_new");
    expect("renamed file, old side by old path",
           anchor(d, "util/old_name.h", "int legacy_api(void);"), "util/new_name.h", 2, 2, "old",
           "hunk_old");
    expect("leading blank lines in the snippet", anchor(d, "notes.txt", "\n\n  \nNEW ONE\nNEW TWO"),
           "notes.txt", 4, 5, "new", "hunk_new");
    expect("blank line inside the snippet", anchor(d, "notes.txt", "NEW TWO\n\ndelta"), "notes.txt",
           5, 6, "new", "hunk_new");
    expect("CRLF file, LF snippet", anchor(d, "win.txt", "BAR\nbaz"), "win.txt", 2, 3, "new",
           "hunk_new");
    expect("CRLF file, CRLF snippet", anchor(d, "win.txt", "foo\r\nBAR\r\n"), "win.txt", 1, 2,
           "new", "hunk_new");

    expect("code lines that start with '-': tried as written",
           anchor(d, "list.md", "- item one\n- item two"), "list.md", 2, 3, "new", "hunk_new");
    expect("code lines that start with '-', pasted with markers",
           anchor(d, "list.md", "+- item one\n - item two"), "list.md", 2, 3, "new", "hunk_new");
    expect("rarest line last: verified backwards on the old side",
           anchor(d, "src/calc.c", "{\n-    return a * b;"), "src/calc.c", 12, 13, "old",
           "hunk_old");

    /* file-scan fallback: needs the post-change content */
    expect("no content: a line outside the hunks is not found",
           anchor(d, "src/calc.c", "#include <stdio.h>\nstatic int counter;"), "src/calc.c", 0, 0,
           "new", "unanchored");
    T_EQ_INT(agt_diff_set_content(d, "src/calc.c", CALC_POST, strlen(CALC_POST)), AGT_OK,
             "set content");
    expect("file scan across a blank line",
           anchor(d, "src/calc.c", "#include <stdio.h>\nstatic int counter;"), "src/calc.c", 1, 3,
           "new", "file");
    expect("file scan: } then int main across a blank line",
           anchor(d, "src/calc.c", "}\nint main(void)"), "src/calc.c", 15, 17, "new", "file");
    expect("function header only in the file", anchor(d, "src/calc.c", "int add(int a, int b)"),
           "src/calc.c", 5, 5, "new", "file");
    T_EQ_INT(agt_diff_set_content(d, "win.txt", "foo\r\nBAR\r\nbaz\r\nqux\r\n", 20), AGT_OK,
             "set CRLF content");
    expect("CRLF content scan", anchor(d, "win.txt", "baz\nqux"), "win.txt", 3, 4, "new", "file");
    const char *c = NULL;
    size_t clen = 0;
    T_EQ_INT(agt_diff_content(d, "src/calc.c", &c, &clen), AGT_OK, "content read back");
    T_EQ_INT(clen, strlen(CALC_POST), "content length");
    T_EQ_INT(agt_diff_content(d, "notes.txt", &c, &clen), AGT_ENOTFOUND, "no content for notes");

    /* ambiguity */
    json_t *j = anchor(d, "dup.c", "reset();");
    T_CHECK(json_is_true(json_object_get(j, "ambiguous")), "twice: ambiguous");
    char *cand = json_dumps(json_object_get(j, "candidates"), JSON_COMPACT);
    T_EQ_STR(cand, "[[2,2],[12,12]]", "twice: both candidates");
    free(cand);
    expect("twice: not pinned (line 0), method of the stage", j, "dup.c", 0, 0, "new", "hunk_new");

    j = anchor(d, "notes.txt", "\n   \n\t\n");
    T_CHECK(json_object_get(j, "reason") != NULL, "all blank: a reason");
    expect("all-blank snippet -> unanchored", j, "notes.txt", 0, 0, "new", "unanchored");

    /* other files */
    expect("snippet in another file -> moved",
           anchor(d, "notes.txt", "int r = a * b;\ncounter += r;"), "src/calc.c", 12, 13, "new",
           "moved");
    j = anchor(d, "notes.txt", "shared_line();");
    char *op = json_dumps(json_object_get(j, "other_paths"), JSON_COMPACT);
    T_EQ_STR(op, "[\"x.c\",\"y.c\"]", "two other files: both named");
    free(op);
    expect("snippet in two other files -> not moved", j, "notes.txt", 0, 0, "new", "unanchored");
    expect("own file wins over other files", anchor(d, "x.c", "shared_line();"), "x.c", 2, 2, "new",
           "hunk_new");
    expect("no path: unique hit anywhere", anchor(d, NULL, "NEW TWO"), "notes.txt", 5, 5, "new",
           "moved");
    expect("path not in the change set", anchor(d, "nowhere.c", "NEW TWO"), "notes.txt", 5, 5,
           "new", "moved");

    /* relocation callback */
    reloc st = {"NEW ONE", 0, 0, 0, ""};
    T_EQ_INT(agt_diff_set_relocator(d, relocate, 2, &st), AGT_OK, "set relocator");
    j = anchor(d, "notes.txt", "this line is nowhere");
    T_EQ_INT(st.calls, 1, "relocation: one call");
    T_CHECK(st.saw_diff, "relocation: the callback got the file's diff");
    T_CHECK(json_is_true(json_object_get(j, "relocated")), "relocation: flagged");
    T_EQ_STR(json_string_value(json_object_get(j, "snippet")), "NEW ONE", "relocation: snippet");
    expect("relocation: fixed snippet anchors", j, "notes.txt", 4, 4, "new", "hunk_new");

    st = (reloc){"I believe the problem is in the loop that adds the numbers.", 0, 0, 0, ""};
    j = anchor(d, "notes.txt", "nowhere either");
    T_EQ_INT(st.calls, 2, "relocation prose: tried max_attempts times");
    T_EQ_INT(json_integer_value(json_object_get(j, "attempts")), 2, "relocation prose: attempts");
    expect("relocation prose: unanchored", j, "notes.txt", 0, 0, "new", "unanchored");

    st = (reloc){"NEW THREE", 0, 0, 0, ""};
    expect("relocation: snippet that still does not match", anchor(d, "notes.txt", "nope"),
           "notes.txt", 0, 0, "new", "unanchored");
    T_EQ_INT(st.calls, 2, "relocation: still no match after 2 calls");

    st = (reloc){NULL, 0, 0, 0, ""};
    expect("relocation: no answer stops at once", anchor(d, "notes.txt", "nope"), "notes.txt", 0, 0,
           "new", "unanchored");
    T_EQ_INT(st.calls, 1, "relocation: no answer -> 1 call");

    st = (reloc){NULL, 0, 1, 0, ""};
    char *out = NULL;
    T_EQ_INT(agt_diff_anchor(d, "notes.txt", "nope", &out), AGT_ECANCELLED,
             "relocation: callback cancels");
    T_CHECK(out == NULL, "relocation: nothing returned on cancel");

    st = (reloc){NULL, 0, 0, 0, ""};
    expect("anchored comment does not call the callback", anchor(d, "notes.txt", "NEW ONE"),
           "notes.txt", 4, 4, "new", "hunk_new");
    T_EQ_INT(st.calls, 0, "no relocation call when anchored");

    /* batch */
    const char *batch = "[{\"path\":\"notes.txt\",\"existing_code\":\"NEW ONE\\nNEW TWO\"},"
                        "{\"existing_code\":\"counter++;\"},"
                        "{\"path\":\"notes.txt\",\"existing_code\":\"zzz\","
                        "\"suggestion_code\":\"fixed()\"}]";
    T_EQ_INT(agt_diff_anchor_batch(d, batch, strlen(batch), &out), AGT_OK, "batch: ok");
    json_error_t e;
    json_t *arr = out ? json_loads(out, 0, &e) : NULL;
    agt_free(out);
    T_EQ_INT(json_array_size(arr), 3, "batch: 3 results");
    expect("batch[0]", json_incref(json_array_get(arr, 0)), "notes.txt", 4, 5, "new", "hunk_new");
    expect("batch[1] without path", json_incref(json_array_get(arr, 1)), "src/calc.c", 7, 7, "old",
           "moved");
    expect("batch[2] unanchored", json_incref(json_array_get(arr, 2)), "notes.txt", 0, 0, "new",
           "unanchored");
    T_EQ_STR(st.suggestion, "fixed()", "batch: suggestion reaches the callback");
    json_decref(arr);
    out = NULL;
    T_EQ_INT(agt_diff_anchor_batch(d, "{}", 2, &out), AGT_EINVALID, "batch: not an array");
    T_EQ_INT(agt_diff_anchor_batch(d, "[{\"path\":1}]", 12, &out), AGT_EINVALID,
             "batch: missing existing_code");
    T_CHECK(strstr(agt_error_message(), "/0/existing_code") != NULL, "batch: names the index");
    T_EQ_INT(agt_diff_anchor_batch(d, "[", 1, &out), AGT_EPARSE, "batch: bad JSON");
    T_EQ_INT(agt_diff_set_relocator(d, relocate, 0, &st), AGT_EINVAL, "relocator: 0 attempts");
    T_EQ_INT(agt_diff_anchor(NULL, "x", "y", &out), AGT_EINVAL, "anchor: NULL diff");
    T_EQ_INT(agt_diff_anchor(d, "x", NULL, &out), AGT_EINVAL, "anchor: NULL snippet");
    T_EQ_INT(agt_diff_set_content(d, "", "x", 1), AGT_EINVAL, "set_content: empty path");
    agt_diff_free(d);

    /* 20,000 identical lines: an ambiguous snippet stops at 100 candidates */
    agti_buf big = AGTI_BUF_INIT;
    agti_buf_puts(&big, "--- a/f\n+++ b/f\n@@ -0,0 +1,20000 @@\n");
    for (int i = 0; i < 20000; i++)
        agti_buf_puts(&big, "+}\n");
    T_EQ_INT(agt_diff_parse(&d, big.ptr, big.len), AGT_OK, "20,000 braces parse");
    j = anchor(d, "f", "}\n}\n}");
    T_EQ_INT(json_array_size(json_object_get(j, "candidates")), 100, "braces: 100 candidates");
    cand = json_dumps(json_array_get(json_object_get(j, "candidates"), 0), JSON_COMPACT);
    T_EQ_STR(cand, "[1,3]", "braces: first candidate 1-3");
    free(cand);
    expect("braces: ambiguous", j, "f", 0, 0, "new", "hunk_new");
    agt_diff_free(d);
    agti_buf_free(&big);
    return t_done();
}
