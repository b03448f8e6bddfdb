/*
 * Confined resolution: a user path is looked up and opened relative to the
 * descriptor of a directory opened once (the workspace root, an allowed
 * directory), so that no name is looked up twice and a folder swapped for a
 * symbolic link between a check and a use cannot lead outside.
 *
 * Two ways, with the same answers:
 *   - openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)
 *     opens the parent folder of a path without symbolic links in one call,
 *     the kernel refusing any escape; the last component is then opened in
 *     that folder with O_NOFOLLOW. Probed once: ENOSYS (older kernels) and
 *     EPERM (seccomp filters) switch to the second way for good.
 *   - a walk, one component at a time: openat(O_PATH | O_NOFOLLOW) in the
 *     folder opened before, fstat of what was opened, and for a symbolic
 *     link readlinkat() of the opened link itself. The library follows the
 *     link: a relative target goes on from the folder that holds the link
 *     (".." pops the folders already opened, never above the base), an
 *     absolute one is judged by its text and must lie inside a base; then
 *     the walk goes on from that base's descriptor. Any symlink in the path
 *     (the first way gives ELOOP) takes this way.
 * What is finally opened or created is always below a base descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"

#define MAX_SYMLINK_HOPS 40

_Thread_local bool agti_fs_no_openat2;

/* 0 not probed yet, 1 works, -1 not available. */
static int openat2_state;

typedef struct base {
    char *path; /* absolute, real */
    size_t len;
    int fd; /* O_PATH | O_DIRECTORY */
    unsigned flags;
} base;

struct agti_fsroot {
    base *b;
    size_t n;
    char *home;
};

/* ---- small string stacks ---------------------------------------------- */

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static void strv_clear(strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static bool strv_push(strv *s, const char *p, size_t n)
{
    if (agti_grow(&s->v, &s->cap, s->n, sizeof *s->v, 16) != AGT_OK)
        return false;
    char *d = agti_strndup(p, n);
    if (d == NULL)
        return false;
    s->v[s->n++] = d;
    return true;
}

/* Pushes the components of path (no leading '/' needed) so that the first
 * component ends on top: the stack is popped from its end. "." and empty
 * components are dropped; ".." is kept for the walk. */
static bool strv_push_reversed(strv *s, const char *path)
{
    const char *end = path + strlen(path);
    while (end > path) {
        while (end > path && end[-1] == '/')
            end--;
        const char *b = end;
        while (b > path && b[-1] != '/')
            b--;
        size_t n = (size_t)(end - b);
        if (n > 0 && !(n == 1 && b[0] == '.') && !strv_push(s, b, n))
            return false;
        end = b;
    }
    return true;
}

/* ---- bases ------------------------------------------------------------ */

int agti_fsroot_new(agti_fsroot **out, const char *root, const char *home)
{
    *out = NULL;
    if (root == NULL || root[0] != '/')
        return agti_error(AGT_EINVAL, "the workspace root must be an absolute path");
    agti_fsroot *r = calloc(1, sizeof *r);
    if (r == NULL)
        return agti_oom();
    if (home != NULL && (r->home = agti_strdup(home)) == NULL) {
        free(r);
        return agti_oom();
    }
    int rc = agti_fsroot_add(r, root, 0);
    if (rc != AGT_OK) {
        agti_fsroot_free(r);
        if (rc == AGT_ENOTFOUND)
            return agti_error(AGT_ENOTFOUND, "the workspace root %s is not an existing directory",
                              root);
        return rc;
    }
    *out = r;
    return AGT_OK;
}

int agti_fsroot_add(agti_fsroot *r, const char *dir, unsigned flags)
{
    if (r == NULL || dir == NULL || dir[0] != '/')
        return agti_error(AGT_EINVAL, "a confinement base must be an absolute path");
    char *real = realpath(dir, NULL);
    if (real == NULL)
        return errno == ENOMEM ? agti_oom()
                               : agti_error(AGT_ENOTFOUND, "%s is not an existing directory", dir);
    int fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        free(real);
        return agti_error(AGT_ENOTFOUND, "%s is not an existing directory", dir);
    }
    base *nb = realloc(r->b, (r->n + 1) * sizeof *nb);
    if (nb == NULL) {
        close(fd);
        free(real);
        return agti_oom();
    }
    r->b = nb;
    size_t len = strlen(real);
    while (len > 1 && real[len - 1] == '/')
        real[--len] = '\0';
    r->b[r->n++] = (base){real, len, fd, flags};
    return AGT_OK;
}

