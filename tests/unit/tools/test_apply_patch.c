/* apply_patch through agt_session_dispatch: the result texts, a failure in
 * the third of four files leaving all four untouched, every write step of
 * the commit failing in turn (the tree as before each time), kill -9 at
 * every step (each file old or new, never anything else), moves across
 * folders, CRLF files, strict mode, and the paths going through the same
 * checks as Write and Edit (deny rules on Edit, sensitive files, outside
 * the root, plan mode). Expected texts worked out by hand. */
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/wait.h>

#include "core/core.h"
#include "fs/fs.h"
#include "wsfix.h"

static char *args_of(const char *patch)
{
    json_t *a = json_pack("{s:s}", "input", patch);
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

static void patch_expect(agt_session *s, const char *patch, const char *want, int want_error,
                         const char *name)
{
    char *args = args_of(patch);
    expect(s, "apply_patch", args, want, want_error, name);
    free(args);
}

/* Every name below the workspace (hidden ones too) with its content. */
static void snap_dir(agti_buf *b, const char *rel)
{
    char p[2048];
    snprintf(p, sizeof p, "%s%s%s", ws, rel[0] ? "/" : "", rel);
    struct dirent **list;
    int n = scandir(p, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            char r[400], f[1024];
            snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", nm);
            snprintf(f, sizeof f, "%s/%s", ws, r);
            struct stat st;
            lstat(f, &st);
            agti_buf_printf(b, "%s ino=%lu mode=%o\n", r, (unsigned long)st.st_ino,
                            (unsigned)st.st_mode);
            if (S_ISDIR(st.st_mode))
                snap_dir(b, r);
            else {
                size_t len = 0;
                const char *c = get_file(r, &len);
                agti_buf_put(b, c ? c : "", len);
                agti_buf_puts(b, "\n--\n");
            }
        }
        free(list[i]);
    }
    free(list);
}

static char *snap(void)
{
    agti_buf b = AGTI_BUF_INIT;
    snap_dir(&b, "");
    return agti_buf_detach(&b);
}

