/* Confined resolution (agti_fs_locate, agti_fs_open_beneath), writes in an
 * opened folder (agti_fs_write_at) and the name escapes. Every case runs
 * with openat2 and with the component walk. Expected values by hand from
 * the rules in lib/fs/confine.c, names.c and docs/fs.md. */
#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

static char *root, *other, *allowed;

static void lnk(const char *target, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (symlink(target, p) != 0)
        t_diag("symlink %s failed", p);
}

/* Resolves and opens user (O_RDONLY) and checks the display path and the
 * first bytes read through the descriptor. */
static void ok_read(agti_fsroot *r, const char *user, const char *want_rel, const char *want_text,
                    const char *mode)
{
    agti_fsloc loc;
    int rc = agti_fs_locate(r, user, AGTI_LOC_OPEN, O_RDONLY, &loc);
    T_EQ_INT(rc, AGT_OK, "%s: '%s' resolves", mode, user);
    if (rc != AGT_OK) {
        t_diag("  %s", agt_error_message());
        return;
    }
    T_EQ_STR(loc.rel, want_rel, "%s: '%s' display path", mode, user);
    char buf[64] = "";
    ssize_t n = loc.fd >= 0 ? read(loc.fd, buf, sizeof buf - 1) : -1;
    buf[n > 0 ? n : 0] = '\0';
    T_EQ_STR(buf, want_text, "%s: '%s' content", mode, user);
    agti_fsloc_clear(&loc);
}

static void refused(agti_fsroot *r, const char *user, unsigned how, int code, const char *needle,
                    const char *mode)
{
    agti_fsloc loc;
    int rc = agti_fs_locate(r, user, how, O_RDONLY, &loc);
    T_EQ_INT(rc, code, "%s: '%s' refused", mode, user);
    if (needle != NULL)
        T_CHECK(strstr(agt_error_message(), needle) != NULL, "%s: '%s' message has '%s': %s", mode,
                user, needle, agt_error_message());
    T_CHECK(strstr(agt_error_message(), other) == NULL,
            "%s: '%s' message does not say where the link points", mode, user);
    T_CHECK(loc.fd < 0 && loc.dirfd < 0, "%s: '%s' no descriptor", mode, user);
    agti_fsloc_clear(&loc);
}

