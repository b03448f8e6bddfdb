/*
 * Directory walker: depth first, entries of a directory in bytewise name
 * order, ignore files pushed and popped per directory. Each directory is
 * read completely and closed before descending, so open descriptors stay at
 * one whatever the depth. Symlinked directories are never followed (like
 * rg without -L); the dev/ino of every directory on the current path is
 * still checked so that a bind mount loop cannot recurse forever.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "fs.h"

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
    dev_ino *anc;
    size_t nanc, capanc;
    struct timespec start;
    size_t since_clock;
    bool stop;
    int rc;
} walker;

static const char *const VCS_DIRS[] = {".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"};

static bool is_vcs(const char *name)
{
    for (size_t i = 0; i < sizeof VCS_DIRS / sizeof VCS_DIRS[0]; i++)
        if (strcmp(name, VCS_DIRS[i]) == 0)
            return true;
    return false;
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
    char *name;
    unsigned char dtype; /* DT_* from readdir, DT_UNKNOWN when not given */
} dent;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(((const dent *)a)->name, ((const dent *)b)->name);
}

/* Reads the names of the directory at w->path; NULL with *n = 0 when it
 * cannot be read (a warning is recorded). */
static dent *read_names(walker *w, size_t *n)
{
    *n = 0;
    DIR *d = opendir(w->path.ptr);
    const char *rel = w->path.ptr + (w->path.len > w->rootlen ? w->rootlen + 1 : w->path.len);
    if (d == NULL) {
        warn(w, "cannot read directory '%s': %s", rel, errno);
        return NULL;
    }
    dent *names = NULL;
    size_t cap = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        const char *nm = de->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
            continue;
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            dent *nn = realloc(names, nc * sizeof *nn);
            if (nn == NULL)
                break;
            names = nn;
            cap = nc;
        }
        names[*n].dtype = de->d_type;
        if ((names[*n].name = agti_strdup(nm)) == NULL)
            break;
        (*n)++;
    }
    if (de != NULL) {
        w->rc = agti_oom();
        w->stop = true;
    } else if (errno != 0) {
        warn(w, "error while reading directory '%s': %s", rel, errno);
    }
    closedir(d);
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

static void walk_dir(walker *w, size_t depth);

/* Type and times from lstat, or only the type from d_type with skip_stat. */
static int entry_stat(walker *w, unsigned char dtype, struct stat *st)
{
    if (w->o->skip_stat && (dtype == DT_REG || dtype == DT_DIR)) {
        memset(st, 0, sizeof *st);
        st->st_mode = dtype == DT_REG ? S_IFREG : S_IFDIR;
        return 1;
    }
    return lstat(w->path.ptr, st) == 0 ? 0 : -1;
}

