/*
 * Directory walker: depth first, entries of a directory in bytewise name
 * order, ignore files pushed and popped per directory. A directory is
 * opened relative to its parent's descriptor (openat, O_NOFOLLOW) and read
 * with getdents64 into one name arena; the entry type comes from d_type,
 * and an entry is stat'ed (fstatat relative to the parent) only when the
 * file system gives no d_type, for a symlink's target, or when the caller
 * wants size and mtime (no skip_stat). A directory's descriptor stays open
 * while its entries are visited, so open descriptors grow with the depth
 * up to KEEP_FD_DEPTH; deeper directories are closed after reading and
 * opened again for each entry below the open folder at that depth, with
 * agti_fs_open_beneath (no symlink followed, never by full path). The root
 * itself comes as a descriptor (agti_walk_at). Symlinked directories are never
 * followed (like rg without -L); the dev/ino of every directory on the
 * current path (fstat of the opened directory) is still checked so that a
 * bind mount loop cannot recurse forever.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

/* Directories up to this depth keep their descriptor while their entries
 * are visited (the default RLIMIT_NOFILE is 1024). */
#define KEEP_FD_DEPTH 128
/* getdents64 buffer, bytes. */
#define DENTS_BUF (32u << 10)

_Thread_local bool agti_walk_force_unknown_dtype;

typedef struct dev_ino {
    dev_t dev;
    ino_t ino;
} dev_ino;

typedef struct walker {
    const agti_walk_opts *o;
    agti_walk_cb cb;
    void *payload;
    agti_walk_result *res;
    agti_ignore *ig;
    agti_buf path; /* root + "/" + relpath */
    size_t rootlen;
    size_t igrootlen; /* path.ptr[0..igrootlen) is the ignore context's root */
    dev_ino *anc;
    size_t nanc, capanc;
    struct timespec start;
    size_t since_clock;
    char *dents;       /* getdents64 buffer */
    int anchor_fd;     /* the open folder at depth KEEP_FD_DEPTH */
    size_t anchor_len; /* path.len at it */
    bool stop;
    int rc;
} walker;

static bool is_vcs(const char *name)
{
    /* .git .hg .svn .bzr _darcs .jj */
    switch (name[0]) {
    case '.':
        return strcmp(name, ".git") == 0 || strcmp(name, ".hg") == 0 || strcmp(name, ".svn") == 0 ||
               strcmp(name, ".bzr") == 0 || strcmp(name, ".jj") == 0;
    case '_':
        return strcmp(name, "_darcs") == 0;
    default:
        return false;
    }
}

static void warn(walker *w, const char *fmt, const char *rel, int err)
{
    char **nv = realloc(w->res->warnings, (w->res->nwarnings + 1) * sizeof *nv);
    if (nv == NULL)
        return;
    w->res->warnings = nv;
    char *m = agti_aprintf(fmt, rel[0] ? rel : ".", strerror(err));
    if (m != NULL)
        w->res->warnings[w->res->nwarnings++] = m;
}

static bool out_of_time(walker *w)
{
    if (w->o->time_budget_ms <= 0)
        return false;
    if (++w->since_clock < 64)
        return false;
    w->since_clock = 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ms = (int64_t)(now.tv_sec - w->start.tv_sec) * 1000 +
                 (int64_t)(now.tv_nsec - w->start.tv_nsec) / 1000000;
    if (ms < w->o->time_budget_ms)
        return false;
    w->res->timed_out = true;
    w->stop = true;
    return true;
}

typedef struct dent {
    const char *name; /* in the directory's name arena, set once it is complete */
    size_t off;       /* offset in the arena */
    size_t len;
    unsigned char dtype; /* DT_* from getdents64, DT_UNKNOWN when not given */
} dent;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

static const char *cur_rel(const walker *w)
{
    return w->path.ptr + (w->path.len > w->rootlen ? w->rootlen + 1 : w->path.len);
}

/* Reads the names of the open directory fd (at w->path) into *arena, sorted;
 * NULL with *n = 0 when it cannot be read (a warning is recorded). */
