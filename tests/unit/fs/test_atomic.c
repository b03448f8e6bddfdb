/* Atomic writes (mode bits, CRLF, append, failures leave the original),
 * files with several names (rewritten in place), read-only files and
 * directories, and the line-ending helpers. Expected bytes worked out by
 * hand. */
#include <dirent.h>
#include <signal.h>
#include <sys/file.h>
#include <time.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "fs/fs.h"
#include "fsutil.h"
#include "harness.h"

static char *root;

static char *path_of(const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    return p;
}

/* Number of leftover temporary files in dir. */
static int temp_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".agt-") != NULL)
            n++;
    if (d)
        closedir(d);
    return n;
}

static mode_t mode_of(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_mode & 07777 : 0;
}

static void test_writes(void)
{
    char *s;
    size_t n;
    umask(022);
    T_EQ_INT(agti_fs_write_atomic(path_of("new/deep/f.txt"), "abc", 3, AGTI_WRITE_MKDIRS), AGT_OK,
             "create with parent directories");
    s = tu_read(path_of("new/deep/f.txt"), &n);
    T_EQ_STR(s, "abc", "content of the new file");
    free(s);
    T_EQ_INT(mode_of(path_of("new/deep/f.txt")), 0644, "new file: 0666 & ~umask 022");
    T_EQ_INT(mode_of(path_of("new/deep")), 0755, "new directory: 0777 & ~umask 022");
    T_EQ_INT(agti_fs_write_atomic(path_of("missing/f.txt"), "x", 1, 0), AGT_ENOTFOUND,
             "missing parent without MKDIRS");

    tu_write(root, "run.sh", "#!/bin/sh\n");
    chmod(path_of("run.sh"), 0755);
    T_EQ_INT(agti_fs_write_atomic(path_of("run.sh"), "#!/bin/sh\necho hi\n", 18, 0), AGT_OK,
             "overwrite an executable");
    T_EQ_INT(mode_of(path_of("run.sh")), 0755, "mode 0755 kept");
    s = tu_read(path_of("run.sh"), NULL);
    T_EQ_STR(s, "#!/bin/sh\necho hi\n", "new content");
    free(s);

    /* CRLF stays CRLF: detect, convert the LF text, write. */
    tu_write(root, "win.txt", "one\r\ntwo\r\n");
    s = tu_read(path_of("win.txt"), &n);
    T_EQ_INT(agti_fs_detect_eol(s, n), AGTI_EOL_CRLF, "detect CRLF");
    free(s);
    size_t cl;
    char *crlf = agti_fs_lf_to_crlf("one\ntwo\nthree\n", 14, &cl);
    T_EQ_INT(agti_fs_write_atomic(path_of("win.txt"), crlf, cl, 0), AGT_OK, "write CRLF text");
    s = tu_read(path_of("win.txt"), &n);
    T_EQ_STR(s, "one\r\ntwo\r\nthree\r\n", "CRLF on disk");
    T_EQ_INT(n, 17, "17 bytes");
    free(s);
    free(crlf);

    tu_write(root, "log.txt", "one\n");
    T_EQ_INT(agti_fs_write_atomic(path_of("log.txt"), "two\n", 4, AGTI_WRITE_APPEND), AGT_OK,
             "append");
    s = tu_read(path_of("log.txt"), NULL);
    T_EQ_STR(s, "one\ntwo\n", "appended content");
    free(s);
    T_EQ_INT(agti_fs_write_atomic(path_of("fresh.txt"), "x", 1, AGTI_WRITE_APPEND), AGT_OK,
             "append to a new file");
    s = tu_read(path_of("fresh.txt"), NULL);
    T_EQ_STR(s, "x", "append creates");
    free(s);
    T_EQ_INT(agti_fs_write_atomic(path_of("empty.txt"), NULL, 0, 0), AGT_OK, "empty content");
    s = tu_read(path_of("empty.txt"), &n);
    T_EQ_INT(n, 0, "empty file written");
    free(s);

    /* A symlink is written through: the link stays, its target changes. */
    tu_write(root, "real.txt", "old");
    symlink("real.txt", path_of("alias.txt"));
    T_EQ_INT(agti_fs_write_atomic(path_of("alias.txt"), "new", 3, 0), AGT_OK, "write via link");
    struct stat st;
    T_CHECK(lstat(path_of("alias.txt"), &st) == 0 && S_ISLNK(st.st_mode), "link kept");
    s = tu_read(path_of("real.txt"), NULL);
    T_EQ_STR(s, "new", "target replaced");
    free(s);
    /* A 250-byte name: the temporary name must still fit in NAME_MAX (255). */
    char longname[251];
    memset(longname, 'n', 250);
    longname[250] = '\0';
    T_EQ_INT(agti_fs_write_atomic(path_of(longname), "L", 1, 0), AGT_OK, "250-byte file name");
    s = tu_read(path_of(longname), NULL);
    T_EQ_STR(s, "L", "long name written");
    free(s);
    T_EQ_INT(temp_files(root), 0, "no temporary files left");
}