static void cases(const char *mode)
{
    agti_fsroot *r = NULL;
    T_EQ_INT(agti_fsroot_new(&r, root, NULL), AGT_OK, "%s: root opened", mode);
    T_EQ_INT(agti_fsroot_add(r, allowed, 0), AGT_OK, "%s: allowed dir added", mode);
    char p[4096];
    ok_read(r, "src/a.c", "src/a.c", "A\n", mode);
    ok_read(r, "link_in/a.c", "src/a.c", "A\n", mode);
    ok_read(r, "src/up_in/src/a.c", "src/a.c", "A\n", mode);
    ok_read(r, "abs_in", "src/a.c", "A\n", mode);
    snprintf(p, sizeof p, "%s/f", allowed);
    ok_read(r, "to_allowed/f", p, "ALLOWED\n", mode);
    ok_read(r, p, p, "ALLOWED\n", mode);
    refused(r, "link_out/f", AGTI_LOC_OPEN, AGT_EDENIED, "through a symbolic link", mode);
    refused(r, "dangling_out", AGTI_LOC_OPEN, AGT_EDENIED, "through a symbolic link", mode);
    refused(r, "src/up/x", AGTI_LOC_OPEN, AGT_EDENIED, "through a symbolic link", mode);
    refused(r, "../x", AGTI_LOC_OPEN, AGT_EDENIED, "outside the workspace", mode);
    refused(r, "loop1", AGTI_LOC_OPEN, AGT_ELIMIT, "too many levels", mode);
    /* MKDIRS through a link to outside creates nothing there */
    refused(r, "link_out/new/deeper/f", AGTI_LOC_MKDIRS, AGT_EDENIED, NULL, mode);
    snprintf(p, sizeof p, "%s/new", other);
    struct stat st;
    T_CHECK(lstat(p, &st) != 0, "%s: nothing made outside", mode);
    /* MKDIRS inside: made, recorded, undone */
    agti_fsloc loc;
    T_EQ_INT(agti_fs_locate(r, "made/one/two/f.txt", AGTI_LOC_MKDIRS, 0, &loc), AGT_OK,
             "%s: folders made", mode);
    T_EQ_INT((int)loc.nmade, 3, "%s: three folders recorded", mode);
    T_CHECK(!loc.exists && strcmp(loc.name, "f.txt") == 0, "%s: the file itself is missing", mode);
    agti_fsloc_undo_dirs(&loc);
    agti_fsloc_clear(&loc);
    snprintf(p, sizeof p, "%s/made", root);
    T_CHECK(lstat(p, &st) != 0, "%s: undone", mode);
    /* a dangling link inside is followed for writing */
    T_EQ_INT(agti_fs_locate(r, "dangling_in", 0, 0, &loc), AGT_OK, "%s: dangling inside", mode);
    T_CHECK(!loc.exists && loc.dangling && strcmp(loc.rel, "src/not-yet") == 0 &&
                loc.link_target != NULL && strcmp(loc.link_target, "src/not-yet") == 0,
            "%s: dangling inside leads to src/not-yet", mode);
    agti_fsloc_clear(&loc);
    /* a missing folder: ENOTFOUND with the display path */
    T_EQ_INT(agti_fs_locate(r, "nope/x/y", AGTI_LOC_OPEN, O_RDONLY, &loc), AGT_ENOTFOUND,
             "%s: missing folder", mode);
    T_EQ_STR(loc.rel, "nope/x/y", "%s: missing folder display", mode);
    agti_fsloc_clear(&loc);
    /* open_beneath never follows a link */
    int rfd = agti_fsroot_fd(r);
    int fd = agti_fs_open_beneath(rfd, "link_in/a.c", O_RDONLY);
    T_CHECK(fd < 0 && errno == ELOOP, "%s: open_beneath refuses a link on the way", mode);
    fd = agti_fs_open_beneath(rfd, "src/../src/a.c", O_RDONLY);
    T_CHECK(fd < 0 && errno == EXDEV, "%s: open_beneath refuses ..", mode);
    fd = agti_fs_open_beneath(rfd, "src/a.c", O_RDONLY);
    T_CHECK(fd >= 0, "%s: open_beneath opens a plain path", mode);
    if (fd >= 0)
        close(fd);
    agti_fsroot_free(r);
}

static void test_write_at(void)
{
    char p[4096], q[4096];
    int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    /* a hard link to a file outside: replaced, the outside name untouched */
    snprintf(p, sizeof p, "%s/secret", other);
    snprintf(q, sizeof q, "%s/hl", root);
    T_EQ_INT(link(p, q), 0, "hard link to outside");
    agti_write_info info;
    T_EQ_INT(agti_fs_write_at(dfd, "hl", q, "new", 3, 0, &info), AGT_OK, "write_at over the link");
    T_CHECK(info.link_broken && info.nlink == 2 && !info.in_place, "link broken, 2 names");
    char *t = tu_read(p, NULL);
    T_EQ_STR(t, "SECRET\n", "the outside name keeps its content");
    free(t);
    t = tu_read(q, NULL);
    T_EQ_STR(t, "new", "the inside name has the new content");
    free(t);
    /* a symlink at the name is never written through */
    T_EQ_INT(agti_fs_write_at(dfd, "link_out", NULL, "x", 1, 0, &info), AGT_EINVAL,
             "write_at refuses a symlink at the name");
    /* new file: mode from the umask, no temporary */
    T_EQ_INT(agti_fs_write_at(dfd, "fresh.txt", NULL, "abc", 3, 0, &info), AGT_OK, "new file");
    T_CHECK(!info.existed, "it did not exist");
    snprintf(q, sizeof q, "%s/fresh.txt", root);
    t = tu_read(q, NULL);
    T_EQ_STR(t, "abc", "new file content");
    free(t);
    T_EQ_INT(agti_fs_write_at(dfd, "fresh.txt", NULL, "de", 2, AGTI_WRITE_APPEND, &info), AGT_OK,
             "append");
    t = tu_read(q, NULL);
    T_EQ_STR(t, "abcde", "appended content");
    free(t);
    close(dfd);
}

