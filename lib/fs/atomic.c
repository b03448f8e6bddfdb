/*
 * Atomic file replacement and line-ending helpers. Everything happens in
 * one folder opened before (a descriptor, never a path looked up again):
 * the new content goes to an unnamed O_TMPFILE file in that folder (a named
 * temporary ".NAME.agt-XXXXXX" there when the file system has none), is
 * flushed to disk, gets the original's mode bits (and owner when running as
 * root), and is linked into the folder: straight at its name for a new
 * file, else at a temporary name renamed over the old file at once; the
 * folder is then flushed so the rename itself survives a crash. Until the
 * rename, the original is untouched; every failure removes what was made.
 *
 * A kill can still leave a named temporary behind (between its link and the
 * rename, or anywhere on the named path). Each temporary is locked (flock)
 * by its writer from the moment it exists, and every later write into the
 * same folder removes the temporaries of ours that are stale: the exact
 * name pattern (its last two characters check the rest), a regular file
 * with one name, owned by this user, unchanged
 * for AGTI_FS_STALE_TEMP_S seconds, and not locked (its writer is gone).
 * The same sweep removes the second names ".NAME.agt-old-RRRRCC" that a
 * killed transaction of several files (txn.c) left, when that loses
 * nothing (sweep_old). Anything else is left alone.
 *
 * A file with more than one name (hard links) is replaced the same way by
 * default: its other names, which may lie outside the workspace, keep the
 * old content and the caller says the link was broken. With
 * AGTI_WRITE_LINKS_IN_PLACE it is rewritten in place instead, under an undo
 * copy: the old content is written to a temporary, flushed, and linked as
 * ".NAME.agt-undo-INODE-HASH" (INODE the file's inode, HASH the FNV-1a
 * hash of the new content, both in hex), so that name only ever holds a
 * complete copy; then the file is rewritten, truncated and flushed, and the
 * undo copy removed. A failure puts the old content back from memory; a
 * kill leaves the file old, new, or torn with the complete undo copy next
 * to it. The next write of that file finds the undo copy: when the file
 * holds the old content (the rewrite never began) or the new one (it
 * ended), the copy is removed; else the file may be torn and the write is
 * refused, naming the copy, which is never removed behind the user's back.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <libgen.h>
#include <signal.h>
#include <sys/random.h>
#include <time.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"

_Thread_local int agti_fs_atomic_fail_step;
_Thread_local int agti_fs_atomic_kill_step;
_Thread_local bool agti_fs_no_tmpfile;

/* Test hook: pretend that step fails (with EIO), or die there. */
static bool injected(int step)
{
    if (agti_fs_atomic_kill_step == step)
        raise(SIGKILL);
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

static const char temp_abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
#define TEMP_ABC_N (sizeof temp_abc - 1)

/* The two check characters that end a temporary's name: FNV-1a 64 of the
 * name before them, base 62, low digit first. */
static void temp_check(const char *s, size_t n, char out[2])
{
    uint64_t h = 14695981039346656037u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211u;
    out[0] = temp_abc[h % TEMP_ABC_N];
    out[1] = temp_abc[(h / TEMP_ABC_N) % TEMP_ABC_N];
}

/* A random ".NAME" INFIX "RRRRCC" (long names cut to stay within
 * NAME_MAX; INFIX AGTI_FS_TEMP_INFIX for the temporaries here,
 * AGTI_FS_OLD_INFIX for txn.c's second names): four random letters or
 * digits and two check characters over all before them, so a user's file
 * of that shape is not taken for one of ours (one in 3,844 by chance). */
void agti_fs_temp_name(char *out, size_t outsz, const char *name, const char *infix)
{
    unsigned char rnd[4];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        uint64_t v = (uint64_t)getpid() * 6364136223846793005u ^ (uint64_t)(uintptr_t)out ^
                     (uint64_t)time(NULL) ^ (uint64_t)clock();
        for (size_t i = 0; i < sizeof rnd; i++, v >>= 8)
            rnd[i] = (unsigned char)v;
    }
    char suf[5];
    for (size_t i = 0; i < 4; i++)
        suf[i] = temp_abc[rnd[i] % TEMP_ABC_N];
    suf[4] = '\0';
    int n = snprintf(out, outsz, ".%.*s%s%s", 200, name, infix, suf);
    if (n > 0 && (size_t)n + 3 <= outsz) {
        temp_check(out, (size_t)n, out + n);
        out[n + 2] = '\0';
    }
}

