/*
 * Workspace mode's choice of sides (working tree, or the index when the
 * working tree is clean), an unborn HEAD, an empty change, git's similarity
 * index, and the errors: a path that is not a repository, revisions that do
 * not resolve or do not fit the mode, ranges without a merge base, bad
 * arguments. Expected change sets come from the git CLI.
 */
#include "agenttools/diff.h"
#include "git/git_internal.h"
#include "gitfix.h"

static char dir[600];

static void new_repo(const char *name)
{
    snprintf(dir, sizeof(dir), "%s/%s", gf_root, name);
    mkdir(dir, 0755);
    gf_sh(dir, GIT "init -q");
}

static json_t *info_of(agt_changes *c)
{
    char *s = NULL;
    if (agt_changes_info(c, &s) != AGT_OK)
        return NULL;
    json_t *j = json_loads(s, 0, NULL);
    agt_free(s);
    return j;
}

static const char *info_str(json_t *j, const char *k)
{
    return json_string_value(json_object_get(j, k));
}

/* Opens workspace mode; checks the source and compares with the CLI. */
static void check_workspace(const char *label, const char *want_source, const char *cli,
                            const char *args, bool untracked)
{
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL);
    T_EQ_INT(rc, AGT_OK, "%s: open", label);
    if (rc != AGT_OK) {
        t_diag("%s", agt_error_message());
        return;
    }
    json_t *j = info_of(c);
    T_EQ_STR(info_str(j, "source"), want_source, "%s: source", label);
    json_decref(j);
    gf_set *s = calloc(1, sizeof(*s));
    if (cli)
        gf_cli(s, dir, cli, args);
    if (untracked)
        gf_cli_untracked(s, dir);
    gf_compare(label, agt_changes_diff(c), s);
    free(s);
    agt_changes_free(c);
}

static void test_index_when_clean(void)
{
    new_repo("staged");
    char *l = gf_lines("line", 12);
    gf_puts(dir, "a.txt", l);
    gf_puts(dir, "b.txt", "bee\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one");
    /* clean tree, clean index: nothing to review */
    check_workspace("clean", "index", NULL, NULL, false);
    agt_diff *d = NULL;
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_OK,
             "clean: from_repo");
    T_EQ_INT(agt_diff_file_count(d), 0, "clean: empty change set");
    agt_diff_free(d);

    /* staged-only changes with a clean tree: the index is reviewed */
    gf_puts(dir, "a.txt", "line 1\nline 2\nSTAGED\nline 4\n");
    gf_puts(dir, "c.txt", "new staged file\n");
    gf_sh(dir, GIT "add a.txt c.txt && " GIT "rm -q b.txt");
    check_workspace("staged only", "index", "diff -M --cached", "", false);
    agt_changes *c = NULL;
    if (agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL) == AGT_OK) {
        const char *text;
        size_t len;
        T_EQ_INT(agt_diff_content(agt_changes_diff(c), "a.txt", &text, &len), AGT_OK,
                 "staged only: content attached");
        T_EQ_STR(text, "line 1\nline 2\nSTAGED\nline 4\n", "staged only: content is the index's");
        char *lj = NULL;
        agt_changes_list_files(c, &lj);
        T_EQ_STR(lj, "[\"a.txt\",\"c.txt\"]", "staged only: list is the index");
        agt_free(lj);
        char *rb = NULL;
        T_EQ_INT(agt_changes_read_file(c, "c.txt", &rb, NULL), AGT_OK, "staged only: read");
        T_EQ_STR(rb, "new staged file\n", "staged only: read from the index");
        agt_free(rb);
        rb = NULL;
        T_EQ_INT(agt_changes_read_file(c, "b.txt", &rb, NULL), AGT_ENOTFOUND,
                 "staged only: removed file is not in the tree");
        agt_changes_free(c);
    }

    /* an untracked file makes the tree unclean: HEAD against the working tree */
    gf_puts(dir, "u.txt", "untracked\n");
    check_workspace("staged + untracked", "worktree", "diff -M", "HEAD", true);
    /* an ignored one does not */
    gf_sh(dir, "rm u.txt && echo '*.tmp' > .git/info/exclude && echo x > junk.tmp");
    check_workspace("staged + ignored", "index", "diff -M --cached", "", false);
    /* an unstaged edit on top of a staged one: the working tree */
    gf_puts(dir, "a.txt", "line 1\nline 2\nSTAGED\nline 4\nUNSTAGED\n");
    check_workspace("staged + unstaged", "worktree", "diff -M", "HEAD", true);
    free(l);
}

