/*
 * The search readers of a change set (lib/git/reader.c): blobs of the
 * reviewed tree read by file number, and the working-tree shortcut taken
 * only when the file on disk is known to hold the blob's bytes. Each case
 * checks the exact bytes (what was committed, written out here) and whether
 * the file came from disk, for the clean case and for every fall-back:
 * modified file, racily clean entry, CRLF attribute, filter driver,
 * working-tree-encoding, core.autocrlf, a different commit, symlink,
 * assume-unchanged, an index rewritten between searches, and a bare
 * repository.
 */
#include <time.h>

#include "git/git_internal.h"
#include "gitfix.h"

static char repo[600];

static agt_changes *open_commit(const char *dir, const char *rev)
{
    agt_changes *c = NULL;
    int rc = agt_changes_open(&c, dir, AGT_CHANGES_COMMIT, rev, NULL);
    T_EQ_INT(rc, AGT_OK, "open commit mode");
    if (rc != AGT_OK)
        t_diag("%s", agt_error_message());
    return c;
}

/* Reads path through reader 0 (after a prepare); returns the bytes, or NULL
 * with *rc set when the read failed. */
static char *read_path(agt_changes *c, const char *path, bool *from_disk, int *rc)
{
    *rc = agti_changes_readers_prepare(c, 2);
    if (*rc != AGT_OK)
        return NULL;
    const char *const *paths = NULL;
    size_t n = 0;
    agti_changes_files(c, &paths, &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(paths[i], path) != 0)
            continue;
        agti_read rd;
        *rc = agti_changes_read_nth(c, 1, i, AGTI_GIT_READ_MAX, &rd);
        if (*rc != AGT_OK)
            return NULL;
        char *s = malloc(rd.len + 1);
        memcpy(s, rd.data, rd.len);
        s[rd.len] = '\0';
        *from_disk = rd.from_disk;
        agti_read_release(&rd);
        return s;
    }
    *rc = AGT_ENOTFOUND;
    return NULL;
}

static void expect(agt_changes *c, const char *path, const char *want, bool want_disk,
                   const char *label)
{
    bool disk = !want_disk;
    int rc = AGT_OK;
    char *got = read_path(c, path, &disk, &rc);
    T_EQ_INT(rc, AGT_OK, "%s", label);
    T_EQ_STR(got, want, "%s", label);
    T_CHECK(disk == want_disk, "%s: %s", label,
            want_disk ? "read from the working tree" : "read from the blob");
    free(got);
}

static void init_repo(const char *name)
{
    snprintf(repo, sizeof(repo), "%s/%s", gf_root, name);
    mkdir(repo, 0755);
    gf_sh(repo, GIT "init -q");
}

static void commit_all(const char *msg)
{
    gf_sh(repo, GIT "add -A && " GIT "commit -q -m '%s'", msg);
}

/* Backdates the working-tree files (those not backdated yet: touching one
 * again changes its ctime) and refreshes the index, so no entry is racily
 * clean (a file written in the same clock tick as the index is) and the
 * cases below do not depend on the machine's speed. */
static void settle(void)
{
    gf_sh(repo, "find . -path ./.git -prune -o -type f -newermt 2020-01-02 -exec touch -m -d "
                "2020-01-01T00:00:00 {} + && git update-index -q --refresh");
}

/* Opens workspace mode on repo and checks which side it reviews
 * ("index" for a clean working tree, "worktree" otherwise). */
static agt_changes *open_workspace(const char *label, const char *source)
{
    agt_changes *c = NULL;
    T_EQ_INT(agt_changes_open(&c, repo, AGT_CHANGES_WORKSPACE, NULL, NULL), AGT_OK,
             "%s: open workspace mode", label);
    char *info = NULL;
    char want[64];
    snprintf(want, sizeof want, "\"source\":\"%s\"", source);
    if (c != NULL)
        agt_changes_info(c, &info);
    T_CHECK(info != NULL && strstr(info, want) != NULL, "%s: reviews the %s", label, source);
    agt_free(info);
    return c;
}

