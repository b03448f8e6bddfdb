/* Read, Write, Edit and ReadMediaFile through agt_session_dispatch on a
 * temporary workspace. Expected texts follow docs/workspace-tools.md and
 * were worked out by hand from the files each test writes. */
#include "wsfix.h"

static char outside[600];

/* The real folder the workspace is in (where the outside file is). */
static const char *parent_dir(void)
{
    static char buf[4096];
    if (realpath(ws, buf) == NULL)
        return "";
    char *slash = strrchr(buf, '/');
    if (slash != NULL && slash != buf)
        *slash = '\0';
    return buf;
}

static void test_read(agt_session *s)
{
    put_file("a.txt", "one\ntwo\nthree\n");
    expect(s, "Read", "{\"path\":\"a.txt\"}",
           "1\tone\n2\ttwo\n3\tthree\n\nRead 3 lines (1-3) of 3; reached the end of the file.", 0,
           "whole file");
    expect(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":2,\"n_lines\":1}",
           "2\ttwo\n\nRead 1 line (2-2) of 3; stopped at n_lines (1); continue with line_offset 3.",
           0, "window");
    expect(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":-1}",
           "3\tthree\n\nRead 1 line (3-3) of 3; reached the end of the file.", 0, "last line");
    expect(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":-2,\"n_lines\":1}",
           "2\ttwo\n\nRead 1 line (2-2) of 3; stopped at n_lines (1); continue with line_offset 3.",
           0, "negative offset window");
    expect(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":-10}",
           "1\tone\n2\ttwo\n3\tthree\n\nRead 3 lines (1-3) of 3; reached the end of the file.", 0,
           "negative offset before the start");
    expect(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":4}",
           "line_offset 4 is past the end of a.txt, which has 3 lines.", 1, "offset past end");
    expect_prefix(s, "Read", "{\"path\":\"a.txt\",\"line_offset\":0}", "", AGT_EINVALID,
                  "line_offset 0 fails the schema");
    {
        char args[700];
        snprintf(args, sizeof args, "{\"path\":\"%s/a.txt\",\"n_lines\":1}", ws);
        expect(s, "Read", args,
               "1\tone\n\nRead 1 line (1-1) of 3; stopped at n_lines (1); continue with "
               "line_offset 2.",
               0, "absolute path inside the root");
    }
    put_file("crlf.txt", "a\r\nb\r\n");
    expect(s, "Read", "{\"path\":\"crlf.txt\"}",
           "1\ta\n2\tb\n\nRead 2 lines (1-2) of 2; reached the end of the file.", 0,
           "CRLF shown as LF");
    put_file("nonl.txt", "x\ny");
    expect(s, "Read", "{\"path\":\"nonl.txt\"}",
           "1\tx\n2\ty\n\nRead 2 lines (1-2) of 2; reached the end of the file.", 0,
           "no final newline");
    put_file("empty.txt", "");
    expect(s, "Read", "{\"path\":\"empty.txt\"}", "empty.txt is empty (0 lines).", 0, "empty file");
    put_file("blank.txt", "\n");
    expect(s, "Read", "{\"path\":\"blank.txt\"}",
           "1\t\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0, "one empty line");
    put_file("u.txt", "h\xc3\xa9llo \xe2\x9c\x93\n");
    expect(s, "Read", "{\"path\":\"u.txt\"}",
           "1\th\xc3\xa9llo \xe2\x9c\x93\n\nRead 1 line (1-1) of 1; reached the end of the file.",
           0, "UTF-8 multibyte");

    /* 2500 two-byte characters: cut at 2000 characters (4000 bytes). */
    {
        static char big[6000], want[5000];
        size_t n = 0;
        for (int i = 0; i < 2500; i++)
            big[n++] = '\xc3', big[n++] = '\xa9';
        memcpy(big + n, "\nend\n", 5);
        put_file_n("huge.txt", big, n + 5);
        size_t w = 0;
        memcpy(want, "1\t", 2), w = 2;
        for (int i = 0; i < 2000; i++)
            want[w++] = '\xc3', want[w++] = '\xa9';
        const char *tail =
            "\n2\tend\n\nRead 2 lines (1-2) of 2; reached the end of the file.\n"
            "Lines longer than 2000 characters were cut: 1. To read on in a cut line, call "
            "Read with line_offset at that line, n_lines 1 and char_offset 2000.";
        memcpy(want + w, tail, strlen(tail) + 1);
        expect(s, "Read", "{\"path\":\"huge.txt\"}", want, 0, "huge line cut");
        /* exactly 2000 ASCII characters: kept whole */
        memset(big, 'x', 2000);
        big[2000] = '\n';
        put_file_n("edge.txt", big, 2001);
        agt_result *r = call(s, "Read", "{\"path\":\"edge.txt\"}");
        T_CHECK(strstr(agt_result_text(r), "cut") == NULL &&
                    strlen(agt_result_text(r)) ==
                        2 + 2000 + 2 +
                            strlen("Read 1 line (1-1) of 1; reached the end of the file."),
                "Read: 2000 characters are not cut");
        agt_result_free(r);
    }
    /* 1500 lines: the 1000-line limit */
    {
        static char many[20000];
        size_t n = 0;
        for (int i = 1; i <= 1500; i++)
            n += (size_t)sprintf(many + n, "L%d\n", i);
        put_file_n("many.txt", many, n);
        agt_result *r = call(s, "Read", "{\"path\":\"many.txt\"}");
        const char *t = agt_result_text(r);
        const char *note = "\n1000\tL1000\n\nRead 1000 lines (1-1000) of 1500; stopped at the "
                           "limit of 1000 lines per call; continue with line_offset 1001.";
        T_CHECK(strncmp(t, "1\tL1\n2\tL2\n", 10) == 0, "Read: 1000-line limit starts at line 1");
        T_CHECK(strlen(t) > strlen(note) && strcmp(t + strlen(t) - strlen(note), note) == 0,
                "Read: 1000-line limit note");
        agt_result_free(r);
        expect(s, "Read", "{\"path\":\"many.txt\",\"line_offset\":1500}",
               "1500\tL1500\n\nRead 1 line (1500-1500) of 1500; reached the end of the file.", 0,
               "last of many");
    }
    /* 300 lines of 1000 bytes: 102 lines fit in 100 KiB (102,000 <= 102,400) */
    {
        static char kb[300 * 1000];
        for (int i = 0; i < 300; i++) {
            memset(kb + i * 1000, 'a', 999);
            kb[i * 1000 + 999] = '\n';
        }
        put_file_n("kb.txt", kb, sizeof kb);
        agt_result *r = call(s, "Read", "{\"path\":\"kb.txt\"}");
        const char *t = agt_result_text(r);
        const char *note = "\n\nRead 102 lines (1-102) of 300; stopped at the limit of 100 KiB per "
                           "call; continue with line_offset 103.";
        T_CHECK(strlen(t) > strlen(note) && strcmp(t + strlen(t) - strlen(note), note) == 0,
                "Read: 100 KiB limit note");
        T_CHECK(strstr(t, "\n102\taaa") != NULL && strstr(t, "\n103\t") == NULL,
                "Read: 100 KiB limit stops after line 102");
        agt_result_free(r);
    }

    expect(s, "Read", "{\"path\":\"nope.txt\"}",
           "nope.txt does not exist. Check the path (Glob finds files by name).", 1, "missing");
    put_file("sub/inner.txt", "x\n");
    expect(s, "Read", "{\"path\":\"sub\"}",
           "sub is a directory, not a file. Use Glob to list its files.", 1, "directory");
    put_file_n("bin.dat", "abc\0def\n", 8);
    expect_prefix(s, "Read", "{\"path\":\"bin.dat\"}",
                  "bin.dat is a binary file (it contains NUL bytes); Read shows text only.",
                  AGT_EUNSUPPORTED, "binary");
    put_file("lat.txt", "ok\ncaf\xe9\n");
    expect_prefix(s, "Read", "{\"path\":\"lat.txt\"}",
                  "lat.txt is not valid UTF-8 text (line 2 has bytes that are not UTF-8)",
                  AGT_EUNSUPPORTED, "latin-1");
    put_file_n("img.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
    expect(s, "Read", "{\"path\":\"img.png\"}",
           "img.png is an image file (image/png), not text. Use ReadMediaFile to look at it.", 1,
           "image points to ReadMediaFile");
    put_file(".env", "SECRET=1\n");
    expect_prefix(s, "Read", "{\"path\":\".env\"}", ".env is a sensitive file (", AGT_EDENIED,
                  "sensitive .env");
    put_file("keys/id_rsa", "-----BEGIN\n");
    expect_prefix(s, "Read", "{\"path\":\"keys/id_rsa\"}", "keys/id_rsa is a sensitive file (",
                  AGT_EDENIED, "private key");
    put_file(".env.example", "SECRET=\n");
    expect(s, "Read", "{\"path\":\".env.example\"}",
           "1\tSECRET=\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0,
           ".env.example is readable");
    expect_outside(s, "Read", "{\"path\":\"../x.txt\"}", parent_dir(), "read", "outside the root");
    {
        char link[700];
        snprintf(link, sizeof link, "%s/out", ws);
        if (symlink(outside, link) != 0)
            t_diag("symlink failed");
        expect_outside(s, "Read", "{\"path\":\"out\"}", parent_dir(), "read",
                       "symlink out of the root");
        snprintf(link, sizeof link, "%s/envlink", ws);
        if (symlink(".env", link) != 0)
            t_diag("symlink failed");
        expect_prefix(s, "Read", "{\"path\":\"envlink\"}", ".env is a sensitive file (",
                      AGT_EDENIED, "symlink to a sensitive file");

        /* A dangling link: the text names the path given, not the target. */
        snprintf(link, sizeof link, "%s/dangling", ws);
        if (symlink("nowhere", link) != 0)
            t_diag("symlink failed");
        expect(s, "Read", "{\"path\":\"dangling\"}",
               "dangling is a symbolic link to nowhere, which does not exist. Check the path "
               "(Glob finds files by name).",
               1, "dangling link");
        expect(s, "Edit", "{\"path\":\"dangling\",\"old_string\":\"a\",\"new_string\":\"b\"}",
               "dangling is a symbolic link to nowhere, which does not exist. Check the path "
               "(Glob finds files by name).",
               1, "Edit: dangling link");
        expect(s, "ReadMediaFile", "{\"path\":\"dangling\"}",
               "dangling is a symbolic link to nowhere, which does not exist. Check the path "
               "(Glob finds files by name).",
               1, "ReadMediaFile: dangling link");
        expect(s, "Glob", "{\"pattern\":\"*\",\"path\":\"dangling\"}",
               "dangling is a symbolic link to nowhere, which does not exist.", 1,
               "Glob: dangling link");
        expect(s, "Grep", "{\"pattern\":\"x\",\"path\":\"./dangling\"}",
               "./dangling is a symbolic link to nowhere, which does not exist.", 1,
               "Grep: dangling link");
        /* a link to a missing folder, further down the path */
        snprintf(link, sizeof link, "%s/gone", ws);
        if (symlink("missing/deeper", link) != 0)
            t_diag("symlink failed");
        expect(s, "Read", "{\"path\":\"gone/f.txt\"}",
               "gone/f.txt does not exist (through a symbolic link it is missing/deeper/f.txt). "
               "Check the path (Glob finds files by name).",
               1, "link to a missing folder");
        /* no link: the display path as before */
        expect(s, "Read", "{\"path\":\"./sub/../nope2.txt\"}",
               "nope2.txt does not exist. Check the path (Glob finds files by name).", 1,
               "missing, spelled differently");
        unlink(link);
        snprintf(link, sizeof link, "%s/dangling", ws);
        unlink(link);
    }
}

static void test_write(agt_session *s)
{
    expect(s, "Write", "{\"path\":\"new/dir/f.txt\",\"content\":\"hi\\n\"}",
           "Created new/dir/f.txt: 3 bytes written.", 0, "create with parents");
    T_EQ_STR(get_file("new/dir/f.txt", NULL), "hi\n", "Write: created content");
    expect(s, "Write", "{\"path\":\"new/dir/f.txt\",\"content\":\"hello\"}",
           "Overwrote new/dir/f.txt: 5 bytes written.", 0, "overwrite");
    expect(s, "Write", "{\"path\":\"new/dir/f.txt\",\"content\":\"!\",\"mode\":\"append\"}",
           "Appended new/dir/f.txt: 1 byte written at the end (the file now has 6 bytes).", 0,
           "append");
    T_EQ_STR(get_file("new/dir/f.txt", NULL), "hello!", "Write: append adds no newline");
    expect(s, "Write", "{\"path\":\"app.txt\",\"content\":\"x\",\"mode\":\"append\"}",
           "Created app.txt: 1 byte written.", 0, "append creates");
    expect(s, "Write", "{\"path\":\"u8.txt\",\"content\":\"\\u00e9\\u2713\"}",
           "Created u8.txt: 5 bytes written.", 0, "UTF-8 byte count");
    expect(s, "Write", "{\"path\":\"e.txt\",\"content\":\"\"}", "Created e.txt: 0 bytes written.",
           0, "empty content");

    char full[700];
    snprintf(full, sizeof full, "%s/mode.sh", ws);
    put_file("mode.sh", "#!/bin/sh\n");
    chmod(full, 0751);
    expect(s, "Write", "{\"path\":\"mode.sh\",\"content\":\"#!/bin/sh\\necho\\n\"}",
           "Overwrote mode.sh: 15 bytes written.", 0, "overwrite executable");
    struct stat st;
    stat(full, &st);
    T_EQ_INT(st.st_mode & 07777, 0751, "Write: mode bits kept");

    put_file("w.txt", "a\r\nb\r\n");
    expect(s, "Write", "{\"path\":\"w.txt\",\"content\":\"x\\ny\\n\"}",
           "Overwrote w.txt: 6 bytes written. Line breaks were written as CRLF to match the file.",
           0, "CRLF kept");
    T_EQ_STR(get_file("w.txt", NULL), "x\r\ny\r\n", "Write: CRLF content");
    expect(s, "Write", "{\"path\":\"w.txt\",\"content\":\"z\\n\",\"mode\":\"append\"}",
           "Appended w.txt: 3 bytes written at the end (the file now has 9 bytes). Line breaks "
           "were written as CRLF to match the file.",
           0, "CRLF append");
    T_EQ_STR(get_file("w.txt", NULL), "x\r\ny\r\nz\r\n", "Write: CRLF append content");

    expect_prefix(s, "Write", "{\"path\":\".env\",\"content\":\"X=1\"}",
                  ".env is a sensitive file (", AGT_EDENIED, "sensitive");
    T_EQ_STR(get_file(".env", NULL), "SECRET=1\n", "Write: sensitive file untouched");
    expect_outside(s, "Write", "{\"path\":\"../escape.txt\",\"content\":\"x\"}", parent_dir(),
                   "write", "outside");
    expect_outside(s, "Write", "{\"path\":\"out/inside.txt\",\"content\":\"x\"}", parent_dir(),
                   "write", "through a symlink out");
    expect(s, "Write", "{\"path\":\"sub\",\"content\":\"x\"}",
           "sub is a directory; give the path of a file inside it.", 1, "directory");
    expect_prefix(s, "Write", "{\"path\":\"x.txt\",\"content\":\"x\",\"mode\":\"insert\"}", "",
                  AGT_EINVALID, "bad mode fails the schema");
}

static void test_edit(agt_session *s)
{
    put_file("e.txt", "alpha\nbeta\ngamma\n");
    expect(s, "Edit", "{\"path\":\"e.txt\",\"old_string\":\"beta\",\"new_string\":\"BETA\"}",
           "Edited e.txt: replaced 1 occurrence at line 2. The lines around it now read:\n"
           "1\talpha\n2\tBETA\n3\tgamma",
           0, "single replacement");
    T_EQ_STR(get_file("e.txt", NULL), "alpha\nBETA\ngamma\n", "Edit: content");
    expect(s, "Edit", "{\"path\":\"e.txt\",\"old_string\":\"delta\",\"new_string\":\"x\"}",
           "old_string was not found in e.txt. Nothing was changed. The file may have changed: "
           "read it again and copy old_string exactly from the Read output (without the "
           "line-number prefix).",
           1, "not found");
    T_EQ_STR(get_file("e.txt", NULL), "alpha\nBETA\ngamma\n", "Edit: unchanged after failure");
    expect(s, "Edit", "{\"path\":\"e.txt\",\"old_string\":\"x\",\"new_string\":\"x\"}",
           "old_string and new_string are identical, so the edit would change nothing. Give the "
           "new text in new_string.",
           1, "identical strings");

    /* In strict mode (no ladder) a white-space near miss is only reported. */
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_STRICT | AGT_EDIT_NO_STALE_CHECK), AGT_OK,
             "strict mode on");
    put_file("f.c", "int x;\nint main() {\n    return 0;\n}\n");
    expect(
        s, "Edit",
        "{\"path\":\"f.c\",\"old_string\":\"int main() {\\n  return 0;\\n}\",\"new_string\":\"\"}",
        "old_string was not found in f.c. Nothing was changed. Text that differs from "
        "old_string only in white space or line endings is at lines 2-4: read those lines "
        "again and copy them exactly (indentation included, without the line-number prefix).",
        1, "white-space near miss");
    T_EQ_STR(get_file("f.c", NULL), "int x;\nint main() {\n    return 0;\n}\n",
             "Edit: near miss not applied");
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK), AGT_OK, "strict mode off");

    put_file("m.txt", "x\ny\nx\n");
    expect(s, "Edit", "{\"path\":\"m.txt\",\"old_string\":\"x\",\"new_string\":\"z\"}",
           "old_string occurs 2 times in m.txt (at lines 1, 3). Nothing was changed. Include more "
           "surrounding lines in old_string to make it unique, or set replace_all to true to "
           "replace every occurrence.",
           1, "several matches");
    expect(s, "Edit",
           "{\"path\":\"m.txt\",\"old_string\":\"x\",\"new_string\":\"z\",\"replace_all\":true}",
           "Edited m.txt: replaced 2 occurrences.", 0, "replace_all");
    T_EQ_STR(get_file("m.txt", NULL), "z\ny\nz\n", "Edit: replace_all content");

    put_file("c.txt", "a\r\nb\r\nc\r\n");
    expect(s, "Edit", "{\"path\":\"c.txt\",\"old_string\":\"a\\nb\",\"new_string\":\"A\\nB\\nB2\"}",
           "Edited c.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
           "1\tA\n2\tB\n3\tB2\n4\tc",
           0, "CRLF file");
    T_EQ_STR(get_file("c.txt", NULL), "A\r\nB\r\nB2\r\nc\r\n", "Edit: CRLF written back");

    put_file("d.txt", "v = X;\n");
    expect(s, "Edit",
           "{\"path\":\"d.txt\",\"old_string\":\"X\",\"new_string\":\"$1 \\\\n $& \\\\\\\\\"}",
           "Edited d.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
           "1\tv = $1 \\n $& \\\\;",
           0, "dollar and backslash literal");
    T_EQ_STR(get_file("d.txt", NULL), "v = $1 \\n $& \\\\;\n", "Edit: literal content");

    put_file("u.txt", "caf\xc3\xa9 \xe2\x9c\x93\n");
    expect(s, "Edit", "{\"path\":\"u.txt\",\"old_string\":\"\\u00e9\",\"new_string\":\"e\"}",
           "Edited u.txt: replaced 1 occurrence at line 1. The lines around it now read:\n"
           "1\tcafe \xe2\x9c\x93",
           0, "UTF-8");

    char full[700];
    snprintf(full, sizeof full, "%s/run.sh", ws);
    put_file("run.sh", "echo a\n");
    chmod(full, 0700);
    expect(s, "Edit", "{\"path\":\"run.sh\",\"old_string\":\"a\",\"new_string\":\"b\"}",
           "Edited run.sh: replaced 1 occurrence at line 1. The lines around it now read:\n"
           "1\techo b",
           0, "executable");
    struct stat st;
    stat(full, &st);
    T_EQ_INT(st.st_mode & 07777, 0700, "Edit: mode bits kept");

    expect(s, "Edit", "{\"path\":\"none.txt\",\"old_string\":\"a\",\"new_string\":\"b\"}",
           "none.txt does not exist. Check the path (Glob finds files by name).", 1, "missing");
    expect(s, "Edit", "{\"path\":\"sub\",\"old_string\":\"a\",\"new_string\":\"b\"}",
           "sub is a directory, not a file. Use Glob to list its files.", 1, "directory");
    expect(s, "Edit", "{\"path\":\"bin.dat\",\"old_string\":\"abc\",\"new_string\":\"b\"}",
           "bin.dat is a binary file (it contains NUL bytes); Edit changes text files only.", 1,
           "binary");
    expect_prefix(s, "Edit", "{\"path\":\".env\",\"old_string\":\"1\",\"new_string\":\"2\"}",
                  ".env is a sensitive file (", AGT_EDENIED, "sensitive");
    expect_outside(s, "Edit", "{\"path\":\"out\",\"old_string\":\"1\",\"new_string\":\"2\"}",
                   parent_dir(), "write", "symlink out");
    expect_prefix(s, "Edit", "{\"path\":\"e.txt\",\"old_string\":\"\",\"new_string\":\"2\"}", "",
                  AGT_EINVALID, "empty old_string fails the schema");
}