static void test_failures(void)
{
    char *s;
    /* A real failure: the target is a directory. */
    tu_write(root, "adir/inside.txt", "keep");
    T_EQ_INT(agti_fs_write_atomic(path_of("adir"), "x", 1, 0), AGT_EINVAL, "target is a directory");
    T_CHECK(strstr(agt_error_message(), "is a directory") != NULL, "message: %s",
            agt_error_message());
    s = tu_read(path_of("adir/inside.txt"), NULL);
    T_EQ_STR(s, "keep", "directory untouched");
    free(s);
    tu_write(root, "orig.txt", "original");
    T_EQ_INT(agti_fs_write_atomic(path_of("orig.txt/sub/x"), "x", 1, AGTI_WRITE_MKDIRS), AGT_EINVAL,
             "a file in the way of MKDIRS");

    /* Every step, failed on purpose through the test hook. */
    chmod(path_of("orig.txt"), 0640);
    static const char *const steps[] = {"", "create temp", "write", "chmod", "fsync", "rename"};
    for (int step = 1; step <= 5; step++) {
        agti_fs_atomic_fail_step = step;
        T_EQ_INT(agti_fs_write_atomic(path_of("orig.txt"), "replacement", 11, 0), AGT_EIO,
                 "injected failure at %s", steps[step]);
        s = tu_read(path_of("orig.txt"), NULL);
        T_EQ_STR(s, "original", "original content after a %s failure", steps[step]);
        free(s);
        T_EQ_INT(mode_of(path_of("orig.txt")), 0640, "mode after a %s failure", steps[step]);
        T_EQ_INT(temp_files(root), 0, "temp file removed after a %s failure", steps[step]);
    }
    agti_fs_atomic_fail_step = 0;

    /* A read-only directory stops everyone but root. */
    tu_write(root, "ro/file.txt", "ro");
    chmod(path_of("ro"), 0555);
    if (geteuid() == 0) {
        t_skip("running as root: a read-only directory does not stop the write");
    } else {
        T_EQ_INT(agti_fs_write_atomic(path_of("ro/file.txt"), "x", 1, 0), AGT_EIO,
                 "read-only directory");
        s = tu_read(path_of("ro/file.txt"), NULL);
        T_EQ_STR(s, "ro", "original kept in a read-only directory");
        free(s);
    }
    chmod(path_of("ro"), 0755);
    T_EQ_INT(agti_fs_write_atomic(NULL, "x", 1, 0), AGT_EINVAL, "NULL path");
    T_EQ_INT(agti_fs_write_atomic(path_of("z"), NULL, 1, 0), AGT_EINVAL, "NULL data with length");
}

static ino_t ino_of(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_ino : 0;
}

static nlink_t links_of(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_nlink : 0;
}

/* Both names of a hard-linked pair hold want. */
static void both_hold(const char *a, const char *b, const char *want, const char *what)
{
    char pa[4096];
    snprintf(pa, sizeof pa, "%s", path_of(a));
    char *s = tu_read(pa, NULL);
    T_EQ_STR(s, want, "%s: %s", what, a);
    free(s);
    s = tu_read(path_of(b), NULL);
    T_EQ_STR(s, want, "%s: %s", what, b);
    free(s);
}

/* The name of the one temporary file left in dir (static), or "". */
static const char *left_temp(const char *dir)
{
    static char name[4096 + 256]; /* a path and a file name: no truncation */
    name[0] = '\0';
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".agt-") != NULL)
            snprintf(name, sizeof name, "%s/%s", dir, de->d_name);
    if (d)
        closedir(d);
    return name;
}