static void test_clean_and_modified(void)
{
    init_repo("plain");
    gf_puts(repo, "a.c", "int a = 1;\n");
    gf_puts(repo, "src/b.h", "#define B 2\n");
    gf_puts(repo, "same.txt", "old text\n");
    gf_puts(repo, "c.c", "int c = 1;\n");
    gf_puts(repo, "d.h", "#define D 4\n");
    commit_all("one");
    settle();
    /* same size, other bytes, newer mtime */
    gf_puts(repo, "same.txt", "new text\n");
    agt_changes *c = open_commit(repo, "HEAD");
    expect(c, "a.c", "int a = 1;\n", true, "clean file: read from disk");
    expect(c, "src/b.h", "#define B 2\n", true, "clean file in a folder: read from disk");
    expect(c, "same.txt", "old text\n", false, "modified file (same size): the blob");

    /* a file read once is kept: edited afterwards, it still reads as the
     * blob (from the cache, not from disk) */
    gf_puts(repo, "a.c", "int a = 9;\n");
    expect(c, "a.c", "int a = 1;\n", false, "edited after the first read: the kept blob bytes");

    /* the index rewritten between two searches: the table follows it (files
     * not read before, so no cache stands in) */
    gf_puts(repo, "c.c", "int c = 3;\n");
    gf_sh(repo, GIT "add c.c");
    settle();
    expect(c, "c.c", "int c = 1;\n", false, "index now has another blob: the target's blob");
    expect(c, "d.h", "#define D 4\n", true, "rebuilt table: clean file still from disk");
    agt_changes_free(c);

    /* a different commit than the index: only files equal in both from disk */
    gf_sh(repo, GIT "commit -q -am two");
    c = open_commit(repo, "HEAD~1");
    expect(c, "c.c", "int c = 1;\n", false, "older commit, file changed since: its blob");
    expect(c, "src/b.h", "#define B 2\n", true, "older commit, file unchanged: from disk");
    agt_changes_free(c);
}

static void test_racy(void)
{
    init_repo("racy");
    gf_puts(repo, "r.txt", "racy\n");
    gf_puts(repo, "ok.txt", "fine\n");
    commit_all("one");
    settle();
    /* the entry's mtime is after the index file's: racily clean */
    gf_sh(repo, "touch -m -d @%lld r.txt && " GIT "update-index --refresh -q",
          (long long)time(NULL) + 3600);
    agt_changes *c = open_commit(repo, "HEAD");
    expect(c, "r.txt", "racy\n", false, "racily clean entry: the blob");
    expect(c, "ok.txt", "fine\n", true, "its neighbour: from disk");
    agt_changes_free(c);
}

