/* file:// URIs as the path argument of every file tool (and Bash's cwd):
 * they were taken as relative paths, so Write made a "file:" folder inside
 * the workspace. Expected texts follow docs/workspace-tools.md and
 * docs/tasks.md. */
#include "wsfix.h"

static int contains(const char *hay, const char *needle)
{
    return hay != NULL && strstr(hay, needle) != NULL;
}

static void check(agt_session *s, const char *tool, const char *args, const char *needle,
                  int want_error, const char *name)
{
    agt_result *r = call(s, tool, args);
    T_CHECK(contains(agt_result_text(r), needle), "%s %s: %s", tool, name,
            flat(agt_result_text(r)));
    T_EQ_INT(agt_result_is_error(r), want_error, "%s %s: is_error", tool, name);
    agt_result_free(r);
}

int main(void)
{
    make_ws("uri");
    put_file("src/a.txt", "hello\n");
    put_file("sp ace/b.txt", "two\n");
    agt_session *s = new_session();
    char args[2048], want[2048];

    snprintf(args, sizeof args, "{\"path\":\"file://%s/src/a.txt\"}", ws);
    expect(s, "Read", args, "1\thello\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0,
           "file:///abs");
    snprintf(args, sizeof args, "{\"path\":\"file://localhost%s/sp%%20ace/b.txt\"}", ws);
    expect(s, "Read", args, "1\ttwo\n\nRead 1 line (1-1) of 1; reached the end of the file.", 0,
           "file://localhost with %20");

    snprintf(args, sizeof args, "{\"path\":\"file://%s/new/c.txt\",\"content\":\"x\"}", ws);
    agt_result *r = call(s, "Write", args);
    T_EQ_INT(agt_result_is_error(r), 0, "Write to a file URI: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    const char *got = get_file("new/c.txt", NULL);
    T_EQ_STR(got, "x", "Write wrote new/c.txt");

    snprintf(args, sizeof args,
             "{\"path\":\"file://%s/new/c.txt\",\"old_string\":\"x\",\"new_string\":\"y\"}", ws);
    r = call(s, "Edit", args);
    T_EQ_INT(agt_result_is_error(r), 0, "Edit through a file URI: %s", flat(agt_result_text(r)));
    agt_result_free(r);
    got = get_file("new/c.txt", NULL);
    T_EQ_STR(got, "y", "Edit changed new/c.txt");

    snprintf(args, sizeof args, "{\"pattern\":\"hello\",\"path\":\"file://%s/src\"}", ws);
    check(s, "Grep", args, "src/a.txt", 0, "path as a URI");
    snprintf(args, sizeof args, "{\"pattern\":\"*.txt\",\"path\":\"file://%s/src\"}", ws);
    expect(s, "Glob", args, "src/a.txt", 0, "path as a URI");
    snprintf(args, sizeof args, "{\"path\":\"file://%s/src/a.txt\"}", ws);
    check(s, "ReadMediaFile", args, "src/a.txt", 1, "reaches the file (not an image)");

    snprintf(args, sizeof args, "{\"command\":\"pwd\",\"cwd\":\"file://%s/src\"}", ws);
    snprintf(want, sizeof want, "%s/src\nCommand completed with exit code 0.", ws);
    expect(s, "Bash", args, want, 0, "cwd as a URI");

    /* refused with the reason, nothing made */
    expect(s, "Write", "{\"path\":\"file://host/x\",\"content\":\"x\"}",
           "Cannot use path 'file://host/x': the file URI names the host 'host'; only files on "
           "this machine can be used (file:///absolute/path or file://localhost/absolute/path), "
           "or give the path itself.",
           1, "another host");
    expect_outside(s, "Read", "{\"path\":\"file:///etc/hostname\"}", "/etc", "read",
                   "a URI outside the workspace");
    snprintf(args, sizeof args, "{\"path\":\"file://%s/src/a.txt#L1\"}", ws);
    snprintf(want, sizeof want,
             "Cannot use path 'file://%s/src/a.txt#L1': a file URI with a query (?) or a "
             "fragment (#) does not name a file; write '?' as %%3F and '#' as %%23, or give the "
             "path itself.",
             ws);
    expect(s, "Read", args, want, 1, "fragment");
    snprintf(args, sizeof args, "{\"command\":\"pwd\",\"cwd\":\"file://elsewhere%s\"}", ws);
    snprintf(want, sizeof want,
             "cwd 'file://elsewhere%s' is refused: the file URI names the host 'elsewhere'; "
             "only files on this machine can be used (file:///absolute/path or "
             "file://localhost/absolute/path), or give the path itself. Commands run inside the "
             "workspace %s.",
             ws, ws);
    expect(s, "Bash", args, want, 1, "cwd on another host");

    char p[600];
    snprintf(p, sizeof p, "%s/file:", ws);
    T_CHECK(access(p, F_OK) != 0, "no 'file:' folder inside the workspace");
    agt_session_free(s);
    rm_ws();
    return t_done();
}
