/* Edit's matching ladder through agt_session_dispatch: each level with its
 * exact message, the file's endings and indentation kept byte for byte,
 * ambiguous near misses never applied, replace_all and strict mode exact
 * only. Expected texts are worked out by hand from the inputs. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "wsfix.h"

#define PRE "The lines around it now read:"

static void edit(agt_session *s, const char *path, const char *old, const char *nw, bool all,
                 const char *want, int want_error, const char *name)
{
    json_t *a = json_pack("{s:s, s:s, s:s, s:b}", "path", path, "old_string", old, "new_string", nw,
                          "replace_all", all);
    char *args = json_dumps(a, JSON_COMPACT);
    expect(s, "Edit", args, want, want_error, name);
    free(args);
    json_decref(a);
}

static void test_eol(agt_session *s)
{
    put_file("m.txt", "a\nb\nc\r\nd\n");
    edit(s, "m.txt", "c\nd", "C\nD", false,
         "Edited m.txt: replaced 1 occurrence at line 3 (matched after normalising line endings: "
         "the file mixes LF and CRLF line endings). " PRE "\n1\ta\n2\tb\n3\tC\n4\tD",
         0, "level 1 mixed endings");
    T_EQ_STR(get_file("m.txt", NULL), "a\nb\nC\r\nD\n", "level 1: the CRLF line stays CRLF");

    put_file("lf.txt", "a\nb\n");
    edit(s, "lf.txt", "a\r\nb", "x\r\ny", false,
         "Edited lf.txt: replaced 1 occurrence at line 1 (matched after normalising line endings: "
         "the file uses LF line endings). " PRE "\n1\tx\n2\ty",
         0, "level 1 CRLF old in an LF file");
    T_EQ_STR(get_file("lf.txt", NULL), "x\ny\n", "level 1: new_string re-ended to LF");

    put_file("mix2.txt", "p\r\nq\nr\n");
    edit(s, "mix2.txt", "p\nq\nr", "P\nQ\nR\nS", false,
         "Edited mix2.txt: replaced 1 occurrence at line 1 (matched after normalising line "
         "endings: the file mixes LF and CRLF line endings). " PRE "\n1\tP\n2\tQ\n3\tR\n4\tS",
         0, "level 1 per-line endings");
    T_EQ_STR(get_file("mix2.txt", NULL), "P\r\nQ\nR\nS\n",
             "level 1: each line keeps its own ending, a new line takes the last one");
}

static void test_trailing(agt_session *s)
{
    put_file("t.txt", "x = 1;  \ny = 2;\n");
    edit(s, "t.txt", "x = 1;\ny = 2;", "x = 10;\ny = 20;", false,
         "Edited t.txt: replaced 1 occurrence at line 1 (matched after ignoring trailing white "
         "space). " PRE "\n1\tx = 10;\n2\ty = 20;",
         0, "level 2");
    T_EQ_STR(get_file("t.txt", NULL), "x = 10;\ny = 20;\n", "level 2 content");
}

static void test_indent(agt_session *s)
{
    put_file("f.c", "int f(void)\n{\n\tif (x) {\n\t\treturn 1;\n\t}\n}\n");
    edit(s, "f.c", "    if (x) {\n        return 1;\n    }",
         "    if (x) {\n        log();\n        return 1;\n    }", false,
         "Edited f.c: replaced 1 occurrence at line 3 (matched after ignoring indentation: the "
         "file uses tabs). " PRE
         "\n1\tint f(void)\n2\t{\n3\t\tif (x) {\n4\t\t\tlog();\n5\t\t\treturn 1;\n6\t\t}\n7\t}",
         0, "level 3 tabs");
    T_EQ_STR(get_file("f.c", NULL),
             "int f(void)\n{\n\tif (x) {\n\t\tlog();\n\t\treturn 1;\n\t}\n}\n",
             "level 3: new_string re-indented with tabs");

    put_file("a.py", "class A:\n    def f(self):\n        return 1\n");
    edit(s, "a.py", "def f(self):\n    return 1",
         "def f(self):\n    return 2\n\ndef g(self):\n    pass", false,
         "Edited a.py: replaced 1 occurrence at line 2 (matched after ignoring indentation: the "
         "file's lines are indented 4 columns deeper). " PRE
         "\n1\tclass A:\n2\t    def f(self):\n3\t        return 2\n4\t\n5\t    def g(self):\n6\t "
         "       pass",
         0, "level 3 uniform offset");
    T_EQ_STR(get_file("a.py", NULL),
             "class A:\n    def f(self):\n        return 2\n\n    def g(self):\n        pass\n",
             "level 3: offset applied to every new line");

    put_file("crlf.c", "{\r\n\tx();\r\n}\r\n");
    edit(s, "crlf.c", "{\n    x();\n}", "{\n    x();\n    y();\n}", false,
         "Edited crlf.c: replaced 1 occurrence at line 1 (matched after ignoring indentation: the "
         "file uses tabs). " PRE "\n1\t{\n2\t\tx();\n3\t\ty();\n4\t}",
         0, "level 3 in a CRLF file");
    T_EQ_STR(get_file("crlf.c", NULL), "{\r\n\tx();\r\n\ty();\r\n}\r\n",
             "level 3: CRLF and tabs kept byte for byte");

    put_file("amb.c", "\tx\n  x\n");
    edit(s, "amb.c", "    x", "y", false,
         "old_string was not found exactly in amb.c; after ignoring indentation it matches 2 "
         "places (at lines 1, 2). Nothing was changed. Read those lines again and copy "
         "old_string exactly, with enough surrounding lines to make it unique.",
         1, "level 3 ambiguous");
    T_EQ_STR(get_file("amb.c", NULL), "\tx\n  x\n", "level 3 ambiguity not applied");

    /* Indentation that does not re-base consistently is not a match. */
    put_file("inc.py", "if a:\n    b\n    c\n");
    edit(s, "inc.py", "if a:\n    b\n        c", "z", false,
         "old_string was not found in inc.py. Nothing was changed. Text that differs from "
         "old_string only in white space or line endings is at lines 1-3: read those lines again "
         "and copy them exactly (indentation included, without the line-number prefix).",
         1, "level 3 inconsistent indentation refused");
    T_EQ_STR(get_file("inc.py", NULL), "if a:\n    b\n    c\n", "inconsistent: unchanged");
}

