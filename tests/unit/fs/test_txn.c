/* All-or-nothing writes of several files (agti_fs_txn): the k-th step of a
 * commit fails for every k and the tree is then the same as before, byte
 * for byte, inode for inode, mode for mode, with no file left behind; the
 * commit after the last k succeeds. Also a failure inside the atomic write
 * itself, a file rewritten in place (several names), and removals. */
#include <dirent.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "core/core.h"
#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

static char *root;

/* The whole tree below dir: every name (hidden ones too) with its type,
 * inode, mode and content, in name order. */
static void snap_dir(agti_buf *b, const char *dir, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s%s%s", dir, rel[0] ? "/" : "", rel);
    struct dirent **list;
    int n = scandir(p, &list, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = list[i]->d_name;
        if (strcmp(nm, ".") != 0 && strcmp(nm, "..") != 0) {
            char r[4096], f[8192];
            snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", nm);
            snprintf(f, sizeof f, "%s/%s", dir, r);
            struct stat st;
            lstat(f, &st);
            agti_buf_printf(b, "%s ino=%lu mode=%o nlink=%lu\n", r, (unsigned long)st.st_ino,
                            (unsigned)st.st_mode, (unsigned long)st.st_nlink);
            if (S_ISDIR(st.st_mode))
                snap_dir(b, dir, r);
            else {
                size_t len = 0;
                char *c = tu_read(f, &len);
                agti_buf_put(b, c, len);
                agti_buf_puts(b, "\n--\n");
                free(c);
            }
        }
        free(list[i]);
    }
    free(list);
}

static char *snap(void)
{
    agti_buf b = AGTI_BUF_INIT;
    snap_dir(&b, root, "");
    return agti_buf_detach(&b);
}

static int dirfd_of(const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* The set under test: replace a.txt, create sub/d.txt, remove c.txt,
 * replace sub/b.txt (mode 0600), rewrite in place linked.txt (2 names). */
static int stage_and_commit(bool *restored)
{
    int top = dirfd_of("."), sub = dirfd_of("sub");
    agti_fs_txn *t;
    int rc = agti_fs_txn_new(&t);
    if (rc == AGT_OK)
        rc = agti_fs_txn_put(t, top, "a.txt", "a.txt", "A new\n", 6, 0);
    if (rc == AGT_OK)
        rc = agti_fs_txn_put(t, sub, "d.txt", "sub/d.txt", "D\n", 2, 0);
    if (rc == AGT_OK)
        rc = agti_fs_txn_remove(t, top, "c.txt", "c.txt");
    if (rc == AGT_OK)
        rc = agti_fs_txn_put(t, sub, "b.txt", "sub/b.txt", "", 0, 0);
    if (rc == AGT_OK)
        rc = agti_fs_txn_put(t, top, "linked.txt", "linked.txt", "L new\n", 6,
                             AGTI_WRITE_LINKS_IN_PLACE);
    if (rc == AGT_OK)
        rc = agti_fs_txn_commit(t, restored);
    agti_fs_txn_free(t);
    close(top);
    close(sub);
    return rc;
}

static void setup(void)
{
    tu_rmtree(root);
    mkdir(root, 0700);
    tu_write(root, "a.txt", "a old\n");
    tu_write(root, "c.txt", "c old\n");
    tu_write(root, "sub/b.txt", "b old\r\nno final line break");
    chmod(tu_path(root, "sub/b.txt"), 0600);
    tu_write(root, "linked.txt", "L old\n");
    char from[4096];
    snprintf(from, sizeof from, "%s", tu_path(root, "linked.txt"));
    link(from, tu_path(root, "sub/other-name.txt"));
}

/* The names in folder rel (under root) but "." and ".." that begin with prefix, joined by
 * ","; *content gets the content of the last one (NULL when none). */
static char *names_with(const char *rel, const char *prefix, char **content)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    struct dirent **list;
    int n = scandir(p, &list, NULL, alphasort);
    agti_buf b = AGTI_BUF_INIT;
    if (content)
        *content = NULL;
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0 &&
            strncmp(list[i]->d_name, prefix, strlen(prefix)) == 0) {
            agti_buf_printf(&b, "%s%s", b.len ? "," : "", list[i]->d_name);
            if (content) {
                free(*content);
                char f[8192];
                snprintf(f, sizeof f, "%s/%s", p, list[i]->d_name);
                size_t len;
                *content = tu_read(f, &len);
            }
        }
        free(list[i]);
    }
    free(list);
    agti_buf_puts(&b, "");
    return agti_buf_detach(&b);
}

