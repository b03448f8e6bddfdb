/*
 * Atomic file replacement and line-ending helpers. The new content goes to
 * a temporary file next to the target (same file system, so rename() is
 * atomic), is flushed to disk, gets the original's mode bits (and owner when
 * running as root), and is renamed over the target; the directory is then
 * flushed so the rename itself survives a crash. Until the rename, the
 * original is untouched; every failure removes the temporary file.
 *
 * A file with more than one name (hard links) cannot be replaced that way:
 * the rename would give the written name a new inode and leave the other
 * names on the old content. Such a file is rewritten in place instead, after
 * a backup copy of its content was written and flushed next to it; a failure
 * during the rewrite puts the original content back (from memory) and only
 * when that fails too is the backup left for the user, named in the error.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

_Thread_local int agti_fs_atomic_fail_step;

/* Test hook: pretend that step fails (with EIO). */
static bool injected(int step)
{
    if (agti_fs_atomic_fail_step != step)
        return false;
    agti_fs_atomic_fail_step = 0;
    errno = EIO;
    return true;
}

static mode_t current_umask(void)
{
    /* umask() cannot be read without being set, which races with other
     * threads; Linux publishes it in /proc/self/status. */
    FILE *f = fopen("/proc/self/status", "re");
    mode_t m = 022;
    if (f == NULL)
        return m;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "Umask:", 6) == 0) {
            m = (mode_t)strtoul(line + 6, NULL, 8) & 0777;
            break;
        }
    }
    fclose(f);
    return m;
}

/* mkdir -p of dir; AGT_OK when it exists afterwards. */
static int make_dirs(const char *dir)
{
    char *p = agti_strdup(dir);
    if (p == NULL)
        return agti_oom();
    int rc = AGT_OK;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            struct stat st;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                rc = agti_error(errno == ENOENT ? AGT_ENOTFOUND : AGT_EIO,
                                "cannot create directory %s: %s", p, strerror(errno));
                break;
            }
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                rc = agti_error(AGT_EINVAL, "cannot create directory %s: a file is in the way", p);
                break;
            }
            *s = c;
            if (c == '\0')
                break;
        }
    }
    free(p);
    return rc;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        if (injected(2))
            return -1;
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_existing(const char *path, agti_buf *b)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? AGT_OK
                               : agti_error(AGT_EIO, "cannot read %s: %s", path, strerror(errno));
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            return agti_error(AGT_EIO, "cannot read %s: %s", path, strerror(e));
        }
        if (n == 0)
            break;
        agti_buf_put(b, chunk, (size_t)n);
    }
    close(fd);
    return b->oom ? agti_oom() : AGT_OK;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* Resolves a symlink at path to the file it designates (written through). */
static int target_of(const char *path, char **out)
{
    struct stat st;
    *out = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *r = realpath(path, NULL);
        if (r == NULL)
            return agti_error(AGT_EINVAL,
                              "%s is a symbolic link whose target cannot be resolved (%s)", path,
                              strerror(errno));
        *out = r;
        return AGT_OK;
    }
    *out = agti_strdup(path);
    return *out ? AGT_OK : agti_oom();
}

/* Writes len bytes at off; *done counts the bytes that reached the file. */
static int pwrite_all(int fd, const char *data, size_t len, off_t off, size_t *done)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, data, len, off);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
        off += (off_t)n;
        *done += (size_t)n;
    }
    return 0;
}

/* Rewrites fd from offset 0 with a then b. The test hook's steps 6 and 7
 * stop it with EIO after half of the bytes, a real partial write. */