static void test_hard_links(void)
{
    tu_write(root, "hl/a.txt", "one\ntwo\n");
    char pa[4096];
    snprintf(pa, sizeof pa, "%s", path_of("hl/a.txt"));
    link(pa, path_of("hl/b.txt"));
    chmod(pa, 0640);
    ino_t ino = ino_of(pa);
    T_EQ_INT(agti_fs_write_atomic(pa, "new\n", 4, 0), AGT_OK, "overwrite a file with 2 names");
    both_hold("hl/a.txt", "hl/b.txt", "new\n", "overwrite reaches both names");
    T_CHECK(ino_of(pa) == ino, "inode unchanged");
    T_EQ_INT(links_of(pa), 2, "still 2 names");
    T_EQ_INT(mode_of(pa), 0640, "mode kept");
    T_EQ_INT(agti_fs_write_atomic(path_of("hl/b.txt"), "x", 1, AGTI_WRITE_APPEND), AGT_OK,
             "append through the other name");
    both_hold("hl/a.txt", "hl/b.txt", "new\nx", "append reaches both names");
    T_EQ_INT(agti_fs_write_atomic(pa, "z", 1, 0), AGT_OK, "shorter content");
    both_hold("hl/a.txt", "hl/b.txt", "z", "shorter content is truncated");
    T_EQ_INT(agti_fs_write_atomic(pa, NULL, 0, 0), AGT_OK, "empty content");
    both_hold("hl/a.txt", "hl/b.txt", "", "empty content");
    T_EQ_INT(agti_fs_write_atomic(pa, "z", 1, 0), AGT_OK, "back to one byte");

    /* A symlink to a hard-linked file: the link stays, both names change. */
    symlink("a.txt", path_of("hl/via"));
    T_EQ_INT(agti_fs_write_atomic(path_of("hl/via"), "linked\n", 7, 0), AGT_OK,
             "write through a symlink to a file with 2 names");
    struct stat st;
    T_CHECK(lstat(path_of("hl/via"), &st) == 0 && S_ISLNK(st.st_mode), "symlink kept");
    both_hold("hl/a.txt", "hl/b.txt", "linked\n", "through the symlink");
    T_CHECK(ino_of(pa) == ino, "inode unchanged through the symlink");
    T_EQ_INT(temp_files(path_of("hl")), 0, "no backup copies left after success");

    /* Failures before the rewrite: the backup copy's create, write, fsync. */
    static const int steps[] = {1, 2, 4};
    for (size_t i = 0; i < 3; i++) {
        agti_fs_atomic_fail_step = steps[i];
        bool kept = false;
        T_EQ_INT(agti_fs_write_file(pa, "replacement", 11, 0, &kept), AGT_EIO,
                 "backup step %d fails", steps[i]);
        T_CHECK(kept, "kept after backup step %d", steps[i]);
        both_hold("hl/a.txt", "hl/b.txt", "linked\n", "untouched after a backup failure");
        T_EQ_INT(temp_files(path_of("hl")), 0, "backup removed after step %d", steps[i]);
    }
    agti_fs_atomic_fail_step = 0;

    /* The rewrite stops after half of its bytes: the original is put back. */
    agti_fs_atomic_fail_step = 6;
    bool kept = false;
    T_EQ_INT(agti_fs_write_file(pa, "replacement content", 19, 0, &kept), AGT_EIO,
             "rewrite fails midway");
    T_CHECK(kept, "kept after a restored rewrite");
    T_CHECK(strstr(agt_error_message(), "failed after 9 of 19 bytes (Input/output error); its "
                                        "original content was put back") != NULL,
            "message: %s", agt_error_message());
    both_hold("hl/a.txt", "hl/b.txt", "linked\n", "original put back");
    T_CHECK(ino_of(pa) == ino, "inode unchanged after the restore");
    T_EQ_INT(temp_files(path_of("hl")), 0, "backup removed after the restore");

    /* The restore fails too: the file holds the 9 bytes written, the backup
     * stays and the message names it. */
    agti_fs_atomic_fail_step = 7;
    kept = true;
    T_EQ_INT(agti_fs_write_file(pa, "replacement content", 19, 0, &kept), AGT_EIO,
             "rewrite and restore fail");
    T_CHECK(!kept, "not kept when the restore failed");
    const char *bak = left_temp(path_of("hl"));
    T_CHECK(bak[0] != '\0', "backup left");
    T_CHECK(strstr(agt_error_message(), "the file is damaged; its original content is kept in ") !=
                    NULL &&
                strstr(agt_error_message(), bak) != NULL,
            "message names the backup: %s", agt_error_message());
    both_hold("hl/a.txt", "hl/b.txt", "replaceme", "partial content");
    char *s = tu_read(bak, NULL);
    T_EQ_STR(s, "linked\n", "backup holds the original");
    free(s);
    unlink(bak);
    agti_fs_atomic_fail_step = 0;
    tu_write(root, "hl/a.txt", "original\n");
}

/* A real failure midway: RLIMIT_FSIZE of 4096 bytes in a child (SIGXFSZ
 * ignored, so write() fails with EFBIG) while 10000 bytes are written over
 * a 9-byte file with 2 names. The child reports rc, kept and the message. */