static void test_filters(void)
{
    init_repo("crlf");
    gf_puts(repo, ".gitattributes", "*.txt text eol=crlf\n");
    gf_puts(repo, "t.txt", "one\ntwo\n");
    gf_puts(repo, "p.c", "int p;\n");
    commit_all("one");
    /* checked out again: CRLF on disk, stat-clean in the index */
    gf_sh(repo, "rm t.txt && " GIT "checkout -- t.txt");
    settle();
    size_t len = 0;
    char *disk = gf_out(&len, repo, "cat t.txt");
    T_EQ_STR(disk, "one\r\ntwo\r\n", "fixture: t.txt has CRLF on disk");
    free(disk);
    agt_changes *c = open_commit(repo, "HEAD");
    expect(c, "t.txt", "one\ntwo\n", false, "eol=crlf attribute: the blob (LF)");
    expect(c, "p.c", "int p;\n", true, "no attribute on this path: from disk");
    expect(c, ".gitattributes", "*.txt text eol=crlf\n", true, ".gitattributes itself: from disk");
    agt_changes_free(c);

    /* an untracked .gitattributes in a folder (git applies it too): found
     * on disk, relative to the working tree's root */
    init_repo("subattr");
    gf_puts(repo, "a.c", "int a;\n");
    gf_puts(repo, "sub/t.txt", "one\ntwo\n");
    commit_all("one");
    gf_puts(repo, "sub/.gitattributes", "*.txt text eol=crlf\n");
    gf_sh(repo, "rm sub/t.txt && " GIT "checkout -- sub/t.txt");
    settle();
    disk = gf_out(&len, repo, "cat sub/t.txt");
    T_EQ_STR(disk, "one\r\ntwo\r\n", "fixture: sub/t.txt has CRLF on disk");
    free(disk);
    char *untracked = gf_out(&len, repo, GIT "status --porcelain -uall");
    T_EQ_STR(untracked, "?? sub/.gitattributes\n", "fixture: the attributes file is untracked");
    free(untracked);
    c = open_commit(repo, "HEAD");
    expect(c, "sub/t.txt", "one\ntwo\n", false, "untracked sub/.gitattributes: the blob (LF)");
    expect(c, "a.c", "int a;\n", true, "no attribute on this path: from disk");
    agt_changes_free(c);

    /* a filter driver libgit2 does not know: same size, other bytes */
    init_repo("driver");
    gf_sh(repo,
          GIT "config filter.upper.clean 'tr a-z A-Z' && " GIT "config filter.upper.smudge cat");
    gf_puts(repo, ".gitattributes", "*.dat filter=upper\n");
    gf_puts(repo, "d.dat", "abc\n");
    gf_puts(repo, "e.c", "int e;\n");
    commit_all("one");
    settle();
    char *blob = gf_out(&len, repo, GIT "cat-file -p HEAD:d.dat");
    T_EQ_STR(blob, "ABC\n", "fixture: the clean filter ran");
    free(blob);
    c = open_commit(repo, "HEAD");
    expect(c, "d.dat", "ABC\n", false, "filter= driver: the blob");
    expect(c, "e.c", "int e;\n", true, "no driver on this path: from disk");
    agt_changes_free(c);

    /* working-tree-encoding, which libgit2 does not know either: the
     * working tree in EBCDIC (IBM037), the blob in UTF-8, both 4 bytes */
    init_repo("encoding");
    gf_puts(repo, ".gitattributes", "*.txt working-tree-encoding=IBM037\n");
    gf_sh(repo, "printf 'abc\\n' | iconv -f UTF-8 -t IBM037 > w.txt");
    gf_puts(repo, "f.c", "int f;\n");
    commit_all("one");
    settle();
    char *hex = gf_out(&len, repo, "od -An -tx1 w.txt");
    T_EQ_STR(hex, " 81 82 83 25\n", "fixture: w.txt is EBCDIC on disk");
    free(hex);
    blob = gf_out(&len, repo, GIT "cat-file -p HEAD:w.txt");
    T_EQ_STR(blob, "abc\n", "fixture: the blob is UTF-8");
    free(blob);
    c = open_commit(repo, "HEAD");
    expect(c, "w.txt", "abc\n", false, "working-tree-encoding: the blob");
    expect(c, "f.c", "int f;\n", true, "no encoding on this path: from disk");
    agt_changes_free(c);

    /* core.autocrlf, no attribute anywhere */
    init_repo("autocrlf");
    gf_puts(repo, "u.txt", "one\ntwo\n");
    commit_all("one");
    gf_sh(repo, GIT "config core.autocrlf true && rm u.txt && git checkout -- u.txt");
    settle();
    disk = gf_out(&len, repo, "cat u.txt");
    T_EQ_STR(disk, "one\r\ntwo\r\n", "fixture: autocrlf checked out CRLF");
    free(disk);
    c = open_commit(repo, "HEAD");
    expect(c, "u.txt", "one\ntwo\n", false, "core.autocrlf=true: the blob (LF)");
    agt_changes_free(c);
}

static void test_other_entries(void)
{
    init_repo("kinds");
    gf_puts(repo, "target.txt", "target\n");
    gf_sh(repo, "ln -s target.txt link");
    gf_puts(repo, "au.txt", "assumed\n");
    commit_all("one");
    settle();
    gf_sh(repo, GIT "update-index --assume-unchanged au.txt");
    gf_puts(repo, "au.txt", "changed\n");
    agt_changes *c = open_commit(repo, "HEAD");
    expect(c, "link", "target.txt", false, "symlink: its blob (the link text)");
    expect(c, "au.txt", "assumed\n", false, "assume-unchanged entry: the blob");
    expect(c, "target.txt", "target\n", true, "regular clean file: from disk");
    agt_changes_free(c);

    char bare[700];
    snprintf(bare, sizeof bare, "%s/kinds.git", gf_root);
    gf_sh(gf_root, GIT "clone -q --bare '%s' '%s'", repo, bare);
    c = open_commit(bare, "HEAD");
    expect(c, "target.txt", "target\n", false, "bare repository: the blob");
    /* read again: the blob comes from the change set's cache, same bytes */
    const char *const *paths = NULL;
    size_t n = 0;
    agti_changes_files(c, &paths, &n);
    T_EQ_INT((int)n, 3, "bare: three files");
    T_EQ_STR(paths[n - 1], "target.txt", "bare: target.txt is the last file");
    for (int round = 0; round < 2; round++) {
        T_EQ_INT(agti_changes_readers_prepare(c, 1), AGT_OK, "bare: prepare (round %d)", round);
        agti_read rd;
        T_EQ_INT(agti_changes_read_nth(c, 0, n - 1, AGTI_GIT_READ_MAX, &rd), AGT_OK,
                 "bare: read (round %d)", round);
        T_CHECK(rd.len == 7 && memcmp(rd.data, "target\n", 7) == 0, "bare: bytes (round %d)",
                round);
        T_CHECK(rd.cached && !rd.from_disk, "bare: kept in the cache (round %d)", round);
        agti_read_release(&rd);
        T_EQ_INT(agti_changes_read_nth(c, 0, n - 1, 3, &rd), AGT_ELIMIT,
                 "bare: over a 3-byte limit from the cache (round %d)", round);
    }
    agt_changes_free(c);
}