static void test_unicode(agt_session *s)
{
    put_file("u.js", "say(\"hello\xc2\xa0world\")\n");
    edit(s, "u.js", "hello world", "hello there", false,
         "Edited u.js: replaced 1 occurrence at line 1 (matched after folding Unicode "
         "look-alikes: the file has U+00A0 (no-break space) at line 1). " PRE
         "\n1\tsay(\"hello there\")",
         0, "level 4 NBSP");
    T_EQ_STR(get_file("u.js", NULL), "say(\"hello there\")\n", "level 4 NBSP content");

    put_file("z.c", "int a;\nfoo\xe2\x80\x8b"
                    "bar = 1;\n");
    edit(s, "z.c", "foobar = 1;", "foobar = 2;", false,
         "Edited z.c: replaced 1 occurrence at line 2 (matched after folding Unicode look-alikes: "
         "the file has U+200B (zero-width space) at line 2). " PRE "\n1\tint a;\n2\tfoobar = 2;",
         0, "level 4 zero-width");
    T_EQ_STR(get_file("z.c", NULL), "int a;\nfoobar = 2;\n", "level 4 zero-width content");

    put_file("q.txt", "msg = \"ok\" - done\n");
    edit(s, "q.txt", "msg = \xe2\x80\x9cok\xe2\x80\x9d \xe2\x80\x94 done", "msg = \"fine\" - done",
         false,
         "Edited q.txt: replaced 1 occurrence at line 1 (matched after folding Unicode "
         "look-alikes: old_string has U+201C (left double quotation mark) where the file has "
         "plain text). " PRE "\n1\tmsg = \"fine\" - done",
         0, "level 4 curly quotes and em dash in old_string");
    T_EQ_STR(get_file("q.txt", NULL), "msg = \"fine\" - done\n", "level 4 quotes content");
}