/* Whether the name has the second-name form for file: "." file
 * ".agt-old-" and six letters or digits. */
static bool old_form(const char *name, const char *file)
{
    char want[256];
    int n = snprintf(want, sizeof want, ".%s.agt-old-", file);
    if (strncmp(name, want, (size_t)n) != 0 || strlen(name) != (size_t)n + 6)
        return false;
    for (const char *c = name + n; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
            return false;
    return true;
}

/* A write of a new file into folder rel: what triggers the sweep. */
static void write_into(const char *rel)
{
    int fd = dirfd_of(rel);
    agti_write_info info;
    int rc = agti_fs_write_at(fd, "z.txt", "z.txt", "z\n", 2, 0, &info);
    T_EQ_INT(rc, AGT_OK, "write into %s", rel);
    unlinkat(fd, "z.txt", 0);
    close(fd);
}

/* The second name of file in folder rel after a sweep: present exactly
 * when want is not NULL, then holding want. */
static void expect_old(int k, const char *rel, const char *file, const char *want)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, ".%s.agt-old-", file);
    char *content = NULL;
    char *names = names_with(rel, prefix, &content);
    if (want == NULL) {
        T_EQ_STR(names, "", "kill at %d: no second name of %s/%s left", k, rel, file);
    } else {
        T_CHECK(old_form(names, file), "kill at %d: one second name of %s/%s kept (%s)", k, rel,
                file, names);
        T_EQ_STR(content ? content : "(none)", want,
                 "kill at %d: the kept second name of %s holds its old content", k, file);
    }
    free(names);
    free(content);
}

/* A kill at each step of the commit, then the next write into each folder
 * with the clock 601 s later: each file old or new, and of the second
 * names only those holding the old content of a file that was changed are
 * left. Steps (see main): 1-3 second names of a, c, b; 4 the copy of
 * linked; 5 a, 6 d, 7 c removed, 8 b, 9 linked. */
static void test_kill(void)
{
    for (int k = 1; k <= 9; k++) {
        setup();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            agti_fs_txn_kill_step = k;
            (void)stage_and_commit(NULL);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        T_CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "kill at %d: killed", k);
        size_t n;
        char *a = tu_read(tu_path(root, "a.txt"), &n);
        T_EQ_STR(a ? a : "(none)", k > 5 ? "A new\n" : "a old\n", "kill at %d: a.txt", k);
        free(a);
        T_EQ_INT(access(tu_path(root, "c.txt"), F_OK) == 0, k <= 7, "kill at %d: c.txt there", k);
        char *b = tu_read(tu_path(root, "sub/b.txt"), &n);
        T_EQ_STR(b ? b : "(none)", k > 8 ? "" : "b old\r\nno final line break",
                 "kill at %d: sub/b.txt", k);
        free(b);
        /* Before the sweep, one second name for each file prepared. */
        char *top = names_with(".", ".", NULL), *sub = names_with("sub", ".", NULL);
        size_t ntop = 0, nsub = 0;
        for (char *c = top; *c; c++)
            ntop += *c == ',';
        for (char *c = sub; *c; c++)
            nsub += *c == ',';
        ntop += top[0] != '\0';
        nsub += sub[0] != '\0';
        T_EQ_INT(ntop, (k > 1) + (k > 2), "kill at %d: second names in the top folder (%s)", k,
                 top);
        T_EQ_INT(nsub, k > 3, "kill at %d: second names in sub (%s)", k, sub);
        free(top);
        free(sub);
        /* A write right away drops the names of unchanged files (their
         * inode keeps its name; unlocked, their writer is dead), and 10
         * minutes later still keeps the only copies of changed ones. */
        for (int late = 0; late < 2; late++) {
            agti_fs_sweep_clock_shift = late ? 601 : 0;
            write_into(".");
            write_into("sub");
            agti_fs_sweep_clock_shift = 0;
            expect_old(k, ".", "a.txt", k > 5 ? "a old\n" : NULL);
            expect_old(k, ".", "c.txt", k > 7 ? "c old\n" : NULL);
            expect_old(k, "sub", "b.txt", k > 8 ? "b old\r\nno final line break" : NULL);
        }
        /* The next patch of a file right after the kill leaves nothing:
         * its earlier second name went before the new one was made. */
        if (k == 5) {
            int tfd = dirfd_of(".");
            agti_fs_txn *t;
            agti_fs_txn_new(&t);
            agti_fs_txn_put(t, tfd, "c.txt", "c.txt", "c newer\n", 8, 0);
            T_EQ_INT(agti_fs_txn_commit(t, NULL), AGT_OK, "kill at 5, then c.txt patched");
            agti_fs_txn_free(t);
            close(tfd);
            char *left = names_with(".", ".c.txt.", NULL);
            T_EQ_STR(left, "", "kill at 5, then c.txt patched: no second name of it left");
            free(left);
        }
    }
}

