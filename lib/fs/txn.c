/* All-or-nothing writes of several files (apply_patch). Every file that is
 * replaced or removed keeps its old inode under a second name in its own
 * folder (".NAME.agt-old-RRRRCC", agti_fs_temp_name's form, a hard link
 * made before anything is changed) until the whole set is done; the inode
 * is locked (flock) from before that name exists until it is dropped, so
 * the stale sweep of another write (agti_fs_sweep_stale) leaves it alone.
 * A kill leaves second names behind: the next write into that folder (and
 * every commit, first) removes those whose removal loses nothing (at once
 * when the file was never changed: the inode still has its name; ten
 * minutes later when the file holds the same bytes). The others are the only copy of what a file held before a
 * transaction torn by the kill, and stay for the user to compare. each new content is put in place
 * with agti_fs_write_at (a rename over the name, so every file is always
 * either old or new, also after a kill). When a step fails, the steps done
 * are undone in reverse order: the old inode is renamed back over the name
 * (same bytes, same inode, same mode), a file the set created is removed.
 * A file with several names that the session rewrites in place keeps its
 * old content in memory instead and is rewritten back. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

_Thread_local int agti_fs_txn_fail_step;
_Thread_local int agti_fs_txn_kill_step;
_Thread_local bool agti_fs_txn_fail_undo;

typedef struct txn_entry {
    int dirfd;        /* owned (dup) */
    char *name;       /* in dirfd */
    char *display;    /* for messages */
    const void *data; /* borrowed until commit returns; NULL: remove */
    size_t len;
    bool remove;
    unsigned flags;
    /* state during the commit */
    bool existed;
    bool in_place; /* rewritten in place: old content kept in memory */
    char *old;     /* in_place: the old content */
    size_t old_len;
    char bak[NAME_MAX + 1]; /* the old inode's second name, "" when none */
    int lockfd;             /* the old inode, locked while bak is ours; -1 */
    bool done;              /* its change is on disk */
} txn_entry;

struct agti_fs_txn {
    txn_entry *v;
    size_t n, cap;
    int step; /* counted steps of this commit (for the test hook) */
};

int agti_fs_txn_new(agti_fs_txn **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? AGT_OK : agti_oom();
}

void agti_fs_txn_free(agti_fs_txn *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        if (t->v[i].lockfd >= 0)
            close(t->v[i].lockfd);
        free(t->v[i].name);
        free(t->v[i].display);
        free(t->v[i].old);
    }
    free(t->v);
    free(t);
}

static int add(agti_fs_txn *t, int dirfd, const char *name, const char *display, const void *data,
               size_t len, bool remove, unsigned flags)
{
    if (t == NULL || dirfd < 0 || name == NULL || name[0] == '\0' || strchr(name, '/') != NULL ||
        (!remove && data == NULL && len > 0))
        return agti_error(AGT_EINVAL, "txn: the folder, the name and the data must be given");
    if (agti_grow(&t->v, &t->cap, t->n, sizeof *t->v, 8) != AGT_OK)
        return AGT_ENOMEM;
    txn_entry *e = &t->v[t->n];
    memset(e, 0, sizeof *e);
    e->dirfd = dirfd;
    e->lockfd = -1;
    e->name = agti_strdup(name);
    e->display = agti_strdup(display ? display : name);
    if (e->name == NULL || e->display == NULL) {
        free(e->name);
        free(e->display);
        return agti_oom();
    }
    e->data = data;
    e->len = len;
    e->remove = remove;
    e->flags = flags & ~(unsigned)AGTI_WRITE_APPEND;
    t->n++;
    return AGT_OK;
}

int agti_fs_txn_put(agti_fs_txn *t, int dirfd, const char *name, const char *display,
                    const void *data, size_t len, unsigned flags)
{
    return add(t, dirfd, name, display, data ? data : "", len, false, flags);
}

int agti_fs_txn_remove(agti_fs_txn *t, int dirfd, const char *name, const char *display)
{
    return add(t, dirfd, name, display, NULL, 0, true, 0);
}