static dent *read_names(walker *w, int fd, agti_buf *arena, size_t *n, unsigned *ign_present)
{
    *n = 0;
    *ign_present = 0;
    size_t cap = 0;
    dent *names = NULL;
    for (;;) {
        ssize_t got = getdents64(fd, w->dents, DENTS_BUF);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            warn(w, "error while reading directory '%s': %s", cur_rel(w), errno);
            break;
        }
        if (got == 0)
            break;
        for (ssize_t off = 0; off < got;) {
            struct dirent64 *de = (struct dirent64 *)(void *)(w->dents + off);
            off += de->d_reclen;
            const char *nm = de->d_name;
            if (nm[0] == '.') {
                if (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))
                    continue;
                if (strcmp(nm, ".gitignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_GITIGNORE;
                else if (strcmp(nm, ".ignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_IGNORE;
                else if (strcmp(nm, ".rgignore") == 0)
                    *ign_present |= AGTI_IGN_HAS_RGIGNORE;
            }
            if (*n == cap) {
                size_t nc = cap ? cap * 2 : 32;
                dent *nn = realloc(names, nc * sizeof *nn);
                if (nn == NULL) {
                    free(names);
                    w->rc = agti_oom();
                    w->stop = true;
                    *n = 0;
                    return NULL;
                }
                names = nn;
                cap = nc;
            }
            size_t len = strlen(nm);
            names[*n].off = arena->len;
            names[*n].len = len;
            names[*n].dtype = agti_walk_force_unknown_dtype ? DT_UNKNOWN : de->d_type;
            agti_buf_put(arena, nm, len + 1);
            (*n)++;
        }
    }
    if (arena->oom) {
        free(names);
        w->rc = agti_oom();
        w->stop = true;
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        names[i].name = arena->ptr + names[i].off;
    if (*n > 1)
        qsort(names, *n, sizeof *names, cmp_names);
    return names;
}

static void report(walker *w, const agti_walk_entry *e)
{
    if (w->o->max_entries > 0 && w->res->entries >= w->o->max_entries) {
        w->res->truncated = true;
        w->stop = true;
        return;
    }
    w->res->entries++;
    if (w->cb != NULL && w->cb(e, w->payload) != 0) {
        w->rc = agti_error(AGT_ECANCELLED, "walk cancelled by the callback at '%s'", e->relpath);
        w->stop = true;
    }
}

static void walk_dir(walker *w, int fd, size_t depth);

static int stat_at(const walker *w, int pfd, const char *name, struct stat *st, int flags)
{
    (void)w;
    return fstatat(pfd, name, st, flags);
}

/* In a folder deeper than KEEP_FD_DEPTH: the path below the anchor. */
static int open_deep(walker *w, int flags)
{
    const char *rel = w->path.ptr + w->anchor_len;
    if (*rel == '/')
        rel++;
    return agti_fs_open_beneath(w->anchor_fd, rel, flags);
}

/* Sets *mode to the entry's S_IFMT type and fills st when it was stat'ed.
 * Returns 1 when st holds an lstat of the entry, 0 when only *mode is
 * known (from d_type), -1 when the entry vanished. */
static int entry_type(walker *w, int pfd, const dent *d, struct stat *st, mode_t *mode)
{
    mode_t m = 0;
    switch (d->dtype) {
    case DT_REG:
        m = S_IFREG;
        break;
    case DT_DIR:
        m = S_IFDIR;
        break;
    case DT_LNK:
        m = S_IFLNK;
        break;
    case DT_FIFO:
        m = S_IFIFO;
        break;
    case DT_SOCK:
        m = S_IFSOCK;
        break;
    case DT_CHR:
        m = S_IFCHR;
        break;
    case DT_BLK:
        m = S_IFBLK;
        break;
    default:
        break;
    }
    if (m != 0 && (w->o->skip_stat || S_ISDIR(m) || S_ISLNK(m))) {
        *mode = m;
        return 0;
    }
    if (stat_at(w, pfd, d->name, st, AT_SYMLINK_NOFOLLOW) != 0)
        return -1;
    *mode = st->st_mode & S_IFMT;
    return 1;
}

/* Opens the directory entry d (at w->path) and descends into it unless it
 * is an ancestor (a bind mount loop). */
static void descend(walker *w, int pfd, const dent *d, size_t depth)
{
    const char *rel = cur_rel(w);
    int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
    int fd = pfd >= 0 ? openat(pfd, d->name, flags) : open_deep(w, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        /* Vanished or replaced by a symlink since it was read: nothing there. */
        if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR)
            warn(w, "cannot read directory '%s': %s", rel, errno);
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        warn(w, "cannot read directory '%s': %s", rel, errno);
        close(fd);
        return;
    }
    for (size_t i = 0; i < w->nanc; i++)
        if (w->anc[i].dev == st.st_dev && w->anc[i].ino == st.st_ino) {
            warn(w, "directory loop at '%s' (%s); not descending", rel, ELOOP);
            close(fd);
            return;
        }
    if (w->nanc == w->capanc) {
        size_t nc = w->capanc ? w->capanc * 2 : 32;
        dev_ino *na = realloc(w->anc, nc * sizeof *na);
        if (na == NULL) {
            w->rc = agti_oom();
            w->stop = true;
            close(fd);
            return;
        }
        w->anc = na;
        w->capanc = nc;
    }
    w->anc[w->nanc++] = (dev_ino){st.st_dev, st.st_ino};
    walk_dir(w, fd, depth + 1);
    w->nanc--;
}

static void visit(walker *w, int pfd, const dent *d, size_t depth)
{
    size_t saved = w->path.len;
    int owned = -1;
    if (pfd < 0) {
        /* Deep: this folder again, from the anchor. */
        pfd = owned = open_deep(w, O_PATH | O_DIRECTORY);
        if (pfd < 0)
            return;
    }
    agti_buf_putc(&w->path, '/');
    agti_buf_put(&w->path, d->name, d->len);
    if (w->path.oom) {
        w->rc = agti_oom();
        w->stop = true;
        if (owned >= 0)
            close(owned);
        return;
    }
    const char *rel = w->path.ptr + w->rootlen + 1;
    struct stat st;
    mode_t mode;
    int how = entry_type(w, pfd, d, &st, &mode);
    if (how < 0) {
        /* Vanished between reading the directory and now: nothing to report. */
        agti_buf_truncate(&w->path, saved);
        if (owned >= 0)
            close(owned);
        return;
    }
    bool is_dir = S_ISDIR(mode);
    if (w->ig != NULL && agti_ignore_check_entry(w->ig, w->path.ptr + w->igrootlen + 1, is_dir)) {
        agti_buf_truncate(&w->path, saved);
        if (owned >= 0)
            close(owned);
        return;
    }
    agti_walk_entry e = {rel,    w->path.len - w->rootlen - 1, AGTI_FS_OTHER, false, 0, 0, pfd,
                         d->name};
    if (S_ISLNK(mode)) {
        struct stat tst;
        e.is_symlink = true;
        e.type = AGTI_FS_SYMLINK;
        if (stat_at(w, pfd, d->name, &tst, 0) == 0 && S_ISREG(tst.st_mode)) {
            e.type = AGTI_FS_FILE;
            st = tst;
            how = 1;
        } else if (how == 0 && !w->o->skip_stat &&
                   stat_at(w, pfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            how = 1;
        }
    } else if (S_ISREG(mode)) {
        e.type = AGTI_FS_FILE;
    } else if (is_dir) {
        e.type = AGTI_FS_DIR;
    }
    if (how == 0 && is_dir && !w->o->skip_stat && w->o->include_dirs &&
        stat_at(w, pfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        how = 1;
    if (how == 1) {
        e.size = (uint64_t)st.st_size;
        e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
    if (e.type == AGTI_FS_FILE && w->o->skip_sensitive &&
        agti_sensitive_match(w->o->sensitive, rel, NULL)) {
        w->res->sensitive_skipped++;
    } else if (!is_dir || w->o->include_dirs) {
        report(w, &e);
    }
    if (owned >= 0) {
        close(owned);
        pfd = -1;
    }
    if (is_dir && !w->stop && (w->o->max_depth == 0 || depth < w->o->max_depth))
        descend(w, pfd, d, depth);
    agti_buf_truncate(&w->path, saved);
}

/* Visits the entries of the directory open as fd (at w->path); closes fd. */
static void walk_dir(walker *w, int fd, size_t depth)
{
    size_t n;
    agti_buf arena = AGTI_BUF_INIT;
    unsigned ign_present;
    dent *names = read_names(w, fd, &arena, &n, &ign_present);
    /* The folder's ignore files are read in the folder just read (its
     * descriptor), never looked up by name again. */
    bool pushed = false;
    if (w->ig != NULL && names != NULL && !w->stop) {
        const char *rel = w->path.len > w->igrootlen ? w->path.ptr + w->igrootlen + 1 : "";
        int rc = agti_ignore_push_at(w->ig, rel, fd, ign_present);
        if (rc != AGT_OK) {
            w->rc = rc;
            w->stop = true;
        } else {
            pushed = true;
        }
    }
    if (depth == KEEP_FD_DEPTH) {
        w->anchor_fd = fd;
        w->anchor_len = w->path.len;
    }
    if (depth > KEEP_FD_DEPTH) {
        close(fd);
        fd = -1;
    }
    for (size_t i = 0; i < n && !w->stop; i++) {
        if (!out_of_time(w) && !is_vcs(names[i].name))
            visit(w, fd, &names[i], depth);
    }
    free(names);
    agti_buf_free(&arena);
    if (fd >= 0)
        close(fd);
    if (pushed)
        agti_ignore_pop(w->ig);
}

/* The ignore context: rooted at the walk root, or at opts->ignore_root when
 * that is an ancestor of it, with the ignore files of the folders from there
 * down to the walk root's parent pushed (the walk pushes the root's own). */
static int open_ignore(walker *w, int rootfd)
{
    const char *ir = w->o->ignore_root;
    size_t irlen = ir != NULL ? strlen(ir) : 0;
    while (irlen > 1 && ir[irlen - 1] == '/')
        irlen--;
    if (ir == NULL || irlen <= 1 || irlen >= w->rootlen || memcmp(w->path.ptr, ir, irlen) != 0 ||
        w->path.ptr[irlen] != '/')
        return agti_ignore_new_at(&w->ig, rootfd, w->path.ptr, w->o->home, w->o->ignore_flags);
    /* The ignore root is the host's folder (the workspace root), opened by
     * its name as every call opens it; the folders from there down to the
     * walk root are looked up below it without following a link. */
    char *top = agti_strndup(ir, irlen);
    if (top == NULL)
        return agti_oom();
    int rc = agti_ignore_new(&w->ig, top, w->o->home, w->o->ignore_flags);
    free(top);
    if (rc != AGT_OK)
        return rc;
    w->igrootlen = irlen;
    rc = agti_ignore_push(w->ig, "");
    /* Each folder between: the part of the path after the ignore root up to
     * (not including) each '/' past it. */
    char *rel = agti_strndup(w->path.ptr + irlen + 1, w->rootlen - irlen - 1);
    if (rel == NULL)
        rc = agti_oom();
    for (char *p = rel; rc == AGT_OK && (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        rc = agti_ignore_push(w->ig, rel);
        *p = '/';
    }
    free(rel);
    return rc;
}

int agti_walk(const char *root, const agti_walk_opts *opts, agti_walk_cb cb, void *payload,
              agti_walk_result *res)
{
    if (res != NULL)
        memset(res, 0, sizeof *res);
    if (root == NULL || root[0] == '\0')
        return agti_error(AGT_EINVAL, "walk: the root directory must be given");
    int fd = open(root, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return agti_error(AGT_ENOTFOUND, "walk: cannot open %s: %s", root, strerror(errno));
    int rc = agti_walk_at(fd, root, opts, cb, payload, res);
    close(fd);
    return rc;
}

int agti_walk_at(int rootfd, const char *root, const agti_walk_opts *opts, agti_walk_cb cb,
                 void *payload, agti_walk_result *res)
{
    agti_walk_opts defaults;
    agti_walk_result local;
    memset(&defaults, 0, sizeof defaults);
    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof *res);
    if (root == NULL || root[0] == '\0' || rootfd < 0)
        return agti_error(AGT_EINVAL, "walk: the root directory must be given");
    struct stat st;
    if (fstat(rootfd, &st) != 0)
        return agti_error(AGT_ENOTFOUND, "walk: cannot open %s: %s", root, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return agti_error(AGT_EINVAL, "walk: %s is not a directory", root);
    walker w;
    memset(&w, 0, sizeof w);
    w.anchor_fd = -1;
    w.o = opts ? opts : &defaults;
    w.cb = cb;
    w.payload = payload;
    w.res = res;
    clock_gettime(CLOCK_MONOTONIC, &w.start);
    agti_buf_puts(&w.path, root);
    while (w.path.len > 1 && w.path.ptr[w.path.len - 1] == '/')
        agti_buf_truncate(&w.path, w.path.len - 1);
    w.rootlen = w.path.len;
    w.igrootlen = w.path.len;
    int rc = AGT_OK;
    if (w.path.oom)
        rc = agti_oom();
    if (rc == AGT_OK && !w.o->include_ignored)
        rc = open_ignore(&w, rootfd);
    if (rc == AGT_OK) {
        w.anc = malloc(32 * sizeof *w.anc);
        w.dents = malloc(DENTS_BUF);
        if (w.anc == NULL || w.dents == NULL) {
            rc = agti_oom();
        } else {
            w.capanc = 32;
            w.anc[w.nanc++] = (dev_ino){st.st_dev, st.st_ino};
            int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
            if (fd < 0) {
                warn(&w, "cannot read directory '%s': %s", "", errno);
            } else {
                walk_dir(&w, fd, 1);
            }
            rc = w.rc;
        }
    }
    agti_ignore_free(w.ig);
    agti_buf_free(&w.path);
    free(w.anc);
    free(w.dents);
    if (res == &local)
        agti_walk_result_clear(&local);
    return rc;
}

void agti_walk_result_clear(agti_walk_result *res)
{
    if (res == NULL)
        return;
    for (size_t i = 0; i < res->nwarnings; i++)
        free(res->warnings[i]);
    free(res->warnings);
    memset(res, 0, sizeof *res);
}