static void clear_ws(void)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/* '%s'/.[!.]*", ws, ws);
    if (system(cmd) != 0)
        t_diag("could not clear %s", ws);
}

static const char FOUR[] = "*** Begin Patch\n"
                           "*** Add File: docs/new.md\n"
                           "+# New\n"
                           "*** Update File: src/a.c\n"
                           "@@ int a(void)\n"
                           "-    return 1;\n"
                           "+    return 2;\n"
                           "*** Delete File: old.txt\n"
                           "*** Update File: src/b.c\n"
                           "*** Move to: lib/moved/b.c\n"
                           "@@\n"
                           " int b(void)\n"
                           "-{ return 0; }\n"
                           "+{ return 3; }\n"
                           "*** End Patch\n";

static void four_files(void)
{
    clear_ws();
    put_file("src/a.c", "int a(void)\n{\n    return 1;\n}\n");
    put_file("src/b.c", "int b(void)\n{ return 0; }\n");
    put_file("old.txt", "obsolete\n");
}

static void test_apply(agt_session *s)
{
    four_files();
    patch_expect(s, FOUR,
                 "Applied the patch to 4 files:\nA docs/new.md (1 line)\nM src/a.c (1 hunk)\nD "
                 "old.txt\nR src/b.c -> lib/moved/b.c (1 hunk)",
                 0, "four files");
    T_EQ_STR(get_file("docs/new.md", NULL), "# New\n", "added");
    T_EQ_STR(get_file("src/a.c", NULL), "int a(void)\n{\n    return 2;\n}\n", "updated");
    T_CHECK(get_file("old.txt", NULL) == NULL, "deleted");
    T_CHECK(get_file("src/b.c", NULL) == NULL, "moved away");
    T_EQ_STR(get_file("lib/moved/b.c", NULL), "int b(void)\n{ return 3; }\n", "moved and updated");
    char *now = snap();
    T_CHECK(strstr(now, ".agt-") == NULL, "no second name or temporary left");
    free(now);

    /* The third of four sections does not match: all four untouched. */
    four_files();
    char *before = snap();
    char *bad = agti_strdup(FOUR);
    char *hit = strstr(bad, "-{ return 0; }");
    memcpy(hit, "-{ return 9; }", 14);
    patch_expect(s, bad,
                 "The patch was not applied: line 11: hunk 1 of src/b.c does not match the file. "
                 "Its first line matches the file's line 1, but line 13 of the patch, '{ return "
                 "9; }', differs from the file's line 2: '{ return 0; }'. Nothing was changed: "
                 "read the file again and copy the context and '-' lines exactly.",
                 1, "a hunk of the fourth file does not match");
    char *after = snap();
    T_EQ_STR(after, before, "nothing changed, no folder created (docs/, lib/moved/)");
    free(after);
    free(before);
    free(bad);

    /* A parse error. */
    patch_expect(s, "*** Begin Patch\n*** Update File: src/a.c\n-x\n+y\n",
                 "The patch could not be read, nothing was changed: line 4: the patch must end "
                 "with the line '*** End Patch'; its last line is '+y' (was the patch cut off?). "
                 "Fix that line and send the whole patch again.",
                 1, "parse error");

    /* CRLF file, and a note for the level. */
    clear_ws();
    put_file("w.txt", "one\r\ntwo\r\n");
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n+3\n*** End "
                 "Patch\n",
                 "Applied the patch to 1 file:\nM w.txt (1 hunk)\n  hunk 1 (line 1 of the file): "
                 "matched after normalising line endings: the file uses CRLF line endings",
                 0, "CRLF");
    T_EQ_STR(get_file("w.txt", NULL), "one\r\n2\r\n3\r\n", "CRLF kept on every line");

    /* Strict mode: no ladder. */
    agt_session_set_edit_options(s, AGT_EDIT_STRICT | AGT_EDIT_NO_STALE_CHECK);
    put_file("w.txt", "one\r\ntwo\r\n");
    patch_expect(s, "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n*** End Patch\n",
                 "The patch was not applied: line 3: hunk 1 of w.txt does not match the file. "
                 "Its lines are the file's lines 1-2 but for their line endings, which strict "
                 "matching does not ignore. Nothing was changed: read the file again and copy the "
                 "context and '-' lines exactly.",
                 1, "strict");
    agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK);

    /* A file with two names: the link is broken by default. */
    put_file("h1.txt", "h\n");
    char l1[1100], l2[1100];
    snprintf(l1, sizeof l1, "%s/h1.txt", ws);
    snprintf(l2, sizeof l2, "%s/h2.txt", ws);
    T_EQ_INT(link(l1, l2), 0, "second name made");
    patch_expect(s, "*** Begin Patch\n*** Update File: h1.txt\n@@\n-h\n+H\n*** End Patch\n",
                 "Applied the patch to 1 file:\nM h1.txt (1 hunk)\n  h1.txt had 2 names (hard "
                 "links): the link was broken, h1.txt is a new file now and the other names keep "
                 "the old content.",
                 0, "hard link broken");
    T_EQ_STR(get_file("h2.txt", NULL), "h\n", "the other name keeps the old content");

    /* A patch that changes nothing. */
    put_file("same.txt", "x\n");
    patch_expect(s, "*** Begin Patch\n*** Update File: same.txt\n@@\n-x\n+x\n*** End Patch\n",
                 "The patch changes nothing: every file already has the content it gives.", 0,
                 "no change");
}

static void test_fault_injection(agt_session *s)
{
    int k;
    for (k = 1; k <= 20; k++) {
        four_files();
        char *before = snap();
        agti_fs_txn_fail_step = k;
        char *args = args_of(FOUR);
        agt_result *r = call(s, "apply_patch", args);
        free(args);
        int left = agti_fs_txn_fail_step;
        agti_fs_txn_fail_step = 0;
        bool err = agt_result_is_error(r);
        const char *t = agt_result_text(r);
        if (!err) {
            T_EQ_INT(left, k, "k=%d: not reached, the commit succeeds", k);
            agt_result_free(r);
            free(before);
            break;
        }
        T_CHECK(strncmp(t, "The patch was not applied: ", 27) == 0 &&
                    strstr(t, "Every file it had changed was put back, so nothing was changed.") !=
                        NULL,
                "k=%d: the message says all was put back", k);
        char *after = snap();
        T_EQ_STR(after, before, "k=%d: the tree is as before (bytes, inodes, modes, folders)", k);
        free(after);
        free(before);
        agt_result_free(r);
    }
    /* second names: src/a.c, old.txt, src/b.c; changes: 3 writes, 2 removals */
    T_EQ_INT(k, 9, "the four-file patch has eight steps");
}

/* Whether rel holds one of the two texts (or is missing when one is NULL). */
static bool old_or_new(const char *rel, const char *old, const char *nw)
{
    const char *c = get_file(rel, NULL);
    if (c == NULL)
        return old == NULL || nw == NULL;
    return (old && strcmp(c, old) == 0) || (nw && strcmp(c, nw) == 0);
}