/* Workspace mode over a clean working tree reviews the index: its blobs,
 * with the same shortcut and the same fall-backs. */
static void test_index_source(void)
{
    init_repo("index");
    gf_puts(repo, ".gitattributes", "*.txt text eol=crlf\n");
    gf_puts(repo, "s.c", "int s = 1;\n");
    gf_puts(repo, "r.c", "int r;\n");
    gf_puts(repo, "t.txt", "one\ntwo\n");
    commit_all("one");
    gf_sh(repo, "rm t.txt && git checkout -- t.txt");
    /* a staged edit, the working tree equal to the index */
    gf_puts(repo, "s.c", "int s = 2;\n");
    gf_sh(repo, GIT "add s.c");
    settle();
    gf_sh(repo, "touch -m -d @%lld r.c && git update-index -q --refresh",
          (long long)time(NULL) + 3600);
    agt_changes *c = open_workspace("index source", "index");
    expect(c, "s.c", "int s = 2;\n", true, "index source: staged file, clean: from disk");
    expect(c, "t.txt", "one\ntwo\n", false, "index source: eol=crlf: the blob (LF)");
    expect(c, "r.c", "int r;\n", false, "index source: racily clean: the blob");
    /* staged again after the review opened: the change set keeps the
     * index it was opened with (its blob), the file on disk no longer
     * matches that entry */
    gf_puts(repo, "s.c", "int s = 3;\n");
    gf_sh(repo, GIT "add s.c");
    settle();
    expect(c, "s.c", "int s = 2;\n", false, "index source: re-staged since: the opened blob");
    agt_changes_free(c);
}

/* Working-tree reads open the file without an lstat first: a FIFO where a
 * tracked file was must not block, and is refused as not a regular file. */
static void test_workdir_fifo(void)
{
    init_repo("fifo");
    gf_puts(repo, "f.txt", "file\n");
    gf_puts(repo, "g.txt", "gee\n");
    commit_all("one");
    gf_sh(repo, "rm f.txt && mkfifo f.txt && ln -s g.txt l.txt");
    agt_changes *c = open_workspace("fifo", "worktree");
    char *text = NULL;
    size_t len = 0;
    T_EQ_INT(agt_changes_read_file(c, "f.txt", &text, &len), AGT_ENOTFOUND,
             "fifo: refused, without blocking");
    T_EQ_STR(agt_error_message(), "'f.txt' is not a regular file", "fifo: the message");
    T_EQ_INT(agt_changes_read_file(c, "l.txt", &text, &len), AGT_OK, "fifo repo: symlink read");
    T_EQ_STR(text, "g.txt", "untracked symlink: reads as its target's name");
    agt_free(text);
    text = NULL;
    T_EQ_INT(agt_changes_read_file(c, "g.txt", &text, &len), AGT_OK, "fifo repo: file read");
    T_EQ_STR(text, "gee\n", "regular file: its bytes");
    T_EQ_INT((int)len, 4, "regular file: its length");
    agt_free(text);
    agt_changes_free(c);
}

/* Edited after the review was opened, with the size and the mtime put
 * back: the stat data git keeps still differs (ctime), so the index
 * source reads the blob, as `git diff` sees the edit; an untouched
 * neighbour is read from disk. */
