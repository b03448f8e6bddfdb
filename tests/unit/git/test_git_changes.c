/*
 * Change sets from a real repository, compared file by file with what the
 * git CLI says about the same change (--name-status, --numstat, the hunk
 * headers, modes, similarity): commits with edits, a rename with changes, a
 * deletion, binary files, a mode change, a symlink, a missing final newline,
 * a merge; ranges (A...B) and single commits (root, merge, HEAD); the
 * working tree with staged and unstaged edits, untracked and ignored files.
 * Also the reviewed tree's file list and post-change contents.
 */
#include <limits.h>

#include "agenttools/diff.h"
#include "gitfix.h"

static char repo[600];

static void commit_all(const char *msg)
{
    if (gf_sh(repo, GIT "add -A && " GIT "commit -q -m '%s'", msg) != 0)
        t_diag("commit '%s' failed", msg);
}

static const char util_c[] = "#include <stdio.h>\n"
                             "\n"
                             "int add(int a, int b)\n"
                             "{\n"
                             "    int r = a + b;\n"
                             "    return r;\n"
                             "}\n"
                             "\n"
                             "int mul(int a, int b)\n"
                             "{\n"
                             "    int r = a * b;\n"
                             "    return r;\n"
                             "}\n";

/* Replaces line k (1-based) of a numbered-lines text with repl. */
static char *replace_line(const char *text, int k, const char *repl)
{
    size_t cap = strlen(text) + strlen(repl) + 2;
    char *out = malloc(cap);
    out[0] = '\0';
    int no = 1;
    for (const char *l = text; *l; no++) {
        const char *eol = strchr(l, '\n');
        size_t n = eol ? (size_t)(eol - l + 1) : strlen(l);
        if (no == k) {
            strcat(out, repl);
            strcat(out, "\n");
        } else {
            strncat(out, l, n);
        }
        l += n;
    }
    return out;
}

static void build_history(void)
{
    snprintf(repo, sizeof(repo), "%s/repo", gf_root);
    mkdir(repo, 0755);
    gf_sh(repo, GIT "init -q");
    char *a = gf_lines("alpha", 40), *b = gf_lines("bravo", 30);
    gf_puts(repo, "a.txt", a);
    gf_puts(repo, "b.txt", b);
    gf_puts(repo, "script.sh", "#!/bin/sh\necho hi\n");
    static const char bin1[] = "BIN\0\1\2\3 first version\0\0\0 tail";
    gf_write(repo, "bin.dat", bin1, sizeof(bin1));
    char *dl = gf_lines("delta", 5);
    gf_puts(repo, "del.txt", dl);
    gf_puts(repo, "noeol.txt", "one\ntwo\nthree");
    gf_puts(repo, ".gitignore", "*.log\nbuild/\n");
    gf_puts(repo, "src/util.c", util_c);
    commit_all("root");
    gf_sh(repo, GIT "tag v1");

    /* v2: two-hunk edit, rename with changes, deletion, binary change, mode
     * change, added file, symlink, last line without newline changed */
    char *a2 = replace_line(a, 3, "alpha THREE");
    char *a3 = replace_line(a2, 35, "alpha THIRTY-FIVE");
    gf_puts(repo, "a.txt", a3);
    gf_sh(repo, GIT "mv b.txt c.txt");
    char *c = replace_line(b, 15, "bravo FIFTEEN");
    size_t cl = strlen(c);
    char *c2 = malloc(cl + 20);
    memcpy(c2, c, cl);
    memcpy(c2 + cl, "bravo appended\n", 16);
    gf_puts(repo, "c.txt", c2);
    gf_sh(repo, GIT "rm -q del.txt");
    static const char bin2[] = "BIN\0\1\2\3 second version\0\0\0 tail";
    gf_write(repo, "bin.dat", bin2, sizeof(bin2));
    gf_sh(repo, "chmod +x script.sh");
    gf_puts(repo, "new.txt", "new file\n");
    gf_puts(repo, "noeol.txt", "one\ntwo\nTHREE");
    gf_sh(repo, "ln -s a.txt link.txt");
    commit_all("second");
    gf_sh(repo, GIT "tag v2");

    /* feature branch: edits on a.txt, a new file, add() changed */
    gf_sh(repo, GIT "checkout -q -b feature");
    char *a4 = replace_line(a3, 20, "alpha TWENTY");
    gf_puts(repo, "a.txt", a4);
    gf_puts(repo, "f.txt", "feature\nfile\n");
    commit_all("feature 1");
    char *u2 = replace_line(util_c, 5, "    int r = b + a;");
    gf_puts(repo, "src/util.c", u2);
    commit_all("feature 2");

    /* main moves on: mul() changed; then the feature is merged */
    gf_sh(repo, GIT "checkout -q main");
    char *u3 = replace_line(util_c, 11, "    int r = b * a;");
    gf_puts(repo, "src/util.c", u3);
    commit_all("main 1");
    if (gf_sh(repo, GIT "merge -q --no-edit --no-ff feature >/dev/null") != 0)
        t_diag("merge failed");
    free(a);
    free(b);
    free(dl);
    free(a2);
    free(a3);
    free(a4);
    free(c);
    free(c2);
    free(u2);
    free(u3);
}

