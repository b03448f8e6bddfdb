/*
 * Placeholders of protected paths (see sandbox_internal.h): a read-only bind
 * mount needs something to cover, so a protected path that does not exist
 * is created empty in the host before a command runs, and removed again when
 * the last command that uses it has ended, so the user's tree is left as it
 * was. A path the user had is never removed.
 *
 * The placeholder must outlive every process of the commands that mount
 * over it: removing a directory that is a mount point in another namespace
 * detaches that mount (Linux >= 3.18), after which the command could create
 * the path after all. Hence:
 *  - one registry per host process: every sandbox that plans a mount over a
 *    placeholder holds a reference to its entry, and the process engine
 *    keeps the sandbox (so the reference) until the command's processes are
 *    all gone (agti_sandbox_release);
 *  - a holder whose processes may still run (no PID namespace, a killed
 *    supervisor) marks the entry kept: it is then left in place;
 *  - across host processes, every user of an empty protected path (one that
 *    may be a placeholder) holds a shared flock on it while its command
 *    runs, and the one removing takes it exclusively first: a placeholder
 *    another process still uses is left in place (fail closed: a leftover
 *    empty folder, never a missing mount);
 *  - a placeholder carries the extended attribute user.agenttools.placeholder
 *    where the filesystem keeps user attributes, so another host process
 *    that finds it knows it is no user's and may remove it when it is the
 *    last user; without the attribute only the creating process removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/xattr.h>
#endif

#include "sandbox_internal.h"

#define MARK_NAME "user.agenttools.placeholder"

struct agti_sb_resv {
    char *path;
    bool is_dir;
    dev_t dev;
    ino_t ino;
    int fd;    /* holds the shared flock */
    bool ours; /* created here, or marked as a placeholder */
    bool keep; /* a holder's processes may outlive it: never removed */
    size_t refs;
    struct agti_sb_resv *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static agti_sb_resv *g_list;

static bool marked(int fd)
{
#ifdef __linux__
    char v[2];
    return fgetxattr(fd, MARK_NAME, v, sizeof v) == 1 && v[0] == '1';
#else
    (void)fd;
    return false;
#endif
}

static void mark(int fd)
{
#ifdef __linux__
    (void)fsetxattr(fd, MARK_NAME, "1", 1, 0); /* ENOTSUP: creator-only removal */
#else
    (void)fd;
#endif
}

static void unmark(int fd)
{
#ifdef __linux__
    (void)fremovexattr(fd, MARK_NAME);
#else
    (void)fd;
#endif
}

static agti_sb_resv *find(const char *path, dev_t dev, ino_t ino)
{
    for (agti_sb_resv *r = g_list; r != NULL; r = r->next)
        if (r->dev == dev && r->ino == ino && strcmp(r->path, path) == 0)
            return r;
    return NULL;
}

static void unlink_entry(agti_sb_resv *r)
{
    for (agti_sb_resv **pp = &g_list; *pp != NULL; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            return;
        }
}

/* Opens path without following a final symbolic link and takes the shared
 * lock; checks that the name still leads to what was locked (a remover may
 * have taken it away in between). 1: locked (*fd, *st); 0: path missing;
 * 2: it is no plain folder or file, or cannot be opened (nothing to hold);
 * -1: error (errno). */
static int open_locked(const char *path, bool is_dir, int *fd, struct stat *st)
{
    for (int tries = 0; tries < 100; tries++) {
        struct stat ls;
        if (lstat(path, &ls) != 0)
            return errno == ENOENT ? 0 : -1;
        if (S_ISDIR(ls.st_mode) != is_dir || !(S_ISDIR(ls.st_mode) || S_ISREG(ls.st_mode)))
            return 2;
        int f =
            open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | (is_dir ? O_DIRECTORY : 0));
        if (f < 0) {
            if (errno == ENOENT)
                continue;
            return errno == EACCES || errno == ELOOP || errno == ENOTDIR ? 2 : -1;
        }
        int lr;
        do {
            lr = flock(f, LOCK_SH);
        } while (lr != 0 && errno == EINTR);
        if (lr != 0 && errno != ENOLCK && errno != EOPNOTSUPP) {
            int e = errno;
            close(f);
            errno = e;
            return -1;
        }
        if (fstat(f, st) == 0 && lstat(path, &ls) == 0 && ls.st_dev == st->st_dev &&
            ls.st_ino == st->st_ino) {
            *fd = f;
            return 1;
        }
        close(f); /* replaced or removed meanwhile: look again */
    }
    errno = EAGAIN;
    return -1;
}

