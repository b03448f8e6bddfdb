/* Write and Edit on a file with several names (hard links) and through a
 * symbolic link, through agt_session_dispatch: every name must see the new
 * content (the file keeps its inode), a link stays a link, and a rewrite
 * that fails midway says whether the file was put back. Expected texts
 * worked out by hand from docs/workspace-tools.md and docs/fs.md. */
#include "fs/fs.h"
#include "wsfix.h"

static ino_t ino_of(const char *rel)
{
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", ws, rel);
    struct stat st;
    return stat(full, &st) == 0 ? st.st_ino : 0;
}

static void both_hold(const char *want, const char *what)
{
    T_EQ_STR(get_file("h.txt", NULL), want, "%s: h.txt", what);
    T_EQ_STR(get_file("h2.txt", NULL), want, "%s: h2.txt", what);
}

static void test_links(agt_session *s)
{
    char a[1024], b[1024];
    put_file("h.txt", "one\ntwo\n");
    snprintf(a, sizeof a, "%s/h.txt", ws);
    snprintf(b, sizeof b, "%s/h2.txt", ws);
    T_EQ_INT(link(a, b), 0, "second name");
    ino_t ino = ino_of("h.txt");

    expect(s, "Write", "{\"path\":\"h.txt\",\"content\":\"new\\n\"}",
           "Overwrote h.txt: 4 bytes written. h.txt has 2 names (hard links): it was rewritten in "
           "place, so every name shows the new content.",
           0, "file with 2 names");
    both_hold("new\n", "Write reaches both names");
    T_CHECK(ino_of("h.txt") == ino, "Write: inode unchanged");
    expect(s, "Write", "{\"path\":\"h2.txt\",\"content\":\"more\\n\",\"mode\":\"append\"}",
           "Appended h2.txt: 5 bytes written at the end (the file now has 9 bytes). h2.txt has 2 "
           "names (hard links): it was rewritten in place, so every name shows the new content.",
           0, "append through the other name");
    both_hold("new\nmore\n", "append reaches both names");
    expect_prefix(s, "Edit",
                  "{\"path\":\"h2.txt\",\"old_string\":\"new\",\"new_string\":\"newer\"}",
                  "Edited h2.txt: replaced 1 occurrence at line 1.", AGT_OK, "file with 2 names");
    both_hold("newer\nmore\n", "Edit reaches both names");
    T_CHECK(ino_of("h.txt") == ino, "Edit: inode unchanged");

    /* A symbolic link to it: written through, the link stays (the result
     * names the file the link leads to). */
    T_EQ_INT(symlink("h.txt", (snprintf(b, sizeof b, "%s/ln", ws), b)), 0, "symlink");
    expect_prefix(s, "Edit", "{\"path\":\"ln\",\"old_string\":\"more\",\"new_string\":\"x\"}",
                  "Edited h.txt: replaced 1 occurrence at line 2.", AGT_OK, "through a symlink");
    struct stat st;
    T_CHECK(lstat(b, &st) == 0 && S_ISLNK(st.st_mode), "Edit: symlink kept");
    both_hold("newer\nx\n", "Edit through the symlink");
    expect(s, "Write", "{\"path\":\"ln\",\"content\":\"y\\n\"}",
           "Overwrote h.txt: 2 bytes written. h.txt has 2 names (hard links): it was rewritten in "
           "place, so every name shows the new content.",
           0, "through a symlink");
    T_CHECK(lstat(b, &st) == 0 && S_ISLNK(st.st_mode), "Write: symlink kept");
    both_hold("y\n", "Write through the symlink");
    T_CHECK(ino_of("h.txt") == ino, "inode unchanged through the symlink");

    /* The rewrite stops after 6 of 12 bytes; the original is put back. */
    char want[2048];
    snprintf(want, sizeof want,
             "Could not write h.txt: write: rewriting %s in place failed after 6 of 12 bytes "
             "(Input/output error); its original content was put back. The file was not changed.",
             a);
    agti_fs_atomic_fail_step = 6;
    expect(s, "Write", "{\"path\":\"h.txt\",\"content\":\"replacement\\n\"}", want, 1,
           "rewrite fails, restored");
    both_hold("y\n", "restored");

    /* Edit's rewrite (5 bytes: "zzzz\n") stops after 2 and the restore
     * fails too: the file holds "zz", the message names the backup. */
    agti_fs_atomic_fail_step = 7;
    agt_result *r =
        call(s, "Edit", "{\"path\":\"h.txt\",\"old_string\":\"y\",\"new_string\":\"zzzz\"}");
    const char *t = agt_result_text(r);
    if (t == NULL)
        t = "";
    snprintf(
        want, sizeof want,
        "Could not write h.txt: write: rewriting %s in place failed after 2 of 5 bytes "
        "(Input/output error) and putting its original content back failed too "
        "(Input/output error): the file is damaged; its original content is kept in %s/.h.txt.agt-",
        a, ws);
    T_CHECK(strncmp(t, want, strlen(want)) == 0, "damaged: message start: %s", t);
    const char *tail = ". Tell the user: the file needs to be restored from that copy.";
    T_CHECK(strlen(t) > strlen(tail) && strcmp(t + strlen(t) - strlen(tail), tail) == 0,
            "damaged: message end: %s", t);
    T_EQ_INT(agt_result_is_error(r), 1, "damaged: is_error");
    both_hold("zz", "damaged: partial content");
    char bak[1024];
    const char *p = strstr(t, " is kept in ");
    if (p == NULL || strlen(p + 12) < strlen(tail))
        p = " is kept in . Tell the user: the file needs to be restored from that copy.";
    snprintf(bak, sizeof bak, "%.*s", (int)(strlen(p + 12) - strlen(tail)), p + 12);
    FILE *f = fopen(bak, "rb");
    char got[64] = "";
    if (f) {
        size_t n = fread(got, 1, sizeof got - 1, f);
        got[n] = '\0';
        fclose(f);
    }
    T_EQ_STR(got, "y\n", "damaged: the backup holds the original");
    unlink(bak);
    agt_result_free(r);
    agti_fs_atomic_fail_step = 0;
}