void agti_fsroot_free(agti_fsroot *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++) {
        close(r->b[i].fd);
        free(r->b[i].path);
    }
    free(r->b);
    free(r->home);
    free(r);
}

const char *agti_fsroot_path(const agti_fsroot *r)
{
    return r != NULL && r->n > 0 ? r->b[0].path : NULL;
}

int agti_fsroot_fd(const agti_fsroot *r)
{
    return r != NULL && r->n > 0 ? r->b[0].fd : -1;
}

/* The base that holds the absolute, normalised path p (the longest one), or
 * -1. *rest points into p past the base (no leading '/'). */
static ssize_t base_of(const agti_fsroot *r, const char *p, const char **rest)
{
    ssize_t best = -1;
    size_t bestlen = 0;
    for (size_t i = 0; i < r->n; i++) {
        const base *b = &r->b[i];
        if (!agti_path_is_within(p, b->path))
            continue;
        if (best < 0 || b->len > bestlen) {
            best = (ssize_t)i;
            bestlen = b->len;
        }
    }
    if (best >= 0) {
        const char *s = p + (bestlen == 1 ? 1 : bestlen);
        while (*s == '/')
            s++;
        *rest = s;
    }
    return best;
}

/* ---- openat2 ---------------------------------------------------------- */

bool agti_fs_have_openat2(void)
{
    if (agti_fs_no_openat2)
        return false;
    int st = __atomic_load_n(&openat2_state, __ATOMIC_RELAXED);
    if (st != 0)
        return st > 0;
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof how);
    st = fd >= 0 ? 1 : -1;
    if (fd >= 0)
        close(fd);
    __atomic_store_n(&openat2_state, st, __ATOMIC_RELAXED);
    return st > 0;
}

/* openat2 beneath dirfd without any symlink; -2 when openat2 cannot be used. */
static int open_beneath2(int dirfd, const char *rel, int flags)
{
    if (!agti_fs_have_openat2())
        return -2;
    struct open_how how;
    memset(&how, 0, sizeof how);
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;
    int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM || errno == E2BIG))
        return -2;
    return fd;
}