/* Test hook: whether the commit's next step is the one that fails. */
static bool injected(agti_fs_txn *t)
{
    t->step++;
    if (agti_fs_txn_kill_step > 0 && t->step == agti_fs_txn_kill_step)
        raise(SIGKILL);
    if (agti_fs_txn_fail_step > 0 && t->step == agti_fs_txn_fail_step) {
        agti_fs_txn_fail_step = 0;
        errno = EIO;
        return true;
    }
    return false;
}

static int read_all(int fd, char **out, size_t *len)
{
    agti_buf b = AGTI_BUF_INIT;
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            agti_buf_free(&b);
            return -1;
        }
        if (n == 0)
            break;
        agti_buf_put(&b, chunk, (size_t)n);
    }
    if (b.oom) {
        agti_buf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    *len = b.len;
    *out = b.len ? agti_buf_detach(&b) : agti_strdup("");
    return *out ? 0 : -1;
}

/* Keeps the old state of e before it is changed. */
static int prepare(agti_fs_txn *t, txn_entry *e)
{
    struct stat st;
    if (fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)
            return agti_error(AGT_EIO, "cannot look at %s: %s", e->display, strerror(errno));
        if (e->remove)
            return agti_error(AGT_ENOTFOUND, "%s does not exist (any more)", e->display);
        return AGT_OK;
    }
    if (!S_ISREG(st.st_mode))
        return agti_error(AGT_EINVAL, "%s is not a regular file (any more)", e->display);
    e->existed = true;
    if (!e->remove && st.st_nlink > 1 && (e->flags & AGTI_WRITE_LINKS_IN_PLACE)) {
        e->in_place = true;
        int fd = openat(e->dirfd, e->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0 || injected(t) || read_all(fd, &e->old, &e->old_len) != 0) {
            int er = errno;
            if (fd >= 0)
                close(fd);
            return agti_error(AGT_EIO, "cannot keep a copy of %s: %s", e->display, strerror(er));
        }
        close(fd);
        return AGT_OK;
    }
    /* The lock first: the second name is never there unlocked. */
    int fd = openat(e->dirfd, e->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat fst;
    if (fd < 0 || fstat(fd, &fst) != 0 || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
        int er = fd < 0 ? errno : ESTALE;
        if (fd >= 0)
            close(fd);
        return agti_error(AGT_EIO, "cannot open %s to keep its old content: %s", e->display,
                          strerror(er));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int er = errno;
        close(fd);
        return agti_error(AGT_EIO,
                          "cannot lock %s to keep its old content (%s): another process holds "
                          "a lock on it",
                          e->display, strerror(er));
    }
    e->lockfd = fd;
    for (int i = 0; i < 100; i++) {
        agti_fs_temp_name(e->bak, sizeof e->bak, e->name, AGTI_FS_OLD_INFIX);
        if (injected(t)) {
            e->bak[0] = '\0';
            return agti_error(AGT_EIO, "cannot keep the old %s under a second name: %s", e->display,
                              strerror(errno));
        }
        if (linkat(e->dirfd, e->name, e->dirfd, e->bak, 0) == 0)
            return AGT_OK;
        if (errno != EEXIST) {
            int er = errno;
            e->bak[0] = '\0';
            return agti_error(AGT_EIO, "cannot keep the old %s under a second name: %s", e->display,
                              strerror(er));
        }
    }
    e->bak[0] = '\0';
    return agti_error(AGT_EIO, "cannot keep the old %s under a second name", e->display);
}

static int change(agti_fs_txn *t, txn_entry *e)
{
    if (e->remove) {
        if (injected(t) || unlinkat(e->dirfd, e->name, 0) != 0)
            return agti_error(AGT_EIO, "cannot remove %s: %s", e->display, strerror(errno));
        return AGT_OK;
    }
    if (injected(t))
        return agti_error(AGT_EIO, "write: cannot write %s: %s", e->display, strerror(errno));
    /* A file kept under a second name has two now: it is replaced, never
     * rewritten in place (that would change the kept copy too). */
    unsigned flags = e->in_place ? e->flags : (e->flags & ~(unsigned)AGTI_WRITE_LINKS_IN_PLACE);
    flags |= AGTI_WRITE_NO_DIRSYNC; /* each folder once, at the end */
    agti_write_info info;
    return agti_fs_write_at(e->dirfd, e->name, e->display, e->data, e->len, flags, &info);
}