static void test_same_size_same_mtime(void)
{
    init_repo("samestat");
    gf_puts(repo, "x.txt", "alpha\n");
    gf_puts(repo, "y.txt", "gamma\n");
    commit_all("one");
    settle();
    agt_changes *c = open_workspace("same stat", "index");
    /* a second later than settle(): git compares whole seconds of ctime */
    gf_sh(repo, "sleep 1 && printf 'omega\\n' > x.txt && touch -m -d 2020-01-01T00:00:00 x.txt");
    size_t len = 0;
    char *st = gf_out(&len, repo, "stat -c '%%s %%Y' x.txt y.txt");
    T_EQ_STR(st, "6 1577836800\n6 1577836800\n", "fixture: same size and mtime as committed");
    free(st);
    char *names = gf_out(&len, repo, GIT "diff --name-only");
    T_EQ_STR(names, "x.txt\n", "fixture: git diff sees the edit");
    free(names);
    expect(c, "x.txt", "alpha\n", false, "same size and mtime, other bytes: the blob");
    expect(c, "y.txt", "gamma\n", true, "untouched neighbour: from disk");
    agt_changes_free(c);
}

/* The working tree's file list (workspace mode with unstaged changes) is
 * the index's entries still there plus the untracked files: an entry the
 * working-tree diff reports deleted is left out when nothing is at its
 * path, kept when something other than a folder is (a symlink that
 * replaced a file, a FIFO), and entries that diff does not look at
 * (assume-unchanged, skip-worktree, intent-to-add) are looked up on disk. Compared with
 * what git lists. */
static void test_worktree_list(void)
{
    init_repo("wtlist");
    gf_puts(repo, "a.txt", "a\n");
    gf_puts(repo, "del.txt", "gone\n");
    gf_puts(repo, "dir.txt", "becomes a folder\n");
    gf_puts(repo, "link.txt", "becomes a link\n");
    gf_puts(repo, "fifo.txt", "becomes a fifo\n");
    gf_puts(repo, "au-gone.txt", "assumed\n");
    gf_puts(repo, "au-kept.txt", "assumed, kept\n");
    gf_puts(repo, "sw-gone.txt", "sparse\n");
    gf_puts(repo, "sub/b.txt", "b\n");
    commit_all("one");
    settle();
    gf_sh(repo,
          "rm del.txt dir.txt link.txt fifo.txt && mkdir dir.txt && "
          "echo in > dir.txt/in.txt && ln -s a.txt link.txt && mkfifo fifo.txt && " GIT
          "update-index --assume-unchanged au-gone.txt au-kept.txt && rm au-gone.txt && " GIT
          "update-index --skip-worktree sw-gone.txt && rm sw-gone.txt && echo new > new.txt && "
          "echo ita > ita-gone.txt && echo ita > ita-kept.txt && " GIT
          "add -N ita-gone.txt ita-kept.txt && rm ita-gone.txt");
    size_t len = 0;
    char *deleted = gf_out(&len, repo, GIT "ls-files --deleted");
    /* (a folder at dir.txt: not "deleted" to ls-files, gone to status) */
    T_EQ_STR(deleted, "au-gone.txt\ndel.txt\nita-gone.txt\n",
             "fixture: what git ls-files lists deleted");
    free(deleted);
    char *status = gf_out(&len, repo, GIT "status --porcelain -uall 2>/dev/null");
    T_EQ_STR(status,
             " D del.txt\n D dir.txt\n M fifo.txt\n D ita-gone.txt\n A ita-kept.txt\n T link.txt\n"
             "?? dir.txt/in.txt\n?? new.txt\n",
             "fixture: what git status says");
    free(status);
    agt_changes *c = open_workspace("worktree list", "worktree");
    char *lj = NULL;
    T_EQ_INT(agt_changes_list_files(c, &lj), AGT_OK, "worktree list: listed");
    T_EQ_STR(
        lj,
        "[\"a.txt\",\"au-kept.txt\",\"dir.txt/in.txt\",\"fifo.txt\",\"ita-kept.txt\",\"link.txt\","
        "\"new.txt\",\"sub/b.txt\"]",
        "worktree list: present entries and untracked files");
    agt_free(lj);
    char *text = NULL;
    T_EQ_INT(agt_changes_read_file(c, "link.txt", &text, &len), AGT_OK, "typechange: read");
    T_EQ_STR(text, "a.txt", "typechange: the link's target name");
    agt_free(text);
    text = NULL;
    T_EQ_INT(agt_changes_read_file(c, "del.txt", &text, &len), AGT_ENOTFOUND,
             "deleted: not a file of the reviewed tree");
    agt_changes_free(c);
}

int main(void)
{
    if (gf_setup() != 0) {
        T_CHECK(0, "temp dir");
        return t_done();
    }
    test_clean_and_modified();
    test_racy();
    test_filters();
    test_other_entries();
    test_index_source();
    test_workdir_fifo();
    test_same_size_same_mtime();
    test_worktree_list();
    gf_teardown();
    return t_done();
}