static void test_ambiguous_and_exact_only(agt_session *s)
{
    put_file("amb.txt", "a  \nb\na\t\nb\n");
    edit(s, "amb.txt", "a\nb", "X", false,
         "old_string was not found exactly in amb.txt; after ignoring trailing white space it "
         "matches 2 places (at lines 1, 3). Nothing was changed. Read those lines again and copy "
         "old_string exactly, with enough surrounding lines to make it unique.",
         1, "level 2 ambiguous");
    T_EQ_STR(get_file("amb.txt", NULL), "a  \nb\na\t\nb\n", "ambiguity never applied");

    put_file("r.txt", "a \nb\n");
    edit(s, "r.txt", "a\nb", "c", true,
         "old_string was not found in r.txt. Nothing was changed. Text that differs from "
         "old_string only in white space or line endings is at lines 1-2: read those lines again "
         "and copy them exactly (indentation included, without the line-number prefix).",
         1, "replace_all matches exactly only");
    T_EQ_STR(get_file("r.txt", NULL), "a \nb\n", "replace_all: unchanged");

    put_file("s.c", "int f(void)\n{\n\tif (x) {\n\t\treturn 1;\n\t}\n}\n");
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_STRICT), AGT_OK, "strict on");
    edit(s, "s.c", "    if (x) {\n        return 1;\n    }", "", false,
         "old_string was not found in s.c. Nothing was changed. Text that differs from "
         "old_string only in white space or line endings is at lines 3-5: read those lines again "
         "and copy them exactly (indentation included, without the line-number prefix).",
         1, "strict mode: no ladder");
    put_file("su.js", "a\xc2\xa0"
                      "b\n");
    edit(s, "su.js", "a b", "c", false,
         "old_string was not found in su.js. Nothing was changed. The file may have changed: "
         "read it again and copy old_string exactly from the Read output (without the "
         "line-number prefix).",
         1, "strict mode: no Unicode folding");
    T_EQ_STR(get_file("s.c", NULL), "int f(void)\n{\n\tif (x) {\n\t\treturn 1;\n\t}\n}\n",
             "strict: unchanged");
    T_EQ_INT(agt_session_set_edit_options(s, 0), AGT_OK, "strict off");
    T_EQ_INT(agt_session_set_edit_options(s, 0x80), AGT_EINVAL, "unknown flag refused");
    T_EQ_INT(agt_session_set_edit_options(NULL, 0), AGT_EINVAL, "NULL session refused");
}

static void multiedit(agt_session *s, const char *path, const char *edits_json, const char *want,
                      int want_error, const char *name)
{
    char args[2048];
    snprintf(args, sizeof args, "{\"path\":\"%s\",\"edits\":%s}", path, edits_json);
    expect(s, "MultiEdit", args, want, want_error, name);
}

static void test_multiedit(agt_session *s)
{
    put_file("me.txt", "a\nb\nc\n");
    multiedit(s, "me.txt",
              "[{\"old_string\":\"a\",\"new_string\":\"A\"},{\"old_string\":\"b\",\"new_"
              "string\":\"B\"}]",
              "Edited me.txt: applied 2 edits in one write:\nedits[0]: replaced 1 occurrence at "
              "line 1\nedits[1]: replaced 1 occurrence at line 2",
              0, "two edits");
    T_EQ_STR(get_file("me.txt", NULL), "A\nB\nc\n", "MultiEdit: both applied");

    multiedit(s, "me.txt",
              "[{\"old_string\":\"A\",\"new_string\":\"xy\"},{\"old_string\":\"xy\",\"new_"
              "string\":\"z\"}]",
              "Edited me.txt: applied 2 edits in one write:\nedits[0]: replaced 1 occurrence at "
              "line 1\nedits[1]: replaced 1 occurrence at line 1",
              0, "in order on the in-memory text");
    T_EQ_STR(get_file("me.txt", NULL), "z\nB\nc\n", "MultiEdit: second edit saw the first");

    multiedit(s, "me.txt",
              "[{\"old_string\":\"z\",\"new_string\":\"Z\"},{\"old_string\":\"missing\","
              "\"new_string\":\"x\"}]",
              "edits[1]: old_string was not found in me.txt. Nothing was changed. The file may "
              "have changed: read it again and copy old_string exactly from the Read output "
              "(without the line-number prefix). The 1 edit before it was not applied either: "
              "me.txt is unchanged.",
              1, "all or nothing");
    T_EQ_STR(get_file("me.txt", NULL), "z\nB\nc\n", "MultiEdit: failure leaves the file as it was");

    multiedit(s, "me.txt",
              "[{\"old_string\":\"z\",\"new_string\":\"Z\"},{\"old_string\":\"c\",\"new_"
              "string\":\"c\"}]",
              "edits[1]: old_string and new_string are identical. No edit was applied.", 1,
              "identical strings refused before anything");
    T_EQ_STR(get_file("me.txt", NULL), "z\nB\nc\n", "MultiEdit: unchanged after a bad entry");

    put_file("mx.txt", "x\r\ny\nk k\n");
    multiedit(s, "mx.txt",
              "[{\"old_string\":\"x\\ny\",\"new_string\":\"X\\nY\"},{\"old_string\":\"k\","
              "\"new_string\":\"j\",\"replace_all\":true}]",
              "Edited mx.txt: applied 2 edits in one write:\nedits[0]: replaced 1 occurrence at "
              "line 1 (matched after normalising line endings: the file mixes LF and CRLF line "
              "endings)\nedits[1]: replaced 2 occurrences",
              0, "ladder and replace_all inside MultiEdit");
    T_EQ_STR(get_file("mx.txt", NULL), "X\r\nY\nj j\n", "MultiEdit: endings kept, all replaced");

    put_file("ma.txt", "q \nq\t\n");
    multiedit(s, "ma.txt", "[{\"old_string\":\"q\\n\",\"new_string\":\"r\\n\"}]",
              "edits[0]: old_string was not found exactly in ma.txt; after ignoring trailing "
              "white space it matches 2 places (at lines 1, 2). Nothing was changed. Read those "
              "lines again and copy old_string exactly, with enough surrounding lines to make it "
              "unique.",
              1, "ambiguous near miss in MultiEdit");
    T_EQ_STR(get_file("ma.txt", NULL), "q \nq\t\n", "MultiEdit: ambiguity never applied");
}