static void test_kill(agt_session *s)
{
    for (int k = 1; k <= 8; k++) {
        four_files();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            agti_fs_txn_kill_step = k;
            char *args = args_of(FOUR);
            agt_result *r = NULL;
            agt_session_dispatch(s, "c", "apply_patch", args, &r);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "kill at step %d: killed", k);
        bool ok = old_or_new("docs/new.md", NULL, "# New\n") &&
                  old_or_new("src/a.c", "int a(void)\n{\n    return 1;\n}\n",
                             "int a(void)\n{\n    return 2;\n}\n") &&
                  old_or_new("old.txt", "obsolete\n", NULL) &&
                  old_or_new("src/b.c", "int b(void)\n{ return 0; }\n", NULL) &&
                  old_or_new("lib/moved/b.c", NULL, "int b(void)\n{ return 3; }\n");
        T_CHECK(ok, "kill at step %d: every file old or new", k);
    }
}

static void test_paths(agt_session *s)
{
    clear_ws();
    put_file("src/a.c", "x\n");
    put_file("secret/k.txt", "k\n");
    agt_session_add_rule(s, AGT_RULE_DENY, "Edit(secret/**)");
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: src/a.c\n@@\n-x\n+y\n*** Update File: "
                 "secret/k.txt\n@@\n-k\n+K\n*** End Patch\n",
                 "apply_patch call refused: the rule 'Edit(secret/**)' in the deny list forbids "
                 "it. Do not retry it; take another approach or ask the user to change the rules.",
                 1, "deny rule on Edit covers a path");
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: src/a.c\n*** Move to: secret/a.c\n@@\n-x\n+y\n"
                 "*** End Patch\n",
                 "apply_patch call refused: the rule 'Edit(secret/**)' in the deny list forbids "
                 "it. Do not retry it; take another approach or ask the user to change the rules.",
                 1, "deny rule on Edit covers a Move to target");
    T_EQ_STR(get_file("src/a.c", NULL), "x\n", "denied: untouched");
    T_EQ_STR(get_file("secret/k.txt", NULL), "k\n", "denied: untouched too");

    char *args = args_of("*** Begin Patch\n*** Add File: .env\n+TOKEN=1\n*** End Patch\n");
    expect_prefix(s, "apply_patch", args, ".env is a sensitive file (", AGT_EDENIED,
                  "sensitive file refused");
    free(args);
    T_CHECK(get_file(".env", NULL) == NULL, "sensitive: not created");

    args = args_of("*** Begin Patch\n*** Update File: src/a.c\n@@\n-x\n+y\n*** Add File: "
                   "../outside.txt\n+o\n*** End Patch\n");
    expect_prefix(s, "apply_patch", args, "Cannot use path '../outside.txt': ", AGT_EDENIED,
                  "outside the root refused");
    free(args);
    T_EQ_STR(get_file("src/a.c", NULL), "x\n", "outside: the other file untouched");

    agt_session_set_mode(s, AGT_MODE_PLAN);
    patch_expect(s, "*** Begin Patch\n*** Update File: src/a.c\n@@\n-x\n+y\n*** End Patch\n",
                 "In plan mode apply_patch may only add or update the plan file (call "
                 "EnterPlanMode first), not change 'src/a.c'. Put your plan there, then call "
                 "ExitPlanMode to ask the user to approve it.",
                 1, "plan mode");
    agt_session_set_mode(s, AGT_MODE_YOLO);
    T_EQ_STR(get_file("src/a.c", NULL), "x\n", "plan mode: untouched");
}

#define STALE_TAIL                                                                                 \
    ", by another program or a command. apply_patch did not change it. Read it again, then redo "  \
    "the change on what the file holds now."

static void read_ok(agt_session *s, const char *rel)
{
    char args[300];
    snprintf(args, sizeof args, "{\"path\":\"%s\"}", rel);
    agt_result *r = call(s, "Read", args);
    T_EQ_INT(agt_result_is_error(r), 0, "Read %s", rel);
    agt_result_free(r);
}

/* Edit's staleness check, through apply_patch: a file read and changed
 * behind the session's back since is refused, naming the changed lines,
 * and nothing of the patch is applied; what the patch wrote counts as
 * seen; the session options turn the check off or require a read. */