static void temp_name(char *out, size_t outsz, const char *name)
{
    agti_fs_temp_name(out, outsz, name, AGTI_FS_TEMP_INFIX);
}

/* A named temporary in dirfd, created exclusively (mode 0600). */
static int make_named_temp(int dirfd, const char *name, char *tmp, size_t tmpsz)
{
    for (int i = 0; i < 100; i++) {
        temp_name(tmp, tmpsz, name);
        int fd = openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            /* Locked while its writer lives: the stale-temporary sweep of
             * another write leaves a locked one alone. */
            (void)flock(fd, LOCK_EX | LOCK_NB);
            return fd;
        }
        if (errno != EEXIST)
            return fd;
    }
    errno = EEXIST;
    return -1;
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

static int read_fd(int fd, const char *display, agti_buf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return agti_error(AGT_EIO, "cannot read %s: %s", display, strerror(errno));
        if (n == 0)
            break;
        agti_buf_put(b, chunk, (size_t)n);
    }
    return b->oom ? agti_oom() : AGT_OK;
}

static int read_existing_at(int dirfd, const char *name, const char *display, agti_buf *b)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT
                   ? AGT_OK
                   : agti_error(AGT_EIO, "cannot read %s: %s", display, strerror(errno));
    int rc = read_fd(fd, display, b);
    close(fd);
    return rc;
}

static void fsync_dirfd(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* The folder part of display, for messages ("." when there is none). */
static char *dir_display(const char *display)
{
    const char *sl = strrchr(display, '/');
    if (sl == NULL)
        return agti_strdup(".");
    if (sl == display)
        return agti_strdup("/");
    return agti_strndup(display, (size_t)(sl - display));
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
    bool kill = agti_fs_atomic_kill_step == 6;
    if (fail || kill)
        stop /= 2;
    size_t na = alen < stop ? alen : stop;
    if (pwrite_all(fd, a, na, 0, done) != 0 || pwrite_all(fd, b, stop - na, (off_t)alen, done) != 0)
        return -1;
    if (kill)
        raise(SIGKILL);
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

/* Refuses a file this process may not write (its mode, a read-only mount):
 * the rename below would replace it anyway, since only the directory's
 * permissions matter to rename(). The kernel decides (ACLs, capabilities,
 * mounts) through a real open for writing, which changes nothing; a
 * running program's file (ETXTBSY) can still be replaced by rename. */
static int check_writable(int dirfd, const char *name, const char *display, const struct stat *st)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd >= 0) {
        close(fd);
        return AGT_OK;
    }
    if (errno == EROFS)
        return agti_error(AGT_EIO, "write: %s is on a read-only file system", display);
    if (errno == EACCES || errno == EPERM)
        return agti_error(AGT_EDENIED,
                          "write: %s is read-only (mode %04o): this process may not write it",
                          display, (unsigned)(st->st_mode & 07777));
    return AGT_OK;
}

/* Gives the unnamed O_TMPFILE file fd the name newname in dirfd. */
static int link_tmpfile(int fd, int dirfd, const char *newname)
{
    if (linkat(fd, "", dirfd, newname, AT_EMPTY_PATH) == 0)
        return 0;
    if (errno == EEXIST)
        return -1;
    /* Without CAP_DAC_READ_SEARCH: the way open(2) documents, through the
     * process's own descriptor. */
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, p, dirfd, newname, AT_SYMLINK_FOLLOW);
}

/* A new empty file for content in dirfd, locked: unnamed (O_TMPFILE, *tmp
 * left empty) unless named is set or the file system has no O_TMPFILE (or
 * the test hook agti_fs_no_tmpfile says so), else the named temporary *tmp. */