static agt_changes *open_changes(const char *label, int mode, const char *from, const char *to)
{
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, repo, mode, from, to);
    T_EQ_INT(rc, AGT_OK, "%s: agt_changes_open", label);
    if (rc != AGT_OK)
        t_diag("%s", agt_error_message());
    return c;
}

/* agt_diff_from_repo against the CLI. */
static void check_vs_cli(const char *label, int mode, const char *from, const char *to,
                         const char *cli, const char *args)
{
    agt_diff *d = NULL;
    int rc = agt_diff_from_repo(&d, repo, mode, from, to);
    T_EQ_INT(rc, AGT_OK, "%s: agt_diff_from_repo", label);
    if (rc != AGT_OK) {
        t_diag("%s", agt_error_message());
        return;
    }
    gf_set *s = calloc(1, sizeof(*s));
    gf_cli(s, repo, cli, args);
    T_CHECK(s->n > 0, "%s: git reports changes", label);
    gf_compare(label, d, s);
    free(s);
    agt_diff_free(d);
}

static char *git_out(const char *fmt, const char *arg)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), fmt, arg);
    size_t len;
    return gf_out(&len, repo, "%s", cmd);
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == '\n')
        s[--n] = '\0';
}

/* JSON array of strings -> "a\nb\n" */
static char *lines_of(const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    size_t cap = 16;
    for (size_t i = 0; i < json_array_size(j); i++)
        cap += strlen(json_string_value(json_array_get(j, i))) + 1;
    char *s = calloc(1, cap);
    for (size_t i = 0; i < json_array_size(j); i++) {
        strcat(s, json_string_value(json_array_get(j, i)));
        strcat(s, "\n");
    }
    json_decref(j);
    return s;
}

static void check_read(agt_changes *c, const char *label, const char *path, const char *want_cmd)
{
    char *want = git_out(want_cmd, path);
    char *got = NULL;
    size_t len = 0;
    int rc = agt_changes_read_file(c, path, &got, &len);
    T_EQ_INT(rc, AGT_OK, "%s: read %s", label, path);
    T_CHECK(got && want && len == strlen(want) && memcmp(got, want, len) == 0,
            "%s: %s reads as `%s` shows", label, path, want_cmd);
    agt_free(got);
    free(want);
}

static void check_not_in_tree(agt_changes *c, const char *label, const char *path)
{
    char *got = NULL;
    int rc = agt_changes_read_file(c, path, &got, NULL);
    T_EQ_INT(rc, AGT_ENOTFOUND, "%s: read %s is refused", label, path);
    T_CHECK(strstr(agt_error_message(), path) != NULL, "%s: error names %s", label, path);
    T_CHECK(got == NULL, "%s: nothing returned for %s", label, path);
}