static int rewrite(int fd, const char *a, size_t alen, const char *b, size_t blen, size_t *done)
{
    *done = 0;
    size_t stop = alen + blen;
    bool fail = agti_fs_atomic_fail_step == 6 || agti_fs_atomic_fail_step == 7;
    if (fail)
        stop /= 2;
    size_t na = alen < stop ? alen : stop;
    if (pwrite_all(fd, a, na, 0, done) != 0 || pwrite_all(fd, b, stop - na, (off_t)alen, done) != 0)
        return -1;
    if (fail) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* Puts the original content back after a failed rewrite. */
static int restore(int fd, const agti_buf *old, bool fail)
{
    size_t done = 0;
    if (fail) {
        errno = EIO;
        return -1;
    }
    if (pwrite_all(fd, old->ptr ? old->ptr : "", old->len, 0, &done) != 0 ||
        ftruncate(fd, (off_t)old->len) != 0 || fsync(fd) != 0)
        return -1;
    return 0;
}

/* Creates the backup copy of old next to target: a temporary file with the
 * same naming as the replacement path, flushed to disk. */
static int make_backup(const char *target, const char *dir, nlink_t nlink, const agti_buf *old,
                       char **out)
{
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    char *bak = agti_aprintf("%s/.%.*s.agt-XXXXXX", dir, 200, base);
    if (bak == NULL)
        return agti_oom();
    int fd;
    if (injected(1) || (fd = mkostemp(bak, O_CLOEXEC)) < 0) {
        int rc = agti_error(AGT_EIO,
                            "write: %s has %ju names (hard links), so it is rewritten in place "
                            "to keep them, and the backup copy of its content cannot be created "
                            "in %s first: %s",
                            target, (uintmax_t)nlink, dir, strerror(errno));
        free(bak);
        return rc;
    }
    if (write_all(fd, old->ptr ? old->ptr : "", old->len) != 0 || injected(4) || fsync(fd) != 0) {
        int rc = agti_error(AGT_EIO, "write: writing the backup copy %s of %s failed: %s", bak,
                            target, strerror(errno));
        close(fd);
        unlink(bak);
        free(bak);
        return rc;
    }
    close(fd);
    *out = bak;
    return AGT_OK;
}

/* The path for a file with several names: backup copy, space reserved,
 * rewrite in place (same inode: every name sees the new content, mode and
 * owner stay), original put back on failure. */
static int write_in_place(const char *target, const char *dir, const struct stat *st,
                          const void *data, size_t len, unsigned flags, bool *kept)
{
    agti_buf old = AGTI_BUF_INIT;
    char *bak = NULL;
    int fd = -1;
    int rc = read_existing(target, &old);
    if (rc != AGT_OK)
        goto out;
    if ((rc = make_backup(target, dir, st->st_nlink, &old, &bak)) != AGT_OK)
        goto out;
    fd = open(target, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rc = agti_error(errno == EACCES || errno == EPERM ? AGT_EDENIED : AGT_EIO,
                        "write: cannot open %s for writing: %s", target, strerror(errno));
        goto out;
    }
    const char *lead = (flags & AGTI_WRITE_APPEND) && old.ptr ? old.ptr : "";
    size_t lead_len = (flags & AGTI_WRITE_APPEND) ? old.len : 0;
    size_t new_len = lead_len + len;
    /* Reserve the blocks first, so a full disk fails before the original is
     * touched (KEEP_SIZE: the file's length and content do not change). File
     * systems without fallocate go on: a failed rewrite is undone below. */
    if (new_len > old.len && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)new_len) != 0 &&
        (errno == ENOSPC || errno == EDQUOT)) {
        rc = agti_error(AGT_EIO, "write: no room to rewrite %s in place (%zu bytes): %s", target,
                        new_len, strerror(errno));
        goto out;
    }
    bool fail_restore = agti_fs_atomic_fail_step == 7;
    size_t done = 0;
    if (rewrite(fd, lead, lead_len, data ? data : "", len, &done) != 0 ||
        ftruncate(fd, (off_t)new_len) != 0 || fsync(fd) != 0) {
        int e = errno;
        agti_fs_atomic_fail_step = 0;
        if (restore(fd, &old, fail_restore) == 0) {
            rc = agti_error(AGT_EIO,
                            "write: rewriting %s in place failed after %zu of %zu bytes (%s); "
                            "its original content was put back",
                            target, done, new_len, strerror(e));
        } else {
            *kept = false;
            rc = agti_error(AGT_EIO,
                            "write: rewriting %s in place failed after %zu of %zu bytes (%s) "
                            "and putting its original content back failed too (%s): the file "
                            "is damaged; its original content is kept in %s",
                            target, done, new_len, strerror(e), strerror(errno), bak);
            free(bak);
            bak = NULL;
        }
        goto out;
    }
out:
    if (fd >= 0)
        close(fd);
    if (bak != NULL) {
        unlink(bak);
        fsync_dir(dir);
    }
    free(bak);
    agti_buf_free(&old);
    return rc;
}

/* Refuses a file this process may not write (its mode, a read-only mount):
 * the rename below would replace it anyway, since only the directory's
 * permissions matter to rename(). The kernel decides (ACLs, capabilities,
 * mounts) through a real open for writing, which changes nothing; a
 * running program's file (ETXTBSY) can still be replaced by rename. */
static int check_writable(const char *target, const struct stat *st)
{
    int fd = open(target, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd >= 0) {
        close(fd);
        return AGT_OK;
    }
    if (errno == EROFS)
        return agti_error(AGT_EIO, "write: %s is on a read-only file system", target);
    if (errno == EACCES || errno == EPERM)
        return agti_error(AGT_EDENIED,
                          "write: %s is read-only (mode %04o): this process may not write it",
                          target, (unsigned)(st->st_mode & 07777));
    return AGT_OK;
}

int agti_fs_write_atomic(const char *path, const void *data, size_t len, unsigned flags)
{
    return agti_fs_write_file(path, data, len, flags, NULL);
}