/* The index's cache tree shows it holds HEAD's tree: the diff of HEAD
 * against the index is skipped (open.c). Where the cache tree is valid
 * for another tree (a soft reset moves HEAD, the index and its cache tree
 * stay) the staged changes must still show. */
static void test_cache_tree_shortcut(void)
{
    new_repo("cachetree");
    gf_puts(dir, "a.txt", "one\n");
    gf_puts(dir, "sub/b.txt", "bee\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one");
    size_t hits = agti_git_index_head_hits();
    check_workspace("cache tree: clean", "index", NULL, NULL, false);
    T_EQ_INT((long long)(agti_git_index_head_hits() - hits), 1, "cache tree: clean: shortcut");
    gf_puts(dir, "a.txt", "two\n");
    gf_puts(dir, "u.txt", "untracked\n");
    hits = agti_git_index_head_hits();
    check_workspace("cache tree: unstaged", "worktree", "diff -M", "HEAD", true);
    T_EQ_INT((long long)(agti_git_index_head_hits() - hits), 1, "cache tree: unstaged: shortcut");
    gf_sh(dir, "rm u.txt && " GIT "commit -q -am two && " GIT "reset -q --soft HEAD~1");
    hits = agti_git_index_head_hits();
    check_workspace("cache tree: soft reset", "index", "diff -M --cached", "", false);
    T_EQ_INT((long long)(agti_git_index_head_hits() - hits), 0,
             "cache tree: soft reset: the cache tree is another tree's, no shortcut");
    gf_puts(dir, "sub/b.txt", "changed\n");
    check_workspace("cache tree: soft reset + unstaged", "worktree", "diff -M", "HEAD", true);
    gf_sh(dir, GIT "add sub/b.txt");
    hits = agti_git_index_head_hits();
    check_workspace("cache tree: staged", "index", "diff -M --cached", "", false);
    T_EQ_INT((long long)(agti_git_index_head_hits() - hits), 0, "cache tree: staged: no shortcut");
}

static void test_unborn(void)
{
    new_repo("unborn");
    agt_diff *d = NULL;
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_OK,
             "unborn empty: ok");
    T_EQ_INT(agt_diff_file_count(d), 0, "unborn empty: no files");
    agt_diff_free(d);
    d = NULL;

    gf_puts(dir, "a.txt", "first\nfile\n");
    gf_puts(dir, "sub/b.txt", "second\n");
    gf_sh(dir, GIT "add a.txt sub/b.txt");
    check_workspace("unborn staged", "index", "diff --cached", "", false);
    gf_puts(dir, "u.txt", "untracked\n");
    /* `git diff HEAD` needs a HEAD: the staged files against the empty tree
     * (unchanged since staged) plus the untracked one */
    check_workspace("unborn staged + untracked", "worktree", "diff --cached", "", true);
    agt_changes *c = NULL;
    if (agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL) == AGT_OK) {
        json_t *j = info_of(c);
        T_CHECK(json_is_null(json_object_get(j, "base")), "unborn: base is null");
        json_decref(j);
        char *lj = NULL;
        agt_changes_list_files(c, &lj);
        T_EQ_STR(lj, "[\"a.txt\",\"sub/b.txt\",\"u.txt\"]", "unborn: list");
        agt_free(lj);
        agt_changes_free(c);
    }
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, NULL, NULL), AGT_ENOTFOUND,
             "unborn: commit mode has no HEAD");
    T_CHECK(strstr(agt_error_message(), "'HEAD'") != NULL, "unborn: error names HEAD: %s",
            agt_error_message());
}