static void test_ranges_and_commits(void)
{
    check_vs_cli("commit v2", AGT_CHANGES_COMMIT, "v2", NULL, "show -M --format=", "v2");
    check_vs_cli("commit v2 via to", AGT_CHANGES_COMMIT, NULL, "v2", "show -M --format=", "v2");
    check_vs_cli("root commit", AGT_CHANGES_COMMIT, "v1", NULL, "show -M --format=", "v1");
    check_vs_cli("commit HEAD (merge)", AGT_CHANGES_COMMIT, NULL, NULL, "diff -M", "HEAD^1 HEAD");
    check_vs_cli("commit HEAD~1 (main)", AGT_CHANGES_COMMIT, "HEAD^1", NULL,
                 "show -M --format=", "HEAD^1");
    check_vs_cli("range v1...v2", AGT_CHANGES_RANGE, "v1", "v2", "diff -M", "v1...v2");
    check_vs_cli("range v2...feature", AGT_CHANGES_RANGE, "v2", "feature", "diff -M",
                 "v2...feature");
    check_vs_cli("range main^1...feature", AGT_CHANGES_RANGE, "main^1", "feature", "diff -M",
                 "main^1...feature");
    check_vs_cli("range feature...main^1", AGT_CHANGES_RANGE, "feature", "main^1", "diff -M",
                 "feature...main^1");
    check_vs_cli("range v1...HEAD (to defaults)", AGT_CHANGES_RANGE, "v1", NULL, "diff -M",
                 "v1...HEAD");

    /* the v2 commit in detail: the kinds of change are all there */
    agt_changes *c = open_changes("v2 detail", AGT_CHANGES_COMMIT, "v2", NULL);
    if (!c)
        return;
    agt_diff *d = agt_changes_diff(c);
    size_t ix;
    T_EQ_INT(agt_diff_file_index(d, "c.txt", &ix), AGT_OK, "v2: c.txt found");
    T_EQ_INT(agt_diff_file_status(d, ix), AGT_DIFF_RENAMED, "v2: c.txt renamed");
    T_EQ_STR(agt_diff_file_old_path(d, ix), "b.txt", "v2: c.txt renamed from b.txt");
    T_EQ_INT(agt_diff_file_index(d, "bin.dat", &ix), AGT_OK, "v2: bin.dat found");
    T_EQ_INT(agt_diff_file_is_binary(d, ix), 1, "v2: bin.dat binary");
    T_EQ_INT(agt_diff_file_index(d, "del.txt", &ix), AGT_OK, "v2: del.txt found");
    T_EQ_INT(agt_diff_file_status(d, ix), AGT_DIFF_DELETED, "v2: del.txt deleted");
    T_EQ_INT(agt_diff_file_index(d, "link.txt", &ix), AGT_OK, "v2: link.txt found");

    /* post-change contents: blobs at v2; none for binary or deleted */
    const char *text;
    size_t len;
    char *want = git_out("git show v2:%s", "c.txt");
    T_EQ_INT(agt_diff_content(d, "c.txt", &text, &len), AGT_OK, "v2: c.txt content attached");
    T_CHECK(want && len == strlen(want) && memcmp(text, want, len) == 0,
            "v2: c.txt content is the blob at v2");
    free(want);
    T_EQ_INT(agt_diff_content(d, "noeol.txt", &text, &len), AGT_OK, "v2: noeol content");
    T_CHECK(len == 13 && memcmp(text, "one\ntwo\nTHREE", 13) == 0, "v2: noeol bytes exact");
    T_EQ_INT(agt_diff_content(d, "link.txt", &text, &len), AGT_OK, "v2: symlink content");
    T_EQ_STR(text, "a.txt", "v2: symlink content is its target");
    T_EQ_INT(agt_diff_content(d, "bin.dat", &text, &len), AGT_ENOTFOUND,
             "v2: no content for a binary file");
    T_EQ_INT(agt_diff_content(d, "del.txt", &text, &len), AGT_ENOTFOUND,
             "v2: no content for a deleted file");

    /* anchoring reaches lines outside the hunks through the content */
    char *aj = NULL;
    T_EQ_INT(agt_diff_anchor(d, "a.txt", "alpha 20\nalpha 21", &aj), AGT_OK, "v2: anchor");
    json_t *a = json_loads(aj ? aj : "{}", 0, NULL);
    T_EQ_STR(json_string_value(json_object_get(a, "method")), "file", "v2: anchored by file");
    T_EQ_INT(json_integer_value(json_object_get(a, "start_line")), 20, "v2: anchor start");
    T_EQ_INT(json_integer_value(json_object_get(a, "end_line")), 21, "v2: anchor end");
    json_decref(a);
    agt_free(aj);

    /* info */
    char *info = NULL;
    T_EQ_INT(agt_changes_info(c, &info), AGT_OK, "v2: info");
    json_t *ij = json_loads(info ? info : "{}", 0, NULL);
    char *v2 = git_out("git rev-parse %s", "v2^{commit}");
    char *v1 = git_out("git rev-parse %s", "v1^{commit}");
    chomp(v2);
    chomp(v1);
    T_EQ_STR(json_string_value(json_object_get(ij, "mode")), "commit", "v2: info mode");
    T_EQ_STR(json_string_value(json_object_get(ij, "source")), "commit", "v2: info source");
    T_EQ_STR(json_string_value(json_object_get(ij, "target")), v2, "v2: info target");
    T_EQ_STR(json_string_value(json_object_get(ij, "base")), v1, "v2: info base");
    T_EQ_INT(json_integer_value(json_object_get(ij, "files")), agt_diff_file_count(d),
             "v2: info file count");
    json_decref(ij);
    agt_free(info);
    agt_changes_free(c);

    /* root commit: no base */
    c = open_changes("v1 info", AGT_CHANGES_COMMIT, "v1", NULL);
    if (c) {
        info = NULL;
        agt_changes_info(c, &info);
        ij = json_loads(info ? info : "{}", 0, NULL);
        T_CHECK(json_is_null(json_object_get(ij, "base")), "root: info base is null");
        T_EQ_STR(json_string_value(json_object_get(ij, "target")), v1, "root: info target");
        json_decref(ij);
        agt_free(info);
        agt_changes_free(c);
    }
    free(v1);
    free(v2);

    /* the tree at the target of a range: listing and reading */
    c = open_changes("feature tree", AGT_CHANGES_RANGE, "main^1", "feature");
    if (!c)
        return;
    char *lj = NULL;
    T_EQ_INT(agt_changes_list_files(c, &lj), AGT_OK, "range: list files");
    char *got = lj ? lines_of(lj) : NULL;
    char *exp = git_out("git ls-tree -r --name-only %s", "feature");
    T_EQ_STR(got, exp, "range: list = git ls-tree -r --name-only feature");
    free(got);
    free(exp);
    agt_free(lj);
    check_read(c, "range", "a.txt", "git show feature:%s");
    check_read(c, "range", "noeol.txt", "git show feature:%s"); /* not in the diff */
    check_read(c, "range", "src/util.c", "git show feature:%s");
    check_read(c, "range", "./f.txt", "git show feature:%s");
    check_not_in_tree(c, "range", "src");
    check_not_in_tree(c, "range", "missing.txt");
    check_not_in_tree(c, "range", "../repo/a.txt");
    check_not_in_tree(c, "range", "src//util.c");
    agt_changes_free(c);
}