/* The sweep spares what is not ours or not stale: a locked second name, a
 * name of the form with wrong check characters, another user's. */
static void test_sweep_spares(void)
{
    setup();
    char bak[256];
    agti_fs_temp_name(bak, sizeof bak, "a.txt", AGTI_FS_OLD_INFIX);
    char from[4096];
    snprintf(from, sizeof from, "%s", tu_path(root, "a.txt"));
    T_EQ_INT(link(from, tu_path(root, bak)), 0, "spares: a second name made by hand");
    int lk = open(from, O_RDONLY | O_CLOEXEC);
    T_EQ_INT(flock(lk, LOCK_EX | LOCK_NB), 0, "spares: its inode locked");
    /* A user's file of the same shape whose check characters are wrong:
     * ".c.txt.agt-old-abcd" and then "zz" (the right ones are "5A": FNV-1a 64 of the rest, base
     * 62). */
    T_EQ_INT(tu_write(root, ".c.txt.agt-old-abcdzz", "mine\n"), 0, "spares: a look-alike");
    struct timespec ts[2] = {{1000000000, 0}, {1000000000, 0}};
    utimensat(AT_FDCWD, tu_path(root, ".c.txt.agt-old-abcdzz"), ts, 0);
    int top = dirfd_of(".");
    agti_fs_sweep_clock_shift = 601;
    agti_fs_sweep_stale(top);
    char *names = names_with(".", ".", NULL);
    char want[600];
    if (strcmp(bak, ".c.txt.agt-old-abcdzz") > 0)
        snprintf(want, sizeof want, ".c.txt.agt-old-abcdzz,%s", bak);
    else
        snprintf(want, sizeof want, "%s,.c.txt.agt-old-abcdzz", bak);
    T_EQ_STR(names, want, "spares: the locked one and the look-alike stay");
    free(names);
    close(lk);
    agti_fs_sweep_stale(top);
    names = names_with(".", ".", NULL);
    T_EQ_STR(names, ".c.txt.agt-old-abcdzz", "spares: unlocked, the second name goes");
    free(names);
    /* A second name with one link holding the same bytes as its file: left
     * while fresh, removed 10 minutes later. */
    agti_fs_temp_name(bak, sizeof bak, "a.txt", AGTI_FS_OLD_INFIX);
    T_EQ_INT(tu_write(root, bak, "a old\n"), 0, "spares: a copy of a.txt's bytes");
    agti_fs_sweep_clock_shift = 0;
    agti_fs_sweep_stale(top);
    names = names_with(".", bak, NULL);
    T_EQ_STR(names, bak, "spares: a fresh copy with the same bytes stays");
    free(names);
    agti_fs_sweep_clock_shift = 601;
    agti_fs_sweep_stale(top);
    names = names_with(".", bak, NULL);
    T_EQ_STR(names, "", "spares: 10 minutes later it goes (nothing is lost)");
    free(names);
    agti_fs_sweep_clock_shift = 0;
    close(top);
}

/* Undoing fails: the message names the second name that keeps the old
 * content, and that name stays (it is the only copy). */
static void test_undo_fails(void)
{
    setup();
    int top = dirfd_of(".");
    agti_fs_txn *t;
    agti_fs_txn_new(&t);
    agti_fs_txn_put(t, top, "a.txt", "a.txt", "A new\n", 6, 0);
    agti_fs_txn_remove(t, top, "c.txt", "c.txt");
    bool restored = true;
    agti_fs_txn_fail_step = 4; /* 1, 2 second names; 3 a.txt; 4 the removal */
    agti_fs_txn_fail_undo = true;
    int rc = agti_fs_txn_commit(t, &restored);
    agti_fs_txn_fail_undo = false;
    agti_fs_txn_fail_step = 0;
    T_EQ_INT(rc, AGT_EIO, "undo fails: the commit fails");
    T_CHECK(!restored, "undo fails: not restored");
    char *content = NULL;
    char *names = names_with(".", ".a.txt.agt-old-", &content);
    T_CHECK(old_form(names, "a.txt"), "undo fails: a.txt's second name stays (%s)", names);
    T_EQ_STR(content ? content : "(none)", "a old\n", "undo fails: it holds the old content");
    char want[1024];
    snprintf(want, sizeof want,
             "cannot remove c.txt: Input/output error; putting back the files already changed "
             "failed for a.txt (its old content is in %s next to it)",
             names);
    T_EQ_STR(agt_error_message(), want, "undo fails: the message names it");
    char *c = names_with(".", ".c.txt.agt-old-", NULL);
    T_EQ_STR(c, "", "undo fails: c.txt (unchanged) keeps no second name");
    free(c);
    free(names);
    free(content);
    agti_fs_txn_free(t);
    close(top);
}