/* The default: a file with several names is replaced, the link broken, and
 * a name outside the workspace keeps its content (issue 14). Fails on the
 * old code, which rewrote such a file in place through every name. */
static void test_break_default(agt_session *s)
{
    char a[1024], out[1024], outf[1100];
    const char *tmp = getenv("TMPDIR");
    snprintf(out, sizeof out, "%s/agt-linkout-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    T_CHECK(mkdtemp(out) != NULL, "outside folder");
    snprintf(outf, sizeof outf, "%s/secret.txt", out);
    FILE *f = fopen(outf, "wb");
    fputs("outside\n", f);
    fclose(f);
    snprintf(a, sizeof a, "%s/hl.txt", ws);
    T_EQ_INT(link(outf, a), 0, "hard link into the workspace");
    expect(s, "Write", "{\"path\":\"hl.txt\",\"content\":\"new\\n\"}",
           "Overwrote hl.txt: 4 bytes written. hl.txt had 2 names (hard links): the link was "
           "broken, hl.txt is a new file now and the other names keep the old content.",
           0, "Write breaks the link");
    T_EQ_STR(get_file("hl.txt", NULL), "new\n", "Write: the workspace name has the new text");
    f = fopen(outf, "rb");
    char got[64] = "";
    size_t n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    got[n] = '\0';
    if (f)
        fclose(f);
    T_EQ_STR(got, "outside\n", "Write: the outside name is untouched");
    struct stat st;
    T_CHECK(stat(a, &st) == 0 && st.st_nlink == 1, "Write: one name left");
    unlink(a);
    T_EQ_INT(link(outf, a), 0, "hard link again");
    expect_prefix(
        s, "Edit", "{\"path\":\"hl.txt\",\"old_string\":\"outside\",\"new_string\":\"in\"}",
        "Edited hl.txt: replaced 1 occurrence at line 1.", AGT_OK, "Edit breaks the link");
    T_EQ_STR(get_file("hl.txt", NULL), "in\n", "Edit: the workspace name has the new text");
    f = fopen(outf, "rb");
    n = f ? fread(got, 1, sizeof got - 1, f) : 0;
    got[n] = '\0';
    if (f)
        fclose(f);
    T_EQ_STR(got, "outside\n", "Edit: the outside name is untouched");
    unlink(a);
    unlink(outf);
    rmdir(out);
}

int main(void)
{
    make_ws("wslinks");
    agt_session *s = new_session();
    /* These tests rewrite files behind the tools' back between calls
     * (put_file); the staleness check has its own tests (test_stale.c). */
    agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK);
    test_break_default(s);
    T_EQ_INT(agt_session_set_hardlink_writes(s, AGT_HARDLINKS_IN_PLACE), AGT_OK, "in place");
    T_EQ_INT(agt_session_set_hardlink_writes(s, 7), AGT_EINVAL, "unknown mode refused");
    test_links(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