static void test_workspace(void)
{
    /* unstaged edit; staged edit plus a further unstaged one; a staged
     * rename with an unstaged edit; a deletion from the working tree; a
     * staged new file; an unstaged mode change; untracked (text, binary,
     * empty, in a new directory) and ignored files */
    char *a = git_out("git show HEAD:%s", "a.txt");
    char *a2 = replace_line(a, 10, "alpha TEN (worktree)");
    gf_puts(repo, "a.txt", a2);
    char *u = git_out("git show HEAD:%s", "src/util.c");
    char *u2 = replace_line(u, 1, "#include <stdlib.h>");
    gf_puts(repo, "src/util.c", u2);
    gf_sh(repo, GIT "add src/util.c");
    char *u3 = replace_line(u2, 12, "    return r + 0;");
    gf_puts(repo, "src/util.c", u3);
    gf_sh(repo, GIT "mv c.txt d.txt");
    char *cc = git_out("git show HEAD:%s", "c.txt");
    char *d2 = replace_line(cc, 1, "bravo ONE");
    gf_puts(repo, "d.txt", d2);
    gf_sh(repo, "rm new.txt");
    gf_puts(repo, "s.txt", "staged\nnew\nfile\n");
    gf_sh(repo, GIT "add s.txt");
    gf_sh(repo, "chmod -x script.sh");
    gf_puts(repo, "u.txt", "untracked\ntext\n");
    gf_puts(repo, "newdir/x.txt", "in a new directory\n");
    static const char ub[] = "\0\0untracked binary\0";
    gf_write(repo, "ub.bin", ub, sizeof(ub));
    gf_puts(repo, "empty.txt", "");
    gf_puts(repo, "x.log", "ignored\n");
    gf_puts(repo, "build/out.txt", "ignored too\n");

    gf_set *s = calloc(1, sizeof(*s));
    gf_cli(s, repo, "diff -M", "HEAD");
    gf_cli_untracked(s, repo);
    T_EQ_INT(s->n, 10, "workspace: git reports 6 tracked + 4 untracked changes");
    agt_changes *c = open_changes("workspace", AGT_CHANGES_WORKSPACE, NULL, NULL);
    if (!c) {
        free(s);
        return;
    }
    agt_diff *d = agt_changes_diff(c);
    gf_compare("workspace", d, s);
    free(s);
    size_t ix;
    T_EQ_INT(agt_diff_file_index(d, "x.log", &ix), AGT_ENOTFOUND, "workspace: ignored file out");
    T_EQ_INT(agt_diff_file_index(d, "build/out.txt", &ix), AGT_ENOTFOUND,
             "workspace: ignored directory out");

    /* contents come from the working tree */
    const char *text;
    size_t len;
    T_EQ_INT(agt_diff_content(d, "a.txt", &text, &len), AGT_OK, "workspace: a.txt content");
    T_CHECK(len == strlen(a2) && memcmp(text, a2, len) == 0, "workspace: a.txt = working file");
    T_EQ_INT(agt_diff_content(d, "src/util.c", &text, &len), AGT_OK, "workspace: util.c content");
    T_CHECK(len == strlen(u3) && memcmp(text, u3, len) == 0,
            "workspace: util.c content is the working file, not the index");
    T_EQ_INT(agt_diff_content(d, "u.txt", &text, &len), AGT_OK, "workspace: untracked content");
    T_EQ_STR(text, "untracked\ntext\n", "workspace: untracked bytes");
    T_EQ_INT(agt_diff_content(d, "ub.bin", &text, &len), AGT_ENOTFOUND,
             "workspace: no content for untracked binary");
    T_EQ_INT(agt_diff_content(d, "new.txt", &text, &len), AGT_ENOTFOUND,
             "workspace: no content for a deleted file");

    char *info = NULL;
    agt_changes_info(c, &info);
    json_t *ij = json_loads(info ? info : "{}", 0, NULL);
    char *head = git_out("git rev-parse %s", "HEAD");
    chomp(head);
    char real[PATH_MAX], wd[PATH_MAX + 2];
    if (!realpath(repo, real))
        snprintf(real, sizeof(real), "%s", repo);
    snprintf(wd, sizeof(wd), "%s/", real);
    T_EQ_STR(json_string_value(json_object_get(ij, "source")), "worktree",
             "workspace: source worktree");
    T_EQ_STR(json_string_value(json_object_get(ij, "mode")), "workspace", "workspace: mode");
    T_EQ_STR(json_string_value(json_object_get(ij, "base")), head, "workspace: base is HEAD");
    T_CHECK(json_is_null(json_object_get(ij, "target")), "workspace: no target");
    T_EQ_STR(json_string_value(json_object_get(ij, "workdir")), wd, "workspace: workdir");
    json_decref(ij);
    agt_free(info);

    /* listing: tracked and present, plus untracked non-ignored */
    char *lj = NULL;
    T_EQ_INT(agt_changes_list_files(c, &lj), AGT_OK, "workspace: list files");
    char *got = lj ? lines_of(lj) : NULL;
    char *exp = git_out("git ls-files --deleted > ../deleted.lst && git ls-files --cached "
                        "--others --exclude-standard | grep -vxF -f ../deleted.lst | sort -u%s",
                        "");
    T_EQ_STR(got, exp, "workspace: list = ls-files --cached --others minus --deleted");
    T_CHECK(got && strstr(got, "new.txt") == NULL, "workspace: deleted file not listed");
    free(got);
    free(exp);
    agt_free(lj);

    check_read(c, "workspace", "a.txt", "cat %s");
    check_read(c, "workspace", "u.txt", "cat %s");
    check_read(c, "workspace", "newdir/x.txt", "cat %s");
    check_read(c, "workspace", "noeol.txt", "cat %s"); /* unchanged */
    char abs[PATH_MAX + 16];
    snprintf(abs, sizeof(abs), "%ssrc/util.c", wd);
    char *rb = NULL;
    size_t rl = 0;
    T_EQ_INT(agt_changes_read_file(c, abs, &rb, &rl), AGT_OK, "workspace: absolute path reads");
    T_CHECK(rb && rl == strlen(u3) && memcmp(rb, u3, rl) == 0, "workspace: absolute path bytes");
    agt_free(rb);
    rb = NULL;
    T_EQ_INT(agt_changes_read_file(c, "link.txt", &rb, &rl), AGT_OK, "workspace: read symlink");
    T_EQ_STR(rb, "a.txt", "workspace: a symlink reads as its target");
    agt_free(rb);
    check_not_in_tree(c, "workspace", "x.log");
    check_not_in_tree(c, "workspace", "build/out.txt");
    check_not_in_tree(c, "workspace", "new.txt");
    check_not_in_tree(c, "workspace", "../deleted.lst");
    check_not_in_tree(c, "workspace", "/etc/passwd");
    check_not_in_tree(c, "workspace", "newdir");
    T_EQ_INT(agt_changes_read_file(c, "", &rb, NULL), AGT_EINVAL, "workspace: empty path");
    agt_changes_free(c);

    free(head);
    free(a);
    free(a2);
    free(u);
    free(u2);
    free(u3);
    free(cc);
    free(d2);
}