int main(void)
{
    root = tu_mkdtemp();
    umask(022);
    /* steps: second names of a, c, b (3), the copy of linked (1), then 5 changes */
    int steps = 0;
    for (int k = 1; k <= 20; k++) {
        setup();
        char *before = snap();
        agti_fs_txn_fail_step = k;
        bool restored = false;
        int rc = stage_and_commit(&restored);
        int left = agti_fs_txn_fail_step;
        agti_fs_txn_fail_step = 0;
        if (rc == AGT_OK) {
            T_EQ_INT(left, k, "k=%d: the hook did not fire: the commit has %d steps", k, k - 1);
            steps = k - 1;
            free(before);
            break;
        }
        T_EQ_INT(rc, AGT_EIO, "k=%d: the commit fails", k);
        T_CHECK(restored, "k=%d: everything put back", k);
        char *after = snap();
        T_EQ_STR(after, before,
                 "k=%d: the tree is as before (bytes, inodes, modes, no extra names)", k);
        free(after);
        free(before);
    }
    T_EQ_INT(steps, 9, "nine steps: four kept copies, five changes");
    size_t n;
    char *s = tu_read(tu_path(root, "a.txt"), &n);
    T_EQ_STR(s, "A new\n", "committed: a.txt");
    free(s);
    s = tu_read(tu_path(root, "sub/d.txt"), &n);
    T_EQ_STR(s, "D\n", "committed: sub/d.txt created");
    free(s);
    T_CHECK(access(tu_path(root, "c.txt"), F_OK) != 0, "committed: c.txt removed");
    s = tu_read(tu_path(root, "sub/b.txt"), &n);
    T_EQ_INT(n, 0, "committed: sub/b.txt emptied");
    free(s);
    struct stat st;
    stat(tu_path(root, "sub/b.txt"), &st);
    T_EQ_INT(st.st_mode & 07777, 0600, "committed: sub/b.txt keeps mode 0600");
    s = tu_read(tu_path(root, "sub/other-name.txt"), &n);
    T_EQ_STR(s, "L new\n", "committed: the in-place file's other name sees the new content");
    free(s);
    char *now = snap();
    T_CHECK(strstr(now, ".agt-") == NULL, "committed: no second name or temporary left");
    free(now);

    /* A failure inside the atomic write of the second change (its rename,
     * step 5 of atomic.c) after the first (a removal) was made. */
    setup();
    char *before = snap();
    {
        int top = dirfd_of(".");
        agti_fs_txn *t;
        agti_fs_txn_new(&t);
        agti_fs_txn_remove(t, top, "c.txt", "c.txt");
        agti_fs_txn_put(t, top, "a.txt", "a.txt", "2\n", 2, 0);
        bool restored = false;
        agti_fs_atomic_fail_step = 5;
        int rc = agti_fs_txn_commit(t, &restored);
        agti_fs_atomic_fail_step = 0;
        T_EQ_INT(rc, AGT_EIO, "atomic write failing: the commit fails");
        T_CHECK(restored, "atomic write failing: put back");
        char *after = snap();
        T_EQ_STR(after, before, "atomic write failing: the tree is as before");
        free(after);
        agti_fs_txn_free(t);
        close(top);
    }
    free(before);

    /* Removing a file that is gone by then. */
    setup();
    before = snap();
    {
        int top = dirfd_of(".");
        agti_fs_txn *t;
        agti_fs_txn_new(&t);
        agti_fs_txn_put(t, top, "a.txt", "a.txt", "1\n", 2, 0);
        agti_fs_txn_remove(t, top, "missing.txt", "missing.txt");
        int rc = agti_fs_txn_commit(t, NULL);
        T_EQ_INT(rc, AGT_ENOTFOUND, "removing a missing file fails");
        T_EQ_STR(agt_error_message(), "missing.txt does not exist (any more)",
                 "removing a missing file: message");
        char *after = snap();
        T_EQ_STR(after, before, "removing a missing file: nothing changed");
        free(after);
        agti_fs_txn_free(t);
        close(top);
    }
    free(before);
    test_kill();
    test_sweep_spares();
    test_undo_fails();
    tu_rmtree(root);
    free(root);
    return t_done();
}