static int open_temp(int dirfd, const char *name, bool named, char *tmp, size_t tmpsz)
{
    tmp[0] = '\0';
    if (!named && !agti_fs_no_tmpfile) {
        int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        if (fd >= 0) {
            (void)flock(fd, LOCK_EX | LOCK_NB);
            return fd;
        }
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT)
            return -1;
    }
    return make_named_temp(dirfd, name, tmp, tmpsz);
}

/* Creates, fills and flushes the new content's file in dirfd: unnamed
 * (*tmp left empty) or named *tmp. -1 with the message set on failure. */
static int new_content(int dirfd, const char *name, const char *display, const agti_buf *old,
                       const void *data, size_t len, mode_t mode, const struct stat *st,
                       bool exists, bool named, char *tmp, size_t tmpsz, int *rc)
{
    int fd = -1;
    tmp[0] = '\0';
    char *dir = dir_display(display);
    if (dir == NULL) {
        *rc = agti_oom();
        return -1;
    }
    if (injected(1)) {
        fd = -1;
    } else {
        fd = open_temp(dirfd, name, named, tmp, tmpsz);
    }
    if (fd < 0) {
        *rc = agti_error(AGT_EIO, "write: cannot create a temporary file in %s: %s", dir,
                         strerror(errno));
        tmp[0] = '\0';
        free(dir);
        return -1;
    }
    const char *what = tmp[0] ? tmp : "the new content";
    if (write_all(fd, old->ptr ? old->ptr : "", old->len) != 0 ||
        write_all(fd, data ? data : "", len) != 0) {
        *rc = agti_error(AGT_EIO, "write: writing %s of %s failed: %s", what, display,
                         strerror(errno));
        goto fail;
    }
    if (injected(3) || fchmod(fd, mode) != 0) {
        *rc = agti_error(AGT_EIO, "write: cannot set mode %o on %s of %s: %s", (unsigned)mode, what,
                         display, strerror(errno));
        goto fail;
    }
    if (exists && geteuid() == 0 && (st->st_uid != 0 || st->st_gid != 0))
        (void)!fchown(fd, st->st_uid, st->st_gid);
    if (injected(4) || fsync(fd) != 0) {
        *rc = agti_error(AGT_EIO, "write: fsync of %s of %s failed: %s", what, display,
                         strerror(errno));
        goto fail;
    }
    free(dir);
    return fd;
fail:
    close(fd);
    if (tmp[0])
        unlinkat(dirfd, tmp, 0);
    tmp[0] = '\0';
    free(dir);
    return -1;
}

/* ---- in-place rewrites under an undo copy ---------------------------- */

#define UNDO_INFIX ".agt-undo-"

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211u;
    return h;
}

#define FNV_START 14695981039346656037u

/* ".NAME.agt-undo-INODE-HASH" (NAME cut like temp_name's). */
static void undo_name(char *out, size_t outsz, const char *name, ino_t ino, uint64_t hash)
{
    snprintf(out, outsz, ".%.*s" UNDO_INFIX "%jx-%016jx", 200, name, (uintmax_t)ino,
             (uintmax_t)hash);
}

/* Whether ent is an undo copy of the file name with inode ino; *hash gets
 * the hash of the new content it was made for. */
static bool is_undo_of(const char *ent, const char *name, ino_t ino, uint64_t *hash)
{
    char want[NAME_MAX + 1];
    int n = snprintf(want, sizeof want, ".%.*s" UNDO_INFIX "%jx-", 200, name, (uintmax_t)ino);
    if (n < 0 || (size_t)n >= sizeof want || strncmp(ent, want, (size_t)n) != 0)
        return false;
    const char *h = ent + n;
    if (strlen(h) != 16 || strspn(h, "0123456789abcdef") != 16)
        return false;
    *hash = (uint64_t)strtoull(h, NULL, 16);
    return true;
}

/* The undo copy of old in dirfd: a temporary filled and flushed, then
 * linked at its undo name (so that name only ever holds a complete copy)
 * and the folder flushed. undo gets the name, *ufd its descriptor, which
 * holds its lock until the rewrite is over (another process's write of the
 * same file then knows it is in progress). */