/* Undoes e's change; false when that failed. */
static bool undo(txn_entry *e)
{
    if (agti_fs_txn_fail_undo) {
        errno = EIO;
        return false;
    }
    if (e->in_place) {
        agti_write_info info;
        return agti_fs_write_at(e->dirfd, e->name, e->display, e->old, e->old_len, e->flags,
                                &info) == AGT_OK;
    }
    if (e->existed) {
        if (renameat(e->dirfd, e->bak, e->dirfd, e->name) != 0)
            return false;
        e->bak[0] = '\0';
        return true;
    }
    return unlinkat(e->dirfd, e->name, 0) == 0 || errno == ENOENT;
}

/* Drops e's second name (when it has one) and the lock on its inode. */
static void drop_bak(txn_entry *e)
{
    if (e->bak[0] != '\0') {
        (void)unlinkat(e->dirfd, e->bak, 0);
        e->bak[0] = '\0';
    }
    if (e->lockfd >= 0) {
        close(e->lockfd);
        e->lockfd = -1;
    }
}

/* Whether entry i's folder is the folder of an entry before it. */
static bool folder_seen(const agti_fs_txn *t, size_t i)
{
    struct stat a, b;
    if (fstat(t->v[i].dirfd, &a) != 0)
        return false;
    for (size_t k = 0; k < i; k++)
        if (fstat(t->v[k].dirfd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
            return true;
    return false;
}

static void fsync_dir(int dirfd)
{
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int agti_fs_txn_commit(agti_fs_txn *t, bool *restored)
{
    if (restored)
        *restored = true;
    if (t == NULL)
        return agti_error(AGT_EINVAL, "txn: NULL");
    t->step = 0;
    int rc = AGT_OK;
    size_t i = 0;
    /* What killed commits left in these folders goes first, so that no
     * stale second name of a file changed now outlives its own. */
    for (i = 0; i < t->n; i++)
        if (!folder_seen(t, i))
            agti_fs_sweep_stale(t->v[i].dirfd);
    i = 0;
    for (; i < t->n && rc == AGT_OK; i++)
        rc = prepare(t, &t->v[i]);
    size_t prepared =
        rc == AGT_OK ? t->n : i; /* entries whose prepare ran (the last may have failed) */
    for (i = 0; rc == AGT_OK && i < t->n; i++) {
        rc = change(t, &t->v[i]);
        t->v[i].done = rc == AGT_OK;
    }
    if (rc == AGT_OK) {
        /* The new names are made durable before success is reported: each
         * folder flushed once, however many files of it changed. */
        for (i = 0; i < t->n; i++)
            if (!folder_seen(t, i))
                fsync_dir(t->v[i].dirfd);
        /* not flushed: a second name a crash leaves is only litter */
        for (i = 0; i < t->n; i++)
            drop_bak(&t->v[i]);
        return AGT_OK;
    }
    /* Roll back, newest first; then drop the second names still there. */
    char *msg = agti_strdup(agt_error_message());
    agti_buf lost = AGTI_BUF_INIT;
    for (i = t->n; i-- > 0;) {
        txn_entry *e = &t->v[i];
        if (!e->done)
            continue;
        if (!undo(e)) {
            agti_buf_printf(&lost, "%s%s", lost.len ? ", " : "", e->display);
            if (e->bak[0] != '\0')
                agti_buf_printf(&lost, " (its old content is in %s next to it)", e->bak);
            e->bak[0] = '\0'; /* the only copy now: it stays */
        }
        fsync_dir(e->dirfd);
    }
    for (i = 0; i < prepared; i++)
        drop_bak(&t->v[i]);
    if (lost.len > 0) {
        if (restored)
            *restored = false;
        rc = agti_error(rc, "%s; putting back the files already changed failed for %s",
                        msg ? msg : "error", agti_buf_cstr(&lost));
    } else {
        rc = agti_error(rc, "%s", msg ? msg : "error");
    }
    free(msg);
    agti_buf_free(&lost);
    return rc;
}