static void test_media(agt_session *s)
{
    /* 16 bytes: base64 of "\x89PNG\r\n\x1a\n\0\0\0\rIHDR" */
    agt_result *r = call(s, "ReadMediaFile", "{\"path\":\"img.png\"}");
    T_EQ_STR(agt_result_text(r), "img.png: image image/png, 16 bytes, attached as base64 data.",
             "ReadMediaFile: PNG text");
    T_EQ_STR(agt_result_json(r),
             "{\"mime_type\":\"image/png\",\"data\":\"iVBORw0KGgoAAAANSUhEUg==\",\"bytes\":16,"
             "\"kind\":\"image\",\"path\":\"img.png\"}",
             "ReadMediaFile: PNG json");
    agt_result_free(r);
    struct {
        const char *name;
        const char *data;
        size_t len;
        const char *mime;
    } cases[] = {
        {"p.jpg", "\xff\xd8\xff\xe0\0\x10JFIF", 10, "image/jpeg"},
        {"p.gif", "GIF89a\x01\0\x01\0", 10, "image/gif"},
        {"p.webp", "RIFF\x24\0\0\0WEBPVP8 ", 16, "image/webp"},
        {"v.mp4",
         "\0\0\0\x18"
         "ftypisom\0\0\0\0",
         16, "video/mp4"},
        {"v.mov",
         "\0\0\0\x14"
         "ftypqt  \0\0\0\0",
         16, "video/quicktime"},
        {"v.webm", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm", 16, "video/webm"},
        {"v.avi", "RIFF\x24\0\0\0AVI LIST", 16, "video/x-msvideo"},
        {"noext", "\x89PNG\r\n\x1a\n\0\0", 10, "image/png"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        put_file_n(cases[i].name, cases[i].data, cases[i].len);
        char args[100];
        snprintf(args, sizeof args, "{\"path\":\"%s\"}", cases[i].name);
        r = call(s, "ReadMediaFile", args);
        const char *j = agt_result_json(r);
        char want[100];
        snprintf(want, sizeof want, "{\"mime_type\":\"%s\"", cases[i].mime);
        T_CHECK(j != NULL && strncmp(j, want, strlen(want)) == 0, "ReadMediaFile: %s is %s",
                cases[i].name, cases[i].mime);
        agt_result_free(r);
    }
    expect_prefix(s, "ReadMediaFile", "{\"path\":\"a.txt\"}",
                  "a.txt is not an image or video file this tool recognises", AGT_EUNSUPPORTED,
                  "text file");
    put_file("pic.svg", "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n");
    expect(s, "ReadMediaFile", "{\"path\":\"pic.svg\"}",
           "pic.svg is an SVG image, which is XML text: read it with Read.", 1, "SVG");
    expect(s, "ReadMediaFile", "{\"path\":\"nope.png\"}",
           "nope.png does not exist. Check the path (Glob finds files by name).", 1, "missing");
    expect_outside(s, "ReadMediaFile", "{\"path\":\"out\"}", parent_dir(), "read", "outside");
    expect(s, "ReadMediaFile", "{\"path\":\"sub\"}",
           "sub is a directory, not a file. Use Glob to list its files.", 1, "directory");
}

static void test_settings(void)
{
    agt_session *s = new_session();
    char dir[700], file[760], args[900], want[1200];
    snprintf(dir, sizeof dir, "%s-extra", ws);
    mkdir(dir, 0755);
    snprintf(file, sizeof file, "%s/o.txt", dir);
    FILE *f = fopen(file, "w");
    if (f) {
        fputs("ok\n", f);
        fclose(f);
    }
    snprintf(args, sizeof args, "{\"path\":\"%s\"}", file);
    expect_outside(s, "Read", args, dir, "read", "before add_allowed_dir");
    T_EQ_INT(agt_session_add_allowed_dir(s, "rel/dir"), AGT_EINVAL, "add_allowed_dir: relative");
    T_EQ_INT(agt_session_add_allowed_dir(s, "/nonexistent/agt"), AGT_ENOTFOUND,
             "add_allowed_dir: missing");
    T_EQ_INT(agt_session_add_allowed_dir(NULL, dir), AGT_EINVAL, "add_allowed_dir: NULL session");
    T_EQ_INT(agt_session_add_allowed_dir(s, dir), AGT_OK, "add_allowed_dir");
    T_EQ_INT(agt_session_add_allowed_dir(s, dir), AGT_OK, "add_allowed_dir twice");
    expect(s, "Read", args, "1\tok\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0,
           "inside an allowed dir");
    snprintf(args, sizeof args, "{\"pattern\":\"*.txt\",\"path\":\"%s\"}", dir);
    expect(s, "Glob", args, file, 0, "allowed dir: absolute paths");
    expect_outside(s, "Read", "{\"path\":\"out\"}", parent_dir(), "read",
                   "other outside paths still ask");

    T_EQ_INT(agt_session_set_file_limit(s, 0, 5), AGT_EINVAL, "set_file_limit: unknown limit");
    T_EQ_INT(agt_session_set_file_limit(s, AGT_FILE_LIMIT_READ_LINES, -1), AGT_EINVAL,
             "set_file_limit: negative");
    T_EQ_INT(agt_session_set_file_limit(s, AGT_FILE_LIMIT_READ_LINES, 2), AGT_OK,
             "set_file_limit: lines");
    expect(s, "Read", "{\"path\":\"a.txt\"}",
           "1\tone\n2\ttwo\n\nRead 2 lines (1-2) of 3; stopped at the limit of 2 lines per call; "
           "continue with line_offset 3.",
           0, "session line limit");
    expect(s, "Read", "{\"path\":\"a.txt\",\"n_lines\":3}",
           "n_lines must be between 1 and 2, not 3.", 1, "n_lines above the session limit");
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_READ_LINES, 0);
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_READ_BYTES, 5);
    expect(s, "Read", "{\"path\":\"a.txt\"}",
           "1\tone\n\nRead 1 line (1-1) of 3; stopped at the limit of 5 bytes per call; continue "
           "with line_offset 2.",
           0, "session byte limit");
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_READ_BYTES, 0);
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_LINE_CHARS, 2);
    expect(s, "Read", "{\"path\":\"a.txt\"}",
           "1\ton\n2\ttw\n3\tth\n\nRead 3 lines (1-3) of 3; reached the end of the file.\nLines "
           "longer than 2 characters were cut: 1, 2, 3. To read on in a cut line, call Read with "
           "line_offset at that line, n_lines 1 and char_offset 2.",
           0, "session line width");
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_LINE_CHARS, 0);
    expect(s, "Read", "{\"path\":\"a.txt\",\"n_lines\":1}",
           "1\tone\n\nRead 1 line (1-1) of 3; stopped at n_lines (1); continue with line_offset 2.",
           0, "0 restores the defaults");
    agt_session_set_file_limit(s, AGT_FILE_LIMIT_MEDIA_BYTES, 10);
    expect(s, "ReadMediaFile", "{\"path\":\"img.png\"}",
           "img.png is larger than 10 bytes, the limit of ReadMediaFile.", 1, "media limit");
    (void)want;
    agt_session_free(s);
    unlink(file);
    rmdir(dir);
}

int main(void)
{
    make_ws("wsfiles");
    snprintf(outside, sizeof outside, "%s-outside", ws);
    FILE *f = fopen(outside, "w");
    if (f) {
        fputs("secret\n", f);
        fclose(f);
    }
    agt_session *s = new_session();
    /* These tests rewrite files behind the tools' back between calls
     * (put_file); the staleness check has its own tests (test_stale.c). */
    agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK);
    test_read(s);
    test_write(s);
    test_edit(s);
    test_media(s);
    agt_session_free(s);
    test_settings();
    unlink(outside);
    rm_ws();
    return t_done();
}