static int make_undo(int dirfd, const char *name, const char *display, const char *dir,
                     const struct stat *st, const agti_buf *old, uint64_t hash, char *undo,
                     size_t undosz, int *ufd)
{
    *ufd = -1;
    char tmp[NAME_MAX + 1];
    int fd = -1;
    undo[0] = '\0';
    if (injected(1) || (fd = open_temp(dirfd, name, false, tmp, sizeof tmp)) < 0)
        return agti_error(AGT_EIO,
                          "write: %s has %ju names (hard links), so it is rewritten in place "
                          "to keep them, and the backup copy of its content cannot be created "
                          "in %s first: %s",
                          display, (uintmax_t)st->st_nlink, dir, strerror(errno));
    int rc = AGT_OK;
    if (write_all(fd, old->ptr ? old->ptr : "", old->len) != 0 || injected(4) || fsync(fd) != 0) {
        rc = agti_error(AGT_EIO, "write: writing the backup copy of %s into %s failed: %s", display,
                        dir, strerror(errno));
        goto out;
    }
    undo_name(undo, undosz, name, st->st_ino, hash);
    int lr = tmp[0] ? linkat(dirfd, tmp, dirfd, undo, 0) : link_tmpfile(fd, dirfd, undo);
    if (lr != 0) {
        rc = agti_error(AGT_EIO,
                        errno == EEXIST
                            ? "write: %s is being rewritten in place by another write (its "
                              "backup copy %s/%s exists); try again"
                            : "write: cannot name the backup copy %s/%s of %s: %s",
                        errno == EEXIST ? display : dir, errno == EEXIST ? dir : undo,
                        errno == EEXIST ? undo : display, strerror(errno));
        undo[0] = '\0';
        goto out;
    }
    fsync_dirfd(dirfd);
    *ufd = fd;
    fd = -1;
out:
    if (fd >= 0)
        close(fd);
    if (tmp[0])
        unlinkat(dirfd, tmp, 0);
    return rc;
}

/* Whether the open file fd holds exactly the content of the undo copy open
 * as ufd. */
static bool same_as_undo(int fd, int ufd)
{
    struct stat a, b;
    bool same =
        fstat(fd, &a) == 0 && fstat(ufd, &b) == 0 && S_ISREG(b.st_mode) && a.st_size == b.st_size;
    char x[65536], y[65536];
    for (off_t off = 0; same;) {
        ssize_t n = pread(fd, x, sizeof x, off);
        ssize_t m = n > 0 ? pread(ufd, y, (size_t)n, off) : 0;
        if (n < 0 || m != n || (n > 0 && memcmp(x, y, (size_t)n) != 0))
            same = false;
        if (n <= 0)
            break;
        off += n;
    }
    return same;
}