static void visit(walker *w, const char *name, unsigned char dtype, size_t depth)
{
    size_t saved = w->path.len;
    agti_buf_putc(&w->path, '/');
    agti_buf_puts(&w->path, name);
    if (w->path.oom) {
        w->rc = agti_oom();
        w->stop = true;
        return;
    }
    const char *rel = w->path.ptr + w->rootlen + 1;
    struct stat st;
    int how = entry_stat(w, dtype, &st);
    if (how < 0) {
        /* Vanished between readdir and lstat: nothing to report. */
        agti_buf_truncate(&w->path, saved);
        return;
    }
    bool is_dir = S_ISDIR(st.st_mode);
    if (w->ig != NULL && agti_ignore_check_entry(w->ig, rel, is_dir)) {
        agti_buf_truncate(&w->path, saved);
        return;
    }
    agti_walk_entry e = {rel, w->path.len - w->rootlen - 1, AGTI_FS_OTHER, false, 0, 0};
    if (S_ISLNK(st.st_mode)) {
        struct stat tst;
        e.is_symlink = true;
        e.type = AGTI_FS_SYMLINK;
        if (stat(w->path.ptr, &tst) == 0 && S_ISREG(tst.st_mode)) {
            e.type = AGTI_FS_FILE;
            st = tst;
        }
    } else if (S_ISREG(st.st_mode)) {
        e.type = AGTI_FS_FILE;
    } else if (is_dir) {
        e.type = AGTI_FS_DIR;
    }
    e.size = (uint64_t)st.st_size;
    e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (e.type == AGTI_FS_FILE && w->o->skip_sensitive && agti_fs_is_sensitive(rel, NULL)) {
        w->res->sensitive_skipped++;
    } else if (!is_dir || w->o->include_dirs) {
        report(w, &e);
    }
    if (is_dir && !w->stop && (w->o->max_depth == 0 || depth < w->o->max_depth)) {
        bool loop = false;
        /* Directories are stat'ed for the loop check even with skip_stat. */
        if (how == 1 && lstat(w->path.ptr, &st) != 0) {
            agti_buf_truncate(&w->path, saved);
            return;
        }
        for (size_t i = 0; i < w->nanc; i++)
            if (w->anc[i].dev == st.st_dev && w->anc[i].ino == st.st_ino)
                loop = true;
        if (loop) {
            warn(w, "directory loop at '%s' (%s); not descending", rel, ELOOP);
        } else {
            if (w->nanc == w->capanc) {
                size_t nc = w->capanc ? w->capanc * 2 : 32;
                dev_ino *na = realloc(w->anc, nc * sizeof *na);
                if (na == NULL) {
                    w->rc = agti_oom();
                    w->stop = true;
                    agti_buf_truncate(&w->path, saved);
                    return;
                }
                w->anc = na;
                w->capanc = nc;
            }
            w->anc[w->nanc++] = (dev_ino){st.st_dev, st.st_ino};
            walk_dir(w, depth + 1);
            w->nanc--;
        }
    }
    agti_buf_truncate(&w->path, saved);
}

static void walk_dir(walker *w, size_t depth)
{
    size_t n;
    dent *names = read_names(w, &n);
    bool pushed = false;
    if (w->ig != NULL && names != NULL && !w->stop) {
        const char *rel = w->path.len > w->rootlen ? w->path.ptr + w->rootlen + 1 : "";
        int rc = agti_ignore_push(w->ig, rel);
        if (rc != AGT_OK) {
            w->rc = rc;
            w->stop = true;
        } else {
            pushed = true;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (!w->stop && !out_of_time(w) && !is_vcs(names[i].name))
            visit(w, names[i].name, names[i].dtype, depth);
        free(names[i].name);
    }
    free(names);
    if (pushed)
        agti_ignore_pop(w->ig);
}

int agti_walk(const char *root, const agti_walk_opts *opts, agti_walk_cb cb, void *payload,
              agti_walk_result *res)
{
    agti_walk_opts defaults;
    agti_walk_result local;
    memset(&defaults, 0, sizeof defaults);
    if (res == NULL)
        res = &local;
    memset(res, 0, sizeof *res);
    if (root == NULL || root[0] == '\0')
        return agti_error(AGT_EINVAL, "walk: the root directory must be given");
    struct stat st;
    if (stat(root, &st) != 0)
        return agti_error(AGT_ENOTFOUND, "walk: cannot open %s: %s", root, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return agti_error(AGT_EINVAL, "walk: %s is not a directory", root);
    walker w;
    memset(&w, 0, sizeof w);
    w.o = opts ? opts : &defaults;
    w.cb = cb;
    w.payload = payload;
    w.res = res;
    clock_gettime(CLOCK_MONOTONIC, &w.start);
    agti_buf_puts(&w.path, root);
    while (w.path.len > 1 && w.path.ptr[w.path.len - 1] == '/')
        agti_buf_truncate(&w.path, w.path.len - 1);
    w.rootlen = w.path.len;
    int rc = AGT_OK;
    if (w.path.oom)
        rc = agti_oom();
    if (rc == AGT_OK && !w.o->include_ignored)
        rc = agti_ignore_new(&w.ig, w.path.ptr, w.o->home, w.o->ignore_flags);
    if (rc == AGT_OK) {
        w.anc = malloc(32 * sizeof *w.anc);
        if (w.anc == NULL) {
            rc = agti_oom();
        } else {
            w.capanc = 32;
            w.anc[w.nanc++] = (dev_ino){st.st_dev, st.st_ino};
            walk_dir(&w, 1);
            rc = w.rc;
        }
    }
    agti_ignore_free(w.ig);
    agti_buf_free(&w.path);
    free(w.anc);
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