static void test_fsize_limit(void)
{
    char pa[4096];
    snprintf(pa, sizeof pa, "%s", path_of("hl/a.txt"));
    ino_t ino = ino_of(pa);
    int fds[2];
    if (pipe(fds) != 0) {
        t_skip("pipe failed");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        char *big = malloc(10000);
        memset(big, 'B', 10000);
        bool kept = false;
        int rc = agti_fs_write_file(pa, big, 10000, 0, &kept);
        char msg[1024];
        int n = snprintf(msg, sizeof msg, "%d %d %s", rc, kept ? 1 : 0, agt_error_message());
        (void)!write(fds[1], msg, (size_t)n);
        _exit(0);
    }
    close(fds[1]);
    char msg[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof msg && (n = read(fds[0], msg + got, sizeof msg - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    T_CHECK(strncmp(msg, "-10 1 ", 6) == 0, "EIO, original kept: %s", msg);
    T_CHECK(strstr(msg, "failed after 4096 of 10000 bytes (File too large); its original content "
                        "was put back") != NULL,
            "message: %s", msg);
    both_hold("hl/a.txt", "hl/b.txt", "original\n", "original back after EFBIG");
    T_CHECK(ino_of(pa) == ino, "inode unchanged after EFBIG");
    T_EQ_INT(temp_files(path_of("hl")), 0, "backup removed after EFBIG");
}

/* Runs fn where file modes apply: as root (which writes read-only files
 * and directories), in a child whose effective capabilities lose
 * CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER. Returns fn's
 * status and copies the error message; 1 when the child could not drop
 * them. */
static int as_user(int (*fn)(void), char *msg, size_t cap)
{
    msg[0] = '\0';
    if (geteuid() != 0) {
        int rc = fn();
        snprintf(msg, cap, "%s", agt_error_message());
        return rc;
    }
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) != 0)
            _exit(1);
        d[0].effective &=
            ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER));
        if (syscall(SYS_capset, &h, d) != 0)
            _exit(1);
        int rc = fn();
        const char *m = agt_error_message();
        (void)!write(fds[1], m, strlen(m));
        _exit(-rc);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < cap && (n = read(fds[0], msg + got, cap - 1 - got)) > 0)
        got += (size_t)n;
    msg[got] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) == 1)
        return 1;
    return -WEXITSTATUS(status);
}

static int write_ro_file(void)
{
    return agti_fs_write_atomic(path_of("perm/ro.txt"), "x", 1, 0);
}

static int write_linked_in_ro_dir(void)
{
    return agti_fs_write_atomic(path_of("perm/rodir/h1"), "x", 1, 0);
}

static int write_single_in_ro_dir(void)
{
    return agti_fs_write_atomic(path_of("perm/rodir/single"), "x", 1, 0);
}

static void test_permissions(void)
{
    char msg[1024], want[10000];
    tu_write(root, "perm/ro.txt", "keep\n");
    chmod(path_of("perm/ro.txt"), 0444);
    int rc = as_user(write_ro_file, msg, sizeof msg);
    if (rc == 1) {
        t_skip("cannot drop the capabilities that bypass file modes");
        return;
    }
    T_EQ_INT(rc, AGT_EDENIED, "read-only file refused");
    snprintf(want, sizeof want, "write: %s is read-only (mode 0444): this process may not write it",
             path_of("perm/ro.txt"));
    T_EQ_STR(msg, want, "read-only file: message");
    char *s = tu_read(path_of("perm/ro.txt"), NULL);
    T_EQ_STR(s, "keep\n", "read-only file unchanged");
    free(s);
    T_EQ_INT(mode_of(path_of("perm/ro.txt")), 0444, "read-only file keeps its mode");

    /* A writable file with 2 names in a read-only directory: the backup
     * copy cannot be created, so the write is refused (as for 1 name). */
    tu_write(root, "perm/rodir/h1", "linked\n");
    tu_write(root, "perm/rodir/single", "single\n");
    char h1[4096];
    snprintf(h1, sizeof h1, "%s", path_of("perm/rodir/h1"));
    link(h1, path_of("perm/rodir/h2"));
    chmod(h1, 0666);
    chmod(path_of("perm/rodir/single"), 0666);
    chmod(path_of("perm/rodir"), 0555);
    rc = as_user(write_linked_in_ro_dir, msg, sizeof msg);
    T_EQ_INT(rc, AGT_EIO, "2 names in a read-only directory refused");
    snprintf(want, sizeof want,
             "write: %s has 2 names (hard links), so it is rewritten in place to keep them, and "
             "the backup copy of its content cannot be created in %s first: Permission denied",
             h1, path_of("perm/rodir"));
    T_EQ_STR(msg, want, "read-only directory, 2 names: message");
    both_hold("perm/rodir/h1", "perm/rodir/h2", "linked\n", "read-only directory");
    rc = as_user(write_single_in_ro_dir, msg, sizeof msg);
    T_EQ_INT(rc, AGT_EIO, "1 name in a read-only directory refused");
    s = tu_read(path_of("perm/rodir/single"), NULL);
    T_EQ_STR(s, "single\n", "read-only directory, 1 name: unchanged");
    free(s);
    chmod(path_of("perm/rodir"), 0755);
}

