/* Atomic writes (mode bits, CRLF, append, failures leave the original) and
 * the line-ending helpers. Expected bytes worked out by hand. */
#include <dirent.h>

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
    test_eol();
    tu_rmtree(root);
    free(root);
    return t_done();
}