/* Read marks the CR of a file that mixes endings; Edit takes the mark back. */
static void test_read_cr(agt_session *s)
{
    put_file("mixed.txt", "a\nb\nc\r\nd\n");
    expect(s, "Read", "{\"path\":\"mixed.txt\"}",
           "1\ta\n2\tb\n3\tc\xe2\x90\x8d\n4\td\n\nRead 4 lines (1-4) of 4; reached the end of "
           "the file.\nThis file mixes line endings: 1 line ends with CRLF, 3 with LF; a CR is "
           "shown as \xe2\x90\x8d at the end of its line (1 in this window). Edit takes "
           "\xe2\x90\x8d as that CR, so the lines can be copied as shown.",
           0, "mixed endings shown");
    expect(s, "Read", "{\"path\":\"mixed.txt\",\"line_offset\":4}",
           "4\td\n\nRead 1 line (4-4) of 4; reached the end of the file.\nThis file mixes line "
           "endings: 1 line ends with CRLF, 3 with LF; a CR is shown as \xe2\x90\x8d at the end "
           "of its line (0 in this window). Edit takes \xe2\x90\x8d as that CR, so the lines can "
           "be copied as shown.",
           0, "mixed endings: notice also for a window without CR");
    put_file("allcrlf.txt", "x\r\ny\r\n");
    expect(s, "Read", "{\"path\":\"allcrlf.txt\"}",
           "1\tx\n2\ty\n\nRead 2 lines (1-2) of 2; reached the end of the file.", 0,
           "an all-CRLF file shows no mark");
    edit(s, "mixed.txt", "c\xe2\x90\x8d\nd", "C\xe2\x90\x8d\nD\xe2\x90\x8d\nE", false,
         "Edited mixed.txt: replaced 1 occurrence at line 3 (matched after normalising line "
         "endings: the file mixes LF and CRLF line endings). " PRE "\n1\ta\n2\tb\n3\tC\n4\tD\n5\tE",
         0, "Read's output copied into Edit");
    T_EQ_STR(get_file("mixed.txt", NULL), "a\nb\nC\r\nD\r\nE\n",
             "the marks become the file's CR endings, never literal");
}