int agti_fs_open_beneath(int dirfd, const char *rel, int flags)
{
    if (rel == NULL || rel[0] == '/') {
        errno = EXDEV;
        return -1;
    }
    if (rel[0] == '\0')
        rel = ".";
    /* ".." is refused everywhere (openat2 would allow one that stays
     * below dirfd): both ways give the same answer. */
    for (const char *c = rel; (c = strstr(c, "..")) != NULL; c += 2)
        if ((c == rel || c[-1] == '/') && (c[2] == '\0' || c[2] == '/')) {
            errno = EXDEV;
            return -1;
        }
    int fd = open_beneath2(dirfd, rel, flags);
    if (fd != -2)
        return fd;
    /* Component by component, never following a link. */
    int cur = -1;
    const char *s = rel;
    for (;;) {
        while (*s == '/')
            s++;
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        const char *after = s + n;
        while (*after == '/')
            after++;
        bool last = *after == '\0';
        char name[NAME_MAX + 1];
        if (n > NAME_MAX) {
            if (cur >= 0)
                close(cur);
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(name, s, n);
        name[n] = '\0';
        if (n == 2 && name[0] == '.' && name[1] == '.') {
            if (cur >= 0)
                close(cur);
            errno = EXDEV;
            return -1;
        }
        int at = cur >= 0 ? cur : dirfd;
        int fl = last ? flags | O_NOFOLLOW | O_CLOEXEC : O_PATH | O_NOFOLLOW | O_CLOEXEC;
        int nfd = openat(at, n == 0 ? "." : name, fl);
        int e2 = errno;
        if (cur >= 0)
            close(cur);
        if (nfd < 0) {
            errno = e2;
            return -1;
        }
        if (last)
            return nfd;
        struct stat st;
        if (fstat(nfd, &st) != 0 || !S_ISDIR(st.st_mode)) {
            bool link = S_ISLNK(st.st_mode);
            close(nfd);
            errno = link ? ELOOP : ENOTDIR;
            return -1;
        }
        cur = nfd;
        s = after;
    }
}

/* ---- the walk --------------------------------------------------------- */

typedef struct walk {
    agti_fsroot *r;
    const char *given;
    size_t base;
    int *fds; /* fds[0]: the base's (borrowed); then one per entry of done */
    size_t nfds, capfds;
    strv done; /* names of the opened folders below the base */
    strv todo; /* what is left, next component last */
    int hops;
    bool via_link;
    bool last_from_link; /* the last component came from a symlink's target */
    char *last_link;     /* that link's text */
    unsigned how;
    agti_fsloc *out;
} walk;

static void walk_reset(walk *w, size_t b)
{
    for (size_t i = 1; i < w->nfds; i++)
        close(w->fds[i]);
    w->nfds = 1;
    w->fds[0] = w->r->b[b].fd;
    w->base = b;
    strv_clear(&w->done);
}

static bool walk_pushfd(walk *w, int fd, const char *name)
{
    if (agti_grow(&w->fds, &w->capfds, w->nfds, sizeof *w->fds, 16) != AGT_OK)
        return false;
    if (!strv_push(&w->done, name, strlen(name)))
        return false;
    w->fds[w->nfds++] = fd;
    return true;
}

/* The absolute path of base + done (+ name, + the rest of todo). */
static char *walk_path(const walk *w, const char *name, bool with_todo)
{
    agti_buf b = AGTI_BUF_INIT;
    const base *bs = &w->r->b[w->base];
    agti_buf_put(&b, bs->path, bs->len);
    for (size_t i = 0; i < w->done.n; i++) {
        if (b.len > 1)
            agti_buf_putc(&b, '/');
        agti_buf_puts(&b, w->done.v[i]);
    }
    if (name != NULL && strcmp(name, ".") != 0) {
        if (b.len > 1)
            agti_buf_putc(&b, '/');
        agti_buf_puts(&b, name);
    }
    for (size_t i = w->todo.n; with_todo && i-- > 0;) {
        if (b.len > 1)
            agti_buf_putc(&b, '/');
        agti_buf_puts(&b, w->todo.v[i]);
    }
    return agti_buf_detach(&b);
}

static int set_display(walk *w, const char *name, bool with_todo)
{
    agti_fsloc *o = w->out;
    free(o->abs);
    free(o->rel);
    o->rel = NULL;
    o->abs = walk_path(w, name, with_todo);
    if (o->abs == NULL)
        return agti_oom();
    if (w->base == 0) {
        const base *bs = &w->r->b[0];
        const char *p = o->abs + bs->len;
        if (*p == '/' || bs->len == 1)
            p += *p == '/';
        o->rel = agti_strdup(*p ? p : ".");
    } else {
        o->rel = agti_strdup(o->abs);
    }
    return o->rel ? AGT_OK : agti_oom();
}

static int outside(walk *w, bool link, const char *lexical)
{
    const char *root = w->r->b[0].path;
    if (link)
        return agti_error(AGT_EDENIED,
                          "path '%s' leads outside the workspace %s through a symbolic link; ask "
                          "the user to add the folder it leads to to the allowed paths",
                          w->given, root);
    return agti_error(AGT_EDENIED,
                      "path '%s' resolves to %s, which is outside the workspace %s; ask the user "
                      "to add it to the allowed paths",
                      w->given, lexical, root);
}

/* Restarts the walk at the base holding the absolute path p (normalised
 * here; symlinks outside every base are resolved by name: they only decide
 * which base, and the walk below it checks every component again). The
 * rest of todo stays. */
static int restart_at(walk *w, const char *p, bool link)
{
    char *norm = agti_path_normalize(p);
    if (norm == NULL)
        return AGT_ENOMEM;
    const char *rest = NULL;
    ssize_t b = base_of(w->r, norm, &rest);
    char *real = NULL;
    if (b < 0) {
        char *tmp = NULL;
        if (agti_path_real(norm, &tmp) == AGT_OK && tmp != NULL) {
            real = tmp;
            b = base_of(w->r, real, &rest);
            if (b >= 0)
                w->via_link = true;
        }
    }
    int rc = AGT_OK;
    if (b < 0) {
        rc = outside(w, link || (real != NULL && strcmp(real, norm) != 0), norm);
    } else {
        walk_reset(w, (size_t)b);
        if (!strv_push_reversed(&w->todo, rest))
            rc = agti_oom();
    }
    free(real);
    free(norm);
    return rc;
}

/* Follows the symlink open as lfd (O_PATH | O_NOFOLLOW). */
static int follow(walk *w, int lfd, bool last)
{
    char target[PATH_MAX];
    ssize_t n = readlinkat(lfd, "", target, sizeof target - 1);
    int e = errno;
    close(lfd);
    if (n < 0)
        return agti_error(AGT_EIO, "path '%s': a symbolic link cannot be read: %s", w->given,
                          strerror(e));
    target[n] = '\0';
    if (++w->hops > MAX_SYMLINK_HOPS)
        return agti_error(AGT_ELIMIT, "path '%s': too many levels of symbolic links", w->given);
    w->via_link = true;
    if (last) {
        w->last_from_link = true;
        free(w->last_link);
        w->last_link = agti_strdup(target);
    }
    if (target[0] == '/') {
        /* Judged by its text: inside a base, or refused. */
        char *rest = agti_strdup("");
        for (size_t i = w->todo.n; rest != NULL && i-- > 0;) {
            char *nr = agti_aprintf("%s/%s", rest, w->todo.v[i]);
            free(rest);
            rest = nr;
        }
        char *p = rest ? agti_aprintf("%s%s", target, rest) : NULL;
        free(rest);
        if (p == NULL)
            return AGT_ENOMEM;
        strv_clear(&w->todo);
        int rc = restart_at(w, p, true);
        free(p);
        return rc;
    }
    return strv_push_reversed(&w->todo, target) ? AGT_OK : agti_oom();
}

static int record_made(agti_fsloc *o, int dirfd, const char *name)
{
    int *nf = realloc(o->made_dirfd, (o->nmade + 1) * sizeof *nf);
    if (nf == NULL)
        return agti_oom();
    o->made_dirfd = nf;
    char **nn = realloc(o->made_name, (o->nmade + 1) * sizeof *nn);
    if (nn == NULL)
        return agti_oom();
    o->made_name = nn;
    int d = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    char *c = agti_strdup(name);
    if (d < 0 || c == NULL) {
        if (d >= 0)
            close(d);
        free(c);
        return agti_oom();
    }
    o->made_dirfd[o->nmade] = d;
    o->made_name[o->nmade] = c;
    o->nmade++;
    return AGT_OK;
}

/* A folder on the way: opened, created (AGTI_LOC_MKDIRS), or followed. */
static int step_dir(walk *w, const char *name)
{
    int cur = w->fds[w->nfds - 1];
    int fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && (w->how & AGTI_LOC_MKDIRS)) {
        if (w->r->b[w->base].flags & AGTI_BASE_READONLY)
            return agti_error(AGT_EDENIED, "path '%s' is in a folder the file tools only read",
                              w->given);
        if (mkdirat(cur, name, 0777) == 0) {
            int rc = record_made(w->out, cur, name);
            if (rc != AGT_OK)
                return rc;
        } else if (errno != EEXIST) {
            int e = errno;
            int rc = set_display(w, name, false);
            return rc != AGT_OK
                       ? rc
                       : agti_error(e == EACCES ? AGT_EDENIED : AGT_EIO,
                                    "cannot create the folder %s: %s", w->out->abs, strerror(e));
        }
        fd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        int e = errno;
        int rc = set_display(w, name, true);
        if (rc != AGT_OK)
            return rc;
        if (e == ENOENT || e == ENOTDIR)
            return AGT_ENOTFOUND;
        return agti_error(e == EACCES ? AGT_EDENIED : AGT_EIO, "cannot open %s: %s", w->out->abs,
                          strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return agti_error(AGT_EIO, "cannot examine a folder of '%s': %s", w->given,
                          strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return follow(w, fd, false);
    if (!S_ISDIR(st.st_mode)) {
        close(fd);
        int rc = set_display(w, name, false);
        if (rc == AGT_OK && (w->how & AGTI_LOC_MKDIRS))
            return agti_error(AGT_EINVAL, "cannot create the folder %s: a file is in the way",
                              w->out->abs);
        if (rc == AGT_OK)
            rc = set_display(w, name, true);
        return rc != AGT_OK ? rc : AGT_ENOTFOUND;
    }
    return walk_pushfd(w, fd, name) ? AGT_OK : (close(fd), agti_oom());
}

/* The last component: opened (AGTI_LOC_OPEN) or looked at. 1: a symlink was
 * followed, go on walking. */
static int step_last(walk *w, const char *name, int oflags)
{
    agti_fsloc *o = w->out;
    int cur = w->fds[w->nfds - 1];
    bool follow_last = !(w->how & AGTI_LOC_NOFOLLOW);
    int fd = -1;
    if (w->how & AGTI_LOC_OPEN) {
        fd = openat(cur, name, oflags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd >= 0) {
            if (fstat(fd, &o->st) != 0) {
                int e = errno;
                close(fd);
                return agti_error(AGT_EIO, "cannot examine '%s': %s", w->given, strerror(e));
            }
            if (S_ISLNK(o->st.st_mode) && follow_last) /* O_PATH in oflags */ {
                int rc = follow(w, fd, true);
                return rc == AGT_OK ? 1 : rc;
            }
            o->fd = fd;
            o->exists = true;
        } else if (errno == ENOENT) {
            o->exists = false;
        } else {
            int e = errno;
            int lfd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            if (lfd < 0) {
                o->exists = errno != ENOENT;
                o->open_errno = e;
            } else if (fstat(lfd, &o->st) == 0 && S_ISLNK(o->st.st_mode) && follow_last) {
                int rc = follow(w, lfd, true);
                return rc == AGT_OK ? 1 : rc;
            } else {
                close(lfd);
                o->exists = true;
                o->open_errno = e;
            }
        }
    } else {
        int lfd = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (lfd < 0) {
            if (errno != ENOENT && errno != ENOTDIR)
                return agti_error(errno == EACCES ? AGT_EDENIED : AGT_EIO, "cannot open '%s': %s",
                                  w->given, strerror(errno));
            o->exists = false;
        } else {
            if (fstat(lfd, &o->st) != 0) {
                close(lfd);
                return agti_error(AGT_EIO, "cannot examine '%s': %s", w->given, strerror(errno));
            }
            if (S_ISLNK(o->st.st_mode) && follow_last) {
                int rc = follow(w, lfd, true);
                return rc == AGT_OK ? 1 : rc;
            }
            close(lfd);
            o->exists = true;
        }
    }
    o->dangling = !o->exists && w->last_from_link;
    if (o->dangling && w->last_link != NULL) {
        o->link_target = w->last_link;
        w->last_link = NULL;
    }
    o->dirfd = fcntl(cur, F_DUPFD_CLOEXEC, 0);
    o->name = agti_strdup(name);
    if (o->dirfd < 0 || o->name == NULL)
        return agti_oom();
    return set_display(w, name, false);
}

/* openat2 for the folders and O_NOFOLLOW for the last component; 1 when the
 * path needs the walk (a symlink, a missing folder, any error). */
static int fast(walk *w, const char *rest, int oflags)
{
    agti_fsloc *o = w->out;
    const char *slash = strrchr(rest, '/');
    const char *name = slash ? slash + 1 : rest;
    if (name[0] == '\0' || strcmp(name, "..") == 0)
        return 1;
    int pfd;
    const base *b = &w->r->b[w->base];
    if (slash == NULL) {
        pfd = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
    } else {
        char *dir = agti_strndup(rest, (size_t)(slash - rest));
        if (dir == NULL)
            return agti_oom();
        pfd = open_beneath2(b->fd, dir, O_PATH | O_DIRECTORY);
        free(dir);
    }
    if (pfd < 0)
        return 1;
    int fd = -1;
    struct stat st;
    if (w->how & AGTI_LOC_OPEN) {
        fd = openat(pfd, name, oflags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 && errno != ENOENT) {
            close(pfd);
            return 1; /* a symlink (ELOOP) or an error the walk reports */
        }
        if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
            close(fd);
            close(pfd);
            return 1;
        }
    } else {
        int lfd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (lfd < 0 && errno != ENOENT) {
            close(pfd);
            return 1;
        }
        if (lfd >= 0) {
            bool lnk = fstat(lfd, &st) != 0 || S_ISLNK(st.st_mode);
            close(lfd);
            if (lnk) {
                close(pfd);
                return 1;
            }
            fd = -2; /* exists */
        }
    }
    o->exists = fd != -1;
    if (fd >= 0)
        o->fd = fd;
    if (o->exists)
        o->st = st;
    o->dirfd = pfd;
    o->name = agti_strdup(name);
    if (o->name == NULL)
        return agti_oom();
    char *abs = b->len == 1 ? agti_aprintf("/%s", rest) : agti_aprintf("%s/%s", b->path, rest);
    if (abs == NULL)
        return agti_oom();
    o->abs = abs;
    o->rel = agti_strdup(w->base == 0 ? rest : abs);
    return o->rel ? AGT_OK : agti_oom();
}

void agti_fsloc_clear(agti_fsloc *o)
{
    if (o == NULL)
        return;
    if (o->fd >= 0)
        close(o->fd);
    if (o->dirfd >= 0)
        close(o->dirfd);
    free(o->name);
    free(o->abs);
    free(o->rel);
    free(o->link_target);
    for (size_t i = 0; i < o->nmade; i++) {
        close(o->made_dirfd[i]);
        free(o->made_name[i]);
    }
    free(o->made_dirfd);
    free(o->made_name);
    memset(o, 0, sizeof *o);
    o->fd = o->dirfd = -1;
}

void agti_fsloc_undo_dirs(agti_fsloc *o)
{
    for (size_t i = o->nmade; i-- > 0;)
        (void)unlinkat(o->made_dirfd[i], o->made_name[i], AT_REMOVEDIR);
    for (size_t i = 0; i < o->nmade; i++) {
        close(o->made_dirfd[i]);
        free(o->made_name[i]);
    }
    o->nmade = 0;
}

int agti_fs_locate(agti_fsroot *r, const char *user_path, unsigned how, int oflags, agti_fsloc *out)
{
    memset(out, 0, sizeof *out);
    out->fd = out->dirfd = -1;
    if (r == NULL || r->n == 0)
        return agti_error(AGT_EINVAL, "no workspace root to resolve against");
    if (user_path == NULL || user_path[0] == '\0')
        return agti_error(AGT_EINVAL, "the path is empty; give a file path relative to the "
                                      "workspace or an absolute one");
    walk w;
    memset(&w, 0, sizeof w);
    w.r = r;
    w.given = user_path;
    w.how = how;
    w.out = out;
    char *abs = NULL, *norm = NULL;
    int rc = agti_path_absolute(r->b[0].path, r->home, user_path, &abs);
    if (rc != AGT_OK)
        goto out;
    if ((norm = agti_path_normalize(abs)) == NULL) {
        rc = AGT_ENOMEM;
        goto out;
    }
    const char *rest = NULL;
    ssize_t b = base_of(r, norm, &rest);
    if (b >= 0 && !(how & AGTI_LOC_MKDIRS) && rest[0] != '\0') {
        w.base = (size_t)b;
        rc = fast(&w, rest, oflags);
        if (rc != 1)
            goto done;
        agti_fsloc_clear(out);
        rc = AGT_OK;
    }
    w.fds = malloc(16 * sizeof *w.fds);
    if (w.fds == NULL) {
        rc = agti_oom();
        goto out;
    }
    w.capfds = 16;
    w.nfds = 1;
    w.fds[0] = r->b[0].fd;
    if (b >= 0) {
        walk_reset(&w, (size_t)b);
        if (!strv_push_reversed(&w.todo, rest))
            rc = agti_oom();
    } else {
        rc = restart_at(&w, norm, false);
    }
    while (rc == AGT_OK) {
        if (w.todo.n == 0) {
            /* The base itself. */
            agti_fsloc *o = out;
            int cur = w.fds[w.nfds - 1];
            if (w.nfds > 1) {
                /* Ends on a folder reached by "..": look at it by name. */
                char *name = w.done.v[w.done.n - 1];
                w.done.v[--w.done.n] = NULL;
                close(w.fds[--w.nfds]);
                if (!strv_push(&w.todo, name, strlen(name)))
                    rc = agti_oom();
                free(name);
                continue;
            }
            o->exists = true;
            if (how & AGTI_LOC_OPEN) {
                o->fd = openat(cur, ".", oflags | O_CLOEXEC | O_NOCTTY);
                if (o->fd < 0)
                    o->open_errno = errno;
            }
            if (fstat(cur, &o->st) != 0) {
                rc = agti_error(AGT_EIO, "cannot examine '%s': %s", user_path, strerror(errno));
                break;
            }
            o->dirfd = fcntl(cur, F_DUPFD_CLOEXEC, 0);
            o->name = agti_strdup(".");
            rc = o->dirfd < 0 || o->name == NULL ? agti_oom() : set_display(&w, NULL, false);
            break;
        }
        char *name = w.todo.v[--w.todo.n];
        if (strcmp(name, "..") == 0) {
            if (w.nfds > 1) {
                close(w.fds[--w.nfds]);
                free(w.done.v[--w.done.n]);
            } else {
                /* Above the base: judged by the path's text. */
                const base *bs = &w.r->b[w.base];
                char *p = agti_aprintf("%s/..", bs->path);
                for (size_t i = w.todo.n; p != NULL && i-- > 0;) {
                    char *np = agti_aprintf("%s/%s", p, w.todo.v[i]);
                    free(p);
                    p = np;
                }
                strv_clear(&w.todo);
                rc = p ? restart_at(&w, p, true) : AGT_ENOMEM;
                free(p);
            }
            free(name);
            continue;
        }
        if (strlen(name) > NAME_MAX) {
            rc = agti_error(AGT_EINVAL, "path '%s': a component is longer than %d bytes", user_path,
                            NAME_MAX);
            free(name);
            break;
        }
        if (w.todo.n > 0) {
            rc = step_dir(&w, name);
        } else {
            rc = step_last(&w, name, oflags);
            if (rc == 1)
                rc = AGT_OK;
            else if (rc == AGT_OK) {
                free(name);
                break;
            }
        }
        free(name);
    }
done:
    out->via_link = out->via_link || w.via_link;
    if (rc == AGT_OK && (r->b[w.base].flags & AGTI_BASE_READONLY))
        out->readonly = true;
out:
    if (rc != AGT_OK && rc != AGT_ENOTFOUND) {
        agti_fsloc_undo_dirs(out);
        agti_fsloc_clear(out);
    } else if (rc == AGT_ENOTFOUND) {
        agti_fsloc_undo_dirs(out);
        if (out->abs == NULL && w.fds != NULL && set_display(&w, NULL, true) != AGT_OK)
            rc = AGT_ENOMEM;
    }
    for (size_t i = 1; i < w.nfds; i++)
        close(w.fds[i]);
    free(w.fds);
    strv_clear(&w.done);
    strv_clear(&w.todo);
    free(w.last_link);
    free(abs);
    free(norm);
    return rc;
}