static void test_stale(agt_session *s)
{
    clear_ws();
    put_file("a.txt", "one\ntwo\nsix\n");
    put_file("b.txt", "bee\n");
    read_ok(s, "a.txt");
    sneak("a.txt", "one\nTWO\nsix\n");
    static const char two[] = "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+BEE\n"
                              "*** Update File: a.txt\n@@\n two\n-six\n+ten\n*** End Patch\n";
    /* the hunk's context is "two", which the change made "TWO": the check
     * speaks first, before any hunk is matched */
    patch_expect(
        s, two, "a.txt has changed on disk since it was last read (changed now: line 2)" STALE_TAIL,
        1, "stale: refused, naming the changed line");
    T_EQ_STR(get_file("a.txt", NULL), "one\nTWO\nsix\n", "stale: a.txt untouched");
    T_EQ_STR(get_file("b.txt", NULL), "bee\n", "stale: b.txt (unread, unchanged) untouched");
    read_ok(s, "a.txt");
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: a.txt\n@@\n TWO\n-six\n+ten\n*** End Patch\n",
                 "Applied the patch to 1 file:\nM a.txt (1 hunk)", 0, "stale: after a new Read");
    /* its own write counts as seen; then a change of the last line only */
    sneak("a.txt", "one\nTWO\nTEN\n");
    patch_expect(
        s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n",
        "a.txt has changed on disk since it was last read (changed now: line 3)" STALE_TAIL, 1,
        "stale: the patch's own write is what the session saw");
    T_EQ_STR(get_file("a.txt", NULL), "one\nTWO\nTEN\n", "stale: untouched again");
    read_ok(s, "a.txt");
    sneak("a.txt", "one\nTWO\nTEN\nfour\n");
    patch_expect(
        s, "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\n",
        "a.txt has changed on disk since it was last read (changed now: line 4)" STALE_TAIL, 1,
        "stale: Delete File of a changed file refused");
    T_EQ_STR(get_file("a.txt", NULL), "one\nTWO\nTEN\nfour\n", "stale: not deleted");
    patch_expect(
        s,
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m/a.txt\n@@\n-one\n+1\n"
        "*** End Patch\n",
        "a.txt has changed on disk since it was last read (changed now: line 4)" STALE_TAIL, 1,
        "stale: Move of a changed file refused");
    T_CHECK(get_file("m/a.txt", NULL) == NULL, "stale: not moved");

    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK), AGT_OK, "check off");
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m/a.txt\n@@\n-one\n+1\n"
                 "*** End Patch\n",
                 "Applied the patch to 1 file:\nR a.txt -> m/a.txt (1 hunk)", 0,
                 "AGT_EDIT_NO_STALE_CHECK: applied");

    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_REQUIRE_READ), AGT_OK, "require read");
    put_file("u.txt", "u\n");
    patch_expect(s, "*** Begin Patch\n*** Update File: u.txt\n@@\n-u\n+U\n*** End Patch\n",
                 "u.txt has not been read in this session, and this session lets apply_patch "
                 "change only files that were read first. Nothing was changed. Read it (a part of "
                 "it is enough), then call apply_patch again.",
                 1, "AGT_EDIT_REQUIRE_READ: an unread file refused");
    T_EQ_STR(get_file("u.txt", NULL), "u\n", "AGT_EDIT_REQUIRE_READ: untouched");
    patch_expect(s, "*** Begin Patch\n*** Add File: n.txt\n+new\n*** End Patch\n",
                 "Applied the patch to 1 file:\nA n.txt (1 line)", 0,
                 "AGT_EDIT_REQUIRE_READ: a new file needs no read");
    /* what the patches wrote (the move target, the new file) counts as read */
    patch_expect(s,
                 "*** Begin Patch\n*** Update File: m/a.txt\n@@\n-1\n+one\n*** Update File: "
                 "n.txt\n@@\n-new\n+old\n*** End Patch\n",
                 "Applied the patch to 2 files:\nM m/a.txt (1 hunk)\nM n.txt (1 hunk)", 0,
                 "AGT_EDIT_REQUIRE_READ: files the patches wrote count as read");
    patch_expect(s, "*** Begin Patch\n*** Delete File: n.txt\n*** End Patch\n",
                 "Applied the patch to 1 file:\nD n.txt", 0, "AGT_EDIT_REQUIRE_READ: delete");
    put_file("n.txt", "again\n");
    patch_expect(s, "*** Begin Patch\n*** Delete File: n.txt\n*** End Patch\n",
                 "n.txt has not been read in this session, and this session lets apply_patch "
                 "change only files that were read first. Nothing was changed. Read it (a part of "
                 "it is enough), then call apply_patch again.",
                 1, "AGT_EDIT_REQUIRE_READ: a deleted file is forgotten");
    T_EQ_INT(agt_session_set_edit_options(s, 0), AGT_OK, "options back");
}

int main(void)
{
    make_ws("patch");
    agt_session *s = new_session();
    /* These cases reset the tree behind the session's back, which the
     * staleness check refuses (it has its own cases, test_stale). */
    T_EQ_INT(agt_session_set_edit_options(s, AGT_EDIT_NO_STALE_CHECK), AGT_OK, "check off");
    test_apply(s);
    test_fault_injection(s);
    test_kill(s);
    test_paths(s);
    T_EQ_INT(agt_session_set_edit_options(s, 0), AGT_OK, "check on");
    test_stale(s);
    agt_session_free(s);
    rm_ws();
    return t_done();
}