/*
 * A `git clone --depth 1` (file:// so that git really makes it shallow) has
 * HEAD without its parent: commit mode cannot diff, and must say how to
 * fetch the parent instead of libgit2's bare "object not found"; the same
 * after `git fetch --deepen=1` works and agrees with git show.
 */
static void test_shallow(void)
{
    char shallow[700];
    snprintf(shallow, sizeof(shallow), "%s/shallow", gf_root);
    T_EQ_INT(gf_sh(gf_root, GIT "clone -q --depth 1 'file://%s' shallow", repo), 0,
             "shallow: git clone --depth 1");
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, shallow, AGT_CHANGES_COMMIT, "HEAD", NULL);
    T_EQ_INT(rc, AGT_ENOTFOUND, "shallow: commit mode on a shallow HEAD is AGT_ENOTFOUND");
    const char *msg = agt_error_message();
    char *parent = git_out(GIT "rev-parse %s", "HEAD^");
    chomp(parent);
    T_CHECK(strstr(msg, "cannot read the first parent of 'HEAD'") != NULL &&
                strstr(msg, "shallow clone") != NULL && strstr(msg, parent) != NULL &&
                strstr(msg, "git fetch --deepen=1") != NULL &&
                strstr(msg, "fetch-depth: 0") != NULL,
            "shallow: the message names the parent %s and the fixes (got: %s)", parent, msg);
    agt_changes_free(c);
    c = NULL;
    rc = agt_changes_open(&c, shallow, AGT_CHANGES_RANGE, "HEAD~1", "HEAD");
    T_EQ_INT(rc, AGT_ENOTFOUND, "shallow: HEAD~1 does not resolve either");
    agt_changes_free(c);
    c = NULL;
    T_EQ_INT(gf_sh(shallow, GIT "fetch -q --deepen=1"), 0, "shallow: git fetch --deepen=1");
    rc = agt_changes_open(&c, shallow, AGT_CHANGES_COMMIT, "HEAD", NULL);
    T_EQ_INT(rc, AGT_OK, "shallow: after --deepen=1 commit mode opens");
    if (rc == AGT_OK) {
        size_t len = 0;
        char *want = gf_out(&len, repo, GIT "diff --name-only HEAD^ HEAD | wc -l");
        T_EQ_INT((long)agt_diff_file_count(agt_changes_diff(c)), strtol(want, NULL, 10),
                 "shallow: after --deepen=1 as many files as git diff HEAD^ HEAD");
        free(want);
    }
    agt_changes_free(c);
    free(parent);
}

int main(void)
{
    if (gf_setup() != 0) {
        printf("Bail out! cannot create a temp dir\n");
        return 1;
    }
    build_history();
    test_ranges_and_commits();
    test_workspace();
    test_shallow();
    gf_teardown();
    return t_done();
}