int agti_sb_resv_acquire(const char *path, bool is_dir, agti_sb_resv **out)
{
    *out = NULL;
    pthread_mutex_lock(&g_lock);
    int fd = -1, rc = -1, err = 0;
    bool created = false;
    struct stat st;
    for (int tries = 0; tries < 100; tries++) {
        rc = open_locked(path, is_dir, &fd, &st);
        if (rc != 0)
            break;
        /* missing: reserve it */
        int made;
        if (is_dir) {
            made = mkdir(path, 0755);
        } else {
            int f = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            made = f >= 0 ? 0 : -1;
            if (f >= 0)
                close(f);
        }
        if (made != 0 && errno != EEXIST) {
            rc = -1;
            break;
        }
        created = made == 0;
        rc = open_locked(path, is_dir, &fd, &st);
        if (rc == 1 && created)
            mark(fd);
        if (rc != 0)
            break;
    }
    err = errno;
    if (rc == 2 || (rc == 0)) {
        /* nothing a placeholder could be: the mount covers what is there */
        pthread_mutex_unlock(&g_lock);
        return rc == 2 ? AGTI_SB_RESV_NONE : (errno = EAGAIN, -1);
    }
    if (rc < 0) {
        pthread_mutex_unlock(&g_lock);
        errno = err;
        return -1;
    }
    agti_sb_resv *r = find(path, st.st_dev, st.st_ino);
    if (r != NULL) {
        close(fd); /* this process holds it already */
        r->refs++;
        pthread_mutex_unlock(&g_lock);
        *out = r;
        return AGTI_SB_RESV_HELD;
    }
    r = calloc(1, sizeof *r);
    char *p = r ? strdup(path) : NULL;
    if (p == NULL) {
        free(r);
        close(fd);
        if (created)
            (void)(is_dir ? rmdir(path) : unlink(path));
        pthread_mutex_unlock(&g_lock);
        errno = ENOMEM;
        return -1;
    }
    *r = (agti_sb_resv){p,     is_dir, st.st_dev, st.st_ino, fd, created || marked(fd),
                        false, 1,      g_list};
    g_list = r;
    pthread_mutex_unlock(&g_lock);
    *out = r;
    return AGTI_SB_RESV_HELD;
}

/* Removes the placeholder when no one else holds it: the exclusive lock
 * (another host process's shared one refuses it), the name still leading to
 * it, and still empty (rmdir refuses a folder with entries; a file the user
 * wrote to meanwhile is kept). Returns whether the name is gone. */
static bool remove_placeholder(agti_sb_resv *r)
{
    if (flock(r->fd, LOCK_EX | LOCK_NB) != 0)
        return false;
    struct stat ls, fs;
    if (lstat(r->path, &ls) != 0 || fstat(r->fd, &fs) != 0 || ls.st_dev != r->dev ||
        ls.st_ino != r->ino)
        return false;
    if (r->is_dir)
        return rmdir(r->path) == 0;
    return S_ISREG(fs.st_mode) && fs.st_size == 0 && unlink(r->path) == 0;
}

/*
 * The last close of a removed placeholder evicts its inode, and that is the
 * slow part of a placeholder: freeing a folder's block on a filesystem
 * mounted with `discard` (ext4 here) waits for the device to discard it,
 * measured at 0.3 to 8 ms per folder on this machine's virtual disk, in the
 * call's path after the command has ended. The name is removed before the
 * call returns (nothing is left in the user's tree); the descriptors, which
 * now only pin unlinked inodes nobody can reach, are closed by a detached
 * thread. Without a thread (creation failed) they are closed here.
 */
typedef struct closing {
    size_t n;
    int fds[];
} closing;

/* Closing threads still running (agti_sb_resv_settle waits for none). */
static pthread_mutex_t g_closing_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_closing_done = PTHREAD_COND_INITIALIZER;
static size_t g_closing;

static void closing_count(int delta)
{
    pthread_mutex_lock(&g_closing_lock);
    g_closing = delta > 0 ? g_closing + 1 : g_closing - 1;
    if (g_closing == 0)
        pthread_cond_broadcast(&g_closing_done);
    pthread_mutex_unlock(&g_closing_lock);
}

static void close_all(closing *c)
{
    for (size_t i = 0; i < c->n; i++)
        close(c->fds[i]);
    free(c);
}

static void *close_them(void *arg)
{
    close_all(arg);
    closing_count(-1);
    return NULL;
}

void agti_sb_resv_settle(void)
{
    pthread_mutex_lock(&g_closing_lock);
    while (g_closing > 0)
        pthread_cond_wait(&g_closing_done, &g_closing_lock);
    pthread_mutex_unlock(&g_closing_lock);
}

static void close_later(closing *c)
{
    if (c == NULL || c->n == 0) {
        free(c);
        return;
    }
    pthread_attr_t a;
    bool started = false;
    if (pthread_attr_init(&a) == 0) {
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 64 * 1024);
        /* The host's signals are never delivered to this thread. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_t t;
        closing_count(1);
        started = pthread_create(&t, &a, close_them, c) == 0;
        if (!started)
            closing_count(-1);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&a);
    }
    if (!started)
        close_all(c);
}

void agti_sb_resv_release(agti_sb_resv *const *v, size_t n, bool all_gone)
{
    closing *c = n > 0 ? malloc(sizeof *c + n * sizeof c->fds[0]) : NULL;
    if (c != NULL)
        c->n = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < n; i++) {
        agti_sb_resv *r = v[i];
        if (r == NULL)
            continue;
        if (!all_gone)
            r->keep = true;
        if (--r->refs != 0)
            continue;
        unlink_entry(r);
        bool removed = false;
        if (r->ours && !r->keep)
            removed = remove_placeholder(r);
        else if (r->ours)
            unmark(r->fd); /* left for good: no later command may take it away */
        if (removed && c != NULL)
            c->fds[c->n++] = r->fd;
        else
            close(r->fd);
        free(r->path);
        free(r);
    }
    pthread_mutex_unlock(&g_lock);
    close_later(c);
}
