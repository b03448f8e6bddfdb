/*
 * Hand-made diffs for the parser's edge cases: quoted paths, extended
 * headers, CRLF headers, plain diffs, malformed input, the builder and
 * rendering. Expected values come from git's documented format.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agenttools/diff.h"
#include "diff/diff_internal.h"
#include "harness.h"

static agt_diff *parse(const char *text)
{
    agt_diff *d = NULL;
    int rc = agt_diff_parse(&d, text, strlen(text));
    if (rc != AGT_OK)
        t_diag("parse failed: %s", agt_error_message());
    return d;
}

/* JSON of the whole diff, parsed back with jansson. */
static json_t *to_json(const agt_diff *d)
{
    char *s = NULL;
    if (agt_diff_to_json(d, &s) != AGT_OK)
        return NULL;
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j)
        t_diag("invalid JSON: %s: %s", e.text, s);
    agt_free(s);
    return j;
}

static json_t *file_json(json_t *j, size_t i)
{
    return json_array_get(json_object_get(j, "files"), i);
}

static const char *jstr(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static long long jint(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static void test_quoted_paths(void)
{
    agt_diff *d = parse("diff --git \"a/caf\\303\\251 \\\"x\\\"\\t.txt\" \"b/caf\\303\\251 "
                        "\\\"x\\\"\\t.txt\"\n"
                        "new file mode 100644\n"
                        "index 0000000..e69de29\n"
                        "--- /dev/null\n"
                        "+++ \"b/caf\\303\\251 \\\"x\\\"\\t.txt\"\n"
                        "@@ -0,0 +1 @@\n"
                        "+hello\n");
    T_CHECK(d != NULL, "quoted: parses");
    T_EQ_STR(agt_diff_file_new_path(d, 0), "caf\xc3\xa9 \"x\"\t.txt",
             "quoted: octal UTF-8 and escapes");
    T_CHECK(agt_diff_file_old_path(d, 0) == NULL, "quoted: added file has no old path");
    T_EQ_INT(agt_diff_file_status(d, 0), AGT_DIFF_ADDED, "quoted: added");
    json_t *j = to_json(d);
    T_EQ_STR(jstr(file_json(j, 0), "new_mode"), "100644", "quoted: new_mode");
    T_CHECK(json_is_null(json_object_get(file_json(j, 0), "old_mode")), "quoted: old_mode null");
    json_decref(j);
    agt_diff_free(d);

    /* a byte that is not UTF-8 is carried in the path, replaced in JSON */
    d = parse("diff --git \"a/\\377.bin\" \"b/\\377.bin\"\n"
              "old mode 100644\nnew mode 100755\n");
    T_EQ_STR(agt_diff_file_path(d, 0), "\xff.bin", "quoted: raw byte kept in the path");
    j = to_json(d);
    T_EQ_STR(jstr(file_json(j, 0), "new_path"), "\xef\xbf\xbd.bin", "quoted: U+FFFD in JSON");
    T_EQ_STR(jstr(file_json(j, 0), "status"), "modified", "mode-only change is modified");
    T_EQ_STR(jstr(file_json(j, 0), "old_mode"), "100644", "old mode");
    T_EQ_STR(jstr(file_json(j, 0), "new_mode"), "100755", "new mode");
    json_decref(j);
    agt_diff_free(d);
}

static void test_spaces_rename_copy(void)
{
    agt_diff *d = parse("diff --git a/my file.txt b/my file.txt\n"
                        "old mode 100644\n"
                        "new mode 100755\n"
                        "diff --git a/old name.c b/new name.c\n"
                        "similarity index 100%\n"
                        "rename from old name.c\n"
                        "rename to new name.c\n"
                        "diff --git a/src.c b/dst.c\n"
                        "similarity index 90%\n"
                        "copy from src.c\n"
                        "copy to dst.c\n"
                        "index 1111111..2222222 100644\n"
                        "--- a/src.c\n"
                        "+++ b/dst.c\n"
                        "@@ -1,2 +1,2 @@\n"
                        " a\n"
                        "-b\n"
                        "+c\n"
                        "diff --git a/big.c b/big.c\n"
                        "dissimilarity index 75%\n"
                        "index 1111111..2222222 100644\n"
                        "--- a/big.c\n"
                        "+++ b/big.c\n"
                        "@@ -1 +1 @@\n"
                        "-x\n"
                        "+y\n");
    T_EQ_INT(agt_diff_file_count(d), 4, "4 files");
    T_EQ_STR(agt_diff_file_path(d, 0), "my file.txt", "unquoted path with a space");
    T_EQ_STR(agt_diff_file_old_path(d, 1), "old name.c", "rename from");
    T_EQ_STR(agt_diff_file_new_path(d, 1), "new name.c", "rename to");
    T_EQ_INT(agt_diff_file_status(d, 1), AGT_DIFF_RENAMED, "renamed");
    T_EQ_INT(agt_diff_file_status(d, 2), AGT_DIFF_COPIED, "copied");
    T_EQ_STR(agt_diff_file_old_path(d, 2), "src.c", "copy from");
    size_t ix = 99;
    T_EQ_INT(agt_diff_file_index(d, "old name.c", &ix), AGT_OK, "renamed file found by old path");
    T_EQ_INT(ix, 1, "old path -> index 1");
    T_EQ_INT(agt_diff_file_index(d, "b/dst.c", &ix), AGT_OK, "b/ prefix ignored");
    T_EQ_INT(ix, 2, "b/dst.c -> index 2");
    T_EQ_INT(agt_diff_file_index(d, "nope.c", NULL), AGT_ENOTFOUND, "unknown path");
    json_t *j = to_json(d);
    T_EQ_INT(jint(file_json(j, 1), "similarity"), 100, "similarity 100");
    T_EQ_STR(jstr(file_json(j, 2), "status"), "copied", "copied in JSON");
    T_EQ_INT(jint(file_json(j, 3), "dissimilarity"), 75, "dissimilarity 75");
    T_CHECK(json_is_null(json_object_get(file_json(j, 3), "similarity")), "no similarity");
    T_EQ_INT(jint(file_json(j, 2), "added"), 1, "copy: 1 added");
    json_decref(j);
    agt_diff_free(d);
}

static void test_crlf_headers(void)
{
    agt_diff *d = parse("diff --git a/w.txt b/w.txt\r\n"
                        "index 1111111..2222222 100644\r\n"
                        "--- a/w.txt\r\n"
                        "+++ b/w.txt\r\n"
                        "@@ -1,2 +1,2 @@ sec\r\n"
                        " keep\r\n"
                        "-a\r\n"
                        "+b\r\n");
    T_EQ_STR(agt_diff_file_path(d, 0), "w.txt", "CRLF: no CR in the path");
    json_t *j = to_json(d);
    json_t *h = json_array_get(json_object_get(file_json(j, 0), "hunks"), 0);
    T_EQ_STR(jstr(h, "section"), "sec", "CRLF: no CR in the section");
    T_EQ_INT(jint(h, "new_lines"), 2, "CRLF: hunk counts");
    json_decref(j);
    T_EQ_INT(d->nlines, 3, "CRLF: 3 lines");
    T_CHECK(d->lines[2].len == 2 && memcmp(d->text.ptr + d->lines[2].off, "b\r", 2) == 0,
            "CRLF: content keeps its CR");
    T_EQ_INT(d->lines[2].new_no, 2, "CRLF: added line is new line 2");
    agt_diff_free(d);
}

static void test_plain(void)
{
    agt_diff *d = parse("diff -ruN t1/gone.txt t2/gone.txt\n"
                        "--- t1/gone.txt\t2024-01-01 10:00:00.000000000 +0000\n"
                        "+++ t2/gone.txt\t1970-01-01 00:00:00.000000000 +0000\n"
                        "@@ -1,2 +0,0 @@\n"
                        "-a\n"
                        "-b\n"
                        "Only in t2: extra\n"
                        "Binary files t1/img.png and t2/img.png differ\n"
                        "--- x.c\t2024-01-01\n"
                        "+++ x.c\t2024-01-02\n"
                        "@@ -1 +1 @@\n"
                        "-1\n"
                        "+2\n"
                        "\\ No newline at end of file\n");
    T_EQ_INT(agt_diff_file_count(d), 3, "plain: 3 files");
    T_EQ_INT(agt_diff_file_status(d, 0), AGT_DIFF_DELETED, "plain: epoch new side = deleted");
    T_EQ_STR(agt_diff_file_path(d, 0), "gone.txt", "plain: p1-stripped path");
    T_CHECK(agt_diff_file_new_path(d, 0) == NULL, "plain: deleted has no new path");
    T_EQ_INT(agt_diff_file_is_binary(d, 1), 1, "plain: Binary files line");
    T_EQ_STR(agt_diff_file_path(d, 1), "img.png", "plain: binary path");
    T_EQ_STR(agt_diff_file_path(d, 2), "x.c", "plain: path without a directory stays");
    T_CHECK(d->lines[d->nlines - 1].flags & AGTI_LINE_NOEOL, "plain: no-newline marker");
    char *t = NULL;
    T_EQ_INT(agt_diff_file_text(d, "gone.txt", &t), AGT_OK, "plain: file text");
    T_EQ_STR(t,
             "diff -ruN t1/gone.txt t2/gone.txt\n"
             "--- t1/gone.txt\t2024-01-01 10:00:00.000000000 +0000\n"
             "+++ t2/gone.txt\t1970-01-01 00:00:00.000000000 +0000\n"
             "@@ -1,2 +0,0 @@\n"
             "-a\n"
             "-b\n",
             "plain: file text is the input slice");
    agt_free(t);
    agt_diff_free(d);
}

static void test_binary_patch(void)
{
    agt_diff *d = parse("diff --git a/x.bin b/x.bin\n"
                        "index 1111111..2222222 100644\n"
                        "GIT binary patch\n"
                        "literal 12\n"
                        "TcmZQzWMXDvWn^Vz<zVLk0Du4i\n"
                        "\n"
                        "literal 0\n"
                        "HcmV?d00001\n"
                        "\n"
                        "diff --git a/y.txt b/y.txt\n"
                        "--- a/y.txt\n"
                        "+++ b/y.txt\n"
                        "@@ -1 +1,2 @@\n"
                        " y\n"
                        "+z\n");
    T_EQ_INT(agt_diff_file_count(d), 2, "binary patch: 2 files");
    T_EQ_INT(agt_diff_file_is_binary(d, 0), 1, "binary patch: binary");
    T_EQ_INT(agt_diff_file_is_binary(d, 1), 0, "binary patch: next file is text");
    T_EQ_INT(d->nlines, 2, "binary patch: base85 lines are not diff lines");
    agt_diff_free(d);
}

static void test_zero_context_and_counts(void)
{
    agt_diff *d = parse("--- a/f\n+++ b/f\n@@ -3,0 +4 @@ ctx\n+new\n@@ -10 +10,0 @@\n-old\n");
    json_t *j = to_json(d);
    json_t *hs = json_object_get(file_json(j, 0), "hunks");
    T_EQ_INT(jint(json_array_get(hs, 0), "new_lines"), 1, "-U0: omitted count = 1");
    T_EQ_INT(jint(json_array_get(hs, 0), "old_lines"), 0, "-U0: count 0");
    T_EQ_INT(jint(json_array_get(hs, 1), "old_lines"), 1, "-U0: omitted old count = 1");
    T_EQ_INT(d->lines[0].new_no, 4, "-U0: added line is new line 4");
    T_EQ_INT(d->lines[1].old_no, 10, "-U0: deleted line is old line 10");
    json_decref(j);
    agt_diff_free(d);
}

static void test_errors(void)
{
    agt_diff *d = (agt_diff *)1;
    T_EQ_INT(agt_diff_parse(&d, "", 0), AGT_OK, "empty text: ok");
    T_EQ_INT(agt_diff_file_count(d), 0, "empty text: 0 files");
    agt_diff_free(d);
    T_EQ_INT(agt_diff_parse(&d, NULL, 0), AGT_OK, "NULL text with len 0: ok");
    agt_diff_free(d);
    T_EQ_INT(agt_diff_parse(&d, NULL, 3), AGT_EINVAL, "NULL text with len 3");
    T_EQ_INT(agt_diff_parse(NULL, "x", 1), AGT_EINVAL, "NULL out");
    T_EQ_INT(agt_diff_parse(&d, "hello world\n", 12), AGT_EPARSE, "prose: not a diff");
    T_CHECK(d == NULL, "failure leaves *out NULL");
    const char *bad = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,x +1 @@\n-a\n";
    T_EQ_INT(agt_diff_parse(&d, bad, strlen(bad)), AGT_EPARSE, "malformed hunk header");
    T_CHECK(strstr(agt_error_message(), "line 4") != NULL, "message names line 4: %s",
            agt_error_message());
    const char *orphan = "@@ -1 +1 @@\n-a\n+b\n";
    T_EQ_INT(agt_diff_parse(&d, orphan, strlen(orphan)), AGT_EPARSE, "hunk before a file");
    T_CHECK(strstr(agt_error_message(), "line 1") != NULL, "message names line 1");
    const char *big = "--- a/f\n+++ b/f\n@@ -1,99999999999 +1 @@\n";
    T_EQ_INT(agt_diff_parse(&d, big, strlen(big)), AGT_EPARSE, "count overflow refused");
    /* counts the body cannot hold: 999,999,999 lines, 3 bytes of body */
    const char *liar = "--- a/f\n+++ b/f\n@@ -1,999999999 +1 @@\n-a\n";
    T_EQ_INT(agt_diff_parse(&d, liar, strlen(liar)), AGT_EPARSE, "999999999-line claim refused");
    T_EQ_STR(agt_error_message(),
             "diff: line 3: the hunk header claims 999999999 old and 1 new lines but only 3 bytes "
             "of input follow it; the counts do not match the hunk's body (fix the counts in "
             "'@@ -1,999999999 +1,1 @@')",
             "999999999-line claim: message");
    T_CHECK(d == NULL, "999999999-line claim: *out NULL");
    /* the same with CRLF and a second file after it: still far too few bytes */
    const char *liar2 = "--- a/f\r\n+++ b/f\r\n@@ -1 +1,999999999 @@\r\n+a\r\n"
                        "--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n";
    T_EQ_INT(agt_diff_parse(&d, liar2, strlen(liar2)), AGT_EPARSE, "new-count claim refused");
    T_CHECK(strstr(agt_error_message(), "claims 1 old and 999999999 new lines but only 38 bytes") !=
                NULL,
            "new-count claim: bytes after the CRLF header: %s", agt_error_message());
    /* as many lines as bytes left is possible (empty context lines) */
    const char *tight = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n\n\n\n";
    T_EQ_INT(agt_diff_parse(&d, tight, strlen(tight)), AGT_OK, "3 lines in 3 bytes: ok");
    T_EQ_INT(agt_diff_file_count(d), 1, "3 lines in 3 bytes: one file");
    agt_diff_free(d);
    d = NULL;

    /* truncated hunk: best effort, flagged */
    d = parse("--- a/f\n+++ b/f\n@@ -1,5 +1,5 @@\n a\n-b\n+c\n");
    T_CHECK(d != NULL, "truncated hunk parses");
    json_t *j = to_json(d);
    T_CHECK(json_is_true(json_object_get(j, "best_effort")), "truncated: best_effort");
    const char *w = json_string_value(json_array_get(json_object_get(j, "warnings"), 0));
    T_CHECK(w && strstr(w, "line 6: end of input inside the hunk at line 3"),
            "truncated: warning names the line: %s", w ? w : "");
    json_decref(j);
    agt_diff_free(d);

    /* a hunk interrupted by a foreign line: the rest is still parsed */
    d = parse("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\ngarbage\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n"
              "-x\n+y\n");
    T_EQ_INT(agt_diff_file_count(d), 2, "interrupted hunk: next file parsed");
    j = to_json(d);
    w = json_string_value(json_array_get(json_object_get(j, "warnings"), 0));
    T_CHECK(w && strstr(w, "line 5: hunk at line 3 ends early"),
            "interrupted: warning names line 5: %s", w ? w : "");
    json_decref(j);
    agt_diff_free(d);

    T_EQ_INT(agt_diff_to_json(NULL, NULL), AGT_EINVAL, "to_json NULL");
    T_EQ_INT(agt_diff_file_status(NULL, 0), AGT_EINVAL, "status NULL");
    T_CHECK(agt_diff_file_path(NULL, 0) == NULL, "path NULL");
    agt_diff_free(NULL);
}

static void test_combined(void)
{
    agt_diff *d = parse("diff --cc f.c\n"
                        "index 1111111,2222222..3333333\n"
                        "--- a/f.c\n"
                        "+++ b/f.c\n"
                        "@@@ -1,1 -1,1 +1,1 @@@\n"
                        "- a\n"
                        " -b\n"
                        "++c\n");
    T_CHECK(d != NULL, "combined diff: no crash, no failure");
    json_t *j = to_json(d);
    const char *w = json_string_value(json_array_get(json_object_get(j, "warnings"), 0));
    T_CHECK(w && strstr(w, "line 1: combined"), "combined diff: flagged: %s", w ? w : "");
    T_EQ_INT(d->nlines, 0, "combined diff: no lines taken");
    json_decref(j);
    agt_diff_free(d);
}

/* Inputs that made an early version quadratic: they must stay linear (a
 * quadratic parse of these takes seconds and trips the test timeout). */
static void test_pathological(void)
{
    size_t n = 400000, l = 11;
    char *b = malloc(n + 16);
    memcpy(b, "diff --git ", 11);
    while (l < n) {
        b[l++] = 'a';
        b[l++] = ' ';
    }
    b[l++] = '\n';
    agt_diff *d = NULL;
    T_EQ_INT(agt_diff_parse(&d, b, l), AGT_OK, "200,000 spaces in a diff --git line");
    T_EQ_INT(agt_diff_file_count(d), 1, "spaces: one file");
    agt_diff_free(d);
    free(b);
}

static void test_format_patch_signature(void)
{
    agt_diff *d = parse("From 123 Mon Sep 17 00:00:00 2001\n"
                        "Subject: [PATCH] x\n"
                        "\n"
                        "---\n"
                        " f | 2 +-\n"
                        "\n"
                        "diff --git a/f b/f\n"
                        "--- a/f\n"
                        "+++ b/f\n"
                        "@@ -1 +1 @@\n"
                        "-a\n"
                        "+b\n"
                        "-- \n"
                        "2.39.5\n"
                        "\n");
    char *t = NULL;
    agt_diff_file_text(d, "f", &t);
    T_EQ_STR(t, "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n",
             "format-patch: the signature is not part of the file text");
    agt_free(t);
    agt_diff_free(d);
}

static void test_builder_render(void)
{
    agt_diff *d = NULL;
    T_EQ_INT(agti_diff_new(&d), AGT_OK, "builder: new");
    agti_diff_add_file(d, "old.c", "new.c", AGT_DIFF_RENAMED, false, 0100644, 0100644, 90);
    agti_diff_add_hunk(d, 2, 3, 2, 3, "int main(void)", 14);
    agti_diff_add_line(d, ' ', "a", 1, false);
    agti_diff_add_line(d, '-', "b", 1, false);
    agti_diff_add_line(d, '+', "B", 1, false);
    agti_diff_add_line(d, ' ', "c", 1, true);
    agti_diff_add_file(d, NULL, "img.png", AGT_DIFF_ADDED, true, 0, 0100644, -1);
    char *t = NULL;
    T_EQ_INT(agt_diff_file_text(d, "old.c", &t), AGT_OK, "builder: render by old path");
    const char *want = "diff --git a/old.c b/new.c\n"
                       "similarity index 90%\n"
                       "rename from old.c\n"
                       "rename to new.c\n"
                       "--- a/old.c\n"
                       "+++ b/new.c\n"
                       "@@ -2,3 +2,3 @@ int main(void)\n"
                       " a\n"
                       "-b\n"
                       "+B\n"
                       " c\n"
                       "\\ No newline at end of file\n";
    T_EQ_STR(t, want, "builder: git-style rendering");
    T_EQ_INT(d->lines[2].new_no, 3, "builder: line numbers");
    T_EQ_INT(d->lines[3].old_no, 4, "builder: old numbers");
    /* the rendering parses back to the same model */
    agt_diff *back = parse(t);
    T_EQ_INT(agt_diff_file_status(back, 0), AGT_DIFF_RENAMED, "builder: round trip status");
    T_EQ_INT(back->nlines, 4, "builder: round trip lines");
    T_CHECK(back->lines[3].flags & AGTI_LINE_NOEOL, "builder: round trip no-newline");
    agt_free(t);
    agt_diff_free(back);
    T_EQ_INT(agt_diff_file_text(d, "img.png", &t), AGT_OK, "builder: binary render");
    T_EQ_STR(t,
             "diff --git a/img.png b/img.png\nnew file mode 100644\n"
             "Binary files /dev/null and b/img.png differ\n",
             "builder: binary added");
    agt_free(t);
    T_EQ_INT(agt_diff_file_text(d, "zzz", &t), AGT_ENOTFOUND, "builder: unknown path");
    agt_diff_free(d);
}

/* git diff --no-prefix (or diff.noprefix=true): "diff --git X X" names the
 * same path twice, and ---/+++ carry no a/ b/. The first component was
 * stripped as if it were a prefix: src/deep/f.c became deep/f.c, and a
 * binary or mode-only file without '/' got no path at all. Expected paths
 * from `git apply --numstat -p0` on the same text. */
static void test_no_prefix(void)
{
    agt_diff *d = parse("diff --git src/deep/f.c src/deep/f.c\n"
                        "index 7898192..f70f10e 100644\n"
                        "--- src/deep/f.c\n"
                        "+++ src/deep/f.c\n"
                        "@@ -1 +1 @@\n"
                        "-a\n"
                        "+A\n"
                        "diff --git src/g.c src/g.c\n"
                        "old mode 100644\n"
                        "new mode 100755\n"
                        "diff --git bin.dat bin.dat\n"
                        "index 73fd7e8..4695a07 100644\n"
                        "Binary files bin.dat and bin.dat differ\n"
                        "diff --git sp ace.txt sp ace.txt\n"
                        "deleted file mode 100644\n"
                        "index de98044..0000000\n"
                        "--- sp ace.txt\n"
                        "+++ /dev/null\n"
                        "@@ -1 +0,0 @@\n"
                        "-x\n"
                        "diff --git \"src/ta\\tb.c\" \"src/ta\\tb.c\"\n"
                        "new file mode 100644\n"
                        "index 0000000..587be6b\n"
                        "--- /dev/null\n"
                        "+++ \"src/ta\\tb.c\"\n"
                        "@@ -0,0 +1 @@\n"
                        "+x\n"
                        "diff --git src/deep/f.c src/moved.c\n"
                        "similarity index 100%\n"
                        "rename from src/deep/f.c\n"
                        "rename to src/moved.c\n");
    json_t *j = d ? to_json(d) : NULL;
    T_EQ_INT((long long)json_array_size(json_object_get(j, "files")), 6, "no-prefix: 6 files");
    T_EQ_STR(jstr(file_json(j, 0), "new_path"), "src/deep/f.c", "no-prefix: text file path kept");
    T_EQ_STR(jstr(file_json(j, 0), "old_path"), "src/deep/f.c", "no-prefix: old path kept");
    T_EQ_STR(jstr(file_json(j, 1), "new_path"), "src/g.c", "no-prefix: mode-only file path");
    T_EQ_STR(jstr(file_json(j, 1), "new_mode"), "100755", "no-prefix: mode-only new mode");
    T_EQ_STR(jstr(file_json(j, 2), "new_path"), "bin.dat", "no-prefix: binary file has a path");
    T_EQ_STR(jstr(file_json(j, 3), "old_path"), "sp ace.txt", "no-prefix: deleted, with a space");
    T_EQ_STR(jstr(file_json(j, 3), "status"), "deleted", "no-prefix: deleted status");
    T_EQ_STR(jstr(file_json(j, 4), "new_path"), "src/ta\tb.c", "no-prefix: quoted path");
    T_EQ_STR(jstr(file_json(j, 5), "old_path"), "src/deep/f.c", "no-prefix: rename from");
    T_EQ_STR(jstr(file_json(j, 5), "new_path"), "src/moved.c", "no-prefix: rename to");
    T_CHECK(json_object_get(j, "best_effort") == NULL ||
                json_is_false(json_object_get(j, "best_effort")),
            "no-prefix: not best effort");
    json_decref(j);
    agt_diff_free(d);
    /* The usual prefixes still go, also when both sides share a name. */
    d = parse("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n"
              "diff --git SRC/y DST/y\nold mode 100644\nnew mode 100755\n");
    j = d ? to_json(d) : NULL;
    T_EQ_STR(jstr(file_json(j, 0), "new_path"), "x", "a/ b/ prefixes stripped");
    T_EQ_STR(jstr(file_json(j, 1), "new_path"), "y", "--src-prefix/--dst-prefix stripped");
    json_decref(j);
    agt_diff_free(d);
}

int main(void)
{
    test_no_prefix();
    test_quoted_paths();
    test_spaces_rename_copy();
    test_crlf_headers();
    test_plain();
    test_binary_patch();
    test_zero_context_and_counts();
    test_errors();
    test_format_patch_signature();
    test_combined();
    test_pathological();
    test_builder_render();
    return t_done();
}