static void test_names(void)
{
    static const struct {
        const char *raw, *shown;
    } v[] = {
        {"plain.txt", "plain.txt"},
        {"a\nb", "a\\nb"},
        {"t\tr\r", "t\\tr\\r"},
        {"back\\slash", "back\\\\slash"},
        {"bad\xff", "bad\\xff"},
        {"\x01\x7f", "\\x01\\x7f"},
        {"caf\xc3\xa9", "caf\xc3\xa9"},            /* valid UTF-8 kept */
        {"half\xc3", "half\\xc3"},                 /* a cut sequence */
        {"over\xc0\xaf", "over\\xc0\\xaf"},        /* overlong '/' */
        {"sur\xed\xa0\x80", "sur\\xed\\xa0\\x80"}, /* a surrogate */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        agti_buf b = AGTI_BUF_INIT;
        agti_fs_name_escape(&b, v[i].raw, strlen(v[i].raw));
        T_EQ_STR(agti_buf_cstr(&b), v[i].shown, "escape %zu", i);
        T_EQ_INT(agti_fs_name_needs_escape(v[i].raw, strlen(v[i].raw)),
                 strcmp(v[i].raw, v[i].shown) != 0, "needs escape %zu", i);
        size_t n = 0;
        char *back = agti_fs_name_unescape(agti_buf_cstr(&b), &n);
        T_CHECK(back != NULL && n == strlen(v[i].raw) && memcmp(back, v[i].raw, n) == 0,
                "round trip %zu", i);
        free(back);
        agti_buf_free(&b);
    }
    char *u = agti_fs_name_unescape("a\\qb\\x4", NULL);
    T_EQ_STR(u, "a\\qb\\x4", "no escape: kept literally");
    free(u);
    T_CHECK(agti_fs_name_unescape("nul\\x00", NULL) == NULL, "an escaped NUL is refused");
}

/* The fs tests' tree removal must not change what a planted link points at:
 * chmod follows links, and removing a tree holding a link to /tmp made /tmp
 * mode 0700 (apt and every other user of /tmp then failed). */
static void test_rmtree_keeps_link_targets(void)
{
    char *outside = tu_mkdtemp(), *tree = tu_mkdtemp();
    if (outside == NULL || tree == NULL) {
        T_CHECK(0, "temporary folders");
        return;
    }
    chmod(outside, 0755);
    char link[4200];
    snprintf(link, sizeof link, "%s/out", tree);
    T_EQ_INT(symlink(outside, link), 0, "a link to an outside folder planted");
    tu_rmtree(tree);
    struct stat st;
    T_EQ_INT(stat(outside, &st), 0, "the outside folder is still there");
    T_EQ_INT(st.st_mode & 07777, 0755, "tu_rmtree left the link target's mode alone");
    T_EQ_INT(access(tree, F_OK), -1, "the tree is gone");
    rmdir(outside);
    free(outside);
    free(tree);
}

int main(void)
{
    test_rmtree_keeps_link_targets();
    root = tu_mkdtemp();
    other = tu_mkdtemp();
    allowed = tu_mkdtemp();
    char p[4096];
    tu_write(root, "src/a.c", "A\n");
    tu_write(other, "f", "OUT\n");
    tu_write(other, "secret", "SECRET\n");
    tu_write(allowed, "f", "ALLOWED\n");
    lnk("src", "link_in");
    lnk(other, "link_out");
    snprintf(p, sizeof p, "%s/newfile", other);
    lnk(p, "dangling_out");
    lnk("../..", "src/up");
    lnk("..", "src/up_in");
    lnk("loop2", "loop1");
    lnk("loop1", "loop2");
    snprintf(p, sizeof p, "%s/src/a.c", root);
    lnk(p, "abs_in");
    lnk(allowed, "to_allowed");
    lnk("src/not-yet", "dangling_in");
    cases("openat2");
    agti_fs_no_openat2 = true;
    cases("component walk");
    agti_fs_no_openat2 = false;
    test_write_at();
    test_names();
    tu_rmtree(root);
    tu_rmtree(other);
    tu_rmtree(allowed);
    return t_done();
}