/* char_offset/n_chars: every part of a one-line 60 KB file is reachable. */
static void test_read_long_line(agt_session *s)
{
    put_file("six.txt", "abcdef\n");
    expect(s, "Read", "{\"path\":\"six.txt\",\"char_offset\":2,\"n_chars\":2}",
           "1\tcd\n\nRead 1 line (1-1) of 1; reached the end of the file.\nchar_offset 2: the "
           "first 2 characters of each line are not shown.\nLines longer than 4 characters were "
           "cut: 1. To read on in a cut line, call Read with line_offset at that line, n_lines 1 "
           "and char_offset 4.",
           0, "char_offset and n_chars");
    expect(s, "Read", "{\"path\":\"six.txt\",\"char_offset\":4}",
           "1\tef\n\nRead 1 line (1-1) of 1; reached the end of the file.\nchar_offset 4: the "
           "first 4 characters of each line are not shown.",
           0, "char_offset to the end of the line");
    expect(s, "Read", "{\"path\":\"six.txt\",\"char_offset\":9}",
           "1\t\n\nRead 1 line (1-1) of 1; reached the end of the file.\nchar_offset 9: the "
           "first 9 characters of each line are not shown.",
           0, "char_offset past the end of the line");
    put_file("utf.txt", "\xc3\xa9\xc3\xa0\xc3\xbc\n");
    expect(s, "Read", "{\"path\":\"utf.txt\",\"char_offset\":1,\"n_chars\":1}",
           "1\t\xc3\xa0\n\nRead 1 line (1-1) of 1; reached the end of the file.\nchar_offset 1: "
           "the first 1 characters of each line are not shown.\nLines longer than 2 characters "
           "were cut: 1. To read on in a cut line, call Read with line_offset at that line, "
           "n_lines 1 and char_offset 2.",
           0, "characters, not bytes");
    expect(s, "Read", "{\"path\":\"six.txt\",\"n_chars\":2001}",
           "n_chars must be between 1 and 2000, not 2001.", 1, "n_chars above the limit");

    /* 60000 characters in one line, some of them two bytes long. */
    static char big[70000], got[70000];
    size_t bl = 0, gl = 0;
    big[bl++] = '[';
    for (size_t i = 1; i < 59999; i++) {
        if (i % 97 == 0) {
            big[bl++] = '\xc3';
            big[bl++] = '\xa9';
        } else
            big[bl++] = (char)('a' + i % 26);
    }
    big[bl++] = ']';
    put_file_n("big.json", big, bl);
    bool ok = true;
    for (size_t off = 0; off < 60000 && ok; off += 2000) {
        char args[128];
        snprintf(args, sizeof args, "{\"path\":\"big.json\",\"char_offset\":%zu}", off);
        agt_result *r = call(s, "Read", args);
        const char *t = agt_result_text(r);
        const char *end = strstr(t, "\n\nRead 1 line");
        ok = strncmp(t, "1\t", 2) == 0 && end != NULL && gl + (size_t)(end - t - 2) < sizeof got;
        if (ok) {
            memcpy(got + gl, t + 2, (size_t)(end - t - 2));
            gl += (size_t)(end - t - 2);
        }
        agt_result_free(r);
    }
    T_CHECK(ok && gl == bl && memcmp(got, big, bl) == 0,
            "a one-line 60000-character file read in 30 pieces of 2000 characters is whole");
}

/* Grep's content mode shows a window around a match inside a cut line. */
static void test_grep_window(agt_session *s)
{
    static char line[61000], want[4000];
    size_t n = 0;
    for (size_t i = 0; i < 59000; i++)
        line[n++] = 'x';
    memcpy(line + n, "NEEDLE", 6);
    n += 6;
    for (size_t i = 0; i < 994; i++)
        line[n++] = 'y';
    line[n++] = '\n';
    put_file_n("g/one.json", line, n);
    /* The match starts at character 59000: the window starts 500 (a quarter
     * of 2000) characters before it and runs to the line's end. */
    size_t w = (size_t)snprintf(want, sizeof want, "g/one.json:1:[... 58500 characters] ");
    memset(want + w, 'x', 500);
    w += 500;
    memcpy(want + w, "NEEDLE", 6);
    w += 6;
    memset(want + w, 'y', 994);
    w += 994;
    want[w] = '\0';
    agt_result *r = call(s, "Grep",
                         "{\"pattern\":\"NEEDLE\",\"path\":\"g/one.json\",\"output_mode\":"
                         "\"content\",\"-n\":true}");
    T_EQ_STR(agt_result_text(r), want, "Grep: a window around the match in a cut line");
    agt_result_free(r);

    /* A match in the first three quarters: the line's start, cut at 2000. */
    memcpy(line + 100, "EARLY", 5);
    put_file_n("g/two.json", line, n);
    w = (size_t)snprintf(want, sizeof want, "g/two.json:1:");
    memset(want + w, 'x', 100);
    w += 100;
    memcpy(want + w, "EARLY", 5);
    w += 5;
    memset(want + w, 'x', 1895);
    w += 1895;
    w += (size_t)snprintf(want + w, sizeof want - w, " [... line cut]");
    r = call(s, "Grep",
             "{\"pattern\":\"EARLY\",\"path\":\"g/two.json\",\"output_mode\":\"content\","
             "\"-n\":true}");
    T_EQ_STR(agt_result_text(r), want, "Grep: an early match keeps the line's start");
    agt_result_free(r);
}

int main(void)
{
    make_ws("ladder");
    agt_session *s = new_session();
    test_eol(s);
    test_trailing(s);
    test_indent(s);
    test_unicode(s);
    test_ambiguous_and_exact_only(s);
    test_multiedit(s);
    test_read_cr(s);
    test_read_long_line(s);
    test_grep_window(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
