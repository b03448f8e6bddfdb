/* All-or-nothing writes of several files (agti_fs_txn): the k-th step of a
 * commit fails for every k and the tree is then the same as before, byte
 * for byte, inode for inode, mode for mode, with no file left behind; the
 * commit after the last k succeeds. Also a failure inside the atomic write
 * itself, a file rewritten in place (several names), and removals. */
#include <dirent.h>

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
    tu_rmtree(root);
    free(root);
    return t_done();
}