/* FNV-1a of the whole content of fd; false when it cannot be read. */
static bool hash_fd(int fd, uint64_t *out)
{
    char buf[65536];
    uint64_t h = FNV_START;
    for (off_t off = 0;;) {
        ssize_t n = pread(fd, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        if (n == 0)
            break;
        h = fnv1a(h, buf, (size_t)n);
        off += n;
    }
    *out = h;
    return true;
}

/* An undo copy undo (made for new content with hash) of the file name
 * found before a write: removed when the file holds either side of that
 * rewrite, else the write is refused and the copy kept. */
static int settle_undo(int dirfd, const char *name, const char *display, const char *undo,
                       uint64_t hash)
{
    char *dir = NULL;
    int rc;
    int ufd = openat(dirfd, undo, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (ufd < 0)
        return AGT_OK; /* gone meanwhile: settled by its own writer */
    if (flock(ufd, LOCK_EX | LOCK_NB) != 0) {
        /* Its writer is alive: a rewrite of this file is going on now. */
        close(ufd);
        dir = dir_display(display);
        rc = agti_error(AGT_EIO,
                        "write: %s is being rewritten in place by another process now (its "
                        "undo copy %s/%s is in use); try again when it is done; nothing was "
                        "written",
                        display, dir ? dir : ".", undo);
        free(dir);
        return rc;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    uint64_t now;
    bool settled = fd >= 0 && ((hash_fd(fd, &now) && now == hash) || same_as_undo(fd, ufd));
    if (fd >= 0)
        close(fd);
    if (settled) {
        unlinkat(dirfd, undo, 0);
        close(ufd);
        fsync_dirfd(dirfd);
        return AGT_OK;
    }
    close(ufd);
    dir = dir_display(display);
    rc = agti_error(AGT_EIO,
                    "write: an earlier rewrite of %s in place was interrupted (the process "
                    "was killed): the file may be damaged, and its content from before that "
                    "rewrite is kept in %s/%s; compare the two, restore the file from that "
                    "copy if needed, and delete the copy, then write again; nothing was "
                    "written",
                    display, dir ? dir : ".", undo);
    free(dir);
    return rc;
}

/* Age after which an unlocked temporary of ours is stale, seconds. */
#define AGTI_FS_STALE_TEMP_S 600

/* Whether ent has the exact form of agti_fs_temp_name's names with infix:
 * ".", at least one byte, infix, four letters or digits, and the right two
 * check characters. */
static bool is_temp_name(const char *ent, const char *infix)
{
    size_t n = strlen(ent), k = strlen(infix);
    if (ent[0] != '.' || n < 1 + 1 + k + 6)
        return false;
    const char *t = ent + n - k - 6;
    if (memcmp(t, infix, k) != 0)
        return false;
    for (size_t i = k; i < k + 6; i++) {
        char c = t[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    char chk[2];
    temp_check(ent, n - 2, chk);
    return chk[0] == ent[n - 2] && chk[1] == ent[n - 1];
}

_Thread_local time_t agti_fs_sweep_clock_shift;

/* Opens the candidate ent of dirfd for a sweep and takes its lock: the
 * descriptor, or -1 when it is not ours to remove (not a regular file,
 * not this user's, changed within AGTI_FS_STALE_TEMP_S seconds (but see
 * any_age), replaced meanwhile, or locked: its writer lives). A temporary's age is its
 * content's (mtime); a second name's is the inode's (ctime: making the
 * name set it, while mtime is the user's file's). *st gets its status. */
static int sweep_open(int dirfd, const char *ent, time_t now, bool by_ctime, struct stat *st)
{
    struct stat lst;
    if (fstatat(dirfd, ent, &lst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(lst.st_mode) ||
        lst.st_uid != geteuid())
        return -1;
    /* A second name whose inode has another name is any age: its writer
     * locked the inode before making the name, so unlocked it is dead. */
    bool any_age = by_ctime && lst.st_nlink >= 2;
    if (!any_age && (by_ctime ? lst.st_ctime : lst.st_mtime) > now - AGTI_FS_STALE_TEMP_S)
        return -1;
    int fd = openat(dirfd, ent, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    if (fstat(fd, st) != 0 || st->st_ino != lst.st_ino || st->st_dev != lst.st_dev ||
        flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Removes the temporary ent of dirfd when it is stale (see the top): it
 * holds new content that never got its name, one name only. */
static void sweep_temp(int dirfd, const char *ent, time_t now)
{
    struct stat st;
    int fd = sweep_open(dirfd, ent, now, false, &st);
    if (fd < 0)
        return;
    if (st.st_nlink == 1)
        unlinkat(dirfd, ent, 0);
    close(fd);
}

/* Removes the second name ent (".NAME" AGTI_FS_OLD_INFIX "RRRRCC") that a
 * killed all-or-nothing write of several files (txn.c) left, when it is
 * stale and removing it loses nothing: the inode has another name too (the
 * file it was kept for was never changed), or the folder's NAME holds the
 * same bytes. Else it is the only copy of what NAME held before a
 * transaction that was torn, and it stays for the user. */
static void sweep_old(int dirfd, const char *ent, time_t now)
{
    struct stat st;
    int fd = sweep_open(dirfd, ent, now, true, &st);
    if (fd < 0)
        return;
    bool lossless = st.st_nlink >= 2;
    if (!lossless) {
        size_t n = strlen(ent) - strlen(AGTI_FS_OLD_INFIX) - 6;
        char name[NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s", (int)(n - 1), ent + 1);
        struct stat nst;
        int nfd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        lossless = nfd >= 0 && fstat(nfd, &nst) == 0 && S_ISREG(nst.st_mode) &&
                   (nst.st_ino != st.st_ino || nst.st_dev != st.st_dev) && same_as_undo(nfd, fd);
        if (nfd >= 0)
            close(nfd);
    }
    struct stat again;
    if (lossless && fstatat(dirfd, ent, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
        again.st_ino == st.st_ino && again.st_dev == st.st_dev)
        unlinkat(dirfd, ent, 0);
    close(fd);
}

/* Removes the stale temporaries and second names of ours in dirfd. */
static void sweep(int dirfd, DIR *d, time_t now, const char *name, const struct stat *st,
                  char *undo, size_t undosz, uint64_t *hash)
{
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] != '.' || strstr(de->d_name, ".agt-") == NULL)
            continue;
        uint64_t h;
        if (is_temp_name(de->d_name, AGTI_FS_TEMP_INFIX))
            sweep_temp(dirfd, de->d_name, now);
        else if (is_temp_name(de->d_name, AGTI_FS_OLD_INFIX))
            sweep_old(dirfd, de->d_name, now);
        else if (st != NULL && undo[0] == '\0' && is_undo_of(de->d_name, name, st->st_ino, &h)) {
            snprintf(undo, undosz, "%s", de->d_name);
            *hash = h;
        }
    }
}

static DIR *open_dir(int dirfd)
{
    int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return NULL;
    DIR *d = fdopendir(dfd);
    if (d == NULL)
        close(dfd);
    return d;
}

void agti_fs_sweep_stale(int dirfd)
{
    DIR *d = open_dir(dirfd);
    if (d == NULL)
        return;
    char undo[1] = "";
    uint64_t hash = 0;
    sweep(dirfd, d, time(NULL) + agti_fs_sweep_clock_shift, NULL, NULL, undo, sizeof undo, &hash);
    closedir(d);
}

/* One look at the folder before a write of name (st: the file, when it
 * exists): stale temporaries of ours are removed, and an undo copy of name
 * left by an interrupted in-place rewrite is settled (settle_undo). */
static int tidy_folder(int dirfd, const char *name, const char *display, const struct stat *st)
{
    DIR *d = open_dir(dirfd);
    if (d == NULL)
        return AGT_OK;
    char undo[NAME_MAX + 1] = "";
    uint64_t hash = 0;
    sweep(dirfd, d, time(NULL) + agti_fs_sweep_clock_shift, name, st, undo, sizeof undo, &hash);
    closedir(d);
    return undo[0] ? settle_undo(dirfd, name, display, undo, hash) : AGT_OK;
}

/* The path for a file with several names written in place: undo copy,
 * space reserved, rewrite in place (same inode: every name sees the new
 * content, mode and owner stay), original put back on failure, undo copy
 * removed. */
static int write_in_place(int dirfd, const char *name, const char *display, const struct stat *st,
                          const void *data, size_t len, unsigned flags, bool *kept)
{
    agti_buf old = AGTI_BUF_INIT;
    char undo[NAME_MAX + 1] = "";
    char *dir = dir_display(display);
    int fd = -1, ufd = -1;
    int rc = dir ? AGT_OK : agti_oom();
    if (rc != AGT_OK)
        goto out;
    fd = openat(dirfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        rc = agti_error(errno == EACCES || errno == EPERM ? AGT_EDENIED : AGT_EIO,
                        "write: cannot open %s for writing: %s", display, strerror(errno));
        goto out;
    }
    struct stat fst;
    if (fstat(fd, &fst) != 0 || fst.st_ino != st->st_ino || fst.st_dev != st->st_dev) {
        rc = agti_error(AGT_EIO, "write: %s was replaced while it was written; nothing was written",
                        display);
        goto out;
    }
    if ((rc = read_fd(fd, display, &old)) != AGT_OK)
        goto out;
    const char *lead = (flags & AGTI_WRITE_APPEND) && old.ptr ? old.ptr : "";
    size_t lead_len = (flags & AGTI_WRITE_APPEND) ? old.len : 0;
    size_t new_len = lead_len + len;
    uint64_t hash = fnv1a(fnv1a(FNV_START, lead, lead_len), data ? data : "", len);
    if ((rc = make_undo(dirfd, name, display, dir, &fst, &old, hash, undo, sizeof undo, &ufd)) !=
        AGT_OK)
        goto out;
    /* Reserve the blocks first, so a full disk fails before the original is
     * touched (KEEP_SIZE: the file's length and content do not change). File
     * systems without fallocate go on: a failed rewrite is undone below. */
    if (new_len > old.len && fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)new_len) != 0 &&
        (errno == ENOSPC || errno == EDQUOT)) {
        rc = agti_error(AGT_EIO, "write: no room to rewrite %s in place (%zu bytes): %s", display,
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
                            display, done, new_len, strerror(e));
        } else {
            *kept = false;
            rc = agti_error(AGT_EIO,
                            "write: rewriting %s in place failed after %zu of %zu bytes (%s) "
                            "and putting its original content back failed too (%s): the file "
                            "is damaged; its original content is kept in %s/%s",
                            display, done, new_len, strerror(e), strerror(errno), dir, undo);
            undo[0] = '\0';
        }
        goto out;
    }
    /* Test hook: a kill after the rewrite reached the disk, before the undo
     * copy is removed (the next write finds the new content and removes it). */
    (void)injected(8);
out:
    if (fd >= 0)
        close(fd);
    if (undo[0] != '\0') {
        unlinkat(dirfd, undo, 0);
        fsync_dirfd(dirfd);
    }
    if (ufd >= 0)
        close(ufd);
    free(dir);
    agti_buf_free(&old);
    return rc;
}

int agti_fs_write_at(int dirfd, const char *name, const char *display, const void *data, size_t len,
                     unsigned flags, agti_write_info *info)
{
    agti_write_info local;
    if (info == NULL)
        info = &local;
    memset(info, 0, sizeof *info);
    info->kept = true;
    if (dirfd < 0 || name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
        (data == NULL && len > 0))
        return agti_error(AGT_EINVAL, "write: the folder, the name and the data must be given");
    if (display == NULL)
        display = name;
    agti_buf old = AGTI_BUF_INIT;
    char tmp[NAME_MAX + 1] = "";
    int fd = -1;
    int rc = AGT_OK;
    struct stat st;
    bool exists = fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && S_ISLNK(st.st_mode)) {
        rc = agti_error(AGT_EINVAL,
                        "write: %s was replaced by a symbolic link while it was written; nothing "
                        "was written",
                        display);
        goto out;
    }
    if (exists && S_ISDIR(st.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is a directory", display);
        goto out;
    }
    if (exists && !S_ISREG(st.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is not a regular file", display);
        goto out;
    }
    if (exists && (rc = check_writable(dirfd, name, display, &st)) != AGT_OK)
        goto out;
    if ((rc = tidy_folder(dirfd, name, display, exists ? &st : NULL)) != AGT_OK)
        goto out;
    info->existed = exists;
    info->nlink = exists ? (unsigned long)st.st_nlink : 0;
    info->old_size = exists ? (uint64_t)st.st_size : 0;
    if (exists && st.st_nlink > 1 && (flags & AGTI_WRITE_LINKS_IN_PLACE)) {
        rc = write_in_place(dirfd, name, display, &st, data, len, flags, &info->kept);
        info->in_place = rc == AGT_OK;
        goto out;
    }
    if ((flags & AGTI_WRITE_APPEND) && exists &&
        (rc = read_existing_at(dirfd, name, display, &old)) != AGT_OK)
        goto out;
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~current_umask());
    fd = new_content(dirfd, name, display, &old, data, len, mode, &st, exists, false, tmp,
                     sizeof tmp, &rc);
    if (fd < 0)
        goto out;
    if (tmp[0] == '\0') {
        /* Unnamed: a new file gets its name in one step; else a temporary
         * name for the rename (two calls in a row, nothing in between). */
        bool linked = false;
        if (!exists) {
            if (injected(5)) {
                rc = agti_error(AGT_EIO, "write: cannot give the new content the name %s: %s",
                                display, strerror(errno));
                goto out;
            }
            if (link_tmpfile(fd, dirfd, name) == 0)
                linked = true;
            else if (errno != EEXIST)
                goto relink;
        }
        if (!linked) {
            for (int i = 0; i < 100; i++) {
                temp_name(tmp, sizeof tmp, name);
                if (link_tmpfile(fd, dirfd, tmp) == 0)
                    break;
                if (errno != EEXIST) {
                    tmp[0] = '\0';
                    goto relink;
                }
                tmp[0] = '\0';
            }
            if (tmp[0] == '\0') {
                rc = agti_error(AGT_EIO, "write: cannot name the new content of %s: %s", display,
                                strerror(errno));
                goto out;
            }
        }
        goto named;
    relink:
        /* O_TMPFILE works but its file cannot be linked (no /proc): the
         * content once more, into a named temporary. */
        close(fd);
        fd = new_content(dirfd, name, display, &old, data, len, mode, &st, exists, true, tmp,
                         sizeof tmp, &rc);
        if (fd < 0)
            goto out;
    named:
        if (linked) {
            close(fd);
            fd = -1;
            if (!(flags & AGTI_WRITE_NO_DIRSYNC))
                fsync_dirfd(dirfd);
            goto done;
        }
    }
    int cfd = fd;
    fd = -1;
    if (close(cfd) != 0) {
        rc = agti_error(AGT_EIO, "write: closing the new content of %s failed: %s", display,
                        strerror(errno));
        goto out;
    }
    if (injected(5) || renameat(dirfd, tmp, dirfd, name) != 0) {
        rc = agti_error(AGT_EIO, "write: cannot rename the new content over %s: %s", display,
                        strerror(errno));
        goto out;
    }
    tmp[0] = '\0';
    if (!(flags & AGTI_WRITE_NO_DIRSYNC))
        fsync_dirfd(dirfd);
done:
    info->link_broken = exists && st.st_nlink > 1;
out:
    if (fd >= 0)
        close(fd);
    if (tmp[0] != '\0')
        unlinkat(dirfd, tmp, 0);
    agti_buf_free(&old);
    return rc;
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

int agti_fs_write_atomic(const char *path, const void *data, size_t len, unsigned flags)
{
    return agti_fs_write_file(path, data, len, flags, NULL);
}

/* The path interface (for hosts and tests; the tools use agti_fs_write_at
 * with a confined folder): a symlink at path is written through, the folder
 * is opened by name, and a file with several names is rewritten in place. */
int agti_fs_write_file(const char *path, const void *data, size_t len, unsigned flags, bool *kept)
{
    bool kept_local;
    if (kept == NULL)
        kept = &kept_local;
    *kept = true;
    if (path == NULL || path[0] == '\0' || (data == NULL && len > 0))
        return agti_error(AGT_EINVAL, "write: the path and the data must be given");
    char *target = NULL, *dirbuf = NULL, *basebuf = NULL;
    struct stat lst;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        target = realpath(path, NULL);
        if (target == NULL)
            return agti_error(AGT_EINVAL,
                              "%s is a symbolic link whose target cannot be resolved (%s)", path,
                              strerror(errno));
    } else if ((target = agti_strdup(path)) == NULL) {
        return agti_oom();
    }
    int rc = AGT_OK, dfd = -1;
    dirbuf = agti_strdup(target);
    basebuf = agti_strdup(target);
    if (dirbuf == NULL || basebuf == NULL) {
        rc = agti_oom();
        goto out;
    }
    const char *dir = dirname(dirbuf);
    const char *name = basename(basebuf);
    struct stat st;
    if (stat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = agti_error(AGT_EINVAL, "write: %s is a directory", target);
        goto out;
    }
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
    dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        rc = agti_error(AGT_EIO, "write: cannot open the directory %s: %s", dir, strerror(errno));
        goto out;
    }
    agti_write_info info;
    rc = agti_fs_write_at(dfd, name, target, data, len, flags | AGTI_WRITE_LINKS_IN_PLACE, &info);
    *kept = info.kept;
out:
    if (dfd >= 0)
        close(dfd);
    free(dirbuf);
    free(basebuf);
    free(target);
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