/* ---- kills at every step (a child process killed by the test hook) ---- */

/* Writes data over path in a child that kills itself at step; true when
 * it died of SIGKILL (the step was reached). */
static bool killed_at(const char *path, const char *data, int step, bool no_tmpfile)
{
    pid_t pid = fork();
    if (pid == 0) {
        agti_fs_no_tmpfile = no_tmpfile;
        agti_fs_atomic_kill_step = step;
        agti_fs_write_file(path, data, strlen(data), 0, NULL);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

/* The names in dir containing ".agt-", sorted, joined by ' ' (static). */
static const char *agt_names(const char *dir)
{
    static char out[8192];
    char names[16][300];
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        if (strstr(de->d_name, ".agt-") != NULL && n < 16)
            snprintf(names[n++], sizeof names[0], "%s", de->d_name);
    if (d)
        closedir(d);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char t[300];
                memcpy(t, names[i], sizeof t);
                memcpy(names[i], names[j], sizeof t);
                memcpy(names[j], t, sizeof t);
            }
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", names[i]);
    return out;
}

/* Whether s is ".NAME.agt-" and six letters or digits (the form; the
 * check characters are tested in test_sweep_conservative). */
static bool temp_of(const char *s, const char *name)
{
    size_t nl = strlen(name);
    if (strlen(s) != 1 + nl + 5 + 6 || s[0] != '.' || strncmp(s + 1, name, nl) != 0 ||
        strncmp(s + 1 + nl, ".agt-", 5) != 0)
        return false;
    for (size_t i = 0; i < 6; i++) {
        char c = s[1 + nl + 5 + i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/* Sets the modification time of dir/name one hour back. */
static void age(const char *dir, const char *name)
{
    char p[4096 + 300];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct timespec ts[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
}

static bool tmpfile_works(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* A single-name file replaced by rename, killed at each step (1 create, 2
 * write, 3 chmod, 4 fsync, 5 rename), unnamed (O_TMPFILE) and named: the
 * file always holds its old content; a named temporary is left only where
 * one existed at that step, kept while it is fresh and removed by the next
 * write once it is stale. */
static void test_kill_replace(void)
{
    tu_mkdir(root, "kr");
    char dir[4096], pa[4096 + 16];
    snprintf(dir, sizeof dir, "%s", path_of("kr"));
    snprintf(pa, sizeof pa, "%s/s.txt", dir);
    bool have_tmpfile = tmpfile_works(dir);
    for (int named = 0; named <= 1; named++) {
        if (!named && !have_tmpfile) {
            t_skip("this file system has no O_TMPFILE: the unnamed path is not tested");
            continue;
        }
        const char *how = named ? "named temporary" : "O_TMPFILE";
        for (int step = 1; step <= 5; step++) {
            tu_write(root, "kr/s.txt", "old\n");
            T_CHECK(killed_at(pa, "new content\n", step, named), "%s: killed at step %d", how,
                    step);
            char *s = tu_read(pa, NULL);
            T_EQ_STR(s, "old\n", "%s, killed at step %d: the old content", how, step);
            free(s);
            /* Named: a temporary from step 2 on (after its creation);
             * unnamed: only at step 5, linked at its temporary name. */
            bool left = named ? step >= 2 : step == 5;
            const char *names = agt_names(dir);
            if (left) {
                T_CHECK(temp_of(names, "s.txt"), "%s, step %d: one temporary .s.txt.agt-XXXXXX: %s",
                        how, step, names);
                char tn[300];
                snprintf(tn, sizeof tn, "%s", names);
                char tp[4096 + 300];
                snprintf(tp, sizeof tp, "%s/%s", dir, tn);
                s = tu_read(tp, NULL);
                T_EQ_STR(s, step == 2 ? "" : "new content\n",
                         "%s, step %d: the temporary's content", how, step);
                free(s);
                /* Fresh: the next write keeps it (its writer may be alive). */
                T_EQ_INT(agti_fs_write_atomic(path_of("kr/other.txt"), "o", 1, 0), AGT_OK,
                         "%s, step %d: a write into the folder", how, step);
                T_EQ_STR(agt_names(dir), tn, "%s, step %d: a fresh temporary is kept", how, step);
                age(dir, tn);
                T_EQ_INT(agti_fs_write_atomic(path_of("kr/other.txt"), "p", 1, 0), AGT_OK,
                         "%s, step %d: the next write into the folder", how, step);
                T_EQ_STR(agt_names(dir), "", "%s, step %d: the stale temporary is removed", how,
                         step);
            } else {
                T_EQ_STR(names, "", "%s, step %d: nothing left", how, step);
            }
        }
        /* A new file: killed before its name exists, nothing at all. */
        unlink(pa);
        T_CHECK(killed_at(pa, "new content\n", 5, named), "%s: new file killed at step 5", how);
        T_CHECK(access(pa, F_OK) != 0, "%s: the new file does not exist", how);
        if (!named) {
            T_EQ_STR(agt_names(dir), "",
                     "O_TMPFILE: a new file killed before its link leaves "
                     "nothing");
        } else {
            const char *names = agt_names(dir);
            T_CHECK(temp_of(names, "s.txt"), "named: the new file's temporary: %s", names);
            char tn[300];
            snprintf(tn, sizeof tn, "%s", names);
            age(dir, tn);
            T_EQ_INT(agti_fs_write_atomic(pa, "x", 1, 0), AGT_OK, "named: the file written");
            T_EQ_STR(agt_names(dir), "", "named: its stale temporary removed");
        }
    }
}

/* What the sweep must leave alone: every file below is aged an hour. */
static void test_sweep_conservative(void)
{
    tu_mkdir(root, "sw");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path_of("sw"));
    static const char *const kept[] = {
        ".f.agt-abc12",    /* 5 characters */
        ".f.agt-abc1234",  /* 7 characters */
        "f.agt-abc123",    /* no leading dot */
        ".f.agt-abc12_",   /* not a letter or digit */
        ".agt-abc123",     /* no name */
        ".f.agt-undo-1-2", /* an undo copy's form, not a temporary's */
        ".f.agt-abc123",   /* the form, but the check characters of ".f.agt-abc1" are Fn */
    };
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        char rel[300];
        snprintf(rel, sizeof rel, "sw/%s", kept[i]);
        tu_write(root, rel, "user data\n");
        age(dir, kept[i]);
    }
    /* Our exact form (the last two characters: FNV-1a 64 of the name
     * before them, base 62 over a-z A-Z 0-9, low digit first; worked out
     * with a Python one-liner), but: locked by a live holder, two names, a
     * symlink, a folder. */
    tu_write(root, "sw/.locked.agt-Lk00vg", "held\n");
    age(dir, ".locked.agt-Lk00vg");
    int hold = open(path_of("sw/.locked.agt-Lk00vg"), O_RDONLY);
    T_CHECK(hold >= 0 && flock(hold, LOCK_EX | LOCK_NB) == 0, "the test holds a lock");
    tu_write(root, "sw/.two.agt-Tw00j5", "two names\n");
    char tw[4096];
    snprintf(tw, sizeof tw, "%s", path_of("sw/.two.agt-Tw00j5"));
    link(tw, path_of("sw/two-other"));
    age(dir, ".two.agt-Tw00j5");
    symlink("target", path_of("sw/.link.agt-Ln00yA"));
    age(dir, ".link.agt-Ln00yA");
    tu_mkdir(root, "sw/.dir.agt-Dr00P5");
    age(dir, ".dir.agt-Dr00P5");
    bool other_owner = false;
    if (geteuid() == 0) {
        tu_write(root, "sw/.nobody.agt-Nb00JM", "not ours\n");
        other_owner = chown(path_of("sw/.nobody.agt-Nb00JM"), 65534, 65534) == 0;
        age(dir, ".nobody.agt-Nb00JM");
    }
    /* and one that is ours and stale: the only one removed */
    tu_write(root, "sw/.f.agt-StalYr", "garbage\n");
    age(dir, ".f.agt-StalYr");
    T_EQ_INT(agti_fs_write_atomic(path_of("sw/f"), "f", 1, 0), AGT_OK, "a write into the folder");
    const char *want =
        other_owner ? ".agt-abc123 .dir.agt-Dr00P5 .f.agt-abc12 .f.agt-abc123 .f.agt-abc1234 "
                      ".f.agt-abc12_ .f.agt-undo-1-2 .link.agt-Ln00yA .locked.agt-Lk00vg "
                      ".nobody.agt-Nb00JM .two.agt-Tw00j5 f.agt-abc123"
                    : ".agt-abc123 .dir.agt-Dr00P5 .f.agt-abc12 .f.agt-abc123 .f.agt-abc1234 "
                      ".f.agt-abc12_ .f.agt-undo-1-2 .link.agt-Ln00yA .locked.agt-Lk00vg "
                      ".two.agt-Tw00j5 f.agt-abc123";
    T_EQ_STR(agt_names(dir), want, "only the stale unlocked temporary of ours is removed");
    if (geteuid() == 0 && !other_owner)
        t_skip("cannot chown a file to 65534: the other-owner case is not tested");
    if (geteuid() != 0)
        t_skip("not root: a file of another owner cannot be made here");
    close(hold);
    T_EQ_INT(agti_fs_write_atomic(path_of("sw/f"), "g", 1, 0), AGT_OK, "again, lock released");
    T_CHECK(strstr(agt_names(dir), ".locked.agt-Lk00vg") == NULL,
            "the temporary is removed once its lock is gone: %s", agt_names(dir));
}

/* A file with two names rewritten in place, killed at each step: 1 the
 * undo copy's creation, 2 its write, 4 its fsync, 6 after half of the
 * rewrite, 8 after the rewrite reached the disk (before the undo copy is
 * removed). The file holds the old or the new content, or (6) the first
 * 12 of the 24 new bytes with the complete undo copy next to it; the next
 * write removes the undo copy when the file is old or new, and refuses to
 * write a torn file, naming the copy. */
static void test_kill_in_place(void)
{
    static const char OLD[] = "old content\n";             /* 12 bytes */
    static const char NEW[] = "the new content, longer\n"; /* 24 bytes */
    tu_mkdir(root, "ki");
    char dir[4096], pa[4096 + 16];
    snprintf(dir, sizeof dir, "%s", path_of("ki"));
    snprintf(pa, sizeof pa, "%s/a.txt", dir);
    bool have_tmpfile = tmpfile_works(dir);
    static const int steps[] = {1, 2, 4, 6, 8};
    for (int named = 0; named <= 1; named++) {
        if (!named && !have_tmpfile) {
            t_skip("this file system has no O_TMPFILE: the unnamed path is not tested");
            continue;
        }
        const char *how = named ? "named temporary" : "O_TMPFILE";
        for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
            int step = steps[i];
            unlink(pa);
            unlink(path_of("ki/b.txt"));
            tu_write(root, "ki/a.txt", OLD);
            link(pa, path_of("ki/b.txt"));
            ino_t ino = ino_of(pa);
            char undo[300];
            snprintf(undo, sizeof undo, ".a.txt.agt-undo-%jx-44f74beafab999dc", (uintmax_t)ino);
            T_CHECK(killed_at(pa, NEW, step, named), "%s: killed at step %d", how, step);
            T_CHECK(ino_of(pa) == ino && links_of(pa) == 2, "%s, step %d: same inode, 2 names", how,
                    step);
            const char *names = agt_names(dir);
            if (step <= 4) {
                both_hold("ki/a.txt", "ki/b.txt", OLD, "killed before the rewrite");
                if (named && step >= 2) {
                    T_CHECK(temp_of(names, "a.txt"), "%s, step %d: only the copy's temporary: %s",
                            how, step, names);
                    char tn[300];
                    snprintf(tn, sizeof tn, "%s", names);
                    age(dir, tn);
                    T_EQ_INT(agti_fs_write_atomic(path_of("ki/z"), "z", 1, 0), AGT_OK,
                             "%s, step %d: a write into the folder", how, step);
                    unlink(path_of("ki/z"));
                    T_EQ_STR(agt_names(dir), "", "%s, step %d: the stale temporary removed", how,
                             step);
                } else {
                    T_EQ_STR(names, "", "%s, step %d: nothing left", how, step);
                }
                continue;
            }
            T_EQ_STR(names, undo, "%s, step %d: the undo copy, named by inode and new hash", how,
                     step);
            char up[4096 + 300];
            snprintf(up, sizeof up, "%s/%s", dir, undo);
            char *s = tu_read(up, NULL);
            T_EQ_STR(s, OLD, "%s, step %d: the undo copy holds the old content", how, step);
            free(s);
            if (step == 8) {
                both_hold("ki/a.txt", "ki/b.txt", NEW, "killed after the rewrite");
                T_EQ_INT(agti_fs_write_file(pa, "second\n", 7, 0, NULL), AGT_OK,
                         "%s: the next write after step 8", how);
                both_hold("ki/a.txt", "ki/b.txt", "second\n", "written after step 8");
                T_EQ_STR(agt_names(dir), "", "%s: the settled undo copy removed", how);
                continue;
            }
            /* step 6: torn */
            both_hold("ki/a.txt", "ki/b.txt", "the new cont", "killed halfway");
            bool kept = false;
            T_EQ_INT(agti_fs_write_file(pa, "second\n", 7, 0, &kept), AGT_EIO,
                     "%s: a torn file is not written", how);
            char want[10000];
            snprintf(want, sizeof want,
                     "write: an earlier rewrite of %s in place was interrupted (the process was "
                     "killed): the file may be damaged, and its content from before that rewrite "
                     "is kept in %s/%s; compare the two, restore the file from that copy if "
                     "needed, and delete the copy, then write again; nothing was written",
                     pa, dir, undo);
            T_EQ_STR(agt_error_message(), want, "%s: the message names the copy", how);
            T_CHECK(kept, "%s: kept (nothing was written)", how);
            both_hold("ki/a.txt", "ki/b.txt", "the new cont", "the torn file untouched");
            /* The default mode (links broken) is refused the same way. */
            int dfd = open(dir, O_PATH | O_DIRECTORY);
            agti_write_info info;
            T_EQ_INT(agti_fs_write_at(dfd, "a.txt", pa, "x", 1, 0, &info), AGT_EIO,
                     "%s: replacing the torn file is refused too", how);
            close(dfd);
            T_EQ_STR(agt_names(dir), undo, "%s: the undo copy kept", how);
            /* While a live process holds the undo copy's lock (a rewrite
             * going on now), the copy is not judged at all. */
            int hold = open(up, O_RDONLY);
            T_CHECK(hold >= 0 && flock(hold, LOCK_EX | LOCK_NB) == 0, "%s: undo copy locked", how);
            T_EQ_INT(agti_fs_write_file(pa, "second\n", 7, 0, NULL), AGT_EIO,
                     "%s: a write during another's rewrite is refused", how);
            snprintf(want, sizeof want,
                     "write: %s is being rewritten in place by another process now (its undo "
                     "copy %s/%s is in use); try again when it is done; nothing was written",
                     pa, dir, undo);
            T_EQ_STR(agt_error_message(), want, "%s: the in-progress message", how);
            close(hold);
            /* The user puts the old content back (in place): settled. */
            FILE *f = fopen(pa, "r+");
            fwrite(OLD, 1, 12, f);
            fclose(f);
            T_EQ_INT(agti_fs_write_file(pa, "second\n", 7, 0, NULL), AGT_OK,
                     "%s: written once the file is restored", how);
            both_hold("ki/a.txt", "ki/b.txt", "second\n", "after the restore");
            T_EQ_STR(agt_names(dir), "", "%s: the undo copy removed after the restore", how);
        }
    }
    T_EQ_INT(agti_fs_write_file(pa, "third\n", 6, 0, NULL), AGT_OK, "a last write");
    T_EQ_STR(agt_names(dir), "", "the stale temporaries of the copies removed");
    both_hold("ki/a.txt", "ki/b.txt", "third\n", "last write");
}

static void test_eol(void)
{
    static const struct {
        const char *text;
        int want;
    } det[] = {
        {"a\nb\r\nc\r\n", AGTI_EOL_CRLF}, /* 2 CRLF vs 1 LF */
        {"a\r\nb\nc\n", AGTI_EOL_LF},     /* 1 CRLF vs 2 LF */
        {"a\r\nb\n", AGTI_EOL_CRLF},      /* tie: the first wins */
        {"a\nb\r\n", AGTI_EOL_LF},        /* tie: the first wins */
        {"abc", AGTI_EOL_NONE},           {"", AGTI_EOL_NONE},       {"\n", AGTI_EOL_LF},
        {"\r\n", AGTI_EOL_CRLF},          {"a\rb\r", AGTI_EOL_NONE}, /* lone CR is not a line ending
                                                                        here */
    };
    for (size_t i = 0; i < sizeof det / sizeof det[0]; i++)
        T_EQ_INT(agti_fs_detect_eol(det[i].text, strlen(det[i].text)), det[i].want,
                 "detect_eol case %zu", i);
    size_t n;
    char *s = agti_fs_lf_to_crlf("a\nb\r\n\nc", 7, &n);
    T_EQ_STR(s, "a\r\nb\r\n\r\nc", "lf_to_crlf keeps existing CRLF");
    T_EQ_INT(n, 9, "lf_to_crlf length");
    free(s);
    s = agti_fs_crlf_to_lf("a\r\nb\r\r\nc\r", 9, &n);
    T_EQ_STR(s, "a\nb\r\nc\r", "crlf_to_lf leaves lone CR");
    T_EQ_INT(n, 7, "crlf_to_lf length");
    free(s);
    s = agti_fs_lf_to_crlf(NULL, 0, &n);
    T_EQ_STR(s, "", "empty input");
    free(s);
}

int main(void)
{
    root = tu_mkdtemp();
    test_writes();
    test_failures();
    test_hard_links();
    test_fsize_limit();
    test_permissions();
    test_kill_replace();
    test_sweep_conservative();
    test_kill_in_place();
    test_eol();
    tu_rmtree(root);
    free(root);
    return t_done();
}