static void test_errors(void)
{
    agt_diff *d = NULL;
    char nonrepo[700];
    snprintf(nonrepo, sizeof(nonrepo), "%s/plain", gf_root);
    mkdir(nonrepo, 0755);
    T_EQ_INT(agt_diff_from_repo(&d, nonrepo, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_ENOTFOUND,
             "not a repository");
    T_CHECK(strstr(agt_error_message(), nonrepo) != NULL, "error names the path: %s",
            agt_error_message());
    T_CHECK(d == NULL, "no change set on error");
    char missing[700];
    snprintf(missing, sizeof(missing), "%s/does/not/exist", gf_root);
    T_EQ_INT(agt_diff_from_repo(&d, missing, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_ENOTFOUND,
             "missing directory");
    T_CHECK(strstr(agt_error_message(), missing) != NULL, "error names the missing path");

    new_repo("errors");
    gf_puts(dir, "a.txt", "a\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one");
    gf_puts(dir, "a.txt", "a\nb\n");
    gf_sh(dir, GIT "commit -q -a -m two");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, "no-such-branch", NULL), AGT_ENOTFOUND,
             "bad revision");
    T_CHECK(strstr(agt_error_message(), "'no-such-branch'") != NULL, "error names the revision: %s",
            agt_error_message());
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_RANGE, "HEAD~1", "nope~3"), AGT_ENOTFOUND,
             "bad range end");
    T_CHECK(strstr(agt_error_message(), "'nope~3'") != NULL, "error names the range end: %s",
            agt_error_message());
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, "HEAD~5", NULL), AGT_ENOTFOUND,
             "revision beyond the root");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, "HEAD:a.txt", NULL), AGT_ENOTFOUND,
             "a blob is not a commit");
    T_CHECK(strstr(agt_error_message(), "'HEAD:a.txt'") != NULL, "error names the blob spec: %s",
            agt_error_message());
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_WORKSPACE, "HEAD", NULL), AGT_EINVAL,
             "workspace takes no revision");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_RANGE, NULL, "HEAD"), AGT_EINVAL,
             "range needs from");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, "HEAD", "HEAD~1"), AGT_EINVAL,
             "commit takes one revision");
    T_EQ_INT(agt_diff_from_repo(&d, dir, 7, NULL, NULL), AGT_EINVAL, "unknown mode");
    T_CHECK(strstr(agt_error_message(), "7") != NULL, "error names the mode");
    T_EQ_INT(agt_diff_from_repo(NULL, dir, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_EINVAL,
             "NULL out");
    T_EQ_INT(agt_diff_from_repo(&d, NULL, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_EINVAL,
             "NULL repo path");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_WORKSPACE, "", ""), AGT_OK,
             "empty revisions count as none");
    agt_diff_free(d);
    d = NULL;
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_COMMIT, "HEAD", ""), AGT_OK,
             "commit: empty to counts as none");
    T_EQ_INT(agt_diff_file_count(d), 1, "commit HEAD: one file");
    agt_diff_free(d);
    d = NULL;

    /* unrelated histories: no merge base */
    gf_sh(dir, GIT "checkout -q --orphan other && " GIT "rm -q -rf . && echo o > o.txt && " GIT
                   "add o.txt && " GIT "commit -q -m orphan");
    T_EQ_INT(agt_diff_from_repo(&d, dir, AGT_CHANGES_RANGE, "main", "other"), AGT_ENOTFOUND,
             "no merge base");
    T_CHECK(strstr(agt_error_message(), "merge base") != NULL &&
                strstr(agt_error_message(), "'main'") != NULL,
            "error says no merge base of 'main': %s", agt_error_message());

    /* a subdirectory opens the enclosing repository */
    gf_puts(dir, "sub/s.txt", "s\n");
    char sub[700];
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    T_EQ_INT(agt_diff_from_repo(&d, sub, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_OK,
             "subdirectory opens the repository");
    T_EQ_STR(agt_diff_file_path(d, 0), "sub/s.txt", "paths are relative to the top");
    agt_diff_free(d);
    d = NULL;

    /* a bare repository has no working tree */
    char bare[700];
    snprintf(bare, sizeof(bare), "%s/bare.git", gf_root);
    gf_sh(gf_root, GIT "clone -q --bare '%s' '%s'", dir, bare);
    T_EQ_INT(agt_diff_from_repo(&d, bare, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_EGIT,
             "bare: no workspace mode");
    T_EQ_INT(agt_diff_from_repo(&d, bare, AGT_CHANGES_COMMIT, "main", NULL), AGT_OK,
             "bare: commit mode works");
    T_EQ_INT(agt_diff_file_count(d), 1, "bare: main's commit has one file");
    agt_diff_free(d);

    /* NULL-safety of the handle functions */
    agt_changes_free(NULL);
    T_CHECK(agt_changes_diff(NULL) == NULL, "diff of NULL");
    char *s = NULL;
    T_EQ_INT(agt_changes_info(NULL, &s), AGT_EINVAL, "info NULL");
    T_EQ_INT(agt_changes_list_files(NULL, &s), AGT_EINVAL, "list NULL");
    T_EQ_INT(agt_changes_read_file(NULL, "a", &s, NULL), AGT_EINVAL, "read NULL");
}

/* git's similarity index on known inputs, worked out with `git diff -M`. */
static void test_similarity(void)
{
    struct {
        const char *name, *before, *after;
    } cases[] = {
        {"one line of ten", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
         "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"},
        {"crlf", "aa\r\nbb\r\ncc\r\ndd\r\n", "aa\r\nbb\r\ncc\r\nDD\r\n"},
        {"long lines",
         "0123456789012345678901234567890123456789012345678901234567890123456789\n"
         "x\ny\n",
         "0123456789012345678901234567890123456789012345678901234567890123456789\nx\nz\n"},
        {"appended", "alpha\nbeta\ngamma\n", "alpha\nbeta\ngamma\ndelta\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char name[32];
        snprintf(name, sizeof(name), "similar%zu", i);
        new_repo(name);
        gf_puts(dir, "src.txt", cases[i].before);
        gf_sh(dir, GIT "add -A && " GIT "commit -q -m base && " GIT "mv src.txt dst.txt");
        gf_puts(dir, "dst.txt", cases[i].after);
        gf_sh(dir, GIT "add -A");
        size_t len;
        char *out = gf_out(&len, dir, GIT "diff --cached -M --name-status");
        int want = out && out[0] == 'R' ? atoi(out + 1) : -1;
        free(out);
        int got = agti_git_similarity(cases[i].before, strlen(cases[i].before), cases[i].after,
                                      strlen(cases[i].after), true);
        if (want >= 0)
            T_EQ_INT(got, want, "similarity: %s", cases[i].name);
        else
            T_CHECK(got < 50, "similarity: %s below git's threshold (%d)", cases[i].name, got);
        /* and through the change set (the index is reviewed) */
        agt_diff *d = NULL;
        if (want >= 0 && agt_diff_from_repo(&d, dir, AGT_CHANGES_WORKSPACE, NULL, NULL) == AGT_OK) {
            char *j = NULL;
            agt_diff_to_json(d, &j);
            char key[32];
            snprintf(key, sizeof(key), "\"similarity\":%d", want);
            T_CHECK(j && strstr(j, key), "similarity in the change set: %s", cases[i].name);
            agt_free(j);
            agt_diff_free(d);
        }
    }
}

/* The 8 MiB cap on attached contents; symbolic links are not followed. */
static void test_limits(void)
{
    new_repo("limits");
    size_t big = ((size_t)9 << 20) + 5;
    char *b = malloc(big);
    for (size_t i = 0; i < big; i++)
        b[i] = (i % 64 == 63) ? '\n' : (char)('a' + (char)(i % 26));
    gf_write(dir, "big.txt", b, big);
    gf_puts(dir, "small.txt", "small\n");
    gf_sh(dir, "ln -s /etc/passwd outside");
    agt_changes *c = NULL;
    T_EQ_INT(agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_OK, "limits: open");
    if (c) {
        agt_diff *d = agt_changes_diff(c);
        const char *text;
        size_t len;
        T_EQ_INT(agt_diff_content(d, "big.txt", &text, &len), AGT_ENOTFOUND,
                 "limits: 9 MiB content not attached");
        T_EQ_INT(agt_diff_content(d, "small.txt", &text, &len), AGT_OK,
                 "limits: small content attached");
        json_t *j = gf_json(d);
        json_t *w = json_object_get(j, "warnings");
        T_EQ_INT(json_array_size(w), 1, "limits: one warning");
        const char *w0 = json_string_value(json_array_get(w, 0));
        T_CHECK(w0 && strstr(w0, "big.txt") && strstr(w0, "9437189 bytes"),
                "limits: warning names the file and its size: %s", w0 ? w0 : "(none)");
        T_CHECK(json_is_false(json_object_get(j, "best_effort")), "limits: not best effort");
        json_decref(j);
        char *rb = NULL;
        T_EQ_INT(agt_changes_read_file(c, "big.txt", &rb, &len), AGT_OK,
                 "limits: read_file reads 9 MiB");
        T_CHECK(rb && len == big && memcmp(rb, b, big) == 0, "limits: read bytes exact");
        agt_free(rb);
        rb = NULL;
        T_EQ_INT(agt_changes_read_file(c, "outside", &rb, &len), AGT_OK, "limits: read a symlink");
        T_EQ_STR(rb, "/etc/passwd", "limits: the link's target, not the file behind it");
        agt_free(rb);
        T_EQ_INT(agt_diff_content(d, "outside", &text, &len), AGT_OK, "limits: symlink content");
        T_EQ_STR(text, "/etc/passwd", "limits: symlink content is the target");
        agt_changes_free(c);
    }
    free(b);
}

/* Indexes that newer git writes and libgit2 1.5 cannot read: the open
 * fails, its message names the kind and the git command that rewrites the
 * index, and after that command the change set opens and is git's. */
static void refused_then_fixed(const char *label, const char *kind, const char *fix)
{
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, dir, AGT_CHANGES_WORKSPACE, NULL, NULL);
    T_EQ_INT(rc, AGT_EGIT, "%s: refused", label);
    if (rc == AGT_OK) {
        agt_changes_free(c);
        return;
    }
    const char *m = agt_error_message();
    T_CHECK(strstr(m, "cannot read the index of") != NULL && strstr(m, kind) != NULL &&
                strstr(m, fix) != NULL,
            "%s: the message names the kind and the fix (%s)", label, m);
    T_EQ_INT(gf_sh(dir, "%s", fix), 0, "%s: the fix runs", label);
}

static void test_unreadable_indexes(void)
{
    new_repo("splitidx");
    gf_split_index(dir);
    refused_then_fixed("split index", "the index is split", "git update-index --no-split-index");
    check_workspace("split index, made whole", "index", "diff -M --cached", "", false);

    new_repo("sparseidx");
    gf_puts(dir, "a.txt", "one\n");
    gf_puts(dir, "dir/c.txt", "sea\n");
    gf_puts(dir, "out/d.txt", "dee\n");
    gf_sh(dir,
          GIT "add -A && " GIT "commit -q -m one && " GIT
              "sparse-checkout init --cone --sparse-index && " GIT "sparse-checkout set dir && "
              "echo more >> dir/c.txt");
    refused_then_fixed("sparse index", "the index is sparse",
                       "git sparse-checkout init --no-sparse-index");
    check_workspace("sparse index, made full", "worktree", "diff -M", "HEAD", true);

    /* git never compares a skip-worktree entry with the working tree:
     * gone, or a FIFO in its place, it is not deleted (libgit2 said so) */
    new_repo("skipwt");
    gf_puts(dir, "a.txt", "one\n");
    gf_puts(dir, "b.txt", "bee\n");
    gf_puts(dir, "c.txt", "sea\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one && " GIT
                   "update-index --skip-worktree b.txt c.txt && rm b.txt c.txt && mkfifo c.txt && "
                   "echo two >> a.txt");
    check_workspace("skip-worktree, gone or a FIFO", "worktree", "diff -M", "HEAD", true);

    /* index.skipHash: git 2.40 and later leave the checksum as zeros;
     * this git may be older, so the zeros are written by hand */
    new_repo("skiphash");
    gf_puts(dir, "a.txt", "one\n");
    gf_sh(dir, GIT "add -A && " GIT "commit -q -m one && echo two > a.txt && " GIT "add a.txt && "
                   "s=$(stat -c %%s .git/index) && "
                   "dd if=/dev/zero of=.git/index bs=1 count=20 seek=$((s - 20)) conv=notrunc "
                   "status=none");
    refused_then_fixed("skipHash", "the index has no checksum",
                       "git config index.skipHash false && git update-index --force-write-index");
    check_workspace("skipHash, rewritten", "index", "diff -M --cached", "", false);
}

int main(void)
{
    if (gf_setup() != 0) {
        printf("Bail out! cannot create a temp dir\n");
        return 1;
    }
    test_index_when_clean();
    test_cache_tree_shortcut();
    test_unborn();
    test_errors();
    test_similarity();
    test_limits();
    test_unreadable_indexes();
    gf_teardown();
    return t_done();
}