int agti_fs_write_file(const char *path, const void *data, size_t len, unsigned flags, bool *kept)
{
    bool kept_local;
    if (kept == NULL)
        kept = &kept_local;
    *kept = true;
    if (path == NULL || path[0] == '\0' || (data == NULL && len > 0))
        return agti_error(AGT_EINVAL, "write: the path and the data must be given");
    char *target = NULL, *dirbuf = NULL, *tmp = NULL;
    agti_buf old = AGTI_BUF_INIT;
    int fd = -1;
    int rc = target_of(path, &target);
    if (rc != AGT_OK)
        return rc;
    struct stat st;
    bool exists = stat(target, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is a directory", target);
        goto out;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is not a regular file", target);
        goto out;
    }
    if (exists && (rc = check_writable(target, &st)) != AGT_OK)
        goto out;
    dirbuf = agti_strdup(target);
    if (dirbuf == NULL) {
        rc = agti_oom();
        goto out;
    }
    const char *dir = dirname(dirbuf);
    struct stat dst;
    if (stat(dir, &dst) != 0) {
        if (!(flags & AGTI_WRITE_MKDIRS)) {
            rc = agti_error(AGT_ENOTFOUND, "write: the directory %s does not exist", dir);
            goto out;
        }
        if ((rc = make_dirs(dir)) != AGT_OK)
            goto out;
    } else if (!S_ISDIR(dst.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is not a directory", dir);
        goto out;
    }
    if (exists && st.st_nlink > 1) {
        rc = write_in_place(target, dir, &st, data, len, flags, kept);
        goto out;
    }
    if ((flags & AGTI_WRITE_APPEND) && exists && (rc = read_existing(target, &old)) != AGT_OK)
        goto out;
    const char *base = strrchr(target, '/');
    base = base ? base + 1 : target;
    /* Long names are cut so ".NAME.agt-XXXXXX" stays within NAME_MAX. */
    tmp = agti_aprintf("%s/.%.*s.agt-XXXXXX", dir, 200, base);
    if (tmp == NULL) {
        rc = agti_oom();
        goto out;
    }
    if (injected(1) || (fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
        rc = agti_error(AGT_EIO, "write: cannot create a temporary file in %s: %s", dir,
                        strerror(errno));
        free(tmp);
        tmp = NULL;
        goto out;
    }
    if (write_all(fd, old.ptr ? old.ptr : "", old.len) != 0 ||
        write_all(fd, data ? data : "", len) != 0) {
        rc = agti_error(AGT_EIO, "write: writing %s failed: %s", tmp, strerror(errno));
        goto out;
    }
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
    if (injected(3) || fchmod(fd, mode) != 0) {
        rc = agti_error(AGT_EIO, "write: cannot set mode %o on %s: %s", (unsigned)mode, tmp,
                        strerror(errno));
        goto out;
    }
    if (exists && geteuid() == 0 && (st.st_uid != 0 || st.st_gid != 0))
        (void)!fchown(fd, st.st_uid, st.st_gid);
    if (injected(4) || fsync(fd) != 0) {
        rc = agti_error(AGT_EIO, "write: fsync of %s failed: %s", tmp, strerror(errno));
        goto out;
    }
    int cfd = fd;
    fd = -1;
    if (close(cfd) != 0) {
        rc = agti_error(AGT_EIO, "write: closing %s failed: %s", tmp, strerror(errno));
        goto out;
    }
    if (injected(5) || rename(tmp, target) != 0) {
        rc = agti_error(AGT_EIO, "write: cannot rename %s to %s: %s", tmp, target, strerror(errno));
        goto out;
    }
    free(tmp);
    tmp = NULL;
    fsync_dir(dir);
out:
    if (fd >= 0)
        close(fd);
    if (tmp != NULL)
        unlink(tmp);
    free(tmp);
    free(dirbuf);
    free(target);
    agti_buf_free(&old);
    return rc;
}

int agti_fs_detect_eol(const char *text, size_t len)
{
    size_t lf = 0, crlf = 0;
    int first = AGTI_EOL_NONE;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != '\n')
            continue;
        bool cr = i > 0 && text[i - 1] == '\r';
        if (cr)
            crlf++;
        else
            lf++;
        if (first == AGTI_EOL_NONE)
            first = cr ? AGTI_EOL_CRLF : AGTI_EOL_LF;
    }
    if (crlf > lf)
        return AGTI_EOL_CRLF;
    if (lf > crlf)
        return AGTI_EOL_LF;
    return first;
}

char *agti_fs_lf_to_crlf(const char *text, size_t len, size_t *out_len)
{
    if (text == NULL) {
        text = "";
        len = 0;
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_reserve(&b, len + len / 16);
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) {
            agti_buf_put(&b, text + start, i - start);
            agti_buf_put(&b, "\r\n", 2);
            start = i + 1;
        }
    }
    agti_buf_put(&b, text + start, len - start);
    if (out_len != NULL)
        *out_len = b.len;
    char *r = agti_buf_detach(&b);
    if (r == NULL)
        agti_oom();
    return r;
}

char *agti_fs_crlf_to_lf(const char *text, size_t len, size_t *out_len)
{
    if (text == NULL) {
        text = "";
        len = 0;
    }
    agti_buf b = AGTI_BUF_INIT;
    agti_buf_reserve(&b, len);
    size_t start = 0;
    for (size_t i = 0; i + 1 < len; i++) {
        if (text[i] == '\r' && text[i + 1] == '\n') {
            agti_buf_put(&b, text + start, i - start);
            start = i + 1;
        }
    }
    agti_buf_put(&b, text + start, len - start);
    if (out_len != NULL)
        *out_len = b.len;
    char *r = agti_buf_detach(&b);
    if (r == NULL)
        agti_oom();
    return r;
}
